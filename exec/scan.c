/*
** exec/scan.c: the scan operator. Opens one scan through the session's storage backend
** (kv/backend.h) for a plan_scan (planner/plan.h): the key ranges (none = full scan;
** several = skip scan; a NOTHING plan opens no scan at all), the families chosen by the
** planner, reverse order, the pushed-down typed filter (plan_filter_eval as the kv filter
** callback, so rejected rows are never decoded; on a backend without callback filters, the
** serializable expression it can take, the whole filter kept here as the residual) and the
** pushed limit (counted here when the filter is). Each row handed out is decoded with
** exec/rowcodec.h into the needed value slots only, and counted as assembled.
**
** An index scan (ps->index set, issue 7) scans the index's kv table instead: each index
** row is decoded with the index row codec (exec/index.h) into the data-row slots the index
** holds (PK, indexed and INCLUDE columns); for an uncovered index, exec_scan_lookup then
** reads the data row by its PK (kv_get: a point lookup, bloom filters consulted, through
** the transaction's overlay) and decodes the remaining needed columns. A data row that no
** longer exists is skipped. The lookups' kv metrics are summed per family for EXPLAIN
** ANALYZE. On a row-atomic backend an index row marked UNVERIFIED (left by a cut write,
** exec/index_phase.c) is repaired before use (exec/index_repair.c): replaced by the verified
** row read back, or skipped as stale; the pushed filter lets such rows through and judges the
** repaired one, and the pushed limit is counted here. The local store's index scans do not
** look at the status (its writes never leave an unverified row).
**
** A table scan asks kv for value vectors (kv.h kv_scan_options.value_vectors) unless it has
** a filter or is a point lookup: a family's cells of a row taken whole from a store-file
** block then come as values by position in the qualifier projection built here, decoded
** through s->vmap.
**
** The local-only scan options (value vectors, skip scan by prefix, existence family, trace,
** interrupt, ts_per_row) are set only when the backend's capabilities have them
** (kv_backend_caps.extensions); without SKIP_PREFIX the skip scan by prefix is done here over
** a plain scan (exec/backend_caps.h), and without exact snapshots an index scan's lookups read
** the latest state.
**
** A prepared statement may lend an exec_scan_cache (exec_scan_open_cached): the row codec,
** key buffer and kv range / qualifier arrays then come from it and stay there at close.
**
** Not here: evaluation of residual terms (exec/op_query.c), writes.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalog/catalog.h"
#include "catalog/keycodec.h"
#include "exec/as_of.h"
#include "exec/backend_caps.h"
#include "exec/index.h"
#include "exec/keymap.h"
#include "exec/op.h"
#include "exec/salt_merge.h"
#include "catalog/salt.h"
#include "planner/filter.h"
#include "planner/skip_prefix.h"

int exec_kv_error(int kv_rc, exec_error *err) {
  int code;
  switch (kv_rc) {
    case KV_ERR_CORRUPT: code = EXEC_CORRUPT; break;
    case KV_ERR_IO: code = EXEC_IOERR; break;
    case KV_ERR_NOSPC: code = EXEC_FULL; break;
    case KV_ERR_LOCKED: code = EXEC_LOCKED; break;
    case KV_ERR_NOMEM: code = EXEC_NOMEM; break;
    case KV_ERR_READONLY: code = EXEC_READONLY; break;
    case KV_ERR_TOOBIG: code = EXEC_TOOBIG; break;
    case KV_ERR_NOTFOUND: code = EXEC_NOTFOUND; break;
    case KV_MISUSE: code = EXEC_MISUSE; break;
    case KV_ERR_INTERRUPTED: code = EXEC_INTERRUPT; break;
    default: code = EXEC_ERROR; break;
  }
  if (err) {
    err->code = code;
    err->offset = -1;
    snprintf(err->msg, sizeof err->msg, "%s", kv_errmsg());
  }
  return code;
}

void exec_scan_cache_free(exec_scan_cache *c) {
  if (c->table) exec_rowcodec_free(&c->rc);
  free(c->key);
  free(c->ranges);
  free(c->qbytes);
  free(c->qp);
  free(c->ql);
  memset(c, 0, sizeof *c);
}

static int nomem(exec_error *err) {
  if (err) {
    err->code = EXEC_NOMEM;
    err->offset = -1;
    snprintf(err->msg, sizeof err->msg, "out of memory");
  }
  return EXEC_NOMEM;
}

/* The scan's decoder and buffers: from the cache (built or grown when needed) or owned. */
static int scan_buffers(exec_scan_state *s, const plan_scan *ps, exec_error *err) {
  exec_scan_cache *c = s->cache;
  const cat_table *t = ps->table;
  uint32_t n = ps->ranges.n_ranges + ps->skip_outer.n_ranges; /* a skip scan's outer ranges
                                                                 follow its suffixes */
  if (!c || t->n_dynamic) { /* a statement's table with dynamic columns is its own: the
                               cache knows tables by address and column count only */
    s->cache = NULL;
    int rc = exec_rowcodec_init(&s->rc, t, err);
    if (rc) return rc;
    s->rc_ok = true;
    s->rcp = &s->rc;
    s->key = malloc(CAT_KEY_MAX);
    s->ranges = n ? calloc(n, sizeof *s->ranges) : NULL;
    if (!s->key || (n && !s->ranges)) return nomem(err);
    return EXEC_OK;
  }
  if (c->table != t || c->rc.n_columns != t->n_columns) {
    if (c->table) exec_rowcodec_free(&c->rc);
    c->table = NULL;
    int rc = exec_rowcodec_init(&c->rc, t, err);
    if (rc) return rc;
    c->table = t;
  }
  s->rcp = &c->rc;
  if (!c->key && !(c->key = malloc(CAT_KEY_MAX))) return nomem(err);
  s->key = c->key;
  if (n > c->cap_ranges) {
    free(c->ranges);
    c->cap_ranges = 0;
    if (!(c->ranges = calloc(n, sizeof *c->ranges))) return nomem(err);
    c->cap_ranges = n;
  }
  s->ranges = n ? c->ranges : NULL;
  if (t->n_columns > c->cap_cols) {
    free(c->qbytes);
    free(c->qp);
    free(c->ql);
    c->cap_cols = 0;
    c->qbytes = malloc((size_t)t->n_columns * 2 + 2);
    c->qp = malloc(((size_t)t->n_columns + 1) * sizeof *c->qp);
    c->ql = malloc(((size_t)t->n_columns + 1) * sizeof *c->ql);
    if (!c->qbytes || !c->qp || !c->ql) return nomem(err);
    c->cap_cols = t->n_columns;
  }
  return EXEC_OK;
}

