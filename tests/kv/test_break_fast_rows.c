/*
** tests/kv/test_break_fast_rows.c: attacks on the fast row path (kv/sf/sf_rows.h: a family's
** row handed out whole as views into its compact block) while the store changes under an
** open scan. A scan is read one row at a time; between two kv_scan_next calls the test
** commits cells onto the very row just handed out and onto others, flushes, runs minor and
** major compactions (the scan's files are replaced), streams full scans through a tiny
** block cache (the scan's block is evicted), runs kv_get, drops the table; background
** flushes and compactions run too (small memstores, trigger 2). The row handed out must
** keep its bytes until the next call, and the whole scan must equal the cell-by-cell path
** (kv_scan_set_fast_rows(false)) run before it at the same pinned snapshot. A kv_get's
** row held over the same scan keeps its bytes until its scan is closed.
** Data: long row keys (1..600 bytes, 0x00 and 0xFF included, some prefixes of others),
** empty, small and multi-block values, two families (VERSIONS 1; VERSIONS 2 with a TTL,
** timestamps sometimes past it), mostly simple rows so the fast path runs (checked).
** Not here: the fast path against the cell path on quiet random data (test_scan_rows.c).
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
#include "tu_sbuf.h"

#define NOW0 1700000000000ll
#define TTL_SEC 3600
#define NQ 4

static const char *QN[NQ] = {"q", "r0", "s", "tt"};

typedef struct world {
  kv_env *env;         /* in-memory file system */
  kv_db *db;           /* store */
  uint32_t fid[2];     /* family ids: a (VERSIONS 1), b (VERSIONS 2, TTL) */
  uint64_t rng;        /* PRNG state */
  int nkeys;           /* row keys */
  uint8_t **keys;      /* nkeys keys */
  size_t *klen;        /* their lengths */
  int64_t now;         /* the env's clock */
  uint64_t taken;      /* family rows handed out whole */
  uint64_t rows;       /* rows handed out */
  bool dropped;        /* the table was dropped */
} world;

static uint64_t rnd(world *w, uint64_t n) { return tu_below(&w->rng, n); }

/* Keys: random bytes of lengths 1..600 (mostly short), some the prefix of another. */
static void make_keys(world *w) {
  w->nkeys = (int)tu_scaled(240, 120);
  w->keys = calloc((size_t)w->nkeys, sizeof *w->keys);
  w->klen = calloc((size_t)w->nkeys, sizeof *w->klen);
  assert_non_null(w->keys);
  assert_non_null(w->klen);
  for (int i = 0; i < w->nkeys; i++) {
    size_t len = rnd(w, 8) == 0 ? 100 + rnd(w, 500) : 1 + rnd(w, 12);
    bool prefix = i > 0 && rnd(w, 6) == 0 && w->klen[i - 1] > 1;
    if (prefix) len = 1 + rnd(w, w->klen[i - 1] - 1); /* a prefix of the one before */
    w->keys[i] = malloc(len);
    assert_non_null(w->keys[i]);
    if (prefix) {
      memcpy(w->keys[i], w->keys[i - 1], len);
    } else {
      static const uint8_t pool[] = {0x00, 0x01, 0x7f, 0x80, 0xfe, 0xff, 'a', 'b'};
      for (size_t k = 0; k < len; k++)
        w->keys[i][k] = rnd(w, 3) ? pool[rnd(w, sizeof pool)] : (uint8_t)tu_rand(&w->rng);
    }
    w->klen[i] = len;
  }
}

static void world_open(world *w, uint64_t seed, size_t cache) {
  memset(w, 0, sizeof *w);
  w->rng = seed;
  w->now = NOW0;
  w->env = kv_env_mem_new(w->now);
  kv_options o;
  kv_options_init(&o);
  o.env = w->env;
  o.create_if_missing = true;
  o.compaction_trigger = 2;
  o.memstore_flush_size = 48 << 10;
  o.block_cache_size = cache;
  assert_int_equal(kv_open("/db", &o, &w->db), KV_OK);
  kv_family_options fo[2] = {
      {.name = "a", .max_versions = 1, .block_size = 512},
      {.name = "b", .max_versions = 2, .ttl_sec = TTL_SEC, .block_size = 1024},
  };
  assert_int_equal(kv_create_table(w->db, "t", fo, 2), KV_OK);
  for (int f = 0; f < 2; f++)
    assert_int_equal(kv_family_id(w->db, "t", fo[f].name, &w->fid[f]), KV_OK);
  make_keys(w);
}

