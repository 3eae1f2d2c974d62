/*
** kv/sf_iter.c: the store file iterator (kv_sf_iter_new in kv/sf.h), a kv_iter over the
** cells of one file. It holds one decoded block at a time: the block is read with one
** pread, checked and decompressed (kv_sf_unframe_block), then decoded into per-block
** arrays (kv_sf_block_decode) that are reused from block to block. A seek binary-searches
** the block index, then the rows of the block, then the cells of the row.
**
** Errors are sticky: once a block fails to read or decode, the iterator is invalid and
** status() returns the error (KV_ERR_CORRUPT naming the file and offset, or the env's I/O
** error) until it is destroyed. The iterator does not cache blocks across iterators (the
** block cache of issue 8 will sit in front of load_block).
*/
#include <stdio.h>
#include "kv/sf_int.h"
#include "kv/status.h"

typedef struct sf_iter {
  kv_iter base;            /* vtable; must come first */
  kv_sf_reader *r;         /* the file */
  kv_sf_io *io;            /* counters to bump (may be NULL) */
  kv_sfbuf disk;           /* the block as read from the file */
  kv_sfbuf scratch;        /* the decompressed block */
  kv_sf_dblock d;          /* the decoded block */
  int64_t bi;              /* index of the decoded block, -1 if none */
  uint32_t ci;             /* current cell in the block */
  uint32_t ri;             /* row of the current cell */
  bool valid;              /* positioned on a cell */
  int status;              /* sticky error, KV_OK if none */
  kv_cell cur;             /* the current cell, filled on every move */
} sf_iter;

static int same_key(const kv_cell *a, const kv_cell *b) {
  return kv_cell_cmp(a, b) == 0;
}

/* Make block `bi` the decoded block. Returns false (and sets the sticky status) on error. */
static bool load_block(sf_iter *it, uint32_t bi) {
  if (it->bi == (int64_t)bi) return true;
  kv_sf_reader *r = it->r;
  const kv_sf_index_entry *e = &r->index[bi];
  const uint8_t *raw;
  size_t raw_len;
  const char *why = NULL;
  it->bi = -1;
  it->disk.len = 0;
  int rc = kv_sfbuf_reserve(&it->disk, e->size);
  if (rc) rc = kv_error(KV_ERR_NOMEM, "out of memory reading store file %s", r->path);
  if (!rc) rc = kv_sf_read_at(r, e->off, it->disk.p, e->size);
  if (!rc && it->io) {
    it->io->blocks_read++;
    it->io->bytes_read += e->size;
  }
  if (!rc)
    rc = kv_sf_unframe_block(it->disk.p, e->size, e->raw, &it->scratch, &raw, &raw_len,
                             r->path, e->off);
  if (!rc) {
    rc = kv_sf_block_decode(&it->d, raw, raw_len, &why);
    if (rc == KV_ERR_NOMEM) rc = kv_error(rc, "out of memory reading store file %s", r->path);
  }
  if (!rc) {
    kv_cell first;
    kv_sf_dblock_cell(&it->d, 0, 0, &first);
    if (it->d.ncells != e->cells || it->d.nrows != e->rows)
      why = "cell or row count disagrees with the block index";
    else if (!same_key(&first, &e->first))
      why = "first cell disagrees with the block index";
    if (why) rc = KV_ERR_CORRUPT;
  }
  if (rc == KV_ERR_CORRUPT && why)
    kv_error(rc, "store file %s: block %u at offset %llu: %s", r->path, bi,
             (unsigned long long)e->off, why);
  if (rc) {
    it->status = rc;
    it->valid = false;
    return false;
  }
  if (it->io) it->io->cells_decoded += it->d.ncells;
  it->bi = bi;
  return true;
}

/* Row of cell ci: the last row whose first cell is <= ci. */
static uint32_t row_of(const kv_sf_dblock *d, uint32_t ci) {
  uint32_t lo = 0, hi = d->nrows; /* answer in [lo, hi) */
  while (hi - lo > 1) {
    uint32_t mid = lo + (hi - lo) / 2;
    if (d->row_first[mid] <= ci) lo = mid;
    else hi = mid;
  }
  return lo;
}

static void set_pos(sf_iter *it, uint32_t ci, uint32_t ri) {
  it->ci = ci;
  it->ri = ri;
  it->valid = true;
  kv_sf_dblock_cell(&it->d, ri, ci, &it->cur);
}

/* Index of the first cell of the decoded block that is >= target (upper: > target). */
static uint32_t find_in_block(const kv_sf_dblock *d, const kv_cell *t, bool upper) {
  uint32_t lo = 0, hi = d->nrows; /* first row with key >= t->row */
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo) / 2;
    const uint8_t *k = d->keys + d->row_off[mid];
    if (kv_bytes_cmp(k, d->row_off[mid + 1] - d->row_off[mid], t->row, t->row_len) < 0)
      lo = mid + 1;
    else
      hi = mid;
  }
  if (lo == d->nrows) return d->ncells;
  uint32_t r = lo;
  const uint8_t *k = d->keys + d->row_off[r];
  if (kv_bytes_cmp(k, d->row_off[r + 1] - d->row_off[r], t->row, t->row_len) != 0)
    return d->row_first[r];
  uint32_t clo = d->row_first[r], chi = d->row_first[r + 1];
  while (clo < chi) {
    uint32_t mid = clo + (chi - clo) / 2;
    kv_cell c;
    kv_sf_dblock_cell(d, r, mid, &c);
    int cmp = kv_cell_cmp(&c, t);
    if (cmp < 0 || (upper && cmp == 0)) clo = mid + 1;
    else chi = mid;
  }
  return clo;
}

