/*
** tests/planner/test_keyrange.c: key-range derivation (planner/keyrange.h) on start and stop
** keys, without executing anything (Phoenix's WhereOptimizerTest). Every expected key is
** built with catalog/keycodec.h (cat_key_encode, cat_key_prefix_end,
** cat_key_encode_string_prefix), never with the planner's own code paths. Covers =, IN,
** ranges, BETWEEN, LIKE with ESCAPE, IS NULL, row value constructors, OR, contradictions,
** IN products and the skip-scan cap, DESC columns, bound coercion, BIGINT and DOUBLE
** extremes, strings with 0x00, parameters, and key_terms versus residual. The randomized
** property test lives in test_keyrange_prop.c.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalog/keycodec.h"
#include "catalog/value.h"
#include "exec/engine.h"
#include "planner/keyrange.h"
#include "sql/ast.h"

/* ---- Expression building -------------------------------------------------------------- */
#define POOL 120000
static plan_expr pool[POOL];
static plan_expr *argpool[2 * POOL];
static int np, nap;

static plan_expr *node(int kind, int n) {
  assert_true(np < POOL && nap + n <= 2 * POOL);
  plan_expr *e = &pool[np++];
  memset(e, 0, sizeof *e);
  e->kind = (uint8_t)kind;
  e->type = cat_type_of(CAT_T_BOOLEAN);
  e->n_args = (uint32_t)n;
  e->args = &argpool[nap];
  nap += n;
  return e;
}
static plan_expr *col(int slot) {
  plan_expr *e = node(PX_COLUMN, 0);
  e->column = slot;
  return e;
}
static plan_expr *cval(cat_value v) {
  plan_expr *e = node(PX_CONST, 0);
  e->value = v;
  e->type = v.type;
  return e;
}
static plan_expr *ci(int64_t i) { return cval(cat_v_int(CAT_T_INTEGER, i)); }
static plan_expr *cbig(int64_t i) { return cval(cat_v_int(CAT_T_BIGINT, i)); }
static plan_expr *cd(double d) { return cval(cat_v_double(d)); }
static plan_expr *cs(const char *s) { return cval(cat_v_str(CAT_T_VARCHAR, s, strlen(s))); }
static cat_value dec(const char *t) {
  cat_value v;
  cat_type ty = cat_type_of(CAT_T_DECIMAL);
  cat_error err;
  assert_int_equal(cat_text_parse(&ty, t, strlen(t), &v, &err), CAT_OK);
  return v;
}
static plan_expr *cdec(const char *t) { return cval(dec(t)); }
static plan_expr *cnull(void) { return cval(cat_v_null(cat_type_of(CAT_T_INTEGER))); }
static plan_expr *param(int n) {
  plan_expr *e = node(PX_PARAM, 0);
  e->param = n;
  return e;
}
static plan_expr *bin(int op, plan_expr *a, plan_expr *b) {
  plan_expr *e = node(PX_BINARY, 2);
  e->op = (uint8_t)op;
  e->args[0] = a;
  e->args[1] = b;
  return e;
}
static plan_expr *AND(plan_expr *a, plan_expr *b) { return bin(SQL_OP_AND, a, b); }
static plan_expr *OR(plan_expr *a, plan_expr *b) { return bin(SQL_OP_OR, a, b); }
static plan_expr *in_list(plan_expr *lhs, int n, plan_expr **vals, bool neg) {
  plan_expr *e = node(PX_IN, n + 1);
  e->negated = neg;
  e->args[0] = lhs;
  for (int i = 0; i < n; i++) e->args[i + 1] = vals[i];
  return e;
}
#define IN(lhs, ...) in_list(lhs, (int)(sizeof((plan_expr *[]){__VA_ARGS__}) / sizeof(plan_expr *)), \
                             (plan_expr *[]){__VA_ARGS__}, false)
static plan_expr *row_of(int n, plan_expr **v) {
  plan_expr *e = node(PX_ROW, n);
  for (int i = 0; i < n; i++) e->args[i] = v[i];
  return e;
}
#define ROW(...) row_of((int)(sizeof((plan_expr *[]){__VA_ARGS__}) / sizeof(plan_expr *)), \
                        (plan_expr *[]){__VA_ARGS__})
