/*
** planner/bind_func.c: binding of function calls. Scalar functions are resolved through
** exec/func.h (cat_func_lookup gives the id and the result type; an untyped parameter
** argument takes the type cat_func_arg_hint suggests). Aggregate calls (COUNT, SUM, AVG,
** MIN, MAX, STDDEV_*, with DISTINCT and COUNT(*); FIRST_VALUE/LAST_VALUE(x) and
** NTH_VALUE(x, n) WITHIN GROUP (ORDER BY k [DESC]); PERCENTILE_CONT/DISC(p) WITHIN GROUP
** (ORDER BY x) with p a constant in 0..1) are resolved through exec/agg.h and collected into
** the SELECT's aggregate list (an identical call is collected once); the node left in the
** tree is a PX_AGG naming the slot. Aggregates are refused where SQL forbids them (WHERE,
** GROUP BY, VALUES, nested in another aggregate).
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "catalog/agg_sig.h"
#include "catalog/status.h"
#include "catalog/array.h"
#include "catalog/func_sig.h"
#include "planner/plan_bind.h"

bool bind_func_foldable(int f) { return f != EXEC_F_NOW && f != EXEC_F_CURRENT_DATE; }

/* The percentile p of PERCENTILE_CONT/DISC(p): a number literal (with an optional sign) in
** 0..1. False with the error set otherwise. */
static bool pct_fraction(binder *b, const sql_expr *x, double *out) {
  const sql_expr *p = x->list->a[0];
  bool neg = false;
  while (p->kind == SQL_E_UNARY && (p->op == SQL_OP_NEG || p->op == SQL_OP_POS)) {
    if (p->op == SQL_OP_NEG) neg = !neg;
    p = p->left;
  }
  if (p->kind != SQL_E_LITERAL ||
      (p->lit != SQL_LIT_INTEGER && p->lit != SQL_LIT_DECIMAL && p->lit != SQL_LIT_DOUBLE)) {
    bind_error(b, EXEC_ERROR, x->list->a[0]->off,
               "%s: the percentile (argument 1) must be a constant number between 0 and 1",
               x->text);
    return false;
  }
  double v = strtod(p->text, NULL);
  if (neg) v = -v;
  if (!(v >= 0 && v <= 1)) {
    bind_error(b, EXEC_ERROR, x->list->a[0]->off,
               "%s: the percentile (argument 1) must be between 0 and 1, got %s%s", x->text,
               neg ? "-" : "", p->text);
    return false;
  }
  *out = v;
  return true;
}

/* The n of NTH_VALUE(x, n): an integer literal from 1 to 1,000,000 (the rows kept per group).
** False with the error set otherwise. */
static bool nth_count(binder *b, const sql_expr *x, double *out) {
  const sql_expr *p = x->list->a[1];
  long long v = p->kind == SQL_E_LITERAL && p->lit == SQL_LIT_INTEGER ? strtoll(p->text, NULL, 10)
                                                                      : 0;
  if (v < 1 || v > 1000000) {
    bind_error(b, EXEC_ERROR, p->off, "%s: n (argument 2) must be an integer literal from 1 to "
               "1000000", x->text);
    return false;
  }
  *out = (double)v;
  return true;
}

