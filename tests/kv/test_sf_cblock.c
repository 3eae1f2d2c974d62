/*
** tests/kv/test_sf_cblock.c: the compact decoded block (kv/sf/sf_cblock.h) against the
** per-cell decoder (kv_sf_block_decode) on the same raw blocks: random blocks in every row
** key mode (keys of different lengths, one length with short and long suffixes), tombstones,
** several versions with distinct timestamps and sequence numbers, fixed and variable value
** widths, empty values, many qualifiers (so rank checkpoints matter), read in random order
** and backwards (the rank cursor must give the same value from any direction), privately
** and from the packed copy (with the raw block and the decoder's memory overwritten); and
** damaged blocks, which both decoders must accept or reject alike. Also the block-wide facts
** recorded at decode for the fast row path (one put per column, largest sequence number,
** timestamp range). Blocks shaped as the sensor archive's (one timestamp per row, one
** sequence number, the same qualifiers in each row: every fast path of the decoder) and
** their variations (several versions or timestamps in a row, tombstones, variable widths,
** one row, 200 qualifiers, spread sequence numbers, a zero or negative first timestamp).
** Seeded: the seed is printed; ROWAN_SEED reruns it.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "kv/sf/sf_cblock.h"
#include "testutil.h"
#include "tu_blocks.h"

/* Row of each cell, from the compact block's row_first. */
static uint32_t row_of(const kv_sf_cblock *b, uint32_t ci) {
  uint32_t r = 0;
  while (kv_sf_pa_get(&b->row_first, r + 1) <= ci) r++;
  return r;
}

/* The block-wide facts the fast row path reads (kv/sf/sf_rows.h) against the model: only puts
** and no row with two cells of one qualifier, the largest sequence number, the timestamp
** range. */
static size_t n_simple[2]; /* blocks checked with one_put_per_col false / true */

static void check_summary(const kv_sf_cblock *b, const tb_cellset *s) {
  bool one = true;
  uint64_t max_seq = 0;
  int64_t min_ts = INT64_MAX, max_ts = INT64_MIN;
  for (size_t i = 0; i < s->n; i++) {
    const kv_cell *c = &s->c[i];
    if (c->type != KV_PUT) one = false;
    if (i && kv_bytes_cmp(c->row, c->row_len, s->c[i - 1].row, s->c[i - 1].row_len) == 0 &&
        kv_bytes_cmp(c->qual, c->qual_len, s->c[i - 1].qual, s->c[i - 1].qual_len) == 0)
      one = false;
    if (c->seq > max_seq) max_seq = c->seq;
    if (c->ts < min_ts) min_ts = c->ts;
    if (c->ts > max_ts) max_ts = c->ts;
  }
  assert_int_equal(b->one_put_per_col, one);
  n_simple[one]++;
  assert_int_equal(b->max_seq, max_seq);
  assert_int_equal(b->min_ts, min_ts);
  assert_int_equal(b->max_ts, max_ts);
}

/* Every cell of b against the model: forward, backward, then in random order. */
static void check_block(uint64_t *st, const kv_sf_cblock *b, const tb_cellset *s) {
  assert_int_equal(b->ncells, s->n);
  check_summary(b, s);
  assert_true(kv_sf_pa_get(&b->row_first, b->nrows) == b->ncells);
  kv_sf_rankpos rp = {0};
  rp.at = UINT32_MAX;
  assert_int_equal(kv_sf_grow((void **)&rp.ranks, &rp.cap, b->nquals + 2, 4), KV_OK);
  uint8_t kbuf[64], vbuf[64];
  uint32_t *rows = malloc(sizeof *rows * (s->n + 1));
  assert_non_null(rows);
  for (uint32_t i = 0; i < b->ncells; i++) rows[i] = row_of(b, i);
  kv_cell c;
  for (uint32_t i = 0; i < b->ncells; i++) {
    tb_cblock_cell(b, &rp, rows[i], i, kbuf, vbuf, &c);
    tb_cell_eq(&c, &s->c[i]);
  }
  for (uint32_t i = b->ncells; i-- > 0;) {
    tb_cblock_cell(b, &rp, rows[i], i, kbuf, vbuf, &c);
    tb_cell_eq(&c, &s->c[i]);
  }
  for (uint32_t k = 0; k < b->ncells; k++) {
    uint32_t i = (uint32_t)tu_below(st, b->ncells);
    tb_cblock_cell(b, &rp, rows[i], i, kbuf, vbuf, &c);
    tb_cell_eq(&c, &s->c[i]);
  }
  /* keys compare as bytes against their own key, a shorter and a longer one */
  for (uint32_t r = 0; r < b->nrows; r++) {
    uint32_t first = (uint32_t)kv_sf_pa_get(&b->row_first, r);
    const kv_cell *w = &s->c[first];
    uint8_t t[40];
    memcpy(t, w->row, w->row_len);
    assert_int_equal(kv_sf_cblock_key_cmp(b, r, t, w->row_len), 0);
    if (w->row_len) assert_true(kv_sf_cblock_key_cmp(b, r, t, w->row_len - 1) > 0);
    t[w->row_len] = 0;
    assert_true(kv_sf_cblock_key_cmp(b, r, t, w->row_len + 1) < 0);
  }
  free(rows);
  free(rp.ranks);
}

