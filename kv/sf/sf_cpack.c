/*
** kv/sf/sf_cpack.c: the packed forms of a compact block (kv/sf/sf_cblock.h), what the block
** cache keeps. Wide (kv_sf_cblock_pack): one allocation holding the decoder's arrays and
** every fixed-width value whole in cell order (cvals), so a row's values lie side by side.
** Narrow (kv_sf_cblock_pack_narrow): the same without cvals, decimal-scaled groups kept as
** their offset planes (a value's 1-4 bytes instead of 8) and other fixed-width groups
** transposed, about half the bytes of a sensor table's block; a reader widens it
** (kv_sf_cblock_widen) into its own memory before reading it, and a block widened often
** enough is promoted to a wide copy (kv_sf_cblock_wide_copy). Nothing here is on disk.
** Not here: decoding raw blocks (kv/sf/sf_cblock.c), the cache (kv/util/cache.c), which form
** a reader asks for (kv/sf/sf_iter.c).
*/
#include <stdlib.h>
#include <string.h>

#include "kv/sf/sf_cblock.h"
#include "kv/sf/sf_dec.h"

/* Rebase a pointer of the decoder's arena into the packed copy. */
static const uint8_t *rebase(const uint8_t *ptr, const uint8_t *from, uint8_t *to) {
  return ptr ? to + (ptr - from) : NULL;
}

/* Every fixed-width value of block b whole, in cell order, at cv (groups gs: b's groups or
** a copy whose data point at their values, transposed or side by side); rank is scratch of
** nquals + 1 entries. Returns the bytes written. */
static size_t gather_cvals(const kv_sf_cblock *b, const kv_sf_cgroup *gs, uint8_t *cv,
                           uint32_t *rank) {
  uint32_t ng = b->nquals + 1;
  uint8_t *x = cv;
  memset(rank, 0, (size_t)ng * sizeof *rank);
#define GATHER(g) do { \
    const kv_sf_cgroup *sg = &gs[g]; \
    uint32_t k = rank[g]++, wd = sg->width; \
    if (sg->fixed) { \
      const uint8_t *src = sg->data + k; \
      if (!sg->transposed) { \
        if (wd == 8) memcpy(x, sg->data + (size_t)k * 8, 8); \
        else memcpy(x, sg->data + (size_t)k * wd, wd); \
      } else if (wd == 8) { \
        for (uint32_t j = 0; j < 8; j++) x[j] = src[(size_t)j * sg->count]; \
      } else { \
        for (uint32_t j = 0; j < wd; j++) x[j] = src[(size_t)j * sg->count]; \
      } \
      x += wd; \
    } } while (0)
  if (b->type.w == 0 && b->type.step == 0 && b->type.base == KV_PUT && b->qual.w == 3) {
    for (uint32_t i = 0; i < b->ncells; i++) /* put-only, four-bit qualifiers */
      GATHER((b->qual.p[i >> 1] >> ((i & 1) * 4)) & 15);
  } else {
    for (uint32_t i = 0; i < b->ncells; i++) GATHER(kv_sf_cblock_group(b, i));
  }
#undef GATHER
  return (size_t)(x - cv);
}

/* One allocation for a packed copy of w's block with vbytes of values after its header,
** groups, arena, dictionary and key prefix, all copied and rebased but the groups (*cgp:
** room for them) and the values (*xp: where they go); *arp gets the arena's copy. NULL when
** out of memory. */
static kv_sf_cblock *pack_alloc(kv_sf_cdec *w, size_t vbytes, kv_sf_cgroup **cgp,
                                uint8_t **arp, uint8_t **xp) {
  const kv_sf_cblock *b = &w->b;
  uint32_t ng = b->nquals + 1;
  size_t head = (sizeof *b + 7) & ~(size_t)7;
  size_t gsz = ((size_t)ng * sizeof(kv_sf_cgroup) + 7) & ~(size_t)7;
  size_t total = head + gsz + ((w->arena.len + 7) & ~(size_t)7) + w->dict_len + b->lcp + vbytes;
  uint8_t *m = malloc(total);
  if (!m) return NULL;
  kv_sf_cblock *c = (kv_sf_cblock *)(void *)m;
  *c = *b;
  *cgp = (kv_sf_cgroup *)(void *)(m + head);
  uint8_t *ar = m + head + gsz, *x = ar + ((w->arena.len + 7) & ~(size_t)7);
  const uint8_t *from = w->arena.p;
  memcpy(ar, from, w->arena.len);
  c->row_first.p = rebase(b->row_first.p, from, ar);
  c->key_off.p = rebase(b->key_off.p, from, ar);
  c->qual.p = rebase(b->qual.p, from, ar);
  c->type.p = rebase(b->type.p, from, ar);
  c->ts.p = rebase(b->ts.p, from, ar);
  c->seq.p = rebase(b->seq.p, from, ar);
  c->keys = rebase(b->keys, from, ar);
  c->q_off = (const uint32_t *)(const void *)rebase((const uint8_t *)b->q_off, from, ar);
  c->q_len = (const uint32_t *)(const void *)rebase((const uint8_t *)b->q_len, from, ar);
  c->ck = rebase((const uint8_t *)b->ck, from, ar);
  if (w->dict_len) memcpy(x, b->dict, w->dict_len);
  c->dict = x;
  x += w->dict_len;
  if (b->lcp) {
    memcpy(x, b->prefix, b->lcp);
    c->prefix = x;
    x += b->lcp;
  }
  c->charge = total;
  c->narrow = false;
  c->regular = false;
  c->heat = NULL;
  *arp = ar;
  *xp = x;
  return c; /* its shape is the decoded block's (copied with *b) */
}

