/*
** exec/func_num.c: the numeric functions of exec/func.h: the arithmetic operators (+ - * /
** % and negation) with integer overflow checks, exact DECIMAL arithmetic (catalog/
** decimal.h) and DOUBLE; ABS, SIGN; ROUND/FLOOR/CEIL/TRUNC on numbers with an optional
** digits argument (negative digits round left of the point); SQRT, POWER, EXP, LN, LOG.
** DATE/TIMESTAMP operands of + and - and of ROUND & co. are handed to exec/func_date.c.
** Not here: string or date functions, type checking (exec/func.c did that at bind time).
*/
#include "exec/func_int.h"

#include <math.h>
#include <stdio.h>

enum { K_INT = 1, K_DEC, K_DBL, K_OTHER };
enum { RM_ROUND = 1, RM_FLOOR, RM_CEIL, RM_TRUNC };

static int kind(const cat_value *v) {
  int id = v->type.id;
  if (cat_type_is_integer(id)) return K_INT;
  if (id == CAT_T_DECIMAL) return K_DEC;
  if (cat_type_is_float(id)) return K_DBL;
  return K_OTHER;
}

static const char *op_text(int id) { return cat_func_name(id); }

static int overflow(exec_func_ctx *c, const char *tname, int id, const cat_value *a,
                    const cat_value *b) {
  char x[64], y[64];
  exec_fn_show(a, x, sizeof x);
  if (!b) return exec_fn_err(c, EXEC_CONSTRAINT, "%s overflow in -(%s)", tname, x);
  exec_fn_show(b, y, sizeof y);
  return exec_fn_err(c, EXEC_CONSTRAINT, "%s overflow in %s %s %s", tname, x, op_text(id), y);
}

static int div_zero(exec_func_ctx *c, int id, const cat_value *a) {
  char x[64];
  exec_fn_show(a, x, sizeof x);
  return exec_fn_err(c, EXEC_CONSTRAINT, "division by zero in %s %s 0", x, op_text(id));
}

static int arith_int(int id, const cat_value *a, const cat_value *b, cat_value *out,
                     exec_func_ctx *c) {
  int64_t x = a->u.i, y = b->u.i, r = 0;
  bool ovf = false;
  switch (id) {
    case EXEC_F_ADD: ovf = __builtin_add_overflow(x, y, &r); break;
    case EXEC_F_SUB: ovf = __builtin_sub_overflow(x, y, &r); break;
    case EXEC_F_MUL: ovf = __builtin_mul_overflow(x, y, &r); break;
    case EXEC_F_DIV:
      if (y == 0) return div_zero(c, id, a);
      if (x == INT64_MIN && y == -1) ovf = true;
      else r = x / y;
      break;
    case EXEC_F_MOD:
      if (y == 0) return div_zero(c, id, a);
      r = (y == -1) ? 0 : x % y;
      break;
  }
  if (ovf) return overflow(c, "BIGINT", id, a, b);
  *out = cat_v_int(CAT_T_BIGINT, r);
  return EXEC_OK;
}

static int arith_dec(int id, const cat_value *a, const cat_value *b, cat_value *out,
                     exec_func_ctx *c) {
  cat_dec x, y, r;
  int rc = exec_fn_dec(a, &x, c, op_text(id));
  if (!rc) rc = exec_fn_dec(b, &y, c, op_text(id));
  if (rc) return rc;
  cat_error e;
  int crc = CAT_OK;
  switch (id) {
    case EXEC_F_ADD: crc = cat_dec_add(x, y, &r, &e); break;
    case EXEC_F_SUB: crc = cat_dec_sub(x, y, &r, &e); break;
    case EXEC_F_MUL: crc = cat_dec_mul(x, y, &r, &e); break;
    case EXEC_F_DIV:
      if (y.v == 0) return div_zero(c, id, a);
      crc = cat_dec_div(x, y, &r, &e);
      break;
    case EXEC_F_MOD: {
      if (y.v == 0) return div_zero(c, id, a);
      int s = x.scale > y.scale ? x.scale : y.scale;
      cat_dec xs, ys;
      crc = cat_dec_rescale(x, s, &xs, &e);
      if (!crc) crc = cat_dec_rescale(y, s, &ys, &e);
      if (!crc) { r.v = xs.v % ys.v; r.scale = s; }
      break;
    }
  }
  if (crc) return overflow(c, "DECIMAL", id, a, b);
  *out = cat_v_dec(r, 0, (uint8_t)r.scale);
  return EXEC_OK;
}

