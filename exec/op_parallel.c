/*
** exec/op_parallel.c: the parallel scan of exec/parallel.h: the session's setting, the
** decision and chunk keys (exec_par_attach), and the chunks' run: their scans opened on the
** stepping thread, run on a chunk pool, their rows queued (the rows way), sorted and merged,
** or aggregated and combined. Every chunk has its own scan, decoder, evaluation scratch and
** error; the plan, the parameters and the filter are shared read-only. A chunk's thread
** touches only its chunk and, under the queue lock, its queue.
** Not here: the chunk pool and the k-way merge (exec/chunk_pool.c), the plan
** (planner/parallel.c), the pipeline (exec/op_query.c).
*/
#include "exec/parallel.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "exec/chunk_pool.h"
#include "exec/engine_int.h"
#include "exec/keymap.h"
#include "planner/colagg.h"
#include "planner/hint.h"

#define QUEUE_ROWS 1024u /* rows one chunk's queue holds ahead of the reader */
#define BATCH_ROWS 64u   /* rows a chunk's thread hands over at once (one par_batch) */

/* Rows way: rows a chunk hands over at once, in two allocations (the values, their bytes). */
typedef struct par_batch {
  uint32_t n;                /* rows */
  uint8_t *bytes;            /* the string bytes of the values (malloc) */
  size_t used, cap;          /* bytes used, allocated */
  cat_value v[];             /* n rows of the run's width */
} par_batch;

static void batch_free(par_batch *b) {
  if (!b) return;
  free(b->bytes);
  free(b);
}

/* ---- The setting --------------------------------------------------------------------- */
int exec_set_parallel(exec_session *s, int threads, int64_t min_rows, exec_error *err) {
  if (threads < 0 || threads > EXEC_PAR_THREADS_MAX)
    return exec_fail(err, EXEC_MISUSE, -1,
                     "scan threads must be 0 (the number of processors) to %d, not %d",
                     EXEC_PAR_THREADS_MAX, threads);
  s->par_threads = threads;
  s->par_min_rows = min_rows < 0 ? PLAN_PAR_MIN_ROWS_DEFAULT : (uint64_t)min_rows;
  s->par_min_set = true;
  return EXEC_OK;
}

static int n_cpus;                           /* online processors, read once */
static pthread_once_t cpus_once = PTHREAD_ONCE_INIT;

static void read_cpus(void) {
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  n_cpus = n < 1 ? 1 : n > EXEC_PAR_THREADS_MAX ? EXEC_PAR_THREADS_MAX : (int)n;
}

int exec_parallel_threads(const exec_session *s) {
  if (s->par_threads > 0) return s->par_threads;
  pthread_once(&cpus_once, read_cpus); /* (sysconf reads /sys: not at every statement) */
  return n_cpus;
}

uint64_t exec_parallel_min_rows(const exec_session *s) {
  return s->par_min_set ? s->par_min_rows : PLAN_PAR_MIN_ROWS_DEFAULT;
}

/* ---- The decision -------------------------------------------------------------------- */
typedef struct cuts {
  uint8_t **k;   /* keys (malloc each) */
  uint32_t *len; /* their lengths */
  uint32_t n, cap; /* count, allocated */
  bool nomem;    /* an allocation failed */
} cuts;

static void add_cut(void *ctx, const uint8_t *key, uint32_t len) {
  cuts *c = ctx;
  if (c->nomem || !len) return;
  if (c->n == c->cap) {
    uint32_t nc = c->cap ? c->cap * 2 : 16;
    uint8_t **nk = realloc(c->k, nc * sizeof *nk);
    if (nk) c->k = nk;
    uint32_t *nl = realloc(c->len, nc * sizeof *nl);
    if (nl) c->len = nl;
    if (!nk || !nl) return (void)(c->nomem = true);
    c->cap = nc;
  }
  uint8_t *p = malloc(len);
  if (!p) return (void)(c->nomem = true);
  memcpy(p, key, len);
  c->k[c->n] = p;
  c->len[c->n++] = len;
}

static int cut_cmp(const void *a, const void *b, void *ctx) {
  const cuts *c = ctx;
  uint32_t i = *(const uint32_t *)a, j = *(const uint32_t *)b;
  size_t n = c->len[i] < c->len[j] ? c->len[i] : c->len[j];
  int r = memcmp(c->k[i], c->k[j], n);
  return r ? r : c->len[i] < c->len[j] ? -1 : c->len[i] > c->len[j];
}

