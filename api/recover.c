/*
** api/recover.c: rowan_recover, the salvage of a damaged database into a new one (contract
** in include/rowan.h; for users, docs/SHELL.md "Recovering a damaged database").
**
** Steps:
**   1. kv_salvage (kv/salvage/salvage.h) copies every cell that can still be read from the damaged
**      store into a work store, dst/salvage, with the same tables, families and sequence
**      numbers, and reports the damage it skipped;
**   2. the work store's catalog is read leniently (cat_salvage_read): each table whose row
**      decodes is created again in the new store (cat_create_table on the same definition)
**      and its rows copied (api/recover_copy.c); what cannot go back into a table goes to
**      LOST_AND_FOUND; key-value tables that are not SQL tables are copied as they are; each
**      sequence whose row decodes is created again starting at its first unclaimed value;
**   3. the new store is opened as a database and each index of a recovered table is built
**      from the table (CREATE INDEX) and checked (CHECK INDEX): a recovered database passes
**      `.check` by construction, never by copying index rows that may disagree;
**   4. the work store is removed.
** The damaged directory is only read (kv_salvage takes its LOCK and writes nothing there).
**
** Not here: reading damaged files (kv/salvage/), the copying itself (api/recover_copy.c).
*/
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/recover_int.h"
#include "catalog/keycodec.h"
#include "kv/salvage/salvage.h"

#define PATH_CAP 4096

/* ---- the report --------------------------------------------------------------------------- */

int rec_fail(rec *r, int code, const char *fmt, ...) {
  if (r->code) return r->code;
  r->code = code;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(r->err, sizeof r->err, fmt, ap);
  va_end(ap);
  return code;
}

const char *rec_str(rec *r, const char *s) {
  rec_report *rr = r->rr;
  if (rr->n_strs == rr->cap_strs) {
    int nc = rr->cap_strs ? rr->cap_strs * 2 : 32;
    char **ns = realloc(rr->strs, (size_t)nc * sizeof *ns);
    if (!ns) return NULL;
    rr->strs = ns;
    rr->cap_strs = nc;
  }
  char *c = strdup(s ? s : "");
  if (c) rr->strs[rr->n_strs++] = c;
  return c;
}

int rec_note(rec *r, const char *kind, const char *file, uint64_t off, uint64_t len,
             int64_t cells, int64_t rows, const char *fmt, ...) {
  rec_report *rr = r->rr;
  if (rr->pub.n_damage == rr->cap_damage) {
    int nc = rr->cap_damage ? rr->cap_damage * 2 : 16;
    rowan_recover_damage *nd = realloc(rr->damage, (size_t)nc * sizeof *nd);
    if (!nd) return rec_fail(r, ROWAN_NOMEM, "out of memory");
    rr->damage = nd;
    rr->cap_damage = nc;
    rr->pub.damage = nd;
  }
  char detail[600];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(detail, sizeof detail, fmt, ap);
  va_end(ap);
  rowan_recover_damage *d = &rr->damage[rr->pub.n_damage];
  d->kind = rec_str(r, kind);
  d->file = rec_str(r, file);
  d->detail = rec_str(r, detail);
  d->offset = off;
  d->length = len;
  d->cells = cells;
  d->rows = rows;
  if (!d->kind || !d->file || !d->detail) return rec_fail(r, ROWAN_NOMEM, "out of memory");
  rr->pub.n_damage++;
  return ROWAN_OK;
}

int rec_table(rec *r, const char *name, int *idx) {
  rec_report *rr = r->rr;
  if (rr->pub.n_tables == rr->cap_tables) {
    int nc = rr->cap_tables ? rr->cap_tables * 2 : 16;
    rowan_recover_table *nt = realloc(rr->tables, (size_t)nc * sizeof *nt);
    if (!nt) return rec_fail(r, ROWAN_NOMEM, "out of memory");
    rr->tables = nt;
    rr->cap_tables = nc;
    rr->pub.tables = nt;
  }
  rowan_recover_table *t = &rr->tables[rr->pub.n_tables];
  memset(t, 0, sizeof *t);
  if (!(t->name = rec_str(r, name))) return rec_fail(r, ROWAN_NOMEM, "out of memory");
  *idx = rr->pub.n_tables++;
  return ROWAN_OK;
}

void rowan_recover_report_free(rowan_recover_report *report) {
  if (!report) return;
  rec_report *rr = (rec_report *)report;
  for (int i = 0; i < rr->n_strs; i++) free(rr->strs[i]);
  free(rr->strs);
  free(rr->damage);
  free(rr->tables);
  free(rr);
}

