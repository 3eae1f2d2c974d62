/*
** api/rowan.c: the public C API of include/rowan.h over the engine (exec/engine.h): open and
** close (the store through kv/kv.h, then an engine session), prepare, bind, step, reset,
** finalize, rowan_exec, errors, changes and metrics, plus the test hooks of api/api_test.h.
**
** What this layer adds to the engine: checks. Every handle may be NULL or in the wrong
** state; this file turns that into ROWAN_MISUSE / ROWAN_RANGE with a message on the
** connection, never a crash. Statement states are in api/api_int.h (enum api_state). The
** EXEC_* codes are the ROWAN_* codes one to one (engine.h), checked here.
**
** Not here: column getters and value conversions (api/column.c); SQL itself (exec/).
*/
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api_int.h"
#include "api/api_test.h"
#include "catalog/types.h"
#include "exec/sequence.h"
#include "catalog/value.h"
#include "kv/env/env_mem.h"

/* ---- Errors ------------------------------------------------------------------------------ */
int api_error(rowan_db *db, int code, int offset, const char *fmt, ...) {
  if (!db) return code;
  db->errcode = code;
  db->erroff = offset;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(db->errmsg, sizeof db->errmsg, fmt, ap);
  va_end(ap);
  return code;
}

void api_clear_error(rowan_db *db) {
  if (!db) return;
  db->errcode = ROWAN_OK;
  db->erroff = -1;
  memcpy(db->errmsg, "not an error", sizeof "not an error"); /* per step: no printf */
}

int api_code_of_exec(int code) {
  if ((code >= EXEC_OK && code <= EXEC_INTERRUPT) || code == EXEC_ROW || code == EXEC_DONE)
    return code; /* enum exec_status equals the ROWAN_* codes (exec/engine.h) */
  return ROWAN_ERROR;
}

int api_code_of_kv(int code) {
  switch (code) {
    case KV_OK: return ROWAN_OK;
    case KV_ERR_IO: return ROWAN_IOERR;
    case KV_ERR_NOSPC: return ROWAN_FULL;
    case KV_ERR_CORRUPT: return ROWAN_CORRUPT;
    case KV_ERR_LOCKED: return ROWAN_LOCKED;
    case KV_ERR_NOTFOUND: return ROWAN_NOTFOUND;
    case KV_ERR_TOOBIG: return ROWAN_TOOBIG;
    case KV_ERR_NOMEM: return ROWAN_NOMEM;
    case KV_MISUSE: return ROWAN_MISUSE;
    case KV_ERR_READONLY: return ROWAN_READONLY;
    default: return ROWAN_ERROR;
  }
}

/* One name per result code of include/rowan.h, in order, 0..15. */
static const char *const code_names[] = {
    "ROWAN_OK",     "ROWAN_ERROR",  "ROWAN_SYNTAX",  "ROWAN_CONSTRAINT", "ROWAN_RANGE",
    "ROWAN_MISUSE", "ROWAN_LOCKED", "ROWAN_CORRUPT", "ROWAN_IOERR",      "ROWAN_FULL",
    "ROWAN_NOMEM",  "ROWAN_READONLY", "ROWAN_TOOBIG", "ROWAN_NOTFOUND",
    "ROWAN_ABORT",  "ROWAN_INTERRUPT"};

const char *rowan_errstr(int code) {
  if (code >= 0 && code < (int)(sizeof code_names / sizeof code_names[0])) return code_names[code];
  if (code == ROWAN_ROW) return "ROWAN_ROW";
  if (code == ROWAN_DONE) return "ROWAN_DONE";
  return "ROWAN_UNKNOWN";
}

int rowan_errcode(rowan_db *db) { return db ? db->errcode : ROWAN_MISUSE; }

const char *rowan_errmsg(rowan_db *db) {
  return db ? db->errmsg : "misuse: NULL database handle";
}

int rowan_error_offset(rowan_db *db) { return db ? db->erroff : -1; }

const char *rowan_libversion(void) { return ROWAN_VERSION; }

