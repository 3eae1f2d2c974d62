/*
** kv/backend.h: the storage-backend interface under the SQL layer (issue 23). catalog/ and
** exec/ reach the store through a kv_backend: a table of operations (kv_backend_ops) plus a
** capabilities record (kv_backend_caps) saying what the backend guarantees, so that the SQL
** layer can ask instead of assume. The local store (kv/kv.h, kv/backend/backend_local.c) is the
** first implementation; a row-atomic HBase-like wrapper and a remote HBase client are the
** next ones (docs/BACKEND.md is the map: each capability, what the local backend gives, and
** what the SQL layer still assumes).
**
** The interface speaks kv's own vocabulary and types: family ids, kv_range, kv_row,
** kv_cell_view, kv_batch (the list of mutations to apply; kv_backend_batch_each walks it),
** kv_scan_options and kv_scan_metrics. Fields of kv_scan_options that only the local store
** honours (overlay, skip_prefix, value_vectors, existence_family, trace, ts_per_row) are
** named by kv_backend_caps.extensions; a backend that lacks one refuses a scan that sets it
** (KV_ERR_INVALID, "... is not supported by backend NAME").
**
** Pushed-down filters come in two forms: a C callback (kv_scan_options.filter: the local
** backend only, it cannot cross a network) and a small serializable expression
** (kv_filter_expr below: AND / OR / NOT over "cell (family, qualifier) op constant" and
** "cell present", compared as unsigned bytes, the way HBase's SingleColumnValueFilter
** compares), which a remote backend translates. A backend applies exactly the filter it is
** given (a row handed out passes it); the caller keeps as its residual whatever it could
** not give (exec/scan.c keeps the whole SQL filter when the callback is not available).
**
** Calls go through the inline wrappers at the end (kv_be_*), one indirect call each; the
** local backend's scan handle is kv's own kv_scan, so a scan through the interface costs
** what a direct one does (docs/BACKEND.md gives the bench figures).
**
** Not here: the local store itself (kv/kv.h), the parallel scans cut at split_points (exec/parallel.h),
** the translation of SQL filters into expressions (planner/filter.h).
*/
#ifndef ROWAN_KV_BACKEND_H
#define ROWAN_KV_BACKEND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kv/kv.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Capabilities ------------------------------------------------------------------- */
/* What one commit of a batch guarantees. */
enum kv_be_atomicity {
  KV_BE_ATOMIC_GLOBAL = 0, /* the whole batch, any rows, tables and families, or nothing
                              (the local store: one WAL record) */
  KV_BE_ATOMIC_ROW = 1     /* each row's ops all or nothing; a failure may leave some rows
                              of a batch applied and others not (HBase) */
};

/* What a read's snapshot is. */
enum kv_be_snapshot {
  KV_BE_SNAPSHOT_SEQUENCE = 0, /* exact: a sequence number; a batch committed after it is
                                  invisible, whatever its timestamps (the local store) */
  KV_BE_SNAPSHOT_TIMESTAMP = 1 /* a time: cells with timestamps up to it are visible, so a
                                  later commit with an older explicit timestamp is seen
                                  (HBase's time range) */
};

/* Filter forms a backend evaluates (kv_backend_caps.filters, a bit set; 0 = none: the
** caller evaluates every filter itself). */
#define KV_BE_FILTER_CALLBACK 1u /* kv_scan_options.filter, a C function in this process */
#define KV_BE_FILTER_EXPR 2u     /* kv_backend_read.filter_expr, a kv_filter_expr */

/* kv_scan_options fields beyond the portable ones (kv_backend_caps.extensions). */
#define KV_BE_EXT_OVERLAY 1u          /* overlay: a transaction reads its own writes */
#define KV_BE_EXT_SKIP_PREFIX 2u      /* skip_prefix: skip scan by prefix inside the scan */
#define KV_BE_EXT_VALUE_VECTORS 4u    /* value_vectors: rows as values by position */
#define KV_BE_EXT_EXISTENCE_FAMILY 8u /* existence_family: the marker family read lazily */
#define KV_BE_EXT_TRACE 16u           /* trace: the blocks a scan loads */
#define KV_BE_EXT_TS_PER_ROW 32u      /* ts_per_row: files skipped by their newest cell */
#define KV_BE_EXT_INTERRUPT 64u       /* interrupt: a flag stops a scan within 64 rows */
#define KV_BE_EXT_COLUMNAR 128u       /* the columnar aggregate reads the local store's files
                                         (kv_colagg_run on kv_backend_local_db) */

