/*
** kv/colscan/colscan_rows.c: keyed blocks of the columnar aggregate scan (kv/colscan/colscan.h with key
** ranges, a skip scan or keys handed out): the row view and its entries in the column cache.
**
** A keyed scan checks every row's key and may hand it out, so it works row by row: after
** kv/colscan/colscan_block.c has walked a clean block (every row's key rebuilt, the value groups
** located and flattened), the row view gives, per row, whether it has a put of the projection
** Q and the value of every referenced qualifier (NULL: none). Rank is row in a dense block
** (the groups' own arrays are the view); otherwise one walk of the cells lines them up. The
** block is then evaluated through the view: its first and last rows become fragments (they
** may continue in the neighbouring blocks, kv/colscan/colscan_int.h), the rows between them are
** checked against the key ranges and the predicates and handed to the consumer in one batch.
**
** The column cache keeps a clean block's row view (keys, Q flags, referenced values, the
** first and last rows' tombstone flags) under the block's file and offset and a hash of the
** plan's signature (the projection, the referenced qualifiers and their widths), so the same
** question asked again over the same blocks reads no file, decompresses nothing and rebuilds
** no key: the entry is copied into the view and evaluated the same way. Whether rows have
** memstore cells and which lie in the key ranges is decided anew on every use (neither is in
** the entry). Only blocks with no TTL are cached (the plan leaves the cache out otherwise).
** Not here: reading and walking blocks (kv/colscan/colscan_block.c), the unkeyed column cache
** (kv/colscan/colscan_eval.c), the key range rules (kv/colscan/colscan_keys.c).
*/
#include <stdlib.h>
#include <string.h>

#include "kv/util/cache.h"
#include "kv/colscan/colscan_int.h"

static int grow(void **arr, size_t *cap, size_t n, size_t elem) {
  return kv_sf_grow(arr, cap, n ? n : 1, elem);
}

int kv_cs_keyed_in(cs_worker *w, bscratch *s, uint32_t nrows) {
  const kv_colagg_spec *sp = w->plan->spec;
  if (grow((void **)&s->kin, &s->kin_cap, nrows, 1)) return KV_ERR_NOMEM;
  s->in0 = s->in1 = -1;
  if (kv_cs_span_inside(sp, s->k0, s->k0_len, s->k1, s->k1_len)) { /* no key checked */
    memset(s->kin, 1, nrows);
    s->in0 = 0;
    s->in1 = (int32_t)nrows - 1;
    return KV_OK;
  }
  kv_cs_rows_in(sp, s->kb, s->ko, nrows, s->kin);
  for (uint32_t r = 0; r < nrows; r++) {
    if (!s->kin[r]) continue;
    if (s->in0 < 0) s->in0 = (int32_t)r;
    s->in1 = (int32_t)r;
  }
  return KV_OK;
}

/* Room for nr rows in the view's own arrays of the plan's referenced qualifiers. */
static int view_room(const cs_plan *pl, bscratch *s, uint32_t nr) {
  if (grow((void **)&s->hq_own, &s->hq_cap, nr, 1)) return KV_ERR_NOMEM;
  if (nr <= s->rv_cap && (!pl->n_ref || s->rvp[pl->n_ref - 1])) return KV_OK;
  size_t nc = nr > s->rv_cap ? nr : s->rv_cap;
  for (uint32_t j = 0; j < pl->n_ref; j++) {
    const uint8_t **np = realloc((void *)s->rvp[j], nc * sizeof *np);
    if (!np) return KV_ERR_NOMEM;
    s->rvp[j] = np;
    uint32_t *nl = realloc(s->rvl[j], nc * sizeof *nl);
    if (!nl) return KV_ERR_NOMEM;
    s->rvl[j] = nl;
  }
  s->rv_cap = nc;
  return KV_OK;
}

static void own_view(const cs_plan *pl, bscratch *s) {
  for (uint32_t j = 0; j < pl->n_ref; j++) {
    s->vw[j] = s->rvp[j];
    s->vwl[j] = s->rvl[j];
  }
  s->hq = s->hq_own;
}

