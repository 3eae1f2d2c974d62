/*
** exec/ddl_view.c: CREATE VIEW, DROP VIEW and what views change in DROP TABLE (Phoenix's
** views; docs/SQL.md "Views").
**
**  - CREATE VIEW [IF NOT EXISTS] v AS query: the name must not be a table's or a view's
**    (IF NOT EXISTS makes that a no-op, as SQLite does); the query is bound as a SELECT
**    (planner/plan_bind, so a missing table or column is an error pointing into the
**    statement), may not hold parameters, and must give distinct column names. The catalog
**    keeps the statement's text exactly as written and the tables and views its query
**    reads (catalog/cat_view.h). Columns of the view's own (`CREATE VIEW v (c type) AS`,
**    Phoenix's multi-tenant pattern) and ALTER VIEW: exec/ddl_view_cols.c.
**  - DROP VIEW [IF EXISTS] v [CASCADE]: v must be a view (a table is an error naming DROP
**    TABLE); a view read by other views is refused naming them unless CASCADE, which drops
**    them all in one commit.
**  - DROP TABLE t: a view is an error naming DROP VIEW; a table read by views is refused
**    naming them unless CASCADE (Phoenix's rule), which drops the views (one commit) and
**    then the table.
**  - ALTER TABLE t DROP COLUMN c: refused naming the view when a view reading t (directly
**    or through other views) names a column c anywhere in its query (Phoenix refuses to
**    drop a column a view references; a same-named column of another table in a join
**    view counts too: the check reads names, not bindings).
** Not here: how a view is queried or written through (planner/bind_view.c).
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalog/cat_view.h"
#include "exec/ddl_int.h"
#include "planner/plan.h"
#include "sql/parser.h"

/* ---- the names a query reads and the columns it names ---------------------------------------- */
typedef struct names {
  const char **a; /* the names, each once (borrowed from the tree or the catalog) */
  int n;          /* how many */
  int cap;        /* allocated slots */
  bool oom;       /* an allocation failed (the list is short) */
} names;

static void add_name(names *ns, const char *s) {
  for (int i = 0; i < ns->n; i++)
    if (strcmp(ns->a[i], s) == 0) return;
  if (ns->n == ns->cap) {
    int c = ns->cap ? ns->cap * 2 : 8;
    const char **a = realloc(ns->a, (size_t)c * sizeof *a);
    if (!a) {
      ns->oom = true;
      return;
    }
    ns->a = a;
    ns->cap = c;
  }
  ns->a[ns->n++] = s;
}

/* What a walk over a query collects: the FROM names, the WITH names, and whether a column
** reference (or a USING column) is named `column`. */
typedef struct walk {
  names tables;       /* FROM names of the query and of every query inside it */
  names ctes;         /* its WITH names */
  const char *column; /* a column name to look for, or NULL */
  bool uses;          /* a reference to `column` was seen */
} walk;

static void walk_select(const sql_select *q, walk *w);

static void walk_expr(const sql_expr *e, walk *w) {
  if (!e) return;
  if (e->kind == SQL_E_COLUMN && w->column && e->nname >= 1 &&
      strcmp(e->name[e->nname - 1], w->column) == 0)
    w->uses = true;
  walk_expr(e->left, w);
  walk_expr(e->right, w);
  walk_expr(e->third, w);
  for (int i = 0; e->list && i < e->list->n; i++) walk_expr(e->list->a[i], w);
  if (e->sub) walk_select(e->sub, w);
}

static void walk_select(const sql_select *q, walk *w) {
  if (!q) return;
  for (int i = 0; q->with && i < q->with->n; i++) {
    add_name(&w->ctes, q->with->a[i].name);
    walk_select(q->with->a[i].select, w);
  }
  walk_select(q->left, w);
  walk_select(q->right, w);
  walk_select(q->sub, w);
  if (q->table) add_name(&w->tables, q->table);
  for (int i = 0; q->joins && i < q->joins->n; i++) {
    const sql_join *j = &q->joins->a[i];
    if (j->table) add_name(&w->tables, j->table);
    walk_select(j->sub, w);
    walk_expr(j->on, w);
    for (int k = 0; j->using && w->column && k < j->using->n; k++)
      if (strcmp(j->using->a[k].name, w->column) == 0) w->uses = true;
  }
  for (int i = 0; q->cols && i < q->cols->n; i++) walk_expr(q->cols->a[i].expr, w);
  walk_expr(q->where, w);
  for (int i = 0; q->group && i < q->group->n; i++) walk_expr(q->group->a[i], w);
  walk_expr(q->having, w);
  for (int i = 0; q->order && i < q->order->n; i++) walk_expr(q->order->a[i].expr, w);
}

