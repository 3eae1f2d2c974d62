/*
** kv/scan.c: scans and point reads (kv_scan_open/next/close, kv_get). Snapshots (the
** sequence numbers a scan reads at) are kv/snapshot.c's.
**
** A scan takes, under db->mu, references to the memstores and store files of the families
** it reads (and of no other family), then reads without locks. Per family the sources are
** merged by a small linear merge (a family has few sources: the memstore, the frozen ones
** waiting for the background flush and
** a handful of store files). Ranges are normalized at open to half-open [start, end) byte
** intervals (an exclusive start s becomes s+0x00, an inclusive end e becomes e+0x00, the
** immediate successors in byte order), so every bound is a plain comparison.
**
** Forward: seek every family to the range start, take the smallest row key among them,
** feed that row's cells of each family through kv/scan_vis.c, then the projection, the
** filter and the limit. Reverse: with an exclusive upper bound U (the range end, then the
** last row handed out), seek_for_prev every source to the first possible cell of U to find
** the previous row, then read that row forward like a forward scan. Rows are handed out in
** descending key order; cells inside a row keep the normal order.
**
** Nothing is allocated per cell: cell bytes are copied into one buffer reused across rows.
** Nor, in the steady state, per scan: a closed scan's shell (its buffers, source arrays,
** visibility state and its store-file iterators, parked by kv_sf_iter_park) is kept in
** db->scan_spare (one slot, swapped atomically) and the next open takes it, re-aiming the
** iterators at its files (kv_sf_iter_retarget), so a point lookup per statement costs no
** malloc once warm.
**
** Overlay (kv_scan_options.overlay): at open, the batch's ops of each family read are copied
** into a private memstore with sequence numbers snapshot+1, snapshot+2, ... in batch order,
** which becomes one more source of the family; the visibility snapshot is raised past them,
** and cells of the other sources above the real snapshot are dropped before the visibility
** rules see them, so later commits stay invisible while the overlay is seen.
** Not here: tombstone rules (kv/scan_vis.c), store-file decoding (kv/sf*.c).
*/
#include <stdlib.h>
#include <string.h>

#include "kv/coding.h"
#include "kv/db_impl.h"
#include "kv/sf_reuse.h"
#include "kv/status.h"

typedef struct fscan {
  uint32_t fid;                 /* family id */
  kv_memstore **mems;           /* referenced memstores (active, frozen ones, overlay) */
  int n_mems;                   /* entries in mems */
  uint32_t mems_cap;            /* entries allocated in mems */
  kv_memstore *ovl;             /* the overlay memstore (also in mems), NULL if none */
  int ovl_kid;                  /* kid reading the overlay memstore, -1 if none */
  kv_sfh **files;               /* referenced store files */
  uint32_t n_files;             /* entries in files */
  uint32_t files_cap;           /* entries allocated in files */
  kv_iter **kids;               /* one iterator per source: mems first, then files */
  uint8_t *parked;              /* per kid: 1 = left out of the current single-key range
                                   because its file's bloom filter rules the key out */
  uint32_t n_kids;              /* entries in kids */
  uint32_t kids_cap;            /* entries allocated in kids and parked */
  kv_iter **spare;              /* parked store-file iterators of an earlier scan */
  uint32_t n_spare, spare_cap;  /* entries in spare / allocated */
  uint32_t n_mem_kids;          /* kids reading memstores (empty ones get none) */
  int cur;                      /* kid holding the smallest cell, -1 when exhausted */
  kv_sf_io io;                  /* block counters of this family's store files */
  uint64_t cells;               /* cells pulled from the sources */
  uint64_t files_opened;        /* store-file iterators created */
  uint8_t **proj;               /* projected qualifiers (into proj_bytes), when has_proj */
  uint32_t *proj_lens;          /* their lengths */
  uint32_t n_proj;              /* entries in proj; a zero count with proj set = none */
  uint32_t proj_cap;            /* entries allocated in proj and proj_lens */
  uint8_t *proj_bytes;          /* the qualifiers' bytes (copies) */
  size_t proj_bytes_cap;        /* bytes allocated in proj_bytes */
  bool has_proj;                /* a projection was given */
  kv_vis vis;                   /* visibility state and parameters */
} fscan;

typedef struct nrange {
  uint8_t *start; uint32_t start_len; /* inclusive start; NULL = from the first row */
  uint8_t *end; uint32_t end_len;     /* exclusive end; NULL = to the last row */
} nrange;

struct kv_scan {
  kv_db *db;                    /* NULL once detached by kv_close */
  struct kv_scan *prev, *next;  /* db->scans list */
  bool detached;                /* kv_close tore it down */
  bool finished;                /* the end (or an error) was reached */
  int err;                      /* the error that finished it */
  uint64_t snapshot;            /* sequence number read at */
  fscan fams[KV_SCAN_MAX_FAMILIES]; /* the families, in the order asked */
  uint32_t n_fams;              /* entries in fams */
  nrange *ranges;               /* normalized ranges, ascending */
  uint32_t n_ranges;            /* entries in ranges */
  uint32_t ranges_cap;          /* entries allocated in ranges */
  uint8_t *rbytes;              /* the ranges' bounds, back to back */
  size_t rbytes_cap;            /* bytes allocated in rbytes */
  int cur_range;                /* the range being read */
  bool range_started;           /* sources positioned for cur_range */
  bool reverse;                 /* descending rows */
  bool point_open;              /* kv_get: the files were chosen for its one row at open */
  int exist_fam;                /* index of the existence family in fams, -1 if none */
  int exist_state;              /* EXIST_*: the existence family in the current range */
  uint64_t limit;               /* rows handed out at most; 0 = no limit */
  kv_filter_fn filter;          /* optional row filter */
  void *filter_ctx;             /* its context */
  uint8_t *key; uint32_t key_len, key_cap;   /* current row key */
  uint8_t *ub; uint32_t ub_len, ub_cap;      /* reverse: exclusive upper bound */
  bool have_ub;                 /* reverse: ub is set */
  kv_cell_view *views; uint32_t n_views, cap_views; /* cells of the current row */
  size_t *offs;                 /* per view: qual offset, value offset in data */
  uint8_t *data; size_t data_len, data_cap;  /* bytes of the current row's cells */
  kv_scan_metrics m;            /* row-level metrics */
};

