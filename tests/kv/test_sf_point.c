/*
** tests/kv/test_sf_point.c: the point decoder (kv/sf/sf_point.h) against the per-cell decoder
** (kv_sf_block_decode) on the same raw blocks. Random blocks in every row key mode (keys
** of different lengths, one length with suffixes of at most 8 bytes and longer), one row or
** hundreds, one qualifier, a few, or hundreds (dictionary indexes of two bytes),
** tombstones of every type, several versions, timestamps per row or per cell, compacted
** (sequence numbers 0) or not, fixed-width (0, 4, 8 bytes) and variable-width values, empty
** ones. Each block is asked for keys equal to its rows, just below and above them, before
** the first and after the last, prefixes and extensions; the rows given must be the first
** one at or above the key and those after it, cell for cell (key, qualifier, timestamp,
** sequence number, type, value, read through the rank cursor as the iterator reads them),
** and the block facts the fast row path reads must hold for those rows. Range decodes
** (kv_sf_point_decode_to) as well: the rows from the first at or above the key up to and
** including the first at or above a stop key (or none), of any count, against the same. Damaged and
** truncated blocks: the point decoder never reads outside the block (the sanitizer build
** checks) and, on every block the whole-block decoder accepts, agrees with it. Blocks shaped
** as a key family's (thousands of rows of one put each, one qualifier) for the decoder's
** shortcuts on them; blocks shaped as a sensor table's (most rows every column) for its
** counting of value groups a row at a time.
** Seeded: the seed is printed; ROWAN_SEED reruns it.
** Not here: the store file iterator on top of it (test_sf_point_reads.c).
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "kv/sf/sf_point.h"
#include "testutil.h"
#include "tu_blocks.h"

static size_t n_found[3]; /* checks that landed on: no row, an equal row, a greater row */
static size_t n_stopped;  /* range decodes whose rows ended at the stop key, not before */

/* Decode for key t: a point read's few rows, or (one time in two) a range read's, up to a
** stop key made by make_target (or none) and at most a random or no count of rows. */
static uint32_t make_target(uint64_t *st, const kv_sf_dblock *d, uint8_t *t);
static int decode_some(uint64_t *st, kv_sf_pdec *w, const kv_sf_dblock *d, const uint8_t *raw,
                       size_t len, const uint8_t *t, uint32_t tl, uint8_t *stop,
                       const uint8_t **stop_p, uint32_t *stop_len, uint32_t *want,
                       const char **why) {
  *stop_p = NULL;
  *stop_len = 0;
  if (tu_below(st, 2)) {
    *want = 1 + (uint32_t)tu_below(st, 4);
    return kv_sf_point_decode(w, raw, len, t, tl, *want, why);
  }
  *want = tu_below(st, 2) ? UINT32_MAX : 1 + (uint32_t)tu_below(st, 64);
  if (tu_below(st, 5)) {
    *stop_len = make_target(st, d, stop);
    *stop_p = stop;
  }
  return kv_sf_point_decode_to(w, raw, len, t, tl, *stop_p, *stop_len, *want, why);
}

