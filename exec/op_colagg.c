/*
** exec/op_colagg.c: the columnar aggregate pushdown (exec/colagg.h). For a plan the planner
** found eligible (planner/colagg.h), turns its pushed filter (planner/filter.h plan_filter_leaves) and aggregates
** into a kv/colscan/colscan.h spec over the one family read, runs it on EXEC_COLAGG_THREADS chunks
** with one set of accumulators (exec/agg.h) per chunk, reads the ranges kv/ hands back the
** row way (a kv scan at the same pinned snapshot with the same projection and filter), and
** merges the accumulators into the single group row the query pipeline finishes. Over key
** ranges (a range, point or skip scan, a skip scan over each leading prefix) kv/ gets the
** same ranges and checks every row's key; with GROUP BY on key columns kv/ hands out each
** row's key and every chunk keeps its own groups (exec/op_colagg_group.c), merged after.
**
** Values reach the accumulators decoded (catalog/valcodec.h) one passing row at a time, so
** every aggregate's rules (exact integer and DECIMAL sums, overflow errors, MIN/MAX types)
** are exec/agg.c's own. COUNT(*) steps once per passing row. DECIMAL sums
** depend on the order of the additions (the 38-digit limit checked at each one), so a query
** with one runs in one chunk in key order and is refused when any rows would have to come
** back out of order; sums into a DOUBLE are exactly rounded (exec/dsum.h) and do not.
** Not here: the block walk (kv/colscan/), the pipeline (exec/op_query.c), EXPLAIN text
** (planner/explain.c).
*/
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "catalog/valcodec.h"
#include "exec/colagg.h"
#include "exec/colagg_int.h"
#include "exec/keymap.h"
#include "planner/colagg.h"
#include "kv/colscan/colscan.h"
#include "planner/filter.h"
#include "planner/skip_prefix.h"
#include "sql/ast.h"

/* The table column of an aggregate's argument, or -1. */
static int arg_column(const plan_agg *a) {
  if (!a->arg || a->arg->kind != PX_COLUMN) return -1;
  return a->arg->column;
}

/* ---- The consumer: one set of accumulators per chunk ----------------------------------- */
typedef struct cctx {
  exec_agg *acc;             /* n_aggs accumulators */
  int n_aggs;                /* count */
  int agg_arg[KV_COLAGG_MAX_ARGS + 64]; /* per aggregate: index in the spec's args, -1 */
  cat_type arg_type[KV_COLAGG_MAX_ARGS]; /* per arg: the column type */
  bool inited;               /* acc initialized */
  exec_cg *grp;              /* GROUP BY: this chunk's groups (acc unused), else NULL */
  bool lower;                /* rows may come before a group's first row seen */
  uint32_t key_arg;          /* GROUP BY: the index of the row keys in vals (n_args) */
  exec_agg **run;            /* GROUP BY: per row of a batch, its group's accumulators */
  uint32_t run_cap;          /* entries allocated there */
  size_t grp_cap;            /* GROUP BY: bytes of groups this chunk may hold; past them it
                                stops with rc EXEC_DONE (the rows path, which streams them or
                                reports the limit, answers) */
  int rc;                    /* EXEC_OK or the first error */
  char msg[EXEC_ERRMSG_MAX]; /* its message */
  const atomic_int *intr;    /* the stepping thread's interrupt flag (workers have none) */
} cctx;

/* One end of a part of a batch: the row, its group and its leading columns' length. */
typedef struct end_of {
  uint32_t r;            /* row in the batch */
  exec_agg *acc;         /* its group's accumulators */
  exec_mrow *g;          /* its group */
  uint32_t plen;         /* bytes of the key columns before the last one read */
} end_of;

static int find_end(cctx *c, const kv_colvals *k, uint32_t r, end_of *e) {
  e->r = r; /* lower: a part's later row may be found before its earlier ones */
  int rc = exec_cg_find(c->grp, k->p[r], k->len[r], true, &e->acc, c->msg, sizeof c->msg);
  e->g = c->grp->last;
  e->plen = c->grp->lpre_len;
  return rc;
}

