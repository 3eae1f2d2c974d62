/*
** kv/sf/sf_cblock.c: decoding a raw store file block into the compact form of kv/sf/sf_cblock.h,
** and locating a cell's value rank.
**
** The decoder reads the raw layout of docs/FORMAT.md Part 2 ("Raw block") and trusts
** nothing: every read is bounded by the block's end, every count and index is checked, the
** value groups must add up and the block must end exactly where its last group ends (the
** same checks as kv/sf/sf_decode.c, which decodes the same bytes into per-cell arrays). It
** allocates only when a block is larger than any the decoder held before, never per cell,
** and it never un-transposes values: fixed-width groups stay as the raw block holds them.
** The per-cell streams are read a word at a time where they are runs of one-byte varints
** (range and form checked eight bytes at once), the value groups' cells counted in the same
** pass that takes the rank checkpoints; a block that is not such a run takes the byte-wise
** path, with the same checks and the same messages. A sectioned block may be decoded in part
** (kv_sf_cblock_decode_part): section 0 and the wanted value groups inflated and decoded,
** each checked to fill its section, the other groups only counted (absent).
** Not here: I/O, framing, iteration, the packed forms the block cache keeps
** (kv/sf/sf_cpack.c).
*/
#include "kv/sf/sf_cblock.h"
#include "kv/sf/sf_dec.h"
#include "kv/util/coding.h"

#define CORRUPT(msg) do { *why = (msg); return KV_ERR_CORRUPT; } while (0)
#define GET(p, lim, v, msg) do { if (!((p) = kv_get_varint((p), (lim), (v)))) CORRUPT(msg); } while (0)
#define GET1(p, lim, v, msg) do { \
    if ((p) < (lim) && *(p) < 0x80) *(v) = *(p)++; else GET(p, lim, v, msg); } while (0)
#define TS_BIAS 0x8000000000000000ull /* signed timestamps stored as unsigned, order kept */

void kv_sf_cdec_free(kv_sf_cdec *w) {
  kv_sfbuf_free(&w->arena);
  kv_sfbuf_free(&w->dexp);
  free(w->groups);
  free(w->t64);
  free(w->t32);
  free(w->tck);
  memset(w, 0, sizeof *w);
}

static uint8_t width_of(uint64_t range) {
  return range == 0 ? 0 : range <= 0xff ? 1 : range <= 0xffff ? 2 : range <= 0xffffffffu ? 4 : 8;
}

#define HI8 0x8080808080808080ull  /* the high bit of every byte of a word */
#define ONE8 0x0101010101010101ull /* one in every byte */

/* Whether each of the n bytes at p is below bound (1..0x80): then they are n one-byte
** varints, each below bound. Eight bytes at a time: a byte b < 0x80 gives b + 0x80 - bound
** below 0x80 exactly when b < bound, and no byte's sum carries into the next. */
static bool bytes_below(const uint8_t *p, size_t n, uint32_t bound) {
  uint64_t add = (uint64_t)(0x80 - bound) * ONE8, acc = 0;
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t x;
    memcpy(&x, p + i, 8);
    acc |= x | (x + add);
  }
  if (acc & HI8) return false;
  for (; i < n; i++)
    if (p[i] >= bound) return false;
  return true;
}


/* Room in the arena for a packed array of n numbers in [mn, mx]: *d gets its bytes, NULL
** when the array needs none (no numbers, or all equal). */
static int pack_room(kv_sf_cdec *w, uint32_t n, uint64_t mn, uint64_t mx, kv_sf_pa *out,
                     uint8_t **d) {
  memset(out, 0, sizeof *out);
  *d = NULL;
  if (n == 0) return KV_OK;
  out->base = mn;
  out->w = width_of(mx - mn);
  if (!out->w) return KV_OK;
  if (kv_sfbuf_room(&w->arena, (size_t)n * out->w, &out->off)) return KV_ERR_NOMEM;
  *d = w->arena.p + out->off;
  return KV_OK;
}

/* Store v[0..n) - mn at d, width w bytes each (one loop per width, no per-number switch). */
#define PACK_STORE(v, n, mn, wd, d) do { \
    if ((wd) == 1) { \
      for (uint32_t i_ = 0; i_ < (n); i_++) (d)[i_] = (uint8_t)((v)[i_] - (mn)); \
    } else if ((wd) == 2) { \
      for (uint32_t i_ = 0; i_ < (n); i_++) { \
        uint16_t y_ = (uint16_t)((v)[i_] - (mn)); \
        memcpy((d) + (size_t)i_ * 2, &y_, 2); \
      } \
    } else if ((wd) == 4) { \
      for (uint32_t i_ = 0; i_ < (n); i_++) { \
        uint32_t y_ = (uint32_t)((v)[i_] - (mn)); \
        memcpy((d) + (size_t)i_ * 4, &y_, 4); \
      } \
    } else { \
      for (uint32_t i_ = 0; i_ < (n); i_++) { \
        uint64_t y_ = (uint64_t)((v)[i_] - (mn)); \
        memcpy((d) + (size_t)i_ * 8, &y_, 8); \
      } \
    } } while (0)

