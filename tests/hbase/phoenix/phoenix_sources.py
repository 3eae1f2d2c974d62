"""tests/hbase/phoenix/phoenix_sources.py: the statements of the Phoenix differential harness
(phoenix_diff.py, issue 18), from three sources, each a list of Stmt:

- tour: examples/sensor/schema.sql, a slice of the sensor archive (data/beijing/) as single-row
  UPSERTs, the META rows and the STATIONS table of examples/sensor/load.sql, then every
  question of examples/sensor/tour.sql (its SELECTs; EXPLAIN, shell dot commands and the
  advisor are Rowan's own and left out);
- slt: the records of tests/sql/*.test that Rowan runs (no `onlyif sqlite`, no `skipif rowan`,
  up to a `halt` that applies to Rowan): `statement ok` statements and queries, EXPLAIN left
  out (plans are not answers), `statement error` run but not compared (they test Rowan's
  messages; run, so that both engines go through the same states), `query error` left out;
  a multi-row UPSERT ... VALUES (a, ...), (b, ...) is split into one UPSERT per row
  for both engines (Phoenix takes one row per UPSERT);
- random: seeded tables with typed columns and NULLs, UPSERTs (rows, overwrites, explicit
  NULLs), DELETEs, and queries: filters, key ranges, aggregates, GROUP BY, HAVING,
  ORDER BY/LIMIT (always ending in the primary key, so the order is total), DISTINCT, IN,
  LIKE, arithmetic.

Not here: running statements, comparing answers (phoenix_diff.py).
"""
import csv
import glob
import gzip
import io
import os
import random
import re


class Stmt:
    """One statement: its SQL (one line), where it comes from (for reports and the list of
    known differences), whether it is a query, and whether its rows are compared in order."""

    def __init__(self, sql, origin, is_query, ordered=False, expect_error=False):
        self.sql = sql
        self.origin = origin
        self.is_query = is_query
        self.ordered = ordered
        self.expect_error = expect_error  # a `statement error` record: run, not compared


def strip_comments(sql):
    """SQL without -- and /* */ comments (hints /*+ ... */ kept), quotes respected, line
    breaks folded into spaces."""
    out, i, n = [], 0, len(sql)
    while i < n:
        c = sql[i]
        if c in "'\"":
            j = i + 1
            while j < n:
                if sql[j] == c:
                    if j + 1 < n and sql[j + 1] == c:
                        j += 2
                        continue
                    break
                j += 1
            out.append(sql[i:j + 1])
            i = j + 1
        elif sql.startswith("--", i):
            while i < n and sql[i] != "\n":
                i += 1
        elif sql.startswith("/*", i) and not sql.startswith("/*+", i):
            j = sql.find("*/", i + 2)
            i = n if j < 0 else j + 2
        else:
            out.append(" " if c in "\r\n\t" else c)
            i += 1
    return re.sub(r" {2,}", " ", "".join(out)).strip()


def split_statements(text):
    """The statements of a SQL file (comments stripped, ';' outside quotes ends one); shell
    dot-command lines are dropped."""
    lines = [l for l in text.split("\n") if not l.lstrip().startswith(".")]
    body = strip_comments("\n".join(lines))
    stmts, cur, q = [], [], None
    for c in body:
        if q:
            cur.append(c)
            if c == q:
                q = None
        elif c in "'\"":
            q = c
            cur.append(c)
        elif c == ";":
            s = "".join(cur).strip()
            if s:
                stmts.append(s)
            cur = []
        else:
            cur.append(c)
    s = "".join(cur).strip()
    if s:
        stmts.append(s)
    return stmts


def has_top_order_by(sql):
    """True when the statement has an ORDER BY outside parentheses (its rows are ordered)."""
    depth, q, up = 0, None, sql.upper()
    for i, c in enumerate(up):
        if q:
            if c == q:
                q = None
        elif c in "'\"":
            q = c
        elif c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
        elif depth == 0 and up.startswith("ORDER BY", i) and (i == 0 or not up[i - 1].isalnum()):
            return True
    return False