static void cuts_free(cuts *c) {
  for (uint32_t i = 0; i < c->n; i++) free(c->k[i]);
  free(c->k);
  free(c->len);
}

static const char TXN_WHY[] = "the transaction's uncommitted writes are read by one scan";

int exec_par_attach(exec_session *s, plan_query *q, plan_arena *A, const char *serial_why,
                    exec_error *err) {
  const char *why = NULL;
  uint64_t min_rows = exec_parallel_min_rows(s);
  if (!plan_par_eligible(q, min_rows, &why) && !why) { /* a point lookup, a small scan ... */
    q->par = NULL;
    return EXEC_OK;
  }
  int threads = exec_parallel_threads(s);
  if (q->par && q->par->asked == threads && q->par->min_rows == min_rows &&
      q->par->serial_why != TXN_WHY)
    return EXEC_OK; /* a kept plan, cut for these settings (and not kept serial by writes a
                       transaction may have committed since) */
  q->par = NULL;
  if (plan_colagg_check(q, NULL)) return EXEC_OK; /* the columnar aggregate has its chunks */
  if (!why && serial_why) why = serial_why;
  if (!why && plan_hint_has(q->sel->hint, "SERIAL")) why = "the SERIAL hint";
  if (!why && s->txn && kv_batch_count(s->txn))
    why = TXN_WHY;
  int asked = threads; /* the setting the plan is made for */
  if (why) threads = 1;
  /* region boundaries from the backend, and the local store's block-index cut points (the
     guideposts) under it; a backend without split points gives none */
  cuts c = {0};
  uint32_t want = threads > 1 ? (uint32_t)threads * 4 : 1;
  if (want > PLAN_PAR_MAX_CHUNKS) want = PLAN_PAR_MAX_CHUNKS;
  uint32_t fam = q->scan.est_family ? q->scan.est_family : q->scan.family_ids[0];
  if (threads > 1) {
    kv_backend *be = &s->be;
    if (be->caps.split_points) (void)kv_be_split_points(be, fam, want, add_cut, &c);
    kv_db *db = kv_backend_local_db(be);
    if (db && strcmp(be->caps.name, "local") != 0) {
      kv_backend local;
      (void)kv_be_split_points(kv_backend_local_init(&local, db), fam, want, add_cut, &c);
    }
  }
  int rc = EXEC_OK;
  uint32_t *ord = c.n ? malloc(c.n * sizeof *ord) : NULL;
  const uint8_t **keys = c.n ? malloc(c.n * sizeof *keys) : NULL;
  uint32_t *lens = c.n ? malloc(c.n * sizeof *lens) : NULL;
  plan_par *p = plan_arena_alloc(A, sizeof *p);
  if (c.nomem || !p || (c.n && (!ord || !keys || !lens))) {
    rc = exec_fail(err, EXEC_NOMEM, -1, "out of memory");
  } else {
    for (uint32_t i = 0; i < c.n; i++) ord[i] = i;
    if (c.n > 1) qsort_r(ord, c.n, sizeof *ord, cut_cmp, &c);
    uint32_t n = 0; /* sorted, distinct */
    for (uint32_t i = 0; i < c.n; i++) {
      if (n && cut_cmp(&ord[i], &ord[i - 1], &c) == 0) continue;
      keys[n] = c.k[ord[i]];
      lens[n++] = c.len[ord[i]];
    }
    if (n > want - 1) { /* more than asked (regions and guideposts): spread evenly */
      uint32_t m = want - 1;
      for (uint32_t k = 0; k < m; k++) {
        uint32_t at = (uint32_t)(((uint64_t)(k + 1) * (n + 1)) / (m + 1)) - 1;
        keys[k] = keys[at];
        lens[k] = lens[at];
      }
      n = m;
    }
    rc = plan_par_build(q, keys, lens, n, threads, A, p);
    if (rc) rc = exec_fail(err, rc, -1, "out of memory");
    if (!rc && why) p->serial_why = why;
    p->asked = asked;
    p->min_rows = min_rows;
    if (!rc) q->par = p;
  }
  free(ord);
  free(keys);
  free(lens);
  cuts_free(&c);
  return rc;
}

