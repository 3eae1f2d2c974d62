/*
** tests/cli/test_shell_sqlite_cmds.c: the sqlite3 shell commands added for daily use, as a
** user types them: .changes (the rows each statement changed and the session's total),
** .once (only the next command's results go to the file), .show (the settings), .shell and
** .system (the command runs; a non-zero exit status fails the command), and the column
** and markdown output modes (exact text, as options and as .mode); the :memory: database
** (works, and is gone at exit); the start-up file (~/.rowanrc, -init FILE instead, a missing
** -init FILE an error); .dump: loaded into an empty database it gives the same schema
** (indexes, families, options) and the same rows for every type, NULLs, quotes, NaN,
** binary values, an ARRAY and a quoted table name; a table-mode result of more rows than
** the shell holds (10,000) is sized on the rows held and printed as it comes after them
** (the rule lines and every row present, a longer later value widening only its own line). Drives
** the built binary.
** Not here: the older dot commands (test_shell_cmds.c), the other modes (test_shell_modes.c).
*/
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "test_shell_util.h"

typedef sh_fixture fixture;

static int setup(void **state) {
  const char *cmds[] = {"CREATE TABLE T (K INTEGER NOT NULL, NAME VARCHAR, W DOUBLE, "
                        "CONSTRAINT PK PRIMARY KEY (K))",
                        "UPSERT INTO T VALUES (1, 'one', 1.5), (22, 'twenty-two', -3)", NULL};
  *state = sh_fixture_new(cmds);
  return *state ? 0 : -1;
}

static int teardown(void **state) {
  sh_fixture_free(*state);
  return 0;
}

static sh_result run_ok(fixture *f, const char *const *opts, const char *const *cmds) {
  sh_result r;
  sh_run_db(f, opts, cmds, NULL, &r);
  if (r.status != 0 || r.err[0]) sh_dump(&r);
  assert_int_equal(r.status, 0);
  assert_string_equal(r.err, "");
  return r;
}

static void test_changes(void **state) {
  const char *cmds[] = {".mode list", ".changes on", "UPSERT INTO T VALUES (3, 'three', 0)",
                        "UPSERT INTO T VALUES (4, 'four', 0), (5, 'five', 0)",
                        "SELECT COUNT(*) FROM T", "DELETE FROM T WHERE K >= 3 AND K <= 5",
                        ".changes off", "SELECT COUNT(*) FROM T", NULL};
  sh_result r = run_ok(*state, NULL, cmds);
  assert_string_equal(r.out, "changes: 1   total_changes: 1\n"
                             "changes: 2   total_changes: 3\n"
                             "5\n"
                             "changes: 0   total_changes: 3\n"
                             "changes: 3   total_changes: 6\n"
                             "2\n");
  sh_result_free(&r);
  const char *bad[] = {".changes maybe", NULL};
  sh_run_db(*state, NULL, bad, NULL, &r);
  assert_int_equal(r.status, 1);
  assert_non_null(strstr(r.err, "usage: .changes on|off"));
  sh_result_free(&r);
}

static void test_once(void **state) {
  fixture *f = *state;
  char path[700];
  snprintf(path, sizeof path, "%s/once.txt", f->dir);
  const char *cmds[] = {".mode list", ".once", NULL};
  sh_result r;
  sh_run_db(f, NULL, cmds, NULL, &r); /* no FILE: a usage error */
  assert_int_equal(r.status, 1);
  assert_non_null(strstr(r.err, "usage: .once FILE"));
  sh_result_free(&r);
  char once[760];
  snprintf(once, sizeof once, ".once %s", path);
  const char *run[] = {".mode list", once, "SELECT K FROM T", "SELECT NAME FROM T WHERE K = 1",
                       once, ".print to the file", ".print to the screen", NULL};
  r = run_ok(f, NULL, run);
  assert_string_equal(r.out, "one\nto the screen\n");
  char *text = sh_read_file(path);
  assert_non_null(text);
  assert_string_equal(text, "to the file\n"); /* the second .once truncated the first's */
  free(text);
  sh_result_free(&r);
  const char *first[] = {".mode list", once, "SELECT K FROM T", NULL};
  r = run_ok(f, NULL, first);
  assert_string_equal(r.out, "");
  text = sh_read_file(path);
  assert_string_equal(text, "1\n22\n");
  free(text);
  sh_result_free(&r);
}

