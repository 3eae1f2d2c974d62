/*
** exec/ddl_view_cols.c: columns of a view's own, Phoenix's multi-tenant pattern (`CREATE
** VIEW v (c type, ...) AS SELECT * FROM t WHERE ...`, `ALTER VIEW v ADD ...`, `ALTER VIEW v
** DROP COLUMN ...`; docs/SQL.md "Views"), from the AST to the catalog
** (cat_create_view_columns, cat_alter_view; catalog/cat_view.h).
**
**  - Only a view that merges (planner plan_view_merges: SELECT * FROM a table, or from a view
**    of that form, with any WHERE and no dynamic columns) can have them: its rows are rows of
**    one table, which stores the columns' cells. Any other view is refused, saying why.
**  - A column is non-key and nullable (a PRIMARY KEY or NOT NULL column is refused: the row
**    key is the table's, and the table's rows already there have no value), in family "0"
**    or the one named; its name must be free in the table, in the views the view reads
**    through, in the view and in the views reading it (each error points at the column).
**  - ALTER VIEW DROP COLUMN takes the view's own columns only: a column of the table or of a
**    view under it is refused naming its owner; one a view over it names is refused as
**    ALTER TABLE DROP COLUMN refuses it. ALTER VIEW keeps the view's text in step: it is
**    written again as CREATE VIEW name (its columns now) AS its query as written, which is
**    what .schema prints.
** Every string handed to the catalog is borrowed from the tree or the catalog.
** Not here: reading and writing the columns (planner/bind_view.c widens the view's table).
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalog/cat_view.h"
#include "exec/ddl_int.h"
#include "planner/plan.h"
#include "sql/parser.h"

#define SHOWS_DEPTH 64 /* views read through, at most */

/* Does view v show the columns of view `owner` (v itself or a view v reads through)? */
static bool shows(const cat_catalog *cat, const cat_view *v, const char *owner) {
  for (int d = 0; v && d < SHOWS_DEPTH; d++) {
    if (strcmp(v->name, owner) == 0) return true;
    v = v->n_deps == 1 ? cat_find_view(cat, v->deps[0]) : NULL;
  }
  return false;
}

/* The columns `cols` of view `name` (self: the view when it exists, else NULL; it reads dep)
** into defs[0..*n); with if_not_exists, a column the view shows already is skipped. */
static int column_defs(const cat_catalog *cat, const char *name, const cat_view *self,
                       const char *dep, const sql_create_table *cols, bool if_not_exists,
                       cat_column_def *defs, int *n, exec_error *err) {
  *n = 0;
  for (int i = 0; i < cols->ncol; i++) {
    const sql_coldef *cd = &cols->cols[i];
    if (cd->pk || cd->row_timestamp)
      return exec_ddl_fail(err, EXEC_ERROR, cd->off, "column %s of view %s: a view cannot add "
                           "to the PRIMARY KEY (its rows are keyed by its table's key)",
                           cd->name, name);
    if (cd->nullability == 2)
      return exec_ddl_fail(err, EXEC_ERROR, cd->off, "column %s of view %s cannot be NOT NULL "
                           "(the rows of its table already there have no value for it)",
                           cd->name, name);
    if (cd->family && cd->family[0] == '_')
      return exec_ddl_fail(err, EXEC_ERROR, cd->off, "column %s.%s: family name '%s' is "
                           "reserved (names starting with '_')", cd->family, cd->name, cd->family);
    for (int j = 0; j < i; j++)
      if (strcmp(cols->cols[j].name, cd->name) == 0)
        return exec_ddl_fail(err, EXEC_ERROR, cd->off, "view %s: column %s given twice", name,
                             cd->name);
    bool is_view = false;
    const char *owner = cat_view_column_owner(cat, self ? self->name : NULL, dep, cd->name,
                                              &is_view);
    if (owner) {
      if (if_not_exists && (!is_view || shows(cat, self, owner))) continue;
      return exec_ddl_fail(err, EXEC_ERROR, cd->off, "%s %s already has a column %s%s",
                           is_view ? "view" : "table", owner, cd->name,
                           is_view && self && !shows(cat, self, owner)
                               ? " (a view reading this one)" : "");
    }
    cat_column_def *d = &defs[(*n)++];
    int rc = exec_ddl_resolve_type(cd->type, cd->name, &d->type, err);
    if (rc != EXEC_OK) return rc;
    d->name = cd->name;
    d->family = cd->family;
    d->null_mode = cd->nullability;
  }
  return EXEC_OK;
}

