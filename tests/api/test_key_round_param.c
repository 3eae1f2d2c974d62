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

#include "kv/env/env_mem.h"
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
static void count_sum(rowan_stmt *q, const char *unit, int64_t mult, int64_t c, bool date_text,
                      int64_t *n, int64_t *sum) {
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

/* The plan of EXPLAIN sql bound with (unit, c ms or the day 2016-06-21 as text): it holds
** `want` and no filter, else the test fails with the plan. */
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

/* A store with EV (TS TIMESTAMP DESC key) holding N_ROWS rows and, with dates, ED (D DATE
** key) holding each row's day; half in a store file, half in the memstore. */
static rowan_db *open_ev(kv_env *env, bool dates) {
  rowan_db *db = tu_open_mem(env);
  exec_ok(db, "CREATE TABLE EV (TS TIMESTAMP NOT NULL, ID INTEGER NOT NULL, V INTEGER, "
              "CONSTRAINT PK PRIMARY KEY (TS DESC, ID))");
  rowan_stmt *up, *ud = NULL;
  assert_int_equal(rowan_prepare(db, "UPSERT INTO EV VALUES (?, ?, ?)", -1, &up, NULL), ROWAN_OK);
  if (dates) {
    exec_ok(db, "CREATE TABLE ED (D DATE NOT NULL, ID INTEGER NOT NULL, V INTEGER, "
                "CONSTRAINT PK PRIMARY KEY (D, ID))");
    assert_int_equal(rowan_prepare(db, "UPSERT INTO ED SELECT CAST(TS AS DATE), ID, V FROM EV "
                                       "WHERE ID = ?", -1, &ud, NULL), ROWAN_OK);
  }
  for (int k = 0; k < N_ROWS; k++) {
    assert_int_equal(rowan_bind_timestamp(up, 1, ts_of(k)), ROWAN_OK);
    assert_int_equal(rowan_bind_int64(up, 2, k), ROWAN_OK);
    assert_int_equal(rowan_bind_int64(up, 3, k), ROWAN_OK);
    assert_int_equal(rowan_step(up), ROWAN_DONE);
    assert_int_equal(rowan_reset(up), ROWAN_OK);
    if (ud) {
      assert_int_equal(rowan_bind_int64(ud, 1, k), ROWAN_OK);
      assert_int_equal(rowan_step(ud), ROWAN_DONE);
      assert_int_equal(rowan_reset(ud), ROWAN_OK);
    }
    if (k == N_ROWS / 2) assert_int_equal(rowan_flush(db), ROWAN_OK);
  }
  rowan_finalize(up);
  rowan_finalize(ud);
  return db;
}

/* The rounding term `term` (parameters unit, multiplier, constant) over table `tab`, run as
** a key range and kept as a filter (OR'ed with a term never true) `rounds` times with values
** from pick(rs, &unit, &mult, &c): the counts and id sums must agree. Returns the runs whose
** count was neither 0 nor everything. */
typedef void (*pick_fn)(uint64_t *rs, const char **unit, int64_t *mult, int64_t *c);
static int same_as_filter(rowan_db *db, const char *tab, const char *term, int rounds,
                          uint64_t *rs, pick_fn pick, bool date_text) {
  char sql[256], filt[256];
  snprintf(sql, sizeof sql, "SELECT COUNT(*), SUM(ID) FROM %s WHERE %s", tab, term);
  snprintf(filt, sizeof filt, "SELECT COUNT(*), SUM(ID) FROM %s WHERE %s OR V < V", tab, term);
  rowan_stmt *q, *r;
  assert_int_equal(rowan_prepare(db, sql, -1, &q, NULL), ROWAN_OK);
  assert_int_equal(rowan_prepare(db, filt, -1, &r, NULL), ROWAN_OK);
  int nonempty = 0;
  for (int i = 0; i < rounds; i++) {
    const char *unit;
    int64_t mult, c, n1, s1, n2, s2;
    pick(rs, &unit, &mult, &c);
    count_sum(q, unit, mult, c, date_text, &n1, &s1);
    count_sum(r, unit, mult, c, date_text, &n2, &s2);
    if (n1 != n2 || s1 != s2)
      fail_msg("%s: unit %s mult %lld at %lld ms: %lld rows (sum %lld), as a filter %lld "
               "(sum %lld)", sql, unit, (long long)mult, (long long)c, (long long)n1,
               (long long)s1, (long long)n2, (long long)s2);
    nonempty += n1 > 0 && n1 < N_ROWS;
  }
  rowan_finalize(q);
  rowan_finalize(r);
  return nonempty;
}

static const char *const OPS[] = {"=", "<", "<=", ">", ">="};

/* Timestamps 6 hours apart around T0, a third of them off a boundary. */
static void pick_ts(uint64_t *rs, const char **unit, int64_t *mult, int64_t *c) {
  static const char *const units[] = {"HOUR", "DAY", "day", "WEEK", "MONTH", "YEAR", "MINUTE"};
  *unit = units[tu_below(rs, 7)];
  *mult = 1 + (int64_t)tu_below(rs, 3);
  *c = T0 + (int64_t)tu_below(rs, 40) * HOUR_MS * 6 - DAY_MS;
  if (tu_below(rs, 3) == 0) *c += (int64_t)tu_below(rs, HOUR_MS); /* off a boundary */
}

static void t_rebound(void **st) {
  (void)st;
  uint64_t rs = tu_seed("key_round_param");
  kv_env *env = kv_env_mem_new(0);
  rowan_db *db = open_ev(env, false);
  static const char *const fns[] = {"TRUNC", "FLOOR", "CEIL", "ROUND"};
  int rounds = (int)tu_scaled(30, 8), nonempty = 0;
  for (int f = 0; f < 4; f++)
    for (int o = 0; o < 5; o++) {
      char term[64];
      snprintf(term, sizeof term, "%s(TS, ?, ?) %s ?", fns[f], OPS[o]);
      nonempty += same_as_filter(db, "EV", term, rounds, &rs, pick_ts, false);
    }
  assert_true(nonempty > 10); /* the ranges cut the rows, not all or nothing */
  /* the bound statement's plan: a range, no filter */
  plan_is_range(db, "EXPLAIN SELECT ID FROM EV WHERE TRUNC(TS, ?) = ?", "DAY", T0 + DAY_MS, false,
                "RANGE SCAN OVER EV");
  assert_int_equal(rowan_close(db), ROWAN_OK);
  kv_env_free(env);
}

/* Days around T0 (the day's midnight; off_midnight: half of them at some time of the day). */
static void pick_day(uint64_t *rs, const char **unit, int64_t *mult, int64_t *c, bool off) {
  static const char *const units[] = {"DAY", "WEEK", "MONTH", "YEAR"};
  *unit = units[tu_below(rs, 4)];
  *mult = 1 + (int64_t)tu_below(rs, 2);
  *c = T0 + (int64_t)tu_below(rs, 30) * DAY_MS - 3 * DAY_MS;
  if (off && tu_below(rs, 2)) *c += (int64_t)tu_below(rs, DAY_MS);
}
static void pick_midnight(uint64_t *rs, const char **unit, int64_t *mult, int64_t *c) {
  pick_day(rs, unit, mult, c, false);
}
static void pick_any_time(uint64_t *rs, const char **unit, int64_t *mult, int64_t *c) {
  pick_day(rs, unit, mult, c, true);
}

/* A DATE constant against a TIMESTAMP rounding (TRUNC(TS, ?, ?) op CAST(? AS DATE), the date
** bound as text) and a TIMESTAMP one against a DATE rounding (TRUNC(D, ?, ?) op ?, on and off
** midnight) are key ranges too, compared as instants (a DATE at its midnight): each run's
** count and id sum equal the same term kept as a filter. */
static void t_date_against_timestamp(void **st) {
  (void)st;
  uint64_t rs = tu_seed("key_round_date");
  kv_env *env = kv_env_mem_new(0);
  rowan_db *db = open_ev(env, true);
  int rounds = (int)tu_scaled(20, 6), nonempty = 0;
  for (int o = 0; o < 5; o++) {
    char term[64];
    snprintf(term, sizeof term, "TRUNC(TS, ?, ?) %s CAST(? AS DATE)", OPS[o]);
    nonempty += same_as_filter(db, "EV", term, rounds, &rs, pick_midnight, true);
    snprintf(term, sizeof term, "TRUNC(D, ?, ?) %s ?", OPS[o]);
    nonempty += same_as_filter(db, "ED", term, rounds, &rs, pick_any_time, false);
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
