/*
** exec/op_query.c: runs a plan_query as a pipeline (exec/op.h): scan -> residual filter ->
** aggregate (streaming when the planner found the groups contiguous in key order, else
** hashed; GROUP BY date roundings by a known unit evaluated directly) -> HAVING -> project ->
** DISTINCT -> sort or top-n heap -> OFFSET/LIMIT. Without aggregation or sort, rows flow
** one at a time from the scan to the caller; otherwise the step that needs every row
** buffers its output (aggregate groups, sorted rows) and then emits it. Every step counts
** rows in and out (plan_actuals) for EXPLAIN ANALYZE. A statement with NEXT VALUE FOR sets
** its sequence values through the row hook before each projection (exec/sequence.h).
**
** Memory: a prepared statement may lend its kept buffers (exec_query_cache: rows, the scan's
** decoder and arrays), so a run with a kept plan allocates none of them. A sort (or hash aggregate, or DISTINCT) holding more than mem_limit bytes stops
** with EXEC_TOOBIG naming the limit; a top-n heap holds only LIMIT + OFFSET rows.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "exec/colagg.h"
#include "exec/op.h"
#include "exec/op_join.h"
#include "exec/parallel.h"

enum { PH_INIT = 0, PH_STREAM, PH_STREAM_AGG, PH_EMIT, PH_DONE, PH_FAST };

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int eval_err(exec_query *x, int rc, exec_error *err) {
  err->code = rc;
  err->offset = -1;
  snprintf(err->msg, sizeof err->msg, "%s", x->evmsg);
  return rc;
}

static int oom(exec_error *err) {
  err->code = EXEC_NOMEM;
  err->offset = -1;
  snprintf(err->msg, sizeof err->msg, "out of memory");
  return EXEC_NOMEM;
}

static int too_big(exec_query *x, exec_error *err, const char *what) {
  err->code = EXEC_TOOBIG;
  err->offset = -1;
  snprintf(err->msg, sizeof err->msg,
           "%s needs more than %zu MiB of memory (the in-memory limit); add a LIMIT or a "
           "narrower WHERE", what, x->mem_limit >> 20);
  return EXEC_TOOBIG;
}

/* A buffer of at least n + 1 values from the cache (grown as needed), or a new one. */
static cat_value *row_buf(cat_value **kept, int *cap, int n) {
  if (!kept) return calloc((size_t)n + 1, sizeof(cat_value));
  if (!*kept || *cap < n) {
    free(*kept);
    *kept = calloc((size_t)n + 1, sizeof(cat_value));
    *cap = *kept ? n : 0;
  }
  return *kept;
}

void exec_query_cache_free(exec_query_cache *c) {
  exec_scan_cache_free(&c->scan);
  free(c->in);
  free(c->aggrow);
  free(c->out);
  free(c->in_nulls);
  memset(c, 0, sizeof *c);
}

int exec_query_open(exec_query *x, kv_backend *be, const plan_query *q, const cat_value *params,
                    int n_params, int64_t now_us, size_t mem_limit, const kv_batch *overlay,
                    exec_error *err) {
  return exec_query_open_cached(x, be, q, params, n_params, now_us, mem_limit, overlay, NULL,
                                err);
}

/* GROUP BY terms that are a date rounding of a column by a unit known now (a constant or a
** bound parameter): x->gfast, evaluated per row by exec_fn_date_round, not exec_eval. */
static void group_fast_setup(exec_query *x) {
  const plan_select *s = x->q->sel;
  x->n_gfast = 0;
  if (!s->aggregate) return;
  for (int i = 0; i < s->n_group && x->n_gfast < EXEC_GROUP_FAST; i++) {
    const plan_expr *e = s->group[i];
    if (e->kind != PX_FUNC || e->n_args < 1 || e->n_args > 3 || e->args[0]->kind != PX_COLUMN)
      continue;
    cat_value a[3];
    bool known = true;
    for (uint32_t k = 1; k < e->n_args && known; k++) {
      const plan_expr *u = e->args[k];
      if (u->kind == PX_CONST || u->kind == PX_PARAM) {
        x->ev.row = NULL; /* constants and parameters read no row */
        known = exec_eval(&x->ev, u, &a[k]) == EXEC_OK;
      } else {
        known = false;
      }
    }
    if (!known) continue;
    if (!exec_fn_date_round_prepare(e->func, e->args[0]->type.id, a, (int)e->n_args, &e->type,
                                    &x->gfast[x->n_gfast].r))
      continue;
    x->gfast[x->n_gfast].term = i;
    x->gfast[x->n_gfast].col = e->args[0]->column;
    x->n_gfast++;
  }
}

