/*
** tests/exec/test_join.c: the join operators through the engine (exec/op_join.c,
** exec/op_hashjoin.c, exec/op_nljoin.c; issue 16, first slice): the join memory bound and
** its error, the build side chosen from the estimates, EXPLAIN ANALYZE's figures per input
** and the hash table's peak memory, a WHERE term still becoming its table's key range, a
** prepared join run again with new parameter values, a join inside a transaction that sees
** the transaction's writes, UPSERT ... SELECT from a join, and the child/parent join (the
** probe reading only the build input's key prefixes, its hint, its cap, LEFT JOIN sides). Row results of the join
** forms themselves are in tests/sql/join.test.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "test_engine_util.h"

/* READINGS: 3 stations x n hours; STATIONS: 4 stations (one with no readings). */
static tdb *sample(int n) {
  tdb *t = tdb_open();
  q(t, "CREATE TABLE READINGS (STATION VARCHAR NOT NULL, TS INTEGER NOT NULL, TEMP DOUBLE, "
       "NOTE VARCHAR, CONSTRAINT PK PRIMARY KEY (STATION, TS))");
  q(t, "CREATE TABLE STATIONS (STATION VARCHAR NOT NULL PRIMARY KEY, KIND VARCHAR)");
  q(t, "UPSERT INTO STATIONS VALUES ('A', 'urban'), ('B', 'rural'), ('C', 'urban'), "
       "('D', 'rural')");
  const char *st[3] = {"A", "B", "C"};
  char sql[512];
  for (int s = 0; s < 3; s++)
    for (int i = 0; i < n; i++) {
      snprintf(sql, sizeof sql, "UPSERT INTO READINGS VALUES ('%s', %d, %d.5, "
               "'a note long enough to take some memory in a hash table %d')", st[s], i, i % 40, i);
      q(t, sql);
    }
  q(t, "SELECT 1"); /* nothing pending */
  return t;
}

static void memory_bound(void **state) {
  (void)state;
  tdb *t = sample(400);
  const char *sql = "SELECT COUNT(*) FROM READINGS A JOIN READINGS B ON A.TS = B.TS "
                    "AND A.NOTE = B.NOTE";
  assert_string_equal(q(t, sql), "3600\n"); /* each of 1200 rows meets its TS in 3 stations */
  exec_set_join_memory(t->s, 16 * 1024);
  const char *m = qerr(t, sql, EXEC_TOOBIG);
  assert_non_null(strstr(m, "hash join's build input"));
  assert_non_null(strstr(m, "needs more than 16 KiB of memory (the join memory limit)"));
  assert_non_null(strstr(m, "joins do not spill to disk: narrow the smaller table"));
  /* the nested loop holds its inner table under the same bound */
  m = qerr(t, "SELECT COUNT(*) FROM STATIONS S CROSS JOIN READINGS R", EXEC_TOOBIG);
  assert_non_null(strstr(m, "nested loop's inner input (READINGS)"));
  /* small enough: no error */
  assert_string_equal(q(t, "SELECT COUNT(*) FROM READINGS R CROSS JOIN STATIONS S"), "4800\n");
  exec_set_join_memory(t->s, 0); /* the default again */
  assert_string_equal(q(t, sql), "3600\n");
  tdb_close(t);
}

static void build_side_and_analyze(void **state) {
  (void)state;
  tdb *t = sample(50);
  q(t, "SELECT 1");
  /* STATIONS (4 rows) is smaller than READINGS (150): it is built, on either side */
  const char *e = explain(t, "EXPLAIN SELECT R.TS, S.KIND FROM READINGS R JOIN STATIONS S "
                             "ON R.STATION = S.STATION");
  assert_non_null(strstr(e, "INNER HASH JOIN ON [R.STATION = S.STATION]"));
  assert_non_null(strstr(e, "    PROBE R (left input, estimate: 150 rows)\n"));
  assert_non_null(strstr(e, "    BUILD S (right input, estimate: 4 rows; held in a hash table)\n"));
  e = explain(t, "EXPLAIN SELECT R.TS, S.KIND FROM STATIONS S JOIN READINGS R "
                 "ON R.STATION = S.STATION");
  assert_non_null(strstr(e, "    BUILD S (left input, estimate: 4 rows; held in a hash table)\n"));
  /* actual rows per input and the hash table's memory */
  e = explain(t, "EXPLAIN ANALYZE SELECT /*+ NO_CHILD_PARENT_JOIN_OPTIMIZATION */ R.TS, "
                 "S.KIND FROM READINGS R JOIN STATIONS S ON R.STATION = S.STATION "
                 "WHERE S.KIND = 'urban'");
  assert_non_null(strstr(e, "(actual rows left=150 right=2 out=100 held=2 peak memory="));
  assert_non_null(strstr(e, "FULL SCAN OVER STATIONS  (actual rows examined=4 filtered=2 "
                            "returned=2"));
  /* a LEFT JOIN whose left input is built: the unmatched station D comes out once */
  assert_string_equal(q(t, "SELECT S.STATION, COUNT(R.TS) FROM STATIONS S LEFT JOIN READINGS R "
                           "ON R.STATION = S.STATION GROUP BY S.STATION ORDER BY 1"),
                      "A|50\nB|50\nC|50\nD|0\n");
  e = explain(t, "EXPLAIN ANALYZE SELECT S.STATION FROM STATIONS S LEFT JOIN READINGS R "
                 "ON R.STATION = S.STATION");
  assert_non_null(strstr(e, "LEFT OUTER HASH JOIN"));
  assert_non_null(strstr(e, "(actual rows left=4 right=150 out=151 held=4 "));
  tdb_close(t);
}