static int arith_dbl(int id, const cat_value *a, const cat_value *b, cat_value *out,
                     exec_func_ctx *c) {
  double x, y, r = 0;
  int rc = exec_fn_double(a, &x, c, op_text(id));
  if (!rc) rc = exec_fn_double(b, &y, c, op_text(id));
  if (rc) return rc;
  switch (id) {
    case EXEC_F_ADD: r = x + y; break;
    case EXEC_F_SUB: r = x - y; break;
    case EXEC_F_MUL: r = x * y; break;
    case EXEC_F_DIV:
      if (y == 0) return div_zero(c, id, a);
      r = x / y;
      break;
    case EXEC_F_MOD:
      if (y == 0) return div_zero(c, id, a);
      r = fmod(x, y);
      break;
  }
  if (isinf(r) && isfinite(x) && isfinite(y)) return overflow(c, "DOUBLE", id, a, b);
  *out = cat_v_double(r);
  return EXEC_OK;
}

static int arith(int id, const cat_value *a, const cat_value *b, cat_value *out,
                 exec_func_ctx *c) {
  int ka = kind(a), kb = kind(b);
  if (ka == K_OTHER || kb == K_OTHER) {
    const cat_value *bad = ka == K_OTHER ? a : b;
    return exec_fn_err(c, EXEC_ERROR, "operator %s does not accept %s", op_text(id),
                       cat_type_name(bad->type.id));
  }
  if (ka == K_DBL || kb == K_DBL) return arith_dbl(id, a, b, out, c);
  if (ka == K_DEC || kb == K_DEC) return arith_dec(id, a, b, out, c);
  return arith_int(id, a, b, out, c);
}

/* 10^k for 0 <= k <= 38. */
static cat_i128 pow10_128(int k) {
  cat_i128 p = 1;
  while (k-- > 0) p *= 10;
  return p;
}

/* q = v / 10^k adjusted by mode (k >= 1); the exact quotient's rounding. */
static cat_i128 div_round(cat_i128 v, int k, int mode) {
  if (k > 38) {
    /* |v| < 10^38 < 10^k / 2: the quotient is 0 with v as remainder */
    if (mode == RM_FLOOR && v < 0) return -1;
    if (mode == RM_CEIL && v > 0) return 1;
    return 0;
  }
  cat_i128 p = pow10_128(k);
  cat_i128 q = v / p, r = v % p;
  if (r == 0) return q;
  switch (mode) {
    case RM_FLOOR: if (r < 0) q--; break;
    case RM_CEIL: if (r > 0) q++; break;
    case RM_ROUND: {
      cat_i128 ar = r < 0 ? -r : r;
      if (ar >= p - ar) q += (r < 0) ? -1 : 1;
      break;
    }
    default: break;
  }
  return q;
}

/* Round exact d (value v / 10^scale) to `digits` fractional digits (negative: left of the
** point); digits >= scale leaves d as it is. */
static int dec_round(cat_dec d, int digits, int mode, cat_dec *out) {
  if (digits > 38) digits = 38;
  if (digits < -38) digits = -38;
  if (digits >= d.scale) { *out = d; return CAT_OK; }
  cat_i128 q = div_round(d.v, d.scale - digits, mode);
  if (digits >= 0) {
    out->v = q;
    out->scale = digits;
    return CAT_OK;
  }
  cat_i128 p = pow10_128(-digits), lim = pow10_128(38);
  if (q != 0 && (q >= lim / p || q <= -(lim / p))) return CAT_ERR_RANGE;
  out->v = q * p;
  out->scale = 0;
  return CAT_OK;
}

static int mode_of(int id) {
  switch (id) {
    case EXEC_F_FLOOR: return RM_FLOOR;
    case EXEC_F_CEIL: return RM_CEIL;
    case EXEC_F_TRUNC: return RM_TRUNC;
    default: return RM_ROUND;
  }
}

