/*
** kv/bulk/bulk_merge.c: the commit's merge of one family whose segments overlap (kv/bulk/bulk_int.h,
** kv_bulk_merge_blocks). Its sources are the family's encoded segments (finished store-file
** blocks, kv/sf/sf_seg.h) and chains of its sorted raw buffers (the unordered ones the worker
** only sorted). The merge goes row by row, and does the least work each row allows:
**   a block copied whole: an encoded block whose rows all lie below every other source's
**     next row is appended to the file as it is (no decoding, no re-encoding; its frame is
**     only rewritten when the commit's sequence number is not the one it was encoded with),
**     and so are the blocks after it while the same holds;
**   a row written straight: a row that no other source has is written from its source
**     as it is (a segment's cells are resolved already, and so is a raw buffer's row made of
**     one group); a block that cannot be copied (its range reaches another source's rows)
**     is decoded for this;
**   a row resolved: a row that several sources have (a key repeated across segments) goes
**     cell by cell, from every source that has it in cell order, through the resolver
**     (kv/bulk/bulk_sort.c), each source's cells carrying the add ordinal of their buffer (a
**     segment's cells were resolved within it, so its last ordinal stands for all).
** So input whose segments overlap only at their ends (files of a time series loaded one
** after another) costs little more than segments that follow one another, and a key range
** where every source interleaves costs a merge of rows, not of cells.
** Not here: the merge with spilled runs (kv_bulk_merge, kv/bulk/bulk_sort.c), choosing between
** them and writing the file (kv/bulk/bulk_write.c), the block format (kv/sf/sf_write.c).
*/
#include <stdlib.h>
#include <string.h>

#include "kv/bulk/bulk_int.h"
#include "kv/util/status.h"

/* One source of the merge. */
typedef struct bsrc {
  bool eof;               /* nothing left */
  bool is_seg;            /* an encoded segment (else a chain of raw buffers) */
  kv_cell cell;           /* the current cell (a segment's: while a block is loaded) */
  const kv_sf_seg *seg;   /* segment: the segment */
  uint64_t ord;           /* segment: its cells' sequence number in the merge */
  size_t nblocks, bi;     /* segment: its blocks; the next one, or the loaded one */
  kv_sf_seg_binfo info;   /* segment: block bi's bounds (when none is loaded) */
  bool loaded;            /* segment: block bi is decoded in cur */
  kv_sf_seg_cur *cur;     /* segment: its block reader */
  uint32_t ci, nc;        /* segment: current cell of the loaded block / its cells */
  kv_bulk_src ch;         /* chain: its buffers and the current row's span */
} bsrc;

/* The merge's state. */
typedef struct merge {
  bsrc *s;                /* sources */
  size_t n;               /* their number */
  kv_sf_writer *w;        /* output */
  uint64_t seq;           /* the load's sequence number */
  kv_bulk_resolver r;     /* for rows several sources have */
  uint8_t *row;           /* copy of the row being resolved */
  const uint8_t *hi;      /* rows from this one on are not this merge's (NULL: none) */
  size_t hi_len;          /* its length */
  uint64_t copied, loaded;/* blocks copied whole / decoded */
} merge;

static inline int row_cmp(const uint8_t *a, size_t al, const uint8_t *b, size_t bl) {
  return kv_sf_key_cmp(a, al, b, bl);
}

/* The source's next row key. REQUIRES !s->eof. */
static inline const uint8_t *head(const bsrc *s, uint32_t *len) {
  if (s->is_seg && !s->loaded) {
    *len = s->info.first_len;
    return s->info.first_row;
  }
  *len = s->cell.row_len;
  return s->cell.row;
}

/* A source whose next row is at or past the merge's upper bound has nothing left here. */
static inline void clip(const merge *m, bsrc *s) {
  if (s->eof || !m->hi) return;
  uint32_t hl = 0;
  const uint8_t *h = head(s, &hl);
  if (row_cmp(h, hl, m->hi, m->hi_len) >= 0) s->eof = true;
}

