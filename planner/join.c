/*
** planner/join.c: planning a SELECT over several tables into a join tree (planner/
** plan_join.h), once the parameters are known.
**
** The WHERE and every ON are split on AND into terms, and each term is placed where it is
** checked first, without changing the answer. An outer join pads with NULLs the side that
** may go unmatched: a LEFT JOIN its right table, a RIGHT JOIN every table before it, a FULL
** JOIN both.
**  - a WHERE term over one table that no join pads goes into that table's own plan, which
**    makes it a key range, a skip scan, a pushed filter or a residual exactly as for a query
**    of that table alone; so does an ON term over one table alone when that table is the
**    side of its join that may go unmatched and no earlier join pads it (on_pushable: it
**    filters the rows that may match; of an anti join only the subquery's side);
**  - another ON term stays on its join; another WHERE term goes on the join of the last
**    table it names when that join is inner (or a comma or cross join) and no later join
**    pads one of its tables, else after the whole tree (q->join_filter): the NULLs an
**    outer join pads must reach it;
**  - a term with no column (a constant or a parameter) is checked after the tree;
**  - a `column = constant` (or IN) term pushed into one table is also pushed into the table
**    joined to it by an equality of two columns of the same type (propagate() has the
**    directions that keep a LEFT JOIN's answer; not done in a query with a RIGHT or FULL
**    join).
** On each join, an equality between an expression of the left tables and one of the right
** table, of types that hash alike, becomes a hash key; the rest is the residual. A join
** with a key is a hash join whose build side is the input estimated smaller (the leaves'
** estimates, planner/select.c; a join's output is estimated as its larger input's rows, a
** cross join's as the product); a join without one is a nested loop over the right input.
** A hash join whose probe input is a table keyed by the join may read only the build
** side's key prefixes (a child/parent join, planner/join_cp.c). The tables are joined left
** deep; three or more tables joined by INNER JOIN or commas only are put in the order
** greedy_order gives from their leaves' estimates (the smallest first, then always a table
** a term connects to the ones joined), other joins keep the FROM order.
**
** Not here: binding the FROM (planner/bind_from.c), EXPLAIN (planner/explain_join.c),
** running the tree (exec/op_join.c).
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalog/status.h"
#include "planner/hint.h"
#include "planner/index_choice.h"
#include "planner/plan_join.h"
#include "planner/plan_reuse.h"
#include "planner/plan_setop.h"
#include "sql/ast.h"

#define MAX_TABLES 64 /* a term's tables are a bit mask */

/* The table (index in s->from) whose columns hold joined-row slot `slot`. */
static int table_of(const plan_select *s, int slot) {
  int i = s->n_from - 1;
  while (i > 0 && s->from[i].base > slot) i--;
  return i;
}

static uint64_t mask_of(const plan_select *s, const plan_expr *e) {
  if (!e) return 0;
  uint64_t m = e->kind == PX_COLUMN ? 1ull << table_of(s, e->column) : 0;
  for (uint32_t i = 0; i < e->n_args; i++) m |= mask_of(s, e->args[i]);
  return m;
}

static int highest(uint64_t m) {
  int h = -1;
  for (int i = 0; i < MAX_TABLES; i++)
    if (m & (1ull << i)) h = i;
  return h;
}

static void mark_slots(const plan_expr *e, bool *used) {
  if (!e) return;
  if (e->kind == PX_COLUMN) used[e->column] = true;
  for (uint32_t i = 0; i < e->n_args; i++) mark_slots(e->args[i], used);
}

/* A growable array of terms in the arena. */
typedef struct terms {
  plan_expr **v;  /* terms */
  int n, cap;     /* count, allocated */
} terms;

static int push(plan_arena *A, terms *t, plan_expr *e) {
  if (t->n == t->cap) {
    int nc = t->cap ? t->cap * 2 : 8;
    plan_expr **nv = plan_arena_alloc(A, (size_t)nc * sizeof *nv);
    if (!nv) return EXEC_NOMEM;
    if (t->n) memcpy(nv, t->v, (size_t)t->n * sizeof *nv);
    t->v = nv;
    t->cap = nc;
  }
  t->v[t->n++] = e;
  return EXEC_OK;
}

/* The AND-terms of e appended to t. */
static int split(plan_arena *A, plan_expr *e, terms *t) {
  if (!e) return EXEC_OK;
  if (e->kind == PX_BINARY && e->op == SQL_OP_AND) {
    int rc = split(A, e->args[0], t);
    return rc ? rc : split(A, e->args[1], t);
  }
  return push(A, t, e);
}

