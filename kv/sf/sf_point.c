/*
** kv/sf/sf_point.c: the point decoder of kv/sf/sf_point.h: out of a raw store file block
** (docs/FORMAT.md Part 2, "Raw block"), only the row a point read asks for and the one
** after it, or a short range's rows and the one after them (up to the first row at or above
** the range's end key), as a small compact block (kv/sf/sf_cblock.h) of their own.
**
** The walk: header and dictionary; the cells-per-row stream (the first cell of every row);
** the row keys, searched in their own coding (binary search in the transposed suffixes,
** a walk of the delta or prefix streams) until the first key at or above the one asked
** for; then each per-cell stream is skipped up to the rows' cells (varints counted a word at
** a time by their last bytes, zero timestamp deltas eight at a time), the rows' cells read,
** and the rest skipped to find the next stream. A cell's value lies in its value group at
** its rank among the group's cells, so the qualifier and type streams are counted per group
** (all cells: a fixed-width group's bytes are transposed over its whole count, and the
** group headers need every count to be found). Fixed-width values of the rows are gathered
** whole in cell order (cvals, as a packed block keeps them); variable-width ones point into
** the raw block. Bounded reads throughout; it allocates only when a block needs more room
** than any before (memory only grows), never per cell.
** Not here: I/O, framing, the block cache, iteration (kv/sf/sf_iter.c).
*/
#include "kv/sf/sf_point.h"
#include "kv/util/coding.h"

#define CORRUPT(msg) do { *why = (msg); return KV_ERR_CORRUPT; } while (0)
#define GET(p, lim, v, msg) do { if (!((p) = kv_get_varint((p), (lim), (v)))) CORRUPT(msg); } while (0)
#define GET1(p, lim, v, msg) do { \
    if ((p) < (lim) && *(p) < 0x80) *(v) = *(p)++; else GET(p, lim, v, msg); } while (0)
#define TS_BIAS 0x8000000000000000ull /* signed timestamps stored as unsigned, order kept */
#define AR(w, off, T) ((T *)(void *)((w)->arena.p + (off))) /* an arena region, typed */

enum { G_CNT, G_BEF, G_ROW, G_RUN, G_DOFF, G_COLS }; /* columns of kv_sf_pdec.gt per group:
   cells in the block, before the rows, in the rows, placed so far, raw offset of its data */

static uint64_t n_decodes; /* kv_sf_point_decodes (atomic adds) */

uint64_t kv_sf_point_decodes(void) { return __atomic_load_n(&n_decodes, __ATOMIC_RELAXED); }

void kv_sf_pdec_free(kv_sf_pdec *w) {
  kv_sfbuf_free(&w->arena);
  free(w->groups);
  free(w->gt);
  free(w->dh);
  free(w->rf);
  free(w->kb);
  free(w->kl);
  memset(w, 0, sizeof *w);
}

/* The byte after the n-th varint from p, or NULL when [p, lim) ends first. A varint ends
** at its first byte below 0x80: whole words whose last bytes number fewer than n are
** stepped over at once. */
static const uint8_t *skip_varints(const uint8_t *p, const uint8_t *lim, uint32_t n) {
  /* a stream of one-byte varints (qualifier indexes, zero deltas and sequence numbers): 32
     bytes with no high bit set are 32 varints */
  while (n >= 32 && lim - p >= 32) {
    uint64_t x[4];
    memcpy(x, p, 32);
    if ((x[0] | x[1] | x[2] | x[3]) & 0x8080808080808080ull) break;
    p += 32;
    n -= 32;
  }
  while (n && lim - p >= 8) {
    uint64_t x;
    memcpy(&x, p, 8);
    /* the last bytes' high bits moved to bit 0 of each byte, then summed by a multiply
       (no popcount instruction is assumed) */
    uint64_t e = (~x & 0x8080808080808080ull) >> 7;
    uint32_t t = (uint32_t)((e * 0x0101010101010101ull) >> 56);
    if (t >= n) break; /* the n-th ends in this word */
    n -= t;
    p += 8;
  }
  while (n) {
    if (p >= lim) return NULL;
    if (*p++ < 0x80) n--;
  }
  return p;
}

/* Add the n zigzag deltas of a timestamp stream at p to *ts; the byte after them, or NULL
** (truncated or over-long). Eight zero deltas (a word of zero bytes) are stepped at once. */
static const uint8_t *sum_deltas(const uint8_t *p, const uint8_t *lim, uint32_t n, uint64_t *ts) {
  uint64_t v = 0;
  while (n) {
    if (n >= 8 && lim - p >= 8) {
      uint64_t x;
      memcpy(&x, p, 8);
      if (x == 0) {
        p += 8;
        n -= 8;
        continue;
      }
    }
    if (p < lim && *p < 0x80) v = *p++;
    else if (!(p = kv_get_varint(p, lim, &v))) return NULL;
    *ts += (uint64_t)kv_unzigzag(v);
    n--;
  }
  return p;
}

