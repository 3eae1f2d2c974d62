/*
** kv/colscan/colscan.h: the columnar aggregate scan: a filtered count (and the values a caller
** wants aggregated) computed per store-file block on the block's column streams, without
** assembling rows (Phoenix's "SERVER FILTER BY ... SERVER AGGREGATE INTO SINGLE ROW",
** evaluated next to the data in parallel chunks).
**
** What it answers, for one family F of one table: the rows R that a kv scan of F at the
** latest snapshot, projected to the qualifiers Q, would hand out (a row with at least one
** visible cell of Q) and that pass every predicate (a predicate is "the cell of qualifier q
** exists and its value compares with a constant as asked", values compared as unsigned
** bytes with a proper prefix first, the order of catalog/valcodec.h). It counts R and hands
** the caller, block by block, the values of the wanted qualifiers of R's rows.
**
** The rows may be limited to key ranges (spec.ranges, spec.skip: the rows a kv scan with
** those kv_scan_options.ranges / skip_prefix would read): blocks wholly outside them are not
** read, a block partly inside is evaluated with each row's key checked (its key stream is
** decoded), and spec.keys hands each passing row's key to the consumer (GROUP BY on key
** columns, exec/op_colagg_group.c). kv_colagg_key_in is that check for a caller's own rows.
**
** It is exact by refusing what it cannot see whole:
**  - the whole scan is refused (result.applicable false, nothing consumed) when F's store
**    files' key ranges overlap, when more than KV_COLAGG_MAX_MEM_ROWS rows have memstore
**    cells, or when a commit raced the start;
**  - the rows with memstore cells (active or frozen, at the snapshot) inside the key ranges
**    are handed back as one-key ranges, and every block whose key range holds one of them as
**    its range;
**  - a block is not evaluated but handed back as a key range to read the normal way
**    (result.fallback) when it holds a tombstone, two versions of one (row, qualifier), a
**    cell past the family's TTL, a value group of the wrong width, or an unknown layout;
**  - a row split across two blocks is handed back the same way (a one-key range).
** The caller reads the fallback ranges with kv_scan_open at result.snapshot (pinned until
** kv_colagg_result_free), the same projection and the same predicates, and adds those rows
** that kv_colagg_key_in accepts (a fallback range may reach past the key ranges).
** Not here: SQL types and aggregates (exec/op_colagg.c), the predicate's origin
** (planner/filter.h). docs/KV_COLSCAN.md has the rules in prose.
*/
#ifndef ROWAN_KV_COLSCAN_H
#define ROWAN_KV_COLSCAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kv/kv.h"

#define KV_COLAGG_MAX_QUALS 64u  /* qualifiers in a projection */
#define KV_COLAGG_MAX_PREDS 32u  /* predicates */
#define KV_COLAGG_MAX_ARGS 16u   /* qualifiers whose values are handed out */
#define KV_COLAGG_MAX_THREADS 4u /* chunks evaluated at once */
#define KV_COLAGG_MAX_MEM_ROWS 4096u /* rows with memstore cells it hands back at most */

/* ORDER KV_COLOP: colscan_block.c's pass() switches on these. */
enum kv_colop {
  KV_COL_EQ = 0, KV_COL_NE, KV_COL_LT, KV_COL_LE, KV_COL_GT, KV_COL_GE,
  KV_COL_PRESENT /* passes whenever the cell exists (a comparison TRUE for every value) */
};

/* One predicate: the cell of quals[q] exists and value op k holds. */
typedef struct kv_colpred {
  uint32_t q;           /* index into kv_colagg_spec.quals */
  uint8_t op;           /* enum kv_colop */
  const uint8_t *k;     /* the constant's encoded bytes (copied by kv_colagg_run) */
  uint32_t klen;        /* their length */
} kv_colpred;

/* The values of the wanted qualifiers (args) of n passing rows, in row order: for arg a,
** vals[a].p[i] / vals[a].len[i] is row i's value, p[i] NULL when the row has no such cell.
** With spec.keys, vals[n_args] holds the rows' keys the same way. Pointers are valid during
** the call only. */
typedef struct kv_colvals {
  const uint8_t *const *p; /* value bytes per row, or NULL (no cell) */
  const uint32_t *len;     /* value lengths per row */
} kv_colvals;

/* Consumer of passing rows: called per block (and per fallback-free boundary row) from a
** worker thread, with that worker's ctx. Returns 0, or a nonzero code that stops the scan
** (returned as result.consumer_rc with kv_colagg_run returning KV_OK). */
typedef int (*kv_colagg_fn)(void *ctx, uint32_t n_rows, const kv_colvals *vals);