static plan_expr *between(plan_expr *a, plan_expr *lo, plan_expr *hi, bool neg) {
  plan_expr *e = node(PX_BETWEEN, 3);
  e->negated = neg;
  e->args[0] = a;
  e->args[1] = lo;
  e->args[2] = hi;
  return e;
}
static plan_expr *like(plan_expr *a, plan_expr *pat, plan_expr *esc) {
  plan_expr *e = node(PX_LIKE, esc ? 3 : 2);
  e->args[0] = a;
  e->args[1] = pat;
  if (esc) e->args[2] = esc;
  return e;
}
static plan_expr *isnull(plan_expr *a, bool neg) {
  plan_expr *e = node(PX_ISNULL, 1);
  e->negated = neg;
  e->args[0] = a;
  return e;
}

/* ---- Schemas -------------------------------------------------------------------------- */
typedef struct sch {
  cat_key_col cols[4]; /* key columns */
  int n;               /* count */
} sch;
static const int SLOTS[4] = {0, 1, 2, 3};
static const char *const NAMES[4] = {"A", "B", "C", "D"};
#define X_SLOT 7 /* a non-key column */

static cat_key_col kc(int id, bool desc, bool nullable) {
  cat_key_col c = {cat_type_of(id), desc, nullable};
  return c;
}
static sch S1(int id0, bool d0, bool n0, int id1, bool d1, bool n1) {
  sch s = {{kc(id0, d0, n0), kc(id1, d1, n1)}, 2};
  return s;
}
static sch S0(int id, bool desc, bool nullable) {
  sch s = {{kc(id, desc, nullable)}, 1};
  return s;
}

static plan_scan_ranges R;
static const cat_value *PARAMS;
static int NPARAMS;

static void reset(void) {
  np = nap = 0;
  plan_scan_ranges_free(&R);
  PARAMS = NULL;
  NPARAMS = 0;
}

static int run_rc(const sch *s, plan_expr *where) {
  plan_key_schema ks = {s->cols, SLOTS, NAMES, s->n};
  char msg[256];
  plan_scan_ranges_free(&R);
  return plan_key_ranges(&ks, where, PARAMS, NPARAMS, &R, msg, sizeof msg);
}
static void run(const sch *s, plan_expr *where) { assert_int_equal(run_rc(s, where), EXEC_OK); }

/* ---- Expected keys (catalog/keycodec.h only) ------------------------------------------ */
enum { S_NONE, S_AT, S_AFTER };
enum { E_NONE, E_BEFORE, E_AFTER, E_POINT };

typedef struct kbuf {
  uint8_t b[512]; /* bytes */
  size_t n;       /* length */
} kbuf;

static kbuf enc(const sch *s, int n, const cat_value *v) {
  kbuf k;
  cat_error err;
  assert_int_equal(cat_key_encode(s->cols, n, v, k.b, sizeof k.b, &k.n, &err), CAT_OK);
  return k;
}
static bool pe(kbuf *k) {
  uint8_t o[512];
  size_t n;
  if (!cat_key_prefix_end(k->b, k->n, o, &n)) return false;
  memcpy(k->b, o, n);
  k->n = n;
  return true;
}
static void same_bytes(const uint8_t *got, size_t gl, const kbuf *want) {
  if (gl != want->n || memcmp(got, want->b, gl) != 0) {
    fprintf(stderr, "key mismatch: got %zu bytes:", gl);
    for (size_t i = 0; i < gl; i++) fprintf(stderr, " %02x", got[i]);
    fprintf(stderr, "\n          want %zu bytes:", want->n);
    for (size_t i = 0; i < want->n; i++) fprintf(stderr, " %02x", want->b[i]);
    fprintf(stderr, "\n");
    fail();
  }
}
static void check_start(const plan_key_range *r, const kbuf *k, int mode) {
  if (mode == S_NONE) { assert_null(r->start); return; }
  assert_non_null(r->start);
  assert_true(r->start_incl);
  same_bytes(r->start, r->start_len, k);
}
static void check_end(const plan_key_range *r, const kbuf *k, int mode) {
  if (mode == E_NONE) { assert_null(r->end); return; }
  assert_non_null(r->end);
  assert_int_equal(r->end_incl, mode == E_POINT);
  same_bytes(r->end, r->end_len, k);
}
/* Range i: start from ns values of sv (mode sm), end from ne values of ev (mode em). */
static void expect(uint32_t i, const sch *s, int sm, int ns, const cat_value *sv, int em, int ne,
                   const cat_value *ev) {
  assert_true(i < R.n_ranges);
  const plan_key_range *r = &R.ranges[i];
  kbuf k = {{0}, 0};
  if (sm != S_NONE) {
    k = enc(s, ns, sv);
    if (sm == S_AFTER) assert_true(pe(&k));
  }
  check_start(r, &k, sm);
  if (em == E_NONE) { check_end(r, NULL, E_NONE); return; }
  k = enc(s, ne, ev);
  if (em == E_AFTER && !pe(&k)) { check_end(r, NULL, E_NONE); return; }
  check_end(r, &k, em);
}
/* Range i is the one key of values v. */
static void expect_point(uint32_t i, const sch *s, const cat_value *v) {
  expect(i, s, S_AT, s->n, v, E_POINT, s->n, v);
}
static void expect_kind(int kind, uint32_t n_ranges, uint32_t n_key, uint32_t n_res) {
  assert_string_equal(plan_scan_kind_name(R.kind), plan_scan_kind_name(kind));
  assert_int_equal(R.n_ranges, n_ranges);
  assert_int_equal(R.n_key_terms, n_key);
  assert_int_equal(R.n_residual, n_res);
}
#define V(...) ((const cat_value[]){__VA_ARGS__})
static cat_value I(int64_t i) { return cat_v_int(CAT_T_INTEGER, i); }
static cat_value BI(int64_t i) { return cat_v_int(CAT_T_BIGINT, i); }
static cat_value D(double d) { return cat_v_double(d); }
static cat_value VS(const char *s) { return cat_v_str(CAT_T_VARCHAR, s, strlen(s)); }
static cat_value NUL(int id) { return cat_v_null(cat_type_of(id)); }

