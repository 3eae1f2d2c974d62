/*
** planner/join_cp.c: the plan-time half of the child/parent join (Phoenix's skip-scan join,
** planner/plan_join.h): deciding whether a hash join's probe input can be narrowed, once
** the build input is held, to the key prefixes the build input holds. That is so when the
** probe input is one table (a leaf) and its first row-key column, and possibly the ones after
** it, are each equal to a build-side expression of the same type by a join key: every probe
** row that can match has one of the held values in those columns, so reading only those
** prefixes (a point lookup or skip scan) loses no match. The side an outer join keeps whole
** (a LEFT JOIN's left input, a RIGHT JOIN's right one, both of a FULL JOIN) is never
** narrowed; the other side may be. A semi join (x IN (SELECT ...), a correlated EXISTS)
** passes only matched left rows, so its left leaf may be narrowed to the subquery's keys;
** planner/join.c never asks for an anti join, which passes the unmatched ones. A probe whose own WHERE already
** pins those columns to points (`station = 'x'`, an IN list) is left as it is.
**
** Not here: narrowing at run time (exec/op_cpjoin.c), the EXPLAIN line (planner/
** explain_join.c), the join tree (planner/join.c).
*/
#include "catalog/status.h"
#include "planner/hint.h"
#include "planner/keyrange.h"
#include "planner/plan_join.h"
#include "sql/ast.h"

int plan_join_child_parent(plan_join_node *j, const char *hint, plan_arena *A) {
  j->cp_n = 0;
  if (j->algo != PLAN_JOIN_HASH || plan_hint_has(hint, "NO_CHILD_PARENT_JOIN_OPTIMIZATION"))
    return EXEC_OK;
  plan_join_node *probe = j->build_left ? j->right : j->left;
  bool keeps_left = j->kind == SQL_JOIN_LEFT || j->kind == SQL_JOIN_FULL;
  bool keeps_right = j->kind == SQL_JOIN_RIGHT || j->kind == SQL_JOIN_FULL;
  if (!probe->leaf || probe->derived || (j->build_left ? keeps_right : keeps_left))
    return EXEC_OK; /* every row of the probe comes out: none may be left unread */
  const cat_table *t = probe->leaf_sel->table;
  plan_expr *const *pk = j->build_left ? j->rkeys : j->lkeys;  /* the probe side's keys */
  plan_expr *const *bk = j->build_left ? j->lkeys : j->rkeys;  /* the build side's */
  int *col = plan_arena_alloc(A, (size_t)t->n_pk * sizeof *col);
  int *key = plan_arena_alloc(A, (size_t)t->n_pk * sizeof *key);
  if (!col || !key) return EXEC_NOMEM;
  int n = 0;
  for (int p = 0; p < t->n_pk; p++) { /* the leading key columns that are join keys */
    int c = t->pk[p], found = -1;
    for (int i = 0; i < j->n_keys && found < 0; i++)
      if (pk[i]->kind == PX_COLUMN && pk[i]->column - probe->lo == c &&
          pk[i]->type.id == bk[i]->type.id && bk[i]->type.id != CAT_T_ARRAY)
        found = i;
    if (found < 0) break;
    col[n] = c;
    key[n++] = found;
  }
  const plan_scan *sc = &probe->leaf_q.scan;
  if (n && probe->leaf_q.has_scan && !sc->index &&
      (sc->ranges.kind == PLAN_SCAN_NOTHING || sc->ranges.kind == PLAN_SCAN_POINT ||
       sc->ranges.prefix_cols >= n))
    n = 0; /* the probe's own terms already pin those columns to a few values */
  j->cp_n = n;
  j->cp_col = col;
  j->cp_key = key;
  return EXEC_OK;
}
