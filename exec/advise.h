/*
** exec/advise.h: the row-key advisor behind include/rowan.h's rowan_advise and the shell's
** .advise: the SELECTs of a query file are parsed and bound against a table, the planner's
** model (planner/advise.h) judges every candidate key and index, and the advice is written
** as text.
** The current key's lines also carry what EXPLAIN prints for the same query (its first line
** and its ESTIMATE line, made by planner/explain.c from the real plan).
**
** Not here: reading the file (the caller hands its text), the model (planner/advise.c).
*/
#ifndef ROWAN_EXEC_ADVISE_H
#define ROWAN_EXEC_ADVISE_H

#include <stddef.h>

#include "exec/engine.h"

/* Advise on the row key of table `table` (exact, else upper-cased as an unquoted SQL name)
** for the statements of sql[0..len), read from `source` (a file name for messages; NULL:
** "the queries"). Every statement must be a SELECT (or EXPLAIN SELECT) from that table
** without parameters. EXEC_OK with *report set to the advice (malloc'ed, NUL-terminated;
** the caller frees it). Errors (*report NULL, err names what and where): EXEC_ERROR (no such
** table; a statement that is not a SELECT, reads another table, joins tables or has
** parameters, named by its line and column in the source; no statement at all), EXEC_SYNTAX
** (a syntax error, with the source's line and column), EXEC_NOMEM, and the store's errors
** while the row keys are sampled. */
int exec_advise(exec_session *s, const char *table, const char *sql, size_t len,
                const char *source, char **report, exec_error *err);

#endif /* ROWAN_EXEC_ADVISE_H */