int exec_scan_open(exec_scan_state *s, kv_backend *be, const plan_scan *ps,
                   const kv_batch *overlay, exec_error *err) {
  return exec_scan_open_cached(s, be, ps, overlay, NULL, NULL, err);
}

/* kv_scan_options.existence_family for a read of the table's families fam[0..n): 1 + the
** position of the hidden key family (table family 0, whose marker cells only say that a row
** exists) when other families are read too, else 0. kv then seeks the key family in a point
** read only when the row has no cell in the others (kv/kv.h). */
static uint32_t existence_family(const int *fam, int n) {
  if (n < 2) return 0;
  for (int f = 0; f < n; f++)
    if (fam[f] == 0) return (uint32_t)f + 1;
  return 0;
}

/* The kv filter callback of an index scan (ctx: the scan state): an unverified row passes, to
** be judged by ps->filter once repaired (exec_scan_next); others as plan_filter_eval. */
static bool index_filter(void *ctx, const kv_row *row) {
  const exec_scan_state *s = ctx;
  return exec_index_row_unverified(s->ic, row) || plan_filter_eval(s->ps->filter, row);
}

/* Hand ps->filter to the backend as its capabilities allow (kv_backend_caps.filters): as the
** kv filter callback (the local backend: rejected rows are never decoded); else as the
** serializable expression of the terms it can say (planner/filter.h plan_filter_expr),
** with the whole filter kept here as the residual, evaluated on every row handed out, and
** the limit counted here too. */
static int pushed_filter(exec_scan_state *s, kv_backend *be, kv_scan_options *o,
                         kv_backend_read *rd, exec_error *err) {
  const plan_scan *ps = s->ps;
  if (be->caps.filters & KV_BE_FILTER_CALLBACK) {
    o->filter = s->status ? index_filter : plan_filter_eval;
    o->filter_ctx = s->status ? (void *)s : (void *)ps->filter;
    return EXEC_OK;
  }
  if (o->skip_prefix && o->skip_prefix->rows_per_prefix)
    return exec_error_set(err, EXEC_ERROR,
                          "the first rows of each key prefix under a filter need a backend "
                          "that runs callback filters (backend %s does not)", be->caps.name);
  s->residual = true;
  if (o->limit) s->own_limit = o->limit;
  o->limit = 0;
  if (!(be->caps.filters & KV_BE_FILTER_EXPR)) return EXEC_OK;
  enum { FX_CAP = 256 }; /* terms past it stay with the residual alone */
  s->fx = malloc(FX_CAP * sizeof *s->fx);
  if (!s->fx) return nomem(err);
  /* an index scan: unverified rows pass too (the residual judges them once repaired):
     OR(the marker's value > '', terms) */
  uint32_t lead = s->status ? 2 : 0;
  if (plan_filter_expr(ps->filter, s->fx + lead, FX_CAP - lead, &s->fxe.n_nodes)) {
    if (lead) {
      s->fx[0] = (kv_fx_node){.kind = KV_FX_OR, .n_children = 2};
      s->fx[1] = (kv_fx_node){.kind = KV_FX_CMP, .cmp = KV_FX_GT,
                              .family_id = s->ic->key_family_id,
                              .qual = (const uint8_t *)CAT_MARKER_QUALIFIER, .qual_len = 1,
                              .value = (const uint8_t *)"", .value_len = 0};
      s->fxe.n_nodes += lead;
    }
    s->fxe.nodes = s->fx;
    rd->filter_expr = &s->fxe;
  }
  return EXEC_OK;
}

