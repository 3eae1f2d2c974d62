/*
** kv/backend/hbase/hb_client.h: a small C client of HBase's Thrift2 gateway, the layer the
** HBase storage backend (issue 18) is built on.
**
** It hides the client generated at build time by thrift-compiler (`--gen c_glib`, from the
** IDL inside the pinned hbase-thrift jar; GLib objects, GByteArrays) behind plain C: byte
** strings as (pointer, length), results copied into memory the caller frees, errors as kv
** status codes with a message for kv_errmsg(). One connection (a TCP socket, buffered
** transport, binary protocol, as the gateway's `-threadpool` server speaks) per client; a
** client is used by one thread at a time. Calls time out after the client's timeout (a
** socket receive/send timeout), and a call that failed on the transport closes the socket:
** the next call reconnects once before it gives up.
**
** What each call maps to, and what it keeps from HBase: tables are named NAMESPACE:NAME
** (the default namespace when ns is NULL or empty); writes carry explicit timestamps, so a
** write retried after an unknown outcome lands on the same cells (idempotent); a batch of
** puts is one putMultiple, atomic per row only (HBase's guarantee); scans are read-committed,
** not snapshots; a check-and-put applies to its own row only.
**
** Not here: the kv backend operations (kv/backend.h) on top, the mapping of Rowan's tables,
** families and filters, starting HBase (scripts/hbase-up.sh).
*/
#ifndef ROWAN_KV_BACKEND_HB_CLIENT_H
#define ROWAN_KV_BACKEND_HB_CLIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct hb_client hb_client;
typedef struct hb_scanner hb_scanner;

/* A byte string the caller owns (not copied beyond the call). */
typedef struct hb_bytes {
  const uint8_t *p;
  size_t n;
} hb_bytes;

/* One cell to write: HBase's (row, family:qualifier, timestamp) -> value. ts must be >= 0
** (HBase's LATEST_TIMESTAMP is not allowed: writes are idempotent only with explicit
** timestamps). */
typedef struct hb_put {
  hb_bytes row, family, qualifier, value;
  int64_t ts;
} hb_put;

/* One cell read back. The bytes belong to the hb_row that holds the cell. */
typedef struct hb_cell {
  hb_bytes family, qualifier, value;
  int64_t ts;
} hb_cell;

/* One row read back: its key and cells in HBase's order (family, qualifier, newest first).
** Owned by the caller: hb_row_free. */
typedef struct hb_row {
  uint8_t *key;
  size_t key_len;
  hb_cell *cells;
  size_t ncells;
  uint8_t *mem; /* every byte the cells point to */
} hb_row;

/* One region of a table: [start, end) (empty start: from the first key; empty end: to the
** last), the server holding it. Owned by the caller: hb_regions_free. */
typedef struct hb_region {
  uint8_t *start, *end;
  size_t start_len, end_len;
  char *server; /* host:port */
  int64_t id;
} hb_region;

/* What to scan: keys in [start, stop) forward (empty start: the first key; empty stop: to the
** end), or with `reverse` from start down to stop exclusive (HBase: a reversed scan's start
** row is its HIGH key), at most `limit` rows (0: all); families to read (NULL/0: all);
** versions 1 unless max_versions > 1; cells with timestamps in [min_ts, max_ts) when
** max_ts > 0; `caching`: rows fetched per round trip (0: 256); `filter`: a filter string
** the region servers apply (TScan.filterString), or `filter_bytes`: a serialized protobuf
** FilterProtos.Filter (TScan.filterBytes; backend_hbase_filter.h), used instead of `filter`
** when both are set; `quals`, when not NULL: per family, the
** qualifiers to read of it (quals[i][0..nquals[i]); nquals[i] 0: the whole family). A row
** with none of the columns asked for is not returned. */
typedef struct hb_scan_spec {
  hb_bytes start, stop;
  bool reverse;
  uint32_t limit;
  const hb_bytes *families;
  size_t nfamilies;
  const hb_bytes *const *quals;
  const size_t *nquals;
  int32_t max_versions;
  int64_t min_ts, max_ts;
  int32_t caching;
  hb_bytes filter; /* HBase's filter language (ParseFilter), or empty: none */
  hb_bytes filter_bytes; /* a serialized FilterProtos.Filter, or empty: none */
} hb_scan_spec;