/* c->run[a->r ..= b->r] = the groups of those rows, halving until the ends agree. */
static int split(cctx *c, const kv_colvals *k, const end_of *a, const end_of *b) {
  if (a->g == b->g && a->plen == b->plen && (!a->plen || memcmp(k->p[a->r], k->p[b->r], a->plen) == 0)) {
    for (uint32_t r = a->r; r <= b->r; r++) c->run[r] = a->acc;
    return EXEC_OK;
  }
  if (b->r - a->r <= 1) {
    c->run[a->r] = a->acc;
    c->run[b->r] = b->acc;
    return EXEC_OK;
  }
  end_of m;
  int rc = find_end(c, k, a->r + (b->r - a->r) / 2, &m);
  if (!rc) rc = split(c, k, a, &m);
  if (!rc) rc = split(c, k, &m, b);
  return rc;
}

/* The rows [r0, r1) of one group (accumulators acc) stepped in one pass per aggregate, when
** every aggregate is COUNT(*), COUNT(c), or SUM / AVG of a DOUBLE into a DOUBLE result, none
** DISTINCT: the same exact additions as exec_agg_step's (so the same sums). Returns r1, or r0
** when some aggregate needs the general path (nothing stepped then: a sum already in wide
** digits, a cell that is not a DOUBLE's, out of memory). */
static uint32_t fast_steps(cctx *c, exec_agg *acc, const kv_colvals *vals, uint32_t r0,
                           uint32_t r1) {
  for (int i = 0; i < c->n_aggs; i++) {
    const exec_agg *a = &acc[i];
    int arg = c->agg_arg[i];
    if (a->distinct) return r0;
    if (a->id == EXEC_AGG_COUNT_STAR || (a->id == EXEC_AGG_COUNT && arg >= 0)) continue;
    if ((a->id != EXEC_AGG_SUM && a->id != EXEC_AGG_AVG) || arg < 0 ||
        c->arg_type[arg].id != CAT_T_DOUBLE || a->result_type.id != CAT_T_DOUBLE ||
        a->dsum.wide)
      return r0;
  }
  enum { FAST_MAX = 32 };
  exec_dsum sum[FAST_MAX];
  int64_t cnt[FAST_MAX];
  if (c->n_aggs > FAST_MAX) return r0;
  for (int i = 0; i < c->n_aggs; i++) { /* into locals first: a bad cell leaves acc as it was */
    const exec_agg *a = &acc[i];
    cnt[i] = 0;
    sum[i] = a->dsum; /* not wide (above): a plain copy */
    if (a->id == EXEC_AGG_COUNT_STAR) {
      cnt[i] = r1 - r0;
      continue;
    }
    const kv_colvals *v = &vals[c->agg_arg[i]];
    bool bad = false;
    for (uint32_t r = r0; r < r1 && !bad; r++) {
      if (!v->p[r]) continue; /* NULL: ignored */
      if (a->id != EXEC_AGG_COUNT) {
        /* not a DOUBLE's cell, or out of memory: the general path says so */
        if (v->len[r] != 8 || exec_dsum_add(&sum[i], cat_vc_get_double(v->p[r]))) bad = true;
      }
      cnt[i]++;
    }
    if (bad) {
      for (int k = 0; k <= i; k++) free(sum[k].wide); /* only what this call made */
      return r0;
    }
  }
  for (int i = 0; i < c->n_aggs; i++) {
    exec_agg *a = &acc[i];
    a->count += cnt[i];
    if (a->id == EXEC_AGG_COUNT_STAR) continue;
    a->dsum = sum[i];
    a->have = a->have || cnt[i] > 0;
  }
  return r1;
}

