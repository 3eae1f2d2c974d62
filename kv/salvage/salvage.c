/*
** kv/salvage/salvage.c: the salvage of a damaged store into a new one (kv_salvage; contract and
** rules in kv/salvage/salvage.h, docs/KV.md "Salvage"). RocksDB's RepairDB is the model: find what
** is there, keep every part that checks, and name it in a new MANIFEST.
**
** Steps:
**   1. the MANIFEST's records that check (kv_manifest_salvage), applied leniently to a
**      description of tables, families (names, options, flushed sequence numbers) and the
**      store files they name or removed; a SNAPSHOT record starts the description afresh;
**   2. the table folders under data/: each TABLEINFO that checks names a table the MANIFEST
**      did not; a folder nothing names becomes "#<id>", its families "#<id>";
**   3. the new store: its MANIFEST (kv_manifest_open, create) gets one CREATE_TABLE per
**      table, with the old table and family ids, then per store file read (kv/salvage/salvage_sf.c)
**      a new store file holding the cells that checked and an ADD_FILE naming it;
**   4. the WAL segments' records that check (kv_wal_salvage): their ops go to one memstore
**      per family, written out as store files of the new store at the end of each segment
**      (or past 256 MiB of memstores); sequence numbers and timestamps kept (KV_TS_NOW
**      becomes the record's commit time, as in replay);
**   5. the counters (next file number, the last sequence number).
** Because every cell keeps its sequence number, the new store's reads merge the sources as
** the old store's would have.
**
** What it does not: open either store through kv_open (the old one may not open; the new
** one is opened by the caller), or know anything of SQL tables (api/recover.c does).
*/
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kv/util/coding.h"
#include "kv/db/manifest.h"
#include "kv/db/memstore.h"
#include "kv/salvage/salvage_int.h"
#include "kv/util/status.h"
#include "kv/db/wal.h"

#define PATH_CAP 4096
#define MEM_LIMIT ((size_t)256 << 20) /* WAL cells held before they are written out */
#define UNNAMED_VERSIONS 2147483647   /* VERSIONS of a family whose options are lost: keep all */

/* ORDER KV_SALVAGE_KIND */
static const char *const kind_names[KV_SALVAGE_KIND_COUNT] = {
    "MANIFEST", "TABLEINFO", "store file trailer", "store file bloom filter",
    "store file block index", "store file block", "missing store file", "WAL record",
    "lost name"};

const char *kv_salvage_kind_name(int kind) {
  return kind >= 0 && kind < KV_SALVAGE_KIND_COUNT ? kind_names[kind] : "unknown";
}

void kv_salvage_report_free(kv_salvage_report *rep) {
  if (!rep) return;
  free(rep->damage);
  memset(rep, 0, sizeof *rep);
}

int kv_salvage_note(kv_salvage_report *rep, int kind, const char *path, uint64_t off,
                    uint64_t len, int64_t cells, int64_t rows, const char *fmt, ...) {
  if (rep->n_damage == rep->cap_damage) {
    size_t nc = rep->cap_damage ? rep->cap_damage * 2 : 16;
    kv_salvage_damage *nd = realloc(rep->damage, nc * sizeof *nd);
    if (!nd) return kv_error(KV_ERR_NOMEM, "salvage: out of memory");
    rep->damage = nd;
    rep->cap_damage = nc;
  }
  kv_salvage_damage *d = &rep->damage[rep->n_damage++];
  memset(d, 0, sizeof *d);
  d->kind = kind;
  snprintf(d->path, sizeof d->path, "%s", path);
  d->off = off;
  d->len = len;
  d->cells = cells;
  d->rows = rows;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(d->why, sizeof d->why, fmt, ap);
  va_end(ap);
  return KV_OK;
}

/* ---- the description of the old store ------------------------------------------------ */

typedef struct sv_file {
  kv_file_meta meta;  /* as the MANIFEST names it (number only when found on disk) */
  bool named;         /* a MANIFEST record that checked added it */
  bool removed;       /* a MANIFEST record that checked removed it */
  bool on_disk;       /* found in the family's folder */
} sv_file;

typedef struct sv_fam {
  uint32_t id;                /* family id (the same in the new store) */
  char name[KV_MAX_NAME + 1]; /* its name ("#<id>" when lost) */
  bool named;                 /* a source gave the name and options */
  int max_versions;           /* options */
  int64_t ttl_sec;
  int compression;
  uint32_t block_size;
  uint64_t flushed_seq;       /* from the MANIFEST's records (0 when none) */
  sv_file *files;             /* its store files */
  uint32_t n_files, cap_files;
  kv_memstore *mem;           /* WAL cells not yet written out, or NULL */
} sv_fam;

