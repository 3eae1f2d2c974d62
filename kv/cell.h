/*
** kv/cell.h: the internal cell and its total order, shared by the memstore, store files,
** WAL replay, scans and compaction.
**
** Order within a family: row key ascending (unsigned bytes, a prefix first), qualifier
** ascending, timestamp descending, sequence number descending (newest write first), then
** type descending (so at an equal sequence number, as in a bulk-loaded file, a tombstone
** comes before the put it masks). DESIGN.md, "kv/". This header does no I/O.
*/
#ifndef ROWAN_KV_CELL_H
#define ROWAN_KV_CELL_H

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

/* Unsigned byte comparison, a prefix sorting first. */
static inline int kv_bytes_cmp(const uint8_t *a, size_t alen, const uint8_t *b, size_t blen) {
  size_t n = alen < blen ? alen : blen;
  int c = n ? memcmp(a, b, n) : 0;
  if (c) return c;
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

#endif /* ROWAN_KV_CELL_H */
