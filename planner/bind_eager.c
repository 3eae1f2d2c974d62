/*
** planner/bind_eager.c: aggregation before a join that cannot multiply rows (issue 16), the
** rewrite known as eager aggregation or group-by pushdown. A query
**
**   SELECT S.STATION, COUNT(*), AVG(R.PM25) FROM SENSOR R JOIN STATIONS S
**     ON R.STATION = S.STATION WHERE S.TYPE = 'x' AND R.TS >= ? GROUP BY S.STATION
**
** whose aggregates read one table (R) only, joined to another (S) on S's whole primary key (so
** each R row meets at most one S row), grouped by R's join columns (or the S key columns they
** equal) and any S columns, gives the same rows as
**
**   SELECT S.STATION, G.A1, G.A2 FROM (SELECT R.STATION AS K1, COUNT(*) AS A1, AVG(R.PM25)
**     AS A2 FROM SENSOR R WHERE R.TS >= ? AND R.STATION IN (SELECT S.STATION FROM STATIONS
**     S WHERE S.TYPE = 'x') GROUP BY R.STATION) G JOIN STATIONS S ON G.K1 = S.STATION
**     WHERE S.TYPE = 'x'
**
** (the IN only when R's join column is a primary-key column of R: its values become R's key
** range, planner/bind_subquery.c key_list). R's rows are then aggregated on the plans of one
** table (a skip scan of the wanted keys, streaming or columnar aggregates) and the join meets
** one row per group instead of one per reading; the column names and order are the query's
** (EXPLAIN shows the derived table as "(grouped)", its columns "(key 1)", "(aggregate 1)").
** Taken only when every part of the query fits: two tables (not views, WITH names or derived
** tables) joined by INNER JOIN or a comma, equalities covering S's key, WHERE terms each on R
** or on S alone or such an equality, no subquery, no hint, no `*`, GROUP BY columns only,
** every column outside an aggregate a GROUP BY one, qualified or of one table only, and no
** table or column named as the rewrite's own names. Anything else is bound as written.
**
** Not here: binding (planner/bind_stmt.c bind_select_core calls bind_eager first).
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalog/cat_view.h"
#include "catalog/func_id.h"
#include "catalog/status.h"
#include "planner/plan_bind.h"
#include "sql/ast.h"

#define MAX_ITEMS 32 /* join pairs, group columns, aggregates, WHERE terms */

static const char GALIAS[] = "(grouped)"; /* the derived table's name in EXPLAIN */

typedef struct eager {
  binder *b;
  const sql_select *q;
  const cat_table *rt, *st; /* R (aggregated) and S (joined on its key) */
  const char *rn, *sn;      /* their names as the query qualifies them */
  const char *ra, *rtn, *sa, *stn; /* their aliases (or NULL) and table names */
  int ri;                   /* 0: R is q's first FROM item, 1: its join */
  /* the columns GROUP BY names as written: outside an aggregate only these may be read */
  int ng;
  int gside[MAX_ITEMS];
  const char *gcolname[MAX_ITEMS];
  /* join pairs R.rc[i] = S.sc[i] */
  int np;
  const char *rc[MAX_ITEMS], *sc[MAX_ITEMS];
  int pk[MAX_ITEMS];        /* pair i's R column is grouped column K(pk[i] + 1) */
  int nj;                   /* the distinct R join columns: K1 .. K(nj) */
  /* R columns grouped (join columns first), their derived names K1.. */
  int nk;
  const char *kc[MAX_ITEMS];
  /* aggregate calls, their printed texts (deduplicated), derived names A1.. */
  int na;
  const sql_expr *agg[MAX_ITEMS];
  char *atext[MAX_ITEMS];
  /* WHERE terms */
  int nr, ns;
  const sql_expr *rterm[MAX_ITEMS], *sterm[MAX_ITEMS];
  bool ok;                  /* still applicable */
} eager;

static void *alloc(eager *g, size_t n) {
  void *p = plan_arena_alloc(g->b->A, n);
  if (p) memset(p, 0, n);
  else g->ok = false;
  return p;
}

static char *dup(eager *g, const char *s) {
  char *p = plan_arena_strndup(g->b->A, s, strlen(s));
  if (!p) g->ok = false;
  return p;
}