kv_sf_cblock *kv_sf_cblock_pack(kv_sf_cdec *w) {
  const kv_sf_cblock *b = &w->b;
  if (b->part) return NULL; /* absent groups: a reader of the cache may need any value */
  uint32_t ng = b->nquals + 1;
  size_t vbytes = 0;
  for (uint32_t g = 0; g < ng; g++) vbytes += b->groups[g].data_len;
  kv_sf_cgroup *cg;
  uint8_t *ar, *x;
  kv_sf_cblock *c = pack_alloc(w, vbytes, &cg, &ar, &x);
  if (!c) return NULL;
  /* fixed-width values whole and in cell order: a row's values lie side by side */
  uint8_t *cv = x;
  x += gather_cvals(b, b->groups, cv, w->t32); /* the decoder's scratch is free */
  c->cvals = cv;
  const uint8_t *from = w->arena.p;
  for (uint32_t g = 0; g < ng; g++) {
    const kv_sf_cgroup *sg = &b->groups[g];
    cg[g] = *sg;
    if (sg->dec) cg[g].sc.planes = NULL; /* in the raw block: not kept */
    else cg[g].voff.p = rebase(sg->voff.p, from, ar);
    if (sg->fixed) {
      cg[g].data = NULL; /* in cvals */
      cg[g].transposed = 0;
    } else if (sg->data_len) {
      memcpy(x, sg->data, sg->data_len);
      cg[g].data = x;
      x += sg->data_len;
    }
  }
  c->groups = cg;
  return c;
}

/* Whether every row of b holds one put of every dictionary entry, in dictionary order. */
static bool regular(const kv_sf_cblock *b) {
  uint32_t nq = b->nquals;
  if (b->type.w || b->type.step || b->type.base != KV_PUT || b->ncells != b->nrows * nq)
    return false;
  for (uint32_t r = 0, i = 0; r < b->nrows; r++)
    for (uint32_t g = 0; g < nq; g++, i++)
      if (kv_sf_pa_get(&b->qual, i) != g) return false;
  return true;
}

/* A decimal-scaled group's header, as kv/sf/sf_dec.h reads it. */
static kv_sfdec group_dec(const kv_sf_cgroup *g) {
  return (kv_sfdec){.k = g->sc.k, .w = g->sc.w, .base = g->sc.base, .planes = g->sc.planes,
                    .count = g->count};
}

