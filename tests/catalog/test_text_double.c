/*
** tests/catalog/test_text_double.c: DOUBLE values as text (cat_text_format), whose values
** with a few decimals take a fast path, against the general search (the fewest digits that
** read back, cat_format_double_search) on seeded random inputs: decimals of 0 to 9 places
** over magnitudes from 1e-7 to 1e16, random bit patterns, and edge cases (powers of ten,
** 2^52 and 2^53 neighbours, 1e15 and 1e-5 boundaries, negative values); every text also
** reads back as the same double.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "catalog/value.h"
#include "testutil.h"

static void check(double x) {
  char a[64], b[64];
  cat_value v = cat_v_double(x);
  cat_text_format(&v, a, sizeof a);
  cat_format_double_search(x, b, sizeof b);
  if (strcmp(a, b) != 0) fprintf(stderr, "%.17g: fast \"%s\", search \"%s\"\n", x, a, b);
  assert_string_equal(a, b);
  if (isfinite(x)) assert_true(strtod(a, NULL) == x);
}

static void test_edges(void **state) {
  (void)state;
  static const double e[] = {0.0, -0.0, 1.0, -1.0, 0.1, 0.2, 0.3, 0.1 + 0.2, 1e-5, 9.99e-6,
                             1e-6, 1e15, 999999999999999.9, 1e15 - 1, 4503599627370496.0,
                             4503599627370495.5, 9007199254740992.0, 123456789012345.6,
                             -11.9, 423.72, 1014.6, 2.5e-5, 1.0000001, 0.1234567,
                             0.12345678, 99.999999, 1e300, -1e-300, 5e-324, NAN, INFINITY,
                             -INFINITY, 1.7976931348623157e308};
  for (size_t i = 0; i < sizeof e / sizeof e[0]; i++) check(e[i]);
  for (int k = -8; k <= 16; k++) {
    check(pow(10, k));
    check(-pow(10, k));
    check(nextafter(pow(10, k), 0));
    check(nextafter(pow(10, k), INFINITY));
  }
}

static void test_random(void **state) {
  (void)state;
  uint64_t s = tu_seed("text_double");
  size_t n = (size_t)tu_scaled(150000, 20000);
  for (size_t i = 0; i < n; i++) {
    uint64_t r = tu_rand(&s);
    switch (r % 3) {
      case 0: { /* a decimal with `places` places */
        int places = (int)((r >> 8) % 10), mag = (int)((r >> 16) % 17) - 7;
        double m = (double)(tu_rand(&s) % 100000000ull) / pow(10, places);
        double x = m * pow(10, mag > 0 ? mag : 0);
        if (mag < 0) x = m / pow(10, -mag);
        check((r >> 32) & 1 ? -x : x);
        break;
      }
      case 1: { /* printed from a short decimal text */
        char t[40];
        snprintf(t, sizeof t, "%.*f", (int)((r >> 8) % 8),
                 (double)(int64_t)(tu_rand(&s) % 2000000000ull) / 1000.0 - 1e6);
        check(strtod(t, NULL));
        break;
      }
      default: { /* any bit pattern */
        uint64_t bits = tu_rand(&s);
        double x;
        memcpy(&x, &bits, sizeof x);
        check(x);
      }
    }
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_edges),
      cmocka_unit_test(test_random),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