/* Index of the last block whose first key is <= target, or -1. */
static int64_t find_block(const kv_sf_reader *r, const kv_cell *t) {
  int64_t lo = 0, hi = (int64_t)r->nblocks - 1, ans = -1;
  while (lo <= hi) {
    int64_t mid = lo + (hi - lo) / 2;
    if (kv_cell_cmp(&r->index[mid].first, t) <= 0) { ans = mid; lo = mid + 1; }
    else hi = mid - 1;
  }
  return ans;
}

static bool it_valid(kv_iter *base) { return ((sf_iter *)base)->valid; }

static void it_seek_first(kv_iter *base) {
  sf_iter *it = (sf_iter *)base;
  it->valid = false;
  if (it->status || it->r->nblocks == 0 || !load_block(it, 0)) return;
  set_pos(it, 0, 0);
}

static void it_seek_last(kv_iter *base) {
  sf_iter *it = (sf_iter *)base;
  it->valid = false;
  if (it->status || it->r->nblocks == 0 || !load_block(it, it->r->nblocks - 1)) return;
  set_pos(it, it->d.ncells - 1, it->d.nrows - 1);
}

static void it_seek(kv_iter *base, const kv_cell *target) {
  sf_iter *it = (sf_iter *)base;
  it->valid = false;
  if (it->status || it->r->nblocks == 0) return;
  int64_t b = find_block(it->r, target);
  if (b < 0) b = 0;
  if (!load_block(it, (uint32_t)b)) return;
  uint32_t ci = find_in_block(&it->d, target, false);
  if (ci == it->d.ncells) {
    if ((uint32_t)b + 1 >= it->r->nblocks || !load_block(it, (uint32_t)b + 1)) return;
    ci = 0;
  }
  set_pos(it, ci, row_of(&it->d, ci));
}

static void it_seek_for_prev(kv_iter *base, const kv_cell *target) {
  sf_iter *it = (sf_iter *)base;
  it->valid = false;
  if (it->status || it->r->nblocks == 0) return;
  int64_t b = find_block(it->r, target);
  if (b < 0 || !load_block(it, (uint32_t)b)) return;
  uint32_t ci = find_in_block(&it->d, target, true);
  if (ci == 0) return; /* cannot happen: the block's first cell is <= target */
  ci--;
  set_pos(it, ci, row_of(&it->d, ci));
}

static void it_next(kv_iter *base) {
  sf_iter *it = (sf_iter *)base;
  uint32_t ci = it->ci + 1;
  if (ci < it->d.ncells) {
    uint32_t ri = it->ri;
    if (it->d.row_first[ri + 1] <= ci) ri++;
    set_pos(it, ci, ri);
    return;
  }
  it->valid = false;
  uint32_t nb = (uint32_t)it->bi + 1;
  if (nb >= it->r->nblocks || !load_block(it, nb)) return;
  set_pos(it, 0, 0);
}

static void it_prev(kv_iter *base) {
  sf_iter *it = (sf_iter *)base;
  if (it->ci > 0) {
    uint32_t ci = it->ci - 1, ri = it->ri;
    if (it->d.row_first[ri] > ci) ri--;
    set_pos(it, ci, ri);
    return;
  }
  it->valid = false;
  if (it->bi <= 0 || !load_block(it, (uint32_t)it->bi - 1)) return;
  set_pos(it, it->d.ncells - 1, it->d.nrows - 1);
}

static const kv_cell *it_cell(kv_iter *base) { return &((sf_iter *)base)->cur; }

static int it_status(kv_iter *base) { return ((sf_iter *)base)->status; }

static void it_destroy(kv_iter *base) {
  sf_iter *it = (sf_iter *)base;
  if (!it) return;
  kv_sfbuf_free(&it->disk);
  kv_sfbuf_free(&it->scratch);
  kv_sf_dblock_free(&it->d);
  free(it);
}

static const kv_iter_ops sf_iter_ops = {
  it_valid, it_seek_first, it_seek_last, it_seek, it_seek_for_prev,
  it_next, it_prev, it_cell, it_status, it_destroy,
};

kv_iter *kv_sf_iter_new(kv_sf_reader *r, kv_sf_io *io) {
  sf_iter *it = calloc(1, sizeof *it);
  if (!it) return NULL;
  it->base.ops = &sf_iter_ops;
  it->r = r;
  it->io = io;
  it->bi = -1;
  return &it->base;
}
