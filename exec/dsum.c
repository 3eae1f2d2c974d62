/*
** exec/dsum.c: the exactly rounded double sums of exec/dsum.h: the slow path of an addition
** (the first value, zeros, subnormals, infinities, NaN, a value the 128-bit sum cannot take),
** the move to wide digits, merging two sums, and the one rounding at the end. The wide form
** keeps EXEC_DSUM_DIGITS signed 64-bit digits of radix 2^32, digit i worth 2^(32 i - 1074);
** each addition adds at most 2^32 to three of them, so carries are propagated once every 2^30
** additions and before a merge or a rounding. Not here: the fast path of an addition
** (exec/dsum.h, inline), the SQL aggregates (exec/agg.c).
*/
#include "exec/dsum.h"

#include <math.h>
#include <stdlib.h>

enum {
  DSUM_DIGITS = EXEC_DSUM_DIGITS, /* 2^-1074 up to 2^1230 (2^1024 and 2^64 additions) */
  DSUM_BIAS = 1074,               /* bit 0 of digit 0 is worth 2^-1074 */
  DSUM_SETTLE = 1 << 30           /* additions between carry propagations */
};

typedef unsigned __int128 u128;

static int bitlen128(u128 u) {
  uint64_t hi = (uint64_t)(u >> 64), lo = (uint64_t)u;
  return hi ? 128 - __builtin_clzll(hi) : lo ? 64 - __builtin_clzll(lo) : 0;
}

static int ctz128(u128 u) {
  uint64_t lo = (uint64_t)u;
  return lo ? __builtin_ctzll(lo) : 64 + __builtin_ctzll((uint64_t)(u >> 64));
}

static u128 mag(cat_i128 a) { return a < 0 ? (u128)0 - (u128)a : (u128)a; }

/* Add +-(m * 2^e) into the digits (m < 2^64, e >= -1074). */
static void wide_add(exec_dsum *s, uint64_t m, int e, bool neg) {
  int p = e + DSUM_BIAS;
  int i = p >> 5;
  u128 v = (u128)m << (p & 31); /* < 2^95: three digits */
  int64_t d0 = (int64_t)(uint32_t)v, d1 = (int64_t)(uint32_t)(v >> 32),
          d2 = (int64_t)(uint32_t)(v >> 64);
  if (neg) {
    d0 = -d0;
    d1 = -d1;
    d2 = -d2;
  }
  s->wide[i] += d0;
  s->wide[i + 1] += d1;
  s->wide[i + 2] += d2;
}

/* Propagate the carries of digits w: every digit but the last in [0, 2^32); the last holds
** the sign. */
static void settle(int64_t *w) {
  for (int i = 0; i < DSUM_DIGITS - 1; i++) {
    int64_t c = w[i] >> 32; /* floor: arithmetic shift */
    w[i] -= (int64_t)((uint64_t)c << 32);
    w[i + 1] += c;
  }
}

static void count_add(exec_dsum *s) {
  if (++s->wide_adds >= DSUM_SETTLE) {
    settle(s->wide);
    s->wide_adds = 0;
  }
}

/* Add +-(a * 2^lsb) into the digits (two additions, counted). */
static void wide_add_i128(exec_dsum *s, cat_i128 a, int lsb) {
  u128 u = mag(a);
  bool neg = a < 0;
  wide_add(s, (uint64_t)u, lsb, neg);
  count_add(s);
  wide_add(s, (uint64_t)(u >> 64), lsb + 64, neg);
  count_add(s);
}

/* Move s to wide digits holding its 128-bit sum. 0, or -1 when out of memory. */
static int go_wide(exec_dsum *s) {
  int64_t *w = calloc(DSUM_DIGITS, sizeof *w);
  if (!w) return -1;
  s->wide = w;
  s->wide_adds = 0;
  if (s->have) wide_add_i128(s, s->acc, s->lsb);
  s->acc = 0;
  return 0;
}

/* Add +-(m * 2^e) to the 128-bit sum when the result stays exact and fits (|sum| < 2^126). */
static bool narrow_add(exec_dsum *s, u128 m, int e, bool neg) {
  cat_i128 a = s->acc;
  int lsb = s->lsb;
  if (e < lsb) { /* a finer unit: a shifted up */
    int sh = lsb - e;
    if (a && (sh > 125 || bitlen128(mag(a)) + sh > 125)) return false;
    if (a) a = (cat_i128)((u128)a << sh);
    lsb = e;
  }
  int d = e - lsb;
  int mb = bitlen128(m);
  if (mb + d > 125 && a) { /* a coarser unit where a's low bits are zero */
    int up = ctz128((u128)a);
    if (up > d) up = d;
    a >>= up; /* exact: those bits are zero */
    lsb += up;
    d -= up;
  } else if (!a) {
    lsb = e;
    d = 0;
  }
  if (mb + d > 125) return false;
  cat_i128 v = (cat_i128)(m << d), t;
  if (neg) v = -v;
  if (__builtin_add_overflow(a, v, &t) || bitlen128(mag(t)) > 126) return false;
  s->acc = t;
  s->lsb = lsb;
  return true;
}

