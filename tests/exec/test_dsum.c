/*
** tests/exec/test_dsum.c: the exactly rounded double sums of exec/dsum.h (SUM and AVG into a
** DOUBLE). Every sum is checked bit for bit against a reference computed here another way
** (Shewchuk's exact partials, rounded half to even at the end), over seeded random sets:
** values of one magnitude, of every magnitude from subnormals to 1e290, heavy cancellation,
** integers past 2^53 whose sums tie; the same values in other orders and split into partial
** sums merged in other orders give the same bits. Also IEEE's special cases (NaN, infinities,
** -0.0, an exact sum past the largest double, one that overflows midway and comes back, a
** tie half a unit above the largest double) and sums that move to wide digits and back into
** range, the 128-bit sum filled to -2^127 and merged. Not here: the SQL aggregates around it
** (tests/exec/test_agg.c, tests/sql/sum_exact.test).
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exec/dsum.h"
#include "testutil.h"

/* ---- The reference: exact partials (non-overlapping doubles whose sum is the exact sum) ---- */
typedef struct ref {
  double *p;
  size_t n, cap;
} ref;

static void ref_add(ref *r, double x) {
  size_t k = 0;
  for (size_t j = 0; j < r->n; j++) {
    double y = r->p[j];
    if (fabs(x) < fabs(y)) {
      double t = x;
      x = y;
      y = t;
    }
    double hi = x + y, lo = y - (hi - x); /* exact: hi + lo == x + y */
    if (lo != 0.0) r->p[k++] = lo;
    x = hi;
  }
  if (k == r->cap) {
    r->cap = r->cap ? r->cap * 2 : 64;
    r->p = realloc(r->p, r->cap * sizeof *r->p);
    assert_non_null(r->p);
  }
  r->p[k++] = x;
  r->n = k;
}

/* The partials' sum rounded once: add from the largest down until the addition is inexact,
** then settle a tie the rounding of the last addition decided without the partials below. */
static double ref_value(const ref *r) {
  size_t n = r->n;
  if (!n) return 0.0;
  double hi = r->p[--n], lo = 0.0;
  while (n > 0) {
    double x = hi, y = r->p[--n];
    hi = x + y;
    lo = y - (hi - x);
    if (lo != 0.0) break;
  }
  if (n > 0 && ((lo < 0 && r->p[n - 1] < 0) || (lo > 0 && r->p[n - 1] > 0))) {
    double y = lo * 2, x = hi + y;
    if (y == x - hi) hi = x; /* lo was exactly half an ulp, and the rest lies beyond it */
  }
  return hi;
}

static uint64_t bits(double d) {
  uint64_t b;
  memcpy(&b, &d, sizeof b);
  return b;
}

static void same_bits(double got, double want, const char *what) {
  if (bits(got) != bits(want) && !(isnan(got) && isnan(want)))
    fail_msg("%s: got %.17g (%016llx), want %.17g (%016llx)", what, got,
             (unsigned long long)bits(got), want, (unsigned long long)bits(want));
}

static double sum_of(const double *x, size_t n) {
  exec_dsum s = {0};
  for (size_t i = 0; i < n; i++) assert_int_equal(exec_dsum_add(&s, x[i]), 0);
  double v = exec_dsum_value(&s);
  exec_dsum_free(&s);
  return v;
}

static double ref_of(const double *x, size_t n) {
  ref r = {0};
  for (size_t i = 0; i < n; i++) ref_add(&r, x[i]);
  double v = ref_value(&r);
  free(r.p);
  return v;
}

/* ---- Failing allocations (malloc and calloc are wrapped for this program, CMakeLists.txt) ---- */
static bool fail_allocs;
void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t size);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t n, size_t size);
void *__wrap_malloc(size_t n) { return fail_allocs ? NULL : __real_malloc(n); }
void *__wrap_calloc(size_t n, size_t size) { return fail_allocs ? NULL : __real_calloc(n, size); }

