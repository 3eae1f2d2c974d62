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
** A bounded template adds the next key column's bounds as expand_box does for a range
** column: on an ASC column a lower bound position before the value (>=) starts the range at
** prefix+value, one after it (>) at cat_key_prefix_end(prefix+value); an upper bound before
** the value (<) ends it at prefix+value, one after it (<=) at cat_key_prefix_end(prefix+
** value); a DESC column's bounds swap sides, before and after, with the value's bytes
** inverted (map_iv); a missing side is the prefix's own start or end. Anything else derivation could make of a value (an
** empty set, a residual term, a bound folded away, a key too long, a prefix with no end, a
** bounded column held to one value, a range of one key) is a refusal here.
**
** Not here: when a template is used (exec/engine_run.c), deriving ranges (planner/keyrange*.c).
*/
#include "planner/point_key.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "catalog/keycodec.h"
#include "catalog/valcodec.h"
#include "planner/filter.h"
#include "planner/time_range.h"
#include "sql/ast.h"

/* The key column index of input slot `column` of table t, or -1. */
static int key_index(const cat_table *t, int column) {
  for (int j = 0; j < t->n_pk; j++)
    if (t->pk[j] == column) return j;
  return -1;
}

/* The codec view of planner/keyrange.c key_ranges() for key column j of t, and cmp_set's
** folding type, into *pc (pc->val is left alone). */
static void col_view(const cat_table *t, int j, plan_point_col *pc) {
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

/* Term e as "column op value" (a term "value op column" turned round: `? < TS` is `TS > ?`,
** as derivation reads it) with the value a parameter or a constant: the column's input slot
** into *column, the value into *v, the operator into *op. False for any other term. */
static bool simple_cmp(const plan_expr *e, int *column, const plan_expr **v, int *op) {
  if (e->kind != PX_BINARY || e->n_args != 2) return false;
  int side = e->args[0]->kind == PX_COLUMN ? 0 : 1;
  const plan_expr *c = e->args[side], *x = e->args[1 - side];
  if (c->kind != PX_COLUMN || (x->kind != PX_PARAM && x->kind != PX_CONST)) return false;
  int o = e->op;
  if (side == 1) {
    switch (o) {
      case SQL_OP_EQ: break;
      case SQL_OP_LT: o = SQL_OP_GT; break;
      case SQL_OP_LE: o = SQL_OP_GE; break;
      case SQL_OP_GT: o = SQL_OP_LT; break;
      case SQL_OP_GE: o = SQL_OP_LE; break;
      default: return false;
    }
  }
  *column = c->column;
  *v = x;
  *op = o;
  return true;
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
  /* a ROW_TIMESTAMP column's bounds also set the scan's time range (planner/time_range.h):
     the rebind computes it again from the same WHERE, which must be the scan's own */
  if (t->row_ts >= 0 && s->table != t) return false;
  if ((s->limit && s->limit->kind == PX_PARAM) || (s->offset && s->offset->kind == PX_PARAM))
    return false; /* the plan's LIMIT / OFFSET would follow the values */
  const plan_key_range *kr = &r->ranges[0];
  int n_eq = r->prefix_cols; /* the key columns the terms pin, leading ones */
  bool point = false, bounded = false;
  if (r->kind == PLAN_SCAN_POINT && n_eq == t->n_pk && (int)r->n_key_terms == n_eq) {
    point = true; /* [key, key] */
    if (!kr->start || !kr->end || !kr->start_incl || !kr->end_incl ||
        kr->start_len != kr->end_len)
      return false;
  } else if (r->kind == PLAN_SCAN_RANGE && n_eq >= 1 && n_eq < t->n_pk &&
             r->bound_cols == n_eq && (int)r->n_key_terms == n_eq) {
    /* [prefix, the key after every key starting with it) */
    if (!kr->start || !kr->end || !kr->start_incl || kr->end_incl || kr->end_len > kr->start_len)
      return false;
  } else if (r->kind == PLAN_SCAN_RANGE && n_eq >= 1 && n_eq < t->n_pk &&
             r->bound_cols == n_eq + 1 && (int)r->n_key_terms > n_eq &&
             (int)r->n_key_terms <= n_eq + 2) {
    bounded = true; /* the prefix narrowed by key column n_eq */
    if (!kr->start || !kr->end || !kr->start_incl || kr->end_incl) return false;
    const cat_key_col *kc = &t->key_cols[n_eq];
    if (kc->nullable || cat_type_is_string(kc->type.id) ||
        kc->type.id == CAT_T_VARBINARY)
      return false;
  } else {
    return false;
  }
  plan_point_col *cols = plan_arena_alloc(A, (size_t)n_eq * sizeof *cols);
  if (!cols) return false;
  memset(cols, 0, (size_t)n_eq * sizeof *cols);
  for (uint32_t k = 0; k < r->n_key_terms; k++) {
    int column, op;
    const plan_expr *v;
    const plan_expr *e = r->key_terms[k];
    if (!simple_cmp(e, &column, &v, &op)) return memset(pk, 0, sizeof *pk), false;
    int j = key_index(t, column);
    if (j >= 0 && j < n_eq && op == SQL_OP_EQ && !cols[j].val) {
      cols[j].val = v; /* the leading columns, once each */
    } else if (bounded && j == n_eq && (op == SQL_OP_GE || op == SQL_OP_GT) && !pk->lo) {
      pk->lo = v;
      pk->lo_op = op;
    } else if (bounded && j == n_eq && (op == SQL_OP_LE || op == SQL_OP_LT) && !pk->hi) {
      pk->hi = v;
      pk->hi_op = op;
    } else {
      return memset(pk, 0, sizeof *pk), false;
    }
  }
  for (int j = 0; j < n_eq; j++) {
    if (!cols[j].val) return memset(pk, 0, sizeof *pk), false;
    col_view(t, j, &cols[j]);
  }
  if (bounded) col_view(t, n_eq, &pk->rcol);
  pk->n = n_eq;
  pk->point = point;
  pk->bounded = bounded;
  pk->cols = cols;
  pk->ts_table = t->row_ts >= 0 ? t : NULL;
  pk->ts_where = t->row_ts >= 0 ? s->where : NULL;
  pk->range = &sc->ranges.ranges[0];
  /* both buffers hold cap bytes */
  size_t cap = kr->start_len > kr->end_len ? kr->start_len : kr->end_len;
  if (!point && kr->end_len < cap) {
    uint8_t *e = realloc(kr->end, cap);
    if (!e) return memset(pk, 0, sizeof *pk), false;
    sc->ranges.ranges[0].end = e;
  }
  if (kr->start_len < cap) {
    uint8_t *b = realloc(kr->start, cap);
    if (!b) return memset(pk, 0, sizeof *pk), false;
    sc->ranges.ranges[0].start = b;
  }
  pk->cap = cap;
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

/* Encode folded value x with codec c at *pos of the range's start (end: false) buffer,
** growing both buffers as needed. False when it cannot be encoded (too long, another
** error: the caller re-plans). */
static bool put_col(plan_point_key *pk, bool at_end, const cat_key_col *c, const cat_value *x,
                    size_t *pos) {
  for (;;) {
    cat_error err;
    size_t p = *pos;
    uint8_t *buf = at_end ? pk->range->end : pk->range->start;
    int rc = cat_key_encode_col(c, x, buf, pk->cap, &p, &err);
    if (rc == CAT_OK) {
      *pos = p;
      return true;
    }
    if (rc != CAT_ERR_TOOBIG || pk->cap >= CAT_KEY_MAX || !grow(pk, pk->cap + 1)) return false;
  }
}

/* The value of template term value ve for these parameters into *v; false when missing. */
static bool term_value(const plan_expr *ve, const cat_value *params, int n_params,
                       cat_value *v) {
  if (ve->kind == PX_CONST) {
    *v = ve->value;
    return true;
  }
  if (!params || ve->param < 1 || ve->param > n_params) return false;
  *v = params[ve->param - 1];
  return true;
}

/* A bound as put_bound folded and encoded it. */
typedef struct plan_point_bound {
  int op;         /* the folded operator */
  size_t len;     /* bytes of its encoded value (inverted on a DESC column) */
  uint8_t b[64];  /* those bytes */
} plan_point_bound;

/* One bound term of a bounded template (keyrange.c cmp_set, keyrange_expand.c map_iv and
** expand_box): the value folded with the term's operator (a lower bound term must stay >=
** or >, an upper one < or <=) and encoded after the prefix (pos bytes, in place in both
** buffers) at the range's start or end: an ASC column's lower bound is the start, its
** upper bound the end; a DESC column's are swapped and their bytes inverted. A position
** after the value (ASC > and <=, DESC >= and <) is the key after every key starting with
** prefix+value. Returns false when derivation would make another plan of it. */
static bool put_bound(plan_point_key *pk, const plan_expr *ve, int op, bool lower,
                      const cat_value *params, int n_params, size_t pos, size_t *spos,
                      size_t *epos, plan_point_bound *out) {
  cat_value v, x;
  int fop;
  uint8_t fbuf[64];
  if (!term_value(ve, params, n_params, &v)) return false;
  if (plan_fold_compare(&pk->rcol.fold, op, &v, &fop, &x, fbuf, sizeof fbuf) != PLAN_FOLD_CMP)
    return false; /* NULL, FALSE (empty), TRUE (no bound: another range) or not foldable */
  if (lower ? fop != SQL_OP_GE && fop != SQL_OP_GT : fop != SQL_OP_LT && fop != SQL_OP_LE)
    return false;
  bool desc = pk->rcol.desc, at_end = desc ? lower : !lower;
  size_t *at = at_end ? epos : spos;
  *at = pos;
  if (!put_col(pk, at_end, &pk->rcol.asc, &x, at)) return false;
  uint8_t *buf = at_end ? pk->range->end : pk->range->start;
  if (desc)
    for (size_t k = pos; k < *at; k++) buf[k] = (uint8_t)~buf[k];
  out->op = fop;
  out->len = *at - pos;
  if (out->len > sizeof out->b) return false;
  memcpy(out->b, buf + pos, out->len);
  bool after = desc ? fop == (lower ? SQL_OP_GE : SQL_OP_LT)
                    : fop == (lower ? SQL_OP_GT : SQL_OP_LE);
  if (after) {
    size_t n = 0;
    if (!cat_key_prefix_end(buf, *at, buf, &n)) return false;
    *at = n;
  }
  return true;
}

int plan_point_key_rebind(plan_point_key *pk, plan_query *q, const cat_value *params,
                          int n_params) {
  if (pk->n == 0) return 1;
  if (q->par)
    return 1; /* cut into chunks (planner/parallel.h): the chunks' key ranges were cut from the
                 first values' range at its split points, and a kept plan keeps them */
  size_t pos = 0;
  for (int j = 0; j < pk->n; j++) {
    const plan_point_col *pc = &pk->cols[j];
    cat_value v;
    if (!term_value(pc->val, params, n_params, &v)) return 1;
    int fop;
    cat_value x;
    uint8_t fbuf[64];
    if (plan_fold_compare(&pc->fold, SQL_OP_EQ, &v, &fop, &x, fbuf, sizeof fbuf) !=
            PLAN_FOLD_CMP ||
        fop != SQL_OP_EQ)
      return 1; /* NULL, FALSE (empty) or not foldable (residual): another plan */
    size_t start = pos;
    if (!put_col(pk, false, &pc->asc, &x, &pos)) return 1;
    if (pc->desc)
      for (size_t k = start; k < pos; k++) pk->range->start[k] = (uint8_t)~pk->range->start[k];
  }
  pk->range->start_len = pos;
  pk->range->start_incl = true;
  if (pk->point) {
    memcpy(pk->range->end, pk->range->start, pos);
    pk->range->end_len = pos;
    pk->range->end_incl = true;
  } else if (pk->bounded) { /* from the prefix's start to its end, narrowed by the bounds */
    size_t spos = pos, epos = SIZE_MAX;
    plan_point_bound lo, hi;
    memcpy(pk->range->end, pk->range->start, pos);
    if (pk->lo &&
        !put_bound(pk, pk->lo, pk->lo_op, true, params, n_params, pos, &spos, &epos, &lo))
      return 1;
    if (pk->hi &&
        !put_bound(pk, pk->hi, pk->hi_op, false, params, n_params, pos, &spos, &epos, &hi))
      return 1;
    if (pk->lo && pk->hi && lo.op == SQL_OP_GE && hi.op == SQL_OP_LE && lo.len == hi.len &&
        memcmp(lo.b, hi.b, lo.len) == 0)
      return 1; /* one value (I > 2 AND I <= 3): derivation pins the column */
    if (epos == SIZE_MAX && !cat_key_prefix_end(pk->range->end, pos, pk->range->end, &epos))
      return 1;
    const uint8_t *a = pk->range->start, *b = pk->range->end;
    if (cat_vc_compare(a, spos, b, epos) >= 0) return 1; /* empty: NOTHING */
    if (epos == spos + 1 && b[spos] == 0 && memcmp(a, b, spos) == 0)
      return 1; /* one key: derivation's finish() makes it a POINT LOOKUP */
    pk->range->start_len = spos;
    pk->range->end_len = epos;
    pk->range->end_incl = false;
  } else { /* keyrange_expand.c after_prefix: the end of every key with this prefix */
    size_t elen = 0;
    if (!cat_key_prefix_end(pk->range->start, pos, pk->range->end, &elen)) return 1;
    pk->range->end_len = elen;
    pk->range->end_incl = false;
  }
  if (pk->ts_table) /* the time range of cell timestamps, from these values */
    plan_time_range(pk->ts_table, pk->ts_where, params, n_params, &q->scan);
  plan_scan_ranges *r = &q->scan.ranges;
  if (r->explain) { /* the first plan's key text: a patched plan is never explained */
    free(r->explain);
    r->explain = NULL;
  }
  return 0;
}
