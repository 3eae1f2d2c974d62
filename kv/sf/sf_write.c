/*
** kv/sf/sf_write.c: the store file writer (kv/sf/sf.h). Cells arrive in kv_cell_cmp order and are
** staged in a block builder (kv/sf/sf_block.c); when the staged block has reached the target
** size at a row's end (row_cut: inside a row only at twice that), it is encoded, framed (lz4
** + XXH3-64) and appended, and its block index entry is noted.
** kv_sf_writer_finish() appends the bloom filter on row keys, the block index and the fixed
** trailer, then syncs and closes the file. Layout: docs/FORMAT.md Part 2. The filter is
** built at finish from every row's hash, or, when the caller said how many rows to expect
** (kv_sf_writer_options.expected_rows) and the file passes KV_SF_HASHES_KEPT rows, filled
** as rows come, so a large file's writer holds its filter's bits, not 8 bytes a row.
**
** A row's cells may also come at once (kv_sf_writer_add_row, the bulk load's common case):
** checked first, then staged with one row key comparison and one bloom hash; the bytes are
** those of adding them one by one, which is what a row breaking any rule gets.
**
** The writer does not rename or register the file: flush and compaction write it under a
** temporary name, then rename it and name it in the MANIFEST. One writer per thread.
**
** Segments (kv/sf/sf_seg.h): a writer opened by kv_sf_seg_open keeps its framed blocks, their
** index entries and its rows' bloom hashes in memory instead of appending to a file; a file
** writer appends such a segment whole (kv_sf_writer_add_seg), re-framing its blocks only
** when the segment's sequence number is not the one asked for. A file writer's output for
** the cells it is given one by one is the same byte for byte in both cases.
*/
#include <stdio.h>
#include <xxhash.h>
#include "kv/util/bloom.h"
#include "kv/util/coding.h"
#include "kv/sf/sf_int.h"
#include "kv/sf/sf_seg.h"
#include "kv/util/status.h"

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
  kv_sfbuf index;         /* encoded block index entries so far */
  uint64_t *hashes;       /* bloom hash of every distinct row key (NULL once streamed) */
  size_t nhashes, hashes_cap; /* row hashes noted / allocated */
  uint64_t expected;      /* kv_sf_writer_options.expected_rows (file writers only) */
  uint8_t *bloom;         /* past KV_SF_HASHES_KEPT rows with expected set: the filter,
                             filled as rows come (hashes then NULL) */
  size_t bloom_len;       /* its bytes */
  uint64_t pend[256];     /* hashes of rows added one by one, set in bloom in a batch (the
                             filter's bytes fetched ahead: each probe misses the cache) */
  size_t n_pend;          /* how many */
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

/* The file's format version: 3 when a block may hold a decimal-scaled value group, else 2. */
static uint32_t file_version(const kv_sf_writer *w) {
  return w->dec || w->b.used_dec ? KV_SF_FORMAT_VERSION : KV_SF_FORMAT_VERSION_NODEC;
}

static void writer_free(kv_sf_writer *w) {
  kv_sfb_free(&w->b);
  kv_sfbuf_free(&w->frame);
  free(w->cuts);
  kv_sfbuf_free(&w->index);
  kv_sfbuf_free(&w->prev_row);
  kv_sfbuf_free(&w->prev_qual);
  free(w->hashes);
  free(w->bloom);
  free(w->path);
  kv_sf_seg_free(w->seg);
  free(w);
}

int kv_sf_writer_open(kv_env *env, const char *path, const kv_sf_writer_options *opts,
                      kv_sf_writer **out) {
  *out = NULL;
  if (!env || !path) return kv_error(KV_MISUSE, "kv_sf_writer_open: NULL env or path");
  kv_sf_writer *w = calloc(1, sizeof *w);
  if (!w || !(w->path = strdup(path))) {
    free(w);
    return kv_error(KV_ERR_NOMEM, "out of memory opening store file %s", path);
  }
  w->env = env;
  w->block_size = opts && opts->block_size ? opts->block_size : KV_SF_DEFAULT_BLOCK_SIZE;
  if (w->block_size > KV_SF_MAX_BLOCK_SIZE) w->block_size = KV_SF_MAX_BLOCK_SIZE;
  w->compression = opts ? opts->compression : KV_COMPRESSION_LZ4;
  if (w->compression != KV_COMPRESSION_LZ4 && w->compression != KV_COMPRESSION_NONE) {
    writer_free(w);
    return kv_error(KV_ERR_INVALID, "store file %s: unknown compression %d", path,
                    opts->compression);
  }
  w->bloom_bits = opts && opts->bloom_bits_per_key ? opts->bloom_bits_per_key : 10;
  w->no_bloom = w->bloom_bits == KV_SF_NO_BLOOM;
  if (w->no_bloom) w->bloom_bits = 1; /* the empty filter's k */
  w->expected = opts ? opts->expected_rows : 0;
  kv_sfb_init(&w->b);
  w->props.format_version = KV_SF_FORMAT_VERSION;
  w->props.min_seq = UINT64_MAX;
  w->props.min_ts = INT64_MAX;
  w->props.max_ts = INT64_MIN;
  int rc = env->open(env, path, KV_OPEN_WRITE | KV_OPEN_TRUNCATE, &w->file);
  if (rc) {
    writer_free(w);
    return rc;
  }
  *out = w;
  return KV_OK;
}

/* Put one frame at the end of segment t's blocks (in memory, or appended to its file);
** *off gets its offset among them. */
static int seg_put(kv_sf_seg *t, const uint8_t *frame, size_t len, uint64_t *off) {
  *off = t->dlen;
  if (t->file) {
    int rc = t->env->append(t->file, frame, len);
    if (rc) return rc;
  } else if (kv_sfbuf_append(&t->data, frame, len)) {
    return kv_error(KV_ERR_NOMEM, "out of memory encoding a store file segment");
  }
  t->dlen += len;
  return KV_OK;
}

