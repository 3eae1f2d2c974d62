/*
** kv/db/qualset.c: the sorted qualifier set of kv/db/qualset.h (the qualifiers a major
** compaction drops). Not here: where the sets live (kv_fam) or are used (kv/db/compact.c).
*/
#include "kv/db/qualset.h"

#include <stdlib.h>
#include <string.h>

#include "kv/util/cell.h"

typedef struct qref {
  const uint8_t *p; /* bytes */
  uint32_t n;       /* length */
} qref;

static int qref_cmp(const void *a, const void *b) {
  const qref *x = a, *y = b;
  return kv_bytes_cmp(x->p, x->n, y->p, y->n);
}

bool kv_qualset_build(kv_qualset *s, const uint8_t *const *quals, const uint32_t *lens,
                      uint32_t n) {
  memset(s, 0, sizeof *s);
  if (n == 0) return true;
  qref *r = malloc(n * sizeof *r);
  size_t total = 0;
  if (!r) return false;
  for (uint32_t i = 0; i < n; i++) {
    r[i].p = quals[i];
    r[i].n = lens[i];
    total += lens[i];
  }
  qsort(r, n, sizeof *r, qref_cmp);
  s->bytes = malloc(total ? total : 1);
  s->off = malloc((n + 1) * sizeof *s->off);
  if (!s->bytes || !s->off) {
    free(r);
    kv_qualset_free(s);
    return false;
  }
  uint32_t at = 0;
  s->off[0] = 0;
  for (uint32_t i = 0; i < n; i++) {
    if (i > 0 && qref_cmp(&r[i], &r[i - 1]) == 0) continue;
    memcpy(s->bytes + at, r[i].p, r[i].n);
    at += r[i].n;
    s->off[++s->n] = at;
  }
  free(r);
  return true;
}

bool kv_qualset_copy(kv_qualset *dst, const kv_qualset *src) {
  memset(dst, 0, sizeof *dst);
  if (!src || src->n == 0) return true;
  size_t total = src->off[src->n];
  dst->bytes = malloc(total ? total : 1);
  dst->off = malloc((src->n + 1) * sizeof *dst->off);
  if (!dst->bytes || !dst->off) {
    kv_qualset_free(dst);
    return false;
  }
  memcpy(dst->bytes, src->bytes, total);
  memcpy(dst->off, src->off, (src->n + 1) * sizeof *dst->off);
  dst->n = src->n;
  return true;
}

bool kv_qualset_has(const kv_qualset *s, const uint8_t *q, uint32_t len) {
  uint32_t lo = 0, hi = s->n;
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo) / 2;
    int c = kv_bytes_cmp(s->bytes + s->off[mid], s->off[mid + 1] - s->off[mid], q, len);
    if (c == 0) return true;
    if (c < 0) lo = mid + 1;
    else hi = mid;
  }
  return false;
}

void kv_qualset_free(kv_qualset *s) {
  free(s->bytes);
  free(s->off);
  memset(s, 0, sizeof *s);
}
