/*
** tests/catalog/test_text.c: text parsing and formatting of every type (catalog/text.c),
** exact DECIMAL arithmetic (catalog/decimal.c), conversions and comparisons across types
** (catalog/value.c), and the bad-input messages of issue 3. Seeded (tu_seed).
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "gen.h"

static gen_arena arena;

static cat_value parse_ok(int id, uint8_t p, uint8_t s, uint32_t len, const char *text) {
  cat_type t = {(uint8_t)id, p, s, len, 0};
  cat_value v;
  cat_error err = {0};
  int rc = cat_text_parse(&t, text, strlen(text), &v, &err);
  if (rc) fail_msg("parse of '%s' failed: %s", text, err.msg);
  return v;
}

static void expect_error(int id, uint8_t p, uint8_t s, uint32_t len, const char *text, size_t n,
                         int code, const char *msg) {
  cat_type t = {(uint8_t)id, p, s, len, 0};
  cat_value v;
  cat_error err = {0};
  assert_int_equal(cat_text_parse(&t, text, n, &v, &err), code);
  if (strcmp(err.msg, msg) != 0) fail_msg("message '%s', expected '%s'", err.msg, msg);
}

/* The six bad inputs of issue 3, each with its message. */
static void test_bad_input_messages(void **state) {
  (void)state;
  expect_error(CAT_T_TINYINT, 0, 0, 0, "300", 3, CAT_ERR_RANGE, "value 300 out of range for TINYINT");
  expect_error(CAT_T_DOUBLE, 0, 0, 0, "1e400", 5, CAT_ERR_RANGE, "value 1e400 out of range for DOUBLE");
  expect_error(CAT_T_DATE, 0, 0, 0, "2017-02-30", 10, CAT_ERR_SYNTAX, "invalid DATE '2017-02-30'");
  expect_error(CAT_T_VARCHAR, 0, 0, 10, "abcdefghijkl", 12, CAT_ERR_RANGE,
               "value 'abcdefghijkl' too long for VARCHAR(10)");
  expect_error(CAT_T_VARCHAR, 0, 0, 0, "abc\xff", 4, CAT_ERR_RANGE, "invalid UTF-8 in VARCHAR value at byte 3");
  expect_error(CAT_T_DECIMAL, 5, 2, 0, "1234.567", 8, CAT_ERR_RANGE, "value 1234.567 does not fit DECIMAL(5,2)");
  /* more of the same family */
  expect_error(CAT_T_INTEGER, 0, 0, 0, "12x", 3, CAT_ERR_SYNTAX, "invalid INTEGER '12x'");
  expect_error(CAT_T_BIGINT, 0, 0, 0, "9223372036854775808", 19, CAT_ERR_RANGE,
               "value 9223372036854775808 out of range for BIGINT");
  expect_error(CAT_T_TIMESTAMP, 0, 0, 0, "2016-01-01 24:00:00", 19, CAT_ERR_SYNTAX,
               "invalid TIMESTAMP '2016-01-01 24:00:00'");
  expect_error(CAT_T_DATE, 0, 0, 0, "2019-02-29", 10, CAT_ERR_SYNTAX, "invalid DATE '2019-02-29'");
  expect_error(CAT_T_FLOAT, 0, 0, 0, "1e39", 4, CAT_ERR_RANGE, "value 1e39 out of range for FLOAT");
  expect_error(CAT_T_BOOLEAN, 0, 0, 0, "maybe", 5, CAT_ERR_SYNTAX, "invalid BOOLEAN 'maybe'");
  expect_error(CAT_T_VARCHAR, 0, 0, 0, "\xc0\xaf", 2, CAT_ERR_RANGE, "invalid UTF-8 in VARCHAR value at byte 0");
  expect_error(CAT_T_DOUBLE, 0, 0, 0, "0x10", 4, CAT_ERR_SYNTAX, "invalid DOUBLE '0x10'");
}

