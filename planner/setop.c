/*
** planner/setop.c: planning a set operation (planner/plan_setop.h): each operand is planned
** as a query of its own (a SELECT by planner/select.c, a set operation here again), and the
** operation's estimate is made from theirs: UNION ALL and UNION the sum (UNION's duplicates
** cannot be known before the run), INTERSECT the smaller operand, EXCEPT the left one.
**
** Not here: binding (planner/bind_subquery.c), EXPLAIN (planner/explain_join.c), running
** (exec/op_setop.c).
*/
#include <stdio.h>
#include <string.h>

#include "catalog/status.h"
#include "planner/plan_join.h"
#include "planner/plan_reuse.h"
#include "planner/plan_setop.h"
#include "sql/ast.h"

uint64_t plan_query_est_rows(const plan_query *q) {
  if (q->setop) return q->setop->est_rows;
  if (q->join) return q->join->est_rows;
  if (q->has_scan) return q->scan.est_rows;
  return 1;
}

static int operand(kv_backend *be, const plan_select *s, const cat_value *params, int n_params,
                   plan_arena *A, plan_query *q, char *msg, size_t cap, bool full) {
  return full ? plan_query_build(be, s, params, n_params, A, q, msg, cap)
              : plan_query_rebuild(be, s, params, n_params, A, q, msg, cap);
}

int plan_setop_build(kv_backend *be, const plan_select *s, const cat_value *params, int n_params,
                     plan_arena *A, plan_query *q, char *msg, size_t cap, bool full) {
  memset(q, 0, sizeof *q);
  q->sel = s;
  q->limit = -1;
  plan_setop *p = plan_arena_alloc(A, sizeof *p);
  if (!p) goto nomem;
  p->act = plan_arena_alloc(A, sizeof *p->act);
  p->act_left = plan_arena_alloc(A, sizeof *p->act_left);
  p->act_right = plan_arena_alloc(A, sizeof *p->act_right);
  if (!p->act || !p->act_left || !p->act_right) goto nomem;
  q->setop = p; /* from here on plan_query_free reaches the operands */
  int rc = operand(be, s->set_left, params, n_params, A, &p->left, msg, cap, full);
  if (!rc) rc = operand(be, s->set_right, params, n_params, A, &p->right, msg, cap, full);
  if (rc) return rc;
  uint64_t l = plan_query_est_rows(&p->left), r = plan_query_est_rows(&p->right);
  switch (s->setop) {
    case SQL_SETOP_INTERSECT: p->est_rows = l < r ? l : r; break;
    case SQL_SETOP_EXCEPT: p->est_rows = l; break;
    default: p->est_rows = l + r < l ? UINT64_MAX : l + r; break;
  }
  return EXEC_OK;
nomem:
  snprintf(msg, cap, "out of memory");
  return EXEC_NOMEM;
}

void plan_setop_free(plan_setop *p) {
  if (!p) return;
  plan_query_free(&p->left);
  plan_query_free(&p->right);
}
