/*
** kv/db/compact.c: compaction (kv_compact, and the automatic minor compaction a flush starts
** when a family has compaction_trigger store files).
**
** Minor: merge store files of the family into one; every cell is kept (tombstones, old
** versions, expired cells), so no read changes. kv_compact's minor merges every file; the
** automatic one merges the newest files kv_db_minor_pick names (size-tiered).
** Major: first flush the family's memstore (so every cell is in the files and the result
** equals what a read sees), then merge and keep only the puts a read at that moment would
** see with max_versions = VERSIONS and no time range (kv/db/db_vis.c): tombstones, masked
** and replaced cells, versions beyond VERSIONS, cells past TTL and the cells of the
** family's dropped qualifiers (kv_family_set_dropped_qualifiers) are dropped for good.
** With a look-back window (kv_options.max_lookback_ms) a major compaction at time now keeps
** every cell newer than now - window as it is (tombstones, masked puts, versions beyond
** VERSIONS; not cells past TTL) with their sequence numbers, and below the cutoff what a
** read as of the cutoff sees, so a read as of any time inside the window is unchanged
** (kv_lookback_horizon; docs/KV_TIME.md). Two exceptions change no read (cm_hold): a
** tombstone of the window with nothing under it (the DeleteColumn of an UPSERT's NULL into
** a new row) is dropped, and a put alone in its column keeps no sequence number; kept, they
** cost bytes and took blocks off the scans' fast row path.
** While a snapshot is acquired, a (row, family) that has any cell newer than the oldest
** snapshot is copied whole, so every snapshot keeps seeing what it saw.
**
** A minor compaction copies whole blocks where it can (kv/sf/sf_copy.h): when the input holding
** the merge's smallest cell stands on a block's first cell and every row of that block sorts
** below the current row of every other input, the block's bytes go to the output as they
** are, and so do the blocks after it while that holds; elsewhere cells are merged one by
** one. Files whose key ranges follow one another are merged at the cost of reading them.
**
** Runs in the background thread (kv/db/db_bg.c), which also serves kv_compact.
** Steps: the new file is written and synced; one MANIFEST record removes the inputs and
** adds it; the inputs are marked obsolete and deleted when the last scan reading them
** closes. A crash before the record leaves an unnamed file that kv_open deletes; after it,
** inputs not yet deleted are deleted by kv_open for the same reason.
*/
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kv/db/db_impl.h"
#include "kv/sf/sf_copy.h"
#include "kv/util/mem.h"
#include "kv/util/status.h"


/* A kv_iter over the merge of the input files that hands out only what compaction keeps. */
typedef struct cmerge {
  kv_iter base;            /* vtable (only seek_first/valid/next/cell/status/destroy) */
  kv_iter **kids;          /* one iterator per input file */
  uint32_t n_kids;         /* entries in kids */
  int cur;                 /* kid with the smallest cell, -1 at the end */
  bool major;              /* apply the drop rules */
  bool window;             /* a look-back window: cells above vis.as_of are kept whole */
  bool win_fam_del;        /* a DeleteFamily of the row was kept (inside the window) */
  uint8_t *win_qual; uint32_t win_qual_len, win_qual_cap; /* the column of the last
                              DeleteColumn / DeleteVersion kept in the row */
  bool win_col_del;        /* win_qual holds one */
  kv_cell pend;            /* a window tombstone held back by cm_defer, handed out next */
  uint8_t *pend_buf; uint32_t pend_cap; /* its row and qualifier bytes */
  bool pending;            /* pend is the current cell (the raw merge stands after it) */
  bool next_same;          /* the raw merge's cell is in the column of the cell held last */
  uint64_t hold;           /* oldest snapshot; rows with newer cells are copied whole */
  bool held;               /* a snapshot older than the last sequence number is held */
  kv_vis vis;              /* visibility state */
  kv_qualset dead;         /* qualifiers dropped whatever the rules (the family's, copied) */
  uint8_t *row; uint32_t row_len, row_cap; /* row being emitted */
  bool keep_row;           /* copy the current row whole */
  kv_cell out;             /* the cell handed out when its sequence number is zeroed */
  int err;                 /* first error */
} cmerge;

