/*
** tests/api/test_advise.c: the row-key advisor (rowan_advise, planner/advise.h) on a
** sensor-shaped table: the tour's schema (examples/sensor/schema.sql) holding 12 stations'
** hourly readings around the hours the tour asks about (July 2016 and the archive's last
** week), judged against the tour's queries (examples/sensor/advise.sql):
**  - the first choice for the tour's queries is the tour's key, (STATION, TS DESC), and
**    (STATION, TS) loses to it (the latest reading of every station reads one row per
**    station only when TS is DESC);
**  - for queries that all ask "every station at one hour", the first choice starts with TS;
**  - an index on TEMP serves the queries that bound TEMP (covered); one on PM25, for a
**    query that nearly every row passes, serves none;
**  - under the current key, the report carries EXPLAIN's first line and ESTIMATE line for
**    each query, equal to what EXPLAIN prints for the same query;
**  - nothing is written: the table's rows and schema are the same after the advice;
**  - rowan_interrupt stops it (ROWAN_INTERRUPT), and it runs again afterwards;
**  - bad input: unknown table, a syntax error (named by source, line and column, and the
**    byte offset in the whole text), a statement that is not a SELECT, a query of another
**    table, a parameter, a text with no statement, NULL arguments.
** Not here: the shell's .advise and a missing file (tests/cli/test_shell_advise.c).
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
#include "testutil.h"
#include "tu_api.h"

#define HOUR 3600000LL
#define DAY (24 * HOUR)
#define JUN20_2016 1466380800000LL /* 2016-06-20 00:00:00, ms */
#define FEB15_2017 1487116800000LL /* 2017-02-15 00:00:00, ms */

static const char *const STATIONS[12] = {
    "Aotizhongxin", "Changping", "Dingling", "Dongsi", "Guanyuan", "Gucheng",
    "Huairou", "Nongzhanguan", "Shunyi", "Tiantan", "Wanliu", "Wanshouxigong"};

static char *read_source(const char *rel) {
  const char *dir = getenv("ROWAN_SOURCE_DIR");
  char path[1024];
  snprintf(path, sizeof path, "%s/%s", dir ? dir : ".", rel);
  FILE *f = fopen(path, "rb");
  if (!f) fail_msg("cannot open %s", path);
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *p = malloc((size_t)n + 1);
  assert_non_null(p);
  assert_int_equal(fread(p, 1, (size_t)n, f), (size_t)n);
  p[n] = 0;
  fclose(f);
  return p;
}

/* The tour's table with `days` days of hours from each of the two starts, for 12 stations
** (the station's coordinates in the row of its latest hour, as load.sql puts them). */
static rowan_db *sensor_db(kv_env *env) {
  rowan_db *db = tu_open_mem(env);
  char *schema = read_source("examples/sensor/schema.sql");
  exec_ok(db, schema);
  free(schema);
  rowan_stmt *up;
  assert_int_equal(rowan_prepare(db, "UPSERT INTO SENSOR (STATION, TS, PM25, TEMP, RAIN, WD) "
                                     "VALUES (?, ?, ?, ?, 0, 'N')",
                                 -1, &up, NULL),
                   ROWAN_OK);
  exec_ok(db, "BEGIN");
  int days = (int)tu_scaled(40, 10);
  const int64_t starts[2] = {JUN20_2016, FEB15_2017};
  for (int s = 0; s < 12; s++)
    for (int b = 0; b < 2; b++)
      for (int64_t h = 0; h < (int64_t)(b ? 14 : days) * 24; h++) {
        assert_int_equal(rowan_bind_text(up, 1, STATIONS[s], -1), ROWAN_OK);
        assert_int_equal(rowan_bind_timestamp(up, 2, starts[b] + h * HOUR), ROWAN_OK);
        assert_int_equal(rowan_bind_double(up, 3, (double)((s * 7 + h) % 90)), ROWAN_OK);
        assert_int_equal(rowan_bind_double(up, 4, (double)((h % 24) + s) - 5.0), ROWAN_OK);
        assert_int_equal(rowan_step(up), ROWAN_DONE);
        assert_int_equal(rowan_reset(up), ROWAN_OK);
      }
  exec_ok(db, "COMMIT");
  rowan_finalize(up);
  char sql[256];
  for (int s = 0; s < 12; s++) {
    snprintf(sql, sizeof sql,
             "UPSERT INTO SENSOR (STATION, TS, LONGITUDE, LATITUDE, TYPE) VALUES ('%s', "
             "TIMESTAMP '2017-02-28 23:00:00', 116.4, 39.9, 'urban')", STATIONS[s]);
    exec_ok(db, sql);
  }
  assert_int_equal(rowan_flush(db), ROWAN_OK);
  return db;
}

