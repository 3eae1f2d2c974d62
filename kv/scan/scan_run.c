/*
** kv/scan/scan_run.c: row runs, the steady state of a forward scan over store-file blocks.
**
** Once a forward scan has handed out a row taken whole (kv/sf/sf_rows.h) from every family that
** had it, each such family standing on that row in a simple block of its one store file,
** the rows after it usually come the same way: the next row of each block, the same key in
** every family. kv_scan_run_begin checks once what the present path (kv/scan/scan.c: apply_pending,
** the merge, take_row, takeable) would check per row and what stays true while the families
** stay in their blocks: the blocks are simple for the scan (fast_ok), the row after the
** last one a run may take (rend: a block's last row when it continues in the next block is
** not taken), the form of each family's rows (value vector or views), whether the
** projection keeps every cell, and the first key at which something else may come into
** play (run_stop): the range's end, the current row of every other source of those
** families (memstores, other store files) and of the families that did not have the row.
** Then kv_scan_run_next takes a row per call with no cell materialized, no merge step and no
** indirect call: per family an index increment in its block, its key compared with the
** first family's straight from the blocks (keys of one length: the suffixes alone), the key
** checked against run_stop (not at all when the block's last row a run may take is below
** it), the values written as take_row / take_vec write them (kv_sfi_row_views,
** kv_sfi_row_vec) and the same counters bumped.
**
** A run ends, leaving the scan exactly as the last row taken left it, before a row that it
** cannot take as the present path would: past a block's end or its last row that continues
** in the next block, a family whose next row has another key or no cell the projection
** keeps, a key at or past run_stop. The present path (kv/scan/scan.c) then goes on from there,
** and sets up the next run after the next row it takes whole. Not here: reverse scans,
** single-row ranges with the existence family deferred, memstore rows (none of them runs).
** Rows decoded in part (a short range over an uncached block) run as a whole block's do.
** A run that took no row makes the next setups wait a few rows (a scan whose families
** disagree on every row does not pay a setup per row). kv_scan_set_row_runs turns runs off
** (tests compare the two paths); kv_scan_run_rows counts the rows they handed out.
*/
#include "kv/scan/scan_int.h"
#include "kv/sf/sf_iter_int.h"

static atomic_bool row_runs = true; /* kv_scan_set_row_runs */

void kv_scan_set_row_runs(bool on) { atomic_store(&row_runs, on); }

bool kv_scan_row_runs(void) { return atomic_load_explicit(&row_runs, memory_order_relaxed); }

#define RUN_WAIT_MAX 64u /* rows a scan waits at most before it tries a run again */

/* Lower the bound *stop (NULL = none) to [row, row+len) when that is smaller. */
static void lower_stop(const uint8_t **stop, uint32_t *stop_len, const uint8_t *row,
                       uint32_t len) {
  if (!*stop || kv_sf_bytes_cmp(row, len, *stop, *stop_len) < 0) {
    *stop = row;
    *stop_len = len;
  }
}

/* The row after which a run must stop in the loaded block of `it`: the block's row count,
** or its last row when that row continues in the next block (as takeable decides). */
static uint32_t run_end(sf_iter *it) {
  const kv_sf_cblock *b = it->b;
  if (it->last_spans < 0) {
    it->last_spans = 0;
    if ((uint32_t)it->bi + 1 < it->r->nblocks) {
      uint32_t nf_len;
      const uint8_t *nf_row = kv_sf_first_row(it->r, it->bi + 1, &nf_len);
      it->last_spans = kv_sf_cblock_key_cmp(b, b->nrows - 1, nf_row, nf_len) == 0;
    }
  }
  return it->last_spans ? b->nrows - 1 : b->nrows;
}

