/*
** exec/engine_apply.c: running a statement's correlated subqueries once per outer row (the
** forms planner/bind_apply.c binds; issue 16). exec_apply_start, called with the run's
** subqueries (exec/engine_sub.c), makes the run's environment and puts its address into the
** parameter plan_bound.apply_env; the evaluator's PX_APPLY (exec/eval.c) hands it the outer
** values, and exec_apply_eval sets them as the subquery's parameters, plans the subquery
** with them (a key range or point read where they bind its key), runs it to its value
** (exec_sub_value) and keeps that value until the next outer row with other values: rows
** that arrive grouped by the outer values run it once per group, as SQLite's subquery
** result cache does for its most recent row.
**
** Each subquery has its own arena holding the last values, plan and result: reset when the
** values change, freed at the run's end, so a run over millions of outer rows holds one
** result per subquery. Its first run plans in full (index choice, estimates); when that
** plan read the table itself, later runs re-plan only the key ranges and filters for the
** new values (plan_query_rebuild, as a prepared statement does), and they keep their row
** and scan buffers (exec_query_cache). The subquery reads the store as the statement's other
** queries do, the transaction's batch included, but as that batch was when the statement
** started: an UPSERT ... SELECT or DELETE inside a transaction adds to the batch while it
** runs, and a later run must not see the rows the statement itself wrote or deleted (SQL
** evaluates a statement's query over the data before it). The outer values' slots are shared
** by nested correlated subqueries, which read them as parameters too.
**
** Not here: binding, the decorrelated forms (semi, anti and LEFT joins), EXPLAIN.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exec/apply.h"
#include "exec/engine_int.h"
#include "exec/eval.h"
#include "planner/plan_reuse.h"

#define APPLY_MAGIC 0x524f57414e415050ull /* "ROWANAPP" */

typedef struct apply_state {
  plan_arena A;      /* the values, plan and result of the last run */
  exec_query_cache cache; /* the runs' row and scan buffers */
  bool planned;      /* it was planned in full once */
  bool light;        /* that plan scanned a table itself: later runs re-plan lightly */
  bool have;         /* result holds the value for vals */
  cat_value *vals;   /* the outer values of that run (bytes in A) */
  cat_value result;  /* its value (bytes in A) */
} apply_state;

struct exec_apply_env {
  uint64_t magic;    /* APPLY_MAGIC */
  exec_stmt *st;     /* the statement */
  cat_value *all;    /* the run's parameters (exec_run_subqueries' array) */
  int n_all;         /* their count */
  apply_state *s;    /* per plan_apply */
  kv_batch *view;    /* a write statement's copy of the transaction's batch at its start (or
                        NULL: no transaction, or a SELECT, which writes nothing) */
};

int exec_apply_start(exec_stmt *st, cat_value *all, exec_error *err) {
  const plan_bound *b = &st->bound;
  exec_apply_free(st);
  exec_apply_env *env = calloc(1, sizeof *env);
  apply_state *s = calloc((size_t)b->n_applies, sizeof *s);
  struct plan_apply_actual *act =
      plan_arena_alloc(&st->run_arena, (size_t)b->n_applies * sizeof *act);
  uint8_t *p = plan_arena_alloc(&st->run_arena, sizeof env);
  if (!env || !s || !act || !p) {
    free(env);
    free(s);
    return exec_fail(err, EXEC_NOMEM, -1, "out of memory");
  }
  memset(act, 0, (size_t)b->n_applies * sizeof *act);
  if (st->s->txn && b->kind != SQL_STMT_SELECT &&
      !(env->view = kv_batch_copy(st->s->txn, kv_batch_get_mark(st->s->txn)))) {
    free(env);
    free(s);
    return exec_fail(err, EXEC_NOMEM, -1, "out of memory");
  }
  env->magic = APPLY_MAGIC;
  env->st = st;
  env->all = all;
  env->s = s;
  for (int k = 0; k < b->n_applies; k++) {
    const plan_apply *a = &b->applies[k];
    plan_arena_init(&s[k].A);
    for (int i = 0; i < a->n_outer; i++) all[a->param - 1 + i] = cat_v_null(a->nodes[i]->type);
    if (a->param + a->n_outer - 1 > env->n_all) env->n_all = a->param + a->n_outer - 1;
  }
  memcpy(p, &env, sizeof env);
  all[b->apply_env - 1] = cat_v_str(CAT_T_VARBINARY, p, sizeof env);
  st->apply_env = env;
  st->apply_act = act;
  return EXEC_OK;
}

