/*
** tests/cli/test_shell_rough.c: what a new user meets when something goes wrong in the
** `rowan` shell (found by a fresh-user trial):
**  - an .import that rejects records fails the command and the exit status while the good
**    records stay loaded, and says how many were rejected and where the first was;
**  - errors inside a script (-f, .read, nested .read, stdin) name the file, line and column
**    of the error itself, without the engine's statement-relative position; dot commands
**    name the file and line; a multi-row UPSERT's error points at the failing value;
**  - a block comment over several lines is a comment (not statements, not dot commands);
**    a script with a byte-order mark and CR LF line ends runs;
**  - hints for a string in double quotes and for a file given as SQL; a warning for a
**    transaction left open at exit; .check fails when it finds problems;
**  - .help lists the commands sorted, one line each, the same ones as docs/SHELL.md's
**    table, and .help COMMAND gives the details;
**  - statements Rowan does not have (INSERT, UPDATE, ALTER INDEX, ...) say what to use
**    instead, with the caret under the construct.
** Drives the built binary.
**
** Not here: the messages' exact text from the parser alone (tests/sql/unsupported.test).
*/
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "test_shell_util.h"

typedef sh_fixture fixture;

static int setup(void **state) {
  const char *cmds[] = {"CREATE TABLE T (K INTEGER NOT NULL PRIMARY KEY, NAME VARCHAR, "
                        "TEMP DOUBLE)",
                        "UPSERT INTO T VALUES (1, 'one', 1.5), (2, 'two', 2.5)", NULL};
  *state = sh_fixture_new(cmds);
  return *state ? 0 : -1;
}

static int teardown(void **state) {
  sh_fixture_free(*state);
  return 0;
}

/* Run the shell on the fixture's database: opts (NULL-terminated, may be NULL) before it,
** cmds (NULL-terminated, may be NULL) after it, stdin text in. */
static int run(fixture *f, const char *const *opts, const char *const *cmds, const char *in,
               sh_result *r) {
  return sh_run_db(f, opts, cmds, in, r);
}

/* Fail with the run's output shown unless text contains want. */
static void expect_in(const sh_result *r, const char *text, const char *want) {
  if (!strstr(text, want)) {
    fprintf(stderr, "missing: %s\n", want);
    sh_dump(r);
  }
  assert_non_null(strstr(text, want));
}

static void expect_not_in(const sh_result *r, const char *text, const char *unwanted) {
  if (strstr(text, unwanted)) {
    fprintf(stderr, "unexpected: %s\n", unwanted);
    sh_dump(r);
  }
  assert_null(strstr(text, unwanted));
}

/* ---- .import with rejected records ----------------------------------------------------- */

