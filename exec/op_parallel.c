/*
** exec/op_parallel.c: the run of a parallel scan (exec/parallel.h): the chunks' scans opened
** on the stepping thread, run on a chunk pool, their rows queued (the rows way: read here in
** chunk order, or merged by key for a salted scan), sorted, or aggregated; then closed and
** their figures summed. Every chunk has its own scan, decoder, evaluation scratch and error;
** the plan, the parameters and the filter are shared read-only. A chunk of an uncovered index
** scan filters its index rows and looks their data rows up itself.
** Not here: the setting and the decision (exec/op_parallel_attach.c), the merges
** (exec/op_parallel_merge.c), the chunk pool and the k-way merge (exec/chunk_pool.c), the
** plan (planner/parallel.c), the pipeline (exec/op_query.c).
*/
#include "exec/parallel_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exec/keymap.h"

void par_batch_free(par_batch *b) {
  if (!b) return;
  free(b->bytes);
  free(b);
}

void par_take_queue(exec_par *P, par_chunk *c, par_batch ***loc, size_t *lcap, size_t *ln,
                    size_t *lpos) {
  par_batch **t = *loc;
  size_t tcap = *lcap;
  *loc = c->bq;
  *lcap = c->bqcap;
  *ln = c->bqn;
  *lpos = 0;
  c->bq = t;
  c->bqcap = tcap;
  c->bqn = 0;
  c->qrows = 0;
  pthread_cond_broadcast(&P->cv);
}

const uint8_t *par_row_key(const par_chunk *c, uint32_t *len) {
  uint32_t n = c->scan.key_len, skip = n ? 1 : 0; /* after the salt byte */
  *len = n - skip;
  return c->scan.key + skip;
}

/* ---- The chunks ---------------------------------------------------------------------- */
static int c_oom(par_chunk *c) {
  return exec_fail(&c->err, EXEC_NOMEM, -1, "out of memory");
}

static int c_eval_err(par_chunk *c, int rc) {
  return exec_fail(&c->err, rc, -1, "%s", c->evmsg);
}

static int c_too_big(par_chunk *c, const char *what) {
  return exec_fail(&c->err, EXEC_TOOBIG, -1,
                   "%s needs more than %zu MiB of memory (the in-memory limit); add a LIMIT or "
                   "a narrower WHERE", what, c->P->x->mem_limit >> 20);
}

/* The residual filter on c->in: 1 keep, 0 drop, or -error. */
static int c_filter(par_chunk *c) {
  const plan_expr *f = c->P->x->q->scan.residual;
  if (!f) return 1;
  c->filtered_in++;
  c->ev.row = c->in;
  int tv;
  int rc = exec_eval_pred(&c->ev, f, &tv);
  if (rc) return -c_eval_err(c, rc);
  return tv == 1;
}

/* The chunk's next row into c->in: the scan's, and for an uncovered index the index row
** that passes the index filter with its data row looked up (exec/op_query.c's steps).
** EXEC_ROW, EXEC_DONE or an error (in c->err). */
static int c_next(par_chunk *c) {
  const plan_scan *ps = &c->ps;
  for (;;) {
    int rc = exec_scan_next(&c->scan, c->in, &c->err);
    if (rc != EXEC_ROW || !ps->lookup) return rc;
    if (ps->ix_filter) {
      c->ix_in++;
      c->ev.row = c->in;
      int tv;
      rc = exec_eval_pred(&c->ev, ps->ix_filter, &tv);
      if (rc) return c_eval_err(c, rc);
      if (tv != 1) {
        exec_arena_reset(&c->scratch);
        continue;
      }
      c->ix_out++;
    }
    rc = exec_scan_lookup(&c->scan, c->in, &c->err);
    if (rc != EXEC_DONE) return rc; /* found (EXEC_ROW) or an error */
  }
}

