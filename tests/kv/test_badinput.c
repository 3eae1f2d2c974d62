/*
** tests/kv/test_badinput.c: every bad input listed in kv.h gets its documented code and a
** message naming the thing: table and family names (empty, duplicate, too long, too many
** families, bad options), unknown tables and families in every call that takes them, scan
** options (no family, families of two tables, unsorted or overlapping ranges, snapshot in
** the future), a second open of the same directory, writes to a read-only store, NULL
** handles, and a scan still open when its store is closed. Sizes of keys, qualifiers and
** values are in test_batch.c.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "kv/env/env_mem.h"
#include "kv/kv.h"
#include "testutil.h"

static kv_db *open_db(kv_env *env) {
  kv_options o;
  kv_options_init(&o);
  o.env = env;
  o.create_if_missing = true;
  kv_db *db;
  assert_int_equal(kv_open("/db", &o, &db), KV_OK);
  return db;
}

#define EXPECT_ERR(call, code, text)                       \
  do {                                                     \
    assert_int_equal((call), (code));                      \
    assert_non_null(strstr(kv_errmsg(), (text)));          \
  } while (0)

static void test_table_definitions(void **state) {
  kv_env *env = kv_env_mem_new(1);
  kv_db *db = open_db(env);
  kv_family_options f2[2] = {{.name = "a"}, {.name = "a"}};
  EXPECT_ERR(kv_create_table(db, "t", f2, 2), KV_ERR_INVALID, "duplicate family name 'a'");
  kv_family_options empty = {.name = ""};
  EXPECT_ERR(kv_create_table(db, "t", &empty, 1), KV_ERR_INVALID, "empty name");
  kv_family_options nul = {.name = NULL};
  EXPECT_ERR(kv_create_table(db, "t", &nul, 1), KV_ERR_INVALID, "empty name");
  EXPECT_ERR(kv_create_table(db, "t", NULL, 0), KV_ERR_INVALID, "at least one family");
  kv_family_options many[KV_MAX_FAMILIES + 1];
  char names[KV_MAX_FAMILIES + 1][8];
  for (unsigned i = 0; i <= KV_MAX_FAMILIES; i++) {
    snprintf(names[i], sizeof names[i], "f%u", i);
    many[i] = (kv_family_options){.name = names[i]};
  }
  EXPECT_ERR(kv_create_table(db, "t", many, KV_MAX_FAMILIES + 1), KV_ERR_INVALID,
             "over the maximum of 64");
  assert_int_equal(kv_create_table(db, "wide", many, KV_MAX_FAMILIES), KV_OK);
  char longname[KV_MAX_NAME + 2];
  memset(longname, 'n', sizeof longname - 1);
  longname[sizeof longname - 1] = 0;
  kv_family_options ok = {.name = "a"};
  EXPECT_ERR(kv_create_table(db, longname, &ok, 1), KV_ERR_TOOBIG, "table name");
  kv_family_options longfam = {.name = longname};
  EXPECT_ERR(kv_create_table(db, "t", &longfam, 1), KV_ERR_TOOBIG, "family name");
  EXPECT_ERR(kv_create_table(db, "", &ok, 1), KV_ERR_INVALID, "empty table name");
  kv_family_options badv = {.name = "a", .max_versions = -1};
  EXPECT_ERR(kv_create_table(db, "t", &badv, 1), KV_ERR_INVALID, "VERSIONS");
  kv_family_options badttl = {.name = "a", .ttl_sec = -1};
  EXPECT_ERR(kv_create_table(db, "t", &badttl, 1), KV_ERR_INVALID, "TTL");
  kv_family_options badc = {.name = "a", .compression = 7};
  EXPECT_ERR(kv_create_table(db, "t", &badc, 1), KV_ERR_INVALID, "compression");
  assert_int_equal(kv_create_table(db, "t", &ok, 1), KV_OK);
  EXPECT_ERR(kv_create_table(db, "t", &ok, 1), KV_ERR_EXISTS, "'t' already exists");
  assert_int_equal(kv_table_count(db), 2);
  assert_int_equal(kv_close(db), KV_OK);
  kv_env_free(env);
}

static void test_unknown_names(void **state) {
  kv_env *env = kv_env_mem_new(1);
  kv_db *db = open_db(env);
  kv_family_options ok = {.name = "a"};
  assert_int_equal(kv_create_table(db, "t", &ok, 1), KV_OK);
  uint32_t id;
  EXPECT_ERR(kv_family_id(db, "nosuch", "a", &id), KV_ERR_NOTFOUND, "no table 'nosuch'");
  EXPECT_ERR(kv_family_id(db, "t", "zz", &id), KV_ERR_NOTFOUND, "no family 'zz'");
  EXPECT_ERR(kv_drop_table(db, "nosuch"), KV_ERR_NOTFOUND, "'nosuch'");
  EXPECT_ERR(kv_flush(db, "nosuch"), KV_ERR_NOTFOUND, "'nosuch'");
  EXPECT_ERR(kv_compact(db, "nosuch", true), KV_ERR_NOTFOUND, "'nosuch'");
  kv_family_options info;
  EXPECT_ERR(kv_family_info(db, 999, &info), KV_ERR_NOTFOUND, "999");
  kv_family_stats st;
  EXPECT_ERR(kv_family_get_stats(db, 999, &st), KV_ERR_NOTFOUND, "999");
  uint64_t rows, bytes;
  EXPECT_ERR(kv_estimate_rows(db, 999, NULL, &rows, &bytes), KV_ERR_NOTFOUND, "999");
  kv_batch *b = kv_batch_new();
  kv_batch_put(b, 999, "r", 1, "q", 1, 1, "v", 1);
  uint64_t seq0 = kv_last_sequence(db);
  EXPECT_ERR(kv_commit(db, b, NULL), KV_ERR_NOTFOUND, "unknown family id 999");
  assert_int_equal(kv_last_sequence(db), seq0);
  /* unknown families among more than the batch lists (KV_BATCH_FAMS, 8): found by decoding */
  kv_batch_clear(b);
  for (uint32_t f = 1000; f < 1009; f++) kv_batch_put(b, f, "r", 1, "q", 1, 1, "v", 1); /* 9 > 8 */
  kv_batch_put(b, 999, "r", 1, "q", 1, 1, "v", 1);
  EXPECT_ERR(kv_commit(db, b, NULL), KV_ERR_NOTFOUND, "unknown family id 1000");
  assert_int_equal(kv_last_sequence(db), seq0);
  kv_batch_free(b);
  uint32_t fid = 999;
  kv_scan_options so = {0};
  so.family_ids = &fid;
  so.n_families = 1;
  kv_scan *s;
  EXPECT_ERR(kv_scan_open(db, &so, &s), KV_ERR_NOTFOUND, "unknown family id 999");
  assert_null(s);
  kv_row r;
  EXPECT_ERR(kv_get(db, &so, "r", 1, &s, &r), KV_ERR_NOTFOUND, "unknown family id 999");
  assert_null(s);
  assert_int_equal(kv_close(db), KV_OK);
  kv_env_free(env);
}