/* Random blocks: compact form (private and packed) equal to the model cell by cell. */
static void test_round_trip(void **state) {
  (void)state;
  uint64_t st = tu_seed("sf_cblock_round_trip");
  static tb_cellset s;
  kv_sfb_builder bld;
  kv_sfb_init(&bld);
  kv_sf_cdec dec;
  memset(&dec, 0, sizeof dec);
  size_t rounds = tu_scaled(400, 60), packed_bytes = 0, raw_bytes = 0;
  for (size_t round = 0; round < rounds; round++) {
    tb_random_set(&st, &s, 0);
    tb_build(&bld, &s);
    uint8_t *raw = malloc(bld.out.len);
    assert_non_null(raw);
    memcpy(raw, bld.out.p, bld.out.len);
    const char *why = NULL;
    int rc = kv_sf_cblock_decode(&dec, raw, bld.out.len, &why);
    if (rc) fail_msg("round %zu: decode failed: %s", round, why ? why : "?");
    check_block(&st, &dec.b, &s);
    kv_sf_cblock *pk = kv_sf_cblock_pack(&dec);
    assert_non_null(pk);
    assert_true(pk->charge > sizeof *pk);
    packed_bytes += pk->charge;
    raw_bytes += bld.out.len;
    /* the packed copy needs neither the raw block nor the decoder */
    memset(raw, 0xA5, bld.out.len);
    free(raw);
    memset(dec.arena.p, 0x5A, dec.arena.cap);
    check_block(&st, pk, &s);
    free(pk);
  }
  fprintf(stderr, "[sf_cblock] %zu blocks: packed %zu bytes for %zu raw bytes\n", rounds,
          packed_bytes, raw_bytes);
  assert_true(n_simple[0] > 0 && n_simple[1] > 0); /* both kinds of block were seen */
  kv_sf_cdec_free(&dec);
  kv_sfb_free(&bld);
}

/* Shapes of tb_shaped_set: a sensor-archive block (rows of one key length, the same
** qualifiers in every row, one timestamp per row, fixed-width values, one sequence number)
** where every fast path of the decoder applies, and the variations where one must not. */
enum {
  SH_MULTI_VER = 1,   /* some rows hold two versions of a qualifier (an older timestamp) */
  SH_ROW_TS = 2,      /* some rows' cells differ in timestamp (one version each) */
  SH_TOMB = 4,        /* some cells are tombstones */
  SH_VARW = 8,        /* some qualifiers' values vary in width */
  SH_ONE_ROW = 16,    /* a single row */
  SH_MANY_Q = 32,     /* 200 qualifiers: indexes from 128 on take two bytes */
  SH_SEQS = 64,       /* sequence numbers differ by less than 128 */
  SH_BIG_SEQ = 128,   /* sequence numbers differ by up to 2^40 */
  SH_TS0 = 256,       /* the first row's timestamp is 0 (its first delta is zero) */
  SH_NEG_TS = 512,    /* timestamps below zero */
  SH_KEYS = 1024      /* row keys of varied lengths */
};

