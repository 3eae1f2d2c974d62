/*
** exec/engine_sub.c: the uncorrelated subqueries of a statement's expressions (plan_bound
** subs: scalar subqueries and EXISTS), run once per execution before the statement is
** planned (exec/engine_run.c build()). Each is planned and run as a query of its own, in
** the order the binder listed them (an inner subquery first, so its value is there when the
** one holding it is planned); its value becomes the parameter it was given: a scalar
** subquery's one value (NULL of its type without a row; more than one row is an error that
** names the subquery by its position), EXISTS's TRUE or FALSE (it stops at the first row),
** an x IN (SELECT ...) or (a, b) IN (SELECT c, d ...) inside an expression its rows as one
** hash set (exec/in_set.h, held within the join memory; the binder tests IN_SET(x, it)).
** The values, and the parameters before them, are st->all_params (run arena) for the run;
** after them come the slots of the statement's sequence references (plan_seqref), NULL
** here, set before each row by exec/sequence.c.
** Their plans are kept in the run arena for EXPLAIN (st->q.subs).
**
** Not here: binding (planner/bind_subquery.c), the statement's own plan and run.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exec/engine_int.h"
#include "exec/in_set.h"
#include "planner/plan_reuse.h"
#include "planner/plan_select.h"

/* The rows of an IN (SELECT ...) inside an expression, gathered for its hash set. */
typedef struct in_values {
  cat_value *v;   /* the values, row after row (malloc); string bytes in the run arena */
  uint32_t n, cap;
  size_t bytes;   /* their size, against the join memory */
} in_values;

static int in_add(exec_stmt *st, plan_arena *A, in_values *iv, const cat_value *row, int ncol,
                  uint32_t off, const char *pos, exec_error *err) {
  for (int i = 0; i < ncol; i++) {
    cat_value v = row[i];
    iv->bytes += sizeof v + (!v.is_null && cat_type_has_bytes(v.type.id) ? v.u.s.len : 0);
    iv->bytes += 2 * sizeof(uint32_t); /* the set's chain and bucket */
    if (iv->bytes > st->s->join_mem || iv->n >= UINT32_MAX / 4) {
      char lim[32];
      exec_mem_text(st->s->join_mem, lim, sizeof lim);
      return exec_fail(err, EXEC_TOOBIG, (int)off, "the values of IN (SELECT ...)%s inside "
                       "an expression need more than %s of memory (the join memory limit): "
                       "write it as an ANDed condition of the WHERE (a semi join, which holds "
                       "only the keys) or narrow the subquery", pos, lim);
    }
    if (iv->n == iv->cap) {
      uint32_t nc = iv->cap ? iv->cap * 2 : 64;
      cat_value *nv = realloc(iv->v, (size_t)nc * sizeof *nv);
      if (!nv) return exec_fail(err, EXEC_NOMEM, -1, "out of memory");
      iv->v = nv;
      iv->cap = nc;
    }
    if (exec_value_own(A, &v)) return exec_fail(err, EXEC_NOMEM, -1, "out of memory");
    iv->v[iv->n++] = v;
  }
  return EXEC_OK;
}

/* The gathered rows as a hash set in A, and the value that carries it. */
static int in_set(plan_arena *A, const in_values *iv, int ncol, cat_value *out,
                  exec_error *err) {
  cat_value *v = plan_arena_alloc(A, ((size_t)iv->n + 1) * sizeof *v);
  const exec_in_set *set;
  if (!v) return exec_fail(err, EXEC_NOMEM, -1, "out of memory");
  if (iv->n) memcpy(v, iv->v, (size_t)iv->n * sizeof *v);
  if (exec_in_set_build(A, v, iv->n / (uint32_t)ncol, ncol, &set) ||
      exec_in_set_value(A, set, out))
    return exec_fail(err, EXEC_NOMEM, -1, "out of memory");
  return EXEC_OK;
}

