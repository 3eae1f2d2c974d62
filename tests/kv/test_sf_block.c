/*
** tests/kv/test_sf_block.c: the store file block codec (kv/sf/sf_int.h: kv/sf/sf_block.c and
** kv/sf/sf_decode.c) without files: builder -> raw block -> decoded arrays round trips in each
** row key mode, values grouped by qualifier with fixed widths transposed, the framing
** (lz4 or raw, checksum), and damaged raw blocks (random byte changes, every truncation)
** that must decode to KV_ERR_CORRUPT or a block, never a crash (run it under ASan).
** Seeded: the seed is printed; ROWAN_SEED reruns it.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "kv/util/coding.h"
#include "kv/sf/sf_int.h"
#include "testutil.h"

typedef struct cellset {
  kv_cell c[512];        /* the cells, in order */
  uint8_t bytes[65536];  /* their row, qualifier and value bytes */
  size_t n, used;        /* cells / bytes in use */
} cellset;

static const uint8_t *keep(cellset *s, const void *p, size_t n) {
  assert_true(s->used + n <= sizeof s->bytes);
  uint8_t *d = s->bytes + s->used;
  if (n) memcpy(d, p, n);
  s->used += n;
  return d;
}

static void add(cellset *s, const void *row, uint32_t rl, const char *qual, int64_t ts,
                uint64_t seq, uint8_t type, const void *val, uint32_t vl) {
  assert_true(s->n < 512);
  kv_cell *c = &s->c[s->n++];
  c->row = keep(s, row, rl);
  c->row_len = rl;
  c->qual = keep(s, qual, strlen(qual));
  c->qual_len = (uint32_t)strlen(qual);
  c->ts = ts;
  c->seq = seq;
  c->type = type;
  c->value = keep(s, val, vl);
  c->value_len = vl;
}

static void build(kv_sfb_builder *b, const cellset *s) {
  kv_sfb_reset(b);
  for (size_t i = 0; i < s->n; i++) {
    int new_row = i == 0 || kv_bytes_cmp(s->c[i - 1].row, s->c[i - 1].row_len, s->c[i].row,
                                         s->c[i].row_len) != 0;
    assert_int_equal(kv_sfb_add(b, &s->c[i], new_row), KV_OK);
  }
  assert_int_equal(kv_sfb_encode(b), KV_OK);
}

/* The rows mode byte of a raw block (after the header, dictionary and cells-per-row). */
static uint64_t rows_mode(const uint8_t *p, size_t len) {
  const uint8_t *lim = p + len;
  uint64_t nrows = 0, ncells = 0, nquals = 0, v = 0;
  p = kv_get_varint(p, lim, &nrows);
  p = kv_get_varint(p, lim, &ncells);
  p = kv_get_varint(p, lim, &nquals);
  p = kv_get_varint(p, lim, &v);
  for (uint64_t q = 0; q < nquals; q++) { p = kv_get_varint(p, lim, &v); p += v; }
  for (uint64_t r = 0; r < nrows; r++) p = kv_get_varint(p, lim, &v);
  p = kv_get_varint(p, lim, &v);
  assert_non_null(p);
  return v;
}

static void check_decoded(const kv_sf_dblock *d, const cellset *s) {
  assert_int_equal(d->ncells, s->n);
  uint32_t ri = 0;
  for (uint32_t i = 0; i < d->ncells; i++) {
    while (d->row_first[ri + 1] <= i) ri++;
    kv_cell c;
    kv_sf_dblock_cell(d, ri, i, &c);
    const kv_cell *w = &s->c[i];
    assert_int_equal(c.row_len, w->row_len);
    assert_memory_equal(c.row, w->row, w->row_len);
    assert_int_equal(c.qual_len, w->qual_len);
    if (w->qual_len) assert_memory_equal(c.qual, w->qual, w->qual_len);
    assert_true(c.ts == w->ts && c.seq == w->seq);
    assert_int_equal(c.type, w->type);
    assert_int_equal(c.value_len, w->value_len);
    if (w->value_len) assert_memory_equal(c.value, w->value, w->value_len);
  }
}

