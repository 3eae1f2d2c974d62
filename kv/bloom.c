/*
** kv/bloom.c: building and probing the row-key bloom filter of kv/bloom.h.
**
** Layout (docs/FORMAT.md Part 2, "Bloom filter"): u8 k (probes, 1..30), u32 LE nbits,
** then ceil(nbits / 8) bytes of bits, bit i at byte i / 8, mask 1 << (i % 8). Probe j of a
** key with hash h sets bit (a + j * b) mod nbits where a is the low and b the high 32 bits
** of h (b forced odd so the probes do not collapse). nbits = 0 is the empty filter.
*/
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>
#include "kv/bloom.h"
#include "kv/coding.h"
#include "kv/kv.h"

#define BLOOM_HEADER 5u

uint64_t kv_bloom_hash(const void *key, size_t len) { return XXH3_64bits(key, len); }

int kv_bloom_alloc(uint64_t n, uint32_t bits_per_key, uint8_t **out, size_t *out_len) {
  *out = NULL;
  *out_len = 0;
  if (bits_per_key == 0) bits_per_key = 10;
  if (bits_per_key > 64) bits_per_key = 64;
  uint64_t nbits = n > 0xFFFFFFFFull ? 0xFFFFFFF8ull : n * bits_per_key;
  if (n > 0 && nbits < 64) nbits = 64;               /* tiny sets: keep the rate sane */
  if (nbits > 0xFFFFFFF8ull) nbits = 0xFFFFFFF8ull;  /* fits the u32 header */
  int k = (int)lround((double)bits_per_key * 0.6931471805599453); /* ln 2 */
  if (k < 1) k = 1;
  if (k > 30) k = 30;
  size_t nbytes = (size_t)((nbits + 7) / 8);
  uint8_t *f = calloc(1, BLOOM_HEADER + nbytes);
  if (!f) return KV_ERR_NOMEM;
  f[0] = (uint8_t)k;
  kv_put_u32le(f + 1, (uint32_t)nbits);
  *out = f;
  *out_len = BLOOM_HEADER + nbytes;
  return KV_OK;
}

void kv_bloom_add(uint8_t *filter, uint64_t h) {
  int k = filter[0];
  uint64_t nbits = kv_get_u32le(filter + 1);
  if (nbits == 0) return;
  uint8_t *bits = filter + BLOOM_HEADER;
  uint64_t a = h & 0xFFFFFFFFu, b = (h >> 32) | 1u;
  for (int j = 0; j < k; j++) {
    uint64_t bit = (a + (uint64_t)j * b) % nbits;
    bits[bit >> 3] |= (uint8_t)(1u << (bit & 7));
  }
}

int kv_bloom_build(const uint64_t *hashes, size_t n, uint32_t bits_per_key, uint8_t **out,
                   size_t *out_len) {
  int rc = kv_bloom_alloc(n, bits_per_key, out, out_len);
  if (rc) return rc;
  for (size_t i = 0; i < n; i++) kv_bloom_add(*out, hashes[i]);
  return KV_OK;
}

bool kv_bloom_valid(const uint8_t *filter, size_t len) {
  if (len < BLOOM_HEADER) return false;
  uint32_t k = filter[0];
  uint64_t nbits = kv_get_u32le(filter + 1);
  if (k < 1 || k > 30) return false;
  return len == BLOOM_HEADER + (nbits + 7) / 8;
}

bool kv_bloom_may_contain(const uint8_t *filter, size_t len, uint64_t h) {
  (void)len;
  int k = filter[0];
  uint64_t nbits = kv_get_u32le(filter + 1);
  if (nbits == 0) return false;
  const uint8_t *bits = filter + BLOOM_HEADER;
  uint64_t a = h & 0xFFFFFFFFu, b = (h >> 32) | 1u;
  for (int j = 0; j < k; j++) {
    uint64_t bit = (a + (uint64_t)j * b) % nbits;
    if (!(bits[bit >> 3] & (1u << (bit & 7)))) return false;
  }
  return true;
}
