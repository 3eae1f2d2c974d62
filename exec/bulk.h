/*
** exec/bulk.h: bulk load of SQL rows given as text, over kv/bulk/bulk.h (the way HBase
** bulk-loads HFiles): each row is parsed with the catalog's typed parsers, turned into its
** row key and cells (the cells exec/rowcodec.h writes for an UPSERT), and added to one
** kv bulk load; commit writes sorted store files and names them in the MANIFEST at once,
** with no WAL and no memstore.
**
** Semantics, as UPSERT with the load's timestamp (the clock at exec_bulk_begin): each row
** sets the columns given (a NULL field deletes that column's cell) and keeps the others; a
** later row of the same key in the load replaces an earlier one column by column. The load
** is atomic (all rows or none) and newer than every commit before it. Into a column family
** that held no cell at begin, a NULL of a row the load adds once writes nothing (there is
** nothing to delete); the commit then fails (EXEC_ERROR, nothing loaded) if another
** connection wrote a cell into such a family during the load.
** Indexes: a table with ACTIVE indexes is loaded only when it is empty at begin (checked
** again at commit): the index rows are then added to the same load, and a row whose key
** repeats an earlier row of the load is EXEC_CONSTRAINT (its index row could not be taken
** back). A table with an index and rows is refused (EXEC_ERROR naming the index: index
** rows of rows already present could not be removed), as is one with an index still
** BUILDING; DISABLED indexes are not written. Not inside a transaction (EXEC_MISUSE).
** A DDL statement on the connection during the load (CREATE INDEX, DROP TABLE, ...) makes
** the next add and the commit fail with EXEC_ERROR: nothing of the load is loaded.
** Not here: reading files or CSV (cli/import.c), the public API (api/).
*/
#ifndef ROWAN_EXEC_BULK_H
#define ROWAN_EXEC_BULK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "exec/engine.h"

typedef struct exec_bulk exec_bulk;

/* Start a load into `table` of rows of n_cols fields for the columns named in cols (names
** matched exactly, then upper-cased; every PK column must be among them, none twice).
** run_bytes is the load's memory bound (kv_bulk_options.run_bytes; 0 = kv's default, 256 MiB). Errors: EXEC_ERROR (unknown
** table or column, a PK column missing, a duplicate column, a non-empty table with an
** index, an index being built), EXEC_IOERR / EXEC_CORRUPT (checking that it is empty),
** EXEC_MISUSE (inside a transaction, NULL argument), EXEC_READONLY, EXEC_NOMEM.
** On success *out is the load (free with exec_bulk_free); on failure NULL. */
int exec_bulk_begin(exec_session *s, const char *table, int n_cols, const char *const *cols,
                    size_t run_bytes, exec_bulk **out, exec_error *err);

/* Add one row: fields[i] (lens[i] bytes; fields[i] NULL = SQL NULL) for column cols[i].
** EXEC_CONSTRAINT for a value that does not parse or fit ("column TEMP: invalid DOUBLE
** 'abc'"), NULL in a NOT NULL column: nothing of the row is kept and the load goes on.
** Other errors (EXEC_IOERR, EXEC_FULL spilling a sorted run, EXEC_NOMEM) end the load:
** it can only be freed. */
int exec_bulk_add_text(exec_bulk *b, const char *const *fields, const size_t *lens,
                       exec_error *err);

/* Add one row of typed values: vals[i] (is_null = SQL NULL) for column cols[i], converted
** as a parameter bound with that value and stored into the column would be (catalog/
** value.h's cast rules, then the column's limits). Strings are read during the call only.
** Errors as exec_bulk_add_text ("column N: value 300 out of range for TINYINT"). */
int exec_bulk_add_values(exec_bulk *b, const cat_value *vals, exec_error *err);

/* Rows added so far. */
int64_t exec_bulk_rows(const exec_bulk *b);

/* Did every column family of the table (its key family too) and of each of its ACTIVE
** indexes hold no cell, in memstores or store files, at begin? false for NULL. */
bool exec_bulk_was_empty(const exec_bulk *b);

/* Was the last exec_bulk_add_text or _add_values refused (EXEC_CONSTRAINT) only because its row key
** repeats an earlier row of a load into a table with an index? false for NULL. */
bool exec_bulk_last_repeat(const exec_bulk *b);

/* Commit the load: all rows become visible at once, durably, or (on error) none.
** Errors: as kv_bulk_commit mapped to EXEC_* (EXEC_IOERR, EXEC_FULL, EXEC_CORRUPT,
** EXEC_NOTFOUND if the table was dropped meanwhile, EXEC_MISUSE if committed twice). */
int exec_bulk_commit(exec_bulk *b, exec_error *err);

/* Free the load; an uncommitted one is abandoned (nothing of it is visible). NULL: no-op. */
void exec_bulk_free(exec_bulk *b);

#endif /* ROWAN_EXEC_BULK_H */
