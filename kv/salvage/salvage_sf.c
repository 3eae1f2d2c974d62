/*
** kv/salvage/salvage_sf.c: the readable cells of one store file that may be damaged
** (kv_salvage_sf_copy, kv/salvage/salvage_int.h), for the salvage of a store (kv/salvage/salvage.c).
**
** The file is opened with kv_sf_open_salvage, which keeps going past a damaged trailer,
** bloom filter or block index. With a block index, each block it lists is read at its
** offset, checked (framing, checksum, decoding, its index entry's cell and row counts and
** first cell, cells in strictly increasing order after the last one copied) and copied
** whole, or skipped with a damage entry giving its offset, size, cells and rows. Without
** one, the blocks are found by their framing (docs/FORMAT.md Part 2, "Data block on disk":
** a 9-byte header giving the stored size, then the stored bytes and a checksum) from offset
** 0 to the end of the data (the bloom filter's offset from a trailer that checks, else the
** end of the file); after a frame that does not check, the walk goes on at the end its
** header gives when a frame checks there, else at the next offset where one does. The
** bytes skipped are one damage entry each; the cells lost are known only in all, from the
** trailer's count, and are given on the entry that says why the blocks were walked.
**
** What it does not: decide which files to read, or write anything but cells to the writer
** it is given (kv/salvage/salvage.c does both).
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "kv/util/coding.h"
#include "kv/salvage/salvage_int.h"
#include "kv/sf/sf_int.h"
#include "kv/util/status.h"

#define WINDOW (4u << 20) /* bytes read at once while walking frames */

/* The state of one file's copy. */
typedef struct sfc {
  kv_env *env;             /* file system */
  const char *path;        /* the file */
  kv_sf_reader *r;         /* its reader */
  kv_sf_writer *w;         /* where the cells go */
  kv_salvage_report *rep;  /* the report */
  kv_salvage_sf_result *res; /* the result */
  kv_sfbuf disk;           /* one framed block (index mode) */
  kv_sfbuf scratch;        /* its raw bytes when compressed */
  kv_sf_dblock d;          /* the decoded block */
  uint8_t *last;           /* the last cell copied: row, then qualifier (malloc'ed) */
  size_t last_cap;         /* bytes allocated at last */
  kv_cell last_cell;       /* its key fields (row and qual point into last) */
  bool have_last;          /* a cell was copied */
  uint64_t rows;           /* distinct rows copied (a row split by a block counted once) */
  uint8_t *win;            /* frame walk: a window of the file */
  uint64_t win_off;        /* its file offset */
  size_t win_len, win_cap; /* its valid bytes, allocated bytes */
} sfc;

/* Keep a copy of cell c's key as the last cell copied. */
static int keep_last(sfc *s, const kv_cell *c) {
  size_t need = (size_t)c->row_len + c->qual_len;
  if (need > s->last_cap) {
    uint8_t *n = realloc(s->last, need);
    if (!n) return kv_error(KV_ERR_NOMEM, "salvage: out of memory");
    s->last = n;
    s->last_cap = need;
  }
  memcpy(s->last, c->row, c->row_len);
  memcpy(s->last + c->row_len, c->qual, c->qual_len);
  s->last_cell = *c;
  s->last_cell.row = s->last;
  s->last_cell.qual = s->last + c->row_len;
  s->last_cell.value = NULL;
  s->last_cell.value_len = 0;
  s->have_last = true;
  return KV_OK;
}

/* Decode raw block bytes and check them (against the index entry e when given): NULL, or
** the reason the block cannot be used. */
static const char *decode_check(sfc *s, const uint8_t *raw, size_t raw_len,
                                const kv_sf_index_entry *e) {
  const char *why = NULL;
  if (kv_sf_block_decode(&s->d, raw, raw_len, &why) != KV_OK) return why ? why : "does not decode";
  if (e) {
    if (s->d.nrows != e->rows || s->d.ncells != e->cells)
      return "row or cell count disagrees with the block index";
    kv_cell first, want;
    kv_sf_dblock_cell(&s->d, 0, 0, &first);
    kv_sf_cell_at(s->r, e->key, e->row_len, &want);
    if (kv_cell_cmp(&first, &want) != 0) return "first cell disagrees with the block index";
  }
  kv_cell prev = s->last_cell, c;
  bool have = s->have_last;
  for (uint32_t ri = 0; ri < s->d.nrows; ri++)
    for (uint32_t ci = s->d.row_first[ri]; ci < s->d.row_first[ri + 1]; ci++) {
      kv_sf_dblock_cell(&s->d, ri, ci, &c);
      if (c.type > KV_DELETE_FAMILY) return "bad cell type";
      if (have && kv_cell_cmp(&prev, &c) >= 0) return "cells out of order";
      prev = c;
      have = true;
    }
  return NULL;
}