static void cm_pick(cmerge *m) {
  const kv_cell *best = NULL;
  m->cur = -1;
  for (uint32_t i = 0; i < m->n_kids; i++) {
    kv_iter *k = m->kids[i];
    if (!k->ops->valid(k)) {
      int rc = k->ops->status(k);
      if (rc && !m->err) m->err = rc;
      continue;
    }
    const kv_cell *c = k->ops->cell(k);
    if (!best || kv_cell_cmp(c, best) < 0) {
      best = c;
      m->cur = (int)i;
    }
  }
  if (m->err) m->cur = -1;
}

static const kv_cell *cm_raw(cmerge *m) {
  return m->cur < 0 ? NULL : m->kids[m->cur]->ops->cell(m->kids[m->cur]);
}

static void cm_raw_next(cmerge *m) {
  kv_iter *k = m->kids[m->cur];
  k->ops->next(k);
  cm_pick(m);
}

static void cm_seek_row(cmerge *m, const uint8_t *row, uint32_t len) {
  kv_cell t = kv_cell_row_first(row, len);
  for (uint32_t i = 0; i < m->n_kids; i++) m->kids[i]->ops->seek(m->kids[i], &t);
  cm_pick(m);
}

/* At a row's first cell: decide whether it is copied whole. */
static void cm_row_start(cmerge *m) {
  const kv_cell *c = cm_raw(m);
  if (m->row_cap < c->row_len) {
    uint8_t *nr = realloc(m->row, c->row_len);
    if (!nr) {
      m->err = KV_ERR_NOMEM;
      m->cur = -1;
      return;
    }
    m->row = nr;
    m->row_cap = c->row_len;
  }
  memcpy(m->row, c->row, c->row_len);
  m->row_len = c->row_len;
  kv_vis_row_start(&m->vis);
  m->keep_row = false;
  m->win_fam_del = m->win_col_del = false;
  m->next_same = false;
  if (!m->held) return;
  /* A first pass over the row: any cell newer than the oldest snapshot? */
  for (; c && kv_bytes_cmp(c->row, c->row_len, m->row, m->row_len) == 0; c = cm_raw(m)) {
    if (c->seq > m->hold) m->keep_row = true;
    cm_raw_next(m);
  }
  cm_seek_row(m, m->row, m->row_len);
}

/* Every cell kept inside the look-back window keeps its sequence number (the window keeps
** all its versions, so cells equal but for it may be kept side by side, and a put written
** after a tombstone at or below its timestamp must stay unmasked); so do the older puts of
** the row (after a DeleteFamily) or column (after a DeleteColumn or DeleteVersion) of a
** window tombstone, which it masks by their order: cm_cell zeroes the rest. Tombstones
** sort before the puts they can mask, so the note is there in time. */
static void note_window_del(cmerge *m, const kv_cell *c) {
  if (c->type == KV_DELETE_FAMILY) m->win_fam_del = true;
  if (c->type != KV_DELETE_COLUMN && c->type != KV_DELETE_VERSION) return;
  if (c->qual_len > m->win_qual_cap) {
    uint8_t *nq = realloc(m->win_qual, c->qual_len);
    if (!nq) { /* keep every sequence number of the row then */
      m->win_fam_del = true;
      return;
    }
    m->win_qual = nq;
    m->win_qual_cap = c->qual_len;
  }
  if (c->qual_len) memcpy(m->win_qual, c->qual, c->qual_len);
  m->win_qual_len = c->qual_len;
  m->win_col_del = true;
}

