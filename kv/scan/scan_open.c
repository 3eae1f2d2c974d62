/*
** kv/scan/scan_open.c: opening, closing and recycling scans and point reads (kv_scan_open,
** kv_scan_close, kv_get, and the teardown of open scans at kv_close); reading rows is
** kv/scan/scan.c's.
**
** A scan takes, under db->mu, references to the memstores and store files of the families
** it reads (and of no other family), then reads without locks. Ranges are normalized at open
** to half-open [start, end) byte intervals (an exclusive start s becomes s+0x00, an
** inclusive end e becomes e+0x00, the immediate successors in byte order).
**
** Nothing is allocated per scan in the steady state: a closed scan's shell (its buffers,
** source arrays, visibility state and its store-file iterators, parked by
** kv_sf_iter_park) is kept in db->scan_spare (one slot, swapped atomically) and the next
** open takes it, re-aiming the iterators at its files (kv_sf_iter_retarget), so a point
** lookup per statement costs no malloc once warm.
**
** Overlay (kv_scan_options.overlay): at open, the batch's ops of each family read are copied
** into a private memstore with sequence numbers snapshot+1, snapshot+2, ... in batch order,
** which becomes one more source of the family; the visibility snapshot is raised past them,
** and cells of the other sources above the real snapshot are dropped before the visibility
** rules see them (kv/scan/scan.c), so later commits stay invisible while the overlay is seen.
**
** Store files are chosen at open by the key ranges (file_overlaps) and by time
** (file_in_time: the trailer's timestamps against the time range and as_of; docs/KV_TIME.md).
*/
#include <stddef.h>
#include "kv/util/coding.h"
#include "kv/scan/scan_int.h"

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
  free(f->vvals);
  free(f->vlens);
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
  free(s->kept_row);
  free(s->sfx);
  free(s->sfx_bytes);
  free(s->outer);
  free(s->outer_bytes);
  free(s->xr);
  free(s->probe);
  free(s->pfx);
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
  memset(&f->fid, 0, sizeof *f - offsetof(fscan, fid)); /* vis: scan_open sets it again */
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
  s->skip = s->skip_done = s->have_probe = false;
  s->skip_rows = s->pfx_rows = 0;
  s->n_sfx = 0;
  s->prefixes = 0;
  s->reverse = false;
  s->exist_fam = -1;
  s->exist_state = EXIST_NONE;
  s->limit = 0;
  s->interrupt = NULL;
  s->trace = NULL;
  s->filter = NULL;
  s->filter_ctx = NULL;
  s->key_len = 0;
  s->ub_len = 0;
  s->have_ub = false;
  s->n_views = 0;
  s->n_copied = 0;
  s->n_vecs = 0;
  s->vec_rows = 0;
  s->want_vecs = false;
  s->data_len = 0;
  s->pend_mask = 0;
  s->rows_taken = 0;
  s->run_n = 0;
  s->run_got = s->run_fails = s->run_wait = 0;
  s->run_rows = 0;
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
  kv_scan_count_vectors(s);
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

