/*
** kv/bulk/bulk_write.c: the bulk load's pipeline and its output (kv/bulk/bulk_int.h).
**
** The worker: one thread, started when the first segment is closed, takes closed buffers
** from a FIFO queue, sorts each (kv/bulk/bulk_sort.c) and, when asked, resolves and encodes it
** into finished store-file blocks in memory (kv/sf/sf_seg.h) with the sequence number the
** commit will most likely take (the store's last one plus 1). So sorting, block encoding,
** lz4 and the bloom hashes of one part of the input run while the caller parses the next.
** The caller's thread takes jobs too when it waits (spill, commit) and when more than
** KV_BULK_BACKLOG are waiting (so a slow worker neither idles a core nor lets closed
** buffers pile up in memory). A job's error is kept
** (with its message) and returned by the next add that closes a segment, or by commit.
**
** Commit, per family (two families at a time, on two threads): when the family spilled no
** run and its closed buffers, taken by first row, follow one another without sharing a row
** and all were encoded, the store file is their segments one after another
** (kv_sf_writer_add_seg, which re-frames blocks only if the commit's sequence number is not
** the one guessed); otherwise, with no spilled run, its segments and raw buffers are merged
** block-wise (kv/bulk/bulk_merge.c), a family of at least split_cells cells as two key ranges at
** once (both halves first, on the two threads, then the files); with runs, its runs and
** buffers are merged and resolved cell by cell, in one piece (two key ranges would each
** hold their rows' bloom hashes, 8 bytes a row, until the file takes them: past the
** bound).
** A spill of an unordered family (kv_bulk_spill_runs) writes its runs here too: from
** split_cells cells on, as two key ranges at once, this thread and a helper.
** Then one MANIFEST record names every family's file, and the files join their families
** and the sequence number is published, under mu, in one step.
** Not here: adding cells (kv/bulk/bulk.c), sorting and merging (kv/bulk/bulk_sort.c).
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kv/util/thread.h"
#include "kv/bulk/bulk_int.h"
#include "kv/db/db_impl.h"
#include "kv/util/status.h"

/* ---- the worker ------------------------------------------------------------------------- */

#define KV_BULK_BACKLOG 2 /* closed buffers waiting beyond which the adding thread helps */

/* Sort u, and encode it if asked. Runs without b->mu. */
static int run_job(kv_bulk *b, kv_bulk_fam *f, kv_bulk_buf *u, uint64_t job) {
  if (b->fault) {
    int rc = b->fault(b->fault_arg, f->id, job);
    if (rc) return kv_error(rc, "bulk load: injected failure in segment %llu of family %u",
                            (unsigned long long)job, f->id);
  }
  int rc = kv_bulk_sort_buf(u);
  if (rc || !u->encode || u->n_ents == 0) return rc;
  kv_sf_writer_options wo = {f->block_size, f->compression, 0, 0};
  kv_sf_writer *w;
  rc = kv_sf_seg_open(&wo, &w);
  if (rc) return rc;
  uint64_t guess = atomic_load_explicit(&b->db->last_seq, memory_order_acquire) + 1;
  rc = kv_bulk_write_buf(u, w, guess);
  if (rc) {
    kv_sf_writer_abort(w);
    return rc;
  }
  rc = kv_sf_seg_finish(w, &u->seg);
  if (rc) return rc;
  /* Keep the first and last row keys; give the arrays back for the next buffer. */
  const kv_bulk_ent *e0 = &u->ents[u->grps[0].first];
  const kv_bulk_ent *e1 = &u->ents[u->grps[u->n_grps - 1].first];
  u->bounds = malloc((size_t)e0->row_len + e1->row_len);
  if (!u->bounds) return KV_OK; /* the arrays stay: nothing lost */
  memcpy(u->bounds, u->arena + e0->row_off, e0->row_len);
  memcpy(u->bounds + e0->row_len, u->arena + e1->row_off, e1->row_len);
  u->first_len = e0->row_len;
  u->last_len = e1->row_len;
  kv_bulk_spare sp = {u->arena, u->acap, u->ents, u->cap_ents, u->grps, u->cap_grps};
  u->arena = NULL;
  u->ents = NULL;
  u->grps = NULL;
  u->acap = u->cap_ents = u->cap_grps = 0;
  u->raw = false;
  size_t seg_bytes = kv_sf_seg_bytes(u->seg) + e0->row_len + e1->row_len;
  pthread_mutex_lock(&b->mu);
  bool kept = b->n_spare < KV_BULK_SPARES;
  if (kept) b->spare[b->n_spare++] = sp;
  size_t keep = seg_bytes + (kept ? kv_bulk_spare_bytes(&sp) : 0); /* still held */
  b->freed += (int64_t)u->charged - (int64_t)keep;
  pthread_mutex_unlock(&b->mu);
  if (!kept) {
    free(sp.arena);
    free(sp.ents);
    free(sp.grps);
  }
  return KV_OK;
}

