/*
** tests/exec/test_subquery.c: subqueries and set operations through the engine (issue 16):
** the join memory bound on the rows a UNION / INTERSECT holds (and its error), the bound on
** an IN / EXISTS subquery's semi or anti join (it does not spill; its error says so), a prepared
** statement whose scalar subquery sees the data of each run (no stale value kept with the
** plan), a subquery inside a transaction that sees the transaction's writes, a scalar
** subquery with two rows failing at run time and the same statement working once the data
** allows it, EXPLAIN ANALYZE's actual rows of a semi join and a set operation, and
** correlated subqueries run per outer row (parameters, transactions, the reuse). Row
** results of the forms themselves are in tests/sql/subquery.test, setop.test and cte.test.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "test_engine_util.h"

/* READINGS: 3 stations x n hours with a long NOTE; STATIONS: 4 stations. */
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
               "'a note long enough to take some memory in a hash set %d')", st[s], i, i % 40, i);
      q(t, sql);
    }
  return t;
}

/* UNION, INTERSECT and EXCEPT hold distinct rows: past the join memory they cut every row
** into partitions on disk (exec/op_setop.c), a partition whose rows alone pass the bound
** again by the next bits of the hash, and give the answers of the operation in memory. */
static void setop_spills(void **state) {
  (void)state;
  tdb *t = sample(300);
  const char *sqls[4] = {
      "SELECT COUNT(*), MIN(X.N), MAX(X.N) FROM (SELECT NOTE AS N FROM READINGS UNION SELECT "
      "STATION FROM STATIONS) X",
      "SELECT COUNT(*), MIN(X.N) FROM (SELECT NOTE AS N FROM READINGS WHERE TS < 200 INTERSECT "
      "SELECT NOTE FROM READINGS WHERE TS >= 100) X",
      "SELECT COUNT(*), MAX(X.N) FROM (SELECT NOTE AS N FROM READINGS EXCEPT SELECT NOTE FROM "
      "READINGS WHERE TS >= 100) X",
      "SELECT COUNT(*) FROM (SELECT STATION, TS FROM READINGS UNION SELECT STATION, TS + 150 "
      "FROM READINGS) X"};
  char want[4][160];
  for (int i = 0; i < 4; i++) snprintf(want[i], sizeof want[i], "%s", q(t, sqls[i]));
  /* worked out: 300 distinct notes (every station has notes 0..299) and 4 stations; notes
     100..199; notes 0..99; 3 stations x 450 distinct times */
  assert_non_null(strstr(want[0], "304|"));
  assert_non_null(strstr(want[1], "100|"));
  assert_non_null(strstr(want[2], "100|"));
  assert_string_equal(want[3], "1350\n");
  exec_set_join_memory(t->s, 16 * 1024);
  for (int i = 0; i < 4; i++) {
    assert_string_equal(q(t, sqls[i]), want[i]);
    char ex[512];
    snprintf(ex, sizeof ex, "EXPLAIN ANALYZE %s", sqls[i]);
    assert_non_null(strstr(q(t, ex), " spilled="));
  }
  exec_set_join_memory(t->s, 300); /* less than a partition's rows: partitions cut again */
  for (int i = 0; i < 4; i++) assert_string_equal(q(t, sqls[i]), want[i]);
  /* UNION ALL holds nothing: no bound */
  assert_string_equal(q(t, "SELECT COUNT(*) FROM (SELECT NOTE FROM READINGS UNION ALL SELECT "
                           "NOTE FROM READINGS) X"), "1800\n");
  exec_set_join_memory(t->s, 0);
  tdb_close(t);
}

/* IN / EXISTS subqueries hold their keys in a semi or anti join: past the join memory it
** partitions both inputs to disk (exec/op_spill.c), and the answers are those of the join in
** memory: the semi join passes each left row once across batches, the anti join only the
** rows no batch matched, NOT IN none when the subquery has a NULL, NOT EXISTS NULL keys. */
static void semi_join_spills(void **state) {
  (void)state;
  tdb *t = sample(300);
  q(t, "UPSERT INTO STATIONS VALUES ('N1', 'n'), ('N2', 'n')");
  q(t, "UPSERT INTO READINGS VALUES ('N1', 1, 1.0, 'N1'), ('N1', 2, 2.0, 'N1'), "
       "('X', 1, 1.0, NULL)");
  const char *sqls[5] = {
      "SELECT COUNT(*) FROM STATIONS WHERE STATION IN (SELECT NOTE FROM READINGS)",
      "SELECT COUNT(*) FROM STATIONS WHERE STATION NOT IN (SELECT NOTE FROM READINGS)",
      "SELECT COUNT(*) FROM STATIONS WHERE STATION NOT IN (SELECT NOTE FROM READINGS WHERE "
      "NOTE IS NOT NULL)",
      "SELECT COUNT(*) FROM STATIONS S WHERE EXISTS (SELECT 1 FROM READINGS R WHERE R.NOTE = "
      "S.STATION)",
      "SELECT COUNT(*) FROM STATIONS S WHERE NOT EXISTS (SELECT 1 FROM READINGS R WHERE R.NOTE "
      "= S.STATION)"};
  char want[5][32];
  for (int i = 0; i < 5; i++) snprintf(want[i], sizeof want[i], "%s", q(t, sqls[i]));
  /* in memory: N1 is the one station among the notes (twice); a NULL note makes NOT IN
     unknown for every station; six stations in all */
  assert_string_equal(want[0], "1\n");
  assert_string_equal(want[1], "0\n");
  assert_string_equal(want[2], "5\n");
  assert_string_equal(want[3], "1\n");
  assert_string_equal(want[4], "5\n");
  exec_set_join_memory(t->s, 1024); /* a few keys: partitions and batches */
  for (int i = 0; i < 5; i++) {
    assert_string_equal(q(t, sqls[i]), want[i]);
    char ex[512];
    snprintf(ex, sizeof ex, "EXPLAIN ANALYZE %s", sqls[i]);
    assert_non_null(strstr(q(t, ex), " spilled="));
  }
  exec_set_join_memory(t->s, 0);
  tdb_close(t);
}

