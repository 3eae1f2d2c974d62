/*
** planner/keyrange.c: key-range derivation (planner/keyrange.h), Rowan's WhereOptimizer.
**
** Model. Each key column's values are seen through its ASC encoding (catalog/keycodec.h
** with desc off): byte order there is SQL order with NULL first. A constraint on one column
** is a sorted list of disjoint half-open intervals [lo, hi) over "positions" in that byte
** space: (B, before) is the point just before the bytes B, (B, after) the point after every
** byte string starting with B. For a value x with encoding E: x = [(E,before), (E,after));
** x < y ends at (E_y, before); x <= y ends at (E_y, after); LIKE 'abc%' is the interval of
** strings starting with the escaped prefix S, [(S,before), (S,after)). A WHERE term becomes
** a union of boxes (one interval list per key column, ALL where unconstrained): a single-
** column term one box, a row value constructor or an OR over several columns several. AND
** intersects box unions (cross product), OR concatenates them.
**
** Ranges (planner/keyrange_expand.c, split off to keep files small). A box is expanded left to right: point lists multiply the key prefix, the first
** column with a non-point interval (or an unconstrained column) ends it. DESC columns invert
** the bytes and swap the bounds at this step. The expanded ranges are sorted and merged in
** key space. Past PLAN_MAX_SKIP_RANGES the expansion uses fewer key columns, and at last one
** range over the hull of the leading column.
**
** Exactness. A top-level AND term is answered (key_terms) only if it is exact (no LIKE with
** other wildcards, no row value constructor cut short) and every key column it constrains
** is captured by the expansion of every box it contributed to; else it stays residual.
** Bound folding (INTEGER k > 5.5 is k >= 6) is planner/filter_fold.c's plan_fold_compare.
** Functions of key columns: CAST(k AS t) when t holds every value of k exactly and in order
** compares as k (key_of, planner/keyrange_func.c); ROUND/FLOOR/CEIL/TRUNC of a DATE/TIMESTAMP key column is the
** interval planner/keyrange_func.c computes (round_set; the constant may be CAST(? AS DATE)
** or CAST(? AS TIMESTAMP): date_const_of); SUBSTR(k, 1, n) = 'x' is LIKE 'x%'
** when 'x' has n characters, SUBSTR(k, 1) = 'x' is k = 'x' (substr_term).
** Not here: choosing an index, families, the filter (planner/filter.c).
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalog/func_id.h"
#include "catalog/valcodec.h"
#include "catalog/value.h"
#include "catalog/status.h"
#include "planner/filter.h"
#define PLAN_KEYRANGE_INTERNAL
#include "planner/keyrange.h"
#include "planner/keyrange_func.h"
#include "sql/ast.h"

#define MAX_BOXES PLAN_MAX_SKIP_RANGES

void *plan_kr_alloc(plan_kr_arena *a, size_t n) {
  n = (n + sizeof(max_align_t) - 1) / sizeof(max_align_t) * sizeof(max_align_t);
  if (!a->head || a->head->cap - a->head->used < n) {
    size_t cap = n > 65536 ? n : 65536;
    plan_kr_chunk *c = malloc(sizeof(plan_kr_chunk) + cap);
    if (!c) return NULL;
    c->next = a->head;
    c->used = 0;
    c->cap = cap;
    a->head = c;
  }
  void *p = (char *)a->head->data + a->head->used;
  a->head->used += n;
  return p;
}

void plan_kr_arena_free(plan_kr_arena *a) {
  while (a->head) {
    plan_kr_chunk *n = a->head->next;
    free(a->head);
    a->head = n;
  }
}

int plan_kr_fail(plan_kr_ctx *c, int rc, const char *m) {
  if (!c->rc) {
    c->rc = rc;
    if (c->cap) snprintf(c->msg, c->cap, "%s", m);
  }
  return -1;
}

int plan_kr_pos_cmp(const plan_kr_pos *a, const plan_kr_pos *b) {
  if (a->kind == PLAN_KR_NEG_INF || b->kind == PLAN_KR_NEG_INF)
    return (a->kind != PLAN_KR_NEG_INF) - (b->kind != PLAN_KR_NEG_INF);
  if (a->kind == PLAN_KR_POS_INF || b->kind == PLAN_KR_POS_INF)
    return (a->kind == PLAN_KR_POS_INF) - (b->kind == PLAN_KR_POS_INF);
  uint32_t m = a->len < b->len ? a->len : b->len;
  int c = m ? memcmp(a->b, b->b, m) : 0;
  if (c) return c < 0 ? -1 : 1;
  if (a->len == b->len) return (a->kind == PLAN_KR_AFTER) - (b->kind == PLAN_KR_AFTER);
  if (a->len < b->len) return a->kind == PLAN_KR_AFTER ? 1 : -1;
  return b->kind == PLAN_KR_AFTER ? -1 : 1;
}

bool plan_kr_iv_is_point(const plan_kr_iv *v) {
  return v->lo.kind == PLAN_KR_BEFORE && v->hi.kind == PLAN_KR_AFTER && v->lo.full && v->lo.len == v->hi.len &&
         memcmp(v->lo.b, v->hi.b, v->lo.len) == 0;
}

bool plan_kr_set_all_points(const plan_kr_set *s) {
  for (uint32_t i = 0; i < s->n; i++)
    if (!plan_kr_iv_is_point(&s->v[i])) return false;
  return true;
}

plan_kr_set *plan_kr_set_new(plan_kr_ctx *c, uint32_t n) {
  plan_kr_set *s = plan_kr_alloc(&c->ar, sizeof *s);
  if (!s) return plan_kr_fail(c, EXEC_NOMEM, "out of memory deriving key ranges"), NULL;
  s->all = false;
  s->n = 0;
  s->v = n ? plan_kr_alloc(&c->ar, n * sizeof(plan_kr_iv)) : NULL;
  if (n && !s->v) return plan_kr_fail(c, EXEC_NOMEM, "out of memory deriving key ranges"), NULL;
  return s;
}

static plan_kr_set ALL_SET = {true, NULL, 0};

static plan_kr_set *set_intersect(plan_kr_ctx *c, const plan_kr_set *a, const plan_kr_set *b) {
  if (a->all) return (plan_kr_set *)b;
  if (b->all) return (plan_kr_set *)a;
  plan_kr_set *r = plan_kr_set_new(c, a->n + b->n);
  if (!r) return NULL;
  uint32_t i = 0, j = 0;
  while (i < a->n && j < b->n) {
    const plan_kr_iv *x = &a->v[i], *y = &b->v[j];
    const plan_kr_pos *lo = plan_kr_pos_cmp(&x->lo, &y->lo) >= 0 ? &x->lo : &y->lo;
    const plan_kr_pos *hi = plan_kr_pos_cmp(&x->hi, &y->hi) <= 0 ? &x->hi : &y->hi;
    if (plan_kr_pos_cmp(lo, hi) < 0) {
      r->v[r->n].lo = *lo;
      r->v[r->n].hi = *hi;
      r->n++;
    }
    if (plan_kr_pos_cmp(&x->hi, &y->hi) <= 0) i++;
    else j++;
  }
  return r;
}

static int iv_lo_cmp(const void *a, const void *b) {
  return plan_kr_pos_cmp(&((const plan_kr_iv *)a)->lo, &((const plan_kr_iv *)b)->lo);
}

/* Sort and merge intervals in place (union). */
static void set_normalize(plan_kr_set *s) {
  if (s->n < 2) return;
  qsort(s->v, s->n, sizeof(plan_kr_iv), iv_lo_cmp);
  uint32_t o = 0;
  for (uint32_t i = 1; i < s->n; i++) {
    if (plan_kr_pos_cmp(&s->v[i].lo, &s->v[o].hi) <= 0) {
      if (plan_kr_pos_cmp(&s->v[i].hi, &s->v[o].hi) > 0) s->v[o].hi = s->v[i].hi;
    } else {
      s->v[++o] = s->v[i];
    }
  }
  s->n = o + 1;
}

