/*
** kv/db/backup.c: the online backup (kv_backup): a consistent copy of a live store in another
** directory while writes go on, as RocksDB's Checkpoint makes one (and SQLite's online
** backup API for its database file).
**
** How: the backup takes the writer role for a moment (commits, freezes, WAL rotations and
** DDL wait; reads do not) and, under mu, notes the state every reader of the store would
** see: each live family's store files (a reference on each, so a compaction that drops them
** meanwhile cannot delete them until the copy let go) and its flushed_seq, the counters,
** the oldest WAL segment any family still needs, and every live segment from there with its
** size now (the buffered records of KV_SYNC_OFF written out first, so the size is on disk);
** each such segment is opened, so a flush that deletes it meanwhile does not take it away.
** Then the role is released and the copy is made without any lock: each store file gets a
** second name in the copy (a hard link: store files are never changed once written) or,
** where the file system cannot link (another device, no support), is copied; each segment
** is copied up to the size noted; each table's TABLEINFO is written; and last a MANIFEST
** is written holding one snapshot of the noted state, with the log position of the last
** record noted (LOG_POSITION), through MANIFEST.tmp and a rename. Everything is synced, the
** directories too.
** So the copy opens with every commit that had returned before the backup took the role,
** each whole, and none that began after (a commit in flight then waits for the role). A
** copy cut short (a failure, a crash) has no MANIFEST and is not a store; a failure removes
** what it wrote.
** Not here: what a reader beside the writer does (kv/db/db_follow.c).
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kv/db/db_impl.h"
#include "kv/util/status.h"

#define PATH_CAP 4096 /* bytes for any path built here */
#define COPY_CHUNK (1u << 20)

/* A store file of the copy: its handle (one reference) and where it goes. */
typedef struct bfile {
  kv_sfh *h;              /* the source (referenced) */
  uint32_t table_id, family_id;
} bfile;

/* A WAL segment of the copy: an open handle on it and the bytes to copy. */
typedef struct bseg {
  uint64_t number;        /* segment number */
  uint64_t size;          /* bytes to copy */
  kv_file *f;             /* the source, opened to read */
} bseg;

typedef struct bstate {
  kv_version v;           /* what the copy's MANIFEST holds */
  bfile *files;           /* store files to link or copy */
  uint32_t n_files;
  bseg *segs;             /* WAL segments to copy */
  uint32_t n_segs;
} bstate;

static void bstate_free(kv_db *db, bstate *b) {
  for (uint32_t i = 0; i < b->n_files; i++) kv_sfh_unref(b->files[i].h);
  free(b->files);
  for (uint32_t i = 0; i < b->n_segs; i++)
    if (b->segs[i].f) db->env->close(b->segs[i].f);
  free(b->segs);
  kv_version_free(&b->v);
}

static int nomem(void) { return kv_error(KV_ERR_NOMEM, "backup: out of memory"); }

/* Note the state to copy. REQUIRES: mu and the writer role. */
static int capture(kv_db *db, bstate *b) {
  kv_version *v = &b->v;
  v->next_file_number = atomic_load(&db->next_file);
  v->next_table_id = db->ver.next_table_id;
  v->next_family_id = db->ver.next_family_id;
  v->last_seq = atomic_load(&db->last_seq);
  v->wal_number = kv_db_oldest_needed_wal(db, NULL);
  v->log_segment = db->wal_end.seg;
  v->log_offset = db->wal_end.off;
  v->log_seq = db->wal_end.seq;
  uint32_t n_tables = db->ver.n_tables, n_files = 0;
  if (n_tables && !(v->tables = calloc(n_tables, sizeof *v->tables))) return nomem();
  for (uint32_t t = 0; t < n_tables; t++) {
    const kv_table_meta *src = &db->ver.tables[t];
    kv_table_meta *tm = &v->tables[v->n_tables++];
    tm->id = src->id;
    memcpy(tm->name, src->name, sizeof tm->name);
    if (!(tm->families = calloc(src->n_families, sizeof *tm->families))) return nomem();
    for (uint32_t i = 0; i < src->n_families; i++) {
      kv_fam *f = kv_db_family(db, src->families[i].id); /* its id: DDL is held off */
      if (!f) return kv_error(KV_ERR_CORRUPT, "backup: family %u of table %s is not open",
                              src->families[i].id, src->name);
      kv_family_meta *fm = &tm->families[tm->n_families++];
      fm->id = f->id;
      memcpy(fm->name, f->name, sizeof fm->name);
      fm->max_versions = f->max_versions;
      fm->ttl_sec = f->ttl_sec;
      fm->compression = f->compression;
      fm->block_size = f->block_size;
      fm->flushed_seq = f->flushed_seq;
      if (f->n_files && !(fm->files = calloc(f->n_files, sizeof *fm->files))) return nomem();
      fm->cap_files = f->n_files;
      for (uint32_t k = 0; k < f->n_files; k++) fm->files[fm->n_files++] = f->files[k]->meta;
      n_files += f->n_files;
    }
  }
  if (n_files && !(b->files = calloc(n_files, sizeof *b->files))) return nomem();
  for (uint32_t t = 0; t < v->n_tables; t++)
    for (uint32_t i = 0; i < v->tables[t].n_families; i++) {
      kv_fam *f = kv_db_family(db, v->tables[t].families[i].id);
      for (uint32_t k = 0; k < f->n_files; k++) {
        kv_sfh_ref(f->files[k]);
        b->files[b->n_files++] = (bfile){f->files[k], f->table_id, f->id};
      }
    }
  if (db->n_wal_live && !(b->segs = calloc(db->n_wal_live, sizeof *b->segs))) return nomem();
  uint64_t cur = db->wal ? kv_wal_number(db->wal) : 0;
  for (uint32_t i = 0; i < db->n_wal_live; i++) {
    uint64_t n = db->wal_live[i];
    if (n < v->wal_number) continue;
    bseg *s = &b->segs[b->n_segs];
    s->number = n;
    s->size = n == cur ? kv_wal_size(db->wal) : db->wal_live_bytes[i];
    char p[PATH_CAP];
    kv_wal_path(p, sizeof p, db->path, n);
    int rc = db->env->open(db->env, p, KV_OPEN_READ, &s->f);
    if (rc) return rc;
    b->n_segs++;
  }
  return KV_OK;
}

