/*
** kv/sf/sf_read.c: opening a store file (kv/sf/sf.h): the file is mapped read-only when the env
** can (point and short range reads then read their blocks in place, kv_sf_bytes_at); the
** trailer, the bloom filter and the block index are read with single preads, checked
** (lengths, XXH3-64 checksums, offsets, counts, key order) and kept in memory for the
** reader's life (a partitioned filter, format version 4: only its partition index,
** kv/sf/sf_filter.c; a mapped file whose whole index would pass the caller's budget
** (kv_sf_open_budget): its index checked in the mapping and only a page table kept,
** kv/sf/sf_index.c); plus the file's properties, key range, bloom probe and the search for
** a key's block (kv_sf_find_block, over the fence built here). The planner's estimates are
** kv/sf/sf_estimate.c; iterating the cells is kv/sf/sf_iter.c. Layout: docs/FORMAT.md
** Part 2.
**
** Any damage found here is KV_ERR_CORRUPT with a message naming the file and the offset of
** the damaged section. Data blocks are not read at open.
*/
#include <stdio.h>
#include <xxhash.h>
#include "kv/util/bloom.h"
#include "kv/util/coding.h"
#include "kv/sf/sf_cblock.h"
#include "kv/sf/sf_filter.h"
#include "kv/sf/sf_int.h"
#include "kv/util/status.h"

#define MAX_SECTION (1ull << 31) /* largest bloom or index section a reader accepts */

int kv_sf_read_at(const kv_sf_reader *r, uint64_t off, void *buf, size_t n) {
  size_t got = 0;
  int rc = r->env->read(r->file, off, buf, n, &got);
  if (rc) return rc;
  if (got != n)
    return kv_error(KV_ERR_CORRUPT, "store file %s: truncated: %zu of %zu bytes at offset %llu",
                    r->path, got, n, (unsigned long long)off);
  return KV_OK;
}

static uint64_t n_mapped; /* kv_sf_mapped_reads (atomic adds) */

uint64_t kv_sf_mapped_reads(void) { return __atomic_load_n(&n_mapped, __ATOMIC_RELAXED); }

int kv_sf_bytes_at(const kv_sf_reader *r, uint64_t off, size_t n, const uint8_t **out) {
  *out = NULL;
  if (!r->map || off > r->map_len || n > r->map_len - off)
    return kv_error(KV_ERR_CORRUPT, "store file %s: %zu bytes at offset %llu are not in its"
                    " %llu mapped bytes", r->path, n, (unsigned long long)off,
                    (unsigned long long)r->map_len);
  *out = r->map + off;
  __atomic_fetch_add(&n_mapped, 1, __ATOMIC_RELAXED);
  return KV_OK;
}

void kv_sf_close(kv_sf_reader *r) {
  if (!r) return;
  if (r->map) r->env->unmap(r->map, r->map_len);
  if (r->file) r->env->close(r->file);
  free(r->index);
  if (!r->index_mapped) free(r->index_buf);
  free(r->ipages);
  free(r->pfence);
  free(r->fence);
  free(r->fence_top);
  free(r->bloom);
  free(r->fparts);
  free(r->fpart_buf);
  free(r->path);
  free(r);
}

static int corrupt(const kv_sf_reader *r, uint64_t off, const char *what, const char *why) {
  return kv_error(KV_ERR_CORRUPT, "store file %s: %s at offset %llu: %s", r->path, what,
                  (unsigned long long)off, why);
}

/* Read a section [off, off+size) into a new buffer and check its checksum. */
static int read_section(kv_sf_reader *r, uint64_t off, uint64_t size, uint64_t sum,
                        const char *what, uint8_t **out) {
  uint8_t *p = malloc(size ? size : 1);
  if (!p) return kv_error(KV_ERR_NOMEM, "out of memory opening store file %s", r->path);
  int rc = kv_sf_read_at(r, off, p, size);
  if (!rc && XXH3_64bits(p, size) != sum) rc = corrupt(r, off, what, "checksum mismatch");
  if (rc) { free(p); return rc; }
  *out = p;
  return KV_OK;
}