/* Take and run one job. REQUIRES: b->mu held and a job queued; returns with it held. */
static void take_job(kv_bulk *b) {
  kv_bulk_job j = b->q[b->q_head];
  b->q_head = (b->q_head + 1) % b->q_cap;
  b->q_len--;
  b->busy++;
  uint64_t no = b->jobs++;
  bool skip = b->werr != KV_OK;
  pthread_mutex_unlock(&b->mu);
  int rc = skip ? KV_OK : run_job(b, j.f, j.u, no);
  pthread_mutex_lock(&b->mu);
  j.u->rc = rc;
  j.u->ready = true;
  if (rc && b->werr == KV_OK) {
    b->werr = rc;
    snprintf(b->wmsg, sizeof b->wmsg, "%s", kv_errmsg());
  }
  b->busy--;
  pthread_cond_broadcast(&b->cv);
}

static void *worker_main(void *arg) {
  kv_bulk *b = arg;
  pthread_mutex_lock(&b->mu);
  for (;;) {
    while (!b->stop && b->q_len == 0) pthread_cond_wait(&b->cv, &b->mu);
    if (b->q_len == 0) break; /* stop, and nothing left */
    take_job(b);
  }
  pthread_mutex_unlock(&b->mu);
  return NULL;
}

int kv_bulk_enqueue(kv_bulk *b, kv_bulk_fam *f, kv_bulk_buf *u) {
  pthread_mutex_lock(&b->mu);
  int rc = b->werr;
  if (rc) {
    int code = rc;
    char msg[sizeof b->wmsg];
    memcpy(msg, b->wmsg, sizeof msg);
    pthread_mutex_unlock(&b->mu);
    return kv_error(code, "%s", msg);
  }
  if (b->q_len == b->q_cap) { /* grow the ring, keeping its order */
    size_t nc = b->q_cap ? b->q_cap * 2 : 16;
    kv_bulk_job *q = malloc(nc * sizeof *q);
    if (!q) {
      pthread_mutex_unlock(&b->mu);
      return kv_error(KV_ERR_NOMEM, "bulk load: out of memory");
    }
    for (size_t i = 0; i < b->q_len; i++) q[i] = b->q[(b->q_head + i) % b->q_cap];
    free(b->q);
    b->q = q;
    b->q_head = 0;
    b->q_cap = nc;
  }
  b->q[(b->q_head + b->q_len) % b->q_cap] = (kv_bulk_job){f, u};
  b->q_len++;
  if (!b->started && !b->stop) {
    if (kv_thread_create(&b->th, worker_main, b) == 0) b->started = true;
    /* else: no worker; the jobs run on the caller's thread at the next drain */
  }
  pthread_cond_broadcast(&b->cv);
  /* The worker is behind (or there is none): this thread takes a job too, so both keep
  ** busy and the closed buffers waiting (their memory) stay few. */
  if (b->q_len > KV_BULK_BACKLOG || (!b->started && b->q_len)) take_job(b);
  pthread_mutex_unlock(&b->mu);
  return KV_OK;
}

int kv_bulk_drain(kv_bulk *b) {
  pthread_mutex_lock(&b->mu);
  for (;;) {
    if (b->q_len) {
      take_job(b);
      continue;
    }
    if (b->busy == 0) break;
    pthread_cond_wait(&b->cv, &b->mu);
  }
  int rc = b->werr;
  char msg[sizeof b->wmsg];
  memcpy(msg, b->wmsg, sizeof msg);
  pthread_mutex_unlock(&b->mu);
  return rc ? kv_error(rc, "%s", msg) : KV_OK;
}

void kv_bulk_stop(kv_bulk *b) {
  pthread_mutex_lock(&b->mu);
  b->stop = true;
  b->q_len = 0; /* jobs not taken are dropped: their buffers belong to their families */
  bool started = b->started;
  b->started = false;
  pthread_cond_broadcast(&b->cv);
  pthread_mutex_unlock(&b->mu);
  if (started) pthread_join(b->th, NULL);
}

/* ---- the final files -------------------------------------------------------------------- */

