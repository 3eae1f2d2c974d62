/*
** kv/sf/sf_point.h: decoding only the rows a point read or a short range read needs out of a
** raw store file block, for a read whose block is neither cached nor going to be
** (kv/sf/sf_iter.c).
**
** A whole-block decode of a 64 KiB block costs the decode of ~5,400 cells, and packing them
** for the cache, to hand out the ~13 cells of one row. The point decoder reads the same raw
** layout (docs/FORMAT.md Part 2, "Raw block") but builds only the first row whose key is
** at or above the key asked for and the row after it (so an iterator that steps past the
** row lands on a real cell without reading the block again), or, for a range read, the rows
** from the range's start up to the first at or above its end key, as a compact block of their
** own (kv/sf/sf_cblock.h): per-cell numbers of those rows only, their fixed-width values
** gathered whole in cell order (cvals), their variable-width values pointing into the raw
** block. The other rows' cells are stepped over: the per-cell streams are skipped a word
** at a time, value groups located from their headers, ranks counted from the qualifier and
** type streams.
**
** It trusts nothing: every read is bounded by the block's end (it never overruns), counts
** and indexes it uses are checked, and on every block kv_sf_cblock_decode accepts it gives
** the same cells for those rows. It checks less than the whole-block decoder (the rows and
** cells it steps over, e.g. that value lengths it does not need add up): the block's
** checksum (kv_sf_unframe_block) stands for those. Not here: I/O, the block framing, the
** block cache, iteration.
*/
#ifndef ROWAN_KV_SF_POINT_H
#define ROWAN_KV_SF_POINT_H

#include <stddef.h>
#include <stdint.h>
#include "kv/sf/sf_cblock.h"
#include "kv/sf/sf_dec.h"

/* The point decoder's reusable state. */
typedef struct kv_sf_pdec {
  kv_sf_cblock b;          /* the rows decoded, as a block of their own (no cache charge) */
  kv_sfbuf arena;          /* b's arrays, row keys and gathered fixed-width values */
  kv_sf_cgroup *groups;    /* b's nquals + 1 value groups (b.groups points here) */
  size_t groups_cap;       /* entries allocated in groups */
  uint32_t *gt;            /* per value group of the raw block: 4 numbers (scratch) */
  kv_sfdec *dh;            /* per value group: its header when decimal-scaled (scratch) */
  size_t dh_cap;           /* entries allocated in dh */
  size_t gt_cap;           /* entries allocated in gt */
  uint32_t *rf;            /* first cell of each row of the raw block, nrows + 1 (scratch) */
  size_t rf_cap;           /* entries allocated in rf */
  uint8_t *kb;             /* a row key being rebuilt (prefix-coded keys; scratch) */
  size_t kb_cap;           /* bytes allocated in kb */
  uint32_t *kl;            /* lengths of the decoded rows' keys (scratch) */
  size_t kl_cap;           /* entries allocated in kl */
  uint32_t first_row;      /* index in the raw block of b's row 0 (block_rows: none) */
  uint32_t block_rows;     /* rows of the raw block (its header) */
  uint32_t block_cells;    /* cells of the raw block (its header) */
} kv_sf_pdec;

/* Decode from raw block [raw, raw+len) the first row whose key is >= [key, key+key_len)
** and the rows after it, want rows in all at most (want 0 is taken as 1), fewer at the
** block's end, into w->b, reusing w's memory (it only grows). w->first_row gets that row's
** index in the block and w->block_rows, w->block_cells the block's counts; when every row
** of the block is below the key, first_row = block_rows and w->b holds no row (nrows 0:
** read nothing from it). w->b's rows hold all their cells in this block with their
** values, qualifiers, timestamps, sequence numbers and types as kv_sf_cblock_decode gives
** them; its dictionary is the block's (same indexes); its value groups count only its own
** cells; its fixed-width values are in cvals. The raw bytes must stay alive and unchanged
** while w->b is read (qualifiers and variable-width values point into them). KV_OK;
** KV_ERR_CORRUPT with *why set to a static reason; KV_ERR_NOMEM. */
int kv_sf_point_decode(kv_sf_pdec *w, const uint8_t *raw, size_t len, const uint8_t *key,
                       uint32_t key_len, uint32_t want, const char **why);

/* kv_sf_point_decode for a range read that stops at [stop, stop+stop_len) (NULL: no stop
** key): the rows end at the first row whose key is >= stop, that row included, or at want
** rows or the block's end, whichever comes first. A range's rows, the row after them (the
** reader sees where the range ends without reading the block again), and no others. */
int kv_sf_point_decode_to(kv_sf_pdec *w, const uint8_t *raw, size_t len, const uint8_t *key,
                          uint32_t key_len, const uint8_t *stop, uint32_t stop_len,
                          uint32_t want, const char **why);

/* Free the decoder's memory; it is empty and reusable. */
void kv_sf_pdec_free(kv_sf_pdec *w);

/* How many kv_sf_point_decode calls in this process returned rows (a relaxed counter, for
** tests that check the point path ran). */
uint64_t kv_sf_point_decodes(void);

#endif /* ROWAN_KV_SF_POINT_H */
