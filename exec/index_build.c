/*
** exec/index_build.c: the backfill of CREATE INDEX and the rebuild of unfinished backfills
** at session open (contract in exec/index.h).
**
** The backfill pins a snapshot of the store, scans the table's marker family and the
** families of the columns the index needs, and adds each row's index row to a batch that is
** committed every EXEC_INDEX_BACKFILL_ROWS rows (each batch atomic). The backfill runs
** inside the CREATE INDEX statement, so no write of the session interleaves with it; writes
** maintain BUILDING indexes anyway, so an index row put again by the backfill is the same
** row (idempotent). When the scan ends the index is set ACTIVE in the catalog.
**
** The backfill scan takes the stepping thread's interrupt flag (exec_interrupt_flag): an
** interrupt stops it with EXEC_INTERRUPT, and CREATE INDEX then drops the index it made
** (exec/ddl.c), so the catalog and the store are as before; the batches committed so far
** go with the index's table. (At session open, exec_index_resume has no flag: not stopped.)
** A crash leaves the index BUILDING. At the next session open, exec_index_resume deletes
** every row of each BUILDING index and backfills it again (simple and always right; the
** index was not used by queries meanwhile). An index whose rows cannot be built (a key over
** the size limit, which would have failed its CREATE INDEX) is dropped instead.
**
** Not here: the codec (exec/index.c), maintenance of ordinary writes (exec/index_maint.c).
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exec/backend_caps.h"
#include "exec/index_int.h"
#include "exec/rowcodec.h"

/* Commit b (if it holds anything) and clear it. */
static int commit(kv_backend *be, kv_batch *b, exec_error *err) {
  if (!kv_batch_count(b)) return EXEC_OK;
  int k = kv_be_write(be, b, NULL);
  if (k != KV_OK) return exec_index_kv_fail(err, k, "index backfill commit");
  kv_batch_clear(b);
  return EXEC_OK;
}

/* Delete every row of the index's kv table (both families), in atomic batches. */
static int clear_index(kv_backend *be, const cat_index *ix, exec_error *err) {
  uint32_t fams[2] = {ix->kv_key_family, ix->kv_data_family};
  kv_scan_options so;
  memset(&so, 0, sizeof so);
  so.family_ids = fams;
  so.n_families = 2;
  kv_backend_scan *s = NULL;
  kv_batch *b = kv_batch_new();
  if (!b) return exec_error_set(err, EXEC_NOMEM, "out of memory");
  int k = kv_be_scan_open(be, &so, NULL, &s);
  int r = EXEC_OK;
  if (k != KV_OK) r = exec_index_kv_fail(err, k, "clearing an index");
  kv_row row;
  while (!r && (k = kv_be_scan_next(be, s, &row)) == KV_OK) {
    for (int f = 0; f < 2 && k == KV_OK; f++)
      k = kv_batch_delete(b, fams[f], KV_DELETE_FAMILY, row.key, row.key_len, NULL, 0, KV_TS_NOW);
    if (k != KV_OK) r = exec_index_kv_fail(err, k, "clearing an index");
    else if (kv_batch_count(b) >= 2 * EXEC_INDEX_BACKFILL_ROWS) r = commit(be, b, err);
  }
  if (!r && k != KV_ERR_NOTFOUND) r = exec_index_kv_fail(err, k, "clearing an index");
  kv_be_scan_close(be, s);
  if (!r) r = commit(be, b, err);
  kv_batch_free(b);
  return r;
}

/* Report progress. */
static void report(exec_progress_fn fn, void *arg, const char *what, uint64_t done,
                   uint64_t total) {
  if (fn) fn(arg, what, done, total < done ? done : total);
}

