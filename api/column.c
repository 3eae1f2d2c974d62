/*
** api/column.c: the result column getters of include/rowan.h (rowan_column_*), with
** SQLite-style conversions between the value classes:
**  - text of any value: cat_text_format (docs/TYPES.md) into a per-column buffer of the
**    statement, reused from row to row (no allocation per value once the buffer has grown);
**    CHAR/VARCHAR/VARBINARY bytes are copied there too so the text is NUL-terminated; the
**    blob of such a value is the row's own bytes (no copy; an empty one comes from the
**    buffer, so it is not NULL) and its byte count needs no copy either;
**  - integer of a number: integers as they are, BOOLEAN 1/0, FLOAT/DOUBLE and DECIMAL
**    truncated toward zero and clamped to the int64 range (NaN gives 0); of a text, the
**    number its leading characters spell (strtod, then as a number), 0 if none; of DATE
**    and TIMESTAMP, milliseconds since the epoch; of TIME, milliseconds since midnight;
**  - double likewise (DECIMAL via its exact text);
**  - timestamp (ms): TIMESTAMP and DATE as ms since the epoch (floor), a text parsed as a
**    TIMESTAMP literal (0 if it is not one), other values as rowan_column_int64;
**  - rowan_column_values: many columns of the row in one call, the common types read in
**    place (strings as the row's own bytes, no copy), DECIMAL, DATE and TIME through the
**    getters above so the results cannot differ; text is not parsed into numbers there.
** Not here: stepping and state (api/rowan.c).
*/
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "api/api_int.h"
#include "catalog/types.h"
#include "catalog/value.h"

/* api_value, inlined into the getters below (one call per value read). */
static inline const cat_value *value_at(const rowan_stmt *stmt, int i) {
  if (!stmt || stmt->state != API_ROW || i < 0 || i >= stmt->ncol || !stmt->row) return NULL;
  return &stmt->row[i];
}

const cat_value *api_value(rowan_stmt *stmt, int i) { return value_at(stmt, i); }

void api_free_columns(rowan_stmt *stmt) {
  if (stmt->cols)
    for (int i = 0; i < stmt->ncol; i++) free(stmt->cols[i].p);
  free(stmt->cols);
  free(stmt->decl);
  stmt->cols = NULL;
  stmt->decl = NULL;
}

int rowan_column_count(rowan_stmt *stmt) { return stmt ? stmt->ncol : 0; }

const char *rowan_column_name(rowan_stmt *stmt, int i) {
  if (!stmt || i < 0 || i >= stmt->ncol) return NULL;
  return exec_column_name(stmt->st, i);
}

const char *rowan_column_decltype(rowan_stmt *stmt, int i) {
  if (!stmt || i < 0 || i >= stmt->ncol) return NULL;
  const cat_type *t = exec_column_type(stmt->st, i);
  if (!t) return NULL;
  if (!stmt->decl) {
    stmt->decl = calloc((size_t)stmt->ncol, sizeof *stmt->decl);
    if (!stmt->decl) return NULL;
  }
  if (!stmt->decl[i][0]) cat_type_format(t, stmt->decl[i], sizeof stmt->decl[i]);
  return stmt->decl[i];
}

int rowan_column_type(rowan_stmt *stmt, int i) {
  const cat_value *v = value_at(stmt, i);
  if (!v || v->is_null) return ROWAN_NULL;
  switch (v->type.id) {
    case CAT_T_BOOLEAN:
    case CAT_T_TINYINT:
    case CAT_T_SMALLINT:
    case CAT_T_INTEGER:
    case CAT_T_BIGINT: return ROWAN_INTEGER;
    case CAT_T_FLOAT:
    case CAT_T_DOUBLE: return ROWAN_FLOAT;
    case CAT_T_VARBINARY: return ROWAN_BLOB;
    case CAT_T_TIMESTAMP: return ROWAN_TIMESTAMP;
    default: return ROWAN_TEXT;
  }
}

/* The text of column i in its buffer (NUL-terminated), *len its length; NULL for SQL NULL,
** no row, or out of memory. */
static const char *text_of(rowan_stmt *stmt, int i, size_t *len) {
  const cat_value *v = value_at(stmt, i);
  if (!v || v->is_null) return NULL;
  if (!stmt->cols) {
    stmt->cols = calloc((size_t)stmt->ncol, sizeof *stmt->cols);
    if (!stmt->cols) return NULL;
  }
  api_colbuf *b = &stmt->cols[i];
  if (b->p && b->gen == stmt->gen) {
    *len = b->len;
    return b->p;
  }
  size_t need;
  bool bytes = cat_type_is_string(v->type.id) || v->type.id == CAT_T_VARBINARY;
  need = bytes ? v->u.s.len : cat_text_format(v, b->p, b->p ? b->cap : 0);
  if (!b->p || need + 1 > b->cap) {
    size_t cap = need + 1 < 64 ? 64 : need + 1;
    char *p = realloc(b->p, cap);
    if (!p) return NULL;
    b->p = p;
    b->cap = cap;
    if (!bytes) cat_text_format(v, b->p, b->cap);
  }
  if (bytes) {
    if (need) memcpy(b->p, v->u.s.p, need);
    b->p[need] = 0;
  }
  b->len = need;
  b->gen = stmt->gen;
  *len = need;
  return b->p;
}