typedef struct sv_table {
  uint32_t id;                /* table id (the same in the new store) */
  char name[KV_MAX_NAME + 1]; /* its name ("#<id>" when lost) */
  bool named;                 /* a source gave the name */
  bool dropped;               /* a MANIFEST record dropped it */
  bool created;               /* created in the new store */
  sv_fam *fams;               /* its families */
  uint32_t n_fams, cap_fams;
} sv_table;

typedef struct sv {
  kv_env *env;                /* file system of both stores */
  const char *src, *dst;      /* the two directories */
  kv_salvage_report *rep;     /* the report */
  sv_table **tables;          /* every table met */
  uint32_t n_tables, cap_tables;
  uint64_t wal_number;        /* the MANIFEST's oldest needed segment (0: unknown) */
  kv_manifest *man;           /* the new store's MANIFEST */
  kv_version ver;             /* and its version */
  uint64_t next_file;         /* next file number of the new store */
  uint32_t next_table_id;     /* for "#family<id>" tables */
  sv_fam *cache;              /* the family last looked up by id ... */
  sv_table *cache_owner;      /* ... and its table */
  size_t mem_bytes;           /* bytes in the memstores */
  uint64_t segment;           /* WAL segment being read */
  char seg_path[PATH_CAP];    /* its path */
} sv;

static int nomem(void) { return kv_error(KV_ERR_NOMEM, "salvage: out of memory"); }

static void free_tables(sv *s) {
  for (uint32_t t = 0; t < s->n_tables; t++) {
    sv_table *tb = s->tables[t];
    for (uint32_t i = 0; i < tb->n_fams; i++) {
      free(tb->fams[i].files);
      kv_memstore_unref(tb->fams[i].mem);
    }
    free(tb->fams);
    free(tb);
  }
  free(s->tables);
  s->tables = NULL;
  s->n_tables = s->cap_tables = 0;
  s->cache = NULL;
}

static sv_table *find_table(sv *s, uint32_t id) {
  for (uint32_t t = 0; t < s->n_tables; t++)
    if (s->tables[t]->id == id) return s->tables[t];
  return NULL;
}

static sv_fam *find_fam(sv *s, uint32_t id, sv_table **owner) {
  if (!s->cache || s->cache->id != id) {
    s->cache = NULL;
    for (uint32_t t = 0; t < s->n_tables && !s->cache; t++)
      for (uint32_t i = 0; i < s->tables[t]->n_fams; i++)
        if (s->tables[t]->fams[i].id == id) {
          s->cache = &s->tables[t]->fams[i];
          s->cache_owner = s->tables[t];
          break;
        }
  }
  if (s->cache && owner) *owner = s->cache_owner;
  return s->cache;
}

static sv_table *add_table(sv *s, uint32_t id) {
  if (s->n_tables == s->cap_tables) {
    uint32_t nc = s->cap_tables ? s->cap_tables * 2 : 8;
    sv_table **nt = realloc(s->tables, nc * sizeof *nt);
    if (!nt) return NULL;
    s->tables = nt;
    s->cap_tables = nc;
  }
  sv_table *t = calloc(1, sizeof *t);
  if (!t) return NULL;
  t->id = id;
  snprintf(t->name, sizeof t->name, "#%u", id);
  s->tables[s->n_tables++] = t;
  if (id >= s->next_table_id) s->next_table_id = id + 1;
  return t;
}

/* The family `id` of table t, added with a placeholder name and "keep everything" options
** when absent. */
static sv_fam *table_fam(sv *s, sv_table *t, uint32_t id) {
  for (uint32_t i = 0; i < t->n_fams; i++)
    if (t->fams[i].id == id) return &t->fams[i];
  if (t->n_fams == t->cap_fams) {
    uint32_t nc = t->cap_fams ? t->cap_fams * 2 : 4;
    sv_fam *nf = realloc(t->fams, nc * sizeof *nf);
    if (!nf) return NULL;
    t->fams = nf;
    t->cap_fams = nc;
  }
  s->cache = NULL; /* the array may have moved */
  sv_fam *f = &t->fams[t->n_fams++];
  memset(f, 0, sizeof *f);
  f->id = id;
  snprintf(f->name, sizeof f->name, "#%u", id);
  f->max_versions = UNNAMED_VERSIONS;
  f->block_size = KV_DEFAULT_BLOCK_SIZE;
  return f;
}

