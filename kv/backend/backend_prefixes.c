/*
** kv/backend/backend_prefixes.c: kv_be_scan_prefixes (kv/backend.h), the distinct key
** prefixes of a family through any backend, for the planner's choice of a skip scan by
** prefix (planner/skip_prefix.c). Over the local store (be->local) it is kv_scan_prefixes,
** one scan that seeks inside the store; elsewhere (HBase) one scan of one row per prefix:
** the first row at or after the current position, its prefix handed out, the next position
** the first key after that prefix (kv_key_prefix_end), so `max` prefixes cost `max` + 1
** small scans (round trips to a remote store) whatever the rows under each; past
** KV_BE_REMOTE_PREFIXES prefixes it stops and reports more (the planner then keeps its plan
** rather than spend thousands of round trips planning).
** Not here: the executor's skip scan by prefix (exec/scan.c), kv_scan_prefixes (kv/scan).
*/
#include <stdlib.h>
#include <string.h>

#include "kv/backend.h"
#include "kv/util/cell.h"
#include "kv/util/status.h"

#define KV_BE_REMOTE_PREFIXES 256 /* prefixes counted through a remote backend at most */

/* The first row of family_id in [lo (lo_inc), r's end]: KV_OK with its key copied into
** *key (realloc'd, *cap bytes), KV_ERR_NOTFOUND when none. */
static int first_row(kv_backend *be, uint32_t family_id, const kv_range *r, const uint8_t *lo,
                     uint32_t lo_len, bool lo_inc, uint8_t **key, uint32_t *cap,
                     uint32_t *len) {
  kv_range q;
  memset(&q, 0, sizeof q);
  if (r) q = *r;
  if (lo) {
    q.start = lo;
    q.start_len = lo_len;
    q.start_inclusive = lo_inc;
  }
  if (q.start && q.end) {
    int c = kv_bytes_cmp(q.start, (uint32_t)q.start_len, q.end, (uint32_t)q.end_len);
    if (c > 0 || (c == 0 && !(q.start_inclusive && q.end_inclusive))) return KV_ERR_NOTFOUND;
  }
  kv_scan_options o;
  memset(&o, 0, sizeof o);
  o.family_ids = &family_id;
  o.n_families = 1;
  o.ranges = &q;
  o.n_ranges = (q.start || q.end) ? 1 : 0;
  o.limit = 1;
  kv_backend_scan *s = NULL;
  int rc = kv_be_scan_open(be, &o, NULL, &s);
  kv_row row;
  if (!rc) rc = kv_be_scan_next(be, s, &row);
  if (!rc) {
    if (row.key_len > *cap) {
      uint8_t *nk = realloc(*key, row.key_len);
      if (!nk) rc = kv_error(KV_ERR_NOMEM, "kv_be_scan_prefixes: out of memory");
      else *key = nk, *cap = row.key_len;
    }
    if (!rc) {
      memcpy(*key, row.key, row.key_len);
      *len = row.key_len;
    }
  }
  kv_be_scan_close(be, s);
  return rc;
}

int kv_be_scan_prefixes(kv_backend *be, uint32_t family_id, kv_prefix_len_fn prefix_len,
                        void *prefix_ctx, const kv_range *ranges, uint32_t n_ranges,
                        uint32_t max,
                        void (*each)(void *each_ctx, const uint8_t *prefix, uint32_t len),
                        void *each_ctx, uint32_t *n, bool *more) {
  if (!be || !prefix_len || !n || !more)
    return kv_error(KV_MISUSE, "kv_be_scan_prefixes: NULL argument");
  if (be->local)
    return kv_scan_prefixes(be->local, family_id, prefix_len, prefix_ctx, ranges, n_ranges, max,
                            each, each_ctx, n, more);
  *n = 0;
  *more = false;
  uint8_t *key = NULL, *pos = NULL;
  uint32_t cap = 0, len = 0, pos_len = 0;
  int rc = KV_OK;
  for (uint32_t ri = 0; ri < (n_ranges ? n_ranges : 1) && !rc && !*more; ri++) {
    const kv_range *r = n_ranges ? &ranges[ri] : NULL;
    bool have_pos = false;
    for (;;) {
      rc = first_row(be, family_id, r, have_pos ? pos : NULL, pos_len, true, &key, &cap, &len);
      if (rc == KV_ERR_NOTFOUND) {
        rc = KV_OK;
        kv_error_clear();
        break;
      }
      if (rc) break;
      uint32_t pl = prefix_len(prefix_ctx, key, len);
      if (pl > len) pl = len;
      if (*n == max || *n == KV_BE_REMOTE_PREFIXES) {
        *more = true;
        break;
      }
      if (each) each(each_ctx, key, pl);
      (*n)++;
      uint8_t *np = realloc(pos, pl ? pl : 1);
      if (!np) {
        rc = kv_error(KV_ERR_NOMEM, "kv_be_scan_prefixes: out of memory");
        break;
      }
      pos = np;
      if (!kv_key_prefix_end(key, pl, pos, &pos_len)) break; /* no key after this prefix */
      have_pos = true;
    }
  }
  free(key);
  free(pos);
  return rc;
}
