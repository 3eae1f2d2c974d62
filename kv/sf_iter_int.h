/*
** kv/sf_iter_int.h: the state of a store-file iterator (kv/sf.h kv_sf_iter_new), shared by
** the two files that implement it: kv/sf_iter.c (blocks, seeks, moves, the cell-by-cell
** kv_iter) and kv/sf_iter_rows.c (rows taken whole, kv/sf_rows.h). Split from one file for
** size; not part of kv/'s contract: only those two files include it.
*/
#ifndef ROWAN_KV_SF_ITER_INT_H
#define ROWAN_KV_SF_ITER_INT_H

#include "kv/cache.h"
#include "kv/sf_cblock.h"
#include "kv/sf_point.h"
#include "kv/sf_reuse.h"
#include "kv/sf_rows.h"
#include "kv/status.h"

#define PKEYS 32u /* projected qualifiers compared as numbers (kv_sfi_compute_keep) */

typedef struct sf_iter {
  kv_iter base;            /* vtable; must come first */
  kv_sf_reader *r;         /* the file */
  kv_sf_io *io;            /* counters to bump (may be NULL) */
  kv_sfbuf disk;           /* the block as read from the file */
  kv_sfbuf scratch;        /* the decompressed block */
  kv_sf_cdec dec;          /* the privately decoded block and its memory */
  kv_sf_pdec pd;           /* a point read's rows decoded alone (kv/sf_point.h) */
  bool partial;            /* b is &pd.b: rows [prow, prow + pd.b.nrows) of block bi only */
  uint32_t prow;           /* when partial: index in block bi of b's first row */
  const kv_sf_cblock *b;   /* the block being read: &dec.b, or a cached one */
  kv_cache_entry *ce;      /* the cache entry b is (a reference), or NULL */
  bool fill_cache;         /* add blocks read to the cache (compaction reads do not) */
  int64_t bi;              /* index of the loaded block, -1 if none */
  uint32_t ci;             /* current cell in the block */
  uint32_t ri;             /* row of the current cell */
  bool valid;              /* positioned on a cell */
  int status;              /* sticky error, KV_OK if none */
  kv_cell cur;             /* the current cell, filled on every move */
  int64_t key_ri;          /* row whose key cur.row holds, -1 if none */
  uint8_t *kbuf;           /* rebuilt row key (blocks with keys of one length) */
  size_t kbuf_cap;         /* bytes allocated in kbuf */
  kv_sfbuf vbuf;           /* the current cell's gathered fixed-width value */
  kv_sf_rankpos rp;        /* value group ranks at a cell of the loaded block */
  const uint8_t *const *pq; /* projected qualifiers (caller's), when proj */
  const uint32_t *pql;     /* their lengths */
  uint32_t npq;            /* entries in pq */
  uint64_t pkey[PKEYS];    /* short_key of each projected qualifier, when npq <= PKEYS and
                              each is at most 7 bytes (short_proj) */
  bool short_proj;         /* pkey holds the projection */
  bool proj;               /* forward moves keep only projected cells */
  uint8_t *keep;           /* per dictionary entry of block keep_bi: 1 = projected */
  size_t keep_cap;         /* entries allocated in keep */
  int64_t keep_bi;         /* block keep was computed for, -1 if none */
  bool fast;               /* kv_sf_iter_fast_rows was called: rows may be taken whole */
  kv_sf_rowcond fc;        /* its conditions */
  int64_t fast_bi;         /* block the fast state below is for, -1 if none */
  bool fast_ok;            /* that block's rows may be taken whole */
  int8_t last_spans;       /* its last row continues in the next block: 1 yes, 0 no, -1 not
                              known yet */
  struct fast_q *fq;       /* per dictionary entry of that block */
  size_t fq_cap;           /* entries allocated in fq */
  kv_sfbuf rowvals;        /* fixed-width values gathered for the row taken (private
                              blocks, whose fixed-width values are transposed) */
  bool vec_ok;             /* the projection is short_proj, of distinct qualifiers: rows
                              may be taken as value vectors (kv_sf_iter_take_vec) */
  bool full_ok;            /* the fast block is packed and vec_ok: a full row (one cell of
                              every dictionary entry) is taken by the table in fq alone */
  uint32_t full_w;         /* full_ok: a full row's fixed-width value bytes */
  uint64_t full_present;   /* full_ok: the projection positions a full row fills */
  uint32_t full_kept;      /* full_ok: how many (the entries the projection keeps) */
} sf_iter;

/* What the fast row path needs of one dictionary entry of the loaded block. */
typedef struct fast_q {
  const uint8_t *qual;     /* the qualifier's bytes in the block's dictionary */
  uint32_t qlen;           /* its length */
  uint32_t fw;             /* fixed width of its value group, 0 when variable */
  uint8_t keep;            /* 1 = the projection keeps it */
  uint8_t fixed;           /* its value group is fixed-width */
  uint8_t pidx;            /* kept: its position in the projection when vec_ok (take_vec) */
  uint32_t toff;           /* full_ok: offset of its value among a full row's fixed-width
                              values (a row with a cell of every entry) */
} fast_q;

static inline uint32_t rfirst(const kv_sf_cblock *b, uint32_t r) {
  return (uint32_t)kv_sf_pa_get(&b->row_first, r);
}

/* A qualifier of at most 7 bytes as one number (its length in the top byte): two are
** equal exactly when the qualifiers are. */
static inline uint64_t short_key(const uint8_t *p, uint32_t len) {
  uint64_t k = (uint64_t)len << 56;
  for (uint32_t i = 0; i < len; i++) k |= (uint64_t)p[i] << (8 * i);
  return k;
}

/* Recompute the keep flags of the projection for the loaded block. False (status set, the
** iterator invalid) when out of memory. */
bool kv_sfi_compute_keep(sf_iter *it);

/* Position on the first cell at or after cell ci (row ri, ci's row or an earlier one) of
** the loaded block that the projection keeps, loading the next blocks as needed (the
** iterator is left invalid at the file's end or on an error). */
void kv_sfi_settle_fwd(sf_iter *it, uint32_t ci, uint32_t ri);

#endif /* ROWAN_KV_SF_ITER_INT_H */
