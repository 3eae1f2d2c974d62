-- tests/sql/corpus/parse_ok.sql: statements that must parse, one per ';'. test_parse.c
-- parses each, prints it, parses the print and prints again: both prints must be equal.
-- Covers every statement form and expression form of docs/SQL.md.

-- CREATE TABLE
CREATE TABLE t (k INTEGER PRIMARY KEY);
create table t (k integer not null primary key, v varchar);
CREATE TABLE IF NOT EXISTS t (k BIGINT NOT NULL PRIMARY KEY DESC, v DOUBLE NULL);
CREATE TABLE readings (sensor_id VARCHAR NOT NULL, ts TIMESTAMP NOT NULL, readings.temp DOUBLE, readings.humidity DOUBLE, meta.location VARCHAR(64), meta.model VARCHAR CONSTRAINT pk PRIMARY KEY (sensor_id, ts DESC));
CREATE TABLE readings (sensor_id VARCHAR NOT NULL, ts TIMESTAMP NOT NULL, readings.temp DOUBLE, meta.location VARCHAR(64), CONSTRAINT pk PRIMARY KEY (sensor_id, ts DESC)) VERSIONS = 1, TTL = 86400, meta.VERSIONS = 3;
CREATE TABLE t (a DECIMAL(10, 2), b CHAR(3), c VARBINARY, d DATE, e TIME, f TIMESTAMP, g BOOLEAN, h TINYINT, i SMALLINT, j FLOAT, CONSTRAINT my_pk PRIMARY KEY (a ASC, b DESC, c));
CREATE TABLE t (k VARCHAR PRIMARY KEY) COMPRESSION = 'LZ4', BLOCKSIZE = 65536, IMMUTABLE_ROWS = TRUE;
CREATE TABLE t (k VARCHAR PRIMARY KEY) IMMUTABLE_ROWS = false, COMPRESSION = NONE;
CREATE TABLE "MixedCase" ("lower" VARCHAR PRIMARY KEY, "with space" INTEGER, "quote""inside" INTEGER);
CREATE TABLE t (k INTEGER PRIMARY KEY, "0".v INTEGER);
CREATE TABLE t (k INTEGER PRIMARY KEY) TTL = -1;
CREATE TABLE t (key INTEGER PRIMARY KEY, index INTEGER, table VARCHAR, first INTEGER, last INTEGER, nulls INTEGER, asc INTEGER, desc INTEGER);
CREATE TABLE t (date DATE PRIMARY KEY, time TIME, timestamp TIMESTAMP);
CREATE TABLE t (k INTEGER PRIMARY KEY, v DECIMAL(38)) meta.TTL = 10, readings.BLOCKSIZE = 4096, VERSIONS = 5;
DROP TABLE t;
DROP TABLE IF EXISTS t;
drop table if exists "Weird""Name";
DROP TABLE readings;

-- CREATE INDEX, DROP INDEX, CHECK INDEX
CREATE INDEX idx ON t (v);
CREATE INDEX IF NOT EXISTS idx ON t (v DESC, w ASC);
CREATE INDEX idx_loc ON readings (meta.location) INCLUDE (meta.model, readings.temp);
CREATE INDEX idx_expr ON t (UPPER(name), a + b DESC);
CREATE INDEX idx ON t (v) INCLUDE (w) BLOCKSIZE = 1024;
CREATE INDEX idx ON t (v NULLS FIRST);
DROP INDEX idx ON t;
DROP INDEX IF EXISTS idx ON t;

