/*
** kv/colscan/colscan.c: the columnar aggregate scan of kv/colscan/colscan.h: checks that a family's store
** files are the whole truth (no memstore cell, files whose key ranges do not overlap, no
** commit racing the start; the snapshot is pinned), lists the blocks of the files in key
** order, splits them into contiguous chunks evaluated on threads (kv/colscan/colscan_block.c), and
** merges the chunks' boundary rows and fallback ranges in key order after they join.
**
** Fragments (kv/colscan/colscan_int.h) carry rows across block and chunk boundaries; this file
** holds their operations (feed, flush, emit) and the fallback range list.
** Not here: the block format walk and the per-block evaluation (kv/colscan/colscan_block.c).
*/
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kv/util/thread.h"
#include "kv/util/cache.h"
#include "kv/colscan/colscan_int.h"
#include "kv/db/memstore.h"
#include "kv/util/status.h"
#include "kv/util/trace.h"

/* ---- Fragments ---------------------------------------------------------------------- */
int kv_cs_frag_key(cs_frag *f, const uint8_t *key, uint32_t len) {
  if (len > f->key_cap || !f->key) {
    uint32_t nc = len > 64 ? len : 64;
    uint8_t *nk = realloc(f->key, nc);
    if (!nk) return KV_ERR_NOMEM;
    f->key = nk;
    f->key_cap = nc;
  }
  if (len) memcpy(f->key, key, len);
  f->key_len = len;
  return KV_OK;
}

int kv_cs_frag_value(cs_frag *f, uint32_t j, const uint8_t *p, uint32_t n) {
  if ((size_t)f->vals_len + n > f->vals_cap) {
    size_t nc = f->vals_cap ? f->vals_cap : 64;
    while (nc < (size_t)f->vals_len + n) nc *= 2;
    if (nc > UINT32_MAX) return KV_ERR_NOMEM;
    uint8_t *nv = realloc(f->vals, nc);
    if (!nv) return KV_ERR_NOMEM;
    f->vals = nv;
    f->vals_cap = (uint32_t)nc;
  }
  if (n) memcpy(f->vals + f->vals_len, p, n);
  f->voff[j] = f->vals_len;
  f->vlen[j] = n;
  f->vals_len += n;
  f->have |= 1ull << j;
  return KV_OK;
}

void kv_cs_frag_free(cs_frag *f) {
  free(f->key);
  free(f->vals);
  memset(f, 0, sizeof *f);
}

#define SWAP(T, x, y) do { T t_ = (x); (x) = (y); (y) = t_; } while (0)

/* Swap two fragments: their fields and buffers, and of the value arrays only the entries
** of the plan's n referenced qualifiers (the only ones `have` can name), not the whole
** arrays (a copy of about 1.6 KiB per swap, several per block). */
static void frag_swap(cs_frag *a, cs_frag *b, uint32_t n) {
  SWAP(uint8_t, a->kind, b->kind);
  SWAP(bool, a->has_q, b->has_q);
  SWAP(bool, a->dup, b->dup);
  SWAP(bool, a->tomb, b->tomb);
  SWAP(bool, a->kin, b->kin);
  SWAP(uint8_t *, a->key, b->key);
  SWAP(uint32_t, a->key_len, b->key_len);
  SWAP(uint32_t, a->key_cap, b->key_cap);
  SWAP(uint64_t, a->have, b->have);
  SWAP(uint8_t *, a->vals, b->vals);
  SWAP(uint32_t, a->vals_len, b->vals_len);
  SWAP(uint32_t, a->vals_cap, b->vals_cap);
  for (uint32_t j = 0; j < n; j++) {
    SWAP(uint32_t, a->voff[j], b->voff[j]);
    SWAP(uint32_t, a->vlen[j], b->vlen[j]);
  }
}

int kv_cs_key_cmp(const uint8_t *a, uint32_t an, const uint8_t *b, uint32_t bn) {
  uint32_t m = an < bn ? an : bn;
  int c = m ? memcmp(a, b, m) : 0;
  return c ? c : (an > bn) - (an < bn);
}
#define key_cmp kv_cs_key_cmp

