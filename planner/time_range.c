/*
** planner/time_range.c: the ROW_TIMESTAMP time range of a scan (planner/time_range.h).
**
** A column value v (microseconds for TIMESTAMP; DATE days and BIGINT milliseconds scaled to
** microseconds) is stored in cells at floor(v / 1000) ms. So v >= X gives cells at or
** after floor(X / 1000), v > X those at or after floor((X + 1) / 1000), v <= Y those before
** floor(Y / 1000) + 1 and v < Y those before floor((Y - 1) / 1000) + 1. Bounds the term
** does not give exactly (a fraction compared with a BIGINT column, a string) are left out:
** the range is never narrower than the rows the terms select.
*/
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "catalog/datetime.h"
#include "catalog/row_ts.h"
#include "catalog/value.h"
#include "kv/kv.h"
#include "planner/explain_int.h"
#include "planner/plan.h"
#include "planner/time_range.h"
#include "sql/ast.h"

typedef struct bounds {
  int64_t lo, hi; /* cells in [lo, hi) ms */
  bool any;       /* a term bounded them */
} bounds;

/* The constant (or bound parameter) e as microseconds on the column's scale. */
static bool micros_of(const plan_expr *e, const cat_value *params, int n_params, int col_type,
                      int64_t *us) {
  if (e->kind == PX_CONST) return cat_row_ts_micros(&e->value, col_type, us);
  if (e->kind == PX_PARAM && params && e->param >= 1 && e->param <= n_params)
    return cat_row_ts_micros(&params[e->param - 1], col_type, us);
  return false;
}

static void at_least(bounds *b, int64_t ms) { /* cells >= ms */
  if (ms > b->lo) b->lo = ms;
  b->any = true;
}

static void below(bounds *b, int64_t ms) { /* cells < ms */
  if (ms < b->hi) b->hi = ms;
  b->any = true;
}

/* One comparison col op value (col on the left). */
static void compare(bounds *b, int op, int64_t us) {
  switch (op) {
  case SQL_OP_EQ: at_least(b, cat_dt_floor_div(us, 1000)); below(b, cat_dt_floor_div(us, 1000) + 1); break;
  case SQL_OP_GE: at_least(b, cat_dt_floor_div(us, 1000)); break;
  case SQL_OP_GT: at_least(b, cat_dt_floor_div(us + 1, 1000)); break;
  case SQL_OP_LE: below(b, cat_dt_floor_div(us, 1000) + 1); break;
  case SQL_OP_LT: below(b, cat_dt_floor_div(us - 1, 1000) + 1); break;
  default: break;
  }
}

/* The operator of `v op col` written as `col op' v`. */
static int flip(int op) {
  switch (op) {
  case SQL_OP_LT: return SQL_OP_GT;
  case SQL_OP_LE: return SQL_OP_GE;
  case SQL_OP_GT: return SQL_OP_LT;
  case SQL_OP_GE: return SQL_OP_LE;
  default: return op;
  }
}

static bool is_col(const plan_expr *e, int col) { return e && e->kind == PX_COLUMN && e->column == col; }

static void walk(const plan_expr *e, int col, int type, const cat_value *params, int n_params,
                 bounds *b) {
  if (!e) return;
  int64_t us, us2;
  if (e->kind == PX_BINARY && e->op == SQL_OP_AND) {
    walk(e->args[0], col, type, params, n_params, b);
    walk(e->args[1], col, type, params, n_params, b);
  } else if (e->kind == PX_BINARY && e->n_args == 2) {
    if (is_col(e->args[0], col) && micros_of(e->args[1], params, n_params, type, &us))
      compare(b, e->op, us);
    else if (is_col(e->args[1], col) && micros_of(e->args[0], params, n_params, type, &us))
      compare(b, flip(e->op), us);
  } else if (e->kind == PX_BETWEEN && !e->negated && e->n_args == 3 && is_col(e->args[0], col) &&
             micros_of(e->args[1], params, n_params, type, &us) &&
             micros_of(e->args[2], params, n_params, type, &us2)) {
    compare(b, SQL_OP_GE, us);
    compare(b, SQL_OP_LE, us2);
  }
}

void plan_time_range(const cat_table *t, const plan_expr *where, const cat_value *params,
                     int n_params, plan_scan *sc) {
  sc->ts_min = sc->ts_max = 0;
  if (t->row_ts < 0 || !where) return;
  bounds b = {INT64_MIN, INT64_MAX, false};
  walk(where, t->row_ts, t->columns[t->row_ts].type.id, params, n_params, &b);
  if (!b.any || b.hi <= 0) return; /* nothing, or before every cell (kv: ts_max 0 = none) */
  sc->ts_min = b.lo > 0 ? b.lo : 0;
  sc->ts_max = b.hi == INT64_MAX ? 0 : b.hi;
  /* ts_max <= ts_min (a contradiction): kv reads no cell, as no row matches */
}

size_t plan_time_range_explain(const plan_scan *sc, const kv_scan_metrics *m, xjson *j,
                               char *buf, size_t cap) {
  if (!sc->ts_min && !sc->ts_max) return 0;
  const cat_table *t = sc->table;
  char lo[80], hi[80], act[128] = "";
  cat_ms_text(sc->ts_min, lo, sizeof lo);
  if (sc->ts_max) cat_ms_text(sc->ts_max, hi, sizeof hi);
  else snprintf(hi, sizeof hi, "*");
  xj_node(j, "TIME RANGE");
  xj_str(j, "from", lo);
  if (sc->ts_max) xj_str(j, "to", hi);
  xj_str(j, "column", t->columns[t->row_ts].name);
  if (m) {
    uint64_t skipped = 0, opened = 0;
    for (uint32_t i = 0; i < m->n_families; i++) {
      skipped += m->families[i].files_skipped_ts;
      opened += m->families[i].files_opened;
    }
    snprintf(act, sizeof act, "  (actual store files pruned=%" PRIu64 " read=%" PRIu64 ")",
             skipped, opened);
    xj_obj(j, "actual");
    xj_uint(j, "pruned", skipped);
    xj_uint(j, "read", opened);
    xj_end(j);
  }
  int n = snprintf(buf, cap, "    TIME RANGE: [%s, %s) UTC on cell timestamps (ROW_TIMESTAMP %s: "
                   "store files outside it are not read)%s", lo, hi,
                   t->columns[t->row_ts].name, act);
  return n > 0 ? (size_t)n : 0;
}
