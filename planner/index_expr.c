/*
** planner/index_expr.c: expression keys of secondary indexes for the planner (contract in
** planner/index_expr.h). An index key expression is bound exactly as the write path binds
** it (exec/index.c: the text as the only item of "SELECT <text> FROM <table>", with the
** expression binder of planner/bind.c), so the tree, its constants and its result type are
** the ones the index rows were encoded with; only the table lookup is skipped, so no
** catalog is needed.
**
** The WHERE rewrite replaces whole matching subtrees by PX_COLUMN nodes of slots past the
** table's columns; nothing outside planner/index_choice.c ever sees such a node (it maps
** the terms key-range derivation hands back to their original form before they reach a
** filter, EXPLAIN or the executor).
**
** Not here: choosing or costing the index (planner/index_choice.c), key-range derivation
** (planner/keyrange.c).
*/
#include "planner/index_expr.h"

#include <stdio.h>
#include <string.h>

#include "catalog/status.h"
#include "catalog/func_sig.h"
#include "planner/plan_bind.h"
#include "sql/parser.h"

/* Whether e depends on the statement (time, parameters) or on several rows. */
static bool not_row_value(const plan_expr *e) {
  if (!e) return false;
  if (e->kind == PX_FUNC && !cat_func_deterministic(e->func, (int)e->n_args)) return true;
  if (e->kind == PX_PARAM || e->kind == PX_AGG) return true;
  for (uint32_t i = 0; i < e->n_args; i++)
    if (not_row_value(e->args[i])) return true;
  return false;
}

int plan_index_key_bind(const cat_table *t, const char *text, plan_arena *A, plan_expr **out,
                        char *msg, size_t cap) {
  *out = NULL;
  size_t tl = strlen(text), nl = strlen(t->name);
  size_t sz = tl + 2 * nl + 32;
  char *sql = plan_arena_alloc(A, sz);
  if (!sql) return snprintf(msg, cap, "out of memory"), EXEC_NOMEM;
  size_t n = (size_t)snprintf(sql, sz, "SELECT %s FROM \"", text);
  for (const char *p = t->name; *p; p++) {
    if (*p == '"') sql[n++] = '"';
    sql[n++] = *p;
  }
  sql[n++] = '"';
  sql[n] = 0;
  sql_stmt *st = NULL;
  sql_error se;
  memset(&se, 0, sizeof se);
  if (sql_parse(sql, n, &st, NULL, &se) != SQL_OK || !st) {
    sql_stmt_free(st);
    return snprintf(msg, cap, "key expression %s does not parse: %s", text, se.message),
           EXEC_ERROR;
  }
  const sql_select *q = st->kind == SQL_STMT_SELECT ? st->u.select : NULL;
  if (!q || !q->cols || q->cols->n < 1 || !q->cols->a[0].expr) {
    sql_stmt_free(st);
    return snprintf(msg, cap, "key expression %s is not an expression", text), EXEC_ERROR;
  }
  plan_bound bound;
  memset(&bound, 0, sizeof bound);
  char bmsg[256] = "";
  plan_select none; /* no aggregates are collected: it only makes the binder say why */
  memset(&none, 0, sizeof none);
  binder b;
  memset(&b, 0, sizeof b);
  b.sel = &none;
  b.sql = sql;
  b.A = A;
  b.table = t;
  b.msg = bmsg;
  b.cap = sizeof bmsg;
  b.bound = &bound;
  b.agg_mode = BIND_AGG_NO;
  b.agg_where = "an index key";
  plan_expr *e = bind_expr(&b, q->cols->a[0].expr);
  sql_stmt_free(st);
  if (!e || b.rc) {
    int rc = b.rc == EXEC_NOMEM ? EXEC_NOMEM : EXEC_ERROR;
    return snprintf(msg, cap, "key expression %s: %s", text, bmsg), rc;
  }
  if (not_row_value(e))
    return snprintf(msg, cap, "key expression %s is not deterministic", text), EXEC_ERROR;
  if (e->type.id == 0)
    return snprintf(msg, cap, "key expression %s has no type", text), EXEC_ERROR;
  *out = e;
  return EXEC_OK;
}

/* A shallow copy of e with its own argument array (arguments shared), or NULL. */
static plan_expr *copy_node(plan_arena *A, const plan_expr *e) {
  plan_expr *c = plan_arena_alloc(A, sizeof *c);
  if (!c) return NULL;
  *c = *e;
  if (e->n_args) {
    c->args = plan_arena_alloc(A, e->n_args * sizeof *c->args);
    if (!c->args) return NULL;
    memcpy(c->args, e->args, e->n_args * sizeof *c->args);
  }
  return c;
}

/* Rewrite e bottom-up with map(): a replacement node, or NULL to keep e and descend. */
typedef struct rewrite {
  plan_arena *A;              /* where new nodes go */
  plan_expr *const *keys;     /* the key expressions */
  int n;                      /* their count */
  int base;                   /* the first virtual slot */
  bool sub;                   /* true: expression -> slot; false: slot -> expression */
  bool *oom;                  /* set on out of memory */
} rewrite;

static plan_expr *map_node(const rewrite *w, const plan_expr *e) {
  if (w->sub) {
    for (int k = 0; k < w->n; k++) {
      if (!w->keys[k] || !plan_expr_equal(e, w->keys[k])) continue;
      plan_expr *c = plan_arena_alloc(w->A, sizeof *c);
      if (!c) {
        *w->oom = true;
        return NULL;
      }
      memset(c, 0, sizeof *c);
      c->kind = PX_COLUMN;
      c->column = w->base + k;
      c->type = w->keys[k]->type;
      c->nullable = true;
      c->off = e->off;
      return c;
    }
    return NULL;
  }
  if (e->kind == PX_COLUMN && e->column >= w->base && e->column < w->base + w->n)
    return w->keys[e->column - w->base];
  return NULL;
}

static plan_expr *rewrite_expr(const rewrite *w, const plan_expr *e) {
  plan_expr *m = map_node(w, e);
  if (m || *w->oom) return m;
  plan_expr *copy = NULL;
  for (uint32_t i = 0; i < e->n_args; i++) {
    plan_expr *a = rewrite_expr(w, e->args[i]);
    if (*w->oom) return NULL;
    if (a == e->args[i]) continue;
    if (!copy && !(copy = copy_node(w->A, e))) {
      *w->oom = true;
      return NULL;
    }
    copy->args[i] = a;
  }
  return copy ? copy : (plan_expr *)e;
}

plan_expr *plan_index_expr_sub(plan_arena *A, const plan_expr *e, plan_expr *const *keys,
                               int n, int base, bool *oom) {
  if (!e) return NULL;
  rewrite w = {A, keys, n, base, true, oom};
  return rewrite_expr(&w, e);
}

plan_expr *plan_index_expr_unsub(plan_arena *A, const plan_expr *e, plan_expr *const *keys,
                                 int n, int base, bool *oom) {
  if (!e) return NULL;
  rewrite w = {A, keys, n, base, false, oom};
  return rewrite_expr(&w, e);
}
