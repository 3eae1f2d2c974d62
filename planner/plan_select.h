/*
** planner/plan_select.h: building a plan_query (planner/plan.h) from a bound SELECT
** (planner/select.c), and EXPLAIN / EXPLAIN ANALYZE text of a plan (planner/explain.c).
**
** Not here: binding (planner/plan.h plan_bind), running (exec/op.h).
*/
#ifndef ROWAN_PLANNER_PLAN_SELECT_H
#define ROWAN_PLANNER_PLAN_SELECT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "kv/backend.h"
#include "planner/plan.h"

/* Plan the scan of table t for `where` (bound, may be NULL): key ranges, pushed filter,
** residual, families (used[i]: column i is needed after decoding; may be NULL), estimates.
** sc is filled (free with plan_scan_free, also after an error). EXEC_OK, EXEC_NOMEM,
** EXEC_TOOBIG with msg. */
int plan_scan_build(kv_backend *be, const cat_table *t, const plan_expr *where, const bool *used,
                    const cat_value *params, int n_params, plan_arena *A, plan_scan *sc,
                    char *msg, size_t cap);

/* Plan the row source of DELETE d as the SELECT of the same table and WHERE would be
** planned: key ranges, pushed filter and residual over the table, or an index scan when
** plan_index_choose (planner/index_choice.h) finds one cheaper (or d's hint forces one):
** then sc->index is set, sc->residual is evaluated after the lookup and the data row key is
** the index row key after its sc->ix_n_keys indexed values. No column is needed beyond
** those the WHERE reads. An IMMUTABLE_ROWS table is always scanned itself (its index may
** hold stale rows, which must not decide what is deleted). sc is filled (free with
** plan_scan_free, also after an error); the plan's allocations are in A. EXEC_OK,
** EXEC_NOMEM, EXEC_ERROR, EXEC_TOOBIG with msg. */
int plan_delete_scan_build(kv_backend *be, const plan_delete *d, const cat_value *params,
                           int n_params, plan_arena *A, plan_scan *sc, char *msg, size_t cap);
void plan_scan_free(plan_scan *sc);

/* The kv range of derived key range x (pointing into x's keys). */
static inline void plan_kv_range(const plan_key_range *x, kv_range *k) {
  *k = (kv_range){x->start, x->start_len, x->start_incl, x->end, x->end_len, x->end_incl};
}

/* Store-file blocks one scan's estimate may read to count the rows of the blocks its key
** ranges cut (kv_estimate_opts.exact): at most this many block loads, through the block
** cache, per table or index scan estimated (docs/EXPLAIN.md "ESTIMATE"). */
#define PLAN_EST_BLOCKS 64

/* Fill sc's figures from kv (sc's ranges and family_ids set): total_rows is set from the
** stats of count_family; total_bytes adds the stats of sc's families; unless sc is
** PLAN_SCAN_NOTHING, per range (once over everything when it has none) est_rows adds
** kv_be_estimate on rows_family (cut blocks counted from their keys, PLAN_EST_BLOCKS
** block reads at most over all the ranges; also on count_family, the larger kept, when sc
** reads the key family) and est_bytes that of sc's families; est_rows and est_bytes are
** then capped at a nonzero total_rows and total_bytes; est_family is rows_family. A family whose stats or
** estimate fail adds nothing. */
void plan_scan_estimate(kv_backend *be, uint32_t count_family, uint32_t rows_family, plan_scan *sc);

/* The on-disk bytes `seeks` seeks read in sc's families: per family read, the average bytes
** of a block of its store files times the seeks, but no more blocks than the family has
** (seeks into a small table meet the same blocks; 0 for a family with none). */
uint64_t plan_seek_bytes(kv_backend *be, const plan_scan *sc, uint64_t seeks);

/* A scan sc (estimated by plan_scan_estimate) that stops after `limit` rows: est_rows is
** capped at limit and est_bytes becomes the bytes up to the limit-th row in scan order
** (kv_estimate_opts.limit: the store-file blocks holding the first rows of each range in
** turn, until limit rows; a skip scan by prefix scales its bytes by the share instead). */
void plan_scan_estimate_limit(kv_backend *be, plan_scan *sc, uint64_t limit);

/* Plan SELECT s with the bound parameter values into *q (free with plan_query_free, also
** after an error). EXEC_OK, or EXEC_ERROR (bad LIMIT/OFFSET value), EXEC_NOMEM, EXEC_TOOBIG
** with msg. */
int plan_query_build(kv_backend *be, const plan_select *s, const cat_value *params, int n_params,
                     plan_arena *A, plan_query *q, char *msg, size_t cap);
void plan_query_free(plan_query *q);

/* Actual figures of a run, for EXPLAIN ANALYZE (all zero when not run). */
typedef struct plan_step_actual {
  uint64_t rows_in;   /* rows that reached the step */
  uint64_t rows_out;  /* rows it passed on */
  double ms;          /* time spent in the step (and below it) */
} plan_step_actual;

