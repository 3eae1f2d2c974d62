/*
** tests/tu_blocks.h: random store-file blocks for the tests of kv/'s block decoders
** (tests/kv/test_sf_cblock.c, tests/kv/test_sf_point.c): a model block as a list of cells in
** cell order (tb_cellset), a generator of random ones in every row key mode (keys of varied
** lengths, one length with a short suffix, one length with a long one), one to 300
** qualifiers, tombstones, several versions, timestamps per row or per cell, compacted or not,
** fixed and variable value widths; the builder run that turns one into a raw block; a cell of
** a compact block read through the rank cursor as the store-file iterator reads it; and the
** cell comparison. Include after <cmocka.h>, kv/sf/sf_cblock.h (or kv/sf/sf_point.h) and
** testutil.h: failures fail the test through cmocka's asserts. Not for engine code.
*/
#ifndef ROWAN_TESTS_TU_BLOCKS_H
#define ROWAN_TESTS_TU_BLOCKS_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#define TB_MAXC 6000 /* cells a model block holds at most */

typedef struct tb_cellset {
  kv_cell c[TB_MAXC];     /* the cells, in order */
  uint8_t bytes[1 << 20]; /* their row, qualifier and value bytes */
  size_t n, used;         /* cells / bytes in use */
} tb_cellset;

/* Options of tb_random_set. */
enum {
  TB_SOMETIMES_ONE_ROW = 1, /* one block in eight has a single row */
  TB_EVERY_ROW_A_CELL = 2   /* a row the draw left empty gets one put (else it is left out) */
};

static inline const uint8_t *tb_stash(tb_cellset *s, const void *p, size_t n) {
  assert_true(s->used + n <= sizeof s->bytes);
  uint8_t *d = s->bytes + s->used;
  if (n) memcpy(d, p, n);
  s->used += n;
  return d;
}

/* Append a cell (its bytes copied into s). */
static inline void tb_add(tb_cellset *s, const uint8_t *row, uint32_t rl, const uint8_t *q,
                          uint32_t ql, int64_t ts, uint64_t seq, uint8_t type,
                          const uint8_t *val, uint32_t vl) {
  assert_true(s->n < TB_MAXC);
  kv_cell *c = &s->c[s->n++];
  c->row = tb_stash(s, row, rl);
  c->row_len = rl;
  c->qual = tb_stash(s, q, ql);
  c->qual_len = ql;
  c->ts = ts;
  c->seq = seq;
  c->type = type;
  c->value = tb_stash(s, val, vl);
  c->value_len = vl;
}

/* A random block's cells in cell order into s, drawn from PRNG state st; opts: TB_* bits.
** Key modes: 0 lengths vary (prefix coding, maybe an empty first key), 1 one length with a
** suffix of at most 8 bytes (delta), 2 one length with a longer suffix (transposed). */
static inline void tb_random_set(uint64_t *st, tb_cellset *s, unsigned opts) {
  s->n = s->used = 0;
  int kmode = (int)tu_below(st, 3);
  uint32_t nq = 1 + (uint32_t)tu_below(st, tu_below(st, 4) == 0 ? 300 : 14);
  uint32_t klen = kmode == 2 ? 20 : 12;
  uint8_t row[24], val[64], qb[8];
  memset(row, 'k', sizeof row);
  size_t nrows = 1 + tu_below(st, tu_below(st, 3) == 0 ? 400 : 30);
  if ((opts & TB_SOMETIMES_ONE_ROW) && tu_below(st, 8) == 0) nrows = 1;
  int64_t base_ts = tu_below(st, 3) == 0 ? -5000 : 1700000000000;
  bool row_ts = tu_below(st, 2) == 0, compacted = tu_below(st, 3) == 0;
  bool puts_only = tu_below(st, 3) == 0;   /* no type array: the rank cursor's fast path */
  bool one_version = tu_below(st, 2) == 0; /* one cell per column: a simple block when puts
                                              only (kv_sf_cblock.one_put_per_col) */
  bool fixed_q[300];
  for (uint32_t q = 0; q < nq; q++) fixed_q[q] = tu_below(st, 3) != 0;
  for (size_t r = 0; r < nrows && s->n + 3 * nq < TB_MAXC; r++) {
    uint32_t rl = kmode == 0 ? 1 + (uint32_t)tu_below(st, 12) : klen;
    if (kmode == 0 && r == 0 && tu_below(st, 6) == 0) rl = 0; /* an empty key sorts first */
    if (rl == 0 && tu_below(st, 2)) nrows = 1;                 /* alone: a key length of 0 */
    size_t lo = kmode == 1 ? klen - 3 : kmode == 2 ? 4 : 0;
    size_t pos = lo + tu_below(st, rl - lo);
    row[pos]++;
    for (size_t j = pos + 1; j < sizeof row; j++) row[j] = (uint8_t)(tu_below(st, 2) * 0xFF);
    if (s->n && kv_bytes_cmp(s->c[s->n - 1].row, s->c[s->n - 1].row_len, row, rl) >= 0)
      continue;
    int64_t ts = base_ts + (int64_t)tu_below(st, row_ts ? 100000 : 3);
    size_t row_start = s->n;
    if (!puts_only && tu_below(st, 20) == 0) /* a DeleteFamily marker first (empty qual) */
      tb_add(s, row, rl, (const uint8_t *)"", 0, ts + 7, compacted ? 0 : 9, KV_DELETE_FAMILY,
             val, 0);
    for (uint32_t q = 0; q < nq; q++) {
      if (tu_below(st, 4) == 0) continue;
      qb[0] = 'q';
      qb[1] = (uint8_t)(q >> 8);
      qb[2] = (uint8_t)q;
      uint32_t nv = !one_version && tu_below(st, 6) == 0 ? 1 + (uint32_t)tu_below(st, 3) : 1;
      int64_t t = row_ts ? ts : ts + (int64_t)tu_below(st, 50);
      for (uint32_t v = 0; v < nv; v++, t -= 1 + (int64_t)tu_below(st, 5)) {
        uint8_t type = puts_only || tu_below(st, 8) ? KV_PUT : (uint8_t)(1 + tu_below(st, 2));
        uint32_t vl = type != KV_PUT ? 0 : fixed_q[q] ? (q % 3 == 0 ? 8 : q % 3 == 1 ? 4 : 0)
                                                      : (uint32_t)tu_below(st, 20);
        for (uint32_t j = 0; j < vl; j++) val[j] = (uint8_t)tu_rand(st);
        tb_add(s, row, rl, qb, 3, t, compacted ? 0 : 100 + tu_below(st, 100000), type, val, vl);
      }
    }
    if ((opts & TB_EVERY_ROW_A_CELL) && s->n == row_start)
      tb_add(s, row, rl, (const uint8_t *)"q\0\0", 3, ts, 5, KV_PUT, val, 0);
  }
  if (s->n == 0) tb_add(s, (const uint8_t *)"z", 1, (const uint8_t *)"q", 1, 1, 1, KV_PUT,
                        (const uint8_t *)"v", 1);
}