static sv_file *fam_file(sv_fam *f, uint64_t number) {
  for (uint32_t i = 0; i < f->n_files; i++)
    if (f->files[i].meta.number == number) return &f->files[i];
  if (f->n_files == f->cap_files) {
    uint32_t nc = f->cap_files ? f->cap_files * 2 : 4;
    sv_file *nf = realloc(f->files, nc * sizeof *nf);
    if (!nf) return NULL;
    f->files = nf;
    f->cap_files = nc;
  }
  sv_file *x = &f->files[f->n_files++];
  memset(x, 0, sizeof *x);
  x->meta.number = number;
  return x;
}

/* Take a table's name and families from a MANIFEST edit or a TABLEINFO (the first source to
** name it wins; files and flushed sequence numbers are merged). */
/* Name table tm's families and their options (the first description wins; with `alter`, an
** ALTER_TABLE edit, the options listed replace those known). */
static int describe_as(sv *s, const kv_table_meta *tm, bool from_manifest, bool alter) {
  sv_table *t = find_table(s, tm->id);
  if (!t && !(t = add_table(s, tm->id))) return nomem();
  if (!t->named) {
    snprintf(t->name, sizeof t->name, "%s", tm->name);
    t->named = true;
  }
  for (uint32_t i = 0; i < tm->n_families; i++) {
    const kv_family_meta *fm = &tm->families[i];
    sv_fam *f = table_fam(s, t, fm->id);
    if (!f) return nomem();
    if (!f->named || alter) {
      snprintf(f->name, sizeof f->name, "%s", fm->name);
      f->max_versions = fm->max_versions > 0 ? fm->max_versions : 1;
      f->ttl_sec = fm->ttl_sec;
      f->compression = fm->compression;
      f->block_size = fm->block_size ? fm->block_size : KV_DEFAULT_BLOCK_SIZE;
      f->named = true;
    }
    if (!from_manifest || alter) continue;
    if (fm->flushed_seq > f->flushed_seq) f->flushed_seq = fm->flushed_seq;
    for (uint32_t k = 0; k < fm->n_files; k++) {
      sv_file *x = fam_file(f, fm->files[k].number);
      if (!x) return nomem();
      x->meta = fm->files[k];
      x->named = true;
      x->removed = false;
    }
  }
  return KV_OK;
}

static int describe(sv *s, const kv_table_meta *tm, bool from_manifest) {
  return describe_as(s, tm, from_manifest, false);
}

typedef struct names {
  char **v;        /* entry names (malloc'ed) */
  uint32_t n, cap; /* used, allocated */
} names;

static int collect(void *ctx, const char *name) {
  names *l = ctx;
  if (l->n == l->cap) {
    uint32_t nc = l->cap ? l->cap * 2 : 16;
    char **nv = realloc(l->v, nc * sizeof *nv);
    if (!nv) return 1;
    l->v = nv;
    l->cap = nc;
  }
  if ((l->v[l->n] = strdup(name)) != NULL) l->n++;
  return 0;
}

static void free_names(names *l) {
  for (uint32_t i = 0; i < l->n; i++) free(l->v[i]);
  free(l->v);
  memset(l, 0, sizeof *l);
}

/* A decimal number followed by `suffix`, and nothing else. */
static bool parse_num(const char *s, const char *suffix, uint64_t *out) {
  size_t n = strlen(s), sl = strlen(suffix);
  if (n <= sl || strcmp(s + n - sl, suffix) != 0 || n - sl > 19) return false;
  uint64_t v = 0;
  for (size_t i = 0; i < n - sl; i++) {
    if (s[i] < '0' || s[i] > '9') return false;
    v = v * 10 + (uint64_t)(s[i] - '0');
  }
  *out = v;
  return true;
}

/* ---- 1. the MANIFEST ------------------------------------------------------------------- */

static int m_edit(void *ctx, uint64_t off, const kv_edit *e) {
  (void)off;
  sv *s = ctx;
  sv_fam *f;
  sv_table *t;
  switch (e->kind) {
  case KV_EDIT_SNAPSHOT: /* the whole version follows: start afresh */
    free_tables(s);
    s->wal_number = e->wal_number;
    return KV_OK;
  case KV_EDIT_CREATE_TABLE:
    return describe(s, e->table, true);
  case KV_EDIT_ALTER_TABLE:
    return describe_as(s, e->table, true, true);
  case KV_EDIT_DROP_TABLE:
    if (!(t = find_table(s, e->table_id)) && !(t = add_table(s, e->table_id))) return nomem();
    t->dropped = true;
    return KV_OK;
  case KV_EDIT_ADD_FILE:
  case KV_EDIT_REMOVE_FILE:
  case KV_EDIT_SET_FLUSHED: {
    if (!(f = find_fam(s, e->family_id, NULL))) return KV_OK; /* its table's record was lost:
                                                                 the folders will tell */
    if (e->kind == KV_EDIT_SET_FLUSHED || e->kind == KV_EDIT_ADD_FILE) {
      if (e->flushed_seq > f->flushed_seq) f->flushed_seq = e->flushed_seq;
      if (e->kind == KV_EDIT_SET_FLUSHED) return KV_OK;
    }
    sv_file *x = fam_file(f, e->file.number);
    if (!x) return nomem();
    if (e->kind == KV_EDIT_ADD_FILE) {
      x->meta = e->file;
      x->named = true;
      x->removed = false;
    } else {
      x->removed = true;
    }
    return KV_OK;
  }
  case KV_EDIT_SET_COUNTERS:
    if (e->wal_number > s->wal_number) s->wal_number = e->wal_number;
    return KV_OK;
  default:
    return KV_OK;
  }
}

