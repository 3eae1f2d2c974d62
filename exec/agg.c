/*
** exec/agg.c: the aggregate accumulators of exec/agg.h: init, step, merge, final and free
** for COUNT(*), COUNT, SUM, AVG, MIN and MAX, STDDEV_POP and STDDEV_SAMP (Welford; partial
** results merged with Chan's formula), PERCENTILE_CONT and PERCENTILE_DISC (every value
** kept, sorted at final), FIRST_VALUE, LAST_VALUE and NTH_VALUE (the value of the extreme,
** or n-th, order key), DISTINCT through exec/agg_distinct.c. Integer sums are exact in 128
** bits and checked against BIGINT at the end (so a running sum may pass the BIGINT range
** and come back); DECIMAL sums are exact to 38 digits. Not here: grouping (exec/op*.c),
** names and result types (catalog/agg_sig.c).
*/
#include "exec/agg.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalog/decimal.h"
#include "catalog/value.h"
#include "exec/engine.h"

static int err(char *msg, size_t cap, int code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int err(char *msg, size_t cap, int code, const char *fmt, ...) {
  if (msg && cap) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, cap, fmt, ap);
    va_end(ap);
  }
  return code;
}

void exec_agg_init(exec_agg *a, int agg_id, bool distinct, const cat_type *arg_type,
                   const cat_type *result_type) {
  memset(a, 0, sizeof *a);
  a->id = (uint8_t)agg_id;
  a->distinct = distinct && agg_id != EXEC_AGG_COUNT_STAR;
  if (arg_type) a->arg_type = *arg_type;
  if (result_type) a->result_type = *result_type;
  a->best = cat_v_null(a->result_type);
}

void exec_agg_set_order(exec_agg *a, double p, bool desc) {
  a->frac = p;
  a->desc = desc;
}

size_t exec_agg_bytes(const exec_agg *a) {
  size_t b = exec_agg_set_bytes(a->set) + a->vals_cap * sizeof(cat_value) + a->buf_cap +
             a->kbuf_cap + exec_dsum_bytes(&a->dsum);
  for (size_t i = 0; i < a->n_nth; i++) {
    const exec_agg_nth *e = &a->nth[i];
    b += sizeof *e + (e->kcopy ? e->key.u.s.len : 0) + (e->vcopy ? e->val.u.s.len : 0);
  }
  return b;
}

static int add_dev(exec_agg *a, const cat_value *v, char *msg, size_t cap) {
  int id = v->type.id;
  if (!cat_type_is_numeric(id))
    return err(msg, cap, EXEC_ERROR, "function %s does not accept %s", cat_agg_name(a->id),
               cat_type_name(id));
  double x = cat_type_is_float(id) ? v->u.d : cat_type_is_integer(id) ? (double)v->u.i
                                                                      : cat_dec_to_double(v->u.dec);
  a->count++;
  double d = x - a->mean;
  a->mean += d / (double)a->count;
  a->m2 += d * (x - a->mean);
  a->have = true;
  return EXEC_OK;
}

static int add_val(exec_agg *a, const cat_value *v, char *msg, size_t cap) {
  int id = v->type.id;
  if (a->id == EXEC_AGG_PERCENTILE_CONT ? !cat_type_is_numeric(id) : !cat_agg_disc_type(id))
    return err(msg, cap, EXEC_ERROR, "function %s does not accept %s", cat_agg_name(a->id),
               cat_type_name(id));
  if (a->n_vals == a->vals_cap) {
    size_t c2 = a->vals_cap ? a->vals_cap * 2 : 16;
    cat_value *p = realloc(a->vals, c2 * sizeof *p);
    if (!p) return err(msg, cap, EXEC_NOMEM, "out of memory in %s", cat_agg_name(a->id));
    a->vals = p;
    a->vals_cap = c2;
  }
  a->vals[a->n_vals++] = *v;
  a->have = true;
  return EXEC_OK;
}

static int cmp_vals(const void *x, const void *y) {
  int c = 0;
  cat_error e;
  if (cat_value_compare(x, y, &c, &e) != CAT_OK) return 0;
  return c;
}

static double as_double(const cat_value *v) {
  int id = v->type.id;
  return cat_type_is_float(id) ? v->u.d : cat_type_is_integer(id) ? (double)v->u.i
                                                                  : cat_dec_to_double(v->u.dec);
}