/* A segment source moves to block bi (not loaded). */
static void seg_at(bsrc *s, size_t bi) {
  s->loaded = false;
  s->bi = bi;
  if (bi >= s->nblocks) s->eof = true;
  else kv_sf_seg_block_info(s->seg, bi, &s->info);
}

static int seg_load(merge *m, bsrc *s) {
  int rc = kv_sf_seg_cur_load(s->cur, s->seg, s->bi, &s->nc);
  if (rc) return rc;
  if (s->nc == 0) return kv_error(KV_ERR_CORRUPT, "bulk load: an empty segment block");
  s->loaded = true;
  s->ci = 0;
  kv_sf_seg_cur_cell(s->cur, 0, &s->cell);
  s->cell.seq = s->ord;
  m->loaded++;
  return KV_OK;
}

/* Step a chain source to its next cell. */
static int chain_next(bsrc *s) {
  kv_bulk_src *c = &s->ch;
  if (++c->span_i >= c->span_n) {
    int rc = kv_bulk_src_fill(c);
    if (rc) return rc;
    if (c->span_n == 0) {
      s->eof = true;
      return KV_OK;
    }
  }
  const kv_bulk_buf *u = c->chain[c->ci];
  s->cell = kv_bulk_ent_cell(u, &u->ents[c->span[c->span_i]]);
  return KV_OK;
}

/* Step a source past its current cell (a segment's block ends: it moves to the next). */
static int advance(const merge *m, bsrc *s) {
  if (!s->is_seg) {
    int rc = chain_next(s);
    clip(m, s);
    return rc;
  }
  if (++s->ci < s->nc) {
    kv_sf_seg_cur_cell(s->cur, s->ci, &s->cell);
    s->cell.seq = s->ord;
  } else {
    seg_at(s, s->bi + 1);
  }
  clip(m, s);
  return KV_OK;
}

/* The row r (r_len bytes) that several sources have: every cell of it, from all of them,
** in cell order through the resolver. A segment's block that starts with r is loaded. */
static int merge_row(merge *m, const uint8_t *r, uint32_t r_len) {
  memcpy(m->row, r, r_len); /* r points into a source that will move */
  r = m->row;
  int rc = KV_OK;
  for (;;) {
    bsrc *best = NULL;
    for (size_t i = 0; i < m->n && rc == KV_OK; i++) {
      bsrc *s = &m->s[i];
      if (s->eof) continue;
      uint32_t hl;
      const uint8_t *h = head(s, &hl);
      if (row_cmp(h, hl, r, r_len) != 0) continue;
      if (s->is_seg && !s->loaded && (rc = seg_load(m, s)) != KV_OK) break;
      if (!best || kv_cell_cmp(&s->cell, &best->cell) < 0) best = s;
    }
    if (rc || !best) break;
    rc = kv_bulk_resolve(&m->r, &best->cell);
    if (rc == KV_OK) rc = advance(m, best);
  }
  if (rc == KV_OK) rc = kv_bulk_resolve_flush(&m->r);
  return rc;
}

/* Write s's current row, which no other source has, as it is (a raw row of several groups
** through the resolver). */
static int write_row(merge *m, bsrc *s) {
  int rc = KV_OK;
  if (s->is_seg) { /* to the end of the row or of the block (a row may go on in the next) */
    const uint8_t *r = s->cell.row;
    uint32_t r_len = s->cell.row_len;
    while (rc == KV_OK && !s->eof && s->loaded && s->cell.row_len == r_len &&
           memcmp(s->cell.row, r, r_len) == 0) {
      kv_cell c = s->cell;
      c.seq = m->seq;
      rc = kv_sf_writer_add(m->w, &c);
      if (rc == KV_OK) rc = advance(m, s);
    }
    return rc;
  }
  kv_bulk_src *c = &s->ch;
  size_t n = c->span_n;
  for (; rc == KV_OK && c->span_i < n; c->span_i++) {
    const kv_bulk_buf *u = c->chain[c->ci];
    kv_cell x = kv_bulk_ent_cell(u, &u->ents[c->span[c->span_i]]);
    if (c->span_groups == 1) {
      x.seq = m->seq;
      rc = kv_sf_writer_add(m->w, &x);
    } else {
      rc = kv_bulk_resolve(&m->r, &x);
    }
  }
  if (rc == KV_OK && c->span_groups > 1) rc = kv_bulk_resolve_flush(&m->r);
  if (rc) return rc;
  c->span_i = n - 1; /* chain_next steps past the span */
  rc = chain_next(s);
  clip(m, s);
  return rc;
}

