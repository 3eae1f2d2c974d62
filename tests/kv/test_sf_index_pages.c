/*
** tests/kv/test_sf_index_pages.c: the paged block index of big mapped store files
** (kv/sf/sf_index.c). The same file is opened twice from a mapping, its index decoded whole
** (with the fence) and paged (a page table only), and the two readers must agree on
** everything the rest of kv/ asks of an index: every entry and first cell, the block of
** every seek target (row starts and cells, present and absent keys, before and after the
** file), the block a row read starts at, every cell of a full scan and of seeks forward
** and back, and the planner's estimates. With a block cache the pages are decoded once and
** hit after (metadata counters); a cache too small for a page and no cache at all give
** the same answers. The paged reader holds under a twentieth of the bytes. A damaged byte
** of a paged index section fails the open naming the block index; a section changed on disk
** under an open paged reader makes reads fail as corruption, never crash. Rows spanning
** blocks (a file whose rows are not whole) and keys too long for a fence are covered; a
** store keeps whole indexes up to kv_options.index_memory and pages past it. In-memory env
** with mapping on; the POSIX env for the file changed on disk.
** Not here: the stores the rest of the suite opens paged (scripts/test.sh runs kv, exec and
** api tests again with ROWAN_SF_PAGED_MIN=0), the section's format (tests/kv/test_sf.c).
*/
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <unistd.h>

#include "kv/env/env.h"
#include "kv/env/env_mem.h"
#include "kv/kv.h"
#include "kv/sf/sf.h"
#include "kv/sf/sf_int.h"
#include "kv/util/cache.h"
#include "kv/util/coding.h"
#include "kv/util/status.h"
#include "testutil.h"

#define SEQ 9u
#define ROWS 60011u /* rows of the test file: several hundred 4 KiB blocks, ten pages */

#define KEYMAX 80u
static uint32_t g_klen = 12; /* row key length: 12, or 80 (longer than a fence's keys) */

static void key_of(uint32_t k, uint8_t out[KEYMAX]) {
  memcpy(out, "row:", 4);
  for (int i = 0; i < 8; i++) out[4 + i] = (uint8_t)('a' + ((k >> (28 - 4 * i)) & 15));
  memset(out + 12, '.', KEYMAX - 12);
}

static uint8_t g_big[1500];

/* Row k's cells (keys even): one or two, or with long_rows every 194th key twelve cells of
** 1,500 bytes (more than twice a 4 KiB block: the row spans blocks). */
static int cells_of(uint32_t k, bool long_rows, uint8_t key[KEYMAX], uint8_t val[8], kv_cell c[12]) {
  key_of(k, key);
  memcpy(val, &k, 4);
  memset(val + 4, 0x33, 4);
  static const char *quals = "abcdefghijkl";
  if (long_rows && k % 194 == 0) {
    for (int i = 0; i < 12; i++)
      c[i] = (kv_cell){key, g_klen, (const uint8_t *)quals + i, 1, 1000 + (int64_t)k, SEQ, KV_PUT,
                       g_big, sizeof g_big};
    return 12;
  }
  int n = k % 3 == 0 ? 2 : 1;
  for (int i = 0; i < n; i++)
    c[i] = (kv_cell){key, g_klen, (const uint8_t *)(i ? "w" : "v"), 1, 1000 + (int64_t)k, SEQ,
                     KV_PUT, val, 8};
  return n;
}

static void write_file(kv_env *env, const char *path, bool long_rows) {
  kv_sf_writer_options o = {4096, KV_COMPRESSION_LZ4, 10, 0};
  kv_sf_writer *w;
  assert_int_equal(kv_sf_writer_open(env, path, &o, &w), KV_OK);
  uint8_t key[KEYMAX], val[8];
  kv_cell c[12];
  for (uint32_t k = 0; k < ROWS; k++) {
    int m = cells_of(2 * k, long_rows, key, val, c);
    for (int i = 0; i < m; i++) assert_int_equal(kv_sf_writer_add(w, &c[i]), KV_OK);
  }
  kv_sf_props p;
  assert_int_equal(kv_sf_writer_finish(w, &p), KV_OK);
  assert_int_equal(p.rows, ROWS);
}