/* The refusal for a view that cannot have columns of its own, at off. */
static int not_mergeable(const char *name, uint32_t off, exec_error *err) {
  return exec_ddl_fail(err, EXEC_ERROR, off, "view %s cannot have columns of its own: its query "
                       "is not SELECT * FROM one table or view [WHERE ...] (Phoenix's form, with no "
                       "dynamic columns), so "
                       "it has no table rows to store them in", name);
}

int exec_ddl_view_create_columns(cat_catalog *cat, const sql_create_view *v, const char *text,
                                 const char *const *deps, int n_deps, exec_error *err) {
  const sql_create_table *cols = v->cols;
  uint32_t off = cols->ncol ? cols->cols[0].off : v->name_off;
  if (!plan_view_merges(cat, v->select) || n_deps != 1) return not_mergeable(v->name, off, err);
  cat_column_def *defs = calloc((size_t)cols->ncol + 1, sizeof *defs);
  if (!defs) return exec_ddl_fail(err, EXEC_NOMEM, -1, "out of memory");
  int n = 0;
  int rc = column_defs(cat, v->name, NULL, deps[0], cols, false, defs, &n, err);
  cat_error ce = {0};
  if (!rc && cat_create_view_columns(cat, v->name, text, deps, n_deps, defs, n, &ce))
    rc = exec_ddl_cat_fail(err, &ce, v->name_off);
  free(defs);
  return rc;
}

/* Append s to the text t (*len bytes of *cap), growing it; false when out of memory. */
static bool put(char **t, size_t *len, size_t *cap, const char *s) {
  size_t n = s ? strlen(s) : 0;
  if (!s) return false;
  if (*len + n + 1 > *cap) {
    size_t c = (*len + n + 1) * 2;
    char *p = realloc(*t, c);
    if (!p) return false;
    *t = p;
    *cap = c;
  }
  memcpy(*t + *len, s, n + 1);
  *len += n;
  return true;
}

/* One column definition `[family.]name TYPE` into the text. */
static bool put_column(char **t, size_t *len, size_t *cap, const char *family, const char *name,
                       const cat_type *type) {
  char tn[64];
  char *f = family && strcmp(family, CAT_DEFAULT_FAMILY) ? sql_print_ident(family) : NULL;
  char *c = sql_print_ident(name);
  bool ok = c && (!f || (put(t, len, cap, f) && put(t, len, cap, "."))) && put(t, len, cap, c) &&
            put(t, len, cap, " ") && put(t, len, cap, cat_type_format(type, tn, sizeof tn));
  free(f);
  free(c);
  return ok;
}

/* The view's text after ALTER VIEW: CREATE VIEW name (its columns but drop[], then add[]) AS
** its query as written (from query_off of its old text). malloc'd; NULL when out of memory. */
static char *new_text(const cat_view *v, uint32_t query_off, const char *const *drop, int n_drop,
                      const cat_column_def *add, int n_add) {
  char *t = NULL, *name = sql_print_ident(v->name);
  size_t len = 0, cap = 0;
  int k = 0;
  bool ok = put(&t, &len, &cap, "CREATE VIEW ") && put(&t, &len, &cap, name);
  for (int i = 0; ok && i < v->n_columns; i++) {
    bool dropped = false;
    for (int j = 0; j < n_drop; j++) dropped |= strcmp(drop[j], v->columns[i].name) == 0;
    if (dropped) continue;
    ok = put(&t, &len, &cap, k++ ? ", " : " (") &&
         put_column(&t, &len, &cap, v->columns[i].family, v->columns[i].name, &v->columns[i].type);
  }
  for (int i = 0; ok && i < n_add; i++)
    ok = put(&t, &len, &cap, k++ ? ", " : " (") &&
         put_column(&t, &len, &cap, add[i].family, add[i].name, &add[i].type);
  ok = ok && (!k || put(&t, &len, &cap, ")")) && put(&t, &len, &cap, " AS ") &&
       put(&t, &len, &cap, v->sql + query_off);
  free(name);
  if (!ok) {
    free(t);
    return NULL;
  }
  return t;
}