/* Store n numbers v, all in [mn, mx], as a packed array (narrowest width for the range). */
static int pack64_in(kv_sf_cdec *w, const uint64_t *v, uint32_t n, uint64_t mn, uint64_t mx,
                     kv_sf_pa *out) {
  uint8_t *d;
  if (pack_room(w, n, mn, mx, out, &d)) return KV_ERR_NOMEM;
  if (d) PACK_STORE(v, n, mn, out->w, d);
  return KV_OK;
}

static int pack32(kv_sf_cdec *w, const uint32_t *v, uint32_t n, kv_sf_pa *out) {
  uint32_t mn = UINT32_MAX, mx = 0;
  for (uint32_t i = 0; i < n; i++) {
    mn = v[i] < mn ? v[i] : mn;
    mx = v[i] > mx ? v[i] : mx;
  }
  uint8_t *d;
  if (pack_room(w, n, mn, mx, out, &d)) return KV_ERR_NOMEM;
  if (d) PACK_STORE(v, n, mn, out->w, d);
  return KV_OK;
}

/* The qualifier indexes: four bits each when the dictionary has at most 16 entries. */
static int pack_qual(kv_sf_cdec *w, const uint32_t *v, uint32_t n, uint32_t nq,
                     kv_sf_pa *out) {
  if (nq > 16 || nq < 2) return pack32(w, v, n, out);
  memset(out, 0, sizeof *out);
  out->w = 3;
  if (kv_sfbuf_room(&w->arena, ((size_t)n + 1) / 2, &out->off)) return KV_ERR_NOMEM;
  uint8_t *d = w->arena.p + out->off;
  uint32_t h = n / 2;
  for (uint32_t k = 0; k < h; k++) d[k] = (uint8_t)(v[2 * k] | v[2 * k + 1] << 4);
  if (n & 1) d[h] = (uint8_t)v[n - 1];
  return KV_OK;
}

static int reserve(kv_sf_cdec *w, size_t ncells, size_t ng) {
  if (kv_sf_grow((void **)&w->t64, &w->t64_cap, ncells + 1, sizeof *w->t64)) return KV_ERR_NOMEM;
  if (kv_sf_grow((void **)&w->t32, &w->t32_cap, 2 * (ncells + 2), sizeof *w->t32))
    return KV_ERR_NOMEM;
  if (kv_sf_grow((void **)&w->groups, &w->groups_cap, ng, sizeof *w->groups)) return KV_ERR_NOMEM;
  return KV_OK;
}

