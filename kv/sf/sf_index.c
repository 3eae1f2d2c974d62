/*
** kv/sf/sf_index.c: the paged block index of a mapped store file opened past its store's
** index budget (kv_sf_open_budget; kv_options.index_memory). The open (kv/sf/sf_read.c)
** checks the whole index section in the mapping, as it does any other, but keeps only a
** page table: for every KV_SF_INDEX_PAGE-th block, where its entry starts in the section
** and its first row key, plus a dense copy of those keys (pfence). A page's entries are
** decoded when first asked for and kept in the block cache under KV_CACHE_META | the
** page's file offset (counted with the filter partitions as metadata, evicted like blocks,
** dropped with the file) with a dense copy of their first row keys, so what a reader holds
** no longer grows with its file: about 0.7 bytes a block against about 100 for the decoded
** entries and the fence (issue 22). A seek to a row searches the page table's keys, then
** the cached page's in place, as an unpaged reader searches its fence's top level, then the
** fence. Each thread keeps copies of the entries around its last two seeks' blocks and of
** the last two pages it read entry by entry (named by the reader's uid), so the entries a
** read asks for one by one cost no lock after the first. Without a cache a page is decoded
** each time it is needed.
**
** Not here: the section's layout and checks (kv/sf/sf_read.c, docs/FORMAT.md "Block
** index"), the search of an unpaged index (its fence), the blocks themselves.
*/
#include <stdio.h>
#include "kv/util/cache.h"
#include "kv/sf/sf_cblock.h"
#include "kv/sf/sf_int.h"

static uint32_t paged_min = UINT32_MAX; /* UINT32_MAX: not read yet */

uint32_t kv_sf_paged_min(void) {
  uint32_t v = __atomic_load_n(&paged_min, __ATOMIC_RELAXED);
  if (v != UINT32_MAX) return v;
  v = KV_SF_PAGED_MIN;
  const char *e = getenv("ROWAN_SF_PAGED_MIN");
  if (e && *e) {
    char *end = NULL;
    unsigned long x = strtoul(e, &end, 10);
    if (end && !*end && x < UINT32_MAX) v = (uint32_t)x;
  }
  __atomic_store_n(&paged_min, v, __ATOMIC_RELAXED);
  return v;
}

void kv_sf_set_paged_min(uint32_t blocks) {
  __atomic_store_n(&paged_min, blocks == UINT32_MAX ? UINT32_MAX - 1 : blocks, __ATOMIC_RELAXED);
}

static uint64_t next_uid; /* kv_sf_new_uid (atomic adds) */

uint64_t kv_sf_new_uid(void) { return __atomic_add_fetch(&next_uid, 1, __ATOMIC_RELAXED); }

/* A thread's copy of one page's entries. */
typedef struct ipage_memo {
  uint64_t uid;            /* the reader's uid (0: empty) */
  uint32_t page, n;
  kv_sf_index_entry e[KV_SF_INDEX_PAGE];
} ipage_memo;
static _Thread_local ipage_memo memo[2];
static _Thread_local unsigned memo_next;

/* A thread's copy of the few entries around the block its last seek in a reader found
** (the block and the ones a read asks for next), for two readers: a point read asks for
** those of each family's file without copying their pages. */
#define NEAR 4u
typedef struct near_memo {
  uint64_t uid;            /* the reader's uid (0: empty) */
  uint32_t first, n;       /* entries [first, first + n) */
  kv_sf_index_entry e[NEAR];
} near_memo;
static _Thread_local near_memo near[2];
static _Thread_local unsigned near_next;

/* Decode the n entries of page p from its section offset into out. The open checked them,
** but in the mapping, which is read again here: should the file have changed under it (a
** store file is never written again; an outside tool could), an entry that does not parse
** within the section, or whose first row key is wider than the page's fence, ends the
** decode and it and the rest are zero (an empty block at offset 0: a read of it fails its
** block's checks with KV_ERR_CORRUPT), never a read outside the section. */
static void decode_entries(const kv_sf_reader *r, uint32_t p, uint32_t n,
                           kv_sf_index_entry *out) {
  const uint8_t *q = r->index_buf + r->ipages[p].sec, *lim = r->index_buf + r->index_len;
  uint64_t wmax = r->ipages[p].w ? r->ipages[p].w : KV_MAX_ROW_KEY;
  uint32_t i = 0;
  for (; i < n; i++) {
    uint64_t f[6], v = 0;
    for (int j = 0; j < 6 && q; j++) q = kv_get_varint(q, lim, &f[j]);
    if (!q || f[1] > UINT32_MAX || f[2] > UINT32_MAX || f[3] > UINT32_MAX ||
        f[4] > UINT32_MAX || f[5] > wmax || f[5] > (uint64_t)(lim - q))
      break;
    const uint8_t *key = q;
    if (!(q = kv_get_varint(q + f[5], lim, &v)) || v > (uint64_t)(lim - q) || /* qualifier */
        !(q = kv_get_varint(q + v, lim, &v)) ||                               /* timestamp */
        !(q = kv_get_varint(q, lim, &v)) || q >= lim)                         /* sequence */
      break;
    q++; /* type */
    kv_sf_index_entry *e = &out[i];
    e->off = f[0];
    e->size = (uint32_t)f[1];
    e->raw = (uint32_t)f[2];
    e->cells = (uint32_t)f[3];
    e->rows = (uint32_t)f[4];
    e->key = (uint32_t)(key - r->index_buf);
    e->row_len = (uint32_t)f[5];
  }
  if (i < n) memset(out + i, 0, (n - i) * sizeof *out);
}

