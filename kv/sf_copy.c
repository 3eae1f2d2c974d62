/*
** kv/sf_copy.c: kv_sf_copy_blocks (kv/sf_copy.h), minor compaction's copy of whole blocks.
** The iterator already holds the block decoded (it loaded it to stand on its first cell):
** its rows give the bloom hashes and its last cell the writer's order state; the block's
** on-disk bytes are read again with pread (as whole-block loads are, so a compaction does
** not make the file's pages resident) and checked before they go to the output unchanged.
** Not here: choosing what to copy against the other inputs (kv/compact.c), the writer's
** index and bloom filter (kv/sf_write.c).
*/
#include "kv/sf_copy.h"

#include "kv/bloom.h"
#include "kv/sf_int.h"
#include "kv/sf_iter_int.h"

void kv_sf_copier_free(kv_sf_copier *c) {
  free(c->frame);
  free(c->hashes);
  free(c->key);
  memset(c, 0, sizeof *c);
}

/* Whether `it` stands on the first cell of its loaded block, decoded whole. */
static bool at_block_start(const sf_iter *it) {
  return it->valid && !it->partial && !it->proj && it->bi >= 0 && it->ci == 0 && it->b;
}

bool kv_sf_iter_at_block_start(kv_iter *it) { return at_block_start((sf_iter *)it); }

/* Read block bi's bytes into c->frame and check them. */
static int read_frame(kv_sf_copier *c, kv_sf_reader *r, uint32_t bi) {
  const kv_sf_index_entry *e = &r->index[bi];
  if (kv_sf_grow((void **)&c->frame, &c->frame_cap, e->size, 1))
    return kv_error(KV_ERR_NOMEM, "out of memory copying a block of store file %s", r->path);
  int rc = kv_sf_read_at(r, e->off, c->frame, e->size);
  if (rc) return rc;
  kv_sf_sections sec = {0};
  uint8_t how;
  const char *why = NULL;
  rc = kv_sf_frame_open(c->frame, e->size, e->raw, &sec, &how, &why);
  kv_sf_sections_free(&sec);
  if (rc == KV_ERR_CORRUPT)
    return kv_error(rc, "store file %s: block %u at offset %llu: %s", r->path, bi,
                    (unsigned long long)e->off, why);
  if (rc) return kv_error(rc, "out of memory copying a block of store file %s", r->path);
  return KV_OK;
}

/* Copy the loaded block of `it` (standing on its first cell) to w. */
static int copy_one(kv_sf_copier *c, kv_sf_writer *w, sf_iter *it) {
  const kv_sf_cblock *b = it->b;
  kv_sf_reader *r = it->r;
  uint32_t bi = (uint32_t)it->bi;
  if (kv_sf_grow((void **)&c->hashes, &c->hashes_cap, b->nrows, sizeof *c->hashes) ||
      kv_sf_grow((void **)&c->key, &c->key_cap, (size_t)b->max_key + 1, 1))
    return kv_error(KV_ERR_NOMEM, "out of memory copying a block of store file %s", r->path);
  uint32_t len = 0;
  const uint8_t *k = NULL;
  for (uint32_t i = 0; i < b->nrows; i++) {
    k = kv_sf_cblock_key(b, i, c->key, &len);
    c->hashes[i] = kv_bloom_hash(k, len);
  }
  kv_cell last = {0};
  uint32_t ci = b->ncells - 1, q = (uint32_t)kv_sf_pa_get(&b->qual, ci);
  last.row = k; /* the last row's key, from the loop */
  last.row_len = len;
  last.qual = b->dict + b->q_off[q];
  last.qual_len = b->q_len[q];
  last.ts = kv_sf_cblock_ts(b, b->nrows - 1, ci);
  last.seq = kv_sf_pa_get(&b->seq, ci);
  last.type = (uint8_t)kv_sf_pa_get(&b->type, ci);
  int rc = read_frame(c, r, bi);
  if (rc) return rc;
  const kv_sf_index_entry *e = &r->index[bi];
  kv_sf_framed f = {c->frame, e->size, e->raw, e->cells, e->rows, &e->first, &last, c->hashes};
  return kv_sf_writer_add_framed(w, &f);
}

int kv_sf_copy_blocks(kv_sf_copier *c, kv_sf_writer *w, kv_iter *base, const uint8_t *bound,
                      uint32_t bound_len, uint64_t *copied) {
  sf_iter *it = (sf_iter *)base;
  *copied = 0;
  while (at_block_start(it)) {
    const kv_sf_cblock *b = it->b;
    if (bound && kv_sf_cblock_key_cmp(b, b->nrows - 1, bound, bound_len) >= 0) break;
    int rc = copy_one(c, w, it);
    if (rc) return rc;
    (*copied)++;
    uint32_t next = (uint32_t)it->bi + 1;
    if (next >= it->r->nblocks) { /* past the file's end */
      it->valid = false;
      break;
    }
    base->ops->seek(base, &it->r->index[next].first);
    if (!base->ops->valid(base)) return base->ops->status(base);
  }
  return KV_OK;
}
