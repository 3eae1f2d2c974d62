"""bench/plot.py: the plot and the Markdown table of rowan_bench's --csv output.

  build/bench-venv/bin/python bench/plot.py RESULTS.csv --svg bench/results.svg --md table.md

Reads the lines rowan_bench appends with --csv FILE (dataset, rows, figure, unit, engine,
median, min, max, runs, ns_per_row; one per figure, engine and data set; a later line for
the same data set, figure and engine replaces an earlier one) and writes:
  --svg FILE  cost per row (ns, log scale) against the data set's rows (log scale), one
              panel per figure, one line per engine (the size panel shows bytes per reading)
  --md FILE   a Markdown table of every figure at every data set, each engine's median with
              the [min-max] of its repetitions, Rowan's ratio to each peer and Rowan's cost
              per row; then each engine's cost per row on each set over its cost on the
              first set

What it does not: run anything, or judge targets (rowan_bench prints those). matplotlib
(PyPI, in the venv bench/run.sh makes) draws the SVG.
"""
import argparse
import csv
import math

ENGINES = ["Rowan", "SQLite", "RocksDB", "DuckDB"]
COLORS = {"Rowan": "#1b9e77", "SQLite": "#d95f02", "RocksDB": "#7570b3", "DuckDB": "#e7298a"}


def read(path):
    """{(dataset, figure, engine): row}, data sets in order of first appearance."""
    data, sets, figs = {}, [], []
    with open(path, newline="") as f:
        for r in csv.reader(f):
            if len(r) != 10:
                continue
            ds, rows, fig, unit, eng = r[0], int(r[1]), r[2], r[3], r[4]
            med, lo, hi, runs, ns = (float(r[5]), float(r[6]), float(r[7]), int(r[8]),
                                     float(r[9]))
            if ds not in [s for s, _ in sets]:
                sets.append((ds, rows))
            if fig not in [g for g, _ in figs]:
                figs.append((fig, unit))
            data[(ds, fig, eng)] = dict(rows=rows, unit=unit, med=med, lo=lo, hi=hi,
                                        runs=runs, ns=ns)
    return data, sets, figs


def num(v):
    if v >= 1e6:
        return "%.2fM" % (v / 1e6)
    if v >= 1e5:
        return "%.0f" % v
    if v >= 100:
        return "%.1f" % v
    return "%.2f" % v


def spread(d):
    if d is None:
        return "-"
    if d["med"] >= 1e6:
        return "%.2fM [%.2f-%.2f]" % (d["med"] / 1e6, d["lo"] / 1e6, d["hi"] / 1e6)
    return "%s [%s-%s]" % (num(d["med"]), num(d["lo"]), num(d["hi"]))


def markdown(data, sets, figs):
    out = ["| figure | set | rows | " + " | ".join(ENGINES) + " | " +
           " | ".join("R/" + e for e in ENGINES[1:]) + " | Rowan ns/row |",
           "|---|---|---:|" + "---:|" * (len(ENGINES) * 2 - 1) + "---:|"]
    for fig, unit in figs:
        for ds, rows in sets:
            cells = [data.get((ds, fig, e)) for e in ENGINES]
            if all(c is None for c in cells):
                continue
            ratios = []
            for c in cells[1:]:
                if cells[0] is None or c is None:
                    ratios.append("-")
                else:
                    ratios.append("%.2f" % (cells[0]["med"] / c["med"]))
            ns = cells[0]["ns"] if cells[0] is not None else float("nan")
            out.append("| %s (%s) | %s | %d | %s | %s | %s |" % (
                fig, unit, ds, rows, " | ".join(spread(c) for c in cells), " | ".join(ratios),
                "-" if math.isnan(ns) else num(ns)))
    # issue 22's scaling target: each engine's cost per row on a set / on the first set
    base = sets[0][0]
    out += ["", "Cost per row on each set / on %s (issue 22's target for Rowan's reads: 1.5 or"
            " less at 30x):" % base, "",
            "| figure | engine | " + " | ".join(ds for ds, _ in sets[1:]) + " |",
            "|---|---|" + "---:|" * (len(sets) - 1)]
    for fig, unit in figs:
        for e in ENGINES:
            d0 = data.get((base, fig, e))
            if d0 is None or math.isnan(d0["ns"]):
                continue
            cells = []
            for ds, _ in sets[1:]:
                d = data.get((ds, fig, e))
                cells.append("-" if d is None or math.isnan(d["ns"]) else
                             "%.2f" % (d["ns"] / d0["ns"]))
            out.append("| %s | %s | %s |" % (fig, e, " | ".join(cells)))
    return "\n".join(out) + "\n"


def plot(data, sets, figs, path):
    import matplotlib
    matplotlib.use("Agg")
    matplotlib.rcParams["svg.hashsalt"] = "rowan-bench"
    import matplotlib.pyplot as plt
    n = len(figs)
    cols = 3
    rows_ = (n + cols - 1) // cols
    fig_, axes = plt.subplots(rows_, cols, figsize=(5 * cols, 3.6 * rows_), squeeze=False)
    for i, (fig, unit) in enumerate(figs):
        ax = axes[i // cols][i % cols]
        size = unit == "B/reading"
        for e in ENGINES:
            pts = [(d["rows"], d["med"] if size else d["ns"]) for d in
                   (data.get((ds, fig, e)) for ds, _ in sets) if d is not None]
            pts = [(x, y) for x, y in pts if not math.isnan(y)]
            if pts:
                ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=e,
                        color=COLORS[e])
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_title(fig, fontsize=10)
        ax.set_xlabel("rows in the data set", fontsize=8)
        ax.set_ylabel("bytes per reading" if size else "ns per row", fontsize=8)
        ax.tick_params(labelsize=7)
        ax.grid(True, which="both", linewidth=0.3)
        ax.legend(fontsize=7)
    for j in range(n, rows_ * cols):
        axes[j // cols][j % cols].axis("off")
    fig_.tight_layout()
    fig_.savefig(path, format="svg", metadata={"Date": None})


def main():
    ap = argparse.ArgumentParser(description="plot and tabulate rowan_bench --csv output")
    ap.add_argument("csv")
    ap.add_argument("--svg")
    ap.add_argument("--md")
    a = ap.parse_args()
    data, sets, figs = read(a.csv)
    if a.md:
        with open(a.md, "w") as f:
            f.write(markdown(data, sets, figs))
    if a.svg:
        plot(data, sets, figs, a.svg)


if __name__ == "__main__":
    main()