/* A copy of e over table `t`'s own columns (joined-row slot - base), or NULL on OOM. */
static plan_expr *remap(plan_arena *A, const plan_expr *e, int base, const cat_table *t) {
  plan_expr *c = plan_arena_alloc(A, sizeof *c);
  if (!c) return NULL;
  *c = *e;
  if (e->kind == PX_COLUMN) {
    c->column = e->column - base;
    c->nullable = t->columns[c->column].nullable;
  }
  if (e->n_args) {
    c->args = plan_arena_alloc(A, e->n_args * sizeof *c->args);
    if (!c->args) return NULL;
    for (uint32_t i = 0; i < e->n_args; i++)
      if (!(c->args[i] = remap(A, e->args[i], base, t))) return NULL;
  }
  return c;
}

/* True when values of types a and b that compare equal also hash equal (exec/eval.h
** exec_value_hash): both numbers, both strings, both date/timestamp, or the same type. */
static bool hash_alike(const cat_type *a, const cat_type *b) {
  if (a->id == 0 || b->id == 0) return false;
  if (cat_type_is_numeric(a->id)) return cat_type_is_numeric(b->id);
  if (cat_type_is_string(a->id)) return cat_type_is_string(b->id);
  if (a->id == CAT_T_ARRAY) /* hashed by their bytes: equal arrays of one element type only */
    return b->id == CAT_T_ARRAY && a->elem == b->elem;
  bool da = a->id == CAT_T_DATE || a->id == CAT_T_TIMESTAMP;
  bool db = b->id == CAT_T_DATE || b->id == CAT_T_TIMESTAMP;
  if (da || db) return da && db;
  return a->id == b->id;
}

static uint64_t mul_cap(uint64_t a, uint64_t b) {
  if (a && b > UINT64_MAX / a) return UINT64_MAX;
  return a * b;
}

/* The leaf of derived table i: its query's own plan, the pushed terms as its leaf filter. */
static int derived_leaf(kv_backend *be, const plan_select *s, int i, const terms *pushed,
                        const cat_value *params, int n_params, plan_arena *A, plan_join_node *n,
                        char *msg, size_t cap, bool full) {
  const plan_from *f = &s->from[i];
  int nc = f->table->n_columns;
  int *cols = plan_arena_alloc(A, (size_t)(nc + 1) * sizeof *cols);
  n->leaf_act = plan_arena_alloc(A, sizeof *n->leaf_act);
  if (!cols || !n->leaf_act) goto nomem;
  for (int c = 0; c < nc; c++) cols[c] = c;
  if (pushed->n &&
      !(n->leaf_filter = plan_and_terms(A, (const plan_expr *const *)pushed->v,
                                        (uint32_t)pushed->n)))
    goto nomem;
  n->leaf = true;
  n->derived = true;
  n->from = i;
  n->leaf_sel = f->sub;
  n->leaf_name = f->name[0] ? f->name : "a subquery";
  n->leaf_cols = cols;
  n->lo = n->mid = f->base;
  n->hi = f->base + nc;
  int rc = full ? plan_query_build(be, f->sub, params, n_params, A, &n->leaf_q, msg, cap)
                : plan_query_rebuild(be, f->sub, params, n_params, A, &n->leaf_q, msg, cap);
  if (rc) return rc;
  n->est_rows = plan_query_est_rows(&n->leaf_q);
  return EXEC_OK;
nomem:
  snprintf(msg, cap, "out of memory");
  return EXEC_NOMEM;
}

