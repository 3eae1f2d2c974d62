/*
** exec/func.c: the scalar function registry of exec/func.h: names and aliases, argument
** counts, argument type checks and result types (cat_func_lookup), parameter type hints,
** the call dispatcher with the NULL rule and the conversion to the bound result type, CAST,
** and the generic functions COALESCE, NULLIF, GREATEST and LEAST (and the internal
** SCALAR_ONE, a correlated scalar subquery's one-row check, and IN_SET, a probe of
** exec/in_set.h). The functions themselves
** live by family in exec/func_num.c, func_str.c, func_date.c, func_fmt.c, func_regex.c,
** func_tz.c and func_array.c; LIKE in exec/like.c.
*/
#include "exec/func_int.h"
#include "exec/in_set.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "sql/ast.h"

/* ---- Small shared helpers --------------------------------------------------------------- */
int exec_fn_err(exec_func_ctx *c, int code, const char *fmt, ...) {
  if (c && c->msg && c->cap) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->msg, c->cap, fmt, ap);
    va_end(ap);
  }
  return code;
}

int exec_fn_cat_err(exec_func_ctx *c, int cat_code, const cat_error *e) {
  int code = EXEC_ERROR;
  if (cat_code == CAT_ERR_RANGE || cat_code == CAT_ERR_TOOBIG || cat_code == CAT_ERR_NULL)
    code = EXEC_CONSTRAINT;
  else if (cat_code == CAT_ERR_NOMEM)
    code = EXEC_NOMEM;
  return exec_fn_err(c, code, "%s", e->msg);
}

void exec_fn_show(const cat_value *v, char *buf, size_t cap) {
  size_t n = cat_text_format(v, buf, cap);
  if (n >= cap && cap > 4) memcpy(buf + cap - 4, "...", 4);
}

int exec_fn_i64(const cat_value *v, int64_t *out, exec_func_ctx *c, const char *fname) {
  if (cat_type_is_integer(v->type.id)) { *out = v->u.i; return EXEC_OK; }
  cat_type t = cat_type_of(CAT_T_BIGINT);
  cat_value r;
  cat_error e;
  if (!cat_type_is_numeric(v->type.id) && !cat_type_is_string(v->type.id))
    return exec_fn_err(c, EXEC_ERROR, "%s: expected a number, got %s", fname,
                       cat_type_name(v->type.id));
  int rc = cat_value_cast(v, &t, &r, NULL, 0, &e);
  if (rc) return exec_fn_cat_err(c, rc, &e);
  *out = r.u.i;
  return EXEC_OK;
}

int exec_fn_double(const cat_value *v, double *out, exec_func_ctx *c, const char *fname) {
  int id = v->type.id;
  if (cat_type_is_float(id)) { *out = v->u.d; return EXEC_OK; }
  if (cat_type_is_integer(id)) { *out = (double)v->u.i; return EXEC_OK; }
  if (id == CAT_T_DECIMAL) { *out = cat_dec_to_double(v->u.dec); return EXEC_OK; }
  if (cat_type_is_string(id)) {
    cat_type t = cat_type_of(CAT_T_DOUBLE);
    cat_value r;
    cat_error e;
    int rc = cat_text_parse(&t, (const char *)v->u.s.p, v->u.s.len, &r, &e);
    if (rc) return exec_fn_cat_err(c, rc, &e);
    *out = r.u.d;
    return EXEC_OK;
  }
  return exec_fn_err(c, EXEC_ERROR, "%s: expected a number, got %s", fname, cat_type_name(id));
}