/* Rows way: hand batch b to the queue, waiting while it holds PAR_QUEUE_ROWS rows. */
static void queue_put(par_chunk *c, par_batch *b) {
  exec_par *P = c->P;
  pthread_mutex_lock(&P->mu);
  while (c->qrows >= PAR_QUEUE_ROWS && !P->unbounded && !atomic_load(&P->stop))
    pthread_cond_wait(&P->cv, &P->mu);
  bool ok = !atomic_load(&P->stop);
  if (ok && c->bqn == c->bqcap) {
    size_t nc = c->bqcap ? c->bqcap * 2 : 2 * PAR_QUEUE_ROWS / PAR_BATCH_ROWS;
    par_batch **nq = realloc(c->bq, nc * sizeof *nq);
    if (nq) {
      c->bq = nq;
      c->bqcap = nc;
    } else {
      ok = false;
      c->rc = c_oom(c);
    }
  }
  if (ok) {
    c->bq[c->bqn++] = b;
    c->qrows += b->n;
    pthread_cond_broadcast(&P->cv);
  }
  pthread_mutex_unlock(&P->mu);
  if (!ok) par_batch_free(b);
}

/* Room for len more bytes in b. EXEC_OK or EXEC_NOMEM. */
static int batch_room(par_chunk *c, par_batch *b, size_t len) {
  if (b->used + len <= b->cap) return EXEC_OK;
  size_t nc = b->cap ? b->cap * 2 : 4096;
  while (nc < b->used + len) nc *= 2;
  uint8_t *nb = realloc(b->bytes, nc);
  if (!nb) return c_oom(c);
  b->bytes = nb;
  b->cap = nc;
  return EXEC_OK;
}

/* Rows way: copy the row in c->in into batch b (its strings' bytes as offsets until
** batch_seal; a keyed run's row key too). EXEC_OK or EXEC_NOMEM. */
static int batch_add(par_chunk *c, par_batch *b) {
  int w = c->P->width;
  cat_value *v = b->v + (size_t)b->n * (size_t)w;
  memcpy(v, c->in, (size_t)w * sizeof *v);
  for (int i = 0; i < w; i++) {
    if (v[i].is_null || !cat_type_has_bytes(v[i].type.id)) continue;
    size_t len = v[i].u.s.len;
    if (batch_room(c, b, len)) return EXEC_NOMEM;
    if (len) memcpy(b->bytes + b->used, v[i].u.s.p, len);
    v[i].u.s.p = (const void *)(uintptr_t)b->used;
    b->used += len;
  }
  if (c->P->p->keyed) {
    uint32_t kl;
    const uint8_t *k = par_row_key(c, &kl);
    if (batch_room(c, b, kl)) return EXEC_NOMEM;
    if (kl) memcpy(b->bytes + b->used, k, kl);
    b->koff[b->n] = (uint32_t)b->used;
    b->klen[b->n] = kl;
    b->used += kl;
  }
  b->n++;
  return EXEC_OK;
}

/* Rows way: the offsets of b's strings made pointers into its bytes. */
static void batch_seal(par_batch *b, int w) {
  for (size_t i = 0; i < (size_t)b->n * (size_t)w; i++) {
    cat_value *v = &b->v[i];
    if (!v->is_null && cat_type_has_bytes(v->type.id))
      v->u.s.p = b->bytes + (uintptr_t)v->u.s.p;
  }
}

static int run_rows(par_chunk *c) {
  exec_par *P = c->P;
  par_batch *b = NULL;
  int rc;
  for (;;) {
    if (atomic_load_explicit(&P->stop, memory_order_relaxed)) {
      rc = EXEC_DONE;
      break;
    }
    exec_arena_reset(&c->scratch);
    rc = c_next(c);
    if (rc != EXEC_ROW) break;
    c->scanned++;
    int f = c_filter(c);
    if (f < 0) {
      rc = -f;
      break;
    }
    if (f == 0) continue;
    if (!b) {
      b = malloc(sizeof *b + (size_t)PAR_BATCH_ROWS * (size_t)P->width * sizeof(cat_value));
      if (!b) {
        rc = c_oom(c);
        break;
      }
      b->n = 0;
      b->bytes = NULL;
      b->used = b->cap = 0;
    }
    rc = batch_add(c, b);
    if (rc) break;
    c->rows++;
    if (b->n == PAR_BATCH_ROWS) {
      batch_seal(b, P->width);
      queue_put(c, b);
      b = NULL;
    }
  }
  if (b && b->n && rc == EXEC_DONE) {
    batch_seal(b, P->width);
    queue_put(c, b);
  } else {
    par_batch_free(b);
  }
  return rc == EXEC_DONE ? EXEC_OK : rc;
}

static int order_cmp(const void *a, const void *b, void *ctx) {
  const plan_select *s = ctx;
  const exec_mrow *x = *(exec_mrow *const *)a, *y = *(exec_mrow *const *)b;
  return exec_order_cmp(s->order, s->n_order, x->v, y->v);
}

