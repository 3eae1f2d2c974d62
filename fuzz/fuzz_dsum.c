/*
** fuzz/fuzz_dsum.c: libFuzzer target for the exactly rounded double sums of exec/dsum.h. The
** input is a program over up to 8 partial sums. Byte 0: bits 0-2 the number of partials k
** less one, bits 3-4 the shape of the final merge (fold into the first, fold into the last,
** pairwise tree, fold into a fresh sum); bytes 1-4 seed the order of the partials in that
** merge. Then records: a byte with bit 7 clear adds the next 8 bytes (a raw bit pattern, so
** every NaN, infinity, subnormal and huge value appears) to partial (b & 7) % k, repeated
** 1 time, or 2^(r-7) times for r = (b >> 3) & 15 of 8 and up (at most 256), so sums grow
** to the 128-bit sum's limit through the inline fast path; a byte with bits 7 and 6 set adds
** to partial (b & 7) % k its own value negated and halved ((b >> 3) & 7) times (what is
** left is near the rounding's residue: sums whose low bits lie far below their unit, which
** random bit patterns seldom make); a byte with bit 7 set and bit 6 clear merges partial
** (b & 7) % k into partial ((b >> 3) & 7) % k mid-stream and empties the source.
** Every sum is checked bit for bit (any NaN equals any NaN) against a reference kept here:
** the exact sum as a two's complement integer of 2,304 bits in units of 2^-1074 (no value
** can overflow it: at most 2^22 additions of values below 2^1024 here) with flags for NaN,
** +Inf, -Inf, +0.0 and any nonzero finite value, rounded at the end by building the IEEE
** bits directly (no ldexp, no floating-point arithmetic), ties to even, 2^1024 and up an
** infinity. Checked: every partial before the final merge, each merge's source unchanged by
** it, the merged total, and the serial sum of all values in one exec_dsum. Any difference,
** or an addition or merge failing, aborts. Not here: the SQL aggregates (exec/agg.c).
*/
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "exec/dsum.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

enum { LIMBS = 72, PARTS = 8, MAX_ADDS = 1 << 22 };

/* The reference: the exact finite sum (limb 0 lowest, two's complement) and the flags. */
typedef struct rsum {
  uint32_t l[LIMBS];
  bool nan, pinf, ninf, pzero, nonzero;
} rsum;

/* Add (neg: subtract) mag * 2^p (mag < 2^61, p >= 0) to r's integer. Subtracting adds the
** complement plus one from limb p / 32 up (the complement of the zero limbs below it, plus
** one, is zero with a carry into that limb). */
static void ref_add_at(rsum *r, uint64_t mag, int p, bool neg) {
  int i = p / 32;
  unsigned __int128 v = (unsigned __int128)mag << (p % 32); /* < 2^93: three limbs */
  uint32_t part[3] = {(uint32_t)v, (uint32_t)(v >> 32), (uint32_t)(v >> 64)};
  uint64_t c = neg;
  for (int k = i; k < LIMBS; k++) {
    bool beyond = k - i >= 3;
    if (beyond && c == (uint64_t)neg) break; /* adding 0 (or all ones and a carry): no change */
    uint32_t x = beyond ? 0 : part[k - i];
    if (neg) x = ~x;
    uint64_t t = (uint64_t)r->l[k] + x + c;
    r->l[k] = (uint32_t)t;
    c = t >> 32;
  }
}

/* Add x, times times (at most 256), to r. */
static void ref_add(rsum *r, double x, uint64_t times) {
  uint64_t b;
  memcpy(&b, &x, sizeof b);
  bool neg = b >> 63;
  unsigned ex = (unsigned)(b >> 52) & 0x7ff;
  uint64_t f = b & 0xfffffffffffffULL;
  if (ex == 0x7ff) {
    if (f) r->nan = true;
    else if (neg) r->ninf = true;
    else r->pinf = true;
    return;
  }
  if (!ex && !f) {
    if (!neg) r->pzero = true;
    return;
  }
  r->nonzero = true;
  if (ex) ref_add_at(r, (f | 1ULL << 52) * times, (int)ex - 1, neg); /* m * 2^(ex - 1075) */
  else ref_add_at(r, f * times, 0, neg);
}

