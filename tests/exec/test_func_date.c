/*
** tests/exec/test_func_date.c: exec/func.h for dates, times and formats: DATE/TIMESTAMP
** arithmetic, ROUND/FLOOR/CEIL/TRUNC by unit (with multipliers, weeks, months, years, dates
** before 1970, range errors), field extraction, MAKE_TIMESTAMP, NOW/CURRENT_DATE,
** TO_TIMESTAMP/TO_DATE/TO_CHAR with SimpleDateFormat patterns, TO_CHAR/TO_NUMBER with
** DecimalFormat patterns, and a seeded round trip of random timestamps through TO_CHAR and
** TO_TIMESTAMP checked against the catalog's civil-date conversion.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalog/value.h"
#include "exec/engine.h"
#include "exec/func.h"
#include "testutil.h"

#define FUNC_TEST_NOW_US 1451703845250000LL /* 2016-01-02 03:04:05.250 */
#include "func_test_util.h"


static void test_date_arith(void **state) {
  (void)state;
  CHK("+", TIMESTAMP, "2016-01-03 13:05:00", TS("2016-01-02 13:05:00"), N(1));
  CHK("+", TIMESTAMP, "2016-01-03 13:05:00", N(1), TS("2016-01-02 13:05:00"));
  CHK("-", TIMESTAMP, "2016-02-28 13:05:00", TS("2016-03-01 13:05:00"), I(2));
  CHK("+", DATE, "2016-03-01", DT("2016-02-28"), N(2));
  CHK("-", DATE, "2015-12-31", DT("2016-01-01"), N(1));
  CHK("+", TIMESTAMP, "2016-01-01 12:00:00", DT("2016-01-01"), DB(0.5));
  CHK("-", TIMESTAMP, "2016-01-01 12:00:00", TS("2016-01-03 00:00:00"), DC("1.5"));
  CHK("+", TIMESTAMP, "2016-01-01 00:00:00.001", TS("2016-01-01 00:00:00"),
      DC("0.00000001157407407407"));
  CHK("-", BIGINT, "366", DT("2017-01-01"), DT("2016-01-01"));
  CHK("-", DECIMAL, "1.5", TS("2016-01-02 12:00:00"), TS("2016-01-01 00:00:00"));
  CHK("-", DECIMAL, "-0.25", DT("2016-01-01"), TS("2016-01-01 06:00:00"));
  CHK("+", DATE, "NULL", DT("2016-01-01"), NUL(CAT_T_INTEGER));
  ERR("+", EXEC_CONSTRAINT, "out of range", DT("9999-12-31"), N(1));
  ERR("-", EXEC_CONSTRAINT, "out of range", TS("0001-01-01 00:00:00"), N(1));
  ERR("+", EXEC_CONSTRAINT, "out of range", TS("2016-01-01 00:00:00"), I(INT64_MAX));
  ERR("+", EXEC_CONSTRAINT, "out of range", DT("2016-01-01"), I(INT64_MIN));
}

