/*
** exec/op_nljoin.c: the nested-loop join (planner/plan_join.h PLAN_JOIN_NESTED_LOOP), for a
** CROSS or comma join and for an ON with no equality between the two inputs. The right
** input (one table) is read whole first and held (exec_join_hold, counted against the join
** memory); then for each left row every held row is put into the joined row and the join's
** whole condition (the residual; none for a cross join) is checked. LEFT (and FULL) JOIN: a
** left row that nothing matched comes out with the right slots NULL; RIGHT (and FULL) JOIN:
** once the left input is exhausted, each held row no left row matched comes out with the
** left slots NULL.
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
  bool left_join = exec_join_keeps(pn, true), sweep = exec_join_keeps(pn, false);
  if (sweep && !j->matched && !(j->matched = calloc(j->n_held + 1, sizeof *j->matched))) {
    err->code = EXEC_NOMEM;
    err->offset = -1;
    snprintf(err->msg, sizeof err->msg, "out of memory");
    return EXEC_NOMEM;
  }
  for (;;) {
    if (j->in_sweep) { /* RIGHT or FULL: the held rows no left row matched */
      return exec_join_sweep(j, 0, row, pn->mid, pn->lo, pn->mid) ? EXEC_ROW : EXEC_DONE;
    }
    if (!j->have_row) {
      if (j->n_held == 0 && !left_join) return EXEC_DONE; /* nothing can come out */
      rc = exec_join_next(j->left, row, err);
      if (rc == EXEC_DONE && sweep) {
        j->in_sweep = true;
        continue;
      }
      if (rc != EXEC_ROW) return rc;
      pn->act->rows_left++;
      j->have_row = true;
      j->row_matched = false;
      j->pos = 0;
    }
    while (j->pos < j->n_held) {
      int ok = exec_join_pair(j, j->pos++, 0, row, pn->mid, err);
      if (ok < 0) return -ok;
      if (ok) return EXEC_ROW;
    }
    j->have_row = false;
    if (left_join && !j->row_matched) {
      exec_join_pad(j, row, pn->mid, pn->hi);
      return EXEC_ROW;
    }
  }
}
