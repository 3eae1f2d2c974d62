/*
** tests/cli/test_shell_asof.c: the shell's read time (.asof, docs/SHELL.md) and
** ROW_TIMESTAMP in .schema: .asof TIME reads each table as it was at TIME (the value before
** an UPDATE, a deleted row back), refuses writes and DDL until .asof off, shows the time set;
** bad times and times older than the look-back window fail with a message; the raw view
** (.raw scan --versions) still shows every version the store keeps while a time is set; and
** .schema prints a ROW_TIMESTAMP column so that the DDL recreates it; .import stamps each
** row's cells with its ROW_TIMESTAMP value and rejects a row before 1970. Drives the built
** binary; the times are the wall clock's (commits are stamped with it).
*/
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <time.h>

#include "test_shell_util.h"

/* The wall clock as "YYYY-MM-DD HH:MM:SS.mmm" (UTC). */
static void now_text(char *buf, size_t cap) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  struct tm tm;
  gmtime_r(&ts.tv_sec, &tm);
  char s[32];
  strftime(s, sizeof s, "%Y-%m-%d %H:%M:%S", &tm);
  snprintf(buf, cap, "%s.%03ld", s, ts.tv_nsec / 1000000);
}

static void pause_ms(long ms) {
  struct timespec d = {0, ms * 1000000L};
  nanosleep(&d, NULL);
}

static void asof_reads_the_past(void **state) {
  (void)state;
  const char *setup[] = {"CREATE TABLE T (K INTEGER PRIMARY KEY, V VARCHAR) VERSIONS = 3",
                         "UPSERT INTO T VALUES (1, 'one'), (2, 'two')", NULL};
  sh_fixture *f = sh_fixture_new(setup);
  assert_non_null(f);
  pause_ms(20);
  char then[64];
  now_text(then, sizeof then);
  pause_ms(20);
  const char *change[] = {"UPSERT INTO T VALUES (1, 'uno')", "DELETE FROM T WHERE K = 2", NULL};
  sh_result r;
  assert_int_equal(sh_run_db(f, NULL, change, NULL, &r), 0);
  sh_result_free(&r);
  char set[128], script[1024];
  snprintf(set, sizeof set, ".asof %s", then);
  snprintf(script, sizeof script,
           "%s\n"
           "SELECT K, V FROM T ORDER BY K;\n"
           ".raw scan T --family 0 --versions 3\n"
           ".asof off\n"
           "SELECT K, V FROM T ORDER BY K;\n"
           ".asof\n",
           set);
  const char *opts[] = {"-csv", NULL};
  assert_int_equal(sh_run_db(f, opts, NULL, script, &r), 0);
  if (r.err[0]) sh_dump(&r);
  assert_string_equal(r.err, "");
  /* the past, then the raw view with both versions of K 1 (and not row 2: deleted now),
     then the present */
  const char *past = strstr(r.out, "1,one\r\n2,two\r\n"); /* CSV lines end in CRLF */
  if (!past) sh_dump(&r);
  assert_non_null(past);
  const char *raw = strstr(past, "value 756e6f = uno");
  assert_non_null(raw);
  assert_non_null(strstr(raw, "value 6f6e65 = one"));
  const char *present = strstr(raw, "1,uno\r\n");
  assert_non_null(present);
  assert_null(strstr(present, "2,two"));
  assert_non_null(strstr(present, "off (the present)\n"));
  sh_result_free(&r);
  /* while set: writes and DDL are refused, .asof shows the time */
  snprintf(script, sizeof script,
           "%s\n.asof\nUPSERT INTO T VALUES (3, 'three');\nCREATE TABLE U (K INTEGER PRIMARY KEY);\n",
           set);
  assert_int_not_equal(sh_run_db(f, NULL, NULL, script, &r), 0);
  char shown[128];
  snprintf(shown, sizeof shown, "%s UTC\n", then);
  assert_string_equal(r.out, shown);
  assert_non_null(strstr(r.err, "stdin:3: the connection reads as of"));
  assert_non_null(strstr(r.err, "stdin:4: the connection reads as of"));
  assert_non_null(strstr(r.err, "writes and DDL are refused"));
  sh_result_free(&r);
  const char *check[] = {"SELECT COUNT(*) FROM T", NULL};
  assert_int_equal(sh_run_db(f, NULL, check, NULL, &r), 0);
  assert_non_null(strstr(r.out, "1"));
  sh_result_free(&r);
  sh_fixture_free(f);
}

