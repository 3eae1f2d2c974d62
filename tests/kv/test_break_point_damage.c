/*
** tests/kv/test_break_point_damage.c: point reads of rows alone (no block cache: the point
** decoder of kv/sf/sf_point.h reads the row asked for and the next from the raw block, and a
** move past them decodes the block whole) on blocks damaged with valid checksums (bytes of
** the raw block overwritten, the block framed again: what a writer's bug would leave, which
** the checksum cannot catch). Each read (kv_get of keys in and between the block's rows,
** a skip scan of one-row ranges that walks on past them, a reverse scan over them) must
** return KV_OK, KV_ERR_NOTFOUND or KV_ERR_CORRUPT naming the block's offset: never a crash,
** an overrun (run under ASan in CI) or a hang. The same with a large cache (blocks decoded
** whole, packed and cached; rows taken whole and as value vectors under a projection).
** Every read touches each byte it was handed. Seeded (tu_seed; the seed is printed).
** Not here: the decoder alone on damaged blocks (test_sf_point.c, fuzz/fuzz_block.c), damage
** the checksum catches (test_corruption.c).
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "kv/db/db_impl.h"
#include "kv/env/env_mem.h"
#include "kv/kv.h"
#include "kv/sf/sf_int.h"
#include "testutil.h"

#define NROWS 40

static size_t row_key(int r, char *out) {
  size_t n = (size_t)sprintf(out, "r%04d", r * 2);
  if (r % 4 == 1) n += (size_t)sprintf(out + n, "-%d", r); /* keys of several lengths */
  return n;
}

static volatile uint64_t sink; /* reads of what came back land here */

/* Read every byte of a row's views and value vectors (ASan sees a bad pointer). True. */
static bool touch(kv_scan *s, const kv_row *row) {
  uint64_t h = 0;
  for (uint32_t i = 0; i < row->key_len; i++) h += row->key[i];
  for (uint32_t c = 0; c < row->n_cells; c++) {
    for (uint32_t i = 0; i < row->cells[c].qual_len; i++) h += row->cells[c].qual[i];
    for (uint32_t i = 0; i < row->cells[c].value_len; i++) h += row->cells[c].value[i];
  }
  uint32_t nv = 0;
  const kv_value_vector *vv = kv_scan_row_vectors(s, &nv);
  for (uint32_t k = 0; k < nv; k++)
    for (uint32_t i = 0; i < 64; i++)
      if (vv[k].present >> i & 1)
        for (uint32_t j = 0; j < vv[k].value_lens[i]; j++) h += vv[k].values[i][j];
  sink += h;
  return true;
}

static void check_rc(uint64_t seed, int it, int rc, const char *what) {
  if (rc == KV_OK || rc == KV_ERR_NOTFOUND) return;
  if (rc != KV_ERR_CORRUPT || !strstr(kv_errmsg(), "offset"))
    fail_msg("seed %llu damage %d: %s gave %d '%s' (want OK, NOTFOUND or CORRUPT naming the "
             "offset)", (unsigned long long)seed, it, what, rc, kv_errmsg());
}

