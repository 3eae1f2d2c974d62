/*
** planner/bind_apply.c: correlated subqueries that run once per outer row (issue 16), for
** every form the decorrelation of planner/bind_correlated.c does not take: a correlation
** that is not an equality (`u.v > t.v`), outer columns outside the subquery's WHERE (its
** select list, a UNION branch, a derived table), GROUP BY, HAVING, LIMIT, DISTINCT or an
** aggregate inside an expression in the subquery, a row value (a, b) IN over it, a correlated
** subquery under OR, CASE or in the select list of a DELETE's or UPSERT's query. SQLite runs
** every correlated subquery this way; Phoenix refuses most of these forms.
**
** While a subquery of an expression is bound, its binder carries a collector (bind_corr):
** a qualified column `q.c` whose q names no FROM item of the subquery but a table of a query
** around it is bound in that query (so its slot is the outer row's) and read in the subquery
** as a parameter node; the queries nested in the subquery (set operation branches, derived
** tables) share the collector. When the subquery named none, it is uncorrelated and runs once
** (planner/bind_subquery.c); otherwise it becomes a plan_apply and the expression a PX_APPLY
** node whose arguments are the outer values: exec/engine_apply.c runs the subquery for each
** outer row whose values differ from the previous row's, with them bound (so `u.k = t.k`
** still plans as a point or range read of u), and keeps the result otherwise.
**
** Not here: the decorrelated forms (planner/bind_correlated.c), running (exec/engine_apply.c).
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalog/status.h"
#include "planner/plan_bind.h"

#define MAX_OUTER 32 /* outer values one correlated subquery may read */

/* q names a FROM item of b's query, or a family of one of its tables (`F.C`). */
static bool owns(const binder *b, const char *q) {
  if (bind_scope_names(b, q)) return true;
  for (int i = 0; i < b->n_scope; i++)
    if (!b->scope[i].sub && cat_find_family(b->scope[i].table, q) >= 0) return true;
  return !b->n_scope && b->table && cat_find_family(b->table, q) >= 0;
}

plan_expr *bind_corr_column(binder *b, const sql_expr *x, bool *handled) {
  *handled = false;
  if (!b->corr) return NULL;
  /* `q.c`: q names no FROM item of the subquery but one of a query around it; `c`: no FROM
     item of the subquery has the column, one of a query around it has (SQL's scoping: the
     nearest query that has it) */
  bool plain = x->nname == 1;
  const char *name = x->name[0];
  if (plain ? bind_scope_has_column(b, name) : owns(b, name)) return NULL;
  bool outside = false;
  for (const bind_corr *c = b->corr; c && !outside; c = c->outer->corr)
    outside = plain ? bind_scope_has_column(c->outer, name) : owns(c->outer, name);
  if (!outside) return NULL;
  *handled = true;
  bind_corr *c = b->corr;
  plan_expr *oe = bind_expr(c->outer, x); /* the outer query's column (or its parameter) */
  if (!oe) {
    b->rc = c->outer->rc;
    return NULL;
  }
  if (c->n == MAX_OUTER) {
    bind_error(b, EXEC_TOOBIG, x->off, "a correlated subquery may name at most %d columns of "
               "the queries around it", MAX_OUTER);
    return NULL;
  }
  if (c->n == c->cap) {
    int nc = c->cap ? c->cap * 2 : 4;
    plan_expr **o = plan_arena_alloc(b->A, (size_t)nc * sizeof *o);
    plan_expr **d = plan_arena_alloc(b->A, (size_t)nc * sizeof *d);
    if (!o || !d) {
      bind_error(b, EXEC_NOMEM, x->off, "out of memory");
      return NULL;
    }
    if (c->n) {
      memcpy(o, c->oexpr, (size_t)c->n * sizeof *o);
      memcpy(d, c->node, (size_t)c->n * sizeof *d);
    }
    c->oexpr = o;
    c->node = d;
    c->cap = nc;
  }
  char full[300];
  full[0] = 0;
  for (int i = 0; i < x->nname; i++) {
    size_t l = strlen(full);
    snprintf(full + l, sizeof full - l, "%s%s", i ? "." : "", x->name[i]);
  }
  plan_expr *e = bind_node(b, PX_PARAM, x->off, 0);
  char *text = e ? plan_arena_strndup(b->A, full, strlen(full)) : NULL;
  if (!text) {
    if (!b->rc) bind_error(b, EXEC_NOMEM, x->off, "out of memory");
    return NULL;
  }
  e->type = oe->type;
  e->nullable = true;
  e->func = -1; /* EXPLAIN prints its text (value), as a sequence's */
  e->value = cat_v_str(CAT_T_VARCHAR, text, strlen(text));
  c->oexpr[c->n] = oe;
  c->node[c->n++] = e;
  return e;
}

