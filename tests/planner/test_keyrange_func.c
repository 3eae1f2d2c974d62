/*
** tests/planner/test_keyrange_func.c: the interval of a DATE/TIMESTAMP key column that
** ROUND/FLOOR/CEIL/TRUNC(col, unit[, mult]) op constant selects
** (planner/keyrange_func.h), checked against the rounding itself (catalog/datetime.h, which
** exec/func_date.c evaluates with): for many constants on and off period boundaries, every
** unit (WEEK's Monday origin, MONTH and YEAR periods), multipliers, all five operators and
** both column types, the values at and next to each end of the interval and random values
** near the constant must be inside exactly when the comparison is true. The rounding being
** monotone, that pins the interval. The constant is of the column's type or of the other one
** (a DATE against a TIMESTAMP rounding, an instant). Also: what is refused (bad units, a
** constant neither DATE nor TIMESTAMP).
** Key encodings and EXPLAIN are tests/sql/key_extract.test's.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "catalog/datetime.h"
#include "catalog/func_id.h"
#include "catalog/types.h"
#include "catalog/value.h"
#include "planner/keyrange_func.h"
#include "sql/ast.h"

static const char *const UNITS[] = {"MILLISECOND", "second", "MINUTE", "Hour", "DAY",
                                    "WEEK", "MONTH", "YEAR"};
static const int FUNCS[] = {EXEC_F_FLOOR, EXEC_F_TRUNC, EXEC_F_CEIL, EXEC_F_ROUND};
static const int OPS[] = {SQL_OP_EQ, SQL_OP_LT, SQL_OP_LE, SQL_OP_GT, SQL_OP_GE};

static uint64_t rng = 0x9E3779B97F4A7C15ULL;
static int64_t rnd(int64_t n) { /* 0..n-1 */
  rng ^= rng << 13; rng ^= rng >> 7; rng ^= rng << 17;
  return (int64_t)(rng % (uint64_t)n);
}

static int64_t round_of(int f, int unit, int64_t len, int64_t mult, int64_t us) {
  int how = f == EXEC_F_CEIL ? CAT_DT_CEIL : f == EXEC_F_ROUND ? CAT_DT_NEAREST : CAT_DT_FLOOR;
  return cat_dt_round(how, unit, len, mult, us);
}

static bool holds(int op, int64_t a, int64_t b) {
  switch (op) {
    case SQL_OP_EQ: return a == b;
    case SQL_OP_LT: return a < b;
    case SQL_OP_LE: return a <= b;
    case SQL_OP_GT: return a > b;
    default: return a >= b;
  }
}

static int checks;

/* col (us; a DATE column: days) against iv/r, as the comparison says. */
static void check_one(int f, int unit, int64_t len, int64_t mult, int op, int ct, int64_t cu,
                      int r, const plan_kr_round_iv *iv, int64_t col) {
  int64_t us = ct == CAT_T_DATE ? col * CAT_US_PER_DAY : col;
  if (us < CAT_TS_MIN || us > CAT_TS_MAX) return;
  bool want = holds(op, round_of(f, unit, len, mult, us), cu);
  bool got = r == 1 && (!iv->has_lo || col >= iv->lo.u.i) && (!iv->has_hi || col < iv->hi.u.i);
  if (want != got) {
    fprintf(stderr, "f %d unit %d mult %lld op %d type %d C %lld col %lld: want %d got %d"
            " (r %d lo %lld hi %lld)\n", f, unit, (long long)mult, op, ct, (long long)cu,
            (long long)col, want, got, r, iv->has_lo ? (long long)iv->lo.u.i : -1LL,
            iv->has_hi ? (long long)iv->hi.u.i : -1LL);
    fail();
  }
  checks++;
}

