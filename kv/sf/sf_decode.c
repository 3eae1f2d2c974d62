/*
** kv/sf/sf_decode.c: decoding a raw store file block (the layout written by kv/sf/sf_block.c and
** described in docs/FORMAT.md Part 2, "Data block") into the per-block arrays of a
** kv_sf_dblock: rebuilt full row keys, the first cell of each row, and per cell its
** qualifier, timestamp, type, sequence number and value pointer.
**
** The decoder trusts nothing: every read is bounded by the block's end, every count and
** index is checked, and the block must end exactly where its last section ends. It
** allocates only when a block is larger than any the kv_sf_dblock held before (arrays
** grow, never shrink), never per cell. It does not check that cells are in order (the
** block checksum stands for that) and does no I/O.
**
** A projected read (kv_sf_block_decode_keep) decodes every key, timestamp, type and
** sequence number but only the value groups of the qualifiers kept: the other groups are
** neither un-transposed nor walked, and the value slots of their cells are left as they
** were (the caller never reads them).
*/
#include "kv/util/coding.h"
#include "kv/sf/sf_int.h"
#include "kv/sf/sf_dec.h"

typedef struct gstate {
  uint32_t count;        /* cells in the group */
  uint32_t width;        /* fixed value width (when fixed) */
  uint8_t fixed;         /* fixed width group */
  uint8_t skip;          /* not decoded (a projected read): cells get an empty value */
  const uint8_t *lp;     /* variable: next length varint */
  const uint8_t *lend;   /* variable: end of the length stream */
  const uint8_t *dp;     /* next value bytes */
  const uint8_t *dend;   /* end of the group's value bytes */
  uint32_t rank;         /* kv_sf_block_values: cells of the group walked so far */
  const uint8_t *clp;    /* kv_sf_block_values: variable group's length cursor */
  const uint8_t *cdp;    /* kv_sf_block_values: variable group's value cursor */
  uint8_t dec;           /* decimal-scaled (fixed, width 8): values rebuilt from dh */
  kv_sfdec dh;           /* dec: the group's header and offset planes */
} gstate;

#define CORRUPT(msg) do { *why = (msg); return KV_ERR_CORRUPT; } while (0)
#define GET(p, lim, v, msg) do { if (!((p) = kv_get_varint((p), (lim), (v)))) CORRUPT(msg); } while (0)
/* GET with the one-byte case inline (the common one in the per-cell streams). */
#define GET1(p, lim, v, msg) do { \
    if ((p) < (lim) && *(p) < 0x80) *(v) = *(p)++; else GET(p, lim, v, msg); } while (0)

/* Whether the n bytes at p are all 0x01, eight at a time. */
static bool all_ones(const uint8_t *p, size_t n) {
  uint64_t acc = 0;
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t x;
    memcpy(&x, p + i, 8);
    acc |= x ^ 0x0101010101010101ull;
  }
  for (; i < n; i++) acc |= p[i] ^ 1u;
  return acc == 0;
}

int kv_sf_cells_per_row(const uint8_t **pp, const uint8_t *lim, uint32_t nrows, uint32_t ncells,
                        uint32_t *first, const char **why) {
  const uint8_t *p = *pp;
  uint64_t v = 0, cells = 0;
  first[0] = 0;
  if (nrows == ncells && (size_t)(lim - p) >= nrows && all_ones(p, nrows)) {
    /* one cell per row (a key family's blocks): the stream is nrows bytes 01 */
    for (uint32_t r = 1; r <= nrows; r++) first[r] = r;
    *pp = p + nrows;
    return KV_OK;
  }
  for (uint32_t r = 0; r < nrows; r++) {
    GET1(p, lim, &v, "truncated cells-per-row stream");
    if (v == 0 || v > ncells - cells) CORRUPT("bad cells-per-row count");
    cells += v;
    first[r + 1] = (uint32_t)cells;
  }
  if (cells != ncells) CORRUPT("cells per row do not add up to the block's cells");
  *pp = p;
  return KV_OK;
}

