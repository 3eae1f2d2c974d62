/*
** kv/sf/sf_cblock.h: the compact decoded form of a store file block, the form the store file
** iterator (kv/sf/sf_iter.c) reads and the block cache (kv/util/cache.c) keeps.
**
** A kv_sf_dblock (kv/sf/sf_int.h) spends about 33 bytes of arrays per cell plus an
** un-transposed copy of every value: a 64 KiB block of the sensor archive costs ~390 KB
** decoded. A compact block keeps the value bytes as they lie in the raw block (fixed-width
** groups still transposed, variable ones back to back; a decimal-scaled group rebuilt to
** 8-byte values side by side) and every per-cell or per-row number
** in a packed array whose element width (0, 1, 2, 4 or 8 bytes) is the narrowest that holds
** the block's range (a compacted file's sequence numbers cost nothing, a row's shared
** timestamp is stored once per row, a put-only block has no type array). A cell's value is
** located on demand: its rank in its value group comes from a checkpoint of ranks every
** 2^ck_shift cells and a short count from there (kv_sf_cblock_rank), and a fixed-width value
** is gathered from its transposed bytes into the reader's buffer (a decimal-scaled one is
** read where it lies). Row keys of one length are
** a block-wide common prefix plus one suffix per row.
**
** Two lives: a private block (kv_sf_cdec: arrays in the decoder's arena, value bytes,
** qualifiers and key prefix pointing into the raw block the caller keeps alive), and a
** packed block (kv_sf_cblock_pack: one allocation holding everything, freed with free(),
** which the cache owns).
** Not here: I/O, the block framing (kv/sf/sf_block.c), iteration (kv/sf/sf_iter.c). The raw layout
** decoded is docs/FORMAT.md Part 2, "Raw block"; nothing here is on disk.
*/
#ifndef ROWAN_KV_SF_CBLOCK_H
#define ROWAN_KV_SF_CBLOCK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include "kv/util/cell.h"
#include "kv/sf/sf_int.h"

/* A packed array of unsigned numbers: element i is base + the w-byte native-endian
** number at p + i * w (w 0 = base + i * step, no bytes: a constant or an arithmetic run such
** as the first cells of one-cell rows; w 3 = four bits each, element i in the low nibble of
** byte i / 2 when i is even, the high one when odd). */
typedef struct kv_sf_pa {
  const uint8_t *p;   /* elements (NULL when w is 0) */
  uint64_t base;      /* added to every element */
  uint64_t step;      /* w 0: element i is base + i * step */
  uint32_t off;       /* while decoding: offset of p in the decoder's arena */
  uint8_t w;          /* element width: 0, 1, 2, 4 or 8 bytes; 3 = a nibble */
} kv_sf_pa;

static inline uint64_t kv_sf_pa_get(const kv_sf_pa *a, uint32_t i) {
  switch (a->w) {
    case 0: return a->base + (uint64_t)i * a->step;
    case 1: return a->base + a->p[i];
    case 3: return a->base + ((a->p[i >> 1] >> ((i & 1) * 4)) & 15);
    case 2: { uint16_t v; memcpy(&v, a->p + (size_t)i * 2, 2); return a->base + v; }
    case 4: { uint32_t v; memcpy(&v, a->p + (size_t)i * 4, 4); return a->base + v; }
    default: { uint64_t v; memcpy(&v, a->p + (size_t)i * 8, 8); return a->base + v; }
  }
}

