/*
** kv/db/db_open.c: opening and closing a store (kv_open, kv_close): the LOCK file, MANIFEST
** replay into run-time families, opening store-file readers, deleting files the MANIFEST
** does not name (left by a crash during a flush or compaction), replaying the WAL segments
** into the memstores, writing again the TABLEINFO (kv/db/manifest.h) of tables whose file is
** missing or damaged, and starting a fresh WAL segment. Also the store-file handles shared
** by families and scans.
**
** WAL replay rule: op i of a record with first sequence number s goes to family f only when
** s + i > f.flushed_seq (older ops are already in f's store files); ops of families that no
** longer exist (dropped tables) are skipped; KV_TS_NOW becomes the record's commit time.
**
** The log-behind-MANIFEST check (kv_db_check_log_position): flushes and bulk loads record
** in the MANIFEST the log position their store files depend on (LOG_POSITION); an open
** whose log ends before it (a copy made file by file while the store was written: the log
** copied first, the MANIFEST and store files later) fails with KV_ERR_CORRUPT naming the
** files, instead of opening with part of a transaction visible (RocksDB's "SST file is
** ahead of WAL").
**
** A read-only open takes none of this path: kv/db/db_follow.c builds its view without writing.
** Not here: DDL and statistics (kv/db/db_ddl.c), commits (kv/db/db_write.c), flushes
** (kv/db/db_flush.c), compaction (kv/db/compact.c).
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kv/util/cache.h"
#include "kv/util/coding.h"
#include "kv/db/db_impl.h"
#include "kv/util/status.h"

#define PATH_CAP 4096 /* bytes for any path built here */

/* ---- store-file handles --------------------------------------------------------------- */

void kv_sfh_ref(kv_sfh *h) { atomic_fetch_add_explicit(&h->refs, 1, memory_order_relaxed); }

void kv_sfh_unref(kv_sfh *h) {
  if (!h) return;
  if (atomic_fetch_sub_explicit(&h->refs, 1, memory_order_acq_rel) != 1) return;
  if (h->index_held) atomic_fetch_sub(h->index_pool, h->index_held);
  if (h->cache_data) kv_cache_note_data(h->cache, -(int64_t)h->cache_data);
  kv_sf_close(h->reader);
  if (atomic_load(&h->obsolete)) {
    if (!h->keep_file) h->env->remove(h->env, h->path);
    if (h->cache) kv_cache_erase_file(h->cache, h->meta.number);
  }
  free(h->path);
  free(h);
}

void kv_db_family_dir(kv_db *db, const kv_fam *f, char *buf, size_t cap) {
  snprintf(buf, cap, "%s/data/%u/%u", db->path, f->table_id, f->id);
}

void kv_db_sf_path(kv_db *db, const kv_fam *f, uint64_t number, char *buf, size_t cap) {
  snprintf(buf, cap, "%s/data/%u/%u/%llu.sf", db->path, f->table_id, f->id,
           (unsigned long long)number);
}

int kv_sfh_open(kv_db *db, const kv_fam *f, const kv_file_meta *meta, kv_sfh **out) {
  *out = NULL;
  char path[PATH_CAP];
  kv_db_sf_path(db, f, meta->number, path, sizeof path);
  kv_sfh *h = calloc(1, sizeof *h);
  if (!h) return kv_error(KV_ERR_NOMEM, "open %s: out of memory", path);
  h->path = strdup(path);
  if (!h->path) {
    free(h);
    return kv_error(KV_ERR_NOMEM, "open %s: out of memory", path);
  }
  /* the index whole while the open files' whole indexes stay within index_memory, else
     paged (kv/sf/sf_index.c); opens that run at once (a bulk load's writer threads, a
     flush beside a compaction) may each pass the bound by their one file */
  uint64_t held = atomic_load(&db->index_held);
  uint64_t left = held < db->opts.index_memory ? db->opts.index_memory - held : 0;
  int rc = kv_sf_open_budget(db->env, path, left, &h->reader);
  if (rc) {
    free(h->path);
    free(h);
    return rc;
  }
  if (!kv_sf_index_paged(h->reader)) {
    h->index_held = kv_sf_index_mem(h->reader);
    h->index_pool = &db->index_held;
    atomic_fetch_add(&db->index_held, h->index_held);
  }
  atomic_init(&h->refs, 1);
  atomic_init(&h->obsolete, false);
  h->meta = *meta;
  h->keep_file = db->opts.read_only;
  h->cache = db->cache;
  kv_sf_set_cache(h->reader, db->cache, meta->number);
  const kv_sf_props *pr = kv_sf_get_props(h->reader);
  if (db->cache && pr->format_version >= 3 && pr->raw_bytes <= INT64_MAX) {
    h->cache_data = pr->raw_bytes; /* the block cache's choice of form (kv_cache_form) */
    kv_cache_note_data(db->cache, (int64_t)h->cache_data);
  }
  h->env = db->env;
  *out = h;
  return KV_OK;
}

