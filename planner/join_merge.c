/*
** planner/join_merge.c: the sort-merge join (planner/plan_join.h PLAN_JOIN_MERGE). A hash
** join of two tables (the first join of the tree, both inputs leaves) whose every key is a
** plain column on each side, of one type, becomes a merge of the two inputs read in key
** order: each leaf is planned again with ORDER BY its key columns (ASC, NULLs first), which
** the single-table planner answers by scanning in key order when the table's row key (or an
** index) already gives that order, or by a sort. Under Phoenix's hint USE_SORT_MERGE_JOIN
** the merge is always used (sorting what must be sorted). Unhinted, it is chosen where it
** beats the hash join: neither leaf needs a sort, the keys cover the right table's primary
** key (so the merge holds one row at a time), both inputs are estimated at
** PLAN_MERGE_MIN_ROWS rows or more (a hash table of the smaller would take memory a merge
** does not), and, when the hash join would be a child/parent join (which reads only the
** build side's key prefixes of the other table, where a merge reads it all), the smaller
** input is at least a tenth of the larger (its keys would then touch most of the other).
** Otherwise the hash join stays, with its leaves' plans as they were.
**
** Not here: running the merge (exec/op_mergejoin.c), the join tree (planner/join.c).
*/
#include <string.h>

#include "catalog/status.h"
#include "planner/hint.h"
#include "planner/plan_join.h"
#include "planner/plan_reuse.h"

#define PLAN_MERGE_MIN_ROWS 50000 /* rows of the smaller input before a merge is chosen */

/* Leaf n's plan again with ORDER BY the key columns keys[0..nk) (joined-row columns of n),
** into *q. EXEC_OK; EXEC_ERROR when a key is not among its projected columns. */
static int ordered_leaf(kv_backend *be, const plan_join_node *n, plan_expr *const *keys, int nk,
                        const cat_value *params, int n_params, plan_arena *A, plan_query *q,
                        plan_select **out, char *msg, size_t cap, bool full) {
  const plan_select *ls = n->leaf_sel;
  plan_select *os = plan_arena_alloc(A, sizeof *os);
  plan_order *order = plan_arena_alloc(A, (size_t)nk * sizeof *order);
  plan_expr **src = plan_arena_alloc(A, (size_t)nk * sizeof *src);
  if (!os || !order || !src) return EXEC_NOMEM;
  *os = *ls;
  for (int i = 0; i < nk; i++) {
    int col = keys[i]->column - n->lo, slot = -1;
    for (int p = 0; p < ls->n_proj && slot < 0; p++)
      if (n->leaf_cols[p] == col) slot = p;
    if (slot < 0) return EXEC_ERROR;
    order[i].slot = slot;
    order[i].desc = false;
    order[i].nulls_first = true;
    src[i] = ls->proj[slot];
  }
  os->n_order = nk;
  os->order = order;
  os->order_src = src;
  *out = os;
  memset(q, 0, sizeof *q);
  return full ? plan_query_build(be, os, params, n_params, A, q, msg, cap)
              : plan_query_rebuild(be, os, params, n_params, A, q, msg, cap);
}

int plan_join_merge(kv_backend *be, plan_join_node *j, const char *hint, const cat_value *params,
                    int n_params, plan_arena *A, char *msg, size_t cap, bool full) {
  if (j->algo != PLAN_JOIN_HASH || !j->left->leaf || !j->right->leaf || j->left->derived ||
      j->right->derived)
    return EXEC_OK;
  for (int i = 0; i < j->n_keys; i++)
    if (j->lkeys[i]->kind != PX_COLUMN || j->rkeys[i]->kind != PX_COLUMN ||
        j->lkeys[i]->type.id != j->rkeys[i]->type.id || j->lkeys[i]->type.id == CAT_T_ARRAY)
      return EXEC_OK;
  bool forced = plan_hint_has(hint, "USE_SORT_MERGE_JOIN");
  if (!forced) {
    uint64_t l = j->left->est_rows, r = j->right->est_rows;
    uint64_t lo = l < r ? l : r, hi = l < r ? r : l;
    if (lo < PLAN_MERGE_MIN_ROWS) return EXEC_OK;
    if (j->cp_n && lo < hi / 10) return EXEC_OK; /* few keys: the probe reads only those */
    const cat_table *rt = j->right->leaf_sel->table; /* one right row per key at most */
    for (int p = 0; p < rt->n_pk; p++) {
      bool in = false;
      for (int i = 0; i < j->n_keys && !in; i++)
        in = j->rkeys[i]->column - j->right->lo == rt->pk[p];
      if (!in) return EXEC_OK;
    }
  }
  plan_query lq, rq;
  plan_select *ls = NULL, *rs = NULL;
  int rc = ordered_leaf(be, j->left, j->lkeys, j->n_keys, params, n_params, A, &lq, &ls, msg,
                        cap, full);
  if (rc == EXEC_ERROR) return EXEC_OK;
  if (rc) return rc;
  rc = ordered_leaf(be, j->right, j->rkeys, j->n_keys, params, n_params, A, &rq, &rs, msg, cap,
                    full);
  if (rc) {
    plan_query_free(&lq);
    return rc == EXEC_ERROR ? EXEC_OK : rc;
  }
  if (!forced && (lq.sort || rq.sort)) { /* a sort on either side: the hash join is cheaper */
    plan_query_free(&lq);
    plan_query_free(&rq);
    return EXEC_OK;
  }
  plan_query_free(&j->left->leaf_q);
  plan_query_free(&j->right->leaf_q);
  j->left->leaf_q = lq;
  j->left->leaf_sel = ls;
  j->right->leaf_q = rq;
  j->right->leaf_sel = rs;
  j->algo = PLAN_JOIN_MERGE;
  j->merge_sorted = lq.sort || rq.sort;
  j->cp_n = 0; /* both inputs are read whole, in order */
  return EXEC_OK;
}
