/*
** tests/cli/test_shell_errors.c: the `rowan` shell's errors and teaching note: exit status
** with and without -bail (arguments, stdin scripts, dot commands), the error message with
** the statement line and a caret under the error position (single- and multi-line
** statements, "stdin:LINE:COLUMN:" in scripts), a database that cannot be opened, and the note
** after a FULL SCAN that examined over 1,000 rows and over 100 times the rows returned
** (named leading key column; silenced by .hints off; absent for key-bounded queries and
** statements without WHERE), and the -joinmemory, -indexmemory and -cachesize options.
** Drives the built binary.
*/
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <dirent.h>
#include <setjmp.h>
#include <cmocka.h>
#include <sys/stat.h>

#include "test_shell_util.h"
#include "testutil.h"

typedef sh_fixture fixture;

static int setup(void **state) {
  /* BIG (GRP, ID) with V = ID % 50: a filter on V alone is a full scan. 15,000 rows in ten
  ** statements (one command-line argument each): the note needs more than 1,000 rows
  ** examined, and the planner prefers a skip scan over the GRP prefixes only when the table
  ** spans several blocks (the rows are in a store file once the loading process closed). */
  enum { PARTS = 10, PER = 1500 };
  char *load[PARTS] = {0};
  const char *cmds[PARTS + 4] = {
      "CREATE TABLE T (K INTEGER NOT NULL, NAME VARCHAR, CONSTRAINT PK PRIMARY KEY (K))",
      "UPSERT INTO T VALUES (1, 'one'), (2, 'two')",
      "CREATE TABLE BIG (GRP INTEGER NOT NULL, ID INTEGER NOT NULL, V INTEGER, "
      "CONSTRAINT PK PRIMARY KEY (GRP, ID))"};
  size_t cap = (size_t)PER * 40 + 256;
  int ok = 1;
  for (int p = 0; p < PARTS && ok; p++) {
    load[p] = malloc(cap);
    if (!load[p]) {
      ok = 0;
      break;
    }
    size_t o = (size_t)snprintf(load[p], cap, "UPSERT INTO BIG VALUES ");
    for (int j = 0; j < PER; j++) {
      int i = p * PER + j;
      o += (size_t)snprintf(load[p] + o, cap - o, "%s(%d, %d, %d)", j ? ", " : "", i % 7, i,
                            i % 50);
    }
    cmds[3 + p] = load[p];
  }
  sh_fixture *f = ok ? sh_fixture_new(cmds) : NULL;
  for (int p = 0; p < PARTS; p++) free(load[p]);
  if (!f) return -1;
  f->n_rows = PARTS * PER;
  *state = f;
  return 0;
}

static int teardown(void **state) {
  sh_fixture_free(*state);
  return 0;
}

/* Run with opts, the database, then cmds (both NULL-terminated; opts may be NULL). */
static int run(fixture *f, const char *const *opts, const char *const *cmds, const char *in,
               sh_result *r) {
  return sh_run_db(f, opts, cmds, in, r);
}
static void test_exit_status_arguments(void **state) {
  fixture *f = *state;
  sh_result r;
  const char *ok[] = {"-list", "SELECT K FROM T WHERE K = 1", NULL};
  const char *ok_cmds[] = {ok[1], NULL};
  const char *list[] = {"-list", NULL};
  assert_int_equal(run(f, list, ok_cmds, NULL, &r), 0);
  assert_string_equal(r.out, "1\n");
  sh_result_free(&r);
  /* Without -bail: the failing statement is reported, the next one still runs, status 1. */
  const char *bad[] = {"SELECT NOSUCH FROM T", "SELECT K FROM T WHERE K = 2", NULL};
  assert_int_equal(run(f, list, bad, NULL, &r), 1);
  assert_string_equal(r.out, "2\n");
  assert_non_null(strstr(r.err, "NOSUCH"));
  sh_result_free(&r);
  /* With -bail: nothing after the first error runs. */
  const char *bail[] = {"-list", "-bail", NULL};
  assert_int_equal(run(f, bail, bad, NULL, &r), 1);
  assert_string_equal(r.out, "");
  sh_result_free(&r);
  /* A failing dot command counts too, and -bail stops there. */
  const char *dot[] = {".nosuchcommand", "SELECT K FROM T WHERE K = 1", NULL};
  assert_int_equal(run(f, list, dot, NULL, &r), 1);
  assert_string_equal(r.out, "1\n");
  assert_non_null(strstr(r.err, "unknown command \".nosuchcommand\""));
  sh_result_free(&r);
  assert_int_equal(run(f, bail, dot, NULL, &r), 1);
  assert_string_equal(r.out, "");
  sh_result_free(&r);
}

