/*
** tests/cli/test_shell_modes.c: the exact output of every output mode of the `rowan` shell
** on a small table (table, box, csv, tsv, json, line, list), headers on and off, NULL
** display (.nullvalue and -nullvalue), EXPLAIN printed as plain lines in every mode, and
** an empty result printing nothing. Drives the built binary (test_shell_util.h).
**
** The table holds the cases the modes treat differently: a NULL, an empty string, text
** with a space, a comma, double quotes and a non-ASCII letter, negative and fractional
** numbers. The CSV expectations are what sqlite3's shell prints for the same values.
*/
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "test_shell_util.h"

typedef sh_fixture fixture;

static int setup(void **state) {
  const char *cmds[] = {
      "CREATE TABLE T (K INTEGER NOT NULL, NAME VARCHAR, V DOUBLE, "
      "CONSTRAINT PK PRIMARY KEY (K))",
      "UPSERT INTO T VALUES (1, 'x y', NULL), (2, '', 2.5), (3, 'a,b', -1.5), "
      "(4, 'say \"hi\"', 0.25), (5, 'h\xc3\xa9llo', 0.125)",
      NULL};
  *state = sh_fixture_new(cmds);
  return *state ? 0 : -1;
}

static int teardown(void **state) {
  sh_fixture_free(*state);
  return 0;
}

/* Run the shell on the fixture's database with up to 6 extra arguments (NULL-terminated)
** and check stdout equals want, stderr is empty and the status is 0. */
static void expect_output(fixture *f, const char *want, ...) {
  const char *args[16];
  int n = 0;
  va_list ap;
  va_start(ap, want);
  const char *a;
  while ((a = va_arg(ap, const char *)) != NULL && n < 6) args[n++] = a;
  va_end(ap);
  const char *all[16];
  int k = 0;
  /* options first, then the database, then the commands */
  for (int i = 0; i < n; i++)
    if (args[i][0] == '-') all[k++] = args[i];
  all[k++] = f->db;
  for (int i = 0; i < n; i++)
    if (args[i][0] != '-') all[k++] = args[i];
  all[k] = NULL;
  sh_result r;
  sh_run(f->dir, all, NULL, &r);
  if (r.status != 0 || strcmp(r.out, want) != 0 || r.err[0]) {
    sh_dump(&r);
    fprintf(stderr, "--- wanted:\n%s---\n", want);
  }
  assert_int_equal(r.status, 0);
  assert_string_equal(r.out, want);
  assert_string_equal(r.err, "");
  sh_result_free(&r);
}

#define ALL "SELECT * FROM T"

static void test_table_mode(void **state) {
  const char *want =
      "+---+----------+-------+\n"
      "| K |   NAME   |   V   |\n"
      "+---+----------+-------+\n"
      "| 1 | x y      |       |\n"
      "| 2 |          |   2.5 |\n"
      "| 3 | a,b      |  -1.5 |\n"
      "| 4 | say \"hi\" |  0.25 |\n"
      "| 5 | h\xc3\xa9llo    | 0.125 |\n"
      "+---+----------+-------+\n";
  expect_output(*state, want, ALL, NULL);               /* the default mode */
  expect_output(*state, want, "-table", ALL, NULL);
  expect_output(*state, want, ".mode csv", ".mode table", ALL, NULL);
}

/* A value holding control bytes keeps its table row on one line: they print escaped. */
static void test_table_escapes_control_bytes(void **state) {
  fixture *f = *state;
  const char *want =
      "+-----------------+\n"
      "|        V        |\n"
      "+-----------------+\n"
      "| a\\nb\\tc\\x01d\\re |\n"
      "+-----------------+\n";
  expect_output(f, want, "SELECT 'a\nb\tc\x01" "d\re' AS V", NULL);
}

static void test_table_without_headers(void **state) {
  expect_output(*state,
                "+---+-----+\n"
                "| 2 | 2.5 |\n"
                "+---+-----+\n",
                "-noheader", "SELECT K, V FROM T WHERE K = 2", NULL);
}

