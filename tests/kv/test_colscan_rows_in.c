/*
** tests/kv/test_colscan_rows_in.c: kv_cs_rows_in (kv/colscan/colscan_keys.c), the key range check a
** keyed columnar scan applies to a block's rows, against kv_colagg_key_in row by row: random
** sorted keys of one to four bytes from a small alphabet (so keys equal range bounds, are
** prefixes of them and of each other), random sorted disjoint key ranges with open and
** closed, inclusive and exclusive bounds, and skip scans by a one-byte prefix with suffix
** ranges (the row-by-row path). With key ranges alone the rows inside are found by binary
** searches over runs; every row's answer must be the per-key check's. Seeded (tu_seed).
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "kv/colscan/colscan_int.h"
#include "testutil.h"

#define MAXK 4   /* bytes of a key at most */
#define NROWS 64 /* rows of a block */

static int cmp(const void *a, const void *b) {
  const uint8_t *x = a, *y = b; /* [0] length, then the bytes */
  return kv_cs_key_cmp(x + 1, x[0], y + 1, y[0]);
}

/* n random keys, sorted and distinct, into k[i] ([0] the length); returns how many. */
static uint32_t keys(uint64_t *rs, uint8_t k[][MAXK + 1], uint32_t n) {
  for (uint32_t i = 0; i < n; i++) {
    k[i][0] = (uint8_t)(1 + tu_below(rs, MAXK));
    for (uint32_t j = 0; j < k[i][0]; j++) k[i][1 + j] = (uint8_t)('a' + tu_below(rs, 4));
  }
  qsort(k, n, sizeof k[0], cmp);
  uint32_t m = 0;
  for (uint32_t i = 0; i < n; i++)
    if (!m || cmp(k[m - 1], k[i]) != 0) memcpy(k[m++], k[i], sizeof k[0]);
  return m;
}

/* Up to n sorted, disjoint ranges over bounds drawn from b (sorted, distinct): consecutive
** bounds pair up, a NULL (open) bound at either end at times. Returns how many. */
static uint32_t ranges(uint64_t *rs, uint8_t b[][MAXK + 1], uint32_t nb, kv_range *r,
                       uint32_t n) {
  uint32_t m = 0;
  for (uint32_t i = 0; i + 1 < nb && m < n; i += 1 + (uint32_t)tu_below(rs, 3)) {
    kv_range *x = &r[m];
    memset(x, 0, sizeof *x);
    x->start = b[i] + 1;
    x->start_len = b[i][0];
    x->end = b[i + 1] + 1;
    x->end_len = b[i + 1][0];
    x->start_inclusive = tu_below(rs, 2);
    x->end_inclusive = tu_below(rs, 2);
    i++; /* the end bound is not the next range's start */
    m++;
  }
  if (m && tu_below(rs, 4) == 0) r[0].start = NULL;
  if (m && tu_below(rs, 4) == 0) r[m - 1].end = NULL;
  return m;
}

static uint32_t one_byte_prefix(void *ctx, const uint8_t *k, uint32_t n) {
  (void)ctx;
  (void)k;
  return n ? 1 : 0;
}

/* The rows' keys back to back, as a walked block holds them. */
static void pack(uint8_t k[][MAXK + 1], uint32_t n, uint8_t *kb, uint32_t *ko) {
  ko[0] = 0;
  for (uint32_t i = 0; i < n; i++) {
    memcpy(kb + ko[i], k[i] + 1, k[i][0]);
    ko[i + 1] = ko[i] + k[i][0];
  }
}

static void check(const kv_colagg_spec *sp, const uint8_t *kb, const uint32_t *ko, uint32_t n,
                  uint64_t seed) {
  uint8_t kin[NROWS];
  memset(kin, 0xAA, sizeof kin);
  kv_cs_rows_in(sp, kb, ko, n, kin);
  for (uint32_t r = 0; r < n; r++) {
    bool want = kv_colagg_key_in(sp, kb + ko[r], ko[r + 1] - ko[r]);
    if (kin[r] != want)
      fprintf(stderr, "seed %llu: row %u of %u: %d, per key %d\n", (unsigned long long)seed, r,
              n, kin[r], want);
    assert_int_equal(kin[r], want);
  }
}

static void ranges_alone(void **state) {
  (void)state;
  uint64_t seed = tu_seed("ranges_alone"), rs = seed;
  uint8_t k[NROWS][MAXK + 1], b[24][MAXK + 1], kb[NROWS * MAXK];
  uint32_t ko[NROWS + 1];
  kv_range r[12];
  uint32_t runs = (uint32_t)tu_scaled(20000, 4000), inside = 0;
  for (uint32_t t = 0; t < runs; t++) {
    uint32_t n = keys(&rs, k, 1 + (uint32_t)tu_below(&rs, NROWS));
    uint32_t nb = keys(&rs, b, 2 + (uint32_t)tu_below(&rs, 23));
    kv_colagg_spec sp;
    memset(&sp, 0, sizeof sp);
    sp.ranges = r;
    sp.n_ranges = ranges(&rs, b, nb, r, 12);
    if (!sp.n_ranges) continue;
    pack(k, n, kb, ko);
    check(&sp, kb, ko, n, seed);
    for (uint32_t i = 0; i < n; i++) inside += kv_colagg_key_in(&sp, kb + ko[i], ko[i + 1] - ko[i]);
  }
  assert_true(inside > 0); /* the ranges held rows (and, by chance, left others out) */
}

static void skip_scan(void **state) {
  (void)state;
  uint64_t seed = tu_seed("skip_scan"), rs = seed;
  uint8_t k[NROWS][MAXK + 1], b[16][MAXK + 1], kb[NROWS * MAXK];
  uint32_t ko[NROWS + 1];
  kv_range suf[8], outer[4];
  uint32_t runs = (uint32_t)tu_scaled(5000, 1000);
  for (uint32_t t = 0; t < runs; t++) {
    uint32_t n = keys(&rs, k, 1 + (uint32_t)tu_below(&rs, NROWS));
    uint32_t nb = keys(&rs, b, 2 + (uint32_t)tu_below(&rs, 15));
    kv_skip_prefix x = {one_byte_prefix, NULL, suf, ranges(&rs, b, nb, suf, 8), 0};
    kv_colagg_spec sp;
    memset(&sp, 0, sizeof sp);
    sp.skip = &x;
    if (tu_below(&rs, 2)) { /* outer ranges too */
      nb = keys(&rs, b, 2 + (uint32_t)tu_below(&rs, 7));
      sp.ranges = outer;
      sp.n_ranges = ranges(&rs, b, nb, outer, 4);
    }
    pack(k, n, kb, ko);
    check(&sp, kb, ko, n, seed);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(ranges_alone),
      cmocka_unit_test(skip_scan),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
