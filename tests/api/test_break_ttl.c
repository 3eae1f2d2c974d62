/*
** tests/api/test_break_ttl.c: a table with a TTL while the clock moves (the in-memory env's
** clock, which commits stamp and TTL is measured against): kept point lookups, kept range
** scans and lookups through an index, rebound run after run, against a model of which rows
** are still alive, with rows rewritten (their life starts again), deleted, flushed,
** compacted (major compaction drops expired cells) and read again after each clock step
** (blocks read whole by the fast row path before may now hold expired cells). Kept and
** fresh statements must agree, and both must agree with the model. Seeded (tu_seed).
** Not here: TTL at the kv level without SQL (tests/kv/test_scan_rows.c).
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

#define NOW0 1700000000000LL
#define TTL_S 100
#define NK 60

static rowan_db *open_mem(kv_env *env) {
  rowan_options o;
  rowan_options_init(&o);
  o.kv_env = env;
  o.sync_mode = ROWAN_SYNC_OFF;
  o.block_cache_size = 128u << 10;
  rowan_db *db = NULL;
  assert_int_equal(rowan_open("/db", &o, &db), ROWAN_OK);
  return db;
}

/* Count of rows of a statement run to the end; -1 on an error. */
static int64_t count_rows(rowan_stmt *st, int64_t *sum) {
  int rc;
  int64_t n = 0;
  *sum = 0;
  while ((rc = rowan_step(st)) == ROWAN_ROW) {
    n++;
    *sum += rowan_column_int64(st, 0);
  }
  return rc == ROWAN_DONE ? n : -1;
}

static void ttl_while_the_clock_moves(void **state) {
  (void)state;
  uint64_t seed = tu_seed("ttl_while_the_clock_moves"), rs = seed;
  int64_t now = NOW0;
  kv_env *env = kv_env_mem_new(now);
  rowan_db *db = open_mem(env);
  exec_ok(db, "CREATE TABLE T (K INTEGER NOT NULL PRIMARY KEY, V INTEGER, W VARCHAR) "
              "TTL = 100, BLOCKSIZE = 512");
  exec_ok(db, "CREATE INDEX TW ON T (W) INCLUDE (V)");
  int64_t written[NK]; /* commit time of each key's last write, 0 = none or deleted */
  int wv[NK];          /* its W group */
  memset(written, 0, sizeof written);
  static const char *const kq[] = {
      "SELECT K, V FROM T WHERE K = ?",
      "SELECT K FROM T WHERE K >= ? AND K < ?",
      "SELECT /*+ INDEX(T TW) */ K FROM T WHERE W = ?",
      "SELECT /*+ NO_INDEX */ K FROM T WHERE W = ?",
  };
  rowan_stmt *kept[4];
  for (int i = 0; i < 4; i++) assert_int_equal(rowan_prepare(db, kq[i], -1, &kept[i], NULL), ROWAN_OK);
  int steps = (int)tu_scaled(300, 80);
  for (int step = 0; step < steps; step++) {
    /* writes at this time */
    int nw = (int)tu_below(&rs, 6);
    for (int i = 0; i < nw; i++) {
      int k = (int)tu_below(&rs, NK);
      char sql[128];
      if (tu_below(&rs, 6) == 0) {
        snprintf(sql, sizeof sql, "DELETE FROM T WHERE K = %d", k);
        written[k] = 0;
      } else {
        wv[k] = (int)tu_below(&rs, 3);
        snprintf(sql, sizeof sql, "UPSERT INTO T VALUES (%d, %d, 'w%d')", k, step, wv[k]);
        written[k] = now;
      }
      exec_ok(db, sql);
    }
    switch (tu_below(&rs, 12)) {
    case 0: assert_int_equal(rowan_flush(db), ROWAN_OK); break;
    case 1: assert_int_equal(rowan_compact(db, (int)tu_below(&rs, 2)), ROWAN_OK); break;
    default: break;
    }
    /* the clock moves by 1..40 s and a half (never onto an expiry instant) */
    now += (int64_t)(1 + tu_below(&rs, 40)) * 1000 + 500;
    kv_env_mem_set_time(env, now);
    /* every key through the kept point lookup and a fresh one, against the model */
    for (int rep = 0; rep < 8; rep++) {
      int k = (int)tu_below(&rs, NK);
      bool alive = written[k] && written[k] + TTL_S * 1000 > now;
      rowan_stmt *fresh;
      assert_int_equal(rowan_prepare(db, kq[0], -1, &fresh, NULL), ROWAN_OK);
      rowan_reset(kept[0]);
      rowan_bind_int64(kept[0], 1, k);
      rowan_bind_int64(fresh, 1, k);
      int64_t s1, s2;
      int64_t n1 = count_rows(kept[0], &s1), n2 = count_rows(fresh, &s2);
      rowan_finalize(fresh);
      if (n1 != n2 || n1 != (alive ? 1 : 0))
        fail_msg("seed %llu step %d: K = %d: kept %lld rows, fresh %lld, model %d (written %lld "
                 "ms before now)", (unsigned long long)seed, step, k, (long long)n1,
                 (long long)n2, alive, (long long)(written[k] ? now - written[k] : -1));
    }
    /* a range, and each W group through the index and without */
    int lo = (int)tu_below(&rs, NK), hi = lo + (int)tu_below(&rs, 20);
    int want = 0;
    for (int k = lo; k < hi && k < NK; k++) want += written[k] && written[k] + TTL_S * 1000 > now;
    rowan_reset(kept[1]);
    rowan_bind_int64(kept[1], 1, lo);
    rowan_bind_int64(kept[1], 2, hi);
    int64_t s;
    int64_t n = count_rows(kept[1], &s);
    if (n != want)
      fail_msg("seed %llu step %d: K in [%d, %d): %lld rows, model %d", (unsigned long long)seed,
               step, lo, hi, (long long)n, want);
    for (int g = 0; g < 3; g++) {
      int wantg = 0;
      for (int k = 0; k < NK; k++)
        wantg += written[k] && written[k] + TTL_S * 1000 > now && wv[k] == g;
      for (int i = 2; i < 4; i++) {
        char w[8];
        snprintf(w, sizeof w, "w%d", g);
        rowan_reset(kept[i]);
        rowan_bind_text(kept[i], 1, w, -1);
        int64_t ng = count_rows(kept[i], &s);
        if (ng != wantg)
          fail_msg("seed %llu step %d: %s with 'w%d': %lld rows, model %d",
                   (unsigned long long)seed, step, kq[i], g, (long long)ng, wantg);
      }
    }
  }
  for (int i = 0; i < 4; i++) rowan_finalize(kept[i]);
  assert_int_equal(rowan_close(db), ROWAN_OK);
  kv_env_free(env);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(ttl_while_the_clock_moves),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