/* How the common key prefix stands to [t, t+tl): > 0 every key is above t, < 0 every key
** is below it, 0 the keys' suffixes decide (compared with t + lcp). */
static int prefix_side(const uint8_t *pre, uint32_t lcp, const uint8_t *t, uint32_t tl) {
  uint32_t k = lcp < tl ? lcp : tl;
  int c = k ? memcmp(pre, t, k) : 0;
  if (c) return c;
  return tl < lcp ? 1 : 0;
}

/* Compare the w-byte suffix of row r (transposed: byte j at sx[j * nr + r]) with [t, t+tl). */
static int cmp_transposed(const uint8_t *sx, uint32_t nr, uint32_t r, uint32_t w,
                          const uint8_t *t, uint32_t tl) {
  uint32_t k = w < tl ? w : tl;
  for (uint32_t j = 0; j < k; j++) {
    uint8_t a = sx[(size_t)j * nr + r];
    if (a != t[j]) return a < t[j] ? -1 : 1;
  }
  return w < tl ? -1 : w > tl ? 1 : 0;
}

/* Make room in kb for bytes [0, n). */
static int kb_room(kv_sf_pdec *w, size_t n) {
  return kv_sf_grow((void **)&w->kb, &w->kb_cap, n ? n : 1, 1) ? KV_ERR_NOMEM : KV_OK;
}

/* Room for bytes [0, kbytes) of kb and the lengths of n rows' keys (w->kl). */
static int key_room(kv_sf_pdec *w, size_t kbytes, uint32_t n) {
  if (kb_room(w, kbytes)) return KV_ERR_NOMEM;
  return kv_sf_grow((void **)&w->kl, &w->kl_cap, n, sizeof *w->kl) ? KV_ERR_NOMEM : KV_OK;
}

/* Whether the rows copied so far (got, the last one's key [k, k+kl)) are all that is
** wanted: want of them, or the last one is at or above the stop key (when there is one). */
static bool rows_done(const uint8_t *k, uint32_t kl, uint32_t got, uint32_t want,
                      const uint8_t *stop, uint32_t stop_len) {
  return got >= want || (stop && kv_sf_bytes_cmp(k, kl, stop, stop_len) >= 0);
}

