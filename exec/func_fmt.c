/*
** exec/func_fmt.c: text <-> value with formats: TO_CHAR, TO_TIMESTAMP, TO_DATE, TO_TIME,
** TO_NUMBER. The three parsers take a time zone as a third argument, as Phoenix's do: the
** text is then local time there, and the value its UTC time (exec/tz.h).
**
** Date formats are the subset of Java's SimpleDateFormat that Phoenix users write: y (yyyy;
** yy is two digits, read as 19xx for 70-99 and 20xx for 00-69), M (MM, MMM "Jan", MMMM
** "January"), d, D (day of year), H (0-23), h (1-12) with a (AM/PM), m, s, S (a run of n
** S is the first n digits of the fraction: SSS milliseconds, SSSSSS microseconds; Java
** reads S as a millisecond count, which agrees for SSS), E (EEE "Mon", EEEE "Monday"), Z
** ("+0000") and X ("Z": values have no time zone), 'quoted text' ('' is a quote); any
** other letter is an error, any other character is literal text. When reading, two numeric
** fields with nothing between them take exactly their pattern width (yyyyMMdd), others
** take as many digits as are there.
**
** Number formats are a subset of Java's DecimalFormat: prefix text, digits '0' (always
** shown) and '#' (shown when significant), ',' grouping (the group size is the number of
** digit characters after the last ','), '.', suffix text; '%' in the prefix or suffix
** multiplies by 100. Rounding is half-even (DecimalFormat's default). A minus sign goes
** before the prefix; a value that rounds to zero has no sign. No exponents, no ';' negative
** sub-patterns, no quotes.
*/
#include "exec/func_int.h"
#include "exec/tz.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

static const char *const month_names[12] = {"January", "February", "March",     "April",
                                             "May",     "June",     "July",      "August",
                                             "September", "October", "November", "December"};
static const char *const day_names[7] = {"Monday", "Tuesday",  "Wednesday", "Thursday",
                                         "Friday", "Saturday", "Sunday"};

/* A growing output in the arena. */
typedef struct out_buf {
  char *p;     /* bytes */
  size_t n;    /* used */
  size_t cap;  /* capacity */
  bool oom;    /* an allocation failed */
  exec_arena *a; /* where to grow */
} out_buf;

static void put(out_buf *o, const char *s, size_t n) {
  if (o->oom) return;
  if (o->n + n + 1 > o->cap) {
    size_t cap = (o->cap ? o->cap * 2 : 64);
    while (cap < o->n + n + 1) cap *= 2;
    char *p = exec_arena_alloc(o->a, cap);
    if (!p) { o->oom = true; return; }
    if (o->n) memcpy(p, o->p, o->n);
    o->p = p;
    o->cap = cap;
  }
  memcpy(o->p + o->n, s, n);
  o->n += n;
}

static void put_num(out_buf *o, int64_t v, int width) {
  char b[32];
  int n = snprintf(b, sizeof b, "%0*lld", width, (long long)v);
  put(o, b, (size_t)n);
}

static bool field_letter(char ch) {
  return strchr("yMdDHhmsSEaZX", ch) != NULL;
}

static int fmt_err(exec_func_ctx *c, const char *f, const char *what, const uint8_t *fmt,
                   size_t flen) {
  return exec_fn_err(c, EXEC_ERROR, "%s: %s in format '%.*s'", f, what,
                     (int)(flen > 60 ? 60 : flen), (const char *)fmt);
}

/* The quoted text starting at fmt[i] == '\'': '' alone is a quote, inside quotes '' is a
** quote too. Unescaped into lit (cap bytes, truncated); returns the index after it, or 0 when
** the quote is not closed. */
static size_t quoted(const uint8_t *fmt, size_t flen, size_t i, char *lit, size_t cap,
                     size_t *lit_n) {
  size_t j = i + 1, n = 0;
  if (j < flen && fmt[j] == '\'') {
    if (cap) lit[n++] = '\'';
    *lit_n = n;
    return j + 1;
  }
  for (;;) {
    if (j >= flen) return 0;
    if (fmt[j] == '\'') {
      if (j + 1 < flen && fmt[j + 1] == '\'') {
        if (n < cap) lit[n++] = '\'';
        j += 2;
        continue;
      }
      *lit_n = n;
      return j + 1;
    }
    if (n < cap) lit[n++] = (char)fmt[j];
    j++;
  }
}