int exec_scan_open_cached(exec_scan_state *s, kv_backend *be, const plan_scan *ps,
                          const kv_batch *overlay, exec_scan_cache *cache,
                          const int16_t *slots, exec_error *err) {
  /* ORDER SCAN_STATE (exec/op.h): the metrics last, only their counters zeroed */
  _Static_assert(offsetof(exec_scan_state, m) + sizeof(kv_scan_metrics) ==
                     offsetof(exec_scan_state, lm),
                 "exec_scan_state: m then lm");
  memset(s, 0, offsetof(exec_scan_state, m));
  exec_metrics_zero(&s->m);
  exec_metrics_zero(&s->lm);
  s->vmap.n_sets = 0; /* the rest of vmap is written below before it is read */
  s->vmap.prep = NULL;
  s->ps = ps;
  s->be = be;
  s->overlay = overlay;
  s->cache = cache;
  s->keep_key = !cache || ps->index;
  int rc = scan_buffers(s, ps, err);
  if (rc) return rc;
  cache = s->cache; /* NULL when scan_buffers did not use it */
  /* the decoder's tables for this scan's rows (table rows, or an index's looked-up rows) */
  if (ps->index) exec_rowcodec_prepare(s->rcp, ps->lookup ? ps->lookup_need : NULL, NULL);
  else exec_rowcodec_prepare(s->rcp, ps->need, slots);
  if (ps->index) {
    /* no catalog: expression keys are bound against the table alone, as the planner
       bound them (planner/index_expr.h) */
    s->ic = calloc(1, sizeof *s->ic);
    if (!s->ic) return nomem(err);
    rc = exec_index_codec_init(s->ic, NULL, ps->table, ps->index, err);
    if (rc) return rc;
    /* only a row-atomic backend's writes leave unverified rows (exec/index_phase.c): the
       local store's index scans do not look (docs/INDEXES.md) */
    s->status = be->caps.atomicity == KV_BE_ATOMIC_ROW;
  }
  if (ps->ranges.kind == PLAN_SCAN_NOTHING) {
    s->done = true;
    return EXEC_OK;
  }
  kv_scan_options o;
  memset(&o, 0, sizeof o);
  const uint32_t ext = be->caps.extensions; /* what the backend reads beyond the portable */
  if (ext & KV_BE_EXT_INTERRUPT) o.interrupt = exec_interrupt_flag();
  if (ext & KV_BE_EXT_TRACE) o.trace = exec_trace_current();
  o.family_ids = ps->family_ids;
  o.n_families = (uint32_t)ps->n_families;
  if (!ps->index && (ext & KV_BE_EXT_EXISTENCE_FAMILY))
    o.existence_family = existence_family(ps->families, ps->n_families);
  uint32_t n = ps->ranges.n_ranges;
  if (n) {
    for (uint32_t i = 0; i < n; i++) {
      const plan_key_range *r = &ps->ranges.ranges[i];
      s->ranges[i].start = r->start;
      s->ranges[i].start_len = r->start_len;
      s->ranges[i].start_inclusive = r->start_incl;
      s->ranges[i].end = r->end;
      s->ranges[i].end_len = r->end_len;
      s->ranges[i].end_inclusive = r->end_incl;
    }
    o.ranges = s->ranges;
    o.n_ranges = n;
  }
  kv_skip_prefix skip; /* copied by kv_scan_open */
  if (ps->ranges.kind == PLAN_SCAN_PREFIX_SKIP) {
    /* ranges over key columns 2..n: kv appends them to each leading prefix it finds */
    skip = (kv_skip_prefix){plan_skip_prefix_len, (void *)&ps->skip_key, s->ranges, n,
                            ps->prefix_first ? 1 : 0};
    /* a backend counts a prefix's first rows among the rows it hands out: with a filter it
       cannot run whole (no callback), or index rows the executor may yet drop (unverified,
       repaired here), the executor counts them */
    bool counted_here = ps->prefix_first && (s->status || (ps->filter &&
                        !(be->caps.filters & KV_BE_FILTER_CALLBACK)));
    if ((ext & KV_BE_EXT_SKIP_PREFIX) && !counted_here) {
      o.skip_prefix = &skip;
    } else { /* the executor keeps the rows the skip scan would hand out (backend_caps.h) */
      rc = exec_skip_emul_init(&s->skip, &skip, err);
      if (rc) return rc;
    }
    o.ranges = NULL;
    o.n_ranges = 0;
    const plan_scan_ranges *out = &ps->skip_outer;
    if (out->n_ranges) { /* the key ranges the prefixes lie in */
      for (uint32_t i = 0; i < out->n_ranges; i++) {
        const plan_key_range *r = &out->ranges[i];
        kv_range *k = &s->ranges[n + i];
        *k = (kv_range){0};
        k->start = r->start;
        k->start_len = r->start_len;
        k->start_inclusive = r->start_incl;
        k->end = r->end;
        k->end_len = r->end_len;
        k->end_inclusive = r->end_incl;
      }
      o.ranges = s->ranges + n;
      o.n_ranges = out->n_ranges;
    }
  }
  /* qualifier projection: in each non-key family only the columns the query reads */
  const cat_table *t = ps->table;
  kv_qualifier_set qs[PLAN_MAX_FAMILIES];
  uint8_t *qbytes;
  const uint8_t **qp;
  uint32_t *ql;
  if (cache) {
    qbytes = cache->qbytes;
    qp = cache->qp;
    ql = cache->ql;
  } else {
    qbytes = malloc((size_t)t->n_columns * 2 + 2);
    qp = malloc(((size_t)t->n_columns + 1) * sizeof *qp);
    ql = malloc(((size_t)t->n_columns + 1) * sizeof *ql);
    if (!qbytes || !qp || !ql) {
      free(qbytes);
      free(qp);
      free(ql);
      return nomem(err);
    }
  }
  uint32_t n_qs = 0, k = 0;
  for (int f = 0; f < ps->n_families && ps->read && !ps->index; f++) {
    if (ps->families[f] == 0) continue;
    uint32_t first = k;
    for (int c = 0; c < t->n_columns; c++) {
      const cat_column *col = &t->columns[c];
      if (!ps->read[c] || col->pk_pos >= 0 || col->family != ps->families[f]) continue;
      size_t len;
      qp[k] = cat_col_qual(col, qbytes + 2 * k, &len); /* a dynamic column's: 00 + name */
      ql[k] = (uint32_t)len;
      if (k < 64) s->vmap.col[k] = (int16_t)c;
      k++;
    }
    if (k == first) continue;
    if (k <= 64) {
      s->vmap.fid[n_qs] = ps->family_ids[f];
      s->vmap.start[n_qs] = (uint8_t)first;
      s->vmap.n[n_qs] = (uint8_t)(k - first);
    }
    qs[n_qs].family_id = ps->family_ids[f];
    qs[n_qs].quals = qp + first;
    qs[n_qs].qual_lens = ql + first;
    qs[n_qs].n_quals = k - first;
    n_qs++;
  }
  o.qualifiers = qs;
  o.n_qualifier_sets = n_qs;
  /* rows as value vectors (kv.h): decoded through vmap, the projection just built; not
     with a filter (plan_filter_eval reads views), nor for point lookups, whose one row a
     key does not repay preparing the map at each open */
  /* a salted table's (or salted index's) buckets are merged here (exec/salt_merge.h): rows,
     not vectors */
  int buckets = ps->index ? ps->index->salt_buckets : t->salt_buckets;
  bool salted = buckets > 0;
  s->vmap.n_sets = k <= 64 && ps->ranges.kind != PLAN_SCAN_POINT && !t->n_dynamic && !salted
                       ? n_qs : 0;
  o.value_vectors = s->vmap.n_sets > 0 && !ps->filter && (ext & KV_BE_EXT_VALUE_VECTORS);
  if (o.value_vectors) exec_vec_map_prepare(s->rcp, &s->vmap);
  o.reverse = ps->reverse;
  o.ts_min = ps->ts_min; /* a ROW_TIMESTAMP table's time range (planner/time_range.h) */
  o.ts_max = ps->ts_max;
  o.ts_per_row = (ps->ts_min || ps->ts_max) && (ext & KV_BE_EXT_TS_PER_ROW);
  o.as_of = s->as_of = exec_as_of_current(); /* AS OF (exec/as_of.c) */
  o.overlay = overlay;
  o.limit = ps->kv_limit;
  if (s->skip.on || s->status) {
    /* the limit counts the rows the emulated skip scan keeps, or the index rows left once
       the unverified ones are repaired (stale ones are dropped here) */
    s->own_limit = o.limit;
    o.limit = 0;
  }
  if (ps->index && ps->lookup) { /* the data rows must be read at the index rows' snapshot,
                                    not at the latest commit (writes between two steps would
                                    give rows that never existed): pinned until close */
    if (exec_backend_snapshot(be, &s->snap) != KV_OK) s->snap = 0;
    o.snapshot = s->snap;
  }
  kv_backend_read rd = {0};
  rc = ps->filter ? pushed_filter(s, be, &o, &rd, err) : EXEC_OK;
  const kv_backend_read *x = rd.filter_expr ? &rd : NULL;
  int krc = rc ? KV_OK
            : salted ? exec_salt_scan_open(be, buckets, &o, x, ps->ranges.kind == PLAN_SCAN_POINT,
                                           ps->salt_lo, ps->salt_hi, &s->salt)
                     : kv_be_scan_open(be, &o, x, &s->kv);
  if (!cache) {
    free(qbytes);
    free(qp);
    free(ql);
  }
  if (rc) return rc;
  if (krc != KV_OK) return exec_kv_error(krc, err);
  return EXEC_OK;
}