def is_query_sql(sql):
    head = sql.lstrip("( ").split(None, 1)[0].upper() if sql.strip() else ""
    return head in ("SELECT", "WITH", "VALUES")


# ---------------------------------------------------------------------------------------
# 1. The tour

TOUR_STATIONS_REDUCED = ["Dongsi", "Aotizhongxin", "Changping", "Tiantan"]
TOUR_DAYS_REDUCED = [("2016-07-01", "2016-07-02"), ("2017-02-27", "2017-02-28")]
TOUR_DAYS_FULL = [("2016-07-01", "2016-07-31"), ("2017-02-22", "2017-02-28")]
STATION_ID = {"Changping": "pingchang_aq"}


def _num(v):
    return "NULL" if v in ("NA", "") else v


def _text(v):
    return "NULL" if v in ("NA", "") else "'" + v.replace("'", "''") + "'"


def tour(src, reduced):
    """The tour's schema, a slice of the archive, and its questions."""
    data = os.path.join(src, "data", "beijing")
    if not os.path.isdir(data):
        data = os.path.join(src, "..", "shared", "data", "beijing-multisite-air-quality")
    out = []
    with open(os.path.join(src, "examples/sensor/schema.sql"), encoding="utf-8") as f:
        for s in split_statements(f.read()):
            out.append(Stmt(s, "tour:schema", False))
    days = TOUR_DAYS_REDUCED if reduced else TOUR_DAYS_FULL
    files = sorted(glob.glob(os.path.join(data, "PRSA_Data_*.csv.gz")))
    for path in files:
        station = os.path.basename(path).split("_")[2]
        if reduced and station not in TOUR_STATIONS_REDUCED:
            continue
        with gzip.open(path, "rt", encoding="utf-8") as f:
            for r in csv.DictReader(f):
                day = "%s-%02d-%02d" % (r["year"], int(r["month"]), int(r["day"]))
                if not any(lo <= day <= hi for lo, hi in days):
                    continue
                ts = "TIMESTAMP '%s %02d:00:00'" % (day, int(r["hour"]))
                vals = [_num(r[k]) for k in ("PM2.5", "PM10", "SO2", "NO2", "CO", "O3", "TEMP",
                                             "PRES", "DEWP", "RAIN")]
                out.append(Stmt(
                    "UPSERT INTO SENSOR (STATION, TS, PM25, PM10, SO2, NO2, CO, O3, TEMP, PRES, "
                    "DEWP, RAIN, WD, WSPM) VALUES ('%s', %s, %s, %s, %s)"
                    % (station, ts, ", ".join(vals), _text(r["wd"]), _num(r["WSPM"])),
                    "tour:load", False))
    with gzip.open(os.path.join(data, "Beijing_AirQuality_Stations.csv.gz"), "rt",
                   encoding="utf-8") as f:
        ids = {r["station_id"]: r for r in csv.DictReader(f)}
    for path in files:
        station = os.path.basename(path).split("_")[2]
        if reduced and station not in TOUR_STATIONS_REDUCED:
            continue
        r = ids.get(STATION_ID.get(station, station.lower() + "_aq"))
        if r:
            out.append(Stmt(
                "UPSERT INTO SENSOR (STATION, TS, LONGITUDE, LATITUDE, TYPE) VALUES ('%s', "
                "TIMESTAMP '2017-02-28 23:00:00', %s, %s, %s)"
                % (station, r["Longitude"], r["Latitude"], _text(r["type"])), "tour:load", False))
    out.append(Stmt("CREATE TABLE STATIONS (STATION VARCHAR NOT NULL PRIMARY KEY, "
                    "LONGITUDE DOUBLE, LATITUDE DOUBLE, TYPE VARCHAR)", "tour:load", False))
    out.append(Stmt("UPSERT INTO STATIONS SELECT STATION, LONGITUDE, LATITUDE, TYPE FROM SENSOR "
                    "WHERE LATITUDE IS NOT NULL", "tour:load", False))
    out.append(Stmt("SELECT COUNT(*) FROM SENSOR", "tour:load", True))
    with open(os.path.join(src, "examples/sensor/tour.sql"), encoding="utf-8") as f:
        text = f.read()
    step = "0"
    for block in re.split(r'\n(?=\.print "== )', text):
        m = re.match(r'\.print "== (\w+)\.', block)
        if m:
            step = m.group(1)
        n = 0
        for s in split_statements(block):
            if not is_query_sql(s):
                continue
            n += 1
            out.append(Stmt(s, "tour:%s.%d" % (step, n), True, has_top_order_by(s)))
    return out