/* The dense copy of the blocks' first row keys (sf_int.h, kv_sf_reader.fence); none when a
** key is too long or memory is short (the seek then searches the index entries). */
static void build_fence(kv_sf_reader *r) {
  uint32_t w = 0;
  uint8_t *f = kv_sf_dense_fence(r, r->index, sizeof *r->index,
                                 offsetof(kv_sf_index_entry, key), r->nblocks, &w);
  if (!f) return;
  size_t stride = (size_t)w + 1;
  uint32_t ntop = (r->nblocks + KV_SF_FENCE_STEP - 1) / KV_SF_FENCE_STEP;
  uint8_t *top = ntop > 1 ? malloc(ntop * stride) : NULL;
  if (top) {
    for (uint32_t j = 0; j < ntop; j++)
      memcpy(top + j * stride, f + (size_t)j * KV_SF_FENCE_STEP * stride, stride);
    r->fence_top = top;
    r->fence_ntop = ntop;
  }
  r->fence = f;
  r->fence_w = w;
}

/* The first block whose first row is at or above [row, row+len) (r->nblocks when none),
** from the dense fence (REQUIRES r->fence), its top level first; *eq tells whether that
** block's first row is the row itself. */
static uint32_t fence_lower_bound(const kv_sf_reader *r, const uint8_t *row, uint32_t len,
                                  bool *eq) {
  size_t stride = (size_t)r->fence_w + 1;
  uint32_t lo = 0, hi = r->nblocks;
  if (r->fence_top) { /* narrow [lo, hi] to one step of the top level first */
    uint32_t tl = 0, th = r->fence_ntop;
    while (tl < th) {
      uint32_t mid = tl + (th - tl) / 2;
      const uint8_t *f = r->fence_top + mid * stride;
      if (kv_sf_bytes_cmp(f + 1, f[0], row, len) < 0) tl = mid + 1;
      else th = mid;
    }
    /* fence entry tl * STEP is the first top one >= the row: the answer lies after the
       previous top entry and at or before it */
    if (tl > 0) lo = (tl - 1) * KV_SF_FENCE_STEP + 1;
    if (tl < r->fence_ntop) hi = tl * KV_SF_FENCE_STEP;
  }
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo) / 2;
    const uint8_t *f = r->fence + mid * stride;
    if (kv_sf_bytes_cmp(f + 1, f[0], row, len) < 0) lo = mid + 1;
    else hi = mid;
  }
  const uint8_t *f = r->fence + lo * stride;
  *eq = lo < r->nblocks && f[0] == len && kv_sf_bytes_cmp(f + 1, f[0], row, len) == 0;
  return lo;
}

/* Index of the last block whose first key is <= t, or -1 (sf_int.h). */
int64_t kv_sf_find_block(const kv_sf_reader *r, const kv_cell *t) {
  if ((r->fence || r->ipages) && t->qual_len == 0 && t->ts == INT64_MAX &&
      t->seq == UINT64_MAX && t->type == 255) {
    /* a row-start target sorts before every cell of its row: the last block whose first
       row is below t's row, found in the dense fence (a paged index: its pages' fences) */
    bool eq;
    uint32_t lo = r->ipages ? kv_sf_lower_bound_paged(r, t->row, t->row_len, &eq)
                            : fence_lower_bound(r, t->row, t->row_len, &eq);
    return (int64_t)lo - 1;
  }
  if (r->ipages) return kv_sf_find_block_paged(r, t);
  int64_t lo = 0, hi = (int64_t)r->nblocks - 1, ans = -1;
  while (lo <= hi) {
    int64_t mid = lo + (hi - lo) / 2;
    /* the row keys first, in place: the rest of the first cell is decoded only when the
       rows are equal */
    uint32_t len;
    const uint8_t *row = kv_sf_first_row(r, (uint64_t)mid, &len);
    int c = kv_bytes_cmp(row, len, t->row, t->row_len);
    if (c == 0) {
      kv_cell f;
      kv_sf_first_cell(r, (uint64_t)mid, &f);
      c = kv_cell_cmp(&f, t);
    }
    if (c <= 0) { ans = mid; lo = mid + 1; }
    else hi = mid - 1;
  }
  return ans;
}

uint32_t kv_sf_row_block(const kv_sf_reader *r, const uint8_t *row, uint32_t len) {
  if (r->fence || r->ipages) {
    bool eq;
    uint32_t lo = r->ipages ? kv_sf_lower_bound_paged(r, row, len, &eq)
                            : fence_lower_bound(r, row, len, &eq);
    /* block lo starts with the row: in a file of whole rows, the block before holds none
       of its cells */
    if (eq && r->rows_whole) return lo;
    return lo > 0 ? lo - 1 : 0;
  }
  kv_cell t = kv_cell_row_first(row, len);
  int64_t bk = kv_sf_find_block(r, &t);
  if (bk < 0) return 0;
  if (r->rows_whole && (uint64_t)bk + 1 < r->nblocks) {
    uint32_t nf_len;
    const uint8_t *nf_row = kv_sf_first_row(r, bk + 1, &nf_len);
    if (kv_sf_bytes_cmp(nf_row, nf_len, row, len) == 0) return (uint32_t)bk + 1;
  }
  return (uint32_t)bk;
}

