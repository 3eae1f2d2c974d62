/*
** kv/sf/sf_rows.h: handing a store file's rows to a scan straight from the compact block, a
** row at a time, instead of a cell at a time through the iterator, the per-family merge and
** the visibility rules (the block-at-a-time row path of kv/scan/scan.c).
**
** A store-file iterator (kv/sf/sf_iter.c) that a scan enabled with kv_sf_iter_fast_rows can
** hand out the row it is positioned on as kv_cell_views whose qualifiers and values point
** into the block it holds, when the block is "simple" for the scan: only puts, no row with
** two cells of one qualifier (kv_sf_cblock.one_put_per_col, decided when the block is
** decoded), every sequence number at or below the scan's snapshot, no timestamp expired by
** the family's TTL or outside the scan's time range (the block's ranges against the
** conditions below). Then every cell of the row that the projection keeps is a visible
** version and the only one of its column: the visibility rules of kv/db/db_vis.c would hand
** it out unchanged. A row that continues into the next block is never handed out this way.
** The caller must know that no other source of the family has a cell in that row.
**
** kv_sf_iter_take_vec is the same hand-out in the form of a kv_value_vector: each kept
** cell's value at its qualifier's place in the projection, no view written.
**
** What this does not do: choose between the fast and the cell path (kv/scan/scan.c does, per row
** and family), apply tombstones or versions (a block that needs them is not simple), or
** reverse moves.
*/
#ifndef ROWAN_KV_SF_ROWS_H
#define ROWAN_KV_SF_ROWS_H

#include <stdbool.h>
#include <stdint.h>
#include "kv/util/iter.h"

/* The scan's visibility parameters for one family, as kv/db/db_vis.c applies them. */
typedef struct kv_sf_rowcond {
  uint64_t snapshot;   /* the scan's snapshot: a block with a newer cell is not simple */
  int64_t ttl_ms;      /* the family's TTL in ms, 0 = forever */
  int64_t now_ms;      /* the clock TTL is measured against */
  int64_t ts_min;      /* the scan's time range [ts_min, ts_max) */
  int64_t ts_max;      /* (INT64_MIN, INT64_MAX when the scan has none) */
  int versions;        /* the family's VERSIONS (>= 1 for the fast path to apply) */
  int max_versions;    /* the scan's max_versions (>= 1 for the fast path to apply) */
} kv_sf_rowcond;

/* Position store-file iterator `it` as seek() to the first cell of `row` would, with one
** search of the file's blocks. With `point` (a range of that one row key), first decide
** whether the file may hold the row at all: the block that would hold it is used at once
** when it is in the block cache (or already loaded from it), else the bloom filter is asked
** and, when it rules the row out, the iterator is left invalid, nothing read, and false is
** returned (the caller leaves the file out of that range); nothing after the row is
** wanted then, so the iteration ends before a block that starts above it. True otherwise
** (errors show in valid()/status() as after any move). */
bool kv_sf_iter_seek_row(kv_iter *it, const uint8_t *row, uint32_t len, bool point);

/* Position store-file iterator `it` at the first cell of the first row >= [row, row+len), as
** kv_sf_iter_seek_row with `point` false, for a range read that ends before row key
** [stop, stop+stop_len) (NULL: no end known; then it is kv_sf_iter_seek_row). A block that
** is not cached and that the cache does not take (cache_has_room) is decoded only from that
** row up to and including the first row >= stop (or the block's end): a move past those
** rows loads the block whole. Returns true (errors show in valid()/status()). */
bool kv_sf_iter_seek_range(kv_iter *it, const uint8_t *row, uint32_t len, const uint8_t *stop,
                           uint32_t stop_len);

/* Report that the row store-file iterator `it` stands on breaks the file's order (a block
** damaged under a valid checksum): sets the error message (the file, and the loaded block's
** number and offset when one is loaded) with `why` (a static reason) and returns
** KV_ERR_CORRUPT. The iterator is left as it is. */
int kv_sf_iter_corrupt(kv_iter *it, const char *why);

