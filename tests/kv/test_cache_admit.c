/*
** tests/kv/test_cache_admit.c: block cache admission on the read path (kv/sf/sf_iter.c): a full
** scan that streams through a full cache does not push out the blocks point reads keep
** using (they still hit afterwards), while a cache with room takes the scan's blocks (a second
** scan hits), and a block asked for twice is admitted even when the cache is full. Counts
** come from the scans' metrics and kv_block_cache_get_stats.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "kv/env/env_mem.h"
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

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_scan_keeps_hot_set),
    cmocka_unit_test(test_scan_fills_room),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
