/*
** exec/eval.h: evaluation of bound expressions (planner/expr.h) over one row of value slots,
** with SQL's NULL rules and three-valued logic (exec/eval.c), and the value comparison and
** hashing the operators share (exec/eval_value.c).
**
** A row is an array of cat_value slots: for a table scan, one slot per table column in
** catalog order; for an aggregate's output, the GROUP BY values then the aggregate values.
** String results are written into the context's scratch arena, which the caller resets
** between rows, so a result is valid until that reset.
**
** Not here: functions and aggregates themselves (exec/func.h), operators (exec/op.h).
*/
#ifndef ROWAN_EXEC_EVAL_H
#define ROWAN_EXEC_EVAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "catalog/types.h"
#include "exec/arena.h"
#include "planner/expr.h"
#include "planner/plan.h"

typedef struct exec_eval_ctx {
  const cat_value *row;     /* input row slots */
  const cat_value *params;  /* bound parameter values (PX_PARAM n reads params[n-1]) */
  int n_params;             /* number of parameters */
  int agg_base;             /* PX_AGG slot s reads row[agg_base + s] */
  exec_arena *scratch;      /* string results; reset by the caller between rows */
  int64_t now_us;           /* NOW() of the statement (microseconds since the epoch) */
  char *msg;                /* error message buffer */
  size_t cap;               /* its size */
} exec_eval_ctx;

/* Evaluate e into *out. Returns EXEC_OK, or EXEC_ERROR / EXEC_CONSTRAINT (overflow, bad
** cast, division by zero) with the message in c->msg, EXEC_NOMEM. */
int exec_eval(exec_eval_ctx *c, const plan_expr *e, cat_value *out);

/* Evaluate predicate e: *tv = 1 (TRUE), 0 (FALSE) or -1 (NULL). Same errors. */
int exec_eval_pred(exec_eval_ctx *c, const plan_expr *e, int *tv);

/* Compare two non-NULL values for sorting and grouping (numbers across types, strings
** by bytes); values of incomparable types order by type id. Returns <0, 0, >0. */
int exec_value_cmp(const cat_value *a, const cat_value *b);

/* A hash of a value consistent with exec_value_cmp == 0 for values of the same type
** family (numbers that compare equal hash equal). */
uint64_t exec_value_hash(const cat_value *v);

/* The binder's constant folding (plan_const_eval_fn, planner/expr.h): evaluate e, which reads
** no row, parameter or aggregate, with a private scratch arena and copy the value's string
** bytes into A. exec_session_open registers it with plan_set_const_eval. */
int exec_eval_const(const plan_expr *e, plan_arena *A, cat_value *out, char *msg, size_t cap);

/* Copy a value's string bytes into arena a so it outlives its source. EXEC_NOMEM. */
int exec_value_own(plan_arena *a, cat_value *v);

#endif /* ROWAN_EXEC_EVAL_H */