/* A cell inside the look-back window is held: copied to m->pend (cm_cell hands the copy out
** next) while the merge steps past it, so the next cell tells what the held one needs:
** - a tombstone with no cell of its scope after it (its column for a DeleteColumn or
**   DeleteVersion, its row for a DeleteFamily) masks nothing for any read time (a major
**   compaction holds every cell of the family, and later writes have higher sequence
**   numbers, which no tombstone masks): it is dropped. The usual one is the DeleteColumn
**   an UPSERT writes for a NULL into a row that never had the column;
** - a put alone in its column (no cell before or after it there) and in a row without a
**   kept DeleteFamily orders against nothing: its sequence number is zeroed, as below the
**   cutoff (a later write still has a higher one).
** *same_row and *same_col say where the next cell lies; false when out of memory. */
static bool cm_hold(cmerge *m, const kv_cell *c, bool *same_row, bool *same_col) {
  size_t need = (size_t)c->row_len + c->qual_len + c->value_len;
  if (need > m->pend_cap) {
    uint8_t *nb = realloc(m->pend_buf, need);
    if (!nb) {
      m->err = KV_ERR_NOMEM;
      m->cur = -1;
      return false;
    }
    m->pend_buf = nb;
    m->pend_cap = (uint32_t)need;
  }
  m->pend = *c;
  uint8_t *p = m->pend_buf;
  if (c->row_len) memcpy(p, c->row, c->row_len);
  m->pend.row = p;
  p += c->row_len;
  if (c->qual_len) memcpy(p, c->qual, c->qual_len);
  m->pend.qual = p;
  p += c->qual_len;
  if (c->value_len) memcpy(p, c->value, c->value_len);
  m->pend.value = p;
  cm_raw_next(m);
  const kv_cell *n = cm_raw(m);
  *same_row = n && kv_bytes_cmp(n->row, n->row_len, m->pend.row, m->pend.row_len) == 0;
  *same_col = *same_row && kv_bytes_cmp(n->qual, n->qual_len, m->pend.qual, m->pend.qual_len) == 0;
  return true;
}

/* The window cell c: held (cm_hold) and made the current cell, or dropped (false: the merge
** stands on the next cell). prev_same: the cell before it was kept in its column. */
static bool cm_window_cell(cmerge *m, const kv_cell *c, bool prev_same) {
  bool same_row, same_col;
  if (!cm_hold(m, c, &same_row, &same_col)) return true; /* out of memory: m->cur is -1 */
  kv_cell *h = &m->pend;
  if (h->type != KV_PUT && !(h->type == KV_DELETE_FAMILY ? same_row : same_col))
    return false; /* a tombstone that masks nothing */
  m->pending = true;
  m->next_same = same_col;
  note_window_del(m, h);
  if (h->type == KV_PUT && !prev_same && !same_col && !m->win_fam_del &&
      !(m->win_col_del && h->qual_len == m->win_qual_len &&
        memcmp(h->qual, m->win_qual, h->qual_len) == 0))
    h->seq = 0;
  return true;
}

/* Advance until positioned on a cell compaction keeps (or the end). */
static void cm_settle(cmerge *m) {
  for (const kv_cell *c = cm_raw(m); c; c = cm_raw(m)) {
    if (!m->major) return;
    if (kv_bytes_cmp(c->row, c->row_len, m->row, m->row_len) != 0) {
      cm_row_start(m);
      c = cm_raw(m);
      if (!c) return;
    }
    if (m->keep_row) return;
    bool prev_same = m->next_same; /* the kept cell before c is in c's column */
    m->next_same = false;
    bool dead = m->dead.n && kv_qualset_has(&m->dead, c->qual, c->qual_len);
    if (!dead && m->window && c->ts > m->vis.as_of &&
        !(m->vis.ttl_ms > 0 && m->vis.now_ms - c->ts >= m->vis.ttl_ms)) {
      if (cm_window_cell(m, c, prev_same)) return; /* inside the look-back window, not
                                                      expired: kept as it is (cm_hold) */
      continue;
    }
    if (!dead && kv_vis_cell(&m->vis, c)) return;
    cm_raw_next(m);
  }
}

