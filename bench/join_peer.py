"""bench/join_peer.py: the timing half of bench/join_peer.sh (which loads the stores and says
what is measured). In one process: rowandb (Rowan's PEP 249 module) on the Rowan store and
Python's sqlite3 module on the SQLite file. It prints each question's plan in both engines
(Rowan's EXPLAIN, SQLite's EXPLAIN QUERY PLAN), checks that both return the same rows
(averages equal to 9 significant digits: the engines sum in different orders), then runs
REPS rounds, each timing every question N times in a row per engine (execute + fetchall),
the engines alternated; prints microseconds per query, medians with min-max, and Rowan's
time over SQLite's with its spread. It loads nothing and measures no other figure.
Usage: join_peer.py ROWAN_DB SQLITE_DB REPS N FROM_DAY TO_DAY NAME_1 SQL_1 [NAME_2 SQL_2 ...]
where every SQL has two parameters, the month's bounds FROM_DAY <= TS < TO_DAY (YYYY-MM-DD):
bound as datetime for Rowan (a TIMESTAMP column) and as 'YYYY-MM-DD HH:MM:SS' text for
SQLite (its TS column holds that text).
"""
import datetime
import sqlite3
import statistics
import sys

import rowandb
from prefix_peer import timed


def same(a, b):
    """True when the rows a and b are equal, floats to 9 significant digits."""
    def norm(rows):
        return [tuple(float("%.9g" % v) if isinstance(v, float) else v for v in row)
                for row in rows]
    return norm(a) == norm(b)


def spread(v, fmt):
    return (fmt + " [" + fmt + "-" + fmt + "]") % (statistics.median(v), min(v), max(v))


def main():
    rdb, sdb, reps, n = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    lo, hi = (datetime.datetime.strptime(d, "%Y-%m-%d") for d in sys.argv[5:7])
    rest = sys.argv[7:]
    figs = list(zip(rest[0::2], (q.strip().rstrip(";") for q in rest[1::2])))
    rp = (lo, hi)
    sp = (lo.strftime("%Y-%m-%d %H:%M:%S"), hi.strftime("%Y-%m-%d %H:%M:%S"))
    r = rowandb.connect(rdb)
    s = sqlite3.connect(sdb)
    for name, q in figs:
        print("%s:" % name)
        for row in r.cursor().execute("EXPLAIN " + q, rp).fetchall():
            print("  rowan  | " + " ".join(str(x) for x in row))
        for row in s.execute("EXPLAIN QUERY PLAN " + q, sp).fetchall():
            print("  sqlite | " + str(row[-1]))
        a = [tuple(x) for x in r.cursor().execute(q, rp).fetchall()]
        b = [tuple(x) for x in s.execute(q, sp).fetchall()]
        if not a or not same(a, b):
            sys.exit("answers differ for %s:\n  rowan  %r\n  sqlite %r" % (name, a, b))
        print("  %d rows, the same from both (%s rows joined)"
              % (len(a), sum(row[1] for row in a)))
    res = {name: {"rowan": [], "sqlite": [], "ratio": []} for name, _ in figs}
    for k in range(reps):
        for name, q in figs:
            tr = timed(r, q, n, rp)
            ts = timed(s, q, n, sp)
            d = res[name]
            d["rowan"].append(tr)
            d["sqlite"].append(ts)
            d["ratio"].append(tr / ts)
            print("round %d %-12s rowan %.1f us, sqlite %.1f us" % (k + 1, name, tr, ts))
            sys.stdout.flush()
    print("| question | Rowan (us) | SQLite (us) | Rowan / SQLite |")
    print("|---|---:|---:|---:|")
    for name, _ in figs:
        d = res[name]
        print("| %s | %s | %s | %s |" % (name, spread(d["rowan"], "%.1f"),
                                         spread(d["sqlite"], "%.1f"),
                                         spread(d["ratio"], "%.3f")))


if __name__ == "__main__":
    main()
