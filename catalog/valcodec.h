/*
** catalog/valcodec.h: the cell value codec (non-key columns), and the order-preserving
** primitives the row-key codec (catalog/keycodec.h) shares with it.
**
** Every encoding here is order-preserving: for two non-NULL values of the same column type,
** comparing their encodings as unsigned bytes, a proper prefix first (cat_vc_compare), gives
** the SQL order of catalog/value.h. So a filter pushed into a kv scan can compare an
** encoded cell with an encoded constant without decoding (`temp > 30.0` compares numbers).
** A cell carries its own length, so nothing is terminated. docs/FORMAT_SQL.md (Part 3) has the
** byte tables; in short:
**   BOOLEAN 1 byte 0x00/0x01; TINYINT/SMALLINT/INTEGER/BIGINT 1/2/4/8 bytes big-endian
**   two's complement with the sign bit flipped; DATE 4 bytes (days), TIME and TIMESTAMP
**   8 bytes (microseconds) the same way; FLOAT 4 / DOUBLE 8 bytes: IEEE bits big-endian,
**   sign bit flipped for positives, all bits inverted for negatives, -0.0 stored as 0.0, every
**   NaN as the one canonical quiet NaN (which sorts above +Infinity); DECIMAL the
**   variable-length sign/exponent/base-100 form below (cat_dec_encode); CHAR its bytes
**   without trailing spaces; VARCHAR and VARBINARY their bytes.
** SQL NULL is not a value here: a NULL column has no cell.
*/
#ifndef ROWAN_CAT_VALCODEC_H
#define ROWAN_CAT_VALCODEC_H

#include <math.h>
#include <string.h>

#include "catalog/types.h"

/* Longest DECIMAL encoding: marker, exponent, 19 base-100 digit bytes, terminator. */
#define CAT_DEC_ENC_MAX 23
/* Longest encoding of any fixed-width or DECIMAL value (strings excluded). */
#define CAT_FIXED_ENC_MAX 23

/* ---- Order-preserving primitives (inline: used on hot filter paths) ------------------- */
/* Big-endian `width`-byte (1, 2, 4, 8) two's complement with the sign bit flipped. */
static inline void cat_vc_put_int(uint8_t *p, int width, int64_t v) {
  uint64_t u = (uint64_t)v ^ ((uint64_t)1 << (width * 8 - 1));
  for (int i = width - 1; i >= 0; i--) { p[i] = (uint8_t)u; u >>= 8; }
}
static inline int64_t cat_vc_get_int(const uint8_t *p, int width) {
  uint64_t u = 0;
  for (int i = 0; i < width; i++) u = (u << 8) | p[i];
  u ^= (uint64_t)1 << (width * 8 - 1);
  if (width < 8) { /* sign-extend */
    uint64_t m = (uint64_t)1 << (width * 8 - 1);
    u = (u ^ m) - m;
  }
  return (int64_t)u;
}

/* IEEE order trick on raw bits (n = 32 or 64). */
static inline uint64_t cat_vc_flip_bits(uint64_t bits, int n) {
  uint64_t sign = (uint64_t)1 << (n - 1);
  uint64_t mask = n == 64 ? ~(uint64_t)0 : (((uint64_t)1 << n) - 1);
  return (bits & sign) ? (~bits & mask) : (bits | sign);
}
static inline uint64_t cat_vc_unflip_bits(uint64_t enc, int n) {
  uint64_t sign = (uint64_t)1 << (n - 1);
  uint64_t mask = n == 64 ? ~(uint64_t)0 : (((uint64_t)1 << n) - 1);
  return (enc & sign) ? (enc & ~sign) : (~enc & mask);
}