/* The point decoder's answer for key t (want rows) against the whole block d: the first row
** at or above t (with `sorted`: a damaged block's keys may be out of order, and then the
** row it chose is taken as it is), then the rows after it, every cell equal; its block
** facts those of its cells. */
static void check_point(const kv_sf_pdec *w, const kv_sf_dblock *d, const uint8_t *t,
                        uint32_t tl, const uint8_t *stop, uint32_t stop_len, uint32_t want,
                        bool sorted) {
  uint32_t R = 0;
  while (R < d->nrows && kv_bytes_cmp(d->keys + d->row_off[R],
                                      d->row_off[R + 1] - d->row_off[R], t, tl) < 0)
    R++;
  assert_int_equal(w->block_rows, d->nrows);
  assert_int_equal(w->block_cells, d->ncells);
  if (!sorted) {
    assert_true(w->first_row <= d->nrows);
    R = w->first_row;
  }
  assert_int_equal(w->first_row, R);
  const kv_sf_cblock *b = &w->b;
  if (R == d->nrows) {
    assert_int_equal(b->nrows, 0);
    if (sorted) n_found[0]++;
    return;
  }
  if (sorted)
    n_found[kv_bytes_cmp(d->keys + d->row_off[R], d->row_off[R + 1] - d->row_off[R], t, tl) == 0
                ? 1 : 2]++;
  uint32_t m = 0; /* want rows, up to and including the first at or above stop */
  while (R + m < d->nrows && m < want) {
    m++;
    if (stop && kv_bytes_cmp(d->keys + d->row_off[R + m - 1],
                             d->row_off[R + m] - d->row_off[R + m - 1], stop, stop_len) >= 0)
      break;
  }
  if (stop && R + m < d->nrows && m < want) n_stopped++;
  assert_int_equal(b->nrows, m);
  assert_int_equal(b->nquals, d->nquals);
  uint32_t c0 = d->row_first[R], c1 = d->row_first[R + m];
  assert_int_equal(b->ncells, c1 - c0);
  kv_sf_rankpos rp = {0};
  rp.at = UINT32_MAX;
  assert_int_equal(kv_sf_grow((void **)&rp.ranks, &rp.cap, b->nquals + 2, 4), KV_OK);
  uint8_t *kbuf = malloc(b->max_key + 1), vbuf[64];
  assert_non_null(kbuf);
  bool one = true;
  uint64_t max_seq = 0;
  int64_t min_ts = INT64_MAX, max_ts = INT64_MIN;
  /* forward, then backward: the rank cursor must give the same from either side */
  for (int pass = 0; pass < 2; pass++) {
    for (uint32_t k = 0; k < c1 - c0; k++) {
      uint32_t i = pass == 0 ? k : c1 - c0 - 1 - k;
      uint32_t r = 0;
      while (kv_sf_pa_get(&b->row_first, r + 1) <= i) r++;
      assert_true(kv_sf_pa_get(&b->row_first, r) == d->row_first[R + r] - c0);
      kv_cell c, x;
      assert_non_null(b->cvals); /* a point decoder's values are whole */
      tb_cblock_cell(b, &rp, r, i, kbuf, vbuf, &c);
      kv_sf_dblock_cell(d, R + r, c0 + i, &x);
      tb_cell_eq(&c, &x);
      if (pass) continue;
      if (x.type != KV_PUT) one = false;
      if (i > d->row_first[R + r] - c0) {
        kv_cell y;
        kv_sf_dblock_cell(d, R + r, c0 + i - 1, &y);
        if (kv_bytes_cmp(y.qual, y.qual_len, x.qual, x.qual_len) == 0) one = false;
      }
      if (x.seq > max_seq) max_seq = x.seq;
      if (x.ts < min_ts) min_ts = x.ts;
      if (x.ts > max_ts) max_ts = x.ts;
    }
  }
  assert_int_equal(b->one_put_per_col, one);
  assert_true(b->max_seq == max_seq);
  assert_true(b->min_ts == min_ts);
  assert_true(b->max_ts == max_ts);
  for (uint32_t r = 0; r < m; r++) /* keys compare as the block's own */
    assert_int_equal(kv_sf_cblock_key_cmp(b, r, d->keys + d->row_off[R + r],
                                          d->row_off[R + r + 1] - d->row_off[R + r]), 0);
  free(kbuf);
  free(rp.ranks);
}

/* Keys to ask block d for: its rows' keys, each one byte lower or higher at a random
** place, cut short, extended by 0x00 or 0xFF, the empty key and a key above every row. */
static uint32_t make_target(uint64_t *st, const kv_sf_dblock *d, uint8_t *t) {
  uint32_t r = (uint32_t)tu_below(st, d->nrows);
  uint32_t kl = d->row_off[r + 1] - d->row_off[r];
  memcpy(t, d->keys + d->row_off[r], kl);
  switch (tu_below(st, 8)) {
    case 0: case 1: case 2: return kl;
    case 3: if (kl) t[tu_below(st, kl)]--; return kl;
    case 4: if (kl) t[tu_below(st, kl)]++; return kl;
    case 5: return kl ? (uint32_t)tu_below(st, kl) : 0;
    case 6: t[kl] = tu_below(st, 2) ? 0x00 : 0xFF; return kl + 1;
    default:
      if (tu_below(st, 2)) return 0;
      memset(t, 0xFF, 30);
      return 30;
  }
}