/* Rows examined by the leaf scan of `table` in EXPLAIN ANALYZE text e, or -1. */
static long examined(const char *e, const char *table) {
  char pat[128];
  snprintf(pat, sizeof pat, " OVER %s  (actual rows examined=", table);
  const char *p = strstr(e, pat);
  return p ? strtol(p + strlen(pat), NULL, 10) : -1;
}

/* The child/parent join: a probe keyed by the join reads only the build input's keys. */
static void child_parent(void **state) {
  (void)state;
  tdb *t = sample(50);
  const char *sql = "SELECT R.STATION, COUNT(*), SUM(R.TEMP) FROM READINGS R JOIN STATIONS S "
                    "ON R.STATION = S.STATION WHERE S.KIND = 'urban' GROUP BY R.STATION "
                    "ORDER BY 1";
  const char *off = "SELECT /*+ NO_CHILD_PARENT_JOIN_OPTIMIZATION */ R.STATION, COUNT(*), "
                    "SUM(R.TEMP) FROM READINGS R JOIN STATIONS S ON R.STATION = S.STATION "
                    "WHERE S.KIND = 'urban' GROUP BY R.STATION ORDER BY 1";
  char want[256];
  snprintf(want, sizeof want, "%s", q(t, off));
  assert_string_equal(want, "A|50|850\nC|50|850\n");
  assert_string_equal(q(t, sql), want);
  char ex[600];
  snprintf(ex, sizeof ex, "EXPLAIN %s", sql);
  const char *e = explain(t, ex);
  assert_non_null(strstr(e, "    PROBE R (left input, estimate: 150 rows)\n        DYNAMIC SKIP "
                            "SCAN ON [R.STATION] IN THE BUILD INPUT'S KEYS (child/parent "
                            "join)\n        FULL SCAN OVER READINGS"));
  /* run: the two urban stations' 100 rows are read, not the 150 */
  snprintf(ex, sizeof ex, "EXPLAIN ANALYZE %s", sql);
  e = explain(t, ex);
  assert_non_null(strstr(e, "(child/parent join)  (actual: 2 key prefixes)"));
  assert_int_equal(examined(e, "READINGS"), 100);
  assert_non_null(strstr(e, "(actual rows left=100 right=2 out=100 held=2 "));
  /* the hint turns it off, and says so */
  snprintf(ex, sizeof ex, "EXPLAIN ANALYZE %s", off);
  e = explain(t, ex);
  assert_null(strstr(e, "DYNAMIC SKIP SCAN"));
  assert_int_equal(examined(e, "READINGS"), 150);
  assert_non_null(strstr(e, "HINT: NO_CHILD_PARENT_JOIN_OPTIMIZATION applied"));
  assert_null(strstr(e, "ignored"));
  /* a build input with no row: the probe reads nothing */
  e = explain(t, "EXPLAIN ANALYZE SELECT R.TS FROM READINGS R JOIN STATIONS S "
                 "ON R.STATION = S.STATION WHERE S.KIND = 'none'");
  assert_non_null(strstr(e, "(actual: not needed: the build input held no row)"));
  assert_int_equal(examined(e, "READINGS"), 0);
  /* the left input of a LEFT JOIN keeps every row: never narrowed */
  e = explain(t, "EXPLAIN SELECT R.TS FROM READINGS R LEFT JOIN STATIONS S "
                 "ON R.STATION = S.STATION AND S.KIND = 'urban'");
  assert_null(strstr(e, "DYNAMIC SKIP SCAN"));
  /* its right input may be: station D has no readings and comes out padded */
  assert_string_equal(q(t, "SELECT S.STATION, COUNT(R.TS) FROM STATIONS S LEFT JOIN READINGS R "
                           "ON R.STATION = S.STATION WHERE S.KIND = 'rural' GROUP BY S.STATION "
                           "ORDER BY 1"),
                      "B|50\nD|0\n");
  e = explain(t, "EXPLAIN ANALYZE SELECT S.STATION, R.TS FROM STATIONS S LEFT JOIN READINGS R "
                 "ON R.STATION = S.STATION WHERE S.KIND = 'rural'");
  assert_non_null(strstr(e, "(actual: 2 key prefixes)"));
  assert_int_equal(examined(e, "READINGS"), 50);
  /* a probe whose WHERE pins the station already is left as it is */
  e = explain(t, "EXPLAIN SELECT R.TS FROM READINGS R JOIN STATIONS S "
                 "ON R.STATION = S.STATION WHERE R.STATION IN ('A', 'B')");
  assert_null(strstr(e, "DYNAMIC SKIP SCAN"));
  /* inside a transaction, its own writes are among the keys and the rows */
  q(t, "BEGIN");
  q(t, "UPSERT INTO STATIONS VALUES ('E', 'urban')");
  q(t, "UPSERT INTO READINGS VALUES ('E', 1, 2.0, 'x'), ('E', 2, 3.0, 'y')");
  assert_string_equal(q(t, sql), "A|50|850\nC|50|850\nE|2|5\n");
  q(t, "ROLLBACK");
  assert_string_equal(q(t, sql), want);
  tdb_close(t);
}

