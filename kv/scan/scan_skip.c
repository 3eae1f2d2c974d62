/*
** kv/scan/scan_skip.c: the skip scan by prefix (kv.h kv_skip_prefix): normalizing its suffix
** ranges at open, making the ranges of each prefix found, and kv_scan_prefixes (the
** planner's count of distinct prefixes). The probe itself (seeking every family and taking
** the smallest row key) is kv/scan/scan.c's, next to the merge it uses; reading the ranges made
** here is the ordinary forward range path (kv/scan/scan.c next_forward, row runs of
** kv/scan/scan_run.c stop at their ends as at any range's).
**
** Suffix ranges are normalized like kv_scan_options.ranges: half-open [start, end) byte
** strings, an exclusive start or inclusive end turned into its successor (the bytes and a
** 0x00). For a prefix p the range i is [p + start_i, p + end_i), a NULL start giving p and a
** NULL end the first key after every key beginning with p (p without its trailing 0xFF
** bytes, last byte incremented; none when p is all 0xFF). The next probe is that same key.
** With the scan's own ranges (outer ranges), kv_scan_skip_probe starts at the first one's
** start and moves from one to the next; each prefix's ranges are intersected with them.
** Not here: reverse scans (refused at open), SQL (the prefix length is the caller's).
*/
#include "kv/util/cell.h"
#include "kv/scan/scan_int.h"

/* Copy the scan's normalized ranges (s->ranges, which the prefixes' ranges overwrite) into
** s->outer. */
static int keep_outer(kv_scan *s, uint32_t n) {
  size_t bytes = 0;
  for (uint32_t i = 0; i < n; i++) bytes += s->ranges[i].start_len + s->ranges[i].end_len;
  size_t c = s->outer_cap;
  if (kv_scan_grow((void **)&s->outer, &c, n ? n : 1, sizeof *s->outer) ||
      kv_scan_grow((void **)&s->outer_bytes, &s->outer_bytes_cap, bytes ? bytes : 1, 1))
    return kv_error(KV_ERR_NOMEM, "kv_scan_open: out of memory");
  s->outer_cap = (uint32_t)c;
  uint8_t *b = s->outer_bytes;
  for (uint32_t i = 0; i < n; i++) {
    const nrange *r = &s->ranges[i];
    nrange *o = &s->outer[i];
    *o = (nrange){NULL, 0, NULL, 0};
    if (r->start) {
      memcpy(b, r->start, r->start_len);
      o->start = b;
      o->start_len = r->start_len;
      b += r->start_len;
    }
    if (r->end) {
      if (r->end_len) memcpy(b, r->end, r->end_len);
      o->end = b;
      o->end_len = r->end_len;
      b += r->end_len;
    }
  }
  s->n_outer = n;
  s->cur_outer = 0;
  return KV_OK;
}

