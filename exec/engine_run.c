/*
** exec/engine_run.c: the first and later steps of SELECT, UPSERT and DELETE, with EXPLAIN
** and EXPLAIN ANALYZE: plan (planner/select.c) with the bound parameters, then either run
** the query row by row, or run the statement to completion and print the plan with the
** actual figures, one line per result row (column PLAN). Also CHECK INDEX: runs the check
** (exec/index.h exec_index_check) and returns its counts and first problems as rows of
** (ITEM VARCHAR, N BIGINT): DATA ROWS, INDEX ROWS, MISSING, EXTRA, MISMATCHED with their
** counts, then one row per described problem with N NULL.
**
** Plan reuse: a SELECT (or the source of UPSERT SELECT) keeps its plan_query across resets
** while the session's schema_gen is unchanged. The next run compares its parameter values
** with the ones the plan was made from: equal, the plan runs as it is; different, a plan
** over the table itself is rebuilt without estimates or index choice (planner/
** plan_reuse.h), and a plan that chose an index is made again in full. The plan is built
** from copies of the parameter values (q_params) that live as long as it does.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "exec/engine_int.h"
#include "exec/parallel.h"
#include "exec/index.h"
#include "exec/sequence.h"
#include "planner/plan_reuse.h"

static double mono_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int plan_err(int rc, const char *msg, exec_error *err) {
  return exec_fail(err, rc, -1, "%s", msg);
}

static int next_line(exec_stmt *st) {
  if (st->line_pos >= st->n_lines) return EXEC_DONE;
  const char *l = st->lines[st->line_pos++];
  st->line_val = cat_v_str(CAT_T_VARCHAR, l, strlen(l));
  st->row = &st->line_val;
  return EXEC_ROW;
}

/* ---- Plan reuse ----------------------------------------------------------------------- */
void exec_plan_drop(exec_stmt *st) {
  if (st->q_built) plan_query_free(&st->q);
  st->q_built = false;
  st->q_kept = false;
  st->pt.n = 0; /* the template points into q and the arena */
  plan_arena_reset(&st->plan_arena);
}

/* Same SQL value, type and bytes (a reused plan was derived from exactly these values). */
static bool same_value(const cat_value *a, const cat_value *b) {
  if (a->is_null != b->is_null || a->type.id != b->type.id ||
      a->type.precision != b->type.precision || a->type.scale != b->type.scale ||
      a->type.length != b->type.length)
    return false;
  if (a->is_null) return true;
  switch (a->type.id) {
    case CAT_T_BOOLEAN: return a->u.b == b->u.b;
    case CAT_T_FLOAT: case CAT_T_DOUBLE: return memcmp(&a->u.d, &b->u.d, sizeof a->u.d) == 0;
    case CAT_T_DECIMAL: return a->u.dec.v == b->u.dec.v && a->u.dec.scale == b->u.dec.scale;
    case CAT_T_CHAR: case CAT_T_VARCHAR: case CAT_T_VARBINARY: case CAT_T_ARRAY:
      return a->u.s.len == b->u.s.len &&
             (a->u.s.len == 0 || memcmp(a->u.s.p, b->u.s.p, a->u.s.len) == 0);
    default: return a->u.i == b->u.i;
  }
}

static bool same_params(const exec_stmt *st) {
  for (int i = 0; i < st->n_params; i++)
    if (!same_value(&st->q_params[i], &st->run_params[i])) return false;
  return true;
}

static bool is_bytes(const cat_value *v) {
  return !v->is_null && cat_type_has_bytes(v->type.id);
}

/* Copy run_params into q_params (strings into q_pbytes): the plan is built from these
** copies, so whatever it keeps of a parameter outlives later binds. */
static int keep_params(exec_stmt *st, exec_error *err) {
  size_t need = 0;
  for (int i = 0; i < st->n_params; i++)
    if (is_bytes(&st->run_params[i])) need += st->run_params[i].u.s.len;
  if (need > st->q_pbytes_cap) {
    uint8_t *p = realloc(st->q_pbytes, need);
    if (!p) return exec_fail(err, EXEC_NOMEM, -1, "out of memory");
    st->q_pbytes = p;
    st->q_pbytes_cap = need;
  }
  size_t off = 0;
  for (int i = 0; i < st->n_params; i++) {
    cat_value v = st->run_params[i];
    if (is_bytes(&v)) {
      if (v.u.s.len) memcpy(st->q_pbytes + off, v.u.s.p, v.u.s.len);
      if (st->q_pbytes) v.u.s.p = st->q_pbytes + off; /* (all empty: nothing copied, none read) */
      off += v.u.s.len;
    }
    st->q_params[i] = v;
  }
  return EXEC_OK;
}