/* One step: the source with the lowest next row copies blocks, writes its row, or (when
** another source has the same row) the row is resolved. *done at the end. */
static int step(merge *m, bool *done) {
  bsrc *lo = NULL;          /* the source with the lowest next row */
  const uint8_t *lr = NULL, *next = NULL; /* that row; the lowest next row above it */
  uint32_t ll = 0, nl = 0;
  bool tie = false;         /* another source's next row is lr too */
  for (size_t i = 0; i < m->n; i++) { /* one pass: each head compared once or twice */
    bsrc *s = &m->s[i];
    if (s->eof) continue;
    uint32_t hl;
    const uint8_t *h = head(s, &hl);
    int c = lo ? row_cmp(h, hl, lr, ll) : -1;
    if (c < 0) {
      if (lo) { /* the old lowest row is now the lowest above the new one */
        next = lr;
        nl = ll;
      }
      lo = s;
      lr = h;
      ll = hl;
      tie = false;
    } else if (c == 0) {
      tie = true;
    } else if (!next || row_cmp(h, hl, next, nl) < 0) {
      next = h;
      nl = hl;
    }
  }
  *done = lo == NULL;
  if (!lo) return KV_OK;
  if (tie) return merge_row(m, lr, ll);
  if (m->hi && (!next || row_cmp(m->hi, m->hi_len, next, nl) < 0)) { /* the bound is nearer */
    next = m->hi;
    nl = (uint32_t)m->hi_len;
  }
  if (lo->is_seg && !lo->loaded) {
    size_t j = lo->bi;
    if (!lo->info.cont) /* a block that goes on with a row already written is decoded */
      for (; j < lo->nblocks; j++) {
        kv_sf_seg_binfo bi;
        kv_sf_seg_block_info(lo->seg, j, &bi);
        if (next && row_cmp(bi.last_row, bi.last_len, next, nl) >= 0) break;
      }
    if (j == lo->bi) {
      int rc = seg_load(m, lo);
      clip(m, lo);
      return rc;
    }
    int rc = kv_sf_writer_add_seg_blocks(m->w, lo->seg, lo->bi, j, m->seq);
    if (rc) return rc;
    m->copied += j - lo->bi;
    seg_at(lo, j);
    clip(m, lo);
    return KV_OK;
  }
  return write_row(m, lo);
}

/* First group of sorted buffer u whose row is at or above lo (u->n_grps if none). */
static size_t grp_lower(const kv_bulk_buf *u, const uint8_t *lo, size_t lo_len) {
  size_t a = 0, z = u->n_grps;
  while (a < z) {
    size_t mid = a + (z - a) / 2;
    const kv_bulk_ent *e = &u->ents[u->grps[mid].first];
    if (row_cmp(u->arena + e->row_off, e->row_len, lo, lo_len) < 0) a = mid + 1;
    else z = mid;
  }
  return a;
}