/* ---- Open and close ----------------------------------------------------------------------- */
void rowan_options_init(rowan_options *opts) {
  if (!opts) return;
  memset(opts, 0, sizeof *opts);
  opts->sync_mode = ROWAN_SYNC_FULL;
  opts->create_if_missing = 1;
}

int rowan_open(const char *path, const rowan_options *opts, rowan_db **out) {
  if (!out) return ROWAN_MISUSE;
  *out = NULL;
  rowan_db *db = calloc(1, sizeof *db);
  if (!db) return ROWAN_NOMEM;
  api_clear_error(db);
  *out = db;
  if (!path) return api_error(db, ROWAN_MISUSE, -1, "misuse: NULL database path");
  rowan_options d;
  rowan_options_init(&d);
  d.create_if_missing = 0; /* a zeroed struct means "do not create" */
  if (!opts) {
    rowan_options_init(&d);
    opts = &d;
  }
  if (opts->sync_mode < ROWAN_SYNC_FULL || opts->sync_mode > ROWAN_SYNC_OFF)
    return api_error(db, ROWAN_MISUSE, -1, "misuse: unknown sync mode %d", opts->sync_mode);
  if (opts->bulk_memory && opts->bulk_memory < API_BULK_MEMORY_MIN)
    return api_error(db, ROWAN_MISUSE, -1,
                     "misuse: bulk_memory of %zu bytes is below the minimum of 1 MiB",
                     opts->bulk_memory);
  db->bulk_memory = opts->bulk_memory;
  if (api_is_remote_uri(path)) return api_open_remote(db, path, opts); /* hbase:// */
  kv_options ko;
  kv_options_init(&ko);
  ko.env = (kv_env *)opts->kv_env;
  ko.create_if_missing = opts->create_if_missing != 0 && !opts->read_only;
  if (!strcmp(path, ":memory:") && !ko.env) { /* SQLite's: a new store, gone at close */
    if (opts->read_only)
      return api_error(db, ROWAN_MISUSE, -1, "misuse: a :memory: database cannot be read-only");
    db->mem_env = kv_env_mem_new(0);
    if (!db->mem_env) return api_error(db, ROWAN_NOMEM, -1, "out of memory");
    ko.env = db->mem_env;
    ko.create_if_missing = true;
    path = "/memory";
  }
  ko.read_only = opts->read_only != 0;
  db->read_only = ko.read_only;
  ko.sync_mode = opts->sync_mode; /* ROWAN_SYNC_* equal enum kv_sync_mode */
  ko.block_cache_size = opts->block_cache_size;
  ko.memstore_flush_size = opts->memstore_size;
  ko.wal_limit = opts->wal_limit;
  ko.index_memory = opts->index_memory; /* 0: kv's default, 64 MiB */
  ko.region_split_size = opts->region_split_size; /* 0: regions never split by size */
  /* the look-back window: 0 = one day (include/rowan.h says why), negative = none */
  ko.max_lookback_ms = opts->max_lookback_seconds < 0    ? 0
                       : opts->max_lookback_seconds == 0 ? 86400000
                       : opts->max_lookback_seconds > INT64_MAX / 1000
                           ? INT64_MAX / 2
                           : opts->max_lookback_seconds * 1000;
  int rc = kv_open(path, &ko, &db->kv);
  if (rc != KV_OK) {
    db->kv = NULL;
    return api_error(db, api_code_of_kv(rc), -1, "cannot open database \"%s\": %s", path,
                     kv_errmsg());
  }
  exec_error err = {0};
  rc = exec_session_open(db->kv, &db->sess, &err);
  if (rc == EXEC_OK) {
    exec_set_interrupt(db->sess, &db->interrupt);
    exec_set_write_memory(db->sess, db->bulk_memory); /* a large write statement's bound */
    exec_set_join_memory(db->sess, opts->join_memory);
    exec_set_sequence_flush(db->sess, opts->sync_mode != ROWAN_SYNC_FULL);
  }
  if (rc != EXEC_OK) {
    db->sess = NULL;
    kv_close(db->kv);
    db->kv = NULL;
    return api_error(db, api_code_of_exec(rc), -1, "cannot open database \"%s\": %s", path,
                     err.msg);
  }
  return ROWAN_OK;
}

