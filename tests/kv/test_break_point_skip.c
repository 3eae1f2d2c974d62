/*
** tests/kv/test_break_point_skip.c: skip scans made of one-row ranges, the case where the
** store file iterator reads a block for a row alone (kv/sf/sf_point.h: a block neither cached
** nor admitted gives only the row asked for and the next, flagged partial; a move past them
** loads the block whole: step_fwd/step_back in kv/sf/sf_iter.c), must answer exactly as a full
** scan of the same store (whole blocks) restricted to those keys. One scan seeks many rows,
** often several in one block, some absent (between two rows, a prefix of one, one plus a
** byte), mixed with a wider range now and then, forward and reverse, with LIMIT, qualifier
** projections, value vectors (rows taken whole), several versions, a TTL family whose cells
** expire as the clock moves, every kind of tombstone, several store files, memstore cells,
** older snapshots, and a marker family read with the others, as the existence family or not
** (a one-row range seeks it only when the others have nothing visible), and a transaction's
** uncommitted writes over the rows read (kv_scan_options.overlay). Scans are recycled (a closed scan's iterators serve the next one),
** and another scan is sometimes left open half read across the read. Block sizes from 64
** bytes (a row over several blocks) to 1 MiB (a file in one block); no block cache, a tiny one and a large one.
** Seeded (tu_seed; the seed is printed on failure).
** Not here: kv_get alone (test_sf_point_reads.c, test_break_point_reads.c), the decoder on
** raw blocks (test_sf_point.c).
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
#include "kv/sf/sf_point.h"
#include "testutil.h"
#include "tu_kv.h"
#include "tu_sbuf.h"

#define NOW0 1700000000000ll
#define NQ 10      /* qualifiers of family w */
#define MAXR 16    /* ranges of one scan at most */

typedef struct world {
  kv_env *env;       /* in-memory file system */
  kv_db *db;         /* the store */
  uint32_t fid[3];   /* w (VERSIONS 3), t (TTL 20 s), k (a marker family: one empty cell a
                        row write, read as the existence family) */
  uint64_t rng;      /* PRNG */
  int nrows;         /* row numbers in use */
  int64_t now;       /* the store's clock */
  uint64_t snap;     /* an older snapshot (0: none yet) */
  uint64_t seed;     /* for messages */
} world;

static uint64_t rnd(world *w, uint64_t n) { return tu_below(&w->rng, n); }

/* Row r's key: "k" and 4r in five digits, then for two rows in three a suffix (a 0x00 byte
** and more, or 1..9 letters), so keys of one block differ in length (the prefix-coded
** rows section) and some hold a zero byte; keys sort as their row numbers. */
static size_t row_key(int r, char *out) {
  size_t n = (size_t)sprintf(out, "k%05d", r * 4);
  if (r % 3 == 1) {
    out[n++] = 0;
    out[n++] = 'x';
  } else if (r % 3 == 2) {
    for (int i = 0; i <= r % 9; i++) out[n++] = (char)('a' + (r + i) % 26);
  }
  out[n] = 0;
  return n;
}

static void qname(int q, char *out) { sprintf(out, "c%d", q); }

static void world_open(world *w, uint64_t seed, size_t cache, uint32_t bs) {
  memset(w, 0, sizeof *w);
  w->rng = seed;
  w->seed = seed;
  w->now = NOW0;
  w->nrows = (int)tu_scaled(240, 80);
  w->env = kv_env_mem_new(NOW0);
  w->db = tu_kv_open_mem(w->env, cache);
  kv_family_options fo[3] = {{.name = "w", .max_versions = 3, .block_size = bs},
                             {.name = "t", .max_versions = 1, .ttl_sec = 20, .block_size = 64},
                             {.name = "k", .max_versions = 1, .block_size = 64}};
  assert_int_equal(kv_create_table(w->db, "t", fo, 3), KV_OK);
  for (int f = 0; f < 3; f++)
    assert_int_equal(kv_family_id(w->db, "t", fo[f].name, &w->fid[f]), KV_OK);
}

