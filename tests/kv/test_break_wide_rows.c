/*
** tests/kv/test_break_wide_rows.c: the fast row path (rows taken whole from compact blocks)
** on rows wider than test_scan_rows.c writes: blocks whose qualifier dictionary has more
** than 16 entries (no four-bit qualifier indexes), qualifiers of every length (empty, one
** byte, the two-byte column ids SQL writes, 7 and 8 bytes: the projection compares the
** short ones as numbers), projections of more than 32 qualifiers or with a long one, rows
** whose cells carry one timestamp or several, 8-byte values (gathered fixed-width columns)
** next to empty and variable ones. Each query runs with the fast path on and off at the
** same snapshot; the renderings must be equal. Cached, tiny and no block cache. Also blocks
** of a single qualifier (empty, one, two or eight bytes) and of two. Seeded.
** Not here: stores changing under an open scan (test_break_fast_rows.c).
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "kv/env/env_mem.h"
#include "kv/kv.h"
#include "kv/sf/sf_rows.h"
#include "testutil.h"
#include "tu_kv.h"
#include "tu_sbuf.h"

#define NOW0 1700000000000ll
#define MAXQ 48

typedef struct world {
  kv_env *env;            /* in-memory file system */
  kv_db *db;              /* store */
  uint32_t fid[2];        /* w (VERSIONS 1), v (VERSIONS 2) */
  uint64_t rng;           /* PRNG */
  int nq;                 /* qualifiers in use */
  uint8_t q[MAXQ][12];    /* qualifier bytes */
  uint32_t ql[MAXQ];      /* their lengths */
  int nrows;              /* rows */
  uint64_t taken, rows;   /* fast-path family rows, rows handed out */
} world;

static uint64_t rnd(world *w, uint64_t n) { return tu_below(&w->rng, n); }

/* Qualifiers: "" , one byte, two-byte ids (high bit), 7 and 8 bytes, sorted or not. */
static void make_quals(world *w, int nq) {
  w->nq = nq < 0 ? 1 : nq;
  if (nq < 0) { /* one qualifier for every cell: -1 empty, -2 eight bytes, -3 two bytes */
    static const char *const one[] = {"", "colname8", "\x80\x05"};
    w->ql[0] = (uint32_t)strlen(one[-nq - 1]);
    if (nq == -3) w->ql[0] = 2;
    memcpy(w->q[0], one[-nq - 1], w->ql[0]);
    return;
  }
  for (int i = 0; i < nq; i++) {
    switch (i % 5) {
    case 0: w->ql[i] = 1; w->q[i][0] = (uint8_t)(1 + i); break;
    case 1: w->ql[i] = 2; w->q[i][0] = 0x80; w->q[i][1] = (uint8_t)i; break;
    case 2: w->ql[i] = 7; memcpy(w->q[i], "colname", 7); w->q[i][6] = (uint8_t)('A' + i); break;
    case 3: w->ql[i] = 8; memcpy(w->q[i], "colname8", 8); w->q[i][7] = (uint8_t)('A' + i); break;
    default:
      if (i == 4) w->ql[i] = 0; /* the empty qualifier */
      else { w->ql[i] = 3; w->q[i][0] = 0; w->q[i][1] = 0xff; w->q[i][2] = (uint8_t)i; }
      break;
    }
  }
}

static size_t row_key(int r, char *out) { return (size_t)sprintf(out, "k%05d", r * 3); }

static void world_fill(world *w) {
  kv_batch *b = kv_batch_new();
  assert_non_null(b);
  int64_t ts = NOW0 - 1000000;
  for (int pass = 0; pass < 3; pass++) {
    for (int r = 0; r < w->nrows; r++) {
      if (pass > 0 && rnd(w, 4)) continue; /* later passes rewrite a quarter */
      char row[16];
      size_t rl = row_key(r, row);
      bool one_ts = rnd(w, 4) != 0;
      ts += 10;
      for (int f = 0; f < 2; f++)
        for (int c = 0; c < w->nq; c++) {
          if (rnd(w, 5) == 0) continue;
          uint8_t val[24];
          size_t vl = c % 3 == 0 ? 8 : rnd(w, 4) == 0 ? 0 : 1 + rnd(w, 20);
          if (w->nq == 1) vl = rnd(w, 3) == 0 ? 0 : rnd(w, 2) ? 8 : rnd(w, 24); /* marker-like */
          for (size_t k = 0; k < vl; k++) val[k] = (uint8_t)tu_rand(&w->rng);
          assert_int_equal(kv_batch_put(b, w->fid[f], row, rl, w->q[c], w->ql[c],
                                        one_ts ? ts : ts - (int64_t)rnd(w, 5), val, vl), KV_OK);
        }
      if (rnd(w, 20) == 0) {
        int c = (int)rnd(w, (uint64_t)w->nq);
        assert_int_equal(kv_batch_delete(b, w->fid[rnd(w, 2)], KV_DELETE_COLUMN, row, rl,
                                         w->q[c], w->ql[c], ts), KV_OK);
      }
      if (kv_batch_count(b) > 200) {
        assert_int_equal(kv_commit(w->db, b, NULL), KV_OK);
        kv_batch_clear(b);
      }
    }
    assert_int_equal(kv_commit(w->db, b, NULL), KV_OK);
    kv_batch_clear(b);
    assert_int_equal(kv_flush(w->db, NULL), KV_OK);
    if (pass == 0) assert_int_equal(kv_compact(w->db, "t", true), KV_OK);
  }
  kv_batch_free(b);
}

