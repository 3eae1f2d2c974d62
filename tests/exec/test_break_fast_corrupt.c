/*
** tests/exec/test_break_fast_corrupt.c: a range scan on the fast paths (row runs, value
** vectors, PH_FAST, rowan_column_values) that meets a damaged store-file block in the
** middle: one byte of a compacted table's store file is flipped (the in-memory env's
** kv_env_mem_set_byte) while a SELECT is between rows, with a tiny block cache so blocks
** are read again from the file. Every row handed out before the error must be the right
** one; the error is ROWAN_CORRUPT (or, for a byte no check covers, every row right); after
** it the statement reads as no row (values NULL, rowan_column_values MISUSE) and steps fail
** until a reset; once the byte is put back, a reset and a new run give every row again (no
** damaged block kept in the cache). In each kv mode (kv/sf/sf_rows.h). Seeded offsets.
** Not here: damaged blocks at the kv level (tests/kv/test_corruption.c, test_badinput.c).
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "kv/env/env.h"
#include "kv/env/env_mem.h"
#include "kv/sf/sf_rows.h"
#include "rowan.h"
#include "testutil.h"
#include "tu_sbuf.h"

#define MAXF 16

typedef struct files {
  kv_env *env;          /* the env listed */
  char path[MAXF][256]; /* store files found */
  int n;                /* how many */
  char dir[256];        /* the folder being listed */
} files;

static int collect(void *ctx, const char *name);

static void list_dir(files *f, const char *dir) {
  char saved[256];
  snprintf(saved, sizeof saved, "%s", f->dir);
  snprintf(f->dir, sizeof f->dir, "%s", dir);
  f->env->list(f->env, dir, collect, f);
  snprintf(f->dir, sizeof f->dir, "%s", saved);
}

static int collect(void *ctx, const char *name) {
  files *f = ctx;
  char p[512];
  snprintf(p, sizeof p, "%s/%s", f->dir, name);
  size_t n = strlen(name);
  if (n > 3 && strcmp(name + n - 3, ".sf") == 0) {
    if (f->n < MAXF && strlen(p) < sizeof f->path[0]) memcpy(f->path[f->n++], p, strlen(p) + 1);
  } else if (!strchr(name, '.') && strlen(p) < 250) {
    list_dir(f, p); /* a folder (table, family) */
  }
  return 0;
}

static void set_mode(int m) {
  kv_scan_set_fast_rows(m != 3);
  kv_scan_set_value_vectors(m != 2 && m != 3);
  kv_scan_set_row_runs(m == 0 || m == 2);
}

static void render(rowan_stmt *st, sbuf *o) {
  rowan_value v[8];
  int n = rowan_column_count(st);
  assert_int_equal(rowan_column_values(st, 0, n, v), ROWAN_OK);
  for (int i = 0; i < n; i++) {
    if (v[i].type == ROWAN_TEXT) sb_add(o, " '%.*s'", v[i].bytes, (const char *)v[i].p);
    else if (v[i].type == ROWAN_FLOAT) sb_add(o, " %.17g", v[i].d);
    else sb_add(o, " %d:%lld", v[i].type, (long long)v[i].i);
  }
  sb_add(o, "\n");
}

static const char *QUERY = "SELECT ST, TS, A, B, W, X FROM S WHERE ST >= 'a' LIMIT 1000000";

