/*
** kv/db/db_follow.c: a read-only open beside a writer (kv_options.read_only), and kv_refresh.
** RocksDB's secondary instances (OpenAsSecondary, TryCatchUpWithPrimary) and SQLite's WAL
** readers are the models: the reader takes no LOCK and writes nothing (no MANIFEST change,
** no WAL truncation or sync, no file deleted), so it opens a store another process holds
** open for writing, or one on which it has no write permission. It sees the store as the
** files show it when it opens: the MANIFEST, the store files it names, and the WAL replayed
** into the reader's own memstores. kv_refresh catches up with what was committed since.
**
** A catch-up (the open's, or a refresh's) has three phases:
**   A. read the MANIFEST (kv_manifest_read: a record being appended is left out), open the
**      store files it names (a file already open in the current view is shared), list the
**      WAL segments and open those to read. The writer deletes store files after a
**      compaction and segments after a flush: a file or segment gone between the MANIFEST
**      and its open, or a log that does not reach the MANIFEST's log position, means the
**      MANIFEST read is out of date: the attempt is dropped (nothing changed yet) and made
**      again, up to FOLLOW_TRIES times. Once open, a file stays readable after the writer
**      unlinks it (POSIX descriptors and mappings survive unlink).
**   B. the memstores: a family whose flushed_seq did not move keeps its memstore and the WAL
**      is read on from where the last catch-up stopped; a family flushed since gets a new
**      memstore holding the old one's cells above the new flushed_seq (the rest are in its
**      new store files). Then the segments are read from that position (kv_wal_follow): a
**      record cut short at the end of the newest segment is not yet written (the reading
**      stops there; it is never truncated nor reported). The reading also stops before a
**      record it cannot show whole and in order: one naming a family newer than the
**      MANIFEST read (created after it), or one after a gap in the sequence numbers that
**      the MANIFEST read does not explain (a bulk load committed after it, whose files
**      the reader does not have yet). Then the records the writer appended to the MANIFEST
**      while the log was read are read (kv_manifest_changes_since): a table created or
**      dropped, or a bulk load, is a change the view does not hold, so nothing committed
**      after it is shown (the cap). The next refresh reads them with a newer MANIFEST.
**   C. publish, under mu, in one step: each family's memstore and file list, the families
**      created and dropped, the version, and last_seq = the last sequence number shown (the
**      last record taken, or the newest store file's, within the cap). A scan sees the old
**      view or the new one whole; scans already open keep reading the view they opened on.
** A failure in B leaves the current view as it was and makes the next catch-up start over
** from the MANIFEST's oldest needed segment with empty memstores (a reused memstore may
** then hold cells of records the position does not count).
** What it does not do: take part in the writer's decisions. The writer does not know its
** readers: a snapshot of the reader does not hold back the writer's compactions, which is
** why kv_refresh refuses to run while one is held.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kv/util/coding.h"
#include "kv/db/db_impl.h"
#include "kv/util/iter.h"
#include "kv/util/status.h"

#define PATH_CAP 4096   /* bytes for any path built here */
#define FOLLOW_TRIES 40 /* attempts of one catch-up while the writer moves files under it */

typedef struct kv_follow {
  pthread_mutex_t mu;  /* one catch-up at a time */
  uint64_t seg;        /* the WAL position read up to: segment (0: none yet) ... */
  uint64_t off;        /* ... and the byte offset of the next record in it */
  uint64_t last_rec;   /* last sequence number of the last record taken (0: none) */
  bool rebuild;        /* the next catch-up starts over (after a failure in phase B) */
} kv_follow;

/* The new view of one family, built in phases A and B. */
typedef struct fview {
  const kv_family_meta *fm; /* in the new version */
  uint32_t table_id;        /* its table */
  kv_fam *old;              /* the current run-time family, or NULL (new) */
  kv_sfh **files;           /* its store files, oldest first (one reference each) */
  uint32_t n_files;         /* entries in files */
  kv_memstore *mem;         /* its memstore (one reference), set in phase B */
} fview;

