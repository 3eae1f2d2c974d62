/*
** kv/util/trace.c: the block trace (kv_trace in kv/kv.h, the recording side in kv/util/trace.h): a
** record of the store-file blocks scans loaded and the key ranges they sought, for the
** shell's picture of what a query read (.keymap).
**
** Blocks are kept in an open-addressing hash table keyed by (file number, block index),
** one entry per distinct block with its load and cache-hit counts, so a statement that
** loads the same block a million times (point lookups) costs one entry. kv_trace_blocks
** copies the entries out sorted. Ranges are kept in the order sought, with their bounds'
** bytes copied into one growing buffer (offsets, so the buffer may move), up to
** KV_TRACE_MAX_RANGES; past that only counted. Nothing here can fail a scan: an allocation
** failure sets `lost` and the trace stops growing.
**
** Not here: deciding what to record (the readers call kv_trace_add_*), threads (a trace
** belongs to one thread at a time).
*/
#include <stdlib.h>
#include <string.h>

#include "kv/util/trace.h"

/* A range as stored: its bounds are offsets into kv_trace.keys. */
typedef struct trange {
  uint32_t family_id;     /* the scan's first family */
  bool has_start;         /* a start bound */
  bool has_end;           /* an end bound */
  size_t start_off;       /* the start's bytes in keys */
  uint32_t start_len;     /* its length */
  size_t end_off;         /* the end's bytes in keys */
  uint32_t end_len;       /* its length */
} trange;

struct kv_trace {
  kv_trace_block *slots;  /* hash table; loads == 0 marks an empty slot */
  size_t cap;             /* slots (a power of two, or 0) */
  size_t n;               /* distinct blocks held */
  kv_trace_block *sorted; /* kv_trace_blocks' output */
  size_t sorted_cap;      /* entries allocated in sorted */
  trange *ranges;         /* the ranges kept, in the order sought */
  size_t n_ranges;        /* entries used */
  size_t cap_ranges;      /* entries allocated */
  uint64_t total_ranges;  /* ranges sought, kept or not */
  uint8_t *keys;          /* the ranges' bounds, back to back */
  size_t keys_len;        /* bytes used */
  size_t keys_cap;        /* bytes allocated */
  kv_trace_range *out;    /* kv_trace_ranges' output (pointers into keys) */
  size_t out_cap;         /* entries allocated in out */
  bool lost;              /* an allocation failed: something is missing */
};

kv_trace *kv_trace_new(void) { return calloc(1, sizeof(kv_trace)); }

void kv_trace_free(kv_trace *t) {
  if (!t) return;
  free(t->slots);
  free(t->sorted);
  free(t->ranges);
  free(t->keys);
  free(t->out);
  free(t);
}

void kv_trace_clear(kv_trace *t) {
  if (!t) return;
  if (t->slots) memset(t->slots, 0, t->cap * sizeof *t->slots);
  t->n = 0;
  t->n_ranges = 0;
  t->total_ranges = 0;
  t->keys_len = 0;
  t->lost = false;
}

bool kv_trace_lost(const kv_trace *t) { return t && t->lost; }

static size_t slot_of(uint64_t file, uint32_t block, size_t cap) {
  uint64_t h = (file * 0x9E3779B97F4A7C15ull) ^ ((uint64_t)block * 0xC2B2AE3D27D4EB4Full);
  h ^= h >> 29;
  return (size_t)h & (cap - 1);
}

/* Double the table (or make its first 256 slots). False when out of memory. */
static bool grow(kv_trace *t) {
  size_t nc = t->cap ? t->cap * 2 : 256;
  kv_trace_block *ns = calloc(nc, sizeof *ns);
  if (!ns) return false;
  for (size_t i = 0; i < t->cap; i++) {
    const kv_trace_block *e = &t->slots[i];
    if (!e->loads) continue;
    size_t j = slot_of(e->file, e->block, nc);
    while (ns[j].loads) j = (j + 1) & (nc - 1);
    ns[j] = *e;
  }
  free(t->slots);
  t->slots = ns;
  t->cap = nc;
  return true;
}

static uint32_t sat_add(uint32_t a, uint32_t b) { return a > UINT32_MAX - b ? UINT32_MAX : a + b; }

/* Add `loads` loads of which `hits` were cache hits of one block. */
static void add_block(kv_trace *t, uint32_t fid, uint64_t file, uint32_t block,
                      uint32_t loads, uint32_t hits) {
  if ((t->n + 1) * 4 > t->cap * 3 && !grow(t)) {
    t->lost = true;
    return;
  }
  size_t j = slot_of(file, block, t->cap);
  while (t->slots[j].loads && (t->slots[j].file != file || t->slots[j].block != block))
    j = (j + 1) & (t->cap - 1);
  kv_trace_block *e = &t->slots[j];
  if (!e->loads) {
    e->family_id = fid;
    e->file = file;
    e->block = block;
    t->n++;
  }
  e->loads = sat_add(e->loads, loads);
  e->cache_hits = sat_add(e->cache_hits, hits);
}