/* DROP COLUMN: the view's own columns named (IF EXISTS skips absent ones) into drop[0..*n). */
static int drop_names(const cat_catalog *cat, const cat_view *v, const sql_alter_table *a,
                      const char **drop, int *n, exec_error *err) {
  *n = 0;
  for (int i = 0; i < a->drop->n; i++) {
    const sql_colname *cn = &a->drop->a[i];
    int c = cat_view_find_column(v, cn->name);
    if (c >= 0 && cn->family && strcmp(v->columns[c].family, cn->family) != 0) c = -1;
    if (c < 0) {
      bool is_view = false;
      const char *owner = cat_view_column_owner(cat, v->name, NULL, cn->name, &is_view);
      if (owner && (!is_view || shows(cat, v, owner)))
        return exec_ddl_fail(err, EXEC_ERROR, cn->off, "column %s of view %s is not its own: it "
                             "is %s %s's (ALTER VIEW drops only the columns the view added%s%s)",
                             cn->name, v->name, is_view ? "view" : "table", owner,
                             is_view ? "" : "; ALTER TABLE DROP COLUMN drops a column of ",
                             is_view ? "" : owner);
      if (a->if_flag) continue;
      return exec_ddl_fail(err, EXEC_ERROR, cn->off, "view %s has no column %s%s%s", v->name,
                           cn->family ? cn->family : "", cn->family ? "." : "", cn->name);
    }
    for (int j = 0; j < *n; j++)
      if (strcmp(drop[j], cn->name) == 0)
        return exec_ddl_fail(err, EXEC_ERROR, cn->off, "ALTER VIEW %s DROP COLUMN: column %s "
                             "named twice", v->name, cn->name);
    int rc = exec_ddl_view_check_drop_column(cat, v->name, cn->name, cn->off, err);
    if (rc) return rc;
    drop[(*n)++] = cn->name;
  }
  return EXEC_OK;
}

int exec_ddl_alter_view(cat_catalog *cat, const sql_alter_table *a, exec_error *err) {
  const cat_view *v = cat_find_view(cat, a->name);
  if (!v) {
    if (cat_find_table(cat, a->name))
      return exec_ddl_fail(err, EXEC_ERROR, a->name_off, "%s is a table, not a view: use ALTER "
                           "TABLE %s", a->name, a->name);
    return exec_ddl_fail(err, EXEC_ERROR, a->name_off, "view %s does not exist", a->name);
  }
  sql_stmt *st = NULL;
  if (sql_parse(v->sql, strlen(v->sql), &st, NULL, NULL) != SQL_OK || !st ||
      st->kind != SQL_STMT_CREATE_VIEW) {
    sql_stmt_free(st);
    return exec_ddl_fail(err, EXEC_CORRUPT, a->name_off, "view %s: its stored text is not a "
                         "CREATE VIEW", v->name);
  }
  const sql_select *q = st->u.create_view->select;
  int n_add = a->add ? a->add->ncol : 0, n_drop = a->drop ? a->drop->n : 0;
  cat_column_def *add = calloc((size_t)n_add + 1, sizeof *add);
  const char **drop = calloc((size_t)n_drop + 1, sizeof *drop);
  int rc = add && drop ? EXEC_OK : exec_ddl_fail(err, EXEC_NOMEM, -1, "out of memory");
  if (!rc && a->action == SQL_ALTER_ADD) {
    if (!plan_view_merges(cat, q) || v->n_deps != 1)
      rc = not_mergeable(v->name, a->name_off, err);
    else
      rc = column_defs(cat, v->name, v, q->table, a->add, a->if_flag, add, &n_add, err);
  } else if (!rc) {
    n_add = 0;
    rc = drop_names(cat, v, a, drop, &n_drop, err);
  }
  if (!rc && a->action != SQL_ALTER_DROP_COLUMN) n_drop = 0;
  char *text = rc || n_add + n_drop == 0 ? NULL : new_text(v, q->off, drop, n_drop, add, n_add);
  if (!rc && n_add + n_drop > 0 && !text) rc = exec_ddl_fail(err, EXEC_NOMEM, -1, "out of memory");
  cat_error ce = {0};
  if (text && cat_alter_view(cat, a->name, text, add, n_add, drop, n_drop, &ce))
    rc = exec_ddl_cat_fail(err, &ce, a->name_off);
  free(text);
  free(add);
  free(drop);
  sql_stmt_free(st);
  return rc;
}
