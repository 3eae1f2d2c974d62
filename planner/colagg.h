/*
** planner/colagg.h: which plans run as the columnar aggregate pushdown (issue 8; the
** executor's side is exec/colagg.h): an ungrouped COUNT(*) / COUNT(c) / SUM / AVG / MIN /
** MAX over one table whose WHERE is an AND of simple comparisons of one family's non-key
** columns with constants, answered per store-file block by kv/colscan.h.
**
** Eligible (plan_colagg_check, on the plan alone): a full scan of the table (no key range,
** no index, no pushed limit) reading exactly one non-key family, every WHERE term pushed into
** the scan filter (no residual), the filter an AND of "column op constant" / "column IS NOT
** NULL" on that family's columns (planner/filter.h plan_filter_leaves), no GROUP BY, no
** DISTINCT aggregate, every aggregate COUNT(*) or COUNT/SUM/AVG/MIN/MAX of a plain column of
** that family, and no /+ NO_PUSHDOWN +/ hint. Left out: key predicates and key ranges,
** IN, LIKE, OR, NOT, IS NULL, expressions, several families, GROUP BY.
** EXPLAIN prints the decision (planner/explain.c); the executor runs it (exec/op_colagg.c).
** Not here: the run-time refusals (exec/colagg.h).
*/
#ifndef ROWAN_PLANNER_COLAGG_H
#define ROWAN_PLANNER_COLAGG_H

#include <stdbool.h>

#include "planner/plan.h"

#define PLAN_COLAGG_THREADS 2 /* chunks evaluated in parallel */

/* Whether plan q can run as a columnar aggregate. *threads (may be NULL) gets the chunks it
** would use: PLAN_COLAGG_THREADS, or 1 when a FLOAT/DOUBLE/DECIMAL sum must add in row order.
** Pure: reads only the plan. */
bool plan_colagg_check(const plan_query *q, int *threads);

#endif /* ROWAN_PLANNER_COLAGG_H */
