/*
** tests/exec/test_func.c: exec/func.h for numbers, strings and the generic functions, and
** exec/arena.h: lookup (names, aliases, case, argument counts and types, result types,
** parameter hints, the registry's internal consistency), arithmetic with its promotion
** rules, overflow and division errors (plus a seeded random check of integer arithmetic
** against 128-bit reference results), ABS/SIGN/ROUND/FLOOR/CEIL/TRUNC/SQRT/POWER/EXP/LN/LOG,
** UPPER/LOWER/LENGTH/SUBSTR/TRIM/||, COALESCE/NULLIF/GREATEST/LEAST, CAST, NULL rules.
** Dates and formats are in test_func_date.c.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalog/value.h"
#include "exec/engine.h"
#include "exec/func.h"
#include "planner/expr.h"
#include "sql/ast.h"
#include "testutil.h"

#include "func_test_util.h"


/* ---- Lookup ---------------------------------------------------------------------------- */
static void test_lookup_errors(void **state) {
  (void)state;
  int id;
  cat_type rt, t[3] = {cat_type_of(CAT_T_INTEGER), cat_type_of(CAT_T_VARCHAR),
                       cat_type_of(CAT_T_INTEGER)};
  assert_int_equal(cat_func_lookup("FOO", 1, t, &id, &rt, msg, sizeof msg), EXEC_ERROR);
  assert_non_null(strstr(msg, "unknown function FOO"));
  assert_int_equal(cat_func_lookup("substr", 1, t + 1, &id, &rt, msg, sizeof msg), EXEC_ERROR);
  assert_non_null(strstr(msg, "SUBSTR takes 2 to 3 arguments, got 1"));
  assert_int_equal(cat_func_lookup("ABS", 2, t, &id, &rt, msg, sizeof msg), EXEC_ERROR);
  assert_non_null(strstr(msg, "ABS takes 1 argument, got 2"));
  assert_int_equal(cat_func_lookup("COALESCE", 0, t, &id, &rt, msg, sizeof msg), EXEC_ERROR);
  assert_non_null(strstr(msg, "at least 1"));
  assert_int_equal(cat_func_lookup("UPPER", 1, t, &id, &rt, msg, sizeof msg), EXEC_ERROR);
  assert_non_null(strstr(msg, "UPPER does not accept INTEGER (argument 1)"));
  assert_int_equal(cat_func_lookup("+", 2, t, &id, &rt, msg, sizeof msg), EXEC_ERROR);
  assert_non_null(strstr(msg, "does not accept VARCHAR (argument 2)"));
  assert_int_equal(cat_func_lookup("sum", 1, t, &id, &rt, msg, sizeof msg), EXEC_ERROR);
  assert_non_null(strstr(msg, "aggregate"));
  assert_int_equal(cat_func_lookup("COALESCE", 2, t, &id, &rt, msg, sizeof msg), EXEC_ERROR);
  assert_non_null(strstr(msg, "no common type"));
  assert_int_equal(cat_func_lookup("SUBSTRINGX", 2, t, &id, &rt, msg, sizeof msg), EXEC_ERROR);
  /* a name longer than any function */
  assert_int_equal(cat_func_lookup("A_VERY_LONG_FUNCTION_NAME_THAT_IS_NOT_THERE", 1, t, &id,
                                    &rt, msg, sizeof msg), EXEC_ERROR);
}