size_t kv_sf_index_mem(const kv_sf_reader *r) {
  if (!r) return 0;
  size_t stride = (size_t)r->fence_w + 1;
  return (r->index ? (size_t)r->nblocks * sizeof *r->index : 0) +
         (r->index_mapped ? 0 : (size_t)r->index_len) +
         (size_t)r->nipages * sizeof *r->ipages +
         (r->pfence ? (size_t)r->nipages * (r->pfence_w + 1) : 0) +
         (r->fence ? (size_t)r->nblocks * stride : 0) +
         (r->fence_top ? (size_t)r->fence_ntop * stride : 0);
}

size_t kv_sf_reader_mem(const kv_sf_reader *r) {
  if (!r) return 0;
  return sizeof *r + kv_sf_index_mem(r) + r->bloom_len + (size_t)r->fpart_len +
         (size_t)r->nfparts * sizeof *r->fparts;
}

void kv_sf_first_cell(const kv_sf_reader *r, uint64_t i, kv_cell *out) {
  kv_sf_index_entry e = kv_sf_entry(r, i);
  kv_sf_cell_at(r, e.key, e.row_len, out);
}

void kv_sf_cell_at(const kv_sf_reader *r, uint32_t key, uint32_t row_len, kv_cell *out) {
  const uint8_t *p = r->index_buf + key, *lim = r->index_buf + r->index_len;
  uint64_t v = 0;
  memset(out, 0, sizeof *out);
  out->row = p;
  out->row_len = row_len;
  /* checked at open, so none fails; a paged index reads the mapping again, so a file
     changed since (kv/sf/sf_index.c) leaves the fields it cannot read zero, never a read
     outside the section */
  if (!(p = kv_get_varint(p + row_len, lim, &v)) || v > (uint64_t)(lim - p)) return;
  out->qual = p;
  out->qual_len = (uint32_t)v;
  if (!(p = kv_get_varint(p + v, lim, &v))) return;
  out->ts = kv_unzigzag(v);
  if (!(p = kv_get_varint(p, lim, &out->seq)) || p >= lim) return;
  out->type = *p;
}

#define UNNEED_STEP (1u << 20) /* bytes of a mapped index section checked between two unneeds */

/* Let the pages of the mapped index section [from, to) leave the resident set (env->unneed:
** a paged index's open reads its whole section once and then only the pages reads need). */
static void unneed(const kv_sf_reader *r, const uint8_t *from, const uint8_t *to) {
  if (r->index_mapped && r->env->unneed && to > from) r->env->unneed(from, (uint64_t)(to - from));
}

/* XXH3-64 of the first size bytes of the mapped index section, a step at a time (without
** memory for the hash state: the whole section at once). */
static uint64_t mapped_sum(const kv_sf_reader *r, uint64_t size) {
  XXH3_state_t *st = XXH3_createState();
  if (!st) return XXH3_64bits(r->index_buf, (size_t)size);
  XXH3_64bits_reset(st);
  for (uint64_t at = 0; at < size; at += UNNEED_STEP) {
    uint64_t n = size - at < UNNEED_STEP ? size - at : UNNEED_STEP;
    XXH3_64bits_update(st, r->index_buf + at, (size_t)n);
    unneed(r, r->index_buf + at, r->index_buf + at + n);
  }
  uint64_t h = XXH3_64bits_digest(st);
  XXH3_freeState(st);
  return h;
}

