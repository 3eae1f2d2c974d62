/*
** planner/bind_correlated.c: correlated subqueries of a WHERE (issue 16): `[NOT] EXISTS
** (SELECT ... WHERE s.c = t.k AND ...)` and `x IN (SELECT c ... WHERE s.j = t.j AND ...)`,
** whose queries name a table of the outer query, are decorrelated into semi / anti joins
** rather than run once per outer row. A column of the outer query is recognised by its
** qualifier: an outer table or alias that no FROM item of the subquery hides (write t.k,
** not k). Each ANDed term of the subquery's WHERE that names the outer query must be an
** equality between an expression of the outer query's columns and one of the subquery's;
** those terms leave the subquery, which instead gives the inner sides as its columns (after
** IN's column), and become the join's keys: the outer sides (and IN's x) must equal them.
** EXISTS and IN are a semi join, NOT EXISTS an anti join that passes an outer row when no
** subquery row matches (a NULL key matches nothing, so it passes).
**
** A correlated x NOT IN (SELECT c ...) ANDed in a WHERE is that anti join on x = c and the
** correlation, plus SQL's NULL rules per correlation group: a LEFT JOIN of the subquery's
** COUNT(*) and COUNT(c) grouped by its correlation columns, and a WHERE term that passes a
** row when its group is empty, or when x is not NULL and the group holds no NULL
** (bind_correlated_not_in).
**
** A correlated scalar subquery in a SELECT's select list, WHERE or ORDER BY becomes a LEFT
** JOIN of the outer query with the subquery grouped by its correlation columns
** (bind_correlated_scalar): of one aggregate, the group's aggregate; of any other column v,
** the group's MIN(v) checked by its COUNT(*): a group of two rows or more fails the
** statement at run time, as the uncorrelated scalar subquery does.
**
** bind_decorrelatable says which subqueries these rewrites take; every other correlated
** subquery (a correlation that is not such an equality, GROUP BY, HAVING, aggregates in
** EXISTS / IN / NOT IN, LIMIT / OFFSET, set operations, DISTINCT in a scalar subquery, a
** correlated subquery under OR, in a DELETE, nested subqueries naming the outer query) runs
** once per outer row instead (planner/bind_apply.c).
**
** Not here: uncorrelated subqueries and the semi joins' FROM items (planner/bind_subquery.c),
** running them (exec/op_hashjoin.c).
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "catalog/func_id.h"
#include "catalog/status.h"
#include "planner/plan_bind.h"

#define MAX_TERMS 64 /* ANDed terms of a correlated subquery's WHERE */

/* q names the FROM item known as name (its alias, else tname or tname's last part). */
bool bind_names_item(const char *q, const char *alias, const char *tname) {
  if (alias) return strcmp(q, alias) == 0;
  if (!tname) return false;
  if (strcmp(q, tname) == 0) return true;
  const char *dot = strrchr(tname, '.');
  return dot && strcmp(q, dot + 1) == 0;
}

/* q is a FROM item of sub. */
static bool inner_name(const sql_select *sub, const char *q) {
  if ((sub->table || sub->alias) && bind_names_item(q, sub->alias, sub->table)) return true;
  for (int i = 0; sub->joins && i < sub->joins->n; i++)
    if (bind_names_item(q, sub->joins->a[i].alias, sub->joins->a[i].table)) return true;
  return false;
}

bool bind_scope_names(const binder *b, const char *q) {
  for (int i = 0; i < b->n_scope; i++) {
    const plan_from *f = &b->scope[i];
    if (f->name[0] && bind_names_item(q, f->name != f->table->name ? f->name : NULL, f->table->name))
      return true;
  }
  return !b->n_scope && b->table && bind_names_item(q, b->alias, b->table->name);
}

bool bind_scope_has_column(const binder *b, const char *col) {
  for (int i = 0; i < b->n_scope; i++)
    if (cat_find_column(b->scope[i].table, col) >= 0) return true;
  return !b->n_scope && b->table && cat_find_column(b->table, col) >= 0;
}

