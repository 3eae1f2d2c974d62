/*
** kv/db_flush.c: memstore flushes (kv_flush, and the automatic ones after commits), WAL
** segment rotation and deletion, and the MANIFEST counters.
**
** A flush of family f, done by the holder of the writer role:
**   1. freeze: f->mem becomes f->imm and a new empty memstore takes its place (under mu, so
**      scans opened from then on read both); every op <= last_seq is now in imm or older;
**   2. start a new WAL segment, so the old ones can be deleted once no family needs them;
**   3. write imm to data/<table>/<family>/<number>.sf with kv_sf_writer (written whole and
**      synced), sync the folder;
**   4. one MANIFEST record: ADD_FILE with f's new flushed_seq, and the counters;
**   5. publish the file in f's list and drop imm (under mu); delete WAL segments older than
**      the oldest one any family still needs.
** A crash before 4 leaves an unnamed .sf file that kv_open deletes, and the WAL still holds
** every op; after 4, WAL replay skips f's ops <= flushed_seq. A failure sets the sticky
** error (writes refused until reopen); imm stays readable.
** Not here: compaction (kv/compact.c), which a flush starts when a family has
** compaction_trigger files.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kv/db_impl.h"
#include "kv/status.h"

#define PATH_CAP 4096 /* bytes for any path built here */

/* Oldest WAL segment still holding unflushed ops of a live family. */
static uint64_t oldest_needed_wal(kv_db *db) {
  uint64_t oldest = db->wal ? kv_wal_number(db->wal) : db->ver.wal_number;
  for (uint32_t i = 0; i < db->n_fam_slots; i++) {
    kv_fam *f = kv_db_family(db, i);
    if (!f) continue;
    if (f->mem_log && kv_memstore_cells(f->mem) && f->mem_log < oldest) oldest = f->mem_log;
    if (f->imm && f->imm_log && f->imm_log < oldest) oldest = f->imm_log;
  }
  return oldest;
}

static kv_edit counters_edit(kv_db *db) {
  kv_edit e;
  memset(&e, 0, sizeof e);
  e.kind = KV_EDIT_SET_COUNTERS;
  e.next_file_number = db->ver.next_file_number;
  e.next_table_id = db->ver.next_table_id;
  e.next_family_id = db->ver.next_family_id;
  e.last_seq = atomic_load(&db->last_seq);
  e.wal_number = oldest_needed_wal(db);
  return e;
}

int kv_db_write_counters(kv_db *db) {
  kv_edit e = counters_edit(db);
  return kv_manifest_apply(db->man, &db->ver, &e, 1);
}

/* Delete WAL segments below the oldest needed one (best effort). */
static void delete_old_wal(kv_db *db) {
  uint64_t oldest = db->ver.wal_number;
  uint32_t k = 0;
  for (uint32_t i = 0; i < db->n_wal_live; i++) {
    uint64_t n = db->wal_live[i];
    if (n < oldest && (!db->wal || n != kv_wal_number(db->wal))) {
      char p[PATH_CAP];
      kv_wal_path(p, sizeof p, db->path, n);
      db->env->remove(db->env, p);
    } else {
      db->wal_live[k++] = n;
    }
  }
  db->n_wal_live = k;
}

/* Start a new WAL segment; the old one is synced and closed. */
static int rotate_wal(kv_db *db) {
  uint64_t num = db->ver.next_file_number++;
  kv_wal *nw;
  int rc = kv_wal_create(db->env, db->path, num, db->opts.sync_mode, &nw);
  if (rc) return rc;
  rc = db->env->sync_dir(db->env, db->path);
  if (rc == KV_OK) rc = kv_db_wal_live_add(db, num);
  if (rc) {
    kv_wal_close(nw);
    return rc;
  }
  kv_wal *old = db->wal;
  db->wal = nw;
  return old ? kv_wal_close(old) : KV_OK;
}

