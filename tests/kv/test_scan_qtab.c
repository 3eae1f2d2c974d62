/*
** tests/kv/test_scan_qtab.c: the fast row path's per-block tables under dictionaries and
** projections of every shape hand out the rows the cell path does. The store-file iterator
** finds a block's kept entries and their projection positions through a table of one-byte
** qualifiers (kv_sf_iter_project's ptab, when every projected qualifier is one byte) and
** orders a full row's entries by a bitmap of their bytes (byte_order in kv/sf/sf_iter_rows.c,
** when every entry is one byte and none is named twice); other shapes take the general
** search and the insertion sort. Both must give the same rows, cells and value vectors.
**
** Data, on the in-memory env, one family of small blocks (rows split across blocks, so the
** dictionaries, listed as entries first appear, come rotated): a random set of qualifiers
** per scenario drawn from all byte values (0x00, 0x3f/0x40, 0x7f/0x80, 0xbf/0xc0, 0xff:
** the bitmap's word edges), with two-byte and empty qualifiers in some scenarios, values of
** fixed width and of varying length; rows written whole (one timestamp) or missing columns.
** Queries: random projections in random order (not qualifier order), with qualifiers named
** twice, absent from the data, or longer than one byte; one range or all; value vectors on
** and off; kv_get; first in each scenario, every qualifier once with value vectors. Each is
** run with the fast path on (row runs on), fast on with runs off, and the cell path
** (kv_scan_set_fast_rows off), rendered as each row's sorted "qualifier=value" set; the
** three must be equal. The scenario checks that rows came as
** value vectors and through runs, so the comparison cannot pass by never taking them.
** Not here: versions, tombstones, TTL and several sources (test_scan_rows, test_scan_runs).
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

#define MAXQ 14     /* qualifiers of the family at most */
#define NOW0 1700000000000ll

typedef struct world {
  kv_env *env;          /* in-memory file system */
  kv_db *db;            /* store */
  uint32_t fid;         /* the family */
  uint64_t rng;         /* PRNG state */
  uint64_t seed;        /* printed on a failure */
  uint32_t nq;          /* qualifiers in use */
  uint8_t qb[MAXQ][2];  /* their bytes */
  uint32_t ql[MAXQ];    /* their lengths (0, 1 or 2) */
  uint32_t vw[MAXQ];    /* value width: 8, 4, 0 (empty) or 99 = varying */
  int nrows;            /* rows written */
  uint64_t vec_rows;    /* rows handed out with a value vector (fast path on) */
  uint64_t run_rows;    /* rows handed out by runs */
} world;

static uint64_t rnd(world *w, uint64_t n) { return tu_below(&w->rng, n); }

static uint32_t make_key(int i, uint8_t *out) {
  return (uint32_t)sprintf((char *)out, "row%06d", i);
}

/* The scenario's qualifiers: distinct, mostly one byte drawn from every range of values;
** `odd` adds a two-byte one and maybe the empty qualifier. */
static void pick_quals(world *w, bool odd) {
  static const uint8_t edges[] = {0x00, 0x3f, 0x40, 0x7f, 0x80, 0xbf, 0xc0, 0xff};
  w->nq = 3 + (uint32_t)rnd(w, MAXQ - 4);
  uint32_t n = 0;
  while (n < w->nq) {
    uint8_t c = rnd(w, 3) == 0 ? edges[rnd(w, sizeof edges)] : (uint8_t)rnd(w, 256);
    bool dup = false;
    for (uint32_t k = 0; k < n; k++) dup |= w->ql[k] == 1 && w->qb[k][0] == c;
    if (dup) continue;
    w->qb[n][0] = c;
    w->ql[n] = 1;
    n++;
  }
  if (odd) {
    w->qb[0][1] = 'x'; /* a two-byte qualifier: distinct from every one-byte one */
    w->ql[0] = 2;
    if (rnd(w, 2)) w->ql[1] = 0;
  }
  static const uint32_t widths[] = {8, 8, 8, 4, 0, 99};
  for (uint32_t q = 0; q < w->nq; q++) w->vw[q] = widths[rnd(w, 6)];
}

