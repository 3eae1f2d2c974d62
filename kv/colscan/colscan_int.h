/*
** kv/colscan/colscan_int.h: internals shared by kv/colscan/colscan.c (sources, chunks, threads, the merge of
** chunk boundaries, fallback ranges), kv/colscan/colscan_block.c (one block: read, walk the
** streams, check), kv/colscan/colscan_eval.c (predicates, columns, the column cache) and
** kv/colscan/colscan_rows.c (keyed scans: the row view and its cache entries). Not part of kv/'s
** contract.
**
** Rows that may continue across a block boundary are carried as fragments: a fragment is
** what one block holds of one row (the values of the referenced qualifiers, copied), or a
** "fallback" marker meaning rows with this key are read the normal way. A chunk feeds its
** fragments in key order into a one-slot "pending" state: a fragment with the pending key
** merges into it; one with another key completes the pending row, which is then evaluated
** and consumed. The first fragment of a chunk after the first may continue the previous
** chunk's last row, so it is kept (head) for the merge after the threads join, as is the
** chunk's last pending row (tail).
*/
#ifndef ROWAN_KV_COLSCAN_INT_H
#define ROWAN_KV_COLSCAN_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kv/colscan/colscan.h"
#include "kv/db/db_impl.h"
#include "kv/sf/sf_dec.h"
#include "kv/sf/sf_int.h"

enum { CF_NONE = 0, CF_ROW = 1, CF_FALLBACK = 2 }; /* fragment kinds */
#define KV_MAX_QUALIFIER_CACHED 16u /* longest qualifier whose column the cache keeps */
#define KV_CS_RUN_BYTES 65536u /* one pread reads consecutive uncached blocks up to this */
#define KV_CS_SIG_MAX 512u /* bytes of a keyed scan's cache signature (cs_plan.sig) */

/* What one block holds of one row, or a fallback marker. */
typedef struct cs_frag {
  uint8_t kind;             /* CF_* */
  bool has_q;               /* a cell of the projection Q was seen */
  bool dup;                 /* a referenced qualifier was seen twice (two versions) */
  bool tomb;                /* this part of the row has a tombstone: it masks nothing in its
                               own block, but the row way decides when the row continues */
  bool kin;                 /* keyed scans: the key lies in the key ranges (set with the key
                               by the row view, kv/colscan/colscan_rows.c; checked once) */
  uint8_t *key;             /* row key (malloc) */
  uint32_t key_len;         /* its length */
  uint32_t key_cap;         /* bytes allocated at key */
  uint64_t have;            /* bit j: referenced qualifier j has a value */
  uint32_t voff[KV_COLAGG_MAX_QUALS]; /* per referenced qualifier: offset of its value in vals */
  uint32_t vlen[KV_COLAGG_MAX_QUALS]; /* its length */
  uint8_t *vals;            /* value bytes (malloc) */
  uint32_t vals_len, vals_cap; /* in use / allocated */
} cs_frag;

/* A key range handed back, inclusive at both ends (copies). */
typedef struct cs_range {
  uint8_t *start; uint32_t start_len; /* first row key */
  uint8_t *end; uint32_t end_len;     /* last row key */
} cs_range;

/* One block of the scan, in key order across files. */
typedef struct cs_block {
  kv_sfh *file;             /* its store file */
  uint32_t index;           /* block number in the file */
} cs_block;