const char *rowan_column_text(rowan_stmt *stmt, int i) {
  size_t len;
  return text_of(stmt, i, &len);
}

/* The value of column i when it holds bytes (CHAR, VARCHAR, VARBINARY, not NULL), else NULL. */
static const cat_value *bytes_value(rowan_stmt *stmt, int i) {
  const cat_value *v = value_at(stmt, i);
  if (!v || v->is_null || !(cat_type_is_string(v->type.id) || v->type.id == CAT_T_VARBINARY))
    return NULL;
  return v;
}

const void *rowan_column_blob(rowan_stmt *stmt, int i) {
  const cat_value *v = bytes_value(stmt, i);
  if (v && v->u.s.len) return v->u.s.p; /* the row's own bytes, valid until the next step */
  size_t len;
  return text_of(stmt, i, &len);
}

int rowan_column_bytes(rowan_stmt *stmt, int i) {
  const cat_value *v = bytes_value(stmt, i);
  size_t len = 0;
  if (v) len = v->u.s.len; /* no copy needed to know it */
  else if (!text_of(stmt, i, &len)) return 0;
  return len > (size_t)INT32_MAX ? INT32_MAX : (int)len;
}

static int64_t clamp_double(double d) {
  if (isnan(d)) return 0;
  if (d >= 9223372036854775807.0) return INT64_MAX;
  if (d <= -9223372036854775808.0) return INT64_MIN;
  return (int64_t)d;
}

/* Floor division for negative epoch values. */
static int64_t floor_div(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) q--;
  return q;
}

static double text_number(rowan_stmt *stmt, int i) {
  size_t len;
  const char *s = text_of(stmt, i, &len);
  return s ? strtod(s, NULL) : 0.0;
}

int64_t rowan_column_int64(rowan_stmt *stmt, int i) {
  const cat_value *v = value_at(stmt, i);
  if (!v || v->is_null) return 0;
  switch (v->type.id) {
    case CAT_T_BOOLEAN: return v->u.b ? 1 : 0;
    case CAT_T_TINYINT:
    case CAT_T_SMALLINT:
    case CAT_T_INTEGER:
    case CAT_T_BIGINT: return v->u.i;
    case CAT_T_FLOAT:
    case CAT_T_DOUBLE: return clamp_double(v->u.d);
    case CAT_T_DECIMAL: {
      cat_i128 x = v->u.dec.v;
      for (int32_t s = 0; s < v->u.dec.scale; s++) x /= 10;
      if (x > (cat_i128)INT64_MAX) return INT64_MAX;
      if (x < (cat_i128)INT64_MIN) return INT64_MIN;
      return (int64_t)x;
    }
    case CAT_T_DATE: return v->u.i * 86400000LL;
    case CAT_T_TIME:
    case CAT_T_TIMESTAMP: return floor_div(v->u.i, 1000);
    default: return clamp_double(text_number(stmt, i));
  }
}

double rowan_column_double(rowan_stmt *stmt, int i) {
  const cat_value *v = value_at(stmt, i);
  if (!v || v->is_null) return 0.0;
  switch (v->type.id) {
    case CAT_T_FLOAT:
    case CAT_T_DOUBLE: return v->u.d;
    case CAT_T_DECIMAL:
    case CAT_T_CHAR:
    case CAT_T_VARCHAR:
    case CAT_T_VARBINARY: return text_number(stmt, i);
    default: return (double)rowan_column_int64(stmt, i);
  }
}

int64_t rowan_column_timestamp(rowan_stmt *stmt, int i) {
  const cat_value *v = value_at(stmt, i);
  if (!v || v->is_null) return 0;
  if (cat_type_is_string(v->type.id)) {
    cat_type t = cat_type_of(CAT_T_TIMESTAMP);
    cat_value out;
    cat_error err;
    if (cat_text_parse(&t, (const char *)v->u.s.p, v->u.s.len, &out, &err) != CAT_OK) return 0;
    return floor_div(out.u.i, 1000);
  }
  return rowan_column_int64(stmt, i);
}

