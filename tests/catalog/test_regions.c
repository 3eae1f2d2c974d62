/*
** tests/catalog/test_regions.c: SALT_BUCKETS and SPLIT ON in the catalog (catalog/salt.c,
** catalog/cat_regions.c; docs/FORMAT_SQL.md (Part 3)): the salt byte is 32-bit FNV-1a of the
** unsalted key modulo the buckets (checked on the hash's published test vectors); a table
** record of version 3 carries the buckets or the split points byte for byte as documented
** and keeps them across a reopen, while a table without them is still written as version 1
** or 2; a damaged version 3 record fails the open as corrupt; the row-atomic backend gets
** the bucket boundaries (01 .. n-1) or the split points as its region boundaries and
** reports them from split_points; bad definitions are refused.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "catalog/catalog.h"
#include "catalog/salt.h"
#include "kv/backend.h"
#include "kv/backend/backend_rowatomic.h"
#include "kv/env/env_mem.h"
#include "tu_cat.h"

static void fnv1a_vectors(void **state) {
  (void)state;
  /* FNV-1a 32: "" = 811C9DC5, "a" = E40C292C, "foobar" = BF9CF968 (the published vectors) */
  assert_int_equal(cat_salt_byte((const uint8_t *)"", 0, 256), 0xC5);
  assert_int_equal(cat_salt_byte((const uint8_t *)"a", 1, 256), 0x2C);
  assert_int_equal(cat_salt_byte((const uint8_t *)"foobar", 6, 256), 0x68);
  assert_int_equal(cat_salt_byte((const uint8_t *)"a", 1, 4), 0xE40C292Cu % 4);
  assert_int_equal(cat_salt_byte((const uint8_t *)"foobar", 6, 7), 0xBF9CF968u % 7);
  assert_int_equal(cat_salt_byte((const uint8_t *)"foobar", 6, 1), 0);
}

static const cat_column_def cols[] = {
    {"K", NULL, {CAT_T_INTEGER, 0, 0, 0, 0}, 0},
    {"V", NULL, {CAT_T_VARCHAR, 0, 0, 0, 0}, 0},
};
static const char *const pk[] = {"K"};

static cat_table_def table_def(const char *name) {
  cat_table_def d;
  memset(&d, 0, sizeof d);
  d.name = name;
  d.columns = cols;
  d.n_columns = 2;
  d.pk = pk;
  d.n_pk = 1;
  return d;
}

/* The value of table name's SYSTEM.CATALOG row into buf; its length. */
static size_t record_of(store *s, const char *name, uint8_t *buf, size_t cap) {
  uint8_t key[64];
  size_t n = strlen(name);
  key[0] = 'T';
  memcpy(key + 1, name, n);
  key[n + 1] = 0x00;
  key[n + 2] = 0x01;
  uint32_t fid;
  assert_int_equal(kv_family_id(s->db, CAT_SYSTEM_TABLE, "0", &fid), KV_OK);
  kv_scan_options o;
  memset(&o, 0, sizeof o);
  o.family_ids = &fid;
  o.n_families = 1;
  kv_scan *sc = NULL;
  kv_row row;
  assert_int_equal(kv_get(s->db, &o, key, n + 3, &sc, &row), KV_OK);
  assert_int_equal(row.n_cells, 1);
  size_t len = row.cells[0].value_len;
  assert_true(len <= cap);
  memcpy(buf, row.cells[0].value, len);
  kv_scan_close(sc);
  return len;
}

/* Put value[0..len) as table name's record (a damaged one). */
static void put_record(store *s, const char *name, const uint8_t *value, size_t len) {
  uint8_t key[64];
  size_t n = strlen(name);
  key[0] = 'T';
  memcpy(key + 1, name, n);
  key[n + 1] = 0x00;
  key[n + 2] = 0x01;
  uint32_t fid;
  assert_int_equal(kv_family_id(s->db, CAT_SYSTEM_TABLE, "0", &fid), KV_OK);
  kv_batch *b = kv_batch_new();
  assert_int_equal(kv_batch_put(b, fid, key, n + 3, "d", 1, KV_TS_NOW, value, len), KV_OK);
  assert_int_equal(kv_commit(s->db, b, NULL), KV_OK);
  kv_batch_free(b);
}