#define MAX_SPARE 64u /* parked store-file iterators a family slot keeps at most */

/* The existence family during a one-row range: not deferred, or not sought yet. */
enum { EXIST_NONE = 0, EXIST_PENDING = 1 };

/* ---- small buffers -------------------------------------------------------------------- */

static int grow(void **p, size_t *cap, size_t need, size_t elem) {
  if (need <= *cap) return KV_OK;
  size_t nc = *cap ? *cap : 64;
  while (nc < need) nc *= 2;
  void *np = realloc(*p, nc * elem);
  if (!np) return kv_error(KV_ERR_NOMEM, "scan: out of memory");
  *p = np;
  *cap = nc;
  return KV_OK;
}

static int set_bytes(uint8_t **buf, uint32_t *len, uint32_t *cap, const uint8_t *src,
                     uint32_t n) {
  size_t c = *cap;
  int rc = grow((void **)buf, &c, n ? n : 1, 1);
  if (rc) return rc;
  *cap = (uint32_t)c;
  if (n) memcpy(*buf, src, n);
  *len = n;
  return KV_OK;
}

/* ---- per-family merge ----------------------------------------------------------------- */

static int kid_status(fscan *f) {
  for (uint32_t i = 0; i < f->n_kids; i++) {
    if (f->parked[i]) continue;
    kv_iter *k = f->kids[i];
    if (!k->ops->valid(k)) {
      int rc = k->ops->status(k);
      if (rc) return rc;
    }
  }
  return KV_OK;
}

static void pick_min(fscan *f) {
  if (f->n_kids == 1) { /* a single source: no merge */
    kv_iter *k = f->kids[0];
    f->cur = !f->parked[0] && k->ops->valid(k) ? 0 : -1;
    return;
  }
  int best = -1;
  const kv_cell *bc = NULL;
  for (uint32_t i = 0; i < f->n_kids; i++) {
    kv_iter *k = f->kids[i];
    if (f->parked[i] || !k->ops->valid(k)) continue;
    const kv_cell *c = k->ops->cell(k);
    if (!bc || kv_cell_cmp(c, bc) < 0) {
      bc = c;
      best = (int)i;
    }
  }
  f->cur = best;
}

/* Position every source at the first cell of `row` (NULL = the first cell). When `single`
** (the range holds only that row key), store files whose bloom filter rules the row out
** are parked instead of sought: they read no block for this range (a file whose block for
** the row is cached is sought without asking its bloom filter: kv_sf_point_worth_seeking). */
static int merge_seek(fscan *f, const uint8_t *row, uint32_t row_len, bool single) {
  for (uint32_t i = 0; i < f->n_kids; i++) {
    kv_iter *k = f->kids[i];
    f->parked[i] = 0;
    if (single && i >= f->n_mem_kids &&
        !kv_sf_point_worth_seeking(f->files[i - f->n_mem_kids]->reader, row, row_len)) {
      f->parked[i] = 1;
      continue;
    }
    if (row) {
      kv_cell t = kv_cell_row_first(row, row_len);
      k->ops->seek(k, &t);
    } else {
      k->ops->seek_first(k);
    }
  }
  pick_min(f);
  return kid_status(f);
}

static const kv_cell *merge_cell(fscan *f) {
  if (f->cur < 0) return NULL;
  kv_iter *k = f->kids[f->cur];
  return k->ops->cell(k);
}

static int merge_next(fscan *f) {
  kv_iter *k = f->kids[f->cur];
  k->ops->next(k);
  if (!k->ops->valid(k)) {
    int rc = k->ops->status(k);
    if (rc) return rc;
  }
  pick_min(f);
  return KV_OK;
}

/* Reverse: the largest row key below `ub` (NULL = none) among the family's sources.
** *row points into a source, valid until that source moves. */
static int prev_row(fscan *f, const uint8_t *ub, uint32_t ub_len, const uint8_t **row,
                    uint32_t *row_len) {
  for (uint32_t i = 0; i < f->n_kids; i++) {
    kv_iter *k = f->kids[i];
    f->parked[i] = 0;
    if (ub) {
      kv_cell t = kv_cell_row_first(ub, ub_len);
      k->ops->seek_for_prev(k, &t);
    } else {
      k->ops->seek_last(k);
    }
    if (!k->ops->valid(k)) {
      int rc = k->ops->status(k);
      if (rc) return rc;
      continue;
    }
    const kv_cell *c = k->ops->cell(k);
    if (!*row || kv_bytes_cmp(c->row, c->row_len, *row, *row_len) > 0) {
      *row = c->row;
      *row_len = c->row_len;
    }
  }
  return KV_OK;
}

/* ---- row assembly --------------------------------------------------------------------- */

