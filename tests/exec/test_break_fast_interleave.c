/*
** tests/exec/test_break_fast_interleave.c: several kept range-scan statements on one
** connection stepped in a random interleaving (each between rows while the others step,
** reset and re-bind), on the fast paths (row runs, value vectors, PH_FAST, the exec_step
** shortcut, rowan_column_values). Each statement's rows must be those it gives when run
** alone (recorded first), and a row read whole must keep its bytes while the other
** statements step, until its own statement steps. Tables: two with one store file a
** family (compacted) and memstore rows over part of them, small blocks, a tiny or a large
** block cache. Seeded.
** Not here: writes between steps (test_break_fast_midscan.c).
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
#include "tu_sbuf.h"

#define NS 6 /* statements */

static const char *SQL[NS] = {
  "SELECT TS, A, B, W FROM S WHERE ST = ? ORDER BY TS DESC LIMIT 100000",
  "SELECT TS, A, B, W FROM S WHERE ST = ? ORDER BY TS DESC LIMIT 37 OFFSET 5",
  "SELECT ST, TS, X FROM S WHERE ST >= ? LIMIT 100000",
  "SELECT K, V, S2 FROM U WHERE K >= ? LIMIT 100000",
  "SELECT ST, TS, W FROM S WHERE ST = ? ORDER BY TS",
  "SELECT ST, TS, A FROM S WHERE ST IN (?, 'st3') LIMIT 100000",
};

static void bind(rowan_stmt *st, int i, int v) {
  char s[8];
  if (i == 3) {
    rowan_bind_int64(st, 1, (int64_t)v * 50);
    return;
  }
  snprintf(s, sizeof s, "st%d", v);
  rowan_bind_text(st, 1, s, -1);
}

/* One row as text; its kept copy in k (bytes of every TEXT/BLOB value) for a later check. */
static void render(rowan_stmt *st, sbuf *o, rowan_value *v) {
  int n = rowan_column_count(st);
  assert_int_equal(rowan_column_values(st, 0, n, v), ROWAN_OK);
  for (int i = 0; i < n; i++) {
    if (v[i].type == ROWAN_TEXT || v[i].type == ROWAN_BLOB)
      sb_add(o, " '%.*s'", v[i].bytes, (const char *)v[i].p);
    else if (v[i].type == ROWAN_FLOAT) sb_add(o, " %.17g", v[i].d);
    else sb_add(o, " %d:%lld", v[i].type, (long long)v[i].i);
  }
  sb_add(o, "\n");
}