/* The file opened with its index whole (*whole) and paged (*paged). */
static void open_both(kv_env *env, const char *path, kv_sf_reader **whole, kv_sf_reader **paged) {
  kv_sf_set_paged_min(UINT32_MAX - 1);
  assert_int_equal(kv_sf_open(env, path, whole), KV_OK);
  kv_sf_set_paged_min(0);
  assert_int_equal(kv_sf_open(env, path, paged), KV_OK);
  kv_sf_set_paged_min(KV_SF_PAGED_MIN);
  assert_non_null((*whole)->index);
  assert_null((*whole)->ipages);
  assert_null((*paged)->index);
  assert_non_null((*paged)->ipages);
  assert_null((*paged)->fence);
  if (g_klen <= KV_SF_FENCE_MAX) {
    assert_non_null((*whole)->fence);
    assert_non_null((*paged)->pfence); /* the pages' first row keys, densely */
    assert_int_equal((*paged)->ipages[0].w, g_klen);
  } else { /* keys too long for a fence: both search the keys in the index section */
    assert_null((*whole)->fence);
    assert_null((*paged)->pfence);
    assert_int_equal((*paged)->ipages[0].w, 0);
  }
  assert_true((*paged)->nblocks > 6 * KV_SF_INDEX_PAGE); /* several pages, a short last one */
  assert_int_equal((*paged)->nipages,
                   ((*paged)->nblocks + KV_SF_INDEX_PAGE - 1) / KV_SF_INDEX_PAGE);
}

static void same_cell(const kv_cell *a, const kv_cell *b) {
  assert_int_equal(kv_cell_cmp(a, b), 0);
  assert_int_equal(a->value_len, b->value_len);
  if (a->value_len) assert_memory_equal(a->value, b->value, a->value_len);
}

/* Every entry, first row and first cell agree; the cursor walks forward and back alike. */
static void same_entries(kv_sf_reader *a, kv_sf_reader *b) {
  assert_int_equal(a->nblocks, b->nblocks);
  kv_sf_icur cur;
  kv_sf_icur_init(&cur, b);
  for (uint32_t i = 0; i < a->nblocks; i++) {
    kv_sf_index_entry x = a->index[i], y = kv_sf_entry(b, i);
    const kv_sf_index_entry *z = kv_sf_icur_at(&cur, a->nblocks - 1 - i);
    assert_true(x.off == y.off && x.size == y.size && x.raw == y.raw && x.cells == y.cells &&
                x.rows == y.rows && x.row_len == y.row_len && x.key == y.key);
    assert_true(z->off == a->index[a->nblocks - 1 - i].off);
    uint32_t la, lb;
    const uint8_t *ra = kv_sf_first_row(a, i, &la), *rb = kv_sf_first_row(b, i, &lb);
    assert_int_equal(la, lb);
    assert_memory_equal(ra, rb, la);
    kv_cell ca, cb;
    kv_sf_first_cell(a, i, &ca);
    kv_sf_first_cell(b, i, &cb);
    assert_int_equal(kv_cell_cmp(&ca, &cb), 0);
  }
  kv_sf_icur_done(&cur);
  assert_int_equal(a->last_row_len, b->last_row_len);
  assert_memory_equal(a->last_row, b->last_row, a->last_row_len);
}

/* Seek targets around key k: its row start, its cells ("v" and "w" at and around their
** timestamp), and one sorting after every cell of the row. */
static int targets_of(uint32_t k, uint8_t key[KEYMAX], kv_cell t[6]) {
  key_of(k, key);
  t[0] = kv_cell_row_first(key, g_klen);
  t[1] = (kv_cell){key, g_klen, (const uint8_t *)"v", 1, 1000 + (int64_t)k, SEQ, KV_PUT, NULL, 0};
  t[2] = (kv_cell){key, g_klen, (const uint8_t *)"v", 1, 999 + (int64_t)k, SEQ, KV_PUT, NULL, 0};
  t[3] = (kv_cell){key, g_klen, (const uint8_t *)"w", 1, INT64_MAX, UINT64_MAX, 255, NULL, 0};
  t[4] = (kv_cell){key, g_klen, (const uint8_t *)"c", 1, 1000 + (int64_t)k, SEQ, KV_PUT, NULL, 0};
  t[5] = (kv_cell){key, g_klen, (const uint8_t *)"zz", 2, INT64_MIN, 0, 0, NULL, 0};
  return 6;
}