/* Scan table t at a pinned snapshot and write the index rows of ix. */
static int backfill_rows(const cat_catalog *cat, kv_backend *be, const cat_table *t,
                         const cat_index *ix, exec_progress_fn progress, void *arg,
                         exec_error *err) {
  exec_index_codec ic;
  exec_rowcodec rc;
  memset(&rc, 0, sizeof rc);
  int r = exec_index_codec_init(&ic, cat, t, ix, err);
  if (!r) r = exec_rowcodec_init(&rc, t, err);
  cat_value *slots = calloc((size_t)t->n_columns + 1, sizeof *slots);
  kv_batch *b = kv_batch_new();
  if (!r && (!slots || !b)) r = exec_error_set(err, EXEC_NOMEM, "out of memory");
  uint32_t fams[KV_SCAN_MAX_FAMILIES];
  uint32_t nf = 0;
  fams[nf++] = t->families[0].kv_id;
  for (int f = 1; !r && f < t->n_families && nf < KV_SCAN_MAX_FAMILIES; f++) {
    bool used = false;
    for (int c = 0; c < t->n_columns && !used; c++)
      used = ic.need[c] && t->columns[c].pk_pos < 0 && t->columns[c].family == f;
    if (used) fams[nf++] = t->families[f].kv_id;
  }
  char what[300];
  snprintf(what, sizeof what, "building index %s on %s", ix->name, t->name);
  uint64_t total = 0, done = 0, seq = 0;
  bool pinned = false;
  kv_backend_scan *s = NULL;
  if (!r) {
    uint64_t bytes;
    if (kv_be_estimate(be, fams[0], NULL, NULL, &total, &bytes) != KV_OK) total = 0;
    int k = exec_backend_snapshot(be, &seq);
    if (k != KV_OK) r = exec_index_kv_fail(err, k, "index backfill snapshot");
    else pinned = seq != 0;
  }
  if (!r) {
    kv_scan_options so;
    memset(&so, 0, sizeof so);
    so.family_ids = fams;
    so.n_families = nf;
    so.snapshot = seq;
    if (be->caps.extensions & KV_BE_EXT_INTERRUPT) /* else: the check after each row */
      so.interrupt = exec_interrupt_flag(); /* CREATE INDEX's step: rowan_interrupt stops it */
    int k = kv_be_scan_open(be, &so, NULL, &s);
    if (k != KV_OK) r = exec_index_kv_fail(err, k, "index backfill scan");
  }
  report(progress, arg, what, 0, total);
  kv_row row;
  int k = KV_OK;
  while (!r && (k = kv_be_scan_next(be, s, &row)) == KV_OK) {
    bool marker = false;
    for (uint32_t i = 0; i < row.n_cells && !marker; i++)
      marker = row.cells[i].family_id == fams[0];
    if (!marker) continue;
    r = exec_row_decode(&rc, &row, ic.need, slots, NULL, err);
    if (!r) r = exec_index_put(&ic, slots, KV_TS_NOW, b, err);
    if (r) break;
    if (++done % EXEC_INDEX_BACKFILL_ROWS == 0) {
      r = commit(be, b, err);
      report(progress, arg, what, done, total);
      if (!r) r = exec_check_interrupt(err); /* (the scan checks every 64 rows too) */
    }
  }
  if (!r && k == KV_ERR_INTERRUPTED) r = exec_error_set(err, EXEC_INTERRUPT, "interrupted");
  if (!r && k != KV_ERR_NOTFOUND) r = exec_index_kv_fail(err, k, "index backfill scan");
  kv_be_scan_close(be, s);
  if (!r) r = commit(be, b, err);
  if (!r) report(progress, arg, what, done, done);
  if (pinned) kv_be_snapshot_release(be, seq);
  kv_batch_free(b);
  free(slots);
  exec_rowcodec_free(&rc);
  exec_index_codec_free(&ic);
  return r;
}

/* Map a catalog error. */
static int catalog_fail(exec_error *err, const cat_error *ce) {
  int code = ce->code == CAT_ERR_NOMEM ? EXEC_NOMEM
             : ce->code == CAT_ERR_KV  ? (ce->kv_code == KV_ERR_IO        ? EXEC_IOERR
                                          : ce->kv_code == KV_ERR_NOSPC   ? EXEC_FULL
                                          : ce->kv_code == KV_ERR_READONLY ? EXEC_READONLY
                                                                           : EXEC_ERROR)
                                       : EXEC_ERROR;
  return exec_error_set(err, code, "%s", ce->msg);
}

int exec_index_backfill(cat_catalog *cat, kv_backend *be, const char *table, const char *index,
                        exec_progress_fn progress, void *arg, exec_error *err) {
  const cat_table *t = cat_find_table(cat, table);
  const cat_index *ix = t ? cat_find_index(t, index) : NULL;
  if (!ix) return exec_error_set(err, EXEC_NOTFOUND, "index %s on %s not found", index, table);
  int r = backfill_rows(cat, be, t, ix, progress, arg, err);
  if (r) return r;
  cat_error ce = {0};
  if (cat_set_index_state(cat, table, index, CAT_INDEX_ACTIVE, &ce) != CAT_OK)
    return catalog_fail(err, &ce);
  return EXEC_OK;
}

int exec_index_resume(cat_catalog *cat, kv_backend *be, exec_progress_fn progress, void *arg,
                      exec_error *err) {
  for (int i = 0; i < cat_table_count(cat); i++) {
    const cat_table *t = cat_table_at(cat, i);
    for (int j = 0; j < t->n_indexes; j++) {
      if (t->indexes[j].state != CAT_INDEX_BUILDING) continue;
      char tname[CAT_ERRMSG_MAX], iname[CAT_ERRMSG_MAX];
      snprintf(tname, sizeof tname, "%s", t->name);
      snprintf(iname, sizeof iname, "%s", t->indexes[j].name);
      int r = clear_index(be, &t->indexes[j], err);
      if (!r) r = exec_index_backfill(cat, be, tname, iname, progress, arg, err);
      if (r == EXEC_CONSTRAINT || r == EXEC_TOOBIG || r == EXEC_ERROR) {
        /* The rows do not fit this index (CREATE INDEX would have failed): drop it. */
        cat_error ce = {0};
        if (cat_drop_index(cat, tname, iname, &ce) != CAT_OK) return catalog_fail(err, &ce);
        r = EXEC_OK;
        j--; /* the next index moved into this slot */
      }
      if (r) return r;
      t = cat_find_table(cat, tname); /* the state change re-made the catalog entry */
      if (!t) break;
    }
  }
  return EXEC_OK;
}