/* The residual filter and the emulated skip scan on one row a backend handed out: true
** when it passes (counted); *rc an error of the skip scan. */
static bool residual_pass(exec_scan_state *s, const kv_row *r, int *rc, exec_error *err) {
  *rc = EXEC_OK;
  if (s->residual && !plan_filter_eval(s->ps->filter, r)) {
    s->rows_rejected++;
    return false;
  }
  if (s->skip.on && !exec_skip_emul_keep(&s->skip, r->key, r->key_len, rc, err)) return false;
  s->rows_out++;
  return true;
}

/* The next row of the backend scan, or of the salted table's merged bucket scans. */
static inline int scan_next_row(exec_scan_state *s, kv_row *r) {
  return s->salt ? exec_salt_scan_next(s->salt, r) : kv_be_scan_next(s->be, s->kv, r);
}

/* An unverified index row r: repaired from its data row (exec/index.h). EXEC_ROW with *r the
** repaired row, EXEC_DONE when it was stale (deleted), or an error. */
static int unverified_row(exec_scan_state *s, kv_row *r, exec_error *err) {
  if (!s->repair) {
    int rc = exec_index_repair_open(s->ic, s->be, s->overlay, &s->repair, err);
    if (rc) return rc;
  }
  return exec_index_repair_row(s->repair, r->key, r->key_len, false, r, err);
}

