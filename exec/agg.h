/*
** exec/agg.h: aggregate functions as accumulators: COUNT(*), COUNT(x), SUM, AVG, MIN, MAX,
** STDDEV_POP, STDDEV_SAMP, each optionally DISTINCT, and the ordered-set aggregates
** PERCENTILE_CONT and PERCENTILE_DISC (`f(p) WITHIN GROUP (ORDER BY x [DESC])`). An accumulator is a fixed-size struct (one per group in a hash
** or streaming aggregate) driven by init, step (one input value), merge (combine two partial
** results of the same aggregate, for parallel or spilled groups) and final.
**
** Rules (Phoenix's, documented for users in docs/FUNCTIONS.md):
**  - NULL inputs are ignored; over no (non-NULL) input every aggregate is NULL except COUNT,
**    which is 0.
**  - COUNT -> BIGINT. SUM of integers -> BIGINT, summed exactly (128 bits) with an error if
**    the final sum does not fit BIGINT; SUM of DECIMAL -> DECIMAL (exact; error past 38
**    digits); SUM of FLOAT/DOUBLE -> DOUBLE, the exact sum rounded once (exec/dsum.h), so
**    the same to the last bit in any order of the rows (parallel partial sums merged).
**  - AVG of integers or DECIMAL -> DECIMAL (exact sum / count, 38 significant digits, half
**    away from zero, trailing zeros removed); AVG of FLOAT/DOUBLE -> DOUBLE.
**  - MIN/MAX of any comparable type (numbers, strings, dates, times, booleans, bytes) -> the
**    argument type; ties keep the first value; strings are copied into the accumulator.
**  - STDDEV_POP/STDDEV_SAMP of numbers -> DOUBLE (Welford's running mean and sum of squared
**    differences); STDDEV_SAMP of a single value is NULL.
**  - PERCENTILE_CONT(p) of numbers -> DOUBLE, interpolated between the two values around
**    position p * (n - 1) of the sorted values; PERCENTILE_DISC(p) of numbers, dates, times
**    -> the argument type: the first value (in the ORDER BY's order) whose cumulative share
**    of the values reaches p. Both keep every non-NULL value of a group (exec_agg_bytes
**    reports how much, for the caller's memory bound); p (0..1) and the order are set by
**    exec_agg_set_order after init.
**  - FIRST_VALUE(x) / LAST_VALUE(x) WITHIN GROUP (ORDER BY k [DESC]) (Phoenix's) -> x's type:
**    the x of the row whose k comes first / last in that order; rows whose k is NULL are
**    ignored; among rows with equal k the first one stepped is kept; x itself may be NULL
**    (then the result is NULL). Stepped with exec_agg_step2 (the value and its key).
**  - NTH_VALUE(x, n) WITHIN GROUP (ORDER BY k [DESC]) (Phoenix's) -> x's type: the x of the
**    n-th row in that order (n >= 1, from exec_agg_set_order's p), NULL when the group has
**    fewer rows with a non-NULL k; the n first rows are kept (exec_agg_bytes counts them).
**  - DISTINCT: a value is stepped once; numbers equal by value (1 = 1.0 for exact types)
**    count once; CHAR trailing spaces are insignificant. The set lives in malloc'd memory
**    owned by the accumulator.
**
** Memory: an accumulator may own heap memory (the DISTINCT set, a MIN/MAX string); always
** exec_agg_free it, also after an error. Not thread-safe (one accumulator, one thread).
** Not here: grouping, hash tables of groups (exec/op*.c).
*/
#ifndef ROWAN_EXEC_AGG_H
#define ROWAN_EXEC_AGG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "catalog/agg_sig.h"
#include "catalog/types.h"
#include "exec/arena.h"
#include "exec/dsum.h"


typedef struct exec_agg_set exec_agg_set; /* DISTINCT set (exec/agg_distinct.c) */

/* NTH_VALUE: one kept row, its order key and value (strings copied into kcopy / vcopy). */
typedef struct exec_agg_nth {
  cat_value key, val;
  uint8_t *kcopy, *vcopy;
} exec_agg_nth;