/* Both readers put every target in the same block, and a row read at the same block. */
static void same_blocks(kv_sf_reader *a, kv_sf_reader *b) {
  uint8_t key[KEYMAX];
  kv_cell t[6];
  for (uint32_t k = 0; k <= 2 * ROWS + 2; k++) {
    int n = targets_of(k, key, t);
    for (int j = 0; j < n; j++) assert_int_equal(kv_sf_find_block(a, &t[j]), kv_sf_find_block(b, &t[j]));
    assert_int_equal(kv_sf_row_block(a, key, g_klen), kv_sf_row_block(b, key, g_klen));
  }
  static const uint8_t before[] = "r", after[] = "zzz";
  kv_cell t0 = kv_cell_row_first(before, 1), t1 = kv_cell_row_first(after, 3);
  assert_int_equal(kv_sf_find_block(b, &t0), -1);
  assert_int_equal(kv_sf_find_block(b, &t1), (int64_t)b->nblocks - 1);
  assert_int_equal(kv_sf_row_block(b, before, 1), 0);
}

/* Two iterators, one a reader, agree cell for cell: a full scan, then seeks and
** seek_for_prev with steps either way after each. */
static void same_reads(kv_sf_reader *a, kv_sf_reader *b) {
  kv_iter *x = kv_sf_iter_new(a, NULL), *y = kv_sf_iter_new(b, NULL);
  assert_non_null(x);
  assert_non_null(y);
  uint64_t cells = 0;
  for (x->ops->seek_first(x), y->ops->seek_first(y); x->ops->valid(x);
       x->ops->next(x), y->ops->next(y)) {
    assert_true(y->ops->valid(y));
    same_cell(x->ops->cell(x), y->ops->cell(y));
    cells++;
  }
  assert_false(y->ops->valid(y));
  assert_int_equal(cells, a->props.cells);
  uint8_t key[KEYMAX];
  kv_cell t[6];
  for (uint32_t k = 0; k <= 2 * ROWS + 2; k += 37) {
    int n = targets_of(k, key, t);
    for (int j = 0; j < n; j++) {
      bool back = (k / 37 + (uint32_t)j) % 2;
      if (back) {
        x->ops->seek_for_prev(x, &t[j]);
        y->ops->seek_for_prev(y, &t[j]);
      } else {
        x->ops->seek(x, &t[j]);
        y->ops->seek(y, &t[j]);
      }
      for (int step = 0; step < 3 && x->ops->valid(x); step++) {
        assert_true(y->ops->valid(y));
        same_cell(x->ops->cell(x), y->ops->cell(y));
        if (back) { x->ops->prev(x); y->ops->prev(y); }
        else { x->ops->next(x); y->ops->next(y); }
      }
      assert_int_equal(x->ops->valid(x), y->ops->valid(y));
    }
  }
  assert_int_equal(x->ops->status(x), KV_OK);
  assert_int_equal(y->ops->status(y), KV_OK);
  x->ops->destroy(x);
  y->ops->destroy(y);
}

/* The planner's estimates agree over ranges of every size, with limits both ways and with
** end blocks counted exactly. */
static void same_estimates(kv_sf_reader *a, kv_sf_reader *b) {
  uint32_t seed = 17;
  for (int i = 0; i < 300; i++) {
    uint8_t lo[KEYMAX], hi[KEYMAX];
    seed = seed * 1103515245u + 12345u;
    uint32_t k0 = (seed >> 8) % (2 * ROWS + 4);
    seed = seed * 1103515245u + 12345u;
    uint32_t span = i % 3 == 0 ? (seed >> 8) % (2 * ROWS) : (seed >> 8) % 400;
    key_of(k0, lo);
    key_of(k0 + span, hi);
    uint32_t ea = 2, eb = 2;
    int64_t ca = -1, cb = -1;
    kv_sf_est q = {i % 5 ? lo : NULL, g_klen, i % 2 == 0, i % 7 ? hi : NULL, g_klen, i % 4 != 0,
                   i % 6 == 0 ? 300 : 0, i % 4 == 1, NULL, NULL};
    kv_sf_est qa = q, qb = q;
    if (i % 8 == 3) {
      qa.exact = &ea;
      qb.exact = &eb;
      qa.counted = &ca;
      qb.counted = &cb;
    }
    uint64_t ra, ba, rb, bb;
    kv_sf_estimate(a, &qa, &ra, &ba);
    kv_sf_estimate(b, &qb, &rb, &bb);
    assert_int_equal(ra, rb);
    assert_int_equal(ba, bb);
    assert_int_equal(ca, cb);
  }
}