int kv_scan_run_begin(kv_scan *s) {
  s->run_n = 0;
  if (s->run_wait) {
    s->run_wait--;
    return KV_OK;
  }
  if (!kv_scan_row_runs() || s->reverse || s->exist_state != EXIST_NONE ||
      s->cur_range >= (int)s->n_ranges || s->skip_rows) /* rows per prefix are counted */
    return KV_OK;
  const nrange *r = &s->ranges[s->cur_range];
  if (r->end && r->end_len == s->key_len + 1 && r->end[s->key_len] == 0 &&
      kv_scan_same_bytes(r->end, s->key, s->key_len))
    return KV_OK; /* the range ends right after this row (a skip scan's single key) */
  const uint8_t *stop = r->end;
  uint32_t stop_len = r->end_len, n = 0;
  size_t nviews = 0;
  for (uint32_t i = 0; i < s->n_fams; i++) {
    fscan *f = &s->fams[i];
    if (!(s->pend_mask >> i & 1)) { /* its current row (after this one) bounds the run */
      if (f->cur >= 0) {
        const kv_cell *c = f->kids[f->cur]->ops->cell(f->kids[f->cur]);
        lower_stop(&stop, &stop_len, c->row, c->row_len);
      }
      continue;
    }
    for (uint32_t k = 0; k < f->n_kids; k++) { /* so do the family's other sources */
      kv_iter *o = f->kids[k];
      if ((int)k == f->cur || f->parked[k] || !o->ops->valid(o)) continue;
      const kv_cell *c = o->ops->cell(o);
      lower_stop(&stop, &stop_len, c->row, c->row_len);
    }
    sf_iter *it = (sf_iter *)f->kids[f->cur]; /* a store file's: it took the row whole */
    /* a partial block (a short range's rows of an uncached block, kv/sf/sf_iter.c part_load)
       runs too: its rows are the block's from prow on, its last row spans only when it is
       the block's last (run_end's key comparison says so either way) */
    if (!it->valid || it->fast_bi != it->bi || !it->fast_ok) return KV_OK;
    const kv_sf_cblock *b = it->b;
    kv_run_fam *rf = &s->run[n];
    rf->it = it;
    rf->f = f;
    rf->rend = run_end(it);
    if (it->ri + 1 >= rf->rend) return KV_OK; /* no next row in this block */
    rf->next_cs = rfirst(b, it->ri + 1);
    rf->vec = f->vec && it->vec_ok;
    rf->all_kept = true;
    for (uint32_t q = 0; q < b->nquals && rf->all_kept; q++) rf->all_kept = it->fq[q].keep;
    if (!rf->vec) nviews += b->nquals; /* a simple block's row: one cell per entry at most */
    if (rf->vec && it->full_ok && !it->lists_ok) kv_sfi_full_lists(it);
    if (rf->vec && it->full_ok) /* what a full row's vector holds whatever the row (full_row) */
      for (uint32_t q = 0; q < b->nquals; q++) {
        const fast_q *fq = &it->fq[q];
        if (!fq->keep || !fq->fixed) continue;
        f->vlens[fq->pidx] = fq->fw;
        if (!fq->fw) f->vvals[fq->pidx] = (const uint8_t *)"";
      }
    rf->one = !rf->vec && b->ts_per_row && b->qual.w == 0 && b->qual.step == 0 &&
              b->qual.base == 0 && b->nquals == 1 && it->fq[0].keep && it->fq[0].fixed &&
              it->fq[0].fw == 0;
    if (!b->cvals && b->max_width) { /* a private block: room to gather a row's values */
      it->rowvals.len = 0;
      if (kv_sfbuf_reserve(&it->rowvals, (size_t)b->nquals * b->max_width))
        return kv_error(KV_ERR_NOMEM, "scan: out of memory");
    }
    const kv_sf_cblock *lb = s->run[0].it->b; /* the first family's block */
    rf->key_ok = n > 0 && lb->klen && b->klen == lb->klen && b->lcp <= lb->lcp &&
                 kv_scan_same_bytes(b->prefix, lb->prefix, b->lcp);
    n++;
  }
  if (n == 0) return KV_OK;
  int rc = kv_scan_views_room(s, nviews);
  if (rc) return rc;
  const kv_sf_cblock *lb = s->run[0].it->b;
  size_t kc = s->key_cap;
  rc = kv_scan_grow((void **)&s->key, &kc, (size_t)lb->max_key + 1, 1);
  if (rc) return rc;
  s->key_cap = (uint32_t)kc;
  if (lb->klen) { /* every key of the block: the prefix here, a row's suffix after it */
    if (lb->lcp) memcpy(s->key, lb->prefix, lb->lcp);
    s->key_len = lb->klen;
  }
  s->run_stop = stop;
  s->run_stop_len = stop_len;
  s->run_below = !stop || kv_sf_cblock_key_cmp(lb, s->run[0].rend - 1, stop, stop_len) < 0;
  s->run_got = 0;
  s->run_n = n;
  return KV_OK;
}