/* ---- Dates: formatting ---------------------------------------------------------------- */
static int format_date(int64_t us, const uint8_t *fmt, size_t flen, out_buf *o,
                       exec_func_ctx *c) {
  exec_fn_tm tm;
  exec_fn_tm_from_us(us, &tm);
  int64_t days = us / CAT_US_PER_DAY - (us % CAT_US_PER_DAY < 0);
  int dow = (int)(((days % 7) + 7 + 3) % 7); /* 0 = Monday */
  size_t i = 0;
  while (i < flen) {
    char ch = (char)fmt[i];
    if (ch == '\'') {
      char lit[256];
      size_t ln;
      size_t j = quoted(fmt, flen, i, lit, sizeof lit, &ln);
      if (!j) return fmt_err(c, "TO_CHAR", "unterminated quote", fmt, flen);
      put(o, lit, ln);
      i = j;
      continue;
    }
    if (!isalpha((unsigned char)ch)) { put(o, &ch, 1); i++; continue; }
    if (!field_letter(ch)) {
      char m[40];
      snprintf(m, sizeof m, "unknown pattern letter '%c'", ch);
      return fmt_err(c, "TO_CHAR", m, fmt, flen);
    }
    size_t j = i;
    while (j < flen && fmt[j] == (uint8_t)ch) j++;
    int cnt = (int)(j - i);
    i = j;
    switch (ch) {
      case 'y':
        if (cnt == 2) put_num(o, tm.year % 100, 2);
        else put_num(o, tm.year, cnt);
        break;
      case 'M':
        if (cnt >= 4) put(o, month_names[tm.month - 1], strlen(month_names[tm.month - 1]));
        else if (cnt == 3) put(o, month_names[tm.month - 1], 3);
        else put_num(o, tm.month, cnt);
        break;
      case 'd': put_num(o, tm.day, cnt); break;
      case 'D': put_num(o, days - cat_days_from_civil(tm.year, 1, 1) + 1, cnt); break;
      case 'H': put_num(o, tm.hour, cnt); break;
      case 'h': put_num(o, tm.hour % 12 == 0 ? 12 : tm.hour % 12, cnt); break;
      case 'm': put_num(o, tm.minute, cnt); break;
      case 's': put_num(o, tm.second, cnt); break;
      case 'S': {
        char b[8];
        snprintf(b, sizeof b, "%06d", tm.micros);
        for (int k = 0; k < cnt; k++) put(o, k < 6 ? &b[k] : "0", 1);
        break;
      }
      case 'E':
        put(o, day_names[dow], cnt >= 4 ? strlen(day_names[dow]) : 3);
        break;
      case 'a': put(o, tm.hour < 12 ? "AM" : "PM", 2); break;
      case 'Z': put(o, "+0000", 5); break;
      case 'X': put(o, "Z", 1); break;
    }
  }
  return EXEC_OK;
}

/* ---- Dates: parsing ------------------------------------------------------------------- */
static int match_name(const uint8_t *s, size_t n, const char *const *names, int count,
                      size_t *used) {
  for (int k = 0; k < count; k++) {
    size_t full = strlen(names[k]);
    if (n >= full && strncasecmp((const char *)s, names[k], full) == 0) { *used = full; return k; }
  }
  for (int k = 0; k < count; k++)
    if (n >= 3 && strncasecmp((const char *)s, names[k], 3) == 0) { *used = 3; return k; }
  return -1;
}

