/*
** catalog/row_ts.h: Phoenix's ROW_TIMESTAMP key column: which types may be one, and the
** mapping between its values and the store's cell timestamps (milliseconds since the Unix
** epoch, UTC), shared by the executor (every cell of a row is written at the value's
** timestamp) and the planner (a predicate on the column becomes the scan's time range).
** docs/SQL.md "ROW_TIMESTAMP" gives the rules. What it does not do: validate a CREATE
** TABLE (exec/ddl.c) or write cells.
*/
#ifndef ROWAN_CAT_ROW_TS_H
#define ROWAN_CAT_ROW_TS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "catalog/catalog.h"

/* True for the type ids a ROW_TIMESTAMP column may have: BIGINT (milliseconds), DATE and
** TIMESTAMP. TIME is refused: Rowan's TIME is a time of day, not a point in time (Phoenix's
** TIME is a point in time, hence its rule allows it). */
bool cat_row_ts_type_ok(int type_id);

/* Mark column `name` of t ROW_TIMESTAMP (before its derived fields are computed).
** CAT_ERR_INVALID when it is not a column. */
int cat_row_ts_mark(cat_table *t, const char *name, cat_error *err);

/* The cell timestamp of ROW_TIMESTAMP value v (a value of the column's type): BIGINT as
** is, DATE days * 86,400,000, TIMESTAMP microseconds / 1,000 rounded down (cells keep
** milliseconds, as HBase's do). CAT_ERR_INVALID (the message names the column `col`)
** when v is NULL or before 1970-01-01 00:00:00 UTC (cell timestamps are >= 0, Phoenix's
** rule too). */
int cat_row_ts_of(const cat_value *v, const char *col, int64_t *ms, cat_error *err);

/* The value of type type_id (BIGINT, DATE, TIMESTAMP) whose cell timestamp is ms, rounded
** down for DATE (the server time an UPSERT gives the column when it names none). */
cat_value cat_row_ts_value(int type_id, int64_t ms);

/* Microseconds since the epoch of a BIGINT, DATE or TIMESTAMP value of the column's
** scale (BIGINT milliseconds * 1000), for comparing a bound with cell timestamps; false
** for another type or NULL. */
bool cat_row_ts_micros(const cat_value *v, int col_type, int64_t *us);

/* Cell timestamp ms as UTC text "YYYY-MM-DD HH:MM:SS.mmm" into buf (EXPLAIN's time range
** and AS OF lines, their errors); truncated to cap. */
void cat_ms_text(int64_t ms, char *buf, size_t cap);

#endif /* ROWAN_CAT_ROW_TS_H */