/* The plan of table i's leaf: its pushed terms as the WHERE, the used columns projected. */
static int leaf_build(kv_backend *be, const plan_select *s, int i, const terms *pushed,
                      const bool *used, const cat_value *params, int n_params, plan_arena *A,
                      plan_join_node *n, char *msg, size_t cap, bool full) {
  const plan_from *f = &s->from[i];
  if (f->sub) return derived_leaf(be, s, i, pushed, params, n_params, A, n, msg, cap, full);
  const cat_table *t = f->table;
  plan_select *ls = plan_arena_alloc(A, sizeof *ls);
  const char **cn = plan_arena_alloc(A, (size_t)(t->n_columns + 1) * sizeof *cn);
  plan_expr **proj = plan_arena_alloc(A, (size_t)(t->n_columns + 1) * sizeof *proj);
  char **names = plan_arena_alloc(A, (size_t)(t->n_columns + 1) * sizeof *names);
  int *cols = plan_arena_alloc(A, (size_t)(t->n_columns + 1) * sizeof *cols);
  n->leaf_act = plan_arena_alloc(A, sizeof *n->leaf_act);
  if (!ls || !cn || !proj || !names || !cols || !n->leaf_act) goto nomem;
  ls->table = t;
  ls->col_names = cn;
  int k = 0;
  for (int c = 0; c < t->n_columns; c++) {
    cn[c] = t->columns[c].name;
    if (!used[f->base + c]) continue;
    plan_expr *e = plan_arena_alloc(A, sizeof *e);
    if (!e) goto nomem;
    e->kind = PX_COLUMN;
    e->column = c;
    e->type = t->columns[c].type;
    e->nullable = t->columns[c].nullable;
    e->off = f->off;
    proj[k] = e;
    names[k] = (char *)t->columns[c].name;
    cols[k++] = c;
  }
  ls->proj = proj;
  ls->names = names;
  ls->n_proj = ls->n_out = k;
  if (pushed->n) {
    plan_expr **local = plan_arena_alloc(A, (size_t)pushed->n * sizeof *local);
    if (!local) goto nomem;
    for (int j = 0; j < pushed->n; j++)
      if (!(local[j] = remap(A, pushed->v[j], f->base, t))) goto nomem;
    ls->where = plan_and_terms(A, (const plan_expr *const *)local, (uint32_t)pushed->n);
    if (!ls->where) goto nomem;
  }
  n->leaf = true;
  n->from = i;
  n->leaf_sel = ls;
  n->leaf_name = t->name;
  n->leaf_cols = cols;
  n->lo = n->mid = f->base;
  n->hi = f->base + t->n_columns;
  int rc = full ? plan_query_build(be, ls, params, n_params, A, &n->leaf_q, msg, cap)
                : plan_query_rebuild(be, ls, params, n_params, A, &n->leaf_q, msg, cap);
  if (rc) return rc;
  n->est_rows = n->leaf_q.has_scan ? n->leaf_q.scan.est_rows : 1;
  return EXEC_OK;
nomem:
  snprintf(msg, cap, "out of memory");
  return EXEC_NOMEM;
}

/* A join kind that pads nothing. */
static bool is_inner(int kind) {
  return kind != SQL_JOIN_LEFT && kind != SQL_JOIN_RIGHT && kind != SQL_JOIN_FULL;
}

/* True when an ON term of node o over table t alone may go into t's own plan: t is the
** side of o that may go unmatched (o's right table for an inner or LEFT join, a left table
** for a RIGHT join; neither for FULL), and no join before o pads t, so filtering t's rows
** first removes exactly the pairs the term would. */
static bool on_pushable(const plan_select *s, const uint64_t *pads, int o, int t) {
  int kind = s->from[o].join;
  uint64_t before = (1ull << o) - 1; /* nodes 1 .. o-1 */
  if (kind == SQL_JOIN_FULL) return false;
  if (kind == SQL_JOIN_ANTI || kind == SQL_JOIN_ANTI_EXISTS) /* a left row no pair passes */
    return t == o;                                          /* comes out: keep its terms */
  if (kind == SQL_JOIN_RIGHT) return t < o && !(pads[t] & before);
  if (kind == SQL_JOIN_LEFT) return t == o;
  return !(pads[t] & before);
}

/* True when some join after node hi pads a table of mask m: a WHERE term over m must then
** wait for the end of the tree (the NULLs it pads must reach it). */
static bool padded_after(const plan_select *s, const uint64_t *pads, uint64_t m, int hi) {
  uint64_t after = ~((2ull << hi) - 1); /* nodes hi+1 .. */
  for (int t = 0; t < s->n_from; t++)
    if ((m >> t & 1) && (pads[t] & after)) return true;
  return false;
}

/* Split the terms of join node n (right table k) into hash keys and the residual. */
static int node_terms(const plan_select *s, int k, const terms *t, plan_arena *A,
                      plan_join_node *n) {
  uint64_t left = (1ull << k) - 1, right = 1ull << k;
  n->lkeys = plan_arena_alloc(A, (size_t)(t->n + 1) * sizeof *n->lkeys);
  n->rkeys = plan_arena_alloc(A, (size_t)(t->n + 1) * sizeof *n->rkeys);
  plan_expr **rest = plan_arena_alloc(A, (size_t)(t->n + 1) * sizeof *rest);
  if (!n->lkeys || !n->rkeys || !rest) return EXEC_NOMEM;
  int nr = 0;
  for (int i = 0; i < t->n; i++) {
    plan_expr *e = t->v[i];
    if (e->kind == PX_BINARY && e->op == SQL_OP_EQ && e->args[0]->kind != PX_ROW) {
      uint64_t a = mask_of(s, e->args[0]), b = mask_of(s, e->args[1]);
      int side = a && b && !(a & ~left) && b == right   ? 0
                 : a && b && !(b & ~left) && a == right ? 1
                                                         : -1;
      if (side >= 0 && hash_alike(&e->args[0]->type, &e->args[1]->type)) {
        n->lkeys[n->n_keys] = e->args[side];
        n->rkeys[n->n_keys++] = e->args[1 - side];
        continue;
      }
    }
    rest[nr++] = e;
  }
  if (nr) {
    n->residual = plan_and_terms(A, (const plan_expr *const *)rest, (uint32_t)nr);
    if (!n->residual) return EXEC_NOMEM;
  }
  return EXEC_OK;
}

