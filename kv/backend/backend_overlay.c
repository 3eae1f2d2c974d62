/*
** kv/backend/backend_overlay.c: the client-side overlay of kv/backend/backend_overlay.h. A scan handle of
** the adapter wraps the backend's; with no overlay op for what the read covers, it passes
** every call through. Otherwise, at open, the overlay's relevant ops (families read, inside
** the key ranges, the projected qualifiers; for a get, the row) are copied out of the batch
** (the batch may grow or be freed afterwards: later ops stay unseen, as kv's overlay), sorted
** by row in the scan's order and then by batch order, and merged with the backend's rows at
** each scan_next.
**
** Not here: the backend under it, the filter expression (kv/backend/backend_filter.c).
*/
#include "kv/backend/backend_overlay.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kv/util/cell.h"
#include "kv/util/status.h"

typedef struct ov_backend {
  kv_backend be;  /* what callers hold */
  kv_backend *in; /* the backend under it (not owned) */
} ov_backend;

#define OV(b) ((ov_backend *)(b)->impl)
#define IN(b) (OV(b)->in)

/* One relevant overlay op, copied. */
typedef struct ov_op {
  size_t row_off, qual_off, value_off; /* into the scan's bytes */
  const uint8_t *row, *qual, *value;   /* resolved once collecting is over */
  uint32_t row_len, qual_len, value_len; /* lengths */
  uint32_t fi;                         /* index of the family in the scan's family_ids */
  int type;                            /* enum kv_cell_type (never KV_DELETE_VERSION) */
  int64_t ts;                          /* timestamp, KV_TS_NOW resolved */
  uint32_t seq;                        /* batch order */
} ov_op;

/* A candidate cell of a merged row. */
typedef struct ov_cell {
  uint32_t fi;          /* family index */
  const uint8_t *qual;  /* qualifier */
  uint32_t qual_len;    /* its length */
  int64_t ts;           /* timestamp */
  const uint8_t *value; /* value */
  uint32_t value_len;   /* its length */
  bool alive;           /* not masked or replaced */
} ov_cell;

typedef struct ov_scan {
  kv_backend_scan *in;   /* the backend's scan, or NULL (a get that found nothing) */
  bool merging;          /* overlay ops to merge; false: calls pass through */
  bool reverse;          /* descending keys */
  uint32_t fam[KV_SCAN_MAX_FAMILIES]; /* the family ids read, in the scan's order */
  uint32_t n_fam;        /* their count */
  int64_t ttl_ms[KV_SCAN_MAX_FAMILIES]; /* merging: each family's TTL (0: none) */
  int64_t now;           /* merging: the clock at open (KV_TS_NOW, TTL) */
  kv_filter_fn filter; void *filter_ctx; /* the callback filter, applied after merging */
  const kv_filter_expr *fx; /* the expression, likewise (must outlive the scan) */
  uint64_t limit, out;   /* rows to hand out at most (0: all), handed out */
  uint8_t *bytes;        /* copied row keys, qualifiers and values */
  size_t n_bytes, cap_bytes; /* used, room */
  ov_op *ops;            /* relevant ops, sorted by (row in scan order, seq) */
  uint32_t n_ops, cap_ops; /* count, room */
  uint32_t at;           /* next op to merge */
  kv_row peek;           /* the backend's next row, when have_peek */
  bool have_peek, in_done; /* a row is peeked; the backend has no more */
  ov_cell *cells;        /* candidates of the row being merged */
  uint32_t n_cells, cap_cells; /* count, room */
  kv_cell_view *views;   /* the merged row's cells */
  uint32_t cap_views;    /* room */
  bool fail_nomem;       /* an allocation failed while collecting */
} ov_scan;

/* ---- Collecting the overlay's ops ------------------------------------------------------ */
static size_t put_bytes(ov_scan *s, const uint8_t *p, uint32_t n) {
  if (s->n_bytes + n > s->cap_bytes) {
    size_t cap = s->cap_bytes ? s->cap_bytes * 2 : 1024;
    while (cap < s->n_bytes + n) cap *= 2;
    uint8_t *nb = realloc(s->bytes, cap);
    if (!nb) {
      s->fail_nomem = true;
      return 0;
    }
    s->bytes = nb;
    s->cap_bytes = cap;
  }
  size_t off = s->n_bytes;
  if (n) memcpy(s->bytes + off, p, n);
  s->n_bytes += n;
  return off;
}