static void test_round_units(void **state) {
  (void)state;
  cat_value t = TS("2016-01-01 13:31:00");
  CHK("ROUND", TIMESTAMP, "2016-01-01 14:00:00", t, S("HOUR"));
  CHK("FLOOR", TIMESTAMP, "2016-01-01 13:00:00", t, S("hour"));
  CHK("TRUNC", TIMESTAMP, "2016-01-01 00:00:00", t);
  CHK("TRUNC", TIMESTAMP, "2016-01-01 00:00:00", t, S("DAY"));
  CHK("CEIL", TIMESTAMP, "2016-01-01 13:31:00", t, S("MINUTE"));
  CHK("CEIL", TIMESTAMP, "2016-01-02 00:00:00", t, S("DAY"));
  CHK("ROUND", TIMESTAMP, "2016-01-02 00:00:00", t, S("DAY"));
  CHK("ROUND", TIMESTAMP, "2016-01-02 00:00:00", TS("2016-01-01 12:00:00"), S("DAY"));
  CHK("ROUND", TIMESTAMP, "2016-01-01 00:00:00", TS("2016-01-01 11:59:59.999999"), S("DAY"));
  CHK("ROUND", TIMESTAMP, "2016-01-01 13:15:00", TS("2016-01-01 13:08:00"), S("MINUTE"), N(15));
  CHK("FLOOR", TIMESTAMP, "2016-01-01 13:00:00", TS("2016-01-01 13:08:00"), S("MINUTE"), N(15));
  CHK("ROUND", TIMESTAMP, "2016-01-01 13:08:01", TS("2016-01-01 13:08:00.5"), S("SECOND"));
  CHK("FLOOR", TIMESTAMP, "2016-01-01 13:08:00.123", TS("2016-01-01 13:08:00.123456"),
      S("MILLISECOND"));
  CHK("FLOOR", TIMESTAMP, "2016-01-04 00:00:00", TS("2016-01-07 10:00:00"), S("WEEK"));
  CHK("FLOOR", TIMESTAMP, "2016-01-04 00:00:00", TS("2016-01-04 00:00:00"), S("WEEK"));
  CHK("TRUNC", TIMESTAMP, "2016-01-01 00:00:00", TS("2016-01-15 10:00:00"), S("MONTH"));
  CHK("CEIL", TIMESTAMP, "2016-02-01 00:00:00", TS("2016-01-15 10:00:00"), S("MONTH"));
  CHK("CEIL", TIMESTAMP, "2016-02-01 00:00:00", TS("2016-02-01 00:00:00"), S("MONTH"));
  CHK("ROUND", TIMESTAMP, "2016-01-01 00:00:00", TS("2016-01-16 10:00:00"), S("MONTH"));
  CHK("ROUND", TIMESTAMP, "2016-02-01 00:00:00", TS("2016-01-16 13:00:00"), S("MONTH"));
  CHK("CEIL", TIMESTAMP, "2017-01-01 00:00:00", TS("2016-12-31 23:00:00"), S("MONTH"));
  CHK("FLOOR", TIMESTAMP, "2016-01-01 00:00:00", TS("2016-06-01 00:00:00"), S("YEAR"));
  CHK("ROUND", TIMESTAMP, "2017-01-01 00:00:00", TS("2016-07-03 00:00:00"), S("YEAR"));
  CHK("FLOOR", TIMESTAMP, "2017-01-01 00:00:00", TS("2017-06-01 00:00:00"), S("MONTH"), N(12));
  CHK("FLOOR", TIMESTAMP, "2017-04-01 00:00:00", TS("2017-05-10 00:00:00"), S("MONTH"), N(3));
  CHK("CEIL", TIMESTAMP, "2017-07-01 00:00:00", TS("2017-05-10 00:00:00"), S("MONTH"), N(3));
  CHK("FLOOR", TIMESTAMP, "2010-01-01 00:00:00", TS("2017-05-10 00:00:00"), S("YEAR"), N(10));
  CHK("FLOOR", TIMESTAMP, "1969-12-31 00:00:00", TS("1969-12-31 13:00:00"), S("DAY"));
  CHK("CEIL", TIMESTAMP, "1969-12-31 14:00:00", TS("1969-12-31 13:00:01"), S("HOUR"));
  CHK("FLOOR", TIMESTAMP, "1969-12-01 00:00:00", TS("1969-12-31 13:00:00"), S("MONTH"));
  CHK("FLOOR", DATE, "2016-03-01", DT("2016-03-15"), S("MONTH"));
  CHK("CEIL", DATE, "2016-04-01", DT("2016-03-15"), S("MONTH"));
  CHK("ROUND", DATE, "2016-03-15", DT("2016-03-15"), S("HOUR"));
  CHK("ROUND", TIMESTAMP, "NULL", NUL(CAT_T_TIMESTAMP), S("HOUR"));
  ERR("ROUND", EXEC_ERROR, "unknown unit 'WEEKS'", t, S("WEEKS"));
  ERR("ROUND", EXEC_ERROR, "multiplier", t, S("HOUR"), N(0));
  ERR("CEIL", EXEC_CONSTRAINT, "out of range", TS("9999-12-31 10:00:00"), S("DAY"));
  ERR("CEIL", EXEC_CONSTRAINT, "out of range", TS("9999-12-31 10:00:00"), S("YEAR"));
}

