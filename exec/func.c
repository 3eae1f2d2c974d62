/*
** exec/func.c: the scalar function registry of exec/func.h: names and aliases, argument
** counts, argument type checks and result types (exec_func_lookup), parameter type hints,
** the call dispatcher with the NULL rule and the conversion to the bound result type, CAST,
** and the generic functions COALESCE, NULLIF, GREATEST and LEAST. The functions themselves
** live by family in exec/func_num.c, func_str.c, func_date.c, func_fmt.c, func_regex.c,
** func_tz.c and func_array.c; LIKE in exec/like.c.
*/
#include "exec/func_int.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "sql/ast.h"

enum { FAM_NUM = 1, FAM_STR, FAM_DATE, FAM_FMT, FAM_GEN, FAM_REGEX, FAM_TZ, FAM_ARRAY };

typedef struct func_def {
  const char *name;   /* canonical upper-case name */
  int8_t min_args;    /* fewest arguments */
  int8_t max_args;    /* most arguments; -1 = any number */
  bool strict;        /* a NULL argument gives NULL without calling */
  uint8_t family;     /* FAM_*: which file implements it */
} func_def;

/* ORDER EXEC_FUNC: one entry per enum exec_func_id, in order. */
static const func_def func_table[EXEC_F_COUNT_] = {
    [0] = {"?", 0, 0, true, 0},
    [EXEC_F_ADD] = {"+", 2, 2, true, FAM_NUM},
    [EXEC_F_SUB] = {"-", 2, 2, true, FAM_NUM},
    [EXEC_F_MUL] = {"*", 2, 2, true, FAM_NUM},
    [EXEC_F_DIV] = {"/", 2, 2, true, FAM_NUM},
    [EXEC_F_MOD] = {"%", 2, 2, true, FAM_NUM},
    [EXEC_F_NEG] = {"-", 1, 1, true, FAM_NUM},
    [EXEC_F_CONCAT] = {"||", 2, 2, true, FAM_STR},
    [EXEC_F_ABS] = {"ABS", 1, 1, true, FAM_NUM},
    [EXEC_F_SIGN] = {"SIGN", 1, 1, true, FAM_NUM},
    [EXEC_F_ROUND] = {"ROUND", 1, 3, true, FAM_NUM},
    [EXEC_F_FLOOR] = {"FLOOR", 1, 3, true, FAM_NUM},
    [EXEC_F_CEIL] = {"CEIL", 1, 3, true, FAM_NUM},
    [EXEC_F_TRUNC] = {"TRUNC", 1, 3, true, FAM_NUM},
    [EXEC_F_SQRT] = {"SQRT", 1, 1, true, FAM_NUM},
    [EXEC_F_POWER] = {"POWER", 2, 2, true, FAM_NUM},
    [EXEC_F_EXP] = {"EXP", 1, 1, true, FAM_NUM},
    [EXEC_F_LN] = {"LN", 1, 1, true, FAM_NUM},
    [EXEC_F_LOG] = {"LOG", 1, 2, true, FAM_NUM},
    [EXEC_F_UPPER] = {"UPPER", 1, 1, true, FAM_STR},
    [EXEC_F_LOWER] = {"LOWER", 1, 1, true, FAM_STR},
    [EXEC_F_LENGTH] = {"LENGTH", 1, 1, true, FAM_STR},
    [EXEC_F_SUBSTR] = {"SUBSTR", 2, 3, true, FAM_STR},
    [EXEC_F_TRIM] = {"TRIM", 1, 2, true, FAM_STR},
    [EXEC_F_LTRIM] = {"LTRIM", 1, 2, true, FAM_STR},
    [EXEC_F_RTRIM] = {"RTRIM", 1, 2, true, FAM_STR},
    [EXEC_F_COALESCE] = {"COALESCE", 1, -1, false, FAM_GEN},
    [EXEC_F_NULLIF] = {"NULLIF", 2, 2, false, FAM_GEN},
    [EXEC_F_GREATEST] = {"GREATEST", 1, -1, false, FAM_GEN},
    [EXEC_F_LEAST] = {"LEAST", 1, -1, false, FAM_GEN},
    [EXEC_F_TO_TIMESTAMP] = {"TO_TIMESTAMP", 1, 3, true, FAM_FMT},
    [EXEC_F_TO_DATE] = {"TO_DATE", 1, 3, true, FAM_FMT},
    [EXEC_F_TO_CHAR] = {"TO_CHAR", 1, 2, true, FAM_FMT},
    [EXEC_F_TO_NUMBER] = {"TO_NUMBER", 1, 2, true, FAM_FMT},
    [EXEC_F_MAKE_TIMESTAMP] = {"MAKE_TIMESTAMP", 6, 6, true, FAM_DATE},
    [EXEC_F_NOW] = {"NOW", 0, 0, true, FAM_DATE},
    [EXEC_F_CURRENT_DATE] = {"CURRENT_DATE", 0, 0, true, FAM_DATE},
    [EXEC_F_YEAR] = {"YEAR", 1, 1, true, FAM_DATE},
    [EXEC_F_MONTH] = {"MONTH", 1, 1, true, FAM_DATE},
    [EXEC_F_DAYOFMONTH] = {"DAYOFMONTH", 1, 1, true, FAM_DATE},
    [EXEC_F_HOUR] = {"HOUR", 1, 1, true, FAM_DATE},
    [EXEC_F_MINUTE] = {"MINUTE", 1, 1, true, FAM_DATE},
    [EXEC_F_SECOND] = {"SECOND", 1, 1, true, FAM_DATE},
    [EXEC_F_DAYOFWEEK] = {"DAYOFWEEK", 1, 1, true, FAM_DATE},
    [EXEC_F_DAYOFYEAR] = {"DAYOFYEAR", 1, 1, true, FAM_DATE},
    [EXEC_F_CONCAT_N] = {"CONCAT", 1, -1, false, FAM_STR},
    [EXEC_F_REPLACE] = {"REPLACE", 2, 3, true, FAM_STR},
    [EXEC_F_LPAD] = {"LPAD", 2, 3, true, FAM_STR},
    [EXEC_F_RPAD] = {"RPAD", 2, 3, true, FAM_STR},
    [EXEC_F_INSTR] = {"INSTR", 2, 2, true, FAM_STR},
    [EXEC_F_REGEXP_SUBSTR] = {"REGEXP_SUBSTR", 2, 3, true, FAM_REGEX},
    [EXEC_F_REGEXP_REPLACE] = {"REGEXP_REPLACE", 2, 3, true, FAM_REGEX},
    [EXEC_F_WEEK] = {"WEEK", 1, 1, true, FAM_DATE},
    [EXEC_F_QUARTER] = {"QUARTER", 1, 1, true, FAM_DATE},
    [EXEC_F_TO_TIME] = {"TO_TIME", 1, 3, true, FAM_FMT},
    [EXEC_F_CONVERT_TZ] = {"CONVERT_TZ", 3, 3, true, FAM_TZ},
    [EXEC_F_TIMEZONE_OFFSET] = {"TIMEZONE_OFFSET", 2, 2, true, FAM_TZ},
    [EXEC_F_ARRAY] = {"ARRAY", 1, -1, false, FAM_ARRAY},
    [EXEC_F_ARRAY_ELEM] = {"ARRAY_ELEM", 2, 2, true, FAM_ARRAY},
    [EXEC_F_ARRAY_LENGTH] = {"ARRAY_LENGTH", 1, 1, true, FAM_ARRAY},
    [EXEC_F_REGEXP_SPLIT] = {"REGEXP_SPLIT", 2, 2, true, FAM_REGEX},
    [EXEC_F_ARRAY_APPEND] = {"ARRAY_APPEND", 2, 2, true, FAM_ARRAY},
    [EXEC_F_ARRAY_PREPEND] = {"ARRAY_PREPEND", 2, 2, true, FAM_ARRAY},
    [EXEC_F_ARRAY_CAT] = {"ARRAY_CAT", 2, 2, true, FAM_ARRAY},
    [EXEC_F_ANY] = {"ANY", 3, 3, false, FAM_ARRAY},
};