/* Connect to the Thrift2 gateway at host:port (binary protocol, buffered transport).
** timeout_ms: each call's socket timeout (0: 30,000). KV_OK and *out; KV_ERR_IO ("hbase:
** cannot connect to HOST:PORT: REASON"), KV_ERR_INVALID (NULL or empty host, port outside
** 1..65535), KV_ERR_NOMEM. */
int hb_open(const char *host, int port, int timeout_ms, hb_client **out);
/* Close the connection and free the client (NULL is a no-op). Open scanners must be closed
** first. */
void hb_close(hb_client *c);

/* Create table ns:name with the given families (each kept with max_versions versions; 0:
** HBase's default of 1) and split keys (sorted, distinct, non-empty; nsplits + 1 regions).
** KV_ERR_EXISTS when the table exists; KV_ERR_INVALID for no family, a bad split key (the
** message names it); KV_ERR_IO for the gateway's errors (its message). */
int hb_create_table(hb_client *c, const char *ns, const char *name, const char *const *families,
                    size_t nfamilies, int max_versions, const hb_bytes *splits, size_t nsplits);
/* Add family `family` (keeping max_versions versions, 0: 1) to table ns:name (HBase's
** addColumnFamily). */
int hb_add_family(hb_client *c, const char *ns, const char *name, const char *family,
                  int max_versions);
/* Set family `family`'s VERSIONS to max_versions (HBase's modifyColumnFamily; its other
** attributes go back to HBase's defaults, which are the ones this client creates). */
int hb_set_family_versions(hb_client *c, const char *ns, const char *name, const char *family,
                           int max_versions);
/* Disable and delete table ns:name. KV_ERR_NOTFOUND when it does not exist. */
int hb_drop_table(hb_client *c, const char *ns, const char *name);
/* *exists = whether table ns:name exists. */
int hb_table_exists(hb_client *c, const char *ns, const char *name, bool *exists);
/* Create namespace ns unless it exists. */
int hb_ensure_namespace(hb_client *c, const char *ns);

/* Write n cells (one putMultiple; the cells of one row go in one TPut, so each row is
** atomic; rows are not atomic with each other). KV_ERR_INVALID for an empty row, family or
** a negative timestamp (naming the cell's index). */
int hb_put_cells(hb_client *c, const char *ns, const char *name, const hb_put *cells, size_t n);
/* Delete the versions at or below ts (ts < 0: all) of every cell of `row` in `family`
** (HBase's deleteFamily at a timestamp); family NULL: of every family. */
int hb_delete_row(hb_client *c, const char *ns, const char *name, hb_bytes row,
                  const hb_bytes *family, int64_t ts);

/* Read one row (newest version of each cell; families NULL/0: all). *found false and *out
** emptied when the row has no cells. */
int hb_get(hb_client *c, const char *ns, const char *name, hb_bytes row, const hb_bytes *families,
           size_t nfamilies, hb_row *out, bool *found);

/* Apply `cells` (all of one row, `row`) only if the newest cell of row's family:qualifier
** equals *expected, or, with expected NULL, does not exist (HBase's checkAndMutate; an empty
** expected value means "absent" there, so an empty value cannot be checked for: KV_ERR_INVALID).
** *applied says which. Cells of another row: KV_ERR_INVALID. */
int hb_check_and_put(hb_client *c, const char *ns, const char *name, hb_bytes row,
                     hb_bytes family, hb_bytes qualifier, const hb_bytes *expected,
                     const hb_put *cells, size_t n, bool *applied);