int exec_fn_dec(const cat_value *v, cat_dec *out, exec_func_ctx *c, const char *fname) {
  int id = v->type.id;
  if (cat_type_is_integer(id)) { *out = cat_dec_from_i64(v->u.i); return EXEC_OK; }
  if (id == CAT_T_DECIMAL) { *out = v->u.dec; return EXEC_OK; }
  cat_error e;
  if (cat_type_is_float(id)) {
    int rc = cat_dec_from_double(v->u.d, out, &e);
    if (rc) return exec_fn_err(c, EXEC_CONSTRAINT, "%s: value %g out of range for DECIMAL",
                               fname, v->u.d);
    return EXEC_OK;
  }
  if (cat_type_is_string(id)) {
    int rc = cat_dec_parse((const char *)v->u.s.p, v->u.s.len, out, "DECIMAL", &e);
    if (rc) return exec_fn_cat_err(c, rc, &e);
    return EXEC_OK;
  }
  return exec_fn_err(c, EXEC_ERROR, "%s: expected a number, got %s", fname, cat_type_name(id));
}

int exec_fn_text(const cat_value *v, const uint8_t **p, size_t *len, exec_func_ctx *c) {
  if (cat_type_is_string(v->type.id) || v->type.id == CAT_T_VARBINARY) {
    *p = v->u.s.p;
    *len = v->u.s.len;
    return EXEC_OK;
  }
  char tmp[96];
  size_t n = cat_text_format(v, tmp, sizeof tmp);
  if (n >= sizeof tmp) return exec_fn_err(c, EXEC_ERROR, "value too long to format");
  uint8_t *d = exec_arena_copy(c->arena, tmp, n);
  if (!d) return exec_fn_err(c, EXEC_NOMEM, "out of memory");
  *p = d;
  *len = n;
  return EXEC_OK;
}

/* ---- Calls ------------------------------------------------------------------------------ */
int exec_func_cast(const cat_value *in, const cat_type *to, cat_value *out,
                   exec_func_ctx *ctx) {
  if (!in->is_null && (in->type.id == CAT_T_ARRAY || to->id == CAT_T_ARRAY))
    return exec_fn_array_cast(in, to, out, ctx);
  uint8_t *buf = NULL;
  size_t cap = 0;
  bool src_str = cat_type_is_string(in->type.id) || in->type.id == CAT_T_VARBINARY;
  if (!in->is_null && !src_str && (cat_type_is_string(to->id) || to->id == CAT_T_VARBINARY)) {
    cap = 96;
    buf = exec_arena_alloc(ctx->arena, cap);
    if (!buf) return exec_fn_err(ctx, EXEC_NOMEM, "out of memory");
  }
  cat_error e;
  int rc = cat_value_cast(in, to, out, buf, cap, &e);
  if (rc) return exec_fn_cat_err(ctx, rc, &e);
  return EXEC_OK;
}

static int generic(int id, const cat_value *a, int n, const cat_type *rt, cat_value *out,
                   exec_func_ctx *c) {
  cat_error e;
  int cmp;
  switch (id) {
    case EXEC_F_COALESCE:
      for (int i = 0; i < n; i++)
        if (!a[i].is_null) { *out = a[i]; return EXEC_OK; }
      *out = a[n - 1];
      return EXEC_OK;
    case EXEC_F_SCALAR_ONE: /* n rows, the value, the message naming the subquery */
      if (!a[0].is_null && a[0].u.i > 1)
        return exec_fn_err(c, EXEC_ERROR, "%.*s", (int)a[2].u.s.len, (const char *)a[2].u.s.p);
      *out = a[1];
      return EXEC_OK;
    case EXEC_F_IN_SET: { /* x, ..., the set's parameter */
      const exec_in_set *set = exec_in_set_of(&a[n - 1]);
      int tv;
      if (!set) return exec_fn_err(c, EXEC_ERROR, "IN_SET: its last argument is not a set");
      int rc = exec_in_set_probe(set, a, &tv, c->msg, c->cap);
      if (!rc) *out = tv < 0 ? cat_v_null(cat_type_of(CAT_T_BOOLEAN)) : cat_v_bool(tv != 0);
      return rc;
    }
    case EXEC_F_NULLIF:
      if (a[0].is_null || a[1].is_null) { *out = a[0]; return EXEC_OK; }
      if (cat_value_compare(&a[0], &a[1], &cmp, &e)) return exec_fn_cat_err(c, CAT_ERR_TYPE, &e);
      if (cmp == 0) *out = cat_v_null(rt && rt->id ? *rt : a[0].type);
      else *out = a[0];
      return EXEC_OK;
    case EXEC_F_GREATEST: case EXEC_F_LEAST: {
      int best = -1;
      for (int i = 0; i < n; i++) {
        if (a[i].is_null) continue;
        if (best < 0) { best = i; continue; }
        if (cat_value_compare(&a[i], &a[best], &cmp, &e))
          return exec_fn_cat_err(c, CAT_ERR_TYPE, &e);
        if ((id == EXEC_F_GREATEST && cmp > 0) || (id == EXEC_F_LEAST && cmp < 0)) best = i;
      }
      *out = best < 0 ? a[0] : a[best];
      return EXEC_OK;
    }
    default:
      return exec_fn_err(c, EXEC_ERROR, "unknown function id %d", id);
  }
}

