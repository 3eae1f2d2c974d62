/*
** exec/op.h: the executor's operators. A plan_query (planner/plan.h) runs as a pipeline of
** steps, each counting its rows in and out for EXPLAIN ANALYZE:
**   scan (exec/scan.c: point, range, skip or full, forward or reverse, with the pushed
**   filter and limit inside the kv scan, rows decoded with exec/rowcodec.h)
**   -> filter (residual WHERE terms) -> aggregate (streaming on a key prefix, or hashed)
**   -> HAVING -> project -> DISTINCT -> sort (in memory, capped) or top-n heap
**   -> OFFSET / LIMIT.
** A query over several tables has a join tree (exec/op_join.h) in place of the scan: its
** joined rows go through the same steps, the filter being the WHERE terms left after it.
** exec/op_query.c drives the pipeline; exec/op_rows.c holds the materialized rows, the
** sort, the top-n heap and the hash tables.
**
** Not here: writes (exec/write.c), the session (exec/engine.c).
*/
#ifndef ROWAN_EXEC_OP_H
#define ROWAN_EXEC_OP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "exec/agg.h"
#include "exec/arena.h"
#include "exec/backend_caps.h"
#include "exec/engine.h"
#include "exec/eval.h"
#include "exec/func.h"
#include "exec/rowcodec.h"
#include "kv/backend.h"
#include "kv/kv.h"
#include "planner/plan.h"
#include "planner/plan_select.h"

#define EXEC_SORT_MEMORY_DEFAULT (256u << 20) /* bytes a sort may hold in memory */
#define EXEC_JOIN_MEMORY_DEFAULT (256u << 20) /* bytes the rows one join holds may take */

/* ---- Scan --------------------------------------------------------------------------- */
/* Buffers a prepared statement keeps from run to run for its scan (exec_scan_open_cached),
** so a run allocates none of them: the row codec of the last table scanned, the row key
** buffer, the kv range and qualifier projection arrays. Zero-initialize; the owner frees it
** with exec_scan_cache_free, and must free it after a DDL (a table pointer may then name
** another table). */
typedef struct exec_scan_cache {
  const cat_table *table;    /* table rc was built for, or NULL (nothing built) */
  exec_rowcodec rc;          /* its row codec */
  uint8_t *key;              /* CAT_KEY_MAX bytes for the current row key, or NULL */
  kv_range *ranges;          /* kv ranges, cap_ranges of them */
  uint32_t cap_ranges;       /* allocated */
  uint8_t *qbytes;           /* qualifier bytes, 2 per column (cap_cols + 1 columns) */
  const uint8_t **qp;        /* qualifier pointers (cap_cols + 1) */
  uint32_t *ql;              /* qualifier lengths (cap_cols + 1) */
  int cap_cols;              /* columns the qualifier arrays hold */
} exec_scan_cache;

/* Free a scan cache's buffers; it is zeroed and reusable. */
void exec_scan_cache_free(exec_scan_cache *c);

