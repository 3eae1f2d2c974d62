/*
** catalog/catalog.c: the persistent catalog (contracts in catalog/catalog.h; row layout in
** docs/FORMAT_SQL.md (Part 3) "SYSTEM.CATALOG").
**
** SYSTEM.CATALOG rows (family "0", qualifier "d", one cell each):
**   'M'                         meta: varint next generation number
**   'T' name 00 01              a table record (version 1, 2 with a row cover, 3 with
**                               SALT_BUCKETS or SPLIT ON: catalog/cat_regions.c)
**   'I' table 00 01 index 00 01 an index record (version 1, 2 when salted)
**   'S' name 00 01              a sequence record (version 1, catalog/cat_sequence.c)
**   'V' name 00 01              a view record (version 1, or 2 with columns; catalog/cat_view.c)
** (names escaped as VARCHAR key columns). Records are varints and length-prefixed strings
** read with (p, limit) decoders. DDL ordering for crash safety is described in catalog.h.
** Every store call goes through the storage backend the catalog was opened with
** (kv/backend.h; cat_open: the local one).
** Not here: codecs (keycodec.c, valcodec.c), SQL.
*/
#include "catalog/catalog.h"
#include "catalog/catalog_int.h"
#include "catalog/row_ts.h"
#include "catalog/cat_view.h"
#include "catalog/cat_record.h"
#include "catalog/cat_regions.h"

#include <stdio.h>
#include <stdlib.h>
#include <ctype.h>
#include <string.h>

#include "kv/util/coding.h"

#define REC_VERSION 1
#define REC_VERSION_COVER 2 /* a table record ending in its row cover (docs/FORMAT_SQL.md) */
#define REC_VERSION_REGIONS 3 /* ... then SALT_BUCKETS and the SPLIT ON points */

struct cat_catalog {
  kv_backend be;          /* the store, through its backend (a copy; its state not owned) */
  uint32_t sys_family;    /* kv id of SYSTEM.CATALOG family "0" */
  uint64_t next_gen;      /* next generation number for internal kv names */
  int n_tables;           /* tables */
  int cap_tables;         /* allocated slots */
  cat_table **tables;     /* in creation order */
  cat_seq_set seqs;       /* sequences (catalog/cat_sequence.c) */
  cat_view_list views;    /* the views (catalog/cat_view.c) */
  uint64_t cover_epoch;   /* cat_row_cover_epoch */
};

/* ---- small helpers ------------------------------------------------------------------- */
static int kverr(cat_error *err, int kv_code, const char *what) {
  int rc = cat_err(err, CAT_ERR_KV, "%s: %s", what, kv_errmsg());
  if (err) err->kv_code = kv_code;
  return rc;
}

static char *dupstr(const char *s) {
  size_t n = strlen(s) + 1;
  char *d = malloc(n);
  if (d) memcpy(d, s, n);
  return d;
}

/* ---- freeing ------------------------------------------------------------------------- */
static void free_index(cat_index *x) {
  free(x->name);
  free(x->kv_name);
  for (int i = 0; i < x->n_keys; i++) free(x->keys ? x->keys[i] : NULL);
  free(x->keys);
  free(x->key_desc);
  for (int i = 0; i < x->n_include; i++) free(x->include ? x->include[i] : NULL);
  free(x->include);
}

static void free_table(cat_table *t) {
  if (!t) return;
  free(t->name);
  free(t->kv_name);
  for (int i = 0; i < t->n_columns; i++) free(t->columns ? t->columns[i].name : NULL);
  free(t->columns);
  free(t->pk);
  free(t->key_cols);
  for (int i = 0; i < t->n_families; i++) free(t->families ? t->families[i].name : NULL);
  free(t->families);
  for (int i = 0; i < t->n_indexes; i++) free_index(&t->indexes[i]);
  free(t->indexes);
  free(t->row_cover);
  cat_regions_free(t);
  free(t);
}

/* ---- records ------------------------------------------------------------------------- */
static void table_record(const cat_table *t, buf *b) {
  uint64_t cover = cat_row_cover_of(t);
  bool regions = t->salt_buckets || t->n_splits;
  put_u8(b, regions ? REC_VERSION_REGIONS : cover ? REC_VERSION_COVER : REC_VERSION);
  put_str(b, t->name);
  put_str(b, t->kv_name);
  put_var(b, t->generation);
  put_u8(b, t->immutable_rows ? 1 : 0);
  put_var(b, (uint64_t)t->ttl_sec);
  put_var(b, t->next_column_id);
  put_var(b, (uint64_t)t->n_families);
  for (int i = 0; i < t->n_families; i++) {
    const cat_family *f = &t->families[i];
    put_str(b, f->name);
    put_var(b, (uint64_t)f->max_versions);
    put_var(b, (uint64_t)f->compression);
    put_var(b, f->block_size);
  }
  put_var(b, (uint64_t)t->n_columns);
  for (int i = 0; i < t->n_columns; i++) {
    const cat_column *c = &t->columns[i];
    put_str(b, c->name);
    put_u8(b, c->type.id);
    if (c->type.id == CAT_T_ARRAY) put_u8(b, c->type.elem); /* element type id */
    put_u8(b, c->type.precision);
    put_u8(b, c->type.scale);
    put_var(b, c->type.length);
    put_u8(b, (uint8_t)((c->nullable ? 1 : 0) | (c->desc ? 2 : 0) | (c->row_timestamp ? 4 : 0)));
    put_var(b, (uint64_t)(c->pk_pos + 1));
    put_var(b, (uint64_t)c->family);
    put_var(b, c->id);
  }
  if (cover || regions) put_var(b, cover);
  if (regions) cat_regions_record(t, b);
}

/* Fill the derived fields (pk order, key codec view) of a table; false if inconsistent. */
static bool derive(cat_table *t) {
  t->n_pk = 0;
  for (int i = 0; i < t->n_columns; i++)
    if (t->columns[i].pk_pos >= 0) t->n_pk++;
  if (t->n_pk == 0) return false;
  t->pk = calloc((size_t)t->n_pk, sizeof *t->pk);
  t->key_cols = calloc((size_t)t->n_pk, sizeof *t->key_cols);
  if (!t->pk || !t->key_cols) return false;
  for (int i = 0; i < t->n_pk; i++) t->pk[i] = -1;
  t->row_ts = -1;
  for (int i = 0; i < t->n_columns; i++) {
    const cat_column *c = &t->columns[i];
    if (c->family < 0 || c->family >= t->n_families) return false;
    if (cat_type_validate(&c->type, NULL) != CAT_OK) return false;
    if (c->row_timestamp) { /* one, a key column, of a type that is a point in time */
      if (t->row_ts >= 0 || c->pk_pos < 0 || !cat_row_ts_type_ok(c->type.id)) return false;
      t->row_ts = i;
    }
    if (c->pk_pos < 0) continue;
    if (c->pk_pos >= t->n_pk || t->pk[c->pk_pos] != -1) return false;
    t->pk[c->pk_pos] = i;
    t->key_cols[c->pk_pos].type = c->type;
    t->key_cols[c->pk_pos].desc = c->desc;
    t->key_cols[c->pk_pos].nullable = c->nullable;
  }
  return true;
}

