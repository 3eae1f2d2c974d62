/*
** planner/expr.h: bound expressions, the typed form of sql_expr the planner produces and the
** executor evaluates.
**
** Binding (planner/bind.c) resolves every column reference of a statement against the
** catalog to a column index of the table, gives every node its SQL result type (catalog/
** types.h), converts literals to cat_value constants (coerced to the type they are compared
** with where that is exact), resolves function names to function ids (catalog/func_sig.h) and
** aggregate calls to aggregate slots, and folds constant subtrees. The tree is allocated in
** a plan arena and freed with it; nodes are never shared between plans.
**
** Who reads it: planner/keyrange.c (key-range derivation from WHERE), planner/filter.c (the
** pushed-down typed filter), exec/eval.c (evaluation over a decoded row), EXPLAIN (printing
** it back as SQL text with plan_expr_print).
**
** It does not evaluate anything and knows nothing of kv/.
*/
#ifndef ROWAN_PLANNER_EXPR_H
#define ROWAN_PLANNER_EXPR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "catalog/types.h"

/* ORDER PLAN_EXPR_KIND: plan_expr_print switches on these. */
enum plan_expr_kind {
  PX_CONST = 1, /* value */
  PX_COLUMN,    /* column: index into the input row (for a table scan: the table's column
                   index, catalog order) */
  PX_PARAM,     /* param: 1-based parameter number; value of the binding at run time */
  PX_UNARY,     /* op (SQL_OP_NEG, SQL_OP_NOT) on args[0] */
  PX_BINARY,    /* args[0] op args[1]: arithmetic, ||, comparisons, AND, OR (sql_op) */
  PX_IN,        /* args[0] [NOT] IN (args[1..n)); negated */
  PX_BETWEEN,   /* args[0] [NOT] BETWEEN args[1] AND args[2]; negated */
  PX_LIKE,      /* args[0] [NOT] LIKE|ILIKE args[1] [ESCAPE args[2]]; negated, ilike */
  PX_ISNULL,    /* args[0] IS [NOT] NULL; negated */
  PX_CASE,      /* has_operand ? args[0] is the operand; then WHEN/THEN pairs; then ELSE
                   if has_else */
  PX_CAST,      /* CAST(args[0] AS type) */
  PX_FUNC,      /* scalar function func (exec/func.h) of args */
  PX_AGG,       /* aggregate slot `agg` of the statement's aggregate list (its value after
                   grouping) */
  PX_ROW,       /* row value constructor (args...) on either side of a comparison or IN */
  PX_APPLY      /* a correlated subquery run per outer row (plan_apply number func, 0-based;
                   param: the parameter carrying the apply environment); args: the outer
                   values it reads, evaluated over the input row */
};

typedef struct plan_expr plan_expr;
struct plan_expr {
  uint8_t kind;        /* enum plan_expr_kind */
  uint8_t op;          /* enum sql_op for PX_UNARY / PX_BINARY */
  bool negated;        /* NOT IN, NOT BETWEEN, NOT LIKE, IS NOT NULL */
  bool ilike;          /* PX_LIKE: case-insensitive */
  bool has_operand;    /* PX_CASE: simple CASE x WHEN ... */
  bool has_else;       /* PX_CASE: ELSE present */
  bool nullable;       /* may evaluate to NULL */
  cat_type type;       /* result type (BOOLEAN for predicates) */
  uint32_t off;        /* byte offset in the statement text (for errors and EXPLAIN) */
  cat_value value;     /* PX_CONST: the constant (string bytes live in the plan arena) */
  int32_t column;      /* PX_COLUMN: input row slot */
  int32_t param;       /* PX_PARAM: parameter number */
  int32_t func;        /* PX_FUNC: function id; PX_AGG: aggregate slot; PX_APPLY: its
                          plan_apply */
  uint32_t n_args;     /* number of args */
  plan_expr **args;    /* operands, in the order listed above */
};

/* Render e as SQL text (column names from `names`, indexed by column slot; NULL prints
** $slot) into buf, NUL-terminated, truncated to cap; returns the full length. */
size_t plan_expr_print(const plan_expr *e, const char *const *names, char *buf, size_t cap);

/* The function id (enum exec_func_id, catalog/func_id.h) of operator sql_op (enum sql_op of
** sql/ast.h: SQL_OP_ADD, SQL_OP_SUB, SQL_OP_MUL, SQL_OP_DIV, SQL_OP_MOD, SQL_OP_CONCAT,
** SQL_OP_NEG), or 0 for other ops (planner/bind_func.c). */
int plan_func_of_op(int sql_op);

/* Constant folding: the binder evaluates an operator or a deterministic function call whose
** arguments are all constants once, at bind time, through the evaluator of the layer above
** (the planner never includes the executor: exec_session_open registers exec/eval.c's with
** plan_set_const_eval). fn evaluates e (no columns, parameters or aggregates in it) into
** *out, any string bytes copied into A, and returns EXEC_OK or the error code with msg
** set (an error a constant expression always raises is then reported at bind time). Until an
** evaluator is registered nothing is folded (the expression is evaluated per row).
** Thread-safe (an atomic pointer); registering the same function again is harmless. */
struct plan_arena;
typedef int (*plan_const_eval_fn)(const plan_expr *e, struct plan_arena *A, cat_value *out,
                                  char *msg, size_t cap);
void plan_set_const_eval(plan_const_eval_fn fn);

/* The values of a run-once x IN (SELECT ...) (IN_SET's set, carried by a parameter value:
** exec/in_set.h), registered by the executor the same way (plan_set_in_set_values), so the
** key range planner can read a key column's values from it as from an IN list: fn gives the
** set's rows (v, n rows of ncol values) and returns true, or false when carrier holds no
** set. */
typedef bool (*plan_in_set_values_fn)(const cat_value *carrier, const cat_value **v,
                                      uint32_t *n, int *ncol);
void plan_set_in_set_values(plan_in_set_values_fn fn);

#endif /* ROWAN_PLANNER_EXPR_H */
