/*
** tests/kv/test_cache_admit.c: block cache admission on the read path (kv/sf_iter.c): a full
** scan that streams through a full cache does not push out the blocks point reads keep
** using (they still hit afterwards), while a cache with room takes the scan's blocks (a second
** scan hits), and a block asked for twice is admitted even when the cache is full. Counts
** come from the scans' metrics and kv_block_cache_get_stats.
** kv_cache_admit on its own: in a full cache, a key is admitted once it has been asked for
** (missed or hit) more often lately than the entry an insert would evict, never on its
** first miss, and the counts age, so a key hit often long ago gives way to one asked often
** now.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "kv/cache.h"
#include "kv/env_mem.h"
#include "kv/kv.h"
#include "testutil.h"

#define NROWS 20000

static kv_db *open_db(kv_env *env, size_t cache) {
  kv_options o;
  kv_options_init(&o);
  o.env = env;
  o.create_if_missing = true;
  o.block_cache_size = cache;
  kv_db *db = NULL;
  assert_int_equal(kv_open("/db", &o, &db), KV_OK);
  return db;
}

static void key_of(int i, char *k) { snprintf(k, 16, "row%06d", i); }

/* NROWS rows of three 8-byte cells and one text cell, flushed to a store file. */
static uint32_t load(kv_db *db) {
  kv_family_options f = {.name = "f", .block_size = 4096};
  assert_int_equal(kv_create_table(db, "t", &f, 1), KV_OK);
  uint32_t fid;
  assert_int_equal(kv_family_id(db, "t", "f", &fid), KV_OK);
  kv_batch *b = kv_batch_new();
  for (int i = 0; i < NROWS; i++) {
    char k[16], v[16];
    key_of(i, k);
    snprintf(v, sizeof v, "%08d", i * 3);
    for (int q = 0; q < 3; q++)
      assert_int_equal(kv_batch_put(b, fid, k, strlen(k), q == 0 ? "a" : q == 1 ? "b" : "c", 1,
                                    1000, v, 8), KV_OK);
    assert_int_equal(kv_batch_put(b, fid, k, strlen(k), "d", 1, 1000, "text", 1 + i % 4),
                     KV_OK);
    if (kv_batch_count(b) > 20000) {
      assert_int_equal(kv_commit(db, b, NULL), KV_OK);
      kv_batch_clear(b);
    }
  }
  assert_int_equal(kv_commit(db, b, NULL), KV_OK);
  kv_batch_free(b);
  assert_int_equal(kv_flush(db, NULL), KV_OK);
  return fid;
}

/* kv_get of row i; returns whether its block came from the cache. */
static bool get_hit(kv_db *db, uint32_t fid, int i) {
  kv_scan_options o;
  memset(&o, 0, sizeof o);
  o.family_ids = &fid;
  o.n_families = 1;
  char k[16];
  key_of(i, k);
  kv_scan *s = NULL;
  kv_row row;
  assert_int_equal(kv_get(db, &o, k, strlen(k), &s, &row), KV_OK);
  assert_int_equal(row.n_cells, 4);
  kv_scan_metrics m;
  kv_scan_get_metrics(s, &m);
  kv_scan_close(s);
  return m.families[0].blocks_cache_hit == m.families[0].blocks_read &&
         m.families[0].blocks_read > 0;
}

/* A full scan; its cache hits and blocks read. */
static void full_scan(kv_db *db, uint32_t fid, uint64_t *hits, uint64_t *blocks) {
  kv_scan_options o;
  memset(&o, 0, sizeof o);
  o.family_ids = &fid;
  o.n_families = 1;
  kv_scan *s = NULL;
  assert_int_equal(kv_scan_open(db, &o, &s), KV_OK);
  kv_row row;
  int n = 0, rc;
  while ((rc = kv_scan_next(s, &row)) == KV_OK) n++;
  assert_int_equal(rc, KV_ERR_NOTFOUND);
  assert_int_equal(n, NROWS);
  kv_scan_metrics m;
  kv_scan_get_metrics(s, &m);
  *hits = m.families[0].blocks_cache_hit;
  *blocks = m.families[0].blocks_read;
  kv_scan_close(s);
}

static void test_scan_keeps_hot_set(void **state) {
  (void)state;
  kv_env *env = kv_env_mem_new(1700000000000LL);
  kv_db *db = open_db(env, 64 << 10); /* far less than the table */
  uint32_t fid = load(db);
  /* point reads of a few rows, twice: their blocks are admitted and then hit */
  static const int hot[] = {5, 4000, 9000, 15000, 19990};
  for (int r = 0; r < 3; r++)
    for (size_t i = 0; i < sizeof hot / sizeof *hot; i++) (void)get_hit(db, fid, hot[i]);
  for (size_t i = 0; i < sizeof hot / sizeof *hot; i++) assert_true(get_hit(db, fid, hot[i]));
  kv_block_cache_stats before, after;
  assert_int_equal(kv_block_cache_get_stats(db, &before), KV_OK);
  uint64_t hits, blocks;
  full_scan(db, fid, &hits, &blocks);
  full_scan(db, fid, &hits, &blocks);
  assert_int_equal(kv_block_cache_get_stats(db, &after), KV_OK);
  assert_true(blocks > 100);                 /* the table is many times the cache */
  assert_true(after.usage <= after.capacity);
  /* the hot rows' blocks are still there */
  for (size_t i = 0; i < sizeof hot / sizeof *hot; i++) assert_true(get_hit(db, fid, hot[i]));
  assert_int_equal(kv_close(db), KV_OK);
  kv_env_free(env);
}

