/*
** exec/txn.c: BEGIN / COMMIT / ROLLBACK. A transaction is one kv batch that every write
** statement inside it adds to; COMMIT commits it atomically (one WAL record), ROLLBACK and
** closing the session drop it. Outside a transaction each write statement gets its own
** batch. A statement that fails midway inside a transaction rolls its own operations back
** out of the batch (exec/write.c, kv_batch_rollback_to); the transaction stays open with the
** statements that succeeded, as in SQLite.
**
** Not here: reading a transaction's own writes (a kv scan overlay, exec/rowcodec.h's
** owner adds it), the write statements (exec/write.c).
*/
#include <stdio.h>

#include "exec/engine_int.h"

int exec_txn_begin(exec_session *s, exec_error *err) {
  if (s->txn) return exec_fail(err, EXEC_ERROR, -1, "a transaction is already open");
  s->txn = kv_batch_new();
  if (!s->txn) return exec_fail(err, EXEC_NOMEM, -1, "out of memory");
  s->txn_rows = 0;
  return EXEC_OK;
}

void exec_txn_discard(exec_session *s) {
  if (s->txn) s->txn_gen++; /* statements still reading the batch let go of it (exec_step) */
  kv_batch_free(s->txn);
  s->txn = NULL;
  s->txn_rows = 0;
}

int exec_txn_commit(exec_session *s, exec_error *err) {
  if (!s->txn) return exec_fail(err, EXEC_ERROR, -1, "no transaction is open");
  int rc = EXEC_OK;
  if (kv_batch_count(s->txn)) rc = exec_txn_commit_batch(s, s->txn, err);
  exec_txn_discard(s);
  return rc;
}

int exec_txn_rollback(exec_session *s, exec_error *err) {
  if (!s->txn) return exec_fail(err, EXEC_ERROR, -1, "no transaction is open");
  exec_txn_discard(s);
  return EXEC_OK;
}

kv_batch *exec_txn_batch(exec_session *s, bool *own) {
  if (s->txn) {
    *own = false;
    return s->txn;
  }
  *own = true;
  return kv_batch_new();
}

int exec_txn_commit_batch(exec_session *s, kv_batch *b, exec_error *err) {
  int krc = kv_commit(s->db, b, NULL);
  if (krc != KV_OK) return exec_kv_error(krc, err);
  return EXEC_OK;
}