/* Write every cell of `it` (from its first) to a new store file of f. On success *h is
** the open handle (NULL when the iterator had no cell) and *meta describes it. */
int kv_db_write_sf(kv_db *db, kv_fam *f, kv_iter *it, kv_sfh **h) {
  *h = NULL;
  it->ops->seek_first(it);
  if (!it->ops->valid(it)) return it->ops->status(it);
  char dir[PATH_CAP], path[PATH_CAP];
  kv_db_family_dir(db, f, dir, sizeof dir);
  int rc = db->env->mkdir(db->env, dir);
  if (rc) return rc;
  uint64_t number = db->ver.next_file_number++;
  kv_db_sf_path(db, f, number, path, sizeof path);
  kv_sf_writer_options wo = {f->block_size, f->compression, 0};
  kv_sf_writer *w;
  rc = kv_sf_writer_open(db->env, path, &wo, &w);
  if (rc) return rc;
  for (; it->ops->valid(it) && rc == KV_OK; it->ops->next(it))
    rc = kv_sf_writer_add(w, it->ops->cell(it));
  if (rc == KV_OK) rc = it->ops->status(it);
  if (rc) {
    kv_sf_writer_abort(w);
    db->env->remove(db->env, path);
    return rc;
  }
  kv_sf_props props;
  rc = kv_sf_writer_finish(w, &props);
  if (rc == KV_OK) rc = db->env->sync_dir(db->env, dir);
  if (rc == KV_OK) {
    kv_file_meta meta = {number, props.file_size, props.min_seq, props.max_seq, props.cells,
                         props.rows};
    rc = kv_sfh_open(db, f, &meta, h);
  }
  if (rc) db->env->remove(db->env, path);
  return rc;
}

static int fail(kv_db *db, int rc) {
  char msg[256];
  snprintf(msg, sizeof msg, "%s", kv_errmsg());
  pthread_mutex_lock(&db->mu);
  kv_db_set_bg_error(db, rc, msg);
  pthread_mutex_unlock(&db->mu);
  return kv_error(rc, "%s", msg);
}

int kv_db_flush_family(kv_db *db, kv_fam *f) {
  pthread_mutex_lock(&db->mu);
  int rc = kv_db_writable(db);
  if (rc || kv_memstore_cells(f->mem) == 0) {
    pthread_mutex_unlock(&db->mu);
    return rc;
  }
  kv_memstore *fresh = kv_memstore_new();
  if (!fresh) {
    pthread_mutex_unlock(&db->mu);
    return kv_error(KV_ERR_NOMEM, "flush: out of memory");
  }
  f->imm = f->mem;
  f->imm_log = f->mem_log;
  f->mem = fresh;
  f->mem_log = 0;
  uint64_t flushed = atomic_load(&db->last_seq);
  pthread_mutex_unlock(&db->mu);

  rc = rotate_wal(db);
  if (rc) return fail(db, rc);
  kv_iter *it = kv_memstore_iter_new(f->imm);
  if (!it) return fail(db, kv_error(KV_ERR_NOMEM, "flush: out of memory"));
  kv_sfh *h;
  rc = kv_db_write_sf(db, f, it, &h);
  it->ops->destroy(it);
  if (rc) return fail(db, rc);

  kv_edit e[2];
  memset(e, 0, sizeof e);
  e[0].kind = KV_EDIT_ADD_FILE;
  e[0].family_id = f->id;
  e[0].table_id = f->table_id;
  if (h) e[0].file = h->meta;
  e[0].flushed_seq = flushed;
  pthread_mutex_lock(&db->mu);
  kv_memstore *imm = f->imm;
  f->imm = NULL;
  f->imm_log = 0;
  e[1] = counters_edit(db);
  f->imm = imm; /* still readable until the MANIFEST names the file */
  pthread_mutex_unlock(&db->mu);
  if (h) {
    rc = kv_manifest_apply(db->man, &db->ver, e, 2);
  } else {
    e[0].kind = KV_EDIT_SET_FLUSHED;
    rc = kv_manifest_apply(db->man, &db->ver, e, 2);
  }
  if (rc) {
    /* The record may still have reached the MANIFEST (a failed sync): keep the file; if the
    ** MANIFEST does not name it at the next open, kv_open deletes it. */
    kv_sfh_unref(h);
    return fail(db, rc);
  }
  pthread_mutex_lock(&db->mu);
  if (h) rc = kv_fam_add_file(f, h);
  f->flushed_seq = flushed;
  f->imm = NULL;
  db->stat_flushes++;
  pthread_mutex_unlock(&db->mu);
  kv_memstore_unref(imm);
  if (rc) return fail(db, rc);
  delete_old_wal(db);
  if (f->n_files >= (uint32_t)db->opts.compaction_trigger)
    return kv_db_compact_family(db, f, false);
  return KV_OK;
}

