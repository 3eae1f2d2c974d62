/*
** exec/engine.h: the SQL engine behind include/rowan.h. A session owns the store (kv/) and
** the catalog; a statement is parsed (sql/), bound and planned (planner/) and run by plan
** operators (exec/). api/ is a thin, checked wrapper over this header; the shell and the
** tests use rowan.h, not this.
**
** Life of a statement: exec_prepare parses one statement and binds its names and types (so
** an unknown table or column fails at prepare, with its position); the key ranges and
** filters are planned at the first exec_step after the parameters are bound (a parameter in
** WHERE station = ? becomes a point lookup); exec_reset lets it run again with new bindings.
**
** Writes: a statement outside BEGIN ... COMMIT is atomic whatever its size: its writes
** gather in one kv batch, committed as one WAL record at its end; past a bound
** (exec_set_write_memory) they move into a kv bulk load (kv/bulk/bulk.h) whose sorted store files
** are named in one MANIFEST record at its end. A statement that fails, is interrupted or is
** killed leaves none of its writes either way. Inside BEGIN ... COMMIT the writes gather in
** one batch that COMMIT commits atomically; statements in the transaction see its writes;
** ROLLBACK drops it.
**
** Errors: every function returns an EXEC_* code and fills the exec_error given (message
** naming what and where, byte offset into the statement's SQL or -1).
*/
#ifndef ROWAN_EXEC_ENGINE_H
#define ROWAN_EXEC_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "catalog/types.h"
#include "kv/backend.h"
#include "kv/kv.h"

#include "catalog/status.h" /* enum exec_status: the EXEC_* codes */

#define EXEC_ERRMSG_MAX 512
#define EXEC_WRITE_MEMORY_DEFAULT ((size_t)256 << 20) /* exec_set_write_memory's default */
#define EXEC_WRITE_SPILL_SHARE 16 /* a statement's batch moves into its bulk load past
                                     write memory / EXEC_WRITE_SPILL_SHARE encoded bytes */

typedef struct exec_error {
  int code;                   /* enum exec_status */
  int offset;                 /* byte offset in the statement's SQL text, or -1 */
  char msg[EXEC_ERRMSG_MAX];  /* what was wrong and where */
} exec_error;

typedef struct exec_session exec_session;
typedef struct exec_stmt exec_stmt;

/* Open a session on an open store: loads the catalog (creating SYSTEM.CATALOG if new). The
** session does not own db (the caller closes it after exec_session_close). The storage
** backend is the local one, unless the environment variable ROWAN_BACKEND says "rowatomic":
** then the session reads and writes through the row-atomic test backend over db
** (kv/backend/backend_rowatomic.h, docs/BACKEND.md), which it frees at close; any other name but
** "local" (or empty) fails with EXEC_MISUSE naming it. */
int exec_session_open(kv_db *db, exec_session **out, exec_error *err);
/* exec_session_open reading and writing through storage backend *be (kv/backend.h; copied,
** what it points to must outlive the session) instead of db's local backend. db is still
** the local store for what only it has (bulk loads, the columnar aggregate, spill files,
** the planner's estimates; docs/BACKEND.md lists them) and must be the store under be. The
** tests run the SQL layer through wrappers that take away capabilities this way. A backend
** without KV_BE_EXT_OVERLAY gets the client-side overlay of kv/backend/backend_overlay.h stacked on
** it, so that a transaction reads its own writes on any backend. */
int exec_session_open_backend(kv_db *db, const kv_backend *be, exec_session **out,
                              exec_error *err);
/* Load the catalog again from the store (after kv_refresh of a read-only store showed the
** writer's DDL): statements bind again at their next run, as after DDL in the session; one
** between rows fails its next step ("the schema changed"). EXEC_MISUSE inside a transaction;
** the errors of exec_session_open (the old catalog then stays). */
int exec_session_reload_catalog(exec_session *s, exec_error *err);
/* Close; rolls back an open transaction. Statements must be finalized first
** (EXEC_MISUSE otherwise). */
int exec_session_close(exec_session *s);
bool exec_in_transaction(const exec_session *s);
/* Rows changed by the last finished write statement. */
int64_t exec_changes(const exec_session *s);

