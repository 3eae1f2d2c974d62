/*
** kv/sf/sf_iter.c: the store file iterator (kv_sf_iter_new in kv/sf/sf.h), a kv_iter over the cells of
** one file. It holds one block at a time in the compact decoded form of kv/sf/sf_cblock.h: the block
** is read (one pread, or in place from the file's mapping), checked and decompressed
** (kv_sf_unframe_block), then decoded (kv_sf_cblock_decode) into the iterator's reusable decoder. A
** seek binary-searches the block index, then the rows of the block (row keys of one length: the
** block's common prefix is compared once, then only the suffixes), then the cells of the row (a
** seek to a row's start needs no cell search). A cell's fields are read from the block's packed
** arrays when the iterator lands on it; its value is located by its rank in its value group (kept
** up to date as the iterator steps): a fixed-width value of a private block is gathered from the
** transposed bytes into the iterator's buffer, unless its group is decimal-scaled (rebuilt value
** by value at decode: it is read where it lies). The row key of a block with keys of one length
** is rebuilt once per row. Nothing is allocated per cell.
**
** Errors are sticky: once a block fails to read or decode, the iterator is invalid and
** status() returns the error (KV_ERR_CORRUPT naming the file and offset, or the env's I/O
** error) until it is destroyed.
**
** Block cache: when the reader has one (kv_sf_set_cache), load_block first looks the block
** up by (file number, block index: consecutive indexes go round the cache's shards); a hit
** makes no read and no decode, and the iterator reads the cached compact block while it
** holds the entry's reference. A miss reads, checks and decodes the block privately and, once
** it passed every check, inserts a packed copy (one allocation: the arrays, the dictionary and
** the value bytes, not the rest of the raw block). Compaction reads (fill_cache false) never
** insert; another block is inserted only when it fits without evicting or was asked for twice
** lately (three times for a point read: kv_cache_admit; a point read does not evict a cached
** block for one it may never read again, and a full scan streaming through a full cache does
** not push out the hot set).
**
** Projection (kv_sf_iter_project): when a scan reads only some qualifiers of the family,
** each loaded block gets a keep flag per dictionary entry, and every move steps over the
** cells of other qualifiers (DeleteFamily tombstones are always kept) in a tight loop, so a
** scan of one column out of twelve does not pay a merge step and a visibility check for
** each of the other eleven; values of the cells stepped over are never located. A block
** such an iterator reads from the file that the cache does not take is, when stored in
** sections, decoded in part (proj_load, kv_sf_cblock_decode_part): only its cells and the
** value groups of the projected qualifiers and of the tombstones are inflated and decoded,
** the others left absent. Every move of a projected iterator lands on a kept cell, so no
** absent value is ever located; such a block is never packed into the cache, and a later
** reader without the projection (or with another: kv_sf_iter_project drops it) reads the
** block again.
**
** A point read (kv_sf_iter_seek_row with point) wants nothing past its row: the iterator is
** bounded there (stop_upper), so no move loads a block that starts above the row, and its
** seek starts in the block the row starts when the file's rows are whole (kv_sf_row_block).
**
** Rows taken whole (kv/sf/sf_rows.h) are kv/sf/sf_iter_rows.c's and the projection's keep
** flags (with the memo that carries them from block to block) kv/sf/sf_iter_proj.c's, on the
** iterator state of kv/sf/sf_iter_int.h; the row seek (kv_sf_iter_seek_row) is at the end of
** this file.
*/
#include <assert.h>
#include <stdio.h>
#include "kv/sf/sf_iter_int.h"
#include "kv/util/trace.h"

/* Let go of the cached block the iterator reads (b falls back to the private one). */
static void drop_current(sf_iter *it) {
  if (it->ce) kv_cache_release(it->r->cache, it->ce);
  it->ce = NULL;
  it->b = &it->dec.b;
}

/* Fill *out with the key fields of cell ci of row ri, and its value when `value`. */
static void fill_cell(sf_iter *it, uint32_t ri, uint32_t ci, bool value, kv_cell *out) {
  const kv_sf_cblock *b = it->b;
  if (it->key_ri != (int64_t)ri) {
    if (b->klen && it->key_ri >= 0) { /* kbuf holds a key of this block: its prefix too */
      uint32_t w = b->klen - b->lcp;
      if (w) memcpy(it->kbuf + b->lcp, b->keys + (size_t)ri * w, w);
    } else {
      it->cur.row = kv_sf_cblock_key(b, ri, it->kbuf, &it->cur.row_len);
    }
    it->key_ri = ri;
  }
  out->row = it->cur.row;
  out->row_len = it->cur.row_len;
  uint32_t q = (uint32_t)kv_sf_pa_get(&b->qual, ci);
  out->qual = b->dict + b->q_off[q];
  out->qual_len = b->q_len[q];
  out->ts = kv_sf_cblock_ts(b, ri, ci);
  out->seq = kv_sf_pa_get(&b->seq, ci);
  out->type = (uint8_t)kv_sf_pa_get(&b->type, ci);
  out->value = (const uint8_t *)"";
  out->value_len = 0;
  if (!value) return;
  uint32_t gi = out->type == KV_PUT ? q : b->nquals;
  const kv_sf_cgroup *g = &b->groups[gi];
  assert(!g->absent); /* a block decoded in part: only the projection's cells are visited */
  /* the ranks are often at ci already (a row taken whole leaves them at the next row) */
  uint32_t rank = it->rp.at == ci ? it->rp.ranks[gi] : kv_sf_cblock_rank(b, &it->rp, ci);
  if (g->fixed) {
    uint32_t w = g->width, cnt = g->count;
    if (w && b->cvals) {
      out->value = b->cvals + it->rp.ranks[b->nquals + 1];
    } else if (w && !g->transposed) { /* value `rank` at data[rank * w] */
      out->value = g->data + (size_t)rank * w;
    } else if (w) {
      const uint8_t *src = g->data + rank;
      uint8_t *dst = it->vbuf.p;
      for (uint32_t j = 0; j < w; j++) dst[j] = src[(size_t)j * cnt];
      out->value = dst;
    }
    out->value_len = w;
  } else {
    uint64_t o = kv_sf_pa_get(&g->voff, rank);
    out->value = g->data + o;
    out->value_len = (uint32_t)(kv_sf_pa_get(&g->voff, rank + 1) - o);
  }
}

