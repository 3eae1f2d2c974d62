/*
** kv/db/db_split.c: the automatic split of a region by size (kv_options.region_split_size;
** HBase's hbase.hregion.max.filesize; docs/KV_REGIONS.md). After each flush or
** compaction of a family, the background thread adds up the on-disk bytes of the family's
** store-file blocks per region (a block counts in the region of its first row); the first
** region past the setting is split in two at a middle key: the first row of the block at
** the half-way byte of its blocks in key order (a key strictly inside the region, or no
** split: a region of one huge row stays whole). The new boundary list is one SET_REGIONS
** record; then every family of the table gets the new regions, and each family with a
** file spanning the new boundary is asked for a minor compaction, which cuts it (HBase's
** daughters read their parent's files through reference files until a compaction rewrites
** them; here the file is read as it is until then, reads need no regions).
** Also here: a family's split points for parallel scans (kv_block_cut_points) and the sort
** and overlap check of its store files they share with the columnar aggregate
** (kv_sfh_sort_by_first_row).
** Not here: the region boundaries themselves (kv/db/db_region.c), the MANIFEST edit
** (kv/db/manifest_region.c).
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kv/db/db_impl.h"
#include "kv/sf/sf_int.h"
#include "kv/util/cell.h"
#include "kv/util/status.h"

typedef struct bwalk {
  kv_block_key *b; /* blocks seen (row: an offset into keys until the walk ends) */
  size_t n, cap;   /* count, room (one more than n: the entry after the last holds keys) */
  uint8_t *keys;   /* every first row, back to back (one allocation, not one per block) */
  size_t used, room; /* its bytes */
  bool sorted;     /* the rows came in key order (one file, or files that do not overlap) */
  bool nomem;      /* an allocation failed */
} bwalk;

static int take_block(void *ctx, const kv_file_block *fb) {
  bwalk *w = ctx;
  if (w->n + 1 >= w->cap) {
    size_t cap = w->cap ? w->cap * 2 : 256;
    kv_block_key *nb = realloc(w->b, cap * sizeof *nb);
    if (!nb) return w->nomem = true, 1;
    w->b = nb;
    w->cap = cap;
  }
  if (!w->keys || w->used + fb->first_row_len > w->room) {
    size_t room = w->room ? w->room * 2 : 4096;
    while (room < w->used + fb->first_row_len) room *= 2;
    uint8_t *nk = realloc(w->keys, room);
    if (!nk) return w->nomem = true, 1;
    w->keys = nk;
    w->room = room;
  }
  if (w->n && w->sorted) { /* against the previous row, still in the buffer */
    const kv_block_key *p = &w->b[w->n - 1];
    w->sorted = kv_bytes_cmp(w->keys + (uintptr_t)p->row, p->len, fb->first_row,
                             fb->first_row_len) <= 0;
  }
  if (fb->first_row_len) memcpy(w->keys + w->used, fb->first_row, fb->first_row_len);
  w->b[w->n++] = (kv_block_key){(uint8_t *)(uintptr_t)w->used, fb->first_row_len, fb->bytes};
  w->used += fb->first_row_len;
  return 0;
}

static int cmp_block_key(const void *a, const void *b) {
  const kv_block_key *x = a, *y = b;
  return kv_bytes_cmp(x->row, x->len, y->row, y->len);
}

void kv_block_keys_free(kv_block_key *b, size_t n) {
  if (b) free(b[n].row); /* the key bytes (kv_block_keys keeps them after the last entry) */
  free(b);
}

