/*
** kv/sf/sf_int.h: internals shared by the store file modules (kv/sf/sf_block.c, kv/sf/sf_write.c,
** kv/sf/sf_read.c, kv/sf/sf_iter.c). Not part of kv/'s contract: only these files include it.
**
** It holds the format constants (docs/FORMAT.md Part 2), a growable byte buffer, the
** block builder the writer stages cells in, the decoded block the iterator reads from, the
** on-disk block framing (lz4 + XXH3-64) and the reader's in-memory block index. It does no
** file I/O itself.
*/
#ifndef ROWAN_KV_SF_INT_H
#define ROWAN_KV_SF_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "kv/util/cell.h"
#include "kv/util/coding.h"
#include "kv/env/env.h"
#include "kv/sf/sf.h"

/* ---- Format constants (docs/FORMAT.md Part 2) ---- */
#define KV_SF_MAGIC 0x3146535F4E574F52ull /* "ROWN_SF1" read as a little-endian u64 */
#define KV_SF_FORMAT_VERSION 4u     /* newest read: 4 adds the partitioned bloom filter
                                       (written when a file's filter has two partitions or
                                       more; it may hold decimal-scaled groups too) */
#define KV_SF_FORMAT_VERSION_PART 4u /* written when the filter is partitioned */
#define KV_SF_FORMAT_VERSION_DEC 3u /* 3 adds decimal-scaled value groups (written only
                                       when a block has one), 2 sectioned blocks
                                       (compression byte 2) */
#define KV_SF_FORMAT_VERSION_NODEC 2u /* written when no block has a decimal-scaled group */
#define KV_SF_FORMAT_VERSION_MIN 1u /* oldest version read */
#define KV_SF_TRAILER_SIZE 136u            /* fixed-size file trailer */
#define KV_SF_BLOCK_HEADER 9u              /* u8 compression, u32 raw size, u32 stored size */
#define KV_SF_BLOCK_CHECKSUM 8u            /* XXH3-64 after the stored bytes */
#define KV_SF_BLOCK_OVERHEAD (KV_SF_BLOCK_HEADER + KV_SF_BLOCK_CHECKSUM)
#define KV_SF_MAX_RAW_BLOCK (1u << 30)     /* largest raw block a reader accepts */
#define KV_SF_MAX_BLOCK_SIZE (256u << 20)  /* largest block_size target a writer takes */
#define KV_SF_DEFAULT_BLOCK_SIZE (64u << 10)
#define KV_SF_FENCE_MAX 64u                /* longest first row key the reader's fence holds */
#define KV_SF_FENCE_STEP 32u               /* fence entries per entry of its top level */
#define KV_SF_INDEX_PAGE 64u               /* index entries per page of a paged block index */
#define KV_SF_PAGED_MIN (UINT32_MAX - 1)   /* blocks from which a mapped file's index is paged
                                              whatever the budget (kv_sf_paged_min): never,
                                              unless ROWAN_SF_PAGED_MIN says */

/* Block header compression byte: the raw block stored as it is, lz4-compressed whole, or
** (format version 2) cut into sections compressed one by one (docs/FORMAT.md Part 2). */
enum { KV_SF_STORED_RAW = 0, KV_SF_STORED_LZ4 = 1, KV_SF_STORED_SECTIONS = 2 };
#define KV_SF_MAX_SECTIONS 4097u        /* sections a reader accepts in one block */
#define KV_SF_SECTION_MIN_RAW 4096u     /* a smaller raw block is framed whole */
/* Row key modes of a block's rows section. */
enum { KV_SF_ROWS_PREFIX = 0, KV_SF_ROWS_FIXED = 1, KV_SF_ROWS_DELTA = 2 };
#define KV_SF_MAX_KEY_BYTES (512u << 20) /* rebuilt row key bytes a block may hold */

/* Whether the n <= 8 bytes at a equal those at b, 8 bytes being readable at each: a delta
** key stream's varint that repeats the one before (hourly rows), stepped over unread. */
static inline bool kv_sf_same_bytes(const uint8_t *a, const uint8_t *b, size_t n) {
  uint64_t m = n >= 8 ? UINT64_MAX : ((uint64_t)1 << (8 * n)) - 1;
  return ((kv_get_u64le(a) ^ kv_get_u64le(b)) & m) == 0;
}

/* Whether every byte of [p, p+n) is 0, a word at a time (a type stream of puts only, the
** decoders' fast paths). */
static inline bool kv_sf_all_zero(const uint8_t *p, size_t n) {
  uint64_t acc = 0;
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t x;
    memcpy(&x, p + i, 8);
    acc |= x;
  }
  for (; i < n; i++) acc |= p[i];
  return acc == 0;
}