int exec_scan_next(exec_scan_state *s, cat_value *row, exec_error *err) {
  if (s->done || (!s->kv && !s->salt)) return EXEC_DONE;
  if (s->own_limit && s->rows_out == s->own_limit) {
    s->done = true;
    return EXEC_DONE;
  }
  kv_row r;
  int krc, prc = EXEC_OK;
  bool own = s->residual || s->skip.on || s->own_limit;
  for (;;) {
    krc = scan_next_row(s, &r);
    if (krc != KV_OK) break;
    if (s->status && exec_index_row_unverified(s->ic, &r)) { /* read repair (index_repair.c) */
      int urc = unverified_row(s, &r, err);
      if (urc == EXEC_DONE) continue; /* stale: deleted */
      if (urc != EXEC_ROW) {
        prc = urc;
        break;
      }
      /* the callback filter let it through unjudged (index_filter) */
      if (!s->residual && s->ps->filter && !plan_filter_eval(s->ps->filter, &r)) continue;
    }
    if (!own || residual_pass(s, &r, &prc, err) || prc) break;
  }
  if (prc) {
    s->done = true;
    return prc;
  }
  if (krc == KV_ERR_NOTFOUND) { /* the metrics are taken once, at exec_scan_close */
    s->done = true;
    return EXEC_DONE;
  }
  if (krc != KV_OK) {
    s->done = true;
    return exec_kv_error(krc, err);
  }
  int rc;
  if (s->ic) {
    rc = exec_index_decode_row(s->ic, &r, row, NULL, err);
  } else {
    uint32_t nv = 0;
    const kv_value_vector *vv = s->kv ? kv_be_scan_row_vectors(s->be, s->kv, &nv) : NULL;
    rc = exec_row_decode_vec(s->rcp, &r, vv, nv, s->ps->need, row, NULL, &s->vmap, err);
  }
  if (rc) return rc;
  s->rows_assembled++;
  if (s->keep_key && r.key_len <= CAT_KEY_MAX) {
    memcpy(s->key, r.key, r.key_len);
    s->key_len = r.key_len;
  }
  return EXEC_ROW;
}