/* Check the first cell of the loaded block (the block's first row) against its index
** entry; the reason, or NULL when it agrees. */
static const char *check_first(sf_iter *it, const kv_sf_index_entry *e) {
  kv_cell first, want;
  fill_cell(it, 0, 0, false, &first);
  kv_sf_cell_at(it->r, e->key, e->row_len, &want);
  if (kv_cell_cmp(&first, &want) != 0) return "first cell disagrees with the block index";
  return NULL;
}

/* Check a decoded block against its index entry; the reason, or NULL when it agrees. */
static const char *check_block(sf_iter *it, const kv_sf_index_entry *e) {
  const kv_sf_cblock *b = it->b;
  if (b->ncells != e->cells || b->nrows != e->rows)
    return "cell or row count disagrees with the block index";
  return check_first(it, e);
}

/* Whether block e of the reader should go into the cache: it fits without evicting, or it
** was refused a short while ago (kv_cache_admit; its charge estimated from the index entry:
** seven eighths of the raw bytes, about what the compact form of the archive's blocks
** costs). Seeks and sequential reads alike: a full scan streaming through a full cache
** neither evicts the hot set nor pays for packing blocks it will not read again. `asks`:
** 2 for a read that decodes the block whole anyway; 3 for a point read, whose refusal
** decodes its row alone (5-6 us against 15-20 us to decode and pack the block whole): with
** 2, uniform point reads over a 3x archive (about 30,000 blocks for the ghost table's 512
** slots) had 6-10% of their misses admitted, and those whole decodes were the lookup's
** p99; a hot block is still admitted at its third read in a short while. */
static bool cache_has_room(const kv_sf_reader *r, uint32_t bi, unsigned asks) {
  const kv_sf_index_entry e_v = kv_sf_entry(r, bi), *e = &e_v;
  size_t est = (size_t)e->raw - (size_t)e->raw / 8 + (size_t)e->rows * 8;
  return kv_cache_admit(r->cache, r->cache_id, bi, est, asks);
}

/* Size the per-block buffers (ranks, key, value) for the block in it->b. */
static int prepare_block(sf_iter *it) {
  const kv_sf_cblock *b = it->b;
  it->vbuf.len = 0;
  if (kv_sfbuf_reserve(&it->vbuf, (size_t)b->max_width + 1)) return KV_ERR_NOMEM;
  if (kv_sf_grow((void **)&it->rp.ranks, &it->rp.cap, (size_t)b->nquals + 2,
                 sizeof *it->rp.ranks))
    return KV_ERR_NOMEM;
  if (kv_sf_grow((void **)&it->kbuf, &it->kbuf_cap, (size_t)b->max_key + 1, 1))
    return KV_ERR_NOMEM;
  it->rp.at = UINT32_MAX;
  it->key_ri = -1;
  return KV_OK;
}

/* Read cached block b (it->ce held; block bi): b itself, or widened into it->wide when
** narrow (kv_sf_cblock_widen). The PROMOTE_HITS-th widening of a block in a row by any
** reader (kv_sf_cblock_note_hit) replaces its cache entry with the wide copy: a block read that often (the newest rows of
** a series, read by every "latest" query) costs more widened each time than the room it
** saves. KV_OK or KV_ERR_NOMEM. */
#define PROMOTE_HITS 4u
static int take_cached(sf_iter *it, uint32_t bi, const kv_sf_cblock *b) {
  if (b->narrow) {
    const kv_sf_cblock *n = b;
    if (!(b = kv_sf_cblock_widen(n, &it->wide))) return KV_ERR_NOMEM;
    if (kv_sf_cblock_note_hit(n) == PROMOTE_HITS && it->fill_cache) {
      kv_sf_cblock *c = kv_sf_cblock_wide_copy(n, b);
      kv_cache_entry *ce = c ? kv_cache_insert(it->r->cache, it->r->cache_id, bi, c, c->charge,
                                               free) : NULL;
      if (ce) kv_cache_release(it->r->cache, ce);
      else free(c); /* no memory, or too big: it stays narrow */
    }
  }
  it->b = b;
  return KV_OK;
}

/* Make cached entry `hit` (block bi, a reference the caller hands over) the loaded block.
** Returns false (and sets the sticky status) when out of memory. */
static bool use_cached(sf_iter *it, uint32_t bi, kv_cache_entry *hit) {
  drop_current(it);
  it->bi = -1;
  it->partial = false;
  it->key_ri = -1;
  it->fast_bi = -1;
  it->ce = hit;
  if (it->io) {
    it->io->blocks_read++;
    it->io->blocks_cache_hit++;
    kv_trace_add_block(it->io->trace, it->io->trace_fid, it->r->cache_id, bi, true);
  }
  int rc = take_cached(it, bi, kv_cache_value(hit));
  if (!rc) rc = prepare_block(it);
  if (rc) {
    kv_error(rc, "out of memory reading store file %s", it->r->path);
    drop_current(it);
    it->status = rc;
    it->valid = false;
    return false;
  }
  it->bi = bi;
  return true;
}

