/*
** planner/plan_bind.h: internals shared by the binder's files (planner/bind.c expressions,
** planner/bind_func.c functions and aggregates, planner/bind_stmt.c statements). Not used
** outside planner/bind*.c except plan_expr_equal and plan_expr_walk.
*/
#ifndef ROWAN_PLANNER_PLAN_BIND_H
#define ROWAN_PLANNER_PLAN_BIND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "planner/plan.h"

/* Where aggregates may appear while binding an expression. */
enum { BIND_AGG_NO = 0, BIND_AGG_OK = 1, BIND_AGG_INSIDE = 2 };

typedef struct binder binder;
struct binder {
  const cat_catalog *cat;  /* the catalog */
  const char *sql;         /* statement text (positions) */
  plan_arena *A;           /* where everything is allocated */
  const cat_table *table;  /* FROM / target table, or NULL */
  const char *alias;       /* FROM alias or NULL */
  int n_scope;             /* joins: tables of sel->from in scope (ON of the k-th join sees
                              k + 1); 0 outside a join */
  const plan_from *scope;  /* those tables */
  int n_using;             /* USING columns so far (hidden on the right table unqualified) */
  struct bind_using {
    int from;              /* the right table of the USING */
    const char *name;      /* the column name */
  } *usings;               /* arena */
  char *msg;               /* error message buffer */
  size_t cap;              /* its size */
  int *err_off;            /* error offset out (may be NULL) */
  int rc;                  /* first error (EXEC_*), 0 if none */
  plan_bound *bound;       /* the statement being bound (parameter types) */
  plan_select *sel;        /* SELECT collecting aggregates, or NULL */
  int agg_mode;            /* BIND_AGG_* */
  const char *agg_where;   /* clause name for "aggregates are not allowed in WHERE" */
  int agg_cap;             /* allocated entries of sel->aggs */
  /* Subqueries (planner/bind_subquery.c) */
  const struct bind_cte {
    const struct sql_cte *def;   /* the WITH item */
    const struct bind_cte *up;   /* the items before it, then the enclosing WITH's */
  } *ctes;                 /* the innermost WITH item in scope, or NULL */
  const char *cte_self;    /* the WITH item whose query is being bound (it may not name
                              itself: WITH RECURSIVE is not supported), or NULL */
  struct bind_semi {       /* a WHERE term x [NOT] IN (SELECT ...) or a correlated
                              [NOT] EXISTS of the SELECT bound: a semi / anti join; or a
                              correlated scalar subquery: a LEFT JOIN */
    plan_expr **x;         /* what the subquery's columns must equal, over the SELECT's
                              input row: x of IN, then the outer sides of the correlation */
    int n;                 /* the subquery's columns */
    int nkeys;             /* how many of them the join matches with x (n; a correlated
                              scalar subquery's value column, the last, is not matched) */
    int kind;              /* SQL_JOIN_SEMI, SQL_JOIN_ANTI (NOT IN), SQL_JOIN_ANTI_EXISTS */
    plan_select *sub;      /* the subquery */
    uint32_t off;          /* byte offset of the term */
  } *semis;                /* arena; n_semis of them */
  int n_semis;
  plan_from *pre_from;     /* the derived table a compound SELECT's outer query reads, set
                              just before binding that query; NULL otherwise */
  const plan_select *seq_top; /* the query whose select list may use NEXT / CURRENT VALUE
                              FOR (the statement's SELECT or UPSERT's source), or NULL */
  bool seq_ok;             /* binding that select list or the VALUES of an UPSERT now */
  bool no_key_lists;       /* PLAN_BIND_NO_KEY_LISTS (the statement's binder only) */
  bool key_list_term;      /* the IN (SELECT ...) bound next is a key list (bind_where) */
  const struct sql_result_list *having_aliases; /* binding HAVING: the select list whose
                              aliases a bare name that no FROM item has may name (as SQLite),
                              bound again from its SQL; NULL otherwise */
  struct bind_corr *corr;  /* binding a subquery of an expression: where the columns it
                              names of the queries around it go (planner/bind_apply.c); the
                              queries nested in it (set operation branches, derived tables)
                              share it; NULL for the statement's own query */
};