/* If e is `column = constant` (or a parameter), or `column IN (constants)`, over joined-row
** slot `slot`: true. Such a term on one side of a join key `a = b` holds for the other side
** of every pair the key matches. */
static bool const_term_on(const plan_expr *e, int slot) {
  if (e->kind == PX_BINARY && e->op == SQL_OP_EQ) {
    for (int side = 0; side < 2; side++) {
      const plan_expr *c = e->args[side], *o = e->args[1 - side];
      if (c->kind == PX_COLUMN && c->column == slot && (o->kind == PX_CONST || o->kind == PX_PARAM))
        return true;
    }
    return false;
  }
  if (e->kind == PX_IN && !e->negated && e->args[0]->kind == PX_COLUMN &&
      e->args[0]->column == slot) {
    for (uint32_t i = 1; i < e->n_args; i++)
      if (e->args[i]->kind != PX_CONST && e->args[i]->kind != PX_PARAM) return false;
    return true;
  }
  return false;
}

/* A copy of e with its column node(s) of slot `from` replaced by column node `to`. */
static plan_expr *swap_column(plan_arena *A, const plan_expr *e, int from, const plan_expr *to) {
  if (e->kind == PX_COLUMN && e->column == from) return (plan_expr *)to;
  plan_expr *c = plan_arena_alloc(A, sizeof *c);
  if (!c) return NULL;
  *c = *e;
  if (e->n_args) {
    c->args = plan_arena_alloc(A, e->n_args * sizeof *c->args);
    if (!c->args) return NULL;
    for (uint32_t i = 0; i < e->n_args; i++)
      if (!(c->args[i] = swap_column(A, e->args[i], from, to))) return NULL;
  }
  return c;
}

/* Constants across join keys: for each key `a = b` of two plain columns of the same type on
** an inner join, a term `a = constant` (or IN) pushed into a's table is also pushed into b's,
** and the other way; so `WHERE r.STATION = 'Dongsi'` also makes the key range of the table
** joined on STATION. On a LEFT JOIN only from the left table to the right one (a term on the
** right may not remove left rows). Not onto a table a LEFT JOIN pads. Two passes carry a
** constant along a chain of keys. */
static int propagate(const plan_select *s, terms *pushed, const terms *on_node, plan_arena *A) {
  for (int pass = 0; pass < 2; pass++)
    for (int k = 1; k < s->n_from; k++)
      for (int i = 0; i < on_node[k].n; i++) {
        const plan_expr *e = on_node[k].v[i];
        if (e->kind != PX_BINARY || e->op != SQL_OP_EQ || e->args[0]->kind != PX_COLUMN ||
            e->args[1]->kind != PX_COLUMN || e->args[0]->type.id != e->args[1]->type.id ||
            e->args[0]->type.id == CAT_T_CHAR)
          continue;
        for (int dir = 0; dir < 2; dir++) {
          const plan_expr *src = e->args[dir], *dst = e->args[1 - dir];
          int ts = table_of(s, src->column), td = table_of(s, dst->column);
          if (ts == td) continue;
          if (s->from[k].join == SQL_JOIN_ANTI) {
            continue; /* NOT IN needs the whole subquery (its NULLs, its emptiness) */
          } else if (s->from[k].join == SQL_JOIN_LEFT) {
            if (td != k || ts == k) continue; /* only from the left tables to the right one */
          } else if (s->from[td].join == SQL_JOIN_LEFT) {
            continue; /* not onto a table a LEFT JOIN pads */
          }
          int n = pushed[ts].n;
          for (int j = 0; j < n; j++) {
            const plan_expr *t = pushed[ts].v[j];
            if (!const_term_on(t, src->column)) continue;
            bool have = false; /* already there (a second pass, or written twice) */
            for (int h = 0; h < pushed[td].n && !have; h++)
              have = const_term_on(pushed[td].v[h], dst->column) &&
                     pushed[td].v[h]->n_args == t->n_args;
            if (have) continue;
            plan_expr *c = swap_column(A, t, src->column, dst);
            if (!c || push(A, &pushed[td], c)) return EXEC_NOMEM;
          }
        }
      }
  return EXEC_OK;
}

