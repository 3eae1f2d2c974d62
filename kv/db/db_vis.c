/*
** kv/db/db_vis.c: the visibility rules of kv.h for the cells of one (row, family), applied
** in cell order by scans and by major compaction alike, so that both agree on what a read
** sees. Fed one cell at a time (row key ascending, qualifier ascending, timestamp
** descending, sequence number descending), it remembers the tombstones met and decides for
** each put, in this order:
**   1. invisible if its sequence number is above the snapshot, or its timestamp above the
**      read's as-of time (tombstones too);
**   2. masked by a DeleteFamily of the row (ts <= T), a DeleteColumn of the column
**      (ts <= T) or a DeleteVersion of the column (ts == T) with a higher sequence number:
**      a tombstone never masks a put written after it, even at an equal timestamp;
**   3. replaced by a newer put of the same column at the same timestamp (one version);
**   4. beyond the family's VERSIONS (counting the versions that passed 2 and 3);
**   5. expired (TTL: now - ts >= ttl);
**   6. outside the time range [ts_min, ts_max);
**   7. beyond the read's max_versions (counting versions that passed 1-6).
** Tombstones are found before what they mask because they sort first at an equal
** timestamp (higher sequence number) or at a higher timestamp. No allocation per cell:
** buffers grow and are reused across rows.
*/
#include <stdlib.h>
#include <string.h>

#include "kv/db/db_impl.h"

void kv_vis_init(kv_vis *v) {
  memset(v, 0, sizeof *v);
  v->snapshot = UINT64_MAX;
  v->versions = 1;
  v->ts_min = INT64_MIN;
  v->ts_max = INT64_MAX;
  v->max_versions = 1;
  v->as_of = INT64_MAX;
}

void kv_vis_free(kv_vis *v) {
  free(v->fam_dels);
  free(v->col_dels);
  free(v->ver_dels);
  free(v->qual);
  v->fam_dels = v->col_dels = v->ver_dels = NULL;
  v->qual = NULL;
}

void kv_vis_row_start(kv_vis *v) {
  v->n_fam_dels = 0;
  v->n_col_dels = 0;
  v->n_ver_dels = 0;
  v->have_qual = false;
}

static void push_del(kv_vis *v, kv_vis_del **arr, uint32_t *n, uint32_t *cap,
                     const kv_cell *c) {
  if (*n == *cap) {
    uint32_t nc = *cap ? *cap * 2 : 8;
    kv_vis_del *na = realloc(*arr, nc * sizeof *na);
    if (!na) {
      v->err = KV_ERR_NOMEM;
      return;
    }
    *arr = na;
    *cap = nc;
  }
  (*arr)[*n].ts = c->ts;
  (*arr)[*n].seq = c->seq;
  (*n)++;
}

static void start_column(kv_vis *v, const kv_cell *c) {
  if (c->qual_len > v->qual_cap) {
    uint32_t nc = c->qual_len < 64 ? 64 : c->qual_len;
    uint8_t *nq = realloc(v->qual, nc);
    if (!nq) {
      v->err = KV_ERR_NOMEM;
      return;
    }
    v->qual = nq;
    v->qual_cap = nc;
  }
  if (c->qual_len) memcpy(v->qual, c->qual, c->qual_len);
  v->qual_len = c->qual_len;
  v->have_qual = true;
  v->n_col_dels = 0;
  v->n_ver_dels = 0;
  v->have_last_ts = false;
  v->rank = 0;
  v->handed = 0;
}

/* a[0..n) == b[0..n); qualifiers are a byte or two, so no call to memcmp for those. */
static inline bool same_qual(const uint8_t *a, const uint8_t *b, uint32_t n) {
  if (n <= 2) return n == 0 || (a[0] == b[0] && (n == 1 || a[1] == b[1]));
  return memcmp(a, b, n) == 0;
}

bool kv_vis_cell(kv_vis *v, const kv_cell *c) {
  if (c->seq > v->snapshot || c->ts > v->as_of) return false;
  if (!v->have_qual || c->qual_len != v->qual_len || !same_qual(c->qual, v->qual, c->qual_len))
    start_column(v, c);
  switch (c->type) {
  case KV_DELETE_FAMILY:
    push_del(v, &v->fam_dels, &v->n_fam_dels, &v->cap_fam_dels, c);
    return false;
  case KV_DELETE_COLUMN:
    push_del(v, &v->col_dels, &v->n_col_dels, &v->cap_col_dels, c);
    return false;
  case KV_DELETE_VERSION:
    push_del(v, &v->ver_dels, &v->n_ver_dels, &v->cap_ver_dels, c);
    return false;
  case KV_PUT:
    break;
  default:
    return false;
  }
  for (uint32_t i = 0; i < v->n_fam_dels; i++)
    if (c->ts <= v->fam_dels[i].ts && c->seq < v->fam_dels[i].seq) return false;
  for (uint32_t i = 0; i < v->n_col_dels; i++)
    if (c->ts <= v->col_dels[i].ts && c->seq < v->col_dels[i].seq) return false;
  for (uint32_t i = 0; i < v->n_ver_dels; i++)
    if (c->ts == v->ver_dels[i].ts && c->seq < v->ver_dels[i].seq) return false;
  if (v->have_last_ts && c->ts == v->last_ts) return false;
  v->have_last_ts = true;
  v->last_ts = c->ts;
  if (++v->rank > v->versions) return false;
  if (v->ttl_ms > 0 && v->now_ms - c->ts >= v->ttl_ms) return false;
  if (c->ts < v->ts_min || c->ts >= v->ts_max) return false;
  if (++v->handed > v->max_versions) return false;
  return true;
}
