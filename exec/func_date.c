/*
** exec/func_date.c: the date and time functions of exec/func.h: DATE/TIMESTAMP +/- days and
** differences, ROUND/FLOOR/CEIL/TRUNC of a DATE or TIMESTAMP by unit (MILLISECOND, SECOND,
** MINUTE, HOUR, DAY, WEEK (Monday-based), MONTH, YEAR, with an optional multiplier as
** Phoenix has: ROUND(ts, 'MINUTE', 15)), MAKE_TIMESTAMP, NOW and CURRENT_DATE (the caller's
** statement time), and the field extractors YEAR .. SECOND, DAYOFWEEK, DAYOFYEAR, WEEK (ISO
** 8601) and QUARTER. All
** values are without time zone (catalog/types.h): a TIMESTAMP is microseconds since
** 1970-01-01 00:00:00, a DATE days. The rounding also comes with its unit resolved once
** (exec_fn_date_round_prepare / exec_fn_date_round, for GROUP BY TRUNC(TS, 'DAY') row by
** row); the rounding arithmetic itself is catalog/datetime.c's. Not here: parsing and
** formatting with patterns
** (exec/func_fmt.c).
*/
#include "exec/func_int.h"

#include "catalog/datetime.h"


static int64_t floor_div(int64_t a, int64_t b) { return cat_dt_floor_div(a, b); }

void exec_fn_tm_from_us(int64_t us, exec_fn_tm *tm) {
  int64_t days = floor_div(us, CAT_US_PER_DAY);
  int64_t rem = us - days * CAT_US_PER_DAY;
  cat_civil_from_days(days, &tm->year, &tm->month, &tm->day);
  tm->hour = (int)(rem / 3600000000LL);
  tm->minute = (int)(rem / 60000000LL % 60);
  tm->second = (int)(rem / 1000000 % 60);
  tm->micros = (int)(rem % 1000000);
}

