/*
** tests/kv/test_break_readers.c: adversarial checks of the read path under change (block
** cache, packed cached blocks, lazily valued blocks, kv/scan/scan.c): reader threads scan
** forward, in reverse, with limits and key ranges, look rows up with kv_get and re-read a
** pinned snapshot, while one writer commits whole generations (every row of the table
** rewritten in one batch, a generation-dependent set of rows deleted), small memstores flush
** in the background, compactions run, and a block cache far smaller than the data evicts all
** the time. A batch is atomic and a snapshot is consistent, so every read must see exactly
** one generation: all rows that generation keeps, each with both cells of that generation,
** in key order; generations seen by one thread never go back; a pinned snapshot reads the
** same rows every time. Also without a block cache and with a large one.
** Not here: single-threaded models of the store (test_model.c), flush faults
** (test_background.c).
*/
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "kv/env/env_mem.h"
#include "kv/kv.h"
#include "testutil.h"

#define NROWS 240

/* Rows generation g deletes: (k + g) % 7 == 0. */
static bool deleted(int k, uint64_t g) { return (k + (int)(g % 7)) % 7 == 0; }

static void key_of(int k, char *buf) { snprintf(buf, 16, "row%05d", k); }

static void put_u64(uint8_t *p, uint64_t v) {
  for (int i = 7; i >= 0; i--) { p[i] = (uint8_t)v; v >>= 8; }
}
static uint64_t get_u64(const uint8_t *p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; i++) v = (v << 8) | p[i];
  return v;
}

typedef struct shared {
  kv_db *db;               /* store */
  uint32_t fid;            /* family */
  atomic_bool stop;        /* writer finished */
  atomic_uint_fast64_t gen; /* last committed generation */
} shared;

/* Write generation g: every row's v and w cells (v padded so blocks fill), then the
** tombstones of the rows g deletes. */
static int write_gen(shared *s, uint64_t g) {
  kv_batch *b = kv_batch_new();
  uint8_t val[40];
  memset(val, 'x', sizeof val);
  put_u64(val, g);
  for (int k = 0; k < NROWS; k++) {
    char key[16];
    key_of(k, key);
    assert_int_equal(kv_batch_put(b, s->fid, key, strlen(key), "v", 1, KV_TS_NOW, val, sizeof val), KV_OK);
    assert_int_equal(kv_batch_put(b, s->fid, key, strlen(key), "w", 1, KV_TS_NOW, val, 8), KV_OK);
    if (deleted(k, g))
      assert_int_equal(kv_batch_delete(b, s->fid, KV_DELETE_FAMILY, key, strlen(key), NULL, 0, KV_TS_NOW), KV_OK);
  }
  int rc = kv_commit(s->db, b, NULL);
  kv_batch_free(b);
  return rc;
}

/* Check one row of a scan: its key, both cells, one generation. Returns the generation or
** UINT64_MAX when the row is wrong. */
static uint64_t row_gen(const kv_row *r, int *k_out) {
  char key[16];
  if (r->key_len != 8 || memcmp(r->key, "row", 3) != 0) return UINT64_MAX;
  memcpy(key, r->key, 8);
  key[8] = 0;
  *k_out = atoi(key + 3);
  if (r->n_cells != 2) return UINT64_MAX;
  const kv_cell_view *v = &r->cells[0], *w = &r->cells[1];
  if (v->qual_len != 1 || v->qual[0] != 'v' || v->value_len != 40) return UINT64_MAX;
  if (w->qual_len != 1 || w->qual[0] != 'w' || w->value_len != 8) return UINT64_MAX;
  uint64_t g = get_u64(v->value);
  if (get_u64(w->value) != g) return UINT64_MAX;
  for (int i = 8; i < 40; i++) if (v->value[i] != 'x') return UINT64_MAX;
  return g;
}

typedef struct reader {
  shared *s;      /* the store */
  int id;         /* which reads */
  uint64_t seed;  /* PRNG */
  int bad;        /* violations */
  char why[200];  /* the first */
  uint64_t reads; /* reads done */
} reader;

static void bad(reader *r, const char *what, uint64_t a, uint64_t b) {
  if (!r->bad) snprintf(r->why, sizeof r->why, "reader %d: %s (%llu, %llu)", r->id, what,
                        (unsigned long long)a, (unsigned long long)b);
  r->bad++;
}