int exec_query_open_cached(exec_query *x, kv_backend *be, const plan_query *q,
                           const cat_value *params, int n_params, int64_t now_us,
                           size_t mem_limit, const kv_batch *overlay, exec_query_cache *cache,
                           exec_error *err) {
  /* ORDER QUERY (exec/op.h): zero everything a run reads, not the big parts it sets up */
  _Static_assert(offsetof(exec_query, evmsg) < offsetof(exec_query, scan) &&
                     offsetof(exec_query, scan) < offsetof(exec_query, scan_open) &&
                     offsetof(exec_query, scan_open) < offsetof(exec_query, act) &&
                     offsetof(exec_query, act) < offsetof(exec_query, timing),
                 "exec_query field order (ORDER QUERY)");
  memset(x, 0, offsetof(exec_query, evmsg));
  x->evmsg[0] = 0;
  memset(&x->scan_open, 0, offsetof(exec_query, act) - offsetof(exec_query, scan_open));
  plan_actuals_zero(&x->act);
  memset(&x->timing, 0, sizeof *x - offsetof(exec_query, timing));
  x->cache = cache;
  x->overlay = overlay;
  x->q = q;
  x->be = be;
  x->db = kv_backend_local_db(be);
  exec_arena_init(&x->scratch);
  x->ev.params = params;
  x->ev.n_params = n_params;
  x->ev.scratch = &x->scratch;
  x->ev.now_us = now_us;
  x->ev.msg = x->evmsg;
  x->ev.cap = sizeof x->evmsg;
  x->mem_limit = mem_limit ? mem_limit : EXEC_SORT_MEMORY_DEFAULT;
  if (overlay && q->has_scan && q->scan.index && q->scan.lookup) { /* even when empty: the
                                                                       transaction writes on */
    /* the index scan copies the batch's operations when it opens; its lookups read this
       copy, so both halves see the transaction as it was here (op.h, own_overlay) */
    x->own_overlay = kv_batch_copy(overlay, kv_batch_get_mark(overlay));
    if (!x->own_overlay) return oom(err);
    x->overlay = x->own_overlay;
  }
  const plan_select *s = q->sel;
  int n_in = s->n_from ? s->n_slots : s->table ? s->table->n_columns : 0;
  x->in = row_buf(cache ? &cache->in : NULL, cache ? &cache->in_cap : NULL, n_in);
  x->aggrow = row_buf(cache ? &cache->aggrow : NULL, cache ? &cache->agg_cap : NULL,
                      s->n_group + s->n_aggs);
  x->out = row_buf(cache ? &cache->out : NULL, cache ? &cache->out_cap : NULL, s->n_proj);
  if (!x->in || !x->aggrow || !x->out) return oom(err);
  group_fast_setup(x);
  x->direct = cache && q->direct; /* planner/plan.h: rows decode into out */
  if (x->direct) { /* every row writes every slot of out; in is not used */
    x->groups.n_key = s->n_group;
    x->dset.n_key = s->n_out;
    x->phase = PH_INIT;
    return EXEC_OK;
  }
  if (cache) { /* as new: no value of the previous run shows through */
    memset(x->aggrow, 0, (size_t)(s->n_group + s->n_aggs + 1) * sizeof *x->aggrow);
    memset(x->out, 0, (size_t)(s->n_proj + 1) * sizeof *x->out);
  }
  if (s->n_from) { /* a join: every table's columns, typed NULLs until a row fills them */
    for (int i = 0; i < s->n_from; i++)
      for (int c = 0; c < s->from[i].table->n_columns; c++)
        x->in[s->from[i].base + c] = cat_v_null(s->from[i].table->columns[c].type);
  } else if (cache && n_in && cache->in_table == s->table) {
    memcpy(x->in, cache->in_nulls, (size_t)n_in * sizeof *x->in);
  } else {
    for (int i = 0; i < n_in; i++) x->in[i] = cat_v_null(s->table->columns[i].type);
    if (cache && n_in) { /* the template of the next runs over this table */
      free(cache->in_nulls);
      cache->in_table = NULL;
      cache->in_nulls = malloc((size_t)n_in * sizeof *cache->in_nulls);
      if (cache->in_nulls) {
        memcpy(cache->in_nulls, x->in, (size_t)n_in * sizeof *x->in);
        cache->in_table = s->table;
      }
    }
  }
  x->groups.n_key = s->n_group;
  x->dset.n_key = s->n_out;
  x->phase = PH_INIT;
  return EXEC_OK;
}

