/*
** kv/sf/sf_iter_int.h: the state of a store-file iterator (kv/sf/sf.h kv_sf_iter_new), shared by
** the three files that implement it: kv/sf/sf_iter.c (blocks, seeks, moves, the cell-by-cell
** kv_iter), kv/sf/sf_iter_proj.c (the projection, the shape memo) and kv/sf/sf_iter_rows.c
** (rows taken whole, kv/sf/sf_rows.h), and read by kv/scan/scan_run.c (row runs step the
** iterators of a scan's families in their blocks and take rows with the same emit
** functions, kv_sfi_row_views / kv_sfi_row_vec, defined here so both inline them), by
** kv/sf/sf_copy.c (compaction copies the block an iterator stands on) and by
** kv/sf/sf_estimate.c (the planner's exact count of an end block's rows loads the block as a
** scan would, kv_sfi_load). Split from one file for size; not part of kv/'s contract: only
** those six files include it.
*/
#ifndef ROWAN_KV_SF_ITER_INT_H
#define ROWAN_KV_SF_ITER_INT_H

#include "kv/util/cache.h"
#include "kv/sf/sf_cblock.h"
#include "kv/sf/sf_point.h"
#include "kv/sf/sf_reuse.h"
#include "kv/sf/sf_rows.h"
#include "kv/util/status.h"

#define PKEYS 32u /* projected qualifiers compared as numbers (kv_sfi_compute_keep) */

typedef struct sf_iter {
  kv_iter base;            /* vtable; must come first */
  kv_sf_reader *r;         /* the file */
  kv_sf_io *io;            /* counters to bump (may be NULL) */
  kv_sfbuf disk;           /* the block as read from the file */
  kv_sfbuf scratch;        /* the decompressed block */
  kv_sf_cdec dec;          /* the privately decoded block and its memory */
  kv_sf_sections sec;      /* the section table of a block decoded in part (load_block) */
  kv_sf_pdec pd;           /* a point read's rows decoded alone (kv/sf/sf_point.h) */
  bool partial;            /* b is &pd.b: rows [prow, prow + pd.b.nrows) of block bi only */
  uint32_t prow;           /* when partial: index in block bi of b's first row */
  const uint8_t *praw;     /* when partial: the raw block (in disk or scratch) */
  size_t praw_len;         /* its length */
  uint32_t pagain;         /* range reads of block bi decoded in part again from praw */
  bool has_stop;           /* a range read (kv_sf_iter_seek_range) ends before row key stop:
                              the next blocks it reads are decoded up to it (step_fwd) */
  bool stop_upper;         /* and nothing at or above stop is wanted (a point read: an
                              exclusive upper bound, as RocksDB's iterate_upper_bound): a
                              move that would load a block whose first row is at or above
                              it ends the iteration instead (step_fwd); a range read still
                              finds the first row at or above stop (a skip scan's probe
                              wants it) */
  uint8_t *stop;           /* that key */
  uint32_t stop_len;       /* its length */
  size_t stop_cap;         /* bytes allocated in stop */
  const kv_sf_cblock *b;   /* the block being read: &dec.b, a cached one, or &wide.b */
  kv_cache_entry *ce;      /* the cache entry b is (a reference), or NULL */
  kv_sf_wide wide;         /* a narrow cached block widened (b is &wide.b, reading ce's) */
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
  bool byte_proj;          /* every projected qualifier is one byte (the catalog's column
                              qualifiers): ptab holds the projection */
  uint8_t ptab[256];       /* byte_proj: per qualifier byte, 1 + its first position in the
                              projection; 0 = not projected */
  bool proj;               /* forward moves keep only projected cells */
  bool mp_ok;              /* pkey holds the last projection given (kv_sf_iter_project), of
                              mp_n short qualifiers, with its vec_ok and byte_proj in mp_vec
                              and mp_byte: the same projection given again (a retargeted
                              iterator's next scan) is taken as it stands */
  bool mp_vec, mp_byte;
  uint32_t mp_n;
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
                              blocks, whose raw fixed-width groups are transposed) */
  bool vec_ok;             /* the projection is short_proj, of distinct qualifiers: rows
                              may be taken as value vectors (kv_sf_iter_take_vec) */
  bool full_ok;            /* the fast block is packed and vec_ok: a full row (one cell of
                              every dictionary entry) is taken by the table in fq alone */
  uint32_t full_w;         /* full_ok: a full row's fixed-width value bytes */
  uint64_t full_present;   /* full_ok: the projection positions a full row fills */
  uint32_t full_kept;      /* full_ok: how many (the entries the projection keeps) */
  bool lists_ok;           /* full_ok and the lists below are made (kv_sfi_full_lists: only
                              for a row run; a point read needs none) */
  uint32_t n_ffix;         /* lists_ok: kept entries of fixed width > 0, listed below */
  uint8_t ffix_p[64];      /* their projection positions */
  uint32_t ffix_off[64];   /* their values' offsets from a full row's first value (toff) */
  uint32_t n_fvar;         /* full_ok: kept entries of variable width, listed below */
  uint8_t fvar_q[64];      /* their dictionary entries */
  bool fdense;             /* full_ok and no kept entry of fixed width 0: a row run writes
                              a full row's fixed-width values by fpos_off below */
  uint32_t n_fpos;         /* fdense: 1 + the last projection position of a fixed-width
                              kept entry (0 if none) */
  size_t fpos_off[64];     /* fdense: per projection position below n_fpos, the offset of
                              its value from a full row's first value (toff), 0 where no
                              fixed-width entry sits (a variable-width one's is written
                              after; another's is not present: its pointer is not read) */
  /* The shape memo (kv/sf/sf_iter_proj.c): the tables above made for a block carry over
     to the next block of the same shape (kv_sf_cblock.shape) under the same projection, as
     the blocks of one table's store files mostly are */
  uint8_t memo_shape[2 * KV_SF_SHAPE_MAX]; /* the shape they were made for */
  uint8_t memo_len;        /* its bytes; 0: none */
  bool memo_keep;          /* keep holds that shape's flags under the projection in pkey */
  bool memo_fast;          /* fq, full_* and the lists (when lists_ok) hold its table, made
                              with proj == memo_fast_proj for a block whose full rows could
                              (memo_fast_full: packed values, not a point read's rows) or
                              could not be taken by the table (full_prepare) */
  bool memo_fast_proj, memo_fast_full;
  uint8_t memo_q[KV_SF_SHAPE_MAX]; /* its qualifier bytes: fq[q].qual points here */
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