int kv_fam_add_file(kv_fam *f, kv_sfh *h) {
  if (f->n_files == f->cap_files) {
    uint32_t nc = f->cap_files ? f->cap_files * 2 : 8;
    kv_sfh **nf = realloc(f->files, nc * sizeof *nf);
    if (!nf) return kv_error(KV_ERR_NOMEM, "out of memory adding a store file");
    f->files = nf;
    f->cap_files = nc;
  }
  f->files[f->n_files++] = h;
  return KV_OK;
}

kv_fam *kv_db_family(kv_db *db, uint32_t id) {
  if (id >= db->n_fam_slots) return NULL;
  kv_fam *f = db->fams[id];
  return f && !f->dropped ? f : NULL;
}

/* ---- run-time families from the version ----------------------------------------------- */

static int set_fam_slot(kv_db *db, kv_fam *f) {
  if (f->id >= db->n_fam_slots) {
    uint32_t n = db->n_fam_slots ? db->n_fam_slots : 16;
    while (n <= f->id) n *= 2;
    kv_fam **nf = realloc(db->fams, n * sizeof *nf);
    if (!nf) return kv_error(KV_ERR_NOMEM, "out of memory");
    memset(nf + db->n_fam_slots, 0, (n - db->n_fam_slots) * sizeof *nf);
    db->fams = nf;
    db->n_fam_slots = n;
  }
  db->fams[f->id] = f;
  return KV_OK;
}

kv_fam *kv_fam_new(kv_db *db, uint32_t table_id, const kv_family_meta *fm) {
  kv_fam *f = calloc(1, sizeof *f);
  if (!f) return NULL;
  f->id = fm->id;
  f->table_id = table_id;
  snprintf(f->name, sizeof f->name, "%s", fm->name);
  f->max_versions = fm->max_versions > 0 ? fm->max_versions : 1;
  f->ttl_sec = fm->ttl_sec;
  f->compression = fm->compression;
  f->block_size = fm->block_size ? fm->block_size : KV_DEFAULT_BLOCK_SIZE;
  f->flushed_seq = fm->flushed_seq;
  const kv_table_meta *tm = NULL; /* its region boundaries, when db->ver has its table */
  for (uint32_t i = 0; i < db->ver.n_tables; i++)
    if (db->ver.tables[i].id == table_id) tm = &db->ver.tables[i];
  f->regions = kv_regions_new(tm);
  f->mem = kv_memstore_new();
  if (!f->mem || (tm && tm->n_bounds && !f->regions) || set_fam_slot(db, f)) {
    kv_memstore_unref(f->mem);
    kv_regions_unref(f->regions);
    free(f);
    return NULL;
  }
  return f;
}

void kv_fam_free(kv_fam *f) {
  if (!f) return;
  kv_memstore_unref(f->mem);
  for (uint32_t i = 0; i < f->n_imm; i++) kv_memstore_unref(f->imms[i]);
  free(f->imms);
  free(f->imm_logs);
  free(f->imm_seqs);
  free(f->imm_pos);
  for (uint32_t i = 0; i < f->n_files; i++) kv_sfh_unref(f->files[i]);
  free(f->files);
  kv_qualset_free(&f->dead);
  kv_regions_unref(f->regions);
  free(f);
}

static int load_families(kv_db *db) {
  for (uint32_t t = 0; t < db->ver.n_tables; t++) {
    kv_table_meta *tm = &db->ver.tables[t];
    for (uint32_t i = 0; i < tm->n_families; i++) {
      kv_family_meta *fm = &tm->families[i];
      kv_fam *f = kv_fam_new(db, tm->id, fm);
      if (!f) return kv_error(KV_ERR_NOMEM, "kv_open: out of memory");
      for (uint32_t k = 0; k < fm->n_files; k++) {
        kv_sfh *h;
        int rc = kv_sfh_open(db, f, &fm->files[k], &h);
        if (rc) return rc;
        rc = kv_fam_add_file(f, h);
        if (rc) {
          kv_sfh_unref(h);
          return rc;
        }
      }
    }
  }
  return KV_OK;
}

