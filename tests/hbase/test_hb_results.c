/*
** tests/hbase/test_hb_results.c: the hand reader of the Thrift2 gateway's row replies
** (kv/backend/hbase/hb_results.c) on byte strings built here, no HBase needed (a plain CTest
** test, built only with ROWAN_HBASE=ON).
**
** Each reply is fed whole and one byte at a time (every value split across chunks): two rows,
** one with no cells, a zero-byte value, fields the reader does not know (skipped by the
** binary protocol's rules), the bytes after the message left unread; every truncation of it;
** a length field larger than the input; negative lengths; the IDL exceptions, an application
** exception, a reply to another method, an unknown type, a missing required field, nesting
** too deep; a get reply; and a reply written by thrift-compiler's own c_glib code from the
** IDL, so that the field ids here are the IDL's. Every failure must come back as a kind and
** a message naming what was wrong, never a crash.
**
** Not here: the client's calls against a gateway (test_hb_client.c).
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <glib-object.h>
#include <thrift/c_glib/protocol/thrift_binary_protocol.h>
#include <thrift/c_glib/transport/thrift_memory_buffer.h>

#include "hbase_types.h"
#include "kv/backend/hbase/hb_results.h"

/* ---- building replies -------------------------------------------------------------------- */
typedef struct buf {
  uint8_t d[4096];
  size_t n;
} buf;

static void u8(buf *b, unsigned v) {
  assert_true(b->n < sizeof b->d);
  b->d[b->n++] = (uint8_t)v;
}
static void be(buf *b, uint64_t v, int k) {
  for (int i = k - 1; i >= 0; i--) u8(b, (unsigned)(v >> (8 * i)) & 0xff);
}
static void i32(buf *b, int32_t v) { be(b, (uint32_t)v, 4); }
static void fld(buf *b, unsigned type, int id) { /* a field header */
  u8(b, type);
  be(b, (uint16_t)id, 2);
}
static void str(buf *b, const char *s) {
  i32(b, (int32_t)strlen(s));
  for (const char *p = s; *p; p++) u8(b, (uint8_t)*p);
}
static void stop(buf *b) { u8(b, 0); }
static void header(buf *b, int type, const char *method) { /* strict: version | type */
  i32(b, (int32_t)(0x80010000u | (unsigned)type));
  str(b, method);
  i32(b, 0);
}
enum { BOOL = 2, BYTE = 3, I32 = 8, I64 = 10, STRING = 11, STRUCT = 12, MAP = 13, LIST = 15 };

/* A TColumnValue: family, qualifier, value, ts (tags and type too when extra). */
static void cell(buf *b, const char *f, const char *q, const char *v, int64_t ts, bool extra) {
  if (extra) { /* an unknown field first: a map<string, list<i32>> (id 9) */
    fld(b, MAP, 9);
    u8(b, STRING);
    u8(b, LIST);
    i32(b, 1);
    str(b, "k");
    u8(b, I32);
    i32(b, 2);
    i32(b, 7);
    i32(b, 8);
  }
  fld(b, STRING, 1);
  str(b, f);
  fld(b, STRING, 2);
  str(b, q);
  fld(b, STRING, 3);
  str(b, v);
  fld(b, I64, 4);
  be(b, (uint64_t)ts, 8);
  if (extra) {
    fld(b, STRING, 5); /* tags */
    str(b, "tag");
    fld(b, BYTE, 6); /* type */
    u8(b, 4);
  }
  stop(b);
}

/* The reply of the first tests: row "r1" with two cells (the second a zero-byte value, and
** fields the reader skips), row "r2" with none; then 3 bytes of the next message. */
static void two_rows(buf *b) {
  header(b, 2, "getScannerRows");
  fld(b, STRING, 7); /* an unknown field of the result struct */
  str(b, "zz");
  fld(b, LIST, 0);
  u8(b, STRUCT);
  i32(b, 2);
  fld(b, STRING, 1); /* TResult 1 */
  str(b, "r1");
  fld(b, LIST, 2);
  u8(b, STRUCT);
  i32(b, 2);
  cell(b, "F", "Q1", "v1", 1234567890123LL, false);
  cell(b, "F", "Q2", "", 5, true);
  fld(b, BOOL, 3); /* stale */
  u8(b, 0);
  fld(b, BOOL, 4); /* partial */
  u8(b, 0);
  stop(b);
  fld(b, STRING, 1); /* TResult 2: no cells, an unknown struct field */
  str(b, "r2");
  fld(b, STRUCT, 11);
  fld(b, I32, 1);
  i32(b, 3);
  stop(b);
  fld(b, LIST, 2);
  u8(b, STRUCT);
  i32(b, 0);
  stop(b);
  stop(b); /* the result struct */
}