/* Hand the decoded block's cells to the writer. */
static int emit(sfc *s) {
  kv_cell c;
  for (uint32_t ri = 0; ri < s->d.nrows; ri++) {
    for (uint32_t ci = s->d.row_first[ri]; ci < s->d.row_first[ri + 1]; ci++) {
      kv_sf_dblock_cell(&s->d, ri, ci, &c);
      if (ci == s->d.row_first[ri] &&
          (ri > 0 || !s->have_last ||
           kv_bytes_cmp(s->last_cell.row, s->last_cell.row_len, c.row, c.row_len)))
        s->rows++; /* rows within a block are distinct; the first may continue the last */
      int rc = kv_sf_writer_add(s->w, &c);
      if (rc) return rc;
      s->res->cells++;
      if (c.seq > s->res->max_seq) s->res->max_seq = c.seq;
      if (ci + 1 == s->d.row_first[ri + 1] && ri + 1 == s->d.nrows && (rc = keep_last(s, &c)))
        return rc;
    }
  }
  s->rep->cells_read += s->d.ncells;
  s->rep->blocks_read++;
  return KV_OK;
}

static int note_block(sfc *s, uint64_t off, uint64_t len, int64_t cells, int64_t rows,
                      const char *why) {
  s->res->damaged = true;
  return kv_salvage_note(s->rep, KV_SALVAGE_SF_BLOCK, s->path, off, len, cells, rows, "%s", why);
}

/* Copy the blocks the index lists. */
static int by_index(sfc *s) {
  for (uint32_t i = 0; i < s->r->nblocks; i++) {
    const kv_sf_index_entry e_v = kv_sf_entry(s->r, i), *e = &e_v;
    const char *why = NULL;
    if (kv_sfbuf_reserve(&s->disk, e->size)) return kv_error(KV_ERR_NOMEM, "salvage: out of memory");
    int rc = kv_sf_read_at(s->r, e->off, s->disk.p, e->size);
    const uint8_t *raw = NULL;
    size_t raw_len = 0;
    if (rc == KV_OK)
      rc = kv_sf_unframe_block(s->disk.p, e->size, e->raw, &s->scratch, &raw, &raw_len, s->path,
                               e->off);
    if (rc == KV_ERR_NOMEM) return rc;
    if (rc != KV_OK) why = kv_errmsg();
    char msg[320];
    if (why) snprintf(msg, sizeof msg, "%s", why);
    else if ((why = decode_check(s, raw, raw_len, e)) != NULL)
      snprintf(msg, sizeof msg, "block at offset %llu: %s", (unsigned long long)e->off, why);
    if (why) {
      s->rep->blocks_lost++;
      if ((rc = note_block(s, e->off, e->size, e->cells, e->rows, msg))) return rc;
      continue;
    }
    if ((rc = emit(s))) return rc;
  }
  return KV_OK;
}

/* Point *p at n bytes at offset off of the file (through the window). */
static int fetch(sfc *s, uint64_t off, size_t n, const uint8_t **p) {
  if (off >= s->win_off && off + n <= s->win_off + s->win_len) {
    *p = s->win + (off - s->win_off);
    return KV_OK;
  }
  size_t want = n > WINDOW ? n : WINDOW;
  uint64_t size = s->r->props.file_size;
  if (off > size) return KV_ERR_CORRUPT;
  if (want > size - off) want = (size_t)(size - off);
  if (want < n) return KV_ERR_CORRUPT;
  if (want > s->win_cap) {
    uint8_t *nw = realloc(s->win, want);
    if (!nw) return kv_error(KV_ERR_NOMEM, "salvage: out of memory");
    s->win = nw;
    s->win_cap = want;
  }
  s->win_len = 0;
  int rc = kv_sf_read_at(s->r, off, s->win, want);
  if (rc) return rc;
  s->win_off = off;
  s->win_len = want;
  *p = s->win;
  return KV_OK;
}

/* Does a frame whose header is plausible and whose checksum matches start at off (below
** end)? Its length in *len. */
static bool frame_at(sfc *s, uint64_t off, uint64_t end, size_t *len) {
  const uint8_t *h = NULL; /* fetch sets it when it succeeds */
  if (end - off < KV_SF_BLOCK_OVERHEAD || fetch(s, off, KV_SF_BLOCK_HEADER, &h) != KV_OK)
    return false;
  uint32_t raw = kv_get_u32le(h + 1), stored = kv_get_u32le(h + 5);
  if (h[0] > KV_SF_STORED_SECTIONS || raw == 0 || raw > KV_SF_MAX_RAW_BLOCK || stored == 0 ||
      (h[0] == KV_SF_STORED_RAW && stored != raw) || stored > end - off - KV_SF_BLOCK_OVERHEAD)
    return false;
  size_t n = KV_SF_BLOCK_OVERHEAD + (size_t)stored;
  if (fetch(s, off, n, &h) != KV_OK) return false;
  if (XXH3_64bits(h, KV_SF_BLOCK_HEADER + stored) != kv_get_u64le(h + KV_SF_BLOCK_HEADER + stored))
    return false;
  *len = n;
  return true;
}

