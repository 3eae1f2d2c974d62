/*
** tests/planner/keyrange_test_util.h: what the key-range tests (test_keyrange.c,
** test_keyrange_values.c) share: building bound WHERE expressions by hand, the key schemas,
** running plan_key_ranges, and the expected start and stop keys, built with
** catalog/keycodec.h only (never with the planner's own code paths). Each test program
** includes it once; everything here is static to that program.
*/
#ifndef ROWAN_TESTS_PLANNER_KEYRANGE_TEST_UTIL_H
#define ROWAN_TESTS_PLANNER_KEYRANGE_TEST_UTIL_H

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

static inline plan_expr *node(int kind, int n) {
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
static inline plan_expr *col(int slot) {
  plan_expr *e = node(PX_COLUMN, 0);
  e->column = slot;
  return e;
}
static inline plan_expr *cval(cat_value v) {
  plan_expr *e = node(PX_CONST, 0);
  e->value = v;
  e->type = v.type;
  return e;
}
static inline plan_expr *ci(int64_t i) { return cval(cat_v_int(CAT_T_INTEGER, i)); }
static inline plan_expr *cbig(int64_t i) { return cval(cat_v_int(CAT_T_BIGINT, i)); }
static inline plan_expr *cd(double d) { return cval(cat_v_double(d)); }
static inline plan_expr *cs(const char *s) { return cval(cat_v_str(CAT_T_VARCHAR, s, strlen(s))); }
static inline cat_value dec(const char *t) {
  cat_value v;
  cat_type ty = cat_type_of(CAT_T_DECIMAL);
  cat_error err;
  assert_int_equal(cat_text_parse(&ty, t, strlen(t), &v, &err), CAT_OK);
  return v;
}
static inline plan_expr *cdec(const char *t) { return cval(dec(t)); }
static inline plan_expr *cnull(void) { return cval(cat_v_null(cat_type_of(CAT_T_INTEGER))); }
static inline plan_expr *param(int n) {
  plan_expr *e = node(PX_PARAM, 0);
  e->param = n;
  return e;
}
static inline plan_expr *bin(int op, plan_expr *a, plan_expr *b) {
  plan_expr *e = node(PX_BINARY, 2);
  e->op = (uint8_t)op;
  e->args[0] = a;
  e->args[1] = b;
  return e;
}
static inline plan_expr *AND(plan_expr *a, plan_expr *b) { return bin(SQL_OP_AND, a, b); }
static inline plan_expr *OR(plan_expr *a, plan_expr *b) { return bin(SQL_OP_OR, a, b); }
static inline plan_expr *in_list(plan_expr *lhs, int n, plan_expr **vals, bool neg) {
  plan_expr *e = node(PX_IN, n + 1);
  e->negated = neg;
  e->args[0] = lhs;
  for (int i = 0; i < n; i++) e->args[i + 1] = vals[i];
  return e;
}
#define IN(lhs, ...) in_list(lhs, (int)(sizeof((plan_expr *[]){__VA_ARGS__}) / sizeof(plan_expr *)), \
                             (plan_expr *[]){__VA_ARGS__}, false)
static inline plan_expr *row_of(int n, plan_expr **v) {
  plan_expr *e = node(PX_ROW, n);
  for (int i = 0; i < n; i++) e->args[i] = v[i];
  return e;
}
#define ROW(...) row_of((int)(sizeof((plan_expr *[]){__VA_ARGS__}) / sizeof(plan_expr *)), \
                        (plan_expr *[]){__VA_ARGS__})
