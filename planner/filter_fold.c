/*
** planner/filter_fold.c: bound folding, shared by key-range derivation (planner/keyrange.c)
** and the pushed-down filter (planner/filter.c). "col op c" becomes an equivalent
** comparison on a value of exactly the column's type, or TRUE / FALSE for every non-NULL
** column value, following catalog/value.h's comparison rules (numbers compare as numbers;
** a FLOAT/DOUBLE side makes both doubles; NaN above every number; DATE is its midnight).
**
** A constant c that is not a value of the column type T lies strictly between two
** neighbouring values lo < c < hi of T (either may be missing at T's ends): then col < c
** and col <= c are col <= lo, col > c and col >= c are col >= hi, col = c is FALSE and
** col <> c is TRUE. A constant past T's range makes every comparison TRUE or FALSE.
** It does not encode anything and never reads data.
*/
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalog/decimal.h"
#include "catalog/value.h"
#include "planner/filter.h"
#include "sql/ast.h"

/* How the constant sits against the column type. */
enum place { P_EXACT, P_GAP, P_ABOVE, P_BELOW, P_NONE };

typedef struct placed {
  int place;        /* enum place */
  cat_value x;      /* P_EXACT: the value */
  cat_value lo, hi; /* P_GAP: neighbours lo < c < hi */
} placed;

static int64_t int_min_of(int id) {
  switch (id) {
    case CAT_T_TINYINT: return INT8_MIN;
    case CAT_T_SMALLINT: return INT16_MIN;
    case CAT_T_INTEGER: return INT32_MIN;
    default: return INT64_MIN;
  }
}
static int64_t int_max_of(int id) {
  switch (id) {
    case CAT_T_TINYINT: return INT8_MAX;
    case CAT_T_SMALLINT: return INT16_MAX;
    case CAT_T_INTEGER: return INT32_MAX;
    default: return INT64_MAX;
  }
}

static cat_i128 pow10_128(int n) {
  cat_i128 r = 1;
  while (n-- > 0) r *= 10;
  return r;
}

/* Floor of d = v / 10^scale, and whether it is exact. */
static cat_i128 dec_floor(cat_dec d, bool *exact) {
  cat_i128 p = pow10_128(d.scale);
  cat_i128 q = d.v / p, r = d.v % p;
  if (r != 0 && d.v < 0) q -= 1;
  *exact = r == 0;
  return q;
}

/* Integer-like column (TINYINT..BIGINT, DATE, TIME, TIMESTAMP in their units) with the
** constant already as floor/exact in i128 (c between fl and fl + 1 when !exact). */
static void place_int(placed *pl, const cat_type *t, cat_i128 fl, bool exact, int64_t mn,
                      int64_t mx) {
  if (exact) {
    if (fl > mx) { pl->place = P_ABOVE; return; }
    if (fl < mn) { pl->place = P_BELOW; return; }
    pl->place = P_EXACT;
    pl->x = cat_v_int(t->id, (int64_t)fl);
    pl->x.type = *t;
    return;
  }
  if (fl >= mx) { pl->place = P_ABOVE; return; }
  if (fl + 1 <= mn) { pl->place = P_BELOW; return; }
  pl->place = P_GAP;
  pl->lo = cat_v_int(t->id, (int64_t)fl);
  pl->lo.type = *t;
  pl->hi = cat_v_int(t->id, (int64_t)(fl + 1));
  pl->hi.type = *t;
}

static void place_integer_col(placed *pl, const cat_type *t, const cat_value *c) {
  int64_t mn = int_min_of(t->id), mx = int_max_of(t->id);
  int cid = c->type.id;
  if (cat_type_is_integer(cid)) { place_int(pl, t, c->u.i, true, mn, mx); return; }
  if (cid == CAT_T_DECIMAL) {
    bool exact;
    cat_i128 fl = dec_floor(c->u.dec, &exact);
    place_int(pl, t, fl, exact, mn, mx);
    return;
  }
  /* FLOAT / DOUBLE: compared as doubles. */
  double d = c->u.d;
  if (isnan(d) || d >= 9223372036854775808.0) { pl->place = P_ABOVE; return; }
  if (d < -9223372036854775808.0) { pl->place = P_BELOW; return; }
  if (t->id == CAT_T_BIGINT && fabs(d) >= 9007199254740992.0) {
    /* double(col) rounds near d: not an exact integer comparison. */
    pl->place = P_NONE;
    return;
  }
  double f = floor(d);
  place_int(pl, t, (cat_i128)(int64_t)f, f == d, mn, mx);
}

