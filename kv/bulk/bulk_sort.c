/*
** kv/bulk/bulk_sort.c: the bulk load's ordering (kv/bulk/bulk_int.h). Sorting a buffer's groups (a
** buffer whose rows came ascending needs nothing, one whose rows came strictly descending
** is reversed, any other by a natural merge sort); reading a sorted buffer in cell order
** (rows made of several groups are sorted cell by cell); the resolver, which drops the
** cells a later cell of the load replaces or masks (kv/bulk/bulk.h) and gives the survivors the
** load's sequence number; and the merge of a family's run files and closed buffers, with
** buffers that follow one another in key order read as one chain.
** Not here: adding cells and spilling (kv/bulk/bulk.c), the worker and the final files
** (kv/bulk/bulk_write.c), the store file format (kv/sf/).
*/
#include <stdlib.h>
#include <string.h>

#include "kv/bulk/bulk_int.h"
#include "kv/db/db_impl.h"
#include "kv/util/iter.h"
#include "kv/util/status.h"

typedef kv_bulk_src msrc;
typedef kv_bulk_pend pend;
typedef kv_bulk_resolver resolver;

/* ---- sorting a buffer ------------------------------------------------------------------- */

/* Order of two groups: row key, then add order (equal rows are merged cell by cell later).
** Meeting equal rows clears u->distinct: a comparison sort compares every two neighbours
** of its output, so a sort that met none leaves no two groups of one row. */
static int gcmp(kv_bulk_buf *u, const kv_bulk_grp *a, const kv_bulk_grp *b) {
  const kv_bulk_ent *x = &u->ents[a->first], *y = &u->ents[b->first];
  int c = kv_sf_key_cmp(u->arena + x->row_off, x->row_len, u->arena + y->row_off, y->row_len);
  if (c) return c;
  u->distinct = false;
  return a->first < b->first ? -1 : 1; /* entry index order is add order */
}

#define RADIX_MIN 1024 /* groups from which an unordered buffer may be radix-sorted */
#define RADIX_RUN 16   /* average run length below which it is */

static void reverse(kv_bulk_grp *g, size_t lo, size_t hi) {
  for (; lo < hi; lo++, hi--) {
    kv_bulk_grp t = g[lo];
    g[lo] = g[hi];
    g[hi] = t;
  }
}

/* A group with the first 16 bytes of its row key as two big-endian numbers (zero-padded):
** most comparisons of an unordered sort are decided by these without touching the arena
** (16, not 8: an index row key starts with the indexed value, which many rows share). */
typedef struct kgrp {
  uint64_t k8;            /* the row key's bytes 0..7 as a big-endian number */
  uint64_t k16;           /* its bytes 8..15 */
  kv_bulk_grp g;          /* the group */
} kgrp;

static inline int kcmp(kv_bulk_buf *u, const kgrp *a, const kgrp *b) {
  if (a->k8 != b->k8) return a->k8 < b->k8 ? -1 : 1;
  if (a->k16 != b->k16) return a->k16 < b->k16 ? -1 : 1;
  return gcmp(u, &a->g, &b->g);
}

static void kreverse(kgrp *g, size_t lo, size_t hi) {
  for (; lo < hi; lo++, hi--) {
    kgrp t = g[lo];
    g[lo] = g[hi];
    g[hi] = t;
  }
}

/* Context of tie_cmp (qsort has none; per thread: the worker and the caller sort at once). */
static _Thread_local kv_bulk_buf *tie_buf;

static int tie_cmp(const void *a, const void *b) {
  return gcmp(tie_buf, &((const kgrp *)a)->g, &((const kgrp *)b)->g);
}

#define MSD_SMALL 48   /* groups a radix_sort bucket needs to be cut further by bytes */
#define MSD_BYTES 64   /* key bytes radix_sort orders by bytes; gcmp orders the rest */
#define MSD_LEVELS MSD_BYTES /* deepest nesting of radix_sort's buckets (one per byte) */

/* Byte i (0..15) of g's loaded words. */
static inline unsigned kbyte(const kgrp *g, int i) {
  uint64_t w = i < 8 ? g->k8 : g->k16;
  return (unsigned)(w >> (56 - 8 * (i & 7))) & 0xffu;
}