int kv_block_keys(kv_db *db, uint32_t family_id, kv_block_key **out, size_t *n) {
  bwalk w = {.sorted = true};
  int rc = kv_family_blocks(db, family_id, take_block, &w);
  if (w.nomem) rc = kv_error(KV_ERR_NOMEM, "out of memory listing the blocks of a family");
  if (rc == KV_OK && !w.b && !(w.b = malloc(sizeof *w.b)))
    rc = kv_error(KV_ERR_NOMEM, "out of memory listing the blocks of a family");
  if (rc != KV_OK) {
    free(w.b);
    free(w.keys);
    *out = NULL;
    *n = 0;
    return rc;
  }
  for (size_t i = 0; i < w.n; i++) w.b[i].row = w.keys + (uintptr_t)w.b[i].row;
  w.b[w.n] = (kv_block_key){w.keys, 0, 0}; /* freed by kv_block_keys_free */
  /* a compacted family's blocks come in key order: sorting them again cost a plan of a
     280,000-block family 30 ms (every scan cut into chunks asks, kv_be_split_points) */
  if (w.n > 1 && !w.sorted) qsort(w.b, w.n, sizeof *w.b, cmp_block_key);
  *out = w.b;
  *n = w.n;
  return KV_OK;
}

/* The cut of kv_block_cut_points over blocks b[0..n) sorted by first row (the blocks' list). */
static void cuts_of_list(const kv_block_key *b, size_t n, uint32_t max_chunks,
                         void (*each)(void *ctx, const uint8_t *key, uint32_t len), void *ctx) {
  uint64_t total = 0, acc = 0;
  for (size_t i = 0; i < n; i++) total += b[i].bytes;
  uint32_t given = 0;
  const kv_block_key *last = &b[0]; /* no split at the first key */
  for (size_t i = 1; i < n && given + 1 < max_chunks; i++) {
    acc += b[i - 1].bytes;
    /* cut at the boundary nearest to the end of chunk given+1: before block i when the
    ** target lies below the middle of block i */
    if ((acc + b[i].bytes / 2) * max_chunks < total * (given + 1)) continue;
    if (kv_bytes_cmp(b[i].row, b[i].len, last->row, last->len) <= 0) continue;
    each(ctx, b[i].row, b[i].len);
    last = &b[i];
    given++;
  }
}

static int by_first_row(const void *a, const void *b) {
  const kv_sf_reader *x = (*(kv_sfh *const *)a)->reader, *y = (*(kv_sfh *const *)b)->reader;
  uint32_t xl, yl;
  const uint8_t *xk = kv_sf_first_row(x, 0, &xl), *yk = kv_sf_first_row(y, 0, &yl);
  return kv_bytes_cmp(xk, xl, yk, yl);
}

bool kv_sfh_sort_by_first_row(kv_sfh **fs, uint32_t n) {
  if (n > 1) qsort(fs, n, sizeof *fs, by_first_row);
  for (uint32_t k = 1; k < n; k++) {
    const kv_sf_reader *p = fs[k - 1]->reader;
    uint32_t fl;
    const uint8_t *fk = kv_sf_first_row(fs[k]->reader, 0, &fl);
    if (kv_bytes_cmp(p->last_row, p->last_row_len, fk, fl) >= 0) return true;
  }
  return false;
}

/* The blocks before byte `at` of the family's data (files fs[0..nf) in key order, file k's
** data starting at base[k]): the first block (global index) whose middle is at or past it. */
static size_t block_at(kv_sfh *const *fs, const uint64_t *base, const size_t *first, uint32_t nf,
                       uint64_t at, uint32_t *file, uint32_t *blk) {
  uint32_t k = 0;
  while (k + 1 < nf && base[k + 1] <= at) k++;
  const kv_sf_reader *r = fs[k]->reader;
  uint64_t off0 = kv_sf_entry(r, 0).off;
  uint32_t lo = 0, hi = r->nblocks; /* first block whose middle reaches `at` */
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo) / 2;
    kv_sf_index_entry e = kv_sf_entry(r, mid);
    if (base[k] + (e.off - off0) + e.size / 2 >= at) hi = mid;
    else lo = mid + 1;
  }
  if (lo == r->nblocks && k + 1 < nf) { /* past this file's last middle: the next file's first */
    k++;
    lo = 0;
  }
  *file = k;
  *blk = lo;
  return first[k] + lo;
}

