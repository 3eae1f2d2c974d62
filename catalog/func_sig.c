/*
** catalog/func_sig.c: the signatures of Rowan's scalar functions and operators
** (catalog/func_sig.h): names and aliases, argument counts, argument type checks and result
** types, parameter type hints, which calls are deterministic. The binder (planner/) and the
** executor's call dispatcher (exec/func.c) both read this table, so it lives below both.
** Not here: calling a function (exec/func.c and the exec/func_*.c families), aggregates
** (catalog/agg_sig.c).
*/
#include "catalog/func_sig.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "catalog/array.h"
#include "catalog/status.h"


/* ORDER EXEC_FUNC: one entry per enum exec_func_id, in order. */
static const cat_func_def func_table[EXEC_F_COUNT_] = {
    [0] = {"?", 0, 0, true, 0},
    [EXEC_F_ADD] = {"+", 2, 2, true, CAT_FAM_NUM},
    [EXEC_F_SUB] = {"-", 2, 2, true, CAT_FAM_NUM},
    [EXEC_F_MUL] = {"*", 2, 2, true, CAT_FAM_NUM},
    [EXEC_F_DIV] = {"/", 2, 2, true, CAT_FAM_NUM},
    [EXEC_F_MOD] = {"%", 2, 2, true, CAT_FAM_NUM},
    [EXEC_F_NEG] = {"-", 1, 1, true, CAT_FAM_NUM},
    [EXEC_F_CONCAT] = {"||", 2, 2, true, CAT_FAM_STR},
    [EXEC_F_ABS] = {"ABS", 1, 1, true, CAT_FAM_NUM},
    [EXEC_F_SIGN] = {"SIGN", 1, 1, true, CAT_FAM_NUM},
    [EXEC_F_ROUND] = {"ROUND", 1, 3, true, CAT_FAM_NUM},
    [EXEC_F_FLOOR] = {"FLOOR", 1, 3, true, CAT_FAM_NUM},
    [EXEC_F_CEIL] = {"CEIL", 1, 3, true, CAT_FAM_NUM},
    [EXEC_F_TRUNC] = {"TRUNC", 1, 3, true, CAT_FAM_NUM},
    [EXEC_F_SQRT] = {"SQRT", 1, 1, true, CAT_FAM_NUM},
    [EXEC_F_POWER] = {"POWER", 2, 2, true, CAT_FAM_NUM},
    [EXEC_F_EXP] = {"EXP", 1, 1, true, CAT_FAM_NUM},
    [EXEC_F_LN] = {"LN", 1, 1, true, CAT_FAM_NUM},
    [EXEC_F_LOG] = {"LOG", 1, 2, true, CAT_FAM_NUM},
    [EXEC_F_UPPER] = {"UPPER", 1, 1, true, CAT_FAM_STR},
    [EXEC_F_LOWER] = {"LOWER", 1, 1, true, CAT_FAM_STR},
    [EXEC_F_LENGTH] = {"LENGTH", 1, 1, true, CAT_FAM_STR},
    [EXEC_F_SUBSTR] = {"SUBSTR", 2, 3, true, CAT_FAM_STR},
    [EXEC_F_TRIM] = {"TRIM", 1, 2, true, CAT_FAM_STR},
    [EXEC_F_LTRIM] = {"LTRIM", 1, 2, true, CAT_FAM_STR},
    [EXEC_F_RTRIM] = {"RTRIM", 1, 2, true, CAT_FAM_STR},
    [EXEC_F_COALESCE] = {"COALESCE", 1, -1, false, CAT_FAM_GEN},
    [EXEC_F_NULLIF] = {"NULLIF", 2, 2, false, CAT_FAM_GEN},
    [EXEC_F_GREATEST] = {"GREATEST", 1, -1, false, CAT_FAM_GEN},
    [EXEC_F_LEAST] = {"LEAST", 1, -1, false, CAT_FAM_GEN},
    [EXEC_F_TO_TIMESTAMP] = {"TO_TIMESTAMP", 1, 3, true, CAT_FAM_FMT},
    [EXEC_F_TO_DATE] = {"TO_DATE", 1, 3, true, CAT_FAM_FMT},
    [EXEC_F_TO_CHAR] = {"TO_CHAR", 1, 2, true, CAT_FAM_FMT},
    [EXEC_F_TO_NUMBER] = {"TO_NUMBER", 1, 2, true, CAT_FAM_FMT},
    [EXEC_F_MAKE_TIMESTAMP] = {"MAKE_TIMESTAMP", 6, 6, true, CAT_FAM_DATE},
    [EXEC_F_NOW] = {"NOW", 0, 0, true, CAT_FAM_DATE},
    [EXEC_F_CURRENT_DATE] = {"CURRENT_DATE", 0, 0, true, CAT_FAM_DATE},
    [EXEC_F_YEAR] = {"YEAR", 1, 1, true, CAT_FAM_DATE},
    [EXEC_F_MONTH] = {"MONTH", 1, 1, true, CAT_FAM_DATE},
    [EXEC_F_DAYOFMONTH] = {"DAYOFMONTH", 1, 1, true, CAT_FAM_DATE},
    [EXEC_F_HOUR] = {"HOUR", 1, 1, true, CAT_FAM_DATE},
    [EXEC_F_MINUTE] = {"MINUTE", 1, 1, true, CAT_FAM_DATE},
    [EXEC_F_SECOND] = {"SECOND", 1, 1, true, CAT_FAM_DATE},
    [EXEC_F_DAYOFWEEK] = {"DAYOFWEEK", 1, 1, true, CAT_FAM_DATE},
    [EXEC_F_DAYOFYEAR] = {"DAYOFYEAR", 1, 1, true, CAT_FAM_DATE},
    [EXEC_F_CONCAT_N] = {"CONCAT", 1, -1, false, CAT_FAM_STR},
    [EXEC_F_REPLACE] = {"REPLACE", 2, 3, true, CAT_FAM_STR},
    [EXEC_F_LPAD] = {"LPAD", 2, 3, true, CAT_FAM_STR},
    [EXEC_F_RPAD] = {"RPAD", 2, 3, true, CAT_FAM_STR},
    [EXEC_F_INSTR] = {"INSTR", 2, 2, true, CAT_FAM_STR},
    [EXEC_F_REGEXP_SUBSTR] = {"REGEXP_SUBSTR", 2, 3, true, CAT_FAM_REGEX},
    [EXEC_F_REGEXP_REPLACE] = {"REGEXP_REPLACE", 2, 3, true, CAT_FAM_REGEX},
    [EXEC_F_WEEK] = {"WEEK", 1, 1, true, CAT_FAM_DATE},
    [EXEC_F_QUARTER] = {"QUARTER", 1, 1, true, CAT_FAM_DATE},
    [EXEC_F_TO_TIME] = {"TO_TIME", 1, 3, true, CAT_FAM_FMT},
    [EXEC_F_CONVERT_TZ] = {"CONVERT_TZ", 3, 3, true, CAT_FAM_TZ},
    [EXEC_F_TIMEZONE_OFFSET] = {"TIMEZONE_OFFSET", 2, 2, true, CAT_FAM_TZ},
    [EXEC_F_ARRAY] = {"ARRAY", 1, -1, false, CAT_FAM_ARRAY},
    [EXEC_F_ARRAY_ELEM] = {"ARRAY_ELEM", 2, 2, true, CAT_FAM_ARRAY},
    [EXEC_F_ARRAY_LENGTH] = {"ARRAY_LENGTH", 1, 1, true, CAT_FAM_ARRAY},
    [EXEC_F_REGEXP_SPLIT] = {"REGEXP_SPLIT", 2, 2, true, CAT_FAM_REGEX},
    [EXEC_F_ARRAY_APPEND] = {"ARRAY_APPEND", 2, 2, true, CAT_FAM_ARRAY},
    [EXEC_F_ARRAY_PREPEND] = {"ARRAY_PREPEND", 2, 2, true, CAT_FAM_ARRAY},
    [EXEC_F_ARRAY_CAT] = {"ARRAY_CAT", 2, 2, true, CAT_FAM_ARRAY},
    [EXEC_F_ANY] = {"ANY", 3, 3, false, CAT_FAM_ARRAY},
    [EXEC_F_SCALAR_ONE] = {"SCALAR_ONE", 3, 3, false, CAT_FAM_GEN},
    [EXEC_F_IN_SET] = {"IN_SET", 2, -1, false, CAT_FAM_GEN},
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
    if (id != EXEC_F_NEG && id != EXEC_F_SCALAR_ONE && id != EXEC_F_IN_SET &&
        strcmp(func_table[id].name, up) == 0)
      return id;
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
    case EXEC_F_SCALAR_ONE:
      *rt = t[1];
      return EXEC_OK;
    case EXEC_F_IN_SET:
      *rt = cat_type_of(CAT_T_BOOLEAN);
      return EXEC_OK;
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
      if (cat_array_elem_type(n, t, &e, &bad, msg, cap)) return EXEC_ERROR;
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
          if (cat_array_elem_type(2, two, &e, &bad, msg, cap)) return bad_arg(f, &t[oi], oi, msg, cap);
        }
      } else if (!unk(&t[oi])) {
        int bad;
        cat_type two[2] = {e, t[oi]};
        cat_type u;
        if (t[oi].id == CAT_T_ARRAY || cat_array_elem_type(2, two, &u, &bad, msg, cap))
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

int cat_func_lookup(const char *name, int n_args, const cat_type *arg_types, int *func_id,
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
  const cat_func_def *d = &func_table[id];
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


const char *cat_func_name(int func_id) {
  if (func_id <= 0 || func_id >= EXEC_F_COUNT_) return "?";
  return func_table[func_id].name;
}

bool cat_func_deterministic(int func_id, int n_args) {
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

cat_type cat_func_arg_hint(int func_id, int n_args, const cat_type *t, int i) {
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
        if (!unk(&t[k])) return cat_array_elem_type(n_args, t, &e, &bad, m, sizeof m) ? none : e;
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

const cat_func_def *cat_func_def_of(int func_id) {
  return &func_table[func_id > 0 && func_id < EXEC_F_COUNT_ ? func_id : 0];
}