/* One family's output file, written and synced but not yet named. */
typedef struct outf {
  kv_sfh *h;              /* handle with one reference, or NULL (nothing kept) */
  kv_sfh **cut;           /* h written again cut at its table's region boundaries
                             (kv_db_cut_file; h is then NULL), or NULL */
  uint32_t n_cut;         /* entries in cut not yet listed in the family (the last ones) */
  uint32_t n_cut_named;   /* entries in cut a MANIFEST record may name (0: none) */
  char path[KV_BULK_PATH_CAP]; /* its path */
  uint8_t *split;         /* a merge split in two key ranges: the first row of the second
                             (malloc'ed), or NULL */
  size_t split_len;       /* its length */
  kv_sf_seg *part[2];     /* the merged rows below split and from it on, encoded */
  bool to_file;           /* the parts' blocks go to files, not memory (the bound) */
  kv_file *pf[2];         /* those files, or NULL */
  char ppath[2][KV_BULK_PATH_CAP]; /* their paths ("" if none) */
} outf;

static int seg_first_cmp(const void *a, const void *b) {
  const kv_bulk_buf *x = *(kv_bulk_buf *const *)a, *y = *(kv_bulk_buf *const *)b;
  return kv_bytes_cmp(x->bounds, x->first_len, y->bounds, y->first_len);
}

/* When f's file can be its encoded segments one after another: *order gets its non-empty
** buffers in row order (malloc'ed), and true. */
static bool segments_chain(kv_bulk_fam *f, kv_bulk_buf ***order, size_t *n) {
  *order = NULL;
  *n = 0;
  if (f->n_runs) return false;
  kv_bulk_buf **o = malloc((f->n_segs + 1u) * sizeof *o);
  if (!o) return false;
  size_t k = 0;
  for (uint32_t i = 0; i < f->n_segs; i++) {
    kv_bulk_buf *u = f->segs[i];
    if (!u->ready || u->rc || u->raw) { /* not encoded (or its arrays could not go) */
      free(o);
      return false;
    }
    if (u->n_grps) o[k++] = u;
  }
  qsort(o, k, sizeof *o, seg_first_cmp);
  for (size_t i = 1; i < k; i++) {
    const kv_bulk_buf *p = o[i - 1], *u = o[i];
    if (kv_bytes_cmp(p->bounds + p->first_len, p->last_len, u->bounds, u->first_len) >= 0) {
      free(o);
      return false;
    }
  }
  *order = o;
  *n = k;
  return true;
}

/* Open a new file named <number><ext> in f's folder for writing. */
static int open_out(kv_bulk *b, kv_bulk_fam *f, const char *ext, bool run, char *path,
                    size_t cap, uint64_t *number, kv_sf_writer **w) {
  kv_db *db = b->db;
  int rc = db->env->mkdir(db->env, f->dir);
  if (rc) return rc;
  *number = kv_db_new_file_number(db);
  snprintf(path, cap, "%s/%llu%s", f->dir, (unsigned long long)*number, ext);
  kv_sf_writer_options wo = {f->block_size, run ? KV_COMPRESSION_NONE : f->compression,
                             run ? KV_SF_NO_BLOOM : 0u, 0};
  return kv_sf_writer_open(db->env, path, &wo, w);
}

int kv_bulk_materialize(kv_bulk *b, kv_bulk_fam *f) {
  uint32_t k = 0;
  int rc = KV_OK;
  for (uint32_t i = 0; i < f->n_segs; i++) {
    kv_bulk_buf *u = f->segs[i];
    if (rc || u->raw || !u->seg) { /* kept (or encoded to nothing: dropped) */
      if (rc || u->raw) f->segs[k++] = u;
      else kv_bulk_buf_free(u);
      continue;
    }
    size_t cap = f->cap_runs;
    if (!kv_bulk_grow((void **)&f->runs, &cap, f->n_runs + 1u, sizeof *f->runs)) {
      rc = kv_error(KV_ERR_NOMEM, "bulk load: out of memory");
      f->segs[k++] = u;
      continue;
    }
    f->cap_runs = (uint32_t)cap;
    char path[KV_BULK_PATH_CAP];
    uint64_t number;
    kv_sf_writer *w = NULL;
    rc = open_out(b, f, ".run", true, path, sizeof path, &number, &w);
    char *dup = rc ? NULL : strdup(path);
    if (rc == KV_OK && !dup) {
      kv_sf_writer_abort(w);
      b->db->env->remove(b->db->env, path);
      rc = kv_error(KV_ERR_NOMEM, "bulk load: out of memory");
    }
    if (rc) {
      f->segs[k++] = u;
      continue;
    }
    f->runs[f->n_runs++] = dup; /* removed by kv_bulk_free / commit from here on */
    pthread_mutex_lock(&b->mu);
    b->stats.runs++;
    pthread_mutex_unlock(&b->mu);
    rc = kv_sf_writer_add_seg(w, u->seg, u->ord_base + u->n_ents);
    if (rc) {
      kv_sf_writer_abort(w);
      f->segs[k++] = u;
      continue;
    }
    rc = kv_sf_writer_finish(w, NULL);
    if (rc) f->segs[k++] = u;
    else kv_bulk_buf_free(u);
  }
  f->n_segs = k;
  return rc;
}