static void asof_bad_input(void **state) {
  (void)state;
  const char *setup[] = {"CREATE TABLE T (K INTEGER PRIMARY KEY)", NULL};
  sh_fixture *f = sh_fixture_new(setup);
  assert_non_null(f);
  sh_result r;
  assert_int_not_equal(sh_run_db(f, NULL, NULL, ".asof yesterday\n", &r), 0);
  assert_non_null(strstr(r.err, "usage: .asof [YYYY-MM-DD [HH:MM[:SS[.fff]]] | off] (UTC, "
                                "from 1970): not \"yesterday\""));
  sh_result_free(&r);
  assert_int_not_equal(sh_run_db(f, NULL, NULL, ".asof 2001-02-03 04:05\nSELECT * FROM T;\n", &r),
                       0);
  assert_non_null(strstr(r.err, "AS OF 2001-02-03 04:05:00.000 UTC is older than the look-back "
                                "window allows"));
  sh_result_free(&r);
  sh_fixture_free(f);
}

static void schema_row_timestamp(void **state) {
  (void)state;
  const char *setup[] = {"CREATE TABLE EV (K INTEGER NOT NULL, TS TIMESTAMP NOT NULL, V VARCHAR "
                         "CONSTRAINT PK PRIMARY KEY (K, TS DESC ROW_TIMESTAMP))",
                         NULL};
  sh_fixture *f = sh_fixture_new(setup);
  assert_non_null(f);
  const char *cmds[] = {".schema EV", NULL};
  sh_result r;
  assert_int_equal(sh_run_db(f, NULL, cmds, NULL, &r), 0);
  assert_string_equal(r.out, "CREATE TABLE EV (\n"
                             "  K INTEGER,\n"
                             "  TS TIMESTAMP,\n"
                             "  V VARCHAR,\n"
                             "  CONSTRAINT PK PRIMARY KEY (K, TS DESC ROW_TIMESTAMP)\n"
                             ");\n");
  sh_result_free(&r);
  sh_fixture_free(f);
}

/* .import into a ROW_TIMESTAMP table (the bulk path): each row's cells at its TS value, a
** row before 1970 rejected with its line and the reason, the others loaded. */
static void import_row_timestamp(void **state) {
  (void)state;
  const char *setup[] = {"CREATE TABLE EV (K INTEGER NOT NULL, TS TIMESTAMP NOT NULL, V VARCHAR "
                         "CONSTRAINT PK PRIMARY KEY (K, TS ROW_TIMESTAMP))",
                         NULL};
  sh_fixture *f = sh_fixture_new(setup);
  assert_non_null(f);
  char csv[700], imp[800];
  snprintf(csv, sizeof csv, "%s/ev.csv", f->dir);
  sh_write_file(csv, "K,TS,V\n1,2024-01-01 00:00:00,a\n2,1960-01-01 00:00:00,old\n"
                     "3,2024-01-02 00:00:00.5,c\n");
  snprintf(imp, sizeof imp, ".import --csv --header %s EV", csv);
  const char *cmds[] = {imp, ".raw scan EV --family 0", NULL};
  sh_result r;
  sh_run_db(f, NULL, cmds, NULL, &r);
  assert_non_null(strstr(r.err, "ev.csv:3: ROW_TIMESTAMP column TS: -315619200000 ms is before "
                                "1970-01-01 00:00:00 UTC"));
  assert_non_null(strstr(r.out, "2 rows loaded, 1 rejected"));
  assert_non_null(strstr(r.out, "0:01 (V)  ts 1704067200000 (2024-01-01 00:00:00.000 UTC)  "
                                "value 61 = a"));
  assert_non_null(strstr(r.out, "0:01 (V)  ts 1704153600500 (2024-01-02 00:00:00.500 UTC)  "
                                "value 63 = c"));
  sh_result_free(&r);
  sh_fixture_free(f);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(asof_reads_the_past),
      cmocka_unit_test(asof_bad_input),
      cmocka_unit_test(schema_row_timestamp),
      cmocka_unit_test(import_row_timestamp),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
