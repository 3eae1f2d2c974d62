/*
** planner/bind_subquery.c: binding of the queries nested in a query (issue 16): WITH lists,
** derived tables (a subquery in FROM, a WITH name used as a table) and compound SELECTs
** (UNION ALL, UNION, INTERSECT, EXCEPT).
**
**  - WITH name [(cols)] AS (query), ...: the items are in scope for the query after them
**    and for the items after them (not their own: WITH RECURSIVE is refused by name); a name
**    used in FROM is looked up among them first, then in the catalog. Each use binds the
**    item's query again as a derived table (a WITH item used twice runs twice).
**  - A derived table is bound by a nested binder (no column of the query it is in is
**    visible; inside a correlated subquery, the outer queries' are) into its own plan_select, and a stand-in cat_table holds
**    its result columns (their names and types, no key and no family), so the FROM binder
**    and the join planner treat it as any table (plan_from.sub says what it is).
**  - A compound SELECT is flattened (its operators are left-associative and of one
**    precedence): each branch is bound alone, every branch must give as many columns as the
**    first, and each column's type is the common type of the branches' (as Phoenix unifies
**    them; a branch whose type differs is CAST); the branch's names are the first branch's.
**    The set operations become a chain of plan_selects (setop, set_left, set_right), and
**    the compound is bound as an outer query that reads that chain as a derived table and
**    takes the compound's ORDER BY (by output name or position), LIMIT and OFFSET.
**
**  - An uncorrelated scalar subquery or EXISTS in an expression is bound as a query of its
**    own and becomes a parameter numbered after the statement's own (plan_bound.subs):
**    exec/engine_sub.c runs it once per execution before the statement is planned, so its
**    value plans like a bound value.
**  - x [NOT] IN (SELECT ...) (and the row value (a, b) IN (SELECT c, d ...)) as a term of a
**    SELECT's WHERE (alone or ANDed) is taken out of the WHERE (bind_where) and becomes a
**    semi / anti join with the subquery as a derived table (bind_semis), which the join
**    planner runs as a hash join building the subquery's keys (planner/join.c,
**    exec/op_hashjoin.c); a correlated [NOT] EXISTS or [NOT] IN there is decorrelated into
**    one (planner/bind_correlated.c; NOT IN adds its NULL rules as a WHERE term). A
**    correlated subquery the decorrelation does not take runs once per outer row
**    (planner/bind_apply.c): each subquery of an expression is bound with a collector of
**    the outer columns it names, and one that named any becomes a PX_APPLY.
**  - An uncorrelated x [NOT] IN (SELECT ...) or (a, b) [NOT] IN (SELECT c, d ...) inside
**    another expression (under OR, in the select list, in DELETE's WHERE), and (a, b) NOT IN
**    as a WHERE term, runs once like a scalar subquery; its rows become one hash set
**    (exec/in_set.h) carried by a parameter, and the test is [NOT] IN_SET(x, ..., set), whose
**    three-valued logic is IN's (bind_in_values, planner/bind.c).
**
** Not here: planning the derived tables (planner/join.c) and set operations
** (planner/setop.c), running the subqueries (exec/engine_run.c).
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalog/status.h"
#include "planner/hint.h"
#include "planner/plan_bind.h"

/* ORDER SQL_SETOP: the words of each set operator, for messages. */
static const char *const setop_words[] = {"?", "UNION ALL", "UNION", "INTERSECT", "EXCEPT"};

static const char *setop_word(int op) {
  return op >= SQL_SETOP_UNION_ALL && op <= SQL_SETOP_EXCEPT ? setop_words[op] : "?";
}