/* ---- Seeded random sets ---- */
static uint64_t rng;
static uint64_t next64(void) {
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return rng;
}
static double unit(void) { return (double)(next64() >> 11) / 9007199254740992.0; }

enum { KINDS = 6 };
static double draw(int kind) {
  double s = (next64() & 1) ? -1.0 : 1.0;
  switch (kind) {
    case 0: return s * (unit() * 60.0 - 20.0);                       /* temperatures */
    case 1: return s * ldexp(1.0 + unit(), (int)(next64() % 1950) - 1000); /* every magnitude */
    case 2: return s * ldexp((double)(next64() >> 11), -1074);       /* subnormals and tiny */
    case 3: return s * (double)((next64() >> 10) | 1);               /* integers past 2^53 */
    case 4: return s * ldexp(1.0 + unit(), (int)(next64() % 120));   /* cancellation */
    default: return s * round(unit() * 1000.0) / 10.0;               /* one decimal place */
  }
}

static void shuffle(double *x, size_t n) {
  for (size_t i = n; i > 1; i--) {
    size_t j = next64() % i;
    double t = x[i - 1];
    x[i - 1] = x[j];
    x[j] = t;
  }
}

/* The sum of x in k random pieces, each summed alone, merged in a random order. */
static double merged_of(const double *x, size_t n, int k) {
  exec_dsum part[8];
  memset(part, 0, sizeof part);
  for (size_t i = 0; i < n; i++)
    assert_int_equal(exec_dsum_add(&part[next64() % (uint64_t)k], x[i]), 0);
  exec_dsum all = {0};
  int ord[8];
  for (int i = 0; i < k; i++) ord[i] = i;
  for (int i = k; i > 1; i--) {
    int j = (int)(next64() % (uint64_t)i), t = ord[i - 1];
    ord[i - 1] = ord[j];
    ord[j] = t;
  }
  for (int i = 0; i < k; i++) assert_int_equal(exec_dsum_merge(&all, &part[ord[i]]), 0);
  double v = exec_dsum_value(&all);
  exec_dsum_free(&all);
  for (int i = 0; i < k; i++) exec_dsum_free(&part[i]);
  return v;
}

static void test_random_sets(void **st) {
  (void)st;
  rng = tu_seed("dsum random sets") | 1;
  char what[96];
  for (int round = 0; round < 60; round++) {
    int kind = round % KINDS;
    size_t n = 1 + next64() % (size_t)(round < KINDS ? 3 : 2000);
    double *x = malloc(n * sizeof *x);
    assert_non_null(x);
    for (size_t i = 0; i < n; i++) x[i] = draw(round % 7 == 6 ? (int)(next64() % KINDS) : kind);
    double want = ref_of(x, n);
    snprintf(what, sizeof what, "round %d (kind %d, %zu values)", round, kind, n);
    same_bits(sum_of(x, n), want, what);
    shuffle(x, n);
    same_bits(sum_of(x, n), want, what);
    same_bits(merged_of(x, n, 1 + (int)(next64() % 8)), want, what);
    free(x);
  }
}

/* Cases a plain running sum gets wrong, each against the reference and its known value. */
static void test_known_sums(void **st) {
  (void)st;
  double a[] = {1e100, 1.0, -1e100};
  same_bits(sum_of(a, 3), 1.0, "1e100 + 1 - 1e100");
  double b[10];
  for (int i = 0; i < 10; i++) b[i] = 0.1;
  same_bits(sum_of(b, 10), ref_of(b, 10), "ten 0.1");
  same_bits(sum_of(b, 10), 1.0, "ten 0.1 is 1");
  double c[] = {9007199254740992.0, 1.0}; /* 2^53 + 1: a tie, to even */
  same_bits(sum_of(c, 2), 9007199254740992.0, "2^53 + 1");
  double d[] = {9007199254740992.0, 1.0, ldexp(1.0, -60)}; /* past the tie: up */
  same_bits(sum_of(d, 3), 9007199254740994.0, "2^53 + 1 + 2^-60");
  double e[] = {DBL_MAX, DBL_MAX, -DBL_MAX}; /* overflows midway, not in the end */
  same_bits(sum_of(e, 3), DBL_MAX, "MAX + MAX - MAX");
  double f[] = {DBL_MAX, DBL_MAX};
  same_bits(sum_of(f, 2), INFINITY, "MAX + MAX");
  double g[] = {-DBL_MAX, -DBL_MAX};
  same_bits(sum_of(g, 2), -INFINITY, "-MAX - MAX");
  double h[] = {DBL_MIN, -ldexp(1.0, -1074)}; /* into the subnormals, exactly */
  same_bits(sum_of(h, 2), DBL_MIN - ldexp(1.0, -1074), "MIN - 2^-1074");
  double i[] = {1e308, 1e-308, -1e308}; /* wide digits, then back in range */
  same_bits(sum_of(i, 3), 1e-308, "1e308 + 1e-308 - 1e308");
}

