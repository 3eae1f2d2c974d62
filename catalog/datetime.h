/*
** catalog/datetime.h: rounding of timestamps by calendar unit, shared by the executor
** (exec/func_date.c: ROUND/FLOOR/CEIL/TRUNC(ts, unit[, multiplier])) and the planner
** (planner/keyrange_func.c: such a call on a key column compared with a constant becomes
** a key range). A timestamp here is microseconds since 1970-01-01 00:00:00 without time
** zone (catalog/types.h); a DATE is its day times CAT_US_PER_DAY. Units are MILLISECOND ..
** YEAR; WEEK periods start on Mondays (1970-01-05 is the origin), MONTH and YEAR periods of
** `mult` units are counted from year 0 (proleptic Gregorian). Not here: range checks
** against CAT_TS_MIN/MAX (callers check results), unit names in messages, SQL values.
*/
#ifndef ROWAN_CAT_DATETIME_H
#define ROWAN_CAT_DATETIME_H

#include <stddef.h>
#include <stdint.h>

enum cat_dt_unit { CAT_DT_MS = 1, CAT_DT_SEC, CAT_DT_MIN, CAT_DT_HOUR, CAT_DT_DAY,
                   CAT_DT_WEEK, CAT_DT_MONTH, CAT_DT_YEAR };

/* How a value is rounded to its unit's period boundaries. */
enum cat_dt_round { CAT_DT_FLOOR = 1, /* FLOOR and TRUNC: the boundary at or before */
                    CAT_DT_CEIL,      /* the boundary at or after */
                    CAT_DT_NEAREST }; /* ROUND: the nearer boundary, half rounds up */

/* The unit named by name[0..n) (ASCII, any case): true with *unit and *len (its fixed length
** in microseconds, 0 for MONTH and YEAR), false for an unknown name. */
_Bool cat_dt_unit_find(const uint8_t *name, size_t n, int *unit, int64_t *len);

/* a divided by b (b > 0) rounded toward minus infinity. */
int64_t cat_dt_floor_div(int64_t a, int64_t b);

/* us rounded as how (enum cat_dt_round) asks to periods of mult (>= 1) units `unit` of
** fixed length len (0: MONTH or YEAR). The caller keeps mult small enough that the
** period boundaries near us fit in int64 (exec allows 1..1000000). */
int64_t cat_dt_round(int how, int unit, int64_t len, int64_t mult, int64_t us);

/* The first period boundary strictly after the boundary b. */
int64_t cat_dt_next(int unit, int64_t len, int64_t mult, int64_t b);

#endif /* ROWAN_CAT_DATETIME_H */
