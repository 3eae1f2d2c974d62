/*
** tests/kv/test_sf_bloom_stream.c: a store file writer told how many rows to expect
** (kv_sf_writer_options.expected_rows) fills its bloom filter as rows come instead of
** keeping every row's hash until finish; the file must not change for it. With the exact
** count the file is byte for byte the one a writer without a count makes: for cells added
** one by one, for segments appended whole (kv_sf_writer_add_seg) from memory and from a
** page file, for a file past KV_SF_HASHES_KEPT rows and one under it. With a bound above
** the count the file reads the same and its filter still answers "may be here" for every
** row; with a count below it, the same. And kv_bloom_alloc + kv_bloom_add give
** kv_bloom_build's bytes. A writer asked for no filter (KV_SF_NO_BLOOM) writes the empty
** one and the same blocks. In-memory env; uses kv/sf/sf.h, kv/sf/sf_seg.h and kv/util/bloom.h.
** Not here: the bloom filter's false-positive rate (tests/kv/test_sf_layout.c).
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "kv/util/bloom.h"
#include "kv/env/env.h"
#include "kv/env/env_mem.h"
#include "kv/kv.h"
#include "kv/sf/sf.h"
#include "kv/sf/sf_seg.h"
#include "testutil.h"

#define SEQ 7u

static void key_of(uint32_t k, uint8_t out[12]) {
  memcpy(out, "row:", 4);
  for (int i = 0; i < 8; i++) out[4 + i] = (uint8_t)('a' + ((k >> (28 - 4 * i)) & 15));
}

/* Row k's cells: one or two (every third row has two qualifiers). */
static int cells_of(uint32_t k, uint8_t key[12], uint8_t val[8], kv_cell c[2]) {
  key_of(k, key);
  memcpy(val, &k, 4);
  memset(val + 4, 0x5a, 4);
  int n = k % 3 == 0 ? 2 : 1;
  for (int i = 0; i < n; i++) {
    c[i] = (kv_cell){key, 12, (const uint8_t *)(i ? "w" : "v"), 1, 1000 + (int64_t)k, SEQ,
                     KV_PUT, val, 8};
  }
  return n;
}

/* How a file is written. */
enum { CELLS, SEGS, PAGED };

/* Write rows [0, n) to path with expected_rows `expect`, as `how`. */
static uint32_t g_bits = 10; /* write_file's bloom_bits_per_key */

static void write_file(kv_env *env, const char *path, uint32_t n, uint64_t expect, int how) {
  kv_sf_writer_options o = {4096, KV_COMPRESSION_LZ4, g_bits, expect};
  kv_sf_writer *w;
  assert_int_equal(kv_sf_writer_open(env, path, &o, &w), KV_OK);
  uint8_t key[12], val[8];
  kv_cell c[2];
  if (how == CELLS) {
    for (uint32_t k = 0; k < n; k++) {
      int m = cells_of(k, key, val, c);
      for (int i = 0; i < m; i++) assert_int_equal(kv_sf_writer_add(w, &c[i]), KV_OK);
    }
  } else { /* segments of 20,000 rows, appended in order (from a page file for PAGED) */
    kv_file *pf = NULL;
    uint64_t base = 0;
    if (how == PAGED) assert_int_equal(env->open(env, "/t/page.run", KV_OPEN_WRITE |
                                                 KV_OPEN_TRUNCATE, &pf), KV_OK);
    kv_sf_writer_options so = {4096, KV_COMPRESSION_LZ4, 10, 0};
    for (uint32_t lo = 0; lo < n; lo += 20000) {
      kv_sf_writer *sw;
      assert_int_equal(kv_sf_seg_open(&so, &sw), KV_OK);
      for (uint32_t k = lo; k < n && k < lo + 20000; k++) {
        int m = cells_of(k, key, val, c);
        for (int i = 0; i < m; i++) assert_int_equal(kv_sf_writer_add(sw, &c[i]), KV_OK);
      }
      kv_sf_seg *s;
      assert_int_equal(kv_sf_seg_finish(sw, &s), KV_OK);
      if (pf) {
        assert_int_equal(kv_sf_seg_page_out(s, env, pf, base), KV_OK);
        assert_true(kv_sf_seg_paged(s));
        base = (uint64_t)kv_env_mem_file_size(env, "/t/page.run");
      }
      assert_int_equal(kv_sf_writer_add_seg(w, s, SEQ), KV_OK);
      kv_sf_seg_free(s);
    }
    if (pf) env->close(pf);
  }
  kv_sf_props p;
  assert_int_equal(kv_sf_writer_finish(w, &p), KV_OK);
  assert_int_equal(p.rows, n);
}

