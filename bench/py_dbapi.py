"""bench/py_dbapi.py: rows/s of executemany and of fetchall through rowandb (Rowan's PEP 249
module, python/) against Python's sqlite3 module on the same rows, engines interleaved, each
figure the median of --runs repetitions with its min-max spread, printed as a table and,
with --csv, appended in bench/plot.py's CSV form.

The rows are the sensor archive's shape (station, hour, twelve readings) made up from a
fixed seed: the point is the module's cost per row (binding, conversion, tuple building),
not the storage. Both engines run on a fresh store per repetition in --work, SQLite with a
WITHOUT ROWID table of the same key. It measures no other figure.
Usage: python bench/py_dbapi.py [--rows N] [--runs K] [--work DIR] [--csv FILE]
"""
import argparse
import datetime
import os
import random
import shutil
import sqlite3
import statistics
import time

import rowandb

COLS = ["STATION", "TS", "PM25", "PM10", "SO2", "NO2", "CO", "O3", "TEMP", "PRES", "DEWP",
        "RAIN", "WD", "WSPM"]


def make_rows(n, seed=20261130):
    rnd = random.Random(seed)
    stations = ["S%02d" % i for i in range(12)]
    t0 = datetime.datetime(2013, 3, 1)
    rows = []
    per = n // len(stations) + 1
    for s in stations:
        for h in range(per):
            if len(rows) == n:
                break
            rows.append((s, t0 + datetime.timedelta(hours=h), rnd.uniform(0, 500),
                         rnd.uniform(0, 600), rnd.uniform(0, 100), rnd.uniform(0, 200),
                         rnd.uniform(100, 5000), rnd.uniform(0, 300), rnd.uniform(-20, 40),
                         rnd.uniform(990, 1040), rnd.uniform(-30, 30), rnd.uniform(0, 10),
                         rnd.choice(["N", "NNE", "E", "SW"]), rnd.uniform(0, 10)))
    return rows


def run_rowan(path, rows):
    shutil.rmtree(path, ignore_errors=True)
    con = rowandb.connect(path, autocommit=True, sync="normal")
    cur = con.cursor()
    cur.execute("CREATE TABLE R (STATION VARCHAR NOT NULL, TS TIMESTAMP NOT NULL, " +
                ", ".join("%s %s" % (c, "VARCHAR" if c == "WD" else "DOUBLE") for c in COLS[2:]) +
                " CONSTRAINT PK PRIMARY KEY (STATION, TS))")
    t = time.perf_counter()
    cur.executemany("UPSERT INTO R (%s) VALUES (%s)" % (", ".join(COLS), ", ".join("?" * len(COLS))),
                    rows)
    load = time.perf_counter() - t
    t = time.perf_counter()
    got = cur.execute("SELECT * FROM R").fetchall()
    fetch = time.perf_counter() - t
    assert len(got) == len(rows), (len(got), len(rows))
    con.close()
    return load, fetch


def run_sqlite(path, rows):
    if os.path.exists(path):
        os.remove(path)
    con = sqlite3.connect(path, detect_types=sqlite3.PARSE_DECLTYPES)
    con.execute("PRAGMA journal_mode=WAL")
    con.execute("PRAGMA synchronous=NORMAL")
    con.execute("CREATE TABLE R (STATION TEXT NOT NULL, TS TIMESTAMP NOT NULL, " +
                ", ".join("%s %s" % (c, "TEXT" if c == "WD" else "REAL") for c in COLS[2:]) +
                ", PRIMARY KEY (STATION, TS)) WITHOUT ROWID")
    t = time.perf_counter()
    with con:
        con.executemany("INSERT OR REPLACE INTO R VALUES (%s)" % ", ".join("?" * len(COLS)), rows)
    load = time.perf_counter() - t
    t = time.perf_counter()
    got = con.execute("SELECT * FROM R").fetchall()
    fetch = time.perf_counter() - t
    assert len(got) == len(rows)
    con.close()
    return load, fetch


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=1000000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--work", default="/tmp/rowan-pybench")
    ap.add_argument("--csv")
    a = ap.parse_args()
    os.makedirs(a.work, exist_ok=True)
    rows = make_rows(a.rows)
    res = {("rowan", "load"): [], ("rowan", "fetch"): [], ("sqlite", "load"): [],
           ("sqlite", "fetch"): []}
    for _ in range(a.runs):  # interleaved: one of each per repetition
        for eng, fn, path in (("rowan", run_rowan, os.path.join(a.work, "rowan")),
                              ("sqlite", run_sqlite, os.path.join(a.work, "sqlite.db"))):
            load, fetch = fn(path, rows)
            res[(eng, "load")].append(a.rows / load)
            res[(eng, "fetch")].append(a.rows / fetch)
    print("| figure (rows/s) | rowandb | sqlite3 module | ratio |")
    print("|---|---:|---:|---:|")
    for fig, name in (("load", "executemany"), ("fetch", "fetchall")):
        r, s = res[("rowan", fig)], res[("sqlite", fig)]
        ratios = [x / y for x, y in zip(r, s)]
        print("| %s, %d rows | %.0f [%.0f-%.0f] | %.0f [%.0f-%.0f] | %.2f [%.2f-%.2f] |" % (
            name, a.rows, statistics.median(r), min(r), max(r), statistics.median(s), min(s),
            max(s), statistics.median(ratios), min(ratios), max(ratios)))
        if a.csv:
            with open(a.csv, "a") as f:
                for eng in ("rowan", "sqlite"):
                    v = res[(eng, fig)]
                    f.write("python %s (rows/s),python,%d,%s,%g,%g,%g\n" % (
                        name, a.rows, eng, statistics.median(v), min(v), max(v)))


if __name__ == "__main__":
    main()