/* One value group (docs/FORMAT.md "Values section"): the put values of one qualifier, or
** (the last group) the values of every other cell type. */
typedef struct kv_sf_cgroup {
  const uint8_t *data;  /* fixed: count * width bytes (transposed as in the raw block when
                           transposed, else value k at k * width); variable: the values;
                           NULL for a decimal-scaled group of a narrow block */
  union {
    kv_sf_pa voff;      /* variable: count + 1 offsets of the values in data */
    struct {            /* dec (a private block or a narrow one): the group as the raw block
                           holds it (kv/sf/sf_dec.h): value k is (base + offset k) / 10^k */
      const uint8_t *planes; /* count * w bytes, byte j of offset k at planes[j * count + k] */
      int64_t base;
      uint32_t k, w;    /* power of ten, offset width in bytes */
    } sc;
  };
  uint32_t count;       /* cells in the group */
  uint32_t width;       /* fixed: bytes per value */
  uint32_t fw;          /* width when fixed, else 0 (bytes a cell adds to the cvals offset) */
  uint32_t data_off;    /* while decoding: offset of data in the raw block */
  uint32_t data_len;    /* bytes of data */
  uint8_t fixed;        /* 1 = fixed width */
  uint8_t transposed;   /* fixed: byte j of value k at data[j * count + k] (private blocks;
                           a packed block keeps fixed values in its cvals instead) */
  uint8_t dec;          /* decimal-scaled in the raw block (docs/FORMAT.md "Values section"):
                           data is its values rebuilt (8 bytes each, value k at k * 8, not
                           transposed) in the decoder's dexp, not in the raw block (in a
                           narrow block: NULL, the values only in sc); width and fw are 8 */
  uint8_t absent;       /* not decoded (kv_sf_cblock_decode_part): only count is known; no
                           value of the group may be read (fixed, width, fw are 0) */
} kv_sf_cgroup;

#define KV_SF_SHAPE_MAX 24 /* dictionary entries a block's shape names at most */

typedef struct kv_sf_cblock {
  uint32_t nrows;          /* rows in the block */
  uint32_t ncells;         /* cells in the block */
  uint32_t nquals;         /* qualifier dictionary entries */
  uint32_t klen;           /* > 0: every row key has this length (prefix + suffix) */
  uint32_t lcp;            /* klen > 0: bytes of the prefix every key shares */
  uint32_t max_key;        /* longest row key */
  const uint8_t *prefix;   /* klen > 0: the common prefix */
  const uint8_t *keys;     /* klen > 0: (klen - lcp) suffix bytes per row; else full keys */
  kv_sf_pa key_off;        /* klen == 0: nrows + 1 offsets of the keys in keys */
  kv_sf_pa row_first;      /* nrows + 1: first cell of each row; [nrows] = ncells */
  kv_sf_pa qual;           /* per cell: dictionary index */
  kv_sf_pa type;           /* per cell: enum kv_cell_type (w 0: all puts) */
  kv_sf_pa ts;             /* per cell, or per row when ts_per_row: the timestamp as u64 */
  bool ts_per_row;         /* every cell of a row has its row's timestamp */
  kv_sf_pa seq;            /* per cell: sequence number */
  const uint8_t *dict;     /* the dictionary's bytes */
  const uint32_t *q_off;   /* per entry: offset of its bytes in dict */
  const uint32_t *q_len;   /* per entry: its length */
  kv_sf_cgroup *groups;    /* nquals + 1 value groups */
  uint32_t ck_shift;       /* a rank checkpoint every 2^ck_shift cells */
  const void *ck;          /* (ncells >> ck_shift) + 1 rows of nquals + 2 numbers (u16
                              when ck_w is 2, else u32): the cells of each group before
                              cell k << ck_shift, then the fixed-width value bytes before
                              it (its offset in cvals) */
  uint8_t ck_w;            /* bytes per checkpoint number: 2 or 4 */
  const uint8_t *cvals;    /* packed: every fixed-width value whole, in cell order (a row's
                              values side by side: a point read touches a line or two, not
                              one per value byte); NULL in a private block and a narrow one */
  bool regular;            /* narrow: every row holds one put of every dictionary entry,
                              in dictionary order (kv_sf_cblock_pack_narrow decides it), so
                              its fixed-width values widen into an nrows x (bytes a row)
                              matrix; false in other forms */
  uint32_t *heat;          /* narrow: two counters at the end of its allocation (not in
                              this struct, which readers copy): widenings in a row, each
                              within KV_SF_HOT_GAP of the one before, and kv_sf_widen_tick
                              at the last (kv_sf_cblock_note_hit); NULL in other forms */
  bool narrow;             /* the narrow packed form (kv_sf_cblock_pack_narrow): no cvals,
                              decimal-scaled groups as their offset planes (sc), other
                              fixed-width groups transposed; readers read it through
                              kv_sf_cblock_widen, never directly */
  uint32_t max_width;      /* widest fixed-width value group */
  size_t charge;           /* packed: bytes of its allocation */
  bool one_put_per_col;    /* every cell a put and no row holding two cells of one
                              qualifier: a row's cells are its visible versions unless the
                              snapshot, TTL or time range hide some (kv/sf/sf_rows.h) */
  uint64_t max_seq;        /* largest sequence number of the block's cells */
  int64_t min_ts, max_ts;  /* smallest and largest timestamp of the block's cells */
  bool part;               /* some value groups are absent (kv_sf_cblock_decode_part): a
                              private block only, never packed nor cached; max_width and the
                              checkpoints' fixed-width offsets count the decoded groups only */
  uint8_t shape_len;       /* bytes in shape; 0 when the block has none (a qualifier longer
                              than one byte, more than KV_SF_SHAPE_MAX entries, a value wider
                              than 254 bytes, no entry) */
  uint8_t shape[2 * KV_SF_SHAPE_MAX]; /* kv_sf_cblock_set_shape: per dictionary entry its
                              qualifier byte and 1 + its fixed width (0: variable width or,
                              decoded in part, absent). Two blocks of one shape have the same
                              dictionary and value widths, so an iterator's per-block tables
                              for one projection (keep flags, the fast row table:
                              kv/sf/sf_iter_proj.c) carry over from one to the other */
} kv_sf_cblock;

