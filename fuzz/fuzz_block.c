/*
** fuzz/fuzz_block.c: libFuzzer target for the store-file block decoder. The input is taken
** as a raw (already decompressed, checksum-verified) block, the bytes a damaged or hostile
** file could present after its checksum matched. Decoding must either fail with
** KV_ERR_CORRUPT or give cells that can all be read within the input; never crash or read
** out of bounds. The compact decoder the block cache uses (kv/sf/sf_cblock.h) must accept or
** refuse exactly the same inputs, and pack what it accepts. The point decoder
** (kv/sf/sf_point.h) is run on the same input for several keys and stop keys (rows of the
** block, one taken from the input, the empty key, one above all; a few rows, a range's rows
** up to its stop key, the block's rest): it must never read outside the input, and
** on every input the whole decoder accepts it must accept too and give the same cells for
** the rows it returns (the first row at or above the key, when the block's keys are in
** order). It does not exercise framing or checksums (fuzz_storefile does).
*/
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kv/sf/sf_cblock.h"
#include "kv/sf/sf_int.h"
#include "kv/sf/sf_point.h"

/* Whether cell ci (row ri) of the point decoder's block equals w (every field, the value
** found through the rank cursor). */
static int same_cell(const kv_sf_cblock *b, kv_sf_rankpos *rp, uint32_t ri, uint32_t ci,
                     uint8_t *kbuf, const kv_cell *w) {
  uint32_t kl;
  const uint8_t *k = kv_sf_cblock_key(b, ri, kbuf, &kl);
  if (kl != w->row_len || (kl && memcmp(k, w->row, kl))) return 0;
  uint32_t q = (uint32_t)kv_sf_pa_get(&b->qual, ci);
  if (q >= b->nquals || b->q_len[q] != w->qual_len ||
      (w->qual_len && memcmp(b->dict + b->q_off[q], w->qual, w->qual_len)))
    return 0;
  if (kv_sf_cblock_ts(b, ri, ci) != w->ts || kv_sf_pa_get(&b->seq, ci) != w->seq ||
      kv_sf_pa_get(&b->type, ci) != w->type)
    return 0;
  const kv_sf_cgroup *g = &b->groups[kv_sf_cblock_group(b, ci)];
  uint32_t rank = kv_sf_cblock_rank(b, rp, ci);
  if (rank >= g->count) return 0;
  const uint8_t *v;
  uint32_t vl;
  if (g->fixed) {
    v = b->cvals + rp->ranks[b->nquals + 1];
    vl = g->width;
  } else {
    uint64_t o = kv_sf_pa_get(&g->voff, rank);
    v = g->data + o;
    vl = (uint32_t)(kv_sf_pa_get(&g->voff, rank + 1) - o);
  }
  return vl == w->value_len && (vl == 0 || memcmp(v, w->value, vl) == 0);
}

