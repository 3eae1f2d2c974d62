/*
** catalog/value.c: typed comparison, conversion and limit checks of cat_value, and UTF-8
** validation (rules in catalog/value.h). Text parsing and formatting are in catalog/text.c,
** DECIMAL arithmetic in catalog/decimal.c; nothing here encodes bytes.
*/
#include "catalog/value.h"

#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "catalog/array.h"
#include "catalog/decimal.h"

bool cat_utf8_valid(const uint8_t *p, size_t len, size_t *bad_off) {
  size_t i = 0;
  while (i < len) {
    uint8_t c = p[i];
    size_t need;
    uint32_t cp;
    if (c < 0x80) { i++; continue; }
    if (c >= 0xC2 && c <= 0xDF) { need = 1; cp = c & 0x1F; }
    else if (c >= 0xE0 && c <= 0xEF) { need = 2; cp = c & 0x0F; }
    else if (c >= 0xF0 && c <= 0xF4) { need = 3; cp = c & 0x07; }
    else goto bad;
    if (len - i <= need) goto bad; /* truncated sequence */
    for (size_t k = 1; k <= need; k++) {
      if ((p[i + k] & 0xC0) != 0x80) goto bad;
      cp = (cp << 6) | (p[i + k] & 0x3F);
    }
    if ((need == 2 && cp < 0x800) || (need == 3 && cp < 0x10000) || cp > 0x10FFFF ||
        (cp >= 0xD800 && cp <= 0xDFFF))
      goto bad;
    i += need + 1;
  }
  return true;
bad:
  if (bad_off) *bad_off = i;
  return false;
}

size_t cat_utf8_chars(const uint8_t *p, size_t len) {
  size_t n = 0;
  for (size_t i = 0; i < len; i++) n += (p[i] & 0xC0) != 0x80;
  return n;
}

size_t cat_char_trim(const uint8_t *p, size_t len) {
  while (len > 0 && p[len - 1] == ' ') len--;
  return len;
}

static int64_t int_min(int id) {
  switch (id) {
    case CAT_T_TINYINT: return INT8_MIN;
    case CAT_T_SMALLINT: return INT16_MIN;
    case CAT_T_INTEGER: return INT32_MIN;
    default: return INT64_MIN;
  }
}
static int64_t int_max(int id) {
  switch (id) {
    case CAT_T_TINYINT: return INT8_MAX;
    case CAT_T_SMALLINT: return INT16_MAX;
    case CAT_T_INTEGER: return INT32_MAX;
    default: return INT64_MAX;
  }
}

