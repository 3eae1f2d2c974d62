/*
** tests/exec/test_break_fast_snapshot.c: what an open SELECT sees while the same connection
** writes between its steps, against a model.
**  - background: a small memstore makes commits flush and compact in the background thread
**    while a range scan (the fast paths: row runs, value vectors, PH_FAST) is between rows;
**    UPSERTs and DELETEs land ahead of and behind the cursor. The statement reads at the
**    snapshot of its first step (kv.h: a scan sees one snapshot), so its rows must be the
**    model's rows as they were then, whatever flushed or compacted since. Seeded.
**  - index lookups: a SELECT through an uncovered index (each data row looked up by kv_get)
**    with UPSERTs and DELETEs of the rows ahead of the cursor: every row it returns must be
**    the row as it was at the statement's snapshot.
**  - TTL: the clock moved past every row's expiry and a major compaction between two steps
**    leave the open statement's rows those alive when its scan opened.
**  - the snapshot an index scan pins is released however its statement ends (checked by
**    what a major compaction keeps afterwards).
** Not here: the kv modes compared with each other (test_break_fast_midscan.c).
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
#include "kv/sf/sf_rows.h"
#include "rowan.h"
#include "testutil.h"
#include "tu_api.h"

#define NST 3

typedef struct mrow {
  bool live;      /* the row exists */
  int64_t v;      /* V (never NULL here) */
  int w;          /* W is 'w<w>' */
} mrow;

static void put(rowan_stmt *up, mrow *m, int nt, int s, int t, uint64_t *rs) {
  mrow *r = &m[s * nt + t];
  r->live = true;
  r->v = (int64_t)tu_below(rs, 1000000);
  r->w = (int)tu_below(rs, 100000);
  char st[8], w[16];
  snprintf(st, sizeof st, "s%d", s);
  snprintf(w, sizeof w, "w%d", r->w);
  rowan_bind_text(up, 1, st, -1);
  rowan_bind_int64(up, 2, t);
  rowan_bind_int64(up, 3, r->v);
  rowan_bind_text(up, 4, w, -1);
  int rc = rowan_step(up);
  assert_int_equal(rc, ROWAN_DONE);
  rowan_reset(up);
}