/* exec_fn_date_round_span: for each rounding (FLOOR, TRUNC, CEIL, ROUND; fixed units with
** multipliers, weeks, months, years) and random timestamps from year 1 to 9999, the span of g =
** the rounding of x holds x, both ends round to g, the values just outside do not (the span
** is the whole set: a narrower one would be right but slower), and random values inside give
** g. DATE roundings and a g the rounding does not give have no span. */
static void test_round_span(void **state) {
  (void)state;
  static const char *const fns[] = {"FLOOR", "TRUNC", "CEIL", "ROUND"};
  static const int ids[] = {EXEC_F_FLOOR, EXEC_F_TRUNC, EXEC_F_CEIL, EXEC_F_ROUND};
  static const char *const units[] = {"MILLISECOND", "SECOND", "MINUTE", "HOUR", "DAY",
                                      "WEEK", "MONTH", "YEAR"};
  static const int64_t mults[] = {1, 2, 7, 15};
  uint64_t rs = tu_seed("test_round_span");
  cat_type ts_t = cat_type_of(CAT_T_TIMESTAMP);
  int spans = 0;
  for (int f = 0; f < 4; f++)
    for (int u = 0; u < 8; u++)
      for (int m = 0; m < 4; m++) {
        cat_value a[3] = {TS("2016-01-01 00:00:00"), S(units[u]), I(mults[m])};
        exec_date_round r;
        assert_true(exec_fn_date_round_prepare(ids[f], CAT_T_TIMESTAMP, a, 3, &ts_t, &r));
        exec_func_ctx c = {&arena, FUNC_TEST_NOW_US, msg, sizeof msg};
        for (int k = 0; k < 60; k++) {
          /* near the range's ends at times; elsewhere years 1 .. 9999 */
          int64_t span = CAT_TS_MAX - CAT_TS_MIN;
          int64_t x = k == 0   ? CAT_TS_MIN
                      : k == 1 ? CAT_TS_MAX
                               : CAT_TS_MIN + (int64_t)(tu_rand(&rs) % (uint64_t)span);
          if (k % 3 == 2) x -= x % 1000000; /* on whole seconds: ties for ROUND */
          cat_value v = cat_v_int(CAT_T_TIMESTAMP, x), g;
          if (exec_fn_date_round(&r, &v, &g, &c) != EXEC_OK) continue; /* out of range */
          int64_t lo, hi;
          if (!exec_fn_date_round_span(&r, g.u.i, &lo, &hi)) {
            fprintf(stderr, "%s(%lld, %s, %lld): no span for %lld\n", fns[f], (long long)x,
                    units[u], (long long)mults[m], (long long)g.u.i);
            fail();
          }
          spans++;
          assert_true(lo <= x && x <= hi);
          cat_value e;
          int64_t ends[4] = {lo, hi, lo - 1, hi + 1};
          for (int i = 0; i < 4; i++) {
            if (ends[i] < CAT_TS_MIN || ends[i] > CAT_TS_MAX) continue;
            cat_value ev = cat_v_int(CAT_T_TIMESTAMP, ends[i]);
            if (exec_fn_date_round(&r, &ev, &e, &c) != EXEC_OK) {
              assert_true(i >= 2); /* outside: may be out of range */
              continue;
            }
            if (i < 2) assert_int_equal(e.u.i, g.u.i);
            else assert_true(e.u.i != g.u.i);
          }
          for (int i = 0; i < 8; i++) {
            int64_t y = lo + (int64_t)(tu_rand(&rs) % (uint64_t)(hi - lo + 1));
            cat_value yv = cat_v_int(CAT_T_TIMESTAMP, y);
            assert_int_equal(exec_fn_date_round(&r, &yv, &e, &c), EXEC_OK);
            assert_int_equal(e.u.i, g.u.i);
          }
          if (g.u.i > CAT_TS_MIN && hi > lo) /* not a result: a value strictly inside */
            assert_false(exec_fn_date_round_span(&r, f < 2 ? lo + 1 : f == 2 ? hi - 1 : hi,
                                                 &lo, &hi));
          exec_arena_reset(&arena);
        }
      }
  assert_true(spans > 4000);
  cat_type dt = cat_type_of(CAT_T_DATE);
  cat_value a[2] = {DT("2016-01-01"), S("MONTH")};
  exec_date_round r;
  assert_true(exec_fn_date_round_prepare(EXEC_F_TRUNC, CAT_T_DATE, a, 2, &dt, &r));
  int64_t lo, hi;
  assert_false(exec_fn_date_round_span(&r, 16801, &lo, &hi)); /* DATE: none */
}

