/*
** kv/sf_iter.c: the store file iterator (kv_sf_iter_new in kv/sf.h), a kv_iter over the
** cells of one file. It holds one decoded block at a time: the block is read with one
** pread, checked and decompressed (kv_sf_unframe_block), then decoded into per-block
** arrays (kv_sf_block_decode) that are reused from block to block. A seek binary-searches
** the block index, then the rows of the block, then the cells of the row.
**
** Errors are sticky: once a block fails to read or decode, the iterator is invalid and
** status() returns the error (KV_ERR_CORRUPT naming the file and offset, or the env's I/O
** error) until it is destroyed.
**
** Block cache: when the reader has one (kv_sf_set_cache), load_block first looks the block
** up by (file number, offset); a hit makes no read and no decode, and the iterator reads
** the cached decoded block through it->dp while it holds the entry's reference. A miss
** reads, checks and decodes the block into a new cache entry (raw bytes copied into it, so
** the decoded pointers stay valid), and inserts it only once it passed every check. Without
** a cache the iterator decodes into its own reused arrays (it->d).
**
** Projection (kv_sf_iter_project): when a scan reads only some qualifiers of the family,
** each loaded block gets a keep flag per dictionary entry, and every move steps over the
** cells of other qualifiers (DeleteFamily tombstones are always kept) in a tight loop over
** the block's arrays, so a scan of one column out of twelve does not pay a merge step and
** a visibility check for each of the other eleven. A block read from the file whose
** dictionary holds qualifiers left out is decoded with only the kept value groups
** (kv_sf_block_decode_keep) into the iterator's own arrays, and not cached: a partly
** decoded block must not serve other readers.
**
** Lazy blocks: a block loaded for a seek that is not going into the cache (there is none,
** or it is full and kv_cache_admit says no: a point read does not evict a cached block for
** one it may never read again, unless it comes back soon) is decoded without its values; set_pos then gives values to the row it lands on
** (kv_sf_block_values), and to the whole block once the iterator leaves that row. A point
** lookup that misses the cache thus pays for the keys and the cell streams of the block,
** not for every value in it.
*/
#include <stdio.h>
#include "kv/cache.h"
#include "kv/sf_int.h"
#include "kv/status.h"

typedef struct sf_iter {
  kv_iter base;            /* vtable; must come first */
  kv_sf_reader *r;         /* the file */
  kv_sf_io *io;            /* counters to bump (may be NULL) */
  kv_sfbuf disk;           /* the block as read from the file */
  kv_sfbuf scratch;        /* the decompressed block */
  kv_sf_dblock d;          /* the decoded block when not cached */
  const kv_sf_dblock *dp;  /* the block being read: &d, or a cached block */
  kv_cache_entry *ce;      /* the cache entry dp points into (a reference), or NULL */
  struct cblock *own;      /* a decoded block the cache refused (freed on the next load) */
  bool fill_cache;         /* add blocks read to the cache (compaction reads do not) */
  int64_t bi;              /* index of the decoded block, -1 if none */
  uint32_t ci;             /* current cell in the block */
  uint32_t ri;             /* row of the current cell */
  bool valid;              /* positioned on a cell */
  int status;              /* sticky error, KV_OK if none */
  kv_cell cur;             /* the current cell, filled on every move */
  const uint8_t *const *pq; /* projected qualifiers (caller's), when proj */
  const uint32_t *pql;     /* their lengths */
  uint32_t npq;            /* entries in pq */
  bool proj;               /* forward moves keep only projected cells */
  uint8_t *keep;           /* per dictionary entry of block keep_bi: 1 = projected */
  size_t keep_cap;         /* entries allocated in keep */
  int64_t keep_bi;         /* block keep was computed for, -1 if none */
  bool lazy;               /* the block in d was decoded without values (a seek's block
                              that is not cached): values come per window */
  uint32_t win0, win1;     /* lazy: cells [win0, win1) have their values */
  kv_sfbuf wbuf;           /* lazy: the first window's fixed-width values */
  kv_sfbuf wbuf2;          /* lazy: the rest of the block's fixed-width values */
  uint8_t *zkeep;          /* lazy: all-zero keep flags for the decode */
  size_t zkeep_cap;        /* bytes allocated in zkeep */
} sf_iter;