static cat_table *parse_table(const uint8_t *p, size_t n) {
  rd r = {p, p + n, false};
  cat_table *t = calloc(1, sizeof *t);
  if (!t) return NULL;
  uint8_t version = get_u8(&r);
  if (version != REC_VERSION && version != REC_VERSION_COVER && version != REC_VERSION_REGIONS)
    r.bad = true;
  t->row_cover = calloc(1, sizeof *t->row_cover);
  if (!t->row_cover) goto bad;
  t->name = get_str(&r);
  t->kv_name = get_str(&r);
  t->generation = get_var(&r);
  t->immutable_rows = get_u8(&r) & 1;
  t->ttl_sec = (int64_t)get_var(&r);
  t->next_column_id = (uint16_t)get_var(&r);
  uint64_t nf = get_var(&r);
  if (r.bad || nf < 1 || nf > KV_MAX_FAMILIES) goto bad;
  t->families = calloc((size_t)nf, sizeof *t->families);
  if (!t->families) goto bad;
  t->n_families = (int)nf;
  for (int i = 0; i < t->n_families; i++) {
    cat_family *f = &t->families[i];
    f->name = get_str(&r);
    f->max_versions = (int)get_var(&r);
    f->compression = (int)get_var(&r);
    f->block_size = (uint32_t)get_var(&r);
    f->ttl_sec = t->ttl_sec;
  }
  uint64_t nc = get_var(&r);
  if (r.bad || nc < 1 || nc > CAT_MAX_COLUMNS) goto bad;
  t->columns = calloc((size_t)nc, sizeof *t->columns);
  if (!t->columns) goto bad;
  t->n_columns = (int)nc;
  for (int i = 0; i < t->n_columns; i++) {
    cat_column *c = &t->columns[i];
    c->name = get_str(&r);
    c->type.id = get_u8(&r);
    if (c->type.id == CAT_T_ARRAY) c->type.elem = get_u8(&r);
    c->type.precision = get_u8(&r);
    c->type.scale = get_u8(&r);
    c->type.length = (uint32_t)get_var(&r);
    uint8_t fl = get_u8(&r);
    c->nullable = fl & 1;
    c->desc = (fl & 2) != 0;
    c->row_timestamp = (fl & 4) != 0;
    if (fl & ~7) r.bad = true; /* a flag this version does not know */
    c->pk_pos = (int)get_var(&r) - 1;
    c->family = (int)get_var(&r);
    c->id = (uint16_t)get_var(&r);
  }
  if (version >= REC_VERSION_COVER) { /* bits of families 1..n-1 only, at least one in v2 */
    *t->row_cover = get_var(&r);
    uint64_t all = t->n_families >= 64 ? ~1ull : ((1ull << t->n_families) - 2);
    if ((version == REC_VERSION_COVER && !*t->row_cover) || (*t->row_cover & ~all)) r.bad = true;
  }
  if (version == REC_VERSION_REGIONS) cat_regions_parse(&r, t);
  if (r.bad || r.p != r.limit || !derive(t)) goto bad;
  return t;
bad:
  free_table(t);
  return NULL;
}

static void index_record(const cat_table *t, const cat_index *x, buf *b) {
  put_u8(b, x->salt_buckets ? REC_VERSION_COVER : REC_VERSION); /* version 2: salted */
  put_str(b, t->name);
  put_str(b, x->name);
  put_str(b, x->kv_name);
  put_var(b, x->generation);
  put_u8(b, (uint8_t)x->state);
  put_var(b, (uint64_t)x->n_keys);
  for (int i = 0; i < x->n_keys; i++) {
    put_str(b, x->keys[i]);
    put_u8(b, x->key_desc[i] ? 1 : 0);
  }
  put_var(b, (uint64_t)x->n_include);
  for (int i = 0; i < x->n_include; i++) put_str(b, x->include[i]);
  if (x->salt_buckets) put_var(b, (uint64_t)x->salt_buckets);
}

/* Parse an index record; *table_name gets the owning table's name (caller frees). */
static bool parse_index(const uint8_t *p, size_t n, cat_index *x, char **table_name) {
  rd r = {p, p + n, false};
  memset(x, 0, sizeof *x);
  uint8_t version = get_u8(&r);
  if (version != REC_VERSION && version != REC_VERSION_COVER) r.bad = true;
  *table_name = get_str(&r);
  x->name = get_str(&r);
  x->kv_name = get_str(&r);
  x->generation = get_var(&r);
  x->state = get_u8(&r);
  uint64_t nk = get_var(&r);
  if (r.bad || nk < 1 || nk > CAT_MAX_COLUMNS) goto bad;
  x->keys = calloc((size_t)nk, sizeof *x->keys);
  x->key_desc = calloc((size_t)nk, sizeof *x->key_desc);
  if (!x->keys || !x->key_desc) goto bad;
  x->n_keys = (int)nk;
  for (int i = 0; i < x->n_keys; i++) {
    x->keys[i] = get_str(&r);
    x->key_desc[i] = get_u8(&r) & 1;
  }
  uint64_t ni = get_var(&r);
  if (r.bad || ni > CAT_MAX_COLUMNS) goto bad;
  if (ni) {
    x->include = calloc((size_t)ni, sizeof *x->include);
    if (!x->include) goto bad;
    x->n_include = (int)ni;
    for (int i = 0; i < x->n_include; i++) x->include[i] = get_str(&r);
  }
  if (version == REC_VERSION_COVER) { /* a salted index: SALT_BUCKETS 1..256 */
    uint64_t sb = get_var(&r);
    if (sb < 1 || sb > CAT_SALT_MAX) r.bad = true;
    x->salt_buckets = (int)sb;
  }
  if (r.bad || r.p != r.limit || x->state > CAT_INDEX_DISABLED) goto bad;
  return true;
bad:
  free_index(x);
  memset(x, 0, sizeof *x);
  free(*table_name);
  *table_name = NULL;
  return false;
}

