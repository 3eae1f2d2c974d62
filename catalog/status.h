/*
** catalog/status.h: the status codes (EXEC_OK, EXEC_ERROR, ...) that the planner and the
** executor return, and that api/ maps one to one onto include/rowan.h's ROWAN_* codes. They
** live below both layers so that planner/ returns them without including exec/ headers
** (exec/engine.h includes this file), and the status of a store (kv/) error as the executor
** reports it. Nothing else is here.
*/
#ifndef ROWAN_CAT_STATUS_H
#define ROWAN_CAT_STATUS_H

/* Status codes; they map one to one onto ROWAN_* codes of include/rowan.h. */
enum exec_status {
  EXEC_OK = 0,
  EXEC_ERROR = 1,      /* semantic error: unknown name, type mismatch, bad option */
  EXEC_SYNTAX = 2,     /* parse error */
  EXEC_CONSTRAINT = 3, /* value does not fit its column, NULL into NOT NULL */
  EXEC_RANGE = 4,      /* index out of range */
  EXEC_MISUSE = 5,     /* wrong state */
  EXEC_LOCKED = 6,
  EXEC_CORRUPT = 7,
  EXEC_IOERR = 8,
  EXEC_FULL = 9,
  EXEC_NOMEM = 10,
  EXEC_READONLY = 11,
  EXEC_TOOBIG = 12,
  EXEC_NOTFOUND = 13,
  EXEC_ABORT = 14,     /* a query lost the transaction it read: ROLLBACK ran mid-query */
  EXEC_INTERRUPT = 15, /* the session's interrupt flag was set (exec_set_interrupt) */
  EXEC_ROW = 100,
  EXEC_DONE = 101
};

/* The exec status of a kv/ status code (kv/kv.h KV_*): I/O, full, corrupt, not found, too
** big, out of memory, read-only and misuse as such, anything else EXEC_ERROR. */
int exec_status_of_kv(int kv_rc);

#endif /* ROWAN_CAT_STATUS_H */