int kv_sf_rows_layout_read(const uint8_t **pp, const uint8_t *lim, uint32_t nrows,
                           kv_sf_rows_layout *out, const char **why) {
  const uint8_t *p = *pp;
  memset(out, 0, sizeof *out);
  GET(p, lim, &out->mode, "truncated rows header");
  if (out->mode == KV_SF_ROWS_FIXED || out->mode == KV_SF_ROWS_DELTA) {
    uint64_t klen = 0, lcp = 0;
    GET(p, lim, &klen, "truncated rows header");
    GET(p, lim, &lcp, "truncated rows header");
    if (klen > KV_MAX_ROW_KEY || lcp > klen || lcp > (uint64_t)(lim - p))
      CORRUPT("bad row key length or common prefix");
    if (out->mode == KV_SF_ROWS_DELTA && klen - lcp > 8) CORRUPT("delta-coded key suffix over 8 bytes");
    if (klen * nrows > KV_SF_MAX_KEY_BYTES) CORRUPT("row keys too large");
    out->key_len = (uint32_t)klen;
    out->lcp = (uint32_t)lcp;
    out->suffix = (uint32_t)(klen - lcp);
    out->prefix = p;
    p += lcp;
  }
  *pp = p;
  return KV_OK;
}

void kv_sf_dblock_free(kv_sf_dblock *d) {
  free(d->row_off);
  free(d->row_first);
  free(d->keys);
  free(d->q_ptr);
  free(d->q_len);
  free(d->c_qual);
  free(d->c_ts);
  free(d->c_seq);
  free(d->c_type);
  free(d->c_val);
  free(d->c_vlen);
  free(d->vbuf);
  free(d->gstate);
  memset(d, 0, sizeof *d);
}

/* Grow the arrays to nrows rows, ncells cells, nquals dictionary entries. */
static int reserve(kv_sf_dblock *d, size_t nrows, size_t ncells, size_t nquals) {
  if (nrows + 1 > d->rows_cap) {
    size_t cap = d->rows_cap;
    if (kv_sf_grow((void **)&d->row_off, &cap, nrows + 1, sizeof *d->row_off)) return 1;
    cap = d->rows_cap;
    if (kv_sf_grow((void **)&d->row_first, &cap, nrows + 1, sizeof *d->row_first)) return 1;
    d->rows_cap = cap;
  }
  if (ncells > d->cells_cap) {
    size_t c0 = d->cells_cap, cap;
    cap = c0; if (kv_sf_grow((void **)&d->c_qual, &cap, ncells, sizeof *d->c_qual)) return 1;
    cap = c0; if (kv_sf_grow((void **)&d->c_ts, &cap, ncells, sizeof *d->c_ts)) return 1;
    cap = c0; if (kv_sf_grow((void **)&d->c_seq, &cap, ncells, sizeof *d->c_seq)) return 1;
    cap = c0; if (kv_sf_grow((void **)&d->c_type, &cap, ncells, sizeof *d->c_type)) return 1;
    cap = c0; if (kv_sf_grow((void **)&d->c_val, &cap, ncells, sizeof *d->c_val)) return 1;
    cap = c0; if (kv_sf_grow((void **)&d->c_vlen, &cap, ncells, sizeof *d->c_vlen)) return 1;
    d->cells_cap = cap;
  }
  if (nquals + 1 > d->quals_cap) {  /* q_ptr, q_len and gstate grow in step */
    size_t c0 = d->quals_cap, cap;
    cap = c0; if (kv_sf_grow((void **)&d->q_ptr, &cap, nquals + 1, sizeof *d->q_ptr)) return 1;
    cap = c0; if (kv_sf_grow((void **)&d->q_len, &cap, nquals + 1, sizeof *d->q_len)) return 1;
    cap = c0; if (kv_sf_grow(&d->gstate, &cap, nquals + 1, sizeof(gstate))) return 1;
    d->quals_cap = d->groups_cap = cap;
  }
  return 0;
}

