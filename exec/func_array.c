/*
** exec/func_array.c: the ARRAY functions of exec/func.h, with Phoenix's names and rules
** (docs/FUNCTIONS.md): the constructor ARRAY[e1, ...], the subscript a[i] (ARRAY_ELEM),
** ARRAY_LENGTH, ARRAY_APPEND, ARRAY_PREPEND, ARRAY_CAT and x op ANY(a); the element type of a
** constructor; building an array value in the call's arena (REGEXP_SPLIT in
** exec/func_regex.c builds its result here too); and CAST to and from ARRAY types, which
** needs memory the catalog's cat_value_cast does not have.
**
** Values are the encoded arrays of catalog/array.h; nothing here knows their bytes. Not
** here: comparisons of arrays (catalog/array.c through cat_value_compare), the binding of
** x op ANY(a) (planner/bind.c).
*/
#include "exec/func_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalog/array.h"
#include "sql/ast.h"

static int nomem(exec_func_ctx *c) { return exec_fn_err(c, EXEC_NOMEM, "out of memory"); }

int exec_fn_array_build(const cat_type *elem, const cat_value *e, uint32_t n, cat_value *out,
                        exec_func_ctx *c) {
  cat_value *fit = n ? malloc(n * sizeof *fit) : NULL;
  uint8_t(*tmp)[64] = n ? malloc(n * sizeof *tmp) : NULL;
  if (n && (!fit || !tmp)) {
    free(fit);
    free(tmp);
    return nomem(c);
  }
  int rc = EXEC_OK;
  size_t total = CAT_ARRAY_HEADER;
  for (uint32_t i = 0; i < n && !rc; i++) {
    cat_value v;
    cat_error ce;
    if (e[i].is_null) {
      fit[i] = cat_v_null(*elem);
    } else if (e[i].type.id == CAT_T_ARRAY) {
      rc = exec_fn_err(c, EXEC_ERROR, "ARRAY element %u is an ARRAY; arrays do not nest", i + 1);
    } else {
      int r = cat_value_cast(&e[i], elem, &v, tmp[i], sizeof tmp[i], &ce);
      if (!r) r = cat_value_check(elem, &v, &fit[i], &ce);
      if (r) {
        char m[CAT_ERRMSG_MAX];
        snprintf(m, sizeof m, "%s", ce.msg);
        ce.code = r;
        snprintf(ce.msg, sizeof ce.msg, "ARRAY element %u: %.200s", i + 1, m);
        rc = exec_fn_cat_err(c, r, &ce);
      }
    }
    if (!rc) total += cat_array_elem_size(&fit[i]);
  }
  uint8_t *p = rc ? NULL : exec_arena_alloc(c->arena, total);
  if (!rc && !p) rc = nomem(c);
  if (!rc) {
    cat_array_put_header(p, elem->id, n);
    size_t w = CAT_ARRAY_HEADER;
    for (uint32_t i = 0; i < n; i++) w += cat_array_put_elem(p + w, &fit[i]);
    *out = cat_v_str(CAT_T_ARRAY, p, w);
    out->type = cat_type_array_of(elem);
  }
  free(fit);
  free(tmp);
  return rc;
}

/* Read every element of array a into a malloc'd list *es (*n of them). */
static int elements(const cat_value *a, cat_value **es, uint32_t *n, uint32_t extra,
                    exec_func_ctx *c) {
  cat_array_iter it;
  cat_error ce;
  int r = cat_array_open(a, &it, &ce);
  if (r) return exec_fn_cat_err(c, r, &ce);
  *es = malloc(((size_t)it.n + extra + 1) * sizeof **es);
  if (!*es) return nomem(c);
  for (uint32_t i = 0; i < it.n; i++) {
    r = cat_array_next(&it, &(*es)[i], &ce);
    if (r) {
      free(*es);
      return exec_fn_cat_err(c, r, &ce);
    }
  }
  *n = it.n;
  return EXEC_OK;
}