/* The decoder's reusable state: the block it decoded last and the memory behind it. */
typedef struct kv_sf_cdec {
  kv_sf_cblock b;          /* the decoded block (pointers into arena and the raw block) */
  kv_sfbuf arena;          /* packed arrays, keys, dictionary offsets, checkpoints */
  kv_sfbuf dexp;           /* decimal-scaled groups rebuilt to 8-byte values, side by side */
  kv_sf_cgroup *groups;    /* value groups (b.groups points here) */
  size_t groups_cap;       /* entries allocated in groups */
  uint64_t *t64;           /* per-cell scratch (timestamps, then sequence numbers) */
  size_t t64_cap;          /* entries allocated in t64 */
  uint32_t *t32;           /* per-cell scratch (qualifiers, cells per row, offsets) */
  size_t t32_cap;          /* entries allocated in t32 */
  uint32_t *tck;           /* the checkpoints' group counts while decoding */
  size_t tck_cap;          /* entries allocated in tck */
  const uint8_t *raw;      /* the raw block decoded */
  size_t dict_off, dict_len; /* the dictionary's bytes in raw */
  size_t prefix_off;       /* the key prefix in raw (klen > 0) */
  uint32_t keys_off, qoff_off, qlen_off, ck_off; /* offsets in arena */
} kv_sf_cdec;

/* Decode raw block bytes [raw, raw+len) into w->b, reusing w's memory (it only grows). The
** raw bytes must stay alive and unchanged while w->b is read (values, qualifiers and the
** key prefix point into them). Checks everything kv_sf_block_decode checks (counts, bounds,
** streams, value groups adding up, the block ending where its last group ends). KV_OK;
** KV_ERR_CORRUPT with *why set to a static reason; KV_ERR_NOMEM. */
int kv_sf_cblock_decode(kv_sf_cdec *w, const uint8_t *raw, size_t len, const char **why);
/* A sectioned block (docs/FORMAT.md Part 2, compression byte 2) to decode in part. */
typedef struct kv_sf_cpart {
  const uint8_t *disk;         /* the framed block, accepted by kv_sf_frame_open */
  const kv_sf_sections *sec;   /* its section table (from kv_sf_frame_open; n >= 2) */
  uint8_t *raw;                /* room for the raw block (sec->raw_off[n] bytes): the sections
                                  decoded are inflated to their places in it */
  bool (*want)(void *ctx, const uint8_t *qual, uint32_t len); /* whether the puts of this
                                  dictionary entry are read (their group is decoded) */
  void *ctx;                   /* handed to want */
  uint64_t inflated;           /* out: raw bytes inflated (section 0 and the groups decoded) */
} kv_sf_cpart;