static int m_damage(void *ctx, uint64_t off, uint64_t len, const char *why) {
  sv *s = ctx;
  char p[PATH_CAP];
  snprintf(p, sizeof p, "%s/MANIFEST", s->src);
  /* Even a torn tail (a crash's torn write, whose edit was never acted on, which kv_open
  ** drops) may be a cut that lost whole records: the MANIFEST is no longer trusted to name
  ** every store file. */
  s->rep->manifest_whole = false;
  return kv_salvage_note(s->rep, KV_SALVAGE_MANIFEST, p, off, len, -1, -1, "%s", why);
}

static int cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

/* The numbers of the old store's WAL segments, ascending, into *nums (malloc'ed). */
static int wal_numbers(sv *s, uint64_t **nums, uint32_t *n) {
  names l = {0};
  *nums = NULL;
  *n = 0;
  int rc = s->env->list(s->env, s->src, collect, &l);
  if (rc) return rc;
  *nums = calloc(l.n ? l.n : 1, sizeof **nums);
  if (!*nums) { free_names(&l); return nomem(); }
  for (uint32_t i = 0; i < l.n; i++) {
    uint64_t num;
    if (strncmp(l.v[i], "wal-", 4) == 0 && parse_num(l.v[i] + 4, ".log", &num)) (*nums)[(*n)++] = num;
  }
  free_names(&l);
  qsort(*nums, *n, sizeof **nums, cmp_u64);
  return KV_OK;
}

static int read_manifest(sv *s) {
  kv_manifest_salvage_cb cb = {s, m_edit, m_damage};
  s->rep->manifest_whole = true;
  int rc = kv_manifest_salvage(s->env, s->src, &cb);
  if (rc == KV_ERR_NOTFOUND) {
    s->rep->manifest_whole = false;
    char p[PATH_CAP];
    snprintf(p, sizeof p, "%s/MANIFEST", s->src);
    return kv_salvage_note(s->rep, KV_SALVAGE_MANIFEST, p, 0, 0, -1, -1,
                           "no MANIFEST: tables named by their TABLEINFO files, every store file "
                           "and WAL segment found is read");
  }
  if (rc != KV_OK || !s->rep->manifest_whole || s->wal_number == 0) return rc;
  /* Cut exactly at a record boundary, the log looks whole; but no segment from the oldest
  ** one it names is deleted before a later record names a newer one (kv_open's check). */
  uint64_t *nums;
  uint32_t n;
  bool found = false;
  if ((rc = wal_numbers(s, &nums, &n)) != KV_OK) return rc;
  for (uint32_t i = 0; i < n; i++) found |= nums[i] == s->wal_number;
  if (!found && n > 0 && nums[n - 1] > s->wal_number) {
    s->rep->manifest_whole = false;
    char p[PATH_CAP];
    snprintf(p, sizeof p, "%s/MANIFEST", s->src);
    rc = kv_salvage_note(s->rep, KV_SALVAGE_MANIFEST, p, 0, 0, -1, -1,
                         "names WAL segment %llu as the oldest still needed, but it is missing "
                         "while newer segments exist: the MANIFEST has lost records",
                         (unsigned long long)s->wal_number);
  }
  free(nums);
  return rc;
}

/* ---- 2. the folders -------------------------------------------------------------------- */