/* Next input row into x->in (x->out when direct): EXEC_ROW / EXEC_DONE / error. */
static int source_next(exec_query *x, exec_error *err) {
  plan_step_actual *st = &x->act.step[PLAN_STEP_SCAN];
  if (x->join) {
    int rc = exec_check_interrupt(err);
    if (!rc) rc = exec_join_next(x->join, x->in, err);
    if (rc == EXEC_ROW) st->rows_out++;
    return rc;
  }
  if (!x->q->has_scan) {
    if (x->single_done) return EXEC_DONE;
    x->single_done = true;
    st->rows_out++;
    return EXEC_ROW;
  }
  double t0 = x->timing ? now_ms() : 0;
  const plan_scan *ps = &x->q->scan;
  int rc = exec_check_interrupt(err);
  if (rc) return rc;
  if (x->par) { /* the chunks' rows in key order (exec/parallel.h) */
    rc = exec_par_next(x, x->direct ? x->out : x->in, err);
    if (x->timing) st->ms += now_ms() - t0;
    if (rc == EXEC_ROW) st->rows_out++;
    return rc;
  }
  for (;;) {
    rc = exec_scan_next(&x->scan, x->direct ? x->out : x->in, err);
    if (rc != EXEC_ROW || !ps->lookup) break;
    /* uncovered index: filter on the index's columns, then look the data row up */
    if (ps->ix_filter) {
      x->act.ix_filter_in++;
      x->ev.row = x->in;
      int tv;
      rc = exec_eval_pred(&x->ev, ps->ix_filter, &tv);
      if (rc) {
        rc = eval_err(x, rc, err);
        break;
      }
      if (tv != 1) {
        exec_arena_reset(&x->scratch);
        continue;
      }
      x->act.ix_filter_out++;
    }
    rc = exec_scan_lookup(&x->scan, x->in, err);
    if (rc != EXEC_DONE) break; /* found (EXEC_ROW) or an error */
  }
  if (x->timing) st->ms += now_ms() - t0;
  if (rc == EXEC_ROW) st->rows_out++;
  return rc;
}

/* Residual WHERE: 1 keep, 0 drop, or -error. */
static int pass_filter(exec_query *x, exec_error *err) {
  const plan_expr *f = x->q->join       ? x->q->join_filter
                       : x->q->has_scan ? x->q->scan.residual
                                        : x->q->sel->where;
  if (!f || x->par) return 1; /* (the chunks of a parallel scan filter their rows) */
  plan_step_actual *st = &x->act.step[PLAN_STEP_FILTER];
  st->rows_in++;
  x->ev.row = x->in;
  int tv;
  int rc = exec_eval_pred(&x->ev, f, &tv);
  if (rc) return -eval_err(x, rc, err);
  if (tv != 1) return 0;
  st->rows_out++;
  return 1;
}

/* Project the row in x->ev.row into x->out. */
static int project(exec_query *x, exec_error *err) {
  const plan_select *s = x->q->sel;
  x->act.step[PLAN_STEP_PROJECT].rows_in++;
  if (x->row_hook) {
    int rc = x->row_hook(x->row_hook_arg, err);
    if (rc) return rc;
  }
  for (int i = 0; i < s->n_proj; i++) {
    const plan_expr *e = s->proj[i];
    if (e->kind == PX_COLUMN) { /* the common case, without a call */
      x->out[i] = x->ev.row[e->column];
      continue;
    }
    int rc = exec_eval(&x->ev, e, &x->out[i]);
    if (rc) return eval_err(x, rc, err);
  }
  x->act.step[PLAN_STEP_PROJECT].rows_out++;
  return EXEC_OK;
}

/* DISTINCT on the visible columns: true if the row is new. */
static int distinct_new(exec_query *x, bool *is_new, exec_error *err) {
  plan_step_actual *st = &x->act.step[PLAN_STEP_DISTINCT];
  st->rows_in++;
  bool added, o;
  exec_rowset_find(&x->dset, x->out, x->q->sel->n_out, 0, true, &added, &o);
  if (o) return oom(err);
  if (x->dset.bytes > x->mem_limit) return too_big(x, err, "DISTINCT");
  *is_new = added;
  if (added) st->rows_out++;
  return EXEC_OK;
}

/* ---- Buffer, sort, top-n ---------------------------------------------------------------- */
static int order_cmp_q(const void *a, const void *b, void *ctx) {
  const plan_select *s = ctx;
  const exec_mrow *x = *(exec_mrow *const *)a, *y = *(exec_mrow *const *)b;
  return exec_order_cmp(s->order, s->n_order, x->v, y->v);
}

static void heap_down(exec_query *x, size_t i) {
  const plan_select *s = x->q->sel;
  size_t n = x->n_rows;
  for (;;) {
    size_t l = 2 * i + 1, r = l + 1, m = i;
    if (l < n && exec_order_cmp(s->order, s->n_order, x->rows[l]->v, x->rows[m]->v) > 0) m = l;
    if (r < n && exec_order_cmp(s->order, s->n_order, x->rows[r]->v, x->rows[m]->v) > 0) m = r;
    if (m == i) return;
    exec_mrow *t = x->rows[i];
    x->rows[i] = x->rows[m];
    x->rows[m] = t;
    i = m;
  }
}