bool kv_cs_mem_overlaps(const cs_plan *pl, const uint8_t *k0, uint32_t l0, const uint8_t *k1,
                        uint32_t l1) {
  uint32_t lo = 0, hi = pl->n_mkeys; /* first memstore key >= k0 */
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo) / 2;
    const uint8_t *m = pl->mkeys + pl->moff[mid];
    if (key_cmp(m, pl->moff[mid + 1] - pl->moff[mid], k0, l0) < 0) lo = mid + 1;
    else hi = mid;
  }
  if (lo == pl->n_mkeys) return false;
  return key_cmp(pl->mkeys + pl->moff[lo], pl->moff[lo + 1] - pl->moff[lo], k1, l1) <= 0;
}

/* Row keys of the memstores' cells at or below seq inside the plan's key ranges, sorted and
** distinct, into *keys / *off / *n (malloc). KV_OK or KV_ERR_NOMEM. */
typedef struct mkey {
  uint32_t off, len; /* in the key buffer */
} mkey;
static int mkey_cmp(const void *a, const void *b, void *ctx) {
  const mkey *x = a, *y = b;
  const uint8_t *kb = ctx;
  return key_cmp(kb + x->off, x->len, kb + y->off, y->len);
}
static int collect_mem_keys(const cs_plan *pl, kv_memstore **mems, uint32_t n_mems,
                            uint64_t seq, uint8_t **keys, uint32_t **off, uint32_t *n) {
  kv_sfbuf buf = {0};
  mkey *mk = NULL;
  size_t nk = 0, cap = 0;
  int rc = KV_OK;
  for (uint32_t i = 0; i < n_mems && !rc; i++) {
    kv_iter *it = kv_memstore_iter_new(mems[i]);
    if (!it) { rc = KV_ERR_NOMEM; break; }
    const uint8_t *prev = NULL;
    uint32_t prev_len = 0;
    size_t prev_off = 0;
    for (it->ops->seek_first(it); it->ops->valid(it) && !rc; it->ops->next(it)) {
      const kv_cell *c = it->ops->cell(it);
      if (c->seq > seq) continue;
      if (pl->keyed && !kv_colagg_key_in(pl->spec, c->row, c->row_len)) continue; /* not read */
      if (prev && key_cmp(prev, prev_len, c->row, c->row_len) == 0) continue;
      if (nk == cap) {
        size_t nc = cap ? cap * 2 : 256;
        mkey *nm = realloc(mk, nc * sizeof *nm);
        if (!nm) { rc = KV_ERR_NOMEM; break; }
        mk = nm;
        cap = nc;
      }
      prev_off = buf.len;
      if (kv_sfbuf_append(&buf, c->row, c->row_len)) { rc = KV_ERR_NOMEM; break; }
      mk[nk].off = (uint32_t)prev_off;
      mk[nk].len = c->row_len;
      nk++;
      prev = c->row; /* the memstore keeps its cells while the iterator holds it */
      prev_len = c->row_len;
    }
    it->ops->destroy(it);
  }
  if (!rc && nk > 1) qsort_r(mk, nk, sizeof *mk, mkey_cmp, buf.p);
  uint32_t *o = rc ? NULL : malloc((nk + 1) * sizeof *o);
  uint8_t *k = rc ? NULL : malloc(buf.len ? buf.len : 1);
  if (!rc && (!o || !k)) rc = KV_ERR_NOMEM;
  uint32_t m = 0;
  size_t at = 0;
  for (size_t i = 0; i < nk && !rc; i++) {
    if (m && key_cmp(k + o[m - 1], (uint32_t)(at - o[m - 1]), buf.p + mk[i].off, mk[i].len) == 0) continue;
    o[m] = (uint32_t)at;
    memcpy(k + at, buf.p + mk[i].off, mk[i].len);
    at += mk[i].len;
    m++;
  }
  if (!rc) o[m] = (uint32_t)at;
  free(mk);
  kv_sfbuf_free(&buf);
  if (rc) {
    free(o);
    free(k);
    return rc;
  }
  *keys = k;
  *off = o;
  *n = m;
  return KV_OK;
}