/* ---- deleting what the MANIFEST does not name ---------------------------------------- */

typedef struct name_list {
  char **names;   /* entry names (malloc'ed) */
  uint32_t n;     /* entries */
  uint32_t cap;   /* allocated */
} name_list;

static int collect(void *ctx, const char *name) {
  name_list *l = ctx;
  if (l->n == l->cap) {
    uint32_t nc = l->cap ? l->cap * 2 : 16;
    char **nn = realloc(l->names, nc * sizeof *nn);
    if (!nn) return 1;
    l->names = nn;
    l->cap = nc;
  }
  l->names[l->n] = strdup(name);
  if (l->names[l->n]) l->n++;
  return 0;
}

static void free_names(name_list *l) {
  for (uint32_t i = 0; i < l->n; i++) free(l->names[i]);
  free(l->names);
  memset(l, 0, sizeof *l);
}

/* buf = a + "/" + b; false when it does not fit. */
static bool join(char *buf, size_t cap, const char *a, const char *b) {
  int n = snprintf(buf, cap, "%s/%s", a, b);
  return n >= 0 && (size_t)n < cap;
}

static bool parse_u64(const char *s, const char *suffix, uint64_t *out) {
  size_t n = strlen(s), sl = strlen(suffix);
  if (n <= sl || strcmp(s + n - sl, suffix) != 0) return false;
  uint64_t v = 0;
  for (size_t i = 0; i < n - sl; i++) {
    if (s[i] < '0' || s[i] > '9') return false;
    v = v * 10 + (uint64_t)(s[i] - '0');
  }
  *out = v;
  return true;
}

/* Delete a folder and the files in it and in its sub-folders (two levels are enough for
** data/<table>/<family>/). Best effort. */
static void remove_tree(kv_env *env, const char *dir, int depth) {
  name_list l = {0};
  if (env->list(env, dir, collect, &l) == KV_OK) {
    for (uint32_t i = 0; i < l.n; i++) {
      char p[PATH_CAP];
      if (!join(p, sizeof p, dir, l.names[i])) continue;
      if (env->remove(env, p) != KV_OK && depth > 0) remove_tree(env, p, depth - 1);
    }
  }
  free_names(&l);
  env->rmdir(env, dir);
}

static const kv_table_meta *find_table_id(kv_db *db, uint32_t id) {
  for (uint32_t t = 0; t < db->ver.n_tables; t++)
    if (db->ver.tables[t].id == id) return &db->ver.tables[t];
  return NULL;
}

static void delete_unknown_files(kv_db *db, uint64_t *max_number) {
  char data[PATH_CAP];
  snprintf(data, sizeof data, "%s/data", db->path);
  name_list tables = {0};
  if (db->env->list(db->env, data, collect, &tables) != KV_OK) return;
  for (uint32_t t = 0; t < tables.n; t++) {
    char tdir[PATH_CAP];
    if (!join(tdir, sizeof tdir, data, tables.names[t])) continue;
    uint64_t tid;
    const kv_table_meta *tm = NULL;
    if (parse_u64(tables.names[t], "", &tid) && tid <= UINT32_MAX)
      tm = find_table_id(db, (uint32_t)tid);
    if (!tm) {
      remove_tree(db->env, tdir, 1);
      continue;
    }
    name_list fams = {0};
    db->env->list(db->env, tdir, collect, &fams);
    for (uint32_t i = 0; i < fams.n; i++) {
      char fdir[PATH_CAP];
      if (!join(fdir, sizeof fdir, tdir, fams.names[i])) continue;
      if (strcmp(fams.names[i], KV_TABLEINFO) == 0) continue; /* the table's own file */
      if (strcmp(fams.names[i], KV_TABLEINFO ".tmp") == 0) { /* a write cut short */
        db->env->remove(db->env, fdir);
        continue;
      }
      uint64_t fid;
      kv_fam *f = NULL;
      if (parse_u64(fams.names[i], "", &fid) && fid <= UINT32_MAX)
        f = kv_db_family(db, (uint32_t)fid);
      if (!f || f->table_id != tm->id) {
        remove_tree(db->env, fdir, 0);
        continue;
      }
      name_list files = {0};
      db->env->list(db->env, fdir, collect, &files);
      bool removed = false;
      for (uint32_t k = 0; k < files.n; k++) {
        uint64_t num;
        bool known = false;
        if (parse_u64(files.names[k], ".sf", &num)) {
          if (num > *max_number) *max_number = num;
          for (uint32_t j = 0; j < f->n_files; j++)
            if (f->files[j]->meta.number == num) known = true;
        }
        if (!known) {
          char p[PATH_CAP];
          if (join(p, sizeof p, fdir, files.names[k])) db->env->remove(db->env, p);
          removed = true;
        }
      }
      if (removed) db->env->sync_dir(db->env, fdir);
      free_names(&files);
    }
    free_names(&fams);
  }
  free_names(&tables);
}

