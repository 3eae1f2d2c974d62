/*
** catalog/row_ts.c: ROW_TIMESTAMP columns (catalog/row_ts.h): the types allowed, the
** column's mark, and its values as cell timestamps (milliseconds since the Unix epoch).
** Nothing here reads or writes the store.
*/
#include <stdio.h>
#include <string.h>

#include "catalog/datetime.h"
#include "catalog/row_ts.h"
#include "catalog/value.h"

bool cat_row_ts_type_ok(int type_id) {
  return type_id == CAT_T_BIGINT || type_id == CAT_T_DATE || type_id == CAT_T_TIMESTAMP;
}

int cat_row_ts_mark(cat_table *t, const char *name, cat_error *err) {
  for (int i = 0; i < t->n_columns; i++)
    if (strcmp(t->columns[i].name, name) == 0) {
      t->columns[i].row_timestamp = true;
      return CAT_OK;
    }
  return cat_err(err, CAT_ERR_INVALID, "ROW_TIMESTAMP column %s is not a column", name);
}

int cat_row_ts_of(const cat_value *v, const char *col, int64_t *ms, cat_error *err) {
  if (v->is_null)
    return cat_err(err, CAT_ERR_INVALID, "ROW_TIMESTAMP column %s: NULL is not a timestamp",
                   col);
  int64_t t;
  switch (v->type.id) {
  case CAT_T_BIGINT: t = v->u.i; break;
  case CAT_T_DATE: t = v->u.i * 86400000LL; break;
  case CAT_T_TIMESTAMP: t = cat_dt_floor_div(v->u.i, 1000); break;
  default:
    return cat_err(err, CAT_ERR_INVALID, "ROW_TIMESTAMP column %s: not a BIGINT, DATE or "
                   "TIMESTAMP value", col);
  }
  if (t < 0)
    return cat_err(err, CAT_ERR_INVALID, "ROW_TIMESTAMP column %s: %lld ms is before "
                   "1970-01-01 00:00:00 UTC (cell timestamps cannot be negative)", col,
                   (long long)t);
  *ms = t;
  return CAT_OK;
}

cat_value cat_row_ts_value(int type_id, int64_t ms) {
  switch (type_id) {
  case CAT_T_DATE: return cat_v_int(CAT_T_DATE, cat_dt_floor_div(ms, 86400000LL));
  case CAT_T_TIMESTAMP: return cat_v_int(CAT_T_TIMESTAMP, ms * 1000);
  default: return cat_v_int(CAT_T_BIGINT, ms);
  }
}

bool cat_row_ts_micros(const cat_value *v, int col_type, int64_t *us) {
  if (v->is_null) return false;
  int id = v->type.id;
  if (col_type == CAT_T_BIGINT) { /* integers only: a fraction would round the bound */
    if (id < CAT_T_TINYINT || id > CAT_T_BIGINT) return false;
    if (v->u.i > INT64_MAX / 1000 || v->u.i < INT64_MIN / 1000) return false;
    *us = v->u.i * 1000;
    return true;
  }
  if (id == CAT_T_DATE) *us = v->u.i * CAT_US_PER_DAY;
  else if (id == CAT_T_TIMESTAMP) *us = v->u.i;
  else return false;
  return true;
}

void cat_ms_text(int64_t ms, char *buf, size_t cap) {
  cat_value v = cat_v_int(CAT_T_TIMESTAMP, ms * 1000);
  char t[64];
  cat_text_format(&v, t, sizeof t);
  t[40] = 0; /* "YYYY-MM-DD HH:MM:SS.ffffff" is 26 */
  snprintf(buf, cap, strchr(t, '.') ? "%s" : "%s.000", t);
}
