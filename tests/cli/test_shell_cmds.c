/*
** tests/cli/test_shell_cmds.c: the `rowan` shell's dot commands and inputs: .tables,
** .schema (exact text, also after ALTER TABLE, and a round trip: the printed schema
** recreates the same schema in a fresh database; sequences at their next value), .indexes, .help, .read, .output, .timer, .stats, .raw scan/get, .quit,
** .import with a glob, .print, .echo, .flush, .compact, .check; -cmd, -f (repeated), options after DBDIR, stdin scripts (multi-line statements, ';' inside quotes
** and comments, a last statement without ';'), -version. Drives the built binary.
*/
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <regex.h>

#include "test_shell_util.h"

typedef sh_fixture fixture;

static const char schema_s[] =
    "CREATE TABLE S (\n"
    "  STATION VARCHAR,\n"
    "  TS TIMESTAMP,\n"
    "  READINGS.TEMP DOUBLE,\n"
    "  META.LOC VARCHAR(20) NOT NULL,\n"
    "  CONSTRAINT PK PRIMARY KEY (STATION, TS DESC)\n"
    ") TTL = 864000000, READINGS.VERSIONS = 3;\n"
    "CREATE INDEX S_TEMP ON S (TEMP DESC) INCLUDE (LOC);\n";

static const char schema_t[] =
    "CREATE TABLE T (\n"
    "  K INTEGER,\n"
    "  NAME VARCHAR,\n"
    "  CONSTRAINT PK PRIMARY KEY (K)\n"
    ");\n";

static int setup(void **state) {
  const char *cmds[] = {schema_t, schema_s,
                        "UPSERT INTO T VALUES (1, 'one'), (2, 'two'), (3, 'a,b')",
                        "UPSERT INTO S VALUES ('north', TIMESTAMP '2017-03-01 10:00:00', 1.5, 'hill')",
                        NULL};
  *state = sh_fixture_new(cmds);
  return *state ? 0 : -1;
}

static int teardown(void **state) {
  sh_fixture_free(*state);
  return 0;
}

/* Run with args after the database (NULL-terminated list), stdin text, expecting status 0. */
static sh_result run_ok(fixture *f, const char *stdin_text, const char *const *opts,
                        const char *const *cmds) {
  sh_result r;
  sh_run_db(f, opts, cmds, stdin_text, &r);
  if (r.status != 0 || r.err[0]) sh_dump(&r);
  assert_int_equal(r.status, 0);
  assert_string_equal(r.err, "");
  return r;
}

static void assert_matches(const char *text, const char *pattern) {
  regex_t re;
  assert_int_equal(regcomp(&re, pattern, REG_EXTENDED | REG_NEWLINE), 0);
  int m = regexec(&re, text, 0, NULL, 0);
  if (m != 0) fprintf(stderr, "no match for /%s/ in:\n%s\n", pattern, text);
  regfree(&re);
  assert_int_equal(m, 0);
}

static void test_tables(void **state) {
  const char *cmds[] = {".tables", ".tables s%", ".tables X%", NULL};
  sh_result r = run_ok(*state, NULL, NULL, cmds);
  assert_string_equal(r.out, "S\nT\nS\n");
  sh_result_free(&r);
}

static void test_schema_exact(void **state) {
  const char *cmds[] = {".schema T", ".schema s", NULL};
  sh_result r = run_ok(*state, NULL, NULL, cmds);
  char want[2048];
  snprintf(want, sizeof want, "%s%s", schema_t, schema_s);
  assert_string_equal(r.out, want);
  sh_result_free(&r);
}

