/*
** catalog/decimal.c: exact DECIMAL arithmetic, parsing and formatting (contracts and
** rounding rules in catalog/decimal.h).
**
** Every result is first computed exactly as a sign and a 256-bit magnitude at some scale,
** then "fitted": digits are dropped from the right (half away from zero, decided by the
** most significant dropped digit, so there is no double rounding) until the scale is at most
** 38 and the magnitude below 10^38. No encoding lives here.
*/
#include "catalog/decimal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- A minimal unsigned 256-bit integer (little-endian 64-bit limbs) ------------------ */
typedef struct u256 {
  uint64_t w[4]; /* w[0] least significant */
} u256;

static u256 u256_from128(cat_u128 x) {
  u256 r = {{(uint64_t)x, (uint64_t)(x >> 64), 0, 0}};
  return r;
}

static int u256_cmp(const u256 *a, const u256 *b) {
  for (int i = 3; i >= 0; i--)
    if (a->w[i] != b->w[i]) return a->w[i] < b->w[i] ? -1 : 1;
  return 0;
}

static bool u256_is_zero(const u256 *a) { return !(a->w[0] | a->w[1] | a->w[2] | a->w[3]); }

static u256 u256_add(u256 a, u256 b) {
  u256 r;
  uint64_t c = 0;
  for (int i = 0; i < 4; i++) {
    cat_u128 s = (cat_u128)a.w[i] + b.w[i] + c;
    r.w[i] = (uint64_t)s;
    c = (uint64_t)(s >> 64);
  }
  return r;
}

/* a - b, requires a >= b. */
static u256 u256_sub(u256 a, u256 b) {
  u256 r;
  uint64_t borrow = 0;
  for (int i = 0; i < 4; i++) {
    cat_u128 d = (cat_u128)a.w[i] - b.w[i] - borrow;
    r.w[i] = (uint64_t)d;
    borrow = (uint64_t)(d >> 64) ? 1 : 0;
  }
  return r;
}

/* a * m (m < 2^64); *overflow set if the product needs more than 256 bits. */
static u256 u256_mul64(u256 a, uint64_t m, bool *overflow) {
  u256 r;
  uint64_t c = 0;
  for (int i = 0; i < 4; i++) {
    cat_u128 p = (cat_u128)a.w[i] * m + c;
    r.w[i] = (uint64_t)p;
    c = (uint64_t)(p >> 64);
  }
  if (c) *overflow = true;
  return r;
}

static u256 u256_mul128(cat_u128 a, cat_u128 b) {
  uint64_t a0 = (uint64_t)a, a1 = (uint64_t)(a >> 64), b0 = (uint64_t)b, b1 = (uint64_t)(b >> 64);
  u256 r = {{0, 0, 0, 0}};
  uint64_t av[2] = {a0, a1}, bv[2] = {b0, b1};
  for (int i = 0; i < 2; i++) {
    uint64_t c = 0;
    for (int j = 0; j < 2; j++) {
      cat_u128 p = (cat_u128)av[i] * bv[j] + r.w[i + j] + c;
      r.w[i + j] = (uint64_t)p;
      c = (uint64_t)(p >> 64);
    }
    r.w[i + 2] += c;
  }
  return r;
}

/* a / d and a % d for d < 2^64. */
static u256 u256_divmod64(u256 a, uint64_t d, uint64_t *rem) {
  u256 q;
  cat_u128 r = 0;
  for (int i = 3; i >= 0; i--) {
    cat_u128 cur = (r << 64) | a.w[i];
    q.w[i] = (uint64_t)(cur / d);
    r = cur % d;
  }
  *rem = (uint64_t)r;
  return q;
}

/* a / d, remainder in *rem (d != 0, d < 2^128): restoring binary long division. */
static u256 u256_divmod128(u256 a, cat_u128 d, cat_u128 *rem) {
  u256 q = {{0, 0, 0, 0}};
  u256 r = {{0, 0, 0, 0}};
  u256 dd = u256_from128(d);
  for (int bit = 255; bit >= 0; bit--) {
    /* r = r << 1 | bit */
    for (int i = 3; i > 0; i--) r.w[i] = (r.w[i] << 1) | (r.w[i - 1] >> 63);
    r.w[0] = (r.w[0] << 1) | ((a.w[bit / 64] >> (bit % 64)) & 1);
    if (u256_cmp(&r, &dd) >= 0) {
      r = u256_sub(r, dd);
      q.w[bit / 64] |= (uint64_t)1 << (bit % 64);
    }
  }
  *rem = (cat_u128)r.w[0] | ((cat_u128)r.w[1] << 64);
  return q;
}