/* A page's dense copy of its entries' first row keys (u8 length, then the key padded to w
** bytes, as the unpaged fence: w is the page table's, from the open), kept after its
** entries in the cached value with w before it; none when w is 0 (a key longer than
** KV_SF_FENCE_MAX). fill_fence writes that of entries e[0, n) to f. */
static void fill_fence(const kv_sf_reader *r, const kv_sf_index_entry *e, uint32_t n,
                       uint32_t w, uint8_t *f) {
  size_t stride = (size_t)w + 1;
  memset(f, 0, n * stride);
  for (uint32_t i = 0; i < n; i++) {
    f[i * stride] = (uint8_t)e[i].row_len;
    memcpy(f + i * stride + 1, r->index_buf + e[i].key, e[i].row_len);
  }
}

/* Page p of r in this thread's copies: found, or copied from the cache, or decoded (and
** inserted into the cache). */
static const ipage_memo *page_memo(const kv_sf_reader *r, uint32_t p) {
  for (int k = 0; k < 2; k++)
    if (memo[k].uid == r->uid && memo[k].page == p) return &memo[k];
  ipage_memo *m = &memo[memo_next++ & 1];
  m->uid = 0;
  m->page = p;
  m->n = kv_sf_ipage_len(r, p);
  struct kv_cache_entry *ce;
  const kv_sf_index_entry *pg = kv_sf_ipage_get(r, p, m->e, &ce);
  if (ce) { /* from the cached value (else decoded into m->e) */
    memcpy(m->e, pg, m->n * sizeof *pg);
    kv_cache_release(r->cache, ce);
  }
  m->uid = r->uid;
  return m;
}

const kv_sf_index_entry *kv_sf_ipage_get(const kv_sf_reader *r, uint32_t p,
                                         kv_sf_index_entry tmp[KV_SF_INDEX_PAGE],
                                         struct kv_cache_entry **ce) {
  uint32_t n = kv_sf_ipage_len(r, p);
  uint64_t key = KV_CACHE_META | (r->index_off + r->ipages[p].sec);
  *ce = NULL;
  if (r->cache && (*ce = kv_cache_lookup(r->cache, r->cache_id, key)))
    return kv_cache_value(*ce);
  decode_entries(r, p, n, tmp);
  if (!r->cache) return tmp;
  /* the cached value: the entries, u32 w, the page's fence */
  uint32_t w = r->ipages[p].w;
  size_t stride = (size_t)w + 1, charge = n * sizeof *tmp + 4 + (w ? n * stride : 0);
  kv_sf_index_entry *c = malloc(charge);
  if (!c) return tmp; /* out of memory: decoded again next time */
  memcpy(c, tmp, n * sizeof *c);
  uint8_t *f = (uint8_t *)(c + n);
  memcpy(f, &w, 4);
  if (w) fill_fence(r, tmp, n, w, f + 4);
  if (!(*ce = kv_cache_insert(r->cache, r->cache_id, key, c, charge, free))) {
    free(c);
    return tmp;
  }
  return c;
}

uint8_t *kv_sf_dense_fence(const kv_sf_reader *r, const void *items, size_t size, size_t at,
                           uint32_t n, uint32_t *w_out) {
  const uint8_t *it = items;
  uint32_t w = 0, kl[2]; /* a key's section offset, then its length */
  for (uint32_t i = 0; i < n; i++) {
    memcpy(kl, it + i * size + at, sizeof kl);
    if (kl[1] > KV_SF_FENCE_MAX) return NULL;
    if (kl[1] > w) w = kl[1];
  }
  size_t stride = (size_t)w + 1;
  uint8_t *f = calloc(n ? n : 1, stride);
  for (uint32_t i = 0; f && i < n; i++) {
    memcpy(kl, it + i * size + at, sizeof kl);
    f[i * stride] = (uint8_t)kl[1];
    memcpy(f + i * stride + 1, r->index_buf + kl[0], kl[1]);
  }
  *w_out = w;
  return f;
}

void kv_sf_build_page_fence(kv_sf_reader *r) {
  /* none: the page search reads the page table's keys in the mapping */
  r->pfence = kv_sf_dense_fence(r, r->ipages, sizeof *r->ipages, offsetof(kv_sf_ipage, key),
                                r->nipages, &r->pfence_w);
}

/* Compare the key of fence entry i (fence f, width w), or without a fence the row key at
** section offset `key` (len bytes), with [row, row+len). */
static inline int cmp_row(const kv_sf_reader *r, const uint8_t *f, uint32_t w, uint32_t i,
                          uint32_t key, uint32_t klen, const uint8_t *row, uint32_t len) {
  if (f) {
    const uint8_t *x = f + (size_t)i * (w + 1);
    return kv_sf_bytes_cmp(x + 1, x[0], row, len);
  }
  return kv_sf_bytes_cmp(r->index_buf + key, klen, row, len);
}