static void test_scan_options(void **state) {
  kv_env *env = kv_env_mem_new(1);
  kv_db *db = open_db(env);
  kv_family_options ok = {.name = "a"};
  assert_int_equal(kv_create_table(db, "t", &ok, 1), KV_OK);
  assert_int_equal(kv_create_table(db, "u", &ok, 1), KV_OK);
  uint32_t ids[2];
  assert_int_equal(kv_family_id(db, "t", "a", &ids[0]), KV_OK);
  assert_int_equal(kv_family_id(db, "u", "a", &ids[1]), KV_OK);
  kv_scan *s;
  kv_scan_options so = {0};
  EXPECT_ERR(kv_scan_open(db, &so, &s), KV_ERR_INVALID, "no family");
  so.family_ids = ids;
  so.n_families = 2;
  EXPECT_ERR(kv_scan_open(db, &so, &s), KV_ERR_INVALID, "different tables");
  uint32_t twice[2] = {ids[0], ids[0]};
  so.family_ids = twice;
  EXPECT_ERR(kv_scan_open(db, &so, &s), KV_ERR_INVALID, "listed twice");
  so.n_families = KV_SCAN_MAX_FAMILIES + 1;
  EXPECT_ERR(kv_scan_open(db, &so, &s), KV_ERR_INVALID, "over the maximum");
  so.family_ids = ids;
  so.n_families = 1;
  kv_range unsorted[2] = {{(const uint8_t *)"m", 1, true, (const uint8_t *)"p", 1, false},
                          {(const uint8_t *)"a", 1, true, (const uint8_t *)"c", 1, false}};
  so.ranges = unsorted;
  so.n_ranges = 2;
  EXPECT_ERR(kv_scan_open(db, &so, &s), KV_ERR_INVALID, "unsorted or overlap");
  kv_range overlap[2] = {{(const uint8_t *)"a", 1, true, (const uint8_t *)"m", 1, true},
                         {(const uint8_t *)"m", 1, true, (const uint8_t *)"z", 1, false}};
  so.ranges = overlap;
  EXPECT_ERR(kv_scan_open(db, &so, &s), KV_ERR_INVALID, "unsorted or overlap");
  kv_range open_end[2] = {{(const uint8_t *)"a", 1, true, NULL, 0, false},
                          {(const uint8_t *)"m", 1, true, NULL, 0, false}};
  so.ranges = open_end;
  EXPECT_ERR(kv_scan_open(db, &so, &s), KV_ERR_INVALID, "unsorted or overlap");
  /* touching but not overlapping is fine */
  overlap[0].end_inclusive = false;
  so.ranges = overlap;
  assert_int_equal(kv_scan_open(db, &so, &s), KV_OK);
  kv_scan_close(s);
  so.ranges = NULL;
  so.n_ranges = 0;
  so.snapshot = kv_last_sequence(db) + 10;
  EXPECT_ERR(kv_scan_open(db, &so, &s), KV_ERR_INVALID, "ahead of the last committed");
  so.snapshot = 0;
  kv_row r;
  EXPECT_ERR(kv_get(db, &so, "", 0, &s, &r), KV_ERR_INVALID, "empty row key");
  assert_int_equal(kv_close(db), KV_OK);
  kv_env_free(env);
}