int kv_cs_emit(cs_worker *w, const cs_frag *f) {
  const cs_plan *pl = w->plan;
  const kv_colagg_spec *sp = pl->spec;
  if (f->kind != CF_ROW || !f->has_q) return KV_OK;
  if (pl->keyed && !f->kin) return KV_OK;
  w->rows_examined++;
  for (uint32_t q = 0; q < sp->n_preds; q++) {
    uint32_t j = pl->pred_ref[q];
    if (!((f->have >> j) & 1)) return KV_OK;
    const uint8_t *v = f->vals ? f->vals + f->voff[j] : (const uint8_t *)"";
    if (!kv_cs_pass(&sp->preds[q], v, f->vlen[j])) return KV_OK;
  }
  w->rows++;
  if (!sp->consume || w->consumer_rc) return KV_OK;
  const uint8_t *pa[KV_COLAGG_MAX_ARGS + 1];
  uint32_t la[KV_COLAGG_MAX_ARGS + 1];
  kv_colvals v[KV_COLAGG_MAX_ARGS + 1];
  if (sp->keys) { /* the key after the values */
    pa[sp->n_args] = f->key;
    la[sp->n_args] = f->key_len;
    v[sp->n_args].p = &pa[sp->n_args];
    v[sp->n_args].len = &la[sp->n_args];
  }
  for (uint32_t a = 0; a < sp->n_args; a++) {
    uint32_t j = pl->arg_ref[a];
    bool has = (f->have >> j) & 1;
    /* an empty value is a value: never NULL when the cell exists */
    pa[a] = has ? (f->vals ? f->vals + f->voff[j] : (const uint8_t *)"") : NULL;
    la[a] = has ? f->vlen[j] : 0;
    v[a].p = &pa[a];
    v[a].len = &la[a];
  }
  w->consumer_rc = sp->consume(w->ctx, 1, v);
  return KV_OK;
}

int kv_cs_flush(cs_worker *w) {
  cs_frag *P = &w->pending;
  if (P->kind == CF_NONE) return KV_OK;
  if (w->head_open) { /* may continue the previous chunk: decided at the merge */
    frag_swap(&w->head, P, w->plan->n_ref);
    P->kind = CF_NONE;
    w->head_open = false;
    return KV_OK;
  }
  int rc = kv_cs_emit(w, P);
  P->kind = CF_NONE;
  return rc;
}

int kv_cs_feed(cs_worker *w, cs_frag *f) {
  cs_frag *P = &w->pending;
  if (f->kind == CF_NONE) return KV_OK;
  if (P->kind == CF_NONE) {
    frag_swap(P, f, w->plan->n_ref);
    f->kind = CF_NONE;
    return KV_OK;
  }
  if (key_cmp(P->key, P->key_len, f->key, f->key_len) != 0) {
    int rc = kv_cs_flush(w);
    frag_swap(P, f, w->plan->n_ref);
    f->kind = CF_NONE;
    return rc;
  }
  /* the same row, continued */
  int rc = KV_OK;
  if (P->kind == CF_FALLBACK || f->kind == CF_FALLBACK) {
    P->kind = CF_FALLBACK;
  } else if ((P->have & f->have) || P->tomb || f->tomb) {
    /* two cells of one qualifier, or a tombstone that may mask the other part's cell: the
       normal path decides */
    P->kind = CF_FALLBACK;
    rc = kv_cs_add_range(w, P->key, P->key_len, P->key, P->key_len);
  } else {
    P->has_q |= f->has_q;
    for (uint32_t j = 0; j < 64; j++) {
      if (!((f->have >> j) & 1)) continue;
      uint32_t n = f->vlen[j];
      if ((size_t)P->vals_len + n > P->vals_cap) {
        size_t nc = P->vals_cap ? P->vals_cap : 64;
        while (nc < (size_t)P->vals_len + n) nc *= 2;
        uint8_t *nv = realloc(P->vals, nc);
        if (!nv) return KV_ERR_NOMEM;
        P->vals = nv;
        P->vals_cap = (uint32_t)nc;
      }
      if (n) memcpy(P->vals + P->vals_len, f->vals + f->voff[j], n);
      P->voff[j] = P->vals_len;
      P->vlen[j] = n;
      P->vals_len += n;
      P->have |= 1ull << j;
    }
  }
  f->kind = CF_NONE;
  return rc;
}