/* ---- catalog rows in a batch ------------------------------------------------------- */
static void table_key(buf *k, const char *name) {
  k->len = 0;
  put_u8(k, 'T');
  put_keyname(k, name);
}
static void index_key(buf *k, const char *table, const char *index) {
  k->len = 0;
  put_u8(k, 'I');
  put_keyname(k, table);
  put_keyname(k, index);
}

static int batch_put_row(cat_catalog *cat, kv_batch *b, buf *key, buf *val, cat_error *err) {
  if (key->oom || val->oom) return cat_err(err, CAT_ERR_NOMEM, "out of memory");
  int rc = kv_batch_put(b, cat->sys_family, key->p, key->len, "d", 1, KV_TS_NOW, val->p, val->len);
  return rc ? kverr(err, rc, "catalog batch") : CAT_OK;
}

static int batch_delete_row(cat_catalog *cat, kv_batch *b, buf *key, cat_error *err) {
  if (key->oom) return cat_err(err, CAT_ERR_NOMEM, "out of memory");
  int rc = kv_batch_delete(b, cat->sys_family, KV_DELETE_COLUMN, key->p, key->len, "d", 1, KV_TS_NOW);
  return rc ? kverr(err, rc, "catalog batch") : CAT_OK;
}

/* Add the meta row (next generation) to the batch. */
static int batch_meta(cat_catalog *cat, kv_batch *b, uint64_t next_gen, cat_error *err) {
  buf k = {0}, v = {0};
  put_u8(&k, 'M');
  put_var(&v, next_gen);
  int rc = batch_put_row(cat, b, &k, &v, err);
  free(k.p);
  free(v.p);
  return rc;
}

static int commit(cat_catalog *cat, kv_batch *b, cat_error *err) {
  int rc = kv_be_write(&cat->be, b, NULL);
  return rc ? kverr(err, rc, "catalog commit") : CAT_OK;
}

/* Make the catalog's committed rows durable before a DROP removes a kv table from the
** MANIFEST. With sync mode off (or normal, at a power cut) a commit can still sit in the
** WAL buffer while the MANIFEST edit of kv_drop_table is already on disk: a crash then left
** a catalog row naming a kv table that no longer exists, and the store could not be opened
** again ("catalog: family of table: no table ..."). A flush of SYSTEM.CATALOG puts the
** deletion in a store file first; with nothing new in its memstore it writes nothing. */
static int catalog_durable(cat_catalog *cat, cat_error *err) {
  int rc = kv_be_flush(&cat->be, CAT_SYSTEM_TABLE);
  return rc ? kverr(err, rc, "catalog flush") : CAT_OK;
}

/* Look up the kv family ids of a table's families and of its indexes' tables. */
static int resolve_ids(cat_catalog *cat, cat_table *t, cat_error *err) {
  for (int i = 0; i < t->n_families; i++) {
    int rc = kv_be_family_id(&cat->be, t->kv_name, t->families[i].name, &t->families[i].kv_id);
    if (rc) return kverr(err, rc, "catalog: family of table");
  }
  for (int i = 0; i < t->n_indexes; i++) {
    cat_index *x = &t->indexes[i];
    int rc = kv_be_family_id(&cat->be, x->kv_name, CAT_KEY_FAMILY, &x->kv_key_family);
    if (!rc) rc = kv_be_family_id(&cat->be, x->kv_name, CAT_DEFAULT_FAMILY, &x->kv_data_family);
    if (rc) return kverr(err, rc, "catalog: family of index");
  }
  return CAT_OK;
}

static int add_table(cat_catalog *cat, cat_table *t) {
  if (cat->n_tables == cat->cap_tables) {
    int c = cat->cap_tables ? cat->cap_tables * 2 : 16;
    cat_table **q = realloc(cat->tables, (size_t)c * sizeof *q);
    if (!q) return CAT_ERR_NOMEM;
    cat->tables = q;
    cat->cap_tables = c;
  }
  cat->tables[cat->n_tables++] = t;
  return CAT_OK;
}

static int find_table_index(const cat_catalog *cat, const char *name) {
  for (int i = 0; i < cat->n_tables; i++)
    if (strcmp(cat->tables[i]->name, name) == 0) return i;
  return -1;
}


/* ---- open and load ------------------------------------------------------------------- */
static bool is_internal(const char *kv_name) {
  return kv_name[0] == '$' && (kv_name[1] == 't' || kv_name[1] == 'i');
}

/* Is kv_name named by a table or index of the catalog? */
static bool referenced(const cat_catalog *cat, const char *kv_name) {
  for (int i = 0; i < cat->n_tables; i++) {
    const cat_table *t = cat->tables[i];
    if (strcmp(t->kv_name, kv_name) == 0) return true;
    for (int j = 0; j < t->n_indexes; j++)
      if (strcmp(t->indexes[j].kv_name, kv_name) == 0) return true;
  }
  return false;
}