static void render(sbuf *out, const kv_row *r) {
  for (uint32_t i = 0; i < r->key_len; i++) sb_add(out, "%c", r->key[i]);
  sb_add(out, ":");
  for (uint32_t i = 0; i < r->n_cells; i++) {
    const kv_cell_view *c = &r->cells[i];
    sb_add(out, "%u/", c->family_id);
    for (uint32_t k = 0; k < c->qual_len; k++) sb_add(out, "%02x", c->qual[k]);
    sb_add(out, "@%lld=", (long long)c->ts);
    for (uint32_t k = 0; k < c->value_len; k++) sb_add(out, "%02x", c->value[k]);
    sb_add(out, ",");
  }
  sb_add(out, "\n");
}

typedef struct query {
  uint32_t fids[2], nf;            /* families */
  kv_qualifier_set qs[2];          /* projections */
  uint32_t nqs;                    /* count */
  const uint8_t *qp[2][MAXQ];      /* projected qualifiers */
  uint32_t qlen[2][MAXQ];          /* lengths */
  kv_range range;                  /* one range */
  char lo[16], hi[16];             /* its bounds */
  bool has_range, reverse;         /* options */
  uint64_t limit;                  /* 0 = none */
  int max_versions;                /* 0..2 */
  int64_t ts_min, ts_max;          /* time range */
} query;

static void random_query(world *w, query *q) {
  memset(q, 0, sizeof *q);
  q->nf = 1 + (uint32_t)rnd(w, 2);
  int first = (int)rnd(w, 2);
  q->fids[0] = w->fid[first];
  if (q->nf == 2) q->fids[1] = w->fid[1 - first];
  for (uint32_t f = 0; f < q->nf; f++) {
    if (rnd(w, 3) == 0) continue;
    kv_qualifier_set *s = &q->qs[q->nqs++];
    s->family_id = q->fids[f];
    s->quals = q->qp[f];
    s->qual_lens = q->qlen[f];
    int mode = (int)rnd(w, 3); /* 0: a few, 1: most (over 32 when wide), 2: short ones only */
    for (int c = 0; c < w->nq; c++) {
      bool take = mode == 0 ? rnd(w, 5) == 0 : mode == 1 ? rnd(w, 8) != 0 : w->ql[c] <= 7 && rnd(w, 2);
      if (!take) continue;
      q->qp[f][s->n_quals] = w->q[c];
      q->qlen[f][s->n_quals++] = w->ql[c];
    }
    if (rnd(w, 6) == 0) { /* a qualifier no cell has */
      static const uint8_t none[] = {0x7f, 0x7f};
      q->qp[f][s->n_quals] = none;
      q->qlen[f][s->n_quals++] = 2;
    }
  }
  if (rnd(w, 2)) {
    int a = (int)rnd(w, (uint64_t)w->nrows), b = (int)rnd(w, (uint64_t)w->nrows);
    if (a > b) { int t = a; a = b; b = t; }
    q->has_range = true;
    q->range = (kv_range){(const uint8_t *)q->lo, row_key(a, q->lo), rnd(w, 2) != 0,
                          (const uint8_t *)q->hi, row_key(b, q->hi), rnd(w, 2) != 0};
  }
  q->reverse = rnd(w, 3) == 0;
  q->limit = rnd(w, 4) == 0 ? 1 + rnd(w, 20) : 0;
  q->max_versions = (int)rnd(w, 3);
  if (rnd(w, 5) == 0) {
    q->ts_min = NOW0 - 1000000 + (int64_t)rnd(w, 3000);
    q->ts_max = rnd(w, 2) ? 0 : q->ts_min + (int64_t)rnd(w, 3000);
  }
}

