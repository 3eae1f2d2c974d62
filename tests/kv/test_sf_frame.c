/*
** tests/kv/test_sf_frame.c: sectioned block framing (kv/sf/sf_frame.c, docs/FORMAT.md Part 2,
** compression byte 2) without files: a block of twelve qualifiers framed with its value
** groups as sections unframes to the very bytes the encoder wrote; each section inflates on
** its own to its place, so a reader can decompress only the groups it needs; blocks that
** cannot gain (small, uncompressed, bad cuts) keep the whole-block forms; and a damaged frame
** (any byte of the section table changed with the checksum made to match, any truncation)
** is KV_ERR_CORRUPT, never a crash or a read past the block (run it under ASan).
** Seeded: the seed is printed; ROWAN_SEED reruns it.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <xxhash.h>

#include "kv/util/coding.h"
#include "kv/sf/sf_int.h"
#include "testutil.h"

#define NQ 12

/* Stage rows rows of NQ 8-byte values (sensor-like: slowly changing numbers) and encode. */
static void build(kv_sfb_builder *b, uint32_t rows, uint64_t *st) {
  kv_sfb_reset(b);
  int64_t v[NQ] = {0};
  for (uint32_t r = 0; r < rows; r++) {
    uint8_t key[12];
    memcpy(key, "STATION", 7);
    key[7] = (uint8_t)(r >> 24); /* big-endian: rows in key order */
    key[8] = (uint8_t)(r >> 16);
    key[9] = (uint8_t)(r >> 8);
    key[10] = (uint8_t)r;
    key[11] = 0;
    for (int q = 0; q < NQ; q++) {
      char qual[4];
      snprintf(qual, sizeof qual, "Q%02d", q);
      v[q] += (int64_t)tu_below(st, 7) - 3;
      uint8_t val[8];
      kv_put_u64le(val, (uint64_t)v[q] ^ 0x8000000000000000ull);
      kv_cell c = {key, sizeof key, (const uint8_t *)qual, (uint32_t)strlen(qual),
                   1700000000000, 5 + r, KV_PUT, val, 8};
      assert_int_equal(kv_sfb_add(b, &c, q == 0), KV_OK);
    }
  }
  assert_int_equal(kv_sfb_encode(b), KV_OK);
}

/* Make the frame's checksum match its (changed) bytes again. */
static void reseal(uint8_t *f, size_t len) {
  size_t stored = kv_get_u32le(f + 5);
  if (KV_SF_BLOCK_OVERHEAD + stored == len)
    kv_put_u64le(f + KV_SF_BLOCK_HEADER + stored, XXH3_64bits(f, KV_SF_BLOCK_HEADER + stored));
}