static void world_close(world *w) {
  assert_int_equal(kv_close(w->db), KV_OK);
  kv_env_free(w->env);
  for (int i = 0; i < w->nkeys; i++) free(w->keys[i]);
  free(w->keys);
  free(w->klen);
}

static void put_cell(world *w, kv_batch *b, int fam, int key, int q, int64_t ts) {
  static uint8_t val[3000];
  size_t len;
  uint64_t k = rnd(w, 20);
  if (k < 3) len = 0;
  else if (k == 3 && rnd(w, 3) == 0) len = 600 + rnd(w, sizeof val - 600); /* > a block */
  else len = 1 + rnd(w, 16);
  for (size_t i = 0; i < len; i++) val[i] = (uint8_t)tu_rand(&w->rng);
  assert_int_equal(kv_batch_put(b, w->fid[fam], w->keys[key], w->klen[key], QN[q],
                                strlen(QN[q]), ts, val, len),
                   KV_OK);
}

/* Write `n` operations (whole: key i of each is i, every op a whole row): mostly whole rows (each column once at one timestamp), some
** single versions and tombstones, some timestamps past the TTL. Commits every few ops. */
static void write_some(world *w, int n, int only_key, bool whole) {
  kv_batch *b = kv_batch_new();
  assert_non_null(b);
  for (int i = 0; i < n; i++) {
    int key = only_key >= 0 ? only_key : whole ? i % w->nkeys : (int)rnd(w, (uint64_t)w->nkeys);
    int64_t ts = !whole && rnd(w, 40) == 0 ? w->now - TTL_SEC * 1000ll - (int64_t)rnd(w, 100000)
                                 : w->now - (int64_t)rnd(w, 60000);
    uint64_t kind = whole ? 0 : rnd(w, 40);
    if (kind < 35) {
      for (int f = 0; f < 2; f++)
        for (int q = 0; q < NQ; q++)
          if (rnd(w, 4)) put_cell(w, b, f, key, q, ts);
    } else if (kind < 37) {
      put_cell(w, b, (int)rnd(w, 2), key, (int)rnd(w, NQ), ts);
    } else if (kind < 38) {
      assert_int_equal(kv_batch_delete(b, w->fid[rnd(w, 2)], KV_DELETE_FAMILY, w->keys[key],
                                       w->klen[key], "", 0, ts),
                       KV_OK);
    } else {
      int q = (int)rnd(w, NQ);
      assert_int_equal(kv_batch_delete(b, w->fid[rnd(w, 2)], KV_DELETE_COLUMN, w->keys[key],
                                       w->klen[key], QN[q], strlen(QN[q]), ts),
                       KV_OK);
    }
    if (rnd(w, 4) == 0 || i + 1 == n) {
      assert_int_equal(kv_commit(w->db, b, NULL), KV_OK);
      kv_batch_clear(b);
    }
  }
  kv_batch_free(b);
}

static void render_row(sbuf *out, const kv_row *r) {
  for (uint32_t i = 0; i < r->key_len; i++) sb_add(out, "%02x", r->key[i]);
  sb_add(out, ":");
  for (uint32_t i = 0; i < r->n_cells; i++) {
    const kv_cell_view *c = &r->cells[i];
    sb_add(out, "%s%u/%.*s@%lld=", i ? "," : "", c->family_id, (int)c->qual_len,
           (const char *)c->qual, (long long)c->ts);
    for (uint32_t k = 0; k < c->value_len; k++) sb_add(out, "%02x", c->value[k]);
  }
  sb_add(out, ";\n");
}

typedef struct query {
  uint32_t fids[2];           /* families read */
  uint32_t nf;                /* entries in fids */
  kv_qualifier_set qs;        /* a projection of the first family, if nqs */
  uint32_t nqs;               /* 0 or 1 */
  const uint8_t *qp[NQ];      /* projected qualifiers */
  uint32_t ql[NQ];            /* their lengths */
  kv_range range[3];          /* key ranges (several: a skip scan) */
  uint32_t nr;                /* 0..3 */
  bool reverse;               /* descending */
  uint64_t limit;             /* 0 = none */
  int max_versions;           /* 0 = 1 */
} query;

