/*
** tests/kv/test_sf.c: store files (kv/sf/sf.h) through the writer and the reader on the
** in-memory env: round trips of random cells (row keys with 0x00/0xFF bytes and shared
** prefixes, several qualifiers, versions, tombstones, fixed and variable widths, empty
** values) with both compressions and tiny blocks; forward and reverse iteration; seek and
** seek_for_prev to random targets against a sorted array; seeks among keys of one length
** in blocks of hundreds of rows (the suffix search); a one-cell and an empty file;
** order enforcement; rows added at once (kv_sf_writer_add_row) giving the same bytes as
** their cells one by one; keys and values at the limits.
** Not here: where blocks end, the bloom filter, estimates, format versions and damage
** (tests/kv/test_sf_layout.c).
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

#include "kv/env/env_mem.h"
#include "kv/sf/sf.h"
#include "kv/sf/sf_seg.h"
#include "testutil.h"
#include "tu_sf.h"

static void test_round_trip(void **state) {
  (void)state;
  uint64_t s = tu_seed("sf_round_trip");
  kv_env *env = kv_env_mem_new(1);
  assert_int_equal(env->mkdir(env, "/t"), KV_OK);
  static const uint32_t block_sizes[] = {64, 512, 0};
  for (int comp = 0; comp < 2; comp++) {
    for (int b = 0; b < 3; b++) {
      tsf_arena a = {0};
      size_t n = tu_scaled(20000, 1000);
      kv_cell *cells = tsf_random_cells(&s, &a, &n);
      kv_sf_props props;
      int compression = comp ? KV_COMPRESSION_NONE : KV_COMPRESSION_LZ4;
      tsf_write_file(env, "/t/a.sf", cells, n, block_sizes[b], compression, &props);
      assert_int_equal(props.cells, n);
      assert_int_equal(props.rows, tsf_distinct_rows(cells, n));
      assert_int_equal(props.file_size, kv_env_mem_file_size(env, "/t/a.sf"));
      if (block_sizes[b] == 64) assert_true(props.blocks > n / 20);
      if (block_sizes[b] == 0) assert_true(props.blocks < 10);
      int64_t mn = INT64_MAX, mx = INT64_MIN;
      uint64_t smin = UINT64_MAX, smax = 0;
      for (size_t i = 0; i < n; i++) {
        if (cells[i].ts < mn) mn = cells[i].ts;
        if (cells[i].ts > mx) mx = cells[i].ts;
        if (cells[i].seq < smin) smin = cells[i].seq;
        if (cells[i].seq > smax) smax = cells[i].seq;
      }
      assert_true(props.min_ts == mn && props.max_ts == mx);
      assert_true(props.min_seq == smin && props.max_seq == smax);
      if (compression == KV_COMPRESSION_NONE)
        assert_true(props.file_size > props.raw_bytes);
      tsf_check_file(env, "/t/a.sf", cells, n, &s, tu_scaled(5000, 500));
      free(cells);
      tsf_arena_free(&a);
    }
  }
  kv_env_free(env);
}

/* Keys of one length in blocks of hundreds of rows (the compact block's row search: the
** common prefix once, then a binary search of the suffixes, compared eight bytes at a
** time): every row, the keys just below and above it, and keys before the first and after
** the last, sought as a row's start, land where the model says; with suffixes that fit the
** delta form (8 bytes) and ones that do not (transposed), both compressions. */
static void test_fixed_keys_seek(void **state) {
  (void)state;
  uint64_t s = tu_seed("sf_fixed_keys_seek");
  kv_env *env = kv_env_mem_new(1);
  assert_int_equal(env->mkdir(env, "/t"), KV_OK);
  for (int wide = 0; wide < 2; wide++) {
    uint32_t klen = wide ? 20 : 12; /* "st", a station, 0, a number (8 bytes), wide: 8 more */
    size_t nrows = tu_scaled(20000, 3000);
    tsf_arena a = {0};
    kv_cell *cells = calloc(nrows * 2, sizeof *cells);
    assert_non_null(cells);
    size_t n = 0;
    uint64_t v = tu_below(&s, 1000);
    uint8_t key[24];
    for (size_t r = 0; r < nrows; r++) {
      v += 2 + tu_below(&s, tu_below(&s, 8) == 0 ? 100000 : 3); /* gaps: room between keys */
      memcpy(key, "st", 2);
      key[2] = (uint8_t)(r * 4 / nrows); /* a few "stations" */
      key[3] = 0;
      for (uint32_t j = 0; j < 8; j++) key[4 + j] = (uint8_t)(v >> (8 * (7 - j)));
      uint64_t h = v * 0x9E3779B97F4A7C15ull; /* wide: 8 more bytes, differing row to row */
      for (uint32_t j = 12; j < klen; j++) key[j] = (uint8_t)(h >> (8 * (j - 12)));
      if (n && tsf_bytes_cmp(cells[n - 1].row, klen, key, klen) >= 0) continue;
      const uint8_t *rp = tsf_arena_copy(&a, key, klen);
      int per_row = 1 + (int)tu_below(&s, 2);
      for (int q = 0; q < per_row; q++) {
        kv_cell *c = &cells[n++];
        c->row = rp;
        c->row_len = klen;
        c->qual = (const uint8_t *)TSF_QUALS[q];
        c->qual_len = TSF_QUAL_LEN[q];
        c->ts = 1000;
        c->seq = 5;
        c->type = KV_PUT;
        c->value = tsf_arena_copy(&a, &v, 8);
        c->value_len = 8;
      }
    }
    for (int comp = 0; comp < 2; comp++) {
      kv_sf_props props;
      tsf_write_file(env, "/t/k.sf", cells, n, 0, comp ? KV_COMPRESSION_NONE : KV_COMPRESSION_LZ4,
                 &props);
      assert_true(props.blocks >= 2 && props.rows / props.blocks >= 64);
      kv_sf_reader *r = NULL;
      assert_int_equal(kv_sf_open(env, "/t/k.sf", &r), KV_OK);
      kv_iter *it = kv_sf_iter_new(r, NULL);
      assert_non_null(it);
      for (size_t i = 0; i < n; i++) {
        if (i && cells[i].row == cells[i - 1].row) continue;
        for (int d = -1; d <= 1; d++) {
          memcpy(key, cells[i].row, klen);
          if (d) { /* the key one below / above in the last byte (maybe another row's) */
            uint32_t j = klen - 1;
            if (d < 0) { while (key[j] == 0) key[j--] = 0xFF; key[j]--; }
            else { while (key[j] == 0xFF) key[j--] = 0; key[j]++; }
          }
          kv_cell t = kv_cell_row_first(key, klen);
          size_t want = tsf_model_find(cells, n, &t, 0);
          it->ops->seek(it, &t);
          if (want == n) {
            assert_false(it->ops->valid(it));
            continue;
          }
          assert_true(it->ops->valid(it));
          tsf_assert_cell_eq(it->ops->cell(it), &cells[want]);
        }
      }
      uint8_t lo[1] = {0}, hi[24];
      memset(hi, 0xFF, sizeof hi);
      kv_cell t = kv_cell_row_first(lo, 1);
      it->ops->seek(it, &t);
      assert_true(it->ops->valid(it));
      tsf_assert_cell_eq(it->ops->cell(it), &cells[0]);
      t = kv_cell_row_first(hi, klen);
      it->ops->seek(it, &t);
      assert_false(it->ops->valid(it));
      assert_int_equal(it->ops->status(it), KV_OK);
      it->ops->destroy(it);
      kv_sf_close(r);
    }
    free(cells);
    tsf_arena_free(&a);
  }
  kv_env_free(env);
}

