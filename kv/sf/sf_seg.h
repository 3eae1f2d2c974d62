/*
** kv/sf/sf_seg.h: store file segments, for the bulk load's pipeline (kv/bulk/bulk_write.c). A
** segment is a run of cells encoded ahead of time into finished store-file blocks (framed,
** lz4, checksummed) kept in memory, with their block index entries, the bloom hashes of
** their rows and their counts; a file writer later appends whole segments
** (kv_sf_writer_add_seg) as if their cells had been added one by one, except that every
** segment starts a new block. So one thread can encode the blocks of a part of the input
** while another parses the rest, and the file is put together at commit from segments in
** key order. A segment may be paged out (or written from the start) to a file the caller
** owns, to bound memory: its blocks are then read back from that file when appended.
**
** Every cell of a segment must carry the same sequence number (a bulk load's); the file
** writer may give the segment another one when it appends it (the sequence number a
** commit finally takes): the blocks are then re-framed with the new number in their
** header. Implemented in kv/sf/sf_write.c (the writer's own state is used in both modes).
** Not here: the file format itself (docs/FORMAT.md Part 2, kv/sf/sf.h), the order of
** segments (the caller's).
*/
#ifndef ROWAN_KV_SF_SEG_H
#define ROWAN_KV_SF_SEG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include "kv/sf/sf.h"

/* kv_bytes_cmp (kv/util/cell.h) for the short keys of the write paths: 8 bytes at a time, no
** library call (the writers compare every cell's row and qualifier with the previous
** one's). Same result as kv_bytes_cmp: unsigned byte order, a prefix first. */
static inline int kv_sf_key_cmp(const uint8_t *a, size_t al, const uint8_t *b, size_t bl) {
  size_t n = al < bl ? al : bl, i = 0;
#if defined(__GNUC__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  for (; i + 8 <= n; i += 8) {
    uint64_t x, y;
    memcpy(&x, a + i, 8);
    memcpy(&y, b + i, 8);
    if (x != y) return __builtin_bswap64(x) < __builtin_bswap64(y) ? -1 : 1;
  }
#endif
  for (; i < n; i++)
    if (a[i] != b[i]) return a[i] < b[i] ? -1 : 1;
  return (al > bl) - (al < bl);
}

typedef struct kv_sf_seg kv_sf_seg;

/* Open a writer that keeps its blocks in memory as a segment instead of writing a file.
** opts as kv_sf_writer_open. Add cells with kv_sf_writer_add (same order rules; every cell
** must have the same seq), then end with kv_sf_seg_finish, or kv_sf_writer_abort.
** KV_OK with *out, or KV_ERR_NOMEM / KV_ERR_INVALID (*out NULL). */
int kv_sf_seg_open(const kv_sf_writer_options *opts, kv_sf_writer **out);

/* Open a segment writer (as kv_sf_seg_open) whose framed blocks are appended to file f
** (opened for writing through env; the blocks' offset 0 is file offset base, which must be
** f's size now) as they are made, and at kv_sf_seg_finish the rows' bloom hashes after
** them, instead of kept in memory: only the block index entries stay in memory. f must stay open, and nothing else may append
** to it while the writer runs; the segment reads its blocks back from f until it is freed
** (f is not the segment's: the caller closes and removes it after freeing the segment).
** KV_OK, KV_MISUSE (NULL env or f), or kv_sf_seg_open's errors; an append error is the
** writer's sticky error. */
int kv_sf_seg_open_file(const kv_sf_writer_options *opts, kv_env *env, kv_file *f,
                        uint64_t base, kv_sf_writer **out);

/* Page out a finished segment: append its framed blocks, then its rows' bloom hashes, to
** file f (opened for writing through env, base = f's size now) and free them from memory; from then on the segment
** reads them back from f (same rules as kv_sf_seg_open_file). A segment already paged out
** or NULL: KV_OK, nothing done. KV_OK or the env's error (the segment then keeps its
** blocks in memory; f may hold part of them). Not thread-safe against readers of s. */
int kv_sf_seg_page_out(kv_sf_seg *s, kv_env *env, kv_file *f, uint64_t base);

/* Whether s keeps its blocks in a file (false for NULL). */
bool kv_sf_seg_paged(const kv_sf_seg *s);
/* Bytes of framed blocks s has, in memory or in its file (0 for NULL). */
uint64_t kv_sf_seg_data_bytes(const kv_sf_seg *s);

