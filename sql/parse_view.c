/*
** sql/parse_view.c: the grammar's helpers for views (Phoenix's CREATE VIEW, ALTER VIEW, DROP
** VIEW and DROP TABLE ... CASCADE; the rules are one block of sql/parse.y): they only connect the
** pieces the grammar built into the statement's tree (sql/ast.h sql_create_view).
**
** Not here: whether the view's query names tables that exist or is updatable (planner/
** bind_view.c), storing it (catalog/cat_view.c), running the DDL (exec/ddl_view.c).
*/
#include <stdlib.h>

#include "sql/parse_int.h"

sql_stmt *sql_pc_create_view(sql_pctx *ctx, sql_token kw, int if_not_exists, sql_name name,
                             sql_create_table *cols, sql_select *select) {
  sql_stmt *s = sql_stmt_new(SQL_STMT_CREATE_VIEW, sql_pc_off(ctx, kw));
  sql_create_view *v = calloc(1, sizeof *v);
  if (!s || !v || !name.z || !select) {
    free(s);
    free(v);
    free(name.z);
    sql_create_table_free(cols);
    sql_select_free(select);
    return sql_pc_nomem(ctx);
  }
  v->name = name.z;
  v->name_off = name.off;
  v->if_not_exists = if_not_exists != 0;
  v->cols = cols;
  v->select = select;
  s->u.create_view = v;
  return s;
}

sql_stmt *sql_pc_cascade(sql_pctx *ctx, sql_stmt *s) {
  (void)ctx;
  if (s && s->u.drop) s->u.drop->cascade = true;
  return s;
}

sql_stmt *sql_pc_alter_view(sql_pctx *ctx, sql_stmt *s) {
  (void)ctx;
  if (s && s->u.alter) s->u.alter->view = true;
  return s;
}