/* Parse and bind the first statement of sql[0..len). *out is NULL when the text holds no
** statement. *tail (if not NULL) points past the statement. The statement keeps a copy of
** its SQL text. */
int exec_prepare(exec_session *s, const char *sql, size_t len, exec_stmt **out,
                 const char **tail, exec_error *err);
void exec_finalize(exec_stmt *st);

/* Parameters: 1-based; the value is copied (strings too). */
int exec_param_count(const exec_stmt *st);
int exec_bind(exec_stmt *st, int i, const cat_value *v, exec_error *err);
/* exec_bind of a DOUBLE d (is_null false) or of NULL given as `type`, written into the
** parameter field by field: a loader binding a dozen values a row builds no cat_value. */
int exec_bind_double(exec_stmt *st, int i, double d, exec_error *err);
int exec_bind_null(exec_stmt *st, int i, cat_type type, exec_error *err);
int exec_clear_bindings(exec_stmt *st);

/* Run: EXEC_ROW with a row ready, EXEC_DONE, or an error. */
int exec_step(exec_stmt *st, exec_error *err);
int exec_reset(exec_stmt *st);

/* Result columns (EXPLAIN results: one VARCHAR column named PLAN, one row per line). */
int exec_column_count(const exec_stmt *st);
const char *exec_column_name(const exec_stmt *st, int i);
const cat_type *exec_column_type(const exec_stmt *st, int i); /* NULL if untyped */
/* The current row's value i (valid until the next step/reset/finalize). */
const cat_value *exec_column_value(const exec_stmt *st, int i);
/* The current row's exec_column_count values in column order (the array behind
** exec_column_value, so a caller reads many columns without a call each), or NULL when no
** row is ready. Valid until the next step/reset/finalize. */
const cat_value *exec_row_values(const exec_stmt *st);

/* Scan metrics summed over the statement's scans since the last reset, with family names
** "TABLE.FAMILY". */
typedef struct exec_family_metrics {
  char family[64];
  kv_family_metrics m;
} exec_family_metrics;
typedef struct exec_metrics {
  uint64_t rows_examined, rows_filtered, rows_returned, ranges_sought;
  uint64_t rows_assembled;   /* rows decoded into values after the pushed filter */
  int n_families;
  exec_family_metrics families[16];
} exec_metrics;
void exec_get_metrics(const exec_stmt *st, exec_metrics *out);

/* Plan reuse (docs/EXPLAIN.md "Plan reuse"): a SELECT or UPSERT SELECT keeps its plan across
** exec_reset and new bindings while the session's schema is unchanged (no DDL since it was
** planned). Each run either plans in full (the first run, after a DDL, EXPLAIN, a plan that
** chose an index and new parameter values), re-plans cheaply (new parameter values for a
** plan over the table itself: key ranges, filters, LIMIT from the new values; no estimates
** walk, no index choice), reuses the plan as it is (the same parameter values), or, for a
** point lookup whose key columns all equal parameters or constants, writes the new key into
** the kept plan (no re-plan at all; planner/point_key.h). These counters say which
** happened, since exec_prepare. */
typedef struct exec_plan_stats {
  uint64_t full;      /* runs planned in full (estimates, index choice) */
  uint64_t rebuilt;   /* runs re-planned for new parameter values without estimates */
  uint64_t reused;    /* runs that reused the previous plan unchanged */
  uint64_t patched;   /* runs of a point lookup whose key was re-encoded into the previous
                         plan from its point key template (planner/point_key.h) */
} exec_plan_stats;
void exec_get_plan_stats(const exec_stmt *st, exec_plan_stats *out);