/* Whether an unqualified column col may be one of sub's own FROM items': yes unless each is
** a catalog table without it (a derived table, a view, a WITH item or a table with dynamic
** columns may have it: the name then stays the subquery's, as the binder would find it). */
static bool item_lacks(const binder *b, const char *table, const sql_select *derived,
                       const sql_colname_list *dyn, const char *col) {
  if (derived || dyn || !table) return false;
  const cat_table *t = cat_find_table(b->cat, table);
  return t && cat_find_column(t, col) < 0;
}
static bool inner_may_have(const binder *b, const sql_select *sub, const char *col) {
  if (!sub->table && !sub->sub) return false; /* no FROM */
  if (!item_lacks(b, sub->table, sub->sub, sub->dyn, col)) return true;
  for (int i = 0; sub->joins && i < sub->joins->n; i++) {
    const sql_join *j = &sub->joins->a[i];
    if (!item_lacks(b, j->table, j->sub, j->dyn, col)) return true;
  }
  return false;
}

/* An unqualified column col of subquery sub that is the outer query's: sub's FROM lacks it,
** b's has it (planner/bind_apply.c bind_corr_column binds it so). */
static bool outer_plain(const binder *b, const sql_select *sub, const char *col) {
  return !inner_may_have(b, sub, col) && bind_scope_has_column(b, col);
}

/* Column references of e: *out those of the outer query, *in the others (nested subqueries
** count as others). */
static void refs(const binder *b, const sql_select *sub, const sql_expr *e, int *out, int *in) {
  if (!e) return;
  if (e->kind == SQL_E_COLUMN) {
    if (e->nname >= 2 ? bind_scope_names(b, e->name[0]) && !inner_name(sub, e->name[0])
                      : outer_plain(b, sub, e->name[0]))
      (*out)++;
    else (*in)++;
    return;
  }
  if (e->sub) (*in)++;
  refs(b, sub, e->left, out, in);
  refs(b, sub, e->right, out, in);
  refs(b, sub, e->third, out, in);
  for (int i = 0; e->list && i < e->list->n; i++) refs(b, sub, e->list->a[i], out, in);
}

bool bind_is_correlated(const binder *b, const sql_select *sub) {
  if (sub->setop || !sub->where || (!b->n_scope && !b->table)) return false;
  int out = 0, in = 0;
  refs(b, sub, sub->where, &out, &in);
  return out > 0;
}

/* The ANDed terms of e into t (at most cap); their count, or -1 past cap. */
static int split(const sql_expr *e, const sql_expr **t, int n, int cap) {
  if (n < 0) return n;
  if (e->kind == SQL_E_BINARY && e->op == SQL_OP_AND)
    return split(e->right, t, split(e->left, t, n, cap), cap);
  if (n >= cap) return -1;
  t[n] = e;
  return n + 1;
}

/* An aggregate call anywhere in e. */
static bool has_aggregate(const sql_expr *e) {
  if (!e) return false;
  if (e->kind == SQL_E_FUNC && e->text && cat_func_is_aggregate(e->text)) return true;
  if (has_aggregate(e->left) || has_aggregate(e->right) || has_aggregate(e->third)) return true;
  for (int i = 0; e->list && i < e->list->n; i++)
    if (has_aggregate(e->list->a[i])) return true;
  return false;
}

/* Term t of sub's WHERE: 0 when it names no outer column; 1 when it is an equality between
** an expression of outer columns only (*o) and one of the subquery's only (*in); -1 when it
** names the outer query otherwise. */
static int pair_of(const binder *b, const sql_select *sub, const sql_expr *t,
                   const sql_expr **o, const sql_expr **in) {
  int lo = 0, li = 0, ro = 0, ri = 0;
  refs(b, sub, t, &lo, &li);
  if (!lo) return 0;
  if (t->kind != SQL_E_BINARY || t->op != SQL_OP_EQ) return -1;
  lo = li = 0;
  refs(b, sub, t->left, &lo, &li);
  refs(b, sub, t->right, &ro, &ri);
  if (lo && !li && !ro) {
    *o = t->left;
    *in = t->right;
    return 1;
  }
  if (ro && !ri && !lo) {
    *o = t->right;
    *in = t->left;
    return 1;
  }
  return -1;
}

