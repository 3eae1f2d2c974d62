/*
** exec/colagg.h: the columnar aggregate pushdown (issues 8 and 22): COUNT(*) / COUNT(c) /
** SUM / AVG / MIN / MAX over one table, ungrouped or grouped by key columns (and date
** roundings of them), over the whole table or the plan's key ranges, whose WHERE is an AND
** of simple comparisons of one family's non-key columns with constants (or only key terms),
** is answered by kv/colscan/colscan.h, per store-file block on the decoded column streams, in
** parallel chunks, without assembling rows. EXPLAIN shows it as "CLIENT 2-CHUNK PARALLEL
** 2-WAY FULL SCAN OVER T" (or RANGE SCAN, SKIP SCAN ...) with a "SERVER COLUMNAR AGGREGATE"
** line; EXPLAIN ANALYZE adds what it read and what went the row way.
**
** Eligible: planner/colagg.h (plan_colagg_check, on the plan alone).
** At run time it is refused whole (the rows path runs, EXPLAIN ANALYZE says why) inside a
** transaction with pending writes, when the family's store files overlap, and for a
** DECIMAL SUM or AVG (summed in row order, one chunk) when any row needs the row way.
** Rows with memstore cells, and the blocks holding their keys, go the row way (more than
** 4,096 such rows in the key ranges refuse it whole). With GROUP BY the groups' order is the rows
** path's, and every sum is too (DECIMAL: one chunk in key order; DOUBLE: exactly rounded). Blocks and rows kv/ hands back are read the row way at the same
** snapshot and added, so the answer is exactly the rows path's.
*/
#ifndef ROWAN_EXEC_COLAGG_H
#define ROWAN_EXEC_COLAGG_H

#include <stdbool.h>

#include "exec/op.h"

#include "kv/colscan/colscan.h"
#include "planner/colagg.h"

#define EXEC_COLAGG_THREADS ((int)KV_COLAGG_MAX_THREADS) /* chunks evaluated in parallel, at most */

/* Try to answer x's aggregate with the pushdown. EXEC_ROW: without GROUP BY *g is a new
** group row (no key values, x->q->sel->n_aggs accumulators) the caller finishes (HAVING,
** project) and frees with exec_mrow_free; with GROUP BY *groups (malloc) holds *n_groups
** group rows (key values and accumulators) in the order the rows path meets them (the order
** of their first rows in key order), each for the caller to finish and free with
** exec_mrow_free, then the array; x->act has the scan's figures. EXEC_DONE: not applicable
** (nothing was consumed; x->act.colagg says why when it was tried): run the rows path.
** Otherwise an error code with err filled (a corrupt block, an aggregate overflow, out of
** memory). */
int exec_colagg_run(exec_query *x, exec_mrow **g, exec_mrow ***groups, size_t *n_groups,
                    exec_error *err);

#endif /* ROWAN_EXEC_COLAGG_H */
