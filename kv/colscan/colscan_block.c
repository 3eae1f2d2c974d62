/*
** kv/colscan/colscan_block.c: one block of the columnar aggregate scan (kv/colscan/colscan.h): read it
** (kv_sf_read_at, kv_sf_frame_open), walk its streams (docs/FORMAT.md Part 2, "Raw
** block") with its own decoder, check that the block is the whole truth for its rows, and
** evaluate the predicates on the value groups without assembling rows. A block that misses
** the column cache is read with the uncached blocks that follow it in the file, in one pread
** (a run, up to KV_CS_RUN_BYTES).
**
** The walk keeps only what the evaluation needs: the cells-per-row counts, the first and
** last row keys, one dictionary index per cell, the count and position of every value group;
** timestamps are decoded only under a TTL, sequence numbers are stepped over (not even that
** in a sectioned block, where they end section 0). A tombstone
** that is its (row, qualifier)'s only cell masks nothing and is stepped over (the row has no
** value there); a tombstone in a block's first or last row marks that row's fragment, so a
** row continued across blocks goes the row way. A block is handed back as a fallback range
** when a cell is a family delete, a (row, qualifier) has two cells, a cell is past the TTL,
** a referenced group has another width than the column's, or the dictionary has more than
** 255 entries. Every length is checked against the block's end:
** a damaged block is KV_ERR_CORRUPT naming the file and offset, never an overrun.
**
** Evaluation: when every predicate and wanted value is on one qualifier (the fast path,
** e.g. COUNT(*) WHERE TEMP > 30), each value of that group is one row's cell, so the group
** is compared as a column (kv/colscan/colscan_eval.c, which also answers blocks from the column
** cache and dense blocks). A keyed scan (key ranges, keys handed out) goes row by row through
** the block's row view (kv/colscan/colscan_rows.c, which also caches it). Otherwise each row's cells
** are walked here to align the referenced values of the row. The first and last row of a
** block may continue in the neighbouring block, so they become fragments
** (kv/colscan/colscan_int.h); rows between them are counted and consumed at once.
** Not here: the sources, chunks and threads (kv/colscan/colscan.c), column evaluation and the
** column cache (kv/colscan/colscan_eval.c).
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kv/util/cache.h"
#include "kv/util/coding.h"
#include "kv/colscan/colscan_int.h"
#include "kv/sf/sf_dec.h"
#include "kv/util/status.h"

#define MAXQ 255u /* dictionary entries this walker handles */

#define CORRUPT(msg) do { why = (msg); goto corrupt; } while (0)
#define GET(p, lim, v, msg) do { if (!((p) = kv_get_varint((p), (lim), (v)))) CORRUPT(msg); } while (0)
#define GET1(p, lim, v, msg) do { \
    if ((p) < (lim) && *(p) < 0x80) *(v) = *(p)++; else GET(p, lim, v, msg); } while (0)

static int grow(void **arr, size_t *cap, size_t n, size_t elem) {
  return kv_sf_grow(arr, cap, n ? n : 1, elem);
}

/* Step over n varints; NULL when they run past lim. A varint ends at each byte below 0x80,
** so eight bytes at a time count their ends until the n-th end is near. */
static const uint8_t *skip_varints(const uint8_t *p, const uint8_t *lim, uint64_t n) {
  while (n) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    if (n >= 32 && lim - p >= 32) { /* the common case: 32 one-byte varints */
      uint64_t x[4];
      memcpy(x, p, 32);
      if (!((x[0] | x[1] | x[2] | x[3]) & 0x8080808080808080ull)) {
        p += 32;
        n -= 32;
        continue;
      }
    }
    if (n >= 8 && lim - p >= 8) {
      uint64_t x;
      memcpy(&x, p, 8); /* little-endian: byte i is bits 8i..8i+7 */
      uint64_t m = ~x & 0x8080808080808080ull;
      uint64_t ends = ((m >> 7) * 0x0101010101010101ull) >> 56; /* bytes' top bits, summed */
      if (m && ends <= n) {
        p += (63 - __builtin_clzll(m)) / 8 + 1; /* just past the last end among the eight */
        n -= ends;
        continue;
      }
    }
#endif
    if (p >= lim) return NULL;
    int len = 1;
    while (p[len - 1] & 0x80) {
      if (len == 10 || p + len >= lim) return NULL;
      len++;
    }
    p += len;
    n--;
  }
  return p;
}

/* The value of referenced group g at rank k into (*p, *n); fixed values are gathered into
** tmp (at least 8 bytes, or the width). */
static void value_at(rgroup *g, uint32_t k, uint8_t *tmp, const uint8_t **p, uint32_t *n) {
  if (g->flat) {
    *p = g->ptr[k];
    *n = g->len[k];
    return;
  }
  for (uint32_t j = 0; j < g->w; j++) tmp[j] = g->base[(size_t)j * g->count + k];
  *p = tmp;
  *n = g->w;
}