static void test_parse_forms(void **state) {
  (void)state;
  assert_true(parse_ok(CAT_T_DATE, 0, 0, 0, "2016-01-01").u.i == 16801);
  assert_true(parse_ok(CAT_T_DATE, 0, 0, 0, "1969-12-31").u.i == -1);
  assert_true(parse_ok(CAT_T_DATE, 0, 0, 0, "2000-02-29").u.i == 11016);
  int64_t ts = 1451606400000000LL;
  assert_true(parse_ok(CAT_T_TIMESTAMP, 0, 0, 0, "2016-01-01").u.i == ts);
  assert_true(parse_ok(CAT_T_TIMESTAMP, 0, 0, 0, "2016-01-01 00:00:00").u.i == ts);
  assert_true(parse_ok(CAT_T_TIMESTAMP, 0, 0, 0, "2016-01-01T00:00:00").u.i == ts);
  assert_true(parse_ok(CAT_T_TIMESTAMP, 0, 0, 0, "2016-01-01 00:00:01.5").u.i == ts + 1500000);
  assert_true(parse_ok(CAT_T_TIMESTAMP, 0, 0, 0, "2016-01-01 00:00:00.123456789").u.i == ts + 123456);
  assert_true(parse_ok(CAT_T_TIMESTAMP, 0, 0, 0, "1969-12-31 23:59:59.999").u.i == -1000);
  assert_true(parse_ok(CAT_T_TIME, 0, 0, 0, "13:05").u.i == (13 * 60 + 5) * 60000000LL);
  assert_true(parse_ok(CAT_T_INTEGER, 0, 0, 0, "-2147483648").u.i == INT32_MIN);
  assert_true(parse_ok(CAT_T_BIGINT, 0, 0, 0, "-9223372036854775808").u.i == INT64_MIN);
  assert_true(parse_ok(CAT_T_DOUBLE, 0, 0, 0, "1.5e3").u.d == 1500.0);
  assert_true(parse_ok(CAT_T_DOUBLE, 0, 0, 0, "-.5").u.d == -0.5);
  assert_true(isnan(parse_ok(CAT_T_DOUBLE, 0, 0, 0, "NaN").u.d));
  assert_true(parse_ok(CAT_T_DOUBLE, 0, 0, 0, "-Infinity").u.d == -INFINITY);
  cat_value d = parse_ok(CAT_T_DECIMAL, 0, 0, 0, "1.25E-2");
  assert_true(d.u.dec.v == 125 && d.u.dec.scale == 4);
  d = parse_ok(CAT_T_DECIMAL, 5, 2, 0, "1.005"); /* rounds half away from zero */
  assert_true(d.u.dec.v == 101 && d.u.dec.scale == 2);
  d = parse_ok(CAT_T_DECIMAL, 5, 2, 0, "-1.005");
  assert_true(d.u.dec.v == -101 && d.u.dec.scale == 2);
  d = parse_ok(CAT_T_DECIMAL, 0, 0, 0, "12e3");
  assert_true(d.u.dec.v == 12000 && d.u.dec.scale == 0);
  d = parse_ok(CAT_T_DECIMAL, 0, 0, 0, "0.00"); /* a zero keeps its written scale */
  assert_true(d.u.dec.v == 0 && d.u.dec.scale == 2);
  char zbuf[16];
  cat_text_format(&d, zbuf, sizeof zbuf);
  assert_string_equal(zbuf, "0.00");
  d = parse_ok(CAT_T_DECIMAL, 0, 0, 0, "0e5");
  assert_true(d.u.dec.v == 0 && d.u.dec.scale == 0);
  assert_true(parse_ok(CAT_T_BOOLEAN, 0, 0, 0, "true").u.b);
  assert_false(parse_ok(CAT_T_BOOLEAN, 0, 0, 0, "F").u.b);
  cat_value c = parse_ok(CAT_T_CHAR, 0, 0, 3, "ab     "); /* trailing spaces do not count */
  assert_int_equal(c.u.s.len, 2);
  cat_value u = parse_ok(CAT_T_VARCHAR, 0, 0, 3, "\xc3\xa9\xc3\xa9\xc3\xa9"); /* 3 characters */
  assert_int_equal(u.u.s.len, 6);
}