/* ---- sources ----------------------------------------------------------------------------- */
typedef struct mem {
  const uint8_t *p;
  size_t n, at, chunk; /* chunk: bytes handed out at a time (0: all) */
} mem;

static int mem_more(void *ctx, const uint8_t **p, size_t *n, char *why, size_t whylen) {
  mem *m = ctx;
  if (m->at == m->n) {
    snprintf(why, whylen, "end of the test input (%zu bytes)", m->n);
    return -1;
  }
  size_t k = m->n - m->at;
  if (m->chunk && k > m->chunk) k = m->chunk;
  *p = m->p + m->at;
  *n = k;
  m->at += k;
  return 0;
}

/* Read b[0..n) handed out chunk bytes at a time; *left as hb_results_read. */
static int feed(const uint8_t *p, size_t n, size_t chunk, const char *method, unsigned flags,
                hb_rows *rows, hb_reply *r, size_t *left) {
  mem m = {p, n, 0, chunk};
  hb_src src = {mem_more, &m};
  return hb_results_read(&src, method, flags, rows, r, left);
}

static bool bytes_are(hb_bytes b, const char *s) {
  return b.n == strlen(s) && (b.n == 0 || memcmp(b.p, s, b.n) == 0);
}

#define SCAN (HB_RES_LIST | HB_RES_IA)

/* ---- the tests --------------------------------------------------------------------------- */
static void test_two_rows(void **state) {
  (void)state;
  buf b = {.n = 0};
  two_rows(&b);
  size_t len = b.n;
  u8(&b, 0x80); /* the next message's first bytes: left unread */
  u8(&b, 0x01);
  u8(&b, 0x00);
  for (size_t chunk = 0; chunk <= 1; chunk++) {
    hb_rows rows = {0};
    hb_reply r;
    size_t left = 99;
    assert_int_equal(feed(b.d, b.n, chunk, "getScannerRows", SCAN, &rows, &r, &left),
                     HB_REPLY_OK);
    assert_int_equal(left, chunk ? 0 : b.n - len); /* one byte at a time: none handed out */
    assert_int_equal(rows.n, 2);
    const hb_row *a = &rows.v[0], *z = &rows.v[1];
    assert_int_equal(a->key_len, 2);
    assert_memory_equal(a->key, "r1", 2);
    assert_int_equal(a->ncells, 2);
    assert_true(bytes_are(a->cells[0].family, "F"));
    assert_true(bytes_are(a->cells[0].qualifier, "Q1"));
    assert_true(bytes_are(a->cells[0].value, "v1"));
    assert_int_equal(a->cells[0].ts, 1234567890123LL);
    assert_true(bytes_are(a->cells[1].qualifier, "Q2"));
    assert_int_equal(a->cells[1].value.n, 0);
    assert_int_equal(a->cells[1].ts, 5);
    assert_int_equal(z->key_len, 2);
    assert_memory_equal(z->key, "r2", 2);
    assert_int_equal(z->ncells, 0);
    hb_row out = {0};
    hb_rows_take(&rows, 0, &out); /* moved: rows keeps an empty row */
    assert_int_equal(out.ncells, 2);
    assert_true(bytes_are(out.cells[0].value, "v1"));
    assert_null(rows.v[0].cells);
    hb_row_free(&out);
    hb_rows_free(&rows);
  }
}

/* Every cut of the reply: the input ends inside it, nothing decoded, a message that says so. */
static void test_truncated(void **state) {
  (void)state;
  buf b = {.n = 0};
  two_rows(&b);
  hb_rows rows = {0};
  for (size_t cut = 0; cut < b.n; cut++) {
    for (size_t chunk = 0; chunk <= 1; chunk++) {
      hb_reply r;
      size_t left;
      int k = feed(b.d, cut, chunk, "getScannerRows", SCAN, &rows, &r, &left);
      if (k != HB_REPLY_LOST) fail_msg("cut at %zu: kind %d: %s", cut, k, r.msg);
      assert_int_equal(rows.n, 0);
      assert_non_null(strstr(r.msg, "the input ended reading"));
      assert_non_null(strstr(r.msg, "end of the test input"));
    }
  }
  /* a cut inside row r2: the message names the row and the byte */
  hb_reply r;
  size_t left;
  assert_int_equal(feed(b.d, b.n - 5, 0, "getScannerRows", SCAN, &rows, &r, &left),
                   HB_REPLY_LOST);
  char want[64];
  snprintf(want, sizeof want, "row 1, columnValues (field 2), byte %zu", b.n - 5);
  assert_non_null(strstr(r.msg, want));
  hb_rows_free(&rows);
}

