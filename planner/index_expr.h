/*
** planner/index_expr.h: expression keys of secondary indexes in the planner
** (planner/index_expr.c): binding an index's key expression text against its table without
** the catalog, and rewriting a WHERE clause so that every subtree structurally equal to an
** index key expression becomes a reference to a "virtual" key slot (and back), which lets
** key-range derivation (planner/keyrange.h) treat an expression key like a column key.
**
** Matching is structural (plan_expr_equal of the bound trees: same function or operator,
** same argument columns, constants equal after binding, same CAST target). Nothing is
** normalized: UPPER(CITY) does not match UPPER(TRIM(CITY)), A + B does not match B + A, and
** an expression the binder wraps differently (an implicit conversion) does not match.
**
** Not here: choosing the index (planner/index_choice.c), writing index rows (exec/index*.c).
*/
#ifndef ROWAN_PLANNER_INDEX_EXPR_H
#define ROWAN_PLANNER_INDEX_EXPR_H

#include <stdbool.h>
#include <stddef.h>

#include "catalog/catalog.h"
#include "planner/plan.h"

/* Bind the key expression text `text` of an index of table t (the text kept in
** cat_index.keys) over t's column slots, as a SELECT list item of a query on t would be
** bound, into *out (nodes in arena A). No catalog is needed. EXEC_OK; EXEC_ERROR with msg
** when the text does not parse or bind, is not deterministic (NOW(), CURRENT_DATE, a
** parameter, an aggregate) or has no type; EXEC_NOMEM. */
int plan_index_key_bind(const cat_table *t, const char *text, plan_arena *A, plan_expr **out,
                        char *msg, size_t cap);

/* e with every subtree equal to keys[k] (k < n; NULL entries are skipped) replaced by a
** PX_COLUMN node of slot base + k and the type of keys[k]; unchanged subtrees are shared,
** changed ones copied into A. Returns e itself when nothing matched, NULL when e is NULL or
** on out of memory (*oom set). */
plan_expr *plan_index_expr_sub(plan_arena *A, const plan_expr *e, plan_expr *const *keys,
                               int n, int base, bool *oom);

/* The inverse of plan_index_expr_sub: every PX_COLUMN of slot base + k (k < n) becomes
** keys[k] again (shared). Same sharing, return and *oom rules. */
plan_expr *plan_index_expr_unsub(plan_arena *A, const plan_expr *e, plan_expr *const *keys,
                                 int n, int base, bool *oom);

#endif /* ROWAN_PLANNER_INDEX_EXPR_H */