/* The shapes of block emit_cells has a copy for. */
enum { EMIT_ANY = 0, EMIT_NIBBLE = 1, EMIT_ONE_QUAL = 2 };

/* Write views of the cells in [ci, end) of row ri that the projection keeps into out,
** stepping the ranks rk (at ci) to end; returns how many. `shape` (a constant where it is
** called, so the compiler makes a copy for each): EMIT_ANY, or a block with one timestamp
** per row, packed (no gather) and four-bit qualifiers (EMIT_NIBBLE) or a single qualifier
** (EMIT_ONE_QUAL: a marker family). gather: room for the row's fixed-width values of a
** private block, else NULL. */
static inline uint32_t emit_cells(const kv_sf_cblock *b, const fast_q *fq, uint32_t *rk,
                                  uint32_t ri, uint32_t ci, uint32_t end, uint32_t fid,
                                  kv_cell_view *out, uint8_t *gather, const int shape) {
  const bool common = shape != EMIT_ANY;
  uint32_t fo = b->nquals + 1, n = 0; /* rk[fo]: the offset in cvals */
  bool per_row = common || b->ts_per_row;
  int64_t row_ts = per_row ? kv_sf_cblock_ts(b, ri, ci) : 0;
  const uint8_t *qp = b->qual.p, *cvals = b->cvals;
  for (uint32_t j = ci; j < end; j++) {
    uint32_t q = shape == EMIT_NIBBLE     ? (uint32_t)(qp[j >> 1] >> ((j & 1) * 4)) & 15
                 : shape == EMIT_ONE_QUAL ? (uint32_t)b->qual.base
                                          : (uint32_t)kv_sf_pa_get(&b->qual, j);
    const fast_q *f = &fq[q];
    if (f->keep) {
      kv_cell_view *v = &out[n++];
      v->family_id = fid;
      v->qual = f->qual;
      v->qual_len = f->qlen;
      v->ts = per_row ? row_ts : kv_sf_cblock_ts(b, ri, j);
      if (f->fixed) {
        v->value_len = f->fw;
        if (!f->fw) {
          v->value = (const uint8_t *)"";
        } else if (common || !gather) {
          v->value = cvals + rk[fo];
        } else if (!b->groups[q].transposed) { /* value r at data[r * fw] */
          v->value = b->groups[q].data + (size_t)rk[q] * f->fw;
        } else { /* transposed: byte k of value r at data[k * count + r] */
          const kv_sf_cgroup *g = &b->groups[q];
          const uint8_t *src = g->data + rk[q];
          for (uint32_t k = 0; k < f->fw; k++) gather[k] = src[(size_t)k * g->count];
          v->value = gather;
          gather += f->fw;
        }
      } else {
        const kv_sf_cgroup *g = &b->groups[q];
        uint64_t o = kv_sf_pa_get(&g->voff, rk[q]);
        v->value = g->data + o;
        v->value_len = (uint32_t)(kv_sf_pa_get(&g->voff, rk[q] + 1) - o);
        /* apart from the row's fixed-width values (a point read's other cold line): ask
           for it now, so its miss overlaps the rest of the row's way to the caller */
        __builtin_prefetch(v->value);
      }
    }
    rk[q]++;
    rk[fo] += f->fw;
  }
  return n;
}