typedef struct kv_backend_caps {
  const char *name;          /* the backend's name ("local"), for messages */
  int atomicity;             /* enum kv_be_atomicity */
  int snapshot;              /* enum kv_be_snapshot */
  uint32_t filters;          /* KV_BE_FILTER_* bits */
  bool reverse_scans;        /* scans in descending key order (kv_scan_options.reverse) */
  bool check_and_write;      /* kv_be_check_and_write (HBase's checkAndMutate) */
  bool split_points;         /* kv_be_split_points gives keys that cut a table into chunks */
  bool size_estimates;       /* kv_be_estimate counts rows and bytes of a key range */
  bool remote;               /* rows come over a network: a scan costs per cell sent (the
                                planner reads the key family's one marker cell rather than
                                a family's other columns to see every row) */
  bool split_keys;           /* create_table places regions at the split keys given (false:
                                they are checked and ignored: one region per table) */
  uint32_t extensions;       /* KV_BE_EXT_* bits */
} kv_backend_caps;

/* ---- The serializable filter expression ------------------------------------------- */
/* Node kinds. ORDER KV_FX: kv_fx_name in kv/backend/backend_filter.c follows it. */
enum kv_fx_kind {
  KV_FX_AND = 0,     /* TRUE when every child is TRUE; FALSE when one is FALSE; else UNKNOWN */
  KV_FX_OR = 1,      /* TRUE when one child is TRUE; FALSE when every one is; else UNKNOWN */
  KV_FX_NOT = 2,     /* one child: TRUE <-> FALSE, UNKNOWN stays */
  KV_FX_CMP = 3,     /* the cell's value op the constant; UNKNOWN when the row has no cell
                        of (family, qualifier) (SQL's NULL) */
  KV_FX_PRESENT = 4, /* TRUE when the row has a cell of (family, qualifier), else FALSE */
  KV_FX_KIND_COUNT
};
/* Comparison operators of KV_FX_CMP: unsigned bytes, a proper prefix first (kv_bytes_cmp;
** Rowan's value encodings are order-preserving, so this is the SQL order of the values). */
enum kv_fx_cmp { KV_FX_EQ = 0, KV_FX_NE, KV_FX_LT, KV_FX_LE, KV_FX_GT, KV_FX_GE };

/* One node. The nodes of an expression are in prefix order: a node, then its children's
** subtrees one after another; nodes[0] is the root. "The cell" of a row is its newest
** visible cell of (family_id, qual) (kv_row.cells: the first one of that pair). */
typedef struct kv_fx_node {
  uint8_t kind;              /* enum kv_fx_kind */
  uint8_t cmp;               /* KV_FX_CMP: enum kv_fx_cmp */
  uint16_t n_children;       /* KV_FX_AND / OR: >= 1; KV_FX_NOT: 1; leaves: 0 */
  uint32_t family_id;        /* leaves: the cell's family */
  const uint8_t *qual;       /* leaves: its qualifier */
  uint32_t qual_len;         /* its length */
  const uint8_t *value;      /* KV_FX_CMP: the constant's bytes */
  uint32_t value_len;        /* its length */
} kv_fx_node;

typedef struct kv_filter_expr {
  const kv_fx_node *nodes;   /* prefix order, nodes[0] the root */
  uint32_t n_nodes;          /* 1..KV_FX_MAX_NODES */
} kv_filter_expr;

#define KV_FX_MAX_NODES 4096u /* nodes in one expression */
#define KV_FX_MAX_DEPTH 64u   /* nesting of AND / OR / NOT */

