/*
** planner/plan_reuse.h: what a prepared statement needs to keep its plan across executions
** (exec/engine_run.c): a cheaper re-plan for new parameter values, and an arena reset that
** keeps its memory for the next plan.
**
** The rule (docs/EXPLAIN.md "Plan reuse"): a statement keeps the plan of its last execution
** while the schema is unchanged. With the same parameter values the plan is run again as it
** is. With other values, a plan whose access path is the table itself is rebuilt with
** plan_query_rebuild: key ranges, the pushed filter, residual, families, order, LIMIT and
** OFFSET are derived again from the new values (they depend on them), but the table's
** statistics are not walked for estimates and the index choice is not made again (the
** table scan stays). A plan that chose an index is rebuilt in full. EXPLAIN always plans in
** full.
**
** Not here: the plan itself (planner/plan.h), planning (planner/plan_select.h).
*/
#ifndef ROWAN_PLANNER_PLAN_REUSE_H
#define ROWAN_PLANNER_PLAN_REUSE_H

#include <stddef.h>

#include "kv/kv.h"
#include "planner/plan.h"

/* Free every chunk of arena a but its newest, which is emptied and kept for the next
** allocations (no malloc for a plan that fits in it). a stays valid; plan_arena_free still
** frees everything. Memory allocated from a before the call must no longer be used. */
void plan_arena_reset(plan_arena *a);

/* plan_query_build (planner/plan_select.h) for a statement whose earlier plan scanned the
** table itself: the same plan of the table scan for these parameter values, without the
** estimates (est_rows, est_bytes, total_rows and total_bytes stay 0), without the EXPLAIN
** texts of the key bounds and the filter (ranges.explain and filter_text NULL) and without the index choice (no access paths, no hint
** note): such a plan is run, never explained. Same arguments, results and errors as
** plan_query_build; free *q with plan_query_free. */
int plan_query_rebuild(kv_backend *be, const plan_select *s, const cat_value *params, int n_params,
                       plan_arena *A, plan_query *q, char *msg, size_t cap);

#endif /* ROWAN_PLANNER_PLAN_REUSE_H */