#define II S1(CAT_T_INTEGER, false, false, CAT_T_INTEGER, false, false)
#define ID S1(CAT_T_INTEGER, false, false, CAT_T_INTEGER, true, false)

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
#define NB S1(CAT_T_BIGINT, false, true, CAT_T_DOUBLE, false, false)
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
static void t_is_not_null_residual(void **st) {
  (void)st; reset();
  sch s = NB;
  run(&s, isnull(col(0), true));
  expect_kind(PLAN_SCAN_FULL, 0, 0, 1);
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
      cmocka_unit_test(t_no_where), cmocka_unit_test(t_eq_leading),
      cmocka_unit_test(t_eq_commuted), cmocka_unit_test(t_point), cmocka_unit_test(t_gt),
      cmocka_unit_test(t_ge), cmocka_unit_test(t_lt), cmocka_unit_test(t_le),
      cmocka_unit_test(t_lt_commuted), cmocka_unit_test(t_between),
      cmocka_unit_test(t_between_empty), cmocka_unit_test(t_not_between),
      cmocka_unit_test(t_contradiction_eq), cmocka_unit_test(t_contradiction_range),
      cmocka_unit_test(t_contradiction_second_col), cmocka_unit_test(t_range_two_sides),
      cmocka_unit_test(t_prefix_then_range), cmocka_unit_test(t_range_then_later_col_residual),
      cmocka_unit_test(t_second_col_only_full), cmocka_unit_test(t_nonkey_column),
      cmocka_unit_test(t_expression_residual), cmocka_unit_test(t_column_vs_column),
      cmocka_unit_test(t_ne_residual), cmocka_unit_test(t_not_residual),
      cmocka_unit_test(t_const_false_true), cmocka_unit_test(t_in_leading),
      cmocka_unit_test(t_in_adjacent_stay_apart), cmocka_unit_test(t_in_duplicates),
      cmocka_unit_test(t_in_product_points), cmocka_unit_test(t_in_then_range_skip),
      cmocka_unit_test(t_in_with_null), cmocka_unit_test(t_in_nonconstant),
      cmocka_unit_test(t_not_in), cmocka_unit_test(t_or_same_col),
      cmocka_unit_test(t_or_overlapping), cmocka_unit_test(t_or_disjoint_ranges),
      cmocka_unit_test(t_or_covering_everything), cmocka_unit_test(t_or_different_cols),
      cmocka_unit_test(t_or_nonkey_branch), cmocka_unit_test(t_or_of_boxes),
      cmocka_unit_test(t_or_partly_extractable), cmocka_unit_test(t_three_cols_skip),
      cmocka_unit_test(t_three_cols_gap), cmocka_unit_test(t_three_cols_after_range),
      cmocka_unit_test(t_desc_gt), cmocka_unit_test(t_desc_ge), cmocka_unit_test(t_desc_lt),
      cmocka_unit_test(t_desc_le), cmocka_unit_test(t_desc_between),
      cmocka_unit_test(t_desc_in_sorted), cmocka_unit_test(t_desc_leading),
      cmocka_unit_test(t_desc_leading_le), cmocka_unit_test(t_sensor_explain),
      cmocka_unit_test(t_sensor_window), cmocka_unit_test(t_timestamp_vs_date),
      cmocka_unit_test(t_date_vs_timestamp), cmocka_unit_test(t_is_null),
      cmocka_unit_test(t_is_null_point), cmocka_unit_test(t_is_null_not_nullable),
      cmocka_unit_test(t_is_not_null_residual), cmocka_unit_test(t_nullable_lt_skips_null),
      cmocka_unit_test(t_nullable_in_null_desc), cmocka_unit_test(t_eq_null_constant),
      cmocka_unit_test(t_int_gt_frac), cmocka_unit_test(t_int_lt_neg_frac),
      cmocka_unit_test(t_int_le_double_frac), cmocka_unit_test(t_int_ge_neg_double),
      cmocka_unit_test(t_int_eq_frac_nothing), cmocka_unit_test(t_int_gt_whole_decimal),
      cmocka_unit_test(t_int_lt_huge_unbounded), cmocka_unit_test(t_int_gt_huge_nothing),
      cmocka_unit_test(t_int_gt_bigint_out_of_int), cmocka_unit_test(t_bigint_gt_max),
      cmocka_unit_test(t_bigint_gt_beyond_max), cmocka_unit_test(t_bigint_ge_min_nullable),
      cmocka_unit_test(t_bigint_eq_max), cmocka_unit_test(t_bigint_le_max_not_null),
      cmocka_unit_test(t_bigint_vs_large_double_residual), cmocka_unit_test(t_tinyint_ranges),
      cmocka_unit_test(t_double_gt_inf), cmocka_unit_test(t_double_eq_nan),
      cmocka_unit_test(t_double_lt_nan), cmocka_unit_test(t_double_neg_zero),
      cmocka_unit_test(t_double_max_min), cmocka_unit_test(t_double_vs_int_const),
      cmocka_unit_test(t_float_coercion), cmocka_unit_test(t_decimal_coercion),
      cmocka_unit_test(t_like_prefix), cmocka_unit_test(t_like_more_wildcards),
      cmocka_unit_test(t_like_leading_wildcard), cmocka_unit_test(t_like_no_wildcard),
      cmocka_unit_test(t_like_escape), cmocka_unit_test(t_like_desc),
      cmocka_unit_test(t_like_not_ilike), cmocka_unit_test(t_like_with_prefix_col),
      cmocka_unit_test(t_like_zero_byte), cmocka_unit_test(t_string_zero_bytes),
      cmocka_unit_test(t_char_trailing_spaces), cmocka_unit_test(t_varchar_longer_constant),
      cmocka_unit_test(t_key_too_big), cmocka_unit_test(t_rvc_gt), cmocka_unit_test(t_rvc_ge),
      cmocka_unit_test(t_rvc_lt), cmocka_unit_test(t_rvc_window),
      cmocka_unit_test(t_rvc_commuted), cmocka_unit_test(t_rvc_desc),
      cmocka_unit_test(t_rvc_nonkey_tail), cmocka_unit_test(t_rvc_eq),
      cmocka_unit_test(t_rvc_ne_residual), cmocka_unit_test(t_rvc_in),
      cmocka_unit_test(t_rvc_in_null_tuple), cmocka_unit_test(t_rvc_in_reordered),
      cmocka_unit_test(t_rvc_in_prefix_only), cmocka_unit_test(t_param_bound),
      cmocka_unit_test(t_param_unbound), cmocka_unit_test(t_param_null),
      cmocka_unit_test(t_cap_exact), cmocka_unit_test(t_cap_hull),
      cmocka_unit_test(t_cap_fewer_columns), cmocka_unit_test(t_cap_product_under),
      cmocka_unit_test(t_explain_many),
  };
  int rc = cmocka_run_group_tests(tests, NULL, NULL);
  plan_scan_ranges_free(&R);
  return rc;
}