/* Whether the one-byte qualifier stream p[0, n) is 0, 1, .., nq - 1 repeated (every row
** holds every qualifier once, in the dictionary's order: a table loaded row by row, its NULLs
** written as tombstones). n is a multiple of nq. The pattern is kept in s between blocks. */
static bool is_regular(bscratch *s, const uint8_t *p, uint32_t n, uint32_t nq) {
  if (s->pat_q != nq || s->pat_len < n) {
    if (grow((void **)&s->pat, &s->pat_cap, n, 1)) return false;
    for (uint32_t i = 0; i < n; i++) s->pat[i] = (uint8_t)(i % nq);
    s->pat_q = nq;
    s->pat_len = n;
  }
  return memcmp(p, s->pat, n) == 0;
}

/* Fill fragment f with row r of the block (cells [c0, c1)); last: the block's last row. */
static int make_frag(cs_worker *w, bscratch *s, cs_frag *f, uint32_t c0, uint32_t c1,
                     bool last, const uint8_t *key, uint32_t key_len, const int16_t *dref,
                     const bool *inq) {
  const cs_plan *pl = w->plan;
  f->kind = CF_ROW;
  f->has_q = false;
  f->dup = false;
  f->tomb = false;
  f->kin = true; /* unkeyed: every key */
  f->have = 0;
  f->vals_len = 0;
  if (kv_cs_frag_key(f, key, key_len)) return KV_ERR_NOMEM;
  for (uint32_t i = c0; i < c1; i++) {
    if (!kv_cs_is_put(s, i)) { /* masks nothing in this block; the merge checks the other part */
      f->tomb = true;
      continue;
    }
    uint8_t d = s->cq[i];
    if (inq[d]) f->has_q = true;
    int j = dref[d];
    if (j < 0) continue;
    rgroup *g = &s->g[j];
    /* no two cells of one qualifier in a row (checked): the first row's put is the group's
       first value, the last row's its last */
    uint32_t k = last ? g->count - 1 : 0;
    uint8_t tmp[8];
    const uint8_t *p;
    uint32_t n;
    if (!g->flat && g->w > sizeof tmp) {
      const char *why = NULL;
      int rc = kv_cs_flatten(g, &why);
      if (rc) return rc;
    }
    value_at(g, k, tmp, &p, &n);
    if (kv_cs_frag_value(f, (uint32_t)j, p, n)) return KV_ERR_NOMEM;
  }
  (void)pl;
  return KV_OK;
}

int kv_cs_fallback_block(cs_worker *w, bscratch *s, uint32_t nrows) {
  cs_frag *f = &w->tmp;
  f->kind = CF_FALLBACK;
  if (kv_cs_frag_key(f, s->k0, s->k0_len)) return KV_ERR_NOMEM;
  int rc = kv_cs_feed(w, f);
  if (!rc && nrows > 1) {
    rc = kv_cs_flush(w);
    if (!rc) {
      f->kind = CF_FALLBACK;
      if (kv_cs_frag_key(f, s->k1, s->k1_len)) return KV_ERR_NOMEM;
      rc = kv_cs_feed(w, f);
    }
  }
  if (!rc && w->plan->keyed) { /* only the rows inside the key ranges */
    uint32_t a = (uint32_t)s->in0, b = (uint32_t)s->in1;
    rc = kv_cs_add_range(w, s->kb + s->ko[a], s->ko[a + 1] - s->ko[a], s->kb + s->ko[b],
                         s->ko[b + 1] - s->ko[b]);
  } else if (!rc) {
    rc = kv_cs_add_range(w, s->k0, s->k0_len, s->k1, s->k1_len);
  }
  w->blocks_fallback++;
  return rc;
}

int kv_cs_set_key(uint8_t **buf, size_t *cap, uint32_t *len, const uint8_t *a, uint32_t an,
                  const uint8_t *b, uint32_t bn) {
  if (grow((void **)buf, cap, (size_t)an + bn, 1)) return KV_ERR_NOMEM;
  if (an) memcpy(*buf, a, an);
  if (bn) memcpy(*buf + an, b, bn);
  *len = an + bn;
  return KV_OK;
}

/* Append key a[0..an) + b[0..bn) as row r's key in s->kb / s->ko (s->ko has room for
** nrows + 1 offsets). KV_OK or KV_ERR_NOMEM. */
static int put_key(bscratch *s, uint32_t r, const uint8_t *a, uint32_t an, const uint8_t *b,
                   uint32_t bn) {
  uint32_t o = s->ko[r];
  if ((size_t)o + an + bn > s->kb_cap &&
      grow((void **)&s->kb, &s->kb_cap, ((size_t)o + an + bn) * 2, 1))
    return KV_ERR_NOMEM;
  if (an) memcpy(s->kb + o, a, an);
  if (bn) memcpy(s->kb + o + an, b, bn);
  s->ko[r + 1] = o + an + bn;
  return KV_OK;
}

