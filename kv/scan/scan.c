/*
** kv/scan/scan.c: reading a scan's rows (kv_scan_next, kv_scan_get_metrics); opening, closing
** and recycling scans and point reads are kv/scan/scan_open.c's, the shared state kv/scan/scan_int.h.
** Snapshots (the sequence numbers a scan reads at) are kv/db/snapshot.c's.
**
** Per family the sources are merged by a small linear merge (a family has few sources: the
** memstore, the frozen ones waiting for the background flush and a handful of store files).
** Ranges were normalized at open to half-open [start, end) byte intervals, so every bound
** is a plain comparison.
**
** Forward: seek every family to the range start, take the smallest row key among them,
** feed that row's cells of each family through kv/db/db_vis.c, then the projection, the
** filter and the limit. Reverse: with an exclusive upper bound U (the range end, then the
** last row handed out), seek_for_prev every source to the first possible cell of U to find
** the previous row, then read that row forward like a forward scan. Rows are handed out in
** descending key order; cells inside a row keep the normal order.
**
** Nothing is allocated per cell: cell bytes are copied into one buffer reused across rows.
** Fast row path (kv/sf/sf_rows.h): when a family's row comes from one store file alone and
** its block is simple for the scan (puts only, one per column, all visible), the store-file
** iterator hands the row's views out whole, pointing into its block, with no merge step,
** visibility check or copy per cell; the iterator then stays on the row (its block pinned)
** until the next kv_scan_next moves it on (apply_pending). Anything else takes the cell path
** at the same snapshot. kv_scan_set_fast_rows turns it off (tests compare the two). After a
** row taken whole from every family that had it, the next rows of the same blocks may come
** as a row run (kv/scan/scan_run.c), straight from the blocks; where a run ends, this file's path
** goes on from the row it left the sources on. A skip scan by prefix (kv/scan/scan_skip.c) makes
** its ranges prefix by prefix: when they are done, kv_scan_skip_probe seeks the next prefix.
** Overlay cells (kv/scan/scan_open.c) are one more memstore source whose sequence numbers lie
** above the snapshot; cells of the other sources above the real snapshot are dropped before
** the visibility rules see them.
** Not here: tombstone rules (kv/db/db_vis.c), store-file decoding (kv/sf/).
*/
#include "kv/scan/scan_int.h"
#include "kv/sf/sf_cblock.h"
#include "kv/util/trace.h"

