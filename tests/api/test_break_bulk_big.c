/*
** tests/api/test_break_bulk_big.c: a bulk load the size of the benchmark's scaled set in
** shape (several stations' files interleaved hour by hour against a (STATION, TS DESC) key,
** so every segment overlaps every other and each family's commit merge is large enough to
** run as two key ranges at the default split of 65,536 cells), with an index, repeated
** rows (in a table without one) and NULL fields, against the same rows written by prepared
** UPSERTs: the two tables are stepped side by side and must hold the same rows, the index
** reads must agree and CHECK INDEX must be clean. Seeded (tu_seed; the seed is printed).
** Not here: small merges and their split points (tests/kv/test_break_bulk_split.c).
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

#define T0 1456790400000LL
#define HOUR 3600000LL

/* Step two statements side by side; every row must be equal. Returns the rows. */
static int64_t same_rows(rowan_db *a, rowan_db *b, const char *sql, uint64_t seed) {
  rowan_stmt *sa, *sb;
  assert_int_equal(rowan_prepare(a, sql, -1, &sa, NULL), ROWAN_OK);
  assert_int_equal(rowan_prepare(b, sql, -1, &sb, NULL), ROWAN_OK);
  int64_t n = 0;
  for (;;) {
    int ra = rowan_step(sa), rb = rowan_step(sb);
    if (ra != rb) fail_msg("seed %llu: %s: row %lld: %s vs %s", (unsigned long long)seed, sql,
                           (long long)n, rowan_errstr(ra), rowan_errstr(rb));
    if (ra != ROWAN_ROW) break;
    for (int c = 0; c < rowan_column_count(sa); c++) {
      const char *x = rowan_column_text(sa, c), *y = rowan_column_text(sb, c);
      if ((x == NULL) != (y == NULL) || (x && strcmp(x, y) != 0))
        fail_msg("seed %llu: %s: row %lld column %d: bulk %s, UPSERT %s",
                 (unsigned long long)seed, sql, (long long)n, c, x ? x : "NULL", y ? y : "NULL");
    }
    n++;
  }
  rowan_finalize(sa);
  rowan_finalize(sb);
  return n;
}

static int check_cb(void *ctx, int ncol, char **values, char **names) {
  (void)names;
  int *bad = ctx;
  if (ncol >= 2 && values[0] &&
      (!strcmp(values[0], "MISSING") || !strcmp(values[0], "EXTRA") ||
       !strcmp(values[0], "MISMATCHED")) &&
      values[1] && strcmp(values[1], "0") != 0)
    (*bad)++;
  return 0;
}

