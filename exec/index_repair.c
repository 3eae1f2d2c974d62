/*
** exec/index_repair.c: read repair of unverified index rows (contract in exec/index.h), what
** Phoenix's GlobalIndexChecker does on the region server, done here on the client. An index
** row whose marker says UNVERIFIED was written before its data row's commit (or marked before
** its deletion, exec/index_phase.c) and not confirmed since: its data row decides. The data
** row key is the index key's tail; the data row is read (latest, through the backend, never
** through a transaction's overlay: the repair writes to the store) and its index key built
** again. Equal: the index row is put again from the data row's values (empty marker =
** VERIFIED, INCLUDE cells rewritten) and read back; else (no data row, or another key): the
** stale index row is deleted.
**
** Writers of other sessions may change the row between the repair's reads and its write, so
** the repair writes only while the marker still says UNVERIFIED (the backend's
** check-and-write; HBase's checkAndMutate), and a writer's third phase rewrites its whole
** index row, not only the marker (exec/index_phase.c): a repair that deletes the unverified
** row of a write in flight (its data row not yet committed) is undone by that write's third
** phase, and a repair that comes after the third phase finds the marker changed and writes
** nothing (the row is then read back and returned if verified). Phoenix closes the same race
** by deleting only unverified rows older than a threshold.
**
** Not here: noticing the status (exec/scan.c, exec/index_check.c), writing it (index_phase.c).
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalog/keycodec.h"
#include "catalog/salt.h"
#include "exec/index_int.h"
#include "exec/rowcodec.h"

/* Repairs of one row tried while other writers keep changing it between our read and write. */
#define REPAIR_ATTEMPTS 4

struct exec_index_repair {
  kv_backend *be;               /* the backend */
  exec_index_codec *ic;         /* the index codec (borrowed) */
  const kv_batch *overlay;      /* a transaction's batch for the read back, or NULL */
  exec_rowcodec rc;             /* the data table's row codec */
  bool rc_ok;                   /* rc initialized */
  cat_value *slots;             /* data row slots */
  uint32_t dfams[KV_SCAN_MAX_FAMILIES]; /* data families read (key family first) */
  uint32_t n_dfams;             /* count */
  uint8_t *key;                 /* a copy of the index row key (CAT_KEY_MAX) */
  kv_backend_scan *get;         /* the data row's read */
  kv_backend_scan *back;        /* the repaired row's read back (backs *out) */
  kv_batch *b;                  /* the repair's write */
  uint64_t verified, deleted;   /* counts */
};

void exec_index_repair_free(exec_index_repair *rp) {
  if (!rp) return;
  kv_be_scan_close(rp->be, rp->get);
  kv_be_scan_close(rp->be, rp->back);
  if (rp->rc_ok) exec_rowcodec_free(&rp->rc);
  kv_batch_free(rp->b);
  free(rp->slots);
  free(rp->key);
  free(rp);
}

int exec_index_repair_open(exec_index_codec *ic, kv_backend *be, const kv_batch *overlay,
                           exec_index_repair **out, exec_error *err) {
  *out = NULL;
  exec_index_repair *rp = calloc(1, sizeof *rp);
  if (!rp) return exec_error_set(err, EXEC_NOMEM, "out of memory");
  rp->be = be;
  rp->ic = ic;
  rp->overlay = overlay;
  const cat_table *t = ic->table;
  rp->slots = calloc((size_t)t->n_columns + 1, sizeof *rp->slots);
  rp->key = malloc(CAT_KEY_MAX);
  rp->b = kv_batch_new();
  if (!rp->slots || !rp->key || !rp->b) {
    exec_index_repair_free(rp);
    return exec_error_set(err, EXEC_NOMEM, "out of memory");
  }
  int r = exec_rowcodec_init(&rp->rc, t, err);
  if (r) {
    exec_index_repair_free(rp);
    return r;
  }
  rp->rc_ok = true;
  exec_index_data_families(t, ic->need, rp->dfams, KV_SCAN_MAX_FAMILIES, &rp->n_dfams);
  *out = rp;
  return EXEC_OK;
}

