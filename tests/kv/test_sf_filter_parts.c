/*
** tests/kv/test_sf_filter_parts.c: the partitioned bloom filter of store files (format
** version 4, kv/sf/sf_filter.h). A file past one partition's keys gets version 4 and a
** filter of partitions cut at block boundaries, whether its cells came one by one or as
** segments appended whole, from memory or from a page file (the same bytes either way);
** every row is "may be here" (no false negative, also for rows spanning blocks), absent
** rows mostly are not; a small file keeps the single filter of version 2. Probes read
** their partition in place from a mapped file, through the block cache (one insert, then
** hits), or with a pread; a damaged byte of the filter section fails the open naming it,
** and a salvage open goes on without the filter. A writer asked for no filter writes the
** empty one and the same blocks. A writer bounded by spill_bytes writes the same bytes, and
** fails cleanly (sticky, no spill file left) when its spill file cannot be written.
** In-memory env; uses kv/sf/sf.h, kv/sf/sf_seg.h and the reader's fields (kv/sf/sf_int.h).
** Not here: the single filter's false-positive rate (tests/kv/test_sf_layout.c).
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "kv/env/env.h"
#include "kv/env/env_mem.h"
#include "kv/kv.h"
#include "kv/sf/sf.h"
#include "kv/sf/sf_filter.h"
#include "kv/sf/sf_int.h"
#include "kv/sf/sf_seg.h"
#include "kv/util/cache.h"
#include "kv/util/coding.h"
#include "testutil.h"

#define SEQ 7u
#define BIG 95537u   /* rows of a file of many partitions */
#define SMALL 2000u  /* rows of a file of one (fewer than a partition's keys) */

static void key_of(uint32_t k, uint8_t out[12]) {
  memcpy(out, "row:", 4);
  for (int i = 0; i < 8; i++) out[4 + i] = (uint8_t)('a' + ((k >> (28 - 4 * i)) & 15));
}

static uint8_t g_big[1500]; /* the value of a long row's cells */

/* Row k's cells: one or two (every third row has two qualifiers); with `long_rows`, every
** 97th row (keys are even) has 12 cells of 1,500 bytes, more than twice the 4 KiB block: it
** spans blocks. */
static int cells_of(uint32_t k, bool long_rows, uint8_t key[12], uint8_t val[8], kv_cell c[12]) {
  key_of(k, key);
  memcpy(val, &k, 4);
  memset(val + 4, 0x5a, 4);
  static const char *quals = "abcdefghijkl";
  if (long_rows && k % 194 == 0) {
    for (int i = 0; i < 12; i++)
      c[i] = (kv_cell){key, 12, (const uint8_t *)quals + i, 1, 1000 + (int64_t)k, SEQ, KV_PUT,
                       g_big, sizeof g_big};
    return 12;
  }
  int n = k % 3 == 0 ? 2 : 1;
  for (int i = 0; i < n; i++)
    c[i] = (kv_cell){key, 12, (const uint8_t *)(i ? "w" : "v"), 1, 1000 + (int64_t)k, SEQ,
                     KV_PUT, val, 8};
  return n;
}

static uint32_t cells_in(uint32_t n, bool long_rows) {
  uint32_t cells = 0;
  uint8_t key[12], val[8];
  kv_cell c[12];
  for (uint32_t k = 0; k < n; k++) cells += (uint32_t)cells_of(k, long_rows, key, val, c);
  return cells;
}

/* How a file is written. */
enum { CELLS, SEGS, PAGED };

static uint32_t g_bits = 10;  /* write_file's bloom_bits_per_key */
static uint32_t g_spill = 0;  /* its spill_bytes (0: 1 MiB, more than these files hold) */