/* DECIMAL exactness: 38 digits digit for digit, 0.1 + 0.2 = 0.3, and arithmetic against
** 128-bit integer arithmetic on random operands. */
static void test_decimal_exact(void **state) {
  (void)state;
  const char *big = "-12345678901234567890123456789012345678";
  cat_value v = parse_ok(CAT_T_DECIMAL, 38, 0, 0, big);
  char out[64];
  cat_text_format(&v, out, sizeof out);
  assert_string_equal(out, big);
  const char *frac = "0.12345678901234567890123456789012345678";
  v = parse_ok(CAT_T_DECIMAL, 38, 38, 0, frac);
  cat_text_format(&v, out, sizeof out);
  assert_string_equal(out, frac);
  cat_value a = parse_ok(CAT_T_DECIMAL, 0, 0, 0, "0.1"), b = parse_ok(CAT_T_DECIMAL, 0, 0, 0, "0.2");
  cat_value w = parse_ok(CAT_T_DECIMAL, 0, 0, 0, "0.3");
  cat_dec r;
  cat_error err;
  assert_int_equal(cat_dec_add(a.u.dec, b.u.dec, &r, &err), CAT_OK);
  assert_int_equal(cat_dec_cmp(r, w.u.dec), 0);
  cat_dec_format(r, out);
  assert_string_equal(out, "0.3");
  cat_dec one = {1, 0}, three = {3, 0}, two = {2, 0}, four = {4, 0};
  assert_int_equal(cat_dec_div(one, three, &r, &err), CAT_OK);
  cat_dec_format(r, out);
  assert_string_equal(out, "0.33333333333333333333333333333333333333");
  assert_int_equal(cat_dec_div(two, three, &r, &err), CAT_OK);
  cat_dec_format(r, out);
  assert_string_equal(out, "0.66666666666666666666666666666666666667");
  assert_int_equal(cat_dec_div(one, four, &r, &err), CAT_OK);
  cat_dec_format(r, out);
  assert_string_equal(out, "0.25");
  cat_dec zero = {0, 0};
  assert_int_equal(cat_dec_div(one, zero, &r, &err), CAT_ERR_RANGE);
  cat_dec nines = {gen_pow10(38) - 1, 0};
  assert_int_equal(cat_dec_add(nines, one, &r, &err), CAT_ERR_RANGE);
  assert_int_equal(cat_dec_mul(nines, nines, &r, &err), CAT_ERR_RANGE);
  /* random small operands: compare with exact 128-bit arithmetic at a common scale */
  uint64_t seed = tu_seed("decimal_exact"), rng = seed;
  for (int i = 0; i < 20000; i++) {
    cat_dec x = {(cat_i128)(int64_t)(tu_rand(&rng) >> 20) * (tu_below(&rng, 2) ? 1 : -1), (int)tu_below(&rng, 10)};
    cat_dec y = {(cat_i128)(int64_t)(tu_rand(&rng) >> 20) * (tu_below(&rng, 2) ? 1 : -1), (int)tu_below(&rng, 10)};
    int s = x.scale > y.scale ? x.scale : y.scale;
    cat_i128 xs = x.v * gen_pow10(s - x.scale), ys = y.v * gen_pow10(s - y.scale);
    assert_int_equal(cat_dec_add(x, y, &r, &err), CAT_OK);
    if (!(r.scale == s && r.v == xs + ys)) fail_msg("seed %llu: add wrong", (unsigned long long)seed);
    assert_int_equal(cat_dec_sub(x, y, &r, &err), CAT_OK);
    if (!(r.scale == s && r.v == xs - ys)) fail_msg("seed %llu: sub wrong", (unsigned long long)seed);
    assert_int_equal(cat_dec_mul(x, y, &r, &err), CAT_OK);
    if (!(r.scale == x.scale + y.scale && r.v == x.v * y.v)) fail_msg("seed %llu: mul wrong", (unsigned long long)seed);
    int want = (xs > ys) - (xs < ys);
    if (cat_dec_cmp(x, y) != want) fail_msg("seed %llu: cmp wrong", (unsigned long long)seed);
    if (y.v != 0) { /* (x / y) * y is within one unit of the last digit of x */
      assert_int_equal(cat_dec_div(x, y, &r, &err), CAT_OK);
      cat_dec back, diff;
      assert_int_equal(cat_dec_mul(r, y, &back, &err), CAT_OK);
      assert_int_equal(cat_dec_sub(back, x, &diff, &err), CAT_OK);
      cat_dec tol = {1, 10};
      cat_dec ad = {diff.v < 0 ? -diff.v : diff.v, diff.scale};
      if (cat_dec_cmp(ad, tol) > 0) fail_msg("seed %llu: div inexact", (unsigned long long)seed);
    }
  }
}