int kv_cs_add_range(cs_worker *w, const uint8_t *start, uint32_t start_len,
                    const uint8_t *end, uint32_t end_len) {
  if (w->n_ranges) {
    cs_range *l = &w->ranges[w->n_ranges - 1];
    if (key_cmp(start, start_len, l->end, l->end_len) <= 0) {
      if (key_cmp(end, end_len, l->end, l->end_len) > 0) {
        uint8_t *ne = malloc(end_len ? end_len : 1);
        if (!ne) return KV_ERR_NOMEM;
        memcpy(ne, end, end_len);
        free(l->end);
        l->end = ne;
        l->end_len = end_len;
      }
      return KV_OK;
    }
  }
  if (w->n_ranges == w->cap_ranges) {
    uint32_t nc = w->cap_ranges ? w->cap_ranges * 2 : 16;
    cs_range *nr = realloc(w->ranges, nc * sizeof *nr);
    if (!nr) return KV_ERR_NOMEM;
    w->ranges = nr;
    w->cap_ranges = nc;
  }
  cs_range *r = &w->ranges[w->n_ranges];
  r->start = malloc(start_len ? start_len : 1);
  r->end = malloc(end_len ? end_len : 1);
  if (!r->start || !r->end) {
    free(r->start);
    free(r->end);
    return KV_ERR_NOMEM;
  }
  memcpy(r->start, start, start_len);
  memcpy(r->end, end, end_len);
  r->start_len = start_len;
  r->end_len = end_len;
  w->n_ranges++;
  return KV_OK;
}

/* ---- The scan ------------------------------------------------------------------------ */
static int compile(const kv_colagg_spec *sp, cs_plan *pl) {
  if (!sp->n_quals || sp->n_quals > KV_COLAGG_MAX_QUALS ||
      sp->n_preds > KV_COLAGG_MAX_PREDS || sp->n_args > KV_COLAGG_MAX_ARGS ||
      sp->threads < 1 || sp->threads > (int)KV_COLAGG_MAX_THREADS ||
      !sp->quals || !sp->qual_lens || (sp->n_preds && !sp->preds) ||
      (sp->n_args && !sp->args) || (sp->consume && !sp->ctx) ||
      (sp->n_ranges && !sp->ranges) ||
      (sp->skip && (!sp->skip->prefix_len || sp->skip->rows_per_prefix ||
                    (sp->skip->n_suffixes && !sp->skip->suffixes))))
    return kv_error(KV_ERR_INVALID, "kv_colagg_run: bad spec");
  memset(pl, 0, sizeof *pl);
  pl->spec = sp;
  pl->keyed = sp->n_ranges || sp->skip || sp->keys;
  for (uint32_t q = 0; q < KV_COLAGG_MAX_QUALS; q++) pl->q_ref[q] = -1;
  for (uint32_t i = 0; i < sp->n_preds + sp->n_args; i++) {
    uint32_t q = i < sp->n_preds ? sp->preds[i].q : sp->args[i - sp->n_preds];
    if (q >= sp->n_quals) return kv_error(KV_ERR_INVALID, "kv_colagg_run: bad qualifier index");
    if (i < sp->n_preds && sp->preds[i].op > KV_COL_PRESENT)
      return kv_error(KV_ERR_INVALID, "kv_colagg_run: bad predicate operator");
    if (pl->q_ref[q] < 0) {
      pl->q_ref[q] = (int32_t)pl->n_ref;
      pl->ref_q[pl->n_ref++] = q;
    }
    if (i < sp->n_preds) pl->pred_ref[i] = (uint32_t)pl->q_ref[q];
    else pl->arg_ref[i - sp->n_preds] = (uint32_t)pl->q_ref[q];
  }
  pl->fast = pl->n_ref == 1;
  return KV_OK;
}