/* a[0..n) == b[0..n), eight bytes at a time (row keys are short: no call to memcmp). */
static inline bool same_bytes(const uint8_t *a, const uint8_t *b, uint32_t n) {
  while (n >= 8) {
    uint64_t x, y;
    memcpy(&x, a, 8);
    memcpy(&y, b, 8);
    if (x != y) return false;
    a += 8;
    b += 8;
    n -= 8;
  }
  while (n--)
    if (*a++ != *b++) return false;
  return true;
}

/* The cell belongs to row s->key. */
static inline bool in_row(const kv_scan *s, const kv_cell *c) {
  return c->row_len == s->key_len && same_bytes(c->row, s->key, c->row_len);
}

static bool projected(const fscan *f, const kv_cell *c) {
  if (!f->has_proj) return true;
  for (uint32_t i = 0; i < f->n_proj; i++)
    if (f->proj_lens[i] == c->qual_len &&
        (c->qual_len == 0 || memcmp(f->proj[i], c->qual, c->qual_len) == 0))
      return true;
  return false;
}

/* memcpy for the short qualifiers and fixed-width values of cells: the common lengths are
** copied inline instead of through a library call per cell. */
static inline void copy_short(uint8_t *d, const uint8_t *src, size_t n) {
  switch (n) {
    case 0: return;
    case 1: d[0] = src[0]; return;
    case 2: memcpy(d, src, 2); return;
    case 4: memcpy(d, src, 4); return;
    case 8: memcpy(d, src, 8); return;
    default: memcpy(d, src, n); return;
  }
}

static int add_view(kv_scan *s, uint32_t fid, const kv_cell *c) {
  size_t cap = s->cap_views;
  int rc = grow((void **)&s->views, &cap, s->n_views + 1, sizeof *s->views);
  if (rc) return rc;
  if (cap != s->cap_views) {
    size_t ocap = s->cap_views * 2;
    rc = grow((void **)&s->offs, &ocap, cap * 2, sizeof *s->offs);
    if (rc) return rc;
    s->cap_views = (uint32_t)cap;
  }
  rc = grow((void **)&s->data, &s->data_cap, s->data_len + c->qual_len + c->value_len + 1, 1);
  if (rc) return rc;
  kv_cell_view *v = &s->views[s->n_views];
  v->family_id = fid;
  v->qual_len = c->qual_len;
  v->ts = c->ts;
  v->value_len = c->value_len;
  s->offs[2 * s->n_views] = s->data_len;
  copy_short(s->data + s->data_len, c->qual, c->qual_len);
  s->data_len += c->qual_len;
  s->offs[2 * s->n_views + 1] = s->data_len;
  copy_short(s->data + s->data_len, c->value, c->value_len);
  s->data_len += c->value_len;
  s->n_views++;
  return KV_OK;
}

/* Feed the cells of row s->key of family f (positioned at or before the row's first cell,
** or on a later row) into the row. */
static int read_family_row(kv_scan *s, fscan *f) {
  const kv_cell *c = merge_cell(f);
  if (!c || !in_row(s, c)) return KV_OK;
  kv_vis_row_start(&f->vis);
  while (c && in_row(s, c)) {
    f->cells++;
    /* Only overlay cells may be above the scan's snapshot. Store-file kids apply the
       projection themselves (kv_sf_iter_project): only memstore cells are checked. */
    bool seen = c->seq <= s->snapshot || f->cur == f->ovl_kid;
    if (seen && kv_vis_cell(&f->vis, c) &&
        ((uint32_t)f->cur >= f->n_mem_kids || projected(f, c))) {
      int rc = add_view(s, f->fid, c);
      if (rc) return rc;
    }
    int rc = merge_next(f);
    if (rc) return rc;
    c = merge_cell(f);
  }
  if (f->vis.err) return kv_error(f->vis.err, "scan: out of memory");
  return KV_OK;
}

/* Finish the current row; true when it is handed out. */
static bool finish_row(kv_scan *s, kv_row *row) {
  s->m.rows_examined++;
  if (s->n_views == 0) return false;
  for (uint32_t i = 0; i < s->n_views; i++) {
    s->views[i].qual = s->data + s->offs[2 * i];
    s->views[i].value = s->data + s->offs[2 * i + 1];
  }
  row->key = s->key;
  row->key_len = s->key_len;
  row->cells = s->views;
  row->n_cells = s->n_views;
  if (s->filter && !s->filter(s->filter_ctx, row)) {
    s->m.rows_filtered++;
    return false;
  }
  s->m.rows_returned++;
  return true;
}

