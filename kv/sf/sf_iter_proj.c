/*
** kv/sf/sf_iter_proj.c: a store file iterator's projection (kv_sf_iter_project in kv/sf/sf.h)
** and what is derived from it per block, on the iterator state of kv/sf/sf_iter_int.h. A
** projection is held as numbers when its qualifiers are short (pkey) and as a byte table
** when each is one byte (ptab, the catalog's column qualifiers); each block loaded gets a
** keep flag per dictionary entry (kv_sfi_compute_keep), and the fast row path a table per
** entry (kv/sf/sf_iter_rows.c fast_prepare).
**
** The shape memo: a decoded block carries its shape (kv_sf_cblock.shape: its dictionary's
** one-byte qualifiers and value widths), and blocks of one table's store files mostly share
** one. The keep flags and the fast row table made for a block are remembered with its shape
** and taken as they stand for the next block of that shape (the fast row table only if its
** values are packed likewise: a cached block's, or not), as long as the projection does not
** change; giving an iterator the projection it had (a retargeted iterator's next scan:
** every point lookup of a prepared statement) keeps them. A point lookup loads one block per
** family, so without the memo it remade both tables every time. A block without a shape
** (shape_len 0: a long qualifier, a wide value) has its tables made afresh.
** Not here: loading blocks and the moves that read the flags (kv/sf/sf_iter.c), the rows
** taken whole (kv/sf/sf_iter_rows.c).
*/
#include <string.h>
#include "kv/sf/sf_iter_int.h"

bool kv_sfi_proj_keeps(const sf_iter *it, const uint8_t *qb, uint32_t ql) {
  if (it->byte_proj) return ql == 1 && it->ptab[qb[0]] != 0; /* a table look-up */
  if (it->short_proj) { /* every projected qualifier is short: compare numbers */
    if (ql > 7) return false;
    uint64_t key = short_key(qb, ql);
    for (uint32_t i = 0; i < it->npq; i++)
      if (it->pkey[i] == key) return true;
    return false;
  }
  for (uint32_t i = 0; i < it->npq; i++)
    if (it->pql[i] == ql && (ql == 0 || memcmp(it->pq[i], qb, ql) == 0)) return true;
  return false;
}

/* Whether the loaded block has the memo's shape. */
static bool memo_same(const sf_iter *it) {
  const kv_sf_cblock *b = it->b;
  return b->shape_len && b->shape_len == it->memo_len &&
         memcmp(b->shape, it->memo_shape, b->shape_len) == 0;
}

/* Make the loaded block's shape (it has one) the memo's, forgetting the tables of another. */
static void memo_take(sf_iter *it) {
  const kv_sf_cblock *b = it->b;
  if (memo_same(it)) return;
  memcpy(it->memo_shape, b->shape, b->shape_len);
  it->memo_len = b->shape_len;
  for (uint32_t q = 0; 2 * q < b->shape_len; q++) it->memo_q[q] = b->shape[2 * q];
  it->memo_keep = it->memo_fast = false;
}

bool kv_sfi_compute_keep(sf_iter *it) {
  const kv_sf_cblock *b = it->b;
  if (it->memo_keep && memo_same(it)) {
    it->keep_bi = it->bi;
    return true;
  }
  if (b->nquals > it->keep_cap) {
    size_t cap = it->keep_cap;
    if (kv_sf_grow((void **)&it->keep, &cap, b->nquals, 1)) {
      it->status = kv_error(KV_ERR_NOMEM, "out of memory reading store file %s", it->r->path);
      it->valid = false;
      return false;
    }
    it->keep_cap = cap;
  }
  for (uint32_t q = 0; q < b->nquals; q++)
    it->keep[q] = kv_sfi_proj_keeps(it, b->dict + b->q_off[q], b->q_len[q]);
  it->keep_bi = it->bi;
  if (b->shape_len) {
    memo_take(it);
    it->memo_keep = true;
  } else {
    it->memo_keep = false; /* keep no longer holds the memo shape's flags */
  }
  return true;
}

/* Whether the loaded block's full rows may be taken by the fast row table (full_prepare's
** test of the block: values packed in cell order, the whole block). */
static bool full_block(const sf_iter *it) { return it->b->cvals && !it->partial; }

bool kv_sfi_memo_fast(const sf_iter *it) {
  return it->memo_fast && it->memo_fast_proj == it->proj &&
         it->memo_fast_full == full_block(it) && memo_same(it);
}

void kv_sfi_memo_fast_made(sf_iter *it) {
  const kv_sf_cblock *b = it->b;
  if (!b->shape_len) {
    it->memo_fast = false;
    return;
  }
  memo_take(it);
  for (uint32_t q = 0; q < b->nquals; q++) it->fq[q].qual = &it->memo_q[q];
  it->memo_fast = true;
  it->memo_fast_proj = it->proj;
  it->memo_fast_full = full_block(it);
}

/* Whether quals/lens is the projection pkey holds (mp_ok): the same short qualifiers in the
** same order. */
static bool same_projection(const sf_iter *it, const uint8_t *const *quals,
                            const uint32_t *lens, uint32_t n) {
  if (!it->mp_ok || n != it->mp_n) return false;
  for (uint32_t i = 0; i < n; i++)
    if (lens[i] > 7 || short_key(quals[i], lens[i]) != it->pkey[i]) return false;
  return true;
}

void kv_sf_iter_project(kv_iter *base, const uint8_t *const *quals, const uint32_t *lens,
                        uint32_t n) {
  sf_iter *it = (sf_iter *)base;
  if (it->b->part) { /* decoded for another projection: not reused */
    it->bi = -1;
    it->valid = false;
  }
  it->pq = quals;
  it->pql = lens;
  it->npq = n;
  it->proj = true;
  it->keep_bi = -1;
  if (same_projection(it, quals, lens, n)) { /* pkey, ptab and the memo hold */
    it->short_proj = true;
    it->vec_ok = it->mp_vec;
    it->byte_proj = it->mp_byte;
    return;
  }
  it->memo_keep = it->memo_fast = false; /* made for another projection */
  it->short_proj = n <= PKEYS;
  for (uint32_t i = 0; i < n && it->short_proj; i++) {
    if (lens[i] > 7) it->short_proj = false;
    else it->pkey[i] = short_key(quals[i], lens[i]);
  }
  /* value vectors: short qualifiers (at most PKEYS of them), each named once, so that a
     position names one qualifier */
  it->vec_ok = n >= 1 && it->short_proj;
  it->byte_proj = it->short_proj;
  for (uint32_t i = 0; i < n && it->byte_proj; i++) it->byte_proj = lens[i] == 1;
  if (it->byte_proj) { /* one-byte qualifiers: a table; a byte named twice (its later
                           position kept: unused, as value vectors are then off) */
    memset(it->ptab, 0, sizeof it->ptab);
    for (uint32_t i = n; i-- > 0;) {
      if (it->ptab[quals[i][0]]) it->vec_ok = false;
      it->ptab[quals[i][0]] = (uint8_t)(i + 1);
    }
  } else {
    for (uint32_t i = 1; i < n && it->vec_ok; i++)
      for (uint32_t j = 0; j < i && it->vec_ok; j++)
        if (it->pkey[i] == it->pkey[j]) it->vec_ok = false;
  }
  it->mp_ok = it->short_proj;
  it->mp_n = n;
  it->mp_vec = it->vec_ok;
  it->mp_byte = it->byte_proj;
}
