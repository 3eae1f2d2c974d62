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

void kv_sfdec_expand(const kv_sfdec *h, uint8_t *dst, int transposed) {
  uint32_t n = h->count;
  for (uint32_t i = 0; i < n; i++) {
    uint64_t u = value_at(h, i);
    if (transposed) {
      for (int j = 7; j >= 0; j--) { dst[(size_t)j * n + i] = (uint8_t)u; u >>= 8; }
    } else {
      put_be64(dst + (size_t)i * 8, u);
    }
  }
}
