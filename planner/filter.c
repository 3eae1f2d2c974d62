/*
** planner/filter.c: the pushed-down typed filter (planner/filter.h): building it from bound
** WHERE terms, evaluating it on a kv_row's encoded bytes, and printing it for EXPLAIN.
**
** Representation (a value: flat arrays and offsets, no pointers into the plan):
**   nodes[]  the expression tree; AND/OR nodes are binary (a = left, b = right), NOT has one
**            child (a); leaves compare one column with encoded constants;
**   consts[] encoded constants (offset and length into bytes[]) with their EXPLAIN literal;
**   toks[]   compiled LIKE patterns: literal runs, '_' (one UTF-8 character) and '%';
**   roots[]  the pushed terms, ANDed.
** Constants of key columns are encoded with the column's ASC key encoding (indicator byte
** included when nullable); a DESC column's bytes are compared inverted, so every comparison
** reads in SQL order. Cell constants use catalog/valcodec.h. Evaluation is SQL's three-valued
** logic (F, T, U); a row passes when the AND of roots is T.
** Not here: bound folding (planner/filter_fold.c), key ranges (planner/keyrange.c).
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalog/valcodec.h"
#include "catalog/value.h"
#include "catalog/status.h"
#include "planner/filter.h"
#include "sql/ast.h"

enum { F_AND = 1, F_OR, F_NOT, F_CMP, F_IN, F_ISNULL, F_LIKE, F_CONST };
enum { T_F = 0, T_T = 1, T_U = 2 };             /* truth values */
enum { NN_NONE = 0, NN_TRUE = 1, NN_FALSE = 2 }; /* folded comparisons */
enum { TK_LIT = 1, TK_ONE, TK_ANY };             /* LIKE tokens */
#define MAX_KEY_COLS 64

typedef struct fnode {
  uint8_t kind;    /* F_* */
  uint8_t op;      /* F_CMP: SQL_OP_*; F_CONST: truth value */
  uint8_t nn;      /* F_CMP: NN_* (folded to TRUE / FALSE for every non-NULL value) */
  bool negated;    /* F_IN, F_ISNULL, F_LIKE: NOT form */
  bool has_null;   /* F_IN: the list held a NULL */
  int32_t col;     /* leaves: column slot */
  uint32_t a, b;   /* AND/OR: children; NOT: a; F_CMP: const a; F_IN: consts [a, a+b);
                      F_LIKE: tokens [a, a+b) */
  uint32_t text;   /* F_LIKE: offset of the pattern's literal text in bytes[] */
} fnode;

typedef struct fconst {
  uint32_t off, len; /* encoded bytes in bytes[] */
  uint32_t text;     /* offset of the NUL-terminated literal in bytes[] */
} fconst;

typedef struct ftok {
  uint8_t kind;      /* TK_* */
  uint32_t off, len; /* TK_LIT: bytes in bytes[] */
} ftok;

struct plan_filter {
  fnode *nodes; uint32_t n_nodes, c_nodes;     /* tree nodes */
  fconst *consts; uint32_t n_consts, c_consts; /* constants */
  ftok *toks; uint32_t n_toks, c_toks;         /* LIKE tokens */
  uint8_t *bytes; uint32_t n_bytes, c_bytes;   /* encodings and texts */
  uint32_t *roots; uint32_t n_roots;           /* pushed terms (ANDed) */
  plan_filter_col *cols; int n_cols;           /* slot layout (copied) */
  cat_key_col key_cols[MAX_KEY_COLS];          /* row-key columns */
  int n_key;                                   /* count (<= MAX_KEY_COLS) */
  int key_skip;                                /* salt bytes before the key columns */
};

/* ---- Building ----------------------------------------------------------------------- */
typedef struct bctx {
  plan_filter *f;          /* filter being built */
  const cat_value *params; /* bound parameters */
  int n_params;            /* count */
  bool nomem;              /* an allocation failed */
  int subquery;            /* n > 0: the value being added is scalar subquery n's, which
                              EXPLAIN names "(SUBQUERY n)" as the other plan lines do */
} bctx;

static bool grow(void **p, uint32_t *cap, uint32_t need, size_t elem) {
  if (need <= *cap) return true;
  uint32_t nc = *cap ? *cap : 16;
  while (nc < need) nc *= 2;
  void *np = realloc(*p, (size_t)nc * elem);
  if (!np) return false;
  *p = np;
  *cap = nc;
  return true;
}

static int64_t add_bytes(bctx *c, const void *p, size_t n) {
  plan_filter *f = c->f;
  if (n > UINT32_MAX / 2 || !grow((void **)&f->bytes, &f->c_bytes, f->n_bytes + (uint32_t)n + 1, 1)) {
    c->nomem = true;
    return -1;
  }
  uint32_t off = f->n_bytes;
  if (n) memcpy(f->bytes + off, p, n);
  f->n_bytes += (uint32_t)n;
  return off;
}

static int64_t add_text(bctx *c, const char *s) {
  int64_t off = add_bytes(c, s, strlen(s) + 1);
  return off;
}