static void round_trip(const cellset *s, uint64_t want_mode) {
  kv_sfb_builder b;
  kv_sfb_init(&b);
  build(&b, s);
  assert_int_equal(rows_mode(b.out.p, b.out.len), want_mode);
  kv_sf_dblock d = {0};
  const char *why = NULL;
  int rc = kv_sf_block_decode(&d, b.out.p, b.out.len, &why);
  if (rc) fail_msg("decode failed: %s", why ? why : "?");
  check_decoded(&d, s);
  kv_sf_dblock_free(&d);
  kv_sfb_free(&b);
}

static void be64(uint8_t *p, uint64_t v) {
  for (int i = 0; i < 8; i++) p[i] = (uint8_t)(v >> (56 - 8 * i));
}

static void test_row_modes(void **state) {
  (void)state;
  static cellset s;
  uint8_t k[16], v[8];
  /* Keys of different lengths: prefix compression against the previous row. */
  memset(&s, 0, sizeof s);
  add(&s, "a", 1, "q", 5, 1, KV_PUT, "x", 1);
  add(&s, "ab\x00", 3, "q", 5, 1, KV_PUT, "y", 1);
  add(&s, "ab\x00\xff", 4, "", 9, 2, KV_DELETE_FAMILY, "", 0);
  add(&s, "ab\x00\xff", 4, "q", 5, 3, KV_PUT, "", 0);
  add(&s, "b", 1, "r", -7, 1, KV_DELETE_COLUMN, "", 0);
  round_trip(&s, KV_SF_ROWS_PREFIX);
  /* One length, differing early: a common prefix then transposed suffixes. */
  memset(&s, 0, sizeof s);
  for (int r = 0; r < 40; r++) {
    for (int j = 0; j < 12; j++) k[j] = (uint8_t)(r * 6 + j * 31);
    k[0] = (uint8_t)r;
    add(&s, k, 12, "t", 1, 1, KV_PUT, k, 12);
  }
  round_trip(&s, KV_SF_ROWS_FIXED);
  /* Sensor-style keys: name, 0x00, inverted timestamp; suffix deltas, with a gap and the
  ** largest 8-byte suffix. */
  memset(&s, 0, sizeof s);
  memcpy(k, "st\x00", 3);
  uint64_t t = 0;
  for (int r = 0; r < 50; r++) {
    t = r == 49 ? UINT64_MAX : (uint64_t)r * 3600000u + (r > 30 ? 7200000u : 0);
    be64(k + 3, t);
    be64(v, (uint64_t)r);
    add(&s, k, 11, "\x01", 1700000000000, 3, KV_PUT, v, 8);
    if (r % 3) add(&s, k, 11, "\x02", 1700000000000, 3, KV_PUT, "NNW", 3);
  }
  round_trip(&s, KV_SF_ROWS_DELTA);
  /* One row only: the whole key is the common prefix (an empty suffix). */
  memset(&s, 0, sizeof s);
  add(&s, "only", 4, "a", 1, 1, KV_PUT, "1", 1);
  add(&s, "only", 4, "b", 1, 1, KV_PUT, "22", 2);
  round_trip(&s, KV_SF_ROWS_DELTA);
  /* An empty row key. */
  memset(&s, 0, sizeof s);
  add(&s, "", 0, "", 1, 1, KV_PUT, "", 0);
  round_trip(&s, KV_SF_ROWS_DELTA);
}

/* A fixed-width value group is stored transposed: the constant high bytes of small
** big-endian counters become one long run of zeros in the raw block. */
static void test_values_transposed(void **state) {
  (void)state;
  static cellset s;
  memset(&s, 0, sizeof s);
  uint8_t k[8], v[8];
  for (int r = 0; r < 200; r++) {
    be64(k, (uint64_t)r);
    be64(v, (uint64_t)r * 3);
    add(&s, k, 8, "v", 1, 1, KV_PUT, v, 8);
  }
  kv_sfb_builder b;
  kv_sfb_init(&b);
  build(&b, &s);
  size_t run = 0, best = 0;
  for (size_t i = 0; i < b.out.len; i++) {
    run = b.out.p[i] == 0 ? run + 1 : 0;
    if (run > best) best = run;
  }
  assert_true(best >= 200 * 6);  /* bytes 0..5 of every value, back to back */
  kv_sf_dblock d = {0};
  const char *why;
  assert_int_equal(kv_sf_block_decode(&d, b.out.p, b.out.len, &why), KV_OK);
  check_decoded(&d, &s);
  /* A smaller block reuses the arrays: no allocation per block once they are big. */
  int64_t *ts = d.c_ts;
  uint8_t *keys = d.keys;
  static cellset small;
  memset(&small, 0, sizeof small);
  add(&small, "k", 1, "v", 2, 2, KV_PUT, "abc", 3);
  build(&b, &small);
  assert_int_equal(kv_sf_block_decode(&d, b.out.p, b.out.len, &why), KV_OK);
  check_decoded(&d, &small);
  assert_ptr_equal(d.c_ts, ts);
  assert_ptr_equal(d.keys, keys);
  kv_sf_dblock_free(&d);
  kv_sfb_free(&b);
}