static void tb_shaped_set(uint64_t *st, tb_cellset *s, unsigned sh) {
  s->n = s->used = 0;
  uint32_t nq = sh & SH_MANY_Q ? 200 : 1 + (uint32_t)tu_below(st, 16);
  uint32_t nrows = sh & SH_ONE_ROW ? 1 : 1 + (uint32_t)tu_below(st, (TB_MAXC - 50) / (2 * nq));
  int64_t ts = sh & SH_TS0 ? 0 : sh & SH_NEG_TS ? -(int64_t)tu_below(st, 1ull << 40) - 1
                                                 : (int64_t)tu_below(st, 1ull << 41);
  uint64_t seq0 = 1 + tu_below(st, 1ull << 30);
  uint8_t key[24], q[8], val[40];
  uint32_t fixw = 1 + (uint32_t)tu_below(st, 8);
  uint64_t kr = tu_below(st, 1000);
  for (uint32_t r = 0; r < nrows; r++) {
    uint32_t kl = 11;
    memcpy(key, "stn", 3);
    kr += 1 + tu_below(st, 3); /* increasing */
    for (int j = 0; j < 8; j++) key[3 + j] = (uint8_t)(kr >> (8 * (7 - j)));
    if (sh & SH_KEYS) kl += (uint32_t)tu_below(st, 5); /* bytes after the counter: 0 */
    if (sh & SH_KEYS) memset(key + 11, 0, kl - 11);
    bool multi = (sh & SH_MULTI_VER) && tu_below(st, 3) == 0;
    bool rowts = (sh & SH_ROW_TS) && tu_below(st, 3) == 0;
    for (uint32_t c = 0; c < nq; c++) {
      if (nq > 1 && tu_below(st, 8) == 0) continue; /* a missing reading */
      q[0] = 'c';
      q[1] = (uint8_t)('0' + c / 100);
      q[2] = (uint8_t)('0' + c / 10 % 10);
      q[3] = (uint8_t)('0' + c % 10);
      int64_t cts = rowts ? ts - (int64_t)tu_below(st, 1000) : ts;
      uint8_t type = KV_PUT;
      if ((sh & SH_TOMB) && tu_below(st, 5) == 0) type = KV_DELETE_COLUMN;
      uint64_t seq = seq0;
      if (sh & SH_SEQS) seq += tu_below(st, 128);
      if (sh & SH_BIG_SEQ) seq += tu_below(st, 1ull << 40);
      uint32_t vl = (sh & SH_VARW) && c % 3 == 1 ? (uint32_t)tu_below(st, 30) : fixw;
      for (uint32_t j = 0; j < vl; j++) val[j] = (uint8_t)tu_below(st, 256);
      tb_add(s, key, kl, q, 4, cts, seq, type, val, type == KV_PUT ? vl : 0);
      if (multi && tu_below(st, 2) == 0)
        tb_add(s, key, kl, q, 4, cts - 1 - (int64_t)tu_below(st, 99), seq, KV_PUT, val, vl);
    }
    if (s->n == 0 || kv_bytes_cmp(s->c[s->n - 1].row, s->c[s->n - 1].row_len, key, kl) != 0)
      tb_add(s, key, kl, (const uint8_t *)"c000", 4, ts, seq0, KV_PUT, val, fixw);
    ts += sh & SH_TS0 && r == 0 ? 1 + (int64_t)tu_below(st, 1000)
                                 : (int64_t)tu_below(st, 3) * 3600000;
  }
}

/* Blocks shaped as the archive's and its variations: the compact form (private and packed)
** equals the model and the per-cell decoder cell by cell; one timestamp per row and the
** sequence numbers' width are what the cells make them. */
static void test_shaped(void **state) {
  (void)state;
  uint64_t st = tu_seed("sf_cblock_shaped");
  static tb_cellset s;
  kv_sfb_builder bld;
  kv_sfb_init(&bld);
  kv_sf_cdec dec;
  memset(&dec, 0, sizeof dec);
  kv_sf_dblock d;
  memset(&d, 0, sizeof d);
  size_t rounds = tu_scaled(300, 60), per_row = 0;
  for (size_t round = 0; round < rounds; round++) {
    unsigned sh = round < 40 ? 0 : (unsigned)tu_below(&st, 2048);
    tb_shaped_set(&st, &s, sh);
    tb_build(&bld, &s);
    const char *why = NULL;
    int rc = kv_sf_cblock_decode(&dec, bld.out.p, bld.out.len, &why);
    if (rc) fail_msg("round %zu (shape %u): decode failed: %s", round, sh, why ? why : "?");
    check_block(&st, &dec.b, &s);
    /* one timestamp per row exactly when every cell has its row's first cell's */
    bool one_ts = true;
    uint64_t smin = UINT64_MAX, smax = 0;
    for (size_t i = 0, f = 0; i < s.n; i++) {
      if (i && kv_bytes_cmp(s.c[i].row, s.c[i].row_len, s.c[f].row, s.c[f].row_len)) f = i;
      if (s.c[i].ts != s.c[f].ts) one_ts = false;
      if (s.c[i].seq < smin) smin = s.c[i].seq;
      if (s.c[i].seq > smax) smax = s.c[i].seq;
    }
    assert_int_equal(dec.b.ts_per_row, one_ts);
    per_row += one_ts;
    assert_true(dec.b.seq.w == (smax == smin ? 0 : smax - smin < 256 ? 1 : dec.b.seq.w));
    assert_true(dec.b.seq.w != 0 || smax == smin);
    assert_int_equal(kv_sf_block_decode(&d, bld.out.p, bld.out.len, &why), KV_OK);
    kv_sf_rankpos rp = {0};
    rp.at = UINT32_MAX;
    assert_int_equal(kv_sf_grow((void **)&rp.ranks, &rp.cap, dec.b.nquals + 2, 4), KV_OK);
    uint8_t kbuf[64], vbuf[64];
    for (uint32_t i = 0, ri = 0; i < dec.b.ncells; i++) {
      while (d.row_first[ri + 1] <= i) ri++;
      kv_cell c, w;
      tb_cblock_cell(&dec.b, &rp, ri, i, kbuf, vbuf, &c);
      kv_sf_dblock_cell(&d, ri, i, &w);
      tb_cell_eq(&c, &w);
    }
    free(rp.ranks);
    kv_sf_cblock *pk = kv_sf_cblock_pack(&dec);
    assert_non_null(pk);
    memset(dec.arena.p, 0x5A, dec.arena.cap);
    check_block(&st, pk, &s);
    free(pk);
  }
  assert_true(per_row > 0 && per_row < rounds); /* both kinds were seen */
  kv_sf_dblock_free(&d);
  kv_sf_cdec_free(&dec);
  kv_sfb_free(&bld);
}