/* Open a new run file of family f for a spill, named in f->runs first. */
static int open_run(kv_bulk *b, kv_bulk_fam *f, kv_sf_writer **w) {
  *w = NULL;
  size_t cap = f->cap_runs;
  if (!kv_bulk_grow((void **)&f->runs, &cap, f->n_runs + 1u, sizeof *f->runs))
    return kv_error(KV_ERR_NOMEM, "bulk load: out of memory");
  f->cap_runs = (uint32_t)cap;
  char path[KV_BULK_PATH_CAP];
  snprintf(path, sizeof path, "%s/%llu.run", f->dir,
           (unsigned long long)kv_db_new_file_number(b->db));
  char *dup = strdup(path);
  if (!dup) return kv_error(KV_ERR_NOMEM, "bulk load: out of memory");
  kv_sf_writer_options wo = {f->block_size, KV_COMPRESSION_NONE, KV_SF_NO_BLOOM, 0};
  int rc = kv_sf_writer_open(b->db->env, path, &wo, w);
  if (rc) {
    free(dup);
    return rc;
  }
  f->runs[f->n_runs++] = dup; /* removed by kv_bulk_free from here on */
  pthread_mutex_lock(&b->mu);
  b->stats.runs++;
  pthread_mutex_unlock(&b->mu);
  return KV_OK;
}

/* One key range of a spill, on a helper thread. */
typedef struct spill_half {
  kv_bulk *b;             /* the load */
  kv_bulk_fam *f;         /* the family spilled */
  kv_sf_writer *w;        /* its run */
  const uint8_t *lo;      /* its rows: from lo on */
  size_t lo_len;          /* lo's length */
  int rc;                 /* KV_OK or the error */
  char msg[512];          /* its message (kv_error's text is per thread) */
} spill_half;

static void *spill_main(void *arg) {
  spill_half *h = arg;
  h->rc = kv_bulk_merge_range(h->b, h->f, h->w, false, 0, h->lo, h->lo_len, NULL, 0);
  if (h->rc) snprintf(h->msg, sizeof h->msg, "%s", kv_errmsg());
  return NULL;
}

int kv_bulk_spill_runs(kv_bulk *b, kv_bulk_fam *f) {
  uint64_t cells = 0;
  const kv_bulk_buf *best = NULL;
  for (uint32_t i = 0; i < f->n_segs; i++) {
    const kv_bulk_buf *u = f->segs[i];
    cells += u->n_ents;
    if (u->raw && u->n_grps >= 2 && (!best || u->n_ents > best->n_ents)) best = u;
  }
  uint8_t *split = NULL;
  size_t split_len = 0;
  if (best && cells >= b->split_cells) {
    const kv_bulk_ent *e = &best->ents[best->grps[best->n_grps / 2].first];
    split_len = e->row_len;
    split = malloc(split_len ? split_len : 1);
    if (split) memcpy(split, best->arena + e->row_off, split_len); /* else in one piece */
  }
  kv_sf_writer *w[2] = {NULL, NULL};
  int rc = open_run(b, f, &w[0]);
  if (rc == KV_OK && split) rc = open_run(b, f, &w[1]);
  spill_half h = {b, f, w[1], split, split_len, KV_OK, ""};
  pthread_t th;
  bool helper = rc == KV_OK && split && kv_thread_create(&th, spill_main, &h) == 0;
  if (rc == KV_OK) rc = kv_bulk_merge_range(b, f, w[0], false, 0, NULL, 0, split, split_len);
  if (helper) pthread_join(th, NULL);
  else if (rc == KV_OK && split) spill_main(&h); /* no thread: the second range here */
  if (rc == KV_OK && h.rc) rc = kv_error(h.rc, "%s", h.msg);
  for (int k = 0; k < 2; k++) {
    if (!w[k]) continue;
    if (rc) {
      kv_sf_writer_abort(w[k]);
      continue;
    }
    rc = kv_sf_writer_finish(w[k], NULL);
  }
  free(split);
  return rc;
}