/* Rows section: row_first (from the cells-per-row stream) and the keys. rf gets the nrows+1
** first cells. */
static int decode_rows(kv_sf_cdec *w, const uint8_t **pp, const uint8_t *lim, uint32_t *rf,
                       const char **why) {
  kv_sf_cblock *b = &w->b;
  const uint8_t *p = *pp;
  uint32_t n = b->nrows;
  uint64_t v = 0, mode = 0;
  int crc = kv_sf_cells_per_row(&p, lim, n, b->ncells, rf, why);
  if (crc) return crc;
  if (pack32(w, rf, n + 1, &b->row_first)) return KV_ERR_NOMEM;
  kv_sf_rows_layout L;
  int lrc = kv_sf_rows_layout_read(&p, lim, n, &L, why);
  if (lrc) return lrc;
  mode = L.mode;
  if (mode == KV_SF_ROWS_FIXED || mode == KV_SF_ROWS_DELTA) {
    uint64_t klen = L.key_len, lcp = L.lcp;
    uint32_t sw = L.suffix;
    w->prefix_off = (size_t)(L.prefix - w->raw);
    /* 8 bytes of slack: a delta-coded suffix is stored as a whole word */
    if (kv_sfbuf_room(&w->arena, (size_t)sw * n + 8, &w->keys_off)) return KV_ERR_NOMEM;
    uint8_t *k = w->arena.p + w->keys_off;
    if (mode == KV_SF_ROWS_FIXED) {
      if ((uint64_t)sw * n > (uint64_t)(lim - p)) CORRUPT("key suffixes run past the block");
      for (uint32_t j = 0; j < sw; j++, p += n)
        for (uint32_t r = 0; r < n; r++) k[(size_t)r * sw + j] = p[r];
    } else {
      uint64_t val = 0, max = sw == 8 ? UINT64_MAX : (1ull << (8 * sw)) - 1;
      const uint8_t *pv = p; /* the last varint read and its length: hourly rows repeat it */
      size_t pl = 0;
      for (uint32_t r = 0; r < n; r++) {
        if (pl && lim - p >= 8 && kv_sf_same_bytes(p, pv, pl)) { /* the same varint: v again */
          p += pl;
        } else {
          pv = p;
          GET1(p, lim, &v, "truncated key delta stream");
          pl = (size_t)(p - pv) <= 8 ? (size_t)(p - pv) : 0;
        }
        if (v > max - val) CORRUPT("key delta out of range");
        val += v;
        uint8_t *dst = k + (size_t)r * sw;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
        if (sw) { /* the sw low bytes big-endian first, then sw..7 bytes of slack */
          uint64_t be = __builtin_bswap64(val << (64 - 8 * sw));
          memcpy(dst, &be, 8);
        }
#else
        for (uint32_t j = 0; j < sw; j++) dst[j] = (uint8_t)(val >> (8 * (sw - 1 - j)));
#endif
      }
    }
    b->klen = (uint32_t)klen; /* 0 (every key empty): the variable form, offsets all 0 */
    b->lcp = (uint32_t)lcp;
    b->max_key = (uint32_t)klen;
    memset(&b->key_off, 0, sizeof b->key_off);
    *pp = p;
    return KV_OK;
  }
  if (mode != KV_SF_ROWS_PREFIX) CORRUPT("unknown rows mode");
  uint32_t *sh = w->t32 + (w->t32_cap / 2); /* shared lengths, then key offsets */
  for (uint32_t r = 0; r < n; r++) {
    GET(p, lim, &v, "truncated shared-prefix stream");
    if (v > KV_MAX_ROW_KEY || (r == 0 && v != 0)) CORRUPT("bad shared-prefix length");
    sh[r] = (uint32_t)v;
  }
  const uint8_t *lens = p, *lens_end, *suf;
  uint64_t suf_total = 0, key_total = 0, prev_len = 0, max_key = 0;
  for (uint32_t r = 0; r < n; r++) {
    GET(p, lim, &v, "truncated suffix length stream");
    if (sh[r] > prev_len) CORRUPT("shared prefix longer than the previous key");
    prev_len = sh[r] + v;
    if (v > KV_MAX_ROW_KEY || prev_len > KV_MAX_ROW_KEY) CORRUPT("row key too long");
    suf_total += v;
    key_total += prev_len;
    if (prev_len > max_key) max_key = prev_len;
  }
  lens_end = p;
  if (suf_total > (uint64_t)(lim - p)) CORRUPT("suffix bytes run past the block");
  if (key_total > KV_SF_MAX_KEY_BYTES) CORRUPT("row keys too large");
  suf = p;
  p += suf_total;
  if (kv_sfbuf_room(&w->arena, key_total + 1, &w->keys_off)) return KV_ERR_NOMEM;
  uint8_t *k = w->arena.p + w->keys_off;
  uint32_t off = 0, plen = 0;
  for (uint32_t r = 0; r < n; r++) {
    uint32_t s = sh[r];
    lens = kv_get_varint(lens, lens_end, &v); /* checked above */
    if (r) memmove(k + off, k + off - plen, s);
    memcpy(k + off + s, suf, v);
    suf += v;
    sh[r] = off;
    plen = s + (uint32_t)v;
    off += plen;
  }
  sh[n] = off;
  b->klen = 0;
  b->lcp = 0;
  b->max_key = (uint32_t)max_key;
  if (pack32(w, sh, n + 1, &b->key_off)) return KV_ERR_NOMEM;
  *pp = p;
  return KV_OK;
}

/* Whether no row holds two cells of one qualifier. A row's cells are sorted by qualifier,
** so two cells of one qualifier are neighbours: neighbours must differ in dictionary index
** and, unless the dictionary's entries are known to differ (a writer never repeats one, a
** damaged block might), in bytes. dict/qo/ql: the dictionary; rf: nrows + 1 first cells;
** qual: per cell dictionary index. */
static bool one_cell_per_qualifier(const uint8_t *dict, const uint32_t *qo, const uint32_t *ql,
                                   uint32_t nq, const uint32_t *rf, uint32_t nrows,
                                   const uint32_t *qual) {
  bool unique = nq <= 64;
  for (uint32_t a = 0; a < nq && unique && nq > 1; a++)
    for (uint32_t c = a + 1; c < nq; c++)
      if (ql[a] == ql[c] && (ql[a] == 0 || memcmp(dict + qo[a], dict + qo[c], ql[a]) == 0)) {
        unique = false;
        break;
      }
  if (unique) { /* neighbours with one index, less those across a row boundary (a row holds
                   at least one cell: row starts are distinct) */
    uint32_t n = rf[nrows], eq = 0;
    for (uint32_t i = 1; i < n; i++) eq += qual[i] == qual[i - 1];
    for (uint32_t r = 1; r < nrows; r++) eq -= qual[rf[r]] == qual[rf[r] - 1];
    return eq == 0;
  }
  for (uint32_t r = 0; r < nrows; r++)
    for (uint32_t i = rf[r] + 1; i < rf[r + 1]; i++) {
      uint32_t x = qual[i - 1], y = qual[i];
      if (x == y) return false;
      if (!unique && ql[x] == ql[y] &&
          (ql[x] == 0 || memcmp(dict + qo[x], dict + qo[y], ql[x]) == 0))
        return false;
    }
  return true;
}

