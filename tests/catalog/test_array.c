/*
** tests/catalog/test_array.c: the ARRAY encoding of catalog/array.h byte by byte (the
** docs/FORMAT_SQL.md examples), reads of damaged bytes (truncated, a count that does not match,
** bytes after the last element, a wrong element type: CAT_ERR_CORRUPT, never an overrun),
** element access, comparison, conversion and the text form read back.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "catalog/array.h"
#include "catalog/value.h"

/* Encode the n values e (of element type elem) into buf; returns the length. */
static size_t build(uint8_t *buf, int elem, const cat_value *e, uint32_t n) {
  cat_array_put_header(buf, elem, n);
  size_t w = CAT_ARRAY_HEADER;
  for (uint32_t i = 0; i < n; i++) {
    size_t k = cat_array_put_elem(buf + w, &e[i]);
    assert_int_equal(k, cat_array_elem_size(&e[i]));
    w += k;
  }
  return w;
}

static cat_value arr(const uint8_t *p, size_t n, int elem) {
  cat_type et = cat_type_of(elem);
  cat_value v = cat_v_str(CAT_T_ARRAY, p, n);
  v.type = cat_type_array_of(&et);
  return v;
}

static void format_examples(void **state) {
  (void)state;
  uint8_t buf[64];
  cat_value e[3] = {cat_v_str(CAT_T_VARCHAR, "a", 1), cat_v_null(cat_type_of(CAT_T_VARCHAR)),
                    cat_v_str(CAT_T_VARCHAR, "bc", 2)};
  static const uint8_t want1[] = {0x0A, 0, 0, 0, 3, 0x02, 0x61, 0x00, 0x03, 0x62, 0x63};
  size_t n = build(buf, CAT_T_VARCHAR, e, 3);
  assert_int_equal(n, sizeof want1);
  assert_memory_equal(buf, want1, n);
  cat_value i[2] = {cat_v_int(CAT_T_INTEGER, 1), cat_v_int(CAT_T_INTEGER, 2)};
  static const uint8_t want2[] = {0x04, 0, 0, 0, 2, 0x05, 0x80, 0, 0, 1, 0x05, 0x80, 0, 0, 2};
  n = build(buf, CAT_T_INTEGER, i, 2);
  assert_int_equal(n, sizeof want2);
  assert_memory_equal(buf, want2, n);
  cat_value empty = cat_v_str(CAT_T_VARCHAR, "", 0);
  static const uint8_t want3[] = {0x0A, 0, 0, 0, 1, 0x01};
  n = build(buf, CAT_T_VARCHAR, &empty, 1);
  assert_memory_equal(buf, want3, n);
  /* read back */
  cat_value v = arr(want1, sizeof want1, CAT_T_VARCHAR), x;
  assert_int_equal(cat_array_count(&v), 3);
  assert_int_equal(cat_array_get(&v, 3, &x, NULL), CAT_OK);
  assert_int_equal(x.u.s.len, 2);
  assert_memory_equal(x.u.s.p, "bc", 2);
  assert_int_equal(cat_array_get(&v, 2, &x, NULL), CAT_OK);
  assert_true(x.is_null);
  assert_int_equal(cat_array_get(&v, 4, &x, NULL), CAT_OK);
  assert_true(x.is_null);
  assert_int_equal(cat_array_get(&v, 0, &x, NULL), CAT_OK);
  assert_true(x.is_null);
  char t[64];
  assert_int_equal(cat_text_format(&v, t, sizeof t), strlen("['a', null, 'bc']"));
  assert_string_equal(t, "['a', null, 'bc']");
  /* a short buffer: truncated, NUL-terminated, full length returned */
  assert_int_equal(cat_text_format(&v, t, 4), strlen("['a', null, 'bc']"));
  assert_string_equal(t, "['a");
}