static void heap_up(exec_query *x, size_t i) {
  const plan_select *s = x->q->sel;
  while (i > 0) {
    size_t p = (i - 1) / 2;
    if (exec_order_cmp(s->order, s->n_order, x->rows[i]->v, x->rows[p]->v) <= 0) return;
    exec_mrow *t = x->rows[i];
    x->rows[i] = x->rows[p];
    x->rows[p] = t;
    i = p;
  }
}

/* Keep the projected row x->out in the output buffer (sorted later, or as a top-n heap). */
static int buffer_row(exec_query *x, exec_error *err) {
  const plan_query *q = x->q;
  const plan_select *s = q->sel;
  if (q->sort) x->act.step[PLAN_STEP_SORT].rows_in++;
  if (q->topn) {
    uint64_t k = (uint64_t)q->limit + (uint64_t)q->offset;
    if (k == 0) return EXEC_OK;
    if (x->n_rows == k) { /* full: replace the largest if the new row is smaller */
      if (exec_order_cmp(s->order, s->n_order, x->out, x->rows[0]->v) >= 0) return EXEC_OK;
      exec_mrow *r = exec_mrow_make(x->out, s->n_proj, 0);
      if (!r) return oom(err);
      x->mem -= x->rows[0]->bytes;
      exec_mrow_free(x->rows[0], 0);
      x->rows[0] = r;
      x->mem += r->bytes;
      heap_down(x, 0);
      return EXEC_OK;
    }
  }
  if (x->n_rows == x->cap_rows) {
    size_t nc = x->cap_rows ? x->cap_rows * 2 : 64;
    exec_mrow **nr = realloc(x->rows, nc * sizeof *nr);
    if (!nr) return oom(err);
    x->rows = nr;
    x->cap_rows = nc;
  }
  exec_mrow *r = exec_mrow_make(x->out, s->n_proj, 0);
  if (!r) return oom(err);
  x->rows[x->n_rows++] = r;
  x->mem += r->bytes + sizeof r;
  if (q->topn) heap_up(x, x->n_rows - 1);
  if (x->mem > x->mem_limit) return too_big(x, err, q->sort ? "ORDER BY" : "the result");
  return EXEC_OK;
}

/* A projected row that passed HAVING: DISTINCT, then buffer. */
static int collect(exec_query *x, exec_error *err) {
  if (x->q->sel->distinct) {
    bool fresh;
    int rc = distinct_new(x, &fresh, err);
    if (rc || !fresh) return rc;
  }
  return buffer_row(x, err);
}

/* ---- Aggregation ------------------------------------------------------------------------ */
static int group_init(exec_query *x, exec_mrow *g, exec_error *err) {
  const plan_select *s = x->q->sel;
  for (int i = 0; i < s->n_aggs; i++) {
    const plan_agg *a = &s->aggs[i];
    cat_type at = a->arg ? a->arg->type : cat_type_of(0);
    exec_agg_init(&g->aggs[i], a->func, a->distinct, &at, &a->type);
    exec_agg_set_order(&g->aggs[i], a->frac, a->desc);
  }
  (void)err;
  return EXEC_OK;
}

static int group_step(exec_query *x, exec_mrow *g, exec_error *err) {
  const plan_select *s = x->q->sel;
  x->ev.row = x->in;
  for (int i = 0; i < s->n_aggs; i++) {
    const plan_agg *a = &s->aggs[i];
    cat_value v;
    const cat_value *pv = NULL;
    if (a->arg) {
      int rc = exec_eval(&x->ev, a->arg, &v);
      if (rc) return eval_err(x, rc, err);
      pv = &v;
    }
    size_t before = exec_agg_bytes(&g->aggs[i]);
    int rc;
    if (a->arg2) { /* FIRST_VALUE / LAST_VALUE: the value and its order key */
      cat_value k;
      rc = exec_eval(&x->ev, a->arg2, &k);
      if (rc) return eval_err(x, rc, err);
      rc = exec_agg_step2(&g->aggs[i], pv, &k, x->evmsg, sizeof x->evmsg);
    } else {
      rc = exec_agg_step(&g->aggs[i], pv, x->evmsg, sizeof x->evmsg);
    }
    if (rc) return eval_err(x, rc, err);
    size_t after = exec_agg_bytes(&g->aggs[i]);
    if (after != before) {
      /* DISTINCT sets and percentile values count against the same in-memory limit */
      x->agg_mem += after - before;
      if (x->agg_mem + x->groups.bytes > x->mem_limit) {
        char what[96];
        snprintf(what, sizeof what, "%s%s", cat_agg_name(a->func),
                 a->distinct ? "(DISTINCT)" : "");
        return too_big(x, err, what);
      }
    }
  }
  return EXEC_OK;
}