int rowan_close(rowan_db *db) {
  if (!db) return ROWAN_OK;
  if (db->n_stmts > 0)
    return api_error(db, ROWAN_MISUSE, -1,
                     "misuse: %d statement(s) not finalized; the connection stays open",
                     db->n_stmts);
  if (db->n_bulks > 0)
    return api_error(db, ROWAN_MISUSE, -1,
                     "misuse: %d bulk load(s) neither committed nor aborted; the connection "
                     "stays open", db->n_bulks);
  int rc = ROWAN_OK;
  if (db->sess) {
    int erc = exec_session_close(db->sess);
    if (erc != EXEC_OK) rc = api_code_of_exec(erc);
  }
  if (db->kv) {
    int krc = kv_close(db->kv);
    if (krc != KV_OK && rc == ROWAN_OK) rc = api_code_of_kv(krc);
  }
  if (db->mem_env) kv_env_free(db->mem_env);
  api_close_remote(db);
  free(db);
  return rc;
}

/* ---- Statements --------------------------------------------------------------------------- */
static int not_open(rowan_db *db) {
  return api_error(db, ROWAN_MISUSE, -1, "misuse: the database is not open");
}

int rowan_prepare(rowan_db *db, const char *sql, int n, rowan_stmt **out, const char **tail) {
  if (out) *out = NULL;
  if (tail) *tail = sql;
  if (!db) return ROWAN_MISUSE;
  if (!sql || !out) return api_error(db, ROWAN_MISUSE, -1, "misuse: NULL SQL or statement pointer");
  if (!db->sess) return not_open(db);
  api_clear_error(db);
  size_t len = n < 0 ? strlen(sql) : (size_t)n;
  exec_error err = {0};
  exec_stmt *st = NULL;
  int rc = exec_prepare(db->sess, sql, len, &st, tail, &err);
  if (rc != EXEC_OK) {
    if (st) exec_finalize(st);
    return api_error(db, api_code_of_exec(rc), err.offset, "%s", err.msg);
  }
  if (!st) return ROWAN_OK;
  rowan_stmt *s = calloc(1, sizeof *s);
  if (!s) {
    exec_finalize(st);
    return api_error(db, ROWAN_NOMEM, -1, "out of memory");
  }
  s->db = db;
  s->st = st;
  s->state = API_READY;
  s->ncol = exec_column_count(st);
  db->n_stmts++;
  *out = s;
  return ROWAN_OK;
}

/* Move stmt to state `to`, counting the statements between rows (rowan_interrupt). */
static void set_state(rowan_stmt *stmt, int to) {
  if (stmt->state == API_ROW && to != API_ROW) stmt->db->n_row_stmts--;
  else if (stmt->state != API_ROW && to == API_ROW) stmt->db->n_row_stmts++;
  stmt->state = to;
}

void rowan_interrupt(rowan_db *db) {
  if (db) atomic_store_explicit(&db->interrupt, 1, memory_order_relaxed);
}

int rowan_finalize(rowan_stmt *stmt) {
  if (!stmt) return ROWAN_OK;
  set_state(stmt, API_READY);
  exec_finalize(stmt->st);
  stmt->db->n_stmts--;
  api_free_columns(stmt);
  free(stmt->fail_msg);
  free(stmt);
  return ROWAN_OK;
}

/* Keep the connection's error (just set by a failed step) with the statement, for
** rowan_reset to return and set again. Without memory for the message, the code alone is
** kept (reset then gives the code's name as the message). */
static void keep_failure(rowan_stmt *stmt) {
  const rowan_db *db = stmt->db;
  stmt->fail_code = db->errcode;
  stmt->fail_off = db->erroff;
  size_t n = strlen(db->errmsg) + 1;
  char *m = realloc(stmt->fail_msg, n);
  if (m) memcpy(m, db->errmsg, n);
  else free(stmt->fail_msg);
  stmt->fail_msg = m;
}