/* Write rows [0, n) of even keys (k * 2: the odd ones are absent) to path, as `how`. */
static void write_file(kv_env *env, const char *path, uint32_t n, bool long_rows, int how) {
  kv_sf_writer_options o = {4096, KV_COMPRESSION_LZ4, g_bits, g_spill};
  kv_sf_writer *w;
  assert_int_equal(kv_sf_writer_open(env, path, &o, &w), KV_OK);
  uint8_t key[12], val[8];
  kv_cell c[12];
  if (how == CELLS) {
    for (uint32_t k = 0; k < n; k++) {
      int m = cells_of(2 * k, long_rows, key, val, c);
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
        int m = cells_of(2 * k, long_rows, key, val, c);
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

/* Files a and b of the in-memory env hold the same bytes. */
static void same_files(kv_env *env, const char *a, const char *b) {
  size_t la, lb;
  uint8_t *pa = file_bytes(env, a, &la), *pb = file_bytes(env, b, &lb);
  assert_int_equal(la, lb);
  assert_memory_equal(pa, pb, la);
  free(pa);
  free(pb);
}

/* The trailer's bloom_off and bloom_size of a file's bytes. */
static void bloom_section(const uint8_t *f, size_t len, uint64_t *off, uint64_t *size) {
  const uint8_t *t = f + len - KV_SF_TRAILER_SIZE;
  *off = kv_get_u64le(t + 32);
  *size = kv_get_u64le(t + 40);
}

/* Every row of the file is "may be here", in order, all its cells read; of the absent odd
** keys at most 2% are (10 bits a key: about 1%). Returns the reader's partitions. */
static uint32_t check_file(kv_env *env, const char *path, uint32_t n, bool long_rows) {
  kv_sf_reader *r;
  assert_int_equal(kv_sf_open(env, path, &r), KV_OK);
  uint8_t key[12];
  uint32_t fp = 0;
  for (uint32_t k = 0; k < n; k++) {
    key_of(2 * k, key);
    assert_true(kv_sf_may_contain_row(r, key, 12));
    key_of(2 * k + 1, key);
    fp += kv_sf_may_contain_row(r, key, 12);
  }
  assert_true(fp <= n / 50);
  kv_iter *it = kv_sf_iter_new(r, NULL);
  assert_non_null(it);
  uint32_t cells = 0;
  for (it->ops->seek_first(it); it->ops->valid(it); it->ops->next(it)) cells++;
  assert_int_equal(it->ops->status(it), KV_OK);
  uint8_t k0[12], v0[8];
  kv_cell c[12];
  uint32_t want = 0;
  for (uint32_t k = 0; k < n; k++) want += (uint32_t)cells_of(2 * k, long_rows, k0, v0, c);
  assert_int_equal(cells, want);
  it->ops->destroy(it);
  uint32_t parts = r->nfparts;
  if (parts) assert_null(r->bloom); /* no filter bits kept: the partition index only */
  kv_sf_close(r);
  return parts;
}

/* Files of n rows written cell by cell, from segments and from paged-out segments: each
** reads back whole with no false negative; past one partition (and a block), version 4 with
** about n / (partition keys) partitions, else version 2 with the single filter; the two
** segment files are the same bytes (a page file changes nothing). */
static void same_bytes(uint32_t n, bool long_rows) {
  kv_env *env = kv_env_mem_new(1);
  assert_int_equal(env->mkdir(env, "/t"), KV_OK);
  static const char *const paths[] = {"/t/cells.sf", "/t/segs.sf", "/t/paged.sf"};
  uint32_t per = KV_SF_FILTER_PART_BYTES * 8u / 10u;
  for (int how = CELLS; how <= PAGED; how++) {
    write_file(env, paths[how], n, long_rows, how);
    size_t la;
    uint8_t *a = file_bytes(env, paths[how], &la);
    uint32_t version = kv_get_u32le(a + la - KV_SF_TRAILER_SIZE + 8);
    uint32_t parts = check_file(env, paths[how], n, long_rows);
    if (n > per + 300) { /* past a partition and a block's rows */
      assert_int_equal(version, 4);
      assert_true(parts >= n / (per + 300)); /* each at least per keys, at most a block more */
      assert_true(parts <= n / per + 1);
    } else {
      assert_int_equal(version, 2);
      assert_int_equal(parts, 0);
    }
    free(a);
  }
  same_files(env, "/t/segs.sf", "/t/paged.sf");
  env->destroy(env);
}

static void test_big(void **state) {
  (void)state;
  same_bytes(BIG, false);
}
static void test_long_rows(void **state) {
  (void)state;
  memset(g_big, 0x33, sizeof g_big);
  same_bytes(BIG, true);
}
static void test_small(void **state) {
  (void)state;
  same_bytes(SMALL, false);
}

/* Probes answer alike read in place from a mapping, through a cache and with a pread; the
** cache gets one entry per partition probed and answers the next probe of it. */
static void test_probe_paths(void **state) {
  (void)state;
  kv_env *env = kv_env_mem_new(1);
  assert_int_equal(env->mkdir(env, "/t"), KV_OK);
  write_file(env, "/t/f.sf", BIG, false, CELLS);
  kv_sf_reader *plain, *cached, *mapped;
  assert_int_equal(kv_sf_open(env, "/t/f.sf", &plain), KV_OK);
  assert_int_equal(kv_sf_open(env, "/t/f.sf", &cached), KV_OK);
  kv_cache *cache = kv_cache_new(64u << 20);
  assert_non_null(cache);
  kv_sf_set_cache(cached, cache, 9);
  kv_env_mem_set_map(env, true);
  assert_int_equal(kv_sf_open(env, "/t/f.sf", &mapped), KV_OK);
  assert_non_null(mapped->map);
  assert_null(plain->map);
  assert_true(plain->nfparts > 1);
  uint8_t key[12];
  for (uint32_t k = 0; k < 2 * BIG + 10; k += 7) {
    key_of(k, key);
    bool a = kv_sf_may_contain_row(plain, key, 12);
    assert_int_equal(kv_sf_may_contain_row(cached, key, 12), a);
    assert_int_equal(kv_sf_may_contain_row(mapped, key, 12), a);
    if (k % 2 == 0 && k < 2 * BIG) assert_true(a);
  }
  kv_cache_counters ct;
  kv_cache_get_counters(cache, &ct);
  assert_int_equal(ct.meta_inserts, plain->nfparts); /* every partition once */
  assert_int_equal(ct.meta_misses, plain->nfparts);
  assert_true(ct.meta_hits > 0);
  assert_int_equal(ct.inserts + ct.hits + ct.misses, 0); /* no block's counters */
  key_of(0, key);
  uint64_t hits = ct.meta_hits;
  assert_true(kv_sf_may_contain_row(cached, key, 12));
  kv_cache_get_counters(cache, &ct);
  assert_int_equal(ct.meta_hits, hits + 1);
  assert_int_equal(ct.meta_inserts, plain->nfparts);
  kv_sf_close(plain);
  kv_sf_close(cached);
  kv_sf_close(mapped);
  kv_cache_free(cache);
  env->destroy(env);
}

/* A byte changed anywhere in the partitioned filter section (a sample of offsets: the
** partitions, their index, its length) fails the open, naming the bloom filter; a salvage
** open of the same file goes on without a filter (every probe then "may be"). */
static void test_damage(void **state) {
  (void)state;
  kv_env *env = kv_env_mem_new(1);
  assert_int_equal(env->mkdir(env, "/t"), KV_OK);
  write_file(env, "/t/f.sf", BIG, false, CELLS);
  size_t len;
  uint8_t *f = file_bytes(env, "/t/f.sf", &len);
  uint64_t off, size;
  bloom_section(f, len, &off, &size);
  uint64_t at[] = {off, off + 1, off + 5, off + 600, off + size / 2, off + size - 40,
                   off + size - 5, off + size - 4, off + size - 1};
  for (size_t i = 0; i < sizeof at / sizeof *at; i++) {
    assert_int_equal(kv_env_mem_set_byte(env, "/t/f.sf", at[i], f[at[i]] ^ 0x41), KV_OK);
    kv_sf_reader *r = NULL;
    assert_int_equal(kv_sf_open(env, "/t/f.sf", &r), KV_ERR_CORRUPT);
    assert_null(r);
    assert_non_null(strstr(kv_errmsg(), "bloom filter"));
    kv_sf_salvage_info info;
    assert_int_equal(kv_sf_open_salvage(env, "/t/f.sf", &r, &info), KV_OK);
    assert_true(info.trailer_ok);
    assert_false(info.bloom_ok);
    assert_true(info.index_ok);
    assert_int_equal(r->nfparts, 0);
    kv_sf_close(r);
    assert_int_equal(kv_env_mem_set_byte(env, "/t/f.sf", at[i], f[at[i]]), KV_OK);
  }
  kv_sf_reader *r;
  assert_int_equal(kv_sf_open(env, "/t/f.sf", &r), KV_OK); /* restored */
  kv_sf_close(r);
  free(f);
  env->destroy(env);
}

/* KV_SF_NO_BLOOM (the bulk load's runs): a file written cell by cell, from segments and
** from paged-out segments reads every cell in order; its filter is the empty one (no row
** "may be here"), the only part that differs from the file with a filter. */
static void test_no_bloom(void **state) {
  (void)state;
  static const int hows[] = {CELLS, SEGS, PAGED};
  for (size_t h = 0; h < sizeof hows / sizeof *hows; h++) {
    kv_env *env = kv_env_mem_new(1);
    assert_int_equal(env->mkdir(env, "/t"), KV_OK);
    write_file(env, "/t/bloom.sf", BIG, false, hows[h]);
    g_bits = KV_SF_NO_BLOOM;
    write_file(env, "/t/none.sf", BIG, false, hows[h]);
    g_bits = 10;
    size_t la, lb;
    uint8_t *a = file_bytes(env, "/t/bloom.sf", &la), *b = file_bytes(env, "/t/none.sf", &lb);
    uint64_t ao, as, bo, bs;
    bloom_section(a, la, &ao, &as);
    bloom_section(b, lb, &bo, &bs);
    assert_int_equal(ao, bo); /* the same blocks */
    assert_memory_equal(a, b, ao);
    assert_int_equal(bs, 5);  /* the empty filter */
    assert_int_equal(la - lb, as - bs);
    assert_int_equal(kv_get_u32le(b + lb - KV_SF_TRAILER_SIZE + 8), 2);
    kv_sf_reader *r, *rb;
    assert_int_equal(kv_sf_open(env, "/t/none.sf", &r), KV_OK);
    assert_int_equal(kv_sf_open(env, "/t/bloom.sf", &rb), KV_OK);
    /* an open reader keeps its partitioned filter's partition index, not the filter: the
       two readers differ by a small fraction of the filter's bytes (an eighth, at 30-odd
       partitions of 4 KiB about 2 KiB against 120 KiB), and both keep the same index */
    size_t mem_none = kv_sf_reader_mem(r), mem_bloom = kv_sf_reader_mem(rb);
    assert_true(mem_bloom > mem_none);
    assert_true(mem_bloom - mem_none < as / 8);
    assert_true(mem_none >= kv_sf_get_props(r)->blocks * 32 + 5);
    kv_sf_close(rb);
    uint8_t key[12];
    for (uint32_t k = 0; k < BIG; k += 997) {
      key_of(2 * k, key);
      assert_false(kv_sf_may_contain_row(r, key, 12));
    }
    kv_iter *it = kv_sf_iter_new(r, NULL);
    assert_non_null(it);
    uint32_t cells = 0;
    for (it->ops->seek_first(it); it->ops->valid(it); it->ops->next(it)) cells++;
    assert_int_equal(it->ops->status(it), KV_OK);
    assert_int_equal(cells, cells_in(BIG, false));
    it->ops->destroy(it);
    kv_sf_close(r);
    free(a);
    free(b);
    env->destroy(env);
  }
}

/* A writer bounded to a few KiB (spill_bytes) spills its index entries and closed filter
** partitions to <path>.spill as it goes and writes the same bytes, cell by cell and from
** (paged) segments; the spill file is gone after finish, and after an abort. */
static void test_spill(void **state) {
  (void)state;
  for (int how = CELLS; how <= PAGED; how++) {
    kv_env *env = kv_env_mem_new(1);
    assert_int_equal(env->mkdir(env, "/t"), KV_OK);
    write_file(env, "/t/held.sf", BIG, true, how);
    g_spill = 4096 + 17 * (uint32_t)how;
    write_file(env, "/t/spilled.sf", BIG, true, how);
    g_spill = 0;
    assert_int_equal(kv_env_mem_file_size(env, "/t/spilled.sf.spill"), -1);
    same_files(env, "/t/held.sf", "/t/spilled.sf");
    /* an abort removes what it spilled */
    kv_sf_writer_options o = {4096, KV_COMPRESSION_LZ4, 10, 4096};
    kv_sf_writer *w;
    assert_int_equal(kv_sf_writer_open(env, "/t/gone.sf", &o, &w), KV_OK);
    uint8_t key[12], val[8];
    kv_cell c[12];
    for (uint32_t k = 0; k < 20000; k++) {
      int m = cells_of(2 * k, false, key, val, c);
      for (int i = 0; i < m; i++) assert_int_equal(kv_sf_writer_add(w, &c[i]), KV_OK);
    }
    assert_true(kv_env_mem_file_size(env, "/t/gone.sf.spill") > 0);
    kv_sf_writer_abort(w);
    assert_int_equal(kv_env_mem_file_size(env, "/t/gone.sf.spill"), -1);
    env->destroy(env);
  }
}

/* A spill file that cannot be created, or fills the disk at its second append: the add
** that spills fails, every later add and the finish fail the same way (sticky), and no spill
** file is left. */
static void test_spill_fails(void **state) {
  (void)state;
  static const struct { int op; uint64_t nth; int kind; int rc; } faults[] = {
      {KV_FAULT_OPEN, 1, KV_FAULT_EIO, KV_ERR_IO},
      {KV_FAULT_APPEND, 2, KV_FAULT_ENOSPC, KV_ERR_NOSPC},
      {KV_FAULT_APPEND, 1, KV_FAULT_TORN, KV_ERR_IO},
  };
  for (size_t f = 0; f < sizeof faults / sizeof *faults; f++) {
    kv_env *env = kv_env_mem_new(1);
    assert_int_equal(env->mkdir(env, "/t"), KV_OK);
    kv_env_mem_fail(env, faults[f].op, faults[f].nth, ".spill", faults[f].kind, 100);
    kv_sf_writer_options o = {4096, KV_COMPRESSION_LZ4, 10, 4096};
    kv_sf_writer *w;
    assert_int_equal(kv_sf_writer_open(env, "/t/f.sf", &o, &w), KV_OK);
    uint8_t key[12], val[8];
    kv_cell c[12];
    int rc = KV_OK;
    uint32_t k = 0;
    for (; k < 20000 && rc == KV_OK; k++) {
      int m = cells_of(2 * k, false, key, val, c);
      for (int i = 0; i < m && rc == KV_OK; i++) rc = kv_sf_writer_add(w, &c[i]);
    }
    assert_int_equal(rc, faults[f].rc);
    assert_true(k < 20000); /* it failed at a spill, not at the end */
    int m = cells_of(2 * k + 2, false, key, val, c);
    assert_true(m > 0);
    assert_int_equal(kv_sf_writer_add(w, &c[0]), faults[f].rc); /* sticky */
    assert_int_equal(kv_sf_writer_finish(w, NULL), faults[f].rc);
    assert_int_equal(kv_env_mem_file_size(env, "/t/f.sf.spill"), -1);
    env->destroy(env);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_big),         cmocka_unit_test(test_long_rows),
      cmocka_unit_test(test_small),       cmocka_unit_test(test_probe_paths),
      cmocka_unit_test(test_damage),      cmocka_unit_test(test_no_bloom),
      cmocka_unit_test(test_spill),       cmocka_unit_test(test_spill_fails),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
