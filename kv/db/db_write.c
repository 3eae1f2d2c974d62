/*
** kv/db/db_write.c: commits with group commit (kv_commit) and the writer role.
**
** Writers queue on db->writers. The one at the head is the leader: it takes the queued
** batches behind it (up to a byte budget), gives each its sequence numbers in queue order
** (one per op), appends each as its own WAL record (in the record form, kv/db/wal.h; a batch's
** ops are decoded once for that and for the memstores), makes them durable with one
** kv_wal_sync for the whole group in KV_SYNC_FULL, applies them to the memstores, and only
** then publishes the new last sequence number, so readers see a batch whole or not at all.
** Followers sleep on their condition variable until the leader marks them done. A WAL
** failure fails every commit of the group, applies nothing, and sets the sticky error that
** refuses writes (KV_ERR_IO / KV_ERR_NOSPC) until the store is reopened.
**
** The same queue serializes flushes, compactions and DDL (role-only waiters with no
** batch), so they never run while a group is being applied. Not here: the flush itself
** (kv/db/db_flush.c).
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kv/util/coding.h"
#include "kv/db/db_impl.h"
#include "kv/util/status.h"

#define GROUP_BYTES (1u << 20) /* a leader adds followers' batches up to this many bytes */
#define COMMIT_OPS_MAX (1u << 16) /* ops of a group decoded once (for the WAL record and the
                                     memstores) up to this many; later ones twice */

int kv_db_writable(kv_db *db) {
  if (db->opts.read_only)
    return kv_error(KV_ERR_READONLY, "the store '%s' was opened read-only", db->path);
  if (db->bg_error)
    return kv_error(db->bg_error, "the store refuses writes after an earlier error: %s",
                    db->bg_msg);
  return KV_OK;
}

void kv_db_set_bg_error(kv_db *db, int code, const char *msg) {
  if (db->bg_error) return;
  db->bg_error = code;
  snprintf(db->bg_msg, sizeof db->bg_msg, "%s", msg);
  pthread_cond_broadcast(&db->bg_done_cv); /* kv_flush / kv_compact waiters give up */
}

static void enqueue(kv_db *db, kv_writer *w) {
  pthread_cond_init(&w->cv, NULL);
  w->next = NULL;
  w->done = false;
  if (db->writers_tail) db->writers_tail->next = w;
  else db->writers = w;
  db->writers_tail = w;
}

void kv_db_role_acquire(kv_db *db, kv_writer *w) {
  w->batch = NULL;
  enqueue(db, w);
  while (db->writers != w) pthread_cond_wait(&w->cv, &db->mu);
}

/* Pop writers from the head up to and including `last`; wake the new head. */
static void pop_through(kv_db *db, kv_writer *last) {
  db->writers = last->next;
  if (!db->writers) db->writers_tail = NULL;
  if (db->writers) pthread_cond_signal(&db->writers->cv);
}

void kv_db_role_release(kv_db *db, kv_writer *w) {
  pop_through(db, w);
  pthread_cond_destroy(&w->cv);
}

/* Check every op's family; KV_OK or KV_ERR_NOTFOUND / KV_ERR_CORRUPT with a message. */
static int check_families(kv_db *db, const kv_batch *b) {
  const uint32_t *ids;
  uint32_t n;
  if (kv_batch_families(b, &ids, &n)) { /* the batch kept its family ids: no decoding */
    for (uint32_t i = 0; i < n; i++)
      if (!kv_db_family(db, ids[i]))
        return kv_error(KV_ERR_NOTFOUND, "kv_commit: an op names unknown family id %u", ids[i]);
    return KV_OK;
  }
  size_t len;
  const uint8_t *p = kv_batch_payload(b, &len), *limit = p + len;
  uint64_t count;
  p = kv_get_varint(p, limit, &count);
  for (uint64_t i = 0; p && i < count; i++) {
    kv_wal_op op;
    if (kv_wal_decode_op(&p, limit, &op) != KV_OK)
      return kv_error(KV_ERR_CORRUPT, "kv_commit: batch op %llu is damaged",
                      (unsigned long long)i);
    if (!kv_db_family(db, op.family_id))
      return kv_error(KV_ERR_NOTFOUND, "kv_commit: op %llu names unknown family id %u",
                      (unsigned long long)i, op.family_id);
  }
  return KV_OK;
}