static void test_import_rejects_fail(void **state) {
  fixture *f = *state;
  char csv[700], good[700], cmd[900], rej[700], cmd_rej[1500], script[700], want[2400];
  snprintf(csv, sizeof csv, "%s/in.csv", f->dir);
  snprintf(good, sizeof good, "%s/good.csv", f->dir);
  snprintf(rej, sizeof rej, "%s/rejects.csv", f->dir);
  /* lines 3, 5 and 6 are bad: a bad DOUBLE, a bad INTEGER key, a missing field */
  sh_write_file(csv, "K,NAME,TEMP\n10,a,1.5\n11,b,xx\n12,c,3\nfoo,d,4\n14,e\n");
  sh_write_file(good, "K,NAME,TEMP\n20,a,1\n21,b,2\n");
  snprintf(cmd, sizeof cmd, ".import --csv --header %s T", csv);
  const char *list[] = {"-list", NULL};
  const char *cmds[] = {cmd, "SELECT K FROM T WHERE K >= 10", NULL};
  sh_result r;
  assert_int_equal(run(f, list, cmds, NULL, &r), 1);
  /* the good records loaded, and the statement after the import still ran */
  expect_in(&r, r.out, "2 rows loaded, 3 rejected from 1 file");
  expect_in(&r, r.out, "10\n12\n");
  snprintf(want, sizeof want, "Error: .import: 3 of 5 records rejected; first: %s:3: column TEMP",
           csv);
  expect_in(&r, r.err, want);
  sh_result_free(&r);

  /* -bail stops at the import that rejected records. */
  const char *bail[] = {"-list", "-bail", NULL};
  const char *cmds2[] = {cmd, "SELECT 'after'", NULL};
  assert_int_equal(run(f, bail, cmds2, NULL, &r), 1);
  expect_not_in(&r, r.out, "after");
  sh_result_free(&r);

  /* With --reject, the message names the reject file too; in a script, the input line. */
  snprintf(cmd_rej, sizeof cmd_rej, ".import --csv --header --reject %s %s T\n", rej, csv);
  snprintf(script, sizeof script, "%s/load.sql", f->dir);
  char text[2000];
  snprintf(text, sizeof text, "SELECT 1;\n%s", cmd_rej);
  sh_write_file(script, text);
  const char *fopt[] = {"-list", "-f", script, NULL};
  assert_int_equal(run(f, fopt, NULL, NULL, &r), 1);
  snprintf(want, sizeof want, "Error: %s:2: .import: 3 of 5 records rejected into %s; first: %s:3:",
           script, rej, csv);
  expect_in(&r, r.err, want);
  sh_result_free(&r);
  char *rj = sh_read_file(rej);
  assert_non_null(strstr(rj, "\"column TEMP: invalid DOUBLE 'xx'\""));
  free(rj);

  /* An import without rejects succeeds, with a singular "row" for one row. */
  char one[700], cmd_one[900];
  snprintf(one, sizeof one, "%s/one.csv", f->dir);
  sh_write_file(one, "K,NAME,TEMP\n30,x,1\n");
  snprintf(cmd_one, sizeof cmd_one, ".import --csv --header %s T", one);
  snprintf(cmd, sizeof cmd, ".import --csv --header %s T", good);
  const char *cmds3[] = {cmd, cmd_one, NULL};
  assert_int_equal(run(f, list, cmds3, NULL, &r), 0);
  expect_in(&r, r.out, "2 rows loaded, 0 rejected");
  expect_in(&r, r.out, "\n1 row loaded, 0 rejected");
  assert_string_equal(r.err, "");
  sh_result_free(&r);
  const char *cleanup[] = {"DELETE FROM T WHERE K >= 10", NULL};
  assert_int_equal(run(f, NULL, cleanup, NULL, &r), 0);
  sh_result_free(&r);
}

/* ---- errors in scripts name the file, line and column --------------------------------- */

static void test_script_errors_name_file(void **state) {
  fixture *f = *state;
  char outer[700], inner[700], inner2[700], text[2400];
  snprintf(outer, sizeof outer, "%s/outer.sql", f->dir);
  snprintf(inner, sizeof inner, "%s/inner.sql", f->dir);
  snprintf(inner2, sizeof inner2, "%s/inner2.sql", f->dir);
  /* inner2.sql: the bad column is on line 3, column 5 of the file, line 2 of its
  ** statement; the second statement of line 4 fails at column 19. */
  sh_write_file(inner2, "SELECT K FROM T WHERE K = 1;\nSELECT K,\n    NOSUCH\nFROM T; SELECT K, BAD2 FROM T;\n");
  snprintf(text, sizeof text, "SELECT 'inner';\n.read %s\n.mode nosuchmode\n.schema NOPE\n"
           ".raw get\n", inner2);
  sh_write_file(inner, text);
  snprintf(text, sizeof text, "SELECT 'outer';\n.read %s\nSELECT 'last';\n", inner);
  sh_write_file(outer, text);
  char cmd[800];
  snprintf(cmd, sizeof cmd, ".read %s", outer);
  const char *list[] = {"-list", NULL};
  const char *cmds[] = {cmd, NULL};
  sh_result r;
  assert_int_equal(run(f, list, cmds, NULL, &r), 1);
  assert_string_equal(r.out, "outer\ninner\n1\nlast\n");
  char want[1000];
  snprintf(want, sizeof want, "Error: %s:3:5: unknown column \"NOSUCH\"\n", inner2);
  expect_in(&r, r.err, want);
  snprintf(want, sizeof want, "Error: %s:4:19: unknown column \"BAD2\"", inner2);
  expect_in(&r, r.err, want);
  /* a failing dot command: the file and its line */
  snprintf(want, sizeof want, "Error: %s:3: unknown mode \"nosuchmode\"", inner);
  expect_in(&r, r.err, want);
  snprintf(want, sizeof want, "Error: %s:4: unknown table \"NOPE\"\n", inner);
  expect_in(&r, r.err, want);
  snprintf(want, sizeof want, "Error: %s:5: usage: .raw get", inner);
  expect_in(&r, r.err, want);
  /* the statement-relative position is not repeated, and the caret is kept */
  expect_not_in(&r, r.err, " at line ");
  expect_in(&r, r.err, "\n      NOSUCH\n      ^\n");
  sh_result_free(&r);

  /* -f names its file the same way; -bail stops inside the nested file. */
  const char *fopt[] = {"-list", "-bail", "-f", outer, NULL};
  assert_int_equal(run(f, fopt, NULL, NULL, &r), 1);
  assert_string_equal(r.out, "outer\ninner\n1\n");
  snprintf(want, sizeof want, "Error: %s:3:5: unknown column \"NOSUCH\"\n", inner2);
  expect_in(&r, r.err, want);
  expect_not_in(&r, r.err, "BAD2");
  sh_result_free(&r);

  /* Standard input is "stdin"; a syntax error keeps its token and expected list. */
  const char *script = "SELECT 1;\nSELECT K FROM T WHERE K = ;\n";
  assert_int_equal(run(f, list, NULL, script, &r), 1);
  expect_in(&r, r.err, "Error: stdin:2:27: syntax error near \";\"; expected");
  sh_result_free(&r);

  /* Arguments and -cmd keep the engine's message as it is (no file to name). */
  const char *args[] = {"SELECT NOSUCH FROM T", NULL};
  assert_int_equal(run(f, list, args, NULL, &r), 1);
  expect_in(&r, r.err, "Error: unknown column \"NOSUCH\" at line 1, column 8\n");
  sh_result_free(&r);
}