static void test_show(void **state) {
  const char *cmds[] = {".mode csv", ".timer on", ".nullvalue NULL", ".show", NULL};
  sh_result r = run_ok(*state, NULL, cmds);
  assert_non_null(strstr(r.out, "        mode: csv\n"));
  assert_non_null(strstr(r.out, "       timer: on\n"));
  assert_non_null(strstr(r.out, "   nullvalue: \"NULL\"\n"));
  assert_non_null(strstr(r.out, "     headers: off (the mode's)\n"));
  assert_non_null(strstr(r.out, "      output: stdout\n"));
  assert_non_null(strstr(r.out, "       hints: on\n"));
  sh_result_free(&r);
}

static void test_system(void **state) {
  fixture *f = *state;
  char path[700], cmd[800];
  snprintf(path, sizeof path, "%s/made-by-shell", f->dir);
  snprintf(cmd, sizeof cmd, ".system touch %s", path);
  const char *cmds[] = {cmd, ".shell echo from the shell", NULL};
  sh_result r = run_ok(f, NULL, cmds);
  assert_string_equal(r.out, "from the shell\n");
  sh_result_free(&r);
  char *made = sh_read_file(path);
  assert_non_null(made); /* the command ran: the file exists (empty) */
  free(made);
  const char *bad[] = {".shell exit 3", NULL};
  sh_run_db(f, NULL, bad, NULL, &r);
  assert_int_equal(r.status, 1);
  assert_non_null(strstr(r.err, ".shell: the command exited with status 3"));
  sh_result_free(&r);
  const char *none[] = {".system", NULL};
  sh_run_db(f, NULL, none, NULL, &r);
  assert_int_equal(r.status, 1);
  assert_non_null(strstr(r.err, "usage: .system COMMAND"));
  sh_result_free(&r);
}

static void test_column_and_markdown(void **state) {
  const char *cmds[] = {".mode column", "SELECT K, NAME, W FROM T", ".mode markdown",
                        "SELECT K, NAME, W FROM T", ".headers off", "SELECT K FROM T", NULL};
  sh_result r = run_ok(*state, NULL, cmds);
  assert_string_equal(r.out, "K   NAME        W\n"
                             "--  ----------  ----\n"
                             " 1  one          1.5\n"
                             "22  twenty-two  -3.0\n"
                             "| K  |    NAME    |  W   |\n"
                             "|----|------------|------|\n"
                             "|  1 | one        |  1.5 |\n"
                             "| 22 | twenty-two | -3.0 |\n"
                             "|  1 |\n"
                             "| 22 |\n");
  sh_result_free(&r);
  const char *opt[] = {"-column", NULL};
  const char *q[] = {"SELECT NAME FROM T WHERE K = 1", NULL};
  r = run_ok(*state, opt, q);
  assert_string_equal(r.out, "NAME\n----\none\n");
  sh_result_free(&r);
}

static void test_memory(void **state) {
  fixture *f = *state;
  const char *args[] = {"-list", ":memory:", "CREATE TABLE M (K INTEGER NOT NULL PRIMARY KEY)",
                        "UPSERT INTO M VALUES (1), (2), (3)", "SELECT SUM(K) FROM M", NULL};
  sh_result r;
  assert_int_equal(sh_run(f->dir, args, NULL, &r), 0);
  assert_string_equal(r.out, "6\n");
  assert_string_equal(r.err, "");
  sh_result_free(&r);
  const char *again[] = {":memory:", "SELECT COUNT(*) FROM M", NULL}; /* a new, empty one */
  assert_int_equal(sh_run(f->dir, again, NULL, &r), 1);
  assert_non_null(strstr(r.err, "unknown table \"M\""));
  sh_result_free(&r);
}

