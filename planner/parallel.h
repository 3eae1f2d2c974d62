/*
** planner/parallel.h: the parallel scan of a query (issue 23, Apache Phoenix's parallel scan
** model done locally). A plan_par says into how many chunks a query's scan is cut (at the
** backend's split points: the local store's block-index cut points, the row-atomic
** backend's region boundaries; Phoenix cuts at region boundaries and statistics
** guideposts), on how many threads the chunks run, and how their results are merged:
** concatenated in key order (a plain scan), merge-sorted (ORDER BY: each chunk sorts its rows), top-N per chunk then merged (ORDER BY
** ... LIMIT), or combined from per-chunk partial aggregates (COUNT, MIN, MAX, SUM and AVG of
** integers or into a DOUBLE, with or without GROUP BY); a query with another aggregate
** (DISTINCT, a DECIMAL sum) stays serial and says why, as does a LIMIT on groups streamed in key order (the
** serial scan stops after them). EXPLAIN prints it ("CLIENT n-CHUNK PARALLEL m-WAY",
** "CLIENT 1-CHUNK SERIAL") and the executor runs it (exec/op_parallel.c), so both read one
** struct.
**
** Which queries get one: a table or index scan (no join, no set operation) over a range,
** skip or full scan, forward or reverse, estimated at least the session's minimum rows
** (small scans and point lookups stay as they were: no plan_par, no change in EXPLAIN). A
** reverse scan's chunks come in descending key order (chunk 0 holds the highest keys). A
** salted table's (or salted index's) scan is cut at its buckets (plan_par_build_salted):
** each chunk reads a run of buckets, or a piece of one bucket between split points inside
** it; its rows way merges the chunks by their unsalted key (`keyed`), as the serial scan
** merges the buckets, so a salted table is still read in key order.
** Not here: the split points themselves (kv/backend.h split_points), the threads and merges
** (exec/op_parallel.c, exec/chunk_pool.c).
*/
#ifndef ROWAN_PLANNER_PARALLEL_H
#define ROWAN_PLANNER_PARALLEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "planner/plan.h"

#define PLAN_PAR_MAX_CHUNKS 32 /* chunks one scan is cut into at most */

/* How the chunks' results are merged. ORDER PAR_MERGE: plan_par_merge_name follows it. */
enum plan_par_merge {
  PLAN_PAR_CONCAT = 0,     /* rows concatenated in key order (chunk order) */
  PLAN_PAR_MERGE_SORT = 1, /* each chunk sorts its projected rows; a k-way merge */
  PLAN_PAR_TOPN = 2,       /* each chunk keeps its top LIMIT + OFFSET rows; a k-way merge */
  PLAN_PAR_AGG = 3,        /* each chunk aggregates; the partial aggregates are combined */
  PLAN_PAR_SERIAL_AGG = 4  /* an aggregate partial aggregates cannot give: the scan runs
                              serially (every row would cross threads to one aggregator) */
};

typedef struct plan_par {
  int threads;               /* threads the chunks run on (m); 1: serial */
  uint32_t n_chunks;         /* chunks (n), 1..PLAN_PAR_MAX_CHUNKS; 1: serial */
  plan_key_range **ranges;   /* per chunk: the scan's key ranges cut to the chunk (arena) */
  uint32_t *n_ranges;        /* per chunk: their count (>= 1) */
  int merge;                 /* enum plan_par_merge */
  const char *serial_why;    /* serial (threads or n_chunks 1): why, for EXPLAIN; or NULL */
  const char *agg_why;       /* PLAN_PAR_SERIAL_AGG: the aggregate that keeps it serial */
  int asked;                 /* the threads setting it was made for (a kept plan is cut
                                again when the setting changes) */
  uint64_t min_rows;         /* the minimum rows setting it was made for */
  uint16_t *salt_lo, *salt_hi; /* a salted scan: per chunk the buckets [lo, hi) it reads
                                (arena); NULL when the scan is not salted */
  bool keyed;                /* a salted scan's rows way: the chunks' rows are merged by
                                their unsalted keys (every chunk runs at once: n_chunks is
                                at most threads) */
} plan_par;

/* Rows and bytes a query's scan must be estimated at, at least, before it is cut into
** chunks (the default of the session setting, exec_set_parallel). */
#define PLAN_PAR_MIN_ROWS_DEFAULT 100000u

/* Whether q's scan may run in chunks, as said above: true, or false with *why NULL when it
** is not a case for chunks at all (a join, a point lookup, a skip scan by prefix, a small
** scan). (*why is kept for a reason EXPLAIN would show; none is left today.) min_rows: the
** session's threshold on q->scan.est_rows. */
bool plan_par_eligible(const plan_query *q, uint64_t min_rows, const char **why);

/* The merge q's chunks need (enum plan_par_merge); for PLAN_PAR_SERIAL_AGG *agg_why gets the
** aggregate's text (q's memory). */
int plan_par_merge_of(const plan_query *q, const char **agg_why);

/* Cut q's scan at the split keys cut[0..n_cut) (ascending, distinct) into chunks: chunk i
** covers [cut[i-1], cut[i]) (the first from the first key, the last to the last), and gets
** the scan's ranges cut to it; chunks that hold none of the ranges are dropped. threads: the
** threads to run on (>= 1). Fills *out in arena A (keys copied). EXEC_OK or EXEC_NOMEM. */
int plan_par_build(const plan_query *q, const uint8_t *const *cut, const uint32_t *cut_len,
                   uint32_t n_cut, int threads, plan_arena *A, plan_par *out);

/* As plan_par_build for the scan of a salted table or salted index of `buckets` buckets
** (1..256): cut[0..n_cut) are its split keys (stored keys: the bucket byte first;
** ascending, distinct). The rows way (PLAN_PAR_CONCAT) gets keyed chunks of whole buckets,
** at most `threads` of them; the other merges get a chunk per bucket (runs of buckets past
** PLAN_PAR_MAX_CHUNKS), the buckets cut again at the split keys inside them while chunks
** are fewer than 4 per thread. EXEC_OK or EXEC_NOMEM. */
int plan_par_build_salted(const plan_query *q, int buckets, const uint8_t *const *cut,
                          const uint32_t *cut_len, uint32_t n_cut, int threads, plan_arena *A,
                          plan_par *out);

/* The salt buckets of the table or index q's scan reads, 0 when it is not salted. */
int plan_par_buckets(const plan_query *q);

/* EXPLAIN's prefix of the scan line for p: "CLIENT n-CHUNK PARALLEL m-WAY " or
** "CLIENT 1-CHUNK SERIAL " into buf[0..cap). */
void plan_par_prefix(const plan_par *p, char *buf, size_t cap);

/* True when p runs in parallel (more than one chunk and thread). */
static inline bool plan_par_parallel(const plan_par *p) {
  return p && p->threads > 1 && p->n_chunks > 1;
}

#endif /* ROWAN_PLANNER_PARALLEL_H */