/* Read a raw block's header (docs/FORMAT.md Part 2, "Raw block": nrows, ncells, nquals,
** min_seq) from [p, lim), p the block's first byte, and check the counts every decoder
** relies on: nrows >= 1, nrows <= ncells, 1 <= nquals <= ncells, ncells <= the block's
** bytes. Returns the byte after the header, or NULL with *why set (the block is corrupt). */
static inline const uint8_t *kv_sf_raw_header(const uint8_t *p, const uint8_t *lim,
                                              uint64_t *nrows, uint64_t *ncells,
                                              uint64_t *nquals, uint64_t *min_seq,
                                              const char **why) {
  uint64_t len = (uint64_t)(lim - p);
  if (!(p = kv_get_varint(p, lim, nrows)) || !(p = kv_get_varint(p, lim, ncells)) ||
      !(p = kv_get_varint(p, lim, nquals)) || !(p = kv_get_varint(p, lim, min_seq))) {
    *why = "truncated block header";
    return NULL;
  }
  if (*nrows == 0 || *ncells < *nrows || *nquals == 0 || *nquals > *ncells || *ncells > len) {
    *why = "bad row, cell or qualifier count";
    return NULL;
  }
  return p;
}

/* ---- Growable byte buffer ---- */
typedef struct kv_sfbuf {
  uint8_t *p;  /* bytes (malloc'ed) */
  size_t len;  /* bytes in use */
  size_t cap;  /* bytes allocated */
} kv_sfbuf;

/* Make room for `extra` more bytes after len. KV_OK or KV_ERR_NOMEM (buffer unchanged). */
int kv_sfbuf_reserve(kv_sfbuf *b, size_t extra);
/* Take n bytes of room at the next 8-aligned offset after len (a decoder's arena, whose
** parts are later addressed by offset since the bytes may move when it grows): *off gets
** the offset. KV_OK or KV_ERR_NOMEM (also when the offset would pass 4 GiB). */
static inline int kv_sfbuf_room(kv_sfbuf *b, size_t n, uint32_t *off) {
  size_t at = (b->len + 7) & ~(size_t)7;
  if (at + n > UINT32_MAX) return KV_ERR_NOMEM;
  if (kv_sfbuf_reserve(b, at + n - b->len)) return KV_ERR_NOMEM;
  b->len = at + n;
  *off = (uint32_t)at;
  return KV_OK;
}
/* Append n bytes. KV_OK or KV_ERR_NOMEM. */
int kv_sfbuf_append(kv_sfbuf *b, const void *p, size_t n);
/* Append a varint. KV_OK or KV_ERR_NOMEM. */
int kv_sfbuf_varint(kv_sfbuf *b, uint64_t v);
/* Release the bytes; the buffer is empty and reusable. */
void kv_sfbuf_free(kv_sfbuf *b);

/* Grow an array `*arr` of `elem`-byte elements to hold at least n; *cap counts elements.
** KV_OK or KV_ERR_NOMEM (array unchanged). */
int kv_sf_grow(void **arr, size_t *cap, size_t n, size_t elem);

/* ---- Block builder (writer side) ---- */
typedef struct kv_sfb_row {
  uint32_t key_off;   /* offset of the row key in the builder's keys buffer */
  uint32_t key_len;   /* row key length */
  uint32_t ncells;    /* cells of the row in this block */
} kv_sfb_row;

typedef struct kv_sfb_cell {
  int64_t ts;         /* timestamp */
  uint64_t seq;       /* sequence number */
  uint32_t qual;      /* index in the block's qualifier dictionary */
  uint32_t val_off;   /* offset of the value in the builder's vals buffer */
  uint32_t val_len;   /* value length */
  uint8_t type;       /* enum kv_cell_type */
} kv_sfb_cell;

typedef struct kv_sfb_qual {
  uint32_t off;       /* offset of the qualifier bytes in qbytes */
  uint32_t len;       /* qualifier length */
} kv_sfb_qual;

