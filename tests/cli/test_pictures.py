#!/usr/bin/env python3
"""tests/cli/test_pictures.py: the shell's pictures, end to end (CTest: cli_test_pictures).

Builds a small sensor table with the `rowan` shell (12 stations, small blocks, two
overlapping store files per family and rows left in the memstore), then:
  - `.keymap TABLE FILE` and `.keymap TABLE QUERY FILE` for a range scan, a full scan, point
    lookups, a skip scan by prefix and the columnar aggregate, on the unsplit table (its
    heading says "regions: 1") and on copies split into regions by SPLIT ON and by
    SALT_BUCKETS (the heading lists the boundaries, a regions bar marks each with ':', the
    SVG draws one data-region line per boundary and family): each SVG must parse as XML
    (xml.etree, the standard library's expat: a real parser, and no C dependency for a
    check), be an <svg> of whole-pixel width and height, and its blocks' data-loads summed
    per family must equal EXPLAIN (ANALYZE, FORMAT JSON)'s blocks= for the same query, the
    blocks read drawn with class r or h and the others not; every block of the table is
    drawn once; the text version's bars agree (a '#' or '+' where blocks were read);
  - `.plot FILE QUERY` and `.plot FILE` before a query, a time axis and a numeric one, a line
    per station: well-formed, its polylines' data-points adding up to the rows;
  - every SVG renders with rsvg-convert (Debian's librsvg2-bin, which scripts/deps.sh
    installs) to a PNG of the SVG's width and height (read from the PNG's IHDR chunk).
No timing is asserted. Exit status 0 passes, 77 skips (rsvg-convert missing: the render
checks need it), anything else fails.

usage: test_pictures.py ROWAN_SHELL WORK_DIR
"""
import json
import os
import shutil
import struct
import subprocess
import sys
import xml.etree.ElementTree as ET

SVG = "{http://www.w3.org/2000/svg}"
STATIONS = ["Aotizhongxin", "Changping", "Dingling", "Dongsi", "Guanyuan", "Gucheng",
            "Huairou", "Nongzhanguan", "Shunyi", "Tiantan", "Wanliu", "Wanshouxigong"]


def run(rowan, db, *args, expect_ok=True):
    """Run the shell on db with args; returns stdout (stderr goes with it on failure)."""
    p = subprocess.run([rowan, "-bail", db, *args], capture_output=True, text=True)
    if expect_ok and p.returncode != 0:
        sys.exit(f"rowan {' '.join(args)[:200]} failed ({p.returncode}):\n{p.stdout}\n{p.stderr}")
    return p


def fill(rowan, db, work, first_hour, last_hour, meta):
    """UPSERT hours [first_hour, last_hour) of every station (a SQL file read with -f)."""
    path = os.path.join(work, f"fill{first_hour}.sql")
    with open(path, "w") as f:
        f.write("BEGIN;\n")
        for i, s in enumerate(STATIONS):
            rows = []
            for h in range(first_hour, last_hour):
                temp = (h % 24) - 5 + i * 0.5
                rows.append(f"('{s}', TIMESTAMP '2016-07-01 00:00:00' + {h} / 24.0, {temp}, "
                            f"{(h * 7 + i) % 300})")
            for k in range(0, len(rows), 200):
                f.write("UPSERT INTO SENSOR (STATION, TS, TEMP, PM25) VALUES "
                        + ", ".join(rows[k:k + 200]) + ";\n")
            if meta:
                f.write(f"UPSERT INTO SENSOR (STATION, TS, LAT) VALUES ('{s}', "
                        f"TIMESTAMP '2016-07-01 00:00:00' + {last_hour - 1} / 24.0, {39 + i / 10});\n")
        f.write("COMMIT;\n")
    run(rowan, db, "-f", path)


def svg_root(path):
    """Parse path as XML; the root <svg>, its width and height (whole pixels)."""
    root = ET.parse(path).getroot()  # raises on anything not well-formed
    assert root.tag == SVG + "svg", f"{path}: root is {root.tag}"
    w, h = int(root.get("width")), int(root.get("height"))
    assert w > 0 and h > 0
    return root, w, h


def png_size(path):
    with open(path, "rb") as f:
        head = f.read(24)
    assert head[:8] == b"\x89PNG\r\n\x1a\n" and head[12:16] == b"IHDR", f"{path}: not a PNG"
    return struct.unpack(">II", head[16:24])


def render(svg, w, h, rsvg):
    png = svg[:-4] + ".png"
    subprocess.run([rsvg, "-o", png, svg], check=True)
    assert png_size(png) == (w, h), f"{png}: {png_size(png)}, want {(w, h)}"


def explain_blocks(rowan, db, query):
    """EXPLAIN (ANALYZE, FORMAT JSON) of query: {family: blocks} of its FAMILIES node."""
    out = run(rowan, db, f"EXPLAIN (ANALYZE, FORMAT JSON) {query}").stdout
    doc = json.loads(out)
    fams = {}
    for node in doc["plan"]:
        if node["step"] == "FAMILIES":
            for f in node["families"]:
                fams[f["name"]] = f["actual"]["blocks"]
    return fams