static const struct {
  const char *alias; /* other accepted name */
  int id;            /* function it names */
} aliases[] = {
    {"MOD", EXEC_F_MOD},         {"CEILING", EXEC_F_CEIL},
    {"TRUNCATE", EXEC_F_TRUNC},  {"POW", EXEC_F_POWER},
    {"CHAR_LENGTH", EXEC_F_LENGTH}, {"CHARACTER_LENGTH", EXEC_F_LENGTH},
    {"SUBSTRING", EXEC_F_SUBSTR}, {"CURRENT_TIMESTAMP", EXEC_F_NOW},
    {"DAY", EXEC_F_DAYOFMONTH},  {"WEEKOFYEAR", EXEC_F_WEEK},
    {"STRPOS", EXEC_F_INSTR},
};

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

/* ---- Type classes and lookup ------------------------------------------------------------ */
static bool unk(const cat_type *t) { return t->id == 0; }
static bool num(const cat_type *t) { return unk(t) || cat_type_is_numeric(t->id); }
static bool str(const cat_type *t) { return unk(t) || cat_type_is_string(t->id); }
static bool dt(const cat_type *t) {
  return t->id == CAT_T_DATE || t->id == CAT_T_TIMESTAMP;
}

static int bad_arg(const char *f, const cat_type *t, int i, char *msg, size_t cap) {
  char tb[40];
  snprintf(msg, cap, "function %s does not accept %s (argument %d)", f,
           cat_type_format(t, tb, sizeof tb), i + 1);
  return EXEC_ERROR;
}