static int parse_date(const uint8_t *s, size_t slen, const uint8_t *fmt, size_t flen,
                      int64_t *us, exec_func_ctx *c, const char *f) {
  exec_fn_tm tm = {1970, 1, 1, 0, 0, 0, 0};
  int pm = -1, h12 = -1;
  size_t i = 0, p = 0;
  char what[80];
  while (i < flen) {
    char ch = (char)fmt[i];
    if (ch == '\'') {
      char lit[256];
      size_t L;
      size_t j = quoted(fmt, flen, i, lit, sizeof lit, &L);
      if (!j) return fmt_err(c, f, "unterminated quote", fmt, flen);
      if (slen - p < L || memcmp(s + p, lit, L) != 0) goto mismatch;
      p += L;
      i = j;
      continue;
    }
    if (!isalpha((unsigned char)ch)) {
      if (p >= slen || s[p] != (uint8_t)ch) goto mismatch;
      p++;
      i++;
      continue;
    }
    if (!field_letter(ch)) {
      snprintf(what, sizeof what, "unknown pattern letter '%c'", ch);
      return fmt_err(c, f, what, fmt, flen);
    }
    size_t j = i;
    while (j < flen && fmt[j] == (uint8_t)ch) j++;
    int cnt = (int)(j - i);
    i = j;
    if (ch == 'a') {
      if (slen - p >= 2 && strncasecmp((const char *)s + p, "AM", 2) == 0) pm = 0;
      else if (slen - p >= 2 && strncasecmp((const char *)s + p, "PM", 2) == 0) pm = 1;
      else goto mismatch;
      p += 2;
      continue;
    }
    if (ch == 'E' || (ch == 'M' && cnt >= 3)) {
      size_t used;
      int k = ch == 'E' ? match_name(s + p, slen - p, day_names, 7, &used)
                        : match_name(s + p, slen - p, month_names, 12, &used);
      if (k < 0) goto mismatch;
      if (ch == 'M') tm.month = k + 1;
      p += used;
      continue;
    }
    if (ch == 'Z' || ch == 'X') {
      if (p < slen && s[p] == 'Z') { p++; continue; }
      if (slen - p >= 5 && memcmp(s + p, "+0000", 5) == 0) { p += 5; continue; }
      goto mismatch;
    }
    /* numeric field: fixed width when the next pattern item is a numeric field too */
    bool fixed = i < flen && isalpha(fmt[i]) && strchr("yMdDHhmsS", (char)fmt[i]) &&
                 !(fmt[i] == 'M' && i + 2 < flen && fmt[i + 1] == 'M' && fmt[i + 2] == 'M');
    size_t maxd = fixed ? (size_t)cnt : (ch == 'S' ? 9 : 9);
    size_t k = 0;
    int64_t v = 0, scale = 1;
    while (p + k < slen && k < maxd && isdigit(s[p + k])) {
      v = v * 10 + (s[p + k] - '0');
      scale *= 10;
      k++;
    }
    if (k == 0 || (fixed && k != (size_t)cnt)) goto mismatch;
    p += k;
    switch (ch) {
      case 'y':
        if (cnt == 2 && k == 2) v += v < 70 ? 2000 : 1900;
        tm.year = v;
        break;
      case 'M': tm.month = (int)v; break;
      case 'd': tm.day = (int)v; break;
      case 'D': tm.day = (int)v; tm.month = -1; break; /* day of year, resolved below */
      case 'H': tm.hour = (int)v; break;
      case 'h': h12 = (int)v; break;
      case 'm': tm.minute = (int)v; break;
      case 's': tm.second = (int)v; break;
      case 'S': {
        /* the digits are a fraction: scale them to microseconds */
        int64_t us6 = v;
        int64_t sc = scale;
        while (sc > 1000000) { us6 /= 10; sc /= 10; }
        while (sc < 1000000) { us6 *= 10; sc *= 10; }
        tm.micros = (int)us6;
        break;
      }
    }
  }
  if (p != slen) goto mismatch;
  if (h12 >= 0) {
    if (h12 < 1 || h12 > 12) return exec_fn_err(c, EXEC_CONSTRAINT, "%s: hour %d out of range", f, h12);
    tm.hour = h12 % 12 + (pm == 1 ? 12 : 0);
  } else if (pm == 1 && tm.hour < 12) {
    tm.hour += 12;
  }
  if (tm.month == -1) {
    int doy = tm.day;
    tm.month = 1;
    tm.day = 1;
    int rc = exec_fn_tm_to_us(&tm, us, c, f);
    if (rc) return rc;
    if (doy < 1 || doy > 366) return exec_fn_err(c, EXEC_CONSTRAINT, "%s: day of year %d out of range", f, doy);
    *us += (int64_t)(doy - 1) * CAT_US_PER_DAY;
    exec_fn_tm chk;
    exec_fn_tm_from_us(*us, &chk);
    if (chk.year != tm.year) return exec_fn_err(c, EXEC_CONSTRAINT, "%s: day of year %d out of range", f, doy);
    return EXEC_OK;
  }
  return exec_fn_tm_to_us(&tm, us, c, f);
mismatch:
  return exec_fn_err(c, EXEC_ERROR, "%s: '%.*s' does not match format '%.*s'", f,
                     (int)(slen > 60 ? 60 : slen), (const char *)s, (int)(flen > 60 ? 60 : flen),
                     (const char *)fmt);
}