/* Read block bi of the file, check and decompress it (kv_sf_unframe_block): *raw, *raw_len
** give the raw block (in it->scratch, it->disk or the mapping). `in_place`: a point or short
** range read's block, read in place when the file is mapped (no copy, no system call); a
** whole-block load (scans, compaction, the bulk merge) always preads, so streaming through a
** file never makes its pages part of the process's resident set. KV_OK or the error (its
** message set). */
static int read_block(sf_iter *it, uint32_t bi, bool in_place, const uint8_t **raw,
                      size_t *raw_len) {
  kv_sf_reader *r = it->r;
  const kv_sf_index_entry e_v = kv_sf_entry(r, bi), *e = &e_v;
  const uint8_t *disk = NULL;
  int rc = KV_OK;
  if (in_place && r->map) {
    rc = kv_sf_bytes_at(r, e->off, e->size, &disk);
  } else {
    it->disk.len = 0;
    if (kv_sfbuf_reserve(&it->disk, e->size))
      return kv_error(KV_ERR_NOMEM, "out of memory reading store file %s", r->path);
    rc = kv_sf_read_at(r, e->off, it->disk.p, e->size);
    disk = it->disk.p;
  }
  if (!rc && it->io) {
    it->io->blocks_read++;
    it->io->bytes_read += e->size;
    kv_trace_add_block(it->io->trace, it->io->trace_fid, r->cache_id, bi, false);
  }
  if (!rc)
    rc = kv_sf_unframe_block(disk, e->size, e->raw, &it->scratch, raw, raw_len, r->path,
                             e->off);
  if (!rc && it->io && disk[0] != KV_SF_STORED_RAW) it->io->bytes_inflated += e->raw;
  return rc;
}

/* After an error loading a block: the iterator is invalid, the error sticky. False. */
static bool fail_block(sf_iter *it, int rc) {
  drop_current(it);
  it->bi = -1;
  it->partial = false;
  it->status = rc;
  it->valid = false;
  return false;
}

/* Decode raw block bi whole into the iterator's decoder and make it the loaded block
** (it->b must be &it->dec.b: drop_current); with `insert` (the caller asked
** cache_has_room), insert a packed copy into the cache. With pt (raw unused, insert
** false), decode the sectioned block in part instead (kv_sf_cblock_decode_part). False
** (status set) on error. */
static bool decode_block(sf_iter *it, uint32_t bi, const uint8_t *raw, size_t raw_len,
                         bool insert, kv_sf_cpart *pt) {
  kv_sf_reader *r = it->r;
  const kv_sf_index_entry e_v = kv_sf_entry(r, bi), *e = &e_v;
  const char *why = NULL;
  int rc;
  if (pt) {
    rc = kv_sf_cblock_decode_part(&it->dec, pt, &why);
    if (it->io) it->io->bytes_inflated += pt->inflated;
  } else {
    rc = kv_sf_cblock_decode(&it->dec, raw, raw_len, &why);
  }
  if (!rc) rc = prepare_block(it);
  if (!rc && (why = check_block(it, e)) != NULL) rc = KV_ERR_CORRUPT;
  if (rc == KV_ERR_CORRUPT && why)
    kv_error(rc, "store file %s: block %u at offset %llu: %s", r->path, bi,
             (unsigned long long)e->off, why);
  if (rc) goto fail;
  if (it->io) it->io->cells_decoded += it->b->ncells;
  if (insert && !it->dec.b.part) {
    kv_sf_cblock *pk = kv_cache_data_over(r->cache) ? kv_sf_cblock_pack_narrow(&it->dec)
                                                    : kv_sf_cblock_pack(&it->dec);
    if (pk) {
      it->ce = kv_cache_insert(r->cache, r->cache_id, bi, pk, pk->charge, free);
      if (!it->ce) {
        free(pk); /* too big for the cache, or no memory: read it privately */
      } else if (take_cached(it, bi, pk)) { /* prepared: its sizes are the decoded block's */
        rc = KV_ERR_NOMEM;
        goto fail;
      }
    }
  }
  it->key_ri = -1;
  it->bi = bi;
  if (it->proj) it->keep_bi = -1;
  return true;
fail:
  if (rc == KV_ERR_NOMEM) kv_error(rc, "out of memory reading store file %s", r->path);
  return fail_block(it, rc);
}

/* kv_sf_cpart's want: the value groups of the projected qualifiers. */
static bool want_group(void *ctx, const uint8_t *qual, uint32_t len) {
  return kv_sfi_proj_keeps((const sf_iter *)ctx, qual, len);
}

/* A projected iterator's block bi that the cache does not take (it->b must be &it->dec.b):
** read and checked as read_block does; a sectioned block is decoded in part, only its
** cells and the value groups a projected move can reach inflated (the block is never
** packed: a whole reader of the block reads it again), any other decoded whole. False
** (status set) on error. */
static bool proj_load(sf_iter *it, uint32_t bi) {
  kv_sf_reader *r = it->r;
  const kv_sf_index_entry e_v = kv_sf_entry(r, bi), *e = &e_v;
  it->disk.len = 0;
  if (kv_sfbuf_reserve(&it->disk, e->size))
    return fail_block(it, kv_error(KV_ERR_NOMEM, "out of memory reading store file %s",
                                   r->path));
  int rc = kv_sf_read_at(r, e->off, it->disk.p, e->size);
  if (rc) return fail_block(it, rc);
  if (it->io) {
    it->io->blocks_read++;
    it->io->bytes_read += e->size;
    kv_trace_add_block(it->io->trace, it->io->trace_fid, r->cache_id, bi, false);
  }
  const char *why = NULL;
  uint8_t how = 0;
  rc = kv_sf_frame_open(it->disk.p, e->size, e->raw, &it->sec, &how, &why);
  if (!rc && how != KV_SF_STORED_SECTIONS) {
    const uint8_t *raw;
    size_t raw_len;
    rc = kv_sf_frame_inflate(it->disk.p, e->raw, &it->scratch, &raw, &raw_len, &why);
    if (!rc && it->io && how != KV_SF_STORED_RAW) it->io->bytes_inflated += e->raw;
    if (!rc) return decode_block(it, bi, raw, raw_len, false, NULL);
  }
  if (!rc) {
    it->scratch.len = 0;
    if (kv_sfbuf_reserve(&it->scratch, e->raw ? e->raw : 1)) rc = KV_ERR_NOMEM;
  }
  if (rc == KV_ERR_NOMEM) kv_error(rc, "out of memory reading store file %s", r->path);
  else if (rc)
    kv_error(rc, "store file %s: block at offset %llu: %s", r->path,
             (unsigned long long)e->off, why);
  if (rc) return fail_block(it, rc);
  kv_sf_cpart pt = {it->disk.p, &it->sec, it->scratch.p, want_group, it, 0};
  return decode_block(it, bi, NULL, e->raw, false, &pt);
}

