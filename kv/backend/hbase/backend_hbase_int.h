/*
** kv/backend/hbase/backend_hbase_int.h: the HBase backend's state, shared by
** backend_hbase.c (open, the registry, DDL, snapshots), backend_hbase_write.c (writes,
** check-and-write), backend_hbase_scan.c (scans and gets) and backend_hbase_stats.c (split
** points, estimates). Not used elsewhere.
*/
#ifndef ROWAN_KV_BACKEND_HBASE_INT_H
#define ROWAN_KV_BACKEND_HBASE_INT_H

#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "kv/backend/hbase/backend_hbase.h"
#include "kv/backend/hbase/hb_client.h"

/* One family of a Rowan kv table: its HBase family has the same name. */
typedef struct hbk_family {
  char *name;           /* owned */
  uint32_t id;          /* this process's family id */
  kv_family_options o;  /* options (o.name == name) */
} hbk_family;

/* One Rowan kv table and the HBase table that holds it. */
typedef struct hbk_stats hbk_stats; /* backend_hbase_stats.c */

typedef struct hbk_table {
  char *kv_name;        /* Rowan's name (owned) */
  char *hb_name;        /* the HBase table's qualifier in the namespace (owned) */
  int n_families;
  hbk_family fam[KV_MAX_FAMILIES];
  hbk_stats *stats;     /* the planner's statistics, or NULL: not collected (owned) */
  uint64_t written;     /* rows written through this backend since they were collected */
} hbk_table;

/* One connection of the scan pool: scans and gets take one (the least used) for their whole
** life and make their calls under its mutex; a pool of HBK_CONNS lets that many chunks of a
** parallel scan read at once, more share. Opened at first use. */
typedef struct hbk_conn {
  hb_client *c;         /* or NULL: not yet opened */
  pthread_mutex_t mu;   /* every call of c */
  sigset_t old_mask;    /* the holder of mu's signal mask before hbk_conn_lock */
  int users;            /* scans holding it (under hbk.mu) */
} hbk_conn;

#define HBK_CONNS_MAX 16 /* connections of the scan pool at most */
#define HBK_CONNS 4      /* by default (ROWAN_HBASE_CONNECTIONS: 1..HBK_CONNS_MAX) */
#define HBK_WRITERS_MAX 16 /* writer connections of one write at most */
#define HBK_WRITERS 4      /* by default (ROWAN_HBASE_WRITERS: 1..HBK_WRITERS_MAX) */

typedef struct hbk {
  kv_backend be;        /* what kv_backend_hbase_open hands out (be.impl == this) */
  kv_hbase_uri uri;
  hb_client *c;         /* the main connection (DDL, the registry, writes), used under mu */
  pthread_mutex_t mu;   /* every call of c, the registry and the clock */
  sigset_t old_mask;    /* the holder of mu's signal mask before hbk_lock */
  hbk_conn conn[HBK_CONNS_MAX]; /* the scan pool */
  int n_conns;          /* its size */
  hb_client *wc[HBK_WRITERS_MAX]; /* writer connections 1.. of a write spread over several
                        ** (writer 0 is c), opened at first use, used under mu by one
                        ** writer thread each (backend_hbase_write.c) */
  int n_writers;        /* writers of a large write at most (ROWAN_HBASE_WRITERS) */
  kv_hbase_write_counts counts; /* what the writes sent (under mu) */
  hbk_table **tabs;     /* the registry, in memory */
  int n_tabs, cap_tabs;
  uint32_t next_family_id;
  int64_t last_ts;      /* the newest timestamp given out (ms) */
  int tries;            /* tries of a write, scanner opens of a scan, after lost connections
                        ** (HBK_TRIES, or ROWAN_HBASE_TRIES) */
  long kill_after_rows; /* test hook ROWAN_HBASE_KILL_AFTER_ROWS: SIGKILL once this many rows
                        ** were written (0: off; docs/HBASE.md "Test hooks") */
  long rows_written;    /* rows written so far, counted only while the hook is on */
} hbk;

/* Tries after a lost connection by default: at once, then after 0.2 s, 0.4 s, ... 51.2 s
** (about 100 s in all). */
#define HBK_TRIES 10
/* The wait before try `k` (k >= 1) after a lost connection, in microseconds. */
#define HBK_BACKOFF_US(k) ((useconds_t)(100000u << ((k) > 12 ? 12 : (k))))

/* The registry table of a namespace and its family. */
#define HBK_REGISTRY "ROWAN_KV"
#define HBK_REG_FAMILY "r"

/* Take h->mu for calls of h->c, with SIGPIPE blocked in this thread (a write to a gateway
** that died would otherwise kill the process); hbk_unlock drops a SIGPIPE raised meanwhile
** and restores the thread's mask. */
void hbk_lock(hbk *h);
void hbk_unlock(hbk *h);

/* A connection of the scan pool for a scan (never fails: it may be opened later, by
** hbk_conn_lock's caller through hbk_conn_ready); hbk_conn_give returns it. */
hbk_conn *hbk_conn_take(hbk *h);
void hbk_conn_give(hbk *h, hbk_conn *k);
/* Take k->mu with SIGPIPE blocked (as hbk_lock) and open k->c when it is not yet: KV_OK or
** the connection's error (k->mu is held either way; hbk_conn_unlock drops it). */
int hbk_conn_lock(hbk_conn *k, const kv_hbase_uri *uri);
void hbk_conn_unlock(hbk_conn *k);

/* Under h->mu: the family of id and its table, or NULL. */
hbk_family *hbk_family_of(hbk *h, uint32_t id, hbk_table **t);
/* The current time in ms since the epoch. */
int64_t hbk_now_ms(void);
/* Under h->mu: n consecutive timestamps (ms) after every one given out before; the first. */
int64_t hbk_take_ts(hbk *h, int64_t n);

/* backend_hbase_write.c: kv_backend_ops.write and .check_and_write. */
int hbk_write(kv_backend *be, const kv_batch *b, uint64_t *seq_out);
int hbk_check_and_write(kv_backend *be, const kv_backend_check *chk, const kv_batch *b,
                        bool *applied, uint64_t *seq_out);

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

/* backend_hbase_stats.c: the planner's statistics (docs/HBASE.md). */
int hbk_family_stats(kv_backend *be, uint32_t family_id, kv_family_stats *out);
int hbk_estimate(kv_backend *be, uint32_t family_id, const kv_range *range,
                 const kv_estimate_opts *opts, uint64_t *rows, uint64_t *bytes);
int hbk_split_points(kv_backend *be, uint32_t family_id, uint32_t max_chunks,
                     kv_be_split_fn each, void *ctx);
/* Free t's statistics (NULL is a no-op). */
void hbk_stats_free(hbk_stats *st);
/* backend_hbase_foreign.c: kv_backend_ops.foreign_table (a table Apache Phoenix created). */
int hbk_foreign_table(kv_backend *be, const char *name, char *msg, size_t cap);

#endif /* ROWAN_KV_BACKEND_HBASE_INT_H */
