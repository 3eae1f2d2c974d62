/*
** planner/salt.c: EXPLAIN's view of a salted table's scan (contract in planner/salt.h).
** Reads the plan only.
*/
#include "planner/salt.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalog/salt.h"

/* The salt buckets of what sc reads (a salted table's rows, or a salted index's), 0 when it
** is not salted or reads nothing. */
static int buckets_of(const plan_scan *sc) {
  if (!sc->table || sc->ranges.kind == PLAN_SCAN_NOTHING) return 0;
  return sc->index ? sc->index->salt_buckets : sc->table->salt_buckets;
}
static bool salted(const plan_scan *sc) { return buckets_of(sc) > 0; }

int plan_salt_chunks(const plan_scan *sc) {
  if (!salted(sc)) return 0;
  int nb = buckets_of(sc);
  if (sc->ranges.kind != PLAN_SCAN_POINT) return nb;
  bool seen[CAT_SALT_MAX] = {false};
  int n = 0;
  for (uint32_t i = 0; i < sc->ranges.n_ranges; i++) {
    const plan_key_range *r = &sc->ranges.ranges[i];
    uint8_t b = cat_salt_byte(r->start, r->start_len, nb);
    if (!seen[b]) n++;
    seen[b] = true;
  }
  return n;
}

char *plan_salt_bounds(const plan_scan *sc) {
  const char *e = sc->ranges.explain;
  int kind = sc->ranges.kind;
  if (!salted(sc) || !e || !e[0] || (kind != PLAN_SCAN_RANGE && kind != PLAN_SCAN_SKIP))
    return NULL;
  const char *last = NULL; /* the last bound: after the last " .. " */
  for (const char *p = strstr(e, " .. "); p; p = strstr(p + 4, " .. ")) last = p + 4;
  if (!last) return NULL;
  char lo[16], hi[16];
  snprintf(lo, sizeof lo, "0, ");
  snprintf(hi, sizeof hi, "%d, ", buckets_of(sc) - 1);
  size_t n = strlen(e) + strlen(lo) + strlen(hi) + 1;
  char *out = malloc(n);
  if (!out) return NULL;
  size_t at = (size_t)(last - e) + 1; /* after the last bound's bracket */
  snprintf(out, n, "%c%s%.*s%s%s", e[0], lo, (int)(at - 1), e + 1, hi, e + at);
  return out;
}

int plan_salt_estimate(kv_backend *be, const plan_scan *sc, uint32_t family, const kv_range *r,
                       const kv_estimate_opts *o, uint64_t *rows, uint64_t *bytes) {
  if (!salted(sc)) return kv_be_estimate(be, family, r, o, rows, bytes);
  int nb = buckets_of(sc);
  uint32_t b0 = 0, b1 = (uint32_t)nb;
  if (r && sc->ranges.kind == PLAN_SCAN_POINT) {
    b0 = cat_salt_point_bucket(r, nb);
    b1 = b0 + 1;
  }
  uint8_t *buf = malloc((r ? r->start_len + r->end_len : 0) + 4);
  if (!buf) return KV_ERR_NOMEM;
  *rows = *bytes = 0;
  int rc = KV_OK;
  for (uint32_t b = b0; b < b1 && rc == KV_OK; b++) {
    kv_range part;
    uint8_t *at = buf;
    cat_salt_range((uint8_t)b, r, &part, &at);
    uint64_t pr = 0, pb = 0;
    rc = kv_be_estimate(be, family, &part, o, &pr, &pb);
    *rows += pr;
    *bytes += pb;
  }
  free(buf);
  return rc;
}