/* ---- The chunks ---------------------------------------------------------------------- */
enum { WAY_ROWS = 0, WAY_SORTED, WAY_AGG };

typedef struct par_chunk {
  struct exec_par *P;        /* the run */
  plan_scan ps;              /* the query's scan cut to this chunk */
  exec_scan_state scan;      /* its scan */
  bool scan_open;            /* opened */
  cat_value *in;             /* the decoded row (the table's columns, or out's slots) */
  cat_value *out;            /* the projected row (sorted and aggregate ways) */
  exec_arena scratch;        /* per-row scratch */
  exec_eval_ctx ev;          /* evaluation over in */
  char evmsg[EXEC_ERRMSG_MAX]; /* its errors */
  exec_mrow **q;             /* sorted way: the rows */
  size_t qn, qcap;           /* count, allocated */
  par_batch **bq;            /* rows way: the queue of batches (under P->mu) */
  size_t bqn, bqcap, qrows;  /* batches, allocated, rows in them */
  exec_rowset groups;        /* aggregate way: this chunk's groups */
  exec_mrow **order;         /* them in the order they were met */
  size_t n_order, cap_order; /* count, allocated */
  bool done;                 /* finished (under P->mu for the rows way) */
  int rc;                    /* EXEC_OK or its error */
  exec_error err;            /* the error */
  uint64_t rows;             /* rows handed on (after the filter) */
  uint64_t scanned, filtered_in, projected, sort_in; /* step counters */
} par_chunk;

typedef struct exec_par {
  exec_query *x;             /* the pipeline */
  const plan_par *p;         /* the plan */
  int way;                   /* WAY_* */
  par_chunk *c;              /* the chunks */
  uint32_t n;                /* their count */
  int width;                 /* values of a decoded row */
  exec_chunk_pool pool;      /* the threads */
  bool started;              /* pool started */
  pthread_mutex_t mu;        /* the rows way's queues */
  pthread_cond_t cv;         /* a queue changed */
  atomic_bool stop;          /* the reader stopped: threads end */
  atomic_size_t mem;         /* sorted way: bytes of rows all chunks hold (the sort's limit
                                is the serial sort's: for them all) */
  uint32_t cur;              /* rows way: the chunk being read */
  par_batch **loc;           /* rows way: batches taken from it */
  size_t ln, lpos, lcap;     /* their count, the next, allocated */
  par_batch *held;           /* the batch the reader's values point into */
  uint32_t hpos;             /* its next row */
} exec_par;

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

