/*
** tests/catalog/test_text_fast.c: the fast number and timestamp parsers (catalog/text_fast.h)
** and cat_text_parse, which uses them, against independent references on millions of
** seeded random inputs and on edge cases: doubles bit for bit against strtod (the general
** path), including texts the fast path declines (too many digits, large exponents), and
** every text cat_text_parse refuses; integers against strtoll; timestamps against the
** general parser reached through a form the fast path does not take ('.000000' appended),
** valid and invalid dates alike.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "catalog/text_fast.h"
#include "catalog/types.h"
#include "catalog/value.h"
#include "testutil.h"

static const cat_type T_DOUBLE = {CAT_T_DOUBLE, 0, 0, 0, 0};
static const cat_type T_BIGINT = {CAT_T_BIGINT, 0, 0, 0, 0};
static const cat_type T_TS = {CAT_T_TIMESTAMP, 0, 0, 0, 0};

static bool same_double(double a, double b) { return memcmp(&a, &b, sizeof a) == 0; }

/* A random decimal text: sign, digits with a point somewhere, leading/trailing zeros, an
** optional exponent; sometimes junk. */
static size_t gen_number(uint64_t *rng, char *buf) {
  size_t n = 0;
  unsigned k = (unsigned)tu_below(rng, 8);
  if (k == 0) buf[n++] = '-';
  else if (k == 1) buf[n++] = '+';
  int lead = tu_below(rng, 4) == 0 ? (int)tu_below(rng, 4) : 0;
  for (int i = 0; i < lead; i++) buf[n++] = '0';
  int nd = 1 + (int)tu_below(rng, tu_below(rng, 3) ? 17 : 26);
  int point = tu_below(rng, 3) ? (int)tu_below(rng, (uint64_t)nd + 1) : -1;
  for (int i = 0; i < nd; i++) {
    if (i == point) buf[n++] = '.';
    buf[n++] = (char)('0' + tu_below(rng, 10));
  }
  if (point == nd) buf[n++] = '.';
  if (tu_below(rng, 3) == 0) {
    buf[n++] = tu_below(rng, 2) ? 'e' : 'E';
    unsigned s = (unsigned)tu_below(rng, 3);
    if (s == 1) buf[n++] = '-';
    else if (s == 2) buf[n++] = '+';
    n += (size_t)sprintf(buf + n, "%d", (int)tu_below(rng, tu_below(rng, 4) ? 30 : 400));
  }
  if (tu_below(rng, 50) == 0) buf[tu_below(rng, n)] = "x.e-+ 9"[tu_below(rng, 7)]; /* junk */
  buf[n] = 0;
  return n;
}

static void check_double_text(const char *s, size_t n, uint64_t seed) {
  cat_value v;
  cat_error err = {0};
  int rc = cat_text_parse(&T_DOUBLE, s, n, &v, &err);
  double fast;
  bool took = cat_text_fast_double(s, n, &fast);
  char *end;
  double ref = strtod(s, &end);
  bool ref_ok = end == s + n && n > 0;
  if (took) {
    if (!ref_ok || !same_double(fast, ref))
      fail_msg("seed %llu: fast path gives %.17g for '%s', strtod %.17g",
               (unsigned long long)seed, fast, s, ref);
    if (rc != CAT_OK) fail_msg("seed %llu: '%s' taken by the fast path, refused by cat_text_parse",
                               (unsigned long long)seed, s);
  }
  if (rc == CAT_OK) {
    if (!ref_ok || !same_double(v.u.d, ref))
      fail_msg("seed %llu: cat_text_parse gives %.17g for '%s', strtod %.17g",
               (unsigned long long)seed, v.u.d, s, ref);
  }
}

static void test_doubles_random(void **state) {
  (void)state;
  uint64_t seed = tu_seed("text_fast_doubles"), rng = seed;
  uint64_t n = tu_scaled(2000000, 100000), taken = 0;
  char buf[512];
  for (uint64_t i = 0; i < n; i++) {
    size_t len = gen_number(&rng, buf);
    double d;
    if (cat_text_fast_double(buf, len, &d)) taken++;
    check_double_text(buf, len, seed);
  }
  fprintf(stderr, "[text_fast_doubles] %llu inputs, %llu by the fast path\n",
          (unsigned long long)n, (unsigned long long)taken);
  assert_true(taken > n / 3 && taken < n); /* both paths were exercised */
}