static void test_lookup_names(void **state) {
  (void)state;
  int id;
  cat_type rt, t[2] = {cat_type_of(CAT_T_VARCHAR), cat_type_of(CAT_T_INTEGER)};
  assert_int_equal(cat_func_lookup("Upper", 1, t, &id, &rt, msg, sizeof msg), EXEC_OK);
  assert_int_equal(id, EXEC_F_UPPER);
  assert_int_equal(cat_func_lookup("substring", 2, t, &id, &rt, msg, sizeof msg), EXEC_OK);
  assert_int_equal(id, EXEC_F_SUBSTR);
  assert_int_equal(cat_func_lookup("char_length", 1, t, &id, &rt, msg, sizeof msg), EXEC_OK);
  assert_int_equal(id, EXEC_F_LENGTH);
  assert_int_equal(cat_func_lookup("current_timestamp", 0, t, &id, &rt, msg, sizeof msg), EXEC_OK);
  assert_int_equal(id, EXEC_F_NOW);
  assert_int_equal(cat_func_lookup("-", 1, t + 1, &id, &rt, msg, sizeof msg), EXEC_OK);
  assert_int_equal(id, EXEC_F_NEG);
  assert_int_equal(rt.id, CAT_T_BIGINT);
  assert_true(cat_func_is_aggregate("count"));
  assert_true(cat_func_is_aggregate("MAX"));
  assert_false(cat_func_is_aggregate("UPPER"));
  assert_int_equal(plan_func_of_op(SQL_OP_ADD), EXEC_F_ADD);
  assert_int_equal(plan_func_of_op(SQL_OP_CONCAT), EXEC_F_CONCAT);
  assert_int_equal(plan_func_of_op(SQL_OP_NEG), EXEC_F_NEG);
  assert_int_equal(plan_func_of_op(SQL_OP_EQ), 0);
  assert_string_equal(cat_func_name(EXEC_F_TO_CHAR), "TO_CHAR");
  assert_string_equal(cat_func_name(0), "?");
  assert_string_equal(cat_func_name(EXEC_F_COUNT_), "?");
  /* every named function resolves back to its id with untyped arguments */
  cat_type unk[8];
  memset(unk, 0, sizeof unk);
  int got0;
  for (int f = 1; f < EXEC_F_COUNT_; f++) {
    const char *name = cat_func_name(f);
    assert_string_not_equal(name, "?");
    if (f == EXEC_F_NEG) continue;
    if (f == EXEC_F_SCALAR_ONE || f == EXEC_F_IN_SET) { /* internal: never found by name */
      cat_type t3[3] = {cat_type_of(CAT_T_BIGINT), unk[0], unk[0]};
      char want[64];
      snprintf(want, sizeof want, "unknown function %s", name);
      assert_int_equal(cat_func_lookup(name, 3, t3, &got0, &rt, msg, sizeof msg), EXEC_ERROR);
      assert_string_equal(msg, want);
      continue;
    }
    int n = f <= EXEC_F_CONCAT ? 2 : f == EXEC_F_CONCAT_N || f == EXEC_F_CONVERT_TZ ? 3
            : f == EXEC_F_TIMEZONE_OFFSET ? 2 : f == EXEC_F_MAKE_TIMESTAMP ? 6
            : (f == EXEC_F_NOW || f == EXEC_F_CURRENT_DATE) ? 0 : (f == EXEC_F_SUBSTR ||
               f == EXEC_F_POWER || f == EXEC_F_NULLIF || (f >= EXEC_F_REPLACE &&
               f <= EXEC_F_REGEXP_REPLACE) || f == EXEC_F_REGEXP_SPLIT) ? 2 : 1;
    int got;
    cat_type v = cat_type_of(CAT_T_VARCHAR), at[2];
    const cat_type *ts = unk;
    if (f >= EXEC_F_ARRAY_ELEM && f != EXEC_F_REGEXP_SPLIT) { /* these need a typed ARRAY */
      at[0] = at[1] = cat_type_array_of(&v);
      if (f == EXEC_F_ARRAY_ELEM) at[1] = cat_type_of(CAT_T_INTEGER);
      if (f == EXEC_F_ARRAY_APPEND) at[1] = v;
      if (f == EXEC_F_ARRAY_PREPEND) at[0] = v;
      n = f == EXEC_F_ARRAY_LENGTH ? 1 : 2;
      ts = at;
    }
    cat_type any3[3] = {v, cat_type_array_of(&v), cat_type_of(CAT_T_INTEGER)};
    if (f == EXEC_F_ANY) {
      n = 3;
      ts = any3;
    }
    if (cat_func_lookup(name, n, ts, &got, &rt, msg, sizeof msg) != EXEC_OK)
      fail_msg("%s/%d: %s", name, n, msg);
    assert_int_equal(got, f);
  }
}

