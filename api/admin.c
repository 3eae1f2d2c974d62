/*
** api/admin.c: store maintenance through the public API: rowan_flush and rowan_compact
** (contracts in include/rowan.h). They are HBase's Admin.flush and Admin.compact /
** Admin.majorCompact, applied to every table of the store at once, so an embedding program
** (or the shell's .flush and .compact) can put its rows into store files before it measures
** reads, or reclaim the space of deleted and expired cells; and rowan_recovery_info, what
** the open replayed from the write-ahead log and any torn tail it dropped.
**
** Also the other views of a store's files: rowan_refresh (a read-only handle catches up
** with the store's writer, kv_refresh, and loads the catalog again) and rowan_backup (an
** online copy, kv_backup).
** What it does not do: choose when to flush or compact on its own (the store's background
** thread does that, kv/db/db_bg.c), or act on one table only.
*/
#include <stdio.h>
#include <string.h>

#include "api/api_int.h"
#include "kv/kv.h"

/* The store of an open connection, or NULL after setting the error (db must not be NULL). */
static kv_db *open_store(rowan_db *db) {
  if (!db->kv) api_error(db, ROWAN_MISUSE, -1, "misuse: the database is not open");
  return db->kv;
}

int rowan_recovery_info(rowan_db *db, rowan_recovery *out) {
  if (!db || !out) return ROWAN_MISUSE;
  kv_db *kv = open_store(db);
  if (!kv) return ROWAN_MISUSE;
  kv_wal_stats ws;
  if (kv_wal_get_stats(kv, &ws) != KV_OK) return api_error(db, ROWAN_MISUSE, -1, "%s", kv_errmsg());
  memset(out, 0, sizeof *out);
  out->replayed_records = ws.replayed_records;
  out->replayed_bytes = ws.replayed_bytes;
  out->dropped_bytes = ws.dropped_bytes;
  if (ws.dropped_bytes)
    kv_wal_segment_path(kv, ws.dropped_segment, out->dropped_segment,
                        sizeof out->dropped_segment);
  api_clear_error(db);
  return ROWAN_OK;
}

int rowan_flush(rowan_db *db) {
  if (!db) return ROWAN_MISUSE;
  kv_db *kv = open_store(db);
  if (!kv) return ROWAN_MISUSE;
  int rc = kv_flush(kv, NULL);
  if (rc != KV_OK) return api_error(db, api_code_of_kv(rc), -1, "flush failed: %s", kv_errmsg());
  api_clear_error(db);
  return ROWAN_OK;
}

int rowan_compact(rowan_db *db, int major) {
  if (!db) return ROWAN_MISUSE;
  kv_db *kv = open_store(db);
  if (!kv) return ROWAN_MISUSE;
  int rc = kv_compact(kv, NULL, major != 0);
  if (rc != KV_OK)
    return api_error(db, api_code_of_kv(rc), -1, "%s compaction failed: %s",
                     major ? "major" : "minor", kv_errmsg());
  api_clear_error(db);
  return ROWAN_OK;
}

int rowan_refresh(rowan_db *db) {
  if (!db) return ROWAN_MISUSE;
  kv_db *kv = open_store(db);
  if (!kv) return ROWAN_MISUSE;
  if (db->n_row_stmts > 0)
    return api_error(db, ROWAN_MISUSE, -1,
                     "misuse: %d statement(s) between rows: finish or reset them before "
                     "rowan_refresh", db->n_row_stmts);
  if (exec_in_transaction(db->sess))
    return api_error(db, ROWAN_MISUSE, -1,
                     "misuse: a transaction is open: COMMIT or ROLLBACK before rowan_refresh");
  int rc = kv_refresh(kv);
  if (rc != KV_OK)
    return api_error(db, api_code_of_kv(rc), -1, "refresh failed: %s", kv_errmsg());
  if (db->read_only) { /* the writer's DDL since the open (or the last refresh) */
    exec_error err = {0};
    rc = exec_session_reload_catalog(db->sess, &err);
    if (rc != EXEC_OK)
      return api_error(db, api_code_of_exec(rc), -1, "refresh failed: %s", err.msg);
  }
  api_clear_error(db);
  return ROWAN_OK;
}

int rowan_backup(rowan_db *db, const char *dir, char *errbuf, size_t errcap) {
  /* May run beside other calls on db from other threads: it reads only db->kv (set at open)
  ** and writes its message to errbuf, never to the handle's error state. */
  if (errbuf && errcap) errbuf[0] = 0;
  const char *why = NULL;
  if (!db) why = "misuse: NULL database handle";
  else if (!db->kv) why = "misuse: the database is not open";
  else if (!dir || !*dir) why = "misuse: no backup directory";
  if (why) {
    if (errbuf && errcap) snprintf(errbuf, errcap, "%s", why);
    return ROWAN_MISUSE;
  }
  kv_backup_stats st;
  int rc = kv_backup(db->kv, dir, &st);
  if (rc == KV_OK) return ROWAN_OK;
  if (errbuf && errcap) snprintf(errbuf, errcap, "backup failed: %s", kv_errmsg());
  return rc == KV_ERR_EXISTS || rc == KV_ERR_INVALID ? ROWAN_ERROR : api_code_of_kv(rc);
}
