/*
** catalog/cat_alter.c: ALTER TABLE in the catalog (cat_alter_table; contract in
** catalog/catalog.h), the check at open that the store's family options are the
** catalog's (cat_sync_families) and the list of dropped columns' qualifiers a major
** compaction removes (cat_drop_dead_cells; both catalog/catalog_int.h), and the ids a
** view's own columns take from the table (cat_table_take_ids, catalog/cat_view.c's).
**
** An ALTER works on a copy of the table: drops, adds and options are applied to the copy,
** every check is made there, the store's families are changed (kv_alter_table: new
** families, new options), and one batch commits the copy's record; only then does the copy
** take the table's place. Any failure before the commit leaves the table as it was (a
** family kv_alter_table added stays empty and unused: a later ALTER that names it takes it).
** Column ids come from the table's next_column_id and are never given twice, which is
** what keeps a dropped column's cells from being read as a new column of the same name
** (Phoenix's column encoding does the same with its column qualifiers).
** Not here: SQL, the checks that need the planner (indexes over a dropped column: exec/).
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalog/catalog_int.h"

/* The kv options of every family of t, into fo[0..t->n_families). */
static void kv_options_of(const cat_table *t, kv_family_options *fo) {
  for (int i = 0; i < t->n_families; i++) {
    const cat_family *f = &t->families[i];
    memset(&fo[i], 0, sizeof fo[i]);
    fo[i].name = f->name;
    fo[i].max_versions = f->max_versions;
    fo[i].ttl_sec = f->ttl_sec;
    fo[i].compression = f->compression;
    fo[i].block_size = f->block_size;
  }
}

/* Remove column `name` from t (CAT_ERR_NOTFOUND / CAT_ERR_INVALID for a key column). */
static int drop_column(cat_table *t, const char *name, cat_error *err) {
  int c = cat_find_column(t, name);
  if (c < 0) return cat_err(err, CAT_ERR_NOTFOUND, "table %s has no column %s", t->name, name);
  if (t->columns[c].pk_pos >= 0)
    return cat_err(err, CAT_ERR_INVALID,
                   "column %s is in the PRIMARY KEY of %s: a key column cannot be dropped "
                   "(it is part of every row key)", name, t->name);
  /* a row whose only cells in the family were this column's has none left (the cells of a
     dropped column are read by no column): the family no longer covers every row */
  if (t->row_cover) *t->row_cover &= ~(1ull << t->columns[c].family);
  free(t->columns[c].name);
  memmove(&t->columns[c], &t->columns[c + 1], (size_t)(t->n_columns - c - 1) * sizeof *t->columns);
  t->n_columns--;
  return CAT_OK;
}

/* The index of family `name` in t, added (VERSIONS 1, LZ4, default BLOCKSIZE, the table's
** TTL) when absent; -1 with err set when it cannot be. t->families has KV_MAX_FAMILIES
** slots. */
static int family_for(cat_table *t, const char *name, cat_error *err) {
  for (int i = 0; i < t->n_families; i++)
    if (strcmp(t->families[i].name, name) == 0) return i;
  if (name[0] == '_')
    return cat_err(err, CAT_ERR_INVALID, "family name '%s' is reserved (names starting with '_')",
                   name), -1;
  if (strlen(name) > 200)
    return cat_err(err, CAT_ERR_INVALID, "family name %.32s... is too long", name), -1;
  if (t->n_families >= (int)KV_MAX_FAMILIES)
    return cat_err(err, CAT_ERR_INVALID, "table %s: too many families (at most %u)", t->name,
                   KV_MAX_FAMILIES), -1;
  cat_family *f = &t->families[t->n_families];
  memset(f, 0, sizeof *f);
  f->name = strdup(name);
  if (!f->name) return cat_err(err, CAT_ERR_NOMEM, "out of memory"), -1;
  f->max_versions = 1;
  f->ttl_sec = t->ttl_sec;
  return t->n_families++;
}

/* Append non-key column cd to t. */
static int add_column(cat_table *t, const cat_column_def *cd, cat_error *err) {
  if (!cd->name || !*cd->name || strlen(cd->name) > 200)
    return cat_err(err, CAT_ERR_INVALID, "an added column needs a name of 1..200 bytes");
  if (cat_find_column(t, cd->name) >= 0)
    return cat_err(err, CAT_ERR_EXISTS, "table %s already has a column %s", t->name, cd->name);
  if (cd->null_mode == 2)
    return cat_err(err, CAT_ERR_INVALID,
                   "column %s: a column added to an existing table cannot be NOT NULL (the rows "
                   "already there have no value for it; Phoenix refuses it too)", cd->name);
  if (t->n_columns >= CAT_MAX_COLUMNS)
    return cat_err(err, CAT_ERR_INVALID, "table %s: too many columns (at most %d)", t->name,
                   CAT_MAX_COLUMNS);
  if (t->next_column_id >= CAT_MAX_COLUMN_ID || t->next_column_id == 0)
    return cat_err(err, CAT_ERR_INVALID,
                   "table %s: every column id (1..%d) has been given: recreate the table",
                   t->name, CAT_MAX_COLUMN_ID - 1);
  int rc = cat_type_validate(&cd->type, err);
  if (rc) return rc;
  int fam = family_for(t, cd->family ? cd->family : CAT_DEFAULT_FAMILY, err);
  if (fam < 0) return err ? err->code : CAT_ERR_INVALID;
  cat_column *nc = realloc(t->columns, (size_t)(t->n_columns + 1) * sizeof *nc);
  if (!nc) return cat_err(err, CAT_ERR_NOMEM, "out of memory");
  t->columns = nc;
  cat_column *c = &t->columns[t->n_columns];
  memset(c, 0, sizeof *c);
  c->name = strdup(cd->name);
  if (!c->name) return cat_err(err, CAT_ERR_NOMEM, "out of memory");
  c->type = cd->type;
  c->nullable = true;
  c->pk_pos = -1;
  c->family = fam;
  c->id = t->next_column_id++;
  t->n_columns++;
  return CAT_OK;
}