static int next_forward(kv_scan *s, kv_row *row) {
  for (;;) {
    if (s->cur_range >= (int)s->n_ranges) return KV_ERR_NOTFOUND;
    nrange *r = &s->ranges[s->cur_range];
    if (!s->range_started) {
      /* A range of one row key [k, k+0x00) lets bloom filters skip files. */
      bool single = r->start && r->end && r->end_len == r->start_len + 1 &&
                    r->end[r->start_len] == 0 &&
                    memcmp(r->start, r->end, r->start_len) == 0;
      /* A point read defers the existence family (kv_scan_options.existence_family):
         it is sought only if the other families have no visible cell in the row. */
      s->exist_state = single && s->exist_fam >= 0 ? EXIST_PENDING : EXIST_NONE;
      for (uint32_t i = 0; i < s->n_fams; i++) {
        if (s->exist_state == EXIST_PENDING && (int)i == s->exist_fam) {
          s->fams[i].cur = -1;
          continue;
        }
        int rc = merge_seek(&s->fams[i], r->start, r->start_len, single && !s->point_open);
        if (rc) return rc;
      }
      s->m.ranges_sought++;
      s->range_started = true;
    }
    const kv_cell *best = NULL;
    for (uint32_t i = 0; i < s->n_fams; i++) {
      const kv_cell *c = merge_cell(&s->fams[i]);
      if (c && (!best || kv_bytes_cmp(c->row, c->row_len, best->row, best->row_len) < 0))
        best = c;
    }
    if (!best || (r->end && kv_bytes_cmp(best->row, best->row_len, r->end, r->end_len) >= 0)) {
      if (s->exist_state == EXIST_PENDING) { /* the row may be in that family alone */
        s->exist_state = EXIST_NONE;
        int rc = merge_seek(&s->fams[s->exist_fam], r->start, r->start_len, !s->point_open);
        if (rc) return rc;
        continue;
      }
      s->cur_range++;
      s->range_started = false;
      continue;
    }
    int rc = set_bytes(&s->key, &s->key_len, &s->key_cap, best->row, best->row_len);
    if (rc) return rc;
    s->n_views = 0;
    s->data_len = 0;
    for (uint32_t i = 0; i < s->n_fams; i++) {
      rc = read_family_row(s, &s->fams[i]);
      if (rc) return rc;
    }
    if (s->exist_state == EXIST_PENDING) { /* the range's one row was found elsewhere */
      s->exist_state = EXIST_NONE;
      if (s->n_views == 0) { /* no visible cell there: the existence family decides */
        fscan *f = &s->fams[s->exist_fam];
        rc = merge_seek(f, s->key, s->key_len, !s->point_open);
        if (!rc) rc = read_family_row(s, f);
        if (rc) return rc;
      }
    }
    if (finish_row(s, row)) return KV_OK;
  }
}

static int next_reverse(kv_scan *s, kv_row *row) {
  for (;;) {
    if (s->cur_range < 0) return KV_ERR_NOTFOUND;
    nrange *r = &s->ranges[s->cur_range];
    if (!s->range_started) {
      s->have_ub = r->end != NULL;
      if (r->end) {
        int rc = set_bytes(&s->ub, &s->ub_len, &s->ub_cap, r->end, r->end_len);
        if (rc) return rc;
      }
      s->m.ranges_sought++;
      s->range_started = true;
    }
    const uint8_t *prow = NULL;
    uint32_t prow_len = 0;
    for (uint32_t i = 0; i < s->n_fams; i++) {
      int rc = prev_row(&s->fams[i], s->have_ub ? s->ub : NULL, s->ub_len, &prow, &prow_len);
      if (rc) return rc;
    }
    if (!prow || (r->start && kv_bytes_cmp(prow, prow_len, r->start, r->start_len) < 0)) {
      s->cur_range--;
      s->range_started = false;
      continue;
    }
    int rc = set_bytes(&s->key, &s->key_len, &s->key_cap, prow, prow_len);
    if (rc) return rc;
    s->n_views = 0;
    s->data_len = 0;
    for (uint32_t i = 0; i < s->n_fams; i++) {
      rc = merge_seek(&s->fams[i], s->key, s->key_len, false);
      if (rc) return rc;
      rc = read_family_row(s, &s->fams[i]);
      if (rc) return rc;
    }
    rc = set_bytes(&s->ub, &s->ub_len, &s->ub_cap, s->key, s->key_len);
    if (rc) return rc;
    s->have_ub = true;
    if (finish_row(s, row)) return KV_OK;
  }
}

int kv_scan_next(kv_scan *s, kv_row *row) {
  if (!s || !row) return kv_error(KV_MISUSE, "kv_scan_next: NULL scan or row");
  if (s->detached)
    return kv_error(KV_MISUSE, "kv_scan_next: the store was closed while the scan was open");
  if (s->finished) {
    if (s->err) return kv_error(s->err, "kv_scan_next: the scan ended with %s",
                                kv_status_name(s->err));
    return KV_ERR_NOTFOUND;
  }
  if (s->limit && s->m.rows_returned >= s->limit) {
    s->finished = true;
    return KV_ERR_NOTFOUND;
  }
  int rc = s->reverse ? next_reverse(s, row) : next_forward(s, row);
  if (rc != KV_OK) {
    s->finished = true;
    if (rc != KV_ERR_NOTFOUND) s->err = rc;
  }
  return rc;
}

/* ---- open / close --------------------------------------------------------------------- */

/* Let go of the sources (memstores, files, cached blocks) and keep every buffer: store-file
** iterators are parked in f->spare for the next scan that uses this shell. */
static void release(kv_scan *s) {
  for (uint32_t i = 0; i < s->n_fams; i++) {
    fscan *f = &s->fams[i];
    for (uint32_t k = 0; k < f->n_kids; k++) {
      kv_iter *it = f->kids[k];
      if (k >= f->n_mem_kids && f->n_spare < f->spare_cap) {
        kv_sf_iter_park(it);
        f->spare[f->n_spare++] = it;
      } else {
        it->ops->destroy(it);
      }
    }
    f->n_kids = 0;
    f->n_mem_kids = 0;
    f->cur = -1;
    for (int k = 0; k < f->n_mems; k++) kv_memstore_unref(f->mems[k]);
    f->n_mems = 0;
    f->ovl = NULL;
    f->ovl_kid = -1;
    for (uint32_t k = 0; k < f->n_files; k++) kv_sfh_unref(f->files[k]);
    f->n_files = 0;
  }
}