/* A block comment over several lines at the top of a script (or between statements) is a
** comment: its lines are not statements, and a line in it that starts with '.' is not a dot
** command. */
static void test_block_comment_lines(void **state) {
  fixture *f = *state;
  const char *script = "/* load.sql: a header\n"
                       "   over two lines */\n"
                       "SELECT K FROM T WHERE K = 1;\n"
                       "/*\n"
                       ".mode csv\n"
                       "*/ SELECT K, NAME FROM T WHERE K = 2;\n"
                       "/**/\n"
                       "SELECT K, NOPE FROM T;\n";
  const char *list[] = {"-list", NULL};
  sh_result r;
  assert_int_equal(run(f, list, NULL, script, &r), 1);
  assert_string_equal(r.out, "1\n2|two\n");
  if (!strstr(r.err, "Error: stdin:8:11: unknown column \"NOPE\"\n")) sh_dump(&r);
  assert_true(strncmp(r.err, "Error: stdin:8:11: unknown column \"NOPE\"\n", 41) == 0);
  sh_result_free(&r);
}

/* A script saved by a Windows editor: a UTF-8 byte-order mark before its first line and
** CR LF line ends; a dot command on the first line still works. */
static void test_script_bom_crlf(void **state) {
  fixture *f = *state;
  char path[700];
  snprintf(path, sizeof path, "%s/win.sql", f->dir);
  sh_write_file(path, "\xEF\xBB\xBF.mode csv\r\nSELECT K, NAME FROM T WHERE K = 1;\r\n"
                      "SELECT K,\r\n  NOPE FROM T;\r\n");
  const char *fopt[] = {"-f", path, NULL};
  sh_result r;
  assert_int_equal(run(f, fopt, NULL, NULL, &r), 1);
  assert_string_equal(r.out, "1,one\r\n");
  char want[1000];
  snprintf(want, sizeof want, "Error: %s:4:3: unknown column \"NOPE\"\n    NOPE FROM T;\n    ^\n",
           path);
  if (strncmp(r.err, want, strlen(want)) != 0) sh_dump(&r);
  assert_true(strncmp(r.err, want, strlen(want)) == 0);
  sh_result_free(&r);
}