static void test_special_values(void **st) {
  (void)st;
  double nz[] = {-0.0, -0.0};
  double v = sum_of(nz, 2);
  assert_true(v == 0.0 && signbit(v)); /* -0.0 alone: -0.0, as IEEE adds them */
  double z[] = {-0.0, 0.0};
  v = sum_of(z, 2);
  assert_true(v == 0.0 && !signbit(v));
  double c[] = {1.5, -1.5, -0.0};
  v = sum_of(c, 3);
  assert_true(v == 0.0 && !signbit(v)); /* an exact zero of nonzero values is +0.0 */
  double n[] = {1.0, NAN, 2.0};
  assert_true(isnan(sum_of(n, 3)));
  double pi[] = {1.0, INFINITY, -1e308};
  same_bits(sum_of(pi, 3), INFINITY, "1 + Inf");
  double ni[] = {-INFINITY, 5.0};
  same_bits(sum_of(ni, 2), -INFINITY, "-Inf + 5");
  double both[] = {INFINITY, -INFINITY};
  assert_true(isnan(sum_of(both, 2)));
  /* merged: the special parts travel with the partial sums */
  exec_dsum a = {0}, b = {0};
  assert_int_equal(exec_dsum_add(&a, INFINITY), 0);
  assert_int_equal(exec_dsum_add(&b, 1.0), 0);
  assert_int_equal(exec_dsum_merge(&b, &a), 0);
  same_bits(exec_dsum_value(&b), INFINITY, "merged Inf");
  exec_dsum_free(&a);
  exec_dsum_free(&b);
}

/* Many values of every magnitude: the wide digits carry across many additions, merged with
** sums still narrow and sums already wide. */
static void test_wide_long(void **st) {
  (void)st;
  rng = tu_seed("dsum wide long") * 2 + 1;
  enum { N = 400000 };
  double *x = malloc(N * sizeof *x);
  assert_non_null(x);
  for (size_t i = 0; i < N; i++) x[i] = draw(i % 3 ? 0 : 1);
  double want = ref_of(x, N);
  same_bits(sum_of(x, N), want, "400,000 values");
  same_bits(merged_of(x, N, 5), want, "400,000 values in 5 parts");
  exec_dsum narrow = {0}, wide = {0};
  for (size_t i = 0; i < N / 2; i++)
    assert_int_equal(exec_dsum_add(i % 3 ? &narrow : &wide, x[i]), 0);
  assert_non_null(wide.wide);
  assert_null(narrow.wide);
  for (size_t i = N / 2; i < N; i++) assert_int_equal(exec_dsum_add(&narrow, x[i]), 0);
  assert_int_equal(exec_dsum_merge(&narrow, &wide), 0);
  same_bits(exec_dsum_value(&narrow), want, "a narrow sum merged with a wide one");
  exec_dsum_free(&narrow);
  exec_dsum_free(&wide);
  free(x);
}

