/*
** kv/sf/sf_dec.c: the decimal-scaled value group (kv/sf/sf_dec.h; docs/FORMAT.md Part 2,
** "Values section"): the writer's attempt (kv_sfdec_try, which verifies every value by
** re-encoding it) and the readers' header parse and value rebuild. The arithmetic is the same
** on both sides: x = (double)m / 10^k, an IEEE division of two exact doubles (|m| <= 2^53,
** 10^k exact for k <= 22), so the result is correctly rounded and the same on every platform
** with IEEE doubles; the writer keeps the form only when that x gives back the value's bytes.
** Not here: where a group lies in the block, nor any SQL type knowledge (the transform holds
** for whatever 8-byte values it round-trips).
*/
#include <math.h>
#include <stdint.h>
#include <string.h>
#include "kv/sf/sf_dec.h"
#include "kv/util/cell.h"
#include "kv/util/coding.h"
#include "kv/util/status.h"

static const double P10[KV_SFDEC_MAX_K + 1] = {1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6};
#define M_LIMIT 9007199254740992.0 /* 2^53: every integer up to it is an exact double */

static uint64_t get_be64(const uint8_t *s) { return kv_load_be64(s); }

/* One store (the compiler kept the byte loop: a rebuilt value's costliest part) */
static void put_be64(uint8_t *d, uint64_t u) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  u = __builtin_bswap64(u);
  memcpy(d, &u, 8);
#else
  for (int i = 7; i >= 0; i--) { d[i] = (uint8_t)u; u >>= 8; }
#endif
}

/* The order-preserving 8 bytes as a double, and back. */
static double ord_to_double(uint64_t u) {
  uint64_t bits = (u >> 63) ? u ^ (1ull << 63) : ~u;
  double x;
  memcpy(&x, &bits, 8);
  return x;
}

static uint64_t double_to_ord(double x) {
  uint64_t bits;
  memcpy(&bits, &x, 8);
  return (bits >> 63) ? ~bits : bits ^ (1ull << 63);
}

/* m with m / 10^k == x bit for bit (as ordered bytes u), or false. y is rounded half away
** from zero by hand (libm's nearbyint was a function call per value and per k tried): the
** check below decides, so a rounding that picked another integer could only refuse a value,
** and the y of a value that fits at k lies far closer than a half to an integer. */
static bool scaled(double x, uint64_t u, uint32_t k, int64_t *m) {
  double y = x * P10[k];
  if (!(y > -M_LIMIT && y < M_LIMIT)) return false; /* also NaN */
  int64_t mi = (int64_t)(y < 0 ? y - 0.5 : y + 0.5);
  if (double_to_ord((double)mi / P10[k]) != u) return false;
  *m = mi;
  return true;
}

int kv_sfdec_try(kv_sfbuf *o, const uint8_t *vals, const kv_sfb_cell *cells,
                 const uint32_t *mem, size_t cnt, int64_t **scratch, size_t *scratch_cap) {
  if (!cnt) return 0;
  if (kv_sf_grow((void **)scratch, scratch_cap, cnt, sizeof **scratch)) return KV_ERR_NOMEM;
  int64_t *ms = *scratch;
  uint32_t k = 0;
  size_t at_k = 0; /* values [at_k, i) were scaled and verified at the current k */
  /* the smallest k every value fits (a value that fits at k fits at every larger k: m * 10
     stays exact below 2^53 and the division is of the same rational) */
  for (size_t i = 0; i < cnt; i++) {
    const kv_sfb_cell *c = &cells[mem[i]];
    if (c->val_len != 8) return 0;
    uint64_t u = get_be64(vals + c->val_off);
    double x = ord_to_double(u);
    if (!isfinite(x)) return 0;
    if (!scaled(x, u, k, &ms[i])) {
      do
        if (++k > KV_SFDEC_MAX_K) return 0;
      while (!scaled(x, u, k, &ms[i]));
      at_k = i;
    }
  }
  /* the values before at_k at the group's k, verified again by re-encoding (the others
     were, at that k, above) */
  int64_t lo = INT64_MAX, hi = INT64_MIN;
  for (size_t i = 0; i < cnt; i++) {
    if (i < at_k) {
      uint64_t u = get_be64(vals + cells[mem[i]].val_off);
      if (!scaled(ord_to_double(u), u, k, &ms[i])) return 0;
    }
    if (ms[i] < lo) lo = ms[i];
    if (ms[i] > hi) hi = ms[i];
  }
  uint64_t range = (uint64_t)hi - (uint64_t)lo;
  uint32_t w = range == 0 ? 0 : range <= 0xFF ? 1 : range <= 0xFFFF ? 2 : range <= 0xFFFFFF ? 3
             : range <= 0xFFFFFFFFull ? 4 : 5;
  if (w > KV_SFDEC_MAX_W) return 0;
  size_t head = (size_t)kv_varint_len(KV_SFDEC_CODE) + (size_t)kv_varint_len(k) +
                (size_t)kv_varint_len(kv_zigzag(lo)) + (size_t)kv_varint_len(w);
  size_t size = head + cnt * w;
  if (size >= 1 + 8 * cnt) return 0;
  if (kv_sfbuf_reserve(o, size)) return KV_ERR_NOMEM;
  uint8_t *p = o->p + o->len;
  p = kv_put_varint(p, KV_SFDEC_CODE);
  p = kv_put_varint(p, k);
  p = kv_put_varint(p, kv_zigzag(lo));
  p = kv_put_varint(p, w);
  for (size_t i = 0; i < cnt; i++) {
    uint64_t d = (uint64_t)ms[i] - (uint64_t)lo;
    for (uint32_t j = 0; j < w; j++) p[(size_t)j * cnt + i] = (uint8_t)(d >> (8 * j));
  }
  o->len = (size_t)(p - o->p) + cnt * w;
  return 1;
}

