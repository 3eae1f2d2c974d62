/*
** exec/txn.c: BEGIN / COMMIT / ROLLBACK. A transaction is one kv batch that every write
** statement inside it adds to; COMMIT commits it atomically (one WAL record), ROLLBACK and
** closing the session drop it. Outside a transaction each write statement gets its own
** batch. A statement that fails midway inside a transaction rolls its own operations back
** out of the batch (exec/write.c, kv_batch_rollback_to); the transaction stays open with the
** statements that succeeded, as in SQLite. A SELECT opened inside a transaction and still
** running when the transaction's writes are rolled back fails its next step with EXEC_ABORT
** (the session's readers list); after a COMMIT it goes on. On a backend atomic per row only,
** a batch with index rows is committed in Phoenix's three phases (exec/index_phase.c).
**
** Not here: reading a transaction's own writes (a kv scan overlay, exec/rowcodec.h's
** owner adds it), the write statements (exec/write.c).
*/
#include <stdio.h>

#include "exec/engine_int.h"
#include "exec/index.h"

/* A batch's buffer is kept for the session's next batch up to this many bytes: a loader's
** transactions of a few thousand rows then reuse one buffer instead of growing a new one
** from 256 bytes by doubling (a copy of the whole batch at each step) every time. */
#define SPARE_KEEP (8u << 20)

/* An empty batch: the session's spare, or a new one (NULL when out of memory). */
static kv_batch *new_batch(exec_session *s) {
  kv_batch *b = s->spare;
  s->spare = NULL;
  return b ? b : kv_batch_new();
}

void exec_txn_drop_batch(exec_session *s, kv_batch *b) {
  if (!b) return;
  if (s->spare || kv_batch_capacity(b) > SPARE_KEEP) {
    kv_batch_free(b);
    return;
  }
  kv_batch_clear(b);
  s->spare = b;
}

int exec_txn_begin(exec_session *s, exec_error *err) {
  if (s->txn) return exec_fail(err, EXEC_ERROR, -1, "a transaction is already open");
  s->txn = new_batch(s);
  if (!s->txn) return exec_fail(err, EXEC_NOMEM, -1, "out of memory");
  s->txn_rows = 0;
  return EXEC_OK;
}

void exec_txn_reader_open(exec_stmt *st) {
  exec_session *s = st->s;
  st->x_lost = false;
  if (!s->txn || st->rd_linked) return;
  st->rd_prev = NULL;
  st->rd_next = s->txn_readers;
  if (s->txn_readers) s->txn_readers->rd_prev = st;
  s->txn_readers = st;
  st->rd_linked = true;
}

void exec_txn_reader_done(exec_stmt *st) {
  if (!st->rd_linked) return;
  if (st->rd_prev) st->rd_prev->rd_next = st->rd_next;
  else st->s->txn_readers = st->rd_next;
  if (st->rd_next) st->rd_next->rd_prev = st->rd_prev;
  st->rd_next = st->rd_prev = NULL;
  st->rd_linked = false;
}

/* Empty the readers list as the transaction ends: each SELECT still running lets go of the
** batch, which is about to be freed (the rows its scan read from it stay; an index scan's
** lookups keep their own copy, exec/op_query.c); lost: the writes are gone (ROLLBACK, or a
** COMMIT that failed), so each is also marked x_lost and fails its next step. */
static void end_readers(exec_session *s, bool lost) {
  while (s->txn_readers) {
    exec_stmt *st = s->txn_readers;
    if (lost) st->x_lost = true;
    exec_query_drop_overlay(&st->x);
    exec_txn_reader_done(st);
  }
}

void exec_txn_discard(exec_session *s) {
  end_readers(s, false);
  exec_txn_drop_batch(s, s->txn);
  s->txn = NULL;
  s->txn_rows = 0;
}

int exec_txn_commit(exec_session *s, exec_error *err) {
  if (!s->txn) return exec_fail(err, EXEC_ERROR, -1, "no transaction is open");
  int rc = EXEC_OK;
  if (kv_batch_count(s->txn)) {
    rc = exec_txn_commit_batch(s, s->txn, err);
    if (rc != EXEC_OK) end_readers(s, true); /* the batch is dropped below: its rows are lost */
  }
  exec_txn_discard(s);
  return rc;
}

int exec_txn_rollback(exec_session *s, exec_error *err) {
  if (!s->txn) return exec_fail(err, EXEC_ERROR, -1, "no transaction is open");
  /* SQLite's rule (SQLITE_ABORT_ROLLBACK): a read still running on writes that are rolled
     back fails its next step; a transaction that wrote nothing changes nothing */
  if (kv_batch_count(s->txn)) end_readers(s, true);
  exec_txn_discard(s);
  return EXEC_OK;
}

kv_batch *exec_txn_batch(exec_session *s, bool *own) {
  if (s->txn) {
    *own = false;
    return s->txn;
  }
  *own = true;
  return new_batch(s);
}

int exec_txn_commit_batch(exec_session *s, kv_batch *b, exec_error *err) {
  /* per-row atomicity: index rows around their data rows (exec/index_phase.c) */
  int krc = s->be.caps.atomicity == KV_BE_ATOMIC_ROW
                ? exec_index_commit_phased(s->cat, &s->be, b, NULL)
                : kv_be_write(&s->be, b, NULL);
  if (krc != KV_OK) return exec_kv_error(krc, err);
  return EXEC_OK;
}
