/*
** kv/sf/sf_write.c: the store file writer (kv/sf/sf.h). Cells arrive in kv_cell_cmp order and are
** staged in a block builder (kv/sf/sf_block.c); when the staged block has reached the target
** size at a row's end (row_cut: inside a row only at twice that), it is encoded, framed (lz4
** + XXH3-64) and appended, and its block index entry is noted.
** kv_sf_writer_finish() appends the bloom filter on row keys, the block index and the fixed
** trailer, then syncs and closes the file. Layout: docs/FORMAT.md Part 2. The filter is
** built in partitions as rows come (kv/sf/sf_filter.h), each closed at a block boundary
** once it holds about 4 KiB of bits' keys, so a large file's writer holds its filter's bits
** (1.25 bytes a row), not 8 bytes of hash a row; a file with one partition gets the single
** filter of format versions 2 and 3.
**
** A row's cells may also come at once (kv_sf_writer_add_row, the bulk load's common case):
** checked first, then staged with one row key comparison and one bloom hash; the bytes are
** those of adding them one by one, which is what a row breaking any rule gets.
**
** The writer does not rename or register the file: flush and compaction write it under a
** temporary name, then rename it and name it in the MANIFEST. One writer per thread.
**
** Segments (kv/sf/sf_seg.h, kv/sf/sf_seg.c): a writer opened by kv_sf_seg_open keeps its
** framed blocks, their index entries and its rows' bloom hashes in memory instead of
** appending to a file; a file writer appends such a segment whole (kv_sf_writer_add_seg).
** A file writer's output for the cells it is given one by one is the same byte for byte in
** both cases.
*/
#include <stdio.h>
#include <xxhash.h>
#include "kv/util/bloom.h"
#include "kv/util/coding.h"
#include "kv/sf/sf_write_int.h"
#include "kv/util/status.h"

/* The file's format version: 4 when its filter is partitioned, else 3 when a block may hold
** a decimal-scaled value group, else 2. */
uint32_t kv_sfw_version(const kv_sf_writer *w, bool partitioned) {
  return partitioned                 ? KV_SF_FORMAT_VERSION_PART
         : w->dec || w->b.used_dec ? KV_SF_FORMAT_VERSION_DEC
                                     : KV_SF_FORMAT_VERSION_NODEC;
}

void kv_sfw_free(kv_sf_writer *w) {
  kv_sfb_free(&w->b);
  kv_sfbuf_free(&w->frame);
  free(w->cuts);
  kv_sfbuf_free(&w->index);
  kv_sfbuf_free(&w->prev_row);
  kv_sfbuf_free(&w->prev_qual);
  free(w->hashes);
  kv_sf_fbuild_free(&w->fb);
  if (w->spill) {
    w->env->close(w->spill);
    w->env->remove(w->env, w->spill_path);
  }
  free(w->spill_path);
  free(w->chunks);
  free(w->path);
  kv_sf_seg_free(w->seg);
  free(w);
}

/* Move b's bytes (block index entries, or closed filter partitions) to the end of w's
** spill file, opened at the first call, and empty b. */
static int spill_out(kv_sf_writer *w, kv_sfbuf *b, bool filter) {
  int rc = KV_OK;
  if (!w->spill) {
    size_t n = strlen(w->path) + sizeof ".spill";
    if (!(w->spill_path = malloc(n)))
      return kv_error(KV_ERR_NOMEM, "out of memory writing store file %s", w->path);
    snprintf(w->spill_path, n, "%s.spill", w->path);
    if ((rc = w->env->open(w->env, w->spill_path, KV_OPEN_WRITE | KV_OPEN_TRUNCATE, &w->spill))) {
      w->spill = NULL;
      return rc;
    }
  }
  if (kv_sf_grow((void **)&w->chunks, &w->cap_chunks, w->n_chunks + 1, sizeof *w->chunks))
    return kv_error(KV_ERR_NOMEM, "out of memory writing store file %s", w->path);
  if ((rc = w->env->append(w->spill, b->p, b->len))) return rc;
  w->chunks[w->n_chunks++] = (kv_sf_spill_chunk){w->spill_len, b->len, filter};
  w->spill_len += b->len;
  b->len = 0;
  return KV_OK;
}