/* Sorted way: the top-n heap's largest row first (heap order on order_cmp). */
static void heap_fix(exec_mrow **h, size_t n, size_t i, const plan_select *s, bool up) {
  if (up) {
    while (i > 0) {
      size_t p = (i - 1) / 2;
      if (order_cmp(&h[i], &h[p], (void *)s) <= 0) return;
      exec_mrow *t = h[i];
      h[i] = h[p];
      h[p] = t;
      i = p;
    }
    return;
  }
  for (;;) {
    size_t l = 2 * i + 1, r = l + 1, m = i;
    if (l < n && order_cmp(&h[l], &h[m], (void *)s) > 0) m = l;
    if (r < n && order_cmp(&h[r], &h[m], (void *)s) > 0) m = r;
    if (m == i) return;
    exec_mrow *t = h[i];
    h[i] = h[m];
    h[m] = t;
    i = m;
  }
}

static int project(par_chunk *c) {
  const plan_select *s = c->P->x->q->sel;
  c->ev.row = c->in;
  for (int i = 0; i < s->n_proj; i++) {
    const plan_expr *e = s->proj[i];
    if (e->kind == PX_COLUMN) {
      c->out[i] = c->in[e->column];
      continue;
    }
    int rc = exec_eval(&c->ev, e, &c->out[i]);
    if (rc) return c_eval_err(c, rc);
  }
  c->projected++;
  return EXEC_OK;
}

/* Sorted way: keep the projected row (all of them, or the top LIMIT + OFFSET). */
static int keep_sorted(par_chunk *c) {
  const plan_query *q = c->P->x->q;
  const plan_select *s = q->sel;
  c->sort_in++;
  size_t k = q->topn ? (size_t)(q->limit + q->offset) : SIZE_MAX;
  if (k == 0) return EXEC_OK;
  int w = s->n_proj;
  if (c->P->salted) { /* the row's unsalted key after its values: the merge's tie-break */
    uint32_t kl;
    const uint8_t *key = par_row_key(c, &kl);
    c->out[w++] = cat_v_str(CAT_T_VARBINARY, key, kl);
  }
  if (c->qn == k) {
    if (exec_order_cmp(s->order, s->n_order, c->out, c->q[0]->v) >= 0) return EXEC_OK;
    exec_mrow *r = exec_mrow_make(c->out, w, 0);
    if (!r) return c_oom(c);
    exec_mrow_free(c->q[0], 0);
    c->q[0] = r;
    heap_fix(c->q, c->qn, 0, s, false);
    return EXEC_OK;
  }
  if (c->qn == c->qcap) {
    size_t nc = c->qcap ? c->qcap * 2 : 64;
    exec_mrow **nq = realloc(c->q, nc * sizeof *nq);
    if (!nq) return c_oom(c);
    c->q = nq;
    c->qcap = nc;
  }
  exec_mrow *r = exec_mrow_make(c->out, w, 0);
  if (!r) return c_oom(c);
  c->q[c->qn++] = r;
  size_t add = r->bytes + sizeof r;
  if (q->topn) heap_fix(c->q, c->qn, c->qn - 1, s, true);
  if (atomic_fetch_add(&c->P->mem, add) + add > c->P->x->mem_limit)
    return c_too_big(c, "ORDER BY");
  return EXEC_OK;
}

