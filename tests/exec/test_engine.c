/*
** tests/exec/test_engine.c: the engine end to end over the in-memory store: CREATE TABLE,
** UPSERT VALUES, SELECT with WHERE (key and non-key), expressions, NULL rules, ORDER BY,
** LIMIT/OFFSET, DISTINCT, GROUP BY / HAVING / aggregates, parameters, statement life cycle
** (reset, re-bind after DDL), result column names and types.
*/
#include "test_engine_util.h"

static void sensors(tdb *t) {
  q(t, "CREATE TABLE S (ID VARCHAR NOT NULL, TS INTEGER NOT NULL, TEMP DOUBLE, "
       "M.CITY VARCHAR CONSTRAINT PK PRIMARY KEY (ID, TS DESC))");
  q(t, "UPSERT INTO S VALUES ('a', 1, 10.5, 'X'), ('a', 2, 31.0, 'X'), ('a', 3, NULL, 'X'),"
       " ('b', 1, 40.0, NULL), ('b', 2, -3.5, 'Y'), ('c', 5, NULL, NULL)");
}

static void select_basic(void **state) {
  (void)state;
  tdb *t = tdb_open();
  sensors(t);
  /* key order: ID ascending, TS descending */
  assert_string_equal(q(t, "SELECT ID, TS FROM S"), "a|3\na|2\na|1\nb|2\nb|1\nc|5\n");
  assert_string_equal(q(t, "SELECT ID, TS, TEMP FROM S WHERE TEMP > 30"),
                      "a|2|31\nb|1|40\n");
  assert_string_equal(q(t, "SELECT TS FROM S WHERE ID = 'b'"), "2\n1\n");
  assert_string_equal(q(t, "SELECT ID, TS FROM S WHERE TEMP IS NULL"), "a|3\nc|5\n");
  assert_string_equal(q(t, "SELECT COUNT(*) FROM S"), "6\n");
  assert_string_equal(q(t, "SELECT COUNT(TEMP), COUNT(CITY) FROM S"), "4|4\n");
  assert_string_equal(q(t, "SELECT TS * 2 + 1 FROM S WHERE ID = 'c'"), "11\n");
  assert_string_equal(q(t, "SELECT 1 + 2, 'x' || 'y'"), "3|xy\n");
  tdb_close(t);
}

static void nulls_and_logic(void **state) {
  (void)state;
  tdb *t = tdb_open();
  sensors(t);
  /* NULL never equals; NOT (NULL) stays unknown */
  assert_string_equal(q(t, "SELECT COUNT(*) FROM S WHERE TEMP <> 10.5"), "3\n");
  assert_string_equal(q(t, "SELECT COUNT(*) FROM S WHERE NOT (TEMP > 0)"), "1\n");
  assert_string_equal(q(t, "SELECT COUNT(*) FROM S WHERE TEMP > 0 OR CITY = 'X'"), "4\n");
  assert_string_equal(q(t, "SELECT COUNT(*) FROM S WHERE TEMP IN (10.5, NULL)"), "1\n");
  assert_string_equal(q(t, "SELECT COUNT(*) FROM S WHERE TEMP NOT IN (10.5, NULL)"), "0\n");
  assert_string_equal(q(t, "SELECT COUNT(*) FROM S WHERE TEMP BETWEEN 0 AND 35"), "2\n");
  assert_string_equal(q(t, "SELECT ID FROM S WHERE CITY LIKE 'Y%'"), "b\n");
  assert_string_equal(q(t, "SELECT CASE WHEN TEMP > 30 THEN 'hot' WHEN TEMP IS NULL THEN "
                           "'?' ELSE 'ok' END FROM S WHERE ID = 'a'"),
                      "?\nhot\nok\n");
  assert_string_equal(q(t, "SELECT COALESCE(CITY, 'none') FROM S WHERE ID = 'c'"), "none\n");
  tdb_close(t);
}

static void order_limit_distinct(void **state) {
  (void)state;
  tdb *t = tdb_open();
  sensors(t);
  assert_string_equal(q(t, "SELECT ID, TEMP FROM S WHERE TEMP IS NOT NULL ORDER BY TEMP DESC"),
                      "b|40\na|31\na|10.5\nb|-3.5\n");
  /* NULLs first in ascending order by default, last with NULLS LAST */
  assert_string_equal(q(t, "SELECT TEMP FROM S ORDER BY TEMP LIMIT 3"), "NULL\nNULL\n-3.5\n");
  assert_string_equal(q(t, "SELECT TEMP FROM S ORDER BY TEMP NULLS LAST LIMIT 2"), "-3.5\n10.5\n");
  assert_string_equal(q(t, "SELECT ID, TS FROM S ORDER BY ID DESC, TS LIMIT 2 OFFSET 1"),
                      "b|1\nb|2\n");
  assert_string_equal(q(t, "SELECT ID, TS FROM S LIMIT 2 OFFSET 3"), "b|2\nb|1\n");
  assert_string_equal(q(t, "SELECT DISTINCT ID FROM S"), "a\nb\nc\n");
  assert_string_equal(q(t, "SELECT DISTINCT CITY FROM S ORDER BY 1"), "NULL\nX\nY\n");
  assert_string_equal(q(t, "SELECT ID AS K, TS FROM S ORDER BY K DESC, TS DESC LIMIT 1"), "c|5\n");
  assert_string_equal(q(t, "SELECT ID FROM S LIMIT 0"), "");
  tdb_close(t);
}

