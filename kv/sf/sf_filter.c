/*
** kv/sf/sf_filter.c: the partitioned bloom filter (kv/sf/sf_filter.h; layout in
** docs/FORMAT.md Part 2, "Partitioned bloom filter"). The builder hashes nothing itself: the
** writer hands it each row's hash and tells it where blocks that start a new row begin;
** partitions close only there, so every row's hash lies in the partition whose first row
** is the last one at or below the row. A reader keeps the partition index (first row key,
** offset and length per partition: about 27 bytes and a key per 3,300 rows) instead of the
** filter's bits (1.25 bytes a row), and reads one partition per probe.
**
** Not here: the bloom filter's bits and probes (kv/util/bloom.c), the block cache
** (kv/util/cache.c), the single filter of small and older files (kv/sf/sf_read.c).
*/
#include <xxhash.h>
#include "kv/sf/sf_filter.h"
#include "kv/sf/sf_cblock.h"
#include "kv/util/bloom.h"
#include "kv/util/cache.h"
#include "kv/util/coding.h"
#include "kv/util/status.h"

#define PART_MIN 13u /* k, nbits, no bits, checksum: the smallest partition */

void kv_sf_fbuild_init(kv_sf_fbuild *f, uint32_t bits_per_key) {
  memset(f, 0, sizeof *f);
  f->bits = bits_per_key ? bits_per_key : 10;
  f->part_keys = KV_SF_FILTER_PART_BYTES * 8u / f->bits;
  if (f->part_keys == 0) f->part_keys = 1;
}

void kv_sf_fbuild_free(kv_sf_fbuild *f) {
  free(f->h);
  kv_sfbuf_free(&f->first);
  kv_sfbuf_free(&f->parts);
  kv_sfbuf_free(&f->pindex);
  memset(f, 0, sizeof *f);
}

/* Close the open partition: its filter and checksum go to parts, its entry to pindex. */
static int close_part(kv_sf_fbuild *f) {
  uint8_t *bits = NULL;
  size_t len = 0;
  if (kv_bloom_build(f->h, f->n, f->bits, &bits, &len)) return KV_ERR_NOMEM;
  uint8_t sum[8];
  kv_put_u64le(sum, XXH3_64bits(bits, len));
  size_t parts_len = f->parts.len, pindex_len = f->pindex.len; /* restored on failure */
  int rc = kv_sfbuf_append(&f->parts, bits, len) || kv_sfbuf_append(&f->parts, sum, 8) ||
                   kv_sfbuf_varint(&f->pindex, len + 8) ||
                   kv_sfbuf_varint(&f->pindex, f->first.len) ||
                   kv_sfbuf_append(&f->pindex, f->first.p, f->first.len)
               ? KV_ERR_NOMEM
               : KV_OK;
  free(bits);
  if (rc) {
    f->parts.len = parts_len;
    f->pindex.len = pindex_len;
    return rc;
  }
  f->nparts++;
  f->n = 0;
  return KV_OK;
}

int kv_sf_fbuild_boundary(kv_sf_fbuild *f, const uint8_t *row, uint32_t len) {
  if (f->started && f->n < f->part_keys) return KV_OK;
  if (f->started && close_part(f)) return KV_ERR_NOMEM;
  f->first.len = 0;
  if (kv_sfbuf_append(&f->first, row, len)) {
    f->started = false; /* no partition without its first key: the writer has failed */
    return KV_ERR_NOMEM;
  }
  f->started = true;
  return KV_OK;
}

int kv_sf_fbuild_add(kv_sf_fbuild *f, const uint64_t *h, size_t n) {
  if (kv_sf_grow((void **)&f->h, &f->cap, f->n + n, sizeof *f->h)) return KV_ERR_NOMEM;
  memcpy(f->h + f->n, h, n * sizeof *h);
  f->n += n;
  return KV_OK;
}

int kv_sf_fbuild_finish(kv_sf_fbuild *f, uint8_t **single, size_t *single_len, uint8_t **tail,
                        size_t *tail_len) {
  *single = *tail = NULL;
  *single_len = *tail_len = 0;
  if (f->nparts == 0) return kv_bloom_build(f->h, f->n, f->bits, single, single_len);
  if (close_part(f)) return KV_ERR_NOMEM;
  kv_sfbuf t = {0};
  if (kv_sfbuf_varint(&t, f->nparts) || kv_sfbuf_append(&t, f->pindex.p, f->pindex.len) ||
      kv_sfbuf_reserve(&t, 4)) {
    kv_sfbuf_free(&t);
    return KV_ERR_NOMEM;
  }
  kv_put_u32le(t.p + t.len, (uint32_t)t.len);
  t.len += 4;
  *tail = t.p;
  *tail_len = t.len;
  return KV_OK;
}

/* ---- Reader side ---- */

static int bad(const kv_sf_reader *r, uint64_t off, const char *why) {
  return kv_error(KV_ERR_CORRUPT, "store file %s: bloom filter at offset %llu: %s", r->path,
                  (unsigned long long)off, why);
}

