"""bench/duck_peer.py: DuckDB as a peer of rowan_bench (bench/bench_duck.c starts it).

It serves one command per line on stdin and answers one line on stdout, so the C bench
keeps its order (Rowan, SQLite, RocksDB, DuckDB, then again) and the interpreter starts
once per bench, not per measurement. Each answer is "ok SECONDS A B" (SECONDS: the time
of the statement and the fetch of its result inside this process, by time.perf_counter;
A, B: the result) or "err MESSAGE".

  create DIR             new database DIR/sensor.duckdb with the SENSOR table
  open DIR               open an existing one
  load GLOB              INSERT the prepared CSV files matching GLOB (DuckDB's CSV reader);
                         A = rows inserted
  finish                 CHECKPOINT and close (the C side then counts the directory's bytes)
  count all|gt T|null    COUNT(*) (WHERE TEMP > T / TEMP IS NULL); A = the count
  daily FROM_MS TO_MS    average TEMP per station and day over [FROM, TO); A = groups,
                         B = sum of the non-NULL averages (as the C digests fold them)
  close                  close the database

What it does not: parse CSV itself, or run the point and range reads (DuckDB is a peer for
the analytic figures only: load, size, the filtered scan and the daily average).
The settings (threads, memory_limit) come from ROWAN_DUCK_THREADS and ROWAN_DUCK_MEMORY.
"""
import os
import sys
import time

import duckdb

THREADS = int(os.environ.get("ROWAN_DUCK_THREADS", "2"))
MEMORY = os.environ.get("ROWAN_DUCK_MEMORY", "64MB")

SCHEMA = """CREATE TABLE sensor (station VARCHAR NOT NULL, ts TIMESTAMP NOT NULL,
  pm25 DOUBLE, pm10 DOUBLE, so2 DOUBLE, no2 DOUBLE, co DOUBLE, o3 DOUBLE, temp DOUBLE,
  pres DOUBLE, dewp DOUBLE, rain DOUBLE, wd VARCHAR, wspm DOUBLE)"""

# the archive's columns in file order, with the types the reader must give them
CSV_COLUMNS = ("{'No': 'BIGINT', 'year': 'INTEGER', 'month': 'INTEGER', 'day': 'INTEGER',"
               " 'hour': 'INTEGER', 'PM2.5': 'DOUBLE', 'PM10': 'DOUBLE', 'SO2': 'DOUBLE',"
               " 'NO2': 'DOUBLE', 'CO': 'DOUBLE', 'O3': 'DOUBLE', 'TEMP': 'DOUBLE',"
               " 'PRES': 'DOUBLE', 'DEWP': 'DOUBLE', 'RAIN': 'DOUBLE', 'wd': 'VARCHAR',"
               " 'WSPM': 'DOUBLE', 'station': 'VARCHAR'}")


def connect(path):
    con = duckdb.connect(path, config={"threads": THREADS, "memory_limit": MEMORY})
    return con


def timed(con, sql, params=None):
    t0 = time.perf_counter()
    rows = con.execute(sql, params or []).fetchall()
    return time.perf_counter() - t0, rows


def serve():
    con = None
    for line in sys.stdin:
        words = line.split()
        if not words:
            continue
        cmd, args = words[0], words[1:]
        try:
            if cmd == "create":
                os.makedirs(args[0])
                con = connect(os.path.join(args[0], "sensor.duckdb"))
                con.execute(SCHEMA)
                answer = "ok 0 0 0"
            elif cmd == "open":
                con = connect(os.path.join(args[0], "sensor.duckdb"))
                answer = "ok 0 0 0"
            elif cmd == "load":
                sql = ("INSERT INTO sensor SELECT station, make_timestamp(year, month, day,"
                       " hour, 0, 0), \"PM2.5\", PM10, SO2, NO2, CO, O3, TEMP, PRES, DEWP,"
                       " RAIN, wd, WSPM FROM read_csv(?, header = true, nullstr = 'NA',"
                       " columns = " + CSV_COLUMNS + ")")
                dt, rows = timed(con, sql, [args[0]])
                answer = "ok %.9f %d 0" % (dt, rows[0][0])
            elif cmd == "finish" or cmd == "close":
                if cmd == "finish":
                    con.execute("CHECKPOINT")
                con.close()
                con = None
                answer = "ok 0 0 0"
            elif cmd == "count":
                where = {"all": "", "gt": " WHERE temp > %s" % float(args[1]) if len(args) > 1
                         else "", "null": " WHERE temp IS NULL"}[args[0]]
                dt, rows = timed(con, "SELECT COUNT(*) FROM sensor" + where)
                answer = "ok %.9f %d 0" % (dt, rows[0][0])
            elif cmd == "daily":
                sql = ("SELECT COUNT(*), SUM(a) FROM (SELECT station, date_trunc('day', ts) AS d,"
                       " AVG(temp) AS a FROM sensor WHERE ts >= make_timestamp(?::BIGINT)"
                       " AND ts < make_timestamp(?::BIGINT) GROUP BY station, d)")
                dt, rows = timed(con, sql, [int(args[0]) * 1000, int(args[1]) * 1000])
                answer = "ok %.9f %d %.17g" % (dt, rows[0][0], rows[0][1] or 0.0)
            else:
                answer = "err unknown command " + cmd
        except Exception as e:  # any failure goes back to the bench, which aborts
            answer = "err " + " ".join(str(e).split())
        sys.stdout.write(answer + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    serve()