static bool in_ranges(const kv_scan_options *o, const uint8_t *k, uint32_t n) {
  if (o->n_ranges == 0) return true;
  for (uint32_t i = 0; i < o->n_ranges; i++) {
    const kv_range *r = &o->ranges[i];
    if (r->start) {
      int c = kv_bytes_cmp(k, n, r->start, r->start_len);
      if (c < 0 || (c == 0 && !r->start_inclusive)) continue;
    }
    if (r->end) {
      int c = kv_bytes_cmp(k, n, r->end, r->end_len);
      if (c > 0 || (c == 0 && !r->end_inclusive)) continue;
    }
    return true;
  }
  return false;
}

/* Whether a put or column tombstone of qualifier q in family fid is read (the projection). */
static bool projected(const kv_scan_options *o, uint32_t fid, const uint8_t *q, uint32_t n) {
  for (uint32_t i = 0; i < o->n_qualifier_sets; i++) {
    const kv_qualifier_set *qs = &o->qualifiers[i];
    if (qs->family_id != fid) continue;
    for (uint32_t k = 0; k < qs->n_quals; k++)
      if (kv_bytes_cmp(qs->quals[k], qs->qual_lens[k], q, n) == 0) return true;
    return false;
  }
  return true; /* no projection for the family: every qualifier */
}

typedef struct collect_ctx {
  ov_scan *s;                  /* the scan */
  const kv_scan_options *o;    /* its options */
  const uint8_t *row;          /* a get: its row key (else NULL: the ranges decide) */
  uint32_t row_len;            /* its length */
  int64_t now;                 /* KV_TS_NOW's value */
  uint32_t seq;                /* ops walked */
  bool delete_version;         /* a relevant KV_DELETE_VERSION was met */
} collect_ctx;

static int collect(void *ctx, const kv_batch_op *op) {
  collect_ctx *c = ctx;
  ov_scan *s = c->s;
  uint32_t seq = c->seq++;
  uint32_t fi = 0;
  while (fi < s->n_fam && s->fam[fi] != op->family_id) fi++;
  if (fi == s->n_fam) return 0;
  if (c->row ? kv_bytes_cmp(op->row, op->row_len, c->row, c->row_len) != 0
             : !in_ranges(c->o, op->row, op->row_len))
    return 0;
  if (op->type != KV_DELETE_FAMILY && !projected(c->o, op->family_id, op->qual, op->qual_len))
    return 0;
  if (op->type == KV_DELETE_VERSION) {
    c->delete_version = true;
    return 1;
  }
  if (s->n_ops == s->cap_ops) {
    uint32_t cap = s->cap_ops ? s->cap_ops * 2 : 32;
    ov_op *no = realloc(s->ops, cap * sizeof *no);
    if (!no) return s->fail_nomem = true, 1;
    s->ops = no;
    s->cap_ops = cap;
  }
  ov_op *x = &s->ops[s->n_ops];
  memset(x, 0, sizeof *x);
  x->row_off = put_bytes(s, op->row, op->row_len);
  x->qual_off = put_bytes(s, op->qual, op->qual_len);
  x->value_off = put_bytes(s, op->value, op->type == KV_PUT ? op->value_len : 0);
  if (s->fail_nomem) return 1;
  x->row_len = op->row_len;
  x->qual_len = op->qual_len;
  x->value_len = op->type == KV_PUT ? op->value_len : 0;
  x->fi = fi;
  x->type = op->type;
  x->ts = op->ts == KV_TS_NOW ? c->now : op->ts;
  x->seq = seq;
  s->n_ops++;
  return 0;
}