static void test_fields(void **state) {
  (void)state;
  cat_value t = TS("2016-02-29 13:05:07.5");
  CHK("YEAR", INTEGER, "2016", t);
  CHK("MONTH", INTEGER, "2", t);
  CHK("DAYOFMONTH", INTEGER, "29", t);
  CHK("DAY", INTEGER, "29", t);
  CHK("HOUR", INTEGER, "13", t);
  CHK("MINUTE", INTEGER, "5", t);
  CHK("SECOND", INTEGER, "7", t);
  CHK("YEAR", INTEGER, "1969", TS("1969-12-31 23:59:59.999"));
  CHK("HOUR", INTEGER, "23", TS("1969-12-31 23:59:59.999"));
  CHK("MONTH", INTEGER, "12", DT("1969-12-31"));
  CHK("DAYOFWEEK", INTEGER, "1", DT("2016-01-04"));
  CHK("DAYOFWEEK", INTEGER, "7", DT("2016-01-10"));
  CHK("DAYOFWEEK", INTEGER, "3", DT("1969-12-31"));
  CHK("DAYOFYEAR", INTEGER, "366", DT("2016-12-31"));
  CHK("DAYOFYEAR", INTEGER, "1", TS("2017-01-01 10:00:00"));
  CHK("HOUR", INTEGER, "13", parse(CAT_T_TIME, "13:05:07"));
  CHK("SECOND", INTEGER, "7", parse(CAT_T_TIME, "13:05:07"));
  CHK("YEAR", INTEGER, "NULL", NUL(CAT_T_DATE));
  ERR("YEAR", EXEC_ERROR, "does not accept", I(5));
}

static void test_make_now(void **state) {
  (void)state;
  CHK("MAKE_TIMESTAMP", TIMESTAMP, "2016-01-02 03:04:05.250", N(2016), N(1), N(2), N(3), N(4),
      DC("5.25"));
  CHK("MAKE_TIMESTAMP", TIMESTAMP, "2016-02-29 23:59:59.500", N(2016), N(2), N(29), N(23),
      N(59), DB(59.5));
  CHK("MAKE_TIMESTAMP", TIMESTAMP, "NULL", N(2016), N(2), NUL(CAT_T_INTEGER), N(23), N(59),
      N(0));
  ERR("MAKE_TIMESTAMP", EXEC_CONSTRAINT, "day 29 out of range for 2017-02", N(2017), N(2),
      N(29), N(0), N(0), N(0));
  ERR("MAKE_TIMESTAMP", EXEC_CONSTRAINT, "second 60", N(2017), N(2), N(1), N(0), N(0), N(60));
  ERR("MAKE_TIMESTAMP", EXEC_CONSTRAINT, "month 13", N(2017), N(13), N(1), N(0), N(0), N(0));
  ERR("MAKE_TIMESTAMP", EXEC_CONSTRAINT, "hour 24", N(2017), N(1), N(1), N(24), N(0), N(0));
  ERR("MAKE_TIMESTAMP", EXEC_CONSTRAINT, "year 0", N(0), N(1), N(1), N(0), N(0), N(0));
  cat_value out;
  assert_int_equal(run("NOW", 0, NULL, &out, NULL), EXEC_OK);
  assert_int_equal(out.type.id, CAT_T_TIMESTAMP);
  assert_int_equal(out.u.i, FUNC_TEST_NOW_US);
  assert_int_equal(run("CURRENT_DATE", 0, NULL, &out, NULL), EXEC_OK);
  assert_int_equal(out.type.id, CAT_T_DATE);
  assert_int_equal(out.u.i, FUNC_TEST_NOW_US / CAT_US_PER_DAY);
}

