/*
** tests/kv/test_cache.c: the block cache (kv/util/cache.h on its own, and through kv.h) and the
** bloom filters of point and multi-key lookups.
** - cache unit: hit and miss, LRU eviction within the capacity, an entry in use is never
**   freed under its holder, erase by file, many threads at once, a file's blocks filling
**   the shards alike (no eviction in a cache of exactly their size), kv_cache_probe;
**   blocks hit since they were inserted outlive blocks never hit (second chance), and a
**   full cache of blocks all hit still evicts only what an insert needs; two caches sharing
**   one budget (kv_cache_share: the block cache and the column cache): the larger holds the
**   whole budget while the smaller is empty, gives way when the smaller fills, never evicts
**   an entry in use, and the two together stay within the budget, under threads too;
** - a second kv_get of the same row makes no env read (kv_env_mem_get_stats) and counts
**   its blocks as cache hits; with the cache off it reads again;
** - compaction drops the deleted inputs' blocks from the cache and reads stay right;
** - a tiny cache under concurrent scans (entries evicted while other scans hold them);
** - bloom filters: a get of an absent row in a store of many files reads no data block; a
**   scan whose ranges are all single keys reads blocks only of files that may hold them.
** Not here: the store-file format (test_sf.c, test_sf_layout.c), scan semantics (test_scan.c).
*/
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "kv/util/cache.h"
#include "kv/env/env.h"
#include "kv/env/env_mem.h"
#include "kv/kv.h"
#include "testutil.h"

/* ---- kv/util/cache.h on its own -------------------------------------------------------- */

static int freed[64]; /* values freed by the deleter, by value index */

static void count_free(void *v) { freed[*(int *)v]++; }

static void test_cache_lru_and_refs(void **state) {
  (void)state;
  memset(freed, 0, sizeof freed);
  static int vals[64];
  for (int i = 0; i < 64; i++) vals[i] = i;
  kv_cache *c = kv_cache_new(1000); /* one shard: a small cache */
  assert_non_null(c);
  assert_null(kv_cache_lookup(c, 1, 0));
  /* Ten entries of 100 bytes fill it. */
  for (int i = 0; i < 10; i++) {
    kv_cache_entry *e = kv_cache_insert(c, 1, (uint64_t)i * 4096, &vals[i], 100, count_free);
    assert_non_null(e);
    kv_cache_release(c, e);
  }
  kv_cache_entry *e0 = kv_cache_lookup(c, 1, 0); /* entry 0 becomes most recent; held */
  assert_non_null(e0);
  assert_int_equal(*(int *)kv_cache_value(e0), 0);
  /* Two more push out the two least recently used: entries 1 and 2, not the held 0. */
  for (int i = 10; i < 12; i++) kv_cache_release(c, kv_cache_insert(c, 1, (uint64_t)i * 4096,
                                                                      &vals[i], 100, count_free));
  assert_int_equal(freed[1], 1);
  assert_int_equal(freed[2], 1);
  assert_int_equal(freed[0], 0);
  assert_null(kv_cache_lookup(c, 1, 4096));
  kv_cache_entry *e3 = kv_cache_lookup(c, 1, 3 * 4096);
  assert_non_null(e3);
  kv_cache_release(c, e3);
  /* Erase the file while entry 0 is held: the others go now, entry 0 at its release. */
  kv_cache_release(c, kv_cache_insert(c, 2, 0, &vals[20], 100, count_free));
  kv_cache_erase_file(c, 1);
  assert_int_equal(freed[5], 1);
  assert_int_equal(freed[0], 0);
  assert_int_equal(*(int *)kv_cache_value(e0), 0);
  assert_null(kv_cache_lookup(c, 1, 0));
  kv_cache_release(c, e0);
  assert_int_equal(freed[0], 1);
  kv_cache_entry *e20 = kv_cache_lookup(c, 2, 0);
  assert_non_null(e20);
  kv_cache_release(c, e20);
  /* Too big for the cache: refused, the caller keeps the value. */
  assert_null(kv_cache_insert(c, 3, 0, &vals[30], 5000, count_free));
  assert_int_equal(freed[30], 0);
  /* Replacing a key frees the old value once unused. */
  kv_cache_entry *a = kv_cache_insert(c, 4, 0, &vals[40], 10, count_free);
  kv_cache_release(c, kv_cache_insert(c, 4, 0, &vals[41], 10, count_free));
  assert_int_equal(freed[40], 0);
  kv_cache_release(c, a);
  assert_int_equal(freed[40], 1);
  kv_cache_entry *b = kv_cache_lookup(c, 4, 0);
  assert_int_equal(*(int *)kv_cache_value(b), 41);
  kv_cache_release(c, b);
  kv_cache_counters k;
  kv_cache_get_counters(c, &k);
  assert_true(k.usage <= 1000);
  assert_int_equal(k.evictions, 3); /* and entry 4 for (2, 0) */
  assert_int_equal(freed[4], 1);
  assert_int_equal(k.hits, 4);
  assert_int_equal(k.misses, 3);
  kv_cache_free(c);
  assert_int_equal(freed[41], 1);
  assert_int_equal(freed[20], 1);
}