static void test_doubles_edges(void **state) {
  (void)state;
  static const char *cases[] = {
      "0", "-0", "+0", "0.0", "-0.0", ".5", "5.", "-.5e1", "1e22", "1e23", "1e-22", "1e-23",
      "9007199254740992", "9007199254740993", "9007199254740991e22", "4.35", "0.1", "0.3",
      "2.2250738585072014e-308", "1.7976931348623157e308", "1e309", "123456789012345678",
      "1234567890123456789012", "0.000000000000000000000000000001", "3.14159265358979",
      "00000000000000000000000000000000001.5", "1e", "e5", ".", "-", "+", "", "1e+", "1.2.3",
      "NaN", "Infinity", "-Infinity", "inf", "0x1p3", " 1", "1 ", "1e0000000000000000000001",
      "4.9e-324", "89255.0e-22", "1.5e-5", "30.5", "-12.25"};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
    check_double_text(cases[i], strlen(cases[i]), 0);
  double d;
  assert_true(cat_text_fast_double("30.5", 4, &d) && d == 30.5);
  assert_true(cat_text_fast_double("-0", 2, &d) && same_double(d, -0.0));
  assert_false(cat_text_fast_double("1e23", 4, &d));      /* 10^23 is not exact */
  assert_false(cat_text_fast_double("9007199254740993", 16, &d)); /* above 2^53 */
  assert_false(cat_text_fast_double("NaN", 3, &d));
}

static void test_integers(void **state) {
  (void)state;
  uint64_t seed = tu_seed("text_fast_ints"), rng = seed;
  uint64_t n = tu_scaled(1000000, 50000);
  char buf[64];
  for (uint64_t i = 0; i < n; i++) {
    int nd = 1 + (int)tu_below(&rng, 21);
    size_t len = 0;
    unsigned sg = (unsigned)tu_below(&rng, 4);
    if (sg == 0) buf[len++] = '-';
    else if (sg == 1) buf[len++] = '+';
    for (int k = 0; k < nd; k++) buf[len++] = (char)('0' + tu_below(&rng, 10));
    if (tu_below(&rng, 40) == 0) buf[tu_below(&rng, len)] = 'x';
    buf[len] = 0;
    cat_value v;
    cat_error err = {0};
    int rc = cat_text_parse(&T_BIGINT, buf, len, &v, &err);
    char *end;
    errno = 0;
    long long ref = strtoll(buf, &end, 10);
    bool ref_ok = end == buf + len && errno == 0;
    if ((rc == CAT_OK) != ref_ok || (ref_ok && v.u.i != ref))
      fail_msg("seed %llu: '%s' gives rc %d value %lld, strtoll %lld (ok %d)",
               (unsigned long long)seed, buf, rc, (long long)v.u.i, ref, ref_ok);
    int64_t f;
    if (cat_text_fast_int(buf, len, &f) && (!ref_ok || f != ref))
      fail_msg("seed %llu: fast int '%s' gives %lld", (unsigned long long)seed, buf, (long long)f);
  }
}

static void test_timestamps(void **state) {
  (void)state;
  uint64_t seed = tu_seed("text_fast_ts"), rng = seed;
  uint64_t n = tu_scaled(1000000, 50000), valid = 0;
  for (uint64_t i = 0; i < n; i++) {
    char a[64], b[80];
    int y = tu_below(&rng, 10) ? 1900 + (int)tu_below(&rng, 250) : (int)tu_below(&rng, 10000);
    int mo = (int)tu_below(&rng, 14), d = (int)tu_below(&rng, 33);
    int h = (int)tu_below(&rng, 25), mi = (int)tu_below(&rng, 61), s = (int)tu_below(&rng, 61);
    char sep = tu_below(&rng, 4) ? ' ' : 'T';
    snprintf(a, sizeof a, "%04d-%02d-%02d%c%02d:%02d:%02d", y, mo, d, sep, h, mi, s);
    snprintf(b, sizeof b, "%s.000000", a); /* the general parser's form */
    size_t la = strlen(a);
    if (tu_below(&rng, 30) == 0) a[tu_below(&rng, la)] = (char)"/x- :9"[tu_below(&rng, 6)];
    snprintf(b, sizeof b, "%s.000000", a);
    cat_value va, vb;
    cat_error ea = {0}, eb = {0};
    int ra = cat_text_parse(&T_TS, a, la, &va, &ea);
    int rb = cat_text_parse(&T_TS, b, strlen(b), &vb, &eb);
    if ((ra == CAT_OK) != (rb == CAT_OK) || (ra == CAT_OK && va.u.i != vb.u.i))
      fail_msg("seed %llu: '%s' gives rc %d (%lld), '%s' rc %d (%lld)",
               (unsigned long long)seed, a, ra, (long long)va.u.i, b, rb, (long long)vb.u.i);
    int64_t us;
    if (cat_text_fast_timestamp(a, la, &us)) {
      valid++;
      if (rb != CAT_OK || us != vb.u.i)
        fail_msg("seed %llu: fast timestamp '%s' gives %lld", (unsigned long long)seed, a,
                 (long long)us);
    }
  }
  assert_true(valid > n / 4);
  int64_t us;
  assert_true(cat_text_fast_timestamp("1970-01-01 00:00:01", 19, &us) && us == 1000000);
  assert_true(cat_text_fast_timestamp("2016-02-29 23:59:59", 19, &us));
  assert_false(cat_text_fast_timestamp("2015-02-29 00:00:00", 19, &us));
  assert_false(cat_text_fast_timestamp("2015-01-01 24:00:00", 19, &us));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_doubles_edges),
      cmocka_unit_test(test_doubles_random),
      cmocka_unit_test(test_integers),
      cmocka_unit_test(test_timestamps),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
