/*
** exec/ddl.h: CREATE TABLE, DROP TABLE, CREATE INDEX, DROP INDEX and ALTER TABLE from the
** parsed statement (sql/ast.h) to the catalog (catalog/catalog.h).
**
** CREATE TABLE rules (Phoenix's dialect):
**  - types by name (cat_type_lookup): CHAR(n) (CHAR alone = CHAR(1)), VARCHAR[(n)],
**    DECIMAL[(p[,s])], the others without arguments; bad arguments are errors naming the
**    type and its offset;
**  - NULL / NOT NULL per column; PK columns are NOT NULL unless declared NULL;
**  - the primary key either inline on one column (`k INTEGER PRIMARY KEY [DESC]`) or as
**    `CONSTRAINT name PRIMARY KEY (a, b DESC)`, not both; key columns take no family;
**  - `family.column` puts a column in a family; unqualified non-key columns go to "0";
**  - options, each at most once: VERSIONS=n (n >= 1; as `fam.VERSIONS=n` for one family,
**    else the default of every family), TTL=seconds (table-wide, 0 or FOREVER = none),
**    COMPRESSION='LZ4'|'NONE' and BLOCKSIZE=bytes (1..64 MiB) (table-wide or per family),
**    IMMUTABLE_ROWS=true|false (table-wide); a family option names a family of the table
**    or creates it empty; any other option is an error naming it;
**  - IF NOT EXISTS: an existing table is left alone (EXEC_OK, nothing checked against it).
** DROP TABLE [IF EXISTS] drops the table with its indexes (a table views read: refused, or
** with CASCADE the views first; exec/ddl_view.c). CREATE VIEW and DROP VIEW: exec/ddl_view.c. CREATE INDEX [IF NOT EXISTS]
** records the index in the catalog in state CAT_INDEX_BUILDING, backfills it from the
** table's rows (exec/index.h exec_index_backfill, atomic batches) and sets it ACTIVE; if the
** backfill fails the index is dropped again and the error returned (a crash during it leaves
** the index BUILDING, rebuilt at the next session open); keys are columns ([family.]name) or expressions
** (kept as their canonical SQL text); INCLUDE columns must exist. DROP INDEX [IF EXISTS].
**
** ALTER TABLE (Phoenix's forms; exec/ddl_alter.c, docs/SQL.md "ALTER TABLE"): ADD [IF NOT
** EXISTS] columns: non-key and nullable only (PRIMARY KEY and NOT NULL are errors naming the
** column), a new family made on first use, IF NOT EXISTS skipping the columns there;
** DROP COLUMN [IF EXISTS]: not a key column, not a column an index uses (as a key, in a key
** expression, in INCLUDE: the error names the index) or a view names (exec/ddl_view.c: the
** error names the view), IF EXISTS skipping absent ones; SET:
** the options of CREATE TABLE with its rules, table-wide ones applied to every family, a
** family option naming a family the table has. One catalog commit (cat_alter_table).
** Sequences (exec/ddl_sequence.c, docs/SQL.md "Sequences"): CREATE SEQUENCE [IF NOT EXISTS]
** with Phoenix's options (START [WITH], INCREMENT [BY], MINVALUE, MAXVALUE, CYCLE, CACHE;
** each at most once, integer values; INCREMENT not 0, MINVALUE <= MAXVALUE, START between
** them, CACHE >= 1), DROP SEQUENCE [IF EXISTS].
** Errors: EXEC_ERROR with a message naming the table, column, type or option, and
** err->offset the byte offset of that name in the statement text (as sql_parse gave it);
** EXEC_IOERR / EXEC_FULL / EXEC_CORRUPT / EXEC_NOMEM / EXEC_READONLY from the store.
** Not here: parsing, index maintenance.
*/
#ifndef ROWAN_EXEC_DDL_H
#define ROWAN_EXEC_DDL_H

#include "catalog/catalog.h"
#include "exec/engine.h"
#include "kv/kv.h"
#include "sql/ast.h"

/* Run the DDL statement stmt (kind SQL_STMT_CREATE_TABLE, DROP_TABLE, CREATE_INDEX,
** DROP_INDEX, ALTER_TABLE, CREATE_VIEW or DROP_VIEW) against cat over store db (not NULL; the
** catalog's store: everything is read and written through the catalog's backend,
** cat_backend), without a progress hook (exec_ddl_run_progress). sql is the statement's text (the one sql_parse
** read; reserved for messages, may be NULL). Returns EXEC_OK (also for IF [NOT]
** EXISTS no-ops) or an error filled into *err (see above); EXEC_MISUSE for another
** statement kind. The caller serializes DDL and must drop pointers to the changed table's
** cat_table (and any exec_rowcodec built on it) afterwards. */
int exec_ddl_run(cat_catalog *cat, kv_db *db, const sql_stmt *stmt, const char *sql,
                 exec_error *err);

/* As exec_ddl_run; CREATE INDEX reports the backfill's progress to fn(arg, ...) (may be
** NULL; exec/engine.h exec_progress_fn). */
int exec_ddl_run_progress(cat_catalog *cat, kv_db *db, const sql_stmt *stmt, const char *sql,
                          exec_progress_fn fn, void *arg, exec_error *err);

#endif /* ROWAN_EXEC_DDL_H */