static bool mentions(const binder *b, const sql_select *q);

/* e or a subquery inside it names a table of b's scope (a qualified column). */
static bool expr_mentions(const binder *b, const sql_select *own, const sql_expr *e) {
  if (!e) return false;
  if (e->kind == SQL_E_COLUMN)
    return e->nname >= 2 ? bind_scope_names(b, e->name[0]) : outer_plain(b, own, e->name[0]);
  if (e->sub && mentions(b, e->sub)) return true;
  if (expr_mentions(b, own, e->left) || expr_mentions(b, own, e->right) ||
      expr_mentions(b, own, e->third))
    return true;
  for (int i = 0; e->list && i < e->list->n; i++)
    if (expr_mentions(b, own, e->list->a[i])) return true;
  return false;
}

/* Some part of query q names a table of b's scope (whatever q's own FROM hides: used to keep
** a subquery whose nested subqueries name the outer query from being decorrelated). */
static bool mentions(const binder *b, const sql_select *q) {
  if (!q) return false;
  if (mentions(b, q->left) || mentions(b, q->right) || mentions(b, q->sub)) return true;
  for (int i = 0; q->cols && i < q->cols->n; i++)
    if (expr_mentions(b, q, q->cols->a[i].expr)) return true;
  for (int i = 0; q->group && i < q->group->n; i++)
    if (expr_mentions(b, q, q->group->a[i])) return true;
  for (int i = 0; q->joins && i < q->joins->n; i++)
    if (expr_mentions(b, q, q->joins->a[i].on) || mentions(b, q->joins->a[i].sub)) return true;
  return expr_mentions(b, q, q->where) || expr_mentions(b, q, q->having);
}

/* A subquery nested in e names a table of b's scope. */
static bool nested_mentions(const binder *b, const sql_expr *e) {
  if (!e) return false;
  if (e->sub && mentions(b, e->sub)) return true;
  if (nested_mentions(b, e->left) || nested_mentions(b, e->right) || nested_mentions(b, e->third))
    return true;
  for (int i = 0; e->list && i < e->list->n; i++)
    if (nested_mentions(b, e->list->a[i])) return true;
  return false;
}

/* Outer column references in the parts of sub other than its WHERE. */
static int refs_outside_where(const binder *b, const sql_select *sub) {
  int out = 0, in = 0;
  for (int i = 0; sub->cols && i < sub->cols->n; i++) refs(b, sub, sub->cols->a[i].expr, &out, &in);
  for (int i = 0; sub->group && i < sub->group->n; i++) refs(b, sub, sub->group->a[i], &out, &in);
  refs(b, sub, sub->having, &out, &in);
  for (int i = 0; sub->joins && i < sub->joins->n; i++) refs(b, sub, sub->joins->a[i].on, &out, &in);
  return out;
}

