/*
** exec/engine_int.h: the session and statement structs behind exec/engine.h, shared by
** exec/engine.c (life cycle), exec/engine_run.c (running SELECT and EXPLAIN),
** exec/write.c (UPSERT, DELETE) and exec/txn.c (BEGIN / COMMIT / ROLLBACK). Not used
** outside exec/.
*/
#ifndef ROWAN_EXEC_ENGINE_INT_H
#define ROWAN_EXEC_ENGINE_INT_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "catalog/catalog.h"
#include "exec/engine.h"
#include "exec/op.h"
#include "planner/plan.h"
#include "planner/plan_select.h"
#include "planner/point_key.h"
#include "sql/ast.h"

struct exec_session {
  kv_db *db;            /* the store (not owned) */
  kv_backend be;        /* the backend (a copy; by default the local one over db): every
                           scan, lookup and write of the session and its catalog goes
                           through it (kv/backend.h) */
  kv_backend *owned_be; /* the backend exec_session_open made (ROWAN_BACKEND=rowatomic),
                           freed at close, or NULL */
  kv_backend be_under;  /* with overlay_be: the backend given to the session (a copy) */
  kv_backend *overlay_be; /* the client-side overlay over be_under (kv/backend/backend_overlay.h)
                           when that backend reads no overlays (be is then its copy), freed
                           at close; else NULL */
  cat_catalog *cat;     /* the catalog (owned) */
  kv_batch *txn;        /* the open transaction's batch, or NULL */
  kv_batch *spare;      /* an empty batch kept for the next transaction or write statement
                           (exec/txn.c), or NULL */
  int64_t txn_rows;     /* rows written in the transaction */
  int64_t changes;      /* rows changed by the last write statement */
  int n_stmts;          /* statements not finalized */
  uint64_t schema_gen;  /* bumped by every DDL: statements bound before it re-bind */
  struct exec_stmt *txn_readers; /* SELECTs opened inside the open transaction and not yet
                                    closed (linked by rd_next, rd_prev): when it ends they
                                    let go of its batch, and a ROLLBACK of its writes marks
                                    them x_lost (exec/txn.c) */
  size_t sort_mem;      /* bytes a sort may hold */
  size_t join_mem;      /* bytes the rows one join holds may take (exec_set_join_memory) */
  size_t write_mem;     /* a write statement's memory bound (exec_set_write_memory) */
  int par_threads;      /* scan threads (exec_set_parallel; 0: the processors) */
  uint64_t par_min_rows; /* estimated rows a scan needs to be cut into chunks */
  bool par_min_set;     /* par_min_rows was set (else PLAN_PAR_MIN_ROWS_DEFAULT) */
  struct exec_index_touched *idx_touched; /* exec/index.h: row keys written in the open
                                             transaction (write.c), freed at close */
  struct exec_index_maint *maint_cache; /* write.c: index maintenance of the last written
                                           table, reused while schema_gen is maint_gen */
  uint64_t maint_gen;   /* schema_gen when maint_cache was built */
  exec_progress_fn progress; /* backfill progress hook (exec_set_progress), or NULL */
  const atomic_int *interrupt; /* exec_set_interrupt's flag, or NULL */
  void *progress_arg;   /* its argument */
  int64_t as_of_ms;     /* exec_set_as_of: SELECTs read as of this time (ms); 0 = now */
  bool seq_flush;       /* a sequence's block claim is flushed too (exec/sequence.h) */
};

/* Statement states. */
enum { ST_READY = 0, ST_RUNNING, ST_DONE, ST_FAILED };

