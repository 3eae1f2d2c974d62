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
** Ranges. A box is expanded left to right: point lists multiply the key prefix, the first
** column with a non-point interval (or an unconstrained column) ends it. DESC columns invert
** the bytes and swap the bounds at this step. The expanded ranges are sorted and merged in
** key space. Past PLAN_MAX_SKIP_RANGES the expansion uses fewer key columns, and at last one
** range over the hull of the leading column.
**
** Exactness. A top-level AND term is answered (key_terms) only if it is exact (no LIKE with
** other wildcards, no row value constructor cut short) and every key column it constrains
** is captured by the expansion of every box it contributed to; else it stays residual.
** Bound folding (INTEGER k > 5.5 is k >= 6) is planner/filter_fold.c's plan_fold_compare.
** Not here: choosing an index, families, the filter (planner/filter.c).
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalog/valcodec.h"
#include "catalog/value.h"
#include "exec/engine.h"
#include "planner/filter.h"
#include "planner/keyrange.h"
#include "sql/ast.h"

#define MAX_TERMS 64         /* top-level AND terms considered for ranges */
#define MAX_BOXES PLAN_MAX_SKIP_RANGES
#define EXPLAIN_RANGES 8     /* ranges spelled out in the explain text */

/* ---- Arena ---------------------------------------------------------------------------- */
typedef struct chunk {
  struct chunk *next; /* older chunk */
  size_t used, cap;   /* bytes used / available in data */
  max_align_t data[]; /* payload */
} chunk;

typedef struct arena {
  chunk *head; /* newest chunk */
} arena;

