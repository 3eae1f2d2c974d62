/*
** tests/kv/test_sf_layout.c: what a store file (kv/sf/sf.h) holds besides its cells, and
** damage to it, through the writer and the reader on the in-memory env: blocks ending at
** rows' ends (a row that fits is never cut, a longer one is); the bloom filter (its
** false-positive rate, in a file and in kv/util/bloom.h alone); estimates from the block index
** (with and without block reads, limits, reverse); format versions (2 written with sectioned
** blocks, 1 still read, an unknown one refused); and damage (a flipped byte anywhere, a
** truncated file, a failed write) reported as KV_ERR_CORRUPT with the offset in kv_errmsg().
** Not here: round trips, seeks, order enforcement and rows at once (tests/kv/test_sf.c).
**
** The model is tests/tu_sf.h (a plain sorted array with the test's own comparator).
** Seeded: the seed is printed; ROWAN_SEED reruns it.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <xxhash.h>

#include "kv/util/bloom.h"
#include "kv/env/env_mem.h"
#include "kv/sf/sf.h"
#include "kv/sf/sf_int.h"
#include "testutil.h"
#include "tu_sf.h"

/* ---- Where blocks end ---- */

/* Blocks end at rows' ends: a row whose key, qualifiers and values (with a few bytes a cell
** for its other streams) fit in BLOCKSIZE is never cut between two blocks, whichever way
** its cells come (one by one or as a row), so a point read finds it in one block; a row of
** many times BLOCKSIZE is still cut (a block stays bounded). The cells are the round trip's
** random ones (rows of 1 to 14 cells, values up to 300 bytes). */
static void test_blocks_end_at_rows(void **state) {
  (void)state;
  uint64_t s = tu_seed("sf_row_ends");
  kv_env *env = kv_env_mem_new(1);
  assert_int_equal(env->mkdir(env, "/t"), KV_OK);
  static const uint32_t sizes[] = {512, 2048, 8192};
  for (int round = 0; round < 6; round++) {
    tsf_arena a = {0};
    size_t n = 2000 + tu_below(&s, 4000);
    kv_cell *cells = tsf_random_cells(&s, &a, &n);
    uint32_t bs = sizes[round % 3];
    kv_sf_writer_options o = {bs, round & 1 ? KV_COMPRESSION_LZ4 : KV_COMPRESSION_NONE, 10, 0};
    kv_sf_writer *w;
    assert_int_equal(kv_sf_writer_open(env, "/t/ends.sf", &o, &w), KV_OK);
    tsf_add_cells(w, cells, n, round >= 3);
    assert_int_equal(kv_sf_writer_finish(w, NULL), KV_OK);
    kv_sf_reader *r = NULL;
    assert_int_equal(kv_sf_open(env, "/t/ends.sf", &r), KV_OK);
    assert_true(r->nblocks > 3);
    size_t at = 0, cut_small = 0, cuts = 0;
    for (uint32_t b = 0; b < r->nblocks; b++) {
      if (b > 0 && !tsf_bytes_cmp(cells[at - 1].row, cells[at - 1].row_len, cells[at].row,
                              cells[at].row_len)) { /* the row of cells[at] goes on here */
        size_t r0 = at, r1 = at;
        while (r0 > 0 && !tsf_bytes_cmp(cells[r0 - 1].row, cells[r0 - 1].row_len, cells[at].row,
                                    cells[at].row_len))
          r0--;
        while (r1 < n && !tsf_bytes_cmp(cells[r1].row, cells[r1].row_len, cells[at].row,
                                    cells[at].row_len))
          r1++;
        size_t bytes = cells[at].row_len + 8;
        for (size_t k = r0; k < r1; k++) bytes += cells[k].qual_len + cells[k].value_len + 24;
        cut_small += bytes <= bs;
      }
      at += r->index[b].cells;
    }
    assert_int_equal(at, n);
    assert_int_equal(cut_small, 0);
    kv_sf_close(r);
    /* one row of many times BLOCKSIZE: cut, each block well under the whole row */
    size_t m = 0;
    static uint8_t quals[4000][2];
    kv_cell *row = calloc(4000, sizeof *row);
    assert_non_null(row);
    for (; m < 4000 && m * 12 < (size_t)bs * 6; m++) {
      quals[m][0] = (uint8_t)(m >> 8);
      quals[m][1] = (uint8_t)m;
      row[m] = (kv_cell){(const uint8_t *)"long", 4, quals[m], 2, 7, 1, KV_PUT,
                         (const uint8_t *)"12345678", 8};
    }
    assert_int_equal(kv_sf_writer_open(env, "/t/long.sf", &o, &w), KV_OK);
    tsf_add_cells(w, row, m, round >= 3);
    assert_int_equal(kv_sf_writer_finish(w, NULL), KV_OK);
    assert_int_equal(kv_sf_open(env, "/t/long.sf", &r), KV_OK);
    assert_true(r->nblocks >= 3);
    for (uint32_t b = 0; b < r->nblocks; b++) {
      assert_true(r->index[b].cells < m / 2);
      cuts += b > 0;
    }
    assert_true(cuts >= 2);
    kv_sf_close(r);
    free(row);
    free(cells);
    tsf_arena_free(&a);
  }
  kv_env_free(env);
}

