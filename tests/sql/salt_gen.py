"""tests/sql/salt_gen.py: writes tests/sql/salt.test. It runs the same statements on
SQLite (python3's sqlite3, WITHOUT ROWID tables, read in key order) and records SQLite's
answers as the expected values of each query, once for the salted table S and once for the
plain table P under one label, then appends the Rowan-only EXPLAIN records (checked by
hand). Run it from anywhere: python3 tests/sql/salt_gen.py. It does not run Rowan."""
import os
import sqlite3, random
random.seed(23)
db = sqlite3.connect(":memory:")
out = []
def w(s=""): out.append(s)
cols = "G VARCHAR NOT NULL, N INTEGER NOT NULL, V INTEGER, W VARCHAR"
W = lambda t: f"CREATE TABLE {t} ({cols}, CONSTRAINT PK PRIMARY KEY (G, N DESC))"
w("# tests/sql/salt.test: a salted table (SALT_BUCKETS = 4) and a plain table P of the same")
w("# columns give the same answers in the same order (labels s_*), and both the answers SQLite")
w("# gives for its WITHOUT ROWID tables (read in key order): run with --engine sqlite too.")
w("# Queries without ORDER BY rely on Rowan's promise that a salted table is read in key order")
w("# (docs/SQL.md \"Salted tables\"), as SQLite reads a WITHOUT ROWID table by its key. Covered:")
w("# point lookups, IN lists, ranges, skip scans, the reverse of the key order, LIMIT and")
w("# OFFSET, aggregates, GROUP BY, a secondary index, a join, UPSERT over existing rows and")
w("# DELETE by key, by range and by a non-key column. The expected values were produced by")
w("# SQLite from the same statements: tests/sql/salt_gen.py writes this file.")
w()
for t in ("S", "P"):
    if t == "S":
        w("skipif sqlite"); w("statement ok"); w(W(t) + " SALT_BUCKETS = 4"); w()
        w("onlyif sqlite"); w("statement ok"); w(W(t) + " WITHOUT ROWID"); w()
    else:
        w("skipif sqlite"); w("statement ok"); w(W(t)); w()
        w("onlyif sqlite"); w("statement ok"); w(W(t) + " WITHOUT ROWID"); w()
    db.execute(W(t) + " WITHOUT ROWID")
w("statement ok"); w("CREATE TABLE Q (G VARCHAR PRIMARY KEY, NOTE VARCHAR)"); w()
db.execute("CREATE TABLE Q (G VARCHAR PRIMARY KEY, NOTE VARCHAR)")
def stmt(sql, tables=("S","P")):
    for t in tables:
        s = sql.replace("@", t)
        w("statement ok"); w(s); w()
        db.execute(s.replace("UPSERT", "INSERT OR REPLACE"))
stmt("UPSERT INTO Q VALUES ('a', 'first'), ('c', 'third'), ('zz', 'last')", ("",))
groups = ["a", "b", "bb", "c", "d", "zz"]
rows = []
for g in groups:
    for n in range(1, 9):
        rows.append(f"('{g}', {n}, {random.randint(-50,50)}, 'w{random.randint(0,4)}')")
stmt("UPSERT INTO @ VALUES " + ", ".join(rows))
stmt("CREATE INDEX IX_@ ON @ (W)")
qn = [0]
def query(sql, types, tables=("S","P")):
    qn[0] += 1
    for t in tables:
        s = sql.replace("@", t)
        res = db.execute(s.replace("/*+ INDEX(S IX_S) */","").replace("/*+ INDEX(P IX_P) */","")).fetchall()
        w(f"query {types} nosort s_{qn[0]}"); w(s); w("----")
        for r in res:
            w(" ".join("NULL" if v is None else (f"{v:.3f}" if isinstance(v,float) else str(v)) for v in r))
        w()
