/*
** kv/sf/sf_iter_rows.c: rows taken whole from a store file's block (kv/sf/sf_rows.h), on the
** iterator state of kv/sf/sf_iter_int.h. kv_sf_iter_take_row hands the rest of the current row
** out as views into the block, after checking once per block (fast_prepare) that the block
** is simple under the scan's conditions and building a small table per dictionary entry
** (projection, value width); values are found with the same rank cursor as the cell path,
** stepped once per cell. kv_sf_iter_take_vec hands the same cells out as a value vector
** (kv.h kv_value_vector): each kept cell's value at its qualifier's position in the
** projection; a full row of a packed block (one cell of every dictionary entry) is taken by
** a per-block table of value offsets (full_prepare) without reading its cells. The emit
** functions both use (kv_sfi_row_views, kv_sfi_row_vec) are in kv/sf/sf_iter_int.h, shared
** with the row runs of kv/scan/scan_run.c.
** Not here: loading blocks, seeks and the cell-by-cell moves (kv/sf/sf_iter.c).
*/
#include "kv/sf/sf_iter_int.h"

void kv_sf_iter_fast_rows(kv_iter *base, const kv_sf_rowcond *c) {
  sf_iter *it = (sf_iter *)base;
  it->fc = *c;
  it->fast = true;
  it->fast_bi = -1;
}

/* The entries of b in qualifier order into ord, when every entry is one byte and no byte is
** named twice (a damaged block may): a bitmap of the bytes read in order. A block's
** dictionary lists its entries as they first appear, so a block that starts in the middle
** of a row has them rotated; an insertion sort would move most of them. False otherwise
** (ord unspecified). */
static bool byte_order(const kv_sf_cblock *b, uint8_t *ord) {
  uint64_t set[4] = {0, 0, 0, 0};
  uint8_t at[256]; /* per byte set in `set`: its entry */
  uint32_t nq = b->nquals;
  for (uint32_t q = 0; q < nq; q++) {
    if (b->q_len[q] != 1) return false;
    uint8_t c = b->dict[b->q_off[q]];
    uint64_t bit = (uint64_t)1 << (c & 63);
    if (set[c >> 6] & bit) return false;
    set[c >> 6] |= bit;
    at[c] = (uint8_t)q;
  }
  uint32_t k = 0;
  for (uint32_t w = 0; w < 4; w++)
    for (uint64_t m = set[w]; m; m &= m - 1)
      ord[k++] = at[w * 64 + (uint32_t)__builtin_ctzll(m)];
  return true;
}

/* The table of a full row of the loaded (fast) block, for kv_sf_iter_take_vec: a row with
** one cell of every dictionary entry has them in qualifier order (cells of a row sort by
** qualifier, and a simple block has one put per column), so in a packed block each fixed-
** width value lies at a constant offset (toff) from the row's first one. */
static void full_prepare(sf_iter *it) {
  const kv_sf_cblock *b = it->b;
  it->full_ok = it->lists_ok = false; /* the lists: when a row run wants them */
  if (!it->vec_ok || !b->cvals || it->partial || b->nquals > 64) return;
  uint8_t ord[64]; /* entries in qualifier order */
  if (!byte_order(b, ord)) {
    for (uint32_t q = 0; q < b->nquals; q++) { /* insertion sort: a dozen or so */
      uint32_t j = q;
      while (j > 0) {
        const fast_q *p = &it->fq[ord[j - 1]], *c = &it->fq[q];
        if (kv_sf_bytes_cmp(p->qual, p->qlen, c->qual, c->qlen) <= 0) break;
        ord[j] = ord[j - 1];
        j--;
      }
      ord[j] = (uint8_t)q;
    }
  }
  uint32_t off = 0, kept = 0;
  uint64_t present = 0;
  for (uint32_t k = 0; k < b->nquals; k++) {
    fast_q *f = &it->fq[ord[k]];
    f->toff = off;
    off += f->fw;
    if (f->keep) {
      present |= (uint64_t)1 << f->pidx;
      kept++;
    }
  }
  it->full_w = off;
  it->full_present = present;
  it->full_kept = kept;
  it->full_ok = true;
}