kv_sf_cblock *kv_sf_cblock_pack_narrow(kv_sf_cdec *w) {
  const kv_sf_cblock *b = &w->b;
  if (b->part) return NULL;
  uint32_t ng = b->nquals + 1;
  size_t vbytes = 0;
  bool any = false;
  for (uint32_t g = 0; g < ng; g++) {
    const kv_sf_cgroup *sg = &b->groups[g];
    if (sg->dec && sg->count) {
      any = true;
      vbytes += (size_t)sg->count * sg->sc.w;
    } else {
      vbytes += sg->data_len;
    }
  }
  if (!any) return kv_sf_cblock_pack(w);
  kv_sf_cgroup *cg;
  uint8_t *ar, *x;
  kv_sf_cblock *c = pack_alloc(w, vbytes + 3 + 2 * sizeof(uint32_t), &cg, &ar, &x);
  if (!c) return NULL;
  const uint8_t *from = w->arena.p;
  for (uint32_t g = 0; g < ng; g++) {
    const kv_sf_cgroup *sg = &b->groups[g];
    cg[g] = *sg;
    if (sg->dec && sg->count) { /* its offset planes only */
      size_t n = (size_t)sg->count * sg->sc.w;
      if (n) memcpy(x, sg->sc.planes, n);
      cg[g].sc.planes = x;
      cg[g].data = NULL;
      x += n;
      continue;
    }
    if (!sg->dec) cg[g].voff.p = rebase(sg->voff.p, from, ar);
    if (sg->data_len) { /* variable values, or fixed ones transposed as in the raw block */
      memcpy(x, sg->data, sg->data_len);
      cg[g].data = x;
      x += sg->data_len;
    } else {
      cg[g].data = NULL;
    }
  }
  c->groups = cg;
  c->cvals = NULL;
  c->narrow = true;
  c->regular = regular(b);
  uint32_t *heat = (uint32_t *)(void *)(x + (-(uintptr_t)x & 3)); /* after the values */
  heat[0] = 0;
  heat[1] = __atomic_load_n(&kv_sf_widen_tick, __ATOMIC_RELAXED) - KV_SF_HOT_GAP;
  c->heat = heat;
  return c;
}

static void widen_gather(const kv_sf_cblock *n, kv_sf_wide *wd);

const kv_sf_cblock *kv_sf_cblock_widen(const kv_sf_cblock *n, kv_sf_wide *wd) {
  uint32_t ng = n->nquals + 1;
  size_t fixed = 0, dbytes = 0;
  for (uint32_t g = 0; g < ng; g++) {
    const kv_sf_cgroup *sg = &n->groups[g];
    if (sg->fixed) fixed += (size_t)sg->count * sg->width;
    if (sg->dec) dbytes += (size_t)sg->count * 8;
  }
  wd->vals.len = wd->dexp.len = 0;
  if (kv_sf_grow((void **)&wd->groups, &wd->groups_cap, ng, sizeof *wd->groups) ||
      kv_sf_grow((void **)&wd->rank, &wd->rank_cap, ng, sizeof *wd->rank) ||
      kv_sfbuf_reserve(&wd->vals, fixed + 8) || kv_sfbuf_reserve(&wd->dexp, dbytes + 1))
    return NULL;
  kv_sf_cgroup *gs = wd->groups;
  memcpy(gs, n->groups, (size_t)ng * sizeof *gs);
  if (n->regular) { /* cvals is an nrows x stride matrix: each group fills its column */
    size_t stride = 0, off = 0;
    for (uint32_t g = 0; g < ng; g++) stride += gs[g].fixed ? gs[g].width : 0;
    for (uint32_t g = 0; g < ng; g++) {
      kv_sf_cgroup *sg = &gs[g];
      if (!sg->fixed) continue;
      uint8_t *col = wd->vals.p + off;
      if (sg->dec) {
        const kv_sfdec h = group_dec(sg);
        kv_sfdec_expand_strided(&h, col, stride);
      } else {
        for (uint32_t r = 0; r < sg->count; r++)
          for (uint32_t j = 0; j < sg->width; j++)
            col[(size_t)r * stride + j] = sg->data[(size_t)j * sg->count + r];
      }
      off += sg->width;
      sg->data = NULL; /* in cvals, as in a packed block */
      sg->transposed = 0;
    }
  } else {
    widen_gather(n, wd);
  }
  wd->b = *n;
  wd->b.groups = gs;
  wd->b.cvals = wd->vals.p;
  wd->b.narrow = wd->b.regular = false;
  return &wd->b;
}