static inline plan_expr *between(plan_expr *a, plan_expr *lo, plan_expr *hi, bool neg) {
  plan_expr *e = node(PX_BETWEEN, 3);
  e->negated = neg;
  e->args[0] = a;
  e->args[1] = lo;
  e->args[2] = hi;
  return e;
}
static inline plan_expr *like(plan_expr *a, plan_expr *pat, plan_expr *esc) {
  plan_expr *e = node(PX_LIKE, esc ? 3 : 2);
  e->args[0] = a;
  e->args[1] = pat;
  if (esc) e->args[2] = esc;
  return e;
}
static inline plan_expr *isnull(plan_expr *a, bool neg) {
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

static inline cat_key_col kc(int id, bool desc, bool nullable) {
  cat_key_col c = {cat_type_of(id), desc, nullable};
  return c;
}
static inline sch S1(int id0, bool d0, bool n0, int id1, bool d1, bool n1) {
  sch s = {{kc(id0, d0, n0), kc(id1, d1, n1)}, 2};
  return s;
}
static inline sch S0(int id, bool desc, bool nullable) {
  sch s = {{kc(id, desc, nullable)}, 1};
  return s;
}

static plan_scan_ranges R;
static const cat_value *PARAMS;
static int NPARAMS;

static inline void reset(void) {
  np = nap = 0;
  plan_scan_ranges_free(&R);
  PARAMS = NULL;
  NPARAMS = 0;
}

static inline int run_rc(const sch *s, plan_expr *where) {
  plan_key_schema ks = {s->cols, SLOTS, NAMES, s->n};
  char msg[256];
  plan_scan_ranges_free(&R);
  return plan_key_ranges(&ks, where, PARAMS, NPARAMS, &R, msg, sizeof msg);
}
static inline void run(const sch *s, plan_expr *where) { assert_int_equal(run_rc(s, where), EXEC_OK); }

/* ---- Expected keys (catalog/keycodec.h only) ------------------------------------------ */
enum { S_NONE, S_AT, S_AFTER };
enum { E_NONE, E_BEFORE, E_AFTER, E_POINT };

typedef struct kbuf {
  uint8_t b[512]; /* bytes */
  size_t n;       /* length */
} kbuf;

static inline kbuf enc(const sch *s, int n, const cat_value *v) {
  kbuf k;
  cat_error err;
  assert_int_equal(cat_key_encode(s->cols, n, v, k.b, sizeof k.b, &k.n, &err), CAT_OK);
  return k;
}
static inline bool pe(kbuf *k) {
  uint8_t o[512];
  size_t n;
  if (!cat_key_prefix_end(k->b, k->n, o, &n)) return false;
  memcpy(k->b, o, n);
  k->n = n;
  return true;
}
static inline void same_bytes(const uint8_t *got, size_t gl, const kbuf *want) {
  if (gl != want->n || memcmp(got, want->b, gl) != 0) {
    fprintf(stderr, "key mismatch: got %zu bytes:", gl);
    for (size_t i = 0; i < gl; i++) fprintf(stderr, " %02x", got[i]);
    fprintf(stderr, "\n          want %zu bytes:", want->n);
    for (size_t i = 0; i < want->n; i++) fprintf(stderr, " %02x", want->b[i]);
    fprintf(stderr, "\n");
    fail();
  }
}
static inline void check_start(const plan_key_range *r, const kbuf *k, int mode) {
  if (mode == S_NONE) { assert_null(r->start); return; }
  assert_non_null(r->start);
  assert_true(r->start_incl);
  same_bytes(r->start, r->start_len, k);
}
static inline void check_end(const plan_key_range *r, const kbuf *k, int mode) {
  if (mode == E_NONE) { assert_null(r->end); return; }
  assert_non_null(r->end);
  assert_int_equal(r->end_incl, mode == E_POINT);
  same_bytes(r->end, r->end_len, k);
}
/* Range i: start from ns values of sv (mode sm), end from ne values of ev (mode em). */
static inline void expect(uint32_t i, const sch *s, int sm, int ns, const cat_value *sv, int em, int ne,
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
static inline void expect_point(uint32_t i, const sch *s, const cat_value *v) {
  expect(i, s, S_AT, s->n, v, E_POINT, s->n, v);
}
static inline void expect_kind(int kind, uint32_t n_ranges, uint32_t n_key, uint32_t n_res) {
  assert_string_equal(plan_scan_kind_name(R.kind), plan_scan_kind_name(kind));
  assert_int_equal(R.n_ranges, n_ranges);
  assert_int_equal(R.n_key_terms, n_key);
  assert_int_equal(R.n_residual, n_res);
}
#define V(...) ((const cat_value[]){__VA_ARGS__})
static inline cat_value I(int64_t i) { return cat_v_int(CAT_T_INTEGER, i); }
static inline cat_value BI(int64_t i) { return cat_v_int(CAT_T_BIGINT, i); }
static inline cat_value D(double d) { return cat_v_double(d); }
static inline cat_value VS(const char *s) { return cat_v_str(CAT_T_VARCHAR, s, strlen(s)); }
static inline cat_value NUL(int id) { return cat_v_null(cat_type_of(id)); }

#define II S1(CAT_T_INTEGER, false, false, CAT_T_INTEGER, false, false)
#define ID S1(CAT_T_INTEGER, false, false, CAT_T_INTEGER, true, false)
#define NB S1(CAT_T_BIGINT, false, true, CAT_T_DOUBLE, false, false) /* nullable BIGINT, DOUBLE */

#endif /* ROWAN_TESTS_PLANNER_KEYRANGE_TEST_UTIL_H */