/* The paths between the 128-bit sum and the wide digits, each against the reference (no
** value here overflows its partials) or against a value known by hand. */
static void test_edge_paths(void **st) {
  (void)st;
  /* the inline fast path fills the 128-bit sum to -2^127 exactly (every value's unit at or
     above the first's), then a value it cannot take moves the sum to wide digits */
  double p = 4503599627370497.0, q = -0x1p122; /* 2^52 + 1: unit 1 */
  exec_dsum s = {0}, t = {0};
  assert_int_equal(exec_dsum_add(&s, p), 0);
  assert_int_equal(exec_dsum_add(&s, -p), 0);
  for (int i = 0; i < 32; i++) assert_int_equal(exec_dsum_add(&s, q), 0);
  assert_null(s.wide);
  same_bits(exec_dsum_value(&s), -0x1p127, "-2^127 in 128 bits");
  assert_int_equal(exec_dsum_add(&t, 0.5), 0); /* a merge of the full sum into another */
  assert_int_equal(exec_dsum_merge(&t, &s), 0);
  same_bits(exec_dsum_value(&t), -0x1p127, "-2^127 + 0.5");
  assert_int_equal(exec_dsum_add(&s, -1.0), 0);
  assert_non_null(s.wide);
  same_bits(exec_dsum_value(&s), -0x1p127, "-2^127 - 1");
  assert_int_equal(exec_dsum_add(&s, -0x1p74), 0); /* half a unit and 1 past -2^127 */
  same_bits(exec_dsum_value(&s), -0x1.0000000000001p127, "-2^127 - 2^74 - 1");
  exec_dsum_free(&s);
  exec_dsum_free(&t);
  /* a sum whose low bits are zero far above its unit, then a value coarser than 2^125 units
     with bits below the sum's top: the unit is raised only as far as that value's */
  double up[] = {1.0, 0x1.fffffffffffffp52, 0x1.fffffffffffffp105, 0x1.0000000000001p152};
  same_bits(sum_of(up, 4), ref_of(up, 4), "a unit raised to the new value's");
  /* narrow sums of different units merged both ways, and into wide ones */
  double lo[] = {1e-300, 3e-300, -7.5e-301}, hi[] = {1e10, 1.0, -0.25, 3e15};
  double both[7];
  memcpy(both, lo, sizeof lo);
  memcpy(both + 3, hi, sizeof hi);
  double want = ref_of(both, 7);
  for (int way = 0; way < 2; way++) {
    exec_dsum a = {0}, b = {0};
    for (int i = 0; i < 3; i++) assert_int_equal(exec_dsum_add(&a, lo[i]), 0);
    for (int i = 0; i < 4; i++) assert_int_equal(exec_dsum_add(&b, hi[i]), 0);
    assert_int_equal(way ? exec_dsum_merge(&a, &b) : exec_dsum_merge(&b, &a), 0);
    same_bits(exec_dsum_value(way ? &a : &b), want, "narrow sums of two units merged");
    exec_dsum_free(&a);
    exec_dsum_free(&b);
  }
  /* wide sums: a tie decided by a bit far below (sticky), negative ones, a subnormal result */
  double st1[] = {0x1p53, 1.0, 0x1p-1074}, st2[] = {0x1p53, 1.0, -0x1p-1074};
  same_bits(sum_of(st1, 3), 0x1.0000000000001p53, "2^53 + 1 + 2^-1074");
  same_bits(sum_of(st2, 3), 0x1p53, "2^53 + 1 - 2^-1074");
  double ng[] = {-1e308, -1e-308, 1e-300, -3.5, 2e307};
  same_bits(sum_of(ng, 5), ref_of(ng, 5), "a negative wide sum");
  double sub[] = {1e300, 0x1p-1074, 0x1p-1073, -1e300};
  same_bits(sum_of(sub, 4), 0x3p-1074, "a wide sum back to a subnormal");
  double nst[] = {-0x1p53, -1.0, -0x1p-1074};
  same_bits(sum_of(nst, 3), -0x1.0000000000001p53, "-(2^53 + 1 + 2^-1074)");
}