static int build_tree(kv_backend *be, const plan_select *s, const cat_value *params, int n_params,
                      plan_arena *A, plan_query *q, char *msg, size_t cap, bool full) {
  int nf = s->n_from;
  if (nf > MAX_TABLES)
    return snprintf(msg, cap, "a join of more than %d tables", MAX_TABLES), EXEC_TOOBIG;
  terms all = {0}, post = {0};
  terms *pushed = plan_arena_alloc(A, (size_t)nf * sizeof *pushed);
  terms *on_node = plan_arena_alloc(A, (size_t)nf * sizeof *on_node);
  int *origin = NULL;
  if (!pushed || !on_node) goto nomem;
  /* every term with where it comes from: -1 the WHERE, k the ON of table k */
  if (split(A, s->where, &all)) goto nomem;
  int n_where = all.n;
  int *start = plan_arena_alloc(A, (size_t)(nf + 1) * sizeof *start);
  if (!start) goto nomem;
  for (int k = 1; k < nf; k++) {
    start[k] = all.n;
    if (split(A, s->from[k].on, &all)) goto nomem;
  }
  start[nf] = all.n;
  origin = plan_arena_alloc(A, (size_t)(all.n + 1) * sizeof *origin);
  if (!origin) goto nomem;
  for (int i = 0, k = 1; i < all.n; i++) {
    if (i < n_where) {
      origin[i] = -1;
      continue;
    }
    while (k + 1 < nf && i >= start[k + 1]) k++;
    origin[i] = k;
  }
  /* pads[t]: the outer joins that pad table t with NULLs (bit k: node k) */
  uint64_t *pads = plan_arena_alloc(A, (size_t)nf * sizeof *pads);
  if (!pads) goto nomem;
  bool outer2 = false; /* a RIGHT or FULL join */
  for (int t = 0; t < nf; t++) {
    pads[t] = 0;
    for (int k = t > 0 ? t : 1; k < nf; k++) {
      int kind = s->from[k].join;
      if ((k == t && (kind == SQL_JOIN_LEFT || kind == SQL_JOIN_FULL)) ||
          (t < k && (kind == SQL_JOIN_RIGHT || kind == SQL_JOIN_FULL)))
        pads[t] |= 1ull << k;
    }
  }
  for (int k = 1; k < nf; k++)
    outer2 |= s->from[k].join == SQL_JOIN_RIGHT || s->from[k].join == SQL_JOIN_FULL;
  for (int i = 0; i < all.n; i++) {
    plan_expr *e = all.v[i];
    uint64_t m = mask_of(s, e);
    int hi = highest(m), o = origin[i];
    bool one = m && !(m & (m - 1));
    terms *dst;
    if (o >= 0) { /* an ON term of node o */
      dst = one && on_pushable(s, pads, o, hi) ? &pushed[hi] : &on_node[o];
    } else if (one && !pads[hi]) { /* a WHERE term over one table no join pads */
      dst = &pushed[hi];
    } else if (hi >= 1 && is_inner(s->from[hi].join) && !padded_after(s, pads, m, hi)) {
      dst = &on_node[hi];
    } else {
      dst = &post;
    }
    if (push(A, dst, e)) goto nomem;
  }
  if (!outer2 && propagate(s, pushed, on_node, A)) goto nomem;
  /* the slots the query reads after the joins (as planner/select.c marks them) */
  bool *used = plan_arena_alloc(A, (size_t)(s->n_slots + 1) * sizeof *used);
  if (!used) goto nomem;
  if (s->aggregate) {
    for (int i = 0; i < s->n_group; i++) mark_slots(s->group[i], used);
    for (int i = 0; i < s->n_aggs; i++) {
      mark_slots(s->aggs[i].arg, used);
      mark_slots(s->aggs[i].arg2, used);
    }
  } else {
    for (int i = 0; i < s->n_proj; i++) mark_slots(s->proj[i], used);
  }
  for (int i = 0; i < post.n; i++) mark_slots(post.v[i], used);
  for (int k = 0; k < nf; k++)
    for (int i = 0; i < on_node[k].n; i++) mark_slots(on_node[k].v[i], used);
  /* the tree, left-deep in FROM order */
  plan_join_node *tree = NULL;
  for (int k = 0; k < nf; k++) {
    plan_join_node *leaf = plan_arena_alloc(A, sizeof *leaf);
    if (!leaf) goto nomem;
    int rc = leaf_build(be, s, k, &pushed[k], used, params, n_params, A, leaf, msg, cap, full);
    if (rc) {
      plan_query_free(&leaf->leaf_q);
      q->join = tree;
      return rc;
    }
    if (!tree) {
      tree = leaf;
      continue;
    }
    plan_join_node *j = plan_arena_alloc(A, sizeof *j);
    if (!j) {
      plan_query_free(&leaf->leaf_q);
      q->join = tree;
      goto nomem;
    }
    j->left = tree;
    j->right = leaf;
    int jk = s->from[k].join;
    bool semi = jk == SQL_JOIN_SEMI || jk == SQL_JOIN_ANTI || jk == SQL_JOIN_ANTI_EXISTS;
    j->kind = !is_inner(jk) || semi ? jk
              : on_node[k].n || jk != SQL_JOIN_CROSS ? SQL_JOIN_INNER
                                                     : SQL_JOIN_CROSS;
    j->lo = tree->lo;
    j->mid = leaf->lo;
    j->hi = leaf->hi;
    j->act = plan_arena_alloc(A, sizeof *j->act);
    q->join = j; /* from here on plan_query_free reaches every leaf */
    if (!j->act || node_terms(s, k, &on_node[k], A, j)) goto nomem;
    uint64_t l = tree->est_rows, r = leaf->est_rows;
    if (semi) { /* x [NOT] IN (SELECT ...), a correlated [NOT] EXISTS */
      if (!j->n_keys || j->residual) {
        snprintf(msg, cap, "a subquery's values cannot be matched by hashing (compare values "
                 "of one kind: numbers, strings or dates)");
        return EXEC_ERROR;
      }
      j->algo = PLAN_JOIN_HASH;
      j->build_left = false; /* the subquery's keys are held */
      j->est_rows = l;
      /* a semi join passes only matched left rows, so a left leaf keyed by the matched
         columns may be read at the held keys alone; an anti join passes the others */
      if (jk == SQL_JOIN_SEMI && plan_join_child_parent(j, s->hint, A)) goto nomem;
      tree = j;
      continue;
    }
    if (j->n_keys) {
      j->algo = PLAN_JOIN_HASH;
      j->build_left = l < r;
      j->est_rows = l > r ? l : r;
      if (plan_join_child_parent(j, s->hint, A)) goto nomem;
      int mrc = plan_join_merge(be, j, s->hint, params, n_params, A, msg, cap, full);
      if (mrc) return mrc; /* q->join reaches every leaf for plan_query_free */
    } else {
      j->algo = PLAN_JOIN_NESTED_LOOP;
      j->est_rows = j->residual ? (l > r ? l : r) : mul_cap(l, r);
    }
    if ((j->kind == SQL_JOIN_LEFT || j->kind == SQL_JOIN_FULL) && j->est_rows < l)
      j->est_rows = l;
    if ((j->kind == SQL_JOIN_RIGHT || j->kind == SQL_JOIN_FULL) && j->est_rows < r)
      j->est_rows = r;
    tree = j;
  }
  q->join = tree;
  q->join_filter = post.n ? plan_and_terms(A, (const plan_expr *const *)post.v, (uint32_t)post.n)
                          : NULL;
  if (post.n && !q->join_filter) goto nomem;
  return EXEC_OK;
nomem:
  snprintf(msg, cap, "out of memory");
  return EXEC_NOMEM;
}