/* Load bytes [off, off + 16) of the row keys of a[0..n) as their words (zero-padded).
** Returns whether a key has bytes there (false: every key ends before off, the words are
** all zero). */
static bool load_words(const kv_bulk_buf *u, kgrp *a, size_t n, size_t off) {
  bool longer = false;
  for (size_t k = 0; k < n; k++) {
    const kv_bulk_ent *e = &u->ents[a[k].g.first];
    uint8_t b16[16] = {0};
    if (e->row_len > off) {
      size_t m = e->row_len - off;
      memcpy(b16, u->arena + e->row_off + off, m < 16 ? m : 16);
      longer = true;
    }
    uint64_t v = 0, w = 0;
    for (int x = 0; x < 8; x++) {
      v = v << 8 | b16[x];
      w = w << 8 | b16[8 + x];
    }
    a[k].k8 = v;
    a[k].k16 = w;
  }
  return longer;
}

/* Clear u->distinct if two neighbours of the sorted a[0..n) have the same row (only those
** with the same words can). */
static void note_equal(kv_bulk_buf *u, const kgrp *a, size_t n) {
  for (size_t k = 1; k < n && u->distinct; k++) {
    if (a[k - 1].k8 != a[k].k8 || a[k - 1].k16 != a[k].k16) continue;
    const kv_bulk_ent *x = &u->ents[a[k - 1].g.first], *y = &u->ents[a[k].g.first];
    if (kv_sf_key_cmp(u->arena + x->row_off, x->row_len, u->arena + y->row_off,
                      y->row_len) == 0)
      u->distinct = false;
  }
}

/* Insertion sort of a few groups whose keys agree before their words: by the words, then
** (the same words) by gcmp (whole key, then add order). */
static void small_sort(kv_bulk_buf *u, kgrp *a, size_t n) {
  for (size_t i = 1; i < n; i++) {
    kgrp x = a[i];
    size_t j = i;
    while (j > 0) {
      const kgrp *p = &a[j - 1];
      int c = p->k8 != x.k8 ? (p->k8 < x.k8 ? -1 : 1)
              : p->k16 != x.k16 ? (p->k16 < x.k16 ? -1 : 1) : gcmp(u, &p->g, &x.g);
      if (c < 0) break;
      a[j] = a[j - 1];
      j--;
    }
    a[j] = x;
  }
  note_equal(u, a, n);
}

/* State of one radix_sort. */
typedef struct msd_ctx {
  kv_bulk_buf *u;         /* the buffer whose groups are sorted */
  uint32_t (*cnt)[256];   /* per nesting level: the bucket bounds */
} msd_ctx;

/* Sort a[0..n) (tmp: n more scratch) by row key, then add order: groups whose keys agree in
** their first off + i bytes (zero-padded), with bytes [off, off + 16) loaded as their words.
** Most significant byte first: each byte that is not the same in every group of the part
** cuts it into up to 256 buckets (one pass, copied back), each sorted the same way from
** the next byte, so a part is soon small enough for the cache and for small_sort; after 16
** bytes the next 16 are loaded. Past MSD_BYTES, or when no key of a part goes past the
** bytes ordered so far, what is left of it is one key (or keys equal but for trailing zero
** bytes): gcmp orders it. depth: the nesting level (< MSD_LEVELS). */
static void msd(msd_ctx *c, kgrp *a, kgrp *tmp, size_t n, size_t off, int i, int depth) {
  for (;;) {
    if (n <= MSD_SMALL) {
      small_sort(c->u, a, n);
      return;
    }
    if (i == 16) {
      if (off + 16 >= MSD_BYTES || !load_words(c->u, a, n, off + 16)) {
        tie_buf = c->u;
        qsort(a, n, sizeof *a, tie_cmp);
        note_equal(c->u, a, n);
        return;
      }
      off += 16;
      i = 0;
      continue;
    }
    uint32_t *cnt = c->cnt[depth];
    memset(cnt, 0, 256 * sizeof *cnt);
    for (size_t k = 0; k < n; k++) cnt[kbyte(&a[k], i)]++;
    bool one = false; /* a byte every group of the part has: the next one */
    for (int d = 0; d < 256 && !one; d++) one = cnt[d] == n;
    if (one) {
      i++;
      continue;
    }
    uint32_t pos = 0; /* cnt[d]: bucket d's start, then (after the copy) its end */
    for (int d = 0; d < 256; d++) {
      uint32_t m = cnt[d];
      cnt[d] = pos;
      pos += m;
    }
    for (size_t k = 0; k < n; k++) tmp[cnt[kbyte(&a[k], i)]++] = a[k];
    memcpy(a, tmp, n * sizeof *a);
    for (int d = 0; d < 256; d++) {
      size_t lo = d ? cnt[d - 1] : 0, m = cnt[d] - lo;
      if (m > 1) msd(c, a + lo, tmp + lo, m, off, i + 1, depth + 1);
    }
    return;
  }
}