/* Which table column x is of: 0 R, 1 S, -1 neither or unclear (a name both tables have,
** unqualified); *col its name. */
static int side(const eager *g, const sql_expr *x, const char **col) {
  if (x->kind != SQL_E_COLUMN || x->nname > 2) return -1;
  const char *c = x->name[x->nname - 1];
  *col = c;
  bool r = cat_find_column(g->rt, c) >= 0, s = cat_find_column(g->st, c) >= 0;
  if (x->nname == 2) {
    bool rq = bind_names_item(x->name[0], g->ra, g->rtn), sq = bind_names_item(x->name[0], g->sa, g->stn);
    if (rq == sq) return -1;
    r = r && rq;
    s = s && sq;
  }
  return r == s ? -1 : r ? 0 : 1;
}

static bool is_agg(const sql_expr *e) {
  return e->kind == SQL_E_FUNC && e->text && cat_func_is_aggregate(e->text) && !e->within;
}

/* The tables of e's columns as a mask (1 R, 2 S); 4 for anything that stops the rewrite
** (a subquery, an unclear column, a sequence). */
static int tables_of(const eager *g, const sql_expr *e) {
  if (!e) return 0;
  if (e->sub || e->kind == SQL_E_SEQUENCE) return 4;
  if (e->kind == SQL_E_COLUMN) {
    const char *c;
    int sd = side(g, e, &c);
    return sd < 0 ? 4 : 1 << sd;
  }
  int m = tables_of(g, e->left) | tables_of(g, e->right) | tables_of(g, e->third);
  for (int i = 0; e->list && i < e->list->n; i++) m |= tables_of(g, e->list->a[i]);
  return m;
}

static int split(const sql_expr *e, const sql_expr **t, int n) {
  if (!e || n < 0) return n;
  if (e->kind == SQL_E_BINARY && e->op == SQL_OP_AND) return split(e->right, t, split(e->left, t, n));
  if (n >= MAX_ITEMS) return -1;
  t[n] = e;
  return n + 1;
}

/* An equality R.c = S.d: recorded as a join pair (true). */
static bool join_pair(eager *g, const sql_expr *e) {
  if (e->kind != SQL_E_BINARY || e->op != SQL_OP_EQ) return false;
  const char *a, *c;
  int sa = side(g, e->left, &a), sb = side(g, e->right, &c);
  if (sa < 0 || sb < 0 || sa == sb || g->np == MAX_ITEMS) return false;
  g->rc[g->np] = sa == 0 ? a : c;
  g->sc[g->np++] = sa == 0 ? c : a;
  return true;
}

/* The R column an S key column equals, or NULL. */
static const char *r_of_s(const eager *g, const char *s) {
  for (int i = 0; i < g->np; i++)
    if (strcmp(g->sc[i], s) == 0) return g->rc[i];
  return NULL;
}

static int key_index(eager *g, const char *rcol) {
  for (int i = 0; i < g->nk; i++)
    if (strcmp(g->kc[i], rcol) == 0) return i;
  if (g->nk == MAX_ITEMS) return g->ok = false, -1;
  g->kc[g->nk] = rcol;
  return g->nk++;
}

/* ---- The rewritten expressions ---------------------------------------------------------- */
/* The name of the derived table's i-th key ('K') or aggregate ('A') column: "(key 1)",
** "(aggregate 1)" (a table or column written with such a name stops the rewrite: clashes). */
static void gname(char prefix, int i, char *buf, size_t cap) {
  snprintf(buf, cap, "(%s %d)", prefix == 'K' ? "key" : "aggregate", i + 1);
}

static sql_expr *gcol(eager *g, char prefix, int i, uint32_t off) {
  sql_expr *c = alloc(g, sizeof *c);
  char name[32];
  gname(prefix, i, name, sizeof name);
  if (!c || !(c->name[0] = dup(g, GALIAS)) || !(c->name[1] = dup(g, name))) return NULL;
  c->kind = SQL_E_COLUMN;
  c->nname = 2;
  c->off = off;
  c->height = 1;
  return c;
}