static int read_folders(sv *s) {
  char data[PATH_CAP];
  snprintf(data, sizeof data, "%s/data", s->src);
  names tl = {0};
  if (s->env->exists(s->env, data)) s->env->list(s->env, data, collect, &tl);
  int rc = KV_OK;
  for (uint32_t i = 0; rc == KV_OK && i < tl.n; i++) {
    uint64_t tid;
    if (!parse_num(tl.v[i], "", &tid) || tid == 0 || tid > UINT32_MAX) continue;
    char tdir[PATH_CAP + 32], p[PATH_CAP + 64];
    snprintf(tdir, sizeof tdir, "%s/%s", data, tl.v[i]);
    snprintf(p, sizeof p, "%s/%s", tdir, KV_TABLEINFO);
    kv_table_meta tm;
    int r = kv_tableinfo_read(s->env, p, &tm);
    if (r == KV_OK) {
      if (tm.id == (uint32_t)tid) rc = describe(s, &tm, false);
      else rc = kv_salvage_note(s->rep, KV_SALVAGE_TABLEINFO, p, 0, 0, -1, -1,
                                "names table id %u, not the folder's %llu: not used", tm.id,
                                (unsigned long long)tid);
      kv_table_meta_free(&tm);
    } else if (r == KV_ERR_CORRUPT) {
      rc = kv_salvage_note(s->rep, KV_SALVAGE_TABLEINFO, p, 0, 0, -1, -1, "%s", kv_errmsg());
    } else if (r == KV_ERR_NOMEM) {
      rc = r;
    }
    if (rc) break;
    sv_table *t = find_table(s, (uint32_t)tid);
    if (!t && !(t = add_table(s, (uint32_t)tid))) { rc = nomem(); break; }
    if (t->dropped) continue;
    names fl = {0};
    s->env->list(s->env, tdir, collect, &fl);
    for (uint32_t k = 0; rc == KV_OK && k < fl.n; k++) {
      uint64_t fid;
      if (!parse_num(fl.v[k], "", &fid) || fid == 0 || fid > UINT32_MAX) continue;
      sv_table *owner = NULL;
      sv_fam *f = find_fam(s, (uint32_t)fid, &owner);
      if (f && owner != t) continue; /* the MANIFEST puts it elsewhere: not this folder's */
      if (!f && !(f = table_fam(s, t, (uint32_t)fid))) { rc = nomem(); break; }
      char fdir[PATH_CAP + 64];
      snprintf(fdir, sizeof fdir, "%s/%s", tdir, fl.v[k]);
      names sl = {0};
      s->env->list(s->env, fdir, collect, &sl);
      for (uint32_t j = 0; j < sl.n; j++) {
        uint64_t num;
        if (!parse_num(sl.v[j], ".sf", &num)) continue;
        sv_file *x = fam_file(f, num);
        if (!x) { rc = nomem(); break; }
        x->on_disk = true;
      }
      free_names(&sl);
    }
    free_names(&fl);
  }
  free_names(&tl);
  /* What no source names, said once per table and family. */
  for (uint32_t t = 0; rc == KV_OK && t < s->n_tables; t++) {
    sv_table *tb = s->tables[t];
    if (tb->dropped) continue;
    char p[PATH_CAP];
    snprintf(p, sizeof p, "%s/data/%u", s->src, tb->id);
    if (!tb->named) {
      s->rep->tables_unnamed++;
      rc = kv_salvage_note(s->rep, KV_SALVAGE_NAMES, p, 0, 0, -1, -1,
                           "no MANIFEST record or TABLEINFO names table id %u: its cells are "
                           "kept in table %s", tb->id, tb->name);
    }
    for (uint32_t i = 0; rc == KV_OK && i < tb->n_fams; i++)
      if (!tb->fams[i].named && tb->named)
        rc = kv_salvage_note(s->rep, KV_SALVAGE_NAMES, p, 0, 0, -1, -1,
                             "no source names family id %u of table %s: kept as family %s "
                             "(options lost: every version kept)", tb->fams[i].id, tb->name,
                             tb->fams[i].name);
  }
  return rc;
}

/* ---- 3. the new store ---------------------------------------------------------------------- */