/* More distinct build keys than a skip scan takes: the probe is read whole, same answer. */
static void child_parent_too_many(void **state) {
  (void)state;
  tdb *t = tdb_open();
  q(t, "CREATE TABLE KEYS (K INTEGER NOT NULL PRIMARY KEY)");
  q(t, "CREATE TABLE BIG (K INTEGER NOT NULL, J INTEGER NOT NULL, "
       "CONSTRAINT PK PRIMARY KEY (K, J))");
  static char sql[64 * 1024];
  int nk = 50001;
  for (int table = 0; table < 2; table++)
    for (int k0 = 0; k0 < nk; k0 += 1000) {
      size_t o = (size_t)snprintf(sql, sizeof sql, "UPSERT INTO %s VALUES ",
                                  table ? "BIG" : "KEYS");
      for (int k = k0; k < k0 + 1000 && k < nk; k++)
        o += (size_t)snprintf(sql + o, sizeof sql - o, table ? "%s(%d, 1), (%d, 2)" : "%s(%d)",
                              k > k0 ? ", " : "", k, k);
      q(t, sql);
    }
  q(t, "UPSERT INTO BIG VALUES (-5, 1), (-6, 1)"); /* rows no key matches */
  const char *e = explain(t, "EXPLAIN ANALYZE SELECT COUNT(*) FROM BIG B JOIN KEYS K "
                             "ON B.K = K.K");
  assert_non_null(strstr(e, "(actual: not applied: 50001 keys, more than 50000; the whole "
                            "input was read)"));
  assert_int_equal(examined(e, "BIG"), 2 * nk + 2);
  assert_string_equal(q(t, "SELECT COUNT(*) FROM BIG B JOIN KEYS K ON B.K = K.K"), "100002\n");
  /* one key fewer: narrowed, the two rows outside the keys not read */
  q(t, "DELETE FROM KEYS WHERE K = 0");
  e = explain(t, "EXPLAIN ANALYZE SELECT COUNT(*) FROM BIG B JOIN KEYS K ON B.K = K.K");
  assert_non_null(strstr(e, "(actual: 50000 key prefixes)"));
  assert_int_equal(examined(e, "BIG"), 2 * (nk - 1));
  assert_string_equal(q(t, "SELECT COUNT(*) FROM BIG B JOIN KEYS K ON B.K = K.K"), "100000\n");
  tdb_close(t);
}