/* Fixed-width groups of every width the encoder treats apart (8; up to 16; longer) round
** trip, byte for byte, with two qualifiers interleaved and a tombstone group. */
static void test_values_widths(void **state) {
  (void)state;
  static cellset s;
  static const uint32_t widths[] = {1, 2, 3, 4, 8, 15, 16, 17, 40};
  for (size_t wi = 0; wi < sizeof widths / sizeof *widths; wi++) {
    memset(&s, 0, sizeof s);
    uint8_t k[8], v[40];
    for (int r = 0; r < 150; r++) {
      be64(k, (uint64_t)r);
      for (uint32_t j = 0; j < widths[wi]; j++) v[j] = (uint8_t)(r * 31 + j * 7);
      add(&s, k, 8, "a", 1, 1, KV_PUT, v, widths[wi]);
      if (r % 5 == 0) add(&s, k, 8, "b", 1, 1, KV_DELETE_COLUMN, "", 0);
      else add(&s, k, 8, "b", 1, 1, KV_PUT, v + 1, widths[wi] - 1);
    }
    round_trip(&s, KV_SF_ROWS_DELTA);
  }
}

static void random_set(uint64_t *st, cellset *s) {
  memset(s, 0, sizeof *s);
  int fixed_len = (int)tu_below(st, 2);
  uint8_t row[12] = {0}, val[64];
  size_t nrows = 1 + tu_below(st, 40);
  for (size_t r = 0; r < nrows; r++) {
    uint32_t rl = fixed_len ? 10 : 1 + (uint32_t)tu_below(st, 10);
    /* ascending: bump a byte of the previous key, zero what follows */
    size_t pos = tu_below(st, rl);
    row[pos]++;
    for (size_t j = pos + 1; j < sizeof row; j++) row[j] = (uint8_t)tu_below(st, 2) * 0xFF;
    if (s->n && kv_bytes_cmp(s->c[s->n - 1].row, s->c[s->n - 1].row_len, row, rl) >= 0) continue;
    static const char *const quals[] = {"", "a", "b", "c"};
    int64_t ts = (int64_t)tu_below(st, 1000);
    for (int q = 0; q < 4; q++) {
      if (tu_below(st, 3) == 0) continue;
      uint8_t type = tu_below(st, 6) ? KV_PUT : (uint8_t)(1 + tu_below(st, 3));
      uint32_t vl = type != KV_PUT ? 0 : q == 1 ? 8 : (uint32_t)tu_below(st, 20);
      for (uint32_t j = 0; j < vl; j++) val[j] = (uint8_t)tu_rand(st);
      add(s, row, rl, quals[q], ts, 10 + tu_below(st, 5), type, val, vl);
    }
  }
  if (s->n == 0) add(s, "z", 1, "q", 1, 1, KV_PUT, "v", 1);
}