/* One scan over [lo, hi) rows (lo/hi < 0: open), forward or reverse, with a limit (0: none),
** at snapshot snap (0: latest). Checks it and returns its generation (UINT64_MAX if it saw
** no row), or sets r->bad. *sig gets a checksum of what it read. */
static uint64_t scan_check(reader *r, int lo, int hi, bool rev, uint64_t limit, uint64_t snap,
                           uint64_t *sig) {
  shared *s = r->s;
  char lk[16], hk[16];
  kv_range rg = {0};
  if (lo >= 0) { key_of(lo, lk); rg.start = (const uint8_t *)lk; rg.start_len = 8; rg.start_inclusive = true; }
  if (hi >= 0) { key_of(hi, hk); rg.end = (const uint8_t *)hk; rg.end_len = 8; rg.end_inclusive = false; }
  kv_scan_options o;
  memset(&o, 0, sizeof o);
  o.family_ids = &s->fid;
  o.n_families = 1;
  if (lo >= 0 || hi >= 0) { o.ranges = &rg; o.n_ranges = 1; }
  o.reverse = rev;
  o.limit = limit;
  o.snapshot = snap;
  kv_scan *sc = NULL;
  if (kv_scan_open(s->db, &o, &sc) != KV_OK) { bad(r, "scan_open failed", 0, 0); return UINT64_MAX; }
  kv_row row;
  int rc, prev = rev ? NROWS : -1;
  uint64_t g = UINT64_MAX, n = 0, h = 1469598103934665603ULL;
  while ((rc = kv_scan_next(sc, &row)) == KV_OK) {
    int k;
    uint64_t rg2 = row_gen(&row, &k);
    if (rg2 == UINT64_MAX) { bad(r, "malformed row", n, 0); break; }
    if (g == UINT64_MAX) g = rg2;
    if (rg2 != g) { bad(r, "two generations in one scan", g, rg2); break; }
    int from = rev ? k + 1 : prev + 1, to = rev ? prev : k; /* rows skipped between */
    for (int j = from; j < to; j++) {
      bool in = (lo < 0 || j >= lo) && (hi < 0 || j < hi);
      if (in && !deleted(j, g)) { bad(r, "a kept row is missing", g, (uint64_t)j); break; }
    }
    if (rev ? k >= prev : k <= prev) { bad(r, "rows out of order", (uint64_t)prev, (uint64_t)k); break; }
    if (deleted(k, g)) { bad(r, "a deleted row is visible", g, (uint64_t)k); break; }
    prev = k;
    n++;
    h = (h ^ (uint64_t)k ^ (g << 20)) * 1099511628211ULL;
  }
  if (rc != KV_OK && rc != KV_ERR_NOTFOUND) bad(r, "scan_next failed", (uint64_t)rc, 0);
  kv_scan_close(sc);
  /* the rows after the last one seen (no limit hit) */
  if (!r->bad && g != UINT64_MAX && (limit == 0 || n < limit)) {
    int from = rev ? (lo < 0 ? 0 : lo) : prev + 1, to = rev ? prev : (hi < 0 || hi > NROWS ? NROWS : hi);
    for (int j = from; j < to; j++)
      if (!deleted(j, g)) { bad(r, "a kept row is missing at the end", g, (uint64_t)j); break; }
  }
  if (sig) *sig = h ^ n;
  return g;
}

static void *reader_main(void *p) {
  reader *r = p;
  shared *s = r->s;
  uint64_t rs = r->seed, last = 0;
  while (!atomic_load(&s->stop) && !r->bad) {
    uint64_t floor = atomic_load(&s->gen); /* committed before the read started */
    uint64_t g = UINT64_MAX;
    int kind = (int)tu_below(&rs, 6);
    if (kind <= 1) {
      g = scan_check(r, -1, -1, kind == 1, 0, 0, NULL);
    } else if (kind == 2) {
      int lo = (int)tu_below(&rs, NROWS), hi = lo + 1 + (int)tu_below(&rs, 60);
      g = scan_check(r, lo, hi, tu_below(&rs, 2), 1 + tu_below(&rs, 20), 0, NULL);
    } else if (kind == 3) { /* point lookups */
      for (int i = 0; i < 20 && !r->bad; i++) {
        int k = (int)tu_below(&rs, NROWS);
        char key[16];
        key_of(k, key);
        kv_scan_options o;
        memset(&o, 0, sizeof o);
        o.family_ids = &s->fid;
        o.n_families = 1;
        kv_scan *sc = NULL;
        kv_row row;
        uint64_t g0 = atomic_load(&s->gen); /* published before the read */
        int rc = kv_get(s->db, &o, key, 8, &sc, &row);
        uint64_t g1 = atomic_load(&s->gen); /* published after it */
        if (rc == KV_OK) {
          int kk;
          uint64_t gg = row_gen(&row, &kk);
          if (gg == UINT64_MAX || kk != k || deleted(k, gg)) bad(r, "kv_get row", gg, (uint64_t)k);
          else if (gg < last) bad(r, "kv_get went back", last, gg);
          else last = gg;
        } else if (rc != KV_ERR_NOTFOUND) {
          bad(r, "kv_get failed", (uint64_t)rc, 0);
        } else {
          /* The read saw one generation v with max(g0, last) <= v <= g1 + 1: the writer
             commits a generation before it publishes its number, so the next one may be
             visible already. A miss is wrong only if the row is kept in every such v. */
          bool kept = true;
          for (uint64_t v = g0 > last ? g0 : last; v <= g1 + 1 && kept; v++)
            if (deleted(k, v)) kept = false;
          if (kept) bad(r, "kv_get found nothing for a kept row", g1, (uint64_t)k);
        }
        if (sc) kv_scan_close(sc);
      }
      r->reads++;
      continue;
    } else { /* a pinned snapshot read twice, with changes in between */
      uint64_t snap, a, b;
      if (kv_snapshot_acquire(s->db, &snap) != KV_OK) { bad(r, "acquire", 0, 0); break; }
      uint64_t g1 = scan_check(r, -1, -1, false, 0, snap, &a);
      for (int i = 0; i < 2; i++) (void)scan_check(r, -1, -1, true, 5, 0, NULL);
      uint64_t g2 = scan_check(r, -1, -1, tu_below(&rs, 2), 0, snap, &b);
      kv_snapshot_release(s->db, snap);
      if (!r->bad && (g1 != g2)) bad(r, "a pinned snapshot changed generation", g1, g2);
      g = g1;
    }
    if (g != UINT64_MAX && !r->bad) {
      if (g < last) bad(r, "generation went back", last, g);
      if (g < floor) bad(r, "a read missed a committed generation", floor, g);
      last = g;
    }
    r->reads++;
  }
  return NULL;
}