/* End a segment writer: its last block is encoded and *out gets the segment (NULL when no
** cell was added). The writer is freed whatever the result. KV_OK, KV_ERR_NOMEM, the
** sticky error of an earlier add, or KV_MISUSE for a file writer. Free *out with
** kv_sf_seg_free. */
int kv_sf_seg_finish(kv_sf_writer *w, kv_sf_seg **out);

/* Append segment s to the file writer w, its cells given sequence number seq. The
** segment's first row key must be above the row key of every cell added to w before
** (KV_ERR_INVALID otherwise, nothing appended); a block staged in w is written first.
** The segment is not changed (it may be appended again elsewhere). KV_OK, KV_ERR_INVALID,
** KV_ERR_NOMEM, KV_ERR_CORRUPT (a block of the segment does not unframe), the env's
** error (sticky, as a failed kv_sf_writer_add). */
int kv_sf_writer_add_seg(kv_sf_writer *w, const kv_sf_seg *s, uint64_t seq);

/* Append blocks [from, to) of segment s to w (a file writer, or a segment writer whose
** cells all have sequence number seq), their cells given sequence number seq: the same as
** kv_sf_writer_add_seg for those blocks alone. The first block's first row key must be above
** the row key of every cell added to w before (so a block whose first row continues the
** block before it, kv_sf_seg_binfo.cont, can only follow that block in the same call).
** to is capped at the segment's blocks; from >= to appends nothing. Errors as
** kv_sf_writer_add_seg (KV_ERR_INVALID also for a segment writer given another seq). */
int kv_sf_writer_add_seg_blocks(kv_sf_writer *w, const kv_sf_seg *s, size_t from, size_t to,
                                uint64_t seq);

/* One block of a segment, for a merge that copies blocks whole where it can. */
typedef struct kv_sf_seg_binfo {
  const uint8_t *first_row; /* its first cell's row key (into the segment) */
  uint32_t first_len;       /* its length */
  const uint8_t *last_row;  /* its last cell's row key (into the segment) */
  uint32_t last_len;        /* its length */
  uint32_t ncells;          /* cells in the block */
  bool cont;                /* its first row is the previous block's last row */
} kv_sf_seg_binfo;

/* Blocks in a segment (0 for NULL). */
size_t kv_sf_seg_nblocks(const kv_sf_seg *s);
/* Fill *out for block i of s. REQUIRES i < kv_sf_seg_nblocks(s). */
void kv_sf_seg_block_info(const kv_sf_seg *s, size_t i, kv_sf_seg_binfo *out);

/* A reader of a segment's blocks, one decoded block at a time. */
typedef struct kv_sf_seg_cur kv_sf_seg_cur;

/* A new reader, or NULL (out of memory). Free with kv_sf_seg_cur_free (NULL: no-op). */
kv_sf_seg_cur *kv_sf_seg_cur_new(void);
void kv_sf_seg_cur_free(kv_sf_seg_cur *c);
/* Decode block i of s into c (replacing the block it held); *ncells gets its cells. The
** segment must outlive the cells read. KV_OK, KV_ERR_CORRUPT, KV_ERR_NOMEM, KV_MISUSE
** (no block i). */
int kv_sf_seg_cur_load(kv_sf_seg_cur *c, const kv_sf_seg *s, size_t i, uint32_t *ncells);
/* Cell k (< *ncells of the last load) of the loaded block, in cell order, with the
** sequence number the segment was encoded with; pointers valid until the next load.
** Cheapest when k goes up one at a time. */
void kv_sf_seg_cur_cell(kv_sf_seg_cur *c, uint32_t k, kv_cell *out);

/* The sequence number the segment's cells were encoded with (0 for NULL). */
uint64_t kv_sf_seg_seq(const kv_sf_seg *s);
/* Cells in a segment (0 for NULL). */
uint64_t kv_sf_seg_cells(const kv_sf_seg *s);
/* Bytes a segment holds in memory (0 for NULL): its blocks unless paged out, its block
** index entries and keys, 8 bytes per row of bloom hashes. */
size_t kv_sf_seg_bytes(const kv_sf_seg *s);

/* Free a segment. NULL is a no-op. */
void kv_sf_seg_free(kv_sf_seg *s);

#endif /* ROWAN_KV_SF_SEG_H */