/* Sort g[0..n) (tmp: n more) by row key, then add order, with msd from the words
** kv_bulk_sort_buf loaded. For buffers in no order at all (an index's rows): a merge
** sort's comparisons mispredict about every other time there, and an index's keys lead
** with the indexed value, which many rows share (16 bytes of prefix compared as numbers,
** then whole keys, went back to the arena again and again). KV_OK or KV_ERR_NOMEM. */
static int radix_sort(kv_bulk_buf *u, kgrp *g, kgrp *tmp, size_t n) {
  msd_ctx c = {u, malloc(MSD_LEVELS * sizeof *c.cnt)};
  if (!c.cnt) return kv_error(KV_ERR_NOMEM, "bulk load: out of memory sorting");
  msd(&c, g, tmp, n, 0, 0, 0);
  free(c.cnt);
  return KV_OK;
}

/* Groups that came in strictly ascending rows need nothing, strictly descending ones are
** reversed (distinct rows: the reversal keeps no equal rows to order). Anything else goes
** through a natural merge sort on (key prefix, group): the input is cut into maximal
** ascending runs and strictly descending runs, each descending run is reversed in place,
** then neighbouring runs are merged pairwise until one is left; or, when the groups turn
** order more often than every RADIX_RUN of them on average (runs too short for merging to
** pay), through radix_sort. */
int kv_bulk_sort_buf(kv_bulk_buf *u) {
  size_t n = u->n_grps;
  if (u->sorted) return KV_OK;
  if (n < 2 || u->dir == KV_BULK_DIR_ASC || u->dir == KV_BULK_DIR_DESC) {
    if (n >= 2 && u->dir == KV_BULK_DIR_DESC) reverse(u->grps, 0, n - 1);
    u->sorted = u->distinct = true;
    return KV_OK;
  }
  u->distinct = true;
  size_t *starts = malloc((n + 1) * sizeof *starts);
  kgrp *g = malloc(n * sizeof *g), *tmp = malloc(n * sizeof *tmp);
  if (!starts || !g || !tmp) {
    free(starts);
    free(g);
    free(tmp);
    return kv_error(KV_ERR_NOMEM, "bulk load: out of memory sorting");
  }
  for (size_t k = 0; k < n; k++) {
    const kv_bulk_ent *e = &u->ents[u->grps[k].first];
    uint8_t b16[16] = {0};
    memcpy(b16, u->arena + e->row_off, e->row_len < 16 ? e->row_len : 16);
    uint64_t v = 0, w = 0;
    for (int x = 0; x < 8; x++) {
      v = v << 8 | b16[x];
      w = w << 8 | b16[8 + x];
    }
    g[k].k8 = v;
    g[k].k16 = w;
    g[k].g = u->grps[k];
  }

  size_t turns = 0; /* descents of the prefix: about the number of runs */
  for (size_t k = 1; k < n; k++)
    turns += g[k - 1].k8 > g[k].k8 || (g[k - 1].k8 == g[k].k8 && g[k - 1].k16 > g[k].k16);
  if (n >= RADIX_MIN && turns * RADIX_RUN > n) {
    int rc = radix_sort(u, g, tmp, n);
    if (rc == KV_OK)
      for (size_t k = 0; k < n; k++) u->grps[k] = g[k].g;
    free(starts);
    free(g);
    free(tmp);
    u->sorted = rc == KV_OK;
    return rc;
  }
  size_t nr = 0, i = 0;
  while (i < n) {
    size_t j = i + 1;
    if (j < n && kcmp(u, &g[i], &g[j]) > 0) {
      while (j < n && kcmp(u, &g[j - 1], &g[j]) > 0) j++;
      kreverse(g, i, j - 1);
    } else {
      while (j < n && kcmp(u, &g[j - 1], &g[j]) < 0) j++;
    }
    starts[nr++] = i;
    i = j;
  }
  starts[nr] = n;
  kgrp *src = g, *dst = tmp;
  while (nr > 1) {
    size_t out = 0;
    for (size_t r = 0; r < nr; r += 2) {
      size_t lo = starts[r], mid = starts[r + 1], hi = r + 2 <= nr ? starts[r + 2] : mid;
      size_t a = lo, b = mid, k = lo;
      while (a < mid && b < hi) dst[k++] = kcmp(u, &src[b], &src[a]) < 0 ? src[b++] : src[a++];
      while (a < mid) dst[k++] = src[a++];
      while (b < hi) dst[k++] = src[b++];
      starts[out++] = lo;
    }
    starts[out] = n;
    nr = out;
    kgrp *t = src;
    src = dst;
    dst = t;
  }
  for (size_t k = 0; k < n; k++) u->grps[k] = src[k].g;
  free(starts);
  free(g);
  free(tmp);
  u->sorted = true;
  return KV_OK;
}

