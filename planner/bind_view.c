/*
** planner/bind_view.c: views in the statements the binder binds (Phoenix's views; the
** catalog keeps each as its CREATE VIEW text, catalog/cat_view.h).
**
**  - A view's text is parsed again at each bind; the tree lives as long as the bound
**    statement (plan_arena_defer). A view's query never sees the WITH items of the query
**    that uses it, and an error inside it names the view and points at the place where the
**    statement uses it.
**  - Merged views: a view written `SELECT * FROM x [WHERE c]` (Phoenix's form: no join,
**    DISTINCT, GROUP BY, HAVING, ORDER BY, LIMIT or set operation), x a table or a merged
**    view, is not a subquery: a SELECT naming it alone in FROM is bound as the same SELECT
**    over the table with the views' conditions ANDed before its own WHERE (innermost view
**    first), so it is planned exactly as that query written against the table: the view's
**    key-column constants become key ranges and EXPLAIN shows the table's scan. Inside
**    the query the view's name (or the alias given) is the table's name.
**  - Every other use of a view (a view with a join, an aggregate, a subquery in FROM, a set
**    operation, or any view used in a join) is a derived table (planner/bind_subquery.c).
**  - Columns of a view's own (Phoenix's multi-tenant pattern, catalog/cat_view.h): a merged
**    chain whose views have them binds over a copy of the table with those columns after
**    its own (innermost view first), each with its family and its id in the table's rows,
**    so reads, filters, UPSERT and DELETE through the view use them as table columns; the
**    copy lives in the binder's arena. Such a view in a join is the derived table `SELECT *
**    FROM v` (its own query would show only what it reads).
**  - Updatable views (Phoenix's): a merged view chain whose conditions are all terms
**    `column = constant` joined by AND. UPSERT INTO such a view writes the table's row
**    with those columns set to the constants (a VALUES value given for one must equal it;
**    UPSERT SELECT must leave them out of its column list), DELETE FROM it deletes only the
**    rows its conditions select. Through any other view both are refused as read-only.
**
** Not here: storing views (catalog/cat_view.c), CREATE / DROP VIEW (exec/ddl_view.c).
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalog/cat_view.h"
#include "catalog/status.h"
#include "catalog/value.h"
#include "planner/bind_view.h"
#include "sql/parser.h"

static void free_stmt(void *p) { sql_stmt_free(p); }

/* Add to b's error the view it came from and the place of the use (off in b->sql). */
static void in_view(binder *b, const cat_view *v, uint32_t off) {
  if (!b->rc || b->rc == EXEC_NOMEM || !b->msg || !b->cap) return;
  char inner[512], pos[64];
  snprintf(inner, sizeof inner, "%s", b->msg);
  plan_position(b->sql, off, pos, sizeof pos);
  /* the inner position is in the view's text; the statement's is the use of the view */
  snprintf(b->msg, b->cap, "view %s does not bind: %s of its text \"%s\"%s", v->name, inner,
           v->sql, pos);
  if (b->err_off) *b->err_off = (int)off;
}

/* The query of view v, parsed from its text (freed with b's arena); NULL with b's error. */
static const sql_select *view_query(binder *b, const cat_view *v, uint32_t off) {
  sql_stmt *st = NULL;
  sql_error pe;
  int rc = sql_parse(v->sql, strlen(v->sql), &st, NULL, &pe);
  if (rc == SQL_ERR_NOMEM) {
    bind_error(b, EXEC_NOMEM, off, "out of memory");
    return NULL;
  }
  if (rc || !st || st->kind != SQL_STMT_CREATE_VIEW) {
    sql_stmt_free(st);
    bind_error(b, EXEC_CORRUPT, off, "view %s: its stored text is not a CREATE VIEW (%s)",
               v->name, rc ? pe.message : "another statement");
    return NULL;
  }
  if (plan_arena_defer(b->A, free_stmt, st)) {
    bind_error(b, EXEC_NOMEM, off, "out of memory");
    return NULL;
  }
  return st->u.create_view->select;
}