/* Apply the family options and the table options of def to t. */
static int set_options(cat_table *t, const cat_alter_def *def, cat_error *err) {
  for (int i = 0; i < def->n_families; i++) {
    const cat_family_set *fs = &def->families[i];
    int f = cat_find_family(t, fs->name);
    if (f < 0 || f == 0)
      return cat_err(err, CAT_ERR_NOTFOUND, "table %s has no family %s", t->name, fs->name);
    if (fs->max_versions > 0) t->families[f].max_versions = fs->max_versions;
    if (fs->compression >= 0) t->families[f].compression = fs->compression;
    if (fs->block_size > 0) t->families[f].block_size = fs->block_size;
  }
  if (def->ttl_sec >= 0) {
    /* a family kept its cover through updates that left an older cell of the row there
       (exec/write.c cover_check, never while the table has a TTL): under a TTL that cell
       may expire before the row's newer marker, so the row cover cannot be trusted */
    if (def->ttl_sec > 0 && t->ttl_sec == 0 && t->row_cover) *t->row_cover = 0;
    t->ttl_sec = def->ttl_sec;
    for (int i = 0; i < t->n_families; i++) t->families[i].ttl_sec = def->ttl_sec;
  }
  if (def->immutable_rows >= 0) t->immutable_rows = def->immutable_rows != 0;
  return CAT_OK;
}

/* Do the kv families of nt differ from those of the old table t (new ones, options)? */
static bool families_changed(const cat_table *t, const cat_table *nt) {
  if (nt->n_families != t->n_families) return true;
  for (int i = 0; i < t->n_families; i++) {
    const cat_family *a = &t->families[i], *b = &nt->families[i];
    if (a->max_versions != b->max_versions || a->ttl_sec != b->ttl_sec ||
        a->compression != b->compression || a->block_size != b->block_size)
      return true;
  }
  return false;
}

/* cat_alter_table with the families new_fams[0..n_new) created too (those t lacks). */
static int alter(cat_catalog *cat, const char *name, const cat_alter_def *def,
                 const char *const *new_fams, int n_new, cat_error *err) {
  const cat_table *t = name ? cat_find_table(cat, name) : NULL;
  if (!t) return cat_err(err, CAT_ERR_NOTFOUND, "table %s does not exist", name ? name : "?");
  cat_table *nt = cat_table_copy(t);
  cat_family *fams = nt ? realloc(nt->families, KV_MAX_FAMILIES * sizeof *fams) : NULL;
  if (!fams) {
    cat_table_free(nt);
    return cat_err(err, CAT_ERR_NOMEM, "out of memory");
  }
  nt->families = fams;
  int rc = CAT_OK;
  for (int i = 0; rc == CAT_OK && i < def->n_drop; i++) rc = drop_column(nt, def->drop[i], err);
  for (int i = 0; rc == CAT_OK && i < def->n_add; i++) rc = add_column(nt, &def->add[i], err);
  for (int i = 0; rc == CAT_OK && i < n_new; i++)
    if (family_for(nt, new_fams[i], err) < 0) rc = err ? err->code : CAT_ERR_INVALID;
  if (rc == CAT_OK) rc = set_options(nt, def, err);
  if (rc == CAT_OK && !cat_table_derive(nt))
    rc = cat_err(err, CAT_ERR_NOMEM, "out of memory");
  if (rc == CAT_OK && families_changed(t, nt)) {
    kv_family_options fo[KV_MAX_FAMILIES];
    kv_options_of(nt, fo);
    int krc = kv_be_alter_table(cat_backend(cat), nt->kv_name, fo, nt->n_families);
    if (krc) rc = cat_kv_error(err, krc, "ALTER TABLE");
  }
  if (rc == CAT_OK) rc = cat_replace_table(cat, nt, err); /* the commit */
  else cat_table_free(nt);
  if (rc == CAT_OK && def->n_drop > 0) rc = cat_drop_dead_cells(cat, nt, err);
  return rc;
}