static void test_exit_status_stdin(void **state) {
  fixture *f = *state;
  sh_result r;
  const char *script = "SELECT K FROM T WHERE K = 1;\nSELECT K FROM T WHERE K = ;\n"
                       "SELECT K FROM T WHERE K = 2;\n";
  const char *list[] = {"-list", NULL};
  assert_int_equal(run(f, list, NULL, script, &r), 1);
  assert_string_equal(r.out, "1\n2\n");
  sh_result_free(&r);
  const char *bail[] = {"-list", "-bail", NULL};
  assert_int_equal(run(f, bail, NULL, script, &r), 1);
  assert_string_equal(r.out, "1\n");
  sh_result_free(&r);
  /* .bail on inside the script works as -bail. */
  char with_bail[512];
  snprintf(with_bail, sizeof with_bail, ".bail on\n%s", script);
  assert_int_equal(run(f, list, NULL, with_bail, &r), 1);
  assert_string_equal(r.out, "1\n");
  sh_result_free(&r);
  /* Several statements on one line: the failing one does not stop the others. */
  const char *line = "SELECT K FROM T WHERE K = 1; SELECT X FROM T; SELECT K FROM T WHERE K = 2;\n";
  assert_int_equal(run(f, list, NULL, line, &r), 1);
  assert_string_equal(r.out, "1\n2\n");
  sh_result_free(&r);
}

static void test_error_caret_single_line(void **state) {
  fixture *f = *state;
  sh_result r;
  const char *cmds[] = {"SELECT NOSUCH FROM T", NULL};
  assert_int_equal(run(f, NULL, cmds, NULL, &r), 1);
  /* The caret sits under the N of NOSUCH: 2 spaces of indent plus 7 characters. */
  assert_non_null(strstr(r.err, "\n  SELECT NOSUCH FROM T\n         ^\n"));
  assert_true(strncmp(r.err, "Error: ", 7) == 0);
  sh_result_free(&r);
  /* A syntax error at the end: the caret is just past the last character. */
  const char *cmds2[] = {"SELECT K FROM T WHERE", NULL};
  assert_int_equal(run(f, NULL, cmds2, NULL, &r), 1);
  assert_non_null(strstr(r.err, "\n  SELECT K FROM T WHERE\n                       ^\n"));
  sh_result_free(&r);
  /* Non-ASCII text before the error: one column per character. */
  const char *cmds3[] = {"SELECT '\xc3\xa9\xc3\xa9', NOSUCH FROM T", NULL};
  assert_int_equal(run(f, NULL, cmds3, NULL, &r), 1);
  assert_non_null(strstr(r.err, "\n  SELECT '\xc3\xa9\xc3\xa9', NOSUCH FROM T\n               ^\n"));
  sh_result_free(&r);
}

static void test_error_caret_multi_line_script(void **state) {
  fixture *f = *state;
  sh_result r;
  const char *script = "SELECT K FROM T WHERE K = 1;\n"
                       "SELECT K,\n"
                       "   NOSUCH\n"
                       "FROM T;\n";
  assert_int_equal(run(f, NULL, NULL, script, &r), 1);
  /* The input's line and column of the error, and only that line of the statement. */
  assert_non_null(strstr(r.err, "Error: stdin:3:4: unknown column \"NOSUCH\"\n"));
  assert_non_null(strstr(r.err, "\n     NOSUCH\n     ^\n"));
  assert_null(strstr(r.err, "FROM T"));
  sh_result_free(&r);
}