bool bind_decorrelatable(const binder *b, const sql_expr *x, bool where_term) {
  const sql_select *sub = x->sub;
  if (!bind_is_correlated(b, sub) || refs_outside_where(b, sub)) return false;
  if (sub->sub || nested_mentions(b, sub->where) || nested_mentions(b, sub->having))
    return false; /* a derived table or nested subquery naming the outer query */
  for (int i = 0; sub->cols && i < sub->cols->n; i++)
    if (nested_mentions(b, sub->cols->a[i].expr)) return false;
  for (int i = 0; sub->joins && i < sub->joins->n; i++)
    if (sub->joins->a[i].sub || nested_mentions(b, sub->joins->a[i].on)) return false;
  const sql_expr *t[MAX_TERMS];
  int nt = split(sub->where, t, 0, MAX_TERMS);
  if (nt < 0) return false;
  for (int i = 0; i < nt; i++) { /* each term naming the outer query: s.c = t.k */
    const sql_expr *o, *in;
    if (pair_of(b, sub, t[i], &o, &in) < 0) return false;
  }
  if (sub->setop || sub->group || sub->having || sub->limit || sub->offset) return false;
  if (x->kind == SQL_E_SUBQUERY) { /* bind_correlated_scalar's shapes, where it may join */
    const plan_select *s = b->sel;
    const sql_expr *v = sub->cols && sub->cols->n == 1 ? sub->cols->a[0].expr : NULL;
    if (!s || !(s->n_from || s->table) || !v) return false;
    bool is_agg = v->kind == SQL_E_FUNC && v->text && cat_func_is_aggregate(v->text);
    return is_agg || (!has_aggregate(v) && !sub->distinct);
  }
  if (!where_term) return false;
  if (x->kind == SQL_E_IN && x->left->kind == SQL_E_ROW) return false;
  for (int i = 0; sub->cols && i < sub->cols->n; i++)
    if (has_aggregate(sub->cols->a[i].expr)) return false;
  return x->kind != SQL_E_IN || (sub->cols->n == 1 && sub->cols->a[0].expr);
}

/* The ANDed terms of sub's WHERE: keep[0..*nk) those that do not name the outer query,
** and for each correlation equality its outer side outer[i] and inner side inner[i]
** (0..*np). Anything else that names the outer query is refused. */
static int correlation(binder *b, const sql_select *sub, const sql_expr **keep, int *nk,
                       const sql_expr **outer, const sql_expr **inner, int *np) {
  const sql_expr *t[MAX_TERMS];
  int nt = split(sub->where, t, 0, MAX_TERMS);
  *nk = *np = 0;
  if (nt < 0)
    return bind_error(b, EXEC_TOOBIG, sub->where->off, "a correlated subquery's WHERE of more "
                      "than %d ANDed terms", MAX_TERMS);
  for (int i = 0; i < nt; i++) {
    int k = pair_of(b, sub, t[i], &outer[*np], &inner[*np]);
    if (k == 0) keep[(*nk)++] = t[i];
    else if (k > 0) (*np)++;
    else /* bind_decorrelatable, which callers ask first, refuses such a subquery */
      return bind_error(b, EXEC_ERROR, t[i]->off, "a correlated subquery may use the outer "
                        "query's columns only in equalities ANDed in its WHERE (s.c = t.k)");
  }
  return EXEC_OK;
}

/* q's WHERE made of terms[0..n) ANDed under new nodes from ands (n - 1 of them), or NULL. */
static sql_expr *and_terms(const sql_expr **terms, int n, sql_expr *ands) {
  sql_expr *w = n ? (sql_expr *)terms[0] : NULL;
  for (int i = 1; i < n; i++) { /* borrowed terms under new AND nodes */
    sql_expr *a = &ands[i - 1];
    a->kind = SQL_E_BINARY;
    a->op = SQL_OP_AND;
    a->off = w->off;
    a->left = w;
    a->right = (sql_expr *)terms[i];
    w = a;
  }
  return w;
}