/* Decode and check the block index section: into r->index, or, paged (r->index_mapped),
** only a page table entry for every KV_SF_INDEX_PAGE-th block (every entry is checked
** alike). */
static int decode_index(kv_sf_reader *r, uint64_t index_off, uint64_t size,
                        uint64_t data_end) {
  const uint8_t *p = r->index_buf, *lim = p + size;
  uint64_t n, v, off = 0, cells = 0, rows = 0;
  const char *why = NULL;
  if (!(p = kv_get_varint(p, lim, &n)) || n != r->props.blocks) {
    why = "block count disagrees with the trailer";
    goto bad;
  }
  if (n > size) { why = "too many blocks"; goto bad; }
  bool paged = r->index_mapped;
  if (paged) {
    r->nipages = (uint32_t)((n + KV_SF_INDEX_PAGE - 1) / KV_SF_INDEX_PAGE);
    r->ipages = calloc(r->nipages ? r->nipages : 1, sizeof *r->ipages);
  } else {
    r->index = calloc(n ? n : 1, sizeof *r->index);
  }
  if (!r->index && !r->ipages)
    return kv_error(KV_ERR_NOMEM, "out of memory opening store file %s", r->path);
  r->index_len = size;
  kv_cell prev = {0}, cur = {0}; /* the entries' first cells, for the order check */
  const uint8_t *kept = p; /* a paged index: the section from here may be resident */
  for (uint64_t i = 0; i < n; i++) {
    kv_sf_index_entry one, *e = paged ? &one : &r->index[i];
    const uint8_t *at = p; /* the entry's start */
    if (paged && (size_t)(at - kept) >= UNNEED_STEP) {
      unneed(r, kept, at); /* (the previous entry, read again below, faults back) */
      kept = at;
    }
    uint64_t f[6];
    for (int j = 0; j < 6; j++) {
      if (!(p = kv_get_varint(p, lim, &f[j]))) { why = "truncated entry"; goto bad; }
    }
    /* f: offset, size, raw, cells, rows, row key length */
    if (f[0] != off) { why = "block offsets are not contiguous"; goto bad; }
    if (f[1] < KV_SF_BLOCK_OVERHEAD || f[1] > UINT32_MAX || f[0] + f[1] > data_end) {
      why = "block size out of range";
      goto bad;
    }
    if (f[2] > KV_SF_MAX_RAW_BLOCK || f[3] == 0 || f[3] > UINT32_MAX || f[4] == 0 ||
        f[4] > f[3] || f[5] > KV_MAX_ROW_KEY || f[5] > (uint64_t)(lim - p)) {
      why = "bad sizes or counts";
      goto bad;
    }
    e->off = f[0];
    e->size = (uint32_t)f[1];
    e->raw = (uint32_t)f[2];
    e->cells = (uint32_t)f[3];
    e->rows = (uint32_t)f[4];
    if ((uint64_t)(p - r->index_buf) > UINT32_MAX) { why = "section too large"; goto bad; }
    e->key = (uint32_t)(p - r->index_buf);
    e->row_len = (uint32_t)f[5];
    if (paged) {
      kv_sf_ipage *g = &r->ipages[i / KV_SF_INDEX_PAGE];
      if (i % KV_SF_INDEX_PAGE == 0) {
        g->sec = (uint32_t)(at - r->index_buf);
        g->key = e->key;
        g->row_len = e->row_len;
        g->w = 1;
      }
      if (g->w && e->row_len > KV_SF_FENCE_MAX) g->w = 0; /* as kv/sf/sf_index.c's */
      else if (g->w && e->row_len > g->w) g->w = e->row_len;
    }
    cur.row = p;
    cur.row_len = (uint32_t)f[5];
    p += f[5];
    if (!(p = kv_get_varint(p, lim, &v)) || v > KV_MAX_QUALIFIER || v > (uint64_t)(lim - p)) {
      why = "bad first qualifier";
      goto bad;
    }
    cur.qual = p;
    cur.qual_len = (uint32_t)v;
    p += v;
    if (!(p = kv_get_varint(p, lim, &v))) { why = "truncated entry"; goto bad; }
    cur.ts = kv_unzigzag(v);
    if (!(p = kv_get_varint(p, lim, &cur.seq)) || p >= lim || *p > KV_DELETE_FAMILY) {
      why = "truncated entry";
      goto bad;
    }
    cur.type = *p++;
    if (i > 0 && kv_cell_cmp(&prev, &cur) >= 0) {
      why = "first keys out of order";
      goto bad;
    }
    prev = cur;
    off += f[1];
    cells += f[3];
    rows += f[4];
  }
  if (off != data_end) { why = "blocks do not end where the bloom filter starts"; goto bad; }
  if (cells != r->props.cells) { why = "cell count disagrees with the trailer"; goto bad; }
  if (!(p = kv_get_varint(p, lim, &v)) || v > KV_MAX_ROW_KEY || v != (uint64_t)(lim - p)) {
    why = "bad last row key";
    goto bad;
  }
  r->last_row = p;
  r->last_row_len = (uint32_t)v;
  if (n && kv_bytes_cmp(prev.row, prev.row_len, p, (uint32_t)v) > 0) {
    why = "last row key before the last block's first key";
    goto bad;
  }
  r->nblocks = (uint32_t)n;
  /* a row with cells in k blocks counts in each block's rows and once in the trailer's:
     equal sums mean no row continues into a next block */
  r->rows_whole = rows == r->props.rows;
  if (paged) { /* searched a page, then within the page */
    r->uid = kv_sf_new_uid();
    kv_sf_build_page_fence(r);
    unneed(r, r->index_buf, r->index_buf + size);
  } else {
    build_fence(r);
  }
  return KV_OK;
bad:
  return corrupt(r, index_off + (uint64_t)(p ? p - r->index_buf : 0), "block index", why);
}