int exec_sub_value(exec_stmt *st, const plan_select *sel, int kind, uint32_t off,
                   const cat_value *params, int np, plan_arena *A, plan_query *q,
                   const exec_sub_reuse *reuse, plan_actuals *act, cat_value *out,
                   exec_error *err) {
  char msg[EXEC_ERRMSG_MAX], pos[64];
  pos[0] = 0; /* " at line L, column C" when an error needs it */
  int rc = reuse && reuse->rebuild
               ? plan_query_rebuild(&st->s->be, sel, params, np, A, q, msg, sizeof msg)
               : plan_query_build(&st->s->be, sel, params, np, A, q, msg, sizeof msg);
  if (rc) return exec_fail(err, rc, -1, "%s", msg);
  exec_query x;
  memset(&x, 0, sizeof x);
  const kv_batch *overlay = reuse && reuse->overlay ? reuse->overlay : st->s->txn;
  rc = exec_query_open_cached(&x, &st->s->be, q, params, np, st->now_us, st->s->sort_mem,
                              overlay, reuse ? reuse->cache : NULL, err);
  x.join_mem = st->s->join_mem;
  x.timing = st->bound.analyze;
  bool scalar = kind == SQL_E_SUBQUERY, in = kind == SQL_E_IN;
  cat_value v = scalar ? cat_v_null(sel->proj[0]->type) : cat_v_bool(false);
  in_values iv = {0};
  for (int rows = 0; !rc;) {
    rc = exec_query_next(&x, err);
    if (rc != EXEC_ROW) break;
    rc = EXEC_OK;
    if (in) {
      if (!pos[0]) plan_position(st->sql, off, pos, sizeof pos);
      rc = in_add(st, A, &iv, x.out, sel->n_out, off, pos, err);
      continue;
    }
    if (!scalar) {
      v = cat_v_bool(true);
      break;
    }
    if (++rows > 1) {
      plan_position(st->sql, off, pos, sizeof pos);
      rc = exec_fail(err, EXEC_ERROR, (int)off, "the scalar subquery%s returned more "
                     "than one row", pos);
      break;
    }
    v = x.out[0];
    if (exec_value_own(A, &v)) rc = exec_fail(err, EXEC_NOMEM, -1, "out of memory");
  }
  if (rc == EXEC_DONE) rc = EXEC_OK;
  if (!rc && in) rc = in_set(A, &iv, sel->n_out, &v, err);
  free(iv.v);
  exec_query_close(&x);
  if (act) *act = x.act;
  *out = v;
  return rc;
}

int exec_run_subqueries(exec_stmt *st, exec_error *err) {
  const plan_bound *b = &st->bound;
  exec_free_subqueries(st); /* a run not cleaned up yet: its plans first */
  st->all_params = st->run_params;
  st->n_all = st->n_params;
  st->n_sub_plans = 0;
  if (!b->n_subs && !b->n_seqs && !b->n_applies) return EXEC_OK;
  int n = st->n_params + b->n_subs + b->n_seqs; /* the sequences' values: exec/sequence.c */
  for (int k = 0; k < b->n_applies; k++) /* the apply environment, their outer values */
    n = b->applies[k].param + b->applies[k].n_outer - 1;
  cat_value *all = plan_arena_alloc(&st->run_arena, (size_t)n * sizeof *all);
  st->sub_plans = plan_arena_alloc(&st->run_arena, (size_t)(b->n_subs + 1) * sizeof *st->sub_plans);
  st->sub_acts = plan_arena_alloc(&st->run_arena, (size_t)(b->n_subs + 1) * sizeof *st->sub_acts);
  if (!all || !st->sub_plans || !st->sub_acts)
    return exec_fail(err, EXEC_NOMEM, -1, "out of memory");
  if (st->n_params) memcpy(all, st->run_params, (size_t)st->n_params * sizeof *all);
  for (int k = 0; k < b->n_seqs; k++)
    all[st->n_params + b->n_subs + k] = cat_v_null(cat_type_of(CAT_T_BIGINT));
  st->all_params = all;
  if (b->n_applies && exec_apply_start(st, all, err)) return err->code;
  for (int k = 0; k < b->n_subs; k++) /* NULL until run: nothing reads a later one's value */
    all[st->n_params + k] = cat_v_null(cat_type_of(CAT_T_VARBINARY));
  for (int k = 0; k < b->n_subs; k++) {
    const plan_subquery *sq = &b->subs[k];
    int np = sq->param - 1; /* the parameters before this one's */
    /* a correlated subquery inside it (`SELECT (SELECT ... t.k ...) FROM t`, run once) reads
       the apply environment and its outer values, which come after every subquery's value */
    int nv = b->n_applies ? n : np;
    cat_value v;
    int rc = exec_sub_value(st, sq->sel, sq->kind, sq->off, all, nv, &st->run_arena,
                            &st->sub_plans[k], NULL, &st->sub_acts[k], &v, err);
    st->n_sub_plans = k + 1; /* its plan is freed at the run's end, after an error too */
    st->key_list_over = rc == EXEC_TOOBIG && sq->key_list; /* build() binds a semi join */
    if (rc) return rc;
    all[np] = v;
    st->n_all = np + 1;
  }
  st->n_all = n;
  return EXEC_OK;
}

void exec_free_subqueries(exec_stmt *st) {
  exec_apply_free(st);
  for (int k = 0; k < st->n_sub_plans; k++) plan_query_free(&st->sub_plans[k]);
  st->n_sub_plans = 0;
  st->sub_plans = NULL;
  st->sub_acts = NULL;
}