static void random_query(world *w, query *q) {
  memset(q, 0, sizeof *q);
  q->nf = 1 + (uint32_t)rnd(w, 2);
  int first = (int)rnd(w, 2);
  q->fids[0] = w->fid[first];
  if (q->nf == 2) q->fids[1] = w->fid[1 - first];
  if (rnd(w, 3) == 0) {
    q->nqs = 1;
    q->qs.family_id = q->fids[0];
    for (int i = 0; i < NQ; i++)
      if (rnd(w, 2)) {
        q->qp[q->qs.n_quals] = (const uint8_t *)QN[i];
        q->ql[q->qs.n_quals++] = (uint32_t)strlen(QN[i]);
      }
    q->qs.quals = q->qp;
    q->qs.qual_lens = q->ql;
    if (q->qs.n_quals == 0) q->nqs = 0;
  }
  if (rnd(w, 2)) {
    /* 2, 4 or 6 keys sorted by their bytes: one to three ranges, kept apart */
    int nb = 2 * (1 + (int)rnd(w, 3)), idx[6];
    for (int i = 0; i < nb; i++) idx[i] = (int)rnd(w, (uint64_t)w->nkeys);
    for (int i = 0; i < nb; i++)
      for (int j = i + 1; j < nb; j++) {
        const uint8_t *ki = w->keys[idx[i]], *kj = w->keys[idx[j]];
        size_t li = w->klen[idx[i]], lj = w->klen[idx[j]];
        int c = memcmp(ki, kj, li < lj ? li : lj);
        if (c > 0 || (c == 0 && li > lj)) { int t = idx[i]; idx[i] = idx[j]; idx[j] = t; }
      }
    for (int r = 0; r < nb / 2; r++) {
      int a = idx[2 * r], b = idx[2 * r + 1];
      kv_range *g = &q->range[q->nr];
      *g = (kv_range){w->keys[a], w->klen[a], rnd(w, 2) != 0, w->keys[b], w->klen[b],
                      rnd(w, 2) != 0};
      if (q->nr > 0) { /* apart from the range before: its end below this start */
        const kv_range *p = &q->range[q->nr - 1];
        int c = memcmp(p->end, g->start, p->end_len < g->start_len ? p->end_len : g->start_len);
        bool below = c < 0 || (c == 0 && p->end_len < g->start_len) ||
                     (c == 0 && p->end_len == g->start_len && !(p->end_inclusive && g->start_inclusive));
        if (!below) break;
      }
      q->nr++;
    }
    if (q->nr == 1 && rnd(w, 4) == 0) q->range[0].start = NULL, q->range[0].start_len = 0;
    if (q->nr == 1 && rnd(w, 4) == 0) q->range[0].end = NULL, q->range[0].end_len = 0;
  }
  q->reverse = rnd(w, 3) == 0;
  q->limit = rnd(w, 4) == 0 ? 1 + rnd(w, 40) : 0;
  q->max_versions = (int)rnd(w, 3);
}

static void fill_options(const query *q, uint64_t snap, kv_scan_options *so) {
  memset(so, 0, sizeof *so);
  so->family_ids = q->fids;
  so->n_families = q->nf;
  so->qualifiers = q->nqs ? &q->qs : NULL;
  so->n_qualifier_sets = q->nqs;
  so->ranges = q->nr ? q->range : NULL;
  so->n_ranges = q->nr;
  so->reverse = q->reverse;
  so->limit = q->limit;
  so->max_versions = q->max_versions;
  so->snapshot = snap;
}

/* The reference: the cell-by-cell path, run to the end in one go. */
static void run_reference(world *w, const query *q, uint64_t snap, sbuf *out) {
  out->len = 0;
  sb_add(out, "");
  kv_scan_set_fast_rows(false);
  kv_scan_options so;
  fill_options(q, snap, &so);
  kv_scan *s;
  kv_row r;
  int rc = kv_scan_open(w->db, &so, &s);
  if (rc != KV_OK) fail_msg("kv_scan_open: %s", kv_errmsg());
  while ((rc = kv_scan_next(s, &r)) == KV_OK) render_row(out, &r);
  assert_int_equal(rc, KV_ERR_NOTFOUND);
  assert_int_equal(kv_scan_rows_taken(s), 0);
  kv_scan_close(s);
  kv_scan_set_fast_rows(true);
}