/* The compiled spec, shared read-only by the workers. */
typedef struct cs_plan {
  const kv_colagg_spec *spec; /* the caller's spec */
  uint32_t n_ref;           /* referenced qualifiers (preds and args), <= 64 */
  uint32_t ref_q[KV_COLAGG_MAX_QUALS]; /* referenced j -> index into spec->quals */
  int32_t q_ref[KV_COLAGG_MAX_QUALS];  /* spec->quals index -> referenced j, or -1 */
  uint32_t pred_ref[KV_COLAGG_MAX_PREDS]; /* per pred: referenced j */
  uint32_t arg_ref[KV_COLAGG_MAX_ARGS];   /* per arg: referenced j */
  bool fast;                /* every pred and arg is on one qualifier (ref 0) */
  bool keyed;               /* key ranges, a skip scan or keys handed out: every row's key
                               is decoded and checked (the row view, kv/colscan/colscan_rows.c) */
  struct kv_cache *colcache; /* column cache, when the fast path or the row view may use it
                                (else NULL) */
  uint8_t qual[KV_MAX_QUALIFIER_CACHED]; /* the fast path's qualifier (cache entries) */
  uint32_t qual_len;        /* its length */
  uint64_t qual_hash;       /* a hash of it (keyed: of sig), in the cache key */
  uint8_t sig[KV_CS_SIG_MAX]; /* keyed: the projection, the referenced qualifiers and their
                                 widths, as a row view entry records them (sig_len bytes) */
  uint32_t sig_len;         /* its length */
  const uint8_t *mkeys;     /* row keys with memstore cells at the snapshot, back to back */
  const uint32_t *moff;     /* n_mkeys + 1 offsets into mkeys, keys sorted and distinct */
  uint32_t n_mkeys;         /* rows with memstore cells: their blocks go the row way */
  int64_t ttl_ms;           /* the family's TTL, 0 = forever */
  int64_t now_ms;           /* the clock for TTL */
} cs_plan;

/* One worker's state: its blocks, scratch, pending row and results. */
typedef struct cs_worker {
  const cs_plan *plan;       /* shared plan */
  const cs_block *blocks;   /* its chunk */
  uint32_t n_blocks;        /* blocks in the chunk */
  void *ctx;                /* consumer ctx */
  bool head_open;           /* the chunk's first row may continue the previous chunk */
  cs_frag pending;          /* the row being completed */
  cs_frag head;             /* first fragment, kept for the merge (head_open chunks) */
  cs_frag tail;             /* last pending row at the chunk's end */
  cs_frag tmp;              /* scratch fragment */
  cs_range *ranges;         /* fallback ranges in key order */
  uint32_t n_ranges, cap_ranges; /* in use / allocated */
  kv_sfbuf disk;            /* the blocks of the last run read, back to back */
  const cs_block *run_first, *run_end; /* that run: blocks [run_first, run_end) of the chunk */
  uint64_t runs;            /* preads made (one per run) */
  kv_sfbuf raw;             /* decompressed */
  kv_sf_sections sec;       /* a sectioned block's sections (only the needed ones inflated) */
  void *scratch;            /* per block arrays (colscan_block.c's own) */
  uint64_t rows, rows_examined, n_read, blocks_fallback, bytes, cells; /* results */
  uint64_t inflated;        /* raw block bytes decompressed (sectioned: only sections used) */
  uint64_t hits;            /* blocks answered from the column cache */
  uint32_t done;            /* blocks of the chunk processed (the first `done`) */
  uint8_t *hit_map;         /* with a trace: per block of the chunk, 1 = from the column
                               cache (malloc'ed, n_blocks entries), else NULL */
  int consumer_rc;          /* a consumer's stop code */
  int rc;                   /* KV_OK or the error (message in msg) */
  char msg[256];            /* error message */
} cs_worker;

/* Process the worker's chunk. Sets w->rc / w->msg on failure. */
void kv_cs_run_chunk(cs_worker *w);
/* Feed a fragment (ownership of its buffers swaps with the pending slot). */
int kv_cs_feed(cs_worker *w, cs_frag *f);
/* Complete the pending row: evaluate and consume it (or keep it as the head). */
int kv_cs_flush(cs_worker *w);
/* Append a fallback range [start, end] (copied), merging with the previous one when they
** touch. KV_OK or KV_ERR_NOMEM. */
int kv_cs_add_range(cs_worker *w, const uint8_t *start, uint32_t start_len,
                    const uint8_t *end, uint32_t end_len);