/* One value for rowan_column_values: column i of the current row, v its value (not NULL). The
** common types are read here; DECIMAL, DATE, TIME (and any other) through the getters
** themselves, so the results cannot differ. Returns ROWAN_OK or ROWAN_NOMEM (text). */
static inline int fill_value(rowan_stmt *stmt, int i, const cat_value *v, rowan_value *o) {
  o->bytes = 0;
  o->p = NULL;
  switch (v->type.id) {
    case CAT_T_DOUBLE:
    case CAT_T_FLOAT:
      o->type = ROWAN_FLOAT;
      o->d = v->u.d;
      o->i = clamp_double(v->u.d);
      return ROWAN_OK;
    case CAT_T_TIMESTAMP:
      o->type = ROWAN_TIMESTAMP;
      o->i = floor_div(v->u.i, 1000);
      o->d = (double)o->i;
      return ROWAN_OK;
    case CAT_T_TINYINT:
    case CAT_T_SMALLINT:
    case CAT_T_INTEGER:
    case CAT_T_BIGINT:
      o->type = ROWAN_INTEGER;
      o->i = v->u.i;
      o->d = (double)o->i;
      return ROWAN_OK;
    case CAT_T_BOOLEAN:
      o->type = ROWAN_INTEGER;
      o->i = v->u.b ? 1 : 0;
      o->d = (double)o->i;
      return ROWAN_OK;
    case CAT_T_CHAR:
    case CAT_T_VARCHAR:
    case CAT_T_VARBINARY:
      o->type = v->type.id == CAT_T_VARBINARY ? ROWAN_BLOB : ROWAN_TEXT;
      o->i = 0;
      o->d = 0.0;
      o->p = v->u.s.len ? (const void *)v->u.s.p : (const void *)"";
      o->bytes = v->u.s.len > (uint32_t)INT32_MAX ? INT32_MAX : (int)v->u.s.len;
      return ROWAN_OK;
    default: { /* DECIMAL, DATE, TIME: class ROWAN_TEXT, with their numbers */
      o->type = rowan_column_type(stmt, i);
      o->i = rowan_column_int64(stmt, i);
      o->d = rowan_column_double(stmt, i);
      size_t len = 0;
      const char *s = text_of(stmt, i, &len);
      if (!s) return ROWAN_NOMEM;
      o->p = s;
      o->bytes = len > (size_t)INT32_MAX ? INT32_MAX : (int)len;
      return ROWAN_OK;
    }
  }
}

int rowan_column_values(rowan_stmt *stmt, int first, int n, rowan_value *out) {
  if (!stmt) return ROWAN_MISUSE;
  if (!out && n > 0)
    return api_error(stmt->db, ROWAN_MISUSE, -1, "misuse: rowan_column_values into NULL");
  if (first < 0 || n < 0 || first > stmt->ncol - n)
    return api_error(stmt->db, ROWAN_RANGE, -1,
                     "columns %d..%lld out of range (the result has %d column%s)", first,
                     (long long)first + n - 1, stmt->ncol, stmt->ncol == 1 ? "" : "s");
  if (stmt->state != API_ROW || !stmt->row) {
    if (n > 0) { /* out may be NULL when n is 0 */
      memset(out, 0, (size_t)n * sizeof *out);
      for (int k = 0; k < n; k++) out[k].type = ROWAN_NULL;
    }
    return api_error(stmt->db, ROWAN_MISUSE, -1,
                     "misuse: rowan_column_values without a current row (step to ROWAN_ROW first)");
  }
  const cat_value *row = stmt->row + first;
  int rc = ROWAN_OK;
  for (int k = 0; k < n; k++) {
    rowan_value *o = &out[k];
    const cat_value *v = &row[k];
    if (v->is_null) {
      *o = (rowan_value){ROWAN_NULL, 0, 0, 0.0, NULL};
      continue;
    }
    if (v->type.id == CAT_T_DOUBLE) { /* the common value, ahead of the switch */
      double d = v->u.d;
      /* inside the int64 range (NaN is not) the cast is clamp_double's result */
      int64_t i = fabs(d) < 9223372036854775807.0 ? (int64_t)d : clamp_double(d);
      *o = (rowan_value){ROWAN_FLOAT, 0, i, d, NULL};
      continue;
    }
    if (fill_value(stmt, first + k, v, o) != ROWAN_OK) rc = ROWAN_NOMEM;
  }
  if (rc != ROWAN_OK)
    return api_error(stmt->db, rc, -1, "out of memory making the text of a column value");
  return ROWAN_OK;
}