/* <0 when x comes before y: by row in the scan's order, then in batch order. */
static int cmp_op(const ov_op *x, const ov_op *y, bool reverse) {
  int c = kv_bytes_cmp(x->row, x->row_len, y->row, y->row_len);
  if (c) return reverse ? -c : c;
  return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Resolve the ops' pointers and sort them (cmp_op; a bottom-up merge sort, so that the
** direction needs no global). */
static void sort_ops(ov_scan *s) {
  for (uint32_t i = 0; i < s->n_ops; i++) {
    s->ops[i].row = s->bytes + s->ops[i].row_off;
    s->ops[i].qual = s->bytes + s->ops[i].qual_off;
    s->ops[i].value = s->bytes + s->ops[i].value_off;
  }
  if (s->n_ops < 2) return;
  ov_op *tmp = malloc(s->n_ops * sizeof *tmp);
  if (!tmp) {
    s->fail_nomem = true;
    return;
  }
  for (uint32_t w = 1; w < s->n_ops; w *= 2) {
    for (uint32_t lo = 0; lo < s->n_ops; lo += 2 * w) {
      uint32_t mid = lo + w < s->n_ops ? lo + w : s->n_ops;
      uint32_t hi = lo + 2 * w < s->n_ops ? lo + 2 * w : s->n_ops;
      uint32_t i = lo, j = mid, k = lo;
      while (i < mid && j < hi) tmp[k++] = cmp_op(&s->ops[j], &s->ops[i], s->reverse) < 0 ? s->ops[j++] : s->ops[i++];
      while (i < mid) tmp[k++] = s->ops[i++];
      while (j < hi) tmp[k++] = s->ops[j++];
    }
    memcpy(s->ops, tmp, s->n_ops * sizeof *tmp);
  }
  free(tmp);
}