/* Results of kv_sf_iter_take_row. */
enum {
  KV_SF_ROW_NO = 0,   /* not here: read the row cell by cell (nothing was changed) */
  KV_SF_ROW_TAKEN = 1, /* the row's views were written */
  KV_SF_ROW_GROW = 2  /* more than `cap` views may be needed: *n_out says how many */
};

/* Let store-file iterator `it` (from kv_sf_iter_new*, a projection if any already set)
** hand out rows under the conditions *c (copied). Until this call, and again after
** kv_sf_iter_retarget, kv_sf_iter_take_row always answers KV_SF_ROW_NO. */
void kv_sf_iter_fast_rows(kv_iter *it, const kv_sf_rowcond *c);

/* Hand out the rest of the row `it` is positioned on (from its current cell to the row's
** last cell in this file) as views of family `fid` into out[0..cap): the cells the
** projection keeps, in cell order, qualifier and value pointing into the iterator's block
** (or into its own row buffer for fixed-width values of a block not in the cache). They stay
** valid until the iterator next moves. *n_out gets the views written, *kept the cells handed
** out (for the scan's cells_examined); the cells the projection steps over are added to the
** io's cells_skipped. The iterator stays on the row: the caller must call
** kv_sf_iter_next_row before any other move, cell() or status() use of it aside.
** Returns KV_SF_ROW_TAKEN, KV_SF_ROW_NO (it is not valid, the fast path is off, the block
** is not simple for the conditions, or the row may continue in the next block), or
** KV_SF_ROW_GROW (nothing written; *n_out is a sufficient cap). */
int kv_sf_iter_take_row(kv_iter *it, uint32_t fid, kv_cell_view *out, uint32_t cap,
                        uint32_t *n_out, uint64_t *kept);

/* kv_sf_iter_take_row in the form of a kv_value_vector (kv.h): under the same conditions,
** and only when the iterator has a projection of at most 32 distinct qualifiers of at most
** 7 bytes each (else KV_SF_ROW_NO, kv_sf_iter_take_row may still take the row), write the
** value of each cell of the row that the projection keeps at its qualifier's position in
** the projection: vals[i] / lens[i] for projected qualifier i, bit i of *present set (the
** other entries are left as they are). *kept gets the cells handed out; the cells stepped
** over are added to the io's cells_skipped. Returns KV_SF_ROW_TAKEN (then
** kv_sf_iter_next_row must follow as after kv_sf_iter_take_row) or KV_SF_ROW_NO. */
int kv_sf_iter_take_vec(kv_iter *it, const uint8_t **vals, uint32_t *lens, uint64_t *present,
                        uint64_t *kept);

/* After KV_SF_ROW_TAKEN: move `it` to the first cell (kept by the projection) after the row,
** as next() would after its last cell, loading the next blocks as needed. Errors show in
** valid()/status() as after any move. */
void kv_sf_iter_next_row(kv_iter *it);

/* Process-wide switch of the fast path (on by default), read by kv_scan_open: tests turn
** it off to compare with the cell-by-cell path. Not for production use. */
void kv_scan_set_fast_rows(bool on);
/* Whether it is on. */
bool kv_scan_fast_rows(void);
/* Process-wide switch of value vectors (kv.h kv_scan_options.value_vectors; on by default),
** read by kv_scan_open: when off, rows come as views alone. Tests compare the two. */
void kv_scan_set_value_vectors(bool on);
/* Whether it is on. */
bool kv_scan_value_vectors(void);
/* Process-wide switch of row runs (kv/scan/scan_run.c; on by default), read when a run would be
** set up: when off, every row takes the present path. Tests compare the two. Not for
** production use. */
void kv_scan_set_row_runs(bool on);
/* Whether it is on. */
bool kv_scan_row_runs(void);
/* Rows handed out by row runs in the scans closed so far, process-wide: tests check that
** the run path ran. */
uint64_t kv_scan_run_rows(void);
/* (Row, family) pairs handed out as value vectors by the scans closed so far, process-wide:
** tests check that the vector path ran. */
uint64_t kv_scan_vector_rows(void);
/* How many (row, family) pairs scan s handed out whole so far (0 for NULL): tests check
** that the fast path ran. */
struct kv_scan;
uint64_t kv_scan_rows_taken(const struct kv_scan *s);

#endif /* ROWAN_KV_SF_ROWS_H */