/* Make block `bi` the loaded block (from the cache, or read, decoded and maybe inserted:
** cache_has_room; an uncached block of a projected iterator: proj_load). Returns false (and
** sets the sticky status) on error. */
static bool load_block(sf_iter *it, uint32_t bi) {
  if (it->bi == (int64_t)bi && !it->partial) return true;
  kv_sf_reader *r = it->r;
  const uint8_t *raw;
  size_t raw_len;
  it->bi = -1;
  it->key_ri = -1;
  it->fast_bi = -1;
  it->partial = false;
  if (r->cache) {
    kv_cache_entry *hit = kv_cache_lookup(r->cache, r->cache_id, bi);
    if (hit) return use_cached(it, bi, hit);
  }
  drop_current(it);
  bool insert = r->cache && it->fill_cache && cache_has_room(r, bi, 2);
  if (it->proj && !insert) return proj_load(it, bi);
  int rc = read_block(it, bi, false, &raw, &raw_len);
  if (rc) return fail_block(it, rc);
  return decode_block(it, bi, raw, raw_len, insert, NULL);
}

const kv_sf_cblock *kv_sfi_load(sf_iter *it, uint32_t bi) {
  return load_block(it, bi) ? it->b : NULL;
}

enum { PART_ERR, PART_OK, PART_EMPTY }; /* what part_load did */

/* A point or short range read's block bk (not in the cache): read it and, unless the cache
** takes it (cache_has_room), decode only the rows from the first at or above [row, row+len)
** on (kv/sf/sf_point.h): `want` rows at most, up to and including the first at or above
** [stop, stop+stop_len) when stop is not NULL, as the loaded block, flagged partial: a move
** past those rows loads the block whole (step_fwd, step_back), any other load replaces it.
** When the cache takes the block it is decoded whole as load_block does; so it is when every
** row of the block is below the key, unless `range` (then PART_EMPTY: nothing loaded, the
** range starts in a later block). `range`: the caller's cache look-up counted the miss (a
** point read's probe counts none); a range read of the block whose rows are loaded in part
** decodes again from the raw block still held (no read), and the third one in a row
** decodes it whole. PART_ERR (status set) on error. */
static int part_load(sf_iter *it, uint32_t bk, const uint8_t *row, uint32_t len,
                     const uint8_t *stop, uint32_t stop_len, uint32_t want, bool range) {
  kv_sf_reader *r = it->r;
  const kv_sf_index_entry e_v = kv_sf_entry(r, bk), *e = &e_v;
  const uint8_t *raw = it->praw;
  size_t raw_len = it->praw_len;
  const char *why = NULL;
  bool again = range && it->partial && it->bi == (int64_t)bk; /* raw still holds block bk */
  it->bi = -1;
  it->key_ri = -1;
  it->fast_bi = -1;
  it->partial = false;
  drop_current(it);
  int rc = KV_OK;
  if (!again) {
    if (r->cache && !range) kv_cache_note_miss(r->cache, r->cache_id, bk);
    rc = read_block(it, bk, true, &raw, &raw_len);
    if (rc) {
      fail_block(it, rc);
      return PART_ERR;
    }
  }
  it->pagain = again ? it->pagain + 1 : 0;
  if (r->cache && it->fill_cache && cache_has_room(r, bk, range ? 2 : 3))
    return decode_block(it, bk, raw, raw_len, true, NULL) ? PART_OK : PART_ERR;
  if (it->pagain >= 2) return decode_block(it, bk, raw, raw_len, false, NULL) ? PART_OK : PART_ERR;
  rc = kv_sf_point_decode_to(&it->pd, raw, raw_len, row, len, stop, stop_len, want, &why);
  if (!rc && (it->pd.block_rows != e->rows || it->pd.block_cells != e->cells)) {
    why = "cell or row count disagrees with the block index";
    rc = KV_ERR_CORRUPT;
  }
  if (!rc && it->pd.b.nrows == 0) return PART_EMPTY; /* it->bi is -1: nothing loaded */
  if (!rc) {
    it->b = &it->pd.b;
    rc = prepare_block(it);
  }
  if (!rc && it->pd.first_row == 0 && (why = check_first(it, e)) != NULL) rc = KV_ERR_CORRUPT;
  if (rc == KV_ERR_CORRUPT && why)
    kv_error(rc, "store file %s: block %u at offset %llu: %s", r->path, bk,
             (unsigned long long)e->off, why);
  else if (rc == KV_ERR_NOMEM)
    kv_error(rc, "out of memory reading store file %s", r->path);
  if (rc) {
    fail_block(it, rc);
    return PART_ERR;
  }
  if (it->io) it->io->cells_decoded += it->b->ncells;
  it->partial = true;
  it->prow = it->pd.first_row;
  it->praw = raw;
  it->praw_len = raw_len;
  it->key_ri = -1;
  it->bi = bk;
  if (it->proj) it->keep_bi = -1;
  return PART_OK;
}

/* A point read's block bk (not in the cache): the row asked for and the one after it
** (part_load), or the block whole. When every row of bk is below the row (the row starts
** the next block: kv_sf_find_block takes the block before, where the row could begin),
** the next block answers, from the cache or in part as well, never whole. False at the
** file's end (it->valid false, status OK) or on error (status set). */
static bool point_load(sf_iter *it, uint32_t bk, const uint8_t *row, uint32_t len) {
  kv_sf_reader *r = it->r;
  for (;;) {
    int pl = part_load(it, bk, row, len, NULL, 0, 2, false);
    if (pl != PART_EMPTY) return pl == PART_OK;
    if (++bk >= r->nblocks) return false;
    /* a miss is counted by part_load (kv_cache_note_miss) */
    kv_cache_entry *hit = r->cache ? kv_cache_probe(r->cache, r->cache_id, bk) : NULL;
    if (hit) return use_cached(it, bk, hit);
  }
}