typedef struct kv_sfb_builder {
  kv_sfbuf keys;      /* full row keys of the block's rows, back to back */
  kv_sfbuf vals;      /* value bytes of the block's cells, back to back */
  kv_sfbuf qbytes;    /* qualifier dictionary bytes */
  kv_sfbuf out;       /* the encoded raw block (kv_sfb_encode) */
  kv_sfb_row *rows;   /* the block's rows */
  size_t nrows, rows_cap; /* rows in use / allocated */
  kv_sfb_cell *cells; /* the block's cells */
  size_t ncells, cells_cap; /* cells in use / allocated */
  kv_sfb_qual *quals; /* qualifier dictionary, first-appearance order */
  size_t nquals, quals_cap; /* entries in use / allocated */
  uint32_t *qhash;    /* open-addressing table of dictionary index + 1 (0 = empty) */
  size_t qhash_cap;   /* slots in qhash (a power of two, or 0) */
  uint32_t last_qual; /* dictionary index of the previous cell's qualifier */
  uint64_t min_seq;   /* smallest sequence number in the block */
  size_t est;         /* estimated raw size of the block so far */
  void *groups;       /* per value group scratch of kv_sfb_encode (sf_block.c's own) */
  size_t groups_cap;  /* entries allocated in groups */
  uint32_t *order;    /* cell indexes sorted by value group (kv_sfb_encode scratch) */
  size_t order_cap;   /* entries allocated in order */
  uint32_t *cuts;     /* kv_sfb_encode: offset in out of each value group written, in order */
  size_t ncuts, cuts_cap; /* entries in use / allocated */
  int64_t *dscratch;  /* kv_sfb_encode: the scaled integers of a decimal-scaled attempt */
  size_t dscratch_cap; /* entries allocated in dscratch */
  bool no_dec;        /* never write decimal-scaled groups (a format version 2 file) */
  bool used_dec;      /* a block encoded since kv_sfb_init has one (sticky): version 3 */
} kv_sfb_builder;

/* Initialise an empty builder (no allocation). */
void kv_sfb_init(kv_sfb_builder *b);
/* Free everything the builder holds. */
void kv_sfb_free(kv_sfb_builder *b);
/* Forget the staged cells, keeping the memory for the next block. */
void kv_sfb_reset(kv_sfb_builder *b);
/* Stage a cell (its bytes are copied). The caller has checked the cell order. `new_row` is
** true when the cell's row differs from the previous staged cell's. KV_OK, KV_ERR_NOMEM, or
** KV_ERR_TOOBIG if the block would pass 4 GiB of staged bytes. */
int kv_sfb_add(kv_sfb_builder *b, const kv_cell *c, int new_row);
/* Encode the staged cells as a raw block into b->out (replacing its content). The builder
** must hold at least one cell. KV_OK or KV_ERR_NOMEM. */
int kv_sfb_encode(kv_sfb_builder *b);
/* The first staged cell (pointers into the builder, valid until reset). */
void kv_sfb_first_cell(const kv_sfb_builder *b, kv_cell *out);

/* ---- Block framing on disk (kv/sf/sf_frame.c) ---- */
/* Append to `out` the on-disk form of a raw block: header, stored bytes (lz4 if that
** shrinks it and compression is KV_COMPRESSION_LZ4, else raw), XXH3-64 checksum.
** KV_OK or KV_ERR_NOMEM. */
int kv_sf_frame_block(const uint8_t *raw, size_t raw_len, int compression, kv_sfbuf *out);
/* The same, cutting the raw block into sections at the ncuts offsets `cuts` (strictly
** increasing, each in (0, raw_len); normally where each value group starts, as
** kv_sfb_encode records them) and compressing each section on its own (compression byte
** KV_SF_STORED_SECTIONS), so a reader can decompress the sections it needs. Falls back to
** kv_sf_frame_block when compression is not lz4, there is no cut, the block is smaller than
** KV_SF_SECTION_MIN_RAW, the cuts are not usable, or the sections would not be smaller
** than the raw block. KV_OK or KV_ERR_NOMEM. */
int kv_sf_frame_block_cut(const uint8_t *raw, size_t raw_len, const uint32_t *cuts,
                          size_t ncuts, int compression, kv_sfbuf *out);

/* A framed block's sections, as kv_sf_frame_open reads them. */
typedef struct kv_sf_sections {
  uint32_t n;         /* sections; 0 when the block is not sectioned */
  uint32_t *raw_off;  /* n+1 offsets in the raw block; raw_off[n] = raw size */
  uint32_t *disk_off; /* n+1 offsets of the stored bytes in the framed block */
  size_t cap;         /* entries allocated in each array */
} kv_sf_sections;

/* Check a framed block (its length, checksum, raw size against the index's `expect_raw`,
** compression byte) and, when it is sectioned, read its section table into *sec (checked:
** section sizes add up to the raw size and to the stored bytes; a stored section is no
** larger than its raw form). *how gets the compression byte. KV_OK; KV_ERR_CORRUPT with
** *why set; KV_ERR_NOMEM. */
int kv_sf_frame_open(const uint8_t *disk, size_t disk_len, uint32_t expect_raw,
                     kv_sf_sections *sec, uint8_t *how, const char **why);
/* The whole raw block of a frame kv_sf_frame_open accepted (not checked again): *raw points
** into disk when stored raw, else into scratch, decompressed (every section of a sectioned
** block). KV_OK; KV_ERR_CORRUPT with *why set; KV_ERR_NOMEM. */
int kv_sf_frame_inflate(const uint8_t *disk, uint32_t expect_raw, kv_sfbuf *scratch,
                        const uint8_t **raw, size_t *raw_len, const char **why);
