/*
** tests/planner/test_keyrange_values.c: key-range derivation (planner/keyrange.h) where the
** constants matter: bound coercion (INTEGER k > 5.5 is k >= 6) and out-of-range literals,
** BIGINT and DOUBLE extremes (NaN, infinities, -0.0), FLOAT and DECIMAL coercion, strings
** with 0x00 and CHAR trailing spaces, LIKE prefixes with ESCAPE, row value constructors,
** parameters bound and unbound, the skip-scan cap and EXPLAIN text of many ranges. Every
** expected key is built with catalog/keycodec.h (keyrange_test_util.h). The operators
** themselves (=, ranges, IN, OR, DESC, NULLs) are in test_keyrange.c.
*/
#include "keyrange_test_util.h"

/* ---- Bound coercion and extremes ------------------------------------------------------ */
static void t_int_gt_frac(void **st) {
  (void)st; reset();
  sch s = II;
  run(&s, bin(SQL_OP_GT, col(0), cdec("5.5")));
  expect_kind(PLAN_SCAN_RANGE, 1, 1, 0);
  expect(0, &s, S_AT, 1, V(I(6)), E_NONE, 0, NULL);
  assert_string_equal(R.explain, "[6] .. [*]");
}
static void t_int_lt_neg_frac(void **st) {
  (void)st; reset();
  sch s = II;
  run(&s, bin(SQL_OP_LT, col(0), cdec("-2.5")));
  expect(0, &s, S_NONE, 0, NULL, E_AFTER, 1, V(I(-3)));
}
static void t_int_le_double_frac(void **st) {
  (void)st; reset();
  sch s = II;
  run(&s, bin(SQL_OP_LE, col(0), cd(7.25)));
  expect(0, &s, S_NONE, 0, NULL, E_AFTER, 1, V(I(7)));
}
static void t_int_ge_neg_double(void **st) {
  (void)st; reset();
  sch s = II;
  run(&s, bin(SQL_OP_GE, col(0), cd(-7.25)));
  expect(0, &s, S_AT, 1, V(I(-7)), E_NONE, 0, NULL);
}
static void t_int_eq_frac_nothing(void **st) {
  (void)st; reset();
  sch s = II;
  run(&s, bin(SQL_OP_EQ, col(0), cdec("5.5")));
  expect_kind(PLAN_SCAN_NOTHING, 0, 1, 0);
}
static void t_int_gt_whole_decimal(void **st) {
  (void)st; reset();
  sch s = II;
  run(&s, bin(SQL_OP_GT, col(0), cdec("5.000")));
  expect(0, &s, S_AFTER, 1, V(I(5)), E_NONE, 0, NULL);
}
static void t_int_lt_huge_unbounded(void **st) {
  (void)st; reset();
  sch s = II;
  run(&s, bin(SQL_OP_LT, col(0), cd(1e300)));
  expect_kind(PLAN_SCAN_FULL, 0, 1, 0);
}
static void t_int_gt_huge_nothing(void **st) {
  (void)st; reset();
  sch s = II;
  run(&s, bin(SQL_OP_GT, col(0), cd(1e300)));
  expect_kind(PLAN_SCAN_NOTHING, 0, 1, 0);
}
static void t_int_gt_bigint_out_of_int(void **st) {
  (void)st; reset();
  sch s = II;
  run(&s, bin(SQL_OP_GT, col(0), cbig(3000000000LL)));
  expect_kind(PLAN_SCAN_NOTHING, 0, 1, 0);
  run(&s, bin(SQL_OP_GT, col(0), cbig(-3000000000LL)));
  expect_kind(PLAN_SCAN_FULL, 0, 1, 0);
}
static void t_bigint_gt_max(void **st) {
  (void)st; reset();
  sch s = NB;
  run(&s, bin(SQL_OP_GT, col(0), cbig(INT64_MAX)));
  expect_kind(PLAN_SCAN_NOTHING, 0, 1, 0);
}
static void t_bigint_gt_beyond_max(void **st) {
  (void)st; reset();
  sch s = NB;
  run(&s, bin(SQL_OP_GT, col(0), cdec("9223372036854775808")));
  expect_kind(PLAN_SCAN_NOTHING, 0, 1, 0);
  run(&s, bin(SQL_OP_LT, col(0), cdec("-9223372036854775809")));
  expect_kind(PLAN_SCAN_NOTHING, 0, 1, 0);
}
static void t_bigint_ge_min_nullable(void **st) {
  (void)st; reset();
  sch s = NB;
  run(&s, bin(SQL_OP_GE, col(0), cbig(INT64_MIN)));
  expect_kind(PLAN_SCAN_RANGE, 1, 1, 0); /* every non-NULL value: NULL skipped */
  expect(0, &s, S_AFTER, 1, V(NUL(CAT_T_BIGINT)), E_NONE, 0, NULL);
}
static void t_bigint_eq_max(void **st) {
  (void)st; reset();
  sch s = NB;
  run(&s, bin(SQL_OP_EQ, col(0), cbig(INT64_MAX)));
  expect_kind(PLAN_SCAN_RANGE, 1, 1, 0);
  expect(0, &s, S_AT, 1, V(BI(INT64_MAX)), E_AFTER, 1, V(BI(INT64_MAX)));
}
static void t_bigint_le_max_not_null(void **st) {
  (void)st; reset();
  sch s = S0(CAT_T_BIGINT, false, false);
  run(&s, bin(SQL_OP_LE, col(0), cbig(INT64_MAX)));
  expect_kind(PLAN_SCAN_FULL, 0, 1, 0);
}
static void t_bigint_vs_large_double_residual(void **st) {
  (void)st; reset();
  sch s = S0(CAT_T_BIGINT, false, false);
  run(&s, bin(SQL_OP_GT, col(0), cd(1e17)));
  expect_kind(PLAN_SCAN_FULL, 0, 0, 1);
}
static void t_tinyint_ranges(void **st) {
  (void)st; reset();
  sch s = S0(CAT_T_TINYINT, false, false);
  run(&s, bin(SQL_OP_GT, col(0), ci(300)));
  expect_kind(PLAN_SCAN_NOTHING, 0, 1, 0);
  run(&s, bin(SQL_OP_LT, col(0), ci(300)));
  expect_kind(PLAN_SCAN_FULL, 0, 1, 0);
  run(&s, bin(SQL_OP_GT, col(0), ci(127)));
  expect_kind(PLAN_SCAN_NOTHING, 0, 1, 0);
  run(&s, bin(SQL_OP_GE, col(0), ci(-128)));
  expect_kind(PLAN_SCAN_FULL, 0, 1, 0);
  run(&s, bin(SQL_OP_EQ, col(0), ci(-128)));
  expect_kind(PLAN_SCAN_POINT, 1, 1, 0);
  expect_point(0, &s, V(cat_v_int(CAT_T_TINYINT, -128)));
}
#define DA S0(CAT_T_DOUBLE, false, false)
static void t_double_gt_inf(void **st) {
  (void)st; reset();
  sch s = DA;
  run(&s, bin(SQL_OP_GT, col(0), cd(INFINITY)));
  expect_kind(PLAN_SCAN_RANGE, 1, 1, 0); /* NaN sorts above +Infinity */
  expect(0, &s, S_AFTER, 1, V(D(INFINITY)), E_NONE, 0, NULL);
}
static void t_double_eq_nan(void **st) {
  (void)st; reset();
  sch s = DA;
  run(&s, bin(SQL_OP_EQ, col(0), cd(NAN)));
  expect_kind(PLAN_SCAN_POINT, 1, 1, 0);
  expect_point(0, &s, V(D(NAN)));
  assert_string_equal(R.explain, "[NaN]");
}
static void t_double_lt_nan(void **st) {
  (void)st; reset();
  sch s = DA;
  run(&s, bin(SQL_OP_LT, col(0), cd(NAN)));
  expect(0, &s, S_NONE, 0, NULL, E_BEFORE, 1, V(D(NAN)));
}
static void t_double_neg_zero(void **st) {
  (void)st; reset();
  sch s = DA;
  run(&s, bin(SQL_OP_GE, col(0), cd(-0.0)));
  expect(0, &s, S_AT, 1, V(D(0.0)), E_NONE, 0, NULL);
}
static void t_double_max_min(void **st) {
  (void)st; reset();
  sch s = DA;
  run(&s, bin(SQL_OP_GT, col(0), cd(DBL_MAX)));
  expect(0, &s, S_AFTER, 1, V(D(DBL_MAX)), E_NONE, 0, NULL);
  run(&s, bin(SQL_OP_LE, col(0), cd(-DBL_MAX)));
  expect(0, &s, S_NONE, 0, NULL, E_AFTER, 1, V(D(-DBL_MAX)));
  run(&s, bin(SQL_OP_GT, col(0), cd(DBL_TRUE_MIN)));
  expect(0, &s, S_AFTER, 1, V(D(DBL_TRUE_MIN)), E_NONE, 0, NULL);
}
static void t_double_vs_int_const(void **st) {
  (void)st; reset();
  sch s = DA;
  run(&s, bin(SQL_OP_LT, col(0), ci(3)));
  expect(0, &s, S_NONE, 0, NULL, E_BEFORE, 1, V(D(3.0)));
}
static void t_float_coercion(void **st) {
  (void)st; reset();
  sch s = S0(CAT_T_FLOAT, false, false);
  run(&s, bin(SQL_OP_GT, col(0), cd(0.1)));
  float f = (float)0.1;
  float hi = (double)f > 0.1 ? f : nextafterf(f, INFINITY);
  expect(0, &s, S_AT, 1, V(cat_v_float(hi)), E_NONE, 0, NULL);
  run(&s, bin(SQL_OP_LT, col(0), cd(1e300)));
  expect(0, &s, S_NONE, 0, NULL, E_AFTER, 1, V(cat_v_float(FLT_MAX)));
  run(&s, bin(SQL_OP_EQ, col(0), cd(0.1)));
  expect_kind(PLAN_SCAN_NOTHING, 0, 1, 0);
  run(&s, bin(SQL_OP_EQ, col(0), cd(0.5)));
  expect_kind(PLAN_SCAN_POINT, 1, 1, 0);
}
static void t_decimal_coercion(void **st) {
  (void)st; reset();
  sch s = S0(CAT_T_DECIMAL, false, false);
  s.cols[0].type.precision = 5;
  s.cols[0].type.scale = 2;
  cat_value v124 = dec("1.24");
  v124.type = s.cols[0].type;
  run(&s, bin(SQL_OP_GT, col(0), cdec("1.234")));
  expect(0, &s, S_AT, 1, V(v124), E_NONE, 0, NULL);
  run(&s, bin(SQL_OP_LT, col(0), cdec("1000.005")));
  expect_kind(PLAN_SCAN_FULL, 0, 1, 0);
  run(&s, bin(SQL_OP_GT, col(0), cdec("1000")));
  expect_kind(PLAN_SCAN_NOTHING, 0, 1, 0);
  run(&s, bin(SQL_OP_EQ, col(0), ci(3)));
  cat_value v3 = dec("3.00");
  v3.type = s.cols[0].type;
  expect_kind(PLAN_SCAN_POINT, 1, 1, 0);
  expect_point(0, &s, V(v3));
  run(&s, bin(SQL_OP_GT, col(0), cd(1.5))); /* DECIMAL against DOUBLE: not folded */
  expect_kind(PLAN_SCAN_FULL, 0, 0, 1);
}