/* A range read (kv_sf_iter_seek_range) going on into block bi: unless it is cached, its
** rows up to the range's stop key only (part_load). True when block bi is loaded, false on
** error (status set). */
static bool range_next(sf_iter *it, uint32_t bi) {
  kv_sf_reader *r = it->r;
  uint32_t first_len;
  const uint8_t *first = kv_sf_first_row(r, bi, &first_len);
  /* a block the range runs through to its end (the next block starts at or below the stop
     key, or the file's last row is below it) is loaded whole, as any scan's: decoding it
     in part saves nothing, and a whole block gives the scan its row runs (kv/scan/scan_run.c) */
  uint32_t after_len = r->last_row_len;
  const uint8_t *after = bi + 1 < r->nblocks ? kv_sf_first_row(r, bi + 1, &after_len) : r->last_row;
  int c = kv_sf_bytes_cmp(after, after_len, it->stop, it->stop_len);
  if (bi + 1 < r->nblocks ? c <= 0 : c < 0) return load_block(it, bi);
  if (r->cache) {
    kv_cache_entry *hit = kv_cache_lookup(r->cache, r->cache_id, bi);
    if (hit) return use_cached(it, bi, hit);
  }
  int pl = part_load(it, bi, first, first_len, it->stop, it->stop_len, UINT32_MAX,
                     true);
  if (pl == PART_EMPTY) return load_block(it, bi); /* rows below its index entry: reported */
  return pl == PART_OK;
}

/* Leave the loaded block forward, as a move past its last cell does: load the next block,
** or, from a point read's rows (partial) that are not the block's last, the whole block,
** standing on the row after them. *ci, *ri get where to settle from. False at the file's
** end or on error (status set). */
static bool step_fwd(sf_iter *it, uint32_t *ci, uint32_t *ri) {
  uint32_t bi = (uint32_t)it->bi;
  if (it->partial && it->prow + it->b->nrows < it->pd.block_rows) {
    uint32_t next = it->prow + it->b->nrows;
    if (!load_block(it, bi)) return false;
    if (next < it->b->nrows) {
      *ri = next;
      *ci = rfirst(it->b, next);
      return true;
    }
  }
  if (bi + 1 >= it->r->nblocks) return false;
  if (it->has_stop && it->stop_upper) {
    /* the next block starts at or above the bound: nothing wanted is there, no read */
    uint32_t nf_len;
    const uint8_t *nf_row = kv_sf_first_row(it->r, bi + 1, &nf_len);
    if (kv_sf_bytes_cmp(nf_row, nf_len, it->stop, it->stop_len) >= 0) return false;
  }
  if (!(it->has_stop ? range_next(it, bi + 1) : load_block(it, bi + 1))) return false;
  *ci = 0;
  *ri = 0;
  return true;
}

/* Leave the loaded block backward, as a move before its first cell does: load the previous
** block, or, from a point read's rows (partial) that are not the block's first, the whole
** block, standing on the last cell before them. As step_fwd otherwise. */
static bool step_back(sf_iter *it, uint32_t *ci, uint32_t *ri) {
  int64_t bi = it->bi;
  if (it->partial && it->prow > 0) {
    uint32_t prev = it->prow - 1;
    if (!load_block(it, (uint32_t)bi)) return false;
    if (prev + 1 < it->b->nrows) {
      *ri = prev;
      *ci = rfirst(it->b, prev + 1) - 1;
      return true;
    }
  }
  if (bi <= 0 || !load_block(it, (uint32_t)bi - 1)) return false;
  *ci = it->b->ncells - 1;
  *ri = it->b->nrows - 1;
  return true;
}


/* Row of cell ci: the last row whose first cell is <= ci. */
static uint32_t row_of(const kv_sf_cblock *b, uint32_t ci) {
  uint32_t lo = 0, hi = b->nrows; /* answer in [lo, hi) */
  while (hi - lo > 1) {
    uint32_t mid = lo + (hi - lo) / 2;
    if (rfirst(b, mid) <= ci) lo = mid;
    else hi = mid;
  }
  return lo;
}

static void set_pos(sf_iter *it, uint32_t ci, uint32_t ri) {
  it->ci = ci;
  it->ri = ri;
  it->valid = true;
  fill_cell(it, ri, ci, true, &it->cur);
}

/* Compare cell ci (of row ri, whose key equals t's row) with t past the row: qualifier,
** then timestamp, sequence number and type, all descending but the qualifier. */
static int cmp_in_row(const kv_sf_cblock *b, uint32_t ri, uint32_t ci, const kv_cell *t) {
  uint32_t q = (uint32_t)kv_sf_pa_get(&b->qual, ci);
  int c = kv_bytes_cmp(b->dict + b->q_off[q], b->q_len[q], t->qual, t->qual_len);
  if (c) return c;
  int64_t ts = kv_sf_cblock_ts(b, ri, ci);
  if (ts != t->ts) return ts > t->ts ? -1 : 1;
  uint64_t seq = kv_sf_pa_get(&b->seq, ci);
  if (seq != t->seq) return seq > t->seq ? -1 : 1;
  uint8_t type = (uint8_t)kv_sf_pa_get(&b->type, ci);
  if (type != t->type) return type > t->type ? -1 : 1;
  return 0;
}