static void test_lookup_types(void **state) {
  (void)state;
  int id;
  cat_type rt;
  cat_type dec = {CAT_T_DECIMAL, 10, 2, 0, 0}, vc = {CAT_T_VARCHAR, 0, 0, 20, 0};
  cat_type t[3];
  t[0] = cat_type_of(CAT_T_SMALLINT); t[1] = cat_type_of(CAT_T_INTEGER);
  assert_int_equal(cat_func_lookup("*", 2, t, &id, &rt, msg, sizeof msg), EXEC_OK);
  assert_int_equal(rt.id, CAT_T_BIGINT);
  t[1] = dec;
  assert_int_equal(cat_func_lookup("/", 2, t, &id, &rt, msg, sizeof msg), EXEC_OK);
  assert_int_equal(rt.id, CAT_T_DECIMAL);
  t[1] = cat_type_of(CAT_T_FLOAT);
  assert_int_equal(cat_func_lookup("+", 2, t, &id, &rt, msg, sizeof msg), EXEC_OK);
  assert_int_equal(rt.id, CAT_T_DOUBLE);
  t[0] = cat_type_of(CAT_T_DATE); t[1] = cat_type_of(CAT_T_INTEGER);
  assert_int_equal(cat_func_lookup("+", 2, t, &id, &rt, msg, sizeof msg), EXEC_OK);
  assert_int_equal(rt.id, CAT_T_DATE);
  t[1] = cat_type_of(CAT_T_DOUBLE);
  assert_int_equal(cat_func_lookup("+", 2, t, &id, &rt, msg, sizeof msg), EXEC_OK);
  assert_int_equal(rt.id, CAT_T_TIMESTAMP);
  t[1] = cat_type_of(CAT_T_DATE);
  assert_int_equal(cat_func_lookup("-", 2, t, &id, &rt, msg, sizeof msg), EXEC_OK);
  assert_int_equal(rt.id, CAT_T_BIGINT);
  t[1] = cat_type_of(CAT_T_TIMESTAMP);
  assert_int_equal(cat_func_lookup("-", 2, t, &id, &rt, msg, sizeof msg), EXEC_OK);
  assert_int_equal(rt.id, CAT_T_DECIMAL);
  assert_int_equal(cat_func_lookup("+", 2, t, &id, &rt, msg, sizeof msg), EXEC_ERROR);
  t[0] = vc;
  assert_int_equal(cat_func_lookup("UPPER", 1, t, &id, &rt, msg, sizeof msg), EXEC_OK);
  assert_int_equal(rt.id, CAT_T_VARCHAR);
  assert_int_equal(rt.length, 20);
  t[0] = dec;
  assert_int_equal(cat_func_lookup("ABS", 1, t, &id, &rt, msg, sizeof msg), EXEC_OK);
  assert_memory_equal(&rt, &dec, sizeof rt);
  t[0] = cat_type_of(CAT_T_INTEGER); t[1] = dec; t[2] = cat_type_of(0);
  assert_int_equal(cat_func_lookup("COALESCE", 3, t, &id, &rt, msg, sizeof msg), EXEC_OK);
  assert_int_equal(rt.id, CAT_T_DECIMAL);
  t[0] = cat_type_of(CAT_T_SMALLINT); t[1] = cat_type_of(CAT_T_INTEGER);
  assert_int_equal(cat_func_lookup("GREATEST", 2, t, &id, &rt, msg, sizeof msg), EXEC_OK);
  assert_int_equal(rt.id, CAT_T_INTEGER);
  /* parameter hints */
  t[0] = cat_type_of(CAT_T_VARCHAR); t[1] = cat_type_of(0);
  assert_int_equal(cat_func_arg_hint(EXEC_F_SUBSTR, 2, t, 1).id, CAT_T_INTEGER);
  t[0] = cat_type_of(CAT_T_BIGINT);
  assert_int_equal(cat_func_arg_hint(EXEC_F_ADD, 2, t, 1).id, CAT_T_BIGINT);
  t[0] = cat_type_of(CAT_T_TIMESTAMP);
  assert_int_equal(cat_func_arg_hint(EXEC_F_ROUND, 2, t, 1).id, CAT_T_VARCHAR);
  assert_int_equal(cat_func_arg_hint(EXEC_F_TO_CHAR, 2, t, 1).id, CAT_T_VARCHAR);
  assert_int_equal(cat_func_arg_hint(EXEC_F_ADD, 2, t, 5).id, 0);
}