typedef struct kv_colagg_spec {
  uint32_t family_id;                     /* the family F */
  const uint8_t *const *quals;            /* the projection Q (n_quals >= 1) */
  const uint32_t *qual_lens;              /* their lengths */
  uint32_t n_quals;                       /* entries (<= KV_COLAGG_MAX_QUALS) */
  const int32_t *widths;                  /* per qual: width every value must have, or -1 */
  const kv_colpred *preds;                /* ANDed predicates (0: every row of R passes) */
  uint32_t n_preds;                       /* entries (<= KV_COLAGG_MAX_PREDS) */
  const uint32_t *args;                   /* qualifier indexes whose values are handed out */
  uint32_t n_args;                        /* entries (<= KV_COLAGG_MAX_ARGS) */
  kv_colagg_fn consume;                   /* consumer, or NULL when only the count matters */
  void *const *ctx;                       /* one consumer ctx per thread */
  int threads;                            /* chunks and threads: 1 (blocks in key order, one
                                             thread) .. KV_COLAGG_MAX_THREADS */
  const kv_range *ranges;                 /* key ranges (kv_scan_options.ranges' rules: sorted,
                                             disjoint, a NULL bound open), or NULL: every key */
  uint32_t n_ranges;                      /* entries */
  const kv_skip_prefix *skip;             /* or NULL: only rows whose key after its prefix
                                             lies in one of skip->suffixes (a skip scan by
                                             prefix, kv.h; rows_per_prefix must be 0) */
  bool keys;                              /* hand out the passing rows' keys (vals[n_args]) */
  struct kv_trace *trace;                 /* or NULL: the blocks read are recorded there
                                             (kv_trace in kv/kv.h; added after the workers
                                             are joined), and, when no fallback range is
                                             handed back, one range: the whole key space */
} kv_colagg_spec;

typedef struct kv_colagg_result {
  bool applicable;        /* false: refused whole (why says why); nothing was consumed */
  const char *why;        /* static reason when not applicable */
  uint64_t rows;          /* rows of R counted from blocks (fallback rows not included) */
  uint64_t rows_examined; /* rows with a cell of Q seen in evaluated blocks */
  uint64_t blocks;        /* blocks read */
  uint64_t blocks_fallback; /* of which handed back as ranges */
  uint64_t blocks_cache_hit; /* of which answered from the column cache (no read) */
  uint64_t bytes_read;    /* on-disk bytes of the blocks read */
  uint64_t reads;         /* preads of them: one per run of blocks that follow each other
                             in a file, none of them in the column cache (up to 64 KiB) */
  uint64_t bytes_inflated; /* raw bytes decompressed from them: of a sectioned block only the
                              rows and cells section and the referenced value groups */
  uint64_t cells;         /* cells in the blocks read */
  uint64_t files;         /* store files read */
  int threads;            /* threads used */
  int consumer_rc;        /* nonzero code a consumer stopped the scan with */
  kv_range *fallback;     /* sorted, disjoint key ranges to read the normal way (malloc) */
  uint32_t n_fallback;    /* entries */
  uint64_t snapshot;      /* the sequence number the answer is at (pinned) */
  kv_db *db;              /* the store the snapshot is pinned in (NULL: none) */
  uint8_t *keys;          /* key bytes of the fallback ranges (malloc) */
} kv_colagg_result;

/* Run the columnar aggregate scan described by spec over db. *res is filled (free it with
** kv_colagg_result_free in every case). Returns KV_OK (check res->applicable; a refused scan
** is KV_OK too), KV_ERR_CORRUPT / KV_ERR_IO (a block failed to read or decode; the message
** names the file and offset), KV_ERR_NOTFOUND (unknown family), KV_ERR_INVALID (a bad
** spec: counts over the limits, a predicate or arg naming no qualifier), KV_ERR_NOMEM. */
int kv_colagg_run(kv_db *db, const kv_colagg_spec *spec, kv_colagg_result *res);

/* Whether a row key lies in spec's key ranges and skip-scan suffixes (true with neither):
** the check the scan applies to every row, for the caller's fallback rows. */
bool kv_colagg_key_in(const kv_colagg_spec *spec, const uint8_t *key, uint32_t key_len);

/* Release the fallback ranges and the pinned snapshot. NULL or a zeroed result is fine. */
void kv_colagg_result_free(kv_colagg_result *res);

#endif /* ROWAN_KV_COLSCAN_H */