static void world_open(world *w, uint64_t seed, size_t cache, bool odd) {
  memset(w, 0, sizeof *w);
  w->rng = seed;
  w->seed = seed;
  w->env = kv_env_mem_new(NOW0);
  w->db = tu_kv_open_mem(w->env, cache);
  kv_family_options fo = {.name = "r", .max_versions = 1,
                          .block_size = 256 + 64 * (uint32_t)rnd(w, 8)};
  assert_int_equal(kv_create_table(w->db, "t", &fo, 1), KV_OK);
  assert_int_equal(kv_family_id(w->db, "t", "r", &w->fid), KV_OK);
  pick_quals(w, odd);
  w->nrows = (int)tu_scaled(1500, 300);
}

static void world_close(world *w) {
  assert_int_equal(kv_close(w->db), KV_OK);
  kv_env_free(w->env);
}

/* Rows as commits write them (every column, one timestamp), some missing columns; then one
** file after a major compaction. */
static void write_rows(world *w) {
  kv_batch *b = kv_batch_new();
  for (int i = 0; i < w->nrows; i++) {
    uint8_t key[32], val[32];
    uint32_t klen = make_key(i, key);
    int64_t ts = NOW0 - (int64_t)rnd(w, 100000);
    bool full = rnd(w, 5) != 0;
    for (uint32_t q = 0; q < w->nq; q++) {
      if (!full && rnd(w, 3) == 0) continue;
      uint32_t vlen = w->vw[q] == 99 ? (uint32_t)rnd(w, 20) : w->vw[q];
      for (uint32_t k = 0; k < vlen; k++) val[k] = (uint8_t)tu_rand(&w->rng);
      assert_int_equal(kv_batch_put(b, w->fid, key, klen, w->qb[q], w->ql[q], ts, val, vlen),
                       KV_OK);
    }
    if (i % 200 == 199) {
      assert_int_equal(kv_commit(w->db, b, NULL), KV_OK);
      kv_batch_free(b);
      b = kv_batch_new();
    }
  }
  assert_int_equal(kv_commit(w->db, b, NULL), KV_OK);
  kv_batch_free(b);
  assert_int_equal(kv_flush(w->db, NULL), KV_OK);
  assert_int_equal(kv_compact(w->db, "t", true), KV_OK);
}

typedef struct query {
  kv_qualifier_set qs;          /* the projection */
  const uint8_t *qp[MAXQ + 4];  /* its qualifiers */
  uint32_t ql[MAXQ + 4];        /* their lengths */
  uint8_t extra[4][2];          /* bytes of qualifiers not in the data */
  bool proj;                    /* a projection is given */
  kv_range range;               /* the range, when ranged */
  bool ranged;                  /* one range, else everything */
  uint8_t lo[32], hi[32];       /* its bounds */
  bool vectors;                 /* value vectors asked for */
  bool get;                     /* kv_get of the range's start */
} query;