static void place_decimal_col(placed *pl, const cat_type *t, const cat_value *c) {
  int cid = c->type.id;
  cat_dec d;
  if (cat_type_is_integer(cid)) d = cat_dec_from_i64(c->u.i);
  else if (cid == CAT_T_DECIMAL) d = c->u.dec;
  else { pl->place = P_NONE; return; } /* DECIMAL against a double: compared as doubles */
  if (t->precision == 0) {
    pl->place = P_EXACT;
    pl->x = cat_v_dec(cat_dec_normalize(d), 0, 0);
    pl->x.type = *t;
    return;
  }
  int s = t->scale, p = t->precision;
  cat_dec maxv = {pow10_128(p) - 1, s};
  cat_dec minv = {-(pow10_128(p) - 1), s};
  if (cat_dec_cmp(d, maxv) > 0) { pl->place = P_ABOVE; return; }
  if (cat_dec_cmp(d, minv) < 0) { pl->place = P_BELOW; return; }
  cat_i128 u;
  bool exact = true;
  if (d.scale <= s) {
    u = d.v * pow10_128(s - d.scale);
  } else {
    cat_dec shifted = {d.v, d.scale - s};
    u = dec_floor(shifted, &exact);
  }
  cat_dec a = {u, s};
  if (exact) {
    pl->place = P_EXACT;
    pl->x = cat_v_dec(a, t->precision, t->scale);
    pl->x.type = *t;
    return;
  }
  cat_dec b = {u + 1, s};
  pl->place = P_GAP;
  pl->lo = cat_v_dec(a, t->precision, t->scale);
  pl->lo.type = *t;
  pl->hi = cat_v_dec(b, t->precision, t->scale);
  pl->hi.type = *t;
}

static double as_double(const cat_value *c) {
  if (cat_type_is_integer(c->type.id)) return (double)c->u.i;
  if (c->type.id == CAT_T_DECIMAL) return cat_dec_to_double(c->u.dec);
  return c->u.d;
}

static void place_float_col(placed *pl, const cat_type *t, const cat_value *c) {
  double d = as_double(c);
  if (t->id == CAT_T_DOUBLE || isnan(d) || isinf(d)) {
    pl->place = P_EXACT;
    pl->x = t->id == CAT_T_DOUBLE ? cat_v_double(d) : cat_v_float((float)d);
    pl->x.type = *t;
    return;
  }
  float lo, hi;
  if (d > FLT_MAX) { lo = FLT_MAX; hi = INFINITY; }
  else if (d < -FLT_MAX) { lo = -INFINITY; hi = -FLT_MAX; }
  else {
    float f = (float)d;
    if ((double)f == d) {
      pl->place = P_EXACT;
      pl->x = cat_v_float(f);
      pl->x.type = *t;
      return;
    }
    if ((double)f < d) { lo = f; hi = nextafterf(f, INFINITY); }
    else { hi = f; lo = nextafterf(f, -INFINITY); }
  }
  pl->place = P_GAP;
  pl->lo = cat_v_float(lo);
  pl->lo.type = *t;
  pl->hi = cat_v_float(hi);
  pl->hi.type = *t;
}

static void place_time_col(placed *pl, const cat_type *t, const cat_value *c) {
  int cid = c->type.id;
  if (t->id == CAT_T_TIME) {
    if (cid != CAT_T_TIME) { pl->place = P_NONE; return; }
    place_int(pl, t, c->u.i, true, 0, CAT_TIME_MAX);
    return;
  }
  if (cid != CAT_T_DATE && cid != CAT_T_TIMESTAMP) { pl->place = P_NONE; return; }
  if (t->id == CAT_T_TIMESTAMP) {
    cat_i128 us = cid == CAT_T_DATE ? (cat_i128)c->u.i * CAT_US_PER_DAY : c->u.i;
    place_int(pl, t, us, true, CAT_TS_MIN, CAT_TS_MAX);
    return;
  }
  /* DATE column */
  if (cid == CAT_T_DATE) { place_int(pl, t, c->u.i, true, CAT_DATE_MIN, CAT_DATE_MAX); return; }
  int64_t q = c->u.i / CAT_US_PER_DAY, r = c->u.i % CAT_US_PER_DAY;
  if (r < 0) q -= 1;
  place_int(pl, t, q, r == 0, CAT_DATE_MIN, CAT_DATE_MAX);
}