static int round_num(int id, const cat_value *a, int n, cat_value *out, exec_func_ctx *c) {
  const char *f = cat_func_name(id);
  int64_t digits = 0;
  if (n >= 2) {
    int rc = exec_fn_i64(&a[1], &digits, c, f);
    if (rc) return rc;
    if (digits > 38) digits = 38;
    if (digits < -38) digits = -38;
  }
  int mode = mode_of(id);
  char x[64];
  switch (kind(&a[0])) {
    case K_INT: {
      if (digits >= 0) { *out = cat_v_int(CAT_T_BIGINT, a[0].u.i); return EXEC_OK; }
      cat_dec r;
      if (dec_round(cat_dec_from_i64(a[0].u.i), (int)digits, mode, &r) || r.v > INT64_MAX ||
          r.v < INT64_MIN) {
        exec_fn_show(&a[0], x, sizeof x);
        return exec_fn_err(c, EXEC_CONSTRAINT, "%s(%s, %lld) out of range for BIGINT", f, x,
                           (long long)digits);
      }
      *out = cat_v_int(CAT_T_BIGINT, (int64_t)r.v);
      return EXEC_OK;
    }
    case K_DEC: {
      cat_dec r;
      if (dec_round(a[0].u.dec, (int)digits, mode, &r)) {
        exec_fn_show(&a[0], x, sizeof x);
        return exec_fn_err(c, EXEC_CONSTRAINT, "%s(%s, %lld) out of range for DECIMAL", f, x,
                           (long long)digits);
      }
      *out = cat_v_dec(r, 0, (uint8_t)r.scale);
      return EXEC_OK;
    }
    case K_DBL: {
      double d = a[0].u.d, r;
      if (!isfinite(d)) { *out = cat_v_double(d); return EXEC_OK; }
      if (digits == 0) {
        r = mode == RM_FLOOR ? floor(d) : mode == RM_CEIL ? ceil(d)
            : mode == RM_TRUNC ? trunc(d) : round(d);
      } else {
        cat_dec dd, rr;
        if (cat_dec_from_double(d, &dd, NULL) != CAT_OK) { *out = cat_v_double(d); return EXEC_OK; }
        if (dec_round(dd, (int)digits, mode, &rr)) {
          exec_fn_show(&a[0], x, sizeof x);
          return exec_fn_err(c, EXEC_CONSTRAINT, "%s(%s, %lld) out of range", f, x,
                             (long long)digits);
        }
        r = cat_dec_to_double(rr);
      }
      if (r == 0) r = 0.0; /* no -0 */
      *out = cat_v_double(r);
      return EXEC_OK;
    }
    default:
      return exec_fn_err(c, EXEC_ERROR, "function %s does not accept %s", f,
                         cat_type_name(a[0].type.id));
  }
}

static int neg_abs(int id, const cat_value *a, cat_value *out, exec_func_ctx *c) {
  bool neg = id == EXEC_F_NEG;
  switch (kind(a)) {
    case K_INT: {
      int64_t x = a->u.i;
      if (!neg && x >= 0) { *out = cat_v_int(CAT_T_BIGINT, x); return EXEC_OK; }
      if (x == INT64_MIN) {
        char s[32];
        exec_fn_show(a, s, sizeof s);
        return exec_fn_err(c, EXEC_CONSTRAINT, "BIGINT overflow in %s(%s)", neg ? "-" : "ABS", s);
      }
      *out = cat_v_int(CAT_T_BIGINT, -x);
      return EXEC_OK;
    }
    case K_DEC: {
      cat_dec d = a->u.dec;
      if (neg || d.v < 0) d.v = -d.v;
      *out = *a;
      out->u.dec = d;
      return EXEC_OK;
    }
    case K_DBL: {
      double d = a->u.d;
      *out = cat_v_double(neg ? -d : fabs(d));
      return EXEC_OK;
    }
    default:
      return exec_fn_err(c, EXEC_ERROR, "function %s does not accept %s", neg ? "-" : "ABS",
                         cat_type_name(a->type.id));
  }
}