def check_keymap(rowan, db, work, name, query, rsvg, n_blocks, table="SENSOR",
                 regions="regions: 1", n_families=3):
    """regions: the heading's end, after the row key."""
    path = os.path.join(work, name + ".svg")
    args = [f".keymap {table} " + (f'"{query}" ' if query else "") + path]
    text = run(rowan, db, *args).stdout
    root, w, h = svg_root(path)
    loads, drawn, lines = {}, 0, {}
    for r in root.iter(SVG + "rect"):
        if r.get("data-region") is not None:
            lines[r.get("data-region")] = lines.get(r.get("data-region"), 0) + 1
        if r.get("data-block") is None:
            continue
        drawn += 1
        fam, n = r.get("data-family"), int(r.get("data-loads"))
        loads[fam] = loads.get(fam, 0) + n
        read_class = r.get("class") in ("r", "h")
        assert read_class == (n > 0), f"{name}: block {r.get('data-block')} class {r.get('class')}"
        if n:
            assert 0 <= int(r.get("data-hits")) <= n
    assert drawn == n_blocks, f"{name}: {drawn} blocks drawn, the table has {n_blocks}"
    if query:
        want = explain_blocks(rowan, db, query)
        for fam, blocks in want.items():
            assert loads.get(fam, 0) == blocks, \
                f"{name}: {fam}: the picture marks {loads.get(fam, 0)} loads, EXPLAIN ANALYZE {blocks}"
        for fam, n in loads.items():
            assert n == 0 or fam in want, f"{name}: {fam} read but not in EXPLAIN's FAMILIES"
        # the text version: a family with reads has '#' or '+' in its bars, one without none
        marked = {}
        for line in text.splitlines():
            parts = line.split("|")
            if len(parts) < 3 or parts[0].strip() in ("ranges", "regions"):
                continue
            fam = parts[0].strip().split(" #")[0]
            marked[fam] = marked.get(fam, False) or "#" in parts[1] or "+" in parts[1]
        for fam, n in loads.items():
            assert marked.get(fam) == (n > 0), f"{name}: {fam}: text bars {marked}, loads {n}\n{text}"
    heading = text.splitlines()[0]
    assert heading.startswith(f"{table}: row key (") and heading.endswith("); " + regions), heading
    assert "wrote " + path in text
    n_regions = int(regions.split()[1])
    bars = [l for l in text.splitlines() if l.split("|")[0].strip() == "regions"]
    if n_regions == 1:
        assert not bars and not lines, (bars, lines)
    else:
        assert len(bars) == 1 and bars[0].split("|")[1].count(":") == n_regions - 1, bars
        assert lines == {str(i): n_families for i in range(1, n_regions)}, lines
    if rsvg:
        render(path, w, h, rsvg)
    return loads


