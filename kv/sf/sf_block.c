/*
** kv/sf/sf_block.c: the writer's side of a store file block: staging cells in a block builder
** and encoding them in the columnar raw block layout. Framing a raw block for disk (lz4,
** sections, header, XXH3-64 checksum) is kv/sf/sf_frame.c; decoding a raw block into per-cell
** arrays is kv/sf/sf_decode.c. The byte layout is
** docs/FORMAT.md Part 2, "Data block"; in short, a raw block is
**
**   header   varint nrows, varint ncells, varint nquals, varint min_seq
**   dict     nquals x (varint len, bytes)
**   rows     cells-per-row stream (nrows varints), varint mode, then the row keys:
**            mode 0 (prefix): shared-prefix stream, suffix-length stream, suffix bytes;
**            keys of one length: varint key_len, varint lcp, the lcp bytes common to the
**            block, then the suffixes: mode 1 transposed (byte 0 of every suffix, then
**            byte 1, ...), mode 2 (suffix of at most 8 bytes) as big-endian integers, the
**            first whole and each next as its delta from the previous, varints
**   cells    qualifier index stream (omitted when nquals = 1), timestamp stream (zigzag
**            delta from the previous cell), type bytes, sequence stream (delta to min_seq)
**   values   one group per qualifier for puts, in dictionary order, then one group for the
**            other cell types; empty groups are omitted. A group is varint code; code w+1 =
**            fixed width w, count x w bytes transposed; code 0 = varint lens_bytes,
**            varint data_bytes, length stream, data; code 2^27 = decimal-scaled 8-byte
**            values (kv/sf/sf_dec.c, tried for every 8-byte group and kept when smaller
**            and exact).
**
** The encoder also records where each value group starts (b->cuts), so that the framing
** can compress the groups as sections of their own. This file does no I/O; kv/sf/sf_write.c
** appends what it produces.
*/
#include <xxhash.h>
#include "kv/util/coding.h"
#include "kv/sf/sf_int.h"
#include "kv/sf/sf_dec.h"
#include "kv/util/status.h"

/* ---- Buffers ---- */

int kv_sfbuf_reserve(kv_sfbuf *b, size_t extra) {
  if (b->cap - b->len >= extra) return KV_OK;
  size_t need = b->len + extra;
  if (need < b->len) return KV_ERR_NOMEM;
  size_t cap = b->cap ? b->cap : 256;
  while (cap < need) cap = cap > SIZE_MAX / 2 ? need : cap * 2;
  uint8_t *p = realloc(b->p, cap);
  if (!p) return KV_ERR_NOMEM;
  b->p = p;
  b->cap = cap;
  return KV_OK;
}

int kv_sfbuf_append(kv_sfbuf *b, const void *p, size_t n) {
  if (kv_sfbuf_reserve(b, n)) return KV_ERR_NOMEM;
  if (n) memcpy(b->p + b->len, p, n);
  b->len += n;
  return KV_OK;
}

int kv_sfbuf_varint(kv_sfbuf *b, uint64_t v) {
  if (kv_sfbuf_reserve(b, 10)) return KV_ERR_NOMEM;
  b->len = (size_t)(kv_put_varint(b->p + b->len, v) - b->p);
  return KV_OK;
}

void kv_sfbuf_free(kv_sfbuf *b) {
  free(b->p);
  b->p = NULL;
  b->len = b->cap = 0;
}

int kv_sf_grow(void **arr, size_t *cap, size_t n, size_t elem) {
  if (*cap >= n) return KV_OK;
  size_t c = *cap ? *cap : 16;
  while (c < n) c *= 2;
  if (c > SIZE_MAX / elem) return KV_ERR_NOMEM;
  void *p = realloc(*arr, c * elem);
  if (!p) return KV_ERR_NOMEM;
  *arr = p;
  *cap = c;
  return KV_OK;
}

/* ---- Builder ---- */

typedef struct group {
  uint32_t count;  /* cells in the group */
  uint32_t width;  /* value length of the first member */
  uint32_t start;  /* first slot in the builder's order array */
  uint32_t fill;   /* slots filled so far */
  uint8_t fixed;   /* every member has length `width` */
} group;

void kv_sfb_init(kv_sfb_builder *b) { memset(b, 0, sizeof *b); }

