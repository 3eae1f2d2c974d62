/*
** kv/colscan/colscan_eval.c: the evaluation half of the columnar aggregate scan (kv/colscan/colscan.h):
** predicates on encoded values (kv_cs_pass), value groups as columns (the fast path over one
** qualifier, compared straight from the transposed bytes; dense blocks where every row
** holds every referenced qualifier), handing passing rows to the consumer, and the column
** cache that keeps a clean block's column for the next scan. kv/colscan/colscan_block.c walks the
** block and calls these; kv/colscan/colscan_int.h has the shared structs.
** Not here: reading and walking blocks, fragments, threads.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kv/util/cache.h"
#include "kv/util/coding.h"
#include "kv/colscan/colscan_int.h"

static int grow(void **arr, size_t *cap, size_t n, size_t elem) {
  return kv_sf_grow(arr, cap, n ? n : 1, elem);
}

int kv_cs_pass(const kv_colpred *pr, const uint8_t *p, uint32_t n) {
  if (pr->op == KV_COL_PRESENT) return 1;
  uint32_t m = n < pr->klen ? n : pr->klen;
  int c = m ? memcmp(p, pr->k, m) : 0;
  if (!c) c = (n > pr->klen) - (n < pr->klen);
  switch (pr->op) {
    case KV_COL_EQ: return c == 0;
    case KV_COL_NE: return c != 0;
    case KV_COL_LT: return c < 0;
    case KV_COL_LE: return c <= 0;
    case KV_COL_GT: return c > 0;
    default: return c >= 0;
  }
}

int kv_cs_flatten(rgroup *g, const char **why) {
  if (g->flat) return KV_OK;
  if (g->count > g->pl_cap) {
    size_t nc = g->count > 64 ? g->count : 64;
    const uint8_t **np = realloc((void *)g->ptr, nc * sizeof *np);
    if (!np) return KV_ERR_NOMEM;
    g->ptr = np;
    uint32_t *nl = realloc(g->len, nc * sizeof *nl);
    if (!nl) return KV_ERR_NOMEM;
    g->len = nl;
    g->pl_cap = nc;
  }
  uint32_t c = g->count;
  if (g->fixed) {
    size_t bytes = (size_t)c * g->w;
    if (grow((void **)&g->buf, &g->buf_cap, bytes, 1)) return KV_ERR_NOMEM;
    for (uint32_t j = 0; j < g->w; j++) {
      const uint8_t *src = g->base + (size_t)j * c;
      for (uint32_t k = 0; k < c; k++) g->buf[(size_t)k * g->w + j] = src[k];
    }
    for (uint32_t k = 0; k < c; k++) {
      g->ptr[k] = g->buf + (size_t)k * g->w;
      g->len[k] = g->w;
    }
  } else {
    const uint8_t *lp = g->lens, *dp = g->base;
    for (uint32_t k = 0; k < c; k++) {
      uint64_t v = 0;
      lp = kv_get_varint(lp, g->lens_end, &v);
      if (!lp) { *why = "truncated value length stream"; return KV_ERR_CORRUPT; }
      g->ptr[k] = dp;
      g->len[k] = (uint32_t)v;
      dp += v;
    }
    /* the group's byte count was checked against the block; the lengths must add up */
    if (lp != g->lens_end) { *why = "value group lengths do not add up"; return KV_ERR_CORRUPT; }
  }
  g->flat = true;
  return KV_OK;
}

/* Fast path: AND predicate pr into pass[0..k1-k0) for the ranks [k0, k1) of fixed group g
** of width 1, 2, 4 or 8 compared with a constant of the same width. */
static void fixed_pred(const rgroup *g, const kv_colpred *pr, uint32_t k0, uint32_t k1,
                       uint8_t *pass) {
  uint32_t w = g->w, c = g->count;
  uint64_t K = 0;
  for (uint32_t j = 0; j < w; j++) K = (K << 8) | pr->k[j];
  const uint8_t *b = g->base;
  uint32_t n = k1 - k0;
#define VAL(k) (w == 8 ? ((uint64_t)b[k] << 56 | (uint64_t)b[c + (k)] << 48 |                 \
                          (uint64_t)b[2 * (size_t)c + (k)] << 40 |                             \
                          (uint64_t)b[3 * (size_t)c + (k)] << 32 |                             \
                          (uint64_t)b[4 * (size_t)c + (k)] << 24 |                             \
                          (uint64_t)b[5 * (size_t)c + (k)] << 16 |                             \
                          (uint64_t)b[6 * (size_t)c + (k)] << 8 | (uint64_t)b[7 * (size_t)c + (k)]) \
                 : w == 4 ? ((uint64_t)b[k] << 24 | (uint64_t)b[c + (k)] << 16 |               \
                             (uint64_t)b[2 * (size_t)c + (k)] << 8 | (uint64_t)b[3 * (size_t)c + (k)]) \
                 : w == 2 ? ((uint64_t)b[k] << 8 | (uint64_t)b[c + (k)])                       \
                          : (uint64_t)b[k])