-- ALTER TABLE
ALTER TABLE t ADD note VARCHAR;
ALTER TABLE t ADD IF NOT EXISTS meta.loc VARCHAR(20) NULL, w DECIMAL(10, 2);
ALTER TABLE t ADD COLUMN tags VARCHAR ARRAY;
ALTER TABLE t DROP COLUMN note;
ALTER TABLE t DROP COLUMN IF EXISTS meta.loc, w;
ALTER TABLE t SET TTL = 86400, meta.VERSIONS = 3, COMPRESSION = 'NONE';
ALTER TABLE "column" ADD "set" INTEGER;
-- views
CREATE VIEW v AS SELECT * FROM t WHERE tenant = 'a';
create view if not exists "v w" as select k, v as w from t where k > 1 order by k limit 3;
CREATE VIEW agg AS WITH c AS (SELECT k FROM t) SELECT COUNT(*) AS n FROM c UNION SELECT 1;
CREATE VIEW vc (extra VARCHAR, meta.n INTEGER) AS SELECT * FROM t WHERE k = 1;
CREATE VIEW view AS SELECT cascade FROM t;
DROP VIEW v;
DROP VIEW IF EXISTS "v w" CASCADE;
DROP TABLE IF EXISTS t CASCADE;
CHECK INDEX idx ON t;
check index "Idx" on "T";