binder bind_nested(const binder *b) {
  binder nb;
  memset(&nb, 0, sizeof nb);
  nb.cat = b->cat;
  nb.sql = b->sql;
  nb.A = b->A;
  nb.msg = b->msg;
  nb.cap = b->cap;
  nb.err_off = b->err_off;
  nb.bound = b->bound;
  nb.ctes = b->ctes;
  nb.cte_self = b->cte_self;
  nb.no_key_lists = b->no_key_lists; /* the semi joins of exec/engine_run.c's second binding
                                        reach the key lists of derived tables and subqueries */
  nb.corr = b->corr; /* a branch or derived table of a correlated subquery reads its outer
                        columns as the subquery does (planner/bind_apply.c) */
  return nb;
}

const sql_cte *bind_find_cte(const binder *b, const char *name) {
  for (const struct bind_cte *w = b->ctes; w; w = w->up)
    if (strcmp(w->def->name, name) == 0) return w->def;
  return NULL;
}

/* A stand-in table for the result columns of s, named name, its column names from cols
** (NULL: s's own names). NULL with b's error set. */
static cat_table *stand_in(binder *b, const plan_select *s, const sql_colname_list *cols,
                           const char *name, uint32_t off) {
  if (cols && cols->n != s->n_out) {
    bind_error(b, EXEC_ERROR, off, "%s has %d column name%s for the %d column%s of its query",
               name, cols->n, cols->n == 1 ? "" : "s", s->n_out, s->n_out == 1 ? "" : "s");
    return NULL;
  }
  cat_table *t = plan_arena_alloc(b->A, sizeof *t);
  cat_column *c = plan_arena_alloc(b->A, (size_t)(s->n_out + 1) * sizeof *c);
  if (!t || !c) {
    bind_error(b, EXEC_NOMEM, off, "out of memory");
    return NULL;
  }
  t->name = (char *)name;
  t->kv_name = (char *)"";
  t->n_columns = s->n_out;
  t->columns = c;
  for (int i = 0; i < s->n_out; i++) {
    if (cols && cols->a[i].family) {
      bind_error(b, EXEC_ERROR, cols->a[i].off, "a WITH column name takes no family: %s.%s",
                 cols->a[i].family, cols->a[i].name);
      return NULL;
    }
    const char *cn = cols ? cols->a[i].name : s->names[i];
    c[i].name = plan_arena_strndup(b->A, cn, strlen(cn));
    if (!c[i].name) {
      bind_error(b, EXEC_NOMEM, off, "out of memory");
      return NULL;
    }
    c[i].type = s->proj[i]->type;
    c[i].nullable = true;
    c[i].pk_pos = -1;
  }
  return t;
}

int bind_derived(binder *b, const sql_select *sub, const sql_colname_list *cols,
                 const char *name, uint32_t off, plan_from *f) {
  binder nb = bind_nested(b);
  /* a WITH item's query sees the items before it, and may not name itself */
  for (const struct bind_cte *w = b->ctes; w; w = w->up)
    if (w->def->select == sub) {
      nb.ctes = w->up;
      nb.cte_self = w->def->name;
      break;
    }
  plan_select *s = plan_arena_alloc(b->A, sizeof *s);
  if (!s) return bind_error(b, EXEC_NOMEM, off, "out of memory");
  int rc = bind_query(&nb, sub, s);
  if (rc) {
    b->rc = nb.rc;
    return rc;
  }
  char *nm = plan_arena_strndup(b->A, name ? name : "", name ? strlen(name) : 0);
  if (!nm) return bind_error(b, EXEC_NOMEM, off, "out of memory");
  cat_table *t = stand_in(b, s, cols, nm, off);
  if (!t) return b->rc;
  f->table = t;
  f->name = t->name;
  f->sub = s;
  return EXEC_OK;
}

/* A column node over slot i of type t (a set operation's result column). */
static plan_expr *column_node(binder *b, int i, cat_type t, bool nullable, uint32_t off) {
  plan_expr *e = bind_node(b, PX_COLUMN, off, 0);
  if (!e) return NULL;
  e->column = i;
  e->type = t;
  e->nullable = nullable;
  return e;
}