/* kv_sf_cblock_decode of a sectioned block, inflating and decoding only section 0 (header,
** dictionary, rows, cells) and the value groups of the dictionary entries pt->want accepts,
** plus the group of the cells that are not puts (tombstones): the other groups are left
** absent (kv_sf_cgroup.absent; w->b.part set when there is one). Section 0 must end where
** the value groups begin and each group decoded must fill its section; the sections must be
** one per group present. The raw bytes stay in pt->raw, which must outlive w->b as raw does
** for kv_sf_cblock_decode. Codes and reasons as kv_sf_cblock_decode (section damage too). */
int kv_sf_cblock_decode_part(kv_sf_cdec *w, kv_sf_cpart *pt, const char **why);
/* A self-contained copy of the block w decoded last, in one allocation (free() it); its
** charge field holds the allocation's size. Fixed-width values are stored whole in cell
** order (cvals). Uses w's scratch (w->b stays valid). NULL when out of memory, or when the
** block was decoded in part (w->b.part). */
kv_sf_cblock *kv_sf_cblock_pack(kv_sf_cdec *w);
/* The narrow packed form of the block w decoded last: kv_sf_cblock_pack's single allocation
** without cvals, its decimal-scaled groups kept as their offset planes (a value's 1-4 bytes
** instead of 8) and its other fixed-width groups transposed as the raw block has them, so
** the block cache holds about twice as many of a sensor table's blocks. Readers widen it
** (kv_sf_cblock_widen) before reading it. A block without a decimal-scaled group is packed
** the usual way (narrow false). NULL when out of memory or decoded in part. */
kv_sf_cblock *kv_sf_cblock_pack_narrow(kv_sf_cdec *w);

/* A reader's room for widened blocks (reused; only grows). */
typedef struct kv_sf_wide {
  kv_sf_cblock b;          /* the widened block */
  kv_sf_cgroup *groups;    /* its value groups */
  size_t groups_cap;
  kv_sfbuf vals;           /* its cvals */
  kv_sfbuf dexp;           /* decimal-scaled groups rebuilt, side by side */
  uint32_t *rank;          /* per group: running rank while gathering */
  size_t rank_cap;
} kv_sf_wide;

/* The packed (wide) form of narrow block n, in wd: cvals gathered as kv_sf_cblock_pack
** gathers them (decimal-scaled values rebuilt, kv_sfdec_expand), everything else pointing
** into n, which must outlive the result (the reader holds n's cache entry). Reads exactly
** what the packed copy of the same block reads. NULL when out of memory. */
const kv_sf_cblock *kv_sf_cblock_widen(const kv_sf_cblock *n, kv_sf_wide *wd);
/* Free wd's memory; it is empty and reusable. */
void kv_sf_wide_free(kv_sf_wide *wd);

/* Widenings of narrow blocks by every reader of the process, counted (a clock for
** kv_sf_cblock_note_hit). */
extern uint32_t kv_sf_widen_tick;
#define KV_SF_HOT_GAP 4096u /* widenings of other blocks between two of a hot block's */

/* Count a reader's widening of cached narrow block n and return how many widenings of it
** came in a row, each less than KV_SF_HOT_GAP widenings (of any block) after the one before:
** the blocks every query reads (the newest rows of a series) count up, a block read now and
** then by random lookups starts again at 1. Shared and approximate: relaxed atomics on the
** clock and on n's two counters (n->heat), the only bytes of a cached block a reader
** writes. */
static inline uint32_t kv_sf_cblock_note_hit(const kv_sf_cblock *n) {
  uint32_t now = __atomic_add_fetch(&kv_sf_widen_tick, 1, __ATOMIC_RELAXED);
  uint32_t *hits = &n->heat[0];
  uint32_t last = __atomic_exchange_n(&n->heat[1], now, __ATOMIC_RELAXED);
  if (now - last >= KV_SF_HOT_GAP) {
    __atomic_store_n(hits, 1, __ATOMIC_RELAXED);
    return 1;
  }
  return __atomic_add_fetch(hits, 1, __ATOMIC_RELAXED);
}

