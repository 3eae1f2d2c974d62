/*
** exec/engine_run.c: the first and later steps of SELECT, UPSERT and DELETE, with EXPLAIN
** and EXPLAIN ANALYZE: plan (planner/select.c) with the bound parameters, then either run
** the query row by row, or run the statement to completion and print the plan with the
** actual figures, one line per result row (column PLAN). Also CHECK INDEX: runs the check
** (exec/index.h exec_index_check) and returns its counts and first problems as rows of
** (ITEM VARCHAR, N BIGINT): DATA ROWS, INDEX ROWS, MISSING, EXTRA, MISMATCHED with their
** counts, then one row per described problem with N NULL.
*/
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "exec/engine_int.h"
#include "exec/index.h"

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

/* Build the plan of the statement's row source. */
static int build(exec_stmt *st, exec_error *err) {
  char msg[EXEC_ERRMSG_MAX];
  msg[0] = 0;
  const plan_bound *b = &st->bound;
  const plan_select *sel = b->kind == SQL_STMT_SELECT ? b->select
                           : b->kind == SQL_STMT_UPSERT ? b->upsert->select
                                                        : NULL;
  int rc;
  if (sel) {
    st->q_built = true;
    rc = plan_query_build(st->s->db, sel, st->run_params, st->n_params, &st->run_arena, &st->q,
                          msg, sizeof msg);
    if (rc) return plan_err(rc, msg, err);
    if (st->q.has_scan) {
      st->scan_table = sel->table;
      st->scan_kind = plan_scan_kind_name(st->q.scan.ranges.kind);
    }
  } else if (b->kind == SQL_STMT_DELETE) {
    st->del_built = true;
    rc = plan_scan_build(st->s->db, b->del->table, b->del->where, NULL, st->run_params,
                         st->n_params, &st->run_arena, &st->del_scan, msg, sizeof msg);
    if (rc) return plan_err(rc, msg, err);
    st->scan_table = b->del->table;
    st->scan_kind = plan_scan_kind_name(st->del_scan.ranges.kind);
  }
  return EXEC_OK;
}

static int explain_lines(exec_stmt *st, const plan_actuals *a, exec_error *err) {
  const plan_bound *b = &st->bound;
  const plan_query *q = st->q_built ? &st->q : NULL;
  const plan_scan *ds = st->del_built ? &st->del_scan : NULL;
  int rc = plan_explain(b, q, ds, a, &st->run_arena, &st->lines, &st->n_lines);
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
  if (b->explain && !b->analyze) {
    rc = explain_lines(st, NULL, err);
    if (rc) return rc;
    return next_line(st);
  }
  double t0 = mono_ms();
  if (b->kind == SQL_STMT_SELECT) {
    rc = exec_query_open(&st->x, st->s->db, &st->q, st->run_params, st->n_params, st->now_us,
                         st->s->sort_mem, st->s->txn, err);
    st->x_open = true;
    if (rc) return rc;
    st->x.timing = b->analyze;
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
    st->last_act = st->x.act;
    st->last_act.total_ms = mono_ms() - t0;
  } else {
    rc = b->kind == SQL_STMT_UPSERT ? exec_write_upsert(st, err) : exec_write_delete(st, err);
    if (rc) return rc;
    st->last_act.total_ms = mono_ms() - t0;
    if (!b->analyze) return EXEC_DONE;
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
  int rc = exec_index_check(st->s->cat, st->s->db, d->table ? d->table : "", d->name, st->s->txn,
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