static plan_kr_set *set_union(plan_kr_ctx *c, const plan_kr_set *a, const plan_kr_set *b) {
  if (a->all || b->all) return &ALL_SET;
  plan_kr_set *r = plan_kr_set_new(c, a->n + b->n);
  if (!r) return NULL;
  if (a->n) memcpy(r->v, a->v, a->n * sizeof(plan_kr_iv));
  if (b->n) memcpy(r->v + a->n, b->v, b->n * sizeof(plan_kr_iv));
  r->n = a->n + b->n;
  set_normalize(r);
  return r;
}

static bool box_empty(const plan_kr_box *b, int n) {
  for (int i = 0; i < n; i++)
    if (!b->cols[i].all && b->cols[i].n == 0) return true;
  return false;
}

/* A box with every column unconstrained. */
int plan_kr_box_init(plan_kr_ctx *c, plan_kr_box *b) {
  b->cols = plan_kr_alloc(&c->ar, (size_t)c->s->n * sizeof(plan_kr_set));
  b->ct = plan_kr_alloc(&c->ar, (size_t)c->s->n * sizeof(uint64_t));
  if (!b->cols || !b->ct) return plan_kr_fail(c, EXEC_NOMEM, "out of memory deriving key ranges");
  for (int i = 0; i < c->s->n; i++) {
    b->cols[i] = ALL_SET;
    b->ct[i] = 0;
  }
  return 0;
}

int plan_kr_boxes_alloc(plan_kr_ctx *c, plan_kr_boxes *r, uint32_t n) {
  r->n = 0;
  r->v = n ? plan_kr_alloc(&c->ar, n * sizeof(plan_kr_box)) : NULL;
  if (n && !r->v) return plan_kr_fail(c, EXEC_NOMEM, "out of memory deriving key ranges");
  return 0;
}

/* One box constraining column i to s. */
static int boxes_single(plan_kr_ctx *c, plan_kr_boxes *r, int i, const plan_kr_set *s) {
  if (plan_kr_boxes_alloc(c, r, 1)) return -1;
  if (plan_kr_box_init(c, &r->v[0])) return -1;
  r->v[0].cols[i] = *s;
  r->v[0].ct[i] = s->all ? 0 : 1;
  r->n = box_empty(&r->v[0], c->s->n) ? 0 : 1;
  return 0;
}

/* Cross-product intersection. Returns 1 when it would exceed MAX_BOXES (r untouched). */
int plan_kr_boxes_and(plan_kr_ctx *c, const plan_kr_boxes *a, const plan_kr_boxes *b, plan_kr_boxes *r) {
  if ((uint64_t)a->n * b->n > MAX_BOXES) return 1;
  if (plan_kr_boxes_alloc(c, r, a->n * b->n)) return -1;
  int n = c->s->n;
  for (uint32_t i = 0; i < a->n; i++) {
    for (uint32_t j = 0; j < b->n; j++) {
      plan_kr_box *o = &r->v[r->n];
      o->cols = plan_kr_alloc(&c->ar, (size_t)n * sizeof(plan_kr_set));
      o->ct = plan_kr_alloc(&c->ar, (size_t)n * sizeof(uint64_t));
      if (!o->cols || !o->ct) return plan_kr_fail(c, EXEC_NOMEM, "out of memory deriving key ranges");
      bool empty = false;
      for (int k = 0; k < n && !empty; k++) {
        plan_kr_set *s = set_intersect(c, &a->v[i].cols[k], &b->v[j].cols[k]);
        if (!s) return -1;
        o->cols[k] = *s;
        o->ct[k] = a->v[i].ct[k] | b->v[j].ct[k];
        empty = !s->all && s->n == 0;
      }
      if (empty) continue;
      r->n++;
    }
  }
  return 0;
}

/* The only constrained column of b, -1 if none, -2 if several. */
static int box_single_col(const plan_kr_box *b, int n) {
  int col = -1;
  for (int i = 0; i < n; i++) {
    if (b->cols[i].all) continue;
    if (col >= 0) return -2;
    col = i;
  }
  return col;
}