const uint8_t *kv_sfdec_parse(const uint8_t *p, const uint8_t *lim, uint32_t count,
                              kv_sfdec *h, const char **why) {
  uint64_t k = 0, zb = 0, w = 0;
  if (!(p = kv_get_varint(p, lim, &k)) || !(p = kv_get_varint(p, lim, &zb)) ||
      !(p = kv_get_varint(p, lim, &w))) {
    *why = "truncated decimal value group header";
    return NULL;
  }
  if (k > KV_SFDEC_MAX_K) { *why = "decimal value group: power of ten out of range"; return NULL; }
  if (w > KV_SFDEC_MAX_W) { *why = "decimal value group: offset width out of range"; return NULL; }
  int64_t base = kv_unzigzag(zb);
  if (base < -(int64_t)(1ll << 53) || base > (int64_t)(1ll << 53)) {
    *why = "decimal value group: base out of range";
    return NULL;
  }
  if (w * (uint64_t)count > (uint64_t)(lim - p)) {
    *why = "value group runs past the block";
    return NULL;
  }
  h->k = (uint32_t)k;
  h->w = (uint32_t)w;
  h->base = base;
  h->planes = p;
  h->count = count;
  return p + w * count;
}

static inline uint64_t value_at(const kv_sfdec *h, uint32_t i) {
  uint64_t d = 0;
  for (uint32_t j = 0; j < h->w; j++) d |= (uint64_t)h->planes[(size_t)j * h->count + i] << (8 * j);
  /* base within +-2^53 and d below 2^32: no overflow */
  return double_to_ord((double)(h->base + (int64_t)d) / P10[h->k]);
}

void kv_sfdec_get(const kv_sfdec *h, uint32_t i, uint8_t out[8]) {
  put_be64(out, value_at(h, i));
}

/* The vector rebuild (x86-64 with AVX2, chosen at run time): four values a step, the offsets
** widened to 32 bits and added to the base in 32-bit lanes, converted, divided by 10^k (one
** IEEE division per lane, so bit for bit the scalar result) and turned into the ordered
** bytes. Only when every m = base + offset fits an int32 (offset widths 0 to 3 and a base
** that keeps the sum in range: every sensor group seen); other groups go the scalar way. */
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define SFDEC_VECTOR 1

/* Values i .. i + 3 as four ordered 8-byte numbers (native order, one per 64-bit lane). */
__attribute__((target("avx2"))) static inline __m256i rebuild4(const kv_sfdec *h, uint32_t i,
                                                               __m128i base, __m256d p) {
  __m128i d = _mm_setzero_si128();
  for (uint32_t j = 0; j < h->w; j++) {
    uint32_t four;
    memcpy(&four, h->planes + (size_t)j * h->count + i, 4);
    d = _mm_or_si128(d, _mm_slli_epi32(_mm_cvtepu8_epi32(_mm_cvtsi32_si128((int)four)),
                                       (int)(8 * j)));
  }
  __m256d x = _mm256_div_pd(_mm256_cvtepi32_pd(_mm_add_epi32(base, d)), p);
  /* m / 10^k is never -0.0 (the writer refuses it; m = 0 gives +0.0): negative is x < 0,
     whose bits are all inverted; the others get their sign bit set */
  __m256i neg = _mm256_castpd_si256(_mm256_cmp_pd(x, _mm256_setzero_pd(), _CMP_LT_OQ));
  __m256i sign = _mm256_set1_epi64x((long long)0x8000000000000000ull);
  return _mm256_xor_si256(_mm256_castpd_si256(x), _mm256_or_si256(neg, sign));
}