static void ref_merge(rsum *d, const rsum *s) {
  uint64_t c = 0;
  for (int k = 0; k < LIMBS; k++) {
    uint64_t t = (uint64_t)d->l[k] + s->l[k] + c;
    d->l[k] = (uint32_t)t;
    c = t >> 32;
  }
  d->nan |= s->nan;
  d->pinf |= s->pinf;
  d->ninf |= s->ninf;
  d->pzero |= s->pzero;
  d->nonzero |= s->nonzero;
}

static uint64_t dbits(double d) {
  uint64_t b;
  memcpy(&b, &d, sizeof b);
  return b;
}

static bool bit_of(const uint32_t *l, int i) { return (l[i / 32] >> (i % 32)) & 1; }

/* The reference's value as IEEE bits: the sum rounded to nearest, ties to even. */
static uint64_t ref_bits(const rsum *r) {
  const uint64_t qnan = 0x7ff8000000000000ULL, inf = 0x7ff0000000000000ULL, sign = 1ULL << 63;
  if (r->nan || (r->pinf && r->ninf)) return qnan;
  if (r->pinf) return inf;
  if (r->ninf) return inf | sign;
  uint32_t m[LIMBS];
  memcpy(m, r->l, sizeof m);
  bool neg = m[LIMBS - 1] >> 31;
  if (neg) { /* the magnitude: complement plus one */
    uint64_t c = 1;
    for (int k = 0; k < LIMBS; k++) {
      uint64_t t = (uint64_t)(uint32_t)~m[k] + c;
      m[k] = (uint32_t)t;
      c = t >> 32;
    }
  }
  int hl = LIMBS - 1;
  while (hl >= 0 && !m[hl]) hl--;
  if (hl < 0) return r->nonzero || r->pzero ? 0 : sign; /* -0.0 only from -0.0 alone */
  int h = hl * 32 + 31 - __builtin_clz(m[hl]); /* the top set bit */
  uint64_t out;
  if (h <= 52) { /* below 2^53 units: the bits are the integer itself (subnormal or not) */
    out = 0;
    for (int i = h; i >= 0; i--) out = out << 1 | bit_of(m, i);
  } else {
    int s = h - 52; /* the unit of the kept 53 bits */
    uint64_t mant = 0;
    for (int i = h; i >= s; i--) mant = mant << 1 | bit_of(m, i);
    bool half = bit_of(m, s - 1), below = false;
    for (int i = s - 2; i >= 0 && i % 32 != 31 && !below; i--) below = bit_of(m, i);
    for (int i = (s - 1) / 32 - 1; i >= 0 && !below; i--) below = m[i] != 0; /* whole limbs */
    if (half && (below || (mant & 1))) mant++;
    if (mant >> 53) {
      mant >>= 1;
      s++;
    }
    uint64_t field = (uint64_t)s + 1; /* value mant * 2^(s - 1074), mant in [2^52, 2^53) */
    out = field >= 0x7ff ? inf : field << 52 | (mant & 0xfffffffffffffULL);
  }
  return neg ? out | sign : out;
}

/* Two doubles' bits the same, any NaN equal to any NaN. */
static bool same(uint64_t a, uint64_t b) {
  const uint64_t abs = 0x7fffffffffffffffULL, inf = 0x7ff0000000000000ULL;
  return a == b || ((a & abs) > inf && (b & abs) > inf);
}

static void check(const exec_dsum *s, const rsum *r) {
  if (!same(dbits(exec_dsum_value(s)), ref_bits(r))) abort();
}