static int consume(void *vc, uint32_t n, const kv_colvals *vals) {
  cctx *c = vc;
  if (c->intr && atomic_load_explicit(c->intr, memory_order_relaxed)) {
    snprintf(c->msg, sizeof c->msg, "interrupted");
    c->rc = EXEC_INTERRUPT;
    return 1;
  }
  /* with terms monotone in key order (exec_cg_shape.runs) and rows in key order, two rows
     of one group with the same leading columns hold every row between them: the batch is
     split in halves until each part's ends agree, so a group is found a few times, not once
     per row */
  exec_agg **run = NULL;
  if (c->grp && c->grp->sh->runs && n > 2) {
    if (n > c->run_cap) {
      exec_agg **nr = realloc(c->run, n * sizeof *nr);
      if (!nr) {
        snprintf(c->msg, sizeof c->msg, "out of memory");
        c->rc = EXEC_NOMEM;
        return 1;
      }
      c->run = nr;
      c->run_cap = n;
    }
    end_of lo, hi;
    const kv_colvals *k = &vals[c->key_arg];
    int rc = EXEC_OK;
    uint32_t r0 = 0;
    /* groups with a span (a day of TIMESTAMP keys, exec_cg_in_span): each group found once,
       its last row by galloping over key bytes alone */
    while (!rc && r0 < n) {
      rc = find_end(c, k, r0, &lo);
      if (rc || !c->grp->span_w) break;
      uint32_t in = r0, out = n, step = 1;
      while (in + step < n) {
        if (!exec_cg_in_span(c->grp, k->p[in + step], k->len[in + step])) {
          out = in + step;
          break;
        }
        in += step;
        step *= 2;
      }
      if (out == n && in < n - 1) { /* past the batch's end: its last row decides */
        if (exec_cg_in_span(c->grp, k->p[n - 1], k->len[n - 1])) in = n - 1;
        else out = n - 1;
      }
      while (out - in > 1) {
        uint32_t mid = in + (out - in) / 2;
        if (exec_cg_in_span(c->grp, k->p[mid], k->len[mid])) in = mid;
        else out = mid;
      }
      for (uint32_t r = r0; r <= in; r++) c->run[r] = lo.acc;
      r0 = in + 1;
    }
    /* the rest (no span): halves until each part's ends agree */
    if (!rc && r0 < n) rc = find_end(c, k, n - 1, &hi);
    if (!rc && r0 < n) rc = split(c, k, &lo, &hi);
    if (rc) {
      c->rc = rc;
      return 1;
    }
    if (c->grp->set.bytes > c->grp_cap) {
      c->rc = EXEC_DONE;
      return 1;
    }
    run = c->run;
  }
  for (uint32_t r = 0, r_end = 0; r < n; r++) {
    exec_agg *acc = run ? run[r] : c->acc;
    if (r >= r_end && (run || !c->grp)) {
      /* the rows [r, r_end) of one group: the common aggregates in one pass each */
      for (r_end = r + 1; r_end < n && (!run || run[r_end] == acc); r_end++) {}
      uint32_t done = fast_steps(c, acc, vals, r, r_end);
      if (done == r_end) {
        r = r_end - 1;
        continue;
      }
    }
    if (c->grp && !run) {
      int rc = exec_cg_find(c->grp, vals[c->key_arg].p[r], vals[c->key_arg].len[r],
                            c->lower, &acc, c->msg, sizeof c->msg);
      if (rc) {
        c->rc = rc;
        return 1;
      }
      if (c->grp->set.bytes > c->grp_cap) {
        c->rc = EXEC_DONE;
        return 1;
      }
    }
    for (int i = 0; i < c->n_aggs; i++) {
      int a = c->agg_arg[i];
      int rc;
      if (a < 0) {
        rc = exec_agg_step(&acc[i], NULL, c->msg, sizeof c->msg);
      } else {
        const uint8_t *p = vals[a].p[r];
        if (!p) continue; /* NULL: ignored */
        cat_value v;
        cat_error e;
        if (cat_vc_decode(&c->arg_type[a], p, vals[a].len[r], &v, &e) != CAT_OK) {
          snprintf(c->msg, sizeof c->msg, "corrupt cell value: %s", e.msg);
          c->rc = EXEC_CORRUPT;
          return 1;
        }
        rc = exec_agg_step(&acc[i], &v, c->msg, sizeof c->msg);
      }
      if (rc) {
        c->rc = rc;
        return 1;
      }
    }
  }
  return 0;
}

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int fail(exec_error *err, int code, const char *msg) {
  err->code = code;
  err->offset = -1;
  snprintf(err->msg, sizeof err->msg, "%s", msg);
  return code;
}