static uint64_t run(world *w, const query *q, bool fast, sbuf *out) {
  out->len = 0;
  sb_add(out, "");
  kv_scan_set_fast_rows(fast);
  kv_scan_options so;
  memset(&so, 0, sizeof so);
  so.family_ids = q->fids;
  so.n_families = q->nf;
  so.qualifiers = q->nqs ? q->qs : NULL;
  so.n_qualifier_sets = q->nqs;
  so.ranges = q->has_range ? &q->range : NULL;
  so.n_ranges = q->has_range ? 1 : 0;
  so.reverse = q->reverse;
  so.limit = q->limit;
  so.max_versions = q->max_versions;
  so.ts_min = q->ts_min;
  so.ts_max = q->ts_max;
  kv_scan *s;
  kv_row r;
  assert_int_equal(kv_scan_open(w->db, &so, &s), KV_OK);
  int rc;
  while ((rc = kv_scan_next(s, &r)) == KV_OK) render(out, &r);
  assert_int_equal(rc, KV_ERR_NOTFOUND);
  uint64_t taken = kv_scan_rows_taken(s);
  kv_scan_close(s);
  kv_scan_set_fast_rows(true);
  return taken;
}

static void scenario(size_t cache, int nq, const char *name) {
  uint64_t seed = tu_seed(name);
  world w;
  memset(&w, 0, sizeof w);
  w.rng = seed;
  w.env = kv_env_mem_new(NOW0);
  w.db = tu_kv_open_mem(w.env, cache);
  kv_family_options fo[2] = {{.name = "w", .max_versions = 1, .block_size = 2048},
                             {.name = "v", .max_versions = 2, .block_size = 1024}};
  assert_int_equal(kv_create_table(w.db, "t", fo, 2), KV_OK);
  for (int f = 0; f < 2; f++)
    assert_int_equal(kv_family_id(w.db, "t", fo[f].name, &w.fid[f]), KV_OK);
  make_quals(&w, nq);
  w.nrows = (int)tu_scaled(300, 100);
  world_fill(&w);
  sbuf a = {0}, b = {0};
  int nqueries = (int)tu_scaled(70, 25);
  for (int i = 0; i < nqueries; i++) {
    query q;
    random_query(&w, &q);
    uint64_t t = run(&w, &q, true, &a);
    run(&w, &q, false, &b);
    if (strcmp(a.p, b.p) != 0) {
      fprintf(stderr, "%s: seed %llu query %d differs: families %u (first %u), %u projections "
              "(%u, %u qualifiers), range %d, reverse %d, limit %llu, max_versions %d, time "
              "[%lld, %lld)\nfast path:\n%.3000s\ncell path:\n%.3000s\n", name,
              (unsigned long long)seed, i, q.nf, q.fids[0], q.nqs, q.qs[0].n_quals,
              q.qs[1].n_quals, q.has_range, q.reverse, (unsigned long long)q.limit,
              q.max_versions, (long long)q.ts_min, (long long)q.ts_max, a.p, b.p);
      fail();
    }
    w.taken += t;
    for (size_t k = 0; k < a.len; k++) w.rows += a.p[k] == '\n';
  }
  fprintf(stderr, "[%s] %llu family rows of %llu rows taken whole\n", name,
          (unsigned long long)w.taken, (unsigned long long)w.rows);
  assert_true(w.taken * 5 >= w.rows); /* the fast path ran */
  free(a.p);
  free(b.p);
  assert_int_equal(kv_close(w.db), KV_OK);
  kv_env_free(w.env);
}

static void test_wide_cached(void **state) {
  (void)state;
  scenario(8u << 20, 40, "wide_cached");
}

static void test_medium_cached(void **state) {
  (void)state;
  scenario(8u << 20, 17, "medium_cached");
}

static void test_wide_tiny_cache(void **state) {
  (void)state;
  scenario(16u << 10, 40, "wide_tiny_cache");
}

/* Blocks of one qualifier (the key family's shape: the single-qualifier cell loop). */
static void test_one_qualifier(void **state) {
  (void)state;
  scenario(8u << 20, 1, "one_qualifier");
  scenario(16u << 10, -1, "one_empty_qualifier");
  scenario(8u << 20, -2, "one_long_qualifier");
  scenario(KV_BLOCK_CACHE_OFF, -3, "one_two_byte_qualifier");
  scenario(8u << 20, 2, "two_qualifiers");
}

static void test_wide_no_cache(void **state) {
  (void)state;
  scenario(KV_BLOCK_CACHE_OFF, 33, "wide_no_cache");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_wide_cached),
      cmocka_unit_test(test_medium_cached),
      cmocka_unit_test(test_wide_tiny_cache),
      cmocka_unit_test(test_wide_no_cache),
      cmocka_unit_test(test_one_qualifier),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