void kv_sfi_full_lists(sf_iter *it) {
  const kv_sf_cblock *b = it->b;
  it->n_ffix = it->n_fvar = 0;
  for (uint32_t q = 0; q < b->nquals; q++) {
    const fast_q *f = &it->fq[q];
    if (!f->keep) continue;
    if (!f->fixed) {
      it->fvar_q[it->n_fvar++] = (uint8_t)q;
    } else if (f->fw) {
      it->ffix_p[it->n_ffix] = f->pidx;
      it->ffix_off[it->n_ffix++] = f->toff;
    }
  }
  it->fdense = true; /* the dense form of the fixed-width list */
  it->n_fpos = 0;
  for (uint32_t q = 0; q < b->nquals; q++) {
    const fast_q *f = &it->fq[q];
    if (f->keep && f->fixed && f->fw == 0) it->fdense = false;
    if (f->keep && f->fixed && f->fw && f->pidx + 1u > it->n_fpos) it->n_fpos = f->pidx + 1u;
  }
  for (uint32_t i = 0; i < it->n_fpos; i++) it->fpos_off[i] = 0;
  for (uint32_t k = 0; k < it->n_ffix; k++) it->fpos_off[it->ffix_p[k]] = it->ffix_off[k];
  it->lists_ok = true;
}

/* Decide whether the loaded block's rows may be taken whole under it->fc, and build its
** per-entry table. False (status set, the iterator invalid) only when the projection's
** keep flags could not be made, which a positioned iterator already has. */
static bool fast_prepare(sf_iter *it) {
  const kv_sf_cblock *b = it->b;
  const kv_sf_rowcond *c = &it->fc;
  it->fast_bi = it->bi;
  it->fast_ok = false;
  /* the tests kv/db/db_vis.c would make of the block's oldest and newest cells: the TTL
     test falls with the timestamp, the time range holds both ends */
  if (!b->one_put_per_col || b->max_seq > c->snapshot || c->versions < 1 ||
      c->max_versions < 1 || (c->ttl_ms > 0 && c->now_ms - b->min_ts >= c->ttl_ms) ||
      b->min_ts < c->ts_min || b->max_ts >= c->ts_max)
    return true;
  if (it->proj && it->keep_bi != it->bi && !kv_sfi_compute_keep(it)) return false;
  if (kv_sfi_memo_fast(it)) { /* a block of this shape had its table made: it holds */
    it->last_spans = -1;
    it->fast_ok = true;
    return true;
  }
  if (b->nquals > it->fq_cap) {
    size_t cap = it->fq_cap;
    if (kv_sf_grow((void **)&it->fq, &cap, b->nquals, sizeof *it->fq))
      return true; /* no memory for the table: this block's rows take the cell path */
    it->fq_cap = cap;
  }
  for (uint32_t q = 0; q < b->nquals; q++) {
    const kv_sf_cgroup *g = &b->groups[q];
    fast_q *f = &it->fq[q];
    f->qual = b->dict + b->q_off[q];
    f->qlen = b->q_len[q];
    f->fixed = g->fixed;
    f->fw = g->fw;
    f->keep = it->proj ? it->keep[q] : 1;
    f->pidx = 0;
    if (f->keep && it->vec_ok && it->byte_proj) { /* kept: a one-byte qualifier */
      f->pidx = (uint8_t)(it->ptab[f->qual[0]] - 1);
    } else if (f->keep && it->vec_ok) { /* its place in the projection (one: distinct) */
      uint64_t key = short_key(f->qual, f->qlen); /* kept, so at most 7 bytes */
      for (uint32_t i = 0; i < it->npq; i++)
        if (it->pkey[i] == key) {
          f->pidx = (uint8_t)i;
          break;
        }
    }
  }
  it->last_spans = -1; /* found when the last row is asked for */
  it->fast_ok = true;
  full_prepare(it);
  kv_sfi_memo_fast_made(it);
  return true;
}