/* Read the fallback ranges the row way into ctx c: the rows inside sp's key ranges, with
** projection qs and the scan's filter. */
static int read_fallback(exec_query *x, const kv_colagg_spec *sp, const kv_colagg_result *res,
                         const kv_qualifier_set *qs, const uint8_t *const *aq,
                         const uint32_t *aql, uint32_t n_args, cctx *c, uint64_t *rows,
                         kv_scan_metrics *m, exec_error *err) {
  kv_scan_options o;
  memset(&o, 0, sizeof o);
  uint32_t fid = sp->family_id;
  o.family_ids = &fid;
  o.n_families = 1;
  o.qualifiers = qs;
  o.n_qualifier_sets = 1;
  o.ranges = res->fallback;
  o.n_ranges = res->n_fallback;
  o.snapshot = res->snapshot;
  o.interrupt = exec_interrupt_flag();
  o.trace = exec_trace_current();
  if (x->q->scan.filter) {
    o.filter = plan_filter_eval;
    o.filter_ctx = x->q->scan.filter;
  }
  kv_scan *sc = NULL;
  int krc = kv_scan_open(x->db, &o, &sc);
  if (krc) return exec_kv_error(krc, err);
  kv_row row;
  const uint8_t *pa[KV_COLAGG_MAX_ARGS + 1];
  uint32_t la[KV_COLAGG_MAX_ARGS + 1];
  kv_colvals v[KV_COLAGG_MAX_ARGS + 1];
  int rc = EXEC_OK;
  c->lower = true; /* these rows come after the blocks' rows, not in key order */
  while ((krc = kv_scan_next(sc, &row)) == KV_OK) {
    if (!kv_colagg_key_in(sp, row.key, row.key_len)) continue; /* the range's outside part */
    (*rows)++;
    for (uint32_t a = 0; a < n_args; a++) {
      pa[a] = NULL;
      la[a] = 0;
      for (uint32_t i = 0; i < row.n_cells; i++) { /* the newest cell of the column */
        const kv_cell_view *cv = &row.cells[i];
        if (cv->qual_len == aql[a] && memcmp(cv->qual, aq[a], aql[a]) == 0) {
          pa[a] = cv->value ? cv->value : (const uint8_t *)""; /* empty is not NULL */
          la[a] = cv->value_len;
          break;
        }
      }
      v[a].p = &pa[a];
      v[a].len = &la[a];
    }
    pa[n_args] = row.key; /* GROUP BY: the key after the values (spec.keys' place) */
    la[n_args] = row.key_len;
    v[n_args].p = &pa[n_args];
    v[n_args].len = &la[n_args];
    if (consume(c, 1, v)) break;
  }
  c->lower = false;
  kv_scan_get_metrics(sc, m);
  if (krc != KV_OK && krc != KV_ERR_NOTFOUND) rc = exec_kv_error(krc, err);
  kv_scan_close(sc);
  return rc;
}

