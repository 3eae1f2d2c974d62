/*
** kv/db/db_ddl.c: tables and column families (kv_create_table, kv_drop_table, kv_family_id,
** kv_alter_table, kv_table_families, kv_table_count, kv_table_name, kv_family_info,
** kv_family_set_dropped_qualifiers), the planner's statistics (kv_family_get_stats; the
** estimates of a range are kv/db/db_estimate.c) and block listing (kv_family_blocks).
** DDL takes the writer role, so it never races a commit, flush or compaction, and is one
** synced MANIFEST record before it takes effect.
** Family ids come from the MANIFEST's next_family_id and are never reused. A table's
** TABLEINFO file (kv/db/manifest.h) is written before its MANIFEST record and removed by DROP.
** Not here: opening (kv/db/db_open.c), reads (kv/scan/scan.c).
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kv/db/db_impl.h"
#include "kv/sf/sf_int.h"
#include "kv/util/status.h"

#define PATH_CAP 4096 /* bytes for any path built here */
#define MAX_BLOCK_SIZE (64u << 20) /* largest BLOCKSIZE accepted */

static const kv_table_meta *find_table(kv_db *db, const char *name) {
  for (uint32_t t = 0; t < db->ver.n_tables; t++)
    if (strcmp(db->ver.tables[t].name, name) == 0) return &db->ver.tables[t];
  return NULL;
}

/* Check the family options of kv_create_table (what = "kv_create_table") or of
** kv_alter_table. */
static int check_families(const char *what, const char *name, const kv_family_options *fams,
                          int n) {
  if (n < 1 || !fams)
    return kv_error(KV_ERR_INVALID, "%s: table '%s' needs at least one family", what, name);
  if ((unsigned)n > KV_MAX_FAMILIES)
    return kv_error(KV_ERR_INVALID, "%s: table '%s' has %d families, over the maximum of %u",
                    what, name, n, KV_MAX_FAMILIES);
  for (int i = 0; i < n; i++) {
    const kv_family_options *f = &fams[i];
    if (!f->name || !f->name[0])
      return kv_error(KV_ERR_INVALID, "%s: family %d of '%s' has an empty name", what,
                      i, name);
    if (strlen(f->name) > KV_MAX_NAME)
      return kv_error(KV_ERR_TOOBIG,
                      "%s: family name of %zu bytes is over the maximum of %u", what,
                      strlen(f->name), KV_MAX_NAME);
    for (int j = 0; j < i; j++)
      if (strcmp(fams[j].name, f->name) == 0)
        return kv_error(KV_ERR_INVALID, "%s: duplicate family name '%s' in '%s'", what,
                        f->name, name);
    if (f->max_versions < 0)
      return kv_error(KV_ERR_INVALID, "%s: family '%s': VERSIONS %d < 1", what,
                      f->name, f->max_versions);
    if (f->ttl_sec < 0 || f->ttl_sec > INT64_MAX / 1000)
      return kv_error(KV_ERR_INVALID, "%s: family '%s': bad TTL %lld", what, f->name,
                      (long long)f->ttl_sec);
    if (f->compression != KV_COMPRESSION_LZ4 && f->compression != KV_COMPRESSION_NONE)
      return kv_error(KV_ERR_INVALID, "%s: family '%s': bad compression %d", what,
                      f->name, f->compression);
    if (f->block_size > MAX_BLOCK_SIZE)
      return kv_error(KV_ERR_INVALID, "%s: family '%s': BLOCKSIZE %u over %u", what,
                      f->name, f->block_size, MAX_BLOCK_SIZE);
  }
  return KV_OK;
}

/* A family's options as the MANIFEST records them (defaults filled in). */
/* The start of a table change: db->mu taken and the writer role acquired into *w when the
** store takes writes (KV_OK); else the error, with mu released. */
static int begin_ddl(kv_db *db, kv_writer *w) {
  memset(w, 0, sizeof *w);
  pthread_mutex_lock(&db->mu);
  int rc = kv_db_writable(db);
  if (rc) {
    pthread_mutex_unlock(&db->mu);
    return rc;
  }
  kv_db_role_acquire(db, w);
  return KV_OK;
}