/* Open a scanner (the gateway keeps it until hb_scan_close or its lease expires). */
int hb_scan_open(hb_client *c, const char *ns, const char *name, const hb_scan_spec *spec,
                 hb_scanner **out);
/* Scanners opened by this process so far (every client; calls that failed not counted): a
** counter for tests and measurements (one scanner per key range, or one for many). */
uint64_t hb_scan_opens(void);
/* The next row into *out (replacing what it held), or *done at the end. */
int hb_scan_next(hb_scanner *s, hb_row *out, bool *done);
/* Close the scanner on the gateway and free it (NULL is a no-op). */
void hb_scan_close(hb_scanner *s);

/* The table's regions in key order. */
int hb_regions(hb_client *c, const char *ns, const char *name, hb_region **out, size_t *n);
void hb_regions_free(hb_region *r, size_t n);


/* One mutation of a row (hb_mutate_row, hb_check_and_mutate), with HBase's delete kinds:
** HB_MUT_DELETE_VERSION deletes the one version of family:qualifier at exactly ts (HBase's
** Delete.addColumn(f, q, ts)), HB_MUT_DELETE_COLUMN every version at or below ts
** (addColumns), HB_MUT_DELETE_FAMILY every cell of the family at or below ts (addFamily; the
** qualifier is ignored). ts >= 0 always (explicit timestamps keep retries idempotent). */
enum { HB_MUT_PUT = 0, HB_MUT_DELETE_VERSION, HB_MUT_DELETE_COLUMN, HB_MUT_DELETE_FAMILY };
typedef struct hb_mutation {
  int kind;
  hb_bytes family, qualifier, value;
  int64_t ts;
} hb_mutation;

/* Apply the mutations to `row`, all or nothing, in order (HBase's mutateRow; at an equal
** timestamp a delete masks a put whatever their order, HBase's rule). Retried once after a
** lost connection (explicit timestamps: the same cells again). KV_ERR_INVALID for an empty
** row or family, a negative timestamp or an unknown kind (naming the mutation's index). */
int hb_mutate_row(hb_client *c, const char *ns, const char *name, hb_bytes row,
                  const hb_mutation *m, size_t n);
/* The deletes of one row for hb_delete_rows and hb_cells_exist: m[0..n) of `row`, every one
** a delete of the same kind (Thrift2's TDelete has one delete type for its columns). */
typedef struct hb_row_delete {
  hb_bytes row;
  const hb_mutation *m;
  size_t n;
} hb_row_delete;

/* Apply n rows' deletes in one deleteMultiple: each row's deletes are one HBase Delete, so
** atomic for that row; rows are not atomic with each other. Retried once after a lost
** connection (explicit timestamps: the same markers again). KV_ERR_INVALID for a row with
** no delete, an empty row or family, a negative timestamp, a put or two delete kinds in one
** row (naming the row's index). */
int hb_delete_rows(hb_client *c, const char *ns, const char *name, const hb_row_delete *d,
                   size_t n);
/* exists[i] = whether row d[i].row has a cell (its newest visible version) in a column its
** deletes cover (family:qualifier, or the whole family for HB_MUT_DELETE_FAMILY): one
** existsAll call for the n rows (checked as hb_delete_rows; retried once). */
int hb_cells_exist(hb_client *c, const char *ns, const char *name, const hb_row_delete *d,
                   size_t n, bool *exists);
/* hb_check_and_put with mutations of any kind (HBase's checkAndMutate). */
int hb_check_and_mutate(hb_client *c, const char *ns, const char *name, hb_bytes row,
                        hb_bytes family, hb_bytes qualifier, const hb_bytes *expected,
                        const hb_mutation *m, size_t n, bool *applied);
/* Drop every table of namespace ns, then the namespace (KV_ERR_NOTFOUND when it does not
** exist). ns must not be empty or "default" (KV_ERR_INVALID). */
int hb_drop_namespace(hb_client *c, const char *ns);

void hb_row_free(hb_row *r);

#endif /* ROWAN_KV_BACKEND_HB_CLIENT_H */
