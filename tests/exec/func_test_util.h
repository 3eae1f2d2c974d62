/*
** tests/exec/func_test_util.h: the harness shared by the function tests (test_func.c,
** test_func_date.c): value builders (I BIGINT, N INTEGER, DB DOUBLE, S VARCHAR, NUL, TS, DT,
** DC from text), a call through cat_func_lookup + exec_func_call, and CHK / ERR, which
** check a call's result text and type, or its error code and message, naming the line.
** A file defines FUNC_TEST_NOW_US (the statement time NOW() sees) before including it.
** Header-only, static.
*/
#ifndef ROWAN_TESTS_EXEC_FUNC_TEST_UTIL_H
#define ROWAN_TESTS_EXEC_FUNC_TEST_UTIL_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalog/value.h"
#include "exec/engine.h"
#include "exec/func.h"

#ifndef FUNC_TEST_NOW_US
#define FUNC_TEST_NOW_US 0
#endif
#define FT_UNUSED __attribute__((unused))

static exec_arena arena;
static char msg[512];

FT_UNUSED static cat_value I(int64_t v) { return cat_v_int(CAT_T_BIGINT, v); }
FT_UNUSED static cat_value N(int64_t v) { return cat_v_int(CAT_T_INTEGER, v); }
FT_UNUSED static cat_value DB(double v) { return cat_v_double(v); }
FT_UNUSED static cat_value S(const char *s) { return cat_v_str(CAT_T_VARCHAR, s, strlen(s)); }
FT_UNUSED static cat_value NUL(int id) { return cat_v_null(cat_type_of(id)); }
FT_UNUSED static cat_value parse(int id, const char *s) {
  cat_type t = cat_type_of(id);
  cat_value v;
  cat_error e;
  if (cat_text_parse(&t, s, strlen(s), &v, &e) != CAT_OK) {
    fprintf(stderr, "bad literal %s: %s\n", s, e.msg);
    abort();
  }
  return v;
}
FT_UNUSED static cat_value TS(const char *s) { return parse(CAT_T_TIMESTAMP, s); }
FT_UNUSED static cat_value DT(const char *s) { return parse(CAT_T_DATE, s); }
FT_UNUSED static cat_value DC(const char *s) { return parse(CAT_T_DECIMAL, s); }

/* Look the function up by the argument values' types and call it with the bound type. */
static int run(const char *name, int n, const cat_value *a, cat_value *out, cat_type *rt) {
  cat_type ts[16];
  for (int i = 0; i < n; i++) ts[i] = a[i].type;
  int id;
  cat_type r;
  msg[0] = 0;
  int rc = cat_func_lookup(name, n, ts, &id, &r, msg, sizeof msg);
  if (rc) return rc;
  if (rt) *rt = r;
  exec_func_ctx c = {&arena, FUNC_TEST_NOW_US, msg, sizeof msg};
  return exec_func_call(id, a, n, &r, out, &c);
}

/* Call `name` on a and compare the result's text and type with want / want_type. */
static void check(int line, const char *name, int n, const cat_value *a, int want_type,
                  const char *want) {
  cat_value out;
  cat_type rt;
  memset(&out, 0, sizeof out); /* set by run; cleared so -O3 sees them set after fail_msg */
  memset(&rt, 0, sizeof rt);
  int rc = run(name, n, a, &out, &rt);
  if (rc != EXEC_OK) fail_msg("line %d: %s failed (%d): %s", line, name, rc, msg);
  char got[256];
  cat_text_format(&out, got, sizeof got);
  if (strcmp(got, want) != 0) fail_msg("line %d: %s gave '%s', want '%s'", line, name, got, want);
  if (out.type.id != want_type || rt.id != want_type)
    fail_msg("line %d: %s gave type %s (bound %s), want %s", line, name,
             cat_type_name(out.type.id), cat_type_name(rt.id), cat_type_name(want_type));
  exec_arena_reset(&arena);
}

/* Call `name` on a and expect the code want_rc with want_msg in the message. */
FT_UNUSED static void check_err(int line, const char *name, int n, const cat_value *a, int want_rc,
                      const char *want_msg) {
  cat_value out;
  int rc = run(name, n, a, &out, NULL);
  if (rc != want_rc)
    fail_msg("line %d: %s returned %d (%s), want %d", line, name, rc, msg, want_rc);
  if (!strstr(msg, want_msg))
    fail_msg("line %d: %s message '%s' lacks '%s'", line, name, msg, want_msg);
  exec_arena_reset(&arena);
}

#define ARGS(...) (const cat_value[]){__VA_ARGS__}
#define NARGS(...) ((int)(sizeof((const cat_value[]){__VA_ARGS__}) / sizeof(cat_value)))
#define CHK(name, type, want, ...) \
  check(__LINE__, name, NARGS(__VA_ARGS__), ARGS(__VA_ARGS__), CAT_T_##type, want)
#define ERR(name, rc, text, ...) \
  check_err(__LINE__, name, NARGS(__VA_ARGS__), ARGS(__VA_ARGS__), rc, text)

#endif /* ROWAN_TESTS_EXEC_FUNC_TEST_UTIL_H */