/* Write the TABLEINFO of every table whose file is missing, damaged, names another table or
** other families or options (a store made before it existed; kv_create_table and
** kv_alter_table write it unsynced, so a power cut may lose it, or leave one an ALTER that
** failed wrote): what a salvage needs to name the table without the MANIFEST. */
static int write_missing_tableinfo(kv_db *db) {
  for (uint32_t t = 0; t < db->ver.n_tables; t++) {
    const kv_table_meta *want = &db->ver.tables[t];
    char p[PATH_CAP];
    snprintf(p, sizeof p, "%s/data/%u/%s", db->path, want->id, KV_TABLEINFO);
    kv_table_meta got;
    bool same = kv_tableinfo_read(db->env, p, &got) == KV_OK && got.id == want->id &&
                strcmp(got.name, want->name) == 0 && got.n_families == want->n_families;
    for (uint32_t i = 0; same && i < got.n_families; i++)
      same = got.families[i].id == want->families[i].id &&
             strcmp(got.families[i].name, want->families[i].name) == 0 &&
             got.families[i].max_versions == want->families[i].max_versions &&
             got.families[i].ttl_sec == want->families[i].ttl_sec &&
             got.families[i].compression == want->families[i].compression &&
             got.families[i].block_size == want->families[i].block_size; /* kv_alter_table's */
    kv_table_meta_free(&got);
    if (same) continue;
    int rc = kv_tableinfo_write(db->env, db->path, want, true);
    if (rc) return rc;
  }
  kv_error_clear();
  return KV_OK;
}

/* ---- WAL replay ----------------------------------------------------------------------- */

typedef struct replay_ctx {
  kv_db *db;          /* the store */
  uint64_t segment;   /* segment being replayed */
  uint64_t seg_bytes; /* bytes of the segment once replayed (its good records) */
  uint64_t max_seq;   /* highest sequence number met */
  uint64_t log_max;   /* highest sequence number of a record replayed (0: none) */
  uint64_t seg_records; /* records of the segment being replayed */
  char path[PATH_CAP];/* its file name, for messages */
} replay_ctx;

/* Up to two store files of v whose cells are newer than sequence number `seq`, as paths,
** into buf. */
static void files_newer(kv_db *db, const kv_version *v, uint64_t seq, char *buf, size_t cap) {
  size_t used = 0;
  int n = 0, more = 0;
  buf[0] = 0;
  for (uint32_t t = 0; t < v->n_tables; t++)
    for (uint32_t i = 0; i < v->tables[t].n_families; i++) {
      const kv_family_meta *fm = &v->tables[t].families[i];
      for (uint32_t k = 0; k < fm->n_files; k++) {
        if (fm->files[k].max_seq <= seq) continue;
        if (n == 2) { more++; continue; }
        int w = snprintf(buf + used, cap - used, "%s%s/data/%u/%u/%llu.sf", n ? ", " : "",
                         db->path, v->tables[t].id, fm->id,
                         (unsigned long long)fm->files[k].number);
        if (w > 0 && (size_t)w < cap - used) used += (size_t)w;
        n++;
      }
    }
  if (more && used < cap) snprintf(buf + used, cap - used, " and %d more", more);
  if (!n) snprintf(buf, cap, "(none named)");
}

