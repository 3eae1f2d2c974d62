/*
** kv/db/db_bg.c: the background thread that flushes frozen memstores and compacts store
** files, and the two synchronous entry points that hand it work and wait (kv_flush,
** kv_compact).
**
** One thread per writable store, started by kv_open and joined by kv_close. Under db->mu it
** picks one job at a time: the oldest frozen memstore of any family first (flushes free
** memory writers may be waiting for), then the WAL trim a commit asked for (kv/db/db_wal.c:
** record in the MANIFEST that the oldest segments are no longer needed, delete them), then
** a compaction: one kv_compact asked for, or a
** minor compaction of a family that reached compaction_trigger store files. It runs the job
** without mu, then broadcasts bg_done_cv. It picks nothing while the store is in its error
** state (a failed job sets it; the frozen memstores stay readable and the WAL keeps their
** ops), while DDL pauses it, or once kv_close asked it to stop (the running job finishes;
** frozen memstores left are replayed from the WAL at the next open).
** After each flush or compaction it checks the family's regions against
** kv_options.region_split_size (kv/db/db_split.c). A compaction that meets a damaged store
** file (KV_ERR_CORRUPT) does not set the error state: it fails that family's compactions
** (kv_compact reports it; automatic ones skip the family until the store is reopened) and
** the store stays writable (docs/KV_REGIONS.md).
** Not here: what a flush (kv/db/db_flush.c) or a compaction (kv/db/compact.c) does.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kv/util/thread.h"
#include "kv/db/db_impl.h"
#include "kv/util/status.h"

/* A family with work for the thread, and whether it is a flush. REQUIRES: mu. */
static kv_fam *pick_job(kv_db *db, bool *flush) {
  for (uint32_t i = 0; i < db->n_fam_slots; i++) {
    kv_fam *f = kv_db_family(db, i);
    if (f && f->n_imm) {
      *flush = true;
      return f;
    }
  }
  for (uint32_t i = 0; i < db->n_fam_slots; i++) {
    kv_fam *f = kv_db_family(db, i);
    if (f && (f->compact_req || (!f->compact_damaged &&
              kv_db_minor_pick(f, (uint32_t)db->opts.compaction_trigger) < f->n_files))) {
      *flush = false;
      return f;
    }
  }
  return NULL;
}

/* A region past kv_options.region_split_size is split (kv/db/db_split.c); a failure to
** record it is the store's error state, as a failed flush record is. mu NOT held. */
static void split_after(kv_db *db, kv_fam *f) {
  int rc = kv_db_maybe_split(db, f);
  if (rc) kv_db_fail(db, rc);
}

static void *bg_main(void *arg) {
  kv_db *db = arg;
  pthread_mutex_lock(&db->mu);
  while (!db->bg_stop) {
    bool flush = false;
    kv_fam *f = db->bg_error || db->bg_pause ? NULL : pick_job(db, &flush);
    if (!db->bg_error && !db->bg_pause && db->wal_trim_req && (!f || !flush)) {
      db->wal_trim_req = false;
      db->bg_busy = true;
      pthread_mutex_unlock(&db->mu);
      kv_db_trim_wal(db); /* a failure sets the error state */
      pthread_mutex_lock(&db->mu);
      db->bg_busy = false;
      pthread_cond_broadcast(&db->bg_done_cv);
      continue;
    }
    if (!f) {
      pthread_cond_wait(&db->bg_cv, &db->mu);
      continue;
    }
    db->bg_busy = true;
    if (flush) {
      pthread_mutex_unlock(&db->mu);
      if (kv_db_flush_imm(db, f) == KV_OK) split_after(db, f);
      pthread_mutex_lock(&db->mu);
    } else {
      enum kv_cm_mode mode = f->compact_req == 2 ? KV_CM_MAJOR
                             : f->compact_req == 1 ? KV_CM_MINOR : KV_CM_AUTO;
      uint64_t asked = f->compact_asked;
      f->compact_req = 0;
      pthread_mutex_unlock(&db->mu);
      int rc = kv_db_compact_family(db, f, mode);
      if (rc == KV_OK) split_after(db, f);
      pthread_mutex_lock(&db->mu);
      f->compact_done = asked;
      /* a damaged input fails this family's compactions only (kv_compact reports it) */
      if (rc && !db->bg_error && !(rc == KV_ERR_CORRUPT && f->compact_damaged))
        kv_db_set_bg_error(db, rc, kv_errmsg());
    }
    db->bg_busy = false;
    pthread_cond_broadcast(&db->bg_done_cv);
  }
  pthread_mutex_unlock(&db->mu);
  return NULL;
}

int kv_db_bg_start(kv_db *db) {
  if (kv_thread_create(&db->bg_thread, bg_main, db) != 0)
    return kv_error(KV_ERR_IO, "kv_open: cannot start the background thread");
  db->bg_running = true;
  return KV_OK;
}

void kv_db_bg_stop(kv_db *db) {
  if (!db->bg_running) return;
  pthread_mutex_lock(&db->mu);
  db->bg_stop = true;
  pthread_cond_broadcast(&db->bg_cv);
  pthread_mutex_unlock(&db->mu);
  pthread_join(db->bg_thread, NULL);
  db->bg_running = false;
}

