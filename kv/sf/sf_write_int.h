/*
** kv/sf/sf_write_int.h: what the store file writer (kv/sf/sf_write.c) and its segments
** (kv/sf/sf_seg.c) share: the writer's and the segment's state and the writer's steps a
** segment reuses. Internal to kv/sf; the contract is kv/sf/sf.h and kv/sf/sf_seg.h.
*/
#ifndef ROWAN_KV_SF_WRITE_INT_H
#define ROWAN_KV_SF_WRITE_INT_H

#include "kv/sf/sf_filter.h"
#include "kv/sf/sf_int.h"
#include "kv/sf/sf_seg.h"

/* One block of a segment. */
typedef struct seg_block {
  uint64_t off;           /* offset of its frame in the segment's data */
  uint32_t frame_len;     /* bytes of the frame (header, stored bytes, checksum) */
  uint32_t raw_len;       /* bytes of the raw block */
  uint32_t ncells, nrows; /* cells / rows of the block */
  uint32_t key_off;       /* its first cell's row key, then qualifier, in the segment's keys */
  uint32_t row_len;       /* that row key's length */
  uint32_t qual_len;      /* that qualifier's length */
  int64_t ts;             /* the first cell's timestamp */
  uint8_t type;           /* the first cell's type */
  uint8_t last_type;      /* the last cell's type */
  bool cont;              /* its first row is the previous block's last row */
  uint32_t last_off;      /* its last cell's row key, then qualifier, in the segment's keys */
  uint32_t last_row_len;  /* that row key's length */
  uint32_t last_qual_len; /* that qualifier's length */
  int64_t last_ts;        /* the last cell's timestamp */
  int64_t min_ts, max_ts; /* timestamp range of its cells */
  uint32_t hash_first;    /* index in the segment's hashes of its first row's hash */
} seg_block;

struct kv_sf_seg {
  kv_sfbuf data;          /* the framed blocks, one after another (empty when paged out) */
  uint64_t dlen;          /* bytes of framed blocks, in data or in file */
  kv_env *env;            /* paged out: the env of file (else NULL) */
  kv_file *file;          /* paged out: the file holding the framed blocks (not owned) */
  uint64_t base;          /* paged out: the file offset of the blocks' offset 0 */
  uint64_t hash_off;      /* paged out by kv_sf_seg_page_out: file offset of the hashes
                             (hashes is then NULL) */
  seg_block *blocks;      /* per block */
  size_t nblocks, cap_blocks; /* used / allocated */
  kv_sfbuf keys;          /* first-cell keys of the blocks; then the last cell's row+qual */
  uint32_t last_off;      /* offset of the last cell's row key in keys */
  uint32_t last_row_len;  /* its length */
  uint32_t last_qual_len; /* the last cell's qualifier length (after its row key) */
  int64_t last_ts;        /* the last cell's timestamp */
  uint8_t last_type;      /* the last cell's type */
  uint64_t *hashes;       /* bloom hash of every row, in order */
  size_t nhashes;         /* their number */
  uint64_t seq;           /* the sequence number of every cell */
  kv_sf_props props;      /* cells, rows, blocks, raw bytes, timestamp range */
  bool dec;               /* a block holds a decimal-scaled value group (format version 3) */
};

struct kv_sf_writer {
  kv_env *env;            /* the env the file is written through (NULL: a segment) */
  kv_file *file;          /* the open file (NULL: a segment) */
  kv_sf_seg *seg;         /* segment mode: where blocks go instead of the file */
  char *path;             /* file path, for messages */
  uint32_t block_size;    /* target raw bytes per block */
  int compression;        /* KV_COMPRESSION_LZ4 or KV_COMPRESSION_NONE */
  uint32_t bloom_bits;    /* bloom bits per row key */
  bool no_bloom;          /* KV_SF_NO_BLOOM: rows are not hashed, the filter is empty */
  kv_sfb_builder b;       /* the block being staged */
  kv_sfbuf frame;         /* the on-disk form of a block (reused) */
  uint32_t *cuts;         /* reframe: the section cuts of a block framed again */
  size_t cuts_cap;        /* entries allocated in cuts */
  kv_sfbuf index;         /* encoded block index entries so far (those not spilled) */
  uint32_t spill_at;      /* bytes of index entries or filter partitions held before they
                             go to the spill file (kv_sf_writer_options.spill_bytes) */
  kv_file *spill;         /* <path>.spill, opened at the first spill (else NULL) */
  char *spill_path;       /* its path */
  uint64_t spill_len;     /* bytes appended to it */
  struct kv_sf_spill_chunk *chunks; /* what it holds, in order: index entries or partitions */
  size_t n_chunks, cap_chunks;
  uint64_t *hashes;       /* segment mode: bloom hash of every distinct row key */
  size_t nhashes, hashes_cap; /* row hashes noted / allocated */
  kv_sf_fbuild fb;        /* file mode: the bloom filter, partitioned as rows come */
  kv_sfbuf prev_row;      /* the previous cell's row key (order check) */
  kv_sfbuf prev_qual;     /* the previous cell's qualifier */
  int64_t prev_ts;        /* the previous cell's timestamp */
  uint64_t prev_seq;      /* the previous cell's sequence number */
  uint8_t prev_type;      /* the previous cell's type */
  int have_prev;          /* a cell was added */
  uint64_t offset;        /* bytes appended so far */
  kv_sf_props props;      /* counts and ranges so far */
  int64_t bmin_ts, bmax_ts; /* timestamp range of the staged block's cells */
  int failed;             /* sticky status of a failed append (KV_OK if none) */
  bool dec;               /* a block added whole (segment, copy) may hold a decimal-scaled
                             value group; with b.used_dec: the file is format version 3 */
};

/* One stretch of a writer's spill file. */
typedef struct kv_sf_spill_chunk {
  uint64_t off;           /* its offset in the spill file */
  uint64_t len;           /* its bytes */
  bool filter;            /* filter partitions (else block index entries) */
} kv_sf_spill_chunk;

/* Free a writer and what it holds (its segment too; its spill file closed and removed). */
void kv_sfw_free(kv_sf_writer *w);
/* The file's format version: 4 when its filter is partitioned, else 3 when a block may hold
** a decimal-scaled value group, else 2. */
uint32_t kv_sfw_version(const kv_sf_writer *w, bool partitioned);
/* Put one frame at the end of segment t's blocks (in memory, or appended to its file);
** *off gets its offset among them. */
int kv_sfw_seg_put(kv_sf_seg *t, const uint8_t *frame, size_t len, uint64_t *off);
/* Encode, frame and append the staged block (to the file, or to the segment). */
int kv_sfw_flush_block(kv_sf_writer *w);
/* A file writer's index entries or filter partitions past its spill bound go to its spill
** file (sticky on failure). KV_OK or the env's error. */
int kv_sfw_maybe_spill(kv_sf_writer *w);
/* Note n row hashes: a segment keeps them, a file writer's filter takes them. */
int kv_sfw_note_hashes(kv_sf_writer *w, const uint64_t *h, size_t n);
/* A block of a file writer starts with the first cell of row [row, row+len): where its
** filter may close a partition. Segments have no filter: a no-op there. */
int kv_sfw_note_block_row(kv_sf_writer *w, const uint8_t *row, uint32_t len);

#endif /* ROWAN_KV_SF_WRITE_INT_H */