static void damaged_midscan(void **state) {
  (void)state;
  uint64_t seed = tu_seed("break_fast_corrupt"), rs = seed;
  kv_env *env = kv_env_mem_new(1700000000000LL);
  rowan_options o;
  rowan_options_init(&o);
  o.kv_env = env;
  o.sync_mode = ROWAN_SYNC_OFF;
  o.block_cache_size = 1; /* as small as it goes: blocks are read again */
  rowan_db *db = NULL;
  assert_int_equal(rowan_open("/db", &o, &db), ROWAN_OK);
  assert_int_equal(rowan_exec(db, "CREATE TABLE S (ST VARCHAR NOT NULL, TS TIMESTAMP NOT NULL,"
                                  " R.A DOUBLE, R.B DOUBLE, R.W VARCHAR, M.X BIGINT,"
                                  " CONSTRAINT PK PRIMARY KEY (ST, TS DESC)) BLOCKSIZE = 512",
                           NULL, NULL), ROWAN_OK);
  rowan_stmt *up = NULL;
  assert_int_equal(rowan_prepare(db, "UPSERT INTO S VALUES (?, ?, ?, ?, ?, ?)", -1, &up, NULL),
                   ROWAN_OK);
  int nt = (int)tu_scaled(400, 120);
  assert_int_equal(rowan_exec(db, "BEGIN", NULL, NULL), ROWAN_OK);
  for (int s = 0; s < 3; s++)
    for (int t = 0; t < nt; t++) {
      char st[8], w[16];
      snprintf(st, sizeof st, "st%d", s);
      snprintf(w, sizeof w, "w%d", (int)tu_below(&rs, 100000));
      rowan_bind_text(up, 1, st, -1);
      rowan_bind_timestamp(up, 2, 1600000000000LL + (int64_t)t * 1000);
      rowan_bind_double(up, 3, (double)tu_below(&rs, 10000) / 4.0);
      if (tu_below(&rs, 5)) rowan_bind_double(up, 4, (double)t);
      else rowan_bind_null(up, 4);
      rowan_bind_text(up, 5, w, -1);
      rowan_bind_int64(up, 6, (int64_t)tu_rand(&rs));
      assert_int_equal(rowan_step(up), ROWAN_DONE);
      rowan_reset(up);
    }
  assert_int_equal(rowan_exec(db, "COMMIT", NULL, NULL), ROWAN_OK);
  rowan_finalize(up);
  assert_int_equal(rowan_compact(db, 1), ROWAN_OK);
  files f;
  memset(&f, 0, sizeof f);
  f.env = env;
  list_dir(&f, "/db");
  assert_true(f.n >= 2);
  /* the answer, undamaged */
  sbuf ref = {0};
  rowan_stmt *q = NULL;
  assert_int_equal(rowan_prepare(db, QUERY, -1, &q, NULL), ROWAN_OK);
  int rc, nref = 0;
  while ((rc = rowan_step(q)) == ROWAN_ROW) {
    render(q, &ref);
    nref++;
  }
  assert_int_equal(rc, ROWAN_DONE);
  assert_int_equal(nref, 3 * nt);
  int rounds = 24, errors = 0; /* each quick; enough that the damage is met */
  for (int r = 0; r < rounds; r++) {
    int m = r % 4;
    set_mode(m);
    const char *path = f.path[tu_below(&rs, (uint64_t)f.n)];
    int64_t size = kv_env_mem_file_size(env, path);
    assert_true(size > 64);
    uint64_t off = (uint64_t)tu_below(&rs, (uint64_t)size * 3 / 4); /* blocks, not the trailer */
    uint8_t old = 0;
    assert_int_equal(rowan_reset(q), ROWAN_OK);
    int at = (int)tu_below(&rs, (uint64_t)nref / 3); /* early: most blocks lie ahead */
    sbuf got = {0};
    int n = 0;
    bool damaged = false;
    for (;;) {
      if (n == at && !damaged) { /* between two rows: the byte changes */
        assert_int_equal(kv_env_mem_get_byte(env, path, off, &old), KV_OK);
        assert_int_equal(kv_env_mem_set_byte(env, path, off, (uint8_t)(old ^ (1u << tu_below(&rs, 8)))),
                         KV_OK);
        damaged = true;
      }
      rc = rowan_step(q);
      if (rc != ROWAN_ROW) break;
      render(q, &got);
      n++;
    }
    /* every row handed out is the right one */
    if (got.len > ref.len || (got.len && memcmp(got.p, ref.p, got.len) != 0))
      fail_msg("seed %llu round %d mode %d (%s @%llu): a wrong row before the error (%d rows)",
               (unsigned long long)seed, r, m, path, (unsigned long long)off, n);
    if (rc == ROWAN_DONE) {
      if (n != nref) fail_msg("seed %llu round %d: DONE after %d of %d rows", (unsigned long long)seed, r, n, nref);
    } else {
      if (rc != ROWAN_CORRUPT)
        fail_msg("seed %llu round %d mode %d: step gave %d (%s)", (unsigned long long)seed, r, m, rc,
                 rowan_errmsg(db));
      errors++;
      rowan_value v[6];
      assert_int_equal(rowan_column_values(q, 0, 6, v), ROWAN_MISUSE);
      for (int i = 0; i < 6; i++) assert_int_equal(v[i].type, ROWAN_NULL);
      assert_null(rowan_column_text(q, 0));
      int ended = rc;
      rc = rowan_step(q);
      assert_true(rc != ROWAN_ROW && rc != ROWAN_DONE);
      rc = ended; /* what the reset below reports */
    }
    free(got.p);
    /* the byte back: the next run gives every row; the reset reports the failed step */
    if (damaged) assert_int_equal(kv_env_mem_set_byte(env, path, off, old), KV_OK);
    assert_int_equal(rowan_reset(q), rc == ROWAN_DONE ? ROWAN_OK : ROWAN_CORRUPT);
    sbuf again = {0};
    while ((rc = rowan_step(q)) == ROWAN_ROW) render(q, &again);
    if (rc != ROWAN_DONE || again.len != ref.len || memcmp(again.p, ref.p, ref.len) != 0)
      fail_msg("seed %llu round %d mode %d: after the repair: %d (%s)", (unsigned long long)seed,
               r, m, rc, rowan_errmsg(db));
    free(again.p);
  }
  set_mode(0);
  fprintf(stderr, "[break_fast_corrupt] %d of %d damaged runs failed with ROWAN_CORRUPT\n", errors,
          rounds);
  assert_true(errors > 0); /* the damage was met at least once */
  free(ref.p);
  rowan_finalize(q);
  assert_int_equal(rowan_close(db), ROWAN_OK);
  kv_env_free(env);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(damaged_midscan),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