/* A finished group: HAVING, project, collect. */
static int group_finish(exec_query *x, exec_mrow *g, exec_error *err) {
  const plan_select *s = x->q->sel;
  x->act.step[PLAN_STEP_AGG].rows_out++;
  for (int i = 0; i < s->n_group; i++) x->aggrow[i] = g->v[i];
  for (int i = 0; i < s->n_aggs; i++) {
    int rc = exec_agg_final(&g->aggs[i], &x->aggrow[s->n_group + i], &x->scratch, x->evmsg,
                            sizeof x->evmsg);
    if (rc) return eval_err(x, rc, err);
  }
  x->ev.row = x->aggrow;
  x->ev.agg_base = s->n_group;
  if (s->having) {
    x->act.step[PLAN_STEP_HAVING].rows_in++;
    int tv;
    int rc = exec_eval_pred(&x->ev, s->having, &tv);
    if (rc) return eval_err(x, rc, err);
    if (tv != 1) return EXEC_OK;
    x->act.step[PLAN_STEP_HAVING].rows_out++;
  }
  int rc = project(x, err);
  if (!rc) rc = collect(x, err);
  return rc;
}

static int aggregate_row(exec_query *x, exec_error *err) {
  const plan_select *s = x->q->sel;
  x->act.step[PLAN_STEP_AGG].rows_in++;
  cat_value key[64];
  if (s->n_group > 64) {
    err->code = EXEC_TOOBIG;
    snprintf(err->msg, sizeof err->msg, "GROUP BY of more than 64 expressions");
    return EXEC_TOOBIG;
  }
  x->ev.row = x->in;
  for (int i = 0, f = 0; i < s->n_group; i++) {
    int rc;
    if (f < x->n_gfast && x->gfast[f].term == i) { /* a date rounding: no call tree */
      exec_func_ctx fc = {&x->scratch, x->ev.now_us, x->evmsg, sizeof x->evmsg};
      rc = exec_fn_date_round(&x->gfast[f].r, &x->in[x->gfast[f].col], &key[i], &fc);
      f++;
    } else {
      rc = exec_eval(&x->ev, s->group[i], &key[i]);
    }
    if (rc) return eval_err(x, rc, err);
  }
  exec_mrow *g;
  if (x->q->stream_agg) {
    g = x->cur_group;
    bool same = g != NULL;
    for (int i = 0; same && i < s->n_group; i++) {
      if (g->v[i].is_null != key[i].is_null) same = false;
      else if (!key[i].is_null && exec_value_cmp(&g->v[i], &key[i]) != 0) same = false;
    }
    if (!same) {
      if (g) {
        for (int i = 0; i < s->n_aggs; i++) {
          size_t k = exec_agg_bytes(&g->aggs[i]);
          x->agg_mem -= k < x->agg_mem ? k : x->agg_mem;
        }
        int rc = group_finish(x, g, err);
        exec_mrow_free(g, s->n_aggs);
        x->cur_group = NULL;
        if (rc) return rc;
      }
      g = x->cur_group = exec_mrow_make(key, s->n_group, s->n_aggs);
      if (!g) return oom(err);
      group_init(x, g, err);
    }
  } else {
    bool added, o;
    g = exec_rowset_find(&x->groups, key, s->n_group, s->n_aggs, true, &added, &o);
    if (o) return oom(err);
    if (added) group_init(x, g, err);
    if (x->groups.bytes > x->mem_limit) return too_big(x, err, "GROUP BY");
  }
  return group_step(x, g, err);
}

static int finish_aggregate(exec_query *x, exec_error *err) {
  const plan_select *s = x->q->sel;
  int rc = EXEC_OK;
  if (x->q->stream_agg) {
    if (x->cur_group) {
      rc = group_finish(x, x->cur_group, err);
      exec_mrow_free(x->cur_group, s->n_aggs);
      x->cur_group = NULL;
    } else if (s->n_group == 0) {
      goto empty;
    }
    return rc;
  }
  if (x->groups.n == 0 && s->n_group == 0) goto empty;
  for (size_t i = 0; i < x->groups.cap && !rc; i++) {
    if (x->groups.slots[i]) rc = group_finish(x, x->groups.slots[i], err);
    exec_arena_reset(&x->scratch);
  }
  return rc;
empty: { /* an aggregate without GROUP BY gives one row even over no input */
    exec_mrow *g = exec_mrow_make(NULL, 0, s->n_aggs);
    if (!g) return oom(err);
    group_init(x, g, err);
    rc = group_finish(x, g, err);
    exec_mrow_free(g, s->n_aggs);
    return rc;
  }
}

