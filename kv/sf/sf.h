/*
** kv/sf/sf.h: store files, the immutable sorted files a memstore flush or a compaction writes
** (HBase's HFile). A store file holds the cells of one family in kv_cell_cmp order, in
** blocks compressed with lz4 (or stored raw), each block checksummed (XXH3-64) and carrying
** its raw and compressed sizes. Inside a block the cells are grouped by column: row keys are
** stored once per row, prefix-compressed (fixed-length keys: a block-wide common prefix and
** delta-coded or transposed suffixes); timestamps, types and sequence numbers are
** delta-coded streams; values are grouped by qualifier and fixed-width value runs are
** byte-transposed before compression. After the blocks: a bloom filter on row keys, the
** block index (first key, offset, sizes, cell and row counts per block) and a fixed-size
** trailer with magic, format version, key range, timestamp and sequence ranges and counts.
** Files are written whole, synced, then named in the MANIFEST. docs/FORMAT.md,
** "Store file". Readers use pread of single blocks,
** binary search in the block index and within a block, and never allocate per cell.
** Implementation: kv/sf/sf_write.c, kv/sf/sf_read.c, kv/sf/sf_iter.c, kv/sf/sf_block.c,
** kv/sf/sf_decode.c, kv/util/bloom.c; internals in kv/sf/sf_int.h. Errors set kv_errmsg().
*/
#ifndef ROWAN_KV_SF_H
#define ROWAN_KV_SF_H

#include <stdbool.h>
#include <stdint.h>
#include "kv/env/env.h"
#include "kv/util/iter.h"

/* ---- Writer ---- */
typedef struct kv_sf_writer kv_sf_writer;
typedef struct kv_sf_writer_options {
  uint32_t block_size;   /* target uncompressed bytes per block (0 = 64 KiB) */
  int compression;       /* KV_COMPRESSION_LZ4 or KV_COMPRESSION_NONE */
  uint32_t bloom_bits_per_key; /* 0 = default 10; bloom on row keys; KV_SF_NO_BLOOM (file
                             writers only): no row is hashed and the file gets the empty
                             filter, which says "absent" to every probe: only for a file
                             read in order and never probed (the bulk load's runs) */
  uint32_t spill_bytes;  /* 0 = 1 MiB: a file writer holding this many bytes of block index
                             entries, or of closed bloom filter partitions, appends them to
                             `<path>.spill` and frees them, and copies them into the file at
                             finish (the spill file is removed then, or at abort): its memory
                             stays bounded whatever the file's size. The bytes are the same. */
} kv_sf_writer_options;

#define KV_SF_NO_BLOOM UINT32_MAX /* kv_sf_writer_options.bloom_bits_per_key: no filter */

/* Create `path` (truncated) for writing through `env`. `opts` may be NULL (64 KiB blocks,
** lz4, 10 bloom bits per row key); block_size is capped at 256 MiB. Returns KV_OK with *out
** the writer; KV_ERR_INVALID for an unknown compression; the env's error if the file cannot
** be created; KV_ERR_NOMEM. On failure *out is NULL. */
int kv_sf_writer_open(kv_env *env, const char *path, const kv_sf_writer_options *opts,
                      kv_sf_writer **out);