static int create_table(sv *s, sv_table *t) {
  if (t->created) return KV_OK;
  kv_table_meta tm;
  memset(&tm, 0, sizeof tm);
  tm.id = t->id;
  snprintf(tm.name, sizeof tm.name, "%s", t->name);
  for (int k = 1; k < 1000; k++) { /* a name met twice: the later one marked "~<id>" */
    bool clash = false;
    for (uint32_t i = 0; i < s->ver.n_tables && !clash; i++)
      clash = strcmp(s->ver.tables[i].name, tm.name) == 0;
    if (!clash) break;
    if (k == 1) snprintf(tm.name, sizeof tm.name, "%.200s~%u", t->name, t->id);
    else snprintf(tm.name, sizeof tm.name, "%.200s~%u.%d", t->name, t->id, k);
  }
  snprintf(t->name, sizeof t->name, "%s", tm.name);
  tm.n_families = t->n_fams;
  if (t->n_fams > KV_MAX_FAMILIES)
    return kv_error(KV_ERR_INVALID, "salvage: table %s has %u families", t->name, t->n_fams);
  kv_family_meta fm[KV_MAX_FAMILIES];
  memset(fm, 0, sizeof fm);
  for (uint32_t i = 0; i < t->n_fams; i++) {
    const sv_fam *f = &t->fams[i];
    fm[i].id = f->id;
    snprintf(fm[i].name, sizeof fm[i].name, "%s", f->name);
    fm[i].max_versions = f->max_versions;
    fm[i].ttl_sec = f->ttl_sec;
    fm[i].compression = f->compression;
    fm[i].block_size = f->block_size;
  }
  tm.families = fm;
  int rc = kv_tableinfo_write(s->env, s->dst, &tm, true);
  kv_edit e;
  memset(&e, 0, sizeof e);
  e.kind = KV_EDIT_CREATE_TABLE;
  e.table = &tm;
  e.table_id = tm.id;
  if (rc == KV_OK) rc = kv_manifest_apply(s->man, &s->ver, &e, 1);
  if (rc == KV_OK) {
    t->created = true;
    s->rep->tables++;
  }
  return rc;
}

/* A writer for a new store file of family f of table t: *path gets its path. */
static int open_writer(sv *s, const sv_table *t, const sv_fam *f, char *path, size_t cap,
                       uint64_t *number, kv_sf_writer **w) {
  char dir[PATH_CAP - 64];
  snprintf(dir, sizeof dir, "%.3900s/data/%u/%u", s->dst, t->id, f->id);
  int rc = s->env->mkdir(s->env, dir);
  if (rc) return rc;
  *number = s->next_file++;
  snprintf(path, cap, "%s/%llu.sf", dir, (unsigned long long)*number);
  kv_sf_writer_options wo;
  memset(&wo, 0, sizeof wo);
  wo.block_size = f->block_size;
  wo.compression = f->compression;
  return kv_sf_writer_open(s->env, path, &wo, w);
}

/* Finish a writer and name its file in the new MANIFEST (or remove it when empty). */
static int finish_writer(sv *s, const sv_fam *f, kv_sf_writer *w, const char *path,
                         uint64_t number) {
  kv_sf_props props;
  int rc = kv_sf_writer_finish(w, &props);
  if (rc == KV_OK && props.cells == 0) return s->env->remove(s->env, path);
  if (rc == KV_OK) {
    char dir[PATH_CAP];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash) *slash = 0;
    rc = s->env->sync_dir(s->env, dir);
  }
  if (rc != KV_OK) return rc;
  kv_edit e;
  memset(&e, 0, sizeof e);
  e.kind = KV_EDIT_ADD_FILE;
  e.family_id = f->id;
  e.file.number = number;
  e.file.size = props.file_size;
  e.file.min_seq = props.min_seq;
  e.file.max_seq = props.max_seq;
  e.file.cells = props.cells;
  e.file.rows = props.rows;
  if (props.max_seq > s->rep->last_seq) s->rep->last_seq = props.max_seq;
  return kv_manifest_apply(s->man, &s->ver, &e, 1);
}

/* Copy one old store file's readable cells to a new one. */
static int copy_file(sv *s, sv_table *t, sv_fam *f, const sv_file *x) {
  char in[PATH_CAP], out[PATH_CAP];
  snprintf(in, sizeof in, "%s/data/%u/%u/%llu.sf", s->src, t->id, f->id,
           (unsigned long long)x->meta.number);
  uint64_t number;
  kv_sf_writer *w = NULL;
  int rc = open_writer(s, t, f, out, sizeof out, &number, &w);
  if (rc) return rc;
  kv_salvage_sf_result res;
  rc = kv_salvage_sf_copy(s->env, in, w, s->rep, &res);
  if (rc != KV_OK) {
    kv_sf_writer_abort(w);
    s->env->remove(s->env, out);
    return rc;
  }
  return finish_writer(s, f, w, out, number);
}

