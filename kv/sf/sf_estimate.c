/*
** kv/sf/sf_estimate.c: the planner's estimate of the rows and bytes a key range holds in one
** store file (kv/sf/sf.h kv_sf_estimate), from the block index (docs/FORMAT.md Part 2, "Block
** index": per block its first row key, on-disk size and row count).
**
** The blocks a range overlaps are a run [first, last] of the index: the ones wholly inside
** count their rows as the index gives them. Only the two end blocks are cut by the range;
** their share used to be guessed (half a block each: a 24-row range inside 104-row blocks
** was estimated at 105 rows). Now, while the caller's allowance (kv_sf_est.exact) lasts,
** an end block is loaded as a scan loads it (kv/sf/sf_iter_int.h kv_sfi_load: from the block
** cache, or read, decoded and inserted when the cache takes it, so the scan that follows
** finds it there) and the row keys of the block inside the range are counted by two binary
** searches. Past the allowance, or when the block cannot be read, the half rule stays.
**
** Bytes are the blocks' on-disk bytes, each block counted whole (a scan reads a block
** whole, even to find that the range ends in it), or, for a scan that stops after `limit`
** rows, only the blocks up to the one that holds its limit-th row in scan order.
** Not here: adding up files and memstores (kv/db/db_estimate.c), iteration (kv/sf/sf_iter.c).
*/
#include "kv/sf/sf_iter_int.h"

/* Rows of block b whose row key is below t (or at most t when `incl`): a binary search. */
static uint32_t rows_below(const kv_sf_cblock *b, const uint8_t *t, uint32_t tlen, bool incl) {
  uint32_t lo = 0, hi = b->nrows;
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo) / 2;
    int c = kv_sf_cblock_key_cmp(b, mid, t, tlen);
    if (c < 0 || (incl && c == 0)) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/* Twice the rows of block bi inside q's range, counted from its row keys when the
** allowance lets (*it made on first use), else the half rule (the block's rows, i.e. half
** of twice them). */
static uint64_t end_block_rows2(kv_sf_reader *r, uint32_t bi, const kv_sf_est *q,
                                kv_iter **it) {
  const kv_sf_index_entry e_v = kv_sf_entry(r, bi), *e = &e_v;
  if (!q->exact || *q->exact == 0) return e->rows;
  if (!*it && !(*it = kv_sf_iter_new_opts(r, NULL, true))) return e->rows;
  (*q->exact)--;
  const kv_sf_cblock *b = kv_sfi_load((sf_iter *)*it, bi);
  if (!b) {
    *q->exact = 0; /* the scan will meet the same error and report it */
    return e->rows;
  }
  uint32_t lo = q->start ? rows_below(b, q->start, q->start_len, !q->start_incl) : 0;
  uint32_t hi = q->end ? rows_below(b, q->end, q->end_len, q->end_incl) : b->nrows;
  return hi > lo ? 2ull * (hi - lo) : 0;
}

/* Whether block i's rows [lo, hi] (its first row to the next block's first row, or the
** file's last row) lie wholly inside q's range. */
static bool block_inside(const kv_sf_reader *r, uint32_t i, const kv_sf_est *q) {
  uint32_t f_len;
  const uint8_t *f_row = kv_sf_first_row(r, i, &f_len);
  uint32_t hi_len = r->last_row_len;
  const uint8_t *hi = i + 1 < r->nblocks ? kv_sf_first_row(r, i + 1, &hi_len) : r->last_row;
  if (q->start) {
    int c = kv_bytes_cmp(f_row, f_len, q->start, q->start_len);
    if (c < 0 || (c == 0 && !q->start_incl)) return false;
  }
  if (q->end) {
    int c = kv_bytes_cmp(hi, hi_len, q->end, q->end_len);
    if (c > 0 || (c == 0 && !q->end_incl)) return false;
  }
  return true;
}

void kv_sf_estimate(kv_sf_reader *r, const kv_sf_est *q, uint64_t *rows, uint64_t *bytes) {
  *rows = 0;
  *bytes = 0;
  if (r->nblocks == 0) return;
  /* first: the first block whose rows reach start (its next block's first row is at or
     above it); blocks before it form a prefix, binary-searched */
  uint32_t first = 0, last = r->nblocks - 1;
  if (q->start) {
    uint32_t lo = 0, hi = r->nblocks - 1;
    while (lo < hi) {
      uint32_t mid = lo + (hi - lo) / 2;
      uint32_t nf_len;
      const uint8_t *nf_row = kv_sf_first_row(r, mid + 1, &nf_len);
      if (kv_bytes_cmp(nf_row, nf_len, q->start, q->start_len) < 0) lo = mid + 1;
      else hi = mid;
    }
    first = lo;
    int c = kv_bytes_cmp(r->last_row, r->last_row_len, q->start, q->start_len);
    if (c < 0 || (c == 0 && !q->start_incl)) return; /* the range starts past the file */
  }
  /* last: the last block whose first row is inside the range's end */
  if (q->end) {
    uint32_t lo = 0, hi = r->nblocks; /* first block whose first row is past end */
    while (lo < hi) {
      uint32_t mid = lo + (hi - lo) / 2;
      uint32_t f_len;
      const uint8_t *f_row = kv_sf_first_row(r, mid, &f_len);
      int c = kv_bytes_cmp(f_row, f_len, q->end, q->end_len);
      if (c < 0 || (c == 0 && q->end_incl)) lo = mid + 1;
      else hi = mid;
    }
    if (lo == 0) return; /* the range ends before the file */
    last = lo - 1;
  }
  if (last < first) return;
  /* twice the rows of each end block cut by the range (the half rule stays exact in
     halves); the blocks between count whole */
  kv_iter *it = NULL;
  uint64_t first2 = block_inside(r, first, q) ? 2ull * kv_sf_entry(r, first).rows
                                              : end_block_rows2(r, first, q, &it);
  uint64_t last2 = first2;
  if (last != first)
    last2 = block_inside(r, last, q) ? 2ull * kv_sf_entry(r, last).rows
                                     : end_block_rows2(r, last, q, &it);
  if (it) it->ops->destroy(it);
  uint64_t nr2 = 0, nb = 0;
  kv_sf_icur cur; /* a paged index: one page pinned at a time */
  kv_sf_icur_init(&cur, r);
  for (uint32_t k = 0; k <= last - first; k++) {
    uint32_t i = q->reverse ? last - k : first + k;
    const kv_sf_index_entry *e = kv_sf_icur_at(&cur, i);
    uint64_t r2 = i == first ? first2 : i == last ? last2 : 2ull * e->rows;
    bool seen = q->counted && (int64_t)i <= *q->counted; /* an earlier range's block */
    if (!seen && (!q->limit || nr2 < 2 * q->limit)) nb += e->size; /* up to limit */
    nr2 += r2;
  }
  kv_sf_icur_done(&cur);
  if (q->counted && (int64_t)last > *q->counted) *q->counted = last;
  *rows = (nr2 + 1) / 2;
  *bytes = nb;
}