/* A packed (wide) copy of narrow block n, in one allocation as kv_sf_cblock_pack makes it,
** from wb, its widened form (kv_sf_cblock_widen): for a block read often enough that
** widening it each time costs more than the room it saves (the store file iterator
** replaces the cache's entry with it). NULL when out of memory. */
kv_sf_cblock *kv_sf_cblock_wide_copy(const kv_sf_cblock *n, const kv_sf_cblock *wb);

/* Set b's shape (shape, shape_len) from its dictionary and value groups: the decoders call
** it on every block they decode (kv/sf/sf_point.c's too); a packed copy keeps it. */
void kv_sf_cblock_set_shape(kv_sf_cblock *b);
/* Free the decoder's memory; it is empty and reusable. */
void kv_sf_cdec_free(kv_sf_cdec *w);

/* Value group of cell ci. */
static inline uint32_t kv_sf_cblock_group(const kv_sf_cblock *b, uint32_t ci) {
  return kv_sf_pa_get(&b->type, ci) == KV_PUT ? (uint32_t)kv_sf_pa_get(&b->qual, ci)
                                              : b->nquals;
}

/* Timestamp of cell ci of row ri. */
static inline int64_t kv_sf_cblock_ts(const kv_sf_cblock *b, uint32_t ri, uint32_t ci) {
  return (int64_t)(kv_sf_pa_get(&b->ts, b->ts_per_row ? ri : ci) ^ 0x8000000000000000ull);
}

/* Row key of row r: a pointer into the block (klen == 0), or the key rebuilt in buf (at
** least max_key bytes). *len gets its length. */
static inline const uint8_t *kv_sf_cblock_key(const kv_sf_cblock *b, uint32_t r,
                                              uint8_t *buf, uint32_t *len) {
  if (b->klen) {
    uint32_t w = b->klen - b->lcp;
    if (b->lcp) memcpy(buf, b->prefix, b->lcp);
    if (w) memcpy(buf + b->lcp, b->keys + (size_t)r * w, w);
    *len = b->klen;
    return buf;
  }
  uint64_t o = kv_sf_pa_get(&b->key_off, r);
  *len = (uint32_t)(kv_sf_pa_get(&b->key_off, r + 1) - o);
  return b->keys + o;
}

/* kv_bytes_cmp without a library call: eight bytes at a time as big-endian numbers (the
** row keys compared in block and fence searches are a few dozen bytes). */
static inline int kv_sf_bytes_cmp(const uint8_t *a, size_t alen, const uint8_t *b, size_t blen) {
  size_t n = alen < blen ? alen : blen;
  for (; n >= 8; n -= 8, a += 8, b += 8) {
    uint64_t x, y;
    memcpy(&x, a, 8);
    memcpy(&y, b, 8);
    if (x != y) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
      x = __builtin_bswap64(x);
      y = __builtin_bswap64(y);
#endif
      return x < y ? -1 : 1;
    }
  }
  for (; n; n--, a++, b++)
    if (*a != *b) return *a < *b ? -1 : 1;
  return alen < blen ? -1 : alen > blen ? 1 : 0;
}

/* Compare row r's key with [t, t+tlen) (as kv_bytes_cmp). */
int kv_sf_cblock_key_cmp(const kv_sf_cblock *b, uint32_t r, const uint8_t *t, uint32_t tlen);

/* A reader's position in the value groups: ranks[g] = cells of group g before cell at,
** ranks[nquals + 1] = fixed-width value bytes before it (its value's offset in cvals). */
typedef struct kv_sf_rankpos {
  uint32_t *ranks;         /* nquals + 2 entries */
  size_t cap;              /* entries allocated */
  uint32_t at;             /* the cell the ranks are for; UINT32_MAX = not set */
} kv_sf_rankpos;

/* Move rp to cell ci of b (stepping from where it is when near, else from the nearest
** checkpoint below) and return ci's rank in its group. REQUIRES rp->ranks holds nquals + 2
** entries. */
uint32_t kv_sf_cblock_rank(const kv_sf_cblock *b, kv_sf_rankpos *rp, uint32_t ci);

#endif /* ROWAN_KV_SF_CBLOCK_H */