/* Add a cell; cells must come in strictly increasing kv_cell_cmp order (KV_ERR_INVALID
** otherwise, and the cell is not added; the writer stays usable). The cell's bytes are
** copied. KV_ERR_TOOBIG for a row key, qualifier or value over the kv.h maxima,
** KV_ERR_INVALID for a bad type. An I/O error (or KV_ERR_NOMEM) writing a full block is
** returned here and is sticky: every later add and finish return it. */
int kv_sf_writer_add(kv_sf_writer *w, const kv_cell *c);
/* Add the n cells of one row at once: cells[i].row all hold one row key, which sorts after
** the previous cell's. The result, and the error when one is refused, are those of adding
** them one by one with kv_sf_writer_add (which is what happens when any rule is broken);
** the row's key is compared and hashed once, not per cell. */
int kv_sf_writer_add_row(kv_sf_writer *w, const kv_cell *cells, size_t n);
/* Finish: write the last block, bloom, index and trailer, sync, close. Fills *props
** (may be NULL; left untouched on failure). Returns KV_OK, the env's error, a sticky error
** of an earlier add, or KV_ERR_NOMEM. The writer is freed whatever the result; on failure
** the file is left for the caller to remove. A writer with no cells makes a valid empty
** file. */
typedef struct kv_sf_props {
  uint32_t format_version;    /* store file format version (2; 3: decimal-scaled
                                 groups; 4: a partitioned bloom filter) */
  uint64_t file_size, cells, rows, blocks; /* bytes of the file; cells; distinct row keys;
                                 data blocks */
  uint64_t min_seq, max_seq;  /* sequence number range (0, 0 for an empty file) */
  int64_t min_ts, max_ts;     /* timestamp range (0, 0 for an empty file) */
  uint64_t raw_bytes;         /* uncompressed block bytes */
} kv_sf_props;
int kv_sf_writer_finish(kv_sf_writer *w, kv_sf_props *props);
/* Widen w's timestamp and sequence ranges (the trailer's) to cover p's: blocks copied whole
** from a file whose every cell goes into w (a minor compaction's input, kv/sf/sf_copy.h) leave
** w's ranges exact once that file's props are given. Empty p (no cells): nothing. */
void kv_sf_writer_widen(kv_sf_writer *w, const kv_sf_props *p);
/* Abandon a writer (closes the file without syncing; caller removes it). NULL is a no-op. */
void kv_sf_writer_abort(kv_sf_writer *w);

/* ---- Reader ---- */
typedef struct kv_sf_reader kv_sf_reader;

/* Per-iterator I/O counters (the scan's per-family metrics point here). */
typedef struct kv_sf_io {
  uint64_t blocks_read, blocks_cache_hit, bytes_read, cells_decoded; /* blocks loaded (hits
                                 included), of which from a cache, on-disk bytes read,
                                 cells in the blocks decoded */
  uint64_t cells_skipped;     /* cells stepped over by a projection (kv_sf_iter_project) */
  uint64_t bytes_inflated;    /* raw block bytes decompressed (of a sectioned block decoded
                                 for a projection, only the sections it needed) */
  struct kv_trace *trace;     /* or NULL: each block load is also recorded there
                                 (kv/util/trace.h), as a block of family trace_fid */
  uint32_t trace_fid;         /* the family the blocks belong to (for the trace) */
} kv_sf_io;

/* Open and validate trailer, index and bloom (KV_ERR_CORRUPT names the file and offset).
** Data blocks are not read. Returns KV_OK with *out the reader (free with kv_sf_close);
** KV_ERR_CORRUPT; the env's error (KV_ERR_NOTFOUND for a missing file); KV_ERR_NOMEM.
** On failure *out is NULL. */
int kv_sf_open(kv_env *env, const char *path, kv_sf_reader **out);
/* kv_sf_open that keeps the block index whole only if that costs at most keep_max bytes
** (estimated from the section's size and block count), else, when the env maps the file,
** pages it (kv/sf/sf_index.c: a page table kept, pages of 64 entries read through the
** block cache). kv_sf_open keeps it whole (as this with keep_max UINT64_MAX) unless the
** environment's ROWAN_SF_PAGED_MIN names a block count the file reaches. */
int kv_sf_open_budget(kv_env *env, const char *path, uint64_t keep_max, kv_sf_reader **out);
/* Whether the reader's block index is paged. */
bool kv_sf_index_paged(const kv_sf_reader *r);
/* Close the file and free the reader (NULL is a no-op). Its iterators must be gone. */
void kv_sf_close(kv_sf_reader *r);
/* The file's counts and ranges from its trailer; owned by the reader. */
const kv_sf_props *kv_sf_get_props(const kv_sf_reader *r);
/* Bytes the open reader holds in memory for as long as the file is open: its block index
** (a 32-byte entry a block and the index section its first keys point into), the dense
** fence of first row keys, and the bloom filter (a single filter whole; of a partitioned
** one, the partition index only). Not the blocks (the block cache's), nor a mapping (the
** kernel's page cache). RocksDB reports the same as "rocksdb.estimate-table-readers-mem". */
size_t kv_sf_reader_mem(const kv_sf_reader *r);
/* The block index's part of it: decoded entries, the index section's copy, fences (a paged
** index: its page table and page fence). What kv_options.index_memory bounds. */
size_t kv_sf_index_mem(const kv_sf_reader *r);
/* Smallest and largest row key in the file (pointers owned by the reader); both NULL with
** length 0 for an empty file. */
void kv_sf_key_range(const kv_sf_reader *r, const uint8_t **first, uint32_t *first_len,
                     const uint8_t **last, uint32_t *last_len);
