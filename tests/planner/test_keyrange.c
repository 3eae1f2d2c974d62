/*
** tests/planner/test_keyrange.c: key-range derivation (planner/keyrange.h) on start and stop
** keys, without executing anything (Phoenix's WhereOptimizerTest): =, ranges, BETWEEN,
** contradictions, IN and IN products, OR, three-column skip scans, DESC columns, NULLs and
** IS NULL, and key_terms versus residual. Every expected key is built with
** catalog/keycodec.h (keyrange_test_util.h). Bound coercion, extremes, strings and LIKE, row
** value constructors, parameters and the skip-scan cap are in test_keyrange_values.c.
*/
#include "keyrange_test_util.h"

/* ---- Equality, ranges, BETWEEN ------------------------------------------------------- */
static void t_no_where(void **st) {
  (void)st; reset();
  sch s = II;
  run(&s, NULL);
  expect_kind(PLAN_SCAN_FULL, 0, 0, 0);
  assert_int_equal(R.bound_cols, 0);
}
static void t_eq_leading(void **st) {
  (void)st; reset();
  sch s = II;
  run(&s, bin(SQL_OP_EQ, col(0), ci(5)));
  expect_kind(PLAN_SCAN_RANGE, 1, 1, 0);
  expect(0, &s, S_AT, 1, V(I(5)), E_AFTER, 1, V(I(5)));
  assert_int_equal(R.prefix_cols, 1);
}
static void t_eq_commuted(void **st) {
  (void)st; reset();
  sch s = II;
  run(&s, bin(SQL_OP_EQ, ci(5), col(0)));
  expect_kind(PLAN_SCAN_RANGE, 1, 1, 0);
  expect(0, &s, S_AT, 1, V(I(5)), E_AFTER, 1, V(I(5)));
}
static void t_point(void **st) {
  (void)st; reset();
  sch s = II;
  run(&s, AND(bin(SQL_OP_EQ, col(0), ci(5)), bin(SQL_OP_EQ, col(1), ci(7))));
  expect_kind(PLAN_SCAN_POINT, 1, 2, 0);
  expect_point(0, &s, V(I(5), I(7)));
  assert_string_equal(R.explain, "[5, 7]");
}
static void t_gt(void **st) {
  (void)st; reset();
  sch s = II;
  run(&s, bin(SQL_OP_GT, col(0), ci(5)));
  expect_kind(PLAN_SCAN_RANGE, 1, 1, 0);
  expect(0, &s, S_AFTER, 1, V(I(5)), E_NONE, 0, NULL);
  assert_string_equal(R.explain, "[5) .. [*]");
}
static void t_ge(void **st) {
  (void)st; reset();
  sch s = II;
  run(&s, bin(SQL_OP_GE, col(0), ci(5)));
  expect(0, &s, S_AT, 1, V(I(5)), E_NONE, 0, NULL);
  assert_string_equal(R.explain, "[5] .. [*]");
}
static void t_lt(void **st) {
  (void)st; reset();
  sch s = II;
  run(&s, bin(SQL_OP_LT, col(0), ci(5)));
  expect_kind(PLAN_SCAN_RANGE, 1, 1, 0);
  expect(0, &s, S_NONE, 0, NULL, E_BEFORE, 1, V(I(5)));
  assert_string_equal(R.explain, "[*] .. [5)");
}
static void t_le(void **st) {
  (void)st; reset();
  sch s = II;
  run(&s, bin(SQL_OP_LE, col(0), ci(5)));
  expect(0, &s, S_NONE, 0, NULL, E_AFTER, 1, V(I(5)));
}
static void t_lt_commuted(void **st) {
  (void)st; reset();
  sch s = II;
  run(&s, bin(SQL_OP_LT, ci(5), col(0))); /* 5 < A is A > 5 */
  expect(0, &s, S_AFTER, 1, V(I(5)), E_NONE, 0, NULL);
}
static void t_between(void **st) {
  (void)st; reset();
  sch s = II;
  run(&s, between(col(0), ci(3), ci(8), false));
  expect_kind(PLAN_SCAN_RANGE, 1, 1, 0);
  expect(0, &s, S_AT, 1, V(I(3)), E_AFTER, 1, V(I(8)));
}
static void t_between_empty(void **st) {
  (void)st; reset();
  sch s = II;
  run(&s, between(col(0), ci(8), ci(3), false));
  expect_kind(PLAN_SCAN_NOTHING, 0, 1, 0);
}
static void t_not_between(void **st) {
  (void)st; reset();
  sch s = II;
  run(&s, between(col(0), ci(3), ci(8), true));
  expect_kind(PLAN_SCAN_FULL, 0, 0, 1);
}
static void t_contradiction_eq(void **st) {
  (void)st; reset();
  sch s = II;
  run(&s, AND(bin(SQL_OP_EQ, col(0), ci(1)), bin(SQL_OP_EQ, col(0), ci(2))));
  expect_kind(PLAN_SCAN_NOTHING, 0, 2, 0);
  assert_string_equal(R.explain, "");
}
static void t_contradiction_range(void **st) {
  (void)st; reset();
  sch s = II;
  run(&s, AND(bin(SQL_OP_GT, col(0), ci(5)), bin(SQL_OP_LT, col(0), ci(3))));
  expect_kind(PLAN_SCAN_NOTHING, 0, 2, 0);
}
static void t_contradiction_second_col(void **st) {
  (void)st; reset();
  sch s = II;
  run(&s, AND(AND(bin(SQL_OP_EQ, col(0), ci(1)), bin(SQL_OP_GT, col(1), ci(5))),
              bin(SQL_OP_LT, col(1), ci(5))));
  expect_kind(PLAN_SCAN_NOTHING, 0, 3, 0);
}
static void t_range_two_sides(void **st) {
  (void)st; reset();
  sch s = II;
  run(&s, AND(bin(SQL_OP_GT, col(0), ci(2)), bin(SQL_OP_LE, col(0), ci(9))));
  expect_kind(PLAN_SCAN_RANGE, 1, 2, 0);
  expect(0, &s, S_AFTER, 1, V(I(2)), E_AFTER, 1, V(I(9)));
}
static void t_prefix_then_range(void **st) {
  (void)st; reset();
  sch s = II;
  run(&s, AND(AND(bin(SQL_OP_EQ, col(0), ci(1)), bin(SQL_OP_GT, col(1), ci(2))),
              bin(SQL_OP_LT, col(1), ci(10))));
  expect_kind(PLAN_SCAN_RANGE, 1, 3, 0);
  expect(0, &s, S_AFTER, 2, V(I(1), I(2)), E_BEFORE, 2, V(I(1), I(10)));
  assert_string_equal(R.explain, "[1, 2) .. [1, 10)");
  assert_int_equal(R.prefix_cols, 1);
  assert_int_equal(R.bound_cols, 2);
}
static void t_range_then_later_col_residual(void **st) {
  (void)st; reset();
  sch s = II;
  plan_expr *b = bin(SQL_OP_EQ, col(1), ci(3));
  run(&s, AND(bin(SQL_OP_GT, col(0), ci(5)), b));
  expect_kind(PLAN_SCAN_RANGE, 1, 1, 1);
  assert_ptr_equal(R.residual[0], b);
  expect(0, &s, S_AFTER, 1, V(I(5)), E_NONE, 0, NULL);
}
static void t_second_col_only_full(void **st) {
  (void)st; reset();
  sch s = II;
  run(&s, bin(SQL_OP_EQ, col(1), ci(3)));
  expect_kind(PLAN_SCAN_FULL, 0, 0, 1);
}
static void t_nonkey_column(void **st) {
  (void)st; reset();
  sch s = II;
  run(&s, bin(SQL_OP_EQ, col(X_SLOT), ci(3)));
  expect_kind(PLAN_SCAN_FULL, 0, 0, 1);
}
static void t_expression_residual(void **st) {
  (void)st; reset();
  sch s = II;
  run(&s, bin(SQL_OP_EQ, bin(SQL_OP_ADD, col(0), ci(1)), ci(5)));
  expect_kind(PLAN_SCAN_FULL, 0, 0, 1);
}
static void t_column_vs_column(void **st) {
  (void)st; reset();
  sch s = II;
  run(&s, bin(SQL_OP_EQ, col(0), col(1)));
  expect_kind(PLAN_SCAN_FULL, 0, 0, 1);
}
static void t_ne_residual(void **st) {
  (void)st; reset();
  sch s = II;
  run(&s, bin(SQL_OP_NE, col(0), ci(5)));
  expect_kind(PLAN_SCAN_FULL, 0, 0, 1);
}
static void t_not_residual(void **st) {
  (void)st; reset();
  sch s = II;
  plan_expr *n = node(PX_UNARY, 1);
  n->op = SQL_OP_NOT;
  n->args[0] = bin(SQL_OP_EQ, col(0), ci(5));
  run(&s, n);
  expect_kind(PLAN_SCAN_FULL, 0, 0, 1);
}
static void t_const_false_true(void **st) {
  (void)st; reset();
  sch s = II;
  run(&s, cval(cat_v_bool(false)));
  expect_kind(PLAN_SCAN_NOTHING, 0, 1, 0);
  run(&s, cval(cat_v_bool(true)));
  expect_kind(PLAN_SCAN_FULL, 0, 1, 0);
}

