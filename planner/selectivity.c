/*
** planner/selectivity.c: default selectivities of filter terms (planner/selectivity.h), for
** EXPLAIN's "rows after filter" figure. Fixed defaults per predicate shape: Rowan keeps no
** column statistics. Not here: the rows the key ranges hold (planner/select.c).
*/
#include "planner/selectivity.h"
#include "sql/ast.h"

static double clamp01(double s) { return s < 0 ? 0 : s > 1 ? 1 : s; }

double plan_selectivity(const plan_expr *e) {
  if (!e) return 1.0;
  double s;
  switch (e->kind) {
    case PX_BINARY:
      switch (e->op) {
        case SQL_OP_AND: return plan_selectivity(e->args[0]) * plan_selectivity(e->args[1]);
        case SQL_OP_OR: {
          double a = plan_selectivity(e->args[0]), b = plan_selectivity(e->args[1]);
          return clamp01(a + b - a * b);
        }
        case SQL_OP_EQ: return PLAN_SEL_EQ;
        case SQL_OP_NE: return 1.0 - PLAN_SEL_EQ;
        case SQL_OP_LT: case SQL_OP_LE: case SQL_OP_GT: case SQL_OP_GE: return PLAN_SEL_INEQ;
        default: return PLAN_SEL_OTHER;
      }
    case PX_UNARY:
      if (e->op == SQL_OP_NOT) return 1.0 - plan_selectivity(e->args[0]);
      return PLAN_SEL_OTHER;
    case PX_IN: s = clamp01((double)(e->n_args ? e->n_args - 1 : 0) * PLAN_SEL_EQ); break;
    case PX_BETWEEN: s = PLAN_SEL_RANGE; break;
    case PX_LIKE: s = PLAN_SEL_MATCH; break;
    case PX_ISNULL: s = PLAN_SEL_EQ; break;
    case PX_CONST:
      if (e->value.is_null) return 0.0;
      if (e->value.type.id == CAT_T_BOOLEAN) return e->value.u.b ? 1.0 : 0.0;
      return PLAN_SEL_OTHER;
    default: return PLAN_SEL_OTHER;
  }
  return e->negated ? 1.0 - s : s;
}