/* After the first step of a run: the engine binds the statement again when the schema
** changed since it was prepared (SELECT * over a recreated table), so the result columns
** can differ in number and type. Take the engine's count, and drop the declared-type texts
** (and, when the count changed, the text buffers sized by the old count). */
static void refresh_columns(rowan_stmt *stmt) {
  int n = exec_column_count(stmt->st);
  if (n != stmt->ncol) {
    api_free_columns(stmt);
    stmt->ncol = n;
  } else if (stmt->decl) {
    free(stmt->decl);
    stmt->decl = NULL;
  }
}

int rowan_step(rowan_stmt *stmt) {
  if (!stmt) return ROWAN_MISUSE;
  rowan_db *db = stmt->db;
  if (stmt->state == API_FAILED)
    return api_error(db, ROWAN_MISUSE, -1,
                     "misuse: rowan_step after an error; call rowan_reset first");
  if (stmt->state == API_DONE) { /* as SQLite: a finished statement starts over */
    exec_reset(stmt->st);
    set_state(stmt, API_READY);
  }
  api_clear_error(db);
  stmt->gen++;
  exec_error err; /* exec_step sets code, offset and an empty message first */
  bool first = stmt->state == API_READY;
  /* an interrupt with nothing running has no effect: a statement that starts while none is
     between rows clears it (SQLite's rule) */
  if (first && db->n_row_stmts == 0)
    atomic_store_explicit(&db->interrupt, 0, memory_order_relaxed);
  int rc = exec_step(stmt->st, &err);
  if (first) refresh_columns(stmt);
  if (rc == EXEC_ROW) {
    set_state(stmt, API_ROW);
    stmt->row = exec_row_values(stmt->st);
    return ROWAN_ROW;
  }
  if (rc == EXEC_DONE) {
    set_state(stmt, API_DONE);
    return ROWAN_DONE;
  }
  set_state(stmt, API_FAILED);
  api_error(db, api_code_of_exec(rc), err.offset, "%s", err.msg);
  keep_failure(stmt);
  return db->errcode;
}

/* As sqlite3_reset (v2 interface): the statement starts over whatever its state; the code
** of a failed last step is returned once, and made the connection's error again (another
** call may have cleared it since). A statement refused with ROWAN_MISUSE after the failure
** did not run, so the failure is still the one reported. */
int rowan_reset(rowan_stmt *stmt) {
  if (!stmt) return ROWAN_MISUSE;
  exec_reset(stmt->st);
  set_state(stmt, API_READY);
  stmt->gen++;
  int code = stmt->fail_code;
  if (code == ROWAN_OK) return ROWAN_OK;
  stmt->fail_code = ROWAN_OK;
  api_error(stmt->db, code, stmt->fail_off, "%s",
            stmt->fail_msg ? stmt->fail_msg : rowan_errstr(code));
  free(stmt->fail_msg);
  stmt->fail_msg = NULL;
  return code;
}

int rowan_clear_bindings(rowan_stmt *stmt) {
  if (!stmt) return ROWAN_MISUSE;
  if (stmt->state == API_ROW)
    return api_error(stmt->db, ROWAN_MISUSE, -1,
                     "misuse: rowan_clear_bindings while the statement is running");
  return api_code_of_exec(exec_clear_bindings(stmt->st));
}

int rowan_bind_parameter_count(rowan_stmt *stmt) { return stmt ? exec_param_count(stmt->st) : 0; }

/* ---- Binds -------------------------------------------------------------------------------- */
/* How a value reaches exec: a cat_value, or (the common scalar binds) the field itself. */
enum { BIND_VALUE, BIND_DOUBLE, BIND_NULL };