/* ---- reading sorted buffers in cell order ----------------------------------------------- */

/* Sorting a span needs its buffer: qsort has no context argument, so it is passed here
** (per thread: the worker and the caller sort at the same time). */
static _Thread_local const kv_bulk_buf *sort_buf;

static int idx_cmp(const void *a, const void *b) {
  const kv_bulk_buf *u = sort_buf;
  kv_cell x = kv_bulk_ent_cell(u, &u->ents[*(const uint32_t *)a]);
  kv_cell y = kv_bulk_ent_cell(u, &u->ents[*(const uint32_t *)b]);
  return kv_cell_cmp(&x, &y);
}


/* Load the next span (the groups of the next row key) of the chain into s->span. */
int kv_bulk_src_fill(msrc *s) {
  s->span_n = s->span_i = s->span_groups = 0;
  while (s->ci < s->n_chain && s->gi >= s->chain[s->ci]->n_grps) {
    s->ci++;
    s->gi = 0;
  }
  if (s->ci >= s->n_chain) return KV_OK;
  const kv_bulk_buf *u = s->chain[s->ci];
  size_t g = s->gi, end = g + 1;
  const kv_bulk_ent *e0 = &u->ents[u->grps[g].first];
  while (!u->distinct && end < u->n_grps) {
    const kv_bulk_ent *e = &u->ents[u->grps[end].first];
    if (kv_sf_key_cmp(u->arena + e->row_off, e->row_len, u->arena + e0->row_off,
                      e0->row_len) != 0)
      break;
    end++;
  }
  size_t n = 0;
  for (size_t k = g; k < end; k++) n += u->grps[k].n;
  if (!kv_bulk_grow((void **)&s->span, &s->span_cap, n, sizeof *s->span))
    return kv_error(KV_ERR_NOMEM, "bulk load: out of memory");
  for (size_t k = g; k < end; k++)
    for (uint32_t j = 0; j < u->grps[k].n; j++) s->span[s->span_n++] = u->grps[k].first + j;
  s->span_groups = end - g;
  if (end - g > 1) {
    sort_buf = u;
    qsort(s->span, s->span_n, sizeof *s->span, idx_cmp);
  }
  s->gi = end;
  return KV_OK;
}

/* s->pfx from s->cur's row key. */
static inline void set_pfx(msrc *s) {
  uint8_t b[16] = {0};
  memcpy(b, s->cur.row, s->cur.row_len < 16 ? s->cur.row_len : 16);
  uint64_t v = 0, w = 0;
  for (int x = 0; x < 8; x++) {
    v = v << 8 | b[x];
    w = w << 8 | b[8 + x];
  }
  s->pfx[0] = v;
  s->pfx[1] = w;
}