static void test_round_trip(void **state) {
  (void)state;
  uint64_t st = tu_seed("sf_frame");
  kv_sfb_builder b;
  kv_sfb_init(&b);
  build(&b, 600, &st);
  assert_int_equal(b.ncuts, NQ); /* one section per value group */
  assert_true(b.out.len >= KV_SF_SECTION_MIN_RAW);
  kv_sfbuf frame = {0}, scratch = {0};
  assert_int_equal(kv_sf_frame_block_cut(b.out.p, b.out.len, b.cuts, b.ncuts,
                                         KV_COMPRESSION_LZ4, &frame), KV_OK);
  assert_int_equal(frame.p[0], KV_SF_STORED_SECTIONS);
  assert_true(frame.len < b.out.len);
  const uint8_t *raw;
  size_t raw_len;
  uint32_t n = (uint32_t)b.out.len;
  assert_int_equal(kv_sf_unframe_block(frame.p, frame.len, n, &scratch, &raw, &raw_len, "f.sf", 0),
                   KV_OK);
  assert_int_equal(raw_len, b.out.len);
  assert_memory_equal(raw, b.out.p, raw_len);
  /* the section table: offsets at the cuts; each section alone lands in its place */
  kv_sf_sections sec = {0};
  uint8_t how = 9;
  const char *why = NULL;
  assert_int_equal(kv_sf_frame_open(frame.p, frame.len, n, &sec, &how, &why), KV_OK);
  assert_int_equal(how, KV_SF_STORED_SECTIONS);
  assert_int_equal(sec.n, NQ + 1);
  assert_int_equal(sec.raw_off[0], 0);
  for (uint32_t k = 1; k <= NQ; k++) assert_int_equal(sec.raw_off[k], b.cuts[k - 1]);
  assert_int_equal(sec.raw_off[sec.n], n);
  uint8_t *part = malloc(n);
  memset(part, 0xee, n);
  uint32_t want[] = {0, 5, NQ};
  for (int i = 0; i < 3; i++)
    assert_int_equal(kv_sf_section_inflate(frame.p, &sec, want[i], part, &why), KV_OK);
  for (uint32_t k = 0; k < sec.n; k++) {
    uint32_t a = sec.raw_off[k], len = sec.raw_off[k + 1] - a;
    bool inflated = k == 0 || k == 5 || k == NQ;
    if (inflated) {
      assert_memory_equal(part + a, b.out.p + a, len);
    } else {
      for (uint32_t i = 0; i < len; i++) assert_int_equal(part[a + i], 0xee);
    }
  }
  /* the cuts can be read back from the frame (a block framed again keeps its sections) */
  uint32_t *cuts = NULL;
  size_t cap = 0, ncuts = 0;
  assert_int_equal(kv_sf_frame_cuts(frame.p, frame.len, &cuts, &cap, &ncuts), KV_OK);
  assert_int_equal(ncuts, NQ);
  assert_memory_equal(cuts, b.cuts, NQ * sizeof *cuts);
  free(cuts);
  free(part);
  kv_sf_sections_free(&sec);
  kv_sfbuf_free(&frame);
  kv_sfbuf_free(&scratch);
  kv_sfb_free(&b);
}

static void test_whole_forms_kept(void **state) {
  (void)state;
  uint64_t st = 7;
  kv_sfb_builder b;
  kv_sfb_init(&b);
  kv_sfbuf frame = {0};
  build(&b, 20, &st); /* under KV_SF_SECTION_MIN_RAW */
  assert_true(b.out.len < KV_SF_SECTION_MIN_RAW);
  assert_int_equal(kv_sf_frame_block_cut(b.out.p, b.out.len, b.cuts, b.ncuts,
                                         KV_COMPRESSION_LZ4, &frame), KV_OK);
  assert_int_not_equal(frame.p[0], KV_SF_STORED_SECTIONS);
  build(&b, 600, &st);
  frame.len = 0; /* no compression asked for */
  assert_int_equal(kv_sf_frame_block_cut(b.out.p, b.out.len, b.cuts, b.ncuts,
                                         KV_COMPRESSION_NONE, &frame), KV_OK);
  assert_int_equal(frame.p[0], KV_SF_STORED_RAW);
  uint32_t bad[] = {100, 100, 200}; /* not increasing */
  frame.len = 0;
  assert_int_equal(kv_sf_frame_block_cut(b.out.p, b.out.len, bad, 3, KV_COMPRESSION_LZ4,
                                         &frame), KV_OK);
  assert_int_equal(frame.p[0], KV_SF_STORED_LZ4);
  uint32_t past[] = {100, (uint32_t)b.out.len}; /* a cut at the end */
  frame.len = 0;
  assert_int_equal(kv_sf_frame_block_cut(b.out.p, b.out.len, past, 2, KV_COMPRESSION_LZ4,
                                         &frame), KV_OK);
  assert_int_equal(frame.p[0], KV_SF_STORED_LZ4);
  kv_sfbuf_free(&frame);
  kv_sfb_free(&b);
}

