/*
** api/recover_copy.c: the copying half of rowan_recover (api/recover.c has the steps and the
** report; the rules are in include/rowan.h and docs/SHELL.md "Recovering a damaged
** database"). It reads the salvaged store (kv/salvage/salvage.h) with ordinary scans, so every cell
** it sees is what a read of the damaged database would have seen (newest version first,
** tombstones and VERSIONS applied), and writes the new store with ordinary batches, each
** cell keeping its timestamp.
**
**   - rec_copy_table: a SQL table whose catalog row survived, into the table made again
**     from that row: the row-marker family and each column family, every version a read
**     keeps; the qualifier (column id) mapped by column name, a dynamic column's (00 + name)
**     kept as it is; a row key that does not decode
**     under the table's PRIMARY KEY, a value that does not decode as its column's type, or a
**     qualifier that is no column of the family is set aside in LOST_AND_FOUND; a row with
**     cells but no marker gets one, at its newest cell's timestamp, when the marker family
**     may have lost cells (a damaged store file of it, or damaged WAL bytes), else its cells
**     are set aside (a deleted row whose other families lost their tombstones).
**   - rec_lost_table: every cell of a kv table the catalog does not describe (a table whose
**     catalog row is lost, a lost catalog, a table whose name was lost) into LOST_AND_FOUND.
**   - rec_copy_kv_table: a key-value table that is not a SQL table, as it is.
** LOST_AND_FOUND is made on first use (the name with _2, _3 ... when it is taken).
**
** Not here: indexes (rebuilt through SQL by api/recover.c), the salvage itself (kv/).
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/recover_int.h"
#include "catalog/salt.h"
#include "catalog/keycodec.h"
#include "catalog/valcodec.h"

#define BATCH_BYTES ((size_t)4 << 20) /* writes committed once the batch holds this much */
#define ALL_VERSIONS (1 << 30)        /* max_versions of a scan that keeps every version */

int rec_flush_batch(rec *r, bool all) {
  if (kv_batch_count(r->b) == 0 || (!all && kv_batch_byte_size(r->b) < BATCH_BYTES))
    return ROWAN_OK;
  int rc = kv_commit(r->dk, r->b, NULL);
  kv_batch_clear(r->b);
  if (rc != KV_OK) {
    int code = rc == KV_ERR_NOSPC ? ROWAN_FULL : rc == KV_ERR_NOMEM ? ROWAN_NOMEM : ROWAN_IOERR;
    return rec_fail(r, code, "writing the new database %s: %s", r->dst, kv_errmsg());
  }
  return ROWAN_OK;
}

/* A put into the batch. */
static int put(rec *r, uint32_t fam, const uint8_t *row, size_t row_len, const uint8_t *q,
               size_t q_len, int64_t ts, const uint8_t *v, size_t v_len) {
  int rc = kv_batch_put(r->b, fam, row, row_len, q, q_len, ts, v, v_len);
  if (rc != KV_OK) return rec_fail(r, ROWAN_NOMEM, "recover: %s", kv_errmsg());
  return rec_flush_batch(r, false);
}

/* ---- LOST_AND_FOUND --------------------------------------------------------------------- */

static bool name_taken(rec *r, const char *name) {
  if (cat_find_table(r->dcat, name)) return true;
  for (int i = 0; i < r->cs.n_tables; i++)
    if (strcmp(r->cs.tables[i]->name, name) == 0) return true;
  return false;
}

static int lf_make(rec *r) {
  char name[64] = "LOST_AND_FOUND";
  for (int k = 2; name_taken(r, name); k++) snprintf(name, sizeof name, "LOST_AND_FOUND_%d", k);
  static const char *const names[6] = {"KV_TABLE", "FAMILY", "ROW_KEY", "QUALIFIER", "TS", "VAL"};
  static const int types[6] = {CAT_T_VARCHAR, CAT_T_VARCHAR, CAT_T_VARBINARY, CAT_T_VARBINARY,
                               CAT_T_BIGINT, CAT_T_VARBINARY};
  cat_column_def cols[6];
  memset(cols, 0, sizeof cols);
  for (int i = 0; i < 6; i++) {
    cols[i].name = names[i];
    cols[i].type = cat_type_of(types[i]);
  }
  const bool desc[5] = {false, false, false, false, true};
  cat_table_def def;
  memset(&def, 0, sizeof def);
  def.name = name;
  def.columns = cols;
  def.n_columns = 6;
  def.pk = names;
  def.pk_desc = desc;
  def.n_pk = 5;
  def.no_row_cover = true; /* set-aside cells: any subset of a row's */
  cat_error err;
  memset(&err, 0, sizeof err);
  if (cat_create_table(r->dcat, &def, &r->lf, &err) != CAT_OK)
    return rec_fail(r, ROWAN_IOERR, "recover: creating %s: %s", name, err.msg);
  r->rr->pub.lost_and_found = rec_str(r, name);
  return rec_table(r, name, &r->lf_entry);
}