static int bind_as(rowan_stmt *stmt, int i, int how, const cat_value *v, double d) {
  if (!stmt) return ROWAN_MISUSE;
  rowan_db *db = stmt->db;
  if (stmt->state != API_READY)
    return api_error(db, ROWAN_MISUSE, -1,
                     "misuse: bind on a statement that has run; call rowan_reset first");
  int np = exec_param_count(stmt->st);
  if (i < 1 || i > np)
    return api_error(db, ROWAN_RANGE, -1, "bind index %d out of range (the statement has %d "
                     "parameter%s)", i, np, np == 1 ? "" : "s");
  exec_error err; /* not `= {0}`: zeroing its message buffer cost more than the bind */
  err.code = EXEC_OK;
  err.offset = -1;
  err.msg[0] = 0;
  int rc = how == BIND_DOUBLE ? exec_bind_double(stmt->st, i, d, &err)
           : how == BIND_NULL ? exec_bind_null(stmt->st, i, cat_type_of(CAT_T_VARCHAR), &err)
                              : exec_bind(stmt->st, i, v, &err);
  if (rc != EXEC_OK) return api_error(db, api_code_of_exec(rc), err.offset, "%s", err.msg);
  api_clear_error(db);
  return ROWAN_OK;
}

static int bind(rowan_stmt *stmt, int i, const cat_value *v) {
  return bind_as(stmt, i, BIND_VALUE, v, 0);
}

int rowan_bind_int64(rowan_stmt *stmt, int i, int64_t v) {
  cat_value x = cat_v_int(CAT_T_BIGINT, v);
  return bind(stmt, i, &x);
}

int rowan_bind_double(rowan_stmt *stmt, int i, double v) {
  return bind_as(stmt, i, BIND_DOUBLE, NULL, v);
}

int rowan_bind_text(rowan_stmt *stmt, int i, const char *s, int n) {
  if (!s) return rowan_bind_null(stmt, i);
  size_t len = n < 0 ? strlen(s) : (size_t)n;
  cat_value x = cat_v_str(CAT_T_VARCHAR, s, len);
  return bind(stmt, i, &x);
}

int rowan_bind_blob(rowan_stmt *stmt, int i, const void *p, int n) {
  if (!p && n > 0) return stmt ? api_error(stmt->db, ROWAN_MISUSE, -1, "misuse: NULL blob "
                                           "pointer with %d bytes", n) : ROWAN_MISUSE;
  if (!p) return rowan_bind_null(stmt, i);
  cat_value x = cat_v_str(CAT_T_VARBINARY, p, n < 0 ? 0 : (size_t)n);
  return bind(stmt, i, &x);
}

int rowan_bind_null(rowan_stmt *stmt, int i) {
  return bind_as(stmt, i, BIND_NULL, NULL, 0);
}

int rowan_bind_timestamp(rowan_stmt *stmt, int i, int64_t ts_ms) {
  if (stmt && (ts_ms < CAT_TS_MIN / 1000 || ts_ms > CAT_TS_MAX / 1000))
    return api_error(stmt->db, ROWAN_CONSTRAINT, -1, "timestamp %lld ms out of range for "
                     "TIMESTAMP (years 0001..9999)", (long long)ts_ms);
  cat_value x = cat_v_int(CAT_T_TIMESTAMP, ts_ms * 1000);
  return bind(stmt, i, &x);
}

