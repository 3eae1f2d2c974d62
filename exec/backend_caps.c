/*
** exec/backend_caps.c: the executor's paths for a storage backend without a capability
** (exec/backend_caps.h): the read point of an exact read, and the skip scan by prefix done
** over a plain scan. Not here: the scans themselves (exec/scan.c).
*/
#include "exec/backend_caps.h"

#include <stdlib.h>
#include <string.h>

#include "exec/rowcodec.h" /* exec_error_set */
#include "kv/util/cell.h" /* kv_bytes_cmp */

int exec_backend_snapshot(kv_backend *be, uint64_t *snap) {
  *snap = 0;
  if (be->caps.snapshot != KV_BE_SNAPSHOT_SEQUENCE) return KV_OK;
  return kv_be_snapshot_acquire(be, snap);
}

int exec_skip_emul_init(exec_skip_emul *e, const kv_skip_prefix *sp, exec_error *err) {
  memset(e, 0, sizeof *e);
  e->last = malloc(KV_MAX_ROW_KEY);
  if (!e->last) return exec_error_set(err, EXEC_NOMEM, "out of memory");
  e->on = true;
  e->prefix_len = sp->prefix_len;
  e->ctx = sp->ctx;
  e->suffixes = sp->suffixes;
  e->n_suffixes = sp->n_suffixes;
  e->rows_per_prefix = sp->rows_per_prefix;
  return EXEC_OK;
}

/* Whether suffix s[0..n) lies in range r (NULL ends: unbounded). */
static bool in_range(const kv_range *r, const uint8_t *s, uint32_t n) {
  if (r->start) {
    int c = kv_bytes_cmp(s, n, r->start, r->start_len);
    if (c < 0 || (c == 0 && !r->start_inclusive)) return false;
  }
  if (r->end) {
    int c = kv_bytes_cmp(s, n, r->end, r->end_len);
    if (c > 0 || (c == 0 && !r->end_inclusive)) return false;
  }
  return true;
}

bool exec_skip_emul_keep(exec_skip_emul *e, const uint8_t *key, uint32_t len, int *rc,
                         exec_error *err) {
  *rc = EXEC_OK;
  uint32_t p = e->prefix_len(e->ctx, key, len);
  if (p == 0 || p > len) {
    *rc = exec_error_set(err, EXEC_ERROR, "skip scan: a row key has no prefix");
    return false;
  }
  bool in = e->n_suffixes == 0;
  for (uint32_t i = 0; i < e->n_suffixes && !in; i++) in = in_range(&e->suffixes[i], key + p, len - p);
  if (!in) return false;
  if (kv_bytes_cmp(e->last, e->last_len, key, p) != 0 || e->last_len == 0) {
    memcpy(e->last, key, p);
    e->last_len = p;
    e->kept = 0;
  }
  if (e->rows_per_prefix && e->kept >= e->rows_per_prefix) return false;
  e->kept++;
  return true;
}

void exec_skip_emul_free(exec_skip_emul *e) {
  free(e->last);
  e->last = NULL;
  e->on = false;
}
