/*
** tests/tu_api.h: helpers the public-API tests share: run a statement that must succeed,
** and open a database on an in-memory env (kv/env/env_mem.h) without syncs. Include after
** <cmocka.h> and "rowan.h"; a failure fails the test with the statement and the error.
** Not for engine code.
*/
#ifndef ROWAN_TESTS_TU_API_H
#define ROWAN_TESTS_TU_API_H

#include "kv/kv.h"
#include "rowan.h"

/* Run sql (any number of statements, rows ignored); fail the test unless it succeeds. */
static inline void exec_ok(rowan_db *db, const char *sql) {
  int rc = rowan_exec(db, sql, NULL, NULL);
  if (rc != ROWAN_OK) fail_msg("%s -> %s: %s", sql, rowan_errstr(rc), rowan_errmsg(db));
}

/* The first column of sql's first row as an integer, -1 when it gives no row; a statement
** that does not prepare fails the test. */
static inline int64_t tu_one_int(rowan_db *db, const char *sql) {
  rowan_stmt *st;
  if (rowan_prepare(db, sql, -1, &st, NULL) != ROWAN_OK) fail_msg("%s: %s", sql, rowan_errmsg(db));
  int64_t v = -1;
  if (rowan_step(st) == ROWAN_ROW) v = rowan_column_int64(st, 0);
  rowan_finalize(st);
  return v;
}

/* A database at "/db" of env (created when missing) with sync mode `sync` (ROWAN_SYNC_*:
** NORMAL when a test's WAL faults must hit each COMMIT); closed by the caller. */
static inline rowan_db *tu_open_mem_sync(kv_env *env, int sync) {
  rowan_options o;
  rowan_options_init(&o);
  o.kv_env = env;
  o.sync_mode = sync;
  rowan_db *db = NULL;
  assert_int_equal(rowan_open("/db", &o, &db), ROWAN_OK);
  return db;
}

/* A database at "/db" of env (created when missing), sync off; closed by the caller. */
static inline rowan_db *tu_open_mem(kv_env *env) { return tu_open_mem_sync(env, ROWAN_SYNC_OFF); }

#endif /* ROWAN_TESTS_TU_API_H */