static int copy_files(sv *s) {
  for (uint32_t t = 0; t < s->n_tables; t++) {
    sv_table *tb = s->tables[t];
    if (tb->dropped || tb->n_fams == 0) continue;
    int rc = create_table(s, tb);
    for (uint32_t i = 0; rc == KV_OK && i < tb->n_fams; i++) {
      sv_fam *f = &tb->fams[i];
      for (uint32_t k = 0; rc == KV_OK && k < f->n_files; k++) {
        const sv_file *x = &f->files[k];
        char p[PATH_CAP];
        snprintf(p, sizeof p, "%s/data/%u/%u/%llu.sf", s->src, tb->id, f->id,
                 (unsigned long long)x->meta.number);
        if (x->removed) continue;          /* a compaction's input, or a dropped file */
        if (x->named && !x->on_disk) {     /* the MANIFEST says it should be there */
          rc = kv_salvage_note(s->rep, KV_SALVAGE_SF_MISSING, p, 0, 0, (int64_t)x->meta.cells,
                               (int64_t)x->meta.rows, "the MANIFEST names it; it is not there%s",
                               s->rep->manifest_whole ? "" : " (or a lost MANIFEST record "
                               "removed it)");
          continue;
        }
        if (!x->named && s->rep->manifest_whole) { /* left by a crash: not part of the store */
          s->rep->files_ignored++;
          continue;
        }
        rc = copy_file(s, tb, f, x);
      }
    }
    if (rc) return rc;
  }
  return KV_OK;
}

/* ---- 4. the WAL ------------------------------------------------------------------------------ */

/* Write every memstore's cells to new store files. */
static int write_mems(sv *s) {
  for (uint32_t t = 0; t < s->n_tables; t++) {
    sv_table *tb = s->tables[t];
    for (uint32_t i = 0; i < tb->n_fams; i++) {
      sv_fam *f = &tb->fams[i];
      if (!f->mem) continue;
      int rc = create_table(s, tb);
      char out[PATH_CAP];
      uint64_t number;
      kv_sf_writer *w = NULL;
      if (rc == KV_OK) rc = open_writer(s, tb, f, out, sizeof out, &number, &w);
      kv_iter *it = rc == KV_OK ? kv_memstore_iter_new(f->mem) : NULL;
      if (rc == KV_OK && !it) rc = nomem();
      if (it) {
        for (it->ops->seek_first(it); rc == KV_OK && it->ops->valid(it); it->ops->next(it))
          rc = kv_sf_writer_add(w, it->ops->cell(it));
        it->ops->destroy(it);
      }
      if (rc == KV_OK) rc = finish_writer(s, f, w, out, number);
      else if (w) kv_sf_writer_abort(w);
      kv_memstore_unref(f->mem);
      f->mem = NULL;
      if (rc) return rc;
    }
  }
  s->mem_bytes = 0;
  return KV_OK;
}

/* The family of a WAL op: a known one, or (the MANIFEST not whole) a table of its own. NULL
** with *skip when its ops are not copied. */
static sv_fam *op_family(sv *s, uint32_t id, int *rc) {
  sv_table *t = NULL;
  sv_fam *f = find_fam(s, id, &t);
  if (f) return t->dropped ? NULL : f;
  if (s->rep->manifest_whole) return NULL; /* a dropped table's: replay skips it too */
  t = add_table(s, s->next_table_id);
  if (!t) { *rc = nomem(); return NULL; }
  snprintf(t->name, sizeof t->name, "#family%u", id);
  if (!(f = table_fam(s, t, id))) { *rc = nomem(); return NULL; }
  s->rep->tables_unnamed++;
  *rc = kv_salvage_note(s->rep, KV_SALVAGE_NAMES, s->seg_path, 0, 0, -1, -1,
                        "WAL ops of family id %u, which no source names (a dropped table's, "
                        "or a table whose name was lost): kept in table %s", id, t->name);
  return f;
}

static int w_record(void *ctx, uint64_t first_seq, int64_t commit_ts, const uint8_t *payload,
                    size_t len) {
  sv *s = ctx;
  const uint8_t *p = payload, *limit = payload + len;
  uint64_t count;
  if (!(p = kv_get_varint(p, limit, &count))) return KV_OK; /* checked: cannot happen */
  s->rep->wal_records++;
  for (uint64_t i = 0; i < count; i++) {
    kv_wal_op op;
    if (kv_wal_decode_op(&p, limit, &op) != KV_OK) break;
    uint64_t seq = first_seq + i;
    int rc = KV_OK;
    sv_fam *f = op_family(s, op.family_id, &rc);
    if (rc) return rc;
    if (!f) { s->rep->wal_ops_dropped++; continue; }
    if (seq <= f->flushed_seq) { s->rep->wal_ops_flushed++; continue; }
    if (!f->mem && !(f->mem = kv_memstore_new())) return nomem();
    kv_cell c = {op.row, op.row_len, op.qual, op.qual_len,
                 op.ts == KV_TS_NOW ? commit_ts : op.ts, seq, op.type, op.value, op.value_len};
    size_t before = kv_memstore_bytes(f->mem);
    if ((rc = kv_memstore_add(f->mem, &c))) return rc;
    s->mem_bytes += kv_memstore_bytes(f->mem) - before;
    s->rep->wal_ops++;
    if (seq > s->rep->last_seq) s->rep->last_seq = seq;
  }
  return s->mem_bytes > MEM_LIMIT ? write_mems(s) : KV_OK;
}