static void world_close(world *w) {
  assert_int_equal(kv_close(w->db), KV_OK);
  kv_env_free(w->env);
}

/* One batch of writes to a slice of rows: puts of several widths, older versions, and
** tombstones of every kind. */
static void write_slice(world *w) {
  kv_batch *b = kv_batch_new();
  assert_non_null(b);
  int lo = (int)rnd(w, (uint64_t)w->nrows), n = 1 + (int)rnd(w, 50);
  for (int k = 0; k < n; k++) {
    int r = (lo + (int)rnd(w, 70)) % w->nrows, f = (int)rnd(w, 2);
    char row[32], q[8], v[64];
    size_t rl = row_key(r, row);
    int64_t ts = w->now - (int64_t)rnd(w, 4) * 1000;
    uint64_t kind = rnd(w, 16);
    if (kind < 11) {
      if (rnd(w, 4)) /* the row's marker (some rows are written without it) */
        assert_int_equal(kv_batch_put(b, w->fid[2], row, rl, "", 0, ts, "", 0), KV_OK);
      for (int c = 0; c < NQ; c++) {
        if (rnd(w, 3) == 0) continue;
        qname(c, q);
        int vl;
        if (c % 3 == 0) {
          memcpy(v, &ts, 8); /* fixed width */
          vl = 8;
        } else if (c == 5) {
          vl = 0; /* empty */
        } else {
          vl = snprintf(v, sizeof v, "%d/%d/%lld%.*s", r, c, (long long)(ts - NOW0),
                        (int)rnd(w, 30), "..............................");
        }
        assert_int_equal(kv_batch_put(b, w->fid[f], row, rl, q, strlen(q), ts, v, (size_t)vl),
                         KV_OK);
      }
    } else if (kind < 12) {
      assert_int_equal(kv_batch_delete(b, w->fid[f], KV_DELETE_FAMILY, row, rl, "", 0, ts),
                       KV_OK);
      if (rnd(w, 2)) /* the whole row gone */
        assert_int_equal(kv_batch_delete(b, w->fid[2], KV_DELETE_FAMILY, row, rl, "", 0, ts),
                         KV_OK);
    } else if (kind < 14) {
      qname((int)rnd(w, NQ), q);
      assert_int_equal(kv_batch_delete(b, w->fid[f], KV_DELETE_COLUMN, row, rl, q, strlen(q),
                                       ts), KV_OK);
    } else {
      qname((int)rnd(w, NQ), q);
      assert_int_equal(kv_batch_delete(b, w->fid[f], KV_DELETE_VERSION, row, rl, q, strlen(q),
                                       ts), KV_OK);
    }
  }
  assert_int_equal(kv_commit(w->db, b, NULL), KV_OK);
  kv_batch_free(b);
}

/* A query: families, projection, versions, snapshot, direction, limit, vectors. */
typedef struct query {
  uint32_t fids[3];       /* families read */
  uint32_t nf;            /* their count */
  uint32_t existence;     /* kv_scan_options.existence_family (the marker family k) */
  int proj;               /* projection mask of family w (fids has w first), -1: none */
  int max_versions;       /* 0..3 */
  uint64_t snapshot;      /* 0 = latest */
  bool reverse;           /* descending rows */
  uint64_t limit;         /* 0 = none */
  bool vectors;           /* value_vectors */
  kv_batch *overlay;      /* uncommitted writes read as committed (a transaction), or NULL */
  kv_range ranges[MAXR];  /* the skip scan's ranges, ascending */
  uint32_t nr;            /* their count */
  char keys[MAXR][2][40]; /* range bounds' bytes */
} query;

/* One cell of a rendered row, to put views and vectors in one order. */
typedef struct rcell {
  uint32_t fpos;          /* family position in the scan */
  char qual[8];           /* qualifier */
  int64_t ts;             /* timestamp (0 when vectors: they carry none) */
  const uint8_t *val;     /* value */
  uint32_t vlen;          /* its length */
} rcell;