static int days_in_month(int64_t y, int m) {
  static const int dm[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  if (m == 2 && ((y % 4 == 0 && y % 100 != 0) || y % 400 == 0)) return 29;
  return dm[m - 1];
}

int exec_fn_tm_to_us(const exec_fn_tm *tm, int64_t *us, exec_func_ctx *c, const char *fname) {
  if (tm->year < 1 || tm->year > 9999)
    return exec_fn_err(c, EXEC_CONSTRAINT, "%s: year %lld out of range", fname,
                       (long long)tm->year);
  if (tm->month < 1 || tm->month > 12)
    return exec_fn_err(c, EXEC_CONSTRAINT, "%s: month %d out of range", fname, tm->month);
  if (tm->day < 1 || tm->day > days_in_month(tm->year, tm->month))
    return exec_fn_err(c, EXEC_CONSTRAINT, "%s: day %d out of range for %04lld-%02d", fname,
                       tm->day, (long long)tm->year, tm->month);
  if (tm->hour < 0 || tm->hour > 23)
    return exec_fn_err(c, EXEC_CONSTRAINT, "%s: hour %d out of range", fname, tm->hour);
  if (tm->minute < 0 || tm->minute > 59)
    return exec_fn_err(c, EXEC_CONSTRAINT, "%s: minute %d out of range", fname, tm->minute);
  if (tm->second < 0 || tm->second > 59)
    return exec_fn_err(c, EXEC_CONSTRAINT, "%s: second %d out of range", fname, tm->second);
  if (tm->micros < 0 || tm->micros > 999999)
    return exec_fn_err(c, EXEC_CONSTRAINT, "%s: fraction out of range", fname);
  int64_t d = cat_days_from_civil(tm->year, tm->month, tm->day);
  *us = d * CAT_US_PER_DAY + tm->hour * 3600000000LL + tm->minute * 60000000LL +
        tm->second * 1000000LL + tm->micros;
  return EXEC_OK;
}

static int64_t to_us(const cat_value *v) {
  return v->type.id == CAT_T_DATE ? v->u.i * CAT_US_PER_DAY : v->u.i;
}

static int ts_value(int64_t us, bool as_date, cat_value *out, exec_func_ctx *c,
                    const char *fname) {
  if (us < CAT_TS_MIN || us > CAT_TS_MAX)
    return exec_fn_err(c, EXEC_CONSTRAINT, "%s: result out of range for %s", fname,
                       as_date ? "DATE" : "TIMESTAMP");
  if (as_date) *out = cat_v_int(CAT_T_DATE, floor_div(us, CAT_US_PER_DAY));
  else *out = cat_v_int(CAT_T_TIMESTAMP, us);
  return EXEC_OK;
}

/* ---- Arithmetic ------------------------------------------------------------------------ */
static int date_arith(int id, const cat_value *a, const cat_value *b, cat_value *out,
                      exec_func_ctx *c) {
  const char *f = cat_func_name(id);
  bool da = a->type.id == CAT_T_DATE || a->type.id == CAT_T_TIMESTAMP;
  bool db = b->type.id == CAT_T_DATE || b->type.id == CAT_T_TIMESTAMP;
  if (da && db) {
    if (id != EXEC_F_SUB) return exec_fn_err(c, EXEC_ERROR, "cannot add two dates");
    if (a->type.id == CAT_T_DATE && b->type.id == CAT_T_DATE) {
      *out = cat_v_int(CAT_T_BIGINT, a->u.i - b->u.i);
      return EXEC_OK;
    }
    cat_dec diff = {(cat_i128)to_us(a) - to_us(b), 0}, r;
    cat_error e;
    int rc = cat_dec_div(diff, cat_dec_from_i64(CAT_US_PER_DAY), &r, &e);
    if (rc) return exec_fn_cat_err(c, rc, &e);
    r = cat_dec_normalize(r);
    *out = cat_v_dec(r, 0, (uint8_t)r.scale);
    return EXEC_OK;
  }
  const cat_value *d = da ? a : b, *n = da ? b : a;
  if (!da && id == EXEC_F_SUB)
    return exec_fn_err(c, EXEC_ERROR, "cannot subtract a %s from a number",
                       cat_type_name(d->type.id));
  if (!cat_type_is_numeric(n->type.id))
    return exec_fn_err(c, EXEC_ERROR, "operator %s does not accept %s and %s", f,
                       cat_type_name(d->type.id), cat_type_name(n->type.id));
  bool neg = id == EXEC_F_SUB;
  if (cat_type_is_integer(n->type.id)) {
    int64_t k = n->u.i;
    if (neg) {
      if (k == INT64_MIN) return exec_fn_err(c, EXEC_CONSTRAINT, "%s: day count out of range", f);
      k = -k;
    }
    if (d->type.id == CAT_T_DATE) {
      if (k > CAT_DATE_MAX - CAT_DATE_MIN || k < CAT_DATE_MIN - CAT_DATE_MAX ||
          d->u.i + k < CAT_DATE_MIN || d->u.i + k > CAT_DATE_MAX)
        return exec_fn_err(c, EXEC_CONSTRAINT, "DATE out of range in date %s %lld days", f,
                           (long long)n->u.i);
      *out = cat_v_int(CAT_T_DATE, d->u.i + k);
      return EXEC_OK;
    }
    int64_t delta, r;
    if (__builtin_mul_overflow(k, CAT_US_PER_DAY, &delta) ||
        __builtin_add_overflow(d->u.i, delta, &r) || r < CAT_TS_MIN || r > CAT_TS_MAX)
      return exec_fn_err(c, EXEC_CONSTRAINT, "TIMESTAMP out of range in timestamp %s %lld days",
                         f, (long long)n->u.i);
    *out = cat_v_int(CAT_T_TIMESTAMP, r);
    return EXEC_OK;
  }
  /* fractional days: exact microseconds, rounded half away from zero */
  cat_dec k, us;
  cat_error e;
  int rc = exec_fn_dec(n, &k, c, f);
  if (rc) return rc;
  if (neg) k.v = -k.v;
  if (cat_dec_mul(k, cat_dec_from_i64(CAT_US_PER_DAY), &us, &e) ||
      cat_dec_rescale(us, 0, &us, &e) || us.v > INT64_MAX / 2 || us.v < INT64_MIN / 2)
    return exec_fn_err(c, EXEC_CONSTRAINT, "TIMESTAMP out of range in %s of days", f);
  return ts_value(to_us(d) + (int64_t)us.v, false, out, c, f);
}

/* ---- Rounding by unit (the arithmetic is catalog/datetime.c's, shared with the planner) - */
/* The unit named by v, matched without regard to case. */
static int find_unit(const cat_value *v, int *unit, int64_t *len, exec_func_ctx *c,
                     const char *f) {
  if (!cat_type_is_string(v->type.id))
    return exec_fn_err(c, EXEC_ERROR, "%s: the unit must be text, got %s", f,
                       cat_type_name(v->type.id));
  size_t n = v->u.s.len;
  if (cat_dt_unit_find(v->u.s.p, n, unit, len)) return EXEC_OK;
  return exec_fn_err(c, EXEC_ERROR,
                     "%s: unknown unit '%.*s' (MILLISECOND, SECOND, MINUTE, HOUR, DAY, WEEK, "
                     "MONTH, YEAR)", f, (int)(n > 40 ? 40 : n), (const char *)v->u.s.p);
}

/* us rounded as id (FLOOR/TRUNC, CEIL, else ROUND) asks, by mult units of length len (0:
** MONTH or YEAR). */
static int64_t round_us(int id, int unit, int64_t len, int64_t mult, int64_t us) {
  int how = id == EXEC_F_FLOOR || id == EXEC_F_TRUNC ? CAT_DT_FLOOR
            : id == EXEC_F_CEIL                      ? CAT_DT_CEIL
                                                     : CAT_DT_NEAREST;
  return cat_dt_round(how, unit, len, mult, us);
}

/* The unit and multiplier of a[1..n) (the defaults DAY and 1 when absent). */
static int unit_args(const char *f, const cat_value *a, int n, int *unit, int64_t *len,
                     int64_t *mult, exec_func_ctx *c) {
  *unit = CAT_DT_DAY;
  *len = CAT_US_PER_DAY;
  *mult = 1;
  int rc = EXEC_OK;
  if (n >= 2) rc = find_unit(&a[1], unit, len, c, f);
  if (!rc && n >= 3) rc = exec_fn_i64(&a[2], mult, c, f);
  if (rc) return rc;
  if (*mult < 1 || *mult > 1000000)
    return exec_fn_err(c, EXEC_ERROR, "%s: multiplier %lld out of range (1..1000000)", f,
                       (long long)*mult);
  return EXEC_OK;
}

static int round_unit(int id, const cat_value *a, int n, cat_value *out, exec_func_ctx *c) {
  const char *f = cat_func_name(id);
  int unit;
  int64_t len, mult;
  int rc = unit_args(f, a, n, &unit, &len, &mult, c);
  if (rc) return rc;
  return ts_value(round_us(id, unit, len, mult, to_us(&a[0])), a[0].type.id == CAT_T_DATE, out,
                  c, f);
}

bool exec_fn_date_round_prepare(int func_id, int arg_type, const cat_value *a, int n,
                                const cat_type *rt, exec_date_round *r) {
  if (func_id != EXEC_F_ROUND && func_id != EXEC_F_FLOOR && func_id != EXEC_F_CEIL &&
      func_id != EXEC_F_TRUNC)
    return false;
  if ((arg_type != CAT_T_DATE && arg_type != CAT_T_TIMESTAMP) || n < 1 || n > 3 || !rt ||
      rt->id != arg_type)
    return false;
  for (int i = 1; i < n; i++)
    if (a[i].is_null) return false; /* a NULL unit or multiplier: every result NULL */
  exec_func_ctx quiet = {NULL, 0, NULL, 0};
  if (unit_args(cat_func_name(func_id), a, n, &r->unit, &r->len, &r->mult, &quiet))
    return false; /* the call's own error, row by row */
  r->id = func_id;
  r->rt = *rt;
  return true;
}

int exec_fn_date_round(const exec_date_round *r, const cat_value *v, cat_value *out,
                       exec_func_ctx *c) {
  if (v->is_null) {
    *out = cat_v_null(r->rt);
    return EXEC_OK;
  }
  bool as_date = v->type.id == CAT_T_DATE;
  int64_t us = round_us(r->id, r->unit, r->len, r->mult, to_us(v));
  if (us < CAT_TS_MIN || us > CAT_TS_MAX) /* the error */
    return ts_value(us, as_date, out, c, cat_func_name(r->id));
  /* the fields one by one: a whole value built and copied here stalled the store buffer
     (about a tenth of a GROUP BY TRUNC(TS, 'DAY') query's time) */
  out->type = r->rt;
  out->is_null = false;
  out->u.i = as_date ? floor_div(us, CAT_US_PER_DAY) : us;
  return EXEC_OK;
}

bool exec_fn_date_round_span(const exec_date_round *r, int64_t g, int64_t *lo, int64_t *hi) {
  if (r->rt.id != CAT_T_TIMESTAMP || g < CAT_TS_MIN || g > CAT_TS_MAX) return false;
  if (round_us(r->id, r->unit, r->len, r->mult, g) != g)
    return false; /* g is not a boundary: not a result of this rounding */
  /* the boundaries around g (a result is a boundary; they stay inside int64: exec keeps the
     multiplier small, catalog/datetime.h) */
  int64_t prev = cat_dt_round(CAT_DT_FLOOR, r->unit, r->len, r->mult, g - 1);
  int64_t next = cat_dt_next(r->unit, r->len, r->mult, g);
  if (r->id == EXEC_F_FLOOR || r->id == EXEC_F_TRUNC) {
    *lo = g;
    *hi = next - 1;
  } else if (r->id == EXEC_F_CEIL) {
    *lo = prev + 1;
    *hi = g;
  } else { /* ROUND: half rounds up, so the midpoints belong to the later boundary */
    *lo = prev + (g - prev + 1) / 2;
    *hi = g + (next - g + 1) / 2 - 1;
  }
  if (*lo < CAT_TS_MIN) *lo = CAT_TS_MIN;
  if (*hi > CAT_TS_MAX) *hi = CAT_TS_MAX;
  /* both ends checked by the rounding itself; it is monotone, so every value between gives g */
  return *lo <= *hi && round_us(r->id, r->unit, r->len, r->mult, *lo) == g &&
         round_us(r->id, r->unit, r->len, r->mult, *hi) == g;
}

/* ---- Fields and constructors -------------------------------------------------------------- */
static int field(int id, const cat_value *a, cat_value *out, exec_func_ctx *c) {
  int tid = a->type.id;
  int64_t r;
  if (tid == CAT_T_TIME && (id == EXEC_F_HOUR || id == EXEC_F_MINUTE || id == EXEC_F_SECOND)) {
    int64_t t = a->u.i;
    r = id == EXEC_F_HOUR ? t / 3600000000LL : id == EXEC_F_MINUTE ? t / 60000000LL % 60
                                                                    : t / 1000000 % 60;
    *out = cat_v_int(CAT_T_INTEGER, r);
    return EXEC_OK;
  }
  if (tid != CAT_T_DATE && tid != CAT_T_TIMESTAMP)
    return exec_fn_err(c, EXEC_ERROR, "function %s does not accept %s", cat_func_name(id),
                       cat_type_name(tid));
  exec_fn_tm tm;
  int64_t us = to_us(a);
  exec_fn_tm_from_us(us, &tm);
  int64_t days = floor_div(us, CAT_US_PER_DAY);
  switch (id) {
    case EXEC_F_YEAR: r = tm.year; break;
    case EXEC_F_MONTH: r = tm.month; break;
    case EXEC_F_DAYOFMONTH: r = tm.day; break;
    case EXEC_F_HOUR: r = tm.hour; break;
    case EXEC_F_MINUTE: r = tm.minute; break;
    case EXEC_F_SECOND: r = tm.second; break;
    case EXEC_F_DAYOFWEEK: r = ((days % 7) + 7 + 3) % 7 + 1; break;
    case EXEC_F_QUARTER: r = (tm.month - 1) / 3 + 1; break;
    case EXEC_F_WEEK: { /* ISO 8601: the week (Monday first) holding the year's 1st Thursday is 1 */
      int64_t thu = days - (((days % 7) + 7 + 3) % 7) + 3, ty;
      int tmo, tdd;
      cat_civil_from_days(thu, &ty, &tmo, &tdd);
      r = (thu - cat_days_from_civil(ty, 1, 1)) / 7 + 1;
      break;
    }
    default: r = days - cat_days_from_civil(tm.year, 1, 1) + 1; break; /* DAYOFYEAR */
  }
  *out = cat_v_int(CAT_T_INTEGER, r);
  return EXEC_OK;
}

static int make_ts(const cat_value *a, cat_value *out, exec_func_ctx *c) {
  const char *f = "MAKE_TIMESTAMP";
  int64_t v[5];
  for (int i = 0; i < 5; i++) {
    int rc = exec_fn_i64(&a[i], &v[i], c, f);
    if (rc) return rc;
    if (v[i] < -100000 || v[i] > 100000)
      return exec_fn_err(c, EXEC_CONSTRAINT, "%s: field %d value %lld out of range", f, i + 1,
                         (long long)v[i]);
  }
  cat_dec s;
  cat_error e;
  int rc = exec_fn_dec(&a[5], &s, c, f);
  if (rc) return rc;
  if (cat_dec_rescale(s, 6, &s, &e) || s.v < 0 || s.v >= 60000000) {
    char t[64];
    exec_fn_show(&a[5], t, sizeof t);
    return exec_fn_err(c, EXEC_CONSTRAINT, "%s: second %s out of range (0 to < 60)", f, t);
  }
  exec_fn_tm tm = {v[0], (int)v[1], (int)v[2], (int)v[3], (int)v[4], (int)(s.v / 1000000),
                   (int)(s.v % 1000000)};
  int64_t us;
  rc = exec_fn_tm_to_us(&tm, &us, c, f);
  if (rc) return rc;
  *out = cat_v_int(CAT_T_TIMESTAMP, us);
  return EXEC_OK;
}

int exec_fn_date(int id, const cat_value *a, int n, cat_value *out, exec_func_ctx *c) {
  switch (id) {
    case EXEC_F_ADD: case EXEC_F_SUB: return date_arith(id, &a[0], &a[1], out, c);
    case EXEC_F_ROUND: case EXEC_F_FLOOR: case EXEC_F_CEIL: case EXEC_F_TRUNC:
      return round_unit(id, a, n, out, c);
    case EXEC_F_MAKE_TIMESTAMP: return make_ts(a, out, c);
    case EXEC_F_NOW: return ts_value(c->now_us, false, out, c, "NOW");
    case EXEC_F_CURRENT_DATE: return ts_value(c->now_us, true, out, c, "CURRENT_DATE");
    case EXEC_F_YEAR: case EXEC_F_MONTH: case EXEC_F_DAYOFMONTH: case EXEC_F_HOUR:
    case EXEC_F_MINUTE: case EXEC_F_SECOND: case EXEC_F_DAYOFWEEK: case EXEC_F_DAYOFYEAR:
    case EXEC_F_WEEK: case EXEC_F_QUARTER:
      return field(id, &a[0], out, c);
    default: return exec_fn_err(c, EXEC_ERROR, "unknown date function id %d", id);
  }
}