/* Check e's shape: kinds and operators known, child counts as above, the nodes forming
** exactly one tree, nesting within KV_FX_MAX_DEPTH. KV_OK or KV_ERR_INVALID naming the
** first bad node by index. */
int kv_filter_expr_check(const kv_filter_expr *e);
/* kv_filter_fn-compatible: ctx is a checked kv_filter_expr; true when the expression is
** TRUE on row. Reads the row only. */
bool kv_filter_expr_eval(void *ctx, const kv_row *row);
/* Serialized form (docs/BACKEND.md "The filter expression on the wire"):
**   expr := "RFX1" n_nodes:varint node*
**   node := kind:u8 cmp:u8 n_children:varint family_id:varint qual_len:varint qual
**           value_len:varint value
** kv_filter_expr_encode writes e to buf[0..cap) and returns the bytes it needs (write
** nothing useful when that is above cap: call again with a larger buffer). */
size_t kv_filter_expr_encode(const kv_filter_expr *e, uint8_t *buf, size_t cap);
/* Decode p[0..len) into nodes[0..cap) (qualifiers and values point into p), checked as
** kv_filter_expr_check. KV_OK with *out filled; KV_ERR_CORRUPT (truncated, bad magic,
** trailing bytes: the message gives the byte offset), KV_ERR_TOOBIG (more than cap
** nodes), KV_ERR_INVALID (a bad shape). */
int kv_filter_expr_decode(const uint8_t *p, size_t len, kv_fx_node *nodes, uint32_t cap,
                          kv_filter_expr *out);

/* ---- Operations ------------------------------------------------------------------- */
typedef struct kv_backend kv_backend;
typedef struct kv_backend_scan kv_backend_scan; /* a backend's open scan (opaque) */

/* What a scan reads beyond kv_scan_options: the portable parts a remote backend needs. */
typedef struct kv_backend_read {
  const kv_filter_expr *filter_expr; /* or NULL: a pushed-down expression (checked with
                                        kv_filter_expr_check; must outlive the scan; not
                                        together with kv_scan_options.filter) */
  const uint8_t *resume_after;       /* or NULL: hand out only rows after this key in the
                                        scan's order (above it forward, below it reverse):
                                        a scan cut short (a limit, a lost connection, a
                                        region moved) goes on from its last row */
  uint32_t resume_after_len;         /* its length (>= 1 when given) */
} kv_backend_read;

/* A check of check-and-write: the row's newest visible cell of (family_id, qual) at the
** latest state. */
typedef struct kv_backend_check {
  uint32_t family_id;        /* the family */
  const uint8_t *row;        /* the row key */
  uint32_t row_len;          /* its length (>= 1) */
  const uint8_t *qual;       /* the qualifier */
  uint32_t qual_len;         /* its length */
  const uint8_t *value;      /* the expected value; NULL: the cell must not exist */
  uint32_t value_len;        /* its length */
} kv_backend_check;

/* One split point: a row key where a chunk starts. */
typedef void (*kv_be_split_fn)(void *ctx, const uint8_t *key, uint32_t key_len);

