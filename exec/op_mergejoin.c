/*
** exec/op_mergejoin.c: the sort-merge join (planner/plan_join.h PLAN_JOIN_MERGE). Both
** inputs are tables whose plans deliver their rows ordered by the join key columns (ASC,
** NULLs first: planner/join_merge.c), so the join walks them side by side: the smaller key
** advances; on equal keys, the right input's rows of that key (one group) are held
** (counted against the join memory) and every left row of the same key is paired with each,
** the residual checked. Outer joins: a left row nothing matched comes out with the right
** slots NULL as the walk passes it, a right row likewise with the left slots NULL (its
** group's unmatched rows when the group is done). A key with a NULL never matches. Nothing
** but one key's right rows is held, whatever the inputs' sizes.
**
** Not here: the hash join (exec/op_hashjoin.c), the tree (exec/op_join.c).
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exec/op_join.h"

enum { ADV_NONE, ADV_LEFT, ADV_RIGHT }; /* the input to read before going on */

/* Compare key values a and b (n each) in the inputs' order: NULL first. */
static int keys_cmp(const cat_value *a, const cat_value *b, int n) {
  for (int i = 0; i < n; i++) {
    if (a[i].is_null || b[i].is_null) {
      if (a[i].is_null != b[i].is_null) return a[i].is_null ? -1 : 1;
      continue;
    }
    int c = exec_value_cmp(&a[i], &b[i]);
    if (c) return c < 0 ? -1 : 1;
  }
  return 0;
}

static bool has_null(const cat_value *k, int n) {
  for (int i = 0; i < n; i++)
    if (k[i].is_null) return true;
  return false;
}

/* The next left row into row, its key values (plain columns) into j->keys. */
static int read_left(exec_join *j, cat_value *row, exec_error *err) {
  const plan_join_node *pn = j->pn;
  int rc = exec_join_next(j->left, row, err);
  if (rc == EXEC_DONE) {
    j->l_eof = true;
    return EXEC_OK;
  }
  if (rc != EXEC_ROW) return rc;
  pn->act->rows_left++;
  for (int i = 0; i < pn->n_keys; i++) j->keys[i] = row[pn->lkeys[i]->column];
  memcpy(j->lsave, row + pn->lo, (size_t)(pn->mid - pn->lo) * sizeof *row);
  return EXEC_OK;
}

/* Put the current left row back into row's left slots (a padded right row took them). */
static void put_left(const exec_join *j, cat_value *row) {
  const plan_join_node *pn = j->pn;
  memcpy(row + pn->lo, j->lsave, (size_t)(pn->mid - pn->lo) * sizeof *row);
}

/* The next right row's key values, then its slots, into j->la (no copy of their strings:
** they stay valid until the right input's next row, and the group holds copies). */
static int read_right(exec_join *j, cat_value *row, exec_error *err) {
  const plan_join_node *pn = j->pn;
  int rc = exec_join_next(j->right, row, err);
  if (rc == EXEC_DONE) {
    j->r_eof = true;
    return EXEC_OK;
  }
  if (rc != EXEC_ROW) return rc;
  pn->act->rows_right++;
  int nk = pn->n_keys;
  for (int i = 0; i < nk; i++) j->la[i] = row[pn->rkeys[i]->column];
  memcpy(j->la + nk, row + pn->mid, (size_t)(pn->hi - pn->mid) * sizeof *row);
  return EXEC_OK;
}

/* Hold the right rows of the look-ahead's key (the group), reading on past them. */
static int read_group(exec_join *j, cat_value *row, exec_error *err) {
  const plan_join_node *pn = j->pn;
  int nk = pn->n_keys;
  char what[160];
  snprintf(what, sizeof what, "sort-merge join's rows of one key (%s)",
           pn->right->leaf_name);
  for (size_t i = 0; i < j->n_held; i++) exec_mrow_free(j->held[i], 0);
  j->n_held = 0;
  j->mem = 0;
  do {
    int rc = exec_join_hold_vals(j, j->la, nk + pn->hi - pn->mid, what, err);
    if (rc) return rc;
    if ((rc = read_right(j, row, err)) != EXEC_OK) return rc;
  } while (!j->r_eof && keys_cmp(j->la, j->held[0]->v, nk) == 0);
  free(j->matched);
  j->matched = NULL;
  if (exec_join_keeps(pn, false) && !(j->matched = calloc(j->n_held, sizeof *j->matched))) {
    err->code = EXEC_NOMEM;
    err->offset = -1;
    snprintf(err->msg, sizeof err->msg, "out of memory");
    return EXEC_NOMEM;
  }
  return EXEC_OK;
}

