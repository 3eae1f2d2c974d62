/*
** tests/cli/test_shell_view.c: views in the `rowan` shell, each command a new process on the
** same database (so every check is also one after a reopen): .tables lists views with the
** tables, sorted by name as sqlite3's .tables does; .schema prints the tables, then each
** view's CREATE VIEW exactly as written, a view after the view it reads; .schema VIEW prints
** one; the printed schema recreates the same schema (views included) in a fresh database;
** .dump ends with the views; a view's errors point at the statement; a view with columns of
** its own: .schema after ALTER VIEW, .dump with their values. Drives the built binary.
*/
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "test_shell_util.h"

typedef sh_fixture fixture;

static const char schema_t[] =
    "CREATE TABLE T (\n"
    "  K INTEGER,\n"
    "  NAME VARCHAR,\n"
    "  CONSTRAINT PK PRIMARY KEY (K)\n"
    ");\n";

/* Created in this order; "zv" reads "av", which sorts first by name but is created last:
** .schema must still print "zv" first. */
static const char view_zv[] = "create view zv as select * from t where k > 1";
static const char view_av[] = "CREATE VIEW AV AS SELECT K, NAME AS N\n  FROM ZV WHERE NAME <> 'x'";

static int setup(void **state) {
  const char *cmds[] = {schema_t, "UPSERT INTO T VALUES (1, 'one'), (2, 'two'), (3, 'x')",
                        view_zv, view_av, NULL};
  *state = sh_fixture_new(cmds);
  return *state ? 0 : -1;
}

static int teardown(void **state) {
  sh_fixture_free(*state);
  return 0;
}


static void test_tables_lists_views(void **state) {
  const char *cmds[] = {".tables", ".tables z%", NULL};
  sh_result r = sh_run_ok(*state, cmds);
  assert_string_equal(r.out, "AV\nT\nZV\nZV\n");
  sh_result_free(&r);
}

static void test_schema_prints_views_as_written(void **state) {
  const char *cmds[] = {".schema", ".schema av", NULL};
  sh_result r = sh_run_ok(*state, cmds);
  char want[1024];
  snprintf(want, sizeof want, "%s%s;\n%s;\n%s;\n", schema_t, view_zv, view_av, view_av);
  assert_string_equal(r.out, want);
  sh_result_free(&r);
}

static void test_schema_round_trip(void **state) {
  fixture *f = *state;
  const char *cmds[] = {".schema", NULL};
  sh_result r = sh_run_ok(f, cmds);
  char db2[700];
  snprintf(db2, sizeof db2, "%s/db2", f->dir);
  const char *args[] = {db2, NULL};
  sh_result r2;
  sh_run(f->dir, args, r.out, &r2);
  if (r2.status != 0) sh_dump(&r2);
  assert_int_equal(r2.status, 0);
  const char *args3[] = {db2, ".schema", NULL};
  sh_result r3;
  sh_run(f->dir, args3, NULL, &r3);
  assert_string_equal(r3.out, r.out);
  sh_result_free(&r);
  sh_result_free(&r2);
  sh_result_free(&r3);
}

static void test_dump_ends_with_views(void **state) {
  const char *cmds[] = {".dump", NULL};
  sh_result r = sh_run_ok(*state, cmds);
  char tail[512];
  snprintf(tail, sizeof tail, "%s;\n%s;\n", view_zv, view_av);
  size_t n = strlen(r.out), m = strlen(tail);
  assert_true(n > m);
  assert_string_equal(r.out + n - m, tail);
  sh_result_free(&r);
}

static void test_query_and_errors(void **state) {
  fixture *f = *state;
  const char *cmds[] = {".mode list", "SELECT K, N FROM AV ORDER BY K", NULL};
  sh_result r = sh_run_ok(f, cmds);
  assert_string_equal(r.out, "2|two\n");
  sh_result_free(&r);
  const char *bad[] = {"DROP TABLE T", NULL};
  sh_run_db(f, NULL, bad, NULL, &r);
  assert_int_not_equal(r.status, 0);
  assert_non_null(strstr(r.err, "cannot drop table T: views AV, ZV read it (drop them first, or add CASCADE"));
  sh_result_free(&r);
}

/* A view with columns of its own (created here, after the tests above ran): .schema prints
** the text ALTER VIEW wrote (its columns as they now are), and .dump of the whole database
** loaded into a fresh one gives the same schema and the view columns' values. */
static void test_view_columns_schema_and_dump(void **state) {
  fixture *f = *state;
  const char *cmds[] = {
      "create view vc (note varchar(10), m.n integer) as select * from t where k = 2",
      "UPSERT INTO VC (K, NOTE, N) VALUES (2, 'it''s', 7)",
      "ALTER VIEW VC ADD \"x y\" DECIMAL(5,2)",
      "ALTER VIEW VC DROP COLUMN NOTE",
      "UPSERT INTO VC (K, \"x y\") VALUES (2, 1.25)",
      ".schema VC", NULL};
  sh_result r = sh_run_ok(f, cmds);
  assert_string_equal(r.out, "CREATE VIEW VC (M.N INTEGER, \"x y\" DECIMAL(5,2)) AS select * "
                             "from t where k = 2;\n");
  sh_result_free(&r);
  const char *dump[] = {".dump", NULL};
  r = sh_run_ok(f, dump);
  assert_non_null(strstr(r.out, "UPSERT INTO VC (K, N, \"x y\") VALUES (2, 7, 1.25);\n"));
  char db3[700];
  snprintf(db3, sizeof db3, "%s/db3", f->dir);
  const char *args[] = {db3, NULL};
  sh_result r2;
  sh_run(f->dir, args, r.out, &r2);
  if (r2.status != 0) sh_dump(&r2);
  assert_int_equal(r2.status, 0);
  const char *args3[] = {db3, ".mode list", "SELECT K, N, \"x y\" FROM VC", ".schema VC", NULL};
  sh_result r3;
  sh_run(f->dir, args3, NULL, &r3);
  assert_string_equal(r3.out, "2|7|1.25\nCREATE VIEW VC (M.N INTEGER, \"x y\" DECIMAL(5,2)) AS "
                              "select * from t where k = 2;\n");
  sh_result_free(&r);
  sh_result_free(&r2);
  sh_result_free(&r3);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_tables_lists_views),
      cmocka_unit_test(test_schema_prints_views_as_written),
      cmocka_unit_test(test_schema_round_trip),
      cmocka_unit_test(test_dump_ends_with_views),
      cmocka_unit_test(test_query_and_errors),
      cmocka_unit_test(test_view_columns_schema_and_dump),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