static plan_expr *bind_agg(binder *b, const sql_expr *x) {
  if (b->agg_mode == BIND_AGG_INSIDE || !b->sel) {
    bind_error(b, EXEC_ERROR, x->off, "aggregate %s cannot be nested in another aggregate",
               x->text);
    return NULL;
  }
  if (b->agg_mode == BIND_AGG_NO) {
    bind_error(b, EXEC_ERROR, x->off, "aggregate %s is not allowed in %s", x->text,
               b->agg_where ? b->agg_where : "this clause");
    return NULL;
  }
  int n = x->list ? x->list->n : 0;
  bool ordered = cat_agg_is_ordered_set(x->text);
  double frac = 0;
  if (ordered != x->within) {
    bind_error(b, EXEC_ERROR, x->off, ordered ? "%s needs WITHIN GROUP (ORDER BY x)"
                                              : "%s does not take WITHIN GROUP", x->text);
    return NULL;
  }
  bool valued = ordered && cat_agg_takes_value(x->text); /* FIRST_VALUE(x) ... (ORDER BY k) */
  bool nth = valued && strcasecmp(x->text, "NTH_VALUE") == 0;
  if (valued) {
    if (n != (nth ? 3 : 2)) {
      bind_error(b, EXEC_ERROR, x->off, nth ? "%s takes two arguments (the value and n), got %d"
                                            : "%s takes one argument (the value), got %d",
                 x->text, n - 1);
      return NULL;
    }
    if (nth && !nth_count(b, x, &frac)) return NULL;
  } else if (ordered) {
    if (n != 2) {
      bind_error(b, EXEC_ERROR, x->off, "%s takes one argument (the percentile), got %d",
                 x->text, n - 1);
      return NULL;
    }
    if (!pct_fraction(b, x, &frac)) return NULL;
  } else if (!x->star && n != 1) {
    bind_error(b, EXEC_ERROR, x->off, "aggregate %s takes one argument, got %d", x->text, n);
    return NULL;
  }
  plan_expr *arg = NULL, *arg2 = NULL;
  cat_type at = cat_type_of(0);
  if (!x->star) {
    b->agg_mode = BIND_AGG_INSIDE;
    arg = bind_expr(b, x->list->a[valued ? 0 : n - 1]);
    if (arg && valued) arg2 = bind_expr(b, x->list->a[n - 1]);
    b->agg_mode = BIND_AGG_OK;
    if (!arg || (valued && !arg2)) return NULL;
    at = arg->type;
  }
  int id;
  cat_type rt;
  char m[256];
  if (cat_agg_lookup(x->text, x->star, x->distinct, &at, &id, &rt, m, sizeof m) != EXEC_OK) {
    bind_error(b, EXEC_ERROR, x->off, "%s", m);
    return NULL;
  }
  plan_select *s = b->sel;
  int slot = -1;
  for (int i = 0; i < s->n_aggs; i++) {
    const plan_agg *g = &s->aggs[i];
    if (g->func == id && g->distinct == x->distinct && g->star == x->star &&
        g->frac == frac && g->desc == x->within_desc &&
        (x->star || plan_expr_equal(g->arg, arg)) &&
        (!arg2 ? !g->arg2 : g->arg2 && plan_expr_equal(g->arg2, arg2))) {
      slot = i;
      break;
    }
  }
  if (slot < 0) {
    if (s->n_aggs == b->agg_cap) {
      int nc = b->agg_cap ? b->agg_cap * 2 : 8;
      plan_agg *na = plan_arena_alloc(b->A, (size_t)nc * sizeof *na);
      if (!na) {
        bind_error(b, EXEC_NOMEM, x->off, "out of memory");
        return NULL;
      }
      if (s->n_aggs) memcpy(na, s->aggs, (size_t)s->n_aggs * sizeof *na);
      s->aggs = na;
      b->agg_cap = nc;
    }
    plan_agg *g = &s->aggs[s->n_aggs];
    g->func = id;
    g->star = x->star;
    g->distinct = x->distinct;
    g->arg = arg;
    g->arg2 = arg2;
    g->type = rt;
    g->frac = frac;
    g->desc = x->within_desc;
    char *t = sql_print_expr(x, 0);
    if (t) {
      g->text = plan_arena_strndup(b->A, t, strlen(t));
      free(t);
    }
    if (!g->text) {
      bind_error(b, EXEC_NOMEM, x->off, "out of memory");
      return NULL;
    }
    slot = s->n_aggs++;
  }
  plan_expr *e = bind_node(b, PX_AGG, x->off, 0);
  if (!e) return NULL;
  e->func = slot;
  e->type = rt;
  e->nullable = id != EXEC_AGG_COUNT && id != EXEC_AGG_COUNT_STAR;
  return e;
}

