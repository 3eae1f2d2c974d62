/*
** tests/kv/test_cache_admit.c: block cache admission on the read path (kv/sf/sf_iter.c): a full
** scan that streams through a full cache does not push out the blocks point reads keep
** using (they still hit afterwards), while a cache with room takes the scan's blocks (a second
** scan hits), and a block asked for twice is admitted even when the cache is full; a point
** read's block (kv_get) only at its third read, so uniform point reads over more blocks
** than the ghost table holds seldom pay a whole decode; and kv_cache_admit's counts and its
** strict reader's room (seven eighths of a shard that has evicted) on the cache alone, and
** uniform point reads over a working set that fits the cache caching all of it. Counts come from the
** scans' metrics and kv_block_cache_get_stats.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "kv/env/env_mem.h"
#include "kv/kv.h"
#include "kv/util/cache.h"
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

/* NROWS rows of three 8-byte cells and one text cell into table `table`, flushed to a
** store file; returns its family's id. */
static uint32_t load_table(kv_db *db, const char *table) {
  kv_family_options f = {.name = "f", .block_size = 4096};
  assert_int_equal(kv_create_table(db, table, &f, 1), KV_OK);
  uint32_t fid;
  assert_int_equal(kv_family_id(db, table, "f", &fid), KV_OK);
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

static uint32_t load(kv_db *db) { return load_table(db, "t"); }

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

/* In a full cache a point read's block is refused twice (each read decodes its row alone)
** and admitted at the third read; the fourth hits. Before, the second read admitted it, and
** at 3x the archive 6-10% of uniform lookups paid a whole decode for a block seldom read again. */
static void test_point_read_admitted_third(void **state) {
  (void)state;
  kv_env *env = kv_env_mem_new(1700000000000LL);
  kv_db *db = open_db(env, 64 << 10);
  uint32_t fid = load(db), other = load_table(db, "u");
  uint64_t hits, blocks;
  /* a scan of another table fills the cache (its refusals are other keys' asks) */
  full_scan(db, other, &hits, &blocks);
  kv_block_cache_stats st;
  assert_int_equal(kv_block_cache_get_stats(db, &st), KV_OK);
  assert_true(st.usage + st.usage / 8 >= st.capacity); /* full, within a block or two */
  static const int rows[] = {12000, 15000, 19000};
  for (size_t i = 0; i < sizeof rows / sizeof *rows; i++) {
    kv_block_cache_stats b, a;
    assert_int_equal(kv_block_cache_get_stats(db, &b), KV_OK);
    assert_false(get_hit(db, fid, rows[i]));
    assert_int_equal(kv_block_cache_get_stats(db, &a), KV_OK);
    assert_false(get_hit(db, fid, rows[i]));
    assert_int_equal(kv_block_cache_get_stats(db, &a), KV_OK);
    assert_int_equal(a.inserts, b.inserts); /* two reads: nothing inserted */
    assert_false(get_hit(db, fid, rows[i]));
    assert_int_equal(kv_block_cache_get_stats(db, &a), KV_OK);
    assert_int_equal(a.inserts, b.inserts + 1); /* the third read inserted its block */
    assert_true(get_hit(db, fid, rows[i]));
  }
  assert_int_equal(kv_close(db), KV_OK);
  kv_env_free(env);
}

static void nop_free(void *p) { (void)p; }

/* kv_cache_admit alone: a full shard admits at the asks-th ask (the slot forgets the key
** after admitting it); a strict reader (asks 3) takes free room only up to seven eighths of
** a shard that has evicted, a reader asking twice up to the whole; once an ask finds the
** shard below seven eighths it is filling again and the strict reader takes the whole. */
static void test_admit_counts_and_room(void **state) {
  (void)state;
  kv_cache *c = kv_cache_new(8000); /* one shard */
  assert_non_null(c);
  static int v;
  kv_cache_release(c, kv_cache_insert(c, 1, 0, &v, 4000, nop_free));
  kv_cache_release(c, kv_cache_insert(c, 1, 1, &v, 3000, nop_free));
  kv_cache_release(c, kv_cache_insert(c, 1, 2, &v, 2000, nop_free)); /* evicts (1, 0) */
  kv_cache_release(c, kv_cache_insert(c, 1, 3, &v, 1000, nop_free)); /* 6000 of 8000 */
  /* evicted: 1500 more fits the whole share only, not the strict room (7000) */
  assert_false(kv_cache_admit(c, 9, 3, 1500, 3));
  assert_true(kv_cache_admit(c, 9, 2, 1500, 2));
  assert_true(kv_cache_admit(c, 9, 1, 1000, 3)); /* fits 7000: the shard is filling again */
  assert_true(kv_cache_admit(c, 9, 4, 1500, 3)); /* so the strict reader takes the whole */
  kv_cache_release(c, kv_cache_insert(c, 1, 4, &v, 2000, nop_free)); /* now full */
  for (unsigned asks = 2; asks <= 4; asks++) {
    uint64_t off = 100 + asks;
    for (unsigned k = 1; k < asks; k++) assert_false(kv_cache_admit(c, 9, off, 10, asks));
    assert_true(kv_cache_admit(c, 9, off, 10, asks));
    assert_false(kv_cache_admit(c, 9, off, 10, asks)); /* admitted: counted afresh */
  }
  kv_cache_free(c);
}

/* Uniform point reads (asks 3) over a working set that fits in the cache but takes more
** than seven eighths of it, far more blocks than the ghost table holds: every block is
** cached in the end (before, the shard's last eighth took a block only at its third ask
** in a row on its ghost slot, and about a tenth of the set stayed out). */
static void test_point_reads_fill_cache(void **state) {
  (void)state;
  kv_cache *c = kv_cache_new((size_t)4 << 20); /* one shard of 4 MiB */
  assert_non_null(c);
  static int v;
  const size_t charge = 512;
  const uint32_t w = (uint32_t)(((size_t)4 << 20) / charge * 31 / 32); /* 31/32 of it */
  uint64_t x = tu_seed("test_point_reads_fill_cache") | 1;
  for (uint64_t r = 0; r < (uint64_t)w * 24; r++) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    uint64_t b = x % w;
    kv_cache_entry *e = kv_cache_lookup(c, 1, b);
    if (!e && kv_cache_admit(c, 1, b, charge, 3)) e = kv_cache_insert(c, 1, b, &v, charge, nop_free);
    kv_cache_release(c, e);
  }
  uint32_t resident = 0;
  for (uint32_t b = 0; b < w; b++) {
    kv_cache_entry *e = kv_cache_probe(c, 1, b);
    resident += e != NULL;
    kv_cache_release(c, e);
  }
  assert_int_equal(resident, w);
  kv_cache_free(c);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_scan_keeps_hot_set),
    cmocka_unit_test(test_scan_fills_room),
    cmocka_unit_test(test_point_read_admitted_third),
    cmocka_unit_test(test_admit_counts_and_room),
    cmocka_unit_test(test_point_reads_fill_cache),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
