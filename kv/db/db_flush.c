/*
** kv/db/db_flush.c: memstore freezes and flushes (kv_flush, and the automatic ones after
** commits), back-pressure, and the MANIFEST counters (with the oldest WAL segment needed).
**
** A flush of family f has two halves:
**   freeze (the writer role, kv_db_freeze): start a new WAL segment, so the old ones can be
**     deleted once no family needs them; then, under mu, f->mem joins the end of f->imms
**     with the last sequence number (every op <= it of f is now in imms or the files) and a
**     new empty memstore takes its place. Scans opened from then on read the frozen ones
**     too. The background thread is woken. Commits go on at once.
**   flush (the background thread, kv_db_flush_imm), oldest frozen memstore first:
**     1. write it to data/<table>/<family>/<number>.sf (kv_db_write_sfs: one file per
**        region of the table that gets cells, each written whole and synced), sync the folder;
**     2. one MANIFEST record: an ADD_FILE per file with f's new flushed_seq, the counters, and the log
**        position the freeze left (LOG_POSITION: the end of the last WAL record then, which
**        the rotation wrote out and synced), so an open whose log ends before it refuses the
**        store instead of showing part of a transaction (kv_db_check_log_position);
**     3. publish the file in f's list and drop the frozen memstore (under mu, in one step,
**        so a scan sees its cells exactly once); delete WAL segments older than the oldest
**        one any family still needs.
** A crash before 2 leaves an unnamed .sf file that kv_open deletes, and the WAL still holds
** every op; after 2, WAL replay skips f's ops <= flushed_seq. A failure sets the sticky
** error (writes refused until reopen); the frozen memstore stays readable.
** Back-pressure (kv_db_maybe_flush): while the active and frozen memstores together hold
** more than memstore_limit bytes, the committing writer freezes the largest and waits for
** the background thread, holding the writer role, so every writer waits.
** After both, kv_db_maybe_flush applies the WAL's total size bound (kv/db/db_wal.c, which also
** rotates and deletes WAL segments).
** Not here: the background thread and its job choice (kv/db/db_bg.c), compaction
** (kv/db/compact.c).
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kv/db/db_impl.h"
#include "kv/util/cell.h"
#include "kv/util/mem.h"
#include "kv/util/status.h"

#define PATH_CAP 4096 /* bytes for any path built here */

uint64_t kv_db_new_file_number(kv_db *db) {
  return atomic_fetch_add(&db->next_file, 1);
}

uint64_t kv_db_oldest_needed_wal(kv_db *db, const kv_fam *skip) {
  uint64_t oldest = db->wal ? kv_wal_number(db->wal) : db->ver.wal_number;
  for (uint32_t i = 0; i < db->n_fam_slots; i++) {
    kv_fam *f = kv_db_family(db, i);
    if (!f) continue;
    uint64_t ml = f->mem_log;
    if (ml && kv_memstore_cells(f->mem) && ml < oldest) oldest = ml;
    for (uint32_t k = f == skip ? 1 : 0; k < f->n_imm; k++)
      if (f->imm_logs[k] && f->imm_logs[k] < oldest) oldest = f->imm_logs[k];
  }
  return oldest;
}

kv_edit kv_db_counters_edit(kv_db *db, const kv_fam *skip) {
  kv_edit e;
  memset(&e, 0, sizeof e);
  e.kind = KV_EDIT_SET_COUNTERS;
  e.next_file_number = atomic_load(&db->next_file);
  e.next_table_id = db->ver.next_table_id;
  e.next_family_id = db->ver.next_family_id;
  e.last_seq = atomic_load(&db->last_seq);
  e.wal_number = kv_db_oldest_needed_wal(db, skip);
  return e;
}

int kv_db_write_counters(kv_db *db) {
  kv_edit e = kv_db_counters_edit(db, NULL);
  return kv_manifest_apply(db->man, &db->ver, &e, 1);
}

/* kv_db_write_sfs's fill from an iterator (positioned on its first cell). */
static bool iter_next_row(void *ctx, const uint8_t **row, uint32_t *len) {
  kv_iter *it = ctx;
  if (!it->ops->valid(it)) return false;
  const kv_cell *c = it->ops->cell(it);
  *row = c->row;
  *len = c->row_len;
  return true;
}
static int iter_fill(void *ctx, kv_sf_writer *w, const uint8_t *end, uint32_t end_len) {
  kv_iter *it = ctx;
  int rc = KV_OK;
  for (; it->ops->valid(it) && rc == KV_OK; it->ops->next(it)) {
    const kv_cell *c = it->ops->cell(it);
    if (end && kv_bytes_cmp(c->row, c->row_len, end, end_len) >= 0) break;
    rc = kv_sf_writer_add(w, c);
  }
  return rc ? rc : it->ops->status(it);
}
static int iter_status(void *ctx) {
  kv_iter *it = ctx;
  return it->ops->status(it);
}
static const kv_db_fill iter_fill_ops = {iter_next_row, iter_fill, iter_status};

