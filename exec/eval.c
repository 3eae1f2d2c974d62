/*
** exec/eval.c: evaluation of bound expressions (planner/expr.h) over one row of value slots,
** with SQL's NULL rules: comparisons with NULL are NULL; AND/OR/NOT use three-valued logic
** (FALSE AND NULL is FALSE, TRUE OR NULL is TRUE); IN is TRUE on a match, else NULL if any
** item (or the left side) is NULL; BETWEEN is the AND of two comparisons; row value
** constructors compare field by field ((a, b) < (x, y) is a < x OR (a = x AND b < y)).
** Arithmetic, functions and LIKE matching are exec/func.h's; CAST is exec_func_cast.
**
** Not here: the pushed-down filter on encoded bytes (planner/filter.h), aggregates.
*/
#include <stdio.h>
#include <string.h>

#include "catalog/value.h"
#include "exec/apply.h"
#include "exec/engine.h"
#include "exec/eval.h"
#include "exec/func.h"
#include "sql/ast.h"

#define MAX_ARGS 64

static int fail(exec_eval_ctx *c, int code, const char *fmt, const char *a) {
  if (c->msg && c->cap) snprintf(c->msg, c->cap, fmt, a);
  return code;
}

static exec_func_ctx fctx(exec_eval_ctx *c) {
  exec_func_ctx f;
  f.arena = c->scratch;
  f.now_us = c->now_us;
  f.msg = c->msg;
  f.cap = c->cap;
  return f;
}

static cat_value bool_or_null(int tv) {
  if (tv < 0) {
    cat_value v = cat_v_null(cat_type_of(CAT_T_BOOLEAN));
    return v;
  }
  return cat_v_bool(tv != 0);
}

/* Compare two values: *tv = -2 if either is NULL, else -1/0/1. */
static int cmp_values(exec_eval_ctx *c, const cat_value *a, const cat_value *b, int *res) {
  if (a->is_null || b->is_null) {
    *res = -2;
    return EXEC_OK;
  }
  cat_error ce = {0};
  int cmp = 0;
  if (cat_value_compare(a, b, &cmp, &ce) != CAT_OK) return fail(c, EXEC_ERROR, "%s", ce.msg);
  *res = cmp;
  return EXEC_OK;
}

static int apply_cmp(int op, int cmp) {
  switch (op) {
    case SQL_OP_EQ: return cmp == 0;
    case SQL_OP_NE: return cmp != 0;
    case SQL_OP_LT: return cmp < 0;
    case SQL_OP_LE: return cmp <= 0;
    case SQL_OP_GT: return cmp > 0;
    default: return cmp >= 0;
  }
}

/* Row value constructors: lexicographic comparison with NULL rules; *tv as exec_eval_pred. */
static int cmp_rows(exec_eval_ctx *c, int op, const plan_expr *l, const plan_expr *r, int *tv) {
  uint32_t n = l->n_args;
  if (op == SQL_OP_EQ || op == SQL_OP_NE) {
    int all = 1; /* 1 all equal, -1 unknown */
    for (uint32_t i = 0; i < n; i++) {
      cat_value a, b;
      int rc = exec_eval(c, l->args[i], &a);
      if (!rc) rc = exec_eval(c, r->args[i], &b);
      int cmp;
      if (!rc) rc = cmp_values(c, &a, &b, &cmp);
      if (rc) return rc;
      if (cmp == -2) all = -1;
      else if (cmp != 0) {
        *tv = op == SQL_OP_NE;
        return EXEC_OK;
      }
    }
    *tv = all < 0 ? -1 : op == SQL_OP_EQ;
    return EXEC_OK;
  }
  for (uint32_t i = 0; i < n; i++) {
    cat_value a, b;
    int rc = exec_eval(c, l->args[i], &a);
    if (!rc) rc = exec_eval(c, r->args[i], &b);
    int cmp;
    if (!rc) rc = cmp_values(c, &a, &b, &cmp);
    if (rc) return rc;
    if (cmp == -2) {
      *tv = -1;
      return EXEC_OK;
    }
    if (cmp != 0 || i == n - 1) {
      *tv = apply_cmp(op, cmp);
      return EXEC_OK;
    }
  }
  *tv = apply_cmp(op, 0);
  return EXEC_OK;
}

static int eval_in(exec_eval_ctx *c, const plan_expr *e, int *tv) {
  const plan_expr *l = e->args[0];
  bool unknown = false;
  cat_value a;
  if (l->kind != PX_ROW) {
    int rc = exec_eval(c, l, &a);
    if (rc) return rc;
    if (a.is_null) {
      *tv = -1;
      return EXEC_OK;
    }
  }
  for (uint32_t i = 1; i < e->n_args; i++) {
    int t;
    if (l->kind == PX_ROW) {
      int rc = cmp_rows(c, SQL_OP_EQ, l, e->args[i], &t);
      if (rc) return rc;
    } else {
      cat_value b;
      int rc = exec_eval(c, e->args[i], &b);
      int cmp;
      if (!rc) rc = cmp_values(c, &a, &b, &cmp);
      if (rc) return rc;
      t = cmp == -2 ? -1 : cmp == 0;
    }
    if (t == 1) {
      *tv = !e->negated;
      return EXEC_OK;
    }
    if (t < 0) unknown = true;
  }
  *tv = unknown ? -1 : e->negated;
  return EXEC_OK;
}