/* f(col of type ct, unit, mult) op c, c of type vt (DATE: days; TIMESTAMP: us). */
static void check_case(int f, int ui, int64_t mult, int op, int ct, int vt, int64_t c) {
  int unit;
  int64_t len;
  const char *un = UNITS[ui];
  assert_true(cat_dt_unit_find((const uint8_t *)un, strlen(un), &unit, &len));
  if (ct == CAT_T_DATE && len && len % CAT_US_PER_DAY) return;
  cat_value uv = cat_v_str(CAT_T_VARCHAR, un, strlen(un));
  cat_value mv = cat_v_int(CAT_T_INTEGER, mult);
  cat_value cv = cat_v_int(vt, c);
  plan_kr_round_iv iv;
  memset(&iv, 0, sizeof iv);
  int r = plan_kr_round_bounds(f, ct, &uv, mult == 1 ? NULL : &mv, op, &cv, &iv);
  assert_true(r == 1 || r == 2);
  if (r == 1) {
    if (iv.has_lo) assert_int_equal(iv.lo.type.id, ct);
    if (iv.has_hi) assert_int_equal(iv.hi.type.id, ct);
  }
  int64_t cu = vt == CAT_T_DATE ? c * CAT_US_PER_DAY : c;
  int64_t cc = ct == CAT_T_DATE ? cat_dt_floor_div(cu, CAT_US_PER_DAY) : cu; /* col's units */
  int64_t span = ct == CAT_T_DATE ? 800 : (len ? len * mult : 400 * CAT_US_PER_DAY) * 3;
  int64_t probe[] = {cc - 1, cc, cc + 1, iv.lo.u.i - 1, iv.lo.u.i, iv.lo.u.i + 1,
                     iv.hi.u.i - 1, iv.hi.u.i, iv.hi.u.i + 1};
  for (size_t k = 0; k < sizeof probe / sizeof probe[0]; k++)
    check_one(f, unit, len, mult, op, ct, cu, r, &iv, probe[k]);
  for (int k = 0; k < 12; k++)
    check_one(f, unit, len, mult, op, ct, cu, r, &iv, cc - span + rnd(2 * span));
}

/* Constants: boundaries of the unit and values next to them, around 2016 and before 1970. */
static void t_model(void **st) {
  (void)st;
  static const int64_t mults[] = {1, 1, 2, 3, 7, 15};
  for (int it = 0; it < 3000; it++) {
    int f = FUNCS[rnd(4)], ui = (int)rnd(8), op = OPS[rnd(5)];
    int ct = rnd(3) ? CAT_T_TIMESTAMP : CAT_T_DATE;
    int64_t mult = mults[rnd(6)];
    int unit;
    int64_t len;
    assert_true(cat_dt_unit_find((const uint8_t *)UNITS[ui], strlen(UNITS[ui]), &unit, &len));
    int64_t base = (rnd(2) ? 16983LL : -3000LL + rnd(600)) * CAT_US_PER_DAY; /* 2016-07-01 */
    int64_t us = base + rnd(90 * CAT_US_PER_DAY);
    int64_t b = cat_dt_round(CAT_DT_FLOOR, unit, len, mult, us);
    int64_t pick[] = {b, b + 1, b - 1, us, cat_dt_next(unit, len, mult, b)};
    int64_t cu = pick[rnd(5)];
    /* the constant: mostly of the column's type, else of the other one (a DATE parameter
       against a TIMESTAMP rounding, a TIMESTAMP against a DATE one) */
    int vt = rnd(4) ? ct : ct == CAT_T_DATE ? CAT_T_TIMESTAMP : CAT_T_DATE;
    int64_t c = vt == CAT_T_DATE ? cat_dt_floor_div(cu, CAT_US_PER_DAY) : cu;
    check_case(f, ui, mult, op, ct, vt, c);
  }
  assert_true(checks > 3000 * 9 / 2);
}

/* The ends of the TIMESTAMP range: an interval past them is open there or empty. */
static void t_extremes(void **st) {
  (void)st;
  for (int f = 0; f < 4; f++)
    for (int o = 0; o < 5; o++)
      for (int ui = 0; ui < 8; ui++) {
        check_case(FUNCS[f], ui, 1, OPS[o], CAT_T_TIMESTAMP, CAT_T_TIMESTAMP, CAT_TS_MAX);
        check_case(FUNCS[f], ui, 1, OPS[o], CAT_T_TIMESTAMP, CAT_T_TIMESTAMP, CAT_TS_MIN);
        check_case(FUNCS[f], ui, 1, OPS[o], CAT_T_DATE, CAT_T_DATE, CAT_DATE_MAX);
        check_case(FUNCS[f], ui, 1, OPS[o], CAT_T_DATE, CAT_T_DATE, CAT_DATE_MIN);
      }
}