/* ---- Arithmetic -------------------------------------------------------------------------- */
static void test_arith_int(void **state) {
  (void)state;
  CHK("+", BIGINT, "3", N(1), N(2));
  CHK("-", BIGINT, "-1", N(1), I(2));
  CHK("*", BIGINT, "-42", I(-6), N(7));
  CHK("/", BIGINT, "3", I(7), I(2));
  CHK("/", BIGINT, "-3", I(-7), I(2));
  CHK("%", BIGINT, "-1", I(-7), I(2));
  CHK("%", BIGINT, "1", I(7), I(-2));
  CHK("MOD", BIGINT, "-1", I(-7), I(3));
  CHK("%", BIGINT, "0", I(INT64_MIN), I(-1));
  CHK("-", BIGINT, "-5", N(5));
  CHK("+", BIGINT, "NULL", N(1), NUL(CAT_T_INTEGER));
  CHK("-", BIGINT, "NULL", NUL(CAT_T_INTEGER));
  ERR("+", EXEC_CONSTRAINT, "BIGINT overflow in 9223372036854775807 + 1", I(INT64_MAX), I(1));
  ERR("-", EXEC_CONSTRAINT, "BIGINT overflow", I(INT64_MIN), I(1));
  ERR("*", EXEC_CONSTRAINT, "BIGINT overflow", I(INT64_MAX / 2 + 1), I(2));
  ERR("/", EXEC_CONSTRAINT, "BIGINT overflow", I(INT64_MIN), I(-1));
  ERR("-", EXEC_CONSTRAINT, "BIGINT overflow", I(INT64_MIN));
  ERR("/", EXEC_CONSTRAINT, "division by zero", I(5), I(0));
  ERR("%", EXEC_CONSTRAINT, "division by zero", I(5), N(0));
}

static void test_arith_dec_double(void **state) {
  (void)state;
  CHK("+", DECIMAL, "3.305", DC("1.10"), DC("2.205"));
  CHK("*", DECIMAL, "3.0", DC("1.5"), I(2));
  CHK("/", DECIMAL, "0.25", DC("1"), DC("4"));
  CHK("/", DECIMAL, "0.5", I(1), DC("2.0"));
  CHK("%", DECIMAL, "3.0", I(10), DC("3.5"));
  CHK("-", DECIMAL, "-1.5", DC("1.5"));
  CHK("-", DECIMAL, "-0.10", DC("0.15"), DC("0.25"));
  ERR("+", EXEC_CONSTRAINT, "DECIMAL overflow", DC("99999999999999999999999999999999999999"),
      I(1));
  ERR("/", EXEC_CONSTRAINT, "division by zero", DC("1.5"), DC("0.00"));
  CHK("+", DOUBLE, "2.5", DB(1.5), I(1));
  CHK("+", DOUBLE, "1.75", DB(1.5), DC("0.25"));
  CHK("%", DOUBLE, "1.5", DB(7.5), I(2));
  CHK("/", DOUBLE, "0.5", I(1), DB(2));
  CHK("*", DOUBLE, "NULL", DB(1), NUL(CAT_T_DOUBLE));
  ERR("*", EXEC_CONSTRAINT, "DOUBLE overflow", DB(1e308), DB(10));
  ERR("/", EXEC_CONSTRAINT, "division by zero", DB(1), DB(0));
  ERR("%", EXEC_CONSTRAINT, "division by zero", DB(1), I(0));
  /* a FLOAT operand gives DOUBLE */
  CHK("+", DOUBLE, "1.5", cat_v_float(1.0f), DB(0.5));
}