static void free_fscan(fscan *f) {
  for (uint32_t k = 0; k < f->n_spare; k++) f->spare[k]->ops->destroy(f->spare[k]);
  free(f->spare);
  free(f->kids);
  free(f->parked);
  free(f->mems);
  free(f->files);
  free(f->proj);
  free(f->proj_lens);
  free(f->proj_bytes);
  kv_vis_free(&f->vis);
}

static void free_scan(kv_scan *s) {
  for (uint32_t i = 0; i < KV_SCAN_MAX_FAMILIES; i++) free_fscan(&s->fams[i]);
  free(s->ranges);
  free(s->rbytes);
  free(s->key);
  free(s->ub);
  free(s->views);
  free(s->offs);
  free(s->data);
  free(s);
}

/* kv_vis_init, keeping the buffers the state had. */
static void vis_init_keep(kv_vis *v) {
  kv_vis k = *v;
  kv_vis_init(v);
  v->fam_dels = k.fam_dels;
  v->cap_fam_dels = k.cap_fam_dels;
  v->col_dels = k.col_dels;
  v->cap_col_dels = k.cap_col_dels;
  v->ver_dels = k.ver_dels;
  v->cap_ver_dels = k.cap_ver_dels;
  v->qual = k.qual;
  v->qual_cap = k.qual_cap;
}

/* Make a used (released) family slot as good as new, keeping its buffers. */
static void fscan_reset(fscan *f) {
  fscan k = *f;
  memset(f, 0, sizeof *f);
  f->mems = k.mems;
  f->mems_cap = k.mems_cap;
  f->files = k.files;
  f->files_cap = k.files_cap;
  f->kids = k.kids;
  f->parked = k.parked;
  f->kids_cap = k.kids_cap;
  f->spare = k.spare;
  f->n_spare = k.n_spare;
  f->spare_cap = k.spare_cap;
  f->proj = k.proj;
  f->proj_lens = k.proj_lens;
  f->proj_cap = k.proj_cap;
  f->proj_bytes = k.proj_bytes;
  f->proj_bytes_cap = k.proj_bytes_cap;
  f->vis = k.vis;
  vis_init_keep(&f->vis);
  f->cur = -1;
  f->ovl_kid = -1;
}

/* Keep a closed scan's shell for the next open (its sources already released), or free it. */
static void shelve(kv_db *db, kv_scan *s) {
  for (uint32_t i = 0; i < s->n_fams; i++) fscan_reset(&s->fams[i]);
  s->n_fams = 0;
  kv_scan *old = atomic_exchange_explicit(&db->scan_spare, s, memory_order_acq_rel);
  if (old) free_scan(old);
}

/* A shell for a new scan: the spare one, reset, or a new zeroed one. NULL when out of
** memory. */
static kv_scan *take_shell(kv_db *db) {
  kv_scan *s = atomic_exchange_explicit(&db->scan_spare, NULL, memory_order_acq_rel);
  if (!s) return calloc(1, sizeof *s);
  /* the family slots were reset when it was shelved; the rest is reset here */
  s->db = NULL;
  s->prev = s->next = NULL;
  s->detached = s->finished = false;
  s->err = KV_OK;
  s->snapshot = 0;
  s->n_ranges = 0;
  s->cur_range = 0;
  s->range_started = false;
  s->reverse = false;
  s->point_open = false;
  s->exist_fam = -1;
  s->exist_state = EXIST_NONE;
  s->limit = 0;
  s->filter = NULL;
  s->filter_ctx = NULL;
  s->key_len = 0;
  s->ub_len = 0;
  s->have_ub = false;
  s->n_views = 0;
  s->data_len = 0;
  memset(&s->m, 0, sizeof s->m);
  return s;
}

static void unlink_scan(kv_db *db, kv_scan *s) {
  if (s->prev) s->prev->next = s->next;
  else db->scans = s->next;
  if (s->next) s->next->prev = s->prev;
  s->prev = s->next = NULL;
}

void kv_scan_close(kv_scan *s) {
  if (!s) return;
  if (!s->detached && s->db) {
    kv_db *db = s->db;
    pthread_mutex_lock(&db->mu);
    unlink_scan(db, s);
    pthread_mutex_unlock(&db->mu);
    release(s);
    shelve(db, s);
    return;
  }
  free_scan(s);
}

void kv_scan_detach_all(kv_db *db) {
  while (db->scans) {
    kv_scan *s = db->scans;
    unlink_scan(db, s);
    release(s);
    s->detached = true;
    s->db = NULL;
  }
  kv_scan *spare = atomic_exchange_explicit(&db->scan_spare, NULL, memory_order_acq_rel);
  if (spare) free_scan(spare);
}

/* Copy [p, p+n) into dst, with a 0x00 appended when succ (the immediate successor). */
static uint8_t *put_succ(uint8_t *dst, const uint8_t *p, size_t n, bool succ,
                         uint32_t *out_len) {
  if (n) memcpy(dst, p, n);
  if (succ) dst[n++] = 0;
  *out_len = (uint32_t)n;
  return dst;
}