/* The compound q flattened: its simple SELECTs in order (br[0..n)) and the operator before
** each (op[1..n)); at most cap of them. */
static int flatten(const sql_select *q, const sql_select **br, int *op, uint32_t *op_off,
                   int cap) {
  int n = 0;
  for (const sql_select *p = q; p->setop; p = p->left) n++;
  if (n + 1 > cap) return -1;
  const sql_select *p = q;
  for (int k = n; k >= 1; k--, p = p->left) {
    br[k] = p->right;
    op[k] = p->setop;
    op_off[k] = p->setop_off;
  }
  br[0] = p;
  return n + 1;
}

#define MAX_BRANCHES 256 /* SELECTs of one compound */

/* The set operations of compound q as a chain of plan_selects into *out. */
static int bind_setops(binder *b, const sql_select *q, const plan_select **out) {
  const sql_select *br[MAX_BRANCHES];
  int op[MAX_BRANCHES];
  uint32_t op_off[MAX_BRANCHES];
  int n = flatten(q, br, op, op_off, MAX_BRANCHES);
  if (n < 0)
    return bind_error(b, EXEC_TOOBIG, q->setop_off, "a compound SELECT of more than %d SELECTs",
                      MAX_BRANCHES);
  plan_select **ps = plan_arena_alloc(b->A, (size_t)n * sizeof *ps);
  if (!ps) return bind_error(b, EXEC_NOMEM, q->off, "out of memory");
  for (int k = 0; k < n; k++) {
    binder nb = bind_nested(b);
    ps[k] = plan_arena_alloc(b->A, sizeof *ps[k]);
    if (!ps[k]) return bind_error(b, EXEC_NOMEM, br[k]->off, "out of memory");
    int rc = bind_select_core(&nb, br[k], ps[k]);
    if (rc) {
      b->rc = nb.rc;
      return rc;
    }
    if (k && ps[k]->n_out != ps[0]->n_out)
      return bind_error(b, EXEC_ERROR, op_off[k], "the SELECTs of %s give different numbers of "
                        "columns: %d before it, %d after it", setop_word(op[k]), ps[0]->n_out,
                        ps[k]->n_out);
  }
  int nc = ps[0]->n_out;
  cat_type *t = plan_arena_alloc(b->A, (size_t)(nc + 1) * sizeof *t);
  bool *nul = plan_arena_alloc(b->A, (size_t)(nc + 1) * sizeof *nul);
  if (!t || !nul) return bind_error(b, EXEC_NOMEM, q->off, "out of memory");
  for (int i = 0; i < nc; i++) {
    t[i] = ps[0]->proj[i]->type;
    nul[i] = ps[0]->proj[i]->nullable;
    for (int k = 1; k < n; k++) {
      bool ok;
      const plan_expr *e = ps[k]->proj[i];
      cat_type u = bind_common_type(&t[i], &e->type, &ok);
      if (!ok) {
        char ta[48], tb[48];
        return bind_error(b, EXEC_ERROR, e->off, "column %d of %s is %s before it and %s "
                          "after it: the types do not mix", i + 1, setop_word(op[k]),
                          cat_type_format(&t[i], ta, sizeof ta),
                          cat_type_format(&e->type, tb, sizeof tb));
      }
      t[i] = u;
      nul[i] = nul[i] || e->nullable;
    }
    for (int k = 0; k < n; k++) { /* one type per column: CAST the branches that differ */
      plan_expr *e = ps[k]->proj[i];
      if (e->type.id == t[i].id || t[i].id == 0) continue;
      plan_expr *c = bind_node(b, PX_CAST, e->off, 1);
      if (!c) return b->rc;
      c->args[0] = e;
      c->type = t[i];
      c->nullable = e->nullable;
      ps[k]->proj[i] = c;
    }
  }
  const plan_select *chain = ps[0];
  for (int k = 1; k < n; k++) {
    plan_select *s = plan_arena_alloc(b->A, sizeof *s);
    plan_expr **proj = plan_arena_alloc(b->A, (size_t)(nc + 1) * sizeof *proj);
    if (!s || !proj) return bind_error(b, EXEC_NOMEM, op_off[k], "out of memory");
    for (int i = 0; i < nc; i++)
      if (!(proj[i] = column_node(b, i, t[i], nul[i], op_off[k]))) return b->rc;
    s->setop = op[k];
    s->set_left = chain;
    s->set_right = ps[k];
    s->n_out = s->n_proj = nc;
    s->proj = proj;
    s->names = ps[0]->names;
    chain = s;
  }
  *out = chain;
  return EXEC_OK;
}