static int need_array(const cat_value *v, const char *f, int arg, exec_func_ctx *c) {
  if (v->type.id == CAT_T_ARRAY) return EXEC_OK;
  char t[48];
  return exec_fn_err(c, EXEC_ERROR, "function %s needs an ARRAY, not %s (argument %d)", f,
                     cat_type_format(&v->type, t, sizeof t), arg);
}

/* ARRAY_APPEND(a, e), ARRAY_PREPEND(e, a), ARRAY_CAT(a, b). */
static int combine(int id, const cat_value *a, cat_value *out, exec_func_ctx *c) {
  const cat_value *arr = id == EXEC_F_ARRAY_PREPEND ? &a[1] : &a[0];
  const cat_value *other = id == EXEC_F_ARRAY_PREPEND ? &a[0] : &a[1];
  const char *f = cat_func_name(id);
  int rc = need_array(arr, f, id == EXEC_F_ARRAY_PREPEND ? 2 : 1, c);
  if (!rc && id == EXEC_F_ARRAY_CAT) rc = need_array(other, f, 2, c);
  if (rc) return rc;
  cat_value *es, *os = NULL;
  uint32_t n, m = 1;
  rc = elements(arr, &es, &n, 1, c);
  if (rc) return rc;
  if (id == EXEC_F_ARRAY_CAT) {
    rc = elements(other, &os, &m, 0, c);
    if (rc) {
      free(es);
      return rc;
    }
    cat_value *all = realloc(es, ((size_t)n + m + 1) * sizeof *all);
    if (!all) {
      free(es);
      free(os);
      return nomem(c);
    }
    es = all;
    memcpy(es + n, os, (size_t)m * sizeof *os);
  } else if (id == EXEC_F_ARRAY_APPEND) {
    es[n] = *other;
  } else {
    memmove(es + 1, es, (size_t)n * sizeof *es);
    es[0] = *other;
  }
  cat_type et = cat_type_elem(&arr->type);
  rc = exec_fn_array_build(&et, es, n + m, out, c);
  free(es);
  free(os);
  return rc;
}

/* x op ANY(arr) with SQL's three-valued logic: TRUE if x op e is TRUE for some element e;
** else NULL if x is NULL or some comparison was NULL (a NULL element); else FALSE (an empty
** array gives FALSE). A NULL array gives NULL. */
static int any(const cat_value *a, cat_value *out, exec_func_ctx *c) {
  *out = cat_v_null(cat_type_of(CAT_T_BOOLEAN));
  if (a[1].is_null) return EXEC_OK;
  int rc = need_array(&a[1], "ANY", 1, c);
  int64_t op = 0;
  if (!rc) rc = exec_fn_i64(&a[2], &op, c, "ANY");
  if (rc) return rc;
  cat_array_iter it;
  cat_error ce;
  int r = cat_array_open(&a[1], &it, &ce);
  if (r) return exec_fn_cat_err(c, r, &ce);
  bool unknown = false;
  for (uint32_t i = 0; i < it.n; i++) {
    cat_value e;
    int cmp = 0;
    r = cat_array_next(&it, &e, &ce);
    if (r) return exec_fn_cat_err(c, r, &ce);
    if (a[0].is_null || e.is_null) {
      unknown = true;
      continue;
    }
    r = cat_value_compare(&a[0], &e, &cmp, &ce);
    if (r) return exec_fn_cat_err(c, r, &ce);
    bool hit = op == SQL_OP_EQ   ? cmp == 0
               : op == SQL_OP_NE ? cmp != 0
               : op == SQL_OP_LT ? cmp < 0
               : op == SQL_OP_LE ? cmp <= 0
               : op == SQL_OP_GT ? cmp > 0
                                 : cmp >= 0;
    if (hit) {
      *out = cat_v_bool(true);
      return EXEC_OK;
    }
  }
  if (!unknown) *out = cat_v_bool(false);
  return EXEC_OK;
}

