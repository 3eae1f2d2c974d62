/*
** kv/db/manifest_region.c: the MANIFEST's SET_REGIONS edit (docs/FORMAT.md "SET_REGIONS"):
** a table's region boundaries, checked, encoded, decoded and applied to a kv_table_meta.
** The boundaries are kept in their encoded form (len:varint key, once per boundary), so a
** copy of a version copies one buffer. Which files lie in which region, and cutting store
** files at the boundaries, is kv/db/db_region.c's business, not this file's.
*/
#include <stdlib.h>
#include <string.h>

#include "kv/db/manifest_int.h"
#include "kv/util/cell.h"
#include "kv/util/coding.h"
#include "kv/util/status.h"

const char *kv_mf_check_bounds(const uint8_t *p, size_t len, uint32_t n) {
  const uint8_t *q = p, *end = p + len, *prev = NULL;
  uint64_t prev_len = 0;
  for (uint32_t i = 0; i < n; i++) {
    uint64_t kl = 0;
    const uint8_t *k = kv_get_varint(q, end, &kl);
    if (!k) return "truncated region boundary";
    if (kl == 0 || kl > KV_MAX_ROW_KEY) return "region boundary of a bad length";
    if (kl > (uint64_t)(end - k)) return "truncated region boundary";
    if (prev && kv_bytes_cmp(prev, (uint32_t)prev_len, k, (uint32_t)kl) >= 0)
      return "region boundaries out of order";
    prev = k;
    prev_len = kl;
    q = k + kl;
  }
  return q == end ? NULL : "bytes after the last region boundary";
}

void kv_mf_get_regions(kv_mf_rbuf *r, kv_edit *e) {
  e->table_id = kv_mf_get_u32v(r);
  uint64_t n = kv_mf_get_var(r), len = kv_mf_get_var(r);
  if (r->bad) return;
  if (len > (uint64_t)(r->limit - r->p) || n > len) { r->bad = "bad region boundaries length"; return; }
  const char *why = kv_mf_check_bounds(r->p, (size_t)len, (uint32_t)n);
  if (why) { r->bad = why; return; }
  e->bounds = r->p;
  e->bounds_len = (uint32_t)len;
  e->n_bounds = (uint32_t)n;
  r->p += len;
}

void kv_mf_put_regions(kv_mf_wbuf *b, uint32_t table_id, const uint8_t *bounds, uint32_t len,
                       uint32_t n) {
  uint8_t tmp[40], *q = tmp;
  q = kv_put_varint(q, table_id);
  q = kv_put_varint(q, n);
  q = kv_put_varint(q, len);
  kv_mf_put_raw(b, tmp, (size_t)(q - tmp));
  kv_mf_put_raw(b, bounds, len);
}

int kv_mf_set_regions(kv_table_meta *t, const kv_edit *e) {
  if (!t) return kv_error(KV_ERR_NOTFOUND, "MANIFEST: no table with id %u", e->table_id);
  const char *why = e->n_bounds ? kv_mf_check_bounds(e->bounds, e->bounds_len, e->n_bounds)
                                : (e->bounds_len ? "bytes after the last region boundary" : NULL);
  if (why) return kv_error(KV_ERR_INVALID, "MANIFEST: SET_REGIONS of %s: %s", t->name, why);
  uint8_t *nb = NULL;
  if (e->bounds_len) {
    if (!(nb = malloc(e->bounds_len))) return kv_mf_nomem();
    memcpy(nb, e->bounds, e->bounds_len);
  }
  free(t->bounds);
  t->bounds = nb;
  t->bounds_len = e->bounds_len;
  t->n_bounds = e->n_bounds;
  return KV_OK;
}
