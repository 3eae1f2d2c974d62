/*
** exec/op_join.c: runs a join tree (exec/op_join.h): opens one exec_query per leaf (the
** table's own plan: key ranges, pushed filter, index, residual) and copies each of its rows'
** projected columns into the table's slots of the joined row; dispatches a join node to its
** algorithm (exec/op_hashjoin.c, exec/op_nljoin.c); and holds what both algorithms share:
** the held rows with their memory count, NULL padding, the residual check. At close each
** leaf's figures go to its plan node (leaf_act) for EXPLAIN ANALYZE. A derived table's leaf
** runs its plan through exec/op_setop.c and checks its leaf filter on each row.
**
** Not here: the algorithms themselves, the steps above the tree (exec/op_query.c).
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exec/op_join.h"
#include "sql/ast.h"
#include "exec/op_setop.h"

static int nomem(exec_error *err) {
  err->code = EXEC_NOMEM;
  err->offset = -1;
  snprintf(err->msg, sizeof err->msg, "out of memory");
  return EXEC_NOMEM;
}

int exec_join_open(exec_join **out, const plan_join_node *pn, exec_join_ctx *cx,
                   exec_error *err) {
  exec_join *j = calloc(1, sizeof *j);
  *out = j;
  if (!j) return nomem(err);
  j->pn = pn;
  j->cx = cx;
  plan_arena_init(&j->cp_arena);
  exec_arena_init(&j->kscratch);
  exec_arena_init(&j->rscratch);
  j->ev.params = cx->params;
  j->ev.n_params = cx->n_params;
  j->ev.now_us = cx->now_us;
  j->ev.msg = j->msg;
  j->ev.cap = sizeof j->msg;
  if (pn->leaf) {
    memset(pn->leaf_act, 0, sizeof *pn->leaf_act);
    if (pn->derived) {
      j->ev.scratch = &j->rscratch;
      return exec_setop_open(&j->dleaf, &pn->leaf_q, pn->leaf_act, cx, err);
    }
    j->leaf = calloc(1, sizeof *j->leaf);
    if (!j->leaf) return nomem(err);
    int rc = exec_query_open(j->leaf, cx->be, &pn->leaf_q, cx->params, cx->n_params, cx->now_us,
                             0, cx->overlay, err);
    j->leaf->timing = cx->timing;
    return rc;
  }
  memset(pn->act, 0, sizeof *pn->act);
  if (pn->n_keys) {
    j->keys = calloc((size_t)pn->n_keys, sizeof *j->keys);
    if (!j->keys) return nomem(err);
  }
  int rc = exec_join_open(&j->left, pn->left, cx, err);
  if (!rc) rc = exec_join_open(&j->right, pn->right, cx, err);
  return rc;
}

/* A derived table's next row that passes its leaf filter, into its slots of row. */
static int derived_next(exec_join *j, cat_value *row, exec_error *err) {
  const plan_join_node *pn = j->pn;
  for (;;) {
    int rc = exec_setop_next(j->dleaf, err);
    if (rc != EXEC_ROW) {
      if (rc == EXEC_DONE) j->done = true;
      return rc;
    }
    int n = pn->hi - pn->lo;
    memcpy(row + pn->lo, j->dleaf->row, (size_t)n * sizeof *row);
    if (!pn->leaf_filter) return EXEC_ROW;
    exec_arena_reset(&j->rscratch);
    j->ev.row = row;
    int tv;
    rc = exec_eval_pred(&j->ev, pn->leaf_filter, &tv);
    if (rc) return exec_join_eval_err(j, rc, err);
    if (tv == 1) return EXEC_ROW;
  }
}

int exec_join_next(exec_join *j, cat_value *row, exec_error *err) {
  if (j->done) return EXEC_DONE;
  const plan_join_node *pn = j->pn;
  if (pn->leaf && pn->derived) return derived_next(j, row, err);
  if (pn->leaf) {
    int rc = exec_query_next(j->leaf, err);
    if (rc != EXEC_ROW) {
      if (rc == EXEC_DONE) j->done = true;
      return rc;
    }
    int base = pn->lo, n = pn->leaf_sel->n_proj;
    for (int i = 0; i < n; i++) row[base + pn->leaf_cols[i]] = j->leaf->out[i];
    return EXEC_ROW;
  }
  int rc = pn->algo == PLAN_JOIN_HASH    ? exec_hashjoin_next(j, row, err)
           : pn->algo == PLAN_JOIN_MERGE ? exec_mergejoin_next(j, row, err)
                                         : exec_nljoin_next(j, row, err);
  if (rc == EXEC_ROW) pn->act->rows_out++;
  else if (rc == EXEC_DONE) j->done = true;
  return rc;
}

void exec_join_drop_overlay(exec_join *j) {
  if (!j) return;
  j->cx->overlay = NULL; /* a child/parent join's probe opened later reads the store alone */
  if (j->leaf) exec_query_drop_overlay(j->leaf);
  exec_setop_drop_overlay(j->dleaf);
  exec_join_drop_overlay(j->left);
  exec_join_drop_overlay(j->right);
}