static cat_u128 pow10_128(int k) {
  cat_u128 r = 1;
  while (k-- > 0) r *= 10;
  return r;
}

static u256 pow10_256(int k) {
  u256 r = u256_from128(1);
  bool ov = false;
  while (k-- > 0) r = u256_mul64(r, 10, &ov);
  return r;
}

static cat_u128 magnitude(cat_i128 v) { return v < 0 ? (cat_u128)0 - (cat_u128)v : (cat_u128)v; }

/* Fit (neg, mag, scale) into a cat_dec: drop digits from the right until scale <= max_scale
** and mag < 10^38, rounding half away from zero on the most significant dropped digit.
** `tail_half` says whether the exact value's part below mag's last digit is >= half a unit
** (used only when no digit is dropped, for division). */
static int fit(bool neg, u256 mag, int scale, int max_scale, bool tail_half, cat_dec *out,
               const char *what, cat_error *err) {
  u256 limit = pow10_256(CAT_DEC_MAX_PRECISION);
  uint64_t last = 0;
  bool dropped = false;
  while (scale > max_scale || u256_cmp(&mag, &limit) >= 0) {
    if (scale == 0) return cat_err(err, CAT_ERR_RANGE, "DECIMAL overflow in %s (more than 38 digits)", what);
    mag = u256_divmod64(mag, 10, &last);
    scale--;
    dropped = true;
  }
  bool up = dropped ? last >= 5 : tail_half;
  if (up) {
    mag = u256_add(mag, u256_from128(1));
    if (u256_cmp(&mag, &limit) >= 0) { /* 99..9 rounded up to 10^38 */
      if (scale == 0) return cat_err(err, CAT_ERR_RANGE, "DECIMAL overflow in %s (more than 38 digits)", what);
      mag = u256_divmod64(mag, 10, &last); /* last is 0 here: exact */
      scale--;
    }
  }
  cat_u128 m = (cat_u128)mag.w[0] | ((cat_u128)mag.w[1] << 64);
  out->v = neg ? -(cat_i128)m : (cat_i128)m;
  out->scale = scale;
  return CAT_OK;
}

cat_dec cat_dec_from_i64(int64_t i) {
  cat_dec d = {(cat_i128)i, 0};
  return d;
}

int cat_dec_digits(cat_dec d) {
  cat_u128 m = magnitude(d.v);
  int n = 0;
  while (m) { m /= 10; n++; }
  return n;
}

/* |d| scaled up to `scale` (>= d.scale) as 256 bits (never overflows: <= 76 digits). */
static u256 aligned(cat_dec d, int scale) {
  return u256_mul128(magnitude(d.v), pow10_128(scale - d.scale));
}

int cat_dec_cmp(cat_dec a, cat_dec b) {
  int sa = (a.v > 0) - (a.v < 0), sb = (b.v > 0) - (b.v < 0);
  if (sa != sb) return sa < sb ? -1 : 1;
  if (sa == 0) return 0;
  int s = a.scale > b.scale ? a.scale : b.scale;
  u256 ma = aligned(a, s), mb = aligned(b, s);
  int c = u256_cmp(&ma, &mb);
  return sa < 0 ? -c : c;
}

cat_dec cat_dec_normalize(cat_dec d) {
  if (d.v == 0) { d.scale = 0; return d; }
  while (d.scale > 0 && d.v % 10 == 0) { d.v /= 10; d.scale--; }
  return d;
}

static int addsub(cat_dec a, cat_dec b, bool negate_b, cat_dec *out, cat_error *err) {
  int s = a.scale > b.scale ? a.scale : b.scale;
  u256 ma = aligned(a, s), mb = aligned(b, s);
  bool na = a.v < 0, nb = (b.v < 0) != negate_b;
  if (b.v == 0) nb = false;
  bool neg;
  u256 r;
  if (na == nb) {
    r = u256_add(ma, mb);
    neg = na;
  } else if (u256_cmp(&ma, &mb) >= 0) {
    r = u256_sub(ma, mb);
    neg = na;
  } else {
    r = u256_sub(mb, ma);
    neg = nb;
  }
  if (u256_is_zero(&r)) neg = false;
  return fit(neg, r, s, CAT_DEC_MAX_PRECISION, false, out, negate_b ? "subtraction" : "addition", err);
}