static int normalize_ranges(kv_scan *s, const kv_range *ranges, uint32_t n) {
  uint32_t cnt = n ? n : 1;
  size_t bytes = 0;
  for (uint32_t i = 0; i < n; i++) {
    const kv_range *r = &ranges[i];
    if ((r->start_len && !r->start) || (r->end_len && !r->end))
      return kv_error(KV_ERR_INVALID, "kv_scan_open: range %u has a NULL bound with a length",
                      i);
    if (r->start_len > KV_MAX_ROW_KEY || r->end_len > KV_MAX_ROW_KEY)
      return kv_error(KV_ERR_TOOBIG, "kv_scan_open: range %u bound over %u bytes", i,
                      KV_MAX_ROW_KEY);
    bytes += (r->start ? r->start_len + 1 : 0) + (r->end ? r->end_len + 1 : 0);
  }
  size_t rc_cap = s->ranges_cap;
  if (grow((void **)&s->ranges, &rc_cap, cnt, sizeof *s->ranges) ||
      grow((void **)&s->rbytes, &s->rbytes_cap, bytes ? bytes : 1, 1))
    return kv_error(KV_ERR_NOMEM, "kv_scan_open: out of memory");
  s->ranges_cap = (uint32_t)rc_cap;
  memset(s->ranges, 0, cnt * sizeof *s->ranges);
  s->n_ranges = cnt;
  uint8_t *b = s->rbytes;
  for (uint32_t i = 0; i < n; i++) {
    const kv_range *r = &ranges[i];
    nrange *o = &s->ranges[i];
    if (r->start) {
      o->start = put_succ(b, r->start, r->start_len, !r->start_inclusive, &o->start_len);
      b += o->start_len;
    }
    if (r->end) {
      o->end = put_succ(b, r->end, r->end_len, r->end_inclusive, &o->end_len);
      b += o->end_len;
    }
    if (i > 0) {
      nrange *p = &s->ranges[i - 1];
      if (!p->end || !o->start ||
          kv_bytes_cmp(p->end, p->end_len, o->start, o->start_len) > 0)
        return kv_error(KV_ERR_INVALID,
                        "kv_scan_open: ranges %u and %u are unsorted or overlap", i - 1, i);
    }
  }
  return KV_OK;
}

static bool file_overlaps(const kv_scan *s, kv_sfh *h) {
  const uint8_t *first, *last;
  uint32_t first_len, last_len;
  kv_sf_key_range(h->reader, &first, &first_len, &last, &last_len);
  for (uint32_t i = 0; i < s->n_ranges; i++) {
    const nrange *r = &s->ranges[i];
    if (r->start && kv_bytes_cmp(last, last_len, r->start, r->start_len) < 0) continue;
    if (r->end && kv_bytes_cmp(first, first_len, r->end, r->end_len) >= 0) continue;
    return true;
  }
  return false;
}

/* Copy the overlay batch's ops of the families read into one private memstore per family,
** at sequence numbers s->snapshot + 1 + i, and raise the families' visibility snapshot past
** them. Runs after the sources were referenced (mems has room for the overlay). */
static int load_overlay(kv_scan *s, const kv_batch *b, int64_t now) {
  size_t len;
  const uint8_t *p = kv_batch_payload(b, &len), *limit = p + len;
  uint64_t count = 0;
  p = kv_get_varint(p, limit, &count);
  for (uint64_t i = 0; p && i < count; i++) {
    kv_wal_op op;
    if (kv_wal_decode_op(&p, limit, &op) != KV_OK)
      return kv_error(KV_ERR_CORRUPT, "kv_scan_open: overlay op %llu is damaged",
                      (unsigned long long)i);
    fscan *f = NULL;
    for (uint32_t k = 0; k < s->n_fams && !f; k++)
      if (s->fams[k].fid == op.family_id) f = &s->fams[k];
    if (!f) continue;
    if (!f->ovl) {
      f->ovl = kv_memstore_new();
      if (!f->ovl) return kv_error(KV_ERR_NOMEM, "kv_scan_open: out of memory");
      f->mems[f->n_mems++] = f->ovl; /* released with the other memstores */
    }
    kv_cell c = {op.row, op.row_len, op.qual, op.qual_len, op.ts == KV_TS_NOW ? now : op.ts,
                 s->snapshot + 1 + i, op.type, op.value, op.value_len};
    int rc = kv_memstore_add(f->ovl, &c);
    if (rc) return kv_error(rc, "kv_scan_open: out of memory for the overlay");
  }
  for (uint32_t k = 0; k < s->n_fams; k++) s->fams[k].vis.snapshot = s->snapshot + count;
  return KV_OK;
}