void exec_index_repair_counts(const exec_index_repair *rp, uint64_t *verified,
                              uint64_t *deleted) {
  if (verified) *verified = rp ? rp->verified : 0;
  if (deleted) *deleted = rp ? rp->deleted : 0;
}

/* Does the data row of index key rp->key[0..len) exist with this index key? */
static int matches(exec_index_repair *rp, size_t len, bool *match, exec_error *err) {
  exec_index_codec *ic = rp->ic;
  *match = false;
  /* a salted index's key starts with its salt byte (catalog/salt.h) */
  const uint8_t *p = rp->key + (ic->index->salt_buckets ? 1 : 0), *limit = rp->key + len;
  for (int k = 0; k < ic->n_keys && p; k++) p = cat_key_skip_col(&ic->key_cols[k], p, limit);
  if (!p || p >= limit)
    return exec_error_set(err, EXEC_CORRUPT, "index %s: a row key does not decode",
                          ic->index->name);
  /* a salted table's data key: its salt byte written over the byte before the data key's
     tail (rp->key is the repair's own copy; the byte is put back after the read) */
  uint8_t *q = rp->key + (p - rp->key), keep = q[-1];
  const uint8_t *dk = cat_salt_before(ic->table, q, (size_t)(limit - p));
  kv_scan_options o;
  memset(&o, 0, sizeof o);
  o.family_ids = rp->dfams;
  o.n_families = rp->n_dfams;
  kv_be_scan_close(rp->be, rp->get);
  rp->get = NULL;
  kv_row row;
  int k = kv_be_get(rp->be, &o, dk, (size_t)(limit - dk), &rp->get, &row);
  q[-1] = keep;
  if (k == KV_ERR_NOTFOUND) return EXEC_OK;
  if (k != KV_OK) return exec_index_kv_fail(err, k, "reading the data row of an index row");
  bool marker = false;
  for (uint32_t i = 0; i < row.n_cells && !marker; i++)
    marker = row.cells[i].family_id == rp->dfams[0];
  if (!marker) return EXEC_OK; /* cells without a marker: not a row */
  int r = exec_row_decode(&rp->rc, &row, ic->need, rp->slots, NULL, err);
  if (r) return r;
  exec_error e2; /* a data row without an index key (a bad value) has no index row */
  if (exec_index_row_key(ic, rp->slots, &e2) != EXEC_OK) return EXEC_OK;
  *match = ic->key_len == len && memcmp(ic->key, rp->key, len) == 0;
  return EXEC_OK;
}

/* Read the index row rp->key[0..len) back into *out (both families, through the overlay):
** EXEC_ROW, EXEC_DONE when it is gone, or an error. */
static int read_back(exec_index_repair *rp, size_t len, kv_row *out, exec_error *err) {
  exec_index_codec *ic = rp->ic;
  kv_scan_options o;
  memset(&o, 0, sizeof o);
  uint32_t fams[2] = {ic->key_family_id, ic->data_family_id};
  o.family_ids = fams;
  o.n_families = 2;
  o.overlay = rp->overlay;
  kv_be_scan_close(rp->be, rp->back);
  rp->back = NULL;
  int k = kv_be_get(rp->be, &o, rp->key, len, &rp->back, out);
  if (k == KV_ERR_NOTFOUND) return EXEC_DONE;
  if (k != KV_OK) return exec_index_kv_fail(err, k, "reading a repaired index row");
  bool marker = false;
  for (uint32_t i = 0; i < out->n_cells && !marker; i++)
    marker = out->cells[i].family_id == ic->key_family_id;
  return marker ? EXEC_ROW : EXEC_DONE;
}