/* The frame of block e of s: in memory, or read back from s's file into buf. */
static int seg_frame(const kv_sf_seg *s, const seg_block *e, kv_sfbuf *buf,
                     const uint8_t **out) {
  if (!s->file) {
    *out = s->data.p + e->off;
    return KV_OK;
  }
  buf->len = 0;
  if (kv_sfbuf_reserve(buf, e->frame_len))
    return kv_error(KV_ERR_NOMEM, "out of memory reading a store file segment");
  size_t got = 0;
  int rc = s->env->read(s->file, s->base + e->off, buf->p, e->frame_len, &got);
  if (rc) return rc;
  if (got != e->frame_len)
    return kv_error(KV_ERR_CORRUPT, "store file segment: block at offset %llu of its "
                    "spill file cut short", (unsigned long long)(s->base + e->off));
  *out = buf->p;
  return KV_OK;
}

/* Segment mode: keep the framed block (w->frame) and its index entry in w->seg. */
static int seg_flush_block(kv_sf_writer *w, const kv_cell *first) {
  kv_sf_seg *s = w->seg;
  kv_sfb_builder *b = &w->b;
  if (s->keys.len + first->row_len + first->qual_len + w->prev_row.len + w->prev_qual.len >
          UINT32_MAX ||
      kv_sf_grow((void **)&s->blocks, &s->cap_blocks, s->nblocks + 1, sizeof *s->blocks))
    return kv_error(KV_ERR_NOMEM, "out of memory encoding a store file segment");
  seg_block *e = &s->blocks[s->nblocks];
  int rc = seg_put(s, w->frame.p, w->frame.len, &e->off);
  if (rc) return rc;
  e->frame_len = (uint32_t)w->frame.len;
  e->raw_len = (uint32_t)b->out.len;
  e->ncells = (uint32_t)b->ncells;
  e->nrows = (uint32_t)b->nrows;
  e->key_off = (uint32_t)s->keys.len;
  e->row_len = first->row_len;
  e->qual_len = first->qual_len;
  e->ts = first->ts;
  e->type = first->type;
  e->last_type = w->prev_type; /* the block ends with the cell added last */
  e->last_ts = w->prev_ts;
  e->last_row_len = (uint32_t)w->prev_row.len;
  e->last_qual_len = (uint32_t)w->prev_qual.len;
  e->min_ts = w->bmin_ts;
  e->max_ts = w->bmax_ts;
  e->hash_first = (uint32_t)(w->nhashes - b->nrows); /* a row of the block: one hash each */
  e->cont = s->nblocks > 0 &&
            e->hash_first < s->blocks[s->nblocks - 1].hash_first + s->blocks[s->nblocks - 1].nrows;
  if (kv_sfbuf_append(&s->keys, first->row, first->row_len) ||
      kv_sfbuf_append(&s->keys, first->qual, first->qual_len))
    return kv_error(KV_ERR_NOMEM, "out of memory encoding a store file segment");
  e->last_off = (uint32_t)s->keys.len;
  if (kv_sfbuf_append(&s->keys, w->prev_row.p, w->prev_row.len) ||
      kv_sfbuf_append(&s->keys, w->prev_qual.p, w->prev_qual.len))
    return kv_error(KV_ERR_NOMEM, "out of memory encoding a store file segment");
  s->nblocks++;
  w->props.raw_bytes += b->out.len;
  w->props.blocks++;
  kv_sfb_reset(b);
  return KV_OK;
}

/* Encode, frame and append the staged block, and add its index entry. */
static int flush_block(kv_sf_writer *w) {
  kv_sfb_builder *b = &w->b;
  if (b->ncells == 0) return KV_OK;
  int rc = kv_sfb_encode(b);
  w->frame.len = 0;
  if (!rc) rc = kv_sf_frame_block_cut(b->out.p, b->out.len, b->cuts, b->ncuts, w->compression,
                                      &w->frame);
  if (rc) return kv_error(rc, "out of memory writing store file %s", w->path);
  if (w->frame.len > UINT32_MAX)
    return kv_error(KV_ERR_TOOBIG, "store file %s: block over 4 GiB", w->path);
  kv_cell first;
  kv_sfb_first_cell(b, &first);
  if (w->seg) return seg_flush_block(w, &first);
  rc = w->env->append(w->file, w->frame.p, w->frame.len);
  if (rc) return rc;
  kv_sfbuf *x = &w->index;
  if (kv_sfbuf_varint(x, w->offset) || kv_sfbuf_varint(x, w->frame.len) ||
      kv_sfbuf_varint(x, b->out.len) || kv_sfbuf_varint(x, b->ncells) ||
      kv_sfbuf_varint(x, b->nrows) || kv_sfbuf_varint(x, first.row_len) ||
      kv_sfbuf_append(x, first.row, first.row_len) || kv_sfbuf_varint(x, first.qual_len) ||
      kv_sfbuf_append(x, first.qual, first.qual_len) ||
      kv_sfbuf_varint(x, kv_zigzag(first.ts)) || kv_sfbuf_varint(x, first.seq) ||
      kv_sfbuf_append(x, &first.type, 1))
    return kv_error(KV_ERR_NOMEM, "out of memory writing store file %s", w->path);
  w->offset += w->frame.len;
  w->props.raw_bytes += b->out.len;
  w->props.blocks++;
  kv_sfb_reset(b);
  return KV_OK;
}

/* Note n row hashes: kept in w->hashes, or set in w->bloom. A file writer told how many
** rows to expect moves to the filter once it has more than KV_SF_HASHES_KEPT hashes, so
** its memory does not grow by 8 bytes a row (the filter's bytes are the same as
** kv_bloom_build's over the hashes when the count is exact). */
static int note_hashes(kv_sf_writer *w, const uint64_t *h, size_t n) {
  if (w->no_bloom) {
    w->nhashes += n;
    return KV_OK;
  }
  if (!w->bloom && !w->seg && w->expected && w->nhashes + n > KV_SF_HASHES_KEPT) {
    uint64_t keys = w->expected > w->nhashes ? w->expected : w->nhashes;
    if (kv_bloom_alloc(keys, w->bloom_bits, &w->bloom, &w->bloom_len))
      return kv_error(KV_ERR_NOMEM, "out of memory writing store file %s", w->path);
    kv_bloom_add_many(w->bloom, w->hashes, w->nhashes);
    free(w->hashes);
    w->hashes = NULL;
    w->hashes_cap = 0;
  }
  if (w->bloom && n == 1) {
    w->pend[w->n_pend++] = *h;
    if (w->n_pend == sizeof w->pend / sizeof *w->pend) {
      kv_bloom_add_many(w->bloom, w->pend, w->n_pend);
      w->n_pend = 0;
    }
  } else if (w->bloom) {
    kv_bloom_add_many(w->bloom, w->pend, w->n_pend);
    w->n_pend = 0;
    kv_bloom_add_many(w->bloom, h, n);
  } else {
    if (kv_sf_grow((void **)&w->hashes, &w->hashes_cap, w->nhashes + n, sizeof *w->hashes))
      return kv_error(KV_ERR_NOMEM, "out of memory writing store file %s", w->path);
    memcpy(w->hashes + w->nhashes, h, n * sizeof *h);
  }
  w->nhashes += n;
  return KV_OK;
}