int kv_block_cut_points(kv_db *db, uint32_t family_id, uint32_t max_chunks,
                        void (*each)(void *ctx, const uint8_t *key, uint32_t len), void *ctx,
                        bool *listed) {
  if (listed) *listed = false;
  if (max_chunks < 2) return KV_OK;
  pthread_mutex_lock(&db->mu);
  kv_fam *f = kv_db_family(db, family_id);
  if (!f) {
    pthread_mutex_unlock(&db->mu);
    return kv_error(KV_ERR_NOTFOUND, "unknown family id %u", family_id);
  }
  uint32_t nf = 0;
  kv_sfh **fs = malloc((f->n_files ? f->n_files : 1) * sizeof *fs);
  uint64_t *base = malloc(((size_t)f->n_files + 1) * sizeof *base);
  size_t *first = malloc(((size_t)f->n_files + 1) * sizeof *first);
  if (!fs || !base || !first) {
    pthread_mutex_unlock(&db->mu);
    free(fs);
    free(base);
    free(first);
    return kv_error(KV_ERR_NOMEM, "out of memory cutting a family into chunks");
  }
  for (uint32_t i = 0; i < f->n_files; i++)
    if (f->files[i]->reader->nblocks) {
      fs[nf] = f->files[i];
      kv_sfh_ref(fs[nf++]); /* kept open (and their index valid) while read */
    }
  pthread_mutex_unlock(&db->mu);
  /* files that overlap: the blocks listed and sorted (kv_block_keys); else their data laid
     end to end in key order, each cut found by a binary search of one block index (a block
     of a store file's data starts where the one before it ends) */
  bool overlap = kv_sfh_sort_by_first_row(fs, nf);
  uint64_t total = 0;
  size_t nb = 0;
  for (uint32_t k = 0; k < nf; k++) {
    const kv_sf_reader *r = fs[k]->reader;
    kv_sf_index_entry e0 = kv_sf_entry(r, 0), el = kv_sf_entry(r, r->nblocks - 1);
    base[k] = total;
    first[k] = nb;
    total += el.off + el.size - e0.off;
    nb += r->nblocks;
  }
  base[nf] = total;
  first[nf] = nb;
  int rc = KV_OK;
  if (overlap) {
    if (listed) *listed = true;
    kv_block_key *b = NULL;
    size_t n = 0;
    rc = kv_block_keys(db, family_id, &b, &n);
    if (rc == KV_OK && n > 1) cuts_of_list(b, n, max_chunks, each, ctx);
    kv_block_keys_free(b, n);
  } else if (nb > 1) {
    const uint8_t *last = NULL; /* no split at the first key */
    uint32_t last_len = 0;
    last = kv_sf_first_row(fs[0]->reader, 0, &last_len);
    size_t prev = 0;
    for (uint32_t given = 0; given + 1 < max_chunks;) {
      uint32_t k, blk;
      /* the first block past chunk given+1's end (its middle at or past the target) */
      uint64_t at = (total * (given + 1) + max_chunks - 1) / max_chunks;
      size_t g = block_at(fs, base, first, nf, at, &k, &blk);
      if (g <= prev) { /* the list's walk: the block after the last cut */
        g = prev + 1;
        k = 0;
        while (k + 1 < nf && first[k + 1] <= g) k++;
        blk = (uint32_t)(g - first[k]);
      }
      if (g >= nb) break;
      uint32_t len;
      const uint8_t *key = kv_sf_first_row(fs[k]->reader, blk, &len);
      prev = g;
      if (kv_bytes_cmp(key, len, last, last_len) <= 0) continue; /* same row: the next */
      each(ctx, key, len);
      last = key;
      last_len = len;
      given++;
    }
  }
  for (uint32_t k = 0; k < nf; k++) kv_sfh_unref(fs[k]);
  free(fs);
  free(base);
  free(first);
  return rc;
}

