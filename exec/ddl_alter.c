/*
** exec/ddl_alter.c: ALTER TABLE from the AST (sql_alter_table) to the catalog
** (cat_alter_table; rules in exec/ddl.h "ALTER TABLE").
**
** Every name of the statement is checked here first, so an error carries the offset of the
** column, type or option it is about: ADD takes non-key, nullable columns only (Phoenix
** refuses a NOT NULL key/value column too); DROP COLUMN refuses key columns and columns an
** index uses (as a key, in a key expression, or in INCLUDE), naming the index; SET takes
** the options of CREATE TABLE, table-wide (every family) or for one family. The catalog
** then makes the change in one commit (catalog/cat_alter.c). Every string handed to it is
** borrowed from the tree.
** Not here: parsing, the catalog record, re-planning prepared statements (the engine's
** schema generation does that for every DDL, exec/engine.c).
*/
#include "catalog/cat_view.h"
#include "exec/ddl_int.h"
#include "planner/expr.h"
#include "planner/index_expr.h"
#include "planner/plan.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Does e read column slot col? */
static bool expr_uses(const plan_expr *e, int col) {
  if (!e) return false;
  if (e->kind == PX_COLUMN && e->column == col) return true;
  for (uint32_t i = 0; i < e->n_args; i++)
    if (expr_uses(e->args[i], col)) return true;
  return false;
}

/* The first index of t that uses column c (a key, a key expression, INCLUDE); NULL if none. */
static const cat_index *index_using(const cat_table *t, int c) {
  const char *name = t->columns[c].name;
  for (int i = 0; i < t->n_indexes; i++) {
    const cat_index *x = &t->indexes[i];
    for (int k = 0; k < x->n_include; k++)
      if (strcmp(x->include[k], name) == 0) return x;
    for (int k = 0; k < x->n_keys; k++) {
      if (strcmp(x->keys[k], name) == 0) return x;
      plan_arena A;
      plan_arena_init(&A);
      plan_expr *e = NULL;
      char msg[256];
      bool uses = plan_index_key_bind(t, x->keys[k], &A, &e, msg, sizeof msg) == EXEC_OK &&
                  expr_uses(e, c);
      plan_arena_free(&A);
      if (uses) return x;
    }
  }
  return NULL;
}

/* The name of a view over t (through views) with a column `name` of its own, or NULL. */
static const char *view_with_column(const cat_catalog *cat, const cat_table *t, const char *name) {
  for (int i = 0; i < cat_view_count(cat); i++) {
    const cat_view *v = cat_view_at(cat, i);
    if (cat_view_find_column(v, name) >= 0 && cat_view_table(cat, v) == t) return v->name;
  }
  return NULL;
}