static void background(void **state) {
  (void)state;
  uint64_t seed = tu_seed("break_fast_snapshot"), rs = seed;
  kv_env *env = kv_env_mem_new(1700000000000LL);
  rowan_options o;
  rowan_options_init(&o);
  o.kv_env = env;
  o.sync_mode = ROWAN_SYNC_OFF;
  o.memstore_size = 8u << 10; /* flushes (and compactions) in the background, mid-scan */
  o.block_cache_size = tu_below(&rs, 2) ? 1 : 0;
  o.max_lookback_seconds = -1; /* major compaction drops at once (no look-back window) */
  rowan_db *db = NULL;
  assert_int_equal(rowan_open("/db", &o, &db), ROWAN_OK);
  exec_ok(db, "CREATE TABLE S (ST VARCHAR NOT NULL, T BIGINT NOT NULL, R.V BIGINT, R.W VARCHAR,"
              " CONSTRAINT PK PRIMARY KEY (ST, T DESC)) BLOCKSIZE = 512");
  rowan_stmt *up = NULL, *del = NULL;
  assert_int_equal(rowan_prepare(db, "UPSERT INTO S VALUES (?, ?, ?, ?)", -1, &up, NULL), ROWAN_OK);
  assert_int_equal(rowan_prepare(db, "DELETE FROM S WHERE ST = ? AND T = ?", -1, &del, NULL), ROWAN_OK);
  int nt = (int)tu_scaled(600, 150);
  mrow *m = calloc((size_t)NST * (size_t)nt, sizeof *m), *snap = calloc((size_t)NST * (size_t)nt, sizeof *m);
  assert_true(m && snap);
  for (int s = 0; s < NST; s++)
    for (int t = 0; t < nt; t++)
      if (tu_below(&rs, 8)) put(up, m, nt, s, t, &rs);
  assert_int_equal(rowan_compact(db, 1), ROWAN_OK);
  rowan_stmt *q = NULL;
  assert_int_equal(rowan_prepare(db, "SELECT T, V, W FROM S WHERE ST = ? ORDER BY T DESC LIMIT 100000",
                                 -1, &q, NULL), ROWAN_OK);
  int nq = (int)tu_scaled(30, 10);
  for (int k = 0; k < nq; k++) {
    int s = (int)tu_below(&rs, NST);
    char st[8];
    snprintf(st, sizeof st, "s%d", s);
    rowan_bind_text(q, 1, st, -1);
    memcpy(snap, m, (size_t)NST * (size_t)nt * sizeof *m); /* the first step's snapshot */
    int t = nt - 1, rc, rows = 0;
    while ((rc = rowan_step(q)) == ROWAN_ROW) {
      while (t >= 0 && !snap[s * nt + t].live) t--;
      if (t < 0) fail_msg("seed %llu query %d: a row past the snapshot's last", (unsigned long long)seed, k);
      const mrow *r = &snap[s * nt + t];
      char w[16];
      snprintf(w, sizeof w, "w%d", r->w);
      rowan_value v[3];
      assert_int_equal(rowan_column_values(q, 0, 3, v), ROWAN_OK);
      if (v[0].i != t || v[1].i != r->v || v[2].bytes != (int)strlen(w) ||
          memcmp(v[2].p, w, strlen(w)) != 0)
        fail_msg("seed %llu query %d row %d: (T %lld, V %lld, W '%.*s'), snapshot (%d, %lld, '%s')",
                 (unsigned long long)seed, k, rows, (long long)v[0].i, (long long)v[1].i,
                 v[2].bytes, (const char *)v[2].p, t, (long long)r->v, w);
      t--;
      rows++;
      /* writes between steps: ahead of the cursor, behind it, other stations */
      for (int n = (int)tu_below(&rs, 6); n > 0; n--) {
        int s2 = tu_below(&rs, 2) ? s : (int)tu_below(&rs, NST), t2 = (int)tu_below(&rs, (uint64_t)nt);
        if (tu_below(&rs, 4) == 0) {
          snprintf(st, sizeof st, "s%d", s2);
          rowan_bind_text(del, 1, st, -1);
          rowan_bind_int64(del, 2, t2);
          assert_int_equal(rowan_step(del), ROWAN_DONE);
          rowan_reset(del);
          m[s2 * nt + t2].live = false;
        } else {
          put(up, m, nt, s2, t2, &rs);
        }
      }
    }
    assert_int_equal(rc, ROWAN_DONE);
    while (t >= 0 && !snap[s * nt + t].live) t--;
    if (t >= 0) fail_msg("seed %llu query %d: the scan ended before the snapshot's row %d", (unsigned long long)seed, k, t);
    rowan_reset(q);
  }
  rowan_finalize(q);
  rowan_finalize(up);
  rowan_finalize(del);
  assert_int_equal(rowan_close(db), ROWAN_OK);
  kv_env_free(env);
  free(m);
  free(snap);
}

static void index_lookups(void **state) {
  (void)state;
  kv_env *env = kv_env_mem_new(1700000000000LL);
  rowan_db *db = tu_open_mem(env);
  exec_ok(db, "CREATE TABLE T (K INTEGER NOT NULL PRIMARY KEY, C INTEGER, W VARCHAR)");
  exec_ok(db, "CREATE INDEX IC ON T (C)");
  for (int round = 0; round < 2; round++) {
    exec_ok(db, "BEGIN");
    for (int k = 0; k < 200; k++) {
      char sql[96];
      snprintf(sql, sizeof sql, "UPSERT INTO T VALUES (%d, %d, 'w%d')", k, k % 10, k);
      exec_ok(db, sql);
    }
    exec_ok(db, "COMMIT");
    if (round) assert_int_equal(rowan_compact(db, 1), ROWAN_OK);
    rowan_stmt *q = NULL;
    assert_int_equal(rowan_prepare(db, "SELECT /*+ INDEX(T IC) */ K, C, W FROM T WHERE C = 3", -1, &q,
                                   NULL), ROWAN_OK);
    assert_int_equal(rowan_step(q), ROWAN_ROW);
    assert_int_equal(rowan_column_int64(q, 0), 3);
    /* the rows ahead of the cursor change (C and W) or go */
    exec_ok(db, "UPSERT INTO T SELECT K, 8, 'x' FROM T WHERE K % 10 = 3 AND K > 3 AND K < 150");
    exec_ok(db, "DELETE FROM T WHERE K >= 150 AND K % 10 = 3");
    int rc, rows = 1;
    while ((rc = rowan_step(q)) == ROWAN_ROW) {
      int64_t k = rowan_column_int64(q, 0), c = rowan_column_int64(q, 1);
      const char *w = rowan_column_text(q, 2);
      char want[16];
      snprintf(want, sizeof want, "w%lld", (long long)k);
      /* until 53fc624 the data row was looked up at the latest snapshot: (K, 3 from the
      ** index key, 'x' from the newer data row), a row that never was; deleted rows lost */
      if (c != 3 || !w || strcmp(w, want) != 0)
        fail_msg("round %d: index scan row (%lld, %lld, '%s'): never was; at the statement's"
                 " start it was (%lld, 3, '%s')", round, (long long)k, (long long)c, w ? w : "NULL",
                 (long long)k, want);
      rows++;
    }
    assert_int_equal(rc, ROWAN_DONE);
    assert_int_equal(rows, 20); /* the statement's snapshot had 20 rows of C = 3 */
    rowan_finalize(q);
  }
  assert_int_equal(rowan_close(db), ROWAN_OK);
  kv_env_free(env);
}

