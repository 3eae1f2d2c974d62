/*
** planner/colagg.h: which plans run as the columnar aggregate pushdown (issue 8; the
** executor's side is exec/colagg.h): COUNT(*) / COUNT(c) / SUM / AVG / MIN / MAX, ungrouped
** or grouped by key columns, over one table whose WHERE is an AND of simple comparisons of
** one family's non-key columns with constants, answered per store-file block by
** kv/colscan/colscan.h.
**
** Eligible (plan_colagg_check, on the plan alone): a table scan (full, over key ranges, a
** skip scan over ranges or over each leading prefix; no index, no pushed limit) reading one
** non-key family (and, without GROUP BY, maybe the key family), every WHERE
** term answered by the key ranges or pushed into the scan filter (no residual), the filter
** an AND of "column op constant" / "column IS NOT NULL" on that family's columns
** (planner/filter.h plan_filter_leaves) or none (then with key ranges or GROUP BY), no
** DISTINCT aggregate, every aggregate COUNT(*) (not with the key family) or
** COUNT/SUM/AVG/MIN/MAX of a plain column of that family, GROUP BY terms (at most
** PLAN_COLAGG_MAX_GROUP) that are primary key columns or ROUND/FLOOR/CEIL/TRUNC of a DATE or
** TIMESTAMP key column by constants or parameters, a forward scan, no LIMIT over a streaming
** GROUP BY (it stops the scan early), no /+ NO_PUSHDOWN +/ hint, and a storage backend
** that can run it (the plan's scan records it: plan_scan.no_columnar; HBase cannot, so its
** EXPLAIN shows the row-way plan and chunks that run). Left out:
** IN, LIKE, OR, NOT, IS NULL, expressions, several non-key families, GROUP BY on other
** columns or expressions, GROUP BY when the key family is read (rows whose aggregated
** columns are all NULL make groups: FAMILIES: _k, F). When F covers every row
** (docs/FORMAT_SQL.md "Row cover") the scan reads F alone, with all its columns, and
** GROUP BY and COUNT(*) are taken (a row's presence is any of its cells).
** EXPLAIN prints the decision (planner/explain.c); the executor runs it (exec/op_colagg.c).
** Not here: the run-time refusals (exec/colagg.h).
*/
#ifndef ROWAN_PLANNER_COLAGG_H
#define ROWAN_PLANNER_COLAGG_H

#include <stdbool.h>

#include "planner/plan.h"

#define PLAN_COLAGG_THREADS 2 /* chunks evaluated in parallel when the executor did not say
                                 (plan_query.colagg_threads) */
#define PLAN_COLAGG_MAX_GROUP 16 /* GROUP BY terms it computes from the key */

/* Whether plan q can run as a columnar aggregate. *threads (may be NULL) gets the chunks it
** would use: plan_query.colagg_threads (the scan threads setting, at most 4; unset:
** PLAN_COLAGG_THREADS), or 1 when a DECIMAL sum must add in row order.
** Pure: reads only the plan. */
bool plan_colagg_check(const plan_query *q, int *threads);
/* Whether q's aggregates must add in key order (a DECIMAL sum: one chunk, and no rows read
** the row way afterwards), whatever the thread count. */
bool plan_colagg_ordered(const plan_query *q);

/* The index in ps->families of the one non-key family a pushdown reads, or -1 (several,
** or none). The other family, if any, is the key family (table family 0). */
int plan_colagg_family(const plan_scan *ps);

#endif /* ROWAN_PLANNER_COLAGG_H */