/* Union; boxes constraining one same column collapse into one box. */
static int boxes_or(plan_kr_ctx *c, const plan_kr_boxes *a, const plan_kr_boxes *b, plan_kr_boxes *r) {
  int n = c->s->n;
  if ((uint64_t)a->n + b->n > MAX_BOXES) return 1;
  int col = -3;
  bool same = true;
  for (uint32_t i = 0; i < a->n + b->n && same; i++) {
    const plan_kr_box *x = i < a->n ? &a->v[i] : &b->v[i - a->n];
    int k = box_single_col(x, n);
    if (k < 0 || (col != -3 && col != k)) same = false;
    col = k;
  }
  if (same && col >= 0) {
    plan_kr_set *acc = plan_kr_set_new(c, 0);
    if (!acc) return -1;
    for (uint32_t i = 0; i < a->n + b->n; i++) {
      const plan_kr_box *x = i < a->n ? &a->v[i] : &b->v[i - a->n];
      acc = set_union(c, acc, &x->cols[col]);
      if (!acc) return -1;
    }
    return boxes_single(c, r, col, acc) ? -1 : 0;
  }
  if (plan_kr_boxes_alloc(c, r, a->n + b->n)) return -1;
  if (a->n) memcpy(r->v, a->v, a->n * sizeof(plan_kr_box));
  if (b->n) memcpy(r->v + a->n, b->v, b->n * sizeof(plan_kr_box));
  r->n = a->n + b->n;
  return 0;
}

/* ---- Values to positions ------------------------------------------------------------- */
static const char *literal_text(plan_kr_ctx *c, const cat_value *v, bool prefix) {
  if (c->no_explain) return ""; /* only EXPLAIN reads the texts: none is made */
  char tmp[160];
  size_t n = plan_value_literal(v, tmp, sizeof tmp);
  if (n >= sizeof tmp) n = sizeof tmp - 1;
  char *t = plan_kr_alloc(&c->ar, n + 3);
  if (!t) return plan_kr_fail(c, EXEC_NOMEM, "out of memory deriving key ranges"), NULL;
  memcpy(t, tmp, n);
  if (prefix) t[n++] = '*';
  t[n] = 0;
  return t;
}

const uint8_t *plan_kr_copy_bytes(plan_kr_ctx *c, const uint8_t *p, size_t n) {
  uint8_t *r = plan_kr_alloc(&c->ar, n ? n : 1);
  if (!r) return plan_kr_fail(c, EXEC_NOMEM, "out of memory deriving key ranges"), NULL;
  memcpy(r, p, n);
  return r;
}

/* Encode x for column i (ASC view) into a full-value position of kind `kind`. 0 ok, 1 not
** encodable (leave the term residual), -1 error. */
static int value_pos(plan_kr_ctx *c, int i, const cat_value *x, int kind, plan_kr_pos *out) {
  size_t pos = 0;
  cat_error err;
  int rc = cat_key_encode_col(&c->asc[i], x, c->buf, CAT_KEY_MAX, &pos, &err);
  if (rc == CAT_ERR_TOOBIG) return plan_kr_fail(c, EXEC_TOOBIG, "key bound longer than the largest key");
  if (rc) return 1;
  out->kind = (uint8_t)kind;
  out->full = true;
  out->len = (uint32_t)pos;
  out->b = plan_kr_copy_bytes(c, c->buf, pos);
  out->text = x->is_null ? "NULL" : literal_text(c, x, false);
  return out->b && out->text ? 0 : -1;
}

/* The lowest position of a non-NULL value of column i. */
static void nonnull_lo(plan_kr_ctx *c, int i, plan_kr_pos *out) {
  static const uint8_t null_ind = 0x00;
  memset(out, 0, sizeof *out);
  if (c->asc[i].nullable) {
    out->kind = PLAN_KR_AFTER;
    out->full = true;
    out->b = &null_ind;
    out->len = 1;
    out->text = "NULL";
  } else {
    out->kind = PLAN_KR_NEG_INF;
  }
}

/* Set for "column i op x" (x already folded, op EQ/LT/LE/GT/GE). 0 ok (*out), 1 not
** extractable, -1 error. */
static int cmp_set(plan_kr_ctx *c, int i, int op, const cat_value *k, plan_kr_set **out) {
  int fop;
  cat_value x;
  uint8_t buf[64];
  /* Fold against the declared type: a CHAR key (encoded as VARCHAR in asc) trims the
     constant's trailing spaces, as its stored values are trimmed. */
  cat_type ft = c->asc[i].type;
  if (c->s->cols[i].type.id == CAT_T_CHAR) ft.id = CAT_T_CHAR;
  ft.length = c->s->cols[i].type.length; /* a longer constant equals no key (EMPTY) */
  int f = plan_fold_compare(&ft, op, k, &fop, &x, buf, sizeof buf);
  if (f == PLAN_FOLD_NONE) return 1;
  if (f == PLAN_FOLD_NULL || f == PLAN_FOLD_FALSE) {
    *out = plan_kr_set_new(c, 0);
    return *out ? 0 : -1;
  }
  plan_kr_set *s = plan_kr_set_new(c, 1);
  if (!s) return -1;
  plan_kr_iv *v = &s->v[0];
  memset(v, 0, sizeof *v);
  nonnull_lo(c, i, &v->lo);
  v->hi.kind = PLAN_KR_POS_INF;
  s->n = 1;
  if (f == PLAN_FOLD_TRUE) {
    if (!c->asc[i].nullable) *s = ALL_SET;
    *out = s;
    return 0;
  }
  plan_kr_pos p;
  int rc;
  switch (fop) {
    case SQL_OP_EQ:
      if ((rc = value_pos(c, i, &x, PLAN_KR_BEFORE, &v->lo))) return rc;
      v->hi = v->lo;
      v->hi.kind = PLAN_KR_AFTER;
      break;
    case SQL_OP_LT: case SQL_OP_LE:
      if ((rc = value_pos(c, i, &x, fop == SQL_OP_LT ? PLAN_KR_BEFORE : PLAN_KR_AFTER, &p))) return rc;
      v->hi = p;
      break;
    case SQL_OP_GT: case SQL_OP_GE:
      if ((rc = value_pos(c, i, &x, fop == SQL_OP_GT ? PLAN_KR_AFTER : PLAN_KR_BEFORE, &p))) return rc;
      v->lo = p;
      break;
    default: return 1;
  }
  if (plan_kr_pos_cmp(&v->lo, &v->hi) >= 0) s->n = 0;
  *out = s;
  return 0;
}