/* ADD: the columns not there yet (IF NOT EXISTS skips those that are) into cols[0..*n). */
static int alter_add(const cat_catalog *cat, const cat_table *t, const sql_alter_table *a,
                     cat_column_def *cols, int *n, exec_error *err) {
  *n = 0;
  for (int i = 0; i < a->add->ncol; i++) {
    const sql_coldef *cd = &a->add->cols[i];
    if (cd->pk)
      return exec_ddl_fail(err, EXEC_ERROR, cd->off,
                           "ALTER TABLE %s ADD %s: a PRIMARY KEY column cannot be added (every "
                           "row key would change); only non-key columns can", t->name, cd->name);
    for (int j = 0; j < i; j++)
      if (strcmp(a->add->cols[j].name, cd->name) == 0)
        return exec_ddl_fail(err, EXEC_ERROR, cd->off, "ALTER TABLE %s ADD: column %s added twice",
                             t->name, cd->name);
    int c = cat_find_column(t, cd->name);
    if (c >= 0) {
      if (a->if_flag) continue;
      const cat_column *col = &t->columns[c];
      return exec_ddl_fail(err, EXEC_ERROR, cd->off, "table %s already has a column %s%s%s%s",
                           t->name, cd->name, col->pk_pos >= 0 ? " (in the PRIMARY KEY)" : " (in family ",
                           col->pk_pos >= 0 ? "" : t->families[col->family].name,
                           col->pk_pos >= 0 ? "" : ")");
    }
    if (cd->family && cd->family[0] == '_')
      return exec_ddl_fail(err, EXEC_ERROR, cd->off,
                           "column %s.%s: family name '%s' is reserved (names starting with '_')",
                           cd->family, cd->name, cd->family);
    const char *view = view_with_column(cat, t, cd->name);
    if (view)
      return exec_ddl_fail(err, EXEC_ERROR, cd->off, "ALTER TABLE %s ADD %s: view %s over %s has "
                           "a column %s of its own (drop it first: ALTER VIEW %s DROP COLUMN %s)",
                           t->name, cd->name, view, t->name, cd->name, view, cd->name);
    if (cd->nullability == 2)
      return exec_ddl_fail(err, EXEC_ERROR, cd->off,
                           "ALTER TABLE %s ADD %s: an added column cannot be NOT NULL (the rows "
                           "already there have no value for it; Phoenix refuses it too)",
                           t->name, cd->name);
    cat_column_def *d = &cols[(*n)++];
    int rc = exec_ddl_resolve_type(cd->type, cd->name, &d->type, err);
    if (rc != EXEC_OK) return rc;
    d->name = cd->name;
    d->family = cd->family;
    d->null_mode = cd->nullability;
  }
  return EXEC_OK;
}

/* DROP COLUMN: the columns to drop (IF EXISTS skips absent ones) into names[0..*n). */
static int alter_drop(const cat_catalog *cat, const cat_table *t, const sql_alter_table *a,
                      const char **names, int *n, exec_error *err) {
  *n = 0;
  for (int i = 0; i < a->drop->n; i++) {
    const sql_colname *cn = &a->drop->a[i];
    int c = cat_find_column(t, cn->name);
    if (c >= 0 && cn->family &&
        (t->columns[c].pk_pos >= 0 || strcmp(t->families[t->columns[c].family].name, cn->family)))
      c = -1;
    if (c < 0) {
      if (a->if_flag) continue;
      return exec_ddl_fail(err, EXEC_ERROR, cn->off, "table %s has no column %s%s%s", t->name,
                           cn->family ? cn->family : "", cn->family ? "." : "", cn->name);
    }
    for (int j = 0; j < *n; j++)
      if (strcmp(names[j], cn->name) == 0)
        return exec_ddl_fail(err, EXEC_ERROR, cn->off, "ALTER TABLE %s DROP COLUMN: column %s "
                             "named twice", t->name, cn->name);
    if (t->columns[c].pk_pos >= 0)
      return exec_ddl_fail(err, EXEC_ERROR, cn->off,
                           "column %s is in the PRIMARY KEY of %s: a key column cannot be "
                           "dropped (it is part of every row key)", cn->name, t->name);
    const cat_index *x = index_using(t, c);
    if (x)
      return exec_ddl_fail(err, EXEC_ERROR, cn->off,
                           "column %s of %s is used by index %s: drop the index first (DROP "
                           "INDEX %s ON %s)", cn->name, t->name, x->name, x->name, t->name);
    int vrc = exec_ddl_view_check_drop_column(cat, t->name, cn->name, cn->off, err); /* ddl_view.c */
    if (vrc) return vrc;
    names[(*n)++] = cn->name;
  }
  return EXEC_OK;
}