/* TTL is measured against the clock when the statement's scan opened (kv.h): the clock
** moved past every row's expiry and a compaction (a major one drops expired cells) between
** two steps change nothing for the open statement. */
static void ttl_round(uint64_t seed, int round) {
  uint64_t rs = seed;
  const int64_t now0 = 1700000000000LL;
  kv_env *env = kv_env_mem_new(now0);
  rowan_db *db = tu_open_mem(env);
  exec_ok(db, "CREATE TABLE T (K INTEGER NOT NULL PRIMARY KEY, R.V BIGINT, R.W VARCHAR, M.X DOUBLE)"
              " TTL = 3600, R.BLOCKSIZE = 256, M.BLOCKSIZE = 512");
  rowan_stmt *up = NULL;
  assert_int_equal(rowan_prepare(db, "UPSERT INTO T VALUES (?, ?, ?, ?)", -1, &up, NULL), ROWAN_OK);
  int nk = (int)tu_scaled(600, 200);
  int64_t *ts = calloc((size_t)nk, sizeof *ts);
  assert_non_null(ts);
  for (int k = 0; k < nk; k++) { /* row k committed at now0 + k * 10 s (some rewritten later) */
    int kk = tu_below(&rs, 5) == 0 && k > 10 ? (int)tu_below(&rs, (uint64_t)k) : k;
    int64_t t = now0 + (int64_t)k * 10000;
    kv_env_mem_set_time(env, t);
    rowan_bind_int64(up, 1, kk);
    rowan_bind_int64(up, 2, kk * 3);
    rowan_bind_text(up, 3, "w", -1);
    rowan_bind_double(up, 4, (double)kk / 2.0);
    assert_int_equal(rowan_step(up), ROWAN_DONE);
    rowan_reset(up);
    ts[kk] = t;
    if (k == nk / 2) assert_int_equal(rowan_compact(db, 1), ROWAN_OK);
  }
  rowan_finalize(up);
  assert_int_equal(rowan_flush(db), ROWAN_OK);
  /* the statement opens when part of the rows have expired */
  int64_t tq = now0 + (int64_t)nk * 10000 - 3600000 + (int64_t)tu_below(&rs, 2000000);
  kv_env_mem_set_time(env, tq);
  rowan_stmt *q = NULL;
  assert_int_equal(rowan_prepare(db, "SELECT K, V, X FROM T WHERE K >= 0 LIMIT 100000", -1, &q, NULL),
                   ROWAN_OK);
  int k = 0, rc, n = 0, moved_at = 1 + (int)tu_below(&rs, 40);
  while ((rc = rowan_step(q)) == ROWAN_ROW) {
    while (k < nk && (!ts[k] || tq - ts[k] >= 3600000)) k++; /* alive at tq */
    rowan_value v[3];
    assert_int_equal(rowan_column_values(q, 0, 3, v), ROWAN_OK);
    if (k >= nk || v[0].i != k || v[1].i != 3 * (int64_t)k || v[2].d != (double)k / 2.0)
      fail_msg("seed %llu round %d row %d: K %lld, want %d", (unsigned long long)seed, round, n,
               (long long)v[0].i, k);
    k++;
    if (++n == moved_at) { /* every row expires now; a compaction may drop them */
      kv_env_mem_set_time(env, tq + 10 * 3600000LL);
      assert_int_equal(rowan_compact(db, round), ROWAN_OK);
    }
  }
  assert_int_equal(rc, ROWAN_DONE);
  while (k < nk && (!ts[k] || tq - ts[k] >= 3600000)) k++;
  if (k < nk) fail_msg("seed %llu round %d: the scan ended before row %d", (unsigned long long)seed, round, k);
  rowan_finalize(q);
  free(ts);
  assert_int_equal(rowan_close(db), ROWAN_OK);
  kv_env_free(env);
}

