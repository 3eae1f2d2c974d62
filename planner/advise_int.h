/*
** planner/advise_int.h: the pieces of the row-key advisor shared by planner/advise.c (the
** candidate row keys) and planner/advise_index.c (the candidate secondary indexes): the
** sample of row keys, a hypothetical table with another key, the sample encoded and sorted
** in that key, the counting of keys in a key range, and the judging of one query. Internal
** to planner/advise*.c.
*/
#ifndef ROWAN_PLANNER_ADVISE_INT_H
#define ROWAN_PLANNER_ADVISE_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kv/kv.h"
#include "planner/advise.h"
#include "planner/keyrange.h"
#include "planner/plan.h"

#define PLAN_ADV_NO_VALUE UINT32_MAX /* plan_adv_sample.klen of a row with no value (NULL) */

/* Byte strings, one per sampled row, in the order of the table's row keys: the row keys
** themselves, or one column's cell values (klen PLAN_ADV_NO_VALUE: NULL). */
typedef struct plan_adv_sample {
  uint8_t *buf;       /* the strings, one after another (malloc) */
  size_t len, cap;    /* bytes used / allocated */
  size_t *off;        /* start of string i in buf (malloc) */
  uint32_t *klen;     /* length of string i */
  uint64_t n, capn;   /* strings / room */
} plan_adv_sample;
void plan_adv_sample_free(plan_adv_sample *s);
/* The EXEC_* code of a kv error code. */
int plan_adv_exec_code(int kv_rc);
/* Append one string (p NULL: no value); -1 when out of memory. */
int plan_adv_sample_add(plan_adv_sample *s, const uint8_t *p, uint32_t len);

/* A copy of a table whose PRIMARY KEY is other columns (no store behind it, no indexes). */
typedef struct plan_adv_hyp {
  cat_table t;        /* the copy (columns, pk, n_pk, key_cols replaced) */
  cat_column *cols;   /* malloc */
  int *pk;            /* malloc */
  cat_key_col *kc;    /* malloc */
  const char **names; /* key column names in key order (malloc) */
} plan_adv_hyp;
/* t with the key cols[0..n) (column indexes; a non-key column of t becomes a nullable key
** column: an index's value), desc[0..n). 0, or -1 when out of memory (free h either way). */
int plan_adv_hyp_make(const cat_table *t, const int *cols, const bool *desc, int n,
                      plan_adv_hyp *h);
void plan_adv_hyp_free(plan_adv_hyp *h);

/* The sample encoded in another key, sorted. */
typedef struct plan_adv_keys {
  uint8_t *buf;       /* encoded keys (malloc) */
  size_t bytes;       /* their total length */
  size_t *off;        /* key i's start, in key order (malloc) */
  uint32_t *len;      /* its length (malloc) */
  uint64_t n;         /* keys */
  uint64_t *pfx;      /* start index of each distinct leading-column value, then n (malloc) */
  uint32_t n_pfx;     /* distinct leading-column values */
} plan_adv_keys;
/* Decode each sampled row key of s with t's key codec and encode the row's values of
** columns cols[0..n) with codec kc[0..n) (a column outside t's key takes its value from
** lead, one cell value per sampled row), then sort. EXEC_OK, EXEC_NOMEM, EXEC_CORRUPT
** (a key or value that does not decode), EXEC_TOOBIG, with msg. Free k either way. */
int plan_adv_keys_build(const cat_table *t, const int *cols, const cat_key_col *kc, int n,
                        const plan_adv_sample *s, const plan_adv_sample *lead, plan_adv_keys *k,
                        char *msg, size_t cap);
void plan_adv_keys_free(plan_adv_keys *k);
/* Keys of k in [lo, hi) inside range r, whose bounds are prefixed by pfx[0..pl); buf holds
** 2 x CAT_KEY_MAX bytes of scratch. */
uint64_t plan_adv_count_range(const plan_adv_keys *k, uint64_t lo, uint64_t hi,
                              const uint8_t *pfx, size_t pl, const plan_key_range *r,
                              uint8_t *buf);

/* What the judging knows of the table. */
typedef struct plan_adv_model {
  uint64_t N;         /* table rows */
  double w;           /* table rows per sampled key */
  double bpr[KV_MAX_FAMILIES]; /* per family of t: bytes per table row */
  double rows_share[KV_MAX_FAMILIES]; /* per family: share of the table's rows with a cell */
  uint8_t *buf;       /* 2 x CAT_KEY_MAX scratch for bounds */
  const atomic_int *interrupt; /* the caller's interrupt flag for the store's reads, or NULL */
} plan_adv_model;

/* Plan query sel against h's table (planner/select.c, no store) and count what the plan
** reads in k (h's key): kind, ranges, rows inside them, seeks, the flags and per-row figures
** plan_adv_finish needs. by_prefix: the skip scan by prefix and the first row of each prefix
** may be chosen (a table's key; not an index's). EXEC_OK or the planner's error, with msg. */
int plan_adv_judge(const plan_adv_model *m, const plan_adv_hyp *h, const plan_adv_keys *k,
                   const plan_select *sel, bool by_prefix, plan_adv_est *est, char *msg,
                   size_t cap);
/* Rows, bytes and cost of e once min_rows, the fewest rows any candidate's ranges hold for
** the query, is known (a pushed LIMIT stops after LIMIT / (min_rows / range rows) rows). */
void plan_adv_finish(plan_adv_est *e, uint64_t min_rows);

/* The candidate indexes (planner/advise_index.c): one per non-key column of t that some
** query's WHERE bounds, each judged alone on top of out->cands[0]'s key, filling out->ix
** and out->n_ix. s: the sample of row keys. EXEC_OK or an error with msg. */
int plan_adv_indexes(kv_db *db, const cat_table *t, const plan_select *const *qs, int nq,
                     const plan_adv_model *m, const plan_adv_sample *s, plan_advice *out,
                     char *msg, size_t cap);

#endif /* ROWAN_PLANNER_ADVISE_INT_H */