/* Bloom filter: false means the row is certainly absent. */
bool kv_sf_may_contain_row(const kv_sf_reader *r, const uint8_t *row, uint32_t len);
/* Serve the file's data blocks through `cache` (kv/util/cache.h; NULL = none), keyed by
** `file_id`, which must be unique among the files sharing the cache (kv/ passes the file
** number). Call before the first iterator is made; the cache must outlive the reader and
** its iterators. Entries are not dropped when the reader closes: the owner erases them
** (kv_cache_erase_file) when the file is deleted. */
struct kv_cache;
void kv_sf_set_cache(kv_sf_reader *r, struct kv_cache *cache, uint64_t file_id);
/* A new iterator over the file's cells; `io` (may be NULL) is incremented as blocks are
** read. Block damage surfaces through the iterator's status() as KV_ERR_CORRUPT. The
** reader must outlive the iterator. The reader may be shared by threads; iterators not.
** Returns NULL if out of memory. Destroy with it->ops->destroy(it). */
kv_iter *kv_sf_iter_new(kv_sf_reader *r, kv_sf_io *io);
/* The same; with fill_cache false, blocks found in the reader's cache are used but blocks
** read from the file are not added to it (compaction reads each block once). */
kv_iter *kv_sf_iter_new_opts(kv_sf_reader *r, kv_sf_io *io, bool fill_cache);
/* Make a store-file iterator show only the cells whose qualifier is one of quals[0..n)
** (lengths in lens) and the DeleteFamily tombstones, in every move: the other cells are
** stepped over inside the block, without a call per cell, and counted in the io's
** cells_skipped; their values are never located. A block missing from the cache that the
** cache does not take, when stored in sections (format version 2), is decoded in part into
** the iterator's own arrays: only the sections of its cells and of the value groups of the
** projected qualifiers and of the tombstones are decompressed (kv_sf_cblock_decode_part);
** such a block is never cached. The arrays must outlive the iterator
** (they are not copied). `it` must come from kv_sf_iter_new or kv_sf_iter_new_opts; call
** before the first move. */
void kv_sf_iter_project(kv_iter *it, const uint8_t *const *quals, const uint32_t *lens,
                        uint32_t n);
/* What kv_sf_estimate is asked: a key range, and how exactly to count its end blocks. */
typedef struct kv_sf_est {
  const uint8_t *start;   /* first row key, NULL = from the first row */
  uint32_t start_len;     /* its length */
  bool start_incl;        /* false: row `start` itself left out */
  const uint8_t *end;     /* last row key, NULL = to the last row */
  uint32_t end_len;       /* its length */
  bool end_incl;          /* false: row `end` itself left out */
  uint64_t limit;         /* > 0: bytes count only the blocks that hold the range's first
                             `limit` rows in scan order (a LIMIT pushed into the scan) */
  bool reverse;           /* the scan order for limit: descending keys */
  uint32_t *exact;        /* blocks that may still be read to count an end block's rows
                             exactly; each block read takes one. NULL or 0: none is read */
  int64_t *counted;       /* or NULL: the highest block index whose bytes an earlier range
                             counted; blocks at or below it add no bytes; raised to the last
                             block of this range */
} kv_sf_est;
/* Estimate the rows and on-disk bytes of the file in q's range from the block index: the
** blocks wholly inside count their rows; a block the range cuts (at most two, one per end)
** counts the rows of its row keys inside the range, read from the block itself while
** *q->exact allows (through the block cache, as a scan reads it: the scan that follows
** finds it there), else half its rows. Bytes are those of every block the range overlaps,
** counted whole (a scan reads a block whole), or with q->limit only those of the blocks up
** to the one holding the limit-th row. A block that cannot be read (an I/O error, damage)
** is counted by half and ends the exact counting: the scan reports the error. */
void kv_sf_estimate(kv_sf_reader *r, const kv_sf_est *q, uint64_t *rows, uint64_t *bytes);

#endif /* ROWAN_KV_SF_H */