/* Numeric promotion of two operand types (rules in exec/func.h). */
static cat_type promote(const cat_type *a, const cat_type *b) {
  if (unk(a) && unk(b)) { cat_type t = cat_type_of(CAT_T_DECIMAL); return t; }
  if (unk(a)) a = b;
  if (unk(b)) b = a;
  if (cat_type_is_float(a->id) || cat_type_is_float(b->id)) return cat_type_of(CAT_T_DOUBLE);
  if (a->id == CAT_T_DECIMAL || b->id == CAT_T_DECIMAL) return cat_type_of(CAT_T_DECIMAL);
  return cat_type_of(CAT_T_BIGINT);
}

/* The common type of COALESCE/GREATEST/LEAST arguments. */
static int common_type(const char *f, int n, const cat_type *ts, cat_type *out, char *msg,
                       size_t cap) {
  const cat_type *first = NULL;
  cat_type r = cat_type_of(0);
  for (int i = 0; i < n; i++) {
    const cat_type *t = &ts[i];
    if (unk(t)) continue;
    if (!first) { first = t; r = *t; continue; }
    if (cat_type_is_numeric(first->id) && cat_type_is_numeric(t->id)) {
      if (cat_type_is_float(r.id) || cat_type_is_float(t->id)) r = cat_type_of(CAT_T_DOUBLE);
      else if (r.id == CAT_T_DECIMAL || t->id == CAT_T_DECIMAL) r = cat_type_of(CAT_T_DECIMAL);
      else if (t->id > r.id) r = cat_type_of(t->id);
    } else if (cat_type_is_string(first->id) && cat_type_is_string(t->id)) {
      uint32_t len = (r.length && t->length) ? (r.length > t->length ? r.length : t->length) : 0;
      if (r.id != t->id || r.length != t->length) { r = cat_type_of(CAT_T_VARCHAR); r.length = len; }
    } else if (dt(first) && dt(t)) {
      if (t->id == CAT_T_TIMESTAMP) r = cat_type_of(CAT_T_TIMESTAMP);
    } else if (first->id != t->id) {
      char a[40], b[40];
      snprintf(msg, cap, "function %s: arguments of types %s and %s have no common type", f,
               cat_type_format(first, a, sizeof a), cat_type_format(t, b, sizeof b));
      return EXEC_ERROR;
    }
  }
  if (!first) r = cat_type_of(CAT_T_VARCHAR);
  *out = r;
  return EXEC_OK;
}

static int find_name(const char *name) {
  char up[32];
  size_t n = strlen(name);
  if (n >= sizeof up) return 0;
  for (size_t i = 0; i <= n; i++) up[i] = (char)toupper((unsigned char)name[i]);
  for (int id = 1; id < EXEC_F_COUNT_; id++)
    if (id != EXEC_F_NEG && strcmp(func_table[id].name, up) == 0) return id;
  for (size_t i = 0; i < sizeof aliases / sizeof aliases[0]; i++)
    if (strcmp(aliases[i].alias, up) == 0) return aliases[i].id;
  return 0;
}