/* ---- files --------------------------------------------------------------------------------- */

typedef struct names {
  char **v;
  int n, cap;
} names;

static int collect(void *ctx, const char *name) {
  names *l = ctx;
  if (l->n == l->cap) {
    int nc = l->cap ? l->cap * 2 : 16;
    char **nv = realloc(l->v, (size_t)nc * sizeof *nv);
    if (!nv) return 1;
    l->v = nv;
    l->cap = nc;
  }
  if ((l->v[l->n] = strdup(name)) != NULL) l->n++;
  return 0;
}

static void free_names(names *l) {
  for (int i = 0; i < l->n; i++) free(l->v[i]);
  free(l->v);
}

/* Remove a folder and everything under it (the work store: four levels). Best effort. */
static void remove_tree(kv_env *env, const char *dir, int depth) {
  names l = {0};
  if (env->list(env, dir, collect, &l) == KV_OK)
    for (int i = 0; i < l.n; i++) {
      char p[PATH_CAP + 300];
      snprintf(p, sizeof p, "%s/%s", dir, l.v[i]);
      if (env->remove(env, p) != KV_OK && depth > 0) remove_tree(env, p, depth - 1);
    }
  free_names(&l);
  env->rmdir(env, dir);
}

/* ---- indexes ------------------------------------------------------------------------------ */

/* Append name as a quoted identifier ("A""B"). */
static void put_ident(char *buf, size_t cap, size_t *n, const char *name) {
  if (*n < cap) buf[(*n)++] = '"';
  for (const char *p = name; *p && *n + 2 < cap; p++) {
    if (*p == '"') buf[(*n)++] = '"';
    buf[(*n)++] = *p;
  }
  if (*n < cap) buf[(*n)++] = '"';
  buf[*n < cap ? *n : cap - 1] = 0;
}

static void put_text(char *buf, size_t cap, size_t *n, const char *s) {
  int w = snprintf(buf + *n, cap - *n, "%s", s);
  if (w > 0) *n += (size_t)w < cap - *n ? (size_t)w : cap - *n - 1;
}

/* CREATE INDEX text of index x of table t (keys that are columns quoted, expressions as
** written, SALT_BUCKETS when it has them). */
static void index_sql(const cat_table *t, const cat_index *x, char *buf, size_t cap) {
  size_t n = 0;
  buf[0] = 0;
  put_text(buf, cap, &n, "CREATE INDEX ");
  put_ident(buf, cap, &n, x->name);
  put_text(buf, cap, &n, " ON ");
  put_ident(buf, cap, &n, t->name);
  put_text(buf, cap, &n, " (");
  for (int k = 0; k < x->n_keys; k++) {
    if (k) put_text(buf, cap, &n, ", ");
    if (cat_find_column(t, x->keys[k]) >= 0) put_ident(buf, cap, &n, x->keys[k]);
    else put_text(buf, cap, &n, x->keys[k]);
    if (x->key_desc[k]) put_text(buf, cap, &n, " DESC");
  }
  put_text(buf, cap, &n, ")");
  if (x->n_include > 0) {
    put_text(buf, cap, &n, " INCLUDE (");
    for (int k = 0; k < x->n_include; k++) {
      if (k) put_text(buf, cap, &n, ", ");
      put_ident(buf, cap, &n, x->include[k]);
    }
    put_text(buf, cap, &n, ")");
  }
  if (x->salt_buckets) { /* a salted index is made salted again */
    char sb[32];
    snprintf(sb, sizeof sb, " SALT_BUCKETS = %d", x->salt_buckets);
    put_text(buf, cap, &n, sb);
  }
}

/* Problems CHECK INDEX finds (MISSING + EXTRA + MISMATCHED), or -1 when it fails. */
static int64_t check_index(rowan_db *db, const cat_table *t, const cat_index *x) {
  char sql[1200];
  size_t n = 0;
  sql[0] = 0;
  put_text(sql, sizeof sql, &n, "CHECK INDEX ");
  put_ident(sql, sizeof sql, &n, x->name);
  put_text(sql, sizeof sql, &n, " ON ");
  put_ident(sql, sizeof sql, &n, t->name);
  rowan_stmt *st = NULL;
  if (rowan_prepare(db, sql, -1, &st, NULL) != ROWAN_OK) return -1;
  int64_t bad = 0;
  int rc;
  while ((rc = rowan_step(st)) == ROWAN_ROW) {
    const char *item = (const char *)rowan_column_text(st, 0);
    if (item && (!strcmp(item, "MISSING") || !strcmp(item, "EXTRA") || !strcmp(item, "MISMATCHED")))
      bad += rowan_column_int64(st, 1);
  }
  rowan_finalize(st);
  return rc == ROWAN_DONE ? bad : -1;
}