int kv_cs_view_walk(cs_worker *w, bscratch *s, uint32_t nr, uint32_t n, bool dense,
                    const int16_t *dref, const bool *inq) {
  const cs_plan *pl = w->plan;
  if (view_room(pl, s, nr)) return KV_ERR_NOMEM;
  s->tomb0 = s->tomb1 = false;
  for (uint32_t i = 0; s->ty && i < s->rf[1]; i++) s->tomb0 |= !kv_cs_is_put(s, i);
  for (uint32_t i = s->rf[nr - 1]; s->ty && i < n; i++) s->tomb1 |= !kv_cs_is_put(s, i);
  if (dense) { /* one put of every referenced qualifier per row, in Q: rank = row */
    for (uint32_t j = 0; j < pl->n_ref; j++) {
      s->vw[j] = s->g[j].ptr;
      s->vwl[j] = s->g[j].len;
    }
    memset(s->hq_own, 1, nr);
    s->hq = s->hq_own;
    return KV_OK;
  }
  uint32_t rank[KV_COLAGG_MAX_QUALS];
  for (uint32_t j = 0; j < pl->n_ref; j++) rank[j] = 0;
  for (uint32_t r = 0; r < nr; r++) {
    bool hq = false;
    for (uint32_t j = 0; j < pl->n_ref; j++) {
      s->rvp[j][r] = NULL;
      s->rvl[j][r] = 0;
    }
    for (uint32_t i = s->rf[r]; i < s->rf[r + 1]; i++) {
      if (!kv_cs_is_put(s, i)) continue; /* masks nothing in its block (checked) */
      uint8_t d = s->cq[i];
      hq |= inq[d];
      int j = dref[d];
      if (j < 0) continue;
      uint32_t k = rank[j]++;
      s->rvp[j][r] = s->g[j].ptr[k];
      s->rvl[j][r] = s->g[j].len[k];
    }
    s->hq_own[r] = hq;
  }
  own_view(pl, s);
  return KV_OK;
}

/* Fragment f = row r of the view (key, its length; tomb: the row has a tombstone). */
static int view_frag(cs_worker *w, const bscratch *s, cs_frag *f, uint32_t r,
                     const uint8_t *key, uint32_t key_len, bool tomb) {
  const cs_plan *pl = w->plan;
  f->kind = CF_ROW;
  f->has_q = s->hq[r];
  f->dup = false;
  f->tomb = tomb;
  f->kin = s->kin[r];
  f->have = 0;
  f->vals_len = 0;
  if (kv_cs_frag_key(f, key, key_len)) return KV_ERR_NOMEM;
  for (uint32_t j = 0; j < pl->n_ref; j++) {
    const uint8_t *p = s->vw[j][r];
    if (!p) continue;
    uint32_t n = s->vwl[j][r];
    if (kv_cs_frag_value(f, (uint32_t)j, p, n)) return KV_ERR_NOMEM;
  }
  return KV_OK;
}