/* Rows section: the first cell of each row, then rebuild the full keys into d->keys. */
static int decode_rows(kv_sf_dblock *d, const uint8_t **pp, const uint8_t *lim,
                       const char **why) {
  const uint8_t *p = *pp;
  uint32_t n = d->nrows;
  uint64_t v = 0, mode = 0;
  int crc = kv_sf_cells_per_row(&p, lim, n, d->ncells, d->row_first, why);
  if (crc) return crc;
  kv_sf_rows_layout L;
  int lrc = kv_sf_rows_layout_read(&p, lim, n, &L, why);
  if (lrc) return lrc;
  mode = L.mode;
  if (mode == KV_SF_ROWS_FIXED || mode == KV_SF_ROWS_DELTA) {
    uint64_t klen = L.key_len, lcp = L.lcp;
    uint32_t w = L.suffix;
    if (kv_sf_grow((void **)&d->keys, &d->keys_cap, klen * n + 1, 1)) return KV_ERR_NOMEM;
    const uint8_t *prefix = L.prefix;
    uint8_t *k = d->keys;
    for (uint32_t r = 0; r < n; r++) {
      memcpy(k + (size_t)r * klen, prefix, lcp);
      d->row_off[r] = (uint32_t)(r * klen);
    }
    d->row_off[n] = (uint32_t)(n * klen);
    if (mode == KV_SF_ROWS_FIXED) {
      if ((uint64_t)w * n > (uint64_t)(lim - p)) CORRUPT("key suffixes run past the block");
      for (uint32_t j = 0; j < w; j++, p += n)
        for (uint32_t r = 0; r < n; r++) k[(size_t)r * klen + lcp + j] = p[r];
    } else {
      uint64_t val = 0, max = w == 8 ? UINT64_MAX : (1ull << (8 * w)) - 1;
      for (uint32_t r = 0; r < n; r++) {
        GET(p, lim, &v, "truncated key delta stream");
        if (v > max - val) CORRUPT("key delta out of range");
        val += v;
        uint8_t *dst = k + (size_t)r * klen + lcp;
        for (uint32_t j = 0; j < w; j++) dst[j] = (uint8_t)(val >> (8 * (w - 1 - j)));
      }
    }
    *pp = p;
    return KV_OK;
  }
  if (mode != KV_SF_ROWS_PREFIX) CORRUPT("unknown rows mode");
  /* Prefix compression. Shared lengths are kept in row_off[] until the keys are rebuilt. */
  for (uint32_t r = 0; r < n; r++) {
    GET(p, lim, &v, "truncated shared-prefix stream");
    if (v > KV_MAX_ROW_KEY || (r == 0 && v != 0)) CORRUPT("bad shared-prefix length");
    d->row_off[r] = (uint32_t)v;
  }
  const uint8_t *lens = p, *lens_end, *suf;
  uint64_t suf_total = 0, key_total = 0, prev_len = 0;
  for (uint32_t r = 0; r < n; r++) {
    GET(p, lim, &v, "truncated suffix length stream");
    if (d->row_off[r] > prev_len) CORRUPT("shared prefix longer than the previous key");
    prev_len = d->row_off[r] + v;
    if (v > KV_MAX_ROW_KEY || prev_len > KV_MAX_ROW_KEY) CORRUPT("row key too long");
    suf_total += v;
    key_total += prev_len;
  }
  lens_end = p;
  if (suf_total > (uint64_t)(lim - p)) CORRUPT("suffix bytes run past the block");
  if (key_total > KV_SF_MAX_KEY_BYTES) CORRUPT("row keys too large");
  suf = p;
  p += suf_total;
  if (kv_sf_grow((void **)&d->keys, &d->keys_cap, key_total + 1, 1)) return KV_ERR_NOMEM;
  uint8_t *k = d->keys;
  uint32_t off = 0, plen = 0;
  for (uint32_t r = 0; r < n; r++) {
    uint32_t sh = d->row_off[r];
    lens = kv_get_varint(lens, lens_end, &v); /* checked above */
    if (r) memmove(k + off, k + off - plen, sh); /* prefix of the previous key */
    memcpy(k + off + sh, suf, v);
    suf += v;
    d->row_off[r] = off;
    plen = sh + (uint32_t)v;
    off += plen;
  }
  d->row_off[n] = off;
  *pp = p;
  return KV_OK;
}

