/*
** tests/exec/test_engine_util.h: a small harness for the engine tests (tests/exec/
** test_engine*.c, test_write*.c, tests/planner/test_bind*.c, test_explain*.c): a store on
** the in-memory env with a session, helpers that run SQL and return the result as text
** ("a|b\nc|d\n", NULL as "NULL") or the error, and EXPLAIN text with times masked.
** Header-only (static functions), one harness per test program.
*/
#ifndef ROWAN_TEST_ENGINE_UTIL_H
#define ROWAN_TEST_ENGINE_UTIL_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "catalog/value.h"
#include "exec/engine.h"
#include "kv/env/env.h"
#include "kv/env/env_mem.h"
#include "kv/kv.h"

typedef struct tdb {
  kv_env *env;        /* in-memory file system */
  kv_db *db;          /* store */
  exec_session *s;    /* session */
  exec_error err;     /* last error */
  exec_metrics m;     /* metrics of the last statement run by q()/run() */
  char kind[32];      /* exec_scan_kind of that statement */
  char *out;          /* last result text (malloc) */
} tdb;

/* max_lookback_ms: kv_options.max_lookback_ms (0: no look-back window, as kv's default). */
__attribute__((unused)) static tdb *tdb_open_window(int64_t max_lookback_ms) {
  tdb *t = calloc(1, sizeof *t);
  t->env = kv_env_mem_new(1500000000000LL); /* a fixed clock: stable store file sizes */
  kv_options o;
  kv_options_init(&o);
  o.env = t->env;
  o.create_if_missing = true;
  o.sync_mode = KV_SYNC_OFF;
  o.max_lookback_ms = max_lookback_ms;
  assert_int_equal(kv_open("/db", &o, &t->db), KV_OK);
  assert_int_equal(exec_session_open(t->db, &t->s, &t->err), EXEC_OK);
  return t;
}

__attribute__((unused)) static tdb *tdb_open(void) { return tdb_open_window(0); }

__attribute__((unused)) static void tdb_close(tdb *t) {
  assert_int_equal(exec_session_close(t->s), EXEC_OK);
  kv_close(t->db);
  kv_env_free(t->env);
  free(t->out);
  free(t);
}

/* Append text to a growing buffer. */
__attribute__((unused)) static void tdb_cat(char **buf, size_t *len, size_t *cap, const char *s, size_t n) {
  if (*len + n + 1 > *cap) {
    *cap = (*len + n + 1) * 2;
    *buf = realloc(*buf, *cap);
  }
  memcpy(*buf + *len, s, n);
  *len += n;
  (*buf)[*len] = 0;
}

/* Run one statement with optional parameters; returns the exec code of the last step
** (EXEC_DONE on success) and leaves the rows in t->out. */
__attribute__((unused)) static int tdb_runp(tdb *t, const char *sql, int np, const cat_value *params) {
  exec_stmt *st = NULL;
  free(t->out);
  t->out = NULL;
  size_t len = 0, cap = 0;
  tdb_cat(&t->out, &len, &cap, "", 0);
  int rc = exec_prepare(t->s, sql, strlen(sql), &st, NULL, &t->err);
  if (rc != EXEC_OK) return rc;
  if (!st) return EXEC_DONE;
  for (int i = 0; i < np; i++) assert_int_equal(exec_bind(st, i + 1, &params[i], &t->err), 0);
  int n = exec_column_count(st);
  while ((rc = exec_step(st, &t->err)) == EXEC_ROW) {
    for (int i = 0; i < n; i++) {
      char buf[512];
      const cat_value *v = exec_column_value(st, i);
      size_t k;
      if (!v->is_null && (v->type.id == CAT_T_DOUBLE || v->type.id == CAT_T_FLOAT)) {
        k = (size_t)snprintf(buf, sizeof buf, "%.15g", v->u.d);
        if (strtod(buf, NULL) != v->u.d) k = (size_t)snprintf(buf, sizeof buf, "%.17g", v->u.d);
      } else {
        k = cat_text_format(v, buf, sizeof buf);
      }
      if (k >= sizeof buf) k = sizeof buf - 1;
      if (i) tdb_cat(&t->out, &len, &cap, "|", 1);
      tdb_cat(&t->out, &len, &cap, buf, k);
    }
    tdb_cat(&t->out, &len, &cap, "\n", 1);
  }
  exec_get_metrics(st, &t->m);
  const char *k = exec_scan_kind(st);
  snprintf(t->kind, sizeof t->kind, "%s", k ? k : "");
  exec_finalize(st);
  return rc;
}

__attribute__((unused)) static int tdb_run(tdb *t, const char *sql) { return tdb_runp(t, sql, 0, NULL); }

/* Run a statement that must succeed; returns its rows as text. */
__attribute__((unused)) static const char *q(tdb *t, const char *sql) {
  int rc = tdb_run(t, sql);
  if (rc != EXEC_DONE) fail_msg("%s\n  -> code %d: %s", sql, rc, t->err.msg);
  return t->out;
}

/* Run a statement that must fail with code; returns the message. */
__attribute__((unused)) static const char *qerr(tdb *t, const char *sql, int code) {
  int rc = tdb_run(t, sql);
  if (rc != code) fail_msg("%s\n  -> code %d (want %d): %s", sql, rc, code, t->err.msg);
  return t->err.msg;
}

/* EXPLAIN text with every "time=...ms" replaced by "time=*". */
__attribute__((unused)) static const char *explain(tdb *t, const char *sql) {
  q(t, sql);
  char *p = t->out;
  while ((p = strstr(p, "time=")) != NULL) {
    char *e = strstr(p, "ms");
    if (!e) break;
    p += 5;
    memmove(p + 1, e + 2, strlen(e + 2) + 1);
    *p = '*';
  }
  return t->out;
}

#endif /* ROWAN_TEST_ENGINE_UTIL_H */