/* The kind of the scan a SELECT/DELETE/UPSERT SELECT ran or will run (for tests and the
** shell's teaching note): "NOTHING", "POINT LOOKUP", "RANGE SCAN", "SKIP SCAN", "FULL SCAN",
** or NULL for statements without a scan. Valid after the first exec_step. */
const char *exec_scan_kind(const exec_stmt *st);

/* Progress of a long operation (the backfill of CREATE INDEX, and of unfinished backfills
** rebuilt at session open): what it is ("building index IDX on T"), rows done, rows total (an
** estimate, 0 when unknown). Called every few thousand rows and once at the end with
** done == total. */
typedef void (*exec_progress_fn)(void *arg, const char *what, uint64_t done, uint64_t total);
/* Set (fn NULL: clear) the session's progress hook; arg is passed back to fn. */
void exec_set_progress(exec_session *s, exec_progress_fn fn, void *arg);

/* The session's interrupt flag (NULL: none), owned by the caller: while it is non-zero, the
** step running (and any step begun) fails with EXEC_INTERRUPT ("interrupted") within a few
** dozen rows read, written or examined by a scan, a backfill or a write statement. The
** caller sets it from any thread and clears it (SQLite's sqlite3_interrupt). */
void exec_set_interrupt(exec_session *s, const atomic_int *flag);
/* The interrupt flag of the statement this thread is stepping (exec_step sets it for the
** duration of the step), or NULL. Scans opened during the step pass it to kv. */
const atomic_int *exec_interrupt_flag(void);
/* EXEC_INTERRUPT with err set when that flag is set, else EXEC_OK. */
int exec_check_interrupt(exec_error *err);

/* Most bytes an ORDER BY (or GROUP BY, DISTINCT) of this session's statements may hold in
** memory before failing with EXEC_TOOBIG; 0 restores the default (256 MiB). */
void exec_set_sort_memory(exec_session *s, size_t bytes);

/* Most bytes the rows one join of this session's statements holds may take (a hash join's
** build input, a nested loop's inner input: exec/op_join.h); 0 restores the default
** (EXEC_JOIN_MEMORY_DEFAULT, 256 MiB). Past it a hash join partitions both inputs to
** temporary files in the store's folder and joins them a partition at a time; a nested loop
** fails with EXEC_TOOBIG naming the limit (docs/SQL.md "Joins"). */
void exec_set_join_memory(exec_session *s, size_t bytes);

/* Read the past (Phoenix's CurrentSCN): from now on every SELECT of session s reads the
** database as of ms (milliseconds since the Unix epoch, UTC, the cells' clock), as an AS OF
** clause does (exec/as_of.c), and writes and DDL are refused; 0 reads the present again.
** A statement's own AS OF clause wins. EXEC_OK, or EXEC_MISUSE for a negative ms. */
int exec_set_as_of(exec_session *s, int64_t ms);
/* The time set with exec_set_as_of (0: none). */
int64_t exec_get_as_of(const exec_session *s);

/* The memory bound of one write statement outside a transaction (UPSERT VALUES, UPSERT
** SELECT, DELETE): 0 restores the default (EXEC_WRITE_MEMORY_DEFAULT, 256 MiB); values
** below 64 KiB count as 64 KiB. Its writes gather in a kv batch, committed as one WAL record
** at the statement's end, up to bytes / EXEC_WRITE_SPILL_SHARE encoded bytes (16 MiB by
** default); past that the batch moves into a kv bulk load (kv/bulk/bulk.h) whose memory bound
** (kv_bulk_options.run_bytes) is `bytes`, and so again each time it refills; the load's
** sorted store files are named in one MANIFEST record when the statement ends. So the
** statement holds about bytes * 1.3 at most (the batch and its spare capacity, an eighth;
** the load and its slack of an eighth; the index journal's records since the last move,
** less than the batch), plus, for an UPSERT of several rows into a table with an index,
** 21-43 bytes per distinct row written (exec/index.h, the journal's key table; half as
** much again while it grows). */
void exec_set_write_memory(exec_session *s, size_t bytes);

#endif /* ROWAN_EXEC_ENGINE_H */