/* A value announcing more bytes than the input holds: nothing allocated ahead, an error
** naming the cell and field; a negative length is refused as such. */
static void test_lengths(void **state) {
  (void)state;
  hb_rows rows = {0};
  hb_reply r;
  size_t left;
  for (int neg = 0; neg <= 1; neg++) {
    buf b = {.n = 0};
    header(&b, 2, "getScannerRows");
    fld(&b, LIST, 0);
    u8(&b, STRUCT);
    i32(&b, 1);
    fld(&b, STRING, 1);
    str(&b, "r");
    fld(&b, LIST, 2);
    u8(&b, STRUCT);
    i32(&b, 1);
    fld(&b, STRING, 1);
    str(&b, "F");
    fld(&b, STRING, 2);
    str(&b, "Q");
    fld(&b, STRING, 3);
    i32(&b, neg ? -5 : 0x7fffff00);
    str(&b, "only a few bytes");
    int k = feed(b.d, b.n, 0, "getScannerRows", SCAN, &rows, &r, &left);
    assert_int_equal(k, neg ? HB_REPLY_BAD : HB_REPLY_LOST);
    assert_int_equal(rows.n, 0);
    assert_non_null(strstr(r.msg, "row 0, cell 0, value (field 3)"));
    assert_non_null(
        strstr(r.msg, neg ? "is negative (-5)" : "the input ended reading a binary's bytes"));
  }
  /* a list of TResult with a negative size */
  buf b = {.n = 0};
  header(&b, 2, "getScannerRows");
  fld(&b, LIST, 0);
  u8(&b, STRUCT);
  i32(&b, -1);
  assert_int_equal(feed(b.d, b.n, 0, "getScannerRows", SCAN, &rows, &r, &left), HB_REPLY_BAD);
  assert_non_null(strstr(r.msg, "a list's size is negative (-1)"));
  hb_rows_free(&rows);
}

/* The IDL exceptions: their messages, the message read to its end (left), no rows. */
static void test_exceptions(void **state) {
  (void)state;
  hb_rows rows = {0};
  hb_reply r;
  size_t left;
  buf b = {.n = 0};
  header(&b, 2, "getScannerRows");
  fld(&b, STRUCT, 1); /* TIOError */
  fld(&b, STRING, 1);
  str(&b, "org.apache.hadoop.hbase.TableNotFoundException: ns:t");
  fld(&b, BOOL, 2);
  u8(&b, 1);
  stop(&b);
  stop(&b);
  u8(&b, 0x80);
  assert_int_equal(feed(b.d, b.n, 0, "getScannerRows", SCAN, &rows, &r, &left),
                   HB_REPLY_IO_ERROR);
  assert_string_equal(r.msg, "org.apache.hadoop.hbase.TableNotFoundException: ns:t");
  assert_int_equal(left, 1);
  assert_int_equal(rows.n, 0);

  b.n = 0; /* TIllegalArgument after some rows: the exception wins */
  header(&b, 2, "getScannerRows");
  fld(&b, LIST, 0);
  u8(&b, STRUCT);
  i32(&b, 1);
  fld(&b, LIST, 2);
  u8(&b, STRUCT);
  i32(&b, 0);
  stop(&b);
  fld(&b, STRUCT, 2);
  fld(&b, STRING, 1);
  str(&b, "Invalid scanner Id");
  stop(&b);
  stop(&b);
  assert_int_equal(feed(b.d, b.n, 1, "getScannerRows", SCAN, &rows, &r, &left),
                   HB_REPLY_ILLEGAL_ARG);
  assert_string_equal(r.msg, "Invalid scanner Id");
  assert_int_equal(rows.n, 0);
  /* get has no field 2: skipped as unknown */
  buf g = {.n = 0};
  header(&g, 2, "get");
  fld(&g, STRUCT, 2);
  fld(&g, STRING, 1);
  str(&g, "x");
  stop(&g);
  stop(&g);
  assert_int_equal(feed(g.d, g.n, 0, "get", 0, &rows, &r, &left), HB_REPLY_OK);
  assert_int_equal(rows.n, 0);

  b.n = 0; /* an application exception (the gateway failed the call) */
  header(&b, 3, "getScannerRows");
  fld(&b, STRING, 1);
  str(&b, "Internal error processing getScannerRows");
  fld(&b, I32, 2);
  i32(&b, 6);
  stop(&b);
  assert_int_equal(feed(b.d, b.n, 0, "getScannerRows", SCAN, &rows, &r, &left),
                   HB_REPLY_APP_ERROR);
  assert_string_equal(r.msg, "application error: Internal error processing getScannerRows");
  assert_int_equal(left, 0);
  hb_rows_free(&rows);
}