/* After a block is added: spill the index entries or filter partitions w holds past its
** bound (a file writer's; a failure is sticky). */
int kv_sfw_maybe_spill(kv_sf_writer *w) {
  int rc = KV_OK;
  if (w->index.len >= w->spill_at) rc = spill_out(w, &w->index, false);
  if (rc == KV_OK && w->fb.parts.len >= w->spill_at) rc = spill_out(w, &w->fb.parts, true);
  if (rc) w->failed = rc;
  return rc;
}

/* Append the spilled chunks of one kind to the file, in order, through `st` (the section's
** checksum), a piece at a time. */
static int unspill(kv_sf_writer *w, bool filter, XXH3_state_t *st) {
  uint8_t *buf = NULL;
  int rc = KV_OK;
  for (size_t i = 0; i < w->n_chunks && rc == KV_OK; i++) {
    const kv_sf_spill_chunk *c = &w->chunks[i];
    if (c->filter != filter) continue;
    if (!buf && !(buf = malloc(1u << 20)))
      return kv_error(KV_ERR_NOMEM, "out of memory writing store file %s", w->path);
    for (uint64_t at = 0; at < c->len && rc == KV_OK;) {
      size_t n = c->len - at < (1u << 20) ? (size_t)(c->len - at) : (1u << 20), got = 0;
      rc = w->env->read(w->spill, c->off + at, buf, n, &got);
      if (rc == KV_OK && got != n)
        rc = kv_error(KV_ERR_IO, "store file %s: its spill file %s cut short", w->path,
                      w->spill_path);
      if (rc == KV_OK) rc = w->env->append(w->file, buf, n);
      if (rc == KV_OK) XXH3_64bits_update(st, buf, n);
      at += n;
    }
  }
  free(buf);
  return rc;
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
    kv_sfw_free(w);
    return kv_error(KV_ERR_INVALID, "store file %s: unknown compression %d", path,
                    opts->compression);
  }
  w->bloom_bits = opts && opts->bloom_bits_per_key ? opts->bloom_bits_per_key : 10;
  w->no_bloom = w->bloom_bits == KV_SF_NO_BLOOM;
  if (w->no_bloom) w->bloom_bits = 1; /* the empty filter's k */
  kv_sf_fbuild_init(&w->fb, w->bloom_bits);
  w->spill_at = opts && opts->spill_bytes ? opts->spill_bytes : 1u << 20;
  kv_sfb_init(&w->b);
  w->props.format_version = KV_SF_FORMAT_VERSION_DEC;
  w->props.min_seq = UINT64_MAX;
  w->props.min_ts = INT64_MAX;
  w->props.max_ts = INT64_MIN;
  int rc = env->open(env, path, KV_OPEN_WRITE | KV_OPEN_TRUNCATE, &w->file);
  if (rc) {
    kv_sfw_free(w);
    return rc;
  }
  *out = w;
  return KV_OK;
}

