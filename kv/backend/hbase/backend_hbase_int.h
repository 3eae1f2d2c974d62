/*
** kv/backend/hbase/backend_hbase_int.h: the HBase backend's state, shared by
** backend_hbase.c (open, the registry, DDL, writes, check-and-write, snapshots, split
** points, estimates) and backend_hbase_scan.c (scans and gets). Not used elsewhere.
*/
#ifndef ROWAN_KV_BACKEND_HBASE_INT_H
#define ROWAN_KV_BACKEND_HBASE_INT_H

#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

#include "kv/backend/hbase/backend_hbase.h"
#include "kv/backend/hbase/hb_client.h"

/* One family of a Rowan kv table: its HBase family has the same name. */
typedef struct hbk_family {
  char *name;           /* owned */
  uint32_t id;          /* this process's family id */
  kv_family_options o;  /* options (o.name == name) */
} hbk_family;

/* One Rowan kv table and the HBase table that holds it. */
typedef struct hbk_table {
  char *kv_name;        /* Rowan's name (owned) */
  char *hb_name;        /* the HBase table's qualifier in the namespace (owned) */
  int n_families;
  hbk_family fam[KV_MAX_FAMILIES];
} hbk_table;

typedef struct hbk {
  kv_backend be;        /* what kv_backend_hbase_open hands out (be.impl == this) */
  kv_hbase_uri uri;
  hb_client *c;         /* one connection, used under mu */
  pthread_mutex_t mu;   /* every call of c (scans of parallel chunks share it) */
  sigset_t old_mask;    /* the holder of mu's signal mask before hbk_lock */
  hbk_table **tabs;     /* the registry, in memory */
  int n_tabs, cap_tabs;
  uint32_t next_family_id;
  int64_t last_ts;      /* the newest timestamp given out (ms) */
} hbk;

/* The registry table of a namespace and its family. */
#define HBK_REGISTRY "ROWAN_KV"
#define HBK_REG_FAMILY "r"

/* Take h->mu for calls of h->c, with SIGPIPE blocked in this thread (a write to a gateway
** that died would otherwise kill the process); hbk_unlock drops a SIGPIPE raised meanwhile
** and restores the thread's mask. */
void hbk_lock(hbk *h);
void hbk_unlock(hbk *h);

/* Under h->mu: the family of id and its table, or NULL. */
hbk_family *hbk_family_of(hbk *h, uint32_t id, hbk_table **t);
/* The current time in ms since the epoch. */
int64_t hbk_now_ms(void);

/* backend_hbase_scan.c: the read operations of kv_backend_ops. */
int hbk_get(kv_backend *be, const kv_scan_options *o, const void *row, size_t row_len,
            kv_backend_scan **scan_out, kv_row *out_row);
int hbk_scan_open(kv_backend *be, const kv_scan_options *o, const kv_backend_read *x,
                  kv_backend_scan **out);
int hbk_scan_next(kv_backend *be, kv_backend_scan *s, kv_row *row);
const kv_value_vector *hbk_scan_row_vectors(kv_backend *be, const kv_backend_scan *s,
                                            uint32_t *n);
void hbk_scan_metrics(kv_backend *be, const kv_backend_scan *s, kv_scan_metrics *out);
void hbk_scan_close(kv_backend *be, kv_backend_scan *s);

/* backend_hbase_foreign.c: kv_backend_ops.foreign_table (a table Apache Phoenix created). */
int hbk_foreign_table(kv_backend *be, const char *name, char *msg, size_t cap);

#endif /* ROWAN_KV_BACKEND_HBASE_INT_H */