static void set_options(kv_family_meta *fm, const kv_family_options *o) {
  fm->max_versions = o->max_versions ? o->max_versions : 1;
  fm->ttl_sec = o->ttl_sec;
  fm->compression = o->compression;
  fm->block_size = o->block_size ? o->block_size : KV_DEFAULT_BLOCK_SIZE;
}

int kv_create_table(kv_db *db, const char *name, const kv_family_options *families,
                    int n_families) {
  return kv_create_table_split(db, name, families, n_families, NULL, NULL, 0);
}

int kv_create_table_split(kv_db *db, const char *name, const kv_family_options *families,
                          int n_families, const uint8_t *const *split_keys,
                          const uint32_t *split_lens, uint32_t n_splits) {
  if (!db) return kv_error(KV_MISUSE, "kv_create_table: NULL store");
  if (!name || !name[0]) return kv_error(KV_ERR_INVALID, "kv_create_table: empty table name");
  if (strlen(name) > KV_MAX_NAME)
    return kv_error(KV_ERR_TOOBIG,
                    "kv_create_table: table name of %zu bytes is over the maximum of %u",
                    strlen(name), KV_MAX_NAME);
  int rc = check_families("kv_create_table", name, families, n_families);
  uint8_t *bounds = NULL;
  uint32_t bounds_len = 0;
  if (rc == KV_OK) rc = kv_regions_encode(split_keys, split_lens, n_splits, &bounds, &bounds_len);
  if (rc) return rc;
  kv_writer w;
  if ((rc = begin_ddl(db, &w)) != KV_OK) {
    free(bounds);
    return rc;
  }
  if (find_table(db, name)) {
    rc = kv_error(KV_ERR_EXISTS, "kv_create_table: table '%s' already exists", name);
    goto out;
  }
  kv_table_meta tm;
  memset(&tm, 0, sizeof tm);
  tm.id = db->ver.next_table_id ? db->ver.next_table_id : 1;
  snprintf(tm.name, sizeof tm.name, "%s", name);
  tm.n_families = (uint32_t)n_families;
  tm.families = calloc((size_t)n_families, sizeof *tm.families);
  if (!tm.families) {
    rc = kv_error(KV_ERR_NOMEM, "kv_create_table: out of memory");
    goto out;
  }
  uint32_t fid = db->ver.next_family_id ? db->ver.next_family_id : 1;
  for (int i = 0; i < n_families; i++) {
    kv_family_meta *fm = &tm.families[i];
    fm->id = fid + (uint32_t)i;
    snprintf(fm->name, sizeof fm->name, "%s", families[i].name);
    set_options(fm, &families[i]);
    fm->flushed_seq = 0;
  }
  /* The table's TABLEINFO first (a salvage names the table by it if the MANIFEST is lost);
  ** a crash before the MANIFEST record leaves a folder kv_open removes as unknown. Not
  ** synced: four syncs would triple the cost of a CREATE TABLE, and kv_open writes again
  ** (synced) a TABLEINFO a power cut lost or left damaged. */
  rc = kv_tableinfo_write(db->env, db->path, &tm, false);
  if (rc) {
    free(tm.families);
    goto out;
  }
  kv_edit e[3];
  memset(e, 0, sizeof e);
  e[0].kind = KV_EDIT_CREATE_TABLE;
  e[0].table = &tm;
  e[0].table_id = tm.id;
  e[1].kind = KV_EDIT_SET_COUNTERS;
  e[1].next_file_number = atomic_load(&db->next_file);
  e[1].next_table_id = tm.id + 1;
  e[1].next_family_id = fid + (uint32_t)n_families;
  e[1].last_seq = atomic_load(&db->last_seq);
  e[1].wal_number = db->ver.wal_number;
  e[2].kind = KV_EDIT_SET_REGIONS; /* in the same record: the table never exists unsplit */
  e[2].table_id = tm.id;
  e[2].bounds = bounds;
  e[2].bounds_len = bounds_len;
  e[2].n_bounds = n_splits;
  kv_db_bg_pause(db); /* the MANIFEST has one writer at a time */
  /* every record up to e[1].last_seq in the log file first: a reader beside the writer that
     sees the table sees the commits before it (KV_SYNC_OFF buffers them) */
  rc = db->wal ? kv_wal_write_out(db->wal) : KV_OK;
  if (rc == KV_OK) rc = kv_manifest_apply(db->man, &db->ver, e, n_splits ? 3 : 2);
  kv_db_bg_resume(db);
  for (int i = 0; rc == KV_OK && i < n_families; i++) {
    if (!kv_fam_new(db, tm.id, &tm.families[i]))
      rc = kv_error(KV_ERR_NOMEM, "kv_create_table: out of memory");
  }
  free(tm.families);
out:
  free(bounds);
  kv_db_role_release(db, &w);
  pthread_mutex_unlock(&db->mu);
  return rc;
}