static void test_table_headers_off_simple(void **state) {
  expect_output(*state,
                "+---+-----+\n"
                "| 3 | a,b |\n"
                "+---+-----+\n",
                ".headers off", "SELECT K, NAME FROM T WHERE K = 3", NULL);
}

/* East Asian wide characters take two columns (the Beijing archive's station types). */
static void test_table_wide_characters(void **state) {
  expect_output(*state,
                "+------+---+\n"
                "| TYPE | K |\n"
                "+------+---+\n"
                "| \xe5\x9f\x8e\xe5\x8c\xba | 1 |\n"
                "+------+---+\n",
                "SELECT '\xe5\x9f\x8e\xe5\x8c\xba' AS TYPE, K FROM T WHERE K = 1", NULL);
}

static void test_box_mode(void **state) {
  expect_output(*state,
                "\u250c\u2500\u2500\u2500\u252c\u2500\u2500\u2500\u2500\u2500\u2510\n"
                "\u2502 K \u2502  V  \u2502\n"
                "\u251c\u2500\u2500\u2500\u253c\u2500\u2500\u2500\u2500\u2500\u2524\n"
                "\u2502 2 \u2502 2.5 \u2502\n"
                "\u2514\u2500\u2500\u2500\u2534\u2500\u2500\u2500\u2500\u2500\u2518\n",
                "-box", "SELECT K, V FROM T WHERE K = 2", NULL);
}

static void test_csv_mode(void **state) {
  const char *body =
      "1,\"x y\",\r\n"
      "2,\"\",2.5\r\n"
      "3,\"a,b\",-1.5\r\n"
      "4,\"say \"\"hi\"\"\",0.25\r\n"
      "5,h\xc3\xa9llo,0.125\r\n";
  char with_header[512];
  snprintf(with_header, sizeof with_header, "K,NAME,V\r\n%s", body);
  expect_output(*state, body, "-csv", ALL, NULL); /* csv: no header by default */
  expect_output(*state, with_header, "-csv", "-header", ALL, NULL);
  expect_output(*state, with_header, ".mode csv", ".headers on", ALL, NULL);
  /* A column name that needs quoting is quoted in the header too. */
  expect_output(*state, "\"a b\"\r\n1\r\n", "-csv", "-header", "SELECT K AS \"a b\" FROM T WHERE K = 1",
                NULL);
}

static void test_tsv_and_list_modes(void **state) {
  expect_output(*state,
                "K\tNAME\tV\n1\tx y\t\n2\t\t2.5\n3\ta,b\t-1.5\n4\tsay \"hi\"\t0.25\n"
                "5\th\xc3\xa9llo\t0.125\n",
                ".mode tsv", ".headers on", ALL, NULL);
  expect_output(*state, "1|x y|\n2||2.5\n3|a,b|-1.5\n4|say \"hi\"|0.25\n5|h\xc3\xa9llo|0.125\n",
                "-list", ALL, NULL);
}

static void test_json_mode(void **state) {
  expect_output(*state,
                "[{\"K\":1,\"NAME\":\"x y\",\"V\":null},\n"
                "{\"K\":2,\"NAME\":\"\",\"V\":2.5},\n"
                "{\"K\":3,\"NAME\":\"a,b\",\"V\":-1.5},\n"
                "{\"K\":4,\"NAME\":\"say \\\"hi\\\"\",\"V\":0.25},\n"
                "{\"K\":5,\"NAME\":\"h\xc3\xa9llo\",\"V\":0.125}]\n",
                "-json", ALL, NULL);
  /* Headers do not change json; booleans are unquoted. */
  expect_output(*state, "[{\"B\":true,\"C\":false}]\n", "-json", "-noheader",
                "SELECT K = 1 AS B, K = 2 AS C FROM T WHERE K = 1", NULL);
}

