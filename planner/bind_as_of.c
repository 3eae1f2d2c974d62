/*
** planner/bind_as_of.c: the AS OF clauses of a statement (`FROM t AS OF TIMESTAMP '...'`,
** `FROM t FOR SYSTEM_TIME AS OF TIMESTAMP '...'`), bound to the time the whole statement
** reads at (plan_bound.as_of_ms; docs/SQL.md "Reading the past").
**
** Rules: only a SELECT reads the past (a write at a past time is refused: Phoenix allows
** one through CurrentSCN, Rowan does not); every table the statement reads carries the
** clause, all with one time (a statement reads one point in time; different times in one
** join would need one snapshot per table); the time is a TIMESTAMP literal in UTC, the
** cells' clock, at or after 1970. Whether the time is inside the look-back window is the
** executor's check (it needs the store's clock).
*/
#include <string.h>

#include "catalog/datetime.h"
#include "catalog/status.h"
#include "catalog/value.h"
#include "planner/plan_bind.h"
#include "sql/ast.h"

int bind_as_of(binder *b, const sql_stmt *st, plan_bound *out) {
  if (!st->as_of) return EXEC_OK;
  uint32_t off = st->as_of->off;
  if (st->kind != SQL_STMT_SELECT)
    return bind_error(b, EXEC_ERROR, off, "AS OF is allowed only in a SELECT: a write cannot "
                      "be made in the past");
  if (st->as_of_mixed)
    return bind_error(b, EXEC_ERROR, off, "AS OF names different times in one statement; a "
                      "statement reads the database at one time");
  if (st->n_as_of != out->n_tables)
    return bind_error(b, EXEC_ERROR, off, "AS OF must be given to every table the statement "
                      "reads (%d of %d have it)", st->n_as_of, out->n_tables);
  cat_type ts = {.id = CAT_T_TIMESTAMP};
  cat_value v;
  cat_error ce = {0};
  if (cat_text_parse(&ts, st->as_of->text, st->as_of->text_len, &v, &ce) != CAT_OK)
    return bind_error(b, EXEC_ERROR, off, "AS OF: %s", ce.msg);
  int64_t ms = cat_dt_floor_div(v.u.i, 1000);
  if (ms <= 0)
    return bind_error(b, EXEC_ERROR, off, "AS OF TIMESTAMP '%s' is not after 1970-01-01 "
                      "00:00:00 UTC, where cell timestamps start", st->as_of->text);
  out->as_of_ms = ms;
  return EXEC_OK;
}