/* ---- rowan_exec ---------------------------------------------------------------------------- */
int rowan_exec(rowan_db *db, const char *sql, rowan_callback cb, void *ctx) {
  if (!db) return ROWAN_MISUSE;
  if (!sql) return api_error(db, ROWAN_MISUSE, -1, "misuse: NULL SQL");
  const char *p = sql;
  api_clear_error(db);
  while (*p) {
    rowan_stmt *st = NULL;
    const char *tail = NULL;
    int rc = rowan_prepare(db, p, -1, &st, &tail);
    if (rc != ROWAN_OK) {
      if (db->erroff >= 0) db->erroff += (int)(p - sql); /* offsets relative to sql */
      return rc;
    }
    if (!st) break;
    int ncol = rowan_column_count(st);
    char **vals = NULL, **names = NULL;
    if (cb && ncol > 0) {
      vals = calloc((size_t)ncol, sizeof *vals);
      names = calloc((size_t)ncol, sizeof *names);
      if (!vals || !names) {
        free(vals);
        free(names);
        rowan_finalize(st);
        return api_error(db, ROWAN_NOMEM, -1, "out of memory");
      }
      for (int i = 0; i < ncol; i++) names[i] = (char *)rowan_column_name(st, i);
    }
    while ((rc = rowan_step(st)) == ROWAN_ROW) {
      if (!cb) continue;
      for (int i = 0; i < ncol; i++) vals[i] = (char *)rowan_column_text(st, i);
      if (cb(ctx, ncol, vals, names) != 0) {
        rc = api_error(db, ROWAN_ERROR, -1, "the rowan_exec callback requested an abort");
        break;
      }
    }
    free(vals);
    free(names);
    if (rc == ROWAN_DONE) rc = ROWAN_OK;
    if (rc != ROWAN_OK) {
      int code = db->errcode, off = db->erroff;
      char msg[API_ERRMSG_MAX];
      memcpy(msg, db->errmsg, sizeof msg);
      rowan_finalize(st);
      api_error(db, code, off >= 0 ? off + (int)(p - sql) : -1, "%s", msg);
      return code;
    }
    rowan_finalize(st);
    if (!tail || tail == p) break;
    p = tail;
  }
  return ROWAN_OK;
}

/* ---- Changes and metrics ------------------------------------------------------------------ */
int64_t rowan_changes(rowan_db *db) { return db && db->sess ? exec_changes(db->sess) : 0; }

int rowan_progress_handler(rowan_db *db, rowan_progress_fn fn, void *ctx) {
  if (!db || !db->sess) return ROWAN_MISUSE;
  /* rowan_progress_fn and exec_progress_fn have the same shape; the engine calls it as is. */
  exec_set_progress(db->sess, (exec_progress_fn)fn, ctx);
  return ROWAN_OK;
}

int rowan_stmt_metrics(rowan_stmt *stmt, rowan_metrics *out) {
  if (!stmt || !out) return ROWAN_MISUSE;
  exec_metrics m;
  memset(&m, 0, sizeof m);
  exec_get_metrics(stmt->st, &m);
  memset(out, 0, sizeof *out);
  out->rows_examined = m.rows_examined;
  out->rows_filtered = m.rows_filtered;
  out->rows_returned = m.rows_returned;
  out->ranges_sought = m.ranges_sought;
  int nf = m.n_families < 16 ? m.n_families : 16;
  out->n_families = nf;
  for (int i = 0; i < nf; i++) {
    snprintf(out->families[i].family, sizeof out->families[i].family, "%s", m.families[i].family);
    out->families[i].cells_examined = m.families[i].m.cells_examined;
    out->families[i].blocks_read = m.families[i].m.blocks_read;
    out->families[i].blocks_cache_hit = m.families[i].m.blocks_cache_hit;
    out->families[i].bytes_read = m.families[i].m.bytes_read;
  }
  return ROWAN_OK;
}

/* ---- Test hooks (api/api_test.h) ------------------------------------------------------------ */
int api_test_flush(rowan_db *db) {
  if (!db) return ROWAN_MISUSE;
  if (!db->kv) return not_open(db);
  int rc = kv_flush(db->kv, NULL);
  if (rc != KV_OK) return api_error(db, api_code_of_kv(rc), -1, "flush failed: %s", kv_errmsg());
  return ROWAN_OK;
}

int api_test_compact(rowan_db *db) {
  if (!db) return ROWAN_MISUSE;
  if (!db->kv) return not_open(db);
  int rc = kv_compact(db->kv, NULL, true);
  if (rc != KV_OK)
    return api_error(db, api_code_of_kv(rc), -1, "compaction failed: %s", kv_errmsg());
  return ROWAN_OK;
}

kv_db *api_test_kv(rowan_db *db) { return db ? db->kv : NULL; }

const char *api_test_scan_kind(rowan_stmt *stmt) {
  return stmt ? exec_scan_kind(stmt->st) : NULL;
}