/* One catch-up attempt's state. */
typedef struct attempt {
  kv_db *db;                /* the store */
  kv_follow *fl;            /* its follower state */
  kv_version nv;            /* the MANIFEST read */
  uint8_t *man;             /* its bytes */
  uint64_t man_len;         /* their length */
  uint64_t cap;             /* the last sequence number the view may show: the writer's
                               logical changes recorded after the read happened after it */
  fview *views;             /* one per family of nv */
  uint32_t n_views;         /* entries in views */
  fview **by_id;            /* views indexed by family id (nv.next_family_id entries) */
  uint64_t *segs;           /* WAL segments on disk, ascending */
  uint32_t n_segs;          /* entries in segs */
  kv_file **seg_files;      /* the segments read from (NULL for those before start) */
  uint64_t start_seg;       /* where phase B reads from: segment ... */
  uint64_t start_off;       /* ... and offset */
  uint64_t prev;            /* last sequence number of the last record taken, or what the
                               MANIFEST read accounts for */
  uint64_t taken_last;      /* last sequence number of the last record taken (0: none) */
  uint64_t records, bytes;  /* records taken and their bytes */
  bool stopped;             /* phase B stopped before a record it cannot show yet */
  bool reused;              /* phase B reads on from the last catch-up's position */
  char path[PATH_CAP];      /* the segment being read (messages) */
} attempt;

/* ---- helpers ---------------------------------------------------------------------------- */

static void sleep_ms(int ms) {
  struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}

static int cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

typedef struct seg_list {
  uint64_t *v;      /* segment numbers */
  uint32_t n, cap;  /* used, allocated */
  int oom;          /* an allocation failed */
} seg_list;

static int collect_seg(void *ctx, const char *name) {
  seg_list *l = ctx;
  if (strncmp(name, "wal-", 4) != 0) return 0;
  const char *p = name + 4;
  uint64_t v = 0;
  size_t digits = 0;
  while (p[digits] >= '0' && p[digits] <= '9') v = v * 10 + (uint64_t)(p[digits++] - '0');
  if (!digits || strcmp(p + digits, ".log") != 0) return 0;
  if (l->n == l->cap) {
    uint32_t nc = l->cap ? l->cap * 2 : 16;
    uint64_t *nv = realloc(l->v, nc * sizeof *nv);
    if (!nv) { l->oom = 1; return 1; }
    l->v = nv;
    l->cap = nc;
  }
  l->v[l->n++] = v;
  return 0;
}

static void attempt_free(attempt *a) {
  for (uint32_t i = 0; i < a->n_views; i++) {
    fview *v = &a->views[i];
    for (uint32_t k = 0; k < v->n_files; k++) kv_sfh_unref(v->files[k]);
    free(v->files);
    kv_memstore_unref(v->mem);
  }
  free(a->views);
  free(a->by_id);
  for (uint32_t i = 0; a->seg_files && i < a->n_segs; i++)
    if (a->seg_files[i]) a->db->env->close(a->seg_files[i]);
  free(a->seg_files);
  free(a->segs);
  free(a->man);
  kv_version_free(&a->nv);
}

/* The current handle of store file `number` of family f, with a new reference, or NULL. */
static kv_sfh *shared_file(kv_fam *f, uint64_t number) {
  for (uint32_t i = 0; f && i < f->n_files; i++)
    if (f->files[i]->meta.number == number) {
      kv_sfh_ref(f->files[i]);
      return f->files[i];
    }
  return NULL;
}

/* ---- phase A: the MANIFEST, the store files, the segments ------------------------------ */

static int open_files(attempt *a, bool *transient) {
  kv_db *db = a->db;
  kv_version *nv = &a->nv;
  uint32_t n = 0;
  for (uint32_t t = 0; t < nv->n_tables; t++) n += nv->tables[t].n_families;
  a->views = calloc(n ? n : 1, sizeof *a->views);
  a->by_id = calloc(nv->next_family_id ? nv->next_family_id : 1, sizeof *a->by_id);
  if (!a->views || !a->by_id) return kv_error(KV_ERR_NOMEM, "read-only open: out of memory");
  for (uint32_t t = 0; t < nv->n_tables; t++) {
    const kv_table_meta *tm = &nv->tables[t];
    for (uint32_t i = 0; i < tm->n_families; i++) {
      const kv_family_meta *fm = &tm->families[i];
      if (fm->id >= nv->next_family_id)
        return kv_error(KV_ERR_CORRUPT, "%s/MANIFEST: family id %u is not below the next "
                        "family id %u", db->path, fm->id, nv->next_family_id);
      fview *v = &a->views[a->n_views++];
      v->fm = fm;
      v->table_id = tm->id;
      v->old = kv_db_family(db, fm->id);
      if (v->old && v->old->table_id != tm->id) v->old = NULL;
      a->by_id[fm->id] = v;
      if (fm->n_files && !(v->files = calloc(fm->n_files, sizeof *v->files)))
        return kv_error(KV_ERR_NOMEM, "read-only open: out of memory");
      kv_fam path_of; /* kv_sfh_open takes the path from the family's ids */
      memset(&path_of, 0, sizeof path_of);
      path_of.id = fm->id;
      path_of.table_id = tm->id;
      for (uint32_t k = 0; k < fm->n_files; k++) {
        kv_sfh *h = shared_file(v->old, fm->files[k].number);
        if (!h) {
          int rc = kv_sfh_open(db, &path_of, &fm->files[k], &h);
          if (rc == KV_ERR_NOTFOUND) *transient = true; /* compacted away since the read */
          if (rc) return rc;
        }
        v->files[v->n_files++] = h;
      }
    }
  }
  return KV_OK;
}