/* emit_cells in the form of a value vector: the value of each kept cell in [ci, end) goes
** to vals/lens at its projection position, its bit into the mask returned (the projection's
** positions are distinct, so its bits count the cells kept). The ranks rk step to end.
** nibble: a block of four-bit qualifiers; packed: its fixed-width values whole in cvals (no
** gather); both constants where called, so the compiler makes a copy for each. gather as in
** emit_cells, for a block not packed. The offset in cvals is kept in a local:
** through rk it would be a chain of stores and loads from cell to cell. */
static inline uint64_t emit_vec(const kv_sf_cblock *b, const fast_q *fq, uint32_t *rk,
                                uint32_t ci, uint32_t end, const uint8_t **vals, uint32_t *lens,
                                uint8_t *gather, const bool nibble, const bool packed) {
  uint32_t fo = b->nquals + 1, off = rk[fo];
  uint64_t present = 0;
  const uint8_t *qp = b->qual.p, *cvals = b->cvals;
  for (uint32_t j = ci; j < end; j++) {
    uint32_t q = nibble ? (uint32_t)(qp[j >> 1] >> ((j & 1) * 4)) & 15
                        : (uint32_t)kv_sf_pa_get(&b->qual, j);
    const fast_q *f = &fq[q];
    uint32_t fw = f->fw;
    if (f->keep) {
      uint32_t i = f->pidx;
      present |= (uint64_t)1 << i;
      if (f->fixed) {
        lens[i] = fw;
        if (!fw) {
          vals[i] = (const uint8_t *)"";
        } else if (packed) {
          vals[i] = cvals + off;
        } else if (!b->groups[q].transposed) { /* value r at data[r * fw] */
          vals[i] = b->groups[q].data + (size_t)rk[q] * fw;
        } else { /* transposed: byte k of value r at data[k * count + r] */
          const kv_sf_cgroup *g = &b->groups[q];
          const uint8_t *src = g->data + rk[q];
          for (uint32_t k = 0; k < fw; k++) gather[k] = src[(size_t)k * g->count];
          vals[i] = gather;
          gather += fw;
        }
      } else {
        const kv_sf_cgroup *g = &b->groups[q];
        uint64_t o = kv_sf_pa_get(&g->voff, rk[q]);
        vals[i] = g->data + o;
        lens[i] = (uint32_t)(kv_sf_pa_get(&g->voff, rk[q] + 1) - o);
        __builtin_prefetch(vals[i]); /* as in emit_cells */
      }
    }
    rk[q]++;
    off += fw;
  }
  rk[fo] = off;
  return present;
}

/* The views of the cells in [ci, end) of row ri of the loaded block (fast_ok) that the
** projection keeps, into out (room for end - ci): emit_cells in the copy for the block's
** shape. The ranks must be at ci (it->rp.at); they are left at end. gather: room for the
** row's fixed-width values of a private block (it->rowvals), else NULL. Returns how many. */
static inline uint32_t kv_sfi_row_views(sf_iter *it, uint32_t ri, uint32_t ci, uint32_t end,
                                        uint32_t fid, kv_cell_view *out, uint8_t *gather) {
  const kv_sf_cblock *b = it->b;
  uint32_t n;
  bool plain = b->ts_per_row && !gather; /* the common cases, specialized */
  if (plain && b->qual.w == 3)
    n = emit_cells(b, it->fq, it->rp.ranks, ri, ci, end, fid, out, NULL, EMIT_NIBBLE);
  else if (plain && b->qual.w == 0 && b->qual.step == 0 && b->nquals == 1)
    n = emit_cells(b, it->fq, it->rp.ranks, ri, ci, end, fid, out, NULL, EMIT_ONE_QUAL);
  else
    n = emit_cells(b, it->fq, it->rp.ranks, ri, ci, end, fid, out, gather, EMIT_ANY);
  it->rp.at = end;
  return n;
}