/* ---- The bloom filter and estimates ---- */

static void test_bloom_and_estimate(void **state) {
  (void)state;
  uint64_t s = tu_seed("sf_bloom");
  kv_env *env = kv_env_mem_new(1);
  assert_int_equal(env->mkdir(env, "/t"), KV_OK);
  size_t nrows = tu_scaled(20000, 5000);
  kv_cell *cells = calloc(nrows, sizeof *cells);
  uint8_t *keys = calloc(nrows, 8);
  for (size_t i = 0; i < nrows; i++) {
    uint8_t *k = keys + i * 8;
    for (int j = 0; j < 8; j++) k[j] = (uint8_t)((i * 2) >> (8 * (7 - j))); /* even ids */
    cells[i] = (kv_cell){k, 8, (const uint8_t *)"q", 1, 1, 1, KV_PUT, k, 8};
  }
  kv_sf_props props;
  tsf_write_file(env, "/t/b.sf", cells, nrows, 4096, KV_COMPRESSION_LZ4, &props);
  kv_sf_reader *r;
  assert_int_equal(kv_sf_open(env, "/t/b.sf", &r), KV_OK);
  for (size_t i = 0; i < nrows; i++) assert_true(kv_sf_may_contain_row(r, cells[i].row, 8));
  size_t fp = 0, probes = 50000;
  for (size_t i = 0; i < probes; i++) {
    uint64_t id = (tu_rand(&s) % (4 * nrows)) | 1; /* odd ids are absent */
    uint8_t k[8];
    for (int j = 0; j < 8; j++) k[j] = (uint8_t)(id >> (8 * (7 - j)));
    fp += kv_sf_may_contain_row(r, k, 8);
  }
  double rate = (double)fp / (double)probes;
  fprintf(stderr, "[sf_bloom] false positive rate %.4f at 10 bits/key\n", rate);
  assert_true(rate < 0.02);  /* the design gives about 0.8% */
  /* Estimates from the block index. */
  uint64_t rows, bytes;
  kv_sf_est q = {0};
  kv_sf_estimate(r, &q, &rows, &bytes);
  assert_true(rows >= nrows && rows <= nrows + props.blocks);
  assert_true(bytes > 0 && bytes < props.file_size);
  uint8_t lo[8] = {0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0};
  q.start = lo;
  q.start_len = 8;
  q.start_incl = true;
  kv_sf_estimate(r, &q, &rows, &bytes);  /* past the last key */
  assert_int_equal(rows, 0);
  assert_int_equal(bytes, 0);
  /* A quarter of the keys: the estimate is within a block of the truth at each end. */
  size_t a = nrows / 4, b = nrows / 2;
  q = (kv_sf_est){cells[a].row, 8, true, cells[b].row, 8, true, 0, false, NULL, NULL};
  kv_sf_estimate(r, &q, &rows, &bytes);
  uint64_t per_block = nrows / props.blocks + 1, truth = b - a + 1;
  assert_true(rows + 2 * per_block >= truth && rows <= truth + 2 * per_block);
  /* With block reads allowed, the two cut blocks are counted from their keys: exact, and
     each bound's inclusion is honoured; one read per cut block. */
  uint32_t allow = 8;
  q.exact = &allow;
  kv_sf_estimate(r, &q, &rows, &bytes);
  assert_int_equal(rows, truth);
  assert_true(allow == 6 || allow == 7);
  q.start_incl = false;
  q.end_incl = false;
  kv_sf_estimate(r, &q, &rows, &bytes);
  assert_int_equal(rows, truth - 2);
  /* a range inside one block: one read */
  allow = 8;
  q = (kv_sf_est){cells[a].row, 8, true, cells[a + 2].row, 8, true, 0, false, &allow, NULL};
  kv_sf_estimate(r, &q, &rows, &bytes);
  assert_true(rows == 3 && allow >= 6);
  /* two ranges of one scan in the same block, sharing `counted`: its bytes count once */
  int64_t counted = -1;
  uint64_t b1 = 0, b2 = 0;
  allow = 8;
  q = (kv_sf_est){cells[a].row, 8, true, cells[a].row, 8, true, 0, false, &allow, &counted};
  kv_sf_estimate(r, &q, &rows, &b1);
  assert_true(rows == 1 && b1 > 0 && counted >= 0);
  kv_sf_estimate(r, &q, &rows, &b2);
  assert_int_equal(rows, 1);
  assert_int_equal(b2, 0);
  q.counted = NULL; /* without it, each range counts the block */
  kv_sf_estimate(r, &q, &rows, &b2);
  assert_int_equal(b2, b1);
  /* with a limit, bytes are those of the blocks up to the limit-th row in scan order; in
     reverse, from the range's end */
  uint64_t all_bytes, lim_bytes, rev_bytes, all_rows;
  q = (kv_sf_est){cells[a].row, 8, true, cells[b].row, 8, true, 0, false, NULL, NULL};
  kv_sf_estimate(r, &q, &all_rows, &all_bytes);
  q.limit = 1;
  kv_sf_estimate(r, &q, &rows, &lim_bytes);
  q.reverse = true;
  kv_sf_estimate(r, &q, &rows, &rev_bytes);
  assert_true(lim_bytes > 0 && lim_bytes < all_bytes && rev_bytes > 0 && rev_bytes < all_bytes);
  assert_int_equal(rows, all_rows); /* rows are the range's: the planner caps them */
  kv_sf_close(r);
  free(cells);
  free(keys);
  kv_env_free(env);
}