static int eval_like(exec_eval_ctx *c, const plan_expr *e, int *tv) {
  cat_value s, p, esc;
  int rc = exec_eval(c, e->args[0], &s);
  if (!rc) rc = exec_eval(c, e->args[1], &p);
  if (rc) return rc;
  int32_t escape = EXEC_LIKE_NO_ESCAPE;
  if (e->n_args > 2) {
    rc = exec_eval(c, e->args[2], &esc);
    if (rc) return rc;
    if (esc.is_null) {
      *tv = -1;
      return EXEC_OK;
    }
    rc = exec_like_escape(esc.u.s.p, esc.u.s.len, &escape, c->msg, c->cap);
    if (rc) return rc;
  }
  if (s.is_null || p.is_null) {
    *tv = -1;
    return EXEC_OK;
  }
  bool m;
  rc = exec_like(s.u.s.p, s.u.s.len, p.u.s.p, p.u.s.len, escape, e->ilike, &m, c->msg, c->cap);
  if (rc) return rc;
  *tv = m != e->negated;
  return EXEC_OK;
}

int exec_eval_pred(exec_eval_ctx *c, const plan_expr *e, int *tv) {
  int rc;
  switch (e->kind) {
    case PX_BINARY:
      if (e->op == SQL_OP_AND || e->op == SQL_OP_OR) {
        int a, b;
        rc = exec_eval_pred(c, e->args[0], &a);
        if (rc) return rc;
        if (e->op == SQL_OP_AND && a == 0) { *tv = 0; return EXEC_OK; }
        if (e->op == SQL_OP_OR && a == 1) { *tv = 1; return EXEC_OK; }
        rc = exec_eval_pred(c, e->args[1], &b);
        if (rc) return rc;
        if (e->op == SQL_OP_AND) *tv = b == 0 ? 0 : (a < 0 || b < 0) ? -1 : 1;
        else *tv = b == 1 ? 1 : (a < 0 || b < 0) ? -1 : 0;
        return EXEC_OK;
      }
      if (e->op >= SQL_OP_EQ && e->op <= SQL_OP_GE) {
        if (e->args[0]->kind == PX_ROW) return cmp_rows(c, e->op, e->args[0], e->args[1], tv);
        cat_value a, b;
        rc = exec_eval(c, e->args[0], &a);
        if (!rc) rc = exec_eval(c, e->args[1], &b);
        int cmp;
        if (!rc) rc = cmp_values(c, &a, &b, &cmp);
        if (rc) return rc;
        *tv = cmp == -2 ? -1 : apply_cmp(e->op, cmp);
        return EXEC_OK;
      }
      break;
    case PX_UNARY:
      if (e->op == SQL_OP_NOT) {
        int a;
        rc = exec_eval_pred(c, e->args[0], &a);
        if (rc) return rc;
        *tv = a < 0 ? -1 : !a;
        return EXEC_OK;
      }
      break;
    case PX_IN: return eval_in(c, e, tv);
    case PX_BETWEEN: {
      cat_value v, lo, hi;
      rc = exec_eval(c, e->args[0], &v);
      if (!rc) rc = exec_eval(c, e->args[1], &lo);
      if (!rc) rc = exec_eval(c, e->args[2], &hi);
      int c1, c2;
      if (!rc) rc = cmp_values(c, &v, &lo, &c1);
      if (!rc) rc = cmp_values(c, &v, &hi, &c2);
      if (rc) return rc;
      int a = c1 == -2 ? -1 : c1 >= 0, b = c2 == -2 ? -1 : c2 <= 0;
      int r = (a == 0 || b == 0) ? 0 : (a < 0 || b < 0) ? -1 : 1;
      *tv = r < 0 ? -1 : e->negated ? !r : r;
      return EXEC_OK;
    }
    case PX_LIKE: return eval_like(c, e, tv);
    case PX_ISNULL: {
      cat_value v;
      if (e->args[0]->kind == PX_ROW) { /* a row is NULL when every field is */
        bool all = true;
        for (uint32_t i = 0; i < e->args[0]->n_args && all; i++) {
          rc = exec_eval(c, e->args[0]->args[i], &v);
          if (rc) return rc;
          all = v.is_null;
        }
        *tv = all != e->negated;
        return EXEC_OK;
      }
      rc = exec_eval(c, e->args[0], &v);
      if (rc) return rc;
      *tv = v.is_null != e->negated;
      return EXEC_OK;
    }
    default: break;
  }
  cat_value v;
  rc = exec_eval(c, e, &v);
  if (rc) return rc;
  if (v.is_null) *tv = -1;
  else if (v.type.id == CAT_T_BOOLEAN) *tv = v.u.b;
  else return fail(c, EXEC_ERROR, "%s is not a BOOLEAN condition", cat_type_name(v.type.id));
  return EXEC_OK;
}

