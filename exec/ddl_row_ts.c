/*
** exec/ddl_row_ts.c: the ROW_TIMESTAMP rules of CREATE TABLE (Phoenix's): at most one
** column carries the mark, it is a PRIMARY KEY column, NOT NULL, of type BIGINT, DATE or
** TIMESTAMP (catalog/row_ts.h says why not TIME). Errors name the column and point at it.
** What it does not do: write cells at the column's timestamp (exec/write.c, exec/bulk.c).
*/
#include <string.h>

#include "catalog/row_ts.h"
#include "exec/ddl_int.h"

/* Is column name among the n PRIMARY KEY names pk? */
static bool in_pk(const char *name, const char *const *pk, int n) {
  for (int k = 0; k < n; k++)
    if (strcmp(pk[k], name) == 0) return true;
  return false;
}

int exec_ddl_row_ts(const sql_create_table *ct, const cat_column_def *cols, const char *const *pk,
                    int n_pk, const char **out, exec_error *err) {
  *out = NULL;
  uint32_t out_off = 0;
  for (int k = 0; ct->pk && k < ct->pk->n; k++) { /* PRIMARY KEY (k, ts ROW_TIMESTAMP) */
    const sql_colname *cn = &ct->pk->a[k];
    if (!cn->row_timestamp) continue;
    if (*out)
      return exec_ddl_fail(err, EXEC_ERROR, cn->off, "table %s: only one ROW_TIMESTAMP column "
                           "is allowed (%s and %s)", ct->name, *out, cn->name);
    *out = cn->name;
    out_off = cn->off;
  }
  for (int i = 0; i < ct->ncol; i++) {
    const sql_coldef *cd = &ct->cols[i];
    if (!cd->row_timestamp) continue;
    if (*out && strcmp(*out, cd->name) != 0)
      return exec_ddl_fail(err, EXEC_ERROR, cd->off, "table %s: only one ROW_TIMESTAMP column "
                           "is allowed (%s and %s)", ct->name, *out, cd->name);
    *out = cd->name;
    out_off = cd->off;
  }
  if (!*out) return EXEC_OK;
  for (int i = 0; i < ct->ncol; i++) {
    const sql_coldef *cd = &ct->cols[i];
    if (strcmp(cd->name, *out) != 0) continue;
    if (!in_pk(cd->name, pk, n_pk))
      return exec_ddl_fail(err, EXEC_ERROR, out_off, "column %s: ROW_TIMESTAMP is allowed only "
                           "on a PRIMARY KEY column", cd->name);
    if (!cat_row_ts_type_ok(cols[i].type.id)) {
      char tb[64];
      return exec_ddl_fail(err, EXEC_ERROR, cd->type->off, "column %s: a ROW_TIMESTAMP column "
                           "must be BIGINT, DATE or TIMESTAMP, not %s", cd->name,
                           cat_type_format(&cols[i].type, tb, sizeof tb));
    }
    if (cd->nullability == 1)
      return exec_ddl_fail(err, EXEC_ERROR, cd->off, "column %s: a ROW_TIMESTAMP column cannot "
                           "be NULL", cd->name);
  }
  return EXEC_OK;
}