/* The damage run: cache (KV_BLOCK_CACHE_OFF: the point decoder; large: blocks decoded whole
** and cached, rows taken whole), reads with a projection as value vectors or not. seed 0:
** the test's seed (tu_seed), else that one. */
static void run_damage(const char *name, size_t cache, uint64_t fixed) {
  uint64_t seed = fixed ? fixed : tu_seed(name), rs = seed;
  kv_env *env = kv_env_mem_new(1700000000000LL);
  kv_options o;
  kv_options_init(&o);
  o.env = env;
  o.create_if_missing = true;
  o.sync_mode = KV_SYNC_OFF;
  o.compaction_trigger = 100;
  o.block_cache_size = cache;
  kv_db *db;
  assert_int_equal(kv_open("/db", &o, &db), KV_OK);
  kv_family_options f;
  memset(&f, 0, sizeof f);
  f.name = "f";
  f.block_size = 16384; /* every row in block 0 */
  f.max_versions = 2;
  f.compression = KV_COMPRESSION_NONE;
  assert_int_equal(kv_create_table(db, "t", &f, 1), KV_OK);
  uint32_t fid;
  assert_int_equal(kv_family_id(db, "t", "f", &fid), KV_OK);
  kv_batch *b = kv_batch_new();
  assert_non_null(b);
  for (int r = 0; r < NROWS; r++) {
    char key[32], v[32];
    size_t kl = row_key(r, key);
    for (int c = 0; c < 5; c++) {
      char q[4] = {'c', (char)('0' + c), 0, 0};
      if ((r + c) % 4 == 3) continue;
      int vl = c % 2 ? snprintf(v, sizeof v, "v%d.%d", r, c) : 8;
      if (c % 2 == 0) memset(v, 'a' + r % 26, 8);
      for (int64_t ts = 1000; ts <= (r % 3 == 0 ? 1001 : 1000); ts++)
        assert_int_equal(kv_batch_put(b, fid, key, kl, q, 2, ts, v, (size_t)vl), KV_OK);
    }
    if (r % 7 == 3)
      assert_int_equal(kv_batch_delete(b, fid, KV_DELETE_COLUMN, key, kl, "c1", 2, 1000), KV_OK);
  }
  assert_int_equal(kv_commit(db, b, NULL), KV_OK);
  kv_batch_free(b);
  assert_int_equal(kv_flush(db, "t"), KV_OK);
  kv_fam *fam = db->fams[fid];
  assert_int_equal(fam->n_files, 1);
  char path[256];
  snprintf(path, sizeof path, "%s", fam->files[0]->path);
  const kv_sf_index_entry e0 = fam->files[0]->reader->index[0], *e = &e0;
  uint32_t stored = e->size - KV_SF_BLOCK_OVERHEAD;
  uint8_t *orig = malloc(e->size), *raw = malloc(stored);
  assert_non_null(orig);
  assert_non_null(raw);
  for (uint32_t i = 0; i < e->size; i++)
    assert_int_equal(kv_env_mem_get_byte(env, path, e->off + i, &orig[i]), KV_OK);
  assert_int_equal(orig[0], KV_SF_STORED_RAW);
  int n = (int)tu_scaled(400, 80), corrupt = 0;
  for (int it = 0; it < n; it++) {
    memcpy(raw, orig + KV_SF_BLOCK_HEADER, stored);
    int flips = 1 + (int)tu_below(&rs, 3);
    for (int k = 0; k < flips; k++) {
      /* mostly the block's head (counts, layout, dictionary, keys), sometimes anywhere */
      uint32_t at = (uint32_t)tu_below(&rs, tu_below(&rs, 3) ? (stored < 96 ? stored : 96) : stored);
      raw[at] = tu_below(&rs, 2) ? (uint8_t)tu_rand(&rs) : (uint8_t)(raw[at] ^ (1u << tu_below(&rs, 8)));
    }
    kv_sfbuf out = {0};
    assert_int_equal(kv_sf_frame_block(raw, stored, KV_COMPRESSION_NONE, &out), KV_OK);
    assert_int_equal(out.len, e->size);
    for (uint32_t i = 0; i < e->size; i++)
      assert_int_equal(kv_env_mem_set_byte(env, path, e->off + i, out.p[i]), KV_OK);
    kv_sfbuf_free(&out);
    if (cache != KV_BLOCK_CACHE_OFF) { /* a fresh cache: the damaged block is read */
      assert_int_equal(kv_close(db), KV_OK);
      assert_int_equal(kv_open("/db", &o, &db), KV_OK);
    }
    kv_scan_options so;
    memset(&so, 0, sizeof so);
    so.family_ids = &fid;
    so.n_families = 1;
    so.max_versions = (int)tu_below(&rs, 3);
    static const uint8_t *const pq[3] = {(const uint8_t *)"c0", (const uint8_t *)"c1",
                                         (const uint8_t *)"c4"};
    static const uint32_t pl[3] = {2, 2, 2};
    kv_qualifier_set qs = {fid, pq, pl, 1 + (uint32_t)tu_below(&rs, 3)};
    if (tu_below(&rs, 2)) { /* a projection, rows as value vectors when they can be */
      so.qualifiers = &qs;
      so.n_qualifier_sets = 1;
      so.value_vectors = tu_below(&rs, 2);
    }
    bool any_corrupt = false;
    for (int k = 0; k < 4; k++) { /* point reads: present keys and keys between rows */
      char key[32];
      int r = (int)tu_below(&rs, NROWS);
      size_t kl = row_key(r, key);
      if (tu_below(&rs, 3) == 0) key[kl - 1]++;
      kv_scan *s = NULL;
      kv_row row;
      int rc = kv_get(db, &so, key, kl, &s, &row);
      if (rc == KV_OK) touch(s, &row);
      kv_scan_close(s);
      check_rc(seed, it, rc, "kv_get");
      any_corrupt |= rc == KV_ERR_CORRUPT;
    }
    for (int dir = 0; dir < 2; dir++) { /* a skip scan of one-row ranges, both ways */
      char keys[6][2][32];
      kv_range rg[6];
      int r0 = (int)tu_below(&rs, NROWS - 12);
      for (int k = 0; k < 6; k++) {
        size_t kl = row_key(r0 + 2 * k, keys[k][0]);
        memcpy(keys[k][1], keys[k][0], kl);
        keys[k][1][kl] = 0;
        rg[k] = (kv_range){(const uint8_t *)keys[k][0], kl, true, (const uint8_t *)keys[k][1],
                           kl + 1, false};
      }
      so.ranges = rg;
      so.n_ranges = 6;
      so.reverse = dir == 1;
      kv_scan *s = NULL;
      int rc = kv_scan_open(db, &so, &s);
      assert_int_equal(rc, KV_OK);
      kv_row row;
      int rows = 0;
      while ((rc = kv_scan_next(s, &row)) == KV_OK && touch(s, &row))
        if (++rows > 100) fail_msg("seed %llu damage %d: a scan of 6 one-row ranges gave over "
                                   "100 rows", (unsigned long long)seed, it);
      kv_scan_close(s);
      check_rc(seed, it, rc, dir ? "reverse skip scan" : "skip scan");
      any_corrupt |= rc == KV_ERR_CORRUPT;
      so.ranges = NULL;
      so.n_ranges = 0;
      so.reverse = false;
    }
    corrupt += any_corrupt;
  }
  /* the block put back: every row reads again */
  for (uint32_t i = 0; i < e->size; i++)
    assert_int_equal(kv_env_mem_set_byte(env, path, e->off + i, orig[i]), KV_OK);
  assert_int_equal(kv_close(db), KV_OK);
  assert_int_equal(kv_open("/db", &o, &db), KV_OK);
  for (int r = 0; r < NROWS; r++) {
    char key[32];
    size_t kl = row_key(r, key);
    kv_scan_options so;
    memset(&so, 0, sizeof so);
    so.family_ids = &fid;
    so.n_families = 1;
    kv_scan *s = NULL;
    kv_row row;
    assert_int_equal(kv_get(db, &so, key, kl, &s, &row), KV_OK);
    kv_scan_close(s);
  }
  fprintf(stderr, "[%s] %d of %d damages reported as corruption\n", name, corrupt, n);
  assert_true(corrupt > 0); /* the damage reached the reads */
  free(orig);
  free(raw);
  kv_close(db);
  kv_env_free(env);
}