/* Decompress section k of a sectioned block (as read by kv_sf_frame_open) to its place
** in `raw` (raw_off[k] ..  raw_off[k+1]; raw holds the whole raw size). KV_OK, or
** KV_ERR_CORRUPT with *why set. */
int kv_sf_section_inflate(const uint8_t *disk, const kv_sf_sections *sec, uint32_t k,
                          uint8_t *raw, const char **why);
/* The raw offsets where sections 1.. of a framed block begin (its cuts), into *cuts (grown
** as needed, *cap counting entries; *ncuts = 0 for a block that is not sectioned), so a
** block rewritten with a changed header can be framed the same way. The block must have
** been checked (kv_sf_frame_open or kv_sf_unframe_block). KV_OK or KV_ERR_NOMEM. */
int kv_sf_frame_cuts(const uint8_t *disk, size_t disk_len, uint32_t **cuts, size_t *cap,
                     size_t *ncuts);
void kv_sf_sections_free(kv_sf_sections *sec);
/* Check and open an on-disk block: its length, then its checksum, then decompress into
** `scratch` (or, when stored raw, point into `disk`). `expect_raw` is the raw size the
** block index gives. On success *raw and *raw_len give the raw block. On failure returns
** KV_ERR_CORRUPT (message naming `path` and `off`) or KV_ERR_NOMEM. */
int kv_sf_unframe_block(const uint8_t *disk, size_t disk_len, uint32_t expect_raw,
                        kv_sfbuf *scratch, const uint8_t **raw, size_t *raw_len,
                        const char *path, uint64_t off);

/* ---- Rows section header (shared by every raw block decoder) ---- */
typedef struct kv_sf_rows_layout {
  uint64_t mode;          /* KV_SF_ROWS_PREFIX, _FIXED or _DELTA (other values: the caller's) */
  uint32_t key_len;       /* fixed/delta: the length of every row key */
  uint32_t lcp;           /* fixed/delta: bytes of the prefix common to every key */
  uint32_t suffix;        /* fixed/delta: key_len - lcp */
  const uint8_t *prefix;  /* fixed/delta: the common prefix (lcp bytes, into the block) */
} kv_sf_rows_layout;

/* Read the rows section's cells-per-row stream at *p: nrows counts, each >= 1, adding up to
** ncells; first[r] gets the index of row r's first cell (first has nrows + 1 entries,
** first[nrows] = ncells). *p moves past the stream. KV_OK, or KV_ERR_CORRUPT with *why set. */
int kv_sf_cells_per_row(const uint8_t **p, const uint8_t *lim, uint32_t nrows, uint32_t ncells,
                        uint32_t *first, const char **why);

/* Read the rows section's key mode at *p and, for the fixed and delta modes, the key length
** and common prefix of the block's nrows keys (docs/FORMAT.md Part 2, "Rows section"),
** checking them: the key length within KV_MAX_ROW_KEY, the prefix within the key and the
** block, a delta suffix of at most 8 bytes, nrows keys within KV_SF_MAX_KEY_BYTES. *p moves
** past what was read (the prefix included). KV_OK, or KV_ERR_CORRUPT with *why set. */
int kv_sf_rows_layout_read(const uint8_t **p, const uint8_t *lim, uint32_t nrows,
                           kv_sf_rows_layout *out, const char **why);

/* ---- Decoded block (reader side) ---- */
typedef struct kv_sf_dblock {
  uint32_t nrows;          /* rows in the block */
  uint32_t ncells;         /* cells in the block */
  uint32_t nquals;         /* qualifier dictionary entries */
  uint32_t *row_off;       /* nrows+1 offsets of the full row keys in keys */
  uint32_t *row_first;     /* nrows+1: index of each row's first cell; [nrows] = ncells */
  uint8_t *keys;           /* rebuilt full row keys, back to back */
  const uint8_t **q_ptr;   /* dictionary: qualifier bytes (into the raw block) */
  uint32_t *q_len;         /* dictionary: qualifier lengths */
  uint32_t *c_qual;        /* per cell: dictionary index */
  int64_t *c_ts;           /* per cell: timestamp */
  uint64_t *c_seq;         /* per cell: sequence number */
  uint8_t *c_type;         /* per cell: type */
  const uint8_t **c_val;   /* per cell: value bytes (raw block or vbuf) */
  uint32_t *c_vlen;        /* per cell: value length */
  uint8_t *vbuf;           /* fixed-width values and row suffixes, un-transposed */
  void *gstate;            /* per value group decoding state (sf_block.c's own) */
  size_t rows_cap, cells_cap, quals_cap, keys_cap, vbuf_cap, groups_cap; /* capacities */
} kv_sf_dblock;