/* Rows section keys (after the cells-per-row stream): find R, the first row whose key is >=
** [t, tl), and copy the keys of rows R, R + 1, ... to kb from offset kat on, their lengths to
** w->kl, until want rows are copied, a row at or above [stop, stop + stop_len) is (when stop
** is not NULL; that row is copied too) or the block ends. *pp moves past the keys; *R_out
** gets R (nr when every key is below t), *m_out the rows copied. */
static int find_rows(kv_sf_pdec *w, const uint8_t **pp, const uint8_t *lim, uint32_t nr,
                     const uint8_t *t, uint32_t tl, const uint8_t *stop, uint32_t stop_len,
                     uint32_t want, uint32_t *R_out, uint32_t *m_out, size_t *kat,
                     const char **why) {
  const uint8_t *p = *pp;
  kv_sf_rows_layout L;
  int rc = kv_sf_rows_layout_read(&p, lim, nr, &L, why);
  if (rc) return rc;
  uint32_t R = nr, got = 0;
  uint64_t v = 0;
  if (L.mode == KV_SF_ROWS_FIXED || L.mode == KV_SF_ROWS_DELTA) {
    uint32_t sw = L.suffix, kl = L.key_len;
    int side = prefix_side(L.prefix, L.lcp, t, tl);
    const uint8_t *ts = t + L.lcp;
    uint32_t tsl = side == 0 ? tl - L.lcp : 0;
    *kat = kl; /* kb: [0, kl) scratch, then the keys */
    if (L.mode == KV_SF_ROWS_FIXED) {
      if ((uint64_t)sw * nr > (uint64_t)(lim - p)) CORRUPT("key suffixes run past the block");
      const uint8_t *sx = p;
      p += (size_t)sw * nr;
      if (side > 0) {
        R = 0;
      } else if (side == 0) {
        uint32_t lo = 0, hi = nr;
        while (lo < hi) {
          uint32_t mid = lo + (hi - lo) / 2;
          if (cmp_transposed(sx, nr, mid, sw, ts, tsl) < 0) lo = mid + 1;
          else hi = mid;
        }
        R = lo;
      }
      for (uint32_t i = 0; R + i < nr; i++) {
        if (key_room(w, *kat + (size_t)kl * (got + 1), got + 1)) return KV_ERR_NOMEM;
        uint8_t *k = w->kb + *kat + (size_t)i * kl;
        memcpy(k, L.prefix, L.lcp);
        for (uint32_t j = 0; j < sw; j++) k[L.lcp + j] = sx[(size_t)j * nr + R + i];
        w->kl[got++] = kl;
        if (rows_done(k, kl, got, want, stop, stop_len)) break;
      }
    } else {
      /* delta: the target's suffix as a number, zero-padded to sw bytes (a shorter target
         is below every key with its bytes as a prefix: >=); a longer one cut to sw bytes
         (a key equal to the cut is below the target: >) */
      uint64_t T = 0, val = 0, max = sw == 8 ? UINT64_MAX : (1ull << (8 * sw)) - 1;
      for (uint32_t j = 0; j < sw; j++) T = (T << 8) | (j < tsl ? ts[j] : 0);
      bool strict = tsl > sw, done = false;
      const uint8_t *pv = p; /* the last varint read and its length: hourly rows repeat it */
      size_t pl = 0;
      if (side > 0) R = 0;
      for (uint32_t r = 0; r < nr; r++) {
        if (pl && lim - p >= 8 && kv_sf_same_bytes(p, pv, pl)) { /* the same varint: v again */
          p += pl;
        } else {
          pv = p;
          GET(p, lim, &v, "truncated key delta stream");
          pl = (size_t)(p - pv) <= 8 ? (size_t)(p - pv) : 0;
        }
        if (v > max - val) CORRUPT("key delta out of range");
        val += v;
        if (R == nr && side == 0 && (strict ? val > T : val >= T)) R = r;
        if (R != nr && r >= R && !done) {
          if (key_room(w, *kat + (size_t)kl * (got + 1), got + 1)) return KV_ERR_NOMEM;
          uint8_t *k = w->kb + *kat + (size_t)got * kl;
          memcpy(k, L.prefix, L.lcp);
          for (uint32_t j = 0; j < sw; j++) k[L.lcp + j] = (uint8_t)(val >> (8 * (sw - 1 - j)));
          w->kl[got++] = kl;
          done = rows_done(k, kl, got, want, stop, stop_len);
          if (done) { /* the rest of the stream is only stepped over, as the cells' are */
            if (!(p = skip_varints(p, lim, nr - r - 1))) CORRUPT("truncated key delta stream");
            break;
          }
        }
      }
    }
    *pp = p;
    *R_out = R;
    *m_out = got;
    return KV_OK;
  }
  if (L.mode != KV_SF_ROWS_PREFIX) CORRUPT("unknown rows mode");
  /* prefix: the shared lengths, the suffix lengths, the suffixes. A first pass checks the
     lengths (as the whole-block decoder) and finds where the suffixes start. */
  const uint8_t *sp = p, *lp = skip_varints(p, lim, nr);
  if (!lp) CORRUPT("truncated shared-prefix stream");
  const uint8_t *lens = lp, *send = lp;
  uint64_t prev_len = 0, suf_total = 0, maxk = 0, sh = 0;
  for (uint32_t r = 0; r < nr; r++) {
    GET(sp, send, &sh, "truncated shared-prefix stream");
    GET(lp, lim, &v, "truncated suffix length stream");
    if (sh > KV_MAX_ROW_KEY || (r == 0 && sh != 0)) CORRUPT("bad shared-prefix length");
    if (sh > prev_len) CORRUPT("shared prefix longer than the previous key");
    prev_len = sh + v;
    if (v > KV_MAX_ROW_KEY || prev_len > KV_MAX_ROW_KEY) CORRUPT("row key too long");
    suf_total += v;
    if (prev_len > maxk) maxk = prev_len;
  }
  if (suf_total > (uint64_t)(lim - lp)) CORRUPT("suffix bytes run past the block");
  const uint8_t *suf = lp, *lend = lp;
  *pp = lp + suf_total;
  *kat = (size_t)maxk;
  if (kb_room(w, (size_t)maxk)) return KV_ERR_NOMEM;
  /* second pass: rebuild each key in kb[0, maxk) until the rows wanted are copied */
  sp = p;
  lp = lens;
  size_t out = *kat;
  for (uint32_t r = 0; r < nr; r++) {
    sp = kv_get_varint(sp, send, &sh); /* checked above */
    lp = kv_get_varint(lp, lend, &v);
    memcpy(w->kb + sh, suf, (size_t)v);
    suf += v;
    uint32_t kl = (uint32_t)(sh + v);
    if (R == nr && kv_sf_bytes_cmp(w->kb, kl, t, tl) >= 0) R = r;
    if (R != nr) {
      if (key_room(w, out + (size_t)maxk, got + 1)) return KV_ERR_NOMEM;
      memcpy(w->kb + out, w->kb, kl);
      w->kl[got++] = kl;
      if (rows_done(w->kb + out, kl, got, want, stop, stop_len)) break;
      out += kl;
    }
  }
  *R_out = R;
  *m_out = got;
  return KV_OK;
}