static void test_init_file(void **state) {
  fixture *f = *state;
  char rc[700], other[700];
  snprintf(rc, sizeof rc, "%s/.rowanrc", f->dir); /* HOME is the test directory (sh_run) */
  snprintf(other, sizeof other, "%s/other-init", f->dir);
  sh_write_file(rc, ".mode csv\n.nullvalue none\n");
  sh_write_file(other, ".mode list\n");
  const char *q[] = {"SELECT K, NAME, CAST(NULL AS VARCHAR) FROM T WHERE K = 1", NULL};
  sh_result r;
  sh_run_db(f, NULL, q, NULL, &r);
  assert_int_equal(r.status, 0);
  assert_string_equal(r.out, "1,one,none\r\n"); /* csv: CR LF, as sqlite3 */
  sh_result_free(&r);
  const char *init[] = {"-init", other, NULL}; /* instead of ~/.rowanrc */
  sh_run_db(f, init, q, NULL, &r);
  assert_int_equal(r.status, 0);
  assert_string_equal(r.out, "1|one|\n");
  sh_result_free(&r);
  char missing[760];
  snprintf(missing, sizeof missing, "%s/no-such-init", f->dir);
  const char *bad[] = {"-init", missing, NULL};
  sh_run_db(f, bad, q, NULL, &r);
  assert_int_equal(r.status, 1);
  assert_non_null(strstr(r.err, "cannot read the -init file"));
  sh_result_free(&r);
  remove(rc);
}

static void test_dump_round_trip(void **state) {
  fixture *f = *state;
  const char *make[] = {
      "CREATE TABLE \"we ird\" (K INTEGER NOT NULL, TS TIMESTAMP NOT NULL, R.BO BOOLEAN, "
      "R.TI TINYINT, R.DB DOUBLE, R.FL FLOAT, R.DE DECIMAL(9,3), R.CH CHAR(4), R.VC VARCHAR, "
      "M.DT DATE, M.TM TIME, M.VB VARBINARY, M.AR VARCHAR ARRAY, "
      "CONSTRAINT PK PRIMARY KEY (K, TS DESC)) "
      "R.VERSIONS = 2, TTL = 999999999",
      "CREATE INDEX IX ON \"we ird\" (DB) INCLUDE (VC)",
      "UPSERT INTO \"we ird\" VALUES (1, TIMESTAMP '2016-01-01 13:05:00.123', TRUE, -128, 0.1, "
      "1.5, -12.345, 'ab', 'it''s \xc3\xa9', DATE '2016-02-29', TIME '23:59:59.999', X'00FF', "
      "ARRAY['a', NULL, 'it''s', ''])",
      "UPSERT INTO \"we ird\" VALUES (2, TIMESTAMP '1970-01-01 00:00:00', FALSE, 127, "
      "CAST('NaN' AS DOUBLE), -2.5, 0, NULL, '', NULL, NULL, X'', NULL)",
      "UPSERT INTO \"we ird\" (K, TS, DB) VALUES (3, TIMESTAMP '2020-05-05 05:05:05', 1e300)",
      NULL};
  sh_result r = run_ok(f, NULL, make);
  sh_result_free(&r);
  char dump[700], db2[700], once[760], read[760];
  snprintf(dump, sizeof dump, "%s/dump.sql", f->dir);
  snprintf(db2, sizeof db2, "%s/db2", f->dir);
  snprintf(once, sizeof once, ".once %s", dump);
  const char *d[] = {once, ".dump", NULL};
  r = run_ok(f, NULL, d);
  sh_result_free(&r);
  snprintf(read, sizeof read, ".read %s", dump);
  const char *load[] = {db2, read, NULL};
  assert_int_equal(sh_run(f->dir, load, NULL, &r), 0);
  if (r.err[0]) sh_dump(&r);
  assert_string_equal(r.err, "");
  sh_result_free(&r);
  const char *look[] = {"-csv", NULL, "SELECT * FROM \"we ird\"", "SELECT * FROM T", ".schema",
                        ".indexes", "SELECT VC FROM \"we ird\" WHERE DB > 1", NULL};
  look[1] = f->db;
  sh_result a, b;
  assert_int_equal(sh_run(f->dir, look, NULL, &a), 0);
  look[1] = db2;
  assert_int_equal(sh_run(f->dir, look, NULL, &b), 0);
  assert_non_null(strstr(a.out, "it's \xc3\xa9"));
  assert_non_null(strstr(a.out, "NaN"));
  assert_non_null(strstr(a.out, "['a', null, 'it''s', '']")); /* an ARRAY through its text */
  assert_non_null(strstr(a.out, "AR VARCHAR ARRAY"));
  assert_non_null(strstr(a.out, "IX ON \"we ird\" (DB) INCLUDE (VC)"));
  assert_string_equal(a.out, b.out);
  sh_result_free(&a);
  sh_result_free(&b);
  /* one table; an unknown one */
  const char *one[] = {".dump T", NULL};
  r = run_ok(f, NULL, one);
  assert_non_null(strstr(r.out, "CREATE TABLE T ("));
  assert_null(strstr(r.out, "we ird"));
  assert_non_null(strstr(r.out, "UPSERT INTO T (K, NAME, W) VALUES (1, 'one', 1.5);"));
  sh_result_free(&r);
  const char *bad[] = {".dump NOSUCH", NULL};
  sh_run_db(f, NULL, bad, NULL, &r);
  assert_int_equal(r.status, 1);
  assert_non_null(strstr(r.err, "unknown table \"NOSUCH\""));
  sh_result_free(&r);
  const char *drop[] = {"DROP TABLE \"we ird\"", NULL};
  r = run_ok(f, NULL, drop);
  sh_result_free(&r);
}

