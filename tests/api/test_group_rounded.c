/*
** tests/api/test_group_rounded.c: the benchmark's daily average (GROUP BY STATION,
** TRUNC(TS, unit) over the key (STATION, TS DESC), a TS range bound as parameters) through
** the public API as the benchmark drives it: one prepared statement re-bound and re-run, the
** unit a parameter too (exec/op_query.c resolves it once per run), each run's groups
** compared with the groups computed here from the rows written. Rows lie in two store files
** with small blocks and in the memstore (a group's rows in all three), some readings NULL
** (no cell), some groups with none. Units of fixed length (HOUR, DAY, WEEK, 'day') and
** ranges that start and end inside a group; VARBINARY keys with and without 0x00 bytes
** (escaped in the key) grouped and read back. Seeded (tu_seed).
** Not here: the plan and the units of calendar length (tests/sql/group_stream.test).
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

#define N_ST 4
#define N_ROWS 300                 /* rows per station */
#define STEP_MS (97LL * 60 * 1000) /* 1 h 37 min between a station's readings */
#define T0 1467331200000LL         /* 2016-07-01 00:00:00 UTC, ms */
#define DAY_MS 86400000LL
#define MAX_GROUPS (N_ST * N_ROWS)

static const char *station(int s) {
  static const char *const names[N_ST] = {"Aotizhongxin", "Dongsi", "a\x01" "b", "Z"};
  return names[s];
}

static int64_t ts_of(int s, int k) { return T0 + k * STEP_MS + s * 60000LL; }

/* The reading of (s, k), false (no cell) for some; station 3 has none in its first rows. */
static bool reading(int s, int k, double *v) {
  *v = (double)((k * 7 + s * 3) % 41) / 4.0 - 3.0;
  return (k + s) % 6 != 2 && !(s == 3 && k < 40);
}

static int64_t floor_div(int64_t a, int64_t b) {
  return a / b - (a % b != 0 && (a < 0) != (b < 0));
}

/* ts (ms) truncated to the unit: HOUR, DAY or WEEK (weeks start on Mondays; 1970-01-05 was
** one). */
static int64_t trunc_ms(int64_t ts, const char *unit) {
  int64_t len = unit[0] == 'H' ? 3600000LL : unit[0] == 'W' ? 7 * DAY_MS : DAY_MS;
  int64_t origin = unit[0] == 'W' ? 4 * DAY_MS : 0;
  return floor_div(ts - origin, len) * len + origin;
}

typedef struct group {
  int s;
  int64_t key;
  int64_t rows, vals;
  double sum;
  bool seen;
} group;

/* The groups of the rows with from <= ts < to, in key order (station, then key descending,
** as the rows come: the sum adds in that order). */
static int expected(int64_t from, int64_t to, const char *unit, group *g) {
  int n = 0;
  for (int s = 0; s < N_ST; s++)
    for (int k = N_ROWS - 1; k >= 0; k--) {
      int64_t ts = ts_of(s, k);
      if (ts < from || ts >= to) continue;
      int64_t key = trunc_ms(ts, unit);
      if (n == 0 || g[n - 1].s != s || g[n - 1].key != key)
        g[n++] = (group){s, key, 0, 0, 0, false};
      double v;
      g[n - 1].rows++;
      if (reading(s, k, &v)) {
        g[n - 1].vals++;
        g[n - 1].sum += v;
      }
    }
  return n;
}

static int station_of(const char *name) {
  for (int s = 0; s < N_ST; s++)
    if (strcmp(station(s), name) == 0) return s;
  return -1;
}