/* Random int64 pairs (small and extreme) against 128-bit reference results. */
static void test_arith_random(void **state) {
  (void)state;
  uint64_t seed = tu_seed("test_arith_random"), st = seed;
  int ops[5] = {EXEC_F_ADD, EXEC_F_SUB, EXEC_F_MUL, EXEC_F_DIV, EXEC_F_MOD};
  uint64_t n = tu_scaled(200000, 2000);
  exec_func_ctx c = {&arena, 0, msg, sizeof msg};
  cat_type bt = cat_type_of(CAT_T_BIGINT);
  uint64_t overflows = 0;
  for (uint64_t k = 0; k < n; k++) {
    int64_t v[2];
    for (int j = 0; j < 2; j++) {
      switch (tu_below(&st, 4)) {
        case 0: v[j] = (int64_t)tu_below(&st, 21) - 10; break;
        case 1: v[j] = (int64_t)tu_rand(&st); break;
        case 2: v[j] = (int64_t)(tu_rand(&st) >> tu_below(&st, 63)); break;
        default: v[j] = tu_below(&st, 2) ? INT64_MAX - (int64_t)tu_below(&st, 3)
                                         : INT64_MIN + (int64_t)tu_below(&st, 3); break;
      }
      if (tu_below(&st, 2)) v[j] = -(v[j] == INT64_MIN ? INT64_MAX : v[j]);
    }
    int op = ops[tu_below(&st, 5)];
    cat_value a[2] = {I(v[0]), I(v[1])}, out;
    int rc = exec_func_call(op, a, 2, &bt, &out, &c);
    __int128 x = v[0], y = v[1], r = 0;
    bool err = false;
    switch (op) {
      case EXEC_F_ADD: r = x + y; break;
      case EXEC_F_SUB: r = x - y; break;
      case EXEC_F_MUL: r = x * y; break;
      case EXEC_F_DIV: if (y == 0) err = true; else r = x / y; break;
      default: if (y == 0) err = true; else r = x % y; break;
    }
    if (r > INT64_MAX || r < INT64_MIN) err = true;
    if (err) {
      overflows++;
      if (rc != EXEC_CONSTRAINT)
        fail_msg("seed %llu: %lld %s %lld gave %d, want an error", (unsigned long long)seed,
                 (long long)v[0], cat_func_name(op), (long long)v[1], rc);
    } else if (rc != EXEC_OK || out.u.i != (int64_t)r || out.type.id != CAT_T_BIGINT) {
      fail_msg("seed %llu: %lld %s %lld gave rc %d value %lld", (unsigned long long)seed,
               (long long)v[0], cat_func_name(op), (long long)v[1], rc, (long long)out.u.i);
    }
  }
  assert_true(overflows > 0);
}