/* The SELECT plan q for this run: the kept one when the schema and the parameter values are
** unchanged; else re-planned (plan_query_rebuild for a table-scan plan, in full otherwise).
** EXPLAIN always plans in full and keeps nothing. */
static int plan_select_run(exec_stmt *st, const plan_select *sel, char *msg, size_t cap) {
  const plan_bound *b = &st->bound;
  if (b->n_subs) { /* subqueries' values (exec/engine_sub.c) may change: plan each run */
    exec_plan_drop(st);
    st->q_built = true;
    st->q_kept = false;
    int rc = plan_query_build(&st->s->be, sel, st->all_params, st->n_all, &st->plan_arena, &st->q,
                              msg, cap);
    st->q.n_subs = st->n_sub_plans;
    st->q.subs = st->sub_plans;
    st->q.sub_acts = st->sub_acts;
    st->plan_stats.full++;
    return rc;
  }
  bool valid = !b->explain && st->q_built && st->q_kept && st->q_gen == st->s->schema_gen;
  if (valid && same_params(st)) {
    st->plan_stats.reused++;
    return EXEC_OK;
  }
  exec_error e;
  int rc;
  if (valid && st->pt.n > 0) { /* a point lookup: the new key into the kept plan */
    rc = keep_params(st, &e);
    if (rc) {
      exec_plan_drop(st);
      return snprintf(msg, cap, "%s", e.msg), rc;
    }
    if (plan_point_key_rebind(&st->pt, &st->q, st->q_params, st->n_params) == 0) {
      st->plan_stats.patched++;
      return EXEC_OK;
    }
    /* these values make another plan (NOTHING, a residual term): plan again below */
  }
  bool light = valid && st->q_light;
  exec_plan_drop(st);
  rc = keep_params(st, &e);
  if (rc) return snprintf(msg, cap, "%s", e.msg), rc;
  st->q_built = true;
  if (light) {
    rc = plan_query_rebuild(&st->s->be, sel, st->q_params, st->n_params, &st->plan_arena, &st->q,
                            msg, cap);
    st->plan_stats.rebuilt++;
  } else {
    rc = plan_query_build(&st->s->be, sel, st->q_params, st->n_params, &st->plan_arena, &st->q,
                          msg, cap);
    st->plan_stats.full++;
    st->q_light = !st->q.join && (!st->q.has_scan || !st->q.scan.index); /* a join plans
                                                                     in full each time */
  }
  if (rc) return rc;
  st->q_kept = !b->explain;
  st->q_gen = st->s->schema_gen;
  if (st->q_kept && st->q_light) plan_point_key_init(&st->pt, &st->q, &st->plan_arena);
  return EXEC_OK;
}

/* Why a statement runs its scan serially whatever the plan, or NULL. */
static const char *serial_why(const plan_bound *b) {
  return b->n_seqs      ? "NEXT VALUE FOR is evaluated row by row"
         : b->n_applies ? "a correlated subquery is run per row"
                        : NULL;
}

/* exec_query.late_par: the columnar aggregate declined at run time; the rows path's chunks. */
static int late_par(void *arg, exec_error *err) {
  exec_stmt *st = arg;
  return exec_par_attach(st->s, &st->q, &st->plan_arena, serial_why(&st->bound), true, err);
}