/* ORDER SCAN_STATE: m, lm and vmap stay last. exec_scan_open zeroes the fields before them
** and only the header of each metrics struct (a kv_scan_metrics' families[] past
** n_families is never read), so a run does not clear two 816-byte arrays it will overwrite
** or not use; vmap is set by each open as far as it is read (n_sets first). */
typedef struct exec_scan_state {
  const plan_scan *ps;       /* the plan step */
  kv_backend *be;            /* the store's backend (kv/backend.h) */
  kv_backend_scan *kv;       /* open backend scan, or NULL */
  struct exec_salt_scan *salt; /* a salted table's merged bucket scans (exec/salt_merge.h),
                                  or NULL (then kv is the scan) */
  kv_range *ranges;          /* kv ranges built from ps->ranges (malloc) */
  exec_rowcodec rc;          /* row decoder */
  bool rc_ok;                /* rc initialized */
  bool done;                 /* no more rows */
  bool keep_key;             /* copy each row's key to key/key_len: index scans (the lookup
                                reads it) and exec_scan_open's callers (DELETE); a cached
                                table scan of a query does not need it */
  uint64_t rows_assembled;   /* rows decoded */
  uint8_t *key;              /* key of the current row when keep_key (CAT_KEY_MAX bytes) */
  size_t key_len;            /* its length */
  struct exec_index_codec *ic; /* index scans: the index row codec (malloc), or NULL */
  const kv_batch *overlay;   /* index scans: the transaction's batch, for the lookups */
  kv_backend_scan *lk;       /* the last lookup's scan (its row backs the slots) */
  bool status;               /* index scans on a row-atomic backend: index rows' status is
                                looked at, unverified ones repaired (exec/index.h) */
  struct exec_index_repair *repair; /* the read repair of unverified rows, opened at the first
                                one, or NULL */
  uint64_t lookups;          /* lookups done */
  uint64_t lookups_found;    /* lookups that found their data row */
  exec_rowcodec *rcp;        /* the row decoder in use: &rc, or the cache's */
  exec_scan_cache *cache;    /* the statement's kept buffers, or NULL (all owned here) */
  uint64_t snap;             /* index scans that look rows up: the snapshot acquired at open,
                                which the index scan and every lookup read at (0: none) */
  bool residual;             /* ps->filter is evaluated here on each row: the backend takes no
                                callback filter (kv_backend_caps.filters) */
  exec_skip_emul skip;       /* a skip scan by prefix the backend cannot do, done here
                                (exec/backend_caps.h; skip.on false: none) */
  uint64_t own_limit;        /* with residual or skip.on: ps->kv_limit, counted here (the
                                backend's limit would count rows dropped here); 0 = none */
  uint64_t rows_out;         /* with residual or skip.on: rows kept */
  uint64_t rows_rejected;    /* with residual: rows it rejected (added to m at close) */
  kv_fx_node *fx;            /* with residual: the expression the backend got (malloc), or
                                NULL */
  kv_filter_expr fxe;        /* it (nodes = fx) */
  int64_t as_of;             /* the read time taken at open (exec/as_of.h), which the
                                lookups read at too: a parallel scan's chunk looks rows up
                                on a thread that does not hold the statement's */
  kv_scan_metrics m;         /* metrics of the kv scan (kept after close) */
  kv_scan_metrics lm;        /* the lookups' metrics, summed */
  exec_vec_map vmap;         /* table scans: the columns of the qualifier projection given
                                to kv, for rows that come as value vectors (n_sets 0: none) */
} exec_scan_state;

/* Add the metrics m of one scan to *sum (families matched by position: each scan of a sum
** reads the same families in the same order). */
void exec_scan_metrics_add(kv_scan_metrics *sum, const kv_scan_metrics *m);

/* Zero the counters of m: every field but families[], whose entries past n_families (0
** now) no reader looks at. */
static inline void exec_metrics_zero(kv_scan_metrics *m) {
  memset(m, 0, offsetof(kv_scan_metrics, families));
}

/* Copy the counters of src and its n_families family entries into dst. */
static inline void exec_metrics_copy(kv_scan_metrics *dst, const kv_scan_metrics *src) {
  uint32_t n = src->n_families < KV_SCAN_MAX_FAMILIES ? src->n_families : KV_SCAN_MAX_FAMILIES;
  memcpy(dst, src, offsetof(kv_scan_metrics, families) + n * sizeof src->families[0]);
}

/* Open the scan of plan step ps through backend be; overlay (may be NULL): an open transaction's
** batch, read as committed (the transaction sees its own writes). After each EXEC_ROW of
** exec_scan_next, key/key_len hold the row's key. EXEC_OK or an error. */
int exec_scan_open(exec_scan_state *s, kv_backend *be, const plan_scan *ps,
                   const kv_batch *overlay, exec_error *err);
/* exec_scan_open with the buffers of cache (not NULL), which keeps them after close for the
** next open: its row codec is rebuilt only when ps->table is another table. The row key is
** kept in key/key_len only for index scans (the query pipeline reads no other). slots (NULL:
** the identity; table scans only): the slot of the row passed to exec_scan_next that each
** needed column's value goes to (exec_rowcodec_prepare), e.g. its place in the projection. */
int exec_scan_open_cached(exec_scan_state *s, kv_backend *be, const plan_scan *ps,
                          const kv_batch *overlay, exec_scan_cache *cache,
                          const int16_t *slots, exec_error *err);
/* Next row decoded into row (table->n_columns slots; only needed slots set): EXEC_ROW,
** EXEC_DONE, or an error (EXEC_CORRUPT, EXEC_IOERR). */
int exec_scan_next(exec_scan_state *s, cat_value *row, exec_error *err);
/* Index scans with ps->lookup: look the data row of the current index row up by its PK and
** decode the needed columns the index does not hold into row. EXEC_ROW when found,
** EXEC_DONE when the data row does not exist (skip the index row), or an error. */
int exec_scan_lookup(exec_scan_state *s, cat_value *row, exec_error *err);
/* Close (idempotent); metrics stay in s->m (the lookups' in s->lm). */
void exec_scan_close(exec_scan_state *s);
/* Map a kv status to an EXEC_* code, with kv's message into err. */
int exec_kv_error(int kv_rc, exec_error *err);

