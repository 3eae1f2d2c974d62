/*
** api/advise.c: rowan_advise and rowan_advise_free (contracts in include/rowan.h): the
** arguments checked, the engine's advisor (exec/advise.h) called, its errors mapped to
** ROWAN_* codes with the message and the byte offset kept for rowan_errmsg and
** rowan_error_offset.
**
** Not here: the model (planner/advise.c), the report's text (exec/advise.c), reading a file
** (the shell's .advise).
*/
#include <stdlib.h>
#include <string.h>

#include "api/api_int.h"
#include "exec/advise.h"

int rowan_advise(rowan_db *db, const char *table, const char *sql, int n, const char *source,
                 char **report) {
  if (report) *report = NULL;
  if (!db || !table || !sql || !report) return ROWAN_MISUSE;
  if (!db->sess) return api_error(db, ROWAN_MISUSE, -1, "misuse: the database is not open");
  size_t len = n < 0 ? strlen(sql) : (size_t)n;
  /* as a statement's first step: an interrupt from before the call is forgotten, unless a
     statement is between rows (rowan_interrupt) */
  if (db->n_row_stmts == 0) atomic_store_explicit(&db->interrupt, 0, memory_order_relaxed);
  exec_error err;
  char *r = NULL;
  int rc = exec_advise(db->sess, table, sql, len, source, &r, &err);
  if (rc) return api_error(db, api_code_of_exec(rc), err.offset, "%s", err.msg);
  *report = r;
  api_clear_error(db);
  return ROWAN_OK;
}

void rowan_advise_free(char *report) { free(report); }
