/*
** kv/util/coding.h: little helpers to encode and decode integers in kv/ file formats: fixed
** little-endian 32/64-bit, LEB128 varints, zigzag. Decoders take (p, limit) and never read
** at or past limit: they return NULL on truncated or over-long input (LevelDB's coding.h
** discipline). docs/FORMAT.md "Conventions" describes the encodings.
*/
#ifndef ROWAN_KV_CODING_H
#define ROWAN_KV_CODING_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

static inline void kv_put_u32le(uint8_t *p, uint32_t v) {
  p[0] = (uint8_t)v; p[1] = (uint8_t)(v >> 8); p[2] = (uint8_t)(v >> 16); p[3] = (uint8_t)(v >> 24);
}
static inline uint32_t kv_get_u32le(const uint8_t *p) {
  return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}
static inline void kv_put_u64le(uint8_t *p, uint64_t v) {
  kv_put_u32le(p, (uint32_t)v); kv_put_u32le(p + 4, (uint32_t)(v >> 32));
}
static inline uint64_t kv_get_u64le(const uint8_t *p) {
  return (uint64_t)kv_get_u32le(p) | ((uint64_t)kv_get_u32le(p + 4) << 32);
}
/* Copy n bytes (the regions do not overlap). The short fields a write copies per cell (a
** qualifier of a few bytes, an 8-byte value, a row key of a few dozen) are moved with fixed
** size loads and stores, not a library call, which cost more than the copy. */
static inline void kv_copy(void *dst, const void *src, size_t n) {
  uint8_t *d = (uint8_t *)dst;
  const uint8_t *s = (const uint8_t *)src;
  if (n > 32) {
    memcpy(d, s, n);
  } else if (n >= 16) { /* two 16-byte moves that may overlap */
    memcpy(d, s, 16);
    memcpy(d + n - 16, s + n - 16, 16);
  } else if (n >= 8) {
    memcpy(d, s, 8);
    memcpy(d + n - 8, s + n - 8, 8);
  } else if (n >= 4) {
    memcpy(d, s, 4);
    memcpy(d + n - 4, s + n - 4, 4);
  } else if (n) {
    d[0] = s[0];
    d[n / 2] = s[n / 2];
    d[n - 1] = s[n - 1];
  }
}
/* Write v as a varint at p (at most 10 bytes); returns the byte after it. */
static inline uint8_t *kv_put_varint(uint8_t *p, uint64_t v) {
  while (v >= 0x80) { *p++ = (uint8_t)(v | 0x80); v >>= 7; }
  *p++ = (uint8_t)v;
  return p;
}
static inline int kv_varint_len(uint64_t v) {
  int n = 1;
  while (v >= 0x80) { v >>= 7; n++; }
  return n;
}
/* Read a varint from [p, limit); returns the byte after it, or NULL if truncated/overlong. */
static inline const uint8_t *kv_get_varint(const uint8_t *p, const uint8_t *limit, uint64_t *v) {
  if (p < limit && *p < 0x80) { /* one byte: most lengths and ids */
    *v = *p;
    return p + 1;
  }
  uint64_t r = 0;
  for (int shift = 0; shift <= 63 && p < limit; shift += 7) {
    uint64_t b = *p++;
    if (shift == 63 && b > 1) return NULL;
    r |= (b & 0x7f) << shift;
    if (!(b & 0x80)) { *v = r; return p; }
  }
  return NULL;
}
static inline uint64_t kv_zigzag(int64_t v) { return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63); }
static inline int64_t kv_unzigzag(uint64_t v) { return (int64_t)(v >> 1) ^ -(int64_t)(v & 1); }
/* The zigzag varint of INT64_MIN (kv.h's KV_TS_NOW, the timestamp of every op an SQL write
** makes): 10 bytes, nine 0xff then 0x01. Batch ops write and read it whole rather than through
** the 10-step varint loops. */
#define KV_ZZ_MIN_LEN 10
static inline void kv_put_zz_min(uint8_t *p) {
  memset(p, 0xff, 9);
  p[9] = 0x01;
}
static inline int kv_is_zz_min(const uint8_t *p, const uint8_t *limit) {
  if (limit - p < KV_ZZ_MIN_LEN) return 0;
  uint64_t w;
  memcpy(&w, p, 8);
  return w == UINT64_MAX && p[8] == 0xff && p[9] == 0x01;
}

#endif /* ROWAN_KV_CODING_H */