/* The qualifier bytes of a row of nq <= 16 cells at q (16 readable bytes), as two numbers
** with the bytes past nq cleared. */
typedef struct qrow { uint64_t lo, hi; } qrow;

static inline qrow qrow_at(const uint8_t *q, uint32_t nq) {
  qrow r = {kv_get_u64le(q), kv_get_u64le(q + 8)};
  if (nq < 8) r.lo &= ((uint64_t)1 << (8 * nq)) - 1;
  if (nq <= 8) r.hi = 0;
  else if (nq < 16) r.hi &= ((uint64_t)1 << (8 * (nq - 8))) - 1;
  return r;
}

/* Add to h[256] the qualifier bytes (one byte a cell) of rows [ra, rb) of the stream at qs,
** row r's cells being [rf[r], rf[r + 1]); the stream's block ends at lim. A row of exactly nq
** cells (nq <= 16) whose bytes equal *tpl is counted in *same instead (the caller adds tpl's
** bytes that many times): a block's rows mostly hold every column in one order, so a row is
** two compares instead of nq increments. *has_tpl: tpl is set; the first such row sets it. */
static void hist_rows(uint32_t *h, const uint8_t *qs, const uint8_t *lim, const uint32_t *rf,
                      uint32_t ra, uint32_t rb, uint32_t nq, qrow *tpl, bool *has_tpl,
                      uint32_t *same) {
  for (uint32_t r = ra; r < rb; r++) {
    uint32_t c = rf[r], e = rf[r + 1];
    if (nq <= 16 && e - c == nq && lim - (qs + c) >= 16) {
      qrow x = qrow_at(qs + c, nq);
      if (!*has_tpl) {
        *tpl = x;
        *has_tpl = true;
      }
      if (x.lo == tpl->lo && x.hi == tpl->hi) {
        (*same)++;
        continue;
      }
    }
    for (uint32_t j = c; j < e; j++) h[qs[j]]++;
  }
}

/* Add tpl's nq bytes to h, `times` times each. */
static void hist_tpl(uint32_t *h, const qrow *tpl, uint32_t nq, uint32_t times) {
  for (uint32_t j = 0; j < nq && times; j++)
    h[(uint8_t)((j < 8 ? tpl->lo : tpl->hi) >> (8 * (j & 7)))] += times;
}

/* Count the cells of each value group (G_CNT), those before cell c0 (G_BEF) and those in
** [c0, c1) (G_ROW) into gt; the dictionary indexes of cells [c0, c1) into rq. The qualifier
** stream is [qs, qe) (nq > 1) and the types at types (already bounded); the block's nr rows
** start at the cells rf gives (c0 = rf[R]) and it ends at lim. */
static int count_groups(uint32_t *gt, const uint8_t *qs, const uint8_t *qe,
                        const uint8_t *types, uint32_t n, uint32_t nq, uint32_t c0,
                        uint32_t c1, uint32_t *rq, const uint32_t *rf, uint32_t nr,
                        uint32_t R, const uint8_t *lim, const char **why) {
  uint32_t ng = nq + 1;
  memset(gt, 0, (size_t)ng * G_COLS * sizeof *gt);
#define BUMP(i, g) do { uint32_t g_ = (g); gt[g_ * G_COLS + G_CNT]++; \
    if ((i) < c0) gt[g_ * G_COLS + G_BEF]++; else if ((i) < c1) gt[g_ * G_COLS + G_ROW]++; } while (0)
  if (nq == 1 && kv_sf_all_zero(types, n)) {
    /* one qualifier, every cell a put (a key family's blocks): group 0 holds them all */
    gt[G_CNT] = n;
    gt[G_BEF] = c0;
    gt[G_ROW] = c1 - c0;
    for (uint32_t i = c0; i < c1; i++) rq[i - c0] = 0;
    return KV_OK;
  }
  if (nq == 1) {
    for (uint32_t i = 0; i < n; i++) BUMP(i, types[i] == KV_PUT ? 0 : 1);
    for (uint32_t i = c0; i < c1; i++) rq[i - c0] = 0;
    return KV_OK;
  }
  if ((size_t)(qe - qs) == n && kv_sf_all_zero(types, n)) {
    /* the common case: a byte per qualifier, every cell a put: histograms of bytes */
    uint32_t h[256], hb[256], same = 0;
    qrow tpl = {0, 0};
    bool has_tpl = false;
    memset(h, 0, sizeof h);
    hist_rows(h, qs, lim, rf, 0, R, nq, &tpl, &has_tpl, &same);
    hist_tpl(h, &tpl, nq, same);
    memcpy(hb, h, sizeof h);
    same = 0;
    hist_rows(h, qs, lim, rf, R, nr, nq, &tpl, &has_tpl, &same);
    hist_tpl(h, &tpl, nq, same);
    for (uint32_t x = nq; x < 256; x++)
      if (h[x]) CORRUPT("qualifier index out of range");
    for (uint32_t g = 0; g < nq; g++) {
      gt[g * G_COLS + G_CNT] = h[g];
      gt[g * G_COLS + G_BEF] = hb[g];
    }
    for (uint32_t i = c0; i < c1; i++) {
      rq[i - c0] = qs[i];
      gt[qs[i] * G_COLS + G_ROW]++;
    }
    return KV_OK;
  }
  const uint8_t *x = qs;
  uint64_t v = 0;
  for (uint32_t i = 0; i < n; i++) {
    GET1(x, qe, &v, "truncated qualifier stream");
    if (v >= nq) CORRUPT("qualifier index out of range");
    if (i >= c0 && i < c1) rq[i - c0] = (uint32_t)v;
    BUMP(i, types[i] == KV_PUT ? (uint32_t)v : nq);
  }