/* Merge part src into dst (both sums and references), src emptied; the source's value is
** checked unchanged by the merge first. */
static void merge(exec_dsum *ds, rsum *rs, int dst, int src) {
  uint64_t before = dbits(exec_dsum_value(&ds[src]));
  if (exec_dsum_merge(&ds[dst], &ds[src])) abort();
  if (!same(dbits(exec_dsum_value(&ds[src])), before)) abort();
  ref_merge(&rs[dst], &rs[src]);
  exec_dsum_free(&ds[src]);
  memset(&rs[src], 0, sizeof rs[src]);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 5) return 0;
  int k = (data[0] & 7) + 1, shape = (data[0] >> 3) & 3;
  uint32_t seed = (uint32_t)data[1] | (uint32_t)data[2] << 8 | (uint32_t)data[3] << 16 |
                  (uint32_t)data[4] << 24;
  static exec_dsum ds[PARTS + 1], serial;
  static rsum rs[PARTS + 1], rall;
  memset(ds, 0, sizeof ds);
  memset(rs, 0, sizeof rs);
  memset(&serial, 0, sizeof serial);
  memset(&rall, 0, sizeof rall);
  size_t i = 5;
  long adds = 0;
  while (i < size && adds < MAX_ADDS) {
    uint8_t b = data[i++];
    double x;
    int p = (b & 7) % k, r = (b >> 3) & 15;
    if ((b & 0xc0) == 0x80) {
      int dst = ((b >> 3) & 7) % k;
      if (p != dst) merge(ds, rs, dst, p);
      continue;
    }
    if (b & 0x80) { /* the partial's value negated, halved r & 7 times: the rounding's residue */
      x = -exec_dsum_value(&ds[p]);
      for (int h = 0; h < (r & 7); h++) x /= 2; /* exact, bar subnormals */
      r = 0;
    } else {
      if (size - i < 8) break;
      memcpy(&x, data + i, 8);
      i += 8;
    }
    long times = r < 8 ? 1 : 1L << (r - 7);
    for (long t = 0; t < times; t++)
      if (exec_dsum_add(&ds[p], x) || exec_dsum_add(&serial, x)) abort();
    ref_add(&rs[p], x, (uint64_t)times);
    ref_add(&rall, x, (uint64_t)times);
    adds += times;
  }
  for (int p = 0; p < k; p++) check(&ds[p], &rs[p]);
  check(&serial, &rall);
  /* the final merge: the partials in an order from the seed, then the shape's pattern */
  int ord[PARTS];
  for (int p = 0; p < k; p++) ord[p] = p;
  for (int p = k; p > 1; p--) {
    seed = seed * 1103515245u + 12345u;
    int j = (int)((seed >> 16) % (uint32_t)p), t = ord[p - 1];
    ord[p - 1] = ord[j];
    ord[j] = t;
  }
  int root;
  if (shape == 0) { /* into the first */
    for (int p = 1; p < k; p++) merge(ds, rs, ord[0], ord[p]);
    root = ord[0];
  } else if (shape == 1) { /* into the last */
    for (int p = k - 2; p >= 0; p--) merge(ds, rs, ord[k - 1], ord[p]);
    root = ord[k - 1];
  } else if (shape == 2) { /* pairwise, a tree */
    for (int step = 1; step < k; step *= 2)
      for (int p = 0; p + step < k; p += 2 * step) merge(ds, rs, ord[p], ord[p + step]);
    root = ord[0];
  } else { /* into a fresh sum */
    for (int p = 0; p < k; p++) merge(ds, rs, PARTS, ord[p]);
    root = PARTS;
  }
  check(&ds[root], &rs[root]);
  check(&ds[root], &rall);
  if (!same(dbits(exec_dsum_value(&ds[root])), dbits(exec_dsum_value(&serial)))) abort();
  for (int p = 0; p <= PARTS; p++) exec_dsum_free(&ds[p]);
  exec_dsum_free(&serial);
  return 0;
}