static void test_one_cell_and_empty(void **state) {
  (void)state;
  kv_env *env = kv_env_mem_new(1);
  assert_int_equal(env->mkdir(env, "/t"), KV_OK);
  kv_cell c = {(const uint8_t *)"\x00\xff", 2, (const uint8_t *)"q", 1, 42, 7, KV_PUT,
               (const uint8_t *)"v", 1};
  kv_sf_props props;
  uint64_t s = 1;
  tsf_write_file(env, "/t/one.sf", &c, 1, 0, KV_COMPRESSION_LZ4, &props);
  assert_int_equal(props.blocks, 1);
  tsf_check_file(env, "/t/one.sf", &c, 1, &s, 20);
  /* An empty file opens and iterates nothing. */
  tsf_write_file(env, "/t/empty.sf", NULL, 0, 0, KV_COMPRESSION_LZ4, &props);
  assert_int_equal(props.cells, 0);
  assert_int_equal(props.blocks, 0);
  kv_sf_reader *r;
  assert_int_equal(kv_sf_open(env, "/t/empty.sf", &r), KV_OK);
  kv_iter *it = kv_sf_iter_new(r, NULL);
  it->ops->seek_first(it);
  assert_false(it->ops->valid(it));
  it->ops->seek(it, &c);
  assert_false(it->ops->valid(it));
  it->ops->seek_for_prev(it, &c);
  assert_false(it->ops->valid(it));
  assert_int_equal(it->ops->status(it), KV_OK);
  it->ops->destroy(it);
  assert_false(kv_sf_may_contain_row(r, c.row, c.row_len));
  const uint8_t *f, *l;
  uint32_t fl, ll;
  kv_sf_key_range(r, &f, &fl, &l, &ll);
  assert_null(f);
  assert_int_equal(fl, 0);
  kv_sf_close(r);
  kv_env_free(env);
}