#define LOOP(cmp) for (uint32_t i = 0; i < n; i++) { uint64_t v = VAL(k0 + i); pass[i] &= (uint8_t)(cmp); }
  if (w == 8) {
    switch (pr->op) {
      case KV_COL_EQ: LOOP(v == K); break;
      case KV_COL_NE: LOOP(v != K); break;
      case KV_COL_LT: LOOP(v < K); break;
      case KV_COL_LE: LOOP(v <= K); break;
      case KV_COL_GT: LOOP(v > K); break;
      default: LOOP(v >= K); break;
    }
  } else {
    switch (pr->op) {
      case KV_COL_EQ: LOOP(v == K); break;
      case KV_COL_NE: LOOP(v != K); break;
      case KV_COL_LT: LOOP(v < K); break;
      case KV_COL_LE: LOOP(v <= K); break;
      case KV_COL_GT: LOOP(v > K); break;
      default: LOOP(v >= K); break;
    }
  }
#undef LOOP
#undef VAL
}

int kv_cs_consume(cs_worker *w, bscratch *s, uint32_t n) {
  const kv_colagg_spec *sp = w->plan->spec;
  w->rows += n;
  if (!sp->consume || !n || w->consumer_rc) return KV_OK;
  kv_colvals v[KV_COLAGG_MAX_ARGS + 1];
  for (uint32_t a = 0; a < sp->n_args + sp->keys; a++) { /* and the keys (spec.keys) */
    v[a].p = s->vp[a];
    v[a].len = s->vl[a];
  }
  w->consumer_rc = sp->consume(w->ctx, n, v);
  return KV_OK;
}

int kv_cs_batch_room(bscratch *s, size_t n, uint32_t n_args) {
  if (n <= s->v_cap) return KV_OK;
  size_t nc = s->v_cap * 2 > n ? s->v_cap * 2 : n;
  if (nc < 64) nc = 64;
  for (uint32_t a = 0; a < n_args; a++) {
    const uint8_t **np = realloc((void *)s->vp[a], nc * sizeof *np);
    if (!np) return KV_ERR_NOMEM;
    s->vp[a] = np;
    uint32_t *nl = realloc(s->vl[a], nc * sizeof *nl);
    if (!nl) return KV_ERR_NOMEM;
    s->vl[a] = nl;
  }
  s->v_cap = nc;
  return KV_OK;
}

int kv_cs_fast_interior(cs_worker *w, bscratch *s, rgroup *g, uint32_t k0, uint32_t k1,
                         const char **why) {
  const kv_colagg_spec *sp = w->plan->spec;
  uint32_t m = k1 > k0 ? k1 - k0 : 0;
  int rc;
  if (!m) return KV_OK;
  if (grow((void **)&s->pass, &s->pass_cap, m, 1)) return KV_ERR_NOMEM;
  memset(s->pass, 1, m);
  for (uint32_t q = 0; q < sp->n_preds; q++) {
    const kv_colpred *pr = &sp->preds[q];
    if (pr->op == KV_COL_PRESENT) continue;
    if (!g->flat && g->fixed && pr->klen == g->w &&
        (g->w == 1 || g->w == 2 || g->w == 4 || g->w == 8)) {
      fixed_pred(g, pr, k0, k1, s->pass);
    } else {
      if ((rc = kv_cs_flatten(g, why))) return rc;
      for (uint32_t i = 0; i < m; i++)
        s->pass[i] &= (uint8_t)kv_cs_pass(pr, g->ptr[k0 + i], g->len[k0 + i]);
    }
  }
  uint32_t hits = 0;
  if (sp->n_args && sp->consume) {
    if ((rc = kv_cs_flatten(g, why))) return rc;
    if (kv_cs_batch_room(s, m, sp->n_args)) return KV_ERR_NOMEM;
    for (uint32_t i = 0; i < m; i++) {
      if (!s->pass[i]) continue;
      for (uint32_t a = 0; a < sp->n_args; a++) {
        s->vp[a][hits] = g->ptr[k0 + i];
        s->vl[a][hits] = g->len[k0 + i];
      }
      hits++;
    }
  } else {
    for (uint32_t i = 0; i < m; i++) hits += s->pass[i];
  }
  return kv_cs_consume(w, s, hits);
}

