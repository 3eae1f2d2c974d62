/*
** exec/op_nljoin.c: the nested-loop join (planner/plan_join.h PLAN_JOIN_NESTED_LOOP), for a
** CROSS or comma join and for an ON with no equality between the two inputs. The right
** input (one table) is read whole first and held (exec_join_hold, counted against the join
** memory); then for each left row every held row is put into the joined row and the join's
** whole condition (the residual; none for a cross join) is checked. LEFT JOIN: a left row
** that nothing matched comes out with the right slots NULL.
**
** Not here: the tree and the shared helpers (exec/op_join.c), the hash join
** (exec/op_hashjoin.c).
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exec/op_join.h"

int exec_nljoin_next(exec_join *j, cat_value *row, exec_error *err) {
  const plan_join_node *pn = j->pn;
  int rc;
  if (!j->built) {
    char what[160];
    snprintf(what, sizeof what, "nested loop's inner input (%s)",
             pn->right->leaf_name);
    for (;;) {
      rc = exec_join_next(j->right, row, err);
      if (rc == EXEC_DONE) break;
      if (rc != EXEC_ROW) return rc;
      pn->act->rows_right++;
      rc = exec_join_hold(j, NULL, 0, row, pn->mid, pn->hi, what, err);
      if (rc) return rc;
    }
    j->built = true;
  }
  bool left_join = pn->kind == SQL_JOIN_LEFT;
  for (;;) {
    if (!j->have_row) {
      if (j->n_held == 0 && !left_join) return EXEC_DONE; /* nothing can come out */
      rc = exec_join_next(j->left, row, err);
      if (rc != EXEC_ROW) return rc;
      pn->act->rows_left++;
      j->have_row = true;
      j->row_matched = false;
      j->pos = 0;
    }
    while (j->pos < j->n_held) {
      exec_join_restore(j, j->held[j->pos++], 0, row, pn->mid);
      int ok = exec_join_check(j, row, err);
      if (ok < 0) return -ok;
      if (!ok) continue;
      j->row_matched = true;
      return EXEC_ROW;
    }
    j->have_row = false;
    if (left_join && !j->row_matched) {
      exec_join_pad(j, row, pn->mid, pn->hi);
      return EXEC_ROW;
    }
  }
}