/* Set a fragment's key (copied). KV_OK or KV_ERR_NOMEM. */
int kv_cs_frag_key(cs_frag *f, const uint8_t *key, uint32_t len);
/* Append value j of fragment f (n bytes at p; the fragment's buffer grows as needed) and
** mark it present. KV_ERR_NOMEM when the buffer cannot grow. */
int kv_cs_frag_value(cs_frag *f, uint32_t j, const uint8_t *p, uint32_t n);
/* Free a fragment's buffers; it becomes CF_NONE. */
void kv_cs_frag_free(cs_frag *f);
/* Free per-worker scratch. */
void kv_cs_worker_free(cs_worker *w);
/* Evaluate the predicates on a complete fragment and consume it if it passes. */
int kv_cs_emit(cs_worker *w, const cs_frag *f);
/* kv_colagg_key_in with the last prefix found (*pp, *pl: NULL, 0 at first; the bytes must
** stay valid between calls) reused when the key begins with it. */
bool kv_cs_key_in(const kv_colagg_spec *sp, const uint8_t *k, uint32_t n, const uint8_t **pp,
                  uint32_t *pl);
/* kin[r] = whether row r's key (kb + ko[r], ko[r + 1] - ko[r]; rows in key order) lies in
** the spec's key ranges and skip-scan suffixes, for rows 0 .. nrows-1. */
void kv_cs_rows_in(const kv_colagg_spec *sp, const uint8_t *kb, const uint32_t *ko,
                   uint32_t nrows, uint8_t *kin);
/* Whether rows with keys between lo and hi (inclusive) may lie in the spec's key ranges and
** skip-scan suffixes (false: no such row can). */
bool kv_cs_span_may_match(const kv_colagg_spec *sp, const uint8_t *lo, uint32_t lo_len,
                          const uint8_t *hi, uint32_t hi_len);
/* Whether every key between lo and hi (inclusive) lies in the key ranges and suffixes. */
bool kv_cs_span_inside(const kv_colagg_spec *sp, const uint8_t *lo, uint32_t lo_len,
                       const uint8_t *hi, uint32_t hi_len);
/* After block b of file rd was ruled out (its keys end at or before hi): the next block of
** the file that may hold a key in the ranges (rd->nblocks: none); every block skipped holds
** only keys below the next key that may match. */
uint32_t kv_cs_next_block(const kv_colagg_spec *sp, const kv_sf_reader *rd, uint32_t b,
                          const uint8_t *hi, uint32_t hi_len);
/* True when a row key with memstore cells lies in [k0, k1]. */
bool kv_cs_mem_overlaps(const cs_plan *pl, const uint8_t *k0, uint32_t l0, const uint8_t *k1,
                        uint32_t l1);
/* Unsigned byte comparison of two keys, a prefix first. */
int kv_cs_key_cmp(const uint8_t *a, uint32_t an, const uint8_t *b, uint32_t bn);
/* 1 when the value (p, n) passes predicate pr, else 0 (cat_vc_compare order). */
int kv_cs_pass(const kv_colpred *pr, const uint8_t *p, uint32_t n);

/* ---- One block's walk state (kv/colscan/colscan_block.c fills it, kv/colscan/colscan_eval.c reads it) ---- */
/* Per referenced qualifier of one block: where its value group is. */
typedef struct rgroup {
  int32_t d;                /* dictionary index, or -1: not in this block */
  bool fixed;               /* fixed-width group */
  uint32_t w;               /* its width */
  uint32_t count;           /* values in the group */
  const uint8_t *base;      /* fixed: transposed bytes; variable: the data bytes */
  const uint8_t *lens, *lens_end; /* variable: the length stream */
  bool flat;                /* ptr/len below are filled */
  uint8_t *buf; size_t buf_cap;   /* fixed: un-transposed values */
  uint8_t *dx; size_t dx_cap;     /* a decimal-scaled group's values rebuilt (8 bytes,
                                     transposed: base points here) */
  bool scaled;              /* decimal-scaled in the block: sd is its header (its planes in
                               the raw block), kept so the column cache stores the planes */
  kv_sfdec sd;
  const uint8_t **ptr; uint32_t *len; size_t pl_cap; /* per rank: value */
} rgroup;

