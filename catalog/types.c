/*
** catalog/types.c: type names and parameters, value constructors and the catalog error
** helper. Nothing here parses text or encodes bytes (catalog/text.c, keycodec.c,
** valcodec.c do).
*/
#include "catalog/types.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* ORDER CAT_STATUS */
static const char *const status_names[CAT_STATUS_COUNT] = {
    "CAT_OK",           "CAT_ERR_RANGE",  "CAT_ERR_SYNTAX", "CAT_ERR_TYPE",
    "CAT_ERR_CORRUPT",  "CAT_ERR_TOOBIG", "CAT_ERR_EXISTS", "CAT_ERR_NOTFOUND",
    "CAT_ERR_INVALID",  "CAT_ERR_KV",     "CAT_ERR_NOMEM",  "CAT_ERR_NULL"};

/* ORDER CAT_TYPE (index = id) */
static const char *const type_names[CAT_T_MAX + 1] = {
    "?",       "BOOLEAN", "TINYINT", "SMALLINT", "INTEGER",   "BIGINT", "FLOAT", "DOUBLE",
    "DECIMAL", "CHAR",    "VARCHAR", "VARBINARY", "DATE",     "TIME",   "TIMESTAMP", "ARRAY"};

int cat_err(cat_error *err, int code, const char *fmt, ...) {
  if (err) {
    va_list ap;
    va_start(ap, fmt);
    err->code = code;
    err->kv_code = 0;
    vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    va_end(ap);
  }
  return code;
}

const char *cat_status_name(int code) {
  if (code < 0 || code >= CAT_STATUS_COUNT) return "CAT_ERR_UNKNOWN";
  return status_names[code];
}

const char *cat_type_name(int id) {
  if (id < 1 || id > CAT_T_MAX) return "?";
  return type_names[id];
}

char *cat_type_format(const cat_type *t, char *buf, size_t cap) {
  if (!cap) return buf;
  if (t->id == CAT_T_ARRAY) { /* "VARCHAR(10) ARRAY", Phoenix's spelling */
    cat_type e = cat_type_elem(t);
    cat_type_format(&e, buf, cap);
    size_t n = strlen(buf);
    snprintf(buf + n, cap - n, " ARRAY");
    return buf;
  }
  const char *n = cat_type_name(t->id);
  if (t->id == CAT_T_DECIMAL && t->precision)
    snprintf(buf, cap, "%s(%u,%u)", n, (unsigned)t->precision, (unsigned)t->scale);
  else if ((t->id == CAT_T_CHAR || t->id == CAT_T_VARCHAR) && t->length)
    snprintf(buf, cap, "%s(%u)", n, (unsigned)t->length);
  else
    snprintf(buf, cap, "%s", n);
  return buf;
}

int cat_type_lookup(const char *name) {
  for (int i = 1; i < CAT_T_ARRAY; i++) /* ARRAY is not a type name by itself */
    if (strcmp(name, type_names[i]) == 0) return i;
  if (strcmp(name, "INT") == 0) return CAT_T_INTEGER;
  if (strcmp(name, "REAL") == 0) return CAT_T_FLOAT;
  if (strcmp(name, "NUMERIC") == 0) return CAT_T_DECIMAL;
  if (strcmp(name, "BINARY") == 0) return CAT_T_VARBINARY;
  return 0;
}