/* Copy the first `size` bytes of src (a file open to read) to a new file at path, synced. */
static int copy_bytes(kv_env *env, kv_file *src, uint64_t size, const char *path,
                      const char *what) {
  kv_file *dst;
  int rc = env->open(env, path, KV_OPEN_WRITE | KV_OPEN_TRUNCATE, &dst);
  if (rc) return rc;
  uint8_t *buf = malloc(COPY_CHUNK);
  if (!buf) rc = nomem();
  for (uint64_t off = 0; rc == KV_OK && off < size;) {
    size_t want = size - off < COPY_CHUNK ? (size_t)(size - off) : COPY_CHUNK, got = 0;
    rc = env->read(src, off, buf, want, &got);
    if (rc == KV_OK && got != want)
      rc = kv_error(KV_ERR_IO, "backup: %s ended at byte %llu, before the %llu noted", what,
                    (unsigned long long)(off + got), (unsigned long long)size);
    if (rc == KV_OK) rc = env->append(dst, buf, want);
    off += want;
  }
  free(buf);
  if (rc == KV_OK) rc = env->sync(dst);
  env->close(dst);
  return rc;
}

/* Give store file h its name in the copy: a hard link, or a copy. */
static int copy_store_file(kv_db *db, const bfile *bf, const char *dir, kv_backup_stats *st) {
  char fdir[PATH_CAP], to[PATH_CAP + 32];
  snprintf(fdir, sizeof fdir, "%s/data/%u/%u", dir, bf->table_id, bf->family_id);
  snprintf(to, sizeof to, "%s/%llu.sf", fdir, (unsigned long long)bf->h->meta.number);
  int rc = db->env->mkdir(db->env, fdir);
  if (rc) return rc;
  if (db->env->link && db->env->link(db->env, bf->h->path, to) == KV_OK) {
    st->files_linked++;
    return KV_OK;
  }
  kv_file *src;
  rc = db->env->open(db->env, bf->h->path, KV_OPEN_READ, &src);
  if (rc) return rc;
  rc = copy_bytes(db->env, src, bf->h->meta.size, to, bf->h->path);
  db->env->close(src);
  if (rc == KV_OK) {
    st->files_copied++;
    st->bytes_copied += bf->h->meta.size;
  }
  return rc;
}

/* Sync every family folder of the copy, and the folders above them. */
static int sync_dirs(kv_env *env, const kv_version *v, const char *dir) {
  char p[PATH_CAP];
  int rc = KV_OK;
  for (uint32_t t = 0; t < v->n_tables && rc == KV_OK; t++) {
    for (uint32_t i = 0; i < v->tables[t].n_families && rc == KV_OK; i++) {
      if (!v->tables[t].families[i].n_files) continue;
      snprintf(p, sizeof p, "%s/data/%u/%u", dir, v->tables[t].id, v->tables[t].families[i].id);
      rc = env->sync_dir(env, p);
    }
    snprintf(p, sizeof p, "%s/data/%u", dir, v->tables[t].id);
    if (rc == KV_OK && env->exists(env, p)) rc = env->sync_dir(env, p);
  }
  snprintf(p, sizeof p, "%s/data", dir);
  if (rc == KV_OK && env->exists(env, p)) rc = env->sync_dir(env, p);
  if (rc == KV_OK) rc = env->sync_dir(env, dir);
  return rc;
}