static int write_fam(kv_bulk *b, kv_bulk_fam *f, uint64_t seq, outf *o) {
  kv_db *db = b->db;
  kv_bulk_buf **order;
  size_t n;
  bool chain = segments_chain(f, &order, &n);
  bool blocks = !chain && f->n_runs == 0; /* overlapping segments: merged block-wise */
  int rc = chain || blocks || o->split ? KV_OK : kv_bulk_materialize(b, f);
  for (uint32_t i = 0; i < f->n_segs && rc == KV_OK; i++) rc = kv_bulk_sort_buf(f->segs[i]);
  uint64_t number = 0;
  kv_sf_writer *w = NULL;
  if (rc == KV_OK)
    rc = open_out(b, f, ".sf", false, o->path, sizeof o->path, &number, &w);
  if (rc) {
    o->path[0] = 0;
    free(order);
    return rc;
  }
  uint64_t reframed = 0;
  if (o->split) { /* merged in two halves already: their blocks one after the other */
    rc = kv_sf_writer_add_seg(w, o->part[0], seq);
    kv_sf_seg_free(o->part[0]); /* its row hashes are w's now: not twice in memory */
    o->part[0] = NULL;
    if (rc == KV_OK) rc = kv_sf_writer_add_seg(w, o->part[1], seq);
    kv_sf_seg_free(o->part[1]);
    o->part[1] = NULL;
    free(order);
  } else if (chain) {
    for (size_t i = 0; i < n && rc == KV_OK; i++) {
      reframed += order[i]->seg && kv_sf_seg_seq(order[i]->seg) != seq;
      rc = kv_sf_writer_add_seg(w, order[i]->seg, seq);
    }
    free(order);
  } else if (blocks) {
    rc = kv_bulk_merge_blocks(b, f, w, seq, NULL, 0, NULL, 0);
  } else {
    rc = kv_bulk_merge(b, f, w, true, seq);
  }
  pthread_mutex_lock(&b->mu);
  if (chain) b->stats.fams_segments++;
  else b->stats.fams_merged++;
  b->stats.segs_reframed += reframed;
  pthread_mutex_unlock(&b->mu);
  if (rc) {
    kv_sf_writer_abort(w);
    return rc;
  }
  kv_sf_props props;
  rc = kv_sf_writer_finish(w, &props);
  if (rc == KV_OK) rc = db->env->sync_dir(db->env, f->dir);
  if (rc) return rc;
  if (props.cells == 0) { /* everything was masked: an empty file, not kept */
    db->env->remove(db->env, o->path);
    o->path[0] = 0;
    return KV_OK;
  }
  kv_file_meta meta = {number, props.file_size, seq, seq, props.cells, props.rows};
  pthread_mutex_lock(&db->mu);
  kv_fam *kf = kv_db_family(db, f->id);
  pthread_mutex_unlock(&db->mu);
  if (!kf) return kv_error(KV_ERR_NOTFOUND, "bulk load: family id %u was dropped", f->id);
  rc = kv_sfh_open(db, kf, &meta, &o->h);
  /* a file of a table split into regions that holds rows of several is written again, cut
     at the boundaries (docs/KV_REGIONS.md), and the first one deleted */
  if (rc == KV_OK) rc = kv_db_cut_file(db, kf, o->h, &o->cut, &o->n_cut);
  if (rc == KV_OK && o->n_cut) {
    atomic_store(&o->h->obsolete, true); /* deleted now: nothing names it */
    kv_sfh_unref(o->h);
    o->h = NULL;
    o->path[0] = 0;
  }
  return rc;
}

