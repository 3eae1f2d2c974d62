/*
** kv/backend/backend_local.c: the local store as a storage backend (kv/backend.h). Each operation is
** the kv/kv.h function of the same name, with what the interface adds on top: split keys
** at create (the table's regions, kv_create_table_split), the resume key of a scan
** (its key ranges cut after the last row handed out), the serializable filter expression
** (evaluated in the scan like a callback filter), check-and-write (a check and a commit made
** atomic against every write through a backend by one process-wide lock: plain writes share
** it, check-and-writes take it alone), split points (the table's region boundaries, or for a
** table of one region, from the store files' block indexes), and
** a walk over a batch's ops for backends that do not read kv's batch encoding.
**
** The scan handle is kv's own kv_scan, so a scan through the interface allocates nothing
** more than a direct one.
**
** Not here: the store (kv/kv.h), the filter expression itself (kv/backend/backend_filter.c).
*/
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "kv/backend.h"
#include "kv/util/cell.h"
#include "kv/util/coding.h"
#include "kv/db/db_impl.h"
#include "kv/util/status.h"
#include "kv/db/wal.h"

/* Plain writes hold it shared, check-and-write exclusive (every local backend of the
** process: they are rare, and the lock is never held across anything but one commit). */
static pthread_rwlock_t write_lock = PTHREAD_RWLOCK_INITIALIZER;

#define DB(be) ((kv_db *)(be)->impl)

int kv_be_unsupported(const kv_backend *be, const char *op) {
  return kv_error(KV_ERR_INVALID, "%s is not supported by backend %s", op, be->caps.name);
}

static int l_create_table(kv_backend *be, const char *name, const kv_family_options *families,
                          int n_families, const uint8_t *const *split_keys,
                          const uint32_t *split_lens, uint32_t n_splits) {
  return kv_create_table_split(DB(be), name, families, n_families, split_keys, split_lens,
                               n_splits);
}
static int l_alter_table(kv_backend *be, const char *name, const kv_family_options *families,
                         int n_families) {
  return kv_alter_table(DB(be), name, families, n_families);
}
static int l_drop_table(kv_backend *be, const char *name) {
  return kv_drop_table(DB(be), name);
}
static int l_family_id(kv_backend *be, const char *table, const char *family, uint32_t *id) {
  return kv_family_id(DB(be), table, family, id);
}
static int l_family_info(kv_backend *be, uint32_t family_id, kv_family_options *out) {
  return kv_family_info(DB(be), family_id, out);
}
static int l_table_count(kv_backend *be) { return kv_table_count(DB(be)); }
static const char *l_table_name(kv_backend *be, int i) { return kv_table_name(DB(be), i); }
static int l_set_dropped_qualifiers(kv_backend *be, uint32_t family_id,
                                    const uint8_t *const *quals, const uint32_t *lens,
                                    uint32_t n) {
  return kv_family_set_dropped_qualifiers(DB(be), family_id, quals, lens, n);
}

static int l_write(kv_backend *be, const kv_batch *b, uint64_t *seq_out) {
  pthread_rwlock_rdlock(&write_lock);
  int rc = kv_commit(DB(be), b, seq_out);
  pthread_rwlock_unlock(&write_lock);
  return rc;
}

/* Whether the check holds at the latest state. */
static int check_holds(kv_db *db, const kv_backend_check *chk, bool *holds) {
  const uint8_t *q = chk->qual ? chk->qual : (const uint8_t *)"";
  kv_qualifier_set qs = {chk->family_id, &q, &chk->qual_len, 1};
  kv_scan_options o = {0};
  o.family_ids = &chk->family_id;
  o.n_families = 1;
  o.qualifiers = &qs;
  o.n_qualifier_sets = 1;
  kv_scan *s = NULL;
  kv_row row;
  int rc = kv_get(db, &o, chk->row, chk->row_len, &s, &row);
  if (rc == KV_ERR_NOTFOUND && s) { /* no such row (an unknown family leaves s NULL) */
    *holds = chk->value == NULL;
    rc = KV_OK;
  } else if (rc == KV_OK) {
    const kv_cell_view *v = row.n_cells ? &row.cells[0] : NULL; /* the newest version */
    *holds = chk->value ? v && kv_bytes_cmp(v->value, v->value_len, chk->value,
                                            chk->value_len) == 0
                        : v == NULL;
  }
  kv_scan_close(s);
  return rc;
}

static int l_check_and_write(kv_backend *be, const kv_backend_check *chk, const kv_batch *b,
                             bool *applied, uint64_t *seq_out) {
  if (!chk || !b || !applied || !chk->row || chk->row_len == 0)
    return kv_error(KV_MISUSE, "check_and_write: NULL argument or empty row key");
  *applied = false;
  pthread_rwlock_wrlock(&write_lock);
  bool holds = false;
  int rc = check_holds(DB(be), chk, &holds);
  if (rc == KV_OK && holds) {
    rc = kv_commit(DB(be), b, seq_out);
    *applied = rc == KV_OK;
  }
  pthread_rwlock_unlock(&write_lock);
  return rc;
}