int cat_value_check(const cat_type *t, const cat_value *in, cat_value *out, cat_error *err) {
  char tt[32];
  cat_value v = *in;
  v.type = *t;
  if (in->is_null) { *out = v; return CAT_OK; }
  if (t->id == CAT_T_ARRAY) return cat_array_check(t, in, out, err);
  if (in->type.id != t->id) {
    char it[32];
    return cat_err(err, CAT_ERR_TYPE, "value of type %s given for %s",
                   cat_type_format(&in->type, it, sizeof it), cat_type_format(t, tt, sizeof tt));
  }
  /* The type's name (tt) is formatted only on the failing branches: a check that passes, the
  ** usual case on every bound or imported value, costs no snprintf. */
  switch (t->id) {
    case CAT_T_TINYINT: case CAT_T_SMALLINT: case CAT_T_INTEGER: case CAT_T_BIGINT:
      if (v.u.i < int_min(t->id) || v.u.i > int_max(t->id))
        return cat_err(err, CAT_ERR_RANGE, "value %" PRId64 " out of range for %s", v.u.i,
                       cat_type_format(t, tt, sizeof tt));
      break;
    case CAT_T_FLOAT:
      if (isfinite(v.u.d) && isinf((float)v.u.d))
        return cat_err(err, CAT_ERR_RANGE, "value %g out of range for FLOAT", v.u.d);
      v.u.d = (double)(float)v.u.d;
      if (isnan(v.u.d)) v.u.d = NAN;
      break;
    case CAT_T_DOUBLE:
      if (isnan(v.u.d)) v.u.d = NAN;
      break;
    case CAT_T_DECIMAL: {
      int rc = cat_dec_fit(in->u.dec, t->precision, t->scale, &v.u.dec, err);
      if (rc) return rc;
      break;
    }
    case CAT_T_CHAR: case CAT_T_VARCHAR: {
      size_t bad;
      if (!cat_utf8_valid(v.u.s.p, v.u.s.len, &bad))
        return cat_err(err, CAT_ERR_RANGE, "invalid UTF-8 in %s value at byte %zu",
                       cat_type_name(t->id), bad);
      if (t->id == CAT_T_CHAR) v.u.s.len = (uint32_t)cat_char_trim(v.u.s.p, v.u.s.len);
      if (t->length && cat_utf8_chars(v.u.s.p, v.u.s.len) > t->length)
        return cat_err(err, CAT_ERR_RANGE, "value '%.*s' too long for %s",
                       (int)(v.u.s.len > 64 ? 64 : v.u.s.len), (const char *)v.u.s.p,
                       cat_type_format(t, tt, sizeof tt));
      break;
    }
    case CAT_T_DATE:
      if (v.u.i < CAT_DATE_MIN || v.u.i > CAT_DATE_MAX)
        return cat_err(err, CAT_ERR_RANGE, "DATE value out of range 0001-01-01..9999-12-31");
      break;
    case CAT_T_TIME:
      if (v.u.i < 0 || v.u.i > CAT_TIME_MAX)
        return cat_err(err, CAT_ERR_RANGE, "TIME value out of range 00:00:00..23:59:59.999999");
      break;
    case CAT_T_TIMESTAMP:
      if (v.u.i < CAT_TS_MIN || v.u.i > CAT_TS_MAX)
        return cat_err(err, CAT_ERR_RANGE,
                       "TIMESTAMP value out of range 0001-01-01..9999-12-31 23:59:59.999999");
      break;
    default: break;
  }
  *out = v;
  return CAT_OK;
}

static int sgn(int64_t a, int64_t b) { return (a > b) - (a < b); }

static int cmp_bytes(const uint8_t *a, size_t al, const uint8_t *b, size_t bl) {
  size_t m = al < bl ? al : bl;
  int c = m ? memcmp(a, b, m) : 0;
  if (c) return c < 0 ? -1 : 1;
  return (al > bl) - (al < bl);
}

static int cmp_double(double a, double b) {
  bool na = isnan(a), nb = isnan(b);
  if (na || nb) return na - nb;
  return (a > b) - (a < b);
}

static double as_double(const cat_value *v) {
  if (cat_type_is_integer(v->type.id)) return (double)v->u.i;
  if (v->type.id == CAT_T_DECIMAL) return cat_dec_to_double(v->u.dec);
  return v->u.d;
}

static cat_dec as_dec(const cat_value *v) {
  return v->type.id == CAT_T_DECIMAL ? v->u.dec : cat_dec_from_i64(v->u.i);
}