/* e over the derived table: aggregates and R's grouped columns read from it, S's columns as
** they are; NULL with g->ok false when e reads an R column that is not grouped. */
static sql_expr *rw(eager *g, const sql_expr *e) {
  if (!e || !g->ok) return NULL;
  if (is_agg(e)) {
    int m = 0;
    for (int i = 0; e->list && i < e->list->n; i++) m |= tables_of(g, e->list->a[i]);
    if (m & ~1) return g->ok = false, NULL; /* an aggregate of S's columns */
    char *t = sql_print_expr(e, 0);
    if (!t) return g->ok = false, NULL;
    int k = 0;
    while (k < g->na && strcmp(g->atext[k], t) != 0) k++;
    if (k == g->na) {
      if (k == MAX_ITEMS || !(g->atext[k] = dup(g, t))) k = -1;
      else g->agg[g->na++] = e;
    }
    free(t);
    return k < 0 ? (g->ok = false, NULL) : gcol(g, 'A', k, e->off);
  }
  if (e->kind == SQL_E_COLUMN) { /* a GROUP BY column, as the query would require */
    const char *c;
    int sd = side(g, e, &c), k = -1;
    bool grouped = false;
    for (int i = 0; sd >= 0 && i < g->ng; i++)
      grouped = grouped || (g->gside[i] == sd && strcmp(g->gcolname[i], c) == 0);
    if (!grouped) return g->ok = false, NULL; /* the binder's error, from the query as written */
    if (sd == 1) return (sql_expr *)e; /* S's: the join keeps it */
    for (int i = 0; i < g->nk; i++)
      if (strcmp(g->kc[i], c) == 0) k = i;
    return k < 0 ? (g->ok = false, NULL) : gcol(g, 'K', k, e->off);
  }
  if (e->sub || e->kind == SQL_E_SEQUENCE) return g->ok = false, NULL;
  sql_expr *c = alloc(g, sizeof *c);
  if (!c) return NULL;
  *c = *e;
  if (e->left && !(c->left = rw(g, e->left))) return NULL;
  if (e->right && !(c->right = rw(g, e->right))) return NULL;
  if (e->third && !(c->third = rw(g, e->third))) return NULL;
  if (e->list) {
    sql_expr_list *l = alloc(g, sizeof *l);
    sql_expr **a = l ? alloc(g, (size_t)(e->list->n ? e->list->n : 1) * sizeof *a) : NULL;
    if (!a) return NULL;
    l->n = l->cap = e->list->n;
    l->a = a;
    for (int i = 0; i < e->list->n; i++)
      if (!(a[i] = rw(g, e->list->a[i]))) return NULL;
    c->list = l;
  }
  return c;
}

static sql_expr *and_all(eager *g, const sql_expr *const *t, int n) {
  sql_expr *w = n ? (sql_expr *)t[0] : NULL;
  for (int i = 1; i < n && w; i++) {
    sql_expr *a = alloc(g, sizeof *a);
    if (!a) return NULL;
    a->kind = SQL_E_BINARY;
    a->op = SQL_OP_AND;
    a->off = w->off;
    a->left = w;
    a->right = (sql_expr *)t[i];
    a->height = 1 + (w->height > t[i]->height ? w->height : t[i]->height);
    w = a;
  }
  return w;
}

static sql_expr *col_ref(eager *g, const char *q, const char *c, uint32_t off) {
  sql_expr *x = alloc(g, sizeof *x);
  if (!x || !(x->name[0] = dup(g, q)) || !(x->name[1] = dup(g, c))) return NULL;
  x->kind = SQL_E_COLUMN;
  x->nname = 2;
  x->off = off;
  x->height = 1;
  return x;
}

static sql_expr *eq(eager *g, sql_expr *l, sql_expr *r) {
  sql_expr *e = l && r ? alloc(g, sizeof *e) : NULL;
  if (!e) return NULL;
  e->kind = SQL_E_BINARY;
  e->op = SQL_OP_EQ;
  e->off = l->off;
  e->left = l;
  e->right = r;
  e->height = 2;
  return e;
}

static sql_result_list *results(eager *g, int n) {
  sql_result_list *l = alloc(g, sizeof *l);
  sql_result_col *a = l ? alloc(g, (size_t)n * sizeof *a) : NULL;
  if (!a) return NULL;
  l->n = l->cap = n;
  l->a = a;
  return l;
}