/* The operations. Every one returns a kv status and leaves a message for kv_errmsg() on
** failure, with kv/kv.h's meanings; the comments say where they differ from kv's own
** function. An operation a backend does not have is NULL; its wrapper then fails with
** KV_ERR_INVALID ("OP is not supported by backend NAME"). */
typedef struct kv_backend_ops {
  /* kv_create_table, and split keys (sorted ascending, distinct, each >= 1 byte: else
  ** KV_ERR_INVALID) where regions start (caps.split_keys false: checked, then ignored). */
  int (*create_table)(kv_backend *be, const char *name, const kv_family_options *families,
                      int n_families, const uint8_t *const *split_keys,
                      const uint32_t *split_lens, uint32_t n_splits);
  int (*alter_table)(kv_backend *be, const char *name, const kv_family_options *families,
                     int n_families);                                /* kv_alter_table */
  int (*drop_table)(kv_backend *be, const char *name);               /* kv_drop_table */
  int (*family_id)(kv_backend *be, const char *table, const char *family,
                   uint32_t *id_out);                                /* kv_family_id */
  int (*family_info)(kv_backend *be, uint32_t family_id,
                     kv_family_options *out);                        /* kv_family_info */
  int (*table_count)(kv_backend *be);                                /* kv_table_count */
  const char *(*table_name)(kv_backend *be, int i);                  /* kv_table_name */
  int (*set_dropped_qualifiers)(kv_backend *be, uint32_t family_id,
                                const uint8_t *const *quals, const uint32_t *lens,
                                uint32_t n);  /* kv_family_set_dropped_qualifiers */
  /* kv_commit. Atomic as caps.atomicity says. Ops with explicit timestamps (not KV_TS_NOW)
  ** make it idempotent: applying the same batch again leaves every read as it was (a put
  ** at an equal timestamp is the same version, a tombstone again masks the same cells). */
  int (*write)(kv_backend *be, const kv_batch *b, uint64_t *seq_out);
  /* Apply b only if chk holds, atomically with the check against every write made through
  ** this backend (HBase's checkAndMutate): *applied tells which. b may touch any rows (the
  ** local backend applies it whole; a row-atomic one requires chk's row). */
  int (*check_and_write)(kv_backend *be, const kv_backend_check *chk, const kv_batch *b,
                         bool *applied, uint64_t *seq_out);
  int (*flush)(kv_backend *be, const char *table);                   /* kv_flush */
  /* kv_get: one row; *scan_out as kv_get's (close it with scan_close). */
  int (*get)(kv_backend *be, const kv_scan_options *o, const void *row, size_t row_len,
             kv_backend_scan **scan_out, kv_row *out_row);
  /* kv_scan_open plus x (may be NULL). */
  int (*scan_open)(kv_backend *be, const kv_scan_options *o, const kv_backend_read *x,
                   kv_backend_scan **out);
  int (*scan_next)(kv_backend *be, kv_backend_scan *s, kv_row *row);  /* kv_scan_next */
  const kv_value_vector *(*scan_row_vectors)(kv_backend *be, const kv_backend_scan *s,
                                             uint32_t *n);        /* kv_scan_row_vectors */
  void (*scan_metrics)(kv_backend *be, const kv_backend_scan *s,
                       kv_scan_metrics *out);                     /* kv_scan_get_metrics */
  void (*scan_close)(kv_backend *be, kv_backend_scan *s);        /* kv_scan_close */
  int (*snapshot_acquire)(kv_backend *be, uint64_t *snap_out);   /* kv_snapshot_acquire */
  void (*snapshot_release)(kv_backend *be, uint64_t snap);       /* kv_snapshot_release */
  /* Keys that cut family_id's rows into at most max_chunks chunks of about equal bytes, in
  ** ascending order (at most max_chunks - 1 calls of each); none when the family is small.
  ** The local backend takes them from its store files' block indexes (HBase: region
  ** boundaries; Phoenix: statistics guideposts). */
  int (*split_points)(kv_backend *be, uint32_t family_id, uint32_t max_chunks,
                      kv_be_split_fn each, void *ctx);
  int (*estimate)(kv_backend *be, uint32_t family_id, const kv_range *range,
                  const kv_estimate_opts *opts, uint64_t *rows,
                  uint64_t *bytes);                               /* kv_estimate_range */
  /* kv_family_get_stats: the family's totals as the planner reads them (rows, store_file_bytes
  ** + memstore_bytes, blocks, memstore_cells; the rest may be 0). A remote backend gives
  ** its statistics (HBase: docs/HBASE.md "The planner's statistics"). NULL: the local store
  ** under the backend answers (kv_be_family_stats). */
  int (*family_stats)(kv_backend *be, uint32_t family_id, kv_family_stats *out);
  /* A table of the store that another program made under the name a statement gave and
  ** that Rowan cannot read (HBase: a table Apache Phoenix created). `name` is the SQL name
  ** (SCHEMA.TABLE or TABLE, as the statement spelled it after case folding). KV_OK with
  ** msg[0] == 0 when there is none; KV_OK with msg (NUL-terminated, cut at cap) saying what
  ** it is when there is one; an error when the store could not be asked. NULL: never. */
  int (*foreign_table)(kv_backend *be, const char *name, char *msg, size_t cap);
} kv_backend_ops;

struct kv_backend {
  const kv_backend_ops *ops; /* the operations */
  kv_backend_caps caps;      /* what they guarantee */
  void *impl;                /* the backend's own state (local: the kv_db) */
  kv_db *local;              /* the local store under it, or NULL: the local backend and
                                wrappers over it (the test backends) give it; a remote one
                                does not (kv_backend_local_db) */
};