int kv_cs_dense_interior(cs_worker *w, bscratch *s, uint32_t nr, const char **why) {
  const cs_plan *pl = w->plan;
  const kv_colagg_spec *sp = pl->spec;
  uint32_t m = nr - 2;
  int rc;
  if (grow((void **)&s->pass, &s->pass_cap, m, 1)) return KV_ERR_NOMEM;
  memset(s->pass, 1, m);
  for (uint32_t q = 0; q < sp->n_preds; q++) {
    const kv_colpred *pr = &sp->preds[q];
    rgroup *g = &s->g[pl->pred_ref[q]];
    if (pr->op == KV_COL_PRESENT) continue;
    if (!g->flat && g->fixed && pr->klen == g->w &&
        (g->w == 1 || g->w == 2 || g->w == 4 || g->w == 8)) {
      fixed_pred(g, pr, 1, nr - 1, s->pass);
    } else {
      if ((rc = kv_cs_flatten(g, why))) return rc;
      for (uint32_t i = 0; i < m; i++)
        s->pass[i] &= (uint8_t)kv_cs_pass(pr, g->ptr[1 + i], g->len[1 + i]);
    }
  }
  w->rows_examined += m;
  uint32_t hits = 0;
  if (sp->n_args && sp->consume) {
    for (uint32_t a = 0; a < sp->n_args; a++)
      if ((rc = kv_cs_flatten(&s->g[pl->arg_ref[a]], why))) return rc;
    if (kv_cs_batch_room(s, m, sp->n_args)) return KV_ERR_NOMEM;
    for (uint32_t i = 0; i < m; i++) {
      if (!s->pass[i]) continue;
      for (uint32_t a = 0; a < sp->n_args; a++) {
        const rgroup *g = &s->g[pl->arg_ref[a]];
        s->vp[a][hits] = g->ptr[1 + i];
        s->vl[a][hits] = g->len[1 + i];
      }
      hits++;
    }
  } else {
    for (uint32_t i = 0; i < m; i++) hits += s->pass[i];
  }
  return kv_cs_consume(w, s, hits);
}

/* ---- The column cache ------------------------------------------------------------------
** For the fast path over a projection of one qualifier p without TTL, a clean block's
** answer depends only on p's value group and on whether its first and last rows have a
** p cell: an entry keeps those (the transposed bytes copied, or a decimal-scaled group's
** header and offset planes, a quarter of the bytes or less, rebuilt when read) under (file
** number, block offset << 16 | hash of p), checked against the qualifier, the block's counts
** and p's width, so a later scan of that column reads no file and decompresses nothing. */
typedef struct colentry {
  uint32_t kind;            /* KV_CS_ENTRY_COLUMN (kv/colscan/colscan_rows.c keeps row views too) */
  uint64_t off;             /* block offset */
  uint32_t nrows, ncells;   /* the block's counts */
  uint32_t qual_len;        /* the qualifier */
  uint8_t qual[KV_MAX_QUALIFIER_CACHED]; /* its bytes */
  bool present;             /* the block has p cells */
  uint32_t w, count;        /* p's group: width and values */
  bool scaled;              /* p's group is decimal-scaled: data holds its offset planes
                               (count * sw bytes), rebuilt to 8-byte values when read */
  uint32_t sk, sw;          /* scaled: power of ten and offset width */
  int64_t sbase;            /* scaled: the base */
  bool row0_has, last_has;  /* the first / last row has a p put */
  bool row0_tomb, last_tomb; /* the first / last row has a tombstone (of any qualifier) */
  uint32_t key0_len, key1_len; /* first and last row keys, at data */
  uint8_t data[];           /* key0, key1, then count * w transposed bytes (scaled: the
                               planes) */
} colentry;

uint64_t kv_cs_cache_off(const cs_plan *pl, uint64_t off) {
  return (off << 16) | (pl->qual_hash & 0xffff);
}
#define cache_off kv_cs_cache_off