/* The bytes of a file of the in-memory env (malloc'ed), *len its size. */
static uint8_t *file_bytes(kv_env *env, const char *path, size_t *len) {
  int64_t size = kv_env_mem_file_size(env, path);
  assert_true(size > 0);
  uint8_t *p = malloc((size_t)size);
  assert_non_null(p);
  for (int64_t i = 0; i < size; i++)
    assert_int_equal(kv_env_mem_get_byte(env, path, (uint64_t)i, &p[i]), KV_OK);
  *len = (size_t)size;
  return p;
}

/* Every row of the file at path is there (its filter says "may be"), in order. */
static void check_file(kv_env *env, const char *path, uint32_t n) {
  kv_sf_reader *r;
  assert_int_equal(kv_sf_open(env, path, &r), KV_OK);
  uint8_t key[12];
  for (uint32_t k = 0; k < n; k++) {
    key_of(k, key);
    assert_true(kv_sf_may_contain_row(r, key, 12));
  }
  kv_iter *it = kv_sf_iter_new(r, NULL);
  assert_non_null(it);
  uint32_t cells = 0;
  for (it->ops->seek_first(it); it->ops->valid(it); it->ops->next(it)) cells++;
  assert_int_equal(it->ops->status(it), KV_OK);
  assert_int_equal(cells, n + (n + 2) / 3);
  it->ops->destroy(it);
  kv_sf_close(r);
}

/* Files of n rows written as `how` without a count, with the exact count, with a bound
** twice the count and with a count a quarter of it. */
static void same_bytes(uint32_t n, int how) {
  kv_env *env = kv_env_mem_new(1);
  assert_int_equal(env->mkdir(env, "/t"), KV_OK);
  write_file(env, "/t/none.sf", n, 0, how);
  write_file(env, "/t/exact.sf", n, n, how);
  write_file(env, "/t/above.sf", n, 2u * n, how);
  write_file(env, "/t/below.sf", n, n / 4u, how);
  size_t la, lb;
  uint8_t *a = file_bytes(env, "/t/none.sf", &la), *b = file_bytes(env, "/t/exact.sf", &lb);
  assert_int_equal(la, lb);
  assert_memory_equal(a, b, la);
  free(b);
  b = file_bytes(env, "/t/above.sf", &lb);
  if (n > KV_SF_HASHES_KEPT) assert_true(lb > la); /* the larger filter */
  else assert_memory_equal(a, b, la);               /* under it: sized exactly anyway */
  free(a);
  free(b);
  check_file(env, "/t/none.sf", n);
  check_file(env, "/t/exact.sf", n);
  check_file(env, "/t/above.sf", n);
  check_file(env, "/t/below.sf", n);
  env->destroy(env);
}

static void test_cells_big(void **state) {
  (void)state;
  same_bytes(KV_SF_HASHES_KEPT + 30001u, CELLS);
}
static void test_cells_small(void **state) {
  (void)state;
  same_bytes(5000, CELLS);
}
static void test_segments(void **state) {
  (void)state;
  same_bytes(KV_SF_HASHES_KEPT + 30001u, SEGS);
}
static void test_paged_segments(void **state) {
  (void)state;
  same_bytes(KV_SF_HASHES_KEPT + 30001u, PAGED);
}