/* Note a failed section check of a salvage open: keep the message, clear the error. */
static void sv_note(char *dst, size_t cap) {
  snprintf(dst, cap, "%s", kv_errmsg());
}

/* kv_sf_open, and with sv given its salvage form (kv/sf/sf_int.h, kv_sf_open_salvage): a
** damaged trailer, bloom filter or block index is noted in *sv and opening goes on without
** it. */
static int open_impl(kv_env *env, const char *path, uint64_t keep_max, kv_sf_reader **out,
                     kv_sf_salvage_info *sv) {
  *out = NULL;
  if (!env || !path) return kv_error(KV_MISUSE, "kv_sf_open: NULL env or path");
  kv_sf_reader *r = calloc(1, sizeof *r);
  if (!r || !(r->path = strdup(path))) {
    free(r);
    return kv_error(KV_ERR_NOMEM, "out of memory opening store file %s", path);
  }
  r->env = env;
  uint64_t size = 0;
  int rc = env->open(env, path, KV_OPEN_READ, &r->file);
  if (!rc) rc = env->size(r->file, &size);
  if (rc) goto fail;
  if (sv) {
    memset(sv, 0, sizeof *sv);
    sv->file_size = sv->data_end = size;
  }
  if (size < KV_SF_TRAILER_SIZE) {
    rc = corrupt(r, 0, "file", "too short for a trailer");
    goto fail;
  }
  /* reads without a copy where the env maps files; a refused mapping (no address space,
     a file system without mmap) only means reads go through pread */
  if (!sv && env->map && env->unmap && env->map(r->file, size, &r->map) == KV_OK) r->map_len = size;
  else r->map = NULL;
  uint8_t t[KV_SF_TRAILER_SIZE];
  uint64_t toff = size - KV_SF_TRAILER_SIZE;
  if ((rc = kv_sf_read_at(r, toff, t, sizeof t))) goto fail;
  if (kv_get_u64le(t) != KV_SF_MAGIC) { rc = corrupt(r, toff, "trailer", "bad magic"); goto fail; }
  if (XXH3_64bits(t, 128) != kv_get_u64le(t + 128)) {
    rc = corrupt(r, toff, "trailer", "checksum mismatch");
    goto fail;
  }
  uint32_t version = kv_get_u32le(t + 8);
  if (version < KV_SF_FORMAT_VERSION_MIN || version > KV_SF_FORMAT_VERSION) {
    rc = corrupt(r, toff, "trailer", "unsupported format version");
    goto fail;
  }
  uint64_t index_off = kv_get_u64le(t + 16), index_size = kv_get_u64le(t + 24);
  uint64_t bloom_off = kv_get_u64le(t + 32), bloom_size = kv_get_u64le(t + 40);
  kv_sf_props *pr = &r->props;
  pr->format_version = version;
  pr->file_size = size;
  pr->cells = kv_get_u64le(t + 64);
  pr->rows = kv_get_u64le(t + 72);
  pr->blocks = kv_get_u64le(t + 80);
  pr->raw_bytes = kv_get_u64le(t + 88);
  pr->min_seq = kv_get_u64le(t + 96);
  pr->max_seq = kv_get_u64le(t + 104);
  pr->min_ts = (int64_t)kv_get_u64le(t + 112);
  pr->max_ts = (int64_t)kv_get_u64le(t + 120);
  if (index_size > MAX_SECTION || bloom_size > MAX_SECTION || bloom_size > index_off ||
      index_off != bloom_off + bloom_size ||
      index_off > toff || index_off + index_size != toff || pr->blocks > pr->cells ||
      pr->rows > pr->cells) {
    rc = corrupt(r, toff, "trailer", "section offsets or counts out of range");
    goto fail;
  }
  if (sv) {
    sv->trailer_ok = true;
    sv->data_end = bloom_off;
  }
  if (version >= KV_SF_FORMAT_VERSION_PART) {
    rc = kv_sf_filter_open(r, bloom_off, bloom_size, kv_get_u64le(t + 56));
  } else if ((rc = read_section(r, bloom_off, bloom_size, kv_get_u64le(t + 56), "bloom filter",
                                &r->bloom)) == KV_OK) {
    r->bloom_len = bloom_size;
    if (!kv_bloom_valid(r->bloom, r->bloom_len))
      rc = corrupt(r, bloom_off, "bloom filter", "bad header");
  }
  if (rc && rc != KV_ERR_NOMEM && sv) {
    sv_note(sv->bloom_why, sizeof sv->bloom_why);
    free(r->bloom);
    r->bloom = NULL;
    r->bloom_len = 0;
    free(r->fparts);
    r->fparts = NULL;
    r->nfparts = 0;
    rc = KV_OK;
  } else if (sv) {
    sv->bloom_ok = rc == KV_OK;
  }
  if (rc) goto fail;
  r->index_off = index_off;
  /* the whole index's memory: entries, section, fence (about a row key a block) */
  uint64_t whole = index_size + pr->blocks * (sizeof *r->index + 32);
  if (r->map && pr->blocks > 0 && (pr->blocks >= kv_sf_paged_min() || whole > keep_max)) {
    /* a big file's index stays in the mapping, paged through the block cache
       (kv/sf/sf_index.c): the reader holds one page table entry per KV_SF_INDEX_PAGE blocks */
    r->index_buf = (uint8_t *)r->map + index_off;
    r->index_mapped = true;
    if (mapped_sum(r, index_size) != kv_get_u64le(t + 48))
      rc = corrupt(r, index_off, "block index", "checksum mismatch");
  } else {
    rc = read_section(r, index_off, index_size, kv_get_u64le(t + 48), "block index",
                      &r->index_buf);
  }
  if (rc == KV_OK) rc = decode_index(r, index_off, index_size, bloom_off);
  if (rc && rc != KV_ERR_NOMEM && sv) {
    sv_note(sv->index_why, sizeof sv->index_why);
    free(r->index);
    r->index = NULL;
    r->nblocks = 0;
    rc = KV_OK;
  } else if (sv) {
    sv->index_ok = rc == KV_OK;
  }
  if (rc) goto fail;
  *out = r;
  return KV_OK;
fail:
  if (sv && rc != KV_ERR_NOMEM && r->file && !sv->trailer_ok) {
    /* the trailer could not be read: the caller walks the blocks from offset 0 */
    sv_note(sv->trailer_why, sizeof sv->trailer_why);
    memset(&r->props, 0, sizeof r->props);
    r->props.file_size = size;
    *out = r;
    return KV_OK;
  }
  kv_sf_close(r);
  return rc;
}