/* Build the plan of the statement's row source. */
static int build(exec_stmt *st, exec_error *err) {
  char msg[EXEC_ERRMSG_MAX];
  msg[0] = 0;
  const plan_bound *b = &st->bound;
  const plan_select *sel = b->kind == SQL_STMT_SELECT ? b->select
                           : b->kind == SQL_STMT_UPSERT ? b->upsert->select
                                                        : NULL;
  int rc = exec_run_subqueries(st, err); /* exec/engine_sub.c */
  if (rc && st->key_list_over && !st->no_key_lists) {
    /* a primary key's IN (SELECT ...) values pass the join memory: bind it again as a semi
       join, which spills (planner/bind_subquery.c key_list), and keep that binding */
    st->key_list_over = false;
    st->no_key_lists = true;
    exec_free_subqueries(st);
    rc = exec_stmt_bind_ast(st, err);
    if (!rc) rc = exec_run_subqueries(st, err);
    b = &st->bound;
    sel = b->kind == SQL_STMT_SELECT ? b->select
          : b->kind == SQL_STMT_UPSERT ? b->upsert->select : NULL;
  }
  if (rc) return rc;
  if (sel) {
    rc = plan_select_run(st, sel, msg, sizeof msg);
    if (rc) return plan_err(rc, msg, err);
    if (b->kind == SQL_STMT_SELECT && st->q.has_scan) { /* exec/parallel.h */
      rc = exec_par_attach(st->s, &st->q, &st->plan_arena, serial_why(b), false, err);
      if (rc) return rc;
    }
    if (st->q.has_scan) {
      st->scan_table = sel->table;
      st->scan_kind = plan_scan_kind_name(st->q.scan.ranges.kind);
    }
  } else if (b->kind == SQL_STMT_DELETE) {
    st->del_built = true;
    rc = plan_delete_scan_build(&st->s->be, b->del, st->all_params, st->n_all,
                                &st->run_arena, &st->del_scan, msg, sizeof msg);
    if (rc) return plan_err(rc, msg, err);
    st->scan_table = b->del->table;
    st->scan_kind = plan_scan_kind_name(st->del_scan.ranges.kind);
  }
  return EXEC_OK;
}

static int explain_lines(exec_stmt *st, const plan_actuals *a, exec_error *err) {
  const plan_bound *b = &st->bound;
  plan_actuals with_applies; /* the correlated subqueries' runs (exec/engine_apply.c) */
  if (a && st->apply_act) {
    with_applies = *a;
    with_applies.applies = st->apply_act;
    a = &with_applies;
  }
  const plan_query *q = st->q_built ? &st->q : NULL;
  const plan_scan *ds = st->del_built ? &st->del_scan : NULL;
  int rc;
  if (b->json) { /* one row: the document */
    char *doc = NULL;
    rc = plan_explain_json(b, q, ds, a, &st->run_arena, &doc);
    if (!rc && st->as_of_ms) rc = exec_as_of_explain_json(st, &doc); /* exec/as_of.c */
    st->lines = rc ? NULL : plan_arena_alloc(&st->run_arena, sizeof *st->lines);
    if (st->lines) st->lines[0] = doc;
    st->n_lines = st->lines ? 1 : 0;
    if (!rc && !st->lines) rc = EXEC_NOMEM;
  } else {
    rc = plan_explain(b, q, ds, a, &st->run_arena, &st->lines, &st->n_lines);
    if (!rc && st->as_of_ms) rc = exec_as_of_explain(st); /* exec/as_of.c */
  }
  if (rc) return exec_fail(err, rc, -1, "out of memory");
  st->line_pos = 0;
  return EXEC_OK;
}