/* Name the files in the MANIFEST and publish them with sequence number seq.
** REQUIRES: the writer role, mu NOT held. */
static int install(kv_bulk *b, outf *o, uint64_t seq) {
  kv_db *db = b->db;
  size_t n_out = 0;
  for (uint32_t i = 0; i < b->n_fams; i++) n_out += o[i].h ? 1 : o[i].n_cut;
  kv_edit *e = calloc(n_out + 2u, sizeof *e);
  if (!e) return kv_error(KV_ERR_NOMEM, "bulk load: out of memory");
  int n = 0, rc = KV_OK;
  /* The log position the record names (LOG_POSITION) must be on disk before it: the commits
  ** before the load are then in the file for a reader beside the writer, and an open whose
  ** log ends before them refuses the store instead of showing the load without them. */
  if (db->wal && (rc = kv_wal_sync_all(db->wal)) != KV_OK) {
    free(e);
    return kv_db_fail(db, rc);
  }
  pthread_mutex_lock(&db->mu);
  for (uint32_t i = 0; i < b->n_fams && rc == KV_OK; i++) {
    if (!o[i].h && !o[i].n_cut) continue;
    kv_fam *kf = kv_db_family(db, b->fams[i]->id);
    if (!kf) {
      rc = kv_error(KV_ERR_NOTFOUND, "bulk load: family id %u was dropped", b->fams[i]->id);
      break;
    }
    for (uint32_t k = 0; k < (o[i].h ? 1 : o[i].n_cut); k++) {
      e[n].kind = KV_EDIT_ADD_FILE;
      e[n].family_id = kf->id;
      e[n].table_id = kf->table_id;
      e[n].file = o[i].h ? o[i].h->meta : o[i].cut[k]->meta;
      n++;
    }
  }
  if (rc == KV_OK && n) {
    kv_db_bg_pause_install(db); /* the MANIFEST has one writer at a time; a compaction that
                                   is merging does not write it before we release mu */
    e[n] = kv_db_counters_edit(db, NULL);
    e[n].last_seq = seq;
    int n_e = n + 1;
    if (db->wal_end.seg) {
      e[n_e].kind = KV_EDIT_LOG_POSITION;
      e[n_e].log_segment = db->wal_end.seg;
      e[n_e].log_offset = db->wal_end.off;
      e[n_e].log_seq = db->wal_end.seq;
      n_e++;
    }
    rc = kv_manifest_apply(db->man, &db->ver, e, n_e);
    kv_db_bg_resume(db);
    if (rc) {
      char msg[256];
      snprintf(msg, sizeof msg, "%s", kv_errmsg());
      kv_db_set_bg_error(db, rc, msg);
      for (uint32_t i = 0; i < b->n_fams; i++) {
        if (o[i].h) o[i].path[0] = 0; /* may be named: kv_open decides */
        o[i].n_cut_named = o[i].n_cut;
      }
    }
  }
  if (rc == KV_OK) {
    for (uint32_t i = 0; i < b->n_fams; i++) o[i].path[0] = 0; /* named: never removed */
    for (uint32_t i = 0; i < b->n_fams; i++) o[i].n_cut_named = o[i].n_cut;
    for (uint32_t i = 0; i < b->n_fams && rc == KV_OK; i++) {
      kv_fam *kf = kv_db_family(db, b->fams[i]->id);
      if (o[i].h) rc = kv_fam_add_file(kf, o[i].h);
      if (o[i].h && rc == KV_OK) o[i].h = NULL;
      while (rc == KV_OK && o[i].n_cut) { /* listed in key order */
        rc = kv_fam_add_file(kf, o[i].cut[o[i].n_cut_named - o[i].n_cut]);
        if (rc == KV_OK) o[i].n_cut--;
      }
    }
    if (rc) kv_db_set_bg_error(db, rc, "bulk load: out of memory publishing the files");
    /* A load that kept no cell names no file and takes no sequence number: a sequence
    ** number that no WAL record and no MANIFEST record holds would look to a reader beside
    ** the writer (kv/db/db_follow.c) like a commit it has not seen yet. */
    if (n) atomic_store_explicit(&db->last_seq, seq, memory_order_release);
    pthread_cond_signal(&db->bg_cv); /* a family may have reached compaction_trigger */
  }
  pthread_mutex_unlock(&db->mu);
  free(e);
  return rc;
}

/* The row that cuts f's merge in two about equal halves: the middle row of its largest
** source (a raw buffer's middle group, an encoded segment's middle block). false: none. */
static bool choose_split(kv_bulk_fam *f, outf *o) {
  const kv_bulk_buf *best = NULL;
  for (uint32_t i = 0; i < f->n_segs; i++) {
    const kv_bulk_buf *u = f->segs[i];
    bool usable = u->raw ? u->n_grps >= 2 : kv_sf_seg_nblocks(u->seg) >= 2;
    if (usable && (!best || u->n_ents > best->n_ents)) best = u;
  }
  if (!best) return false;
  const uint8_t *k;
  size_t len;
  if (best->raw) {
    const kv_bulk_ent *e = &best->ents[best->grps[best->n_grps / 2].first];
    k = best->arena + e->row_off;
    len = e->row_len;
  } else {
    kv_sf_seg_binfo bi;
    kv_sf_seg_block_info(best->seg, kv_sf_seg_nblocks(best->seg) / 2, &bi);
    k = bi.first_row;
    len = bi.first_len;
  }
  o->split = malloc(len ? len : 1);
  if (!o->split) return false; /* merged in one piece then */
  memcpy(o->split, k, len);
  o->split_len = len;
  return true;
}