static int open_segments(attempt *a, bool *transient) {
  kv_db *db = a->db;
  kv_follow *fl = a->fl;
  const kv_version *nv = &a->nv;
  seg_list l = {0};
  int rc = db->env->list(db->env, db->path, collect_seg, &l);
  if (rc == KV_OK && l.oom) rc = kv_error(KV_ERR_NOMEM, "read-only open: out of memory");
  if (rc) {
    free(l.v);
    return rc;
  }
  if (l.n > 1) qsort(l.v, l.n, sizeof *l.v, cmp_u64); /* l.v is NULL when there is none */
  a->segs = l.v;
  a->n_segs = l.n;
  /* read on from the last catch-up's position into its memstores, or (the first time, after
     a failure, or when the writer deleted the segments up to there) build new memstores
     from the oldest segment the MANIFEST needs */
  bool cont = fl->seg && !fl->rebuild && fl->seg >= nv->wal_number;
  a->reused = cont;
  a->start_seg = cont ? fl->seg : nv->wal_number;
  a->start_off = cont ? fl->off : 0;
  a->prev = cont && fl->last_rec ? fl->last_rec : nv->last_seq;
  bool have_start = false, newer = false;
  for (uint32_t i = 0; i < l.n; i++) {
    if (l.v[i] == a->start_seg) have_start = true;
    if (l.v[i] > a->start_seg) newer = true;
  }
  /* The segment the reading resumes in, or the MANIFEST's oldest needed one, is deleted only
  ** after a MANIFEST record names a newer one: gone means the MANIFEST read is out of date
  ** (or, if it stays so, has lost records: the writer's kv_open says the same). */
  if (!have_start && ((a->start_seg == nv->wal_number && nv->wal_number > 0 && newer) ||
                      (cont && a->start_off > 0))) {
    *transient = true;
    char p[PATH_CAP];
    kv_wal_path(p, sizeof p, db->path, a->start_seg);
    return kv_error(KV_ERR_CORRUPT, "%s/MANIFEST: names WAL segment %s as still needed, but "
                    "it is missing while newer segments exist: the MANIFEST has lost records",
                    db->path, p);
  }
  if (!have_start) a->start_off = 0;
  a->seg_files = calloc(l.n ? l.n : 1, sizeof *a->seg_files);
  if (!a->seg_files) return kv_error(KV_ERR_NOMEM, "read-only open: out of memory");
  uint64_t pos_have = UINT64_MAX; /* bytes of the segment the log position names */
  for (uint32_t i = 0; i < l.n; i++) {
    if (l.v[i] < a->start_seg) continue;
    char p[PATH_CAP];
    kv_wal_path(p, sizeof p, db->path, l.v[i]);
    rc = db->env->open(db->env, p, KV_OPEN_READ, &a->seg_files[i]);
    if (rc == KV_ERR_NOTFOUND) *transient = true; /* flushed away since the read */
    if (rc) return rc;
    if (l.v[i] == nv->log_segment) {
      rc = db->env->size(a->seg_files[i], &pos_have);
      if (rc) return rc;
    }
  }
  /* The log must reach what the MANIFEST read names (kv_db_check_log_position); the writer
  ** wrote those bytes before the record, so falling short means the record is newer than
  ** the segment list (a segment deleted since) or the store's log is behind its MANIFEST. */
  if (nv->log_segment >= a->start_seg) {
    rc = kv_db_check_log_position(db, nv, pos_have, 0);
    if (rc) *transient = true;
    return rc;
  }
  return KV_OK;
}