/* Open with an optional point-lookup row used to consult bloom filters. */
static int scan_open(kv_db *db, const kv_scan_options *o, const uint8_t *point,
                     uint32_t point_len, kv_scan **out) {
  if (!out) return kv_error(KV_MISUSE, "kv_scan_open: NULL out");
  *out = NULL;
  if (!db || !o) return kv_error(KV_MISUSE, "kv_scan_open: NULL handle or options");
  if (o->n_families == 0 || !o->family_ids)
    return kv_error(KV_ERR_INVALID, "kv_scan_open: no family to read");
  if (o->n_families > KV_SCAN_MAX_FAMILIES)
    return kv_error(KV_ERR_INVALID, "kv_scan_open: %u families, over the maximum of %u",
                    o->n_families, KV_SCAN_MAX_FAMILIES);
  if (o->n_ranges && !o->ranges)
    return kv_error(KV_ERR_INVALID, "kv_scan_open: NULL ranges");
  if (o->max_versions < 0)
    return kv_error(KV_ERR_INVALID, "kv_scan_open: negative max_versions");
  kv_scan *s = take_shell(db);
  if (!s) return kv_error(KV_ERR_NOMEM, "kv_scan_open: out of memory");
  s->reverse = o->reverse;
  s->point_open = point != NULL;
  s->exist_fam = -1;
  s->exist_state = EXIST_NONE;
  if (o->existence_family) {
    if (o->existence_family > o->n_families) {
      free_scan(s);
      return kv_error(KV_ERR_INVALID, "kv_scan_open: existence_family %u of %u families",
                      o->existence_family, o->n_families);
    }
    if (o->n_families > 1 && !o->reverse) s->exist_fam = (int)o->existence_family - 1;
  }
  s->limit = o->limit;
  s->filter = o->filter;
  s->filter_ctx = o->filter_ctx;
  s->n_fams = o->n_families;
  int rc = normalize_ranges(s, o->ranges, o->n_ranges);
  for (uint32_t i = 0; i < s->n_fams && rc == KV_OK; i++) {
    fscan *f = &s->fams[i];
    f->fid = o->family_ids[i];
    f->cur = -1;
    f->ovl_kid = -1;
    vis_init_keep(&f->vis);
    for (uint32_t j = 0; j < i; j++)
      if (s->fams[j].fid == f->fid)
        rc = kv_error(KV_ERR_INVALID, "kv_scan_open: family id %u listed twice", f->fid);
    for (uint32_t q = 0; q < o->n_qualifier_sets && rc == KV_OK; q++) {
      const kv_qualifier_set *qs = &o->qualifiers[q];
      if (qs->family_id != f->fid) continue;
      if (f->has_proj) {
        rc = kv_error(KV_ERR_INVALID, "kv_scan_open: two qualifier sets for family %u",
                      f->fid);
        break;
      }
      f->has_proj = true;
      size_t qb = 0, pc = f->proj_cap, lc = f->proj_cap;
      for (uint32_t k = 0; k < qs->n_quals; k++) qb += qs->qual_lens[k];
      if (grow((void **)&f->proj, &pc, qs->n_quals ? qs->n_quals : 1, sizeof *f->proj) ||
          grow((void **)&f->proj_lens, &lc, qs->n_quals ? qs->n_quals : 1,
               sizeof *f->proj_lens) ||
          grow((void **)&f->proj_bytes, &f->proj_bytes_cap, qb ? qb : 1, 1)) {
        rc = kv_error(KV_ERR_NOMEM, "kv_scan_open: out of memory");
        break;
      }
      f->proj_cap = (uint32_t)(pc < lc ? pc : lc);
      uint8_t *qd = f->proj_bytes;
      for (uint32_t k = 0; k < qs->n_quals; k++) {
        uint32_t len = qs->qual_lens[k];
        if (len) memcpy(qd, qs->quals[k], len);
        f->proj[k] = qd;
        f->proj_lens[k] = len;
        qd += len;
        f->n_proj++;
      }
    }
  }
  for (uint32_t q = 0; q < o->n_qualifier_sets && rc == KV_OK; q++) {
    bool found = false;
    for (uint32_t i = 0; i < s->n_fams; i++)
      if (s->fams[i].fid == o->qualifiers[q].family_id) found = true;
    if (!found)
      rc = kv_error(KV_ERR_INVALID, "kv_scan_open: qualifier set for family %u, not read",
                    o->qualifiers[q].family_id);
  }
  if (rc) {
    free_scan(s);
    return rc;
  }
  s->cur_range = s->reverse ? (int)s->n_ranges - 1 : 0;

  int64_t now = db->env->now_ms(db->env);
  pthread_mutex_lock(&db->mu);
  uint64_t last = atomic_load_explicit(&db->last_seq, memory_order_acquire);
  if (o->snapshot > last) {
    rc = kv_error(KV_ERR_INVALID,
                  "kv_scan_open: snapshot %llu is ahead of the last committed sequence %llu",
                  (unsigned long long)o->snapshot, (unsigned long long)last);
  }
  s->snapshot = o->snapshot ? o->snapshot : last;
  uint32_t table_id = 0;
  for (uint32_t i = 0; i < s->n_fams && rc == KV_OK; i++) {
    fscan *f = &s->fams[i];
    kv_fam *fam = kv_db_family(db, f->fid);
    if (!fam) {
      rc = kv_error(KV_ERR_NOTFOUND, "kv_scan_open: unknown family id %u", f->fid);
      break;
    }
    if (i == 0) table_id = fam->table_id;
    else if (fam->table_id != table_id) {
      rc = kv_error(KV_ERR_INVALID, "kv_scan_open: families %u and %u are of different tables",
                    s->fams[0].fid, f->fid);
      break;
    }
    f->vis.snapshot = s->snapshot;
    f->vis.versions = fam->max_versions;
    f->vis.ttl_ms = fam->ttl_sec * 1000;
    f->vis.now_ms = now;
    if (o->ts_min || o->ts_max) {
      f->vis.ts_min = o->ts_min;
      f->vis.ts_max = o->ts_max ? o->ts_max : INT64_MAX;
    }
    f->vis.max_versions = o->max_versions ? o->max_versions : 1;
    size_t mc = f->mems_cap;
    if (grow((void **)&f->mems, &mc, fam->n_imm + 2, sizeof *f->mems)) { /* + overlay's */
      rc = kv_error(KV_ERR_NOMEM, "kv_scan_open: out of memory");
      break;
    }
    f->mems_cap = (uint32_t)mc;
    f->mems[f->n_mems++] = fam->mem;
    kv_memstore_ref(fam->mem);
    for (uint32_t k = 0; k < fam->n_imm; k++) { /* frozen, not yet in a store file */
      f->mems[f->n_mems++] = fam->imms[k];
      kv_memstore_ref(fam->imms[k]);
    }
    if (fam->n_files) {
      size_t fc = f->files_cap;
      if (grow((void **)&f->files, &fc, fam->n_files, sizeof *f->files)) {
        rc = kv_error(KV_ERR_NOMEM, "kv_scan_open: out of memory");
        break;
      }
      f->files_cap = (uint32_t)fc;
      for (uint32_t k = 0; k < fam->n_files; k++) {
        kv_sfh *h = fam->files[k];
        if (!file_overlaps(s, h)) continue;
        if (point && !kv_sf_point_worth_seeking(h->reader, point, point_len)) continue;
        kv_sfh_ref(h);
        f->files[f->n_files++] = h;
      }
    }
  }
  if (rc == KV_OK) {
    s->db = db;
    s->next = db->scans;
    if (db->scans) db->scans->prev = s;
    db->scans = s;
  }
  pthread_mutex_unlock(&db->mu);
  if (rc == KV_OK && o->overlay && kv_batch_count(o->overlay) > 0)
    rc = load_overlay(s, o->overlay, now);
  for (uint32_t i = 0; i < s->n_fams && rc == KV_OK; i++) {
    fscan *f = &s->fams[i];
    size_t need = (size_t)f->n_mems + f->n_files + 1, kc = f->kids_cap, pc = f->kids_cap;
    size_t sc = f->spare_cap, sneed = f->n_files < MAX_SPARE ? MAX_SPARE : f->n_files;
    if (grow((void **)&f->kids, &kc, need, sizeof *f->kids) ||
        grow((void **)&f->parked, &pc, need, 1) ||
        grow((void **)&f->spare, &sc, sneed, sizeof *f->spare)) {
      rc = kv_error(KV_ERR_NOMEM, "kv_scan_open: out of memory");
      break;
    }
    f->kids_cap = (uint32_t)(kc < pc ? kc : pc);
    f->spare_cap = (uint32_t)(sc < MAX_SPARE ? sc : MAX_SPARE);
    memset(f->parked, 0, need);
    for (int k = 0; k < f->n_mems && rc == KV_OK; k++) {
      /* A memstore empty now holds no cell at or below the snapshot (cells are counted
         before last_seq is published), so it needs no iterator. */
      if (f->mems[k] != f->ovl && kv_memstore_cells(f->mems[k]) == 0) continue;
      kv_iter *it = kv_memstore_iter_new(f->mems[k]);
      if (!it) rc = kv_error(KV_ERR_NOMEM, "kv_scan_open: out of memory");
      else {
        if (f->mems[k] == f->ovl) f->ovl_kid = (int)f->n_kids;
        f->kids[f->n_kids++] = it;
      }
    }
    f->n_mem_kids = f->n_kids;
    for (uint32_t k = 0; k < f->n_files && rc == KV_OK; k++) {
      kv_iter *it = f->n_spare ? kv_sf_iter_retarget(f->spare[--f->n_spare],
                                                     f->files[k]->reader, &f->io, true)
                               : kv_sf_iter_new(f->files[k]->reader, &f->io);
      if (!it) rc = kv_error(KV_ERR_NOMEM, "kv_scan_open: out of memory");
      else {
        if (f->has_proj)
          kv_sf_iter_project(it, (const uint8_t *const *)f->proj, f->proj_lens, f->n_proj);
        f->kids[f->n_kids++] = it;
        f->files_opened++;
      }
    }
  }
  if (rc) {
    if (s->db) kv_scan_close(s);
    else {
      release(s);
      free_scan(s);
    }
    return rc;
  }
  *out = s;
  return KV_OK;
}