/* PERCENTILE_CONT/DISC over the kept values (sorted here; a->have is true). */
static int pct_final(exec_agg *a, cat_value *out) {
  size_t n = a->n_vals;
  qsort(a->vals, n, sizeof *a->vals, cmp_vals);
  /* the i-th value in the WITHIN GROUP order */
#define AT(i) (&a->vals[a->desc ? n - 1 - (i) : (i)])
  if (a->id == EXEC_AGG_PERCENTILE_CONT) {
    double rn = a->frac * (double)(n - 1);
    size_t lo = (size_t)floor(rn), hi = (size_t)ceil(rn);
    if (hi >= n) hi = n - 1;
    if (lo > hi) lo = hi;
    double vl = as_double(AT(lo)), vh = as_double(AT(hi));
    *out = cat_v_double(lo == hi ? vl : vl + (rn - (double)lo) * (vh - vl));
    return EXEC_OK;
  }
  double k = ceil(a->frac * (double)n);
  size_t i = k <= 1 ? 0 : (size_t)k - 1;
  if (i >= n) i = n - 1;
  *out = *AT(i);
#undef AT
  return EXEC_OK;
}

static int add_num(exec_agg *a, const cat_value *v, char *msg, size_t cap) {
  int id = v->type.id;
  const char *f = cat_agg_name(a->id);
  if (!cat_type_is_numeric(id))
    return err(msg, cap, EXEC_ERROR, "function %s does not accept %s", f, cat_type_name(id));
  if (a->result_type.id == CAT_T_DOUBLE || a->result_type.id == 0) {
    double x = cat_type_is_float(id) ? v->u.d : cat_type_is_integer(id) ? (double)v->u.i
                                                                        : cat_dec_to_double(v->u.dec);
    if (exec_dsum_add(&a->dsum, x)) return err(msg, cap, EXEC_NOMEM, "out of memory");
  } else if (cat_type_is_integer(id)) {
    if (__builtin_add_overflow(a->isum, (cat_i128)v->u.i, &a->isum))
      return err(msg, cap, EXEC_CONSTRAINT, "%s overflow", f);
  } else {
    cat_dec d;
    cat_error e;
    if (id == CAT_T_DECIMAL) d = v->u.dec;
    else if (cat_dec_from_double(v->u.d, &d, &e) != CAT_OK)
      return err(msg, cap, EXEC_CONSTRAINT, "%s: value %g out of range for DECIMAL", f, v->u.d);
    if (cat_dec_add(a->decsum, d, &a->decsum, &e) != CAT_OK)
      return err(msg, cap, EXEC_CONSTRAINT, "%s overflow: the sum needs more than 38 digits", f);
  }
  a->count++;
  a->have = true;
  return EXEC_OK;
}

/* *dst = *v, a string's bytes copied into *buf (grown as needed). EXEC_OK or EXEC_NOMEM. */
static int keep_value(cat_value *dst, const cat_value *v, uint8_t **buf, size_t *buf_cap) {
  *dst = *v;
  if (!v->is_null && cat_type_has_bytes(v->type.id)) {
    size_t n = v->u.s.len;
    if (n > *buf_cap) {
      size_t c2 = *buf_cap ? *buf_cap : 32;
      while (c2 < n) c2 *= 2;
      uint8_t *b = realloc(*buf, c2);
      if (!b) return EXEC_NOMEM;
      *buf = b;
      *buf_cap = c2;
    }
    if (n) memmove(*buf, v->u.s.p, n);
    dst->u.s.p = *buf;
  }
  return EXEC_OK;
}

static int take_best(exec_agg *a, const cat_value *v, char *msg, size_t cap) {
  if (a->have) {
    int cmp;
    cat_error e;
    if (cat_value_compare(v, &a->best, &cmp, &e) != CAT_OK)
      return err(msg, cap, EXEC_ERROR, "%s: %s", cat_agg_name(a->id), e.msg);
    if (a->id == EXEC_AGG_MIN ? cmp >= 0 : cmp <= 0) return EXEC_OK;
  }
  if (keep_value(&a->best, v, &a->buf, &a->buf_cap)) return err(msg, cap, EXEC_NOMEM, "out of memory");
  a->have = true;
  return EXEC_OK;
}

/* A string value's own copy of its bytes (*copy, malloc'd; NULL for other values). */
static int own_copy(cat_value *v, uint8_t **copy) {
  *copy = NULL;
  if (v->is_null || !cat_type_has_bytes(v->type.id))
    return EXEC_OK;
  *copy = malloc(v->u.s.len ? v->u.s.len : 1);
  if (!*copy) return EXEC_NOMEM;
  if (v->u.s.len) memcpy(*copy, v->u.s.p, v->u.s.len);
  v->u.s.p = *copy;
  return EXEC_OK;
}