/* kv_cell_cmp(previous cell, c), each key part compared once; *new_row and *new_qual get
** whether c's row key (and qualifier) differ from the previous cell's. REQUIRES have_prev. */
static int prev_cmp(const kv_sf_writer *w, const kv_cell *c, int *new_row, int *new_qual) {
  int rc = kv_sf_key_cmp(w->prev_row.p, w->prev_row.len, c->row, c->row_len);
  *new_row = rc != 0;
  *new_qual = 1;
  if (*new_row) return rc;
  rc = kv_sf_key_cmp(w->prev_qual.p, w->prev_qual.len, c->qual, c->qual_len);
  *new_qual = rc != 0;
  if (*new_qual) return rc;
  return w->prev_ts != c->ts       ? (w->prev_ts > c->ts ? -1 : 1)
         : w->prev_seq != c->seq   ? (w->prev_seq > c->seq ? -1 : 1)
         : w->prev_type != c->type ? (w->prev_type > c->type ? -1 : 1)
                                   : 0;
}

/* Blocks end at a row's end (a row in one block is read whole from it: a point read loads
** one block, a row run (kv/scan/scan_run.c) goes on to the block's last row): a block is closed
** once its estimate reaches block_size at a row's end, and inside a row only at this
** larger size, so a row of more than about twice block_size still spans blocks. */
static size_t row_cut(const kv_sf_writer *w) { return (size_t)w->block_size * 2; }

int kv_sf_writer_add(kv_sf_writer *w, const kv_cell *c) {
  if (w->failed) return kv_error(w->failed, "store file %s: writer failed earlier", w->path);
  if (c->row_len > KV_MAX_ROW_KEY || c->qual_len > KV_MAX_QUALIFIER ||
      c->value_len > KV_MAX_VALUE)
    return kv_error(KV_ERR_TOOBIG, "store file %s: row key, qualifier or value too long",
                    w->path);
  if (c->type > KV_DELETE_FAMILY)
    return kv_error(KV_ERR_INVALID, "store file %s: bad cell type %u", w->path, c->type);
  if (w->seg && w->have_prev && c->seq != w->prev_seq)
    return kv_error(KV_ERR_INVALID, "store file segment: cells of several sequence numbers");
  int new_row = 1, new_qual = 1;
  if (w->have_prev && prev_cmp(w, c, &new_row, &new_qual) >= 0)
    return kv_error(KV_ERR_INVALID, "store file %s: cell %llu is not after the previous "
                    "cell in cell order", w->path, (unsigned long long)w->props.cells);
  if (new_row && w->b.est >= w->block_size) { /* the full block ends with the previous row */
    int frc = flush_block(w);
    if (frc) {
      w->failed = frc;
      return frc;
    }
  }
  if (new_row) {
    uint64_t h = w->no_bloom ? 0 : kv_bloom_hash(c->row, c->row_len);
    int hrc = note_hashes(w, &h, 1);
    if (hrc) return hrc;
    w->prev_row.len = 0;
    if (kv_sfbuf_append(&w->prev_row, c->row, c->row_len))
      return kv_error(KV_ERR_NOMEM, "out of memory writing store file %s", w->path);
    w->props.rows++;
  }
  if (new_qual) {
    w->prev_qual.len = 0;
    if (kv_sfbuf_append(&w->prev_qual, c->qual, c->qual_len))
      return kv_error(KV_ERR_NOMEM, "out of memory writing store file %s", w->path);
  }
  w->prev_ts = c->ts;
  w->prev_seq = c->seq;
  w->prev_type = c->type;
  int rc = kv_sfb_add(&w->b, c, new_row);
  if (rc) {
    w->failed = rc;
    return kv_error(rc, "store file %s: cannot stage cell", w->path);
  }
  w->have_prev = 1;
  w->props.cells++;
  if (w->b.ncells == 1) w->bmin_ts = w->bmax_ts = c->ts; /* the block's first cell */
  if (c->ts < w->bmin_ts) w->bmin_ts = c->ts;
  if (c->ts > w->bmax_ts) w->bmax_ts = c->ts;
  if (c->ts < w->props.min_ts) w->props.min_ts = c->ts;
  if (c->ts > w->props.max_ts) w->props.max_ts = c->ts;
  if (c->seq < w->props.min_seq) w->props.min_seq = c->seq;
  if (c->seq > w->props.max_seq) w->props.max_seq = c->seq;
  if (w->b.est >= row_cut(w)) { /* a row too long for one block: cut inside it */
    rc = flush_block(w);
    if (rc) w->failed = rc;
    return rc;
  }
  return KV_OK;
}