/* A full scan of both families through the cache: pushes the blocks of other scans out. */
static void thrash(world *w) {
  kv_scan_options so;
  memset(&so, 0, sizeof so);
  so.family_ids = w->fid;
  so.n_families = 2;
  so.max_versions = 2;
  kv_scan *s;
  kv_row r;
  assert_int_equal(kv_scan_open(w->db, &so, &s), KV_OK);
  int rc;
  uint64_t sum = 0;
  while ((rc = kv_scan_next(s, &r)) == KV_OK)
    for (uint32_t i = 0; i < r.n_cells; i++) sum += r.cells[i].value_len;
  assert_int_equal(rc, KV_ERR_NOTFOUND);
  kv_scan_close(s);
  (void)sum;
}

/* Something that changes the store between two steps of an open scan. */
static void disturb(world *w, int row_key) {
  switch (rnd(w, 9)) {
  case 0: write_some(w, 3, row_key, false); break; /* cells on the row just handed out */
  case 1: write_some(w, 4, -1, false); break;
  case 2: assert_int_equal(kv_flush(w->db, NULL), KV_OK); break;
  case 3: assert_int_equal(kv_compact(w->db, "t", rnd(w, 2) != 0), KV_OK); break;
  case 4: thrash(w); break;
  case 5: {
    int k = (int)rnd(w, (uint64_t)w->nkeys);
    kv_scan_options so;
    memset(&so, 0, sizeof so);
    so.family_ids = w->fid;
    so.n_families = 2;
    kv_scan *s;
    kv_row r;
    int rc = kv_get(w->db, &so, w->keys[k], w->klen[k], &s, &r);
    assert_true(rc == KV_OK || rc == KV_ERR_NOTFOUND);
    kv_scan_close(s);
    break;
  }
  case 6: /* a bigger write, a flush and a major compaction in a row */
    write_some(w, 20, -1, false);
    assert_int_equal(kv_flush(w->db, NULL), KV_OK);
    assert_int_equal(kv_compact(w->db, "t", true), KV_OK);
    break;
  default: break;
  }
}

/* Find the index of key k (row key bytes) in w->keys, or -1. */
static int key_index(const world *w, const uint8_t *k, uint32_t len) {
  for (int i = 0; i < w->nkeys; i++)
    if (w->klen[i] == len && memcmp(w->keys[i], k, len) == 0) return i;
  return -1;
}