static int result_type(int id, int n, const cat_type *t, cat_type *rt, char *msg, size_t cap) {
  const char *f = func_table[id].name;
  switch (id) {
    case EXEC_F_ADD: case EXEC_F_SUB:
      if (dt(&t[0]) || dt(&t[1])) {
        const cat_type *d = dt(&t[0]) ? &t[0] : &t[1];
        const cat_type *o = dt(&t[0]) ? &t[1] : &t[0];
        if (id == EXEC_F_SUB && dt(&t[1])) {
          if (!dt(&t[0]) && !unk(&t[0])) return bad_arg(f, &t[0], 0, msg, cap);
          bool both_date = t[0].id == CAT_T_DATE && t[1].id == CAT_T_DATE;
          *rt = cat_type_of(both_date ? CAT_T_BIGINT : CAT_T_DECIMAL);
          return EXEC_OK;
        }
        if (!num(o)) return bad_arg(f, o, o == &t[0] ? 0 : 1, msg, cap);
        if (d->id == CAT_T_DATE && !unk(o) && !cat_type_is_integer(o->id))
          *rt = cat_type_of(CAT_T_TIMESTAMP);
        else
          *rt = cat_type_of(d->id);
        return EXEC_OK;
      }
      /* fall through */
    case EXEC_F_MUL: case EXEC_F_DIV: case EXEC_F_MOD:
      for (int i = 0; i < 2; i++) if (!num(&t[i])) return bad_arg(f, &t[i], i, msg, cap);
      *rt = promote(&t[0], &t[1]);
      return EXEC_OK;
    case EXEC_F_NEG: case EXEC_F_ABS:
      if (!num(&t[0])) return bad_arg(f, &t[0], 0, msg, cap);
      *rt = promote(&t[0], &t[0]);
      if (t[0].id == CAT_T_DECIMAL) *rt = t[0];
      return EXEC_OK;
    case EXEC_F_SIGN:
      if (!num(&t[0])) return bad_arg(f, &t[0], 0, msg, cap);
      *rt = cat_type_of(CAT_T_INTEGER);
      return EXEC_OK;
    case EXEC_F_ROUND: case EXEC_F_FLOOR: case EXEC_F_CEIL: case EXEC_F_TRUNC:
      if (dt(&t[0]) || (unk(&t[0]) && n >= 2 && cat_type_is_string(t[1].id))) {
        if (n >= 2 && !str(&t[1])) return bad_arg(f, &t[1], 1, msg, cap);
        if (n >= 3 && !num(&t[2])) return bad_arg(f, &t[2], 2, msg, cap);
        *rt = unk(&t[0]) ? cat_type_of(CAT_T_TIMESTAMP) : t[0];
        *rt = cat_type_of(rt->id);
        return EXEC_OK;
      }
      if (!num(&t[0])) return bad_arg(f, &t[0], 0, msg, cap);
      if (n >= 2 && !num(&t[1])) return bad_arg(f, &t[1], 1, msg, cap);
      if (n >= 3) {
        snprintf(msg, cap, "function %s takes 1 or 2 arguments for a number, got 3", f);
        return EXEC_ERROR;
      }
      *rt = promote(&t[0], &t[0]);
      return EXEC_OK;
    case EXEC_F_SQRT: case EXEC_F_EXP: case EXEC_F_LN: case EXEC_F_LOG: case EXEC_F_POWER:
      for (int i = 0; i < n; i++) if (!num(&t[i])) return bad_arg(f, &t[i], i, msg, cap);
      *rt = cat_type_of(CAT_T_DOUBLE);
      return EXEC_OK;
    case EXEC_F_CONCAT:
      for (int i = 0; i < 2; i++)
        if (t[i].id == CAT_T_ARRAY) {
          bad_arg(f, &t[i], i, msg, cap);
          size_t l = strlen(msg);
          snprintf(msg + l, cap - l, "; use ARRAY_CAT or ARRAY_APPEND");
          return EXEC_ERROR;
        }
      *rt = cat_type_of(t[0].id == CAT_T_VARBINARY && t[1].id == CAT_T_VARBINARY
                            ? CAT_T_VARBINARY : CAT_T_VARCHAR);
      return EXEC_OK;
    case EXEC_F_CONCAT_N:
      *rt = cat_type_of(CAT_T_VARCHAR);
      return EXEC_OK;
    case EXEC_F_UPPER: case EXEC_F_LOWER:
      if (!str(&t[0])) return bad_arg(f, &t[0], 0, msg, cap);
      *rt = unk(&t[0]) ? cat_type_of(CAT_T_VARCHAR) : t[0];
      return EXEC_OK;
    case EXEC_F_LENGTH:
      if (!str(&t[0]) && t[0].id != CAT_T_VARBINARY) return bad_arg(f, &t[0], 0, msg, cap);
      *rt = cat_type_of(CAT_T_INTEGER);
      return EXEC_OK;
    case EXEC_F_SUBSTR:
      if (!str(&t[0])) return bad_arg(f, &t[0], 0, msg, cap);
      for (int i = 1; i < n; i++) if (!num(&t[i])) return bad_arg(f, &t[i], i, msg, cap);
      *rt = cat_type_of(CAT_T_VARCHAR);
      rt->length = t[0].length;
      return EXEC_OK;
    case EXEC_F_TRIM: case EXEC_F_LTRIM: case EXEC_F_RTRIM:
      for (int i = 0; i < n; i++) if (!str(&t[i])) return bad_arg(f, &t[i], i, msg, cap);
      *rt = cat_type_of(CAT_T_VARCHAR);
      rt->length = t[0].length;
      return EXEC_OK;
    case EXEC_F_COALESCE: case EXEC_F_GREATEST: case EXEC_F_LEAST:
      return common_type(f, n, t, rt, msg, cap);
    case EXEC_F_NULLIF: {
      cat_type c;
      int rc = common_type(f, n, t, &c, msg, cap);
      if (rc) return rc;
      *rt = unk(&t[0]) ? c : t[0];
      return EXEC_OK;
    }
    case EXEC_F_TO_TIMESTAMP: case EXEC_F_TO_DATE: case EXEC_F_TO_NUMBER: case EXEC_F_TO_TIME:
      for (int i = 0; i < n; i++) if (!str(&t[i])) return bad_arg(f, &t[i], i, msg, cap);
      *rt = cat_type_of(id == EXEC_F_TO_TIMESTAMP ? CAT_T_TIMESTAMP
                        : id == EXEC_F_TO_DATE   ? CAT_T_DATE
                        : id == EXEC_F_TO_TIME   ? CAT_T_TIME : CAT_T_DECIMAL);
      return EXEC_OK;
    case EXEC_F_CONVERT_TZ:
      if (!dt(&t[0]) && !unk(&t[0])) return bad_arg(f, &t[0], 0, msg, cap);
      for (int i = 1; i < n; i++) if (!str(&t[i])) return bad_arg(f, &t[i], i, msg, cap);
      *rt = cat_type_of(CAT_T_TIMESTAMP);
      return EXEC_OK;
    case EXEC_F_TIMEZONE_OFFSET:
      if (!str(&t[0])) return bad_arg(f, &t[0], 0, msg, cap);
      if (!dt(&t[1]) && !unk(&t[1])) return bad_arg(f, &t[1], 1, msg, cap);
      *rt = cat_type_of(CAT_T_INTEGER);
      return EXEC_OK;
    case EXEC_F_TO_CHAR:
      if (!num(&t[0]) && !dt(&t[0]) && t[0].id != CAT_T_TIME && !str(&t[0]))
        return bad_arg(f, &t[0], 0, msg, cap);
      if (n == 2 && !str(&t[1])) return bad_arg(f, &t[1], 1, msg, cap);
      *rt = cat_type_of(CAT_T_VARCHAR);
      return EXEC_OK;
    case EXEC_F_MAKE_TIMESTAMP:
      for (int i = 0; i < n; i++) if (!num(&t[i])) return bad_arg(f, &t[i], i, msg, cap);
      *rt = cat_type_of(CAT_T_TIMESTAMP);
      return EXEC_OK;
    case EXEC_F_NOW:
      *rt = cat_type_of(CAT_T_TIMESTAMP);
      return EXEC_OK;
    case EXEC_F_CURRENT_DATE:
      *rt = cat_type_of(CAT_T_DATE);
      return EXEC_OK;
    case EXEC_F_HOUR: case EXEC_F_MINUTE: case EXEC_F_SECOND:
      if (t[0].id == CAT_T_TIME) { *rt = cat_type_of(CAT_T_INTEGER); return EXEC_OK; }
      /* fall through */
    case EXEC_F_YEAR: case EXEC_F_MONTH: case EXEC_F_DAYOFMONTH: case EXEC_F_DAYOFWEEK:
    case EXEC_F_DAYOFYEAR: case EXEC_F_WEEK: case EXEC_F_QUARTER:
      if (!dt(&t[0]) && !unk(&t[0])) return bad_arg(f, &t[0], 0, msg, cap);
      *rt = cat_type_of(CAT_T_INTEGER);
      return EXEC_OK;
    case EXEC_F_REPLACE: case EXEC_F_REGEXP_REPLACE:
      for (int i = 0; i < n; i++) if (!str(&t[i])) return bad_arg(f, &t[i], i, msg, cap);
      *rt = cat_type_of(CAT_T_VARCHAR);
      return EXEC_OK;
    case EXEC_F_LPAD: case EXEC_F_RPAD:
      if (!str(&t[0])) return bad_arg(f, &t[0], 0, msg, cap);
      if (!num(&t[1])) return bad_arg(f, &t[1], 1, msg, cap);
      if (n >= 3 && !str(&t[2])) return bad_arg(f, &t[2], 2, msg, cap);
      *rt = cat_type_of(CAT_T_VARCHAR);
      return EXEC_OK;
    case EXEC_F_INSTR:
      for (int i = 0; i < n; i++) if (!str(&t[i])) return bad_arg(f, &t[i], i, msg, cap);
      *rt = cat_type_of(CAT_T_INTEGER);
      return EXEC_OK;
    case EXEC_F_REGEXP_SUBSTR:
      for (int i = 0; i < 2; i++) if (!str(&t[i])) return bad_arg(f, &t[i], i, msg, cap);
      if (n >= 3 && !num(&t[2])) return bad_arg(f, &t[2], 2, msg, cap);
      *rt = cat_type_of(CAT_T_VARCHAR);
      return EXEC_OK;
    case EXEC_F_ARRAY: {
      cat_type e;
      int bad;
      if (exec_array_elem_type(n, t, &e, &bad, msg, cap)) return EXEC_ERROR;
      *rt = cat_type_array_of(&e);
      return EXEC_OK;
    }
    case EXEC_F_ARRAY_ELEM: case EXEC_F_ARRAY_LENGTH:
      if (!unk(&t[0]) && t[0].id != CAT_T_ARRAY) {
        char tb[48];
        if (id == EXEC_F_ARRAY_ELEM)
          snprintf(msg, cap, "subscript [ ] (ARRAY_ELEM) needs an ARRAY, not %s",
                   cat_type_format(&t[0], tb, sizeof tb));
        else
          bad_arg(f, &t[0], 0, msg, cap);
        return EXEC_ERROR;
      }
      if (id == EXEC_F_ARRAY_ELEM && !num(&t[1])) return bad_arg(f, &t[1], 1, msg, cap);
      if (unk(&t[0])) {
        snprintf(msg, cap, "function %s: the type of argument 1 must be known (write CAST(? AS "
                 "VARCHAR ARRAY))", f);
        return EXEC_ERROR;
      }
      *rt = id == EXEC_F_ARRAY_ELEM ? cat_type_elem(&t[0]) : cat_type_of(CAT_T_INTEGER);
      return EXEC_OK;
    case EXEC_F_REGEXP_SPLIT: {
      for (int i = 0; i < 2; i++) if (!str(&t[i])) return bad_arg(f, &t[i], i, msg, cap);
      cat_type v = cat_type_of(CAT_T_VARCHAR);
      *rt = cat_type_array_of(&v);
      return EXEC_OK;
    }
    case EXEC_F_ANY: {
      if (t[1].id != CAT_T_ARRAY) {
        char tb[48];
        snprintf(msg, cap, "ANY needs an ARRAY, not %s", unk(&t[1]) ? "an untyped value"
                 : cat_type_format(&t[1], tb, sizeof tb));
        return EXEC_ERROR;
      }
      *rt = cat_type_of(CAT_T_BOOLEAN);
      return EXEC_OK;
    }
    case EXEC_F_ARRAY_APPEND: case EXEC_F_ARRAY_PREPEND: case EXEC_F_ARRAY_CAT: {
      int ai = id == EXEC_F_ARRAY_PREPEND ? 1 : 0, oi = 1 - ai;
      if (t[ai].id != CAT_T_ARRAY) {
        if (unk(&t[ai]))
          snprintf(msg, cap, "function %s: the type of argument %d must be known", f, ai + 1);
        else
          bad_arg(f, &t[ai], ai, msg, cap);
        return EXEC_ERROR;
      }
      cat_type e = cat_type_elem(&t[ai]);
      if (id == EXEC_F_ARRAY_CAT) {
        if (!unk(&t[oi]) && t[oi].id != CAT_T_ARRAY) return bad_arg(f, &t[oi], oi, msg, cap);
        if (!unk(&t[oi])) {
          cat_type e2 = cat_type_elem(&t[oi]);
          int bad;
          cat_type two[2] = {e, e2};
          if (exec_array_elem_type(2, two, &e, &bad, msg, cap)) return bad_arg(f, &t[oi], oi, msg, cap);
        }
      } else if (!unk(&t[oi])) {
        int bad;
        cat_type two[2] = {e, t[oi]};
        cat_type u;
        if (t[oi].id == CAT_T_ARRAY || exec_array_elem_type(2, two, &u, &bad, msg, cap))
          return bad_arg(f, &t[oi], oi, msg, cap);
      }
      *rt = cat_type_array_of(&e);
      return EXEC_OK;
    }
    default:
      snprintf(msg, cap, "unknown function id %d", id);
      return EXEC_ERROR;
  }
}