int kv_db_write_iter(kv_db *db, kv_fam *f, kv_iter *it, kv_sfh ***outs, uint32_t *n_outs) {
  *outs = NULL;
  *n_outs = 0;
  it->ops->seek_first(it);
  if (!it->ops->valid(it)) return it->ops->status(it);
  return kv_db_write_sfs(db, f, &iter_fill_ops, it, outs, n_outs);
}

int kv_db_fail(kv_db *db, int rc) {
  char msg[256];
  snprintf(msg, sizeof msg, "%s", kv_errmsg());
  pthread_mutex_lock(&db->mu);
  kv_db_set_bg_error(db, rc, msg);
  pthread_mutex_unlock(&db->mu);
  return kv_error(rc, "%s", msg);
}

int kv_db_flush_imm(kv_db *db, kv_fam *f) {
  pthread_mutex_lock(&db->mu);
  kv_memstore *imm = f->imms[0];
  uint64_t flushed = f->imm_seqs[0];
  kv_logpos pos = f->imm_pos[0];
  pthread_mutex_unlock(&db->mu);
  kv_iter *it = kv_memstore_iter_new(imm);
  if (!it) return kv_db_fail(db, kv_error(KV_ERR_NOMEM, "flush: out of memory"));
  kv_sfh **outs;
  uint32_t n_out;
  int rc = kv_db_write_iter(db, f, it, &outs, &n_out);
  it->ops->destroy(it);
  if (rc) return kv_db_fail(db, rc);

  /* one ADD_FILE per region written (each with the flushed_seq), or SET_FLUSHED */
  kv_edit *e = calloc(n_out + 3, sizeof *e);
  if (!e) {
    kv_db_sfs_free(outs, n_out);
    return kv_db_fail(db, kv_error(KV_ERR_NOMEM, "flush: out of memory"));
  }
  int n_e = 0;
  for (uint32_t i = 0; i < (n_out ? n_out : 1); i++, n_e++) {
    e[n_e].kind = n_out ? KV_EDIT_ADD_FILE : KV_EDIT_SET_FLUSHED;
    e[n_e].family_id = f->id;
    e[n_e].table_id = f->table_id;
    if (n_out) e[n_e].file = outs[i]->meta;
    e[n_e].flushed_seq = flushed;
  }
  pthread_mutex_lock(&db->mu);
  e[n_e++] = kv_db_counters_edit(db, f); /* imm stays readable until the MANIFEST names it */
  pthread_mutex_unlock(&db->mu);
  if (pos.seg) {
    e[n_e].kind = KV_EDIT_LOG_POSITION;
    e[n_e].log_segment = pos.seg;
    e[n_e].log_offset = pos.off;
    e[n_e].log_seq = pos.seq;
    n_e++;
  }
  rc = kv_manifest_apply(db->man, &db->ver, e, n_e);
  free(e);
  if (rc) {
    /* The record may still have reached the MANIFEST (a failed sync): keep the files; if
    ** the MANIFEST does not name them at the next open, kv_open deletes them. */
    kv_db_sfs_free(outs, n_out);
    return kv_db_fail(db, rc);
  }
  pthread_mutex_lock(&db->mu);
  uint32_t added = 0;
  for (; added < n_out && rc == KV_OK; added++) rc = kv_fam_add_file(f, outs[added]);
  if (rc) added--; /* the one that failed is still ours */
  f->flushed_seq = flushed;
  f->n_imm--;
  memmove(f->imms, f->imms + 1, f->n_imm * sizeof *f->imms);
  memmove(f->imm_logs, f->imm_logs + 1, f->n_imm * sizeof *f->imm_logs);
  memmove(f->imm_seqs, f->imm_seqs + 1, f->n_imm * sizeof *f->imm_seqs);
  memmove(f->imm_pos, f->imm_pos + 1, f->n_imm * sizeof *f->imm_pos);
  f->flushed++;
  db->stat_flushes++;
  if (rc == KV_OK) kv_db_delete_old_wal(db);
  pthread_mutex_unlock(&db->mu);
  for (uint32_t i = added; i < n_out; i++) kv_sfh_unref(outs[i]); /* not listed */
  free(outs);
  uint64_t imm_bytes = kv_memstore_bytes(imm);
  kv_memstore_unref(imm);
  /* the memstore's arena and the writer's buffers, when they were megabytes */
  if (imm_bytes >= KV_MEM_RELEASE_MIN) kv_mem_release();
  if (rc) return kv_db_fail(db, rc);
  return KV_OK;
}

