/*
** kv/util/bloom.c: building and probing the row-key bloom filter of kv/util/bloom.h.
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
#include "kv/util/bloom.h"
#include "kv/util/coding.h"
#include "kv/kv.h"

#define BLOOM_HEADER 5u

uint64_t kv_bloom_hash(const void *key, size_t len) { return XXH3_64bits(key, len); }

/* An empty filter sized for n keys (kv_bloom_build's size). KV_OK or KV_ERR_NOMEM. */
static int bloom_alloc(uint64_t n, uint32_t bits_per_key, uint8_t **out, size_t *out_len) {
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

/* Probe j of hash h is bit (a + j * b) mod nbits (a + j * b < 2^37: no overflow), which is
** also (a mod nbits + j * (b mod nbits)) mod nbits: two divisions a key, then additions. */
static inline void probe_start(uint64_t h, uint64_t nbits, uint64_t *x, uint64_t *step) {
  *x = (h & 0xFFFFFFFFu) % nbits;
  *step = ((h >> 32) | 1u) % nbits;
}

/* Set the bits of the keys with hashes h[0..n), the filter's bytes of later keys fetched
** ahead. */
static void bloom_add_many(uint8_t *filter, const uint64_t *h, size_t n) {
  int k = filter[0];
  uint64_t nbits = kv_get_u32le(filter + 1);
  if (nbits == 0) return;
  uint8_t *bits = filter + BLOOM_HEADER;
  enum { AHEAD = 8 }; /* keys ahead whose bytes are fetched (a large filter misses the cache
                      ** on every probe) */
  for (size_t i = 0; i < n; i++) {
    uint64_t x, step;
    if (i + AHEAD < n) {
      probe_start(h[i + AHEAD], nbits, &x, &step);
      for (int j = 0; j < k; j++) {
        __builtin_prefetch(&bits[x >> 3], 1);
        x += step;
        if (x >= nbits) x -= nbits;
      }
    }
    probe_start(h[i], nbits, &x, &step);
    for (int j = 0; j < k; j++) {
      bits[x >> 3] |= (uint8_t)(1u << (x & 7));
      x += step;
      if (x >= nbits) x -= nbits;
    }
  }
}

int kv_bloom_build(const uint64_t *hashes, size_t n, uint32_t bits_per_key, uint8_t **out,
                   size_t *out_len) {
  int rc = bloom_alloc(n, bits_per_key, out, out_len);
  if (rc) return rc;
  bloom_add_many(*out, hashes, n);
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
  uint64_t x, step;
  probe_start(h, nbits, &x, &step);
  for (int j = 0; j < k; j++) {
    if (!(bits[x >> 3] & (1u << (x & 7)))) return false;
    x += step;
    if (x >= nbits) x -= nbits;
  }
  return true;
}