/* Build and check every index of the recovered tables, through SQL on the new database. */
static int rebuild_indexes(rec *r, const int *entries) {
  rowan_options o;
  rowan_options_init(&o);
  o.kv_env = r->env;
  o.create_if_missing = 0;
  rowan_db *db = NULL;
  if (rowan_open(r->dst, &o, &db) != ROWAN_OK) {
    int rc = rec_fail(r, db ? rowan_errcode(db) : ROWAN_NOMEM, "recover: %s",
                      db ? rowan_errmsg(db) : "out of memory");
    rowan_close(db);
    return rc;
  }
  int rc = ROWAN_OK;
  for (int i = 0; rc == ROWAN_OK && i < r->cs.n_tables; i++) {
    const cat_table *t = r->cs.tables[i];
    if (entries[i] < 0) continue;
    for (int k = 0; rc == ROWAN_OK && k < t->n_indexes; k++) {
      char sql[2400];
      index_sql(t, &t->indexes[k], sql, sizeof sql);
      if (rowan_exec(db, sql, NULL, NULL) != ROWAN_OK) {
        rc = rec_note(r, "index", r->src, 0, 0, -1, -1,
                      "index %s of table %s could not be built again (%s): %s", t->indexes[k].name,
                      t->name, rowan_errmsg(db), sql);
        continue;
      }
      int64_t bad = check_index(db, t, &t->indexes[k]);
      if (bad != 0) {
        rc = rec_fail(r, ROWAN_CORRUPT, "recover: CHECK INDEX %s ON %s found %lld problems in "
                      "the new database (%s)", t->indexes[k].name, t->name, (long long)bad,
                      bad < 0 ? rowan_errmsg(db) : "index and table disagree");
        break;
      }
      r->rr->tables[entries[i]].indexes++;
    }
  }
  if (rowan_close(db) != ROWAN_OK && rc == ROWAN_OK)
    rc = rec_fail(r, ROWAN_IOERR, "recover: closing the new database failed");
  return rc;
}

/* ---- the steps ------------------------------------------------------------------------------ */

static int kv_code(int rc) {
  switch (rc) {
    case KV_ERR_NOTFOUND: return ROWAN_NOTFOUND;
    case KV_ERR_LOCKED: return ROWAN_LOCKED;
    case KV_ERR_EXISTS: case KV_ERR_INVALID: case KV_MISUSE: return ROWAN_MISUSE;
    case KV_ERR_NOSPC: return ROWAN_FULL;
    case KV_ERR_NOMEM: return ROWAN_NOMEM;
    case KV_ERR_CORRUPT: return ROWAN_CORRUPT;
    default: return ROWAN_IOERR;
  }
}

/* 1: the salvage into the work store, its damage into the report. */
static int salvage(rec *r, const char *work) {
  kv_salvage_report kr;
  int krc = kv_salvage(r->env, r->src, work, &kr);
  int rc = krc == KV_OK ? ROWAN_OK : rec_fail(r, kv_code(krc), "%s", kv_errmsg());
  for (size_t i = 0; rc == ROWAN_OK && i < kr.n_damage; i++) {
    const kv_salvage_damage *d = &kr.damage[i];
    rc = rec_note(r, kv_salvage_kind_name(d->kind), d->path, d->off, d->len, d->cells, d->rows,
                  "%s", d->why);
    /* which families may have lost cells: kv_salvage keeps the family ids */
    const char *data = strstr(d->path, "/data/");
    unsigned tid, fid;
    bool sf = d->kind >= KV_SALVAGE_SF_TRAILER && d->kind <= KV_SALVAGE_SF_MISSING &&
              d->kind != KV_SALVAGE_SF_BLOOM;
    if (rc == ROWAN_OK && sf && data && sscanf(data, "/data/%u/%u/", &tid, &fid) == 2) {
      uint32_t *nf = realloc(r->dmg_fams, (size_t)(r->n_dmg_fams + 1) * sizeof *nf);
      if (!nf) rc = rec_fail(r, ROWAN_NOMEM, "out of memory");
      else {
        r->dmg_fams = nf;
        r->dmg_fams[r->n_dmg_fams++] = fid;
      }
    }
    if (d->kind == KV_SALVAGE_WAL) r->wal_damaged = true;
  }
  rowan_recover_report *p = &r->rr->pub;
  p->manifest_whole = kr.manifest_whole;
  p->files_read = kr.files_read;
  p->files_damaged = kr.files_damaged;
  p->blocks_read = kr.blocks_read;
  p->blocks_lost = kr.blocks_lost;
  p->wal_records = kr.wal_records;
  p->wal_ops = kr.wal_ops;
  kv_salvage_report_free(&kr);
  return rc;
}