static void test_bloom_module(void **state) {
  (void)state;
  size_t n = 100000;
  uint64_t *h = malloc(n * sizeof *h);
  for (size_t i = 0; i < n; i++) {
    uint64_t k = i * 7919;
    h[i] = kv_bloom_hash(&k, sizeof k);
  }
  uint8_t *f;
  size_t len;
  assert_int_equal(kv_bloom_build(h, n, 10, &f, &len), KV_OK);
  assert_true(kv_bloom_valid(f, len));
  assert_false(kv_bloom_valid(f, len - 1));
  assert_true(len >= n * 10 / 8);
  for (size_t i = 0; i < n; i++) assert_true(kv_bloom_may_contain(f, len, h[i]));
  size_t fp = 0;
  for (size_t i = 0; i < n; i++) {
    uint64_t k = i * 7919 + 1;
    fp += kv_bloom_may_contain(f, len, kv_bloom_hash(&k, sizeof k));
  }
  double rate = (double)fp / (double)n;
  fprintf(stderr, "[bloom] false positive rate %.4f (100000 keys, 10 bits/key)\n", rate);
  assert_true(rate > 0.002 && rate < 0.02);
  free(f);
  free(h);
}

/* ---- Damage ---- */

static uint64_t get_u64(kv_env *env, const char *path, uint64_t off) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; i--) {
    uint8_t b;
    assert_int_equal(kv_env_mem_get_byte(env, path, off + (uint64_t)i, &b), KV_OK);
    v = (v << 8) | b;
  }
  return v;
}

/* Open and scan the whole file: KV_OK, or the first error met. */
static int open_and_scan(kv_env *env, const char *path, size_t *cells_seen) {
  kv_sf_reader *r;
  int rc = kv_sf_open(env, path, &r);
  *cells_seen = 0;
  if (rc) return rc;
  kv_iter *it = kv_sf_iter_new(r, NULL);
  for (it->ops->seek_first(it); it->ops->valid(it); it->ops->next(it)) (*cells_seen)++;
  rc = it->ops->status(it);
  it->ops->destroy(it);
  kv_sf_close(r);
  return rc;
}

static void flip(kv_env *env, const char *path, uint64_t off, uint8_t mask) {
  uint8_t b;
  assert_int_equal(kv_env_mem_get_byte(env, path, off, &b), KV_OK);
  assert_int_equal(kv_env_mem_set_byte(env, path, off, (uint8_t)(b ^ mask)), KV_OK);
}

/* Set the trailer's format version of a file to v, its checksum made to match. */
static void set_version(kv_env *env, const char *path, uint64_t size, uint32_t v) {
  uint8_t t[136];
  for (int i = 0; i < 136; i++)
    assert_int_equal(kv_env_mem_get_byte(env, path, size - 136 + (uint64_t)i, &t[i]), KV_OK);
  for (int i = 0; i < 4; i++) t[8 + i] = (uint8_t)(v >> (8 * i));
  uint64_t h = XXH3_64bits(t, 128);
  for (int i = 0; i < 8; i++) t[128 + i] = (uint8_t)(h >> (8 * i));
  for (int i = 0; i < 136; i++)
    assert_int_equal(kv_env_mem_set_byte(env, path, size - 136 + (uint64_t)i, t[i]), KV_OK);
}

