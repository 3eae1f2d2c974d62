/*
** planner/keyrange_func.h: the interval of a key column that ROUND/FLOOR/CEIL/TRUNC(col,
** unit[, multiplier]) compared with a constant selects (planner/keyrange_func.c), for
** planner/keyrange.c to turn into key ranges. Not here: key encodings, sets, boxes.
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
** NULL or bad unit, multiplier or constant, a constant of another type, a DATE column with
** a unit shorter than a day, a multiplier too large to compute with safely). */
int plan_kr_round_bounds(int func_id, int col_type, const cat_value *unit, const cat_value *mult,
                         int op, const cat_value *v, plan_kr_round_iv *iv);

#endif /* ROWAN_PLANNER_KEYRANGE_FUNC_H */