static int rcell_cmp(const void *a, const void *b) {
  const rcell *x = a, *y = b;
  if (x->fpos != y->fpos) return x->fpos < y->fpos ? -1 : 1;
  int c = strcmp(x->qual, y->qual);
  if (c) return c;
  if (x->ts != y->ts) return x->ts > y->ts ? -1 : 1;
  uint32_t n = x->vlen < y->vlen ? x->vlen : y->vlen;
  c = n ? memcmp(x->val, y->val, n) : 0;
  if (c) return c;
  return x->vlen < y->vlen ? -1 : x->vlen > y->vlen;
}

/* Append row r of scan s (read with q's options) to out as text. */
static void render(sbuf *out, kv_scan *s, const kv_row *r, const query *q, char qn[][8],
                   const int *projq, uint32_t np) {
  rcell cells[256];
  uint32_t n = 0;
  for (uint32_t i = 0; i < r->n_cells; i++) {
    const kv_cell_view *c = &r->cells[i];
    if (q->existence && c->family_id == q->fids[q->existence - 1])
      continue; /* a one-row range may leave the existence family's cells out (kv.h) */
    assert_true(n < 256);
    rcell *x = &cells[n++];
    x->fpos = c->family_id == q->fids[0] ? 0 : c->family_id == q->fids[1] ? 1 : 2;
    assert_true(c->qual_len < sizeof x->qual);
    memcpy(x->qual, c->qual, c->qual_len);
    x->qual[c->qual_len] = 0;
    x->ts = q->vectors ? 0 : c->ts;
    x->val = c->value;
    x->vlen = c->value_len;
  }
  uint32_t nv = 0;
  const kv_value_vector *vv = kv_scan_row_vectors(s, &nv);
  for (uint32_t k = 0; k < nv; k++) {
    assert_int_equal(vv[k].family_id, q->fids[0]); /* only w has a projection */
    for (uint32_t i = 0; i < np; i++) {
      if (!(vv[k].present >> i & 1)) continue;
      assert_true(n < 256);
      rcell *x = &cells[n++];
      x->fpos = 0;
      strcpy(x->qual, qn[projq[i]]);
      x->ts = 0;
      x->val = vv[k].values[i];
      x->vlen = vv[k].value_lens[i];
    }
  }
  qsort(cells, n, sizeof *cells, rcell_cmp);
  for (uint32_t i = 0; i < r->key_len; i++) sb_add(out, "%02x", r->key[i]);
  sb_add(out, ":");
  for (uint32_t i = 0; i < n; i++) {
    sb_add(out, "%u/%s@%lld=", cells[i].fpos, cells[i].qual, (long long)cells[i].ts);
    for (uint32_t j = 0; j < cells[i].vlen; j++) sb_add(out, "%02x", cells[i].val[j]);
    sb_add(out, ",");
  }
  sb_add(out, "\n");
}

static bool in_ranges(const query *q, const uint8_t *key, uint32_t len) {
  for (uint32_t i = 0; i < q->nr; i++) {
    const kv_range *r = &q->ranges[i];
    uint32_t n = len < r->start_len ? len : (uint32_t)r->start_len;
    int c = memcmp(key, r->start, n);
    if (c == 0) c = len < r->start_len ? -1 : len > r->start_len;
    if (c < 0 || (c == 0 && !r->start_inclusive)) continue;
    n = len < r->end_len ? len : (uint32_t)r->end_len;
    c = memcmp(key, r->end, n);
    if (c == 0) c = len < r->end_len ? -1 : len > r->end_len;
    if (c > 0 || (c == 0 && !r->end_inclusive)) continue;
    return true;
  }
  return false;
}