static int w_damage(void *ctx, uint64_t off, uint64_t len, const char *why) {
  sv *s = ctx;
  return kv_salvage_note(s->rep, KV_SALVAGE_WAL, s->seg_path, off, len, -1, -1, "%s", why);
}

static int read_wal(sv *s) {
  uint64_t *nums;
  uint32_t n;
  int rc = wal_numbers(s, &nums, &n);
  for (uint32_t i = 0; rc == KV_OK && i < n; i++) {
    if (nums[i] < s->wal_number) continue; /* flushed whole: kv_open deletes such segments */
    s->segment = nums[i];
    kv_wal_path(s->seg_path, sizeof s->seg_path, s->src, nums[i]);
    s->rep->wal_segments++;
    rc = kv_wal_salvage(s->env, s->seg_path, w_record, w_damage, s);
    if (rc == KV_OK) rc = write_mems(s);
  }
  free(nums);
  return rc;
}

/* ---- the whole ------------------------------------------------------------------------------- */

static int check_dirs(kv_env *env, const char *src, const char *dst) {
  if (!src || !*src || !dst || !*dst) return kv_error(KV_ERR_INVALID, "salvage: empty path");
  if (strcmp(src, dst) == 0)
    return kv_error(KV_ERR_INVALID, "salvage: the new store must be another directory than %s", src);
  names l = {0};
  if (!env->exists(env, src) || env->list(env, src, collect, &l) != KV_OK) {
    free_names(&l);
    return kv_error(KV_ERR_NOTFOUND, "salvage: no store directory %s", src);
  }
  free_names(&l);
  if (env->exists(env, dst)) {
    int rc = env->list(env, dst, collect, &l);
    uint32_t n = l.n;
    free_names(&l);
    if (rc != KV_OK) return kv_error(KV_ERR_EXISTS, "salvage: %s exists and is not a directory", dst);
    if (n > 0) return kv_error(KV_ERR_EXISTS, "salvage: %s is not empty: the new store needs an "
                               "empty or new directory", dst);
  }
  return KV_OK;
}

int kv_salvage(kv_env *env, const char *src, const char *dst, kv_salvage_report *rep) {
  if (!rep) return kv_error(KV_MISUSE, "kv_salvage: NULL report");
  memset(rep, 0, sizeof *rep);
  if (!env) env = kv_env_posix();
  int rc = check_dirs(env, src, dst);
  if (rc) return rc;
  char lock_path[PATH_CAP];
  snprintf(lock_path, sizeof lock_path, "%s/LOCK", src);
  kv_file *lock = NULL;
  rc = env->lock(env, lock_path, &lock);
  if (rc == KV_ERR_LOCKED) return kv_error(KV_ERR_LOCKED, "database is locked: %s", src);
  if (rc) return rc;
  sv s;
  memset(&s, 0, sizeof s);
  s.env = env;
  s.src = src;
  s.dst = dst;
  s.rep = rep;
  s.next_file = 1;
  s.next_table_id = 1;
  rc = read_manifest(&s);
  if (rc == KV_OK) rc = read_folders(&s);
  if (rc == KV_OK) rc = env->mkdir(env, dst);
  if (rc == KV_OK) rc = kv_manifest_open(env, dst, true, &s.man, &s.ver);
  if (rc == KV_OK) rc = copy_files(&s);
  if (rc == KV_OK) rc = read_wal(&s);
  if (rc == KV_OK) {
    kv_edit e;
    memset(&e, 0, sizeof e);
    e.kind = KV_EDIT_SET_COUNTERS;
    e.next_file_number = s.next_file;
    e.last_seq = rep->last_seq > 1 ? rep->last_seq : 1;
    rc = kv_manifest_apply(s.man, &s.ver, &e, 1);
  }
  if (rc == KV_OK) rc = env->sync_dir(env, dst);
  int keep = rc;
  char msg[512] = "";
  if (rc) snprintf(msg, sizeof msg, "%s", kv_errmsg());
  if (s.man) {
    int r = kv_manifest_close(s.man);
    if (r && !rc) {
      keep = r;
      snprintf(msg, sizeof msg, "%s", kv_errmsg());
    }
  }
  kv_version_free(&s.ver);
  free_tables(&s);
  env->unlock(env, lock);
  return keep ? kv_error(keep, "%s", msg) : KV_OK;
}