/* May cells[0..n) go in by kv_sf_writer_add_row's fast path: w usable, every cell valid,
** of one row key that sorts after the previous cell's row, the cells in strictly increasing
** cell order, a segment's cells of its one sequence number? (Else each goes through
** kv_sf_writer_add, which words the error.) */
static bool row_fast_ok(const kv_sf_writer *w, const kv_cell *c, size_t n) {
  if (w->failed || c[0].row_len > KV_MAX_ROW_KEY) return false;
  if (w->have_prev && kv_sf_key_cmp(w->prev_row.p, w->prev_row.len, c[0].row, c[0].row_len) >= 0)
    return false;
  for (size_t i = 0; i < n; i++) {
    const kv_cell *x = &c[i];
    if (x->qual_len > KV_MAX_QUALIFIER || x->value_len > KV_MAX_VALUE ||
        x->type > KV_DELETE_FAMILY || x->row_len != c[0].row_len)
      return false;
    if (x->row != c[0].row && kv_sf_key_cmp(x->row, x->row_len, c[0].row, x->row_len)) return false;
    if (w->seg && x->seq != (w->have_prev ? w->prev_seq : c[0].seq)) return false;
    if (i == 0) continue;
    const kv_cell *p = &c[i - 1];
    int rc = kv_sf_key_cmp(p->qual, p->qual_len, x->qual, x->qual_len);
    if (rc == 0)
      rc = p->ts != x->ts     ? (p->ts > x->ts ? -1 : 1)
           : p->seq != x->seq ? (p->seq > x->seq ? -1 : 1)
           : p->type != x->type ? (p->type > x->type ? -1 : 1)
                                : 0;
    if (rc >= 0) return false;
  }
  return true;
}

/* Note cell c as the previous one (the order check's and a block's last cell). */
static int set_prev(kv_sf_writer *w, const kv_cell *c) {
  w->prev_qual.len = 0;
  if (kv_sfbuf_append(&w->prev_qual, c->qual, c->qual_len))
    return kv_error(KV_ERR_NOMEM, "out of memory writing store file %s", w->path);
  w->prev_ts = c->ts;
  w->prev_seq = c->seq;
  w->prev_type = c->type;
  return KV_OK;
}

int kv_sf_writer_add_row(kv_sf_writer *w, const kv_cell *c, size_t n) {
  if (n == 0) return KV_OK;
  if (!row_fast_ok(w, c, n)) { /* one by one: the same result, and its error */
    for (size_t i = 0; i < n; i++) {
      int rc = kv_sf_writer_add(w, &c[i]);
      if (rc) return rc;
    }
    return KV_OK;
  }
  int rc = KV_OK;
  if (w->b.est >= w->block_size && (rc = flush_block(w)) != KV_OK) { /* full: ends before */
    w->failed = rc;
    return rc;
  }
  uint64_t h = w->no_bloom ? 0 : kv_bloom_hash(c[0].row, c[0].row_len);
  rc = note_hashes(w, &h, 1);
  if (rc) return rc;
  w->prev_row.len = 0;
  if (kv_sfbuf_append(&w->prev_row, c[0].row, c[0].row_len))
    return kv_error(KV_ERR_NOMEM, "out of memory writing store file %s", w->path);
  w->props.rows++;
  for (size_t i = 0; i < n; i++) {
    const kv_cell *x = &c[i];
    rc = kv_sfb_add(&w->b, x, i == 0);
    if (rc) {
      w->failed = rc;
      return kv_error(rc, "store file %s: cannot stage cell", w->path);
    }
    w->have_prev = 1;
    w->props.cells++;
    if (w->b.ncells == 1) w->bmin_ts = w->bmax_ts = x->ts;
    if (x->ts < w->bmin_ts) w->bmin_ts = x->ts;
    if (x->ts > w->bmax_ts) w->bmax_ts = x->ts;
    if (x->ts < w->props.min_ts) w->props.min_ts = x->ts;
    if (x->ts > w->props.max_ts) w->props.max_ts = x->ts;
    if (x->seq < w->props.min_seq) w->props.min_seq = x->seq;
    if (x->seq > w->props.max_seq) w->props.max_seq = x->seq;
    if (w->b.est >= row_cut(w)) { /* a row too long for one block ends it with x: noted
                                     first (a full block ends at the next row: add's rule) */
      if ((rc = set_prev(w, x)) != KV_OK || (rc = flush_block(w)) != KV_OK) {
        w->failed = rc;
        return rc;
      }
    }
  }
  return set_prev(w, &c[n - 1]);
}

int kv_sf_writer_add_framed(kv_sf_writer *w, const kv_sf_framed *f) {
  if (w->failed) return kv_error(w->failed, "store file %s: writer failed earlier", w->path);
  if (w->seg) return kv_error(KV_MISUSE, "kv_sf_writer_add_framed: a segment writer");
  if (f->dec) w->dec = true;
  int new_row = 1, new_qual = 1;
  if (f->nrows == 0 || f->ncells < f->nrows || f->frame_len > UINT32_MAX)
    return kv_error(KV_ERR_INVALID, "store file %s: bad copied block", w->path);
  if (w->have_prev && prev_cmp(w, f->first, &new_row, &new_qual) >= 0)
    return kv_error(KV_ERR_INVALID, "store file %s: copied block is not after the previous "
                    "cell in cell order", w->path);
  int rc = flush_block(w);
  if (rc == KV_OK) rc = w->env->append(w->file, f->frame, f->frame_len);
  if (rc) {
    w->failed = rc;
    return rc;
  }
  const kv_cell *c = f->first, *l = f->last;
  kv_sfbuf *x = &w->index;
  if (kv_sfbuf_varint(x, w->offset) || kv_sfbuf_varint(x, f->frame_len) ||
      kv_sfbuf_varint(x, f->raw_len) || kv_sfbuf_varint(x, f->ncells) ||
      kv_sfbuf_varint(x, f->nrows) || kv_sfbuf_varint(x, c->row_len) ||
      kv_sfbuf_append(x, c->row, c->row_len) || kv_sfbuf_varint(x, c->qual_len) ||
      kv_sfbuf_append(x, c->qual, c->qual_len) || kv_sfbuf_varint(x, kv_zigzag(c->ts)) ||
      kv_sfbuf_varint(x, c->seq) || kv_sfbuf_append(x, &c->type, 1))
    rc = kv_error(KV_ERR_NOMEM, "out of memory writing store file %s", w->path);
  w->offset += f->frame_len;
  w->props.raw_bytes += f->raw_len;
  w->props.blocks++;
  w->props.cells += f->ncells;
  uint32_t skip = new_row ? 0 : 1; /* the first row continues the previous cell's */
  if (rc == KV_OK && f->nrows > skip) rc = note_hashes(w, f->hashes + skip, f->nrows - skip);
  w->props.rows += f->nrows - skip;
  w->prev_row.len = 0;
  if (rc == KV_OK && kv_sfbuf_append(&w->prev_row, l->row, l->row_len))
    rc = kv_error(KV_ERR_NOMEM, "out of memory writing store file %s", w->path);
  if (rc == KV_OK) rc = set_prev(w, l);
  w->have_prev = 1;
  if (rc) w->failed = rc; /* the file holds the block: the index must too */
  return rc;
}

