/*
** tests/exec/test_join.c: the join operators through the engine (exec/op_join.c,
** exec/op_hashjoin.c, exec/op_nljoin.c; issue 16, first slice): the join memory bound and
** its error, the build side chosen from the estimates, EXPLAIN ANALYZE's figures per input
** and the hash table's peak memory, a WHERE term still becoming its table's key range, a
** prepared join run again with new parameter values, a join inside a transaction that sees
** the transaction's writes, and UPSERT ... SELECT from a join. Row results of the join
** forms themselves are in tests/sql/join.test.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
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
  e = explain(t, "EXPLAIN ANALYZE SELECT R.TS, S.KIND FROM READINGS R JOIN STATIONS S "
                 "ON R.STATION = S.STATION WHERE S.KIND = 'urban'");
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
      cmocka_unit_test(pushdown),
      cmocka_unit_test(prepared_rerun),
      cmocka_unit_test(transaction_and_upsert_select),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
