/*
** tests/api/test_regress_schema_change.c: a statement prepared before its table was dropped
** and created again with other columns. The engine binds it again at its next run, and the
** API's result shape must follow: rowan_column_count, names, declared types and values are
** those of the new table (the bug: the count and declared types of the old table were kept,
** so `SELECT *` showed the old number of columns, NULLs past the new ones, and stale types).
** Not here: the engine's own re-binding (tests/exec), DDL itself (tests/exec/test_ddl.c).
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "kv/env/env_mem.h"
#include "rowan.h"
#include "tu_api.h"

typedef struct fixture {
  kv_env *env;  /* in-memory file system */
  rowan_db *db; /* connection on "/db" */
} fixture;

static int setup(void **state) {
  fixture *f = calloc(1, sizeof *f);
  f->env = kv_env_mem_new(0);
  rowan_options o;
  rowan_options_init(&o);
  o.kv_env = f->env;
  assert_int_equal(rowan_open("/db", &o, &f->db), ROWAN_OK);
  *state = f;
  return 0;
}

static int teardown(void **state) {
  fixture *f = *state;
  assert_int_equal(rowan_close(f->db), ROWAN_OK);
  kv_env_free(f->env);
  free(f);
  return 0;
}

/* Fewer columns after the change: the count shrinks and the declared type is the new one. */
static void test_select_star_after_recreate_with_fewer_columns(void **state) {
  fixture *f = *state;
  exec_ok(f->db, "CREATE TABLE T (K INTEGER PRIMARY KEY, V VARCHAR, W DOUBLE);"
                 "UPSERT INTO T VALUES (1, 'a', 1.5)");
  rowan_stmt *st = NULL;
  assert_int_equal(rowan_prepare(f->db, "SELECT * FROM T", -1, &st, NULL), ROWAN_OK);
  assert_int_equal(rowan_column_count(st), 3);
  assert_string_equal(rowan_column_decltype(st, 0), "INTEGER");
  assert_int_equal(rowan_step(st), ROWAN_ROW);
  assert_string_equal(rowan_column_text(st, 2), "1.5");
  assert_int_equal(rowan_step(st), ROWAN_DONE);

  exec_ok(f->db, "DROP TABLE T; CREATE TABLE T (K VARCHAR PRIMARY KEY);"
                 "UPSERT INTO T VALUES ('x')");
  assert_int_equal(rowan_reset(st), ROWAN_OK);
  assert_int_equal(rowan_step(st), ROWAN_ROW);
  assert_int_equal(rowan_column_count(st), 1);
  assert_string_equal(rowan_column_name(st, 0), "K");
  assert_string_equal(rowan_column_decltype(st, 0), "VARCHAR");
  assert_string_equal(rowan_column_text(st, 0), "x");
  assert_null(rowan_column_text(st, 2));
  assert_null(rowan_column_name(st, 1));
  assert_int_equal(rowan_step(st), ROWAN_DONE);
  rowan_finalize(st);
}

/* More columns after the change: every new column is visible, with its value and type. */
static void test_select_star_after_recreate_with_more_columns(void **state) {
  fixture *f = *state;
  exec_ok(f->db, "CREATE TABLE T (K INTEGER PRIMARY KEY, V VARCHAR);"
                 "UPSERT INTO T VALUES (1, 'one')");
  rowan_stmt *st = NULL;
  assert_int_equal(rowan_prepare(f->db, "SELECT * FROM T", -1, &st, NULL), ROWAN_OK);
  assert_int_equal(rowan_step(st), ROWAN_ROW);
  assert_string_equal(rowan_column_decltype(st, 1), "VARCHAR");
  assert_string_equal(rowan_column_text(st, 1), "one");
  assert_int_equal(rowan_step(st), ROWAN_DONE);

  exec_ok(f->db, "DROP TABLE T; CREATE TABLE T (K VARCHAR PRIMARY KEY, W INTEGER, V DOUBLE);"
                 "UPSERT INTO T VALUES ('x', 5, 2.5)");
  /* A step after DONE runs the statement again (no reset). */
  assert_int_equal(rowan_step(st), ROWAN_ROW);
  assert_int_equal(rowan_column_count(st), 3);
  assert_string_equal(rowan_column_name(st, 1), "W");
  assert_string_equal(rowan_column_decltype(st, 1), "INTEGER");
  assert_int_equal(rowan_column_int64(st, 1), 5);
  assert_string_equal(rowan_column_name(st, 2), "V");
  assert_string_equal(rowan_column_decltype(st, 2), "DOUBLE");
  assert_string_equal(rowan_column_text(st, 2), "2.5");
  assert_int_equal(rowan_step(st), ROWAN_DONE);
  rowan_finalize(st);
}

/* Same count, other types: the declared types follow the table, not the first run. */
static void test_decltype_after_recreate_with_same_count(void **state) {
  fixture *f = *state;
  exec_ok(f->db, "CREATE TABLE T (K INTEGER PRIMARY KEY, V VARCHAR);"
                 "UPSERT INTO T VALUES (1, 'one')");
  rowan_stmt *st = NULL;
  assert_int_equal(rowan_prepare(f->db, "SELECT * FROM T", -1, &st, NULL), ROWAN_OK);
  assert_int_equal(rowan_step(st), ROWAN_ROW);
  assert_string_equal(rowan_column_decltype(st, 0), "INTEGER");
  assert_string_equal(rowan_column_decltype(st, 1), "VARCHAR");
  assert_int_equal(rowan_step(st), ROWAN_DONE);
  exec_ok(f->db, "DROP TABLE T; CREATE TABLE T (K DATE PRIMARY KEY, V DECIMAL(5,2));"
                 "UPSERT INTO T VALUES (DATE '2024-02-29', 1.5)");
  assert_int_equal(rowan_reset(st), ROWAN_OK);
  assert_int_equal(rowan_step(st), ROWAN_ROW);
  assert_int_equal(rowan_column_count(st), 2);
  assert_string_equal(rowan_column_decltype(st, 0), "DATE");
  assert_string_equal(rowan_column_decltype(st, 1), "DECIMAL(5,2)");
  assert_string_equal(rowan_column_text(st, 0), "2024-02-29");
  assert_string_equal(rowan_column_text(st, 1), "1.50");
  assert_int_equal(rowan_step(st), ROWAN_DONE);
  rowan_finalize(st);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_select_star_after_recreate_with_fewer_columns, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_select_star_after_recreate_with_more_columns, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_decltype_after_recreate_with_same_count, setup,
                                      teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
