/*
** exec/in_set.c: the hash set of an IN (SELECT ...) inside an expression (exec/in_set.h).
** Rows without a NULL are chained in buckets by a hash of their values (exec_value_hash,
** which equal numbers of any type, and CHAR with VARCHAR, share), so an x without a NULL is
** found in one probe; the rows with a NULL are listed apart, since only they can make the
** answer NULL for such an x. An x with a NULL compares with every row (each may equal it);
** for one column that is the first row. Not here: building the rows (exec/engine_sub.c).
*/
#include "exec/in_set.h"

#include <stdio.h>
#include <string.h>

#include "catalog/status.h"
#include "catalog/value.h"
#include "exec/engine.h"
#include "exec/eval.h"

static uint64_t row_hash(const cat_value *x, int ncol) {
  uint64_t h = 0x9E3779B97F4A7C15ull;
  for (int i = 0; i < ncol; i++) h = (h ^ exec_value_hash(&x[i])) * 0x100000001B3ull;
  return h ^ (h >> 29);
}

static bool has_null(const cat_value *x, int ncol) {
  for (int i = 0; i < ncol; i++)
    if (x[i].is_null) return true;
  return false;
}

int exec_in_set_build(plan_arena *A, const cat_value *v, uint32_t n, int ncol,
                      const exec_in_set **out) {
  exec_in_set *s = plan_arena_alloc(A, sizeof *s);
  uint32_t nb = 1;
  while (nb < n && nb < (1u << 30)) nb <<= 1;
  uint32_t *bucket = s ? plan_arena_alloc(A, (size_t)nb * sizeof *bucket) : NULL;
  uint32_t *next = bucket ? plan_arena_alloc(A, (size_t)(n + 1) * sizeof *next) : NULL;
  uint32_t *nulls = next ? plan_arena_alloc(A, (size_t)(n + 1) * sizeof *nulls) : NULL;
  if (!nulls) return EXEC_NOMEM;
  memset(bucket, 0, (size_t)nb * sizeof *bucket);
  memset(s, 0, sizeof *s);
  s->ncol = ncol;
  s->n = n;
  s->v = v;
  s->mask = nb - 1;
  for (uint32_t r = 0; r < n; r++) {
    const cat_value *x = &v[(size_t)r * (size_t)ncol];
    next[r] = 0;
    if (has_null(x, ncol)) {
      nulls[s->n_nulls++] = r;
      continue;
    }
    uint32_t b = (uint32_t)row_hash(x, ncol) & s->mask;
    next[r] = bucket[b];
    bucket[b] = r + 1;
  }
  s->bucket = bucket;
  s->next = next;
  s->nulls = nulls;
  *out = s;
  return EXEC_OK;
}

int exec_in_set_value(plan_arena *A, const exec_in_set *s, cat_value *out) {
  uint8_t *p = plan_arena_alloc(A, sizeof s);
  if (!p) return EXEC_NOMEM;
  memcpy(p, &s, sizeof s);
  *out = cat_v_str(CAT_T_VARBINARY, p, sizeof s);
  return EXEC_OK;
}

const exec_in_set *exec_in_set_of(const cat_value *v) {
  const exec_in_set *s = NULL;
  if (v->is_null || v->type.id != CAT_T_VARBINARY || v->u.s.len != sizeof s) return NULL;
  memcpy(&s, v->u.s.p, sizeof s);
  return s;
}

bool exec_in_set_values(const cat_value *v, const cat_value **rows, uint32_t *n, int *ncol) {
  const exec_in_set *s = exec_in_set_of(v);
  if (!s) return false;
  *rows = s->v;
  *n = s->n;
  *ncol = s->ncol;
  return true;
}

/* Row r against x: 1 equal in every column, -1 could be equal (a NULL on a side where the
** others are equal), 0 differs somewhere. */
static int row_cmp(const exec_in_set *s, uint32_t r, const cat_value *x, int *res, char *msg,
                   size_t cap) {
  const cat_value *y = &s->v[(size_t)r * (size_t)s->ncol];
  *res = 1;
  for (int i = 0; i < s->ncol; i++) {
    if (x[i].is_null || y[i].is_null) {
      *res = -1;
      continue;
    }
    int cmp = 0;
    cat_error ce;
    if (cat_value_compare(&x[i], &y[i], &cmp, &ce) != CAT_OK) {
      snprintf(msg, cap, "%s", ce.msg);
      return EXEC_ERROR;
    }
    if (cmp != 0) {
      *res = 0;
      return EXEC_OK;
    }
  }
  return EXEC_OK;
}

int exec_in_set_probe(const exec_in_set *s, const cat_value *x, int *tv, char *msg,
                      size_t cap) {
  *tv = 0;
  if (!s->n) return EXEC_OK;
  int res, rc;
  bool xnull = has_null(x, s->ncol);
  if (!xnull) {
    for (uint32_t r = s->bucket[row_hash(x, s->ncol) & s->mask]; r; r = s->next[r - 1]) {
      if ((rc = row_cmp(s, r - 1, x, &res, msg, cap))) return rc;
      if (res == 1) {
        *tv = 1;
        return EXEC_OK;
      }
    }
  }
  /* no equal row: NULL when one could be equal (with a NULL x every row is a candidate) */
  uint32_t nc = xnull ? s->n : s->n_nulls;
  for (uint32_t i = 0; i < nc; i++) {
    if ((rc = row_cmp(s, xnull ? i : s->nulls[i], x, &res, msg, cap))) return rc;
    if (res) {
      *tv = -1;
      return EXEC_OK;
    }
  }
  return EXEC_OK;
}