/* ---- phase B: memstores and the WAL ----------------------------------------------------- */

/* A new memstore holding the cells of m above seq `above`. */
static int copy_above(kv_memstore *m, uint64_t above, kv_memstore **out) {
  *out = kv_memstore_new();
  if (!*out) return kv_error(KV_ERR_NOMEM, "refresh: out of memory");
  kv_iter *it = kv_memstore_iter_new(m);
  if (!it) return kv_error(KV_ERR_NOMEM, "refresh: out of memory");
  int rc = KV_OK;
  for (it->ops->seek_first(it); rc == KV_OK && it->ops->valid(it); it->ops->next(it)) {
    const kv_cell *c = it->ops->cell(it);
    if (c->seq > above) rc = kv_memstore_add(*out, c);
  }
  it->ops->destroy(it);
  return rc;
}

static int prepare_memstores(attempt *a) {
  for (uint32_t i = 0; i < a->n_views; i++) {
    fview *v = &a->views[i];
    kv_fam *old = a->reused ? v->old : NULL;
    if (old && old->flushed_seq == v->fm->flushed_seq) {
      kv_memstore_ref(old->mem);
      v->mem = old->mem;
    } else if (old) {
      int rc = copy_above(old->mem, v->fm->flushed_seq, &v->mem);
      if (rc) return rc;
    } else if (!(v->mem = kv_memstore_new())) {
      return kv_error(KV_ERR_NOMEM, "read-only open: out of memory");
    }
  }
  return KV_OK;
}

/* kv_wal_follow's callback: one record into the memstores, or KV_WAL_STOP before a record
** the MANIFEST read cannot show yet. */
static int take_record(void *ctx, uint64_t first_seq, int64_t commit_ts, const uint8_t *payload,
                       size_t len) {
  attempt *a = ctx;
  const uint8_t *p = payload, *limit = payload + len;
  uint64_t count;
  p = kv_get_varint(p, limit, &count);
  if (!p || count > len)
    return kv_error(KV_ERR_CORRUPT, "%s: record at sequence %llu has a bad op count", a->path,
                    (unsigned long long)first_seq);
  if (count == 0) return KV_OK;
  uint64_t last = first_seq + count - 1;
  if (first_seq > a->prev + 1 && first_seq - 1 > a->nv.last_seq) {
    a->stopped = true; /* a commit outside the WAL (a bulk load) not in the MANIFEST read */
    return KV_WAL_STOP;
  }
  const uint8_t *ops = p;
  for (uint64_t i = 0; i < count; i++) {
    kv_wal_op op;
    if (kv_wal_decode_op(&p, limit, &op) != KV_OK)
      return kv_error(KV_ERR_CORRUPT, "%s: record at sequence %llu: op %llu is damaged",
                      a->path, (unsigned long long)first_seq, (unsigned long long)i);
    if (op.family_id >= a->nv.next_family_id) {
      a->stopped = true; /* a family created after the MANIFEST read */
      return KV_WAL_STOP;
    }
  }
  p = ops;
  for (uint64_t i = 0; i < count; i++) {
    kv_wal_op op;
    kv_wal_decode_op(&p, limit, &op);
    fview *v = a->by_id[op.family_id]; /* NULL: a dropped family */
    uint64_t seq = first_seq + i;
    if (!v || seq <= v->fm->flushed_seq) continue;
    kv_cell c = {op.row, op.row_len, op.qual, op.qual_len,
                 op.ts == KV_TS_NOW ? commit_ts : op.ts, seq, op.type, op.value, op.value_len};
    int rc = kv_memstore_add(v->mem, &c);
    if (rc) return rc;
  }
  if (last > a->prev) a->prev = last;
  if (last > a->taken_last) a->taken_last = last;
  a->records++;
  a->bytes += KV_WAL_HEADER + len;
  return KV_OK;
}