static void test_to_timestamp(void **state) {
  (void)state;
  CHK("TO_TIMESTAMP", TIMESTAMP, "2016-01-02 03:04:05", S("2016-01-02 03:04:05"));
  CHK("TO_TIMESTAMP", TIMESTAMP, "2016-01-02 03:04:00", S("02/01/2016 03:04"),
      S("dd/MM/yyyy HH:mm"));
  CHK("TO_TIMESTAMP", TIMESTAMP, "2016-01-02 03:04:05", S("20160102030405"),
      S("yyyyMMddHHmmss"));
  CHK("TO_TIMESTAMP", TIMESTAMP, "2016-01-02 03:04:05.123", S("2016-01-02 03:04:05.123"),
      S("yyyy-MM-dd HH:mm:ss.SSS"));
  CHK("TO_TIMESTAMP", TIMESTAMP, "2016-01-02 03:04:05.123456", S("2016-1-2 3:4:5.123456"),
      S("yyyy-M-d H:m:s.SSSSSS"));
  CHK("TO_TIMESTAMP", TIMESTAMP, "2016-01-02 00:00:00", S("02 Jan 2016"), S("dd MMM yyyy"));
  CHK("TO_TIMESTAMP", TIMESTAMP, "2016-03-02 00:00:00", S("Wednesday, 2 March 2016"),
      S("EEEE, d MMMM yyyy"));
  CHK("TO_TIMESTAMP", TIMESTAMP, "2016-01-02 15:04:00", S("2016-01-02 03:04 PM"),
      S("yyyy-MM-dd hh:mm a"));
  CHK("TO_TIMESTAMP", TIMESTAMP, "2016-01-02 00:04:00", S("2016-01-02 12:04 am"),
      S("yyyy-MM-dd hh:mm a"));
  CHK("TO_TIMESTAMP", TIMESTAMP, "2016-01-02 03:00:00", S("2016-01-02T03Z"),
      S("yyyy-MM-dd'T'HHX"));
  CHK("TO_TIMESTAMP", TIMESTAMP, "1999-01-02 00:00:00", S("99-01-02"), S("yy-MM-dd"));
  CHK("TO_TIMESTAMP", TIMESTAMP, "2016-02-01 00:00:00", S("2016 032"), S("yyyy DDD"));
  CHK("TO_TIMESTAMP", TIMESTAMP, "NULL", NUL(CAT_T_VARCHAR), S("yyyy"));
  ERR("TO_TIMESTAMP", EXEC_ERROR, "does not match format", S("2016/01/02"), S("yyyy-MM-dd"));
  ERR("TO_TIMESTAMP", EXEC_ERROR, "does not match format", S("2016-01-02 extra"),
      S("yyyy-MM-dd"));
  ERR("TO_TIMESTAMP", EXEC_CONSTRAINT, "day 30 out of range", S("2017-02-30"), S("yyyy-MM-dd"));
  ERR("TO_TIMESTAMP", EXEC_ERROR, "unknown pattern letter 'Q'", S("2017"), S("yyyyQ"));
  ERR("TO_TIMESTAMP", EXEC_ERROR, "invalid", S("not a date"));
  CHK("TO_TIMESTAMP", TIMESTAMP, "2016-01-02 00:00:00", S("o'clock 2016-01-02"),
      S("'o''clock' yyyy-MM-dd"));
  CHK("TO_DATE", DATE, "2016-01-02", S("2016-01-02"));
  CHK("TO_DATE", DATE, "2016-01-02", S("02.01.2016 23:59"), S("dd.MM.yyyy HH:mm"));
}

