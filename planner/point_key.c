/*
** planner/point_key.c: the point key template of a prepared point lookup (contract and the
** rule that keeps answers equal in planner/point_key.h).
**
** A rebind does, per key column, what key-range derivation does for the term "column =
** value": fold the value against the column's type (plan_fold_compare, keyrange.c's
** cmp_set), encode the folded value with the column's ASC codec view (value_pos), and for a
** DESC column invert the encoded bytes (keyrange_expand.c's expand_box); the key is the
** concatenation, and the plan's one range is [key, key] inclusive at both ends, as
** derivation's finish() writes a point; for a key prefix, [prefix, cat_key_prefix_end
** (prefix)) with the end exclusive, as expand_box's after_prefix and finish() write it.
** Anything else derivation could make of a value (an empty set, a residual term, a key too
** long, a prefix with no end) is a refusal here.
**
** Not here: when a template is used (exec/engine_run.c), deriving ranges (planner/keyrange*.c).
*/
#include "planner/point_key.h"

#include <stdlib.h>
#include <string.h>

#include "catalog/keycodec.h"
#include "planner/filter.h"
#include "sql/ast.h"

/* The key column index of input slot `column` of table t, or -1. */
static int key_index(const cat_table *t, int column) {
  for (int j = 0; j < t->n_pk; j++)
    if (t->pk[j] == column) return j;
  return -1;
}

bool plan_point_key_init(plan_point_key *pk, plan_query *q, plan_arena *A) {
  memset(pk, 0, sizeof *pk);
  if (!q->has_scan) return false;
  plan_scan *sc = &q->scan;
  const plan_scan_ranges *r = &sc->ranges;
  const cat_table *t = sc->table;
  const plan_select *s = q->sel;
  if (!t || sc->index || sc->filter || sc->residual || r->n_ranges != 1 ||
      r->n_residual != 0 || t->n_pk < 1 || t->n_pk > 64 || r->n_key_terms < 1)
    return false;
  if (sc->ts_min || sc->ts_max) return false; /* a ROW_TIMESTAMP time range would follow the
                                                 values too (planner/time_range.h) */
  if ((s->limit && s->limit->kind == PX_PARAM) || (s->offset && s->offset->kind == PX_PARAM))
    return false; /* the plan's LIMIT / OFFSET would follow the values */
  const plan_key_range *kr = &r->ranges[0];
  int n_eq = (int)r->n_key_terms; /* the key columns the terms pin, leading ones */
  bool point;
  if (r->kind == PLAN_SCAN_POINT && n_eq == t->n_pk) {
    point = true; /* [key, key] */
    if (!kr->start || !kr->end || !kr->start_incl || !kr->end_incl ||
        kr->start_len != kr->end_len)
      return false;
  } else if (r->kind == PLAN_SCAN_RANGE && n_eq < t->n_pk && r->prefix_cols == n_eq &&
             r->bound_cols == n_eq) {
    point = false; /* [prefix, the key after every key starting with it) */
    if (!kr->start || !kr->end || !kr->start_incl || kr->end_incl || kr->end_len > kr->start_len)
      return false;
  } else {
    return false;
  }
  plan_point_col *cols = plan_arena_alloc(A, (size_t)n_eq * sizeof *cols);
  if (!cols) return false;
  for (uint32_t k = 0; k < r->n_key_terms; k++) {
    const plan_expr *e = r->key_terms[k];
    if (e->kind != PX_BINARY || e->op != SQL_OP_EQ || e->n_args != 2) return false;
    int side = e->args[0]->kind == PX_COLUMN ? 0 : 1;
    const plan_expr *c = e->args[side], *v = e->args[1 - side];
    if (c->kind != PX_COLUMN || (v->kind != PX_PARAM && v->kind != PX_CONST)) return false;
    int j = key_index(t, c->column);
    if (j < 0 || j >= n_eq || cols[j].val) return false; /* the leading columns, once each */
    cols[j].val = v;
  }
  for (int j = 0; j < n_eq; j++) {
    plan_point_col *pc = &cols[j];
    if (!pc->val) return false;
    /* the codec view of planner/keyrange.c key_ranges(), and cmp_set's folding type */
    pc->asc = t->key_cols[j];
    pc->desc = pc->asc.desc;
    pc->asc.desc = false;
    if (cat_type_is_string(pc->asc.type.id) || pc->asc.type.id == CAT_T_VARBINARY)
      pc->asc.type.length = 0;
    if (pc->asc.type.id == CAT_T_CHAR) pc->asc.type.id = CAT_T_VARCHAR;
    pc->fold = pc->asc.type;
    if (t->key_cols[j].type.id == CAT_T_CHAR) pc->fold.id = CAT_T_CHAR;
    pc->fold.length = t->key_cols[j].type.length; /* as keyrange.c's cmp_set folds: a value
                                                     longer than VARCHAR(n) re-plans */
  }
  pk->n = n_eq;
  pk->point = point;
  pk->cols = cols;
  pk->range = &sc->ranges.ranges[0];
  pk->cap = kr->start_len; /* end holds end_len <= start_len bytes of its own allocation */
  if (!point && kr->end_len < kr->start_len) {
    uint8_t *e = realloc(kr->end, kr->start_len); /* both buffers hold cap bytes */
    if (!e) return memset(pk, 0, sizeof *pk), false;
    sc->ranges.ranges[0].end = e;
  }
  return true;
}