/* ---- Driver ------------------------------------------------------------------------------ */
/* A join query's tree: its context, the NULL row for padding, the nodes. */
static int open_join(exec_query *x, exec_error *err) {
  const plan_select *s = x->q->sel;
  x->act.analyzed = true;
  x->jcx = calloc(1, sizeof *x->jcx);
  x->jnulls = malloc(((size_t)s->n_slots + 1) * sizeof *x->jnulls);
  if (!x->jcx || !x->jnulls) return oom(err);
  for (int i = 0; i < s->n_from; i++)
    for (int c = 0; c < s->from[i].table->n_columns; c++)
      x->jnulls[s->from[i].base + c] = cat_v_null(s->from[i].table->columns[c].type);
  exec_join_ctx *cx = x->jcx;
  cx->be = x->be;
  cx->db = x->db;
  cx->overlay = x->overlay;
  cx->params = x->ev.params;
  cx->n_params = x->ev.n_params;
  cx->now_us = x->ev.now_us;
  cx->nulls = x->jnulls;
  cx->mem_limit = x->join_mem ? x->join_mem : EXEC_JOIN_MEMORY_DEFAULT;
  cx->timing = x->timing;
  return exec_join_open(&x->join, x->q->join, cx, err);
}

static int open_source(exec_query *x, exec_error *err) {
  if (x->q->join) return open_join(x, err);
  if (!x->q->has_scan) return EXEC_OK;
  if (exec_par_wanted(x)) return exec_par_open(x, err); /* the scan in chunks */
  int rc = x->cache ? exec_scan_open_cached(&x->scan, x->be, &x->q->scan, x->overlay,
                                             &x->cache->scan, x->direct ? x->q->slots : NULL, err)
                    : exec_scan_open(&x->scan, x->be, &x->q->scan, x->overlay, err);
  x->scan_open = true;
  x->act.analyzed = true;
  return rc;
}

/* The groups gs[0..n), in the order the rows path meets them: finished in that order
** (streaming GROUP BY), or put into the hash table in that order, so that its slots and the
** order finish_aggregate reads them in are the rows path's. Frees gs. */
static int take_groups(exec_query *x, exec_mrow **gs, size_t n, exec_error *err) {
  const plan_query *q = x->q;
  const plan_select *s = q->sel;
  int rc = EXEC_OK;
  size_t i = 0;
  for (; i < n && !rc; i++) {
    if (q->stream_agg) {
      rc = group_finish(x, gs[i], err);
      exec_arena_reset(&x->scratch);
    } else {
      bool added, o;
      exec_mrow *g = exec_rowset_find(&x->groups, gs[i]->v, s->n_group, s->n_aggs, true,
                                      &added, &o);
      if (!g) {
        rc = oom(err);
        break;
      }
      for (int a = 0; a < s->n_aggs; a++) { /* the accumulators move */
        exec_agg_free(&g->aggs[a]);
        g->aggs[a] = gs[i]->aggs[a];
        memset(&gs[i]->aggs[a], 0, sizeof gs[i]->aggs[a]);
      }
      if (x->groups.bytes > x->mem_limit) rc = too_big(x, err, "GROUP BY");
    }
    exec_mrow_free(gs[i], s->n_aggs);
  }
  for (; i < n; i++) exec_mrow_free(gs[i], s->n_aggs);
  free(gs);
  if (!rc && !q->stream_agg) rc = finish_aggregate(x, err);
  if (!rc && q->sort) {
    if (x->n_rows > 1) qsort_r(x->rows, x->n_rows, sizeof *x->rows, order_cmp_q, (void *)s);
    x->act.step[PLAN_STEP_SORT].rows_out = x->n_rows;
  }
  return rc;
}

/* The columnar aggregate pushdown (exec/colagg.h), asked once per run by exec_query_next's
** first step: EXEC_ROW when it answered (the groups are in the buffer), EXEC_DONE when it
** does not apply (the rows path runs), or an error. */
static int colagg_try(exec_query *x, exec_error *err) {
  const plan_select *s = x->q->sel;
  exec_mrow *g = NULL, **gs = NULL;
  size_t ng = 0;
  int crc = exec_colagg_run(x, &g, &gs, &ng, err);
  if (crc == EXEC_ROW) crc = exec_query_take_groups(x, s->n_group ? NULL : g, gs, ng, err);
  return crc == EXEC_OK ? EXEC_ROW : crc;
}