typedef struct bscratch {
  uint32_t *rf; size_t rf_cap;      /* row r's first cell; [nrows] = ncells */
  uint8_t *cq; size_t cq_cap;       /* per cell: dictionary index */
  uint8_t *pat; size_t pat_cap;     /* 0, 1, .., pat_q - 1 repeated, pat_len bytes: the
                                       qualifier stream of a block whose rows are regular */
  uint32_t pat_q, pat_len;
  const uint8_t *ty;                /* per cell: type byte (in the raw block), or NULL when
                                       every cell is a put */
  uint8_t *k0, *k1; size_t k0_cap, k1_cap; /* first and last row keys */
  uint32_t k0_len, k1_len;          /* their lengths */
  uint8_t *kb; size_t kb_cap;       /* keyed: every row's key, back to back */
  uint32_t *ko; size_t ko_cap;      /* keyed: nrows + 1 offsets into kb */
  uint8_t *kin; size_t kin_cap;     /* keyed: per row, 1 when inside the key ranges */
  int32_t in0, in1;                 /* keyed: first and last row inside them */
  uint8_t *pass; size_t pass_cap;   /* per value or row: passes so far */
  uint32_t *sel; size_t sel_cap;    /* selected ranks or rows */
  const uint8_t **vp[KV_COLAGG_MAX_ARGS]; uint32_t *vl[KV_COLAGG_MAX_ARGS]; size_t v_cap;
                                    /* consumer batch per arg */
  /* keyed scans: the row view (kv/colscan/colscan_rows.c), every row of the block */
  const uint8_t *const *vw[KV_COLAGG_MAX_QUALS]; /* per referenced qualifier: per row, its
                                       value, or NULL (no put of it in the row) */
  const uint32_t *vwl[KV_COLAGG_MAX_QUALS]; /* the values' lengths */
  const uint8_t **rvp[KV_COLAGG_MAX_QUALS]; uint32_t *rvl[KV_COLAGG_MAX_QUALS];
  size_t rv_cap;                    /* storage behind vw / vwl when rank is not row */
  const uint8_t *hq;                /* per row: 1 when it has a put of the projection Q */
  uint8_t *hq_own; size_t hq_cap;   /* storage behind hq */
  bool tomb0, tomb1;                /* the first / last row has a tombstone */
  rgroup g[KV_COLAGG_MAX_QUALS];    /* per referenced qualifier */
  uint32_t rank[KV_COLAGG_MAX_QUALS]; /* general path: next rank per referenced qualifier */
  uint32_t c4[4][256];              /* a block's one-byte qualifier stream counted four ways:
                                       only entries below its dictionary's size are cleared
                                       and read (a higher byte lands beyond them: corrupt) */
} bscratch;

/* Cell i of the walked block is a put (not a tombstone). */
static inline bool kv_cs_is_put(const bscratch *s, uint32_t i) { return !s->ty || !s->ty[i]; }

/* Fill a group's ptr/len per rank (un-transposing fixed-width values). KV_OK, KV_ERR_NOMEM,
** or KV_ERR_CORRUPT with *why (a length stream that does not add up). */
int kv_cs_flatten(rgroup *g, const char **why);
/* Hand n selected rows to the consumer: arg a of row i is (s->vp[a][i], s->vl[a][i]).
** Counts them as passing rows. KV_OK. */
int kv_cs_consume(cs_worker *w, bscratch *s, uint32_t n);
/* Make room for n rows in the consumer batch arrays of n_args args. KV_OK or KV_ERR_NOMEM. */
int kv_cs_batch_room(bscratch *s, size_t n, uint32_t n_args);
/* Fast path: ranks [k0, k1) of group g are the interior rows' cells of the one referenced
** qualifier: compare them as a column, count and consume those that pass. Errors as
** kv_cs_flatten. */
int kv_cs_fast_interior(cs_worker *w, bscratch *s, rgroup *g, uint32_t k0, uint32_t k1,
                        const char **why);