/* Other dialects' names for Rowan's types (PostgreSQL, MySQL, SQLite, SQL Server, Oracle,
** Phoenix), for the hint after "unknown type". Upper case, as the parser folds names. */
static const struct {
  const char *name; /* the other dialect's name */
  const char *ours; /* the Rowan type to write instead */
} type_hints[] = {
    {"TEXT", "VARCHAR"},        {"STRING", "VARCHAR"},     {"CLOB", "VARCHAR"},
    {"NVARCHAR", "VARCHAR"},    {"VARCHAR2", "VARCHAR"},   {"NVARCHAR2", "VARCHAR"},
    {"TINYTEXT", "VARCHAR"},    {"MEDIUMTEXT", "VARCHAR"}, {"LONGTEXT", "VARCHAR"},
    {"NTEXT", "VARCHAR"},       {"CHARACTER", "CHAR"},     {"NCHAR", "CHAR"},
    {"BPCHAR", "CHAR"},         {"INT4", "INTEGER"},       {"INT32", "INTEGER"},
    {"MEDIUMINT", "INTEGER"},   {"SERIAL", "INTEGER"},     {"INT8", "BIGINT"},
    {"INT64", "BIGINT"},        {"LONG", "BIGINT"},        {"BIGSERIAL", "BIGINT"},
    {"INT2", "SMALLINT"},       {"INT16", "SMALLINT"},     {"SMALLSERIAL", "SMALLINT"},
    {"INT1", "TINYINT"},        {"FLOAT8", "DOUBLE"},      {"FLOAT64", "DOUBLE"},
    {"FLOAT4", "FLOAT"},        {"FLOAT32", "FLOAT"},      {"NUMBER", "DECIMAL"},
    {"MONEY", "DECIMAL"},       {"DEC", "DECIMAL"},        {"BOOL", "BOOLEAN"},
    {"BIT", "BOOLEAN"},         {"DATETIME", "TIMESTAMP"}, {"DATETIME2", "TIMESTAMP"},
    {"SMALLDATETIME", "TIMESTAMP"}, {"TIMESTAMPTZ", "TIMESTAMP"},
    {"TIMESTAMP_NTZ", "TIMESTAMP"}, {"TIMETZ", "TIME"},    {"BLOB", "VARBINARY"},
    {"BYTEA", "VARBINARY"},     {"BYTES", "VARBINARY"},    {"IMAGE", "VARBINARY"},
    {"LONGBLOB", "VARBINARY"},  {"RAW", "VARBINARY"},      {"UNSIGNED_INT", "INTEGER"},
    {"UNSIGNED_LONG", "BIGINT"}, {"UNSIGNED_SMALLINT", "SMALLINT"},
    {"UNSIGNED_TINYINT", "TINYINT"}, {"UNSIGNED_FLOAT", "FLOAT"},
    {"UNSIGNED_DOUBLE", "DOUBLE"}, {"UNSIGNED_DATE", "DATE"}, {"UNSIGNED_TIME", "TIME"},
    {"UNSIGNED_TIMESTAMP", "TIMESTAMP"},
};

const char *cat_type_hint(const char *name) {
  for (size_t i = 0; i < sizeof type_hints / sizeof type_hints[0]; i++)
    if (strcmp(name, type_hints[i].name) == 0) return type_hints[i].ours;
  return NULL;
}

int cat_type_with_args(int id, int nargs, const int64_t *arg, bool array, cat_type *out,
                       cat_error *err) {
  cat_type t = cat_type_of(id);
  const char *tn = cat_type_name(id);
  switch (id) {
    case CAT_T_CHAR:
    case CAT_T_VARCHAR:
      if (nargs > 1)
        return cat_err(err, CAT_ERR_INVALID, "%s takes one length, not %d arguments", tn, nargs);
      if (nargs == 1) {
        if (arg[0] < 1 || arg[0] > CAT_MAX_CHAR_LENGTH)
          return cat_err(err, CAT_ERR_INVALID, "%s length %lld out of range (1..%d)", tn,
                         (long long)arg[0], CAT_MAX_CHAR_LENGTH);
        t.length = (uint32_t)arg[0];
      } else if (id == CAT_T_CHAR) {
        t.length = 1; /* CHAR alone is CHAR(1), as in standard SQL */
      }
      break;
    case CAT_T_DECIMAL:
      if (nargs >= 1) {
        if (arg[0] < 1 || arg[0] > CAT_DEC_MAX_PRECISION)
          return cat_err(err, CAT_ERR_INVALID, "DECIMAL precision %lld out of range (1..%d)",
                         (long long)arg[0], CAT_DEC_MAX_PRECISION);
        t.precision = (uint8_t)arg[0];
      }
      if (nargs == 2) {
        if (arg[1] > arg[0])
          return cat_err(err, CAT_ERR_INVALID, "DECIMAL scale %lld exceeds precision %lld",
                         (long long)arg[1], (long long)arg[0]);
        t.scale = (uint8_t)arg[1];
      }
      break;
    default:
      if (nargs > 0) return cat_err(err, CAT_ERR_INVALID, "type %s takes no arguments", tn);
      break;
  }
  if (array) t = cat_type_array_of(&t); /* VARCHAR ARRAY, INTEGER[] */
  int rc = cat_type_validate(&t, err);
  if (rc == CAT_OK) *out = t;
  return rc;
}