/* Rows section: cells per row into s->rf, first and last keys into s->k0 / s->k1, and with
** all (a keyed scan) every row's key into s->kb / s->ko. */
static int walk_rows(bscratch *s, const uint8_t **pp, const uint8_t *lim, uint32_t nrows,
                     uint32_t ncells, bool all, const char **whyp) {
  const char *why = NULL;
  const uint8_t *p = *pp;
  uint64_t v = 0, mode = 0;
  if (kv_sf_cells_per_row(&p, lim, nrows, ncells, s->rf, &why)) goto corrupt;
  kv_sf_rows_layout L;
  if (kv_sf_rows_layout_read(&p, lim, nrows, &L, &why)) goto corrupt;
  mode = L.mode;
  if (all) {
    if (grow((void **)&s->ko, &s->ko_cap, (size_t)nrows + 1, sizeof *s->ko))
      return KV_ERR_NOMEM;
    s->ko[0] = 0;
  }
  if (mode == KV_SF_ROWS_FIXED || mode == KV_SF_ROWS_DELTA) {
    uint64_t lcp = L.lcp;
    uint32_t w = L.suffix;
    const uint8_t *prefix = L.prefix;
    uint8_t a[KV_MAX_ROW_KEY], b[KV_MAX_ROW_KEY];
    if (mode == KV_SF_ROWS_FIXED) {
      if ((uint64_t)w * nrows > (uint64_t)(lim - p)) CORRUPT("key suffixes run past the block");
      for (uint32_t j = 0; j < w; j++) {
        a[j] = p[(size_t)j * nrows];
        b[j] = p[(size_t)j * nrows + nrows - 1];
      }
      for (uint32_t r = 0; all && r < nrows; r++) {
        uint8_t c[KV_MAX_ROW_KEY];
        for (uint32_t j = 0; j < w; j++) c[j] = p[(size_t)j * nrows + r];
        if (put_key(s, r, L.prefix, (uint32_t)lcp, c, w)) return KV_ERR_NOMEM;
      }
      p += (size_t)w * nrows;
    } else {
      uint64_t val = 0, first = 0, max = w == 8 ? UINT64_MAX : (1ull << (8 * w)) - 1;
      for (uint32_t r = 0; r < nrows; r++) {
        GET1(p, lim, &v, "truncated key delta stream");
        if (v > max - val) CORRUPT("key delta out of range");
        val += v;
        if (r == 0) first = val;
        if (all) {
          uint8_t c[8];
          for (uint32_t j = 0; j < w; j++) c[j] = (uint8_t)(val >> (8 * (w - 1 - j)));
          if (put_key(s, r, L.prefix, (uint32_t)lcp, c, w)) return KV_ERR_NOMEM;
        }
      }
      for (uint32_t j = 0; j < w; j++) {
        a[j] = (uint8_t)(first >> (8 * (w - 1 - j)));
        b[j] = (uint8_t)(val >> (8 * (w - 1 - j)));
      }
    }
    if (kv_cs_set_key(&s->k0, &s->k0_cap, &s->k0_len, prefix, (uint32_t)lcp, a, w) ||
        kv_cs_set_key(&s->k1, &s->k1_cap, &s->k1_len, prefix, (uint32_t)lcp, b, w))
      return KV_ERR_NOMEM;
    *pp = p;
    return KV_OK;
  }
  if (mode != KV_SF_ROWS_PREFIX) CORRUPT("unknown rows mode");
  const uint8_t *sh = p;
  for (uint32_t r = 0; r < nrows; r++) GET1(p, lim, &v, "truncated shared-prefix stream");
  const uint8_t *lens = p;
  uint64_t total = 0;
  for (uint32_t r = 0; r < nrows; r++) {
    GET1(p, lim, &v, "truncated suffix length stream");
    if (v > KV_MAX_ROW_KEY) CORRUPT("row key too long");
    total += v;
  }
  const uint8_t *lens_end = p;
  if (total > (uint64_t)(lim - p)) CORRUPT("suffix bytes run past the block");
  const uint8_t *suf = p;
  p += total;
  /* rebuild the keys one after another in k1, keeping the first in k0 */
  uint32_t cur = 0;
  if (grow((void **)&s->k1, &s->k1_cap, KV_MAX_ROW_KEY, 1)) return KV_ERR_NOMEM;
  for (uint32_t r = 0; r < nrows; r++) {
    uint64_t shared = 0, sl = 0;
    sh = kv_get_varint(sh, lens, &shared);
    lens = kv_get_varint(lens, lens_end, &sl);
    if (!sh || !lens) CORRUPT("truncated shared-prefix stream");
    if (shared > cur || (r == 0 && shared != 0)) CORRUPT("shared prefix longer than the previous key");
    if (shared + sl > KV_MAX_ROW_KEY) CORRUPT("row key too long");
    memcpy(s->k1 + shared, suf, sl);
    suf += sl;
    cur = (uint32_t)(shared + sl);
    if (all && put_key(s, r, s->k1, cur, NULL, 0)) return KV_ERR_NOMEM;
    if (r == 0 && kv_cs_set_key(&s->k0, &s->k0_cap, &s->k0_len, s->k1, cur, NULL, 0))
      return KV_ERR_NOMEM;
  }
  s->k1_len = cur;
  *pp = p;
  return KV_OK;
corrupt:
  *whyp = why;
  return KV_ERR_CORRUPT;
}