/* ---- Terms to boxes ------------------------------------------------------------------ */
static int key_col_of(const plan_kr_ctx *c, const plan_expr *e) {
  if (!e || e->kind != PX_COLUMN) return -1;
  for (int i = 0; i < c->s->n; i++)
    if (c->s->slots[i] == e->column) return i;
  return -1;
}

static bool const_of(const plan_kr_ctx *c, const plan_expr *e, cat_value *out) {
  if (!e) return false;
  if (e->kind == PX_CONST) { *out = e->value; return true; }
  if (e->kind == PX_PARAM && c->params && e->param >= 1 && e->param <= c->n_params) {
    *out = c->params[e->param - 1];
    return true;
  }
  return false;
}

/* const_of, and also CAST(x AS DATE) or CAST(x AS TIMESTAMP) of such an x, cast here as exec
** casts it (cat_value_cast): the constant a date rounding of a key column is compared with
** (round_set). False when the cast fails: the term stays a filter, whose run reports it. */
static bool date_const_of(const plan_kr_ctx *c, const plan_expr *e, cat_value *out) {
  if (const_of(c, e, out)) return true;
  if (!e || e->kind != PX_CAST || e->n_args != 1 ||
      (e->type.id != CAT_T_DATE && e->type.id != CAT_T_TIMESTAMP))
    return false;
  cat_value in;
  cat_error err;
  return const_of(c, e->args[0], &in) && cat_value_cast(&in, &e->type, out, NULL, 0, &err) == CAT_OK;
}

/* Key column i when e is the key column itself, or CAST(key column AS t) that
** plan_kr_cast_exact accepts (*dbl: the constant is converted with plan_kr_cast_value
** first). -1: no. */
static int key_of(const plan_kr_ctx *c, const plan_expr *e, bool *dbl) {
  *dbl = false;
  if (!e || e->kind != PX_CAST || e->n_args != 1) return key_col_of(c, e);
  int i = key_col_of(c, e->args[0]);
  return i >= 0 && plan_kr_cast_exact(&c->s->cols[i].type, &e->type, dbl) ? i : -1;
}

static int commute(int op) {
  switch (op) {
    case SQL_OP_LT: return SQL_OP_GT;
    case SQL_OP_LE: return SQL_OP_GE;
    case SQL_OP_GT: return SQL_OP_LT;
    case SQL_OP_GE: return SQL_OP_LE;
    default: return op;
  }
}

static bool is_cmp(int op) {
  return op == SQL_OP_EQ || op == SQL_OP_LT || op == SQL_OP_LE || op == SQL_OP_GT || op == SQL_OP_GE;
}

/* Box for one column constrained by s (helper of the single-column forms). */
static int single(plan_kr_ctx *c, int i, int rc, plan_kr_set *s, plan_kr_boxes *out, plan_kr_tinfo *ti) {
  if (rc) return rc > 0 ? 0 : -1;
  if (i >= 64) return 0;
  ti->exact = true;
  ti->cols = s->all ? 0 : (uint64_t)1 << i;
  return boxes_single(c, out, i, s) ? -1 : 1;
}

/* Set for "f(key column) op v" with f ROUND/FLOOR/CEIL/TRUNC of a DATE or TIMESTAMP key
** column by a constant unit and multiplier (planner/keyrange_func.c): 0 ok (*out, *col),
** 1 not extractable, -1 error. */
static int round_set(plan_kr_ctx *c, const plan_expr *f, int op, const cat_value *v, int *col,
                     plan_kr_set **out) {
  if (!f || f->kind != PX_FUNC || f->n_args < 1 || f->n_args > 3) return 1;
  int i = key_col_of(c, f->args[0]);
  if (i < 0) return 1;
  cat_value unit, mult;
  if (f->n_args > 1 && !const_of(c, f->args[1], &unit)) return 1;
  if (f->n_args > 2 && !const_of(c, f->args[2], &mult)) return 1;
  plan_kr_round_iv iv;
  int r = plan_kr_round_bounds(f->func, c->s->cols[i].type.id, f->n_args > 1 ? &unit : NULL,
                               f->n_args > 2 ? &mult : NULL, op, v, &iv);
  if (r == 0) return 1;
  *col = i;
  if (r == 2) {
    *out = plan_kr_set_new(c, 0);
    return *out ? 0 : -1;
  }
  plan_kr_set *s = plan_kr_set_new(c, 1); /* col IS NOT NULL */
  if (!s) return -1;
  memset(&s->v[0], 0, sizeof s->v[0]);
  nonnull_lo(c, i, &s->v[0].lo);
  s->v[0].hi.kind = PLAN_KR_POS_INF;
  s->n = 1;
  plan_kr_set *b = NULL;
  int rc;
  if (iv.has_lo) {
    if ((rc = cmp_set(c, i, SQL_OP_GE, &iv.lo, &b))) return rc;
    if (!(s = set_intersect(c, s, b))) return -1;
  }
  if (iv.has_hi) {
    if ((rc = cmp_set(c, i, SQL_OP_LT, &iv.hi, &b))) return rc;
    if (!(s = set_intersect(c, s, b))) return -1;
  }
  *out = s;
  return 0;
}