static void test_damage(void **state) {
  (void)state;
  uint64_t st = tu_seed("sf_frame damage");
  kv_sfb_builder b;
  kv_sfb_init(&b);
  build(&b, 400, &st);
  kv_sfbuf frame = {0}, scratch = {0};
  assert_int_equal(kv_sf_frame_block_cut(b.out.p, b.out.len, b.cuts, b.ncuts,
                                         KV_COMPRESSION_LZ4, &frame), KV_OK);
  assert_int_equal(frame.p[0], KV_SF_STORED_SECTIONS);
  uint32_t n = (uint32_t)b.out.len;
  kv_sf_sections sec = {0};
  uint8_t how;
  const char *why = NULL;
  assert_int_equal(kv_sf_frame_open(frame.p, frame.len, n, &sec, &how, &why), KV_OK);
  size_t table_end = sec.disk_off[0];
  uint8_t *copy = malloc(frame.len);
  const uint8_t *raw;
  size_t raw_len;
  /* every byte of the section table, changed, with a checksum that matches */
  size_t caught = 0;
  for (size_t at = KV_SF_BLOCK_HEADER; at < table_end; at++) {
    for (int bit = 0; bit < 8; bit++) {
      memcpy(copy, frame.p, frame.len);
      copy[at] ^= (uint8_t)(1u << bit);
      reseal(copy, frame.len);
      int rc = kv_sf_unframe_block(copy, frame.len, n, &scratch, &raw, &raw_len, "f.sf", 8192);
      int rc2 = kv_sf_frame_open(copy, frame.len, n, &sec, &how, &why);
      assert_int_equal(rc2, KV_ERR_CORRUPT); /* the sizes no longer add up */
      assert_int_equal(rc, KV_ERR_CORRUPT);
      caught++;
    }
  }
  /* random changes anywhere in the stored bytes: corrupt, or a block of the raw size */
  for (uint64_t m = 0; m < tu_scaled(2000, 100); m++) {
    memcpy(copy, frame.p, frame.len);
    size_t at = KV_SF_BLOCK_HEADER + tu_below(&st, frame.len - KV_SF_BLOCK_OVERHEAD);
    copy[at] ^= (uint8_t)(1 + tu_below(&st, 255));
    reseal(copy, frame.len);
    int rc = kv_sf_unframe_block(copy, frame.len, n, &scratch, &raw, &raw_len, "f.sf", 8192);
    assert_true(rc == KV_OK || rc == KV_ERR_CORRUPT);
    if (rc == KV_OK) assert_int_equal(raw_len, n);
    if (kv_sf_frame_open(copy, frame.len, n, &sec, &how, &why) == KV_OK)
      for (uint32_t k = 0; k < sec.n; k++) {
        uint8_t *dst = malloc(n);
        int r = kv_sf_section_inflate(copy, &sec, k, dst, &why);
        assert_true(r == KV_OK || r == KV_ERR_CORRUPT);
        free(dst);
      }
  }
  /* every truncation, the stored size left as it was or made to match */
  for (size_t cut = 0; cut < frame.len; cut++) {
    memcpy(copy, frame.p, cut);
    assert_int_equal(kv_sf_unframe_block(copy, cut, n, &scratch, &raw, &raw_len, "f.sf", 1),
                     KV_ERR_CORRUPT);
    if (cut >= KV_SF_BLOCK_OVERHEAD + 1) {
      kv_put_u32le(copy, 0);
      memcpy(copy, frame.p, KV_SF_BLOCK_HEADER);
      kv_put_u32le(copy + 5, (uint32_t)(cut - KV_SF_BLOCK_OVERHEAD));
      reseal(copy, cut);
      assert_int_equal(kv_sf_unframe_block(copy, cut, n, &scratch, &raw, &raw_len, "f.sf", 1),
                       KV_ERR_CORRUPT);
    }
  }
  fprintf(stderr, "[sf_frame] %zu table changes caught\n", caught);
  free(copy);
  kv_sf_sections_free(&sec);
  kv_sfbuf_free(&frame);
  kv_sfbuf_free(&scratch);
  kv_sfb_free(&b);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_round_trip),
    cmocka_unit_test(test_whole_forms_kept),
    cmocka_unit_test(test_damage),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