static int same_key(const kv_cell *a, const kv_cell *b) {
  return kv_cell_cmp(a, b) == 0;
}

/* A decoded block owned by the cache: the arrays, then the raw bytes they point into. */
typedef struct cblock {
  kv_sf_dblock d;          /* the decoded block */
  size_t raw_len;          /* bytes in raw */
  uint8_t raw[];           /* the uncompressed block */
} cblock;

static void cblock_free(void *v) {
  cblock *cb = v;
  if (!cb) return;
  kv_sf_dblock_free(&cb->d);
  free(cb);
}

/* Bytes a cached block costs: its raw bytes and its decoded arrays. */
static size_t cblock_charge(const cblock *cb) {
  const kv_sf_dblock *d = &cb->d;
  return sizeof *cb + cb->raw_len + d->rows_cap * 2 * sizeof(uint32_t) +
         d->cells_cap * (sizeof(uint32_t) * 2 + sizeof(int64_t) + sizeof(uint64_t) + 1 +
                         sizeof(void *)) +
         d->quals_cap * (sizeof(void *) + sizeof(uint32_t)) + d->keys_cap + d->vbuf_cap +
         d->groups_cap * 32;
}

/* Let go of the cached or refused block the iterator reads (dp falls back to d). */
static void drop_current(sf_iter *it) {
  if (it->ce) kv_cache_release(it->r->cache, it->ce);
  it->ce = NULL;
  cblock_free(it->own);
  it->own = NULL;
  it->dp = &it->d;
}

/* Check a decoded block against its index entry; the reason, or NULL when it agrees. */
static const char *check_block(const kv_sf_dblock *d, const kv_sf_index_entry *e) {
  kv_cell first;
  kv_sf_dblock_cell(d, 0, 0, &first);
  if (d->ncells != e->cells || d->nrows != e->rows)
    return "cell or row count disagrees with the block index";
  if (!same_key(&first, &e->first)) return "first cell disagrees with the block index";
  return NULL;
}

/* Whether block e of the reader should go into the cache: it fits without evicting, or it
** was refused a short while ago (kv_cache_admit; its charge estimated from the index entry:
** raw bytes, per-cell and per-row arrays). */
static bool cache_has_room(const kv_sf_reader *r, const kv_sf_index_entry *e) {
  size_t est = (size_t)e->raw * 2 + (size_t)e->cells * 33 + (size_t)e->rows * 8;
  return kv_cache_admit(r->cache, r->cache_id, e->off, est);
}