typedef struct hammer_arg {
  kv_cache *c;
  uint64_t seed;
  int iters;
  int bad;
} hammer_arg;

static void free_u64(void *v) { free(v); }

static void *hammer(void *p) {
  hammer_arg *a = p;
  uint64_t st = a->seed;
  for (int i = 0; i < a->iters; i++) {
    uint64_t file = tu_below(&st, 4), off = tu_below(&st, 64);
    kv_cache_entry *e = kv_cache_lookup(a->c, file, off);
    if (!e) {
      uint64_t *v = malloc(sizeof *v);
      *v = file * 1000 + off;
      e = kv_cache_insert(a->c, file, off, v, 64 + tu_below(&st, 64), free_u64);
      if (!e) free(v);
    }
    if (e && *(uint64_t *)kv_cache_value(e) != file * 1000 + off) a->bad++;
    if (tu_below(&st, 50) == 0) kv_cache_erase_file(a->c, tu_below(&st, 4));
    kv_cache_release(a->c, e);
  }
  return NULL;
}

static void test_cache_threads(void **state) {
  (void)state;
  uint64_t seed = tu_seed("cache_threads");
  kv_cache *c = kv_cache_new(64 * 40);
  pthread_t th[4];
  hammer_arg args[4];
  for (int i = 0; i < 4; i++) {
    args[i] = (hammer_arg){c, seed + (uint64_t)i, (int)tu_scaled(20000, 2000), 0};
    pthread_create(&th[i], NULL, hammer, &args[i]);
  }
  for (int i = 0; i < 4; i++) pthread_join(th[i], NULL);
  for (int i = 0; i < 4; i++) assert_int_equal(args[i].bad, 0);
  kv_cache_counters k;
  kv_cache_get_counters(c, &k);
  assert_true(k.usage <= k.capacity);
  assert_true(k.evictions > 0);
  kv_cache_free(c);
}

