/*
** planner/selectivity.h: the share of the rows a scan examines that its filter is expected
** to pass, for EXPLAIN's "rows after filter" figure (docs/EXPLAIN.md "ESTIMATE").
**
** Rowan keeps no column statistics (no histograms, no distinct counts): a filter term's
** selectivity is a fixed default per predicate shape, PostgreSQL's defaults for a column
** without statistics (utils/selfuncs.h: DEFAULT_EQ_SEL 0.005, DEFAULT_INEQ_SEL 1/3,
** DEFAULT_RANGE_INEQ_SEL 0.005, DEFAULT_MATCH_SEL 0.005, DEFAULT_UNK_SEL 0.005 and
** DEFAULT_NOT_UNK_SEL 0.995), the kind of fixed guess SQLite makes without ANALYZE; Phoenix
** estimates no filter. Terms combine as independent: AND multiplies, OR is s1 + s2 - s1 s2,
** NOT is 1 - s.
** Not here: the rows the key ranges hold (kv_estimate_range, planner/select.c).
*/
#ifndef ROWAN_PLANNER_SELECTIVITY_H
#define ROWAN_PLANNER_SELECTIVITY_H

#include "planner/expr.h"

#define PLAN_SEL_EQ 0.005         /* x = c; IS NULL; each value of an IN list */
#define PLAN_SEL_INEQ (1.0 / 3.0) /* x < c, x <= c, x > c, x >= c */
#define PLAN_SEL_RANGE 0.005      /* x BETWEEN a AND b */
#define PLAN_SEL_MATCH 0.005      /* x LIKE 'pattern' */
#define PLAN_SEL_OTHER 0.5        /* any other predicate (a function, a boolean column) */

/* The selectivity of predicate e (NULL: 1.0, no filter), in [0, 1], from the defaults above:
** `=` PLAN_SEL_EQ, `<>` 1 - PLAN_SEL_EQ, `<` `<=` `>` `>=` PLAN_SEL_INEQ, BETWEEN
** PLAN_SEL_RANGE, LIKE PLAN_SEL_MATCH, IS NULL PLAN_SEL_EQ, IN of n values n * PLAN_SEL_EQ
** (at most 1); the negated forms 1 - s; AND, OR and NOT as independent events; anything else
** PLAN_SEL_OTHER. */
double plan_selectivity(const plan_expr *e);

#endif /* ROWAN_PLANNER_SELECTIVITY_H */
