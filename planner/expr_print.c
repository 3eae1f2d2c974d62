/*
** planner/expr_print.c: a bound expression back to SQL text (plan_expr_print), and the
** growing text buffer EXPLAIN writes its lines with (plan_pbuf, planner/explain_int.h):
** constants as literals of their type, columns by name, parameters as ?n, a subquery's
** value as (SUBQUERY n), a correlated one as (CORRELATED SUBQUERY n), aggregates by their
** call text, operators with parentheses where precedence needs them.
** Not here: the plan's lines (planner/explain.c).
*/
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalog/func_sig.h"
#include "catalog/value.h"
#include "planner/explain_int.h"
#include "planner/plan_select.h"
#include "sql/ast.h"

void plan_pbuf_put(plan_pbuf *b, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char *dst = b->n < b->cap ? b->p + b->n : NULL;
  size_t room = b->n < b->cap ? b->cap - b->n : 0;
  char tmp[1];
  int k = vsnprintf(dst ? dst : tmp, dst ? room : 0, fmt, ap);
  va_end(ap);
  if (k > 0) b->n += (size_t)k;
}

static const char *op_text(int op) {
  static const char *const t[] = {"?", "-", "+", "NOT ", "*", "/", "%", "+", "-", "||",
                                  "=", "<>", "<", "<=", ">", ">=", "AND", "OR"};
  return op > 0 && op < (int)(sizeof t / sizeof t[0]) ? t[op] : "?";
}


static void pr_value(plan_pbuf *b, const cat_value *v) {
  if (v->is_null) {
    plan_pbuf_put(b, "NULL");
    return;
  }
  char t[128];
  cat_text_format(v, t, sizeof t);
  int id = v->type.id;
  if (cat_type_is_string(id)) {
    plan_pbuf_put(b, "'");
    for (uint32_t i = 0; i < v->u.s.len && i < 200; i++) {
      char ch = (char)v->u.s.p[i];
      plan_pbuf_put(b, ch == '\'' ? "''" : "%c", ch);
    }
    plan_pbuf_put(b, "'");
  } else if (id == CAT_T_DATE) plan_pbuf_put(b, "DATE '%s'", t);
  else if (id == CAT_T_TIME) plan_pbuf_put(b, "TIME '%s'", t);
  else if (id == CAT_T_TIMESTAMP) plan_pbuf_put(b, "TIMESTAMP '%s'", t);
  else if (id == CAT_T_VARBINARY) plan_pbuf_put(b, "X'...'");
  else if (id == CAT_T_ARRAY) plan_pbuf_put(b, "ARRAY%s", t);
  else if (id == CAT_T_DOUBLE || id == CAT_T_FLOAT) {
    if (isnan(v->u.d) || isinf(v->u.d)) {
      plan_pbuf_put(b, "%s", t);
      return;
    }
    snprintf(t, sizeof t, "%.15g", v->u.d);
    if (strtod(t, NULL) != v->u.d) snprintf(t, sizeof t, "%.17g", v->u.d);
    plan_pbuf_put(b, "%s%s", t, strpbrk(t, ".e") ? "" : ".0");
  } else plan_pbuf_put(b, "%s", t);
}

static void pr_list(plan_pbuf *b, const plan_expr *e, uint32_t from, const char *const *names) {
  for (uint32_t i = from; i < e->n_args; i++) {
    if (i > from) plan_pbuf_put(b, ", ");
    plan_pbuf_expr(b, e->args[i], names, false);
  }
}

