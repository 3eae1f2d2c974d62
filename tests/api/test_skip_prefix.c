/*
** tests/api/test_skip_prefix.c: the skip scan by prefix (planner/skip_prefix.h) through a
** prepared statement with parameters in the bounds of the second key column, the way the
** benchmark's daily average runs it: `WHERE TS >= ? AND TS < ? GROUP BY STATION` on
** PRIMARY KEY (STATION, TS DESC), rebound with random windows (empty ones, ones past the
** data, the whole table), each run compared with the same query forbidden the skip scan
** (hint RANGE_SCAN), and its rows examined (rowan_stmt_metrics) equal to the rows in the
** window (the full scan examines every row). Rows of a new station committed after the
** plan was made are read by the next run with the same values (the plan is kept; the
** prefixes are found by the scan), and a transaction's own new station is read inside it.
** Seeded (tu_seed).
** Not here: the kv scan against a model (tests/kv/test_scan_skip.c), SQL answers against
** SQLite (tests/sql/skip_prefix.test, skip_prefix_keys.test) and the EXPLAIN text
** (tests/sql/skip_prefix_plan.test).
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
#include "tu_sbuf.h"

#define N_ST 6
#define N_HOURS 400
#define T0 1467331200000LL /* 2016-07-01 00:00:00 UTC, ms */
#define HOUR 3600000LL

static const char *const ST[N_ST] = {"Aotizhongxin", "Dongsi", "It's", "", "a\x01" "b", "Zz"};

/* Run stmt with the window [from, to): its rows as text into out, rows examined. */
static uint64_t run(rowan_stmt *st, int64_t from, int64_t to, sbuf *out, uint64_t *count) {
  assert_int_equal(rowan_bind_timestamp(st, 1, from), ROWAN_OK);
  assert_int_equal(rowan_bind_timestamp(st, 2, to), ROWAN_OK);
  int rc;
  *count = 0;
  while ((rc = rowan_step(st)) == ROWAN_ROW) {
    int64_t n = rowan_column_int64(st, 1);
    *count += (uint64_t)n;
    sb_add(out, "%s|%lld|%.3f\n", (const char *)rowan_column_text(st, 0), (long long)n,
           rowan_column_double(st, 2));
  }
  assert_int_equal(rc, ROWAN_DONE);
  rowan_metrics m;
  assert_int_equal(rowan_stmt_metrics(st, &m), ROWAN_OK);
  assert_int_equal(rowan_reset(st), ROWAN_OK);
  return m.rows_examined;
}

static void compare(rowan_stmt *sk, rowan_stmt *ref, int64_t from, int64_t to,
                    uint64_t total) {
  sbuf a = {0}, b = {0};
  uint64_t na, nb;
  uint64_t ea = run(sk, from, to, &a, &na), eb = run(ref, from, to, &b, &nb);
  assert_string_equal(a.p ? a.p : "", b.p ? b.p : "");
  assert_int_equal(na, nb);
  assert_int_equal(ea, na);    /* the skip scan examines the rows of the window alone */
  /* the full scan examines every row (none for an empty window: a degenerate scan) */
  assert_int_equal(eb, from < to ? total : 0);
  free(a.p);
  free(b.p);
}

static void skip_scan_prepared(void **state) {
  (void)state;
  uint64_t rs = tu_seed("skip_scan_prepared");
  kv_env *env = kv_env_mem_new(0);
  rowan_db *db = tu_open_mem(env);
  exec_ok(db, "CREATE TABLE R (STATION VARCHAR NOT NULL, TS TIMESTAMP NOT NULL, M.V DOUBLE, "
              "CONSTRAINT PK PRIMARY KEY (STATION, TS DESC))");
  rowan_stmt *up;
  assert_int_equal(rowan_prepare(db, "UPSERT INTO R VALUES (?, ?, ?)", -1, &up, NULL), ROWAN_OK);
  exec_ok(db, "BEGIN");
  for (int s = 0; s < N_ST; s++)
    for (int h = 0; h < N_HOURS; h++) {
      assert_int_equal(rowan_bind_text(up, 1, ST[s], -1), ROWAN_OK);
      assert_int_equal(rowan_bind_timestamp(up, 2, T0 + h * HOUR), ROWAN_OK);
      if ((s + h) % 5 == 2) assert_int_equal(rowan_bind_null(up, 3), ROWAN_OK);
      else assert_int_equal(rowan_bind_double(up, 3, s * 100.0 + h * 0.5), ROWAN_OK);
      assert_int_equal(rowan_step(up), ROWAN_DONE);
      assert_int_equal(rowan_reset(up), ROWAN_OK);
    }
  exec_ok(db, "COMMIT");
  const char *q = "SELECT %sSTATION, COUNT(*), SUM(V) FROM R WHERE TS >= ? AND TS < ? "
                  "GROUP BY STATION";
  char sql[256];
  rowan_stmt *sk, *ref;
  snprintf(sql, sizeof sql, q, "");
  assert_int_equal(rowan_prepare(db, sql, -1, &sk, NULL), ROWAN_OK);
  snprintf(sql, sizeof sql, q, "/*+ RANGE_SCAN */ ");
  assert_int_equal(rowan_prepare(db, sql, -1, &ref, NULL), ROWAN_OK);
  uint64_t total = (uint64_t)N_ST * N_HOURS;
  int runs = (int)tu_scaled(60, 20);
  for (int i = 0; i < runs; i++) {
    int64_t a = (int64_t)tu_below(&rs, N_HOURS + 40) - 20;
    int64_t len = (int64_t)tu_below(&rs, 30);
    compare(sk, ref, T0 + a * HOUR, T0 + (a + len) * HOUR, total);
  }
  /* a new station after the plan was made, the same values: the kept plan reads it */
  int64_t from = T0 + 10 * HOUR, to = T0 + 20 * HOUR;
  compare(sk, ref, from, to, total);
  exec_ok(db, "UPSERT INTO R VALUES ('Bb', TIMESTAMP '2016-07-01 12:00:00', 7.0)");
  total++;
  sbuf a = {0};
  uint64_t n;
  run(sk, from, to, &a, &n);
  assert_int_equal(n, (uint64_t)N_ST * 10 + 1);
  assert_non_null(strstr(a.p, "Bb|1|7.000"));
  free(a.p);
  compare(sk, ref, from, to, total);
  /* inside a transaction: its own new station */
  exec_ok(db, "BEGIN");
  exec_ok(db, "UPSERT INTO R VALUES ('Cc', TIMESTAMP '2016-07-01 13:00:00', 8.0)");
  a = (sbuf){0};
  run(sk, from, to, &a, &n);
  assert_int_equal(n, (uint64_t)N_ST * 10 + 2);
  assert_non_null(strstr(a.p, "Cc|1|8.000"));
  free(a.p);
  exec_ok(db, "ROLLBACK");
  compare(sk, ref, from, to, total);
  rowan_finalize(sk);
  rowan_finalize(ref);
  rowan_finalize(up);
  assert_int_equal(rowan_close(db), ROWAN_OK);
  kv_env_free(env);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(skip_scan_prepared)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