/* The block bld just built, decoded whole into *d (its counts stay there for the caller),
** then n point or range decodes of it (decode_some) checked against *d (check_point). */
static void check_built(uint64_t *st, const kv_sfb_builder *bld, kv_sf_pdec *w,
                        kv_sf_dblock *d, size_t round, int n) {
  uint8_t t[64], stop[64];
  uint8_t *raw = malloc(bld->out.len);
  assert_non_null(raw);
  memcpy(raw, bld->out.p, bld->out.len);
  const char *why = NULL;
  assert_int_equal(kv_sf_block_decode(d, raw, bld->out.len, &why), KV_OK);
  for (int k = 0; k < n; k++) {
    uint32_t tl = make_target(st, d, t);
    uint32_t want, sl;
    const uint8_t *sp;
    int rc = decode_some(st, w, d, raw, bld->out.len, t, tl, stop, &sp, &sl, &want, &why);
    if (rc) fail_msg("round %zu: point decode failed: %s", round, why ? why : "?");
    check_point(w, d, t, tl, sp, sl, want, true);
  }
  free(raw);
}

/* Random blocks, random keys: the point decoder's rows are the whole decoder's. */
static void test_point_rows(void **state) {
  (void)state;
  uint64_t st = tu_seed("sf_point_rows");
  static tb_cellset s;
  kv_sfb_builder bld;
  kv_sfb_init(&bld);
  kv_sf_pdec w;
  memset(&w, 0, sizeof w);
  kv_sf_dblock d;
  memset(&d, 0, sizeof d);
  size_t rounds = tu_scaled(400, 60), one_row = 0;
  for (size_t round = 0; round < rounds; round++) {
    tb_random_set(&st, &s, TB_SOMETIMES_ONE_ROW | TB_EVERY_ROW_A_CELL);
    tb_build(&bld, &s);
    check_built(&st, &bld, &w, &d, round, 40);
    if (d.nrows == 1) one_row++;
  }
  fprintf(stderr, "[sf_point] %zu blocks (%zu of one row): %zu keys above every row, %zu "
          "equal to a row, %zu below one\n", rounds, one_row, n_found[0], n_found[1],
          n_found[2]);
  fprintf(stderr, "[sf_point] %zu range decodes ended at their stop key\n", n_stopped);
  assert_true(n_found[0] > 0 && n_found[1] > 0 && n_found[2] > 0 && one_row > 0);
  assert_true(n_stopped > 0);
  kv_sf_dblock_free(&d);
  kv_sf_pdec_free(&w);
  kv_sfb_free(&bld);
}

/* Blocks shaped as a table's key family's: hundreds to thousands of rows of one cell each,
** one qualifier, puts only (the cells-per-row stream all ones, one value group holding every
** cell; empty values or 8-byte ones), keys of one length (delta or transposed) or of
** several; one block in three breaks the shape (a tombstone, or a row of two cells) so the
** general paths answer too. Point and range decodes against the whole decoder, as
** test_point_rows. */
static void test_point_key_family(void **state) {
  (void)state;
  uint64_t st = tu_seed("sf_point_key_family");
  static tb_cellset s;
  kv_sfb_builder bld;
  kv_sfb_init(&bld);
  kv_sf_pdec w;
  memset(&w, 0, sizeof w);
  kv_sf_dblock d;
  memset(&d, 0, sizeof d);
  size_t rounds = tu_scaled(60, 12), shaped = 0, broken = 0;
  uint8_t row[24];
  for (size_t round = 0; round < rounds; round++) {
    s.n = s.used = 0;
    int kmode = (int)tu_below(&st, 3);
    uint32_t klen = kmode == 2 ? 20 : 12;
    size_t nrows = 1 + tu_below(&st, tu_below(&st, 2) ? 3000 : 40);
    int shape = (int)tu_below(&st, 6); /* 0: a tombstone, 1: a row of two cells, else kept */
    size_t odd = tu_below(&st, nrows);
    memset(row, 'k', sizeof row);
    uint64_t seq = tu_below(&st, 2) ? 0 : 50;
    uint32_t vl = tu_below(&st, 2) ? 8 : 0; /* empty markers, or values whose rank matters */
    uint8_t val[8];
    for (size_t r = 0; r < nrows; r++) {
      uint32_t rl = kmode == 0 ? 4 + (uint32_t)tu_below(&st, 9) : klen;
      size_t lo = kmode == 1 ? klen - 3 : 2;
      size_t pos = lo + tu_below(&st, rl - lo);
      row[pos]++;
      for (size_t j = pos + 1; j < sizeof row; j++) row[j] = 0;
      if (s.n && kv_bytes_cmp(s.c[s.n - 1].row, s.c[s.n - 1].row_len, row, rl) >= 0) continue;
      uint8_t type = shape == 0 && r == odd ? KV_DELETE_VERSION : KV_PUT;
      for (uint32_t j = 0; j < 8; j++) val[j] = (uint8_t)tu_rand(&st);
      tb_add(&s, row, rl, (const uint8_t *)"_0", 2, 1700000000000, seq ? seq + r : 0, type,
             val, type == KV_PUT ? vl : 0);
      if (shape == 1 && r == odd)
        tb_add(&s, row, rl, (const uint8_t *)"_1", 2, 1700000000000, 0, KV_PUT, row, 0);
    }
    tb_build(&bld, &s);
    check_built(&st, &bld, &w, &d, round, 60);
    if (d.nrows == d.ncells && d.nquals == 1 && shape > 1) shaped++;
    else broken++;
  }
  fprintf(stderr, "[sf_point] key family blocks: %zu of one cell per row, %zu not\n", shaped,
          broken);
  assert_true(shaped > 0 && broken > 0);
  kv_sf_dblock_free(&d);
  kv_sf_pdec_free(&w);
  kv_sfb_free(&bld);
}