static int rvc_compare(plan_kr_ctx *c, const plan_expr *l, const plan_expr *r, int op, plan_kr_boxes *out,
                       plan_kr_tinfo *ti) {
  if (r->kind != PX_ROW || l->n_args != r->n_args || op == SQL_OP_NE) return 0;
  if (l->n_args && key_col_of(c, l->args[0]) < 0) {
    const plan_expr *t = l;
    l = r;
    r = t;
    op = commute(op);
  }
  uint32_t n = l->n_args, L = 0;
  cat_value v;
  while (L < n && key_col_of(c, l->args[L]) >= 0 && key_col_of(c, l->args[L]) < 64 &&
         const_of(c, r->args[L], &v) && !v.is_null)
    L++;
  if (L == 0) return 0;
  int strict = (op == SQL_OP_LT || op == SQL_OP_LE) ? SQL_OP_LT : SQL_OP_GT;
  uint32_t nb = op == SQL_OP_EQ ? 1 : L + (L < n);
  if (plan_kr_boxes_alloc(c, out, nb)) return -1;
  ti->exact = L == n;
  ti->cols = 0;
  for (uint32_t b = 0; b < nb; b++) {
    plan_kr_box *bx = &out->v[out->n];
    if (plan_kr_box_init(c, bx)) return -1;
    uint32_t eqs = op == SQL_OP_EQ ? L : b; /* columns pinned equal in this box */
    for (uint32_t k = 0; k <= eqs && k < L; k++) {
      int i = key_col_of(c, l->args[k]);
      int kop = k < eqs ? SQL_OP_EQ : (k == n - 1 ? op : strict);
      const_of(c, r->args[k], &v);
      plan_kr_set *s = NULL;
      int rc = cmp_set(c, i, kop, &v, &s);
      if (rc) return rc > 0 ? 0 : -1;
      plan_kr_set *m = set_intersect(c, &bx->cols[i], s);
      if (!m) return -1;
      bx->cols[i] = *m;
      bx->ct[i] = 1;
      ti->cols |= (uint64_t)1 << i;
    }
    if (!box_empty(bx, c->s->n)) out->n++;
  }
  return 1;
}

static plan_in_set_values_fn in_set_values; /* the executor's (plan_set_in_set_values) */

void plan_set_in_set_values(plan_in_set_values_fn fn) {
  __atomic_store_n(&in_set_values, fn, __ATOMIC_RELEASE);
}

/* IN_SET(k, set), a key column's x IN (SELECT ...) run once before planning: the set's
** values as an IN list's (NULLs match nothing); not a key range past PLAN_MAX_SKIP_RANGES
** values (the term stays a filter: one hash probe per row). */
static int in_set_term(plan_kr_ctx *c, const plan_expr *e, plan_kr_boxes *out,
                       plan_kr_tinfo *ti) {
  plan_in_set_values_fn fn = __atomic_load_n(&in_set_values, __ATOMIC_ACQUIRE);
  bool dbl;
  int i = e->n_args == 2 ? key_of(c, e->args[0], &dbl) : -1;
  const cat_value *v = NULL, *carrier = NULL;
  uint32_t n = 0;
  int ncol = 0;
  cat_value cv;
  if (i < 0 || e->args[0]->kind != PX_COLUMN || !fn || !const_of(c, e->args[1], &cv)) return 0;
  carrier = &cv;
  if (!fn(carrier, &v, &n, &ncol) || ncol != 1 || n > PLAN_MAX_SKIP_RANGES) return 0;
  plan_kr_set *acc = plan_kr_set_new(c, n ? n : 1);
  if (!acc) return -1;
  for (uint32_t t = 0; t < n; t++) {
    cat_value x = v[t];
    if (x.is_null) continue;
    if (!plan_kr_cast_value(dbl, &x)) return 0;
    plan_kr_set *s = NULL;
    int rc = cmp_set(c, i, SQL_OP_EQ, &x, &s);
    if (rc) return rc > 0 ? 0 : -1;
    if (s->all) return 0;
    for (uint32_t k = 0; k < s->n; k++) acc->v[acc->n++] = s->v[k];
  }
  set_normalize(acc);
  return single(c, i, 0, acc, out, ti);
}

static int in_list(plan_kr_ctx *c, const plan_expr *e, plan_kr_boxes *out, plan_kr_tinfo *ti) {
  const plan_expr *lhs = e->args[0];
  cat_value v;
  if (lhs->kind == PX_ROW) {
    uint32_t n = lhs->n_args, nk = 0;
    ti->exact = true;
    ti->cols = 0;
    for (uint32_t k = 0; k < n; k++) {
      int i = key_col_of(c, lhs->args[k]);
      if (i >= 0 && i < 64) { nk++; ti->cols |= (uint64_t)1 << i; }
      else ti->exact = false;
    }
    if (!nk || e->n_args - 1 > MAX_BOXES) return 0;
    for (uint32_t t = 1; t < e->n_args; t++) {
      const plan_expr *tu = e->args[t];
      if (tu->kind != PX_ROW || tu->n_args != n) return 0;
      for (uint32_t k = 0; k < n; k++) {
        int i = key_col_of(c, lhs->args[k]);
        if (i >= 0 && i < 64 && !const_of(c, tu->args[k], &v)) return 0;
      }
    }
    if (plan_kr_boxes_alloc(c, out, e->n_args - 1)) return -1;
    for (uint32_t t = 1; t < e->n_args; t++) {
      plan_kr_box *bx = &out->v[out->n];
      if (plan_kr_box_init(c, bx)) return -1;
      for (uint32_t k = 0; k < n; k++) {
        int i = key_col_of(c, lhs->args[k]);
        if (i < 0 || i >= 64) continue;
        const_of(c, e->args[t]->args[k], &v);
        plan_kr_set *s = NULL;
        int rc = cmp_set(c, i, SQL_OP_EQ, &v, &s);
        if (rc) return rc > 0 ? 0 : -1;
        plan_kr_set *m = set_intersect(c, &bx->cols[i], s);
        if (!m) return -1;
        bx->cols[i] = *m;
        bx->ct[i] = 1;
      }
      if (!box_empty(bx, c->s->n)) out->n++;
    }
    return 1;
  }
  bool dbl;
  int i = key_of(c, lhs, &dbl);
  bool fn = lhs->kind == PX_FUNC; /* a rounding of a key column: each item an interval */
  if (i < 0 && !fn) return 0;
  plan_kr_set *acc = plan_kr_set_new(c, e->n_args);
  if (!acc) return -1;
  for (uint32_t t = 1; t < e->n_args; t++) {
    if (!(fn ? date_const_of(c, e->args[t], &v) : const_of(c, e->args[t], &v)) ||
        !plan_kr_cast_value(dbl, &v))
      return 0;
    plan_kr_set *s = NULL;
    int rc = fn ? round_set(c, lhs, SQL_OP_EQ, &v, &i, &s) : cmp_set(c, i, SQL_OP_EQ, &v, &s);
    if (rc) return rc > 0 ? 0 : -1;
    if (s->all) return 0;
    for (uint32_t k = 0; k < s->n; k++) acc->v[acc->n++] = s->v[k];
  }
  set_normalize(acc);
  return single(c, i, 0, acc, out, ti);
}