static bool named_table(const rec *r, const char *kv_name) {
  for (int i = 0; i < r->cs.n_tables; i++)
    if (strcmp(r->cs.tables[i]->kv_name, kv_name) == 0) return true;
  return false;
}

static bool named_index(const rec *r, const char *kv_name) {
  for (int i = 0; i < r->cs.n_tables; i++)
    for (int k = 0; k < r->cs.tables[i]->n_indexes; k++)
      if (strcmp(r->cs.tables[i]->indexes[k].kv_name, kv_name) == 0) return true;
  return false;
}

/* 2: the tables, then what no catalog row describes. entries[i] gets the report entry of
** r->cs.tables[i] (-1 when it could not be made). */
static int copy_all(rec *r, int *entries) {
  int rc = ROWAN_OK;
  for (int i = 0; rc == ROWAN_OK && i < r->cs.n_problems; i++)
    rc = rec_note(r, "catalog row", r->src, 0, 0, -1, -1, "%s", r->cs.problems[i]);
  for (int i = 0; rc == ROWAN_OK && i < r->cs.n_tables; i++) {
    const cat_table *old = r->cs.tables[i];
    entries[i] = -1;
    cat_table_def def;
    cat_error err;
    memset(&err, 0, sizeof err);
    const cat_table *nt = NULL;
    if (cat_table_def_from(old, &def, &err) != CAT_OK) return rec_fail(r, ROWAN_NOMEM, "out of memory");
    def.no_row_cover = true; /* salvaged rows may lack cells anywhere (docs/FORMAT_SQL.md) */
    int crc = cat_create_table(r->dcat, &def, &nt, &err);
    cat_table_def_free(&def);
    if (crc != CAT_OK) { /* its cells are kept all the same */
      rc = rec_note(r, "catalog row", r->src, 0, 0, -1, -1,
                    "table %s could not be created again (%s): its cells are in LOST_AND_FOUND",
                    old->name, err.msg);
      if (rc == ROWAN_OK && kv_table_families(r->sk, old->kv_name, NULL, 0, &(uint32_t){0}) == KV_OK)
        rc = rec_lost_table(r, old->kv_name);
      continue;
    }
    if ((rc = rec_table(r, old->name, &entries[i]))) break;
    rc = rec_copy_table(r, old, nt, entries[i]);
  }
  for (int i = 0; rc == ROWAN_OK && i < r->cs.n_sequences; i++) {
    /* each sequence again, from its first value not claimed: none is handed out twice */
    const cat_sequence *sq = r->cs.sequences[i];
    cat_sequence_def d = sq->def;
    d.start = cat_sequence_restart(sq);
    cat_error err;
    memset(&err, 0, sizeof err);
    if (cat_create_sequence(r->dcat, &d, &err) != CAT_OK)
      rc = rec_note(r, "catalog row", r->src, 0, 0, -1, -1,
                    "sequence %s could not be created again (%s)", sq->name, err.msg);
  }
  int n = kv_table_count(r->sk);
  bool orphans = false;
  for (int i = 0; rc == ROWAN_OK && i < n; i++) {
    const char *name = kv_table_name(r->sk, i);
    if (!name || !strcmp(name, CAT_SYSTEM_TABLE) || named_table(r, name)) continue;
    if (!strncmp(name, "$i", 2)) {
      if (!named_index(r, name))
        rc = rec_note(r, "catalog row", r->src, 0, 0, -1, -1,
                      "index data in key-value table %s has no catalog row: not copied (indexes "
                      "are built again from their tables)", name);
    } else if (!strncmp(name, "$t", 2) || name[0] == '#') {
      orphans |= name[0] == '$';
      if (name[0] == '$' && r->cs.found)
        rc = rec_note(r, "catalog row", r->src, 0, 0, -1, -1,
                      "key-value table %s has no catalog row (lost): its cells are in "
                      "LOST_AND_FOUND", name);
      if (rc == ROWAN_OK) rc = rec_lost_table(r, name);
    } else {
      rc = rec_copy_kv_table(r, name);
    }
  }
  rowan_recover_report *p = &r->rr->pub;
  p->catalog = !r->cs.found ? ROWAN_CATALOG_LOST
               : r->cs.n_problems || orphans ? ROWAN_CATALOG_PARTIAL : ROWAN_CATALOG_WHOLE;
  if (rc == ROWAN_OK) rc = rec_flush_batch(r, true);
  p->lost_and_found_cells = r->lf_cells;
  return rc;
}