/* ---- Numeric functions ------------------------------------------------------------------- */
static void test_numeric_functions(void **state) {
  (void)state;
  CHK("ABS", BIGINT, "5", N(-5));
  CHK("ABS", DECIMAL, "1.50", DC("-1.50"));
  CHK("ABS", DOUBLE, "2.5", DB(-2.5));
  CHK("ABS", BIGINT, "NULL", NUL(CAT_T_INTEGER));
  ERR("ABS", EXEC_CONSTRAINT, "BIGINT overflow", I(INT64_MIN));
  CHK("SIGN", INTEGER, "-1", I(-3));
  CHK("SIGN", INTEGER, "0", DC("0.00"));
  CHK("SIGN", INTEGER, "1", DB(2.5));
  CHK("ROUND", DECIMAL, "3", DC("2.5"));
  CHK("ROUND", DECIMAL, "-3", DC("-2.5"));
  CHK("ROUND", DECIMAL, "1.23", DC("1.2345"), N(2));
  CHK("ROUND", DECIMAL, "1.24", DC("1.235"), N(2));
  CHK("ROUND", DECIMAL, "1.5", DC("1.5"), N(3));
  CHK("ROUND", DECIMAL, "1200", DC("1249.9"), N(-2));
  CHK("ROUND", BIGINT, "1200", I(1234), N(-2));
  CHK("ROUND", BIGINT, "1300", I(1250), N(-2));
  CHK("ROUND", BIGINT, "-1300", I(-1250), N(-2));
  CHK("ROUND", BIGINT, "7", N(7));
  CHK("ROUND", DOUBLE, "2.68", DB(2.675), N(2));
  CHK("ROUND", DOUBLE, "3.0", DB(2.5));
  CHK("ROUND", DOUBLE, "-3.0", DB(-2.5));
  CHK("ROUND", DOUBLE, "NULL", DB(2.5), NUL(CAT_T_INTEGER));
  ERR("ROUND", EXEC_CONSTRAINT, "out of range", I(INT64_MAX), N(-1));
  CHK("FLOOR", DECIMAL, "-2", DC("-1.5"));
  CHK("CEIL", DECIMAL, "-1", DC("-1.5"));
  CHK("CEILING", DECIMAL, "2", DC("1.01"));
  CHK("CEIL", DOUBLE, "2.0", DB(1.1));
  CHK("FLOOR", DOUBLE, "-2.0", DB(-1.1));
  CHK("FLOOR", DECIMAL, "-1.3", DC("-1.234"), N(1));
  CHK("FLOOR", BIGINT, "-200", I(-101), N(-2));
  CHK("TRUNC", DECIMAL, "-1", DC("-1.7"));
  CHK("TRUNC", DECIMAL, "1.78", DC("1.789"), N(2));
  CHK("TRUNC", DOUBLE, "-1.0", DB(-1.7));
  CHK("SQRT", DOUBLE, "4.0", I(16));
  CHK("SQRT", DOUBLE, "1.5", DC("2.25"));
  ERR("SQRT", EXEC_CONSTRAINT, "SQRT of negative value -4", I(-4));
  CHK("POWER", DOUBLE, "1024.0", I(2), I(10));
  CHK("POW", DOUBLE, "0.5", I(2), I(-1));
  ERR("POWER", EXEC_CONSTRAINT, "not a real number", I(-8), DB(0.5));
  ERR("POWER", EXEC_CONSTRAINT, "overflows DOUBLE", I(10), I(400));
  CHK("EXP", DOUBLE, "1.0", I(0));
  CHK("LN", DOUBLE, "0.0", I(1));
  ERR("LN", EXEC_CONSTRAINT, "non-positive", I(0));
  CHK("LOG", DOUBLE, "2.0", I(100));
  CHK("LOG", DOUBLE, "3.0", I(8), I(2));
  ERR("LOG", EXEC_CONSTRAINT, "invalid base", I(8), I(1));
  CHK("SQRT", DOUBLE, "NULL", NUL(CAT_T_DOUBLE));
}

/* ---- Strings ------------------------------------------------------------------------- */
static void test_strings(void **state) {
  (void)state;
  CHK("UPPER", VARCHAR, "ABCÄÉ1", S("abcäé1"));
  CHK("LOWER", VARCHAR, "àéσжё", S("ÀÉΣЖЁ"));
  CHK("UPPER", VARCHAR, "ΣЖ", S("σж"));
  CHK("UPPER", VARCHAR, "NULL", NUL(CAT_T_VARCHAR));
  CHK("LOWER", VARCHAR, "", S(""));
  CHK("LENGTH", INTEGER, "5", S("héllo"));
  CHK("LENGTH", INTEGER, "0", S(""));
  CHK("LENGTH", INTEGER, "3", cat_v_str(CAT_T_VARCHAR, "a\xffz", 3));
  CHK("LENGTH", INTEGER, "NULL", NUL(CAT_T_VARCHAR));
  CHK("SUBSTR", VARCHAR, "ell", S("Hello"), N(2), N(3));
  CHK("SUBSTR", VARCHAR, "llo", S("Hello"), N(-3));
  CHK("SUBSTR", VARCHAR, "o", S("Hello"), N(-1));
  CHK("SUBSTR", VARCHAR, "He", S("Hello"), N(0), N(2));
  CHK("SUBSTR", VARCHAR, "llo", S("Hello"), N(3), N(100));
  CHK("SUBSTR", VARCHAR, "él", S("héllo"), N(2), N(2));
  CHK("SUBSTR", VARCHAR, "NULL", S("Hello"), N(6));
  CHK("SUBSTR", VARCHAR, "NULL", S("Hello"), N(-6));
  CHK("SUBSTR", VARCHAR, "NULL", S("Hello"), N(2), N(0));
  CHK("SUBSTR", VARCHAR, "NULL", S("Hello"), NUL(CAT_T_INTEGER));
  CHK("SUBSTRING", VARCHAR, "lo", S("Hello"), DC("4"));
  CHK("TRIM", VARCHAR, "a b", S("  a b  "));
  CHK("LTRIM", VARCHAR, "a b  ", S("  a b  "));
  CHK("RTRIM", VARCHAR, "  a b", S("  a b  "));
  CHK("TRIM", VARCHAR, "", S("   "));
  CHK("TRIM", VARCHAR, "a", S("xyaxx"), S("xy"));
  CHK("TRIM", VARCHAR, "a", S("ééaé"), S("é"));
  CHK("RTRIM", VARCHAR, "ab", S("ab\xc3\xa9\xc3\xa9"), S("é"));
  CHK("||", VARCHAR, "abcd", S("ab"), S("cd"));
  CHK("||", VARCHAR, "x5", S("x"), I(5));
  CHK("||", VARCHAR, "1.50y", DC("1.50"), S("y"));
  CHK("||", VARCHAR, "NULL", S("x"), NUL(CAT_T_VARCHAR));
  CHK("CONCAT", VARCHAR, "abc", S("a"), S("b"), S("c"));
  CHK("concat", VARCHAR, "a1.5", S("a"), NUL(CAT_T_VARCHAR), DC("1.5"));
  CHK("CONCAT", VARCHAR, "", NUL(CAT_T_VARCHAR));
  ERR("UPPER", EXEC_ERROR, "does not accept", I(3));
}

