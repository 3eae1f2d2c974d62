/*
** kv/sf_write.c: the store file writer (kv/sf.h). Cells arrive in kv_cell_cmp order and are
** staged in a block builder (kv/sf_block.c); when the staged block reaches the target size
** it is encoded, framed (lz4 + XXH3-64) and appended, and its block index entry is noted.
** kv_sf_writer_finish() appends the bloom filter on row keys, the block index and the fixed
** trailer, then syncs and closes the file. Layout: docs/FORMAT.md Part 2.
**
** The writer does not rename or register the file: flush and compaction write it under a
** temporary name, then rename it and name it in the MANIFEST. One writer per thread.
*/
#include <stdio.h>
#include <xxhash.h>
#include "kv/bloom.h"
#include "kv/coding.h"
#include "kv/sf_int.h"
#include "kv/status.h"

struct kv_sf_writer {
  kv_env *env;            /* the env the file is written through */
  kv_file *file;          /* the open file */
  char *path;             /* file path, for messages */
  uint32_t block_size;    /* target raw bytes per block */
  int compression;        /* KV_COMPRESSION_LZ4 or KV_COMPRESSION_NONE */
  uint32_t bloom_bits;    /* bloom bits per row key */
  kv_sfb_builder b;       /* the block being staged */
  kv_sfbuf frame;         /* the on-disk form of a block (reused) */
  kv_sfbuf index;         /* encoded block index entries so far */
  uint64_t *hashes;       /* bloom hash of every distinct row key */
  size_t nhashes, hashes_cap; /* hashes in use / allocated */
  kv_sfbuf prev_row;      /* the previous cell's row key (order check) */
  kv_sfbuf prev_qual;     /* the previous cell's qualifier */
  int64_t prev_ts;        /* the previous cell's timestamp */
  uint64_t prev_seq;      /* the previous cell's sequence number */
  uint8_t prev_type;      /* the previous cell's type */
  int have_prev;          /* a cell was added */
  uint64_t offset;        /* bytes appended so far */
  kv_sf_props props;      /* counts and ranges so far */
  int failed;             /* sticky status of a failed append (KV_OK if none) */
};

static void writer_free(kv_sf_writer *w) {
  kv_sfb_free(&w->b);
  kv_sfbuf_free(&w->frame);
  kv_sfbuf_free(&w->index);
  kv_sfbuf_free(&w->prev_row);
  kv_sfbuf_free(&w->prev_qual);
  free(w->hashes);
  free(w->path);
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

/* Encode, frame and append the staged block, and add its index entry. */
static int flush_block(kv_sf_writer *w) {
  kv_sfb_builder *b = &w->b;
  if (b->ncells == 0) return KV_OK;
  int rc = kv_sfb_encode(b);
  w->frame.len = 0;
  if (!rc) rc = kv_sf_frame_block(b->out.p, b->out.len, w->compression, &w->frame);
  if (rc) return kv_error(rc, "out of memory writing store file %s", w->path);
  if (w->frame.len > UINT32_MAX)
    return kv_error(KV_ERR_TOOBIG, "store file %s: block over 4 GiB", w->path);
  rc = w->env->append(w->file, w->frame.p, w->frame.len);
  if (rc) return rc;
  kv_cell first;
  kv_sfb_first_cell(b, &first);
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

int kv_sf_writer_add(kv_sf_writer *w, const kv_cell *c) {
  if (w->failed) return kv_error(w->failed, "store file %s: writer failed earlier", w->path);
  if (c->row_len > KV_MAX_ROW_KEY || c->qual_len > KV_MAX_QUALIFIER ||
      c->value_len > KV_MAX_VALUE)
    return kv_error(KV_ERR_TOOBIG, "store file %s: row key, qualifier or value too long",
                    w->path);
  if (c->type > KV_DELETE_FAMILY)
    return kv_error(KV_ERR_INVALID, "store file %s: bad cell type %u", w->path, c->type);
  int new_row = 1, new_qual = 1;
  if (w->have_prev) {
    kv_cell prev = {w->prev_row.p, (uint32_t)w->prev_row.len, w->prev_qual.p,
                    (uint32_t)w->prev_qual.len, w->prev_ts, w->prev_seq, w->prev_type,
                    NULL, 0};
    int rc = kv_bytes_cmp(prev.row, prev.row_len, c->row, c->row_len);
    new_row = rc != 0;
    if (!new_row) {
      new_qual = kv_bytes_cmp(prev.qual, prev.qual_len, c->qual, c->qual_len) != 0;
      rc = kv_cell_cmp(&prev, c);
    }
    if (rc >= 0)
      return kv_error(KV_ERR_INVALID, "store file %s: cell %llu is not after the previous "
                      "cell in cell order", w->path, (unsigned long long)w->props.cells);
  }
  if (new_row) {
    if (kv_sf_grow((void **)&w->hashes, &w->hashes_cap, w->nhashes + 1, sizeof *w->hashes))
      return kv_error(KV_ERR_NOMEM, "out of memory writing store file %s", w->path);
    w->hashes[w->nhashes++] = kv_bloom_hash(c->row, c->row_len);
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
  if (c->ts < w->props.min_ts) w->props.min_ts = c->ts;
  if (c->ts > w->props.max_ts) w->props.max_ts = c->ts;
  if (c->seq < w->props.min_seq) w->props.min_seq = c->seq;
  if (c->seq > w->props.max_seq) w->props.max_seq = c->seq;
  if (w->b.est >= w->block_size) {
    rc = flush_block(w);
    if (rc) w->failed = rc;
    return rc;
  }
  return KV_OK;
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
  uint8_t *bloom = NULL;
  size_t bloom_len = 0;
  if (kv_bloom_build(w->hashes, w->nhashes, w->bloom_bits, &bloom, &bloom_len))
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
  kv_put_u32le(t + 8, KV_SF_FORMAT_VERSION);
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
  w->env->close(w->file);
  writer_free(w);
}