/* A keyed plan's signature (the projection's qualifiers, the referenced ones and their
** widths: what a row view entry depends on besides the block) into pl->sig and its hash into
** pl->qual_hash; false when it does not fit (the plan then caches nothing). */
static bool signature(cs_plan *pl) {
  const kv_colagg_spec *sp = pl->spec;
  uint8_t *o = pl->sig, *end = pl->sig + sizeof pl->sig;
  *o++ = (uint8_t)sp->n_quals;
  for (uint32_t q = 0; q < sp->n_quals; q++) {
    if (sp->qual_lens[q] > 255 || (size_t)(end - o) < 1 + (size_t)sp->qual_lens[q] + 8)
      return false;
    *o++ = (uint8_t)sp->qual_lens[q];
    memcpy(o, sp->quals[q], sp->qual_lens[q]);
    o += sp->qual_lens[q];
  }
  *o++ = (uint8_t)pl->n_ref;
  for (uint32_t j = 0; j < pl->n_ref; j++) {
    if (end - o < 5) return false;
    int32_t wd = sp->widths ? sp->widths[pl->ref_q[j]] : -1;
    *o++ = (uint8_t)pl->ref_q[j];
    memcpy(o, &wd, 4);
    o += 4;
  }
  pl->sig_len = (uint32_t)(o - pl->sig);
  uint64_t h = 1469598103934665603ull; /* FNV-1a */
  for (uint32_t i = 0; i < pl->sig_len; i++) h = (h ^ pl->sig[i]) * 1099511628211ull;
  pl->qual_hash = h;
  return true;
}

static void *thread_main(void *arg) {
  kv_cs_run_chunk(arg);
  return NULL;
}