/* ---- The local backend (kv/backend/backend_local.c) ----------------------------------------- */
/* Make *be the local backend over db (not owned: close db after the last use of be). No
** allocation; never fails. Returns be. */
kv_backend *kv_backend_local_init(kv_backend *be, kv_db *db);
/* be->local: the local store under the local backend or a wrapper over it, NULL under a
** remote one; for what only the local store has (bulk loads, the columnar aggregate, spill
** files, the planner's estimates; docs/BACKEND.md lists the callers), which bypasses what
** a wrapper takes away. */
kv_db *kv_backend_local_db(const kv_backend *be);

/* Call each(ctx, op) for every op of b in order (type, family, row, qualifier, timestamp,
** value of kv_batch_put / kv_batch_delete; pointers into b's encoding, valid while b is not
** changed or freed): how a backend
** other than the local one reads a batch. A non-zero return of each stops the walk and is
** returned. KV_ERR_CORRUPT cannot happen for a batch built by kv_batch_*. */
typedef struct kv_batch_op {
  int type;                  /* enum kv_cell_type */
  uint32_t family_id;        /* the family */
  const uint8_t *row;        /* the row key */
  uint32_t row_len;          /* its length */
  const uint8_t *qual;       /* the qualifier */
  uint32_t qual_len;         /* its length */
  int64_t ts;                /* the timestamp, or KV_TS_NOW */
  const uint8_t *value;      /* KV_PUT: the value */
  uint32_t value_len;        /* its length */
} kv_batch_op;
int kv_backend_batch_each(const kv_batch *b, int (*each)(void *ctx, const kv_batch_op *op),
                          void *ctx);

/* ---- Calls ------------------------------------------------------------------------ */
/* The failure of an operation a backend lacks (kv/backend/backend_local.c). */
int kv_be_unsupported(const kv_backend *be, const char *op);