int kv_sf_block_keep(const uint8_t *raw, size_t len, const uint8_t *const *quals,
                     const uint32_t *lens, uint32_t n, uint8_t **keep, size_t *cap,
                     bool *all, const char **why) {
  const uint8_t *p = raw, *lim = raw + len;
  uint64_t nrows = 0, ncells = 0, nquals = 0, min_seq = 0, v = 0;
  *why = NULL;
  *all = true;
  if (!(p = kv_sf_raw_header(p, lim, &nrows, &ncells, &nquals, &min_seq, why)))
    return KV_ERR_CORRUPT;
  if (kv_sf_grow((void **)keep, cap, (size_t)nquals, 1)) return KV_ERR_NOMEM;
  for (uint32_t q = 0; q < nquals; q++) {
    GET(p, lim, &v, "truncated qualifier dictionary");
    if (v > (uint64_t)(lim - p)) CORRUPT("qualifier runs past the block");
    uint8_t k = 0;
    for (uint32_t i = 0; i < n && !k; i++)
      k = lens[i] == v && (v == 0 || memcmp(quals[i], p, (size_t)v) == 0);
    (*keep)[q] = k;
    if (!k) *all = false;
    p += v;
  }
  return KV_OK;
}

int kv_sf_block_decode(kv_sf_dblock *d, const uint8_t *raw, size_t len, const char **why) {
  return kv_sf_block_decode_keep(d, raw, len, NULL, why);
}

int kv_sf_block_head(kv_sf_dblock *d, const uint8_t **pp, const uint8_t *lim,
                     uint64_t *min_seq, const char **why) {
  const uint8_t *p = *pp;
  uint64_t nrows = 0, ncells = 0, nquals = 0, v = 0;
  *why = NULL;
  if (!(p = kv_sf_raw_header(p, lim, &nrows, &ncells, &nquals, min_seq, why)))
    return KV_ERR_CORRUPT;
  if (reserve(d, nrows, ncells, nquals)) return KV_ERR_NOMEM;
  d->nrows = (uint32_t)nrows;
  d->ncells = (uint32_t)ncells;
  d->nquals = (uint32_t)nquals;
  for (uint32_t q = 0; q < nquals; q++) {
    GET(p, lim, &v, "truncated qualifier dictionary");
    if (v > (uint64_t)(lim - p)) CORRUPT("qualifier runs past the block");
    d->q_ptr[q] = p;
    d->q_len[q] = (uint32_t)v;
    p += v;
  }
  int rc = decode_rows(d, &p, lim, why);
  if (rc == KV_OK) *pp = p;
  return rc;
}