/* Two caches sharing one budget (the block cache and the column cache, kv_cache_share): the
** block cache alone holds the whole budget; the column cache's inserts evict from it until
** the two fit again (but never an entry in use); then the block cache's inserts stay within
** what the column cache leaves; the column cache stays within its own capacity. */
static void test_cache_shared_budget(void **state) {
  (void)state;
  enum { BUDGET = 64 << 20, SMALL = BUDGET / 4, BLOCK = 64 << 10 };
  kv_cache *big = kv_cache_new(BUDGET), *small = kv_cache_new(SMALL);
  assert_non_null(big);
  assert_non_null(small);
  kv_cache_share(big, small);
  kv_cache_counters b, sm;
  /* the whole budget in big: 1,024 blocks of 64 KiB, no eviction (before sharing, big
     would have been given three quarters of it) */
  for (uint64_t i = 0; i < BUDGET / BLOCK; i++) {
    uint64_t *v = malloc(sizeof *v);
    *v = i;
    kv_cache_entry *e = kv_cache_insert(big, 1, i, v, BLOCK, free_u64);
    assert_non_null(e);
    kv_cache_release(big, e);
  }
  kv_cache_get_counters(big, &b);
  assert_int_equal(b.usage, (size_t)BUDGET);
  assert_int_equal(b.evictions, 0);
  /* an entry of big in use while small grows */
  kv_cache_entry *held = kv_cache_lookup(big, 1, 0);
  assert_non_null(held);
  kv_cache_entry *held2 = kv_cache_lookup(big, 1, 16); /* the same shard as block 0 */
  assert_non_null(held2);
  /* small fills its own capacity: big gives way, the two stay within the budget */
  for (uint64_t i = 0; i < 2 * SMALL / BLOCK; i++) {
    uint64_t *v = malloc(sizeof *v);
    *v = 1000 + i;
    kv_cache_entry *e = kv_cache_insert(small, 2, i << 16, v, BLOCK, free_u64);
    assert_non_null(e);
    kv_cache_release(small, e);
    kv_cache_get_counters(big, &b);
    kv_cache_get_counters(small, &sm);
    /* at most the two entries held over (an entry in use is never evicted) */
    assert_true(b.usage + sm.usage <= (size_t)BUDGET + 2 * BLOCK);
    assert_true(sm.usage <= (size_t)SMALL);
  }
  kv_cache_get_counters(small, &sm);
  assert_int_equal(sm.usage, (size_t)SMALL);
  kv_cache_get_counters(big, &b);
  assert_true(b.evictions >= (BUDGET - SMALL) / BLOCK / 4); /* it did give way */
  /* the held entries are still there, values intact */
  assert_int_equal(*(uint64_t *)kv_cache_value(held), 0);
  assert_int_equal(*(uint64_t *)kv_cache_value(held2), 16);
  kv_cache_entry *again = kv_cache_lookup(big, 1, 0);
  assert_ptr_equal(again, held);
  kv_cache_release(big, again);
  kv_cache_release(big, held);
  kv_cache_release(big, held2);
  /* big's own inserts now stay within what small leaves */
  for (uint64_t i = 0; i < BUDGET / BLOCK; i++) {
    uint64_t *v = malloc(sizeof *v);
    *v = 5000 + i;
    kv_cache_entry *e = kv_cache_insert(big, 3, i, v, BLOCK, free_u64);
    assert_non_null(e);
    kv_cache_release(big, e);
  }
  kv_cache_get_counters(big, &b);
  kv_cache_get_counters(small, &sm);
  assert_true(b.usage <= (size_t)(BUDGET - SMALL));
  assert_int_equal(b.usage + sm.usage, (size_t)BUDGET);
  /* small empties (its entries erased): big may take the whole budget again */
  kv_cache_erase_file(small, 2);
  for (uint64_t i = 0; i < BUDGET / BLOCK; i++) {
    uint64_t *v = malloc(sizeof *v);
    *v = 9000 + i;
    kv_cache_entry *e = kv_cache_insert(big, 4, i, v, BLOCK, free_u64);
    assert_non_null(e);
    kv_cache_release(big, e);
  }
  kv_cache_get_counters(big, &b);
  assert_int_equal(b.usage, (size_t)BUDGET);
  kv_cache_free(small);
  kv_cache_free(big);
}

/* The shared budget under threads: two threads hammer each cache; values stay right and,
** once they are done, the two together are within the budget. */
static void test_cache_shared_threads(void **state) {
  (void)state;
  uint64_t seed = tu_seed("cache_shared_threads");
  kv_cache *big = kv_cache_new(64 * 40), *small = kv_cache_new(64 * 10);
  kv_cache_share(big, small);
  pthread_t th[4];
  hammer_arg args[4];
  for (int i = 0; i < 4; i++) {
    args[i] = (hammer_arg){i < 2 ? big : small, seed + (uint64_t)i, (int)tu_scaled(20000, 2000),
                           0};
    pthread_create(&th[i], NULL, hammer, &args[i]);
  }
  for (int i = 0; i < 4; i++) pthread_join(th[i], NULL);
  for (int i = 0; i < 4; i++) assert_int_equal(args[i].bad, 0);
  kv_cache_counters b, sm;
  kv_cache_get_counters(big, &b);
  kv_cache_get_counters(small, &sm);
  assert_true(sm.usage <= sm.capacity);
  /* a last insert into small trims big to what small leaves */
  uint64_t *v = malloc(sizeof *v);
  *v = 7;
  kv_cache_entry *e = kv_cache_insert(small, 9, 0, v, 64, free_u64);
  assert_non_null(e);
  kv_cache_release(small, e);
  kv_cache_get_counters(big, &b);
  kv_cache_get_counters(small, &sm);
  assert_true(b.usage + sm.usage <= b.capacity);
  kv_cache_free(small);
  kv_cache_free(big);
}

