/*
** tests/tu_sf.h: the model the store file tests check kv/sf/sf.h against (tests/kv/test_sf.c,
** tests/kv/test_sf_layout.c): a plain sorted array of cells ordered by the test's own
** comparator (written from the order in DESIGN.md, not kv/util/cell.h), random distinct cells
** (row keys with 0x00/0xFF bytes and shared prefixes, several qualifiers, versions,
** tombstones, fixed and variable widths, empty values) kept in an arena, a file written from
** them, and tsf_check_file: full forward and reverse scans, seek and seek_for_prev to random
** targets with steps either way, the key range and the bloom filter, all against the array.
** Include after <cmocka.h>, kv/sf/sf.h and testutil.h: failures fail the test through cmocka's
** asserts. Not for engine code.
*/
#ifndef ROWAN_TESTS_TU_SF_H
#define ROWAN_TESTS_TU_SF_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>


typedef struct tsf_arena {
  uint8_t **chunks; /* allocated chunks */
  size_t n, cap;    /* chunks in use / slots allocated */
} tsf_arena;

static inline uint8_t *tsf_arena_copy(tsf_arena *a, const void *p, size_t n) {
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

static inline void tsf_arena_free(tsf_arena *a) {
  for (size_t i = 0; i < a->n; i++) free(a->chunks[i]);
  free(a->chunks);
  memset(a, 0, sizeof *a);
}

static inline int tsf_bytes_cmp(const uint8_t *a, uint32_t al, const uint8_t *b, uint32_t bl) {
  for (uint32_t i = 0; i < al && i < bl; i++)
    if (a[i] != b[i]) return a[i] < b[i] ? -1 : 1;
  return al == bl ? 0 : (al < bl ? -1 : 1);
}

/* Row asc, qualifier asc, timestamp desc, sequence desc, type desc. */
static inline int tsf_model_cmp(const kv_cell *a, const kv_cell *b) {
  int c = tsf_bytes_cmp(a->row, a->row_len, b->row, b->row_len);
  if (c) return c;
  c = tsf_bytes_cmp(a->qual, a->qual_len, b->qual, b->qual_len);
  if (c) return c;
  if (a->ts != b->ts) return a->ts < b->ts ? 1 : -1;
  if (a->seq != b->seq) return a->seq < b->seq ? 1 : -1;
  if (a->type != b->type) return a->type < b->type ? 1 : -1;
  return 0;
}

static inline int tsf_qsort_cmp(const void *a, const void *b) { return tsf_model_cmp(a, b); }

static const char *const TSF_QUALS[] = {"", "\x00", "a", "b", "temp", "\xff\xff", "wd",
                                    "a-long-qualifier-name"};
static const uint32_t TSF_QUAL_LEN[] = {0, 1, 1, 1, 4, 2, 2, 21};
#define TSF_NQUALS 8

static inline void tsf_random_row(uint64_t *s, uint8_t *buf, uint32_t *len) {
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
static inline kv_cell *tsf_random_cells(uint64_t *s, tsf_arena *a, size_t *np) {
  size_t want = *np, n = 0;
  kv_cell *cells = calloc(want + 64, sizeof *cells);
  assert_non_null(cells);
  static const int64_t ts_pool[] = {0, -5, 1000, 1700000000000, INT64_MAX, INT64_MIN + 1};
  uint8_t row[64], val[300];
  while (n < want) {
    uint32_t rlen;
    tsf_random_row(s, row, &rlen);
    const uint8_t *rp = tsf_arena_copy(a, row, rlen);
    int per_row = 1 + (int)tu_below(s, 14);
    for (int k = 0; k < per_row && n < want + 63; k++) {
      kv_cell *c = &cells[n++];
      int qi = (int)tu_below(s, TSF_NQUALS);
      c->row = rp;
      c->row_len = rlen;
      c->qual = (const uint8_t *)TSF_QUALS[qi];
      c->qual_len = TSF_QUAL_LEN[qi];
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
      c->value = tsf_arena_copy(a, val, vlen);
      c->value_len = vlen;
    }
  }
  qsort(cells, n, sizeof *cells, tsf_qsort_cmp);
  size_t m = 0;
  for (size_t i = 0; i < n; i++)
    if (m == 0 || tsf_model_cmp(&cells[m - 1], &cells[i]) != 0) cells[m++] = cells[i];
  *np = m;
  return cells;
}

static inline void tsf_assert_cell_eq(const kv_cell *got, const kv_cell *want) {
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

static inline size_t tsf_distinct_rows(const kv_cell *c, size_t n) {
  size_t r = 0;
  for (size_t i = 0; i < n; i++)
    if (i == 0 || tsf_bytes_cmp(c[i - 1].row, c[i - 1].row_len, c[i].row, c[i].row_len)) r++;
  return r;
}

static inline void tsf_write_file(kv_env *env, const char *path, const kv_cell *cells, size_t n,
                       uint32_t block_size, int compression, kv_sf_props *props) {
  kv_sf_writer_options o = {block_size, compression, 10, 0};
  kv_sf_writer *w = NULL;
  assert_int_equal(kv_sf_writer_open(env, path, &o, &w), KV_OK);
  for (size_t i = 0; i < n; i++) assert_int_equal(kv_sf_writer_add(w, &cells[i]), KV_OK);
  assert_int_equal(kv_sf_writer_finish(w, props), KV_OK);
}

/* First model index >= t (upper: > t). */
static inline size_t tsf_model_find(const kv_cell *c, size_t n, const kv_cell *t, int upper) {
  size_t lo = 0, hi = n;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    int r = tsf_model_cmp(&c[mid], t);
    if (r < 0 || (upper && r == 0)) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

static inline void tsf_random_target(uint64_t *s, const kv_cell *cells, size_t n, kv_cell *t,
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
      tsf_random_row(s, rowbuf, &t->row_len);
      t->row = rowbuf;
      t->qual = (const uint8_t *)TSF_QUALS[tu_below(s, TSF_NQUALS)];
      t->qual_len = (uint32_t)strlen((const char *)t->qual);
      break;
    }
    default: t->qual = (const uint8_t *)TSF_QUALS[tu_below(s, TSF_NQUALS)];
             t->qual_len = (uint32_t)strlen((const char *)t->qual);
  }
}

/* Full forward and reverse scans, then random seeks with a few steps either way. */
static inline void tsf_check_file(kv_env *env, const char *path, const kv_cell *cells, size_t n,
                       uint64_t *s, size_t nseeks) {
  kv_sf_reader *r = NULL;
  assert_int_equal(kv_sf_open(env, path, &r), KV_OK);
  const kv_sf_props *pr = kv_sf_get_props(r);
  assert_int_equal(pr->cells, n);
  assert_int_equal(pr->rows, tsf_distinct_rows(cells, n));
  kv_sf_io io = {0};
  kv_iter *it = kv_sf_iter_new(r, &io);
  assert_non_null(it);
  size_t i = 0;
  for (it->ops->seek_first(it); it->ops->valid(it); it->ops->next(it), i++) {
    assert_true(i < n);
    tsf_assert_cell_eq(it->ops->cell(it), &cells[i]);
  }
  assert_int_equal(it->ops->status(it), KV_OK);
  assert_int_equal(i, n);
  assert_int_equal(io.blocks_read, pr->blocks);
  assert_int_equal(io.cells_decoded, n);
  assert_true(io.bytes_read > 0 && io.bytes_read < pr->file_size);
  i = n;
  for (it->ops->seek_last(it); it->ops->valid(it); it->ops->prev(it)) {
    assert_true(i > 0);
    tsf_assert_cell_eq(it->ops->cell(it), &cells[--i]);
  }
  assert_int_equal(i, 0);
  uint8_t rowbuf[64];
  for (size_t k = 0; k < nseeks; k++) {
    kv_cell t;
    tsf_random_target(s, cells, n, &t, rowbuf);
    int for_prev = (int)tu_below(s, 2);
    size_t want = tsf_model_find(cells, n, &t, for_prev);
    if (for_prev) {
      it->ops->seek_for_prev(it, &t);
      if (want == 0) { assert_false(it->ops->valid(it)); continue; }
      want--;
    } else {
      it->ops->seek(it, &t);
      if (want == n) { assert_false(it->ops->valid(it)); continue; }
    }
    assert_true(it->ops->valid(it));
    tsf_assert_cell_eq(it->ops->cell(it), &cells[want]);
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
      tsf_assert_cell_eq(it->ops->cell(it), &cells[pos]);
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

/* Cells [0, n) to w: one by one (rows = 0), or a row's run of cells at a time. */
static inline void tsf_add_cells(kv_sf_writer *w, const kv_cell *c, size_t n, int rows) {
  for (size_t i = 0, j; i < n; i = j) {
    for (j = i + 1;
         rows && j < n && !tsf_bytes_cmp(c[i].row, c[i].row_len, c[j].row, c[j].row_len);)
      j++;
    if (!rows) j = i + 1;
    assert_int_equal(rows ? kv_sf_writer_add_row(w, c + i, j - i) : kv_sf_writer_add(w, c + i),
                     KV_OK);
  }
}

#endif /* ROWAN_TESTS_TU_SF_H */
