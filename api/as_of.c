/*
** api/as_of.c: rowan_set_as_of and rowan_as_of (include/rowan.h "Read the past"), the
** connection's read time; the engine applies and checks it (exec/as_of.c).
*/
#include "api/api_int.h"

int rowan_set_as_of(rowan_db *db, int64_t ms) {
  if (!db || !db->sess) return ROWAN_MISUSE;
  if (ms < 0) return api_error(db, ROWAN_MISUSE, -1, "misuse: negative AS OF time %lld ms",
                               (long long)ms);
  exec_set_as_of(db->sess, ms);
  return ROWAN_OK;
}

int64_t rowan_as_of(rowan_db *db) { return db && db->sess ? exec_get_as_of(db->sess) : 0; }