void kv_sfb_free(kv_sfb_builder *b) {
  kv_sfbuf_free(&b->keys);
  kv_sfbuf_free(&b->vals);
  kv_sfbuf_free(&b->qbytes);
  kv_sfbuf_free(&b->out);
  free(b->rows);
  free(b->cells);
  free(b->quals);
  free(b->qhash);
  free(b->groups);
  free(b->order);
  free(b->cuts);
  free(b->dscratch);
  memset(b, 0, sizeof *b);
}

void kv_sfb_reset(kv_sfb_builder *b) {
  b->keys.len = b->vals.len = b->qbytes.len = 0;
  b->nrows = b->ncells = 0;
  b->ncuts = 0;
  if (b->nquals && b->qhash) memset(b->qhash, 0, b->qhash_cap * sizeof *b->qhash);
  b->nquals = 0;
  b->last_qual = 0;
  b->min_seq = UINT64_MAX;
  b->est = 0;
}

static uint32_t qhash_of(const uint8_t *q, uint32_t len) {
  return (uint32_t)XXH3_64bits(q, len);
}

static int qual_eq(const kv_sfb_builder *b, uint32_t idx, const uint8_t *q, uint32_t len) {
  const kv_sfb_qual *e = &b->quals[idx];
  return e->len == len && (len == 0 || memcmp(b->qbytes.p + e->off, q, len) == 0);
}

/* A qualifier's bytes; an empty builder's buffer may be NULL, and NULL + 0 is undefined. */
static const uint8_t *qual_bytes(const kv_sfb_builder *b, uint32_t off) {
  return b->qbytes.p ? b->qbytes.p + off : (const uint8_t *)"";
}

static void qhash_insert(kv_sfb_builder *b, uint32_t idx) {
  const kv_sfb_qual *e = &b->quals[idx];
  size_t mask = b->qhash_cap - 1;
  size_t h = qhash_of(qual_bytes(b, e->off), e->len) & mask;
  while (b->qhash[h]) h = (h + 1) & mask;
  b->qhash[h] = idx + 1;
}

/* Dictionary index of qualifier q, adding it if new: KV_OK or KV_ERR_NOMEM. */
static int qual_index(kv_sfb_builder *b, const uint8_t *q, uint32_t len, uint32_t *out) {
  /* Rows usually repeat the same qualifiers in the same order: try the next entry. */
  uint32_t guess = b->last_qual + 1;
  if (guess < b->nquals && qual_eq(b, guess, q, len)) { *out = guess; return KV_OK; }
  if (b->last_qual < b->nquals && qual_eq(b, b->last_qual, q, len)) {
    *out = b->last_qual;
    return KV_OK;
  }
  if (b->qhash_cap) {
    size_t mask = b->qhash_cap - 1;
    for (size_t h = qhash_of(q, len) & mask; b->qhash[h]; h = (h + 1) & mask) {
      if (qual_eq(b, b->qhash[h] - 1, q, len)) { *out = b->qhash[h] - 1; return KV_OK; }
    }
  }
  /* New entry. */
  if ((b->nquals + 1) * 2 > b->qhash_cap) {
    size_t cap = b->qhash_cap ? b->qhash_cap * 2 : 32;
    uint32_t *t = calloc(cap, sizeof *t);
    if (!t) return KV_ERR_NOMEM;
    free(b->qhash);
    b->qhash = t;
    b->qhash_cap = cap;
    for (uint32_t i = 0; i < b->nquals; i++) qhash_insert(b, i);
  }
  if (kv_sf_grow((void **)&b->quals, &b->quals_cap, b->nquals + 1, sizeof *b->quals))
    return KV_ERR_NOMEM;
  uint32_t off = (uint32_t)b->qbytes.len;
  if (kv_sfbuf_append(&b->qbytes, q, len)) return KV_ERR_NOMEM;
  b->quals[b->nquals].off = off;
  b->quals[b->nquals].len = len;
  qhash_insert(b, (uint32_t)b->nquals);
  *out = (uint32_t)b->nquals++;
  b->est += len + 2;
  return KV_OK;
}