/* One cell of kv table `kv_name`, family `fam`, into LOST_AND_FOUND. */
static int set_aside(rec *r, const char *kv_name, const char *fam, const uint8_t *row,
                     uint32_t row_len, const uint8_t *q, uint32_t q_len, int64_t ts,
                     const uint8_t *v, uint32_t v_len) {
  int rc = r->lf ? ROWAN_OK : lf_make(r);
  if (rc) return rc;
  cat_value vals[5] = {cat_v_str(CAT_T_VARCHAR, kv_name, strlen(kv_name)),
                       cat_v_str(CAT_T_VARCHAR, fam, strlen(fam)),
                       cat_v_str(CAT_T_VARBINARY, row, row_len),
                       cat_v_str(CAT_T_VARBINARY, q, q_len), cat_v_int(CAT_T_BIGINT, ts)};
  size_t klen = 0;
  cat_error err;
  if (cat_key_encode(r->lf->key_cols, 5, vals, r->kbuf, CAT_KEY_MAX, &klen, &err) != CAT_OK)
    return rec_note(r, "lost cell", r->src, 0, 0, 1, -1,
                    "a cell of %s (family %s) too large for %s's key: not kept", kv_name, fam,
                    r->rr->pub.lost_and_found);
  int val_col = cat_find_column(r->lf, "VAL");
  const cat_column *vc = &r->lf->columns[val_col];
  uint8_t vq[2];
  size_t vq_len = cat_column_qualifier(vc->id, vq);
  rc = put(r, r->lf->families[0].kv_id, r->kbuf, klen, (const uint8_t *)CAT_MARKER_QUALIFIER, 1,
           ts, NULL, 0);
  if (!rc) rc = put(r, r->lf->families[vc->family].kv_id, r->kbuf, klen, vq, vq_len, ts, v, v_len);
  if (!rc) {
    r->lf_cells++;
    rowan_recover_table *e = &r->rr->tables[r->lf_entry];
    e->rows++;
    e->cells += 2;
  }
  return rc;
}

/* ---- scanning the salvaged store ---------------------------------------------------------- */

/* Open a scan of families ids[0..n) of the salvaged store, every version a read keeps. */
static int open_scan(rec *r, const uint32_t *ids, uint32_t n, int versions, kv_scan **s) {
  kv_scan_options so;
  memset(&so, 0, sizeof so);
  so.family_ids = ids;
  so.n_families = n;
  so.max_versions = versions;
  int rc = kv_scan_open(r->sk, &so, s);
  if (rc != KV_OK) return rec_fail(r, ROWAN_IOERR, "recover: reading the salvaged store: %s", kv_errmsg());
  return ROWAN_OK;
}

/* Close a scan that ended with kv status krc (KV_ERR_NOTFOUND: the end). */
static int scan_end(rec *r, kv_scan *s, int krc) {
  kv_scan_close(s);
  if (krc == KV_ERR_NOTFOUND || krc == KV_OK) return ROWAN_OK;
  return rec_fail(r, ROWAN_IOERR, "recover: reading the salvaged store: %s", kv_errmsg());
}

/* The column id a qualifier names (cat_column_qualifier's encoding), or 0. */
static unsigned qual_id(const uint8_t *q, uint32_t n) {
  if (n == 1 && q[0] < 0x80) return q[0];
  if (n == 2 && (q[0] & 0x80)) return (unsigned)(q[0] & 0x7f) << 8 | q[1];
  return 0;
}