/* Bytes that are not such a reply: HB_REPLY_BAD and what was wrong. */
static void test_bad(void **state) {
  (void)state;
  hb_rows rows = {0};
  hb_reply r;
  size_t left;
  struct {
    int what;
    const char *msg;
  } cases[] = {
    {0, "a reply to get, not to getScannerRows"},
    {1, "a message of type 1, not a reply (2)"},
    {2, "a message header without a protocol version"},
    {3, "protocol version 0x8002"},
    {4, "a value of unknown type 99"},
    {5, "a TColumnValue without its value (field 3)"},
    {6, "the list of TResult holds values of type 8, not structs"},
    {7, "values nested deeper than 64"},
    {8, "a TResult without its columnValues (field 2)"},
    {9, "a method name of 100000 bytes"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    buf b = {.n = 0};
    switch (cases[i].what) {
    case 0: header(&b, 2, "get"); break;
    case 1: header(&b, 1, "getScannerRows"); break;
    case 2: str(&b, "getScannerRows"); break;
    case 3: i32(&b, (int32_t)0x80020002u); break;
    case 4:
      header(&b, 2, "getScannerRows");
      fld(&b, 99, 5);
      break;
    case 5:
      header(&b, 2, "getScannerRows");
      fld(&b, LIST, 0);
      u8(&b, STRUCT);
      i32(&b, 1);
      fld(&b, LIST, 2);
      u8(&b, STRUCT);
      i32(&b, 1);
      fld(&b, STRING, 1);
      str(&b, "F");
      fld(&b, STRING, 2);
      str(&b, "Q");
      fld(&b, I32, 3); /* the value with another type: skipped, so missing */
      i32(&b, 1);
      stop(&b);
      break;
    case 6:
      header(&b, 2, "getScannerRows");
      fld(&b, LIST, 0);
      u8(&b, I32);
      i32(&b, 1);
      break;
    case 7:
      header(&b, 2, "getScannerRows");
      for (int d = 0; d < 70; d++) fld(&b, STRUCT, 9);
      break;
    case 8:
      header(&b, 2, "getScannerRows");
      fld(&b, LIST, 0);
      u8(&b, STRUCT);
      i32(&b, 1);
      fld(&b, STRING, 1);
      str(&b, "r");
      stop(&b);
      break;
    case 9:
      i32(&b, (int32_t)0x80010002u);
      i32(&b, 100000);
      break;
    }
    int k = feed(b.d, b.n, 0, "getScannerRows", SCAN, &rows, &r, &left);
    if (k != HB_REPLY_BAD || !strstr(r.msg, cases[i].msg))
      fail_msg("case %d: kind %d, message \"%s\", wanted \"%s\"", cases[i].what, k, r.msg,
               cases[i].msg);
    assert_int_equal(rows.n, 0);
    assert_non_null(strstr(r.msg, "reply to getScannerRows"));
  }
  hb_rows_free(&rows);
}

/* get's reply: one TResult (a struct, not a list); no cells when HBase found none. */
static void test_get(void **state) {
  (void)state;
  hb_rows rows = {0};
  hb_reply r;
  size_t left;
  buf b = {.n = 0};
  header(&b, 2, "get");
  fld(&b, STRUCT, 0);
  fld(&b, STRING, 1);
  str(&b, "row");
  fld(&b, LIST, 2);
  u8(&b, STRUCT);
  i32(&b, 1);
  cell(&b, "M", "C", "value", 42, true);
  stop(&b);
  stop(&b);
  assert_int_equal(feed(b.d, b.n, 1, "get", 0, &rows, &r, &left), HB_REPLY_OK);
  assert_int_equal(rows.n, 1);
  assert_int_equal(rows.v[0].ncells, 1);
  assert_true(bytes_are(rows.v[0].cells[0].value, "value"));
  assert_int_equal(rows.v[0].cells[0].ts, 42);
  b.n = 0; /* not found: columnValues empty, no row */
  header(&b, 2, "get");
  fld(&b, STRUCT, 0);
  fld(&b, LIST, 2);
  u8(&b, STRUCT);
  i32(&b, 0);
  stop(&b);
  stop(&b);
  assert_int_equal(feed(b.d, b.n, 0, "get", 0, &rows, &r, &left), HB_REPLY_OK);
  assert_int_equal(rows.n, 1);
  assert_int_equal(rows.v[0].ncells, 0);
  assert_int_equal(rows.v[0].key_len, 0);
  hb_rows_free(&rows);
}

static GByteArray *gba(const char *s) {
  GByteArray *a = g_byte_array_new();
  g_byte_array_append(a, (const guint8 *)s, (guint)strlen(s));
  return a;
}

/* A reply written by the c_glib code thrift-compiler generated from hbase.thrift: the hand
** reader's field ids and types are the IDL's. */
static void test_generated_writer(void **state) {
  (void)state;
  THBaseServiceGetScannerRowsResult *res =
      g_object_new(TYPE_T_H_BASE_SERVICE_GET_SCANNER_ROWS_RESULT, NULL);
  for (int i = 0; i < 3; i++) {
    TResult *t = g_object_new(TYPE_T_RESULT, NULL);
    char key[8];
    snprintf(key, sizeof key, "k%d", i);
    t->row = gba(key);
    t->__isset_row = TRUE;
    t->partial = TRUE;
    t->__isset_partial = TRUE;
    for (int j = 0; j < i; j++) { /* row i has i cells */
      TColumnValue *v = g_object_new(TYPE_T_COLUMN_VALUE, NULL);
      v->family = gba("fam");
      v->qualifier = gba(j ? "q1" : "q0");
      v->value = gba(j ? "" : "val");
      v->timestamp = 1000 + j;
      v->__isset_timestamp = TRUE;
      v->tags = gba("t");
      v->__isset_tags = TRUE;
      v->type = 4;
      v->__isset_type = TRUE;
      g_ptr_array_add(t->columnValues, v);
    }
    g_ptr_array_add(res->success, t);
  }
  res->__isset_success = TRUE;
  ThriftMemoryBuffer *mb = g_object_new(THRIFT_TYPE_MEMORY_BUFFER, "buf_size", 65536u, NULL);
  ThriftProtocol *pr = g_object_new(THRIFT_TYPE_BINARY_PROTOCOL, "transport", mb, NULL);
  assert_true(thrift_protocol_write_message_begin(pr, "getScannerRows", T_REPLY, 0, NULL) >= 0);
  assert_true(thrift_struct_write(THRIFT_STRUCT(res), pr, NULL) >= 0);
  assert_true(thrift_protocol_write_message_end(pr, NULL) >= 0);
  hb_rows rows = {0};
  hb_reply r;
  size_t left;
  assert_int_equal(feed(mb->buf->data, mb->buf->len, 0, "getScannerRows", SCAN, &rows, &r, &left),
                   HB_REPLY_OK);
  assert_int_equal(left, 0);
  assert_int_equal(rows.n, 3);
  for (int i = 0; i < 3; i++) {
    char key[8];
    snprintf(key, sizeof key, "k%d", i);
    assert_int_equal(rows.v[i].key_len, strlen(key));
    assert_memory_equal(rows.v[i].key, key, strlen(key));
    assert_int_equal(rows.v[i].ncells, (size_t)i);
    for (int j = 0; j < i; j++) {
      const hb_cell *c = &rows.v[i].cells[j];
      assert_true(bytes_are(c->family, "fam"));
      assert_true(bytes_are(c->qualifier, j ? "q1" : "q0"));
      assert_true(bytes_are(c->value, j ? "" : "val"));
      assert_int_equal(c->ts, 1000 + j);
    }
  }
  hb_rows_free(&rows);
  g_object_unref(pr);
  g_object_unref(mb);
  g_object_unref(res);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_two_rows),   cmocka_unit_test(test_truncated),
      cmocka_unit_test(test_lengths),    cmocka_unit_test(test_exceptions),
      cmocka_unit_test(test_bad),        cmocka_unit_test(test_get),
      cmocka_unit_test(test_generated_writer),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