/* Set of the strings of key column i that start with pre[0..pn) (pn > 0): 0 ok, 1 not
** extractable, -1 error (what: the prefix's name in the message). */
static int prefix_set(plan_kr_ctx *c, int i, const uint8_t *pre, size_t pn, const char *what,
                      plan_kr_set **out) {
  size_t pos = 0;
  cat_error err;
  int rc = cat_key_encode_string_prefix(&c->asc[i], pre, pn, c->buf, CAT_KEY_MAX, &pos, &err);
  if (rc == CAT_ERR_TOOBIG) {
    char m[80];
    snprintf(m, sizeof m, "%s longer than the largest key", what);
    return plan_kr_fail(c, EXEC_TOOBIG, m);
  }
  if (rc) return 1;
  plan_kr_set *s = plan_kr_set_new(c, 1);
  if (!s) return -1;
  cat_value pv = cat_v_str(CAT_T_VARCHAR, pre, pn);
  plan_kr_pos lo = {PLAN_KR_BEFORE, false, plan_kr_copy_bytes(c, c->buf, pos), (uint32_t)pos,
             literal_text(c, &pv, true)};
  if (!lo.b || !lo.text) return -1;
  s->v[0].lo = lo;
  s->v[0].hi = lo;
  s->v[0].hi.kind = PLAN_KR_AFTER;
  s->n = 1;
  *out = s;
  return 0;
}

/* SUBSTR(k, 1, n) op x on a VARCHAR key column k, n >= 1 and x text constants (exec's
** SUBSTR: the first n characters, all of a shorter k, NULL for ''; a start of 0 is 1): with
** m the characters of x, = is k's prefix x when m = n, k = x when 0 < m < n, nothing when
** m > n or x is '' (exact); < and <= bound k below every string past the prefix x[:n], > and
** >= from x up (not exact: the term stays a filter). SUBSTR(k, 1) (two arguments: all of k,
** NULL for '') is k itself but for '': = x is k = x, nothing for '' (exact); > x and >= x
** with x not '' are k > x and k >= x (exact: such a k is not ''); < and <= are k's range
** below x, and >= '' k's whole range, kept as filters (they would take ''). */
static int substr_term(plan_kr_ctx *c, const plan_expr *f, int op, const cat_value *x,
                       plan_kr_boxes *out, plan_kr_tinfo *ti) {
  if (f->func != EXEC_F_SUBSTR || (f->n_args != 2 && f->n_args != 3)) return 0;
  bool whole = f->n_args == 2; /* SUBSTR(k, 1): every character */
  int i = key_col_of(c, f->args[0]);
  cat_value a1, a2 = cat_v_int(CAT_T_BIGINT, INT64_MAX);
  if (i < 0 || c->s->cols[i].type.id != CAT_T_VARCHAR || !const_of(c, f->args[1], &a1) ||
      (!whole && !const_of(c, f->args[2], &a2)) || a1.is_null || a2.is_null ||
      !cat_type_is_integer(a1.type.id) || !cat_type_is_integer(a2.type.id) ||
      (a1.u.i != 1 && a1.u.i != 0) || a2.u.i < 1 || x->is_null ||
      !cat_type_is_string(x->type.id))
    return 0;
  int64_t n = a2.u.i, m = 0;
  const uint8_t *p = x->u.s.p;
  size_t len = x->u.s.len, cut = 0; /* bytes of x's first n characters */
  while (cut < len && m < n) {
    cut++;
    while (cut < len && (p[cut] & 0xC0) == 0x80) cut++;
    m++;
  }
  bool longer = cut < len; /* x has more than n characters */
  cat_value xv = cat_v_str(CAT_T_VARCHAR, p, len);
  plan_kr_set *s = NULL;
  int rc;
  bool exact = false;
  switch (op) {
    case SQL_OP_EQ:
      if (longer || len == 0) {
        s = plan_kr_set_new(c, 0);
        rc = s ? 0 : -1;
      } else if (m == n) {
        rc = prefix_set(c, i, p, len, "SUBSTR prefix", &s);
      } else {
        rc = cmp_set(c, i, SQL_OP_EQ, &xv, &s);
      }
      return single(c, i, rc, s, out, ti);
    case SQL_OP_LT: case SQL_OP_LE: /* from the first non-NULL key to the prefix's end */
      if (cut == 0) return 0;
      rc = whole ? cmp_set(c, i, op, &xv, &s) : prefix_set(c, i, p, cut, "SUBSTR prefix", &s);
      if (!rc) nonnull_lo(c, i, &s->v[0].lo);
      break;
    case SQL_OP_GT: case SQL_OP_GE:
      rc = cmp_set(c, i, whole ? op : SQL_OP_GE, &xv, &s);
      exact = whole && (len > 0 || op == SQL_OP_GT);
      break;
    default: return 0;
  }
  int r = single(c, i, rc, s, out, ti);
  ti->exact = exact;
  return r;
}

