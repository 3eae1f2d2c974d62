/*
** exec/salt_merge.c: one scan per salt bucket of a salted table, merged in key order
** (contract in exec/salt_merge.h). The bucket scans' ranges are the plan's ranges with the
** bucket byte in front (catalog/salt.h cat_salt_range: an open bound becomes the bucket's
** own edge). The merge
** compares the keys after their salt byte; two buckets never hold the same key.
*/
#include "exec/salt_merge.h"

#include <stdlib.h>
#include <string.h>

#include "catalog/salt.h"

struct exec_salt_scan {
  kv_backend *be;          /* the backend */
  uint32_t n;              /* bucket scans opened */
  kv_backend_scan **sc;    /* each bucket scan */
  kv_row *row;             /* each one's current row */
  bool *has;               /* row[i] holds a row not yet handed out */
  bool *started;           /* scan i was read from once */
  int last;                /* the scan whose row was handed out last, or -1 */
  bool reverse;            /* descending key order */
  kv_range *ranges;        /* every bucket's ranges, one block */
  uint8_t *bytes;          /* their salted bounds, one block */
};

/* Order of two stored keys of a salted table: by the bytes after the salt byte. */
static int unsalted_cmp(const kv_row *a, const kv_row *b) {
  uint32_t al = a->key_len ? a->key_len - 1 : 0, bl = b->key_len ? b->key_len - 1 : 0;
  int c = memcmp(a->key + 1, b->key + 1, al < bl ? al : bl);
  return c ? c : (al > bl) - (al < bl);
}

int exec_salt_scan_open(kv_backend *be, int buckets, const kv_scan_options *o,
                        const kv_backend_read *x, bool point, int b_lo, int b_hi,
                        exec_salt_scan **out) {
  *out = NULL;
  uint32_t nb = (uint32_t)buckets, nr = o->n_ranges ? o->n_ranges : 1;
  size_t room = 0; /* bytes of every salted bound */
  for (uint32_t i = 0; i < o->n_ranges; i++)
    room += o->ranges[i].start_len + o->ranges[i].end_len + 2;
  room = point ? room : room * nb;
  room += 2 * (size_t)nb * nr;
  exec_salt_scan *m = calloc(1, sizeof *m);
  if (!m) return KV_ERR_NOMEM;
  m->be = be;
  m->last = -1;
  m->reverse = o->reverse;
  m->sc = calloc(nb, sizeof *m->sc);
  m->row = calloc(nb, sizeof *m->row);
  m->has = calloc(nb, sizeof *m->has);
  m->started = calloc(nb, sizeof *m->started);
  m->ranges = calloc((size_t)nb * nr, sizeof *m->ranges);
  m->bytes = malloc(room);
  uint32_t *count = calloc(nb, sizeof *count);
  if (!m->sc || !m->row || !m->has || !m->started || !m->ranges || !m->bytes || !count) {
    free(count);
    exec_salt_scan_close(m);
    return KV_ERR_NOMEM;
  }
  uint8_t *bytes = m->bytes;
  /* bucket b's ranges are m->ranges[b * nr ..], in the plan's (ascending) order */
  for (uint32_t i = 0; i < nr; i++) {
    const kv_range *r = o->n_ranges ? &o->ranges[i] : NULL;
    uint32_t b0 = 0, b1 = nb;
    if (point && r) { /* one full key: its own bucket */
      b0 = cat_salt_point_bucket(r, buckets);
      b1 = b0 + 1;
    }
    if (b_hi > 0) { /* a chunk's run of buckets */
      if (b0 < (uint32_t)b_lo) b0 = (uint32_t)b_lo;
      if (b1 > (uint32_t)b_hi) b1 = (uint32_t)b_hi;
    }
    for (uint32_t b = b0; b < b1; b++)
      cat_salt_range((uint8_t)b, r, &m->ranges[(size_t)b * nr + count[b]++], &bytes);
  }
  int rc = KV_OK;
  for (uint32_t b = 0; b < nb && rc == KV_OK; b++) {
    if (!count[b]) continue;
    kv_scan_options so = *o;
    so.ranges = &m->ranges[(size_t)b * nr];
    so.n_ranges = count[b];
    rc = kv_be_scan_open(be, &so, x, &m->sc[m->n]);
    if (rc == KV_OK) m->n++;
  }
  free(count);
  if (rc != KV_OK) {
    exec_salt_scan_close(m);
    return rc;
  }
  *out = m;
  return KV_OK;
}

int exec_salt_scan_next(exec_salt_scan *m, kv_row *row) {
  for (uint32_t i = 0; i < m->n; i++) { /* advance the one handed out, fill the new ones */
    if (m->started[i] && (int)i != m->last) continue;
    m->started[i] = true;
    int rc = kv_be_scan_next(m->be, m->sc[i], &m->row[i]);
    if (rc == KV_ERR_NOTFOUND) {
      m->has[i] = false;
      continue;
    }
    if (rc != KV_OK) return rc;
    m->has[i] = true;
  }
  int best = -1;
  for (uint32_t i = 0; i < m->n; i++) {
    if (!m->has[i]) continue;
    if (best < 0) {
      best = (int)i;
      continue;
    }
    int c = unsalted_cmp(&m->row[i], &m->row[best]);
    if (m->reverse ? c > 0 : c < 0) best = (int)i;
  }
  m->last = best;
  if (best < 0) return KV_ERR_NOTFOUND;
  *row = m->row[best];
  return KV_OK;
}

uint32_t exec_salt_scan_chunks(const exec_salt_scan *m) { return m ? m->n : 0; }

void exec_salt_scan_metrics(exec_salt_scan *m, kv_scan_metrics *sum) {
  for (uint32_t i = 0; i < m->n; i++) {
    kv_scan_metrics one;
    kv_be_scan_metrics(m->be, m->sc[i], &one);
    exec_scan_metrics_add(sum, &one);
  }
}

void exec_salt_scan_close(exec_salt_scan *m) {
  if (!m) return;
  for (uint32_t i = 0; i < m->n; i++) kv_be_scan_close(m->be, m->sc[i]);
  free(m->sc);
  free(m->row);
  free(m->has);
  free(m->started);
  free(m->ranges);
  free(m->bytes);
  free(m);
}
