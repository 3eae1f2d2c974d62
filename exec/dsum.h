/*
** exec/dsum.h: exactly rounded sums of doubles, for SUM and AVG of FLOAT and DOUBLE (and of
** DECIMAL into a DOUBLE result). Every value is added exactly: while the running sum fits, into
** a 128-bit integer counted in units of 2^lsb (lsb: the lowest set bit of any value added); past
** that, into digits of 32 bits spanning the whole range of doubles (2^-1074 up, with room for
** 2^64 additions). The result is the exact sum rounded once to the nearest double (ties to
** even), so it does not depend on the order of the additions: partial sums of a parallel
** scan merged in any order give the serial answer to the last bit, and SUM(x) of 1e100, 1 and
** -1e100 is 1 (a plain running sum gives 0). NaN and infinities follow IEEE 754 (any NaN,
** or +Inf with -Inf, gives NaN); the sum of -0.0 values alone is -0.0; an exact sum past the
** largest double is an infinity (a plain running sum may overflow midway where this does not).
** SQLite (3.43 on) sums with Kahan-Babuska-Neumaier compensation, Phoenix and DuckDB with a
** plain running sum: Rowan's answers are as close as theirs or closer (equal whenever theirs
** are exact). Not here: the SQL aggregates around it (exec/agg.c), DECIMAL and integer sums.
*/
#ifndef ROWAN_EXEC_DSUM_H
#define ROWAN_EXEC_DSUM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "catalog/types.h"

/* The number of wide digits (exec/dsum.c): 2,304 bits, 2^-1074 up to 2^1230. */
#define EXEC_DSUM_DIGITS 72

/* One sum. Zero-initialise (memset or = {0}) to start; exec_dsum_free releases it. */
typedef struct exec_dsum {
  cat_i128 acc;       /* the exact sum of the finite values, in units of 2^lsb (not wide) */
  int32_t lsb;        /* the exponent of acc's unit, once `have` */
  uint8_t have;       /* a nonzero finite value was added */
  uint8_t special;    /* bit 0: a NaN, bit 1: +Inf, bit 2: -Inf was added */
  uint8_t plus_zero;  /* a +0.0 was added (the sum of zeros alone is -0.0 only without one) */
  uint32_t wide_adds; /* additions into `wide` since its carries were last propagated */
  int64_t *wide;      /* EXEC_DSUM_DIGITS digits once acc cannot hold the sum (malloc), or NULL */
} exec_dsum;

/* The slow path of exec_dsum_add: zeros, subnormals, infinities and NaN, the first value, a
** value acc cannot take. 0, or -1 when out of memory (s unchanged then). */
int exec_dsum_add_slow(exec_dsum *s, double x);

/* Add x to s exactly. 0, or -1 when out of memory (s is unchanged then). */
static inline int exec_dsum_add(exec_dsum *s, double x) {
  uint64_t b;
  memcpy(&b, &x, sizeof b);
  unsigned ex = (unsigned)(b >> 52) & 0x7ffu;
  if (ex - 1u < 0x7feu && s->have && !s->wide) { /* normal, finite, not the first */
    int d = (int)ex - 1075 - s->lsb;               /* x = m * 2^(ex - 1075) */
    if (d >= 0 && d <= 70) {                       /* m << d < 2^123 */
      uint64_t m = (b & 0xfffffffffffffULL) | (1ULL << 52);
      cat_i128 v = (cat_i128)((unsigned __int128)m << d), t;
      if (b >> 63) v = -v;
      if (!__builtin_add_overflow(s->acc, v, &t)) {
        s->acc = t;
        return 0;
      }
    }
  }
  return exec_dsum_add_slow(s, x);
}

/* Add src's sum into dst (src unchanged). 0, or -1 when out of memory (dst unchanged). */
int exec_dsum_merge(exec_dsum *dst, const exec_dsum *src);

/* The exact sum rounded to the nearest double (ties to even). Meaningless before a value. */
double exec_dsum_value(const exec_dsum *s);

/* Heap bytes s holds (its wide digits, once it has them), for a memory bound. */
static inline size_t exec_dsum_bytes(const exec_dsum *s) {
  return s->wide ? EXEC_DSUM_DIGITS * sizeof *s->wide : 0;
}

/* Release what s holds and zero it. */
void exec_dsum_free(exec_dsum *s);

#endif
