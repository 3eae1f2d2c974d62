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

typedef struct cat_view {
  char *name;   /* view name (case-folded as the parser left it) */
  char *sql;    /* the CREATE VIEW statement as written (no trailing ';') */
  int n_deps;   /* tables and views its query reads */
  char **deps;  /* their names, each once */
} cat_view;

/* CREATE VIEW: record view `name` with statement text sql and the names it reads (deps,
** n_deps; each must be a table or view of cat). One commit. Errors (nothing changed):
** CAT_ERR_EXISTS (a table or a view has the name), CAT_ERR_NOTFOUND (a dep is neither),
** CAT_ERR_INVALID (empty or over-long name, text over 65535 bytes), CAT_ERR_KV,
** CAT_ERR_NOMEM. */
int cat_create_view(cat_catalog *cat, const char *name, const char *sql,
                    const char *const *deps, int n_deps, cat_error *err);
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