int kv_scan_skip_setup(kv_scan *s, const kv_skip_prefix *sp, uint32_t n_ranges) {
  if (s->reverse)
    return kv_error(KV_ERR_INVALID, "kv_scan_open: a skip scan by prefix is forward only");
  if (n_ranges) {
    int rc = keep_outer(s, s->n_ranges);
    if (rc) return rc;
  } else {
    s->n_outer = 0;
  }
  if (!sp->prefix_len)
    return kv_error(KV_ERR_INVALID, "kv_scan_open: skip_prefix without prefix_len");
  if (sp->n_suffixes && !sp->suffixes)
    return kv_error(KV_ERR_INVALID, "kv_scan_open: NULL suffix ranges");
  uint32_t n = sp->n_suffixes ? sp->n_suffixes : 1;
  size_t bytes = 0;
  for (uint32_t i = 0; i < sp->n_suffixes; i++) {
    const kv_range *r = &sp->suffixes[i];
    if ((r->start_len && !r->start) || (r->end_len && !r->end))
      return kv_error(KV_ERR_INVALID, "kv_scan_open: suffix range %u has a NULL bound with a "
                                      "length", i);
    if (r->start_len > KV_MAX_ROW_KEY || r->end_len > KV_MAX_ROW_KEY)
      return kv_error(KV_ERR_TOOBIG, "kv_scan_open: suffix range %u bound over %u bytes", i,
                      KV_MAX_ROW_KEY);
    bytes += (r->start ? r->start_len + 1 : 0) + (r->end ? r->end_len + 1 : 0);
  }
  size_t c = s->sfx_cap;
  if (kv_scan_grow((void **)&s->sfx, &c, n, sizeof *s->sfx) ||
      kv_scan_grow((void **)&s->sfx_bytes, &s->sfx_bytes_cap, bytes ? bytes : 1, 1))
    return kv_error(KV_ERR_NOMEM, "kv_scan_open: out of memory");
  s->sfx_cap = (uint32_t)c;
  memset(s->sfx, 0, n * sizeof *s->sfx);
  s->n_sfx = n;
  uint8_t *b = s->sfx_bytes;
  for (uint32_t i = 0; i < sp->n_suffixes; i++) {
    const kv_range *r = &sp->suffixes[i];
    nrange *o = &s->sfx[i];
    if (r->start) {
      if (r->start_len) memcpy(b, r->start, r->start_len);
      o->start_len = (uint32_t)r->start_len;
      if (!r->start_inclusive) b[o->start_len++] = 0;
      o->start = b;
      b += o->start_len;
    }
    if (r->end) {
      if (r->end_len) memcpy(b, r->end, r->end_len);
      o->end_len = (uint32_t)r->end_len;
      if (r->end_inclusive) b[o->end_len++] = 0;
      o->end = b;
      b += o->end_len;
    }
    if (i > 0) {
      const nrange *p = &s->sfx[i - 1];
      if (!p->end || !o->start || kv_bytes_cmp(p->end, p->end_len, o->start, o->start_len) > 0)
        return kv_error(KV_ERR_INVALID,
                        "kv_scan_open: suffix ranges %u and %u are unsorted or overlap", i - 1,
                        i);
    }
  }
  s->skip = true;
  s->skip_done = false;
  s->have_probe = false;
  s->plen = sp->prefix_len;
  s->plen_ctx = sp->ctx;
  s->prefixes = 0;
  s->skip_rows = sp->rows_per_prefix;
  s->pfx_rows = 0;
  return KV_OK;
}

/* Bound a (NULL = open) as the larger start / smaller end of a and b. */
static const nrange *later_start(const nrange *a, const nrange *b) {
  if (!a->start) return b;
  if (!b->start) return a;
  return kv_bytes_cmp(a->start, a->start_len, b->start, b->start_len) >= 0 ? a : b;
}
static const nrange *earlier_end(const nrange *a, const nrange *b) {
  if (!a->end) return b;
  if (!b->end) return a;
  return kv_bytes_cmp(a->end, a->end_len, b->end, b->end_len) <= 0 ? a : b;
}

/* The prefix's ranges s->ranges[0..*n) intersected with the outer ranges from cur_outer on
** (both lists sorted and disjoint, so the pieces come out sorted and disjoint); the pieces'
** bounds point into rbytes or outer_bytes, which stay put until the next prefix. */
static int cut_to_outer(kv_scan *s, uint32_t *n) {
  size_t need = 0;
  for (uint32_t i = 0; i < *n; i++) {
    const nrange *r = &s->ranges[i];
    for (uint32_t j = s->cur_outer; j < s->n_outer; j++) {
      const nrange *o = &s->outer[j];
      if (r->end && o->start && kv_bytes_cmp(o->start, o->start_len, r->end, r->end_len) >= 0)
        break;
      need++;
    }
  }
  if (kv_scan_grow((void **)&s->xr, &s->xr_cap, need ? need : 1, sizeof *s->xr))
    return kv_error(KV_ERR_NOMEM, "kv_scan_next: out of memory");
  uint32_t k = 0;
  for (uint32_t i = 0; i < *n; i++) {
    const nrange *r = &s->ranges[i];
    for (uint32_t j = s->cur_outer; j < s->n_outer; j++) {
      const nrange *o = &s->outer[j];
      if (r->end && o->start && kv_bytes_cmp(o->start, o->start_len, r->end, r->end_len) >= 0)
        break;
      const nrange *a = later_start(r, o), *b = earlier_end(r, o);
      nrange x = {a->start, a->start_len, b->end, b->end_len};
      if (x.start && x.end && kv_bytes_cmp(x.start, x.start_len, x.end, x.end_len) >= 0)
        continue;
      s->xr[k++] = x;
    }
  }
  /* swap: s->ranges becomes the pieces, xr the spare array */
  nrange *t = s->ranges;
  size_t tc = s->ranges_cap;
  s->ranges = s->xr;
  s->ranges_cap = (uint32_t)s->xr_cap;
  s->xr = t;
  s->xr_cap = tc;
  *n = k;
  return KV_OK;
}