static void *amalloc(arena *a, size_t n) {
  n = (n + sizeof(max_align_t) - 1) / sizeof(max_align_t) * sizeof(max_align_t);
  if (!a->head || a->head->cap - a->head->used < n) {
    size_t cap = n > 65536 ? n : 65536;
    chunk *c = malloc(sizeof(chunk) + cap);
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

static void arena_free(arena *a) {
  while (a->head) {
    chunk *n = a->head->next;
    free(a->head);
    a->head = n;
  }
}

/* ---- Positions, intervals, sets, boxes ----------------------------------------------- */
enum { K_NEG_INF, K_BEFORE, K_AFTER, K_POS_INF };

typedef struct kpos {
  uint8_t kind;       /* K_* */
  bool full;          /* b is a whole value's encoding (not a LIKE prefix) */
  const uint8_t *b;   /* bytes (arena) */
  uint32_t len;       /* byte count */
  const char *text;   /* the value as a literal, for EXPLAIN */
} kpos;

typedef struct kiv {
  kpos lo, hi; /* [lo, hi) */
} kiv;

typedef struct kset {
  bool all;   /* unconstrained */
  kiv *v;     /* sorted, disjoint intervals (arena) */
  uint32_t n; /* count; 0 with !all = empty */
} kset;

typedef struct kbox {
  kset *cols;  /* one set per key column (arena) */
  uint64_t *ct; /* per key column: bit j set if top-level term j constrains it in this box
                   (while one term is being built: 1 = constrained) */
} kbox;

typedef struct kboxes {
  kbox *v;         /* boxes (arena) */
  uint32_t n;      /* count */
} kboxes;

typedef struct ctx {
  const plan_key_schema *s; /* key schema */
  const cat_value *params;  /* bound parameters */
  int n_params;             /* count */
  arena ar;                 /* everything temporary */
  cat_key_col *asc;         /* per key column: its ASC codec view (arena) */
  uint8_t *buf;             /* CAT_KEY_MAX encoding scratch */
  int rc;                   /* first error (EXEC_*) */
  char *msg;                /* caller's message buffer */
  size_t cap;               /* its size */
} ctx;

static int fail(ctx *c, int rc, const char *m) {
  if (!c->rc) {
    c->rc = rc;
    if (c->cap) snprintf(c->msg, c->cap, "%s", m);
  }
  return -1;
}

static int pos_cmp(const kpos *a, const kpos *b) {
  if (a->kind == K_NEG_INF || b->kind == K_NEG_INF)
    return (a->kind != K_NEG_INF) - (b->kind != K_NEG_INF);
  if (a->kind == K_POS_INF || b->kind == K_POS_INF)
    return (a->kind == K_POS_INF) - (b->kind == K_POS_INF);
  uint32_t m = a->len < b->len ? a->len : b->len;
  int c = m ? memcmp(a->b, b->b, m) : 0;
  if (c) return c < 0 ? -1 : 1;
  if (a->len == b->len) return (a->kind == K_AFTER) - (b->kind == K_AFTER);
  if (a->len < b->len) return a->kind == K_AFTER ? 1 : -1;
  return b->kind == K_AFTER ? -1 : 1;
}

static bool iv_is_point(const kiv *v) {
  return v->lo.kind == K_BEFORE && v->hi.kind == K_AFTER && v->lo.full && v->lo.len == v->hi.len &&
         memcmp(v->lo.b, v->hi.b, v->lo.len) == 0;
}

static bool set_all_points(const kset *s) {
  for (uint32_t i = 0; i < s->n; i++)
    if (!iv_is_point(&s->v[i])) return false;
  return true;
}

static kset *set_new(ctx *c, uint32_t n) {
  kset *s = amalloc(&c->ar, sizeof *s);
  if (!s) return fail(c, EXEC_NOMEM, "out of memory deriving key ranges"), NULL;
  s->all = false;
  s->n = 0;
  s->v = n ? amalloc(&c->ar, n * sizeof(kiv)) : NULL;
  if (n && !s->v) return fail(c, EXEC_NOMEM, "out of memory deriving key ranges"), NULL;
  return s;
}

static kset ALL_SET = {true, NULL, 0};

static kset *set_intersect(ctx *c, const kset *a, const kset *b) {
  if (a->all) return (kset *)b;
  if (b->all) return (kset *)a;
  kset *r = set_new(c, a->n + b->n);
  if (!r) return NULL;
  uint32_t i = 0, j = 0;
  while (i < a->n && j < b->n) {
    const kiv *x = &a->v[i], *y = &b->v[j];
    const kpos *lo = pos_cmp(&x->lo, &y->lo) >= 0 ? &x->lo : &y->lo;
    const kpos *hi = pos_cmp(&x->hi, &y->hi) <= 0 ? &x->hi : &y->hi;
    if (pos_cmp(lo, hi) < 0) {
      r->v[r->n].lo = *lo;
      r->v[r->n].hi = *hi;
      r->n++;
    }
    if (pos_cmp(&x->hi, &y->hi) <= 0) i++;
    else j++;
  }
  return r;
}

static int iv_lo_cmp(const void *a, const void *b) {
  return pos_cmp(&((const kiv *)a)->lo, &((const kiv *)b)->lo);
}

/* Sort and merge intervals in place (union). */
static void set_normalize(kset *s) {
  if (s->n < 2) return;
  qsort(s->v, s->n, sizeof(kiv), iv_lo_cmp);
  uint32_t o = 0;
  for (uint32_t i = 1; i < s->n; i++) {
    if (pos_cmp(&s->v[i].lo, &s->v[o].hi) <= 0) {
      if (pos_cmp(&s->v[i].hi, &s->v[o].hi) > 0) s->v[o].hi = s->v[i].hi;
    } else {
      s->v[++o] = s->v[i];
    }
  }
  s->n = o + 1;
}

static kset *set_union(ctx *c, const kset *a, const kset *b) {
  if (a->all || b->all) return &ALL_SET;
  kset *r = set_new(c, a->n + b->n);
  if (!r) return NULL;
  if (a->n) memcpy(r->v, a->v, a->n * sizeof(kiv));
  if (b->n) memcpy(r->v + a->n, b->v, b->n * sizeof(kiv));
  r->n = a->n + b->n;
  set_normalize(r);
  return r;
}

static bool box_empty(const kbox *b, int n) {
  for (int i = 0; i < n; i++)
    if (!b->cols[i].all && b->cols[i].n == 0) return true;
  return false;
}

/* A box with every column unconstrained. */
static int box_init(ctx *c, kbox *b) {
  b->cols = amalloc(&c->ar, (size_t)c->s->n * sizeof(kset));
  b->ct = amalloc(&c->ar, (size_t)c->s->n * sizeof(uint64_t));
  if (!b->cols || !b->ct) return fail(c, EXEC_NOMEM, "out of memory deriving key ranges");
  for (int i = 0; i < c->s->n; i++) {
    b->cols[i] = ALL_SET;
    b->ct[i] = 0;
  }
  return 0;
}

static int boxes_alloc(ctx *c, kboxes *r, uint32_t n) {
  r->n = 0;
  r->v = n ? amalloc(&c->ar, n * sizeof(kbox)) : NULL;
  if (n && !r->v) return fail(c, EXEC_NOMEM, "out of memory deriving key ranges");
  return 0;
}

/* One box constraining column i to s. */
static int boxes_single(ctx *c, kboxes *r, int i, const kset *s) {
  if (boxes_alloc(c, r, 1)) return -1;
  if (box_init(c, &r->v[0])) return -1;
  r->v[0].cols[i] = *s;
  r->v[0].ct[i] = s->all ? 0 : 1;
  r->n = box_empty(&r->v[0], c->s->n) ? 0 : 1;
  return 0;
}

/* Cross-product intersection. Returns 1 when it would exceed MAX_BOXES (r untouched). */
static int boxes_and(ctx *c, const kboxes *a, const kboxes *b, kboxes *r) {
  if ((uint64_t)a->n * b->n > MAX_BOXES) return 1;
  if (boxes_alloc(c, r, a->n * b->n)) return -1;
  int n = c->s->n;
  for (uint32_t i = 0; i < a->n; i++) {
    for (uint32_t j = 0; j < b->n; j++) {
      kbox *o = &r->v[r->n];
      o->cols = amalloc(&c->ar, (size_t)n * sizeof(kset));
      o->ct = amalloc(&c->ar, (size_t)n * sizeof(uint64_t));
      if (!o->cols || !o->ct) return fail(c, EXEC_NOMEM, "out of memory deriving key ranges");
      bool empty = false;
      for (int k = 0; k < n && !empty; k++) {
        kset *s = set_intersect(c, &a->v[i].cols[k], &b->v[j].cols[k]);
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
static int box_single_col(const kbox *b, int n) {
  int col = -1;
  for (int i = 0; i < n; i++) {
    if (b->cols[i].all) continue;
    if (col >= 0) return -2;
    col = i;
  }
  return col;
}

/* Union; boxes constraining one same column collapse into one box. */
static int boxes_or(ctx *c, const kboxes *a, const kboxes *b, kboxes *r) {
  int n = c->s->n;
  if ((uint64_t)a->n + b->n > MAX_BOXES) return 1;
  int col = -3;
  bool same = true;
  for (uint32_t i = 0; i < a->n + b->n && same; i++) {
    const kbox *x = i < a->n ? &a->v[i] : &b->v[i - a->n];
    int k = box_single_col(x, n);
    if (k < 0 || (col != -3 && col != k)) same = false;
    col = k;
  }
  if (same && col >= 0) {
    kset *acc = set_new(c, 0);
    if (!acc) return -1;
    for (uint32_t i = 0; i < a->n + b->n; i++) {
      const kbox *x = i < a->n ? &a->v[i] : &b->v[i - a->n];
      acc = set_union(c, acc, &x->cols[col]);
      if (!acc) return -1;
    }
    return boxes_single(c, r, col, acc) ? -1 : 0;
  }
  if (boxes_alloc(c, r, a->n + b->n)) return -1;
  if (a->n) memcpy(r->v, a->v, a->n * sizeof(kbox));
  if (b->n) memcpy(r->v + a->n, b->v, b->n * sizeof(kbox));
  r->n = a->n + b->n;
  return 0;
}

/* ---- Values to positions ------------------------------------------------------------- */
static const char *literal_text(ctx *c, const cat_value *v, bool prefix) {
  char tmp[160];
  size_t n = plan_value_literal(v, tmp, sizeof tmp);
  if (n >= sizeof tmp) n = sizeof tmp - 1;
  char *t = amalloc(&c->ar, n + 3);
  if (!t) return fail(c, EXEC_NOMEM, "out of memory deriving key ranges"), NULL;
  memcpy(t, tmp, n);
  if (prefix) t[n++] = '*';
  t[n] = 0;
  return t;
}

static const uint8_t *copy_bytes(ctx *c, const uint8_t *p, size_t n) {
  uint8_t *r = amalloc(&c->ar, n ? n : 1);
  if (!r) return fail(c, EXEC_NOMEM, "out of memory deriving key ranges"), NULL;
  memcpy(r, p, n);
  return r;
}

/* Encode x for column i (ASC view) into a full-value position of kind `kind`. 0 ok, 1 not
** encodable (leave the term residual), -1 error. */
static int value_pos(ctx *c, int i, const cat_value *x, int kind, kpos *out) {
  size_t pos = 0;
  cat_error err;
  int rc = cat_key_encode_col(&c->asc[i], x, c->buf, CAT_KEY_MAX, &pos, &err);
  if (rc == CAT_ERR_TOOBIG) return fail(c, EXEC_TOOBIG, "key bound longer than the largest key");
  if (rc) return 1;
  out->kind = (uint8_t)kind;
  out->full = true;
  out->len = (uint32_t)pos;
  out->b = copy_bytes(c, c->buf, pos);
  out->text = x->is_null ? "NULL" : literal_text(c, x, false);
  return out->b && out->text ? 0 : -1;
}

/* The lowest position of a non-NULL value of column i. */
static void nonnull_lo(ctx *c, int i, kpos *out) {
  static const uint8_t null_ind = 0x00;
  memset(out, 0, sizeof *out);
  if (c->asc[i].nullable) {
    out->kind = K_AFTER;
    out->full = true;
    out->b = &null_ind;
    out->len = 1;
    out->text = "NULL";
  } else {
    out->kind = K_NEG_INF;
  }
}

/* Set for "column i op x" (x already folded, op EQ/LT/LE/GT/GE). 0 ok (*out), 1 not
** extractable, -1 error. */
static int cmp_set(ctx *c, int i, int op, const cat_value *k, kset **out) {
  int fop;
  cat_value x;
  uint8_t buf[64];
  int f = plan_fold_compare(&c->asc[i].type, op, k, &fop, &x, buf, sizeof buf);
  if (f == PLAN_FOLD_NONE) return 1;
  if (f == PLAN_FOLD_NULL || f == PLAN_FOLD_FALSE) {
    *out = set_new(c, 0);
    return *out ? 0 : -1;
  }
  kset *s = set_new(c, 1);
  if (!s) return -1;
  kiv *v = &s->v[0];
  memset(v, 0, sizeof *v);
  nonnull_lo(c, i, &v->lo);
  v->hi.kind = K_POS_INF;
  s->n = 1;
  if (f == PLAN_FOLD_TRUE) {
    if (!c->asc[i].nullable) *s = ALL_SET;
    *out = s;
    return 0;
  }
  kpos p;
  int rc;
  switch (fop) {
    case SQL_OP_EQ:
      if ((rc = value_pos(c, i, &x, K_BEFORE, &v->lo))) return rc;
      v->hi = v->lo;
      v->hi.kind = K_AFTER;
      break;
    case SQL_OP_LT: case SQL_OP_LE:
      if ((rc = value_pos(c, i, &x, fop == SQL_OP_LT ? K_BEFORE : K_AFTER, &p))) return rc;
      v->hi = p;
      break;
    case SQL_OP_GT: case SQL_OP_GE:
      if ((rc = value_pos(c, i, &x, fop == SQL_OP_GT ? K_AFTER : K_BEFORE, &p))) return rc;
      v->lo = p;
      break;
    default: return 1;
  }
  if (pos_cmp(&v->lo, &v->hi) >= 0) s->n = 0;
  *out = s;
  return 0;
}

/* ---- Terms to boxes ------------------------------------------------------------------ */
static int key_col_of(const ctx *c, const plan_expr *e) {
  if (!e || e->kind != PX_COLUMN) return -1;
  for (int i = 0; i < c->s->n; i++)
    if (c->s->slots[i] == e->column) return i;
  return -1;
}

static bool const_of(const ctx *c, const plan_expr *e, cat_value *out) {
  if (!e) return false;
  if (e->kind == PX_CONST) { *out = e->value; return true; }
  if (e->kind == PX_PARAM && c->params && e->param >= 1 && e->param <= c->n_params) {
    *out = c->params[e->param - 1];
    return true;
  }
  return false;
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

typedef struct tinfo {
  bool exact;       /* the boxes answer the term fully */
  uint64_t cols;    /* key columns the term constrains */
} tinfo;

static int term_boxes(ctx *c, const plan_expr *e, kboxes *out, tinfo *ti);

/* Box for one column constrained by s (helper of the single-column forms). */
static int single(ctx *c, int i, int rc, kset *s, kboxes *out, tinfo *ti) {
  if (rc) return rc > 0 ? 0 : -1;
  if (i >= 64) return 0;
  ti->exact = true;
  ti->cols = s->all ? 0 : (uint64_t)1 << i;
  return boxes_single(c, out, i, s) ? -1 : 1;
}

static int rvc_compare(ctx *c, const plan_expr *l, const plan_expr *r, int op, kboxes *out,
                       tinfo *ti) {
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
  if (boxes_alloc(c, out, nb)) return -1;
  ti->exact = L == n;
  ti->cols = 0;
  for (uint32_t b = 0; b < nb; b++) {
    kbox *bx = &out->v[out->n];
    if (box_init(c, bx)) return -1;
    uint32_t eqs = op == SQL_OP_EQ ? L : b; /* columns pinned equal in this box */
    for (uint32_t k = 0; k <= eqs && k < L; k++) {
      int i = key_col_of(c, l->args[k]);
      int kop = k < eqs ? SQL_OP_EQ : (k == n - 1 ? op : strict);
      const_of(c, r->args[k], &v);
      kset *s = NULL;
      int rc = cmp_set(c, i, kop, &v, &s);
      if (rc) return rc > 0 ? 0 : -1;
      kset *m = set_intersect(c, &bx->cols[i], s);
      if (!m) return -1;
      bx->cols[i] = *m;
      bx->ct[i] = 1;
      ti->cols |= (uint64_t)1 << i;
    }
    if (!box_empty(bx, c->s->n)) out->n++;
  }
  return 1;
}

static int in_list(ctx *c, const plan_expr *e, kboxes *out, tinfo *ti) {
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
    if (boxes_alloc(c, out, e->n_args - 1)) return -1;
    for (uint32_t t = 1; t < e->n_args; t++) {
      kbox *bx = &out->v[out->n];
      if (box_init(c, bx)) return -1;
      for (uint32_t k = 0; k < n; k++) {
        int i = key_col_of(c, lhs->args[k]);
        if (i < 0 || i >= 64) continue;
        const_of(c, e->args[t]->args[k], &v);
        kset *s = NULL;
        int rc = cmp_set(c, i, SQL_OP_EQ, &v, &s);
        if (rc) return rc > 0 ? 0 : -1;
        kset *m = set_intersect(c, &bx->cols[i], s);
        if (!m) return -1;
        bx->cols[i] = *m;
        bx->ct[i] = 1;
      }
      if (!box_empty(bx, c->s->n)) out->n++;
    }
    return 1;
  }
  int i = key_col_of(c, lhs);
  if (i < 0) return 0;
  kset *acc = set_new(c, e->n_args);
  if (!acc) return -1;
  for (uint32_t t = 1; t < e->n_args; t++) {
    if (!const_of(c, e->args[t], &v)) return 0;
    kset *s = NULL;
    int rc = cmp_set(c, i, SQL_OP_EQ, &v, &s);
    if (rc) return rc > 0 ? 0 : -1;
    if (s->all) return 0;
    for (uint32_t k = 0; k < s->n; k++) acc->v[acc->n++] = s->v[k];
  }
  set_normalize(acc);
  return single(c, i, 0, acc, out, ti);
}

/* LIKE 'prefix...' on a CHAR/VARCHAR key column. */
static int like_term(ctx *c, const plan_expr *e, kboxes *out, tinfo *ti) {
  int i = key_col_of(c, e->args[0]);
  cat_value pat, esc;
  if (i < 0 || e->ilike || !const_of(c, e->args[1], &pat)) return 0;
  int tid = c->s->cols[i].type.id;
  if (tid != CAT_T_VARCHAR && tid != CAT_T_CHAR) return 0;
  kset *none = set_new(c, 0);
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
  uint8_t *pre = amalloc(&c->ar, n + 1);
  if (!pre) return fail(c, EXEC_NOMEM, "out of memory deriving key ranges");
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
    kset *s = NULL;
    int rc = cmp_set(c, i, SQL_OP_EQ, &x, &s);
    return single(c, i, rc, s, out, ti);
  }
  if (pn == 0 || (is_char && pre[pn - 1] == ' ')) return 0;
  size_t pos = 0;
  cat_error err;
  int rc = cat_key_encode_string_prefix(&c->asc[i], pre, pn, c->buf, CAT_KEY_MAX, &pos, &err);
  if (rc == CAT_ERR_TOOBIG) return fail(c, EXEC_TOOBIG, "LIKE prefix longer than the largest key");
  if (rc) return 0;
  kset *s = set_new(c, 1);
  if (!s) return -1;
  cat_value pv = cat_v_str(CAT_T_VARCHAR, pre, pn);
  kpos lo = {K_BEFORE, false, copy_bytes(c, c->buf, pos), (uint32_t)pos,
             literal_text(c, &pv, true)};
  if (!lo.b || !lo.text) return -1;
  s->v[0].lo = lo;
  s->v[0].hi = lo;
  s->v[0].hi.kind = K_AFTER;
  s->n = 1;
  int r = single(c, i, 0, s, out, ti);
  ti->exact = r == 1 && !is_char && wild == '%' && k == n - 1;
  return r;
}

/* Boxes for term e: 1 extracted (*out, *ti), 0 not extractable, -1 error (c->rc). */
static int term_boxes(ctx *c, const plan_expr *e, kboxes *out, tinfo *ti) {
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
      if (boxes_alloc(c, out, 1) || box_init(c, &out->v[0])) return -1;
      out->n = 1;
      return 1;
    case PX_BINARY: {
      const plan_expr *l = e->args[0], *r = e->args[1];
      if (e->op == SQL_OP_AND || e->op == SQL_OP_OR) {
        kboxes a, b;
        tinfo ta, tb;
        int ra = term_boxes(c, l, &a, &ta);
        if (ra < 0) return -1;
        int rb = term_boxes(c, r, &b, &tb);
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
        int rc = boxes_and(c, &a, &b, out);
        if (rc < 0) return -1;
        if (rc > 0) { *out = a; *ti = ta; ti->exact = false; return 1; }
        ti->exact = ta.exact && tb.exact;
        ti->cols = ta.cols | tb.cols;
        return 1;
      }
      if (!is_cmp(e->op)) return 0;
      if (l->kind == PX_ROW) return rvc_compare(c, l, r, e->op, out, ti);
      int op = e->op, i = key_col_of(c, l);
      if (i < 0) {
        i = key_col_of(c, r);
        r = l;
        op = commute(op);
      }
      if (i < 0 || !const_of(c, r, &v)) return 0;
      kset *s = NULL;
      int rc = cmp_set(c, i, op, &v, &s);
      return single(c, i, rc, s, out, ti);
    }
    case PX_IN:
      if (e->negated || e->n_args < 2) return 0;
      return in_list(c, e, out, ti);
    case PX_BETWEEN: {
      int i = key_col_of(c, e->args[0]);
      cat_value lo, hi;
      if (e->negated || i < 0 || !const_of(c, e->args[1], &lo) || !const_of(c, e->args[2], &hi))
        return 0;
      kset *a = NULL, *b = NULL;
      int rc = cmp_set(c, i, SQL_OP_GE, &lo, &a);
      if (rc) return rc > 0 ? 0 : -1;
      rc = cmp_set(c, i, SQL_OP_LE, &hi, &b);
      if (rc) return rc > 0 ? 0 : -1;
      kset *s = set_intersect(c, a, b);
      return single(c, i, s ? 0 : -1, s, out, ti);
    }
    case PX_LIKE:
      if (e->negated || e->n_args < 2) return 0;
      return like_term(c, e, out, ti);
    case PX_ISNULL: {
      int i = key_col_of(c, e->args[0]);
      if (e->negated || i < 0) return 0;
      kset *s = set_new(c, 1);
      if (!s) return -1;
      if (c->asc[i].nullable) {
        cat_value nv = cat_v_null(c->asc[i].type);
        int rc = value_pos(c, i, &nv, K_BEFORE, &s->v[0].lo);
        if (rc) return rc > 0 ? 0 : -1;
        s->v[0].hi = s->v[0].lo;
        s->v[0].hi.kind = K_AFTER;
        s->n = 1;
      }
      return single(c, i, 0, s, out, ti);
    }
    default: return 0;
  }
}

/* ---- Expansion into key ranges -------------------------------------------------------- */
typedef struct xr {
  uint8_t *start;    /* inclusive start (arena), when has_start */
  size_t slen;       /* its length */
  bool has_start;    /* false: from the first key */
  uint8_t *end;      /* exclusive end (arena), when has_end */
  size_t elen;       /* its length */
  bool has_end;      /* false: to the last key */
  const char *stext; /* EXPLAIN text of the start tuple (a point: the whole key) */
  const char *etext; /* EXPLAIN text of the end tuple */
  bool pinned;       /* every constrained column pinned to one value (IN lists stay apart) */
} xr;

typedef struct xrs {
  xr *v;          /* ranges (malloc) */
  uint32_t n, cap; /* count, capacity */
} xrs;

static uint64_t sat_mul(uint64_t a, uint64_t b) {
  if (a && b > UINT64_MAX / a) return UINT64_MAX;
  return a * b;
}

/* Columns of b the expansion captures (limited to m), the range column (-1 if none) and
** the number of ranges it expands to. */
static int box_captured(const kbox *b, int n, int m, int *range_col, uint64_t *count) {
  uint64_t cnt = 1;
  int i;
  *range_col = -1;
  for (i = 0; i < m && i < n; i++) {
    const kset *s = &b->cols[i];
    if (s->all) break;
    cnt = sat_mul(cnt, s->n);
    if (!set_all_points(s)) {
      *range_col = i;
      i++;
      break;
    }
  }
  *count = cnt;
  return i;
}

static uint8_t *inverted(ctx *c, const kpos *p) {
  uint8_t *r = amalloc(&c->ar, p->len ? p->len : 1);
  if (!r) return fail(c, EXEC_NOMEM, "out of memory deriving key ranges"), NULL;
  for (uint32_t i = 0; i < p->len; i++) r[i] = (uint8_t)~p->b[i];
  return r;
}

/* Key-space bounds of column interval v (DESC: inverted bytes, bounds swapped). */
static int map_iv(ctx *c, const kiv *v, bool desc, kpos *lo, kpos *hi) {
  if (!desc) {
    *lo = v->lo;
    *hi = v->hi;
    return 0;
  }
  *lo = v->hi;
  *hi = v->lo;
  if (lo->kind == K_POS_INF) lo->kind = K_NEG_INF;
  else {
    lo->kind = lo->kind == K_BEFORE ? K_AFTER : K_BEFORE;
    if (!(lo->b = inverted(c, &v->hi))) return -1;
  }
  if (hi->kind == K_NEG_INF) hi->kind = K_POS_INF;
  else {
    hi->kind = hi->kind == K_BEFORE ? K_AFTER : K_BEFORE;
    if (!(hi->b = inverted(c, &v->lo))) return -1;
  }
  return 0;
}

/* P + b into arena; NULL on error. */
static uint8_t *join(ctx *c, const uint8_t *p, size_t pl, const uint8_t *b, size_t bl, size_t extra) {
  if (pl + bl > CAT_KEY_MAX) return fail(c, EXEC_TOOBIG, "key bound longer than the largest key"), NULL;
  uint8_t *r = amalloc(&c->ar, pl + bl + extra + 1);
  if (!r) return fail(c, EXEC_NOMEM, "out of memory deriving key ranges"), NULL;
  if (pl) memcpy(r, p, pl);
  if (bl) memcpy(r + pl, b, bl);
  return r;
}

/* The key after every key starting with k[0..n) into *out; false if none. */
static bool after_prefix(ctx *c, const uint8_t *k, size_t n, uint8_t **out, size_t *olen) {
  if (n == 0) return false;
  uint8_t *r = amalloc(&c->ar, n);
  if (!r) { fail(c, EXEC_NOMEM, "out of memory deriving key ranges"); return false; }
  if (!cat_key_prefix_end(k, n, r, olen)) return false;
  *out = r;
  return true;
}

static int xrs_push(ctx *c, xrs *r, const xr *x) {
  if (r->n == r->cap) {
    uint32_t nc = r->cap ? r->cap * 2 : 16;
    xr *nv = realloc(r->v, nc * sizeof *nv);
    if (!nv) return fail(c, EXEC_NOMEM, "out of memory deriving key ranges");
    r->v = nv;
    r->cap = nc;
  }
  r->v[r->n++] = *x;
  return 0;
}

/* Tuple text "[a, b, X]" (mark: ']' or ')') into the arena. */
static const char *tuple_text(ctx *c, const char *const *pts, int np, const char *last, char mark) {
  char buf[1024];
  size_t o = 0;
  buf[o++] = '[';
  for (int i = 0; i < np + (last != NULL); i++) {
    const char *t = i < np ? pts[i] : last;
    int w = snprintf(buf + o, sizeof buf - o, "%s%s", i ? ", " : "", t);
    if (w < 0 || (size_t)w >= sizeof buf - o) { o = sizeof buf - 8; break; }
    o += (size_t)w;
  }
  buf[o++] = mark;
  buf[o] = 0;
  char *r = amalloc(&c->ar, o + 1);
  if (!r) return fail(c, EXEC_NOMEM, "out of memory deriving key ranges"), NULL;
  memcpy(r, buf, o + 1);
  return r;
}

static const char *lo_text(const kpos *p, char *mark) {
  if (p->kind == K_NEG_INF) { *mark = ']'; return "*"; }
  *mark = p->kind == K_BEFORE ? ']' : ')';
  return p->text;
}
static const char *hi_text(const kpos *p, char *mark) {
  if (p->kind == K_POS_INF) { *mark = ']'; return "*"; }
  *mark = p->kind == K_AFTER ? ']' : ')';
  return p->text;
}

/* Expand box b over its first `capn` columns (range column rc or -1) into r. */
static int expand_box(ctx *c, const kbox *b, int capn, int rcol, xrs *r) {
  int n = c->s->n, npts = rcol >= 0 ? rcol : capn;
  uint32_t idx[64] = {0};
  const char *pts[64];
  for (;;) {
    /* prefix of points */
    size_t pl = 0;
    for (int i = 0; i < npts; i++) {
      const kpos *p = &b->cols[i].v[idx[i]].lo;
      if (pl + p->len > CAT_KEY_MAX) return fail(c, EXEC_TOOBIG, "key bound longer than the largest key");
      for (uint32_t k = 0; k < p->len; k++) c->buf[pl + k] = c->s->cols[i].desc ? (uint8_t)~p->b[k] : p->b[k];
      pl += p->len;
      pts[i] = p->text;
    }
    const uint8_t *P = copy_bytes(c, c->buf, pl);
    if (!P) return -1;
    uint32_t nr = rcol >= 0 ? b->cols[rcol].n : 1;
    for (uint32_t k = 0; k < nr; k++) {
      xr x;
      memset(&x, 0, sizeof x);
      if (rcol < 0) {
        x.pinned = true;
        x.has_start = pl > 0;
        x.start = (uint8_t *)P;
        x.slen = pl;
        if (capn == n) { /* one full key: [P, P+00) */
          x.end = join(c, P, pl, NULL, 0, 1);
          if (!x.end) return -1;
          x.elen = cat_key_next(P, pl, x.end);
          x.has_end = true;
          x.stext = x.etext = tuple_text(c, pts, npts, NULL, ']');
        } else {
          x.has_end = after_prefix(c, P, pl, &x.end, &x.elen);
          x.stext = x.etext = tuple_text(c, pts, npts, "*", ']');
        }
        if (c->rc || !x.stext) return -1;
        if (xrs_push(c, r, &x)) return -1;
        continue;
      }
      kpos lo, hi;
      x.pinned = iv_is_point(&b->cols[rcol].v[k]);
      if (map_iv(c, &b->cols[rcol].v[k], c->s->cols[rcol].desc, &lo, &hi)) return -1;
      char m1, m2;
      const char *t1 = lo_text(&lo, &m1), *t2 = hi_text(&hi, &m2);
      x.stext = tuple_text(c, pts, npts, t1, m1);
      x.etext = tuple_text(c, pts, npts, t2, m2);
      if (!x.stext || !x.etext) return -1;
      bool empty = false;
      if (lo.kind == K_NEG_INF) {
        x.has_start = pl > 0;
        x.start = (uint8_t *)P;
        x.slen = pl;
      } else {
        uint8_t *k0 = join(c, P, pl, lo.b, lo.len, 0);
        if (!k0) return -1;
        x.has_start = true;
        if (lo.kind == K_BEFORE) { x.start = k0; x.slen = pl + lo.len; }
        else if (!after_prefix(c, k0, pl + lo.len, &x.start, &x.slen)) empty = true;
      }
      if (hi.kind == K_POS_INF) {
        x.has_end = after_prefix(c, P, pl, &x.end, &x.elen);
      } else {
        uint8_t *k1 = join(c, P, pl, hi.b, hi.len, 0);
        if (!k1) return -1;
        if (hi.kind == K_BEFORE) { x.end = k1; x.elen = pl + hi.len; x.has_end = true; }
        else x.has_end = after_prefix(c, k1, pl + hi.len, &x.end, &x.elen);
      }
      if (c->rc) return -1;
      if (!empty && x.has_start && x.has_end && cat_vc_compare(x.start, x.slen, x.end, x.elen) >= 0)
        empty = true;
      if (!empty && xrs_push(c, r, &x)) return -1;
    }
    /* next combination of points (odometer, last column fastest) */
    int i = npts - 1;
    while (i >= 0 && ++idx[i] == b->cols[i].n) idx[i--] = 0;
    if (i < 0) return 0;
  }
}

static int xr_cmp(const void *a, const void *b) {
  const xr *x = a, *y = b;
  if (!x->has_start || !y->has_start) return (int)x->has_start - (int)y->has_start;
  return cat_vc_compare(x->start, x->slen, y->start, y->slen);
}

static void merge_ranges(xrs *r) {
  if (r->n < 2) return;
  qsort(r->v, r->n, sizeof(xr), xr_cmp);
  uint32_t o = 0;
  for (uint32_t i = 1; i < r->n; i++) {
    xr *cur = &r->v[o], *nx = &r->v[i];
    int d = !cur->has_end || !nx->has_start ? -1
            : cat_vc_compare(nx->start, nx->slen, cur->end, cur->elen);
    bool overlap = d < 0 || (d == 0 && !(cur->pinned && nx->pinned));
    if (!overlap) { r->v[++o] = *nx; continue; }
    if (!cur->has_end) continue;
    if (!nx->has_end || cat_vc_compare(nx->end, nx->elen, cur->end, cur->elen) > 0) {
      bool same = cur->stext == cur->etext && nx->stext == nx->etext &&
                  strcmp(cur->stext, nx->stext) == 0;
      cur->has_end = nx->has_end;
      cur->end = nx->end;
      cur->elen = nx->elen;
      if (!same) {
        cur->etext = nx->etext;
        cur->pinned = false;
      }
    }
  }
  r->n = o + 1;
}

static bool xr_is_point(const xr *x) {
  return x->has_start && x->has_end && x->elen == x->slen + 1 && x->end[x->slen] == 0 &&
         memcmp(x->start, x->end, x->slen) == 0;
}

static char *dup_bytes(const uint8_t *p, size_t n) {
  char *r = malloc(n ? n : 1);
  if (r && n) memcpy(r, p, n);
  return r;
}

/* Fill out from the merged ranges. */
static int finish(ctx *c, xrs *r, plan_scan_ranges *out) {
  if (r->n == 1 && !r->v[0].has_start && !r->v[0].has_end) {
    out->kind = PLAN_SCAN_FULL;
    out->explain = dup_bytes((const uint8_t *)"", 1);
    return out->explain ? 0 : fail(c, EXEC_NOMEM, "out of memory deriving key ranges");
  }
  if (r->n == 0) {
    out->kind = PLAN_SCAN_NOTHING;
    out->explain = dup_bytes((const uint8_t *)"", 1);
    return out->explain ? 0 : fail(c, EXEC_NOMEM, "out of memory deriving key ranges");
  }
  out->ranges = calloc(r->n, sizeof(plan_key_range));
  if (!out->ranges) return fail(c, EXEC_NOMEM, "out of memory deriving key ranges");
  out->n_ranges = r->n;
  bool all_points = true;
  size_t tcap = 256, tl = 0;
  char *text = malloc(tcap);
  if (!text) return fail(c, EXEC_NOMEM, "out of memory deriving key ranges");
  text[0] = 0;
  for (uint32_t i = 0; i < r->n; i++) {
    xr *x = &r->v[i];
    plan_key_range *k = &out->ranges[i];
    bool pt = xr_is_point(x);
    all_points = all_points && pt;
    if (x->has_start) {
      if (!(k->start = (uint8_t *)dup_bytes(x->start, x->slen))) goto nomem;
      k->start_len = x->slen;
    }
    k->start_incl = true;
    if (pt) {
      if (!(k->end = (uint8_t *)dup_bytes(x->start, x->slen))) goto nomem;
      k->end_len = x->slen;
      k->end_incl = true;
    } else if (x->has_end) {
      if (!(k->end = (uint8_t *)dup_bytes(x->end, x->elen))) goto nomem;
      k->end_len = x->elen;
    }
    if (i < EXPLAIN_RANGES) {
      char one[2200];
      int w = pt ? snprintf(one, sizeof one, "%s%s", i ? ", " : "", x->stext)
                 : snprintf(one, sizeof one, "%s%s .. %s", i ? ", " : "", x->stext, x->etext);
      if (w < 0) w = 0;
      if ((size_t)w >= sizeof one) w = (int)sizeof one - 1;
      if (tl + (size_t)w + 64 > tcap) {
        tcap = (tl + (size_t)w + 64) * 2;
        char *nt = realloc(text, tcap);
        if (!nt) goto nomem;
        text = nt;
      }
      memcpy(text + tl, one, (size_t)w);
      tl += (size_t)w;
      text[tl] = 0;
    } else if (i == EXPLAIN_RANGES) {
      tl += (size_t)snprintf(text + tl, tcap - tl, ", ... (%u more)", r->n - EXPLAIN_RANGES);
    }
  }
  out->explain = text;
  out->kind = all_points ? PLAN_SCAN_POINT : r->n == 1 ? PLAN_SCAN_RANGE : PLAN_SCAN_SKIP;
  return 0;
nomem:
  free(text);
  return fail(c, EXEC_NOMEM, "out of memory deriving key ranges");
}

/* Hull of column 0 over all boxes (one interval), or ALL. */
static int hull_box(ctx *c, const kboxes *bs, kbox *h) {
  if (box_init(c, h)) return -1;
  kpos lo = {K_POS_INF, false, NULL, 0, NULL}, hi = {K_NEG_INF, false, NULL, 0, NULL};
  for (uint32_t i = 0; i < bs->n; i++) {
    const kset *s = &bs->v[i].cols[0];
    if (s->all) return 0;
    if (!s->n) continue;
    if (pos_cmp(&s->v[0].lo, &lo) < 0) lo = s->v[0].lo;
    if (pos_cmp(&s->v[s->n - 1].hi, &hi) > 0) hi = s->v[s->n - 1].hi;
  }
  kset *s = set_new(c, 1);
  if (!s) return -1;
  s->v[0].lo = lo;
  s->v[0].hi = hi;
  s->n = pos_cmp(&lo, &hi) < 0;
  h->cols[0] = *s;
  return 0;
}

static int push_term(const plan_expr ***v, uint32_t *n, const plan_expr *e, uint32_t cap) {
  if (!*v) {
    *v = malloc((cap ? cap : 1) * sizeof **v);
    if (!*v) return -1;
  }
  (*v)[(*n)++] = e;
  return 0;
}

static void derive(ctx *c, const plan_expr *const *terms, uint32_t nt, plan_scan_ranges *out) {
  int n = c->s->n;
  kboxes acc;
  bool extracted[MAX_TERMS] = {false};
  tinfo ti[MAX_TERMS];
  xrs r = {NULL, 0, 0};
  if (n > 64) n = 64; /* wider keys: only the first 64 columns are ranged */
  if (boxes_alloc(c, &acc, 1) || box_init(c, &acc.v[0])) return;
  acc.n = 1;
  for (uint32_t j = 0; j < nt && j < MAX_TERMS; j++) {
    kboxes tb, nb;
    int rc = term_boxes(c, terms[j], &tb, &ti[j]);
    if (rc < 0) goto done;
    if (rc == 0) continue;
    for (uint32_t k = 0; k < tb.n; k++)
      for (int i = 0; i < n; i++)
        if (tb.v[k].ct[i]) tb.v[k].ct[i] = (uint64_t)1 << j;
    rc = boxes_and(c, &acc, &tb, &nb);
    if (rc < 0) goto done;
    if (rc > 0) continue;
    acc = nb;
    extracted[j] = true;
  }
  /* expansion, capped */
  int m = n, rcol;
  bool hull = false;
  uint64_t cnt;
  for (;; m--) {
    uint64_t total = 0;
    for (uint32_t i = 0; i < acc.n; i++) {
      box_captured(&acc.v[i], n, m, &rcol, &cnt);
      total = total + cnt < total ? UINT64_MAX : total + cnt;
    }
    if (total <= PLAN_MAX_SKIP_RANGES) break;
    if (m == 1) { hull = true; break; }
  }
  int min_prefix = n, max_cap = 0;
  if (hull) {
    kbox h;
    if (hull_box(c, &acc, &h)) goto done;
    int capn = box_captured(&h, n, 1, &rcol, &cnt);
    if (expand_box(c, &h, capn, rcol, &r)) goto done;
    min_prefix = 0;
    max_cap = capn;
  } else {
    for (uint32_t i = 0; i < acc.n; i++) {
      int capn = box_captured(&acc.v[i], n, m, &rcol, &cnt);
      if (expand_box(c, &acc.v[i], capn, rcol, &r)) goto done;
      int pre = rcol >= 0 ? rcol : capn;
      if (pre < min_prefix) min_prefix = pre;
      if (capn > max_cap) max_cap = capn;
      for (int k = capn; k < n; k++)
        for (uint32_t j = 0; j < nt && j < MAX_TERMS; j++)
          if (acc.v[i].ct[k] >> j & 1) ti[j].exact = false;
    }
  }
  merge_ranges(&r);
  if (finish(c, &r, out)) goto done;
  if (out->kind != PLAN_SCAN_NOTHING && out->kind != PLAN_SCAN_FULL) {
    out->prefix_cols = min_prefix == n && acc.n == 0 ? 0 : min_prefix;
    out->bound_cols = max_cap;
  }
  for (uint32_t j = 0; j < nt; j++) {
    bool key = j < MAX_TERMS && extracted[j] &&
               (out->kind == PLAN_SCAN_NOTHING || (ti[j].exact && (!hull || ti[j].cols == 0)));
    int rc = key ? push_term(&out->key_terms, &out->n_key_terms, terms[j], nt)
                 : push_term(&out->residual, &out->n_residual, terms[j], nt);
    if (rc) { fail(c, EXEC_NOMEM, "out of memory deriving key ranges"); goto done; }
  }
done:
  free(r.v);
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

int plan_key_ranges(const plan_key_schema *schema, const plan_expr *where,
                    const cat_value *params, int n_params, plan_scan_ranges *out, char *msg,
                    size_t cap) {
  memset(out, 0, sizeof *out);
  if (cap) msg[0] = 0;
  ctx c;
  memset(&c, 0, sizeof c);
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
  c.asc = amalloc(&c.ar, (size_t)(schema->n ? schema->n : 1) * sizeof(cat_key_col));
  if (!c.buf || !c.asc) {
    fail(&c, EXEC_NOMEM, "out of memory deriving key ranges");
  } else {
    for (int i = 0; i < schema->n; i++) {
      c.asc[i] = schema->cols[i];
      c.asc[i].desc = false;
      if (cat_type_is_string(c.asc[i].type.id) || c.asc[i].type.id == CAT_T_VARBINARY)
        c.asc[i].type.length = 0;
      /* CHAR keys encode like VARCHAR (values are stored trimmed); see plan_fold_compare */
      if (c.asc[i].type.id == CAT_T_CHAR) c.asc[i].type.id = CAT_T_VARCHAR;
    }
    derive(&c, terms, nt, out);
  }
  rc = c.rc;
  if (rc) plan_scan_ranges_free(out);
  free(terms);
  free(c.buf);
  arena_free(&c.ar);
  return rc;
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
                                      "FULL SCAN"};
  return kind >= 0 && kind <= PLAN_SCAN_FULL ? names[kind] : "?";
}