/* ---- IN, products, OR ---------------------------------------------------------------- */
static void t_in_leading(void **st) {
  (void)st; reset();
  sch s = II;
  run(&s, IN(col(0), ci(3), ci(1), ci(5)));
  expect_kind(PLAN_SCAN_SKIP, 3, 1, 0);
  expect(0, &s, S_AT, 1, V(I(1)), E_AFTER, 1, V(I(1)));
  expect(1, &s, S_AT, 1, V(I(3)), E_AFTER, 1, V(I(3)));
  expect(2, &s, S_AT, 1, V(I(5)), E_AFTER, 1, V(I(5)));
}
static void t_in_adjacent_stay_apart(void **st) {
  (void)st; reset();
  sch s = II;
  run(&s, IN(col(0), ci(2), ci(1)));
  expect_kind(PLAN_SCAN_SKIP, 2, 1, 0);
  expect(0, &s, S_AT, 1, V(I(1)), E_AFTER, 1, V(I(1)));
  expect(1, &s, S_AT, 1, V(I(2)), E_AFTER, 1, V(I(2)));
}
static void t_in_duplicates(void **st) {
  (void)st; reset();
  sch s = II;
  run(&s, IN(col(0), ci(4), ci(4), ci(4)));
  expect_kind(PLAN_SCAN_RANGE, 1, 1, 0);
  expect(0, &s, S_AT, 1, V(I(4)), E_AFTER, 1, V(I(4)));
}
static void t_in_product_points(void **st) {
  (void)st; reset();
  sch s = II;
  run(&s, AND(IN(col(1), ci(4), ci(3)), IN(col(0), ci(2), ci(1))));
  expect_kind(PLAN_SCAN_POINT, 4, 2, 0);
  expect_point(0, &s, V(I(1), I(3)));
  expect_point(1, &s, V(I(1), I(4)));
  expect_point(2, &s, V(I(2), I(3)));
  expect_point(3, &s, V(I(2), I(4)));
  assert_string_equal(R.explain, "[1, 3], [1, 4], [2, 3], [2, 4]");
}
static void t_in_then_range_skip(void **st) {
  (void)st; reset();
  sch s = II;
  run(&s, AND(IN(col(0), ci(1), ci(2)), bin(SQL_OP_GT, col(1), ci(5))));
  expect_kind(PLAN_SCAN_SKIP, 2, 2, 0);
  expect(0, &s, S_AFTER, 2, V(I(1), I(5)), E_AFTER, 1, V(I(1)));
  expect(1, &s, S_AFTER, 2, V(I(2), I(5)), E_AFTER, 1, V(I(2)));
  assert_int_equal(R.prefix_cols, 1);
  assert_int_equal(R.bound_cols, 2);
}
static void t_in_with_null(void **st) {
  (void)st; reset();
  sch s = II;
  run(&s, IN(col(0), ci(1), cnull()));
  expect_kind(PLAN_SCAN_RANGE, 1, 1, 0);
  expect(0, &s, S_AT, 1, V(I(1)), E_AFTER, 1, V(I(1)));
}
static void t_in_nonconstant(void **st) {
  (void)st; reset();
  sch s = II;
  run(&s, IN(col(0), ci(1), col(1)));
  expect_kind(PLAN_SCAN_FULL, 0, 0, 1);
}
static void t_not_in(void **st) {
  (void)st; reset();
  sch s = II;
  plan_expr *v[] = {ci(1), ci(2)};
  run(&s, in_list(col(0), 2, v, true));
  expect_kind(PLAN_SCAN_FULL, 0, 0, 1);
}
static void t_or_same_col(void **st) {
  (void)st; reset();
  sch s = II;
  run(&s, OR(bin(SQL_OP_EQ, col(0), ci(3)), bin(SQL_OP_EQ, col(0), ci(1))));
  expect_kind(PLAN_SCAN_SKIP, 2, 1, 0);
  expect(0, &s, S_AT, 1, V(I(1)), E_AFTER, 1, V(I(1)));
  expect(1, &s, S_AT, 1, V(I(3)), E_AFTER, 1, V(I(3)));
}
static void t_or_overlapping(void **st) {
  (void)st; reset();
  sch s = II;
  run(&s, OR(bin(SQL_OP_LT, col(0), ci(5)), bin(SQL_OP_LT, col(0), ci(3))));
  expect_kind(PLAN_SCAN_RANGE, 1, 1, 0);
  expect(0, &s, S_NONE, 0, NULL, E_BEFORE, 1, V(I(5)));
}
static void t_or_disjoint_ranges(void **st) {
  (void)st; reset();
  sch s = II;
  run(&s, OR(bin(SQL_OP_GT, col(0), ci(3)), bin(SQL_OP_LT, col(0), ci(1))));
  expect_kind(PLAN_SCAN_SKIP, 2, 1, 0);
  expect(0, &s, S_NONE, 0, NULL, E_BEFORE, 1, V(I(1)));
  expect(1, &s, S_AFTER, 1, V(I(3)), E_NONE, 0, NULL);
}
static void t_or_covering_everything(void **st) {
  (void)st; reset();
  sch s = II;
  run(&s, OR(bin(SQL_OP_GT, col(0), ci(3)), bin(SQL_OP_LE, col(0), ci(3))));
  expect_kind(PLAN_SCAN_FULL, 0, 1, 0);
}
static void t_or_different_cols(void **st) {
  (void)st; reset();
  sch s = II;
  run(&s, OR(bin(SQL_OP_EQ, col(0), ci(1)), bin(SQL_OP_EQ, col(1), ci(2))));
  expect_kind(PLAN_SCAN_FULL, 0, 0, 1);
}
static void t_or_nonkey_branch(void **st) {
  (void)st; reset();
  sch s = II;
  run(&s, OR(bin(SQL_OP_EQ, col(0), ci(1)), bin(SQL_OP_EQ, col(X_SLOT), ci(2))));
  expect_kind(PLAN_SCAN_FULL, 0, 0, 1);
}
static void t_or_of_boxes(void **st) {
  (void)st; reset();
  sch s = II;
  run(&s, OR(AND(bin(SQL_OP_EQ, col(0), ci(1)), bin(SQL_OP_EQ, col(1), ci(2))),
             bin(SQL_OP_EQ, col(0), ci(3))));
  expect_kind(PLAN_SCAN_SKIP, 2, 1, 0);
  expect_point(0, &s, V(I(1), I(2)));
  expect(1, &s, S_AT, 1, V(I(3)), E_AFTER, 1, V(I(3)));
}
static void t_or_partly_extractable(void **st) {
  (void)st; reset();
  sch s = II;
  run(&s, OR(AND(bin(SQL_OP_EQ, col(0), ci(1)), bin(SQL_OP_EQ, col(X_SLOT), ci(2))),
             bin(SQL_OP_EQ, col(0), ci(3))));
  expect_kind(PLAN_SCAN_SKIP, 2, 0, 1); /* the ranges narrow, the term is re-checked */
  expect(0, &s, S_AT, 1, V(I(1)), E_AFTER, 1, V(I(1)));
  expect(1, &s, S_AT, 1, V(I(3)), E_AFTER, 1, V(I(3)));
}
static void t_three_cols_skip(void **st) {
  (void)st; reset();
  sch s = {{kc(CAT_T_INTEGER, false, false), kc(CAT_T_INTEGER, false, false),
            kc(CAT_T_INTEGER, false, false)}, 3};
  run(&s, AND(AND(bin(SQL_OP_EQ, col(0), ci(1)), IN(col(1), ci(2), ci(3))),
              bin(SQL_OP_GT, col(2), ci(4))));
  expect_kind(PLAN_SCAN_SKIP, 2, 3, 0);
  expect(0, &s, S_AFTER, 3, V(I(1), I(2), I(4)), E_AFTER, 2, V(I(1), I(2)));
  expect(1, &s, S_AFTER, 3, V(I(1), I(3), I(4)), E_AFTER, 2, V(I(1), I(3)));
}
static void t_three_cols_gap(void **st) {
  (void)st; reset();
  sch s = {{kc(CAT_T_INTEGER, false, false), kc(CAT_T_INTEGER, false, false),
            kc(CAT_T_INTEGER, false, false)}, 3};
  run(&s, AND(bin(SQL_OP_EQ, col(0), ci(1)), bin(SQL_OP_EQ, col(2), ci(3))));
  expect_kind(PLAN_SCAN_RANGE, 1, 1, 1);
  expect(0, &s, S_AT, 1, V(I(1)), E_AFTER, 1, V(I(1)));
}
static void t_three_cols_after_range(void **st) {
  (void)st; reset();
  sch s = {{kc(CAT_T_INTEGER, false, false), kc(CAT_T_INTEGER, false, false),
            kc(CAT_T_INTEGER, false, false)}, 3};
  run(&s, AND(AND(IN(col(0), ci(1), ci(2)), bin(SQL_OP_GT, col(1), ci(3))),
              bin(SQL_OP_EQ, col(2), ci(5))));
  expect_kind(PLAN_SCAN_SKIP, 2, 2, 1);
  expect(0, &s, S_AFTER, 2, V(I(1), I(3)), E_AFTER, 1, V(I(1)));
}