static inline int kv_be_create_table(kv_backend *be, const char *name,
                                     const kv_family_options *families, int n_families,
                                     const uint8_t *const *split_keys,
                                     const uint32_t *split_lens, uint32_t n_splits) {
  return be->ops->create_table(be, name, families, n_families, split_keys, split_lens,
                               n_splits);
}
static inline int kv_be_alter_table(kv_backend *be, const char *name,
                                    const kv_family_options *families, int n_families) {
  return be->ops->alter_table(be, name, families, n_families);
}
static inline int kv_be_drop_table(kv_backend *be, const char *name) {
  return be->ops->drop_table(be, name);
}
static inline int kv_be_family_id(kv_backend *be, const char *table, const char *family,
                                  uint32_t *id_out) {
  return be->ops->family_id(be, table, family, id_out);
}
static inline int kv_be_family_info(kv_backend *be, uint32_t family_id,
                                    kv_family_options *out) {
  return be->ops->family_info(be, family_id, out);
}
static inline int kv_be_table_count(kv_backend *be) { return be->ops->table_count(be); }
static inline const char *kv_be_table_name(kv_backend *be, int i) {
  return be->ops->table_name(be, i);
}
static inline int kv_be_set_dropped_qualifiers(kv_backend *be, uint32_t family_id,
                                               const uint8_t *const *quals,
                                               const uint32_t *lens, uint32_t n) {
  if (!be->ops->set_dropped_qualifiers) return kv_be_unsupported(be, "set_dropped_qualifiers");
  return be->ops->set_dropped_qualifiers(be, family_id, quals, lens, n);
}
static inline int kv_be_write(kv_backend *be, const kv_batch *b, uint64_t *seq_out) {
  return be->ops->write(be, b, seq_out);
}
static inline int kv_be_check_and_write(kv_backend *be, const kv_backend_check *chk,
                                        const kv_batch *b, bool *applied,
                                        uint64_t *seq_out) {
  if (!be->ops->check_and_write) return kv_be_unsupported(be, "check_and_write");
  return be->ops->check_and_write(be, chk, b, applied, seq_out);
}
static inline int kv_be_flush(kv_backend *be, const char *table) {
  return be->ops->flush(be, table);
}
static inline int kv_be_get(kv_backend *be, const kv_scan_options *o, const void *row,
                            size_t row_len, kv_backend_scan **scan_out, kv_row *out_row) {
  return be->ops->get(be, o, row, row_len, scan_out, out_row);
}
static inline int kv_be_scan_open(kv_backend *be, const kv_scan_options *o,
                                  const kv_backend_read *x, kv_backend_scan **out) {
  return be->ops->scan_open(be, o, x, out);
}
static inline int kv_be_scan_next(kv_backend *be, kv_backend_scan *s, kv_row *row) {
  return be->ops->scan_next(be, s, row);
}
static inline const kv_value_vector *kv_be_scan_row_vectors(kv_backend *be,
                                                            const kv_backend_scan *s,
                                                            uint32_t *n) {
  return be->ops->scan_row_vectors(be, s, n);
}
static inline void kv_be_scan_metrics(kv_backend *be, const kv_backend_scan *s,
                                      kv_scan_metrics *out) {
  be->ops->scan_metrics(be, s, out);
}
/* NULL s is a no-op. */
static inline void kv_be_scan_close(kv_backend *be, kv_backend_scan *s) {
  if (s) be->ops->scan_close(be, s);
}
static inline int kv_be_snapshot_acquire(kv_backend *be, uint64_t *snap_out) {
  return be->ops->snapshot_acquire(be, snap_out);
}
static inline void kv_be_snapshot_release(kv_backend *be, uint64_t snap) {
  be->ops->snapshot_release(be, snap);
}
static inline int kv_be_split_points(kv_backend *be, uint32_t family_id, uint32_t max_chunks,
                                     kv_be_split_fn each, void *ctx) {
  if (!be->ops->split_points) return kv_be_unsupported(be, "split_points");
  return be->ops->split_points(be, family_id, max_chunks, each, ctx);
}
/* NULL be: KV_MISUSE, as kv_estimate_range's NULL store (the planner plans hypothetical
** tables, planner/advise.c, with no backend: no estimates). */
static inline int kv_be_estimate(kv_backend *be, uint32_t family_id, const kv_range *range,
                                 const kv_estimate_opts *opts, uint64_t *rows,
                                 uint64_t *bytes) {
  if (!be) return KV_MISUSE;
  if (!be->ops->estimate) return kv_be_unsupported(be, "estimate");
  return be->ops->estimate(be, family_id, range, opts, rows, bytes);
}
/* Whether `name` is a foreign table of the store (the op above); msg[0] == 0 when not, and
** always when the backend has no such op. */
static inline int kv_be_foreign_table(kv_backend *be, const char *name, char *msg, size_t cap) {
  if (cap) msg[0] = 0;
  if (!be->ops->foreign_table) return KV_OK;
  return be->ops->foreign_table(be, name, msg, cap);
}

/* kv_scan_prefixes through any backend (kv/backend/backend_prefixes.c): on the local store
** under be, kv_scan_prefixes itself; elsewhere one scan of one row per prefix found, 256 at
** most (then *more is set) (the planner's count of prefixes for a skip scan by prefix). Same arguments,
** results and errors, plus those of the backend's scans. */
int kv_be_scan_prefixes(kv_backend *be, uint32_t family_id, kv_prefix_len_fn prefix_len,
                        void *prefix_ctx, const kv_range *ranges, uint32_t n_ranges,
                        uint32_t max,
                        void (*each)(void *each_ctx, const uint8_t *prefix, uint32_t len),
                        void *each_ctx, uint32_t *n, bool *more);

/* The planner's statistics of a family (planner/select.c): the backend's family_stats, else
** the local store's under it (a wrapper of the local backend that does not forward it),
** else KV_ERR_INVALID (not supported); NULL be: KV_MISUSE (as kv_be_estimate). */
static inline int kv_be_family_stats(kv_backend *be, uint32_t family_id,
                                     kv_family_stats *out) {
  if (!be) return KV_MISUSE;
  if (be->ops->family_stats) return be->ops->family_stats(be, family_id, out);
  if (be->local) return kv_family_get_stats(be->local, family_id, out);
  return kv_be_unsupported(be, "family_stats");
}

#ifdef __cplusplus
}
#endif
#endif /* ROWAN_KV_BACKEND_H */