static void nth_free(exec_agg *a) {
  for (size_t i = 0; i < a->n_nth; i++) {
    free(a->nth[i].kcopy);
    free(a->nth[i].vcopy);
  }
  free(a->nth);
  a->nth = NULL;
  a->n_nth = a->nth_cap = 0;
}

/* NTH_VALUE: keep (k, v) among the n first rows in the order (ties: the ones met first). */
static int nth_step(exec_agg *a, const cat_value *v, const cat_value *k, char *msg, size_t cap) {
  size_t n = a->frac >= 1 ? (size_t)a->frac : 1;
  size_t pos = a->n_nth; /* after every kept row that comes before it or ties with it */
  bool want_smaller = !a->desc;
  while (pos > 0) {
    int cmp;
    cat_error e;
    if (cat_value_compare(k, &a->nth[pos - 1].key, &cmp, &e) != CAT_OK)
      return err(msg, cap, EXEC_ERROR, "%s: %s", cat_agg_name(a->id), e.msg);
    if (want_smaller ? cmp >= 0 : cmp <= 0) break;
    pos--;
  }
  if (pos >= n) return EXEC_OK;
  if (a->n_nth == n) { /* full: the last one goes */
    free(a->nth[n - 1].kcopy);
    free(a->nth[n - 1].vcopy);
    a->n_nth--;
  } else if (a->n_nth == a->nth_cap) {
    size_t nc = a->nth_cap ? a->nth_cap * 2 : 16;
    if (nc > n) nc = n;
    exec_agg_nth *p = realloc(a->nth, nc * sizeof *p);
    if (!p) return err(msg, cap, EXEC_NOMEM, "out of memory in %s", cat_agg_name(a->id));
    a->nth = p;
    a->nth_cap = nc;
  }
  memmove(&a->nth[pos + 1], &a->nth[pos], (a->n_nth - pos) * sizeof *a->nth);
  exec_agg_nth *e = &a->nth[pos];
  e->key = *k;
  e->val = v ? *v : cat_v_null(a->result_type);
  if (own_copy(&e->key, &e->kcopy) || own_copy(&e->val, &e->vcopy)) {
    free(e->kcopy);
    memmove(&a->nth[pos], &a->nth[pos + 1], (a->n_nth - pos) * sizeof *a->nth);
    return err(msg, cap, EXEC_NOMEM, "out of memory in %s", cat_agg_name(a->id));
  }
  a->n_nth++;
  a->have = true;
  return EXEC_OK;
}

int exec_agg_step2(exec_agg *a, const cat_value *v, const cat_value *k, char *msg, size_t cap) {
  if (!cat_agg_first_last(a->id)) return err(msg, cap, EXEC_MISUSE, "%s takes one value", cat_agg_name(a->id));
  if (!k || k->is_null) return EXEC_OK;
  if (a->id == EXEC_AGG_NTH_VALUE) return nth_step(a, v, k, msg, cap);
  if (a->have) {
    int cmp;
    cat_error e;
    if (cat_value_compare(k, &a->key, &cmp, &e) != CAT_OK)
      return err(msg, cap, EXEC_ERROR, "%s: %s", cat_agg_name(a->id), e.msg);
    /* the first in ORDER BY k ASC is the smallest key; LAST or DESC flips it once each */
    bool want_smaller = (a->id == EXEC_AGG_FIRST_VALUE) != a->desc;
    if (want_smaller ? cmp >= 0 : cmp <= 0) return EXEC_OK; /* ties keep the first met */
  }
  cat_value none = cat_v_null(a->result_type);
  if (keep_value(&a->best, v ? v : &none, &a->buf, &a->buf_cap) ||
      keep_value(&a->key, k, &a->kbuf, &a->kbuf_cap))
    return err(msg, cap, EXEC_NOMEM, "out of memory in %s", cat_agg_name(a->id));
  a->have = true;
  return EXEC_OK;
}