static void aggregates(void **state) {
  (void)state;
  tdb *t = tdb_open();
  sensors(t);
  assert_string_equal(q(t, "SELECT ID, COUNT(*), MAX(TEMP), MIN(TS) FROM S GROUP BY ID"),
                      "a|3|31|1\nb|2|40|1\nc|1|NULL|5\n");
  assert_string_equal(q(t, "SELECT CITY, COUNT(*) FROM S GROUP BY CITY ORDER BY CITY"),
                      "NULL|2\nX|3\nY|1\n");
  assert_string_equal(q(t, "SELECT ID, SUM(TS) FROM S GROUP BY ID HAVING SUM(TS) > 3 "
                           "ORDER BY 2 DESC"),
                      "a|6\nc|5\n");
  assert_string_equal(q(t, "SELECT COUNT(DISTINCT CITY), COUNT(DISTINCT ID) FROM S"), "2|3\n");
  assert_string_equal(q(t, "SELECT SUM(TEMP) FROM S WHERE ID = 'zz'"), "NULL\n");
  assert_string_equal(q(t, "SELECT COUNT(*) FROM S WHERE ID = 'zz'"), "0\n");
  assert_string_equal(q(t, "SELECT ID, COUNT(*) + 1 FROM S GROUP BY ID ORDER BY COUNT(*), ID"),
                      "c|2\nb|3\na|4\n");
  qerr(t, "SELECT ID, TS FROM S GROUP BY ID", EXEC_ERROR);
  qerr(t, "SELECT ID FROM S WHERE COUNT(*) > 1", EXEC_ERROR);
  qerr(t, "SELECT SUM(COUNT(*)) FROM S", EXEC_ERROR);
  tdb_close(t);
}

static void upsert_semantics(void **state) {
  (void)state;
  tdb *t = tdb_open();
  sensors(t);
  /* named columns set, others kept */
  q(t, "UPSERT INTO S (ID, TS, TEMP) VALUES ('a', 1, 11.0)");
  assert_string_equal(q(t, "SELECT TEMP, CITY FROM S WHERE ID = 'a' AND TS = 1"), "11|X\n");
  /* NULL deletes the cell; the row stays */
  q(t, "UPSERT INTO S (ID, TS, CITY) VALUES ('a', 1, NULL)");
  assert_string_equal(q(t, "SELECT TEMP, CITY FROM S WHERE ID = 'a' AND TS = 1"), "11|NULL\n");
  q(t, "UPSERT INTO S (ID, TS, TEMP) VALUES ('a', 1, NULL)");
  assert_string_equal(q(t, "SELECT ID, TEMP, CITY FROM S WHERE ID = 'a' AND TS = 1"),
                      "a|NULL|NULL\n");
  assert_string_equal(q(t, "SELECT COUNT(*) FROM S"), "6\n");
  /* constraint errors name the column */
  const char *m = qerr(t, "UPSERT INTO S (ID, TEMP) VALUES ('q', 1.0)", EXEC_CONSTRAINT);
  assert_non_null(strstr(m, "TS"));
  m = qerr(t, "UPSERT INTO S (ID, TS) VALUES (NULL, 1)", EXEC_CONSTRAINT);
  assert_non_null(strstr(m, "ID"));
  assert_int_equal(exec_changes(t->s), 1);
  q(t, "UPSERT INTO S (ID, TS) VALUES ('n1', 1), ('n2', 2)");
  assert_int_equal(exec_changes(t->s), 2);
  assert_string_equal(q(t, "SELECT COUNT(*) FROM S"), "8\n");
  tdb_close(t);
}