static bool is_bytes_type(int id) { return cat_type_is_string(id) || id == CAT_T_VARBINARY; }

static void place_value(placed *pl, const cat_type *t, const cat_value *c) {
  int id = t->id, cid = c->type.id;
  pl->place = P_NONE;
  if (cat_type_is_numeric(id)) {
    if (!cat_type_is_numeric(cid)) return;
    if (cat_type_is_integer(id)) place_integer_col(pl, t, c);
    else if (id == CAT_T_DECIMAL) place_decimal_col(pl, t, c);
    else place_float_col(pl, t, c);
    return;
  }
  if (is_bytes_type(id)) {
    if (!is_bytes_type(cid)) return;
    /* Trailing spaces do not count when either side is CHAR (catalog/value.h): a constant
       compared with a CHAR column is trimmed as the column's values are, so 'ab ' finds the
       CHAR value 'ab' (stored trimmed). It is then encoded as VARCHAR: the same bytes. A CHAR
       constant against a VARCHAR column would need the column's values trimmed too: that
       comparison is left to the executor. */
    if (cid == CAT_T_CHAR && id == CAT_T_VARCHAR) return;
    bool trim = id == CAT_T_CHAR && cid != CAT_T_VARBINARY;
    size_t n = trim ? cat_char_trim(c->u.s.p, c->u.s.len) : c->u.s.len;
    pl->place = P_EXACT;
    pl->x = cat_v_str(id == CAT_T_CHAR ? CAT_T_VARCHAR : id, c->u.s.p, n);
    pl->x.type.length = 0; /* a constant longer than the column still compares */
    return;
  }
  if (id == CAT_T_BOOLEAN) {
    if (cid != CAT_T_BOOLEAN) return;
    pl->place = P_EXACT;
    pl->x = cat_v_bool(c->u.b);
    return;
  }
  if (id == CAT_T_DATE || id == CAT_T_TIMESTAMP || id == CAT_T_TIME) place_time_col(pl, t, c);
}

/* The smallest and largest values of an integer-like type (for trimming exact bounds). */
static bool int_like_range(const cat_type *t, int64_t *mn, int64_t *mx) {
  int id = t->id;
  if (cat_type_is_integer(id)) { *mn = int_min_of(id); *mx = int_max_of(id); return true; }
  if (id == CAT_T_DATE) { *mn = CAT_DATE_MIN; *mx = CAT_DATE_MAX; return true; }
  if (id == CAT_T_TIMESTAMP) { *mn = CAT_TS_MIN; *mx = CAT_TS_MAX; return true; }
  if (id == CAT_T_TIME) { *mn = 0; *mx = CAT_TIME_MAX; return true; }
  return false;
}

int plan_fold_compare(const cat_type *t, int op, const cat_value *c, int *op_out,
                      cat_value *x, uint8_t *buf, size_t cap) {
  (void)buf;
  (void)cap;
  *op_out = op;
  if (c->is_null) return PLAN_FOLD_NULL;
  placed pl;
  memset(&pl, 0, sizeof pl);
  place_value(&pl, t, c);
  /* a string longer than the column's VARCHAR(n) / CHAR(n) / VARBINARY(n) equals no value of
     it (Phoenix: a degenerate scan on a key column); an order comparison still holds */
  if (pl.place == P_EXACT && t->length && is_bytes_type(t->id) &&
      (op == SQL_OP_EQ || op == SQL_OP_NE)) {
    size_t n = t->id == CAT_T_VARBINARY ? pl.x.u.s.len
                                        : cat_utf8_chars(pl.x.u.s.p, pl.x.u.s.len);
    if (n > t->length) return op == SQL_OP_EQ ? PLAN_FOLD_FALSE : PLAN_FOLD_TRUE;
  }
  switch (pl.place) {
    case P_NONE: return PLAN_FOLD_NONE;
    case P_ABOVE:
      return (op == SQL_OP_LT || op == SQL_OP_LE || op == SQL_OP_NE) ? PLAN_FOLD_TRUE
                                                                     : PLAN_FOLD_FALSE;
    case P_BELOW:
      return (op == SQL_OP_GT || op == SQL_OP_GE || op == SQL_OP_NE) ? PLAN_FOLD_TRUE
                                                                     : PLAN_FOLD_FALSE;
    case P_GAP:
      switch (op) {
        case SQL_OP_EQ: return PLAN_FOLD_FALSE;
        case SQL_OP_NE: return PLAN_FOLD_TRUE;
        case SQL_OP_LT: case SQL_OP_LE: *op_out = SQL_OP_LE; *x = pl.lo; break;
        default: *op_out = SQL_OP_GE; *x = pl.hi; break;
      }
      break;
    default: *x = pl.x; break;
  }
  /* Trim comparisons at the ends of an integer-like range: k > max is FALSE, k >= min TRUE. */
  int64_t mn, mx;
  if (int_like_range(t, &mn, &mx)) {
    int64_t v = x->u.i;
    int o = *op_out;
    if ((v == mx && o == SQL_OP_GT) || (v == mn && o == SQL_OP_LT)) return PLAN_FOLD_FALSE;
    if ((v == mx && o == SQL_OP_LE) || (v == mn && o == SQL_OP_GE)) return PLAN_FOLD_TRUE;
  }
  return PLAN_FOLD_CMP;
}