static void record_round_trip(void **state) {
  (void)state;
  store s = {kv_env_mem_new(1700000000000LL), NULL, NULL};
  open_store(&s);
  cat_error err = {0};
  cat_table_def d = table_def("S");
  d.salt_buckets = 4;
  assert_int_equal(cat_create_table(s.cat, &d, NULL, &err), CAT_OK);
  const uint8_t k1[] = {0x80, 0x00, 0x00, 0x0A}, k2[] = {0x80, 0x00, 0x00, 0x14};
  const uint8_t *const keys[] = {k1, k2};
  const uint32_t lens[] = {4, 4};
  d = table_def("P");
  d.split_keys = keys;
  d.split_lens = lens;
  d.n_splits = 2;
  assert_int_equal(cat_create_table(s.cat, &d, NULL, &err), CAT_OK);
  d = table_def("U");
  assert_int_equal(cat_create_table(s.cat, &d, NULL, &err), CAT_OK);
  close_store(&s);
  open_store(&s);
  const cat_table *t = cat_find_table(s.cat, "S");
  assert_int_equal(t->salt_buckets, 4);
  assert_int_equal(t->n_splits, 0);
  t = cat_find_table(s.cat, "P");
  assert_int_equal(t->salt_buckets, 0);
  assert_int_equal(t->n_splits, 2);
  assert_memory_equal(t->split_keys[1], k2, 4);
  assert_int_equal(cat_find_table(s.cat, "U")->salt_buckets, 0);
  uint8_t rec[1024];
  size_t n = record_of(&s, "S", rec, sizeof rec);
  /* version 3; the tail: row cover 02 (family 0), SALT_BUCKETS 04, no split points */
  assert_int_equal(rec[0], 3);
  assert_int_equal(rec[n - 3], 0x02);
  assert_int_equal(rec[n - 2], 0x04);
  assert_int_equal(rec[n - 1], 0x00);
  size_t np = record_of(&s, "P", rec, sizeof rec);
  const uint8_t tail[] = {0x02, 0x00, 0x02, 0x04, 0x80, 0x00, 0x00, 0x0A,
                          0x04, 0x80, 0x00, 0x00, 0x14};
  assert_int_equal(rec[0], 3);
  assert_memory_equal(rec + np - sizeof tail, tail, sizeof tail);
  assert_int_equal(record_of(&s, "U", rec, sizeof rec) > 0 && rec[0] == 2, 1); /* unchanged */
  /* a damaged version 3 record: buckets 0 with no split point, then 300 buckets */
  n = record_of(&s, "S", rec, sizeof rec);
  rec[n - 2] = 0x00;
  put_record(&s, "S", rec, n);
  close_store(&s);
  open_kv(&s);
  assert_int_equal(cat_open(s.db, &s.cat, &err), CAT_ERR_CORRUPT);
  uint8_t big[1024];
  memcpy(big, rec, n - 2);
  big[n - 2] = 0xAC; /* 300 */
  big[n - 1] = 0x02;
  big[n] = 0x00;
  put_record(&s, "S", big, n + 1);
  kv_close(s.db);
  open_kv(&s);
  assert_int_equal(cat_open(s.db, &s.cat, &err), CAT_ERR_CORRUPT);
  kv_close(s.db);
  kv_env_free(s.env);
}

static void bad_definitions(void **state) {
  (void)state;
  store s = {kv_env_mem_new(1700000000000LL), NULL, NULL};
  open_store(&s);
  cat_error err = {0};
  cat_table_def d = table_def("X");
  d.salt_buckets = 257;
  assert_int_equal(cat_create_table(s.cat, &d, NULL, &err), CAT_ERR_INVALID);
  assert_non_null(strstr(err.msg, "SALT_BUCKETS 257 is outside 1..256"));
  const uint8_t k1[] = {0x80, 0x00, 0x00, 0x14}, k2[] = {0x80, 0x00, 0x00, 0x0A};
  const uint8_t *const keys[] = {k1, k2};
  const uint32_t lens[] = {4, 4};
  d = table_def("X");
  d.split_keys = keys;
  d.split_lens = lens;
  d.n_splits = 2;
  assert_int_equal(cat_create_table(s.cat, &d, NULL, &err), CAT_ERR_INVALID);
  assert_non_null(strstr(err.msg, "split point 2 is not above split point 1"));
  d.n_splits = 1;
  d.salt_buckets = 2;
  assert_int_equal(cat_create_table(s.cat, &d, NULL, &err), CAT_ERR_INVALID);
  assert_non_null(strstr(err.msg, "cannot be used with SALT_BUCKETS"));
  assert_null(cat_find_table(s.cat, "X"));
  close_store(&s);
  kv_env_free(s.env);
}

static void each_key(void *ctx, const uint8_t *key, uint32_t len) {
  char *out = ctx;
  size_t o = strlen(out);
  for (uint32_t i = 0; i < len; i++) o += (size_t)snprintf(out + o, 8, "%02X", key[i]);
  snprintf(out + o, 4, ";");
}

static void rowatomic_regions(void **state) {
  (void)state;
  store s = {kv_env_mem_new(1700000000000LL), NULL, NULL};
  open_kv(&s);
  kv_backend *be = NULL;
  assert_int_equal(kv_backend_rowatomic_open(s.db, &be), KV_OK);
  cat_error err = {0};
  assert_int_equal(cat_open_backend(be, &s.cat, &err), CAT_OK);
  cat_table_def d = table_def("S");
  d.salt_buckets = 4;
  const cat_table *t;
  assert_int_equal(cat_create_table(s.cat, &d, &t, &err), CAT_OK);
  char got[256] = "";
  assert_int_equal(kv_be_split_points(be, t->families[0].kv_id, 16, each_key, got), KV_OK);
  assert_string_equal(got, "01;02;03;");
  const uint8_t k1[] = {0x80, 0x00, 0x00, 0x0A};
  const uint8_t *const keys[] = {k1};
  const uint32_t lens[] = {4};
  d = table_def("P");
  d.split_keys = keys;
  d.split_lens = lens;
  d.n_splits = 1;
  assert_int_equal(cat_create_table(s.cat, &d, &t, &err), CAT_OK);
  got[0] = 0;
  assert_int_equal(kv_be_split_points(be, t->families[0].kv_id, 16, each_key, got), KV_OK);
  assert_string_equal(got, "8000000A;");
  cat_close(s.cat);
  kv_backend_rowatomic_close(be);
  kv_close(s.db);
  kv_env_free(s.env);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(fnv1a_vectors),
      cmocka_unit_test(record_round_trip),
      cmocka_unit_test(bad_definitions),
      cmocka_unit_test(rowatomic_regions),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