static void damaged_blocks_point_reads(void **state) {
  (void)state;
  run_damage("damaged_blocks_point_reads", KV_BLOCK_CACHE_OFF, 0);
}

/* The same with a large cache: blocks decoded whole, packed and cached (a damaged block is
** read again at every damage: the store is reopened, so the cache starts empty); rows taken
** whole and as value vectors. */
static void damaged_blocks_cached_reads(void **state) {
  (void)state;
  run_damage("damaged_blocks_cached_reads", 64u << 20, 0);
}

/* A damage (seed 47743612340, damage 297) that left a block's rows out of order: a reverse
** skip scan's seek below a range's end found a row above it, which the scan took as the
** next bound and found again at every step (over 100 rows from 6 one-row ranges, without
** end). The scan now reports the block as corrupt (kv/scan/scan.c prev_row). */
static void reverse_scan_rows_out_of_order(void **state) {
  (void)state;
  run_damage("reverse_scan_rows_out_of_order", KV_BLOCK_CACHE_OFF, 47743612340ull);
  run_damage("reverse_scan_rows_out_of_order", 64u << 20, 47743612340ull);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(damaged_blocks_point_reads),
    cmocka_unit_test(damaged_blocks_cached_reads),
    cmocka_unit_test(reverse_scan_rows_out_of_order),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