/* Run q (with_ranges: as a skip scan; else a full scan whose rows are filtered to q's
** ranges, reversed and limited here) and render its rows into out. */
static void run(world *w, const query *q, bool with_ranges, sbuf *out) {
  char qn[NQ][8];
  const uint8_t *qp[NQ];
  uint32_t ql[NQ];
  int projq[NQ];
  uint32_t np = 0;
  for (int c = 0; c < NQ; c++) qname(c, qn[c]);
  kv_scan_options so;
  memset(&so, 0, sizeof so);
  so.family_ids = q->fids;
  so.n_families = q->nf;
  so.existence_family = q->existence;
  so.max_versions = q->max_versions;
  so.snapshot = q->snapshot;
  so.value_vectors = q->vectors;
  so.overlay = q->overlay;
  kv_qualifier_set qs;
  if (q->proj >= 0) {
    for (int c = 0; c < NQ; c++)
      if (q->proj >> c & 1) {
        projq[np] = c;
        qp[np] = (const uint8_t *)qn[c];
        ql[np++] = (uint32_t)strlen(qn[c]);
      }
    qs.family_id = q->fids[0];
    qs.quals = qp;
    qs.qual_lens = ql;
    qs.n_quals = np;
    so.qualifiers = &qs;
    so.n_qualifier_sets = 1;
  }
  if (with_ranges) {
    so.ranges = q->ranges;
    so.n_ranges = q->nr;
    so.reverse = q->reverse;
    so.limit = q->limit;
  }
  kv_scan *s;
  int rc = kv_scan_open(w->db, &so, &s);
  if (rc) fail_msg("seed %llu: kv_scan_open: %s", (unsigned long long)w->seed, kv_errmsg());
  kv_row r;
  sbuf rows[1024];
  uint32_t n = 0;
  while ((rc = kv_scan_next(s, &r)) == KV_OK) {
    if (!with_ranges && !in_ranges(q, r.key, r.key_len)) continue;
    assert_true(n < 1024);
    memset(&rows[n], 0, sizeof rows[n]);
    render(&rows[n++], s, &r, q, qn, projq, np);
  }
  if (rc != KV_ERR_NOTFOUND)
    fail_msg("seed %llu: kv_scan_next: %d %s", (unsigned long long)w->seed, rc, kv_errmsg());
  kv_scan_close(s);
  out->len = 0;
  sb_add(out, "");
  uint64_t lim = with_ranges || !q->limit ? n : q->limit;
  for (uint32_t i = 0; i < n && i < lim; i++) {
    uint32_t j = with_ranges || !q->reverse ? i : n - 1 - i;
    sb_put(out, rows[j].p, rows[j].len);
  }
  out->p[out->len] = 0;
  for (uint32_t i = 0; i < n; i++) free(rows[i].p);
}

