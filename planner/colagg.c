/*
** planner/colagg.c: whether a plan can run as the columnar aggregate pushdown
** (planner/colagg.h), decided on the plan alone so that EXPLAIN prints what the executor
** (exec/op_colagg.c) will run. Not here: running it, the run-time refusals (exec/colagg.h).
*/
#include "planner/colagg.h"

#include <ctype.h>

#include "catalog/agg_sig.h"
#include "catalog/func_id.h"
#include "kv/colscan/colscan.h"
#include "planner/filter.h"
#include "planner/index_choice.h"

static bool hint_no_pushdown(const char *h) {
  if (!h) return false;
  static const char w[] = "NO_PUSHDOWN";
  for (const char *p = h; *p; p++) {
    size_t i = 0;
    while (w[i] && p[i] && toupper((unsigned char)p[i]) == w[i]) i++;
    if (w[i]) continue;
    bool left = p == h || !(isalnum((unsigned char)p[-1]) || p[-1] == '_');
    bool right = !(isalnum((unsigned char)p[i]) || p[i] == '_');
    if (left && right) return true;
  }
  return false;
}

/* The table column of an aggregate's argument, or -1. */
static int arg_column(const plan_agg *a) {
  if (!a->arg || a->arg->kind != PX_COLUMN) return -1;
  return a->arg->column;
}

/* A sum whose result depends on the order of the additions: a DECIMAL sum (the 38-digit limit
** is checked at every addition, so a running sum can overflow in one order and not in
** another). Integer sums are exact in 128 bits, sums into a DOUBLE exactly rounded
** (exec/dsum.h): neither depends on the order. */
static bool ordered_sum(const plan_agg *a) {
  if (a->func != EXEC_AGG_SUM && a->func != EXEC_AGG_AVG) return false;
  int at = a->arg ? a->arg->type.id : 0;
  if (a->type.id == CAT_T_DOUBLE || a->type.id == 0) return false;
  return !cat_type_is_integer(at);
}

/* Whether GROUP BY term e is one the pushdown computes from the row key alone: a primary
** key column, or ROUND/FLOOR/CEIL/TRUNC of a DATE or TIMESTAMP key column by constants or
** parameters (exec/func.h exec_fn_date_round; the executor refuses a unit it cannot
** prepare). */
static bool key_term(const cat_table *t, const plan_expr *e) {
  if (e->kind == PX_FUNC) {
    if (e->func != EXEC_F_ROUND && e->func != EXEC_F_FLOOR && e->func != EXEC_F_CEIL &&
        e->func != EXEC_F_TRUNC)
      return false;
    if (e->n_args < 2 || e->n_args > 3) return false;
    for (uint32_t k = 1; k < e->n_args; k++)
      if (e->args[k]->kind != PX_CONST && e->args[k]->kind != PX_PARAM) return false;
    int at = e->args[0]->type.id;
    if (at != CAT_T_DATE && at != CAT_T_TIMESTAMP) return false;
    e = e->args[0];
  }
  return e->kind == PX_COLUMN && e->column >= 0 && e->column < t->n_columns &&
         t->columns[e->column].pk_pos >= 0;
}

int plan_colagg_family(const plan_scan *ps) {
  if (ps->n_families == 1) return ps->families[0] != 0 ? 0 : -1;
  if (ps->n_families != 2) return -1;
  if (ps->families[0] == 0 && ps->families[1] != 0) return 1;
  if (ps->families[1] == 0 && ps->families[0] != 0) return 0;
  return -1;
}

bool plan_colagg_ordered(const plan_query *q) {
  for (int i = 0; i < q->sel->n_aggs; i++)
    if (ordered_sum(&q->sel->aggs[i])) return true;
  return false;
}

bool plan_colagg_check(const plan_query *q, int *threads) {
  const plan_select *s = q->sel;
  if (!q->has_scan || !s->aggregate || s->n_aggs < 1 || s->n_group > PLAN_COLAGG_MAX_GROUP)
    return false;
  const plan_scan *ps = &q->scan;
  const cat_table *t = ps->table;
  int kind = ps->ranges.kind;
  if (!t || t->n_columns > 1024 || t->n_dynamic /* their qualifiers are longer */ ||
      t->salt_buckets /* its keys start with the salt byte: the row path merges buckets */ ||
      ps->index || kind == PLAN_SCAN_NOTHING ||
      (kind == PLAN_SCAN_FULL && ps->ranges.n_ranges) ||
      (kind == PLAN_SCAN_PREFIX_SKIP && ps->prefix_first) || ps->kv_limit || ps->residual ||
      ps->reverse /* rows in descending key order: groups and sums in that order */ ||
      !ps->read || ps->no_columnar)
    return false;
  int fi = plan_colagg_family(ps);
  if (fi < 0) return false;
  /* GROUP BY reading the key family too (rows with no cell of the family make groups): its
     rows would need a second pass over the key family's blocks, which at 10x the archive
     cost more than the rows path saves (bench/README.md): the rows path answers */
  if (s->n_group && ps->n_families > 1) return false;
  /* a streaming GROUP BY under LIMIT stops its scan once enough groups have left */
  if (s->n_group && q->stream_agg && !q->sort && q->limit >= 0) return false;
  /* no WHERE at all: only over key ranges or groups (a plain full-table aggregate keeps the
     row path's own fast paths) */
  if (!ps->filter && kind == PLAN_SCAN_FULL && s->n_group == 0) return false;
  if (hint_no_pushdown(s->hint)) return false;
  if (plan_as_of()) return false; /* it reads the present only (planner/index_choice.h) */
  plan_filter_leaf lv[KV_COLAGG_MAX_PREDS];
  int n = ps->filter ? plan_filter_leaves(ps->filter, lv, (int)KV_COLAGG_MAX_PREDS) : 0;
  if (ps->filter && n < 1) return false;
  int fam = ps->families[fi];
  for (int i = 0; i < n; i++) {
    if (lv[i].col < 0 || lv[i].col >= t->n_columns) return false;
    const cat_column *c = &t->columns[lv[i].col];
    if (c->pk_pos >= 0 || c->family != fam || !ps->read[lv[i].col]) return false;
  }
  for (int i = 0; i < s->n_group; i++)
    if (!key_term(t, s->group[i])) return false;
  int nq = 0, n_args = 0;
  for (int c = 0; c < t->n_columns; c++)
    if (ps->read[c] && t->columns[c].pk_pos < 0 && t->columns[c].family == fam) nq++;
  if (nq < 1 || nq > (int)KV_COLAGG_MAX_QUALS) return false;
  bool ordered = false;
  for (int i = 0; i < s->n_aggs; i++) {
    const plan_agg *a = &s->aggs[i];
    if (a->distinct) return false;
    if (a->func == EXEC_AGG_COUNT_STAR) {
      /* the key family is read when rows with no cell of the family count: those rows
         exist for COUNT(*), which the family's blocks alone cannot see */
      if (ps->n_families > 1) return false;
      continue;
    }
    if (a->func < EXEC_AGG_COUNT || a->func > EXEC_AGG_MAX) return false;
    int c = arg_column(a);
    if (c < 0 || c >= t->n_columns || t->columns[c].pk_pos >= 0 ||
        t->columns[c].family != fam || !ps->read[c])
      return false;
    if (++n_args > (int)KV_COLAGG_MAX_ARGS) return false;
    if (ordered_sum(a)) ordered = true;
  }
  if (threads)
    *threads = ordered ? 1 : q->colagg_threads > 0 ? q->colagg_threads : PLAN_COLAGG_THREADS;
  return true;
}