static void test_to_char_date(void **state) {
  (void)state;
  cat_value t = TS("2016-01-02 15:04:05.123456");
  CHK("TO_CHAR", VARCHAR, "2016-01-02 15:04:05.123", t, S("yyyy-MM-dd HH:mm:ss.SSS"));
  CHK("TO_CHAR", VARCHAR, "Sat, 2 Jan 2016", t, S("EEE, d MMM yyyy"));
  CHK("TO_CHAR", VARCHAR, "Saturday 02 January 16", t, S("EEEE dd MMMM yy"));
  CHK("TO_CHAR", VARCHAR, "03 PM", t, S("hh a"));
  CHK("TO_CHAR", VARCHAR, "at 15h, it's 123456", t, S("'at' HH'h, it''s' SSSSSS"));
  CHK("TO_CHAR", VARCHAR, "002 +0000", t, S("DDD Z"));
  CHK("TO_CHAR", VARCHAR, "02/01/16", DT("2016-01-02"), S("dd/MM/yy"));
  CHK("TO_CHAR", VARCHAR, "2016-01-02 15:04:05.123456", t);
  CHK("TO_CHAR", VARCHAR, "12:00", parse(CAT_T_TIME, "12:00:00"), S("HH:mm"));
  CHK("TO_CHAR", VARCHAR, "NULL", NUL(CAT_T_TIMESTAMP), S("yyyy"));
  ERR("TO_CHAR", EXEC_ERROR, "unknown pattern letter 'q'", t, S("yyyy q"));
  ERR("TO_CHAR", EXEC_ERROR, "unterminated quote", t, S("yyyy 'abc"));
}

static void test_number_formats(void **state) {
  (void)state;
  CHK("TO_CHAR", VARCHAR, "1,234,567.89", DC("1234567.891"), S("#,##0.00"));
  CHK("TO_CHAR", VARCHAR, ".5", DC("0.5"), S("#.##"));
  CHK("TO_CHAR", VARCHAR, "0", I(0), S("#"));
  CHK("TO_CHAR", VARCHAR, "-1,234", DB(-1234.5), S("#,##0"));
  CHK("TO_CHAR", VARCHAR, "2", DC("2.5"), S("0"));
  CHK("TO_CHAR", VARCHAR, "4", DC("3.5"), S("0"));
  CHK("TO_CHAR", VARCHAR, "25.6%", DB(0.256), S("0.0%"));
  CHK("TO_CHAR", VARCHAR, "$5.00", N(5), S("$#,##0.00"));
  CHK("TO_CHAR", VARCHAR, "-$5.00", N(-5), S("$#,##0.00"));
  CHK("TO_CHAR", VARCHAR, "0.00", DC("-0.001"), S("0.00"));
  CHK("TO_CHAR", VARCHAR, "001.500", DC("1.5"), S("000.000"));
  CHK("TO_CHAR", VARCHAR, "1.5", DC("1.50"), S("0.0#"));
  CHK("TO_CHAR", VARCHAR, "1,234,567", I(1234567), S("#,###"));
  CHK("TO_CHAR", VARCHAR, "9,223,372,036,854,775,807", I(INT64_MAX), S("#,##0"));
  CHK("TO_CHAR", VARCHAR, "12 kg", DB(12.0), S("0 kg"));
  CHK("TO_CHAR", VARCHAR, "NaN", DB(0.0 / 0.0), S("0.00"));
  CHK("TO_CHAR", VARCHAR, "1.5", DC("1.5"));
  ERR("TO_CHAR", EXEC_ERROR, "no digits", I(5), S("abc"));
  ERR("TO_CHAR", EXEC_ERROR, "two decimal points", I(5), S("0.0.0"));
  CHK("TO_NUMBER", DECIMAL, "1234.50", S("1,234.50"), S("#,##0.00"));
  CHK("TO_NUMBER", DECIMAL, "12.5", S("12.5"));
  CHK("TO_NUMBER", DECIMAL, "-3", S(" -3 "));
  CHK("TO_NUMBER", DECIMAL, "0.25", S("25%"), S("0%"));
  CHK("TO_NUMBER", DECIMAL, "5.00", S("$5.00"), S("$0.00"));
  ERR("TO_NUMBER", EXEC_ERROR, "is not a number", S("abc"));
  ERR("TO_NUMBER", EXEC_ERROR, "is not a number", S("1,234"));
}