int cat_value_compare(const cat_value *a, const cat_value *b, int *cmp, cat_error *err) {
  *cmp = 0;
  if (a->is_null || b->is_null) { *cmp = (int)b->is_null - (int)a->is_null; return CAT_OK; }
  int x = a->type.id, y = b->type.id;
  if (x == CAT_T_ARRAY && y == CAT_T_ARRAY) return cat_array_compare(a, b, cmp, err);
  if (cat_type_is_numeric(x) && cat_type_is_numeric(y)) {
    if (cat_type_is_float(x) || cat_type_is_float(y)) *cmp = cmp_double(as_double(a), as_double(b));
    else if (x == CAT_T_DECIMAL || y == CAT_T_DECIMAL) *cmp = cat_dec_cmp(as_dec(a), as_dec(b));
    else *cmp = sgn(a->u.i, b->u.i);
    return CAT_OK;
  }
  bool sa = cat_type_is_string(x) || x == CAT_T_VARBINARY, sb = cat_type_is_string(y) || y == CAT_T_VARBINARY;
  if (sa && sb) {
    /* CHAR on either side: trailing spaces of both text values do not count ('ab' = 'ab '). */
    bool pad = (x == CAT_T_CHAR && y != CAT_T_VARBINARY) || (y == CAT_T_CHAR && x != CAT_T_VARBINARY);
    size_t al = pad ? cat_char_trim(a->u.s.p, a->u.s.len) : a->u.s.len;
    size_t bl = pad ? cat_char_trim(b->u.s.p, b->u.s.len) : b->u.s.len;
    *cmp = cmp_bytes(a->u.s.p, al, b->u.s.p, bl);
    return CAT_OK;
  }
  if (x == CAT_T_BOOLEAN && y == CAT_T_BOOLEAN) { *cmp = (int)a->u.b - (int)b->u.b; return CAT_OK; }
  bool da = x == CAT_T_DATE || x == CAT_T_TIMESTAMP, db = y == CAT_T_DATE || y == CAT_T_TIMESTAMP;
  if (da && db) {
    int64_t av = x == CAT_T_DATE ? a->u.i * CAT_US_PER_DAY : a->u.i;
    int64_t bv = y == CAT_T_DATE ? b->u.i * CAT_US_PER_DAY : b->u.i;
    *cmp = sgn(av, bv);
    return CAT_OK;
  }
  if (x == CAT_T_TIME && y == CAT_T_TIME) { *cmp = sgn(a->u.i, b->u.i); return CAT_OK; }
  return cat_err(err, CAT_ERR_TYPE, "cannot compare %s with %s", cat_type_name(x), cat_type_name(y));
}

/* Round a double half away from zero to an integer type, range-checked. */
static int double_to_int(double d, const cat_type *to, int64_t *out, cat_error *err) {
  char tt[32];
  if (!isfinite(d))
    return cat_err(err, CAT_ERR_RANGE, "value %g out of range for %s", d, cat_type_format(to, tt, sizeof tt));
  double r = round(d);
  if (r < -9223372036854775808.0 || r >= 9223372036854775808.0 || r < (double)int_min(to->id) ||
      r > (double)int_max(to->id))
    return cat_err(err, CAT_ERR_RANGE, "value %.17g out of range for %s", d,
                   cat_type_format(to, tt, sizeof tt));
  *out = (int64_t)r;
  return CAT_OK;
}