/* The error a consumer of cx[0..n) stopped the scan with: EXEC_DONE (too many groups: the
** rows path answers, ca->why says so) or the error, into err. */
static int consumer_error(cctx *cx, int n, plan_colagg_actual *ca, exec_error *err) {
  for (int k = 0; k < n; k++) {
    if (cx[k].rc == EXEC_DONE) {
      ca->why = "more groups than the statement's memory limit holds";
      return EXEC_DONE;
    }
    if (cx[k].rc) return fail(err, cx[k].rc, cx[k].msg);
  }
  return EXEC_OK;
}

/* The plan's key ranges as kv/colscan/colscan.h wants them (sp->ranges / sp->skip), into r (room
** for the plan's ranges and outer ranges) and *skip. */
static void key_ranges(const plan_scan *ps, kv_range *r, kv_skip_prefix *skip,
                       kv_colagg_spec *sp) {
  const plan_scan_ranges *in = &ps->ranges, *out = &ps->skip_outer;
  uint32_t n = in->n_ranges, no = ps->ranges.kind == PLAN_SCAN_PREFIX_SKIP ? out->n_ranges : 0;
  for (uint32_t i = 0; i < n + no; i++) {
    const plan_key_range *k = i < n ? &in->ranges[i] : &out->ranges[i - n];
    r[i] = (kv_range){k->start, k->start_len, k->start_incl, k->end, k->end_len, k->end_incl};
  }
  if (ps->ranges.kind == PLAN_SCAN_PREFIX_SKIP) {
    *skip = (kv_skip_prefix){plan_skip_prefix_len, (void *)&ps->skip_key, r, n, 0};
    sp->skip = skip;
    sp->ranges = no ? r + n : NULL;
    sp->n_ranges = no;
  } else if (ps->ranges.kind != PLAN_SCAN_FULL) {
    sp->ranges = r;
    sp->n_ranges = n;
  }
}

/* The GROUP BY terms' shape (exec/colagg_int.h); false with ca->why when a date rounding was
** not prepared at open (its unit is not known or not valid: the row path decides). */
static bool group_shape(exec_query *x, exec_cg_shape *sh) {
  const plan_select *s = x->q->sel;
  memset(sh, 0, sizeof *sh);
  sh->t = x->q->scan.table;
  sh->s = s;
  sh->n_group = s->n_group;
  sh->now_us = x->ev.now_us;
  for (int i = 0, f = 0; i < s->n_group; i++) {
    const plan_expr *e = s->group[i];
    if (e->kind == PX_FUNC) {
      if (f >= x->n_gfast || x->gfast[f].term != i) {
        x->act.colagg.why = "a GROUP BY date rounding whose unit is not known before the run";
        return false;
      }
      sh->round[i] = &x->gfast[f++].r;
      e = e->args[0];
    }
    sh->kpos[i] = sh->t->columns[e->column].pk_pos;
    sh->ktype[i] = sh->t->columns[e->column].type;
    if (sh->kpos[i] + 1 > sh->kcols) sh->kcols = sh->kpos[i] + 1;
  }
  /* runs: every key column before the last one read is a plain term (rows between two of
     one group share those columns), and ROUND/FLOOR/CEIL/TRUNC are monotone */
  sh->runs = true;
  for (int c = 0; c + 1 < sh->kcols; c++) {
    bool plain = false;
    for (int i = 0; i < s->n_group; i++) plain |= sh->kpos[i] == c && !sh->round[i];
    sh->runs &= plain;
  }
  return true;
}

