/*
** exec/op_setop.h: running a derived table's plan (exec/op_setop.c) under a join leaf
** (exec/op_join.c): a node runs either one query's pipeline (exec/op_query.c) or a set
** operation (planner/plan_setop.h) over two nodes, and hands out result rows of n_out
** values.
**
** Memory: the rows a set operation holds (UNION's rows passed, INTERSECT's and EXCEPT's
** right operand and left rows passed) count against the join context's mem_limit; past it
** the run stops with EXEC_TOOBIG naming the limit.
**
** Not here: the join tree (exec/op_join.h), the pipeline (exec/op.h).
*/
#ifndef ROWAN_EXEC_OP_SETOP_H
#define ROWAN_EXEC_OP_SETOP_H

#include "exec/op.h"
#include "planner/plan_setop.h"

struct exec_join_ctx;

typedef struct exec_setop exec_setop;
struct exec_setop {
  const plan_query *q;        /* the plan: a set operation (q->setop) or a query */
  struct exec_join_ctx *cx;   /* the join context (store, parameters, memory bound) */
  exec_query *query;          /* a query's pipeline (malloc), or NULL */
  plan_actuals *act;          /* where the query's figures go at close, or NULL */
  exec_setop *left, *right;   /* a set operation's operands */
  exec_rowset seen;           /* UNION: the rows passed; INTERSECT, EXCEPT: the right rows */
  exec_rowset passed;         /* INTERSECT, EXCEPT: the left rows passed */
  int phase;                  /* 0: build (INTERSECT, EXCEPT), 1: left, 2: right, 3: done,
                                 4: a spilled operation's partitions */
  struct setop_spill *spill;  /* past the join memory: the rows on disk (exec/op_setop.c) */
  const cat_value *row;       /* the current row (n_out values), after EXEC_ROW */
};

/* Open the node of plan q into *out (malloc; close with exec_setop_close, also after an
** error); act: where a query's figures go at close (NULL: nowhere). EXEC_OK, EXEC_NOMEM, or
** the query's open error. */
int exec_setop_open(exec_setop **out, const plan_query *q, plan_actuals *act,
                    struct exec_join_ctx *cx, exec_error *err);
/* The next row into s->row: EXEC_ROW, EXEC_DONE or an error. */
int exec_setop_next(exec_setop *s, exec_error *err);
/* Close and free (NULL is fine). */
void exec_setop_close(exec_setop *s);
/* Stop reading the transaction's writes (exec_query_drop_overlay of each query). */
void exec_setop_drop_overlay(exec_setop *s);

#endif /* ROWAN_EXEC_OP_SETOP_H */