static void pushdown(void **state) {
  (void)state;
  tdb *t = sample(20);
  /* a WHERE term on one table is its key range */
  const char *e = explain(t, "EXPLAIN SELECT R.TS FROM READINGS R JOIN STATIONS S "
                             "ON R.STATION = S.STATION WHERE R.STATION = 'B' AND R.TS < 5");
  assert_non_null(strstr(e, "        RANGE SCAN OVER READINGS ['B', *] .. ['B', 5)\n"));
  assert_string_equal(q(t, "SELECT R.TS, S.KIND FROM READINGS R JOIN STATIONS S "
                           "ON R.STATION = S.STATION WHERE R.STATION = 'B' AND R.TS < 2 "
                           "ORDER BY 1"),
                      "0|rural\n1|rural\n");
  /* a WHERE term on a LEFT JOIN's right table is checked after the join (it must see the
     padded NULLs); the same term in the ON goes into that table's scan */
  e = explain(t, "EXPLAIN SELECT S.STATION FROM STATIONS S LEFT JOIN READINGS R "
                 "ON R.STATION = S.STATION WHERE R.TS IS NULL");
  assert_non_null(strstr(e, "    CLIENT FILTER BY R.TS IS NULL\n"));
  assert_string_equal(q(t, "SELECT S.STATION FROM STATIONS S LEFT JOIN READINGS R "
                           "ON R.STATION = S.STATION WHERE R.TS IS NULL"), "D\n");
  e = explain(t, "EXPLAIN SELECT S.STATION FROM STATIONS S LEFT JOIN READINGS R "
                 "ON R.STATION = S.STATION AND R.STATION = 'A'");
  assert_non_null(strstr(e, "RANGE SCAN OVER READINGS ['A', *] .. ['A', *]"));
  assert_null(strstr(e, "CLIENT FILTER BY"));
  /* no equality between the inputs: a nested loop */
  e = explain(t, "EXPLAIN SELECT COUNT(*) FROM STATIONS A JOIN STATIONS B ON A.STATION < "
                 "B.STATION");
  assert_non_null(strstr(e, "INNER NESTED LOOP JOIN ON [A.STATION < B.STATION]"));
  assert_string_equal(q(t, "SELECT COUNT(*) FROM STATIONS A JOIN STATIONS B ON A.STATION < "
                           "B.STATION"), "6\n");
  tdb_close(t);
}

static void prepared_rerun(void **state) {
  (void)state;
  tdb *t = sample(10);
  exec_stmt *st = NULL;
  const char *sql = "SELECT COUNT(*) FROM READINGS R JOIN STATIONS S ON R.STATION = S.STATION "
                    "WHERE S.KIND = ? AND R.TS < ?";
  assert_int_equal(exec_prepare(t->s, sql, strlen(sql), &st, NULL, &t->err), EXEC_OK);
  const char *kinds[3] = {"urban", "rural", "urban"};
  const int64_t ts[3] = {5, 10, 5};
  const int64_t want[3] = {10, 10, 10};
  for (int run = 0; run < 3; run++) {
    cat_value k = cat_v_str(CAT_T_VARCHAR, kinds[run], strlen(kinds[run]));
    cat_value n = cat_v_int(CAT_T_INTEGER, ts[run]);
    assert_int_equal(exec_bind(st, 1, &k, &t->err), 0);
    assert_int_equal(exec_bind(st, 2, &n, &t->err), 0);
    assert_int_equal(exec_step(st, &t->err), EXEC_ROW);
    assert_int_equal(exec_column_value(st, 0)->u.i, want[run]);
    assert_int_equal(exec_step(st, &t->err), EXEC_DONE);
    exec_reset(st);
  }
  exec_finalize(st);
  tdb_close(t);
}

static void transaction_and_upsert_select(void **state) {
  (void)state;
  tdb *t = sample(3);
  q(t, "BEGIN");
  q(t, "UPSERT INTO STATIONS VALUES ('E', 'urban')");
  q(t, "UPSERT INTO READINGS VALUES ('E', 7, 1.5, NULL)");
  assert_string_equal(q(t, "SELECT R.STATION, R.TS, S.KIND FROM READINGS R JOIN STATIONS S "
                           "ON R.STATION = S.STATION WHERE R.TEMP < 1 OR R.STATION = 'E' "
                           "ORDER BY 1, 2"),
                      "A|0|urban\nB|0|rural\nC|0|urban\nE|7|urban\n");
  q(t, "ROLLBACK");
  assert_string_equal(q(t, "SELECT COUNT(*) FROM READINGS R JOIN STATIONS S "
                           "ON R.STATION = S.STATION"), "9\n");
  q(t, "CREATE TABLE SUMMARY (KIND VARCHAR NOT NULL PRIMARY KEY, N BIGINT)");
  q(t, "UPSERT INTO SUMMARY SELECT S.KIND, COUNT(*) FROM READINGS R JOIN STATIONS S "
       "ON R.STATION = S.STATION GROUP BY S.KIND");
  assert_string_equal(q(t, "SELECT * FROM SUMMARY"), "rural|3\nurban|6\n");
  tdb_close(t);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(memory_bound),
      cmocka_unit_test(build_side_and_analyze),
      cmocka_unit_test(child_parent),
      cmocka_unit_test(child_parent_too_many),
      cmocka_unit_test(pushdown),
      cmocka_unit_test(prepared_rerun),
      cmocka_unit_test(transaction_and_upsert_select),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