static void load_both(bool with_index, void **state) {
  (void)state;
  uint64_t seed = tu_seed(with_index ? "big_interleaved_indexed" : "big_interleaved_repeats");
  uint64_t rs = seed;
  kv_env *ea = kv_env_mem_new(0), *eb = kv_env_mem_new(0);
  rowan_db *a = tu_open_mem(ea), *b = tu_open_mem(eb);
  const char *ddl = "CREATE TABLE R (STATION VARCHAR NOT NULL, TS TIMESTAMP NOT NULL, "
                    "M.TEMP DOUBLE, M.WD VARCHAR, M.RAIN INTEGER, "
                    "CONSTRAINT PK PRIMARY KEY (STATION, TS DESC))";
  exec_ok(a, ddl);
  exec_ok(b, ddl);
  if (with_index) {
    exec_ok(a, "CREATE INDEX RT ON R (TEMP) INCLUDE (WD)");
    exec_ok(b, "CREATE INDEX RT ON R (TEMP) INCLUDE (WD)");
  }
  static const char *const cols[] = {"STATION", "TS", "TEMP", "WD", "RAIN"};
  rowan_bulk *bulk;
  assert_int_equal(rowan_bulk_begin(a, "R", 5, cols, &bulk), ROWAN_OK);
  rowan_stmt *up;
  assert_int_equal(rowan_prepare(b, "UPSERT INTO R VALUES (?, ?, ?, ?, ?)", -1, &up, NULL),
                   ROWAN_OK);
  exec_ok(b, "BEGIN");
  int nst = 12, hours = (int)tu_scaled(7000, 1750); /* 84,000 rows (21,000 at 0.25) */
  int64_t added = 0;
  for (int h = 0; h < hours; h++)
    for (int s = 0; s < nst; s++) {
      char st[24], ts[32], temp[24], rain[16];
      snprintf(st, sizeof st, "station%02d", s);
      /* the archive's files are newest first: TS DESC order within each station */
      int64_t t = T0 + (int64_t)(hours - 1 - h) * HOUR;
      time_t secs = (time_t)(t / 1000);
      struct tm tmv;
      gmtime_r(&secs, &tmv);
      strftime(ts, sizeof ts, "%Y-%m-%d %H:%M:%S", &tmv);
      snprintf(temp, sizeof temp, "%.1f", (double)((h * 31 + s * 17) % 700) / 10.0 - 20.0);
      snprintf(rain, sizeof rain, "%d", (h + s) % 9);
      const char *f[5] = {st, ts, tu_below(&rs, 10) == 0 ? NULL : temp,
                          tu_below(&rs, 7) == 0 ? NULL : (h % 3 ? "NE" : "SW"),
                          tu_below(&rs, 5) == 0 ? NULL : rain};
      int reps = !with_index && tu_below(&rs, 200) == 0 ? 2 : 1; /* a repeated row */
      for (int r = 0; r < reps; r++) {
        if (r == 1) f[2] = tu_below(&rs, 2) ? NULL : "99.5"; /* the repeat changes TEMP */
        assert_int_equal(rowan_bulk_add_text(bulk, f, NULL), ROWAN_OK);
        rowan_reset(up);
        for (int c = 0; c < 5; c++) {
          if (f[c]) rowan_bind_text(up, c + 1, f[c], -1);
          else rowan_bind_null(up, c + 1);
        }
        if (rowan_step(up) != ROWAN_DONE) fail_msg("UPSERT: %s", rowan_errmsg(b));
        added++;
      }
      if (added % 20000 == 0) {
        exec_ok(b, "COMMIT");
        exec_ok(b, "BEGIN");
      }
    }
  exec_ok(b, "COMMIT");
  rowan_finalize(up);
  if (rowan_bulk_commit(bulk) != ROWAN_OK) fail_msg("commit: %s", rowan_errmsg(a));
  int64_t n = same_rows(a, b, "SELECT * FROM R", seed);
  assert_int_equal(n, (int64_t)nst * hours);
  same_rows(a, b, "SELECT STATION, COUNT(*), COUNT(TEMP), MIN(TS), MAX(RAIN) FROM R GROUP BY "
                  "STATION", seed);
  same_rows(a, b, "SELECT TS, TEMP FROM R WHERE STATION = 'station05' ORDER BY TS DESC LIMIT 100",
            seed);
  if (with_index) {
    int bad = 0;
    assert_int_equal(rowan_exec(a, "CHECK INDEX RT ON R", check_cb, &bad), ROWAN_OK);
    if (bad) fail_msg("seed %llu: CHECK INDEX RT ON R finds problems after the load",
                      (unsigned long long)seed);
    same_rows(a, b, "SELECT /*+ INDEX(R RT) */ TEMP, WD, STATION, TS FROM R WHERE TEMP > 40", seed);
  }
  assert_int_equal(rowan_close(a), ROWAN_OK);
  assert_int_equal(rowan_close(b), ROWAN_OK);
  kv_env_free(ea);
  kv_env_free(eb);
}

static void big_interleaved_indexed(void **state) { load_both(true, state); }
static void big_interleaved_repeats(void **state) { load_both(false, state); }

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(big_interleaved_indexed),
      cmocka_unit_test(big_interleaved_repeats),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