int exec_mergejoin_next(exec_join *j, cat_value *row, exec_error *err) {
  const plan_join_node *pn = j->pn;
  int nk = pn->n_keys, rc;
  bool keep_l = exec_join_keeps(pn, true), keep_r = exec_join_keeps(pn, false);
  if (!j->built) {
    j->built = true;
    j->lsave = malloc((size_t)(pn->mid - pn->lo + 1) * sizeof *j->lsave);
    j->la = malloc((size_t)(pn->n_keys + pn->hi - pn->mid + 1) * sizeof *j->la);
    if (!j->lsave || !j->la) {
      err->code = EXEC_NOMEM;
      err->offset = -1;
      snprintf(err->msg, sizeof err->msg, "out of memory");
      return EXEC_NOMEM;
    }
    if ((rc = read_left(j, row, err)) || (rc = read_right(j, row, err))) return rc;
  }
  for (;;) {
    if (j->adv == ADV_LEFT && (rc = read_left(j, row, err))) return rc;
    if (j->adv == ADV_RIGHT && (rc = read_right(j, row, err))) return rc;
    j->adv = ADV_NONE;
    if (j->in_group) { /* the current left row against the group */
      while (j->pos < j->n_held) {
        put_left(j, row);
        int ok = exec_join_pair(j, j->pos++, nk, row, pn->mid, err);
        if (ok < 0) return -ok;
        if (ok) return EXEC_ROW;
      }
      if (keep_l && !j->row_matched) { /* no group row passed the residual */
        j->row_matched = true;
        put_left(j, row);
        exec_join_pad(j, row, pn->mid, pn->hi);
        return EXEC_ROW;
      }
      if ((rc = read_left(j, row, err))) return rc;
      if (!j->l_eof && keys_cmp(j->keys, j->held[0]->v, nk) == 0) {
        j->pos = 0;
        j->row_matched = false;
        continue;
      }
      j->in_group = false;
      j->in_sweep = keep_r;
      j->sweep = 0;
      continue;
    }
    if (j->in_sweep) { /* the group's right rows no left row matched */
      if (exec_join_sweep(j, nk, row, pn->mid, pn->lo, pn->mid)) return EXEC_ROW;
      j->in_sweep = false;
      continue;
    }
    if ((j->l_eof && (j->r_eof || !keep_r)) || (j->r_eof && !keep_l))
      return EXEC_DONE; /* nothing more can come out: the other input is not read on */
    int c = j->l_eof ? 1 : j->r_eof ? -1 : keys_cmp(j->keys, j->la, nk);
    if (c < 0 || (c == 0 && has_null(j->keys, nk))) { /* the left row matches nothing */
      j->adv = ADV_LEFT;
      if (keep_l) {
        put_left(j, row);
        exec_join_pad(j, row, pn->mid, pn->hi);
        return EXEC_ROW;
      }
      continue;
    }
    if (c > 0 || has_null(j->la, nk)) { /* the right row matches nothing */
      j->adv = ADV_RIGHT;
      if (keep_r) {
        memcpy(row + pn->mid, j->la + nk, (size_t)(pn->hi - pn->mid) * sizeof *row);
        exec_join_pad(j, row, pn->lo, pn->mid);
        return EXEC_ROW;
      }
      continue;
    }
    if ((rc = read_group(j, row, err))) return rc; /* equal keys, no NULL */
    j->in_group = true;
    j->pos = 0;
    j->row_matched = false;
  }
}