/* ---- The rewrite ------------------------------------------------------------------------ */
/* t (known as alias, or NULL) has a name the rewrite writes: the derived table's "(grouped)",
** or a column or family named like its columns "(key 1)", "(aggregate 1)" (quoted names can
** be anything). An unqualified name of the query would then read the derived table's. */
static bool clashes(const cat_table *t, const char *alias) {
  if (!t || (alias && strcmp(alias, GALIAS) == 0) || bind_names_item(GALIAS, NULL, t->name) ||
      cat_find_family(t, GALIAS) >= 0)
    return true;
  for (int i = 0; i < t->n_columns; i++)
    if (strncmp(t->columns[i].name, "(key ", 5) == 0 ||
        strncmp(t->columns[i].name, "(aggregate ", 11) == 0)
      return true;
  return false;
}

/* The query's parts checked and collected into g; false when the rewrite does not apply. */
static bool collect(eager *g) {
  const sql_select *q = g->q;
  const sql_join *j = &q->joins->a[0];
  /* R: the table whose columns the first aggregate reads */
  const sql_expr *first = NULL;
  for (int i = 0; i < q->cols->n && !first; i++) {
    const sql_expr *e = q->cols->a[i].expr;
    if (!e) return false; /* `*` */
    if (is_agg(e) && e->list && e->list->n) first = e;
  }
  for (g->ri = 0; g->ri < 2; g->ri++) {
    g->rtn = g->ri ? j->table : q->table;
    g->ra = g->ri ? j->alias : q->alias;
    g->stn = g->ri ? q->table : j->table;
    g->sa = g->ri ? q->alias : j->alias;
    g->rt = cat_find_table(g->b->cat, g->rtn);
    g->st = cat_find_table(g->b->cat, g->stn);
    if (!first || tables_of(g, first->list->a[0]) == 1) break;
  }
  if (g->ri == 2 || !g->rt || !g->st || clashes(g->rt, g->ra) || clashes(g->st, g->sa))
    return false;
  g->rn = g->ri ? (j->alias ? j->alias : j->table) : (q->alias ? q->alias : q->table);
  g->sn = g->ri ? (q->alias ? q->alias : q->table) : (j->alias ? j->alias : j->table);
  /* the ON and WHERE terms: join pairs, R's, S's */
  const sql_expr *t[2 * MAX_ITEMS];
  int nt = split(j->on, t, 0);
  nt = nt < 0 ? nt : split(q->where, t, nt);
  if (nt < 0) return false;
  for (int i = 0; i < nt; i++) {
    int m = tables_of(g, t[i]);
    if (m == 3 && join_pair(g, t[i])) continue;
    if (m == 1 && g->nr < MAX_ITEMS) g->rterm[g->nr++] = t[i];
    else if (m == 2 && g->ns < MAX_ITEMS) g->sterm[g->ns++] = t[i];
    else if (m != 0) return false; /* a term on both that is no key equality */
    else return false;             /* a constant term: rare, left as written */
  }
  /* S's whole key equal to R columns: each R row meets at most one S row */
  for (int i = 0; i < g->st->n_columns; i++)
    if (g->st->columns[i].pk_pos >= 0 && !r_of_s(g, g->st->columns[i].name)) return false;
  for (int i = 0; i < g->np; i++) /* the grouped R columns start with the join's (one R
                                       column may equal two S columns, or one twice) */
    if ((g->pk[i] = key_index(g, g->rc[i])) < 0) return false;
  g->nj = g->nk;
  /* GROUP BY: R's join columns (or the S key columns equal to them), other R columns, S
     columns; every join column grouped */
  bool grouped[MAX_ITEMS] = {false};
  for (int i = 0; i < q->group->n; i++) {
    const char *c;
    int sd = side(g, q->group->a[i], &c);
    if (sd < 0 || g->ng == MAX_ITEMS) return false;
    g->gside[g->ng] = sd;
    g->gcolname[g->ng++] = c;
    const char *r = sd == 0 ? c : r_of_s(g, c);
    if (!r) continue; /* an S column: S's key is grouped, so it splits no group */
    int k = key_index(g, r);
    if (k < 0) return false;
    if (k < g->nj) grouped[k] = true;
  }
  for (int i = 0; i < g->nj; i++)
    if (!grouped[i]) return false;
  return g->ok;
}

