/*
** kv/colscan/colscan_keys.c: the key ranges of the columnar aggregate scan (kv/colscan/colscan.h
** kv_colagg_spec.ranges and .skip): whether one row key lies in them (kv_colagg_key_in, the
** check applied to every row of a keyed scan and by the caller to its fallback rows) and
** whether a span of keys may (kv_cs_span_may_match: blocks wholly outside are not read).
** The rules are kv_scan_options' (kv/kv.h): a NULL bound is open, a range's bounds are
** inclusive or not as flagged, and a skip scan's suffix range i for prefix p is
** [p + start_i, p + end_i) after normalization, which for a key beginning with p is the key's
** bytes after p compared with the bounds (kv/scan/scan_skip.c builds the same ranges to seek).
** When a block is ruled out, kv_cs_next_block finds the next block that may match with a
** binary search over the file's index (a skip scan over a large table seeks rather than
** testing every block).
** Not here: the block walk that decodes the keys (kv/colscan/colscan_block.c).
*/
#include <string.h>

#include "kv/util/cell.h"
#include "kv/colscan/colscan_int.h"
#include "kv/sf/sf_int.h"

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

bool kv_cs_key_in(const kv_colagg_spec *sp, const uint8_t *k, uint32_t n, const uint8_t **pp,
                  uint32_t *pl) {
  if (sp->n_ranges) {
    uint32_t i = first_not_ended(sp->ranges, sp->n_ranges, k, n);
    if (i == sp->n_ranges || !after_start(&sp->ranges[i], k, n)) return false;
  }
  const kv_skip_prefix *x = sp->skip;
  if (x) {
    uint32_t p;
    if (*pp && *pl <= n && memcmp(k, *pp, *pl) == 0) {
      p = *pl; /* the leading columns' encodings delimit themselves: the same prefix */
    } else {
      p = x->prefix_len(x->ctx, k, n);
      if (p == 0 || p > n) return false; /* no prefix: the row way refuses such a key too */
      *pp = k;
      *pl = p;
    }
    if (x->n_suffixes) {
      uint32_t i = first_not_ended(x->suffixes, x->n_suffixes, k + p, n - p);
      if (i == x->n_suffixes || !after_start(&x->suffixes[i], k + p, n - p)) return false;
    }
  }
  return true;
}

/* The first row of [lo, hi) (keys kb / ko) for which in(r, k) holds (hi: none), when it holds
** for every row after the first that does (rows in key order, a monotone test). */
#define FIRST_ROW(lo, hi, test) do {                                                     \
    uint32_t a_ = (lo), b_ = (hi);                                                        \
    while (a_ < b_) {                                                                     \
      uint32_t m_ = a_ + (b_ - a_) / 2;                                                   \
      const uint8_t *k = kb + ko[m_];                                                     \
      uint32_t kn = ko[m_ + 1] - ko[m_];                                                  \
      if (test) b_ = m_; else a_ = m_ + 1;                                                \
    }                                                                                     \
    found = a_;                                                                           \
  } while (0)

void kv_cs_rows_in(const kv_colagg_spec *sp, const uint8_t *kb, const uint32_t *ko,
                   uint32_t nrows, uint8_t *kin) {
  if (sp->skip || !sp->n_ranges) { /* row by row (a skip scan's prefix is found per key) */
    const uint8_t *pfx = NULL; /* the last skip-scan prefix seen, in kb */
    uint32_t pfx_len = 0;
    for (uint32_t r = 0; r < nrows; r++)
      kin[r] = kv_cs_key_in(sp, kb + ko[r], ko[r + 1] - ko[r], &pfx, &pfx_len);
    return;
  }
  /* key ranges alone: the rows in one range are a run, found with two binary searches */
  const kv_range *rs = sp->ranges;
  uint32_t n = sp->n_ranges;
  for (uint32_t r = 0, found = 0; r < nrows; r = found) {
    uint32_t i = first_not_ended(rs, n, kb + ko[r], ko[r + 1] - ko[r]);
    if (i == n) { /* past every range */
      memset(kin + r, 0, nrows - r);
      return;
    }
    bool in = after_start(&rs[i], kb + ko[r], ko[r + 1] - ko[r]);
    if (in) FIRST_ROW(r + 1, nrows, !before_end(&rs[i], k, kn));
    else FIRST_ROW(r + 1, nrows, after_start(&rs[i], k, kn));
    memset(kin + r, in, found - r);
  }
}