/* SET: the options as per-family changes (table-wide ones apply to every family) into
** fams[0..*n), and the table's TTL and IMMUTABLE_ROWS into def. */
static int alter_set(const cat_table *t, const sql_alter_table *a, table_opts *o,
                     cat_family_set *fams, int *n, cat_alter_def *def, exec_error *err) {
  for (int i = 0; i < a->opts->n; i++) {
    const sql_option *op = &a->opts->a[i];
    if (op->family && op->family[0] != '_' && cat_find_family(t, op->family) < 0)
      return exec_ddl_fail(err, EXEC_ERROR, op->off, "option %s.%s: table %s has no family %s",
                           op->family, op->name, t->name, op->family);
  }
  int rc = exec_ddl_parse_options(a->opts, o, err);
  if (!rc && o->salt_buckets)
    rc = exec_ddl_fail(err, EXEC_ERROR, o->salt_off,
                       "ALTER TABLE %s SET SALT_BUCKETS: the salt buckets are set by CREATE TABLE "
                       "and cannot change (every row key holds its bucket)", t->name);
  if (rc != EXEC_OK) return rc;
  *n = 0;
  for (int f = 1; f < t->n_families; f++) { /* [0] is the hidden key family */
    const fam_opts *fo = NULL;
    for (int k = 0; k < o->n_fams && !fo; k++)
      if (strcmp(o->fams[k].name, t->families[f].name) == 0) fo = &o->fams[k];
    cat_family_set *s = &fams[*n];
    s->name = t->families[f].name;
    s->max_versions = fo && fo->versions > 0 ? fo->versions : o->versions;
    s->compression = fo && fo->compression >= 0 ? fo->compression : o->compression;
    int64_t b = fo && fo->block >= 0 ? fo->block : o->block;
    s->block_size = b > 0 ? (uint32_t)b : 0;
    if (s->max_versions > 0 || s->compression >= 0 || s->block_size > 0) (*n)++;
  }
  def->ttl_sec = o->ttl;
  def->immutable_rows = o->immutable_given ? o->immutable : -1;
  return EXEC_OK;
}

int exec_ddl_alter(cat_catalog *cat, const sql_alter_table *a, exec_error *err) {
  if (a->view) return exec_ddl_alter_view(cat, a, err); /* exec/ddl_view_cols.c */
  const cat_table *t = cat_find_table(cat, a->name);
  if (!t && cat_find_view(cat, a->name))
    return exec_ddl_fail(err, EXEC_ERROR, a->name_off, "%s is a view, not a table: use ALTER "
                         "VIEW %s (it takes ADD and DROP COLUMN)", a->name, a->name);
  if (!t) return exec_ddl_fail(err, EXEC_ERROR, a->name_off, "table %s does not exist", a->name);
  int n_add = a->add ? a->add->ncol : 0, n_drop = a->drop ? a->drop->n : 0;
  int n_opts = a->opts ? a->opts->n : 0;
  cat_column_def *cols = calloc((size_t)(n_add ? n_add : 1), sizeof *cols);
  const char **drop = calloc((size_t)(n_drop ? n_drop : 1), sizeof *drop);
  cat_family_set *fams = calloc(KV_MAX_FAMILIES, sizeof *fams);
  table_opts o = {0, -1, -1, -1, false, false, NULL, 0, 0, -1};
  o.fams = calloc((size_t)(n_opts + 1), sizeof *o.fams);
  cat_alter_def def = {0};
  def.ttl_sec = -1;
  def.immutable_rows = -1;
  int rc = EXEC_OK;
  if (!cols || !drop || !fams || !o.fams) {
    rc = exec_ddl_fail(err, EXEC_NOMEM, -1, "out of memory altering table %s", a->name);
    goto done;
  }
  if (a->action == SQL_ALTER_ADD) {
    rc = alter_add(cat, t, a, cols, &def.n_add, err);
    def.add = cols;
  } else if (a->action == SQL_ALTER_DROP_COLUMN) {
    rc = alter_drop(cat, t, a, drop, &def.n_drop, err);
    def.drop = drop;
  } else {
    rc = alter_set(t, a, &o, fams, &def.n_families, &def, err);
    def.families = fams;
  }
  if (rc != EXEC_OK || (def.n_add + def.n_drop + def.n_families == 0 && def.ttl_sec < 0 &&
                       def.immutable_rows < 0))
    goto done; /* an error, or IF [NOT] EXISTS left nothing to do */
  cat_error ce = {0};
  if (cat_alter_table(cat, t->name, &def, &ce) != CAT_OK)
    rc = exec_ddl_cat_fail(err, &ce, a->name_off);
done:
  free(cols);
  free(drop);
  free(fams);
  free(o.fams);
  return rc;
}
