/*
** tests/api/test_key_round_param.c: ROUND/FLOOR/CEIL/TRUNC(TS, ?, ?) op ? on the key column
** TS DESC (planner/keyrange_func.c) through the public API: one prepared statement per
** function and operator, re-bound many times with units (HOUR, DAY, WEEK, MONTH, YEAR, any
** case), multipliers and timestamps on and off the units' boundaries, so the key ranges are
** derived from the parameters at each run (plan reuse, docs/EXPLAIN.md). Each run's count
** and id sum equal those of the same term kept as a filter (OR'ed with a term never true).
** EXPLAIN of the bound statement shows the range and no filter. Also a DATE constant
** (CAST(? AS DATE)) against a TIMESTAMP rounding and a TIMESTAMP one against a DATE rounding. Rows lie in a store file and
** in the memstore. Seeded (tu_seed). Not here: the interval arithmetic
** (tests/planner/test_keyrange_func.c), EXPLAIN goldens (tests/sql/key_extract.test).
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "kv/env_mem.h"
#include "rowan.h"
#include "testutil.h"
#include "tu_api.h"

#define T0 1466380800000LL /* 2016-06-20 00:00:00 UTC (a Monday), ms */
#define HOUR_MS 3600000LL
#define DAY_MS 86400000LL
#define N_ROWS 1200

static int64_t ts_of(int k) { /* 37 minutes apart, some rows on a midnight or hour */
  if (k % 50 == 0) return T0 + (k / 50) * DAY_MS;
  if (k % 7 == 0) return T0 + (k / 7) * HOUR_MS;
  return T0 + k * 37LL * 60000 + (k % 3) * 999;
}

/* Run q with (unit, mult, c): c bound as a timestamp (ms), or with date_text as the text of
** its day ('YYYY-MM-DD', for CAST(? AS DATE)). */
static void count_sum_as(rowan_stmt *q, const char *unit, int64_t mult, int64_t c,
                         bool date_text, int64_t *n, int64_t *sum) {
  assert_int_equal(rowan_reset(q), ROWAN_OK);
  assert_int_equal(rowan_bind_text(q, 1, unit, -1), ROWAN_OK);
  assert_int_equal(rowan_bind_int64(q, 2, mult), ROWAN_OK);
  if (date_text) {
    time_t secs = (time_t)(c / 1000);
    struct tm tm;
    gmtime_r(&secs, &tm);
    char day[16];
    strftime(day, sizeof day, "%Y-%m-%d", &tm);
    assert_int_equal(rowan_bind_text(q, 3, day, -1), ROWAN_OK);
  } else {
    assert_int_equal(rowan_bind_timestamp(q, 3, c), ROWAN_OK);
  }
  assert_int_equal(rowan_step(q), ROWAN_ROW);
  *n = rowan_column_int64(q, 0);
  *sum = rowan_column_int64(q, 1);
  assert_int_equal(rowan_step(q), ROWAN_DONE);
}

static void count_sum(rowan_stmt *q, const char *unit, int64_t mult, int64_t c, int64_t *n,
                      int64_t *sum) {
  count_sum_as(q, unit, mult, c, false, n, sum);
}

/* The plan of EXPLAIN sql bound with (unit, c ms or c's day as text): a range and no
** filter, else the test fails with the plan. */
static void plan_is_range(rowan_db *db, const char *sql, const char *unit, int64_t c,
                          bool date_text, const char *want) {
  rowan_stmt *e;
  assert_int_equal(rowan_prepare(db, sql, -1, &e, NULL), ROWAN_OK);
  assert_int_equal(rowan_bind_text(e, 1, unit, -1), ROWAN_OK);
  if (date_text) assert_int_equal(rowan_bind_text(e, 2, "2016-06-21", -1), ROWAN_OK);
  else assert_int_equal(rowan_bind_timestamp(e, 2, c), ROWAN_OK);
  char text[4096] = "";
  int rc;
  while ((rc = rowan_step(e)) == ROWAN_ROW)
    strncat(text, rowan_column_text(e, 0), sizeof text - strlen(text) - 1);
  assert_int_equal(rc, ROWAN_DONE);
  if (!strstr(text, want) || strstr(text, "FILTER")) fail_msg("plan: %s", text);
  rowan_finalize(e);
}