/* ---- Numbers ------------------------------------------------------------------------- */
static bool digit_char(uint8_t ch) { return ch == '#' || ch == '0' || ch == ',' || ch == '.'; }

static int format_number(const cat_value *v, const uint8_t *fmt, size_t flen, out_buf *o,
                         exec_func_ctx *c) {
  size_t b0 = 0, b1;
  while (b0 < flen && !digit_char(fmt[b0])) b0++;
  b1 = b0;
  while (b1 < flen && digit_char(fmt[b1])) b1++;
  if (b0 == b1) return fmt_err(c, "TO_CHAR", "no digits ('0' or '#')", fmt, flen);
  bool percent = memchr(fmt, '%', b0) || memchr(fmt + b1, '%', flen - b1);
  int min_int = 0, min_frac = 0, max_frac = 0, group = 0, since_comma = -1;
  bool in_frac = false;
  for (size_t i = b0; i < b1; i++) {
    uint8_t ch = fmt[i];
    if (ch == '.') {
      if (in_frac) return fmt_err(c, "TO_CHAR", "two decimal points", fmt, flen);
      in_frac = true;
    } else if (ch == ',') {
      if (in_frac) return fmt_err(c, "TO_CHAR", "grouping after the decimal point", fmt, flen);
      since_comma = 0;
    } else if (in_frac) {
      if (ch == '0') {
        if (max_frac > min_frac) return fmt_err(c, "TO_CHAR", "'0' after '#' in the fraction", fmt, flen);
        min_frac++;
      }
      max_frac++;
    } else {
      if (ch == '0') min_int++;
      if (since_comma >= 0) since_comma++;
    }
  }
  group = since_comma > 0 ? since_comma : 0;
  if (max_frac > 30) return fmt_err(c, "TO_CHAR", "too many fraction digits", fmt, flen);
  if (cat_type_is_float(v->type.id) && !isfinite(v->u.d)) {
    const char *t = isnan(v->u.d) ? "NaN" : v->u.d > 0 ? "Infinity" : "-Infinity";
    put(o, t, strlen(t));
    return EXEC_OK;
  }
  cat_dec d;
  int rc = exec_fn_dec(v, &d, c, "TO_CHAR");
  if (rc) return rc;
  cat_error e;
  if (percent && cat_dec_mul(d, cat_dec_from_i64(100), &d, &e))
    return exec_fn_cat_err(c, CAT_ERR_RANGE, &e);
  /* round half-even to max_frac digits */
  cat_i128 q = d.v;
  int scale = d.scale;
  if (scale > max_frac) {
    cat_i128 p = 1;
    for (int k = 0; k < scale - max_frac; k++) p *= 10;
    cat_i128 r = q % p;
    q /= p;
    cat_i128 ar = r < 0 ? -r : r;
    if (ar > p - ar || (ar == p - ar && (q % 2 != 0))) q += r < 0 ? -1 : 1;
    scale = max_frac;
  }
  if (scale < min_frac) {
    cat_dec t = {q, scale};
    if (cat_dec_rescale(t, min_frac, &t, &e))
      return exec_fn_err(c, EXEC_CONSTRAINT, "TO_CHAR: value too long for format");
    q = t.v;
    scale = min_frac;
  }
  bool neg = q < 0;
  cat_u128 uq = neg ? (cat_u128)(-q) : (cat_u128)q;
  char digits[64];
  int nd = 0;
  do { digits[nd++] = (char)('0' + (int)(uq % 10)); uq /= 10; } while (uq);
  while (nd <= scale) digits[nd++] = '0'; /* at least one integer digit in the buffer */
  /* digits[] holds the number reversed: [0, scale) fraction, [scale, nd) integer */
  int int_n = nd - scale;
  while (int_n > 1 && digits[scale + int_n - 1] == '0') int_n--;
  bool int_zero = int_n == 1 && digits[scale] == '0';
  int frac_n = scale;
  while (frac_n > min_frac && digits[scale - frac_n] == '0') frac_n--;
  if (neg) put(o, "-", 1);
  put(o, (const char *)fmt, b0);
  int show_int = int_zero ? (min_int > 0 ? min_int : (frac_n == 0 ? 1 : 0))
                          : (int_n > min_int ? int_n : min_int);
  for (int k = show_int - 1; k >= 0; k--) {
    char ch = k < int_n ? digits[scale + k] : '0';
    put(o, &ch, 1);
    if (group && k > 0 && k % group == 0) put(o, ",", 1);
  }
  if (frac_n > 0) {
    put(o, ".", 1);
    for (int k = 0; k < frac_n; k++) put(o, &digits[scale - 1 - k], 1);
  }
  put(o, (const char *)fmt + b1, flen - b1);
  return EXEC_OK;
}

