/*
** tests/kv/test_sf.c: store files (kv/sf.h) through the writer and the reader on the
** in-memory env: round trips of random cells (row keys with 0x00/0xFF bytes and shared
** prefixes, several qualifiers, versions, tombstones, fixed and variable widths, empty
** values) with both compressions and tiny blocks; forward and reverse iteration; seek and
** seek_for_prev to random targets against a sorted array; seeks among keys of one length
** in blocks of hundreds of rows (the suffix search); a one-cell and an empty file;
** order enforcement; rows added at once (kv_sf_writer_add_row) giving the same bytes as
** their cells one by one; blocks ending at rows' ends (a row that fits is never cut, a
** longer one is); the bloom filter; estimates; and damage (a flipped byte anywhere, a
** truncated file) reported as KV_ERR_CORRUPT with the offset in kv_errmsg().
**
** The model is a plain sorted array with the test's own comparator (written from the order
** in DESIGN.md, not kv/cell.h). Seeded: the seed is printed; ROWAN_SEED reruns it.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <xxhash.h>

#include "kv/bloom.h"
#include "kv/env_mem.h"
#include "kv/sf.h"
#include "kv/sf_int.h"
#include "kv/sf_seg.h"
#include "testutil.h"

/* ---- The model ---- */

typedef struct arena {
  uint8_t **chunks; /* allocated chunks */
  size_t n, cap;    /* chunks in use / slots allocated */
} arena;

static uint8_t *arena_copy(arena *a, const void *p, size_t n) {
  uint8_t *c = malloc(n ? n : 1);
  assert_non_null(c);
  if (a->n == a->cap) {
    a->cap = a->cap ? a->cap * 2 : 1024;
    a->chunks = realloc(a->chunks, a->cap * sizeof *a->chunks);
    assert_non_null(a->chunks);
  }
  a->chunks[a->n++] = c;
  if (n) memcpy(c, p, n);
  return c;
}

static void arena_free(arena *a) {
  for (size_t i = 0; i < a->n; i++) free(a->chunks[i]);
  free(a->chunks);
  memset(a, 0, sizeof *a);
}

static int bytes_cmp(const uint8_t *a, uint32_t al, const uint8_t *b, uint32_t bl) {
  for (uint32_t i = 0; i < al && i < bl; i++)
    if (a[i] != b[i]) return a[i] < b[i] ? -1 : 1;
  return al == bl ? 0 : (al < bl ? -1 : 1);
}

/* Row asc, qualifier asc, timestamp desc, sequence desc, type desc. */
static int model_cmp(const kv_cell *a, const kv_cell *b) {
  int c = bytes_cmp(a->row, a->row_len, b->row, b->row_len);
  if (c) return c;
  c = bytes_cmp(a->qual, a->qual_len, b->qual, b->qual_len);
  if (c) return c;
  if (a->ts != b->ts) return a->ts < b->ts ? 1 : -1;
  if (a->seq != b->seq) return a->seq < b->seq ? 1 : -1;
  if (a->type != b->type) return a->type < b->type ? 1 : -1;
  return 0;
}

static int qsort_cmp(const void *a, const void *b) { return model_cmp(a, b); }

static const char *const QUALS[] = {"", "\x00", "a", "b", "temp", "\xff\xff", "wd",
                                    "a-long-qualifier-name"};
static const uint32_t QUAL_LEN[] = {0, 1, 1, 1, 4, 2, 2, 21};
#define NQUALS 8

static void random_row(uint64_t *s, uint8_t *buf, uint32_t *len) {
  static const char *const prefixes[] = {"", "\x00", "\xff", "sensor-", "sensor-0",
                                         "\x00\x00\xff"};
  static const uint32_t plen[] = {0, 1, 1, 7, 8, 3};
  int pi = (int)tu_below(s, 6);
  memcpy(buf, prefixes[pi], plen[pi]);
  uint32_t n = plen[pi], extra = (uint32_t)tu_below(s, 13);
  for (uint32_t i = 0; i < extra; i++) {
    uint64_t k = tu_below(s, 4);
    buf[n++] = k == 0 ? 0x00 : k == 1 ? 0xFF : k == 2 ? (uint8_t)('a' + tu_below(s, 3))
                                                       : (uint8_t)tu_rand(s);
  }
  *len = n;
}