struct exec_stmt {
  exec_session *s;         /* owning session */
  char *sql;               /* copy of the statement's text */
  size_t sql_len;          /* its length */
  sql_stmt *ast;           /* parsed statement (owned) */
  plan_arena arena;        /* bound statement memory */
  plan_bound bound;        /* bound statement */
  uint64_t schema_gen;     /* session schema_gen at binding */
  uint64_t cover_epoch;    /* cat_row_cover_epoch at binding */
  int n_params;            /* parameters */
  cat_value *params;       /* bound values (strings in param_bytes) */
  uint8_t **param_bytes;   /* owned copies of string parameters (kept from bind to bind) */
  size_t *param_cap;       /* bytes allocated at each param_bytes[i] */
  cat_value *run_params;   /* values converted for this run */
  cat_value *all_params;   /* run_params, then the values of the subqueries run once
                              (exec/engine_sub.c; run arena); what the run plans and reads */
  int n_all;               /* their count */
  plan_query *sub_plans;   /* the subqueries' plans of this run (run arena), for EXPLAIN */
  plan_actuals *sub_acts;  /* their figures */
  int n_sub_plans;         /* plans built (freed at the run's end) */
  bool no_key_lists;       /* bound with PLAN_BIND_NO_KEY_LISTS: a key list's values passed
                              the join memory once (exec/engine_run.c build) */
  bool key_list_over;      /* this run's key list passed it (exec_run_subqueries) */
  struct exec_apply_env *apply_env; /* the run's correlated subqueries run per outer row
                              (exec/engine_apply.c), or NULL; freed at the run's end */
  struct plan_apply_actual *apply_act; /* their runs and reuses (run arena), or NULL */
  int state;               /* ST_* */
  int64_t now_us;          /* statement time */
  int64_t changes;         /* rows written by this run */
  plan_arena run_arena;    /* this run's memory (EXPLAIN lines, converted parameters) */
  plan_arena plan_arena;   /* q's memory, kept across resets while q is kept */
  plan_query q;            /* SELECT / UPSERT SELECT plan */
  bool q_built;            /* q must be freed */
  bool q_kept;             /* q may serve the next run (plan reuse, engine_run.c) */
  bool q_light;            /* q's access path is the table: new parameter values re-plan
                              with plan_query_rebuild (planner/plan_reuse.h) */
  uint64_t q_gen;          /* session schema_gen q was planned under */
  cat_value *q_params;     /* copies of the run_params q was planned with (n_params) */
  uint8_t *q_pbytes;       /* their string bytes (malloc) */
  size_t q_pbytes_cap;     /* bytes allocated at q_pbytes */
  plan_point_key pt;       /* q's point key template (planner/point_key.h); pt.n == 0: none */
  exec_plan_stats plan_stats; /* how often each run planned in full, re-planned, reused */
  exec_query_cache qcache; /* row and scan buffers kept from run to run (freed at a re-bind) */
  plan_scan del_scan;      /* DELETE scan plan */
  bool del_built;          /* del_scan must be freed */
  exec_query x;            /* running query */
  bool x_open;             /* x must be closed */
  bool x_lost;             /* x was opened inside a transaction whose writes were then rolled
                              back (or lost by a failed COMMIT): its next step fails with
                              EXEC_ABORT */
  bool rd_linked;          /* on the session's txn_readers list */
  struct exec_stmt *rd_next, *rd_prev; /* neighbours on that list */
  const cat_table *scan_table; /* table scanned (metric names) */
  const char *scan_kind;   /* plan_scan_kind_name of the scan, or NULL */
  plan_actuals last_act;   /* counters of an EXPLAIN ANALYZE run or a write */
  const plan_actuals *act; /* the last finished run's counters: &last_act, &x.act (a SELECT's
                              query, closed at its end; no copy), or NULL (none since the
                              last reset: all zero) */
  bool uses_now;           /* the bound statement calls NOW() or CURRENT_DATE: each run takes
                              the wall clock (else now_us stays 0) */
  char **lines;            /* EXPLAIN lines (run_arena) */
  int n_lines;             /* count */
  int line_pos;            /* next line to return */
  cat_value line_val;      /* the current EXPLAIN line as a value */
  int n_cols;              /* result columns */
  const char **col_names;  /* their names */
  cat_type *col_types;     /* their types */
  const cat_value *row;    /* current row's values */
  cat_value *check_rows;   /* CHECK INDEX result: n_lines rows of 2 values (run_arena) */
  struct exec_upsert_cache *up; /* write.c: an UPSERT's row codec and value arrays, kept from
                                   run to run while its binding stays (NULL: none yet) */
  kv_trace *trace;         /* the block trace of its reads (exec/keymap.h), or NULL */
  bool tracing;            /* its runs record into trace (cleared at each run's first step) */
  int64_t as_of_ms;        /* this run's read time (exec/as_of.c), 0 = now */
  int64_t planned_as_of;   /* the read time the kept plan was made for */
};

/* The read time of st's run (its AS OF clause, else the session's), checked (exec/as_of.c):
** into st->as_of_ms and the step's current read time. EXEC_OK; EXEC_ERROR for a write or
** DDL while the session reads the past, or a time before the look-back horizon. */
int exec_as_of_check(exec_stmt *st, exec_error *err);
/* Put the line "READ AS OF <time> UTC ..." before st's EXPLAIN text lines (a run reading the
** past). EXEC_OK or EXEC_NOMEM. */
int exec_as_of_explain(exec_stmt *st);
/* The JSON form's: "as_of": "<time> UTC" first in the document *doc (replaced by a copy in
** st->run_arena). EXEC_OK or EXEC_NOMEM. */
int exec_as_of_explain_json(exec_stmt *st, char **doc);

/* Free st->up (write.c); NULL is a no-op. */
void exec_upsert_cache_free(struct exec_upsert_cache *c);