/* First row whose key is >= t's row (nrows if none); *eq tells whether it is equal. */
static uint32_t find_row(const kv_sf_cblock *b, const uint8_t *t, uint32_t tlen, bool *eq) {
  uint32_t lo = 0, hi = b->nrows;
  *eq = false;
  if (b->klen) { /* one common prefix: compared once, then the suffixes */
    uint32_t n = b->lcp < tlen ? b->lcp : tlen;
    int c = kv_sf_bytes_cmp(b->prefix, n, t, n);
    if (c == 0 && tlen < b->lcp) c = 1;
    if (c > 0) return 0;           /* every key is above t */
    if (c < 0) return b->nrows;    /* every key is below t */
    uint32_t w = b->klen - b->lcp;
    const uint8_t *ts = t + b->lcp;
    uint32_t tsl = tlen - b->lcp;
    while (lo < hi) {
      uint32_t mid = lo + (hi - lo) / 2;
      if (kv_sf_bytes_cmp(b->keys + (size_t)mid * w, w, ts, tsl) < 0) lo = mid + 1;
      else hi = mid;
    }
    if (lo < b->nrows) *eq = kv_sf_bytes_cmp(b->keys + (size_t)lo * w, w, ts, tsl) == 0;
    return lo;
  }
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo) / 2;
    if (kv_sf_cblock_key_cmp(b, mid, t, tlen) < 0) lo = mid + 1;
    else hi = mid;
  }
  if (lo < b->nrows) *eq = kv_sf_cblock_key_cmp(b, lo, t, tlen) == 0;
  return lo;
}

/* Index of the first cell of the loaded block that is >= target (upper: > target); *row
** gets its row (nrows - 1 when there is no such cell). */
static uint32_t find_in_block(const kv_sf_cblock *b, const kv_cell *t, bool upper,
                              uint32_t *row) {
  bool eq;
  uint32_t r = find_row(b, t->row, t->row_len, &eq);
  if (r == b->nrows) {
    *row = b->nrows - 1;
    return b->ncells;
  }
  *row = r;
  uint32_t clo = rfirst(b, r), chi = rfirst(b, r + 1);
  /* a row-start target (kv_cell_row_first) sorts before every cell of its row */
  if (!eq || (t->qual_len == 0 && t->ts == INT64_MAX && t->seq == UINT64_MAX && t->type == 255))
    return clo;
  while (clo < chi) {
    uint32_t mid = clo + (chi - clo) / 2;
    int cmp = cmp_in_row(b, r, mid, t);
    if (cmp < 0 || (upper && cmp == 0)) clo = mid + 1;
    else chi = mid;
  }
  if (clo == rfirst(b, r + 1) && r + 1 < b->nrows) *row = r + 1;
  return clo;
}

/* Whether cell ci is kept by the projection (DeleteFamily tombstones always are). */
static inline bool kept(const sf_iter *it, const kv_sf_cblock *b, uint32_t ci) {
  return it->keep[kv_sf_pa_get(&b->qual, ci)] ||
         kv_sf_pa_get(&b->type, ci) == KV_DELETE_FAMILY;
}

/* Position on the first cell at or after cell ci (row ri, ci's row or an earlier one) of
** the loaded block that the projection keeps, loading the next blocks as needed. */
void kv_sfi_settle_fwd(sf_iter *it, uint32_t ci, uint32_t ri) {
  for (;;) {
    const kv_sf_cblock *b = it->b;
    if (it->proj) {
      if (it->keep_bi != it->bi && !kv_sfi_compute_keep(it)) return;
      uint32_t start = ci, n = b->ncells;
      if (b->qual.w == 3 && b->type.w == 0) { /* the common case: four bits per cell */
        const uint8_t *qp = b->qual.p, *keep = it->keep;
        while (ci < n && !keep[(qp[ci >> 1] >> ((ci & 1) * 4)) & 15]) ci++;
      } else if (b->qual.w == 1 && b->type.w == 0) { /* a byte per cell */
        const uint8_t *qp = b->qual.p, *keep = it->keep;
        uint32_t base = (uint32_t)b->qual.base;
        while (ci < n && !keep[qp[ci] + base]) ci++;
      } else {
        while (ci < n && !kept(it, b, ci)) ci++;
      }
      if (it->io) it->io->cells_skipped += ci - start;
    }
    if (ci < b->ncells) {
      while (rfirst(b, ri + 1) <= ci) ri++;
      set_pos(it, ci, ri);
      return;
    }
    it->valid = false;
    if (!step_fwd(it, &ci, &ri)) return;
  }
}

/* Position on the last kept cell at or before cell ci (row ri) of the loaded block, loading
** the previous blocks as needed. */
static void settle_back(sf_iter *it, uint32_t ci, uint32_t ri) {
  for (;;) {
    const kv_sf_cblock *b = it->b;
    if (!it->proj) {
      set_pos(it, ci, ri);
      return;
    }
    if (it->keep_bi != it->bi && !kv_sfi_compute_keep(it)) return;
    int64_t i = ci;
    while (i >= 0 && !kept(it, b, (uint32_t)i)) i--;
    if (it->io) it->io->cells_skipped += (uint64_t)((int64_t)ci - i);
    if (i >= 0) {
      while (rfirst(b, ri) > (uint32_t)i) ri--;
      set_pos(it, (uint32_t)i, ri);
      return;
    }
    it->valid = false;
    if (!step_back(it, &ci, &ri)) return;
  }
}

static bool it_valid(kv_iter *base) { return ((sf_iter *)base)->valid; }

static void it_seek_first(kv_iter *base) {
  sf_iter *it = (sf_iter *)base;
  it->has_stop = false;
  it->valid = false;
  if (it->status || it->r->nblocks == 0 || !load_block(it, 0)) return;
  kv_sfi_settle_fwd(it, 0, 0);
}

static void it_seek_last(kv_iter *base) {
  sf_iter *it = (sf_iter *)base;
  it->has_stop = false;
  it->valid = false;
  if (it->status || it->r->nblocks == 0 || !load_block(it, it->r->nblocks - 1)) return;
  settle_back(it, it->b->ncells - 1, it->b->nrows - 1);
}