/* Compound q into s: an outer query `SELECT * FROM (set operations) ORDER BY ... LIMIT ...`
** whose FROM is the chain of set operations. */
static int bind_compound(binder *b, const sql_select *q, plan_select *s) {
  const plan_select *chain;
  if (bind_setops(b, q, &chain)) return b->rc;
  plan_from *f = plan_arena_alloc(b->A, sizeof *f);
  if (!f) return bind_error(b, EXEC_NOMEM, q->off, "out of memory");
  cat_table *t = stand_in(b, chain, NULL, "", q->off);
  if (!t) return b->rc;
  f->table = t;
  f->name = t->name;
  f->sub = chain;
  f->setop_wrap = true;
  f->off = q->off;
  sql_select outer;
  memset(&outer, 0, sizeof outer);
  outer.off = q->off;
  outer.order = q->order;
  outer.limit = q->limit;
  outer.offset = q->offset;
  outer.cols = sql_result_list_append(NULL, NULL, NULL, 0, NULL, q->off);
  if (!outer.cols) return bind_error(b, EXEC_NOMEM, q->off, "out of memory");
  b->pre_from = f;
  int rc = bind_select_core(b, &outer, s);
  b->pre_from = NULL;
  sql_result_list_free(outer.cols);
  return rc;
}

int bind_query(binder *b, const sql_select *q, plan_select *s) {
  const struct bind_cte *saved = b->ctes;
  if (q->with) {
    for (int i = 0; i < q->with->n; i++) {
      const sql_cte *c = &q->with->a[i];
      for (const struct bind_cte *w = b->ctes; w != saved; w = w->up)
        if (strcmp(w->def->name, c->name) == 0)
          return bind_error(b, EXEC_ERROR, c->off, "WITH names %s twice", c->name);
      struct bind_cte *n = plan_arena_alloc(b->A, sizeof *n);
      if (!n) return bind_error(b, EXEC_NOMEM, c->off, "out of memory");
      n->def = c;
      n->up = b->ctes;
      b->ctes = n;
    }
  }
  int rc = q->setop ? bind_compound(b, q, s) : bind_select_core(b, q, s);
  b->ctes = saved;
  return rc;
}

int bind_add_semi(binder *b, plan_expr **x, int n, int kind, plan_select *sub, uint32_t off) {
  struct bind_semi *v = plan_arena_alloc(b->A, (size_t)(b->n_semis + 1) * sizeof *v);
  if (!v) return bind_error(b, EXEC_NOMEM, off, "out of memory");
  if (b->n_semis) memcpy(v, b->semis, (size_t)b->n_semis * sizeof *v);
  v[b->n_semis].x = x;
  v[b->n_semis].n = n;
  v[b->n_semis].nkeys = n;
  v[b->n_semis].kind = kind;
  v[b->n_semis].sub = sub;
  v[b->n_semis].off = off;
  b->semis = v;
  b->n_semis++;
  return EXEC_OK;
}