static int64_t add_node(bctx *c, const fnode *n) {
  plan_filter *f = c->f;
  if (!grow((void **)&f->nodes, &f->c_nodes, f->n_nodes + 1, sizeof(fnode))) {
    c->nomem = true;
    return -1;
  }
  f->nodes[f->n_nodes] = *n;
  return f->n_nodes++;
}

static bool const_of(const bctx *c, const plan_expr *e, cat_value *out) {
  if (!e) return false;
  if (e->kind == PX_CONST) { *out = e->value; return true; }
  if (e->kind == PX_PARAM && c->params && e->param >= 1 && e->param <= c->n_params) {
    *out = c->params[e->param - 1];
    return true;
  }
  return false;
}

/* The slot of a column reference the filter can read, or -1. */
static int slot_of(const bctx *c, const plan_expr *e) {
  if (!e || e->kind != PX_COLUMN || e->column < 0 || e->column >= c->f->n_cols) return -1;
  const plan_filter_col *pc = &c->f->cols[e->column];
  if (pc->key_pos >= c->f->n_key) return -1;
  if (pc->key_pos < 0 && (pc->qual_len == 0 || pc->qual_len > 4)) return -1;
  return e->column;
}

/* Encode folded value x for slot s as a constant; returns its index or -1 (c->nomem, or
** not encodable: *bad). */
static int64_t add_const(bctx *c, int s, const cat_value *x, bool *bad) {
  const plan_filter_col *pc = &c->f->cols[s];
  if (x->type.id == CAT_T_ARRAY || pc->type.id == CAT_T_ARRAY) {
    /* array encodings are not order-preserving (catalog/array.h): compared after decoding */
    *bad = true;
    return -1;
  }
  uint8_t stack[CAT_FIXED_ENC_MAX + 8];
  uint8_t *buf = stack;
  size_t cap = sizeof stack, len = 0;
  bool is_str = cat_type_is_string(x->type.id) || x->type.id == CAT_T_VARBINARY;
  if (is_str) {
    cap = (size_t)x->u.s.len * 2 + 8;
    buf = malloc(cap);
    if (!buf) { c->nomem = true; return -1; }
  }
  cat_error err;
  int rc;
  if (pc->key_pos >= 0) {
    cat_key_col kc = c->f->key_cols[pc->key_pos];
    kc.desc = false;
    kc.type.length = 0;
    if (kc.type.id == CAT_T_CHAR) kc.type.id = CAT_T_VARCHAR; /* see plan_fold_compare */
    rc = cat_key_encode_col(&kc, x, buf, cap, &len, &err);
  } else {
    rc = cat_vc_encode(x, buf, cap, &len, &err);
  }
  int64_t idx = -1;
  if (rc) {
    *bad = true;
  } else {
    char lit[200];
    size_t ln = c->subquery > 0 ? (size_t)snprintf(lit, sizeof lit, "(SUBQUERY %d)", c->subquery)
                                : plan_value_literal(x, lit, sizeof lit);
    if (ln >= sizeof lit) strcpy(lit + sizeof lit - 5, "...'");
    int64_t off = add_bytes(c, buf, len), toff = add_text(c, lit);
    plan_filter *f = c->f;
    if (off >= 0 && toff >= 0 && grow((void **)&f->consts, &f->c_consts, f->n_consts + 1, sizeof(fconst))) {
      fconst k = {(uint32_t)off, (uint32_t)len, (uint32_t)toff};
      f->consts[f->n_consts] = k;
      idx = f->n_consts++;
    } else {
      c->nomem = true;
    }
  }
  if (buf != stack) free(buf);
  return idx;
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

static int64_t const_node(bctx *c, int truth) {
  fnode n;
  memset(&n, 0, sizeof n);
  n.kind = F_CONST;
  n.op = (uint8_t)truth;
  return add_node(c, &n);
}

/* Leaf "slot op value" after folding. Returns the node, -1 on no memory, -2 not pushable. */
/* The scalar subquery whose value e is (planner/explain.c prints it "(SUBQUERY n)"), or 0. */
static int subquery_of(const plan_expr *e) {
  return e && e->kind == PX_PARAM && e->func > 0 ? e->func : 0;
}

/* src is the expression v came from: a scalar subquery's value keeps its name in EXPLAIN
** when the comparison is kept as written (its operator unchanged by the folding). */
static int64_t cmp_node(bctx *c, int s, int op, const cat_value *v, const plan_expr *src) {
  int fop;
  cat_value x;
  uint8_t buf[64];
  int fr = plan_fold_compare(&c->f->cols[s].type, op, v, &fop, &x, buf, sizeof buf);
  if (fr == PLAN_FOLD_NONE) return -2;
  if (fr == PLAN_FOLD_NULL) return const_node(c, T_U);
  fnode n;
  memset(&n, 0, sizeof n);
  n.kind = F_CMP;
  n.col = s;
  n.op = (uint8_t)fop;
  if (fr == PLAN_FOLD_TRUE) n.nn = NN_TRUE;
  else if (fr == PLAN_FOLD_FALSE) n.nn = NN_FALSE;
  else {
    bool bad = false;
    c->subquery = fop == op ? subquery_of(src) : 0;
    int64_t k = add_const(c, s, &x, &bad);
    c->subquery = 0;
    if (bad) return -2;
    if (k < 0) return -1;
    n.a = (uint32_t)k;
  }
  return add_node(c, &n);
}

static int64_t bool_node(bctx *c, int kind, int64_t a, int64_t b) {
  if (a < 0) return a;
  if (b < 0 && kind != F_NOT) return b;
  fnode n;
  memset(&n, 0, sizeof n);
  n.kind = (uint8_t)kind;
  n.a = (uint32_t)a;
  n.b = kind == F_NOT ? 0 : (uint32_t)b;
  return add_node(c, &n);
}

static int64_t in_node(bctx *c, const plan_expr *e) {
  int s = slot_of(c, e->args[0]);
  if (s < 0) return -2;
  cat_value v;
  for (uint32_t i = 1; i < e->n_args; i++)
    if (!const_of(c, e->args[i], &v)) return -2;
  fnode n;
  memset(&n, 0, sizeof n);
  n.kind = F_IN;
  n.col = s;
  n.negated = e->negated;
  n.a = c->f->n_consts;
  for (uint32_t i = 1; i < e->n_args; i++) {
    const_of(c, e->args[i], &v);
    int fop;
    cat_value x;
    uint8_t buf[64];
    int fr = plan_fold_compare(&c->f->cols[s].type, SQL_OP_EQ, &v, &fop, &x, buf, sizeof buf);
    if (fr == PLAN_FOLD_NONE) return -2;
    if (fr == PLAN_FOLD_NULL) { n.has_null = true; continue; }
    if (fr != PLAN_FOLD_CMP) continue; /* = folded to FALSE: never matches */
    bool bad = false;
    c->subquery = subquery_of(e->args[i]);
    int64_t k = add_const(c, s, &x, &bad);
    c->subquery = 0;
    if (bad) return -2;
    if (k < 0) return -1;
    n.b++;
  }
  return add_node(c, &n);
}

static size_t utf8_len_at(const uint8_t *p, size_t n);

/* LIKE with a constant pattern on a CHAR/VARCHAR column. */
static int64_t like_node(bctx *c, const plan_expr *e) {
  int s = slot_of(c, e->args[0]);
  cat_value pat, esc;
  if (s < 0 || e->ilike || !const_of(c, e->args[1], &pat)) return -2;
  int tid = c->f->cols[s].type.id;
  if (tid != CAT_T_VARCHAR && tid != CAT_T_CHAR) return -2;
  const uint8_t *ep = NULL;
  size_t en = 0;
  if (e->n_args > 2) {
    if (!const_of(c, e->args[2], &esc)) return -2;
    if (esc.is_null) return const_node(c, T_U);
    if (!cat_type_is_string(esc.type.id)) return -2;
    ep = esc.u.s.p;
    en = esc.u.s.len;
    if (en == 0 || cat_utf8_chars(ep, en) != 1) return -2;
  }
  if (pat.is_null) return const_node(c, T_U);
  if (!cat_type_is_string(pat.type.id)) return -2;
  fnode n;
  memset(&n, 0, sizeof n);
  n.kind = F_LIKE;
  n.col = s;
  n.negated = e->negated;
  n.a = c->f->n_toks;
  const uint8_t *p = pat.u.s.p;
  size_t pn = pat.u.s.len, k = 0;
  plan_filter *f = c->f;
  while (k < pn) {
    ftok t = {TK_LIT, 0, 0};
    if (p[k] == '%' || p[k] == '_') {
      t.kind = p[k] == '%' ? TK_ANY : TK_ONE;
      k++;
    } else {
      size_t cl;
      if (en && k + en <= pn && memcmp(p + k, ep, en) == 0) {
        k += en;
        if (k >= pn) return -2; /* pattern ends in the escape: the executor reports it */
        cl = utf8_len_at(p + k, pn - k);
      } else {
        cl = utf8_len_at(p + k, pn - k);
      }
      int64_t off = add_bytes(c, p + k, cl);
      if (off < 0) return -1;
      k += cl;
      /* extend the previous literal run */
      if (n.b && f->toks[f->n_toks - 1].kind == TK_LIT &&
          f->toks[f->n_toks - 1].off + f->toks[f->n_toks - 1].len == (uint32_t)off) {
        f->toks[f->n_toks - 1].len += (uint32_t)cl;
        continue;
      }
      t.off = (uint32_t)off;
      t.len = (uint32_t)cl;
    }
    if (t.kind == TK_ANY && n.b && f->toks[f->n_toks - 1].kind == TK_ANY) continue;
    if (!grow((void **)&f->toks, &f->c_toks, f->n_toks + 1, sizeof(ftok))) return -1;
    f->toks[f->n_toks++] = t;
    n.b++;
  }
  char lit[240];
  cat_value pv = cat_v_str(CAT_T_VARCHAR, p, pn);
  size_t ln = plan_value_literal(&pv, lit, sizeof lit);
  if (ln >= sizeof lit) strcpy(lit + sizeof lit - 5, "...'");
  if (en) {
    char el[32];
    cat_value evv = cat_v_str(CAT_T_VARCHAR, ep, en);
    plan_value_literal(&evv, el, sizeof el);
    size_t l = strlen(lit);
    snprintf(lit + l, sizeof lit - l, " ESCAPE %s", el);
  }
  int64_t toff = add_text(c, lit);
  if (toff < 0) return -1;
  n.text = (uint32_t)toff;
  return add_node(c, &n);
}

/* Compile e: node index, -1 no memory, -2 not pushable. */
static int64_t compile(bctx *c, const plan_expr *e) {
  cat_value v;
  switch (e->kind) {
    case PX_CONST:
      if (e->value.is_null) return const_node(c, T_U);
      if (e->value.type.id != CAT_T_BOOLEAN) return -2;
      return const_node(c, e->value.u.b ? T_T : T_F);
    case PX_UNARY:
      if (e->op != SQL_OP_NOT || e->n_args != 1) return -2;
      return bool_node(c, F_NOT, compile(c, e->args[0]), 0);
    case PX_BINARY: {
      if (e->n_args != 2) return -2;
      if (e->op == SQL_OP_AND || e->op == SQL_OP_OR) {
        int64_t a = compile(c, e->args[0]);
        if (a < 0) return a;
        return bool_node(c, e->op == SQL_OP_AND ? F_AND : F_OR, a, compile(c, e->args[1]));
      }
      if (e->op < SQL_OP_EQ || e->op > SQL_OP_GE) return -2;
      int op = e->op;
      int s = slot_of(c, e->args[0]);
      const plan_expr *k = e->args[1];
      if (s < 0) {
        s = slot_of(c, e->args[1]);
        k = e->args[0];
        op = commute(op);
      }
      if (s < 0 || !const_of(c, k, &v)) return -2;
      return cmp_node(c, s, op, &v, k);
    }
    case PX_IN:
      if (e->n_args < 2) return -2;
      return in_node(c, e);
    case PX_BETWEEN: {
      int s = slot_of(c, e->args[0]);
      cat_value lo, hi;
      if (s < 0 || !const_of(c, e->args[1], &lo) || !const_of(c, e->args[2], &hi)) return -2;
      int64_t a = cmp_node(c, s, SQL_OP_GE, &lo, e->args[1]);
      if (a < 0) return a;
      int64_t r = bool_node(c, F_AND, a, cmp_node(c, s, SQL_OP_LE, &hi, e->args[2]));
      return e->negated ? bool_node(c, F_NOT, r, 0) : r;
    }
    case PX_ISNULL: {
      int s = slot_of(c, e->args[0]);
      if (s < 0) return -2;
      fnode n;
      memset(&n, 0, sizeof n);
      n.kind = F_ISNULL;
      n.col = s;
      n.negated = e->negated;
      return add_node(c, &n);
    }
    case PX_LIKE:
      if (e->n_args < 2) return -2;
      return like_node(c, e);
    default: return -2;
  }
}

int plan_filter_build_schema(const plan_filter_schema *schema, const plan_expr *const *terms,
                             uint32_t n, const cat_value *params, int n_params,
                             plan_filter **out, const plan_expr ***not_pushed,
                             uint32_t *n_not_pushed, char *msg, size_t cap) {
  *out = NULL;
  *not_pushed = NULL;
  *n_not_pushed = 0;
  if (cap) msg[0] = 0;
  plan_filter *f = calloc(1, sizeof *f);
  const plan_expr **np = n ? malloc(n * sizeof *np) : NULL;
  if (!f || (n && !np)) goto nomem;
  f->n_cols = schema->n_cols;
  f->cols = malloc((size_t)(schema->n_cols ? schema->n_cols : 1) * sizeof *f->cols);
  f->roots = malloc((n ? n : 1) * sizeof *f->roots);
  if (!f->cols || !f->roots) goto nomem;
  if (schema->n_cols) memcpy(f->cols, schema->cols, (size_t)schema->n_cols * sizeof *f->cols);
  f->n_key = schema->n_key < MAX_KEY_COLS ? schema->n_key : MAX_KEY_COLS;
  if (f->n_key) memcpy(f->key_cols, schema->key_cols, (size_t)f->n_key * sizeof(cat_key_col));
  f->key_skip = schema->key_skip;
  bctx c = {f, params, n_params, false, 0};
  uint32_t nn = 0;
  for (uint32_t i = 0; i < n; i++) {
    uint32_t mark_nodes = f->n_nodes, mark_consts = f->n_consts, mark_toks = f->n_toks;
    int64_t r = compile(&c, terms[i]);
    if (c.nomem || r == -1) goto nomem;
    if (r < 0) { /* roll back what the failed term added */
      f->n_nodes = mark_nodes;
      f->n_consts = mark_consts;
      f->n_toks = mark_toks;
      np[nn++] = terms[i];
      continue;
    }
    f->roots[f->n_roots++] = (uint32_t)r;
  }
  if (f->n_roots) *out = f;
  else plan_filter_free(f);
  if (nn) {
    *not_pushed = np;
    *n_not_pushed = nn;
  } else {
    free(np);
  }
  return EXEC_OK;
nomem:
  plan_filter_free(f);
  free(np);
  if (cap) snprintf(msg, cap, "out of memory building the scan filter");
  return EXEC_NOMEM;
}

int plan_filter_build(const cat_table *t, const plan_expr *const *terms, uint32_t n,
                      const cat_value *params, int n_params, plan_filter **out,
                      const plan_expr ***not_pushed, uint32_t *n_not_pushed, char *msg,
                      size_t cap) {
  plan_filter_col *cols = malloc((size_t)(t->n_columns ? t->n_columns : 1) * sizeof *cols);
  if (!cols) {
    *out = NULL;
    *not_pushed = NULL;
    *n_not_pushed = 0;
    if (cap) snprintf(msg, cap, "out of memory building the scan filter");
    return EXEC_NOMEM;
  }
  for (int i = 0; i < t->n_columns; i++) {
    const cat_column *cc = &t->columns[i];
    memset(&cols[i], 0, sizeof cols[i]);
    cols[i].type = cc->type;
    cols[i].key_pos = cc->pk_pos;
    if (cc->pk_pos < 0) {
      cols[i].family_id = t->families[cc->family].kv_id;
      /* A dynamic column's cell may not be a value of the type the statement declares, and
         this filter, comparing encoded bytes, would drop such a row where the row decoder
         reports it (exec/rowcodec.c): its terms are left out (qual_len 0, slot_of), to be
         evaluated after decoding. */
      if (!cc->dyn_qual)
        cols[i].qual_len = (uint32_t)cat_column_qualifier(cc->id, cols[i].qual);
    }
  }
  plan_filter_schema s = {t->key_cols, t->n_pk, cols, t->n_columns, t->salt_buckets ? 1 : 0};
  int rc = plan_filter_build_schema(&s, terms, n, params, n_params, out, not_pushed,
                                    n_not_pushed, msg, cap);
  free(cols);
  return rc;
}

void plan_filter_free(plan_filter *f) {
  if (!f) return;
  free(f->nodes);
  free(f->consts);
  free(f->toks);
  free(f->bytes);
  free(f->roots);
  free(f->cols);
  free(f);
}

uint32_t plan_filter_term_count(const plan_filter *f) { return f ? f->n_roots : 0; }


/* ---- Evaluation -------------------------------------------------------------------- */
/* Bytes of one UTF-8 character at p (an invalid byte counts as one character). */
static size_t utf8_len_at(const uint8_t *p, size_t n) {
  uint8_t b = p[0];
  size_t want = b < 0x80 ? 1 : (b >> 5) == 6 ? 2 : (b >> 4) == 14 ? 3 : (b >> 3) == 30 ? 4 : 1;
  if (want > n) return 1;
  for (size_t i = 1; i < want; i++)
    if ((p[i] & 0xC0) != 0x80) return 1;
  return want;
}

static bool like_match(const plan_filter *f, const ftok *t, uint32_t nt, const uint8_t *s,
                       size_t sl) {
  size_t si = 0, star_si = 0;
  uint32_t ti = 0;
  int64_t star = -1;
  while (si < sl || ti < nt) {
    if (ti < nt) {
      const ftok *k = &t[ti];
      if (k->kind == TK_ANY) {
        star = ti++;
        star_si = si;
        continue;
      }
      if (k->kind == TK_ONE && si < sl) {
        si += utf8_len_at(s + si, sl - si);
        ti++;
        continue;
      }
      if (k->kind == TK_LIT && sl - si >= k->len && memcmp(s + si, f->bytes + k->off, k->len) == 0) {
        si += k->len;
        ti++;
        continue;
      }
    }
    if (star >= 0 && star_si < sl) {
      star_si += utf8_len_at(s + star_si, sl - star_si);
      si = star_si;
      ti = (uint32_t)star + 1;
      continue;
    }
    return false;
  }
  return true;
}

typedef struct rowctx {
  const kv_row *row;                     /* the row */
  const uint8_t *kstart[MAX_KEY_COLS + 1]; /* key column starts, found lazily */
  int kfound;                            /* columns located so far */
  bool bad;                              /* bytes that do not decode */
} rowctx;

/* Column slot s's bytes: 1 present (*p, *n, *desc), 0 NULL, -1 corrupt. */
static int col_bytes(const plan_filter *f, rowctx *rc, int s, const uint8_t **p, size_t *n,
                     bool *desc) {
  const plan_filter_col *pc = &f->cols[s];
  *desc = false;
  if (pc->key_pos >= 0) {
    const kv_row *row = rc->row;
    const uint8_t *lim = row->key + row->key_len;
    if (rc->kfound == 0) {
      if (row->key_len < (uint32_t)f->key_skip) return -1;
      rc->kstart[0] = row->key + f->key_skip; /* after a salted table's salt byte */
      rc->kfound = 1;
    }
    while (rc->kfound <= pc->key_pos + 1 && rc->kfound <= f->n_key) {
      const uint8_t *nx = cat_key_skip_col(&f->key_cols[rc->kfound - 1], rc->kstart[rc->kfound - 1], lim);
      if (!nx) return -1;
      rc->kstart[rc->kfound++] = nx;
    }
    const cat_key_col *kc = &f->key_cols[pc->key_pos];
    *p = rc->kstart[pc->key_pos];
    *n = (size_t)(rc->kstart[pc->key_pos + 1] - *p);
    *desc = kc->desc;
    if (kc->nullable && *n >= 1 && (uint8_t)(kc->desc ? ~(*p)[0] : (*p)[0]) == 0x00) return 0;
    return 1;
  }
  const kv_row *row = rc->row;
  for (uint32_t i = 0; i < row->n_cells; i++) {
    const kv_cell_view *cv = &row->cells[i];
    if (cv->family_id == pc->family_id && cv->qual_len == pc->qual_len &&
        memcmp(cv->qual, pc->qual, pc->qual_len) == 0) {
      *p = cv->value;
      *n = cv->value_len;
      int w = cat_type_fixed_width(pc->type.id);
      if (w && *n != (size_t)w) return -1;
      return 1;
    }
  }
  return 0;
}

/* Compare column bytes (inverted when desc) with an ASC-encoded constant. */
static int cmp_col(const uint8_t *p, size_t n, bool desc, const uint8_t *k, size_t kn) {
  if (!desc) return cat_vc_compare(p, n, k, kn);
  size_t m = n < kn ? n : kn;
  for (size_t i = 0; i < m; i++) {
    uint8_t a = (uint8_t)~p[i];
    if (a != k[i]) return a < k[i] ? -1 : 1;
  }
  return (n > kn) - (n < kn);
}

static int truth_not(int t) { return t == T_U ? T_U : !t; }

static int eval_node(const plan_filter *f, uint32_t ni, rowctx *rc) {
  const fnode *nd = &f->nodes[ni];
  switch (nd->kind) {
    case F_CONST: return nd->op;
    case F_NOT: return truth_not(eval_node(f, nd->a, rc));
    case F_AND: {
      int a = eval_node(f, nd->a, rc);
      if (a == T_F) return T_F;
      int b = eval_node(f, nd->b, rc);
      if (b == T_F) return T_F;
      return a == T_T && b == T_T ? T_T : T_U;
    }
    case F_OR: {
      int a = eval_node(f, nd->a, rc);
      if (a == T_T) return T_T;
      int b = eval_node(f, nd->b, rc);
      if (b == T_T) return T_T;
      return a == T_F && b == T_F ? T_F : T_U;
    }
    default: break;
  }
  const uint8_t *p = NULL;
  size_t n = 0;
  bool desc;
  int have = col_bytes(f, rc, nd->col, &p, &n, &desc);
  if (have < 0) { rc->bad = true; return T_U; }
  if (nd->kind == F_ISNULL) return (have == 0) != nd->negated ? T_T : T_F;
  if (have == 0) return T_U;
  switch (nd->kind) {
    case F_CMP: {
      if (nd->nn) return nd->nn == NN_TRUE ? T_T : T_F;
      const fconst *k = &f->consts[nd->a];
      int c = cmp_col(p, n, desc, f->bytes + k->off, k->len);
      bool r;
      switch (nd->op) {
        case SQL_OP_EQ: r = c == 0; break;
        case SQL_OP_NE: r = c != 0; break;
        case SQL_OP_LT: r = c < 0; break;
        case SQL_OP_LE: r = c <= 0; break;
        case SQL_OP_GT: r = c > 0; break;
        default: r = c >= 0; break;
      }
      return r ? T_T : T_F;
    }
    case F_IN: {
      bool hit = false;
      for (uint32_t i = 0; i < nd->b && !hit; i++) {
        const fconst *k = &f->consts[nd->a + i];
        hit = cmp_col(p, n, desc, f->bytes + k->off, k->len) == 0;
      }
      int t = hit ? T_T : nd->has_null ? T_U : T_F;
      return nd->negated ? truth_not(t) : t;
    }
    case F_LIKE: {
      bool m;
      if (f->cols[nd->col].key_pos >= 0) {
        uint8_t scratch[CAT_KEY_MAX];
        cat_value v;
        cat_error err;
        const cat_key_col *kc = &f->key_cols[f->cols[nd->col].key_pos];
        if (n > sizeof scratch ||
            cat_key_decode(kc, 1, p, p + n, &v, scratch, sizeof scratch, NULL, &err) != CAT_OK) {
          rc->bad = true;
          return T_U;
        }
        m = like_match(f, f->toks ? f->toks + nd->a : NULL, nd->b, v.u.s.p, v.u.s.len);
      } else {
        m = like_match(f, f->toks ? f->toks + nd->a : NULL, nd->b, p, n); /* (no tokens: NULL) */
      }
      return m != nd->negated ? T_T : T_F;
    }
    default: return T_U;
  }
}

bool plan_filter_eval(void *filter, const kv_row *row) {
  const plan_filter *f = filter;
  rowctx rc;
  rc.row = row;
  rc.kfound = 0;
  rc.bad = false;
  for (uint32_t i = 0; i < f->n_roots; i++) {
    if (eval_node(f, f->roots[i], &rc) != T_T) return false;
    if (rc.bad) return false;
  }
  return !rc.bad;
}

/* ---- EXPLAIN ------------------------------------------------------------------------ */
typedef struct sbuf {
  char *buf;  /* output */
  size_t cap; /* its size */
  size_t len; /* full length so far */
} sbuf;

static void sput(sbuf *b, const char *s) {
  size_t n = strlen(s);
  if (b->len < b->cap) {
    size_t room = b->cap - b->len - 1;
    memcpy(b->buf + b->len, s, n < room ? n : room);
    b->buf[b->len + (n < room ? n : room)] = 0;
  }
  b->len += n;
}

static void col_name(const plan_filter *f, int s, const char *const *names, sbuf *b) {
  (void)f;
  char tmp[24];
  if (names && names[s]) { sput(b, names[s]); return; }
  snprintf(tmp, sizeof tmp, "$%d", s);
  sput(b, tmp);
}

static void type_suffix(const plan_filter *f, int s, sbuf *b) {
  char t[48];
  cat_type_format(&f->cols[s].type, t, sizeof t);
  sput(b, " (");
  sput(b, t);
  sput(b, ")");
}

static void explain_node(const plan_filter *f, uint32_t ni, const char *const *names, sbuf *b,
                         bool top) {
  static const char *const ops[] = {[SQL_OP_EQ] = " = ", [SQL_OP_NE] = " <> ", [SQL_OP_LT] = " < ",
                                    [SQL_OP_LE] = " <= ", [SQL_OP_GT] = " > ", [SQL_OP_GE] = " >= "};
  const fnode *nd = &f->nodes[ni];
  switch (nd->kind) {
    case F_CONST: sput(b, nd->op == T_T ? "TRUE" : nd->op == T_F ? "FALSE" : "NULL"); return;
    case F_NOT:
      sput(b, "NOT (");
      explain_node(f, nd->a, names, b, true);
      sput(b, ")");
      return;
    case F_AND: case F_OR:
      if (!top) sput(b, "(");
      explain_node(f, nd->a, names, b, false);
      sput(b, nd->kind == F_AND ? " AND " : " OR ");
      explain_node(f, nd->b, names, b, false);
      if (!top) sput(b, ")");
      return;
    default: break;
  }
  col_name(f, nd->col, names, b);
  switch (nd->kind) {
    case F_ISNULL: sput(b, nd->negated ? " IS NOT NULL" : " IS NULL"); return;
    case F_CMP:
      if (nd->nn == NN_TRUE) sput(b, " IS NOT NULL");
      else if (nd->nn == NN_FALSE) sput(b, " IS NOT NULL AND FALSE");
      else {
        sput(b, ops[nd->op]);
        sput(b, (const char *)f->bytes + f->consts[nd->a].text);
      }
      break;
    case F_IN:
      sput(b, nd->negated ? " NOT IN (" : " IN (");
      for (uint32_t i = 0; i < nd->b; i++) {
        if (i) sput(b, ", ");
        sput(b, (const char *)f->bytes + f->consts[nd->a + i].text);
      }
      if (nd->has_null) sput(b, nd->b ? ", NULL" : "NULL");
      sput(b, ")");
      break;
    case F_LIKE:
      sput(b, nd->negated ? " NOT LIKE " : " LIKE ");
      sput(b, (const char *)f->bytes + nd->text);
      break;
    default: break;
  }
  type_suffix(f, nd->col, b);
}

size_t plan_filter_explain(const plan_filter *f, const char *const *col_names, char *buf,
                           size_t cap) {
  sbuf b = {buf, cap, 0};
  if (cap) buf[0] = 0;
  if (!f) return 0;
  for (uint32_t i = 0; i < f->n_roots; i++) {
    if (i) sput(&b, " AND ");
    explain_node(f, f->roots[i], col_names, &b, f->n_roots == 1);
  }
  return b.len;
}

/* ---- Simple filters ------------------------------------------------------------------- */
static int leaves_of(const plan_filter *f, uint32_t ni, plan_filter_leaf *out, int cap, int n) {
  const fnode *nd = &f->nodes[ni];
  if (nd->kind == F_AND) {
    n = leaves_of(f, nd->a, out, cap, n);
    return n < 0 ? n : leaves_of(f, nd->b, out, cap, n);
  }
  if (nd->kind == F_CONST) return nd->op == T_T ? n : -1;
  if (nd->kind != F_CMP && !(nd->kind == F_ISNULL && nd->negated)) return -1;
  if (nd->col < 0 || nd->col >= f->n_cols || f->cols[nd->col].key_pos >= 0) return -1;
  if (nd->kind == F_CMP && nd->nn == NN_FALSE) return -1;
  if (n >= cap) return -1;
  plan_filter_leaf *l = &out[n];
  l->col = nd->col;
  l->op = 0;
  l->k = NULL;
  l->klen = 0;
  if (nd->kind == F_CMP && nd->nn == NN_NONE) {
    const fconst *k = &f->consts[nd->a];
    l->op = nd->op;
    l->k = f->bytes + k->off;
    l->klen = k->len;
  }
  return n + 1;
}

int plan_filter_leaves(const plan_filter *f, plan_filter_leaf *out, int cap) {
  if (!f) return -1;
  int n = 0;
  for (uint32_t i = 0; i < f->n_roots && n >= 0; i++) n = leaves_of(f, f->roots[i], out, cap, n);
  return n > 0 ? n : -1;
}

/* ---- The serializable form (kv/backend.h kv_filter_expr) ------------------------------ */
/* Nodes the subtree at ni takes in the expression, or 0 when it has a part the form cannot
** say: a key column (its bytes are a part of the row key, which only Rowan's key codec
** finds), LIKE, a constant, IN with a NULL in its list (its FALSE would be UNKNOWN). */
static uint32_t fx_size(const plan_filter *f, uint32_t ni) {
  const fnode *nd = &f->nodes[ni];
  switch (nd->kind) {
    case F_AND:
    case F_OR: {
      uint32_t a = fx_size(f, nd->a), b = a ? fx_size(f, nd->b) : 0;
      return a && b ? 1 + a + b : 0;
    }
    case F_NOT: {
      uint32_t a = fx_size(f, nd->a);
      return a ? 1 + a : 0;
    }
    case F_CMP:
    case F_ISNULL:
    case F_IN:
      if (f->cols[nd->col].key_pos >= 0 || (nd->kind == F_IN && nd->has_null)) return 0;
      if (nd->kind == F_CMP) return 1;
      if (nd->kind == F_ISNULL) return nd->negated ? 1 : 2;
      return nd->negated + (nd->b > 1) + nd->b;
    default: return 0;
  }
}

/* A leaf on column slot col into *out. */
static void fx_leaf(const plan_filter *f, int col, uint8_t kind, uint8_t cmp, const uint8_t *v,
                    uint32_t vlen, kv_fx_node *out) {
  const plan_filter_col *pc = &f->cols[col];
  *out = (kv_fx_node){.kind = kind, .cmp = cmp, .family_id = pc->family_id, .qual = pc->qual,
                      .qual_len = pc->qual_len, .value = v, .value_len = vlen};
}

/* Write the subtree at ni (fx_size says it fits) at out[*k...]. */
static void fx_emit(const plan_filter *f, uint32_t ni, kv_fx_node *out, uint32_t *k) {
  static const uint8_t empty[1] = {0};
  const fnode *nd = &f->nodes[ni];
  switch (nd->kind) {
    case F_AND:
    case F_OR:
      out[(*k)++] = (kv_fx_node){.kind = nd->kind == F_AND ? KV_FX_AND : KV_FX_OR,
                                 .n_children = 2};
      fx_emit(f, nd->a, out, k);
      fx_emit(f, nd->b, out, k);
      return;
    case F_NOT:
      out[(*k)++] = (kv_fx_node){.kind = KV_FX_NOT, .n_children = 1};
      fx_emit(f, nd->a, out, k);
      return;
    case F_ISNULL: /* IS NULL: NOT present; IS NOT NULL: present (never UNKNOWN) */
      if (!nd->negated) out[(*k)++] = (kv_fx_node){.kind = KV_FX_NOT, .n_children = 1};
      fx_leaf(f, nd->col, KV_FX_PRESENT, 0, NULL, 0, &out[(*k)++]);
      return;
    case F_CMP: {
      static const uint8_t ops[] = {[SQL_OP_EQ] = KV_FX_EQ, [SQL_OP_NE] = KV_FX_NE,
                                    [SQL_OP_LT] = KV_FX_LT, [SQL_OP_LE] = KV_FX_LE,
                                    [SQL_OP_GT] = KV_FX_GT, [SQL_OP_GE] = KV_FX_GE};
      if (nd->nn) { /* folded: TRUE (>= the empty value) or FALSE (< it) for every value */
        fx_leaf(f, nd->col, KV_FX_CMP, nd->nn == NN_TRUE ? KV_FX_GE : KV_FX_LT, empty, 0,
                &out[(*k)++]);
        return;
      }
      const fconst *c = &f->consts[nd->a];
      fx_leaf(f, nd->col, KV_FX_CMP, ops[nd->op], f->bytes + c->off, c->len, &out[(*k)++]);
      return;
    }
    default: { /* F_IN: [NOT] (col = c1 OR col = c2 ...) */
      if (nd->negated) out[(*k)++] = (kv_fx_node){.kind = KV_FX_NOT, .n_children = 1};
      if (nd->b > 1) out[(*k)++] = (kv_fx_node){.kind = KV_FX_OR, .n_children = (uint16_t)nd->b};
      for (uint32_t i = 0; i < nd->b; i++) {
        const fconst *c = &f->consts[nd->a + i];
        fx_leaf(f, nd->col, KV_FX_CMP, KV_FX_EQ, f->bytes + c->off, c->len, &out[(*k)++]);
      }
      return;
    }
  }
}

uint32_t plan_filter_expr(const plan_filter *f, kv_fx_node *out, uint32_t cap,
                          uint32_t *n_nodes) {
  *n_nodes = 0;
  if (!f || cap < 2) return 0;
  uint32_t terms = 0, need = 1; /* the AND */
  for (uint32_t i = 0; i < f->n_roots && terms < UINT16_MAX; i++) {
    uint32_t n = fx_size(f, f->roots[i]);
    if (n && need + n <= cap) {
      need += n;
      terms++;
    }
  }
  if (!terms) return 0;
  uint32_t k = 0;
  out[k++] = (kv_fx_node){.kind = KV_FX_AND, .n_children = (uint16_t)terms};
  uint32_t left = terms;
  for (uint32_t i = 0; i < f->n_roots && left; i++) {
    uint32_t n = fx_size(f, f->roots[i]);
    if (n && k + n <= need) {
      fx_emit(f, f->roots[i], out, &k);
      left--;
    }
  }
  *n_nodes = k;
  return terms;
}