void exec_scan_metrics_add(kv_scan_metrics *sum, const kv_scan_metrics *m) {
  sum->rows_examined += m->rows_examined;
  sum->cells_examined += m->cells_examined;
  sum->rows_filtered += m->rows_filtered;
  sum->rows_returned += m->rows_returned;
  sum->ranges_sought += m->ranges_sought;
  sum->prefixes_sought += m->prefixes_sought;
  for (uint32_t i = 0; i < m->n_families && i < KV_SCAN_MAX_FAMILIES; i++) {
    kv_family_metrics *d = &sum->families[i];
    const kv_family_metrics *f = &m->families[i];
    if (i >= sum->n_families) { /* a new entry: the sum's slot holds nothing yet */
      *d = *f;
      continue;
    }
    d->family_id = f->family_id;
    d->cells_examined += f->cells_examined;
    d->blocks_read += f->blocks_read;
    d->blocks_cache_hit += f->blocks_cache_hit;
    d->bytes_read += f->bytes_read;
    d->files_opened += f->files_opened;
    d->files_skipped_ts += f->files_skipped_ts;
    d->bytes_inflated += f->bytes_inflated;
  }
  if (m->n_families > sum->n_families) sum->n_families = m->n_families;
}

static void close_lookup(exec_scan_state *s) {
  if (!s->lk) return;
  kv_scan_metrics m;
  kv_be_scan_metrics(s->be, s->lk, &m);
  exec_scan_metrics_add(&s->lm, &m);
  kv_be_scan_close(s->be, s->lk);
  s->lk = NULL;
}