static void t_rebound(void **st) {
  (void)st;
  uint64_t rs = tu_seed("key_round_param");
  kv_env *env = kv_env_mem_new(0);
  rowan_db *db = tu_open_mem(env);
  exec_ok(db, "CREATE TABLE EV (TS TIMESTAMP NOT NULL, ID INTEGER NOT NULL, V INTEGER, "
              "CONSTRAINT PK PRIMARY KEY (TS DESC, ID))");
  rowan_stmt *up;
  assert_int_equal(rowan_prepare(db, "UPSERT INTO EV VALUES (?, ?, ?)", -1, &up, NULL), ROWAN_OK);
  for (int k = 0; k < N_ROWS; k++) {
    assert_int_equal(rowan_bind_timestamp(up, 1, ts_of(k)), ROWAN_OK);
    assert_int_equal(rowan_bind_int64(up, 2, k), ROWAN_OK);
    assert_int_equal(rowan_bind_int64(up, 3, k), ROWAN_OK);
    assert_int_equal(rowan_step(up), ROWAN_DONE);
    assert_int_equal(rowan_reset(up), ROWAN_OK);
    if (k == N_ROWS / 2) assert_int_equal(rowan_flush(db), ROWAN_OK);
  }
  rowan_finalize(up);
  static const char *const fns[] = {"TRUNC", "FLOOR", "CEIL", "ROUND"};
  static const char *const ops[] = {"=", "<", "<=", ">", ">="};
  static const char *const units[] = {"HOUR", "DAY", "day", "WEEK", "MONTH", "YEAR", "MINUTE"};
  int rounds = (int)tu_scaled(30, 8), nonempty = 0;
  for (int f = 0; f < 4; f++)
    for (int o = 0; o < 5; o++) {
      char sql[256], filt[256];
      snprintf(sql, sizeof sql, "SELECT COUNT(*), SUM(ID) FROM EV WHERE %s(TS, ?, ?) %s ?",
               fns[f], ops[o]);
      snprintf(filt, sizeof filt, "SELECT COUNT(*), SUM(ID) FROM EV WHERE %s(TS, ?, ?) %s ? "
               "OR V < V", fns[f], ops[o]);
      rowan_stmt *q, *r;
      assert_int_equal(rowan_prepare(db, sql, -1, &q, NULL), ROWAN_OK);
      assert_int_equal(rowan_prepare(db, filt, -1, &r, NULL), ROWAN_OK);
      for (int i = 0; i < rounds; i++) {
        const char *unit = units[tu_below(&rs, 7)];
        int64_t mult = 1 + (int64_t)tu_below(&rs, 3);
        int64_t c = T0 + (int64_t)tu_below(&rs, 40) * HOUR_MS * 6 - DAY_MS;
        if (tu_below(&rs, 3) == 0) c += (int64_t)tu_below(&rs, HOUR_MS); /* off a boundary */
        int64_t n1, s1, n2, s2;
        count_sum(q, unit, mult, c, &n1, &s1);
        count_sum(r, unit, mult, c, &n2, &s2);
        if (n1 != n2 || s1 != s2)
          fail_msg("%s: unit %s mult %lld ts %lld ms: %lld rows (sum %lld), as a filter %lld "
                   "(sum %lld)", sql, unit, (long long)mult, (long long)c, (long long)n1,
                   (long long)s1, (long long)n2, (long long)s2);
        nonempty += n1 > 0 && n1 < N_ROWS;
      }
      rowan_finalize(q);
      rowan_finalize(r);
    }
  assert_true(nonempty > 10); /* the ranges cut the rows, not all or nothing */
  /* the bound statement's plan: a range, no filter */
  plan_is_range(db, "EXPLAIN SELECT ID FROM EV WHERE TRUNC(TS, ?) = ?", "DAY", T0 + DAY_MS, false,
                "RANGE SCAN OVER EV");
  assert_int_equal(rowan_close(db), ROWAN_OK);
  kv_env_free(env);
}