/* The point decoder for key [t, t+tl): bounded always; when d (the whole decoder's result
** of the same input) is given, it must agree with it. */
static void point_check(kv_sf_pdec *p, const uint8_t *data, size_t size, const kv_sf_dblock *d,
                        const uint8_t *t, uint32_t tl, const uint8_t *stop, uint32_t stop_len,
                        uint32_t want) {
  const char *why = NULL;
  int rc = kv_sf_point_decode_to(p, data, size, t, tl, stop, stop_len, want, &why);
  if (!d) return;
  if (rc != KV_OK) __builtin_trap(); /* the whole decoder accepted the block */
  if (p->block_rows != d->nrows || p->block_cells != d->ncells || p->first_row > d->nrows)
    __builtin_trap();
  uint32_t R = p->first_row, sorted = 1, lin = 0;
  for (uint32_t r = 1; r < d->nrows && sorted; r++)
    sorted = kv_bytes_cmp(d->keys + d->row_off[r - 1], d->row_off[r] - d->row_off[r - 1],
                          d->keys + d->row_off[r], d->row_off[r + 1] - d->row_off[r]) < 0;
  while (lin < d->nrows && kv_bytes_cmp(d->keys + d->row_off[lin],
                                        d->row_off[lin + 1] - d->row_off[lin], t, tl) < 0)
    lin++;
  if (sorted && lin != R) __builtin_trap();
  const kv_sf_cblock *b = &p->b;
  uint32_t m = 0; /* want rows, up to and including the first at or above stop */
  while (R + m < d->nrows && m < want) {
    m++;
    if (stop && kv_bytes_cmp(d->keys + d->row_off[R + m - 1],
                             d->row_off[R + m] - d->row_off[R + m - 1], stop, stop_len) >= 0)
      break;
  }
  if (b->nrows != m) __builtin_trap();
  if (m == 0) return;
  uint32_t c0 = d->row_first[R];
  if (b->ncells != d->row_first[R + m] - c0) __builtin_trap();
  kv_sf_rankpos rp;
  memset(&rp, 0, sizeof rp);
  rp.at = UINT32_MAX;
  uint8_t *kbuf = malloc((size_t)b->max_key + 1);
  if (kv_sf_grow((void **)&rp.ranks, &rp.cap, (size_t)b->nquals + 2, 4) || !kbuf) {
    free(kbuf);
    free(rp.ranks);
    return;
  }
  for (uint32_t r = 0, ci = 0; r < m; r++)
    for (; ci < d->row_first[R + r + 1] - c0; ci++) {
      kv_cell w;
      kv_sf_dblock_cell(d, R + r, c0 + ci, &w);
      if (kv_sf_pa_get(&b->row_first, r) != d->row_first[R + r] - c0 ||
          !same_cell(b, &rp, r, ci, kbuf, &w))
        __builtin_trap();
    }
  free(kbuf);
  free(rp.ranks);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  kv_sf_dblock d;
  memset(&d, 0, sizeof d);
  const char *why = NULL;
  int rc = kv_sf_block_decode(&d, data, size, &why);
  kv_sf_cdec w;
  memset(&w, 0, sizeof w);
  const char *cwhy = NULL;
  int crc = kv_sf_cblock_decode(&w, data, size, &cwhy);
  if ((rc == KV_OK) != (crc == KV_OK)) __builtin_trap(); /* the two decoders disagree */
  if (crc == KV_OK) free(kv_sf_cblock_pack(&w));
  kv_sf_cdec_free(&w);
  if (rc == KV_OK) {
    volatile uint64_t sink = 0;
    for (uint32_t r = 0; r < d.nrows; r++) {
      for (uint32_t c = d.row_first[r]; c < d.row_first[r + 1]; c++) {
        kv_cell cell;
        kv_sf_dblock_cell(&d, r, c, &cell);
        for (uint32_t i = 0; i < cell.row_len; i++) sink += cell.row[i];
        for (uint32_t i = 0; i < cell.qual_len; i++) sink += cell.qual[i];
        for (uint32_t i = 0; i < cell.value_len; i++) sink += cell.value[i];
      }
    }
    (void)sink;
  }
  /* the point decoder, for keys of the block's rows and others */
  kv_sf_pdec p;
  memset(&p, 0, sizeof p);
  const kv_sf_dblock *ok = rc == KV_OK ? &d : NULL;
  static const uint8_t high[16] = {0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF,
                                   0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF};
  point_check(&p, data, size, ok, (const uint8_t *)"", 0, NULL, 0, 2);
  point_check(&p, data, size, ok, high, sizeof high, NULL, 0, 1);
  point_check(&p, data, size, ok, data, size < 12 ? (uint32_t)size : 12, NULL, 0, 3);
  /* range reads: no stop (the block's rest), a stop from the input's bytes, above all */
  point_check(&p, data, size, ok, (const uint8_t *)"", 0, NULL, 0, UINT32_MAX);
  point_check(&p, data, size, ok, (const uint8_t *)"", 0, data + size / 2,
              size - size / 2 < 12 ? (uint32_t)(size - size / 2) : 12, UINT32_MAX);
  point_check(&p, data, size, ok, data, size < 6 ? (uint32_t)size : 6, high, sizeof high, 40);
  if (rc == KV_OK)
    for (uint32_t r = 0; r < d.nrows; r += 1 + d.nrows / 8) {
      const uint8_t *k = d.keys + d.row_off[r];
      uint32_t kl = d.row_off[r + 1] - d.row_off[r];
      point_check(&p, data, size, ok, k, kl, NULL, 0, 1 + r % 4);
      uint32_t s2 = r + 1 + r % 7 < d.nrows ? r + 1 + r % 7 : d.nrows - 1; /* a later row */
      point_check(&p, data, size, ok, k, kl, d.keys + d.row_off[s2],
                  d.row_off[s2 + 1] - d.row_off[s2], UINT32_MAX);
    }
  kv_sf_pdec_free(&p);
  kv_sf_dblock_free(&d);
  return 0;
}