int exec_scan_lookup(exec_scan_state *s, cat_value *row, exec_error *err) {
  const plan_scan *ps = s->ps;
  close_lookup(s);
  /* the data row key is the index key after its salt byte (a salted index) and indexed
     values */
  const uint8_t *p = s->key + (ps->index->salt_buckets ? 1 : 0), *limit = s->key + s->key_len;
  for (int k = 0; k < ps->ix_n_keys && p; k++) p = cat_key_skip_col(&ps->ix_key_cols[k], p, limit);
  if (!p || p >= limit) {
    if (err) {
      err->code = EXEC_CORRUPT;
      err->offset = -1;
      snprintf(err->msg, sizeof err->msg, "index %s: a row key does not decode",
               ps->index ? ps->index->name : "?");
    }
    return EXEC_CORRUPT;
  }
  kv_scan_options o;
  memset(&o, 0, sizeof o);
  o.family_ids = ps->lookup_family_ids;
  o.n_families = (uint32_t)ps->n_lookup_families;
  const uint32_t ext = s->be->caps.extensions;
  if (ext & KV_BE_EXT_EXISTENCE_FAMILY)
    o.existence_family = existence_family(ps->lookup_families, ps->n_lookup_families);
  o.overlay = s->overlay;
  o.snapshot = s->snap;
  if (ext & KV_BE_EXT_TRACE) o.trace = exec_trace_current();
  o.as_of = s->as_of; /* the data row as of the same time (taken at open) */
  kv_row r;
  s->lookups++;
  /* a salted table's key: its salt byte written over the index key's byte before the data
     key (s->key is this scan's copy; the byte is put back after the read) */
  uint8_t *q = s->key + (p - s->key), keep = q[-1];
  const uint8_t *dk = cat_salt_before(ps->table, q, (size_t)(limit - p));
  int krc = kv_be_get(s->be, &o, dk, (size_t)(limit - dk), &s->lk, &r);
  q[-1] = keep;
  if (krc == KV_ERR_NOTFOUND) return EXEC_DONE;
  if (krc != KV_OK) return exec_kv_error(krc, err);
  s->lookups_found++;
  int rc = exec_row_decode(s->rcp, &r, ps->lookup_need, row, NULL, err);
  return rc ? rc : EXEC_ROW;
}

void exec_scan_close(exec_scan_state *s) {
  close_lookup(s);
  exec_index_repair_free(s->repair);
  s->repair = NULL;
  if (s->ic) {
    exec_index_codec_free(s->ic);
    free(s->ic);
    s->ic = NULL;
  }
  if (s->salt) { /* the buckets' metrics summed, as one scan's */
    kv_scan_metrics *m = &s->m;
    exec_metrics_zero(m);
    m->n_families = 0;
    exec_salt_scan_metrics(s->salt, m);
    exec_salt_scan_close(s->salt);
    s->salt = NULL;
    m->rows_filtered += s->rows_rejected;
    m->rows_returned -= s->rows_rejected;
    s->rows_rejected = 0;
  }
  if (s->kv) {
    kv_be_scan_metrics(s->be, s->kv, &s->m);
    kv_be_scan_close(s->be, s->kv);
    s->kv = NULL;
    s->m.rows_filtered += s->rows_rejected; /* the residual's, as if the backend had */
    s->m.rows_returned -= s->rows_rejected;
    s->rows_rejected = 0;
  }
  free(s->fx);
  s->fx = NULL;
  exec_skip_emul_free(&s->skip);
  if (s->snap) {
    kv_be_snapshot_release(s->be, s->snap);
    s->snap = 0;
  }
  if (!s->cache) { /* cached buffers stay with the statement */
    free(s->ranges);
    free(s->key);
  }
  s->ranges = NULL;
  s->key = NULL;
  if (s->rc_ok) exec_rowcodec_free(&s->rc);
  s->rc_ok = false;
  s->rcp = NULL;
}