# ---------------------------------------------------------------------------------------
# 2. The sqllogictest files

def split_multirow_upsert(sql):
    """UPSERT INTO t [(cols)] VALUES (..), (..) as one UPSERT per row; other SQL as it is."""
    m = re.match(r"(?is)^(UPSERT\s+INTO\s+.*?\bVALUES)\s*(\(.*\))$", sql)
    if not m:
        return [sql]
    rows, depth, q, start, body = [], 0, None, None, m.group(2)
    for i, c in enumerate(body):
        if q:
            if c == q:
                q = None
        elif c in "'\"":
            q = c
        elif c == "(":
            if depth == 0:
                start = i
            depth += 1
        elif c == ")":
            depth -= 1
            if depth == 0:
                rows.append(body[start:i + 1])
        elif depth == 0 and c not in ", ":
            return [sql]  # something else after the rows (ON DUPLICATE KEY ...)
    if len(rows) <= 1:
        return [sql]
    return ["%s %s" % (m.group(1), r) for r in rows]


def slt_file(path):
    """The statements Rowan runs in one .test file, in order."""
    name = os.path.basename(path)
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    out, i, n = [], 0, len(lines)
    while i < n:
        line = lines[i].strip()
        i += 1
        if not line or line.startswith("#"):
            continue
        skip = False
        while line.startswith(("onlyif", "skipif")):
            w = line.split()
            if (w[0] == "onlyif" and w[1] != "rowan") or (w[0] == "skipif" and w[1] == "rowan"):
                skip = True
            line = lines[i].strip() if i < n else ""
            i += 1
        if line == "halt":
            if skip:
                continue
            break
        if not line.startswith(("statement", "query")):
            continue  # control, hash-threshold
        first = i
        body = []
        while i < n and lines[i].strip() and lines[i].strip() != "----":
            body.append(lines[i])
            i += 1
        if i < n and lines[i].strip() == "----":
            while i < n and lines[i].strip():
                i += 1
        w = line.split()
        if skip or w[0] == "query" and w[1] == "error":
            continue
        expect_error = w[0] == "statement" and w[1] == "error"  # not ok, not count N
        sql = strip_comments("\n".join(body)).rstrip(";").strip()
        if not sql or sql.upper().startswith("EXPLAIN"):
            continue
        origin = "slt:%s:%d" % (name, first)
        if w[0] == "query":
            out.append(Stmt(sql, origin, True, has_top_order_by(sql)))
        elif expect_error:
            out.append(Stmt(sql, origin, is_query_sql(sql), False, True))
        else:
            for s in split_multirow_upsert(sql):
                out.append(Stmt(s, origin, is_query_sql(s), has_top_order_by(s)))
    return out


SLT_REDUCED = ["basic", "where", "aggregate", "orderby", "expr"]


def slt_files(src, reduced):
    paths = sorted(glob.glob(os.path.join(src, "tests", "sql", "*.test")))
    if reduced:
        paths = [p for p in paths if os.path.basename(p)[:-5] in SLT_REDUCED]
    return paths


# ---------------------------------------------------------------------------------------
# 3. The random set