/* A random skip scan of mostly one-row ranges over present and absent keys. */
static void random_query(world *w, query *q) {
  memset(q, 0, sizeof *q);
  q->nf = 1 + (uint32_t)rnd(w, 2);
  bool w_first = q->nf == 2 || rnd(w, 2);
  q->fids[0] = w->fid[w_first ? 0 : 1];
  if (q->nf == 2) q->fids[1] = w->fid[1];
  if (rnd(w, 3) == 0) { /* the marker family too, as the existence family or not */
    q->fids[q->nf++] = w->fid[2];
    if (rnd(w, 3)) q->existence = q->nf;
  }
  q->proj = w_first && rnd(w, 2) ? 1 + (int)rnd(w, (1 << NQ) - 1) : -1;
  q->max_versions = (int)rnd(w, 4);
  q->snapshot = w->snap && rnd(w, 4) == 0 ? w->snap : 0;
  q->reverse = rnd(w, 3) == 0;
  q->limit = rnd(w, 3) == 0 ? 1 + rnd(w, 4) : 0;
  q->vectors = rnd(w, 2);
  if (rnd(w, 4) == 0) { /* a transaction's own writes over the rows read */
    q->overlay = kv_batch_new();
    assert_non_null(q->overlay);
    int r0 = (int)rnd(w, (uint64_t)w->nrows);
    for (int k = (int)rnd(w, 12); k >= 0; k--) {
      char row[32], qn[8], v[24];
      int r = (r0 + (int)rnd(w, 20)) % w->nrows, f = (int)rnd(w, 3);
      size_t rl = row_key(r, row);
      qname((int)rnd(w, NQ), qn);
      int vl = snprintf(v, sizeof v, "overlay %d", k);
      uint64_t kind = rnd(w, 6);
      int64_t ts = rnd(w, 2) ? KV_TS_NOW : w->now - (int64_t)rnd(w, 4) * 1000;
      if (f == 2)
        assert_int_equal(kv_batch_put(q->overlay, w->fid[2], row, rl, "", 0, ts, "", 0), KV_OK);
      else if (kind < 4)
        assert_int_equal(kv_batch_put(q->overlay, w->fid[f], row, rl, qn, strlen(qn), ts, v,
                                      (size_t)vl), KV_OK);
      else if (kind == 4)
        assert_int_equal(kv_batch_delete(q->overlay, w->fid[f], KV_DELETE_COLUMN, row, rl, qn,
                                         strlen(qn), ts), KV_OK);
      else
        assert_int_equal(kv_batch_delete(q->overlay, w->fid[f], KV_DELETE_FAMILY, row, rl, "",
                                         0, ts), KV_OK);
    }
  }
  /* row numbers ascending, near each other (several in one block) */
  int r = (int)rnd(w, (uint64_t)w->nrows), want = 1 + (int)rnd(w, MAXR);
  char prev[40];
  size_t prev_len = 0;
  for (int i = 0; i < want && r < w->nrows + 3; i++, r += 1 + (int)rnd(w, 3)) {
    char *s = q->keys[q->nr][0], *e = q->keys[q->nr][1];
    size_t sl = row_key(r, s);
    switch (rnd(w, 8)) {
    case 0: s[sl++] = 0; break;           /* a present key plus a byte */
    case 1: sl--; break;                  /* a prefix of one */
    case 2: s[sl - 1]++; break;           /* between two rows */
    default: break;
    }
    if (prev_len && (memcmp(s, prev, sl < prev_len ? sl : prev_len) < 0 ||
                     (memcmp(s, prev, sl < prev_len ? sl : prev_len) == 0 && sl <= prev_len)))
      continue; /* keep the ranges ascending and apart */
    kv_range *g = &q->ranges[q->nr];
    g->start = (const uint8_t *)s;
    g->start_len = sl;
    g->start_inclusive = true;
    memcpy(e, s, sl);
    size_t el = sl;
    if (rnd(w, 8) == 0) { /* a wider range: to the next row number's key */
      el = row_key(r + 1, e);
      g->end_inclusive = false;
      if (memcmp(e, s, el < sl ? el : sl) <= 0) {
        memcpy(e, s, sl);
        el = sl;
        e[el++] = 0;
      }
    } else {
      e[el++] = 0; /* [key, key + 0x00): the one row key */
      g->end_inclusive = false;
    }
    g->end = (const uint8_t *)e;
    g->end_len = el;
    memcpy(prev, e, el);
    prev_len = el;
    q->nr++;
    if (q->nr == MAXR) break;
  }
  if (q->nr == 0) { /* at least one range */
    char *s = q->keys[0][0], *e = q->keys[0][1];
    size_t sl = row_key(0, s);
    memcpy(e, s, sl);
    e[sl] = 0;
    q->ranges[0] = (kv_range){(const uint8_t *)s, sl, true, (const uint8_t *)e, sl + 1, false};
    q->nr = 1;
  }
}

/* Leave a scan open half read (it holds blocks and iterators the next scans cannot
** reuse), or NULL. */
static kv_scan *open_other(world *w) {
  if (rnd(w, 4)) return NULL;
  uint32_t fids[3] = {w->fid[0], w->fid[1], w->fid[2]};
  kv_scan_options so;
  memset(&so, 0, sizeof so);
  so.family_ids = fids;
  so.n_families = 1 + (uint32_t)rnd(w, 3);
  so.reverse = rnd(w, 2);
  kv_scan *s;
  assert_int_equal(kv_scan_open(w->db, &so, &s), KV_OK);
  kv_row r;
  for (int i = (int)rnd(w, 30); i > 0; i--)
    if (kv_scan_next(s, &r) != KV_OK) break;
  return s;
}