/* Resolve the arena offsets of a packed array into a pointer from `base`. */
static void resolve(kv_sf_pa *a, const uint8_t *base) { a->p = a->w ? base + a->off : NULL; }

/* kv_sf_cblock_decode, or with pt (section 0 already inflated into raw) the part decode of
** kv_sf_cblock_decode_part: the walk up to the value groups stays in section 0, each group
** is read in its own section or left absent. */
static int decode_any(kv_sf_cdec *w, const uint8_t *raw, size_t len, kv_sf_cpart *pt,
                      const char **why) {
  const uint8_t *p = raw, *lim = pt ? raw + pt->sec->raw_off[1] : raw + len;
  uint64_t nrows = 0, ncells = 0, nquals = 0, min_seq = 0, v = 0;
  kv_sf_cblock *b = &w->b;
  *why = NULL;
  memset(b, 0, sizeof *b);
  w->arena.len = 0;
  w->dexp.len = 0;
  w->raw = raw;
  if (!(p = kv_sf_raw_header(p, lim, &nrows, &ncells, &nquals, &min_seq, why)))
    return KV_ERR_CORRUPT;
  uint32_t n = (uint32_t)ncells, nq = (uint32_t)nquals, ng = nq + 1;
  if (reserve(w, n, ng)) return KV_ERR_NOMEM;
  b->nrows = (uint32_t)nrows;
  b->ncells = n;
  b->nquals = nq;
  /* dictionary: offsets and lengths relative to its first byte */
  w->dict_off = (size_t)(p - raw);
  uint32_t *qo = w->t32, *ql = w->t32 + nq;
  for (uint32_t q = 0; q < nq; q++) {
    GET(p, lim, &v, "truncated qualifier dictionary");
    if (v > (uint64_t)(lim - p)) CORRUPT("qualifier runs past the block");
    qo[q] = (uint32_t)(p - raw - w->dict_off);
    ql[q] = (uint32_t)v;
    p += v;
  }
  w->dict_len = (size_t)(p - raw) - w->dict_off;
  if (kv_sfbuf_room(&w->arena, (size_t)nq * 4, &w->qoff_off) || kv_sfbuf_room(&w->arena, (size_t)nq * 4, &w->qlen_off))
    return KV_ERR_NOMEM;
  memcpy(w->arena.p + w->qoff_off, qo, (size_t)nq * 4);
  memcpy(w->arena.p + w->qlen_off, ql, (size_t)nq * 4);
  uint32_t *rf = w->t32; /* nrows + 1 first cells, until the timestamps are packed */
  int rc = decode_rows(w, &p, lim, rf, why);
  if (rc) return rc;
  uint32_t *qual = w->t32 + (w->t32_cap / 2); /* per cell dictionary index */
  if (nq > 1) {
    if ((size_t)(lim - p) >= n && bytes_below(p, n, nq < 0x80 ? nq : 0x80)) {
      for (uint32_t i = 0; i < n; i++) qual[i] = p[i]; /* n one-byte indexes, in range */
      p += n;
    } else {
      for (uint32_t i = 0; i < n; i++) {
        GET1(p, lim, &v, "truncated qualifier stream");
        if (v >= nq) CORRUPT("qualifier index out of range");
        qual[i] = (uint32_t)v;
      }
    }
  } else {
    memset(qual, 0, (size_t)n * sizeof *qual);
  }
  /* timestamps: words of eight one-byte deltas without a check each (a word of zero deltas
     repeats the timestamp); nz counts the cells whose delta is not zero */
  uint64_t ts = 0, *t64 = w->t64, ts_lo = UINT64_MAX, ts_hi = 0;
  uint32_t nz = 0;
  for (uint32_t i = 0; i < n;) {
    uint64_t x;
    if (n - i >= 8 && lim - p >= 8 && (memcpy(&x, p, 8), (x & HI8) == 0)) {
      if (x == 0) {
        uint64_t u = ts ^ TS_BIAS;
        for (uint32_t j = 0; j < 8; j++) t64[i + j] = u;
        ts_lo = u < ts_lo ? u : ts_lo;
        ts_hi = u > ts_hi ? u : ts_hi;
      } else {
        for (uint32_t j = 0; j < 8; j++) {
          ts += (uint64_t)kv_unzigzag(p[j]);
          uint64_t u = ts ^ TS_BIAS;
          t64[i + j] = u;
          ts_lo = u < ts_lo ? u : ts_lo;
          ts_hi = u > ts_hi ? u : ts_hi;
        }
        /* bytes not zero: b + 0x7f has its high bit set (no carry: b < 0x80) */
        nz += (uint32_t)(((((x + 0x7f * ONE8) & HI8) >> 7) * ONE8) >> 56);
      }
      p += 8;
      i += 8;
      continue;
    }
    GET1(p, lim, &v, "truncated timestamp stream");
    ts += (uint64_t)kv_unzigzag(v);
    nz += v != 0;
    uint64_t u = ts ^ TS_BIAS;
    t64[i++] = u;
    ts_lo = u < ts_lo ? u : ts_lo;
    ts_hi = u > ts_hi ? u : ts_hi;
  }
  b->min_ts = (int64_t)(ts_lo ^ TS_BIAS);
  b->max_ts = (int64_t)(ts_hi ^ TS_BIAS);
  /* every cell of a row has its row's timestamp when the only deltas not zero are at row
     starts (distinct cells: a row holds at least one) */
  uint32_t nz_first = 0;
  for (uint32_t r = 0; r < b->nrows; r++) {
    uint32_t i = rf[r];
    nz_first += i ? t64[i] != t64[i - 1] : t64[0] != TS_BIAS;
  }
  bool per_row = nz_first == nz;
  bool one_per_col = one_cell_per_qualifier(
      raw + w->dict_off, (const uint32_t *)(void *)(w->arena.p + w->qoff_off),
      (const uint32_t *)(void *)(w->arena.p + w->qlen_off), nq, rf, b->nrows, qual);
  if (per_row) { /* the rows' timestamps are every cell's: the same range */
    for (uint32_t r = 0; r < b->nrows; r++) t64[r] = t64[rf[r]];
    rc = pack64_in(w, t64, b->nrows, ts_lo, ts_hi, &b->ts);
  } else {
    rc = pack64_in(w, t64, n, ts_lo, ts_hi, &b->ts);
  }
  if (rc) return KV_ERR_NOMEM;
  b->ts_per_row = per_row;
  if ((size_t)(lim - p) < n) CORRUPT("truncated type stream");
  const uint8_t *types = p;
  bool all_put = kv_sf_all_zero(types, n);
  for (uint32_t i = 0; i < n && !all_put; i++)
    if (types[i] > KV_DELETE_FAMILY) CORRUPT("bad cell type");
  p += n;
  memset(&b->type, 0, sizeof b->type);
  if (!all_put) {
    b->type.w = 1;
    if (kv_sfbuf_room(&w->arena, n, &b->type.off)) return KV_ERR_NOMEM;
    memcpy(w->arena.p + b->type.off, types, n);
  }
  if (n && min_seq <= UINT64_MAX - 0x7f && (size_t)(lim - p) >= n && bytes_below(p, n, 0x80)) {
    /* n one-byte sequence deltas: packed straight from the stream (width 0 or 1) */
    uint8_t lo = 0xff, hi = 0;
    for (uint32_t i = 0; i < n; i++) {
      lo = p[i] < lo ? p[i] : lo;
      hi = p[i] > hi ? p[i] : hi;
    }
    uint8_t *d;
    if (pack_room(w, n, min_seq + lo, min_seq + hi, &b->seq, &d)) return KV_ERR_NOMEM;
    if (d)
      for (uint32_t i = 0; i < n; i++) d[i] = (uint8_t)(p[i] - lo);
    b->max_seq = min_seq + hi;
    p += n;
  } else {
    uint64_t seq_lo = UINT64_MAX, seq_hi = 0;
    for (uint32_t i = 0; i < n; i++) {
      GET1(p, lim, &v, "truncated sequence stream");
      uint64_t s = min_seq + v;
      t64[i] = s;
      seq_lo = s < seq_lo ? s : seq_lo;
      seq_hi = s > seq_hi ? s : seq_hi;
    }
    b->max_seq = seq_hi;
    if (pack64_in(w, t64, n, seq_lo, seq_hi, &b->seq)) return KV_ERR_NOMEM;
  }
  b->one_put_per_col = all_put && one_per_col;
  /* cells per value group, with a snapshot of the counts before every cell k << shift (the
     rank checkpoints; the fixed-width bytes before each are added once the widths are
     known) */
  uint32_t shift = 7;
  while ((1ull << shift) < (uint64_t)(ng + 1) * 8 && shift < 31) shift++;
  uint32_t nck = (n >> shift) + 1, cw = ng + 1;
  if (kv_sf_grow((void **)&w->tck, &w->tck_cap, (size_t)nck * ng, sizeof *w->tck))
    return KV_ERR_NOMEM;
  uint32_t *cur = w->t32; /* the first cells of the rows are no longer needed: reuse */
  memset(cur, 0, (size_t)ng * sizeof *cur);
  for (uint32_t k = 0; k < nck; k++) {
    memcpy(w->tck + (size_t)k * ng, cur, (size_t)ng * sizeof *cur);
    uint64_t e64 = ((uint64_t)k + 1) << shift;
    uint32_t i = k << shift, e = e64 < n ? (uint32_t)e64 : n;
    if (all_put)
      for (; i < e; i++) cur[qual[i]]++;
    else
      for (; i < e; i++) cur[types[i] == KV_PUT ? qual[i] : nq]++;
  }
  kv_sf_cgroup *gs = w->groups;
  memset(gs, 0, (size_t)ng * sizeof *gs);
  for (uint32_t g = 0; g < ng; g++) gs[g].count = cur[g];
  /* value groups, in dictionary order, the non-put group last; empty ones are absent */
  uint32_t *offs = w->t32; /* the counts are in gs now: reuse */
  uint32_t ks = 0;         /* pt: sections of value groups passed */
  if (pt && p != lim) CORRUPT("rows and cells section does not end at the value groups");
  for (uint32_t g = 0; g < ng; g++) {
    kv_sf_cgroup *s = &gs[g];
    if (!s->count) continue;
    if (pt) { /* group g is section ks, inflated when wanted (the tombstones' always) */
      const kv_sf_sections *sec = pt->sec;
      if (++ks >= sec->n) CORRUPT("fewer sections than value groups");
      p = raw + sec->raw_off[ks];
      lim = raw + sec->raw_off[ks + 1];
      const uint32_t *qoa = (const uint32_t *)(void *)(w->arena.p + w->qoff_off);
      const uint32_t *qla = (const uint32_t *)(void *)(w->arena.p + w->qlen_off);
      if (g < nq && !pt->want(pt->ctx, raw + w->dict_off + qoa[g], qla[g])) {
        s->absent = 1;
        b->part = true;
        continue;
      }
      if (kv_sf_section_inflate(pt->disk, sec, ks, pt->raw, why)) return KV_ERR_CORRUPT;
      pt->inflated += (uint64_t)(lim - p);
    }
    uint64_t code = 0, a = 0, d = 0;
    GET(p, lim, &code, "truncated value group header");
    if (code == KV_SFDEC_CODE) { /* decimal-scaled: rebuilt into w->dexp, value by value (a
                                    reader takes a value where it lies, no gather) */
      kv_sfdec h;
      if (!(p = kv_sfdec_parse(p, lim, s->count, &h, why))) return KV_ERR_CORRUPT;
      size_t at = w->dexp.len;
      if (kv_sfbuf_reserve(&w->dexp, (size_t)8 * s->count)) return KV_ERR_NOMEM;
      kv_sfdec_expand(&h, w->dexp.p + at, 0);
      w->dexp.len += (size_t)8 * s->count;
      s->fixed = 1;
      s->transposed = 0;
      s->dec = 1;
      s->sc.planes = h.planes; /* in the raw block, kept for a narrow pack */
      s->sc.base = h.base;
      s->sc.k = h.k;
      s->sc.w = h.w;
      s->width = s->fw = 8;
      s->data_off = (uint32_t)at;
      s->data_len = 8 * s->count;
      if (s->width > b->max_width) b->max_width = s->width;
      if (pt && p != lim) CORRUPT("value group does not fill its section");
      continue;
    }
    if (code) {
      uint64_t bytes = (code - 1) * (uint64_t)s->count;
      if (code - 1 > UINT32_MAX || bytes > (uint64_t)(lim - p))
        CORRUPT("value group runs past the block");
      s->fixed = 1;
      s->transposed = 1;
      s->width = s->fw = (uint32_t)(code - 1);
      s->data_off = (uint32_t)(p - raw);
      s->data_len = (uint32_t)bytes;
      if (s->width > b->max_width) b->max_width = s->width;
      p += bytes;
      if (pt && p != lim) CORRUPT("value group does not fill its section");
      continue;
    }
    GET(p, lim, &a, "truncated value group header");
    GET(p, lim, &d, "truncated value group header");
    if (a > (uint64_t)(lim - p) || d > (uint64_t)(lim - p) - a)
      CORRUPT("value group runs past the block");
    const uint8_t *lp = p, *lend = p + a;
    uint64_t sum = 0;
    for (uint32_t k = 0; k < s->count; k++) {
      offs[k] = (uint32_t)sum;
      GET1(lp, lend, &v, "truncated value length stream");
      if (v > d - sum) CORRUPT("value runs past its group");
      sum += v;
    }
    offs[s->count] = (uint32_t)sum;
    if (lp != lend || sum != d) CORRUPT("value group lengths do not add up");
    s->data_off = (uint32_t)(p + a - raw);
    s->data_len = (uint32_t)d;
    if (pack32(w, offs, s->count + 1, &s->voff)) return KV_ERR_NOMEM;
    p += a + d;
    if (pt && p != lim) CORRUPT("value group does not fill its section");
  }
  if (pt) {
    if (ks + 1 != pt->sec->n) CORRUPT("more sections than value groups");
    p = lim = raw + len;
  }
  if (pack_qual(w, qual, n, nq, &b->qual)) return KV_ERR_NOMEM;
  /* checkpoints: per group the cells before cell k << shift, then the fixed-width value
     bytes before it in cell order (where a packed block keeps them); the arena's last
     allocation, narrowed to 16 bits in place when every number fits */
  if ((uint64_t)nck * cw * 4 > UINT32_MAX || kv_sfbuf_room(&w->arena, (size_t)nck * cw * 4, &w->ck_off))
    return KV_ERR_NOMEM;
  uint32_t *ck = (uint32_t *)(void *)(w->arena.p + w->ck_off), fixed_total = 0;
  for (uint32_t k = 0; k < nck; k++) {
    const uint32_t *snap = w->tck + (size_t)k * ng;
    uint32_t *row = ck + (size_t)k * cw, fo = 0;
    for (uint32_t g = 0; g < ng; g++) {
      row[g] = snap[g];
      fo += snap[g] * gs[g].fw;
    }
    row[ng] = fo;
  }
  for (uint32_t g = 0; g < ng; g++) fixed_total += gs[g].count * gs[g].fw;
  b->ck_shift = shift;
  b->ck_w = 4;
  if (n <= 0xFFFF && fixed_total <= 0xFFFF) { /* the totals bound every number */
    uint16_t *c16 = (uint16_t *)(void *)ck;
    size_t cnt = (size_t)nck * cw;
    for (size_t k = 0; k < cnt; k++) c16[k] = (uint16_t)ck[k]; /* front to back: safe */
    w->arena.len = w->ck_off + cnt * 2;
    b->ck_w = 2;
  }
  if (p != lim) CORRUPT("bytes after the last value group");
  /* pointers, now that the arena no longer moves */
  const uint8_t *ar = w->arena.p;
  resolve(&b->row_first, ar);
  resolve(&b->key_off, ar);
  resolve(&b->qual, ar);
  resolve(&b->type, ar);
  resolve(&b->ts, ar);
  resolve(&b->seq, ar);
  b->keys = ar + w->keys_off;
  b->prefix = b->klen ? raw + w->prefix_off : NULL;
  b->dict = raw + w->dict_off;
  b->q_off = (const uint32_t *)(const void *)(ar + w->qoff_off);
  b->q_len = (const uint32_t *)(const void *)(ar + w->qlen_off);
  b->ck = ar + w->ck_off;
  for (uint32_t g = 0; g < ng; g++) {
    if (!gs[g].dec) resolve(&gs[g].voff, ar); /* a dec group's union holds sc */
    gs[g].data = !gs[g].count || gs[g].absent ? NULL
                 : gs[g].dec ? w->dexp.p + gs[g].data_off : raw + gs[g].data_off;
  }
  b->groups = gs;
  kv_sf_cblock_set_shape(b);
  return KV_OK;
}