void kv_db_bg_pause(kv_db *db) {
  db->bg_pause++;
  while (db->bg_busy) pthread_cond_wait(&db->bg_done_cv, &db->mu);
}

void kv_db_bg_pause_install(kv_db *db) {
  db->bg_pause++;
  while (db->bg_busy && !db->bg_cm_merging) pthread_cond_wait(&db->bg_done_cv, &db->mu);
}

void kv_db_bg_resume(kv_db *db) {
  db->bg_pause--;
  pthread_cond_broadcast(&db->bg_cv);
}

/* Ids of the live families of `table` (NULL = all), taking the writer role to freeze their
** memstores when `freeze`. Returns the ids (malloc'ed) in *ids. */
static int freeze_table(kv_db *db, const char *table, bool freeze, uint32_t **ids,
                        uint32_t *n) {
  *ids = NULL;
  *n = 0;
  kv_writer w;
  memset(&w, 0, sizeof w);
  pthread_mutex_lock(&db->mu);
  int rc = kv_db_writable(db);
  if (rc) {
    pthread_mutex_unlock(&db->mu);
    return rc;
  }
  kv_db_role_acquire(db, &w);
  kv_fam **fams = NULL;
  rc = kv_db_table_families(db, table, &fams, n);
  pthread_mutex_unlock(&db->mu);
  if (rc == KV_OK && freeze) rc = kv_db_freeze(db, fams, *n);
  if (rc == KV_OK) {
    *ids = malloc((*n ? *n : 1) * sizeof **ids);
    if (!*ids) rc = kv_error(KV_ERR_NOMEM, "out of memory");
    for (uint32_t i = 0; rc == KV_OK && i < *n; i++) (*ids)[i] = fams[i]->id;
  }
  free(fams);
  pthread_mutex_lock(&db->mu);
  kv_db_role_release(db, &w);
  pthread_mutex_unlock(&db->mu);
  return rc;
}

/* Wait until `done(f, target)` holds for every family still alive, or the error state.
** REQUIRES: mu held. */
static int wait_families(kv_db *db, const uint32_t *ids, const uint64_t *targets, uint32_t n,
                         bool (*done)(kv_db *, kv_fam *, uint64_t)) {
  for (;;) {
    if (db->bg_error) return kv_db_writable(db);
    bool all = true;
    for (uint32_t i = 0; i < n && all; i++) {
      kv_fam *f = kv_db_family(db, ids[i]);
      if (f && !done(db, f, targets[i])) all = false;
    }
    if (all) return KV_OK;
    pthread_cond_wait(&db->bg_done_cv, &db->mu);
  }
}

static bool flush_done(kv_db *db, kv_fam *f, uint64_t target) {
  return f->flushed >= target && !f->compact_req &&
         (f->compact_damaged ||
          kv_db_minor_pick(f, (uint32_t)db->opts.compaction_trigger) == f->n_files);
}

int kv_flush(kv_db *db, const char *table) {
  if (!db) return kv_error(KV_MISUSE, "kv_flush: NULL store");
  uint32_t *ids, n;
  int rc = freeze_table(db, table, true, &ids, &n);
  if (rc) return rc;
  uint64_t *targets = calloc(n ? n : 1, sizeof *targets);
  if (!targets) {
    free(ids);
    return kv_error(KV_ERR_NOMEM, "kv_flush: out of memory");
  }
  pthread_mutex_lock(&db->mu);
  for (uint32_t i = 0; i < n; i++) {
    kv_fam *f = kv_db_family(db, ids[i]);
    targets[i] = f ? f->frozen : 0;
  }
  rc = wait_families(db, ids, targets, n, flush_done);
  pthread_mutex_unlock(&db->mu);
  free(targets);
  free(ids);
  return rc;
}

static bool compact_done(kv_db *db, kv_fam *f, uint64_t target) {
  (void)db;
  return f->compact_done >= target;
}

int kv_compact(kv_db *db, const char *table, bool major) {
  if (!db) return kv_error(KV_MISUSE, "kv_compact: NULL store");
  uint32_t *ids, n;
  int rc = freeze_table(db, table, major, &ids, &n);
  if (rc) return rc;
  uint64_t *targets = calloc(n ? n : 1, sizeof *targets);
  if (!targets) {
    free(ids);
    return kv_error(KV_ERR_NOMEM, "kv_compact: out of memory");
  }
  pthread_mutex_lock(&db->mu);
  for (uint32_t i = 0; i < n; i++) {
    kv_fam *f = kv_db_family(db, ids[i]);
    if (!f) continue;
    if (f->compact_req < (major ? 2 : 1)) f->compact_req = major ? 2 : 1;
    targets[i] = ++f->compact_asked;
  }
  pthread_cond_signal(&db->bg_cv);
  rc = wait_families(db, ids, targets, n, compact_done);
  for (uint32_t i = 0; i < n && rc == KV_OK; i++) {
    kv_fam *f = kv_db_family(db, ids[i]);
    if (f && f->compact_damaged) rc = kv_error(KV_ERR_CORRUPT, "%s", f->damage_msg);
  }
  pthread_mutex_unlock(&db->mu);
  free(targets);
  free(ids);
  return rc;
}
