/*
** tests/kv/test_batch.c: write batches (kv_batch_*): the encoded payload is exactly the WAL
** payload format of kv/db/wal.h (decoded back with kv_wal_decode_op), count and byte size,
** clear and reuse, the count varint growing past one byte, and every size and argument
** check with its code and message; the family ids a batch lists for kv_commit's check
** (kv_batch_families), and that it says it does not know them when it cannot; KV_TS_NOW's
** timestamp bytes written and read whole are the general varint's.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "kv/util/coding.h"
#include "kv/db/db_impl.h"
#include "kv/db/wal.h"
#include "testutil.h"

/* KV_TS_NOW's timestamp field, which add_op and the op decoder handle whole, is byte for byte
** the zigzag varint of INT64_MIN that the general coder writes (the format is unchanged), and
** timestamps next to it, or a truncated copy of it, still go through the general decoder. */
static void test_ts_now_bytes(void **state) {
  uint8_t want[16], got[16];
  size_t n = (size_t)(kv_put_varint(want, kv_zigzag(INT64_MIN)) - want);
  assert_int_equal(n, KV_ZZ_MIN_LEN);
  kv_put_zz_min(got);
  assert_memory_equal(got, want, n);
  assert_true(kv_is_zz_min(want, want + n));
  assert_false(kv_is_zz_min(want, want + n - 1)); /* truncated */
  int64_t ts[] = {KV_TS_NOW, 0, 1, INT64_MAX, 1700000000000};
  kv_batch *b = kv_batch_new();
  for (int i = 0; i < 5; i++)
    assert_int_equal(kv_batch_put(b, 1, "r", 1, "q", 1, ts[i], "v", 1), KV_OK);
  size_t len;
  const uint8_t *p = kv_batch_payload(b, &len), *limit = p + len;
  uint64_t count;
  p = kv_get_varint(p, limit, &count);
  for (int i = 0; i < 5; i++) {
    kv_wal_op op;
    assert_int_equal(kv_wal_decode_op(&p, limit, &op), KV_OK);
    assert_true(op.ts == ts[i]);
    assert_int_equal(op.value_len, 1);
  }
  assert_ptr_equal(p, limit);
  /* the batch with its last byte cut off: the last op's value is missing, not misread */
  p = kv_batch_payload(b, &len);
  limit = p + len - 1;
  p = kv_get_varint(p, limit, &count);
  kv_wal_op op;
  for (int i = 0; i < 4; i++) assert_int_equal(kv_wal_decode_op(&p, limit, &op), KV_OK);
  assert_int_equal(kv_wal_decode_op(&p, limit, &op), KV_ERR_CORRUPT);
  kv_batch_free(b);
}

static void test_payload_round_trip(void **state) {
  kv_batch *b = kv_batch_new();
  assert_int_equal(kv_batch_count(b), 0);
  assert_int_equal(kv_batch_put(b, 7, "row1", 4, "q", 1, 123, "value", 5), KV_OK);
  assert_int_equal(kv_batch_delete(b, 300, KV_DELETE_COLUMN, "row2", 4, "qq", 2, KV_TS_NOW),
                   KV_OK);
  assert_int_equal(kv_batch_delete(b, 1, KV_DELETE_FAMILY, "r", 1, NULL, 0, 0), KV_OK);
  assert_int_equal(kv_batch_put(b, 1, "r", 1, NULL, 0, 5, NULL, 0), KV_OK);
  assert_int_equal(kv_batch_count(b), 4);
  size_t len;
  const uint8_t *p = kv_batch_payload(b, &len), *limit = p + len;
  assert_int_equal(len, kv_batch_byte_size(b));
  uint64_t count;
  p = kv_get_varint(p, limit, &count);
  assert_non_null(p);
  assert_int_equal(count, 4);
  kv_wal_op op;
  assert_int_equal(kv_wal_decode_op(&p, limit, &op), KV_OK);
  assert_int_equal(op.type, KV_PUT);
  assert_int_equal(op.family_id, 7);
  assert_int_equal(op.row_len, 4);
  assert_memory_equal(op.row, "row1", 4);
  assert_int_equal(op.qual_len, 1);
  assert_int_equal(op.ts, 123);
  assert_int_equal(op.value_len, 5);
  assert_memory_equal(op.value, "value", 5);
  assert_int_equal(kv_wal_decode_op(&p, limit, &op), KV_OK);
  assert_int_equal(op.type, KV_DELETE_COLUMN);
  assert_int_equal(op.family_id, 300);
  assert_true(op.ts == KV_TS_NOW);
  assert_int_equal(op.qual_len, 2);
  assert_int_equal(kv_wal_decode_op(&p, limit, &op), KV_OK);
  assert_int_equal(op.type, KV_DELETE_FAMILY);
  assert_int_equal(op.qual_len, 0);
  assert_int_equal(kv_wal_decode_op(&p, limit, &op), KV_OK);
  assert_int_equal(op.type, KV_PUT);
  assert_int_equal(op.value_len, 0);
  assert_ptr_equal(p, limit);
  kv_batch_clear(b);
  assert_int_equal(kv_batch_count(b), 0);
  assert_int_equal(kv_batch_byte_size(b), 1);
  kv_batch_free(b);
}