int cat_dec_add(cat_dec a, cat_dec b, cat_dec *out, cat_error *err) { return addsub(a, b, false, out, err); }
int cat_dec_sub(cat_dec a, cat_dec b, cat_dec *out, cat_error *err) { return addsub(a, b, true, out, err); }

int cat_dec_mul(cat_dec a, cat_dec b, cat_dec *out, cat_error *err) {
  u256 r = u256_mul128(magnitude(a.v), magnitude(b.v));
  bool neg = (a.v < 0) != (b.v < 0) && !u256_is_zero(&r);
  return fit(neg, r, a.scale + b.scale, CAT_DEC_MAX_PRECISION, false, out, "multiplication", err);
}

int cat_dec_div(cat_dec a, cat_dec b, cat_dec *out, cat_error *err) {
  if (b.v == 0) return cat_err(err, CAT_ERR_RANGE, "division by zero");
  cat_u128 ma = magnitude(a.v), mb = magnitude(b.v);
  if (ma == 0) { out->v = 0; out->scale = 0; return CAT_OK; }
  /* Scale the dividend by 10^k, keeping it below 10^76 (fits 256 bits), and the quotient's
  ** scale a.scale - b.scale + k within 0..38 + something fit() can drop. */
  int da = cat_dec_digits(a);
  int k = 76 - da;
  if (a.scale - b.scale + k > 76) k = 76 - a.scale + b.scale;
  int qscale = a.scale - b.scale + k; /* >= 0 since k >= 38 and b.scale <= 38 */
  u256 num = u256_mul128(ma, 1);
  bool ov = false;
  for (int i = 0; i < k; i++) num = u256_mul64(num, 10, &ov);
  cat_u128 rem;
  u256 q = u256_divmod128(num, mb, &rem);
  bool tail_half = rem >= mb - rem; /* 2*rem >= mb without overflow */
  bool neg = (a.v < 0) != (b.v < 0);
  int rc = fit(neg, q, qscale, CAT_DEC_MAX_PRECISION, tail_half, out, "division", err);
  if (rc == CAT_OK) *out = cat_dec_normalize(*out);
  return rc;
}

int cat_dec_rescale(cat_dec d, int scale, cat_dec *out, cat_error *err) {
  if (scale < 0 || scale > CAT_DEC_MAX_PRECISION)
    return cat_err(err, CAT_ERR_RANGE, "DECIMAL scale %d out of range 0..38", scale);
  bool neg = d.v < 0;
  if (scale >= d.scale) {
    u256 m = aligned(d, scale);
    u256 limit = pow10_256(CAT_DEC_MAX_PRECISION);
    if (u256_cmp(&m, &limit) >= 0) {
      char t[CAT_DEC_TEXT_MAX];
      cat_dec_format(d, t);
      return cat_err(err, CAT_ERR_RANGE, "value %s does not fit 38 digits at scale %d", t, scale);
    }
    return fit(neg, m, scale, scale, false, out, "rescale", err);
  }
  return fit(neg, u256_from128(magnitude(d.v)), d.scale, scale, false, out, "rescale", err);
}

int cat_dec_fit(cat_dec d, int precision, int scale, cat_dec *out, cat_error *err) {
  if (precision == 0) { *out = d; return CAT_OK; }
  cat_dec r;
  char t[CAT_DEC_TEXT_MAX];
  if (cat_dec_rescale(d, scale, &r, NULL) != CAT_OK || cat_dec_digits(r) > precision) {
    cat_dec_format(d, t);
    return cat_err(err, CAT_ERR_RANGE, "value %s does not fit DECIMAL(%d,%d)", t, precision, scale);
  }
  *out = r;
  return CAT_OK;
}

