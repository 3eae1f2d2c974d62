/*
** tests/cli/test_shell_dyncol.c: Phoenix's dynamic columns in the `rowan` shell, each command a
** new process on the same database (so every check is also one after a reopen): an UPSERT
** writes them (and creates the family a table without one lacks), a query reads them back,
** `.raw` shows their cells with the qualifier 00 + name and says which dynamic column each
** is, `.schema` shows no dynamic column (the catalog records none), an error points at the
** column, `rowan --recover` copies the dynamic cells into the new database as they are
** (nothing set aside). Drives the built binary.
*/
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <setjmp.h>
#include <cmocka.h>

#include "test_shell_util.h"

typedef sh_fixture fixture;

static int setup(void **state) {
  const char *cmds[] = {"CREATE TABLE D (K INTEGER PRIMARY KEY)",
                        "UPSERT INTO D (K, NOTE VARCHAR, X.N INTEGER) VALUES (1, 'hi', 5)",
                        "UPSERT INTO D VALUES (2)", NULL};
  *state = sh_fixture_new(cmds);
  return *state ? 0 : -1;
}

static int teardown(void **state) {
  sh_fixture_free(*state);
  return 0;
}


static void test_query(void **state) {
  const char *cmds[] = {".mode list", "SELECT * FROM D (NOTE VARCHAR, X.N INTEGER) ORDER BY K",
                        "SELECT * FROM D", NULL};
  sh_result r = sh_run_ok(*state, cmds);
  assert_string_equal(r.out, "1|hi|5\n2||\n1\n2\n");
  sh_result_free(&r);
}

static void test_raw_names_dynamic_cells(void **state) {
  const char *cmds[] = {".raw get D 1", NULL};
  sh_result r = sh_run_ok(*state, cmds);
  /* "NOTE" is 4e 4f 54 45, "N" is 4e; INTEGER 5 is 80000005 */
  assert_non_null(strstr(r.out, "  0:004e4f5445 (dynamic column NOTE)  ts "));
  assert_non_null(strstr(r.out, "value 6869\n"));
  assert_non_null(strstr(r.out, "  X:004e (dynamic column N)  ts "));
  assert_non_null(strstr(r.out, "value 80000005\n"));
  assert_non_null(strstr(r.out, "(1 row)\n"));
  sh_result_free(&r);
}

static void test_schema_has_families_not_columns(void **state) {
  const char *cmds[] = {".schema D", NULL};
  sh_result r = sh_run_ok(*state, cmds);
  assert_null(strstr(r.out, "NOTE"));
  assert_null(strstr(r.out, " N "));
  sh_result_free(&r);
}

static void test_error_points_at_column(void **state) {
  fixture *f = *state;
  const char *cmds[] = {"SELECT K FROM D (K VARCHAR)", NULL};
  sh_result r;
  sh_run_db(f, NULL, cmds, NULL, &r);
  assert_int_not_equal(r.status, 0);
  assert_non_null(strstr(r.err, "dynamic column \"K\" has the name of column K (INTEGER) of table "
                                "D: a dynamic column must have a name the table does not declare "
                                "at line 1, column 18\n"));
  sh_result_free(&r);
}

static void test_recover_keeps_dynamic_cells(void **state) {
  fixture *f = *state;
  char dst[700];
  snprintf(dst, sizeof dst, "%s/new", f->dir);
  const char *args[] = {"--recover", f->db, dst, NULL};
  sh_result r;
  sh_run(f->dir, args, NULL, &r);
  if (r.status != 0) sh_dump(&r);
  assert_int_equal(r.status, 0);
  assert_null(strstr(r.out, "LOST_AND_FOUND"));
  sh_result_free(&r);
  const char *q[] = {"-list", dst, "SELECT * FROM D (NOTE VARCHAR, X.N INTEGER) ORDER BY K", NULL};
  sh_run(f->dir, q, NULL, &r);
  assert_int_equal(r.status, 0);
  assert_string_equal(r.out, "1|hi|5\n2||\n");
  sh_result_free(&r);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_query),
      cmocka_unit_test(test_raw_names_dynamic_cells),
      cmocka_unit_test(test_schema_has_families_not_columns),
      cmocka_unit_test(test_error_points_at_column),
      cmocka_unit_test(test_recover_keeps_dynamic_cells),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