static int load(cat_catalog *cat, cat_error *err) {
  kv_scan_options so;
  memset(&so, 0, sizeof so);
  so.family_ids = &cat->sys_family;
  so.n_families = 1;
  kv_backend_scan *s = NULL;
  int rc = kv_be_scan_open(&cat->be, &so, NULL, &s);
  if (rc) return kverr(err, rc, "catalog scan");
  kv_row row;
  int out = CAT_OK;
  /* Index rows ('I') sort before the table rows ('T') they belong to, so index records are
  ** parked and attached after the scan. */
  cat_index *pend = NULL;
  char **pend_table = NULL;
  int n_pend = 0;
  while ((rc = kv_be_scan_next(&cat->be, s, &row)) == KV_OK) {
    const kv_cell_view *cell = NULL;
    for (uint32_t i = 0; i < row.n_cells; i++)
      if (row.cells[i].qual_len == 1 && row.cells[i].qual[0] == 'd') cell = &row.cells[i];
    if (!cell || row.key_len == 0) continue;
    char kind = (char)row.key[0];
    if (kind == 'M') {
      rd r = {cell->value, cell->value + cell->value_len, false};
      uint64_t g = get_var(&r);
      if (r.bad) { out = cat_err(err, CAT_ERR_CORRUPT, "corrupt SYSTEM.CATALOG meta row"); break; }
      if (g > cat->next_gen) cat->next_gen = g;
    } else if (kind == 'T') {
      cat_table *t = parse_table(cell->value, cell->value_len);
      if (!t) { out = cat_err(err, CAT_ERR_CORRUPT, "corrupt SYSTEM.CATALOG table row"); break; }
      if (add_table(cat, t)) { free_table(t); out = cat_err(err, CAT_ERR_NOMEM, "out of memory"); break; }
    } else if (kind == 'V') {
      out = cat_view_load(&cat->views, cell->value, cell->value_len, err);
      if (out) break;
    } else if (kind == 'I') {
      cat_index *np = realloc(pend, (size_t)(n_pend + 1) * sizeof *np);
      char **nt = np ? realloc(pend_table, (size_t)(n_pend + 1) * sizeof *nt) : NULL;
      if (np) pend = np;
      if (nt) pend_table = nt;
      if (!np || !nt) { out = cat_err(err, CAT_ERR_NOMEM, "out of memory"); break; }
      if (!parse_index(cell->value, cell->value_len, &pend[n_pend], &pend_table[n_pend])) {
        out = cat_err(err, CAT_ERR_CORRUPT, "corrupt SYSTEM.CATALOG index row");
        break;
      }
      n_pend++;
    } else if (kind == 'S') {
      out = cat_seq_load(cat, cell->value, cell->value_len, err);
      if (out) break;
    } else {
      out = cat_err(err, CAT_ERR_CORRUPT, "unknown SYSTEM.CATALOG row kind 0x%02x", (unsigned)row.key[0]);
      break;
    }
  }
  if (out == CAT_OK && rc != KV_ERR_NOTFOUND) out = kverr(err, rc, "catalog scan");
  kv_be_scan_close(&cat->be, s);
  for (int i = 0; i < n_pend; i++) {
    int ti = out == CAT_OK ? find_table_index(cat, pend_table[i]) : -1;
    cat_table *t = ti >= 0 ? cat->tables[ti] : NULL;
    cat_index *nx = t ? realloc(t->indexes, (size_t)(t->n_indexes + 1) * sizeof *nx) : NULL;
    if (nx) {
      t->indexes = nx;
      t->indexes[t->n_indexes++] = pend[i];
    } else {
      if (out == CAT_OK) out = cat_err(err, t ? CAT_ERR_NOMEM : CAT_ERR_CORRUPT, "index row of unknown table");
      free_index(&pend[i]);
    }
    free(pend_table[i]);
  }
  free(pend);
  free(pend_table);
  for (int i = 0; out == CAT_OK && i < cat->n_tables; i++) {
    cat_table *t = cat->tables[i];
    if (t->generation >= cat->next_gen) cat->next_gen = t->generation + 1;
    for (int j = 0; j < t->n_indexes; j++)
      if (t->indexes[j].generation >= cat->next_gen) cat->next_gen = t->indexes[j].generation + 1;
  }
  return out;
}

/* Drop internal kv tables that no catalog row names (a crash between the two steps of a
** CREATE or a DROP). */
static int drop_orphans(cat_catalog *cat, cat_error *err) {
  int n = kv_be_table_count(&cat->be);
  char **names = calloc((size_t)(n > 0 ? n : 1), sizeof *names);
  if (!names) return cat_err(err, CAT_ERR_NOMEM, "out of memory");
  int k = 0, out = CAT_OK;
  for (int i = 0; i < n; i++) {
    const char *nm = kv_be_table_name(&cat->be, i);
    if (nm && is_internal(nm) && !referenced(cat, nm)) names[k++] = dupstr(nm);
  }
  for (int i = 0; i < k; i++) {
    if (!names[i]) { out = cat_err(err, CAT_ERR_NOMEM, "out of memory"); continue; }
    int rc = kv_be_drop_table(&cat->be, names[i]);
    /* A read-only store keeps its orphans: the catalog ignores them, and the next writable
    ** open drops them. */
    if (rc && rc != KV_ERR_NOTFOUND && rc != KV_ERR_READONLY && out == CAT_OK)
      out = kverr(err, rc, "catalog: dropping an orphaned table");
    free(names[i]);
  }
  free(names);
  return out;
}

int cat_open(kv_db *db, cat_catalog **out, cat_error *err) {
  kv_backend be;
  return cat_open_backend(kv_backend_local_init(&be, db), out, err);
}

int cat_open_backend(const kv_backend *be, cat_catalog **out, cat_error *err) {
  *out = NULL;
  cat_catalog *cat = calloc(1, sizeof *cat);
  if (!cat) return cat_err(err, CAT_ERR_NOMEM, "out of memory");
  cat->be = *be;
  cat->next_gen = 1;
  int rc = kv_be_family_id(&cat->be, CAT_SYSTEM_TABLE, CAT_DEFAULT_FAMILY, &cat->sys_family);
  if (rc == KV_ERR_NOTFOUND) {
    kv_family_options fo;
    memset(&fo, 0, sizeof fo);
    fo.name = CAT_DEFAULT_FAMILY;
    fo.max_versions = 1;
    rc = kv_be_create_table(&cat->be, CAT_SYSTEM_TABLE, &fo, 1, NULL, NULL, 0);
    if (rc == KV_OK)
      rc = kv_be_family_id(&cat->be, CAT_SYSTEM_TABLE, CAT_DEFAULT_FAMILY, &cat->sys_family);
  }
  int crc = rc ? kverr(err, rc, "opening SYSTEM.CATALOG") : load(cat, err);
  if (crc == CAT_OK) crc = cat_view_order(cat, err);
  if (crc == CAT_OK) crc = drop_orphans(cat, err);
  for (int i = 0; crc == CAT_OK && i < cat->n_tables; i++) crc = resolve_ids(cat, cat->tables[i], err);
  for (int i = 0; crc == CAT_OK && i < cat->n_tables; i++) crc = cat_sync_families(cat, cat->tables[i], err);
  for (int i = 0; crc == CAT_OK && i < cat->n_tables; i++) crc = cat_drop_dead_cells(cat, cat->tables[i], err);
  if (crc) { cat_close(cat); return crc; }
  *out = cat;
  return CAT_OK;
}

void cat_close(cat_catalog *cat) {
  if (!cat) return;
  for (int i = 0; i < cat->n_tables; i++) free_table(cat->tables[i]);
  free(cat->tables);
  cat_seqs_free(&cat->seqs);
  cat_view_list_free(&cat->views);
  free(cat);
}

