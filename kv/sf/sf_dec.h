/*
** kv/sf/sf_dec.h: the "decimal-scaled" value group of a store file block (docs/FORMAT.md
** Part 2, "Values section", code KV_SFDEC_CODE; format version 3): a lossless byte transform
** of a group whose values are all 8 bytes. Each value, read as the order-preserving double
** encoding (8 bytes big-endian; the IEEE bits with the sign bit flipped when it is clear, all
** bits inverted when it is set), is a finite double x with x == (double)m / 10^k, bit for
** bit, for one k (0..KV_SFDEC_MAX_K) shared by the group and an integer m; the group stores
** k, the smallest m (base) and each m - base in w bytes (0..4), transposed in byte planes
** like a fixed-width group. The writer (kv_sfdec_try) keeps the form only when every value
** re-encodes to its own 8 bytes, so it holds for any 8-byte values that happen to fit
** (catalog DOUBLEs of a few decimals, mostly) and for nothing else: kv knows no SQL types.
** Readers parse the header (kv_sfdec_parse) and get a value back by rank (kv_sfdec_get) or
** every value at once as 8-byte values, transposed like a fixed-width group (the columnar
** scan) or side by side (a privately decoded block, kv_sf_cblock_decode) (kv_sfdec_expand).
** Not here: where groups lie in a block (kv/sf/sf_block.c writes them, the decoders find them).
*/
#ifndef ROWAN_KV_SF_DEC_H
#define ROWAN_KV_SF_DEC_H

#include <stddef.h>
#include <stdint.h>
#include "kv/sf/sf_int.h"

/* The group code: above every fixed-width code w + 1 (w <= KV_MAX_VALUE = 64 MiB, so codes
** stop at 2^26 + 1); a 4-byte varint (80 80 80 40). */
#define KV_SFDEC_CODE (1ull << 27)
#define KV_SFDEC_MAX_K 6u /* largest power of ten */
#define KV_SFDEC_MAX_W 4u /* largest offset width in bytes */

/* A parsed decimal-scaled group header. */
typedef struct kv_sfdec {
  uint32_t k;            /* power of ten: x = m / 10^k */
  uint32_t w;            /* bytes per offset (0..4) */
  int64_t base;          /* smallest m */
  const uint8_t *planes; /* count * w bytes: byte j of offset i at planes[j * count + i] */
  uint32_t count;        /* values */
} kv_sfdec;

/* Encode the cnt 8-byte values vals + cells[mem[i]].val_off (i < cnt) as a decimal-scaled
** group (code included) appended to o, when that form holds every value bit-exactly (each is
** re-encoded and compared) and is smaller than the fixed-width one (1 + 8 * cnt bytes).
** Returns 1 when appended, 0 when not (o unchanged), KV_ERR_NOMEM (negative) when out of
** memory. *scratch (cnt entries, grown; *scratch_cap counts them) is reused. */
int kv_sfdec_try(kv_sfbuf *o, const uint8_t *vals, const kv_sfb_cell *cells,
                 const uint32_t *mem, size_t cnt, int64_t **scratch, size_t *scratch_cap);

/* Parse the header after the code at p (count values): k, zigzag base, w and the planes,
** which must lie before lim. Returns the first byte after the group, or NULL with *why set
** (truncated header, k or w out of range, base beyond +-2^53, planes past the block). */
const uint8_t *kv_sfdec_parse(const uint8_t *p, const uint8_t *lim, uint32_t count,
                              kv_sfdec *h, const char **why);

/* The 8 bytes of value i (< h->count) into out. */
void kv_sfdec_get(const kv_sfdec *h, uint32_t i, uint8_t out[8]);

/* Every value into dst (8 * count bytes): transposed (byte j of value i at dst[j * count + i])
** when transposed, else whole one after another. */
void kv_sfdec_expand(const kv_sfdec *h, uint8_t *dst, int transposed);

/* Every value, value i at dst + i * stride (stride >= 8): a column of a row-major matrix. */
void kv_sfdec_expand_strided(const kv_sfdec *h, uint8_t *dst, size_t stride);

#endif /* ROWAN_KV_SF_DEC_H */