/* Two slips with a hint: a string in double quotes (a column name in SQL), and a script
** file given as an argument (run as SQL). */
static void test_hints_for_slips(void **state) {
  fixture *f = *state;
  sh_result r;
  const char *dq[] = {"SELECT K FROM T WHERE NAME = \"one\"", NULL};
  assert_int_equal(run(f, NULL, dq, NULL, &r), 1);
  expect_in(&r, r.err, "unknown column \"one\"");
  expect_in(&r, r.err, "a string takes single quotes: 'one')\n");
  sh_result_free(&r);
  char path[700];
  snprintf(path, sizeof path, "%s/script.sql", f->dir);
  sh_write_file(path, "SELECT 1;\n");
  const char *file[] = {path, NULL};
  assert_int_equal(run(f, NULL, file, NULL, &r), 1);
  char want[2200];
  snprintf(want, sizeof want, "(%s is a file: to run it, use -f %s or .read %s)\n", path, path,
           path);
  expect_in(&r, r.err, want);
  sh_result_free(&r);
  /* no hint for an ordinary error */
  const char *plain[] = {"SELECT NOSUCH FROM T", NULL};
  assert_int_equal(run(f, NULL, plain, NULL, &r), 1);
  expect_not_in(&r, r.err, "(");
  sh_result_free(&r);
}

/* A transaction left open at exit is rolled back (as in sqlite3): the shell says so. */
static void test_open_transaction_warning(void **state) {
  fixture *f = *state;
  sh_result r;
  const char *open_txn[] = {"BEGIN", "UPSERT INTO T VALUES (90, 'lost', 0)", NULL};
  assert_int_equal(run(f, NULL, open_txn, NULL, &r), 0);
  expect_in(&r, r.err, "Warning: a transaction (BEGIN) was still open at exit: its writes "
                       "were rolled back; end it with COMMIT\n");
  sh_result_free(&r);
  const char *list[] = {"-list", NULL};
  const char *check[] = {"SELECT COUNT(*) FROM T WHERE K = 90", NULL};
  assert_int_equal(run(f, list, check, NULL, &r), 0);
  assert_string_equal(r.out, "0\n");
  sh_result_free(&r);
  /* ended by COMMIT or ROLLBACK (any case, in a script): no warning */
  const char *script = "begin;\nUPSERT INTO T VALUES (90, 'kept', 0);\ncommit;\n"
                       "BEGIN; DELETE FROM T WHERE K = 90; ROLLBACK;\n";
  assert_int_equal(run(f, list, NULL, script, &r), 0);
  assert_string_equal(r.err, "");
  sh_result_free(&r);
  assert_int_equal(run(f, list, check, NULL, &r), 0);
  assert_string_equal(r.out, "1\n");
  sh_result_free(&r);
  const char *cleanup[] = {"DELETE FROM T WHERE K = 90", NULL};
  assert_int_equal(run(f, NULL, cleanup, NULL, &r), 0);
  sh_result_free(&r);
}

/* .check fails (exit status 1) when the index and its table disagree, and passes when
** they agree; the CHECK INDEX statement itself succeeds either way. An IMMUTABLE_ROWS table
** whose indexed value is rewritten keeps a stale index row (docs/INDEXES.md). */
static void test_check_fails_on_problems(void **state) {
  fixture *f = *state;
  sh_result r;
  const char *list[] = {"-list", NULL};
  const char *make[] = {"CREATE TABLE IM (K INTEGER NOT NULL PRIMARY KEY, V VARCHAR) "
                        "IMMUTABLE_ROWS = TRUE",
                        "CREATE INDEX IMV ON IM (V)", "UPSERT INTO IM VALUES (1, 'a'), (2, 'c')",
                        ".check IMV IM", NULL};
  assert_int_equal(run(f, list, make, NULL, &r), 0);
  expect_in(&r, r.out, "EXTRA|0\n");
  sh_result_free(&r);
  const char *stale[] = {"UPSERT INTO IM VALUES (1, 'b')", ".check IMV IM", "SELECT 'after'",
                         NULL};
  assert_int_equal(run(f, list, stale, NULL, &r), 1);
  expect_in(&r, r.out, "EXTRA|1\n");
  expect_in(&r, r.out, "after\n");
  expect_in(&r, r.err, "Error: .check: 1 problem between index IMV and table IM");
  sh_result_free(&r);
  const char *sql[] = {"CHECK INDEX IMV ON IM", NULL};
  assert_int_equal(run(f, list, sql, NULL, &r), 0);
  sh_result_free(&r);
  const char *drop[] = {"DROP TABLE IM", NULL};
  assert_int_equal(run(f, NULL, drop, NULL, &r), 0);
  sh_result_free(&r);
}