static char *advise_ok(rowan_db *db, const char *sql, const char *src) {
  char *report = NULL;
  int rc = rowan_advise(db, "SENSOR", sql, -1, src, &report);
  if (rc != ROWAN_OK) fail_msg("rowan_advise: %s: %s", rowan_errstr(rc), rowan_errmsg(db));
  assert_non_null(report);
  return report;
}

/* The line of report that starts with `start` (its text up to the newline, into buf). */
static const char *line_of(const char *report, const char *start, char *buf, size_t cap) {
  const char *p = strstr(report, start);
  if (!p) fail_msg("no line \"%s\" in the report:\n%s", start, report);
  size_t n = strcspn(p, "\n");
  if (n >= cap) n = cap - 1;
  memcpy(buf, p, n);
  buf[n] = 0;
  return buf;
}

static void tour_first_choice_is_the_tours_key(void **state) {
  (void)state;
  kv_env *env = kv_env_mem_new(0);
  rowan_db *db = sensor_db(env);
  char *queries = read_source("examples/sensor/advise.sql");
  char *report = advise_ok(db, queries, "examples/sensor/advise.sql");
  char line[512];
  assert_string_equal(line_of(report, "First choice:", line, sizeof line),
                      "First choice: PRIMARY KEY (STATION, TS DESC), the current key");
  /* rank 1 is the current key; (STATION, TS) is ranked after it */
  line_of(report, "  1     (", line, sizeof line);
  assert_non_null(strstr(line, "(STATION, TS DESC) *"));
  const char *asc = strstr(report, "(STATION, TS)   ");
  const char *desc = strstr(report, "(STATION, TS DESC) *");
  assert_non_null(asc);
  assert_true(desc < asc);
  /* the latest reading of every station: one row per station under TS DESC only */
  const char *sec_asc = strstr(report, ". (STATION, TS)\n");
  assert_non_null(sec_asc);
  assert_non_null(strstr(report, "SKIP TO NEXT PREFIX"));
  assert_true(strstr(report, "SKIP TO NEXT PREFIX") < sec_asc);
  /* an index on TEMP serves the two queries bounding TEMP, from its entries alone */
  assert_non_null(strstr(line_of(report, "  INDEX ON (TEMP) ", line, sizeof line),
                         "used by Q5 (covered), Q9 (covered)"));
  assert_non_null(strstr(report, "INDEX ON (TEMP), with the first choice's key\n"));
  /* nothing written: the rows and the key are as before */
  rowan_stmt *st;
  assert_int_equal(rowan_prepare(db, "SELECT COUNT(*) FROM SENSOR", -1, &st, NULL), ROWAN_OK);
  assert_int_equal(rowan_step(st), ROWAN_ROW);
  int64_t rows = rowan_column_int64(st, 0);
  rowan_finalize(st);
  assert_int_equal(rows, 12 * ((int64_t)tu_scaled(40, 10) + 14) * 24);
  char *again = advise_ok(db, queries, "examples/sensor/advise.sql");
  assert_string_equal(again, report);
  rowan_advise_free(again);
  /* rowan_interrupt while a statement is between rows (so the flag stays set): the advice
     stops reading with ROWAN_INTERRUPT; once that statement is done, it runs again */
  assert_int_equal(rowan_prepare(db, "SELECT STATION FROM SENSOR", -1, &st, NULL), ROWAN_OK);
  assert_int_equal(rowan_step(st), ROWAN_ROW);
  rowan_interrupt(db);
  char *none = (char *)"untouched";
  assert_int_equal(rowan_advise(db, "SENSOR", queries, -1, NULL, &none), ROWAN_INTERRUPT);
  assert_null(none);
  assert_non_null(strstr(rowan_errmsg(db), "interrupted"));
  rowan_finalize(st);
  again = advise_ok(db, queries, "examples/sensor/advise.sql");
  assert_string_equal(again, report);
  rowan_advise_free(again);
  rowan_advise_free(report);
  free(queries);
  rowan_close(db);
  kv_env_free(env);
}