/* Random timestamps through TO_CHAR and back with TO_TIMESTAMP, and their fields against
** cat_civil_from_days. */
static void test_format_round_trip(void **state) {
  (void)state;
  uint64_t seed = tu_seed("test_format_round_trip"), st = seed;
  exec_func_ctx c = {&arena, FUNC_TEST_NOW_US, msg, sizeof msg};
  const char *fmts[] = {"yyyy-MM-dd HH:mm:ss.SSSSSS", "yyyyMMddHHmmssSSSSSS",
                        "dd MMMM yyyy hh:mm:ss.SSSSSS a", "EEE yyyy-DDD HH:mm:ss.SSSSSS"};
  uint64_t n = tu_scaled(20000, 500);
  for (uint64_t k = 0; k < n; k++) {
    int64_t us = CAT_TS_MIN + (int64_t)tu_below(&st, (uint64_t)(CAT_TS_MAX - CAT_TS_MIN));
    if (tu_below(&st, 4) == 0) us = us / 1000000 * 1000000;
    cat_value t = cat_v_int(CAT_T_TIMESTAMP, us), out, back;
    const char *f = fmts[tu_below(&st, 4)];
    cat_value a[2] = {t, S(f)};
    assert_int_equal(exec_func_call(EXEC_F_TO_CHAR, a, 2, NULL, &out, &c), EXEC_OK);
    cat_value b[2] = {out, S(f)};
    int rc = exec_func_call(EXEC_F_TO_TIMESTAMP, b, 2, NULL, &back, &c);
    if (rc != EXEC_OK || back.u.i != us)
      fail_msg("seed %llu: %lld as '%.*s' (%s) read back as %lld (%s)", (unsigned long long)seed,
               (long long)us, (int)out.u.s.len, (const char *)out.u.s.p, f, (long long)back.u.i,
               msg);
    int64_t days = us / CAT_US_PER_DAY - (us % CAT_US_PER_DAY < 0), y;
    int m, d;
    cat_civil_from_days(days, &y, &m, &d);
    cat_value r;
    assert_int_equal(exec_func_call(EXEC_F_YEAR, &t, 1, NULL, &r, &c), EXEC_OK);
    assert_int_equal(r.u.i, y);
    assert_int_equal(exec_func_call(EXEC_F_MONTH, &t, 1, NULL, &r, &c), EXEC_OK);
    assert_int_equal(r.u.i, m);
    assert_int_equal(exec_func_call(EXEC_F_DAYOFMONTH, &t, 1, NULL, &r, &c), EXEC_OK);
    assert_int_equal(r.u.i, d);
    assert_int_equal(exec_func_call(EXEC_F_HOUR, &t, 1, NULL, &r, &c), EXEC_OK);
    assert_int_equal(r.u.i, (us - days * CAT_US_PER_DAY) / 3600000000LL);
    /* FLOOR by DAY is the day's midnight, CEIL the next one unless exact */
    cat_value fa[2] = {t, S("DAY")};
    assert_int_equal(exec_func_call(EXEC_F_FLOOR, fa, 2, NULL, &r, &c), EXEC_OK);
    assert_int_equal(r.u.i, days * CAT_US_PER_DAY);
    exec_arena_reset(&arena);
  }
}

static int setup(void **state) {
  (void)state;
  exec_arena_init(&arena);
  return 0;
}
static int teardown(void **state) {
  (void)state;
  exec_arena_free(&arena);
  return 0;
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_date_arith),    cmocka_unit_test(test_round_units),
      cmocka_unit_test(test_round_span),
      cmocka_unit_test(test_fields),        cmocka_unit_test(test_make_now),
      cmocka_unit_test(test_to_timestamp),  cmocka_unit_test(test_to_char_date),
      cmocka_unit_test(test_number_formats), cmocka_unit_test(test_format_round_trip),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
