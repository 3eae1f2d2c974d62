/*
** exec/as_of.c: reading the past (docs/SQL.md "Reading the past"): the read time of a
** statement's run, from its AS OF clause (plan_bound.as_of_ms) or the session's setting
** (exec_set_as_of, Phoenix's CurrentSCN connection property), checked against the store's
** look-back horizon (kv_lookback_horizon) so an answer is exact or an error, never partial;
** and the thread's current read time, which every kv scan the step opens takes
** (kv_scan_options.as_of, exec/scan.c) and the planner reads to leave secondary indexes
** out (planner/index_choice.h). What it does not do: the visibility rules (kv/db/db_vis.c).
*/
#include <stdio.h>
#include <string.h>

#include "catalog/row_ts.h"
#include "exec/as_of.h"
#include "exec/engine_int.h"
#include "planner/index_choice.h"

static _Thread_local int64_t step_as_of; /* the stepping statement's read time, 0 = now */

int64_t exec_as_of_current(void) { return step_as_of; }

int64_t exec_as_of_swap(int64_t v) {
  int64_t old = step_as_of;
  step_as_of = v;
  plan_index_set_as_of(v);
  return old;
}

int exec_set_as_of(exec_session *s, int64_t ms) {
  if (ms < 0) return EXEC_MISUSE;
  s->as_of_ms = ms;
  return EXEC_OK;
}

int64_t exec_get_as_of(const exec_session *s) { return s->as_of_ms; }

int exec_as_of_check(exec_stmt *st, exec_error *err) {
  int64_t t = st->bound.as_of_ms ? st->bound.as_of_ms : st->s->as_of_ms;
  st->as_of_ms = 0;
  exec_as_of_swap(0);
  if (!t) {
    if (st->planned_as_of) exec_plan_drop(st); /* planned without indexes */
    st->planned_as_of = 0;
    return EXEC_OK;
  }
  char when[80];
  cat_ms_text(t, when, sizeof when);
  int kind = st->ast->kind;
  if (kind != SQL_STMT_SELECT && kind != SQL_STMT_BEGIN && kind != SQL_STMT_COMMIT &&
      kind != SQL_STMT_ROLLBACK && kind != SQL_STMT_CHECK_INDEX)
    return exec_fail(err, EXEC_ERROR, -1, "the connection reads as of %s UTC (rowan_set_as_of, "
                     "like Phoenix's CurrentSCN): writes and DDL are refused; set it to 0 to "
                     "write", when);
  if (kind != SQL_STMT_SELECT) return EXEC_OK; /* BEGIN ..., CHECK INDEX: the present */
  if (st->bound.n_seqs) /* NEXT VALUE FOR claims values: a write, of the present */
    return exec_fail(err, EXEC_ERROR, -1, "NEXT / CURRENT VALUE FOR cannot be used in a read "
                     "of the past (AS OF %s UTC): a sequence is only ever read now", when);
  int64_t horizon = kv_lookback_horizon(st->s->db);
  if (t < horizon) {
    char h[80];
    cat_ms_text(horizon, h, sizeof h);
    return exec_fail(err, EXEC_ERROR, st->bound.as_of_ms ? (int)st->ast->as_of->off : -1,
                     "AS OF %s UTC is older than the look-back window allows: reads as of %s "
                     "UTC or later are exact (max_lookback_seconds; docs/SQL.md \"Reading the "
                     "past\")", when, h);
  }
  if (st->planned_as_of != t) exec_plan_drop(st); /* a kept plan may use an index */
  st->planned_as_of = t;
  st->as_of_ms = t;
  exec_as_of_swap(t);
  return EXEC_OK;
}

int exec_as_of_explain(exec_stmt *st) {
  char when[80], line[200];
  cat_ms_text(st->as_of_ms, when, sizeof when);
  int n = snprintf(line, sizeof line, "READ AS OF %s UTC (cells at or before it; the look-back "
                   "window keeps them exact)", when);
  char **lines = plan_arena_alloc(&st->run_arena, (size_t)(st->n_lines + 1) * sizeof *lines);
  char *l = plan_arena_strndup(&st->run_arena, line, (size_t)n);
  if (!lines || !l) return EXEC_NOMEM;
  lines[0] = l;
  for (int i = 0; i < st->n_lines; i++) lines[i + 1] = st->lines[i];
  st->lines = lines;
  st->n_lines++;
  return EXEC_OK;
}

int exec_as_of_explain_json(exec_stmt *st, char **doc) {
  if (!*doc || (*doc)[0] != '{') return EXEC_OK;
  char when[80], head[128];
  cat_ms_text(st->as_of_ms, when, sizeof when);
  int n = snprintf(head, sizeof head, "{\"as_of\": \"%s UTC\", ", when);
  size_t rest = strlen(*doc + 1);
  char *d = plan_arena_alloc(&st->run_arena, (size_t)n + rest + 1);
  if (!d) return EXEC_NOMEM;
  memcpy(d, head, (size_t)n);
  memcpy(d + n, *doc + 1, rest + 1);
  *doc = d;
  return EXEC_OK;
}