#undef BUMP
  return KV_OK;
}

/* Set a packed array of n numbers stored as u32 or u64 at arena offset off. */
static void pa_set(kv_sf_pa *a, uint32_t off, uint8_t width) {
  memset(a, 0, sizeof *a);
  a->off = off;
  a->w = width;
}

int kv_sf_point_decode(kv_sf_pdec *w, const uint8_t *raw, size_t len, const uint8_t *key,
                       uint32_t key_len, uint32_t want, const char **why) {
  return kv_sf_point_decode_to(w, raw, len, key, key_len, NULL, 0, want, why);
}

int kv_sf_point_decode_to(kv_sf_pdec *w, const uint8_t *raw, size_t len, const uint8_t *key,
                          uint32_t key_len, const uint8_t *stop, uint32_t stop_len,
                          uint32_t want, const char **why) {
  const uint8_t *p = raw, *lim = raw + len;
  uint64_t nrows = 0, ncells = 0, nquals = 0, min_seq = 0, v = 0;
  kv_sf_cblock *b = &w->b;
  *why = NULL;
  memset(b, 0, sizeof *b);
  w->arena.len = 0;
  w->block_rows = w->block_cells = w->first_row = 0;
  if (want < 1) want = 1;
  if (!(p = kv_sf_raw_header(p, lim, &nrows, &ncells, &nquals, &min_seq, why)))
    return KV_ERR_CORRUPT;
  uint32_t n = (uint32_t)ncells, nr = (uint32_t)nrows, nq = (uint32_t)nquals, ng = nq + 1;
  w->block_rows = w->first_row = nr;
  w->block_cells = n;
  if (kv_sf_grow((void **)&w->groups, &w->groups_cap, ng, sizeof *w->groups) ||
      kv_sf_grow((void **)&w->gt, &w->gt_cap, (size_t)ng * G_COLS, sizeof *w->gt) ||
      kv_sf_grow((void **)&w->rf, &w->rf_cap, (size_t)nr + 1, sizeof *w->rf))
    return KV_ERR_NOMEM;
  /* dictionary: offsets and lengths relative to its first byte */
  const uint8_t *dict = p;
  uint32_t qoff_off, qlen_off;
  if (kv_sfbuf_room(&w->arena, (size_t)nq * 4, &qoff_off) || kv_sfbuf_room(&w->arena, (size_t)nq * 4, &qlen_off))
    return KV_ERR_NOMEM;
  uint32_t *qo = AR(w, qoff_off, uint32_t), *ql = AR(w, qlen_off, uint32_t);
  for (uint32_t q = 0; q < nq; q++) {
    GET(p, lim, &v, "truncated qualifier dictionary");
    if (v > (uint64_t)(lim - p)) CORRUPT("qualifier runs past the block");
    qo[q] = (uint32_t)(p - dict);
    ql[q] = (uint32_t)v;
    p += v;
  }
  int rc = kv_sf_cells_per_row(&p, lim, nr, n, w->rf, why);
  if (rc) return rc;
  uint32_t R = nr, m = 0;
  size_t kat = 0;
  rc = find_rows(w, &p, lim, nr, key, key_len, stop, stop_len, want, &R, &m, &kat, why);
  if (rc) return rc;
  w->first_row = R;
  if (R == nr) return KV_OK; /* every row is below the key: b holds nothing */
  const uint32_t *klen = w->kl;
  uint32_t c0 = w->rf[R], c1 = w->rf[R + m], k = c1 - c0;
  /* the rows' per-cell arrays and keys */
  uint32_t q_off, t_off, ts_off, seq_off, rf_off, ko_off, keys_off, ck_off, cv_off;
  size_t ktotal = 0;
  for (uint32_t i = 0; i < m; i++) ktotal += klen[i];
  if (kv_sfbuf_room(&w->arena, (size_t)k * 4, &q_off) || kv_sfbuf_room(&w->arena, k, &t_off) ||
      kv_sfbuf_room(&w->arena, (size_t)k * 8, &ts_off) || kv_sfbuf_room(&w->arena, (size_t)k * 8, &seq_off) ||
      kv_sfbuf_room(&w->arena, ((size_t)m + 1) * 4, &rf_off) || kv_sfbuf_room(&w->arena, ((size_t)m + 1) * 4, &ko_off) ||
      kv_sfbuf_room(&w->arena, ktotal + 1, &keys_off) || kv_sfbuf_room(&w->arena, ((size_t)ng + 1) * 4, &ck_off))
    return KV_ERR_NOMEM;
  memcpy(AR(w, keys_off, uint8_t), w->kb + kat, ktotal);
  uint32_t *ko = AR(w, ko_off, uint32_t), *rfo = AR(w, rf_off, uint32_t), maxk = 0;
  ko[0] = 0;
  for (uint32_t i = 0; i < m; i++) {
    ko[i + 1] = ko[i] + klen[i];
    rfo[i] = w->rf[R + i] - c0;
    if (klen[i] > maxk) maxk = klen[i];
  }
  rfo[m] = k;
  memset(AR(w, ck_off, uint32_t), 0, ((size_t)ng + 1) * 4);
  /* qualifier stream: found now, counted once the types are known */
  const uint8_t *qs = p, *qe = p;
  if (nq > 1) {
    if (!(qe = skip_varints(p, lim, n))) CORRUPT("truncated qualifier stream");
    p = qe;
  }
  /* timestamps: the deltas before the rows summed, the rows' read, the rest skipped */
  uint64_t ts = 0, ts_lo = UINT64_MAX, ts_hi = 0;
  if (!(p = sum_deltas(p, lim, c0, &ts))) CORRUPT("truncated timestamp stream");
  uint64_t *tsa = AR(w, ts_off, uint64_t);
  uint32_t j0 = 0;
  if (k > 0) { /* the rows' first delta, then (a put's row shares one timestamp) zeros */
    GET(p, lim, &v, "truncated timestamp stream");
    ts += (uint64_t)kv_unzigzag(v);
    tsa[0] = ts_lo = ts_hi = ts ^ TS_BIAS;
    j0 = 1;
    if ((size_t)(lim - p) >= k - 1 && kv_sf_all_zero(p, k - 1)) {
      for (uint32_t j = 1; j < k; j++) tsa[j] = tsa[0];
      p += k - 1;
      j0 = k;
    }
  }
  for (uint32_t j = j0; j < k; j++) {
    GET1(p, lim, &v, "truncated timestamp stream");
    ts += (uint64_t)kv_unzigzag(v);
    tsa[j] = ts ^ TS_BIAS;
    if (tsa[j] < ts_lo) ts_lo = tsa[j];
    if (tsa[j] > ts_hi) ts_hi = tsa[j];
  }
  if (!(p = skip_varints(p, lim, n - c1))) CORRUPT("truncated timestamp stream");
  if ((size_t)(lim - p) < n) CORRUPT("truncated type stream");
  const uint8_t *types = p;
  p += n;
  uint8_t *ty = AR(w, t_off, uint8_t);
  bool all_put = kv_sf_all_zero(types + c0, k); /* KV_PUT is 0 */
  if (all_put) {
    memset(ty, KV_PUT, k);
  } else {
    for (uint32_t j = 0; j < k; j++) {
      if (types[c0 + j] > KV_DELETE_FAMILY) CORRUPT("bad cell type");
      ty[j] = types[c0 + j];
    }
  }
  if (!(p = skip_varints(p, lim, c0))) CORRUPT("truncated sequence stream");
  uint64_t *sq = AR(w, seq_off, uint64_t), seq_hi = 0;
  if ((size_t)(lim - p) >= k && kv_sf_all_zero(p, k)) { /* a major compaction's zeros */
    for (uint32_t j = 0; j < k; j++) sq[j] = min_seq;
    seq_hi = min_seq;
    p += k;
  } else {
    for (uint32_t j = 0; j < k; j++) {
      GET1(p, lim, &v, "truncated sequence stream");
      sq[j] = min_seq + v;
      if (sq[j] > seq_hi) seq_hi = sq[j];
    }
  }
  if (!(p = skip_varints(p, lim, n - c1))) CORRUPT("truncated sequence stream");
  uint32_t *gt = w->gt, *rq = AR(w, q_off, uint32_t);
  rc = count_groups(gt, qs, qe, types, n, nq, c0, c1, rq, w->rf, nr, R, lim, why);
  if (rc) return rc;
  /* value groups: every header walked (the block must end with the last group); the rows'
     variable-width values located, their offsets packed */
  kv_sf_cgroup *gs = w->groups;
  memset(gs, 0, (size_t)ng * sizeof *gs);
  size_t fixed_bytes = 0;
  if (kv_sf_grow((void **)&w->dh, &w->dh_cap, ng, sizeof *w->dh)) return KV_ERR_NOMEM;
  for (uint32_t g = 0; g < ng; g++) {
    kv_sf_cgroup *s = &gs[g];
    uint32_t *c = gt + (size_t)g * G_COLS;
    if (!c[G_CNT]) continue;
    uint64_t code = 0, a = 0, d = 0;
    GET(p, lim, &code, "truncated value group header");
    s->count = c[G_ROW];
    if (code == KV_SFDEC_CODE) { /* decimal-scaled: the rows' values rebuilt below */
      if (!(p = kv_sfdec_parse(p, lim, c[G_CNT], &w->dh[g], why))) return KV_ERR_CORRUPT;
      s->fixed = 1;
      s->dec = 1;
      s->width = s->fw = 8;
      if (s->width > b->max_width) b->max_width = s->width;
      fixed_bytes += (size_t)8 * c[G_ROW];
      continue;
    }
    if (code) {
      uint64_t bytes = (code - 1) * (uint64_t)c[G_CNT];
      if (code - 1 > UINT32_MAX || bytes > (uint64_t)(lim - p))
        CORRUPT("value group runs past the block");
      s->fixed = 1;
      s->width = s->fw = (uint32_t)(code - 1);
      if (s->width > b->max_width) b->max_width = s->width;
      c[G_DOFF] = (uint32_t)(p - raw);
      fixed_bytes += (size_t)s->width * c[G_ROW];
      p += bytes;
      continue;
    }
    GET(p, lim, &a, "truncated value group header");
    GET(p, lim, &d, "truncated value group header");
    if (a > (uint64_t)(lim - p) || d > (uint64_t)(lim - p) - a)
      CORRUPT("value group runs past the block");
    const uint8_t *lp = p, *lend = p + a;
    p += a + d;
    if (!c[G_ROW]) continue;
    uint64_t sum = 0;
    for (uint32_t i = 0; i < c[G_BEF]; i++) {
      GET1(lp, lend, &v, "truncated value length stream");
      if (v > d - sum) CORRUPT("value runs past its group");
      sum += v;
    }
    uint32_t vo;
    if (kv_sfbuf_room(&w->arena, ((size_t)c[G_ROW] + 1) * 4, &vo)) return KV_ERR_NOMEM;
    uint32_t *off = AR(w, vo, uint32_t);
    uint64_t s0 = sum;
    off[0] = 0;
    for (uint32_t i = 0; i < c[G_ROW]; i++) {
      GET1(lp, lend, &v, "truncated value length stream");
      if (v > d - sum) CORRUPT("value runs past its group");
      sum += v;
      off[i + 1] = (uint32_t)(sum - s0);
    }
    pa_set(&s->voff, vo, 4);
    s->data_off = (uint32_t)(lend - raw + s0); /* the rows' first value of the group */
    s->data_len = (uint32_t)(sum - s0);
  }
  if (p != lim) CORRUPT("bytes after the last value group");
  /* fixed-width values whole, in cell order */
  if (kv_sfbuf_room(&w->arena, fixed_bytes + 1, &cv_off)) return KV_ERR_NOMEM;
  uint8_t *cv = AR(w, cv_off, uint8_t);
  rq = AR(w, q_off, uint32_t);
  ty = AR(w, t_off, uint8_t);
  for (uint32_t j = 0; j < k; j++) {
    uint32_t g = ty[j] == KV_PUT ? rq[j] : nq;
    uint32_t *c = gt + (size_t)g * G_COLS;
    uint32_t rank = c[G_BEF] + c[G_RUN]++;
    const kv_sf_cgroup *s = &gs[g];
    if (!s->fixed) continue;
    if (s->dec) {
      kv_sfdec_get(&w->dh[g], rank, cv);
      cv += 8;
      continue;
    }
    /* width and stride in locals: a byte store through cv may alias them, and reloading
       them per byte made this gather the decoder's costliest loop */
    const uint8_t *src = raw + c[G_DOFF] + rank;
    const uint32_t wd = s->width;
    const size_t cnt = c[G_CNT];
    if (wd == 8) { /* a double or BIGINT: the common width, unrolled */
      uint8_t b0 = src[0], b1 = src[cnt], b2 = src[2 * cnt], b3 = src[3 * cnt];
      uint8_t b4 = src[4 * cnt], b5 = src[5 * cnt], b6 = src[6 * cnt], b7 = src[7 * cnt];
      cv[0] = b0; cv[1] = b1; cv[2] = b2; cv[3] = b3;
      cv[4] = b4; cv[5] = b5; cv[6] = b6; cv[7] = b7;
    } else {
      for (uint32_t jj = 0; jj < wd; jj++) cv[jj] = src[(size_t)jj * cnt];
    }
    cv += wd;
  }
  /* the block's description: one timestamp per row when its cells share it */
  b->nrows = m;
  b->ncells = k;
  b->nquals = nq;
  b->max_key = maxk;
  pa_set(&b->key_off, ko_off, 4);
  pa_set(&b->row_first, rf_off, 4);
  pa_set(&b->qual, q_off, 4);
  if (all_put) memset(&b->type, 0, sizeof b->type);
  else pa_set(&b->type, t_off, 1);
  uint64_t *tsp = AR(w, ts_off, uint64_t);
  const uint32_t *rfp = AR(w, rf_off, uint32_t);
  bool per_row = true;
  for (uint32_t i = 0; i < m && per_row; i++)
    for (uint32_t j = rfp[i] + 1; j < rfp[i + 1]; j++)
      if (tsp[j] != tsp[rfp[i]]) { per_row = false; break; }
  if (per_row)
    for (uint32_t i = 0; i < m; i++) tsp[i] = tsp[rfp[i]];
  b->ts_per_row = per_row;
  pa_set(&b->ts, ts_off, 8);
  pa_set(&b->seq, seq_off, 8);
  b->min_ts = (int64_t)(ts_lo ^ TS_BIAS);
  b->max_ts = (int64_t)(ts_hi ^ TS_BIAS);
  b->max_seq = seq_hi;
  /* one put per column: neighbours in a row differ in qualifier (index, and bytes) */
  bool one = all_put;
  const uint32_t *qa = AR(w, q_off, uint32_t), *qoa = AR(w, qoff_off, uint32_t),
                 *qla = AR(w, qlen_off, uint32_t);
  for (uint32_t i = 0; i < m && one; i++)
    for (uint32_t j = rfp[i] + 1; j < rfp[i + 1]; j++) {
      uint32_t x = qa[j - 1], y = qa[j];
      if (x == y || (qla[x] == qla[y] && memcmp(dict + qoa[x], dict + qoa[y], qla[x]) == 0)) {
        one = false;
        break;
      }
    }
  b->one_put_per_col = one;
  b->ck_shift = 31; /* one checkpoint (all zero) before cell 0: ranks are stepped from it */
  b->ck_w = 4;
  b->charge = 0;
  /* pointers, now that the arena no longer moves */
  const uint8_t *ar = w->arena.p;
  b->key_off.p = ar + ko_off;
  b->row_first.p = ar + rf_off;
  b->qual.p = ar + q_off;
  if (b->type.w) b->type.p = ar + t_off;
  b->ts.p = ar + ts_off;
  b->seq.p = ar + seq_off;
  b->keys = ar + keys_off;
  b->prefix = NULL;
  b->dict = dict;
  b->q_off = (const uint32_t *)(const void *)(ar + qoff_off);
  b->q_len = (const uint32_t *)(const void *)(ar + qlen_off);
  b->ck = ar + ck_off;
  b->cvals = ar + cv_off;
  for (uint32_t g = 0; g < ng; g++) {
    kv_sf_cgroup *s = &gs[g];
    if (s->fixed || !s->count) {
      s->data = NULL;
      continue;
    }
    s->voff.p = ar + s->voff.off;
    s->data = raw + s->data_off;
  }
  b->groups = gs;
  kv_sf_cblock_set_shape(b);
  __atomic_fetch_add(&n_decodes, 1, __ATOMIC_RELAXED);
  return KV_OK;
}
