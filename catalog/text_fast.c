/*
** catalog/text_fast.c: the fast paths of catalog/text_fast.h, used by cat_text_parse before
** its general code. Numbers: one pass over the digits into a 64-bit integer; decimals with
** Clinger's fast path (an exact integer below 2^53 and an exact power of ten up to 10^22:
** one correctly rounded multiplication or division, IEEE double arithmetic with
** FLT_EVAL_METHOD 0). Anything else (more digits, larger exponents, NaN, Infinity, errors)
** is left to the general parser, which uses strtod. Timestamps: fixed positions, no loop.
*/
#include <float.h>

#include "catalog/text_fast.h"
#include "catalog/value.h"
#include "catalog/types.h"

#if !defined(FLT_EVAL_METHOD) || FLT_EVAL_METHOD != 0
#define NO_CLINGER 1 /* excess precision would round twice: always use the general parser */
#endif

bool cat_text_fast_int(const char *s, size_t n, int64_t *out) {
  size_t i = 0;
  bool neg = false;
  if (n && (s[0] == '+' || s[0] == '-')) neg = s[i++] == '-';
  if (i == n || n - i > 18) return false;
  int64_t v = 0;
  for (; i < n; i++) {
    unsigned d = (unsigned)(unsigned char)s[i] - '0';
    if (d > 9) return false;
    v = v * 10 + (int64_t)d;
  }
  *out = neg ? -v : v;
  return true;
}

static const double POW10[23] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                 1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

bool cat_text_fast_double(const char *s, size_t n, double *out) {
#ifdef NO_CLINGER
  (void)s; (void)n; (void)out;
  return false;
#else
  if (n > 400) return false; /* the general parser refuses these */
  size_t i = 0;
  bool neg = false;
  if (n && (s[0] == '+' || s[0] == '-')) neg = s[i++] == '-';
  uint64_t m = 0;
  int nd = 0, exp10 = 0;       /* significant digits taken; power of ten to apply */
  bool any = false;
  for (; i < n && (unsigned)(unsigned char)s[i] - '0' <= 9; i++) {
    any = true;
    if (m == 0 && s[i] == '0') continue; /* leading zeros */
    if (++nd > 19) return false;
    m = m * 10 + (uint64_t)(s[i] - '0');
  }
  if (i < n && s[i] == '.') {
    for (i++; i < n && (unsigned)(unsigned char)s[i] - '0' <= 9; i++) {
      any = true;
      exp10--;
      if (m == 0 && s[i] == '0') continue;
      if (++nd > 19) return false;
      m = m * 10 + (uint64_t)(s[i] - '0');
    }
  }
  if (!any) return false;
  if (i < n && (s[i] == 'e' || s[i] == 'E')) {
    i++;
    bool eneg = false;
    if (i < n && (s[i] == '+' || s[i] == '-')) eneg = s[i++] == '-';
    if (i == n) return false;
    int e = 0;
    for (; i < n; i++) {
      unsigned d = (unsigned)(unsigned char)s[i] - '0';
      if (d > 9 || e > 100000) return false;
      e = e * 10 + (int)d;
    }
    exp10 += eneg ? -e : e;
  }
  if (i != n) return false;
  if (m == 0) {
    *out = neg ? -0.0 : 0.0;
    return true;
  }
  if (m > (1ull << 53) || exp10 < -22 || exp10 > 22) return false;
  double d = (double)m;
  d = exp10 < 0 ? d / POW10[-exp10] : d * POW10[exp10];
  *out = neg ? -d : d;
  return true;
#endif
}

static inline int dig2(const char *p) {
  unsigned a = (unsigned)(unsigned char)p[0] - '0', b = (unsigned)(unsigned char)p[1] - '0';
  return a > 9 || b > 9 ? -1 : (int)(a * 10 + b);
}

bool cat_text_fast_timestamp(const char *s, size_t n, int64_t *us) {
  if (n != 19 || s[4] != '-' || s[7] != '-' || (s[10] != ' ' && s[10] != 'T') ||
      s[13] != ':' || s[16] != ':')
    return false;
  int y1 = dig2(s), y2 = dig2(s + 2), mo = dig2(s + 5), d = dig2(s + 8), h = dig2(s + 11),
      mi = dig2(s + 14), se = dig2(s + 17);
  if (y1 < 0 || y2 < 0 || mo < 1 || mo > 12 || d < 1 || h < 0 || h > 23 || mi < 0 ||
      mi > 59 || se < 0 || se > 59)
    return false;
  int64_t y = y1 * 100 + y2;
  static const int dm[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  int mdays = mo == 2 && ((y % 4 == 0 && y % 100 != 0) || y % 400 == 0) ? 29 : dm[mo - 1];
  if (y < 1 || d > mdays) return false;
  int64_t days = cat_days_from_civil(y, mo, d);
  *us = days * CAT_US_PER_DAY + ((int64_t)(h * 60 + mi) * 60 + se) * 1000000;
  return true;
}