/* Every value, side by side (transposed 0) or in byte planes (transposed 1). */
__attribute__((target("avx2"))) static void expand_avx2(const kv_sfdec *h, uint8_t *dst,
                                                        int transposed) {
  uint32_t n = h->count, i = 0;
  const __m256d p = _mm256_set1_pd(P10[h->k]);
  const __m128i base = _mm_set1_epi32((int32_t)h->base);
  if (!transposed) {
    const __m256i swap = _mm256_setr_epi8(7, 6, 5, 4, 3, 2, 1, 0, 15, 14, 13, 12, 11, 10, 9,
                                          8, 7, 6, 5, 4, 3, 2, 1, 0, 15, 14, 13, 12, 11, 10,
                                          9, 8);
    for (; i + 4 <= n; i += 4)
      _mm256_storeu_si256((__m256i *)(void *)(dst + (size_t)i * 8),
                          _mm256_shuffle_epi8(rebuild4(h, i, base, p), swap));
    for (; i < n; i++) put_be64(dst + (size_t)i * 8, value_at(h, i));
    return;
  }
  /* per 128-bit lane (two values): the byte of plane j of each, plane by plane; then the
     lanes' pairs interleaved: plane j's four bytes in the 32-bit word j */
  const __m256i pairs = _mm256_setr_epi8(7, 15, 6, 14, 5, 13, 4, 12, 3, 11, 2, 10, 1, 9, 0, 8,
                                         7, 15, 6, 14, 5, 13, 4, 12, 3, 11, 2, 10, 1, 9, 0, 8);
  for (; i + 4 <= n; i += 4) {
    __m256i v = _mm256_shuffle_epi8(rebuild4(h, i, base, p), pairs);
    __m128i a = _mm256_castsi256_si128(v), b = _mm256_extracti128_si256(v, 1);
    uint32_t words[8];
    _mm_storeu_si128((__m128i *)(void *)words, _mm_unpacklo_epi16(a, b));
    _mm_storeu_si128((__m128i *)(void *)(words + 4), _mm_unpackhi_epi16(a, b));
    for (uint32_t j = 0; j < 8; j++) memcpy(dst + (size_t)j * n + i, &words[j], 4);
  }
  for (; i < n; i++) {
    uint64_t u = value_at(h, i);
    for (int j = 7; j >= 0; j--) { dst[(size_t)j * n + i] = (uint8_t)u; u >>= 8; }
  }
}

__attribute__((target("avx2"))) static void expand_avx2_strided(const kv_sfdec *h,
                                                                uint8_t *dst, size_t stride) {
  uint32_t n = h->count, i = 0;
  const __m256d p = _mm256_set1_pd(P10[h->k]);
  const __m128i base = _mm_set1_epi32((int32_t)h->base);
  const __m256i swap = _mm256_setr_epi8(7, 6, 5, 4, 3, 2, 1, 0, 15, 14, 13, 12, 11, 10, 9, 8,
                                        7, 6, 5, 4, 3, 2, 1, 0, 15, 14, 13, 12, 11, 10, 9, 8);
  for (; i + 4 <= n; i += 4) {
    __m256i v = _mm256_shuffle_epi8(rebuild4(h, i, base, p), swap);
    __m128i lo = _mm256_castsi256_si128(v), hi = _mm256_extracti128_si256(v, 1);
    uint8_t *d = dst + (size_t)i * stride;
    _mm_storel_epi64((__m128i *)(void *)d, lo);
    _mm_storel_epi64((__m128i *)(void *)(d + stride), _mm_unpackhi_epi64(lo, lo));
    _mm_storel_epi64((__m128i *)(void *)(d + 2 * stride), hi);
    _mm_storel_epi64((__m128i *)(void *)(d + 3 * stride), _mm_unpackhi_epi64(hi, hi));
  }
  for (; i < n; i++) put_be64(dst + (size_t)i * stride, value_at(h, i));
}

static int vector_ok(const kv_sfdec *h) {
  if (h->w > 3 || !__builtin_cpu_supports("avx2")) return 0;
  int64_t top = h->base + (int64_t)((1ull << (8 * h->w)) - 1);
  return h->base >= INT32_MIN && top <= INT32_MAX;
}
#endif

void kv_sfdec_expand(const kv_sfdec *h, uint8_t *dst, int transposed) {
  uint32_t n = h->count;
#ifdef SFDEC_VECTOR
  if (vector_ok(h)) {
    expand_avx2(h, dst, transposed);
    return;
  }
#endif
  for (uint32_t i = 0; i < n; i++) {
    uint64_t u = value_at(h, i);
    if (!transposed) {
      put_be64(dst + (size_t)i * 8, u);
      continue;
    }
    for (int j = 7; j >= 0; j--) { dst[(size_t)j * n + i] = (uint8_t)u; u >>= 8; }
  }
}

void kv_sfdec_expand_strided(const kv_sfdec *h, uint8_t *dst, size_t stride) {
#ifdef SFDEC_VECTOR
  if (vector_ok(h)) {
    expand_avx2_strided(h, dst, stride);
    return;
  }
#endif
  for (uint32_t i = 0; i < h->count; i++) put_be64(dst + (size_t)i * stride, value_at(h, i));
}