static void test_table_mode_streams(void **state) {
  fixture *f = *state;
  char csv[700], imp[800];
  snprintf(csv, sizeof csv, "%s/big.csv", f->dir);
  FILE *w = fopen(csv, "w");
  assert_non_null(w);
  for (int i = 0; i < 12000; i++) fprintf(w, "%d,s%d\n", i, i % 10);
  fclose(w);
  snprintf(imp, sizeof imp, ".import --csv %s BIGT", csv);
  const char *load[] = {"CREATE TABLE BIGT (K INTEGER NOT NULL PRIMARY KEY, S VARCHAR)", imp,
                        NULL};
  sh_result r = run_ok(f, NULL, load);
  sh_result_free(&r);
  const char *q[] = {"SELECT K, S FROM BIGT", NULL};
  r = run_ok(f, NULL, q);
  size_t lines = 0;
  for (const char *p = r.out; *p; p++) lines += *p == '\n';
  assert_int_equal(lines, 12000 + 4); /* top rule, names, rule, rows, bottom rule */
  static const char head[] = "+------+----+\n|  K   | S  |\n+------+----+\n|    0 | s0 |\n";
  assert_true(strncmp(r.out, head, sizeof head - 1) == 0);
  assert_non_null(strstr(r.out, "\n| 9999 | s9 |\n| 10000 | s0 |\n"));
  assert_non_null(strstr(r.out, "\n| 11999 | s9 |\n+------+----+\n"));
  sh_result_free(&r);
  const char *drop[] = {"DROP TABLE BIGT", NULL};
  r = run_ok(f, NULL, drop);
  sh_result_free(&r);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_changes),
      cmocka_unit_test(test_once),
      cmocka_unit_test(test_show),
      cmocka_unit_test(test_system),
      cmocka_unit_test(test_column_and_markdown),
      cmocka_unit_test(test_memory),
      cmocka_unit_test(test_init_file),
      cmocka_unit_test(test_dump_round_trip),
      cmocka_unit_test(test_table_mode_streams),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