static int set_bytes(uint8_t **buf, uint32_t *len, uint32_t *cap, const uint8_t *src,
                     uint32_t n) {
  size_t c = *cap;
  int rc = kv_scan_grow((void **)buf, &c, n ? n : 1, 1);
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
** (the range holds only that row key: a kv_get, or one range of a skip scan), store files
** whose bloom filter rules the row out are parked instead of sought: they read no block for
** this range (a file whose block for the row is cached is sought without asking its bloom
** filter: kv_sf_iter_seek_row). Else `end` (NULL: not known) is where the range ends: a
** store file decodes an uncached block only up to there (kv_sf_iter_seek_range). */
static int merge_seek(fscan *f, const uint8_t *row, uint32_t row_len, bool single,
                      const uint8_t *end, uint32_t end_len) {
  for (uint32_t i = 0; i < f->n_kids; i++) {
    kv_iter *k = f->kids[i];
    f->parked[i] = 0;
    if (row && i >= f->n_mem_kids) { /* a store file: one block search for both */
      if (single) {
        if (!kv_sf_iter_seek_row(k, row, row_len, true)) f->parked[i] = 1;
      } else {
        kv_sf_iter_seek_range(k, row, row_len, end, end_len);
      }
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
    if (ub && kv_sf_bytes_cmp(c->row, c->row_len, ub, ub_len) >= 0) {
      /* a row at or above the bound: the source's rows are out of order (a damaged block);
         taken as the next row it would come back at every step */
      static const char why[] = "a reverse seek found a row at or above its bound (rows "
                                "out of order)";
      if (i >= f->n_mem_kids) return kv_sf_iter_corrupt(k, why);
      return kv_error(KV_ERR_CORRUPT, "scan: %s", why);
    }
    if (!*row || kv_sf_bytes_cmp(c->row, c->row_len, *row, *row_len) > 0) {
      *row = c->row;
      *row_len = c->row_len;
    }
  }
  return KV_OK;
}

/* ---- row assembly --------------------------------------------------------------------- */

/* The cell belongs to row s->key. */
static inline bool in_row(const kv_scan *s, const kv_cell *c) {
  return c->row_len == s->key_len && kv_scan_same_bytes(c->row, s->key, c->row_len);
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

int kv_scan_views_room(kv_scan *s, size_t need) {
  size_t cap = s->cap_views;
  int rc = kv_scan_grow((void **)&s->views, &cap, need, sizeof *s->views);
  if (rc) return rc;
  if (cap != s->cap_views) {
    size_t ocap = (size_t)s->cap_views * 3;
    rc = kv_scan_grow((void **)&s->offs, &ocap, cap * 3, sizeof *s->offs);
    if (rc) return rc;
    s->cap_views = (uint32_t)cap;
  }
  return KV_OK;
}

static int add_view(kv_scan *s, uint32_t fid, const kv_cell *c) {
  int rc = kv_scan_views_room(s, (size_t)s->n_views + 1);
  if (rc) return rc;
  rc = kv_scan_grow((void **)&s->data, &s->data_cap,
                    s->data_len + c->qual_len + c->value_len + 1, 1);
  if (rc) return rc;
  kv_cell_view *v = &s->views[s->n_views];
  v->family_id = fid;
  v->qual_len = c->qual_len;
  v->ts = c->ts;
  v->value_len = c->value_len;
  size_t *o = &s->offs[3 * s->n_copied++]; /* its pointers are set by finish_row */
  o[0] = s->n_views;
  o[1] = s->data_len;
  copy_short(s->data + s->data_len, c->qual, c->qual_len);
  s->data_len += c->qual_len;
  o[2] = s->data_len;
  copy_short(s->data + s->data_len, c->value, c->value_len);
  s->data_len += c->value_len;
  s->n_views++;
  return KV_OK;
}

/* The fast row path: when the store file family f's merge stands on holds every cell of row
** s->key that the family's sources have, let it hand the row's cells out whole, straight
** from its block (kv/sf/sf_rows.h). *taken tells whether it did; the family is then marked in
** s->pend_mask (its source stays on the row until apply_pending). */
static int take_row(kv_scan *s, fscan *f, bool *taken) {
  *taken = false;
  for (uint32_t i = 0; i < f->n_kids; i++) { /* no other source has a cell in the row */
    kv_iter *o = f->kids[i];
    if ((int)i == f->cur || f->parked[i] || !o->ops->valid(o)) continue;
    if (in_row(s, o->ops->cell(o))) return KV_OK;
  }
  kv_iter *k = f->kids[f->cur];
  if (f->vec) { /* as a value vector, when the iterator can (else as views below) */
    uint64_t present, kept;
    if (kv_sf_iter_take_vec(k, f->vvals, f->vlens, &present, &kept) == KV_SF_ROW_TAKEN) {
      if (present) {
        kv_value_vector *v = &s->vecs[s->n_vecs++];
        v->family_id = f->fid;
        v->present = present;
        v->values = f->vvals;
        v->value_lens = f->vlens;
      }
      f->cells += kept;
      s->pend_mask |= 1u << (uint32_t)(f - s->fams);
      s->rows_taken++;
      s->vec_rows++;
      *taken = true;
      return KV_OK;
    }
    if (!k->ops->valid(k)) return k->ops->status(k);
  }
  for (;;) {
    uint32_t n;
    uint64_t kept;
    kv_cell_view *room = s->views ? s->views + s->n_views : NULL; /* (none yet: NULL + 0 is undefined) */
    int r = kv_sf_iter_take_row(k, f->fid, room, s->cap_views - s->n_views, &n, &kept);
      if (r == KV_SF_ROW_NO) /* the cell path then, unless it failed (out of memory) */
      return k->ops->valid(k) ? KV_OK : k->ops->status(k);
    if (r == KV_SF_ROW_GROW) {
      int rc = kv_scan_views_room(s, (size_t)s->n_views + n);
      if (rc) return rc;
      continue;
    }
    s->n_views += n;
    f->cells += kept;
    s->pend_mask |= 1u << (uint32_t)(f - s->fams);
    s->rows_taken++;
    *taken = true;
    return KV_OK;
  }
}

/* Move the sources that handed out a row whole past it (see take_row), as merge_next would
** after the row's last cell. */
static int apply_pending(kv_scan *s) {
  uint32_t m = s->pend_mask;
  s->pend_mask = 0;
  while (m) {
    fscan *f = &s->fams[__builtin_ctz(m)];
    m &= m - 1;
    kv_iter *k = f->kids[f->cur];
    kv_sf_iter_next_row(k);
    if (!k->ops->valid(k)) {
      int rc = k->ops->status(k);
      if (rc) return rc;
    }
    pick_min(f);
  }
  return KV_OK;
}

/* Feed the cells of row s->key of family f (positioned at or before the row's first cell,
** or on a later row) into the row. */
static int read_family_row(kv_scan *s, fscan *f) {
  const kv_cell *c = merge_cell(f);
  if (!c || !in_row(s, c)) return KV_OK;
  if (f->fast && (uint32_t)f->cur >= f->n_mem_kids) { /* a store file's row */
    bool taken;
    int rc = take_row(s, f, &taken);
    if (rc || taken) return rc;
  }
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
  if (s->n_views == 0 && s->n_vecs == 0) return false;
  for (uint32_t k = 0; k < s->n_copied; k++) { /* the views of copied cells */
    const size_t *o = &s->offs[3 * k];
    s->views[o[0]].qual = s->data + o[1];
    s->views[o[0]].value = s->data + o[2];
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

static int set_probe(kv_scan *s, const uint8_t *key, uint32_t n);
static int probe_once(kv_scan *s, const kv_cell **best_out);

/* The next prefix of a skip scan: the smallest row key at or after the probe. Only the
** existence family is sought when there is one (kv.h: every row with cells in the other
** families has a marker there), so a wide family decodes no block just to name the prefix;
** the prefix's ranges seek every family anyway. The probe needs one row: it is sought as a
** range that stops at the probe itself, so a block the cache does not take is decoded from
** that row to the next one only (kv_sf_iter_seek_range), not whole. */
int kv_scan_skip_probe(kv_scan *s) {
  if (s->skip_done) return KV_ERR_NOTFOUND;
  if (!s->have_probe && s->n_outer && s->outer[0].start) { /* start at the first range */
    int rc = set_probe(s, s->outer[0].start, s->outer[0].start_len);
    if (rc) return rc;
  }
  for (;;) {
    const kv_cell *best = NULL;
    int rc = probe_once(s, &best);
    if (rc) return rc;
    if (!best) {
      s->skip_done = true;
      return KV_ERR_NOTFOUND;
    }
    /* with outer ranges: past the current one's end go on to the next, before the next
       one's start probe again there */
    while (s->cur_outer < s->n_outer && s->outer[s->cur_outer].end &&
           kv_sf_bytes_cmp(best->row, best->row_len, s->outer[s->cur_outer].end,
                           s->outer[s->cur_outer].end_len) >= 0)
      s->cur_outer++;
    if (s->n_outer && s->cur_outer == s->n_outer) {
      s->skip_done = true;
      return KV_ERR_NOTFOUND;
    }
    const nrange *o = s->n_outer ? &s->outer[s->cur_outer] : NULL;
    if (o && o->start && kv_sf_bytes_cmp(best->row, best->row_len, o->start, o->start_len) < 0) {
      rc = set_probe(s, o->start, o->start_len);
      if (rc) return rc;
      continue;
    }
    s->pfx_rows = 0;
    return kv_scan_skip_ranges(s, best->row, best->row_len);
  }
}

/* The probe becomes key[0..n). */
static int set_probe(kv_scan *s, const uint8_t *key, uint32_t n) {
  size_t c = s->probe_cap;
  if (kv_scan_grow((void **)&s->probe, &c, n ? n : 1, 1))
    return kv_error(KV_ERR_NOMEM, "kv_scan_next: out of memory");
  s->probe_cap = (uint32_t)c;
  if (n) memcpy(s->probe, key, n);
  s->probe_len = n;
  s->have_probe = true;
  return KV_OK;
}

/* Seek to the probe; *best the smallest row key's cell at or after it (NULL: none). */
static int probe_once(kv_scan *s, const kv_cell **best_out) {
  const uint8_t *probe = s->have_probe ? s->probe : NULL;
  s->exist_state = EXIST_NONE;
  for (uint32_t i = 0; i < s->n_fams; i++) {
    if (s->exist_fam >= 0 && (int)i != s->exist_fam) continue;
    int rc = merge_seek(&s->fams[i], probe, s->probe_len, false, probe, s->probe_len);
    if (rc) return rc;
  }
  const kv_cell *best = NULL;
  for (uint32_t i = 0; i < s->n_fams; i++) {
    if (s->exist_fam >= 0 && (int)i != s->exist_fam) continue;
    const kv_cell *c = merge_cell(&s->fams[i]);
    if (c && (!best || kv_sf_bytes_cmp(c->row, c->row_len, best->row, best->row_len) < 0))
      best = c;
  }
  *best_out = best;
  return KV_OK;
}

/* Whether the caller's interrupt flag is set, read once every 64 calls (KV_ERR_INTERRUPTED
** with its message, or KV_OK). */
static inline int check_interrupt(kv_scan *s) {
  if (!s->interrupt || (++s->int_tick & 63) != 0) return KV_OK;
  if (!atomic_load_explicit(s->interrupt, memory_order_relaxed)) return KV_OK;
  return kv_error(KV_ERR_INTERRUPTED, "interrupted");
}

static int next_forward(kv_scan *s, kv_row *row) {
  for (;;) {
    int irc = check_interrupt(s);
    if (irc) return irc;
    if (s->pend_mask) {
      /* the row was taken whole: the next ones may come as a row run (kv/scan/scan_run.c),
         straight from the blocks; when the run ends, the sources are where this row
         left them */
      if (!s->run_n) {
        int rc = kv_scan_run_begin(s);
        if (rc) return rc;
      }
      if (s->run_n && kv_scan_run_next(s, row)) return KV_OK;
      int rc = apply_pending(s);
      if (rc) return rc;
    }
    if (s->cur_range >= (int)s->n_ranges) {
      if (!s->skip) return KV_ERR_NOTFOUND;
      int rc = kv_scan_skip_probe(s); /* the next prefix's ranges (kv/scan/scan_skip.c) */
      if (rc) return rc;
      continue;
    }
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
        int rc = merge_seek(&s->fams[i], r->start, r->start_len, single, r->end, r->end_len);
        if (rc) return rc;
      }
      s->m.ranges_sought++;
      kv_trace_add_range(s->trace, s->fams[0].fid, r->start, r->start_len, r->end, r->end_len);
      s->range_started = true;
    }
    const kv_cell *best = NULL;
    for (uint32_t i = 0; i < s->n_fams; i++) {
      const kv_cell *c = merge_cell(&s->fams[i]);
      if (c && (!best || kv_sf_bytes_cmp(c->row, c->row_len, best->row, best->row_len) < 0))
        best = c;
    }
    if (!best || (r->end && kv_sf_bytes_cmp(best->row, best->row_len, r->end, r->end_len) >= 0)) {
      if (s->exist_state == EXIST_PENDING) { /* the row may be in that family alone */
        s->exist_state = EXIST_NONE;
        int rc = merge_seek(&s->fams[s->exist_fam], r->start, r->start_len, true, NULL, 0);
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
    s->n_copied = 0;
    s->n_vecs = 0;
    s->data_len = 0;
    for (uint32_t i = 0; i < s->n_fams; i++) {
      rc = read_family_row(s, &s->fams[i]);
      if (rc) return rc;
    }
    if (s->exist_state == EXIST_PENDING) { /* the range's one row was found elsewhere */
      s->exist_state = EXIST_NONE;
      if (s->n_views == 0 && s->n_vecs == 0) { /* nothing visible: the existence family
                                                   decides */
        fscan *f = &s->fams[s->exist_fam];
        rc = merge_seek(f, s->key, s->key_len, true, NULL, 0);
        if (!rc) rc = read_family_row(s, f);
        if (rc) return rc;
      }
    }
    if (finish_row(s, row)) {
      if (s->skip_rows && ++s->pfx_rows >= s->skip_rows) { /* enough of this prefix: the next
                                                             call probes for the next one */
        s->cur_range = (int)s->n_ranges;
        s->range_started = false;
      }
      return KV_OK;
    }
  }
}

static int next_reverse(kv_scan *s, kv_row *row) {
  for (;;) {
    int irc = check_interrupt(s);
    if (irc) return irc;
    if (s->pend_mask) { /* as the cell path leaves them, though prev_row seeks them again */
      int rc = apply_pending(s);
      if (rc) return rc;
    }
    if (s->cur_range < 0) return KV_ERR_NOTFOUND;
    nrange *r = &s->ranges[s->cur_range];
    if (!s->range_started) {
      s->have_ub = r->end != NULL;
      if (r->end) {
        int rc = set_bytes(&s->ub, &s->ub_len, &s->ub_cap, r->end, r->end_len);
        if (rc) return rc;
      }
      s->m.ranges_sought++;
      kv_trace_add_range(s->trace, s->fams[0].fid, r->start, r->start_len, r->end, r->end_len);
      s->range_started = true;
    }
    const uint8_t *prow = NULL;
    uint32_t prow_len = 0;
    for (uint32_t i = 0; i < s->n_fams; i++) {
      int rc = prev_row(&s->fams[i], s->have_ub ? s->ub : NULL, s->ub_len, &prow, &prow_len);
      if (rc) return rc;
    }
    if (!prow || (r->start && kv_sf_bytes_cmp(prow, prow_len, r->start, r->start_len) < 0)) {
      s->cur_range--;
      s->range_started = false;
      continue;
    }
    int rc = set_bytes(&s->key, &s->key_len, &s->key_cap, prow, prow_len);
    if (rc) return rc;
    s->n_views = 0;
    s->n_copied = 0;
    s->n_vecs = 0;
    s->data_len = 0;
    for (uint32_t i = 0; i < s->n_fams; i++) {
      rc = merge_seek(&s->fams[i], s->key, s->key_len, false, NULL, 0);
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

static atomic_bool fast_rows = true; /* kv_scan_set_fast_rows */
static atomic_bool value_vectors = true; /* kv_scan_set_value_vectors */
static atomic_uint_fast64_t vector_rows; /* kv_scan_vector_rows */
static atomic_uint_fast64_t run_rows; /* kv_scan_run_rows */

void kv_scan_count_vectors(kv_scan *s) {
  if (s->vec_rows)
    atomic_fetch_add_explicit(&vector_rows, s->vec_rows, memory_order_relaxed);
  if (s->run_rows) atomic_fetch_add_explicit(&run_rows, s->run_rows, memory_order_relaxed);
  s->vec_rows = 0;
  s->run_rows = 0;
}

uint64_t kv_scan_run_rows(void) { return atomic_load_explicit(&run_rows, memory_order_relaxed); }

uint64_t kv_scan_vector_rows(void) {
  return atomic_load_explicit(&vector_rows, memory_order_relaxed);
}

void kv_scan_set_value_vectors(bool on) { atomic_store(&value_vectors, on); }

bool kv_scan_value_vectors(void) {
  return atomic_load_explicit(&value_vectors, memory_order_relaxed);
}

void kv_scan_set_fast_rows(bool on) { atomic_store(&fast_rows, on); }

bool kv_scan_fast_rows(void) { return atomic_load_explicit(&fast_rows, memory_order_relaxed); }

uint64_t kv_scan_rows_taken(const kv_scan *s) { return s ? s->rows_taken : 0; }

const kv_value_vector *kv_scan_row_vectors(const kv_scan *s, uint32_t *n) {
  *n = s ? s->n_vecs : 0;
  return *n ? s->vecs : NULL;
}

void kv_scan_keep_row(kv_scan *s) {
  if (!s->pend_mask || s->kept_row) return;
  size_t need = 1;
  for (uint32_t i = 0; i < s->n_views; i++)
    need += (size_t)s->views[i].qual_len + s->views[i].value_len;
  for (uint32_t i = 0; i < s->n_vecs; i++) {
    const kv_value_vector *v = &s->vecs[i];
    for (uint64_t m = v->present; m; m &= m - 1) need += v->value_lens[__builtin_ctzll(m)];
  }
  uint8_t *p = malloc(need);
  if (!p) return;
  s->kept_row = p;
  for (uint32_t i = 0; i < s->n_vecs; i++) { /* values of the family's vvals, repointed */
    const kv_value_vector *v = &s->vecs[i];
    const uint8_t **vals = (const uint8_t **)v->values;
    for (uint64_t m = v->present; m; m &= m - 1) {
      uint32_t k = (uint32_t)__builtin_ctzll(m);
      if (v->value_lens[k]) memcpy(p, vals[k], v->value_lens[k]);
      vals[k] = p;
      p += v->value_lens[k];
    }
  }
  for (uint32_t i = 0; i < s->n_views; i++) {
    kv_cell_view *v = &s->views[i];
    if (v->qual_len) memcpy(p, v->qual, v->qual_len);
    v->qual = p;
    p += v->qual_len;
    if (v->value_len) memcpy(p, v->value, v->value_len);
    v->value = p;
    p += v->value_len;
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
  for (uint32_t i = 0; rc == KV_ERR_CORRUPT && s->db && i < s->n_fams; i++) /* name its region */
    rc = kv_db_corrupt_region(s->db, s->fams[i].fid, s->fams[i].files, s->fams[i].n_files, rc);
  if (rc != KV_OK) {
    s->finished = true;
    if (rc != KV_ERR_NOTFOUND) s->err = rc;
  }
  return rc;
}

void kv_scan_get_metrics(const kv_scan *s, kv_scan_metrics *out) {
  if (!out) return;
  if (!s) {
    memset(out, 0, sizeof *out);
    return;
  }
  /* field by field: one pass over the 800-byte struct, not a clear and a copy of it */
  out->rows_examined = s->m.rows_examined;
  out->cells_examined = 0;
  out->rows_filtered = s->m.rows_filtered;
  out->rows_returned = s->m.rows_returned;
  out->ranges_sought = s->m.ranges_sought;
  out->prefixes_sought = s->prefixes;
  out->n_families = s->n_fams;
  memset(&out->families[s->n_fams], 0,
         (KV_SCAN_MAX_FAMILIES - s->n_fams) * sizeof *out->families);
  for (uint32_t i = 0; i < s->n_fams; i++) {
    const fscan *f = &s->fams[i];
    kv_family_metrics *fm = &out->families[i];
    fm->family_id = f->fid;
    fm->cells_examined = f->cells + f->io.cells_skipped;
    fm->blocks_read = f->io.blocks_read;
    fm->blocks_cache_hit = f->io.blocks_cache_hit;
    fm->bytes_read = f->io.bytes_read;
    fm->files_opened = f->files_opened;
    fm->files_skipped_ts = f->files_skipped_ts;
    fm->bytes_inflated = f->io.bytes_inflated;
    out->cells_examined += f->cells + f->io.cells_skipped;
  }
}