static void check_file(bool long_rows) {
  kv_env *env = kv_env_mem_new(1);
  kv_env_mem_set_map(env, true);
  assert_int_equal(env->mkdir(env, "/t"), KV_OK);
  write_file(env, "/t/a.sf", long_rows);
  kv_sf_reader *a, *b;
  open_both(env, "/t/a.sf", &a, &b);
  assert_int_equal(a->rows_whole, !long_rows);
  assert_int_equal(b->rows_whole, !long_rows);
  /* what the readers hold: the paged one a page table, not the entries, section and fence */
  size_t ma = kv_sf_reader_mem(a), mb = kv_sf_reader_mem(b);
  assert_true(ma >= (size_t)a->nblocks * 32);
  assert_true(mb * 20 < ma);
  /* no cache: pages decoded each time */
  same_entries(a, b);
  same_blocks(a, b);
  same_reads(a, b);
  same_estimates(a, b);
  /* a block cache: every page decoded once, then hit */
  kv_cache *cache = kv_cache_new(8u << 20);
  assert_non_null(cache);
  kv_sf_set_cache(b, cache, 7);
  same_entries(a, b);
  kv_cache_counters c1;
  kv_cache_get_counters(cache, &c1);
  assert_int_equal(c1.meta_inserts, b->nipages);
  same_blocks(a, b);
  same_reads(a, b);
  same_estimates(a, b);
  kv_cache_counters c2;
  kv_cache_get_counters(cache, &c2);
  assert_int_equal(c2.meta_inserts, b->nipages); /* none decoded twice */
  assert_true(c2.meta_hits > c1.meta_hits);
  kv_sf_set_cache(b, NULL, 0);
  kv_cache_free(cache);
  /* a cache too small to hold a page: decoded each time, the same answers */
  cache = kv_cache_new(1);
  assert_non_null(cache);
  kv_sf_set_cache(b, cache, 7);
  same_entries(a, b);
  kv_cache_counters c3;
  kv_cache_get_counters(cache, &c3); /* no page was kept: each asked for missed */
  assert_int_equal(c3.meta_hits, 0);
  assert_true(c3.meta_misses >= b->nipages);
  same_blocks(a, b);
  same_reads(a, b);
  kv_sf_set_cache(b, NULL, 0);
  kv_cache_free(cache);
  kv_sf_close(a);
  kv_sf_close(b);
  env->destroy(env);
}

static void test_whole_rows(void **state) {
  (void)state;
  check_file(false);
}

static void test_rows_across_blocks(void **state) {
  (void)state;
  memset(g_big, 0x6b, sizeof g_big);
  check_file(true);
}

/* Row keys of 80 bytes, past what a fence holds: no fence paged or whole, the same answers. */
static void test_long_keys(void **state) {
  (void)state;
  g_klen = KEYMAX;
  check_file(false);
  g_klen = 12;
}