/* x IN (SELECT ...) inside an expression holds the subquery's values within the join memory:
** past it the error says so and points at the semi join; under the default bound it runs. */
static void in_values_memory_bound(void **state) {
  (void)state;
  tdb *t = sample(300);
  const char *sql = "SELECT COUNT(*) FROM STATIONS WHERE STATION = 'A' OR STATION IN (SELECT "
                    "NOTE FROM READINGS)";
  exec_set_join_memory(t->s, 16 * 1024);
  const char *m = qerr(t, sql, EXEC_TOOBIG);
  assert_non_null(strstr(m, "the values of IN (SELECT ...)"));
  assert_non_null(strstr(m, "need more than 16 KiB of memory (the join memory limit)"));
  exec_set_join_memory(t->s, 0);
  assert_string_equal(q(t, sql), "1\n"); /* station A; no note is a station's name */
  tdb_close(t);
}

static void prepared_rerun_sees_new_data(void **state) {
  (void)state;
  tdb *t = sample(5);
  exec_stmt *st = NULL;
  const char *sql = "SELECT COUNT(*) FROM READINGS WHERE TS = (SELECT MAX(TS) FROM READINGS "
                    "WHERE STATION = ?)";
  assert_int_equal(exec_prepare(t->s, sql, strlen(sql), &st, NULL, &t->err), EXEC_OK);
  cat_value a = cat_v_str(CAT_T_VARCHAR, "A", 1);
  const int64_t want[3] = {3, 1, 0};
  for (int run = 0; run < 3; run++) {
    assert_int_equal(exec_bind(st, 1, &a, &t->err), 0);
    assert_int_equal(exec_step(st, &t->err), EXEC_ROW);
    assert_int_equal(exec_column_value(st, 0)->u.i, want[run]);
    assert_int_equal(exec_step(st, &t->err), EXEC_DONE);
    exec_reset(st);
    if (run == 0) q(t, "UPSERT INTO READINGS VALUES ('A', 9, 1.5, NULL)"); /* MAX(TS) 9 */
    if (run == 1) q(t, "DELETE FROM READINGS WHERE STATION = 'A'");      /* no row: NULL */
  }
  exec_finalize(st);
  tdb_close(t);
}

static void transaction_and_errors(void **state) {
  (void)state;
  tdb *t = sample(2);
  q(t, "BEGIN");
  q(t, "UPSERT INTO STATIONS VALUES ('E', 'urban')");
  q(t, "UPSERT INTO READINGS VALUES ('E', 7, 1.5, NULL)");
  assert_string_equal(q(t, "SELECT STATION, TS FROM READINGS WHERE STATION IN (SELECT STATION "
                           "FROM STATIONS WHERE KIND = 'urban') AND TS > 0 ORDER BY 1"),
                      "A|1\nC|1\nE|7\n");
  assert_string_equal(q(t, "SELECT (SELECT COUNT(*) FROM STATIONS), EXISTS (SELECT 1 FROM "
                           "STATIONS WHERE STATION = 'E')"), "5|TRUE\n");
  q(t, "ROLLBACK");
  const char *m = qerr(t, "SELECT STATION FROM READINGS WHERE TS = (SELECT TS FROM READINGS "
                          "WHERE STATION = 'A')", EXEC_ERROR);
  assert_non_null(strstr(m, "the scalar subquery at line 1, column 41 returned more than one "
                            "row"));
  q(t, "DELETE FROM READINGS WHERE STATION = 'A' AND TS = 1");
  assert_string_equal(q(t, "SELECT STATION FROM READINGS WHERE TS = (SELECT TS FROM READINGS "
                           "WHERE STATION = 'A') ORDER BY 1"), "A\nB\nC\n");
  tdb_close(t);
}

