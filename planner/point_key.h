/*
** planner/point_key.h: the point key template of a prepared point lookup. When the plan of
** a SELECT over a table is one POINT LOOKUP whose every key column is pinned by one WHERE
** term "column = ?" or "column = constant" (or one RANGE SCAN of every row whose leading key
** columns are pinned so, e.g. `WHERE STATION = ? ORDER BY TS DESC LIMIT 100`), and nothing
** else in the plan depends on the parameter values (no residual, no pushed filter, no
** index, no other WHERE term, LIMIT and OFFSET not parameters), the plan for other
** parameter values differs only in the bytes of that one key or key prefix. The template records, per key column, where its value comes from and how it is
** folded and encoded; a rebind then writes the new key bytes straight into the plan's range
** (no key-range derivation, no folding of other terms, no allocation once the range's
** buffers are large enough). A key prefix may also be narrowed by the next key column
** between one lower and one upper bound term, "column >= ?" or "> ?", "column < ?" or
** "<= ?" (either may be missing), when that column is NOT NULL and neither text nor
** binary: the time window of a series, `WHERE STATION = ? AND TS >= ? AND TS < ?`. On a table
** with a ROW_TIMESTAMP column, whose bounds also set the scan's time range of cell
** timestamps, the rebind computes that range again from the WHERE and the new values
** (planner/time_range.h), as planning would.
**
** The rule that keeps answers equal: plan_point_key_rebind encodes a value exactly as key-
** range derivation (planner/keyrange.c cmp_set, value_pos; keyrange_expand.c for DESC
** columns) would, through the same plan_fold_compare and cat_key_encode_col calls, and
** refuses (returns 1) every value for which derivation would give another plan: NULL, a
** value that folds to FALSE (INTEGER k = 5.5, beyond the column's range), one that does not
** fold or encode, a key over CAT_KEY_MAX, a prefix with no key after it (all 0xFF); and
** every value once the plan was cut into parallel chunks (q->par, exec/op_parallel_attach.c):
** the chunks' key ranges were cut from the first values' range and are kept with the plan.
** The caller then re-plans (plan_query_rebuild).
** docs/EXPLAIN.md "Plan reuse" describes it for users.
**
** Not here: deciding when a plan is kept (exec/engine_run.c), the derivation itself.
*/
#ifndef ROWAN_PLANNER_POINT_KEY_H
#define ROWAN_PLANNER_POINT_KEY_H

#include <stdbool.h>
#include <stddef.h>

#include "planner/plan.h"

/* How one key column's bytes are made. */
typedef struct plan_point_col {
  const plan_expr *val;  /* the PX_PARAM or PX_CONST the column equals (bound statement) */
  cat_key_col asc;       /* the column's codec as derivation sees it: ASC, no length limit,
                            CHAR encoded as VARCHAR */
  cat_type fold;         /* the type constants are folded to (CHAR stays CHAR: trims) */
  bool desc;             /* DESC column: its encoded bytes are inverted in the key */
} plan_point_col;

/* The template of one plan; n == 0 means the plan has none. */
typedef struct plan_point_key {
  int n;                 /* key columns pinned (0: no template): all of them for a point, the
                            leading n for a key-prefix range */
  bool point;            /* a POINT LOOKUP [key, key]; else the RANGE SCAN of every key that
                            starts with the prefix [prefix, cat_key_prefix_end(prefix)) */
  bool bounded;          /* (not point) the RANGE SCAN of the prefix narrowed by key column n
                            between lo and hi (a time window: STATION = ? AND TS >= ? AND
                            TS < ?) */
  plan_point_col *cols;  /* n entries, in key order (allocated in the plan's arena) */
  plan_point_col rcol;   /* (bounded) key column n: its codec and folding type (val unused) */
  const plan_expr *lo, *hi; /* (bounded) the PX_PARAM or PX_CONST of its lower and upper
                            bound terms, NULL for a side with no term */
  int lo_op, hi_op;      /* (bounded) SQL_OP_GE or GT, SQL_OP_LE or LT: the terms' operators */
  const cat_table *ts_table;   /* the table when it has a ROW_TIMESTAMP column, else NULL */
  const plan_expr *ts_where;   /* then the scan's WHERE, its time range computed again */
  plan_key_range *range; /* the plan's one key range, rewritten by a rebind */
  size_t cap;            /* bytes allocated at range->start and at range->end */
} plan_point_key;

/* Build the template of plan q (a plan made by plan_query_build or plan_query_rebuild) into
** *pk, allocating in A (the arena q lives in). Returns true when q qualifies (see the header
** paragraph), false otherwise (pk->n is then 0). Nothing of q changes. */
bool plan_point_key_init(plan_point_key *pk, plan_query *q, plan_arena *A);

/* Rewrite the key of the template's plan for new parameter values params[0..n_params)
** (as converted for the run). Returns 0 when the plan is now exactly the plan that
** plan_query_rebuild would make for these values (its range bytes replaced, its key bound
** text dropped), or 1 when these values need another plan: the plan's range may then hold
** partial bytes, and the caller must drop the plan and plan again. Never allocates unless
** the new key is longer than any before (the range's buffers then grow). */
int plan_point_key_rebind(plan_point_key *pk, plan_query *q, const cat_value *params,
                          int n_params);

#endif /* ROWAN_PLANNER_POINT_KEY_H */
