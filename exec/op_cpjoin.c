/*
** exec/op_cpjoin.c: the run-time half of the child/parent join (planner/plan_join.h,
** planner/join_cp.c). Once a hash join holds its build input, the probe leaf is planned
** again as its table's own query with one more term per restricted key column, `column IN
** (the distinct non-NULL values the held rows have for that join key)`, and reopened on that
** plan: the single-table planner turns the list into point lookups or a skip scan, so the
** probe reads only the key prefixes that can match (the join still checks every key). When
** a column has more distinct values than a skip scan takes (PLAN_MAX_SKIP_RANGES) the leaf
** is left as planned and reads its input whole. The new plan and its arena belong to the
** probe's exec_join and are freed with it. With one join key the narrowed probe returns only
** rows whose key is among the held ones (IN and = compare alike, and IN never takes NULL):
** the join is marked cp_exact, and a semi join (x IN (SELECT ...)) then passes every probe
** row without hashing it (exec/op_hashjoin.c semi_next).
**
** Not here: deciding that a join is one (planner/join_cp.c), the hash join (exec/
** op_hashjoin.c), EXPLAIN's line (planner/explain_join.c).
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exec/op_join.h"
#include "planner/index_choice.h"
#include "planner/keyrange.h"
#include "planner/plan_reuse.h"
#include "planner/plan_select.h"
#include "sql/ast.h"

static int nomem(exec_error *err) {
  err->code = EXEC_NOMEM;
  err->offset = -1;
  snprintf(err->msg, sizeof err->msg, "out of memory");
  return EXEC_NOMEM;
}

static int cmp_values(const void *a, const void *b) {
  return exec_value_cmp(*(const cat_value *const *)a, *(const cat_value *const *)b);
}

/* `column IN (values)` over probe table column c (type of that column), the values the
** distinct non-NULL ones among the held rows' key k (n_held pointers sorted in v). The count
** of list values in *n_out; NULL when out of memory. */
static plan_expr *in_term(plan_arena *A, const cat_table *t, int c, const cat_value **v,
                          size_t n, size_t *n_out) {
  plan_expr *col = plan_arena_alloc(A, sizeof *col);
  plan_expr *in = plan_arena_alloc(A, sizeof *in);
  plan_expr **args = plan_arena_alloc(A, (n + 1) * sizeof *args);
  plan_expr *consts = plan_arena_alloc(A, (n + 1) * sizeof *consts);
  if (!col || !in || !args || !consts) return NULL;
  memset(col, 0, sizeof *col);
  col->kind = PX_COLUMN;
  col->column = c;
  col->type = t->columns[c].type;
  col->nullable = t->columns[c].nullable;
  memset(in, 0, sizeof *in);
  in->kind = PX_IN;
  in->type = cat_type_of(CAT_T_BOOLEAN);
  in->args = args;
  args[0] = col;
  size_t k = 0;
  for (size_t i = 0; i < n; i++) {
    if (k && exec_value_cmp(v[i], &consts[k - 1].value) == 0) continue;
    plan_expr *e = &consts[k];
    memset(e, 0, sizeof *e);
    e->kind = PX_CONST;
    e->type = col->type; /* the same type id (planner/join_cp.c); lengths may differ */
    e->value = *v[i];    /* strings point into the held rows, which outlive the plan */
    args[1 + k++] = e;
  }
  in->n_args = (uint32_t)(k + 1);
  *n_out = k;
  return in;
}

int exec_cpjoin_narrow(exec_join *j, exec_join *probe, exec_error *err) {
  const plan_join_node *pn = j->pn;
  plan_join_actual *a = pn->act;
  if (j->n_held == 0) return EXEC_OK; /* nothing will be probed (exec_hashjoin_next) */
  const plan_join_node *leaf = probe->pn;
  const plan_select *ls = leaf->leaf_sel;
  plan_arena *A = &probe->cp_arena;
  const cat_value **v = malloc(j->n_held * sizeof *v);
  plan_expr **terms = plan_arena_alloc(A, (size_t)(pn->cp_n + 1) * sizeof *terms);
  if (!v || !terms) {
    free(v);
    return nomem(err);
  }
  uint64_t product = 1;
  for (int i = 0; i < pn->cp_n; i++) {
    size_t n = 0, distinct = 0;
    for (size_t h = 0; h < j->n_held; h++) {
      const cat_value *x = &j->held[h]->v[pn->cp_key[i]];
      if (!x->is_null) v[n++] = x;
    }
    qsort(v, n, sizeof *v, cmp_values);
    terms[i] = in_term(A, ls->table, pn->cp_col[i], v, n, &distinct);
    if (!terms[i]) {
      free(v);
      return nomem(err);
    }
    product = distinct && product > UINT64_MAX / distinct ? UINT64_MAX : product * distinct;
  }
  free(v);
  a->cp_keys = product;
  if (product > PLAN_MAX_SKIP_RANGES) { /* read the input whole, as planned */
    a->cp_state = PLAN_CP_TOO_MANY;
    return EXEC_OK;
  }
  int nt = pn->cp_n;
  if (ls->where) terms[nt++] = ls->where;
  plan_select *ns = plan_arena_alloc(A, sizeof *ns); /* the plan keeps a pointer to it */
  if (!ns) return nomem(err);
  *ns = *ls;
  ns->where = plan_and_terms(A, (const plan_expr *const *)terms, (uint32_t)nt);
  if (!ns->where) return nomem(err);
  exec_join_ctx *cx = j->cx;
  char msg[EXEC_ERRMSG_MAX];
  /* run, never explained: no estimates, the table's own key ranges (plan_reuse.h) */
  int rc = plan_query_rebuild(cx->be, ns, cx->params, cx->n_params, A, &probe->cp_q, msg,
                              sizeof msg);
  probe->has_cp_q = true;
  if (rc) {
    err->code = rc;
    err->offset = -1;
    snprintf(err->msg, sizeof err->msg, "%s", msg);
    return rc;
  }
  exec_query_close(probe->leaf);
  memset(probe->leaf, 0, sizeof *probe->leaf);
  rc = exec_query_open(probe->leaf, cx->be, &probe->cp_q, cx->params, cx->n_params, cx->now_us,
                       0, cx->overlay, err);
  probe->leaf->timing = cx->timing;
  if (!rc) a->cp_state = PLAN_CP_APPLIED;
  j->cp_exact = !rc && pn->cp_n == 1 && pn->n_keys == 1;
  return rc;
}