/* LIKE 'prefix...' on a CHAR/VARCHAR key column. */
static int like_term(plan_kr_ctx *c, const plan_expr *e, plan_kr_boxes *out, plan_kr_tinfo *ti) {
  int i = key_col_of(c, e->args[0]);
  cat_value pat, esc;
  if (i < 0 || e->ilike || !const_of(c, e->args[1], &pat)) return 0;
  int tid = c->s->cols[i].type.id;
  if (tid != CAT_T_VARCHAR && tid != CAT_T_CHAR) return 0;
  plan_kr_set *none = plan_kr_set_new(c, 0);
  if (!none) return -1;
  if (pat.is_null) return single(c, i, 0, none, out, ti);
  if (!cat_type_is_string(pat.type.id)) return 0;
  const uint8_t *esc_p = NULL;
  size_t esc_n = 0;
  if (e->n_args > 2) {
    if (!const_of(c, e->args[2], &esc)) return 0;
    if (esc.is_null) return single(c, i, 0, none, out, ti);
    if (!cat_type_is_string(esc.type.id)) return 0;
    esc_p = esc.u.s.p;
    esc_n = esc.u.s.len;
    if (esc_n == 0 || esc_n > 4 || cat_utf8_chars(esc_p, esc_n) != 1) return 0;
  }
  const uint8_t *p = pat.u.s.p;
  size_t n = pat.u.s.len, pn = 0, k = 0;
  uint8_t *pre = plan_kr_alloc(&c->ar, n + 1);
  if (!pre) return plan_kr_fail(c, EXEC_NOMEM, "out of memory deriving key ranges");
  int wild = 0; /* 0 none, '%' or '_' */
  while (k < n) {
    if (esc_n && k + esc_n <= n && memcmp(p + k, esc_p, esc_n) == 0) {
      k += esc_n;
      if (k >= n) return 0; /* pattern ends in the escape: the executor reports it */
      size_t cl = 1;        /* copy one UTF-8 character literally */
      while (k + cl < n && (p[k + cl] & 0xC0) == 0x80) cl++;
      memcpy(pre + pn, p + k, cl);
      pn += cl;
      k += cl;
      continue;
    }
    if (p[k] == '%' || p[k] == '_') { wild = p[k]; break; }
    pre[pn++] = p[k++];
  }
  bool is_char = tid == CAT_T_CHAR;
  if (!wild) { /* equality with the unescaped text */
    if (is_char) return 0;
    cat_value x = cat_v_str(CAT_T_VARCHAR, pre, pn);
    plan_kr_set *s = NULL;
    int rc = cmp_set(c, i, SQL_OP_EQ, &x, &s);
    return single(c, i, rc, s, out, ti);
  }
  if (pn == 0 || (is_char && pre[pn - 1] == ' ')) return 0;
  plan_kr_set *s = NULL;
  int rc = prefix_set(c, i, pre, pn, "LIKE prefix", &s);
  int r = single(c, i, rc, s, out, ti);
  ti->exact = r == 1 && !is_char && wild == '%' && k == n - 1;
  return r;
}

/* Boxes for term e: 1 extracted (*out, *ti), 0 not extractable, -1 error (c->rc). */
int plan_kr_term_boxes(plan_kr_ctx *c, const plan_expr *e, plan_kr_boxes *out, plan_kr_tinfo *ti) {
  cat_value v;
  out->n = 0;
  out->v = NULL;
  ti->exact = false;
  ti->cols = 0;
  switch (e->kind) {
    case PX_CONST:
      if (e->value.type.id != CAT_T_BOOLEAN && !e->value.is_null) return 0;
      ti->exact = true;
      if (e->value.is_null || !e->value.u.b) return 1; /* no box: nothing */
      if (plan_kr_boxes_alloc(c, out, 1) || plan_kr_box_init(c, &out->v[0])) return -1;
      out->n = 1;
      return 1;
    case PX_BINARY: {
      const plan_expr *l = e->args[0], *r = e->args[1];
      if (e->op == SQL_OP_AND || e->op == SQL_OP_OR) {
        plan_kr_boxes a, b;
        plan_kr_tinfo ta, tb;
        int ra = plan_kr_term_boxes(c, l, &a, &ta);
        if (ra < 0) return -1;
        int rb = plan_kr_term_boxes(c, r, &b, &tb);
        if (rb < 0) return -1;
        if (e->op == SQL_OP_OR) {
          if (!ra || !rb) return 0;
          int rc = boxes_or(c, &a, &b, out);
          if (rc) return rc > 0 ? 0 : -1;
          ti->exact = ta.exact && tb.exact;
          ti->cols = ta.cols | tb.cols;
          return 1;
        }
        if (!ra && !rb) return 0;
        if (!ra || !rb) {
          *out = ra ? a : b;
          *ti = ra ? ta : tb;
          ti->exact = false;
          return 1;
        }
        int rc = plan_kr_boxes_and(c, &a, &b, out);
        if (rc < 0) return -1;
        if (rc > 0) { *out = a; *ti = ta; ti->exact = false; return 1; }
        ti->exact = ta.exact && tb.exact;
        ti->cols = ta.cols | tb.cols;
        return 1;
      }
      if (!is_cmp(e->op)) return 0;
      if (l->kind == PX_ROW) return rvc_compare(c, l, r, e->op, out, ti);
      if (l->kind == PX_FUNC || r->kind == PX_FUNC) {
        int fop = l->kind == PX_FUNC ? e->op : commute(e->op), col = -1;
        const plan_expr *f = l->kind == PX_FUNC ? l : r;
        if (!date_const_of(c, l->kind == PX_FUNC ? r : l, &v)) return 0;
        if (f->func == EXEC_F_SUBSTR) return substr_term(c, f, fop, &v, out, ti);
        plan_kr_set *s = NULL;
        int rc = round_set(c, f, fop, &v, &col, &s);
        return single(c, col, rc, s, out, ti);
      }
      bool dbl;
      int op = e->op, i = key_of(c, l, &dbl);
      if (i < 0) {
        i = key_of(c, r, &dbl);
        r = l;
        op = commute(op);
      }
      if (i < 0 || !const_of(c, r, &v) || !plan_kr_cast_value(dbl, &v)) return 0;
      plan_kr_set *s = NULL;
      int rc = cmp_set(c, i, op, &v, &s);
      return single(c, i, rc, s, out, ti);
    }
    case PX_IN:
      if (e->negated || e->n_args < 2) return 0;
      return in_list(c, e, out, ti);
    case PX_FUNC:
      return e->func == EXEC_F_IN_SET ? in_set_term(c, e, out, ti) : 0;
    case PX_BETWEEN: {
      bool dbl;
      int i = key_of(c, e->args[0], &dbl);
      cat_value lo, hi;
      if (e->args[0]->kind == PX_FUNC) {
        if (e->negated || !date_const_of(c, e->args[1], &lo) ||
            !date_const_of(c, e->args[2], &hi))
          return 0;
        plan_kr_set *a = NULL, *b = NULL;
        int ca = -1, cb = -1;
        int rc = round_set(c, e->args[0], SQL_OP_GE, &lo, &ca, &a);
        if (rc) return rc > 0 ? 0 : -1;
        rc = round_set(c, e->args[0], SQL_OP_LE, &hi, &cb, &b);
        if (rc) return rc > 0 ? 0 : -1;
        plan_kr_set *s = set_intersect(c, a, b);
        return single(c, ca, s ? 0 : -1, s, out, ti);
      }
      if (e->negated || i < 0 || !const_of(c, e->args[1], &lo) || !const_of(c, e->args[2], &hi) ||
          !plan_kr_cast_value(dbl, &lo) || !plan_kr_cast_value(dbl, &hi))
        return 0;
      plan_kr_set *a = NULL, *b = NULL;
      int rc = cmp_set(c, i, SQL_OP_GE, &lo, &a);
      if (rc) return rc > 0 ? 0 : -1;
      rc = cmp_set(c, i, SQL_OP_LE, &hi, &b);
      if (rc) return rc > 0 ? 0 : -1;
      plan_kr_set *s = set_intersect(c, a, b);
      return single(c, i, s ? 0 : -1, s, out, ti);
    }
    case PX_LIKE:
      if (e->negated || e->n_args < 2) return 0;
      return like_term(c, e, out, ti);
    case PX_ISNULL: {
      int i = key_col_of(c, e->args[0]);
      if (i < 0) return 0;
      if (e->negated) { /* IS NOT NULL: past the NULL key; every key when it cannot be NULL
                           (the term is then answered and nothing bounds the key) */
        if (!c->asc[i].nullable) return single(c, i, 0, &ALL_SET, out, ti);
        plan_kr_set *s = plan_kr_set_new(c, 1);
        if (!s) return -1;
        nonnull_lo(c, i, &s->v[0].lo);
        memset(&s->v[0].hi, 0, sizeof s->v[0].hi);
        s->v[0].hi.kind = PLAN_KR_POS_INF;
        s->n = 1;
        return single(c, i, 0, s, out, ti);
      }
      plan_kr_set *s = plan_kr_set_new(c, 1);
      if (!s) return -1;
      if (c->asc[i].nullable) {
        cat_value nv = cat_v_null(c->asc[i].type);
        int rc = value_pos(c, i, &nv, PLAN_KR_BEFORE, &s->v[0].lo);
        if (rc) return rc > 0 ? 0 : -1;
        s->v[0].hi = s->v[0].lo;
        s->v[0].hi.kind = PLAN_KR_AFTER;
        s->n = 1;
      }
      return single(c, i, 0, s, out, ti);
    }
    default: return 0;
  }
}

