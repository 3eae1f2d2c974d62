/*
** kv/sf/sf_seg.c: store file segments (kv/sf/sf_seg.h), the bulk load's blocks encoded ahead:
** a segment writer keeps its framed blocks, their index entries and its rows' bloom hashes
** in memory (or paged out to a file) instead of appending them to a store file; a file
** writer appends a segment's blocks whole (kv_sf_writer_add_seg_blocks), framing them again
** only when the segment's sequence number is not the one asked for, and feeds their rows'
** hashes to its filter block by block, so the file is the same byte for byte as one written
** cell by cell. Segment cursors read a segment's blocks back for the commit's merge.
**
** Not here: the writer itself (kv/sf/sf_write.c), where segments are kept and paged
** (kv/bulk).
*/
#include <stdio.h>
#include "kv/util/coding.h"
#include "kv/sf/sf_write_int.h"
#include "kv/util/status.h"

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
    kv_sfw_free(w);
    return kv_error(KV_ERR_INVALID, "store file segment: unknown compression %d",
                    opts->compression);
  }
  w->bloom_bits = opts && opts->bloom_bits_per_key && opts->bloom_bits_per_key != KV_SF_NO_BLOOM
                      ? opts->bloom_bits_per_key : 10; /* a segment keeps its hashes */
  kv_sfb_init(&w->b);
  w->props.format_version = KV_SF_FORMAT_VERSION_DEC;
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
                     : kv_sfw_flush_block(w);
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
    s->props.format_version = kv_sfw_version(w, false);
    s->seq = w->prev_seq;
    *out = s;
    w->seg = NULL;
  }
  kv_sfw_free(w);
  return rc;
}

uint64_t kv_sf_seg_cells(const kv_sf_seg *s) { return s ? s->props.cells : 0; }
uint64_t kv_sf_seg_seq(const kv_sf_seg *s) { return s ? s->seq : 0; }

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
    int rc = kv_sfw_seg_put(t, frame, frame_len, &o->off);
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

/* Note the row hashes [h0, h1) of blocks [from, to) of s, block by block: each block that
** starts a new row (the first one always: its row is new in w) is a boundary of w's filter
** before its rows' hashes. Paged out, they are read back (the file holds them in host
** order) a chunk at a time. */
static int note_seg_hashes(kv_sf_writer *w, const kv_sf_seg *s, size_t from, size_t to,
                           size_t h0, size_t h1) {
  uint64_t chunk[4096];
  size_t c0 = h0, cn = 0; /* chunk holds hashes [c0, c0 + cn) */
  size_t at = h0;
  int rc = KV_OK;
  for (size_t i = from; i < to && rc == KV_OK; i++) {
    const seg_block *e = &s->blocks[i];
    bool cont = i > from && e->cont;
    if (!cont) rc = kv_sfw_note_block_row(w, s->keys.p + e->key_off, e->row_len);
    if (rc == KV_OK && !w->seg) rc = kv_sfw_maybe_spill(w); /* closed partitions */
    size_t end = (size_t)e->hash_first + e->nrows; /* the next block's first, or h1 */
    if (end > h1 || end < at)
      rc = kv_error(KV_ERR_CORRUPT, "store file segment: damaged row hashes");
    while (rc == KV_OK && at < end) {
      if (s->hashes) {
        rc = kv_sfw_note_hashes(w, s->hashes + at, end - at);
        at = end;
        break;
      }
      if (at >= c0 + cn) {
        size_t n = h1 - at < 4096 ? h1 - at : 4096, want = n * sizeof *chunk, got = 0;
        rc = s->env->read(s->file, s->hash_off + at * sizeof *chunk, chunk, want, &got);
        if (rc == KV_OK && got != want)
          rc = kv_error(KV_ERR_CORRUPT, "store file segment: row hashes cut short in its spill "
                        "file");
        c0 = at;
        cn = n;
        if (rc) break;
      }
      size_t n = (end < c0 + cn ? end : c0 + cn) - at;
      rc = kv_sfw_note_hashes(w, chunk + (at - c0), n);
      at += n;
    }
  }
  return rc;
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
  int rc = kv_sfw_flush_block(w);
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
    if (rc == KV_OK && !w->seg) rc = kv_sfw_maybe_spill(w); /* its index entry */
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
  rc = note_seg_hashes(w, s, from, to, h0, h1);
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
  return w->seg ? KV_OK : kv_sfw_maybe_spill(w);
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
