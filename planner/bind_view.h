/*
** planner/bind_view.h: what planner/bind_view.c (views in bound statements; the rules are
** in its header comment) lends the binder's other files. Internal to planner/bind*.c.
*/
#ifndef ROWAN_PLANNER_BIND_VIEW_H
#define ROWAN_PLANNER_BIND_VIEW_H

#include "catalog/cat_view.h"
#include "planner/plan_bind.h"

#define BIND_VIEW_DEPTH 32     /* views over views, at most */
#define BIND_VIEW_MAX_FIXED 64 /* column = constant terms of an updatable view */

/* What a FROM name is (bind_view_chain_of, bind_view_from). */
enum { BIND_VIEW_NONE = 0, BIND_VIEW_MERGED = 1, BIND_VIEW_DERIVED = 2 };

/* A view and the merged views under it, down to the table they read. */
typedef struct bind_view_chain {
  const cat_view *outer;                  /* the view named */
  int n;                                  /* merged views, outermost first */
  const cat_view *views[BIND_VIEW_DEPTH]; /* them */
  const sql_select *q[BIND_VIEW_DEPTH];   /* their queries (trees freed with the arena) */
  const cat_table *table;                 /* the table under them (MERGED); when views of
                                             the chain have columns of their own, a copy of
                                             it in the binder's arena with those columns
                                             after its own (same name, key, families) */
} bind_view_chain;

/* Is `name` a view, and can it merge? BIND_VIEW_NONE (not a view, or an error: b->rc),
** BIND_VIEW_MERGED (c filled down to the table) or BIND_VIEW_DERIVED (a view somewhere
** in the chain is not `SELECT * FROM x [WHERE c]`). off: where the statement names it. */
int bind_view_chain_of(binder *b, const char *name, uint32_t off, bind_view_chain *c);

/* The conditions of c's views bound over c->table, innermost first, ANDed (NULL: none, or
** an error in b->rc). semis: IN (SELECT ...) terms may become semi joins (a SELECT). */
plan_expr *bind_view_where(binder *b, const bind_view_chain *c, uint32_t off, bool semis);

/* The FROM of SELECT q when it names one view alone: BIND_VIEW_NONE (not a view: bind
** it as before), BIND_VIEW_DERIVED (bind it as a FROM with a derived table) or
** BIND_VIEW_MERGED: s->table, b->table, s->col_names are the table's, b->alias the view's
** name (or q's alias), *cond the views' conditions for s->where (bind_view_and). Errors in
** b->rc. */
int bind_view_from(binder *b, const sql_select *q, plan_select *s, plan_expr **cond);
/* view_cond AND where (either may be NULL). */
plan_expr *bind_view_and(binder *b, plan_expr *view_cond, plan_expr *where, uint32_t off);

/* FROM item f naming view v in a join (or a view that does not merge): its query bound as
** a derived table known as alias (NULL: the view's name). EXEC_OK or b->rc. */
int bind_view_derived(binder *b, const cat_view *v, const char *alias, uint32_t off,
                      plan_from *f);

/* The target of UPSERT or DELETE (verb, for messages) when it names a view. */
typedef struct bind_view_target {
  const cat_table *table;                   /* the table written; NULL: not a view */
  const cat_view *view;                     /* the view named */
  plan_expr *cond;                          /* its conditions over the table, or NULL */
  int n_fixed;                              /* column = constant terms */
  int fixed_col[BIND_VIEW_MAX_FIXED];       /* their columns (table column indexes) */
  plan_expr *fixed[BIND_VIEW_MAX_FIXED];    /* their constants */
} bind_view_target;
/* Fill vt for target `name` (vt->table NULL when it is not a view). A view that is not
** updatable is an error naming it; on success b->alias is the view's name. */
int bind_view_dml(binder *b, const char *name, uint32_t off, const char *verb,
                     bind_view_target *vt);
/* Does the view of vt set column `column` (so UPSERT need not list it)? */
bool bind_view_fills(const bind_view_target *vt, int column);
/* After UPSERT u is bound into p over vt->table: check the values given for the view's
** constant columns and add the columns left out, with their constants. No-op when vt is
** not a view. */
int bind_view_upsert(binder *b, const bind_view_target *vt, const sql_upsert *u,
                     plan_upsert *p);

#endif /* ROWAN_PLANNER_BIND_VIEW_H */