static void ttl_clock(void **state) {
  (void)state;
  uint64_t seed = tu_seed("break_fast_snapshot_ttl");
  ttl_round(seed, 0); /* a minor compaction mid-scan */
  ttl_round(seed + 1, 1); /* a major one */
}

/* The snapshot an uncovered index scan pins for its lookups (since 53fc624) is released
** however the statement ends (DONE, reset mid-scan, finalize mid-scan, an error): after every
** statement is gone, a major compaction keeps one version a cell (VERSIONS 1), which a
** full scan's cells_examined shows. */
static void index_snapshot_released(void **state) {
  (void)state;
  kv_env *env = kv_env_mem_new(1700000000000LL);
  rowan_options o;
  rowan_options_init(&o);
  o.kv_env = env;
  o.sync_mode = ROWAN_SYNC_OFF;
  o.max_lookback_seconds = -1; /* major compaction drops at once (no look-back window) */
  rowan_db *db = NULL;
  assert_int_equal(rowan_open("/db", &o, &db), ROWAN_OK);
  exec_ok(db, "CREATE TABLE T (K INTEGER NOT NULL PRIMARY KEY, C INTEGER, W VARCHAR) VERSIONS = 1");
  exec_ok(db, "CREATE INDEX IC ON T (C)");
  exec_ok(db, "BEGIN");
  for (int k = 0; k < 100; k++) {
    char sql[96];
    snprintf(sql, sizeof sql, "UPSERT INTO T VALUES (%d, %d, 'w%d')", k, k % 10, k);
    exec_ok(db, sql);
  }
  exec_ok(db, "COMMIT");
  for (int way = 0; way < 4; way++) {
    rowan_stmt *q = NULL;
    assert_int_equal(rowan_prepare(db, "SELECT /*+ INDEX(T IC) */ K, C, W FROM T WHERE C >= 3", -1,
                                   &q, NULL), ROWAN_OK);
    assert_int_equal(rowan_step(q), ROWAN_ROW);
    exec_ok(db, "UPSERT INTO T SELECT K, C, 'v' FROM T"); /* new versions while pinned */
    if (way == 0) { /* to the end */
      int rc;
      while ((rc = rowan_step(q)) == ROWAN_ROW) {}
      assert_int_equal(rc, ROWAN_DONE);
    } else if (way == 1) {
      assert_int_equal(rowan_reset(q), ROWAN_OK);
      assert_int_equal(rowan_step(q), ROWAN_ROW); /* pinned again, then finalized mid-scan */
    } else if (way == 2) {
      exec_ok(db, "DROP INDEX IC ON T"); /* the next step fails: schema changed */
      assert_true(rowan_step(q) != ROWAN_ROW);
      exec_ok(db, "CREATE INDEX IC ON T (C)");
    }
    assert_int_equal(rowan_finalize(q), ROWAN_OK);
  }
  exec_ok(db, "UPSERT INTO T SELECT K, C, 'z' FROM T");
  assert_int_equal(rowan_compact(db, 1), ROWAN_OK);
  rowan_stmt *f = NULL;
  assert_int_equal(rowan_prepare(db, "SELECT K, C, W FROM T", -1, &f, NULL), ROWAN_OK);
  int rc, n = 0;
  while ((rc = rowan_step(f)) == ROWAN_ROW) n++;
  assert_int_equal(rc, ROWAN_DONE);
  assert_int_equal(n, 100);
  rowan_metrics m;
  assert_int_equal(rowan_stmt_metrics(f, &m), ROWAN_OK);
  uint64_t cells = 0;
  for (int i = 0; i < m.n_families && i < 16; i++) cells += m.families[i].cells_examined;
  if (cells > 300) /* a marker and two columns a row, one version each */
    fail_msg("after every statement is gone, a major compaction kept %llu cells for 100 rows"
             " (a pinned snapshot left behind?)", (unsigned long long)cells);
  rowan_finalize(f);
  assert_int_equal(rowan_close(db), ROWAN_OK);
  kv_env_free(env);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(background),
    cmocka_unit_test(index_lookups),
    cmocka_unit_test(ttl_clock),
    cmocka_unit_test(index_snapshot_released),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