/* Format versions: files without decimal-scaled value groups (these random values have none;
** tests/kv/test_sf_dec.c writes version 3) are written as version 2, whose large lz4 blocks
** are framed in sections and read back whole (forward, reverse, seeks); a version 1 file (no
** sectioned blocks) still reads; a version the reader does not know is refused by name. */
static void test_format_versions(void **state) {
  (void)state;
  uint64_t s = tu_seed("sf_versions");
  kv_env *env = kv_env_mem_new(1);
  assert_int_equal(env->mkdir(env, "/t"), KV_OK);
  tsf_arena a = {0};
  size_t n = 6000;
  kv_cell *cells = tsf_random_cells(&s, &a, &n);
  kv_sf_props props;
  const char *path = "/t/v.sf";
  tsf_write_file(env, path, cells, n, 32768, KV_COMPRESSION_LZ4, &props);
  assert_int_equal(props.format_version, 2);
  kv_sf_reader *r = NULL;
  assert_int_equal(kv_sf_open(env, path, &r), KV_OK);
  size_t sectioned = 0;
  for (uint32_t b = 0; b < r->props.blocks; b++) {
    uint8_t first;
    assert_int_equal(kv_sf_read_at(r, r->index[b].off, &first, 1), KV_OK);
    sectioned += first == KV_SF_STORED_SECTIONS;
  }
  assert_true(sectioned > 0);
  kv_sf_close(r);
  tsf_check_file(env, path, cells, n, &s, 300);
  /* small blocks are framed whole: the same file as version 1 reads the same */
  tsf_write_file(env, path, cells, n, 1024, KV_COMPRESSION_LZ4, &props);
  set_version(env, path, props.file_size, 1);
  assert_int_equal(kv_sf_open(env, path, &r), KV_OK);
  assert_int_equal(kv_sf_get_props(r)->format_version, 1);
  kv_sf_close(r);
  tsf_check_file(env, path, cells, n, &s, 100);
  set_version(env, path, props.file_size, KV_SF_FORMAT_VERSION + 1);
  assert_int_equal(kv_sf_open(env, path, &r), KV_ERR_CORRUPT);
  assert_non_null(strstr(kv_errmsg(), "unsupported format version"));
  free(cells);
  tsf_arena_free(&a);
  kv_env_free(env);
}

static void test_corruption_sections(void **state) {
  (void)state;
  uint64_t s = tu_seed("sf_corruption");
  kv_env *env = kv_env_mem_new(1);
  assert_int_equal(env->mkdir(env, "/t"), KV_OK);
  tsf_arena a = {0};
  size_t n = 3000;
  kv_cell *cells = tsf_random_cells(&s, &a, &n);
  kv_sf_props props;
  const char *path = "/t/c.sf";
  tsf_write_file(env, path, cells, n, 1024, KV_COMPRESSION_LZ4, &props);
  uint64_t size = props.file_size, toff = size - 136;
  uint64_t index_off = get_u64(env, path, toff + 16), bloom_off = get_u64(env, path, toff + 32);
  size_t seen;
  char want[64];
  /* A byte in a data block: open works, the scan stops with corruption at that block. */
  for (int k = 0; k < 20; k++) {
    uint64_t off = tu_below(&s, bloom_off);
    uint8_t mask = (uint8_t)(1u << tu_below(&s, 8));
    flip(env, path, off, mask);
    assert_int_equal(open_and_scan(env, path, &seen), KV_ERR_CORRUPT);
    assert_true(seen < n);
    assert_non_null(strstr(kv_errmsg(), path));
    assert_non_null(strstr(kv_errmsg(), "block"));
    assert_non_null(strstr(kv_errmsg(), "at offset"));
    flip(env, path, off, mask);
    assert_int_equal(open_and_scan(env, path, &seen), KV_OK);
    assert_int_equal(seen, n);
  }
  /* The bloom filter, the index and the trailer: open fails, naming the offset. */
  struct { uint64_t lo, hi; const char *what; } sec[] = {
    {bloom_off, index_off, "bloom filter at offset"},
    {index_off, toff, "block index at offset"},
    {toff, size, "trailer at offset"},
  };
  for (int i = 0; i < 3; i++) {
    for (int k = 0; k < 10; k++) {
      uint64_t off = sec[i].lo + tu_below(&s, sec[i].hi - sec[i].lo);
      flip(env, path, off, 0x10);
      kv_sf_reader *r = NULL;
      assert_int_equal(kv_sf_open(env, path, &r), KV_ERR_CORRUPT);
      assert_null(r);
      assert_non_null(strstr(kv_errmsg(), sec[i].what));
      if (i < 2) {
        snprintf(want, sizeof want, "offset %llu", (unsigned long long)sec[i].lo);
        assert_non_null(strstr(kv_errmsg(), want));
      }
      flip(env, path, off, 0x10);
    }
  }
  /* Truncation anywhere. */
  const char *copy = "/t/c2.sf";
  for (int k = 0; k < 12; k++) {
    uint64_t cut = k == 0 ? 0 : k == 1 ? size - 1 : k == 2 ? 135 : tu_below(&s, size);
    tsf_write_file(env, copy, cells, n, 1024, KV_COMPRESSION_LZ4, &props);
    assert_int_equal(kv_env_mem_shrink(env, copy, cut), KV_OK);
    assert_int_equal(open_and_scan(env, copy, &seen), KV_ERR_CORRUPT);
    assert_non_null(strstr(kv_errmsg(), "offset"));
  }
  free(cells);
  tsf_arena_free(&a);
  kv_env_free(env);
}