static void random_query(world *w, query *q) {
  memset(q, 0, sizeof *q);
  q->proj = rnd(w, 8) != 0;
  q->qs.family_id = w->fid;
  q->qs.quals = q->qp;
  q->qs.qual_lens = q->ql;
  uint32_t n = 0, want = 1 + (uint32_t)rnd(w, w->nq + 2);
  for (uint32_t k = 0; k < want && n < MAXQ + 4; k++) {
    uint64_t kind = rnd(w, 12);
    if (kind == 0 && n > 0) { /* a qualifier named twice */
      uint32_t j = (uint32_t)rnd(w, n);
      q->qp[n] = q->qp[j];
      q->ql[n++] = q->ql[j];
    } else if (kind <= 2) { /* one the data may not have: any byte, or the first byte of
                                a two-byte qualifier of the data alone */
      uint8_t *e = q->extra[k % 4];
      e[0] = kind == 1 ? (uint8_t)rnd(w, 256) : w->qb[0][0];
      e[1] = 'y';
      q->qp[n] = e;
      q->ql[n++] = rnd(w, 4) == 0 ? 2 : 1;
    } else { /* one of the data's, in any order */
      uint32_t c = (uint32_t)rnd(w, w->nq);
      q->qp[n] = w->qb[c];
      q->ql[n++] = w->ql[c];
    }
  }
  q->qs.n_quals = n;
  q->ranged = rnd(w, 3) != 0;
  if (q->ranged) {
    int a = (int)rnd(w, (uint64_t)w->nrows), len = 1 + (int)rnd(w, 300);
    q->range.start = q->lo;
    q->range.start_len = make_key(a, q->lo);
    q->range.start_inclusive = true;
    q->range.end = q->hi;
    q->range.end_len = make_key(a + len, q->hi);
    q->get = rnd(w, 6) == 0;
  }
  q->vectors = rnd(w, 4) != 0;
}

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* One row: its key, then its cells as a sorted set of "qualifier=value" (hex), whether they
** came as views or as a value vector (named by the projection's qualifier at each position). */
static void render(sbuf *out, const kv_row *r, const kv_scan *s, const query *q, world *w,
                   int mode) {
  char *items[64];
  uint32_t n = 0;
  sbuf one = {0};
  for (uint32_t i = 0; i < r->key_len; i++) sb_add(out, "%02x", r->key[i]);
  sb_add(out, ":");
  for (uint32_t i = 0; i < r->n_cells && n < 64; i++) {
    const kv_cell_view *c = &r->cells[i];
    one.len = 0;
    sb_add(&one, "q");
    for (uint32_t k = 0; k < c->qual_len; k++) sb_add(&one, "%02x", c->qual[k]);
    sb_add(&one, "=");
    for (uint32_t k = 0; k < c->value_len; k++) sb_add(&one, "%02x", c->value[k]);
    items[n++] = strdup(one.p);
  }
  uint32_t nv;
  const kv_value_vector *vv = kv_scan_row_vectors(s, &nv);
  if (nv && mode == 0) w->vec_rows++;
  for (uint32_t i = 0; i < nv; i++) {
    assert_true(q->proj);
    for (uint32_t k = 0; k < 64 && n < 64; k++) {
      if (!(vv[i].present >> k & 1)) continue;
      assert_true(k < q->qs.n_quals);
      one.len = 0;
      sb_add(&one, "q");
      for (uint32_t j = 0; j < q->ql[k]; j++) sb_add(&one, "%02x", q->qp[k][j]);
      sb_add(&one, "=");
      for (uint32_t j = 0; j < vv[i].value_lens[k]; j++) sb_add(&one, "%02x", vv[i].values[k][j]);
      items[n++] = strdup(one.p);
    }
  }
  qsort(items, n, sizeof *items, cmp_str);
  for (uint32_t i = 0; i < n; i++) {
    sb_add(out, "%s%s", i ? "," : "", items[i]);
    free(items[i]);
  }
  sb_add(out, ";\n");
  free(one.p);
}

/* Run q: mode 0 = fast rows and runs, 1 = fast rows without runs, 2 = the cell path. */
static void run(world *w, const query *q, int mode, sbuf *out) {
  out->len = 0;
  sb_add(out, "");
  kv_scan_set_row_runs(mode == 0);
  kv_scan_set_fast_rows(mode != 2);
  kv_scan_options so;
  memset(&so, 0, sizeof so);
  so.family_ids = &w->fid;
  so.n_families = 1;
  so.qualifiers = q->proj ? &q->qs : NULL;
  so.n_qualifier_sets = q->proj ? 1 : 0;
  so.ranges = q->ranged ? &q->range : NULL;
  so.n_ranges = q->ranged ? 1 : 0;
  so.value_vectors = q->vectors;
  uint64_t r0 = kv_scan_run_rows();
  kv_scan *s;
  kv_row r;
  if (q->get) {
    int rc = kv_get(w->db, &so, q->lo, q->range.start_len, &s, &r);
    assert_true(rc == KV_OK || rc == KV_ERR_NOTFOUND);
    if (rc == KV_OK) render(out, &r, s, q, w, mode);
  } else {
    assert_int_equal(kv_scan_open(w->db, &so, &s), KV_OK);
    int rc;
    while ((rc = kv_scan_next(s, &r)) == KV_OK) render(out, &r, s, q, w, mode);
    assert_int_equal(rc, KV_ERR_NOTFOUND);
  }
  kv_scan_close(s);
  if (mode == 0) w->run_rows += kv_scan_run_rows() - r0;
  kv_scan_set_row_runs(true);
  kv_scan_set_fast_rows(true);
}

static void check_queries(world *w, uint64_t n, const char *what) {
  sbuf a = {0}, b = {0}, c = {0};
  for (uint64_t i = 0; i < n; i++) {
    query q;
    random_query(w, &q);
    if (i == 0) { /* first, one that takes value vectors whatever the seed: every qualifier
                     of the data once, in reverse order, the whole table */
      q.proj = true;
      q.qs.n_quals = w->nq;
      for (uint32_t k = 0; k < w->nq; k++) {
        q.qp[k] = w->qb[w->nq - 1 - k];
        q.ql[k] = w->ql[w->nq - 1 - k];
      }
      q.ranged = q.get = false;
      q.vectors = true;
    }
    run(w, &q, 0, &a);
    run(w, &q, 1, &b);
    run(w, &q, 2, &c);
    if (strcmp(a.p, c.p) != 0 || strcmp(b.p, c.p) != 0) {
      fprintf(stderr, "%s: query %llu differs (seed %llu)\nfast, runs:\n%.3000s\nfast:\n%.3000s\n"
              "cell path:\n%.3000s\n", what, (unsigned long long)i,
              (unsigned long long)w->seed, a.p, b.p, c.p);
      fail();
    }
  }
  free(a.p);
  free(b.p);
  free(c.p);
}

static void scenario(uint64_t seed, size_t cache, bool odd, const char *what) {
  world w;
  world_open(&w, seed, cache, odd);
  write_rows(&w);
  check_queries(&w, tu_scaled(60, 20), what);
  /* the comparison covered the fast path: vectors (any scenario with a projection of
     distinct one-byte qualifiers takes them) and runs */
  if (w.vec_rows == 0 || w.run_rows == 0)
    fprintf(stderr, "%s: seed %llu: %llu vector rows, %llu run rows\n", what,
            (unsigned long long)seed, (unsigned long long)w.vec_rows,
            (unsigned long long)w.run_rows);
  assert_true(w.vec_rows > 0);
  assert_true(w.run_rows > 0);
  world_close(&w);
}

static void test_byte_quals_cached(void **state) {
  (void)state;
  uint64_t seed = tu_seed("byte_quals_cached");
  for (int k = 0; k < 4; k++) scenario(seed + (uint64_t)k, 8u << 20, false, "one-byte, cache");
}

static void test_byte_quals_private(void **state) {
  (void)state;
  uint64_t seed = tu_seed("byte_quals_private");
  for (int k = 0; k < 2; k++)
    scenario(seed + (uint64_t)k, KV_BLOCK_CACHE_OFF, false, "one-byte, no cache");
}

static void test_mixed_quals(void **state) {
  (void)state;
  uint64_t seed = tu_seed("mixed_quals");
  for (int k = 0; k < 3; k++) scenario(seed + (uint64_t)k, 8u << 20, true, "mixed, cache");
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_byte_quals_cached),
    cmocka_unit_test(test_byte_quals_private),
    cmocka_unit_test(test_mixed_quals),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