static void test_null_handles_and_misuse(void **state) {
  EXPECT_ERR(kv_open(NULL, NULL, NULL), KV_MISUSE, "NULL");
  kv_db *db;
  EXPECT_ERR(kv_open("", NULL, &db), KV_ERR_INVALID, "empty path");
  assert_int_equal(kv_close(NULL), KV_OK);
  kv_batch *b = kv_batch_new();
  EXPECT_ERR(kv_commit(NULL, b, NULL), KV_MISUSE, "NULL");
  kv_batch_free(b);
  kv_scan *s;
  EXPECT_ERR(kv_scan_open(NULL, NULL, &s), KV_MISUSE, "NULL");
  kv_row r;
  EXPECT_ERR(kv_scan_next(NULL, &r), KV_MISUSE, "NULL");
  kv_scan_close(NULL);
  EXPECT_ERR(kv_create_table(NULL, "t", NULL, 0), KV_MISUSE, "NULL");
  EXPECT_ERR(kv_flush(NULL, NULL), KV_MISUSE, "NULL");
  assert_int_equal(kv_table_count(NULL), 0);
  assert_null(kv_table_name(NULL, 0));
  kv_options o;
  kv_options_init(&o);
  o.sync_mode = 9;
  EXPECT_ERR(kv_open("/x", &o, &db), KV_ERR_INVALID, "sync_mode");
}

static void test_second_open_and_closed_scan(void **state) {
  kv_env *env = kv_env_mem_new(1);
  kv_db *db = open_db(env);
  kv_options o;
  kv_options_init(&o);
  o.env = env;
  kv_db *db2;
  EXPECT_ERR(kv_open("/db", &o, &db2), KV_ERR_LOCKED, "database is locked");
  kv_family_options ok = {.name = "a"};
  assert_int_equal(kv_create_table(db, "t", &ok, 1), KV_OK);
  uint32_t fid;
  assert_int_equal(kv_family_id(db, "t", "a", &fid), KV_OK);
  kv_scan_options so = {0};
  so.family_ids = &fid;
  so.n_families = 1;
  kv_scan *s;
  assert_int_equal(kv_scan_open(db, &so, &s), KV_OK);
  assert_int_equal(kv_close(db), KV_OK);
  kv_row r;
  EXPECT_ERR(kv_scan_next(s, &r), KV_MISUSE, "closed");
  kv_scan_metrics m;
  kv_scan_get_metrics(s, &m); /* still allowed */
  kv_scan_close(s);
  /* read-only: the directory must exist and writes are refused */
  o.read_only = true;
  EXPECT_ERR(kv_open("/nodb", &o, &db2), KV_ERR_NOTFOUND, "/nodb");
  assert_int_equal(kv_open("/db", &o, &db2), KV_OK);
  kv_batch *b = kv_batch_new();
  kv_batch_put(b, fid, "r", 1, "q", 1, 1, "v", 1);
  EXPECT_ERR(kv_commit(db2, b, NULL), KV_ERR_READONLY, "read-only");
  kv_batch_free(b);
  assert_int_equal(kv_close(db2), KV_OK);
  kv_env_free(env);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_table_definitions),
    cmocka_unit_test(test_unknown_names),
    cmocka_unit_test(test_scan_options),
    cmocka_unit_test(test_null_handles_and_misuse),
    cmocka_unit_test(test_second_open_and_closed_scan),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