/* Rows way: hand batch b to the queue, waiting while it holds QUEUE_ROWS rows. */
static void queue_put(par_chunk *c, par_batch *b) {
  exec_par *P = c->P;
  pthread_mutex_lock(&P->mu);
  while (c->qrows >= QUEUE_ROWS && !atomic_load(&P->stop)) pthread_cond_wait(&P->cv, &P->mu);
  bool ok = !atomic_load(&P->stop);
  if (ok && c->bqn == c->bqcap) {
    size_t nc = c->bqcap ? c->bqcap * 2 : 2 * QUEUE_ROWS / BATCH_ROWS;
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
  if (!ok) batch_free(b);
}

/* Rows way: copy the row in c->in into batch b (its strings' bytes as offsets until
** batch_seal). EXEC_OK or EXEC_NOMEM. */
static int batch_add(par_chunk *c, par_batch *b) {
  int w = c->P->width;
  cat_value *v = b->v + (size_t)b->n * (size_t)w;
  memcpy(v, c->in, (size_t)w * sizeof *v);
  for (int i = 0; i < w; i++) {
    if (v[i].is_null || !cat_type_has_bytes(v[i].type.id)) continue;
    size_t len = v[i].u.s.len;
    if (b->used + len > b->cap) {
      size_t nc = b->cap ? b->cap * 2 : 4096;
      while (nc < b->used + len) nc *= 2;
      uint8_t *nb = realloc(b->bytes, nc);
      if (!nb) return c_oom(c);
      b->bytes = nb;
      b->cap = nc;
    }
    if (len) memcpy(b->bytes + b->used, v[i].u.s.p, len);
    v[i].u.s.p = (const void *)(uintptr_t)b->used;
    b->used += len;
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
    rc = exec_scan_next(&c->scan, c->in, &c->err);
    if (rc != EXEC_ROW) break;
    c->scanned++;
    int f = c_filter(c);
    if (f < 0) {
      rc = -f;
      break;
    }
    if (f == 0) continue;
    if (!b) {
      b = malloc(sizeof *b + (size_t)BATCH_ROWS * (size_t)P->width * sizeof(cat_value));
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
    if (b->n == BATCH_ROWS) {
      batch_seal(b, P->width);
      queue_put(c, b);
      b = NULL;
    }
  }
  if (b && b->n && rc == EXEC_DONE) {
    batch_seal(b, P->width);
    queue_put(c, b);
  } else {
    batch_free(b);
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
  if (c->qn == k) {
    if (exec_order_cmp(s->order, s->n_order, c->out, c->q[0]->v) >= 0) return EXEC_OK;
    exec_mrow *r = exec_mrow_make(c->out, s->n_proj, 0);
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
  exec_mrow *r = exec_mrow_make(c->out, s->n_proj, 0);
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
    rc = exec_scan_next(&c->scan, c->in, &c->err);
    if (rc != EXEC_ROW) break;
    c->scanned++;
    int f = c_filter(c);
    if (f < 0) return -f;
    if (f == 0) continue;
    c->rows++;
    rc = P->way == WAY_AGG ? step_group(c) : project(c);
    if (!rc && P->way == WAY_SORTED) rc = keep_sorted(c);
    if (rc) return rc;
  }
  if (rc != EXEC_DONE) return rc;
  if (P->way == WAY_SORTED && c->qn > 1)
    qsort_r(c->q, c->qn, sizeof *c->q, order_cmp, (void *)P->x->q->sel);
  return EXEC_OK;
}

static void run_chunk(void *ctx, uint32_t i) {
  exec_par *P = ctx;
  par_chunk *c = &P->c[i];
  int rc = P->way == WAY_ROWS ? run_rows(c) : run_buffered(c);
  if (P->way == WAY_ROWS) pthread_mutex_lock(&P->mu);
  if (!c->rc) c->rc = rc;
  c->done = true;
  if (P->way == WAY_ROWS) {
    pthread_cond_broadcast(&P->cv);
    pthread_mutex_unlock(&P->mu);
  }
}

/* ---- The pipeline's calls ------------------------------------------------------------ */
bool exec_par_wanted(const exec_query *x) {
  const plan_query *q = x->q;
  if (!plan_par_parallel(q->par) || !q->has_scan || q->join) return false;
  if (x->overlay && kv_batch_count(x->overlay)) return false; /* read by one scan */
  if (x->row_hook || exec_trace_current()) return false;
  return true;
}

bool exec_par_rows(const exec_query *x) { return x->par && x->par->way == WAY_ROWS; }

int exec_par_open(exec_query *x, exec_error *err) {
  const plan_query *q = x->q;
  const plan_par *p = q->par;
  const plan_select *s = q->sel;
  exec_par *P = calloc(1, sizeof *P);
  if (!P) return exec_fail(err, EXEC_NOMEM, -1, "out of memory");
  x->par = P;
  P->x = x;
  P->p = p;
  P->way = p->merge == PLAN_PAR_AGG ? WAY_AGG
           : p->merge == PLAN_PAR_MERGE_SORT || p->merge == PLAN_PAR_TOPN ? WAY_SORTED
                                                                          : WAY_ROWS;
  P->width = x->direct ? s->n_proj : s->table->n_columns;
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
  (void)rc; /* fewer threads than asked: the ones started (or this one) run every chunk */
  x->act.analyzed = true;
  return EXEC_OK;
}

int exec_par_next(exec_query *x, cat_value *row, exec_error *err) {
  exec_par *P = x->par;
  size_t w = (size_t)P->width;
  for (;;) {
    if (P->held && P->hpos < P->held->n) {
      memcpy(row, P->held->v + (size_t)P->hpos++ * w, w * sizeof *row);
      return EXEC_ROW;
    }
    if (P->lpos < P->ln) { /* the previous batch's rows are no longer read */
      batch_free(P->held);
      P->held = P->loc[P->lpos++];
      P->hpos = 0;
      continue;
    }
    if (P->cur >= P->n) return EXEC_DONE;
    par_chunk *c = &P->c[P->cur];
    pthread_mutex_lock(&P->mu);
    while (c->bqn == 0 && !c->done) pthread_cond_wait(&P->cv, &P->mu);
    if (c->bqn) { /* take the queue whole: its array for ours */
      par_batch **t = P->loc;
      size_t tcap = P->lcap;
      P->loc = c->bq;
      P->lcap = c->bqcap;
      P->ln = c->bqn;
      P->lpos = 0;
      c->bq = t;
      c->bqcap = tcap;
      c->bqn = 0;
      c->qrows = 0;
      pthread_cond_broadcast(&P->cv);
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

/* The k-way merge's view of the sorted chunks. */
typedef struct sorted_view {
  exec_par *P;    /* the run */
  size_t *pos;    /* per chunk: its next row */
} sorted_view;

static int pull_sorted(void *ctx, uint32_t i, const void **item) {
  sorted_view *v = ctx;
  par_chunk *c = &v->P->c[i];
  if (v->pos[i] >= c->qn) return 0;
  *item = c->q[v->pos[i]++];
  return 1;
}

static int cmp_sorted(void *ctx, const void *a, const void *b) {
  sorted_view *v = ctx;
  const plan_select *s = v->P->x->q->sel;
  return exec_order_cmp(s->order, s->n_order, ((const exec_mrow *)a)->v,
                        ((const exec_mrow *)b)->v);
}

static int merge_sorted(exec_query *x, exec_error *err) {
  exec_par *P = x->par;
  const plan_query *q = x->q;
  size_t total = 0;
  for (uint32_t i = 0; i < P->n; i++) total += P->c[i].qn;
  size_t keep = q->topn ? (size_t)(q->limit + q->offset) : total;
  if (keep > total) keep = total;
  sorted_view v = {P, calloc(2 * (size_t)P->n, sizeof *v.pos)};
  exec_mrow **rows = malloc((keep ? keep : 1) * sizeof *rows);
  exec_kmerge m;
  if (!v.pos || !rows || exec_kmerge_init(&m, P->n, pull_sorted, cmp_sorted, &v)) {
    free(v.pos);
    free(rows);
    return exec_fail(err, EXEC_NOMEM, -1, "out of memory");
  }
  size_t n = 0;
  const void *it;
  uint32_t from;
  memset(v.pos, 0, P->n * sizeof *v.pos);
  size_t *taken = v.pos + P->n; /* per chunk: its rows merged (a chunk's leading rows) */
  while (n < keep && exec_kmerge_next(&m, &it, &from) > 0) {
    rows[n++] = (exec_mrow *)it;
    taken[from]++;
  }
  exec_kmerge_free(&m);
  /* the rows merged move to x; the chunks free the rest (the moved slots cleared) */
  for (uint32_t i = 0; i < P->n; i++)
    for (size_t k = 0; k < taken[i]; k++) P->c[i].q[k] = NULL;
  free(v.pos);
  free(x->rows);
  x->rows = rows;
  x->n_rows = n;
  x->cap_rows = keep ? keep : 1;
  for (size_t i = 0; i < n; i++) x->mem += rows[i]->bytes + sizeof rows[i];
  x->act.step[PLAN_STEP_SORT].rows_out = n;
  return EXEC_OK;
}

static int merge_groups(exec_query *x, exec_error *err) {
  exec_par *P = x->par;
  const plan_select *s = x->q->sel;
  exec_rowset all = {0};
  all.n_key = s->n_group;
  size_t cap = 0;
  for (uint32_t i = 0; i < P->n; i++) cap += P->c[i].n_order;
  exec_mrow **gs = malloc((cap ? cap : 1) * sizeof *gs);
  if (!gs) return exec_fail(err, EXEC_NOMEM, -1, "out of memory");
  size_t n = 0;
  int rc = EXEC_OK;
  char msg[EXEC_ERRMSG_MAX];
  for (uint32_t i = 0; i < P->n && !rc; i++) { /* in chunk order: the serial scan's order */
    par_chunk *c = &P->c[i];
    for (size_t k = 0; k < c->n_order && !rc; k++) {
      exec_mrow *g = c->order[k];
      bool added, o;
      exec_mrow *a = exec_rowset_find(&all, g->v, s->n_group, 0, true, &added, &o);
      if (o || !a) {
        rc = exec_fail(err, EXEC_NOMEM, -1, "out of memory");
        break;
      }
      if (added) { /* first met here: the chunk's group itself goes on, and the key-only
                      row of `all` points at it through its unused aggs field */
        a->aggs = (exec_agg *)g;
        gs[n++] = g;
        c->order[k] = NULL;
        continue;
      }
      exec_mrow *into = (exec_mrow *)a->aggs;
      for (int j = 0; j < s->n_aggs && !rc; j++) {
        int mrc = exec_agg_merge(&into->aggs[j], &g->aggs[j], msg, sizeof msg);
        if (mrc) rc = exec_fail(err, mrc, -1, "%s", msg);
      }
    }
  }
  for (size_t i = 0; i < all.cap; i++) /* the key-only rows point at groups, not own them */
    if (all.slots[i]) all.slots[i]->aggs = NULL;
  exec_rowset_free(&all, 0);
  exec_mrow *single = NULL;
  if (!rc && s->n_group == 0) { /* one group even over no row */
    single = n ? gs[0] : exec_mrow_make(NULL, 0, s->n_aggs);
    if (!single) {
      rc = exec_fail(err, EXEC_NOMEM, -1, "out of memory");
    } else if (!n) {
      for (int i = 0; i < s->n_aggs; i++) {
        const plan_agg *a = &s->aggs[i];
        cat_type at = a->arg ? a->arg->type : cat_type_of(0);
        exec_agg_init(&single->aggs[i], a->func, a->distinct, &at, &a->type);
        exec_agg_set_order(&single->aggs[i], a->frac, a->desc);
      }
    }
  }
  if (rc) {
    for (size_t i = 0; i < n; i++) exec_mrow_free(gs[i], s->n_aggs);
    free(gs);
    return rc;
  }
  x->act.step[PLAN_STEP_AGG].rows_in = 0;
  for (uint32_t i = 0; i < P->n; i++) x->act.step[PLAN_STEP_AGG].rows_in += P->c[i].rows;
  if (s->n_group == 0) {
    for (size_t i = 1; i < n; i++) exec_mrow_free(gs[i], s->n_aggs); /* (one at most) */
    free(gs);
    return exec_query_take_groups(x, single, NULL, 0, err);
  }
  return exec_query_take_groups(x, NULL, gs, n, err);
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
  return P->way == WAY_SORTED ? merge_sorted(x, err) : merge_groups(x, err);
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
  a->rows_assembled = 0;
  uint64_t scanned = 0;
  a->par.ran = P->started;
  a->par.n = P->n < PLAN_PAR_MAX_CHUNKS ? P->n : PLAN_PAR_MAX_CHUNKS;
  for (uint32_t i = 0; i < P->n; i++) {
    par_chunk *c = &P->c[i];
    if (c->scan_open) {
      exec_scan_close(&c->scan);
      exec_scan_metrics_add(&a->kv, &c->scan.m);
      a->rows_assembled += c->scan.rows_assembled;
    }
    if (i < PLAN_PAR_MAX_CHUNKS) a->par.rows[i] = c->rows;
    for (size_t k = 0; k < c->qn; k++)
      if (c->q[k]) exec_mrow_free(c->q[k], 0);
    free(c->q);
    for (size_t k = 0; k < c->bqn; k++) batch_free(c->bq[k]);
    free(c->bq);
    if (P->way == WAY_ROWS) { /* the chunks filtered (exec_par_gather counts the others) */
      a->step[PLAN_STEP_FILTER].rows_in += c->filtered_in;
      a->step[PLAN_STEP_FILTER].rows_out += c->filtered_in ? c->rows : 0;
      scanned += c->scanned;
    }
    for (size_t k = 0; k < c->n_order; k++) /* groups not handed on */
      if (c->order[k]) exec_mrow_free(c->order[k], s->n_aggs);
    free(c->order);
    free(c->groups.slots); /* its rows: freed above or handed on */
    free(c->in);
    free(c->out);
    exec_arena_free(&c->scratch);
  }
  if (P->way == WAY_ROWS) a->step[PLAN_STEP_SCAN].rows_out = scanned; /* all the chunks read */
  for (size_t k = P->lpos; k < P->ln; k++) batch_free(P->loc[k]);
  free(P->loc);
  batch_free(P->held);
  free(P->c);
  pthread_mutex_destroy(&P->mu);
  pthread_cond_destroy(&P->cv);
  free(P);
  x->par = NULL;
}