static void test_scan_fills_room(void **state) {
  (void)state;
  kv_env *env = kv_env_mem_new(1700000000000LL);
  kv_db *db = open_db(env, 64 << 20); /* room for everything */
  uint32_t fid = load(db);
  uint64_t hits, blocks;
  full_scan(db, fid, &hits, &blocks);
  assert_int_equal(hits, 0);
  full_scan(db, fid, &hits, &blocks);
  assert_int_equal(hits, blocks); /* the first scan cached every block */
  kv_block_cache_stats st;
  assert_int_equal(kv_block_cache_get_stats(db, &st), KV_OK);
  assert_int_equal(st.evictions, 0);
  fprintf(stderr, "[cache_admit] %llu blocks, %zu bytes charged for %d rows (%.1f B/row)\n",
          (unsigned long long)blocks, st.usage, NROWS, (double)st.usage / NROWS);
  assert_int_equal(kv_close(db), KV_OK);
  kv_env_free(env);
}

static void noop_free(void *v) { (void)v; }

/* Look key k of file 1 up n times, releasing each hit; returns the hits. */
static int ask(kv_cache *c, uint64_t k, int n) {
  int hits = 0;
  for (int i = 0; i < n; i++) {
    kv_cache_entry *e = kv_cache_lookup(c, 1, k);
    if (e) hits++;
    kv_cache_release(c, e);
  }
  return hits;
}

static void test_admit_by_frequency(void **state) {
  (void)state;
  static int val;
  kv_cache *c = kv_cache_new(1000); /* one shard: ten entries of 100 bytes */
  for (uint64_t k = 0; k < 10; k++) {
    assert_true(kv_cache_admit(c, 1, k, 100)); /* room: admitted at once */
    kv_cache_release(c, kv_cache_insert(c, 1, k, &val, 100, noop_free));
  }
  assert_false(kv_cache_admit(c, 1, 10, 100)); /* full: a first miss is never admitted */
  for (uint64_t k = 0; k < 10; k++) assert_int_equal(ask(c, k, 3), 3);
  /* key 10 is admitted once asked for more often than the victim (asked 4 times), by more
     than one ask */
  int asks = 1;
  while (!kv_cache_admit(c, 1, 10, 100)) {
    asks++;
    assert_true(asks < 10);
  }
  assert_true(asks >= 5); /* refused while asked for 5 times or fewer */
  kv_cache_release(c, kv_cache_insert(c, 1, 10, &val, 100, noop_free));
  kv_cache_counters cnt;
  kv_cache_get_counters(c, &cnt);
  assert_int_equal(cnt.evictions, 1);
  assert_int_equal(ask(c, 10, 1), 1);
  /* keys asked for once each, many of them (a scan), are not admitted over a hot set still
     in use (here each key asked for once per ten scan keys) */
  for (uint64_t x = 100; x < 20100; x++) {
    assert_false(kv_cache_admit(c, 1, x, 100));
    if (x % 10 == 0) (void)ask(c, x / 10 % 11, 1);
  }
  int kept = 0;
  for (uint64_t k = 0; k <= 10; k++) kept += ask(c, k, 1);
  assert_int_equal(kept, 10); /* every key of the hot set but the one evicted for key 10 */
  /* nor over one no longer in use, while its counts last; once they have aged away (many
     keys counted since), a key asked for a few times gets in */
  for (uint64_t x = 30000; x < 60000; x++) (void)kv_cache_admit(c, 1, x, 100);
  int later = 1;
  while (!kv_cache_admit(c, 1, 90000, 100)) {
    later++;
    assert_true(later < 4);
  }
  /* per byte: a key asked for as often as the victim but a tenth of its size gets in */
  kv_cache *d = kv_cache_new(1000);
  for (uint64_t k = 0; k < 10; k++) {
    assert_true(kv_cache_admit(d, 1, k, 100));
    kv_cache_release(d, kv_cache_insert(d, 1, k, &val, 100, noop_free));
  }
  for (uint64_t k = 0; k < 10; k++) assert_int_equal(ask(d, k, 2), 2); /* each asked 3 times */
  assert_false(kv_cache_admit(d, 1, 77, 100));
  assert_false(kv_cache_admit(d, 1, 77, 100));
  assert_false(kv_cache_admit(d, 1, 77, 100)); /* as often as the victim: not more */
  assert_true(kv_cache_admit(d, 1, 78, 10) || kv_cache_admit(d, 1, 78, 10));
  kv_cache_free(d);
  kv_cache_free(c);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_scan_keeps_hot_set),
    cmocka_unit_test(test_scan_fills_room),
    cmocka_unit_test(test_admit_by_frequency),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