static void it_seek(kv_iter *base, const kv_cell *target) {
  sf_iter *it = (sf_iter *)base;
  it->has_stop = false;
  it->valid = false;
  if (it->status || it->r->nblocks == 0) return;
  int64_t bk = kv_sf_find_block(it->r, target);
  if (bk < 0) bk = 0;
  if (!load_block(it, (uint32_t)bk)) return;
  uint32_t ri, ci = find_in_block(it->b, target, false, &ri);
  kv_sfi_settle_fwd(it, ci, ri);
}

static void it_seek_for_prev(kv_iter *base, const kv_cell *target) {
  sf_iter *it = (sf_iter *)base;
  it->has_stop = false;
  it->valid = false;
  if (it->status || it->r->nblocks == 0) return;
  int64_t bk = kv_sf_find_block(it->r, target);
  if (bk < 0 || !load_block(it, (uint32_t)bk)) return;
  uint32_t ri, ci = find_in_block(it->b, target, true, &ri);
  if (ci == 0) return; /* cannot happen: the block's first cell is <= target */
  ci--;
  settle_back(it, ci, row_of(it->b, ci));
}

static void it_next(kv_iter *base) {
  sf_iter *it = (sf_iter *)base;
  uint32_t ci = it->ci + 1;
  if (it->proj) {
    kv_sfi_settle_fwd(it, ci, it->ri);
    return;
  }
  const kv_sf_cblock *b = it->b;
  if (ci < b->ncells) {
    uint32_t ri = it->ri;
    if (rfirst(b, ri + 1) <= ci) ri++;
    set_pos(it, ci, ri);
    return;
  }
  it->valid = false;
  uint32_t nci, nri;
  if (!step_fwd(it, &nci, &nri)) return;
  set_pos(it, nci, nri);
}

static void it_prev(kv_iter *base) {
  sf_iter *it = (sf_iter *)base;
  if (it->ci > 0) {
    uint32_t ci = it->ci - 1, ri = it->ri;
    if (rfirst(it->b, ri) > ci) ri--;
    settle_back(it, ci, ri);
    return;
  }
  it->valid = false;
  uint32_t pci, pri;
  if (!step_back(it, &pci, &pri)) return;
  settle_back(it, pci, pri);
}

static const kv_cell *it_cell(kv_iter *base) { return &((sf_iter *)base)->cur; }
static int it_status(kv_iter *base) { return ((sf_iter *)base)->status; }

static void it_destroy(kv_iter *base) {
  sf_iter *it = (sf_iter *)base;
  if (!it) return;
  kv_sfbuf_free(&it->disk);
  kv_sfbuf_free(&it->scratch);
  drop_current(it);
  kv_sf_cdec_free(&it->dec);
  kv_sf_wide_free(&it->wide);
  kv_sf_sections_free(&it->sec);
  kv_sf_pdec_free(&it->pd);
  free(it->stop);
  free(it->keep);
  free(it->kbuf);
  free(it->rp.ranks);
  kv_sfbuf_free(&it->vbuf);
  kv_sfbuf_free(&it->rowvals);
  free(it->fq);
  free(it);
}

static const kv_iter_ops sf_iter_ops = {
  it_valid, it_seek_first, it_seek_last, it_seek, it_seek_for_prev,
  it_next, it_prev, it_cell, it_status, it_destroy,
};

kv_iter *kv_sf_iter_new(kv_sf_reader *r, kv_sf_io *io) {
  return kv_sf_iter_new_opts(r, io, true);
}

kv_iter *kv_sf_iter_new_opts(kv_sf_reader *r, kv_sf_io *io, bool fill_cache) {
  sf_iter *it = calloc(1, sizeof *it);
  if (!it) return NULL;
  it->fill_cache = fill_cache;
  it->base.ops = &sf_iter_ops;
  it->r = r;
  it->io = io;
  it->bi = -1;
  it->keep_bi = -1;
  it->fast_bi = -1;
  it->key_ri = -1;
  it->b = &it->dec.b;
  it->rp.at = UINT32_MAX;
  return &it->base;
}

#define KEEP_LIMIT ((size_t)1 << 20) /* a parked iterator keeps buffers up to this size */

void kv_sf_iter_park(kv_iter *base) {
  sf_iter *it = (sf_iter *)base;
  drop_current(it);
  if (it->disk.cap > KEEP_LIMIT) kv_sfbuf_free(&it->disk);
  if (it->scratch.cap > KEEP_LIMIT) kv_sfbuf_free(&it->scratch);
  if (it->dec.arena.cap > KEEP_LIMIT || it->dec.t32_cap > KEEP_LIMIT / 4)
    kv_sf_cdec_free(&it->dec);
  if (it->wide.vals.cap > KEEP_LIMIT || it->wide.dexp.cap > KEEP_LIMIT)
    kv_sf_wide_free(&it->wide);
  if (it->pd.arena.cap > KEEP_LIMIT || it->pd.rf_cap > KEEP_LIMIT / 4 ||
      it->pd.kb_cap > KEEP_LIMIT)
    kv_sf_pdec_free(&it->pd);
  it->partial = false;
  it->has_stop = false;
  it->r = NULL;
  it->io = NULL;
  it->bi = -1;
  it->valid = false;
}

kv_iter *kv_sf_iter_retarget(kv_iter *base, kv_sf_reader *r, kv_sf_io *io, bool fill_cache) {
  sf_iter *it = (sf_iter *)base;
  drop_current(it);
  it->r = r;
  it->io = io;
  it->fill_cache = fill_cache;
  it->bi = -1;
  it->partial = false;
  it->has_stop = false;
  it->ci = it->ri = 0;
  it->valid = false;
  it->status = KV_OK;
  it->key_ri = -1;
  it->rp.at = UINT32_MAX;
  it->pq = NULL;
  it->pql = NULL;
  it->npq = 0;
  it->proj = false;
  it->byte_proj = false;
  it->vec_ok = false;
  it->keep_bi = -1;
  it->fast = false;
  it->fast_bi = -1;
  it->dec.b.nrows = 0; /* the private block no longer matches any block of r */
  return base;
}

