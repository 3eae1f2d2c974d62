/*
** kv/colscan_keys.c: the key ranges of the columnar aggregate scan (kv/colscan.h
** kv_colagg_spec.ranges and .skip): whether one row key lies in them (kv_colagg_key_in, the
** check applied to every row of a keyed scan and by the caller to its fallback rows) and
** whether a span of keys may (kv_cs_span_may_match: blocks wholly outside are not read).
** The rules are kv_scan_options' (kv/kv.h): a NULL bound is open, a range's bounds are
** inclusive or not as flagged, and a skip scan's suffix range i for prefix p is
** [p + start_i, p + end_i) after normalization, which for a key beginning with p is the key's
** bytes after p compared with the bounds (kv/scan_skip.c builds the same ranges to seek).
** Not here: the block walk that decodes the keys (kv/colscan_block.c).
*/
#include <string.h>

#include "kv/colscan_int.h"

/* k at or after r's start / at or before r's end (open bounds hold). */
static bool after_start(const kv_range *r, const uint8_t *k, uint32_t n) {
  if (!r->start) return true;
  int c = kv_cs_key_cmp(k, n, r->start, (uint32_t)r->start_len);
  return c > 0 || (c == 0 && r->start_inclusive);
}
static bool before_end(const kv_range *r, const uint8_t *k, uint32_t n) {
  if (!r->end) return true;
  int c = kv_cs_key_cmp(k, n, r->end, (uint32_t)r->end_len);
  return c < 0 || (c == 0 && r->end_inclusive);
}

/* The first of the sorted, disjoint ranges rs[0..n) whose end k is not past (n: none). */
static uint32_t first_not_ended(const kv_range *rs, uint32_t n, const uint8_t *k, uint32_t kn) {
  uint32_t lo = 0, hi = n;
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo) / 2;
    if (before_end(&rs[mid], k, kn)) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

/* Some key in [lo, hi] may lie in one of rs[0..n). */
static bool span_in(const kv_range *rs, uint32_t n, const uint8_t *lo, uint32_t lo_len,
                    const uint8_t *hi, uint32_t hi_len) {
  uint32_t i = first_not_ended(rs, n, lo, lo_len);
  return i < n && after_start(&rs[i], hi, hi_len);
}

bool kv_colagg_key_in(const kv_colagg_spec *sp, const uint8_t *k, uint32_t n) {
  if (sp->n_ranges) {
    uint32_t i = first_not_ended(sp->ranges, sp->n_ranges, k, n);
    if (i == sp->n_ranges || !after_start(&sp->ranges[i], k, n)) return false;
  }
  const kv_skip_prefix *x = sp->skip;
  if (x) {
    uint32_t p = x->prefix_len(x->ctx, k, n);
    if (p == 0 || p > n) return false; /* no prefix: the row way refuses such a key too */
    if (x->n_suffixes) {
      uint32_t i = first_not_ended(x->suffixes, x->n_suffixes, k + p, n - p);
      if (i == x->n_suffixes || !after_start(&x->suffixes[i], k + p, n - p)) return false;
    }
  }
  return true;
}

bool kv_cs_span_may_match(const kv_colagg_spec *sp, const uint8_t *lo, uint32_t lo_len,
                          const uint8_t *hi, uint32_t hi_len) {
  if (sp->n_ranges && !span_in(sp->ranges, sp->n_ranges, lo, lo_len, hi, hi_len)) return false;
  const kv_skip_prefix *x = sp->skip;
  if (x && x->n_suffixes) { /* both ends under one prefix: so is every key between them */
    uint32_t p = x->prefix_len(x->ctx, lo, lo_len);
    if (p && p <= lo_len && p <= hi_len && x->prefix_len(x->ctx, hi, hi_len) == p &&
        memcmp(lo, hi, p) == 0)
      return span_in(x->suffixes, x->n_suffixes, lo + p, lo_len - p, hi + p, hi_len - p);
  }
  return true;
}
