/*
** api/open_remote.c: rowan_open of a remote database, `hbase://HOST:PORT[/NAMESPACE]`
** (include/rowan.h): the session reads and writes through the HBase storage backend
** (kv/backend/hbase/backend_hbase.h), whose namespace holds every table and Rowan's catalog.
** The session still has a local store beside the backend, for what only a local store
** gives (the spill files of sorts and joins, the planner's statistics, which find no
** tables there and fall back to their defaults): a private in-memory one, made here and
** dropped at close. Built without ROWAN_HBASE, such a URI fails with "built without HBase
** support".
** Not here: the ordinary open of a directory (api/rowan.c), the backend itself.
*/
#include <string.h>

#include "api/api_int.h"
#include "kv/backend.h"
#include "kv/env/env_mem.h"
#ifdef ROWAN_HBASE
#include "kv/backend/hbase/backend_hbase.h"
#endif

bool api_is_remote_uri(const char *path) { return path && strncmp(path, "hbase://", 8) == 0; }

#ifndef ROWAN_HBASE
int api_open_remote(rowan_db *db, const char *uri, const rowan_options *opts) {
  (void)opts;
  return api_error(db, ROWAN_MISUSE, -1,
                   "cannot open database \"%s\": built without HBase support (build with "
                   "-DROWAN_HBASE=ON; docs/HBASE.md)", uri);
}

void api_close_remote(rowan_db *db) { (void)db; }
#else
int api_open_remote(rowan_db *db, const char *uri, const rowan_options *opts) {
  if (opts && opts->read_only)
    return api_error(db, ROWAN_MISUSE, -1,
                     "cannot open database \"%s\": read_only is not supported on HBase", uri);
  if (opts && opts->kv_env)
    return api_error(db, ROWAN_MISUSE, -1,
                     "cannot open database \"%s\": kv_env is not used on HBase", uri);
  int rc = kv_backend_hbase_open(uri, &db->remote);
  if (rc != KV_OK) {
    db->remote = NULL;
    return api_error(db, rc == KV_ERR_INVALID ? ROWAN_MISUSE : api_code_of_kv(rc), -1,
                     "cannot open database \"%s\": %s", uri, kv_errmsg());
  }
  /* the private scratch store */
  db->mem_env = kv_env_mem_new(0);
  if (!db->mem_env) return api_error(db, ROWAN_NOMEM, -1, "out of memory");
  kv_options ko;
  kv_options_init(&ko);
  ko.env = db->mem_env;
  ko.create_if_missing = true;
  ko.sync_mode = KV_SYNC_OFF;
  rc = kv_open("/scratch", &ko, &db->kv);
  if (rc != KV_OK) {
    db->kv = NULL;
    return api_error(db, api_code_of_kv(rc), -1, "cannot open database \"%s\": scratch store: %s",
                     uri, kv_errmsg());
  }
  exec_error err = {0};
  rc = exec_session_open_backend(db->kv, db->remote, &db->sess, &err);
  if (rc != EXEC_OK) {
    db->sess = NULL;
    return api_error(db, api_code_of_exec(rc), -1, "cannot open database \"%s\": %s", uri,
                     err.msg);
  }
  exec_set_interrupt(db->sess, &db->interrupt);
  exec_set_write_memory(db->sess, db->bulk_memory);
  if (opts) exec_set_join_memory(db->sess, opts->join_memory);
  return ROWAN_OK;
}

void api_close_remote(rowan_db *db) {
  if (!db->remote) return;
  kv_backend_hbase_close(db->remote);
  db->remote = NULL;
}
#endif