/* The types of the n columns of s, the query of x [NOT] IN (SELECT ...) inside an
** expression (arena), or NULL with b's error set. */
static cat_type *in_types(binder *b, const sql_expr *x, const plan_select *s, int n) {
  if (s->n_out != n) {
    bind_error(b, EXEC_ERROR, x->sub->off, "the subquery of %sIN gives %d column%s: it must "
               "give %d", x->negated ? "NOT " : "", s->n_out, s->n_out == 1 ? "" : "s", n);
    return NULL;
  }
  cat_type *ct = plan_arena_alloc(b->A, (size_t)n * sizeof *ct);
  if (!ct) {
    bind_error(b, EXEC_NOMEM, x->off, "out of memory");
    return NULL;
  }
  for (int i = 0; i < n; i++) {
    ct[i] = s->proj[i]->type;
    if (ct[i].id == CAT_T_ARRAY || ct[i].id == 0) {
      bind_error(b, EXEC_ERROR, x->sub->off, "the subquery of IN inside an expression must "
                 "give values of a known type that is not an ARRAY");
      return NULL;
    }
  }
  return ct;
}

/* The query of subquery x bound, with c collecting the outer columns it names (planner/
** bind_apply.c); NULL with b's error set. */
static plan_select *sub_query(binder *b, const sql_expr *x, bind_corr *c) {
  plan_select *s = plan_arena_alloc(b->A, sizeof *s);
  if (!s) {
    bind_error(b, EXEC_NOMEM, x->off, "out of memory");
    return NULL;
  }
  return bind_apply_query(b, x->sub, s, c) ? NULL : s;
}

/* x [NOT] IN (SELECT ...), a WHERE term: x bound, the subquery bound, both kept in b->semis
** (NULL returned); or, when the subquery names the outer query other than in its WHERE (a
** set operation's branch, its select list), the term that runs it per outer row. */
static plan_expr *add_semi(binder *b, const sql_expr *x) {
  bool row = x->left->kind == SQL_E_ROW; /* (a, b) IN (SELECT c, d ...) */
  if (bind_is_correlated(b, x->sub)) {
    bind_correlated(b, x, x->negated);
    return NULL;
  }
  int n = row ? x->left->list->n : 1;
  bind_corr c;
  plan_select *s = sub_query(b, x, &c);
  if (!s) return NULL;
  if (c.n) { /* correlated after all: per outer row (planner/bind_apply.c) */
    cat_type *ct = in_types(b, x, s, n);
    return ct ? bind_apply(b, x, s, &c, ct) : NULL;
  }
  if (s->n_out != n) {
    bind_error(b, EXEC_ERROR, x->sub->off, "the subquery of %sIN gives %d column%s: it "
               "must give %d", x->negated ? "NOT " : "", s->n_out, s->n_out == 1 ? "" : "s", n);
    return NULL;
  }
  plan_expr **l = plan_arena_alloc(b->A, (size_t)n * sizeof *l);
  if (!l) {
    bind_error(b, EXEC_NOMEM, x->off, "out of memory");
    return NULL;
  }
  for (int i = 0; i < n; i++)
    if (!(l[i] = bind_expr(b, row ? x->left->list->a[i] : x->left))) return NULL;
  for (int i = 0; i < n; i++) {
    plan_expr *cn = column_node(b, i, s->proj[i]->type, true, x->off);
    if (!cn || bind_compare_pair(b, l[i], cn, x->off)) return NULL;
  }
  bind_add_semi(b, l, n, x->negated ? SQL_JOIN_ANTI : SQL_JOIN_SEMI, s, x->off);
  return NULL;
}

plan_expr *bind_column_node(binder *b, int i, cat_type t, bool nullable, uint32_t off) {
  return column_node(b, i, t, nullable, off);
}

/* The EXISTS of term w (EXISTS (...) or NOT EXISTS (...)) when its query is correlated. */
static const sql_expr *correlated_exists(const binder *b, const sql_expr *w, bool *negated) {
  *negated = w->kind == SQL_E_UNARY && w->op == SQL_OP_NOT;
  const sql_expr *e = *negated ? w->left : w;
  return e && e->kind == SQL_E_EXISTS && bind_is_correlated(b, e->sub) ? e : NULL;
}