int kv_sfb_add(kv_sfb_builder *b, const kv_cell *c, int new_row) {
  if (b->ncells == 0) b->min_seq = UINT64_MAX;
  if ((uint64_t)b->keys.len + c->row_len > UINT32_MAX ||
      (uint64_t)b->vals.len + c->value_len > UINT32_MAX || b->ncells >= UINT32_MAX - 1)
    return KV_ERR_TOOBIG;
  if (new_row || b->nrows == 0) {
    if (kv_sf_grow((void **)&b->rows, &b->rows_cap, b->nrows + 1, sizeof *b->rows))
      return KV_ERR_NOMEM;
    kv_sfb_row *r = &b->rows[b->nrows];
    r->key_off = (uint32_t)b->keys.len;
    r->key_len = c->row_len;
    r->ncells = 0;
    if (kv_sfbuf_append(&b->keys, c->row, c->row_len)) return KV_ERR_NOMEM;
    b->nrows++;
    b->est += c->row_len + 3;
  }
  if (kv_sf_grow((void **)&b->cells, &b->cells_cap, b->ncells + 1, sizeof *b->cells))
    return KV_ERR_NOMEM;
  uint32_t q;
  if (qual_index(b, c->qual, c->qual_len, &q)) return KV_ERR_NOMEM;
  b->last_qual = q;
  kv_sfb_cell *e = &b->cells[b->ncells];
  e->ts = c->ts;
  e->seq = c->seq;
  e->qual = q;
  e->type = c->type;
  e->val_off = (uint32_t)b->vals.len;
  e->val_len = c->value_len;
  if (kv_sfbuf_append(&b->vals, c->value, c->value_len)) return KV_ERR_NOMEM;
  b->rows[b->nrows - 1].ncells++;
  b->ncells++;
  if (c->seq < b->min_seq) b->min_seq = c->seq;
  b->est += c->value_len + 4;
  return KV_OK;
}

void kv_sfb_first_cell(const kv_sfb_builder *b, kv_cell *out) {
  const kv_sfb_cell *e = &b->cells[0];
  const kv_sfb_qual *q = &b->quals[e->qual];
  out->row = b->keys.p ? b->keys.p + b->rows[0].key_off : (const uint8_t *)""; /* (empty key) */
  out->row_len = b->rows[0].key_len;
  out->qual = qual_bytes(b, q->off);
  out->qual_len = q->len;
  out->ts = e->ts;
  out->seq = e->seq;
  out->type = e->type;
  out->value = NULL;
  out->value_len = 0;
}

/* ---- Encoding ---- */

/* Reserve room for n varints in `o` and return where to write them. */
#define VARINT_ROOM(o, n) \
  do { if (kv_sfbuf_reserve((o), (size_t)(n) * 10u)) return KV_ERR_NOMEM; } while (0)

static uint32_t shared_prefix(const uint8_t *a, uint32_t alen, const uint8_t *b, uint32_t blen) {
  uint32_t n = alen < blen ? alen : blen, i = 0;
  while (i < n && a[i] == b[i]) i++;
  return i;
}

