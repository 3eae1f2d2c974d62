/*
** tests/catalog/test_valcodec.c: the cell value codec (catalog/valcodec.h): round trip and
** order preservation (cat_vc_compare equals the typed comparator) on edge and random values
** of every type; fixed sizes (DOUBLE exactly 8 bytes); the inline filter helpers; clean
** failure on wrong lengths. Seeded (tu_seed).
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "catalog/valcodec.h"
#include "gen.h"

typedef struct enc_val {
  cat_value v;      /* the value */
  uint8_t b[64];    /* its cell encoding */
  size_t len;       /* encoding length */
} enc_val;

static gen_arena arena;

static int sign(int x) { return (x > 0) - (x < 0); }

static void test_order_and_round_trip(void **state) {
  (void)state;
  uint64_t seed = tu_seed("valcodec_order"), rng = seed;
  int per = (int)tu_scaled(250, 60);
  enc_val *vals = calloc((size_t)per + 40, sizeof *vals);
  uint64_t comparisons = 0;
  for (int t = 0; t < GEN_NTYPES; t++) {
    const cat_type *ty = &gen_types[t];
    arena.used = 0;
    int n = 0;
    cat_value v;
    for (int e = 0; gen_edge(ty, e, &arena, &v); e++) vals[n++].v = v;
    while (n < per + 20) vals[n++].v = gen_random(ty, &rng, &arena);
    for (int i = 0; i < n; i++) {
      cat_error err;
      assert_int_equal(cat_vc_encode(&vals[i].v, vals[i].b, sizeof vals[i].b, &vals[i].len, &err), CAT_OK);
      int w = cat_type_fixed_width(ty->id);
      if (w) assert_int_equal(vals[i].len, (size_t)w);
      cat_value back;
      assert_int_equal(cat_vc_decode(ty, vals[i].b, vals[i].len, &back, &err), CAT_OK);
      int c = 9;
      assert_int_equal(cat_value_compare(&vals[i].v, &back, &c, &err), CAT_OK);
      if (c != 0) {
        char s1[200], s2[200];
        fail_msg("seed %llu: value round trip %s -> %s", (unsigned long long)seed,
                 gen_show(&vals[i].v, s1, sizeof s1), gen_show(&back, s2, sizeof s2));
      }
    }
    for (int i = 0; i < n; i++)
      for (int j = i; j < n; j++) {
        int want;
        cat_value_compare(&vals[i].v, &vals[j].v, &want, NULL);
        int got = sign(cat_vc_compare(vals[i].b, vals[i].len, vals[j].b, vals[j].len));
        comparisons++;
        if (sign(want) != got) {
          char s1[200], s2[200];
          fail_msg("seed %llu: cell order %s vs %s: want %d got %d", (unsigned long long)seed,
                   gen_show(&vals[i].v, s1, sizeof s1), gen_show(&vals[j].v, s2, sizeof s2), want, got);
        }
      }
  }
  fprintf(stderr, "value codec: %llu order comparisons\n", (unsigned long long)comparisons);
  free(vals);
}

/* The filter's view: `temp > 30.0` on encoded doubles, negative values included; the text
** order ("9.0" > "30.0") is not what the bytes give. */
static void test_filter_helpers(void **state) {
  (void)state;
  double temps[] = {-40.5, -9.0, -0.0, 0.0, 9.0, 29.999, 30.0, 30.5, 100.0};
  uint8_t c[8];
  cat_vc_put_double(c, 30.0);
  for (size_t i = 0; i < sizeof temps / sizeof temps[0]; i++) {
    uint8_t e[8];
    cat_vc_put_double(e, temps[i]);
    assert_int_equal(cat_vc_compare(e, 8, c, 8) > 0, temps[i] > 30.0);
    assert_true(cat_vc_get_double(e) == temps[i]);
  }
  /* Specified bytes: 1.0 -> BF F0 00.., -1.0 -> 40 0F FF.., 0.0 and -0.0 -> 80 00.. */
  static const uint8_t one[8] = {0xBF, 0xF0, 0, 0, 0, 0, 0, 0};
  static const uint8_t mone[8] = {0x40, 0x0F, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF};
  static const uint8_t zero[8] = {0x80, 0, 0, 0, 0, 0, 0, 0};
  uint8_t e[8];
  cat_vc_put_double(e, 1.0);
  assert_memory_equal(e, one, 8);
  cat_vc_put_double(e, -1.0);
  assert_memory_equal(e, mone, 8);
  cat_vc_put_double(e, -0.0);
  assert_memory_equal(e, zero, 8);
  /* Integers of every width. */
  int64_t xs[] = {INT64_MIN, -5, -1, 0, 1, 5, INT64_MAX};
  for (size_t i = 0; i < 7; i++)
    for (int w = 1; w <= 8; w *= 2) {
      int64_t x = xs[i];
      if (w < 8) {
        int64_t lim = (int64_t)1 << (w * 8 - 1);
        if (x < -lim) x = -lim;
        if (x >= lim) x = lim - 1;
      }
      uint8_t b[8];
      cat_vc_put_int(b, w, x);
      assert_true(cat_vc_get_int(b, w) == x);
    }
}

static void test_bad_cells(void **state) {
  (void)state;
  cat_value v;
  cat_error err;
  uint8_t b[16] = {0};
  cat_type d = cat_type_of(CAT_T_DOUBLE), bo = cat_type_of(CAT_T_BOOLEAN), de = cat_type_of(CAT_T_DECIMAL);
  assert_int_equal(cat_vc_decode(&d, b, 7, &v, &err), CAT_ERR_CORRUPT);
  assert_non_null(strstr(err.msg, "DOUBLE"));
  b[0] = 2;
  assert_int_equal(cat_vc_decode(&bo, b, 1, &v, &err), CAT_ERR_CORRUPT);
  static const uint8_t dec_trunc[3] = {0x03, 0x81, 0x10}; /* no terminator */
  assert_int_equal(cat_vc_decode(&de, dec_trunc, 3, &v, &err), CAT_ERR_CORRUPT);
  static const uint8_t dec_ok[4] = {0x03, 0x81, 0x10, 0x00}; /* 0.15e1 = 1.5 */
  assert_int_equal(cat_vc_decode(&de, dec_ok, 4, &v, &err), CAT_OK);
  assert_true(v.u.dec.v == 15 && v.u.dec.scale == 1);
  cat_value nul = cat_v_null(d);
  size_t len;
  assert_int_equal(cat_vc_encode(&nul, b, sizeof b, &len, &err), CAT_ERR_NULL);
  /* Random bytes as DECIMAL never crash. */
  uint64_t rng = tu_seed("bad_cells");
  for (int i = 0; i < 100000; i++) {
    size_t n = tu_below(&rng, 24);
    uint8_t *h = malloc(n ? n : 1);
    for (size_t k = 0; k < n; k++) h[k] = (uint8_t)(tu_below(&rng, 2) ? tu_rand(&rng) : tu_below(&rng, 4));
    int rc = cat_vc_decode(&de, h, n, &v, &err);
    assert_true(rc == CAT_OK || rc == CAT_ERR_CORRUPT);
    free(h);
  }
}

int main(void) {
  arena.cap = 1 << 20;
  arena.buf = malloc(arena.cap);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_order_and_round_trip),
      cmocka_unit_test(test_filter_helpers),
      cmocka_unit_test(test_bad_cells),
  };
  int rc = cmocka_run_group_tests(tests, NULL, NULL);
  free(arena.buf);
  return rc;
}