/* ---- Materialized rows (exec/op_rows.c) ------------------------------------------------ */
typedef struct exec_mrow {
  uint64_t hash;      /* hash of the key values (hash tables) */
  size_t bytes;       /* bytes of this allocation (memory accounting) */
  exec_agg *aggs;     /* accumulators of a group (hash/stream aggregate), or NULL */
  int n;              /* values */
  cat_value v[];      /* values; strings point into the same allocation */
} exec_mrow;

/* A malloc'd copy of v[0..n) with its strings and n_aggs accumulators (zeroed); NULL on
** OOM. Free with exec_mrow_free. */
exec_mrow *exec_mrow_make(const cat_value *v, int n, int n_aggs);
void exec_mrow_free(exec_mrow *r, int n_aggs);

/* A hash table of rows keyed by their first n_key values. */
typedef struct exec_rowset {
  exec_mrow **slots;  /* open addressing; NULL = empty */
  size_t cap;         /* slots (power of two) */
  size_t n;           /* rows held */
  int n_key;          /* key values */
  size_t bytes;       /* memory held by rows */
  exec_mrow *last;    /* the row found or added last: a run of equal keys (rows that come
                         in key order) finds it again with one comparison, no hashing */
} exec_rowset;

/* Find the row whose first n_key values equal key (NULL equals NULL); if absent and
** insert is true, add a copy (with n_aggs accumulators) and set *added. Returns the row,
** or NULL when absent (insert false) or on OOM (*oom set). */
exec_mrow *exec_rowset_find(exec_rowset *s, const cat_value *key, int n_values, int n_aggs,
                            bool insert, bool *added, bool *oom);
void exec_rowset_free(exec_rowset *s, int n_aggs);
/* The hash exec_rowset_find gives key[0..n_key) (rows equal as it compares them hash
** equal; exec_mrow.hash of a held row). */
uint64_t exec_rowset_hash(const cat_value *key, int n_key);

/* Compare two projected rows by ORDER BY terms. */
int exec_order_cmp(const plan_order *o, int n, const cat_value *a, const cat_value *b);

/* ---- The query pipeline (exec/op_query.c) ------------------------------------------------ */
/* ORDER QUERY: exec_query_open zeroes [start, evmsg), [scan_open, act), the counters of act
** and [timing, end): evmsg is written before it is read, scan is set up by exec_scan_open
** (nothing reads it before scan_open), act's two kv_scan_metrics only by their headers. A
** field added here goes in one of the zeroed spans. */
#define EXEC_GROUP_FAST 4 /* GROUP BY date roundings a query evaluates without exec_eval */

