/*
** exec/parallel.h: the parallel scan (issue 23; planner/parallel.h has the plan). A SELECT's
** large table scan is cut at the backend's split points (region boundaries, kv/backend.h
** split_points) and at the local store's block-index cut points (the guideposts Phoenix
** takes from statistics), and its chunks run on a pool of the session's scan threads
** (exec/chunk_pool.h). Three ways to run, after the plan's merge:
**   rows: each chunk's scan and residual filter run ahead on its thread into a bounded
**     queue of row batches; the pipeline reads the queues in chunk order, so its rows come
**     exactly in the serial scan's order (plain scans, LIMIT without ORDER BY, DISTINCT); a
**     salted scan's chunks (runs of buckets, every one on its own thread) queue their rows'
**     unsalted keys too and are merged by them (keyed);
**   sorted: each chunk filters, projects and sorts its rows (or keeps its top LIMIT +
**     OFFSET); the chunks are merged with the k-way merge;
**   aggregate: each chunk filters and aggregates into its own groups; the partial
**     aggregates are combined (exec_agg_merge) in the order the serial scan meets the groups.
** A chunk of an uncovered index scan filters its index rows and looks their data rows up
** itself. A reverse scan's chunks come in descending key order (planner/parallel.h).
** A run stays serial when the statement's transaction has uncommitted writes (the overlay is
** read by one scan), a block trace is on, NEXT VALUE FOR is projected, a correlated
** subquery runs per row, the SERIAL hint is given, an index scan runs on a row-atomic backend
** (its read repair writes, exec/index_repair.c), or an aggregate cannot be combined from
** partial aggregates (planner/parallel.h).
** Files: exec/op_parallel_attach.c (setting, decision), exec/op_parallel.c (the run),
** exec/op_parallel_merge.c (the merges), exec/parallel_int.h (their shared structs).
** Not here: the pipeline after the merge (exec/op_query.c), EXPLAIN (planner/explain.c).
*/
#ifndef ROWAN_EXEC_PARALLEL_H
#define ROWAN_EXEC_PARALLEL_H

#include <stdbool.h>
#include <stdint.h>

#include "exec/engine.h"
#include "exec/op.h"
#include "planner/parallel.h"

#define EXEC_PAR_THREADS_MAX 64 /* the scan threads setting's largest value */

/* The session's scan threads: threads (0: the number of online processors; 1: every scan
** serial; at most EXEC_PAR_THREADS_MAX) and the estimated rows a scan needs to be cut into
** chunks (min_rows; negative: PLAN_PAR_MIN_ROWS_DEFAULT). EXEC_OK, or EXEC_MISUSE (message
** in err) for threads outside 0..EXEC_PAR_THREADS_MAX. */
int exec_set_parallel(exec_session *s, int threads, int64_t min_rows, exec_error *err);
/* The threads a scan runs on now (the setting, 0 resolved) and the minimum rows. */
int exec_parallel_threads(const exec_session *s);
uint64_t exec_parallel_min_rows(const exec_session *s);

/* Decide q's parallel scan for session s (q->par: a plan_par in arena A, or NULL when q's
** scan is not one to cut); serial_why (or NULL): a reason the statement must run serially.
** Asks the backend for split points only for a scan that qualifies. A plan the columnar
** aggregate takes is not cut (it has chunks of its own) unless `declined`: the pushdown
** declined at run time and the rows path is about to run (exec_query.late_par; the split
** points cost a walk of the family's block index, too much for every aggregate plan).
** EXEC_OK or EXEC_NOMEM. */
int exec_par_attach(exec_session *s, plan_query *q, plan_arena *A, const char *serial_why,
                    bool declined, exec_error *err);

/* ---- The pipeline's calls (exec/op_query.c) --------------------------------------------- */
/* True when x's scan runs in chunks now (see above for the cases that stay serial). */
bool exec_par_wanted(const exec_query *x);
/* True when x's scan could run in chunks if its plan were cut (no transaction writes to
** merge, no row hook, no trace): exec_par_wanted without the plan. */
bool exec_par_possible(const exec_query *x);
/* Open every chunk's scan (on this thread: it holds the statement's interrupt flag) and
** start the threads. x->par is set. EXEC_OK or an error. */
int exec_par_open(exec_query *x, exec_error *err);
/* True when the chunks' rows come through exec_par_next (the rows way). */
bool exec_par_rows(const exec_query *x);
/* The rows way: the next row in key order into row (x->direct: out's slots; else the table's
** columns). EXEC_ROW, EXEC_DONE, or a chunk's error (the first in chunk order). */
int exec_par_next(exec_query *x, cat_value *row, exec_error *err);
/* The sorted and aggregate ways: wait for every chunk and merge into x's buffer (sorted
** rows; or the groups through exec_query_take_groups). EXEC_OK or the first error. */
int exec_par_gather(exec_query *x, exec_error *err);
/* Stop the threads, close the chunks' scans, add their figures to x->act. Idempotent. */
void exec_par_close(exec_query *x);

/* exec/op_query.c: finish groups built outside the rows path (the columnar aggregate, the
** chunks): with no GROUP BY the one group g; else gs[0..n) in the order the serial scan meets
** them (streamed out in that order, or put into the hash table in it), then sorted as the
** plan says. Takes g, gs and their accumulators. EXEC_OK or an error. */
int exec_query_take_groups(exec_query *x, exec_mrow *g, exec_mrow **gs, size_t n,
                           exec_error *err);

#endif /* ROWAN_EXEC_PARALLEL_H */