/* Merge key range `part` (0: below o->split, 1: from it on) of family f into o->part[part]. */
static int merge_part(kv_bulk *b, kv_bulk_fam *f, outf *o, int part, uint64_t seq) {
  kv_sf_writer_options wo = {f->block_size, f->compression, 0, 0};
  kv_sf_writer *w;
  int rc;
  if (o->to_file) { /* its blocks to a file of their own (<number>.run: kv_open deletes it) */
    kv_env *env = b->db->env;
    snprintf(o->ppath[part], sizeof o->ppath[part], "%s/%llu.run", f->dir,
             (unsigned long long)kv_db_new_file_number(b->db));
    rc = env->mkdir(env, f->dir);
    if (rc == KV_OK)
      rc = env->open(env, o->ppath[part], KV_OPEN_WRITE | KV_OPEN_TRUNCATE, &o->pf[part]);
    if (rc) {
      o->pf[part] = NULL;
      return rc;
    }
    rc = kv_sf_seg_open_file(&wo, env, o->pf[part], 0, &w);
  } else {
    rc = kv_sf_seg_open(&wo, &w);
  }
  if (rc) return rc;
  rc = part == 0 ? kv_bulk_merge_blocks(b, f, w, seq, NULL, 0, o->split, o->split_len)
                 : kv_bulk_merge_blocks(b, f, w, seq, o->split, o->split_len, NULL, 0);
  if (rc) {
    kv_sf_writer_abort(w);
    return rc;
  }
  return kv_sf_seg_finish(w, &o->part[part]);
}

/* Work for the WRITERS threads: whole families (part -1: write_fam) or halves of a split
** merge (part 0 / 1: merge_part). Each thread takes the next task until none is left or one
** failed. */
#define WRITERS 2

typedef struct wtask {
  uint32_t fam;           /* family index */
  int part;               /* -1: its whole file; 0 / 1: a half of its merge */
} wtask;

typedef struct wjob {
  kv_bulk *b;             /* the load */
  outf *o;                /* per family: its output */
  uint64_t seq;           /* the load's sequence number */
  wtask *tasks;           /* the tasks, largest first */
  uint32_t n_tasks;       /* their number */
  atomic_uint next;       /* next task */
  pthread_mutex_t mu;     /* guards rc and msg */
  int rc;                 /* first error, or KV_OK */
  char msg[512];          /* its message (kv_error's text is per thread) */
} wjob;

static void *writer_main(void *arg) {
  wjob *j = arg;
  for (;;) {
    unsigned k = atomic_fetch_add(&j->next, 1);
    if (k >= j->n_tasks) break;
    pthread_mutex_lock(&j->mu);
    bool failed = j->rc != KV_OK;
    pthread_mutex_unlock(&j->mu);
    if (failed) break;
    const wtask *t = &j->tasks[k];
    kv_bulk_fam *f = j->b->fams[t->fam];
    int rc = t->part < 0 ? write_fam(j->b, f, j->seq, &j->o[t->fam])
                         : merge_part(j->b, f, &j->o[t->fam], t->part, j->seq);
    if (rc) {
      pthread_mutex_lock(&j->mu);
      if (j->rc == KV_OK) {
        j->rc = rc;
        snprintf(j->msg, sizeof j->msg, "%s", kv_errmsg());
      }
      pthread_mutex_unlock(&j->mu);
      break;
    }
  }
  return NULL;
}

/* Run the tasks on up to WRITERS threads (this one included). */
static int run_tasks(kv_bulk *b, outf *o, uint64_t seq, wtask *tasks, uint32_t n) {
  if (n == 0) return KV_OK;
  wjob j;
  memset(&j, 0, sizeof j);
  j.b = b;
  j.o = o;
  j.seq = seq;
  j.tasks = tasks;
  j.n_tasks = n;
  atomic_init(&j.next, 0);
  pthread_mutex_init(&j.mu, NULL);
  pthread_t th[WRITERS - 1];
  int started = 0;
  for (int t = 0; t < WRITERS - 1 && (uint32_t)t + 1 < n; t++)
    if (kv_thread_create(&th[t], writer_main, &j) == 0) started++;
  writer_main(&j);
  for (int t = 0; t < started; t++) pthread_join(th[t], NULL);
  pthread_mutex_destroy(&j.mu);
  if (j.rc) return kv_error(j.rc, "%s", j.msg);
  return KV_OK;
}