/* One accumulator. Treat as opaque; fields are documented for debugging. */
typedef struct exec_agg {
  uint8_t id;            /* enum exec_agg_id */
  bool distinct;         /* DISTINCT: values pass through `set` first */
  bool have;             /* at least one non-NULL value stepped */
  cat_type arg_type;     /* argument type given at init */
  cat_type result_type;  /* result type (as cat_agg_lookup gives) */
  int64_t count;         /* values stepped (COUNT, AVG) */
  cat_i128 isum;         /* SUM/AVG of integers: exact sum */
  exec_dsum dsum;        /* SUM/AVG into a DOUBLE: exactly rounded (exec/dsum.h) */
  cat_dec decsum;        /* SUM/AVG of DECIMAL (or integers mixed with DECIMAL) */
  uint8_t sum_kind;      /* 0 none yet, 1 integer, 2 double, 3 decimal */
  cat_value best;        /* MIN/MAX: the current extreme (strings point into buf) */
  uint8_t *buf;          /* MIN/MAX: owned copy of a string extreme (malloc) */
  size_t buf_cap;        /* its capacity */
  exec_agg_set *set;     /* DISTINCT: the values seen (malloc), or NULL */
  double mean;           /* STDDEV_*: running mean */
  double m2;             /* STDDEV_*: running sum of squared differences from the mean */
  cat_value *vals;       /* PERCENTILE_*: the values stepped (malloc) */
  size_t n_vals;         /* used */
  size_t vals_cap;       /* allocated */
  double frac;           /* PERCENTILE_*: p, 0..1 */
  bool desc;             /* PERCENTILE_*, FIRST/LAST_VALUE: WITHIN GROUP (ORDER BY x DESC) */
  cat_value key;         /* FIRST/LAST_VALUE: the order key of the value kept in best */
  exec_agg_nth *nth;     /* NTH_VALUE: the n first rows in the order so far (malloc) */
  size_t n_nth;          /* kept (at most the n of NTH_VALUE) */
  size_t nth_cap;        /* allocated */
  uint8_t *kbuf;         /* FIRST/LAST_VALUE: owned copy of a string key (malloc) */
  size_t kbuf_cap;       /* its capacity */
} exec_agg;

/* Start accumulator a for agg_id with the types cat_agg_lookup used/gave. Allocates
** nothing (the DISTINCT set is made at the first value). */
void exec_agg_init(exec_agg *a, int agg_id, bool distinct, const cat_type *arg_type,
                   const cat_type *result_type);

/* PERCENTILE_CONT/DISC: the fraction p (0 <= p <= 1, checked by the caller) and the
** WITHIN GROUP order; ignored by other aggregates. */
void exec_agg_set_order(exec_agg *a, double p, bool desc);

/* Heap bytes a holds (its DISTINCT set, its percentile values, a double sum's wide digits),
** for a memory bound. */
size_t exec_agg_bytes(const exec_agg *a);

/* FIRST_VALUE / LAST_VALUE / NTH_VALUE: feed one row's value v (NULL allowed) and its order key k (the
** row is ignored when k is NULL or a NULL pointer). Errors as exec_agg_step (EXEC_ERROR when
** k is not comparable with the keys before, EXEC_NOMEM). */
int exec_agg_step2(exec_agg *a, const cat_value *v, const cat_value *k, char *msg, size_t cap);

/* Feed one value (ignored when NULL; for COUNT(*) pass any value, NULL included, or NULL
** pointer v). EXEC_OK; EXEC_CONSTRAINT when a DECIMAL sum passes 38 digits or an integer sum
** passes 2^127 (message names the aggregate); EXEC_ERROR when v's type does not fit the
** aggregate (a string to SUM, values of incomparable types to MIN); EXEC_NOMEM. */
int exec_agg_step(exec_agg *a, const cat_value *v, char *msg, size_t cap);

/* Combine src into dst (same id and types; src is left as it was). For DISTINCT the sets are
** merged so a value seen by both counts once. Errors as exec_agg_step. */
int exec_agg_merge(exec_agg *dst, const exec_agg *src, char *msg, size_t cap);

/* The aggregate's value into *out (rules above). A string result points into the
** accumulator (valid until it is stepped again or freed) unless arena is given, then it is
** copied there. EXEC_OK; EXEC_CONSTRAINT "SUM overflow: ... out of range for BIGINT";
** EXEC_NOMEM. The accumulator may be stepped further afterwards. */
int exec_agg_final(exec_agg *a, cat_value *out, exec_arena *arena, char *msg, size_t cap);

/* Release what a owns; a must be initialized again before reuse. Safe on an initialized
** accumulator that was never stepped, and twice in a row. */
void exec_agg_free(exec_agg *a);

/* ---- The DISTINCT set (exec/agg_distinct.c), used by the accumulators ------------------- */
/* Add v (not NULL) to *set, creating the set on first use: *added is true when v was not
** there yet (equality as DISTINCT above). EXEC_OK or EXEC_NOMEM (set unchanged). */
int exec_agg_set_add(exec_agg_set **set, const cat_value *v, bool *added);
/* Heap bytes the set holds (0 for NULL). */
size_t exec_agg_set_bytes(const exec_agg_set *set);
/* Number of values in the set (0 for NULL). */
size_t exec_agg_set_count(const exec_agg_set *set);
/* The i-th value added (0 <= i < count), rebuilt with the type (and DECIMAL scale) it was
** first added with; strings point into the set and stay valid until the next add or free. */
void exec_agg_set_value(const exec_agg_set *set, size_t i, cat_value *out);
/* Free the set (NULL is fine). */
void exec_agg_set_free(exec_agg_set *set);

#endif /* ROWAN_EXEC_AGG_H */