/* The printed schema is valid SQL that recreates the same schema. */
static void test_schema_round_trip(void **state) {
  fixture *f = *state;
  const char *cmds[] = {".schema", NULL};
  sh_result r = run_ok(f, NULL, NULL, cmds);
  char db2[700];
  snprintf(db2, sizeof db2, "%s/db2", f->dir);
  const char *args[] = {db2, NULL};
  sh_result r2;
  sh_run(f->dir, args, r.out, &r2); /* the schema as a script on stdin */
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

/* After ALTER TABLE: the added columns (one in a new family) and the options as they now
** are. Last of the group: it changes the shared database. */
static void test_schema_after_alter(void **state) {
  const char *cmds[] = {"ALTER TABLE S ADD META.MODEL VARCHAR, EXTRA.NOTE VARCHAR",
                        "ALTER TABLE S SET TTL = 86400, META.VERSIONS = 2, EXTRA.COMPRESSION = 'NONE'",
                        ".schema S", NULL};
  sh_result r = run_ok(*state, NULL, NULL, cmds);
  assert_string_equal(r.out,
                      "CREATE TABLE S (\n"
                      "  STATION VARCHAR,\n"
                      "  TS TIMESTAMP,\n"
                      "  READINGS.TEMP DOUBLE,\n"
                      "  META.LOC VARCHAR(20) NOT NULL,\n"
                      "  META.MODEL VARCHAR,\n"
                      "  EXTRA.NOTE VARCHAR,\n"
                      "  CONSTRAINT PK PRIMARY KEY (STATION, TS DESC)\n"
                      ") TTL = 86400, READINGS.VERSIONS = 3, META.VERSIONS = 2, "
                      "EXTRA.COMPRESSION = 'NONE';\n"
                      "CREATE INDEX S_TEMP ON S (TEMP DESC) INCLUDE (LOC);\n");
  sh_result_free(&r);
}

/* Sequences: .schema prints each with every option and START WITH its first value not yet
** handed out (10, 8, 6 were claimed by the first NEXT VALUE FOR: CACHE 3); run in a fresh
** database it makes a sequence that goes on from there. */
static void test_schema_sequences(void **state) {
  fixture *f = *state;
  char db3[700], db4[700];
  snprintf(db3, sizeof db3, "%s/db_seq", f->dir);
  snprintf(db4, sizeof db4, "%s/db_seq2", f->dir);
  const char *args[] = {db3, ".mode list", "CREATE SEQUENCE Q START WITH 10 INCREMENT BY -2 "
                        "MINVALUE -100 MAXVALUE 50 CYCLE CACHE 3", "SELECT NEXT VALUE FOR Q",
                        ".schema", NULL};
  sh_result r;
  sh_run(f->dir, args, NULL, &r);
  if (r.status != 0) sh_dump(&r);
  const char *ddl = "CREATE SEQUENCE Q START WITH 4 INCREMENT BY -2 MINVALUE -100 MAXVALUE 50 "
                    "CYCLE CACHE 3;\n";
  char want[256];
  snprintf(want, sizeof want, "10\n%s", ddl);
  assert_string_equal(r.out, want);
  const char *args2[] = {db4, ".mode list", ddl, "SELECT NEXT VALUE FOR Q", NULL};
  sh_result r2;
  sh_run(f->dir, args2, NULL, &r2);
  if (r2.status != 0) sh_dump(&r2);
  assert_string_equal(r2.out, "4\n");
  sh_result_free(&r);
  sh_result_free(&r2);
}

static void test_schema_unknown_table_fails(void **state) {
  fixture *f = *state;
  const char *args[] = {f->db, ".schema NOSUCH", NULL};
  sh_result r;
  sh_run(f->dir, args, NULL, &r);
  assert_int_equal(r.status, 1);
  assert_non_null(strstr(r.err, "unknown table \"NOSUCH\""));
  sh_result_free(&r);
}

static void test_indexes(void **state) {
  const char *cmds[] = {".indexes", ".indexes T", ".indexes S", NULL};
  sh_result r = run_ok(*state, NULL, NULL, cmds);
  /* Each listing names the index, its table, keys and INCLUDE columns. */
  assert_matches(r.out, "^S_TEMP ON S \\(TEMP DESC\\) INCLUDE \\(LOC\\)( \\(building\\))?\n"
                        "S_TEMP ON S \\(TEMP DESC\\) INCLUDE \\(LOC\\)( \\(building\\))?\n$");
  sh_result_free(&r);
}

static void test_help(void **state) {
  const char *cmds[] = {".help", ".help import", NULL};
  sh_result r = run_ok(*state, NULL, NULL, cmds);
  static const char *const names[] = {".import", ".raw get", ".raw scan", ".schema", ".tables",
                                      ".indexes", ".mode", ".headers", ".nullvalue", ".read",
                                      ".output", ".timer", ".stats", ".hints", ".quit",
                                      ".flush", ".compact", ".check", "--bulk", "--batch"};
  for (size_t i = 0; i < sizeof names / sizeof *names; i++)
    assert_non_null(strstr(r.out, names[i]));
  sh_result_free(&r);
}

static void test_stdin_script(void **state) {
  const char *script =
      "-- a comment; with a semicolon\n"
      ".mode csv\n"
      "SELECT K,\n"
      "       NAME   /* ; inside a comment */\n"
      "  FROM T WHERE NAME = 'a,b' OR NAME = ';';\n"
      "\n"
      ".headers on\n"
      "SELECT K FROM T WHERE K = 1; SELECT NAME FROM T WHERE K = 2;\n"
      "SELECT K FROM T WHERE K = 3\n"; /* the last statement needs no ';' */
  sh_result r = run_ok(*state, script, NULL, NULL);
  assert_string_equal(r.out, "3,\"a,b\"\r\nK\r\n1\r\nNAME\r\ntwo\r\nK\r\n3\r\n");
  sh_result_free(&r);
}

static void test_cmd_option_runs_first(void **state) {
  /* -cmd runs before the arguments and before stdin. */
  const char *opts[] = {"-cmd", ".mode csv", "-cmd", ".headers on", NULL};
  const char *cmds[] = {"SELECT NAME FROM T WHERE K = 2", NULL};
  sh_result r = run_ok(*state, NULL, opts, cmds);
  assert_string_equal(r.out, "NAME\r\ntwo\r\n");
  sh_result_free(&r);
  sh_result r2 = run_ok(*state, "SELECT K FROM T WHERE K = 1;\n", opts, NULL);
  assert_string_equal(r2.out, "K\r\n1\r\n");
  sh_result_free(&r2);
}

static void test_read_and_f(void **state) {
  fixture *f = *state;
  char path[700], inner[700];
  snprintf(path, sizeof path, "%s/script.sql", f->dir);
  snprintf(inner, sizeof inner, "%s/inner.sql", f->dir);
  sh_write_file(inner, "SELECT NAME FROM T\n WHERE K = 1;\n");
  char text[2048];
  snprintf(text, sizeof text, ".mode list\nSELECT K FROM T WHERE K = 2;\n.read %s\n", inner);
  sh_write_file(path, text);
  char cmd[800];
  snprintf(cmd, sizeof cmd, ".read %s", path);
  const char *cmds[] = {cmd, NULL};
  sh_result r = run_ok(f, NULL, NULL, cmds);
  assert_string_equal(r.out, "2\none\n");
  sh_result_free(&r);
  const char *opts[] = {"-f", path, NULL};
  sh_result r2 = run_ok(f, NULL, opts, NULL);
  assert_string_equal(r2.out, "2\none\n");
  sh_result_free(&r2);
  /* A missing file is an error (status 1). */
  const char *args[] = {f->db, ".read /nonexistent/x.sql", NULL};
  sh_result r3;
  sh_run(f->dir, args, NULL, &r3);
  assert_int_equal(r3.status, 1);
  assert_non_null(strstr(r3.err, "/nonexistent/x.sql"));
  sh_result_free(&r3);
}

static void test_output_to_file(void **state) {
  fixture *f = *state;
  char path[700], cmd[800];
  snprintf(path, sizeof path, "%s/out.csv", f->dir);
  snprintf(cmd, sizeof cmd, ".output %s", path);
  const char *cmds[] = {".mode csv", cmd, "SELECT K, NAME FROM T WHERE K <= 2", ".output",
                        "SELECT K FROM T WHERE K = 3", NULL};
  sh_result r = run_ok(f, NULL, NULL, cmds);
  assert_string_equal(r.out, "3\r\n");
  char *file = sh_read_file(path);
  assert_string_equal(file, "1,one\r\n2,two\r\n");
  free(file);
  sh_result_free(&r);
}

static void test_timer_and_stats(void **state) {
  const char *cmds[] = {".mode list", ".timer on", ".stats on", "SELECT K FROM T WHERE K >= 2",
                        ".timer off", ".stats off", "SELECT K FROM T WHERE K = 1", NULL};
  sh_result r = run_ok(*state, NULL, NULL, cmds);
  assert_matches(r.out, "^2\n3\nRun Time: real [0-9]+\\.[0-9]{3} s, rows 2\n"
                        "Stats: scan rows examined [0-9]+, filtered [0-9]+, returned 2; statement "
                        "returned 2 rows; key ranges 1\n"
                        "  T\\._k: cells [0-9]+, blocks [0-9]+ \\([0-9]+ cached\\), bytes [0-9]+\n"
                        "(  T\\.0: [^\n]*\n)?1\n$");
  sh_result_free(&r);
}

/* .stats tells the rows the scan handed on from the rows the statement gave: COUNT(*) over
** 3 rows is one result row from a scan that returned 3; a DELETE changes rows and returns
** none. The rows deleted are written back at the end. */
static void test_stats_counts(void **state) {
  const char *cmds[] = {".mode list", ".stats on", "SELECT COUNT(*) FROM T",
                        "SELECT COUNT(*) FROM T WHERE K >= 2", "DELETE FROM T WHERE K <= 2",
                        ".stats off", "UPSERT INTO T VALUES (1, 'one'), (2, 'two')", NULL};
  sh_result r = run_ok(*state, NULL, NULL, cmds);
  assert_matches(r.out, "^3\nStats: scan rows examined 3, filtered 0, returned 3; statement "
                        "returned 1 row; key ranges 1\n(  T\\.[_k0]+: [^\n]*\n)+"
                        "2\nStats: scan rows examined [0-9]+, filtered 0, returned 2; statement "
                        "returned 1 row; key ranges 1\n(  T\\.[_k0]+: [^\n]*\n)+"
                        "Stats: scan rows examined [0-9]+, filtered 0, returned 2; statement "
                        "changed 2 rows; key ranges 1\n(  T\\.[_k0]+: [^\n]*\n)+$");
  sh_result_free(&r);
}

/* .flush moves the memstores into store files (a scan then reads blocks, where before it
** read none), .compact and .compact --minor keep every row, a bad argument is an error. */
static void test_flush_and_compact(void **state) {
  fixture *f = *state;
  /* the fixture's rows are in store files (its process flushed them at close): a table made
     here holds its row in the memstore (no block read) until .flush */
  const char *cmds[] = {".mode list",
                        "CREATE TABLE U (K INTEGER NOT NULL, CONSTRAINT PK PRIMARY KEY (K))",
                        "UPSERT INTO U VALUES (1)", ".stats on", "SELECT K FROM U WHERE K = 1",
                        ".flush", "SELECT K FROM U WHERE K = 1", ".compact --minor",
                        ".compact", ".stats off", "SELECT COUNT(*) FROM T", NULL};
  sh_result r = run_ok(f, NULL, NULL, cmds);
  assert_matches(r.out, "^1\nStats: [^\n]*\n  U\\._k: cells [0-9]+, blocks 0 [^\n]*\n"
                        "(  U\\.0: [^\n]*\n)?"
                        "1\nStats: [^\n]*\n  U\\._k: cells [0-9]+, blocks [1-9][0-9]* [^\n]*\n"
                        "(  U\\.0: [^\n]*\n)?3\n$");
  sh_result_free(&r);
  const char *bad[] = {f->db, ".compact --major", NULL};
  sh_run(f->dir, bad, NULL, &r);
  assert_int_equal(r.status, 1);
  assert_non_null(strstr(r.err, "usage: .compact [--minor]"));
  sh_result_free(&r);
}

/* .check runs CHECK INDEX: the counts of a consistent index; wrong arguments are an error. */
static void test_check_index(void **state) {
  fixture *f = *state;
  const char *cmds[] = {".mode list", ".check S_TEMP S", NULL};
  sh_result r = run_ok(f, NULL, NULL, cmds);
  assert_string_equal(r.out, "DATA ROWS|1\nINDEX ROWS|1\nMISSING|0\nEXTRA|0\nMISMATCHED|0\n");
  sh_result_free(&r);
  const char *bad[] = {f->db, ".check S_TEMP", NULL};
  sh_run(f->dir, bad, NULL, &r);
  assert_int_equal(r.status, 1);
  assert_non_null(strstr(r.err, "usage: .check INDEX TABLE"));
  sh_result_free(&r);
}

static void test_raw_scan_and_get(void **state) {
  const char *cmds[] = {".raw scan T --limit 2", NULL};
  sh_result r = run_ok(*state, NULL, NULL, cmds);
  /* INTEGER keys: 4 bytes big-endian with the sign bit flipped. */
  assert_matches(r.out, "^row 80000001  \\[1\\]\n  _k:00 \\(row marker\\)  ts [0-9]+ \\([^)]*\\)"
                        "  value \\(empty\\)\n  0:01 \\(NAME\\)  ts [0-9]+ \\([^)]*\\)  value 6f6e65"
                        " = one\nrow 80000002  \\[2\\]\n");
  assert_non_null(strstr(r.out, "(2 rows)\n"));
  assert_null(strstr(r.out, "[3]"));
  sh_result_free(&r);
  /* get by PK value, by hex; a missing key gives no row. */
  const char *cmds2[] = {".raw get T 3", ".raw get T 0x80000003", ".raw get t 4", NULL};
  sh_result r2 = run_ok(*state, NULL, NULL, cmds2);
  const char *first = strstr(r2.out, "value 612c62 = a,b\n(1 row)\n");
  assert_non_null(first);
  assert_non_null(strstr(first + 1, "value 612c62 = a,b\n(1 row)\n"));
  assert_non_null(strstr(r2.out, "(0 rows)\n"));
  sh_result_free(&r2);
  /* A composite key (values separated by commas), a family filter, a bare kv table. */
  const char *cmds3[] = {".raw get S 'north,2017-03-01 10:00:00' --family META",
                         ".raw scan SYSTEM.CATALOG --limit 1", NULL};
  sh_result r3 = run_ok(*state, NULL, NULL, cmds3);
  assert_matches(r3.out, "^row [0-9a-f]+  \\['north', 2017-03-01 10:00:00\\]\n"
                         "  META:[0-9a-f]+ \\(LOC\\)  ts [0-9]+ \\([^)]*\\)  value 68696c6c = hill\n"
                         "\\(1 row\\)\nrow [0-9a-f]+\n");
  sh_result_free(&r3);
}

static void test_quit_stops(void **state) {
  sh_result r = run_ok(*state, ".mode list\nSELECT K FROM T WHERE K = 1;\n.quit\nSELECT 2;\n",
                       NULL, NULL);
  assert_string_equal(r.out, "1\n");
  sh_result_free(&r);
}

static void test_version_and_help_options(void **state) {
  fixture *f = *state;
  const char *args[] = {"-version", NULL};
  sh_result r;
  sh_run(f->dir, args, NULL, &r);
  assert_int_equal(r.status, 0);
  assert_matches(r.out, "^rowan [0-9]+\\.[0-9]+\\.[0-9]+\n$");
  sh_result_free(&r);
  const char *args2[] = {"--help", NULL};
  sh_run(f->dir, args2, NULL, &r);
  assert_int_equal(r.status, 0);
  assert_non_null(strstr(r.out, "-bail"));
  sh_result_free(&r);
  const char *args3[] = {"-nosuchoption", f->db, NULL};
  sh_run(f->dir, args3, NULL, &r);
  assert_int_equal(r.status, 1);
  assert_non_null(strstr(r.err, "-nosuchoption"));
  sh_result_free(&r);
}

static void test_print_echo_and_option_order(void **state) {
  fixture *f = *state;
  char f1[700], f2[700];
  snprintf(f1, sizeof f1, "%s/f1.sql", f->dir);
  snprintf(f2, sizeof f2, "%s/f2.sql", f->dir);
  sh_write_file(f1, ".print first  file\nSELECT K FROM T WHERE K = 1;\n");
  sh_write_file(f2, "SELECT K FROM T\n  WHERE K = 2;\n");
  /* Options may follow DBDIR; -cmd first, then arguments, then each -f in order. */
  const char *args[] = {f->db, "-list", "-echo", "-f", f1, "SELECT K FROM T WHERE K = 3",
                        "-f", f2, "-cmd", ".print 'from -cmd'", NULL};
  sh_result r;
  sh_run(f->dir, args, NULL, &r);
  if (r.status != 0) sh_dump(&r);
  assert_int_equal(r.status, 0);
  assert_string_equal(r.out,
                      ".print 'from -cmd'\nfrom -cmd\n"
                      "SELECT K FROM T WHERE K = 3\n3\n"
                      ".print first  file\nfirst file\n"
                      "SELECT K FROM T WHERE K = 1;\n1\n"
                      "SELECT K FROM T\n  WHERE K = 2;\n2\n");
  sh_result_free(&r);
}

/* .exit CODE is the exit status (sqlite3's form); a bad CODE is a usage error; plain .exit
** keeps the status from the errors. */
static void test_exit_code(void **state) {
  fixture *f = *state;
  const char *a1[] = {f->db, ".exit 3", "SELECT 1", NULL};
  sh_result r;
  sh_run(f->dir, a1, NULL, &r);
  assert_int_equal(r.status, 3);
  assert_string_equal(r.out, ""); /* nothing after .exit runs */
  sh_result_free(&r);
  const char *a2[] = {f->db, ".exit 0", NULL};
  sh_run(f->dir, a2, NULL, &r);
  assert_int_equal(r.status, 0);
  sh_result_free(&r);
  const char *a3[] = {f->db, ".exit x", "SELECT 1", NULL};
  sh_run(f->dir, a3, NULL, &r);
  assert_int_equal(r.status, 1);
  assert_non_null(strstr(r.err, "usage: .exit [CODE]"));
  sh_result_free(&r);
  const char *a4[] = {f->db, "SELECT nosuch FROM T", ".exit", NULL};
  sh_run(f->dir, a4, NULL, &r);
  assert_int_equal(r.status, 1);
  sh_result_free(&r);
  const char *a5[] = {f->db, ".quit 2", NULL};
  sh_run(f->dir, a5, NULL, &r);
  assert_int_equal(r.status, 1);
  assert_non_null(strstr(r.err, "usage: .quit"));
  sh_result_free(&r);
}

#ifndef CLI_NO_IMPORT
/* .import inside BEGIN is refused with a message that says why (it runs its own
** transactions), without a summary; a --max-errors stop counts the file it stopped in and
** says "1 row committed". */
static void test_import_txn_and_stop(void **state) {
  fixture *f = *state;
  char path[700], cmd[900], cmd2[900];
  snprintf(path, sizeof path, "%s/stop_rows.csv", f->dir);
  sh_write_file(path, "30,thirty\nx,bad\n32,thirty-two\n");
  snprintf(cmd, sizeof cmd, ".import --csv %s T", path);
  const char *a1[] = {f->db, "BEGIN", cmd, "ROLLBACK", NULL};
  sh_result r;
  sh_run(f->dir, a1, NULL, &r);
  assert_int_equal(r.status, 1);
  assert_non_null(strstr(r.err, "Error: .import cannot run inside a transaction: COMMIT or "
                                "ROLLBACK first\n"));
  assert_null(strstr(r.out, "loaded"));
  sh_result_free(&r);
  snprintf(cmd2, sizeof cmd2, ".import --csv --max-errors 1 %s T", path);
  const char *a2[] = {f->db, cmd2, NULL};
  sh_run(f->dir, a2, NULL, &r);
  assert_int_equal(r.status, 1);
  assert_non_null(strstr(r.out, "1 row loaded, 1 rejected from 1 file "));
  assert_non_null(strstr(r.err, "; 1 row committed (every good row before that point)"));
  sh_result_free(&r);
  const char *cmds[] = {"DELETE FROM T WHERE K >= 30", NULL};
  r = run_ok(f, NULL, NULL, cmds);
  sh_result_free(&r);
}

static void test_import_glob(void **state) {
  fixture *f = *state;
  char p1[700], p2[700], cmd[900];
  snprintf(p1, sizeof p1, "%s/imp_1.csv", f->dir);
  snprintf(p2, sizeof p2, "%s/imp_2.csv", f->dir);
  sh_write_file(p1, "K,NAME\n10,ten\n11,\"eleven, quoted\"\n");
  sh_write_file(p2, "K,NAME\n12,twelve\n");
  snprintf(cmd, sizeof cmd, ".import --csv --header %s/imp_*.csv T", f->dir);
  const char *cmds[] = {cmd, ".mode csv", "SELECT K, NAME FROM T WHERE K >= 10", NULL};
  sh_result r = run_ok(f, NULL, NULL, cmds);
  assert_non_null(strstr(r.out, "10,ten\r\n11,\"eleven, quoted\"\r\n12,twelve\r\n"));
  assert_non_null(strstr(r.out, "3 rows loaded"));
  sh_result_free(&r);
  const char *cmds2[] = {"DELETE FROM T WHERE K >= 10", NULL};
  sh_result r2 = run_ok(f, NULL, NULL, cmds2);
  sh_result_free(&r2);
  /* An import that fails before reading a record prints its error, and no all-zero
     summary; one that fails part way still says how far it got. */
  char bad[700], cmd3[900], cmd4[900];
  snprintf(cmd3, sizeof cmd3, ".import --csv --header %s/no_such.csv T", f->dir);
  snprintf(bad, sizeof bad, "%s/imp_bad.csv", f->dir);
  sh_write_file(bad, "K,NAME\n20,a\n21,b\n");
  snprintf(cmd4, sizeof cmd4, ".import --csv --header %s NOTABLE", bad);
  const char *tries[2] = {cmd3, cmd4};
  for (int i = 0; i < 2; i++) {
    const char *all[] = {f->db, tries[i], NULL};
    sh_result r3;
    sh_run(f->dir, all, NULL, &r3);
    assert_int_not_equal(r3.status, 0);
    assert_non_null(strstr(r3.err, i == 0 ? "no_such.csv" : "NOTABLE"));
    /* an unknown table is named alone, not through the import's UPSERT (B's item 4) */
    if (i == 1) assert_string_equal(r3.err, "Error: unknown table \"NOTABLE\"\n");
    assert_null(strstr(r3.out, "rows loaded"));
    sh_result_free(&r3);
  }
}
#endif

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_tables),
      cmocka_unit_test(test_schema_exact),
      cmocka_unit_test(test_schema_round_trip),
      cmocka_unit_test(test_schema_unknown_table_fails),
      cmocka_unit_test(test_schema_sequences),
      cmocka_unit_test(test_indexes),
      cmocka_unit_test(test_help),
      cmocka_unit_test(test_stdin_script),
      cmocka_unit_test(test_cmd_option_runs_first),
      cmocka_unit_test(test_read_and_f),
      cmocka_unit_test(test_output_to_file),
      cmocka_unit_test(test_timer_and_stats),
      cmocka_unit_test(test_stats_counts),
      cmocka_unit_test(test_raw_scan_and_get),
      cmocka_unit_test(test_quit_stops),
      cmocka_unit_test(test_version_and_help_options),
      cmocka_unit_test(test_print_echo_and_option_order),
      cmocka_unit_test(test_flush_and_compact),
      cmocka_unit_test(test_check_index),
      cmocka_unit_test(test_exit_code),
#ifndef CLI_NO_IMPORT
      cmocka_unit_test(test_import_txn_and_stop),
      cmocka_unit_test(test_import_glob),
#endif
      cmocka_unit_test(test_schema_after_alter),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