int kv_alter_table(kv_db *db, const char *name, const kv_family_options *families,
                   int n_families) {
  if (!db) return kv_error(KV_MISUSE, "kv_alter_table: NULL store");
  if (!name) return kv_error(KV_ERR_INVALID, "kv_alter_table: NULL table name");
  int rc = check_families("kv_alter_table", name, families, n_families);
  if (rc) return rc;
  kv_writer w;
  if ((rc = begin_ddl(db, &w)) != KV_OK) return rc;
  const kv_table_meta *old = find_table(db, name);
  kv_table_meta tm;
  memset(&tm, 0, sizeof tm);
  if (!old) {
    rc = kv_error(KV_ERR_NOTFOUND, "kv_alter_table: no table '%s'", name);
    goto out;
  }
  /* The table as it will be: every family it has (without its files), then the new ones. */
  uint32_t n_new = 0;
  for (int i = 0; i < n_families; i++) {
    bool known = false;
    for (uint32_t k = 0; k < old->n_families && !known; k++)
      known = strcmp(old->families[k].name, families[i].name) == 0;
    if (!known) n_new++;
  }
  if (old->n_families + n_new > KV_MAX_FAMILIES) {
    rc = kv_error(KV_ERR_INVALID, "kv_alter_table: table '%s' would have %u families, over the "
                  "maximum of %u", name, old->n_families + n_new, KV_MAX_FAMILIES);
    goto out;
  }
  tm.id = old->id;
  snprintf(tm.name, sizeof tm.name, "%s", old->name);
  tm.families = calloc(old->n_families + n_new, sizeof *tm.families);
  if (!tm.families) {
    rc = kv_error(KV_ERR_NOMEM, "kv_alter_table: out of memory");
    goto out;
  }
  for (uint32_t k = 0; k < old->n_families; k++) {
    tm.families[k] = old->families[k];
    tm.families[k].files = NULL;
    tm.families[k].n_files = tm.families[k].cap_files = 0;
  }
  tm.n_families = old->n_families;
  uint32_t fid = db->ver.next_family_id ? db->ver.next_family_id : 1;
  for (int i = 0; i < n_families; i++) {
    kv_family_meta *fm = NULL;
    for (uint32_t k = 0; k < tm.n_families && !fm; k++)
      if (strcmp(tm.families[k].name, families[i].name) == 0) fm = &tm.families[k];
    if (!fm) {
      fm = &tm.families[tm.n_families++];
      fm->id = fid++;
      snprintf(fm->name, sizeof fm->name, "%s", families[i].name);
      fm->flushed_seq = atomic_load(&db->last_seq); /* no op before it names the family */
    }
    set_options(fm, &families[i]);
  }
  /* TABLEINFO first, as kv_create_table does: a salvage then knows the new families. */
  rc = kv_tableinfo_write(db->env, db->path, &tm, false);
  if (rc) goto out;
  kv_edit e[2];
  memset(e, 0, sizeof e);
  e[0].kind = KV_EDIT_ALTER_TABLE;
  e[0].table = &tm;
  e[0].table_id = tm.id;
  kv_db_bg_pause(db); /* no flush or compaction reads the options while they change */
  e[1] = kv_db_counters_edit(db, NULL);
  e[1].next_family_id = fid;
  rc = db->wal ? kv_wal_write_out(db->wal) : KV_OK;
  if (rc == KV_OK) rc = kv_manifest_apply(db->man, &db->ver, e, 2);
  for (uint32_t k = 0; rc == KV_OK && k < tm.n_families; k++) {
    const kv_family_meta *fm = &tm.families[k];
    kv_fam *f = kv_db_family(db, fm->id);
    if (!f && !kv_fam_new(db, tm.id, fm)) {
      rc = kv_error(KV_ERR_NOMEM, "kv_alter_table: out of memory");
    } else if (f) {
      f->max_versions = fm->max_versions;
      f->ttl_sec = fm->ttl_sec;
      f->compression = fm->compression;
      f->block_size = fm->block_size;
    }
  }
  kv_db_bg_resume(db);
out:
  free(tm.families);
  kv_db_role_release(db, &w);
  pthread_mutex_unlock(&db->mu);
  return rc;
}