int kv_scan_skip_ranges(kv_scan *s, const uint8_t *row, uint32_t row_len) {
  uint32_t pl = s->plen(s->plen_ctx, row, row_len);
  if (pl == 0 || pl > row_len)
    return kv_error(KV_ERR_INVALID, "kv_scan_next: skip scan: a row key of %u bytes has no "
                                    "prefix", row_len);
  size_t c = s->pfx_cap;
  if (kv_scan_grow((void **)&s->pfx, &c, pl, 1))
    return kv_error(KV_ERR_NOMEM, "kv_scan_next: out of memory");
  s->pfx_cap = (uint32_t)c;
  memcpy(s->pfx, row, pl);
  s->pfx_len = pl;
  s->prefixes++;
  /* room: every range's two bounds, prefix included */
  size_t bytes = 0;
  for (uint32_t i = 0; i < s->n_sfx; i++)
    bytes += 2 * (size_t)pl + s->sfx[i].start_len + s->sfx[i].end_len;
  size_t rc_cap = s->ranges_cap;
  if (kv_scan_grow((void **)&s->ranges, &rc_cap, s->n_sfx, sizeof *s->ranges) ||
      kv_scan_grow((void **)&s->rbytes, &s->rbytes_cap, bytes ? bytes : 1, 1))
    return kv_error(KV_ERR_NOMEM, "kv_scan_next: out of memory");
  s->ranges_cap = (uint32_t)rc_cap;
  uint8_t *b = s->rbytes;
  uint32_t n = 0;
  for (uint32_t i = 0; i < s->n_sfx; i++) {
    const nrange *x = &s->sfx[i];
    nrange *o = &s->ranges[n];
    memcpy(b, s->pfx, pl);
    if (x->start_len) memcpy(b + pl, x->start, x->start_len);
    o->start = b;
    o->start_len = pl + x->start_len;
    b += o->start_len;
    if (x->end) {
      memcpy(b, s->pfx, pl);
      if (x->end_len) memcpy(b + pl, x->end, x->end_len);
      o->end = b;
      o->end_len = pl + x->end_len;
      b += o->end_len;
    } else if (kv_key_prefix_end(s->pfx, pl, b, &o->end_len)) {
      o->end = b;
      b += o->end_len;
    } else {
      o->end = NULL;
      o->end_len = 0;
    }
    if (o->end && kv_bytes_cmp(o->start, o->start_len, o->end, o->end_len) >= 0) continue;
    n++;
  }
  if (s->n_outer) {
    int rc = cut_to_outer(s, &n);
    if (rc) return rc;
  }
  s->n_ranges = n;
  s->cur_range = 0;
  s->range_started = false;
  c = s->probe_cap;
  if (kv_scan_grow((void **)&s->probe, &c, pl, 1))
    return kv_error(KV_ERR_NOMEM, "kv_scan_next: out of memory");
  s->probe_cap = (uint32_t)c;
  if (kv_key_prefix_end(s->pfx, pl, s->probe, &s->probe_len)) s->have_probe = true;
  else s->skip_done = true;
  return KV_OK;
}

int kv_scan_prefixes(kv_db *db, uint32_t family_id, kv_prefix_len_fn prefix_len,
                     void *prefix_ctx, const kv_range *ranges, uint32_t n_ranges, uint32_t max,
                     void (*each)(void *each_ctx, const uint8_t *prefix, uint32_t len),
                     void *each_ctx, uint32_t *n, bool *more) {
  if (!db || !prefix_len || !n || !more)
    return kv_error(KV_MISUSE, "kv_scan_prefixes: NULL argument");
  *n = 0;
  *more = false;
  kv_skip_prefix sp = {prefix_len, prefix_ctx, NULL, 0, 0};
  kv_scan_options o;
  memset(&o, 0, sizeof o);
  o.family_ids = &family_id;
  o.n_families = 1;
  o.skip_prefix = &sp;
  o.ranges = ranges;
  o.n_ranges = n_ranges;
  kv_scan *s;
  int rc = kv_scan_open(db, &o, &s);
  if (rc) return rc;
  for (;;) {
    rc = kv_scan_skip_probe(s);
    if (rc) break;
    if (*n == max) {
      *more = true;
      break;
    }
    if (each) each(each_ctx, s->pfx, s->pfx_len);
    (*n)++;
  }
  kv_scan_close(s);
  return rc == KV_ERR_NOTFOUND ? KV_OK : rc;
}