/* Put one frame at the end of segment t's blocks (in memory, or appended to its file);
** *off gets its offset among them. */
int kv_sfw_seg_put(kv_sf_seg *t, const uint8_t *frame, size_t len, uint64_t *off) {
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

/* Segment mode: keep the framed block (w->frame) and its index entry in w->seg. */
static int seg_flush_block(kv_sf_writer *w, const kv_cell *first) {
  kv_sf_seg *s = w->seg;
  kv_sfb_builder *b = &w->b;
  if (s->keys.len + first->row_len + first->qual_len + w->prev_row.len + w->prev_qual.len >
          UINT32_MAX ||
      kv_sf_grow((void **)&s->blocks, &s->cap_blocks, s->nblocks + 1, sizeof *s->blocks))
    return kv_error(KV_ERR_NOMEM, "out of memory encoding a store file segment");
  seg_block *e = &s->blocks[s->nblocks];
  int rc = kv_sfw_seg_put(s, w->frame.p, w->frame.len, &e->off);
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
int kv_sfw_flush_block(kv_sf_writer *w) {
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
  return kv_sfw_maybe_spill(w);
}

/* Note n row hashes: a segment keeps them (w->hashes), a file writer's filter takes them. */
int kv_sfw_note_hashes(kv_sf_writer *w, const uint64_t *h, size_t n) {
  if (w->no_bloom) {
    w->nhashes += n;
    return KV_OK;
  }
  if (!w->seg ? kv_sf_fbuild_add(&w->fb, h, n) != KV_OK
              : kv_sf_grow((void **)&w->hashes, &w->hashes_cap, w->nhashes + n,
                           sizeof *w->hashes) != KV_OK)
    return kv_error(KV_ERR_NOMEM, "out of memory writing store file %s", w->path);
  if (w->seg) memcpy(w->hashes + w->nhashes, h, n * sizeof *h);
  w->nhashes += n;
  return KV_OK;
}

/* A block of a file writer starts with the first cell of row [row, row+len): where its
** filter may close a partition (kv_sf_fbuild_boundary). Segments have no filter. */
int kv_sfw_note_block_row(kv_sf_writer *w, const uint8_t *row, uint32_t len) {
  if (w->seg || w->no_bloom || kv_sf_fbuild_boundary(&w->fb, row, len) == KV_OK) return KV_OK;
  return kv_error(KV_ERR_NOMEM, "out of memory writing store file %s", w->path);
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
    int frc = kv_sfw_flush_block(w);
    if (frc) {
      w->failed = frc;
      return frc;
    }
  }
  if (new_row) {
    uint64_t h = w->no_bloom ? 0 : kv_bloom_hash(c->row, c->row_len);
    int hrc = w->b.ncells ? KV_OK : kv_sfw_note_block_row(w, c->row, c->row_len);
    if (hrc == KV_OK) hrc = kv_sfw_note_hashes(w, &h, 1);
    if (hrc) { /* the filter may hold part of the row's notes: sticky */
      w->failed = hrc;
      return hrc;
    }
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
    rc = kv_sfw_flush_block(w);
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
  if (w->b.est >= w->block_size && (rc = kv_sfw_flush_block(w)) != KV_OK) { /* full: ends before */
    w->failed = rc;
    return rc;
  }
  uint64_t h = w->no_bloom ? 0 : kv_bloom_hash(c[0].row, c[0].row_len);
  if (w->b.ncells == 0) rc = kv_sfw_note_block_row(w, c[0].row, c[0].row_len);
  if (rc == KV_OK) rc = kv_sfw_note_hashes(w, &h, 1);
  if (rc) {
    w->failed = rc;
    return rc;
  }
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
      if ((rc = set_prev(w, x)) != KV_OK || (rc = kv_sfw_flush_block(w)) != KV_OK) {
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
  int rc = kv_sfw_flush_block(w);
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
  if (rc == KV_OK && new_row) rc = kv_sfw_note_block_row(w, c->row, c->row_len);
  if (rc == KV_OK && f->nrows > skip) rc = kv_sfw_note_hashes(w, f->hashes + skip, f->nrows - skip);
  w->props.rows += f->nrows - skip;
  w->prev_row.len = 0;
  if (rc == KV_OK && kv_sfbuf_append(&w->prev_row, l->row, l->row_len))
    rc = kv_error(KV_ERR_NOMEM, "out of memory writing store file %s", w->path);
  if (rc == KV_OK) rc = set_prev(w, l);
  w->have_prev = 1;
  if (rc) w->failed = rc; /* the file holds the block: the index must too */
  return rc ? rc : kv_sfw_maybe_spill(w);
}

void kv_sf_writer_widen(kv_sf_writer *w, const kv_sf_props *p) {
  if (!p->cells) return;
  if (p->min_ts < w->props.min_ts) w->props.min_ts = p->min_ts;
  if (p->max_ts > w->props.max_ts) w->props.max_ts = p->max_ts;
  if (p->min_seq < w->props.min_seq) w->props.min_seq = p->min_seq;
  if (p->max_seq > w->props.max_seq) w->props.max_seq = p->max_seq;
}

/* Append a section: head, then the spilled chunks of its kind (filter partitions or block
** index entries), then mid and tail; return its offset, size and checksum. */
static int write_section(kv_sf_writer *w, const uint8_t *head, size_t head_len, bool filter,
                         const uint8_t *mid, size_t mid_len, const uint8_t *tail,
                         size_t tail_len, uint64_t *off, uint64_t *size, uint64_t *sum) {
  XXH3_state_t *st = XXH3_createState();
  if (!st) return kv_error(KV_ERR_NOMEM, "out of memory writing store file %s", w->path);
  XXH3_64bits_reset(st);
  uint64_t start = w->offset, spilled = 0;
  for (size_t i = 0; i < w->n_chunks; i++)
    if (w->chunks[i].filter == filter) spilled += w->chunks[i].len;
  int rc = head_len ? w->env->append(w->file, head, head_len) : KV_OK;
  XXH3_64bits_update(st, head, head_len);
  if (rc == KV_OK) rc = unspill(w, filter, st);
  if (rc == KV_OK && mid_len) rc = w->env->append(w->file, mid, mid_len);
  XXH3_64bits_update(st, mid, mid_len);
  if (rc == KV_OK && tail_len) rc = w->env->append(w->file, tail, tail_len);
  XXH3_64bits_update(st, tail, tail_len);
  *off = start;
  *size = head_len + spilled + mid_len + tail_len;
  *sum = XXH3_64bits_digest(st);
  XXH3_freeState(st);
  if (rc == KV_OK) w->offset += *size;
  return rc;
}

static int finish(kv_sf_writer *w) {
  int rc = kv_sfw_flush_block(w);
  if (rc) return rc;
  kv_sf_props *pr = &w->props;
  if (pr->cells == 0) { pr->min_seq = pr->max_seq = 0; pr->min_ts = pr->max_ts = 0; }
  /* Bloom filter: a single one (empty without a filter), or the partitions, then their
     index and its length (one section, one checksum) */
  uint8_t *bloom = NULL, *tail = NULL;
  size_t bloom_len = 0, tail_len = 0;
  if (w->no_bloom ? kv_bloom_build(NULL, 0, w->bloom_bits, &bloom, &bloom_len)
                  : kv_sf_fbuild_finish(&w->fb, &bloom, &bloom_len, &tail, &tail_len))
    return kv_error(KV_ERR_NOMEM, "out of memory writing store file %s", w->path);
  bool parted = tail != NULL;
  uint64_t bloom_off, bloom_size, bloom_sum;
  if (!parted) rc = write_section(w, NULL, 0, true, bloom, bloom_len, NULL, 0, &bloom_off,
                                  &bloom_size, &bloom_sum);
  else rc = write_section(w, NULL, 0, true, w->fb.parts.p, w->fb.parts.len, tail, tail_len,
                          &bloom_off, &bloom_size, &bloom_sum);
  free(bloom);
  free(tail);
  kv_sf_fbuild_free(&w->fb);
  if (rc) return rc;
  /* Block index: count, entries (spilled ones first), last row key. */
  uint8_t head[10];
  size_t head_len = (size_t)(kv_put_varint(head, pr->blocks) - head);
  kv_sfbuf last = {0};
  if (kv_sfbuf_varint(&last, w->prev_row.len) ||
      kv_sfbuf_append(&last, w->prev_row.p, w->prev_row.len)) {
    kv_sfbuf_free(&last);
    return kv_error(KV_ERR_NOMEM, "out of memory writing store file %s", w->path);
  }
  uint64_t index_off, index_size, index_sum;
  rc = write_section(w, head, head_len, false, w->index.p, w->index.len, last.p, last.len,
                     &index_off, &index_size, &index_sum);
  kv_sfbuf_free(&last);
  if (rc) return rc;
  /* Trailer. */
  uint8_t t[KV_SF_TRAILER_SIZE];
  kv_put_u64le(t + 0, KV_SF_MAGIC);
  pr->format_version = kv_sfw_version(w, parted);
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
    kv_sfw_free(w);
    return kv_error(KV_MISUSE, "kv_sf_writer_finish: a segment writer (kv_sf_seg_finish)");
  }
  int rc = w->failed ? kv_error(w->failed, "store file %s: writer failed earlier", w->path)
                     : finish(w);
  int crc = w->env->close(w->file);
  if (!rc) rc = crc;
  if (!rc && props) *props = w->props;
  kv_sfw_free(w);
  return rc;
}

void kv_sf_writer_abort(kv_sf_writer *w) {
  if (!w) return;
  if (w->file) w->env->close(w->file);
  kv_sfw_free(w);
}