int kv_colagg_run(kv_db *db, const kv_colagg_spec *sp, kv_colagg_result *res) {
  memset(res, 0, sizeof *res);
  if (!db || !sp || !res) return kv_error(KV_MISUSE, "kv_colagg_run: NULL argument");
  cs_plan pl;
  int rc = compile(sp, &pl);
  if (rc) return rc;
  uint64_t seq = 0;
  rc = kv_snapshot_acquire(db, &seq);
  if (rc) return rc;
  res->snapshot = seq;
  res->db = db;
  /* the sources, taken with the snapshot */
  kv_sfh **files = NULL;
  uint32_t nf = 0;
  pthread_mutex_lock(&db->mu);
  kv_fam *fam = kv_db_family(db, sp->family_id);
  if (!fam || fam->dropped) {
    pthread_mutex_unlock(&db->mu);
    return kv_error(KV_ERR_NOTFOUND, "kv_colagg_run: unknown family id %u", sp->family_id);
  }
  const char *why = NULL;
  /* memstores with cells: their rows go the row way (their keys are collected below) */
  kv_memstore *mems[65];
  uint32_t n_mems = 0;
  if (atomic_load_explicit(&db->last_seq, memory_order_acquire) != seq)
    why = "a commit raced the start";
  else if (fam->n_imm + 1 > sizeof mems / sizeof mems[0])
    why = "too many frozen memstores";
  for (uint32_t i = 0; i <= fam->n_imm && !why; i++) {
    kv_memstore *ms = i < fam->n_imm ? fam->imms[i] : fam->mem;
    if (kv_memstore_cells(ms) == 0) continue;
    kv_memstore_ref(ms);
    mems[n_mems++] = ms;
  }
  if (!why && fam->n_files) {
    files = malloc(fam->n_files * sizeof *files);
    if (!files) {
      pthread_mutex_unlock(&db->mu);
      return kv_error(KV_ERR_NOMEM, "kv_colagg_run: out of memory");
    }
    for (uint32_t i = 0; i < fam->n_files; i++) {
      kv_sfh_ref(fam->files[i]);
      files[nf++] = fam->files[i];
    }
  }
  pl.ttl_ms = fam->ttl_sec * 1000;
  /* the column cache (kv/colscan/colscan_eval.c; a quarter of the block cache budget, kv_open) */
  if (!why && pl.fast && !pl.keyed && sp->n_quals == 1 && pl.ttl_ms == 0 && db->colcache &&
      sp->qual_lens[0] <= KV_MAX_QUALIFIER_CACHED) {
    pl.colcache = db->colcache;
    pl.qual_len = sp->qual_lens[0];
    memcpy(pl.qual, sp->quals[0], pl.qual_len);
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (uint32_t i = 0; i < pl.qual_len; i++) h = (h ^ pl.qual[i]) * 1099511628211ull;
    pl.qual_hash = h;
  } else if (!why && pl.keyed && pl.ttl_ms == 0 && db->colcache && signature(&pl)) {
    pl.colcache = db->colcache; /* row views (kv/colscan/colscan_rows.c) */
  }
  pthread_mutex_unlock(&db->mu);
  pl.now_ms = db->env->now_ms(db->env);
  uint8_t *mkeys = NULL;
  uint32_t *moff = NULL;
  if (n_mems) {
    rc = collect_mem_keys(&pl, mems, n_mems, seq, &mkeys, &moff, &pl.n_mkeys);
    for (uint32_t i = 0; i < n_mems; i++) kv_memstore_unref(mems[i]);
    if (rc) {
      for (uint32_t i = 0; i < nf; i++) kv_sfh_unref(files[i]);
      free(files);
      return kv_error(rc, "kv_colagg_run: out of memory");
    }
    pl.mkeys = mkeys;
    pl.moff = moff;
    /* each is a seek of the row way: past a few thousand a full row scan is cheaper */
    if (pl.n_mkeys > KV_COLAGG_MAX_MEM_ROWS && !why) why = "the memstore holds many rows";
  }
  cs_block *blocks = NULL;
  cs_worker *W = NULL;
  cs_worker m;
  memset(&m, 0, sizeof m);
  int t = 0;
  /* files in key order, empty ones left out; key ranges must not overlap */
  uint32_t live = 0;
  for (uint32_t i = 0; i < nf; i++) {
    if (files[i]->reader->nblocks) files[live++] = files[i];
    else kv_sfh_unref(files[i]);
  }
  nf = live;
  if (kv_sfh_sort_by_first_row(files, nf) && !why) why = "store files overlap";
  if (why) {
    res->why = why;
    goto done;
  }
  res->applicable = true;
  res->files = nf;
  uint64_t nb = 0;
  for (uint32_t i = 0; i < nf; i++) nb += files[i]->reader->nblocks;
  if (nb == 0 && !pl.n_mkeys) goto done;
  blocks = malloc((nb ? nb : 1) * sizeof *blocks);
  if (!blocks) { rc = kv_error(KV_ERR_NOMEM, "kv_colagg_run: out of memory"); goto done; }
  uint64_t k = 0;
  for (uint32_t i = 0; i < nf; i++) {
    const kv_sf_reader *r = files[i]->reader;
    kv_sf_icur cur; /* a paged index: one page pinned at a time */
    kv_sf_icur_init(&cur, r);
    for (uint32_t b = 0; b < r->nblocks;) {
      if (pl.keyed) { /* a block's keys lie between its first and the next block's first */
        const kv_sf_index_entry *e = kv_sf_icur_at(&cur, b);
        uint32_t ll = e->row_len, hl = r->last_row_len;
        const uint8_t *lo = r->index_buf + e->key, *h = r->last_row;
        if (b + 1 < r->nblocks) { /* e is not read after this: the cursor may move pages */
          const kv_sf_index_entry *nx = kv_sf_icur_at(&cur, b + 1);
          h = r->index_buf + nx->key;
          hl = nx->row_len;
        }
        if (!kv_cs_span_may_match(sp, lo, ll, h, hl)) {
          b = kv_cs_next_block(sp, r, b, h, hl);
          continue;
        }
      }
      blocks[k].file = files[i];
      blocks[k].index = b;
      k++;
      b++;
    }
    kv_sf_icur_done(&cur);
  }
  nb = k;
  t = sp->threads;
  if ((uint64_t)t > nb) t = (int)nb; /* 0 when only memstores hold rows */
  W = calloc((size_t)t + 1, sizeof *W);
  if (!W) { rc = kv_error(KV_ERR_NOMEM, "kv_colagg_run: out of memory"); goto done; }
  pthread_t th[KV_COLAGG_MAX_THREADS];
  bool started[KV_COLAGG_MAX_THREADS] = {false};
  for (int c = 0; c < t; c++) {
    uint64_t b0 = nb * (uint64_t)c / (uint64_t)t, b1 = nb * (uint64_t)(c + 1) / (uint64_t)t;
    W[c].plan = &pl;
    W[c].blocks = blocks + b0;
    W[c].n_blocks = (uint32_t)(b1 - b0);
    W[c].ctx = sp->ctx ? sp->ctx[c] : NULL;
    W[c].head_open = c > 0;
    if (sp->trace && W[c].n_blocks) /* no map: the blocks are traced as cache misses */
      W[c].hit_map = calloc(W[c].n_blocks, 1);
  }
  for (int c = 1; c < t; c++)
    started[c] = kv_thread_create(&th[c], thread_main, &W[c]) == 0;
  if (t > 0) kv_cs_run_chunk(&W[0]);
  for (int c = 1; c < t; c++) {
    if (started[c]) pthread_join(th[c], NULL);
    else kv_cs_run_chunk(&W[c]); /* no thread: run it here */
  }
  res->threads = t;
  for (int c = 0; c < t; c++) {
    if (W[c].rc) {
      rc = kv_error(W[c].rc, "%s", W[c].msg);
      goto done;
    }
  }
  for (int c = 0; c < t && sp->trace; c++) /* the workers are joined: the trace is ours */
    for (uint32_t i = 0; i < W[c].done; i++) {
      const cs_block *b = &W[c].blocks[i];
      kv_trace_add_block(sp->trace, sp->family_id, b->file->reader->cache_id, b->index,
                         W[c].hit_map && W[c].hit_map[i]);
    }
  /* merge the chunks' boundary rows and ranges in key order */
  m.plan = &pl;
  m.ctx = sp->ctx ? sp->ctx[0] : NULL;
  for (int c = 0; c < t && !rc; c++) {
    if (W[c].consumer_rc && !m.consumer_rc) m.consumer_rc = W[c].consumer_rc;
    rc = kv_cs_feed(&m, &W[c].head);
    for (uint32_t i = 0; i < W[c].n_ranges && !rc; i++)
      rc = kv_cs_add_range(&m, W[c].ranges[i].start, W[c].ranges[i].start_len,
                           W[c].ranges[i].end, W[c].ranges[i].end_len);
    if (!rc) rc = kv_cs_feed(&m, &W[c].tail);
  }
  if (!rc) rc = kv_cs_flush(&m);
  if (rc) {
    rc = kv_error(rc, "kv_colagg_run: out of memory");
    goto done;
  }
  for (int c = 0; c < t; c++) {
    res->rows += W[c].rows;
    res->rows_examined += W[c].rows_examined;
    res->blocks += W[c].n_read;
    res->blocks_fallback += W[c].blocks_fallback;
    res->blocks_cache_hit += W[c].hits;
    res->bytes_read += W[c].bytes;
    res->reads += W[c].runs;
    res->bytes_inflated += W[c].inflated;
    res->cells += W[c].cells;
  }
  res->rows += m.rows;
  res->rows_examined += m.rows_examined;
  res->consumer_rc = m.consumer_rc;
  if (pl.n_mkeys) { /* the memstore's rows, merged in key order with the blocks' ranges */
    cs_worker all;
    memset(&all, 0, sizeof all);
    uint32_t i = 0, j = 0;
    while (!rc && (i < m.n_ranges || j < pl.n_mkeys)) {
      const uint8_t *mk = j < pl.n_mkeys ? mkeys + moff[j] : NULL;
      uint32_t ml = j < pl.n_mkeys ? moff[j + 1] - moff[j] : 0;
      if (i < m.n_ranges &&
          (!mk || key_cmp(m.ranges[i].start, m.ranges[i].start_len, mk, ml) <= 0)) {
        rc = kv_cs_add_range(&all, m.ranges[i].start, m.ranges[i].start_len, m.ranges[i].end,
                             m.ranges[i].end_len);
        i++;
      } else {
        rc = kv_cs_add_range(&all, mk, ml, mk, ml);
        j++;
      }
    }
    cs_range *t0 = m.ranges;
    uint32_t n0 = m.n_ranges, c0 = m.cap_ranges;
    m.ranges = all.ranges;
    m.n_ranges = all.n_ranges;
    m.cap_ranges = all.cap_ranges;
    all.ranges = t0;
    all.n_ranges = n0;
    all.cap_ranges = c0;
    kv_cs_worker_free(&all);
    if (rc) {
      rc = kv_error(rc, "kv_colagg_run: out of memory");
      goto done;
    }
  }
  if (m.n_ranges) {
    size_t kb = 0;
    for (uint32_t i = 0; i < m.n_ranges; i++) kb += (size_t)m.ranges[i].start_len + m.ranges[i].end_len;
    res->fallback = calloc(m.n_ranges, sizeof *res->fallback);
    res->keys = malloc(kb ? kb : 1);
    if (!res->fallback || !res->keys) {
      rc = kv_error(KV_ERR_NOMEM, "kv_colagg_run: out of memory");
      goto done;
    }
    size_t off = 0;
    for (uint32_t i = 0; i < m.n_ranges; i++) {
      kv_range *r = &res->fallback[i];
      memcpy(res->keys + off, m.ranges[i].start, m.ranges[i].start_len);
      r->start = res->keys + off;
      r->start_len = m.ranges[i].start_len;
      r->start_inclusive = true;
      off += m.ranges[i].start_len;
      memcpy(res->keys + off, m.ranges[i].end, m.ranges[i].end_len);
      r->end = res->keys + off;
      r->end_len = m.ranges[i].end_len;
      r->end_inclusive = true;
      off += m.ranges[i].end_len;
    }
    res->n_fallback = m.n_ranges;
  }
done:
  if (!rc && res->applicable && !res->n_fallback && !sp->n_ranges) /* the whole key space */
    kv_trace_add_range(sp->trace, sp->family_id, NULL, 0, NULL, 0);
  for (uint32_t i = 0; !rc && res->applicable && !res->n_fallback && i < sp->n_ranges; i++)
    kv_trace_add_range(sp->trace, sp->family_id, sp->ranges[i].start,
                       (uint32_t)sp->ranges[i].start_len, sp->ranges[i].end,
                       (uint32_t)sp->ranges[i].end_len);
  for (int c = 0; W && c < t; c++) kv_cs_worker_free(&W[c]);
  free(W);
  kv_cs_worker_free(&m);
  free(blocks);
  rc = kv_db_corrupt_region(db, sp->family_id, files, nf, rc); /* a damaged file: its region */
  for (uint32_t i = 0; i < nf; i++) kv_sfh_unref(files[i]);
  free(files);
  free(mkeys);
  free(moff);
  return rc;
}

void kv_colagg_result_free(kv_colagg_result *res) {
  if (!res) return;
  if (res->db) kv_snapshot_release(res->db, res->snapshot);
  free(res->fallback);
  free(res->keys);
  memset(res, 0, sizeof *res);
}