int rec_copy_table(rec *r, const cat_table *old, const cat_table *nt, int entry) {
  int nf = old->n_families;
  uint32_t sid[KV_MAX_FAMILIES], did[KV_MAX_FAMILIES];
  bool have[KV_MAX_FAMILIES];
  bool any = false;
  for (int i = 0; i < nf; i++) {
    have[i] = kv_family_id(r->sk, old->kv_name, old->families[i].name, &sid[i]) == KV_OK;
    int j = cat_find_family(nt, old->families[i].name);
    if (j < 0) have[i] = false;
    else did[i] = nt->families[j].kv_id;
    any |= have[i];
  }
  if (!any) return ROWAN_OK; /* nothing of it was found: the table comes back empty */
  /* old column id -> (old column, new column) */
  int *old_col = calloc((size_t)old->next_column_id + 1, sizeof *old_col);
  if (!old_col) return rec_fail(r, ROWAN_NOMEM, "out of memory");
  for (int i = 0; i < old->n_columns; i++)
    if (old->columns[i].pk_pos < 0 && old->columns[i].id <= old->next_column_id)
      old_col[old->columns[i].id] = i + 1;
  cat_value *keyv = calloc((size_t)old->n_pk, sizeof *keyv);
  if (!keyv) {
    free(old_col);
    return rec_fail(r, ROWAN_NOMEM, "out of memory");
  }
  /* A row with cells but no marker: its marker was in a block or record that was lost, or
  ** the row was deleted and the tombstones of its other families were lost (older cells
  ** then show again). Only the first is possible when nothing of the marker family was
  ** lost: then such cells are set aside instead of bringing a deleted row back. */
  bool markers_lost = r->wal_damaged;
  for (int i = 0; i < r->n_dmg_fams && have[0]; i++) markers_lost |= r->dmg_fams[i] == sid[0];
  int rc = ROWAN_OK;
  /* the key family with up to KV_SCAN_MAX_FAMILIES - 1 others per scan */
  for (int g = 1; rc == ROWAN_OK && (g < nf || g == 1); g += (int)KV_SCAN_MAX_FAMILIES - 1) {
    uint32_t ids[KV_SCAN_MAX_FAMILIES];
    int fi_of[KV_SCAN_MAX_FAMILIES];
    uint32_t n = 0;
    int versions = 1;
    if (have[0]) { ids[n] = sid[0]; fi_of[n++] = 0; }
    for (int i = g; i < nf && i < g + (int)KV_SCAN_MAX_FAMILIES - 1; i++)
      if (have[i]) {
        ids[n] = sid[i];
        fi_of[n++] = i;
        if (old->families[i].max_versions > versions) versions = old->families[i].max_versions;
      }
    if (n == 0) continue;
    kv_scan *s;
    if ((rc = open_scan(r, ids, n, versions, &s))) break;
    kv_row row;
    int krc;
    while ((krc = kv_scan_next(s, &row)) == KV_OK) {
      cat_error err;
      size_t salt = cat_salt_len(old); /* a salted table's key: its bucket, then the columns
                                          (the copy is salted alike: the same stored key) */
      bool key_ok = row.key_len > salt &&
                    cat_key_decode(old->key_cols, old->n_pk, row.key + salt, row.key + row.key_len,
                                   keyv, r->scratch, CAT_KEY_MAX, NULL, &err) == CAT_OK;
      bool marker = false;
      int64_t newest = INT64_MIN;
      int64_t data = 0;
      if (key_ok && have[0] && !markers_lost) { /* a row without marker was deleted */
        bool mark = false;
        for (uint32_t k = 0; k < row.n_cells && !mark; k++) mark = row.cells[k].family_id == sid[0];
        key_ok = mark;
      }
      for (uint32_t k = 0; k < row.n_cells && rc == ROWAN_OK; k++) {
        const kv_cell_view *cv = &row.cells[k];
        uint32_t slot = 0;
        while (slot < n && ids[slot] != cv->family_id) slot++;
        int fi = slot < n ? fi_of[slot] : 0;
        const char *fname = old->families[fi].name;
        bool keep = key_ok;
        const uint8_t *q = cv->qual;
        uint32_t q_len = cv->qual_len;
        uint8_t nq[2];
        if (keep && fi == 0) {
          keep = q_len == 1 && q[0] == 0x00;
          marker |= keep;
        } else if (keep && q_len >= 2 && q[0] == CAT_DYN_QUAL_ESCAPE) {
          /* a dynamic column's cell: its qualifier (00 + name) names it in any store, and no
             type is recorded to check its value against: copied as it is */
        } else if (keep) {
          unsigned id = qual_id(q, q_len);
          int oc = id && id <= old->next_column_id ? old_col[id] - 1 : -1;
          int ncol = oc >= 0 ? cat_find_column(nt, old->columns[oc].name) : -1;
          cat_value v;
          keep = oc >= 0 && old->columns[oc].family == fi && ncol >= 0 &&
                 cat_vc_decode(&old->columns[oc].type, cv->value, cv->value_len, &v, &err) == CAT_OK;
          if (keep) {
            q = nq;
            q_len = (uint32_t)cat_column_qualifier(nt->columns[ncol].id, nq);
          }
        }
        if (!keep) {
          r->rr->tables[entry].cells_set_aside++;
          rc = set_aside(r, old->kv_name, fname, row.key, row.key_len, cv->qual, cv->qual_len,
                         cv->ts, cv->value, cv->value_len);
          continue;
        }
        rc = put(r, did[fi], row.key, row.key_len, q, q_len, cv->ts, cv->value, cv->value_len);
        r->rr->tables[entry].cells++;
        if (fi != 0) data++;
        if (cv->ts > newest) newest = cv->ts;
      }
      if (rc == ROWAN_OK && key_ok && data > 0 && !marker && have[0]) { /* its marker was lost */
        rc = put(r, did[0], row.key, row.key_len, (const uint8_t *)CAT_MARKER_QUALIFIER, 1,
                 newest, NULL, 0);
        r->rr->tables[entry].cells++;
        r->rr->tables[entry].markers_added++;
        marker = true;
      }
      if (g == 1 && key_ok && (marker || data > 0)) r->rr->tables[entry].rows++;
      if (rc) break;
    }
    int src = scan_end(r, s, rc ? KV_OK : krc);
    if (!rc) rc = src;
  }
  free(old_col);
  free(keyv);
  return rc ? rc : rec_flush_batch(r, true);
}