/* kv_bloom_alloc, then kv_bloom_add of each hash: kv_bloom_build's bytes. */
static void test_bloom_add(void **state) {
  (void)state;
  uint64_t rs = tu_seed("sf_bloom_add");
  size_t sizes[] = {0, 1, 5, 100, 4097};
  uint32_t bits[] = {0, 1, 10, 64};
  for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++)
    for (size_t b = 0; b < sizeof bits / sizeof *bits; b++) {
      uint64_t h[4097];
      for (size_t i = 0; i < sizes[s]; i++) h[i] = tu_rand(&rs);
      uint8_t *x, *y;
      size_t lx, ly;
      assert_int_equal(kv_bloom_build(h, sizes[s], bits[b], &x, &lx), KV_OK);
      assert_int_equal(kv_bloom_alloc(sizes[s], bits[b], &y, &ly), KV_OK);
      for (size_t i = 0; i < sizes[s]; i++) kv_bloom_add(y, h[i]);
      assert_int_equal(lx, ly);
      assert_memory_equal(x, y, lx);
      assert_true(kv_bloom_valid(y, ly));
      for (size_t i = 0; i < sizes[s]; i++) assert_true(kv_bloom_may_contain(y, ly, h[i]));
      free(x);
      free(y);
    }
}

/* KV_SF_NO_BLOOM (the bulk load's runs): a file written cell by cell, from segments and
** from paged-out segments, with or without a row count, reads every cell in order; its
** filter is the empty one (no row "may be here"), and it is the only part that differs
** from the file with a filter (the file is that much smaller). */
static void test_no_bloom(void **state) {
  (void)state;
  static const int hows[] = {CELLS, SEGS, PAGED};
  uint32_t n = KV_SF_HASHES_KEPT + 30001u;
  for (size_t h = 0; h < sizeof hows / sizeof *hows; h++) {
    kv_env *env = kv_env_mem_new(1);
    assert_int_equal(env->mkdir(env, "/t"), KV_OK);
    write_file(env, "/t/bloom.sf", n, 0, hows[h]);
    g_bits = KV_SF_NO_BLOOM;
    write_file(env, "/t/none.sf", n, 0, hows[h]);
    write_file(env, "/t/none_n.sf", n, n, hows[h]);
    g_bits = 10;
    size_t la, lb, lc;
    uint8_t *a = file_bytes(env, "/t/bloom.sf", &la), *b = file_bytes(env, "/t/none.sf", &lb);
    uint8_t *c = file_bytes(env, "/t/none_n.sf", &lc);
    assert_int_equal(lb, lc);
    assert_memory_equal(b, c, lb);
    assert_true(lb < la);
    size_t bloom_len = 5 + ((size_t)n * 10 + 7) / 8, empty_len = 5;
    assert_int_equal(la - lb, bloom_len - empty_len);
    kv_sf_reader *r;
    assert_int_equal(kv_sf_open(env, "/t/none.sf", &r), KV_OK);
    uint8_t key[12];
    for (uint32_t k = 0; k < n; k += 997) {
      key_of(k, key);
      assert_false(kv_sf_may_contain_row(r, key, 12));
    }
    kv_iter *it = kv_sf_iter_new(r, NULL);
    assert_non_null(it);
    uint32_t cells = 0, row = 0, in_row = 0; /* row k: cells_of's one or two cells */
    for (it->ops->seek_first(it); it->ops->valid(it); it->ops->next(it)) {
      const kv_cell *x = it->ops->cell(it);
      key_of(row, key);
      assert_int_equal(x->row_len, 12);
      assert_memory_equal(x->row, key, 12);
      cells++;
      if (++in_row == (row % 3 == 0 ? 2u : 1u)) {
        row++;
        in_row = 0;
      }
    }
    assert_int_equal(row, n);
    assert_int_equal(it->ops->status(it), KV_OK);
    assert_int_equal(cells, n + (n + 2) / 3);
    it->ops->destroy(it);
    kv_sf_close(r);
    free(a);
    free(b);
    free(c);
    env->destroy(env);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_cells_big),      cmocka_unit_test(test_cells_small),
      cmocka_unit_test(test_segments),       cmocka_unit_test(test_paged_segments),
      cmocka_unit_test(test_bloom_add),      cmocka_unit_test(test_no_bloom),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