int exec_dsum_add_slow(exec_dsum *s, double x) {
  uint64_t b;
  memcpy(&b, &x, sizeof b);
  bool neg = b >> 63;
  int ex = (int)((b >> 52) & 0x7ff);
  uint64_t m = b & 0xfffffffffffffULL;
  if (ex == 0x7ff) {
    s->special |= m ? 1 : neg ? 4 : 2;
    return 0;
  }
  if (!ex && !m) {
    if (!neg) s->plus_zero = 1;
    return 0;
  }
  int e;
  if (ex) {
    m |= 1ULL << 52;
    e = ex - 1075;
  } else {
    e = -1074; /* subnormal */
  }
  int tz = __builtin_ctzll(m); /* the lowest set bit as the unit: the most room above */
  m >>= tz;
  e += tz;
  if (s->wide) {
    wide_add(s, m, e, neg);
    count_add(s);
    return 0;
  }
  if (!s->have) {
    s->acc = neg ? -(cat_i128)m : (cat_i128)m;
    s->lsb = e;
    s->have = 1;
    return 0;
  }
  if (narrow_add(s, m, e, neg)) return 0;
  if (go_wide(s)) return -1;
  wide_add(s, m, e, neg);
  count_add(s);
  return 0;
}

/* Add src's finite sum into dst's (both `have`, src's wide digits unchanged). 0, or -1 when
** out of memory (dst unchanged). */
static int merge_sums(exec_dsum *dst, const exec_dsum *src) {
  if (!dst->wide && !src->wide) {
    u128 u = mag(src->acc);
    int tz = u ? ctz128(u) : 0;
    if (!u || narrow_add(dst, u >> tz, src->lsb + tz, src->acc < 0)) return 0;
  }
  if (!dst->wide && go_wide(dst)) return -1;
  if (src->wide) {
    int64_t w[DSUM_DIGITS];
    memcpy(w, src->wide, sizeof w);
    settle(w);
    settle(dst->wide);
    for (int i = 0; i < DSUM_DIGITS; i++) dst->wide[i] += w[i];
    dst->wide_adds = 1; /* every digit below 2^33 in size again */
  } else {
    wide_add_i128(dst, src->acc, src->lsb);
  }
  return 0;
}

int exec_dsum_merge(exec_dsum *dst, const exec_dsum *src) {
  if (src->have && !dst->have) { /* take src's sum as it is */
    int64_t *w = NULL;
    if (src->wide) {
      w = malloc(DSUM_DIGITS * sizeof *w);
      if (!w) return -1;
      memcpy(w, src->wide, DSUM_DIGITS * sizeof *w);
    }
    free(dst->wide);
    dst->wide = w;
    dst->wide_adds = src->wide_adds;
    dst->acc = src->acc;
    dst->lsb = src->lsb;
    dst->have = 1;
  } else if (src->have && merge_sums(dst, src)) {
    return -1;
  }
  dst->special |= src->special; /* last: dst unchanged by a failure above */
  dst->plus_zero |= src->plus_zero;
  return 0;
}

/* +-(t * 2^e) rounded to the nearest double, ties to even; sticky: nonzero bits below t,
** only with t of 54 bits or more (the rounding needs t's low bits; the wide digits' top three
** are 65 bits or more whenever digits lie below them). */
static double round_to_double(u128 t, bool sticky, int e, bool neg) {
  int n = bitlen128(t);
  double r;
  if (n <= 53 && !sticky) {
    r = ldexp((double)(uint64_t)t, e); /* exact: below 2^-1022 it is a multiple of 2^-1074 */
  } else {
    int sh = n - 53;
    u128 mant = t >> sh, rem = t & (((u128)1 << sh) - 1), half = (u128)1 << (sh - 1);
    if (rem > half || (rem == half && (sticky || (mant & 1)))) mant++;
    r = ldexp((double)(uint64_t)mant, e + sh); /* 2^1024 and up: an infinity */
  }
  return neg ? -r : r;
}

double exec_dsum_value(const exec_dsum *s) {
  if ((s->special & 1) || (s->special & 6) == 6) return NAN;
  if (s->special & 2) return INFINITY;
  if (s->special & 4) return -INFINITY;
  if (!s->have) return s->plus_zero ? 0.0 : -0.0;
  if (!s->wide) {
    if (!s->acc) return 0.0;
    return round_to_double(mag(s->acc), false, s->lsb, s->acc < 0);
  }
  int64_t w[DSUM_DIGITS];
  memcpy(w, s->wide, sizeof w);
  settle(w);
  bool neg = w[DSUM_DIGITS - 1] < 0;
  if (neg) { /* the magnitude: every digit negated, the carries propagated again */
    for (int i = 0; i < DSUM_DIGITS; i++) w[i] = -w[i];
    settle(w);
  }
  int h = DSUM_DIGITS - 1;
  while (h >= 0 && !w[h]) h--;
  if (h < 0) return 0.0;
  int lo = h >= 2 ? h - 2 : 0; /* the top three digits: 65 bits or more */
  u128 t = 0;
  for (int i = h; i >= lo; i--) t = (t << 32) | (u128)(uint64_t)w[i];
  bool sticky = false;
  for (int i = 0; i < lo && !sticky; i++) sticky = w[i] != 0;
  return round_to_double(t, sticky, 32 * lo - DSUM_BIAS, neg);
}

void exec_dsum_free(exec_dsum *s) {
  free(s->wide);
  memset(s, 0, sizeof *s);
}