static void walk_free(walk *w) {
  free(w->tables.a);
  free(w->ctes.a);
}

/* ---- CREATE VIEW ------------------------------------------------------------------------- */
/* Bind v's query as a SELECT: errors point into the statement text sql. */
static int check_query(cat_catalog *cat, const sql_create_view *v, const char *sql,
                       exec_error *err) {
  sql_stmt q;
  memset(&q, 0, sizeof q);
  q.kind = SQL_STMT_SELECT;
  q.u.select = v->select;
  plan_arena A;
  plan_arena_init(&A);
  plan_bound bound;
  char msg[EXEC_ERRMSG_MAX];
  int off = -1;
  int rc = plan_bind(cat, &q, sql, &A, &bound, msg, sizeof msg, &off);
  if (rc) {
    rc = exec_ddl_fail(err, rc, off, "view %s: %s", v->name, msg);
  } else {
    const plan_select *s = bound.select;
    for (int i = 0; s && !rc && i < s->n_out; i++)
      for (int j = 0; j < i && !rc; j++)
        if (strcmp(s->names[i], s->names[j]) == 0)
          rc = exec_ddl_fail(err, EXEC_ERROR, v->select->off, "view %s has two columns named "
                             "%s: give them different names with AS", v->name, s->names[i]);
  }
  plan_arena_free(&A);
  return rc;
}

static int create_view(cat_catalog *cat, const sql_stmt *stmt, const char *sql,
                       exec_error *err) {
  const sql_create_view *v = stmt->u.create_view;
  if (cat_find_view(cat, v->name) || cat_find_table(cat, v->name)) {
    if (v->if_not_exists) return EXEC_OK;
    return exec_ddl_fail(err, EXEC_ERROR, v->name_off, "%s %s already exists",
                         cat_find_view(cat, v->name) ? "view" : "a table named", v->name);
  }
  if (stmt->nparam)
    return exec_ddl_fail(err, EXEC_ERROR, v->select->off, "view %s: a view's query cannot "
                         "hold parameters (?)", v->name);
  if (stmt->as_of) /* the statement reading the view says when: `FROM v AS OF ...` */
    return exec_ddl_fail(err, EXEC_ERROR, stmt->as_of->off, "view %s: a view's query cannot "
                         "read the past (AS OF): give AS OF where the view is read (SELECT "
                         "... FROM %s AS OF TIMESTAMP '...')", v->name, v->name);
  if (!sql) return exec_ddl_fail(err, EXEC_MISUSE, -1, "CREATE VIEW needs the statement text");
  int rc = check_query(cat, v, sql, err);
  if (rc) return rc;
  walk w = {{0}, {0}, NULL, false};
  walk_select(v->select, &w);
  names *ns = &w.tables;
  int nd = 0;
  for (int i = 0; i < ns->n; i++) { /* the tables and views read, not the WITH names */
    bool cte = false;
    for (int k = 0; k < w.ctes.n; k++) cte |= strcmp(w.ctes.a[k], ns->a[i]) == 0;
    if (!cte && (cat_find_table(cat, ns->a[i]) || cat_find_view(cat, ns->a[i])))
      ns->a[nd++] = ns->a[i];
  }
  char *text = ns->oom || w.ctes.oom ? NULL : malloc((size_t)stmt->len + 1);
  if (!text) {
    rc = exec_ddl_fail(err, EXEC_NOMEM, -1, "out of memory");
  } else {
    memcpy(text, sql + stmt->off, stmt->len);
    text[stmt->len] = 0;
    cat_error ce = {0};
    if (v->cols) /* exec/ddl_view_cols.c */
      rc = exec_ddl_view_create_columns(cat, v, text, ns->a, nd, err);
    else if (cat_create_view(cat, v->name, text, ns->a, nd, &ce))
      rc = exec_ddl_cat_fail(err, &ce, v->name_off);
  }
  free(text);
  walk_free(&w);
  return rc;
}

/* ---- DROP VIEW and DROP TABLE ------------------------------------------------------------ */
/* The views reading `name`, directly or through other views, into ns (each once, a view
** before the views it reads). */
static void readers(const cat_catalog *cat, const char *name, names *ns) {
  for (int i = cat_view_count(cat) - 1; i >= 0; i--) {
    const cat_view *v = cat_view_at(cat, i);
    if (!cat_view_reads(v, name)) continue;
    readers(cat, v->name, ns);
    add_name(ns, v->name);
  }
}

