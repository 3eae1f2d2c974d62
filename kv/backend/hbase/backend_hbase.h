/*
** kv/backend/hbase/backend_hbase.h: the storage backend (kv/backend.h) over a real HBase,
** through its Thrift2 gateway and the C client of hb_client.h (issue 18). Built only with
** -DROWAN_HBASE=ON (the macro ROWAN_HBASE is then defined for the library and its users).
**
** A backend is opened by a URI, `hbase://HOST:PORT[/NAMESPACE]` (HOST a name or IPv4
** address, PORT the gateway's 1..65535, NAMESPACE HBase's namespace for this database,
** letters, digits and '_', default "rowan"). Each Rowan kv table is one HBase table of that
** namespace; which HBase table holds which Rowan table, and each table's families with
** their options, is kept in the namespace's registry table ROWAN_KV (as Phoenix keeps its
** own in SYSTEM.CATALOG), so another process opening the same URI finds them. Family ids
** are this process's own, given out at open and at create (the catalog resolves them by
** name at every open). What each operation does, and what it does not, is in
** docs/HBASE.md ("The backend").
**
** Not here: the Thrift2 calls (hb_client.h), opening a Rowan database on it (api/rowan.c).
*/
#ifndef ROWAN_KV_BACKEND_HBASE_H
#define ROWAN_KV_BACKEND_HBASE_H

#include "kv/backend.h"

#define KV_HBASE_DEFAULT_NAMESPACE "rowan"

/* A parsed URI. */
typedef struct kv_hbase_uri {
  char host[256];
  int port;
  char ns[128];
} kv_hbase_uri;

/* Parse `hbase://HOST:PORT[/NAMESPACE]`. KV_OK, or KV_ERR_INVALID with a message naming
** what is wrong (no "hbase://", no host, a port that is missing, not a number or outside
** 1..65535, a namespace with other characters than letters, digits and '_' or over 100
** bytes, trailing text). */
int kv_hbase_parse_uri(const char *uri, kv_hbase_uri *out);

/* Open the backend of uri: connect (each call times out after 30 s), create the namespace
** and its registry table if missing, load the registry. *out is freed with
** kv_backend_hbase_close. Errors: KV_ERR_INVALID (a bad URI), KV_ERR_IO ("hbase: cannot
** connect to HOST:PORT: ..." for an unreachable gateway or a wrong port, or the gateway's
** error), KV_ERR_NOMEM. */
int kv_backend_hbase_open(const char *uri, kv_backend **out);
/* Close the connection and free the backend (NULL: no-op). No scan may be open. */
void kv_backend_hbase_close(kv_backend *be);
/* What the writes of a backend sent to HBase since its open (kv_backend_hbase_write_counts),
** each row counted once, when the call that wrote it returned (a row sent again after a lost
** connection counts once):
** rows in putMultiple calls with puts only (put_rows); rows with tombstones split into a put
** of a putMultiple and a delete of a deleteMultiple (split_rows: their tombstones covered no
** cell, docs/HBASE.md "Writes on several connections"); rows of tombstones only in
** deleteMultiple calls (delete_rows); rows each one mutateRow call (mutate_rows); rows asked
** about with existsAll before a split (asked_rows); table writes spread over more than one
** writer connection (spread_writes); waits for a lost gateway before the writers went on
** (lost_waits). */
typedef struct kv_hbase_write_counts {
  uint64_t put_rows, split_rows, delete_rows, mutate_rows, asked_rows, spread_writes, lost_waits;
} kv_hbase_write_counts;

/* Copy be's counts into *out (be must be an HBase backend). */
void kv_backend_hbase_write_counts(kv_backend *be, kv_hbase_write_counts *out);

/* Drop namespace uri's NAMESPACE with every table in it (tests clean up with it).
** KV_ERR_NOTFOUND when it does not exist. */
int kv_backend_hbase_drop_namespace(const char *uri);

#endif /* ROWAN_KV_BACKEND_HBASE_H */