/* Random distinct cells, sorted. *np: wanted count in, actual out. */
static kv_cell *random_cells(uint64_t *s, arena *a, size_t *np) {
  size_t want = *np, n = 0;
  kv_cell *cells = calloc(want + 64, sizeof *cells);
  assert_non_null(cells);
  static const int64_t ts_pool[] = {0, -5, 1000, 1700000000000, INT64_MAX, INT64_MIN + 1};
  uint8_t row[64], val[300];
  while (n < want) {
    uint32_t rlen;
    random_row(s, row, &rlen);
    const uint8_t *rp = arena_copy(a, row, rlen);
    int per_row = 1 + (int)tu_below(s, 14);
    for (int k = 0; k < per_row && n < want + 63; k++) {
      kv_cell *c = &cells[n++];
      int qi = (int)tu_below(s, NQUALS);
      c->row = rp;
      c->row_len = rlen;
      c->qual = (const uint8_t *)QUALS[qi];
      c->qual_len = QUAL_LEN[qi];
      c->ts = tu_below(s, 3) ? ts_pool[tu_below(s, 6)] : (int64_t)tu_rand(s);
      c->seq = tu_below(s, 4) ? 1 + tu_below(s, 1000) : tu_rand(s);
      uint64_t t = tu_below(s, 10);
      c->type = t < 8 ? KV_PUT : (uint8_t)(t - 7);
      if (c->type == KV_DELETE_FAMILY) { c->qual = (const uint8_t *)""; c->qual_len = 0; }
      uint32_t vlen = 0;
      if (c->type == KV_PUT) {
        switch (qi) {
          case 2: case 4: vlen = tu_below(s, 50) ? 8 : 4; break; /* mostly fixed */
          case 1: vlen = 0; break;                               /* always empty */
          case 6: vlen = 1 + (uint32_t)tu_below(s, 3); break;
          case 7: vlen = (uint32_t)tu_below(s, 300); break;
          default: vlen = (uint32_t)tu_below(s, 31); break;
        }
      }
      for (uint32_t i = 0; i < vlen; i++) val[i] = (uint8_t)(tu_below(s, 3) ? i : tu_rand(s));
      c->value = arena_copy(a, val, vlen);
      c->value_len = vlen;
    }
  }
  qsort(cells, n, sizeof *cells, qsort_cmp);
  size_t m = 0;
  for (size_t i = 0; i < n; i++)
    if (m == 0 || model_cmp(&cells[m - 1], &cells[i]) != 0) cells[m++] = cells[i];
  *np = m;
  return cells;
}

static void assert_cell_eq(const kv_cell *got, const kv_cell *want) {
  assert_int_equal(got->row_len, want->row_len);
  assert_memory_equal(got->row, want->row, want->row_len);
  assert_int_equal(got->qual_len, want->qual_len);
  if (want->qual_len) assert_memory_equal(got->qual, want->qual, want->qual_len);
  assert_true(got->ts == want->ts);
  assert_true(got->seq == want->seq);
  assert_int_equal(got->type, want->type);
  assert_int_equal(got->value_len, want->value_len);
  if (want->value_len) assert_memory_equal(got->value, want->value, want->value_len);
}

static size_t distinct_rows(const kv_cell *c, size_t n) {
  size_t r = 0;
  for (size_t i = 0; i < n; i++)
    if (i == 0 || bytes_cmp(c[i - 1].row, c[i - 1].row_len, c[i].row, c[i].row_len)) r++;
  return r;
}

static void write_file(kv_env *env, const char *path, const kv_cell *cells, size_t n,
                       uint32_t block_size, int compression, kv_sf_props *props) {
  kv_sf_writer_options o = {block_size, compression, 10, 0};
  kv_sf_writer *w = NULL;
  assert_int_equal(kv_sf_writer_open(env, path, &o, &w), KV_OK);
  for (size_t i = 0; i < n; i++) assert_int_equal(kv_sf_writer_add(w, &cells[i]), KV_OK);
  assert_int_equal(kv_sf_writer_finish(w, props), KV_OK);
}

