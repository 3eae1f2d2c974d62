/*
** tests/kv/test_lz4dec.c: Rowan's lz4 block decoder (kv/util/lz4dec.c), which every store file
** read goes through, against liblz4's: on what LZ4_compress_default writes for inputs of the
** shapes store file blocks have (runs of one byte, short periods, transposed sensor values,
** noise, long literal runs, lengths that need extension bytes) it gives exactly the bytes
** liblz4 gives; it refuses what cannot decode to exactly the size asked (every truncation, a
** size off by one, an offset of 0 or before the output's start, output past the end); and on
** random bytes and damaged streams, whatever liblz4 accepts it accepts with the same bytes
** (but a match at offset 0, which the format calls corrupt and liblz4 lets through).
** Buffers are allocated at their exact sizes so ASan sees any read or write past them.
** Seeded: the seed is printed; ROWAN_SEED reruns it. Not here: framing (test_sf_frame),
** whole files (test_sf).
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <lz4.h>

#include "kv/util/lz4dec.h"
#include "testutil.h"

/* Fill [p, p+n) in one of the shapes store file blocks have. */
static void shape(uint8_t *p, size_t n, int kind, uint64_t *st) {
  switch (kind) {
  case 0: memset(p, 0, n); break;                               /* zero deltas, types, seqs */
  case 1:                                                       /* a period of 2..20 bytes */
  {
    size_t per = 2 + tu_below(st, 19);
    uint8_t pat[20];
    for (size_t i = 0; i < per; i++) pat[i] = (uint8_t)tu_rand(st);
    for (size_t i = 0; i < n; i++) p[i] = pat[i % per];
    break;
  }
  case 2:                                                       /* noise: literals only */
    for (size_t i = 0; i < n; i++) p[i] = (uint8_t)tu_rand(st);
    break;
  case 3: /* eight-byte sensor values, transposed: runs of high bytes, noisy low ones */
  {
    size_t cnt = n / 8;
    int64_t v = 1000;
    for (size_t r = 0; r < cnt; r++) {
      v += (int64_t)tu_below(st, 9) - 4;
      for (size_t b = 0; b < 8; b++) p[b * cnt + r] = (uint8_t)((uint64_t)v >> (8 * (7 - b)));
    }
    for (size_t i = cnt * 8; i < n; i++) p[i] = 0;
    break;
  }
  default: /* runs of random lengths and periods between noise */
    for (size_t i = 0; i < n;) {
      size_t run = 1 + tu_below(st, tu_below(st, 4) ? 40 : 600), per = 1 + tu_below(st, 17);
      for (size_t j = 0; j < run && i < n; j++, i++)
        p[i] = j < per || tu_below(st, 50) == 0 ? (uint8_t)tu_rand(st) : p[i - per];
    }
  }
}

/* Compress [raw, raw+n) with liblz4; the compressed bytes in an exact-size buffer. */
static uint8_t *compress(const uint8_t *raw, size_t n, size_t *out_len) {
  int bound = LZ4_compressBound((int)n);
  uint8_t *tmp = malloc((size_t)bound + 1);
  assert_non_null(tmp);
  int c = LZ4_compress_default((const char *)raw, (char *)tmp, (int)n, bound);
  assert_true(c > 0);
  uint8_t *z = malloc((size_t)c);
  assert_non_null(z);
  memcpy(z, tmp, (size_t)c);
  free(tmp);
  *out_len = (size_t)c;
  return z;
}

static void test_same_as_liblz4(void **state) {
  (void)state;
  uint64_t st = tu_seed("test_same_as_liblz4");
  static const size_t sizes[] = {0, 1, 4, 12, 13, 15, 16, 17, 31, 64, 270, 4096, 22000, 65536,
                                 70000};
  for (size_t si = 0; si < sizeof sizes / sizeof *sizes; si++)
    for (int kind = 0; kind < 5; kind++)
      for (int rep = 0; rep < 4; rep++) {
        size_t n = sizes[si];
        uint8_t *raw = malloc(n ? n : 1), *a = malloc(n ? n : 1), *b = malloc(n ? n : 1);
        assert_true(raw && a && b);
        shape(raw, n, kind, &st);
        size_t zl = 0;
        uint8_t *z = compress(raw, n, &zl);
        int m = LZ4_decompress_safe((const char *)z, (char *)a, (int)zl, (int)n);
        assert_int_equal(m, (int)n);
        assert_true(kv_lz4_decode(z, zl, b, n));
        if (n) assert_memory_equal(a, raw, n);
        if (n) assert_memory_equal(b, raw, n);
        /* one byte short of room, or a byte more asked for: refused */
        if (n) assert_false(kv_lz4_decode(z, zl, b, n - 1));
        uint8_t *big = malloc(n + 1);
        assert_non_null(big);
        assert_false(kv_lz4_decode(z, zl, big, n + 1));
        /* every truncation: refused */
        for (size_t cut = 0; cut < zl; cut += 1 + (zl > 200 ? zl / 97 : 0)) {
          uint8_t *t = malloc(cut ? cut : 1);
          assert_non_null(t);
          memcpy(t, z, cut);
          assert_false(kv_lz4_decode(t, cut, b, n));
          free(t);
        }
        free(big);
        free(z);
        free(raw);
        free(a);
        free(b);
      }
}