static void test_many_ops(void **state) {
  kv_batch *b = kv_batch_new();
  int n = 1000; /* count needs a two-byte varint */
  for (int i = 0; i < n; i++) {
    char row[16];
    snprintf(row, sizeof row, "r%d", i);
    assert_int_equal(kv_batch_put(b, 1, row, strlen(row), "q", 1, i, row, strlen(row)), KV_OK);
  }
  size_t len;
  const uint8_t *p = kv_batch_payload(b, &len), *limit = p + len;
  uint64_t count;
  p = kv_get_varint(p, limit, &count);
  assert_int_equal(count, (uint64_t)n);
  for (int i = 0; i < n; i++) {
    kv_wal_op op;
    assert_int_equal(kv_wal_decode_op(&p, limit, &op), KV_OK);
    char row[16];
    snprintf(row, sizeof row, "r%d", i);
    assert_int_equal(op.row_len, strlen(row));
    assert_memory_equal(op.row, row, op.row_len);
    assert_int_equal(op.ts, i);
  }
  assert_ptr_equal(p, limit);
  kv_batch_free(b);
}

/* Rolling back to a mark drops exactly the ops added after it, the count varint shrinking
** from two bytes to one included; the batch then takes new ops after the kept ones. */
static void test_rollback_to_mark(void **state) {
  (void)state;
  kv_batch *b = kv_batch_new();
  char row[16];
  for (int i = 0; i < 100; i++) {
    snprintf(row, sizeof row, "r%d", i);
    assert_int_equal(kv_batch_put(b, 1, row, strlen(row), "q", 1, i, row, strlen(row)), KV_OK);
  }
  size_t size_at_mark = kv_batch_byte_size(b);
  kv_batch_mark m = kv_batch_get_mark(b);
  assert_int_equal(m.count, 100);
  for (int i = 100; i < 300; i++) { /* the count now needs two varint bytes */
    snprintf(row, sizeof row, "r%d", i);
    assert_int_equal(kv_batch_put(b, 1, row, strlen(row), "q", 1, i, row, strlen(row)), KV_OK);
  }
  kv_batch_rollback_to(b, m);
  assert_int_equal(kv_batch_count(b), 100);
  assert_int_equal(kv_batch_byte_size(b), size_at_mark);
  assert_int_equal(kv_batch_delete(b, 1, KV_DELETE_FAMILY, "z", 1, NULL, 0, 7), KV_OK);
  size_t len;
  const uint8_t *p = kv_batch_payload(b, &len), *limit = p + len;
  uint64_t count;
  p = kv_get_varint(p, limit, &count);
  assert_int_equal(count, 101);
  kv_wal_op op;
  for (int i = 0; i < 100; i++) {
    assert_int_equal(kv_wal_decode_op(&p, limit, &op), KV_OK);
    snprintf(row, sizeof row, "r%d", i);
    assert_int_equal(op.row_len, strlen(row));
    assert_memory_equal(op.row, row, op.row_len);
  }
  assert_int_equal(kv_wal_decode_op(&p, limit, &op), KV_OK);
  assert_int_equal(op.type, KV_DELETE_FAMILY);
  assert_ptr_equal(p, limit);
  kv_batch_rollback_to(b, kv_batch_get_mark(NULL)); /* back to empty */
  assert_int_equal(kv_batch_count(b), 0);
  assert_int_equal(kv_batch_byte_size(b), 1);
  kv_batch_free(b);
}