static bool cm_valid(kv_iter *it) {
  cmerge *m = (cmerge *)it;
  return m->cur >= 0 || m->pending;
}
static void cm_seek_first(kv_iter *it) {
  cmerge *m = (cmerge *)it;
  m->pending = false;
  m->next_same = false;
  for (uint32_t i = 0; i < m->n_kids; i++) m->kids[i]->ops->seek_first(m->kids[i]);
  cm_pick(m);
  m->row_len = 0;
  if (m->major && cm_raw(m)) cm_row_start(m);
  cm_settle(m);
}
static void cm_next(kv_iter *it) {
  cmerge *m = (cmerge *)it;
  if (m->pending) /* the held-back tombstone is out: the merge already stands after it */
    m->pending = false;
  else
    cm_raw_next(m);
  cm_settle(m);
}
/* A major compaction keeps only visible puts, at most one per (row, qualifier, timestamp)
** (kv/db/db_vis.c), so outside rows copied whole for a snapshot their sequence numbers order
** nothing any more: any later write has a higher one. They are stored as 0 (HBase zeroes the
** MVCC number of old cells the same way), which makes the store file's sequence stream cost
** next to nothing (docs/FORMAT.md Part 2). */
static const kv_cell *cm_cell(kv_iter *it) {
  cmerge *m = (cmerge *)it;
  if (m->pending) return &m->pend; /* a window tombstone: as it is */
  const kv_cell *c = cm_raw(m);
  if (!c || !m->major || m->keep_row) return c;
  if (m->window && (c->ts > m->vis.as_of || m->win_fam_del ||
                    (m->win_col_del && c->qual_len == m->win_qual_len &&
                     memcmp(c->qual, m->win_qual, c->qual_len) == 0)))
    return c; /* a cell of the window (kept with the cells it orders against, equal
                 timestamps included), or an older put a window tombstone may mask */
  m->out = *c;
  m->out.seq = 0;
  return &m->out;
}
static int cm_status(kv_iter *it) {
  cmerge *m = (cmerge *)it;
  if (m->err) return m->err;
  return m->vis.err;
}
static void cm_unsupported(kv_iter *it) { ((cmerge *)it)->cur = -1; }
static void cm_unsupported_seek(kv_iter *it, const kv_cell *t) { ((cmerge *)it)->cur = -1; }
static void cm_destroy(kv_iter *it) { (void)it; }

static const kv_iter_ops cmerge_ops = {
  cm_valid, cm_seek_first, cm_unsupported, cm_unsupported_seek, cm_unsupported_seek,
  cm_next, cm_unsupported, cm_cell, cm_status, cm_destroy,
};

/* ---- minor compaction: the merge, with whole blocks copied (kv/sf/sf_copy.h) ------------- */

static atomic_bool block_copy = true; /* kv_compact_set_block_copy */

void kv_compact_set_block_copy(bool on) { atomic_store(&block_copy, on); }

static void (*_Atomic merge_hook)(void *); /* kv_compact_set_merge_hook */
static void *_Atomic merge_hook_arg;

void kv_compact_set_merge_hook(void (*hook)(void *arg), void *arg) {
  atomic_store(&merge_hook_arg, arg);
  atomic_store(&merge_hook, hook);
}

/* Begin or end the merging phase (db->bg_cm_merging): while it lasts a bulk load's commit
** may write the MANIFEST and append files to f's list (kv_db_bg_pause_install). */
static void set_merging(kv_db *db, bool on) {
  pthread_mutex_lock(&db->mu);
  db->bg_cm_merging = on;
  if (on) pthread_cond_broadcast(&db->bg_done_cv); /* a commit waiting for the thread */
  pthread_mutex_unlock(&db->mu);
}

typedef struct minor_fill {
  cmerge *m;                 /* the merge of the inputs (not major) */
  kv_sfh **in;               /* the inputs */
  uint32_t n;                /* their number */
  uint64_t copied;           /* blocks copied whole */
  kv_sf_copier cp;           /* the block copier (kept across the outputs) */
} minor_fill;

/* kv_db_write_sfs's next_row for a minor compaction: the merge's next cell. */
static bool minor_next_row(void *ctx, const uint8_t **row, uint32_t *len) {
  minor_fill *x = ctx;
  if (x->m->cur < 0) return false;
  const kv_cell *c = cm_raw(x->m);
  *row = c->row;
  *len = c->row_len;
  return true;
}