static void test_open_failure(void **state) {
  fixture *f = *state;
  char path[700];
  snprintf(path, sizeof path, "%s/afile", f->dir);
  sh_write_file(path, "not a directory\n");
  const char *args[] = {path, "SELECT 1", NULL};
  sh_result r;
  assert_int_equal(sh_run(f->dir, args, NULL, &r), 1);
  assert_non_null(strstr(r.err, "cannot open"));
  sh_result_free(&r);
  const char *args2[] = {NULL};
  assert_int_equal(sh_run(f->dir, args2, NULL, &r), 1);
  assert_non_null(strstr(r.err, "missing DBDIR"));
  sh_result_free(&r);
  /* a new database in a directory that does not exist: refused, nothing created */
  char deep[760], parent[740];
  snprintf(parent, sizeof parent, "%s/no/such", f->dir);
  snprintf(deep, sizeof deep, "%s/db", parent);
  const char *args3[] = {deep, "SELECT 1", NULL};
  assert_int_equal(sh_run(f->dir, args3, NULL, &r), 1);
  assert_non_null(strstr(r.err, "does not exist"));
  sh_result_free(&r);
  struct stat st;
  assert_int_not_equal(stat(parent, &st), 0);
}

/* -joinmemory: the bound a hash join spills past (EXPLAIN ANALYZE says so), and a bad value
** refused before anything runs. */
static void test_join_memory_option(void **state) {
  fixture *f = *state;
  sh_result r;
  const char *setup[] = {f->db, "CREATE TABLE J (K INTEGER PRIMARY KEY, B INTEGER)",
                         "UPSERT INTO J VALUES (1, 1), (2, 1), (3, 2), (4, 2), (5, 3), (6, 1)",
                         NULL};
  assert_int_equal(sh_run(f->dir, setup, NULL, &r), 0);
  sh_result_free(&r);
  const char *q = "EXPLAIN ANALYZE SELECT COUNT(*) FROM J A JOIN J B ON A.B = B.B";
  const char *small[] = {"-joinmemory", "1K", f->db, q, "SELECT COUNT(*) FROM J A JOIN J B "
                         "ON A.B = B.B", NULL};
  assert_int_equal(sh_run(f->dir, small, NULL, &r), 0);
  assert_non_null(strstr(r.out, " in 64 partitions, "));
  assert_non_null(strstr(r.out, "|       14 |")); /* 3 x 3 + 2 x 2 + 1 */
  sh_result_free(&r);
  const char *dflt[] = {f->db, q, NULL};
  assert_int_equal(sh_run(f->dir, dflt, NULL, &r), 0);
  assert_null(strstr(r.out, "spilled="));
  sh_result_free(&r);
  const char *bad[] = {"-joinmemory", "12Q", f->db, "SELECT 1", NULL};
  assert_int_equal(sh_run(f->dir, bad, NULL, &r), 1);
  assert_non_null(strstr(r.err, "-joinmemory wants a byte count such as 65536, 64K or 64M, "
                                "not \"12Q\""));
  assert_string_equal(r.out, "");
  sh_result_free(&r);
}

