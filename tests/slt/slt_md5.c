/*
** tests/slt/slt_md5.c: MD5 (RFC 1321) for the sqllogictest runner's hash-threshold results.
**
** The sqllogictest format compares a large result as "N values hashing to H", where H is the
** MD5 of every value followed by a newline, so files written for other engines carry over.
** This is a plain, unoptimized implementation of the RFC's algorithm: the 64 sine-derived
** constants are computed at first use from floor(|sin(i + 1)| * 2^32), exactly as the RFC
** defines them. It is a test tool, not a security primitive. Not here: the runner itself
** (slt_runner.c).
*/
#include "slt.h"

#include <math.h>
#include <string.h>

static uint32_t K[64];  /* the sine table T[i+1] of RFC 1321 */
static int k_ready;     /* K filled */

static const uint8_t SHIFT[64] = {
    7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22,
    5, 9,  14, 20, 5, 9,  14, 20, 5, 9,  14, 20, 5, 9,  14, 20,
    4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23,
    6, 10, 15, 21, 6, 10, 15, 21, 6, 10, 15, 21, 6, 10, 15, 21};

static uint32_t rotl(uint32_t x, int c) { return (x << c) | (x >> (32 - c)); }

static void block(slt_md5 *m, const uint8_t *p) {
  uint32_t w[16];
  for (int i = 0; i < 16; i++)
    w[i] = (uint32_t)p[4 * i] | (uint32_t)p[4 * i + 1] << 8 | (uint32_t)p[4 * i + 2] << 16 |
           (uint32_t)p[4 * i + 3] << 24;
  uint32_t a = m->h[0], b = m->h[1], c = m->h[2], d = m->h[3];
  for (int i = 0; i < 64; i++) {
    uint32_t f;
    int g;
    if (i < 16) {
      f = (b & c) | (~b & d);
      g = i;
    } else if (i < 32) {
      f = (d & b) | (~d & c);
      g = (5 * i + 1) % 16;
    } else if (i < 48) {
      f = b ^ c ^ d;
      g = (3 * i + 5) % 16;
    } else {
      f = c ^ (b | ~d);
      g = (7 * i) % 16;
    }
    uint32_t t = d;
    d = c;
    c = b;
    b = b + rotl(a + f + K[i] + w[g], SHIFT[i]);
    a = t;
  }
  m->h[0] += a;
  m->h[1] += b;
  m->h[2] += c;
  m->h[3] += d;
}

void slt_md5_init(slt_md5 *m) {
  if (!k_ready) {
    for (int i = 0; i < 64; i++) K[i] = (uint32_t)floor(fabs(sin((double)(i + 1))) * 4294967296.0);
    k_ready = 1;
  }
  m->h[0] = 0x67452301u;
  m->h[1] = 0xefcdab89u;
  m->h[2] = 0x98badcfeu;
  m->h[3] = 0x10325476u;
  m->len = 0;
  m->nbuf = 0;
}

void slt_md5_update(slt_md5 *m, const void *data, size_t n) {
  const uint8_t *p = data;
  m->len += n;
  while (n > 0) {
    size_t take = 64 - m->nbuf;
    if (take > n) take = n;
    memcpy(m->buf + m->nbuf, p, take);
    m->nbuf += take;
    p += take;
    n -= take;
    if (m->nbuf == 64) {
      block(m, m->buf);
      m->nbuf = 0;
    }
  }
}

void slt_md5_hex(slt_md5 *m, char out[33]) {
  uint64_t bits = m->len * 8;
  uint8_t pad = 0x80, zero = 0, lenb[8];
  slt_md5_update(m, &pad, 1);
  while (m->nbuf != 56) slt_md5_update(m, &zero, 1);
  for (int i = 0; i < 8; i++) lenb[i] = (uint8_t)(bits >> (8 * i));
  slt_md5_update(m, lenb, 8);
  static const char hex[] = "0123456789abcdef";
  for (int i = 0; i < 16; i++) {
    uint8_t byte = (uint8_t)(m->h[i / 4] >> (8 * (i % 4)));
    out[2 * i] = hex[byte >> 4];
    out[2 * i + 1] = hex[byte & 15];
  }
  out[32] = 0;
}