/* Random blocks round trip; the same blocks damaged never crash the decoder, and a block
** cut short anywhere is always reported as corrupt. */
static void test_random_and_damaged(void **state) {
  (void)state;
  uint64_t st = tu_seed("sf_block_damage");
  static cellset s;
  kv_sfb_builder b;
  kv_sfb_init(&b);
  kv_sf_dblock d = {0};
  uint8_t *copy = malloc(1 << 16);
  size_t rounds = tu_scaled(1000, 100), ok = 0, bad = 0;
  for (size_t round = 0; round < rounds; round++) {
    random_set(&st, &s);
    build(&b, &s);
    const char *why = NULL;
    assert_int_equal(kv_sf_block_decode(&d, b.out.p, b.out.len, &why), KV_OK);
    check_decoded(&d, &s);
    size_t len = b.out.len;
    assert_true(len <= (1 << 16));
    for (size_t cut = 0; cut < len; cut++) {
      memcpy(copy, b.out.p, cut);
      assert_int_equal(kv_sf_block_decode(&d, copy, cut, &why), KV_ERR_CORRUPT);
      assert_non_null(why);
    }
    for (int m = 0; m < 20; m++) {
      memcpy(copy, b.out.p, len);
      int nflips = 1 + (int)tu_below(&st, 4);
      for (int f = 0; f < nflips; f++) copy[tu_below(&st, len)] ^= (uint8_t)(1 + tu_below(&st, 255));
      int rc = kv_sf_block_decode(&d, copy, len, &why);
      assert_true(rc == KV_OK || rc == KV_ERR_CORRUPT);
      if (rc == KV_OK) {  /* whatever decoded must be self-consistent */
        ok++;
        assert_int_equal(d.row_first[d.nrows], d.ncells);
        for (uint32_t i = 0; i < d.ncells; i++) assert_true(d.c_qual[i] < d.nquals);
      } else {
        bad++;
      }
    }
  }
  fprintf(stderr, "[sf_block] damaged blocks: %zu decoded, %zu reported corrupt\n", ok, bad);
  assert_true(bad > 0);
  free(copy);
  kv_sf_dblock_free(&d);
  kv_sfb_free(&b);
}

static void test_framing(void **state) {
  (void)state;
  uint64_t st = 42;
  size_t n = 20000;
  uint8_t *text = malloc(n), *noise = malloc(n);
  for (size_t i = 0; i < n; i++) {
    text[i] = (uint8_t)("sensor readings "[i % 16]);
    noise[i] = (uint8_t)tu_rand(&st);
  }
  struct { const uint8_t *raw; int comp; int want_lz4; } cases[] = {
    {text, KV_COMPRESSION_LZ4, 1}, {text, KV_COMPRESSION_NONE, 0},
    {noise, KV_COMPRESSION_LZ4, 0}, {noise, KV_COMPRESSION_NONE, 0},
  };
  kv_sfbuf frame = {0}, scratch = {0};
  for (int c = 0; c < 4; c++) {
    frame.len = 0;
    assert_int_equal(kv_sf_frame_block(cases[c].raw, n, cases[c].comp, &frame), KV_OK);
    assert_int_equal(frame.p[0], cases[c].want_lz4 ? KV_SF_STORED_LZ4 : KV_SF_STORED_RAW);
    if (cases[c].want_lz4) assert_true(frame.len < n / 4);
    else assert_int_equal(frame.len, n + KV_SF_BLOCK_OVERHEAD);
    const uint8_t *raw;
    size_t raw_len;
    assert_int_equal(kv_sf_unframe_block(frame.p, frame.len, (uint32_t)n, &scratch, &raw,
                                         &raw_len, "f.sf", 4096), KV_OK);
    assert_int_equal(raw_len, n);
    assert_memory_equal(raw, cases[c].raw, n);
    /* The index disagrees on the raw size; the block is cut; a byte is flipped. */
    assert_int_equal(kv_sf_unframe_block(frame.p, frame.len, (uint32_t)n + 1, &scratch, &raw,
                                         &raw_len, "f.sf", 4096), KV_ERR_CORRUPT);
    assert_int_equal(kv_sf_unframe_block(frame.p, frame.len - 1, (uint32_t)n, &scratch, &raw,
                                         &raw_len, "f.sf", 4096), KV_ERR_CORRUPT);
    size_t at = tu_below(&st, frame.len);
    frame.p[at] ^= 0x40;
    assert_int_equal(kv_sf_unframe_block(frame.p, frame.len, (uint32_t)n, &scratch, &raw,
                                         &raw_len, "f.sf", 4096), KV_ERR_CORRUPT);
    assert_non_null(strstr(kv_errmsg(), "f.sf"));
    assert_non_null(strstr(kv_errmsg(), "offset 4096"));
  }
  kv_sfbuf_free(&frame);
  kv_sfbuf_free(&scratch);
  free(text);
  free(noise);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_row_modes),
    cmocka_unit_test(test_values_transposed),
    cmocka_unit_test(test_values_widths),
    cmocka_unit_test(test_random_and_damaged),
    cmocka_unit_test(test_framing),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