/* A list of names for a message ("V1, V2"). */
static void list_text(const names *ns, char *buf, size_t cap) {
  size_t k = 0;
  buf[0] = 0;
  for (int i = 0; i < ns->n && k + 1 < cap; i++) {
    int m = snprintf(buf + k, cap - k, "%s%s", i ? ", " : "", ns->a[i]);
    if (m > 0) k += (size_t)m;
  }
}

/* Refuse (without cascade) or drop the views reading `name`; what names them ("table",
** "view") is for the message. */
static int drop_readers(cat_catalog *cat, const char *what, const char *name, bool cascade,
                        const char *also, uint32_t off, exec_error *err) {
  names ns = {0};
  readers(cat, name, &ns);
  if (also) add_name(&ns, also);
  int rc = ns.oom ? exec_ddl_fail(err, EXEC_NOMEM, -1, "out of memory") : EXEC_OK;
  int n_readers = ns.n - (also ? 1 : 0);
  if (!rc && n_readers > 0 && !cascade) {
    names only = {ns.a, n_readers, n_readers, false};
    char list[400];
    list_text(&only, list, sizeof list);
    rc = exec_ddl_fail(err, EXEC_ERROR, off, "cannot drop %s %s: view%s %s read%s it (drop "
                       "%s first, or add CASCADE to drop %s too)", what, name,
                       n_readers == 1 ? "" : "s", list, n_readers == 1 ? "s" : "",
                       n_readers == 1 ? "it" : "them", n_readers == 1 ? "it" : "them");
  }
  if (!rc && ns.n > 0) {
    cat_error ce = {0};
    if (cat_drop_views(cat, ns.a, ns.n, &ce)) rc = exec_ddl_cat_fail(err, &ce, off);
  }
  free(ns.a);
  return rc;
}

static int drop_view(cat_catalog *cat, const sql_drop *d, uint32_t off, exec_error *err) {
  if (!cat_find_view(cat, d->name)) {
    if (cat_find_table(cat, d->name))
      return exec_ddl_fail(err, EXEC_ERROR, off, "%s is a table, not a view: use DROP TABLE %s",
                           d->name, d->name);
    if (d->if_exists) return EXEC_OK;
    return exec_ddl_fail(err, EXEC_ERROR, off, "view %s does not exist", d->name);
  }
  return drop_readers(cat, "view", d->name, d->cascade, d->name, off, err);
}

int exec_ddl_view_before_drop_table(cat_catalog *cat, const sql_drop *d, uint32_t off,
                                    exec_error *err) {
  if (cat_find_view(cat, d->name))
    return exec_ddl_fail(err, EXEC_ERROR, off, "%s is a view, not a table: use DROP VIEW %s",
                         d->name, d->name);
  if (!cat_find_table(cat, d->name)) return EXEC_OK;
  return drop_readers(cat, "table", d->name, d->cascade, NULL, off, err);
}

int exec_ddl_view_check_drop_column(const cat_catalog *cat, const char *name,
                                    const char *column, uint32_t off, exec_error *err) {
  names ns = {0};
  readers(cat, name, &ns);
  int rc = ns.oom ? exec_ddl_fail(err, EXEC_NOMEM, -1, "out of memory") : EXEC_OK;
  for (int i = 0; !rc && i < ns.n; i++) {
    const cat_view *v = cat_find_view(cat, ns.a[i]);
    sql_stmt *st = NULL;
    if (sql_parse(v->sql, strlen(v->sql), &st, NULL, NULL) != SQL_OK || !st ||
        st->kind != SQL_STMT_CREATE_VIEW) {
      sql_stmt_free(st);
      continue; /* a text that does not parse names nothing: the view fails when used */
    }
    walk w = {{0}, {0}, column, false};
    walk_select(st->u.create_view->select, &w);
    if (w.uses)
      rc = exec_ddl_fail(err, EXEC_ERROR, off, "column %s of %s is used by view %s: drop the "
                         "view first (DROP VIEW %s)", column, name, v->name, v->name);
    walk_free(&w);
    sql_stmt_free(st);
  }
  free(ns.a);
  return rc;
}

int exec_ddl_view(cat_catalog *cat, const sql_stmt *stmt, const char *sql, exec_error *err) {
  if (stmt->kind == SQL_STMT_CREATE_VIEW) return create_view(cat, stmt, sql, err);
  return drop_view(cat, stmt->u.drop, stmt->off, err);
}