/* ---- Strings, LIKE -------------------------------------------------------------------- */
#define VW S1(CAT_T_VARCHAR, false, true, CAT_T_INTEGER, false, false)
static kbuf like_prefix(const sch *s, int i, const cat_value *before, const char *p, size_t n) {
  kbuf k = enc(s, i, before);
  cat_error err;
  assert_int_equal(cat_key_encode_string_prefix(&s->cols[i], p, n, k.b, sizeof k.b, &k.n, &err),
                   CAT_OK);
  return k;
}
static void expect_like(const sch *s, const char *p, size_t n) {
  kbuf a = like_prefix(s, 0, NULL, p, n), b = a;
  assert_true(R.n_ranges >= 1);
  check_start(&R.ranges[0], &a, S_AT);
  assert_true(pe(&b));
  check_end(&R.ranges[0], &b, E_BEFORE);
}
static void t_like_prefix(void **st) {
  (void)st; reset();
  sch s = VW;
  run(&s, like(col(0), cs("ab%"), NULL));
  expect_kind(PLAN_SCAN_RANGE, 1, 1, 0);
  expect_like(&s, "ab", 2);
  assert_string_equal(R.explain, "['ab'*] .. ['ab'*]");
}
static void t_like_more_wildcards(void **st) {
  (void)st; reset();
  sch s = VW;
  run(&s, like(col(0), cs("ab%c"), NULL));
  expect_kind(PLAN_SCAN_RANGE, 1, 0, 1);
  expect_like(&s, "ab", 2);
  run(&s, like(col(0), cs("a_b%"), NULL));
  expect_kind(PLAN_SCAN_RANGE, 1, 0, 1);
  expect_like(&s, "a", 1);
  run(&s, like(col(0), cs("ab%%"), NULL));
  expect_kind(PLAN_SCAN_RANGE, 1, 0, 1);
}
static void t_like_leading_wildcard(void **st) {
  (void)st; reset();
  sch s = VW;
  run(&s, like(col(0), cs("%ab"), NULL));
  expect_kind(PLAN_SCAN_FULL, 0, 0, 1);
  run(&s, like(col(0), cs("_ab"), NULL));
  expect_kind(PLAN_SCAN_FULL, 0, 0, 1);
}
static void t_like_no_wildcard(void **st) {
  (void)st; reset();
  sch s = VW;
  run(&s, like(col(0), cs("ab"), NULL));
  expect_kind(PLAN_SCAN_RANGE, 1, 1, 0);
  expect(0, &s, S_AT, 1, V(VS("ab")), E_AFTER, 1, V(VS("ab")));
}
static void t_like_escape(void **st) {
  (void)st; reset();
  sch s = VW;
  run(&s, like(col(0), cs("a!%b%"), cs("!")));
  expect_kind(PLAN_SCAN_RANGE, 1, 1, 0);
  expect_like(&s, "a%b", 3);
  run(&s, like(col(0), cs("a!_!!%"), cs("!")));
  expect_kind(PLAN_SCAN_RANGE, 1, 1, 0);
  expect_like(&s, "a_!", 3);
}
static void t_like_desc(void **st) {
  (void)st; reset();
  sch s = S1(CAT_T_VARCHAR, true, false, CAT_T_INTEGER, false, false);
  run(&s, like(col(0), cs("ab%"), NULL));
  expect_kind(PLAN_SCAN_RANGE, 1, 1, 0);
  expect_like(&s, "ab", 2);
}
static void t_like_not_ilike(void **st) {
  (void)st; reset();
  sch s = VW;
  plan_expr *e = like(col(0), cs("ab%"), NULL);
  e->negated = true;
  run(&s, e);
  expect_kind(PLAN_SCAN_FULL, 0, 0, 1);
  e = like(col(0), cs("ab%"), NULL);
  e->ilike = true;
  run(&s, e);
  expect_kind(PLAN_SCAN_FULL, 0, 0, 1);
}
static void t_like_with_prefix_col(void **st) {
  (void)st; reset();
  sch s = S1(CAT_T_INTEGER, false, false, CAT_T_VARCHAR, false, false);
  run(&s, AND(bin(SQL_OP_EQ, col(0), ci(4)), like(col(1), cs("x%"), NULL)));
  expect_kind(PLAN_SCAN_RANGE, 1, 2, 0);
  kbuf a = like_prefix(&s, 1, V(I(4)), "x", 1), b = a;
  check_start(&R.ranges[0], &a, S_AT);
  assert_true(pe(&b));
  check_end(&R.ranges[0], &b, E_BEFORE);
}
static void t_like_zero_byte(void **st) {
  (void)st; reset();
  sch s = VW;
  run(&s, like(col(0), cval(cat_v_str(CAT_T_VARCHAR, "a\0%", 3)), NULL));
  expect_kind(PLAN_SCAN_RANGE, 1, 1, 0);
  expect_like(&s, "a\0", 2);
}
static void t_string_zero_bytes(void **st) {
  (void)st; reset();
  sch s = VW;
  cat_value z = cat_v_str(CAT_T_VARCHAR, "a\0b", 3), z2 = cat_v_str(CAT_T_VARCHAR, "a\0", 2);
  run(&s, bin(SQL_OP_EQ, col(0), cval(z)));
  expect(0, &s, S_AT, 1, V(z), E_AFTER, 1, V(z));
  run(&s, AND(bin(SQL_OP_GT, col(0), cval(z2)), bin(SQL_OP_LT, col(0), cval(z))));
  expect_kind(PLAN_SCAN_RANGE, 1, 2, 0);
  expect(0, &s, S_AFTER, 1, V(z2), E_BEFORE, 1, V(z));
}
static void t_char_trailing_spaces(void **st) {
  (void)st; reset();
  sch s = S0(CAT_T_CHAR, false, false);
  s.cols[0].type.length = 5;
  run(&s, bin(SQL_OP_EQ, col(0), cval(cat_v_str(CAT_T_CHAR, "ab  ", 4))));
  expect_kind(PLAN_SCAN_POINT, 1, 1, 0);
  cat_value ab = cat_v_str(CAT_T_CHAR, "ab", 2);
  ab.type = s.cols[0].type;
  expect_point(0, &s, V(ab));
}
static void t_varchar_longer_constant(void **st) {
  (void)st; reset();
  sch s = S0(CAT_T_VARCHAR, false, false);
  s.cols[0].type.length = 3;
  run(&s, bin(SQL_OP_GT, col(0), cs("abcd")));
  expect_kind(PLAN_SCAN_RANGE, 1, 1, 0);
  sch u = S0(CAT_T_VARCHAR, false, false);
  expect(0, &u, S_AFTER, 1, V(VS("abcd")), E_NONE, 0, NULL);
}
static void t_key_too_big(void **st) {
  (void)st; reset();
  sch s = S0(CAT_T_VARCHAR, false, false);
  static char big[40000];
  memset(big, 'x', sizeof big);
  assert_int_equal(run_rc(&s, bin(SQL_OP_EQ, col(0), cval(cat_v_str(CAT_T_VARCHAR, big, sizeof big)))),
                   EXEC_TOOBIG);
  assert_int_equal(R.n_ranges, 0);
}