int kv_bulk_src_next(msrc *s) {
  if (s->it) {
    kv_iter *it = s->it;
    if (s->valid) it->ops->next(it);
    s->valid = it->ops->valid(it);
    if (s->valid) {
      s->cur = *it->ops->cell(it);
      set_pfx(s);
    } else {
      s->err = it->ops->status(it);
    }
    return s->err;
  }
  if (s->span_i >= s->span_n) {
    int rc = kv_bulk_src_fill(s);
    if (rc) return s->err = rc;
    /* the next rows' entries, then their keys: a sorted unordered buffer (an index's
    ** rows) visits its arena in no order, a cache miss per row without this */
    const kv_bulk_buf *u = s->ci < s->n_chain ? s->chain[s->ci] : NULL;
    if (u && s->gi + 4 < u->n_grps) __builtin_prefetch(&u->ents[u->grps[s->gi + 4].first]);
    if (u && s->gi + 2 < u->n_grps)
      __builtin_prefetch(u->arena + u->ents[u->grps[s->gi + 2].first].row_off);
  }
  s->valid = s->span_i < s->span_n;
  if (s->valid) {
    const kv_bulk_buf *u = s->chain[s->ci];
    s->cur = kv_bulk_ent_cell(u, &u->ents[s->span[s->span_i++]]);
    set_pfx(s);
  }
  return KV_OK;
}

void kv_bulk_src_free(msrc *s) {
  if (s->it) s->it->ops->destroy(s->it);
  if (s->r) kv_sf_close(s->r);
  free(s->span);
  memset(s, 0, sizeof *s);
}

/* ---- resolving -------------------------------------------------------------------------- */




static bool copy_bytes(uint8_t **buf, size_t *cap, const uint8_t *p, size_t n) {
  if (!kv_bulk_grow((void **)buf, cap, n ? n : 1, 1)) return false;
  if (n) memcpy(*buf, p, n);
  return true;
}

/* Write the pending cells, tombstones first (type descending). */
int kv_bulk_resolve_flush(resolver *r) {
  int rc = KV_OK;
  for (int t = 3; t >= 0 && rc == KV_OK; t--) {
    pend *p = &r->pend[t];
    if (!p->used) continue;
    p->c.row = r->row;
    p->c.row_len = (uint32_t)r->row_len;
    rc = kv_sf_writer_add(r->w, &p->c);
    p->used = false;
  }
  return rc;
}

int kv_bulk_resolve(resolver *r, const kv_cell *c) {
  bool new_row = !r->have_row || !(c->row_len == r->row_len &&
                                   memcmp(c->row, r->row, r->row_len) == 0);
  bool new_qual = new_row || !r->have_qual ||
                  kv_bytes_cmp(c->qual, c->qual_len, r->qual, r->qual_len) != 0;
  bool new_ts = new_qual || !r->have_ts || c->ts != r->ts;
  if (new_ts) {
    int rc = kv_bulk_resolve_flush(r);
    if (rc) return rc;
    r->ts = c->ts;
    r->have_ts = true;
    r->delver_ord = 0;
  }
  if (new_qual) {
    if (!copy_bytes(&r->qual, &r->qual_cap, c->qual, c->qual_len))
      return kv_error(KV_ERR_NOMEM, "bulk load: out of memory");
    r->qual_len = c->qual_len;
    r->have_qual = true;
    r->delcol_ord = 0;
  }
  if (new_row) {
    if (!copy_bytes(&r->row, &r->row_cap, c->row, c->row_len))
      return kv_error(KV_ERR_NOMEM, "bulk load: out of memory");
    r->row_len = c->row_len;
    r->have_row = true;
    r->n_fdels = 0;
  }
  pend *p = &r->pend[c->type & 3];
  if (p->used) return KV_OK; /* a later-added cell of the same key and type replaced it */
  uint64_t ord = c->seq;
  switch (c->type) {
  case KV_PUT:
    if (ord < r->delcol_ord || ord < r->delver_ord) return KV_OK;
    for (size_t i = 0; i < r->n_fdels; i++)
      if (r->fdels[i].ts >= c->ts && r->fdels[i].ord > ord) return KV_OK;
    break;
  case KV_DELETE_COLUMN:
    if (ord > r->delcol_ord) r->delcol_ord = ord;
    break;
  case KV_DELETE_VERSION:
    if (ord > r->delver_ord) r->delver_ord = ord;
    break;
  default: /* KV_DELETE_FAMILY */
    if (!kv_bulk_grow((void **)&r->fdels, &r->cap_fdels, r->n_fdels + 1, sizeof *r->fdels))
      return kv_error(KV_ERR_NOMEM, "bulk load: out of memory");
    r->fdels[r->n_fdels].ts = c->ts;
    r->fdels[r->n_fdels].ord = ord;
    r->n_fdels++;
    break;
  }
  if (!copy_bytes(&p->qual, &p->qual_cap, c->qual, c->qual_len) ||
      !copy_bytes(&p->val, &p->val_cap, c->value, c->value_len))
    return kv_error(KV_ERR_NOMEM, "bulk load: out of memory");
  p->c = *c;
  p->c.qual = p->qual;
  p->c.value = p->val;
  p->c.seq = r->seq;
  p->used = true;
  return KV_OK;
}