/* Is q a view query that merges into the query using it (`SELECT * FROM x [WHERE c]`)? Not
** with dynamic columns after x (`FROM t (f.c TYPE)`): such a view is bound whole, as a
** derived table, so it can have no columns of its own and is never written through. */
static bool mergeable(const sql_select *q) {
  const sql_result_col *c = q->cols && q->cols->n == 1 ? &q->cols->a[0] : NULL;
  return !q->setop && !q->with && !q->sub && !q->dyn && q->table && !q->joins && !q->distinct &&
         !q->group && !q->having && !q->order && !q->limit && !q->offset && c && !c->expr &&
         (c->nqual == 0 ||
          (c->nqual == 1 && strcmp(c->qual[0], q->alias ? q->alias : q->table) == 0));
}

bool plan_view_merges(const cat_catalog *cat, const sql_select *q) {
  sql_stmt *st = NULL;
  bool merges = false;
  for (int d = 0; q && d <= BIND_VIEW_DEPTH && mergeable(q); d++) {
    if (cat_find_table(cat, q->table)) {
      merges = true;
      break;
    }
    const cat_view *v = cat_find_view(cat, q->table);
    sql_stmt_free(st);
    st = NULL;
    q = v && sql_parse(v->sql, strlen(v->sql), &st, NULL, NULL) == SQL_OK && st &&
                st->kind == SQL_STMT_CREATE_VIEW
            ? st->u.create_view->select
            : NULL;
  }
  sql_stmt_free(st);
  return merges;
}

/* The table the merged chain c reads with the columns of the chain's views' own after its
** own (innermost view first, each in its order): a copy in b's arena sharing everything
** else with the table, or the table itself when no view of c has columns. NULL with b's
** error. */
static const cat_table *with_view_columns(binder *b, const bind_view_chain *c, uint32_t off) {
  const cat_table *t = c->table;
  int extra = 0;
  for (int i = 0; i < c->n; i++) extra += c->views[i]->n_columns;
  if (!extra) return t;
  cat_table *w = plan_arena_alloc(b->A, sizeof *w);
  cat_column *cols = plan_arena_alloc(b->A, (size_t)(t->n_columns + extra) * sizeof *cols);
  if (!w || !cols) return bind_error(b, EXEC_NOMEM, off, "out of memory"), NULL;
  *w = *t;
  memcpy(cols, t->columns, (size_t)t->n_columns * sizeof *cols);
  int k = t->n_columns;
  for (int i = c->n - 1; i >= 0; i--)
    for (int j = 0; j < c->views[i]->n_columns; j++) {
      const cat_view_column *vc = &c->views[i]->columns[j];
      int fam = cat_find_family(t, vc->family);
      if (fam <= 0)
        return bind_error(b, EXEC_CORRUPT, off, "view %s: the family %s of its column %s is "
                          "not a family of %s", c->views[i]->name, vc->family, vc->name,
                          t->name), NULL;
      cat_column *col = &cols[k++];
      memset(col, 0, sizeof *col);
      col->name = vc->name;
      col->type = vc->type;
      col->nullable = true;
      col->pk_pos = -1;
      col->family = fam;
      col->id = vc->id;
      col->view_column = true; /* its cells do not count for the table's row cover */
    }
  w->columns = cols;
  w->n_columns = k;
  return w;
}

int bind_view_chain_of(binder *b, const char *name, uint32_t off, bind_view_chain *c) {
  memset(c, 0, sizeof *c);
  const cat_view *v = name ? cat_find_view(b->cat, name) : NULL;
  if (!v) return BIND_VIEW_NONE;
  c->outer = v;
  while (v) {
    if (c->n == BIND_VIEW_DEPTH) {
      bind_error(b, EXEC_TOOBIG, off, "view %s: views nested more than %d deep", c->outer->name,
                 BIND_VIEW_DEPTH);
      return BIND_VIEW_NONE;
    }
    const sql_select *q = view_query(b, v, off);
    if (!q) return BIND_VIEW_NONE;
    if (!mergeable(q)) return BIND_VIEW_DERIVED;
    c->views[c->n] = v;
    c->q[c->n++] = q;
    c->table = cat_find_table(b->cat, q->table);
    if (c->table) {
      c->table = with_view_columns(b, c, off);
      return c->table ? BIND_VIEW_MERGED : BIND_VIEW_NONE;
    }
    v = cat_find_view(b->cat, q->table);
    if (!v) {
      bind_error(b, EXEC_ERROR, off, "view %s reads %s, which is no longer a table or view",
                 c->views[c->n - 1]->name, q->table);
      return BIND_VIEW_NONE;
    }
  }
  return BIND_VIEW_NONE;
}