/* Damaged and truncated blocks: the compact decoder rejects exactly what the per-cell
** decoder rejects, and what it accepts is self-consistent. */
static void test_damaged(void **state) {
  (void)state;
  uint64_t st = tu_seed("sf_cblock_damaged");
  static tb_cellset s;
  kv_sfb_builder bld;
  kv_sfb_init(&bld);
  kv_sf_cdec dec;
  memset(&dec, 0, sizeof dec);
  kv_sf_dblock d;
  memset(&d, 0, sizeof d);
  size_t rounds = tu_scaled(150, 30), ok = 0, bad = 0;
  for (size_t round = 0; round < rounds; round++) {
    tb_random_set(&st, &s, 0);
    if (s.n > 400) continue;
    tb_build(&bld, &s);
    size_t len = bld.out.len;
    uint8_t *copy = malloc(len);
    assert_non_null(copy);
    const char *why = NULL, *why2 = NULL;
    for (size_t cut = 0; cut < len; cut += 1 + tu_below(&st, 4)) {
      memcpy(copy, bld.out.p, cut);
      assert_int_equal(kv_sf_cblock_decode(&dec, copy, cut, &why), KV_ERR_CORRUPT);
      assert_non_null(why);
    }
    for (int m = 0; m < 30; m++) {
      memcpy(copy, bld.out.p, len);
      int nflips = 1 + (int)tu_below(&st, 3);
      for (int f = 0; f < nflips; f++)
        copy[tu_below(&st, len)] ^= (uint8_t)(1 + tu_below(&st, 255));
      int rc = kv_sf_cblock_decode(&dec, copy, len, &why);
      int rc2 = kv_sf_block_decode(&d, copy, len, &why2);
      if (rc != rc2)
        fail_msg("round %zu: compact %d (%s), per-cell %d (%s)", round, rc, why ? why : "",
                 rc2, why2 ? why2 : "");
      if (rc == KV_OK) {
        ok++;
        const kv_sf_cblock *b = &dec.b;
        assert_int_equal(b->ncells, d.ncells);
        assert_int_equal(b->nrows, d.nrows);
        kv_sf_rankpos rp = {0};
        rp.at = UINT32_MAX;
        assert_int_equal(kv_sf_grow((void **)&rp.ranks, &rp.cap, b->nquals + 2, 4), KV_OK);
        size_t maxw = 1;
        for (uint32_t g = 0; g <= b->nquals; g++)
          if (b->groups[g].fixed && b->groups[g].width > maxw) maxw = b->groups[g].width;
        uint8_t *kbuf = malloc(b->max_key + 1), *vbuf = malloc(maxw);
        assert_true(kbuf && vbuf);
        for (uint32_t i = 0, ri = 0; i < b->ncells; i++) {
          while (d.row_first[ri + 1] <= i) ri++;
          assert_true(kv_sf_pa_get(&b->row_first, ri) == d.row_first[ri]);
          kv_cell c, w;
          tb_cblock_cell(b, &rp, ri, i, kbuf, vbuf, &c);
          kv_sf_dblock_cell(&d, ri, i, &w);
          tb_cell_eq(&c, &w);
        }
        free(kbuf);
        free(vbuf);
        free(rp.ranks);
      } else {
        bad++;
      }
    }
    free(copy);
  }
  fprintf(stderr, "[sf_cblock] damaged blocks: %zu decoded, %zu corrupt\n", ok, bad);
  assert_true(bad > 0);
  kv_sf_dblock_free(&d);
  kv_sf_cdec_free(&dec);
  kv_sfb_free(&bld);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_round_trip),
    cmocka_unit_test(test_damaged),
    cmocka_unit_test(test_shaped),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