int kv_sf_block_decode_keep(kv_sf_dblock *d, const uint8_t *raw, size_t len,
                            const uint8_t *keep, const char **why) {
  const uint8_t *p = raw, *lim = raw + len;
  uint64_t min_seq = 0, v = 0;
  int rc = kv_sf_block_head(d, &p, lim, &min_seq, why);
  if (rc) return rc;
  uint64_t nquals = d->nquals;
  uint32_t n = d->ncells;
  if (nquals > 1) {
    for (uint32_t i = 0; i < n; i++) {
      GET1(p, lim, &v, "truncated qualifier stream");
      if (v >= nquals) CORRUPT("qualifier index out of range");
      d->c_qual[i] = (uint32_t)v;
    }
  } else {
    memset(d->c_qual, 0, n * sizeof *d->c_qual);
  }
  uint64_t ts = 0;
  for (uint32_t i = 0; i < n; i++) {
    GET1(p, lim, &v, "truncated timestamp stream");
    ts += (uint64_t)kv_unzigzag(v);
    d->c_ts[i] = (int64_t)ts;
  }
  if ((size_t)(lim - p) < n) CORRUPT("truncated type stream");
  for (uint32_t i = 0; i < n; i++) {
    if (p[i] > KV_DELETE_FAMILY) CORRUPT("bad cell type");
    d->c_type[i] = p[i];
  }
  p += n;
  for (uint32_t i = 0; i < n; i++) {
    GET1(p, lim, &v, "truncated sequence stream");
    d->c_seq[i] = min_seq + v;
  }
  /* Values: count the groups, read their headers, then hand out values in cell order. */
  gstate *gs = d->gstate;
  uint32_t ng = d->nquals + 1;
  memset(gs, 0, ng * sizeof *gs);
  /* c_vlen[i] holds the cell's rank in its group until its value is placed (the final
     loop below, or kv_sf_block_values for a group left out) */
  for (uint32_t i = 0; i < n; i++)
    d->c_vlen[i] = gs[d->c_type[i] == KV_PUT ? d->c_qual[i] : d->nquals].count++;
  size_t vneed = 0;
  const uint8_t *scan = p;
  for (uint32_t g = 0; g < ng; g++) {  /* first pass: size of the fixed-width values */
    if (!gs[g].count) continue;
    uint64_t code = 0, a = 0, b = 0;
    GET(scan, lim, &code, "truncated value group header");
    if (code == KV_SFDEC_CODE) { /* decimal-scaled: rebuilt to 8 bytes a value */
      if (!(scan = kv_sfdec_parse(scan, lim, gs[g].count, &gs[g].dh, why))) return KV_ERR_CORRUPT;
      if (!keep || g == d->nquals || keep[g]) vneed += (size_t)8 * gs[g].count;
    } else if (code) {
      uint64_t bytes = (code - 1) * (uint64_t)gs[g].count;
      if (code - 1 > UINT32_MAX || bytes > (uint64_t)(lim - scan)) CORRUPT("value group runs past the block");
      if (!keep || g == d->nquals || keep[g]) vneed += (size_t)bytes;
      scan += bytes;
    } else {
      GET(scan, lim, &a, "truncated value group header");
      GET(scan, lim, &b, "truncated value group header");
      if (a > (uint64_t)(lim - scan) || b > (uint64_t)(lim - scan) - a) CORRUPT("value group runs past the block");
      scan += a + b;
    }
  }
  if (scan != lim) CORRUPT("bytes after the last value group");
  if (kv_sf_grow((void **)&d->vbuf, &d->vbuf_cap, vneed ? vneed : 1, 1)) return KV_ERR_NOMEM;
  uint8_t *vb = d->vbuf;
  for (uint32_t g = 0; g < ng; g++) {  /* second pass: place the groups */
    gstate *s = &gs[g];
    if (!s->count) continue;
    uint64_t code = 0, a = 0, b = 0;
    p = kv_get_varint(p, lim, &code);
    if (code == KV_SFDEC_CODE) { /* parsed (and checked) by the first pass: s->dh */
      s->fixed = 1;
      s->width = 8;
      s->dec = 1;
      p = s->dh.planes + (size_t)s->dh.w * s->count;
      if (keep && g < d->nquals && !keep[g]) {
        s->skip = 1;
        continue;
      }
      kv_sfdec_expand(&s->dh, vb, 0);
      s->dp = vb;
      vb += (size_t)8 * s->count;
      s->dend = vb;
      continue;
    }
    if (keep && g < d->nquals && !keep[g]) {  /* not read now: remember where it lies */
      s->skip = 1;
      if (code) {
        s->fixed = 1;
        s->width = (uint32_t)(code - 1);
        s->dp = p; /* transposed: byte j of the k-th value at dp[j * count + k] */
        p += (size_t)(code - 1) * s->count;
      } else {
        p = kv_get_varint(p, lim, &a);
        p = kv_get_varint(p, lim, &b);
        s->lp = p;
        s->lend = p + a;
        s->dp = p + a;
        s->dend = p + a + b;
        p += a + b;
      }
      continue;
    }
    if (code) {
      uint32_t w = (uint32_t)(code - 1), cnt = s->count;
      s->fixed = 1;
      s->width = w;
      if (w == 8) { /* doubles and BIGINTs: eight byte streams into one store per value */
        for (uint32_t kk = 0; kk < cnt; kk++) {
          uint8_t t[8];
          for (uint32_t j = 0; j < 8; j++) t[j] = p[(size_t)j * cnt + kk];
          memcpy(vb + (size_t)kk * 8, t, 8);
        }
      } else {
        for (uint32_t j = 0; j < w; j++) {  /* un-transpose */
          const uint8_t *src = p + (size_t)j * cnt;
          for (uint32_t kk = 0; kk < cnt; kk++) vb[(size_t)kk * w + j] = src[kk];
        }
      }
      s->dp = vb;
      vb += (size_t)w * cnt;
      s->dend = vb;
      p += (size_t)w * cnt;
    } else {
      p = kv_get_varint(p, lim, &a);
      p = kv_get_varint(p, lim, &b);
      s->lp = p;
      s->lend = p + a;
      s->dp = p + a;
      s->dend = p + a + b;
      p += a + b;
    }
  }
  d->c_val[0] = NULL; /* a cell of a group left out keeps whatever its slots held */
  d->c_vlen[0] = 0;
  for (uint32_t i = 0; i < n; i++) {
    gstate *s = &gs[d->c_type[i] == KV_PUT ? d->c_qual[i] : d->nquals];
    if (s->skip) {
      continue;
    } else if (s->fixed) {
      d->c_val[i] = s->dp;
      d->c_vlen[i] = s->width;
      s->dp += s->width;
    } else {
      GET(s->lp, s->lend, &v, "truncated value length stream");
      if (v > (uint64_t)(s->dend - s->dp)) CORRUPT("value runs past its group");
      d->c_val[i] = s->dp;
      d->c_vlen[i] = (uint32_t)v;
      s->dp += v;
    }
  }
  for (uint32_t g = 0; g < ng; g++) {
    if (gs[g].count && !gs[g].fixed && !gs[g].skip && (gs[g].lp != gs[g].lend || gs[g].dp != gs[g].dend))
      CORRUPT("value group lengths do not add up");
  }
  return KV_OK;
}