/* ---- CREATE / DROP TABLE ---------------------------------------------------------------- */
/* Add family `name` if absent; returns its index or -1 on OOM / too many. */
static int want_family(cat_table *t, const char *name, const cat_table_def *def) {
  int f = cat_find_family(t, name);
  if (f >= 0) return f;
  if (t->n_families >= (int)KV_MAX_FAMILIES) return -1;
  cat_family *fam = &t->families[t->n_families];
  memset(fam, 0, sizeof *fam);
  fam->name = dupstr(name);
  if (!fam->name) return -1;
  fam->max_versions = def->default_versions > 0 ? def->default_versions : 1;
  fam->ttl_sec = def->ttl_sec;
  for (int i = 0; i < def->n_families; i++)
    if (strcmp(def->families[i].name, name) == 0) {
      if (def->families[i].max_versions > 0) fam->max_versions = def->families[i].max_versions;
      fam->compression = def->families[i].compression;
      fam->block_size = def->families[i].block_size;
    }
  return t->n_families++;
}

#define NAME_LIMIT 200 /* bytes in a table, column or family name */
static bool bad_name(const char *s) { return !s || !*s || strlen(s) > NAME_LIMIT; }

/* The error for a bad name of `what` ("table", "column"): empty or over the limit. */
static int name_err(cat_error *err, const char *what, const char *s) {
  if (!s || !*s) return cat_err(err, CAT_ERR_INVALID, "%s name is empty", what);
  return cat_err(err, CAT_ERR_INVALID, "%s name %.32s... is %zu bytes long; the limit is %d bytes",
                 what, s, strlen(s), NAME_LIMIT);
}

/* Build the in-memory table of a definition (no kv work). */
static int build_table(const cat_table_def *def, uint64_t gen, cat_table **out, cat_error *err) {
  *out = NULL;
  if (bad_name(def->name)) return name_err(err, "table", def->name);
  if (def->n_pk < 1) return cat_err(err, CAT_ERR_INVALID, "table %s has no PRIMARY KEY", def->name);
  if (def->n_columns < 1 || def->n_columns > CAT_MAX_COLUMNS)
    return cat_err(err, CAT_ERR_INVALID, "table %s: %d columns (1..%d allowed)", def->name, def->n_columns, CAT_MAX_COLUMNS);
  for (int i = 0; i < def->n_families; i++) {
    if (bad_name(def->families[i].name)) return name_err(err, "family", def->families[i].name);
    if (def->families[i].name[0] == '_')
      return cat_err(err, CAT_ERR_INVALID, "family name '%s' is reserved (names starting with '_')",
                     def->families[i].name);
  }
  cat_table *t = calloc(1, sizeof *t);
  if (!t) return cat_err(err, CAT_ERR_NOMEM, "out of memory");
  int rc = CAT_OK;
  char nb[300];
  t->name = dupstr(def->name);
  snprintf(nb, sizeof nb, "$t%llu.%s", (unsigned long long)gen, def->name);
  t->kv_name = dupstr(nb);
  t->generation = gen;
  t->immutable_rows = def->immutable_rows;
  t->ttl_sec = def->ttl_sec;
  t->columns = calloc((size_t)def->n_columns, sizeof *t->columns);
  t->families = calloc(KV_MAX_FAMILIES, sizeof *t->families);
  if (!t->name || !t->kv_name || !t->columns || !t->families) { rc = cat_err(err, CAT_ERR_NOMEM, "out of memory"); goto fail; }
  if (want_family(t, CAT_KEY_FAMILY, def) != 0) { rc = cat_err(err, CAT_ERR_NOMEM, "out of memory"); goto fail; }
  t->families[0].max_versions = 1;
  t->next_column_id = 1;
  for (int i = 0; i < def->n_columns; i++) {
    const cat_column_def *cd = &def->columns[i];
    cat_column *c = &t->columns[i];
    t->n_columns = i + 1;
    if (bad_name(cd->name)) { rc = name_err(err, "column", cd->name); goto fail; }
    for (int j = 0; j < i; j++)
      if (strcmp(def->columns[j].name, cd->name) == 0) { rc = cat_err(err, CAT_ERR_EXISTS, "duplicate column %s", cd->name); goto fail; }
    rc = cat_type_validate(&cd->type, err);
    if (rc) goto fail;
    c->name = dupstr(cd->name);
    if (!c->name) { rc = cat_err(err, CAT_ERR_NOMEM, "out of memory"); goto fail; }
    c->type = cd->type;
    c->pk_pos = -1;
    for (int k = 0; k < def->n_pk; k++)
      if (strcmp(def->pk[k], cd->name) == 0) {
        if (c->pk_pos >= 0) { rc = cat_err(err, CAT_ERR_INVALID, "column %s twice in the PRIMARY KEY", cd->name); goto fail; }
        c->pk_pos = k;
        c->desc = def->pk_desc ? def->pk_desc[k] : false;
      }
    if (c->pk_pos >= 0) {
      if (cd->family) { rc = cat_err(err, CAT_ERR_INVALID, "PRIMARY KEY column %s cannot have a family", cd->name); goto fail; }
      c->nullable = cd->null_mode == 1;
      c->family = 0;
    } else {
      const char *fam = cd->family ? cd->family : CAT_DEFAULT_FAMILY;
      if (bad_name(fam)) { rc = name_err(err, "family", fam); goto fail; }
      if (fam[0] == '_') { rc = cat_err(err, CAT_ERR_INVALID, "family name '%s' is reserved (names starting with '_')", fam); goto fail; }
      c->family = want_family(t, fam, def);
      if (c->family < 0) { rc = cat_err(err, CAT_ERR_INVALID, "too many families (at most %u)", KV_MAX_FAMILIES); goto fail; }
      c->nullable = cd->null_mode != 2;
      c->id = def->column_ids && def->column_ids[i] ? def->column_ids[i] : t->next_column_id;
      for (int j = 0; j < i; j++)
        if (t->columns[j].pk_pos < 0 && t->columns[j].id == c->id) { rc = cat_err(err, CAT_ERR_INVALID, "column %s: column id %u used twice", cd->name, (unsigned)c->id); goto fail; }
      if (c->id >= t->next_column_id) {
        if (c->id >= CAT_MAX_COLUMN_ID) { rc = cat_err(err, CAT_ERR_INVALID, "column %s: column id %u over %d", cd->name, (unsigned)c->id, CAT_MAX_COLUMN_ID - 1); goto fail; }
        t->next_column_id = (uint16_t)(c->id + 1);
      }
    }
  }
  for (int k = 0; k < def->n_pk; k++) {
    bool found = false;
    for (int i = 0; i < def->n_columns; i++) found |= strcmp(def->pk[k], def->columns[i].name) == 0;
    if (!found) { rc = cat_err(err, CAT_ERR_INVALID, "PRIMARY KEY column %s is not a column", def->pk[k]); goto fail; }
  }
  for (int i = 0; i < def->n_families; i++)
    if (want_family(t, def->families[i].name, def) < 0) { rc = cat_err(err, CAT_ERR_INVALID, "too many families"); goto fail; }
  if (def->row_timestamp) {
    rc = cat_row_ts_mark(t, def->row_timestamp, err);
    if (rc) goto fail;
  }
  if (!derive(t)) { rc = cat_err(err, CAT_ERR_INVALID, "table %s: bad PRIMARY KEY or ROW_TIMESTAMP", def->name); goto fail; }
  rc = cat_regions_from_def(t, def, err);
  if (rc) goto fail;
  if (def->next_column_id > t->next_column_id) t->next_column_id = def->next_column_id;
  t->row_cover = calloc(1, sizeof *t->row_cover);
  if (!t->row_cover) { rc = cat_err(err, CAT_ERR_NOMEM, "out of memory"); goto fail; }
  for (int i = 0; i < t->n_columns && !def->no_row_cover; i++) /* an empty table: every row */
    if (t->columns[i].pk_pos < 0) *t->row_cover |= 1ull << t->columns[i].family;
  *out = t;
  return CAT_OK;
fail:
  free_table(t);
  return rc;
}

