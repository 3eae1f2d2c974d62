/*
** planner/colagg.c: whether a plan can run as the columnar aggregate pushdown
** (planner/colagg.h), decided on the plan alone so that EXPLAIN prints what the executor
** (exec/op_colagg.c) will run. Not here: running it, the run-time refusals (exec/colagg.h).
*/
#include "planner/colagg.h"

#include <ctype.h>

#include "catalog/agg_sig.h"
#include "kv/colscan.h"
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

/* A sum whose result depends on the order of the additions: FLOAT/DOUBLE (rounding) and
** DECIMAL (the 38-digit limit is checked at every addition, so a running sum can overflow
** in one order and not in another). Integer sums are exact in 128 bits. */
static bool ordered_sum(const plan_agg *a) {
  if (a->func != EXEC_AGG_SUM && a->func != EXEC_AGG_AVG) return false;
  int at = a->arg ? a->arg->type.id : 0;
  return a->type.id == CAT_T_DOUBLE || a->type.id == 0 || at == CAT_T_DECIMAL ||
         cat_type_is_float(at);
}

bool plan_colagg_check(const plan_query *q, int *threads) {
  const plan_select *s = q->sel;
  if (!q->has_scan || !s->aggregate || s->n_group != 0 || s->n_aggs < 1) return false;
  const plan_scan *ps = &q->scan;
  const cat_table *t = ps->table;
  if (!t || t->n_columns > 1024 || t->n_dynamic /* their qualifiers are longer */ ||
      ps->index || ps->ranges.kind != PLAN_SCAN_FULL ||
      ps->ranges.n_ranges ||
      ps->kv_limit || ps->residual || !ps->filter || ps->n_families != 1 ||
      ps->families[0] == 0 || !ps->read)
    return false;
  if (hint_no_pushdown(s->hint)) return false;
  if (plan_as_of()) return false; /* it reads the present only (planner/index_choice.h) */
  plan_filter_leaf lv[KV_COLAGG_MAX_PREDS];
  int n = plan_filter_leaves(ps->filter, lv, (int)KV_COLAGG_MAX_PREDS);
  if (n < 1) return false;
  int fam = ps->families[0];
  for (int i = 0; i < n; i++) {
    if (lv[i].col < 0 || lv[i].col >= t->n_columns) return false;
    const cat_column *c = &t->columns[lv[i].col];
    if (c->pk_pos >= 0 || c->family != fam || !ps->read[lv[i].col]) return false;
  }
  int nq = 0, n_args = 0;
  for (int c = 0; c < t->n_columns; c++)
    if (ps->read[c] && t->columns[c].pk_pos < 0 && t->columns[c].family == fam) nq++;
  if (nq < 1 || nq > (int)KV_COLAGG_MAX_QUALS) return false;
  bool ordered = false;
  for (int i = 0; i < s->n_aggs; i++) {
    const plan_agg *a = &s->aggs[i];
    if (a->distinct) return false;
    if (a->func == EXEC_AGG_COUNT_STAR) continue;
    if (a->func < EXEC_AGG_COUNT || a->func > EXEC_AGG_MAX) return false;
    int c = arg_column(a);
    if (c < 0 || c >= t->n_columns || t->columns[c].pk_pos >= 0 ||
        t->columns[c].family != fam || !ps->read[c])
      return false;
    if (++n_args > (int)KV_COLAGG_MAX_ARGS) return false;
    if (ordered_sum(a)) ordered = true;
  }
  if (threads) *threads = ordered ? 1 : PLAN_COLAGG_THREADS;
  return true;
}
