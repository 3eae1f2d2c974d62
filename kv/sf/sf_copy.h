/*
** kv/sf/sf_copy.h: whole blocks copied from one store file into another, for minor compaction
** (kv/db/compact.c). Where a merge of store files reaches a block of one input whose rows all
** sort below the current rows of every other input, the output may take that block's
** on-disk bytes as they are: no cell is decoded into the merge, encoded again or
** compressed again. Only the block's rows are read (for the output's bloom filter, its
** last cell and the order check). Inputs whose key ranges do not overlap (a time series
** loaded in parts, files of a bulk load, flushes of keys that arrive in order) are then
** merged at the cost of reading them once.
** Not here: the merge itself and what a major compaction drops (kv/db/compact.c), the writer
** (kv/sf/sf_write.c kv_sf_writer_add_framed), the block format (docs/FORMAT.md Part 2).
*/
#ifndef ROWAN_KV_SF_COPY_H
#define ROWAN_KV_SF_COPY_H

#include <stdbool.h>
#include <stdint.h>
#include "kv/util/iter.h"
#include "kv/sf/sf.h"

struct kv_sf_copy_state;

/* Buffers reused from block to block (zero-initialize; free with kv_sf_copier_free). */
typedef struct kv_sf_copier {
  struct kv_sf_copy_state *st; /* allocated at the first copy */
  uint64_t rows_read;          /* blocks whose rows were read without the iterator */
} kv_sf_copier;

void kv_sf_copier_free(kv_sf_copier *c);

/* Whether store-file iterator `it` stands on the first cell of a block it holds decoded
** whole (where kv_sf_copy_blocks may copy). */
bool kv_sf_iter_at_block_start(kv_iter *it);

/* Copy to file writer w the blocks of store-file iterator `it` (kv_sf_iter_new_opts, with
** no projection) from the one it stands on, one after another, for as long as it stands
** on a block's first cell and that block's last row key sorts below [bound, bound +
** bound_len) (bound NULL: no bound). The block it stands on is read from the iterator
** (decoded whole); the blocks after it, while the block index alone shows their rows below
** the bound (the next block's first row, or the file's last row, sorts below it), are read
** without it: only their rows section (section 0 of a sectioned block), not their values.
** The caller has added to w every cell before it. `it`
** is then left on the first cell of the next block (not valid past the file's end), and
** *copied counts the blocks copied: 0 when `it` stands inside a block or on one that
** reaches the bound (the caller goes on cell by cell: the next block start may copy).
** Each block's bytes are read again from the file and checked (checksum, sizes) before they
** are appended. The caller widens w's timestamp and sequence ranges (kv_sf_writer_widen).
** KV_OK, or the error reading the file (KV_ERR_CORRUPT names the file and block), of the
** iterator or of the writer. */
int kv_sf_copy_blocks(kv_sf_copier *c, kv_sf_writer *w, kv_iter *it, const uint8_t *bound,
                      uint32_t bound_len, uint64_t *copied);

#endif /* ROWAN_KV_SF_COPY_H */