void plan_pbuf_expr(plan_pbuf *b, const plan_expr *e, const char *const *names, bool paren) {
  switch (e->kind) {
    case PX_CONST: pr_value(b, &e->value); return;
    case PX_COLUMN:
      if (names && names[e->column]) plan_pbuf_put(b, "%s", names[e->column]);
      else plan_pbuf_put(b, "$%d", e->column);
      return;
    case PX_PARAM:
      if (e->func > 0) plan_pbuf_put(b, "(SUBQUERY %d)", e->func); /* a subquery run once */
      else if (e->func < 0) plan_pbuf_put(b, "%.*s", (int)e->value.u.s.len, (const char *)e->value.u.s.p);
      else plan_pbuf_put(b, "?%d", e->param);
      return;
    case PX_AGG:
      if (b->sel && e->func >= 0 && e->func < b->sel->n_aggs) plan_pbuf_put(b, "%s", b->sel->aggs[e->func].text);
      else plan_pbuf_put(b, "AGG%d", e->func);
      return;
    case PX_UNARY:
      plan_pbuf_put(b, "%s", op_text(e->op));
      plan_pbuf_expr(b, e->args[0], names, true);
      return;
    case PX_BINARY:
      if (paren) plan_pbuf_put(b, "(");
      plan_pbuf_expr(b, e->args[0], names, true);
      plan_pbuf_put(b, " %s ", op_text(e->op));
      plan_pbuf_expr(b, e->args[1], names, true);
      if (paren) plan_pbuf_put(b, ")");
      return;
    case PX_IN:
      plan_pbuf_expr(b, e->args[0], names, true);
      plan_pbuf_put(b, e->negated ? " NOT IN (" : " IN (");
      pr_list(b, e, 1, names);
      plan_pbuf_put(b, ")");
      return;
    case PX_BETWEEN:
      plan_pbuf_expr(b, e->args[0], names, true);
      plan_pbuf_put(b, e->negated ? " NOT BETWEEN " : " BETWEEN ");
      plan_pbuf_expr(b, e->args[1], names, true);
      plan_pbuf_put(b, " AND ");
      plan_pbuf_expr(b, e->args[2], names, true);
      return;
    case PX_LIKE:
      plan_pbuf_expr(b, e->args[0], names, true);
      plan_pbuf_put(b, "%s%s ", e->negated ? " NOT" : "", e->ilike ? " ILIKE" : " LIKE");
      plan_pbuf_expr(b, e->args[1], names, true);
      if (e->n_args > 2) {
        plan_pbuf_put(b, " ESCAPE ");
        plan_pbuf_expr(b, e->args[2], names, true);
      }
      return;
    case PX_ISNULL:
      plan_pbuf_expr(b, e->args[0], names, true);
      plan_pbuf_put(b, e->negated ? " IS NOT NULL" : " IS NULL");
      return;
    case PX_CASE: {
      uint32_t k = 0;
      plan_pbuf_put(b, "CASE");
      if (e->has_operand) {
        plan_pbuf_put(b, " ");
        plan_pbuf_expr(b, e->args[k++], names, true);
      }
      uint32_t end = e->n_args - (e->has_else ? 1 : 0);
      for (; k + 1 < end; k += 2) {
        plan_pbuf_put(b, " WHEN ");
        plan_pbuf_expr(b, e->args[k], names, false);
        plan_pbuf_put(b, " THEN ");
        plan_pbuf_expr(b, e->args[k + 1], names, false);
      }
      if (e->has_else) {
        plan_pbuf_put(b, " ELSE ");
        plan_pbuf_expr(b, e->args[e->n_args - 1], names, false);
      }
      plan_pbuf_put(b, " END");
      return;
    }
    case PX_CAST: {
      char t[40];
      plan_pbuf_put(b, "CAST(");
      plan_pbuf_expr(b, e->args[0], names, false);
      plan_pbuf_put(b, " AS %s)", cat_type_format(&e->type, t, sizeof t));
      return;
    }
    case PX_FUNC: {
      plan_expr part = *e; /* SCALAR_ONE without its message, IN_SET's row without its set */
      part.n_args = e->n_args - (e->func == EXEC_F_SCALAR_ONE || e->func == EXEC_F_IN_SET);
      if (e->func == EXEC_F_ANY && e->n_args == 3 && e->args[2]->kind == PX_CONST) {
        plan_pbuf_expr(b, e->args[0], names, true); /* x op ANY(a), as written */
        plan_pbuf_put(b, " %s ANY(", op_text((int)e->args[2]->value.u.i));
        plan_pbuf_expr(b, e->args[1], names, false);
        plan_pbuf_put(b, ")");
        return;
      }
      if (e->func == EXEC_F_IN_SET) { /* (x, ...) IN (SUBQUERY n) */
        plan_pbuf_put(b, "%s", part.n_args > 1 ? "(" : "");
        pr_list(b, &part, 0, names);
        plan_pbuf_put(b, "%s IN ", part.n_args > 1 ? ")" : "");
        plan_pbuf_expr(b, e->args[part.n_args], names, false);
        return;
      }
      plan_pbuf_put(b, "%s(", cat_func_name(e->func));
      pr_list(b, &part, 0, names);
      plan_pbuf_put(b, ")");
      return;
    }
    case PX_ROW:
      plan_pbuf_put(b, "(");
      pr_list(b, e, 0, names);
      plan_pbuf_put(b, ")");
      return;
    case PX_APPLY: plan_pbuf_put(b, "(CORRELATED SUBQUERY %d)", e->func + 1); return;
    default: plan_pbuf_put(b, "?"); return;
  }
}

size_t plan_expr_print(const plan_expr *e, const char *const *names, char *buf, size_t cap) {
  plan_pbuf b = {buf, cap, 0, NULL};
  if (cap) buf[0] = 0;
  plan_pbuf_expr(&b, e, names, false);
  if (cap) buf[b.n < cap ? b.n : cap - 1] = 0;
  return b.n;
}