static void analyze_figures(void **state) {
  (void)state;
  tdb *t = sample(10);
  /* IN on READINGS' key: the 2 urban stations' values are its key range, 20 rows read */
  const char *e = explain(t, "EXPLAIN ANALYZE SELECT STATION, TS FROM READINGS WHERE STATION "
                             "IN (SELECT STATION FROM STATIONS WHERE KIND = 'urban')");
  assert_non_null(strstr(e, "SKIP SCAN ON 2 RANGES OVER READINGS "));
  assert_non_null(strstr(e, "(actual rows examined=20 filtered=0 returned=20 "));
  /* the same as a correlated EXISTS: a semi join holding the 2 urban stations; READINGS is
     keyed by STATION, so only their 20 readings are read (a child/parent join), all pass */
  e = explain(t, "EXPLAIN ANALYZE SELECT STATION, TS FROM READINGS R WHERE EXISTS (SELECT 1 "
                 "FROM STATIONS S WHERE S.STATION = R.STATION AND KIND = 'urban')");
  assert_non_null(strstr(e, "SEMI HASH JOIN ON [STATION = (subquery 1).STATION]"));
  assert_non_null(strstr(e, "(actual rows left=20 right=2 out=20 held=2 peak memory="));
  /* without the child/parent join all 30 readings probe and the same 20 pass */
  e = explain(t, "EXPLAIN ANALYZE SELECT /*+ NO_CHILD_PARENT_JOIN_OPTIMIZATION */ STATION, TS "
                 "FROM READINGS WHERE STATION IN (SELECT STATION FROM STATIONS WHERE "
                 "KIND = 'urban')");
  assert_non_null(strstr(e, "(actual rows left=30 right=2 out=20 held=2 peak memory="));
  e = explain(t, "EXPLAIN ANALYZE SELECT STATION FROM READINGS EXCEPT SELECT STATION FROM "
                 "STATIONS WHERE KIND = 'rural'");
  assert_non_null(strstr(e, "EXCEPT  (estimate: "));
  /* 30 left rows, 2 right rows; A and C pass once each; 2 right + 2 passed rows held */
  assert_non_null(strstr(e, "(actual rows left=30 right=2 out=2 held=4 peak memory="));
  tdb_close(t);
}

/* Correlated subqueries the decorrelation does not take run once per outer row
** (exec/engine_apply.c): with the statement's parameters inside, across runs of a prepared
** statement; seeing a transaction's writes; reusing the answer while the outer values stay
** (EXPLAIN ANALYZE's runs and reuses). */
static void correlated_per_row(void **state) {
  (void)state;
  tdb *t = sample(300);
  exec_stmt *st = NULL;
  const char *sql = "SELECT S.STATION, (SELECT COUNT(*) FROM READINGS R WHERE R.STATION = "
                    "S.STATION AND R.TS < ? LIMIT 5) FROM STATIONS S ORDER BY 1";
  assert_int_equal(exec_prepare(t->s, sql, strlen(sql), &st, NULL, &t->err), EXEC_OK);
  const int64_t lim[2] = {3, 1};
  for (int run = 0; run < 2; run++) {
    cat_value v = cat_v_int(CAT_T_INTEGER, lim[run]);
    assert_int_equal(exec_bind(st, 1, &v, &t->err), 0);
    for (int r = 0; r < 4; r++) { /* A, B, C have readings 0..299; D none */
      assert_int_equal(exec_step(st, &t->err), EXEC_ROW);
      assert_int_equal(exec_column_value(st, 1)->u.i, r < 3 ? lim[run] : 0);
    }
    assert_int_equal(exec_step(st, &t->err), EXEC_DONE);
    exec_reset(st);
  }
  exec_finalize(st);
  q(t, "BEGIN");
  q(t, "UPSERT INTO READINGS VALUES ('D', 0, 1.5, NULL)");
  assert_string_equal(q(t, "SELECT S.STATION FROM STATIONS S WHERE EXISTS (SELECT 1 FROM "
                           "READINGS R WHERE R.STATION >= S.STATION AND R.STATION < 'E' "
                           "AND R.TS < 1 AND R.STATION NOT IN ('A', 'B', 'C')) ORDER BY 1"),
                      "A\nB\nC\nD\n");
  q(t, "ROLLBACK");
  /* per station X: stations after it x 100 is the bound; A: 3 -> none of 0..299 over 300,
     B: 2 -> 201..299 (99 rows), C: 1 -> 101..299 (199 rows) */
  const char *cnt = "SELECT COUNT(*) FROM READINGS R WHERE R.TS > (SELECT COUNT(*) FROM "
                    "STATIONS X WHERE X.STATION > R.STATION) * 100";
  assert_string_equal(q(t, cnt), "298\n");
  char ex[400];
  snprintf(ex, sizeof ex, "EXPLAIN ANALYZE %s", cnt);
  const char *e = explain(t, ex);
  /* READINGS arrives in station order: one run per station, the other rows reuse it */
  assert_non_null(strstr(e, "CORRELATED SUBQUERY 1 (value; run per outer row with R.STATION "
                            "bound, again only when they change; planned at each run)  "
                            "(actual runs=3 reused=897)"));
  tdb_close(t);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(setop_spills),
      cmocka_unit_test(semi_join_spills),
      cmocka_unit_test(in_values_memory_bound),
      cmocka_unit_test(prepared_rerun_sees_new_data),
      cmocka_unit_test(transaction_and_errors),
      cmocka_unit_test(analyze_figures),
      cmocka_unit_test(correlated_per_row),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
