/*
** catalog/status.c: the exec status of a store (kv/) error (catalog/status.h), for the
** executor's callers of kv/ that pass a store error on (the bulk load, a join's spill).
** Not here: the messages, which the callers write.
*/
#include "catalog/status.h"
#include "kv/kv.h"

int exec_status_of_kv(int kv_rc) {
  switch (kv_rc) {
    case KV_OK: return EXEC_OK;
    case KV_ERR_IO: return EXEC_IOERR;
    case KV_ERR_NOSPC: return EXEC_FULL;
    case KV_ERR_CORRUPT: return EXEC_CORRUPT;
    case KV_ERR_NOTFOUND: return EXEC_NOTFOUND;
    case KV_ERR_TOOBIG: return EXEC_TOOBIG;
    case KV_ERR_NOMEM: return EXEC_NOMEM;
    case KV_ERR_READONLY: return EXEC_READONLY;
    case KV_MISUSE: return EXEC_MISUSE;
    default: return EXEC_ERROR;
  }
}