int kv_drop_table(kv_db *db, const char *name) {
  if (!db) return kv_error(KV_MISUSE, "kv_drop_table: NULL store");
  if (!name) return kv_error(KV_ERR_INVALID, "kv_drop_table: NULL table name");
  kv_writer w;
  int rc = begin_ddl(db, &w);
  if (rc) return rc;
  const kv_table_meta *tm = find_table(db, name);
  if (!tm) {
    rc = kv_error(KV_ERR_NOTFOUND, "kv_drop_table: no table '%s'", name);
    goto out;
  }
  uint32_t tid = tm->id;
  kv_edit e[2];
  memset(e, 0, sizeof e);
  e[0].kind = KV_EDIT_DROP_TABLE;
  e[0].table_id = tid;
  kv_db_bg_pause(db); /* no job may run on the families freed below */
  /* the counters say after which commit the drop came (a reader beside the writer shows no
     later commit before it has read the drop: kv_manifest_changes_since), and every record
     up to it is in the log file first */
  e[1] = kv_db_counters_edit(db, NULL);
  rc = db->wal ? kv_wal_write_out(db->wal) : KV_OK;
  if (rc == KV_OK) rc = kv_manifest_apply(db->man, &db->ver, e, 2);
  if (rc) {
    kv_db_bg_resume(db);
    goto out;
  }
  for (uint32_t i = 0; i < db->n_fam_slots; i++) {
    kv_fam *f = db->fams[i];
    if (!f || f->table_id != tid) continue;
    for (uint32_t k = 0; k < f->n_files; k++) atomic_store(&f->files[k]->obsolete, true);
    db->fams[i] = NULL;
    char dir[PATH_CAP];
    kv_db_family_dir(db, f, dir, sizeof dir);
    kv_fam_free(f); /* files no scan uses are deleted now, the others at scan close */
    db->env->rmdir(db->env, dir);
  }
  char tdir[PATH_CAP], ti[PATH_CAP + 16];
  snprintf(tdir, sizeof tdir, "%s/data/%u", db->path, tid);
  snprintf(ti, sizeof ti, "%s/%s", tdir, KV_TABLEINFO);
  if (db->env->exists(db->env, ti)) db->env->remove(db->env, ti);
  if (db->env->exists(db->env, tdir)) db->env->rmdir(db->env, tdir);
  kv_db_bg_resume(db);
  pthread_cond_broadcast(&db->bg_done_cv); /* kv_flush waiters on these families */
out:
  kv_db_role_release(db, &w);
  pthread_mutex_unlock(&db->mu);
  return rc;
}