/* Position source s (at its start) on its first row at or above lo. */
static int seek_lo(merge *m, bsrc *s, const uint8_t *lo, size_t lo_len) {
  if (s->is_seg) {
    size_t a = 0, z = s->nblocks; /* first block whose last row is at or above lo */
    while (a < z) {
      size_t mid = a + (z - a) / 2;
      kv_sf_seg_binfo bi;
      kv_sf_seg_block_info(s->seg, mid, &bi);
      if (row_cmp(bi.last_row, bi.last_len, lo, lo_len) < 0) a = mid + 1;
      else z = mid;
    }
    seg_at(s, a);
    if (s->eof || row_cmp(s->info.first_row, s->info.first_len, lo, lo_len) >= 0) return KV_OK;
    int rc = seg_load(m, s); /* the block starts below lo: its cells from lo on */
    while (rc == KV_OK && !s->eof && s->loaded &&
           row_cmp(s->cell.row, s->cell.row_len, lo, lo_len) < 0)
      rc = advance(m, s);
    return rc;
  }
  kv_bulk_src *c = &s->ch;
  while (c->ci < c->n_chain) {
    const kv_bulk_buf *u = c->chain[c->ci];
    size_t g = grp_lower(u, lo, lo_len);
    if (g < u->n_grps) {
      c->gi = g;
      break;
    }
    c->ci++;
  }
  return KV_OK;
}

int kv_bulk_merge_blocks(kv_bulk *b, kv_bulk_fam *f, kv_sf_writer *w, uint64_t seq,
                         const uint8_t *lo, size_t lo_len, const uint8_t *hi, size_t hi_len) {
  merge m;
  memset(&m, 0, sizeof m);
  m.w = w;
  m.seq = seq;
  m.hi = hi;
  m.hi_len = hi_len;
  m.r.w = w;
  m.r.seq = seq;
  kv_bulk_buf **bufs = NULL;
  size_t *start = NULL;
  int nc = kv_bulk_make_chains(f, &bufs, &start);
  if (nc < 0) return kv_error(KV_ERR_NOMEM, "bulk load: out of memory");
  size_t n_seg = 0;
  for (uint32_t i = 0; i < f->n_segs; i++)
    if (!f->segs[i]->raw && f->segs[i]->seg) n_seg++;
  m.s = calloc(n_seg + (size_t)nc + 1, sizeof *m.s);
  m.row = malloc(KV_MAX_ROW_KEY + 1);
  int rc = m.s && m.row ? KV_OK : kv_error(KV_ERR_NOMEM, "bulk load: out of memory");
  for (uint32_t i = 0; i < f->n_segs && rc == KV_OK; i++) {
    kv_bulk_buf *u = f->segs[i];
    if (u->raw || !u->seg) continue;
    bsrc *s = &m.s[m.n++];
    s->is_seg = true;
    s->seg = u->seg;
    s->ord = u->ord_base + u->n_ents;
    s->nblocks = kv_sf_seg_nblocks(u->seg);
    s->cur = kv_sf_seg_cur_new();
    if (!s->cur) rc = kv_error(KV_ERR_NOMEM, "bulk load: out of memory");
    seg_at(s, 0);
    if (rc == KV_OK && lo) rc = seek_lo(&m, s, lo, lo_len);
    clip(&m, s);
  }
  for (int c = 0; c < nc && rc == KV_OK; c++) {
    bsrc *s = &m.s[m.n++];
    s->ch.chain = bufs + start[c];
    s->ch.n_chain = start[c + 1] - start[c];
    s->ch.span_i = s->ch.span_n = 0; /* chain_next fills the first span */
    if (lo) rc = seek_lo(&m, s, lo, lo_len);
    if (rc == KV_OK) rc = chain_next(s);
    clip(&m, s);
  }
  for (bool done = false; rc == KV_OK && !done;) rc = step(&m, &done);
  if (rc == KV_OK) rc = kv_bulk_resolve_flush(&m.r);
  kv_bulk_resolver_free(&m.r);
  for (size_t i = 0; i < m.n; i++) {
    kv_sf_seg_cur_free(m.s[i].cur);
    kv_bulk_src_free(&m.s[i].ch);
  }
  pthread_mutex_lock(&b->mu);
  b->stats.blocks_copied += m.copied;
  b->stats.blocks_decoded += m.loaded;
  pthread_mutex_unlock(&b->mu);
  free(m.s);
  free(m.row);
  free(bufs);
  free(start);
  return rc;
}