/* The middle key of the first region of r past limit bytes: *at gets the region, *key the
** index of the block whose first row it is. false when no region needs (or allows) it. */
static bool pick_split(const kv_regions *r, const kv_block_key *b, size_t n, uint64_t limit,
                       uint32_t *at, size_t *key) {
  size_t lo = 0;
  for (uint32_t reg = 0; lo < n; reg++) {
    size_t hi = lo; /* blocks [lo, hi) lie in region reg (sorted by first row) */
    uint64_t total = 0;
    while (hi < n && kv_regions_find(r, b[hi].row, b[hi].len) == reg) total += b[hi++].bytes;
    if (hi == lo) continue; /* no block in this region */
    if (total > limit) {
      uint64_t acc = 0;
      for (size_t i = lo; i < hi; i++) {
        if (acc * 2 >= total && kv_bytes_cmp(b[i].row, b[i].len, b[lo].row, b[lo].len) > 0) {
          *at = reg;
          *key = i;
          return true;
        }
        acc += b[i].bytes;
      }
    }
    lo = hi;
  }
  return false;
}

/* Does store file h hold rows on both sides of key? */
static bool spans(const kv_sfh *h, const uint8_t *key, uint32_t len) {
  const uint8_t *first, *last;
  uint32_t first_len, last_len;
  kv_sf_key_range(h->reader, &first, &first_len, &last, &last_len);
  return first && kv_bytes_cmp(first, first_len, key, len) < 0 &&
         kv_bytes_cmp(last, last_len, key, len) >= 0;
}

int kv_db_maybe_split(kv_db *db, kv_fam *f) {
  uint64_t limit = db->opts.region_split_size;
  if (!limit || db->opts.read_only) return KV_OK;
  bwalk w = {0};
  int rc = kv_block_keys(db, f->id, &w.b, &w.n);
  pthread_mutex_lock(&db->mu);
  kv_regions *r = f->regions;
  kv_regions_ref(r);
  pthread_mutex_unlock(&db->mu);
  uint32_t at = 0;
  size_t k = 0;
  if (rc == KV_OK && pick_split(r, w.b, w.n, limit, &at, &k)) {
    /* the boundaries with the new one inserted before boundary `at` */
    uint32_t n_old = r ? r->n : 0;
    const uint8_t **keys = malloc((n_old + 1) * sizeof *keys);
    uint32_t *lens = malloc((n_old + 1) * sizeof *lens);
    uint8_t *enc = NULL;
    uint32_t enc_len = 0;
    if (!keys || !lens) rc = kv_error(KV_ERR_NOMEM, "region split: out of memory");
    for (uint32_t i = 0, o = 0; rc == KV_OK && i <= n_old; i++) {
      if (i == at) { keys[i] = w.b[k].row; lens[i] = w.b[k].len; continue; }
      keys[i] = r->keys[o];
      lens[i] = r->lens[o++];
    }
    if (rc == KV_OK) rc = kv_regions_encode(keys, lens, n_old + 1, &enc, &enc_len);
    free(keys);
    free(lens);
    if (rc == KV_OK) {
      kv_edit e;
      memset(&e, 0, sizeof e);
      e.kind = KV_EDIT_SET_REGIONS;
      e.table_id = f->table_id;
      e.bounds = enc;
      e.bounds_len = enc_len;
      e.n_bounds = n_old + 1;
      rc = kv_manifest_apply(db->man, &db->ver, &e, 1);
    }
    free(enc);
    if (rc == KV_OK) {
      pthread_mutex_lock(&db->mu);
      rc = kv_db_install_regions(db, f->table_id);
      for (uint32_t i = 0; i < db->n_fam_slots; i++) { /* cut the files that span it */
        kv_fam *g = kv_db_family(db, i);
        if (!g || g->table_id != f->table_id || g->compact_req) continue;
        for (uint32_t j = 0; j < g->n_files; j++)
          if (spans(g->files[j], w.b[k].row, w.b[k].len)) { g->compact_req = 1; break; }
      }
      db->stat_region_splits++;
      pthread_cond_signal(&db->bg_cv);
      pthread_mutex_unlock(&db->mu);
    }
  }
  kv_regions_unref(r);
  kv_block_keys_free(w.b, w.n);
  return rc;
}
