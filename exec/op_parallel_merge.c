/*
** exec/op_parallel_merge.c: the merges of a parallel scan's chunks (exec/parallel_int.h): a
** salted scan's rows by their unsalted keys (the keyed rows way: Phoenix's CLIENT MERGE SORT
** of the buckets, over chunks that each merge their own buckets), sorted rows with the k-way
** merge (ORDER BY, top-N), and partial aggregates combined in the order the serial scan meets
** the groups (chunk order; for a salted scan the order of the groups' first unsalted keys).
** Not here: running the chunks (exec/op_parallel.c), the k-way merge (exec/chunk_pool.c).
*/
#include "exec/parallel_int.h"

#include <stdlib.h>
#include <string.h>

/* ---- The keyed rows way ---------------------------------------------------------------- */
/* The unsalted key of chunk c's current row. */
static const uint8_t *cur_key(const par_chunk *c, uint32_t *len) {
  *len = c->rheld->klen[c->rpos];
  return c->rheld->bytes + c->rheld->koff[c->rpos];
}

/* The k-way merge's pull: chunk i's next row (waiting for its thread), the item the chunk. */
static int pull_keyed(void *ctx, uint32_t i, const void **item) {
  exec_par *P = ctx;
  par_chunk *c = &P->c[i];
  for (;;) {
    if (c->rheld && c->rpos + 1 < c->rheld->n) {
      c->rpos++;
      *item = c;
      return 1;
    }
    if (c->rlpos < c->rln) { /* the next batch; the row handed out before is no longer read */
      par_batch_free(c->rheld);
      c->rheld = c->rloc[c->rlpos++];
      c->rpos = 0;
      if (!c->rheld->n) continue;
      *item = c;
      return 1;
    }
    pthread_mutex_lock(&P->mu);
    while (c->bqn == 0 && !c->done) pthread_cond_wait(&P->cv, &P->mu);
    if (c->bqn) { /* take the queue whole: its array for ours */
      par_take_queue(P, c, &c->rloc, &c->rlcap, &c->rln, &c->rlpos);
      pthread_mutex_unlock(&P->mu);
      continue;
    }
    int rc = c->rc;
    pthread_mutex_unlock(&P->mu);
    if (rc) {
      P->km_rc = rc;
      P->km_err = c->err;
      return -1;
    }
    return 0;
  }
}

static int cmp_keyed(void *ctx, const void *a, const void *b) {
  exec_par *P = ctx;
  uint32_t al, bl;
  const uint8_t *ak = cur_key(a, &al), *bk = cur_key(b, &bl);
  int c = memcmp(ak, bk, al < bl ? al : bl);
  if (!c) c = (al > bl) - (al < bl);
  return P->x->q->scan.reverse ? -c : c;
}

int par_keyed_next(exec_par *P, cat_value *row, exec_error *err) {
  if (!P->km_ok) {
    if (exec_kmerge_init(&P->km, P->n, pull_keyed, cmp_keyed, P))
      return exec_fail(err, EXEC_NOMEM, -1, "out of memory");
    P->km_ok = true;
  }
  const void *it;
  int rc = exec_kmerge_next(&P->km, &it, NULL);
  if (rc < 0) {
    *err = P->km_err;
    return P->km_rc ? P->km_rc : EXEC_ERROR;
  }
  if (rc == 0) return EXEC_DONE;
  const par_chunk *c = it;
  size_t w = (size_t)P->width;
  memcpy(row, c->rheld->v + (size_t)c->rpos * w, w * sizeof *row);
  return EXEC_ROW;
}

void par_keyed_free(exec_par *P) {
  for (uint32_t i = 0; i < P->n; i++) {
    par_chunk *c = &P->c[i];
    for (size_t k = c->rlpos; k < c->rln; k++) par_batch_free(c->rloc[k]);
    free(c->rloc);
    par_batch_free(c->rheld);
    c->rloc = NULL;
    c->rheld = NULL;
    c->rln = c->rlpos = 0;
  }
}

/* ---- Sorted rows ----------------------------------------------------------------------- */
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
  const cat_value *x = ((const exec_mrow *)a)->v, *y = ((const exec_mrow *)b)->v;
  int c = exec_order_cmp(s->order, s->n_order, x, y);
  if (c || !v->P->salted) return c; /* (unsalted: ties go to the lower chunk, in key order) */
  /* a salted scan's chunks are buckets: equal rows in the order of their unsalted keys, as
     the serial scan (the buckets merged, then a stable sort) gives them */
  const cat_value *xk = &x[s->n_proj], *yk = &y[s->n_proj];
  size_t xl = xk->u.s.len, yl = yk->u.s.len;
  c = memcmp(xk->u.s.p, yk->u.s.p, xl < yl ? xl : yl);
  if (!c) c = (xl > yl) - (xl < yl);
  return v->P->x->q->scan.reverse ? -c : c;
}

int par_merge_sorted(exec_query *x, exec_error *err) {
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

/* ---- Partial aggregates ---------------------------------------------------------------- */
typedef struct group_ref {
  uint32_t chunk;   /* the chunk */
  size_t k;         /* its group order[k] */
} group_ref;

typedef struct group_sort {
  const exec_par *P; /* the run */
  bool reverse;      /* descending keys */
} group_sort;

/* The order of two groups' first keys (the serial scan's meeting order). */
static int by_first_key(const void *a, const void *b, void *ctx) {
  const group_sort *gs = ctx;
  const group_ref *x = a, *y = b;
  const par_chunk *cx = &gs->P->c[x->chunk], *cy = &gs->P->c[y->chunk];
  uint32_t xl = cx->fkey_len[x->k], yl = cy->fkey_len[y->k];
  int c = memcmp(cx->fkey[x->k], cy->fkey[y->k], xl < yl ? xl : yl);
  if (!c) c = (xl > yl) - (xl < yl);
  if (gs->reverse) c = -c;
  if (c) return c;
  return x->chunk != y->chunk ? (x->chunk < y->chunk ? -1 : 1) : (x->k < y->k ? -1 : 1);
}

/* Every chunk's groups (n of them) in the order the serial scan meets them into *out
** (malloc): chunk after chunk, each in its own order; a salted scan's by their first rows'
** unsalted keys (descending for a reverse scan). EXEC_OK or EXEC_NOMEM. */
static int group_order(const exec_par *P, bool reverse, size_t n, group_ref **out) {
  group_ref *r = malloc((n ? n : 1) * sizeof *r);
  if (!r) return EXEC_NOMEM;
  size_t at = 0;
  for (uint32_t i = 0; i < P->n; i++)
    for (size_t k = 0; k < P->c[i].n_order; k++) r[at++] = (group_ref){i, k};
  if (P->salted && n > 1) {
    group_sort gs = {P, reverse};
    qsort_r(r, n, sizeof *r, by_first_key, &gs);
  }
  *out = r;
  return EXEC_OK;
}

int par_merge_groups(exec_query *x, exec_error *err) {
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
  group_ref *ord = NULL;
  rc = group_order(P, x->q->scan.reverse, cap, &ord);
  if (rc) {
    free(gs);
    return exec_fail(err, rc, -1, "out of memory");
  }
  for (size_t oi = 0; oi < cap && !rc; oi++) { /* the serial scan's order */
    {
      par_chunk *c = &P->c[ord[oi].chunk];
      size_t k = ord[oi].k;
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
  free(ord);
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