static int math1(int id, const cat_value *a, int n, cat_value *out, exec_func_ctx *c) {
  const char *f = cat_func_name(id);
  double x, y = 0, r = 0;
  int rc = exec_fn_double(&a[0], &x, c, f);
  if (!rc && n >= 2) rc = exec_fn_double(&a[1], &y, c, f);
  if (rc) return rc;
  char s[64];
  exec_fn_show(&a[0], s, sizeof s);
  switch (id) {
    case EXEC_F_SQRT:
      if (x < 0) return exec_fn_err(c, EXEC_CONSTRAINT, "SQRT of negative value %s", s);
      r = sqrt(x);
      break;
    case EXEC_F_EXP: r = exp(x); break;
    case EXEC_F_LN: case EXEC_F_LOG:
      if (x <= 0) return exec_fn_err(c, EXEC_CONSTRAINT, "%s of non-positive value %s", f, s);
      if (id == EXEC_F_LN) r = log(x);
      else if (n == 1) r = log10(x);
      else {
        if (y <= 0 || y == 1)
          return exec_fn_err(c, EXEC_CONSTRAINT, "LOG with invalid base %g", y);
        r = log(x) / log(y);
      }
      break;
    case EXEC_F_POWER:
      r = pow(x, y);
      if (isnan(r) && !isnan(x) && !isnan(y))
        return exec_fn_err(c, EXEC_CONSTRAINT, "POWER(%s, %g) is not a real number", s, y);
      if (x == 0 && y < 0)
        return exec_fn_err(c, EXEC_CONSTRAINT, "POWER(0, %g): division by zero", y);
      break;
  }
  if (isinf(r) && isfinite(x) && isfinite(y))
    return exec_fn_err(c, EXEC_CONSTRAINT, "%s(%s%s) overflows DOUBLE", f, s,
                       n >= 2 ? ", ..." : "");
  *out = cat_v_double(r);
  return EXEC_OK;
}

static bool is_dt(const cat_value *v) {
  return v->type.id == CAT_T_DATE || v->type.id == CAT_T_TIMESTAMP;
}

int exec_fn_num(int id, const cat_value *a, int n, cat_value *out, exec_func_ctx *c) {
  switch (id) {
    case EXEC_F_ADD: case EXEC_F_SUB:
      if (is_dt(&a[0]) || is_dt(&a[1])) return exec_fn_date(id, a, n, out, c);
      return arith(id, &a[0], &a[1], out, c);
    case EXEC_F_MUL: case EXEC_F_DIV: case EXEC_F_MOD:
      return arith(id, &a[0], &a[1], out, c);
    case EXEC_F_NEG: case EXEC_F_ABS:
      return neg_abs(id, &a[0], out, c);
    case EXEC_F_SIGN: {
      int s = 0;
      switch (kind(&a[0])) {
        case K_INT: s = (a[0].u.i > 0) - (a[0].u.i < 0); break;
        case K_DEC: s = (a[0].u.dec.v > 0) - (a[0].u.dec.v < 0); break;
        case K_DBL:
          if (isnan(a[0].u.d)) return exec_fn_err(c, EXEC_CONSTRAINT, "SIGN of NaN");
          s = (a[0].u.d > 0) - (a[0].u.d < 0);
          break;
        default:
          return exec_fn_err(c, EXEC_ERROR, "function SIGN does not accept %s",
                             cat_type_name(a[0].type.id));
      }
      *out = cat_v_int(CAT_T_INTEGER, s);
      return EXEC_OK;
    }
    case EXEC_F_ROUND: case EXEC_F_FLOOR: case EXEC_F_CEIL: case EXEC_F_TRUNC:
      if (is_dt(&a[0])) return exec_fn_date(id, a, n, out, c);
      return round_num(id, a, n, out, c);
    case EXEC_F_SQRT: case EXEC_F_POWER: case EXEC_F_EXP: case EXEC_F_LN: case EXEC_F_LOG:
      return math1(id, a, n, out, c);
    default:
      return exec_fn_err(c, EXEC_ERROR, "unknown numeric function id %d", id);
  }
}