/* Whether the row [ci, end) of the loaded block has a cell the projection keeps. */
static inline bool has_kept(const sf_iter *it, const kv_run_fam *rf, uint32_t ci,
                            uint32_t end) {
  if (rf->all_kept) return ci < end;
  const kv_sf_cblock *b = it->b;
  for (; ci < end; ci++)
    if (it->fq[kv_sf_pa_get(&b->qual, ci)].keep) return true;
  return false;
}

/* Whether row r of block b has key [key, key+len). */
static inline bool same_key(const kv_run_fam *rf, const kv_sf_cblock *b, uint32_t r,
                            const uint8_t *key, uint32_t len) {
  if (b->klen) {
    if (b->klen != len || (!rf->key_ok && !kv_scan_same_bytes(key, b->prefix, b->lcp)))
      return false;
    uint32_t w = b->klen - b->lcp;
    return kv_scan_same_bytes(key + b->lcp, b->keys + (size_t)r * w, w);
  }
  uint64_t o = kv_sf_pa_get(&b->key_off, r);
  return kv_sf_pa_get(&b->key_off, r + 1) - o == len &&
         kv_scan_same_bytes(key, b->keys + o, len);
}

/* A full row [ci, ci + nquals) of a packed block (full_ok) as its value vector: by the lists
** of full_prepare, the fixed widths' lengths (and zero widths' values) being in place since
** kv_scan_run_begin. As kv_sfi_row_vec otherwise. */
static inline uint64_t full_row(sf_iter *it, const kv_sf_cblock *b, uint32_t end,
                                const uint8_t **vals, uint32_t *lens, uint32_t *kept) {
  uint32_t *rk = it->rp.ranks, nq = b->nquals, off = rk[nq + 1];
  const uint8_t *row = b->cvals + off;
  if (it->fdense) { /* every position up to the last fixed-width one (a loop the compiler
                       makes wide): the variable-width ones are written below */
    const size_t *po = it->fpos_off;
    for (uint32_t i = 0, np = it->n_fpos; i < np; i++) vals[i] = row + po[i];
  } else {
    const uint8_t *fp = it->ffix_p;
    const uint32_t *fo = it->ffix_off;
    for (uint32_t k = 0, nf = it->n_ffix; k < nf; k++) vals[fp[k]] = row + fo[k];
  }
  for (uint32_t k = 0; k < it->n_fvar; k++) {
    uint32_t q = it->fvar_q[k], i = it->fq[q].pidx;
    const kv_sf_cgroup *g = &b->groups[q];
    uint64_t o = kv_sf_pa_get(&g->voff, rk[q]);
    vals[i] = g->data + o;
    lens[i] = (uint32_t)(kv_sf_pa_get(&g->voff, rk[q] + 1) - o);
  }
  for (uint32_t q = 0; q < nq; q++) rk[q]++;
  rk[nq + 1] = off + it->full_w;
  it->rp.at = end;
  *kept = it->full_kept;
  return it->full_present;
}

/* The run is over: the present path goes on; a run that took nothing delays the next. */
static bool run_over(kv_scan *s) {
  s->run_n = 0;
  if (s->run_got) {
    s->run_fails = 0;
  } else {
    if (s->run_fails < 6) s->run_fails++;
    s->run_wait = (1u << s->run_fails) < RUN_WAIT_MAX ? 1u << s->run_fails : RUN_WAIT_MAX;
  }
  return false;
}