void kv_sf_writer_widen(kv_sf_writer *w, const kv_sf_props *p) {
  if (!p->cells) return;
  if (p->min_ts < w->props.min_ts) w->props.min_ts = p->min_ts;
  if (p->max_ts > w->props.max_ts) w->props.max_ts = p->max_ts;
  if (p->min_seq < w->props.min_seq) w->props.min_seq = p->min_seq;
  if (p->max_seq > w->props.max_seq) w->props.max_seq = p->max_seq;
}

/* Append a section and return its offset, size and checksum. */
static int write_section(kv_sf_writer *w, const uint8_t *p, size_t n, uint64_t *off,
                         uint64_t *size, uint64_t *sum) {
  int rc = n ? w->env->append(w->file, p, n) : KV_OK;
  if (rc) return rc;
  *off = w->offset;
  *size = n;
  *sum = XXH3_64bits(p, n);
  w->offset += n;
  return KV_OK;
}

static int finish(kv_sf_writer *w) {
  int rc = flush_block(w);
  if (rc) return rc;
  kv_sf_props *pr = &w->props;
  if (pr->cells == 0) { pr->min_seq = pr->max_seq = 0; pr->min_ts = pr->max_ts = 0; }
  /* Bloom filter. */
  if (w->bloom) kv_bloom_add_many(w->bloom, w->pend, w->n_pend);
  w->n_pend = 0;
  uint8_t *bloom = w->bloom;
  size_t bloom_len = w->bloom_len;
  w->bloom = NULL;
  if (!bloom && kv_bloom_build(w->hashes, w->no_bloom ? 0 : w->nhashes, w->bloom_bits, &bloom,
                               &bloom_len))
    return kv_error(KV_ERR_NOMEM, "out of memory writing store file %s", w->path);
  uint64_t bloom_off, bloom_size, bloom_sum;
  rc = write_section(w, bloom, bloom_len, &bloom_off, &bloom_size, &bloom_sum);
  free(bloom);
  if (rc) return rc;
  /* Block index: count, entries, last row key. */
  kv_sfbuf sec = {0};
  if (kv_sfbuf_varint(&sec, pr->blocks) || kv_sfbuf_append(&sec, w->index.p, w->index.len) ||
      kv_sfbuf_varint(&sec, w->prev_row.len) ||
      kv_sfbuf_append(&sec, w->prev_row.p, w->prev_row.len)) {
    kv_sfbuf_free(&sec);
    return kv_error(KV_ERR_NOMEM, "out of memory writing store file %s", w->path);
  }
  uint64_t index_off, index_size, index_sum;
  rc = write_section(w, sec.p, sec.len, &index_off, &index_size, &index_sum);
  kv_sfbuf_free(&sec);
  if (rc) return rc;
  /* Trailer. */
  uint8_t t[KV_SF_TRAILER_SIZE];
  kv_put_u64le(t + 0, KV_SF_MAGIC);
  pr->format_version = file_version(w);
  kv_put_u32le(t + 8, pr->format_version);
  kv_put_u32le(t + 12, 0);
  kv_put_u64le(t + 16, index_off);
  kv_put_u64le(t + 24, index_size);
  kv_put_u64le(t + 32, bloom_off);
  kv_put_u64le(t + 40, bloom_size);
  kv_put_u64le(t + 48, index_sum);
  kv_put_u64le(t + 56, bloom_sum);
  kv_put_u64le(t + 64, pr->cells);
  kv_put_u64le(t + 72, pr->rows);
  kv_put_u64le(t + 80, pr->blocks);
  kv_put_u64le(t + 88, pr->raw_bytes);
  kv_put_u64le(t + 96, pr->min_seq);
  kv_put_u64le(t + 104, pr->max_seq);
  kv_put_u64le(t + 112, (uint64_t)pr->min_ts);
  kv_put_u64le(t + 120, (uint64_t)pr->max_ts);
  kv_put_u64le(t + 128, XXH3_64bits(t, 128));
  rc = w->env->append(w->file, t, sizeof t);
  if (rc) return rc;
  w->offset += sizeof t;
  pr->file_size = w->offset;
  return w->env->sync(w->file);
}

int kv_sf_writer_finish(kv_sf_writer *w, kv_sf_props *props) {
  if (w->seg) {
    writer_free(w);
    return kv_error(KV_MISUSE, "kv_sf_writer_finish: a segment writer (kv_sf_seg_finish)");
  }
  int rc = w->failed ? kv_error(w->failed, "store file %s: writer failed earlier", w->path)
                     : finish(w);
  int crc = w->env->close(w->file);
  if (!rc) rc = crc;
  if (!rc && props) *props = w->props;
  writer_free(w);
  return rc;
}

void kv_sf_writer_abort(kv_sf_writer *w) {
  if (!w) return;
  if (w->file) w->env->close(w->file);
  writer_free(w);
}

/* ---- segments (kv/sf/sf_seg.h) ------------------------------------------------------------ */