/* kv_db_write_sfs's fill for a minor compaction: the cells of the inputs below end in order,
** as the merge hands them out; where the input holding the smallest cell stands on a
** block's first cell and that block's rows all sort below the current row of every other
** input and below end, the block (and those after it, while that holds) is copied whole
** instead. */
static int minor_fill_run(void *ctx, kv_sf_writer *w, const uint8_t *end, uint32_t end_len) {
  minor_fill *x = ctx;
  cmerge *m = x->m;
  bool copy = atomic_load(&block_copy);
  int rc = KV_OK;
  while (rc == KV_OK && m->cur >= 0) {
    kv_iter *k = m->kids[m->cur];
    const kv_cell *next = cm_raw(m);
    if (end && kv_bytes_cmp(next->row, next->row_len, end, end_len) >= 0) break;
    if (copy && kv_sf_iter_at_block_start(k)) {
      const uint8_t *bound = end; /* the region's end, or a smaller current row of the others */
      uint32_t bound_len = end_len;
      for (uint32_t i = 0; i < m->n_kids; i++) {
        kv_iter *o = m->kids[i];
        if ((int)i == m->cur || !o->ops->valid(o)) continue;
        const kv_cell *c = o->ops->cell(o);
        if (!bound || kv_bytes_cmp(c->row, c->row_len, bound, bound_len) < 0) {
          bound = c->row;
          bound_len = c->row_len;
        }
      }
      uint64_t n = 0;
      rc = kv_sf_copy_blocks(&x->cp, w, k, bound, bound_len, &n);
      if (rc == KV_OK && n) {
        x->copied += n;
        cm_pick(m);
        continue;
      }
    }
    if (rc == KV_OK) rc = kv_sf_writer_add(w, next);
    if (rc == KV_OK) cm_raw_next(m);
  }
  if (rc == KV_OK) rc = cm_status(&m->base);
  /* the inputs' ranges (copied blocks leave the trailer's short of them): with regions,
     each output covers them all, which is wider than its cells, never narrower */
  for (uint32_t i = 0; i < x->n && rc == KV_OK; i++)
    kv_sf_writer_widen(w, kv_sf_get_props(x->in[i]->reader));
  return rc;
}
static int minor_status(void *ctx) { return cm_status(&((minor_fill *)ctx)->m->base); }
static const kv_db_fill minor_fill_ops = {minor_next_row, minor_fill_run, minor_status};

/* kv_db_minor_pick for a family split into regions, where every store file lies within one
** region (a file cut at a new boundary counts in the region of its first row) and a merge
** writes one file per region its inputs hold: the newest files back to the first point where
** one region has `trigger` of them (at least 2), so the merge always leaves fewer files than
** it took. Counting files of the whole family instead picked the newest `trigger` files
** again and again once the family had one file in each of `trigger` regions or more: each
** merge wrote back as many files as it read, and the automatic compaction never ended (a
** salted table of 16 buckets). REQUIRES: mu held. */
static uint32_t region_pick(const kv_fam *f, uint32_t trigger) {
  uint32_t n = f->n_files, nr = f->regions->n + 1, pick = n;
  uint32_t local[64], *cnt = nr <= 64 ? local : calloc(nr, sizeof *cnt);
  if (!cnt) return n; /* out of memory: no merge now, the next pick tries again */
  if (cnt == local) memset(local, 0, sizeof local);
  if (trigger < 2) trigger = 2;
  for (uint32_t i = n; i-- > 0;) {
    const uint8_t *first, *last;
    uint32_t first_len, last_len;
    kv_sf_key_range(f->files[i]->reader, &first, &first_len, &last, &last_len);
    uint32_t r = first ? kv_regions_find(f->regions, first, first_len) : 0;
    if (++cnt[r] >= trigger) {
      pick = i;
      break;
    }
  }
  if (cnt != local) free(cnt);
  return pick;
}

uint32_t kv_db_minor_pick(const kv_fam *f, uint32_t trigger) {
  if (f->regions) return region_pick(f, trigger);
  uint32_t n = f->n_files;
  if (n < 2 || n < trigger) return n;
  double newer = 0; /* bytes of the files newer than file i */
  uint32_t pick = n;
  for (uint32_t i = n; i-- > 0;) {
    double sz = (double)f->files[i]->meta.size;
    if (i + 1 < n && sz <= KV_CM_RATIO * newer) pick = i; /* the oldest such file wins */
    newer += sz;
  }
  if (pick == n && n >= 2 * trigger) pick = n - trigger;
  return pick;
}