-- UPSERT
UPSERT INTO t VALUES (1, 'a');
UPSERT INTO t (k, v) VALUES (1, 'a');
UPSERT INTO t (k, v) VALUES (1, 'a'), (2, 'b'), (3, NULL);
UPSERT INTO readings (sensor_id, ts, temp) VALUES ('s1', TIMESTAMP '2024-01-01 00:00:00', 21.5);
UPSERT INTO readings (sensor_id, ts, meta.location) VALUES (?, ?, ?);
UPSERT INTO t (k, v) VALUES (?1, ?2), (?3, ?4);
UPSERT INTO t (k) VALUES (1);
UPSERT INTO t VALUES (-1, +2, 3 * 4, 'x' || 'y');
UPSERT INTO t (k, v) SELECT k + 1, v FROM s;
UPSERT INTO t (k, v) SELECT k, v FROM s WHERE k > 10 ORDER BY k LIMIT 100;
UPSERT INTO t SELECT * FROM s;
UPSERT /*+ NO_INDEX */ INTO t (k) VALUES (1);
UPSERT INTO t (k) SELECT /*+ INDEX(s s_idx) */ k FROM s;
UPSERT INTO t (a, b) VALUES (DATE '2024-01-01', TIME '12:00:00');
UPSERT INTO t (a) VALUES (CAST('1' AS INTEGER));
UPSERT INTO t (a, b, c) VALUES (TRUE, FALSE, NULL);
UPSERT INTO t (a) VALUES ('it''s');
UPSERT INTO t (a) VALUES ('');
UPSERT INTO t (a) VALUES ('multi
line');
upsert into t (a) values (1.5e10), (.5), (12.), (1E-3), (0.000), (007);

-- DELETE
DELETE FROM t;
DELETE FROM t WHERE k = 1;
DELETE FROM t WHERE k > 10 LIMIT 100;
DELETE FROM t LIMIT 5;
DELETE /*+ NO_INDEX */ FROM t WHERE v IS NULL;
DELETE FROM readings WHERE sensor_id = ? AND ts < TIMESTAMP '2023-01-01 00:00:00';
DELETE FROM t WHERE (a, b) IN ((1, 2), (3, 4));

-- SELECT: lists and clauses
SELECT * FROM t;
SELECT a FROM t;
SELECT a, b, c FROM t;
SELECT t.* FROM t;
SELECT r.*, r.temp FROM readings r;
SELECT meta.* FROM readings;
SELECT r.meta.* FROM readings AS r;
SELECT a AS x, b y, c AS "Mixed" FROM t;
SELECT DISTINCT a FROM t;
SELECT ALL a FROM t;
SELECT DISTINCT a, b FROM t ORDER BY a;
SELECT 1;
SELECT 1 + 1, 'x', NULL;
SELECT a FROM t WHERE a = 1;
SELECT a FROM t AS x WHERE x.a = 1;
SELECT a FROM t x WHERE x.a = 1;
SELECT a, COUNT(*) FROM t GROUP BY a;
SELECT a, b, SUM(c) FROM t GROUP BY a, b HAVING SUM(c) > 10;
SELECT a FROM t ORDER BY a;
SELECT a FROM t ORDER BY a ASC;
SELECT a FROM t ORDER BY a DESC;
SELECT a FROM t ORDER BY a DESC NULLS FIRST, b NULLS LAST, c ASC NULLS LAST;
SELECT a FROM t LIMIT 10;
SELECT a FROM t LIMIT 10 OFFSET 20;
SELECT a FROM t OFFSET 5;
SELECT a FROM t LIMIT ? OFFSET ?;
SELECT a FROM t WHERE a > 1 GROUP BY a HAVING COUNT(*) > 2 ORDER BY a DESC LIMIT 3 OFFSET 1;
SELECT /*+ INDEX(t idx) */ a FROM t WHERE b = 1;
SELECT /*+ NO_INDEX */ * FROM t;
SELECT /*+ INDEX(t idx) */ DISTINCT a FROM t;
SELECT /*+*/ a FROM t;
SELECT /* plain comment */ a FROM t;
SELECT a -- trailing comment
FROM t;
SELECT sensor_id, MAX(ts), AVG(temp) FROM readings WHERE sensor_id = 's1' AND ts > TIMESTAMP '2024-01-01 00:00:00' GROUP BY sensor_id;
SELECT COUNT(*) FROM readings;
SELECT COUNT(DISTINCT sensor_id) FROM readings;
SELECT COUNT(1), MIN(a), MAX(b), SUM(c), AVG(d) FROM t;
SELECT NOW(), CURRENT_DATE() FROM t;
SELECT f(a, b, c), g(DISTINCT a), h() FROM t;
SELECT "lower"."Col" FROM "lower";
SELECT t.meta.location FROM readings t;
SELECT readings.meta.location, meta.model FROM readings;
SELECT key, index, first, last FROM t;
SELECT date, time, timestamp FROM t;
SELECT DATE(ts), TIME(ts) FROM t;
SELECT a FROM t WHERE date > DATE '2024-01-01';
SELECT "SELECT", "from" FROM "TABLE";
SELECT ÄÖÜ, naïve FROM t;
SELECT "ünïcödé" FROM t;

-- Expressions: literals
SELECT 0, 12, 12.5, .5, 12., 1e10, 1E10, 1.5E-3, 2e+5 FROM t;
SELECT 123456789012345678901234567890 FROM t;
SELECT 'a', 'it''s', '''', '', 'ünï' FROM t;
SELECT NULL, TRUE, FALSE FROM t;
SELECT DATE '2024-02-29', TIME '23:59:59', TIMESTAMP '2024-02-29 23:59:59.999' FROM t;
SELECT ?, ?, ? FROM t;
SELECT ?1, ?2, ?1 FROM t;
SELECT ?10, ? FROM t;

-- Expressions: arithmetic and concatenation
SELECT a + b, a - b, a * b, a / b, a % b FROM t;
SELECT a + b * c, (a + b) * c, a * b + c, a * (b + c) FROM t;
SELECT a - b - c, a - (b - c), a / b / c, a / (b / c) FROM t;
SELECT -a, +a, - a, -(-a), -(a + b), -a * b, -(a * b) FROM t;
SELECT - -a FROM t;
SELECT a - -b, a + +b, a * -b FROM t;
SELECT a || b, a || b || c, a || (b || c), 'x' || 1 + 2 FROM t;
SELECT (a || b) + 1 FROM t;
SELECT ((((a)))) FROM t;
SELECT -5, -5.5, -1e3 FROM t;

-- Expressions: comparisons and logic
SELECT a FROM t WHERE a = 1 AND b <> 2 AND c != 3 AND d < 4 AND e <= 5 AND f > 6 AND g >= 7;
SELECT a FROM t WHERE a = 1 OR b = 2 AND c = 3;
SELECT a FROM t WHERE (a = 1 OR b = 2) AND c = 3;
SELECT a FROM t WHERE NOT a = 1;
SELECT a FROM t WHERE NOT (a = 1 AND b = 2);
SELECT a FROM t WHERE NOT NOT a;
SELECT a FROM t WHERE a AND NOT b OR c;
SELECT a FROM t WHERE a OR b OR c OR d;
SELECT a FROM t WHERE a AND (b OR c) AND d;
SELECT a FROM t WHERE (a = b) = c;
SELECT a FROM t WHERE a = (b = c);
SELECT a FROM t WHERE a + 1 > b * 2;
SELECT a < b, a = b FROM t;
SELECT a FROM t WHERE TRUE;
SELECT a FROM t WHERE a = TRUE OR b = FALSE;

-- IN, BETWEEN, LIKE, IS NULL
SELECT a FROM t WHERE a IN (1, 2, 3);
SELECT a FROM t WHERE a NOT IN (1, 2, 3);
SELECT a FROM t WHERE a IN ('x');
SELECT a FROM t WHERE a IN (?, ?, ?);
SELECT a FROM t WHERE a + 1 IN (b, c + 1);
SELECT a FROM t WHERE NOT a IN (1, 2);
SELECT a FROM t WHERE (a IN (1)) = TRUE;
SELECT a FROM t WHERE a = b IN (1);
SELECT a FROM t WHERE a = b NOT IN (1);
SELECT a FROM t WHERE a BETWEEN 1 AND 10;
SELECT a FROM t WHERE a NOT BETWEEN 1 AND 10;
SELECT a FROM t WHERE a BETWEEN 1 AND 10 AND b = 2;
SELECT a FROM t WHERE a BETWEEN b + 1 AND c * 2;
SELECT a FROM t WHERE a BETWEEN (b AND c) AND d;
SELECT a FROM t WHERE NOT a BETWEEN 1 AND 2;
SELECT a FROM t WHERE ts BETWEEN TIMESTAMP '2024-01-01 00:00:00' AND TIMESTAMP '2024-02-01 00:00:00';
SELECT a FROM t WHERE a LIKE 'abc%';
SELECT a FROM t WHERE a NOT LIKE 'abc%';
SELECT a FROM t WHERE a ILIKE 'ABC%';
SELECT a FROM t WHERE a NOT ILIKE '%x_';
SELECT a FROM t WHERE a LIKE 'x!%%' ESCAPE '!';
SELECT a FROM t WHERE a NOT LIKE 'x\_%' ESCAPE '\';
SELECT a FROM t WHERE a LIKE b || '%';
SELECT a FROM t WHERE a || b LIKE 'x%';
SELECT a FROM t WHERE a LIKE ? ESCAPE ?;
SELECT a FROM t WHERE a IS NULL;
SELECT a FROM t WHERE a IS NOT NULL;
SELECT a FROM t WHERE a IS NULL AND b IS NOT NULL;
SELECT a FROM t WHERE NOT a IS NULL;
SELECT a FROM t WHERE a + 1 IS NULL;
SELECT a FROM t WHERE a = b IS NULL;
SELECT a FROM t WHERE (a IS NULL) = b;
SELECT a FROM t WHERE (a IS NULL) IS NULL;

-- Row value constructors
SELECT a FROM t WHERE (a, b) > (1, 2);
SELECT a FROM t WHERE (a, b) = (1, 2);
SELECT a FROM t WHERE (a, b, c) >= (1, 'x', 3.5);
SELECT a FROM t WHERE (a, b) IN ((1, 2), (3, 4));
SELECT a FROM t WHERE (a, b) NOT IN ((1, 2), (3, 4));
SELECT a FROM t WHERE (sensor_id, ts) > ('s1', TIMESTAMP '2024-01-01 00:00:00') AND (sensor_id, ts) <= (?, ?);
SELECT (a, b) FROM t;
SELECT a FROM t WHERE ((a, b)) < ((1, 2));

-- CASE and CAST
SELECT CASE WHEN a > 0 THEN 'pos' WHEN a < 0 THEN 'neg' ELSE 'zero' END FROM t;
SELECT CASE a WHEN 1 THEN 'one' WHEN 2 THEN 'two' END FROM t;
SELECT CASE a + 1 WHEN b THEN c ELSE d END FROM t;
SELECT CASE WHEN a IS NULL THEN 0 ELSE a END + 1 FROM t;
SELECT CASE WHEN CASE WHEN a THEN b END THEN c END FROM t;
SELECT CAST(a AS VARCHAR) FROM t;
SELECT CAST(a AS VARCHAR(10)), CAST(b AS DECIMAL(10, 2)), CAST(c AS TIMESTAMP) FROM t;
SELECT CAST(a + b AS BIGINT) * 2 FROM t;
SELECT -CAST(a AS INTEGER) FROM t;
SELECT CAST(CAST(a AS INTEGER) AS VARCHAR) FROM t;

-- Function calls
SELECT UPPER(name), LOWER(name), LENGTH(name), SUBSTR(name, 1, 3) FROM t;
SELECT ROUND(temp, 2), TRUNC(ts, 'HOUR'), TO_CHAR(ts) FROM readings;
SELECT COALESCE(a, b, 0) FROM t;
SELECT "lowerfunc"(a) FROM t;
SELECT f(g(h(a))) FROM t;
SELECT COUNT(*) + 1, -COUNT(*) FROM t;
SELECT a FROM t GROUP BY a HAVING COUNT(DISTINCT b) > 1 AND MAX(c) < 10;
SELECT a FROM t ORDER BY COUNT(*) DESC, a + 1;

-- Parameters everywhere
SELECT a FROM t WHERE a = ? AND b IN (?, ?) AND c BETWEEN ? AND ? AND d LIKE ?;
SELECT a FROM t WHERE k = ?3 OR k = ?1;
SELECT CAST(? AS INTEGER) FROM t;

-- EXPLAIN
EXPLAIN SELECT * FROM t;
EXPLAIN ANALYZE SELECT * FROM t WHERE k = 1;
EXPLAIN UPSERT INTO t (k) VALUES (1);
EXPLAIN DELETE FROM t WHERE k = 1;
EXPLAIN ANALYZE DELETE FROM t;
EXPLAIN ANALYZE UPSERT INTO t SELECT * FROM s;
explain select /*+ INDEX(t i) */ a from t;
EXPLAIN SELECT COUNT(*) FROM readings WHERE sensor_id IN ('s1', 's2') AND ts > ?;

-- Transactions
BEGIN;
COMMIT;
ROLLBACK;
begin;
Commit;

-- Case folding and quoting
select MixedCase, "MixedCase", "MIXEDCASE" from Tbl;
SELECT a.b.c FROM a;
SELECT "a"."b"."c" FROM "a";
SELECT "a.b" FROM t;
SELECT a AS "select" FROM t;
SELECT "123abc", _x, x_1 FROM t;

-- Whitespace and comments
SELECT
  a,
  b
FROM
  t
WHERE
  a = 1;
SELECT/**/a/**/FROM/**/t;
SELECT a FROM t /* before semicolon */;
	SELECT	a	FROM	t;
/* leading comment */ SELECT a FROM t;
-- leading line comment
SELECT a FROM t;

-- Deeper mixes
SELECT a FROM t WHERE a = 1 AND (b = 2 OR c = 3) AND NOT d IN (4, 5) AND e BETWEEN 6 AND 7 OR f LIKE 'x%' AND g IS NOT NULL;
SELECT CASE WHEN a BETWEEN 1 AND 2 THEN b IN (1, 2) ELSE c LIKE 'x' END FROM t;
SELECT a FROM t WHERE -a * b + c / d - e % f || g = h;
SELECT a FROM t WHERE a NOT BETWEEN b AND c AND d NOT IN (1) AND e NOT LIKE 'x' ESCAPE 'y' AND f IS NOT NULL;
SELECT a FROM t WHERE (a + b) IN ((c), (d + e));
SELECT a FROM t WHERE a LIKE 'x' = TRUE;
SELECT a FROM t WHERE a BETWEEN 1 AND 2 = TRUE;
SELECT a FROM t WHERE NOT a LIKE 'x' ESCAPE 'y' || 'z';
SELECT a FROM t WHERE a IN (1) IN (TRUE);
SELECT a FROM t WHERE (a LIKE b) LIKE c;
SELECT a FROM t WHERE a LIKE (b LIKE c);
SELECT a FROM t WHERE (a BETWEEN 1 AND 2) BETWEEN FALSE AND TRUE;
SELECT a FROM t WHERE a BETWEEN 1 AND (2 BETWEEN 3 AND 4);
UPSERT INTO t (a, b) VALUES (CASE WHEN ? THEN 1 ELSE 2 END, COALESCE(?, 'x') || '!');
DELETE FROM t WHERE a IN (SELECT_ME, b) AND c = -(-1);
SELECT EXTRACT(YEAR FROM ts), EXTRACT(day FROM d + 1) FROM t;
SELECT g, PERCENTILE_CONT(0.9) WITHIN GROUP (ORDER BY v), PERCENTILE_DISC(0.5) WITHIN GROUP (ORDER BY v + 1 DESC) FROM t GROUP BY g;
SELECT within FROM t WHERE within > 1;
SELECT REGEXP_REPLACE(s, '[0-9]+', '<$0>'), LPAD(s, 5, '0'), INSTR(s, 'x') FROM t;
-- joins (issue 16): every kind the grammar takes, aliases with and without AS, ON and USING
SELECT r.ts, s.kind FROM readings r JOIN stations AS s ON r.station = s.station;
SELECT * FROM a INNER JOIN b ON a.k = b.k AND a.v > b.v LEFT OUTER JOIN c USING (k, v) CROSS JOIN d, e x;
SELECT COUNT(*) FROM a LEFT JOIN b ON a.k = b.k RIGHT JOIN c ON c.k = a.k FULL OUTER JOIN d ON TRUE;
SELECT "left".k FROM a AS "left" NATURAL JOIN b NATURAL LEFT JOIN c;
SELECT join, left, using FROM t AS cross WHERE cross.left = 1;
UPSERT INTO t SELECT a.k, b.v FROM a, b WHERE a.k = b.k;
SELECT d.k FROM (SELECT k, v FROM t WHERE v > 1 ORDER BY k LIMIT 3) AS d JOIN (SELECT k FROM u) e ON d.k = e.k;
WITH c (x, y) AS (SELECT k, v FROM t), e AS (SELECT x FROM c WHERE y = 'a') SELECT * FROM e ORDER BY x DESC;
SELECT k FROM a UNION ALL SELECT k FROM b UNION SELECT 1 INTERSECT SELECT k FROM c EXCEPT SELECT 2 ORDER BY 1 LIMIT 5 OFFSET 1;
SELECT (SELECT MAX(k) FROM u), EXISTS (SELECT 1 FROM u) FROM t WHERE k IN (SELECT k FROM u) AND v NOT IN (SELECT w FROM u UNION SELECT 1) AND NOT EXISTS (SELECT 1);
SELECT COUNT(*) FROM (WITH z AS (SELECT 1 AS k) SELECT k FROM z UNION ALL SELECT 2) AS q;
SELECT sensor_id, ts, temp FROM readings WHERE sensor_id = 'sensor-0042' AND ts >= TIMESTAMP '2024-03-01 00:00:00' AND temp > 30.0 ORDER BY ts DESC LIMIT 100
;
CREATE SEQUENCE IF NOT EXISTS s START WITH -5 INCREMENT BY -1 MINVALUE -100 MAXVALUE +10 CYCLE CACHE 20;
CREATE SEQUENCE s2 START 1 INCREMENT 2;
DROP SEQUENCE IF EXISTS s;
SELECT NEXT VALUE FOR s, next  value /* c */ for s + 1, CURRENT VALUE FOR "q" FROM t;
UPSERT INTO t (k, v) VALUES (NEXT VALUE FOR s, CURRENT VALUE FOR s);
UPSERT INTO t (k, extra.note VARCHAR(10), n INTEGER ARRAY, v) VALUES (1, 'a', ARRAY[1], 'b');
SELECT note, r.n FROM t AS r (extra.note VARCHAR, n DECIMAL(5, 2)) JOIN u (x.c DATE) ON r.k = u.k;
DELETE FROM t (extra.n BIGINT) WHERE n > 1 LIMIT 3;
UPSERT INTO t (k, "f"."c" TIMESTAMP) SELECT k, c FROM s ("f".c TIMESTAMP)
