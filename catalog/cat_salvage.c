/*
** catalog/cat_salvage.c: reading the catalog of a store that may have lost rows
** (cat_salvage_read), and the definition of a table for creating it again elsewhere
** (cat_table_def_from); contracts in catalog/catalog.h, "Salvage". api/recover.c uses both
** to bring a damaged store's tables back with their schemas.
**
** Unlike cat_open it writes nothing (no SYSTEM.CATALOG created, no orphan dropped) and
** stops at nothing: a row that does not decode, or an index row whose table row is gone,
** becomes a problem message and the scan goes on. Sequence rows are decoded too, so that a
** recovery makes each sequence again.
** Not here: the strict catalog (catalog/catalog.c), copying rows (api/recover.c).
*/
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalog/catalog_int.h"

static int add_str(char ***v, int *n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int add_str(char ***v, int *n, const char *fmt, ...) {
  char msg[400];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  char **nv = realloc(*v, (size_t)(*n + 1) * sizeof *nv);
  if (!nv) return CAT_ERR_NOMEM;
  *v = nv;
  if (!(nv[*n] = strdup(msg))) return CAT_ERR_NOMEM;
  (*n)++;
  return CAT_OK;
}

/* A row key for a message: its kind letter and the readable part of the name. */
static void key_text(const kv_row *row, char *out, size_t cap) {
  size_t n = 0;
  for (uint32_t i = 0; i < row->key_len && n + 5 < cap; i++) {
    uint8_t c = row->key[i];
    if (c >= 0x20 && c < 0x7f) out[n++] = (char)c;
    else n += (size_t)snprintf(out + n, cap - n, "\\x%02x", c);
  }
  out[n < cap ? n : cap - 1] = 0;
}

void cat_salvage_free(cat_salvage *s) {
  if (!s) return;
  for (int i = 0; i < s->n_tables; i++) cat_table_free(s->tables[i]);
  free(s->tables);
  for (int i = 0; i < s->n_problems; i++) free(s->problems[i]);
  free(s->problems);
  for (int i = 0; i < s->n_lost_indexes; i++) free(s->lost_indexes[i]);
  free(s->lost_indexes);
  for (int i = 0; i < s->n_sequences; i++) cat_seq_free(s->sequences[i]);
  free(s->sequences);
  memset(s, 0, sizeof *s);
}

static int find(const cat_salvage *s, const char *name) {
  for (int i = 0; i < s->n_tables; i++)
    if (strcmp(s->tables[i]->name, name) == 0) return i;
  return -1;
}

int cat_salvage_read(kv_db *db, cat_salvage *out, cat_error *err) {
  memset(out, 0, sizeof *out);
  kv_backend bes, *be = kv_backend_local_init(&bes, db);
  uint32_t fam;
  if (kv_be_family_id(be, CAT_SYSTEM_TABLE, CAT_DEFAULT_FAMILY, &fam) != KV_OK) return CAT_OK;
  out->found = true;
  kv_scan_options so;
  memset(&so, 0, sizeof so);
  so.family_ids = &fam;
  so.n_families = 1;
  kv_backend_scan *sc = NULL;
  int rc = kv_be_scan_open(be, &so, NULL, &sc);
  if (rc) return cat_err(err, CAT_ERR_KV, "SYSTEM.CATALOG scan: %s", kv_errmsg());
  /* index rows ('I') sort before the table rows ('T'): parked, attached after the scan */
  cat_index *pend = NULL;
  char **pend_table = NULL;
  int n_pend = 0, out_rc = CAT_OK;
  kv_row row;
  while (out_rc == CAT_OK && (rc = kv_be_scan_next(be, sc, &row)) == KV_OK) {
    const kv_cell_view *cell = NULL;
    for (uint32_t i = 0; i < row.n_cells; i++)
      if (row.cells[i].qual_len == 1 && row.cells[i].qual[0] == 'd') cell = &row.cells[i];
    char kt[200];
    key_text(&row, kt, sizeof kt);
    if (!cell || row.key_len == 0) {
      out_rc = add_str(&out->problems, &out->n_problems,
                       "SYSTEM.CATALOG row '%s' has no record cell: skipped", kt);
      continue;
    }
    char kind = (char)row.key[0];
    if (kind == 'M') continue; /* the next generation: the new store keeps its own */
    if (kind == 'T') {
      cat_table *t = cat_table_record_parse(cell->value, cell->value_len);
      if (!t) {
        out_rc = add_str(&out->problems, &out->n_problems,
                         "SYSTEM.CATALOG table row '%s' does not decode: skipped", kt);
        continue;
      }
      cat_table **nt = realloc(out->tables, (size_t)(out->n_tables + 1) * sizeof *nt);
      if (!nt) { cat_table_free(t); out_rc = CAT_ERR_NOMEM; break; }
      out->tables = nt;
      out->tables[out->n_tables++] = t;
    } else if (kind == 'I') {
      cat_index *np = realloc(pend, (size_t)(n_pend + 1) * sizeof *np);
      if (np) pend = np;
      char **npt = np ? realloc(pend_table, (size_t)(n_pend + 1) * sizeof *npt) : NULL;
      if (npt) pend_table = npt;
      if (!np || !npt) { out_rc = CAT_ERR_NOMEM; break; }
      if (!cat_index_record_parse(cell->value, cell->value_len, &pend[n_pend], &pend_table[n_pend]))
        out_rc = add_str(&out->problems, &out->n_problems,
                         "SYSTEM.CATALOG index row '%s' does not decode: the index is not rebuilt",
                         kt);
      else n_pend++;
    } else if (kind == 'S') {
      cat_sequence *sq = cat_seq_record_parse(cell->value, cell->value_len);
      size_t bytes = (size_t)(out->n_sequences + 1) * sizeof *out->sequences;
      cat_sequence **ns = sq ? realloc(out->sequences, bytes) : NULL;
      if (ns) {
        out->sequences = ns;
        out->sequences[out->n_sequences++] = sq;
      } else if (sq) {
        cat_seq_free(sq);
        out_rc = CAT_ERR_NOMEM;
      } else {
        out_rc = add_str(&out->problems, &out->n_problems,
                         "SYSTEM.CATALOG sequence row '%s' does not decode: skipped", kt);
      }
    } else if (kind == 'V') { /* a view holds no rows: its DDL is for the user to run again */
      bool cols = cell->value_len > 0 && cell->value[0] == 2; /* version 2: columns of its own */
      out_rc = add_str(&out->problems, &out->n_problems,
                       "SYSTEM.CATALOG view row '%s': views are not recovered (create the view "
                       "again%s)", kt, cols ? "; the values of its own columns are not "
                       "recovered: its columns get new ids" : "");
    } else {
      out_rc = add_str(&out->problems, &out->n_problems,
                       "SYSTEM.CATALOG row '%s' of unknown kind: skipped", kt);
    }
  }
  kv_be_scan_close(be, sc);
  if (out_rc == CAT_OK && rc != KV_ERR_NOTFOUND && rc != KV_OK)
    out_rc = cat_err(err, CAT_ERR_KV, "SYSTEM.CATALOG scan: %s", kv_errmsg());
  for (int i = 0; i < n_pend; i++) {
    int ti = out_rc == CAT_OK ? find(out, pend_table[i]) : -1;
    cat_table *t = ti >= 0 ? out->tables[ti] : NULL;
    cat_index *nx = t ? realloc(t->indexes, (size_t)(t->n_indexes + 1) * sizeof *nx) : NULL;
    if (nx) {
      t->indexes = nx;
      t->indexes[t->n_indexes++] = pend[i];
    } else {
      if (out_rc == CAT_OK && t) out_rc = CAT_ERR_NOMEM;
      if (out_rc == CAT_OK)
        out_rc = add_str(&out->problems, &out->n_problems,
                         "index %s of table %s: the table's catalog row is lost, so the index is "
                         "not rebuilt", pend[i].name, pend_table[i]);
      if (out_rc == CAT_OK)
        out_rc = add_str(&out->lost_indexes, &out->n_lost_indexes, "%s", pend[i].kv_name);
      cat_index_free(&pend[i]);
    }
    free(pend_table[i]);
  }
  free(pend);
  free(pend_table);
  if (out_rc == CAT_ERR_NOMEM) return cat_err(err, CAT_ERR_NOMEM, "out of memory");
  return out_rc;
}

void cat_table_def_free(cat_table_def *def) {
  if (!def) return;
  free((void *)def->columns);
  free((void *)def->pk);
  free((void *)def->pk_desc);
  free((void *)def->families);
  free((void *)def->column_ids);
  memset(def, 0, sizeof *def);
}

int cat_table_def_from(const cat_table *t, cat_table_def *def, cat_error *err) {
  memset(def, 0, sizeof *def);
  cat_column_def *cols = calloc((size_t)t->n_columns, sizeof *cols);
  const char **pk = calloc((size_t)t->n_pk, sizeof *pk);
  bool *desc = calloc((size_t)t->n_pk, sizeof *desc);
  cat_family_def *fams = calloc((size_t)(t->n_families > 0 ? t->n_families : 1), sizeof *fams);
  uint16_t *ids = calloc((size_t)t->n_columns, sizeof *ids);
  if (!cols || !pk || !desc || !fams || !ids) {
    free(ids);
    free(cols);
    free(pk);
    free(desc);
    free(fams);
    return cat_err(err, CAT_ERR_NOMEM, "out of memory");
  }
  for (int i = 0; i < t->n_columns; i++) {
    const cat_column *c = &t->columns[i];
    cols[i].name = c->name;
    cols[i].type = c->type;
    if (c->pk_pos >= 0) {
      cols[i].family = NULL;
      cols[i].null_mode = c->nullable ? 1 : 0;
      pk[c->pk_pos] = c->name;
      desc[c->pk_pos] = c->desc;
    } else {
      cols[i].family = t->families[c->family].name;
      cols[i].null_mode = c->nullable ? 1 : 2;
      ids[i] = c->id; /* the cells' qualifiers: dropped columns leave gaps */
    }
  }
  int nf = 0;
  for (int i = 0; i < t->n_families; i++) {
    const cat_family *f = &t->families[i];
    if (f->name[0] == '_') continue; /* the hidden key family comes by itself */
    fams[nf].name = f->name;
    fams[nf].max_versions = f->max_versions;
    fams[nf].compression = f->compression;
    fams[nf].block_size = f->block_size;
    nf++;
  }
  def->name = t->name;
  def->columns = cols;
  def->n_columns = t->n_columns;
  def->pk = pk;
  def->pk_desc = desc;
  def->n_pk = t->n_pk;
  def->families = fams;
  def->n_families = nf;
  def->ttl_sec = t->ttl_sec;
  def->immutable_rows = t->immutable_rows;
  def->column_ids = ids;
  def->next_column_id = t->next_column_id;
  def->row_timestamp = t->row_ts >= 0 ? t->columns[t->row_ts].name : NULL;
  def->salt_buckets = t->salt_buckets;
  def->split_keys = (const uint8_t *const *)t->split_keys;
  def->split_lens = t->split_lens;
  def->n_splits = t->n_splits;
  return CAT_OK;
}
