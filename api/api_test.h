/*
** api/api_test.h: test hooks of the public API, for Rowan's own tests and the sqllogictest
** runner (tests/slt/). Not part of the public interface (include/rowan.h): programs that
** embed librowan must not use these; they may change without notice.
**
** What they give: the store under a connection, so a test can flush memstores to store
** files before it checks golden EXPLAIN output (estimates and "blocks read" then depend on
** store files, not on what happens to sit in a memstore).
*/
#ifndef ROWAN_API_TEST_H
#define ROWAN_API_TEST_H

#include "rowan.h"
#include "kv/kv.h"

/* Flush every memstore of the connection's store to store files and wait (kv_flush on all
** tables). Returns ROWAN_OK, ROWAN_MISUSE (db NULL), ROWAN_READONLY, ROWAN_IOERR or
** ROWAN_FULL; the connection's error (rowan_errmsg) describes a failure. */
int api_test_flush(rowan_db *db);

/* Major-compact every table of the store (kv_compact on all tables, major). Return codes as
** api_test_flush. */
int api_test_compact(rowan_db *db);

/* The kind of scan the statement ran or will run (exec_scan_kind: "NOTHING", "POINT
** LOOKUP", "RANGE SCAN", "SKIP SCAN", "FULL SCAN"), or NULL for a statement without a scan,
** a NULL stmt, or before its first rowan_step. The string is static. */
const char *api_test_scan_kind(rowan_stmt *stmt);

/* The store the connection opened (not owned by the caller), or NULL for a NULL db. */
kv_db *api_test_kv(rowan_db *db);

#endif /* ROWAN_API_TEST_H */