void kv_bulk_resolver_free(resolver *r) {
  free(r->row);
  free(r->qual);
  free(r->fdels);
  for (int t = 0; t < 4; t++) {
    free(r->pend[t].qual);
    free(r->pend[t].val);
  }
}

/* One buffer, row by row. A row made of one group has no two cells of one (qualifier,
** timestamp), and none of its cells masks another: a group's later cells sort after its
** earlier ones, and a tombstone masks only cells added before it that sort after it in the
** same column (equal or older timestamp), which a group cannot hold. So such a row is
** written as it is, all its cells in one kv_sf_writer_add_row; a row of several groups goes
** through the resolver. */
int kv_bulk_write_buf(const kv_bulk_buf *u, kv_sf_writer *w, uint64_t seq) {
  msrc s;
  memset(&s, 0, sizeof s);
  kv_bulk_buf *one = (kv_bulk_buf *)u; /* read only: the chain type is shared with merges */
  s.chain = &one;
  s.n_chain = 1;
  resolver r;
  memset(&r, 0, sizeof r);
  r.w = w;
  r.seq = seq;
  int rc = KV_OK;
  kv_cell *row = NULL; /* a one-group row's cells, added at once */
  size_t row_cap = 0;
  for (;;) {
    rc = kv_bulk_src_fill(&s);
    if (rc || s.span_n == 0) break;
    if (s.span_groups == 1) {
      if (!kv_bulk_grow((void **)&row, &row_cap, s.span_n, sizeof *row)) {
        rc = kv_error(KV_ERR_NOMEM, "bulk load: out of memory");
        break;
      }
      for (size_t i = 0; i < s.span_n; i++) {
        row[i] = kv_bulk_ent_cell(u, &u->ents[s.span[i]]);
        row[i].seq = seq;
      }
      rc = kv_sf_writer_add_row(w, row, s.span_n);
    } else {
      for (size_t i = 0; i < s.span_n && rc == KV_OK; i++) {
        kv_cell c = kv_bulk_ent_cell(u, &u->ents[s.span[i]]);
        rc = kv_bulk_resolve(&r, &c);
      }
      if (rc == KV_OK) rc = kv_bulk_resolve_flush(&r);
    }
    if (rc) break;
  }
  kv_bulk_resolver_free(&r);
  free(s.span);
  free(row);
  return rc;
}

/* ---- merging ---------------------------------------------------------------------------- */

/* First / last row key of a sorted, non-empty buffer. */
static const uint8_t *buf_row(const kv_bulk_buf *u, size_t g, size_t *len) {
  const kv_bulk_ent *e = &u->ents[u->grps[g].first];
  *len = e->row_len;
  return u->arena + e->row_off;
}

static _Thread_local kv_bulk_buf **chain_bufs;

static int first_row_cmp(const void *a, const void *b) {
  const kv_bulk_buf *x = chain_bufs[*(const uint32_t *)a];
  const kv_bulk_buf *y = chain_bufs[*(const uint32_t *)b];
  size_t xl, yl;
  const uint8_t *xr = buf_row(x, 0, &xl), *yr = buf_row(y, 0, &yl);
  int c = kv_bytes_cmp(xr, xl, yr, yl);
  if (c) return c;
  return *(const uint32_t *)a < *(const uint32_t *)b ? -1 : 1;
}