/* l AND r (either may be NULL). */
static plan_expr *and_of(binder *b, plan_expr *l, plan_expr *r, uint32_t off) {
  if (!l || !r) return l ? l : r;
  plan_expr *a = bind_node(b, PX_BINARY, off, 2);
  if (!a) return NULL;
  a->op = SQL_OP_AND;
  a->type = cat_type_of(CAT_T_BOOLEAN);
  a->nullable = l->nullable || r->nullable;
  a->args[0] = l;
  a->args[1] = r;
  return bind_fold(b, a);
}

plan_expr *bind_view_where(binder *b, const bind_view_chain *c, uint32_t off, bool semis) {
  const char *sql = b->sql, *alias = b->alias, *self = b->cte_self;
  const struct bind_cte *ctes = b->ctes;
  const cat_table *table = b->table;
  plan_expr *acc = NULL;
  for (int i = c->n - 1; i >= 0 && !b->rc; i--) {
    const sql_select *q = c->q[i];
    if (!q->where) continue;
    b->sql = c->views[i]->sql; /* positions of its errors: the view's text */
    b->alias = q->alias ? q->alias : q->table;
    b->table = c->table;
    b->ctes = NULL;
    b->cte_self = NULL;
    int mode = b->agg_mode;
    const char *where = b->agg_where;
    b->agg_mode = BIND_AGG_NO;
    b->agg_where = "WHERE";
    plan_expr *e = semis ? bind_where(b, q->where) : bind_expr(b, q->where);
    if (e && e->type.id != CAT_T_BOOLEAN && e->type.id != 0)
      bind_error(b, EXEC_ERROR, e->off, "WHERE needs a BOOLEAN condition, not %s",
                 cat_type_name(e->type.id));
    b->agg_mode = mode;
    b->agg_where = where;
    b->sql = sql;
    b->ctes = ctes;
    b->cte_self = self;
    if (b->rc) {
      in_view(b, c->views[i], off);
      break;
    }
    acc = and_of(b, acc, e, off);
  }
  b->alias = alias;
  b->table = table;
  return b->rc ? NULL : acc;
}

plan_expr *bind_view_and(binder *b, plan_expr *view_cond, plan_expr *where, uint32_t off) {
  return and_of(b, view_cond, where, off);
}

int bind_view_from(binder *b, const sql_select *q, plan_select *s, plan_expr **cond) {
  *cond = NULL;
  if (!q->table || q->joins || q->sub || b->pre_from || bind_find_cte(b, q->table))
    return BIND_VIEW_NONE;
  bind_view_chain c;
  int kind = bind_view_chain_of(b, q->table, q->table_off, &c);
  if (kind != BIND_VIEW_MERGED) return kind;
  if (b->bound) b->bound->n_tables++; /* the table read, for AS OF (planner/bind_as_of.c) */
  b->table = s->table = c.table;
  b->alias = q->alias ? q->alias : c.outer->name;
  const char **names = plan_arena_alloc(b->A, (size_t)(c.table->n_columns + 1) * sizeof *names);
  if (!names) return bind_error(b, EXEC_NOMEM, q->table_off, "out of memory"), kind;
  for (int i = 0; i < c.table->n_columns; i++) names[i] = c.table->columns[i].name;
  s->col_names = names;
  *cond = bind_view_where(b, &c, q->table_off, true);
  return kind;
}

/* `SELECT * FROM v` for merged view v with columns of its own under it: the query of the
** derived table that stands for v in a join (the view's own query would show only the
** columns of what it reads). Its text goes to *text; NULL with b's error. */
static const sql_select *select_all_of(binder *b, const cat_view *v, uint32_t off,
                                       const char **text) {
  char *name = sql_print_ident(v->name);
  size_t n = name ? strlen(name) + 16 : 0;
  char *t = name ? plan_arena_alloc(b->A, n) : NULL;
  sql_stmt *st = NULL;
  if (t) snprintf(t, n, "SELECT * FROM %s", name);
  free(name);
  if (!t || sql_parse(t, strlen(t), &st, NULL, NULL) != SQL_OK || !st ||
      plan_arena_defer(b->A, free_stmt, st)) {
    sql_stmt_free(st);
    bind_error(b, EXEC_NOMEM, off, "out of memory");
    return NULL;
  }
  *text = t;
  return st->u.select;
}