/* kv_sfi_row_views as a value vector (it->vec_ok): the value of each kept cell in [ci, end)
** at its projection position in vals / lens; returns the positions' mask, *kept the cells
** kept. A full row of a packed block (one cell of every dictionary entry, full_ok) is taken
** by the block's table without reading its cells. Ranks and gather as kv_sfi_row_views. */
static inline uint64_t kv_sfi_row_vec(sf_iter *it, uint32_t ci, uint32_t end,
                                      const uint8_t **vals, uint32_t *lens, uint8_t *gather,
                                      uint32_t *kept) {
  const kv_sf_cblock *b = it->b;
  uint64_t present;
  if (it->full_ok && end - ci == b->nquals) { /* a full row: by the table, no cell read */
    uint32_t *rk = it->rp.ranks, fo = b->nquals + 1, off = rk[fo];
    const uint8_t *row = b->cvals + off;
    for (uint32_t q = 0; q < b->nquals; q++) {
      const fast_q *f = &it->fq[q];
      if (f->keep) {
        uint32_t i = f->pidx;
        if (f->fixed) {
          vals[i] = f->fw ? row + f->toff : (const uint8_t *)"";
          lens[i] = f->fw;
        } else {
          const kv_sf_cgroup *g = &b->groups[q];
          uint64_t o = kv_sf_pa_get(&g->voff, rk[q]);
          vals[i] = g->data + o;
          lens[i] = (uint32_t)(kv_sf_pa_get(&g->voff, rk[q] + 1) - o);
        }
      }
      rk[q]++;
    }
    rk[fo] = off + it->full_w;
    it->rp.at = end;
    *kept = it->full_kept;
    return it->full_present;
  }
  if (!gather && b->qual.w == 3)
    present = emit_vec(b, it->fq, it->rp.ranks, ci, end, vals, lens, NULL, true, true);
  else if (b->qual.w == 3) /* a private block of four-bit qualifiers */
    present = emit_vec(b, it->fq, it->rp.ranks, ci, end, vals, lens, gather, true, false);
  else
    present = emit_vec(b, it->fq, it->rp.ranks, ci, end, vals, lens, gather, false, !gather);
  uint32_t n = 0; /* cells kept: the bits set (no popcount instruction assumed) */
  for (uint64_t m = present; m; m &= m - 1) n++;
  it->rp.at = end;
  *kept = n;
  return present;
}

/* Make the lists a row run reads a full row of the fast block by (n_ffix, ffix_p,
** ffix_off, n_fvar, fvar_q, fdense, n_fpos, fpos_off; it->full_ok must hold) and set
** lists_ok. */
void kv_sfi_full_lists(sf_iter *it);

/* Recompute the keep flags of the projection for the loaded block (or take them from the
** shape memo). False (status set, the iterator invalid) when out of memory. */
bool kv_sfi_compute_keep(sf_iter *it);
/* Whether the projection keeps dictionary entry [qb, qb+ql). */
bool kv_sfi_proj_keeps(const sf_iter *it, const uint8_t *qb, uint32_t ql);
/* Whether the fast row table (fq, full_*, the lists) was made for a block like the loaded
** one (its shape, packed values or not) under the present projection: fast_prepare need
** not make it. */
bool kv_sfi_memo_fast(const sf_iter *it);
/* Record that the fast row table was just made for the loaded block: remembered for its
** shape when it has one (fq's qualifiers then point into the memo), else the memo forgets
** any table. */
void kv_sfi_memo_fast_made(sf_iter *it);

/* Position on the first cell at or after cell ci (row ri, ci's row or an earlier one) of
** the loaded block that the projection keeps, loading the next blocks as needed (the
** iterator is left invalid at the file's end or on an error). */
void kv_sfi_settle_fwd(sf_iter *it, uint32_t ci, uint32_t ri);
/* Make block bi the loaded block as a seek does (from the block cache, or read, decoded and
** inserted when the cache takes it) and return it, or NULL on error (the iterator's sticky
** status says which). The block stays valid until the iterator loads another or is
** destroyed. */
const kv_sf_cblock *kv_sfi_load(sf_iter *it, uint32_t bi);

#endif /* ROWAN_KV_SF_ITER_INT_H */