/* First model index >= t (upper: > t). */
static size_t model_find(const kv_cell *c, size_t n, const kv_cell *t, int upper) {
  size_t lo = 0, hi = n;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    int r = model_cmp(&c[mid], t);
    if (r < 0 || (upper && r == 0)) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

static void random_target(uint64_t *s, const kv_cell *cells, size_t n, kv_cell *t,
                          uint8_t *rowbuf) {
  const kv_cell *base = &cells[tu_below(s, n)];
  *t = *base;
  t->value = NULL;
  t->value_len = 0;
  switch (tu_below(s, 6)) {
    case 0: break;                                   /* an existing cell */
    case 1: t->seq += tu_below(s, 3); t->seq -= 1; break;
    case 2: t->ts = (int64_t)((uint64_t)t->ts + tu_below(s, 3) - 1); break;
    case 3: *t = kv_cell_row_first(base->row, base->row_len); break;
    case 4: {                                          /* a random row */
      random_row(s, rowbuf, &t->row_len);
      t->row = rowbuf;
      t->qual = (const uint8_t *)QUALS[tu_below(s, NQUALS)];
      t->qual_len = (uint32_t)strlen((const char *)t->qual);
      break;
    }
    default: t->qual = (const uint8_t *)QUALS[tu_below(s, NQUALS)];
             t->qual_len = (uint32_t)strlen((const char *)t->qual);
  }
}

/* Full forward and reverse scans, then random seeks with a few steps either way. */
static void check_file(kv_env *env, const char *path, const kv_cell *cells, size_t n,
                       uint64_t *s, size_t nseeks) {
  kv_sf_reader *r = NULL;
  assert_int_equal(kv_sf_open(env, path, &r), KV_OK);
  const kv_sf_props *pr = kv_sf_get_props(r);
  assert_int_equal(pr->cells, n);
  assert_int_equal(pr->rows, distinct_rows(cells, n));
  kv_sf_io io = {0};
  kv_iter *it = kv_sf_iter_new(r, &io);
  assert_non_null(it);
  size_t i = 0;
  for (it->ops->seek_first(it); it->ops->valid(it); it->ops->next(it), i++) {
    assert_true(i < n);
    assert_cell_eq(it->ops->cell(it), &cells[i]);
  }
  assert_int_equal(it->ops->status(it), KV_OK);
  assert_int_equal(i, n);
  assert_int_equal(io.blocks_read, pr->blocks);
  assert_int_equal(io.cells_decoded, n);
  assert_true(io.bytes_read > 0 && io.bytes_read < pr->file_size);
  i = n;
  for (it->ops->seek_last(it); it->ops->valid(it); it->ops->prev(it)) {
    assert_true(i > 0);
    assert_cell_eq(it->ops->cell(it), &cells[--i]);
  }
  assert_int_equal(i, 0);
  uint8_t rowbuf[64];
  for (size_t k = 0; k < nseeks; k++) {
    kv_cell t;
    random_target(s, cells, n, &t, rowbuf);
    int for_prev = (int)tu_below(s, 2);
    size_t want = model_find(cells, n, &t, for_prev);
    if (for_prev) {
      it->ops->seek_for_prev(it, &t);
      if (want == 0) { assert_false(it->ops->valid(it)); continue; }
      want--;
    } else {
      it->ops->seek(it, &t);
      if (want == n) { assert_false(it->ops->valid(it)); continue; }
    }
    assert_true(it->ops->valid(it));
    assert_cell_eq(it->ops->cell(it), &cells[want]);
    int steps = (int)tu_below(s, 6), fwd = (int)tu_below(s, 2);
    size_t pos = want;
    for (int j = 0; j < steps; j++) {
      if (fwd) {
        it->ops->next(it);
        if (++pos == n) { assert_false(it->ops->valid(it)); break; }
      } else {
        it->ops->prev(it);
        if (pos-- == 0) { assert_false(it->ops->valid(it)); break; }
      }
      assert_true(it->ops->valid(it));
      assert_cell_eq(it->ops->cell(it), &cells[pos]);
    }
  }
  assert_int_equal(it->ops->status(it), KV_OK);
  it->ops->destroy(it);
  /* Key range and bloom: every row is "maybe present". */
  const uint8_t *f, *l;
  uint32_t fl, ll;
  kv_sf_key_range(r, &f, &fl, &l, &ll);
  assert_int_equal(fl, cells[0].row_len);
  assert_memory_equal(f, cells[0].row, fl);
  assert_int_equal(ll, cells[n - 1].row_len);
  assert_memory_equal(l, cells[n - 1].row, ll);
  for (size_t k = 0; k < n; k++)
    assert_true(kv_sf_may_contain_row(r, cells[k].row, cells[k].row_len));
  kv_sf_close(r);
}

static void test_round_trip(void **state) {
  (void)state;
  uint64_t s = tu_seed("sf_round_trip");
  kv_env *env = kv_env_mem_new(1);
  assert_int_equal(env->mkdir(env, "/t"), KV_OK);
  static const uint32_t block_sizes[] = {64, 512, 0};
  for (int comp = 0; comp < 2; comp++) {
    for (int b = 0; b < 3; b++) {
      arena a = {0};
      size_t n = tu_scaled(20000, 1000);
      kv_cell *cells = random_cells(&s, &a, &n);
      kv_sf_props props;
      int compression = comp ? KV_COMPRESSION_NONE : KV_COMPRESSION_LZ4;
      write_file(env, "/t/a.sf", cells, n, block_sizes[b], compression, &props);
      assert_int_equal(props.cells, n);
      assert_int_equal(props.rows, distinct_rows(cells, n));
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
      check_file(env, "/t/a.sf", cells, n, &s, tu_scaled(5000, 500));
      free(cells);
      arena_free(&a);
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
    arena a = {0};
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
      if (n && bytes_cmp(cells[n - 1].row, klen, key, klen) >= 0) continue;
      const uint8_t *rp = arena_copy(&a, key, klen);
      int per_row = 1 + (int)tu_below(&s, 2);
      for (int q = 0; q < per_row; q++) {
        kv_cell *c = &cells[n++];
        c->row = rp;
        c->row_len = klen;
        c->qual = (const uint8_t *)QUALS[q];
        c->qual_len = QUAL_LEN[q];
        c->ts = 1000;
        c->seq = 5;
        c->type = KV_PUT;
        c->value = arena_copy(&a, &v, 8);
        c->value_len = 8;
      }
    }
    for (int comp = 0; comp < 2; comp++) {
      kv_sf_props props;
      write_file(env, "/t/k.sf", cells, n, 0, comp ? KV_COMPRESSION_NONE : KV_COMPRESSION_LZ4,
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
          size_t want = model_find(cells, n, &t, 0);
          it->ops->seek(it, &t);
          if (want == n) {
            assert_false(it->ops->valid(it));
            continue;
          }
          assert_true(it->ops->valid(it));
          assert_cell_eq(it->ops->cell(it), &cells[want]);
        }
      }
      uint8_t lo[1] = {0}, hi[24];
      memset(hi, 0xFF, sizeof hi);
      kv_cell t = kv_cell_row_first(lo, 1);
      it->ops->seek(it, &t);
      assert_true(it->ops->valid(it));
      assert_cell_eq(it->ops->cell(it), &cells[0]);
      t = kv_cell_row_first(hi, klen);
      it->ops->seek(it, &t);
      assert_false(it->ops->valid(it));
      assert_int_equal(it->ops->status(it), KV_OK);
      it->ops->destroy(it);
      kv_sf_close(r);
    }
    free(cells);
    arena_free(&a);
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
  write_file(env, "/t/one.sf", &c, 1, 0, KV_COMPRESSION_LZ4, &props);
  assert_int_equal(props.blocks, 1);
  check_file(env, "/t/one.sf", &c, 1, &s, 20);
  /* An empty file opens and iterates nothing. */
  write_file(env, "/t/empty.sf", NULL, 0, 0, KV_COMPRESSION_LZ4, &props);
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
  write_file(env, "/t/b.sf", cells, nrows, 4096, KV_COMPRESSION_LZ4, &props);
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
  write_file(env, "/t/big.sf", cells, n, 512, KV_COMPRESSION_LZ4, &props);
  assert_true(props.blocks > 5);
  uint64_t s = 3;
  check_file(env, "/t/big.sf", cells, n, &s, 200);
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

/* Cells [0, n) to w: one by one (rows = 0), or a row's run of cells at a time. */
static void add_cells(kv_sf_writer *w, const kv_cell *c, size_t n, int rows) {
  for (size_t i = 0, j; i < n; i = j) {
    for (j = i + 1; rows && j < n && !bytes_cmp(c[i].row, c[i].row_len, c[j].row, c[j].row_len);)
      j++;
    if (!rows) j = i + 1;
    assert_int_equal(rows ? kv_sf_writer_add_row(w, c + i, j - i) : kv_sf_writer_add(w, c + i),
                     KV_OK);
  }
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
    arena a = {0};
    size_t n = 1 + tu_below(&s, 4000);
    kv_cell *cells = random_cells(&s, &a, &n);
    kv_sf_writer_options o = {sizes[round % 3], round & 1 ? KV_COMPRESSION_LZ4
                                                          : KV_COMPRESSION_NONE, 10, 0};
    const char *path[2] = {"/t/one.sf", "/t/rows.sf"};
    for (int rows = 0; rows < 2; rows++) {
      kv_sf_writer *w;
      assert_int_equal(kv_sf_writer_open(env, path[rows], &o, &w), KV_OK);
      add_cells(w, cells, n, rows);
      assert_int_equal(kv_sf_writer_finish(w, NULL), KV_OK);
    }
    assert_same_file(env, path[0], path[1]);
    /* segments: every cell of one sequence number (equal keys then dropped) */
    size_t m = 0;
    for (size_t i = 0; i < n; i++) cells[i].seq = 9;
    qsort(cells, n, sizeof *cells, qsort_cmp);
    for (size_t i = 0; i < n; i++) {
      if (m == 0 || model_cmp(&cells[m - 1], &cells[i]) != 0) cells[m++] = cells[i];
    }
    for (int rows = 0; rows < 2; rows++) {
      kv_sf_writer *g, *w;
      kv_sf_seg *seg;
      assert_int_equal(kv_sf_seg_open(&o, &g), KV_OK);
      add_cells(g, cells, m, rows);
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
    arena_free(&a);
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
    arena a = {0};
    size_t n = 2000 + tu_below(&s, 4000);
    kv_cell *cells = random_cells(&s, &a, &n);
    uint32_t bs = sizes[round % 3];
    kv_sf_writer_options o = {bs, round & 1 ? KV_COMPRESSION_LZ4 : KV_COMPRESSION_NONE, 10, 0};
    kv_sf_writer *w;
    assert_int_equal(kv_sf_writer_open(env, "/t/ends.sf", &o, &w), KV_OK);
    add_cells(w, cells, n, round >= 3);
    assert_int_equal(kv_sf_writer_finish(w, NULL), KV_OK);
    kv_sf_reader *r = NULL;
    assert_int_equal(kv_sf_open(env, "/t/ends.sf", &r), KV_OK);
    assert_true(r->nblocks > 3);
    size_t at = 0, cut_small = 0, cuts = 0;
    for (uint32_t b = 0; b < r->nblocks; b++) {
      if (b > 0 && !bytes_cmp(cells[at - 1].row, cells[at - 1].row_len, cells[at].row,
                              cells[at].row_len)) { /* the row of cells[at] goes on here */
        size_t r0 = at, r1 = at;
        while (r0 > 0 && !bytes_cmp(cells[r0 - 1].row, cells[r0 - 1].row_len, cells[at].row,
                                    cells[at].row_len))
          r0--;
        while (r1 < n && !bytes_cmp(cells[r1].row, cells[r1].row_len, cells[at].row,
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
    add_cells(w, row, m, round >= 3);
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
    arena_free(&a);
  }
  kv_env_free(env);
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

/* Format versions: files are written as version 2, whose large lz4 blocks are framed in
** sections and read back whole (forward, reverse, seeks); a version 1 file (no sectioned
** blocks) still reads; a version the reader does not know is refused by name. */
static void test_format_versions(void **state) {
  (void)state;
  uint64_t s = tu_seed("sf_versions");
  kv_env *env = kv_env_mem_new(1);
  assert_int_equal(env->mkdir(env, "/t"), KV_OK);
  arena a = {0};
  size_t n = 6000;
  kv_cell *cells = random_cells(&s, &a, &n);
  kv_sf_props props;
  const char *path = "/t/v.sf";
  write_file(env, path, cells, n, 32768, KV_COMPRESSION_LZ4, &props);
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
  check_file(env, path, cells, n, &s, 300);
  /* small blocks are framed whole: the same file as version 1 reads the same */
  write_file(env, path, cells, n, 1024, KV_COMPRESSION_LZ4, &props);
  set_version(env, path, props.file_size, 1);
  assert_int_equal(kv_sf_open(env, path, &r), KV_OK);
  assert_int_equal(kv_sf_get_props(r)->format_version, 1);
  kv_sf_close(r);
  check_file(env, path, cells, n, &s, 100);
  set_version(env, path, props.file_size, 3);
  assert_int_equal(kv_sf_open(env, path, &r), KV_ERR_CORRUPT);
  assert_non_null(strstr(kv_errmsg(), "unsupported format version"));
  free(cells);
  arena_free(&a);
  kv_env_free(env);
}

static void test_corruption_sections(void **state) {
  (void)state;
  uint64_t s = tu_seed("sf_corruption");
  kv_env *env = kv_env_mem_new(1);
  assert_int_equal(env->mkdir(env, "/t"), KV_OK);
  arena a = {0};
  size_t n = 3000;
  kv_cell *cells = random_cells(&s, &a, &n);
  kv_sf_props props;
  const char *path = "/t/c.sf";
  write_file(env, path, cells, n, 1024, KV_COMPRESSION_LZ4, &props);
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
    write_file(env, copy, cells, n, 1024, KV_COMPRESSION_LZ4, &props);
    assert_int_equal(kv_env_mem_shrink(env, copy, cut), KV_OK);
    assert_int_equal(open_and_scan(env, copy, &seen), KV_ERR_CORRUPT);
    assert_non_null(strstr(kv_errmsg(), "offset"));
  }
  free(cells);
  arena_free(&a);
  kv_env_free(env);
}

/* Every single byte of a small file is covered by a checksum: flipping any one of them is
** reported as corruption by open or by a full scan, and never goes unnoticed. */
static void test_corruption_every_byte(void **state) {
  (void)state;
  uint64_t s = tu_seed("sf_every_byte");
  kv_env *env = kv_env_mem_new(1);
  assert_int_equal(env->mkdir(env, "/t"), KV_OK);
  arena a = {0};
  size_t n = 60;
  kv_cell *cells = random_cells(&s, &a, &n);
  kv_sf_props props;
  for (int comp = 0; comp < 2; comp++) {
    const char *path = "/t/e.sf";
    write_file(env, path, cells, n, 200, comp ? KV_COMPRESSION_NONE : KV_COMPRESSION_LZ4,
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
  arena_free(&a);
  kv_env_free(env);
}

/* A failed write reaches the caller, and the reader is not fooled by the partial file. */
static void test_write_error(void **state) {
  (void)state;
  kv_env *env = kv_env_mem_new(1);
  assert_int_equal(env->mkdir(env, "/t"), KV_OK);
  uint64_t s = 7;
  arena a = {0};
  size_t n = 2000;
  kv_cell *cells = random_cells(&s, &a, &n);
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
  arena_free(&a);
  kv_env_free(env);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_round_trip),
    cmocka_unit_test(test_fixed_keys_seek),
    cmocka_unit_test(test_one_cell_and_empty),
    cmocka_unit_test(test_rejects_out_of_order),
    cmocka_unit_test(test_add_row_same_bytes),
    cmocka_unit_test(test_blocks_end_at_rows),
    cmocka_unit_test(test_bloom_and_estimate),
    cmocka_unit_test(test_bloom_module),
    cmocka_unit_test(test_big_cells),
    cmocka_unit_test(test_format_versions),
    cmocka_unit_test(test_corruption_sections),
    cmocka_unit_test(test_corruption_every_byte),
    cmocka_unit_test(test_write_error),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