int cat_type_validate(const cat_type *t, cat_error *err) {
  if (t->id < 1 || t->id > CAT_T_MAX) return cat_err(err, CAT_ERR_INVALID, "unknown type id %d", t->id);
  if (t->id == CAT_T_ARRAY) {
    if (t->elem < 1 || t->elem >= CAT_T_ARRAY)
      return cat_err(err, CAT_ERR_INVALID, "ARRAY of unknown element type id %d", t->elem);
    cat_type e = cat_type_elem(t);
    return cat_type_validate(&e, err);
  }
  if (t->elem) return cat_err(err, CAT_ERR_INVALID, "element type id %d on a non-ARRAY type", t->elem);
  if (t->id == CAT_T_DECIMAL) {
    if (t->precision > CAT_DEC_MAX_PRECISION)
      return cat_err(err, CAT_ERR_INVALID, "DECIMAL precision %u out of range 1..38", t->precision);
    if (t->precision && t->scale > t->precision)
      return cat_err(err, CAT_ERR_INVALID, "DECIMAL scale %u larger than precision %u", t->scale,
                     t->precision);
  }
  if (t->id == CAT_T_CHAR && (t->length < 1 || t->length > CAT_MAX_CHAR_LENGTH))
    return cat_err(err, CAT_ERR_INVALID, "CHAR length %u out of range 1..%d", t->length,
                   CAT_MAX_CHAR_LENGTH);
  if (t->id == CAT_T_VARCHAR && t->length > CAT_MAX_CHAR_LENGTH)
    return cat_err(err, CAT_ERR_INVALID, "VARCHAR length %u out of range 1..%d", t->length,
                   CAT_MAX_CHAR_LENGTH);
  return CAT_OK;
}

bool cat_type_is_integer(int id) { return id >= CAT_T_TINYINT && id <= CAT_T_BIGINT; }
bool cat_type_is_float(int id) { return id == CAT_T_FLOAT || id == CAT_T_DOUBLE; }
bool cat_type_is_numeric(int id) { return id >= CAT_T_TINYINT && id <= CAT_T_DECIMAL; }
bool cat_type_is_string(int id) { return id == CAT_T_CHAR || id == CAT_T_VARCHAR; }
bool cat_type_has_bytes(int id) {
  return id == CAT_T_CHAR || id == CAT_T_VARCHAR || id == CAT_T_VARBINARY || id == CAT_T_ARRAY;
}

int cat_type_fixed_width(int id) {
  switch (id) {
    case CAT_T_BOOLEAN: case CAT_T_TINYINT: return 1;
    case CAT_T_SMALLINT: return 2;
    case CAT_T_INTEGER: case CAT_T_FLOAT: case CAT_T_DATE: return 4;
    case CAT_T_BIGINT: case CAT_T_DOUBLE: case CAT_T_TIME: case CAT_T_TIMESTAMP: return 8;
    default: return 0;
  }
}

cat_value cat_v_null(cat_type t) {
  /* built in place (a memset of a local then a copy stalls on store forwarding, and row
     decoding calls this for every column of every row) */
  return (cat_value){.type = t, .is_null = true};
}

cat_value cat_v_bool(bool b) {
  cat_value v = cat_v_null(cat_type_of(CAT_T_BOOLEAN));
  v.is_null = false;
  v.u.b = b;
  return v;
}

cat_value cat_v_int(int id, int64_t i) {
  cat_value v = cat_v_null(cat_type_of(id));
  v.is_null = false;
  v.u.i = i;
  return v;
}

cat_value cat_v_double(double d) {
  cat_value v = cat_v_null(cat_type_of(CAT_T_DOUBLE));
  v.is_null = false;
  v.u.d = d;
  return v;
}

cat_value cat_v_float(float f) {
  cat_value v = cat_v_null(cat_type_of(CAT_T_FLOAT));
  v.is_null = false;
  v.u.d = (double)f;
  return v;
}

cat_value cat_v_dec(cat_dec d, uint8_t precision, uint8_t scale) {
  cat_type t = {CAT_T_DECIMAL, precision, scale, 0, 0};
  cat_value v = cat_v_null(t);
  v.is_null = false;
  v.u.dec = d;
  return v;
}

cat_value cat_v_str(int id, const void *p, size_t len) {
  cat_value v = cat_v_null(cat_type_of(id));
  v.is_null = false;
  v.u.s.p = (const uint8_t *)p;
  v.u.s.len = (uint32_t)len;
  return v;
}
