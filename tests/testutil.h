/*
** tests/testutil.h: small header-only helpers shared by Rowan's cmocka tests: the test
** scale factor (ROWAN_TEST_SCALE, e.g. 0.25 under sanitizers), a seeded PRNG whose seed is
** printed so a failure can be reproduced (ROWAN_SEED overrides it), the data folder, and
** a DOUBLE's order-preserving bytes for tests below the catalog.
*/
#ifndef ROWAN_TESTUTIL_H
#define ROWAN_TESTUTIL_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Scale an operation count by ROWAN_TEST_SCALE (default 1.0), never below `min`. */
static inline uint64_t tu_scaled(uint64_t n, uint64_t min) {
  const char *s = getenv("ROWAN_TEST_SCALE");
  double f = s ? atof(s) : 1.0;
  if (f <= 0) f = 1.0;
  uint64_t r = (uint64_t)((double)n * f);
  return r < min ? min : r;
}

/* The seed for a randomized test: ROWAN_SEED if set, else from the clock; printed. */
static inline uint64_t tu_seed(const char *test) {
  const char *s = getenv("ROWAN_SEED");
  uint64_t seed = s ? strtoull(s, NULL, 0) : (uint64_t)time(NULL) ^ ((uint64_t)clock() << 20);
  fprintf(stderr, "[%s] seed %llu (rerun with ROWAN_SEED=%llu)\n", test,
          (unsigned long long)seed, (unsigned long long)seed);
  return seed;
}

/* splitmix64: a small, good PRNG. */
static inline uint64_t tu_rand(uint64_t *state) {
  uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}
static inline uint64_t tu_below(uint64_t *state, uint64_t n) { return n ? tu_rand(state) % n : 0; }

/* The project's data folder (ROWAN_DATA_DIR, set by CTest). */
static inline const char *tu_data_dir(void) {
  const char *d = getenv("ROWAN_DATA_DIR");
  return d ? d : "data";
}

/* The order-preserving 8 bytes of x (the catalog's DOUBLE encoding, written here from its
** description: IEEE bits big-endian, sign bit flipped for positives, all bits inverted for
** negatives), for kv tests that write what a DOUBLE column holds. */
static inline void tu_enc_double(double x, uint8_t out[8]) {
  uint64_t b;
  memcpy(&b, &x, 8);
  b = (b >> 63) ? ~b : b ^ (1ull << 63);
  for (int i = 7; i >= 0; i--) { out[i] = (uint8_t)b; b >>= 8; }
}

#endif /* ROWAN_TESTUTIL_H */