int kv_cs_view_block(cs_worker *w, bscratch *s, uint32_t nr) {
  const cs_plan *pl = w->plan;
  const kv_colagg_spec *sp = pl->spec;
  cs_frag *f = &w->tmp;
  int rc = view_frag(w, s, f, 0, s->k0, s->k0_len, s->tomb0);
  if (!rc) rc = kv_cs_feed(w, f);
  if (rc || nr == 1) return rc;
  rc = kv_cs_flush(w);
  if (rc) return rc;
  if (nr > 2) { /* rows 1 .. nr-2: whole rows of this block */
    if (kv_cs_batch_room(s, nr, sp->n_args + sp->keys)) return KV_ERR_NOMEM;
    uint32_t hits = 0;
    for (uint32_t r = 1; r + 1 < nr; r++) {
      if (!s->kin[r] || !s->hq[r]) continue;
      w->rows_examined++;
      bool ok = true;
      for (uint32_t q = 0; q < sp->n_preds && ok; q++) {
        uint32_t j = pl->pred_ref[q];
        const uint8_t *p = s->vw[j][r];
        ok = p && kv_cs_pass(&sp->preds[q], p, s->vwl[j][r]);
      }
      if (!ok) continue;
      for (uint32_t a = 0; a < sp->n_args; a++) {
        uint32_t j = pl->arg_ref[a];
        s->vp[a][hits] = s->vw[j][r];
        s->vl[a][hits] = s->vw[j][r] ? s->vwl[j][r] : 0;
      }
      if (sp->keys) {
        s->vp[sp->n_args][hits] = s->kb + s->ko[r];
        s->vl[sp->n_args][hits] = s->ko[r + 1] - s->ko[r];
      }
      hits++;
    }
    rc = kv_cs_consume(w, s, hits);
    if (rc) return rc;
  }
  rc = view_frag(w, s, f, nr - 1, s->k1, s->k1_len, s->tomb1);
  if (!rc) rc = kv_cs_feed(w, f);
  return rc;
}

/* ---- Row view entries of the column cache ----------------------------------------------
** After the header, as 32-bit words: the row keys' offsets (nrows + 1), then per referenced
** qualifier the value offsets (nrows; NO_VALUE: none) and lengths (nrows); then as bytes:
** the plan's signature, the keys back to back, the Q flags (nrows), the values. */
#define NO_VALUE UINT32_MAX

typedef struct rowentry {
  uint32_t kind;            /* KV_CS_ENTRY_ROWS */
  uint32_t nrows, ncells;   /* the block's counts */
  uint32_t n_ref;           /* referenced qualifiers */
  uint64_t off;             /* block offset */
  uint32_t sig_len;         /* the signature's length */
  uint32_t tomb0, tomb1;    /* the first / last row has a tombstone */
  uint32_t pad;             /* (keeps w 8-byte aligned) */
  uint32_t w[];             /* the words, then the bytes */
} rowentry;

static void entry_free(void *p) { free(p); }

void kv_cs_view_to_cache(cs_worker *w, bscratch *s, const cs_block *b, uint32_t nr, uint32_t n) {
  const cs_plan *pl = w->plan;
  kv_sf_reader *rd = b->file->reader;
  const kv_sf_index_entry e_v = kv_sf_entry(rd, b->index), *e = &e_v;
  size_t vbytes = 0;
  for (uint32_t j = 0; j < pl->n_ref; j++)
    for (uint32_t r = 0; r < nr; r++) vbytes += s->vw[j][r] ? s->vwl[j][r] : 0;
  size_t words = (size_t)nr + 1 + 2 * (size_t)pl->n_ref * nr;
  size_t charge = sizeof(rowentry) + words * 4 + pl->sig_len + s->ko[nr] + nr + vbytes;
  if (vbytes >= NO_VALUE || charge >= NO_VALUE || !kv_cs_admit(pl, rd->cache_id, e->off, charge))
    return;
  rowentry *c = malloc(charge);
  if (!c) return;
  c->kind = KV_CS_ENTRY_ROWS;
  c->nrows = nr;
  c->ncells = n;
  c->n_ref = pl->n_ref;
  c->off = e->off;
  c->sig_len = pl->sig_len;
  c->tomb0 = s->tomb0;
  c->tomb1 = s->tomb1;
  c->pad = 0;
  memcpy(c->w, s->ko, ((size_t)nr + 1) * 4);
  uint8_t *bytes = (uint8_t *)(c->w + words);
  memcpy(bytes, pl->sig, pl->sig_len);
  uint8_t *kb = bytes + pl->sig_len, *hq = kb + s->ko[nr], *vals = hq + nr;
  memcpy(kb, s->kb, s->ko[nr]);
  memcpy(hq, s->hq, nr);
  uint32_t at = 0;
  for (uint32_t j = 0; j < pl->n_ref; j++) {
    uint32_t *vo = c->w + nr + 1 + 2 * (size_t)j * nr, *vl = vo + nr;
    for (uint32_t r = 0; r < nr; r++) {
      const uint8_t *p = s->vw[j][r];
      vo[r] = p ? at : NO_VALUE;
      vl[r] = p ? s->vwl[j][r] : 0;
      if (p && vl[r]) memcpy(vals + at, p, vl[r]);
      at += vl[r];
    }
  }
  kv_cache_entry *ce = kv_cache_insert(pl->colcache, rd->cache_id, kv_cs_cache_off(pl, e->off),
                                       c, charge, entry_free);
  if (!ce) free(c);
  else kv_cache_release(pl->colcache, ce);
}