/* = a value that is not a boundary is empty; = a boundary is the whole period */
static void t_eq_examples(void **st) {
  (void)st;
  plan_kr_round_iv iv;
  int64_t day = 16983LL * CAT_US_PER_DAY; /* 2016-07-01 00:00:00 */
  cat_value u = cat_v_str(CAT_T_VARCHAR, "DAY", 3);
  cat_value c = cat_v_int(CAT_T_TIMESTAMP, day);
  assert_int_equal(plan_kr_round_bounds(EXEC_F_TRUNC, CAT_T_TIMESTAMP, &u, NULL, SQL_OP_EQ, &c,
                                        &iv), 1);
  assert_true(iv.has_lo && iv.has_hi);
  assert_int_equal(iv.lo.u.i, day);
  assert_int_equal(iv.hi.u.i, day + CAT_US_PER_DAY);
  c.u.i = day + 1000000;
  assert_int_equal(plan_kr_round_bounds(EXEC_F_TRUNC, CAT_T_TIMESTAMP, &u, NULL, SQL_OP_EQ, &c,
                                        &iv), 2);
  /* ROUND(ts, 'DAY') = day: from noon before (half rounds up) to just before noon */
  c.u.i = day;
  assert_int_equal(plan_kr_round_bounds(EXEC_F_ROUND, CAT_T_TIMESTAMP, &u, NULL, SQL_OP_EQ, &c,
                                        &iv), 1);
  assert_int_equal(iv.lo.u.i, day - CAT_US_PER_DAY / 2);
  assert_int_equal(iv.hi.u.i, day + CAT_US_PER_DAY / 2);
  /* CEIL(ts, 'DAY') = day: past the previous midnight up to this one */
  assert_int_equal(plan_kr_round_bounds(EXEC_F_CEIL, CAT_T_TIMESTAMP, &u, NULL, SQL_OP_EQ, &c,
                                        &iv), 1);
  assert_int_equal(iv.lo.u.i, day - CAT_US_PER_DAY + 1);
  assert_int_equal(iv.hi.u.i, day + 1);
}

/* What the planner leaves to the filter: 0 */
static void t_refused(void **st) {
  (void)st;
  plan_kr_round_iv iv;
  cat_value c = cat_v_int(CAT_T_TIMESTAMP, 0), d = cat_v_int(CAT_T_DATE, 0);
  cat_value bad = cat_v_str(CAT_T_VARCHAR, "DAYS", 4), hour = cat_v_str(CAT_T_VARCHAR, "HOUR", 4);
  cat_value nul = cat_v_null(cat_type_of(CAT_T_VARCHAR));
  cat_value m0 = cat_v_int(CAT_T_INTEGER, 0), mbig = cat_v_int(CAT_T_INTEGER, 5000);
  cat_value year = cat_v_str(CAT_T_VARCHAR, "YEAR", 4);
  assert_int_equal(plan_kr_round_bounds(EXEC_F_TRUNC, CAT_T_TIMESTAMP, &bad, NULL, SQL_OP_EQ, &c, &iv), 0);
  assert_int_equal(plan_kr_round_bounds(EXEC_F_TRUNC, CAT_T_TIMESTAMP, &nul, NULL, SQL_OP_EQ, &c, &iv), 0);
  assert_int_equal(plan_kr_round_bounds(EXEC_F_TRUNC, CAT_T_TIMESTAMP, &hour, &m0, SQL_OP_EQ, &c, &iv), 0);
  assert_int_equal(plan_kr_round_bounds(EXEC_F_TRUNC, CAT_T_TIMESTAMP, &year, &mbig, SQL_OP_EQ, &c, &iv), 0);
  assert_int_equal(plan_kr_round_bounds(EXEC_F_ABS, CAT_T_TIMESTAMP, NULL, NULL, SQL_OP_EQ, &c, &iv), 0);
  assert_int_equal(plan_kr_round_bounds(EXEC_F_TRUNC, CAT_T_BIGINT, NULL, NULL, SQL_OP_EQ, &c, &iv), 0);
  /* a DATE column by HOUR, a constant neither DATE nor TIMESTAMP, NULL, <> */
  assert_int_equal(plan_kr_round_bounds(EXEC_F_TRUNC, CAT_T_DATE, &hour, NULL, SQL_OP_EQ, &d, &iv), 0);
  cat_value num = cat_v_int(CAT_T_BIGINT, 0);
  assert_int_equal(plan_kr_round_bounds(EXEC_F_TRUNC, CAT_T_DATE, NULL, NULL, SQL_OP_EQ, &num, &iv), 0);
  assert_int_equal(plan_kr_round_bounds(EXEC_F_TRUNC, CAT_T_TIMESTAMP, NULL, NULL, SQL_OP_EQ, &hour, &iv), 0);
  cat_value cn = cat_v_null(cat_type_of(CAT_T_TIMESTAMP));
  assert_int_equal(plan_kr_round_bounds(EXEC_F_TRUNC, CAT_T_TIMESTAMP, NULL, NULL, SQL_OP_EQ, &cn, &iv), 0);
  assert_int_equal(plan_kr_round_bounds(EXEC_F_TRUNC, CAT_T_TIMESTAMP, NULL, NULL, SQL_OP_NE, &c, &iv), 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(t_model),
      cmocka_unit_test(t_extremes),
      cmocka_unit_test(t_eq_examples),
      cmocka_unit_test(t_refused),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