typedef struct entries { int n; } entries;
static int count_entry(void *ctx, const char *name) {
  (void)name;
  ((entries *)ctx)->n++;
  return 0;
}

static int remove_all(void *ctx, const char *name);
typedef struct rm_ctx { kv_env *env; const char *dir; int depth; } rm_ctx;

/* Remove what a failed backup wrote under dir (best effort). */
static void remove_tree(kv_env *env, const char *dir, int depth) {
  rm_ctx c = {env, dir, depth};
  env->list(env, dir, remove_all, &c);
  env->rmdir(env, dir);
}

static int remove_all(void *ctx, const char *name) {
  rm_ctx *c = ctx;
  char p[PATH_CAP];
  snprintf(p, sizeof p, "%s/%s", c->dir, name);
  if (c->env->remove(c->env, p) != KV_OK && c->depth > 0) remove_tree(c->env, p, c->depth - 1);
  return 0;
}

int kv_backup(kv_db *db, const char *dir, kv_backup_stats *stats) {
  kv_backup_stats st;
  memset(&st, 0, sizeof st);
  if (stats) *stats = st;
  if (!db) return kv_error(KV_MISUSE, "kv_backup: NULL store");
  if (!dir || !*dir) return kv_error(KV_ERR_INVALID, "kv_backup: empty directory name");
  if (db->opts.read_only)
    return kv_error(KV_ERR_READONLY, "kv_backup: the store '%s' was opened read-only: a backup "
                    "is made by the handle that writes it", db->path);
  kv_env *env = db->env;
  entries ent = {0};
  bool existed = env->exists(env, dir);
  if (existed && env->list(env, dir, count_entry, &ent) != KV_OK)
    return kv_error(KV_ERR_INVALID, "kv_backup: '%s' exists and is not a directory", dir);
  if (ent.n)
    return kv_error(KV_ERR_EXISTS, "kv_backup: the directory '%s' is not empty (a backup goes to "
                    "a new or empty directory)", dir);
  int rc = existed ? KV_OK : env->mkdir(env, dir);
  if (rc) return rc;

  bstate b;
  memset(&b, 0, sizeof b);
  kv_writer w;
  memset(&w, 0, sizeof w);
  pthread_mutex_lock(&db->mu);
  rc = kv_db_writable(db);
  if (rc == KV_OK) {
    kv_db_role_acquire(db, &w);
    if (db->wal) { /* KV_SYNC_OFF's buffered records: the noted sizes are on disk */
      pthread_mutex_unlock(&db->mu);
      rc = kv_wal_write_out(db->wal);
      pthread_mutex_lock(&db->mu);
    }
    if (rc == KV_OK) rc = capture(db, &b);
    kv_db_role_release(db, &w);
  }
  pthread_mutex_unlock(&db->mu);

  for (uint32_t i = 0; rc == KV_OK && i < b.n_files; i++)
    rc = copy_store_file(db, &b.files[i], dir, &st);
  for (uint32_t i = 0; rc == KV_OK && i < b.n_segs; i++) {
    char from[PATH_CAP], to[PATH_CAP];
    kv_wal_path(from, sizeof from, db->path, b.segs[i].number);
    kv_wal_path(to, sizeof to, dir, b.segs[i].number);
    rc = copy_bytes(env, b.segs[i].f, b.segs[i].size, to, from);
    st.wal_segments++;
    st.wal_bytes += b.segs[i].size;
  }
  /* each table's TABLEINFO, as kv_open writes them: what a salvage of the copy names tables
     by when its MANIFEST is lost (docs/FORMAT.md "TABLEINFO") */
  for (uint32_t t = 0; rc == KV_OK && t < b.v.n_tables; t++)
    rc = kv_tableinfo_write(env, dir, &b.v.tables[t], true);
  if (rc == KV_OK) rc = sync_dirs(env, &b.v, dir);
  if (rc == KV_OK) rc = kv_manifest_write_snapshot(env, dir, &b.v); /* last: now a store */
  st.last_seq = b.v.last_seq;
  bstate_free(db, &b);
  if (rc) {
    char msg[512];
    snprintf(msg, sizeof msg, "%s", kv_errmsg());
    remove_tree(env, dir, 4);
    if (existed) env->mkdir(env, dir);
    return kv_error(rc, "kv_backup to '%s': %s", dir, msg);
  }
  if (stats) *stats = st;
  return KV_OK;
}