int bind_correlated(binder *b, const sql_expr *w, bool negated) {
  const sql_select *sub = w->sub;
  const sql_expr *keep[MAX_TERMS], *outer[MAX_TERMS], *inner[MAX_TERMS];
  int nk, np;
  if (correlation(b, sub, keep, &nk, outer, inner, &np)) return b->rc;
  bool in = w->kind == SQL_E_IN;
  int n = np + (in ? 1 : 0);
  /* the subquery without the correlation terms, giving IN's column and the inner sides */
  sql_select q2 = *sub;
  sql_result_list cols;
  sql_result_col *ca = calloc((size_t)n, sizeof *ca);
  sql_expr *ands = nk > 1 ? calloc((size_t)(nk - 1), sizeof *ands) : NULL;
  if (!ca || (nk > 1 && !ands)) {
    free(ca);
    free(ands);
    return bind_error(b, EXEC_NOMEM, w->off, "out of memory");
  }
  for (int i = 0; i < n; i++) {
    ca[i].expr = in && i == 0 ? sub->cols->a[0].expr : (sql_expr *)inner[i - (in ? 1 : 0)];
    ca[i].off = ca[i].expr->off;
  }
  cols.n = cols.cap = n;
  cols.a = ca;
  q2.cols = &cols;
  q2.distinct = false;
  q2.order = NULL;
  q2.where = and_terms(keep, nk, ands);
  binder nb = bind_nested(b);
  plan_select *s = plan_arena_alloc(b->A, sizeof *s);
  int rc = s ? bind_query(&nb, &q2, s) : bind_error(b, EXEC_NOMEM, w->off, "out of memory");
  free(ca);
  free(ands);
  if (rc) return s ? (b->rc = nb.rc) : rc;
  plan_expr **x = plan_arena_alloc(b->A, (size_t)n * sizeof *x);
  if (!x) return bind_error(b, EXEC_NOMEM, w->off, "out of memory");
  for (int i = 0; i < n; i++) {
    x[i] = bind_expr(b, in && i == 0 ? w->left : outer[i - (in ? 1 : 0)]);
    plan_expr *c = x[i] ? bind_column_node(b, i, s->proj[i]->type, true, w->off) : NULL;
    if (!c || bind_compare_pair(b, x[i], c, x[i]->off)) return b->rc;
  }
  return bind_add_semi(b, x, n, negated ? SQL_JOIN_ANTI_EXISTS : SQL_JOIN_SEMI, s, w->off);
}

/* The LEFT JOIN of a correlated subquery sub grouped by its correlation columns: (SELECT
** s.c, aggs... FROM ... WHERE (its other terms) GROUP BY s.c) recorded in b->semis, on t.k =
** s.c (the outer sides of the correlation). One group per key, so each outer row meets at
** most one; an outer row no group matches reads NULL in every column. Returns the slot of
** aggs[0] in the joined row (the others follow it) with their types in types[0..na), or -1
** with b->rc set. */
bool bind_correlated_place_ok(binder *b, uint32_t off) {
  const plan_select *s = b->sel;
  if (s && (s->n_from || s->table)) return true;
  bind_error(b, EXEC_ERROR, off, "a correlated subquery is supported in a SELECT's select list, "
             "WHERE and ORDER BY, not here yet (not in a DELETE's WHERE, an UPSERT's VALUES)");
  return false;
}