int kv_db_check_log_position(kv_db *db, const kv_version *v, uint64_t have,
                             uint64_t log_max_seq) {
  if (!v->log_segment || !v->log_offset || v->log_segment < v->wal_number) return KV_OK;
  if (have != UINT64_MAX && have >= v->log_offset) return KV_OK;
  char seg[PATH_CAP], got[96], files[1024];
  kv_wal_path(seg, sizeof seg, db->path, v->log_segment);
  if (have == UINT64_MAX) snprintf(got, sizeof got, "it is missing");
  else snprintf(got, sizeof got, "it holds %llu bytes", (unsigned long long)have);
  files_newer(db, v, log_max_seq, files, sizeof files);
  return kv_error(KV_ERR_CORRUPT,
                  "the log ends before what the MANIFEST and the store files show: %s/MANIFEST "
                  "needs WAL segment %s up to byte %llu (sequence number %llu), but %s; newer "
                  "store files: %s. The log was copied before them (a copy made file by file "
                  "while the store was written?) and would show part of some transactions: "
                  "copy the store with its writer stopped, or with rowan_backup (.backup)",
                  db->path, seg, (unsigned long long)v->log_offset,
                  (unsigned long long)v->log_seq, got, files);
}

/* Bytes of the file at path into *out. */
static int segment_size(kv_db *db, const char *path, uint64_t *out) {
  kv_file *f;
  int rc = db->env->open(db->env, path, KV_OPEN_READ, &f);
  if (rc) return rc;
  rc = db->env->size(f, out);
  db->env->close(f);
  return rc;
}

static int replay_record(void *ctx, uint64_t first_seq, int64_t commit_ts,
                         const uint8_t *payload, size_t len) {
  replay_ctx *rc = ctx;
  kv_db *db = rc->db;
  const uint8_t *p = payload, *limit = payload + len;
  uint64_t count;
  p = kv_get_varint(p, limit, &count);
  if (!p || count > len)
    return kv_error(KV_ERR_CORRUPT, "%s: record at sequence %llu has a bad op count",
                    rc->path, (unsigned long long)first_seq);
  for (uint64_t i = 0; i < count; i++) {
    kv_wal_op op;
    if (kv_wal_decode_op(&p, limit, &op) != KV_OK)
      return kv_error(KV_ERR_CORRUPT, "%s: record at sequence %llu: op %llu is damaged",
                      rc->path, (unsigned long long)first_seq, (unsigned long long)i);
    kv_fam *f = kv_db_family(db, op.family_id);
    uint64_t seq = first_seq + i;
    if (!f || seq <= f->flushed_seq) continue;
    kv_cell c = {op.row, op.row_len, op.qual, op.qual_len,
                 op.ts == KV_TS_NOW ? commit_ts : op.ts, seq, op.type, op.value,
                 op.value_len};
    if (kv_memstore_cells(f->mem) == 0) f->mem_log = rc->segment;
    int r = kv_memstore_add(f->mem, &c);
    if (r) return r;
  }
  if (p != limit)
    return kv_error(KV_ERR_CORRUPT, "%s: record at sequence %llu has trailing bytes",
                    rc->path, (unsigned long long)first_seq);
  if (count && first_seq + count - 1 > rc->max_seq) rc->max_seq = first_seq + count - 1;
  if (count && first_seq + count - 1 > rc->log_max) rc->log_max = first_seq + count - 1;
  rc->seg_records++;
  rc->seg_bytes += KV_WAL_HEADER + len;
  db->stat_replay_records++;
  return KV_OK;
}

static int cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

