/*
** planner/keyrange_func.h: functions of key columns that planner/keyrange.c turns into key
** ranges (planner/keyrange_func.c): the interval of a key column that ROUND/FLOOR/CEIL/
** TRUNC(col, unit[, multiplier]) compared with a constant selects, and the casts of a key
** column that compare as the column itself. Not here: key encodings, sets, boxes.
*/
#ifndef ROWAN_PLANNER_KEYRANGE_FUNC_H
#define ROWAN_PLANNER_KEYRANGE_FUNC_H

#include <stdbool.h>

#include "catalog/types.h"

/* What plan_kr_round_bounds found. */
typedef struct plan_kr_round_iv {
  bool has_lo, has_hi; /* false: unbounded on that side (past the type's range) */
  cat_value lo, hi;    /* col >= lo and col < hi, values of the column's type */
} plan_kr_round_iv;

/* For func_id(col, unit[, mult]) op v (func_id EXEC_F_ROUND/FLOOR/CEIL/TRUNC, col of type
** col_type DATE or TIMESTAMP, unit NULL for the default DAY, mult NULL for 1, op
** SQL_OP_EQ/LT/LE/GT/GE): 1 with *iv the exact set of non-NULL col values for which it is
** true, 2 when no value makes it true, 0 when this cannot say (another function or type, a
** NULL or bad unit, multiplier or constant, a constant neither DATE nor TIMESTAMP (either is
** taken for either column type, as an instant: a DATE at its midnight), a DATE column with
** a unit shorter than a day, a multiplier too large to compute with safely). */
int plan_kr_round_bounds(int func_id, int col_type, const cat_value *unit, const cat_value *mult,
                         int op, const cat_value *v, plan_kr_round_iv *iv);

/* Whether CAST(k AS *to) of a key column k of type *from holds every value of k exactly and
** in order (integers to a wider integer, to DECIMAL(p,s) with p - s digits enough, to DOUBLE
** from INTEGER or smaller, FLOAT or DOUBLE, to FLOAT from SMALLINT or smaller; DECIMAL to a
** DECIMAL with room). Then CAST(k AS t) op v is k op v, except that a FLOAT/DOUBLE t makes
** the comparison one of doubles (catalog/value.h): *dbl is then set, and v must first go
** through plan_kr_cast_value. Not BIGINT to DOUBLE (rounds), nor narrowing casts (fail). */
bool plan_kr_cast_exact(const cat_type *from, const cat_type *to, bool *dbl);

/* v as the cast side compares it: a number converted to DOUBLE when dbl (NULL stays
** NULL). False when it cannot be (not a number). */
bool plan_kr_cast_value(bool dbl, cat_value *v);

#endif /* ROWAN_PLANNER_KEYRANGE_FUNC_H */