int cat_create_table(cat_catalog *cat, const cat_table_def *def, const cat_table **out,
                     cat_error *err) {
  if (out) *out = NULL;
  if (def->name && find_table_index(cat, def->name) >= 0)
    return cat_err(err, CAT_ERR_EXISTS, "table %s already exists", def->name);
  if (def->name && cat_find_view(cat, def->name))
    return cat_err(err, CAT_ERR_EXISTS, "a view named %s exists", def->name);
  uint64_t gen = cat->next_gen;
  cat_table *t;
  int rc = build_table(def, gen, &t, err);
  if (rc) return rc;
  kv_family_options fo[KV_MAX_FAMILIES];
  for (int i = 0; i < t->n_families; i++) {
    fo[i].name = t->families[i].name;
    fo[i].max_versions = t->families[i].max_versions;
    fo[i].ttl_sec = t->families[i].ttl_sec;
    fo[i].compression = t->families[i].compression;
    fo[i].block_size = t->families[i].block_size;
  }
  /* Step 1: the kv table (an orphan until step 2 commits). */
  cat_region_keys rk;
  if (!cat_region_keys_of(t, &rk)) {
    free_table(t);
    return cat_err(err, CAT_ERR_NOMEM, "out of memory");
  }
  int krc = kv_be_create_table(&cat->be, t->kv_name, fo, t->n_families,
                               (const uint8_t *const *)rk.keys, rk.lens, rk.n);
  cat_region_keys_free(&rk);
  if (krc) { free_table(t); return kverr(err, krc, "CREATE TABLE"); }
  /* Step 2: the catalog rows, atomically; the meta row first, so that a backend that applies
     a batch row by row (kv_backend_caps.atomicity, docs/BACKEND.md) and fails between them
     leaves a used generation and an orphan, never a table row whose kv table the failure
     path below drops. */
  buf k = {0}, v = {0};
  kv_batch *b = kv_batch_new();
  table_key(&k, t->name);
  table_record(t, &v);
  rc = b ? batch_meta(cat, b, gen + 1, err) : cat_err(err, CAT_ERR_NOMEM, "out of memory");
  if (!rc) rc = batch_put_row(cat, b, &k, &v, err);
  if (!rc) rc = commit(cat, b, err);
  kv_batch_free(b);
  free(k.p);
  free(v.p);
  if (!rc) {
    cat->next_gen = gen + 1;
    rc = resolve_ids(cat, t, err);
    if (!rc && add_table(cat, t)) rc = cat_err(err, CAT_ERR_NOMEM, "out of memory");
    if (rc) free_table(t);
    else if (out) *out = t;
    return rc;
  }
  kv_be_drop_table(&cat->be, t->kv_name); /* best effort; else the next open drops the orphan */
  free_table(t);
  return rc;
}

int cat_drop_table(cat_catalog *cat, const char *name, cat_error *err) {
  int ti = find_table_index(cat, name);
  if (ti < 0) return cat_err(err, CAT_ERR_NOTFOUND, "table %s does not exist", name);
  cat_table *t = cat->tables[ti];
  kv_batch *b = kv_batch_new();
  buf k = {0};
  int rc = b ? CAT_OK : cat_err(err, CAT_ERR_NOMEM, "out of memory");
  for (int i = 0; !rc && i < t->n_indexes; i++) {
    index_key(&k, t->name, t->indexes[i].name);
    rc = batch_delete_row(cat, b, &k, err);
  }
  if (!rc) {
    table_key(&k, t->name);
    rc = batch_delete_row(cat, b, &k, err);
  }
  if (!rc) rc = commit(cat, b, err);
  kv_batch_free(b);
  free(k.p);
  if (rc) return rc;
  /* Committed: the catalog no longer names them. Once that is durable, a crash leaves only
     orphans; if it cannot be made durable, the kv tables stay (orphans if it did reach the
     disk, dropped at the next open; the table again if it did not). */
  int drc = catalog_durable(cat, err);
  memmove(&cat->tables[ti], &cat->tables[ti + 1], (size_t)(cat->n_tables - ti - 1) * sizeof *cat->tables);
  cat->n_tables--;
  if (drc) {
    free_table(t);
    return drc;
  }
  for (int i = 0; !rc && i < t->n_indexes; i++) {
    int krc = kv_be_drop_table(&cat->be, t->indexes[i].kv_name);
    if (krc && krc != KV_ERR_NOTFOUND) rc = kverr(err, krc, "DROP TABLE (index table)");
  }
  int krc = kv_be_drop_table(&cat->be, t->kv_name);
  if (!rc && krc && krc != KV_ERR_NOTFOUND) rc = kverr(err, krc, "DROP TABLE");
  free_table(t);
  return rc;
}

/* ---- indexes ------------------------------------------------------------------------- */
static int write_index_row(cat_catalog *cat, const cat_table *t, const cat_index *x, uint64_t meta_gen,
                           cat_error *err) {
  buf k = {0}, v = {0};
  kv_batch *b = kv_batch_new();
  index_key(&k, t->name, x->name);
  index_record(t, x, &v);
  /* the meta row first (row by row, a failure between them leaves a used generation:
     cat_create_table) */
  int rc = b ? CAT_OK : cat_err(err, CAT_ERR_NOMEM, "out of memory");
  if (!rc && meta_gen) rc = batch_meta(cat, b, meta_gen, err);
  if (!rc) rc = batch_put_row(cat, b, &k, &v, err);
  if (!rc) rc = commit(cat, b, err);
  kv_batch_free(b);
  free(k.p);
  free(v.p);
  return rc;
}