static int grouped_left(binder *b, const sql_select *sub, const sql_expr *const *aggs, int na,
                        cat_type *types, uint32_t off) {
  plan_select *s = b->sel;
  if (!bind_correlated_place_ok(b, off)) return -1;
  const sql_expr *keep[MAX_TERMS], *outer[MAX_TERMS], *inner[MAX_TERMS];
  int nk, np;
  if (correlation(b, sub, keep, &nk, outer, inner, &np)) return -1;
  sql_select q2 = *sub;
  sql_result_list cols;
  sql_expr_list group;
  sql_result_col *ca = calloc((size_t)(np + na), sizeof *ca);
  sql_expr *ands = nk > 1 ? calloc((size_t)(nk - 1), sizeof *ands) : NULL;
  sql_expr **ga = calloc((size_t)np, sizeof *ga);
  if (!ca || !ga || (nk > 1 && !ands)) {
    free(ca);
    free(ands);
    free(ga);
    return bind_error(b, EXEC_NOMEM, off, "out of memory"), -1;
  }
  for (int i = 0; i < np + na; i++) {
    ca[i].expr = (sql_expr *)(i < np ? inner[i] : aggs[i - np]);
    ca[i].off = ca[i].expr->off;
    if (i < np) ga[i] = (sql_expr *)inner[i];
  }
  cols.n = cols.cap = np + na;
  cols.a = ca;
  group.n = group.cap = np;
  group.a = ga;
  q2.cols = &cols;
  q2.group = &group;
  q2.distinct = false;
  q2.order = NULL;
  q2.where = and_terms(keep, nk, ands);
  binder nb = bind_nested(b);
  plan_select *s2 = plan_arena_alloc(b->A, sizeof *s2);
  int rc = s2 ? bind_query(&nb, &q2, s2) : bind_error(b, EXEC_NOMEM, off, "out of memory");
  free(ca);
  free(ands);
  free(ga);
  if (rc) {
    if (s2) b->rc = nb.rc;
    return -1;
  }
  /* its columns come after the FROM's and those of the subqueries recorded before it */
  int slot = s->n_from ? s->n_slots : s->table->n_columns;
  for (int i = 0; i < b->n_semis; i++) slot += b->semis[i].n;
  plan_expr **xs = plan_arena_alloc(b->A, (size_t)(np + na) * sizeof *xs);
  if (!xs) return bind_error(b, EXEC_NOMEM, off, "out of memory"), -1;
  for (int i = 0; i < np; i++) {
    xs[i] = bind_expr(b, outer[i]);
    plan_expr *c = xs[i] ? bind_column_node(b, slot + i, s2->proj[i]->type, true, off) : NULL;
    if (!c || bind_compare_pair(b, xs[i], c, xs[i]->off)) return -1;
  }
  if (bind_add_semi(b, xs, np + na, SQL_JOIN_LEFT, s2, off)) return -1;
  b->semis[b->n_semis - 1].nkeys = np;
  for (int i = 0; i < na; i++) types[i] = s2->proj[np + i]->type;
  return slot + np;
}

/* The aggregate call name(arg) in *f, or name(*) when l is NULL; l holds arg (borrowed). */
static const sql_expr *agg_call(sql_expr *f, char *name, sql_expr_list *l, uint32_t off) {
  memset(f, 0, sizeof *f);
  f->kind = SQL_E_FUNC;
  f->off = off;
  f->height = l ? l->a[0]->height + 1 : 1;
  f->text = name;
  f->text_len = strlen(name);
  f->star = !l;
  f->list = l;
  return f;
}

/* A correlated scalar subquery of a SELECT's select list, WHERE or ORDER BY, decorrelated
** into a LEFT JOIN of the outer query with the subquery grouped by its correlation columns
** (grouped_left).
**  - One aggregate, (SELECT agg(x) FROM s WHERE s.c = t.k AND ...): the group's aggregate, or
**    for an outer row no group matched the aggregate of no rows (COUNT 0, the others NULL),
**    as SQL defines the scalar subquery.
**  - Any other one column v, (SELECT v FROM s WHERE s.c = t.k AND ...): the group gives
**    MIN(v) and COUNT(*), and the value is SCALAR_ONE(count, min): v of the group's one row,
**    NULL without a row, and with two or more the run-time error the uncorrelated scalar
**    subquery gives (PostgreSQL's and Phoenix's rule; SQLite takes the first row). */
plan_expr *bind_correlated_scalar(binder *b, const sql_expr *x) {
  const sql_select *sub = x->sub; /* a shape bind_decorrelatable took */
  const sql_expr *v = sub->cols->a[0].expr;
  bool is_agg = v->kind == SQL_E_FUNC && v->text && cat_func_is_aggregate(v->text);
  sql_expr fmin, fcount;
  sql_expr *argv[1] = {(sql_expr *)v};
  sql_expr_list args = {1, 1, argv};
  char min_name[] = "MIN", count_name[] = "COUNT";
  const sql_expr *aggs[2] = {v, NULL};
  if (!is_agg) {
    aggs[0] = agg_call(&fmin, min_name, &args, v->off);
    aggs[1] = agg_call(&fcount, count_name, NULL, v->off);
  }
  cat_type t[2];
  int slot = grouped_left(b, sub, aggs, is_agg ? 1 : 2, t, x->off);
  if (slot < 0) return NULL;
  plan_expr *val = bind_column_node(b, slot, t[0], true, x->off);
  if (!val) return NULL;
  if (!is_agg) { /* SCALAR_ONE(count, MIN(v), message) */
    char pos[64], msg[160];
    plan_position(b->sql, x->off, pos, sizeof pos);
    snprintf(msg, sizeof msg, "the scalar subquery%s returned more than one row", pos);
    plan_expr *n = bind_column_node(b, slot + 1, t[1], true, x->off);
    plan_expr *m = n ? bind_const(b, cat_v_str(CAT_T_VARCHAR, msg, strlen(msg)), x->off) : NULL;
    plan_expr *f = m ? bind_node(b, PX_FUNC, x->off, 3) : NULL;
    if (!f) return NULL;
    f->func = EXEC_F_SCALAR_ONE;
    f->type = t[0];
    f->nullable = true;
    f->args[0] = n;
    f->args[1] = val;
    f->args[2] = m;
    return f;
  }
  if (strcasecmp(v->text, "COUNT") != 0) return val;
  plan_expr *zero = bind_const(b, cat_v_int(CAT_T_BIGINT, 0), x->off);
  plan_expr *f = zero ? bind_node(b, PX_FUNC, x->off, 2) : NULL;
  if (!f) return NULL;
  f->func = EXEC_F_COALESCE; /* COUNT of no rows is 0 */
  f->type = cat_type_of(CAT_T_BIGINT);
  f->nullable = false;
  f->args[0] = val;
  f->args[1] = zero;
  return f;
}