def check_plot(rowan, db, work, name, args, rows, lines, rsvg):
    path = os.path.join(work, name + ".svg")
    out = run(rowan, db, *[a.replace("FILE", path) for a in args]).stdout
    assert f"wrote {path}: {lines} line" in out, out
    root, w, h = svg_root(path)
    groups = [g for g in root.iter(SVG + "g") if g.get("data-series") is not None]
    assert len(groups) == lines, f"{name}: {len(groups)} lines drawn, want {lines}"
    points = sum(int(g.get("data-points")) for g in groups)
    assert points == rows, f"{name}: {points} points, want {rows}"
    assert any(p.get("points") for g in groups for p in g.iter(SVG + "polyline"))
    if rsvg:
        render(path, w, h, rsvg)


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    rowan, work = sys.argv[1], sys.argv[2]
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    db = os.path.join(work, "db")
    rsvg = shutil.which("rsvg-convert")
    run(rowan, db, "CREATE TABLE SENSOR (STATION VARCHAR NOT NULL, TS TIMESTAMP NOT NULL, "
                   "R.TEMP DOUBLE, R.PM25 INTEGER, M.LAT DOUBLE, "
                   "CONSTRAINT PK PRIMARY KEY (STATION, TS DESC)) BLOCKSIZE = 2048")
    fill(rowan, db, work, 0, 240, True)
    run(rowan, db, ".flush")
    fill(rowan, db, work, 200, 260, False)  # a second, overlapping file per family
    run(rowan, db, ".flush")
    n_blocks = 0
    for line in run(rowan, db, ".keymap SENSOR " + os.path.join(work, "layout.svg")).stdout.splitlines():
        parts = line.split("|")
        if len(parts) == 3 and " block" in parts[2]:
            n_blocks += int(parts[2].split(" block")[0].replace(",", "").strip())
    assert n_blocks > 50, n_blocks
    check_keymap(rowan, db, work, "layout", None, rsvg, n_blocks)
    with_key = check_keymap(rowan, db, work, "with_key",
                            "SELECT COUNT(*) FROM SENSOR WHERE STATION = 'Dongsi' AND TEMP > 10",
                            rsvg, n_blocks)
    without = check_keymap(rowan, db, work, "without_key",
                           "SELECT COUNT(*) FROM SENSOR WHERE STATION LIKE '%ongsi' AND TEMP > 10",
                           rsvg, n_blocks)
    assert 0 < with_key["R"] * 4 < without["R"], (with_key, without)
    check_keymap(rowan, db, work, "points",
                 "SELECT TEMP FROM SENSOR WHERE STATION IN ('Dongsi', 'Wanliu') AND "
                 "TS = TIMESTAMP '2016-07-05 00:00:00'", rsvg, n_blocks)
    check_keymap(rowan, db, work, "skip",
                 "SELECT /*+ SKIP_SCAN */ STATION, TEMP FROM SENSOR WHERE "
                 "TS = TIMESTAMP '2016-07-05 00:00:00'", rsvg, n_blocks)
    run(rowan, db, ".compact")  # one file per family: the columnar aggregate applies
    compacted = 0
    for line in run(rowan, db, ".keymap SENSOR " + os.path.join(work, "c.svg")).stdout.splitlines():
        parts = line.split("|")
        if len(parts) == 3 and " block" in parts[2]:
            compacted += int(parts[2].split(" block")[0].replace(",", "").strip())
    check_keymap(rowan, db, work, "columnar", "SELECT COUNT(*) FROM SENSOR WHERE TEMP > 10",
                 rsvg, compacted)
    # the same rows in tables split into regions: by SPLIT ON, and by salting
    for name, opts in (("SPLIT", "SPLIT ON ('Dongsi', 'Nongzhanguan')"), ("SALTED", ", SALT_BUCKETS = 8")):
        run(rowan, db, f"CREATE TABLE {name} (STATION VARCHAR NOT NULL, TS TIMESTAMP NOT NULL, "
                       "R.TEMP DOUBLE, R.PM25 INTEGER, M.LAT DOUBLE, "
                       f"CONSTRAINT PK PRIMARY KEY (STATION, TS DESC)) BLOCKSIZE = 2048 {opts}",
            f"UPSERT INTO {name} SELECT * FROM SENSOR", ".flush")
    blocks = 0
    for line in run(rowan, db, ".keymap SPLIT " + os.path.join(work, "s.svg")).stdout.splitlines():
        parts = line.split("|")
        if len(parts) == 3 and " block" in parts[2]:
            blocks += int(parts[2].split(" block")[0].replace(",", "").strip())
    check_keymap(rowan, db, work, "split", "SELECT COUNT(*) FROM SPLIT WHERE STATION = 'Dongsi' "
                 "AND TEMP > 10", rsvg, blocks, "SPLIT",
                 "regions: 3 (split at ['Dongsi', *], ['Nongzhanguan', *])")
    blocks = 0
    for line in run(rowan, db, ".keymap SALTED " + os.path.join(work, "s.svg")).stdout.splitlines():
        parts = line.split("|")
        if len(parts) == 3 and " block" in parts[2]:
            blocks += int(parts[2].split(" block")[0].replace(",", "").strip())
    check_keymap(rowan, db, work, "salted", "SELECT COUNT(*) FROM SALTED WHERE TEMP > 10", rsvg,
                 blocks, "SALTED",
                 "regions: 8 (split at [1, *, *], [2, *, *], [3, *, *], ..., [7, *, *])")
    rows = 12 * 260
    check_plot(rowan, db, work, "plot_time", [
        ".plot FILE \"SELECT TS, TEMP AS TEMP_C FROM SENSOR WHERE STATION = 'Dongsi'\""],
        260, 1, rsvg)
    check_plot(rowan, db, work, "plot_stations", [
        ".plot FILE", "SELECT TRUNC(TS, 'DAY') AS DAY, STATION, AVG(TEMP) AS TEMP_C, "
        "MAX(PM25) AS PM25_UGM3 FROM SENSOR GROUP BY STATION, DAY"],
        2 * 12 * 11, 24, rsvg)
    check_plot(rowan, db, work, "plot_number", [
        ".plot FILE \"SELECT PM25, TEMP FROM SENSOR WHERE STATION = 'Aotizhongxin' ORDER BY PM25\""],
        260, 1, rsvg)
    # a result that does not plot: a clear error, no crash
    bad = run(rowan, db, f".plot {os.path.join(work, 'bad.svg')} \"SELECT STATION, TEMP FROM SENSOR\"",
              expect_ok=False)
    assert bad.returncode == 1 and "x axis must be" in bad.stderr, bad.stderr
    assert rows == 3120
    if not rsvg:
        print("SKIP: rsvg-convert (Debian's librsvg2-bin) is not installed: the pictures parse "
              "and match EXPLAIN ANALYZE, but their rendering was not checked")
        sys.exit(77)
    print("ok: keymaps and plots well-formed, matching EXPLAIN ANALYZE, rendered")


if __name__ == "__main__":
    main()
