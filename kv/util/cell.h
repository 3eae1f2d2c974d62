/*
** kv/util/cell.h: the internal cell and its total order, shared by the memstore, store files,
** WAL replay, scans and compaction.
**
** Order within a family: row key ascending (unsigned bytes, a prefix first), qualifier
** ascending, timestamp descending, sequence number descending (newest write first), then
** type descending (so at an equal sequence number, as in a bulk-loaded file, a tombstone
** comes before the put it masks). DESIGN.md, "kv/". This header does no I/O.
*/
#ifndef ROWAN_KV_CELL_H
#define ROWAN_KV_CELL_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include "kv/kv.h"

typedef struct kv_cell {
  const uint8_t *row;   /* row key bytes */
  uint32_t row_len;     /* row key length */
  const uint8_t *qual;  /* qualifier bytes (empty for KV_DELETE_FAMILY) */
  uint32_t qual_len;    /* qualifier length */
  int64_t ts;           /* timestamp, ms since the Unix epoch */
  uint64_t seq;         /* sequence number of the write */
  uint8_t type;         /* enum kv_cell_type */
  const uint8_t *value; /* value bytes (puts only) */
  uint32_t value_len;   /* value length */
} kv_cell;

/* 8 bytes at p as a big-endian number (so unsigned byte order is numeric order). */
static inline uint64_t kv_load_be64(const uint8_t *p) {
  uint64_t v;
  memcpy(&v, p, 8);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
  return v;
#else
  return __builtin_bswap64(v);
#endif
}

/* Unsigned byte comparison, a prefix sorting first: <0, 0, >0 (only the sign means
** anything). Keys of a few dozen bytes are compared 8 bytes at a time in line, not through
** memcmp: the memstore's insert and the WAL's same-row check compare short row keys and
** qualifiers millions of times, and a library call cost more than the comparison. The same
** pointer on both sides (the memstore's cells of one row share their key bytes) compares
** equal at once. */
static inline int kv_bytes_cmp(const uint8_t *a, size_t alen, const uint8_t *b, size_t blen) {
  size_t n = alen < blen ? alen : blen;
  if (a != b) {
    size_t i = 0;
    if (n > 64) { /* long keys: the library's vector loop */
      int c = memcmp(a, b, n);
      if (c) return c;
      i = n;
    }
    for (; i + 8 <= n; i += 8) {
      uint64_t x = kv_load_be64(a + i), y = kv_load_be64(b + i);
      if (x != y) return x < y ? -1 : 1;
    }
    for (; i < n; i++)
      if (a[i] != b[i]) return a[i] < b[i] ? -1 : 1;
  }
  return alen < blen ? -1 : (alen > blen ? 1 : 0);
}

/* The cell order described above: <0, 0, >0. */
static inline int kv_cell_cmp(const kv_cell *a, const kv_cell *b) {
  int c = kv_bytes_cmp(a->row, a->row_len, b->row, b->row_len);
  if (c) return c;
  c = kv_bytes_cmp(a->qual, a->qual_len, b->qual, b->qual_len);
  if (c) return c;
  if (a->ts != b->ts) return a->ts > b->ts ? -1 : 1;
  if (a->seq != b->seq) return a->seq > b->seq ? -1 : 1;
  if (a->type != b->type) return a->type > b->type ? -1 : 1;
  return 0;
}

/* The first row key after every key that begins with p[0 .. n), into out (*out_len bytes,
** at most n): p without its trailing 0xFF bytes, its last byte plus one. False when there is
** none (p is empty or all 0xFF). Used to skip past a key prefix (skip scans, the columnar
** aggregate's block skipping). */
static inline bool kv_key_prefix_end(const uint8_t *p, uint32_t n, uint8_t *out,
                                     uint32_t *out_len) {
  while (n > 0 && p[n - 1] == 0xFF) n--;
  if (n == 0) return false;
  memcpy(out, p, n);
  out[n - 1]++;
  *out_len = n;
  return true;
}

#endif /* ROWAN_KV_CELL_H */