void kv_trace_add_block(kv_trace *t, uint32_t fid, uint64_t file, uint32_t block, bool hit) {
  if (t) add_block(t, fid, file, block, 1, hit ? 1 : 0);
}

static int block_cmp(const void *a, const void *b) {
  const kv_trace_block *x = a, *y = b;
  if (x->file != y->file) return x->file < y->file ? -1 : 1;
  return x->block < y->block ? -1 : x->block > y->block;
}

const kv_trace_block *kv_trace_blocks(kv_trace *t, size_t *n) {
  *n = 0;
  if (!t || !t->n) return NULL;
  if (t->sorted_cap < t->n) {
    kv_trace_block *ns = realloc(t->sorted, t->n * sizeof *ns);
    if (!ns) {
      t->lost = true;
      return NULL;
    }
    t->sorted = ns;
    t->sorted_cap = t->n;
  }
  size_t k = 0;
  for (size_t i = 0; i < t->cap; i++)
    if (t->slots[i].loads) t->sorted[k++] = t->slots[i];
  qsort(t->sorted, k, sizeof *t->sorted, block_cmp);
  *n = k;
  return t->sorted;
}

/* Append len bytes to keys; their offset, or SIZE_MAX when out of memory. */
static size_t put_key(kv_trace *t, const uint8_t *p, uint32_t len) {
  if (t->keys_len + len > t->keys_cap) {
    size_t nc = t->keys_cap ? t->keys_cap : 1024;
    while (nc < t->keys_len + len) nc *= 2;
    uint8_t *nk = realloc(t->keys, nc);
    if (!nk) return SIZE_MAX;
    t->keys = nk;
    t->keys_cap = nc;
  }
  size_t off = t->keys_len;
  if (len) memcpy(t->keys + off, p, len);
  t->keys_len += len;
  return off;
}

void kv_trace_add_range(kv_trace *t, uint32_t fid, const uint8_t *start, uint32_t start_len,
                        const uint8_t *end, uint32_t end_len) {
  if (!t) return;
  t->total_ranges++;
  if (t->n_ranges >= KV_TRACE_MAX_RANGES || t->lost) return;
  if (t->n_ranges == t->cap_ranges) {
    size_t nc = t->cap_ranges ? t->cap_ranges * 2 : 16;
    trange *nr = realloc(t->ranges, nc * sizeof *nr);
    if (!nr) {
      t->lost = true;
      return;
    }
    t->ranges = nr;
    t->cap_ranges = nc;
  }
  trange r = {fid, start != NULL, end != NULL, 0, start ? start_len : 0, 0,
              end ? end_len : 0};
  if (start && (r.start_off = put_key(t, start, start_len)) == SIZE_MAX) t->lost = true;
  if (end && (r.end_off = put_key(t, end, end_len)) == SIZE_MAX) t->lost = true;
  if (!t->lost) t->ranges[t->n_ranges++] = r;
}

const kv_trace_range *kv_trace_ranges(kv_trace *t, size_t *n, uint64_t *total) {
  *n = 0;
  if (total) *total = t ? t->total_ranges : 0;
  if (!t || !t->n_ranges) return NULL;
  if (t->out_cap < t->n_ranges) {
    kv_trace_range *no = realloc(t->out, t->n_ranges * sizeof *no);
    if (!no) {
      t->lost = true;
      return NULL;
    }
    t->out = no;
    t->out_cap = t->n_ranges;
  }
  for (size_t i = 0; i < t->n_ranges; i++) {
    const trange *r = &t->ranges[i];
    kv_trace_range *o = &t->out[i];
    o->family_id = r->family_id;
    o->has_start = r->has_start;
    o->has_end = r->has_end;
    const uint8_t *base = t->keys ? t->keys : (const uint8_t *)"";
    o->start = r->has_start ? base + r->start_off : NULL;
    o->start_len = r->start_len;
    o->end = r->has_end ? base + r->end_off : NULL;
    o->end_len = r->end_len;
  }
  *n = t->n_ranges;
  return t->out;
}

void kv_trace_merge(kv_trace *dst, kv_trace *src) {
  if (!dst || !src || dst == src) return;
  for (size_t i = 0; i < src->cap; i++) {
    const kv_trace_block *e = &src->slots[i];
    if (e->loads) add_block(dst, e->family_id, e->file, e->block, e->loads, e->cache_hits);
  }
  size_t n = 0;
  const kv_trace_range *r = kv_trace_ranges(src, &n, NULL);
  for (size_t i = 0; i < n; i++)
    kv_trace_add_range(dst, r[i].family_id, r[i].start, r[i].start_len, r[i].end, r[i].end_len);
  dst->total_ranges += src->total_ranges - n; /* those src counted and did not keep */
  if (src->lost) dst->lost = true;
}
