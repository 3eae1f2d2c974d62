/*
** api/admin.c: store maintenance through the public API: rowan_flush and rowan_compact
** (contracts in include/rowan.h). They are HBase's Admin.flush and Admin.compact /
** Admin.majorCompact, applied to every table of the store at once, so an embedding program
** (or the shell's .flush and .compact) can put its rows into store files before it measures
** reads, or reclaim the space of deleted and expired cells; and rowan_recovery_info, what
** the open replayed from the write-ahead log and any torn tail it dropped.
**
** What it does not do: choose when to flush or compact on its own (the store's background
** thread does that, kv/db_bg.c), or act on one table only.
*/
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
