/*
** exec/eval_value.c: the value comparison, hashing and copying that sorting, grouping and
** DISTINCT share (numbers equal across types hash equal; CHAR trailing spaces ignored).
**
** Not here: expression trees (exec/eval.c), arithmetic and functions (exec/func.h).
*/
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "catalog/decimal.h"
#include "catalog/value.h"
#include "exec/engine.h"
#include "exec/eval.h"

/* ---- Comparison and hashing --------------------------------------------------------------- */
int exec_value_cmp(const cat_value *a, const cat_value *b) {
  int cmp = 0;
  if (cat_value_compare(a, b, &cmp, NULL) != CAT_OK) return (a->type.id > b->type.id) - (a->type.id < b->type.id);
  return cmp;
}

static uint64_t mix(uint64_t h, uint64_t x) {
  h ^= x + 0x9E3779B97F4A7C15ull + (h << 6) + (h >> 2);
  h *= 0xBF58476D1CE4E5B9ull;
  return h ^ (h >> 31);
}

static double as_double(const cat_value *v) {
  if (cat_type_is_integer(v->type.id)) return (double)v->u.i;
  if (v->type.id == CAT_T_DECIMAL) return cat_dec_to_double(v->u.dec);
  return v->u.d;
}

uint64_t exec_value_hash(const cat_value *v) {
  if (v->is_null) return 0x51ED;
  int id = v->type.id;
  if (cat_type_is_numeric(id)) {
    double d = as_double(v);
    if (d == 0) d = 0.0;
    uint64_t bits;
    if (isnan(d)) bits = 0x7FF8000000000000ull;
    else memcpy(&bits, &d, 8);
    return mix(1, bits);
  }
  if (cat_type_has_bytes(id)) {
    size_t n = v->u.s.len;
    if (id == CAT_T_CHAR) n = cat_char_trim(v->u.s.p, n);
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++) h = (h ^ v->u.s.p[i]) * 1099511628211ull;
    return mix(2, h);
  }
  if (id == CAT_T_DATE) return mix(3, (uint64_t)(v->u.i * CAT_US_PER_DAY));
  if (id == CAT_T_TIMESTAMP) return mix(3, (uint64_t)v->u.i);
  if (id == CAT_T_BOOLEAN) return mix(4, v->u.b);
  return mix(5, (uint64_t)v->u.i);
}

int exec_value_own(plan_arena *a, cat_value *v) {
  if (v->is_null) return EXEC_OK;
  if (!cat_type_has_bytes(v->type.id) || !v->u.s.len)
    return EXEC_OK;
  char *p = plan_arena_strndup(a, (const char *)v->u.s.p, v->u.s.len);
  if (!p) return EXEC_NOMEM;
  v->u.s.p = (const uint8_t *)p;
  return EXEC_OK;
}