void exec_apply_free(exec_stmt *st) {
  exec_apply_env *env = st->apply_env;
  if (!env) return;
  for (int k = 0; k < st->bound.n_applies; k++) {
    plan_arena_free(&env->s[k].A);
    exec_query_cache_free(&env->s[k].cache);
  }
  free(env->s);
  kv_batch_free(env->view);
  free(env);
  st->apply_env = NULL;
}

const exec_apply_env *exec_apply_env_of(const cat_value *v) {
  const exec_apply_env *env = NULL;
  if (v->is_null || v->type.id != CAT_T_VARBINARY || v->u.s.len != sizeof env) return NULL;
  memcpy(&env, v->u.s.p, sizeof env);
  return env && env->magic == APPLY_MAGIC ? env : NULL;
}

/* Two outer values the same for the subquery: both NULL, or equal of one type. */
static bool same(const cat_value *a, const cat_value *b) {
  if (a->is_null || b->is_null) return a->is_null && b->is_null;
  return a->type.id == b->type.id && exec_value_cmp(a, b) == 0;
}

int exec_apply_eval(const exec_apply_env *envc, int k, const cat_value *v, int n,
                    cat_value *out, exec_arena *scratch, char *msg, size_t cap) {
  exec_apply_env *env = (exec_apply_env *)envc; /* the run's, reached through a parameter */
  exec_stmt *st = env->st;
  const plan_apply *a = k >= 0 && k < st->bound.n_applies ? &st->bound.applies[k] : NULL;
  if (!a || n != a->n_outer) {
    snprintf(msg, cap, "internal error: correlated subquery %d is not this run's", k + 1);
    return EXEC_ERROR;
  }
  apply_state *s = &env->s[k];
  bool hit = s->have;
  for (int i = 0; hit && i < n; i++) hit = same(&s->vals[i], &v[i]);
  if (hit) {
    st->apply_act[k].reused++;
  } else {
    s->have = false;
    plan_arena_reset(&s->A);
    s->vals = plan_arena_alloc(&s->A, (size_t)n * sizeof *s->vals);
    if (!s->vals) {
      snprintf(msg, cap, "out of memory");
      return EXEC_NOMEM;
    }
    for (int i = 0; i < n; i++) {
      s->vals[i] = v[i];
      if (exec_value_own(&s->A, &s->vals[i])) {
        snprintf(msg, cap, "out of memory");
        return EXEC_NOMEM;
      }
      env->all[a->param - 1 + i] = s->vals[i];
    }
    plan_query q;
    memset(&q, 0, sizeof q);
    exec_error err;
    err.code = EXEC_OK;
    err.offset = -1;
    err.msg[0] = 0;
    /* the transaction as the statement started, when it writes (env->view), else the
       session's */
    exec_sub_reuse reuse = {s->planned && s->light, &s->cache, env->view};
    int rc = exec_sub_value(st, a->sel, a->kind, a->off, env->all, env->n_all, &s->A, &q,
                            &reuse, NULL, &s->result, &err);
    if (!rc && !s->planned) { /* as a prepared statement's plan is reused (engine_run.c) */
      s->planned = true;
      s->light = !q.join && (!q.has_scan || !q.scan.index);
    }
    plan_query_free(&q);
    if (rc) {
      snprintf(msg, cap, "%s", err.msg);
      return rc;
    }
    s->have = true;
    st->apply_act[k].runs++;
  }
  *out = s->result;
  if (!out->is_null && cat_type_has_bytes(out->type.id) && out->u.s.len &&
      a->kind == SQL_E_SUBQUERY) { /* a set value stays in A until the values change */
    void *p = exec_arena_copy(scratch, out->u.s.p, out->u.s.len);
    if (!p) {
      snprintf(msg, cap, "out of memory");
      return EXEC_NOMEM;
    }
    out->u.s.p = p;
  }
  return EXEC_OK;
}
