/*
** catalog/text.c: parsing and formatting SQL values as text, for literals, CSV import and
** output (contracts in catalog/value.h). Dates use the proleptic Gregorian calendar with
** days counted from 1970-01-01 (Howard Hinnant's civil-days algorithm). Limits are checked
** by cat_value_check (catalog/value.c). No encoding or comparison lives here.
*/
#include "catalog/text_fast.h"
#include "catalog/value.h"

#include <errno.h>
#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalog/array.h"
#include "catalog/decimal.h"

int64_t cat_days_from_civil(int64_t y, int m, int d) {
  y -= m <= 2;
  int64_t era = (y >= 0 ? y : y - 399) / 400;
  int64_t yoe = y - era * 400;
  int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

void cat_civil_from_days(int64_t z, int64_t *y, int *m, int *d) {
  z += 719468;
  int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  int64_t doe = z - era * 146097;
  int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  int64_t mp = (5 * doy + 2) / 153;
  *d = (int)(doy - (153 * mp + 2) / 5 + 1);
  *m = (int)(mp < 10 ? mp + 3 : mp - 9);
  *y = yoe + era * 400 + (*m <= 2);
}

static int days_in_month(int64_t y, int m) {
  static const int dm[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  if (m == 2 && ((y % 4 == 0 && y % 100 != 0) || y % 400 == 0)) return 29;
  return dm[m - 1];
}

/* Read exactly `w` digits at s[*i]; false if not all digits. */
static bool digits(const char *s, size_t n, size_t *i, int w, int64_t *out) {
  int64_t v = 0;
  if (*i + (size_t)w > n) return false;
  for (int k = 0; k < w; k++) {
    char c = s[*i + (size_t)k];
    if (c < '0' || c > '9') return false;
    v = v * 10 + (c - '0');
  }
  *i += (size_t)w;
  *out = v;
  return true;
}

/* YYYY-MM-DD at s[*i] -> days. */
static bool parse_date(const char *s, size_t n, size_t *i, int64_t *days) {
  int64_t y, m, d;
  if (!digits(s, n, i, 4, &y) || *i >= n || s[(*i)++] != '-') return false;
  if (!digits(s, n, i, 2, &m) || *i >= n || s[(*i)++] != '-') return false;
  if (!digits(s, n, i, 2, &d)) return false;
  if (y < 1 || m < 1 || m > 12 || d < 1 || d > days_in_month(y, (int)m)) return false;
  *days = cat_days_from_civil(y, (int)m, (int)d);
  return true;
}

/* HH:MM[:SS[.f{1,9}]] at s[*i] -> microseconds since midnight. */
static bool parse_time(const char *s, size_t n, size_t *i, int64_t *us) {
  int64_t h, mi, sec = 0, frac = 0;
  if (!digits(s, n, i, 2, &h) || *i >= n || s[(*i)++] != ':') return false;
  if (!digits(s, n, i, 2, &mi)) return false;
  if (*i < n && s[*i] == ':') {
    (*i)++;
    if (!digits(s, n, i, 2, &sec)) return false;
    if (*i < n && s[*i] == '.') {
      (*i)++;
      int nd = 0;
      while (*i < n && s[*i] >= '0' && s[*i] <= '9') {
        if (nd < 6) frac = frac * 10 + (s[*i] - '0');
        nd++;
        (*i)++;
      }
      if (nd == 0 || nd > 9) return false;
      for (int k = nd; k < 6; k++) frac *= 10;
    }
  }
  if (h > 23 || mi > 59 || sec > 59) return false;
  *us = ((h * 60 + mi) * 60 + sec) * 1000000 + frac;
  return true;
}

static bool ieq(const char *s, size_t n, const char *lit) {
  size_t l = strlen(lit);
  if (n != l) return false;
  for (size_t k = 0; k < n; k++) {
    char c = s[k];
    if (c >= 'a' && c <= 'z') c = (char)(c - 32);
    if (c != lit[k]) return false;
  }
  return true;
}

#define SHOW(n) ((int)((n) > 64 ? 64 : (n)))

int cat_text_parse(const cat_type *t, const char *s, size_t n, cat_value *out, cat_error *err) {
  cat_value v = cat_v_null(*t);
  v.is_null = false;
  /* Fast paths (catalog/text_fast.h): the same values for the common forms. */
  switch (t->id) {
    case CAT_T_TINYINT: case CAT_T_SMALLINT: case CAT_T_INTEGER: case CAT_T_BIGINT:
      if (cat_text_fast_int(s, n, &v.u.i)) return cat_value_check(t, &v, out, err);
      break;
    case CAT_T_DOUBLE: case CAT_T_FLOAT:
      if (cat_text_fast_double(s, n, &v.u.d) && (t->id == CAT_T_DOUBLE || fabs(v.u.d) <= 1e38))
        return cat_value_check(t, &v, out, err);
      break;
    case CAT_T_TIMESTAMP:
      if (cat_text_fast_timestamp(s, n, &v.u.i)) return cat_value_check(t, &v, out, err);
      break;
    default:
      break;
  }
  char tt[48];
  cat_type_format(t, tt, sizeof tt);
  size_t i = 0;
  if (t->id == CAT_T_ARRAY) /* its encoding needs memory: cat_value_cast with a buffer */
    return cat_err(err, CAT_ERR_TYPE, "text cannot be read as %s here (write ARRAY[...] or "
                   "CAST('[...]' AS %s))", tt, tt);
  switch (t->id) {
    case CAT_T_BOOLEAN:
      if (ieq(s, n, "TRUE") || ieq(s, n, "T") || ieq(s, n, "1")) v.u.b = true;
      else if (ieq(s, n, "FALSE") || ieq(s, n, "F") || ieq(s, n, "0")) v.u.b = false;
      else return cat_err(err, CAT_ERR_SYNTAX, "invalid BOOLEAN '%.*s'", SHOW(n), s);
      break;
    case CAT_T_TINYINT: case CAT_T_SMALLINT: case CAT_T_INTEGER: case CAT_T_BIGINT: {
      bool neg = false;
      if (i < n && (s[i] == '+' || s[i] == '-')) neg = s[i++] == '-';
      if (i == n) return cat_err(err, CAT_ERR_SYNTAX, "invalid %s '%.*s'", tt, SHOW(n), s);
      uint64_t mag = 0;
      bool over = false;
      for (; i < n; i++) {
        if (s[i] < '0' || s[i] > '9') return cat_err(err, CAT_ERR_SYNTAX, "invalid %s '%.*s'", tt, SHOW(n), s);
        uint64_t dgt = (uint64_t)(s[i] - '0');
        if (mag > (UINT64_MAX - dgt) / 10) over = true;
        else mag = mag * 10 + dgt;
      }
      if (over || mag > (uint64_t)INT64_MAX + neg)
        return cat_err(err, CAT_ERR_RANGE, "value %.*s out of range for %s", SHOW(n), s, tt);
      v.u.i = neg ? (int64_t)(0 - mag) : (int64_t)mag;
      break;
    }
    case CAT_T_FLOAT: case CAT_T_DOUBLE: {
      size_t j = 0;
      bool neg = false;
      if (j < n && (s[j] == '+' || s[j] == '-')) neg = s[j++] == '-';
      if (ieq(s + j, n - j, "NAN") && j == 0) { v.u.d = NAN; break; }
      if (ieq(s + j, n - j, "INFINITY") || ieq(s + j, n - j, "INF")) {
        v.u.d = neg ? -INFINITY : INFINITY;
        break;
      }
      /* Only plain decimal notation: strtod would also take hex floats and "nan(...)". */
      bool ok = j < n, seen_digit = false, seen_point = false;
      for (size_t k = j; k < n && ok; k++) {
        char c = s[k];
        if (c >= '0' && c <= '9') seen_digit = true;
        else if (c == '.' && !seen_point) seen_point = true;
        else if ((c == 'e' || c == 'E') && seen_digit) {
          size_t e = k + 1;
          if (e < n && (s[e] == '+' || s[e] == '-')) e++;
          if (e == n) ok = false;
          for (; e < n; e++) if (s[e] < '0' || s[e] > '9') ok = false;
          break;
        } else ok = false;
      }
      if (!ok || !seen_digit || n > 400)
        return cat_err(err, CAT_ERR_SYNTAX, "invalid %s '%.*s'", tt, SHOW(n), s);
      char buf[404];
      memcpy(buf, s, n);
      buf[n] = 0;
      errno = 0;
      double d = strtod(buf, NULL);
      if (isinf(d) || (t->id == CAT_T_FLOAT && isinf((float)d)))
        return cat_err(err, CAT_ERR_RANGE, "value %.*s out of range for %s", SHOW(n), s, tt);
      v.u.d = d;
      break;
    }
    case CAT_T_DECIMAL: {
      int rc = cat_dec_parse(s, n, &v.u.dec, tt, err);
      if (rc) return rc;
      break;
    }
    case CAT_T_CHAR: case CAT_T_VARCHAR: case CAT_T_VARBINARY:
      v.u.s.p = (const uint8_t *)s;
      v.u.s.len = (uint32_t)n;
      if (n > UINT32_MAX) return cat_err(err, CAT_ERR_RANGE, "value too long for %s", tt);
      break;
    case CAT_T_DATE:
      if (!parse_date(s, n, &i, &v.u.i) || i != n)
        return cat_err(err, CAT_ERR_SYNTAX, "invalid DATE '%.*s'", SHOW(n), s);
      break;
    case CAT_T_TIME:
      if (!parse_time(s, n, &i, &v.u.i) || i != n)
        return cat_err(err, CAT_ERR_SYNTAX, "invalid TIME '%.*s'", SHOW(n), s);
      break;
    case CAT_T_TIMESTAMP: {
      int64_t days, us = 0;
      if (!parse_date(s, n, &i, &days))
        return cat_err(err, CAT_ERR_SYNTAX, "invalid TIMESTAMP '%.*s'", SHOW(n), s);
      if (i < n) {
        if ((s[i] != ' ' && s[i] != 'T') || (++i, !parse_time(s, n, &i, &us)) || i != n)
          return cat_err(err, CAT_ERR_SYNTAX, "invalid TIMESTAMP '%.*s'", SHOW(n), s);
      }
      v.u.i = days * CAT_US_PER_DAY + us;
      break;
    }
    default:
      return cat_err(err, CAT_ERR_TYPE, "unknown type id %d", t->id);
  }
  return cat_value_check(t, &v, out, err);
}

/* Shortest text of x that reads back as x (as a float when is_float). Like SQLite's and
** Java's output: plain decimal notation with at least one digit after the point ("10.0",
** "0.25", "-3.5") for 1e-5 <= |x| < 1e15, scientific notation otherwise ("1.5e+20",
** "-2.77555756156289e-17"); "NaN", "Infinity", "-Infinity". */
static size_t format_real_search(double x, bool is_float, char *buf, size_t cap) {
  if (isnan(x)) return (size_t)snprintf(buf, cap, "NaN");
  if (isinf(x)) return (size_t)snprintf(buf, cap, x < 0 ? "-Infinity" : "Infinity");
  if (x == 0) return (size_t)snprintf(buf, cap, "0.0"); /* -0.0 prints as 0.0 */
  char t[40];
  int maxp = is_float ? 9 : 17, p;
  for (p = 1; p <= maxp; p++) {
    snprintf(t, sizeof t, "%.*e", p - 1, x);
    double back = strtod(t, NULL);
    if (is_float ? (float)back == (float)x : back == x) break;
  }
  if (p > maxp) p = maxp;
  int e = atoi(strchr(t, 'e') + 1); /* decimal exponent of the shortest digits */
  /* t is already the shortest digits in scientific form; %g would print 2^53 as the plain
     integer "9007199254740992", which reads back as a BIGINT */
  if (e < -5 || e >= 15) return (size_t)snprintf(buf, cap, "%s", t);
  int decimals = p - 1 - e;
  if (decimals < 1) decimals = 1;
  char f[64];
  snprintf(f, sizeof f, "%.*f", decimals, x);
  double back = strtod(f, NULL);
  if (!(is_float ? (float)back == (float)x : back == x)) snprintf(f, sizeof f, "%.17g", x);
  return (size_t)snprintf(buf, cap, "%s", f);
}

size_t cat_format_double_search(double x, char *buf, size_t cap) {
  return format_real_search(x, false, buf, cap);
}

/* A DOUBLE with at most 7 decimals and |x| * 10^k below 2^52, in 1e-5 <= |x| < 1e15 (most
** measured values: 21.3, -11.9, 1014.25): the fewest decimals k whose decimal r / 10^k
** reads back as x, printed from the integer r without printf or strtod. r / 10^k, with r
** and 10^k exact doubles, is the correctly rounded quotient, which is what strtod gives for
** that decimal; below 2^52 no other decimal with k places reads back as x, so the text is
** the one the search finds. 0 when x does not qualify (then the search runs). */
static size_t format_real_fast(double x, char *buf, size_t cap) {
  static const double pow10[8] = {1, 10, 100, 1e3, 1e4, 1e5, 1e6, 1e7};
  double ax = fabs(x);
  if (!(ax >= 1e-5 && ax < 1e15)) return 0;
  for (int k = 0; k < 8; k++) {
    double y = x * pow10[k];
    if (fabs(y) >= 4503599627370496.0) return 0; /* 2^52 */
    double r = nearbyint(y);
    if (r / pow10[k] != x) continue;
    int64_t n = (int64_t)r;
    uint64_t u = n < 0 ? (uint64_t)-n : (uint64_t)n, p = (uint64_t)pow10[k];
    char t[48];
    int len;
    if (k == 0)
      len = snprintf(t, sizeof t, "%s%" PRIu64 ".0", n < 0 ? "-" : "", u);
    else
      len = snprintf(t, sizeof t, "%s%" PRIu64 ".%0*" PRIu64, n < 0 ? "-" : "", u / p, k,
                     u % p);
    if (cap) {
      size_t c = (size_t)len < cap - 1 ? (size_t)len : cap - 1;
      memcpy(buf, t, c);
      buf[c] = 0;
    }
    return (size_t)len;
  }
  return 0;
}

static size_t format_real(double x, bool is_float, char *buf, size_t cap) {
  if (!is_float && cap >= 48) {
    size_t n = format_real_fast(x, buf, cap);
    if (n) return n;
  }
  return format_real_search(x, is_float, buf, cap);
}

/* ".ffffff" / ".fff" / "" for the microsecond part us (0..999999). */
static void frac_text(int64_t us, char *f) {
  if (us == 0) f[0] = 0;
  else if (us % 1000 == 0) snprintf(f, 16, ".%03d", (int)(us / 1000));
  else snprintf(f, 16, ".%06d", (int)us);
}

size_t cat_text_format(const cat_value *v, char *buf, size_t cap) {
  if (v->is_null) return (size_t)snprintf(buf, cap, "NULL");
  switch (v->type.id) {
    case CAT_T_ARRAY: return cat_array_format(v, buf, cap);
    case CAT_T_BOOLEAN: return (size_t)snprintf(buf, cap, "%s", v->u.b ? "TRUE" : "FALSE");
    case CAT_T_TINYINT: case CAT_T_SMALLINT: case CAT_T_INTEGER: case CAT_T_BIGINT:
      return (size_t)snprintf(buf, cap, "%" PRId64, v->u.i);
    case CAT_T_FLOAT: return format_real(v->u.d, true, buf, cap);
    case CAT_T_DOUBLE: return format_real(v->u.d, false, buf, cap);
    case CAT_T_DECIMAL: {
      char t[CAT_DEC_TEXT_MAX];
      cat_dec_format(v->u.dec, t);
      return (size_t)snprintf(buf, cap, "%s", t);
    }
    case CAT_T_CHAR: case CAT_T_VARCHAR: case CAT_T_VARBINARY: {
      size_t n = v->u.s.len;
      if (cap) {
        size_t c = n < cap - 1 ? n : cap - 1;
        if (c) memcpy(buf, v->u.s.p, c);
        buf[c] = 0;
      }
      return n;
    }
    case CAT_T_DATE: {
      int64_t y;
      int m, d;
      cat_civil_from_days(v->u.i, &y, &m, &d);
      return (size_t)snprintf(buf, cap, "%04" PRId64 "-%02d-%02d", y, m, d);
    }
    case CAT_T_TIME: {
      int64_t us = v->u.i, s = us / 1000000;
      char f[16];
      frac_text(us % 1000000, f);
      return (size_t)snprintf(buf, cap, "%02d:%02d:%02d%s", (int)(s / 3600), (int)(s / 60 % 60),
                              (int)(s % 60), f);
    }
    case CAT_T_TIMESTAMP: {
      int64_t us = v->u.i;
      int64_t days = us / CAT_US_PER_DAY, tod = us % CAT_US_PER_DAY;
      if (tod < 0) { tod += CAT_US_PER_DAY; days--; }
      int64_t y;
      int m, d;
      cat_civil_from_days(days, &y, &m, &d);
      int64_t s = tod / 1000000;
      char f[16];
      frac_text(tod % 1000000, f);
      return (size_t)snprintf(buf, cap, "%04" PRId64 "-%02d-%02d %02d:%02d:%02d%s", y, m, d,
                              (int)(s / 3600), (int)(s / 60 % 60), (int)(s % 60), f);
    }
    default: return (size_t)snprintf(buf, cap, "?");
  }
}