static void run(size_t cache, const char *name) {
  uint64_t seed = tu_seed(name);
  kv_env *env = kv_env_mem_new(1700000000000LL);
  kv_options o;
  kv_options_init(&o);
  o.env = env;
  o.create_if_missing = true;
  o.sync_mode = KV_SYNC_OFF;
  o.memstore_flush_size = 24 << 10;
  o.compaction_trigger = 3;
  o.block_cache_size = cache;
  shared s;
  memset(&s, 0, sizeof s);
  assert_int_equal(kv_open("/db", &o, &s.db), KV_OK);
  kv_family_options f = {.name = "f", .block_size = 512};
  assert_int_equal(kv_create_table(s.db, "t", &f, 1), KV_OK);
  assert_int_equal(kv_family_id(s.db, "t", "f", &s.fid), KV_OK);
  assert_int_equal(write_gen(&s, 1), KV_OK);
  atomic_store(&s.gen, 1);
  reader rd[3];
  pthread_t th[3];
  for (int i = 0; i < 3; i++) {
    memset(&rd[i], 0, sizeof rd[i]);
    rd[i].s = &s;
    rd[i].id = i;
    rd[i].seed = seed + (uint64_t)i * 7919;
    assert_int_equal(pthread_create(&th[i], NULL, reader_main, &rd[i]), 0);
  }
  uint64_t gens = tu_scaled(250, 60);
  for (uint64_t g = 2; g <= gens; g++) {
    kv_env_mem_set_time(env, 1700000000000LL + (int64_t)g); /* a new timestamp now and then */
    assert_int_equal(write_gen(&s, g), KV_OK);
    atomic_store(&s.gen, g);
    if (g % 50 == 0) assert_int_equal(kv_compact(s.db, NULL, true), KV_OK);
    else if (g % 17 == 0) assert_int_equal(kv_flush(s.db, NULL), KV_OK);
  }
  atomic_store(&s.stop, true);
  for (int i = 0; i < 3; i++) pthread_join(th[i], NULL);
  for (int i = 0; i < 3; i++) {
    if (rd[i].bad) fprintf(stderr, "seed %llu: %s\n", (unsigned long long)seed, rd[i].why);
    assert_int_equal(rd[i].bad, 0);
    assert_true(rd[i].reads > 0);
  }
  /* at the end, the last generation everywhere */
  reader last = {.s = &s, .id = 9};
  assert_int_equal(scan_check(&last, -1, -1, true, 0, 0, NULL), gens);
  assert_int_equal(last.bad, 0);
  assert_int_equal(kv_close(s.db), KV_OK);
  kv_env_free(env);
}

static void small_cache(void **state) { (void)state; run(48 << 10, "small_cache"); }
static void no_cache(void **state) { (void)state; run(KV_BLOCK_CACHE_OFF, "no_cache"); }
static void large_cache(void **state) { (void)state; run(0, "large_cache"); }

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(small_cache),
      cmocka_unit_test(no_cache),
      cmocka_unit_test(large_cache),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