int bind_view_derived(binder *b, const cat_view *v, const char *alias, uint32_t off,
                      plan_from *f) {
  const sql_select *q = view_query(b, v, off);
  if (!q) return b->rc;
  const char *text = v->sql;
  bind_view_chain c;
  if (bind_view_chain_of(b, v->name, off, &c) == BIND_VIEW_MERGED &&
      c.table != cat_find_table(b->cat, c.table->name))
    q = select_all_of(b, v, off, &text); /* a chain with columns of its own */
  if (!q) return b->rc;
  const char *sql = b->sql, *self = b->cte_self;
  const struct bind_cte *ctes = b->ctes;
  b->sql = text;
  b->ctes = NULL;
  b->cte_self = NULL;
  int n_tables = b->bound ? b->bound->n_tables : 0;
  int rc = bind_derived(b, q, NULL, alias ? alias : v->name, 0, f);
  /* For AS OF (planner/bind_as_of.c) the view is one table read, whatever it reads: the
  ** clause after its name is the only one the statement can give it, and the statement
  ** reads everything at that one time. */
  if (b->bound) b->bound->n_tables = n_tables + 1;
  b->sql = sql;
  b->ctes = ctes;
  b->cte_self = self;
  if (rc) in_view(b, v, off);
  return b->rc;
}

/* ---- UPSERT and DELETE through a view ---------------------------------------------------- */
/* The `column = constant` terms of cond (ANDed) into vt; false when cond has another term. */
static bool constants_of(const plan_expr *e, bind_view_target *vt) {
  if (!e) return true;
  if (e->kind == PX_BINARY && e->op == SQL_OP_AND)
    return constants_of(e->args[0], vt) && constants_of(e->args[1], vt);
  if (e->kind != PX_BINARY || e->op != SQL_OP_EQ) return false;
  const plan_expr *col = e->args[0]->kind == PX_COLUMN ? e->args[0] : e->args[1];
  const plan_expr *k = col == e->args[0] ? e->args[1] : e->args[0];
  if (col->kind != PX_COLUMN || k->kind != PX_CONST || k->value.is_null) return false;
  for (int i = 0; i < vt->n_fixed; i++)
    if (vt->fixed_col[i] == col->column) return false; /* k = 1 AND k = 2: no row to write */
  if (vt->n_fixed == BIND_VIEW_MAX_FIXED) return false;
  vt->fixed_col[vt->n_fixed] = col->column;
  vt->fixed[vt->n_fixed++] = (plan_expr *)k;
  return true;
}

int bind_view_dml(binder *b, const char *name, uint32_t off, const char *verb,
                     bind_view_target *vt) {
  memset(vt, 0, sizeof *vt);
  bind_view_chain c;
  int kind = bind_view_chain_of(b, name, off, &c);
  if (b->rc || kind == BIND_VIEW_NONE) return b->rc;
  if (kind == BIND_VIEW_DERIVED)
    return bind_error(b, EXEC_ERROR, off, "cannot %s view %s: it is read-only (its query is "
                      "not SELECT * FROM one table, with no dynamic columns, and a WHERE of "
                      "column = constant terms)",
                      verb, name);
  vt->table = c.table;
  vt->view = c.outer;
  vt->cond = bind_view_where(b, &c, off, false);
  if (b->rc) return b->rc;
  if (!constants_of(vt->cond, vt))
    return bind_error(b, EXEC_ERROR, off, "cannot %s view %s: it is read-only (its WHERE is "
                      "not column = constant terms joined by AND)", verb, name);
  b->alias = c.outer->name;
  return EXEC_OK;
}

bool bind_view_fills(const bind_view_target *vt, int column) {
  for (int i = 0; vt && i < vt->n_fixed; i++)
    if (vt->fixed_col[i] == column) return true;
  return false;
}