/* Copy the blocks found by their framing in [0, end). */
static int by_framing(sfc *s, uint64_t end) {
  uint64_t off = 0;
  while (off < end) {
    size_t len = 0;
    const char *why = "no block starts here (bad header or checksum)";
    char msg[320];
    if (frame_at(s, off, end, &len)) {
      const uint8_t *h = NULL, *raw = NULL;
      size_t raw_len = 0;
      int rc = fetch(s, off, len, &h);
      if (rc == KV_OK)
        rc = kv_sf_unframe_block(h, len, kv_get_u32le(h + 1), &s->scratch, &raw, &raw_len,
                                 s->path, off);
      if (rc == KV_ERR_NOMEM) return rc;
      if (rc != KV_OK) {
        snprintf(msg, sizeof msg, "%s", kv_errmsg());
        why = msg;
      } else if ((why = decode_check(s, raw, raw_len, NULL)) == NULL) {
        if ((rc = emit(s))) return rc;
        off += len;
        continue;
      }
    }
    /* Skip to the end the header gives, when a frame (or the end) is there, else to the
    ** next offset where a frame checks. */
    uint64_t next = off + 1;
    const uint8_t *h;
    size_t l2;
    if (end - off >= KV_SF_BLOCK_OVERHEAD && fetch(s, off, KV_SF_BLOCK_HEADER, &h) == KV_OK) {
      uint64_t hop = off + KV_SF_BLOCK_OVERHEAD + (uint64_t)kv_get_u32le(h + 5);
      if (hop <= end && (hop == end || frame_at(s, hop, end, &l2))) next = hop;
    }
    if (next == off + 1)
      while (next < end && !frame_at(s, next, end, &l2)) next++;
    int rc = note_block(s, off, next - off, -1, -1, why);
    if (rc) return rc;
    off = next;
  }
  return KV_OK;
}

int kv_salvage_sf_copy(kv_env *env, const char *path, kv_sf_writer *w, kv_salvage_report *rep,
                       kv_salvage_sf_result *res) {
  memset(res, 0, sizeof *res);
  sfc s;
  memset(&s, 0, sizeof s);
  s.env = env;
  s.path = path;
  s.w = w;
  s.rep = rep;
  s.res = res;
  kv_sf_salvage_info info;
  int rc = kv_sf_open_salvage(env, path, &s.r, &info);
  if (rc == KV_ERR_NOMEM) return rc;
  if (rc != KV_OK) {
    res->damaged = true;
    return kv_salvage_note(rep, KV_SALVAGE_SF_MISSING, path, 0, 0, -1, -1,
                           "cannot be opened: %s", kv_errmsg());
  }
  rep->files_read++;
  if (!info.trailer_ok)
    rc = kv_salvage_note(rep, KV_SALVAGE_SF_TRAILER, path, info.file_size > KV_SF_TRAILER_SIZE
                         ? info.file_size - KV_SF_TRAILER_SIZE : 0, KV_SF_TRAILER_SIZE, -1, -1,
                         "%s; blocks found by their framing", info.trailer_why);
  if (rc == KV_OK && info.trailer_ok && !info.bloom_ok)
    rc = kv_salvage_note(rep, KV_SALVAGE_SF_BLOOM, path, info.data_end, 0, 0, 0,
                         "%s (nothing lost: the new file gets a new filter)", info.bloom_why);
  if (info.trailer_ok && !(info.bloom_ok && info.index_ok)) res->damaged = true;
  if (!info.trailer_ok) res->damaged = true;
  if (rc == KV_OK) rc = info.index_ok ? by_index(&s) : by_framing(&s, info.data_end);
  if (rc == KV_OK && info.trailer_ok && !info.index_ok) {
    /* The trailer's counts tell what the walk missed in all. */
    const kv_sf_props *p = kv_sf_get_props(s.r);
    int64_t lost = p->cells > res->cells ? (int64_t)(p->cells - res->cells) : 0;
    int64_t rows = p->rows > s.rows ? (int64_t)(p->rows - s.rows) : 0;
    rc = kv_salvage_note(rep, KV_SALVAGE_SF_INDEX, path, info.data_end + 0, 0, lost, rows,
                         "%s; blocks found by their framing (%lld of the trailer's %llu cells "
                         "not read)", info.index_why, (long long)lost,
                         (unsigned long long)p->cells);
  }
  if (info.trailer_ok && kv_sf_get_props(s.r)->max_seq > res->max_seq)
    res->max_seq = kv_sf_get_props(s.r)->max_seq;
  if (res->damaged) rep->files_damaged++;
  kv_sf_close(s.r);
  kv_sfbuf_free(&s.disk);
  kv_sfbuf_free(&s.scratch);
  kv_sf_dblock_free(&s.d);
  free(s.last);
  free(s.win);
  return rc;
}