/* Write rp->b only while the index row's marker is still UNVERIFIED (check-and-write, where
** the backend has it): *applied false when another writer changed it first. */
static int write_checked(exec_index_repair *rp, size_t len, bool *applied, exec_error *err) {
  static const uint8_t unverified[1] = {EXEC_INDEX_UNVERIFIED};
  *applied = true;
  int k;
  if (rp->be->caps.check_and_write) {
    kv_backend_check chk = {rp->ic->key_family_id, rp->key, (uint32_t)len,
                            (const uint8_t *)CAT_MARKER_QUALIFIER, 1, unverified, 1};
    k = kv_be_check_and_write(rp->be, &chk, rp->b, applied, NULL);
  } else {
    k = kv_be_write(rp->be, rp->b, NULL);
  }
  if (k == KV_OK) return EXEC_OK;
  char what[160];
  snprintf(what, sizeof what, "index %s: repairing an unverified index row", rp->ic->index->name);
  return exec_index_kv_fail(err, k, what);
}

int exec_index_repair_row(exec_index_repair *rp, const uint8_t *key, size_t len, bool dry_run,
                          kv_row *out, exec_error *err) {
  exec_index_codec *ic = rp->ic;
  if (len > CAT_KEY_MAX) return exec_error_set(err, EXEC_TOOBIG, "index row key too long");
  memcpy(rp->key, key, len);
  for (int attempt = 0; attempt < REPAIR_ATTEMPTS; attempt++) {
    bool match;
    int r = matches(rp, len, &match, err);
    if (r || dry_run) return r ? r : match ? EXEC_ROW : EXEC_DONE;
    kv_batch_clear(rp->b);
    r = match ? exec_index_put(ic, rp->slots, KV_TS_NOW, rp->b, err)
              : exec_index_delete_key(ic, rp->key, len, KV_TS_NOW, rp->b, err);
    bool applied;
    if (!r) r = write_checked(rp, len, &applied, err);
    if (r) return r;
    if (applied && !match) {
      rp->deleted++;
      return EXEC_DONE;
    }
    if (applied) rp->verified++;
    r = read_back(rp, len, out, err);
    /* not applied: a writer got there first; its row, if verified now, is the answer */
    if (r != EXEC_ROW || !exec_index_row_unverified(ic, out)) return r;
  }
  return EXEC_DONE; /* unverified again at every attempt: left to a later read */
}

int exec_index_repair_all(const cat_catalog *cat, kv_backend *be, const char *table,
                          const char *index, uint64_t *verified, uint64_t *deleted,
                          exec_error *err) {
  const cat_table *t;
  const cat_index *ix;
  int fr = exec_index_find(cat, table, index, &t, &ix, err);
  if (fr) return fr;
  exec_index_codec ic;
  memset(&ic, 0, sizeof ic);
  exec_index_repair *rp = NULL;
  int r = exec_index_codec_init(&ic, cat, t, ix, err);
  if (!r) r = exec_index_repair_open(&ic, be, NULL, &rp, err);
  kv_backend_scan *s = NULL;
  int k = KV_OK;
  if (!r) {
    kv_scan_options so;
    memset(&so, 0, sizeof so);
    so.family_ids = &ix->kv_key_family;
    so.n_families = 1;
    k = kv_be_scan_open(be, &so, NULL, &s);
    if (k != KV_OK) r = exec_index_kv_fail(err, k, "scanning the index to repair it");
  }
  kv_row row, back;
  while (!r && (k = kv_be_scan_next(be, s, &row)) == KV_OK)
    if (exec_index_row_unverified(&ic, &row)) {
      r = exec_index_repair_row(rp, row.key, row.key_len, false, &back, err);
      if (r == EXEC_ROW || r == EXEC_DONE) r = EXEC_OK;
    }
  if (!r && k != KV_ERR_NOTFOUND && k != KV_OK)
    r = exec_index_kv_fail(err, k, "scanning the index to repair it");
  kv_be_scan_close(be, s);
  exec_index_repair_counts(rp, verified, deleted);
  exec_index_repair_free(rp);
  exec_index_codec_free(&ic);
  return r;
}