int kv_cs_from_cache(cs_worker *w, bscratch *s, const cs_block *b, int *rcp) {
  const cs_plan *pl = w->plan;
  kv_sf_reader *rd = b->file->reader;
  const kv_sf_index_entry e_v = kv_sf_entry(rd, b->index), *e = &e_v;
  kv_cache_entry *ce = kv_cache_lookup(pl->colcache, rd->cache_id, cache_off(pl, e->off));
  if (!ce) return 0;
  const colentry *c = kv_cache_value(ce);
  int32_t want = pl->spec->widths ? pl->spec->widths[pl->ref_q[0]] : -1;
  if (c->kind != KV_CS_ENTRY_COLUMN || c->off != e->off || c->nrows != e->rows ||
      c->ncells != e->cells ||
      c->qual_len != pl->qual_len || memcmp(c->qual, pl->qual, c->qual_len) != 0 ||
      (c->present && want >= 0 && (uint32_t)want != c->w)) {
    kv_cache_release(pl->colcache, ce);
    return 0;
  }
  w->n_read++;
  w->hits++;
  w->cells += c->ncells;
  if (pl->n_mkeys && kv_cs_mem_overlaps(pl, c->data, c->key0_len, c->data + c->key0_len,
                                        c->key1_len)) {
    int rc = kv_cs_set_key(&s->k0, &s->k0_cap, &s->k0_len, c->data, c->key0_len, NULL, 0);
    if (!rc) rc = kv_cs_set_key(&s->k1, &s->k1_cap, &s->k1_len, c->data + c->key0_len, c->key1_len, NULL, 0);
    uint32_t nr = c->nrows;
    kv_cache_release(pl->colcache, ce);
    *rcp = rc ? rc : kv_cs_fallback_block(w, s, nr);
    return 1;
  }
  rgroup *g = &s->g[0];
  g->d = c->present ? 0 : -1;
  g->fixed = true;
  g->w = c->w;
  g->count = c->count;
  g->base = c->data + c->key0_len + c->key1_len;
  g->flat = false;
  g->scaled = false;
  if (c->present && c->scaled) {
    if (kv_sf_grow((void **)&g->dx, &g->dx_cap, (size_t)8 * c->count, 1)) {
      kv_cache_release(pl->colcache, ce);
      *rcp = KV_ERR_NOMEM;
      return 1;
    }
    const kv_sfdec h = {.k = c->sk, .w = c->sw, .base = c->sbase, .planes = g->base,
                        .count = c->count};
    kv_sfdec_expand(&h, g->dx, 1);
    g->base = g->dx;
  }
  uint32_t nr = c->nrows;
  int rc = KV_OK;
  cs_frag *f = &w->tmp;
  for (int side = 0; side < 2 && !rc; side++) {
    bool has = side ? c->last_has : c->row0_has;
    f->kind = CF_ROW;
    f->has_q = has;
    f->dup = false;
    f->tomb = side ? c->last_tomb : c->row0_tomb;
    f->kin = true; /* unkeyed: every key */
    f->have = 0;
    f->vals_len = 0;
    rc = side ? kv_cs_frag_key(f, c->data + c->key0_len, c->key1_len)
              : kv_cs_frag_key(f, c->data, c->key0_len);
    if (!rc && has) {
      if (f->vals_cap < 8) {
        uint8_t *nv = realloc(f->vals, 64);
        if (!nv) { rc = KV_ERR_NOMEM; break; }
        f->vals = nv;
        f->vals_cap = 64;
      }
      uint32_t k = side ? c->count - 1 : 0;
      for (uint32_t j = 0; j < c->w; j++) f->vals[j] = g->base[(size_t)j * c->count + k];
      f->voff[0] = 0;
      f->vlen[0] = c->w;
      f->vals_len = c->w;
      f->have = 1;
    }
    if (!rc) rc = kv_cs_feed(w, f);
    if (rc || nr == 1) break;
    if (side == 0) {
      rc = kv_cs_flush(w);
      if (!rc && nr > 2 && c->present) {
        uint32_t k0 = c->row0_has ? 1 : 0, k1 = c->count - (c->last_has ? 1 : 0);
        const char *why = NULL;
        w->rows_examined += k1 > k0 ? k1 - k0 : 0;
        rc = kv_cs_fast_interior(w, s, g, k0, k1, &why);
      }
    }
  }
  kv_cache_release(pl->colcache, ce);
  *rcp = rc;
  return 1;
}