static void parameters(void **state) {
  (void)state;
  tdb *t = tdb_open();
  sensors(t);
  cat_value p[2] = {cat_v_str(CAT_T_VARCHAR, "a", 1), cat_v_int(CAT_T_BIGINT, 2)};
  assert_int_equal(tdb_runp(t, "SELECT TS FROM S WHERE ID = ? AND TS >= ?", 2, p), EXEC_DONE);
  assert_string_equal(t->out, "3\n2\n");
  assert_string_equal(t->kind, "RANGE SCAN");
  cat_value u[3] = {cat_v_str(CAT_T_VARCHAR, "p", 1), cat_v_int(CAT_T_BIGINT, 9),
                    cat_v_double(1.25)};
  assert_int_equal(tdb_runp(t, "UPSERT INTO S (ID, TS, TEMP) VALUES (?, ?, ?)", 3, u), EXEC_DONE);
  assert_string_equal(q(t, "SELECT TEMP FROM S WHERE ID = 'p'"), "1.25\n");
  /* reset and run again with new bindings */
  exec_stmt *st;
  assert_int_equal(exec_prepare(t->s, "SELECT COUNT(*) FROM S WHERE ID = ?", 35, &st, NULL,
                                &t->err), EXEC_OK);
  assert_int_equal(exec_param_count(st), 1);
  const char *ids[] = {"a", "b", "zz"};
  const int64_t want[] = {3, 2, 0};
  for (int i = 0; i < 3; i++) {
    cat_value v = cat_v_str(CAT_T_VARCHAR, ids[i], strlen(ids[i]));
    assert_int_equal(exec_bind(st, 1, &v, &t->err), EXEC_OK);
    assert_int_equal(exec_step(st, &t->err), EXEC_ROW);
    assert_int_equal(exec_column_value(st, 0)->u.i, want[i]);
    assert_int_equal(exec_step(st, &t->err), EXEC_DONE);
    assert_int_equal(exec_reset(st), EXEC_OK);
  }
  assert_int_equal(exec_bind(st, 2, &p[0], &t->err), EXEC_RANGE);
  exec_finalize(st);
  tdb_close(t);
}

static void columns_and_lifecycle(void **state) {
  (void)state;
  tdb *t = tdb_open();
  sensors(t);
  exec_stmt *st;
  const char *sql = "SELECT ID, TEMP * 2 AS T2, COUNT(*) FROM S GROUP BY ID, TEMP";
  assert_int_equal(exec_prepare(t->s, sql, strlen(sql), &st, NULL, &t->err), EXEC_OK);
  assert_int_equal(exec_column_count(st), 3);
  assert_string_equal(exec_column_name(st, 0), "ID");
  assert_string_equal(exec_column_name(st, 1), "T2");
  assert_int_equal(exec_column_type(st, 1)->id, CAT_T_DOUBLE);
  assert_int_equal(exec_column_type(st, 2)->id, CAT_T_BIGINT);
  exec_finalize(st);
  /* a statement prepared before DROP TABLE fails at its step, cleanly */
  sql = "SELECT COUNT(*) FROM S";
  assert_int_equal(exec_prepare(t->s, sql, strlen(sql), &st, NULL, &t->err), EXEC_OK);
  q(t, "DROP TABLE S");
  assert_int_equal(exec_step(st, &t->err), EXEC_ERROR);
  assert_non_null(strstr(t->err.msg, "unknown table \"S\""));
  assert_int_equal(exec_session_close(t->s), EXEC_MISUSE);
  exec_finalize(st);
  /* several statements in one text, and an empty one */
  const char *tail;
  sql = "SELECT 1; SELECT 2";
  assert_int_equal(exec_prepare(t->s, sql, strlen(sql), &st, &tail, &t->err), EXEC_OK);
  assert_string_equal(tail, " SELECT 2");
  exec_finalize(st);
  assert_int_equal(exec_prepare(t->s, "  ;", 3, &st, NULL, &t->err), EXEC_OK);
  assert_null(st);
  assert_int_equal(tdb_run(t, "SELEC 1"), EXEC_SYNTAX);
  tdb_close(t);
}

/* Columns of one family read through a qualifier projection: rows are neither lost nor
** invented. */
static void qualifier_projection(void **state) {
  (void)state;
  tdb *t = tdb_open();
  q(t, "CREATE TABLE Q (K INTEGER NOT NULL PRIMARY KEY, X INTEGER, Y INTEGER)");
  q(t, "UPSERT INTO Q VALUES (1, NULL, 5), (2, 3, NULL), (3, NULL, NULL), (4, 7, 8)");
  for (int pass = 0; pass < 2; pass++) {
    assert_string_equal(q(t, "SELECT K, X FROM Q"), "1|NULL\n2|3\n3|NULL\n4|7\n");
    assert_string_equal(q(t, "SELECT K FROM Q WHERE X IS NULL"), "1\n3\n");
    assert_string_equal(q(t, "SELECT COUNT(X), COUNT(Y), COUNT(*) FROM Q"), "2|2|4\n");
    assert_string_equal(q(t, "SELECT K FROM Q WHERE X > 0"), "2\n4\n");
    assert_string_equal(q(t, "SELECT K FROM Q WHERE Y > 0 AND X IS NULL"), "1\n");
    assert_int_equal(kv_flush(t->db, NULL), KV_OK);
  }
  tdb_close(t);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(select_basic),       cmocka_unit_test(nulls_and_logic),
      cmocka_unit_test(order_limit_distinct), cmocka_unit_test(aggregates),
      cmocka_unit_test(upsert_semantics),   cmocka_unit_test(parameters),
      cmocka_unit_test(columns_and_lifecycle), cmocka_unit_test(qualifier_projection),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