/* The derived table: R's grouped columns and aggregates, R's terms (and the IN of S's keys),
** grouped by those columns. */
static sql_select *derived(eager *g) {
  const sql_select *q = g->q;
  const sql_join *j = &q->joins->a[0];
  sql_select *d = alloc(g, sizeof *d);
  sql_result_list *cols = d ? results(g, g->nk + g->na) : NULL;
  sql_expr_list *grp = cols ? alloc(g, sizeof *grp) : NULL;
  sql_expr **ga = grp ? alloc(g, (size_t)g->nk * sizeof *ga) : NULL;
  if (!ga) return NULL;
  d->off = q->off;
  d->table = g->ri ? j->table : q->table;
  d->alias = g->ri ? j->alias : q->alias;
  d->table_off = g->ri ? j->table_off : q->table_off;
  for (int i = 0; i < g->nk; i++) {
    char name[32];
    gname('K', i, name, sizeof name);
    if (!(ga[i] = col_ref(g, g->rn, g->kc[i], q->off)) || !(cols->a[i].alias = dup(g, name)))
      return NULL;
    cols->a[i].expr = ga[i];
    cols->a[i].off = q->off;
  }
  for (int i = 0; i < g->na; i++) {
    char name[32];
    gname('A', i, name, sizeof name);
    sql_result_col *c = &cols->a[g->nk + i];
    c->expr = (sql_expr *)g->agg[i];
    c->off = g->agg[i]->off;
    if (!(c->alias = dup(g, name))) return NULL;
  }
  grp->n = grp->cap = g->nk;
  grp->a = ga;
  d->cols = cols;
  d->group = grp;
  const sql_expr *terms[MAX_ITEMS + 1];
  int n = 0;
  for (int i = 0; i < g->nr; i++) terms[n++] = g->rterm[i];
  int pk = g->np == 1 ? cat_find_column(g->rt, g->rc[0]) : -1;
  if (pk >= 0 && g->rt->columns[pk].pk_pos >= 0) { /* R.k IN (SELECT S.key FROM S WHERE ...) */
    sql_select *in = alloc(g, sizeof *in);
    sql_result_list *ic = in ? results(g, 1) : NULL;
    sql_expr *x = ic ? alloc(g, sizeof *x) : NULL;
    if (!x) return NULL;
    in->off = q->off;
    in->table = g->ri ? q->table : j->table;
    in->alias = g->ri ? q->alias : j->alias;
    in->table_off = g->ri ? q->table_off : j->table_off;
    in->where = and_all(g, g->sterm, g->ns);
    ic->a[0].expr = col_ref(g, g->sn, g->sc[0], q->off);
    ic->a[0].off = q->off;
    in->cols = ic;
    x->kind = SQL_E_IN;
    x->off = q->off;
    x->left = col_ref(g, g->rn, g->rc[0], q->off);
    x->sub = in;
    x->height = 2;
    if (!ic->a[0].expr || !x->left || (g->ns && !in->where)) return NULL;
    terms[n++] = x;
    g->b->bound->n_tables--; /* S read twice, written once (AS OF counts the tables) */
  }
  d->where = and_all(g, terms, n);
  return n && !d->where ? NULL : d;
}

