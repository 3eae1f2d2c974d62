/*
** tests/api/test_point_rebind.c: a prepared point lookup driven through the public API the
** way the benchmark and an embedding program drive it (bind text and timestamp, step, read
** every column, reset), against the rows written: every key found with its values, missing
** keys and NULL / wrong-type bindings giving no row or the documented error, the statement
** metrics of each run (read after ROWAN_DONE, cleared by rowan_reset), NOW() still taking
** the clock at each run while a lookup does not need it, and binds of strings longer than
** any before (the parameter's buffer grows). Seeded (tu_seed).
** Not here: the point key template's equivalence with re-planning (tests/exec/test_point_key.c).
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

#define N_ST 5
#define N_HOURS 48
#define T0 1456790400000LL /* 2016-03-01 00:00:00 UTC, ms */

/* The station name of index s: some need escaping in the key (0x00 is not valid text, so
** 0x01 and a quote stand in), lengths differ. */
static const char *station(int s) {
  static const char *const names[N_ST] = {"Aotizhongxin", "Dongsi", "a\x01" "b", "It's", ""};
  return names[s];
}

/* The reading written for (s, h); NULL (no cell) when (s + h) % 7 == 3. */
static bool reading(int s, int h, double *v) {
  *v = s * 1000.0 + h + 0.25;
  return (s + h) % 7 != 3;
}

static void point_lookups_through_the_api(void **state) {
  (void)state;
  uint64_t seed = tu_seed("point_lookups_through_the_api"), rs = seed;
  kv_env *env = kv_env_mem_new(0);
  rowan_db *db = tu_open_mem(env);
  exec_ok(db, "CREATE TABLE R (STATION VARCHAR NOT NULL, TS TIMESTAMP NOT NULL, "
              "M.V DOUBLE, M.WD VARCHAR(3), CONSTRAINT PK PRIMARY KEY (STATION, TS DESC))");
  rowan_stmt *up;
  assert_int_equal(rowan_prepare(db, "UPSERT INTO R VALUES (?, ?, ?, ?)", -1, &up, NULL),
                   ROWAN_OK);
  for (int s = 0; s < N_ST; s++)
    for (int h = 0; h < N_HOURS; h++) {
      double v;
      assert_int_equal(rowan_bind_text(up, 1, station(s), -1), ROWAN_OK);
      assert_int_equal(rowan_bind_timestamp(up, 2, T0 + h * 3600000LL), ROWAN_OK);
      if (reading(s, h, &v)) assert_int_equal(rowan_bind_double(up, 3, v), ROWAN_OK);
      else assert_int_equal(rowan_bind_null(up, 3), ROWAN_OK);
      assert_int_equal(rowan_bind_text(up, 4, h % 2 ? "NE" : "S", -1), ROWAN_OK);
      assert_int_equal(rowan_step(up), ROWAN_DONE);
      assert_int_equal(rowan_reset(up), ROWAN_OK);
      if (h == N_HOURS / 2 && s == 2) assert_int_equal(rowan_flush(db), ROWAN_OK);
    }
  rowan_finalize(up);
  rowan_stmt *st;
  assert_int_equal(rowan_prepare(db, "SELECT TS, V, WD FROM R WHERE STATION = ? AND TS = ?", -1,
                                 &st, NULL),
                   ROWAN_OK);
  int rounds = (int)tu_scaled(3000, 300);
  for (int r = 0; r < rounds; r++) {
    int s = (int)tu_below(&rs, N_ST + 1); /* N_ST: a station that does not exist */
    int h = (int)tu_below(&rs, N_HOURS + 2) - 1;
    const char *name = s < N_ST ? station(s) : "Nowhere";
    assert_int_equal(rowan_bind_text(st, 1, name, -1), ROWAN_OK);
    assert_int_equal(rowan_bind_timestamp(st, 2, T0 + h * 3600000LL), ROWAN_OK);
    bool exists = s < N_ST && h >= 0 && h < N_HOURS;
    int rc = rowan_step(st);
    if (!exists) {
      if (rc != ROWAN_DONE) fail_msg("seed %llu round %d: a row for a missing key", (unsigned long long)seed, r);
    } else {
      if (rc != ROWAN_ROW) fail_msg("seed %llu round %d: %s %d not found: %s", (unsigned long long)seed, r, name, h, rowan_errmsg(db));
      double v;
      assert_int_equal(rowan_column_timestamp(st, 0), T0 + h * 3600000LL);
      if (reading(s, h, &v)) {
        assert_int_equal(rowan_column_type(st, 1), ROWAN_FLOAT);
        assert_true(rowan_column_double(st, 1) == v);
      } else {
        assert_int_equal(rowan_column_type(st, 1), ROWAN_NULL);
      }
      assert_string_equal(rowan_column_text(st, 2), h % 2 ? "NE" : "S");
      assert_int_equal(rowan_step(st), ROWAN_DONE);
    }
    rowan_metrics m;
    assert_int_equal(rowan_stmt_metrics(st, &m), ROWAN_OK);
    assert_int_equal(m.rows_returned, exists ? 1 : 0);
    assert_int_equal(rowan_reset(st), ROWAN_OK);
    assert_int_equal(rowan_stmt_metrics(st, &m), ROWAN_OK);
    assert_int_equal(m.rows_returned, 0); /* a reset clears them */
  }
  /* NULL, text that is no timestamp, a number for the station: no row or an error. */
  assert_int_equal(rowan_bind_null(st, 1), ROWAN_OK);
  assert_int_equal(rowan_step(st), ROWAN_DONE);
  rowan_reset(st);
  assert_int_equal(rowan_bind_text(st, 1, "Dongsi", -1), ROWAN_OK);
  assert_int_equal(rowan_bind_text(st, 2, "not a time", -1), ROWAN_OK);
  assert_int_equal(rowan_step(st), ROWAN_CONSTRAINT);
  rowan_reset(st);
  assert_int_equal(rowan_bind_text(st, 2, "2016-03-01 05:00:00", -1), ROWAN_OK);
  assert_int_equal(rowan_step(st), ROWAN_ROW);
  assert_int_equal(rowan_column_timestamp(st, 0), T0 + 5 * 3600000LL);
  rowan_reset(st);
  /* a station name longer than any before, then a short one again */
  char big[600];
  memset(big, 'x', sizeof big - 1);
  big[sizeof big - 1] = 0;
  assert_int_equal(rowan_bind_text(st, 1, big, -1), ROWAN_OK);
  assert_int_equal(rowan_step(st), ROWAN_DONE);
  rowan_reset(st);
  assert_int_equal(rowan_bind_text(st, 1, "Dongsi", -1), ROWAN_OK);
  assert_int_equal(rowan_step(st), ROWAN_ROW);
  rowan_finalize(st);
  assert_int_equal(rowan_close(db), ROWAN_OK);
  kv_env_free(env);
}