/* Cut f's non-empty buffers that still hold their cells, taken by first row, into chains
** whose buffers follow one another strictly (each one's first row above the previous one's
** last): the fewest sources that read every buffer in order. *out: n_segs + 1 entries, chain k is
** (*out)[start[k] .. start[k+1]); returns the number of chains, or -1 (out of memory). */
int kv_bulk_make_chains(kv_bulk_fam *f, kv_bulk_buf ***out, size_t **start) {
  uint32_t n = 0;
  uint32_t *idx = malloc((f->n_segs + 1u) * sizeof *idx);
  uint32_t *chain_of = malloc((f->n_segs + 1u) * sizeof *chain_of);
  kv_bulk_buf **last = malloc((f->n_segs + 1u) * sizeof *last);
  *out = malloc((f->n_segs + 1u) * sizeof **out);
  *start = malloc((f->n_segs + 2u) * sizeof **start);
  if (!idx || !chain_of || !last || !*out || !*start) {
    free(idx); free(chain_of); free(last); free(*out); free(*start);
    *out = NULL;
    *start = NULL;
    return -1;
  }
  for (uint32_t i = 0; i < f->n_segs; i++)
    if (f->segs[i]->raw && f->segs[i]->n_grps) idx[n++] = i;
  chain_bufs = f->segs;
  qsort(idx, n, sizeof *idx, first_row_cmp);
  int nc = 0;
  for (uint32_t k = 0; k < n; k++) { /* first chain whose last buffer ends before it */
    kv_bulk_buf *u = f->segs[idx[k]];
    size_t fl, ll;
    const uint8_t *fr = buf_row(u, 0, &fl);
    int c = 0;
    for (; c < nc; c++) {
      const uint8_t *lr = buf_row(last[c], last[c]->n_grps - 1, &ll);
      if (kv_bytes_cmp(lr, ll, fr, fl) < 0) break;
    }
    if (c == nc) nc++;
    last[c] = u;
    chain_of[k] = (uint32_t)c;
  }
  size_t pos = 0;
  for (int c = 0; c < nc; c++) { /* chain by chain, each in first-row order */
    (*start)[c] = pos;
    for (uint32_t k = 0; k < n; k++)
      if (chain_of[k] == (uint32_t)c) (*out)[pos++] = f->segs[idx[k]];
  }
  (*start)[nc] = pos;
  free(idx);
  free(chain_of);
  free(last);
  return nc;
}

/* Source a's current cell comes before b's: cell order, equal cells by source index (the
** order the linear pick gave, which the resolver's "a later row wins" relies on). */
static bool src_before(const msrc *s, uint32_t a, uint32_t b) {
  /* the zero-padded prefixes order rows as their bytes do (a key that ends inside them
  ** has zeros where a longer one it is a prefix of has a byte, or the same zero) */
  if (s[a].pfx[0] != s[b].pfx[0]) return s[a].pfx[0] < s[b].pfx[0];
  if (s[a].pfx[1] != s[b].pfx[1]) return s[a].pfx[1] < s[b].pfx[1];
  int c = kv_cell_cmp(&s[a].cur, &s[b].cur);
  return c < 0 || (c == 0 && a < b);
}

/* Restore the min-heap h[0, n) of source indexes below position i. */
static void sift_down(const msrc *s, uint32_t *h, uint32_t n, uint32_t i) {
  for (;;) {
    uint32_t l = 2 * i + 1, m = i;
    if (l < n && src_before(s, h[l], h[m])) m = l;
    if (l + 1 < n && src_before(s, h[l + 1], h[m])) m = l + 1;
    if (m == i) return;
    uint32_t t = h[i];
    h[i] = h[m];
    h[m] = t;
    i = m;
  }
}

/* Does source s's current row lie at or past hi (NULL: never)? */
static inline bool past_hi(const msrc *s, const uint8_t *hi, size_t hi_len) {
  return hi && kv_bytes_cmp(s->cur.row, s->cur.row_len, hi, hi_len) >= 0;
}

/* Position chain source m at its first group whose row is lo or above (m->ci, m->gi). */
static void chain_seek(msrc *m, const uint8_t *lo, size_t lo_len) {
  size_t len;
  while (m->ci < m->n_chain) {
    const kv_bulk_buf *u = m->chain[m->ci];
    const uint8_t *last = buf_row(u, u->n_grps - 1, &len);
    if (kv_bytes_cmp(last, len, lo, lo_len) >= 0) break;
    m->ci++;
  }
  if (m->ci >= m->n_chain) return;
  const kv_bulk_buf *u = m->chain[m->ci];
  size_t a = 0, z = u->n_grps; /* first group whose row is >= lo */
  while (a < z) {
    size_t mid = a + (z - a) / 2;
    const uint8_t *r = buf_row(u, mid, &len);
    if (kv_bytes_cmp(r, len, lo, lo_len) < 0) a = mid + 1;
    else z = mid;
  }
  m->gi = a;
}