void kv_sf_cblock_set_shape(kv_sf_cblock *b) {
  uint32_t q = 0, nq = b->nquals;
  b->shape_len = 0;
  if (nq > KV_SF_SHAPE_MAX) return;
  for (; q < nq; q++) {
    const kv_sf_cgroup *g = &b->groups[q];
    if (b->q_len[q] != 1 || (g->fixed && g->fw > 254)) return;
    b->shape[2 * q] = b->dict[b->q_off[q]];
    b->shape[2 * q + 1] = (uint8_t)(g->fixed ? g->fw + 1 : 0);
  }
  b->shape_len = (uint8_t)(2 * nq);
}

int kv_sf_cblock_decode(kv_sf_cdec *w, const uint8_t *raw, size_t len, const char **why) {
  return decode_any(w, raw, len, NULL, why);
}

int kv_sf_cblock_decode_part(kv_sf_cdec *w, kv_sf_cpart *pt, const char **why) {
  const kv_sf_sections *sec = pt->sec;
  *why = NULL;
  if (sec->n < 2) CORRUPT("not a sectioned block");
  if (kv_sf_section_inflate(pt->disk, sec, 0, pt->raw, why)) return KV_ERR_CORRUPT;
  pt->inflated += sec->raw_off[1];
  return decode_any(w, pt->raw, sec->raw_off[sec->n], pt, why);
}

