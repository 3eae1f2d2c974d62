/*
** kv/db/db_wal.c: the store's WAL segments as a whole: starting a new segment (rotation),
** deleting the segments no family needs, the bound on their total size (kv_options.
** wal_limit), the background thread's trim job, and kv_wal_get_stats.
**
** Why a bound: a segment can be deleted only when every family has flushed past it
** (kv_db_oldest_needed_wal), so one family that rarely gets writes (a table's key family,
** docs/FORMAT_SQL.md (Part 3) section 3) pins every segment written since its first unflushed op,
** and kv_open replays them all. After each commit group the writer, in kv_db_wal_bound:
**   1. rolls the current segment once it holds L / 4 bytes (L = wal_limit), so no segment
**      is much larger than that and deleting the oldest frees a known share;
**   2. while the live segments hold more than L bytes, freezes the families whose active
**      memstore has ops in the oldest segment: only those (HBase's maxlogs and RocksDB's
**      max_total_wal_size flush the same set). The background thread flushes them; the
**      flush deletes the segment (kv/db/db_flush.c). A segment that no memstore pins any more
**      (its table was dropped) but the MANIFEST still names is left to the trim job;
**   3. waits on bg_done_cv while more than L + L / 4 bytes stay, holding the writer role
**      like the memstore back-pressure does. What it waits for, a flush or a trim, needs
**      neither the writer role nor a DDL pause, so it cannot deadlock; the store's error
**      state ends the wait.
** So before the commits of a group return, the live segments hold at most L + L / 4 bytes.
** Not here: the segment file format (kv/db/wal.c), the flush itself (kv/db/db_flush.c).
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kv/db/db_impl.h"
#include "kv/util/status.h"

#define PATH_CAP 4096 /* bytes for any path built here */

int kv_db_wal_live_add(kv_db *db, uint64_t number, uint64_t bytes) {
  if (db->n_wal_live == db->cap_wal_live) {
    uint32_t nc = db->cap_wal_live ? db->cap_wal_live * 2 : 8;
    uint64_t *nw = realloc(db->wal_live, nc * sizeof *nw);
    if (!nw) return kv_error(KV_ERR_NOMEM, "out of memory");
    db->wal_live = nw;
    uint64_t *nb = realloc(db->wal_live_bytes, nc * sizeof *nb);
    if (!nb) return kv_error(KV_ERR_NOMEM, "out of memory");
    db->wal_live_bytes = nb;
    db->cap_wal_live = nc;
  }
  db->wal_live[db->n_wal_live] = number;
  db->wal_live_bytes[db->n_wal_live++] = bytes;
  return KV_OK;
}

void kv_db_delete_old_wal(kv_db *db) {
  uint64_t oldest = db->ver.wal_number;
  uint32_t k = 0;
  for (uint32_t i = 0; i < db->n_wal_live; i++) {
    uint64_t n = db->wal_live[i];
    /* Below the oldest needed one, or closed without a record (kv_open's previous segment
    ** when nothing was written): no op of any family is there, and no later MANIFEST
    ** record can name an empty closed segment as the oldest needed. */
    bool unneeded = n < oldest || (db->wal_live_bytes[i] == 0 && n != oldest);
    if (unneeded && (!db->wal || n != kv_wal_number(db->wal))) {
      char p[PATH_CAP];
      kv_wal_path(p, sizeof p, db->path, n);
      db->env->remove(db->env, p);
    } else {
      db->wal_live_bytes[k] = db->wal_live_bytes[i];
      db->wal_live[k++] = n;
    }
  }
  db->n_wal_live = k;
}

int kv_db_rotate_wal(kv_db *db) {
  /* The old segment's buffered records (KV_SYNC_OFF) reach the file before the new segment
  ** exists: a reader beside the writer (kv/db/db_follow.c) that sees segment N+1 takes segment
  ** N as complete. */
  int rc = db->wal ? kv_wal_write_out(db->wal) : KV_OK;
  if (rc) return rc;
  uint64_t num = kv_db_new_file_number(db);
  kv_wal *nw;
  rc = kv_wal_create(db->env, db->path, num, db->opts.sync_mode, &nw);
  if (rc) return rc;
  rc = db->env->sync_dir(db->env, db->path);
  pthread_mutex_lock(&db->mu);
  if (rc == KV_OK) rc = kv_db_wal_live_add(db, num, 0);
  kv_wal *old = db->wal;
  if (rc == KV_OK) {
    for (uint32_t i = 0; old && i < db->n_wal_live; i++)
      if (db->wal_live[i] == kv_wal_number(old)) db->wal_live_bytes[i] = kv_wal_size(old);
    db->wal = nw;
  }
  pthread_mutex_unlock(&db->mu);
  if (rc) {
    kv_wal_close(nw);
    return rc;
  }
  return old ? kv_wal_close(old) : KV_OK;
}