int exec_run_dml(exec_stmt *st, exec_error *err) {
  const plan_bound *b = &st->bound;
  st->scan_kind = NULL;
  st->scan_table = NULL;
  int rc = build(st, err);
  if (rc) return rc;
  if (b->analyze || b->kind != SQL_STMT_SELECT) memset(&st->last_act, 0, sizeof st->last_act);
  if (b->explain && !b->analyze) {
    rc = explain_lines(st, NULL, err);
    if (rc) return rc;
    return next_line(st);
  }
  double t0 = b->analyze ? mono_ms() : 0; /* timers only for EXPLAIN ANALYZE */
  if (b->kind == SQL_STMT_SELECT) {
    rc = exec_query_open_cached(&st->x, &st->s->be, &st->q, st->all_params, st->n_all,
                                st->now_us, st->s->sort_mem, st->s->txn, &st->qcache, err);
    st->x_open = true;
    exec_txn_reader_open(st);
    if (rc) return rc;
    st->x.timing = b->analyze;
    st->x.join_mem = st->s->join_mem;
    if (b->n_seqs) {
      st->x.row_hook = exec_seq_row;
      st->x.row_hook_arg = st;
    }
    if (st->q.has_scan) {
      st->x.late_par = late_par;
      st->x.late_par_arg = st;
    }
    if (!b->analyze) {
      rc = exec_query_next(&st->x, err);
      if (rc == EXEC_ROW) st->row = st->x.out;
      return rc;
    }
    uint64_t n = 0;
    while ((rc = exec_query_next(&st->x, err)) == EXEC_ROW) n++;
    if (rc != EXEC_DONE) return rc;
    exec_query_close(&st->x);
    st->x_open = false;
    exec_txn_reader_done(st);
    st->last_act = st->x.act;
    st->last_act.total_ms = mono_ms() - t0;
    st->act = &st->last_act;
  } else {
    rc = b->kind == SQL_STMT_UPSERT ? exec_write_upsert(st, err) : exec_write_delete(st, err);
    st->act = &st->last_act;
    if (rc) return rc;
    if (!b->analyze) return EXEC_DONE;
    st->last_act.total_ms = mono_ms() - t0;
  }
  rc = explain_lines(st, &st->last_act, err);
  if (rc) return rc;
  return next_line(st);
}

/* ---- CHECK INDEX ------------------------------------------------------------------------ */
int exec_check_columns(exec_stmt *st) {
  st->n_cols = 2;
  st->col_names = plan_arena_alloc(&st->arena, 2 * sizeof(char *));
  st->col_types = plan_arena_alloc(&st->arena, 2 * sizeof(cat_type));
  if (!st->col_names || !st->col_types) return EXEC_NOMEM;
  st->col_names[0] = "ITEM";
  st->col_names[1] = "N";
  st->col_types[0] = cat_type_of(CAT_T_VARCHAR);
  st->col_types[1] = cat_type_of(CAT_T_BIGINT);
  return EXEC_OK;
}

static int next_check(exec_stmt *st) {
  if (st->line_pos >= st->n_lines) return EXEC_DONE;
  st->row = &st->check_rows[2 * st->line_pos++];
  return EXEC_ROW;
}

int exec_run_check(exec_stmt *st, exec_error *err) {
  const sql_drop *d = st->ast->u.drop;
  exec_index_check_result *res = plan_arena_alloc(&st->run_arena, sizeof *res);
  if (!res) return exec_fail(err, EXEC_NOMEM, -1, "out of memory");
  int rc = exec_index_check(st->s->cat, &st->s->be, d->table ? d->table : "", d->name, st->s->txn,
                            res, err);
  if (rc) return rc;
  int n = 5 + res->n_details;
  st->check_rows = plan_arena_alloc(&st->run_arena, (size_t)n * 2 * sizeof(cat_value));
  if (!st->check_rows) return exec_fail(err, EXEC_NOMEM, -1, "out of memory");
  static const char *const items[5] = {"DATA ROWS", "INDEX ROWS", "MISSING", "EXTRA",
                                       "MISMATCHED"};
  const uint64_t counts[5] = {res->data_rows, res->index_rows, res->missing, res->extra,
                              res->mismatched};
  cat_value *v = st->check_rows;
  for (int i = 0; i < n; i++) {
    const char *text = i < 5 ? items[i] : res->details[i - 5];
    v[2 * i] = cat_v_str(CAT_T_VARCHAR, text, strlen(text));
    v[2 * i + 1] = i < 5 ? cat_v_int(CAT_T_BIGINT, (int64_t)counts[i])
                         : cat_v_null(cat_type_of(CAT_T_BIGINT));
  }
  st->n_lines = n;
  st->line_pos = 0;
  return next_check(st);
}

int exec_next_row(exec_stmt *st, exec_error *err) {
  if (st->check_rows) return next_check(st);
  if (st->lines) return next_line(st);
  if (st->x_open && st->schema_gen != st->s->schema_gen)
    return exec_fail(err, EXEC_MISUSE, -1,
                     "the schema changed while the statement was running; reset it");
  if (!st->x_open) return EXEC_DONE;
  int rc = exec_query_next(&st->x, err);
  if (rc == EXEC_ROW) st->row = st->x.out;
  return rc;
}