int cat_value_cast(const cat_value *in, const cat_type *to, cat_value *out, uint8_t *buf,
                   size_t cap, cat_error *err) {
  if (in->is_null) { *out = cat_v_null(*to); return CAT_OK; }
  int x = in->type.id;
  char tt[48], it[48]; /* type names, formatted only for an error message */
  if (x == CAT_T_ARRAY || to->id == CAT_T_ARRAY) {
    size_t len = 0;
    if (x == CAT_T_ARRAY && to->id == CAT_T_ARRAY) {
      if (in->type.elem == to->elem) return cat_array_check(to, in, out, err);
      return cat_array_convert(in, to, buf, cap, &len, out, err);
    }
    if (x == CAT_T_ARRAY && (to->id == CAT_T_VARCHAR || to->id == CAT_T_CHAR)) {
      size_t n = cat_array_format(in, (char *)buf, cap);
      if (n >= cap) return cat_err(err, CAT_ERR_TOOBIG, "conversion buffer too small");
      cat_value v = cat_v_str(CAT_T_VARCHAR, buf, n);
      v.type = *to;
      return cat_value_check(to, &v, out, err);
    }
    if (cat_type_is_string(x)) /* the text form [e1, e2] */
      return cat_array_parse(to, (const char *)in->u.s.p, in->u.s.len, buf, cap, &len, out, err);
    goto nocast;
  }
  cat_value v = cat_v_null(*to);
  v.is_null = false;
  bool src_str = cat_type_is_string(x) || x == CAT_T_VARBINARY;
  if (src_str && to->id != CAT_T_VARBINARY && !cat_type_is_string(to->id))
    return cat_text_parse(to, (const char *)in->u.s.p, in->u.s.len, out, err);
  switch (to->id) {
    case CAT_T_TINYINT: case CAT_T_SMALLINT: case CAT_T_INTEGER: case CAT_T_BIGINT:
      if (cat_type_is_integer(x)) v.u.i = in->u.i;
      else if (cat_type_is_float(x)) {
        int rc = double_to_int(in->u.d, to, &v.u.i, err);
        if (rc) return rc;
      } else if (x == CAT_T_DECIMAL) {
        cat_dec r;
        if (cat_dec_rescale(in->u.dec, 0, &r, NULL) != CAT_OK || r.v < INT64_MIN || r.v > INT64_MAX) {
          char t[CAT_DEC_TEXT_MAX];
          cat_dec_format(in->u.dec, t);
          return cat_err(err, CAT_ERR_RANGE, "value %s out of range for %s", t,
                         cat_type_format(to, tt, sizeof tt));
        }
        v.u.i = (int64_t)r.v;
      } else goto nocast;
      break;
    case CAT_T_FLOAT: case CAT_T_DOUBLE:
      if (!cat_type_is_numeric(x)) goto nocast;
      v.u.d = as_double(in);
      break;
    case CAT_T_DECIMAL:
      if (cat_type_is_integer(x)) v.u.dec = cat_dec_from_i64(in->u.i);
      else if (x == CAT_T_DECIMAL) v.u.dec = in->u.dec;
      else if (cat_type_is_float(x)) {
        if (cat_dec_from_double(in->u.d, &v.u.dec, NULL) != CAT_OK)
          return cat_err(err, CAT_ERR_RANGE, "value %g out of range for %s", in->u.d,
                         cat_type_format(to, tt, sizeof tt));
      } else goto nocast;
      break;
    case CAT_T_BOOLEAN:
      if (x != CAT_T_BOOLEAN) goto nocast;
      v.u.b = in->u.b;
      break;
    case CAT_T_CHAR: case CAT_T_VARCHAR: case CAT_T_VARBINARY:
      if (src_str) v.u.s = in->u.s;
      else {
        if (to->id == CAT_T_VARBINARY) goto nocast;
        size_t n = cat_text_format(in, (char *)buf, cap);
        if (n >= cap) return cat_err(err, CAT_ERR_TOOBIG, "conversion buffer too small");
        v.u.s.p = buf;
        v.u.s.len = (uint32_t)n;
      }
      break;
    case CAT_T_DATE:
      if (x == CAT_T_DATE) v.u.i = in->u.i;
      else if (x == CAT_T_TIMESTAMP) {
        int64_t d = in->u.i / CAT_US_PER_DAY;
        if (in->u.i % CAT_US_PER_DAY < 0) d--;
        v.u.i = d;
      } else goto nocast;
      break;
    case CAT_T_TIME:
      if (x == CAT_T_TIME) v.u.i = in->u.i;
      else if (x == CAT_T_TIMESTAMP) {
        int64_t t = in->u.i % CAT_US_PER_DAY;
        v.u.i = t < 0 ? t + CAT_US_PER_DAY : t;
      } else goto nocast;
      break;
    case CAT_T_TIMESTAMP:
      if (x == CAT_T_TIMESTAMP) v.u.i = in->u.i;
      else if (x == CAT_T_DATE) v.u.i = in->u.i * CAT_US_PER_DAY;
      else goto nocast;
      break;
    default: goto nocast;
  }
  return cat_value_check(to, &v, out, err);
nocast:
  return cat_err(err, CAT_ERR_TYPE, "cannot convert %s to %s", cat_type_format(&in->type, it, sizeof it),
                 cat_type_format(to, tt, sizeof tt));
}