/* A store keeps the indexes of the files it opens whole while they add up to at most
** kv_options.index_memory, and pages the rest: the same rows come back either way, and
** kv_family_stats.reader_bytes shows what each way holds. */
static void test_store_budget(void **state) {
  (void)state;
  kv_env *env = kv_env_mem_new(1);
  kv_env_mem_set_map(env, true);
  size_t budgets[3] = {0 /* default: 64 MiB */, 1 /* every file paged */, 0};
  uint64_t held[3];
  uint32_t nblocks = 0;
  for (int round = 0; round < 3; round++) {
    kv_options o;
    kv_options_init(&o);
    o.env = env;
    o.create_if_missing = true;
    o.index_memory = budgets[round];
    o.block_cache_size = 4u << 20;
    kv_db *db = NULL;
    assert_int_equal(kv_open("/db", &o, &db), KV_OK);
    uint32_t fid;
    if (round == 0) {
      kv_family_options f = {.name = "a", .block_size = 1024};
      assert_int_equal(kv_create_table(db, "t", &f, 1), KV_OK);
      assert_int_equal(kv_family_id(db, "t", "a", &fid), KV_OK);
      kv_batch *b = kv_batch_new();
      for (uint32_t k = 0; k < 40000; k++) {
        uint8_t key[KEYMAX], val[8];
        key_of(2 * k, key);
        memcpy(val, &k, 4);
        memset(val + 4, 0x21, 4);
        assert_int_equal(kv_batch_put(b, fid, key, 12, "v", 1, 5, val, 8), KV_OK);
        if (k % 1000 == 999) {
          assert_int_equal(kv_commit(db, b, NULL), KV_OK);
          kv_batch_clear(b);
        }
      }
      kv_batch_free(b);
      assert_int_equal(kv_flush(db, NULL), KV_OK);
      assert_int_equal(kv_compact(db, "t", true), KV_OK);
      assert_int_equal(kv_close(db), KV_OK); /* reopened below with the round's budget */
      assert_int_equal(kv_open("/db", &o, &db), KV_OK);
    }
    assert_int_equal(kv_family_id(db, "t", "a", &fid), KV_OK);
    kv_family_stats st;
    assert_int_equal(kv_family_get_stats(db, fid, &st), KV_OK);
    assert_int_equal(st.store_files, 1);
    assert_true(st.blocks > 4 * KV_SF_INDEX_PAGE);
    nblocks = (uint32_t)st.blocks;
    held[round] = st.reader_bytes;
    /* every row read back, point by point (a sample) and by a full scan */
    kv_scan_options so = {0};
    so.family_ids = &fid;
    so.n_families = 1;
    for (uint32_t k = 0; k < 40000; k += 97) {
      uint8_t key[KEYMAX];
      key_of(2 * k, key);
      kv_scan *sc;
      kv_row r;
      assert_int_equal(kv_get(db, &so, key, 12, &sc, &r), KV_OK);
      assert_int_equal(r.n_cells, 1);
      assert_memory_equal(r.cells[0].value, &k, 4);
      kv_scan_close(sc);
      key_of(2 * k + 1, key);
      assert_int_equal(kv_get(db, &so, key, 12, &sc, &r), KV_ERR_NOTFOUND);
      kv_scan_close(sc);
    }
    kv_scan *sc;
    assert_int_equal(kv_scan_open(db, &so, &sc), KV_OK);
    kv_row r;
    uint32_t n = 0;
    while (kv_scan_next(sc, &r) == KV_OK) {
      uint8_t key[KEYMAX];
      key_of(2 * n, key);
      assert_memory_equal(r.key, key, 12);
      n++;
    }
    kv_scan_close(sc);
    assert_int_equal(n, 40000);
    assert_int_equal(kv_close(db), KV_OK);
  }
  assert_true(held[0] >= (uint64_t)nblocks * 32); /* whole: an entry a block at least */
  assert_true(held[1] * 20 < held[0]);            /* paged: the page table */
  assert_int_equal(held[2], held[0]);             /* whole again under the default */
  env->destroy(env);
}