/* ---- Join order ------------------------------------------------------------------------ */
/* A copy of e with every joined-row slot c replaced by map[c], or NULL on OOM. */
static plan_expr *reslot(plan_arena *A, const plan_expr *e, const int *map) {
  if (!e) return NULL;
  plan_expr *c = plan_arena_alloc(A, sizeof *c);
  if (!c) return NULL;
  *c = *e;
  if (e->kind == PX_COLUMN) c->column = map[e->column];
  if (e->n_args) {
    c->args = plan_arena_alloc(A, e->n_args * sizeof *c->args);
    if (!c->args) return NULL;
    for (uint32_t i = 0; i < e->n_args; i++)
      if (!(c->args[i] = reslot(A, e->args[i], map))) return NULL;
  }
  return c;
}

/* reslot over an array of n expressions (NULL entries stay NULL); NULL on OOM. */
static plan_expr **reslot_all(plan_arena *A, plan_expr *const *v, int n, const int *map) {
  if (n <= 0) return NULL;
  plan_expr **w = plan_arena_alloc(A, (size_t)n * sizeof *w);
  if (!w) return NULL;
  for (int i = 0; i < n; i++)
    if (v[i] && !(w[i] = reslot(A, v[i], map))) return NULL;
    else if (!v[i]) w[i] = NULL;
  return w;
}