/* Decode raw block bytes [raw, raw+len) into d, reusing its arrays (they only grow). The
** raw bytes must stay alive while d is used (qualifiers and variable values point into
** them). KV_OK; KV_ERR_CORRUPT with *why set to a static reason; KV_ERR_NOMEM. */
int kv_sf_block_decode(kv_sf_dblock *d, const uint8_t *raw, size_t len, const char **why);
/* The first part of kv_sf_block_decode, alone: the header (*min_seq gets its min_seq), the
** qualifier dictionary and the rows section (counts, dictionary, row keys and each row's
** first cell in d, checked as there); *p moves to the cells section. Enough for a reader
** that wants the rows and not the values (compaction's block copy, kv/sf/sf_copy.c), which
** for a sectioned block is section 0 alone. KV_OK; KV_ERR_CORRUPT (*why set); NOMEM. */
int kv_sf_block_head(kv_sf_dblock *d, const uint8_t **p, const uint8_t *lim,
                     uint64_t *min_seq, const char **why);
/* The same, decoding the values of only the qualifiers whose dictionary entry has keep[q]
** set (keep as filled by kv_sf_block_keep for this block; NULL = all) and of the
** tombstones: the cells of other qualifiers get their keys, timestamps, types and
** sequence numbers but no value (their c_val/c_vlen slots are stale: never read them), and
** their value bytes are not checked.
** Same results and errors otherwise. */
int kv_sf_block_decode_keep(kv_sf_dblock *d, const uint8_t *raw, size_t len,
                            const uint8_t *keep, const char **why);
/* After kv_sf_block_decode_keep left some value groups out: give the cells in [c0, c1) but
** not in [skip0, skip1) (placed by an earlier call; skip0 == skip1 for none) of those groups
** their values (c_val/c_vlen). Fixed-width ones are gathered from the transposed bytes into
** `buf` (reset and grown here; the pointers stay valid until buf is used again), variable-
** width ones point into the raw block. Each cell must be given its value once: until then
** its c_vlen holds its rank in its group. The raw block must still be alive. KV_OK;
** KV_ERR_CORRUPT with *why set (a bad length stream); KV_ERR_NOMEM. */
int kv_sf_block_values(kv_sf_dblock *d, uint32_t c0, uint32_t c1, uint32_t skip0,
                       uint32_t skip1, kv_sfbuf *buf, const char **why);
/* Read a raw block's qualifier dictionary and set (*keep)[q] for each entry q: 1 when the
** qualifier is one of quals[0..n) (lengths in lens), else 0. *keep grows as needed (*cap
** counts bytes; the caller frees it). *all is set when every entry is kept. KV_OK;
** KV_ERR_CORRUPT with *why set; KV_ERR_NOMEM. */
int kv_sf_block_keep(const uint8_t *raw, size_t len, const uint8_t *const *quals,
                     const uint32_t *lens, uint32_t n, uint8_t **keep, size_t *cap,
                     bool *all, const char **why);
/* Free a decoded block's arrays. */
void kv_sf_dblock_free(kv_sf_dblock *d);
/* Fill *out with cell `ci` of row `ri` (pointers into d). REQUIRES ri is ci's row. */
static inline void kv_sf_dblock_cell(const kv_sf_dblock *d, uint32_t ri, uint32_t ci,
                                     kv_cell *out) {
  uint32_t q = d->c_qual[ci];
  out->row = d->keys + d->row_off[ri];
  out->row_len = d->row_off[ri + 1] - d->row_off[ri];
  out->qual = d->q_ptr[q];
  out->qual_len = d->q_len[q];
  out->ts = d->c_ts[ci];
  out->seq = d->c_seq[ci];
  out->type = d->c_type[ci];
  out->value = d->c_val[ci];
  out->value_len = d->c_vlen[ci];
}

/* ---- Blocks copied whole (compaction: kv/sf/sf_copy.c) ---- */
/* A finished block of another store file, appended as it is (kv_sf_writer_add_framed). */
typedef struct kv_sf_framed {
  const uint8_t *frame;    /* its on-disk bytes (header, stored bytes, checksum), checked */
  size_t frame_len;        /* their length */
  uint32_t raw_len;        /* raw block bytes, as its index entry gives them */
  uint32_t ncells, nrows;  /* cells, and rows with cells, in the block */
  const kv_cell *first;    /* the block's first cell (key fields only) */
  const kv_cell *last;     /* its last cell (key fields only) */
  const uint64_t *hashes;  /* kv_bloom_hash of each of its nrows row keys, in order */
  bool dec;                /* it may hold a decimal-scaled value group (its file is format
                              version 3): so is the file it is copied to */
} kv_sf_framed;
/* Append block f to file writer w after what w holds: the block w is staging is finished
** first, then f's bytes go to the file unchanged and its index entry is f's with the new
** offset. f's first cell must sort after w's previous cell (KV_ERR_INVALID otherwise,
** nothing appended; w stays usable); a first row equal to the previous cell's row continues
** it (its hash is not noted again). The timestamp and sequence ranges of f's cells are not
** known here: the caller widens w's with kv_sf_writer_widen. KV_MISUSE for a segment
** writer; an append error or KV_ERR_NOMEM is sticky as in kv_sf_writer_add. */
int kv_sf_writer_add_framed(kv_sf_writer *w, const kv_sf_framed *f);