uint32_t kv_sf_lower_bound_paged(const kv_sf_reader *r, const uint8_t *row, uint32_t len,
                                 bool *eq) {
  uint32_t lo = 0, hi = r->nipages; /* the first page whose first row is at or above row */
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo) / 2;
    const kv_sf_ipage *g = &r->ipages[mid];
    if (cmp_row(r, r->pfence, r->pfence_w, mid, g->key, g->row_len, row, len) < 0) lo = mid + 1;
    else hi = mid;
  }
  uint32_t q = lo;
  if (q > 0) { /* the answer may lie after page q - 1's first block: searched in the
                  cached page in place (its fence), the entries around it kept */
    uint32_t p = q - 1, n = kv_sf_ipage_len(r, p), w = 0;
    kv_sf_index_entry tmp[KV_SF_INDEX_PAGE];
    struct kv_cache_entry *ce;
    const kv_sf_index_entry *pg = kv_sf_ipage_get(r, p, tmp, &ce);
    const uint8_t *f = NULL;
    if (ce && (w = r->ipages[p].w) != 0) f = (const uint8_t *)(pg + n) + 4; /* its fence */
    uint32_t a = 1, z = n;
    while (a < z) {
      uint32_t mid = a + (z - a) / 2;
      if (cmp_row(r, f, w, mid, pg[mid].key, pg[mid].row_len, row, len) < 0) a = mid + 1;
      else z = mid;
    }
    near_memo *nm = &near[near_next++ & 1];
    nm->first = a >= 2 ? a - 2 : 0;
    nm->n = n - nm->first < NEAR ? n - nm->first : NEAR;
    memcpy(nm->e, pg + nm->first, nm->n * sizeof *pg);
    nm->first += p * KV_SF_INDEX_PAGE;
    nm->uid = r->uid;
    bool in = a < n;
    if (in) *eq = cmp_row(r, f, w, a, pg[a].key, pg[a].row_len, row, len) == 0;
    kv_cache_release(r->cache, ce);
    if (in) return p * KV_SF_INDEX_PAGE + a;
  }
  /* page q's first block (or none: past the file) */
  *eq = q < r->nipages && cmp_row(r, r->pfence, r->pfence_w, q, r->ipages[q].key,
                                   r->ipages[q].row_len, row, len) == 0;
  return q < r->nipages ? q * KV_SF_INDEX_PAGE : r->nblocks;
}

kv_sf_index_entry kv_sf_entry_paged(const kv_sf_reader *r, uint64_t i) {
  for (int k = 0; k < 2; k++)
    if (near[k].uid == r->uid && i - near[k].first < near[k].n) return near[k].e[i - near[k].first];
  return page_memo(r, (uint32_t)(i / KV_SF_INDEX_PAGE))->e[i % KV_SF_INDEX_PAGE];
}

/* Compare the first cell whose row key is at section offset `key` (row_len bytes) with t:
** the row keys in place first, the rest decoded only when they are equal. */
static int cmp_first(const kv_sf_reader *r, uint32_t key, uint32_t row_len, const kv_cell *t) {
  int c = kv_bytes_cmp(r->index_buf + key, row_len, t->row, t->row_len);
  if (c) return c;
  kv_cell f;
  kv_sf_cell_at(r, key, row_len, &f);
  return kv_cell_cmp(&f, t);
}

int64_t kv_sf_find_block_paged(const kv_sf_reader *r, const kv_cell *t) {
  uint32_t lo = 0, hi = r->nipages; /* the first page whose first cell is above t */
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo) / 2;
    if (cmp_first(r, r->ipages[mid].key, r->ipages[mid].row_len, t) <= 0) lo = mid + 1;
    else hi = mid;
  }
  if (lo == 0) return -1; /* t before the file */
  uint32_t p = lo - 1;
  const ipage_memo *m = page_memo(r, p);
  const kv_sf_index_entry *pg = m->e;
  uint32_t a = 1, z = m->n; /* entry 0 is at or below t: the first entry above t in [1, n] */
  while (a < z) {
    uint32_t mid = a + (z - a) / 2;
    if (cmp_first(r, pg[mid].key, pg[mid].row_len, t) <= 0) a = mid + 1;
    else z = mid;
  }
  return (int64_t)p * KV_SF_INDEX_PAGE + a - 1;
}

const kv_sf_index_entry *kv_sf_icur_page(kv_sf_icur *c, uint32_t i) {
  kv_sf_icur_done(c);
  c->page = i / KV_SF_INDEX_PAGE;
  c->pg = kv_sf_ipage_get(c->r, c->page, c->tmp, &c->ce);
  return &c->pg[i % KV_SF_INDEX_PAGE];
}

void kv_sf_icur_done(kv_sf_icur *c) {
  if (c->ce) kv_cache_release(c->r->cache, c->ce);
  c->ce = NULL;
  c->page = UINT32_MAX;
  c->pg = NULL;
}