int cat_alter_table(cat_catalog *cat, const char *name, const cat_alter_def *def,
                    cat_error *err) {
  return alter(cat, name, def, NULL, 0, err);
}

int cat_add_families(cat_catalog *cat, const char *name, const char *const *families, int n,
                     cat_error *err) {
  cat_alter_def def;
  memset(&def, 0, sizeof def);
  def.ttl_sec = -1;
  def.immutable_rows = -1;
  return alter(cat, name, &def, families, n, err);
}

int cat_drop_dead_cells(cat_catalog *cat, const cat_table *t, cat_error *err) {
  int n = t->next_column_id > 1 ? t->next_column_id - 1 : 0;
  bool *live = calloc((size_t)n + 2, sizeof *live);
  uint8_t (*q)[2] = malloc(((size_t)n + 1) * sizeof *q);
  const uint8_t **qp = malloc(((size_t)n + 1) * sizeof *qp);
  uint32_t *len = malloc(((size_t)n + 1) * sizeof *len);
  int rc = live && q && qp && len ? CAT_OK : cat_err(err, CAT_ERR_NOMEM, "out of memory");
  uint32_t nd = 0;
  for (int i = 0; rc == CAT_OK && i < t->n_columns; i++)
    if (t->columns[i].pk_pos < 0 && t->columns[i].id <= n) live[t->columns[i].id] = true;
  if (rc == CAT_OK) cat_view_live_ids(cat, t->name, live, n + 1); /* views' own columns */
  for (int id = 1; rc == CAT_OK && id <= n; id++) {
    if (live[id]) continue;
    len[nd] = (uint32_t)cat_column_qualifier((uint16_t)id, q[nd]);
    qp[nd] = q[nd];
    nd++;
  }
  for (int f = 1; rc == CAT_OK && f < t->n_families; f++) { /* not "_k": it holds no column */
    int krc = kv_be_set_dropped_qualifiers(cat_backend(cat), t->families[f].kv_id, qp, len, nd);
    if (krc) rc = cat_kv_error(err, krc, "catalog: dropped columns of table");
  }
  free(live);
  free(q);
  free(qp);
  free(len);
  return rc;
}

int cat_sync_families(cat_catalog *cat, const cat_table *t, cat_error *err) {
  bool differ = false;
  for (int i = 0; i < t->n_families && !differ; i++) {
    const cat_family *f = &t->families[i];
    kv_family_options o;
    if (kv_be_family_info(cat_backend(cat), f->kv_id, &o) != KV_OK) return CAT_OK; /* resolve_ids says */
    uint32_t bs = f->block_size ? f->block_size : KV_DEFAULT_BLOCK_SIZE;
    differ = o.max_versions != f->max_versions || o.ttl_sec != f->ttl_sec ||
             o.compression != f->compression || o.block_size != bs;
  }
  if (!differ) return CAT_OK;
  kv_family_options fo[KV_MAX_FAMILIES];
  kv_options_of(t, fo);
  int krc = kv_be_alter_table(cat_backend(cat), t->kv_name, fo, t->n_families);
  if (krc == KV_ERR_READONLY) return CAT_OK; /* a reader: the writer's next open does it */
  return krc ? cat_kv_error(err, krc, "catalog: family options of table") : CAT_OK;
}

/* Columns of a view's own (catalog/cat_view.c) take ids and maybe families of t: the copy
** of t they need, the store's new families made first, as ALTER TABLE ADD does. */
int cat_table_take_ids(cat_catalog *cat, const cat_table *t, const char *const *families, int n,
                       uint16_t *ids, int *family_index, cat_table **out, cat_error *err) {
  *out = NULL;
  if (n > CAT_MAX_COLUMN_ID - (int)t->next_column_id || t->next_column_id == 0)
    return cat_err(err, CAT_ERR_INVALID,
                   "table %s: every column id (1..%d) has been given: recreate the table",
                   t->name, CAT_MAX_COLUMN_ID - 1);
  cat_table *nt = cat_table_copy(t);
  cat_family *room = nt ? realloc(nt->families, KV_MAX_FAMILIES * sizeof *room) : NULL;
  if (room) nt->families = room;
  int rc = room ? CAT_OK : cat_err(err, CAT_ERR_NOMEM, "out of memory");
  for (int i = 0; rc == CAT_OK && i < n; i++) {
    family_index[i] = family_for(nt, families[i] ? families[i] : CAT_DEFAULT_FAMILY, err);
    if (family_index[i] < 0) rc = err ? err->code : CAT_ERR_INVALID;
    ids[i] = nt->next_column_id++;
  }
  if (rc == CAT_OK && nt->n_families != t->n_families) { /* new families only */
    kv_family_options opts[KV_MAX_FAMILIES];
    kv_options_of(nt, opts);
    int krc = kv_be_alter_table(cat_backend(cat), nt->kv_name, opts, nt->n_families);
    if (krc) rc = cat_kv_error(err, krc, "CREATE VIEW / ALTER VIEW");
  }
  if (rc) {
    cat_table_free(nt);
    return rc;
  }
  *out = nt;
  return CAT_OK;
}