int rowan_recover(const char *damaged, const char *dst, const rowan_recover_options *opts,
                  rowan_recover_report **report) {
  if (!report) return ROWAN_MISUSE;
  rec_report *rr = calloc(1, sizeof *rr);
  *report = (rowan_recover_report *)rr;
  if (!rr) return ROWAN_NOMEM;
  rr->pub.errmsg = "";
  rec r;
  memset(&r, 0, sizeof r);
  r.rr = rr;
  r.src = damaged;
  r.dst = dst;
  r.lf_entry = -1;
  r.env = opts && opts->kv_env ? (kv_env *)opts->kv_env : kv_env_posix();
  int *entries = NULL;
  char work[PATH_CAP];
  bool made_work = false;
  int rc = ROWAN_OK;
  if (!damaged || !dst || !*damaged || !*dst) {
    rc = rec_fail(&r, ROWAN_MISUSE, "recover: a NULL or empty directory");
    goto done;
  }
  if (r.env->exists(r.env, dst)) {
    names l = {0};
    int lrc = r.env->list(r.env, dst, collect, &l);
    int n = l.n;
    free_names(&l);
    if (lrc != KV_OK || n > 0) {
      rc = rec_fail(&r, ROWAN_MISUSE, "recover: %s %s: the new database needs a new or empty "
                    "directory", dst, lrc != KV_OK ? "is not a directory" : "is not empty");
      goto done;
    }
  }
  snprintf(work, sizeof work, "%s/salvage", dst);
  rc = salvage(&r, work);
  made_work = rc == ROWAN_OK || r.env->exists(r.env, work);
  if (rc) goto done;
  kv_options ko;
  kv_options_init(&ko);
  ko.env = r.env;
  ko.read_only = true;
  if (kv_open(work, &ko, &r.sk) != KV_OK) {
    rc = rec_fail(&r, ROWAN_IOERR, "recover: opening the salvaged store: %s", kv_errmsg());
    goto done;
  }
  cat_error err;
  memset(&err, 0, sizeof err);
  if (cat_salvage_read(r.sk, &r.cs, &err) != CAT_OK) {
    rc = rec_fail(&r, err.code == CAT_ERR_NOMEM ? ROWAN_NOMEM : ROWAN_IOERR,
                  "recover: reading the catalog: %s", err.msg);
    goto done;
  }
  ko.read_only = false;
  ko.create_if_missing = true;
  ko.sync_mode = KV_SYNC_OFF; /* the copy is synced once, by kv_close: half a new database is
                                 of no use anyway (a failed recovery is started again) */
  if (kv_open(dst, &ko, &r.dk) != KV_OK) {
    rc = rec_fail(&r, kv_code(KV_ERR_IO), "recover: creating %s: %s", dst, kv_errmsg());
    goto done;
  }
  if (cat_open(r.dk, &r.dcat, &err) != CAT_OK) {
    rc = rec_fail(&r, ROWAN_IOERR, "recover: %s", err.msg);
    goto done;
  }
  r.b = kv_batch_new();
  r.kbuf = malloc(CAT_KEY_MAX);
  r.scratch = malloc(CAT_KEY_MAX);
  entries = calloc((size_t)(r.cs.n_tables > 0 ? r.cs.n_tables : 1), sizeof *entries);
  if (!r.b || !r.kbuf || !r.scratch || !entries) {
    rc = rec_fail(&r, ROWAN_NOMEM, "out of memory");
    goto done;
  }
  rc = copy_all(&r, entries);
  cat_close(r.dcat);
  r.dcat = NULL;
  if (kv_close(r.dk) != KV_OK && rc == ROWAN_OK)
    rc = rec_fail(&r, ROWAN_IOERR, "recover: closing %s: %s", dst, kv_errmsg());
  r.dk = NULL;
  if (rc == ROWAN_OK) rc = rebuild_indexes(&r, entries);
done:
  free(entries);
  free(r.dmg_fams);
  kv_batch_free(r.b);
  free(r.kbuf);
  free(r.scratch);
  cat_close(r.dcat);
  if (r.dk) kv_close(r.dk);
  cat_salvage_free(&r.cs);
  if (r.sk) kv_close(r.sk);
  if (made_work) remove_tree(r.env, work, 4);
  if (rc != ROWAN_OK) rr->pub.errmsg = rec_str(&r, r.err) ? rr->strs[rr->n_strs - 1] : "";
  return rc;
}