/* format -> parse gives an equal value, for edge and random values of every type. */
static void test_text_round_trip(void **state) {
  (void)state;
  uint64_t seed = tu_seed("text_round_trip"), rng = seed;
  int per = (int)tu_scaled(2000, 200);
  for (int t = 0; t < GEN_NTYPES; t++) {
    const cat_type *ty = &gen_types[t];
    arena.used = 0;
    for (int i = 0; i < per; i++) {
      cat_value v;
      if (!gen_edge(ty, i, &arena, &v)) v = gen_random(ty, &rng, &arena);
      char buf[128];
      size_t n = cat_text_format(&v, buf, sizeof buf);
      assert_true(n < sizeof buf);
      cat_value back;
      cat_error err = {0};
      int rc = cat_text_parse(ty, buf, n, &back, &err);
      int c = 9;
      if (rc == CAT_OK) cat_value_compare(&v, &back, &c, NULL);
      if (rc || c) {
        char s1[200];
        fail_msg("seed %llu: %s formatted as '%s' did not parse back (%s)", (unsigned long long)seed,
                 gen_show(&v, s1, sizeof s1), buf, err.msg);
      }
    }
  }
  char buf[64];
  cat_value ts = parse_ok(CAT_T_TIMESTAMP, 0, 0, 0, "2016-01-01T00:00:00.250");
  cat_text_format(&ts, buf, sizeof buf);
  assert_string_equal(buf, "2016-01-01 00:00:00.250");
  cat_value dd = cat_v_double(0.1);
  cat_text_format(&dd, buf, sizeof buf);
  assert_string_equal(buf, "0.1");
}

/* Doubles print as SQLite and Java print them: plain notation with a fractional digit in
** the everyday range, scientific outside it, always the shortest text that reads back. */
static void test_double_text(void **state) {
  (void)state;
  static const struct { double x; const char *text; } cases[] = {
    {10.0, "10.0"}, {30.0, "30.0"}, {-3.5, "-3.5"}, {0.25, "0.25"}, {1023.2, "1023.2"},
    {-0.0, "0.0"}, {0.0, "0.0"}, {4.66666666666667, "4.66666666666667"},
    {1015.66666666667, "1015.66666666667"}, {-2.77555756156289e-17, "-2.77555756156289e-17"},
    {1e20, "1e+20"}, {123456789012345.0, "123456789012345.0"}, {1e15, "1e+15"},
    {0.00001, "0.00001"}, {0.000001, "1e-06"}, {0.1 + 0.2, "0.30000000000000004"},
  };
  char buf[64];
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    cat_value v = cat_v_double(cases[i].x);
    cat_text_format(&v, buf, sizeof buf);
    assert_string_equal(buf, cases[i].text);
  }
}