int kv_family_id(kv_db *db, const char *table, const char *family, uint32_t *id_out) {
  if (!db || !table || !family || !id_out)
    return kv_error(KV_MISUSE, "kv_family_id: NULL argument");
  pthread_mutex_lock(&db->mu);
  const kv_table_meta *tm = find_table(db, table);
  int rc;
  if (!tm) {
    rc = kv_error(KV_ERR_NOTFOUND, "no table '%s'", table);
  } else {
    rc = kv_error(KV_ERR_NOTFOUND, "table '%s' has no family '%s'", table, family);
    for (uint32_t i = 0; i < tm->n_families; i++) {
      if (strcmp(tm->families[i].name, family) == 0) {
        *id_out = tm->families[i].id;
        rc = KV_OK;
        break;
      }
    }
  }
  pthread_mutex_unlock(&db->mu);
  return rc;
}

int kv_table_families(kv_db *db, const char *table, uint32_t *ids, uint32_t cap, uint32_t *n) {
  if (!db || !table || !n || (cap && !ids)) return kv_error(KV_MISUSE, "kv_table_families: NULL argument");
  pthread_mutex_lock(&db->mu);
  const kv_table_meta *tm = find_table(db, table);
  int rc = tm ? KV_OK : kv_error(KV_ERR_NOTFOUND, "no table '%s'", table);
  if (tm) {
    *n = tm->n_families;
    for (uint32_t i = 0; i < tm->n_families && i < cap; i++) ids[i] = tm->families[i].id;
  }
  pthread_mutex_unlock(&db->mu);
  return rc;
}

int kv_table_count(kv_db *db) {
  if (!db) return 0;
  pthread_mutex_lock(&db->mu);
  int n = (int)db->ver.n_tables;
  pthread_mutex_unlock(&db->mu);
  return n;
}

const char *kv_table_name(kv_db *db, int i) {
  if (!db || i < 0) return NULL;
  const char *r = NULL;
  pthread_mutex_lock(&db->mu);
  for (uint32_t t = 0; t < db->ver.n_tables && !r; t++) {
    int rank = 0;
    for (uint32_t u = 0; u < db->ver.n_tables; u++)
      if (strcmp(db->ver.tables[u].name, db->ver.tables[t].name) < 0) rank++;
    if (rank == i) r = db->ver.tables[t].name;
  }
  pthread_mutex_unlock(&db->mu);
  return r;
}

int kv_family_info(kv_db *db, uint32_t family_id, kv_family_options *out) {
  if (!db || !out) return kv_error(KV_MISUSE, "kv_family_info: NULL argument");
  pthread_mutex_lock(&db->mu);
  kv_fam *f = kv_db_family(db, family_id);
  int rc = KV_OK;
  if (!f) {
    rc = kv_error(KV_ERR_NOTFOUND, "unknown family id %u", family_id);
  } else {
    out->name = f->name;
    out->max_versions = f->max_versions;
    out->ttl_sec = f->ttl_sec;
    out->compression = f->compression;
    out->block_size = f->block_size;
  }
  pthread_mutex_unlock(&db->mu);
  return rc;
}

int kv_family_set_dropped_qualifiers(kv_db *db, uint32_t family_id, const uint8_t *const *quals,
                                     const uint32_t *lens, uint32_t n) {
  if (!db || (n && (!quals || !lens)))
    return kv_error(KV_MISUSE, "kv_family_set_dropped_qualifiers: NULL argument");
  kv_qualset s;
  if (!kv_qualset_build(&s, quals, lens, n))
    return kv_error(KV_ERR_NOMEM, "kv_family_set_dropped_qualifiers: out of memory");
  pthread_mutex_lock(&db->mu);
  kv_fam *f = kv_db_family(db, family_id);
  if (f) {
    kv_qualset old = f->dead;
    f->dead = s;
    s = old;
  }
  pthread_mutex_unlock(&db->mu);
  kv_qualset_free(&s);
  return f ? KV_OK : kv_error(KV_ERR_NOTFOUND, "unknown family id %u", family_id);
}