/* Blocks shaped as a sensor table's readings family: hundreds of rows of nq columns (2 to 20,
** one-byte dictionary indexes), puts only, most rows holding every column; the others lack
** a column, hold a second version of one (nq + 1 cells), or both (nq cells, but not the usual
** qualifiers: a row the decoder must not take for a full one when it counts the value
** groups a row at a time). Keys a fixed step apart, now and then more (delta-coded keys
** whose varint repeats). Fixed-width values of 8 bytes, one column in five of variable
** width. Point and range decodes against the whole decoder, as test_point_rows. */
static void test_point_sensor_rows(void **state) {
  (void)state;
  uint64_t st = tu_seed("sf_point_sensor_rows");
  static tb_cellset s;
  kv_sfb_builder bld;
  kv_sfb_init(&bld);
  kv_sf_pdec w;
  memset(&w, 0, sizeof w);
  kv_sf_dblock d;
  memset(&d, 0, sizeof d);
  size_t rounds = tu_scaled(80, 16), lookalike = 0, wide = 0;
  uint8_t row[12], val[20], qb[3];
  for (size_t round = 0; round < rounds; round++) {
    s.n = s.used = 0;
    uint32_t nq = 2 + (uint32_t)tu_below(&st, 19);
    if (nq > 16) wide++;
    size_t nrows = 1 + tu_below(&st, 5000 / (nq + 1));
    uint32_t odd_in = 2 + (uint32_t)tu_below(&st, 30); /* one row in odd_in is not full */
    memset(row, 's', sizeof row);
    /* keys a step apart (a delta varint of 1 to 6 bytes repeated row after row), a row
       now and then further on */
    static const uint64_t steps[] = {1, 200, 3600000, (uint64_t)1 << 40};
    uint64_t step = steps[tu_below(&st, 4)], kv = tu_below(&st, 1000);
    for (size_t r = 0; r < nrows; r++) {
      kv += step + (tu_below(&st, 10) == 0 ? tu_below(&st, 5000) : 0);
      for (int b = 0; b < 8; b++) row[4 + b] = (uint8_t)(kv >> (8 * (7 - b)));
      int odd = tu_below(&st, odd_in) ? 0 : 1 + (int)tu_below(&st, 3);
      uint32_t miss = (uint32_t)tu_below(&st, nq), dup = (uint32_t)tu_below(&st, nq);
      if (odd == 3 && miss == dup) dup = (dup + 1) % nq;
      if (odd == 3) lookalike++;
      for (uint32_t q = 0; q < nq; q++) {
        if ((odd == 1 || odd == 3) && q == miss) continue;
        qb[0] = 'q';
        qb[1] = 0;
        qb[2] = (uint8_t)q;
        uint32_t nv = (odd == 2 || odd == 3) && q == dup ? 2 : 1;
        for (uint32_t v = 0; v < nv; v++) {
          uint32_t vl = q % 5 == 4 ? (uint32_t)tu_below(&st, 20) : 8;
          for (uint32_t j = 0; j < vl; j++) val[j] = (uint8_t)tu_rand(&st);
          tb_add(&s, row, sizeof row, qb, 3, 1700000000000 - (int64_t)v, 0, KV_PUT, val, vl);
        }
      }
    }
    tb_build(&bld, &s);
    check_built(&st, &bld, &w, &d, round, 60);
  }
  fprintf(stderr, "[sf_point] sensor blocks: %zu rows of nq cells unlike a full row, %zu "
          "blocks of more than 16 columns\n", lookalike, wide);
  assert_true(lookalike > 0 && wide > 0);
  kv_sf_dblock_free(&d);
  kv_sf_pdec_free(&w);
  kv_sfb_free(&bld);
}