/* -indexmemory: past the bound the store files are opened with paged block indexes (.keymap
** says how many), the answers the same; "none" and the default page nothing; -cachesize
** sets the block cache; bad values are refused before anything runs. */
static void test_index_memory_option(void **state) {
  fixture *f = *state;
  sh_result r;
  const char *q = "SELECT COUNT(*), SUM(V), MIN(ID), MAX(ID) FROM BIG WHERE GRP = 3 AND ID > 700";
  char km[4200];
  snprintf(km, sizeof km, ".keymap BIG %s/keys.svg", f->dir);
  const char *dflt[] = {"-list", f->db, km, q, NULL};
  assert_int_equal(sh_run(f->dir, dflt, NULL, &r), 0);
  assert_null(strstr(r.out, "paged block index"));
  char *want = strdup(r.out);
  sh_result_free(&r);
  assert_non_null(want);
  /* the query's answer: the last line, "count|sum|min|max" */
  char *last = want + strlen(want) - 1;
  while (last > want && last[-1] != '\n') last--;
  assert_non_null(strstr(last, "|"));
  const char *one[] = {"-list", "-indexmemory", "1", "-cachesize", "1M", f->db, km, q, NULL};
  assert_int_equal(sh_run(f->dir, one, NULL, &r), 0);
  if (!strstr(r.out, "with a paged block index")) sh_dump(&r);
  assert_non_null(strstr(r.out, "with a paged block index (past the index memory)"));
  assert_non_null(strstr(r.out, last));
  sh_result_free(&r);
  const char *none[] = {"-list", "-indexmemory", "none", f->db, km, q, NULL};
  assert_int_equal(sh_run(f->dir, none, NULL, &r), 0);
  assert_null(strstr(r.out, "paged block index"));
  assert_non_null(strstr(r.out, last));
  sh_result_free(&r);
  free(want);
  const char *bad[] = {"-indexmemory", "12Q", f->db, "SELECT 1", NULL};
  assert_int_equal(sh_run(f->dir, bad, NULL, &r), 1);
  assert_non_null(strstr(r.err, "-indexmemory wants a byte count such as 65536, 64K or 64M, or "
                                "\"none\", not \"12Q\""));
  assert_string_equal(r.out, "");
  sh_result_free(&r);
  const char *bad_cache[] = {"-cachesize", "0", f->db, "SELECT 1", NULL};
  assert_int_equal(sh_run(f->dir, bad_cache, NULL, &r), 1);
  assert_non_null(strstr(r.err, "-cachesize wants a byte count such as 65536, 64K or 64M, "
                                "not \"0\""));
  sh_result_free(&r);
}

static void test_teaching_note(void **state) {
  fixture *f = *state;
  sh_result r;
  /* V is not in the key: every row is examined to return a few. (RANGE_SCAN: without it
  ** the planner answers ID < 100 with a skip scan by prefix, which examines few rows and
  ** gets no note: checked at the end.) */
  const char *cmds[] = {"SELECT /*+ RANGE_SCAN */ ID FROM BIG WHERE V = 7 AND ID < 100", NULL};
  const char *list[] = {"-list", NULL};
  assert_int_equal(run(f, list, cmds, NULL, &r), 0);
  assert_string_equal(r.out, "7\n57\n");
  char want[128];
  snprintf(want, sizeof want, "Note: a FULL SCAN over BIG examined %d rows to return 2.", f->n_rows);
  if (!strstr(r.err, want)) sh_dump(&r);
  assert_non_null(strstr(r.err, want));
  assert_non_null(strstr(r.err, "leading key column GRP"));
  sh_result_free(&r);
  /* .hints off silences it; the result is the same. */
  const char *off[] = {".hints off", cmds[0], NULL};
  assert_int_equal(run(f, list, off, NULL, &r), 0);
  assert_string_equal(r.out, "7\n57\n");
  assert_string_equal(r.err, "");
  sh_result_free(&r);
  /* A query bounded by the leading key column gets no note. */
  const char *keyed[] = {"SELECT ID FROM BIG WHERE GRP = 0 AND V = 7 AND ID < 100", NULL};
  assert_int_equal(run(f, list, keyed, NULL, &r), 0);
  assert_string_equal(r.out, "7\n");
  assert_string_equal(r.err, "");
  sh_result_free(&r);
  /* Nor a statement without WHERE (it asked for every row), nor one that returns most of
  ** what it reads. */
  const char *nowhere[] = {"SELECT COUNT(*) FROM BIG", "SELECT COUNT(*) FROM BIG WHERE V >= 0",
                           NULL};
  assert_int_equal(run(f, list, nowhere, NULL, &r), 0);
  assert_string_equal(r.err, "");
  sh_result_free(&r);
  /* Nor the first query left to the planner: a skip scan on each GRP prefix reads only the
  ** rows with ID < 100. */
  const char *skip[] = {"SELECT ID FROM BIG WHERE V = 7 AND ID < 100", NULL};
  assert_int_equal(run(f, list, skip, NULL, &r), 0);
  assert_string_equal(r.out, "7\n57\n");
  assert_string_equal(r.err, "");
  sh_result_free(&r);
}