static int l_flush(kv_backend *be, const char *table) { return kv_flush(DB(be), table); }

static int l_get(kv_backend *be, const kv_scan_options *o, const void *row, size_t row_len,
                 kv_backend_scan **scan_out, kv_row *out_row) {
  return kv_get(DB(be), o, row, row_len, (kv_scan **)scan_out, out_row);
}

/* Cut ranges r[0..n) (n 0: everything) to the rows after key in the scan's order into
** out[0..n or 1), *n_out the count. */
static void cut_after(const kv_range *r, uint32_t n, bool reverse, const uint8_t *key,
                      uint32_t len, kv_range *out, uint32_t *n_out) {
  static const kv_range all = {0};
  if (n == 0) {
    r = &all;
    n = 1;
  }
  uint32_t k = 0;
  for (uint32_t i = 0; i < n; i++) {
    kv_range x = r[i];
    if (!reverse) {
      if (x.end && kv_bytes_cmp(x.end, x.end_len, key, len) <= 0) continue; /* all <= key */
      if (!x.start || kv_bytes_cmp(x.start, x.start_len, key, len) <= 0) {
        x.start = key;
        x.start_len = len;
        x.start_inclusive = false;
      }
    } else {
      if (x.start && kv_bytes_cmp(x.start, x.start_len, key, len) >= 0) continue; /* >= key */
      if (!x.end || kv_bytes_cmp(x.end, x.end_len, key, len) >= 0) {
        x.end = key;
        x.end_len = len;
        x.end_inclusive = false;
      }
    }
    out[k++] = x;
  }
  *n_out = k;
}

static int l_scan_open(kv_backend *be, const kv_scan_options *o, const kv_backend_read *x,
                       kv_backend_scan **out) {
  if (!x || (!x->filter_expr && !x->resume_after))
    return kv_scan_open(DB(be), o, (kv_scan **)out);
  if (!o || !out) return kv_error(KV_MISUSE, "scan_open: NULL argument");
  *out = NULL;
  kv_scan_options oo = *o;
  if (x->filter_expr) {
    if (o->filter)
      return kv_error(KV_ERR_INVALID,
                      "scan_open: a callback filter and a filter expression given together");
    int rc = kv_filter_expr_check(x->filter_expr);
    if (rc) return rc;
    oo.filter = kv_filter_expr_eval;
    oo.filter_ctx = (void *)x->filter_expr;
  }
  kv_range one, *cut = NULL;
  if (x->resume_after) {
    if (x->resume_after_len == 0 || x->resume_after_len > KV_MAX_ROW_KEY)
      return kv_error(KV_ERR_INVALID, "scan_open: resume key of %u bytes", x->resume_after_len);
    uint32_t n = o->n_ranges ? o->n_ranges : 1;
    cut = n == 1 ? &one : malloc(n * sizeof *cut);
    if (!cut) return kv_error(KV_ERR_NOMEM, "scan_open: out of memory");
    cut_after(o->ranges, o->n_ranges, o->reverse, x->resume_after, x->resume_after_len, cut,
              &oo.n_ranges);
    oo.ranges = cut;
    if (oo.n_ranges == 0) { /* nothing left: an empty range reads nothing */
      one = (kv_range){x->resume_after, x->resume_after_len, true,
                       x->resume_after, x->resume_after_len, false};
      oo.ranges = &one;
      oo.n_ranges = 1;
    }
  }
  int rc = kv_scan_open(DB(be), &oo, (kv_scan **)out);
  if (cut != &one) free(cut);
  return rc;
}

static int l_scan_next(kv_backend *be, kv_backend_scan *s, kv_row *row) {
  (void)be;
  return kv_scan_next((kv_scan *)s, row);
}
static const kv_value_vector *l_scan_row_vectors(kv_backend *be, const kv_backend_scan *s,
                                                 uint32_t *n) {
  (void)be;
  return kv_scan_row_vectors((const kv_scan *)s, n);
}
static void l_scan_metrics(kv_backend *be, const kv_backend_scan *s, kv_scan_metrics *out) {
  (void)be;
  kv_scan_get_metrics((const kv_scan *)s, out);
}
static void l_scan_close(kv_backend *be, kv_backend_scan *s) {
  (void)be;
  kv_scan_close((kv_scan *)s);
}
static int l_snapshot_acquire(kv_backend *be, uint64_t *snap) {
  return kv_snapshot_acquire(DB(be), snap);
}
static void l_snapshot_release(kv_backend *be, uint64_t snap) {
  kv_snapshot_release(DB(be), snap);
}

/* ---- Split points from the block indexes -------------------------------------------- */
/* Region boundaries, at most max_chunks - 1 of them, spread evenly over the list. */
typedef struct region_pick {
  uint32_t n_bounds, max_chunks, given; /* boundaries, chunks asked, boundaries given */
  kv_be_split_fn each;
  void *ctx;
} region_pick;