/* ---- Reader ---- */
typedef struct kv_sf_index_entry {
  uint64_t off;            /* file offset of the block */
  uint32_t size;           /* on-disk bytes: header, stored bytes, checksum */
  uint32_t raw;            /* raw (uncompressed) block bytes */
  uint32_t cells;          /* cells in the block */
  uint32_t rows;           /* rows with cells in the block */
  uint32_t key;            /* its first cell's row key: the offset of its bytes in the
                              reader's index_buf (the qualifier, timestamp, sequence number
                              and type follow as the section has them: kv_sf_first_cell) */
  uint32_t row_len;        /* that row key's length (right after key: kv_sf_dense_fence) */
} kv_sf_index_entry;

/* One page of a paged block index (kv/sf/sf_index.c): KV_SF_INDEX_PAGE entries from block
** p * KV_SF_INDEX_PAGE, decoded on demand from the mapped index section. */
typedef struct kv_sf_ipage {
  uint32_t sec;            /* offset in the index section of the page's first entry */
  uint32_t key;            /* that entry's first row key (offset in the section) */
  uint32_t row_len;        /* its length (right after key: kv_sf_dense_fence) */
  uint32_t w;              /* key bytes per entry of the page's fence (its longest first
                              row key, at least 1), 0 when one is longer than
                              KV_SF_FENCE_MAX (no fence) */
} kv_sf_ipage;

_Static_assert(offsetof(kv_sf_index_entry, row_len) == offsetof(kv_sf_index_entry, key) + 4 &&
                   offsetof(kv_sf_ipage, row_len) == offsetof(kv_sf_ipage, key) + 4,
               "kv_sf_dense_fence reads a key's offset and length side by side");

/* One partition of a partitioned bloom filter (format version 4, kv/sf/sf_filter.h). */
typedef struct kv_sf_fpart {
  uint64_t off;            /* file offset of the partition (filter bytes, then xxh3) */
  uint32_t len;            /* its bytes, the checksum's 8 included */
  uint32_t key_len;        /* length of the first row key its rows start at */
  const uint8_t *key;      /* that key (into the reader's fpart_buf) */
} kv_sf_fpart;

struct kv_sf_reader {
  kv_env *env;             /* the env the file is read through */
  kv_file *file;           /* the open file (shared by iterators; pread only) */
  char *path;              /* file path, for messages */
  kv_sf_props props;       /* counts and ranges from the trailer */
  uint8_t *index_buf;      /* the index section (first keys point into it): a copy, or in
                              the mapping when the index is paged (index_mapped) */
  kv_sf_index_entry *index; /* one entry per block, or NULL when the index is paged: then
                              read entries with kv_sf_entry (every site may) */
  uint32_t nblocks;        /* entries in index */
  const uint8_t *last_row; /* last row key of the file (into index_buf) */
  uint32_t last_row_len;   /* its length */
  bool rows_whole;         /* no row has cells in two blocks: the blocks' row counts add up
                              to the trailer's distinct rows (writers cut inside a row only
                              past twice BLOCKSIZE), so a row that starts a block has no
                              cells in the block before (kv_sf_row_block) */
  uint8_t *bloom;          /* the bloom filter section (a single filter; NULL when
                              partitioned) */
  size_t bloom_len;        /* its length */
  uint8_t *fence;          /* per block: u8 length, then its first row key padded to
                              fence_w bytes (all back to back: a seek to a row's start
                              binary-searches this dense copy), or NULL when some first
                              row key is longer than KV_SF_FENCE_MAX */
  uint32_t fence_w;        /* key bytes per fence entry (the longest first row key) */
  uint8_t *fence_top;      /* every KV_SF_FENCE_STEP-th fence entry, back to back: the
                              search's first steps stay in a few cache lines, not one
                              miss per step across the whole fence (NULL with fence) */
  uint32_t fence_ntop;     /* entries in fence_top */
  struct kv_cache *cache;  /* block cache shared with other files, or NULL (kv_sf_set_cache) */
  uint64_t cache_id;       /* this file's key in the cache (its file number) */
  const uint8_t *map;      /* the whole file mapped read-only (env->map), or NULL: then
                              blocks are read with pread into the reader's buffers */
  uint64_t map_len;        /* its length (the file size at open) */
  uint8_t *fpart_buf;      /* a partitioned filter's partition index (format version 4) */
  kv_sf_fpart *fparts;     /* its partitions, read one per probe (kv/sf/sf_filter.h) */
  uint32_t nfparts;        /* their number (0: the single filter, or none) */
  uint64_t index_len;      /* bytes of index_buf */
  uint64_t fpart_len;      /* bytes of fpart_buf */
  kv_sf_ipage *ipages;     /* a paged index's pages (NULL: the index is the array above) */
  uint32_t nipages;        /* their number */
  bool index_mapped;       /* index_buf points into the mapping (not freed at close) */
  uint8_t *pfence;         /* a paged index's dense copy of its pages' first row keys (as
                              fence is of the blocks'; NULL when one is too long) */
  uint32_t pfence_w;       /* key bytes per entry of pfence */
  uint64_t uid;            /* unique among the process's readers (kv_sf_new_uid): names a
                              paged index's pages in each thread's copies */
  uint64_t index_off;      /* file offset of the index section (its pages' cache keys) */
};