/* Convert a natural result to the bound result type rt. */
static int to_result(cat_value *out, const cat_type *rt, exec_func_ctx *c) {
  if (!rt || rt->id == 0) return EXEC_OK;
  if (out->is_null) { out->type = *rt; return EXEC_OK; }
  if (out->type.id == rt->id && (rt->id != CAT_T_ARRAY || out->type.elem == rt->elem)) {
    if (rt->id == CAT_T_DECIMAL && rt->precision) {
      cat_error e;
      cat_value v = *out;
      int rc = cat_value_check(rt, &v, out, &e);
      if (rc) return exec_fn_cat_err(c, rc, &e);
      return EXEC_OK;
    }
    if (rt->id == CAT_T_DECIMAL) { out->type.precision = 0; return EXEC_OK; }
    out->type = *rt;
    return EXEC_OK;
  }
  cat_value v = *out;
  return exec_func_cast(&v, rt, out, c);
}

int exec_func_call(int func_id, const cat_value *args, int n_args, const cat_type *rt,
                   cat_value *out, exec_func_ctx *ctx) {
  if (func_id <= 0 || func_id >= EXEC_F_COUNT_)
    return exec_fn_err(ctx, EXEC_ERROR, "unknown function id %d", func_id);
  const cat_func_def *d = cat_func_def_of(func_id);
  if (n_args < d->min_args || (d->max_args >= 0 && n_args > d->max_args))
    return exec_fn_err(ctx, EXEC_ERROR, "function %s: wrong number of arguments (%d)", d->name,
                       n_args);
  if (d->strict) {
    for (int i = 0; i < n_args; i++) {
      if (args[i].is_null) {
        *out = cat_v_null(rt && rt->id ? *rt : cat_type_of(CAT_T_VARCHAR));
        return EXEC_OK;
      }
    }
  }
  int rc;
  switch (d->family) {
    case CAT_FAM_NUM: rc = exec_fn_num(func_id, args, n_args, out, ctx); break;
    case CAT_FAM_STR: rc = exec_fn_str(func_id, args, n_args, out, ctx); break;
    case CAT_FAM_DATE: rc = exec_fn_date(func_id, args, n_args, out, ctx); break;
    case CAT_FAM_FMT: rc = exec_fn_fmt(func_id, args, n_args, out, ctx); break;
    case CAT_FAM_REGEX: rc = exec_fn_regex(func_id, args, n_args, out, ctx); break;
    case CAT_FAM_TZ: rc = exec_fn_tz(func_id, args, n_args, out, ctx); break;
    case CAT_FAM_ARRAY: rc = exec_fn_array(func_id, args, n_args, rt, out, ctx); break;
    default: rc = generic(func_id, args, n_args, rt, out, ctx); break;
  }
  if (rc) return rc;
  return to_result(out, rt, ctx);
}