static void daily_average_rebound(void **state) {
  (void)state;
  uint64_t seed = tu_seed("daily_average_rebound"), rs = seed;
  kv_env *env = kv_env_mem_new(0);
  rowan_db *db = tu_open_mem(env);
  exec_ok(db, "CREATE TABLE SENSOR (STATION VARCHAR NOT NULL, TS TIMESTAMP NOT NULL, "
              "READINGS.TEMP DOUBLE, READINGS.PRES DOUBLE, "
              "CONSTRAINT PK PRIMARY KEY (STATION, TS DESC)) READINGS.BLOCKSIZE = 512");
  rowan_stmt *up;
  assert_int_equal(rowan_prepare(db, "UPSERT INTO SENSOR VALUES (?, ?, ?, ?)", -1, &up, NULL),
                   ROWAN_OK);
  for (int part = 0; part < 3; part++) { /* rows k % 3 == part: two files and the memstore */
    for (int s = 0; s < N_ST; s++)
      for (int k = part; k < N_ROWS; k += 3) {
        double v;
        assert_int_equal(rowan_bind_text(up, 1, station(s), -1), ROWAN_OK);
        assert_int_equal(rowan_bind_timestamp(up, 2, ts_of(s, k)), ROWAN_OK);
        if (reading(s, k, &v)) assert_int_equal(rowan_bind_double(up, 3, v), ROWAN_OK);
        else assert_int_equal(rowan_bind_null(up, 3), ROWAN_OK);
        if (reading(s, k, &v)) assert_int_equal(rowan_bind_double(up, 4, 1000.0 + k), ROWAN_OK);
        else assert_int_equal(rowan_bind_null(up, 4), ROWAN_OK);
        assert_int_equal(rowan_step(up), ROWAN_DONE);
        assert_int_equal(rowan_reset(up), ROWAN_OK);
      }
    if (part < 2) assert_int_equal(rowan_flush(db), ROWAN_OK);
  }
  rowan_finalize(up);
  rowan_stmt *q;
  assert_int_equal(rowan_prepare(db, "SELECT STATION, TRUNC(TS, ?) AS D, COUNT(*), COUNT(TEMP), "
                                     "AVG(TEMP) FROM SENSOR WHERE TS >= ? AND TS < ? "
                                     "GROUP BY STATION, D",
                                 -1, &q, NULL),
                   ROWAN_OK);
  static const char *const units[] = {"DAY", "HOUR", "WEEK", "day"};
  static group want[MAX_GROUPS];
  int64_t span = N_ROWS * STEP_MS;
  int rounds = (int)tu_scaled(40, 12);
  for (int r = 0; r < rounds; r++) {
    const char *unit = units[r % 4];
    int64_t from = T0 - DAY_MS + (int64_t)tu_below(&rs, (uint64_t)(span / 60000)) * 60000;
    int64_t to = from + (int64_t)tu_below(&rs, (uint64_t)(span / 60000)) * 60000;
    if (r == 0) from = T0 - DAY_MS, to = T0 + span + DAY_MS; /* everything */
    int n = expected(from, to, unit, want);
    assert_int_equal(rowan_bind_text(q, 1, unit, -1), ROWAN_OK);
    assert_int_equal(rowan_bind_timestamp(q, 2, from), ROWAN_OK);
    assert_int_equal(rowan_bind_timestamp(q, 3, to), ROWAN_OK);
    int got = 0, rc;
    while ((rc = rowan_step(q)) == ROWAN_ROW) {
      int s = station_of(rowan_column_text(q, 0));
      int64_t key = rowan_column_timestamp(q, 1);
      group *g = NULL;
      for (int i = 0; i < n && !g; i++)
        if (want[i].s == s && want[i].key == key) g = &want[i];
      if (!g || g->seen)
        fail_msg("seed %llu round %d (%s): %s group %s at %lld", (unsigned long long)seed, r,
                 unit, g ? "a second" : "an unexpected", rowan_column_text(q, 0),
                 (long long)key);
      g->seen = true;
      got++;
      assert_int_equal(rowan_column_int64(q, 2), g->rows);
      assert_int_equal(rowan_column_int64(q, 3), g->vals);
      if (g->vals == 0) {
        assert_int_equal(rowan_column_type(q, 4), ROWAN_NULL);
      } else {
        double avg = rowan_column_double(q, 4), w = g->sum / (double)g->vals;
        if (avg != w)
          fail_msg("seed %llu round %d (%s): AVG %.17g, want %.17g", (unsigned long long)seed,
                   r, unit, avg, w);
      }
    }
    assert_int_equal(rc, ROWAN_DONE);
    assert_int_equal(got, n);
    if (r == 0) assert_true(n > N_ST * 10);
    assert_int_equal(rowan_reset(q), ROWAN_OK);
  }
  /* a unit that is not one: the call's error, from the first row */
  assert_int_equal(rowan_bind_text(q, 1, "DAYS", -1), ROWAN_OK);
  assert_int_equal(rowan_bind_timestamp(q, 2, T0), ROWAN_OK);
  assert_int_equal(rowan_bind_timestamp(q, 3, T0 + DAY_MS), ROWAN_OK);
  assert_int_equal(rowan_step(q), ROWAN_ERROR);
  assert_non_null(strstr(rowan_errmsg(db), "unknown unit 'DAYS'"));
  rowan_finalize(q);
  assert_int_equal(rowan_close(db), ROWAN_OK);
  kv_env_free(env);
}