/* Flatten top-level ANDs into terms[]. */
static int split_and(const plan_expr *e, const plan_expr ***v, uint32_t *n, uint32_t *cap) {
  if (e->kind == PX_BINARY && e->op == SQL_OP_AND && e->n_args == 2) {
    if (split_and(e->args[0], v, n, cap)) return -1;
    return split_and(e->args[1], v, n, cap);
  }
  if (*n == *cap) {
    uint32_t nc = *cap ? *cap * 2 : 16;
    const plan_expr **nv = realloc(*v, nc * sizeof *nv);
    if (!nv) return -1;
    *v = nv;
    *cap = nc;
  }
  (*v)[(*n)++] = e;
  return 0;
}

static int key_ranges(const plan_key_schema *schema, const plan_expr *where,
                      const cat_value *params, int n_params, plan_scan_ranges *out, char *msg,
                      size_t cap, bool no_explain) {
  memset(out, 0, sizeof *out);
  if (cap) msg[0] = 0;
  plan_kr_ctx c;
  memset(&c, 0, sizeof c);
  c.no_explain = no_explain;
  c.s = schema;
  c.params = params;
  c.n_params = n_params;
  c.msg = msg;
  c.cap = cap;
  const plan_expr **terms = NULL;
  uint32_t nt = 0, tcap = 0;
  if (where && split_and(where, &terms, &nt, &tcap)) {
    free(terms);
    if (cap) snprintf(msg, cap, "out of memory deriving key ranges");
    return EXEC_NOMEM;
  }
  int rc = EXEC_OK;
  c.buf = malloc(CAT_KEY_MAX + 16);
  c.asc = plan_kr_alloc(&c.ar, (size_t)(schema->n ? schema->n : 1) * sizeof(cat_key_col));
  if (!c.buf || !c.asc) {
    plan_kr_fail(&c, EXEC_NOMEM, "out of memory deriving key ranges");
  } else {
    for (int i = 0; i < schema->n; i++) {
      c.asc[i] = schema->cols[i];
      c.asc[i].desc = false;
      if (cat_type_is_string(c.asc[i].type.id) || c.asc[i].type.id == CAT_T_VARBINARY)
        c.asc[i].type.length = 0;
      /* CHAR keys encode like VARCHAR (values are stored trimmed); see plan_fold_compare */
      if (c.asc[i].type.id == CAT_T_CHAR) c.asc[i].type.id = CAT_T_VARCHAR;
    }
    plan_kr_derive(&c, terms, nt, out);
  }
  rc = c.rc;
  if (rc) plan_scan_ranges_free(out);
  free(terms);
  free(c.buf);
  plan_kr_arena_free(&c.ar);
  return rc;
}

int plan_key_ranges(const plan_key_schema *schema, const plan_expr *where,
                    const cat_value *params, int n_params, plan_scan_ranges *out, char *msg,
                    size_t cap) {
  return key_ranges(schema, where, params, n_params, out, msg, cap, false);
}

int plan_key_ranges_noexplain(const plan_key_schema *schema, const plan_expr *where,
                              const cat_value *params, int n_params, plan_scan_ranges *out,
                              char *msg, size_t cap) {
  return key_ranges(schema, where, params, n_params, out, msg, cap, true);
}

void plan_scan_ranges_free(plan_scan_ranges *r) {
  if (!r) return;
  for (uint32_t i = 0; i < r->n_ranges; i++) {
    free(r->ranges[i].start);
    free(r->ranges[i].end);
  }
  free(r->ranges);
  free(r->explain);
  free(r->key_terms);
  free(r->residual);
  memset(r, 0, sizeof *r);
}

const char *plan_scan_kind_name(int kind) {
  static const char *const names[] = {"NOTHING", "POINT LOOKUP", "RANGE SCAN", "SKIP SCAN",
                                      "FULL SCAN", "SKIP SCAN BY PREFIX"};
  return kind >= 0 && kind <= PLAN_SCAN_PREFIX_SKIP ? names[kind] : "?";
}