/* A file's blocks keyed by their index fill the shards alike: a cache of exactly their
** size holds them all without an eviction (with shards chosen by a hash, some shards drew
** more than their share and evicted while others had room). Two files at once, each a
** whole number of rounds of the shards. */
static void test_cache_shards_fill_alike(void **state) {
  (void)state;
  size_t cap = (size_t)64 << 20, charge = (size_t)128 << 10; /* 16 shards of 4 MiB */
  kv_cache *c = kv_cache_new(cap);
  uint64_t nblocks = cap / charge / 2; /* per file: 256 */
  for (uint64_t b = 0; b < nblocks; b++)
    for (uint64_t file = 11; file <= 12; file++) {
      uint64_t *v = malloc(sizeof *v);
      *v = file * 100000 + b;
      kv_cache_entry *e = kv_cache_insert(c, file, b, v, charge, free_u64);
      assert_non_null(e);
      kv_cache_release(c, e);
    }
  kv_cache_counters k;
  kv_cache_get_counters(c, &k);
  assert_int_equal(k.evictions, 0);
  assert_int_equal(k.usage, cap);
  for (uint64_t b = 0; b < nblocks; b++)
    for (uint64_t file = 11; file <= 12; file++) {
      kv_cache_entry *e = kv_cache_lookup(c, file, b);
      assert_non_null(e);
      assert_int_equal(*(uint64_t *)kv_cache_value(e), file * 100000 + b);
      kv_cache_release(c, e);
    }
  /* one more block evicts exactly one (the least recently used of its shard) */
  uint64_t *v = malloc(sizeof *v);
  *v = 0;
  kv_cache_release(c, kv_cache_insert(c, 13, 0, v, charge, free_u64));
  kv_cache_get_counters(c, &k);
  assert_int_equal(k.evictions, 1);
  kv_cache_free(c);
}

/* Keys whose low 16 bits are one constant (the column cache's block byte offset << 16 |
** column hash) spread over the shards too: a cache with room for all of them keeps every
** one (when the shard came from the low bits alone, all went to one shard, which evicted
** while the other fifteen stayed empty, and a scan of the scaled bench set never hit). */
static void test_cache_shards_high_bits(void **state) {
  (void)state;
  size_t cap = (size_t)16 << 20, charge = (size_t)16 << 10; /* 16 shards of 1 MiB */
  kv_cache *c = kv_cache_new(cap);
  uint64_t rng = tu_seed("cache_shards_high_bits");
  size_t n = cap / charge / 2; /* half the cache: 512 entries */
  uint64_t *keys = malloc(n * sizeof *keys);
  assert_non_null(keys);
  uint64_t off = 0;
  for (size_t i = 0; i < n; i++) {
    keys[i] = (off << 16) | 0xBEEF;
    off += 9000 + tu_below(&rng, 3000); /* blocks of about 10 KB */
    uint64_t *v = malloc(sizeof *v);
    *v = i;
    kv_cache_release(c, kv_cache_insert(c, 7, keys[i], v, charge, free_u64));
  }
  kv_cache_counters k;
  kv_cache_get_counters(c, &k);
  assert_int_equal(k.evictions, 0);
  for (size_t i = 0; i < n; i++) {
    kv_cache_entry *e = kv_cache_lookup(c, 7, keys[i]);
    assert_non_null(e);
    assert_int_equal(*(uint64_t *)kv_cache_value(e), i);
    kv_cache_release(c, e);
  }
  free(keys);
  kv_cache_free(c);
}