int exec_agg_step(exec_agg *a, const cat_value *v, char *msg, size_t cap) {
  if (a->id == EXEC_AGG_COUNT_STAR) { a->count++; return EXEC_OK; }
  if (!v || v->is_null) return EXEC_OK;
  if (a->distinct) {
    bool added;
    if (exec_agg_set_add(&a->set, v, &added) != EXEC_OK)
      return err(msg, cap, EXEC_NOMEM, "out of memory in %s(DISTINCT)", cat_agg_name(a->id));
    if (!added) return EXEC_OK;
  }
  switch (a->id) {
    case EXEC_AGG_COUNT: a->count++; a->have = true; return EXEC_OK;
    case EXEC_AGG_SUM: case EXEC_AGG_AVG: return add_num(a, v, msg, cap);
    case EXEC_AGG_MIN: case EXEC_AGG_MAX: return take_best(a, v, msg, cap);
    case EXEC_AGG_STDDEV_POP: case EXEC_AGG_STDDEV_SAMP: return add_dev(a, v, msg, cap);
    case EXEC_AGG_PERCENTILE_CONT: case EXEC_AGG_PERCENTILE_DISC: return add_val(a, v, msg, cap);
    case EXEC_AGG_FIRST_VALUE: case EXEC_AGG_LAST_VALUE: case EXEC_AGG_NTH_VALUE:
      return err(msg, cap, EXEC_MISUSE, "%s takes a value and its order key", cat_agg_name(a->id));
    default: return err(msg, cap, EXEC_ERROR, "bad aggregate id %d", a->id);
  }
}

int exec_agg_merge(exec_agg *dst, const exec_agg *src, char *msg, size_t cap) {
  if (dst->id != src->id) return err(msg, cap, EXEC_MISUSE, "merging different aggregates");
  if (dst->distinct) {
    size_t n = exec_agg_set_count(src->set);
    for (size_t i = 0; i < n; i++) {
      cat_value v;
      exec_agg_set_value(src->set, i, &v);
      int rc = exec_agg_step(dst, &v, msg, cap);
      if (rc) return rc;
    }
    return EXEC_OK;
  }
  switch (dst->id) {
    case EXEC_AGG_COUNT_STAR: case EXEC_AGG_COUNT:
      dst->count += src->count;
      dst->have = dst->have || src->have;
      return EXEC_OK;
    case EXEC_AGG_SUM: case EXEC_AGG_AVG: {
      cat_error e;
      if (__builtin_add_overflow(dst->isum, src->isum, &dst->isum) ||
          cat_dec_add(dst->decsum, src->decsum, &dst->decsum, &e) != CAT_OK)
        return err(msg, cap, EXEC_CONSTRAINT, "%s overflow", cat_agg_name(dst->id));
      if (exec_dsum_merge(&dst->dsum, &src->dsum)) return err(msg, cap, EXEC_NOMEM, "out of memory");
      dst->count += src->count;
      dst->have = dst->have || src->have;
      return EXEC_OK;
    }
    case EXEC_AGG_STDDEV_POP: case EXEC_AGG_STDDEV_SAMP: {
      if (!src->have) return EXEC_OK;
      if (!dst->have) {
        dst->count = src->count;
        dst->mean = src->mean;
        dst->m2 = src->m2;
        dst->have = true;
        return EXEC_OK;
      }
      double na = (double)dst->count, nb = (double)src->count, nt = na + nb;
      double d = src->mean - dst->mean;
      dst->mean += d * nb / nt;
      dst->m2 += src->m2 + d * d * na * nb / nt;
      dst->count += src->count;
      return EXEC_OK;
    }
    case EXEC_AGG_PERCENTILE_CONT: case EXEC_AGG_PERCENTILE_DISC:
      for (size_t i = 0; i < src->n_vals; i++) {
        int rc = add_val(dst, &src->vals[i], msg, cap);
        if (rc) return rc;
      }
      return EXEC_OK;
    case EXEC_AGG_FIRST_VALUE: case EXEC_AGG_LAST_VALUE:
      if (!src->have) return EXEC_OK;
      return exec_agg_step2(dst, &src->best, &src->key, msg, cap);
    case EXEC_AGG_NTH_VALUE:
      for (size_t i = 0; i < src->n_nth; i++) {
        int rc = exec_agg_step2(dst, &src->nth[i].val, &src->nth[i].key, msg, cap);
        if (rc) return rc;
      }
      return EXEC_OK;
    default:
      if (!src->have) return EXEC_OK;
      return take_best(dst, &src->best, msg, cap);
  }
}