/* Block b's bytes when the last run read holds them, else NULL. */
static const uint8_t *in_run(const cs_worker *w, const cs_block *b) {
  if (!w->run_first || b < w->run_first || b >= w->run_end) return NULL;
  const kv_sf_index_entry e_v = kv_sf_entry(b->file->reader, b->index), *e = &e_v;
  return w->disk.p + (e->off - kv_sf_entry(w->run_first->file->reader, w->run_first->index).off);
}

/* Read block b (not in the column cache) and the blocks after it in the chunk that lie right
** after it in the same file and are not in the column cache either, up to KV_CS_RUN_BYTES in
** all, with one pread: a block's pread was a fixed cost paid per block, twice as often at 8
** KiB blocks as at 16. The blocks of the run are not probed again. *disk: b's bytes. */
static int read_run(cs_worker *w, const cs_block *b, const uint8_t **disk) {
  const cs_plan *pl = w->plan;
  kv_sf_reader *rd = b->file->reader;
  const kv_sf_index_entry e0_v = kv_sf_entry(rd, b->index), *e0 = &e0_v;
  const cs_block *end = b + 1, *last = w->blocks + w->n_blocks;
  uint64_t bytes = e0->size;
  kv_sf_icur cur; /* a paged index: one page pinned at a time */
  kv_sf_icur_init(&cur, rd);
  kv_sf_index_entry prev = *e0;
  while (end < last && end->file == b->file && end->index == end[-1].index + 1) {
    const kv_sf_index_entry *e = kv_sf_icur_at(&cur, end->index);
    if (e->off != prev.off + prev.size || bytes + e->size > KV_CS_RUN_BYTES) break;
    if (pl->colcache && kv_cs_in_cache(pl, end)) break; /* answered from memory: not read */
    bytes += e->size;
    prev = *e;
    end++;
  }
  kv_sf_icur_done(&cur);
  w->run_first = w->run_end = NULL;
  w->disk.len = 0;
  if (kv_sfbuf_reserve(&w->disk, bytes)) return KV_ERR_NOMEM;
  int rc = kv_sf_read_at(rd, e0->off, w->disk.p, bytes);
  if (rc) return rc;
  w->run_first = b;
  w->run_end = end;
  w->runs++;
  *disk = w->disk.p;
  return KV_OK;
}