int kv_family_get_stats(kv_db *db, uint32_t family_id, kv_family_stats *out) {
  if (!db || !out) return kv_error(KV_MISUSE, "kv_family_get_stats: NULL argument");
  memset(out, 0, sizeof *out);
  pthread_mutex_lock(&db->mu);
  kv_fam *f = kv_db_family(db, family_id);
  if (!f) {
    pthread_mutex_unlock(&db->mu);
    return kv_error(KV_ERR_NOTFOUND, "unknown family id %u", family_id);
  }
  for (uint32_t i = 0; i < f->n_files; i++) {
    const kv_sf_props *p = kv_sf_get_props(f->files[i]->reader);
    out->store_files++;
    out->store_file_bytes += p->file_size;
    out->blocks += p->blocks;
    out->cells += p->cells;
    out->rows += p->rows;
    out->reader_bytes += kv_sf_reader_mem(f->files[i]->reader);
    out->paged_files += kv_sf_index_paged(f->files[i]->reader);
  }
  out->compactions = f->compactions;
  out->blocks_copied = f->blocks_copied;
  out->blocks_merged = f->blocks_merged;
  out->memstore_bytes = kv_memstore_bytes(f->mem);
  out->memstore_cells = kv_memstore_cells(f->mem);
  for (uint32_t k = 0; k < f->n_imm; k++) {
    out->memstore_bytes += kv_memstore_bytes(f->imms[k]);
    out->memstore_cells += kv_memstore_cells(f->imms[k]);
  }
  pthread_mutex_unlock(&db->mu);
  return KV_OK;
}

int kv_family_blocks(kv_db *db, uint32_t family_id,
                     int (*each)(void *ctx, const kv_file_block *b), void *ctx) {
  if (!db || !each) return kv_error(KV_MISUSE, "kv_family_blocks: NULL argument");
  pthread_mutex_lock(&db->mu);
  kv_fam *f = kv_db_family(db, family_id);
  if (!f) {
    pthread_mutex_unlock(&db->mu);
    return kv_error(KV_ERR_NOTFOUND, "unknown family id %u", family_id);
  }
  uint32_t nf = f->n_files;
  kv_sfh **files = malloc((nf ? nf : 1) * sizeof *files);
  if (!files) {
    pthread_mutex_unlock(&db->mu);
    return kv_error(KV_ERR_NOMEM, "kv_family_blocks: out of memory");
  }
  for (uint32_t i = 0; i < nf; i++) {
    files[i] = f->files[i];
    kv_sfh_ref(files[i]); /* kept open (and their index valid) while the caller reads */
  }
  pthread_mutex_unlock(&db->mu);
  int rc = 0;
  for (uint32_t i = 0; i < nf && !rc; i++) {
    const kv_sf_reader *r = files[i]->reader;
    kv_file_block b;
    memset(&b, 0, sizeof b);
    b.file = files[i]->meta.number;
    b.file_bytes = r->props.file_size;
    b.n_blocks = r->nblocks;
    b.last_row = r->last_row;
    b.last_row_len = r->last_row_len;
    kv_sf_icur cur; /* a paged index: one page pinned at a time */
    kv_sf_icur_init(&cur, r);
    for (uint32_t k = 0; k < r->nblocks && !rc; k++) {
      const kv_sf_index_entry *e = kv_sf_icur_at(&cur, k);
      b.block = k;
      b.offset = e->off;
      b.bytes = e->size;
      b.raw_bytes = e->raw;
      b.cells = e->cells;
      b.rows = e->rows;
      b.first_row = r->index_buf + e->key;
      b.first_row_len = e->row_len;
      rc = each(ctx, &b);
    }
    kv_sf_icur_done(&cur);
  }
  for (uint32_t i = 0; i < nf; i++) kv_sfh_unref(files[i]);
  free(files);
  return rc;
}