int kv_sf_open(kv_env *env, const char *path, kv_sf_reader **out) {
  return open_impl(env, path, UINT64_MAX, out, NULL);
}

int kv_sf_open_budget(kv_env *env, const char *path, uint64_t keep_max, kv_sf_reader **out) {
  return open_impl(env, path, keep_max, out, NULL);
}

bool kv_sf_index_paged(const kv_sf_reader *r) { return r->ipages != NULL; }

int kv_sf_open_salvage(kv_env *env, const char *path, kv_sf_reader **out,
                       kv_sf_salvage_info *info) {
  kv_sf_salvage_info tmp;
  return open_impl(env, path, UINT64_MAX, out, info ? info : &tmp);
}

void kv_sf_set_cache(kv_sf_reader *r, struct kv_cache *cache, uint64_t file_id) {
  r->cache = cache;
  r->cache_id = file_id;
}

const kv_sf_props *kv_sf_get_props(const kv_sf_reader *r) { return &r->props; }

void kv_sf_key_range(const kv_sf_reader *r, const uint8_t **first, uint32_t *first_len,
                     const uint8_t **last, uint32_t *last_len) {
  if (r->nblocks == 0) {
    *first = *last = NULL;
    *first_len = *last_len = 0;
    return;
  }
  *first = kv_sf_first_row(r, 0, first_len);
  *last = r->last_row;
  *last_len = r->last_row_len;
}

bool kv_sf_may_contain_row(const kv_sf_reader *r, const uint8_t *row, uint32_t len) {
  if (r->nfparts) return kv_sf_filter_may_contain(r, row, len);
  return kv_bloom_may_contain(r->bloom, r->bloom_len, kv_bloom_hash(row, len));
}