/* Rows section: the cells-per-row stream, then the keys in one of three modes. Keys of one
** length (a fixed-width composite key) share a block-wide prefix; a suffix of at most 8
** bytes is then stored as the delta of its big-endian value from the previous row's
** (hourly readings give one repeated delta, which lz4 all but removes), a longer one
** transposed. Other blocks use prefix compression against the previous row. */
static int encode_rows(kv_sfb_builder *b) {
  kv_sfbuf *o = &b->out;
  const uint8_t *keys = b->keys.p ? b->keys.p : (const uint8_t *)""; /* (empty keys: may be NULL) */
  size_t n = b->nrows;
  VARINT_ROOM(o, n * 2 + 4);
  uint8_t *p = o->p + o->len;
  for (size_t r = 0; r < n; r++) p = kv_put_varint(p, b->rows[r].ncells);
  uint32_t klen = b->rows[0].key_len;
  int same_len = 1;
  for (size_t r = 1; r < n && same_len; r++) same_len = b->rows[r].key_len == klen;
  if (same_len) {
    /* Rows are sorted, so the prefix common to the first and last is common to all. */
    const uint8_t *first = keys + b->rows[0].key_off, *last = keys + b->rows[n - 1].key_off;
    uint32_t lcp = shared_prefix(first, klen, last, klen), w = klen - lcp;
    p = kv_put_varint(p, w <= 8 ? KV_SF_ROWS_DELTA : KV_SF_ROWS_FIXED);
    p = kv_put_varint(p, klen);
    p = kv_put_varint(p, lcp);
    o->len = (size_t)(p - o->p);
    if (kv_sfbuf_append(o, first, lcp)) return KV_ERR_NOMEM;
    if (w <= 8) {
      VARINT_ROOM(o, n);
      p = o->p + o->len;
      uint64_t prev = 0;
      for (size_t r = 0; r < n; r++) {
        const uint8_t *k = keys + b->rows[r].key_off + lcp;
        uint64_t v = 0;
        for (uint32_t j = 0; j < w; j++) v = (v << 8) | k[j];
        p = kv_put_varint(p, v - prev);  /* sorted: v > prev after the first row */
        prev = v;
      }
    } else {
      if (kv_sfbuf_reserve(o, n * w)) return KV_ERR_NOMEM;
      p = o->p + o->len;
      for (uint32_t j = 0; j < w; j++)
        for (size_t r = 0; r < n; r++) *p++ = keys[b->rows[r].key_off + lcp + j];
    }
    o->len = (size_t)(p - o->p);
    return KV_OK;
  }
  /* Prefix compression: shared-length stream, suffix-length stream, suffix bytes. */
  p = kv_put_varint(p, KV_SF_ROWS_PREFIX);
  o->len = (size_t)(p - o->p);
  VARINT_ROOM(o, n * 2);
  p = o->p + o->len;
  size_t total = 0;
  for (int pass = 0; pass < 2; pass++) {
    for (size_t r = 0; r < n; r++) {
      const kv_sfb_row *row = &b->rows[r];
      uint32_t sh = r ? shared_prefix(keys + b->rows[r - 1].key_off, b->rows[r - 1].key_len,
                                      keys + row->key_off, row->key_len) : 0;
      p = kv_put_varint(p, pass == 0 ? sh : row->key_len - sh);
      total += pass ? row->key_len - sh : 0;
    }
  }
  o->len = (size_t)(p - o->p);
  if (kv_sfbuf_reserve(o, total)) return KV_ERR_NOMEM;
  p = o->p + o->len;
  for (size_t r = 0; r < n; r++) {
    const kv_sfb_row *row = &b->rows[r];
    uint32_t sh = r ? shared_prefix(keys + b->rows[r - 1].key_off, b->rows[r - 1].key_len,
                                    keys + row->key_off, row->key_len) : 0;
    memcpy(p, keys + row->key_off + sh, row->key_len - sh);
    p += row->key_len - sh;
  }
  o->len = (size_t)(p - o->p);
  return KV_OK;
}

static int encode_cells(kv_sfb_builder *b) {
  kv_sfbuf *o = &b->out;
  size_t n = b->ncells;
  VARINT_ROOM(o, n * 3 + n / 10 + 1);
  uint8_t *p = o->p + o->len;
  if (b->nquals > 1)
    for (size_t i = 0; i < n; i++) p = kv_put_varint(p, b->cells[i].qual);
  uint64_t prev = 0;
  for (size_t i = 0; i < n; i++) {
    uint64_t ts = (uint64_t)b->cells[i].ts;
    p = kv_put_varint(p, kv_zigzag((int64_t)(ts - prev)));
    prev = ts;
  }
  for (size_t i = 0; i < n; i++) *p++ = b->cells[i].type;
  for (size_t i = 0; i < n; i++) p = kv_put_varint(p, b->cells[i].seq - b->min_seq);
  o->len = (size_t)(p - o->p);
  return KV_OK;
}