/* A boolean node: a op b (PX_BINARY), or a IS [NOT] NULL (PX_ISNULL, b NULL). */
static plan_expr *pred(binder *b, int op, plan_expr *l, plan_expr *r, bool negated) {
  if (!l || (op && !r)) return NULL;
  plan_expr *e = bind_node(b, op ? PX_BINARY : PX_ISNULL, l->off, op ? 2 : 1);
  if (!e) return NULL;
  e->op = (uint8_t)op;
  e->negated = negated;
  e->type = cat_type_of(CAT_T_BOOLEAN);
  e->nullable = op != 0;
  e->args[0] = l;
  if (op) e->args[1] = r;
  return e;
}

plan_expr *bind_correlated_not_in(binder *b, const sql_expr *w) {
  /* an anti join on x = c and the correlation: the rows whose group has no value equal to x */
  if (bind_correlated(b, w, true)) return NULL;
  /* SQL's NULL rules per group: (SELECT s.c, COUNT(*), COUNT(c) ... GROUP BY s.c) */
  sql_expr fall, fvals;
  sql_expr *argv[1] = {w->sub->cols->a[0].expr};
  sql_expr_list args = {1, 1, argv};
  char count_name[] = "COUNT";
  const sql_expr *aggs[2] = {agg_call(&fall, count_name, NULL, w->off),
                             agg_call(&fvals, count_name, &args, w->off)};
  cat_type t[2];
  int slot = grouped_left(b, w->sub, aggs, 2, t, w->off);
  if (slot < 0) return NULL;
  /* the row passes when its group is empty (no group: COUNT(*) NULL), or when x is not NULL
  ** and the group holds no NULL (COUNT(*) = COUNT(c)) */
  plan_expr *n = bind_column_node(b, slot, t[0], true, w->off);
  plan_expr *n2 = bind_column_node(b, slot, t[0], true, w->off);
  plan_expr *nv = bind_column_node(b, slot + 1, t[1], true, w->off);
  plan_expr *x = n && n2 && nv ? bind_expr(b, w->left) : NULL;
  plan_expr *full = pred(b, SQL_OP_AND, pred(b, 0, x, NULL, true), pred(b, SQL_OP_EQ, n2, nv,
                         false), false);
  return pred(b, SQL_OP_OR, pred(b, 0, n, NULL, false), full, false);
}