static void one_hour_queries_put_ts_first(void **state) {
  (void)state;
  kv_env *env = kv_env_mem_new(0);
  rowan_db *db = sensor_db(env);
  const char *q =
      "-- every station at one hour\n"
      "SELECT STATION, PM25, TEMP FROM SENSOR WHERE TS = TIMESTAMP '2016-07-01 12:00:00';\n"
      "SELECT STATION, TEMP FROM SENSOR WHERE TS = TIMESTAMP '2016-07-02 06:00:00';\n"
      "SELECT AVG(PM25) FROM SENSOR WHERE TS = TIMESTAMP '2017-02-20 18:00:00';\n"
      "-- and one that an index cannot help: nearly every row has PM25 > 0\n"
      "SELECT * FROM SENSOR WHERE PM25 > 0;\n";
  char *report = advise_ok(db, q, "hour.sql");
  char line[512];
  line_of(report, "First choice:", line, sizeof line);
  if (strncmp(line, "First choice: PRIMARY KEY (TS", 29) != 0)
    fail_msg("first choice does not start with TS: %s\n%s", line, report);
  /* and says how much more the current key costs */
  assert_non_null(strstr(line, "the current key (STATION, TS DESC) costs"));
  /* an index on PM25 would need a lookup per row: the planner keeps the table scan */
  assert_non_null(strstr(line_of(report, "  INDEX ON (PM25) ", line, sizeof line),
                         "no query would use it"));
  rowan_advise_free(report);
  rowan_close(db);
  kv_env_free(env);
}

/* Each query's EXPLAIN: its first line and its ESTIMATE line, trimmed. */
static void explain_lines(rowan_db *db, const char *query, char *first, char *estimate,
                          size_t cap) {
  size_t n = strlen(query) + 9;
  char *sql = malloc(n);
  assert_non_null(sql);
  snprintf(sql, n, "EXPLAIN %s", query);
  rowan_stmt *st;
  assert_int_equal(rowan_prepare(db, sql, -1, &st, NULL), ROWAN_OK);
  free(sql);
  first[0] = estimate[0] = 0;
  while (rowan_step(st) == ROWAN_ROW) {
    const char *l = (const char *)rowan_column_text(st, 0);
    while (*l == ' ') l++;
    if (!first[0]) snprintf(first, cap, "%s", l);
    if (!strncmp(l, "ESTIMATE:", 9)) snprintf(estimate, cap, "%s", l);
  }
  rowan_finalize(st);
  assert_true(first[0] && estimate[0]);
}

static void current_key_estimates_equal_explain(void **state) {
  (void)state;
  kv_env *env = kv_env_mem_new(0);
  rowan_db *db = sensor_db(env);
  char *queries = read_source("examples/sensor/advise.sql");
  char *report = advise_ok(db, queries, "advise.sql");
  const char *cur = strstr(report, ", the current key\n");
  assert_non_null(cur);
  const char *end = strstr(cur + 1, "\n2. (");
  assert_non_null(end);
  /* walk the file's statements and find each one's EXPLAIN lines in the current key's part,
     in order */
  const char *p = queries, *at = cur;
  int n = 0;
  for (;;) {
    rowan_stmt *st = NULL;
    const char *tail = NULL;
    assert_int_equal(rowan_prepare(db, p, -1, &st, &tail), ROWAN_OK);
    if (!st) break;
    rowan_finalize(st);
    char q[4096];
    size_t len = (size_t)(tail - p);
    assert_true(len < sizeof q);
    memcpy(q, p, len);
    q[len] = 0;
    p = tail;
    char first[2048], est[2048], want[4200];
    explain_lines(db, q, first, est, sizeof first);
    snprintf(want, sizeof want, "        EXPLAIN: %s\n        EXPLAIN %s\n", first, est);
    const char *hit = strstr(at, want);
    if (!hit || hit > end) fail_msg("query %d: EXPLAIN's lines\n%snot in the report:\n%s", n + 1,
                                    want, report);
    at = hit + 1;
    n++;
  }
  assert_int_equal(n, 11);
  rowan_advise_free(report);
  free(queries);
  rowan_close(db);
  kv_env_free(env);
}

static void expect_error(rowan_db *db, const char *table, const char *sql, int code,
                         const char *const *parts, int offset) {
  char *report = (char *)"untouched";
  int rc = rowan_advise(db, table, sql, -1, "q.sql", &report);
  if (rc != code)
    fail_msg("%s: got %s (%s), want %s", sql, rowan_errstr(rc), rowan_errmsg(db),
             rowan_errstr(code));
  assert_null(report);
  for (int i = 0; parts[i]; i++)
    if (!strstr(rowan_errmsg(db), parts[i]))
      fail_msg("message \"%s\" lacks \"%s\"", rowan_errmsg(db), parts[i]);
  if (offset >= 0) assert_int_equal(rowan_error_offset(db), offset);
}