/* A hit marks its entry (no relink): an insert into the full cache passes over marked
** entries (unmarking them, to the head) and evicts the oldest unmarked one. */
static void test_cache_second_chance(void **state) {
  (void)state;
  memset(freed, 0, sizeof freed);
  static int vals[64];
  for (int i = 0; i < 64; i++) vals[i] = i;
  kv_cache *c = kv_cache_new(1000); /* one shard, ten entries of 100 bytes */
  for (int i = 0; i < 10; i++)
    kv_cache_release(c, kv_cache_insert(c, 1, (uint64_t)i, &vals[i], 100, count_free));
  for (int i = 0; i < 10; i += 2) { /* hit the even ones (the oldest, 0, among them) */
    kv_cache_entry *e = kv_cache_lookup(c, 1, (uint64_t)i);
    assert_non_null(e);
    kv_cache_release(c, e);
  }
  /* five inserts evict exactly the five never hit, oldest first */
  for (int i = 10; i < 15; i++) {
    kv_cache_release(c, kv_cache_insert(c, 1, (uint64_t)i, &vals[i], 100, count_free));
    for (int j = 0; j < 10; j++)
      assert_int_equal(freed[j], (j & 1) && j <= 2 * (i - 10) + 1 ? 1 : 0);
  }
  for (int j = 0; j < 10; j += 2) {
    kv_cache_entry *e = kv_cache_probe(c, 1, (uint64_t)j);
    assert_non_null(e);
    assert_int_equal(*(int *)kv_cache_value(e), j);
    kv_cache_release(c, e);
  }
  /* every entry is marked now: one insert still evicts exactly one, the least recently
     inserted or passed over (0 went to the head first, before 10) */
  kv_cache_counters k;
  kv_cache_get_counters(c, &k);
  uint64_t ev = k.evictions;
  for (int i = 10; i < 15; i++) {
    kv_cache_entry *e = kv_cache_lookup(c, 1, (uint64_t)i);
    assert_non_null(e);
    kv_cache_release(c, e);
  }
  kv_cache_release(c, kv_cache_insert(c, 1, 20, &vals[20], 100, count_free));
  kv_cache_get_counters(c, &k);
  assert_int_equal(k.evictions, ev + 1);
  assert_int_equal(k.usage, 1000);
  assert_int_equal(freed[0], 1);
  for (int j = 2; j < 15; j += (j < 10 ? 2 : 1)) assert_int_equal(freed[j], 0);
  kv_cache_free(c);
  for (int j = 0; j < 15; j++) assert_int_equal(freed[j], 1);
  assert_int_equal(freed[20], 1);
}

/* kv_cache_probe finds what kv_cache_lookup finds, counting hits but no misses. */
static void test_cache_probe(void **state) {
  (void)state;
  kv_cache *c = kv_cache_new(1 << 20);
  assert_null(kv_cache_probe(c, 1, 5));
  kv_cache_counters k;
  kv_cache_get_counters(c, &k);
  assert_int_equal(k.misses, 0);
  assert_int_equal(k.hits, 0);
  uint64_t *v = malloc(sizeof *v);
  *v = 42;
  kv_cache_release(c, kv_cache_insert(c, 1, 5, v, 100, free_u64));
  kv_cache_entry *e = kv_cache_probe(c, 1, 5);
  assert_non_null(e);
  assert_int_equal(*(uint64_t *)kv_cache_value(e), 42);
  kv_cache_release(c, e);
  assert_null(kv_cache_probe(c, 1, 6));
  assert_null(kv_cache_lookup(c, 2, 5));
  kv_cache_get_counters(c, &k);
  assert_int_equal(k.hits, 1);
  assert_int_equal(k.misses, 1); /* the lookup's only */
  kv_cache_free(c);
}

/* ---- through kv.h -------------------------------------------------------------------- */

static kv_db *open_db(kv_env *env, size_t cache, int trigger) {
  kv_options o;
  kv_options_init(&o);
  o.env = env;
  o.create_if_missing = true;
  o.block_cache_size = cache;
  o.compaction_trigger = trigger;
  kv_db *db = NULL;
  int rc = kv_open("/db", &o, &db);
  if (rc) fprintf(stderr, "kv_open: %s\n", kv_errmsg());
  assert_int_equal(rc, KV_OK);
  return db;
}

static uint32_t make_table(kv_db *db, uint32_t block_size) {
  kv_family_options f = {.name = "f", .block_size = block_size};
  assert_int_equal(kv_create_table(db, "t", &f, 1), KV_OK);
  uint32_t id;
  assert_int_equal(kv_family_id(db, "t", "f", &id), KV_OK);
  return id;
}

static void key_of(uint32_t i, char *buf) { snprintf(buf, 16, "row%08u", i); }

/* Rows [from, from+n) step `step`, value "v<i>" (one commit). */
static void load(kv_db *db, uint32_t fid, uint32_t from, uint32_t n, uint32_t step) {
  kv_batch *b = kv_batch_new();
  for (uint32_t i = from; i < from + n; i += step) {
    char k[16], v[32];
    key_of(i, k);
    int vl = snprintf(v, sizeof v, "v%u-padding-padding", i);
    assert_int_equal(kv_batch_put(b, fid, k, strlen(k), "q", 1, 1000, v, (size_t)vl), KV_OK);
  }
  assert_int_equal(kv_commit(db, b, NULL), KV_OK);
  kv_batch_free(b);
}