/* A DATE constant against a TIMESTAMP rounding (TRUNC(TS, ?, ?) op CAST(? AS DATE), the date
** bound as text) and a TIMESTAMP one against a DATE rounding (TRUNC(D, ?, ?) op ?, on and off
** midnight) are key ranges too, compared as instants (a DATE at its midnight): each run's
** count and id sum equal the same term kept as a filter. */
static void t_date_against_timestamp(void **st) {
  (void)st;
  uint64_t rs = tu_seed("key_round_date");
  kv_env *env = kv_env_mem_new(0);
  rowan_db *db = tu_open_mem(env);
  exec_ok(db, "CREATE TABLE EV (TS TIMESTAMP NOT NULL, ID INTEGER NOT NULL, V INTEGER, "
              "CONSTRAINT PK PRIMARY KEY (TS DESC, ID))");
  exec_ok(db, "CREATE TABLE ED (D DATE NOT NULL, ID INTEGER NOT NULL, V INTEGER, "
              "CONSTRAINT PK PRIMARY KEY (D, ID))");
  exec_ok(db, "UPSERT INTO ED VALUES (CAST(TIMESTAMP '2016-06-01 00:00:00' AS DATE), 0, 0)");
  rowan_stmt *up, *ud;
  assert_int_equal(rowan_prepare(db, "UPSERT INTO EV VALUES (?, ?, ?)", -1, &up, NULL), ROWAN_OK);
  assert_int_equal(rowan_prepare(db, "UPSERT INTO ED SELECT CAST(TS AS DATE), ID, V FROM EV "
                                     "WHERE ID = ?", -1, &ud, NULL), ROWAN_OK);
  for (int k = 0; k < N_ROWS; k++) {
    assert_int_equal(rowan_bind_timestamp(up, 1, ts_of(k)), ROWAN_OK);
    assert_int_equal(rowan_bind_int64(up, 2, k), ROWAN_OK);
    assert_int_equal(rowan_bind_int64(up, 3, k), ROWAN_OK);
    assert_int_equal(rowan_step(up), ROWAN_DONE);
    assert_int_equal(rowan_reset(up), ROWAN_OK);
    assert_int_equal(rowan_bind_int64(ud, 1, k), ROWAN_OK);
    assert_int_equal(rowan_step(ud), ROWAN_DONE);
    assert_int_equal(rowan_reset(ud), ROWAN_OK);
    if (k == N_ROWS / 2) assert_int_equal(rowan_flush(db), ROWAN_OK);
  }
  rowan_finalize(up);
  rowan_finalize(ud);
  static const char *const ops[] = {"=", "<", "<=", ">", ">="};
  static const char *const units[] = {"DAY", "WEEK", "MONTH", "YEAR"};
  int rounds = (int)tu_scaled(20, 6), nonempty = 0;
  for (int form = 0; form < 2; form++)
    for (int o = 0; o < 5; o++) {
      char sql[256], filt[256];
      const char *lhs = form ? "TRUNC(D, ?, ?)" : "TRUNC(TS, ?, ?)";
      const char *rhs = form ? "?" : "CAST(? AS DATE)";
      const char *tab = form ? "ED" : "EV";
      snprintf(sql, sizeof sql, "SELECT COUNT(*), SUM(ID) FROM %s WHERE %s %s %s", tab, lhs,
               ops[o], rhs);
      snprintf(filt, sizeof filt, "SELECT COUNT(*), SUM(ID) FROM %s WHERE %s %s %s OR V < V",
               tab, lhs, ops[o], rhs);
      rowan_stmt *q, *r;
      assert_int_equal(rowan_prepare(db, sql, -1, &q, NULL), ROWAN_OK);
      assert_int_equal(rowan_prepare(db, filt, -1, &r, NULL), ROWAN_OK);
      for (int i = 0; i < rounds; i++) {
        const char *unit = units[tu_below(&rs, 4)];
        int64_t mult = 1 + (int64_t)tu_below(&rs, 2);
        int64_t c = T0 + (int64_t)tu_below(&rs, 30) * DAY_MS - 3 * DAY_MS;
        if (form && tu_below(&rs, 2)) c += (int64_t)tu_below(&rs, DAY_MS); /* off midnight */
        int64_t n1, s1, n2, s2;
        count_sum_as(q, unit, mult, c, !form, &n1, &s1);
        count_sum_as(r, unit, mult, c, !form, &n2, &s2);
        if (n1 != n2 || s1 != s2)
          fail_msg("%s: unit %s mult %lld at %lld ms: %lld rows (sum %lld), as a filter %lld "
                   "(sum %lld)", sql, unit, (long long)mult, (long long)c, (long long)n1,
                   (long long)s1, (long long)n2, (long long)s2);
        nonempty += n1 > 0 && n1 < N_ROWS;
      }
      rowan_finalize(q);
      rowan_finalize(r);
    }
  assert_true(nonempty > 10);
  plan_is_range(db, "EXPLAIN SELECT ID FROM EV WHERE TRUNC(TS, ?) = CAST(? AS DATE)", "DAY", 0,
                true, "RANGE SCAN OVER EV");
  plan_is_range(db, "EXPLAIN SELECT ID FROM ED WHERE TRUNC(D, ?) >= ?", "MONTH",
                T0 + DAY_MS / 2, false, "RANGE SCAN OVER ED");
  assert_int_equal(rowan_close(db), ROWAN_OK);
  kv_env_free(env);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(t_rebound),
      cmocka_unit_test(t_date_against_timestamp),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