/* A statement calling NOW() takes the clock at each run; one that does not still runs. */
static void now_is_taken_per_run(void **state) {
  (void)state;
  kv_env *env = kv_env_mem_new(0);
  rowan_db *db = tu_open_mem(env);
  exec_ok(db, "CREATE TABLE K (A INTEGER NOT NULL PRIMARY KEY, B VARCHAR)");
  exec_ok(db, "UPSERT INTO K VALUES (1, 'one')");
  rowan_stmt *st;
  assert_int_equal(rowan_prepare(db, "SELECT B, NOW() FROM K WHERE A = ?", -1, &st, NULL),
                   ROWAN_OK);
  int64_t prev = 0;
  for (int i = 0; i < 3; i++) {
    assert_int_equal(rowan_bind_int64(st, 1, 1), ROWAN_OK);
    assert_int_equal(rowan_step(st), ROWAN_ROW);
    assert_string_equal(rowan_column_text(st, 0), "one");
    int64_t now = rowan_column_timestamp(st, 1);
    assert_true(now > 1600000000000LL); /* the wall clock, not 0 */
    assert_true(now >= prev);
    prev = now;
    rowan_reset(st);
  }
  rowan_finalize(st);
  /* the clock in a WHERE, an UPSERT's values and a DELETE's WHERE (not the epoch) */
  assert_int_equal(rowan_prepare(db, "SELECT COUNT(*) FROM K WHERE NOW() > TIMESTAMP "
                                     "'2000-01-01 00:00:00'", -1, &st, NULL), ROWAN_OK);
  assert_int_equal(rowan_step(st), ROWAN_ROW);
  assert_int_equal(rowan_column_int64(st, 0), 1);
  rowan_finalize(st);
  exec_ok(db, "UPSERT INTO K VALUES (5, CASE WHEN NOW() > TIMESTAMP '2000-01-01 00:00:00' "
              "THEN 'later' ELSE 'epoch' END)");
  assert_int_equal(rowan_prepare(db, "SELECT B FROM K WHERE A = 5", -1, &st, NULL), ROWAN_OK);
  assert_int_equal(rowan_step(st), ROWAN_ROW);
  assert_string_equal(rowan_column_text(st, 0), "later");
  rowan_finalize(st);
  exec_ok(db, "DELETE FROM K WHERE A = 5 AND NOW() > TIMESTAMP '2000-01-01 00:00:00'");
  assert_int_equal(rowan_changes(db), 1);
  assert_int_equal(rowan_close(db), ROWAN_OK);
  kv_env_free(env);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(point_lookups_through_the_api),
      cmocka_unit_test(now_is_taken_per_run),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