/* Encode s's cells into builder b (reset first): b then holds the raw block. */
static inline void tb_build(kv_sfb_builder *b, const tb_cellset *s) {
  kv_sfb_reset(b);
  for (size_t i = 0; i < s->n; i++) {
    int new_row = i == 0 || kv_bytes_cmp(s->c[i - 1].row, s->c[i - 1].row_len, s->c[i].row,
                                         s->c[i].row_len) != 0;
    assert_int_equal(kv_sfb_add(b, &s->c[i], new_row), KV_OK);
  }
  assert_int_equal(kv_sfb_encode(b), KV_OK);
}

/* Cell ci (of row ri) of compact block b into *out, its value found through rank cursor rp
** as the store-file iterator finds it: fixed-width values whole in cvals when the block is
** packed (or a point decoder's), where they lie in a decimal-scaled group's rebuilt values,
** else un-transposed into vbuf (at least 64 bytes); the key
** rebuilt into kbuf (b->max_key + 1 bytes at least). */
static inline void tb_cblock_cell(const kv_sf_cblock *b, kv_sf_rankpos *rp, uint32_t ri,
                                  uint32_t ci, uint8_t *kbuf, uint8_t *vbuf, kv_cell *out) {
  out->row = kv_sf_cblock_key(b, ri, kbuf, &out->row_len);
  uint32_t q = (uint32_t)kv_sf_pa_get(&b->qual, ci);
  assert_true(q < b->nquals);
  out->qual = b->dict + b->q_off[q];
  out->qual_len = b->q_len[q];
  out->ts = kv_sf_cblock_ts(b, ri, ci);
  out->seq = kv_sf_pa_get(&b->seq, ci);
  out->type = (uint8_t)kv_sf_pa_get(&b->type, ci);
  const kv_sf_cgroup *g = &b->groups[kv_sf_cblock_group(b, ci)];
  uint32_t rank = kv_sf_cblock_rank(b, rp, ci);
  assert_true(rank < g->count);
  if (g->fixed && b->cvals) { /* whole values in cell order */
    out->value = b->cvals + rp->ranks[b->nquals + 1];
    out->value_len = g->width;
  } else if (g->fixed && !g->transposed) { /* a decimal-scaled group: value by value */
    assert_true(g->dec);
    out->value = g->data + (size_t)rank * g->width;
    out->value_len = g->width;
  } else if (g->fixed) {
    for (uint32_t j = 0; j < g->width; j++) vbuf[j] = g->data[(size_t)j * g->count + rank];
    out->value = vbuf;
    out->value_len = g->width;
  } else {
    uint64_t o = kv_sf_pa_get(&g->voff, rank);
    out->value = g->data + o;
    out->value_len = (uint32_t)(kv_sf_pa_get(&g->voff, rank + 1) - o);
  }
}

/* Cell c equals cell w in every field (bytes compared). */
static inline void tb_cell_eq(const kv_cell *c, const kv_cell *w) {
  assert_int_equal(c->row_len, w->row_len);
  if (w->row_len) assert_memory_equal(c->row, w->row, w->row_len);
  assert_int_equal(c->qual_len, w->qual_len);
  if (w->qual_len) assert_memory_equal(c->qual, w->qual, w->qual_len);
  assert_true(c->ts == w->ts);
  assert_true(c->seq == w->seq);
  assert_int_equal(c->type, w->type);
  assert_int_equal(c->value_len, w->value_len);
  if (w->value_len) assert_memory_equal(c->value, w->value, w->value_len);
}

#endif /* ROWAN_TESTS_TU_BLOCKS_H */
