/*
** tests/exec/test_rowatomic_util.h: a test session over the row-atomic test backend
** (kv/backend/backend_rowatomic.h) on test_engine_util.h's in-memory store, reopened with a
** fresh backend as a restarted writer would be. Shared by test_rowatomic_ddl.c and
** test_index_protocol.c.
*/
#ifndef ROWAN_TEST_ROWATOMIC_UTIL_H
#define ROWAN_TEST_ROWATOMIC_UTIL_H

#include "test_engine_util.h"

#include "exec/engine_int.h"
#include "kv/backend/backend_rowatomic.h"

/* The session of t again, through a new row-atomic backend *rw (closed with the session by
** reopen's caller via kv_backend_rowatomic_close). */
__attribute__((unused)) static kv_backend *reopen(tdb *t, kv_backend *rw) {
  if (t->s) assert_int_equal(exec_session_close(t->s), EXEC_OK);
  t->s = NULL;
  kv_backend_rowatomic_close(rw);
  assert_int_equal(kv_backend_rowatomic_open(t->db, &rw), KV_OK);
  int rc = exec_session_open_backend(t->db, rw, &t->s, &t->err);
  if (rc != EXEC_OK) fail_msg("the session does not open again: %s", t->err.msg);
  return rw;
}

__attribute__((unused)) static void finish(tdb *t, kv_backend *rw) {
  assert_int_equal(exec_session_close(t->s), EXEC_OK);
  t->s = NULL;
  kv_backend_rowatomic_close(rw);
  kv_close(t->db);
  kv_env_free(t->env);
  free(t->out);
  free(t);
}

__attribute__((unused)) static tdb *open_rw(kv_backend **rw) {
  tdb *t = tdb_open();
  assert_int_equal(exec_session_close(t->s), EXEC_OK);
  t->s = NULL;
  *rw = reopen(t, NULL);
  return t;
}

#endif /* ROWAN_TEST_ROWATOMIC_UTIL_H */