int exec_func_lookup(const char *name, int n_args, const cat_type *arg_types, int *func_id,
                     cat_type *result_type_out, char *msg, size_t cap) {
  char dummy[8];
  if (!msg || !cap) { msg = dummy; cap = sizeof dummy; }
  int id;
  if (strcmp(name, "-") == 0 && n_args == 1) id = EXEC_F_NEG;
  else id = find_name(name);
  if (!id) {
    if (strcasecmp(name, "ARRAY_AGG") == 0)
      snprintf(msg, cap, "aggregate ARRAY_AGG (it returns an ARRAY) is not supported");
    else if (cat_func_is_aggregate(name))
      snprintf(msg, cap, "%s is an aggregate function, not allowed here", name);
    else
      snprintf(msg, cap, "unknown function %s", name);
    return EXEC_ERROR;
  }
  const func_def *d = &func_table[id];
  if (n_args < d->min_args || (d->max_args >= 0 && n_args > d->max_args)) {
    if (d->max_args < 0)
      snprintf(msg, cap, "function %s takes at least %d argument%s, got %d", d->name,
               d->min_args, d->min_args == 1 ? "" : "s", n_args);
    else if (d->min_args == d->max_args)
      snprintf(msg, cap, "function %s takes %d argument%s, got %d", d->name, d->min_args,
               d->min_args == 1 ? "" : "s", n_args);
    else
      snprintf(msg, cap, "function %s takes %d to %d arguments, got %d", d->name, d->min_args,
               d->max_args, n_args);
    return EXEC_ERROR;
  }
  cat_type rt;
  int rc = result_type(id, n_args, arg_types, &rt, msg, cap);
  if (rc) return rc;
  *func_id = id;
  *result_type_out = rt;
  return EXEC_OK;
}