uint64_t kv_db_wal_total(kv_db *db) {
  uint64_t total = 0, cur = db->wal ? kv_wal_number(db->wal) : 0;
  for (uint32_t i = 0; i < db->n_wal_live; i++)
    if (!db->wal || db->wal_live[i] != cur) total += db->wal_live_bytes[i];
  return total + (db->wal ? kv_wal_size(db->wal) : 0);
}

/* The families whose active memstore holds ops in segment `seg` (or older) into out[]
** (at most cap; the count is returned); *frozen says whether a frozen memstore does.
** REQUIRES: mu. */
static uint32_t pinning(kv_db *db, uint64_t seg, kv_fam **out, uint32_t cap, bool *frozen) {
  uint32_t n = 0;
  *frozen = false;
  for (uint32_t i = 0; i < db->n_fam_slots; i++) {
    kv_fam *f = kv_db_family(db, i);
    if (!f) continue;
    uint64_t ml = f->mem_log;
    if (ml && ml <= seg && kv_memstore_cells(f->mem) && n < cap) out[n++] = f;
    for (uint32_t k = 0; k < f->n_imm; k++)
      if (f->imm_logs[k] && f->imm_logs[k] <= seg) *frozen = true;
  }
  return n;
}

int kv_db_wal_bound(kv_db *db) {
  if (db->opts.read_only || !db->wal) return KV_OK;
  uint64_t limit = db->opts.wal_limit, roll = limit / 4;
  if (kv_wal_size(db->wal) >= roll) {
    int rc = kv_db_rotate_wal(db);
    if (rc) return kv_db_fail(db, rc);
  }
  kv_fam *due[64];
  pthread_mutex_lock(&db->mu);
  for (;;) {
    uint64_t total = kv_db_wal_total(db);
    if (db->bg_error || total <= limit || db->n_wal_live == 0) break;
    uint64_t oldest = db->wal_live[0];
    if (oldest == kv_wal_number(db->wal)) {
      /* The current segment alone is over the limit (one group larger than L / 4 ... L):
      ** start another, so what pins this one can be flushed away. */
      pthread_mutex_unlock(&db->mu);
      int rc = kv_db_rotate_wal(db);
      if (rc) return kv_db_fail(db, rc);
      pthread_mutex_lock(&db->mu);
      continue;
    }
    bool frozen;
    uint32_t n = pinning(db, oldest, due, 64, &frozen);
    if (n) {
      db->stat_wal_freezes += n;
      pthread_mutex_unlock(&db->mu);
      int rc = kv_db_freeze(db, due, n); /* one rotation; the thread is woken; sets the error */
      if (rc) return rc;
      pthread_mutex_lock(&db->mu);
      continue;
    }
    if (!frozen && kv_db_oldest_needed_wal(db, NULL) > oldest && !db->wal_trim_req) {
      db->wal_trim_req = true; /* nothing pins it: the MANIFEST only has to say so */
      pthread_cond_signal(&db->bg_cv);
    }
    if (total <= limit + roll) break; /* the flushes run in the background */
    db->stat_wal_stalls++;
    pthread_cond_wait(&db->bg_done_cv, &db->mu); /* wait for a flush or the trim */
  }
  pthread_mutex_unlock(&db->mu);
  return KV_OK;
}

int kv_db_trim_wal(kv_db *db) {
  pthread_mutex_lock(&db->mu);
  kv_edit e = kv_db_counters_edit(db, NULL);
  bool moved = e.wal_number > db->ver.wal_number;
  pthread_mutex_unlock(&db->mu);
  if (moved) {
    int rc = kv_manifest_apply(db->man, &db->ver, &e, 1);
    if (rc) return kv_db_fail(db, rc);
  }
  pthread_mutex_lock(&db->mu);
  kv_db_delete_old_wal(db);
  pthread_mutex_unlock(&db->mu);
  return KV_OK;
}

void kv_wal_segment_path(kv_db *db, uint64_t number, char *buf, size_t cap) {
  kv_wal_path(buf, cap, db->path, number);
}

int kv_wal_get_stats(kv_db *db, kv_wal_stats *out) {
  if (!db || !out) return kv_error(KV_MISUSE, "kv_wal_get_stats: NULL argument");
  memset(out, 0, sizeof *out);
  pthread_mutex_lock(&db->mu);
  out->segments = db->n_wal_live;
  out->bytes = kv_db_wal_total(db);
  out->limit = db->opts.wal_limit;
  out->bound_freezes = db->stat_wal_freezes;
  out->bound_waits = db->stat_wal_stalls;
  out->replayed_segments = db->stat_replay_segments;
  out->replayed_records = db->stat_replay_records;
  out->replayed_bytes = db->stat_replay_bytes;
  out->dropped_bytes = db->stat_dropped_bytes;
  out->dropped_segment = db->stat_dropped_segment;
  out->reader_retries = db->stat_reader_retries;
  out->reader_stops = db->stat_reader_stops;
  pthread_mutex_unlock(&db->mu);
  return KV_OK;
}