# no '': Phoenix reads the empty string as NULL, Rowan keeps it (docs/TYPES.md, docs/HBASE.md)
WORDS = ["alpha", "beta", "gamma", "al", "b_x", "a%b", "Zeta", "delta", "ab", "A"]


class RandomSet:
    """Seeded statements over two tables: RT (K1 VARCHAR, K2 INTEGER key; INTEGER, BIGINT,
    DOUBLE, DECIMAL and VARCHAR columns) and RV (one INTEGER key, DESC)."""

    def __init__(self, seed, rows, queries):
        self.r = random.Random(seed)
        self.rows, self.queries = rows, queries
        self.seed = seed

    def k1(self):
        return "".join(self.r.choice("abc") for _ in range(self.r.randint(1, 3)))

    def lit(self, col):
        r = self.r
        if col == "K1":
            return "'%s'" % self.k1()
        if col in ("K2", "ID"):
            return str(r.randint(-5, 25))
        if r.random() < 0.2 and col not in ("K1", "K2", "ID"):
            return "NULL"
        if col in ("A", "N"):
            return str(r.randint(-100, 100))
        if col == "B":
            return str(r.choice([r.randint(-10**12, 10**12), r.randint(-9, 9)]))
        if col == "C":
            return repr(r.randint(-4000, 4000) / 8)
        if col == "D":
            return "%d.%02d" % (r.randint(-999, 999), r.randint(0, 99))
        if col in ("S", "G"):
            return "'%s'" % r.choice(WORDS)
        raise ValueError(col)

    def const(self, col):
        while True:
            v = self.lit(col)
            if v != "NULL":
                return v

    def pred(self, depth=0):
        r = self.r
        k = r.randint(0, 11)
        if depth < 2 and k == 0:
            return "(%s %s %s)" % (self.pred(depth + 1), r.choice(["AND", "OR"]), self.pred(depth + 1))
        if depth < 2 and k == 1:
            return "NOT (%s)" % self.pred(depth + 1)
        col = r.choice(["K1", "K2", "A", "B", "C", "D", "S"])
        op = r.choice(["=", "<>", "<", "<=", ">", ">="])
        if k == 2:
            return "%s IS %sNULL" % (col, r.choice(["", "NOT "]))
        if k == 3:
            return "%s IN (%s)" % (col, ", ".join(self.const(col) for _ in range(r.randint(1, 4))))
        if k == 4:
            a, b = sorted([self.const("K2"), self.const("K2")], key=int)
            return "K2 BETWEEN %s AND %s" % (a, b)
        if k == 5:
            pat = r.choice(["a%", "%a", "_b%", "%ta", "al%", "b\\_%", "%", "a_"])
            return "%s %sLIKE '%s'" % (r.choice(["S", "K1"]), r.choice(["", "NOT "]), pat)
        if k == 6:
            return "A + K2 %s %s" % (op, r.randint(-50, 50))
        if k == 7:
            return "A * 2 - B %s %s" % (op, r.randint(-50, 50))
        if k == 8:
            return "C * 2 %s D" % op
        if k == 9:
            return "K1 = %s AND K2 %s %s" % (self.const("K1"), op, self.const("K2"))
        return "%s %s %s" % (col, op, self.const(col))

    def select_list(self):
        r = self.r
        cols = ["K1", "K2", "A", "B", "C", "D", "S", "A + K2", "A * 3 - 1", "C / 4", "D * 2",
                "B - A", "C + D", "-A", "ABS(A)", "LENGTH(S)", "UPPER(S)", "K1 || '-'"]
        return ", ".join(r.sample(cols, r.randint(1, 4)))

    def query(self):
        r = self.r
        where = " WHERE " + self.pred() if r.random() < 0.8 else ""
        k = r.randint(0, 6)
        if k <= 1:
            order = ""
            if r.random() < 0.5:
                # NULLS FIRST/LAST always said: the defaults differ (docs/HBASE.md)
                order = " ORDER BY %s K1, K2" % r.choice(
                    ["", "A DESC NULLS FIRST, ", "A DESC NULLS LAST, ", "S NULLS LAST, ",
                     "C NULLS FIRST, ", "D DESC NULLS LAST, ", "A + K2 NULLS FIRST, "])
                if r.random() < 0.6:
                    order += " LIMIT %d" % r.randint(0, 12)
            return "SELECT %s FROM RT%s%s" % (self.select_list(), where, order)
        if k == 2:
            aggs = r.sample(["COUNT(*)", "COUNT(A)", "SUM(A)", "MIN(C)", "MAX(D)", "AVG(A)",
                             "SUM(D)", "MIN(S)", "MAX(K2)", "COUNT(DISTINCT S)", "AVG(C)",
                             "SUM(B)"], r.randint(1, 4))
            return "SELECT %s FROM RT%s" % (", ".join(aggs), where)
        if k == 3:
            g = r.choice(["K1", "S", "A", "K1, S", "K2"])
            aggs = r.sample(["COUNT(*)", "SUM(A)", "MAX(C)", "MIN(D)", "COUNT(S)", "AVG(D)"],
                            r.randint(1, 3))
            having = " HAVING COUNT(*) > %d" % r.randint(0, 2) if r.random() < 0.3 else ""
            order = " ORDER BY %s" % g if r.random() < 0.5 else ""
            return "SELECT %s, %s FROM RT%s GROUP BY %s%s%s" % (g, ", ".join(aggs), where, g,
                                                              having, order)
        if k == 4:
            return "SELECT DISTINCT %s FROM RT%s" % (r.choice(["S", "K1", "K1, A", "K2"]), where)
        if k == 5:
            lo, hi = sorted([r.randint(-5, 25), r.randint(-5, 25)])
            return "SELECT ID, G, N FROM RV WHERE ID >= %d AND ID < %d%s" % (
                lo, hi, r.choice(["", " ORDER BY ID DESC", " ORDER BY ID LIMIT 3"]))
        return "SELECT G, COUNT(*), SUM(N) FROM RV%s GROUP BY G" % (
            r.choice(["", " WHERE N > %d" % r.randint(-50, 50), " WHERE G LIKE 'a%'"]))

    def rt_upsert(self):
        cols = ["K1", "K2"] + self.r.sample(["A", "B", "C", "D", "S"], self.r.randint(1, 5))
        return "UPSERT INTO RT (%s) VALUES (%s)" % (", ".join(cols),
                                                   ", ".join(self.lit(c) for c in cols))

    def statements(self):
        o = "random:%d" % self.seed
        out = [Stmt("CREATE TABLE RT (K1 VARCHAR NOT NULL, K2 INTEGER NOT NULL, A INTEGER, "
                    "B BIGINT, C DOUBLE, D DECIMAL(10,2), S VARCHAR, "
                    "CONSTRAINT PK PRIMARY KEY (K1, K2))", o, False),
               Stmt("CREATE TABLE RV (ID INTEGER NOT NULL, G VARCHAR, N INTEGER, "
                    "CONSTRAINT PK PRIMARY KEY (ID DESC))", o, False)]
        for _ in range(self.rows):
            out.append(Stmt(self.rt_upsert(), o, False))
        for i in range(min(self.rows, 30)):
            out.append(Stmt("UPSERT INTO RV VALUES (%s, %s, %s)" % (
                self.const("ID"), self.lit("G"), self.lit("N")), o, False))
        half = self.queries // 2
        for q in range(self.queries):
            if q == half:  # overwrites, explicit NULLs, deletes, then the other half
                for _ in range(self.rows // 5):
                    out.append(Stmt(self.rt_upsert(), o, False))
                out.append(Stmt("DELETE FROM RT WHERE %s" % self.pred(1), o, False))
                out.append(Stmt("DELETE FROM RV WHERE ID < %d" % self.r.randint(-5, 5), o, False))
            sql = self.query()
            out.append(Stmt(sql, "%s:q%d" % (o, q), True, has_top_order_by(sql)))
        return out