/* ---- Row value constructors ---------------------------------------------------------- */
static void t_rvc_gt(void **st) {
  (void)st; reset();
  sch s = II;
  run(&s, bin(SQL_OP_GT, ROW(col(0), col(1)), ROW(ci(1), ci(2))));
  expect_kind(PLAN_SCAN_RANGE, 1, 1, 0);
  expect(0, &s, S_AFTER, 2, V(I(1), I(2)), E_NONE, 0, NULL);
}
static void t_rvc_ge(void **st) {
  (void)st; reset();
  sch s = II;
  run(&s, bin(SQL_OP_GE, ROW(col(0), col(1)), ROW(ci(1), ci(2))));
  expect(0, &s, S_AT, 2, V(I(1), I(2)), E_NONE, 0, NULL);
}
static void t_rvc_lt(void **st) {
  (void)st; reset();
  sch s = II;
  run(&s, bin(SQL_OP_LT, ROW(col(0), col(1)), ROW(ci(1), ci(2))));
  expect_kind(PLAN_SCAN_RANGE, 1, 1, 0);
  expect(0, &s, S_NONE, 0, NULL, E_BEFORE, 2, V(I(1), I(2)));
}
static void t_rvc_window(void **st) {
  (void)st; reset();
  sch s = II;
  run(&s, AND(bin(SQL_OP_GE, ROW(col(0), col(1)), ROW(ci(1), ci(2))),
              bin(SQL_OP_LE, ROW(col(0), col(1)), ROW(ci(3), ci(4)))));
  expect_kind(PLAN_SCAN_RANGE, 1, 2, 0);
  expect(0, &s, S_AT, 2, V(I(1), I(2)), E_AFTER, 2, V(I(3), I(4)));
}
static void t_rvc_commuted(void **st) {
  (void)st; reset();
  sch s = II;
  run(&s, bin(SQL_OP_LT, ROW(ci(1), ci(2)), ROW(col(0), col(1))));
  expect_kind(PLAN_SCAN_RANGE, 1, 1, 0);
  expect(0, &s, S_AFTER, 2, V(I(1), I(2)), E_NONE, 0, NULL);
}
static void t_rvc_desc(void **st) {
  (void)st; reset();
  sch s = ID;
  run(&s, bin(SQL_OP_GT, ROW(col(0), col(1)), ROW(ci(1), ci(5))));
  expect_kind(PLAN_SCAN_SKIP, 2, 1, 0);
  expect(0, &s, S_AT, 1, V(I(1)), E_BEFORE, 2, V(I(1), I(5)));
  expect(1, &s, S_AFTER, 1, V(I(1)), E_NONE, 0, NULL);
}
static void t_rvc_nonkey_tail(void **st) {
  (void)st; reset();
  sch s = II;
  run(&s, bin(SQL_OP_GT, ROW(col(0), col(X_SLOT)), ROW(ci(1), ci(5))));
  expect_kind(PLAN_SCAN_RANGE, 1, 0, 1);
  expect(0, &s, S_AT, 1, V(I(1)), E_NONE, 0, NULL);
}
static void t_rvc_eq(void **st) {
  (void)st; reset();
  sch s = II;
  run(&s, bin(SQL_OP_EQ, ROW(col(0), col(1)), ROW(ci(1), ci(2))));
  expect_kind(PLAN_SCAN_POINT, 1, 1, 0);
  expect_point(0, &s, V(I(1), I(2)));
}
static void t_rvc_ne_residual(void **st) {
  (void)st; reset();
  sch s = II;
  run(&s, bin(SQL_OP_NE, ROW(col(0), col(1)), ROW(ci(1), ci(2))));
  expect_kind(PLAN_SCAN_FULL, 0, 0, 1);
}
static void t_rvc_in(void **st) {
  (void)st; reset();
  sch s = II;
  run(&s, IN(ROW(col(0), col(1)), ROW(ci(3), ci(4)), ROW(ci(1), ci(2))));
  expect_kind(PLAN_SCAN_POINT, 2, 1, 0);
  expect_point(0, &s, V(I(1), I(2)));
  expect_point(1, &s, V(I(3), I(4)));
}
static void t_rvc_in_null_tuple(void **st) {
  (void)st; reset();
  sch s = II;
  run(&s, IN(ROW(col(0), col(1)), ROW(ci(1), ci(2)), ROW(ci(1), cnull())));
  expect_kind(PLAN_SCAN_POINT, 1, 1, 0);
  expect_point(0, &s, V(I(1), I(2)));
}
static void t_rvc_in_reordered(void **st) {
  (void)st; reset();
  sch s = II;
  run(&s, IN(ROW(col(1), col(0)), ROW(ci(2), ci(1))));
  expect_kind(PLAN_SCAN_POINT, 1, 1, 0);
  expect_point(0, &s, V(I(1), I(2)));
}
static void t_rvc_in_prefix_only(void **st) {
  (void)st; reset();
  sch s = {{kc(CAT_T_INTEGER, false, false), kc(CAT_T_INTEGER, false, false),
            kc(CAT_T_INTEGER, false, false)}, 3};
  run(&s, AND(IN(ROW(col(0), col(1)), ROW(ci(1), ci(2)), ROW(ci(5), ci(6))),
              bin(SQL_OP_LT, col(2), ci(9))));
  expect_kind(PLAN_SCAN_SKIP, 2, 2, 0);
  expect(0, &s, S_AT, 2, V(I(1), I(2)), E_BEFORE, 3, V(I(1), I(2), I(9)));
  expect(1, &s, S_AT, 2, V(I(5), I(6)), E_BEFORE, 3, V(I(5), I(6), I(9)));
}