/* True when w's top-level AND terms hold an x [NOT] IN (SELECT ...) or a correlated
** [NOT] EXISTS. */
static bool has_semi(const binder *b, const sql_expr *w) {
  bool neg;
  if ((w->kind == SQL_E_IN && w->sub) || correlated_exists(b, w, &neg)) return true;
  return w->kind == SQL_E_BINARY && w->op == SQL_OP_AND &&
         (has_semi(b, w->left) || has_semi(b, w->right));
}

/* w, x IN (SELECT ...) uncorrelated, is on a primary-key column of the one table the SELECT
** reads: run once before planning (like IN inside an expression), its values are that
** column's key range, an IN list's skip scan or point reads (SQLite plans it so; Phoenix's
** semi join reads the same keys with its dynamic filter), and the plan is the single-table
** one (streaming aggregates, the columnar aggregate) rather than a join. Not with the hint
** NO_CHILD_PARENT_JOIN_OPTIMIZATION, nor when binding again after its values passed the
** join memory (PLAN_BIND_NO_KEY_LISTS: the semi join spills). */
static bool key_list(const binder *b, const sql_expr *w) {
  const sql_expr *x = w->left;
  if (w->negated || b->no_key_lists || b->n_scope || !b->table || !b->sel ||
      x->kind != SQL_E_COLUMN || x->nname > 2)
    return false;
  if (b->sel->hint && plan_hint_has(b->sel->hint, "NO_CHILD_PARENT_JOIN_OPTIMIZATION"))
    return false;
  if (x->nname == 2 && !bind_names_item(x->name[0], b->alias, b->table->name))
    return false;
  int ci = cat_find_column(b->table, x->name[x->nname - 1]);
  return ci >= 0 && b->table->columns[ci].pk_pos >= 0;
}

plan_expr *bind_where(binder *b, const sql_expr *w) {
  bool neg;
  const sql_expr *ex = correlated_exists(b, w, &neg);
  if (ex && !bind_decorrelatable(b, ex, true))
    return bind_expr(b, w); /* run per outer row (planner/bind_apply.c) */
  if (ex) {
    bind_correlated(b, ex, neg); /* planner/bind_correlated.c */
    return NULL;
  }
  if (w->kind == SQL_E_IN && w->sub) {
    bool row = w->left->kind == SQL_E_ROW, corr = bind_is_correlated(b, w->sub);
    if (corr && !bind_decorrelatable(b, w, true))
      return bind_expr(b, w); /* run per outer row (planner/bind_apply.c) */
    if (w->negated && !row && corr)
      return bind_correlated_not_in(b, w); /* its NULL rules: a term of the WHERE */
    if (w->negated && row && !corr) /* the rows' hash set, run once (bind_subquery_expr) */
      return bind_expr(b, w);
    if (!row && !corr && key_list(b, w)) {
      b->key_list_term = true; /* read by bind_subquery_expr */
      plan_expr *e = bind_expr(b, w);
      b->key_list_term = false;
      return e;
    }
    return add_semi(b, w);
  }
  if (!has_semi(b, w)) return bind_expr(b, w);
  plan_expr *l = bind_where(b, w->left);
  if (b->rc) return NULL;
  plan_expr *r = bind_where(b, w->right);
  if (b->rc || !l || !r) return l ? l : r;
  for (int i = 0; i < 2; i++) {
    const plan_expr *t = i ? r : l;
    if (t->type.id != CAT_T_BOOLEAN && t->type.id != 0) {
      bind_error(b, EXEC_ERROR, t->off, "AND needs BOOLEAN operands, not %s",
                 cat_type_name(t->type.id));
      return NULL;
    }
  }
  plan_expr *a = bind_node(b, PX_BINARY, w->off, 2);
  if (!a) return NULL;
  a->op = SQL_OP_AND;
  a->type = cat_type_of(CAT_T_BOOLEAN);
  a->nullable = l->nullable || r->nullable;
  a->args[0] = l;
  a->args[1] = r;
  return bind_fold(b, a); /* x AND TRUE is x, as bind_expr makes it */
}