bool kv_colagg_key_in(const kv_colagg_spec *sp, const uint8_t *k, uint32_t n) {
  const uint8_t *pp = NULL;
  uint32_t pl = 0;
  return kv_cs_key_in(sp, k, n, &pp, &pl);
}

bool kv_cs_span_inside(const kv_colagg_spec *sp, const uint8_t *lo, uint32_t lo_len,
                       const uint8_t *hi, uint32_t hi_len) {
  if (sp->n_ranges) { /* one range holds both ends */
    uint32_t i = first_not_ended(sp->ranges, sp->n_ranges, lo, lo_len);
    if (i == sp->n_ranges || !after_start(&sp->ranges[i], lo, lo_len) ||
        !before_end(&sp->ranges[i], hi, hi_len))
      return false;
  }
  const kv_skip_prefix *x = sp->skip;
  if (!x) return true;
  uint32_t p = x->prefix_len(x->ctx, lo, lo_len); /* one prefix, one suffix range */
  if (!p || p > lo_len || p > hi_len || x->prefix_len(x->ctx, hi, hi_len) != p ||
      memcmp(lo, hi, p) != 0)
    return false;
  if (!x->n_suffixes) return true;
  uint32_t i = first_not_ended(x->suffixes, x->n_suffixes, lo + p, lo_len - p);
  return i < x->n_suffixes && after_start(&x->suffixes[i], lo + p, lo_len - p) &&
         before_end(&x->suffixes[i], hi + p, hi_len - p);
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

uint32_t kv_cs_next_block(const kv_colagg_spec *sp, const kv_sf_reader *rd, uint32_t b,
                          const uint8_t *hi, uint32_t hi_len) {
  uint8_t kb[1024]; /* a lower bound of the next key that may match (longer: no jump) */
  const uint8_t *k = NULL;
  uint32_t kl = 0;
  if (sp->n_ranges) { /* the start of the first range not ended before hi */
    uint32_t i = first_not_ended(sp->ranges, sp->n_ranges, hi, hi_len);
    if (i == sp->n_ranges) return rd->nblocks; /* every range ends before: nothing after */
    if (sp->ranges[i].start && !after_start(&sp->ranges[i], hi, hi_len)) {
      k = sp->ranges[i].start;
      kl = (uint32_t)sp->ranges[i].start_len;
    }
  }
  const kv_skip_prefix *x = sp->skip;
  if (x && x->n_suffixes) { /* under hi's prefix: the next suffix range, or the next prefix */
    uint32_t p = x->prefix_len(x->ctx, hi, hi_len);
    if (p && p <= hi_len && p < sizeof kb) {
      uint32_t i = first_not_ended(x->suffixes, x->n_suffixes, hi + p, hi_len - p);
      uint32_t nl = 0;
      bool have = false;
      if (i < x->n_suffixes && x->suffixes[i].start &&
          !after_start(&x->suffixes[i], hi + p, hi_len - p) &&
          x->suffixes[i].start_len <= sizeof kb - p) {
        memcpy(kb, hi, p);
        memcpy(kb + p, x->suffixes[i].start, x->suffixes[i].start_len);
        nl = p + (uint32_t)x->suffixes[i].start_len;
        have = true;
      } else if (i == x->n_suffixes) {
        have = kv_key_prefix_end(hi, p, kb, &nl);
        if (!have) return rd->nblocks; /* no key after this prefix */
      }
      if (have && (!k || kv_cs_key_cmp(kb, nl, k, kl) > 0)) {
        k = kb;
        kl = nl;
      }
    }
  }
  if (!k) return b + 1;
  /* the last block whose first key is below k: it holds k's row or the part of it split
     before the next block */
  uint32_t lo = b + 1, up = rd->nblocks;
  while (lo < up) {
    uint32_t mid = lo + (up - lo) / 2;
    uint32_t fl;
    const uint8_t *f = kv_sf_first_row(rd, mid, &fl);
    if (kv_cs_key_cmp(f, fl, k, kl) < 0) lo = mid + 1;
    else up = mid;
  }
  return lo > b + 1 ? lo - 1 : b + 1;
}