int kv_sf_block_values(kv_sf_dblock *d, uint32_t c0, uint32_t c1, uint32_t skip0,
                       uint32_t skip1, kv_sfbuf *buf, const char **why) {
  gstate *gs = d->gstate;
  uint32_t ng = d->nquals + 1;
  size_t maxw = 0;
  *why = NULL;
  if (c1 > d->ncells) c1 = d->ncells;
  if (c0 >= c1) return KV_OK;
  for (uint32_t g = 0; g < ng; g++) {
    gstate *s = &gs[g];
    if (!s->skip) continue;
    s->rank = 0;
    s->clp = s->lp;
    s->cdp = s->dp;
    if (s->fixed && s->width > maxw) maxw = s->width;
  }
  buf->len = 0;
  if (maxw && kv_sfbuf_reserve(buf, maxw * (c1 - c0))) return KV_ERR_NOMEM;
  uint8_t *out = buf->p;
  for (uint32_t i = c0; i < c1; i++) {
    if (i == skip0 && skip1 > skip0) { /* placed already */
      i = skip1 - 1;
      continue;
    }
    gstate *s = &gs[d->c_type[i] == KV_PUT ? d->c_qual[i] : d->nquals];
    if (!s->skip) continue;
    uint32_t r = d->c_vlen[i]; /* its rank in the group: < count (counted over these cells) */
    if (r >= s->count) CORRUPT("value rank out of range");
    if (s->dec) {
      kv_sfdec_get(&s->dh, r, out);
      d->c_val[i] = out;
      d->c_vlen[i] = 8;
      out += 8;
    } else if (s->fixed) {
      uint32_t w = s->width;
      const uint8_t *src = s->dp + r;
      for (uint32_t j = 0; j < w; j++) out[j] = src[(size_t)j * s->count];
      d->c_val[i] = out;
      d->c_vlen[i] = w;
      out += w;
    } else {
      uint64_t v = 0;
      while (s->rank < r) { /* step over the lengths and bytes of earlier values */
        GET1(s->clp, s->lend, &v, "truncated value length stream");
        if (v > (uint64_t)(s->dend - s->cdp)) CORRUPT("value runs past its group");
        s->cdp += v;
        s->rank++;
      }
      GET1(s->clp, s->lend, &v, "truncated value length stream");
      if (v > (uint64_t)(s->dend - s->cdp)) CORRUPT("value runs past its group");
      d->c_val[i] = s->cdp;
      d->c_vlen[i] = (uint32_t)v;
      s->cdp += v;
      s->rank++;
    }
  }
  return KV_OK;
}