static int replay_wal(kv_db *db, uint64_t *max_number) {
  name_list l = {0};
  int rc = db->env->list(db->env, db->path, collect, &l);
  if (rc) return rc;
  uint64_t *nums = calloc(l.n ? l.n : 1, sizeof *nums);
  uint32_t n = 0;
  if (!nums) {
    free_names(&l);
    return kv_error(KV_ERR_NOMEM, "kv_open: out of memory");
  }
  for (uint32_t i = 0; i < l.n; i++) {
    uint64_t num;
    if (strncmp(l.names[i], "wal-", 4) == 0 && parse_u64(l.names[i] + 4, ".log", &num))
      nums[n++] = num;
  }
  free_names(&l);
  qsort(nums, n, sizeof *nums, cmp_u64);
  /* The MANIFEST names the oldest WAL segment still needed, and nothing deletes that segment
  ** until a later MANIFEST record names a newer one. If it is gone while newer segments are
  ** here, the MANIFEST lost its last records (cut at a record boundary, or restored from an
  ** old copy): opening would silently drop the store files those records named. */
  if (db->ver.wal_number > 0 && n > 0 && nums[n - 1] > db->ver.wal_number) {
    bool found = false;
    for (uint32_t i = 0; i < n && !found; i++) found = nums[i] == db->ver.wal_number;
    if (!found) {
      char p[PATH_CAP];
      kv_wal_path(p, sizeof p, db->path, db->ver.wal_number);
      free(nums);
      return kv_error(KV_ERR_CORRUPT,
                      "%s/MANIFEST: names WAL segment %s as the oldest still needed, but it is "
                      "missing while newer segments exist: the MANIFEST has lost records",
                      db->path, p);
    }
  }
  replay_ctx ctx;
  ctx.db = db;
  ctx.max_seq = db->ver.last_seq;
  ctx.log_max = 0;
  uint64_t pos_have = UINT64_MAX; /* bytes of the segment the log position names */
  for (uint32_t i = 0; i < n && rc == KV_OK; i++) {
    if (nums[i] > *max_number) *max_number = nums[i];
    if (nums[i] < db->ver.wal_number) {
      char p[PATH_CAP];
      kv_wal_path(p, sizeof p, db->path, nums[i]);
      db->env->remove(db->env, p);
      continue;
    }
    ctx.segment = nums[i];
    ctx.seg_bytes = 0;
    ctx.seg_records = 0;
    kv_wal_path(ctx.path, sizeof ctx.path, db->path, nums[i]);
    uint64_t dropped = 0;
    rc = kv_wal_replay_ex(db->env, db->path, nums[i], i + 1 == n, replay_record, &ctx,
                          &dropped);
    if (dropped) {
      db->stat_dropped_bytes = dropped;
      db->stat_dropped_segment = nums[i];
    }
    /* the segment's bytes on disk: the callback sees a record-form record expanded */
    if (rc == KV_OK) rc = segment_size(db, ctx.path, &ctx.seg_bytes);
    if (rc == KV_OK) rc = kv_db_wal_live_add(db, nums[i], ctx.seg_bytes);
    if (rc == KV_OK && nums[i] == db->ver.log_segment) pos_have = ctx.seg_bytes;
    if (rc == KV_OK && ctx.seg_records) { /* the end of the last record: freezes record it */
      db->wal_end.seg = nums[i];
      db->wal_end.off = ctx.seg_bytes;
      db->wal_end.seq = ctx.log_max;
    }
    db->stat_replay_segments++;
    db->stat_replay_bytes += ctx.seg_bytes;
  }
  free(nums);
  if (rc == KV_OK) rc = kv_db_check_log_position(db, &db->ver, pos_have, ctx.log_max);
  /* Sequence number 1 is reserved for "nothing written yet", so a snapshot taken on an
  ** empty store is 1, never 0 (0 in kv_scan_options.snapshot means the latest). */
  if (ctx.max_seq < 1) ctx.max_seq = 1;
  if (rc == KV_OK)
    atomic_store_explicit(&db->last_seq, ctx.max_seq, memory_order_release);
  return rc;
}

/* ---- open / close --------------------------------------------------------------------- */

void kv_options_init(kv_options *opts) {
  if (!opts) return;
  memset(opts, 0, sizeof *opts);
  opts->sync_mode = KV_SYNC_FULL;
}

static void free_db(kv_db *db) {
  for (uint32_t i = 0; i < db->n_fam_slots; i++) {
    kv_fam_free(db->fams[i]);
  }
  free(db->fams);
  free(db->wal_live);
  free(db->wal_live_bytes);
  free(db->commit_ops);
  free(db->snaps);
  kv_cache_free(db->cache); /* after the families: no reader is left */
  kv_cache_free(db->colcache); /* kv/colscan/colscan.c's column entries */
  kv_version_free(&db->ver);
  kv_db_follow_free(db);
  pthread_mutex_destroy(&db->mu);
  pthread_cond_destroy(&db->bg_cv);
  pthread_cond_destroy(&db->bg_done_cv);
  free(db->path);
  free(db);
}