/* CURRENT_TIME (SQL standard, with or without parentheses): the time of day of NOW(),
** bound as CAST(NOW() AS TIME) so it shares NOW()'s per-statement clock and its
** "not deterministic" treatment (never folded, refused in an index key). */
static plan_expr *bind_current_time(binder *b, const sql_expr *x) {
  int n = x->list ? x->list->n : 0;
  if (n != 0 || x->star || x->distinct) {
    bind_error(b, EXEC_ERROR, x->off, "CURRENT_TIME takes no arguments");
    return NULL;
  }
  int id;
  cat_type rt;
  char m[256];
  if (cat_func_lookup("NOW", 0, NULL, &id, &rt, m, sizeof m) != EXEC_OK) {
    bind_error(b, EXEC_ERROR, x->off, "%s", m);
    return NULL;
  }
  plan_expr *now = bind_node(b, PX_FUNC, x->off, 0);
  plan_expr *e = now ? bind_node(b, PX_CAST, x->off, 1) : NULL;
  if (!e) return NULL;
  now->func = id;
  now->type = rt;
  e->args[0] = now;
  e->type = cat_type_of(CAT_T_TIME);
  return e;
}

plan_expr *bind_func(binder *b, const sql_expr *x) {
  if (strcasecmp(x->text, "CURRENT_TIME") == 0) return bind_current_time(b, x);
  if (strcasecmp(x->text, "ANY") == 0) { /* x = ANY(a) is bound by bind_binary */
    bind_error(b, EXEC_ERROR, x->off, "ANY(array) is allowed only on the right of a comparison "
               "(x = ANY(a), x < ANY(a), ...) with one argument");
    return NULL;
  }
  if (cat_func_is_aggregate(x->text)) return bind_agg(b, x);
  if (x->within) {
    bind_error(b, EXEC_ERROR, x->off, "%s is not an ordered-set aggregate: WITHIN GROUP not "
               "allowed", x->text);
    return NULL;
  }
  if (x->star || x->distinct) {
    bind_error(b, EXEC_ERROR, x->off, "%s is not an aggregate: %s not allowed", x->text,
               x->star ? "*" : "DISTINCT");
    return NULL;
  }
  int n = x->list ? x->list->n : 0;
  plan_expr *e = bind_node(b, PX_FUNC, x->off, (uint32_t)n);
  if (!e) return NULL;
  cat_type at[64];
  if (n > 64) {
    bind_error(b, EXEC_ERROR, x->off, "too many arguments to %s", x->text);
    return NULL;
  }
  for (int i = 0; i < n; i++) {
    e->args[i] = bind_expr(b, x->list->a[i]);
    if (!e->args[i]) return NULL;
    at[i] = e->args[i]->type;
  }
  int id;
  cat_type rt;
  char m[256];
  if (strcasecmp(x->text, "ARRAY") == 0 && n > 0) { /* ARRAY[...]: point at the odd element */
    int bad = 0;
    if (cat_array_elem_type(n, at, &rt, &bad, m, sizeof m) != EXEC_OK) {
      bind_error(b, EXEC_ERROR, x->list->a[bad]->off, "%s", m);
      return NULL;
    }
  }
  if (cat_func_lookup(x->text, n, at, &id, &rt, m, sizeof m) != EXEC_OK) {
    bind_error(b, EXEC_ERROR, x->off, "%s", m);
    return NULL;
  }
  for (int i = 0; i < n; i++) {
    plan_expr *a = e->args[i];
    if (a->kind == PX_PARAM && a->type.id == 0) {
      cat_type h = cat_func_arg_hint(id, n, at, i);
      if (h.id) {
        a->type = h;
        if (b->bound->param_types && a->param >= 1 && a->param <= b->bound->n_params &&
            b->bound->param_types[a->param - 1].id == 0)
          b->bound->param_types[a->param - 1] = h;
      }
    }
    e->nullable |= a->nullable;
  }
  e->func = id;
  e->type = rt;
  if (id == EXEC_F_COALESCE) {
    e->nullable = true;
    for (int i = 0; i < n; i++) e->nullable &= e->args[i]->nullable;
  }
  return bind_fold(b, e);
}

int plan_func_of_op(int sql_op) {
  switch (sql_op) {
    case SQL_OP_ADD: return EXEC_F_ADD;
    case SQL_OP_SUB: return EXEC_F_SUB;
    case SQL_OP_MUL: return EXEC_F_MUL;
    case SQL_OP_DIV: return EXEC_F_DIV;
    case SQL_OP_MOD: return EXEC_F_MOD;
    case SQL_OP_CONCAT: return EXEC_F_CONCAT;
    case SQL_OP_NEG: return EXEC_F_NEG;
    default: return 0;
  }
}