/* Damaged and truncated blocks: no read outside the block (each is copied to an allocation
** of its exact size, so the sanitizer sees an overrun), and agreement with the whole-block
** decoder on every block that one accepts. */
static void test_point_damaged(void **state) {
  (void)state;
  uint64_t st = tu_seed("sf_point_damaged");
  static tb_cellset s;
  kv_sfb_builder bld;
  kv_sfb_init(&bld);
  kv_sf_pdec w;
  memset(&w, 0, sizeof w);
  kv_sf_dblock d;
  memset(&d, 0, sizeof d);
  kv_sf_cdec dec;
  memset(&dec, 0, sizeof dec);
  size_t rounds = tu_scaled(150, 30), agreed = 0, refused = 0;
  uint8_t t[64], stop[64];
  for (size_t round = 0; round < rounds; round++) {
    tb_random_set(&st, &s, TB_SOMETIMES_ONE_ROW | TB_EVERY_ROW_A_CELL);
    if (s.n > 400) continue;
    tb_build(&bld, &s);
    size_t len = bld.out.len;
    const char *why = NULL;
    assert_int_equal(kv_sf_block_decode(&d, bld.out.p, len, &why), KV_OK);
    for (int m = 0; m < 40; m++) {
      uint32_t tl = make_target(&st, &d, t); /* from the intact block */
      size_t cut = m < 10 ? tu_below(&st, len) : len;
      uint8_t *copy = malloc(cut ? cut : 1);
      assert_non_null(copy);
      memcpy(copy, bld.out.p, cut);
      if (m >= 10) {
        int nflips = 1 + (int)tu_below(&st, 3);
        for (int f = 0; f < nflips; f++)
          copy[tu_below(&st, len)] ^= (uint8_t)(1 + tu_below(&st, 255));
      }
      uint32_t want, sl;
      const uint8_t *sp;
      int rc = decode_some(&st, &w, &d, copy, cut, t, tl, stop, &sp, &sl, &want, &why);
      assert_true(rc == KV_OK || rc == KV_ERR_CORRUPT);
      if (rc == KV_ERR_CORRUPT) assert_non_null(why);
      const char *why2 = NULL;
      if (kv_sf_cblock_decode(&dec, copy, cut, &why2) == KV_OK) {
        assert_int_equal(kv_sf_block_decode(&d, copy, cut, &why2), KV_OK);
        if (rc != KV_OK) fail_msg("round %zu: whole decoder accepts, point: %s", round, why);
        if (d.nrows > 0) check_point(&w, &d, t, tl, sp, sl, want, false);
        agreed++;
      } else {
        refused++;
      }
      free(copy);
      assert_int_equal(kv_sf_block_decode(&d, bld.out.p, len, &why), KV_OK);
    }
  }
  fprintf(stderr, "[sf_point] damaged blocks: %zu accepted alike, %zu refused whole\n", agreed,
          refused);
  assert_true(agreed > 0 && refused > 0);
  kv_sf_cdec_free(&dec);
  kv_sf_dblock_free(&d);
  kv_sf_pdec_free(&w);
  kv_sfb_free(&bld);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_point_rows),
    cmocka_unit_test(test_point_key_family),
    cmocka_unit_test(test_point_sensor_rows),
    cmocka_unit_test(test_point_damaged),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