static void test_line_mode(void **state) {
  expect_output(*state,
                "   K = 1\nNAME = x y\n   V = \n\n   K = 2\nNAME = \n   V = 2.5\n",
                "-line", "SELECT * FROM T WHERE K <= 2", NULL);
}

static void test_nullvalue(void **state) {
  expect_output(*state,
                "+---+------+\n"
                "| K |  V   |\n"
                "+---+------+\n"
                "| 1 | NULL |\n"
                "+---+------+\n",
                ".nullvalue NULL", "SELECT K, V FROM T WHERE K = 1", NULL);
  expect_output(*state, "1,-\r\n", "-csv", "-nullvalue", "-", "SELECT K, V FROM T WHERE K = 1",
                NULL);
  /* An empty string is not NULL: it is quoted in csv, never replaced by the null text. */
  expect_output(*state, "2,\"\"\r\n", "-csv", ".nullvalue N/A", "SELECT K, NAME FROM T WHERE K = 2",
                NULL);
}

static void test_empty_result_prints_nothing(void **state) {
  static const char *const modes[] = {".mode table", ".mode box", ".mode csv", ".mode tsv",
                                      ".mode json", ".mode line", ".mode list"};
  for (size_t i = 0; i < sizeof modes / sizeof *modes; i++)
    expect_output(*state, "", modes[i], ".headers on", "SELECT * FROM T WHERE K = 99", NULL);
}

/* Remove the lines holding "ESTIMATE" (the table's byte size estimate moves as the store
** reopens and replays its WAL) from s in place. */
static void drop_estimate_lines(char *s) {
  char *o = s;
  for (char *p = s; *p;) {
    char *nl = strchr(p, '\n');
    size_t n = nl ? (size_t)(nl - p) + 1 : strlen(p);
    bool est = memmem(p, n, "ESTIMATE", 8) != NULL;
    if (!est) {
      memmove(o, p, n);
      o += n;
    }
    p += n;
  }
  *o = 0;
}

/* EXPLAIN: one plan line per row, the same plain lines in every mode. */
static void test_explain_plain_in_every_mode(void **state) {
  fixture *f = *state;
  static const char *const modes[] = {"-table", "-box", "-csv", "-tsv", "-json", "-line",
                                      "-list"};
  char *first = NULL;
  for (size_t i = 0; i < sizeof modes / sizeof *modes; i++) {
    const char *args[] = {modes[i], "-header", f->db, "EXPLAIN SELECT NAME FROM T WHERE K = 2",
                          NULL};
    sh_result r;
    sh_run(f->dir, args, NULL, &r);
    if (r.status != 0) sh_dump(&r);
    assert_int_equal(r.status, 0);
    /* The first line names the scan; no borders, quotes, brackets or CR. */
    assert_true(strncmp(r.out, "POINT LOOKUP ON 1 KEY OVER T", 28) == 0);
    assert_null(strchr(r.out, '\r'));
    assert_null(strchr(r.out, '"'));
    assert_null(strstr(r.out, "+--"));
    assert_true(strstr(r.out, "\n    ") != NULL); /* indented detail lines kept as they are */
    drop_estimate_lines(r.out);
    if (!first) first = strdup(r.out);
    else assert_string_equal(r.out, first);
    sh_result_free(&r);
  }
  free(first);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_table_mode),
      cmocka_unit_test(test_table_escapes_control_bytes),
      cmocka_unit_test(test_table_without_headers),
      cmocka_unit_test(test_table_headers_off_simple),
      cmocka_unit_test(test_table_wide_characters),
      cmocka_unit_test(test_box_mode),
      cmocka_unit_test(test_csv_mode),
      cmocka_unit_test(test_tsv_and_list_modes),
      cmocka_unit_test(test_json_mode),
      cmocka_unit_test(test_line_mode),
      cmocka_unit_test(test_nullvalue),
      cmocka_unit_test(test_empty_result_prints_nothing),
      cmocka_unit_test(test_explain_plain_in_every_mode),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