static int to_number(const cat_value *a, int n, cat_value *out, exec_func_ctx *c) {
  const uint8_t *s = a[0].u.s.p;
  size_t slen = a[0].u.s.len;
  bool percent = n >= 2 && memchr(a[1].u.s.p, '%', a[1].u.s.len);
  char buf[128];
  size_t k = 0;
  for (size_t i = 0; i < slen; i++) {
    uint8_t ch = s[i];
    if (isdigit(ch) || ch == '.' || ch == '-' || ch == '+' || ch == 'e' || ch == 'E') {
      if (k + 1 >= sizeof buf) break;
      buf[k++] = (char)ch;
    } else if (n < 2 && ch != ' ') {
      k = 0;
      break;
    }
  }
  cat_dec d;
  cat_error e;
  if (k == 0 || cat_dec_parse(buf, k, &d, "DECIMAL", &e) != CAT_OK)
    return exec_fn_err(c, EXEC_ERROR, "TO_NUMBER: '%.*s' is not a number",
                       (int)(slen > 60 ? 60 : slen), (const char *)s);
  if (percent && cat_dec_div(d, cat_dec_from_i64(100), &d, &e))
    return exec_fn_cat_err(c, CAT_ERR_RANGE, &e);
  *out = cat_v_dec(d, 0, (uint8_t)d.scale);
  return EXEC_OK;
}