/* kv_get of row i: true when found (and the value is checked); *m gets the metrics. */
static bool get_row(kv_db *db, uint32_t fid, uint32_t i, kv_scan_metrics *m) {
  kv_scan_options so = {0};
  so.family_ids = &fid;
  so.n_families = 1;
  char k[16], v[32];
  key_of(i, k);
  kv_scan *s;
  kv_row r;
  int rc = kv_get(db, &so, k, strlen(k), &s, &r);
  if (rc == KV_OK) {
    int vl = snprintf(v, sizeof v, "v%u-padding-padding", i);
    assert_int_equal(r.n_cells, 1);
    assert_int_equal(r.cells[0].value_len, vl);
    assert_memory_equal(r.cells[0].value, v, (size_t)vl);
  } else {
    assert_int_equal(rc, KV_ERR_NOTFOUND);
  }
  kv_scan_get_metrics(s, m);
  kv_scan_close(s);
  return rc == KV_OK;
}

static void test_second_get_makes_no_read(void **state) {
  (void)state;
  kv_env *env = kv_env_mem_new(1000);
  kv_db *db = open_db(env, 0, 100);
  uint32_t fid = make_table(db, 4096);
  load(db, fid, 0, 5000, 1);
  assert_int_equal(kv_flush(db, NULL), KV_OK);
  kv_scan_metrics m;
  kv_env_mem_stats a, b;
  kv_env_mem_get_stats(env, &a);
  assert_true(get_row(db, fid, 2500, &m));
  kv_env_mem_get_stats(env, &b);
  assert_true(b.reads > a.reads); /* the first get reads its block */
  assert_int_equal(m.families[0].blocks_read, 1);
  assert_int_equal(m.families[0].blocks_cache_hit, 0);
  kv_env_mem_get_stats(env, &a);
  assert_true(get_row(db, fid, 2500, &m));
  kv_env_mem_get_stats(env, &b);
  assert_int_equal(b.reads, a.reads); /* the second: no read at all */
  assert_int_equal(b.opens, a.opens);
  assert_int_equal(m.families[0].blocks_read, 1);
  assert_int_equal(m.families[0].blocks_cache_hit, 1);
  assert_int_equal(m.families[0].bytes_read, 0);
  kv_block_cache_stats cs;
  assert_int_equal(kv_block_cache_get_stats(db, &cs), KV_OK);
  assert_int_equal(cs.hits, 1);
  assert_int_equal(cs.misses, 1);
  /* the file's filter is partitioned (5,000 rows) and not mapped: the first get read one
     partition through the cache, counted apart; the second, its block cached, none */
  assert_int_equal(cs.filter_misses, 1);
  assert_int_equal(cs.filter_inserts, 1);
  assert_int_equal(cs.filter_hits, 0);
  assert_int_equal(cs.capacity, (size_t)64 << 20);
  assert_true(cs.usage > 0);
  assert_int_equal(kv_close(db), KV_OK);

  /* With the cache off, the same second get reads again. */
  db = open_db(env, KV_BLOCK_CACHE_OFF, 100);
  assert_int_equal(kv_family_id(db, "t", "f", &fid), KV_OK);
  assert_true(get_row(db, fid, 2500, &m));
  kv_env_mem_get_stats(env, &a);
  assert_true(get_row(db, fid, 2500, &m));
  kv_env_mem_get_stats(env, &b);
  assert_true(b.reads > a.reads);
  assert_int_equal(m.families[0].blocks_cache_hit, 0);
  assert_int_equal(kv_block_cache_get_stats(db, &cs), KV_OK);
  assert_int_equal(cs.hits + cs.misses + cs.capacity, 0);
  assert_int_equal(kv_close(db), KV_OK);
  kv_env_free(env);
}

static void test_compaction_drops_entries(void **state) {
  (void)state;
  kv_env *env = kv_env_mem_new(1000);
  kv_db *db = open_db(env, 0, 100);
  uint32_t fid = make_table(db, 4096);
  for (uint32_t f = 0; f < 3; f++) {
    load(db, fid, f * 2000, 2000, 1);
    assert_int_equal(kv_flush(db, NULL), KV_OK);
  }
  kv_scan_metrics m;
  for (uint32_t i = 0; i < 6000; i += 97) assert_true(get_row(db, fid, i, &m));
  kv_block_cache_stats before, after;
  assert_int_equal(kv_block_cache_get_stats(db, &before), KV_OK);
  assert_true(before.inserts > 10);
  assert_true(before.usage > 0);
  assert_int_equal(kv_compact(db, NULL, true), KV_OK);
  assert_int_equal(kv_block_cache_get_stats(db, &after), KV_OK);
  assert_int_equal(after.erased, before.inserts); /* every block of the inputs left */
  assert_int_equal(after.usage, 0);
  for (uint32_t i = 0; i < 6000; i += 97) assert_true(get_row(db, fid, i, &m));
  assert_false(get_row(db, fid, 7000, &m));
  assert_int_equal(kv_close(db), KV_OK);
  kv_env_free(env);
}