/* A correlated scalar subquery's LEFT JOIN m (its values at slots base + nkeys ..) in a
** query grouped by every outer side of its correlation: its values are one per group (one
** per correlation key), so they join the GROUP BY, where they split no group and the select
** list may read them as SQL allows. */
static int group_dependent(binder *b, plan_select *s, const struct bind_semi *m, int base) {
  if (!s->n_group) return EXEC_OK;
  for (int k = 0; k < m->nkeys; k++) {
    int g = 0;
    while (g < s->n_group && !plan_expr_equal(m->x[k], s->group[g])) g++;
    if (g == s->n_group) return EXEC_OK;
  }
  int n = s->n_group + m->n - m->nkeys;
  plan_expr **grp = plan_arena_alloc(b->A, (size_t)n * sizeof *grp);
  if (!grp) return bind_error(b, EXEC_NOMEM, m->off, "out of memory");
  memcpy(grp, s->group, (size_t)s->n_group * sizeof *grp);
  for (int k = m->nkeys; k < m->n; k++)
    if (!(grp[s->n_group + k - m->nkeys] = column_node(b, base + k, m->sub->proj[k]->type, true,
                                                        m->off)))
      return b->rc;
  s->group = grp;
  s->n_group = n;
  return EXEC_OK;
}

int bind_semis(binder *b, plan_select *s) {
  int ns = b->n_semis;
  if (!ns) return EXEC_OK;
  b->n_semis = 0;
  uint32_t off0 = b->semis[0].off;
  if (!s->n_from && !s->table)
    return bind_error(b, EXEC_ERROR, off0, "x IN (SELECT ...) in a WHERE needs a FROM");
  int n0 = s->n_from ? s->n_from : 1;
  int base = s->n_from ? s->n_slots : s->table->n_columns;
  plan_from *from = plan_arena_alloc(b->A, (size_t)(n0 + ns) * sizeof *from);
  int extra = 0;
  for (int i = 0; i < ns; i++) extra += b->semis[i].n;
  const char **names = plan_arena_alloc(b->A, (size_t)(base + extra + 1) * sizeof *names);
  if (!from || !names) return bind_error(b, EXEC_NOMEM, off0, "out of memory");
  if (s->n_from) {
    memcpy(from, s->from, (size_t)n0 * sizeof *from);
  } else { /* the one table becomes the first input of the joins */
    from[0].table = s->table;
    from[0].name = b->alias ? b->alias : s->table->name;
  }
  memcpy(names, s->col_names, (size_t)base * sizeof *names);
  for (int i = 0; i < ns; i++) {
    const struct bind_semi *m = &b->semis[i];
    plan_from *f = &from[n0 + i];
    cat_table *t = stand_in(b, m->sub, NULL, "", m->off);
    if (!t) return b->rc;
    plan_expr *on = NULL; /* x1 = c1 AND x2 = c2 ... */
    for (int k = 0; k < m->n; k++) {
      plan_expr *eq = NULL; /* a scalar subquery's value (k >= nkeys) is read, not matched */
      plan_expr *c = k < m->nkeys ? column_node(b, base + k, m->sub->proj[k]->type, true, m->off)
                                  : NULL;
      if (c && !(eq = bind_node(b, PX_BINARY, m->off, 2))) return b->rc;
      if (k < m->nkeys && !eq) return b->rc;
      if (eq) {
        eq->op = SQL_OP_EQ;
        eq->type = cat_type_of(CAT_T_BOOLEAN);
        eq->nullable = true;
        eq->args[0] = m->x[k];
        eq->args[1] = c;
      }
      if (eq && on) {
        plan_expr *a = bind_node(b, PX_BINARY, m->off, 2);
        if (!a) return b->rc;
        a->op = SQL_OP_AND;
        a->type = eq->type;
        a->nullable = true;
        a->args[0] = on;
        a->args[1] = eq;
        eq = a;
      }
      if (eq) on = eq;
      char buf[300];
      snprintf(buf, sizeof buf, "(subquery %d).%s", i + 1, t->columns[k].name);
      names[base + k] = plan_arena_strndup(b->A, buf, strlen(buf));
      if (!names[base + k]) return bind_error(b, EXEC_NOMEM, m->off, "out of memory");
    }
    f->table = t;
    f->name = t->name;
    f->sub = m->sub;
    f->base = base;
    f->join = m->kind;
    f->on = on;
    f->off = m->off;
    if (m->nkeys < m->n && group_dependent(b, s, m, base)) return b->rc;
    base += m->n;
  }
  s->from = from;
  s->n_from = n0 + ns;
  s->n_slots = base;
  s->col_names = names;
  s->table = NULL;
  return EXEC_OK;
}

