/*
** planner/plan_setop.h: the plan of a set operation (UNION ALL, UNION, INTERSECT, EXCEPT;
** planner/setop.c), which a plan_query carries in `setop` when its plan_select is one
** (plan_select.setop). Its two operands are whole plans of their own: the right one a
** SELECT's, the left one a SELECT's or another set operation's (the operators are
** left-associative). exec/op_setop.c runs it: UNION ALL passes the left rows then the
** right ones; UNION passes each distinct row once (a hash set of the rows passed);
** INTERSECT and EXCEPT first hold the right operand's distinct rows in a hash set, then
** pass each distinct left row that is (INTERSECT) or is not (EXCEPT) in it. Two rows are
** the same when every column is equal or both NULL (SQL's rule for set operations). The
** rows held count against the session's join memory.
**
** Not here: binding (planner/bind_subquery.c), the query above it (planner/join.c plans the
** derived table that reads it).
*/
#ifndef ROWAN_PLANNER_PLAN_SETOP_H
#define ROWAN_PLANNER_PLAN_SETOP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "planner/plan_select.h"

/* What a set operation did in a run (EXPLAIN ANALYZE). */
typedef struct plan_setop_actual {
  uint64_t rows_left;   /* rows read from the left operand */
  uint64_t rows_right;  /* rows read from the right operand */
  uint64_t rows_out;    /* rows passed on */
  uint64_t held;        /* rows held in the hash set */
  uint64_t peak_bytes;  /* memory they took at most */
  uint64_t spill_bytes; /* bytes written to temporary files past the join memory (0: none) */
  int spill_parts;      /* partitions they were cut into (0: it did not spill) */
  uint64_t spill_batches; /* partitions passed from them */
} plan_setop_actual;

typedef struct plan_setop {
  plan_query left, right;        /* the operands' plans */
  plan_actuals *act_left;        /* the left operand's figures (a SELECT's) of the last run */
  plan_actuals *act_right;       /* the right operand's */
  plan_setop_actual *act;        /* this operation's figures of the last run */
  uint64_t est_rows;             /* estimated rows out */
} plan_setop;

/* Plan the set operation s (s->setop set) into q: q->sel = s, q->setop its plan (arena).
** full false: the operands without estimates (planner/plan_reuse.h). Errors as
** plan_query_build; free q with plan_query_free. */
int plan_setop_build(kv_backend *be, const plan_select *s, const cat_value *params, int n_params,
                     plan_arena *A, plan_query *q, char *msg, size_t cap, bool full);
/* Free what the operands' plans own. */
void plan_setop_free(plan_setop *p);
/* The estimated rows out of plan q: its scan's, its join tree's, its set operation's, or
** 1 without a table (before any LIMIT or aggregate). */
uint64_t plan_query_est_rows(const plan_query *q);

/* The EXPLAIN lines of set operation q (q->setop), its operands' lines indented under it,
** with the figures of the last run when analyzed; appended to *lines (arena strings, *n
** counts). EXEC_OK or EXEC_NOMEM. */
int plan_setop_explain(const plan_query *q, bool analyzed, plan_arena *A, char ***lines,
                       int *n);

#endif /* ROWAN_PLANNER_PLAN_SETOP_H */