def queries():
    query("SELECT * FROM @", "TIIT")
    query("SELECT G, N, V FROM @ WHERE G = 'c' AND N = 5", "TII")
    query("SELECT G, N FROM @ WHERE G IN ('a', 'd', 'zz') AND N IN (2, 7)", "TI")
    query("SELECT G, N FROM @ WHERE G = 'bb' AND N > 3", "TI")
    query("SELECT G, N FROM @ WHERE G >= 'b' AND G < 'd'", "TI")
    query("SELECT G, N FROM @ WHERE G IN ('a', 'c') AND N <= 3", "TI")
    query("SELECT G, N FROM @ ORDER BY G DESC, N ASC", "TI")
    query("SELECT G, N FROM @ WHERE G > 'b' ORDER BY G DESC, N LIMIT 5", "TI")
    query("SELECT G, N, V FROM @ LIMIT 4 OFFSET 3", "TII")
    query("SELECT G, N FROM @ WHERE G >= 'bb' LIMIT 3", "TI")
    query("SELECT COUNT(*), SUM(V), MIN(V), MAX(W) FROM @", "IIIT")
    query("SELECT G, COUNT(*), MAX(N), SUM(V) FROM @ GROUP BY G", "TIII")
    query("SELECT G, N, V FROM @ WHERE V > 20", "TII")
    query("SELECT /*+ INDEX(@ IX_@) */ G, N FROM @ WHERE W = 'w2' ORDER BY G, N DESC", "TI")
    query("SELECT @.G, @.N, Q.NOTE FROM @ JOIN Q ON @.G = Q.G WHERE @.N > 5 ORDER BY @.G, @.N DESC", "TIT")
    query("SELECT DISTINCT G FROM @ WHERE N BETWEEN 3 AND 4", "T")
    query("SELECT G, N FROM @ WHERE G = 'd' ORDER BY N LIMIT 3", "TI")
queries()
stmt("UPSERT INTO @ VALUES ('b', 3, 99, 'w9'), ('e', 1, 1, 'w9'), ('a', 100, 7, 'w0')")
stmt("DELETE FROM @ WHERE G = 'c' AND N = 5")
stmt("DELETE FROM @ WHERE G = 'zz' AND N > 4")
stmt("DELETE FROM @ WHERE W = 'w1'")
queries()
tail = '''
# EXPLAIN of the salted table (Rowan only), after a major compaction so the estimates come
# from store files: the bucket scans as CLIENT n-CHUNK PARALLEL n-WAY, the first and last bucket in the
# bounds, CLIENT MERGE SORT when more than one bucket is merged; a point lookup reads its
# key's bucket only; the estimates count the rows of every bucket's part of the range (G = 'a'
# was written 9 rows, the table 50; the estimates count those as the plain table's do, the
# rows deleted since included: the last record shows P's figure for the same scan). They are
# skipped on HBase (skipif hbase): its statistics count the rows there are, not those deleted
# (docs/HBASE.md); the answers are the same.
onlyif sqlite
halt

control compact

skipif hbase
query T nosort
EXPLAIN SELECT G, N FROM S WHERE G = 'a'
----
CLIENT 4-CHUNK PARALLEL 4-WAY RANGE SCAN OVER S [0, 'a', *] .. [3, 'a', *]
    CLIENT MERGE SORT (the 4 salt buckets merged in key order)
    KEY RANGE: G = 'a'  [answered by the key; not re-checked]
    FAMILIES: _k  [_k reads the key family: only key columns are needed]
    ESTIMATE: 9 rows, * B of 50 rows, * B in the table

skipif hbase
query T nosort
EXPLAIN SELECT G, N FROM S WHERE G = 'a' AND N = 3
----
CLIENT 1-CHUNK PARALLEL 1-WAY POINT LOOKUP ON 1 KEY OVER S ['a', 3]
    KEY RANGE: G = 'a' AND N = 3  [answered by the key; not re-checked]
    FAMILIES: _k  [_k reads the key family: only key columns are needed]
    ESTIMATE: 1 row, * B of 50 rows, * B in the table

skipif hbase
query T nosort
EXPLAIN SELECT COUNT(*) FROM S
----
CLIENT 4-CHUNK PARALLEL 4-WAY FULL SCAN OVER S
    CLIENT MERGE SORT (the 4 salt buckets merged in key order)
    FAMILIES: _k  [_k reads the key family: only key columns are needed]
    SERVER AGGREGATE INTO SINGLE ROW [COUNT(*)]
    ESTIMATE: 50 rows, * B of 50 rows, * B in the table

query I nosort
SELECT COUNT(*) FROM S
----
36

skipif hbase
query T nosort
EXPLAIN SELECT COUNT(*) FROM P
----
FULL SCAN OVER P
    FAMILIES: _k  [_k reads the key family: only key columns are needed]
    SERVER AGGREGATE INTO SINGLE ROW [COUNT(*)]
    ESTIMATE: 50 rows, * B of 50 rows, * B in the table
'''
out.append(tail)
open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "salt.test"), "w").write("\n".join(out).rstrip() + "\n")