/* Aggregate way: step the row into its group of this chunk. */
static int step_group(par_chunk *c) {
  const plan_select *s = c->P->x->q->sel;
  cat_value key[64];
  if (s->n_group > 64)
    return exec_fail(&c->err, EXEC_TOOBIG, -1, "GROUP BY of more than 64 expressions");
  c->ev.row = c->in;
  for (int i = 0; i < s->n_group; i++) {
    int rc = exec_eval(&c->ev, s->group[i], &key[i]);
    if (rc) return c_eval_err(c, rc);
  }
  bool added, o;
  exec_mrow *g = exec_rowset_find(&c->groups, key, s->n_group, s->n_aggs, true, &added, &o);
  if (o || !g) return c_oom(c);
  if (added) {
    for (int i = 0; i < s->n_aggs; i++) {
      const plan_agg *a = &s->aggs[i];
      cat_type at = a->arg ? a->arg->type : cat_type_of(0);
      exec_agg_init(&g->aggs[i], a->func, a->distinct, &at, &a->type);
      exec_agg_set_order(&g->aggs[i], a->frac, a->desc);
    }
    if (c->n_order == c->cap_order) {
      size_t nc = c->cap_order ? c->cap_order * 2 : 64;
      exec_mrow **no = realloc(c->order, nc * sizeof *no);
      if (!no) return c_oom(c);
      c->order = no;
      c->cap_order = nc;
    }
    if (c->P->salted) { /* the serial scan meets the groups in unsalted key order */
      if (c->cap_fkey < c->cap_order) {
        uint8_t **nf = realloc(c->fkey, c->cap_order * sizeof *nf);
        if (nf) c->fkey = nf;
        uint32_t *nl = realloc(c->fkey_len, c->cap_order * sizeof *nl);
        if (nl) c->fkey_len = nl;
        if (!nf || !nl) return c_oom(c);
        c->cap_fkey = c->cap_order;
      }
      uint32_t kl;
      const uint8_t *k = par_row_key(c, &kl);
      uint8_t *copy = malloc(kl ? kl : 1);
      if (!copy) return c_oom(c);
      if (kl) memcpy(copy, k, kl);
      c->fkey[c->n_order] = copy;
      c->fkey_len[c->n_order] = kl;
    }
    c->order[c->n_order++] = g;
    if (c->groups.bytes > c->P->x->mem_limit) return c_too_big(c, "GROUP BY");
  }
  for (int i = 0; i < s->n_aggs; i++) {
    const plan_agg *a = &s->aggs[i];
    cat_value v;
    const cat_value *pv = NULL;
    if (a->arg) {
      int rc = exec_eval(&c->ev, a->arg, &v);
      if (rc) return c_eval_err(c, rc);
      pv = &v;
    }
    int rc = exec_agg_step(&g->aggs[i], pv, c->evmsg, sizeof c->evmsg);
    if (rc) return c_eval_err(c, rc);
  }
  return EXEC_OK;
}

static int run_buffered(par_chunk *c) {
  exec_par *P = c->P;
  int rc;
  for (;;) {
    if (atomic_load_explicit(&P->stop, memory_order_relaxed)) return EXEC_OK;
    exec_arena_reset(&c->scratch);
    rc = c_next(c);
    if (rc != EXEC_ROW) break;
    c->scanned++;
    int f = c_filter(c);
    if (f < 0) return -f;
    if (f == 0) continue;
    c->rows++;
    rc = P->way == PAR_WAY_AGG ? step_group(c) : project(c);
    if (!rc && P->way == PAR_WAY_SORTED) rc = keep_sorted(c);
    if (rc) return rc;
  }
  if (rc != EXEC_DONE) return rc;
  if (P->way == PAR_WAY_SORTED && c->qn > 1)
    qsort_r(c->q, c->qn, sizeof *c->q, order_cmp, (void *)P->x->q->sel);
  return EXEC_OK;
}

static void run_chunk(void *ctx, uint32_t i) {
  exec_par *P = ctx;
  par_chunk *c = &P->c[i];
  int rc = P->way == PAR_WAY_ROWS ? run_rows(c) : run_buffered(c);
  if (P->way == PAR_WAY_ROWS) pthread_mutex_lock(&P->mu);
  if (!c->rc) c->rc = rc;
  c->done = true;
  if (P->way == PAR_WAY_ROWS) {
    pthread_cond_broadcast(&P->cv);
    pthread_mutex_unlock(&P->mu);
  }
}

/* ---- The pipeline's calls ------------------------------------------------------------ */
bool exec_par_possible(const exec_query *x) {
  const plan_query *q = x->q;
  if (!q->has_scan || q->join) return false;
  if (x->overlay && kv_batch_count(x->overlay)) return false; /* read by one scan */
  if (x->row_hook || exec_trace_current()) return false;
  return true;
}

bool exec_par_wanted(const exec_query *x) {
  return plan_par_parallel(x->q->par) && exec_par_possible(x);
}

bool exec_par_rows(const exec_query *x) { return x->par && x->par->way == PAR_WAY_ROWS; }