/* Whether the tables of s may be joined in another order than FROM's: three or more tables
** joined by INNER JOIN or commas only (an outer, semi or anti join fixes which side is
** which; a CROSS JOIN fixes the order, as in SQLite), and no hint about the order
** (ORDERED, as Oracle's) or about the first join (USE_SORT_MERGE_JOIN). */
static bool reorderable(const plan_select *s) {
  if (s->n_from < 3 || s->n_from > MAX_TABLES) return false;
  for (int k = 1; k < s->n_from; k++)
    if (s->from[k].join != SQL_JOIN_INNER && s->from[k].join != SQL_JOIN_COMMA) return false;
  return !plan_hint_has(s->hint, "ORDERED") && !plan_hint_has(s->hint, "USE_SORT_MERGE_JOIN");
}

/* The join order by estimated rows (greedy, as SQLite's and most planners' first step):
** the table with the fewest rows after its own terms first, then each time the table with
** the fewest rows among those an equality connects to the tables already joined (it becomes
** a hash key there), or among all when none is connected (a cross product left for last).
** est[k]: table k's leaf estimate; masks[0..nm): the tables each equality between tables
** names (other terms do not connect: a nested loop is no cheaper than a later filter). Ties
** keep FROM order. order[i] gets the FROM index of the i-th table. */
static void greedy_order(int nf, const uint64_t *est, const uint64_t *masks, int nm,
                         int *order) {
  uint64_t done = 0;
  for (int i = 0; i < nf; i++) {
    int best = -1;
    bool best_conn = false;
    for (int t = 0; t < nf; t++) {
      if (done & (1ull << t)) continue;
      bool conn = false;
      for (int m = 0; m < nm && !conn && done; m++)
        conn = (masks[m] & (1ull << t)) && (masks[m] & done) &&
               !(masks[m] & ~(done | (1ull << t)));
      if (best < 0 || (conn && !best_conn) || (conn == best_conn && est[t] < est[best])) {
        best = t;
        best_conn = conn;
      }
    }
    order[i] = best;
    done |= 1ull << best;
  }
}

/* s with its tables in `order`: the FROM list permuted with new slot bases, every ON made a
** WHERE term (the joins are inner, so the answer is the same), and every expression over the
** joined row moved to the new slots. The result columns, their names and order are s's. */
static plan_select *reordered(const plan_select *s, const int *order, plan_arena *A) {
  int nf = s->n_from, *map = plan_arena_alloc(A, (size_t)(s->n_slots + 1) * sizeof *map);
  plan_select *r = plan_arena_alloc(A, sizeof *r);
  plan_from *from = plan_arena_alloc(A, (size_t)nf * sizeof *from);
  const char **names = plan_arena_alloc(A, (size_t)(s->n_slots + 1) * sizeof *names);
  if (!map || !r || !from || !names) return NULL;
  *r = *s;
  int base = 0;
  for (int i = 0; i < nf; i++) {
    int k = order[i], w = (k + 1 < nf ? s->from[k + 1].base : s->n_slots) - s->from[k].base;
    from[i] = s->from[k];
    from[i].base = base;
    from[i].join = i ? SQL_JOIN_COMMA : 0;
    from[i].on = NULL;
    for (int c = 0; c < w; c++) {
      map[s->from[k].base + c] = base + c;
      names[base + c] = s->col_names ? s->col_names[s->from[k].base + c] : NULL;
    }
    base += w;
  }
  terms all = {0};
  if (split(A, s->where, &all)) return NULL;
  for (int k = 1; k < nf; k++)
    if (split(A, s->from[k].on, &all)) return NULL;
  for (int i = 0; i < all.n; i++)
    if (!(all.v[i] = reslot(A, all.v[i], map))) return NULL;
  r->from = from;
  r->col_names = s->col_names ? names : NULL;
  r->where = all.n ? plan_and_terms(A, (const plan_expr *const *)all.v, (uint32_t)all.n) : NULL;
  if (all.n && !r->where) return NULL;
  if (s->aggregate) { /* the projection, HAVING and ORDER BY read the aggregate row */
    if (s->n_group && !(r->group = reslot_all(A, s->group, s->n_group, map))) return NULL;
    if (s->n_aggs) {
      plan_agg *ag = plan_arena_alloc(A, (size_t)s->n_aggs * sizeof *ag);
      if (!ag) return NULL;
      for (int i = 0; i < s->n_aggs; i++) {
        ag[i] = s->aggs[i];
        if ((s->aggs[i].arg && !(ag[i].arg = reslot(A, s->aggs[i].arg, map))) ||
            (s->aggs[i].arg2 && !(ag[i].arg2 = reslot(A, s->aggs[i].arg2, map))))
          return NULL;
      }
      r->aggs = ag;
    }
  } else {
    if (s->n_proj && !(r->proj = reslot_all(A, s->proj, s->n_proj, map))) return NULL;
    if (s->n_order && !(r->order_src = reslot_all(A, s->order_src, s->n_order, map)))
      return NULL;
  }
  return r;
}