/* With an index whose first column the WHERE clause names, the note names that index. */
static void test_teaching_note_names_index(void **state) {
  fixture *f = *state;
  sh_result r;
  const int n = 1500; /* more than the 1,000 rows the note needs; one command-line argument */
  size_t cap = (size_t)n * 40 + 256;
  char *load = malloc(cap);
  size_t o = (size_t)snprintf(load, cap, "UPSERT INTO IDX VALUES ");
  for (int i = 0; i < n; i++)
    o += (size_t)snprintf(load + o, cap - o, "%s(%d, %d, %d)", i ? ", " : "", i % 7, i, i % 50);
  const char *cmds[] = {"CREATE TABLE IDX (GRP INTEGER NOT NULL, ID INTEGER NOT NULL, "
                        "V INTEGER, CONSTRAINT PK PRIMARY KEY (GRP, ID))",
                        "CREATE INDEX IDX_V ON IDX (V)", load,
                        "SELECT /*+ NO_INDEX RANGE_SCAN */ ID FROM IDX WHERE V = 7 AND ID < 100",
                        NULL};
  const char *list[] = {"-list", NULL};
  int st = run(f, list, cmds, NULL, &r);
  free(load);
  if (st != 0) sh_dump(&r);
  assert_int_equal(st, 0);
  assert_string_equal(r.out, "7\n57\n");
  assert_non_null(strstr(r.err, "Note: a FULL SCAN over IDX examined"));
  assert_non_null(strstr(r.err, "The index IDX_V on (V) could serve this WHERE clause"));
  /* the statement itself turned the index off: the note says so, and does not suggest the
  ** hint back */
  assert_non_null(strstr(r.err, "the NO_INDEX hint kept the planner off it"));
  assert_null(strstr(r.err, "try the hint"));
  assert_null(strstr(r.err, "leading key column"));
  sh_result_free(&r);
}

/* A record cut short at the end of the log (a crash mid-write): the shell says how many
** bytes of which segment the open dropped, and answers from every committed row. */
static void test_torn_log_warning(void **state) {
  fixture *f = *state;
  DIR *d = opendir(f->db);
  assert_non_null(d);
  struct dirent *e;
  unsigned long long top = 0;
  char seg[900] = "";
  while ((e = readdir(d)) != NULL) {
    if (strncmp(e->d_name, "wal-", 4) != 0) continue;
    unsigned long long n = strtoull(e->d_name + 4, NULL, 10);
    if (n >= top) {
      top = n;
      snprintf(seg, sizeof seg, "%s/%s", f->db, e->d_name);
    }
  }
  closedir(d);
  assert_true(seg[0] != 0);
  FILE *w = fopen(seg, "ab");
  assert_non_null(w);
  assert_int_equal(fwrite("\x21\0\0\0torn", 1, 8, w), 8);
  fclose(w);
  const char *cmds[] = {"SELECT K FROM T WHERE K = 2", NULL};
  const char *list[] = {"-list", NULL};
  sh_result r;
  assert_int_equal(run(f, list, cmds, NULL, &r), 0);
  assert_string_equal(r.out, "2\n");
  char want[1000];
  snprintf(want, sizeof want, "rowan: warning: 8 bytes dropped from the end of the log segment %s",
           seg);
  if (!strstr(r.err, want)) sh_dump(&r);
  assert_non_null(strstr(r.err, want));
  sh_result_free(&r);
  /* dropped once: the segment was truncated to its last whole record */
  assert_int_equal(run(f, list, cmds, NULL, &r), 0);
  assert_string_equal(r.err, "");
  sh_result_free(&r);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_exit_status_arguments),
      cmocka_unit_test(test_exit_status_stdin),
      cmocka_unit_test(test_error_caret_single_line),
      cmocka_unit_test(test_error_caret_multi_line_script),
      cmocka_unit_test(test_open_failure),
      cmocka_unit_test(test_join_memory_option),
      cmocka_unit_test(test_index_memory_option),
      cmocka_unit_test(test_teaching_note),
      cmocka_unit_test(test_teaching_note_names_index),
      cmocka_unit_test(test_torn_log_warning),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