/* Binding a join's ON condition (planner/bind_from.c names the clause "ON" there). */
static bool in_on(const binder *b) {
  return b->agg_mode == BIND_AGG_NO && b->agg_where && strcmp(b->agg_where, "ON") == 0;
}

plan_expr *bind_subquery_expr(binder *b, const sql_expr *x) {
  /* in an ON condition the LEFT JOIN's value would be read by the join it is a condition of,
     before that LEFT JOIN has run (every row passed it, or none): run per outer row there */
  if (x->kind == SQL_E_SUBQUERY && !in_on(b) && bind_decorrelatable(b, x, false))
    return bind_correlated_scalar(b, x); /* a LEFT JOIN (planner/bind_correlated.c) */
  bind_corr c;
  plan_select *s = sub_query(b, x, &c);
  if (!s) return NULL;
  bool scalar = x->kind == SQL_E_SUBQUERY, in = x->kind == SQL_E_IN;
  int n = in && x->left->kind == SQL_E_ROW ? x->left->list->n : 1;
  if (scalar && s->n_out != 1) {
    bind_error(b, EXEC_ERROR, x->off, "a scalar subquery gives one column, not %d", s->n_out);
    return NULL;
  }
  cat_type *ct = in ? in_types(b, x, s, n) : NULL;
  if (in && !ct) return NULL;
  bool key_list = b->key_list_term;
  b->key_list_term = false;
  if (c.n) return bind_apply(b, x, s, &c, ct); /* correlated: per outer row */
  plan_bound *pb = b->bound;
  plan_subquery *subs = plan_arena_alloc(b->A, (size_t)(pb->n_subs + 1) * sizeof *subs);
  plan_expr *e = bind_node(b, PX_PARAM, x->off, 0);
  if (!subs || !e) {
    if (!b->rc) bind_error(b, EXEC_NOMEM, x->off, "out of memory");
    return NULL;
  }
  if (pb->n_subs) memcpy(subs, pb->subs, (size_t)pb->n_subs * sizeof *subs);
  plan_subquery *q = &subs[pb->n_subs];
  q->kind = x->kind;
  q->sel = s;
  q->param = pb->n_params + pb->n_subs + 1;
  q->off = x->off;
  q->key_list = key_list;
  pb->key_lists |= key_list;
  pb->subs = subs;
  pb->n_subs++;
  e->param = q->param;
  e->func = pb->n_subs; /* EXPLAIN prints (SUBQUERY n) */
  e->type = scalar ? s->proj[0]->type : cat_type_of(CAT_T_BOOLEAN);
  e->nullable = scalar;
  if (in) { /* x [NOT] IN (values): IN_SET(x, the hash set of the subquery's rows) */
    e->type = cat_type_of(CAT_T_VARBINARY);
    e->nullable = false;
    return bind_in_values(b, x, e, ct, n);
  }
  return e;
}