int exec_colagg_run(exec_query *x, exec_mrow **g, exec_mrow ***groups, size_t *n_groups,
                    exec_error *err) {
  const plan_query *q = x->q;
  const plan_select *s = q->sel;
  plan_colagg_actual *ca = &x->act.colagg;
  int threads = 0;
  *g = NULL;
  *groups = NULL;
  *n_groups = 0;
  if (!plan_colagg_check(q, &threads)) return EXEC_DONE;
  ca->tried = true;
  if (!(x->be->caps.extensions & KV_BE_EXT_COLUMNAR) || !x->db) {
    /* (a plan made for another backend: planning refuses the pushdown where the backend
       cannot run it, plan_scan.no_columnar) */
    ca->why = "the storage backend has no columnar read"; /* (docs/BACKEND.md) */
    return EXEC_DONE;
  }
  if (x->overlay && kv_batch_count(x->overlay) > 0) {
    ca->why = "the open transaction has writes";
    return EXEC_DONE;
  }
  const plan_scan *ps = &q->scan;
  bool grouped = s->n_group > 0;
  exec_cg_shape shape;
  if (grouped && !group_shape(x, &shape)) return EXEC_DONE;
  double t0 = x->timing ? now_ms() : 0;
  const cat_table *t = ps->table;
  int fi = plan_colagg_family(ps);
  int fam = ps->families[fi];
  uint32_t fid = ps->family_ids[fi];
  /* the key family, read when rows with no cell of fam make groups (planner/colagg.h) */
  /* the projection Q: the family's columns the rows path reads */
  uint8_t qbytes[KV_COLAGG_MAX_QUALS][4];
  const uint8_t *quals[KV_COLAGG_MAX_QUALS];
  uint32_t qlens[KV_COLAGG_MAX_QUALS];
  int32_t widths[KV_COLAGG_MAX_QUALS];
  int col_q[1024];
  uint32_t nq = 0;
  if (t->n_columns > 1024) return EXEC_DONE;
  /* a scan that leaves the key family out for the family's row cover reads all of its
     columns so that every row shows (planner/select.c); without groups or COUNT(*) a row
     with none of the aggregated or filtered columns adds nothing, so Q keeps only those
     (and a one-column Q can use the column cache) */
  bool narrow = ps->cover_family > 0 && !grouped;
  for (int i = 0; i < s->n_aggs; i++) narrow &= s->aggs[i].func != EXEC_AGG_COUNT_STAR;
  plan_filter_leaf lv[KV_COLAGG_MAX_PREDS];
  int npred = ps->filter ? plan_filter_leaves(ps->filter, lv, (int)KV_COLAGG_MAX_PREDS) : 0;
  for (int c = 0; c < t->n_columns; c++) {
    col_q[c] = -1;
    const cat_column *col = &t->columns[c];
    if (!ps->read[c] || col->pk_pos >= 0 || col->family != fam) continue;
    bool filtered = false;
    for (int i = 0; narrow && !ps->need[c] && i < npred; i++) filtered |= lv[i].col == c;
    if (narrow && !ps->need[c] && !filtered) continue;
    qlens[nq] = (uint32_t)cat_column_qualifier(col->id, qbytes[nq]);
    quals[nq] = qbytes[nq];
    int w = cat_type_fixed_width(col->type.id);
    widths[nq] = w > 0 ? w : -1;
    col_q[c] = (int)nq++;
  }
  kv_colpred preds[KV_COLAGG_MAX_PREDS];
  for (int i = 0; i < npred; i++) {
    preds[i].q = (uint32_t)col_q[lv[i].col];
    preds[i].op = lv[i].op == 0 ? KV_COL_PRESENT : (uint8_t)(KV_COL_EQ + (lv[i].op - SQL_OP_EQ));
    preds[i].k = lv[i].k;
    preds[i].klen = lv[i].klen;
  }
  /* aggregates: per chunk accumulators (or groups) */
  cctx cx[EXEC_COLAGG_THREADS];
  void *ctxs[EXEC_COLAGG_THREADS];
  exec_cg cg[EXEC_COLAGG_THREADS];
  uint32_t args[KV_COLAGG_MAX_ARGS], n_args = 0;
  const uint8_t *aq[KV_COLAGG_MAX_ARGS];
  uint32_t aql[KV_COLAGG_MAX_ARGS];
  memset(cx, 0, sizeof cx);
  memset(cg, 0, sizeof cg);
  int rc = EXEC_OK;
  for (int k = 0; k < EXEC_COLAGG_THREADS; k++) {
    cx[k].n_aggs = s->n_aggs;
    cx[k].intr = exec_interrupt_flag();
    cx[k].acc = calloc((size_t)s->n_aggs, sizeof *cx[k].acc);
    ctxs[k] = &cx[k];
    if (!cx[k].acc) rc = fail(err, EXEC_NOMEM, "out of memory");
    if (grouped) {
      cg[k].sh = &shape;
      cg[k].set.n_key = s->n_group;
      cx[k].grp = &cg[k];
      cx[k].grp_cap = x->mem_limit / (size_t)(threads > 0 ? threads : 1);
    }
  }
  if (s->n_aggs > 64) rc = EXEC_DONE;
  for (int i = 0; i < s->n_aggs && !rc; i++) {
    const plan_agg *a = &s->aggs[i];
    cat_type at = a->arg ? a->arg->type : cat_type_of(0);
    int ai = -1;
    if (a->func != EXEC_AGG_COUNT_STAR) {
      int c = arg_column(a);
      ai = (int)n_args;
      args[n_args] = (uint32_t)col_q[c];
      aq[n_args] = quals[col_q[c]];
      aql[n_args] = qlens[col_q[c]];
      for (int k = 0; k < EXEC_COLAGG_THREADS; k++) cx[k].arg_type[n_args] = t->columns[c].type;
      n_args++;
    }
    for (int k = 0; k < EXEC_COLAGG_THREADS; k++) {
      cx[k].agg_arg[i] = ai;
      exec_agg_init(&cx[k].acc[i], a->func, a->distinct, &at, &a->type);
      cx[k].inited = true;
    }
  }
  for (int k = 0; k < EXEC_COLAGG_THREADS; k++) cx[k].key_arg = n_args;
  kv_colagg_result res;
  memset(&res, 0, sizeof res);
  kv_qualifier_set qs = {fid, quals, qlens, nq};
  kv_scan_metrics fm;
  memset(&fm, 0, sizeof fm);
  uint64_t fb_rows = 0;
  kv_trace *col_trace = NULL;
  uint32_t n_kr = ps->ranges.n_ranges + ps->skip_outer.n_ranges;
  kv_range *kr = n_kr ? malloc(n_kr * sizeof *kr) : NULL;
  kv_skip_prefix skip;
  if (n_kr && !kr && !rc) rc = fail(err, EXEC_NOMEM, "out of memory");
  kv_colagg_spec sp;
  memset(&sp, 0, sizeof sp);
  if (!rc) {
    sp.family_id = fid;
    sp.quals = quals;
    sp.qual_lens = qlens;
    sp.n_quals = nq;
    sp.widths = widths;
    sp.preds = preds;
    sp.n_preds = (uint32_t)npred;
    sp.args = args;
    sp.n_args = n_args;
    sp.consume = consume;
    sp.ctx = ctxs;
    sp.threads = threads;
    sp.keys = grouped;
    key_ranges(ps, kr, &skip, &sp);
    /* the blocks it reads count (in the metrics, and so in the statement's trace) only if
       its answer is taken: kept apart until then (out of memory: not traced) */
    col_trace = exec_trace_current() ? kv_trace_new() : NULL;
    sp.trace = col_trace;
    int krc = kv_colagg_run(x->db, &sp, &res);
    if (krc) {
      rc = exec_kv_error(krc, err);
    } else if (!res.applicable) {
      ca->why = res.why;
      rc = EXEC_DONE;
    } else if (res.consumer_rc) {
      rc = consumer_error(cx, threads, ca, err);
    } else if (plan_colagg_ordered(q) && res.n_fallback) {
      ca->why = "a DECIMAL sum adds in row order and some rows need the row way";
      rc = EXEC_DONE;
    } else if (res.n_fallback) {
      rc = read_fallback(x, &sp, &res, &qs, aq, aql, n_args, &cx[0], &fb_rows, &fm, err);
      if (!rc && cx[0].rc) rc = consumer_error(cx, 1, ca, err);
    }
  }
  /* merge the chunks' accumulators (or groups) into the first */
  for (int k = 1; k < threads && !rc; k++) {
    int mrc; /* EXEC_CONSTRAINT (an overflow) or EXEC_NOMEM (a double sum's wide digits) */
    if (grouped) {
      if ((mrc = exec_cg_merge(&cg[0], &cg[k], cx[0].msg, sizeof cx[0].msg)))
        rc = fail(err, mrc, cx[0].msg);
      continue;
    }
    for (int i = 0; i < s->n_aggs && !rc; i++)
      if ((mrc = exec_agg_merge(&cx[0].acc[i], &cx[k].acc[i], cx[0].msg, sizeof cx[0].msg)))
        rc = fail(err, mrc, cx[0].msg);
  }
  if (!rc && grouped) {
    exec_cg_sort(&cg[0]);
    exec_cg_detach(&cg[0], groups, n_groups);
  } else if (!rc) {
    *g = exec_mrow_make(NULL, 0, s->n_aggs);
    if (!*g) rc = fail(err, EXEC_NOMEM, "out of memory");
  }
  if (!rc) {
    for (int i = 0; *g && i < s->n_aggs; i++) {
      (*g)->aggs[i] = cx[0].acc[i]; /* ownership moves to the group row */
      memset(&cx[0].acc[i], 0, sizeof cx[0].acc[i]);
    }
    /* the figures EXPLAIN ANALYZE and the metrics show */
    uint64_t passed = res.rows + fb_rows;
    kv_scan_metrics *m = &x->act.kv;
    memset(m, 0, sizeof *m);
    m->rows_examined = res.rows_examined + fm.rows_examined;
    m->rows_returned = passed;
    m->rows_filtered = m->rows_examined - passed;
    m->cells_examined = res.cells + fm.cells_examined;
    m->ranges_sought = res.n_fallback ? fm.ranges_sought : 1;
    m->n_families = 1;
    m->families[0].family_id = fid;
    m->families[0].cells_examined = res.cells + fm.cells_examined;
    m->families[0].blocks_read = res.blocks + (fm.n_families ? fm.families[0].blocks_read : 0);
    m->families[0].blocks_cache_hit =
        res.blocks_cache_hit + (fm.n_families ? fm.families[0].blocks_cache_hit : 0);
    m->families[0].bytes_read = res.bytes_read + (fm.n_families ? fm.families[0].bytes_read : 0);
    m->families[0].files_opened = res.files;
    x->act.rows_assembled = passed;
    x->act.analyzed = true;
    x->act.step[PLAN_STEP_SCAN].rows_out = passed;
    x->act.step[PLAN_STEP_AGG].rows_in = passed;
    ca->ran = true;
    kv_trace_merge(exec_trace_current(), col_trace);
    ca->threads = res.threads;
    ca->blocks = res.blocks;
    ca->blocks_fallback = res.blocks_fallback;
    ca->ranges = res.n_fallback;
    ca->rows_fallback = fb_rows;
    if (x->timing) x->act.step[PLAN_STEP_SCAN].ms += now_ms() - t0;
  }
  kv_colagg_result_free(&res);
  kv_trace_free(col_trace);
  free(kr);
  for (int k = 0; k < EXEC_COLAGG_THREADS; k++) {
    for (int i = 0; cx[k].acc && cx[k].inited && i < s->n_aggs; i++) exec_agg_free(&cx[k].acc[i]);
    free(cx[k].acc);
    free(cx[k].run);
    if (grouped) exec_cg_free(&cg[k]);
  }
  if (rc && rc != EXEC_DONE && *g) {
    exec_mrow_free(*g, s->n_aggs);
    *g = NULL;
  }
  return rc ? rc : EXEC_ROW;
}