void exec_join_close(exec_join *j) {
  if (!j) return;
  if (j->leaf) {
    exec_query_close(j->leaf);
    *j->pn->leaf_act = j->leaf->act;
    free(j->leaf);
  }
  if (j->has_cp_q) plan_query_free(&j->cp_q);
  plan_arena_free(&j->cp_arena);
  exec_setop_close(j->dleaf); /* its figures go to leaf_act */
  exec_join_close(j->left);
  exec_join_close(j->right);
  for (size_t i = 0; i < j->n_held; i++) exec_mrow_free(j->held[i], 0);
  free(j->held);
  free(j->head);
  free(j->next);
  free(j->matched);
  free(j->keys);
  free(j->la);
  free(j->lsave);
  exec_spill_free(j->spill);
  exec_arena_free(&j->kscratch);
  exec_arena_free(&j->rscratch);
  free(j);
}

bool exec_join_keeps(const plan_join_node *pn, bool left) {
  return left ? pn->kind == SQL_JOIN_LEFT || pn->kind == SQL_JOIN_FULL
              : pn->kind == SQL_JOIN_RIGHT || pn->kind == SQL_JOIN_FULL;
}

int exec_join_hold(exec_join *j, const cat_value *keys, int n_keys, const cat_value *row,
                   int from, int to, const char *what, exec_error *err) {
  int w = to - from;
  cat_value tmp[64];
  cat_value *v = n_keys + w <= 64 ? tmp : malloc((size_t)(n_keys + w) * sizeof *v);
  if (!v) return nomem(err);
  if (n_keys) memcpy(v, keys, (size_t)n_keys * sizeof *v);
  if (w) memcpy(v + n_keys, row + from, (size_t)w * sizeof *v);
  int rc = exec_join_hold_vals(j, v, n_keys + w, what, err);
  if (v != tmp) free(v);
  return rc;
}

int exec_join_hold_vals(exec_join *j, const cat_value *v, int n, const char *what,
                        exec_error *err) {
  exec_mrow *r = exec_mrow_make(v, n, 0);
  if (!r) return nomem(err);
  if (j->n_held == j->cap_held) {
    size_t nc = j->cap_held ? j->cap_held * 2 : 64;
    exec_mrow **nh = realloc(j->held, nc * sizeof *nh);
    if (!nh) {
      exec_mrow_free(r, 0);
      return nomem(err);
    }
    j->held = nh;
    j->cap_held = nc;
  }
  j->held[j->n_held++] = r;
  j->mem += r->bytes + sizeof r + 2 * sizeof(uint32_t);
  plan_join_actual *a = j->pn->act;
  a->build_rows = j->n_held;
  if (j->mem > a->peak_bytes) a->peak_bytes = j->mem;
  if (j->mem > j->cx->mem_limit) {
    char lim[32];
    exec_mem_text(j->cx->mem_limit, lim, sizeof lim);
    err->code = EXEC_TOOBIG;
    err->offset = -1;
    bool merge = j->pn->algo == PLAN_JOIN_MERGE;
    snprintf(err->msg, sizeof err->msg,
             "the %s needs more than %s of memory (the join memory limit); %s", what, lim,
             merge ? "a sort-merge join holds one key's rows of its right input: without the "
                     "USE_SORT_MERGE_JOIN hint a hash join spills to disk"
                   : "a nested loop does not spill to disk: join on an equality of the two "
                     "tables (a hash join spills), or narrow the smaller table with a WHERE");
    return EXEC_TOOBIG;
  }
  return EXEC_OK;
}

void exec_join_restore(const exec_join *j, const exec_mrow *h, int n_keys, cat_value *row,
                       int from) {
  (void)j;
  int w = h->n - n_keys;
  if (w > 0) memcpy(row + from, h->v + n_keys, (size_t)w * sizeof *row);
}

void exec_join_pad(const exec_join *j, cat_value *row, int from, int to) {
  if (to > from) memcpy(row + from, j->cx->nulls + from, (size_t)(to - from) * sizeof *row);
}

int exec_join_pair(exec_join *j, uint32_t i, int nk, cat_value *row, int from,
                   exec_error *err) {
  exec_join_restore(j, j->held[i], nk, row, from);
  int ok = exec_join_check(j, row, err);
  if (ok <= 0) return ok;
  j->row_matched = true;
  if (j->matched) j->matched[i] = true;
  return 1;
}

bool exec_join_sweep(exec_join *j, int nk, cat_value *row, int from, int pad_from,
                     int pad_to) {
  while (j->sweep < j->n_held) {
    size_t i = j->sweep++;
    if (j->matched[i]) continue;
    exec_join_restore(j, j->held[i], nk, row, from);
    exec_join_pad(j, row, pad_from, pad_to);
    return true;
  }
  return false;
}

int exec_join_eval_err(exec_join *j, int rc, exec_error *err) {
  err->code = rc;
  err->offset = -1;
  snprintf(err->msg, sizeof err->msg, "%s", j->msg);
  return rc;
}

int exec_join_check(exec_join *j, const cat_value *row, exec_error *err) {
  const plan_expr *f = j->pn->residual;
  if (!f) return 1;
  exec_arena_reset(&j->rscratch);
  j->ev.row = row;
  j->ev.scratch = &j->rscratch;
  int tv;
  int rc = exec_eval_pred(&j->ev, f, &tv);
  if (rc) return -exec_join_eval_err(j, rc, err);
  return tv == 1;
}
