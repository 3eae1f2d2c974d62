/*
** tests/hbase/test_api_hbase.c: a Rowan database on HBase through the public C API,
** rowan_open("hbase://HOST:PORT/NAMESPACE") (include/rowan.h; the gateway from
** ROWAN_HBASE_THRIFT, default 127.0.0.1:9090; CTest label `hbase`; fails, never skips,
** without a gateway). Each test uses its own namespace and drops it at the end.
** - tables, an index and a sequence written through one connection are there for a second
**   connection opened afterwards (the catalog lives in HBase), and two connections open at
**   once see each other's committed rows and sequence values never repeat;
** - a table split into three regions (SPLIT ON) answers from all of them;
** - a skip scan by prefix (a range of the second key column under every first-column value,
**   SELECT DISTINCT of the first) probes HBase for each prefix and reads only its ranges: the
**   answers equal a RANGE_SCAN's, and EXPLAIN ANALYZE counts the prefixes and no row outside
**   the ranges, across regions and with a prefix of 0xFF bytes only (BIGINT's largest);
** - a family every row has a cell in is read in place of the key family only when the query
**   reads all its columns (caps.remote: each cell crosses the network);
** - bad input: an unreachable gateway, a wrong port, a malformed URI, a read-only open each
**   fail with the address or the wrong part named.
** `hbase_test_api --drop URI` drops URI's namespace (the shell test cleans up with it).
** Not here: the backend's operations (test_backend_hbase.c), the SQL suite
** (tests/sql through slt_runner with ROWAN_BACKEND=hbase).
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "kv/backend/hbase/backend_hbase.h"
#include "rowan.h"

static char gateway[300] = "127.0.0.1:9090";

static void uri_of(char *buf, size_t n, const char *what) {
  static int k;
  snprintf(buf, n, "hbase://%s/ta_%s_%ld_%d", gateway, what, (long)getpid(), ++k);
}

static rowan_db *open_or_fail(const char *uri) {
  rowan_db *db = NULL;
  int rc = rowan_open(uri, NULL, &db);
  if (rc != ROWAN_OK) fail_msg("rowan_open(%s): %s", uri, db ? rowan_errmsg(db) : "no handle");
  return db;
}

static void exec_ok(rowan_db *db, const char *sql) {
  if (rowan_exec(db, sql, NULL, NULL) != ROWAN_OK) fail_msg("%s: %s", sql, rowan_errmsg(db));
}

/* The single integer a query returns. */
static int64_t one_int(rowan_db *db, const char *sql) {
  rowan_stmt *st = NULL;
  if (rowan_prepare(db, sql, -1, &st, NULL) != ROWAN_OK) fail_msg("%s: %s", sql, rowan_errmsg(db));
  assert_int_equal(rowan_step(st), ROWAN_ROW);
  int64_t v = rowan_column_int64(st, 0);
  assert_int_equal(rowan_step(st), ROWAN_DONE);
  rowan_finalize(st);
  return v;
}

static void test_catalog_persists(void **state) {
  (void)state;
  char uri[400];
  uri_of(uri, sizeof uri, "cat");
  rowan_db *db = open_or_fail(uri);
  exec_ok(db, "CREATE TABLE orders (id BIGINT PRIMARY KEY, cust VARCHAR, amount INTEGER) "
              "SPLIT ON (100, 200)");
  exec_ok(db, "CREATE INDEX by_cust ON orders (cust) INCLUDE (amount)");
  exec_ok(db, "CREATE SEQUENCE s");
  char sql[200];
  int64_t sum = 0;
  for (int i = 0; i < 300; i += 7) {
    snprintf(sql, sizeof sql, "UPSERT INTO orders VALUES (%d, 'c%d', %d)", i, i % 5, i * 3);
    exec_ok(db, sql);
    sum += i * 3;
  }
  exec_ok(db, "DELETE FROM orders WHERE id = 7");
  sum -= 21;
  int64_t s1 = one_int(db, "SELECT NEXT VALUE FOR s");
  assert_int_equal(rowan_close(db), ROWAN_OK);
  /* a new connection: the catalog, the rows, the index and the sequence are in HBase */
  db = open_or_fail(uri);
  assert_int_equal(one_int(db, "SELECT SUM(amount) FROM orders"), sum);
  assert_int_equal(one_int(db, "SELECT COUNT(*) FROM orders WHERE id >= 100 AND id < 200"), 14);
  assert_int_equal(one_int(db, "SELECT COUNT(*) FROM orders WHERE cust = 'c1'"),
                   one_int(db, "SELECT /*+ NO_INDEX */ COUNT(*) FROM orders WHERE cust = 'c1'"));
  assert_int_equal(one_int(db, "SELECT COUNT(*) FROM orders WHERE id = 7"), 0);
  /* a second connection at once: rows and sequence values of one are seen by the other */
  rowan_db *db2 = open_or_fail(uri);
  exec_ok(db, "UPSERT INTO orders VALUES (1000, 'new', 1)");
  assert_int_equal(one_int(db2, "SELECT amount FROM orders WHERE id = 1000"), 1);
  int64_t a = one_int(db, "SELECT NEXT VALUE FOR s"), b = one_int(db2, "SELECT NEXT VALUE FOR s");
  if (a == b || a == s1 || b == s1)
    fail_msg("sequence values repeat: %lld, then %lld and %lld", (long long)s1, (long long)a,
             (long long)b);
  assert_int_equal(rowan_close(db2), ROWAN_OK);
  exec_ok(db, "DROP TABLE orders");
  assert_int_equal(rowan_close(db), ROWAN_OK);
  assert_int_equal(kv_backend_hbase_drop_namespace(uri), KV_OK);
}