/* The EXPLAIN note of a reordered join: "STATIONS, SENSOR, T (FROM order: SENSOR, ...)". */
static const char *order_note(const plan_select *s, const plan_select *r, plan_arena *A) {
  char buf[512];
  size_t o = 0;
  for (int pass = 0; pass < 2; pass++) {
    const plan_select *x = pass ? s : r;
    for (int i = 0; i < x->n_from; i++) {
      const char *name = x->from[i].name && x->from[i].name[0] ? x->from[i].name : "?";
      int w = snprintf(buf + o, sizeof buf - o, "%s%s%s", pass && !i ? " (FROM order: " : "",
                       i ? ", " : "", name);
      o = w < 0 || (size_t)w >= sizeof buf - o ? sizeof buf - 1 : o + (size_t)w;
    }
  }
  int w = snprintf(buf + o, sizeof buf - o, ")");
  o = w < 0 || (size_t)w >= sizeof buf - o ? sizeof buf - 1 : o + (size_t)w;
  return plan_arena_strndup(A, buf, o);
}

int plan_join_build(kv_backend *be, const plan_select *s, const cat_value *params, int n_params,
                    plan_arena *A, plan_query *q, char *msg, size_t cap, bool full) {
  int rc = build_tree(be, s, params, n_params, A, q, msg, cap, full);
  if (rc || !full || !reorderable(s)) return rc;
  int nf = s->n_from;
  uint64_t *est = plan_arena_alloc(A, (size_t)nf * sizeof *est);
  int *order = plan_arena_alloc(A, (size_t)nf * sizeof *order);
  terms all = {0};
  if (!est || !order || split(A, s->where, &all)) goto nomem;
  for (int k = 1; k < nf; k++)
    if (split(A, s->from[k].on, &all)) goto nomem;
  uint64_t *masks = plan_arena_alloc(A, (size_t)(all.n + 1) * sizeof *masks);
  if (!masks) goto nomem;
  int nm = 0;
  for (int i = 0; i < all.n; i++) { /* equalities between tables: the hash keys to be */
    const plan_expr *e = all.v[i];
    if (e->kind != PX_BINARY || e->op != SQL_OP_EQ || e->n_args != 2) continue;
    uint64_t a = mask_of(s, e->args[0]), b = mask_of(s, e->args[1]);
    if (a && b && !(a & b)) masks[nm++] = a | b;
  }
  const plan_join_node *n = q->join; /* left-deep in FROM order: the right leaves, then 0 */
  for (int k = nf - 1; k >= 1; k--, n = n->left) est[k] = n->right->est_rows;
  est[0] = n->est_rows;
  greedy_order(nf, est, masks, nm, order);
  int k = 0;
  while (k < nf && order[k] == k) k++;
  if (k == nf) return EXEC_OK; /* FROM order already */
  const plan_select *r = reordered(s, order, A);
  if (!r) goto nomem;
  plan_join_free(q->join);
  q->join = NULL;
  q->join_filter = NULL;
  q->sel = r;
  if ((rc = build_tree(be, r, params, n_params, A, q, msg, cap, full)) != EXEC_OK) return rc;
  if (!(q->join_order = order_note(s, r, A))) goto nomem;
  return EXEC_OK;
nomem:
  snprintf(msg, cap, "out of memory");
  return EXEC_NOMEM;
}

void plan_join_free(plan_join_node *n) {
  if (!n) return;
  if (n->leaf) {
    plan_query_free(&n->leaf_q);
    return;
  }
  plan_join_free(n->left);
  plan_join_free(n->right);
}