int kv_open(const char *path, const kv_options *opts, kv_db **out) {
  if (!out) return kv_error(KV_MISUSE, "kv_open: NULL out");
  *out = NULL;
  if (!path || !*path) return kv_error(KV_ERR_INVALID, "kv_open: empty path");
  kv_options o;
  if (opts) o = *opts;
  else kv_options_init(&o);
  if (o.sync_mode < KV_SYNC_FULL || o.sync_mode > KV_SYNC_OFF)
    return kv_error(KV_ERR_INVALID, "kv_open: bad sync_mode %d", o.sync_mode);
  if (o.block_cache_form < KV_CACHE_FORM_AUTO || o.block_cache_form > KV_CACHE_FORM_NARROW)
    return kv_error(KV_ERR_INVALID, "kv_open: bad block_cache_form %d (0 auto, 1 wide, 2 narrow)",
                    o.block_cache_form);
  if (o.compaction_trigger < 0)
    return kv_error(KV_ERR_INVALID, "kv_open: negative compaction_trigger");
  if (o.max_lookback_ms < 0)
    return kv_error(KV_ERR_INVALID, "kv_open: negative max_lookback_ms %lld",
                    (long long)o.max_lookback_ms);
  if (!o.env) o.env = kv_env_posix();
  if (!o.memstore_flush_size) o.memstore_flush_size = (size_t)64 << 20;
  if (!o.memstore_limit) o.memstore_limit = (size_t)512 << 20;
  if (!o.block_cache_size) o.block_cache_size = (size_t)64 << 20;
  if (!o.index_memory) o.index_memory = KV_INDEX_MEMORY_DEFAULT;
  if (!o.wal_limit) /* twice a memstore, at least 128 MiB: docs/KV.md, "WAL size bound" */
    o.wal_limit = o.memstore_flush_size * 2 > ((size_t)128 << 20) ? o.memstore_flush_size * 2
                                                                  : (size_t)128 << 20;
  if (o.wal_limit < ((size_t)64 << 10)) o.wal_limit = (size_t)64 << 10;
  if (!o.compaction_trigger) o.compaction_trigger = 4;
  if (o.compaction_trigger < 2) o.compaction_trigger = 2;
  kv_env *env = o.env;

  if (!env->exists(env, path)) {
    if (!o.create_if_missing || o.read_only)
      return kv_error(KV_ERR_NOTFOUND, "kv_open: no store at '%s'", path);
    int rc = env->mkdir(env, path);
    if (rc) return rc;
  }
  kv_db *db = calloc(1, sizeof *db);
  if (!db) return kv_error(KV_ERR_NOMEM, "kv_open: out of memory");
  db->env = env;
  db->opts = o;
  pthread_mutex_init(&db->mu, NULL);
  pthread_cond_init(&db->bg_cv, NULL);
  pthread_cond_init(&db->bg_done_cv, NULL);
  db->path = strdup(path);
  if (o.block_cache_size > KV_BLOCK_CACHE_OFF) {
    /* kv/colscan/colscan.c's column cache takes up to a quarter of the budget (when that is
       at least 64 KiB); the block cache has the rest and whatever the column cache leaves
       unused (kv_cache_share) */
    size_t col = o.block_cache_size / 4 >= (64u << 10) ? o.block_cache_size / 4 : 0;
    db->cache = kv_cache_new(o.block_cache_size);
    if (db->cache && o.block_cache_form == KV_CACHE_FORM_WIDE)
      kv_cache_set_data_limit(db->cache, SIZE_MAX);
    else if (db->cache && o.block_cache_form == KV_CACHE_FORM_NARROW)
      kv_cache_set_data_limit(db->cache, 0);
    if (col) db->colcache = kv_cache_new(col);
    if (db->cache && db->colcache) kv_cache_share(db->cache, db->colcache);
  }
  if (!db->path || (o.block_cache_size > KV_BLOCK_CACHE_OFF && !db->cache) ||
      (o.block_cache_size / 4 >= (64u << 10) && o.block_cache_size > KV_BLOCK_CACHE_OFF &&
       !db->colcache)) {
    kv_cache_free(db->cache);
    kv_cache_free(db->colcache);
    free(db->path);
    pthread_mutex_destroy(&db->mu);
    free(db);
    return kv_error(KV_ERR_NOMEM, "kv_open: out of memory");
  }
  if (o.read_only) { /* beside a writer, writing nothing: no LOCK (kv/db/db_follow.c) */
    int rc = kv_db_follow_open(db);
    if (rc) {
      char msg[1536];
      snprintf(msg, sizeof msg, "%s", kv_errmsg());
      free_db(db);
      return kv_error(rc, "%s", msg);
    }
    *out = db;
    return KV_OK;
  }
  char p[PATH_CAP];
  snprintf(p, sizeof p, "%s/LOCK", path);
  int rc = env->lock(env, p, &db->lock);
  if (rc == KV_ERR_LOCKED) rc = kv_error(KV_ERR_LOCKED, "database is locked: %s", path);
  if (rc) {
    db->lock = NULL;
    free_db(db);
    return rc;
  }
  snprintf(p, sizeof p, "%s/MANIFEST", path);
  if (!env->exists(env, p) && !o.create_if_missing) {
    rc = kv_error(KV_ERR_NOTFOUND, "kv_open: '%s' has no MANIFEST (not a store)", path);
  } else {
    rc = kv_manifest_open(env, path, true, &db->man, &db->ver);
  }
  if (rc == KV_OK) rc = load_families(db);
  uint64_t max_number = 0;
  if (rc == KV_OK) delete_unknown_files(db, &max_number);
  if (rc == KV_OK) rc = write_missing_tableinfo(db);
  if (rc == KV_OK) rc = replay_wal(db, &max_number);
  if (rc == KV_OK && db->ver.next_file_number <= max_number)
    db->ver.next_file_number = max_number + 1;
  atomic_init(&db->next_file, db->ver.next_file_number);
  if (rc == KV_OK) {
    uint64_t num = kv_db_new_file_number(db);
    rc = kv_wal_create(env, path, num, o.sync_mode, &db->wal);
    if (rc == KV_OK) rc = env->sync_dir(env, path);
    if (rc == KV_OK) rc = kv_db_wal_live_add(db, num, 0);
    if (rc == KV_OK) rc = kv_db_write_counters(db);
    if (rc == KV_OK) kv_db_delete_old_wal(db); /* what the counters say no family needs */
    if (rc == KV_OK) rc = kv_db_bg_start(db);
    if (rc == KV_OK) rc = kv_db_maybe_flush(db);
  }
  if (rc) {
    int keep = rc;
    char msg[512];
    snprintf(msg, sizeof msg, "%s", kv_errmsg());
    kv_db_bg_stop(db);
    if (db->wal) kv_wal_close(db->wal);
    if (db->man) kv_manifest_close(db->man);
    env->unlock(env, db->lock);
    free_db(db);
    return kv_error(keep, "%s", msg);
  }
  *out = db;
  return KV_OK;
}