int kv_scan_open(kv_db *db, const kv_scan_options *opts, kv_scan **out) {
  return scan_open(db, opts, NULL, 0, out);
}

int kv_get(kv_db *db, const kv_scan_options *opts, const void *row, size_t row_len,
           kv_scan **scan_out, kv_row *out_row) {
  if (!scan_out || !out_row) return kv_error(KV_MISUSE, "kv_get: NULL output");
  *scan_out = NULL;
  if (!db || !opts) return kv_error(KV_MISUSE, "kv_get: NULL handle or options");
  if (!row || row_len == 0) return kv_error(KV_ERR_INVALID, "kv_get: empty row key");
  if (row_len > KV_MAX_ROW_KEY)
    return kv_error(KV_ERR_TOOBIG, "kv_get: row key of %zu bytes is over the maximum of %u",
                    row_len, KV_MAX_ROW_KEY);
  kv_scan_options o = *opts;
  kv_range r = {row, row_len, true, row, row_len, true};
  o.ranges = &r;
  o.n_ranges = 1;
  o.limit = 1;
  o.reverse = false;
  kv_scan *s;
  int rc = scan_open(db, &o, row, (uint32_t)row_len, &s);
  if (rc) return rc;
  rc = kv_scan_next(s, out_row);
  if (rc != KV_OK && rc != KV_ERR_NOTFOUND) {
    kv_scan_close(s);
    return rc;
  }
  *scan_out = s;
  return rc;
}

void kv_scan_get_metrics(const kv_scan *s, kv_scan_metrics *out) {
  if (!out) return;
  memset(out, 0, sizeof *out);
  if (!s) return;
  *out = s->m;
  out->n_families = s->n_fams;
  for (uint32_t i = 0; i < s->n_fams; i++) {
    const fscan *f = &s->fams[i];
    kv_family_metrics *fm = &out->families[i];
    fm->family_id = f->fid;
    fm->cells_examined = f->cells + f->io.cells_skipped;
    fm->blocks_read = f->io.blocks_read;
    fm->blocks_cache_hit = f->io.blocks_cache_hit;
    fm->bytes_read = f->io.bytes_read;
    fm->files_opened = f->files_opened;
    out->cells_examined += f->cells + f->io.cells_skipped;
  }
}