int kv_bulk_merge(kv_bulk *b, kv_bulk_fam *f, kv_sf_writer *w, bool do_resolve, uint64_t seq) {
  return kv_bulk_merge_range(b, f, w, do_resolve, seq, NULL, 0, NULL, 0);
}

int kv_bulk_merge_range(kv_bulk *b, kv_bulk_fam *f, kv_sf_writer *w, bool do_resolve,
                        uint64_t seq, const uint8_t *lo, size_t lo_len, const uint8_t *hi,
                        size_t hi_len) {
  kv_db *db = b->db;
  kv_bulk_buf **bufs = NULL;
  size_t *start = NULL;
  int nc = kv_bulk_make_chains(f, &bufs, &start);
  if (nc < 0) return kv_error(KV_ERR_NOMEM, "bulk load: out of memory");
  uint32_t nr = do_resolve ? f->n_runs : 0; /* a spill leaves the earlier runs alone */
  uint32_t n = nr + (uint32_t)nc;
  msrc *s = calloc(n ? n : 1, sizeof *s);
  int rc = s ? KV_OK : kv_error(KV_ERR_NOMEM, "bulk load: out of memory");
  for (uint32_t i = 0; i < nr && rc == KV_OK; i++) {
    rc = kv_sf_open(db->env, f->runs[i], &s[i].r);
    if (rc == KV_OK) {
      s[i].it = kv_sf_iter_new(s[i].r, NULL);
      if (!s[i].it) rc = kv_error(KV_ERR_NOMEM, "bulk load: out of memory");
    }
    if (rc == KV_OK) {
      if (lo) {
        kv_cell t = kv_cell_row_first(lo, (uint32_t)lo_len);
        s[i].it->ops->seek(s[i].it, &t);
      } else {
        s[i].it->ops->seek_first(s[i].it);
      }
      s[i].valid = s[i].it->ops->valid(s[i].it);
      if (s[i].valid) {
        s[i].cur = *s[i].it->ops->cell(s[i].it);
        set_pfx(&s[i]);
      } else {
        rc = s[i].it->ops->status(s[i].it);
      }
    }
  }
  for (int c = 0; c < nc && rc == KV_OK; c++) {
    msrc *m = &s[nr + (uint32_t)c];
    m->chain = bufs + start[c];
    m->n_chain = start[c + 1] - start[c];
    if (lo) chain_seek(m, lo, lo_len);
    rc = kv_bulk_src_next(m);
  }
  resolver r;
  memset(&r, 0, sizeof r);
  r.w = w;
  r.seq = seq;
  /* the sources in a min-heap by current cell: an unordered load (an index's rows) has one
     source per segment, hundreds at 10x the archive, and a linear pick per cell made the
     merge quadratic */
  uint32_t *h = rc == KV_OK ? malloc((n ? n : 1) * sizeof *h) : NULL;
  uint32_t hn = 0;
  if (rc == KV_OK && !h) rc = kv_error(KV_ERR_NOMEM, "bulk load: out of memory");
  for (uint32_t i = 0; rc == KV_OK && i < n; i++)
    if (s[i].valid && !past_hi(&s[i], hi, hi_len)) h[hn++] = i;
  for (uint32_t i = hn / 2; rc == KV_OK && i-- > 0;) sift_down(s, h, hn, i);
  while (rc == KV_OK && hn) {
    msrc *best = &s[h[0]];
    rc = do_resolve ? kv_bulk_resolve(&r, &best->cur) : kv_sf_writer_add(w, &best->cur);
    if (rc == KV_OK) rc = kv_bulk_src_next(best);
    if (rc == KV_OK && (!best->valid || past_hi(best, hi, hi_len))) h[0] = h[--hn];
    if (rc == KV_OK) sift_down(s, h, hn, 0);
  }
  free(h);
  if (rc == KV_OK && do_resolve) rc = kv_bulk_resolve_flush(&r);
  kv_bulk_resolver_free(&r);
  for (uint32_t i = 0; s && i < n; i++) kv_bulk_src_free(&s[i]);
  free(s);
  free(bufs);
  free(start);
  return rc;
}