int exec_query_take_groups(exec_query *x, exec_mrow *g, exec_mrow **gs, size_t n,
                           exec_error *err) {
  const plan_select *s = x->q->sel;
  if (s->n_group) return take_groups(x, gs, n, err);
  int rc = group_finish(x, g, err);
  exec_mrow_free(g, s->n_aggs);
  return rc;
}

/* Consume all input into the buffer (aggregate or sort), then sort it. */
static int fill_buffer(exec_query *x, exec_error *err) {
  const plan_query *q = x->q;
  const plan_select *s = q->sel;
  for (;;) {
    int rc = source_next(x, err);
    if (rc == EXEC_DONE) break;
    if (rc != EXEC_ROW) return rc;
    int f = pass_filter(x, err);
    if (f < 0) return -f;
    if (f == 0) continue;
    if (s->aggregate) {
      rc = aggregate_row(x, err);
    } else {
      x->ev.row = x->in;
      rc = project(x, err);
      if (!rc) rc = collect(x, err);
    }
    exec_arena_reset(&x->scratch);
    if (rc) return rc;
  }
  if (s->aggregate) {
    int rc = finish_aggregate(x, err);
    if (rc) return rc;
  }
  if (q->sort) {
    if (x->n_rows > 1) qsort_r(x->rows, x->n_rows, sizeof *x->rows, order_cmp_q, (void *)s);
    x->act.step[PLAN_STEP_SORT].rows_out = x->n_rows;
  }
  return EXEC_OK;
}

static int emit_limit(exec_query *x) {
  /* 1: emit this row, 0: skip it (OFFSET), -1: stop (LIMIT reached) */
  const plan_query *q = x->q;
  if (q->limit >= 0 && x->emitted >= q->limit) return -1;
  plan_step_actual *st = &x->act.step[PLAN_STEP_LIMIT];
  st->rows_in++;
  if (x->skipped < q->offset) {
    x->skipped++;
    return 0;
  }
  x->emitted++;
  st->rows_out++;
  return 1;
}

int exec_query_next(exec_query *x, exec_error *err) {
  const plan_query *q = x->q;
  const plan_select *s = q->sel;
  int rc;
  /* the columnar aggregate first, before any row scan opens: when it declines at run time
     (store files that overlap, a memstore of many rows) the statement cuts the scan into
     chunks then (late_par), so the rows path runs as parallel as any scan of the table (where
     the backend cannot run it, planning refused it, plan_scan.no_columnar) */
  if (x->phase == PH_INIT && q->limit != 0 && q->has_scan && !q->join && s->aggregate) {
    rc = colagg_try(x, err); /* (exec_colagg_run checks the plan: DONE, untried, if not its) */
    if (rc == EXEC_ROW) x->phase = PH_EMIT;
    else if (rc != EXEC_DONE) return rc;
    else if (x->act.colagg.tried && x->late_par && exec_par_possible(x) &&
             (rc = x->late_par(x->late_par_arg, err)))
      return rc; /* (a plan cut for chunks that cannot run would only fill the plan arena) */
  }
  if (x->phase == PH_INIT) {
    rc = open_source(x, err);
    if (rc) return rc;
    if (q->limit == 0) {
      x->phase = PH_DONE;
      return EXEC_DONE;
    }
    if (x->par && !exec_par_rows(x)) { /* chunks sorted or aggregated, merged here */
      rc = exec_par_gather(x, err);
      if (rc) return rc;
      x->phase = PH_EMIT;
    } else if (s->aggregate && q->stream_agg && !q->sort) {
      x->phase = PH_STREAM_AGG; /* groups leave as they finish: LIMIT stops the scan */
    } else if (s->aggregate || q->sort) {
      rc = fill_buffer(x, err);
      if (rc) return rc;
      x->phase = PH_EMIT;
    } else {
      x->phase = PH_STREAM;
      /* rows decoded into out by a table scan, nothing between the scan and LIMIT/OFFSET */
      if (x->direct && q->has_scan && !q->scan.lookup && !q->scan.residual && !s->distinct &&
          !x->timing && !x->par)
        x->phase = PH_FAST;
    }
  }
  if (x->phase == PH_FAST) { /* PH_STREAM's loop with only the steps this plan has */
    plan_step_actual *sc = &x->act.step[PLAN_STEP_SCAN], *pr = &x->act.step[PLAN_STEP_PROJECT];
    for (;;) {
      rc = exec_scan_next(&x->scan, x->out, err);
      if (rc != EXEC_ROW) {
        if (rc == EXEC_DONE) x->phase = PH_DONE;
        return rc;
      }
      sc->rows_out++;
      pr->rows_in++;
      pr->rows_out++;
      int l = emit_limit(x);
      if (l < 0) break;
      if (l > 0) return EXEC_ROW;
    }
    x->phase = PH_DONE;
    return EXEC_DONE;
  }
  if (x->phase == PH_STREAM) {
    for (;;) {
      exec_arena_reset(&x->scratch);
      rc = source_next(x, err);
      if (rc == EXEC_DONE) break;
      if (rc != EXEC_ROW) return rc;
      int f = pass_filter(x, err);
      if (f < 0) return -f;
      if (f == 0) continue;
      if (x->direct) { /* the scan decoded the row into out: nothing to project */
        x->act.step[PLAN_STEP_PROJECT].rows_in++;
        x->act.step[PLAN_STEP_PROJECT].rows_out++;
      } else {
        x->ev.row = x->in;
        rc = project(x, err);
        if (rc) return rc;
      }
      if (s->distinct) {
        bool fresh;
        rc = distinct_new(x, &fresh, err);
        if (rc) return rc;
        if (!fresh) continue;
      }
      int l = emit_limit(x);
      if (l < 0) break;
      if (l == 0) continue;
      return EXEC_ROW;
    }
    x->phase = PH_DONE;
    return EXEC_DONE;
  }
  if (x->phase == PH_STREAM_AGG) {
    for (;;) {
      if (x->pos < x->n_rows) {
        exec_mrow *r = x->rows[x->pos++];
        int l = emit_limit(x);
        if (l < 0) break;
        if (l == 0) continue;
        memcpy(x->out, r->v, (size_t)s->n_proj * sizeof *x->out);
        return EXEC_ROW;
      }
      for (size_t i = 0; i < x->n_rows; i++) exec_mrow_free(x->rows[i], 0);
      x->n_rows = x->pos = 0;
      x->mem = 0;
      if (x->src_done || (q->limit >= 0 && x->emitted >= q->limit)) break;
      exec_arena_reset(&x->scratch);
      rc = source_next(x, err);
      if (rc == EXEC_DONE) {
        x->src_done = true;
        rc = finish_aggregate(x, err);
        if (rc) return rc;
        continue;
      }
      if (rc != EXEC_ROW) return rc;
      int f = pass_filter(x, err);
      if (f < 0) return -f;
      if (f == 0) continue;
      rc = aggregate_row(x, err);
      if (rc) return rc;
    }
    x->phase = PH_DONE;
    return EXEC_DONE;
  }
  if (x->phase == PH_EMIT) {
    while (x->pos < x->n_rows) {
      exec_mrow *r = x->rows[x->pos++];
      int l = emit_limit(x);
      if (l < 0) break;
      if (l == 0) continue;
      memcpy(x->out, r->v, (size_t)s->n_proj * sizeof *x->out);
      return EXEC_ROW;
    }
    x->phase = PH_DONE;
  }
  return EXEC_DONE;
}