/* Tear down every open scan at kv_close (db->scan_detach_all): their resources are
** released, and kv_scan_next gives KV_MISUSE from then on. REQUIRES: mu held. */
static void detach_all(kv_db *db) {
  while (db->scans) {
    kv_scan *s = db->scans;
    unlink_scan(db, s);
    kv_scan_keep_row(s); /* its last row may point into blocks released below */
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
  if (kv_scan_grow((void **)&s->ranges, &rc_cap, cnt, sizeof *s->ranges) ||
      kv_scan_grow((void **)&s->rbytes, &s->rbytes_cap, bytes ? bytes : 1, 1))
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

/* Whether store file h may hold a cell the time range or the as-of time of family scan f
** reads (kv.h "Time range and store files"), from its trailer's timestamp range: false
** skips the file. per_row: kv_scan_options.ts_per_row. */
static bool file_in_time(const fscan *f, kv_sfh *h, bool per_row) {
  const kv_sf_props *p = kv_sf_get_props(h->reader);
  if (p->cells == 0) return true;
  if (p->max_ts < f->vis.ts_min) return false;
  if (p->min_ts > f->vis.as_of) return false;
  return !(per_row && p->min_ts >= f->vis.ts_max);
}

/* The overlay's operations on the scan's families: the batch's overlay index (kv/db/batch.c,
** caught up here, KV_TS_NOW as `now`) gives a memstore per family, which the scan reads as
** one more memstore kid (its own reference). The families' visibility snapshot goes up to
** the batch's last op as of now: ops the batch gets later (the transaction writes on while
** the scan is open) land in the same memstores above it and stay unseen, so the scan reads
** the transaction as it was at open. Indexing is incremental, so a point read inside a
** large transaction costs a lookup, not a copy of every op (an index scan's row lookups,
** the index upkeep of each written row, CHECK INDEX). Runs after the sources were
** referenced (mems has room for the overlay). */
static int load_overlay(kv_scan *s, const kv_batch *cb, int64_t now) {
  kv_batch *b = (kv_batch *)cb; /* the index is a cache kept with the batch (db_impl.h) */
  int rc = kv_batch_overlay_sync(b, now);
  if (rc) return rc;
  for (uint32_t k = 0; k < s->n_fams; k++) {
    fscan *f = &s->fams[k];
    kv_memstore *m = kv_batch_overlay_mem(b, f->fid);
    if (m) {
      kv_memstore_ref(m);
      f->ovl = m;
      f->mems[f->n_mems++] = m; /* released with the other memstores */
    }
    f->vis.snapshot = KV_OVERLAY_SEQ0 + kv_batch_count(b);
  }
  return KV_OK;
}

/* Open a scan (kv_get's too: its one-row range lets the first kv_scan_next leave out the
** files whose bloom filter rules the row out, kv/scan/scan.c merge_seek). */
static int scan_open(kv_db *db, const kv_scan_options *o, kv_scan **out) {
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
  if (o->as_of < 0)
    return kv_error(KV_ERR_INVALID, "kv_scan_open: negative as_of %lld", (long long)o->as_of);
  kv_scan *s = take_shell(db);
  if (!s) return kv_error(KV_ERR_NOMEM, "kv_scan_open: out of memory");
  s->reverse = o->reverse;
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
  s->trace = o->trace;
  s->interrupt = o->interrupt;
  s->filter = o->filter;
  s->filter_ctx = o->filter_ctx;
  s->want_vecs = o->value_vectors && !o->filter && kv_scan_value_vectors();
  s->n_fams = o->n_families;
  int rc = normalize_ranges(s, o->ranges, o->n_ranges);
  if (rc == KV_OK && o->skip_prefix) rc = kv_scan_skip_setup(s, o->skip_prefix, o->n_ranges);
  for (uint32_t i = 0; i < s->n_fams && rc == KV_OK; i++) {
    fscan *f = &s->fams[i];
    f->fid = o->family_ids[i];
    f->io.trace = o->trace;
    f->io.trace_fid = f->fid;
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
      if (kv_scan_grow((void **)&f->proj, &pc, qs->n_quals ? qs->n_quals : 1, sizeof *f->proj) ||
          kv_scan_grow((void **)&f->proj_lens, &lc, qs->n_quals ? qs->n_quals : 1,
               sizeof *f->proj_lens) ||
          kv_scan_grow((void **)&f->proj_bytes, &f->proj_bytes_cap, qb ? qb : 1, 1)) {
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
  /* a skip scan by prefix: the one whole range above chose the files; its ranges are made
     prefix by prefix from the first next (kv/scan/scan_skip.c) */

  bool need_now = o->overlay != NULL; /* the clock: for TTL and the overlay's KV_TS_NOW */
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
    if (fam->ttl_sec > 0) need_now = true;
    if (o->ts_min || o->ts_max) {
      f->vis.ts_min = o->ts_min;
      f->vis.ts_max = o->ts_max ? o->ts_max : INT64_MAX;
    }
    f->vis.max_versions = o->max_versions ? o->max_versions : 1;
    if (o->as_of > 0) f->vis.as_of = o->as_of;
    size_t mc = f->mems_cap;
    if (kv_scan_grow((void **)&f->mems, &mc, fam->n_imm + 2, sizeof *f->mems)) { /* + overlay's */
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
      if (kv_scan_grow((void **)&f->files, &fc, fam->n_files, sizeof *f->files)) {
        rc = kv_error(KV_ERR_NOMEM, "kv_scan_open: out of memory");
        break;
      }
      f->files_cap = (uint32_t)fc;
      for (uint32_t k = 0; k < fam->n_files; k++) {
        kv_sfh *h = fam->files[k];
        if (!file_overlaps(s, h)) continue;
        if (!file_in_time(f, h, o->ts_per_row)) {
          f->files_skipped_ts++;
          continue;
        }
        kv_sfh_ref(h);
        f->files[f->n_files++] = h;
      }
    }
  }
  if (rc == KV_OK) {
    s->db = db;
    db->scan_detach_all = detach_all;
    s->next = db->scans;
    if (db->scans) db->scans->prev = s;
    db->scans = s;
  }
  pthread_mutex_unlock(&db->mu);
  int64_t now = 0; /* read only when a family has a TTL or an overlay is given */
  if (rc == KV_OK && need_now) {
    now = db->env->now_ms(db->env);
    for (uint32_t i = 0; i < s->n_fams; i++) s->fams[i].vis.now_ms = now;
  }
  if (s->skip) s->n_ranges = 0; /* the files are chosen: ranges come per prefix */
  if (rc == KV_OK && o->overlay && kv_batch_count(o->overlay) > 0)
    rc = load_overlay(s, o->overlay, now);
  for (uint32_t i = 0; i < s->n_fams && rc == KV_OK; i++) {
    fscan *f = &s->fams[i];
    size_t need = (size_t)f->n_mems + f->n_files + 1, kc = f->kids_cap, pc = f->kids_cap;
    size_t sc = f->spare_cap, sneed = f->n_files < MAX_SPARE ? MAX_SPARE : f->n_files;
    if (kv_scan_grow((void **)&f->kids, &kc, need, sizeof *f->kids) ||
        kv_scan_grow((void **)&f->parked, &pc, need, 1) ||
        kv_scan_grow((void **)&f->spare, &sc, sneed, sizeof *f->spare)) {
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
    /* rows of a store file may be handed out whole where the visibility rules would keep
       every cell (kv/sf/sf_rows.h); the conditions are the family's, at the real snapshot
       (overlay cells are in a memstore) */
    bool fast = kv_scan_fast_rows();
    kv_sf_rowcond cond = {s->snapshot, f->vis.ttl_ms, f->vis.now_ms, f->vis.ts_min,
                          f->vis.ts_max, f->vis.versions, f->vis.max_versions};
    /* as of T: a block with a cell above T is not simple (its cells do not all count) */
    if (f->vis.as_of < INT64_MAX && f->vis.as_of < cond.ts_max) cond.ts_max = f->vis.as_of + 1;
    f->fast = fast;
    f->vec = fast && s->want_vecs && f->has_proj && f->n_proj >= 1 && f->n_proj <= 64;
    if (f->vec && f->n_proj > f->vcap) {
      size_t vc = f->vcap, lc = f->vcap;
      if (kv_scan_grow((void **)&f->vvals, &vc, f->n_proj, sizeof *f->vvals) ||
          kv_scan_grow((void **)&f->vlens, &lc, f->n_proj, sizeof *f->vlens)) {
        rc = kv_error(KV_ERR_NOMEM, "kv_scan_open: out of memory");
        break;
      }
      f->vcap = (uint32_t)(vc < lc ? vc : lc);
    }
    for (uint32_t k = 0; k < f->n_files && rc == KV_OK; k++) {
      kv_iter *it = f->n_spare ? kv_sf_iter_retarget(f->spare[--f->n_spare],
                                                     f->files[k]->reader, &f->io, true)
                               : kv_sf_iter_new(f->files[k]->reader, &f->io);
      if (!it) rc = kv_error(KV_ERR_NOMEM, "kv_scan_open: out of memory");
      else {
        if (f->has_proj)
          kv_sf_iter_project(it, (const uint8_t *const *)f->proj, f->proj_lens, f->n_proj);
        if (fast) kv_sf_iter_fast_rows(it, &cond);
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
  return scan_open(db, opts, out);
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
  int rc = scan_open(db, &o, &s);
  if (rc) return rc;
  rc = kv_scan_next(s, out_row);
  if (rc != KV_OK && rc != KV_ERR_NOTFOUND) {
    kv_scan_close(s);
    return rc;
  }
  *scan_out = s;
  return rc;
}