/* Whether the row the iterator is on may be taken whole: the fast path is on, the block is
** simple (fast_prepare) and the row does not go on in the next block. *end gets the row's
** end (its next row's first cell). */
static bool takeable(sf_iter *it, uint32_t *end) {
  if (!it->fast || !it->valid) return false;
  if (it->fast_bi != it->bi && !fast_prepare(it)) return false;
  const kv_sf_cblock *b = it->b;
  uint32_t ri = it->ri;
  if (!it->fast_ok) return false;
  if (ri + 1 == b->nrows) { /* the last row may go on in the next block */
    if (it->last_spans < 0) {
      it->last_spans = 0;
      if ((uint32_t)it->bi + 1 < it->r->nblocks) {
        uint32_t nf_len;
        const uint8_t *nf_row = kv_sf_first_row(it->r, it->bi + 1, &nf_len);
        it->last_spans = kv_sf_cblock_key_cmp(b, b->nrows - 1, nf_row, nf_len) == 0;
      }
    }
    if (it->last_spans) return false;
  }
  *end = rfirst(b, ri + 1);
  return true;
}

/* Room for a row's fixed-width values gathered from a private block's transposed bytes
** (it->rowvals), or NULL when the block keeps them whole (packed) or has none. *ok false
** when out of memory. */
static uint8_t *gather_room(sf_iter *it, uint32_t ncells, bool *ok) {
  const kv_sf_cblock *b = it->b;
  *ok = true;
  if (b->cvals || !b->max_width) return NULL;
  it->rowvals.len = 0;
  if (kv_sfbuf_reserve(&it->rowvals, (size_t)ncells * b->max_width)) {
    *ok = false;
    return NULL;
  }
  return it->rowvals.p;
}

int kv_sf_iter_take_row(kv_iter *base, uint32_t fid, kv_cell_view *out, uint32_t cap,
                        uint32_t *n_out, uint64_t *kept) {
  sf_iter *it = (sf_iter *)base;
  *n_out = 0;
  *kept = 0;
  uint32_t end;
  if (!takeable(it, &end)) return KV_SF_ROW_NO;
  const kv_sf_cblock *b = it->b;
  uint32_t ri = it->ri, ci = it->ci;
  if (end - ci > cap) {
    *n_out = end - ci;
    return KV_SF_ROW_GROW;
  }
  bool ok;
  uint8_t *gather = gather_room(it, end - ci, &ok);
  if (!ok) return KV_SF_ROW_NO;
  if (it->rp.at != ci) kv_sf_cblock_rank(b, &it->rp, ci); /* the ranks at ci (mostly
                                                              there already after a move) */
  uint32_t n = kv_sfi_row_views(it, ri, ci, end, fid, out, gather);
  if (it->io) it->io->cells_skipped += (end - ci) - n;
  *n_out = n;
  *kept = n;
  return KV_SF_ROW_TAKEN;
}

int kv_sf_iter_take_vec(kv_iter *base, const uint8_t **vals, uint32_t *lens, uint64_t *present,
                        uint64_t *kept) {
  sf_iter *it = (sf_iter *)base;
  *present = 0;
  *kept = 0;
  uint32_t end;
  if (!it->vec_ok || !takeable(it, &end)) return KV_SF_ROW_NO;
  const kv_sf_cblock *b = it->b;
  uint32_t ci = it->ci;
  bool ok;
  uint8_t *gather = gather_room(it, end - ci, &ok);
  if (!ok) return KV_SF_ROW_NO;
  if (it->rp.at != ci) kv_sf_cblock_rank(b, &it->rp, ci); /* the ranks at ci (mostly
                                                              there already after a move) */
  uint32_t n;
  *present = kv_sfi_row_vec(it, ci, end, vals, lens, gather, &n);
  if (it->io) it->io->cells_skipped += (end - ci) - n;
  *kept = n;
  return KV_SF_ROW_TAKEN;
}

void kv_sf_iter_next_row(kv_iter *base) {
  sf_iter *it = (sf_iter *)base;
  const kv_sf_cblock *b = it->b;
  uint32_t ri = it->ri;
  kv_sfi_settle_fwd(it, rfirst(b, ri + 1), ri + 1 < b->nrows ? ri + 1 : ri);
}