/* Run q on the fast path one row at a time with the store disturbed between steps; the
** held row must keep its bytes and the whole must equal the reference. */
static void check_query(world *w, const query *q, uint64_t seed, int qi, bool drop) {
  uint64_t snap;
  assert_int_equal(kv_snapshot_acquire(w->db, &snap), KV_OK);
  sbuf ref = {0}, got = {0}, held = {0}, again = {0};
  run_reference(w, q, snap, &ref);
  kv_scan_options so;
  fill_options(q, snap, &so);
  kv_scan *s;
  kv_row r;
  /* a kv_get's row, held (valid until its scan is closed) while the scan below runs */
  kv_scan *gs = NULL;
  kv_row gr;
  sbuf gheld = {0}, gagain = {0};
  sb_add(&gheld, "");
  sb_add(&gagain, "");
  int gk = (int)rnd(w, (uint64_t)w->nkeys);
  int grc = kv_get(w->db, &so, w->keys[gk], w->klen[gk], &gs, &gr);
  assert_true(grc == KV_OK || grc == KV_ERR_NOTFOUND);
  if (grc == KV_OK) render_row(&gheld, &gr);
  assert_int_equal(kv_scan_open(w->db, &so, &s), KV_OK);
  sb_add(&got, "");
  int rc, n = 0;
  while ((rc = kv_scan_next(s, &r)) == KV_OK) {
    held.len = 0;
    render_row(&held, &r);
    sb_add(&got, "%s", held.p);
    if (drop && n == 2) {
      assert_int_equal(kv_drop_table(w->db, "t"), KV_OK);
      w->dropped = true;
    } else if (!w->dropped && rnd(w, 3) == 0) {
      disturb(w, key_index(w, r.key, r.key_len));
    }
    again.len = 0;
    render_row(&again, &r);
    if (strcmp(held.p, again.p) != 0) {
      fprintf(stderr, "seed %llu query %d row %d: the held row changed before the next step\n"
              "handed out:\n%s\nafter:\n%s\n", (unsigned long long)seed, qi, n, held.p,
              again.p);
      fail();
    }
    n++;
  }
  assert_int_equal(rc, KV_ERR_NOTFOUND);
  if (grc == KV_OK) render_row(&gagain, &gr);
  kv_scan_close(gs);
  if (strcmp(gheld.p, gagain.p) != 0)
    fail_msg("seed %llu query %d: a kv_get row changed while its scan was open:\n%s\n%s",
             (unsigned long long)seed, qi, gheld.p, gagain.p);
  free(gheld.p);
  free(gagain.p);
  w->taken += kv_scan_rows_taken(s);
  w->rows += (uint64_t)n;
  kv_scan_close(s);
  if (!w->dropped) kv_snapshot_release(w->db, snap);
  if (strcmp(ref.p, got.p) != 0) {
    fprintf(stderr, "seed %llu query %d: fast path with the store changing differs\n"
            "families %u (first %u), projection %u, range %u, reverse %d, limit %llu, "
            "max_versions %d\ncell path:\n%s\nfast path:\n%s\n", (unsigned long long)seed, qi,
            q->nf, q->fids[0], q->nqs, q->nr, q->reverse, (unsigned long long)q->limit,
            q->max_versions, ref.p, got.p);
    fail();
  }
  free(ref.p);
  free(got.p);
  free(held.p);
  free(again.p);
}

static void scenario(size_t cache, const char *name) {
  uint64_t seed = tu_seed(name);
  world w;
  world_open(&w, seed, cache);
  write_some(&w, w.nkeys, -1, true); /* every row once, as commits write them */
  write_some(&w, w.nkeys / 2, -1, false);
  assert_int_equal(kv_flush(w.db, NULL), KV_OK);
  assert_int_equal(kv_compact(w.db, "t", true), KV_OK);
  write_some(&w, w.nkeys / 8, -1, false);
  assert_int_equal(kv_flush(w.db, NULL), KV_OK);
  int nq = (int)tu_scaled(40, 16);
  for (int i = 0; i < nq; i++) {
    query q;
    random_query(&w, &q);
    if (i % 10 == 9) { /* the clock moves: cells of b expire in blocks read before */
      w.now += 600 * 1000ll;
      kv_env_mem_set_time(w.env, w.now);
    }
    if (i % 5 == 0) { /* back to one file per family now and then: the fast path's case */
      assert_int_equal(kv_flush(w.db, NULL), KV_OK);
      assert_int_equal(kv_compact(w.db, "t", true), KV_OK);
    }
    check_query(&w, &q, seed, i, false);
  }
  fprintf(stderr, "[%s] %llu family rows of %llu rows handed out whole\n", name,
          (unsigned long long)w.taken, (unsigned long long)w.rows);
  assert_true(w.taken > 0); /* the fast path ran: how much depends on the data (churn, the
                                VERSIONS 2 family and the TTL keep most blocks off it; a
                                share of 1 in 20 failed for ROWAN_SEED=399561830676 at scale
                                0.25 and 0.5, with row runs on and off) */
  /* the table dropped under an open scan: the scan goes on reading what it saw */
  query q;
  do random_query(&w, &q);
  while (q.limit || q.nr);
  check_query(&w, &q, seed, nq, true);
  world_close(&w);
}

static void test_open_scans_cached(void **state) {
  (void)state;
  scenario(4u << 20, "open_scans_cached");
}

static void test_open_scans_tiny_cache(void **state) {
  (void)state;
  scenario(12u << 10, "open_scans_tiny_cache");
}

static void test_open_scans_no_cache(void **state) {
  (void)state;
  scenario(KV_BLOCK_CACHE_OFF, "open_scans_no_cache");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_open_scans_cached),
      cmocka_unit_test(test_open_scans_tiny_cache),
      cmocka_unit_test(test_open_scans_no_cache),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