/* ---- row seek (kv/sf/sf_rows.h; rows taken whole: kv/sf/sf_iter_rows.c) -------------------- */

int kv_sf_iter_corrupt(kv_iter *base, const char *why) {
  const sf_iter *it = (const sf_iter *)base;
  const kv_sf_reader *r = it->r;
  if (it->bi >= 0 && (uint64_t)it->bi < r->nblocks)
    return kv_error(KV_ERR_CORRUPT, "store file %s: block %u at offset %llu: %s", r->path,
                    (unsigned)it->bi, (unsigned long long)kv_sf_entry(r, (uint64_t)it->bi).off, why);
  return kv_error(KV_ERR_CORRUPT, "store file %s: %s", r->path, why);
}

bool kv_sf_iter_seek_row(kv_iter *base, const uint8_t *row, uint32_t len, bool point) {
  sf_iter *it = (sf_iter *)base;
  it->has_stop = false;
  kv_sf_reader *r = it->r;
  it->valid = false;
  if (it->status || r->nblocks == 0) return true;
  if (point && !kv_sf_grow((void **)&it->stop, &it->stop_cap, (size_t)len + 1, 1)) {
    /* nothing past the row is wanted: the bound is its key and a 0 byte, the smallest key
       above it, so the step past the row's last cell reads no further block (step_fwd) */
    if (len) memcpy(it->stop, row, len);
    it->stop[len] = 0;
    it->stop_len = len + 1;
    it->has_stop = it->stop_upper = true;
  }
  kv_cell t = kv_cell_row_first(row, len);
  int64_t bk = kv_sf_row_block(r, row, len);
  bool fresh = false; /* point_load just made block bk the loaded one */
  if (point && !(it->bi == bk && it->ce)) {
    /* the block that would hold the row, if cached, answers at once (a bloom filter's
       probes in a large filter cost more); else the bloom filter decides; a block read
       for the row alone gives only the row (point_load) */
    kv_cache_entry *hit = r->cache ? kv_cache_probe(r->cache, r->cache_id, (uint64_t)bk) : NULL;
    if (hit) {
      if (!use_cached(it, (uint32_t)bk, hit)) return true;
    } else if (!kv_sf_may_contain_row(r, row, len)) {
      return false;
    } else if (it->bi != bk || it->partial) {
      if (!point_load(it, (uint32_t)bk, row, len)) return true;
      bk = it->bi; /* the next block when the row starts it */
      fresh = true;
    }
  }
  if (!fresh && !load_block(it, (uint32_t)bk)) return true;
  uint32_t ri;
  uint32_t ci = find_in_block(it->b, &t, false, &ri);
  kv_sfi_settle_fwd(it, ci, ri);
  if (it->valid && it->b->cvals && it->rp.at == it->ci) {
    /* the row's fixed-width values lie side by side from here (packed block): ask for
       their lines now, so the miss overlaps the merge and the row handed out instead of
       stalling the caller's first read of a value (a hint: it never faults) */
    uintptr_t v = (uintptr_t)(it->b->cvals + it->rp.ranks[it->b->nquals + 1]);
    __builtin_prefetch((const void *)v);
    __builtin_prefetch((const void *)(v + 64));
  }
  return true;
}

/* Whether the partial rows loaded for block bk (it->partial) answer a range read from
** [row, row+len) to [stop, stop+stop_len): the block's first row at or above row is among
** them (one of them is below row, or they start the block) and so is the first at or above
** stop, or they reach the block's end. */
static bool part_covers(const sf_iter *it, const uint8_t *row, uint32_t len,
                        const uint8_t *stop, uint32_t stop_len) {
  const kv_sf_cblock *b = it->b;
  bool eq;
  uint32_t m = b->nrows, r0 = find_row(b, row, len, &eq);
  if (m == 0 || r0 >= m || (r0 == 0 && it->prow > 0)) return false;
  return it->prow + m == it->pd.block_rows ||
         kv_sf_cblock_key_cmp(b, m - 1, stop, stop_len) >= 0;
}

bool kv_sf_iter_seek_range(kv_iter *base, const uint8_t *row, uint32_t len,
                           const uint8_t *stop, uint32_t stop_len) {
  sf_iter *it = (sf_iter *)base;
  kv_sf_reader *r = it->r;
  if (!stop) return kv_sf_iter_seek_row(base, row, len, false);
  it->valid = false;
  it->has_stop = false;
  if (it->status || r->nblocks == 0) return true;
  it->has_stop = !kv_sf_grow((void **)&it->stop, &it->stop_cap, stop_len ? stop_len : 1, 1);
  if (it->has_stop) { /* for step_fwd: the range's next block is decoded up to it too */
    if (stop_len) memcpy(it->stop, stop, stop_len);
    it->stop_len = stop_len;
    it->stop_upper = false; /* the first row at or above stop is still found */
  }
  kv_cell t = kv_cell_row_first(row, len);
  int64_t bk = kv_sf_row_block(r, row, len);
  bool ready = it->bi == bk && (!it->partial || part_covers(it, row, len, stop, stop_len));
  while (!ready) {
    kv_cache_entry *hit = r->cache ? kv_cache_lookup(r->cache, r->cache_id, (uint64_t)bk) : NULL;
    if (hit) {
      if (!use_cached(it, (uint32_t)bk, hit)) return true;
      break;
    }
    int pl = part_load(it, (uint32_t)bk, row, len, stop, stop_len, UINT32_MAX, true);
    if (pl == PART_ERR) return true;
    if (pl == PART_OK) break;
    /* every row of block bk is below row: the range starts in the next block, whose first
       row is at or above it (find_block), or past the file's last row */
    if ((uint64_t)bk + 1 >= r->nblocks) return true;
    bk++;
  }
  uint32_t ri;
  uint32_t ci = find_in_block(it->b, &t, false, &ri);
  kv_sfi_settle_fwd(it, ci, ri);
  return true;
}