int kv_db_maybe_flush(kv_db *db) {
  if (db->opts.read_only) return KV_OK;
  int rc = KV_OK;
  for (uint32_t i = 0; i < db->n_fam_slots && rc == KV_OK; i++) {
    kv_fam *f = kv_db_family(db, i);
    if (f && kv_memstore_bytes(f->mem) >= db->opts.memstore_flush_size)
      rc = kv_db_flush_family(db, f);
  }
  for (int guard = 0; rc == KV_OK && guard < 1000; guard++) {
    size_t total = 0, best = 0;
    kv_fam *largest = NULL;
    for (uint32_t i = 0; i < db->n_fam_slots; i++) {
      kv_fam *f = kv_db_family(db, i);
      if (!f) continue;
      size_t b = kv_memstore_bytes(f->mem);
      total += b;
      if (b > best && kv_memstore_cells(f->mem)) {
        best = b;
        largest = f;
      }
    }
    if (total <= db->opts.memstore_limit || !largest) break;
    rc = kv_db_flush_family(db, largest);
  }
  return rc;
}

/* Collect the live families of `table` (NULL = all) into *out (malloc'ed). */
int kv_db_table_families(kv_db *db, const char *table, kv_fam ***out, uint32_t *n) {
  *out = NULL;
  *n = 0;
  const kv_table_meta *tm = NULL;
  if (table) {
    for (uint32_t t = 0; t < db->ver.n_tables; t++)
      if (strcmp(db->ver.tables[t].name, table) == 0) tm = &db->ver.tables[t];
    if (!tm) return kv_error(KV_ERR_NOTFOUND, "no table '%s'", table);
  }
  kv_fam **arr = calloc(db->n_fam_slots ? db->n_fam_slots : 1, sizeof *arr);
  if (!arr) return kv_error(KV_ERR_NOMEM, "out of memory");
  for (uint32_t i = 0; i < db->n_fam_slots; i++) {
    kv_fam *f = kv_db_family(db, i);
    if (f && (!tm || f->table_id == tm->id)) arr[(*n)++] = f;
  }
  *out = arr;
  return KV_OK;
}

int kv_flush(kv_db *db, const char *table) {
  if (!db) return kv_error(KV_MISUSE, "kv_flush: NULL store");
  kv_writer w;
  memset(&w, 0, sizeof w);
  pthread_mutex_lock(&db->mu);
  int rc = kv_db_writable(db);
  if (rc) {
    pthread_mutex_unlock(&db->mu);
    return rc;
  }
  kv_db_role_acquire(db, &w);
  kv_fam **fams;
  uint32_t n;
  rc = kv_db_table_families(db, table, &fams, &n);
  pthread_mutex_unlock(&db->mu);
  for (uint32_t i = 0; i < n && rc == KV_OK; i++) rc = kv_db_flush_family(db, fams[i]);
  free(fams);
  pthread_mutex_lock(&db->mu);
  kv_db_role_release(db, &w);
  pthread_mutex_unlock(&db->mu);
  return rc;
}