int cat_dec_parse(const char *s, size_t n, cat_dec *out, const char *type_text, cat_error *err) {
  size_t i = 0;
  bool neg = false;
  if (i < n && (s[i] == '+' || s[i] == '-')) neg = s[i++] == '-';
  u256 mag = {{0, 0, 0, 0}};
  u256 cap = pow10_256(76);
  int ndigits = 0, scale = 0, dropped_scale = 0;
  uint64_t first_dropped = 0;
  bool any_dropped = false, seen_point = false;
  for (; i < n; i++) {
    char c = s[i];
    if (c == '.' && !seen_point) { seen_point = true; continue; }
    if (c < '0' || c > '9') break;
    ndigits++;
    if (u256_cmp(&mag, &cap) >= 0) {
      /* Past 76 significant digits: drop further digits, remember the first for rounding. */
      if (!any_dropped) first_dropped = (uint64_t)(c - '0');
      any_dropped = true;
      if (!seen_point) dropped_scale--; /* an integer digit dropped: value is 10x larger */
      continue;
    }
    bool ov = false;
    mag = u256_mul64(mag, 10, &ov);
    mag = u256_add(mag, u256_from128((cat_u128)(c - '0')));
    if (seen_point) scale++;
  }
  int64_t exp = 0;
  if (ndigits > 0 && i < n && (s[i] == 'e' || s[i] == 'E')) {
    size_t j = i + 1;
    bool eneg = false;
    if (j < n && (s[j] == '+' || s[j] == '-')) eneg = s[j++] == '-';
    size_t start = j;
    while (j < n && s[j] >= '0' && s[j] <= '9') {
      if (exp < 100000) exp = exp * 10 + (s[j] - '0');
      j++;
    }
    if (j == start) i = 0, ndigits = 0; /* "1e" is malformed */
    else i = j;
    if (eneg) exp = -exp;
  }
  if (ndigits == 0 || i != n)
    return cat_err(err, CAT_ERR_SYNTAX, "invalid %s '%.*s'", type_text, (int)(n > 64 ? 64 : n), s);
  int64_t sc = (int64_t)scale + dropped_scale - exp;
  if (u256_is_zero(&mag)) { /* a zero keeps the scale it was written with: 0.00 */
    out->v = 0;
    out->scale = sc < 0 ? 0 : sc > CAT_DEC_MAX_PRECISION ? CAT_DEC_MAX_PRECISION : (int)sc;
    return CAT_OK;
  }
  if (any_dropped && first_dropped >= 5) mag = u256_add(mag, u256_from128(1));
  if (sc < 0) {
    if (sc < -CAT_DEC_MAX_PRECISION) goto range;
    bool ov = false;
    for (int64_t k = 0; k < -sc; k++) mag = u256_mul64(mag, 10, &ov);
    u256 limit = pow10_256(CAT_DEC_MAX_PRECISION);
    if (ov || u256_cmp(&mag, &limit) >= 0) goto range;
    sc = 0;
  }
  if (sc > 200) { out->v = 0; out->scale = CAT_DEC_MAX_PRECISION; return CAT_OK; } /* below 10^-124 */
  /* Drop digits below scale 38 first, then any beyond 38 significant digits. */
  if (fit(neg, mag, (int)sc, CAT_DEC_MAX_PRECISION, false, out, "parse", NULL) != CAT_OK) goto range;
  return CAT_OK;
range:
  return cat_err(err, CAT_ERR_RANGE, "value %.*s out of range for %s", (int)(n > 64 ? 64 : n), s,
                 type_text);
}

size_t cat_dec_format(cat_dec d, char *buf) {
  char digits[48];
  int nd = 0;
  cat_u128 m = magnitude(d.v);
  do { digits[nd++] = (char)('0' + (int)(m % 10)); m /= 10; } while (m);
  while (nd <= d.scale) digits[nd++] = '0'; /* at least one integer digit */
  size_t o = 0;
  if (d.v < 0) buf[o++] = '-';
  for (int i = nd - 1; i >= 0; i--) {
    buf[o++] = digits[i];
    if (i == d.scale && d.scale > 0) buf[o++] = '.';
  }
  buf[o] = 0;
  return o;
}

double cat_dec_to_double(cat_dec d) {
  char t[CAT_DEC_TEXT_MAX];
  cat_dec_format(d, t);
  return strtod(t, NULL);
}

int cat_dec_from_double(double x, cat_dec *out, cat_error *err) {
  if (!(x > -1e38 && x < 1e38)) return cat_err(err, CAT_ERR_RANGE, "value %g out of range for DECIMAL", x);
  char t[64];
  for (int prec = 1; prec <= 17; prec++) {
    snprintf(t, sizeof t, "%.*e", prec - 1, x);
    if (strtod(t, NULL) == x) break;
  }
  return cat_dec_parse(t, strlen(t), out, "DECIMAL", err);
}

int cat_dec_to_i64(cat_dec d, int64_t *out, cat_error *err) {
  cat_i128 v = d.v;
  for (int i = 0; i < d.scale; i++) v /= 10;
  if (v < INT64_MIN || v > INT64_MAX) {
    char t[CAT_DEC_TEXT_MAX];
    cat_dec_format(d, t);
    return cat_err(err, CAT_ERR_RANGE, "value %s out of range for BIGINT", t);
  }
  *out = (int64_t)v;
  return CAT_OK;
}