/* A byte of a paged index section changed: the open checks the section in the mapping as
** it checks a copy, and fails naming the block index and its offset. */
static void test_damaged_section(void **state) {
  (void)state;
  kv_env *env = kv_env_mem_new(1);
  kv_env_mem_set_map(env, true);
  assert_int_equal(env->mkdir(env, "/t"), KV_OK);
  write_file(env, "/t/a.sf", false);
  int64_t size = kv_env_mem_file_size(env, "/t/a.sf");
  uint8_t t[KV_SF_TRAILER_SIZE];
  for (uint32_t i = 0; i < KV_SF_TRAILER_SIZE; i++)
    assert_int_equal(kv_env_mem_get_byte(env, "/t/a.sf", (uint64_t)size - KV_SF_TRAILER_SIZE + i,
                                         &t[i]), KV_OK);
  uint64_t index_off = kv_get_u64le(t + 16), index_size = kv_get_u64le(t + 24);
  uint64_t at = index_off + index_size / 2;
  uint8_t v;
  assert_int_equal(kv_env_mem_get_byte(env, "/t/a.sf", at, &v), KV_OK);
  assert_int_equal(kv_env_mem_set_byte(env, "/t/a.sf", at, (uint8_t)(v ^ 0x10)), KV_OK);
  kv_sf_set_paged_min(0);
  kv_sf_reader *r = NULL;
  assert_int_equal(kv_sf_open(env, "/t/a.sf", &r), KV_ERR_CORRUPT);
  kv_sf_set_paged_min(KV_SF_PAGED_MIN);
  assert_null(r);
  char want[64];
  snprintf(want, sizeof want, "block index at offset %llu", (unsigned long long)index_off);
  assert_non_null(strstr(kv_errmsg(), want));
  assert_non_null(strstr(kv_errmsg(), "checksum mismatch"));
  env->destroy(env);
}

/* A file changed on disk under a paged reader (store files are never written again; an
** outside tool could): its index pages are decoded from the mapping again, and a stretch of
** 0xff bytes (varints that never end) in the section must not make any read crash or read
** outside the section: the full scan ends with KV_ERR_CORRUPT, seeks and estimates return. */
static void test_section_changed_under_reader(void **state) {
  (void)state;
  const char *tmp = getenv("TMPDIR");
  char dir[4096], path[4200];
  /* the six trailing characters are mkdtemp's template, replaced by a unique name */
  snprintf(dir, sizeof dir, "%s/rowan-ipages-XXXXXX", tmp && *tmp ? tmp : "/tmp");
  assert_non_null(mkdtemp(dir));
  snprintf(path, sizeof path, "%s/a.sf", dir);
  kv_env *env = kv_env_posix();
  write_file(env, path, false);
  kv_sf_set_paged_min(0);
  kv_sf_reader *r = NULL;
  assert_int_equal(kv_sf_open(env, path, &r), KV_OK);
  kv_sf_set_paged_min(KV_SF_PAGED_MIN);
  assert_non_null(r->ipages);
  int fd = open(path, O_WRONLY);
  assert_true(fd >= 0);
  uint8_t junk[4096];
  memset(junk, 0xff, sizeof junk);
  assert_int_equal(pwrite(fd, junk, sizeof junk, (off_t)(r->index_off + r->index_len / 2)),
                   (ssize_t)sizeof junk);
  close(fd);
  kv_iter *it = kv_sf_iter_new(r, NULL);
  assert_non_null(it);
  uint64_t cells = 0;
  for (it->ops->seek_first(it); it->ops->valid(it); it->ops->next(it)) cells++;
  assert_int_equal(it->ops->status(it), KV_ERR_CORRUPT);
  assert_true(cells < r->props.cells);
  it->ops->destroy(it);
  uint8_t key[KEYMAX];
  kv_cell t[6];
  for (uint32_t k = 0; k <= 2 * ROWS + 2; k += 11) {
    int n = targets_of(k, key, t);
    for (int j = 0; j < n; j++) {
      int64_t b = kv_sf_find_block(r, &t[j]);
      assert_true(b >= -1 && b < (int64_t)r->nblocks);
    }
    assert_true(kv_sf_row_block(r, key, g_klen) < r->nblocks);
    kv_iter *x = kv_sf_iter_new(r, NULL);
    x->ops->seek(x, &t[0]);
    if (x->ops->valid(x)) x->ops->next(x);
    x->ops->destroy(x);
  }
  kv_sf_est q = {NULL, 0, true, NULL, 0, true, 0, false, NULL, NULL};
  uint64_t rows, bytes;
  kv_sf_estimate(r, &q, &rows, &bytes);
  assert_true(rows <= r->props.rows + r->nblocks);
  kv_sf_close(r);
  assert_int_equal(unlink(path), 0);
  assert_int_equal(rmdir(dir), 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_whole_rows),
      cmocka_unit_test(test_rows_across_blocks),
      cmocka_unit_test(test_long_keys),
      cmocka_unit_test(test_store_budget),
      cmocka_unit_test(test_damaged_section),
      cmocka_unit_test(test_section_changed_under_reader),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