/* The family ids of kv table kv_name in the salvaged store, with their options. */
static int families_of(rec *r, const char *kv_name, uint32_t *ids, kv_family_options *fo,
                       uint32_t *n) {
  if (kv_table_families(r->sk, kv_name, ids, KV_MAX_FAMILIES, n) != KV_OK || *n > KV_MAX_FAMILIES)
    return rec_fail(r, ROWAN_IOERR, "recover: table %s: %s", kv_name, kv_errmsg());
  for (uint32_t i = 0; i < *n; i++)
    if (kv_family_info(r->sk, ids[i], &fo[i]) != KV_OK)
      return rec_fail(r, ROWAN_IOERR, "recover: table %s: %s", kv_name, kv_errmsg());
  return ROWAN_OK;
}

/* Hand every visible cell of kv table kv_name (every version) to `each`. */
typedef int (*cell_fn)(rec *r, const char *kv_name, const char *fam, uint32_t fam_index,
                       const kv_row *row, const kv_cell_view *cv, void *ctx);
static int each_cell(rec *r, const char *kv_name, cell_fn each, void *ctx) {
  uint32_t ids[KV_MAX_FAMILIES], n = 0;
  kv_family_options fo[KV_MAX_FAMILIES];
  int rc = families_of(r, kv_name, ids, fo, &n);
  for (uint32_t g = 0; rc == ROWAN_OK && g < n; g += KV_SCAN_MAX_FAMILIES) {
    uint32_t m = n - g < KV_SCAN_MAX_FAMILIES ? n - g : KV_SCAN_MAX_FAMILIES;
    kv_scan *s;
    if ((rc = open_scan(r, ids + g, m, ALL_VERSIONS, &s))) break;
    kv_row row;
    int krc = KV_ERR_NOTFOUND;
    while (rc == ROWAN_OK && (krc = kv_scan_next(s, &row)) == KV_OK)
      for (uint32_t k = 0; rc == ROWAN_OK && k < row.n_cells; k++) {
        uint32_t f = 0;
        while (f < m && ids[g + f] != row.cells[k].family_id) f++;
        rc = each(r, kv_name, fo[g + f].name, g + f, &row, &row.cells[k], ctx);
      }
    int src = scan_end(r, s, rc ? KV_OK : krc);
    if (!rc) rc = src;
  }
  return rc ? rc : rec_flush_batch(r, true);
}

static int lost_cell(rec *r, const char *kv_name, const char *fam, uint32_t fi,
                     const kv_row *row, const kv_cell_view *cv, void *ctx) {
  (void)fi;
  (void)ctx;
  return set_aside(r, kv_name, fam, row->key, row->key_len, cv->qual, cv->qual_len, cv->ts,
                   cv->value, cv->value_len);
}

int rec_lost_table(rec *r, const char *kv_name) { return each_cell(r, kv_name, lost_cell, NULL); }

static int kv_cell(rec *r, const char *kv_name, const char *fam, uint32_t fi,
                   const kv_row *row, const kv_cell_view *cv, void *ctx) {
  (void)kv_name;
  (void)fam;
  const uint32_t *dids = ctx;
  return put(r, dids[fi], row->key, row->key_len, cv->qual, cv->qual_len, cv->ts, cv->value,
             cv->value_len);
}

int rec_copy_kv_table(rec *r, const char *kv_name) {
  uint32_t ids[KV_MAX_FAMILIES], n = 0, dids[KV_MAX_FAMILIES];
  kv_family_options fo[KV_MAX_FAMILIES];
  int rc = families_of(r, kv_name, ids, fo, &n);
  if (rc) return rc;
  if (kv_create_table(r->dk, kv_name, fo, (int)n) != KV_OK)
    return rec_fail(r, ROWAN_IOERR, "recover: creating key-value table %s: %s", kv_name, kv_errmsg());
  for (uint32_t i = 0; i < n; i++)
    if (kv_family_id(r->dk, kv_name, fo[i].name, &dids[i]) != KV_OK)
      return rec_fail(r, ROWAN_IOERR, "recover: %s", kv_errmsg());
  r->rr->pub.kv_tables++;
  return each_cell(r, kv_name, kv_cell, dids);
}