int kv_sf_seg_open(const kv_sf_writer_options *opts, kv_sf_writer **out) {
  *out = NULL;
  kv_sf_writer *w = calloc(1, sizeof *w);
  if (!w || !(w->path = strdup("(segment)")) || !(w->seg = calloc(1, sizeof *w->seg))) {
    if (w) free(w->path);
    free(w);
    return kv_error(KV_ERR_NOMEM, "out of memory opening a store file segment");
  }
  w->block_size = opts && opts->block_size ? opts->block_size : KV_SF_DEFAULT_BLOCK_SIZE;
  if (w->block_size > KV_SF_MAX_BLOCK_SIZE) w->block_size = KV_SF_MAX_BLOCK_SIZE;
  w->compression = opts ? opts->compression : KV_COMPRESSION_LZ4;
  if (w->compression != KV_COMPRESSION_LZ4 && w->compression != KV_COMPRESSION_NONE) {
    writer_free(w);
    return kv_error(KV_ERR_INVALID, "store file segment: unknown compression %d",
                    opts->compression);
  }
  w->bloom_bits = opts && opts->bloom_bits_per_key && opts->bloom_bits_per_key != KV_SF_NO_BLOOM
                      ? opts->bloom_bits_per_key : 10; /* a segment keeps its hashes */
  kv_sfb_init(&w->b);
  w->props.format_version = KV_SF_FORMAT_VERSION;
  w->props.min_seq = UINT64_MAX;
  w->props.min_ts = INT64_MAX;
  w->props.max_ts = INT64_MIN;
  *out = w;
  return KV_OK;
}

int kv_sf_seg_finish(kv_sf_writer *w, kv_sf_seg **out) {
  *out = NULL;
  if (!w->seg) {
    kv_sf_writer_abort(w);
    return kv_error(KV_MISUSE, "kv_sf_seg_finish: not a segment writer");
  }
  int rc = w->failed ? kv_error(w->failed, "store file segment: writer failed earlier")
                     : flush_block(w);
  kv_sf_seg *s = w->seg;
  if (rc == KV_OK && w->props.cells) {
    s->last_off = (uint32_t)s->keys.len;
    s->last_row_len = (uint32_t)w->prev_row.len;
    s->last_qual_len = (uint32_t)w->prev_qual.len;
    s->last_ts = w->prev_ts;
    s->last_type = w->prev_type;
    if (kv_sfbuf_append(&s->keys, w->prev_row.p, w->prev_row.len) ||
        kv_sfbuf_append(&s->keys, w->prev_qual.p, w->prev_qual.len))
      rc = kv_error(KV_ERR_NOMEM, "out of memory encoding a store file segment");
  }
  if (rc == KV_OK && w->props.cells && !s->file && s->data.cap > s->data.len) {
    uint8_t *p = realloc(s->data.p, s->data.len ? s->data.len : 1); /* held until commit */
    if (p) {
      s->data.p = p;
      s->data.cap = s->data.len;
    }
  }
  if (rc == KV_OK && w->props.cells && s->cap_blocks > s->nblocks) { /* held until commit */
    seg_block *p = realloc(s->blocks, s->nblocks * sizeof *s->blocks);
    if (p) {
      s->blocks = p;
      s->cap_blocks = s->nblocks;
    }
  }
  if (rc == KV_OK && w->props.cells && s->keys.cap > s->keys.len) {
    uint8_t *p = realloc(s->keys.p, s->keys.len);
    if (p) {
      s->keys.p = p;
      s->keys.cap = s->keys.len;
    }
  }
  if (rc == KV_OK && w->props.cells && s->file && w->nhashes) {
    /* a file-backed segment keeps its row hashes in its file too (read back when appended) */
    rc = s->env->append(s->file, w->hashes, w->nhashes * sizeof *w->hashes);
    if (rc == KV_OK) {
      s->hash_off = s->base + s->dlen;
      s->nhashes = w->nhashes;
      free(w->hashes);
      w->hashes = NULL;
    }
  }
  if (rc == KV_OK && w->props.cells) {
    if (w->hashes) s->nhashes = w->nhashes;
    s->hashes = w->hashes;
    w->hashes = NULL;
    s->dec = w->dec || w->b.used_dec;
    s->props = w->props;
    s->props.format_version = file_version(w);
    s->seq = w->prev_seq;
    *out = s;
    w->seg = NULL;
  }
  writer_free(w);
  return rc;
}

uint64_t kv_sf_seg_cells(const kv_sf_seg *s) { return s ? s->props.cells : 0; }
uint64_t kv_sf_seg_seq(const kv_sf_seg *s) { return s ? s->seq : 0; }
uint64_t kv_sf_seg_rows(const kv_sf_seg *s) { return s ? s->props.rows : 0; }

int kv_sf_seg_open_file(const kv_sf_writer_options *opts, kv_env *env, kv_file *f,
                        uint64_t base, kv_sf_writer **out) {
  if (!env || !f) {
    *out = NULL;
    return kv_error(KV_MISUSE, "kv_sf_seg_open_file: NULL env or file");
  }
  int rc = kv_sf_seg_open(opts, out);
  if (rc) return rc;
  (*out)->seg->env = env;
  (*out)->seg->file = f;
  (*out)->seg->base = base;
  return KV_OK;
}

int kv_sf_seg_page_out(kv_sf_seg *s, kv_env *env, kv_file *f, uint64_t base) {
  if (!s || s->file) return KV_OK;
  int rc = s->dlen ? env->append(f, s->data.p, s->dlen) : KV_OK;
  if (rc == KV_OK && s->nhashes) rc = env->append(f, s->hashes, s->nhashes * sizeof *s->hashes);
  if (rc) return rc;
  kv_sfbuf_free(&s->data);
  free(s->hashes);
  s->hashes = NULL;
  s->hash_off = base + s->dlen;
  s->env = env;
  s->file = f;
  s->base = base;
  return KV_OK;
}

bool kv_sf_seg_paged(const kv_sf_seg *s) { return s && s->file; }
uint64_t kv_sf_seg_data_bytes(const kv_sf_seg *s) { return s ? s->dlen : 0; }

size_t kv_sf_seg_bytes(const kv_sf_seg *s) {
  return s ? s->data.cap + s->keys.cap + s->cap_blocks * sizeof *s->blocks +
                 (s->hashes ? s->nhashes * sizeof *s->hashes : 0)
           : 0;
}

void kv_sf_seg_free(kv_sf_seg *s) {
  if (!s) return;
  kv_sfbuf_free(&s->data);
  kv_sfbuf_free(&s->keys);
  free(s->blocks);
  free(s->hashes);
  free(s);
}