/* Make room for `need` bytes at the range's start and end (amortized doubling, capped at
** CAT_KEY_MAX). False when that cannot be had. */
static bool grow(plan_point_key *pk, size_t need) {
  if (need <= pk->cap) return true;
  if (need > CAT_KEY_MAX) return false;
  size_t cap = pk->cap * 2 > need ? pk->cap * 2 : need;
  if (cap < 64) cap = 64;
  if (cap > CAT_KEY_MAX) cap = CAT_KEY_MAX;
  uint8_t *s = realloc(pk->range->start, cap);
  if (!s) return false;
  pk->range->start = s;
  uint8_t *e = realloc(pk->range->end, cap);
  if (!e) return false;
  pk->range->end = e;
  pk->cap = cap;
  return true;
}

int plan_point_key_rebind(plan_point_key *pk, plan_query *q, const cat_value *params,
                          int n_params) {
  if (pk->n == 0) return 1;
  size_t pos = 0;
  for (int j = 0; j < pk->n; j++) {
    const plan_point_col *pc = &pk->cols[j];
    const plan_expr *ve = pc->val;
    cat_value v;
    if (ve->kind == PX_CONST) {
      v = ve->value;
    } else {
      if (!params || ve->param < 1 || ve->param > n_params) return 1;
      v = params[ve->param - 1];
    }
    int fop;
    cat_value x;
    uint8_t fbuf[64];
    if (plan_fold_compare(&pc->fold, SQL_OP_EQ, &v, &fop, &x, fbuf, sizeof fbuf) !=
            PLAN_FOLD_CMP ||
        fop != SQL_OP_EQ)
      return 1; /* NULL, FALSE (empty) or not foldable (residual): another plan */
    size_t start = pos;
    for (;;) {
      cat_error err;
      size_t p = pos;
      int rc = cat_key_encode_col(&pc->asc, &x, pk->range->start, pk->cap, &p, &err);
      if (rc == CAT_OK) {
        pos = p;
        break;
      }
      if (rc != CAT_ERR_TOOBIG || pk->cap >= CAT_KEY_MAX || !grow(pk, pk->cap + 1)) return 1;
    }
    if (pc->desc)
      for (size_t k = start; k < pos; k++) pk->range->start[k] = (uint8_t)~pk->range->start[k];
  }
  pk->range->start_len = pos;
  pk->range->start_incl = true;
  if (pk->point) {
    memcpy(pk->range->end, pk->range->start, pos);
    pk->range->end_len = pos;
    pk->range->end_incl = true;
  } else { /* keyrange_expand.c after_prefix: the end of every key with this prefix */
    size_t elen = 0;
    if (!cat_key_prefix_end(pk->range->start, pos, pk->range->end, &elen)) return 1;
    pk->range->end_len = elen;
    pk->range->end_incl = false;
  }
  plan_scan_ranges *r = &q->scan.ranges;
  if (r->explain) { /* the first plan's key text: a patched plan is never explained */
    free(r->explain);
    r->explain = NULL;
  }
  return 0;
}