bool kv_cs_in_cache(const cs_plan *pl, const cs_block *b) {
  kv_sf_reader *rd = b->file->reader;
  kv_cache_entry *ce = kv_cache_lookup(pl->colcache, rd->cache_id, cache_off(pl, kv_sf_entry(rd, b->index).off));
  if (ce) kv_cache_release(pl->colcache, ce);
  return ce != NULL;
}

#define ADMIT_ONE_IN 8u /* kv_cs_to_cache: refused entries let in anyway, one in this many */

/* A draw for kv_cs_to_cache's admission: a counter shared by every scan (so each pass draws
** other blocks), mixed with the block's offset. */
static uint64_t admit_draw(uint64_t off) {
  static uint64_t tick;
  uint64_t x = __atomic_add_fetch(&tick, 1, __ATOMIC_RELAXED) * 0x9E3779B97F4A7C15ull ^ off;
  x ^= x >> 31;
  x *= 0xBF58476D1CE4E5B9ull;
  return x ^ (x >> 29);
}

/* Scan resistance: a column larger than the cache, scanned again and again, would evict
** every entry before its next use (each pass inserts in the order it reads). So an entry
** that does not fit without evicting goes in only when the key was refused lately
** (kv_cache_admit) or one time in ADMIT_ONE_IN, at random: the cache keeps a stable part
** of the column, and a new column still works its way in. */
bool kv_cs_admit(const cs_plan *pl, uint64_t file, uint64_t off, size_t charge) {
  return kv_cache_admit(pl->colcache, file, cache_off(pl, off), charge, 2) ||
         admit_draw(off) % ADMIT_ONE_IN == 0;
}

void kv_cs_to_cache(cs_worker *w, bscratch *s, const cs_block *b, uint32_t nr, uint32_t n) {
  const cs_plan *pl = w->plan;
  kv_sf_reader *rd = b->file->reader;
  const kv_sf_index_entry e_v = kv_sf_entry(rd, b->index), *e = &e_v;
  rgroup *g = &s->g[0];
  if (g->d >= 0 && (!g->fixed || g->w > 8)) return;
  bool scaled = g->d >= 0 && g->scaled;
  size_t bytes = g->d < 0 ? 0 : (size_t)g->count * (scaled ? g->sd.w : g->w);
  size_t charge = sizeof(colentry) + s->k0_len + s->k1_len + bytes;
  if (!kv_cs_admit(pl, rd->cache_id, e->off, charge)) return;
  colentry *c = malloc(charge);
  if (!c) return;
  c->kind = KV_CS_ENTRY_COLUMN;
  c->off = e->off;
  c->nrows = nr;
  c->ncells = n;
  c->qual_len = pl->qual_len;
  memcpy(c->qual, pl->qual, pl->qual_len);
  c->present = g->d >= 0;
  c->w = c->present ? g->w : 0;
  c->count = c->present ? g->count : 0;
  c->scaled = scaled;
  c->sk = scaled ? g->sd.k : 0;
  c->sw = scaled ? g->sd.w : 0;
  c->sbase = scaled ? g->sd.base : 0;
  c->row0_has = c->last_has = c->row0_tomb = c->last_tomb = false;
  for (uint32_t i = 0; i < s->rf[1]; i++) {
    bool put = kv_cs_is_put(s, i);
    c->row0_has |= c->present && put && s->cq[i] == (uint8_t)g->d;
    c->row0_tomb |= !put;
  }
  for (uint32_t i = s->rf[nr - 1]; i < n; i++) {
    bool put = kv_cs_is_put(s, i);
    c->last_has |= c->present && put && s->cq[i] == (uint8_t)g->d;
    c->last_tomb |= !put;
  }
  c->key0_len = s->k0_len;
  c->key1_len = s->k1_len;
  memcpy(c->data, s->k0, s->k0_len);
  memcpy(c->data + s->k0_len, s->k1, s->k1_len);
  if (bytes) memcpy(c->data + s->k0_len + s->k1_len, scaled ? g->sd.planes : g->base, bytes);
  kv_cache_entry *ce = kv_cache_insert(pl->colcache, rd->cache_id, cache_off(pl, e->off), c,
                                       charge, free);
  if (!ce) free(c);
  else kv_cache_release(pl->colcache, ce);
}