int kv_cs_view_from_cache(cs_worker *w, bscratch *s, const cs_block *b, int *rcp) {
  const cs_plan *pl = w->plan;
  kv_sf_reader *rd = b->file->reader;
  const kv_sf_index_entry e_v = kv_sf_entry(rd, b->index), *e = &e_v;
  kv_cache_entry *ce = kv_cache_lookup(pl->colcache, rd->cache_id, kv_cs_cache_off(pl, e->off));
  if (!ce) return 0;
  const rowentry *c = kv_cache_value(ce);
  uint32_t nr = c->nrows;
  const uint8_t *bytes = NULL;
  if (c->kind == KV_CS_ENTRY_ROWS && c->off == e->off && nr == e->rows && nr &&
      c->ncells == e->cells && c->n_ref == pl->n_ref && c->sig_len == pl->sig_len)
    bytes = (const uint8_t *)(c->w + (size_t)nr + 1 + 2 * (size_t)c->n_ref * nr);
  if (!bytes || memcmp(bytes, pl->sig, pl->sig_len) != 0) {
    kv_cache_release(pl->colcache, ce);
    return 0;
  }
  w->n_read++;
  w->hits++;
  w->cells += c->ncells;
  const uint32_t *ko = c->w;
  const uint8_t *kb = bytes + pl->sig_len, *hq = kb + ko[nr], *vals = hq + nr;
  int rc = KV_OK;
  /* the keys, as the walk leaves them (the key ranges and the fallback ranges read them) */
  if (grow((void **)&s->ko, &s->ko_cap, (size_t)nr + 1, sizeof *s->ko) ||
      grow((void **)&s->kb, &s->kb_cap, ko[nr], 1) ||
      kv_cs_set_key(&s->k0, &s->k0_cap, &s->k0_len, kb, ko[1], NULL, 0) ||
      kv_cs_set_key(&s->k1, &s->k1_cap, &s->k1_len, kb + ko[nr - 1], ko[nr] - ko[nr - 1], NULL, 0))
    rc = KV_ERR_NOMEM;
  if (!rc) {
    memcpy(s->ko, ko, ((size_t)nr + 1) * sizeof *ko);
    memcpy(s->kb, kb, ko[nr]);
    rc = kv_cs_keyed_in(w, s, nr);
  }
  if (rc || s->in0 < 0) goto out; /* no row in the key ranges: the block adds nothing */
  if (pl->n_mkeys && kv_cs_mem_overlaps(pl, s->k0, s->k0_len, s->k1, s->k1_len)) {
    rc = kv_cs_fallback_block(w, s, nr); /* memstore rows: the row way merges them */
    goto out;
  }
  if ((rc = view_room(pl, s, nr))) goto out;
  for (uint32_t j = 0; j < pl->n_ref; j++) {
    const uint32_t *vo = c->w + nr + 1 + 2 * (size_t)j * nr, *vl = vo + nr;
    for (uint32_t r = 0; r < nr; r++) {
      s->rvp[j][r] = vo[r] == NO_VALUE ? NULL : vals + vo[r];
      s->rvl[j][r] = vl[r];
    }
  }
  own_view(pl, s);
  s->hq = hq;
  s->tomb0 = c->tomb0;
  s->tomb1 = c->tomb1;
  rc = kv_cs_view_block(w, s, nr);
out:
  kv_cache_release(pl->colcache, ce);
  *rcp = rc;
  return 1;
}