/* The exact total isum + decsum. */
static int exact_total(const exec_agg *a, cat_dec *out, char *msg, size_t cap) {
  static const cat_i128 lim = (cat_i128)10000000000000000000ULL * (cat_i128)10000000000000000000ULL;
  if (a->isum >= lim || a->isum <= -lim)
    return err(msg, cap, EXEC_CONSTRAINT, "%s overflow: the sum needs more than 38 digits",
               cat_agg_name(a->id));
  cat_dec i = {a->isum, 0};
  cat_error e;
  if (cat_dec_add(i, a->decsum, out, &e) != CAT_OK)
    return err(msg, cap, EXEC_CONSTRAINT, "%s overflow: the sum needs more than 38 digits",
               cat_agg_name(a->id));
  return EXEC_OK;
}

int exec_agg_final(exec_agg *a, cat_value *out, exec_arena *arena, char *msg, size_t cap) {
  const cat_type rt = a->result_type;
  if (a->id == EXEC_AGG_COUNT_STAR || a->id == EXEC_AGG_COUNT) {
    *out = cat_v_int(CAT_T_BIGINT, a->count);
    return EXEC_OK;
  }
  if (!a->have) { *out = cat_v_null(rt); return EXEC_OK; }
  switch (a->id) {
    case EXEC_AGG_STDDEV_POP: case EXEC_AGG_STDDEV_SAMP: {
      int64_t div = a->id == EXEC_AGG_STDDEV_POP ? a->count : a->count - 1;
      if (div <= 0) { *out = cat_v_null(rt); return EXEC_OK; }
      double var = a->m2 / (double)div;
      *out = cat_v_double(sqrt(var > 0 ? var : 0));
      return EXEC_OK;
    }
    case EXEC_AGG_PERCENTILE_CONT: case EXEC_AGG_PERCENTILE_DISC:
      return pct_final(a, out);
    case EXEC_AGG_NTH_VALUE: {
      size_t n = a->frac >= 1 ? (size_t)a->frac : 1;
      if (a->n_nth < n) {
        *out = cat_v_null(rt);
        return EXEC_OK;
      }
      *out = a->nth[n - 1].val;
      if (arena && !out->is_null &&
          cat_type_has_bytes(out->type.id)) {
        uint8_t *p = exec_arena_copy(arena, out->u.s.p, out->u.s.len);
        if (!p) return err(msg, cap, EXEC_NOMEM, "out of memory");
        out->u.s.p = p;
      }
      return EXEC_OK;
    }
    case EXEC_AGG_SUM: case EXEC_AGG_AVG: {
      if (rt.id == CAT_T_DOUBLE || rt.id == 0) {
        double sum = exec_dsum_value(&a->dsum);
        *out = cat_v_double(a->id == EXEC_AGG_SUM ? sum : sum / (double)a->count);
        return EXEC_OK;
      }
      cat_dec t;
      int rc = exact_total(a, &t, msg, cap);
      if (rc) return rc;
      if (a->id == EXEC_AGG_AVG) {
        cat_error e;
        if (cat_dec_div(t, cat_dec_from_i64(a->count), &t, &e) != CAT_OK)
          return err(msg, cap, EXEC_CONSTRAINT, "AVG: %s", e.msg);
        t = cat_dec_normalize(t);
        *out = cat_v_dec(t, 0, (uint8_t)t.scale);
        return EXEC_OK;
      }
      if (rt.id == CAT_T_BIGINT) {
        if (t.scale != 0 || t.v > INT64_MAX || t.v < INT64_MIN) {
          char b[CAT_DEC_TEXT_MAX];
          cat_dec_format(t, b);
          return err(msg, cap, EXEC_CONSTRAINT, "SUM overflow: value %s out of range for BIGINT", b);
        }
        *out = cat_v_int(CAT_T_BIGINT, (int64_t)t.v);
        return EXEC_OK;
      }
      *out = cat_v_dec(t, 0, (uint8_t)t.scale);
      return EXEC_OK;
    }
    default:
      *out = a->best;
      if (arena && cat_type_has_bytes(out->type.id)) {
        uint8_t *p = exec_arena_copy(arena, out->u.s.p, out->u.s.len);
        if (!p) return err(msg, cap, EXEC_NOMEM, "out of memory");
        out->u.s.p = p;
      }
      return EXEC_OK;
  }
}

void exec_agg_free(exec_agg *a) {
  exec_dsum_free(&a->dsum);
  free(a->buf);
  a->buf = NULL;
  a->buf_cap = 0;
  free(a->kbuf);
  a->kbuf = NULL;
  a->kbuf_cap = 0;
  nth_free(a);
  exec_agg_set_free(a->set);
  a->set = NULL;
  free(a->vals);
  a->vals = NULL;
  a->n_vals = a->vals_cap = 0;
}