/* Block i's index entry of a paged index (kv/sf/sf_index.c): from the page's decoded
** entries in the block cache (keyed KV_CACHE_META | the page's file offset), decoded and
** inserted on a miss; decoded alone without a cache. */
kv_sf_index_entry kv_sf_entry_paged(const kv_sf_reader *r, uint64_t i);
/* Block i's index entry (i < nblocks), by value: the key offset stays valid for the
** reader's life (index_buf). */
static inline kv_sf_index_entry kv_sf_entry(const kv_sf_reader *r, uint64_t i) {
  return r->ipages ? kv_sf_entry_paged(r, i) : r->index[i];
}
/* Page p's entries (count: kv_sf_ipage_len) of a paged index, for a search of several:
** in the cache (*ce set: release it with kv_cache_release) or decoded into tmp (*ce NULL). */
struct kv_cache_entry;
const kv_sf_index_entry *kv_sf_ipage_get(const kv_sf_reader *r, uint32_t p,
                                         kv_sf_index_entry tmp[KV_SF_INDEX_PAGE],
                                         struct kv_cache_entry **ce);
static inline uint32_t kv_sf_ipage_len(const kv_sf_reader *r, uint32_t p) {
  uint32_t left = r->nblocks - p * KV_SF_INDEX_PAGE;
  return left < KV_SF_INDEX_PAGE ? left : KV_SF_INDEX_PAGE;
}
/* A walk over the index entries of one reader (mostly in order) that keeps the page it is
** on pinned: kv_sf_icur_at(c, i) gives block i's entry, valid until the next call or
** kv_sf_icur_done, which every cursor used must reach. Without a paged index, the array. */
typedef struct kv_sf_icur {
  const kv_sf_reader *r;
  uint32_t page;                 /* the page pinned (UINT32_MAX: none) */
  const kv_sf_index_entry *pg;   /* its entries */
  struct kv_cache_entry *ce;     /* its cache entry, or NULL (decoded into tmp) */
  kv_sf_index_entry tmp[KV_SF_INDEX_PAGE];
} kv_sf_icur;
static inline void kv_sf_icur_init(kv_sf_icur *c, const kv_sf_reader *r) {
  c->r = r;
  c->page = UINT32_MAX;
  c->pg = NULL;
  c->ce = NULL;
}
const kv_sf_index_entry *kv_sf_icur_page(kv_sf_icur *c, uint32_t i);
static inline const kv_sf_index_entry *kv_sf_icur_at(kv_sf_icur *c, uint32_t i) {
  if (!c->r->ipages) return &c->r->index[i];
  if (i / KV_SF_INDEX_PAGE != c->page) return kv_sf_icur_page(c, i);
  return &c->pg[i % KV_SF_INDEX_PAGE];
}
void kv_sf_icur_done(kv_sf_icur *c);
/* The block count from which an open pages a mapped file's index whatever its budget
** (kv_sf_open_budget): KV_SF_PAGED_MIN, or the environment's ROWAN_SF_PAGED_MIN (read
** once; 0 pages every mapped file's index: the tests' paged stage). */
uint32_t kv_sf_paged_min(void);
/* Set it for the opens that follow (tests: the same file paged and not). */
void kv_sf_set_paged_min(uint32_t blocks);
/* A number no other reader of the process has had. */
uint64_t kv_sf_new_uid(void);
/* A dense fence (kv_sf_reader.fence's layout) of the first row keys of n items of `size`
** bytes each, each naming its key by two u32 at byte `at`: its offset in the index section,
** then its length (kv_sf_index_entry.key and row_len, kv_sf_ipage.key and row_len); *w its
** key width. NULL (*w untouched) when a key is longer than KV_SF_FENCE_MAX or memory is
** short (kv/sf/sf_index.c). */
uint8_t *kv_sf_dense_fence(const kv_sf_reader *r, const void *items, size_t size, size_t at,
                           uint32_t n, uint32_t *w_out);
