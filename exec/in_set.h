/*
** exec/in_set.h: the values of an uncorrelated x IN (SELECT ...) or (a, b) IN (SELECT c, d
** ...) inside an expression, held once per execution as a hash set of rows (built by
** exec/engine_sub.c, read by the internal function IN_SET of exec/func.c), so that each
** outer row costs one hash probe instead of a pass over every value. The test follows SQL's
** IN over rows: TRUE when some row equals x in every column; else NULL when some row could
** equal it (in each column equal, or one side NULL); else FALSE (always FALSE over no rows).
** Not here: running the subquery, memory accounting (the caller's), binding.
*/
#ifndef ROWAN_EXEC_IN_SET_H
#define ROWAN_EXEC_IN_SET_H

#include <stdbool.h>
#include <stdint.h>

#include "catalog/types.h"
#include "planner/plan.h"

typedef struct exec_in_set {
  int ncol;                 /* columns of a row */
  uint32_t n;               /* rows */
  const cat_value *v;       /* n * ncol values, row after row (bytes owned by the caller) */
  uint32_t mask;            /* buckets - 1 (a power of two less one) */
  const uint32_t *bucket;   /* per bucket: 1 + the first NULL-free row in it, or 0 */
  const uint32_t *next;     /* per row: 1 + the next row of its bucket, or 0 */
  const uint32_t *nulls;    /* the rows that hold a NULL */
  uint32_t n_nulls;
} exec_in_set;

/* The set of the n rows v[0 .. n * ncol) in arena A (v is kept, not copied). EXEC_OK, or
** EXEC_NOMEM. */
int exec_in_set_build(plan_arena *A, const cat_value *v, uint32_t n, int ncol,
                      const exec_in_set **out);

/* The parameter value that carries set s to IN_SET (its address as VARBINARY bytes, in A),
** and back. NULL from exec_in_set_of when v is not such a value. */
int exec_in_set_value(plan_arena *A, const exec_in_set *s, cat_value *out);
const exec_in_set *exec_in_set_of(const cat_value *v);
/* The rows of the set v carries (the key range planner's plan_in_set_values_fn, registered by
** exec_session_open): true with *rows, *n and *ncol set, false when v carries none. */
bool exec_in_set_values(const cat_value *v, const cat_value **rows, uint32_t *n, int *ncol);

/* *tv = 1 (TRUE), 0 (FALSE) or -1 (NULL) for x[0 .. s->ncol) IN s. EXEC_OK, or EXEC_ERROR
** (values that do not compare) with msg set. */
int exec_in_set_probe(const exec_in_set *s, const cat_value *x, int *tv, char *msg,
                      size_t cap);

#endif /* ROWAN_EXEC_IN_SET_H */
