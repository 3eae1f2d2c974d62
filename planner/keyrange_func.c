/*
** planner/keyrange_func.c: the interval of a DATE or TIMESTAMP key column selected by
** ROUND/FLOOR/CEIL/TRUNC(col, unit[, multiplier]) op constant (planner/keyrange_func.h).
**
** Each of these functions f never decreases as col grows and its values are the unit's
** period boundaries (catalog/datetime.h). So {col : f(col) >= C} is col >= start(b) with b
** the first boundary at or after C, and start(b) the least col that f maps to b or later:
** b itself for FLOOR/TRUNC, one microsecond past the previous boundary p for CEIL, and the
** midpoint of [p, b) rounded up for ROUND (half rounds up, as exec does). f(col) > C is
** f(col) >= the first boundary after C; < and <= are the complements; = C is empty when C
** is not a boundary, else [start(C), start(next boundary)). A DATE column is its day's
** midnight; its bounds are rounded up to whole days. The constant is a DATE or a TIMESTAMP
** whatever the column's type: both are instants (a DATE at its midnight). Also which casts
** of a key column keep its values exactly and in order. Not here: key encoding and sets (planner/keyrange.c),
** evaluation (exec/func_date.c).
*/
#include "planner/keyrange_func.h"

#include "catalog/datetime.h"
#include "catalog/func_id.h"
#include "catalog/value.h"
#include "sql/ast.h"

/* The least us that f (how) maps to boundary b or later. */
static int64_t start_of(int how, int unit, int64_t len, int64_t mult, int64_t b) {
  if (how == CAT_DT_FLOOR) return b;
  int64_t p = cat_dt_round(CAT_DT_FLOOR, unit, len, mult, b - 1); /* previous boundary */
  if (how == CAT_DT_CEIL) return p + 1;
  return p + (b - p + 1) / 2;
}

/* The first boundary after C. */
static int64_t after(int unit, int64_t len, int64_t mult, int64_t c) {
  return cat_dt_next(unit, len, mult, cat_dt_round(CAT_DT_FLOOR, unit, len, mult, c));
}

static cat_value bound(int col_type, int64_t us) {
  if (col_type == CAT_T_DATE) /* the first day whose midnight is at or after us */
    return cat_v_int(CAT_T_DATE, -cat_dt_floor_div(-us, CAT_US_PER_DAY));
  return cat_v_int(CAT_T_TIMESTAMP, us);
}

int plan_kr_round_bounds(int func_id, int col_type, const cat_value *unit, const cat_value *mult,
                         int op, const cat_value *v, plan_kr_round_iv *iv) {
  int how = func_id == EXEC_F_FLOOR || func_id == EXEC_F_TRUNC ? CAT_DT_FLOOR
            : func_id == EXEC_F_CEIL                           ? CAT_DT_CEIL
            : func_id == EXEC_F_ROUND                          ? CAT_DT_NEAREST
                                                               : 0;
  if (!how || (col_type != CAT_T_DATE && col_type != CAT_T_TIMESTAMP)) return 0;
  int u = CAT_DT_DAY;
  int64_t len = CAT_US_PER_DAY, m = 1;
  if (unit) {
    if (unit->is_null || !cat_type_is_string(unit->type.id) ||
        !cat_dt_unit_find(unit->u.s.p, unit->u.s.len, &u, &len))
      return 0;
  }
  if (mult) {
    if (mult->is_null || !cat_type_is_integer(mult->type.id)) return 0;
    m = mult->u.i;
  }
  /* the multipliers exec accepts, and periods whose boundaries stay far inside int64 */
  if (m < 1 || m > 1000000 || (u == CAT_DT_MONTH && m > 12000) || (u == CAT_DT_YEAR && m > 1000))
    return 0;
  if (col_type == CAT_T_DATE && len && len % CAT_US_PER_DAY) return 0;
  /* a DATE constant is its day's midnight, compared with a TIMESTAMP rounding as an instant
     (as exec compares them); so is a DATE rounding with a TIMESTAMP constant */
  if (v->is_null || (v->type.id != CAT_T_DATE && v->type.id != CAT_T_TIMESTAMP)) return 0;
  int64_t c = v->type.id == CAT_T_DATE ? v->u.i * CAT_US_PER_DAY : v->u.i;
  if (c < CAT_TS_MIN || c > CAT_TS_MAX) return 0;
  int64_t b = cat_dt_round(CAT_DT_CEIL, u, len, m, c); /* first boundary >= c */
  int64_t lo = INT64_MIN, hi = INT64_MAX;             /* col in [lo, hi) */
  switch (op) {
    case SQL_OP_GE: lo = start_of(how, u, len, m, b); break;
    case SQL_OP_LT: hi = start_of(how, u, len, m, b); break;
    case SQL_OP_GT: lo = start_of(how, u, len, m, after(u, len, m, c)); break;
    case SQL_OP_LE: hi = start_of(how, u, len, m, after(u, len, m, c)); break;
    case SQL_OP_EQ:
      if (b != c) return 2;
      lo = start_of(how, u, len, m, c);
      hi = start_of(how, u, len, m, after(u, len, m, c));
      break;
    default: return 0;
  }
  if (lo > CAT_TS_MAX || hi <= CAT_TS_MIN || lo >= hi) return 2;
  iv->has_lo = lo > CAT_TS_MIN;
  iv->has_hi = hi <= CAT_TS_MAX;
  if (iv->has_lo) iv->lo = bound(col_type, lo);
  if (iv->has_hi) iv->hi = bound(col_type, hi);
  if (iv->has_lo && iv->has_hi && iv->lo.u.i >= iv->hi.u.i) return 2;
  return 1;
}

/* Digits before the point an integer type's values need (0: not an integer type). */
static int int_digits(int id) {
  switch (id) {
    case CAT_T_TINYINT: return 3;
    case CAT_T_SMALLINT: return 5;
    case CAT_T_INTEGER: return 10;
    case CAT_T_BIGINT: return 19;
    default: return 0;
  }
}

bool plan_kr_cast_exact(const cat_type *from, const cat_type *to, bool *dbl) {
  *dbl = false;
  int df = int_digits(from->id), dt = int_digits(to->id);
  if (df && dt) return dt >= df;
  if (df && to->id == CAT_T_DECIMAL) return to->precision == 0 || to->precision - to->scale >= df;
  if (from->id == CAT_T_DECIMAL && to->id == CAT_T_DECIMAL && from->precision && to->precision)
    return to->scale >= from->scale && to->precision - to->scale >= from->precision - from->scale;
  bool exact_dbl = (df && df <= 10) || from->id == CAT_T_FLOAT || from->id == CAT_T_DOUBLE;
  if ((to->id == CAT_T_DOUBLE && exact_dbl) || (to->id == CAT_T_FLOAT && df && df <= 5)) {
    *dbl = true;
    return true;
  }
  return false;
}

bool plan_kr_cast_value(bool dbl, cat_value *v) {
  if (!dbl || v->is_null) return true;
  if (!cat_type_is_numeric(v->type.id)) return false;
  cat_type d = cat_type_of(CAT_T_DOUBLE);
  cat_value out;
  uint8_t buf[64];
  cat_error err;
  if (cat_value_cast(v, &d, &out, buf, sizeof buf, &err)) return false;
  *v = out;
  return true;
}