typedef struct scan_arg {
  kv_db *db;
  uint32_t fid;
  uint32_t n;
  int rounds;
  int bad;
} scan_arg;

static void *scan_all(void *p) {
  scan_arg *a = p;
  for (int r = 0; r < a->rounds; r++) {
    kv_scan_options so = {0};
    so.family_ids = &a->fid;
    so.n_families = 1;
    so.reverse = r % 2 == 1;
    kv_scan *s;
    if (kv_scan_open(a->db, &so, &s) != KV_OK) {
      a->bad++;
      continue;
    }
    kv_row row;
    uint32_t got = 0;
    while (kv_scan_next(s, &row) == KV_OK) {
      uint32_t want = so.reverse ? a->n - 1 - got : got;
      char k[16];
      key_of(want, k);
      if (row.key_len != strlen(k) || memcmp(row.key, k, row.key_len) != 0) a->bad++;
      got++;
    }
    if (got != a->n) a->bad++;
    kv_scan_close(s);
  }
  return NULL;
}

static void test_tiny_cache_concurrent_scans(void **state) {
  (void)state;
  kv_env *env = kv_env_mem_new(1000);
  kv_db *db = open_db(env, 16 << 10, 100); /* a handful of (compact) blocks */
  uint32_t fid = make_table(db, 2048);
  uint32_t n = (uint32_t)tu_scaled(8000, 2000);
  load(db, fid, 0, n / 2, 1);
  assert_int_equal(kv_flush(db, NULL), KV_OK);
  load(db, fid, n / 2, n - n / 2, 1);
  assert_int_equal(kv_flush(db, NULL), KV_OK);
  pthread_t th[3];
  scan_arg args[3];
  for (int i = 0; i < 3; i++) {
    args[i] = (scan_arg){db, fid, n, 4, 0};
    pthread_create(&th[i], NULL, scan_all, &args[i]);
  }
  for (int i = 0; i < 3; i++) pthread_join(th[i], NULL);
  for (int i = 0; i < 3; i++) assert_int_equal(args[i].bad, 0);
  kv_block_cache_stats cs;
  assert_int_equal(kv_block_cache_get_stats(db, &cs), KV_OK);
  assert_true(cs.evictions > 0);
  assert_true(cs.usage <= cs.capacity);
  assert_int_equal(kv_close(db), KV_OK);
  kv_env_free(env);
}

/* ---- bloom filters -------------------------------------------------------------------- */

#define NFILES 8

/* NFILES store files, file f holding rows i with i % NFILES == f, so every file's key
** range spans the whole table and only the bloom filter can rule a file out. */
static kv_db *many_files(kv_env *env, uint32_t *fid, uint32_t n) {
  kv_db *db = open_db(env, KV_BLOCK_CACHE_OFF, 100);
  *fid = make_table(db, 1024);
  for (uint32_t f = 0; f < NFILES; f++) {
    load(db, *fid, f, n, NFILES);
    assert_int_equal(kv_flush(db, NULL), KV_OK);
  }
  kv_family_stats st;
  assert_int_equal(kv_family_get_stats(db, *fid, &st), KV_OK);
  assert_int_equal(st.store_files, NFILES);
  return db;
}