int exec_par_open(exec_query *x, exec_error *err) {
  const plan_query *q = x->q;
  const plan_par *p = q->par;
  const plan_select *s = q->sel;
  exec_par *P = calloc(1, sizeof *P);
  if (!P) return exec_fail(err, EXEC_NOMEM, -1, "out of memory");
  x->par = P;
  P->x = x;
  P->p = p;
  P->way = p->merge == PLAN_PAR_AGG ? PAR_WAY_AGG
           : p->merge == PLAN_PAR_MERGE_SORT || p->merge == PLAN_PAR_TOPN ? PAR_WAY_SORTED
                                                                          : PAR_WAY_ROWS;
  P->width = x->direct ? s->n_proj : s->table->n_columns;
  P->salted = p->salt_lo != NULL;
  pthread_mutex_init(&P->mu, NULL);
  pthread_cond_init(&P->cv, NULL);
  atomic_init(&P->stop, false);
  atomic_init(&P->mem, 0);
  P->c = calloc(p->n_chunks, sizeof *P->c);
  if (!P->c) return exec_fail(err, EXEC_NOMEM, -1, "out of memory");
  P->n = p->n_chunks;
  for (uint32_t i = 0; i < P->n; i++) {
    par_chunk *c = &P->c[i];
    c->P = P;
    c->ps = q->scan;
    c->ps.ranges.ranges = p->ranges[i];
    c->ps.ranges.n_ranges = p->n_ranges[i];
    c->ps.ranges.kind = p->n_ranges[i] > 1 ? PLAN_SCAN_SKIP : PLAN_SCAN_RANGE;
    if (P->salted) { /* its run of buckets */
      c->ps.salt_lo = p->salt_lo[i];
      c->ps.salt_hi = p->salt_hi[i];
    }
    c->groups.n_key = s->n_group;
    exec_arena_init(&c->scratch);
    c->ev = x->ev;
    c->ev.scratch = &c->scratch;
    c->ev.msg = c->evmsg;
    c->ev.cap = sizeof c->evmsg;
    c->in = calloc((size_t)P->width + 1, sizeof *c->in);
    c->out = calloc((size_t)s->n_proj + 1, sizeof *c->out);
    if (!c->in || !c->out) return exec_fail(err, EXEC_NOMEM, -1, "out of memory");
    if (!x->direct)
      for (int k = 0; k < P->width; k++) c->in[k] = cat_v_null(s->table->columns[k].type);
    int rc = exec_scan_open_cached(&c->scan, x->be, &c->ps, x->overlay, NULL,
                                   x->direct ? q->slots : NULL, err);
    c->scan_open = true;
    if (rc) return rc;
  }
  int rc = exec_chunk_pool_start(&P->pool, p->threads, P->n, run_chunk, P);
  P->started = true;
  /* fewer threads than asked: the ones started (or this one) run every chunk; a keyed merge
     reads every chunk at once, so their queues are then not bounded (nor when no thread
     started: the chunks ran here, to their end) */
  if (rc || P->pool.n_threads == 0) {
    pthread_mutex_lock(&P->mu);
    if (P->pool.n_threads == 0 || (p->keyed && (uint32_t)P->pool.n_threads < P->n))
      P->unbounded = true;
    pthread_cond_broadcast(&P->cv);
    pthread_mutex_unlock(&P->mu);
  }
  x->act.analyzed = true;
  return EXEC_OK;
}

int exec_par_next(exec_query *x, cat_value *row, exec_error *err) {
  exec_par *P = x->par;
  if (P->p->keyed) return par_keyed_next(P, row, err); /* exec/op_parallel_merge.c */
  size_t w = (size_t)P->width;
  for (;;) {
    if (P->held && P->hpos < P->held->n) {
      memcpy(row, P->held->v + (size_t)P->hpos++ * w, w * sizeof *row);
      return EXEC_ROW;
    }
    if (P->lpos < P->ln) { /* the previous batch's rows are no longer read */
      par_batch_free(P->held);
      P->held = P->loc[P->lpos++];
      P->hpos = 0;
      continue;
    }
    if (P->cur >= P->n) return EXEC_DONE;
    par_chunk *c = &P->c[P->cur];
    pthread_mutex_lock(&P->mu);
    while (c->bqn == 0 && !c->done) pthread_cond_wait(&P->cv, &P->mu);
    if (c->bqn) { /* take the queue whole: its array for ours */
      par_take_queue(P, c, &P->loc, &P->lcap, &P->ln, &P->lpos);
      pthread_mutex_unlock(&P->mu);
      continue;
    }
    int rc = c->rc;
    pthread_mutex_unlock(&P->mu);
    if (rc) {
      *err = c->err;
      return rc;
    }
    P->cur++;
  }
}