static int read_segments(attempt *a) {
  kv_follow *fl = a->fl;
  uint64_t seg = a->start_seg, off = a->start_off;
  for (uint32_t i = 0; i < a->n_segs && !a->stopped; i++) {
    if (!a->seg_files[i]) continue;
    kv_wal_path(a->path, sizeof a->path, a->db->path, a->segs[i]);
    uint64_t from = a->segs[i] == a->start_seg ? a->start_off : 0, end = from;
    int rc = kv_wal_follow(a->db->env, a->seg_files[i], a->path, from, i + 1 == a->n_segs,
                           take_record, a, &end);
    if (rc) return rc;
    seg = a->segs[i];
    off = end;
  }
  fl->seg = seg;
  fl->off = off;
  return KV_OK;
}

/* ---- phase C: publish ------------------------------------------------------------------- */

static void publish(attempt *a) {
  kv_db *db = a->db;
  /* what the view shows: the last record taken (by this catch-up, or, reading on from where
  ** the last one stopped, by an earlier one), or the newest store file's cells */
  uint64_t shown = a->taken_last;
  if (a->reused && a->fl->last_rec > shown) shown = a->fl->last_rec;
  a->fl->last_rec = shown;
  for (uint32_t i = 0; i < a->n_views; i++)
    for (uint32_t k = 0; k < a->views[i].n_files; k++)
      if (a->views[i].files[k]->meta.max_seq > shown) shown = a->views[i].files[k]->meta.max_seq;
  if (shown > a->cap) shown = a->cap;
  pthread_mutex_lock(&db->mu);
  /* families gone from the MANIFEST (their table dropped): their files leave the cache */
  for (uint32_t id = 0; id < db->n_fam_slots; id++) {
    kv_fam *f = db->fams[id];
    if (!f) continue;
    fview *v = id < a->nv.next_family_id ? a->by_id[id] : NULL;
    if (v && v->table_id == f->table_id) continue;
    for (uint32_t k = 0; k < f->n_files; k++) atomic_store(&f->files[k]->obsolete, true);
    db->fams[id] = NULL;
    kv_fam_free(f);
  }
  for (uint32_t i = 0; i < a->n_views; i++) {
    fview *v = &a->views[i];
    uint32_t id = v->fm->id;
    kv_fam *f = id < db->n_fam_slots && db->fams[id] ? db->fams[id]
                                                     : kv_fam_new(db, v->table_id, v->fm);
    if (!f) continue; /* out of memory: the family stays unknown until the next refresh */
    /* files the new list no longer holds (compacted away) leave the cache when let go */
    for (uint32_t k = 0; k < f->n_files; k++) {
      bool kept = false;
      for (uint32_t j = 0; j < v->n_files && !kept; j++) kept = v->files[j] == f->files[k];
      if (!kept) atomic_store(&f->files[k]->obsolete, true);
      kv_sfh_unref(f->files[k]);
    }
    free(f->files);
    f->files = v->files;
    f->n_files = f->cap_files = v->n_files;
    v->files = NULL;
    v->n_files = 0;
    kv_memstore_unref(f->mem);
    f->mem = v->mem;
    v->mem = NULL;
    f->flushed_seq = v->fm->flushed_seq;
    f->max_versions = v->fm->max_versions > 0 ? v->fm->max_versions : 1; /* ALTER_TABLE */
    f->ttl_sec = v->fm->ttl_sec;
    f->compression = v->fm->compression;
    f->block_size = v->fm->block_size ? v->fm->block_size : KV_DEFAULT_BLOCK_SIZE;
  }
  kv_version_free(&db->ver);
  db->ver = a->nv;
  memset(&a->nv, 0, sizeof a->nv);
  if (a->stopped || a->cap < UINT64_MAX) db->stat_reader_stops++;
  if (shown > atomic_load(&db->last_seq))
    atomic_store_explicit(&db->last_seq, shown, memory_order_release);
  db->stat_replay_records += a->records;
  db->stat_replay_bytes += a->bytes;
  pthread_mutex_unlock(&db->mu);
}

/* ---- catching up ------------------------------------------------------------------------ */

static void (*g_hook)(void *ctx, int attempt); /* kv_follow_test_hook's function */
static void *g_hook_ctx;                        /* and its argument */

void kv_follow_test_hook(void (*fn)(void *ctx, int attempt), void *ctx) {
  g_hook = fn;
  g_hook_ctx = ctx;
}

