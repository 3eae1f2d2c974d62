"""bench/prefix_peer.py: the timing half of bench/prefix_peer.sh (which loads the stores and
says what is measured). In one process: rowandb (Rowan's PEP 249 module) on the Rowan store
and Python's sqlite3 module on the SQLite file; for each question, Rowan's form and SQLite's
best and plain forms must return the same rows; then REPS rounds, each timing every form N
times in a row (execute + fetchall), the engines alternated; prints microseconds per query,
medians with min-max, and Rowan's time over SQLite's best form's with its spread. It loads
nothing and measures no other figure.
Usage: prefix_peer.py ROWAN_DB SQLITE_DB REPS N Q_ROWAN_1 Q_BEST_1 Q_PLAIN_1 Q_ROWAN_2 ...
"""
import sqlite3
import statistics
import sys
import time

import rowandb


def timed(con, sql, n, params=()):
    """Microseconds per run of sql (execute and fetchall) over n runs on connection con (also
    bench/join_peer.py's timer)."""
    cur = con.cursor()
    t0 = time.perf_counter()
    for _ in range(n):
        cur.execute(sql, params)
        cur.fetchall()
    return (time.perf_counter() - t0) * 1e6 / n


def main():
    rdb, sdb, reps, n = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    qs = sys.argv[5:]
    figs = [("distinct", qs[0:3]), ("first", qs[3:6])]
    r = rowandb.connect(rdb)
    s = sqlite3.connect(sdb)
    for name, (qr, qb, qp) in figs:
        a = [tuple(x) for x in r.cursor().execute(qr.rstrip(";")).fetchall()]
        b = [tuple(x) for x in s.execute(qb).fetchall()]
        c = [tuple(x) for x in s.execute(qp).fetchall()]
        if not (a == b == c):
            sys.exit("answers differ for %s: %r / %r / %r" % (name, a[:3], b[:3], c[:3]))
        print("%s: %d rows, the same from every form" % (name, len(a)))
    res = {name: {"rowan": [], "best": [], "plain": [], "ratio": []} for name, _ in figs}
    for k in range(reps):
        for name, (qr, qb, qp) in figs:
            tr = timed(r, qr.rstrip(";"), n)
            tb = timed(s, qb, n)
            tp = timed(s, qp, max(1, n // 50))  # the plain forms read every row
            d = res[name]
            d["rowan"].append(tr)
            d["best"].append(tb)
            d["plain"].append(tp)
            d["ratio"].append(tr / tb)
            print("round %d %-8s rowan %.1f us, sqlite best %.1f us, sqlite plain %.1f us"
                  % (k + 1, name, tr, tb, tp))
    print("| question | Rowan (us) | SQLite best form (us) | SQLite plain (us) | Rowan / SQLite best |")
    print("|---|---:|---:|---:|---:|")
    for name, _ in figs:
        d = res[name]
        f = lambda v: "%.1f [%.1f-%.1f]" % (statistics.median(v), min(v), max(v))
        g = lambda v: "%.2f [%.2f-%.2f]" % (statistics.median(v), min(v), max(v))
        print("| %s | %s | %s | %s | %s |" % (name, f(d["rowan"]), f(d["best"]), f(d["plain"]),
                                               g(d["ratio"])))


if __name__ == "__main__":
    main()