static int encode_values(kv_sfb_builder *b) {
  kv_sfbuf *o = &b->out;
  size_t ng = b->nquals + 1, n = b->ncells;
  if (kv_sf_grow(&b->groups, &b->groups_cap, ng, sizeof(group)) ||
      kv_sf_grow((void **)&b->order, &b->order_cap, n ? n : 1, sizeof *b->order))
    return KV_ERR_NOMEM;
  group *gs = b->groups;
  memset(gs, 0, ng * sizeof *gs);
  for (size_t i = 0; i < n; i++) {
    const kv_sfb_cell *c = &b->cells[i];
    group *g = &gs[c->type == KV_PUT ? c->qual : b->nquals];
    if (g->count == 0) { g->width = c->val_len; g->fixed = 1; }
    else if (c->val_len != g->width) g->fixed = 0;
    g->count++;
  }
  uint32_t start = 0;
  for (size_t g = 0; g < ng; g++) { gs[g].start = start; start += gs[g].count; }
  for (size_t i = 0; i < n; i++) {
    const kv_sfb_cell *c = &b->cells[i];
    group *g = &gs[c->type == KV_PUT ? c->qual : b->nquals];
    b->order[g->start + g->fill++] = (uint32_t)i;
  }
  const uint8_t *vals = b->vals.p;
  b->ncuts = 0;
  if (kv_sf_grow((void **)&b->cuts, &b->cuts_cap, ng, sizeof *b->cuts)) return KV_ERR_NOMEM;
  for (size_t gi = 0; gi < ng; gi++) {
    const group *g = &gs[gi];
    const uint32_t *mem = b->order + g->start;
    if (g->count == 0) continue;
    if (o->len > UINT32_MAX) return KV_ERR_NOMEM; /* (raw blocks stay far below 4 GiB) */
    b->cuts[b->ncuts++] = (uint32_t)o->len; /* a value group starts a section (sf_frame.c) */
    if (g->fixed && g->width == 8 && !b->no_dec) { /* decimal-scaled when it holds (sf_dec.c) */
      int r = kv_sfdec_try(o, vals, b->cells, mem, g->count, &b->dscratch, &b->dscratch_cap);
      if (r < 0) return KV_ERR_NOMEM;
      if (r) {
        b->used_dec = true;
        continue;
      }
    }
    if (g->fixed) {
      size_t w = g->width;
      if (kv_sfbuf_varint(o, (uint64_t)w + 1) || kv_sfbuf_reserve(o, (size_t)g->count * w))
        return KV_ERR_NOMEM;
      uint8_t *p = o->p + o->len;
      size_t cnt = g->count;
      if (w == 8) { /* a DOUBLE or BIGINT column: each value read once, to 8 byte streams */
        for (size_t k = 0; k < cnt; k++) {
          const uint8_t *s = vals + b->cells[mem[k]].val_off;
          p[k] = s[0];
          p[cnt + k] = s[1];
          p[2 * cnt + k] = s[2];
          p[3 * cnt + k] = s[3];
          p[4 * cnt + k] = s[4];
          p[5 * cnt + k] = s[5];
          p[6 * cnt + k] = s[6];
          p[7 * cnt + k] = s[7];
        }
      } else if (w <= 16) {
        for (size_t k = 0; w && k < cnt; k++) { /* (w 0: no bytes, and vals may be NULL) */
          const uint8_t *s = vals + b->cells[mem[k]].val_off;
          for (size_t j = 0; j < w; j++) p[j * cnt + k] = s[j];
        }
      } else {
        uint8_t *q = p;
        for (size_t j = 0; j < w; j++)
          for (size_t k = 0; k < cnt; k++) *q++ = vals[b->cells[mem[k]].val_off + j];
      }
      o->len += w * cnt;
      continue;
    }
    uint64_t lens_bytes = 0, data_bytes = 0;
    for (uint32_t k = 0; k < g->count; k++) {
      uint32_t l = b->cells[mem[k]].val_len;
      lens_bytes += (uint64_t)kv_varint_len(l);
      data_bytes += l;
    }
    if (kv_sfbuf_varint(o, 0) || kv_sfbuf_varint(o, lens_bytes) ||
        kv_sfbuf_varint(o, data_bytes) || kv_sfbuf_reserve(o, lens_bytes + data_bytes))
      return KV_ERR_NOMEM;
    uint8_t *p = o->p + o->len;
    for (uint32_t k = 0; k < g->count; k++) p = kv_put_varint(p, b->cells[mem[k]].val_len);
    for (uint32_t k = 0; k < g->count; k++) {
      const kv_sfb_cell *c = &b->cells[mem[k]];
      if (c->val_len) memcpy(p, vals + c->val_off, c->val_len);
      p += c->val_len;
    }
    o->len = (size_t)(p - o->p);
  }
  return KV_OK;
}

int kv_sfb_encode(kv_sfb_builder *b) {
  kv_sfbuf *o = &b->out;
  o->len = 0;
  if (kv_sfbuf_varint(o, b->nrows) || kv_sfbuf_varint(o, b->ncells) ||
      kv_sfbuf_varint(o, b->nquals) || kv_sfbuf_varint(o, b->min_seq))
    return KV_ERR_NOMEM;
  for (size_t q = 0; q < b->nquals; q++) {
    if (kv_sfbuf_varint(o, b->quals[q].len) ||
        kv_sfbuf_append(o, qual_bytes(b, b->quals[q].off), b->quals[q].len))
      return KV_ERR_NOMEM;
  }
  int rc = encode_rows(b);
  if (!rc) rc = encode_cells(b);
  if (!rc) rc = encode_values(b);
  return rc;
}