/* Decode b's ops into db->commit_ops from *used (advanced); returns where they start, or
** SIZE_MAX when they do not fit or do not decode (the caller then works from the payload,
** which reports the damage). REQUIRES: the writer role. */
static size_t decode_ops(kv_db *db, const kv_batch *b, size_t *used) {
  size_t n = kv_batch_count(b);
  if (*used + n > COMMIT_OPS_MAX) return SIZE_MAX;
  if (*used + n > db->cap_commit_ops) {
    size_t cap = db->cap_commit_ops ? db->cap_commit_ops : 1024;
    while (cap < *used + n) cap *= 2;
    kv_wal_op *o = realloc(db->commit_ops, cap * sizeof *o);
    if (!o) return SIZE_MAX;
    db->commit_ops = o;
    db->cap_commit_ops = cap;
  }
  size_t len;
  const uint8_t *p = kv_batch_payload(b, &len), *limit = p + len;
  uint64_t count;
  p = kv_get_varint(p, limit, &count);
  if (!p || count != n) return SIZE_MAX;
  for (size_t i = 0; i < n; i++)
    if (kv_wal_decode_op(&p, limit, &db->commit_ops[*used + i]) != KV_OK) return SIZE_MAX;
  if (p != limit) return SIZE_MAX;
  size_t off = *used;
  *used += n;
  return off;
}

/* Insert a batch's ops into the memstores: the decoded `ops` (kv_batch_count(b) of them),
** or, when NULL, decoded from the payload. REQUIRES: the writer role. */
static int apply(kv_db *db, const kv_batch *b, const kv_wal_op *ops, uint64_t first_seq,
                 int64_t commit_ts) {
  size_t len;
  const uint8_t *p = kv_batch_payload(b, &len), *limit = p + len;
  uint64_t count = kv_batch_count(b);
  if (!ops) p = kv_get_varint(p, limit, &count);
  uint64_t wal_num = kv_wal_number(db->wal);
  for (uint64_t i = 0; p && i < count; i++) {
    kv_wal_op op;
    if (ops) op = ops[i];
    else if (kv_wal_decode_op(&p, limit, &op) != KV_OK)
      return kv_error(KV_ERR_CORRUPT, "kv_commit: batch op %llu is damaged",
                      (unsigned long long)i);
    kv_fam *f = kv_db_family(db, op.family_id);
    if (!f) continue; /* checked before; cannot happen while we hold the role */
    kv_cell c = {op.row, op.row_len, op.qual, op.qual_len,
                 op.ts == KV_TS_NOW ? commit_ts : op.ts, first_seq + i, op.type, op.value,
                 op.value_len};
    if (kv_memstore_cells(f->mem) == 0) f->mem_log = wal_num;
    int rc = kv_memstore_add(f->mem, &c);
    if (rc) return rc;
  }
  return KV_OK;
}

static int finish_waiter(kv_writer *w, uint64_t *seq_out) {
  int st = w->status;
  pthread_cond_destroy(&w->cv);
  if (st) return kv_error(st, "%s", w->msg);
  if (seq_out) *seq_out = w->last_seq;
  return KV_OK;
}