typedef struct exec_query {
  const plan_query *q;       /* the plan */
  int n_gfast;               /* GROUP BY terms in gfast, in term order */
  struct {
    int term;                /* the GROUP BY term: ROUND/FLOOR/CEIL/TRUNC(column, unit[, n]) */
    int col;                 /* the column's slot in the input row */
    exec_date_round r;       /* the rounding, resolved once per run */
  } gfast[EXEC_GROUP_FAST];
  kv_backend *be;            /* the store's backend: scans and lookups go through it */
  kv_db *db;                 /* the local store under be (kv_backend_local_db), for what only
                                it has: spill files, the columnar aggregate, the planner's
                                estimates of a join leaf; NULL under another backend */
  const kv_batch *overlay;   /* open transaction's writes, or NULL */
  kv_batch *own_overlay;     /* an index scan that looks rows up: a copy of those writes as
                                they were at open (overlay points at it), so its lookups read
                                what its index rows were read from, after later writes of the
                                transaction and after its COMMIT alike; freed at close */
  struct exec_par *par;      /* the scan's chunks running in parallel (exec/parallel.h), or
                                NULL: the serial scan */
  exec_eval_ctx ev;          /* evaluation context (params, scratch) */
  exec_arena scratch;        /* per-row scratch */
  char evmsg[EXEC_ERRMSG_MAX]; /* evaluation errors */
  exec_scan_state scan;      /* the scan step */
  bool scan_open;            /* scan opened */
  cat_value *in;             /* input row (table columns) */
  cat_value *aggrow;         /* aggregate row (groups then aggregates) */
  cat_value *out;            /* projected row (n_proj) */
  int phase;                 /* internal state */
  bool direct;               /* rows decode straight into out (plan_query.direct, with the
                                statement's cache): no project step */
  bool single_done;          /* SELECT without FROM: the one row was produced */
  bool src_done;             /* streaming aggregate: the input is exhausted */
  exec_rowset groups;        /* hash aggregate groups / DISTINCT set */
  exec_rowset dset;          /* DISTINCT set */
  exec_mrow *cur_group;      /* streaming aggregate: the current group */
  exec_mrow **rows;          /* buffered output rows (sort, top-n, aggregate results) */
  size_t n_rows, cap_rows;   /* count, allocated */
  size_t pos;                /* next buffered row to emit */
  size_t mem;                /* bytes of buffered rows */
  size_t mem_limit;          /* sort memory limit */
  size_t agg_mem;            /* heap bytes of open groups' DISTINCT sets and percentile values */
  int64_t skipped;           /* OFFSET rows skipped so far */
  int64_t emitted;           /* rows emitted */
  plan_actuals act;          /* per-step counters */
  bool timing;               /* measure step times (EXPLAIN ANALYZE) */
  struct exec_query_cache *cache; /* the statement's kept buffers, or NULL */
  struct exec_join *join;    /* a join query: the tree feeding `in` (exec/op_join.h), opened
                                at the first next; NULL otherwise */
  struct exec_join_ctx *jcx; /* its shared context (malloc) */
  cat_value *jnulls;         /* the joined row of typed NULLs (malloc), for padding */
  size_t join_mem;           /* the join memory bound (0: EXEC_JOIN_MEMORY_DEFAULT); set by
                                the caller after open */
  int (*row_hook)(void *arg, exec_error *err); /* called before each row is projected (the
                                statement's sequence values, exec/sequence.h), or NULL; set
                                by the caller after open */
  void *row_hook_arg;        /* its argument */
  int (*late_par)(void *arg, exec_error *err); /* the columnar aggregate declined: cut the
                                plan's scan into chunks now (the statement's exec_par_attach,
                                declined), or NULL */
  void *late_par_arg;        /* its argument */
} exec_query;

/* Buffers a prepared statement keeps from run to run for its query (exec_query_open_cached):
** the input, aggregate and output rows and the scan's (exec_scan_cache). Zero-initialize;
** free with exec_query_cache_free (also after a DDL, see exec_scan_cache). */
typedef struct exec_query_cache {
  exec_scan_cache scan;      /* the scan's buffers */
  cat_value *in, *aggrow, *out; /* row buffers, in_cap / agg_cap / out_cap values + 1 */
  int in_cap, agg_cap, out_cap; /* their sizes */
  cat_value *in_nulls;       /* the input row as a run starts (NULL typed as each column of
                                in_table), copied instead of built at each open */
  const cat_table *in_table; /* table in_nulls was made for, or NULL */
} exec_query_cache;

/* exec_query_open using (and keeping, at close) the buffers of cache (not NULL): no
** allocation for rows or the scan's decoder when they fit. Same results and errors. */
int exec_query_open_cached(exec_query *x, kv_backend *be, const plan_query *q,
                           const cat_value *params, int n_params, int64_t now_us,
                           size_t mem_limit, const kv_batch *overlay, exec_query_cache *cache,
                           exec_error *err);
/* Free a query cache's buffers; it is zeroed and reusable. */
void exec_query_cache_free(exec_query_cache *c);

/* Start running plan q (scan opened lazily at the first next). params: bound values.
** mem_limit: sort memory (0 = default). overlay: the transaction's batch or NULL. */
int exec_query_open(exec_query *x, kv_backend *be, const plan_query *q, const cat_value *params,
                    int n_params, int64_t now_us, size_t mem_limit, const kv_batch *overlay,
                    exec_error *err);
/* Next result row in x->out: EXEC_ROW, EXEC_DONE or an error. */
int exec_query_next(exec_query *x, exec_error *err);
/* Release everything (idempotent). Counters stay in x->act. */
void exec_query_close(exec_query *x);
/* Stop reading the overlay x was opened with (the transaction's batch is about to be or
** has been freed): later scan opens and index lookups read the store alone. */
void exec_query_drop_overlay(exec_query *x);

#endif /* ROWAN_EXEC_OP_H */