static void damaged(void **state) {
  (void)state;
  static const uint8_t good[] = {0x0A, 0, 0, 0, 3, 0x02, 0x61, 0x00, 0x03, 0x62, 0x63};
  cat_type vt = cat_type_of(CAT_T_VARCHAR), at = cat_type_array_of(&vt);
  cat_error err;
  assert_int_equal(cat_array_validate(&at, good, sizeof good, &err), CAT_OK);
  for (size_t cut = 0; cut < sizeof good; cut++) /* every truncation is caught */
    assert_int_equal(cat_array_validate(&at, good, cut, &err), CAT_ERR_CORRUPT);
  uint8_t b[sizeof good + 1];
  memcpy(b, good, sizeof good);
  b[sizeof good] = 0;
  assert_int_equal(cat_array_validate(&at, b, sizeof b, &err), CAT_ERR_CORRUPT);
  assert_non_null(strstr(err.msg, "bytes after the last element"));
  memcpy(b, good, sizeof good);
  b[4] = 2; /* count 2: one element left over */
  assert_int_equal(cat_array_validate(&at, b, sizeof good, &err), CAT_ERR_CORRUPT);
  b[4] = 3;
  b[8] = 0x7F; /* an element longer than what is left */
  assert_int_equal(cat_array_validate(&at, b, sizeof good, &err), CAT_ERR_CORRUPT);
  b[8] = 0x03;
  b[0] = 0x04; /* INTEGER bytes where VARCHAR is expected */
  assert_int_equal(cat_array_validate(&at, b, sizeof good, &err), CAT_ERR_CORRUPT);
  cat_type it = cat_type_of(CAT_T_INTEGER), ai = cat_type_array_of(&it);
  assert_int_equal(cat_array_validate(&ai, b, sizeof good, &err), CAT_ERR_CORRUPT); /* 1-byte INTEGER */
  static const uint8_t huge[] = {0x0A, 0xFF, 0xFF, 0xFF, 0xFF, 0x00};
  assert_int_equal(cat_array_validate(&at, huge, sizeof huge, &err), CAT_ERR_CORRUPT);
  static const uint8_t badvar[] = {0x0A, 0, 0, 0, 1, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01};
  assert_int_equal(cat_array_validate(&at, badvar, sizeof badvar, &err), CAT_ERR_CORRUPT);
}

static void compare_convert_parse(void **state) {
  (void)state;
  uint8_t b1[64], b2[64], out[128];
  cat_value i[2] = {cat_v_int(CAT_T_INTEGER, 1), cat_v_int(CAT_T_INTEGER, 300)};
  cat_value a = arr(b1, build(b1, CAT_T_INTEGER, i, 2), CAT_T_INTEGER);
  cat_value p[1] = {cat_v_int(CAT_T_INTEGER, 1)};
  cat_value pre = arr(b2, build(b2, CAT_T_INTEGER, p, 1), CAT_T_INTEGER);
  int cmp = 0;
  assert_int_equal(cat_value_compare(&pre, &a, &cmp, NULL), CAT_OK);
  assert_int_equal(cmp, -1); /* a prefix first */
  assert_int_equal(cat_value_compare(&a, &a, &cmp, NULL), CAT_OK);
  assert_int_equal(cmp, 0);
  cat_type tt = cat_type_of(CAT_T_TINYINT), at = cat_type_array_of(&tt), bt;
  cat_type big = cat_type_of(CAT_T_BIGINT);
  bt = cat_type_array_of(&big);
  cat_value c;
  size_t len = 0;
  cat_error err;
  assert_int_equal(cat_array_convert(&a, &at, out, sizeof out, &len, &c, &err), CAT_ERR_RANGE);
  assert_non_null(strstr(err.msg, "ARRAY element 2: value 300 out of range for TINYINT"));
  assert_int_equal(cat_array_convert(&a, &bt, NULL, 0, &len, &c, &err), CAT_ERR_TOOBIG);
  assert_int_equal(len, 5 + 2 * 9);
  assert_int_equal(cat_array_convert(&a, &bt, out, len, &len, &c, &err), CAT_OK);
  assert_int_equal(cat_value_compare(&a, &c, &cmp, NULL), CAT_OK);
  assert_int_equal(cmp, 0);
  /* the text form reads back as the same array */
  cat_type vt = cat_type_of(CAT_T_VARCHAR), av = cat_type_array_of(&vt);
  const char *txt = " [ 'it''s' , null,'',  x ] ";
  assert_int_equal(cat_array_parse(&av, txt, strlen(txt), out, sizeof out, &len, &c, &err), CAT_OK);
  char t[64];
  cat_text_format(&c, t, sizeof t);
  assert_string_equal(t, "['it''s', null, '', 'x']");
  assert_int_equal(cat_array_parse(&av, t, strlen(t), b1, sizeof b1, &len, &a, &err), CAT_OK);
  assert_int_equal(cat_value_compare(&a, &c, &cmp, NULL), CAT_OK);
  assert_int_equal(cmp, 0);
  assert_int_equal(cat_array_parse(&av, "[]", 2, out, sizeof out, &len, &c, &err), CAT_OK);
  assert_int_equal(cat_array_count(&c), 0);
  static const char *const bad[] = {"", "[", "['a'", "[1,,2]", "[1] x", "'a'", "[X'0']"};
  for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++)
    assert_int_equal(cat_array_parse(&av, bad[k], strlen(bad[k]), out, sizeof out, &len, &c, &err),
                     CAT_ERR_SYNTAX);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(format_examples),
      cmocka_unit_test(damaged),
      cmocka_unit_test(compare_convert_parse),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