bool kv_scan_run_next(kv_scan *s, kv_row *row) {
  const uint32_t n = s->run_n;
  kv_run_fam *run = s->run;
  uint32_t cs[KV_SCAN_MAX_FAMILIES], ce[KV_SCAN_MAX_FAMILIES];
  for (;;) {
    /* the next row of the first family: its key into s->key */
    sf_iter *it = run[0].it;
    const kv_sf_cblock *b = it->b;
    uint32_t ri = it->ri + 1;
    if (ri >= run[0].rend) return run_over(s);
    cs[0] = run[0].next_cs;
    ce[0] = rfirst(b, ri + 1);
    if (!has_kept(it, &run[0], cs[0], ce[0])) return run_over(s);
    if (b->klen) {
      uint32_t w = b->klen - b->lcp;
      kv_scan_copy_key(s->key + b->lcp, b->keys + (size_t)ri * w, w);
    } else {
      uint64_t o = kv_sf_pa_get(&b->key_off, ri);
      s->key_len = (uint32_t)(kv_sf_pa_get(&b->key_off, ri + 1) - o);
      kv_scan_copy_key(s->key, b->keys + o, s->key_len);
    }
    if (!s->run_below &&
        kv_sf_bytes_cmp(s->key, s->key_len, s->run_stop, s->run_stop_len) >= 0)
      return run_over(s);
    /* the other families: the same key, a kept cell */
    for (uint32_t j = 1; j < n; j++) {
      sf_iter *jt = run[j].it;
      const kv_sf_cblock *jb = jt->b;
      uint32_t rj = jt->ri + 1;
      if (rj >= run[j].rend || !same_key(&run[j], jb, rj, s->key, s->key_len))
        return run_over(s);
      cs[j] = run[j].next_cs;
      ce[j] = rfirst(jb, rj + 1);
      if (!has_kept(jt, &run[j], cs[j], ce[j])) return run_over(s);
    }
    /* take the row from every family, as take_row / take_vec would */
    s->n_views = 0;
    s->n_copied = 0;
    s->n_vecs = 0;
    s->data_len = 0;
    for (uint32_t j = 0; j < n; j++) {
      sf_iter *jt = run[j].it;
      const kv_sf_cblock *jb = jt->b;
      fscan *f = run[j].f;
      uint32_t rj = jt->ri + 1, c0 = cs[j], c1 = ce[j], kept;
      if (jt->rp.at != c0) kv_sf_cblock_rank(jb, &jt->rp, c0);
      uint8_t *gather = !jb->cvals && jb->max_width ? jt->rowvals.p : NULL;
      if (run[j].one && c1 - c0 == 1) { /* a marker family's one empty cell */
        kv_cell_view *v = &s->views[s->n_views++];
        const fast_q *fq = &jt->fq[0];
        v->family_id = f->fid;
        v->qual = fq->qual;
        v->qual_len = fq->qlen;
        v->ts = kv_sf_cblock_ts(jb, rj, c0);
        v->value = (const uint8_t *)"";
        v->value_len = 0;
        jt->rp.ranks[0]++;
        jt->rp.at = c1;
        kept = 1;
      } else if (run[j].vec) {
        uint64_t present =
            jt->full_ok && c1 - c0 == jb->nquals
                ? full_row(jt, jb, c1, f->vvals, f->vlens, &kept)
                : kv_sfi_row_vec(jt, c0, c1, f->vvals, f->vlens, gather, &kept);
        if (present) {
          kv_value_vector *v = &s->vecs[s->n_vecs++];
          v->family_id = f->fid;
          v->present = present;
          v->values = f->vvals;
          v->value_lens = f->vlens;
        }
        s->vec_rows++;
      } else {
        kept = kv_sfi_row_views(jt, rj, c0, c1, f->fid, s->views + s->n_views, gather);
        s->n_views += kept;
      }
      jt->ri = rj;
      jt->ci = c0;
      run[j].next_cs = c1;
      f->cells += kept;
      if (jt->io) jt->io->cells_skipped += (c1 - c0) - kept;
    }
    s->rows_taken += n;
    s->run_got++;
    /* finish the row as finish_row does (no copied cells) */
    s->m.rows_examined++;
    row->key = s->key;
    row->key_len = s->key_len;
    row->cells = s->views;
    row->n_cells = s->n_views;
    if (s->filter && !s->filter(s->filter_ctx, row)) {
      s->m.rows_filtered++;
      continue;
    }
    s->m.rows_returned++;
    s->run_rows++;
    return true;
  }
}
