/*
** exec/func_tz.c: the time zone functions of exec/func.h, as Phoenix defines them
** (https://phoenix.apache.org/language/functions.html; docs/FUNCTIONS.md "Time zones"):
**
**   CONVERT_TZ(t, from, to): TIMESTAMP. t (a DATE is its midnight) moved from zone `from` to
**     zone `to`: t - offset(from) + offset(to), both offsets those in force at the instant t
**     read as UTC. That is Phoenix's formula (ConvertTimezoneFunction); within a few hours of
**     a daylight-saving change it can differ by that change from MySQL's CONVERT_TZ, which
**     reads t as local time in `from` first.
**   TIMEZONE_OFFSET(zone, t): INTEGER, the offset of `zone` from UTC in minutes (east
**     positive, truncated toward zero as Java's int division) at the instant t read as UTC.
**
** An unknown zone is an error naming it (Phoenix: "Invalid timezone"). Zones come from
** exec/tz.h (the system's tz database, read by Rowan, cached).
** Not here: the zone argument of TO_TIMESTAMP, TO_DATE and TO_TIME (exec/func_fmt.c).
*/
#include "exec/func_int.h"
#include "exec/tz.h"

int exec_fn_zone(const cat_value *v, const exec_tz **tz, exec_func_ctx *c, const char *fname) {
  if (!cat_type_is_string(v->type.id))
    return exec_fn_err(c, EXEC_ERROR, "%s: the time zone must be text, got %s", fname,
                       cat_type_name(v->type.id));
  char m[400];
  if (exec_tz_find((const char *)v->u.s.p, v->u.s.len, tz, m, sizeof m) != 0)
    return exec_fn_err(c, EXEC_ERROR, "%s: %s", fname, m);
  return EXEC_OK;
}

/* A DATE or TIMESTAMP argument in microseconds. */
static int instant(const cat_value *v, int64_t *us, exec_func_ctx *c, const char *fname) {
  if (v->type.id == CAT_T_DATE) *us = v->u.i * CAT_US_PER_DAY;
  else if (v->type.id == CAT_T_TIMESTAMP) *us = v->u.i;
  else
    return exec_fn_err(c, EXEC_ERROR, "%s takes a DATE or TIMESTAMP, got %s", fname,
                       cat_type_name(v->type.id));
  return EXEC_OK;
}

static int64_t seconds(int64_t us) { return us / 1000000 - (us % 1000000 < 0); }

int exec_fn_tz(int id, const cat_value *a, int n, cat_value *out, exec_func_ctx *c) {
  const char *f = cat_func_name(id);
  (void)n;
  int64_t us = 0;
  const exec_tz *from = NULL, *to = NULL;
  int rc;
  switch (id) {
    case EXEC_F_CONVERT_TZ: {
      if ((rc = instant(&a[0], &us, c, f)) || (rc = exec_fn_zone(&a[1], &from, c, f)) ||
          (rc = exec_fn_zone(&a[2], &to, c, f)))
        return rc;
      int64_t s = seconds(us);
      int64_t r = us + ((int64_t)exec_tz_offset(to, s) - exec_tz_offset(from, s)) * 1000000;
      if (r < CAT_TS_MIN || r > CAT_TS_MAX)
        return exec_fn_err(c, EXEC_CONSTRAINT, "CONVERT_TZ: the result is out of range");
      *out = cat_v_int(CAT_T_TIMESTAMP, r);
      return EXEC_OK;
    }
    case EXEC_F_TIMEZONE_OFFSET:
      if ((rc = exec_fn_zone(&a[0], &from, c, f)) || (rc = instant(&a[1], &us, c, f))) return rc;
      *out = cat_v_int(CAT_T_INTEGER, exec_tz_offset(from, seconds(us)) / 60);
      return EXEC_OK;
    default:
      return exec_fn_err(c, EXEC_ERROR, "unknown time zone function id %d", id);
  }
}
