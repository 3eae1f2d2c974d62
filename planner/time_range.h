/*
** planner/time_range.h: the scan time range of a table with a ROW_TIMESTAMP column, and the
** EXPLAIN line that shows it. Every cell of such a table's row carries the row's
** ROW_TIMESTAMP value as its timestamp (exec/row_ts.h), so the AND terms of WHERE that
** bound the column by constants or parameters (=, <, <=, >, >=, BETWEEN) bound the cells'
** timestamps too: the kv scan gets that range (kv_scan_options.ts_min/ts_max with
** ts_per_row) and skips the store files whose trailer's timestamps miss it (docs/KV.md).
** The terms stay where the key ranges and filters put them: the range only leaves out
** cells no row of the answer has. What it does not do: key ranges (planner/keyrange.c).
*/
#ifndef ROWAN_PLANNER_TIME_RANGE_H
#define ROWAN_PLANNER_TIME_RANGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "catalog/catalog.h"
#include "planner/expr.h"

struct plan_scan;
struct kv_scan_metrics;

/* Set sc->ts_min / sc->ts_max (milliseconds, [ts_min, ts_max)) from the AND terms of where
** over table t's ROW_TIMESTAMP column (PX_COLUMN slots are t's column indexes); both stay 0
** when t has none, no term bounds it, or the bound is before 1970 (no cell is). */
void plan_time_range(const cat_table *t, const plan_expr *where, const cat_value *params,
                     int n_params, struct plan_scan *sc);

/* The EXPLAIN line of sc's time range ("    TIME RANGE: ... (actual store files: ...)") in
** buf, with the store files the scan left out when m (EXPLAIN ANALYZE's metrics) is given,
** and its JSON node in j ("TIME RANGE": from, to (absent: none), column, actual {pruned,
** read}; planner/explain_int.h); 0 when sc has none (buf and j unchanged), else the text's
** length. */
struct xjson;
size_t plan_time_range_explain(const struct plan_scan *sc, const struct kv_scan_metrics *m,
                               struct xjson *j, char *buf, size_t cap);

#endif /* ROWAN_PLANNER_TIME_RANGE_H */