/* EXPLAIN ANALYZE's text of sql, its rows joined by newlines. */
static void analyze(rowan_db *db, const char *sql, char *out, size_t n) {
  char q[600];
  snprintf(q, sizeof q, "EXPLAIN ANALYZE %s", sql);
  rowan_stmt *st = NULL;
  if (rowan_prepare(db, q, -1, &st, NULL) != ROWAN_OK) fail_msg("%s: %s", q, rowan_errmsg(db));
  size_t at = 0;
  out[0] = 0;
  int rc;
  while ((rc = rowan_step(st)) == ROWAN_ROW) {
    const char *line = (const char *)rowan_column_text(st, 0);
    at += (size_t)snprintf(out + at, at < n ? n - at : 0, "%s\n", line ? line : "");
  }
  assert_int_equal(rc, ROWAN_DONE);
  rowan_finalize(st);
}

static void expect_in(const char *text, const char *what) {
  if (!strstr(text, what)) fail_msg("expected \"%s\" in:\n%s", what, text);
}

static void test_skip_scan_by_prefix(void **state) {
  (void)state;
  char uri[400];
  uri_of(uri, sizeof uri, "skip");
  rowan_db *db = open_or_fail(uri);
  exec_ok(db, "CREATE TABLE ev (a BIGINT NOT NULL, b BIGINT NOT NULL, v INTEGER "
              "CONSTRAINT pk PRIMARY KEY (a, b)) SPLIT ON (3, 7)");
  /* 12 prefixes: 0..9, -1 and BIGINT's largest (encoded as eight 0xFF bytes: no successor) */
  const long long pre[12] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, -1, 9223372036854775807LL};
  char sql[300];
  exec_ok(db, "BEGIN");
  for (int i = 0; i < 12; i++)
    for (int b = 0; b < 100; b++) {
      snprintf(sql, sizeof sql, "UPSERT INTO ev VALUES (%lld, %d, %d)", pre[i], b, i * 1000 + b);
      exec_ok(db, sql);
    }
  exec_ok(db, "COMMIT");
  const char *q = "SELECT COUNT(*) FROM ev WHERE b BETWEEN 40 AND 49";
  snprintf(sql, sizeof sql, "SELECT /*+ RANGE_SCAN */ COUNT(*) FROM ev WHERE b BETWEEN 40 AND 49");
  assert_int_equal(one_int(db, q), 120);
  assert_int_equal(one_int(db, sql), 120);
  assert_int_equal(one_int(db, "SELECT SUM(v) FROM ev WHERE b BETWEEN 40 AND 49"),
                   one_int(db, "SELECT /*+ RANGE_SCAN */ SUM(v) FROM ev WHERE b BETWEEN 40 AND 49"));
  char plan[4096];
  analyze(db, q, plan, sizeof plan);
  expect_in(plan, "SKIP SCAN ON EACH");
  expect_in(plan, "prefixes=12");
  expect_in(plan, "rows examined=120 "); /* the 1,200-row table's 120 rows in range, no other */
  /* a range of the first column too: only the prefixes inside it */
  assert_int_equal(one_int(db, "SELECT COUNT(*) FROM ev WHERE a BETWEEN 2 AND 8 AND b >= 95"), 35);
  analyze(db, "SELECT COUNT(*) FROM ev WHERE a BETWEEN 2 AND 8 AND b >= 95", plan, sizeof plan);
  expect_in(plan, "prefixes=7");
  expect_in(plan, "rows examined=35 ");
  /* the first row of every prefix (a loose index scan) */
  assert_int_equal(one_int(db, "SELECT COUNT(DISTINCT a) FROM ev"), 12);
  assert_int_equal(one_int(db, "SELECT SUM(a) FROM (SELECT DISTINCT a FROM ev) t WHERE a < 100"), 44);
  analyze(db, "SELECT DISTINCT a FROM ev", plan, sizeof plan);
  expect_in(plan, "prefixes=12");
  expect_in(plan, "rows examined=12 ");
  /* a family every row has a cell in (a row cover) is read whole in place of the key
     family's marker only when the query reads all its columns: each cell crosses the
     network (the local store reads the family whole for one of three columns) */
  exec_ok(db, "CREATE TABLE w3 (k BIGINT PRIMARY KEY, a INTEGER, b INTEGER, c INTEGER)");
  exec_ok(db, "UPSERT INTO w3 VALUES (1, 1, 10, 100)");
  exec_ok(db, "UPSERT INTO w3 VALUES (2, NULL, 20, 200)");
  exec_ok(db, "UPSERT INTO w3 VALUES (3, 3, NULL, NULL)");
  assert_int_equal(one_int(db, "SELECT COUNT(*) FROM w3 WHERE k > 0"), 3);
  assert_int_equal(one_int(db, "SELECT COUNT(*) + SUM(a) FROM w3 WHERE k > 0"), 7);
  analyze(db, "SELECT COUNT(*), SUM(a) FROM w3 WHERE k > 0", plan, sizeof plan);
  expect_in(plan, "_k reads the key family: rows whose needed columns are all NULL count");
  analyze(db, "SELECT COUNT(*), SUM(a + b + c) FROM w3 WHERE k > 0", plan, sizeof plan);
  expect_in(plan, "_k not read: every row has a cell in 0");
  exec_ok(db, "DROP TABLE w3");
  exec_ok(db, "DROP TABLE ev");
  assert_int_equal(rowan_close(db), ROWAN_OK);
  assert_int_equal(kv_backend_hbase_drop_namespace(uri), KV_OK);
}