int cat_create_index(cat_catalog *cat, const char *table, const cat_index_def *def,
                     cat_error *err) {
  int ti = find_table_index(cat, table);
  if (ti < 0) return cat_err(err, CAT_ERR_NOTFOUND, "table %s does not exist", table);
  cat_table *t = cat->tables[ti];
  if (bad_name(def->name) || def->n_keys < 1 || def->n_keys > CAT_MAX_COLUMNS ||
      def->n_include < 0 || def->n_include > CAT_MAX_COLUMNS)
    return cat_err(err, CAT_ERR_INVALID, "bad index definition");
  if (cat_find_index(t, def->name)) return cat_err(err, CAT_ERR_EXISTS, "index %s already exists on %s", def->name, table);
  for (int i = 0; i < def->n_include; i++)
    if (cat_find_column(t, def->include[i]) < 0)
      return cat_err(err, CAT_ERR_NOTFOUND, "INCLUDE column %s is not a column of %s", def->include[i], table);
  cat_index x;
  memset(&x, 0, sizeof x);
  uint64_t gen = cat->next_gen;
  char nb[500];
  snprintf(nb, sizeof nb, "$i%llu.%s.%s", (unsigned long long)gen, table, def->name);
  x.name = dupstr(def->name);
  x.kv_name = dupstr(nb);
  x.generation = gen;
  x.state = CAT_INDEX_BUILDING;
  x.n_keys = def->n_keys;
  x.keys = calloc((size_t)def->n_keys, sizeof *x.keys);
  x.key_desc = calloc((size_t)def->n_keys, sizeof *x.key_desc);
  x.n_include = def->n_include;
  x.include = calloc((size_t)(def->n_include ? def->n_include : 1), sizeof *x.include);
  bool oom = !x.name || !x.kv_name || !x.keys || !x.key_desc || !x.include;
  for (int i = 0; !oom && i < def->n_keys; i++) {
    x.keys[i] = dupstr(def->keys[i]);
    x.key_desc[i] = def->key_desc ? def->key_desc[i] : false;
    oom = !x.keys[i];
  }
  for (int i = 0; !oom && i < def->n_include; i++) oom = !(x.include[i] = dupstr(def->include[i]));
  cat_index *nx = oom ? NULL : realloc(t->indexes, (size_t)(t->n_indexes + 1) * sizeof *nx);
  if (!nx) { free_index(&x); return cat_err(err, CAT_ERR_NOMEM, "out of memory"); }
  t->indexes = nx;
  kv_family_options fo[2];
  memset(fo, 0, sizeof fo);
  fo[0].name = CAT_KEY_FAMILY;
  fo[1].name = CAT_DEFAULT_FAMILY;
  fo[0].ttl_sec = fo[1].ttl_sec = t->ttl_sec;
  x.salt_buckets = def->salt_buckets;
  cat_table st = {0}; /* the bucket boundaries of a salted index (catalog/cat_regions.h) */
  st.salt_buckets = def->salt_buckets;
  cat_region_keys rk;
  if (def->salt_buckets < 0 || def->salt_buckets > CAT_SALT_MAX) {
    free_index(&x);
    return cat_err(err, CAT_ERR_INVALID, "index %s: SALT_BUCKETS %d is outside 1..%d", def->name,
                   def->salt_buckets, CAT_SALT_MAX);
  }
  if (!cat_region_keys_of(&st, &rk)) {
    free_index(&x);
    return cat_err(err, CAT_ERR_NOMEM, "out of memory");
  }
  int krc = kv_be_create_table(&cat->be, x.kv_name, fo, 2, (const uint8_t *const *)rk.keys,
                               rk.lens, rk.n);
  cat_region_keys_free(&rk);
  if (krc) { free_index(&x); return kverr(err, krc, "CREATE INDEX"); }
  int rc = write_index_row(cat, t, &x, gen + 1, err);
  if (!rc) {
    cat->next_gen = gen + 1;
    t->indexes[t->n_indexes++] = x;
    return resolve_ids(cat, t, err);
  }
  kv_be_drop_table(&cat->be, x.kv_name);
  free_index(&x);
  return rc;
}

int cat_drop_index(cat_catalog *cat, const char *table, const char *index, cat_error *err) {
  int ti = find_table_index(cat, table);
  cat_table *t = ti >= 0 ? cat->tables[ti] : NULL;
  int xi = -1;
  for (int i = 0; t && i < t->n_indexes; i++)
    if (strcmp(t->indexes[i].name, index) == 0) xi = i;
  if (xi < 0) return cat_err(err, CAT_ERR_NOTFOUND, "index %s on %s does not exist", index, table);
  buf k = {0};
  kv_batch *b = kv_batch_new();
  index_key(&k, table, index);
  int rc = b ? batch_delete_row(cat, b, &k, err) : cat_err(err, CAT_ERR_NOMEM, "out of memory");
  if (!rc) rc = commit(cat, b, err);
  kv_batch_free(b);
  free(k.p);
  if (rc) return rc;
  int drc = catalog_durable(cat, err); /* as in cat_drop_table */
  cat_index x = t->indexes[xi];
  memmove(&t->indexes[xi], &t->indexes[xi + 1], (size_t)(t->n_indexes - xi - 1) * sizeof x);
  t->n_indexes--;
  if (drc) {
    free_index(&x);
    return drc;
  }
  int krc = kv_be_drop_table(&cat->be, x.kv_name);
  free_index(&x);
  return krc && krc != KV_ERR_NOTFOUND ? kverr(err, krc, "DROP INDEX") : CAT_OK;
}

int cat_set_index_state(cat_catalog *cat, const char *table, const char *index, int state,
                        cat_error *err) {
  if (state < CAT_INDEX_BUILDING || state > CAT_INDEX_DISABLED)
    return cat_err(err, CAT_ERR_INVALID, "bad index state %d", state);
  int ti = find_table_index(cat, table);
  cat_table *t = ti >= 0 ? cat->tables[ti] : NULL;
  for (int i = 0; t && i < t->n_indexes; i++)
    if (strcmp(t->indexes[i].name, index) == 0) {
      cat_index x = t->indexes[i];
      x.state = state;
      int rc = write_index_row(cat, t, &x, 0, err);
      if (!rc) t->indexes[i].state = state;
      return rc;
    }
  return cat_err(err, CAT_ERR_NOTFOUND, "index %s on %s does not exist", index, table);
}