int exec_fn_array(int id, const cat_value *a, int n, const cat_type *rt, cat_value *out,
                  exec_func_ctx *c) {
  cat_error ce;
  switch (id) {
    case EXEC_F_ANY:
      return any(a, out, c);
    case EXEC_F_ARRAY: {
      cat_type elem;
      if (rt && rt->id == CAT_T_ARRAY) {
        elem = cat_type_elem(rt);
      } else {
        cat_type ts[64];
        int bad = 0;
        for (int i = 0; i < n && i < 64; i++) ts[i] = a[i].is_null ? cat_type_of(0) : a[i].type;
        char m[CAT_ERRMSG_MAX];
        if (n > 64) return exec_fn_err(c, EXEC_ERROR, "ARRAY[...]: too many elements");
        if (cat_array_elem_type(n, ts, &elem, &bad, m, sizeof m))
          return exec_fn_err(c, EXEC_ERROR, "%s", m);
      }
      return exec_fn_array_build(&elem, a, (uint32_t)n, out, c);
    }
    case EXEC_F_ARRAY_ELEM: {
      int rc = need_array(&a[0], "ARRAY_ELEM", 1, c);
      int64_t i = 0;
      if (!rc) rc = exec_fn_i64(&a[1], &i, c, "ARRAY_ELEM");
      if (rc) return rc;
      int r = cat_array_get(&a[0], i, out, &ce);
      return r ? exec_fn_cat_err(c, r, &ce) : EXEC_OK;
    }
    case EXEC_F_ARRAY_LENGTH: {
      int rc = need_array(&a[0], "ARRAY_LENGTH", 1, c);
      if (rc) return rc;
      *out = cat_v_int(CAT_T_INTEGER, (int64_t)cat_array_count(&a[0]));
      return EXEC_OK;
    }
    case EXEC_F_ARRAY_APPEND: case EXEC_F_ARRAY_PREPEND: case EXEC_F_ARRAY_CAT:
      return combine(id, a, out, c);
    default:
      return exec_fn_err(c, EXEC_ERROR, "unknown ARRAY function id %d", id);
  }
}

int exec_fn_array_cast(const cat_value *in, const cat_type *to, cat_value *out,
                       exec_func_ctx *c) {
  cat_error ce;
  size_t len = 0;
  int r;
  if (in->type.id == CAT_T_ARRAY && to->id == CAT_T_ARRAY) {
    if (in->type.elem == to->elem) {
      r = cat_array_check(to, in, out, &ce);
      if (r != CAT_ERR_RANGE || to->elem != CAT_T_DECIMAL) /* DECIMAL rounding: convert */
        return r ? exec_fn_cat_err(c, r, &ce) : EXEC_OK;
    }
    r = cat_array_convert(in, to, NULL, 0, &len, out, &ce);
    if (r == CAT_ERR_TOOBIG) {
      uint8_t *p = exec_arena_alloc(c->arena, len);
      if (!p) return nomem(c);
      r = cat_array_convert(in, to, p, len, &len, out, &ce);
    }
    return r ? exec_fn_cat_err(c, r, &ce) : EXEC_OK;
  }
  if (in->type.id == CAT_T_ARRAY && cat_type_is_string(to->id)) {
    len = cat_array_format(in, NULL, 0);
    char *p = exec_arena_alloc(c->arena, len + 1);
    if (!p) return nomem(c);
    cat_array_format(in, p, len + 1);
    cat_value v = cat_v_str(to->id, p, len);
    r = cat_value_check(to, &v, out, &ce);
    return r ? exec_fn_cat_err(c, r, &ce) : EXEC_OK;
  }
  if (to->id == CAT_T_ARRAY && cat_type_is_string(in->type.id)) {
    r = cat_array_parse(to, (const char *)in->u.s.p, in->u.s.len, NULL, 0, &len, out, &ce);
    if (r == CAT_ERR_TOOBIG) {
      uint8_t *p = exec_arena_alloc(c->arena, len);
      if (!p) return nomem(c);
      r = cat_array_parse(to, (const char *)in->u.s.p, in->u.s.len, p, len, &len, out, &ce);
    }
    return r ? exec_fn_cat_err(c, r, &ce) : EXEC_OK;
  }
  char a[48], b[48];
  return exec_fn_err(c, EXEC_ERROR, "cannot convert %s to %s",
                     cat_type_format(&in->type, a, sizeof a), cat_type_format(to, b, sizeof b));
}