/* Make room for one more frozen memstore in f. REQUIRES: mu. */
static int grow_imms(kv_fam *f) {
  if (f->n_imm < f->cap_imm) return KV_OK;
  uint32_t nc = f->cap_imm ? f->cap_imm * 2 : 4;
  kv_memstore **a = realloc(f->imms, nc * sizeof *a);
  if (a) f->imms = a;
  uint64_t *b = a ? realloc(f->imm_logs, nc * sizeof *b) : NULL;
  if (b) f->imm_logs = b;
  uint64_t *c = b ? realloc(f->imm_seqs, nc * sizeof *c) : NULL;
  if (c) f->imm_seqs = c;
  kv_logpos *d = c ? realloc(f->imm_pos, nc * sizeof *d) : NULL;
  if (d) f->imm_pos = d;
  if (!d) return kv_error(KV_ERR_NOMEM, "flush: out of memory");
  f->cap_imm = nc;
  return KV_OK;
}

int kv_db_freeze(kv_db *db, kv_fam **fams, uint32_t n) {
  bool any = false;
  for (uint32_t i = 0; i < n; i++)
    if (kv_memstore_cells(fams[i]->mem)) any = true;
  if (!any) return KV_OK;
  int rc = kv_db_rotate_wal(db);
  if (rc) return kv_db_fail(db, rc);
  for (uint32_t i = 0; i < n && rc == KV_OK; i++) {
    kv_fam *f = fams[i];
    if (kv_memstore_cells(f->mem) == 0) continue;
    kv_memstore *fresh = kv_memstore_new();
    if (!fresh) {
      rc = kv_error(KV_ERR_NOMEM, "flush: out of memory");
      break;
    }
    pthread_mutex_lock(&db->mu);
    rc = grow_imms(f);
    if (rc == KV_OK) {
      f->imms[f->n_imm] = f->mem;
      f->imm_logs[f->n_imm] = f->mem_log;
      f->imm_seqs[f->n_imm] = atomic_load(&db->last_seq);
      f->imm_pos[f->n_imm] = db->wal_end; /* on disk: the rotation wrote it out */
      f->n_imm++;
      f->frozen++;
      f->mem = fresh;
      f->mem_log = 0;
      pthread_cond_signal(&db->bg_cv);
    }
    pthread_mutex_unlock(&db->mu);
    if (rc) kv_memstore_unref(fresh);
  }
  return rc ? kv_db_fail(db, rc) : KV_OK;
}

/* Bytes in the active and frozen memstores of every family. REQUIRES: mu. */
static size_t memstore_total(kv_db *db, kv_fam **largest) {
  size_t total = 0, best = 0;
  *largest = NULL;
  for (uint32_t i = 0; i < db->n_fam_slots; i++) {
    kv_fam *f = kv_db_family(db, i);
    if (!f) continue;
    size_t b = kv_memstore_bytes(f->mem);
    total += b;
    for (uint32_t k = 0; k < f->n_imm; k++) total += kv_memstore_bytes(f->imms[k]);
    if (b > best && kv_memstore_cells(f->mem)) {
      best = b;
      *largest = f;
    }
  }
  return total;
}

int kv_db_maybe_flush(kv_db *db) {
  if (db->opts.read_only) return KV_OK;
  int rc = KV_OK;
  kv_fam *due[64];
  uint32_t n = 0;
  for (uint32_t i = 0; i < db->n_fam_slots && rc == KV_OK; i++) {
    kv_fam *f = kv_db_family(db, i);
    if (f && kv_memstore_bytes(f->mem) >= db->opts.memstore_flush_size) due[n++] = f;
    if (n == 64) {
      rc = kv_db_freeze(db, due, n);
      n = 0;
    }
  }
  if (rc == KV_OK && n) rc = kv_db_freeze(db, due, n);
  pthread_mutex_lock(&db->mu);
  for (;;) {
    kv_fam *largest;
    size_t total = memstore_total(db, &largest);
    if (rc || db->bg_error || total <= db->opts.memstore_limit) break;
    if (largest && kv_memstore_bytes(largest->mem) * 2 >= total) {
      pthread_mutex_unlock(&db->mu);
      rc = kv_db_freeze(db, &largest, 1);
      pthread_mutex_lock(&db->mu);
      continue;
    }
    bool pending = false;
    for (uint32_t i = 0; i < db->n_fam_slots; i++) {
      kv_fam *f = kv_db_family(db, i);
      if (f && f->n_imm) pending = true;
    }
    if (!pending) {
      if (!largest) break;
      pthread_mutex_unlock(&db->mu);
      rc = kv_db_freeze(db, &largest, 1);
      pthread_mutex_lock(&db->mu);
      continue;
    }
    pthread_cond_wait(&db->bg_done_cv, &db->mu); /* back-pressure: wait for a flush */
  }
  pthread_mutex_unlock(&db->mu);
  if (rc == KV_OK) rc = kv_db_wal_bound(db);
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