int exec_func_of_op(int sql_op) {
  switch (sql_op) {
    case SQL_OP_ADD: return EXEC_F_ADD;
    case SQL_OP_SUB: return EXEC_F_SUB;
    case SQL_OP_MUL: return EXEC_F_MUL;
    case SQL_OP_DIV: return EXEC_F_DIV;
    case SQL_OP_MOD: return EXEC_F_MOD;
    case SQL_OP_CONCAT: return EXEC_F_CONCAT;
    case SQL_OP_NEG: return EXEC_F_NEG;
    default: return 0;
  }
}

const char *exec_func_name(int func_id) {
  if (func_id <= 0 || func_id >= EXEC_F_COUNT_) return "?";
  return func_table[func_id].name;
}

bool exec_func_deterministic(int func_id, int n_args) {
  switch (func_id) {
    case EXEC_F_NOW: case EXEC_F_CURRENT_DATE: case EXEC_F_CONVERT_TZ:
    case EXEC_F_TIMEZONE_OFFSET:
      return false;
    case EXEC_F_TO_TIMESTAMP: case EXEC_F_TO_DATE: case EXEC_F_TO_TIME:
      return n_args < 3;
    default:
      return true;
  }
}

cat_type exec_func_arg_hint(int func_id, int n_args, const cat_type *t, int i) {
  cat_type none = cat_type_of(0);
  if (i < 0 || i >= n_args) return none;
  switch (func_id) {
    case EXEC_F_ADD: case EXEC_F_SUB: case EXEC_F_MUL: case EXEC_F_DIV: case EXEC_F_MOD: {
      const cat_type *o = &t[1 - i];
      if (dt(o)) return cat_type_of(CAT_T_INTEGER);
      return unk(o) ? cat_type_of(CAT_T_DECIMAL) : *o;
    }
    case EXEC_F_CONCAT: case EXEC_F_CONCAT_N: case EXEC_F_UPPER: case EXEC_F_LOWER:
    case EXEC_F_LENGTH:
    case EXEC_F_TRIM: case EXEC_F_LTRIM: case EXEC_F_RTRIM: case EXEC_F_TO_TIMESTAMP:
    case EXEC_F_TO_DATE: case EXEC_F_TO_NUMBER: case EXEC_F_REPLACE: case EXEC_F_INSTR:
    case EXEC_F_REGEXP_REPLACE: case EXEC_F_TO_TIME:
      return cat_type_of(CAT_T_VARCHAR);
    case EXEC_F_CONVERT_TZ: case EXEC_F_TIMEZONE_OFFSET:
      return cat_type_of(i == (func_id == EXEC_F_CONVERT_TZ ? 0 : 1) ? CAT_T_TIMESTAMP
                                                                     : CAT_T_VARCHAR);
    case EXEC_F_LPAD: case EXEC_F_RPAD: case EXEC_F_REGEXP_SUBSTR:
      return cat_type_of(i == (func_id == EXEC_F_REGEXP_SUBSTR ? 2 : 1) ? CAT_T_INTEGER
                                                                  : CAT_T_VARCHAR);
    case EXEC_F_SUBSTR:
      return cat_type_of(i == 0 ? CAT_T_VARCHAR : CAT_T_INTEGER);
    case EXEC_F_REGEXP_SPLIT:
      return cat_type_of(CAT_T_VARCHAR);
    case EXEC_F_ARRAY_ELEM:
      return i == 1 ? cat_type_of(CAT_T_INTEGER) : none;
    case EXEC_F_ARRAY: {
      cat_type e;
      int bad;
      char m[8];
      for (int k = 0; k < n_args; k++)
        if (!unk(&t[k])) return exec_array_elem_type(n_args, t, &e, &bad, m, sizeof m) ? none : e;
      return none;
    }
    case EXEC_F_ARRAY_APPEND: case EXEC_F_ARRAY_PREPEND: {
      int ai = func_id == EXEC_F_ARRAY_PREPEND ? 1 : 0;
      return i != ai && t[ai].id == CAT_T_ARRAY ? cat_type_elem(&t[ai]) : none;
    }
    case EXEC_F_ROUND: case EXEC_F_FLOOR: case EXEC_F_CEIL: case EXEC_F_TRUNC:
      if (i == 1) return cat_type_of(dt(&t[0]) ? CAT_T_VARCHAR : CAT_T_INTEGER);
      if (i == 2) return cat_type_of(CAT_T_INTEGER);
      return cat_type_of(CAT_T_DECIMAL);
    case EXEC_F_TO_CHAR:
      return i == 1 ? cat_type_of(CAT_T_VARCHAR) : none;
    case EXEC_F_MAKE_TIMESTAMP:
      return cat_type_of(i == 5 ? CAT_T_DECIMAL : CAT_T_INTEGER);
    case EXEC_F_ABS: case EXEC_F_NEG: case EXEC_F_SIGN:
      return cat_type_of(CAT_T_DECIMAL);
    case EXEC_F_SQRT: case EXEC_F_POWER: case EXEC_F_EXP: case EXEC_F_LN: case EXEC_F_LOG:
      return cat_type_of(CAT_T_DOUBLE);
    case EXEC_F_COALESCE: case EXEC_F_NULLIF: case EXEC_F_GREATEST: case EXEC_F_LEAST: {
      cat_type r;
      char m[8];
      if (common_type("", n_args, t, &r, m, sizeof m) == EXEC_OK) {
        for (int k = 0; k < n_args; k++) if (!unk(&t[k])) return r;
      }
      return none;
    }
    default:
      return none;
  }
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
  const func_def *d = &func_table[func_id];
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
    case FAM_NUM: rc = exec_fn_num(func_id, args, n_args, out, ctx); break;
    case FAM_STR: rc = exec_fn_str(func_id, args, n_args, out, ctx); break;
    case FAM_DATE: rc = exec_fn_date(func_id, args, n_args, out, ctx); break;
    case FAM_FMT: rc = exec_fn_fmt(func_id, args, n_args, out, ctx); break;
    case FAM_REGEX: rc = exec_fn_regex(func_id, args, n_args, out, ctx); break;
    case FAM_TZ: rc = exec_fn_tz(func_id, args, n_args, out, ctx); break;
    case FAM_ARRAY: rc = exec_fn_array(func_id, args, n_args, rt, out, ctx); break;
    default: rc = generic(func_id, args, n_args, rt, out, ctx); break;
  }
  if (rc) return rc;
  return to_result(out, rt, ctx);
}
