/*
** exec/bulk_field.c: a bulk-loaded row's fields made into checked values of their columns'
** types (exec/bulk_field.h): text parsed with the catalog's fast parsers for the common
** types and its general parser otherwise; typed values converted by the catalog's cast
** rules (catalog/value.h) and checked against the column's limits. Not here: row keys,
** cells and the load (exec/bulk.c).
*/
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "catalog/text_fast.h"
#include "catalog/value.h"
#include "exec/bulk_field.h"
#include "exec/rowcodec.h"

/* Parse field text s[0..n) for column c into *v, checked against the column's type.
** EXEC_CONSTRAINT with the column named when it does not parse or fit. */
int exec_bulk_parse_field(const cat_column *c, const char *s, size_t n, cat_value *v,
                          exec_error *err) {
  const cat_type *t = &c->type;
  v->type = *t;
  v->is_null = false;
  if (t->id == CAT_T_ARRAY) /* its encoding needs memory the load does not keep per row */
    return exec_error_set(err, EXEC_CONSTRAINT, "column %s: the bulk load does not read ARRAY "
                          "columns (load without --bulk / rowan_bulk: UPSERT reads '[...]')",
                          c->name);
  switch (t->id) {
    case CAT_T_TINYINT: case CAT_T_SMALLINT: case CAT_T_INTEGER: case CAT_T_BIGINT: {
      int64_t x;
      if (!cat_text_fast_int(s, n, &x)) break;
      int64_t lo = t->id == CAT_T_TINYINT ? INT8_MIN : t->id == CAT_T_SMALLINT ? INT16_MIN
                   : t->id == CAT_T_INTEGER ? INT32_MIN : INT64_MIN;
      int64_t hi = t->id == CAT_T_TINYINT ? INT8_MAX : t->id == CAT_T_SMALLINT ? INT16_MAX
                   : t->id == CAT_T_INTEGER ? INT32_MAX : INT64_MAX;
      if (x < lo || x > hi) break; /* the general parser words the error */
      v->u.i = x;
      return EXEC_OK;
    }
    case CAT_T_DOUBLE:
      if (cat_text_fast_double(s, n, &v->u.d)) return EXEC_OK;
      break;
    case CAT_T_FLOAT: {
      double d;
      if (!cat_text_fast_double(s, n, &d) || fabs(d) > 1e38) break;
      v->u.d = (double)(float)d;
      return EXEC_OK;
    }
    case CAT_T_TIMESTAMP:
      if (cat_text_fast_timestamp(s, n, &v->u.i) && v->u.i >= CAT_TS_MIN &&
          v->u.i <= CAT_TS_MAX)
        return EXEC_OK;
      break;
    case CAT_T_VARCHAR: case CAT_T_CHAR: {
      const uint8_t *p = (const uint8_t *)s;
      if (n > UINT32_MAX || !cat_utf8_valid(p, n, NULL)) break;
      size_t len = t->id == CAT_T_CHAR ? cat_char_trim(p, n) : n;
      if (t->length && len > t->length && cat_utf8_chars(p, len) > t->length) break;
      v->u.s.p = p;
      v->u.s.len = (uint32_t)len;
      return EXEC_OK;
    }
    default:
      break;
  }
  cat_error ce = {0};
  if (cat_text_parse(t, s, n, v, &ce) != CAT_OK)
    return exec_error_set(err, EXEC_CONSTRAINT, "column %s: %s", c->name, ce.msg);
  return EXEC_OK;
}

int exec_bulk_cast_field(const cat_column *c, const cat_value *in, cat_value *v, uint8_t *buf,
                         exec_error *err) {
  const cat_type *t = &c->type;
  if (in->type.id == t->id && (t->id == CAT_T_DOUBLE || t->id == CAT_T_BIGINT)) {
    *v = *in; /* the common case of a reading or a count: nothing to convert or check */
    v->type = *t;
    return EXEC_OK;
  }
  cat_error ce;
  ce.msg[0] = 0;
  cat_value tmp;
  if (t->id == CAT_T_ARRAY)
    return exec_error_set(err, EXEC_CONSTRAINT, "column %s: the bulk load does not read ARRAY "
                          "columns (load without --bulk / rowan_bulk: UPSERT reads '[...]')",
                          c->name);
  if (cat_value_cast(in, t, &tmp, buf, 64, &ce) != CAT_OK ||
      cat_value_check(t, &tmp, v, &ce) != CAT_OK)
    return exec_error_set(err, EXEC_CONSTRAINT, "column %s: %s", c->name, ce.msg);
  return EXEC_OK;
}