/* Write every family's output file: first the halves of the merges big enough to split
** (both halves at once), then every family's file (write_fam), largest first. */
static int write_all(kv_bulk *b, outf *o, uint64_t seq) {
  wtask *t = malloc((b->n_fams * 2u + 1u) * sizeof *t);
  if (!t) return kv_error(KV_ERR_NOMEM, "bulk load: out of memory");
  uint32_t n = 0;
  int rc = KV_OK;
  uint64_t parts = 0; /* bytes of the halves planned in memory */
  for (uint32_t i = 0; i < b->n_fams && rc == KV_OK; i++) {
    kv_bulk_fam *f = b->fams[i];
    if (f->n_runs || f->cells < b->split_cells) continue;
    kv_bulk_buf **order;
    size_t k;
    bool chain = segments_chain(f, &order, &k);
    free(order);
    if (chain) continue;
    uint64_t data = 0; /* what its merged halves would hold in memory */
    for (uint32_t s = 0; s < f->n_segs && rc == KV_OK; s++) {
      rc = kv_bulk_sort_buf(f->segs[s]);
      data += f->segs[s]->raw ? f->segs[s]->charged : kv_sf_seg_data_bytes(f->segs[s]->seg);
    }
    o[i].to_file = b->bytes + parts + data > b->run_bytes;
    if (!o[i].to_file) parts += data;
    if (rc == KV_OK && choose_split(f, &o[i])) {
      t[n++] = (wtask){i, 0};
      t[n++] = (wtask){i, 1};
    }
  }
  if (rc == KV_OK) rc = run_tasks(b, o, seq, t, n);
  size_t held = b->bytes; /* the commit's peak: the buffers and every merged half */
  for (uint32_t i = 0; i < b->n_fams; i++)
    held += kv_sf_seg_bytes(o[i].part[0]) + kv_sf_seg_bytes(o[i].part[1]);
  kv_bulk_note_held(b, held);
  for (uint32_t i = 0; i < b->n_fams; i++)
    b->stats.bytes_paged += o[i].to_file ? kv_sf_seg_data_bytes(o[i].part[0]) +
                                               kv_sf_seg_data_bytes(o[i].part[1])
                                         : 0;
  n = 0;
  for (uint32_t i = 0; i < b->n_fams; i++) { /* insertion sort, most cells first */
    uint32_t k = n++;
    for (; k > 0 && b->fams[t[k - 1].fam]->cells < b->fams[i]->cells; k--) t[k] = t[k - 1];
    t[k] = (wtask){i, -1};
  }
  if (rc == KV_OK) rc = run_tasks(b, o, seq, t, n);
  free(t);
  return rc;
}

int kv_bulk_write_and_install(kv_bulk *b, uint64_t seq) {
  outf *o = calloc(b->n_fams ? b->n_fams : 1, sizeof *o);
  if (!o) return kv_error(KV_ERR_NOMEM, "bulk load: out of memory");
  int rc = write_all(b, o, seq);
  /* the last moment an interrupt can stop the load: the files are written, none installed */
  if (rc == KV_OK && b->interrupt && atomic_load_explicit(b->interrupt, memory_order_relaxed))
    rc = kv_error(KV_ERR_INTERRUPTED, "interrupted");
  if (rc == KV_OK) rc = install(b, o, seq);
  for (uint32_t i = 0; rc && i < b->n_fams; i++) {
    if (o[i].h) kv_sfh_unref(o[i].h);
    if (o[i].path[0]) b->db->env->remove(b->db->env, o[i].path);
  }
  for (uint32_t i = 0; i < b->n_fams; i++) { /* cut files not listed in their family */
    uint32_t from = o[i].n_cut_named ? o[i].n_cut_named - o[i].n_cut : 0;
    for (uint32_t k = from; k < from + o[i].n_cut; k++) {
      if (!o[i].n_cut_named) atomic_store(&o[i].cut[k]->obsolete, true); /* never named */
      kv_sfh_unref(o[i].cut[k]);
    }
    free(o[i].cut);
  }
  for (uint32_t i = 0; i < b->n_fams; i++) {
    free(o[i].split);
    kv_sf_seg_free(o[i].part[0]);
    kv_sf_seg_free(o[i].part[1]);
    for (int k = 0; k < 2; k++) {
      if (o[i].pf[k]) b->db->env->close(o[i].pf[k]);
      if (o[i].ppath[k][0]) b->db->env->remove(b->db->env, o[i].ppath[k]);
    }
  }
  free(o);
  return rc;
}