int exec_fn_fmt(int id, const cat_value *a, int n, cat_value *out, exec_func_ctx *c) {
  const char *f = cat_func_name(id);
  switch (id) {
    case EXEC_F_TO_TIMESTAMP: case EXEC_F_TO_DATE: case EXEC_F_TO_TIME: {
      for (int i = 0; i < n; i++)
        if (!cat_type_is_string(a[i].type.id))
          return exec_fn_err(c, EXEC_ERROR, "function %s takes text arguments", f);
      int64_t us;
      if (n < 2) {
        cat_type tt = cat_type_of(CAT_T_TIMESTAMP);
        cat_value v;
        cat_error e;
        if (id == EXEC_F_TO_TIME) { /* a time of day, or a timestamp's */
          cat_type ti = cat_type_of(CAT_T_TIME);
          if (cat_text_parse(&ti, (const char *)a[0].u.s.p, a[0].u.s.len, &v, &e) == CAT_OK) {
            *out = v;
            return EXEC_OK;
          }
        }
        int rc = cat_text_parse(&tt, (const char *)a[0].u.s.p, a[0].u.s.len, &v, &e);
        if (rc) return exec_fn_cat_err(c, rc, &e);
        us = v.u.i;
      } else {
        int rc = parse_date(a[0].u.s.p, a[0].u.s.len, a[1].u.s.p, a[1].u.s.len, &us, c, f);
        if (rc) return rc;
      }
      if (n == 3) { /* the text is local time in that zone: the value is its UTC time */
        const struct exec_tz *tz;
        int rc = exec_fn_zone(&a[2], &tz, c, f);
        if (rc) return rc;
        int64_t sec = us / 1000000 - (us % 1000000 < 0);
        us = exec_tz_local_to_utc(tz, sec) * 1000000 + (us - sec * 1000000);
        if (us < CAT_TS_MIN || us > CAT_TS_MAX)
          return exec_fn_err(c, EXEC_CONSTRAINT, "%s: the time in UTC is out of range", f);
      }
      int64_t day = us / CAT_US_PER_DAY - (us % CAT_US_PER_DAY < 0);
      if (id == EXEC_F_TO_DATE) *out = cat_v_int(CAT_T_DATE, day);
      else if (id == EXEC_F_TO_TIME) *out = cat_v_int(CAT_T_TIME, us - day * CAT_US_PER_DAY);
      else *out = cat_v_int(CAT_T_TIMESTAMP, us);
      return EXEC_OK;
    }
    case EXEC_F_TO_CHAR: {
      if (n < 2) {
        const uint8_t *p;
        size_t len;
        int rc = exec_fn_text(&a[0], &p, &len, c);
        if (rc) return rc;
        *out = cat_v_str(CAT_T_VARCHAR, p, len);
        return EXEC_OK;
      }
      if (!cat_type_is_string(a[1].type.id))
        return exec_fn_err(c, EXEC_ERROR, "TO_CHAR: the format must be text");
      out_buf o = {NULL, 0, 0, false, c->arena};
      int tid = a[0].type.id, rc;
      if (tid == CAT_T_DATE || tid == CAT_T_TIMESTAMP || tid == CAT_T_TIME)
        rc = format_date(tid == CAT_T_DATE ? a[0].u.i * CAT_US_PER_DAY : a[0].u.i,
                         a[1].u.s.p, a[1].u.s.len, &o, c);
      else if (cat_type_is_numeric(tid))
        rc = format_number(&a[0], a[1].u.s.p, a[1].u.s.len, &o, c);
      else
        return exec_fn_err(c, EXEC_ERROR, "TO_CHAR does not format %s with a pattern",
                           cat_type_name(tid));
      if (rc) return rc;
      put(&o, "", 0);
      if (o.oom) return exec_fn_err(c, EXEC_NOMEM, "out of memory");
      *out = cat_v_str(CAT_T_VARCHAR, o.p ? o.p : "", o.n);
      return EXEC_OK;
    }
    case EXEC_F_TO_NUMBER:
      if (!cat_type_is_string(a[0].type.id))
        return exec_fn_err(c, EXEC_ERROR, "TO_NUMBER takes text, got %s",
                           cat_type_name(a[0].type.id));
      return to_number(a, n, out, c);
    default: return exec_fn_err(c, EXEC_ERROR, "unknown format function id %d", id);
  }
}