/* Append c to buf at *o (cap-limited), counting the full length. */
static void put(char *buf, size_t cap, size_t *o, char ch) {
  if (*o + 1 < cap) buf[*o] = ch;
  (*o)++;
}

size_t plan_value_literal(const cat_value *v, char *buf, size_t cap) {
  static const char hex[] = "0123456789ABCDEF";
  size_t o = 0;
  int id = v->type.id;
  if (v->is_null || id == CAT_T_VARBINARY) {
    if (v->is_null) {
      for (const char *s = "NULL"; *s; s++) put(buf, cap, &o, *s);
    } else {
      put(buf, cap, &o, 'X');
      put(buf, cap, &o, '\'');
      for (uint32_t i = 0; i < v->u.s.len; i++) {
        put(buf, cap, &o, hex[v->u.s.p[i] >> 4]);
        put(buf, cap, &o, hex[v->u.s.p[i] & 15]);
      }
      put(buf, cap, &o, '\'');
    }
  } else if (cat_type_is_string(id)) {
    put(buf, cap, &o, '\'');
    for (uint32_t i = 0; i < v->u.s.len; i++) {
      uint8_t ch = v->u.s.p[i];
      if (ch < 0x20) {
        put(buf, cap, &o, '\\');
        put(buf, cap, &o, 'x');
        put(buf, cap, &o, hex[ch >> 4]);
        put(buf, cap, &o, hex[ch & 15]);
        continue;
      }
      if (ch == '\'') put(buf, cap, &o, '\'');
      put(buf, cap, &o, (char)ch);
    }
    put(buf, cap, &o, '\'');
  } else if (cat_type_is_float(id) && isfinite(v->u.d)) {
    char tmp[64];
    double d = v->u.d, a = fabs(d);
    bool f32 = id == CAT_T_FLOAT;
    tmp[0] = 0;
    for (int k = 0; k <= 17; k++) { /* shortest text reading back as the same value */
      if (a == 0 || (a >= 1e-5 && a < 1e16)) snprintf(tmp, sizeof tmp, "%.*f", k, d);
      else snprintf(tmp, sizeof tmp, "%.*g", k + 1, d);
      double back = strtod(tmp, NULL);
      if (f32 ? (float)back == (float)d : back == d) break;
    }
    if (!strpbrk(tmp, ".en")) strcat(tmp, ".0");
    for (const char *s2 = tmp; *s2; s2++) put(buf, cap, &o, *s2);
  } else {
    char tmp[96];
    size_t n = cat_text_format(v, tmp, sizeof tmp);
    if (n >= sizeof tmp) n = sizeof tmp - 1;
    bool q = id == CAT_T_DATE || id == CAT_T_TIME || id == CAT_T_TIMESTAMP;
    if (id == CAT_T_ARRAY) /* [1, 2] -> ARRAY[1, 2] */
      for (const char *s2 = "ARRAY"; *s2; s2++) put(buf, cap, &o, *s2);
    if (q) put(buf, cap, &o, '\'');
    for (size_t i = 0; i < n; i++) put(buf, cap, &o, tmp[i]);
    if (q) put(buf, cap, &o, '\'');
  }
  if (cap) buf[o < cap ? o : cap - 1] = 0;
  return o;
}