/* Cross-type comparison and conversion rules of catalog/value.h. */
static void test_compare_and_cast(void **state) {
  (void)state;
  int c;
  cat_error err;
  cat_value i5 = cat_v_int(CAT_T_INTEGER, 5), b5 = cat_v_int(CAT_T_BIGINT, 5);
  cat_dec d55 = {55, 1};
  cat_value dec = cat_v_dec(d55, 0, 0), dbl = cat_v_double(5.5), nan = cat_v_double(NAN),
            inf = cat_v_double(INFINITY), str = cat_v_str(CAT_T_VARCHAR, "5", 1);
  assert_int_equal(cat_value_compare(&i5, &b5, &c, &err), CAT_OK);
  assert_int_equal(c, 0);
  assert_int_equal(cat_value_compare(&i5, &dec, &c, &err), CAT_OK);
  assert_int_equal(c, -1);
  assert_int_equal(cat_value_compare(&dec, &dbl, &c, &err), CAT_OK);
  assert_int_equal(c, 0);
  assert_int_equal(cat_value_compare(&nan, &inf, &c, &err), CAT_OK);
  assert_int_equal(c, 1);
  assert_int_equal(cat_value_compare(&i5, &str, &c, &err), CAT_ERR_TYPE);
  assert_string_equal(err.msg, "cannot compare INTEGER with VARCHAR");
  cat_value nul = cat_v_null(cat_type_of(CAT_T_INTEGER));
  assert_int_equal(cat_value_compare(&nul, &i5, &c, &err), CAT_OK);
  assert_int_equal(c, -1);
  cat_value day = parse_ok(CAT_T_DATE, 0, 0, 0, "2016-01-01"), mid = parse_ok(CAT_T_TIMESTAMP, 0, 0, 0, "2016-01-01 00:00:00");
  assert_int_equal(cat_value_compare(&day, &mid, &c, &err), CAT_OK);
  assert_int_equal(c, 0);
  cat_value ch = cat_v_str(CAT_T_CHAR, "ab  ", 4), vc = cat_v_str(CAT_T_VARCHAR, "ab", 2);
  assert_int_equal(cat_value_compare(&ch, &vc, &c, &err), CAT_OK);
  assert_int_equal(c, 0);

  uint8_t buf[64];
  cat_value out;
  cat_type ti = cat_type_of(CAT_T_TINYINT), it = cat_type_of(CAT_T_INTEGER), vt = {CAT_T_VARCHAR, 0, 0, 3, 0};
  cat_value big = cat_v_int(CAT_T_INTEGER, 300);
  assert_int_equal(cat_value_cast(&big, &ti, &out, buf, sizeof buf, &err), CAT_ERR_RANGE);
  assert_string_equal(err.msg, "value 300 out of range for TINYINT");
  assert_int_equal(cat_value_cast(&dbl, &it, &out, buf, sizeof buf, &err), CAT_OK);
  assert_true(out.u.i == 6); /* 5.5 rounds half away from zero */
  cat_value m25 = cat_v_double(-2.5);
  assert_int_equal(cat_value_cast(&m25, &it, &out, buf, sizeof buf, &err), CAT_OK);
  assert_true(out.u.i == -3);
  assert_int_equal(cat_value_cast(&str, &it, &out, buf, sizeof buf, &err), CAT_OK);
  assert_true(out.u.i == 5);
  cat_value i1234 = cat_v_int(CAT_T_INTEGER, 1234);
  assert_int_equal(cat_value_cast(&i1234, &vt, &out, buf, sizeof buf, &err), CAT_ERR_RANGE);
  assert_string_equal(err.msg, "value '1234' too long for VARCHAR(3)");
  cat_type dt = cat_type_of(CAT_T_DATE), dec52 = {CAT_T_DECIMAL, 5, 2, 0, 0};
  cat_value tsv = parse_ok(CAT_T_TIMESTAMP, 0, 0, 0, "1969-12-31 23:00:00");
  assert_int_equal(cat_value_cast(&tsv, &dt, &out, buf, sizeof buf, &err), CAT_OK);
  assert_true(out.u.i == -1);
  cat_value pt1 = cat_v_double(0.1);
  assert_int_equal(cat_value_cast(&pt1, &dec52, &out, buf, sizeof buf, &err), CAT_OK);
  assert_true(out.u.dec.v == 10 && out.u.dec.scale == 2);
  cat_value tr = cat_v_bool(true);
  assert_int_equal(cat_value_cast(&tr, &it, &out, buf, sizeof buf, &err), CAT_ERR_TYPE);
}

int main(void) {
  arena.cap = 1 << 22;
  arena.buf = malloc(arena.cap);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_bad_input_messages), cmocka_unit_test(test_parse_forms),
      cmocka_unit_test(test_decimal_exact),      cmocka_unit_test(test_text_round_trip),
      cmocka_unit_test(test_compare_and_cast),   cmocka_unit_test(test_double_text),
  };
  int rc = cmocka_run_group_tests(tests, NULL, NULL);
  free(arena.buf);
  return rc;
}