/* Build a paged index's pfence (kv/sf/sf_index.c; none when memory is short). */
void kv_sf_build_page_fence(kv_sf_reader *r);
/* The first block whose first row is at or above [row, row+len) (nblocks when none) of a
** paged index, from its page fence and the page's own (in its cached value); *eq tells
** whether that block's first row is the row itself (kv/sf/sf_index.c). */
uint32_t kv_sf_lower_bound_paged(const kv_sf_reader *r, const uint8_t *row, uint32_t len,
                                 bool *eq);
/* A paged index's kv_sf_find_block (kv/sf/sf_index.c). */
int64_t kv_sf_find_block_paged(const kv_sf_reader *r, const kv_cell *t);
/* The first cell whose key fields start at offset `key` of the index section (row_len
** bytes of row key, then the qualifier, timestamp, sequence number and type). */
void kv_sf_cell_at(const kv_sf_reader *r, uint32_t key, uint32_t row_len, kv_cell *out);

/* Block i's first row key, *len its length (in the reader's index section). */
static inline const uint8_t *kv_sf_first_row(const kv_sf_reader *r, uint64_t i, uint32_t *len) {
  if (r->ipages && i % KV_SF_INDEX_PAGE == 0) { /* a page's first: in the page table */
    const kv_sf_ipage *g = &r->ipages[i / KV_SF_INDEX_PAGE];
    *len = g->row_len;
    return r->index_buf + g->key;
  }
  kv_sf_index_entry e = kv_sf_entry(r, i);
  *len = e.row_len;
  return r->index_buf + e.key;
}
/* Block i's first cell (its key fields; no value), decoded from the index section, which
** the open checked (kv/sf/sf_read.c). */
void kv_sf_first_cell(const kv_sf_reader *r, uint64_t i, kv_cell *out);

/* What a salvage open found (kv_sf_open_salvage). */
typedef struct kv_sf_salvage_info {
  bool trailer_ok;         /* the trailer checked: props hold its counts and ranges */
  bool bloom_ok;           /* the bloom filter checked (else the reader has none) */
  bool index_ok;           /* the block index checked (else nblocks is 0) */
  uint64_t file_size;      /* bytes of the file */
  uint64_t data_end;       /* where the data blocks end: the bloom filter's offset from a
                              trailer that checked, else the file size */
  char trailer_why[320];   /* the messages of the checks that failed ("" when none) */
  char bloom_why[320];
  char index_why[320];
} kv_sf_salvage_info;
/* Open a store file that may be damaged, for a salvage (kv/salvage/salvage_sf.c): as kv_sf_open, but
** a trailer, bloom filter or block index that fails its checks is noted in *info (its
** message kept) and the open goes on without it: without a trailer the reader has no
** props (zero) and no index; without a bloom filter, no filter (never probe it); without
** the index, nblocks is 0 and the caller finds the blocks by their framing from offset 0
** up to info->data_end. The file is not mapped. Returns KV_OK with *out the reader (free
** with kv_sf_close) whatever was damaged, or the env's error opening the file, or
** KV_ERR_NOMEM; *out NULL then. */
int kv_sf_open_salvage(kv_env *env, const char *path, kv_sf_reader **out,
                       kv_sf_salvage_info *info);

/* The index of the last block of r whose first cell is at or below t, or -1 (t before the
** file). A row-start target (kv_cell_row_first) is found in the fence, its top level first;
** any other cell by a binary search of the index entries (kv/sf/sf_read.c). */
int64_t kv_sf_find_block(const kv_sf_reader *r, const kv_cell *t);
/* The block where a read of row key [row, row+len) from its first cell starts: the
** kv_sf_find_block of its row-start cell (the block before the one the row starts, since the
** row may begin there), or, in a file whose rows are whole (rows_whole), the block the row
** starts when one does. Never below 0. */
uint32_t kv_sf_row_block(const kv_sf_reader *r, const uint8_t *row, uint32_t len);

/* Read [off, off+n) of the reader's file into buf: KV_OK, the env's error, or
** KV_ERR_CORRUPT if the file is shorter. */
int kv_sf_read_at(const kv_sf_reader *r, uint64_t off, void *buf, size_t n);

/* The n bytes at `off` of the reader's mapped file, in place (valid for the reader's life):
** KV_OK, or KV_ERR_CORRUPT (message set) when the file is not mapped or the bytes run past
** it; *out NULL then. */
int kv_sf_bytes_at(const kv_sf_reader *r, uint64_t off, size_t n, const uint8_t **out);

/* How many blocks this process read in place from a mapping (kv_sf_bytes_at; a relaxed
** counter, for tests that check the mapped path ran). */
uint64_t kv_sf_mapped_reads(void);

#endif /* ROWAN_KV_SF_INT_H */
