/*
** api/api_int.h: the structures behind the public handles of include/rowan.h, shared by
** api/rowan.c (open, close, prepare, bind, step, exec, errors, metrics) and api/column.c
** (result column getters and their SQLite-style conversions). Not part of the public
** interface; nothing outside api/ includes it (tests use api/api_test.h).
*/
#ifndef ROWAN_API_INT_H
#define ROWAN_API_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "exec/engine.h"
#include "kv/kv.h"
#include "rowan.h"

/* api/open_remote.c: rowan_open of an "hbase://" URI into db (made by rowan_open, its
** errors set there); and the backend's release at close (NULL remote: no-op). */
bool api_is_remote_uri(const char *path);
int api_open_remote(rowan_db *db, const char *uri, const rowan_options *opts);
void api_close_remote(rowan_db *db);

#define API_ERRMSG_MAX (EXEC_ERRMSG_MAX + 64)
#define API_BULK_MEMORY_MIN ((size_t)1 << 20) /* smallest rowan_options.bulk_memory */

struct rowan_db {
  kv_db *kv;                     /* the store; NULL when rowan_open failed */
  exec_session *sess;            /* the engine session; NULL when rowan_open failed */
  int n_stmts;                   /* statements prepared and not finalized */
  int n_bulks;                   /* bulk loads begun and not yet committed or aborted */
  size_t bulk_memory;            /* rowan_options.bulk_memory (0: the default) */
  bool read_only;                /* opened with rowan_options.read_only (rowan_refresh) */
  atomic_int interrupt;          /* rowan_interrupt's flag (any thread; exec_set_interrupt) */
  int n_row_stmts;               /* statements whose last step returned a row (API_ROW) */
  struct kv_env *mem_env;        /* ":memory:": the in-memory file system the store lives in
                                    (freed by rowan_close), else NULL */
  struct kv_backend *remote;     /* hbase:// (api/open_remote.c): the HBase backend the
                                    session reads and writes through (kv is then a private
                                    in-memory scratch store), freed by rowan_close; else NULL */
  int errcode;                   /* ROWAN_* code of the last call (ROWAN_OK if it worked) */
  int erroff;                    /* byte offset of the error in the SQL, or -1 */
  char errmsg[API_ERRMSG_MAX];   /* message of the last error ("not an error" when none) */
};

/* Statement states (what rowan_step, the binds and the getters may do). */
enum api_state {
  API_READY = 0,   /* prepared or reset: binds allowed, not yet stepped */
  API_ROW = 1,     /* the last step returned ROWAN_ROW: column getters see that row */
  API_DONE = 2,    /* the last step returned ROWAN_DONE */
  API_FAILED = 3   /* the last step failed: step is refused until rowan_reset, which
                      returns that step's code (rowan_stmt.fail_code) */
};

/* A per-column output buffer for rowan_column_text / blob of converted values. */
typedef struct api_colbuf {
  char *p;        /* malloc'd NUL-terminated text, or NULL */
  size_t cap;     /* bytes allocated at p */
  size_t len;     /* bytes of the current text (NUL excluded) */
  uint64_t gen;   /* row generation the text was made for (valid when == stmt->gen) */
} api_colbuf;

struct rowan_stmt {
  rowan_db *db;          /* the connection */
  exec_stmt *st;         /* the engine statement */
  int state;             /* enum api_state */
  int ncol;              /* result columns */
  uint64_t gen;          /* row generation: bumped on every step, reset and finalize */
  api_colbuf *cols;      /* ncol text buffers, allocated lazily; NULL until first use */
  char (*decl)[48];      /* ncol declared-type texts, filled at first use; NULL until then */
  const cat_value *row;  /* the current row's ncol values (exec_row_values), valid while
                            state is API_ROW */
  int fail_code;         /* ROWAN_* code of the failed step rowan_reset has yet to report
                            (SQLite's sqlite3_reset), ROWAN_OK when none */
  int fail_off;          /* that failure's byte offset in the SQL, or -1 */
  char *fail_msg;        /* malloc'd copy of its message, so that rowan_reset can make it
                            the connection's error again; NULL when none (or no memory) */
};

/* Set the connection's error: code, offset (-1 if none) and a printf-style message.
** Returns code. */
int api_error(rowan_db *db, int code, int offset, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Clear the connection's error (code ROWAN_OK). */
void api_clear_error(rowan_db *db);
/* Map an EXEC_* status to its ROWAN_* code (ROWAN_ERROR for an unknown value). */
int api_code_of_exec(int code);
/* Map a KV_* status to a ROWAN_* code. */
int api_code_of_kv(int code);
/* The current row's value of column i, or NULL when there is no row or i is out of range. */
const cat_value *api_value(rowan_stmt *stmt, int i);
/* Free the column buffers of a statement (at finalize). */
void api_free_columns(rowan_stmt *stmt);

#endif /* ROWAN_API_INT_H */