/* ---- DESC ----------------------------------------------------------------------------- */
static void t_desc_gt(void **st) {
  (void)st; reset();
  sch s = ID;
  run(&s, AND(bin(SQL_OP_EQ, col(0), ci(1)), bin(SQL_OP_GT, col(1), ci(5))));
  expect_kind(PLAN_SCAN_RANGE, 1, 2, 0);
  expect(0, &s, S_AT, 1, V(I(1)), E_BEFORE, 2, V(I(1), I(5)));
  assert_string_equal(R.explain, "[1, *] .. [1, 5)");
}
static void t_desc_ge(void **st) {
  (void)st; reset();
  sch s = ID;
  run(&s, AND(bin(SQL_OP_EQ, col(0), ci(1)), bin(SQL_OP_GE, col(1), ci(5))));
  expect(0, &s, S_AT, 1, V(I(1)), E_AFTER, 2, V(I(1), I(5)));
}
static void t_desc_lt(void **st) {
  (void)st; reset();
  sch s = ID;
  run(&s, AND(bin(SQL_OP_EQ, col(0), ci(1)), bin(SQL_OP_LT, col(1), ci(5))));
  expect(0, &s, S_AFTER, 2, V(I(1), I(5)), E_AFTER, 1, V(I(1)));
  assert_string_equal(R.explain, "[1, 5) .. [1, *]");
}
static void t_desc_le(void **st) {
  (void)st; reset();
  sch s = ID;
  run(&s, AND(bin(SQL_OP_EQ, col(0), ci(1)), bin(SQL_OP_LE, col(1), ci(5))));
  expect(0, &s, S_AT, 2, V(I(1), I(5)), E_AFTER, 1, V(I(1)));
}
static void t_desc_between(void **st) {
  (void)st; reset();
  sch s = ID;
  run(&s, AND(bin(SQL_OP_EQ, col(0), ci(1)), between(col(1), ci(3), ci(7), false)));
  expect_kind(PLAN_SCAN_RANGE, 1, 2, 0);
  expect(0, &s, S_AT, 2, V(I(1), I(7)), E_AFTER, 2, V(I(1), I(3)));
  assert_string_equal(R.explain, "[1, 7] .. [1, 3]");
}
static void t_desc_in_sorted(void **st) {
  (void)st; reset();
  sch s = ID;
  run(&s, AND(bin(SQL_OP_EQ, col(0), ci(1)), IN(col(1), ci(3), ci(9), ci(5))));
  expect_kind(PLAN_SCAN_POINT, 3, 2, 0);
  expect_point(0, &s, V(I(1), I(9))); /* DESC: largest first */
  expect_point(1, &s, V(I(1), I(5)));
  expect_point(2, &s, V(I(1), I(3)));
}
static void t_desc_leading(void **st) {
  (void)st; reset();
  sch s = S0(CAT_T_DOUBLE, true, false);
  run(&s, bin(SQL_OP_GT, col(0), cd(1.5)));
  expect_kind(PLAN_SCAN_RANGE, 1, 1, 0);
  expect(0, &s, S_NONE, 0, NULL, E_BEFORE, 1, V(D(1.5)));
}
static void t_desc_leading_le(void **st) {
  (void)st; reset();
  sch s = S0(CAT_T_DOUBLE, true, false);
  run(&s, bin(SQL_OP_LE, col(0), cd(-1.5)));
  expect(0, &s, S_AT, 1, V(D(-1.5)), E_NONE, 0, NULL);
}
static void t_sensor_explain(void **st) {
  (void)st; reset();
  sch s = S1(CAT_T_VARCHAR, false, false, CAT_T_TIMESTAMP, true, false);
  cat_value t1;
  cat_type tt = cat_type_of(CAT_T_TIMESTAMP);
  cat_error err;
  assert_int_equal(cat_text_parse(&tt, "2016-01-01 00:00:00", 19, &t1, &err), CAT_OK);
  run(&s, AND(bin(SQL_OP_EQ, col(0), cs("Dongsi")), bin(SQL_OP_GT, col(1), cval(t1))));
  expect_kind(PLAN_SCAN_RANGE, 1, 2, 0);
  assert_string_equal(R.explain, "['Dongsi', *] .. ['Dongsi', '2016-01-01 00:00:00')");
  expect(0, &s, S_AT, 1, V(VS("Dongsi")), E_BEFORE, 2, V(VS("Dongsi"), t1));
}
static void t_sensor_window(void **st) {
  (void)st; reset();
  sch s = S1(CAT_T_VARCHAR, false, false, CAT_T_TIMESTAMP, true, false);
  cat_value t1 = cat_v_int(CAT_T_TIMESTAMP, 1000000), t2 = cat_v_int(CAT_T_TIMESTAMP, 5000000);
  run(&s, AND(AND(bin(SQL_OP_EQ, col(0), cs("a")), bin(SQL_OP_GE, col(1), cval(t1))),
              bin(SQL_OP_LT, col(1), cval(t2))));
  expect_kind(PLAN_SCAN_RANGE, 1, 3, 0);
  expect(0, &s, S_AFTER, 2, V(VS("a"), t2), E_AFTER, 2, V(VS("a"), t1));
}
static void t_timestamp_vs_date(void **st) {
  (void)st; reset();
  sch s = S1(CAT_T_VARCHAR, false, false, CAT_T_TIMESTAMP, false, false);
  run(&s, AND(bin(SQL_OP_EQ, col(0), cs("a")), bin(SQL_OP_EQ, col(1),
                                                   cval(cat_v_int(CAT_T_DATE, 2)))));
  expect_kind(PLAN_SCAN_POINT, 1, 2, 0);
  expect_point(0, &s, V(VS("a"), cat_v_int(CAT_T_TIMESTAMP, 2 * CAT_US_PER_DAY)));
}
static void t_date_vs_timestamp(void **st) {
  (void)st; reset();
  sch s = S0(CAT_T_DATE, false, false);
  /* DT > day 10 + 1 hour is DT >= day 11 */
  run(&s, bin(SQL_OP_GT, col(0), cval(cat_v_int(CAT_T_TIMESTAMP, 10 * CAT_US_PER_DAY + 3600000000LL))));
  expect_kind(PLAN_SCAN_RANGE, 1, 1, 0);
  expect(0, &s, S_AT, 1, V(cat_v_int(CAT_T_DATE, 11)), E_NONE, 0, NULL);
}