/* A multi-row UPSERT's error names the row and column (exec/write.c), and in a script the
** position is the failing value's line and column in the file. */
static void test_upsert_row_in_script(void **state) {
  fixture *f = *state;
  char path[700];
  snprintf(path, sizeof path, "%s/rows.sql", f->dir);
  sh_write_file(path, "UPSERT INTO T VALUES\n"
                      "  (40, 'a', 1.5),\n"
                      "  (41, 'b', 'warm'),\n"
                      "  (42, 'c', 3.5);\n");
  const char *fopt[] = {"-f", path, NULL};
  sh_result r;
  assert_int_equal(run(f, fopt, NULL, NULL, &r), 1);
  char want[1000];
  snprintf(want, sizeof want, "Error: %s:3:13: row 2, column TEMP: invalid DOUBLE 'warm'\n"
           "    (41, 'b', 'warm'),\n"
           "              ^\n", path);
  expect_in(&r, r.err, want);
  sh_result_free(&r);
  /* the statement wrote nothing */
  const char *list[] = {"-list", NULL};
  const char *check[] = {"SELECT COUNT(*) FROM T WHERE K >= 40", NULL};
  assert_int_equal(run(f, list, check, NULL, &r), 0);
  assert_string_equal(r.out, "0\n");
  sh_result_free(&r);
}

/* ---- .help -------------------------------------------------------------------------------- */

/* The dot commands named in the first column of docs/SHELL.md's "Dot commands" table, as
** one string of "\n.name\n" entries. */
static char *doc_commands(void) {
  char path[1024];
  snprintf(path, sizeof path, "%s/docs/SHELL.md", ROWAN_SOURCE_DIR);
  char *doc = sh_read_file(path);
  assert_non_null(doc);
  const char *sec = strstr(doc, "## Dot commands");
  assert_non_null(sec);
  const char *end = strstr(sec + 1, "\n## ");
  if (!end) end = sec + strlen(sec);
  char *names = calloc(1, 4096);
  size_t n = 0;
  names[n++] = '\n';
  for (const char *p = sec; p && p < end; p = strchr(p, '\n')) {
    while (*p == '\n') p++;
    if (strncmp(p, "| `.", 4) != 0) continue;
    /* "| `.quit`, `.exit` | ..." names two */
    const char *cell_end = strstr(p + 1, " |");
    for (const char *q = p; q && q < cell_end; q = strstr(q + 1, "`.")) {
      if (q[0] != '`') continue;
      const char *w = q + 1;
      size_t len = strcspn(w, " `");
      if (n + len + 2 < 4096) {
        memcpy(names + n, w, len);
        n += len;
        names[n++] = '\n';
      }
    }
  }
  free(doc);
  return names;
}