static void test_families(void **state) {
  (void)state;
  kv_batch *b = kv_batch_new();
  const uint32_t *ids;
  uint32_t n;
  assert_true(kv_batch_families(b, &ids, &n));
  assert_int_equal(n, 0);
  uint32_t order[] = {5, 5, 3, 5, 9, 3};
  for (int i = 0; i < 6; i++)
    assert_int_equal(kv_batch_put(b, order[i], "r", 1, "q", 1, 1, "v", 1), KV_OK);
  assert_true(kv_batch_families(b, &ids, &n));
  assert_int_equal(n, 3);
  assert_int_equal(ids[0], 5);
  assert_int_equal(ids[1], 3);
  assert_int_equal(ids[2], 9);
  /* a rollback past ops may leave ids only the dropped ops used: not known any more */
  kv_batch_mark m = kv_batch_get_mark(b);
  assert_int_equal(kv_batch_delete(b, 77, KV_DELETE_FAMILY, "r", 1, NULL, 0, 1), KV_OK);
  kv_batch_rollback_to(b, m);
  assert_false(kv_batch_families(b, &ids, &n));
  kv_batch *c = kv_batch_copy(b, kv_batch_get_mark(b));
  assert_false(kv_batch_families(c, &ids, &n));
  kv_batch_free(c);
  kv_batch_clear(b);
  assert_true(kv_batch_families(b, &ids, &n));
  assert_int_equal(n, 0);
  for (uint32_t f = 1; f <= KV_BATCH_FAMS + 1; f++) /* one more than it lists */
    assert_int_equal(kv_batch_put(b, f, "r", 1, "q", 1, 1, "v", 1), KV_OK);
  assert_false(kv_batch_families(b, &ids, &n));
  kv_batch_rollback_to(b, kv_batch_get_mark(NULL)); /* empty again: known (none) */
  assert_true(kv_batch_families(b, &ids, &n));
  assert_int_equal(n, 0);
  kv_batch_free(b);
}

static void test_limits(void **state) {
  kv_batch *b = kv_batch_new();
  size_t big = KV_MAX_VALUE + 1;
  uint8_t *buf = calloc(1, big);
  assert_int_equal(kv_batch_put(b, 1, buf, KV_MAX_ROW_KEY + 1, "q", 1, 1, "v", 1),
                   KV_ERR_TOOBIG);
  assert_non_null(strstr(kv_errmsg(), "row key"));
  assert_int_equal(kv_batch_put(b, 1, buf, KV_MAX_ROW_KEY, "q", 1, 1, "v", 1), KV_OK);
  assert_int_equal(kv_batch_put(b, 1, "r", 1, buf, KV_MAX_QUALIFIER + 1, 1, "v", 1),
                   KV_ERR_TOOBIG);
  assert_non_null(strstr(kv_errmsg(), "qualifier"));
  assert_int_equal(kv_batch_put(b, 1, "r", 1, "q", 1, 1, buf, big), KV_ERR_TOOBIG);
  assert_non_null(strstr(kv_errmsg(), "value"));
  assert_int_equal(kv_batch_put(b, 1, "r", 1, "q", 1, 1, buf, KV_MAX_VALUE), KV_OK);
  /* the batch limit: four more 64 MiB values would pass 256 MiB */
  int rc = KV_OK;
  for (int i = 0; i < 4 && rc == KV_OK; i++)
    rc = kv_batch_put(b, 1, "r", 1, "q", 1, 1, buf, KV_MAX_VALUE);
  assert_int_equal(rc, KV_ERR_TOOBIG);
  assert_non_null(strstr(kv_errmsg(), "batch"));
  assert_true(kv_batch_byte_size(b) <= KV_MAX_BATCH);
  size_t count = kv_batch_count(b);
  assert_int_equal(kv_batch_put(b, 1, "", 0, "q", 1, 1, "v", 1), KV_ERR_INVALID);
  assert_non_null(strstr(kv_errmsg(), "empty row key"));
  assert_int_equal(kv_batch_delete(b, 1, KV_PUT, "r", 1, "q", 1, 1), KV_ERR_INVALID);
  assert_int_equal(kv_batch_delete(b, 1, 9, "r", 1, "q", 1, 1), KV_ERR_INVALID);
  assert_non_null(strstr(kv_errmsg(), "tombstone type"));
  assert_int_equal(kv_batch_delete(b, 1, KV_DELETE_FAMILY, "r", 1, "q", 1, 1), KV_ERR_INVALID);
  assert_non_null(strstr(kv_errmsg(), "no qualifier"));
  assert_int_equal(kv_batch_put(b, 1, "r", 1, "q", 1, -5, "v", 1), KV_ERR_INVALID);
  assert_non_null(strstr(kv_errmsg(), "timestamp"));
  assert_int_equal(kv_batch_count(b), count); /* refused ops leave the batch as it was */
  assert_int_equal(kv_batch_put(NULL, 1, "r", 1, "q", 1, 1, "v", 1), KV_MISUSE);
  free(buf);
  kv_batch_free(b);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_payload_round_trip),
    cmocka_unit_test(test_ts_now_bytes),
    cmocka_unit_test(test_many_ops),
    cmocka_unit_test(test_rollback_to_mark),
    cmocka_unit_test(test_families),
    cmocka_unit_test(test_limits),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