/* Every single byte of a small file is covered by a checksum: flipping any one of them is
** reported as corruption by open or by a full scan, and never goes unnoticed. */
static void test_corruption_every_byte(void **state) {
  (void)state;
  uint64_t s = tu_seed("sf_every_byte");
  kv_env *env = kv_env_mem_new(1);
  assert_int_equal(env->mkdir(env, "/t"), KV_OK);
  tsf_arena a = {0};
  size_t n = 60;
  kv_cell *cells = tsf_random_cells(&s, &a, &n);
  kv_sf_props props;
  for (int comp = 0; comp < 2; comp++) {
    const char *path = "/t/e.sf";
    tsf_write_file(env, path, cells, n, 200, comp ? KV_COMPRESSION_NONE : KV_COMPRESSION_LZ4,
               &props);
    size_t seen;
    for (uint64_t off = 0; off < props.file_size; off++) {
      uint8_t mask = (uint8_t)(1u << tu_below(&s, 8));
      flip(env, path, off, mask);
      int rc = open_and_scan(env, path, &seen);
      if (rc != KV_ERR_CORRUPT)
        fail_msg("flipping byte %llu (mask 0x%02x) of %llu gave %s",
                 (unsigned long long)off, mask, (unsigned long long)props.file_size,
                 kv_status_name(rc));
      assert_non_null(strstr(kv_errmsg(), "offset"));
      flip(env, path, off, mask);
    }
  }
  free(cells);
  tsf_arena_free(&a);
  kv_env_free(env);
}

/* A failed write reaches the caller, and the reader is not fooled by the partial file. */
static void test_write_error(void **state) {
  (void)state;
  kv_env *env = kv_env_mem_new(1);
  assert_int_equal(env->mkdir(env, "/t"), KV_OK);
  uint64_t s = 7;
  tsf_arena a = {0};
  size_t n = 2000;
  kv_cell *cells = tsf_random_cells(&s, &a, &n);
  kv_sf_writer_options o = {256, KV_COMPRESSION_LZ4, 10, 0};
  kv_sf_writer *w;
  assert_int_equal(kv_sf_writer_open(env, "/t/w.sf", &o, &w), KV_OK);
  kv_env_mem_fail(env, KV_FAULT_APPEND, 5, "w.sf", KV_FAULT_ENOSPC, 0);
  int rc = KV_OK;
  size_t i;
  for (i = 0; i < n && !rc; i++) rc = kv_sf_writer_add(w, &cells[i]);
  assert_int_equal(rc, KV_ERR_NOSPC);
  assert_int_equal(kv_sf_writer_add(w, &cells[i]), KV_ERR_NOSPC); /* sticky */
  assert_int_equal(kv_sf_writer_finish(w, NULL), KV_ERR_NOSPC);
  size_t seen;
  assert_int_equal(open_and_scan(env, "/t/w.sf", &seen), KV_ERR_CORRUPT);
  free(cells);
  tsf_arena_free(&a);
  kv_env_free(env);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_blocks_end_at_rows),
    cmocka_unit_test(test_bloom_and_estimate),
    cmocka_unit_test(test_bloom_module),
    cmocka_unit_test(test_format_versions),
    cmocka_unit_test(test_corruption_sections),
    cmocka_unit_test(test_corruption_every_byte),
    cmocka_unit_test(test_write_error),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
