/*
** catalog/cat_view.h: views in the catalog (Phoenix's views; catalog/cat_view.c), beside the
** tables and indexes of catalog/catalog.h.
**
** A view is a name, the CREATE VIEW statement exactly as it was written (the catalog keeps
** SQL text as an opaque string and never parses it: planner/bind_view.c does) and the names
** of the tables and views its query reads, so that DROP TABLE can name the views over a
** table without parsing anything. One SYSTEM.CATALOG row per view ('V', docs/FORMAT_SQL.md
** section 4), written and deleted in one kv batch like a table's. Views share the
** namespace of tables: a view and a table never have the same name.
**
** Views are kept in an order where every view comes after the tables and views it reads
** (creation order at run time, a dependency order at open), so the shell's .schema can
** print them as DDL that recreates them. Not thread-safe: the caller serializes DDL.
*/
#ifndef ROWAN_CAT_VIEW_H
#define ROWAN_CAT_VIEW_H

#include "catalog/catalog.h"

/* A column of a view's own (Phoenix's `CREATE VIEW v (c type) AS SELECT * FROM t ...`): its
** cells are in the rows of the table the view reads (cat_view_table), under a column id
** taken from that table's ids (never given to the table's own columns nor to another
** view's), so only views that have it see it. Always nullable. */
typedef struct cat_view_column {
  char *name;    /* column name */
  char *family;  /* its family: a family of the view's table */
  cat_type type; /* type */
  uint16_t id;   /* column id in the table's id space: the cell qualifier */
} cat_view_column;

typedef struct cat_view {
  char *name;   /* view name (case-folded as the parser left it) */
  char *sql;    /* the CREATE VIEW statement as written (no trailing ';'); ALTER VIEW writes
                   it again with the column list as it now is */
  int n_deps;   /* tables and views its query reads */
  char **deps;  /* their names, each once */
  int n_columns;            /* columns of its own */
  cat_view_column *columns; /* them, in the order they were added */
} cat_view;

/* CREATE VIEW: record view `name` with statement text sql and the names it reads (deps,
** n_deps; each must be a table or view of cat). One commit. Errors (nothing changed):
** CAT_ERR_EXISTS (a table or a view has the name), CAT_ERR_NOTFOUND (a dep is neither),
** CAT_ERR_INVALID (empty or over-long name, text over 65535 bytes), CAT_ERR_KV,
** CAT_ERR_NOMEM. */
int cat_create_view(cat_catalog *cat, const char *name, const char *sql,
                    const char *const *deps, int n_deps, cat_error *err);
/* CREATE VIEW with n_cols columns of its own (cols: non-key, nullable; family NULL = "0";
** null_mode 2 refused). The view must read one name (deps[0]), a table or a view reading
** one (cat_view_table finds the table). Each column gets the next column id of that table,
** whose record is committed again (next column id moved, new families added) in the same
** batch as the view's row; a new family is created in the store first (an unused empty
** family is all a crash between the two leaves). Errors as cat_create_view, and
** CAT_ERR_INVALID (more than one name read, a bad column), CAT_ERR_EXISTS (a column name the
** table or a view it reads through has, or given twice). n_cols 0 is cat_create_view. */
int cat_create_view_columns(cat_catalog *cat, const char *name, const char *sql,
                            const char *const *deps, int n_deps, const cat_column_def *cols,
                            int n_cols, cat_error *err);
/* ALTER VIEW `name` (Phoenix's ALTER VIEW v ADD / DROP COLUMN): drop the columns of its own
** named in drop[0..n_drop), then add add[0..n_add) (ids as cat_create_view_columns; a name
** must be free in the table, in the views it reads through and in the views reading it);
** sql is the view's new text. One commit (with the table's record when columns are added).
** A dropped column's id is never given again; its cells are left to major compaction
** (cat_drop_dead_cells). Errors (nothing changed): CAT_ERR_NOTFOUND (view, dropped column),
** CAT_ERR_EXISTS, CAT_ERR_INVALID, CAT_ERR_KV, CAT_ERR_NOMEM. */
int cat_alter_view(cat_catalog *cat, const char *name, const char *sql,
                   const cat_column_def *add, int n_add, const char *const *drop, int n_drop,
                   cat_error *err);
/* The table whose rows view v shows when v reads one name, following views that read one
** name each; NULL otherwise (a join, a missing name). */
const cat_table *cat_view_table(const cat_catalog *cat, const cat_view *v);
/* Who already has a column `column` that a new column of view `view` (NULL when it is
** being created) reading `dep` would clash with: the table under it, a view it reads
** through, the view itself or a view reading it. Returns the owner's name and sets *is_view,
** or NULL when the name is free. */
const char *cat_view_column_owner(const cat_catalog *cat, const char *view, const char *dep,
                                  const char *column, bool *is_view);
/* The index of view v's own column `name`, or -1. */
int cat_view_find_column(const cat_view *v, const char *name);

/* DROP VIEW of the n views names[] in one commit (DROP TABLE ... CASCADE and DROP VIEW ...
** CASCADE give the view and every view over it). CAT_ERR_NOTFOUND (nothing changed),
** CAT_ERR_KV, CAT_ERR_NOMEM. */
int cat_drop_views(cat_catalog *cat, const char *const *names, int n, cat_error *err);

/* Lookups: NULL when absent. Pointers stay valid until the view is dropped or cat closed. */
const cat_view *cat_find_view(const cat_catalog *cat, const char *name);
/* As cat_find_view, else with the name upper-cased (an unquoted name as SQL folds it). */
const cat_view *cat_find_view_folded(const cat_catalog *cat, const char *name);
int cat_view_count(const cat_catalog *cat);
/* The i-th view; every view comes after those it reads. */
const cat_view *cat_view_at(const cat_catalog *cat, int i);
/* Does view v read `name` (a table or view) directly? */
bool cat_view_reads(const cat_view *v, const char *name);

#endif /* ROWAN_CAT_VIEW_H */