/* ---- Parameters ---------------------------------------------------------------------- */
static void t_param_bound(void **st) {
  (void)st; reset();
  sch s = II;
  cat_value p[1] = {I(5)};
  PARAMS = p;
  NPARAMS = 1;
  run(&s, bin(SQL_OP_EQ, col(0), param(1)));
  expect_kind(PLAN_SCAN_RANGE, 1, 1, 0);
  expect(0, &s, S_AT, 1, V(I(5)), E_AFTER, 1, V(I(5)));
}
static void t_param_unbound(void **st) {
  (void)st; reset();
  sch s = II;
  run(&s, bin(SQL_OP_EQ, col(0), param(1)));
  expect_kind(PLAN_SCAN_FULL, 0, 0, 1);
}
static void t_param_null(void **st) {
  (void)st; reset();
  sch s = II;
  cat_value p[1] = {NUL(CAT_T_INTEGER)};
  PARAMS = p;
  NPARAMS = 1;
  run(&s, bin(SQL_OP_EQ, col(0), param(1)));
  expect_kind(PLAN_SCAN_NOTHING, 0, 1, 0);
}

/* ---- Skip-scan cap ------------------------------------------------------------------- */
static plan_expr *in_range(int slot, int from, int n) {
  plan_expr *e = node(PX_IN, n + 1);
  e->args[0] = col(slot);
  for (int i = 0; i < n; i++) e->args[i + 1] = ci(from + i);
  return e;
}
static void t_cap_exact(void **st) {
  (void)st; reset();
  sch s = II;
  run(&s, in_range(0, 0, PLAN_MAX_SKIP_RANGES));
  expect_kind(PLAN_SCAN_SKIP, PLAN_MAX_SKIP_RANGES, 1, 0);
  expect(PLAN_MAX_SKIP_RANGES - 1, &s, S_AT, 1, V(I(PLAN_MAX_SKIP_RANGES - 1)), E_AFTER, 1,
         V(I(PLAN_MAX_SKIP_RANGES - 1)));
  assert_non_null(strstr(R.explain, "more)"));
}
static void t_cap_hull(void **st) {
  (void)st; reset();
  sch s = II;
  run(&s, in_range(0, 10, PLAN_MAX_SKIP_RANGES + 1));
  expect_kind(PLAN_SCAN_RANGE, 1, 0, 1);
  expect(0, &s, S_AT, 1, V(I(10)), E_AFTER, 1, V(I(10 + PLAN_MAX_SKIP_RANGES)));
}
static void t_cap_fewer_columns(void **st) {
  (void)st; reset();
  sch s = II;
  plan_expr *a = in_range(0, 0, 300), *b = in_range(1, 0, 200);
  run(&s, AND(a, b)); /* 60000 keys > cap: only A's 300 ranges */
  expect_kind(PLAN_SCAN_SKIP, 300, 1, 1);
  assert_ptr_equal(R.key_terms[0], a);
  assert_ptr_equal(R.residual[0], b);
  expect(299, &s, S_AT, 1, V(I(299)), E_AFTER, 1, V(I(299)));
  assert_int_equal(R.bound_cols, 1);
}
static void t_cap_product_under(void **st) {
  (void)st; reset();
  sch s = II;
  run(&s, AND(in_range(0, 0, 200), in_range(1, 0, 200)));
  expect_kind(PLAN_SCAN_POINT, 40000, 2, 0);
  expect_point(39999, &s, V(I(199), I(199)));
}
static void t_explain_many(void **st) {
  (void)st; reset();
  sch s = II;
  run(&s, AND(bin(SQL_OP_EQ, col(0), ci(1)), in_range(1, 0, 10)));
  expect_kind(PLAN_SCAN_POINT, 10, 2, 0);
  assert_string_equal(R.explain,
                      "[1, 0], [1, 1], [1, 2], [1, 3], [1, 4], [1, 5], [1, 6], [1, 7], ... (2 more)");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(t_int_gt_frac),
      cmocka_unit_test(t_int_lt_neg_frac),
      cmocka_unit_test(t_int_le_double_frac),
      cmocka_unit_test(t_int_ge_neg_double),
      cmocka_unit_test(t_int_eq_frac_nothing),
      cmocka_unit_test(t_int_gt_whole_decimal),
      cmocka_unit_test(t_int_lt_huge_unbounded),
      cmocka_unit_test(t_int_gt_huge_nothing),
      cmocka_unit_test(t_int_gt_bigint_out_of_int),
      cmocka_unit_test(t_bigint_gt_max),
      cmocka_unit_test(t_bigint_gt_beyond_max),
      cmocka_unit_test(t_bigint_ge_min_nullable),
      cmocka_unit_test(t_bigint_eq_max),
      cmocka_unit_test(t_bigint_le_max_not_null),
      cmocka_unit_test(t_bigint_vs_large_double_residual),
      cmocka_unit_test(t_tinyint_ranges),
      cmocka_unit_test(t_double_gt_inf),
      cmocka_unit_test(t_double_eq_nan),
      cmocka_unit_test(t_double_lt_nan),
      cmocka_unit_test(t_double_neg_zero),
      cmocka_unit_test(t_double_max_min),
      cmocka_unit_test(t_double_vs_int_const),
      cmocka_unit_test(t_float_coercion),
      cmocka_unit_test(t_decimal_coercion),
      cmocka_unit_test(t_like_prefix),
      cmocka_unit_test(t_like_more_wildcards),
      cmocka_unit_test(t_like_leading_wildcard),
      cmocka_unit_test(t_like_no_wildcard),
      cmocka_unit_test(t_like_escape),
      cmocka_unit_test(t_like_desc),
      cmocka_unit_test(t_like_not_ilike),
      cmocka_unit_test(t_like_with_prefix_col),
      cmocka_unit_test(t_like_zero_byte),
      cmocka_unit_test(t_string_zero_bytes),
      cmocka_unit_test(t_char_trailing_spaces),
      cmocka_unit_test(t_varchar_longer_constant),
      cmocka_unit_test(t_key_too_big),
      cmocka_unit_test(t_rvc_gt),
      cmocka_unit_test(t_rvc_ge),
      cmocka_unit_test(t_rvc_lt),
      cmocka_unit_test(t_rvc_window),
      cmocka_unit_test(t_rvc_commuted),
      cmocka_unit_test(t_rvc_desc),
      cmocka_unit_test(t_rvc_nonkey_tail),
      cmocka_unit_test(t_rvc_eq),
      cmocka_unit_test(t_rvc_ne_residual),
      cmocka_unit_test(t_rvc_in),
      cmocka_unit_test(t_rvc_in_null_tuple),
      cmocka_unit_test(t_rvc_in_reordered),
      cmocka_unit_test(t_rvc_in_prefix_only),
      cmocka_unit_test(t_param_bound),
      cmocka_unit_test(t_param_unbound),
      cmocka_unit_test(t_param_null),
      cmocka_unit_test(t_cap_exact),
      cmocka_unit_test(t_cap_hull),
      cmocka_unit_test(t_cap_fewer_columns),
      cmocka_unit_test(t_cap_product_under),
      cmocka_unit_test(t_explain_many),
  };
  int rc = cmocka_run_group_tests(tests, NULL, NULL);
  plan_scan_ranges_free(&R);
  return rc;
}