/* Sums at the largest double: half its unit above it is a tie that rounds to even, an
** infinity; anything less stays the largest double. Narrow, wide and merged. */
static void test_overflow_edge(void **st) {
  (void)st;
  double tie[] = {DBL_MAX, 0x1p970}, ntie[] = {-DBL_MAX, -0x1p970};
  same_bits(sum_of(tie, 2), INFINITY, "MAX + half its unit");
  same_bits(sum_of(ntie, 2), -INFINITY, "-MAX - half its unit");
  double under[] = {DBL_MAX, 0x1p970, -0x1p-1074}, less[] = {DBL_MAX, 0x1.fffffffffffffp969};
  same_bits(sum_of(under, 3), DBL_MAX, "MAX + half its unit - 2^-1074");
  same_bits(sum_of(less, 2), DBL_MAX, "MAX + just under half its unit");
  double back[] = {DBL_MAX, 0x1p970, DBL_MAX, -DBL_MAX, -0x1p-1074};
  same_bits(sum_of(back, 5), DBL_MAX, "past the largest and back, wide");
  exec_dsum a = {0}, b = {0};
  assert_int_equal(exec_dsum_add(&a, DBL_MAX), 0);
  assert_int_equal(exec_dsum_add(&b, 0x1p970), 0);
  assert_int_equal(exec_dsum_merge(&a, &b), 0);
  same_bits(exec_dsum_value(&a), INFINITY, "MAX merged with half its unit");
  assert_int_equal(exec_dsum_add(&b, -0x1p-1074), 0);
  assert_int_equal(exec_dsum_merge(&b, &a), 0); /* b: 2^970 - 2^-1074 + (MAX + 2^970) */
  same_bits(exec_dsum_value(&b), INFINITY, "MAX + 2^971 - 2^-1074");
  exec_dsum_free(&a);
  exec_dsum_free(&b);
}

/* Out of memory: an addition or a merge that needs wide digits and cannot have them says
** so and leaves its sum as it was, special values and zeros included. */
static void test_out_of_memory(void **st) {
  (void)st;
  exec_dsum wide = {0}, dst = {0};
  assert_int_equal(exec_dsum_add(&wide, 1e300), 0);
  assert_int_equal(exec_dsum_add(&wide, 1e-300), 0); /* wide digits */
  assert_int_equal(exec_dsum_add(&wide, INFINITY), 0);
  assert_int_equal(exec_dsum_add(&wide, 0.0), 0);
  assert_non_null(wide.wide);
  /* into a sum of -0.0 alone: the copy of the digits fails */
  assert_int_equal(exec_dsum_add(&dst, -0.0), 0);
  fail_allocs = true;
  int rc = exec_dsum_merge(&dst, &wide);
  fail_allocs = false;
  assert_int_equal(rc, -1);
  same_bits(exec_dsum_value(&dst), -0.0, "-0.0 after a failed merge");
  /* into a narrow sum: the move to wide digits fails */
  assert_int_equal(exec_dsum_add(&dst, 1.0), 0);
  fail_allocs = true;
  rc = exec_dsum_merge(&dst, &wide);
  fail_allocs = false;
  assert_int_equal(rc, -1);
  assert_null(dst.wide);
  same_bits(exec_dsum_value(&dst), 1.0, "1 after a failed merge");
  fail_allocs = true;
  rc = exec_dsum_add(&dst, 1e-300);
  fail_allocs = false;
  assert_int_equal(rc, -1);
  same_bits(exec_dsum_value(&dst), 1.0, "1 after a failed addition");
  assert_int_equal(exec_dsum_merge(&dst, &wide), 0); /* and then it works */
  same_bits(exec_dsum_value(&dst), INFINITY, "1 + 1e300 + 1e-300 + Inf");
  exec_dsum_free(&dst);
  exec_dsum_free(&wide);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_random_sets),
      cmocka_unit_test(test_known_sums),
      cmocka_unit_test(test_special_values),
      cmocka_unit_test(test_wide_long),
      cmocka_unit_test(test_edge_paths),
      cmocka_unit_test(test_overflow_edge),
      cmocka_unit_test(test_out_of_memory),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