/* The outer columns a subquery names (planner/bind_apply.c): each is bound in the query
** around it (outer) and read in the subquery as a parameter node, numbered at the bind's
** end. */
typedef struct bind_corr {
  struct binder *outer;    /* the binder of the query around the subquery */
  plan_expr **oexpr;       /* the outer values, over outer's input row (arena) */
  plan_expr **node;        /* the PX_PARAM node reading each in the subquery (arena) */
  int n, cap;
} bind_corr;

/* Record the first error (message + " at line L, column C"); returns b->rc. */
int bind_error(binder *b, int code, uint32_t off, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* A new node of `kind` with n_args argument slots, or NULL (error set). */
plan_expr *bind_node(binder *b, int kind, uint32_t off, uint32_t n_args);
/* A constant node holding a copy of v (string bytes copied into the arena). */
plan_expr *bind_const(binder *b, cat_value v, uint32_t off);
/* Bind any expression; NULL with b->rc set on error. */
plan_expr *bind_expr(binder *b, const sql_expr *x);
/* Functions and aggregates (planner/bind_func.c). */
plan_expr *bind_func(binder *b, const sql_expr *x);
/* True if function id f may be evaluated at bind time on constant arguments. */
bool bind_func_foldable(int f);
/* Fold e if its arguments are constants; returns the node to use (NULL on error). */
plan_expr *bind_fold(binder *b, plan_expr *e);
/* Comparison helpers. */
bool bind_comparable(const cat_type *a, const cat_type *b2);
cat_type bind_numeric_result(const cat_type *a, const cat_type *b2);
cat_type bind_common_type(const cat_type *a, const cat_type *b2, bool *ok);
int bind_coerce_const(binder *b, plan_expr *c, const cat_type *t);
int bind_compare_pair(binder *b, plan_expr *l, plan_expr *r, uint32_t off);

/* Joins (planner/bind_from.c): bind the FROM of q with its joins into s (tables, derived
** tables, names, ON and USING conditions) and set b's scope; a column reference inside a
** join scope. Also a FROM of one derived table (or b->pre_from). */
int bind_from_joins(binder *b, const sql_select *q, plan_select *s);
plan_expr *bind_from_column(binder *b, const sql_expr *x);
/* Expand `*` (nqual 0) or `q.*` over the joined tables into the select list with add. */
int bind_from_star(binder *b, const sql_result_col *rc, plan_select *s, int *cap,
                   int (*add)(binder *, plan_select *, int *, plan_expr *, char *));
/* True if name is a column of any table in scope (GROUP BY alias rule). */
bool bind_from_has_column(const binder *b, const char *name);

/* Subqueries (planner/bind_subquery.c). bind_query binds any query: a WITH list (its items
** in scope for the query), a compound SELECT (as an outer query over the set operation,
** which holds its ORDER BY / LIMIT / OFFSET), or one SELECT (bind_select_core,
** planner/bind_stmt.c). */
int bind_query(binder *b, const sql_select *q, plan_select *s);
int bind_select_core(binder *b, const sql_select *q, plan_select *s);
/* Eager aggregation (planner/bind_eager.c): *out is q, or a rewrite of q that aggregates one
** table before joining it to another on that one's whole key (the same rows, fewer joined).
** EXEC_OK, or an error code with b's error set (out of memory). */
int bind_eager(binder *b, const sql_select *q, const sql_select **out);
/* The catalog's table name (planner/bind_from.c), or NULL with an error that names the WITH
** names in scope, or refuses a WITH item's query naming the item itself. */
const cat_table *bind_find_table(binder *b, const char *name, uint32_t off);
/* The statement's AS OF clauses into out->as_of_ms (planner/bind_as_of.c): EXEC_OK, or
** EXEC_ERROR with the clause's offset (a write, different times, a table without it, a bad
** or pre-1970 time). */
int bind_as_of(binder *b, const struct sql_stmt *st, plan_bound *out);
/* The WITH item named name in scope, or NULL. */
const struct sql_cte *bind_find_cte(const binder *b, const char *name);
/* FROM item f: the derived table `sub` (cols: its column names, or NULL) known as name
** (NULL: none given) at byte off; f->table becomes its stand-in, f->sub its plan. */
int bind_derived(binder *b, const sql_select *sub, const sql_colname_list *cols,
                 const char *name, uint32_t off, plan_from *f);
/* A subquery in an expression (SQL_E_SUBQUERY, SQL_E_EXISTS): bound as a query of its own
** and made a hidden parameter (plan_subquery). NULL with b's error set. */
plan_expr *bind_subquery_expr(binder *b, const sql_expr *x);
/* WHERE expression w bound, its top-level (ANDed) x [NOT] IN (SELECT ...) terms taken out
** into b->semis; NULL with b->rc 0 when nothing else is left. */
plan_expr *bind_where(binder *b, const sql_expr *w);
/* Correlated subqueries (planner/bind_correlated.c): true when the query of w (EXISTS, or
** IN (SELECT ...)) names a table of b's scope in its WHERE; then bind_correlated makes the
** term a semi / anti join on the correlation's equalities (negated: NOT EXISTS). */
bool bind_is_correlated(const binder *b, const sql_select *sub);
int bind_correlated(binder *b, const sql_expr *w, bool negated);
/* Is b binding a query with a FROM, which a correlated subquery can be joined to (a SELECT's
** select list, WHERE, ORDER BY)? If not (a DELETE's WHERE, an UPSERT's VALUES), false with
** b's error saying so, at off. */
bool bind_correlated_place_ok(binder *b, uint32_t off);
/* A correlated scalar subquery x: a LEFT JOIN recorded in b->semis, and the expression that
** reads its value (planner/bind_correlated.c); NULL with b->rc set when refused. */
plan_expr *bind_correlated_scalar(binder *b, const sql_expr *x);
/* A correlated x NOT IN (SELECT c ... WHERE s.k = t.k ...), an ANDed WHERE term w: an anti
** join on x = c and the correlation, and a LEFT JOIN of the subquery's per-group COUNT(*)
** and COUNT(c) recorded in b->semis; returns the WHERE term that applies SQL's NULL rules
** per group (NULL with b->rc set when refused). */
plan_expr *bind_correlated_not_in(binder *b, const sql_expr *w);
/* x [NOT] IN (SELECT ...) or (a, b) [NOT] IN (SELECT c, d ...) inside an expression:
** [NOT] IN_SET(x, ..., set), set the parameter node that carries the hash set of the
** subquery's rows, t[0..n) the types of its n columns (planner/bind.c). */
plan_expr *bind_in_values(binder *b, const sql_expr *x, plan_expr *set, const cat_type *t,
                          int n);
/* Record a semi / anti join (planner/bind_subquery.c). */
int bind_add_semi(binder *b, plan_expr **x, int n, int kind, plan_select *sub, uint32_t off);
/* A column node over slot i (planner/bind_subquery.c). */
plan_expr *bind_column_node(binder *b, int i, cat_type t, bool nullable, uint32_t off);
/* The semi / anti joins of b->semis appended to s's FROM (a single-table s becomes a FROM of
** that table and them). */
int bind_semis(binder *b, plan_select *s);
/* A binder for a query nested in b's (a derived table, a branch of a set operation): b's
** catalog, text, arena, parameters, errors and WITH items, no table in scope. */
binder bind_nested(const binder *b);

/* q names the FROM item with alias `alias` (when it has one: the alias hides the name) or
** table name tname (or its last part, for S.T); bind_scope_names: q names a FROM item of
** b's query (planner/bind_correlated.c). */
bool bind_names_item(const char *q, const char *alias, const char *tname);
bool bind_scope_names(const binder *b, const char *q);
/* An unqualified column `col` is one of b's query's FROM items' (planner/bind_correlated.c). */
bool bind_scope_has_column(const binder *b, const char *col);

/* Correlated subqueries run per outer row (planner/bind_apply.c).
** bind_corr_column: x, a qualified column the subquery b binds names a table of a query
** around it (and no FROM item of b's query of that name hides it): the parameter node that
** reads it; NULL with *handled false when it does not (b binds it as usual), NULL with
** *handled true and b->rc set on error.
** bind_apply: x (a scalar subquery, EXISTS or [NOT] IN (SELECT)), whose query s was bound
** with c collecting outer columns (c->n > 0), as the expression that runs it per outer row
** (ct: the types of IN's columns, checked by the caller).
** bind_apply_query: bind x's query with a collector of its own; *c says what it named.
** bind_apply_finish: number the applies' parameters after the statement's others. */
plan_expr *bind_corr_column(binder *b, const sql_expr *x, bool *handled);
int bind_apply_query(binder *b, const sql_select *q, plan_select *s, bind_corr *c);
plan_expr *bind_apply(binder *b, const sql_expr *x, plan_select *s, const bind_corr *c,
                      const cat_type *ct);
int bind_apply_finish(binder *b);
/* A correlated subquery x that the decorrelation of planner/bind_correlated.c takes (as a
** WHERE term when where_term): its outer columns only in equalities ANDed in its WHERE,
** and a shape it rewrites; false otherwise (bind_apply runs it per row instead). */
bool bind_decorrelatable(const binder *b, const sql_expr *x, bool where_term);

/* NEXT / CURRENT VALUE FOR (planner/bind_sequence.c): a parameter node of the sequence's
** reference; refused outside a select list of the statement's query and UPSERT VALUES. */
plan_expr *bind_sequence(binder *b, const sql_expr *x);
/* Check that s (the statement's query) may use sequences (no aggregate, GROUP BY or
** DISTINCT), then number the sequence parameters after the statement's own and its
** subqueries'. b->rc. */
int bind_sequence_finish(binder *b, const plan_select *s);

/* A type as written (CAST, a dynamic column) into *out: EXEC_OK, or EXEC_ERROR at the type
** (an unknown name, with the usual spelling when there is one; bad parameters). */
int bind_type(binder *b, const struct sql_type *st, cat_type *out);

/* Phoenix's dynamic columns (planner/bind_dyncol.c): table t as the statement sees it with
** the columns of `cols` that carry a type (a FROM item's `t (f.c TYPE, ...)`, UPSERT's column
** list; the others are t's own) appended after t's columns: t itself when there are none,
** else a copy in b's arena (cat_table.n_dynamic). With up (an UPSERT), a family t lacks is
** added to the copy and named in up->new_families (Phoenix creates it on first use);
** without, it is an error. NULL with b's error set: a name that t declares, a name given
** twice, a family starting with '_' (or that t lacks), a bad type, too many columns or
** families. */
const cat_table *bind_dyn_table(binder *b, const cat_table *t, const sql_colname_list *cols,
                                plan_upsert *up);
/* EXEC_ERROR at the first dynamic column of cols when the FROM item or UPSERT target named
** `name` is not a table (a view, a WITH name, a derived table): only a table's cells can be
** read as dynamic columns. EXEC_OK when cols has none. */
int bind_dyn_refuse(binder *b, const sql_colname_list *cols, const char *name,
                    const char *what);

/* Structural equality of two bound expressions (GROUP BY matching). */
bool plan_expr_equal(const plan_expr *a, const plan_expr *b2);

#endif /* ROWAN_PLANNER_PLAN_BIND_H */