/* One block: read, walk, check, evaluate, feed its fragments. */
static int do_block(cs_worker *w, bscratch *s, const cs_block *b) {
  const cs_plan *pl = w->plan;
  const kv_colagg_spec *sp = pl->spec;
  kv_sf_reader *rd = b->file->reader;
  const kv_sf_index_entry e_v = kv_sf_entry(rd, b->index), *e = &e_v;
  const char *why = NULL;
  const uint8_t *disk = in_run(w, b);
  if (!disk && pl->colcache) { /* a block of the run read was a miss when the run was read */
    int crc = KV_OK;
    if (pl->keyed ? kv_cs_view_from_cache(w, s, b, &crc) : kv_cs_from_cache(w, s, b, &crc))
      return crc;
  }
  int rc = KV_OK;
  if (!disk && (rc = read_run(w, b, &disk))) return rc;
  const uint8_t *raw = NULL;
  size_t len = 0;
  /* a sectioned block (docs/FORMAT.md Part 2): only the rows and cells section now, and
  ** later the sections of the value groups the plan references; otherwise the whole block */
  kv_sf_sections *sec = &w->sec;
  uint8_t how = 0;
  rc = kv_sf_frame_open(disk, e->size, e->raw, sec, &how, &why);
  if (rc == KV_ERR_CORRUPT) goto corrupt;
  if (rc) return rc;
  if (sec->n) {
    w->raw.len = 0;
    if (kv_sfbuf_reserve(&w->raw, e->raw)) return KV_ERR_NOMEM;
    if (kv_sf_section_inflate(disk, sec, 0, w->raw.p, &why)) goto corrupt;
    raw = w->raw.p;
    len = sec->raw_off[1]; /* the walk up to the value groups stays in section 0 */
    w->inflated += len;
  } else {
    rc = kv_sf_frame_inflate(disk, e->raw, &w->raw, &raw, &len, &why); /* checked above */
    if (rc == KV_ERR_CORRUPT) goto corrupt;
    if (rc) return rc;
    if (how != KV_SF_STORED_RAW) w->inflated += len;
  }
  w->n_read++;
  w->bytes += e->size;
  const uint8_t *p = raw, *lim = raw + len;
  uint64_t nrows = 0, ncells = 0, nquals = 0, min_seq = 0, v = 0;
  if (!(p = kv_sf_raw_header(p, lim, &nrows, &ncells, &nquals, &min_seq, &why)))
    goto corrupt;
  if (nrows != e->rows || ncells != e->cells) CORRUPT("bad row, cell or qualifier count");
  w->cells += ncells;
  /* dictionary: which entries are in Q and which are referenced */
  int16_t dref[MAXQ + 1];
  bool inq[MAXQ + 1];
  for (uint32_t j = 0; j < pl->n_ref; j++) {
    s->g[j].d = -1;
    s->g[j].scaled = false;
    s->g[j].flat = false;
  }
  bool big = nquals > MAXQ;
  for (uint32_t d = 0; d < nquals; d++) {
    GET(p, lim, &v, "truncated qualifier dictionary");
    if (v > (uint64_t)(lim - p)) CORRUPT("qualifier runs past the block");
    if (!big) {
      dref[d] = -1;
      inq[d] = false;
      for (uint32_t q = 0; q < sp->n_quals; q++) {
        if (sp->qual_lens[q] == v && (v == 0 || memcmp(sp->quals[q], p, (size_t)v) == 0)) {
          inq[d] = true;
          if (pl->q_ref[q] >= 0) {
            if (s->g[pl->q_ref[q]].d >= 0) CORRUPT("a qualifier twice in the dictionary");
            dref[d] = (int16_t)pl->q_ref[q];
            s->g[pl->q_ref[q]].d = (int32_t)d;
          }
          break;
        }
      }
    }
    p += v;
  }
  if (grow((void **)&s->rf, &s->rf_cap, (size_t)nrows + 1, sizeof *s->rf)) return KV_ERR_NOMEM;
  rc = walk_rows(s, &p, lim, (uint32_t)nrows, (uint32_t)ncells, pl->keyed, &why);
  if (rc == KV_ERR_CORRUPT) goto corrupt;
  if (rc) return rc;
  /* keyed: which rows lie in the key ranges; none: the block adds nothing (it is still
     walked for the column cache, which then answers the next scan without a read) */
  bool none = false;
  if (pl->keyed) {
    if (kv_cs_keyed_in(w, s, (uint32_t)nrows)) return KV_ERR_NOMEM;
    none = s->in0 < 0; /* a row split with a neighbour is outside there too */
    if (none && (!pl->colcache || big)) return KV_OK;
  }
  if (!none &&
      (big || (pl->n_mkeys && kv_cs_mem_overlaps(pl, s->k0, s->k0_len, s->k1, s->k1_len))))
    return kv_cs_fallback_block(w, s, (uint32_t)nrows); /* memstore rows: the row way merges them */
  /* qualifier stream and group counts */
  uint32_t n = (uint32_t)ncells;
  uint32_t counts[MAXQ + 1];
  memset(counts, 0, ((size_t)nquals + 1) * sizeof *counts); /* counts[0 ..= nquals] are read */
  if (grow((void **)&s->cq, &s->cq_cap, n, 1)) return KV_ERR_NOMEM;
  bool regular = false; /* the stream is 0, 1, .., nquals - 1 over and over */
  if (nquals > 1 && nquals <= 0x80) { /* one byte per cell */
    if ((size_t)(lim - p) < n) CORRUPT("truncated qualifier stream");
    regular = n % nquals == 0 && is_regular(s, p, n, (uint32_t)nquals);
  }
  if (regular) { /* every index appears n / nquals times, never twice in a row */
    for (uint32_t d = 0; d < nquals; d++) counts[d] = n / (uint32_t)nquals;
    memcpy(s->cq, p, n);
    p += n;
  } else if (nquals > 1 && nquals <= 0x80) {
    uint32_t (*c4)[256] = s->c4; /* entries nquals .. 255 are neither cleared nor read */
    for (uint32_t k = 0; k < 4; k++) memset(c4[k], 0, nquals * sizeof c4[k][0]);
    uint32_t i = 0;
    for (; i + 4 <= n; i += 4) {
      c4[0][p[i]]++;
      c4[1][p[i + 1]]++;
      c4[2][p[i + 2]]++;
      c4[3][p[i + 3]]++;
    }
    for (; i < n; i++) c4[0][p[i]]++;
    memcpy(s->cq, p, n);
    p += n;
    uint64_t in_range = 0; /* every index below nquals: the counts of those add up to n */
    for (uint32_t d = 0; d < nquals; d++) {
      counts[d] = c4[0][d] + c4[1][d] + c4[2][d] + c4[3][d];
      in_range += counts[d];
    }
    if (in_range != n) CORRUPT("qualifier index out of range");
  } else if (nquals > 1) {
    for (uint32_t i = 0; i < n; i++) {
      GET1(p, lim, &v, "truncated qualifier stream");
      if (v >= nquals) CORRUPT("qualifier index out of range");
      s->cq[i] = (uint8_t)v;
      counts[v]++;
    }
  } else {
    memset(s->cq, 0, n);
    counts[0] = n;
  }
  /* timestamps: checked only under a TTL */
  bool refuse = false;
  if (pl->ttl_ms > 0) {
    uint64_t ts = 0;
    for (uint32_t i = 0; i < n; i++) {
      GET1(p, lim, &v, "truncated timestamp stream");
      ts += (uint64_t)kv_unzigzag(v);
      if (pl->now_ms - (int64_t)ts >= pl->ttl_ms) refuse = true;
    }
  } else {
    p = skip_varints(p, lim, n);
    if (!p) CORRUPT("truncated timestamp stream");
  }
  if ((size_t)(lim - p) < n) CORRUPT("truncated type stream");
  /* Tombstones: one of a (row, qualifier) that has no other cell masks nothing here (two
  ** cells of one (row, qualifier) hand the block back, below), so it only leaves the row
  ** without that qualifier; its value is in group nquals, not in its qualifier's group. A
  ** family delete masks the whole row: the row way applies it. */
  uint32_t ntomb = 0;
  s->ty = NULL;
  if (!kv_sf_all_zero(p, n)) {
    s->ty = p;
    for (uint32_t i = 0; i < n; i++) {
      uint64_t x;
      if (i + 8 <= n && (memcpy(&x, p + i, 8), !x)) { /* eight puts */
        i += 7;
        continue;
      }
      if (!p[i]) continue;
      if (p[i] > KV_DELETE_COLUMN) refuse = true;
      counts[s->cq[i]]--;
      ntomb++;
    }
    for (uint32_t j = 0; j < pl->n_ref; j++) /* only tombstones of it: no group, no value */
      if (s->g[j].d >= 0 && !counts[s->g[j].d]) s->g[j].d = -1;
  }
  p += n;
  /* the sequence stream: unused here (no two cells of one (row, qualifier) are compared).
  ** In a sectioned block it ends section 0, so the value groups start at the section's end
  ** without a walk; a major compaction inside the look-back window keeps every cell's own
  ** number there, several bytes each. Elsewhere it is stepped over to find the groups. */
  if (sec->n) {
    p = lim;
  } else {
    p = skip_varints(p, lim, n);
    if (!p) CORRUPT("truncated sequence stream");
  }
  /* value groups (only puts when no tombstone: group nquals is empty); in a sectioned
  ** block each group is a section of its own, inflated only when referenced */
  uint32_t ks = 1; /* next section */
  for (uint32_t d = 0; d <= nquals && !refuse; d++) {
    uint32_t cnt = d < nquals ? counts[d] : ntomb;
    if (!cnt) continue;
    int j = d < nquals ? dref[d] : -1;
    if (sec->n) {
      if (p != lim) CORRUPT("value group does not fill its section");
      if (ks >= sec->n) CORRUPT("fewer sections than value groups");
      p = raw + sec->raw_off[ks];
      lim = raw + sec->raw_off[ks + 1];
      ks++;
      if (j < 0) { p = lim; continue; }
      if (kv_sf_section_inflate(disk, sec, ks - 1, w->raw.p, &why)) goto corrupt;
      w->inflated += (uint64_t)(lim - p);
    }
    uint64_t code = 0, a = 0, bb = 0;
    GET(p, lim, &code, "truncated value group header");
    if (code == KV_SFDEC_CODE) { /* decimal-scaled: read as the fixed 8-byte group it holds */
      kv_sfdec h;
      if (!(p = kv_sfdec_parse(p, lim, cnt, &h, &why))) goto corrupt;
      if (j >= 0) {
        rgroup *g = &s->g[j];
        if (grow((void **)&g->dx, &g->dx_cap, (size_t)8 * cnt, 1)) return KV_ERR_NOMEM;
        kv_sfdec_expand(&h, g->dx, 1);
        g->scaled = true;
        g->sd = h;
        g->fixed = true;
        g->w = 8;
        g->count = cnt;
        g->base = g->dx;
        int32_t want = sp->widths ? sp->widths[pl->ref_q[j]] : -1;
        if (want >= 0 && want != 8) refuse = true;
      }
    } else if (code) {
      uint64_t bytes = (code - 1) * (uint64_t)cnt;
      if (code - 1 > UINT32_MAX || bytes > (uint64_t)(lim - p)) CORRUPT("value group runs past the block");
      if (j >= 0) {
        rgroup *g = &s->g[j];
        g->fixed = true;
        g->w = (uint32_t)(code - 1);
        g->count = cnt;
        g->base = p;
        int32_t want = sp->widths ? sp->widths[pl->ref_q[j]] : -1;
        if (want >= 0 && (uint32_t)want != g->w) refuse = true;
      }
      p += bytes;
    } else {
      GET(p, lim, &a, "truncated value group header");
      GET(p, lim, &bb, "truncated value group header");
      if (a > (uint64_t)(lim - p) || bb > (uint64_t)(lim - p) - a) CORRUPT("value group runs past the block");
      if (j >= 0) {
        rgroup *g = &s->g[j];
        g->fixed = false;
        g->w = 0;
        g->count = cnt;
        g->lens = p;
        g->lens_end = p + a;
        g->base = p + a;
        if (sp->widths && sp->widths[pl->ref_q[j]] >= 0) refuse = true;
      }
      p += a + bb;
    }
  }
  if (!refuse && p != lim) CORRUPT("bytes after the last value group");
  if (!refuse && sec->n && ks != sec->n) CORRUPT("more sections than value groups");
  /* one cell per (row, qualifier) */
  uint32_t nr = (uint32_t)nrows;
  if (!refuse && !regular) {
    if (nquals == 1) {
      refuse = ncells != nrows;
    } else {
      /* equal neighbours anywhere, less those that straddle a row start */
      uint32_t eq = 0;
      const uint8_t *cq = s->cq;
      const uint32_t *rf = s->rf;
      uint32_t i = 1;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
      for (; i + 8 <= n; i += 8) { /* zero bytes of (8 cells) xor (the 8 before them) */
        uint64_t x0, x1;
        memcpy(&x0, cq + i, 8);
        memcpy(&x1, cq + i - 1, 8);
        uint64_t d8 = x0 ^ x1;
        uint64_t nz = (((d8 & 0x7f7f7f7f7f7f7f7full) + 0x7f7f7f7f7f7f7f7full) | d8) & 0x8080808080808080ull;
        eq += 8 - (uint32_t)(((nz >> 7) * 0x0101010101010101ull) >> 56);
      }
#endif
      for (; i < n; i++) eq += cq[i] == cq[i - 1];
      for (uint32_t r = 1; r < nr; r++) eq -= cq[rf[r]] == cq[rf[r] - 1];
      refuse = eq != 0;
    }
  }
  if (refuse) return none ? KV_OK : kv_cs_fallback_block(w, s, nr);
  /* dense: every row has one cell of every referenced qualifier, so rank = row (no walk) */
  bool fast = pl->fast && !pl->keyed; /* keyed: the row view checks every row's key */
  bool dense = (!pl->fast || pl->keyed) && pl->n_ref > 0 && nr > 2;
  for (uint32_t j = 0; j < pl->n_ref && dense; j++)
    dense = s->g[j].d >= 0 && s->g[j].count == nr;
  for (uint32_t j = 0; j < pl->n_ref; j++) {
    rgroup *g = &s->g[j];
    if (g->d >= 0 && (!g->fixed || g->w > 8 || (!fast && (!dense || pl->keyed)))) {
      rc = kv_cs_flatten(g, &why);
      if (rc == KV_ERR_CORRUPT) goto corrupt;
      if (rc) return rc;
    }
  }
  if (pl->keyed) { /* row by row, through the row view (kv/colscan/colscan_rows.c) */
    rc = kv_cs_view_walk(w, s, nr, n, dense, dref, inq);
    if (!rc && !none) rc = kv_cs_view_block(w, s, nr);
    if (!rc && pl->colcache) kv_cs_view_to_cache(w, s, b, nr, n);
    return rc;
  }
  /* the first row, as a fragment (it may continue the previous block's last row) */
  cs_frag *f = &w->tmp;
  rc = make_frag(w, s, f, 0, s->rf[1], nr == 1, s->k0, s->k0_len, dref, inq);
  if (!rc) rc = kv_cs_feed(w, f);
  if (rc || nr == 1) {
    if (!rc && pl->colcache) kv_cs_to_cache(w, s, b, nr, n);
    return rc;
  }
  rc = kv_cs_flush(w);
  if (rc) return rc;
  /* rows 1 .. nr-2 */
  if (nr > 2) {
    if (fast) {
      rgroup *g = &s->g[0];
      uint32_t qcount = 0;
      bool q_only = sp->n_quals == 1;
      if (!q_only) {
        for (uint32_t r = 1; r + 1 < nr; r++)
          for (uint32_t i = s->rf[r]; i < s->rf[r + 1]; i++)
            if (inq[s->cq[i]] && kv_cs_is_put(s, i)) { qcount++; break; }
      }
      if (g->d >= 0) {
        /* ranks of the interior rows: skip the first row's and the last row's cells */
        uint32_t k0 = 0, k1 = g->count;
        for (uint32_t i = 0; i < s->rf[1]; i++) k0 += s->cq[i] == (uint8_t)g->d && kv_cs_is_put(s, i);
        for (uint32_t i = s->rf[nr - 1]; i < n; i++) k1 -= s->cq[i] == (uint8_t)g->d && kv_cs_is_put(s, i);
        if (q_only) qcount = k1 > k0 ? k1 - k0 : 0;
        rc = kv_cs_fast_interior(w, s, g, k0, k1, &why);
        if (rc == KV_ERR_CORRUPT) goto corrupt;
        if (rc) return rc;
      }
      w->rows_examined += qcount;
    } else if (dense) {
      rc = kv_cs_dense_interior(w, s, nr, &why);
      if (rc == KV_ERR_CORRUPT) goto corrupt;
      if (rc) return rc;
    } else {
      /* general path: align each interior row's referenced values */
      for (uint32_t j = 0; j < pl->n_ref; j++) s->rank[j] = 0;
      for (uint32_t i = 0; i < s->rf[1]; i++)
        if (dref[s->cq[i]] >= 0 && kv_cs_is_put(s, i)) s->rank[dref[s->cq[i]]]++;
      if (kv_cs_batch_room(s, nr, sp->n_args)) return KV_ERR_NOMEM;
      uint32_t hits = 0;
      const uint8_t *vp[KV_COLAGG_MAX_QUALS];
      uint32_t vl[KV_COLAGG_MAX_QUALS];
      for (uint32_t r = 1; r + 1 < nr; r++) {
        bool hq = false;
        for (uint32_t j = 0; j < pl->n_ref; j++) vp[j] = NULL;
        for (uint32_t i = s->rf[r]; i < s->rf[r + 1]; i++) {
          if (!kv_cs_is_put(s, i)) continue;
          uint8_t d = s->cq[i];
          hq |= inq[d];
          int j = dref[d];
          if (j < 0) continue;
          uint32_t k = s->rank[j]++;
          vp[j] = s->g[j].ptr[k];
          vl[j] = s->g[j].len[k];
        }
        if (!hq) continue;
        w->rows_examined++;
        bool ok = true;
        for (uint32_t q = 0; q < sp->n_preds && ok; q++) {
          uint32_t j = pl->pred_ref[q];
          ok = vp[j] && kv_cs_pass(&sp->preds[q], vp[j], vl[j]);
        }
        if (!ok) continue;
        for (uint32_t a = 0; a < sp->n_args; a++) {
          uint32_t j = pl->arg_ref[a];
          s->vp[a][hits] = vp[j];
          s->vl[a][hits] = vp[j] ? vl[j] : 0;
        }
        hits++;
      }
      rc = kv_cs_consume(w, s, hits);
      if (rc) return rc;
    }
  }
  /* the last row, as a fragment (it may continue in the next block) */
  rc = make_frag(w, s, f, s->rf[nr - 1], n, true, s->k1, s->k1_len, dref, inq);
  if (!rc) rc = kv_cs_feed(w, f);
  if (!rc && pl->colcache) kv_cs_to_cache(w, s, b, nr, n);
  return rc;
corrupt:
  return kv_error(KV_ERR_CORRUPT, "store file %s: block at offset %llu: %s", rd->path,
                  (unsigned long long)e->off, why);
}