void exec_query_drop_overlay(exec_query *x) {
  exec_join_drop_overlay(x->join);
  if (x->jcx) x->jcx->overlay = NULL;
  if (x->own_overlay) return; /* its own copy: still right, and not freed */
  x->overlay = NULL;
  x->scan.overlay = NULL;
}

void exec_query_close(exec_query *x) {
  exec_par_close(x); /* the chunks' threads and scans, their figures into act */
  if (x->scan_open) {
    exec_scan_close(&x->scan);
    exec_metrics_copy(&x->act.kv, &x->scan.m);
    x->act.rows_assembled = x->scan.rows_assembled;
    x->act.lookups = x->scan.lookups;
    x->act.lookups_found = x->scan.lookups_found;
    exec_metrics_copy(&x->act.lookup_kv, &x->scan.lm);
    x->scan_open = false;
  }
  exec_join_close(x->join); /* the leaves' figures go to the plan (EXPLAIN ANALYZE) */
  x->join = NULL;
  free(x->jcx);
  free(x->jnulls);
  x->jcx = NULL;
  x->jnulls = NULL;
  const plan_select *s = x->q ? x->q->sel : NULL;
  int n_aggs = s ? s->n_aggs : 0;
  exec_rowset_free(&x->groups, n_aggs);
  exec_rowset_free(&x->dset, 0);
  if (x->cur_group) exec_mrow_free(x->cur_group, n_aggs);
  x->cur_group = NULL;
  for (size_t i = 0; i < x->n_rows; i++) exec_mrow_free(x->rows[i], 0);
  free(x->rows);
  x->rows = NULL;
  x->n_rows = x->cap_rows = 0;
  if (!x->cache) { /* cached row buffers stay with the statement */
    free(x->in);
    free(x->aggrow);
    free(x->out);
  }
  x->in = x->aggrow = x->out = NULL;
  exec_arena_free(&x->scratch);
  kv_batch_free(x->own_overlay);
  x->own_overlay = NULL;
  x->overlay = NULL;
}