static void test_help_sorted_one_line(void **state) {
  fixture *f = *state;
  const char *cmds[] = {".help", NULL};
  sh_result r;
  assert_int_equal(run(f, NULL, cmds, NULL, &r), 0);
  char *docs = doc_commands();
  char prev[64] = "";
  int lines = 0;
  char listed[4096] = "\n";
  for (char *p = r.out; *p;) {
    char *e = strchr(p, '\n');
    assert_non_null(e);
    *e = 0;
    /* every line is one command: its name, its arguments, what it does */
    if (p[0] != '.') fprintf(stderr, "not a command line: \"%s\"\n", p);
    assert_int_equal(p[0], '.');
    assert_true(strlen(p) <= 100);
    char name[64];
    size_t len = strcspn(p, " ");
    assert_true(len < sizeof name);
    memcpy(name, p, len);
    name[len] = 0;
    /* sorted by name; the description is one or more words after the usage */
    if (strcmp(prev, name) > 0) fprintf(stderr, "%s listed after %s\n", name, prev);
    assert_true(strcmp(prev, name) <= 0);
    assert_non_null(strstr(p, "  "));
    char key[80];
    snprintf(key, sizeof key, "\n%s\n", name);
    if (strcmp(prev, name) != 0) strncat(listed, key + 1, sizeof listed - strlen(listed) - 1);
    if (!strstr(docs, key)) fprintf(stderr, "%s is not in docs/SHELL.md's table\n", name);
    assert_non_null(strstr(docs, key));
    snprintf(prev, sizeof prev, "%s", name);
    lines++;
    p = e + 1;
  }
  assert_true(lines >= 20);
  /* and every command of the docs' table is listed (.exit and .quit each have a line) */
  for (char *p = docs + 1; *p;) {
    char *e = strchr(p, '\n');
    char key[80];
    snprintf(key, sizeof key, "\n%.*s\n", (int)(e - p), p);
    if (!strstr(listed, key)) fprintf(stderr, "%.*s is not in .help\n", (int)(e - p), p);
    assert_non_null(strstr(listed, key));
    p = e + 1;
  }
  free(docs);
  sh_result_free(&r);

  /* .help COMMAND (with or without its dot) gives the details. */
  const char *more[] = {".help import", ".help .raw", NULL};
  assert_int_equal(run(f, NULL, more, NULL, &r), 0);
  expect_in(&r, r.out, ".import [OPTIONS] FILE... TABLE\n");
  expect_in(&r, r.out, "--bulk");
  expect_in(&r, r.out, "--max-errors N");
  expect_in(&r, r.out, ".raw get TABLE KEY\n");
  expect_in(&r, r.out, ".raw scan TABLE");
  expect_in(&r, r.out, "--versions N");
  sh_result_free(&r);
  const char *bad[] = {".help nosuch", NULL};
  assert_int_equal(run(f, NULL, bad, NULL, &r), 1);
  expect_in(&r, r.err, "no command \".nosuch\"");
  sh_result_free(&r);
}

/* ---- statements Rowan does not have ------------------------------------------------------ */

static void test_unsupported_statements(void **state) {
  fixture *f = *state;
  sh_result r;
  const char *ins[] = {"INSERT INTO T VALUES (3, 'c', 3.5)", NULL};
  assert_int_equal(run(f, NULL, ins, NULL, &r), 1);
  assert_string_equal(r.err, "Error: syntax error near \"INSERT\" at line 1, column 1: "
                             "INSERT is not supported: use UPSERT\n"
                             "  INSERT INTO T VALUES (3, 'c', 3.5)\n"
                             "  ^\n");
  sh_result_free(&r);
  /* the caret under the join's first word, not under the token the grammar refused */
  const char *join[] = {"SELECT * FROM T a RIGHT JOIN T b USING (K)", NULL};
  assert_int_equal(run(f, NULL, join, NULL, &r), 1);
  expect_in(&r, r.err, "at line 1, column 19\n"
                       "  SELECT * FROM T a RIGHT JOIN T b USING (K)\n"
                       "                    ^\n");
  expect_in(&r, r.err, "RIGHT JOIN ... USING is not supported yet");
  sh_result_free(&r);
  /* in a script: the file position, and the statements around it still run */
  const char *script = "SELECT 1;\nUPDATE T SET NAME = 'x' WHERE K = 1;\n"
                       "ALTER INDEX I ON T REBUILD;\nSELECT 2;\n";
  const char *list[] = {"-list", NULL};
  assert_int_equal(run(f, list, NULL, script, &r), 1);
  assert_string_equal(r.out, "1\n2\n");
  expect_in(&r, r.err, "Error: stdin:2:1: syntax error near \"UPDATE\": UPDATE is not supported: "
                       "use UPSERT ... SELECT or UPSERT with the key\n");
  expect_in(&r, r.err, "Error: stdin:3:1: syntax error near \"ALTER\": ALTER INDEX is not "
                       "supported: drop and recreate the index\n");
  sh_result_free(&r);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_import_rejects_fail),
      cmocka_unit_test(test_script_errors_name_file),
      cmocka_unit_test(test_block_comment_lines),
      cmocka_unit_test(test_script_bom_crlf),
      cmocka_unit_test(test_hints_for_slips),
      cmocka_unit_test(test_open_transaction_warning),
      cmocka_unit_test(test_check_fails_on_problems),
      cmocka_unit_test(test_upsert_row_in_script),
      cmocka_unit_test(test_help_sorted_one_line),
      cmocka_unit_test(test_unsupported_statements),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