/* One attempt. *transient: it failed because the writer moved files under it. *sig gets the
** MANIFEST's length and the segments seen (to tell a store that keeps changing from one
** that stays inconsistent). */
static int try_once(kv_db *db, int attempt_no, bool *transient, uint64_t sig[2]) {
  attempt a;
  memset(&a, 0, sizeof a);
  a.db = db;
  a.fl = db->follow;
  int rc = kv_manifest_read(db->env, db->path, &a.nv, &a.man, &a.man_len);
  if (rc == KV_ERR_NOTFOUND)
    rc = kv_error(KV_ERR_NOTFOUND, "kv_open: '%s' has no MANIFEST (not a store)", db->path);
  if (rc == KV_OK && g_hook) g_hook(g_hook_ctx, attempt_no);
  if (rc == KV_OK) rc = open_files(&a, transient);
  if (rc == KV_OK) rc = open_segments(&a, transient);
  sig[0] = a.man_len;
  sig[1] = a.n_segs ? a.segs[a.n_segs - 1] * 1000003u + a.n_segs : 0;
  if (rc == KV_OK) {
    a.fl->rebuild = true; /* until this attempt is published */
    rc = prepare_memstores(&a);
    if (rc == KV_OK) rc = read_segments(&a);
    /* What the writer recorded while the log was read: a table created or dropped, or a
    ** bulk load, is a change the read MANIFEST does not hold; the records taken after it
    ** stay hidden until the next catch-up reads it (the cap). */
    bool rewritten = false;
    if (rc == KV_OK)
      rc = kv_manifest_changes_since(db->env, db->path, a.man, a.man_len, &a.cap, &rewritten);
    if (rc == KV_OK && rewritten) {
      *transient = true; /* rewritten as a snapshot meanwhile: read it again */
      rc = kv_error(KV_ERR_IO, "%s/MANIFEST was rewritten while it was read", db->path);
    }
    if (rc == KV_OK) {
      publish(&a);
      a.fl->rebuild = false;
    }
  }
  attempt_free(&a);
  return rc;
}

static int catch_up(kv_db *db) {
  uint64_t prev_sig[2] = {UINT64_MAX, UINT64_MAX};
  int same = 0;
  for (int i = 0;; i++) {
    bool transient = false;
    uint64_t sig[2] = {0, 0};
    int rc = try_once(db, i, &transient, sig);
    if (rc == KV_OK || !transient) return rc;
    /* nothing moved since the last attempt: the store is that way, not changing */
    same = sig[0] == prev_sig[0] && sig[1] == prev_sig[1] ? same + 1 : 0;
    if (i + 1 >= FOLLOW_TRIES || same >= 2) return rc;
    pthread_mutex_lock(&db->mu);
    db->stat_reader_retries++;
    pthread_mutex_unlock(&db->mu);
    prev_sig[0] = sig[0];
    prev_sig[1] = sig[1];
    sleep_ms(i < 5 ? 1 : i < 15 ? 10 : 50);
  }
}

int kv_db_follow_open(kv_db *db) {
  kv_follow *fl = calloc(1, sizeof *fl);
  if (!fl) return kv_error(KV_ERR_NOMEM, "kv_open: out of memory");
  pthread_mutex_init(&fl->mu, NULL);
  db->follow = fl;
  int rc = catch_up(db);
  if (rc == KV_OK) {
    uint64_t last = atomic_load(&db->last_seq);
    if (last < 1) atomic_store(&db->last_seq, 1); /* sequence 1: nothing written yet */
  }
  return rc;
}

void kv_db_follow_free(kv_db *db) {
  if (!db->follow) return;
  pthread_mutex_destroy(&db->follow->mu);
  free(db->follow);
  db->follow = NULL;
}

int kv_refresh(kv_db *db) {
  if (!db) return kv_error(KV_MISUSE, "kv_refresh: NULL store");
  if (!db->follow) return KV_OK; /* the writer's own view is always the latest */
  pthread_mutex_lock(&db->mu);
  uint32_t held = db->n_snaps;
  pthread_mutex_unlock(&db->mu);
  if (held)
    return kv_error(KV_MISUSE, "kv_refresh: %u snapshot%s held (kv_snapshot_acquire): the "
                    "writer's compactions do not keep what a reader's snapshot sees, so "
                    "release them first", held, held == 1 ? " is" : "s are");
  pthread_mutex_lock(&db->follow->mu);
  int rc = catch_up(db);
  pthread_mutex_unlock(&db->follow->mu);
  return rc;
}
