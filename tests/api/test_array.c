/*
** tests/api/test_array.c: ARRAY values through the public API (issue 20): rowan_column_type
** and rowan_column_decltype of array results and columns, their text (Phoenix's sqlline form),
** an array column written through a bound text parameter, and the positions
** (rowan_error_offset) of the errors a user makes with arrays: an element of the wrong type
** in ARRAY[...], a subscript on a non-array, an array as a key column. tests/sql/array.test
** has the values; tests/catalog/test_array.c the encoding.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "kv/env/env_mem.h"
#include "rowan.h"
#include "testutil.h"
#include "tu_api.h"

/* Prepare sql, expecting failure with code rc at byte offset off; the message must hold
** `part`. */
static void prep_err(rowan_db *db, const char *sql, int rc, int off, const char *part) {
  rowan_stmt *st = NULL;
  int r = rowan_prepare(db, sql, -1, &st, NULL);
  if (r == ROWAN_OK) {
    r = rowan_step(st);
    rowan_finalize(st);
  }
  if (r != rc) fail_msg("%s: %s, expected %s (%s)", sql, rowan_errstr(r), rowan_errstr(rc),
                        rowan_errmsg(db));
  if (!strstr(rowan_errmsg(db), part)) fail_msg("%s: message '%s' lacks '%s'", sql,
                                                 rowan_errmsg(db), part);
  assert_int_equal(rowan_error_offset(db), off);
}

static void error_positions(void **state) {
  (void)state;
  kv_env *env = kv_env_mem_new(1500000000000LL);
  rowan_db *db = tu_open_mem(env);
  /* the second element, the one that does not fit the first, is pointed at */
  prep_err(db, "SELECT ARRAY[1, 'a']", ROWAN_ERROR, 16, "the elements of an ARRAY must have one type");
  prep_err(db, "SELECT ARRAY['x', 'y', DATE '2020-01-01']", ROWAN_ERROR, 23, "element 3 is DATE");
  prep_err(db, "SELECT 1 + 5[1]", ROWAN_ERROR, 11, "subscript [ ] (ARRAY_ELEM) needs an ARRAY");
  prep_err(db, "CREATE TABLE t (k INTEGER, a VARCHAR ARRAY, CONSTRAINT pk PRIMARY KEY (a, k))",
           ROWAN_ERROR, 29, "PRIMARY KEY column A cannot be an ARRAY");
  prep_err(db, "SELECT ARRAY[1, 2", ROWAN_SYNTAX, 17, "syntax error");
  rowan_close(db);
  kv_env_free(env);
}

static void column_types_and_text(void **state) {
  (void)state;
  kv_env *env = kv_env_mem_new(1500000000000LL);
  rowan_db *db = tu_open_mem(env);
  exec_ok(db, "CREATE TABLE t (k INTEGER PRIMARY KEY, tags VARCHAR(8) ARRAY, d DECIMAL(5,2)[])");
  rowan_stmt *st = NULL;
  assert_int_equal(rowan_prepare(db, "UPSERT INTO t (k, tags) VALUES (?, ?)", -1, &st, NULL), ROWAN_OK);
  assert_int_equal(rowan_bind_int64(st, 1, 1), ROWAN_OK);
  assert_int_equal(rowan_bind_text(st, 2, "['a', null, 'it''s']", -1), ROWAN_OK);
  assert_int_equal(rowan_step(st), ROWAN_DONE);
  rowan_reset(st);
  assert_int_equal(rowan_bind_int64(st, 1, 2), ROWAN_OK);
  assert_int_equal(rowan_bind_text(st, 2, "['much too long']", -1), ROWAN_OK);
  assert_int_equal(rowan_step(st), ROWAN_CONSTRAINT);
  assert_non_null(strstr(rowan_errmsg(db), "ARRAY element 1"));
  rowan_reset(st);
  assert_int_equal(rowan_bind_text(st, 2, "['a', 'b'", -1), ROWAN_OK);
  assert_int_equal(rowan_step(st), ROWAN_ERROR);
  assert_non_null(strstr(rowan_errmsg(db), "expected ',' or ']' in ARRAY text"));
  rowan_finalize(st);
  exec_ok(db, "UPSERT INTO t (k, d) VALUES (3, ARRAY[1.5, NULL])");
  assert_int_equal(rowan_prepare(db, "SELECT tags, d, tags[3], REGEXP_SPLIT('a b', ' ') FROM t "
                                     "ORDER BY k", -1, &st, NULL), ROWAN_OK);
  assert_string_equal(rowan_column_decltype(st, 0), "VARCHAR(8) ARRAY");
  assert_string_equal(rowan_column_decltype(st, 1), "DECIMAL(5,2) ARRAY");
  assert_string_equal(rowan_column_decltype(st, 3), "VARCHAR ARRAY");
  assert_int_equal(rowan_step(st), ROWAN_ROW);
  assert_int_equal(rowan_column_type(st, 0), ROWAN_TEXT);
  assert_string_equal(rowan_column_text(st, 0), "['a', null, 'it''s']");
  assert_int_equal(rowan_column_bytes(st, 0), (int)strlen("['a', null, 'it''s']"));
  assert_int_equal(rowan_column_type(st, 1), ROWAN_NULL);
  assert_string_equal(rowan_column_text(st, 2), "it's");
  assert_string_equal(rowan_column_text(st, 3), "['a', 'b']");
  rowan_value v[2];
  assert_int_equal(rowan_column_values(st, 0, 2, v), ROWAN_OK);
  assert_int_equal(v[0].type, ROWAN_TEXT);
  assert_int_equal(v[0].bytes, (int)strlen("['a', null, 'it''s']"));
  assert_int_equal(memcmp(v[0].p, "['a', null, 'it''s']", (size_t)v[0].bytes), 0);
  assert_int_equal(rowan_step(st), ROWAN_ROW);
  assert_int_equal(rowan_column_type(st, 0), ROWAN_NULL);
  assert_string_equal(rowan_column_text(st, 1), "[1.50, null]");
  assert_int_equal(rowan_step(st), ROWAN_DONE);
  rowan_finalize(st);
  rowan_close(db);
  kv_env_free(env);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(error_positions),
      cmocka_unit_test(column_types_and_text),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
