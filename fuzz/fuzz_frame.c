/*
** fuzz/fuzz_frame.c: libFuzzer target for a store-file block's framing (kv/sf/sf_frame.c,
** docs/FORMAT.md Part 2, "Data block on disk"), past the checksum: the input's first byte is
** the compression byte, the next four the raw size (little-endian, capped at 1 MiB), the rest
** the stored bytes; the target frames them with a matching checksum, so the section table and
** the lz4 data are what the fuzzer explores. Unframing must give KV_ERR_CORRUPT or a raw
** block of exactly the raw size; opening the frame and inflating each section on its own
** must agree with it byte for byte; and an accepted block framed again with its own cuts
** must unframe to the same bytes. A sectioned block is also decoded in part
** (kv_sf_cblock_decode_part, the groups wanted picked by the compression byte's high bits):
** what it decodes must agree with the whole decode (kv_sf_cblock_decode) of the raw block,
** and a part decode that wants every group succeeds only when the whole decode does.
** Never a crash or a read outside the input.
** Not here: the raw block's decoding (fuzz_block), whole files (fuzz_storefile).
*/
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "kv/util/coding.h"
#include "kv/sf/sf_cblock.h"
#include "kv/sf/sf_int.h"
#include "kv/util/status.h"

/* kv_sf_cpart's want: by the qualifier's first byte, against the mask in *ctx. */
static bool want(void *ctx, const uint8_t *qual, uint32_t len) {
  uint8_t m = *(const uint8_t *)ctx;
  return m == 0xff || ((m >> ((len ? qual[0] : 0) & 7)) & 1);
}

/* Decode raw block [raw, raw+len) of frame f (sections sec) whole and in part (groups by
** mask): the part decode must agree with the whole one wherever both succeed. */
static void check_part(const uint8_t *f, const kv_sf_sections *sec, const uint8_t *raw,
                       size_t len, uint8_t mask, uint32_t raw_size) {
  kv_sf_cdec whole = {0}, part = {0};
  const char *why = NULL;
  uint8_t *buf = malloc(raw_size ? raw_size : 1);
  if (!buf) return;
  int wrc = raw ? kv_sf_cblock_decode(&whole, raw, len, &why) : KV_ERR_CORRUPT;
  kv_sf_cpart pt = {f, sec, buf, want, &mask, 0};
  int prc = kv_sf_cblock_decode_part(&part, &pt, &why);
  if (prc != KV_OK && prc != KV_ERR_CORRUPT && prc != KV_ERR_NOMEM) abort();
  if (prc == KV_OK && pt.inflated > raw_size) abort();
  if (prc == KV_OK && mask == 0xff && wrc != KV_OK && wrc != KV_ERR_NOMEM) abort();
  if (prc == KV_OK && wrc == KV_OK) {
    const kv_sf_cblock *a = &whole.b, *b = &part.b;
    if (a->nrows != b->nrows || a->ncells != b->ncells || a->nquals != b->nquals ||
        a->max_seq != b->max_seq || a->min_ts != b->min_ts || a->max_ts != b->max_ts)
      abort();
    for (uint32_t i = 0; i < a->ncells; i++)
      if (kv_sf_pa_get(&a->qual, i) != kv_sf_pa_get(&b->qual, i) ||
          kv_sf_pa_get(&a->type, i) != kv_sf_pa_get(&b->type, i) ||
          kv_sf_pa_get(&a->seq, i) != kv_sf_pa_get(&b->seq, i))
        abort();
    for (uint32_t g = 0; g <= a->nquals; g++) {
      const kv_sf_cgroup *x = &a->groups[g], *y = &b->groups[g];
      if (x->count != y->count) abort();
      if (y->absent) {
        if (y->data || y->fixed || y->fw || !b->part || g == a->nquals) abort();
        continue;
      }
      if (x->fixed != y->fixed || x->width != y->width || x->data_len != y->data_len ||
          (x->data_len && memcmp(x->data, y->data, x->data_len)))
        abort();
      for (uint32_t k = 0; !x->fixed && k <= x->count; k++)
        if (kv_sf_pa_get(&x->voff, k) != kv_sf_pa_get(&y->voff, k)) abort();
    }
    kv_sf_cblock *pk = kv_sf_cblock_pack(&part); /* never of a block decoded in part */
    if (pk && b->part) abort();
    free(pk);
  }
  kv_sf_cdec_free(&whole);
  kv_sf_cdec_free(&part);
  free(buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 5) return 0;
  uint32_t raw_size = kv_get_u32le(data + 1) & 0xfffff;
  size_t stored = size - 5;
  size_t len = KV_SF_BLOCK_OVERHEAD + stored;
  uint8_t *f = malloc(len);
  if (!f) return 0;
  f[0] = data[0] & 3;
  kv_put_u32le(f + 1, raw_size);
  kv_put_u32le(f + 5, (uint32_t)stored);
  memcpy(f + KV_SF_BLOCK_HEADER, data + 5, stored);
  kv_put_u64le(f + KV_SF_BLOCK_HEADER + stored, XXH3_64bits(f, KV_SF_BLOCK_HEADER + stored));
  kv_sfbuf scratch = {0}, frame = {0}, scratch2 = {0};
  const uint8_t *raw = NULL, *raw2 = NULL;
  size_t raw_len = 0, raw_len2 = 0;
  int rc = kv_sf_unframe_block(f, len, raw_size, &scratch, &raw, &raw_len, "fuzz", 0);
  if (rc != KV_OK && rc != KV_ERR_CORRUPT && rc != KV_ERR_NOMEM) abort();
  kv_sf_sections sec = {0};
  uint8_t how = 0;
  const char *why = NULL;
  int orc = kv_sf_frame_open(f, len, raw_size, &sec, &how, &why);
  if (orc == KV_OK && sec.n) {
    uint8_t *part = malloc(raw_size ? raw_size : 1);
    int all = part != NULL;
    for (uint32_t k = 0; all && k < sec.n; k++)
      all = kv_sf_section_inflate(f, &sec, k, part, &why) == KV_OK;
    /* every section inflated on its own: the same bytes as the whole unframe */
    if (all && (rc != KV_OK || raw_len != raw_size || memcmp(part, raw, raw_size))) abort();
    if (!all && rc == KV_OK) abort();
    free(part);
    check_part(f, &sec, rc == KV_OK ? raw : NULL, raw_len, (uint8_t)(data[0] >> 2 | 0xc0),
               raw_size);
    check_part(f, &sec, rc == KV_OK ? raw : NULL, raw_len, 0xff, raw_size);
  } else if (orc == KV_ERR_CORRUPT && rc == KV_OK) {
    abort(); /* the frame checks are the same in both */
  }
  if (rc == KV_OK) {
    if (raw_len != raw_size) abort();
    uint32_t *cuts = NULL;
    size_t cap = 0, ncuts = 0;
    if (kv_sf_frame_cuts(f, len, &cuts, &cap, &ncuts) == KV_OK &&
        kv_sf_frame_block_cut(raw, raw_len, cuts, ncuts, KV_COMPRESSION_LZ4, &frame) == KV_OK) {
      if (kv_sf_unframe_block(frame.p, frame.len, raw_size, &scratch2, &raw2, &raw_len2, "fuzz",
                              0) != KV_OK || raw_len2 != raw_len || memcmp(raw2, raw, raw_len))
        abort();
    }
    free(cuts);
  }
  kv_sf_sections_free(&sec);
  kv_sfbuf_free(&scratch);
  kv_sfbuf_free(&scratch2);
  kv_sfbuf_free(&frame);
  free(f);
  return 0;
}