/* Fill err and return code. */
/* Run the statement's subqueries (exec/engine_sub.c): st->all_params / n_all for this run.
** EXEC_OK or an error (a scalar subquery with two rows). */
int exec_run_subqueries(exec_stmt *st, exec_error *err);
/* Free the subqueries' plans of the run (and its apply environment). */
void exec_free_subqueries(exec_stmt *st);
/* Plan and run query sel as a subquery of kind SQL_E_SUBQUERY (its one value; NULL without a
** row; an error naming the subquery at off with two), SQL_E_EXISTS (TRUE when it has a row)
** or SQL_E_IN (its rows as a set value for IN_SET) with parameters params[0 .. np), into
** *out (bytes, the plan's memory in A); q holds the plan (the caller frees it, after an
** error too), *act (NULL: not kept) its figures; reuse (or NULL) how a subquery run per
** outer row plans and keeps its buffers (exec/engine_sub.c). */
typedef struct exec_sub_reuse { /* a subquery run again and again (exec/engine_apply.c) */
  bool rebuild;                  /* plan with plan_query_rebuild (its earlier plan scanned
                                    the table itself) */
  exec_query_cache *cache;       /* its kept buffers */
  const kv_batch *overlay;       /* the transaction as it reads it, or NULL: the session's */
} exec_sub_reuse;
int exec_sub_value(exec_stmt *st, const plan_select *sel, int kind, uint32_t off,
                   const cat_value *params, int np, plan_arena *A, plan_query *q,
                   const exec_sub_reuse *reuse, plan_actuals *act, cat_value *out,
                   exec_error *err);
/* The run's apply environment (exec/engine_apply.c) for st->bound's correlated subqueries
** run per outer row: its value into all[apply_env - 1] and NULLs into their outer values'
** slots. EXEC_OK or EXEC_NOMEM. */
int exec_apply_start(exec_stmt *st, cat_value *all, exec_error *err);
void exec_apply_free(exec_stmt *st);
int exec_fail(exec_error *err, int code, int offset, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* (Re)bind the statement's AST into st->bound. */
int exec_stmt_bind_ast(exec_stmt *st, exec_error *err);
/* First step of SELECT / UPSERT / DELETE (with EXPLAIN): plan and start; returns EXEC_ROW
** with st->row set, EXEC_DONE, or an error (exec/engine_run.c). */
int exec_run_dml(exec_stmt *st, exec_error *err);
/* Free the statement's plan q (if built) and empty its arena; q is no longer kept. */
void exec_plan_drop(exec_stmt *st);
/* Later steps: the next row or EXPLAIN line. */
int exec_next_row(exec_stmt *st, exec_error *err);
/* CHECK INDEX (exec/engine_run.c): result columns (at bind), and the first step (runs the
** check, returns the first result row). */
int exec_check_columns(exec_stmt *st);
int exec_run_check(exec_stmt *st, exec_error *err);
/* Writes (exec/write.c): run UPSERT / DELETE to completion, setting st->changes. */
/* A row about to be written puts no cell in the covered families `miss` of table t
** (exec_rowcodec.cover_miss): the catalog forgets them (cat_row_cover_lose) before the row's
** batch can commit. EXEC_OK when miss is 0; else the catalog's error as EXEC_IOERR /
** EXEC_ERROR (the row must then not be written). exec/write.c; exec/bulk.c uses it too. */
int exec_row_cover_lose(exec_session *s, const cat_table *t, uint64_t miss, exec_error *err);
int exec_write_upsert(exec_stmt *st, exec_error *err);
int exec_write_delete(exec_stmt *st, exec_error *err);
/* Transactions (exec/txn.c). */
int exec_txn_begin(exec_session *s, exec_error *err);
int exec_txn_commit(exec_session *s, exec_error *err);
int exec_txn_rollback(exec_session *s, exec_error *err);
void exec_txn_discard(exec_session *s);
/* A batch from exec_txn_batch (*own) or a transaction's, no longer needed: emptied and kept
** as the session's spare for the next one, or freed (NULL is a no-op). */
void exec_txn_drop_batch(exec_session *s, kv_batch *b);
/* A SELECT opened its query x inside the open transaction: put st on the session's readers
** list (exec_txn_reader_done takes it off). No-op outside a transaction. */
void exec_txn_reader_open(exec_stmt *st);
/* st's query x is closed (end, reset, finalize): off the readers list if on it. */
void exec_txn_reader_done(exec_stmt *st);
/* The batch a write statement adds to: the transaction's, or an empty one of its own (*own
** true: the caller commits it and gives it back with exec_txn_drop_batch). */
kv_batch *exec_txn_batch(exec_session *s, bool *own);
/* Commit an own batch (outside transactions); maps kv errors. */
int exec_txn_commit_batch(exec_session *s, kv_batch *b, exec_error *err);

#endif /* ROWAN_EXEC_ENGINE_INT_H */