static void run_world(size_t cache, uint32_t bs, const char *name) {
  world w;
  uint64_t seed = tu_seed(name);
  world_open(&w, seed, cache, bs);
  sbuf got = {0}, want = {0};
  uint64_t p0 = kv_sf_point_decodes(), lines = 0;
  int rounds = (int)tu_scaled(60, 20);
  for (int round = 0; round < rounds; round++) {
    for (int k = (int)rnd(&w, 4); k >= 0; k--) write_slice(&w);
    uint64_t x = rnd(&w, 10);
    if (x < 5) assert_int_equal(kv_flush(w.db, "t"), KV_OK);
    else if (x == 5) assert_int_equal(kv_compact(w.db, "t", false), KV_OK);
    else if (x == 6) assert_int_equal(kv_compact(w.db, "t", true), KV_OK);
    if (rnd(&w, 5) == 0) {
      if (w.snap) kv_snapshot_release(w.db, w.snap);
      assert_int_equal(kv_snapshot_acquire(w.db, &w.snap), KV_OK);
    }
    w.now += (int64_t)rnd(&w, 4) * 1500;
    kv_env_mem_set_time(w.env, w.now);
    for (int i = 0; i < 12; i++) {
      query q;
      random_query(&w, &q);
      kv_scan *other = open_other(&w);
      run(&w, &q, true, &got);
      run(&w, &q, false, &want);
      kv_scan_close(other);
      kv_batch_free(q.overlay);
      for (const char *c = got.p; *c; c++) lines += *c == '\n';
      if (strcmp(got.p, want.p) != 0)
        fail_msg("seed %llu round %d query %d (%u ranges, first %.*s, reverse %d, limit %llu, "
                 "vectors %d, proj %d, versions %d, snapshot %llu):\nskip scan:\n%s\nfull "
                 "scan:\n%s",
                 (unsigned long long)seed, round, i, q.nr, (int)q.ranges[0].start_len,
                 (const char *)q.ranges[0].start, q.reverse, (unsigned long long)q.limit,
                 q.vectors, q.proj, q.max_versions, (unsigned long long)q.snapshot, got.p,
                 want.p);
    }
  }
  assert_true(lines > (uint64_t)rounds); /* the reads found rows */
  if (cache == KV_BLOCK_CACHE_OFF)
    assert_true(kv_sf_point_decodes() > p0); /* the partial path ran */
  if (w.snap) kv_snapshot_release(w.db, w.snap);
  free(got.p);
  free(want.p);
  world_close(&w);
}

static void no_cache_tiny_blocks(void **state) {
  (void)state;
  run_world(KV_BLOCK_CACHE_OFF, 64, "no_cache_tiny_blocks");
}

static void no_cache_small_blocks(void **state) {
  (void)state;
  run_world(KV_BLOCK_CACHE_OFF, 300, "no_cache_small_blocks");
}

static void no_cache_large_blocks(void **state) {
  (void)state;
  run_world(KV_BLOCK_CACHE_OFF, 4096, "no_cache_large_blocks");
}

static void no_cache_huge_blocks(void **state) {
  (void)state;
  run_world(KV_BLOCK_CACHE_OFF, 1u << 20, "no_cache_huge_blocks"); /* a file in one block */
}

static void tiny_cache(void **state) {
  (void)state;
  run_world(3u << 10, 300, "tiny_cache");
}

static void large_cache(void **state) {
  (void)state;
  run_world(64u << 20, 300, "large_cache");
}

/* Names of the store files under dir (recursively) with their sizes. */
typedef struct files {
  kv_env *env;       /* the env listed */
  char dir[240];     /* directory being listed */
  char path[32][240];/* store files found */
  int64_t size[32];  /* their sizes */
  int n;             /* how many */
} files;