/* ---- lookups --------------------------------------------------------------------------- */
const cat_table *cat_find_table(const cat_catalog *cat, const char *name) {
  int i = find_table_index(cat, name);
  return i < 0 ? NULL : cat->tables[i];
}
const cat_table *cat_find_table_folded(const cat_catalog *cat, const char *name) {
  const cat_table *t = cat_find_table(cat, name);
  if (t || !name) return t;
  char up[512];
  size_t n = strlen(name);
  if (n >= sizeof up) return NULL;
  for (size_t k = 0; k <= n; k++) up[k] = (char)toupper((unsigned char)name[k]);
  return cat_find_table(cat, up);
}
int cat_table_count(const cat_catalog *cat) { return cat->n_tables; }
const cat_table *cat_table_at(const cat_catalog *cat, int i) {
  return i < 0 || i >= cat->n_tables ? NULL : cat->tables[i];
}

/* ---- for catalog/cat_salvage.c and catalog/cat_alter.c (catalog/catalog_int.h) ------------ */
cat_table *cat_table_copy(const cat_table *t) {
  buf b = {0};
  table_record(t, &b);
  cat_table *c = b.oom ? NULL : parse_table(b.p, b.len);
  free(b.p);
  return c;
}
bool cat_table_derive(cat_table *t) {
  free(t->pk);
  free(t->key_cols);
  t->pk = NULL;
  t->key_cols = NULL;
  return derive(t);
}
kv_backend *cat_backend(cat_catalog *cat) { return &cat->be; }
int cat_foreign_table(const cat_catalog *c, const char *name, char *msg, size_t cap) {
  return kv_be_foreign_table((kv_backend *)&c->be, name, msg, cap); } /* be: a copy, unchanged */
cat_seq_set *cat_seqs(cat_catalog *cat) { return &cat->seqs; }
uint32_t cat_sys_family(const cat_catalog *cat) { return cat->sys_family; }
int cat_kv_error(cat_error *err, int kv_code, const char *what) { return kverr(err, kv_code, what); }
int cat_replace_table(cat_catalog *cat, cat_table *nt, cat_error *err) {
  return cat_replace_table_with(cat, nt, 0, NULL, NULL, NULL, NULL, err);
}
int cat_replace_table_with(cat_catalog *cat, cat_table *nt, int n, const uint8_t *const *keys,
                           const size_t *klen, const uint8_t *const *vals, const size_t *vlen,
                           cat_error *err) {
  int ti = find_table_index(cat, nt->name);
  if (ti < 0) {
    int rc = cat_err(err, CAT_ERR_NOTFOUND, "table %s does not exist", nt->name);
    free_table(nt);
    return rc;
  }
  cat_table *old = cat->tables[ti];
  buf k = {0}, v = {0};
  kv_batch *b = kv_batch_new();
  table_key(&k, nt->name);
  table_record(nt, &v);
  int rc = b ? batch_put_row(cat, b, &k, &v, err) : cat_err(err, CAT_ERR_NOMEM, "out of memory");
  for (int i = 0; !rc && i < n; i++) { /* the rows committed with it (a view's, cat_view.c) */
    int krc = kv_batch_put(b, cat->sys_family, keys[i], klen[i], "d", 1, KV_TS_NOW, vals[i], vlen[i]);
    if (krc) rc = kverr(err, krc, "catalog batch");
  }
  if (!rc) rc = commit(cat, b, err);
  kv_batch_free(b);
  free(k.p);
  free(v.p);
  if (rc) {
    free_table(nt);
    return rc;
  }
  nt->indexes = old->indexes; /* the index rows are keyed by the table's name: unchanged */
  nt->n_indexes = old->n_indexes;
  old->indexes = NULL;
  old->n_indexes = 0;
  cat->tables[ti] = nt;
  free_table(old);
  return resolve_ids(cat, nt, err);
}
int cat_row_cover_lose(cat_catalog *cat, const cat_table *t, uint64_t families,
                       cat_error *err) {
  int ti = find_table_index(cat, t->name);
  if (ti < 0) return cat_err(err, CAT_ERR_NOTFOUND, "table %s does not exist", t->name);
  cat_table *ct = cat->tables[ti];
  uint64_t was = cat_row_cover_of(ct), now = was & ~families;
  if (now == was) return CAT_OK;
  buf k = {0}, v = {0};
  *ct->row_cover = now; /* the record as it is to be; restored if it cannot be committed */
  table_key(&k, ct->name);
  table_record(ct, &v);
  int rc = k.oom || v.oom ? cat_err(err, CAT_ERR_NOMEM, "out of memory")
                          : cat_commit_rows(cat, 1, (const uint8_t *const *)&k.p, &k.len,
                                            (const uint8_t *const *)&v.p, &v.len, err);
  free(k.p);
  free(v.p);
  if (rc) *ct->row_cover = was;
  else cat->cover_epoch++;
  return rc;
}
uint64_t cat_row_cover_epoch(const cat_catalog *cat) { return cat->cover_epoch; }
cat_view_list *cat_views_of(cat_catalog *cat) { return &cat->views; }
const cat_view_list *cat_views_get(const cat_catalog *cat) { return &cat->views; }
int cat_commit_rows(cat_catalog *cat, int n, const uint8_t *const *keys, const size_t *klen,
                    const uint8_t *const *vals, const size_t *vlen, cat_error *err) {
  kv_batch *b = kv_batch_new();
  int rc = b ? CAT_OK : cat_err(err, CAT_ERR_NOMEM, "out of memory");
  for (int i = 0; !rc && i < n; i++) {
    int krc = vals[i] ? kv_batch_put(b, cat->sys_family, keys[i], klen[i], "d", 1, KV_TS_NOW,
                                     vals[i], vlen[i])
                      : kv_batch_delete(b, cat->sys_family, KV_DELETE_COLUMN, keys[i], klen[i],
                                        "d", 1, KV_TS_NOW);
    if (krc) rc = kverr(err, krc, "catalog batch");
  }
  if (!rc) rc = commit(cat, b, err);
  kv_batch_free(b);
  return rc;
}
cat_table *cat_table_record_parse(const uint8_t *p, size_t n) { return parse_table(p, n); }
bool cat_index_record_parse(const uint8_t *p, size_t n, cat_index *x, char **table_name) {
  return parse_index(p, n, x, table_name);
}
void cat_table_free(cat_table *t) { free_table(t); }
void cat_index_free(cat_index *x) { free_index(x); }