/* Key strings read in place (no 0x00 byte) and through the escape decoder (0x00 bytes, in
** the middle, first and last, the empty string) group and read back as written: GROUP BY a
** VARBINARY key column and the rounded TIMESTAMP after it, with the column read. */
static void binary_keys_grouped(void **state) {
  (void)state;
  kv_env *env = kv_env_mem_new(0);
  rowan_db *db = tu_open_mem(env);
  exec_ok(db, "CREATE TABLE B (K VARBINARY NOT NULL, TS TIMESTAMP NOT NULL, V INTEGER, "
              "CONSTRAINT PK PRIMARY KEY (K, TS))");
  static const struct {
    const char *p;
    int n;
  } keys[] = {{"", 0}, {"\0", 1}, {"\0\0", 2}, {"a\0b", 3}, {"ab\0", 3}, {"ab", 2},
              {"\0\x01", 2}, {"\xff\0\xff", 3}};
  enum { NK = sizeof keys / sizeof keys[0] };
  rowan_stmt *up;
  assert_int_equal(rowan_prepare(db, "UPSERT INTO B VALUES (?, ?, ?)", -1, &up, NULL), ROWAN_OK);
  for (int k = 0; k < NK; k++)
    for (int h = 0; h < 30; h++) { /* 30 rows 5 hours apart: days of 5, 5 and 4 rows ... */
      assert_int_equal(rowan_bind_blob(up, 1, keys[k].p, keys[k].n), ROWAN_OK);
      assert_int_equal(rowan_bind_timestamp(up, 2, T0 + h * 5 * 3600000LL), ROWAN_OK);
      assert_int_equal(rowan_bind_int64(up, 3, k * 100 + h), ROWAN_OK);
      assert_int_equal(rowan_step(up), ROWAN_DONE);
      assert_int_equal(rowan_reset(up), ROWAN_OK);
      if (k == NK / 2 && h == 10) assert_int_equal(rowan_flush(db), ROWAN_OK);
    }
  rowan_finalize(up);
  rowan_stmt *q;
  assert_int_equal(rowan_prepare(db, "SELECT K, TRUNC(TS, 'DAY'), COUNT(*), SUM(V) FROM B "
                                     "GROUP BY K, TRUNC(TS, 'DAY')",
                                 -1, &q, NULL),
                   ROWAN_OK);
  int seen[NK][7] = {{0}}, rows = 0, rc;
  while ((rc = rowan_step(q)) == ROWAN_ROW) {
    const void *b = rowan_column_blob(q, 0);
    int n = rowan_column_bytes(q, 0), k = 0;
    while (k < NK && !(keys[k].n == n && (n == 0 || memcmp(keys[k].p, b, (size_t)n) == 0))) k++;
    if (k == NK) fail_msg("a key of %d bytes that was not written", n);
    int64_t d = (rowan_column_timestamp(q, 1) - T0) / DAY_MS;
    assert_true(d >= 0 && d < 7);
    int64_t cnt = 0, sum = 0;
    for (int h = 0; h < 30; h++)
      if (h * 5 / 24 == d) cnt++, sum += k * 100 + h;
    assert_int_equal(rowan_column_int64(q, 2), cnt);
    assert_int_equal(rowan_column_int64(q, 3), sum);
    seen[k][d]++;
    rows++;
  }
  assert_int_equal(rc, ROWAN_DONE);
  for (int k = 0; k < NK; k++)
    for (int d = 0; d < 7; d++) assert_int_equal(seen[k][d], d * 24 <= 29 * 5 ? 1 : 0);
  assert_int_equal(rows, NK * 7);
  rowan_finalize(q);
  assert_int_equal(rowan_close(db), ROWAN_OK);
  kv_env_free(env);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(daily_average_rebound),
      cmocka_unit_test(binary_keys_grouped),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