static void pick_region(void *ctx, uint32_t i, const uint8_t *key, uint32_t len) {
  region_pick *p = ctx;
  /* boundary i is given when it is the first at or past the next of max_chunks - 1 evenly
     spaced targets: all of them when there are few enough */
  uint64_t target = (uint64_t)p->given * p->n_bounds / (p->max_chunks - 1);
  if (p->given + 1 < p->max_chunks && i >= target) {
    p->each(p->ctx, key, len);
    p->given++;
  }
}

static int l_split_points(kv_backend *be, uint32_t family_id, uint32_t max_chunks,
                          kv_be_split_fn each, void *ctx) {
  if (!each) return kv_error(KV_MISUSE, "split_points: NULL callback");
  uint32_t n_regions = 1;
  int rrc = kv_family_regions(DB(be), family_id, &n_regions, NULL, NULL);
  if (rrc) return rrc;
  if (n_regions > 1) { /* a table split into regions is cut at their boundaries (HBase) */
    if (max_chunks < 2) return KV_OK;
    region_pick p = {n_regions - 1, max_chunks, 0, each, ctx};
    return kv_family_regions(DB(be), family_id, NULL, pick_region, &p);
  }
  /* the blocks cut into runs of about equal bytes (kv/db/db_split.c) */
  return kv_block_cut_points(DB(be), family_id, max_chunks, each, ctx, NULL);
}

static int l_estimate(kv_backend *be, uint32_t family_id, const kv_range *range,
                      const kv_estimate_opts *opts, uint64_t *rows, uint64_t *bytes) {
  return kv_estimate_range(DB(be), family_id, range, opts, rows, bytes);
}

static int l_family_stats(kv_backend *be, uint32_t family_id, kv_family_stats *out) {
  return kv_family_get_stats(DB(be), family_id, out);
}

static const kv_backend_ops local_ops = {
  .create_table = l_create_table,
  .alter_table = l_alter_table,
  .drop_table = l_drop_table,
  .family_id = l_family_id,
  .family_info = l_family_info,
  .table_count = l_table_count,
  .table_name = l_table_name,
  .set_dropped_qualifiers = l_set_dropped_qualifiers,
  .write = l_write,
  .check_and_write = l_check_and_write,
  .flush = l_flush,
  .get = l_get,
  .scan_open = l_scan_open,
  .scan_next = l_scan_next,
  .scan_row_vectors = l_scan_row_vectors,
  .scan_metrics = l_scan_metrics,
  .scan_close = l_scan_close,
  .snapshot_acquire = l_snapshot_acquire,
  .snapshot_release = l_snapshot_release,
  .split_points = l_split_points,
  .estimate = l_estimate,
  .family_stats = l_family_stats,
};

kv_backend *kv_backend_local_init(kv_backend *be, kv_db *db) {
  be->ops = &local_ops;
  be->impl = db;
  be->local = db;
  be->caps = (kv_backend_caps){
    .name = "local",
    .atomicity = KV_BE_ATOMIC_GLOBAL,
    .snapshot = KV_BE_SNAPSHOT_SEQUENCE,
    .filters = KV_BE_FILTER_CALLBACK | KV_BE_FILTER_EXPR,
    .reverse_scans = true,
    .check_and_write = true,
    .split_points = true,
    .size_estimates = true,
    .split_keys = true,
    .extensions = KV_BE_EXT_OVERLAY | KV_BE_EXT_SKIP_PREFIX | KV_BE_EXT_VALUE_VECTORS |
                  KV_BE_EXT_EXISTENCE_FAMILY | KV_BE_EXT_TRACE | KV_BE_EXT_TS_PER_ROW |
                  KV_BE_EXT_INTERRUPT | KV_BE_EXT_COLUMNAR,
  };
  return be;
}

kv_db *kv_backend_local_db(const kv_backend *be) {
  return be ? be->local : NULL;
}

int kv_backend_batch_each(const kv_batch *b, int (*each)(void *ctx, const kv_batch_op *op),
                          void *ctx) {
  if (!b || !each) return kv_error(KV_MISUSE, "kv_backend_batch_each: NULL argument");
  size_t len;
  const uint8_t *p = kv_batch_payload(b, &len), *limit = p + len;
  uint64_t count;
  p = kv_get_varint(p, limit, &count);
  if (!p) return kv_error(KV_ERR_CORRUPT, "batch: bad op count");
  for (uint64_t i = 0; i < count; i++) {
    kv_wal_op w;
    int rc = kv_wal_decode_op(&p, limit, &w);
    if (rc) return rc;
    kv_batch_op op = {w.type, w.family_id, w.row, w.row_len, w.qual, w.qual_len, w.ts,
                      w.value, w.value_len};
    rc = each(ctx, &op);
    if (rc) return rc;
  }
  return KV_OK;
}