/* Frame block e of s again with sequence number seq in its raw header (docs/FORMAT.md
** Part 2: varint nrows, ncells, nquals, min_seq open a raw block) into w->frame;
** *raw_len gets the new raw length. */
static int reframe(kv_sf_writer *w, const uint8_t *frame, const seg_block *e, uint64_t seq,
                   kv_sfbuf *scratch, kv_sfbuf *patched, uint32_t *raw_len) {
  const uint8_t *raw;
  size_t len;
  int rc = kv_sf_unframe_block(frame, e->frame_len, e->raw_len, scratch, &raw,
                               &len, "(segment)", e->off);
  if (rc) return rc;
  const uint8_t *p = raw, *limit = raw + len, *head_end = raw;
  uint64_t v;
  for (int i = 0; i < 4 && p; i++) {
    head_end = p;
    p = kv_get_varint(p, limit, &v);
  }
  if (!p) return kv_error(KV_ERR_CORRUPT, "store file segment: damaged block header");
  size_t head = (size_t)(head_end - raw);
  patched->len = 0;
  if (kv_sfbuf_reserve(patched, len + 10)) return kv_error(KV_ERR_NOMEM, "out of memory");
  memcpy(patched->p, raw, head);
  uint8_t *o = kv_put_varint(patched->p + head, seq);
  memcpy(o, p, (size_t)(limit - p));
  patched->len = (size_t)(o - patched->p) + (size_t)(limit - p);
  /* the sections of the old frame, moved by the header's change of length */
  size_t ncuts = 0;
  if (kv_sf_frame_cuts(frame, e->frame_len, &w->cuts, &w->cuts_cap, &ncuts))
    return kv_error(KV_ERR_NOMEM, "out of memory");
  for (size_t i = 0; i < ncuts; i++) w->cuts[i] = w->cuts[i] - (uint32_t)len + (uint32_t)patched->len;
  w->frame.len = 0;
  if (kv_sf_frame_block_cut(patched->p, patched->len, w->cuts, ncuts, w->compression, &w->frame))
    return kv_error(KV_ERR_NOMEM, "out of memory writing store file %s", w->path);
  *raw_len = (uint32_t)patched->len;
  return KV_OK;
}

/* Append block e of s (its frame `frame`, frame_len bytes, raw_len raw) to w: to the file
** with a block index entry, or (segment mode) to w's segment with its block entry. */
static int append_block(kv_sf_writer *w, const kv_sf_seg *s, const seg_block *e,
                        const uint8_t *frame, size_t frame_len, uint32_t raw_len,
                        uint64_t seq, uint32_t hash_first, bool cont) {
  const uint8_t *k = s->keys.p + e->key_off;
  if (w->seg) {
    kv_sf_seg *t = w->seg;
    if (t->keys.len + e->row_len + e->qual_len + e->last_row_len + e->last_qual_len >
            UINT32_MAX ||
        kv_sf_grow((void **)&t->blocks, &t->cap_blocks, t->nblocks + 1, sizeof *t->blocks))
      return kv_error(KV_ERR_NOMEM, "out of memory encoding a store file segment");
    seg_block *o = &t->blocks[t->nblocks];
    *o = *e;
    int rc = seg_put(t, frame, frame_len, &o->off);
    if (rc) return rc;
    o->frame_len = (uint32_t)frame_len;
    o->raw_len = raw_len;
    o->hash_first = hash_first;
    o->cont = cont;
    o->key_off = (uint32_t)t->keys.len;
    if (kv_sfbuf_append(&t->keys, k, (size_t)e->row_len + e->qual_len))
      return kv_error(KV_ERR_NOMEM, "out of memory encoding a store file segment");
    o->last_off = (uint32_t)t->keys.len;
    if (kv_sfbuf_append(&t->keys, s->keys.p + e->last_off,
                        (size_t)e->last_row_len + e->last_qual_len))
      return kv_error(KV_ERR_NOMEM, "out of memory encoding a store file segment");
    t->nblocks++;
  } else {
    int rc = w->env->append(w->file, frame, frame_len);
    if (rc) return rc;
    kv_sfbuf *x = &w->index;
    if (kv_sfbuf_varint(x, w->offset) || kv_sfbuf_varint(x, frame_len) ||
        kv_sfbuf_varint(x, raw_len) || kv_sfbuf_varint(x, e->ncells) ||
        kv_sfbuf_varint(x, e->nrows) || kv_sfbuf_varint(x, e->row_len) ||
        kv_sfbuf_append(x, k, e->row_len) || kv_sfbuf_varint(x, e->qual_len) ||
        kv_sfbuf_append(x, k + e->row_len, e->qual_len) ||
        kv_sfbuf_varint(x, kv_zigzag(e->ts)) || kv_sfbuf_varint(x, seq) ||
        kv_sfbuf_append(x, &e->type, 1))
      return kv_error(KV_ERR_NOMEM, "out of memory writing store file %s", w->path);
    w->offset += frame_len;
  }
  w->props.raw_bytes += raw_len;
  w->props.blocks++;
  w->props.cells += e->ncells;
  if (e->min_ts < w->props.min_ts) w->props.min_ts = e->min_ts;
  if (e->max_ts > w->props.max_ts) w->props.max_ts = e->max_ts;
  return KV_OK;
}