/* Is column among the first n target columns of p? */
static bool listed(const plan_upsert *p, int n, int column) {
  for (int i = 0; i < n; i++)
    if (p->cols[i] == column) return true;
  return false;
}

/* Does constant e equal the view's constant k for column type t? */
static bool same_value(const plan_expr *e, const plan_expr *k, const cat_type *t) {
  uint8_t b1[64], b2[64];
  cat_value x, y;
  int cmp = 1;
  return !e->value.is_null && cat_value_cast(&e->value, t, &x, b1, sizeof b1, NULL) == CAT_OK &&
         cat_value_cast(&k->value, t, &y, b2, sizeof b2, NULL) == CAT_OK &&
         cat_value_compare(&x, &y, &cmp, NULL) == CAT_OK && cmp == 0;
}

int bind_view_upsert(binder *b, const bind_view_target *vt, const sql_upsert *u,
                     plan_upsert *p) {
  if (!vt->table) return EXEC_OK;
  const cat_table *t = p->table;
  int n = p->n_cols, add = 0;
  for (int f = 0; f < vt->n_fixed; f++) {
    int col = vt->fixed_col[f], at = -1;
    for (int i = 0; i < n && at < 0; i++)
      if (p->cols[i] == col) at = i;
    if (at < 0) {
      add++;
      continue;
    }
    const char *cn = t->columns[col].name;
    uint32_t coff = u->cols ? u->cols->a[at].off : u->table_off;
    if (p->select)
      return bind_error(b, EXEC_ERROR, coff, "column %s of view %s is set by the view (its "
                        "WHERE): leave it out of the UPSERT SELECT's columns", cn,
                        vt->view->name);
    for (int r = 0; r < p->n_rows; r++) {
      const plan_expr *e = p->rows[r][at];
      if (e->kind != PX_CONST || !same_value(e, vt->fixed[f], &t->columns[col].type))
        return bind_error(b, EXEC_CONSTRAINT, e->off, "column %s of view %s must be the "
                          "view's constant (its WHERE) in VALUES row %d, or be left out", cn,
                          vt->view->name, r + 1);
    }
  }
  if (!add) return EXEC_OK;
  int *cols = plan_arena_alloc(b->A, (size_t)(n + add) * sizeof *cols);
  if (!cols) return bind_error(b, EXEC_NOMEM, 0, "out of memory");
  memcpy(cols, p->cols, (size_t)n * sizeof *cols);
  int m = n;
  for (int f = 0; f < vt->n_fixed; f++)
    if (!listed(p, n, vt->fixed_col[f])) cols[m++] = vt->fixed_col[f];
  for (int r = 0; r < p->n_rows; r++) {
    plan_expr **row = plan_arena_alloc(b->A, (size_t)m * sizeof *row);
    if (!row) return bind_error(b, EXEC_NOMEM, 0, "out of memory");
    memcpy(row, p->rows[r], (size_t)n * sizeof *row);
    for (int i = n; i < m; i++)
      for (int f = 0; f < vt->n_fixed; f++)
        if (vt->fixed_col[f] == cols[i]) row[i] = vt->fixed[f];
    p->rows[r] = row;
  }
  if (p->select) {
    plan_select *s = p->select;
    if (s->n_proj != s->n_out || s->setop)
      return bind_error(b, EXEC_ERROR, u->select->off, "UPSERT SELECT into view %s with ORDER "
                        "BY on a column it does not select is not supported", vt->view->name);
    plan_expr **proj = plan_arena_alloc(b->A, (size_t)m * sizeof *proj);
    char **names = plan_arena_alloc(b->A, (size_t)m * sizeof *names);
    if (!proj || !names) return bind_error(b, EXEC_NOMEM, 0, "out of memory");
    memcpy(proj, s->proj, (size_t)n * sizeof *proj);
    memcpy(names, s->names, (size_t)n * sizeof *names);
    for (int i = n; i < m; i++) {
      names[i] = t->columns[cols[i]].name;
      for (int f = 0; f < vt->n_fixed; f++)
        if (vt->fixed_col[f] == cols[i]) proj[i] = vt->fixed[f];
    }
    s->proj = proj;
    s->names = names;
    s->n_out = s->n_proj = m;
  }
  p->cols = cols;
  p->n_cols = m;
  return EXEC_OK;
}