/* ---- NULLs ---------------------------------------------------------------------------- */
static void t_is_null(void **st) {
  (void)st; reset();
  sch s = NB;
  run(&s, isnull(col(0), false));
  expect_kind(PLAN_SCAN_RANGE, 1, 1, 0);
  expect(0, &s, S_AT, 1, V(NUL(CAT_T_BIGINT)), E_AFTER, 1, V(NUL(CAT_T_BIGINT)));
  assert_string_equal(R.explain, "[NULL, *] .. [NULL, *]");
}
static void t_is_null_point(void **st) {
  (void)st; reset();
  sch s = NB;
  run(&s, AND(isnull(col(0), false), bin(SQL_OP_EQ, col(1), cd(2.0))));
  expect_kind(PLAN_SCAN_POINT, 1, 2, 0);
  expect_point(0, &s, V(NUL(CAT_T_BIGINT), D(2.0)));
}
static void t_is_null_not_nullable(void **st) {
  (void)st; reset();
  sch s = II;
  run(&s, isnull(col(0), false));
  expect_kind(PLAN_SCAN_NOTHING, 0, 1, 0);
}
/* IS NOT NULL on a nullable key column starts past the NULL key (NULL sorts first ASC)
** and is answered by the key. */
static void t_is_not_null_bounds(void **st) {
  (void)st; reset();
  sch s = NB;
  run(&s, isnull(col(0), true));
  expect_kind(PLAN_SCAN_RANGE, 1, 1, 0);
  expect(0, &s, S_AFTER, 1, V(NUL(CAT_T_BIGINT)), E_NONE, 0, NULL);
  assert_string_equal(R.explain, "[NULL) .. [*]");
}
static void t_nullable_lt_skips_null(void **st) {
  (void)st; reset();
  sch s = NB;
  run(&s, bin(SQL_OP_LT, col(0), cbig(5)));
  expect_kind(PLAN_SCAN_RANGE, 1, 1, 0);
  expect(0, &s, S_AFTER, 1, V(NUL(CAT_T_BIGINT)), E_BEFORE, 1, V(BI(5)));
  assert_string_equal(R.explain, "[NULL) .. [5)");
}
static void t_nullable_in_null_desc(void **st) {
  (void)st; reset();
  sch s = S1(CAT_T_BIGINT, true, true, CAT_T_DOUBLE, false, false);
  run(&s, OR(isnull(col(0), false), bin(SQL_OP_EQ, col(0), cbig(3))));
  expect_kind(PLAN_SCAN_SKIP, 2, 1, 0);
  /* DESC: NULL sorts last */
  expect(0, &s, S_AT, 1, V(BI(3)), E_AFTER, 1, V(BI(3)));
  expect(1, &s, S_AT, 1, V(NUL(CAT_T_BIGINT)), E_AFTER, 1, V(NUL(CAT_T_BIGINT)));
}
static void t_eq_null_constant(void **st) {
  (void)st; reset();
  sch s = II;
  run(&s, bin(SQL_OP_EQ, col(0), cnull()));
  expect_kind(PLAN_SCAN_NOTHING, 0, 1, 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(t_no_where),
      cmocka_unit_test(t_eq_leading),
      cmocka_unit_test(t_eq_commuted),
      cmocka_unit_test(t_point),
      cmocka_unit_test(t_gt),
      cmocka_unit_test(t_ge),
      cmocka_unit_test(t_lt),
      cmocka_unit_test(t_le),
      cmocka_unit_test(t_lt_commuted),
      cmocka_unit_test(t_between),
      cmocka_unit_test(t_between_empty),
      cmocka_unit_test(t_not_between),
      cmocka_unit_test(t_contradiction_eq),
      cmocka_unit_test(t_contradiction_range),
      cmocka_unit_test(t_contradiction_second_col),
      cmocka_unit_test(t_range_two_sides),
      cmocka_unit_test(t_prefix_then_range),
      cmocka_unit_test(t_range_then_later_col_residual),
      cmocka_unit_test(t_second_col_only_full),
      cmocka_unit_test(t_nonkey_column),
      cmocka_unit_test(t_expression_residual),
      cmocka_unit_test(t_column_vs_column),
      cmocka_unit_test(t_ne_residual),
      cmocka_unit_test(t_not_residual),
      cmocka_unit_test(t_const_false_true),
      cmocka_unit_test(t_in_leading),
      cmocka_unit_test(t_in_adjacent_stay_apart),
      cmocka_unit_test(t_in_duplicates),
      cmocka_unit_test(t_in_product_points),
      cmocka_unit_test(t_in_then_range_skip),
      cmocka_unit_test(t_in_with_null),
      cmocka_unit_test(t_in_nonconstant),
      cmocka_unit_test(t_not_in),
      cmocka_unit_test(t_or_same_col),
      cmocka_unit_test(t_or_overlapping),
      cmocka_unit_test(t_or_disjoint_ranges),
      cmocka_unit_test(t_or_covering_everything),
      cmocka_unit_test(t_or_different_cols),
      cmocka_unit_test(t_or_nonkey_branch),
      cmocka_unit_test(t_or_of_boxes),
      cmocka_unit_test(t_or_partly_extractable),
      cmocka_unit_test(t_three_cols_skip),
      cmocka_unit_test(t_three_cols_gap),
      cmocka_unit_test(t_three_cols_after_range),
      cmocka_unit_test(t_desc_gt),
      cmocka_unit_test(t_desc_ge),
      cmocka_unit_test(t_desc_lt),
      cmocka_unit_test(t_desc_le),
      cmocka_unit_test(t_desc_between),
      cmocka_unit_test(t_desc_in_sorted),
      cmocka_unit_test(t_desc_leading),
      cmocka_unit_test(t_desc_leading_le),
      cmocka_unit_test(t_sensor_explain),
      cmocka_unit_test(t_sensor_window),
      cmocka_unit_test(t_timestamp_vs_date),
      cmocka_unit_test(t_date_vs_timestamp),
      cmocka_unit_test(t_is_null),
      cmocka_unit_test(t_is_null_point),
      cmocka_unit_test(t_is_null_not_nullable),
      cmocka_unit_test(t_is_not_null_bounds),
      cmocka_unit_test(t_nullable_lt_skips_null),
      cmocka_unit_test(t_nullable_in_null_desc),
      cmocka_unit_test(t_eq_null_constant),
  };
  int rc = cmocka_run_group_tests(tests, NULL, NULL);
  plan_scan_ranges_free(&R);
  return rc;
}