/* ORDER PLAN_STEP: explain.c prints steps in this order. */
enum plan_step {
  PLAN_STEP_SCAN = 0, PLAN_STEP_FILTER, PLAN_STEP_AGG, PLAN_STEP_HAVING, PLAN_STEP_PROJECT,
  PLAN_STEP_DISTINCT, PLAN_STEP_SORT, PLAN_STEP_LIMIT, PLAN_STEP_WRITE, PLAN_STEP_COUNT_
};

/* What the columnar aggregate pushdown did (exec/op_colagg.c), for EXPLAIN ANALYZE. */
typedef struct plan_colagg_actual {
  bool tried;             /* the query was eligible and the pushdown was attempted */
  bool ran;               /* it answered the query (else the rows path did) */
  const char *why;        /* when tried but not ran: why (static text) */
  int threads;            /* chunks evaluated in parallel */
  uint64_t blocks;        /* blocks evaluated on their columns or handed back */
  uint64_t blocks_fallback; /* blocks handed back to the row path */
  uint64_t ranges;        /* key ranges read the row way (fallback blocks, split rows) */
  uint64_t rows_fallback; /* rows the row way returned */
} plan_colagg_actual;

typedef struct plan_actuals {
  bool analyzed;                          /* the statement was run */
  plan_step_actual step[PLAN_STEP_COUNT_]; /* per step */
  uint64_t rows_assembled;                /* rows decoded after the pushed filter */
  kv_scan_metrics kv;                     /* the scan's kv metrics */
  double total_ms;                        /* whole statement */
  uint64_t lookups;                       /* index scans: lookups into the table */
  uint64_t lookups_found;                 /* of which found their data row */
  uint64_t ix_filter_in, ix_filter_out;   /* rows through the pre-lookup filter */
  kv_scan_metrics lookup_kv;              /* the lookups' kv metrics, summed */
  plan_colagg_actual colagg;              /* the columnar aggregate pushdown (W3) */
  struct {                                /* the parallel scan (planner/parallel.h) */
    bool ran;                             /* its chunks ran on threads */
    uint32_t n;                           /* chunks */
    uint64_t rows[32];                    /* per chunk: rows it handed on (after the filter;
                                             PLAN_PAR_MAX_CHUNKS of them) */
  } par;
  const struct plan_apply_actual {        /* per correlated subquery run per outer row */
    uint64_t runs;                        /* outer rows it ran for */
    uint64_t reused;                      /* outer rows that reused the previous result */
  } *applies;                             /* plan_bound.n_applies of them, or NULL */
} plan_actuals;

/* ORDER ACTUALS: kv is followed by total_ms, lookup_kv by colagg (plan_actuals_zero). */
_Static_assert(offsetof(plan_actuals, total_ms) ==
                   offsetof(plan_actuals, kv) + sizeof(kv_scan_metrics) &&
               offsetof(plan_actuals, colagg) ==
                   offsetof(plan_actuals, lookup_kv) + sizeof(kv_scan_metrics),
               "plan_actuals field order (ORDER ACTUALS)");

/* Zero every counter of a; of its two kv_scan_metrics only the fields before families[]
** (no reader looks at families[] past n_families), so a run clears ~150 bytes, not ~2 KB. */
static inline void plan_actuals_zero(plan_actuals *a) {
  memset(a, 0, offsetof(plan_actuals, kv));
  memset(&a->kv, 0, offsetof(kv_scan_metrics, families));
  memset(&a->total_ms, 0, offsetof(plan_actuals, lookup_kv) - offsetof(plan_actuals, total_ms));
  memset(&a->lookup_kv, 0, offsetof(kv_scan_metrics, families));
  memset(&a->colagg, 0, sizeof *a - offsetof(plan_actuals, colagg));
}

/* The EXPLAIN text of a statement: lines appended to *lines (arena strings; *n counts).
** bound: the statement; q: its SELECT plan, or the scan of a DELETE (del_scan) / the
** source of an UPSERT SELECT; a: actual figures or NULL. EXEC_OK or EXEC_NOMEM. */
/* n bytes as EXPLAIN writes them ("512 B", "1.5 KB", "2.0 MB", "3.1 GB"), and n with
** thousands separators ("1,234,567"), into buf[0..cap). Shared by EXPLAIN, its join tree
** and the row-key advisor (exec/advise.c). */
void plan_human_bytes(uint64_t n, char *buf, size_t cap);
void plan_grouped(uint64_t n, char *buf, size_t cap);

int plan_explain(const plan_bound *bound, const plan_query *q, const plan_scan *del_scan,
                 const plan_actuals *a, plan_arena *A, char ***lines, int *n);
/* The same plan as one JSON document (EXPLAIN (FORMAT JSON), docs/EXPLAIN.md): one node per
** line plan_explain makes, in the same order, holding the same figures and texts. *doc is
** an arena string. EXEC_OK or EXEC_NOMEM. */
int plan_explain_json(const plan_bound *bound, const plan_query *q, const plan_scan *del_scan,
                      const plan_actuals *a, plan_arena *A, char **doc);

#endif /* ROWAN_PLANNER_PLAN_SELECT_H */
