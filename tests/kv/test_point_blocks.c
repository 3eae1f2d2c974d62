/*
** tests/kv/test_point_blocks.c: how many store-file blocks a point read (kv_get) touches.
** Writers end blocks at row ends, so every row lies in one block, and a point read must read
** that block alone: not the next block when the row is its block's last (the read knows
** nothing after the row is wanted: kv/sf/sf_iter.c step_fwd), not the block before when the
** row starts its block (the file's block row counts add up to its distinct rows, so no row
** continues from there: kv_sf_row_block). A file where one row does span blocks (longer than
** twice BLOCKSIZE) still answers every row whole, the long one included. Checked with and
** without a block cache, for every row of the file and for keys between rows.
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

#define NROWS 3000
#define LONG_ROW 1500   /* the row that spans blocks in the second file */
#define LONG_CELLS 2000 /* its cells: 2000 x ~10 bytes, over twice the 4 KiB blocks */

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

/* NROWS rows of four cells (row LONG_ROW of LONG_CELLS when long_row), flushed to one store
** file of 4 KiB blocks. */
static uint32_t load(kv_db *db, bool long_row) {
  kv_family_options f = {.name = "f", .block_size = 4096};
  assert_int_equal(kv_create_table(db, "t", &f, 1), KV_OK);
  uint32_t fid;
  assert_int_equal(kv_family_id(db, "t", "f", &fid), KV_OK);
  kv_batch *b = kv_batch_new();
  for (int i = 0; i < NROWS; i++) {
    char k[16], v[16], q[16];
    key_of(i, k);
    snprintf(v, sizeof v, "%08d", i * 7);
    int n = long_row && i == LONG_ROW ? LONG_CELLS : 4;
    for (int c = 0; c < n; c++) {
      snprintf(q, sizeof q, "q%04d", c);
      assert_int_equal(kv_batch_put(b, fid, k, strlen(k), q, strlen(q), 1000, v, 8), KV_OK);
    }
  }
  assert_int_equal(kv_commit(db, b, NULL), KV_OK);
  kv_batch_free(b);
  assert_int_equal(kv_flush(db, NULL), KV_OK);
  return fid;
}

/* kv_get of key k: its cells (0 when not found) and the blocks it touched. */
static uint32_t get(kv_db *db, uint32_t fid, const char *k, uint64_t *blocks) {
  kv_scan_options o;
  memset(&o, 0, sizeof o);
  o.family_ids = &fid;
  o.n_families = 1;
  kv_scan *s = NULL;
  kv_row row;
  int rc = kv_get(db, &o, k, strlen(k), &s, &row);
  assert_true(rc == KV_OK || rc == KV_ERR_NOTFOUND);
  uint32_t cells = rc == KV_OK ? row.n_cells : 0;
  kv_scan_metrics m;
  kv_scan_get_metrics(s, &m);
  *blocks = m.families[0].blocks_read;
  kv_scan_close(s);
  return cells;
}

static int count_block(void *ctx, const kv_file_block *b) {
  (void)b;
  ++*(uint32_t *)ctx;
  return 0;
}

static void every_row_one_block(size_t cache) {
  kv_env *env = kv_env_mem_new(1700000000000LL);
  kv_db *db = open_db(env, cache);
  uint32_t fid = load(db, false), nblocks = 0;
  assert_int_equal(kv_family_blocks(db, fid, count_block, &nblocks), KV_OK);
  assert_true(nblocks > 20); /* many block boundaries, each with a first and a last row */
  for (int pass = 0; pass < 2; pass++) /* the second pass with what the first cached */
    for (int i = 0; i < NROWS; i++) {
      char k[16];
      key_of(i, k);
      uint64_t blocks = 0;
      assert_int_equal(get(db, fid, k, &blocks), 4);
      if (blocks != 1) fail_msg("row %d (pass %d) read %llu blocks", i, pass,
                                (unsigned long long)blocks);
      /* a key between row i and row i + 1 is in no block; it reads at most one */
      char between[20];
      snprintf(between, sizeof between, "%s0", k);
      assert_int_equal(get(db, fid, between, &blocks), 0);
      assert_true(blocks <= 1);
    }
  assert_int_equal(kv_close(db), KV_OK);
  kv_env_free(env);
}

static void test_one_block_no_cache(void **state) {
  (void)state;
  every_row_one_block(0);
}

static void test_one_block_small_cache(void **state) {
  (void)state;
  every_row_one_block(64 << 10);
}

/* A row longer than twice BLOCKSIZE spans blocks: the file's rows are not whole, and point
** reads of it and of its neighbours still answer every cell. */
static void test_row_across_blocks(void **state) {
  (void)state;
  kv_env *env = kv_env_mem_new(1700000000000LL);
  kv_db *db = open_db(env, 64 << 10);
  uint32_t fid = load(db, true);
  for (int pass = 0; pass < 2; pass++)
    for (int i = 0; i < NROWS; i++) {
      char k[16];
      key_of(i, k);
      uint64_t blocks = 0;
      uint32_t want = i == LONG_ROW ? LONG_CELLS : 4;
      assert_int_equal(get(db, fid, k, &blocks), want);
      if (i == LONG_ROW) assert_true(blocks >= 3); /* the long row's blocks, all of them */
    }
  assert_int_equal(kv_close(db), KV_OK);
  kv_env_free(env);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_one_block_no_cache),
    cmocka_unit_test(test_one_block_small_cache),
    cmocka_unit_test(test_row_across_blocks),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