int kv_sf_writer_add_seg_blocks(kv_sf_writer *w, const kv_sf_seg *s, size_t from, size_t to,
                                uint64_t seq) {
  if (w->failed) return kv_error(w->failed, "store file %s: writer failed earlier", w->path);
  if (!s || to > s->nblocks) to = s ? s->nblocks : 0;
  if (from >= to) return KV_OK;
  if (w->seg && w->have_prev && seq != w->prev_seq)
    return kv_error(KV_ERR_INVALID, "store file segment: cells of several sequence numbers");
  const seg_block *b0 = &s->blocks[from];
  if (s->dec) w->dec = true;
  if (w->have_prev &&
      kv_bytes_cmp(w->prev_row.p, w->prev_row.len, s->keys.p + b0->key_off, b0->row_len) >= 0)
    return kv_error(KV_ERR_INVALID, "store file %s: segment does not start after the "
                    "previous row", w->path);
  int rc = flush_block(w);
  if (rc) {
    w->failed = rc;
    return rc;
  }
  const seg_block *bl = &s->blocks[to - 1];
  /* the rows' hashes: those of the blocks' rows, the first one's even if it continues the
  ** block before `from` (that block is not in w: its row is new here) */
  size_t h0 = b0->hash_first, h1 = bl->hash_first + bl->nrows;
  if (h1 < h0 || h1 > s->nhashes)
    return kv_error(KV_ERR_CORRUPT, "store file segment: damaged row hashes");
  kv_sfbuf scratch = {0}, patched = {0}, fbuf = {0};
  uint32_t out_hash = (uint32_t)w->nhashes; /* segment mode: the new blocks' hash indexes */
  for (size_t i = from; i < to && rc == KV_OK; i++) {
    const seg_block *e = &s->blocks[i];
    const uint8_t *frame = NULL;
    rc = seg_frame(s, e, &fbuf, &frame);
    if (rc) break;
    size_t frame_len = e->frame_len;
    uint32_t raw_len = e->raw_len;
    if (seq != s->seq) {
      rc = reframe(w, frame, e, seq, &scratch, &patched, &raw_len);
      if (rc) break;
      frame = w->frame.p;
      frame_len = w->frame.len;
    }
    bool cont = i > from && e->cont;
    uint32_t hf = out_hash + (uint32_t)(e->hash_first - h0);
    rc = append_block(w, s, e, frame, frame_len, raw_len, seq, hf, cont);
  }
  kv_sfbuf_free(&scratch);
  kv_sfbuf_free(&patched);
  kv_sfbuf_free(&fbuf);
  if (rc == KV_OK) {
    w->prev_row.len = w->prev_qual.len = 0;
    if (kv_sfbuf_append(&w->prev_row, s->keys.p + bl->last_off, bl->last_row_len) ||
        kv_sfbuf_append(&w->prev_qual, s->keys.p + bl->last_off + bl->last_row_len,
                        bl->last_qual_len))
      rc = kv_error(KV_ERR_NOMEM, "out of memory writing store file %s", w->path);
  }
  if (rc) {
    w->failed = rc;
    return rc;
  }
  if (s->hashes) {
    rc = note_hashes(w, s->hashes + h0, h1 - h0);
  } else { /* paged out: read back (the file holds them in host order), a chunk at a time */
    uint64_t chunk[4096];
    for (size_t i = h0; i < h1 && rc == KV_OK;) {
      size_t n = h1 - i < 4096 ? h1 - i : 4096, want = n * sizeof *chunk, got = 0;
      rc = s->env->read(s->file, s->hash_off + i * sizeof *chunk, chunk, want, &got);
      if (rc == KV_OK && got != want)
        rc = kv_error(KV_ERR_CORRUPT, "store file segment: row hashes cut short in its spill "
                      "file");
      if (rc == KV_OK) rc = note_hashes(w, chunk, n);
      i += n;
    }
  }
  if (rc) {
    w->failed = rc;
    return rc;
  }
  w->props.rows += h1 - h0;
  w->prev_ts = bl->last_ts;
  w->prev_seq = seq;
  w->prev_type = bl->last_type;
  w->have_prev = 1;
  if (seq < w->props.min_seq) w->props.min_seq = seq;
  if (seq > w->props.max_seq) w->props.max_seq = seq;
  return KV_OK;
}

int kv_sf_writer_add_seg(kv_sf_writer *w, const kv_sf_seg *s, uint64_t seq) {
  if (w->seg) return kv_error(KV_MISUSE, "kv_sf_writer_add_seg: a segment writer");
  return kv_sf_writer_add_seg_blocks(w, s, 0, s ? s->nblocks : 0, seq);
}

size_t kv_sf_seg_nblocks(const kv_sf_seg *s) { return s ? s->nblocks : 0; }

void kv_sf_seg_block_info(const kv_sf_seg *s, size_t i, kv_sf_seg_binfo *out) {
  const seg_block *e = &s->blocks[i];
  out->first_row = s->keys.p + e->key_off;
  out->first_len = e->row_len;
  out->last_row = s->keys.p + e->last_off;
  out->last_len = e->last_row_len;
  out->ncells = e->ncells;
  out->cont = e->cont;
}

/* ---- reading a segment's blocks back ----------------------------------------------------- */

struct kv_sf_seg_cur {
  kv_sf_dblock d;         /* the decoded block */
  kv_sfbuf scratch;       /* its raw bytes (lz4 output) */
  kv_sfbuf frame;         /* its frame, read back from a paged-out segment's file */
  uint32_t ri;            /* row of the cell read last */
};

kv_sf_seg_cur *kv_sf_seg_cur_new(void) { return calloc(1, sizeof(kv_sf_seg_cur)); }

void kv_sf_seg_cur_free(kv_sf_seg_cur *c) {
  if (!c) return;
  kv_sf_dblock_free(&c->d);
  kv_sfbuf_free(&c->scratch);
  kv_sfbuf_free(&c->frame);
  free(c);
}

int kv_sf_seg_cur_load(kv_sf_seg_cur *c, const kv_sf_seg *s, size_t i, uint32_t *ncells) {
  *ncells = 0;
  if (i >= s->nblocks) return kv_error(KV_MISUSE, "store file segment: no block %zu", i);
  const seg_block *e = &s->blocks[i];
  const uint8_t *raw, *frame = NULL;
  size_t len;
  int rc = seg_frame(s, e, &c->frame, &frame);
  if (rc) return rc;
  rc = kv_sf_unframe_block(frame, e->frame_len, e->raw_len, &c->scratch, &raw, &len,
                           "(segment)", e->off);
  if (rc) return rc;
  const char *why = NULL;
  rc = kv_sf_block_decode(&c->d, raw, len, &why);
  if (rc) return kv_error(rc, "store file segment: block %zu: %s", i, why ? why : "damaged");
  c->ri = 0;
  *ncells = c->d.ncells;
  return KV_OK;
}

void kv_sf_seg_cur_cell(kv_sf_seg_cur *c, uint32_t k, kv_cell *out) {
  const kv_sf_dblock *d = &c->d;
  if (k < d->row_first[c->ri]) c->ri = 0;
  while (c->ri + 1 < d->nrows && k >= d->row_first[c->ri + 1]) c->ri++;
  kv_sf_dblock_cell(d, c->ri, k, out);
}