int kv_sf_cblock_key_cmp(const kv_sf_cblock *b, uint32_t r, const uint8_t *t, uint32_t tlen) {
  if (b->klen) {
    uint32_t n = b->lcp < tlen ? b->lcp : tlen;
    int c = kv_sf_bytes_cmp(b->prefix, n, t, n);
    if (c) return c;
    if (tlen < b->lcp) return 1;
    uint32_t w = b->klen - b->lcp;
    return kv_sf_bytes_cmp(b->keys + (size_t)r * w, w, t + b->lcp, tlen - b->lcp);
  }
  uint64_t o = kv_sf_pa_get(&b->key_off, r);
  return kv_sf_bytes_cmp(b->keys + o, (size_t)(kv_sf_pa_get(&b->key_off, r + 1) - o), t, tlen);
}

uint32_t kv_sf_cblock_rank(const kv_sf_cblock *b, kv_sf_rankpos *rp, uint32_t ci) {
  uint32_t ng = b->nquals + 1, span = 1u << b->ck_shift;
  uint32_t dist = rp->at == UINT32_MAX ? UINT32_MAX : ci > rp->at ? ci - rp->at : rp->at - ci;
  uint32_t *rk = rp->ranks;
  if (dist > span) {
    uint32_t k = ci >> b->ck_shift;
    if (b->ck_w == 2) {
      const uint16_t *c = (const uint16_t *)b->ck + (size_t)k * (ng + 1);
      for (uint32_t g = 0; g <= ng; g++) rk[g] = c[g];
    } else {
      memcpy(rk, (const uint32_t *)b->ck + (size_t)k * (ng + 1), (size_t)(ng + 1) * sizeof *rk);
    }
    rp->at = k << b->ck_shift;
  }
  const kv_sf_cgroup *gs = b->groups;
  if (b->qual.w == 0 && b->qual.step == 0 && b->type.w == 0 && b->type.step == 0 &&
      b->type.base == KV_PUT) { /* put-only block of one qualifier (a marker family's):
                                   every cell is in its group, no count needed */
    uint32_t g = (uint32_t)b->qual.base;
    rk[g] = rk[g] + ci - rp->at;             /* unsigned: wraps back when ci < at */
    rk[ng] = rk[ng] + (ci - rp->at) * gs[g].fw;
    rp->at = ci;
    return rk[g];
  }
  if (b->qual.w == 3 && b->type.w == 0) { /* put-only block, four-bit qualifiers */
    const uint8_t *qp = b->qual.p;
    uint32_t at = rp->at, fo = rk[ng];
    if (ci > at + 16 && b->nquals <= 16) { /* a seek from a checkpoint: count the cells of
                                             each entry a byte (two cells) at a time, the
                                             offset from the counts once */
      uint32_t cnt[16] = {0};
      if (at & 1) {
        cnt[qp[at >> 1] >> 4]++;
        at++;
      }
      for (; at + 2 <= ci; at += 2) {
        uint8_t x = qp[at >> 1];
        cnt[x & 15]++;
        cnt[x >> 4]++;
      }
      for (uint32_t g = 0; g < b->nquals; g++) {
        rk[g] += cnt[g];
        fo += cnt[g] * gs[g].fw;
      }
    }
    for (; at < ci; at++) {
      uint32_t g = (qp[at >> 1] >> ((at & 1) * 4)) & 15;
      rk[g]++;
      fo += gs[g].fw;
    }
    for (; at > ci;) {
      --at;
      uint32_t g = (qp[at >> 1] >> ((at & 1) * 4)) & 15;
      rk[g]--;
      fo -= gs[g].fw;
    }
    rp->at = at;
    rk[ng] = fo;
    return rk[(qp[ci >> 1] >> ((ci & 1) * 4)) & 15];
  }
  if (b->qual.w == 1 && b->type.w == 0) { /* put-only block, byte-wide qualifiers */
    const uint8_t *qp = b->qual.p;
    uint32_t base = (uint32_t)b->qual.base, at = rp->at, fo = rk[ng];
    for (; at < ci; at++) {
      uint32_t g = base + qp[at];
      rk[g]++;
      fo += gs[g].fw;
    }
    for (; at > ci;) {
      uint32_t g = base + qp[--at];
      rk[g]--;
      fo -= gs[g].fw;
    }
    rp->at = at;
    rk[ng] = fo;
    return rk[base + qp[ci]];
  }
  while (rp->at < ci) {
    uint32_t g = kv_sf_cblock_group(b, rp->at++);
    rk[g]++;
    rk[ng] += gs[g].fw;
  }
  while (rp->at > ci) {
    uint32_t g = kv_sf_cblock_group(b, --rp->at);
    rk[g]--;
    rk[ng] -= gs[g].fw;
  }
  return rk[kv_sf_cblock_group(b, ci)];
}