int bind_apply_query(binder *b, const sql_select *q, plan_select *s, bind_corr *c) {
  memset(c, 0, sizeof *c);
  c->outer = b;
  binder nb = bind_nested(b);
  nb.corr = c;
  if (bind_query(&nb, q, s)) return b->rc = nb.rc;
  return EXEC_OK;
}

plan_expr *bind_apply(binder *b, const sql_expr *x, plan_select *s, const bind_corr *c,
                      const cat_type *ct) {
  plan_bound *pb = b->bound;
  plan_apply *v = plan_arena_alloc(b->A, (size_t)(pb->n_applies + 1) * sizeof *v);
  plan_expr *e = v ? bind_node(b, PX_APPLY, x->off, (uint32_t)c->n) : NULL;
  size_t tl = 0;
  for (int i = 0; i < c->n; i++) tl += c->node[i]->value.u.s.len + 2;
  char *text = e ? plan_arena_alloc(b->A, tl + 1) : NULL;
  if (!text) {
    if (!b->rc) bind_error(b, EXEC_NOMEM, x->off, "out of memory");
    return NULL;
  }
  text[0] = 0;
  for (int i = 0, o = 0; i < c->n; i++) {
    const cat_value *t = &c->node[i]->value;
    o += sprintf(text + o, "%s%.*s", i ? ", " : "", (int)t->u.s.len, (const char *)t->u.s.p);
  }
  if (pb->n_applies) memcpy(v, pb->applies, (size_t)pb->n_applies * sizeof *v);
  plan_apply *a = &v[pb->n_applies];
  memset(a, 0, sizeof *a);
  a->kind = x->kind;
  a->sel = s;
  a->n_outer = c->n;
  a->nodes = c->node;
  a->outer_text = text;
  a->off = x->off;
  a->node = e;
  pb->applies = v;
  e->func = pb->n_applies++;
  for (int i = 0; i < c->n; i++) e->args[i] = c->oexpr[i];
  if (x->kind == SQL_E_SUBQUERY) {
    e->type = s->proj[0]->type;
    e->nullable = true;
    return e;
  }
  if (x->kind == SQL_E_EXISTS) {
    e->type = cat_type_of(CAT_T_BOOLEAN);
    return e;
  }
  e->type = cat_type_of(CAT_T_VARBINARY); /* x [NOT] IN_SET(x, the run's rows as a set) */
  return bind_in_values(b, x, e, ct, s->n_out);
}

int bind_apply_finish(binder *b) {
  plan_bound *pb = b->bound;
  if (!pb->n_applies) return EXEC_OK;
  pb->apply_env = pb->n_params + pb->n_subs + pb->n_seqs + 1;
  int next = pb->apply_env + 1;
  for (int k = 0; k < pb->n_applies; k++) {
    plan_apply *a = &pb->applies[k];
    a->param = next;
    a->node->param = pb->apply_env;
    for (int i = 0; i < a->n_outer; i++) a->nodes[i]->param = next + i;
    next += a->n_outer;
  }
  return EXEC_OK;
}