static void test_bloom_point_get(void **state) {
  (void)state;
  kv_env *env = kv_env_mem_new(1000);
  uint32_t fid, n = 4000;
  kv_db *db = many_files(env, &fid, n);
  kv_scan_metrics m;
  /* A present row: its own file's block, plus at most a false positive or two. */
  uint64_t present_blocks = 0, absent_blocks = 0;
  for (uint32_t i = 1; i < n; i += 37) {
    assert_true(get_row(db, fid, i, &m));
    assert_true(m.families[0].blocks_read >= 1);
    present_blocks += m.families[0].blocks_read;
  }
  /* Absent rows inside every file's key range (between existing keys: row ids >= n are in
  ** no file; rowNNNNNNNN with a suffix sorts between two rows of every file). */
  kv_env_mem_stats a, b;
  kv_env_mem_get_stats(env, &a);
  uint32_t gets = 0;
  for (uint32_t i = 1; i < n; i += 37, gets++) {
    char k[24];
    snprintf(k, sizeof k, "row%08ux", i);
    kv_scan_options so = {0};
    so.family_ids = &fid;
    so.n_families = 1;
    kv_scan *s;
    kv_row r;
    assert_int_equal(kv_get(db, &so, k, strlen(k), &s, &r), KV_ERR_NOTFOUND);
    kv_scan_get_metrics(s, &m);
    absent_blocks += m.families[0].blocks_read;
    kv_scan_close(s);
  }
  kv_env_mem_get_stats(env, &b);
  /* Without blooms every get would read one block of each of the NFILES files. With 10
  ** bits per key the false positive rate is about 1%: allow 5%. */
  assert_true(absent_blocks * 20 <= (uint64_t)gets * NFILES);
  assert_true(b.reads - a.reads == absent_blocks);
  assert_true(present_blocks <= gets + gets / 4 + 2);
  assert_int_equal(kv_close(db), KV_OK);
  kv_env_free(env);
}

static void test_bloom_multi_key_scan(void **state) {
  (void)state;
  kv_env *env = kv_env_mem_new(1000);
  uint32_t fid, n = 4000;
  kv_db *db = many_files(env, &fid, n);
  /* Single-key ranges for rows of file 0 only (i % NFILES == 0), far apart. */
  enum { NK = 40 };
  char keys[NK][16];
  kv_range ranges[NK];
  for (uint32_t j = 0; j < NK; j++) {
    key_of(j * 96, keys[j]);
    ranges[j] = (kv_range){(const uint8_t *)keys[j], strlen(keys[j]), true,
                           (const uint8_t *)keys[j], strlen(keys[j]), true};
  }
  kv_scan_options so = {0};
  so.family_ids = &fid;
  so.n_families = 1;
  so.ranges = ranges;
  so.n_ranges = NK;
  kv_scan *s;
  assert_int_equal(kv_scan_open(db, &so, &s), KV_OK);
  kv_row r;
  uint32_t got = 0;
  while (kv_scan_next(s, &r) == KV_OK) {
    assert_int_equal(r.key_len, strlen(keys[got]));
    assert_memory_equal(r.key, keys[got], r.key_len);
    got++;
  }
  assert_int_equal(got, NK);
  kv_scan_metrics m;
  kv_scan_get_metrics(s, &m);
  kv_scan_close(s);
  assert_int_equal(m.ranges_sought, NK);
  assert_int_equal(m.families[0].files_opened, NFILES);
  /* File 0 reads about one block per key; the others only on a bloom false positive. */
  uint64_t blocks = m.families[0].blocks_read;
  assert_true(blocks >= NK / 2);
  assert_true(blocks <= NK + NK * NFILES / 10);

  /* The same keys as one scan over a range (no single keys): every file is read. */
  kv_range all = {(const uint8_t *)keys[0], strlen(keys[0]), true,
                  (const uint8_t *)keys[NK - 1], strlen(keys[NK - 1]), true};
  so.ranges = &all;
  so.n_ranges = 1;
  assert_int_equal(kv_scan_open(db, &so, &s), KV_OK);
  while (kv_scan_next(s, &r) == KV_OK) {}
  kv_scan_get_metrics(s, &m);
  kv_scan_close(s);
  assert_true(m.families[0].blocks_read > blocks * 2);
  assert_int_equal(kv_close(db), KV_OK);
  kv_env_free(env);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_cache_lru_and_refs),
    cmocka_unit_test(test_cache_threads),
    cmocka_unit_test(test_cache_shared_budget),
    cmocka_unit_test(test_cache_shared_threads),
    cmocka_unit_test(test_cache_shards_fill_alike),
    cmocka_unit_test(test_cache_shards_high_bits),
    cmocka_unit_test(test_cache_probe),
    cmocka_unit_test(test_cache_second_chance),
    cmocka_unit_test(test_second_get_makes_no_read),
    cmocka_unit_test(test_compaction_drops_entries),
    cmocka_unit_test(test_tiny_cache_concurrent_scans),
    cmocka_unit_test(test_bloom_point_get),
    cmocka_unit_test(test_bloom_multi_key_scan),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