static void test_generic(void **state) {
  (void)state;
  CHK("COALESCE", BIGINT, "3", NUL(CAT_T_BIGINT), NUL(CAT_T_BIGINT), I(3));
  CHK("COALESCE", DOUBLE, "1.0", NUL(CAT_T_INTEGER), N(1), DB(2.5));
  CHK("COALESCE", INTEGER, "NULL", NUL(CAT_T_INTEGER));
  CHK("COALESCE", VARCHAR, "a", S("a"), S("b"));
  CHK("NULLIF", INTEGER, "NULL", N(1), N(1));
  CHK("NULLIF", INTEGER, "1", N(1), N(2));
  CHK("NULLIF", INTEGER, "NULL", NUL(CAT_T_INTEGER), N(1));
  CHK("NULLIF", INTEGER, "1", N(1), NUL(CAT_T_INTEGER));
  CHK("GREATEST", INTEGER, "5", N(1), N(5), N(3));
  CHK("LEAST", INTEGER, "1", N(2), NUL(CAT_T_INTEGER), N(1));
  CHK("GREATEST", INTEGER, "NULL", NUL(CAT_T_INTEGER), NUL(CAT_T_INTEGER));
  CHK("GREATEST", VARCHAR, "b", S("b"), S("a"));
  CHK("LEAST", DOUBLE, "0.5", N(1), DB(0.5));
  CHK("GREATEST", DECIMAL, "2.50", I(2), DC("2.50"));
}

static void test_cast(void **state) {
  (void)state;
  exec_func_ctx c = {&arena, 0, msg, sizeof msg};
  cat_value out, in = I(300);
  cat_type tiny = cat_type_of(CAT_T_TINYINT), it = cat_type_of(CAT_T_INTEGER);
  cat_type vc = cat_type_of(CAT_T_VARCHAR);
  assert_int_equal(exec_func_cast(&in, &tiny, &out, &c), EXEC_CONSTRAINT);
  assert_non_null(strstr(msg, "300"));
  in = S("abc");
  assert_int_equal(exec_func_cast(&in, &it, &out, &c), EXEC_ERROR);
  in = I(12);
  assert_int_equal(exec_func_cast(&in, &vc, &out, &c), EXEC_OK);
  assert_int_equal(out.u.s.len, 2);
  assert_memory_equal(out.u.s.p, "12", 2);
  in = S("42");
  assert_int_equal(exec_func_cast(&in, &it, &out, &c), EXEC_OK);
  assert_int_equal(out.u.i, 42);
  in = NUL(CAT_T_VARCHAR);
  assert_int_equal(exec_func_cast(&in, &it, &out, &c), EXEC_OK);
  assert_true(out.is_null);
  assert_int_equal(out.type.id, CAT_T_INTEGER);
  exec_arena_reset(&arena);
}