void kv_cs_run_chunk(cs_worker *w) {
  bscratch *s = w->scratch;
  if (!s) {
    s = w->scratch = calloc(1, sizeof *s);
    if (!s) {
      w->rc = KV_ERR_NOMEM;
      snprintf(w->msg, sizeof w->msg, "columnar scan: out of memory");
      return;
    }
  }
  for (uint32_t i = 0; i < w->n_blocks && !w->consumer_rc; i++) {
    uint64_t hits = w->hits;
    int rc = do_block(w, s, &w->blocks[i]);
    if (rc) {
      w->rc = rc;
      snprintf(w->msg, sizeof w->msg, "%s",
               rc == KV_ERR_NOMEM ? "columnar scan: out of memory" : kv_errmsg());
      return;
    }
    if (w->hit_map) w->hit_map[i] = w->hits != hits;
    w->done = i + 1;
  }
  /* the chunk's last row stays open for the merge */
  cs_frag t = w->tail;
  w->tail = w->pending;
  w->pending = t;
  w->pending.kind = CF_NONE;
}

void kv_cs_worker_free(cs_worker *w) {
  free(w->hit_map);
  w->hit_map = NULL;
  bscratch *s = w->scratch;
  if (s) {
    free(s->rf);
    free(s->cq);
    free(s->pat);
    free(s->k0);
    free(s->k1);
    free(s->kb);
    free(s->ko);
    free(s->kin);
    free(s->pass);
    free(s->sel);
    for (uint32_t a = 0; a < KV_COLAGG_MAX_ARGS; a++) {
      free((void *)s->vp[a]);
      free(s->vl[a]);
    }
    free(s->hq_own);
    for (uint32_t j = 0; j < KV_COLAGG_MAX_QUALS; j++) {
      free((void *)s->rvp[j]);
      free(s->rvl[j]);
      free(s->g[j].buf);
      free(s->g[j].dx);
      free((void *)s->g[j].ptr);
      free(s->g[j].len);
    }
    free(s);
  }
  w->scratch = NULL;
  kv_cs_frag_free(&w->pending);
  kv_cs_frag_free(&w->head);
  kv_cs_frag_free(&w->tail);
  kv_cs_frag_free(&w->tmp);
  for (uint32_t i = 0; i < w->n_ranges; i++) {
    free(w->ranges[i].start);
    free(w->ranges[i].end);
  }
  free(w->ranges);
  w->ranges = NULL;
  w->n_ranges = w->cap_ranges = 0;
  kv_sfbuf_free(&w->disk);
  kv_sfbuf_free(&w->raw);
  kv_sf_sections_free(&w->sec);
}