static void bad_input(void **state) {
  (void)state;
  kv_env *env = kv_env_mem_new(0);
  rowan_db *db = tu_open_mem(env);
  char *schema = read_source("examples/sensor/schema.sql");
  exec_ok(db, schema);
  free(schema);
  exec_ok(db, "CREATE TABLE OTHER (K INTEGER NOT NULL PRIMARY KEY, V INTEGER)");
  const char *ok = "SELECT * FROM SENSOR WHERE STATION = 'Dongsi';";
  expect_error(db, "NOPE", ok, ROWAN_ERROR, (const char *const[]){"no such table: NOPE", NULL},
               -1);
  /* a syntax error on the file's third line: "= =" at column 26 */
  const char *syn = "SELECT * FROM SENSOR;\n"
                    "-- the next one is broken\n"
                    "SELECT * FROM SENSOR WHERE = 3;\n";
  expect_error(db, "SENSOR", syn, ROWAN_SYNTAX,
               (const char *const[]){"q.sql: syntax error near \"=\"", "at line 3, column 28",
                                     NULL},
               (int)(strstr(syn, "= 3") - syn));
  expect_error(db, "SENSOR", "SELECT * FROM SENSOR;\n  UPSERT INTO SENSOR (STATION, TS) VALUES "
                             "('x', TIMESTAMP '2016-01-01 00:00:00');",
               ROWAN_ERROR,
               (const char *const[]){"q.sql: the statement at line 2, column 3 is not a SELECT",
                                     NULL},
               -1);
  expect_error(db, "SENSOR", "CREATE TABLE Z (K INTEGER NOT NULL PRIMARY KEY)", ROWAN_ERROR,
               (const char *const[]){"line 1, column 1 is not a SELECT", NULL}, -1);
  expect_error(db, "SENSOR", "SELECT * FROM OTHER", ROWAN_ERROR,
               (const char *const[]){"reads OTHER, not SENSOR", NULL}, -1);
  /* a join (even a self-join of the table advised) is named as such, not as "no table" */
  expect_error(db, "SENSOR",
               "SELECT * FROM SENSOR;\nSELECT a.TS FROM SENSOR a JOIN SENSOR b ON a.TS = b.TS",
               ROWAN_ERROR,
               (const char *const[]){"the statement at line 2, column 1 reads several tables or subqueries (a join)",
                                     "queries of SENSOR alone", NULL},
               -1);
  expect_error(db, "SENSOR", "SELECT * FROM SENSOR WHERE STATION = ?", ROWAN_ERROR,
               (const char *const[]){"has parameters", NULL}, -1);
  expect_error(db, "SENSOR", "SELECT * FROM NOPE", ROWAN_ERROR,
               (const char *const[]){"q.sql: ", "NOPE", "at line 1, column 15", NULL}, -1);
  expect_error(db, "SENSOR", "  -- nothing\n;\n", ROWAN_ERROR,
               (const char *const[]){"q.sql holds no query", NULL}, -1);
  char *r = NULL;
  assert_int_equal(rowan_advise(NULL, "SENSOR", ok, -1, NULL, &r), ROWAN_MISUSE);
  assert_int_equal(rowan_advise(db, NULL, ok, -1, NULL, &r), ROWAN_MISUSE);
  assert_int_equal(rowan_advise(db, "SENSOR", NULL, -1, NULL, &r), ROWAN_MISUSE);
  assert_int_equal(rowan_advise(db, "SENSOR", ok, -1, NULL, NULL), ROWAN_MISUSE);
  /* an empty table: every estimate 0, still a report */
  assert_int_equal(rowan_advise(db, "sensor", ok, -1, NULL, &r), ROWAN_OK);
  assert_non_null(strstr(r, "the queries"));
  assert_non_null(strstr(r, "First choice: PRIMARY KEY (STATION, TS DESC), the current key"));
  rowan_advise_free(r);
  rowan_advise_free(NULL);
  rowan_close(db);
  kv_env_free(env);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(tour_first_choice_is_the_tours_key),
      cmocka_unit_test(one_hour_queries_put_ts_first),
      cmocka_unit_test(current_key_estimates_equal_explain),
      cmocka_unit_test(bad_input),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