static void interleave(uint64_t seed, size_t cache) {
  uint64_t rs = seed;
  kv_env *env = kv_env_mem_new(1700000000000LL);
  rowan_options o;
  rowan_options_init(&o);
  o.kv_env = env;
  o.sync_mode = ROWAN_SYNC_OFF;
  o.block_cache_size = cache;
  rowan_db *db = NULL;
  assert_int_equal(rowan_open("/db", &o, &db), ROWAN_OK);
  assert_int_equal(rowan_exec(db, "CREATE TABLE S (ST VARCHAR NOT NULL, TS TIMESTAMP NOT NULL,"
                                  " R.A DOUBLE, R.B DOUBLE, R.W VARCHAR, M.X BIGINT,"
                                  " CONSTRAINT PK PRIMARY KEY (ST, TS DESC)) BLOCKSIZE = 384;"
                                  "CREATE TABLE U (K INTEGER NOT NULL PRIMARY KEY, V DOUBLE,"
                                  " G.S2 VARCHAR) BLOCKSIZE = 256", NULL, NULL), ROWAN_OK);
  rowan_stmt *us = NULL, *uu = NULL;
  assert_int_equal(rowan_prepare(db, "UPSERT INTO S VALUES (?, ?, ?, ?, ?, ?)", -1, &us, NULL), ROWAN_OK);
  assert_int_equal(rowan_prepare(db, "UPSERT INTO U VALUES (?, ?, ?)", -1, &uu, NULL), ROWAN_OK);
  int nt = (int)tu_scaled(250, 80);
  for (int pass = 0; pass < 2; pass++) {
    assert_int_equal(rowan_exec(db, "BEGIN", NULL, NULL), ROWAN_OK);
    for (int s = 0; s < 5; s++)
      for (int t = 0; t < nt; t++) {
        if (pass && tu_below(&rs, 10)) continue;
        char st[8], w[48];
        snprintf(st, sizeof st, "st%d", s);
        int nw = (int)tu_below(&rs, 40);
        for (int k = 0; k < nw; k++) w[k] = (char)('a' + tu_below(&rs, 26));
        rowan_bind_text(us, 1, st, -1);
        rowan_bind_timestamp(us, 2, 1600000000000LL + (int64_t)t * 60000);
        rowan_bind_double(us, 3, (double)tu_below(&rs, 1000) / 8.0);
        if (tu_below(&rs, 6)) rowan_bind_double(us, 4, (double)t);
        else rowan_bind_null(us, 4);
        if (tu_below(&rs, 9)) rowan_bind_text(us, 5, w, nw);
        else rowan_bind_null(us, 5);
        rowan_bind_int64(us, 6, (int64_t)tu_rand(&rs));
        assert_int_equal(rowan_step(us), ROWAN_DONE);
        rowan_reset(us);
        if (s == 0) {
          rowan_bind_int64(uu, 1, t);
          rowan_bind_double(uu, 2, (double)tu_below(&rs, 100));
          rowan_bind_text(uu, 3, w, nw);
          assert_int_equal(rowan_step(uu), ROWAN_DONE);
          rowan_reset(uu);
        }
      }
    assert_int_equal(rowan_exec(db, "COMMIT", NULL, NULL), ROWAN_OK);
    if (pass == 0) assert_int_equal(rowan_compact(db, 1), ROWAN_OK);
  }
  rowan_finalize(us);
  rowan_finalize(uu);
  rowan_stmt *st[NS];
  for (int i = 0; i < NS; i++) assert_int_equal(rowan_prepare(db, SQL[i], -1, &st[i], NULL), ROWAN_OK);
  /* each statement alone, for each binding used below */
  sbuf alone[NS][5];
  memset(alone, 0, sizeof alone);
  for (int i = 0; i < NS; i++)
    for (int v = 0; v < 5; v++) {
      rowan_value vals[8];
      bind(st[i], i, v);
      int rc;
      while ((rc = rowan_step(st[i])) == ROWAN_ROW) render(st[i], &alone[i][v], vals);
      assert_int_equal(rc, ROWAN_DONE);
      rowan_reset(st[i]);
    }
  /* interleaved */
  sbuf got[NS];
  int bound[NS];
  rowan_value held[NS][8];
  char *copy[NS][8];
  memset(got, 0, sizeof got);
  memset(copy, 0, sizeof copy);
  for (int i = 0; i < NS; i++) {
    bound[i] = (int)tu_below(&rs, 5);
    bind(st[i], i, bound[i]);
  }
  size_t lines = 0;
  for (int i = 0; i < NS; i++)
    for (int v = 0; v < 5; v++)
      for (size_t k = 0; k < alone[i][v].len; k++) lines += alone[i][v].p[k] == '\n';
  assert_true(lines > (size_t)nt * 10); /* the statements do read rows */
  int finished = 0, target = (int)tu_scaled(60, 20);
  uint64_t runs0 = kv_scan_run_rows();
  while (finished < target) {
    int i = (int)tu_below(&rs, NS);
    /* what this statement's last row handed out is still there */
    for (int c = 0; c < 8; c++)
      if (copy[i][c]) {
        if (memcmp(copy[i][c], held[i][c].p, (size_t)held[i][c].bytes) != 0)
          fail_msg("seed %llu: statement %d's row changed while others stepped", (unsigned long long)seed, i);
        free(copy[i][c]);
        copy[i][c] = NULL;
      }
    if (tu_below(&rs, 60) == 0) { /* reset mid-scan and re-bind: start over */
      rowan_reset(st[i]);
      got[i].len = 0;
      bound[i] = (int)tu_below(&rs, 5);
      bind(st[i], i, bound[i]);
      continue;
    }
    int steps = 1 + (int)tu_below(&rs, 20);
    for (int k = 0; k < steps; k++) {
      int rc = rowan_step(st[i]);
      if (rc == ROWAN_ROW) {
        render(st[i], &got[i], held[i]);
        continue;
      }
      assert_int_equal(rc, ROWAN_DONE);
      const sbuf *a = &alone[i][bound[i]];
      if (got[i].len != a->len || (a->len && memcmp(got[i].p, a->p, a->len) != 0))
        fail_msg("seed %llu: statement %d (%s, binding %d) interleaved differs from alone",
                 (unsigned long long)seed, i, SQL[i], bound[i]);
      finished++;
      rowan_reset(st[i]);
      got[i].len = 0;
      bound[i] = (int)tu_below(&rs, 5);
      bind(st[i], i, bound[i]);
      break;
    }
    if (got[i].len) { /* keep the bytes of the row now current */
      int n = rowan_column_count(st[i]);
      if (rowan_column_values(st[i], 0, n, held[i]) == ROWAN_OK)
        for (int c = 0; c < n; c++)
          if (held[i][c].p) {
            copy[i][c] = malloc((size_t)held[i][c].bytes + 1);
            assert_non_null(copy[i][c]);
            memcpy(copy[i][c], held[i][c].p, (size_t)held[i][c].bytes);
          }
    }
  }
  fprintf(stderr, "[break_fast_interleave] %zu rows alone, %llu by runs interleaved\n", lines,
          (unsigned long long)(kv_scan_run_rows() - runs0));
  for (int i = 0; i < NS; i++) {
    for (int c = 0; c < 8; c++) free(copy[i][c]);
    for (int v = 0; v < 5; v++) free(alone[i][v].p);
    free(got[i].p);
    rowan_finalize(st[i]);
  }
  assert_int_equal(rowan_close(db), ROWAN_OK);
  kv_env_free(env);
}

static void interleaved_tiny_cache(void **state) {
  (void)state;
  interleave(tu_seed("break_fast_interleave_tiny"), 1);
}

static void interleaved_cache(void **state) {
  (void)state;
  interleave(tu_seed("break_fast_interleave"), 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(interleaved_tiny_cache),
    cmocka_unit_test(interleaved_cache),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