int kv_commit(kv_db *db, const kv_batch *b, uint64_t *seq_out) {
  if (!db || !b) return kv_error(KV_MISUSE, "kv_commit: NULL store or batch");
  if (kv_batch_byte_size(b) > KV_MAX_BATCH)
    return kv_error(KV_ERR_TOOBIG, "kv_commit: batch of %zu bytes is over the maximum of %u",
                    kv_batch_byte_size(b), KV_MAX_BATCH);
  kv_writer w;
  memset(&w, 0, sizeof w);
  w.batch = b;
  pthread_mutex_lock(&db->mu);
  int rc = kv_db_writable(db);
  if (rc) {
    pthread_mutex_unlock(&db->mu);
    return rc;
  }
  if (kv_batch_count(b) == 0) {
    if (seq_out) *seq_out = atomic_load(&db->last_seq);
    pthread_mutex_unlock(&db->mu);
    return KV_OK;
  }
  enqueue(db, &w);
  while (!w.done && db->writers != &w) pthread_cond_wait(&w.cv, &db->mu);
  if (w.done) {
    pthread_mutex_unlock(&db->mu);
    return finish_waiter(&w, seq_out);
  }

  /* Leader: form the group (consecutive batch writers from the head). */
  kv_writer *last = &w;
  size_t bytes = 0;
  uint64_t seq = atomic_load_explicit(&db->last_seq, memory_order_relaxed) + 1;
  int wrc = kv_db_writable(db);
  for (kv_writer *x = &w; x && x->batch; x = x->next) {
    size_t bsz = kv_batch_byte_size(x->batch);
    if (x != &w && bytes + bsz > GROUP_BYTES) break;
    bytes += bsz;
    last = x;
    x->status = wrc ? wrc : check_families(db, x->batch);
    if (x->status) {
      snprintf(x->msg, sizeof x->msg, "%s", kv_errmsg());
      continue;
    }
    x->first_seq = seq;
    seq += kv_batch_count(x->batch);
    x->last_seq = seq - 1;
  }
  /* KV_TS_NOW takes the commit time. If the wall clock stepped back (NTP), keep the last
  ** commit time instead, so a later write is never older than an earlier one; a later write
  ** at an equal timestamp wins by its sequence number. */
  int64_t commit_ts = db->env->now_ms(db->env);
  if (commit_ts < db->last_commit_ts) commit_ts = db->last_commit_ts;
  db->last_commit_ts = commit_ts;
  pthread_mutex_unlock(&db->mu);

  rc = KV_OK;
  bool any = false;
  size_t used = 0; /* entries of db->commit_ops taken by the group */
  for (kv_writer *x = &w; rc == KV_OK; x = x->next) {
    if (!x->status) {
      x->ops_off = decode_ops(db, x->batch, &used);
      if (x->ops_off != SIZE_MAX) {
        rc = kv_wal_append_ops(db->wal, x->first_seq, commit_ts, db->commit_ops + x->ops_off,
                               kv_batch_count(x->batch), kv_batch_byte_size(x->batch));
      } else {
        size_t len;
        const uint8_t *payload = kv_batch_payload(x->batch, &len);
        rc = kv_wal_append(db->wal, x->first_seq, commit_ts, payload, len);
      }
      any = true;
    }
    if (x == last) break;
  }
  if (rc == KV_OK && any) {
    if (db->opts.sync_mode == KV_SYNC_FULL) rc = kv_wal_sync(db->wal);
    else if (db->opts.sync_mode == KV_SYNC_NORMAL) rc = kv_wal_write_out(db->wal);
  }
  char msg[200] = "";
  if (rc) snprintf(msg, sizeof msg, "%s", kv_errmsg());
  int arc = KV_OK;
  for (kv_writer *x = &w; rc == KV_OK && arc == KV_OK; x = x->next) {
    if (!x->status)
      arc = apply(db, x->batch, x->ops_off != SIZE_MAX ? db->commit_ops + x->ops_off : NULL,
                  x->first_seq, commit_ts);
    if (x == last) break;
  }
  if (arc) snprintf(msg, sizeof msg, "%s", kv_errmsg());

  pthread_mutex_lock(&db->mu);
  if (rc) {
    kv_db_set_bg_error(db, rc, msg);
    for (kv_writer *x = &w;; x = x->next) {
      if (!x->status) {
        x->status = rc;
        snprintf(x->msg, sizeof x->msg, "kv_commit: WAL write failed: %s", msg);
      }
      if (x == last) break;
    }
  } else if (arc) {
    /* Durable in the WAL but not applied: refuse writes; a reopen replays it. */
    kv_db_set_bg_error(db, arc, msg);
  } else if (any) {
    atomic_store_explicit(&db->last_seq, seq - 1, memory_order_release);
    db->wal_end.seg = kv_wal_number(db->wal); /* the writer role: freezes and bulk loads */
    db->wal_end.off = kv_wal_size(db->wal);
    db->wal_end.seq = seq - 1;
  }
  bool flush = rc == KV_OK && arc == KV_OK && any;
  if (flush) {
    pthread_mutex_unlock(&db->mu);
    kv_db_maybe_flush(db); /* a failure sets the sticky error; these commits stand */
    pthread_mutex_lock(&db->mu);
  }
  for (kv_writer *x = &w;; x = x->next) {
    x->done = true;
    if (x != &w) pthread_cond_signal(&x->cv);
    if (x == last) break;
  }
  pop_through(db, last);
  pthread_mutex_unlock(&db->mu);
  return finish_waiter(&w, seq_out);
}