static void test_refuses_bad_streams(void **state) {
  (void)state;
  uint8_t out[64];
  /* an empty stream, and the one-byte stream of zero bytes */
  assert_false(kv_lz4_decode((const uint8_t *)"", 0, out, 0));
  assert_true(kv_lz4_decode((const uint8_t *)"\x00", 1, out, 0));
  /* "abcd" literals then a match at offset 0: refused; at offset 5 (before the start):
     refused; at offset 4, 4 bytes: "abcdabcd" */
  static const uint8_t off0[] = {0x40, 'a', 'b', 'c', 'd', 0x00, 0x00, 0x00};
  static const uint8_t off5[] = {0x40, 'a', 'b', 'c', 'd', 0x05, 0x00, 0x00};
  static const uint8_t off4[] = {0x40, 'a', 'b', 'c', 'd', 0x04, 0x00, 0x00};
  assert_false(kv_lz4_decode(off0, sizeof off0, out, 8));
  assert_false(kv_lz4_decode(off5, sizeof off5, out, 8));
  assert_true(kv_lz4_decode(off4, sizeof off4, out, 8));
  assert_memory_equal(out, "abcdabcd", 8);
  /* a match at offset 1 of 4 + 15 + 3 bytes (an extended length): one byte repeated */
  static const uint8_t run[] = {0x1f, 'z', 0x01, 0x00, 0x03, 0x00};
  assert_true(kv_lz4_decode(run, sizeof run, out, 23));
  for (int i = 0; i < 23; i++) assert_int_equal(out[i], 'z');
  /* the match runs past the output: refused, whatever room the buffer has */
  assert_false(kv_lz4_decode(run, sizeof run, out, 22));
  /* a literal length that promises more bytes than the input holds */
  static const uint8_t longlit[] = {0xf0, 0xff, 0xff, 0x10, 'x'};
  assert_false(kv_lz4_decode(longlit, sizeof longlit, out, sizeof out));
  /* an extension that never ends (all 255 to the input's end) */
  static const uint8_t noend[] = {0xf0, 0xff, 0xff};
  assert_false(kv_lz4_decode(noend, sizeof noend, out, sizeof out));
  /* input after the output is full: refused */
  static const uint8_t extra[] = {0x40, 'a', 'b', 'c', 'd', 0x04, 0x00, 0x10, 'e'};
  assert_false(kv_lz4_decode(extra, sizeof extra, out, 8));
}

/* Whether a stream's sequences (walked as far as they parse) hold a match at offset 0, which
** the lz4 format calls corrupt: liblz4's decoder accepts it (copying output bytes onto
** themselves), ours refuses it. */
static bool zero_offset(const uint8_t *z, size_t zl) {
  size_t i = 0;
  while (i < zl) {
    unsigned t = z[i++];
    size_t ll = t >> 4;
    if (ll == 15)
      for (unsigned x = 255; x == 255 && i < zl; ll += x) x = z[i++];
    i += ll;
    if (i + 2 > zl) return false;
    if (z[i] == 0 && z[i + 1] == 0) return true;
    i += 2;
    if ((t & 15) == 15)
      for (unsigned x = 255; x == 255 && i < zl;) x = z[i++];
  }
  return false;
}

static void test_random_bytes_like_liblz4(void **state) {
  (void)state;
  uint64_t st = tu_seed("test_random_bytes_like_liblz4");
  uint64_t agreed = 0;
  enum { CAP = 4096 };
  uint8_t *wide = malloc(CAP);
  assert_non_null(wide);
  for (int it = 0; it < 100000; it++) {
    size_t zl = 0;
    uint8_t *z;
    if (it & 1) { /* random bytes, small tokens and offsets so some streams decode */
      zl = 1 + tu_below(&st, 24);
      z = malloc(zl);
      assert_non_null(z);
      for (size_t i = 0; i < zl; i++)
        z[i] = (uint8_t)(tu_below(&st, 3) ? tu_below(&st, 0x60) : tu_rand(&st));
    } else { /* a real stream with a byte or two changed */
      size_t rn = 1 + tu_below(&st, 600);
      uint8_t raw[600];
      shape(raw, rn, (int)tu_below(&st, 5), &st);
      z = compress(raw, rn, &zl);
      for (uint64_t k = 1 + tu_below(&st, 2); k; k--) z[tu_below(&st, zl)] = (uint8_t)tu_rand(&st);
    }
    /* what liblz4 makes of it with room to spare, then with exactly that room */
    int m = LZ4_decompress_safe((const char *)z, (char *)wide, (int)zl, CAP);
    if (m >= 0) {
      size_t n = (size_t)m;
      uint8_t *a = malloc(n ? n : 1), *b = malloc(n ? n : 1);
      assert_true(a && b);
      if (LZ4_decompress_safe((const char *)z, (char *)a, (int)zl, (int)n) == m) {
        if (zero_offset(z, zl)) { /* liblz4 copies the output onto itself; we refuse */
          assert_false(kv_lz4_decode(z, zl, b, n));
        } else {
          assert_true(kv_lz4_decode(z, zl, b, n));
          if (n) assert_memory_equal(a, b, n);
          agreed++;
        }
      }
      free(a);
      free(b);
    } else {
      uint8_t *b = malloc(CAP);
      assert_non_null(b);
      (void)kv_lz4_decode(z, zl, b, CAP); /* refused or not: never past its buffers */
      free(b);
    }
    free(z);
  }
  free(wide);
  assert_true(agreed > 1000); /* the streams exercised decoding, not only refusals */
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_same_as_liblz4),
    cmocka_unit_test(test_refuses_bad_streams),
    cmocka_unit_test(test_random_bytes_like_liblz4),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