int kv_block_cache_get_stats(kv_db *db, kv_block_cache_stats *out) {
  if (!db || !out) return kv_error(KV_MISUSE, "kv_block_cache_get_stats: NULL argument");
  memset(out, 0, sizeof *out);
  if (!db->cache) return KV_OK;
  kv_cache_counters c;
  kv_cache_get_counters(db->cache, &c);
  out->hits = c.hits;
  out->misses = c.misses;
  out->inserts = c.inserts;
  out->evictions = c.evictions;
  out->erased = c.erased;
  out->filter_hits = c.meta_hits;
  out->filter_misses = c.meta_misses;
  out->filter_inserts = c.meta_inserts;
  out->usage = c.usage;
  out->capacity = c.capacity;
  if (db->colcache) { /* the column cache's part of the budget (kv/colscan/colscan.c) */
    kv_cache_get_counters(db->colcache, &c);
    out->usage += c.usage;
  }
  return KV_OK;
}

int kv_close(kv_db *db) {
  if (!db) return KV_OK;
  int rc = KV_OK;
  char msg[512] = "";
  /* the memstores to store files first, so the next open has next to nothing to replay; a
     store in its error state keeps them in the WAL (as does a failed flush) */
  pthread_mutex_lock(&db->mu);
  bool flush = !db->opts.read_only && !db->opts.keep_log_on_close && db->bg_error == KV_OK;
  pthread_mutex_unlock(&db->mu);
  if (flush && (rc = kv_flush(db, NULL)) != KV_OK)
    snprintf(msg, sizeof msg, "kv_close: flush: %s", kv_errmsg());
  kv_db_bg_stop(db); /* the running job finishes; frozen memstores stay in the WAL */
  pthread_mutex_lock(&db->mu);
  if (db->scan_detach_all) db->scan_detach_all(db); /* kv/scan's, set when a scan opened */
  pthread_mutex_unlock(&db->mu);
  if (db->wal) {
    int r = kv_wal_close(db->wal);
    if (r && !rc) {
      rc = r;
      snprintf(msg, sizeof msg, "%s", kv_errmsg());
    }
  }
  if (db->man) {
    int r = kv_manifest_close(db->man);
    if (r && !rc) {
      rc = r;
      snprintf(msg, sizeof msg, "%s", kv_errmsg());
    }
  }
  kv_env *env = db->env;
  kv_file *lock = db->lock;
  free_db(db);
  if (lock) env->unlock(env, lock);
  if (rc) return kv_error(rc, "%s", msg);
  return KV_OK;
}
