/*
** kv/util/bloom.h: the bloom filter on row keys that every store file carries, so a point
** lookup can skip files that certainly do not hold a row (issue 8). Bits per key are
** chosen by the writer (10 by default: about 1% false positives); the probes use double
** hashing from one XXH3-64 of the key (Kirsch and Mitzenmacher). The filter is a plain
** byte string: docs/FORMAT.md Part 2, "Bloom filter". No file I/O here.
*/
#ifndef ROWAN_KV_BLOOM_H
#define ROWAN_KV_BLOOM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The hash a filter is built from and probed with: XXH3-64 of the key bytes. */
uint64_t kv_bloom_hash(const void *key, size_t len);

/* Build a filter over `n` key hashes (duplicates are fine) with `bits_per_key` bits each
** (0 = 10; at most 64). On KV_OK *out is a malloc'ed filter of *out_len bytes that the
** caller frees; on KV_ERR_NOMEM *out is NULL. A filter over no keys says "absent" to every
** probe. */
int kv_bloom_build(const uint64_t *hashes, size_t n, uint32_t bits_per_key, uint8_t **out,
                   size_t *out_len);

/* Check a filter's header against its length: true if `filter` is a well-formed filter. */
bool kv_bloom_valid(const uint8_t *filter, size_t len);

/* False if the key with hash `h` is certainly not in the set; true if it may be.
** REQUIRES: kv_bloom_valid(filter, len). */
bool kv_bloom_may_contain(const uint8_t *filter, size_t len, uint64_t h);

#endif /* ROWAN_KV_BLOOM_H */