int bind_eager(binder *b, const sql_select *q, const sql_select **out) {
  *out = q;
  if (q->setop || q->with || q->sub || q->hint || q->dyn || q->distinct || !q->table ||
      !q->joins || q->joins->n != 1 || !q->group || !q->cols || b->pre_from || b->corr)
    return EXEC_OK;
  const sql_join *j = &q->joins->a[0];
  if ((j->kind != SQL_JOIN_INNER && j->kind != SQL_JOIN_COMMA) || j->natural || j->sub ||
      j->using || j->dyn || !j->table)
    return EXEC_OK;
  const char *tn[2] = {q->table, j->table};
  for (int i = 0; i < 2; i++)
    if (bind_find_cte(b, tn[i]) || cat_find_view(b->cat, tn[i]) ||
        !cat_find_table(b->cat, tn[i]))
      return EXEC_OK;
  eager g;
  memset(&g, 0, sizeof g);
  g.b = b;
  g.q = q;
  g.ok = true;
  if (!collect(&g)) return EXEC_OK;
  /* the outer query over the grouped rows: its select list (names as written), HAVING as a
     WHERE term with S's terms, ORDER BY; no GROUP BY (one row per group) */
  sql_select *o = alloc(&g, sizeof *o);
  sql_result_list *cols = o ? results(&g, q->cols->n) : NULL;
  if (!cols) return b->rc;
  *o = *q;
  o->group = NULL;
  o->having = NULL;
  o->hint = NULL;
  for (int i = 0; i < q->cols->n && g.ok; i++) {
    const sql_result_col *rc = &q->cols->a[i];
    cols->a[i] = *rc;
    cols->a[i].expr = rw(&g, rc->expr);
    if (!rc->alias && g.ok && rc->expr->kind == SQL_E_COLUMN) { /* as bind_select_core names
                                                                   a column: its own name */
      cols->a[i].alias = dup(&g, rc->expr->name[rc->expr->nname - 1]);
    } else if (!rc->alias && g.ok) { /* the name the column had */
      char *t = sql_print_expr(rc->expr, 0);
      cols->a[i].alias = t ? dup(&g, t) : NULL;
      g.ok = g.ok && t;
      free(t);
    }
  }
  o->cols = cols;
  const sql_expr *wt[MAX_ITEMS + 1];
  int nw = 0;
  for (int i = 0; i < g.ns; i++) wt[nw++] = g.sterm[i];
  if (q->having && g.ok) wt[nw++] = rw(&g, q->having);
  if (q->order && g.ok) {
    sql_order_list *ol = alloc(&g, sizeof *ol);
    sql_order_term *oa = ol ? alloc(&g, (size_t)q->order->n * sizeof *oa) : NULL;
    for (int i = 0; oa && i < q->order->n && g.ok; i++) {
      oa[i] = q->order->a[i];
      const sql_expr *e = q->order->a[i].expr;
      /* a position or an output name stays; anything else over the grouped rows */
      if (e->kind == SQL_E_LITERAL || (e->kind == SQL_E_COLUMN && e->nname == 1 &&
                                       side(&g, e, &(const char *){NULL}) < 0))
        continue;
      oa[i].expr = rw(&g, e);
    }
    if (oa) {
      ol->n = ol->cap = q->order->n;
      ol->a = oa;
      o->order = ol;
    }
  }
  sql_select *d = g.ok ? derived(&g) : NULL;
  if (!g.ok || !d) {
    if (!g.ok && !b->rc) return EXEC_OK; /* not applicable after all: bound as written */
    return b->rc ? b->rc : bind_error(b, EXEC_NOMEM, q->off, "out of memory");
  }
  /* FROM (derived) "(grouped)" JOIN S ON "(grouped)".K1 = S.key1 AND ... */
  sql_join_list *jl = alloc(&g, sizeof *jl);
  sql_join *ja = jl ? alloc(&g, sizeof *ja) : NULL;
  if (!ja) return b->rc ? b->rc : bind_error(b, EXEC_NOMEM, q->off, "out of memory");
  const sql_expr *on[MAX_ITEMS];
  for (int i = 0; i < g.np; i++)
    if (!(on[i] = eq(&g, gcol(&g, 'K', g.pk[i], j->off), col_ref(&g, g.sn, g.sc[i], j->off))))
      return bind_error(b, EXEC_NOMEM, q->off, "out of memory");
  *ja = *j;
  ja->kind = SQL_JOIN_INNER;
  ja->table = g.ri ? q->table : j->table;
  ja->alias = g.ri ? q->alias : j->alias;
  ja->table_off = g.ri ? q->table_off : j->table_off;
  ja->on = and_all(&g, on, g.np);
  jl->n = jl->cap = 1;
  jl->a = ja;
  o->table = NULL;
  o->alias = dup(&g, GALIAS);
  o->sub = d;
  o->joins = jl;
  o->where = and_all(&g, wt, nw);
  if (!g.ok || !ja->on || (nw && !o->where))
    return b->rc ? b->rc : bind_error(b, EXEC_NOMEM, q->off, "out of memory");
  *out = o;
  return EXEC_OK;
}