/* DOUBLE: 8 bytes. */
static inline void cat_vc_put_double(uint8_t *p, double d) {
  uint64_t bits;
  if (d == 0) d = 0.0;                       /* -0.0 -> 0.0 */
  if (isnan(d)) bits = 0x7FF8000000000000ull; /* the canonical NaN */
  else memcpy(&bits, &d, 8);
  uint64_t e = cat_vc_flip_bits(bits, 64);
#if defined(__GNUC__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  e = __builtin_bswap64(e); /* big-endian: one store */
  memcpy(p, &e, 8);
#else
  for (int i = 7; i >= 0; i--) { p[i] = (uint8_t)e; e >>= 8; }
#endif
}
static inline double cat_vc_get_double(const uint8_t *p) {
  uint64_t e = 0;
#if defined(__GNUC__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  memcpy(&e, p, 8); /* one load (the columnar aggregate's sums read millions) */
  e = __builtin_bswap64(e);
#else
  for (int i = 0; i < 8; i++) e = (e << 8) | p[i];
#endif
  uint64_t bits = cat_vc_unflip_bits(e, 64);
  double d;
  memcpy(&d, &bits, 8);
  return d;
}

/* FLOAT: 4 bytes. */
static inline void cat_vc_put_float(uint8_t *p, float f) {
  uint32_t bits;
  if (f == 0) f = 0.0f;
  if (isnan(f)) bits = 0x7FC00000u;
  else memcpy(&bits, &f, 4);
  uint32_t e = (uint32_t)cat_vc_flip_bits(bits, 32);
  for (int i = 3; i >= 0; i--) { p[i] = (uint8_t)e; e >>= 8; }
}
static inline float cat_vc_get_float(const uint8_t *p) {
  uint32_t e = ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3];
  uint32_t bits = (uint32_t)cat_vc_unflip_bits(e, 32);
  float f;
  memcpy(&f, &bits, 4);
  return f;
}

/* Compare two encodings of the same column type: unsigned bytes, a proper prefix first.
** Returns <0, 0, >0. This is SQL order for every encoding of this file. */
static inline int cat_vc_compare(const uint8_t *a, size_t alen, const uint8_t *b, size_t blen) {
  size_t m = alen < blen ? alen : blen;
  int c = m ? memcmp(a, b, m) : 0;
  if (c) return c;
  return (alen > blen) - (alen < blen);
}

/* ---- DECIMAL bytes (shared with the key codec) --------------------------------------- */
/* Encode d (normalized first: 1.50 and 1.5 give the same bytes) into p (at least
** CAT_DEC_ENC_MAX bytes); returns the length. Self-delimiting:
**   zero:     0x02
**   positive: 0x03, E + 128, digit pairs as bytes pair + 1 (1..100), 0x00
**   negative: 0x01, 127 - E, digit pairs as 254 - pair, 0xFF
** where |d| = 0.d1d2d3... x 10^E with d1 != 0 and no trailing zero digit (an odd count is
** padded with one 0 digit to make pairs). */
size_t cat_dec_encode(cat_dec d, uint8_t *p);
/* Decode one DECIMAL from [p, limit): *used gets the bytes read. The result is normalized
** (no trailing fractional zeros). CAT_ERR_CORRUPT on bad or truncated bytes. */
int cat_dec_decode(const uint8_t *p, const uint8_t *limit, cat_dec *out, size_t *used,
                   cat_error *err);

/* ---- Cell values ---------------------------------------------------------------------- */
/* Encode non-NULL v (already checked against its column type) into buf[0..cap): *len gets
** the byte count. Strings need cap >= their length (CHAR: without trailing spaces), other
** types CAT_FIXED_ENC_MAX. Errors: CAT_ERR_NULL for a NULL value, CAT_ERR_TOOBIG if cap is
** short (*len then holds the size needed), CAT_ERR_TYPE for an unknown type. */
int cat_vc_encode(const cat_value *v, uint8_t *buf, size_t cap, size_t *len, cat_error *err);

/* Decode a cell value of type *t from p[0..len). Strings and bytes point into p (no copy),
** so *out is valid while p is. A DECIMAL comes back at the column's scale when t has a
** precision. CAT_ERR_CORRUPT (wrong length, bad bytes) names the type. */
int cat_vc_decode(const cat_type *t, const uint8_t *p, size_t len, cat_value *out,
                  cat_error *err);

#endif /* ROWAN_CAT_VALCODEC_H */
