/*
** api/scan_threads.c: rowan_set_scan_threads and rowan_scan_threads (include/rowan.h
** "Parallel scans"), the connection's scan threads; the engine cuts scans into chunks and
** runs them (exec/parallel.h).
*/
#include "api/api_int.h"
#include "exec/parallel.h"

int rowan_set_scan_threads(rowan_db *db, int threads, int64_t min_rows) {
  if (!db || !db->sess) return ROWAN_MISUSE;
  exec_error e;
  if (exec_set_parallel(db->sess, threads, min_rows, &e) != EXEC_OK)
    return api_error(db, ROWAN_MISUSE, -1, "misuse: %s", e.msg);
  return ROWAN_OK;
}

int rowan_scan_threads(rowan_db *db) {
  return db && db->sess ? exec_parallel_threads(db->sess) : 0;
}
