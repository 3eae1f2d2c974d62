/*
** exec/colagg_int.h: internals of the columnar aggregate pushdown (exec/colagg.h) shared by
** exec/op_colagg.c (the spec, the consumer, the row-way reads) and exec/op_colagg_group.c
** (GROUP BY on key columns: the groups of one chunk, their merge and order). Not part of
** exec's contract.
*/
#ifndef ROWAN_EXEC_COLAGG_INT_H
#define ROWAN_EXEC_COLAGG_INT_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "exec/arena.h"
#include "exec/func.h"
#include "exec/op.h"
#include "planner/colagg.h"

/* How a group's key comes from a row key: per GROUP BY term, a primary key column, rounded
** (a date rounding the query prepared, exec/op.h gfast) or not. */
typedef struct exec_cg_shape {
  const cat_table *t;          /* the table */
  const plan_select *s;        /* its aggregates (accumulator types) */
  int n_group;                 /* GROUP BY terms */
  int kcols;                   /* key columns decoded: 1 + the last one a term reads */
  int kpos[PLAN_COLAGG_MAX_GROUP]; /* per term: its key column's position */
  const exec_date_round *round[PLAN_COLAGG_MAX_GROUP]; /* per term: the rounding, or NULL */
  cat_type ktype[PLAN_COLAGG_MAX_GROUP]; /* per term: its key column's type */
  int64_t now_us;              /* the statement's time (exec_func_ctx) */
  bool runs;                   /* every key column before the last one read is a plain term:
                                  two rows of one group with the same bytes up to the last
                                  column hold every row between them (the terms on the last
                                  column are monotone) */
} exec_cg_shape;

/* The groups one chunk (one thread) found, in the order found, each with the first (least)
** row key seen for it. A group's row holds its n_group key values and, after them, its
** position in ord (BIGINT; rows are keyed by the first n_group values). */
typedef struct exec_cg {
  const exec_cg_shape *sh;     /* shared, read-only */
  exec_rowset set;             /* group key -> row with accumulators */
  exec_mrow **ord;             /* the groups in the order found */
  uint8_t **fk;                /* per group: its least row key seen (malloc) */
  uint32_t *fkl;               /* its length */
  size_t n, cap;               /* groups / room */
  exec_arena arena;            /* rounding results' scratch */
  exec_mrow *last;             /* the group found last, or NULL */
  uint8_t *lpre;               /* the encoded key columns before the last one decoded of
                                  the row that found it (malloc): a row beginning with the
                                  same bytes has the same values there */
  uint32_t lpre_len, lpre_cap; /* their length / room */
  uint8_t *gpre;               /* the encoded key columns up to and including the last one
                                  decoded, of the row that found `last` (malloc): a row
                                  beginning with the same bytes is of that group */
  uint32_t gpre_len, gpre_cap; /* their length (0: none kept) / room */
  bool gpre_all;               /* they were the whole key (then only an equal key matches) */
  uint8_t span_lo[16];         /* the least and greatest encodings of the last column read */
  uint8_t span_hi[16];         /* whose terms give `last`'s values (its terms are TIMESTAMP
                                  roundings: the inputs rounding to the group's values,
                                  exec_fn_date_round_span): a row beginning with lpre and then
                                  bytes between them is of that group */
  uint32_t span_w;             /* their width (0: no span kept) */
  uint8_t *scratch;            /* key decoding scratch (malloc) */
  size_t scratch_cap;          /* its size */
} exec_cg;

/* The accumulators of the group of row key (key, len) in g, added (with initialized
** accumulators) when new; lower: the key may come before the group's first key seen (rows
** read out of key order). *acc NULL on error: EXEC_CORRUPT (a key that does not decode),
** EXEC_CONSTRAINT (a rounding out of range), EXEC_NOMEM, with msg filled. */
int exec_cg_find(exec_cg *g, const uint8_t *key, uint32_t len, bool lower, exec_agg **acc,
                 char *msg, size_t cap);
/* Whether row key (key, len) is of g->last's group by its span (exec_cg.span_lo/hi): it
** begins with lpre, then the last column read lies between the span's encodings. */
static inline bool exec_cg_in_span(const exec_cg *g, const uint8_t *key, uint32_t len) {
  return g->last && g->span_w && len >= g->lpre_len + g->span_w &&
         (!g->lpre_len || memcmp(key, g->lpre, g->lpre_len) == 0) &&
         memcmp(key + g->lpre_len, g->span_lo, g->span_w) >= 0 &&
         memcmp(key + g->lpre_len, g->span_hi, g->span_w) <= 0;
}
/* Merge from (a later chunk) into g: its groups' accumulators merged or its groups added.
** EXEC_OK, EXEC_CONSTRAINT (exec_agg_merge), EXEC_NOMEM; msg filled. */
int exec_cg_merge(exec_cg *g, exec_cg *from, char *msg, size_t cap);
/* Order g->ord by first key seen: the order the row path meets the groups in. */
void exec_cg_sort(exec_cg *g);
/* Hand g's groups (in g->ord's order) to the caller: *rows (malloc; free each with
** exec_mrow_free(r, n_aggs), then the array), *n of them. g keeps no group. */
void exec_cg_detach(exec_cg *g, exec_mrow ***rows, size_t *n);
/* Free g's groups (accumulators too) and buffers. */
void exec_cg_free(exec_cg *g);

#endif /* ROWAN_EXEC_COLAGG_INT_H */