/* A result converts to the bound type: COALESCE bound as DECIMAL(5,2) checks precision. */
static void test_result_conversion(void **state) {
  (void)state;
  exec_func_ctx c = {&arena, 0, msg, sizeof msg};
  cat_type rt = {CAT_T_DECIMAL, 5, 2, 0, 0};
  cat_value a[2] = {NUL(CAT_T_INTEGER), I(7)}, out;
  assert_int_equal(exec_func_call(EXEC_F_COALESCE, a, 2, &rt, &out, &c), EXEC_OK);
  char b[64];
  cat_text_format(&out, b, sizeof b);
  assert_string_equal(b, "7.00");
  a[1] = I(12345);
  assert_int_equal(exec_func_call(EXEC_F_COALESCE, a, 2, &rt, &out, &c), EXEC_CONSTRAINT);
  /* a wrong id or argument count at run time is an error, not a crash */
  assert_int_equal(exec_func_call(9999, a, 2, NULL, &out, &c), EXEC_ERROR);
  assert_int_equal(exec_func_call(EXEC_F_ABS, a, 2, NULL, &out, &c), EXEC_ERROR);
  exec_arena_reset(&arena);
}

/* ---- Arena --------------------------------------------------------------------------- */
static void test_arena(void **state) {
  (void)state;
  exec_arena a;
  exec_arena_init(&a);
  void *p0 = exec_arena_alloc(&a, 0);
  assert_non_null(p0);
  for (int i = 1; i < 2000; i++) {
    uint8_t *p = exec_arena_alloc(&a, (size_t)(i % 37) + 1);
    assert_non_null(p);
    assert_int_equal((uintptr_t)p % 16, 0);
    memset(p, 0xAB, (size_t)(i % 37) + 1);
  }
  char *s = exec_arena_copy(&a, "hello", 5);
  assert_string_equal(s, "hello");
  void *big = exec_arena_alloc(&a, 100000);
  assert_non_null(big);
  size_t before = a.total;
  exec_arena_reset(&a);
  assert_true(a.total <= before);
  assert_true(a.total >= 100000); /* the largest chunk is kept */
  size_t kept = a.total;
  for (int i = 0; i < 100; i++) assert_non_null(exec_arena_alloc(&a, 900));
  assert_int_equal(a.total, kept); /* reused, nothing new from malloc */
  exec_arena_free(&a);
  assert_int_equal(a.total, 0);
  a.limit = 10000;
  assert_non_null(exec_arena_alloc(&a, 5000));
  assert_null(exec_arena_alloc(&a, 20000));
  exec_arena_free(&a);
  assert_int_equal(a.limit, 10000);
  /* a function whose result does not fit the arena reports EXEC_NOMEM */
  exec_arena small;
  exec_arena_init(&small);
  small.limit = 64;
  exec_func_ctx c = {&small, 0, msg, sizeof msg};
  char longs[200];
  memset(longs, 'x', sizeof longs);
  cat_value arg = cat_v_str(CAT_T_VARCHAR, longs, sizeof longs), out;
  assert_int_equal(exec_func_call(EXEC_F_UPPER, &arg, 1, NULL, &out, &c), EXEC_NOMEM);
  exec_arena_free(&small);
}

static int setup(void **state) {
  (void)state;
  exec_arena_init(&arena);
  return 0;
}
static int teardown(void **state) {
  (void)state;
  exec_arena_free(&arena);
  return 0;
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_lookup_errors),     cmocka_unit_test(test_lookup_names),
      cmocka_unit_test(test_lookup_types),      cmocka_unit_test(test_arith_int),
      cmocka_unit_test(test_arith_dec_double),  cmocka_unit_test(test_arith_random),
      cmocka_unit_test(test_numeric_functions), cmocka_unit_test(test_strings),
      cmocka_unit_test(test_generic),           cmocka_unit_test(test_cast),
      cmocka_unit_test(test_result_conversion), cmocka_unit_test(test_arena),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