/* Dense blocks (every row holds one cell of every referenced qualifier): rows 1 .. nr-2 are
** ranks 1 .. nr-2 of every group; compare each predicate's group as a column. Errors as
** kv_cs_flatten. */
int kv_cs_dense_interior(cs_worker *w, bscratch *s, uint32_t nr, const char **why);
/* Answer block b from the column cache: returns 1 when it did (the result code in *rcp),
** 0 when the block is not there (nothing done). */
int kv_cs_from_cache(cs_worker *w, bscratch *s, const cs_block *b, int *rcp);
/* Whether block b's column is in the column cache now (a lookup, counted as one: a block
** found here is looked up again when its turn comes; the entry is not held). */
bool kv_cs_in_cache(const cs_plan *pl, const cs_block *b);
/* Keep a clean, walked block's column (fast path) in the column cache (best effort). */
void kv_cs_to_cache(cs_worker *w, bscratch *s, const cs_block *b, uint32_t nr, uint32_t n);
/* Hand the walked block's rows [s->k0, s->k1] back as a fallback range, through the
** fragments. KV_OK or KV_ERR_NOMEM. */
int kv_cs_fallback_block(cs_worker *w, bscratch *s, uint32_t nrows);
/* ---- Keyed scans: the row view (kv/colscan/colscan_rows.c) -------------------------------------- */
/* Which of the walked block's rows (keys in s->kb / s->ko) lie in the key ranges: s->kin,
** s->in0 / s->in1 (-1: none). KV_OK or KV_ERR_NOMEM. */
int kv_cs_keyed_in(cs_worker *w, bscratch *s, uint32_t nrows);
/* Build the row view of a walked, clean block of nr rows and n cells (dense: every row holds
** one put of every referenced qualifier; the groups are flat). KV_OK or KV_ERR_NOMEM. */
int kv_cs_view_walk(cs_worker *w, bscratch *s, uint32_t nr, uint32_t n, bool dense,
                    const int16_t *dref, const bool *inq);
/* Evaluate a block through its row view: the first and last rows as fragments, the rows
** between them checked (key ranges, predicates) and consumed. KV_OK or KV_ERR_NOMEM. */
int kv_cs_view_block(cs_worker *w, bscratch *s, uint32_t nr);
/* Keep the row view of block b (nr rows, n cells) in the column cache (best effort). */
void kv_cs_view_to_cache(cs_worker *w, bscratch *s, const cs_block *b, uint32_t nr, uint32_t n);
/* Answer keyed block b from the column cache: 1 when it did (result code in *rcp), 0 when
** the block is not there (nothing done). */
int kv_cs_view_from_cache(cs_worker *w, bscratch *s, const cs_block *b, int *rcp);
/* Admission to the column cache of an entry of `charge` bytes under (file, off): when it fits
** without evicting, was refused lately, or one time in a few at random (scan resistance,
** kv/colscan/colscan_eval.c). */
bool kv_cs_admit(const cs_plan *pl, uint64_t file, uint64_t off, size_t charge);
/* The column cache's number within a file for block offset off (the plan's hash in the low
** bits). */
uint64_t kv_cs_cache_off(const cs_plan *pl, uint64_t off);
/* Kinds of column cache entries: each begins with its kind (uint32_t). */
enum { KV_CS_ENTRY_COLUMN = 0x636f6c31u, KV_CS_ENTRY_ROWS = 0x726f7731u };

/* *buf = a[0..an) then b[0..bn) (grown as needed), *len its length. KV_OK or KV_ERR_NOMEM. */
int kv_cs_set_key(uint8_t **buf, size_t *cap, uint32_t *len, const uint8_t *a, uint32_t an,
                  const uint8_t *b, uint32_t bn);

#endif /* ROWAN_KV_COLSCAN_INT_H */
