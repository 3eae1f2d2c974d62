/*
** catalog/datetime.c: rounding of timestamps by calendar unit (catalog/datetime.h): the
** unit table, period starts for fixed-length units (WEEK from a Monday origin) and for
** MONTH/YEAR periods of several units, and ROUND/FLOOR/CEIL of a microsecond count. Not
** here: SQL values, errors and range checks (exec/func_date.c), key ranges
** (planner/keyrange_func.c).
*/
#include "catalog/datetime.h"

#include <ctype.h>
#include <stdbool.h>

#include "catalog/types.h"
#include "catalog/value.h"

static const struct {
  const char *name; /* unit name (upper case) */
  size_t len;       /* its length */
  int unit;         /* CAT_DT_* */
  int64_t us;       /* fixed length in microseconds, 0 for MONTH/YEAR */
} units[] = {
    {"MILLISECOND", 11, CAT_DT_MS, 1000},     {"SECOND", 6, CAT_DT_SEC, 1000000},
    {"MINUTE", 6, CAT_DT_MIN, 60000000LL},    {"HOUR", 4, CAT_DT_HOUR, 3600000000LL},
    {"DAY", 3, CAT_DT_DAY, CAT_US_PER_DAY},   {"WEEK", 4, CAT_DT_WEEK, 7 * CAT_US_PER_DAY},
    {"MONTH", 5, CAT_DT_MONTH, 0},            {"YEAR", 4, CAT_DT_YEAR, 0},
};

/* The length first, then the letters (this runs once per row of a query like GROUP BY
** TRUNC(TS, 'DAY') when the unit is not a constant). */
bool cat_dt_unit_find(const uint8_t *p, size_t n, int *unit, int64_t *len) {
  for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
    if (units[i].len != n) continue;
    size_t k = 0;
    while (k < n && toupper(p[k]) == units[i].name[k]) k++;
    if (k == n) {
      *unit = units[i].unit;
      *len = units[i].us;
      return true;
    }
  }
  return false;
}

int64_t cat_dt_floor_div(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) q--;
  return q;
}

static void ym_of(int64_t us, int64_t *y, int *m) {
  int d;
  cat_civil_from_days(cat_dt_floor_div(us, CAT_US_PER_DAY), y, m, &d);
}

static int64_t month_start(int64_t months) { /* months since year 0 */
  int64_t y = cat_dt_floor_div(months, 12);
  return cat_days_from_civil(y, (int)(months - y * 12) + 1, 1) * CAT_US_PER_DAY;
}

/* Start of the month/year period of `mult` units holding us. */
static int64_t period_floor(int64_t us, int unit, int64_t mult) {
  int64_t y;
  int m;
  ym_of(us, &y, &m);
  if (unit == CAT_DT_MONTH) return month_start(cat_dt_floor_div(y * 12 + (m - 1), mult) * mult);
  return cat_days_from_civil(cat_dt_floor_div(y, mult) * mult, 1, 1) * CAT_US_PER_DAY;
}

static int64_t period_next(int64_t start, int unit, int64_t mult) {
  int64_t y;
  int m;
  ym_of(start, &y, &m);
  if (unit == CAT_DT_MONTH) return month_start(y * 12 + (m - 1) + mult);
  return cat_days_from_civil(y + mult, 1, 1) * CAT_US_PER_DAY;
}

static int64_t fixed_floor(int unit, int64_t len, int64_t mult, int64_t us) {
  int64_t step = len * mult;
  int64_t origin = unit == CAT_DT_WEEK ? 4 * CAT_US_PER_DAY : 0; /* 1970-01-05 was a Monday */
  return cat_dt_floor_div(us - origin, step) * step + origin;
}

int64_t cat_dt_next(int unit, int64_t len, int64_t mult, int64_t b) {
  return len ? b + len * mult : period_next(b, unit, mult);
}

int64_t cat_dt_round(int how, int unit, int64_t len, int64_t mult, int64_t us) {
  int64_t lo = len ? fixed_floor(unit, len, mult, us) : period_floor(us, unit, mult);
  int64_t hi = lo == us ? us : cat_dt_next(unit, len, mult, lo);
  switch (how) {
    case CAT_DT_FLOOR: return lo;
    case CAT_DT_CEIL: return hi;
    default: return (us - lo) >= (hi - us) ? hi : lo; /* half rounds up */
  }
}