/* Make block `bi` the decoded block. `seek`: loaded for a seek, which may read one row of
** it only: when the block is not going into the cache, it is decoded lazily (keys, streams,
** no values; set_pos gives values per window). Returns false (and sets the sticky status)
** on error. */
static bool load_block_mode(sf_iter *it, uint32_t bi, bool seek) {
  if (it->bi == (int64_t)bi) return true;
  kv_sf_reader *r = it->r;
  const kv_sf_index_entry *e = &r->index[bi];
  const uint8_t *raw;
  size_t raw_len;
  const char *why = NULL;
  it->bi = -1;
  if (r->cache) {
    kv_cache_entry *hit = kv_cache_lookup(r->cache, r->cache_id, e->off);
    if (hit) {
      drop_current(it);
      it->ce = hit;
      it->dp = &((cblock *)kv_cache_value(hit))->d;
      it->lazy = false;
      if (it->io) {
        it->io->blocks_read++;
        it->io->blocks_cache_hit++;
      }
      it->bi = bi;
      return true;
    }
  }
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
  /* A projected read that leaves out some qualifiers of this block decodes only the
     values it keeps, into the iterator's own arrays: such a block is not cached. */
  bool partial = false;
  if (!rc && it->proj) {
    bool all = true;
    rc = kv_sf_block_keep(raw, raw_len, it->pq, it->pql, it->npq, &it->keep, &it->keep_cap,
                          &all, &why);
    if (rc == KV_ERR_NOMEM) rc = kv_error(rc, "out of memory reading store file %s", r->path);
    partial = !all;
  }
  bool insert = r->cache && it->fill_cache && !partial &&
                !(seek && !cache_has_room(r, e));
  bool lazy = !rc && seek && !partial && !insert;
  if (lazy) {
    bool all = true;
    rc = kv_sf_block_keep(raw, raw_len, NULL, NULL, 0, &it->zkeep, &it->zkeep_cap, &all, &why);
    if (rc == KV_ERR_NOMEM) rc = kv_error(rc, "out of memory reading store file %s", r->path);
  }
  cblock *cb = NULL;
  if (!rc && insert) {
    cb = malloc(sizeof *cb + raw_len); /* the raw bytes are copied over: no zeroing */
    if (!cb) rc = kv_error(KV_ERR_NOMEM, "out of memory reading store file %s", r->path);
    else {
      memset(&cb->d, 0, sizeof cb->d);
      memcpy(cb->raw, raw, raw_len);
      cb->raw_len = raw_len;
      raw = cb->raw;
    }
  }
  kv_sf_dblock *target = cb ? &cb->d : &it->d;
  if (!rc) {
    rc = kv_sf_block_decode_keep(target, raw, raw_len,
                                 lazy ? it->zkeep : partial ? it->keep : NULL, &why);
    if (rc == KV_ERR_NOMEM) rc = kv_error(rc, "out of memory reading store file %s", r->path);
  }
  if (!rc && (why = check_block(target, e)) != NULL) rc = KV_ERR_CORRUPT;
  if (rc == KV_ERR_CORRUPT && why)
    kv_error(rc, "store file %s: block %u at offset %llu: %s", r->path, bi,
             (unsigned long long)e->off, why);
  if (rc) {
    cblock_free(cb);
    drop_current(it);
    it->status = rc;
    it->valid = false;
    return false;
  }
  drop_current(it);
  if (cb) {
    it->ce = kv_cache_insert(r->cache, r->cache_id, e->off, cb, cblock_charge(cb), cblock_free);
    if (!it->ce) it->own = cb; /* too big for the cache, or no memory: read it privately */
    it->dp = &cb->d;
  }
  if (it->io) it->io->cells_decoded += it->dp->ncells;
  it->lazy = lazy;
  it->win0 = it->win1 = 0;
  it->bi = bi;
  if (it->proj) it->keep_bi = bi; /* kv_sf_block_keep filled keep for this block */
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

static bool load_block(sf_iter *it, uint32_t bi) { return load_block_mode(it, bi, false); }

/* Lazy block: give cell ci (row ri) its value. The first window is ci's row (a point read
** needs no more); any later one is the whole block. False (status set) on error. */
static bool materialize(sf_iter *it, uint32_t ci, uint32_t ri) {
  kv_sf_dblock *d = &it->d; /* lazy blocks are always the iterator's own */
  uint32_t c0 = 0, c1 = d->ncells;
  const char *why = NULL;
  int rc;
  (void)ci;
  if (it->win1 == 0) { /* the first window: the row */
    c0 = d->row_first[ri];
    c1 = d->row_first[ri + 1];
    rc = kv_sf_block_values(d, c0, c1, 0, 0, &it->wbuf, &why);
  } else { /* the rest of the block, around the first window */
    rc = kv_sf_block_values(d, 0, d->ncells, it->win0, it->win1, &it->wbuf2, &why);
  }
  if (rc) {
    if (rc == KV_ERR_CORRUPT)
      kv_error(rc, "store file %s: block %lld at offset %llu: %s", it->r->path,
               (long long)it->bi, (unsigned long long)it->r->index[it->bi].off, why);
    else
      kv_error(rc, "out of memory reading store file %s", it->r->path);
    it->status = rc;
    it->valid = false;
    return false;
  }
  it->win0 = c0;
  it->win1 = c1;
  return true;
}

static void set_pos(sf_iter *it, uint32_t ci, uint32_t ri) {
  if (it->lazy && (ci < it->win0 || ci >= it->win1) && !materialize(it, ci, ri)) return;
  it->ci = ci;
  it->ri = ri;
  it->valid = true;
  kv_sf_dblock_cell(it->dp, ri, ci, &it->cur);
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

/* Recompute the keep flags for the loaded block. False (status set) when out of memory. */
static bool compute_keep(sf_iter *it) {
  const kv_sf_dblock *d = it->dp;
  if (d->nquals > it->keep_cap) {
    size_t cap = it->keep_cap;
    if (kv_sf_grow((void **)&it->keep, &cap, d->nquals, 1)) {
      it->status = kv_error(KV_ERR_NOMEM, "out of memory reading store file %s", it->r->path);
      it->valid = false;
      return false;
    }
    it->keep_cap = cap;
  }
  for (uint32_t q = 0; q < d->nquals; q++) {
    uint8_t k = 0;
    for (uint32_t i = 0; i < it->npq && !k; i++)
      k = it->pql[i] == d->q_len[q] && (d->q_len[q] == 0 || memcmp(it->pq[i], d->q_ptr[q], d->q_len[q]) == 0);
    it->keep[q] = k;
  }
  it->keep_bi = it->bi;
  return true;
}

/* Position on the first cell at or after cell ci (row ri, ci's row or an earlier one) of
** the loaded block that the projection keeps, loading the next blocks as needed. */
static void settle_fwd(sf_iter *it, uint32_t ci, uint32_t ri) {
  for (;;) {
    const kv_sf_dblock *d = it->dp;
    if (it->proj) {
      if (it->keep_bi != it->bi && !compute_keep(it)) return;
      uint32_t start = ci, n = d->ncells;
      const uint8_t *keep = it->keep;
      while (ci < n && !keep[d->c_qual[ci]] && d->c_type[ci] != KV_DELETE_FAMILY) ci++;
      if (it->io) it->io->cells_skipped += ci - start;
    }
    if (ci < d->ncells) {
      while (d->row_first[ri + 1] <= ci) ri++;
      set_pos(it, ci, ri);
      return;
    }
    it->valid = false;
    uint32_t nb = (uint32_t)it->bi + 1;
    if (nb >= it->r->nblocks || !load_block(it, nb)) return;
    ci = 0;
    ri = 0;
  }
}

/* Position on the last kept cell at or before cell ci (row ri) of the loaded block, loading
** the previous blocks as needed. */
static void settle_back(sf_iter *it, uint32_t ci, uint32_t ri) {
  for (;;) {
    const kv_sf_dblock *d = it->dp;
    if (!it->proj) {
      set_pos(it, ci, ri);
      return;
    }
    if (it->keep_bi != it->bi && !compute_keep(it)) return;
    const uint8_t *keep = it->keep;
    int64_t i = ci;
    while (i >= 0 && !keep[d->c_qual[i]] && d->c_type[i] != KV_DELETE_FAMILY) i--;
    if (it->io) it->io->cells_skipped += (uint64_t)((int64_t)ci - i);
    if (i >= 0) {
      while (d->row_first[ri] > (uint32_t)i) ri--;
      set_pos(it, (uint32_t)i, ri);
      return;
    }
    it->valid = false;
    if (it->bi <= 0 || !load_block(it, (uint32_t)it->bi - 1)) return;
    ci = it->dp->ncells - 1;
    ri = it->dp->nrows - 1;
  }
}

static bool it_valid(kv_iter *base) { return ((sf_iter *)base)->valid; }

static void it_seek_first(kv_iter *base) {
  sf_iter *it = (sf_iter *)base;
  it->valid = false;
  if (it->status || it->r->nblocks == 0 || !load_block(it, 0)) return;
  settle_fwd(it, 0, 0);
}

static void it_seek_last(kv_iter *base) {
  sf_iter *it = (sf_iter *)base;
  it->valid = false;
  if (it->status || it->r->nblocks == 0 || !load_block(it, it->r->nblocks - 1)) return;
  settle_back(it, it->dp->ncells - 1, it->dp->nrows - 1);
}

static void it_seek(kv_iter *base, const kv_cell *target) {
  sf_iter *it = (sf_iter *)base;
  it->valid = false;
  if (it->status || it->r->nblocks == 0) return;
  int64_t b = find_block(it->r, target);
  if (b < 0) b = 0;
  if (!load_block_mode(it, (uint32_t)b, true)) return;
  uint32_t ci = find_in_block(it->dp, target, false);
  settle_fwd(it, ci, ci < it->dp->ncells ? row_of(it->dp, ci) : it->dp->nrows - 1);
}

static void it_seek_for_prev(kv_iter *base, const kv_cell *target) {
  sf_iter *it = (sf_iter *)base;
  it->valid = false;
  if (it->status || it->r->nblocks == 0) return;
  int64_t b = find_block(it->r, target);
  if (b < 0 || !load_block_mode(it, (uint32_t)b, true)) return;
  uint32_t ci = find_in_block(it->dp, target, true);
  if (ci == 0) return; /* cannot happen: the block's first cell is <= target */
  ci--;
  settle_back(it, ci, row_of(it->dp, ci));
}

static void it_next(kv_iter *base) {
  sf_iter *it = (sf_iter *)base;
  uint32_t ci = it->ci + 1;
  if (it->proj) {
    settle_fwd(it, ci, it->ri);
    return;
  }
  if (ci < it->dp->ncells) {
    uint32_t ri = it->ri;
    if (it->dp->row_first[ri + 1] <= ci) ri++;
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
    if (it->dp->row_first[ri] > ci) ri--;
    settle_back(it, ci, ri);
    return;
  }
  it->valid = false;
  if (it->bi <= 0 || !load_block(it, (uint32_t)it->bi - 1)) return;
  settle_back(it, it->dp->ncells - 1, it->dp->nrows - 1);
}

static const kv_cell *it_cell(kv_iter *base) { return &((sf_iter *)base)->cur; }

static int it_status(kv_iter *base) { return ((sf_iter *)base)->status; }

static void it_destroy(kv_iter *base) {
  sf_iter *it = (sf_iter *)base;
  if (!it) return;
  kv_sfbuf_free(&it->disk);
  kv_sfbuf_free(&it->scratch);
  drop_current(it);
  kv_sf_dblock_free(&it->d);
  free(it->keep);
  free(it->zkeep);
  kv_sfbuf_free(&it->wbuf);
  kv_sfbuf_free(&it->wbuf2);
  free(it);
}

static const kv_iter_ops sf_iter_ops = {
  it_valid, it_seek_first, it_seek_last, it_seek, it_seek_for_prev,
  it_next, it_prev, it_cell, it_status, it_destroy,
};

kv_iter *kv_sf_iter_new(kv_sf_reader *r, kv_sf_io *io) {
  return kv_sf_iter_new_opts(r, io, true);
}

kv_iter *kv_sf_iter_new_opts(kv_sf_reader *r, kv_sf_io *io, bool fill_cache) {
  sf_iter *it = calloc(1, sizeof *it);
  if (!it) return NULL;
  it->fill_cache = fill_cache;
  it->base.ops = &sf_iter_ops;
  it->r = r;
  it->io = io;
  it->bi = -1;
  it->keep_bi = -1;
  it->dp = &it->d;
  return &it->base;
}

void kv_sf_iter_project(kv_iter *base, const uint8_t *const *quals, const uint32_t *lens,
                        uint32_t n) {
  sf_iter *it = (sf_iter *)base;
  it->pq = quals;
  it->pql = lens;
  it->npq = n;
  it->proj = true;
  it->keep_bi = -1;
}