static void test_rejects_out_of_order(void **state) {
  (void)state;
  kv_env *env = kv_env_mem_new(1);
  assert_int_equal(env->mkdir(env, "/t"), KV_OK);
  kv_sf_writer *w;
  assert_int_equal(kv_sf_writer_open(env, "/t/o.sf", NULL, &w), KV_OK);
  kv_cell c = {(const uint8_t *)"r2", 2, (const uint8_t *)"q", 1, 100, 5, KV_PUT,
               (const uint8_t *)"v", 1};
  assert_int_equal(kv_sf_writer_add(w, &c), KV_OK);
  assert_int_equal(kv_sf_writer_add(w, &c), KV_ERR_INVALID);  /* a duplicate */
  kv_cell d = c;
  d.row = (const uint8_t *)"r1";                              /* an earlier row */
  assert_int_equal(kv_sf_writer_add(w, &d), KV_ERR_INVALID);
  assert_non_null(strstr(kv_errmsg(), "order"));
  d = c; d.seq = 6;                                           /* newer sorts first */
  assert_int_equal(kv_sf_writer_add(w, &d), KV_ERR_INVALID);
  d = c; d.ts = 101;                                          /* newer sorts first */
  assert_int_equal(kv_sf_writer_add(w, &d), KV_ERR_INVALID);
  d = c; d.type = KV_DELETE_COLUMN;                           /* tombstone first */
  assert_int_equal(kv_sf_writer_add(w, &d), KV_ERR_INVALID);
  d = c; d.ts = 99;                                           /* older: fine */
  assert_int_equal(kv_sf_writer_add(w, &d), KV_OK);
  kv_sf_props p;
  assert_int_equal(kv_sf_writer_finish(w, &p), KV_OK);
  assert_int_equal(p.cells, 2);
  kv_env_free(env);
}
/* Keys and values at the limits: a maximal row key, a value larger than a block, one row
** whose cells span many blocks; and the limits enforced. */
static void test_big_cells(void **state) {
  (void)state;
  kv_env *env = kv_env_mem_new(1);
  assert_int_equal(env->mkdir(env, "/t"), KV_OK);
  uint8_t *key = malloc(KV_MAX_ROW_KEY + 1), *val = malloc(1 << 20);
  for (uint32_t i = 0; i <= KV_MAX_ROW_KEY; i++) key[i] = (uint8_t)(i * 7);
  for (uint32_t i = 0; i < (1u << 20); i++) val[i] = (uint8_t)(i >> 9);
  kv_cell cells[300];
  size_t n = 0;
  cells[n++] = (kv_cell){key, KV_MAX_ROW_KEY, (const uint8_t *)"q", 1, 5, 1, KV_PUT, val, 1u << 20};
  cells[n++] = (kv_cell){key, KV_MAX_ROW_KEY, (const uint8_t *)"r", 1, 5, 1, KV_PUT, val, 3};
  static uint8_t quals[298][2];
  for (int q = 0; q < 298; q++) {  /* one long row of small cells */
    quals[q][0] = (uint8_t)(q >> 8);
    quals[q][1] = (uint8_t)q;
    cells[n++] = (kv_cell){(const uint8_t *)"zz", 2, quals[q], 2, 9, 4, KV_PUT, val + q, 8};
  }
  kv_sf_props props;
  tsf_write_file(env, "/t/big.sf", cells, n, 512, KV_COMPRESSION_LZ4, &props);
  assert_true(props.blocks > 5);
  uint64_t s = 3;
  tsf_check_file(env, "/t/big.sf", cells, n, &s, 200);
  kv_sf_writer *w;
  assert_int_equal(kv_sf_writer_open(env, "/t/limits.sf", NULL, &w), KV_OK);
  kv_cell c = {key, KV_MAX_ROW_KEY + 1, (const uint8_t *)"q", 1, 5, 1, KV_PUT, val, 1};
  assert_int_equal(kv_sf_writer_add(w, &c), KV_ERR_TOOBIG);
  c.row_len = 4;
  c.type = 9;
  assert_int_equal(kv_sf_writer_add(w, &c), KV_ERR_INVALID);
  kv_sf_writer_abort(w);
  kv_sf_reader *r = NULL;
  assert_int_equal(kv_sf_open(env, "/t/missing.sf", &r), KV_ERR_NOTFOUND);
  assert_null(r);
  free(key);
  free(val);
  kv_env_free(env);
}