static int collect(void *ctx, const char *name) {
  files *f = ctx;
  char p[240];
  snprintf(p, sizeof p, "%.150s/%.80s", f->dir, name);
  int64_t size = kv_env_mem_file_size(f->env, p);
  if (size < 0) { /* a directory */
    char saved[240];
    snprintf(saved, sizeof saved, "%s", f->dir);
    snprintf(f->dir, sizeof f->dir, "%s", p);
    int rc = f->env->list(f->env, p, collect, f);
    snprintf(f->dir, sizeof f->dir, "%s", saved);
    return rc;
  }
  size_t n = strlen(p);
  if (n > 3 && strcmp(p + n - 3, ".sf") == 0 && f->n < 32) {
    snprintf(f->path[f->n], sizeof f->path[0], "%s", p);
    f->size[f->n++] = size;
  }
  return 0;
}

/* A damaged data block read by a point read of a row alone (no cache): KV_ERR_CORRUPT whose
** message names the store file and the block's offset, from kv_get, from a skip scan of
** one-row ranges and from a reverse one; never a crash or a row. The same store without
** the damage reads the row. */
static void damaged_block_point_read(void **state) {
  (void)state;
  world w;
  world_open(&w, tu_seed("damaged_block_point_read"), KV_BLOCK_CACHE_OFF, 300);
  kv_batch *b = kv_batch_new();
  assert_non_null(b);
  for (int r = 0; r < 40; r++) {
    char row[32], q[8], v[40];
    size_t rl = row_key(r, row);
    for (int c = 0; c < NQ; c++) {
      qname(c, q);
      int vl = snprintf(v, sizeof v, "value %d of row %d", c, r);
      assert_int_equal(kv_batch_put(b, w.fid[0], row, rl, q, strlen(q), NOW0, v, (size_t)vl),
                       KV_OK);
    }
  }
  assert_int_equal(kv_commit(w.db, b, NULL), KV_OK);
  kv_batch_free(b);
  assert_int_equal(kv_flush(w.db, "t"), KV_OK);
  static files f;
  memset(&f, 0, sizeof f);
  f.env = w.env;
  snprintf(f.dir, sizeof f.dir, "/db");
  assert_int_equal(w.env->list(w.env, "/db", collect, &f), 0);
  assert_int_equal(f.n, 1); /* family w's one file (t holds nothing) */
  char row[32];
  size_t rl = row_key(0, row); /* the first row: block 0, at offset 0 */
  kv_scan_options so;
  memset(&so, 0, sizeof so);
  so.family_ids = &w.fid[0];
  so.n_families = 1;
  kv_scan *s;
  kv_row r;
  assert_int_equal(kv_get(w.db, &so, row, rl, &s, &r), KV_OK);
  kv_scan_close(s);
  uint8_t v;
  assert_int_equal(kv_env_mem_get_byte(w.env, f.path[0], 20, &v), KV_OK);
  assert_int_equal(kv_env_mem_set_byte(w.env, f.path[0], 20, (uint8_t)(v ^ 0x10)), KV_OK);
  const char *base = strrchr(f.path[0], '/') + 1;
  char end[40];
  memcpy(end, row, rl);
  end[rl] = 0;
  kv_range rg = {(const uint8_t *)row, rl, true, (const uint8_t *)end, rl + 1, false};
  for (int way = 0; way < 3; way++) {
    int rc;
    s = NULL;
    if (way == 0) {
      rc = kv_get(w.db, &so, row, rl, &s, &r);
    } else {
      so.ranges = &rg;
      so.n_ranges = 1;
      so.reverse = way == 2;
      assert_int_equal(kv_scan_open(w.db, &so, &s), KV_OK);
      rc = kv_scan_next(s, &r);
    }
    const char *msg = kv_errmsg();
    if (rc != KV_ERR_CORRUPT || !strstr(msg, base) || !strstr(msg, "offset 0"))
      fail_msg("way %d: %d '%s' (want KV_ERR_CORRUPT naming %s and offset 0)", way, rc, msg,
               base);
    kv_scan_close(s);
  }
  world_close(&w);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(no_cache_tiny_blocks),
    cmocka_unit_test(no_cache_small_blocks),
    cmocka_unit_test(no_cache_large_blocks),
    cmocka_unit_test(no_cache_huge_blocks),
    cmocka_unit_test(tiny_cache),
    cmocka_unit_test(large_cache),
    cmocka_unit_test(damaged_block_point_read),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