int kv_db_compact_family(kv_db *db, kv_fam *f, enum kv_cm_mode mode) {
  bool major = mode == KV_CM_MAJOR;
  pthread_mutex_lock(&db->mu);
  int rc = kv_db_writable(db);
  /* the inputs are files [first, first + n) of f: the newest ones. Flushes run in this
     same thread and DDL pauses it; a bulk load's commit may append files while the merge
     writes (set_merging), never remove or reorder any: the inputs stay where they are */
  uint32_t trigger = (uint32_t)db->opts.compaction_trigger;
  uint32_t first = mode == KV_CM_AUTO ? kv_db_minor_pick(f, trigger) : 0;
  uint32_t n = f->n_files - first;
  if (rc || n == 0 || (!major && n < 2)) {
    pthread_mutex_unlock(&db->mu);
    return rc;
  }
  kv_sfh **in = malloc(n * sizeof *in);
  if (!in) {
    pthread_mutex_unlock(&db->mu);
    return kv_error(KV_ERR_NOMEM, "compaction: out of memory");
  }
  for (uint32_t i = 0; i < n; i++) {
    in[i] = f->files[first + i];
    kv_sfh_ref(in[i]);
  }
  cmerge m;
  memset(&m, 0, sizeof m);
  m.base.ops = &cmerge_ops;
  m.major = major;
  m.hold = kv_db_oldest_snapshot(db);
  m.held = m.hold < atomic_load(&db->last_seq);
  bool dead_ok = !major || kv_qualset_copy(&m.dead, &f->dead);
  pthread_mutex_unlock(&db->mu);
  if (!dead_ok) rc = kv_error(KV_ERR_NOMEM, "compaction: out of memory");
  set_merging(db, true);
  void (*hook)(void *) = atomic_load(&merge_hook);
  if (hook) hook(atomic_load(&merge_hook_arg));

  kv_vis_init(&m.vis);
  m.vis.versions = f->max_versions;
  m.vis.ttl_ms = f->ttl_sec * 1000;
  m.vis.now_ms = db->env->now_ms(db->env);
  m.vis.max_versions = INT_MAX;
  if (major && db->opts.max_lookback_ms > 0) {
    /* the look-back window (kv.h max_lookback_ms): below the cutoff, what a read as of it
       sees; above, everything */
    m.window = true;
    m.vis.as_of = m.vis.now_ms - db->opts.max_lookback_ms;
    int64_t cut = atomic_load(&db->lookback_cut);
    while (cut < m.vis.as_of && !atomic_compare_exchange_weak(&db->lookback_cut, &cut, m.vis.as_of)) {
    }
  }
  m.kids = calloc(n, sizeof *m.kids);
  if (!m.kids) rc = kv_error(KV_ERR_NOMEM, "compaction: out of memory");
  for (uint32_t i = 0; i < n && rc == KV_OK; i++) {
    m.kids[i] = kv_sf_iter_new_opts(in[i]->reader, NULL, false);
    if (!m.kids[i]) rc = kv_error(KV_ERR_NOMEM, "compaction: out of memory");
    else m.n_kids++;
  }
  kv_sfh **outs = NULL;
  uint32_t n_out = 0;
  minor_fill mf = {&m, in, n, 0, {0}};
  if (rc == KV_OK && major) {
    rc = kv_db_write_iter(db, f, &m.base, &outs, &n_out);
  } else if (rc == KV_OK) {
    cm_seek_first(&m.base);
    rc = kv_db_write_sfs(db, f, &minor_fill_ops, &mf, &outs, &n_out);
  }
  set_merging(db, false); /* (waits for a commit holding mu: then it is listed) */
  kv_sf_copier_free(&mf.cp);
  for (uint32_t i = 0; i < m.n_kids; i++) m.kids[i]->ops->destroy(m.kids[i]);
  free(m.kids);
  free(m.row);
  free(m.win_qual);
  free(m.pend_buf);
  kv_vis_free(&m.vis);
  kv_qualset_free(&m.dead);
  if (rc == KV_ERR_CORRUPT) {
    /* a damaged input: nothing was written or recorded. The family's files stay as they
       are (the damaged one fails only the reads that touch it); automatic compactions skip
       the family from now on, and the store stays writable (docs/KV_REGIONS.md) */
    rc = kv_db_corrupt_region(db, f->id, in, n, rc);
    pthread_mutex_lock(&db->mu);
    f->compact_damaged = true;
    snprintf(f->damage_msg, sizeof f->damage_msg, "compaction: %s", kv_errmsg());
    pthread_mutex_unlock(&db->mu);
    for (uint32_t i = 0; i < n; i++) kv_sfh_unref(in[i]);
    free(in);
    return rc;
  }

  kv_edit *e = NULL;
  if (rc == KV_OK) {
    e = calloc(n + n_out + 1, sizeof *e);
    if (!e) rc = kv_error(KV_ERR_NOMEM, "compaction: out of memory");
  }
  if (rc == KV_OK) {
    int k = 0;
    for (uint32_t i = 0; i < n; i++) {
      e[k].kind = KV_EDIT_REMOVE_FILE;
      e[k].family_id = f->id;
      e[k].table_id = f->table_id;
      e[k].file = in[i]->meta;
      k++;
    }
    for (uint32_t i = 0; i < n_out; i++) {
      e[k].kind = KV_EDIT_ADD_FILE;
      e[k].family_id = f->id;
      e[k].table_id = f->table_id;
      e[k].file = outs[i]->meta;
      k++;
    }
    pthread_mutex_lock(&db->mu);
    e[k] = kv_db_counters_edit(db, NULL);
    pthread_mutex_unlock(&db->mu);
    e[k].wal_number = db->ver.wal_number; /* a compaction frees no WAL segment */
    k++;
    rc = kv_manifest_apply(db->man, &db->ver, e, k);
  }
  free(e);
  if (rc) {
    kv_db_sfs_free(outs, n_out); /* kept on disk: a failed sync may still have recorded them */
    for (uint32_t i = 0; i < n; i++) kv_sfh_unref(in[i]);
    free(in);
    char msg[256];
    snprintf(msg, sizeof msg, "%s", kv_errmsg());
    pthread_mutex_lock(&db->mu);
    kv_db_set_bg_error(db, rc, msg);
    pthread_mutex_unlock(&db->mu);
    return kv_error(rc, "%s", msg);
  }
  pthread_mutex_lock(&db->mu);
  /* the inputs are still files [first, first + n) (see above), followed by any a bulk load
     committed while the merge wrote; the output holds the inputs' largest sequence number,
     below the load's, so it goes where they were, before those (as the MANIFEST's order by
     sequence number has it at the next open) */
  uint32_t tail = f->n_files - first - n;
  int arc = KV_OK;
  if (first + n_out + tail > f->cap_files) {
    kv_sfh **nf = realloc(f->files, (first + n_out + tail) * sizeof *nf);
    if (nf) {
      f->files = nf;
      f->cap_files = first + n_out + tail;
    } else {
      arc = kv_error(KV_ERR_NOMEM, "compaction: out of memory listing its output");
    }
  }
  for (uint32_t i = first; i < first + n; i++) {
    atomic_store(&f->files[i]->obsolete, true);
    kv_sfh_unref(f->files[i]);
  }
  uint32_t added = arc ? 0 : n_out;
  memmove(&f->files[first + added], &f->files[first + n], tail * sizeof *f->files);
  uint64_t blocks = 0;
  for (uint32_t i = 0; i < added; i++) {
    blocks += kv_sf_get_props(outs[i]->reader)->blocks;
    f->files[first + i] = outs[i];
  }
  f->n_files = first + added + tail;
  db->stat_compactions++;
  f->compactions++;
  f->blocks_copied += mf.copied;
  f->blocks_merged += blocks - mf.copied;
  if (arc) kv_db_set_bg_error(db, arc, "compaction: out of memory listing its output");
  pthread_mutex_unlock(&db->mu);
  for (uint32_t i = added; i < n_out; i++) kv_sfh_unref(outs[i]);
  free(outs);
  uint64_t in_bytes = 0;
  for (uint32_t i = 0; i < n; i++) {
    in_bytes += kv_sf_get_props(in[i]->reader)->file_size;
    kv_sfh_unref(in[i]);
  }
  free(in);
  /* the merge's buffers and the inputs' indexes (once no reader holds them), when the
     inputs were megabytes */
  if (in_bytes >= KV_MEM_RELEASE_MIN) kv_mem_release();
  return KV_OK;
}

int64_t kv_lookback_horizon(kv_db *db) {
  int64_t now = db->env->now_ms(db->env);
  int64_t w = db->opts.max_lookback_ms;
  if (w <= 0) return now;
  int64_t h = now - w, cut = atomic_load(&db->lookback_cut);
  return cut > h ? cut : h;
}