/* ---- Rows at once ---- */

/* The whole of file `path` (malloc'ed); *n gets its size. */
static uint8_t *slurp(kv_env *env, const char *path, uint64_t *n) {
  kv_file *f;
  assert_int_equal(env->open(env, path, KV_OPEN_READ, &f), KV_OK);
  assert_int_equal(env->size(f, n), KV_OK);
  uint8_t *p = malloc(*n ? *n : 1);
  size_t got = 0;
  assert_non_null(p);
  assert_int_equal(env->read(f, 0, p, *n, &got), KV_OK);
  assert_int_equal(got, *n);
  env->close(f);
  return p;
}


static void assert_same_file(kv_env *env, const char *a, const char *b) {
  uint64_t na, nb;
  uint8_t *pa = slurp(env, a, &na), *pb = slurp(env, b, &nb);
  assert_true(na == nb);
  assert_memory_equal(pa, pb, na);
  free(pa);
  free(pb);
}

/* kv_sf_writer_add_row writes the same file, byte for byte, as the row's cells added one by
** one, in a file and in a segment (tiny blocks: rows split across blocks), and refuses what
** kv_sf_writer_add refuses, with the cells before the bad one added. */
static void test_add_row_same_bytes(void **state) {
  (void)state;
  uint64_t s = tu_seed("sf_add_row");
  kv_env *env = kv_env_mem_new(1);
  assert_int_equal(env->mkdir(env, "/t"), KV_OK);
  static const uint32_t sizes[] = {64, 700, 16384};
  for (int round = 0; round < 6; round++) {
    tsf_arena a = {0};
    size_t n = 1 + tu_below(&s, 4000);
    kv_cell *cells = tsf_random_cells(&s, &a, &n);
    /* every other round spills its index entries (and filter partitions) past a few
       hundred bytes: the file must read the same */
    kv_sf_writer_options o = {sizes[round % 3],
                              round & 1 ? KV_COMPRESSION_LZ4 : KV_COMPRESSION_NONE, 10,
                              round % 4 < 2 ? 64 + (uint32_t)tu_below(&s, 512) : 0};
    const char *path[2] = {"/t/one.sf", "/t/rows.sf"};
    for (int rows = 0; rows < 2; rows++) {
      kv_sf_writer *w;
      assert_int_equal(kv_sf_writer_open(env, path[rows], &o, &w), KV_OK);
      tsf_add_cells(w, cells, n, rows);
      assert_int_equal(kv_sf_writer_finish(w, NULL), KV_OK);
    }
    assert_same_file(env, path[0], path[1]);
    /* segments: every cell of one sequence number (equal keys then dropped) */
    size_t m = 0;
    for (size_t i = 0; i < n; i++) cells[i].seq = 9;
    qsort(cells, n, sizeof *cells, tsf_qsort_cmp);
    for (size_t i = 0; i < n; i++) {
      if (m == 0 || tsf_model_cmp(&cells[m - 1], &cells[i]) != 0) cells[m++] = cells[i];
    }
    for (int rows = 0; rows < 2; rows++) {
      kv_sf_writer *g, *w;
      kv_sf_seg *seg;
      assert_int_equal(kv_sf_seg_open(&o, &g), KV_OK);
      tsf_add_cells(g, cells, m, rows);
      assert_int_equal(kv_sf_seg_finish(g, &seg), KV_OK);
      assert_int_equal(kv_sf_writer_open(env, path[rows], &o, &w), KV_OK);
      assert_int_equal(kv_sf_writer_add_seg(w, seg, 9), KV_OK);
      assert_int_equal(kv_sf_writer_finish(w, NULL), KV_OK);
      /* where a row goes on in the next block, the block's last cell is the one noted: a
      ** writer given the blocks up to there refuses that cell again */
      size_t before = 0, checks = 0;
      for (size_t k = 0; rows && k + 1 < kv_sf_seg_nblocks(seg) && checks < 40; k++) {
        kv_sf_seg_binfo bi, next;
        kv_sf_seg_block_info(seg, k, &bi);
        kv_sf_seg_block_info(seg, k + 1, &next);
        before += bi.ncells;
        if (!next.cont) continue;
        checks++;
        assert_int_equal(kv_sf_writer_open(env, "/t/part.sf", &o, &w), KV_OK);
        assert_int_equal(kv_sf_writer_add_seg_blocks(w, seg, 0, k + 1, 9), KV_OK);
        assert_int_equal(kv_sf_writer_add(w, &cells[before - 1]), KV_ERR_INVALID);
        assert_int_equal(kv_sf_writer_add(w, &cells[before]), KV_OK);
        kv_sf_writer_abort(w);
      }
      kv_sf_seg_free(seg);
    }
    assert_same_file(env, path[0], path[1]);
    free(cells);
    tsf_arena_free(&a);
  }
  /* refusals: the one-by-one rules and errors; what came before the bad cell is kept */
  kv_sf_writer *w;
  assert_int_equal(kv_sf_writer_open(env, "/t/bad.sf", NULL, &w), KV_OK);
  kv_cell r[3] = {{(const uint8_t *)"r2", 2, (const uint8_t *)"a", 1, 100, 5, KV_PUT,
                   (const uint8_t *)"v", 1}};
  r[1] = r[0];
  r[1].qual = (const uint8_t *)"b";
  r[2] = r[0]; /* "a" again after "b": out of order */
  assert_int_equal(kv_sf_writer_add_row(w, r, 3), KV_ERR_INVALID);
  assert_non_null(strstr(kv_errmsg(), "order"));
  assert_int_equal(kv_sf_writer_add_row(w, r, 1), KV_ERR_INVALID); /* row r2 again */
  kv_cell t = r[0];
  t.row = (const uint8_t *)"r3";
  t.type = 9; /* a bad type */
  assert_int_equal(kv_sf_writer_add_row(w, &t, 1), KV_ERR_INVALID);
  t.type = KV_PUT;
  t.qual_len = KV_MAX_QUALIFIER + 1;
  assert_int_equal(kv_sf_writer_add_row(w, &t, 1), KV_ERR_TOOBIG);
  t.qual_len = 1;
  assert_int_equal(kv_sf_writer_add_row(w, &t, 1), KV_OK);
  assert_int_equal(kv_sf_writer_add_row(w, &t, 0), KV_OK);
  kv_sf_props p;
  assert_int_equal(kv_sf_writer_finish(w, &p), KV_OK);
  assert_int_equal(p.cells, 3);
  assert_int_equal(p.rows, 2);
  kv_env_free(env);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_round_trip),
    cmocka_unit_test(test_fixed_keys_seek),
    cmocka_unit_test(test_one_cell_and_empty),
    cmocka_unit_test(test_rejects_out_of_order),
    cmocka_unit_test(test_add_row_same_bytes),
    cmocka_unit_test(test_big_cells),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