int exec_par_gather(exec_query *x, exec_error *err) {
  exec_par *P = x->par;
  exec_chunk_pool_join(&P->pool);
  plan_actuals *a = &x->act;
  for (uint32_t i = 0; i < P->n; i++) {
    par_chunk *c = &P->c[i];
    if (c->rc) {
      *err = c->err;
      return c->rc;
    }
    a->step[PLAN_STEP_SCAN].rows_out += c->scanned;
    a->step[PLAN_STEP_FILTER].rows_in += c->filtered_in;
    a->step[PLAN_STEP_FILTER].rows_out += c->filtered_in ? c->rows : 0;
    a->step[PLAN_STEP_PROJECT].rows_in += c->projected;
    a->step[PLAN_STEP_PROJECT].rows_out += c->projected;
    a->step[PLAN_STEP_SORT].rows_in += c->sort_in;
  }
  return P->way == PAR_WAY_SORTED ? par_merge_sorted(x, err) : par_merge_groups(x, err);
}

void exec_par_close(exec_query *x) {
  exec_par *P = x->par;
  if (!P) return;
  const plan_select *s = x->q->sel;
  pthread_mutex_lock(&P->mu);
  atomic_store(&P->stop, true);
  pthread_cond_broadcast(&P->cv);
  pthread_mutex_unlock(&P->mu);
  if (P->started) exec_chunk_pool_join(&P->pool);
  plan_actuals *a = &x->act;
  exec_metrics_zero(&a->kv);
  exec_metrics_zero(&a->lookup_kv);
  a->rows_assembled = 0;
  a->lookups = a->lookups_found = 0;
  uint64_t scanned = 0;
  a->par.ran = P->started;
  a->par.n = P->n < PLAN_PAR_MAX_CHUNKS ? P->n : PLAN_PAR_MAX_CHUNKS;
  for (uint32_t i = 0; i < P->n; i++) {
    par_chunk *c = &P->c[i];
    if (c->scan_open) {
      exec_scan_close(&c->scan);
      exec_scan_metrics_add(&a->kv, &c->scan.m);
      a->rows_assembled += c->scan.rows_assembled;
      a->lookups += c->scan.lookups; /* an uncovered index's lookups */
      a->lookups_found += c->scan.lookups_found;
      exec_scan_metrics_add(&a->lookup_kv, &c->scan.lm);
    }
    a->ix_filter_in += c->ix_in;
    a->ix_filter_out += c->ix_out;
    if (i < PLAN_PAR_MAX_CHUNKS) a->par.rows[i] = c->rows;
    for (size_t k = 0; k < c->qn; k++)
      if (c->q[k]) exec_mrow_free(c->q[k], 0);
    free(c->q);
    for (size_t k = 0; k < c->bqn; k++) par_batch_free(c->bq[k]);
    free(c->bq);
    if (P->way == PAR_WAY_ROWS) { /* the chunks filtered (exec_par_gather counts the others) */
      a->step[PLAN_STEP_FILTER].rows_in += c->filtered_in;
      a->step[PLAN_STEP_FILTER].rows_out += c->filtered_in ? c->rows : 0;
      scanned += c->scanned;
    }
    for (size_t k = 0; k < c->n_order; k++) /* groups not handed on */
      if (c->order[k]) exec_mrow_free(c->order[k], s->n_aggs);
    free(c->order);
    for (size_t k = 0; c->fkey && k < c->n_order; k++) free(c->fkey[k]);
    free(c->fkey);
    free(c->fkey_len);
    free(c->groups.slots); /* its rows: freed above or handed on */
    free(c->in);
    free(c->out);
    exec_arena_free(&c->scratch);
  }
  if (P->way == PAR_WAY_ROWS) a->step[PLAN_STEP_SCAN].rows_out = scanned; /* all the chunks read */
  if (P->km_ok) exec_kmerge_free(&P->km);
  par_keyed_free(P);
  for (size_t k = P->lpos; k < P->ln; k++) par_batch_free(P->loc[k]);
  free(P->loc);
  par_batch_free(P->held);
  free(P->c);
  pthread_mutex_destroy(&P->mu);
  pthread_cond_destroy(&P->cv);
  free(P);
  x->par = NULL;
}