/* kv_sf_cblock_widen of a block that is not regular: the decimal-scaled groups rebuilt side
** by side, then every value gathered in cell order. */
static void widen_gather(const kv_sf_cblock *n, kv_sf_wide *wd) {
  uint32_t ng = n->nquals + 1;
  kv_sf_cgroup *gs = wd->groups;
  size_t at = 0;
  bool eights = ng <= 17 && n->qual.w == 3 && n->type.w == 0 && n->type.step == 0 &&
                n->type.base == KV_PUT; /* put-only, four-bit qualifiers: see below */
  for (uint32_t g = 0; g < ng && eights; g++)
    eights = !gs[g].count || !gs[g].fixed ||
             (gs[g].width == 8 && (gs[g].dec || !gs[g].transposed));
  for (uint32_t g = 0; g < ng; g++) {
    kv_sf_cgroup *sg = &gs[g];
    if (!sg->dec || !sg->count) continue;
    const kv_sfdec h = group_dec(sg);
    kv_sfdec_expand(&h, wd->dexp.p + at, 0);
    sg->data = wd->dexp.p + at;
    sg->transposed = 0;
    at += (size_t)sg->count * 8;
  }
  if (eights) { /* every fixed value 8 bytes side by side: one copy a cell, no test (a
                   variable-width cell copies 8 bytes of zeros that the next one overwrites:
                   vals has 8 bytes to spare) */
    static const uint8_t zeros[8];
    const uint8_t *src[16];
    uint32_t step[16];
    for (uint32_t g = 0; g < 16; g++) {
      bool f = g < ng && gs[g].count && gs[g].fixed;
      src[g] = f ? gs[g].data : zeros;
      step[g] = f ? 8 : 0;
    }
    uint8_t *x = wd->vals.p;
    const uint8_t *q = n->qual.p;
    for (uint32_t i = 0; i < n->ncells; i++) {
      uint32_t g = (q[i >> 1] >> ((i & 1) * 4)) & 15;
      memcpy(x, src[g], 8);
      src[g] += step[g];
      x += step[g];
    }
  } else {
    gather_cvals(n, gs, wd->vals.p, wd->rank);
  }
  for (uint32_t g = 0; g < ng; g++)
    if (gs[g].fixed) {
      gs[g].data = NULL; /* in cvals, as in a packed block */
      gs[g].transposed = 0;
    }
}

uint32_t kv_sf_widen_tick;

/* p moved from [from, from + len) to `to`; any other pointer (NULL) as it is. */
static const void *move_ptr(const void *p, const uint8_t *from, size_t len, uint8_t *to) {
  const uint8_t *q = p;
  return q && q >= from && q < from + len ? to + (q - from) : p;
}

kv_sf_cblock *kv_sf_cblock_wide_copy(const kv_sf_cblock *n, const kv_sf_cblock *wb) {
  uint32_t ng = n->nquals + 1, nq = n->nquals;
  const uint8_t *from = (const uint8_t *)n;
  size_t dict_len = nq ? (size_t)n->q_off[nq - 1] + n->q_len[nq - 1] : 0;
  const uint8_t *end = n->lcp ? n->prefix + n->lcp : n->dict + dict_len;
  size_t front = (size_t)(end - from), fixed = 0, var = 0;
  for (uint32_t g = 0; g < ng; g++) {
    const kv_sf_cgroup *sg = &wb->groups[g];
    if (sg->fixed) fixed += (size_t)sg->count * sg->width;
    else var += sg->data_len;
  }
  size_t total = front + fixed + var;
  uint8_t *m = malloc(total);
  if (!m) return NULL;
  memcpy(m, from, front);
  kv_sf_cblock *c = (kv_sf_cblock *)(void *)m;
#define MOVE(f) (c->f = move_ptr(c->f, from, front, m))
  MOVE(row_first.p);
  MOVE(key_off.p);
  MOVE(qual.p);
  MOVE(type.p);
  MOVE(ts.p);
  MOVE(seq.p);
  MOVE(keys);
  MOVE(prefix);
  MOVE(dict);
  MOVE(q_off);
  MOVE(q_len);
  MOVE(ck);
#undef MOVE
  kv_sf_cgroup *cg = (kv_sf_cgroup *)(uintptr_t)move_ptr(n->groups, from, front, m);
  uint8_t *x = m + front;
  memcpy(x, wb->cvals, fixed);
  c->cvals = x;
  x += fixed;
  for (uint32_t g = 0; g < ng; g++) {
    cg[g] = wb->groups[g]; /* fixed: data NULL, in cvals; dec: sc no longer read */
    if (cg[g].dec) cg[g].sc.planes = NULL;
    if (!cg[g].fixed) {
      cg[g].voff.p = move_ptr(cg[g].voff.p, from, front, m);
      if (cg[g].data_len) memcpy(x, cg[g].data, cg[g].data_len);
      cg[g].data = cg[g].data_len ? x : NULL;
      x += cg[g].data_len;
    }
  }
  c->groups = cg;
  c->narrow = c->regular = false;
  c->heat = NULL;
  c->charge = total;
  return c;
}

void kv_sf_wide_free(kv_sf_wide *wd) {
  free(wd->groups);
  free(wd->rank);
  kv_sfbuf_free(&wd->vals);
  kv_sfbuf_free(&wd->dexp);
  memset(wd, 0, sizeof *wd);
}