/* The backend's clock for KV_TS_NOW: a timestamp snapshot is one; else the wall clock. */
static int64_t clock_of(kv_backend *in) {
  if (in->caps.snapshot == KV_BE_SNAPSHOT_TIMESTAMP) {
    uint64_t t = 0;
    if (kv_be_snapshot_acquire(in, &t) == KV_OK) {
      kv_be_snapshot_release(in, t);
      return (int64_t)t;
    }
  }
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Set s up for o's overlay: the relevant ops collected and sorted (s->merging when any), or
** the refusal of what the merge cannot do. row: a get's key, else NULL. */
static int prepare(kv_backend *be, ov_scan *s, const kv_scan_options *o, const uint8_t *row,
                   uint32_t row_len) {
  s->reverse = o->reverse;
  s->n_fam = o->n_families < KV_SCAN_MAX_FAMILIES ? o->n_families : KV_SCAN_MAX_FAMILIES;
  if (o->n_families > KV_SCAN_MAX_FAMILIES)
    return kv_error(KV_ERR_INVALID, "scan: %u families, over the maximum of %u", o->n_families,
                    KV_SCAN_MAX_FAMILIES);
  if (s->n_fam) memcpy(s->fam, o->family_ids, s->n_fam * sizeof *s->fam);
  if (!o->overlay || kv_batch_count(o->overlay) == 0) return KV_OK;
  s->now = clock_of(IN(be));
  collect_ctx c = {s, o, row, row_len, s->now, 0, false};
  int rc = kv_backend_batch_each(o->overlay, collect, &c);
  if (s->fail_nomem) return kv_error(KV_ERR_NOMEM, "overlay: out of memory");
  if (rc && !c.delete_version) return rc;
  if (s->n_ops == 0 && !c.delete_version) return KV_OK;
  const char *why = c.delete_version ? "a DELETE_VERSION op"
                    : o->max_versions > 1 ? "max_versions above 1"
                    : o->ts_min || o->ts_max ? "a time range"
                    : o->as_of ? "as_of"
                                : NULL;
  for (uint32_t i = 0; i < s->n_fam && !why; i++) { /* the families' TTLs */
    kv_family_options fo;
    rc = kv_be_family_info(IN(be), s->fam[i], &fo);
    if (rc) return rc;
    /* VERSIONS above 1 changes nothing here: one version is read (max_versions <= 1), and
       no op uncovers an older one (DELETE_VERSION is refused) */
    s->ttl_ms[i] = fo.ttl_sec > INT64_MAX / 1000 ? INT64_MAX : fo.ttl_sec * 1000;
  }
  if (why) {
    char what[160];
    snprintf(what, sizeof what, "a read of a transaction's own writes with %s", why);
    return kv_be_unsupported(be, what);
  }
  sort_ops(s);
  if (s->fail_nomem) return kv_error(KV_ERR_NOMEM, "overlay: out of memory");
  s->merging = true;
  return KV_OK;
}

/* ---- Merging one row ---------------------------------------------------------------------- */
static bool add_cell(ov_scan *s, ov_cell c) {
  if (s->n_cells == s->cap_cells) {
    uint32_t cap = s->cap_cells ? s->cap_cells * 2 : 32;
    ov_cell *nc = realloc(s->cells, cap * sizeof *nc);
    if (!nc) return false;
    s->cells = nc;
    s->cap_cells = cap;
  }
  s->cells[s->n_cells++] = c;
  return true;
}

static bool same_col(const ov_cell *c, uint32_t fi, const uint8_t *q, uint32_t n) {
  return c->fi == fi && kv_bytes_cmp(c->qual, c->qual_len, q, n) == 0;
}

static int cmp_view_fi(const ov_scan *s, const kv_cell_view *a, const kv_cell_view *b) {
  uint32_t fa = 0, fb = 0;
  while (fa < s->n_fam && s->fam[fa] != a->family_id) fa++;
  while (fb < s->n_fam && s->fam[fb] != b->family_id) fb++;
  if (fa != fb) return fa < fb ? -1 : 1;
  return kv_bytes_cmp(a->qual, a->qual_len, b->qual, b->qual_len);
}

/* Merge committed row `in` (NULL: none) with ops[from, to) of its key into *out. */
static int merge_row(ov_scan *s, const kv_row *in, uint32_t from, uint32_t to, kv_row *out) {
  s->n_cells = 0;
  for (uint32_t i = 0; in && i < in->n_cells; i++) {
    const kv_cell_view *v = &in->cells[i];
    uint32_t fi = 0;
    while (fi < s->n_fam && s->fam[fi] != v->family_id) fi++;
    if (!add_cell(s, (ov_cell){fi, v->qual, v->qual_len, v->ts, v->value, v->value_len, true}))
      return kv_error(KV_ERR_NOMEM, "overlay: out of memory");
  }
  for (uint32_t k = from; k < to; k++) {
    const ov_op *op = &s->ops[k];
    for (uint32_t i = 0; i < s->n_cells; i++) {
      ov_cell *c = &s->cells[i];
      if (!c->alive || c->fi != op->fi) continue;
      bool col = op->type == KV_DELETE_FAMILY || same_col(c, op->fi, op->qual, op->qual_len);
      if (!col) continue;
      if (op->type == KV_PUT ? c->ts == op->ts : c->ts <= op->ts) c->alive = false;
    }
    if (op->type == KV_PUT &&
        !add_cell(s, (ov_cell){op->fi, op->qual, op->qual_len, op->ts, op->value,
                               op->value_len, true}))
      return kv_error(KV_ERR_NOMEM, "overlay: out of memory");
  }
  /* one version per column: the newest alive cell */
  uint32_t n = 0;
  if (s->cap_views < s->n_cells) {
    kv_cell_view *nv = realloc(s->views, s->n_cells * sizeof *nv);
    if (!nv) return kv_error(KV_ERR_NOMEM, "overlay: out of memory");
    s->views = nv;
    s->cap_views = s->n_cells;
  }
  for (uint32_t i = 0; i < s->n_cells; i++) {
    const ov_cell *c = &s->cells[i];
    if (!c->alive) continue;
    bool newest = true;
    for (uint32_t j = 0; j < s->n_cells && newest; j++) {
      const ov_cell *d = &s->cells[j];
      if (j == i || !d->alive || !same_col(d, c->fi, c->qual, c->qual_len)) continue;
      newest = d->ts < c->ts || (d->ts == c->ts && j < i);
    }
    /* past the TTL: hidden (an older version of the column would be too) */
    if (!newest || (s->ttl_ms[c->fi] && s->now - c->ts >= s->ttl_ms[c->fi])) continue;
    kv_cell_view v = {s->fam[c->fi], c->qual, c->qual_len, c->ts, c->value, c->value_len};
    uint32_t at = n++; /* insertion sort: family order, then qualifier */
    while (at > 0 && cmp_view_fi(s, &s->views[at - 1], &v) > 0) {
      s->views[at] = s->views[at - 1];
      at--;
    }
    s->views[at] = v;
  }
  out->cells = s->views;
  out->n_cells = n;
  return KV_OK;
}

/* ---- Operations ---------------------------------------------------------------------------- */
static bool passes(const ov_scan *s, const kv_row *r) {
  if (r->n_cells == 0) return false; /* no visible cell: no row (kv/kv.h) */
  if (s->filter && !s->filter(s->filter_ctx, r)) return false;
  return !s->fx || kv_filter_expr_eval((void *)s->fx, r);
}

static int o_scan_open(kv_backend *be, const kv_scan_options *o, const kv_backend_read *x,
                       kv_backend_scan **out) {
  if (!o || !out) return kv_error(KV_MISUSE, "scan_open: NULL argument");
  *out = NULL;
  ov_scan *s = calloc(1, sizeof *s);
  if (!s) return kv_error(KV_ERR_NOMEM, "scan_open: out of memory");
  int rc = prepare(be, s, o, NULL, 0);
  if (!rc && s->merging && x && x->resume_after)
    rc = kv_be_unsupported(be, "a read of a transaction's own writes with a resume key");
  kv_scan_options oo = *o;
  oo.overlay = NULL;
  const kv_backend_read *xx = x;
  if (!rc && s->merging) { /* the filter and the limit apply to the merged rows */
    s->filter = o->filter;
    s->filter_ctx = o->filter_ctx;
    s->fx = x ? x->filter_expr : NULL;
    s->limit = o->limit;
    oo.filter = NULL;
    oo.filter_ctx = NULL;
    oo.limit = 0;
    xx = NULL;
    if (s->fx) rc = kv_filter_expr_check(s->fx);
  }
  if (!rc) rc = kv_be_scan_open(IN(be), &oo, xx, &s->in);
  if (rc) {
    kv_be_scan_close(IN(be), s->in);
    free(s->ops);
    free(s->bytes);
    free(s);
    return rc;
  }
  *out = (kv_backend_scan *)s;
  return KV_OK;
}

static int o_scan_next(kv_backend *be, kv_backend_scan *h, kv_row *row) {
  ov_scan *s = (ov_scan *)h;
  if (!s->merging) return s->in ? kv_be_scan_next(IN(be), s->in, row) : KV_ERR_NOTFOUND;
  for (;;) {
    if (s->limit && s->out == s->limit) return KV_ERR_NOTFOUND;
    if (!s->have_peek && !s->in_done) {
      int rc = s->in ? kv_be_scan_next(IN(be), s->in, &s->peek) : KV_ERR_NOTFOUND;
      if (rc == KV_ERR_NOTFOUND) s->in_done = true;
      else if (rc) return rc;
      else s->have_peek = true;
    }
    bool ops_left = s->at < s->n_ops;
    if (!s->have_peek && !ops_left) return KV_ERR_NOTFOUND;
    int c = 0; /* <0: the backend's row first, >0: the overlay's, 0: both */
    if (!s->have_peek) c = 1;
    else if (!ops_left) c = -1;
    else {
      const ov_op *op = &s->ops[s->at];
      c = kv_bytes_cmp(s->peek.key, s->peek.key_len, op->row, op->row_len);
      if (s->reverse) c = -c;
    }
    if (c < 0) { /* no overlay op for this row: as the backend gave it */
      s->have_peek = false;
      *row = s->peek;
      if (!passes(s, row)) continue;
      s->out++;
      return KV_OK;
    }
    uint32_t from = s->at, to = from + 1;
    while (to < s->n_ops && kv_bytes_cmp(s->ops[to].row, s->ops[to].row_len, s->ops[from].row,
                                         s->ops[from].row_len) == 0)
      to++;
    s->at = to;
    const kv_row *committed = c == 0 ? &s->peek : NULL;
    if (c == 0) s->have_peek = false;
    row->key = s->ops[from].row;
    row->key_len = s->ops[from].row_len;
    int rc = merge_row(s, committed, from, to, row);
    if (rc) return rc;
    if (!passes(s, row)) continue;
    s->out++;
    return KV_OK;
  }
}

static int o_get(kv_backend *be, const kv_scan_options *o, const void *key, size_t key_len,
                 kv_backend_scan **scan_out, kv_row *out_row) {
  if (!o || !scan_out || !out_row) return kv_error(KV_MISUSE, "get: NULL argument");
  *scan_out = NULL;
  ov_scan *s = calloc(1, sizeof *s);
  if (!s) return kv_error(KV_ERR_NOMEM, "get: out of memory");
  int rc = prepare(be, s, o, key, (uint32_t)key_len);
  kv_scan_options oo = *o;
  oo.overlay = NULL;
  kv_row in_row = {0};
  bool found = false;
  if (!rc) {
    rc = kv_be_get(IN(be), &oo, key, key_len, &s->in, &in_row);
    found = rc == KV_OK;
    if (rc == KV_ERR_NOTFOUND && s->merging) rc = KV_OK;
  }
  if (!rc && s->merging) {
    s->filter = o->filter;
    s->filter_ctx = o->filter_ctx;
    out_row->key = key;
    out_row->key_len = (uint32_t)key_len;
    rc = merge_row(s, found ? &in_row : NULL, 0, s->n_ops, out_row);
    if (!rc && !passes(s, out_row)) rc = KV_ERR_NOTFOUND;
  } else if (!rc) {
    *out_row = in_row;
  }
  if (rc && rc != KV_ERR_NOTFOUND) {
    kv_be_scan_close(IN(be), s->in);
    free(s->ops);
    free(s->bytes);
    free(s);
    return rc;
  }
  *scan_out = (kv_backend_scan *)s; /* on KV_ERR_NOTFOUND too, as kv_get */
  return rc;
}

static const kv_value_vector *o_scan_row_vectors(kv_backend *be, const kv_backend_scan *h,
                                                 uint32_t *n) {
  const ov_scan *s = (const ov_scan *)h;
  if (s->merging || !s->in) {
    *n = 0;
    return NULL;
  }
  return kv_be_scan_row_vectors(IN(be), s->in, n);
}

static void o_scan_metrics(kv_backend *be, const kv_backend_scan *h, kv_scan_metrics *out) {
  const ov_scan *s = (const ov_scan *)h;
  if (s->in) kv_be_scan_metrics(IN(be), s->in, out);
  else memset(out, 0, sizeof *out);
}

static void o_scan_close(kv_backend *be, kv_backend_scan *h) {
  ov_scan *s = (ov_scan *)h;
  kv_be_scan_close(IN(be), s->in);
  free(s->ops);
  free(s->bytes);
  free(s->cells);
  free(s->views);
  free(s);
}

/* ---- The rest: the backend's own -------------------------------------------------------- */
static int o_create_table(kv_backend *be, const char *name, const kv_family_options *families,
                          int n_families, const uint8_t *const *split_keys,
                          const uint32_t *split_lens, uint32_t n_splits) {
  return kv_be_create_table(IN(be), name, families, n_families, split_keys, split_lens,
                            n_splits);
}
static int o_alter_table(kv_backend *be, const char *name, const kv_family_options *families,
                         int n_families) {
  return kv_be_alter_table(IN(be), name, families, n_families);
}
static int o_drop_table(kv_backend *be, const char *name) { return kv_be_drop_table(IN(be), name); }
static int o_family_id(kv_backend *be, const char *table, const char *family, uint32_t *id) {
  return kv_be_family_id(IN(be), table, family, id);
}
static int o_family_info(kv_backend *be, uint32_t family_id, kv_family_options *out) {
  return kv_be_family_info(IN(be), family_id, out);
}
static int o_table_count(kv_backend *be) { return kv_be_table_count(IN(be)); }
static const char *o_table_name(kv_backend *be, int i) { return kv_be_table_name(IN(be), i); }
static int o_set_dropped_qualifiers(kv_backend *be, uint32_t family_id,
                                    const uint8_t *const *quals, const uint32_t *lens,
                                    uint32_t n) {
  return kv_be_set_dropped_qualifiers(IN(be), family_id, quals, lens, n);
}
static int o_write(kv_backend *be, const kv_batch *b, uint64_t *seq_out) {
  return kv_be_write(IN(be), b, seq_out);
}
static int o_check_and_write(kv_backend *be, const kv_backend_check *chk, const kv_batch *b,
                             bool *applied, uint64_t *seq_out) {
  return kv_be_check_and_write(IN(be), chk, b, applied, seq_out);
}
static int o_flush(kv_backend *be, const char *table) { return kv_be_flush(IN(be), table); }
static int o_snapshot_acquire(kv_backend *be, uint64_t *snap) {
  return kv_be_snapshot_acquire(IN(be), snap);
}
static void o_snapshot_release(kv_backend *be, uint64_t snap) {
  kv_be_snapshot_release(IN(be), snap);
}
static int o_split_points(kv_backend *be, uint32_t family_id, uint32_t max_chunks,
                          kv_be_split_fn each, void *ctx) {
  return kv_be_split_points(IN(be), family_id, max_chunks, each, ctx);
}
static int o_estimate(kv_backend *be, uint32_t family_id, const kv_range *range,
                      const kv_estimate_opts *opts, uint64_t *rows, uint64_t *bytes) {
  return kv_be_estimate(IN(be), family_id, range, opts, rows, bytes);
}
static int o_foreign_table(kv_backend *be, const char *name, char *msg, size_t cap) {
  return kv_be_foreign_table(IN(be), name, msg, cap);
}

static int o_family_stats(kv_backend *be, uint32_t family_id, kv_family_stats *out) {
  return kv_be_family_stats(IN(be), family_id, out);
}

static const kv_backend_ops overlay_ops = {
  .create_table = o_create_table,
  .alter_table = o_alter_table,
  .drop_table = o_drop_table,
  .family_id = o_family_id,
  .family_info = o_family_info,
  .table_count = o_table_count,
  .table_name = o_table_name,
  .set_dropped_qualifiers = o_set_dropped_qualifiers,
  .write = o_write,
  .check_and_write = o_check_and_write,
  .flush = o_flush,
  .get = o_get,
  .scan_open = o_scan_open,
  .scan_next = o_scan_next,
  .scan_row_vectors = o_scan_row_vectors,
  .scan_metrics = o_scan_metrics,
  .scan_close = o_scan_close,
  .snapshot_acquire = o_snapshot_acquire,
  .snapshot_release = o_snapshot_release,
  .split_points = o_split_points,
  .estimate = o_estimate,
  .family_stats = o_family_stats,
  .foreign_table = o_foreign_table,
};

int kv_backend_overlay_open(kv_backend *in, kv_backend **out) {
  if (!out) return kv_error(KV_MISUSE, "kv_backend_overlay_open: NULL argument");
  *out = NULL;
  if (!in) return kv_error(KV_MISUSE, "kv_backend_overlay_open: NULL argument");
  ov_backend *o = calloc(1, sizeof *o);
  if (!o) return kv_error(KV_ERR_NOMEM, "kv_backend_overlay_open: out of memory");
  o->in = in;
  o->be.ops = &overlay_ops;
  o->be.impl = o;
  o->be.local = in->local;
  o->be.caps = in->caps;
  o->be.caps.extensions |= KV_BE_EXT_OVERLAY;
  *out = &o->be;
  return KV_OK;
}

void kv_backend_overlay_close(kv_backend *be) {
  if (!be || be->ops != &overlay_ops) return;
  free(OV(be));
}