static int eval_case(exec_eval_ctx *c, const plan_expr *e, cat_value *out) {
  uint32_t k = 0;
  cat_value op;
  int rc;
  if (e->has_operand) {
    rc = exec_eval(c, e->args[k++], &op);
    if (rc) return rc;
  }
  uint32_t end = e->n_args - (e->has_else ? 1 : 0);
  const plan_expr *res = NULL;
  for (; k + 1 < end; k += 2) {
    int t;
    if (e->has_operand) {
      cat_value w;
      rc = exec_eval(c, e->args[k], &w);
      int cmp;
      if (!rc) rc = cmp_values(c, &op, &w, &cmp);
      if (rc) return rc;
      t = cmp == 0;
    } else {
      rc = exec_eval_pred(c, e->args[k], &t);
      if (rc) return rc;
    }
    if (t == 1) {
      res = e->args[k + 1];
      break;
    }
  }
  if (!res && e->has_else) res = e->args[e->n_args - 1];
  if (!res) {
    *out = cat_v_null(e->type);
    return EXEC_OK;
  }
  rc = exec_eval(c, res, out);
  if (rc) return rc;
  if (!out->is_null && out->type.id != e->type.id && e->type.id) {
    exec_func_ctx f = fctx(c);
    cat_value v = *out;
    return exec_func_cast(&v, &e->type, out, &f);
  }
  return EXEC_OK;
}

int exec_eval(exec_eval_ctx *c, const plan_expr *e, cat_value *out) {
  int rc;
  switch (e->kind) {
    case PX_CONST: *out = e->value; return EXEC_OK;
    case PX_COLUMN: *out = c->row[e->column]; return EXEC_OK;
    case PX_AGG: *out = c->row[c->agg_base + e->func]; return EXEC_OK;
    case PX_PARAM:
      if (e->param >= 1 && e->param <= c->n_params && c->params) *out = c->params[e->param - 1];
      else *out = cat_v_null(e->type);
      return EXEC_OK;
    case PX_UNARY:
      if (e->op == SQL_OP_NEG) {
        cat_value a;
        rc = exec_eval(c, e->args[0], &a);
        if (rc) return rc;
        exec_func_ctx f = fctx(c);
        return exec_func_call(e->func, &a, 1, &e->type, out, &f);
      }
      break;
    case PX_BINARY:
      if (e->op < SQL_OP_EQ) { /* arithmetic and || */
        cat_value a[2];
        rc = exec_eval(c, e->args[0], &a[0]);
        if (!rc) rc = exec_eval(c, e->args[1], &a[1]);
        if (rc) return rc;
        exec_func_ctx f = fctx(c);
        return exec_func_call(e->func, a, 2, &e->type, out, &f);
      }
      break;
    case PX_CASE: return eval_case(c, e, out);
    case PX_CAST: {
      cat_value a;
      rc = exec_eval(c, e->args[0], &a);
      if (rc) return rc;
      exec_func_ctx f = fctx(c);
      return exec_func_cast(&a, &e->type, out, &f);
    }
    case PX_FUNC: {
      cat_value a[MAX_ARGS];
      if (e->n_args > MAX_ARGS) return fail(c, EXEC_ERROR, "%s", "too many arguments");
      for (uint32_t i = 0; i < e->n_args; i++) {
        rc = exec_eval(c, e->args[i], &a[i]);
        if (rc) return rc;
      }
      exec_func_ctx f = fctx(c);
      return exec_func_call(e->func, a, (int)e->n_args, &e->type, out, &f);
    }
    case PX_ROW: return fail(c, EXEC_ERROR, "%s", "a row value constructor is not a value");
    case PX_APPLY: { /* a correlated subquery run for these outer values (exec/apply.h) */
      const exec_apply_env *env = e->param >= 1 && e->param <= c->n_params && c->params
                                      ? exec_apply_env_of(&c->params[e->param - 1]) : NULL;
      cat_value v[32];
      if (!env || e->n_args > 32)
        return fail(c, EXEC_ERROR, "%s", "a correlated subquery evaluated outside its statement");
      for (uint32_t i = 0; i < e->n_args; i++)
        if ((rc = exec_eval(c, e->args[i], &v[i])) != EXEC_OK) return rc;
      return exec_apply_eval(env, e->func, v, (int)e->n_args, out, c->scratch, c->msg, c->cap);
    }
    default: break;
  }
  int tv;
  rc = exec_eval_pred(c, e, &tv);
  if (rc) return rc;
  *out = bool_or_null(tv);
  return EXEC_OK;
}

int exec_eval_const(const plan_expr *e, plan_arena *A, cat_value *out, char *msg, size_t cap) {
  exec_eval_ctx c;
  memset(&c, 0, sizeof c);
  exec_arena scratch;
  exec_arena_init(&scratch);
  c.scratch = &scratch;
  c.msg = msg;
  c.cap = cap;
  int rc = exec_eval(&c, e, out);
  if (rc == EXEC_OK) rc = exec_value_own(A, out);
  exec_arena_free(&scratch);
  return rc;
}
