/*
** tests/kv/test_cell_cmp.c: the byte order of kv/util/cell.h (kv_bytes_cmp, which kv_cell_cmp
** uses for row keys and qualifiers) against a simple model, one unsigned byte at a time with
** a prefix first: random pairs of every length from 0 to 80 (across the 8-byte words the
** comparison takes at once and the 64-byte length past which it calls memcmp) that share a
** random prefix and then differ in one byte, high bytes (0x80-0xff, unsigned) included; the
** same pointer on both sides with equal and unequal lengths; and kv_cell_cmp's order of the
** fields after the row key. Only the sign of a comparison is checked (all that callers use).
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "kv/util/cell.h"
#include "testutil.h"

static int sign(int c) { return (c > 0) - (c < 0); }

static int model_cmp(const uint8_t *a, size_t al, const uint8_t *b, size_t bl) {
  size_t n = al < bl ? al : bl;
  for (size_t i = 0; i < n; i++)
    if (a[i] != b[i]) return a[i] < b[i] ? -1 : 1;
  return (al > bl) - (al < bl);
}

static void test_bytes_against_model(void **state) {
  uint64_t rng = tu_seed("cell_cmp_bytes");
  int rounds = (int)tu_scaled(200000, 20000);
  uint8_t a[96], b[96];
  for (int r = 0; r < rounds; r++) {
    size_t al = (size_t)tu_below(&rng, 81), bl = (size_t)tu_below(&rng, 81);
    for (size_t i = 0; i < al; i++) a[i] = (uint8_t)tu_below(&rng, 256);
    /* b: a's first bytes, then one byte changed (or not), then random */
    size_t common = (size_t)tu_below(&rng, (al < bl ? al : bl) + 1);
    memcpy(b, a, common);
    for (size_t i = common; i < bl; i++)
      b[i] = i < al && tu_below(&rng, 2) ? a[i] : (uint8_t)tu_below(&rng, 256);
    if (common < bl && tu_below(&rng, 2)) /* one byte off by one: the words differ by a bit */
      b[common] = (uint8_t)(common < al ? a[common] + (tu_below(&rng, 2) ? 1 : -1) : b[common]);
    int want = model_cmp(a, al, b, bl);
    assert_int_equal(sign(kv_bytes_cmp(a, al, b, bl)), want);
    assert_int_equal(sign(kv_bytes_cmp(b, bl, a, al)), -want);
    assert_int_equal(kv_bytes_cmp(a, al, a, al), 0);
  }
}

static void test_same_pointer(void **state) {
  const uint8_t k[] = "station-0001\xff\x80";
  assert_int_equal(kv_bytes_cmp(k, 14, k, 14), 0);
  assert_true(kv_bytes_cmp(k, 12, k, 14) < 0); /* a prefix first */
  assert_true(kv_bytes_cmp(k, 14, k, 12) > 0);
  assert_int_equal(kv_bytes_cmp(k, 0, k, 0), 0);
  uint8_t copy[14];
  memcpy(copy, k, 14);
  assert_int_equal(kv_bytes_cmp(k, 14, copy, 14), 0);
  copy[13] = 0x7f;                              /* unsigned: 0x80 > 0x7f */
  assert_true(kv_bytes_cmp(k, 14, copy, 14) > 0);
}

static void test_cell_fields(void **state) {
  const uint8_t r[] = "row", q1[] = "a", q2[] = "b";
  kv_cell x = {r, 3, q1, 1, 10, 5, KV_PUT, NULL, 0}, y = x;
  assert_int_equal(kv_cell_cmp(&x, &y), 0);
  y.qual = q2;
  assert_true(kv_cell_cmp(&x, &y) < 0);        /* qualifier ascending */
  y = x;
  y.ts = 11;
  assert_true(kv_cell_cmp(&x, &y) > 0);        /* timestamp descending */
  y = x;
  y.seq = 6;
  assert_true(kv_cell_cmp(&x, &y) > 0);        /* sequence number descending */
  y = x;
  y.type = KV_DELETE_COLUMN;
  assert_int_equal(sign(kv_cell_cmp(&x, &y)), x.type > y.type ? -1 : 1); /* type descending */
  y = x;
  y.row_len = 2;                                /* "ro" is a prefix of "row", same bytes */
  assert_true(kv_cell_cmp(&x, &y) > 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_bytes_against_model),
    cmocka_unit_test(test_same_pointer),
    cmocka_unit_test(test_cell_fields),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