/* The section's checksum, its bytes read a chunk at a time (not mapped: they would count
** in the process's resident memory; not kept). */
static int check_sum(const kv_sf_reader *r, uint64_t off, uint64_t size, uint64_t sum) {
  enum { CHUNK = 256 * 1024 };
  uint8_t *buf = malloc(CHUNK);
  XXH3_state_t *st = XXH3_createState();
  int rc = buf && st ? KV_OK : kv_error(KV_ERR_NOMEM, "out of memory opening store file %s",
                                        r->path);
  if (rc == KV_OK) XXH3_64bits_reset(st);
  for (uint64_t at = 0; rc == KV_OK && at < size;) {
    size_t n = size - at < CHUNK ? (size_t)(size - at) : CHUNK;
    rc = kv_sf_read_at(r, off + at, buf, n);
    if (rc == KV_OK) XXH3_64bits_update(st, buf, n);
    at += n;
  }
  if (rc == KV_OK && XXH3_64bits_digest(st) != sum) rc = bad(r, off, "checksum mismatch");
  XXH3_freeState(st);
  free(buf);
  return rc;
}

int kv_sf_filter_open(kv_sf_reader *r, uint64_t off, uint64_t size, uint64_t sum) {
  if (size < 4 + 1 + 2 * PART_MIN) return bad(r, off, "partitioned filter too short");
  int rc = check_sum(r, off, size, sum);
  if (rc) return rc;
  uint8_t t4[4];
  if ((rc = kv_sf_read_at(r, off + size - 4, t4, 4))) return rc;
  uint64_t plen = kv_get_u32le(t4);
  if (plen == 0 || plen > size - 4 - 2 * PART_MIN)
    return bad(r, off + size - 4, "partition index length out of range");
  uint64_t poff = off + size - 4 - plen;
  if (!(r->fpart_buf = malloc(plen)))
    return kv_error(KV_ERR_NOMEM, "out of memory opening store file %s", r->path);
  r->fpart_len = plen;
  if ((rc = kv_sf_read_at(r, poff, r->fpart_buf, plen))) return rc;
  const uint8_t *p = r->fpart_buf, *end = p + plen;
  uint64_t n = 0;
  if (!(p = kv_get_varint(p, end, &n)) || n < 2 || n > (poff - off) / PART_MIN || n > plen / 2)
    return bad(r, poff, "bad partition count");
  if (!(r->fparts = calloc(n, sizeof *r->fparts)))
    return kv_error(KV_ERR_NOMEM, "out of memory opening store file %s", r->path);
  uint64_t at = off;
  for (uint64_t i = 0; i < n; i++) {
    uint64_t psize = 0, klen = 0;
    const uint8_t *e = p;
    if (!(p = kv_get_varint(p, end, &psize)) || !(p = kv_get_varint(p, end, &klen)) ||
        klen > (uint64_t)(end - p) || klen > KV_MAX_ROW_KEY)
      return bad(r, poff + (uint64_t)(e - r->fpart_buf), "partition entry cut short");
    if (psize < PART_MIN || psize > UINT32_MAX || psize > poff - at)
      return bad(r, poff + (uint64_t)(e - r->fpart_buf), "partition size out of range");
    kv_sf_fpart *fp = &r->fparts[i];
    fp->off = at;
    fp->len = (uint32_t)psize;
    fp->key = p;
    fp->key_len = (uint32_t)klen;
    if (i > 0 && kv_sf_bytes_cmp(fp[-1].key, fp[-1].key_len, fp->key, fp->key_len) >= 0)
      return bad(r, poff + (uint64_t)(e - r->fpart_buf), "partition keys out of order");
    p += klen;
    at += psize;
  }
  if (p != end || at != poff) return bad(r, poff, "partitions do not fill the section");
  r->nfparts = (uint32_t)n;
  return KV_OK;
}

/* A partition's answer for hash h, its bytes (filter, then checksum) in b. */
static bool part_says(const uint8_t *b, uint32_t len, uint64_t h) {
  size_t blen = len - 8;
  return !kv_bloom_valid(b, blen) || kv_bloom_may_contain(b, blen, h);
}

bool kv_sf_filter_may_contain(const kv_sf_reader *r, const uint8_t *row, uint32_t len) {
  uint32_t lo = 0, hi = r->nfparts; /* the first partition whose first row is above row */
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo) / 2;
    if (kv_sf_bytes_cmp(r->fparts[mid].key, r->fparts[mid].key_len, row, len) <= 0) lo = mid + 1;
    else hi = mid;
  }
  const kv_sf_fpart *fp = &r->fparts[lo ? lo - 1 : 0];
  uint64_t h = kv_bloom_hash(row, len);
  if (r->map && fp->off + fp->len <= r->map_len) /* checked at open with the section */
    return part_says(r->map + fp->off, fp->len, h);
  uint64_t key = KV_CACHE_META | fp->off; /* counted apart from blocks */
  kv_cache_entry *e = r->cache ? kv_cache_lookup(r->cache, r->cache_id, key) : NULL;
  if (e) {
    bool yes = part_says(kv_cache_value(e), fp->len, h);
    kv_cache_release(r->cache, e);
    return yes;
  }
  uint8_t *b = malloc(fp->len);
  size_t got = 0;
  if (!b) return true;
  if (r->env->read(r->file, fp->off, b, fp->len, &got) != KV_OK || got != fp->len ||
      XXH3_64bits(b, fp->len - 8) != kv_get_u64le(b + fp->len - 8)) {
    free(b); /* (an env error keeps its message: the block read that follows reports) */
    return true;
  }
  bool yes = part_says(b, fp->len, h);
  e = r->cache ? kv_cache_insert(r->cache, r->cache_id, key, b, fp->len, free) : NULL;
  if (e) kv_cache_release(r->cache, e);
  else free(b);
  return yes;
}