static void test_bad_input(void **state) {
  (void)state;
  static const struct { const char *uri, *says; int code; } bad[] = {
      {"hbase://127.0.0.1:1/x", "127.0.0.1:1", ROWAN_IOERR},
      {"hbase://nohost.invalid:9090/x", "nohost.invalid:9090", ROWAN_IOERR},
      {"hbase://127.0.0.1", "no HOST:PORT", ROWAN_MISUSE},
      {"hbase://127.0.0.1:99999", "1..65535", ROWAN_MISUSE},
      {"hbase://127.0.0.1:9090/no-dash", "namespace", ROWAN_MISUSE},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    rowan_db *db = NULL;
    assert_int_equal(rowan_open(bad[i].uri, NULL, &db), bad[i].code);
    assert_non_null(db);
    if (!strstr(rowan_errmsg(db), bad[i].says) || !strstr(rowan_errmsg(db), bad[i].uri))
      fail_msg("%s: \"%s\" does not say \"%s\"", bad[i].uri, rowan_errmsg(db), bad[i].says);
    assert_int_equal(rowan_exec(db, "SELECT 1", NULL, NULL), ROWAN_MISUSE);
    rowan_close(db);
  }
  rowan_options o;
  rowan_options_init(&o);
  o.read_only = 1;
  rowan_db *db = NULL;
  char uri[400];
  uri_of(uri, sizeof uri, "ro");
  assert_int_equal(rowan_open(uri, &o, &db), ROWAN_MISUSE);
  assert_non_null(strstr(rowan_errmsg(db), "read_only"));
  rowan_close(db);
}

int main(int argc, char **argv) {
  const char *e = getenv("ROWAN_HBASE_THRIFT");
  if (e && *e) snprintf(gateway, sizeof gateway, "%s", e);
  if (argc == 3 && !strcmp(argv[1], "--drop")) {
    int rc = kv_backend_hbase_drop_namespace(argv[2]);
    if (rc != KV_OK) fprintf(stderr, "hbase_test_api: %s\n", kv_errmsg());
    return rc == KV_OK ? 0 : 1;
  }
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_catalog_persists),
      cmocka_unit_test(test_skip_scan_by_prefix),
      cmocka_unit_test(test_bad_input),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
