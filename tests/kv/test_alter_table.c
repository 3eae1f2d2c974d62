/*
** tests/kv/test_alter_table.c: kv_alter_table and the MANIFEST's ALTER_TABLE edit, and
** kv_family_set_dropped_qualifiers. New VERSIONS apply to reads at once; an added family
** takes writes, and its data and the new options survive a reopen (WAL replay and store
** files) and a MANIFEST rewrite (snapshot); a reader beside the writer sees the change after
** kv_refresh; bad calls change nothing; the record's bytes are those of docs/FORMAT.md's
** worked example. A major compaction drops the cells of the dropped qualifiers, a minor one
** keeps them.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kv/env/env_mem.h"
#include "kv/kv.h"
#include "kv/db/manifest.h"

static kv_db *open_db(kv_env *env, bool read_only) {
  kv_options o;
  kv_options_init(&o);
  o.env = env;
  o.create_if_missing = !read_only;
  o.read_only = read_only;
  o.keep_log_on_close = true; /* unflushed writes are replayed from the WAL at the next open */
  kv_db *db = NULL;
  if (kv_open("/db", &o, &db)) fail_msg("kv_open: %s", kv_errmsg());
  return db;
}

static uint32_t fam(kv_db *db, const char *name) {
  uint32_t id = 0;
  assert_int_equal(kv_family_id(db, "T", name, &id), KV_OK);
  return id;
}

static void put(kv_db *db, const char *family, const char *row, const char *q, int64_t ts,
                const char *v) {
  kv_batch *b = kv_batch_new();
  assert_int_equal(kv_batch_put(b, fam(db, family), row, strlen(row), q, strlen(q), ts, v,
                                strlen(v)), KV_OK);
  assert_int_equal(kv_commit(db, b, NULL), KV_OK);
  kv_batch_free(b);
}

/* Cells of family `family` (every version up to 10), qualifier q when not NULL. */
static int cells(kv_db *db, const char *family, const char *q) {
  uint32_t id = fam(db, family);
  kv_scan_options so;
  memset(&so, 0, sizeof so);
  so.family_ids = &id;
  so.n_families = 1;
  so.max_versions = 10;
  kv_scan *s = NULL;
  assert_int_equal(kv_scan_open(db, &so, &s), KV_OK);
  kv_row row;
  int n = 0, rc;
  while ((rc = kv_scan_next(s, &row)) == KV_OK)
    for (uint32_t i = 0; i < row.n_cells; i++)
      if (!q || (row.cells[i].qual_len == strlen(q) && !memcmp(row.cells[i].qual, q, strlen(q))))
        n++;
  assert_int_equal(rc, KV_ERR_NOTFOUND);
  kv_scan_close(s);
  return n;
}

static void check_family(kv_db *db, const char *name, int versions, int64_t ttl, int comp,
                         uint32_t block) {
  kv_family_options o;
  assert_int_equal(kv_family_info(db, fam(db, name), &o), KV_OK);
  assert_int_equal(o.max_versions, versions);
  assert_true(o.ttl_sec == ttl);
  assert_int_equal(o.compression, comp);
  assert_int_equal(o.block_size, block);
}

static kv_db *make_table(kv_env *env) {
  kv_db *db = open_db(env, false);
  kv_family_options fo[2] = {{"a", 1, 0, KV_COMPRESSION_LZ4, 0}, {"b", 2, 0, KV_COMPRESSION_LZ4, 0}};
  assert_int_equal(kv_create_table(db, "T", fo, 2), KV_OK);
  for (int64_t ts = 1; ts <= 3; ts++) put(db, "a", "r1", "q", ts, "v");
  return db;
}

static void test_options_new_family_reopen(void **state) {
  (void)state;
  kv_env *env = kv_env_mem_new(0);
  kv_db *db = make_table(env);
  assert_int_equal(cells(db, "a", NULL), 1); /* VERSIONS 1 */
  uint32_t a_id = fam(db, "a");
  kv_family_options fo[2] = {{"a", 3, 0, KV_COMPRESSION_NONE, 4096}, {"c", 0, 0, KV_COMPRESSION_LZ4, 0}};
  assert_int_equal(kv_alter_table(db, "T", fo, 2), KV_OK);
  assert_int_equal(fam(db, "a"), a_id); /* the same family, not a new one */
  assert_int_equal(cells(db, "a", NULL), 3); /* the older versions show at once */
  check_family(db, "a", 3, 0, KV_COMPRESSION_NONE, 4096);
  check_family(db, "b", 2, 0, KV_COMPRESSION_LZ4, KV_DEFAULT_BLOCK_SIZE); /* not named */
  check_family(db, "c", 1, 0, KV_COMPRESSION_LZ4, KV_DEFAULT_BLOCK_SIZE);
  uint32_t ids[8], n = 0;
  assert_int_equal(kv_table_families(db, "T", ids, 8, &n), KV_OK);
  assert_int_equal(n, 3);
  put(db, "c", "r1", "x", KV_TS_NOW, "new");
  assert_int_equal(kv_flush(db, "T"), KV_OK);
  put(db, "c", "r2", "x", KV_TS_NOW, "unflushed"); /* replayed from the WAL at reopen */
  kv_close(db);
  db = open_db(env, false);
  check_family(db, "a", 3, 0, KV_COMPRESSION_NONE, 4096);
  check_family(db, "c", 1, 0, KV_COMPRESSION_LZ4, KV_DEFAULT_BLOCK_SIZE);
  assert_int_equal(cells(db, "c", "x"), 2);
  assert_int_equal(cells(db, "a", NULL), 3);
  /* A lower VERSIONS hides them again; a major compaction then drops them for good. */
  kv_family_options fo1 = {"a", 1, 0, KV_COMPRESSION_LZ4, 0};
  assert_int_equal(kv_alter_table(db, "T", &fo1, 1), KV_OK);
  assert_int_equal(cells(db, "a", NULL), 1);
  assert_int_equal(kv_compact(db, "T", true), KV_OK);
  assert_int_equal(kv_alter_table(db, "T", fo, 1), KV_OK); /* VERSIONS 3 again */
  assert_int_equal(cells(db, "a", NULL), 1);
  kv_close(db);
  kv_env_free(env);
}

static void test_bad_calls_change_nothing(void **state) {
  (void)state;
  kv_env *env = kv_env_mem_new(0);
  kv_db *db = make_table(env);
  kv_family_options bad[2] = {{"a", -1, 0, 0, 0}, {"z", 1, 0, 0, 0}};
  assert_int_equal(kv_alter_table(db, "T", bad, 2), KV_ERR_INVALID);
  kv_family_options dup[2] = {{"z", 1, 0, 0, 0}, {"z", 1, 0, 0, 0}};
  assert_int_equal(kv_alter_table(db, "T", dup, 2), KV_ERR_INVALID);
  kv_family_options comp = {"a", 1, 0, 7, 0};
  assert_int_equal(kv_alter_table(db, "T", &comp, 1), KV_ERR_INVALID);
  kv_family_options ok = {"z", 1, 0, 0, 0};
  assert_int_equal(kv_alter_table(db, "NOPE", &ok, 1), KV_ERR_NOTFOUND);
  assert_int_equal(kv_alter_table(db, "T", &ok, 0), KV_ERR_INVALID);
  assert_int_equal(kv_alter_table(NULL, "T", &ok, 1), KV_MISUSE);
  /* 64 families in all at most: T has 2, 62 more fit, 63 do not */
  kv_family_options many[63];
  char names[63][8];
  for (int i = 0; i < 63; i++) {
    snprintf(names[i], sizeof names[i], "n%d", i);
    many[i] = (kv_family_options){names[i], 1, 0, 0, 0};
  }
  assert_int_equal(kv_alter_table(db, "T", many, 63), KV_ERR_INVALID);
  uint32_t n = 0;
  assert_int_equal(kv_table_families(db, "T", NULL, 0, &n), KV_OK);
  assert_int_equal(n, 2);
  check_family(db, "a", 1, 0, KV_COMPRESSION_LZ4, KV_DEFAULT_BLOCK_SIZE);
  assert_int_equal(kv_alter_table(db, "T", many, 62), KV_OK);
  assert_int_equal(kv_table_families(db, "T", NULL, 0, &n), KV_OK);
  assert_int_equal(n, 64);
  kv_close(db);
  /* read-only: refused */
  db = open_db(env, true);
  assert_int_equal(kv_alter_table(db, "T", &ok, 1), KV_ERR_READONLY);
  kv_close(db);
  kv_env_free(env);
}

static void test_reader_sees_it_after_refresh(void **state) {
  (void)state;
  kv_env *env = kv_env_mem_new(0);
  kv_db *w = make_table(env);
  kv_db *r = open_db(env, true);
  kv_family_options fo[2] = {{"a", 5, 0, 0, 0}, {"c", 1, 0, 0, 0}};
  assert_int_equal(kv_alter_table(w, "T", fo, 2), KV_OK);
  put(w, "c", "r9", "x", KV_TS_NOW, "v");
  uint32_t id;
  assert_int_equal(kv_family_id(r, "T", "c", &id), KV_ERR_NOTFOUND);
  assert_int_equal(cells(r, "a", NULL), 1);
  assert_int_equal(kv_refresh(r), KV_OK);
  check_family(r, "a", 5, 0, KV_COMPRESSION_LZ4, KV_DEFAULT_BLOCK_SIZE);
  assert_int_equal(cells(r, "a", NULL), 3);
  assert_int_equal(cells(r, "c", "x"), 1);
  kv_close(r);
  kv_close(w);
  kv_env_free(env);
}

/* The MANIFEST record of docs/FORMAT.md's example, and its replay through a rewrite. */
static void test_record_bytes_and_snapshot(void **state) {
  (void)state;
  kv_env *env = kv_env_mem_new(1000);
  assert_int_equal(env->mkdir(env, "/m"), KV_OK);
  kv_manifest *m = NULL;
  kv_version v;
  assert_int_equal(kv_manifest_open(env, "/m", true, &m, &v), KV_OK);
  kv_family_meta f[3];
  memset(f, 0, sizeof f);
  const char *names[3] = {"_k", "0", "M"};
  for (int i = 0; i < 3; i++) {
    f[i].id = i == 2 ? 9 : 5 + (uint32_t)i;
    snprintf(f[i].name, sizeof f[i].name, "%s", names[i]);
    f[i].max_versions = 1;
    f[i].block_size = 16384;
  }
  kv_table_meta t = {.id = 3, .name = "$t1.T", .families = f, .n_families = 2};
  kv_edit c = {.kind = KV_EDIT_CREATE_TABLE, .table = &t};
  assert_int_equal(kv_manifest_apply(m, &v, &c, 1), KV_OK);
  uint64_t before = kv_manifest_size(m);
  f[1].max_versions = 3;
  f[2].flushed_seq = 20;
  t.n_families = 3;
  kv_edit e[2] = {{.kind = KV_EDIT_ALTER_TABLE, .table = &t, .table_id = 3},
                  {.kind = KV_EDIT_SET_COUNTERS, .next_family_id = 10}};
  assert_int_equal(kv_manifest_apply(m, &v, e, 2), KV_OK);
  static const uint8_t want[] = {
      0x02, 0x09, 0x03, 0x05, 0x24, 0x74, 0x31, 0x2E, 0x54, 0x03,
      0x05, 0x02, 0x5F, 0x6B, 0x02, 0x00, 0x00, 0x80, 0x80, 0x01, 0x00, 0x00,
      0x06, 0x01, 0x30, 0x06, 0x00, 0x00, 0x80, 0x80, 0x01, 0x00, 0x00,
      0x09, 0x01, 0x4D, 0x02, 0x00, 0x00, 0x80, 0x80, 0x01, 0x14, 0x00, 0x06};
  int64_t size = kv_env_mem_file_size(env, "/m/MANIFEST");
  assert_true(size > (int64_t)before + 16 + (int64_t)sizeof want);
  for (size_t i = 0; i < sizeof want; i++) { /* the payload after the 16-byte record header */
    uint8_t byte = 0;
    assert_int_equal(kv_env_mem_get_byte(env, "/m/MANIFEST", before + 16 + i, &byte), KV_OK);
    if (byte != want[i]) fail_msg("byte %zu of the payload: %02x, want %02x", i, byte, want[i]);
  }
  assert_int_equal(v.tables[0].n_families, 3);
  assert_int_equal(v.tables[0].families[1].max_versions, 3);
  assert_int_equal(v.next_family_id, 10);
  /* a family id in use, or a family listed out of place, does not apply */
  kv_family_meta g[3];
  memcpy(g, f, sizeof g);
  g[2].id = 5;
  kv_table_meta tg = {.id = 3, .name = "$t1.T", .families = g, .n_families = 3};
  kv_edit eg = {.kind = KV_EDIT_ALTER_TABLE, .table = &tg, .table_id = 3};
  assert_int_not_equal(kv_manifest_apply(m, &v, &eg, 1), KV_OK);
  g[2].id = 11;
  snprintf(g[0].name, sizeof g[0].name, "zz");
  assert_int_equal(kv_manifest_apply(m, &v, &eg, 1), KV_ERR_INVALID);
  /* a rewrite keeps it (the snapshot holds the altered table) */
  kv_manifest_set_rewrite_limit(m, 1);
  kv_edit cnt = {.kind = KV_EDIT_SET_COUNTERS, .next_file_number = 50};
  assert_int_equal(kv_manifest_apply(m, &v, &cnt, 1), KV_OK);
  kv_manifest_close(m);
  kv_version_free(&v);
  assert_int_equal(kv_manifest_open(env, "/m", false, &m, &v), KV_OK);
  assert_int_equal(v.tables[0].n_families, 3);
  assert_string_equal(v.tables[0].families[2].name, "M");
  assert_int_equal(v.tables[0].families[1].max_versions, 3);
  kv_manifest_close(m);
  kv_version_free(&v);
  kv_env_free(env);
}

static void test_dropped_qualifiers(void **state) {
  (void)state;
  kv_env *env = kv_env_mem_new(0);
  kv_db *db = make_table(env);
  put(db, "b", "r1", "q1", KV_TS_NOW, "x");
  put(db, "b", "r2", "q1", KV_TS_NOW, "x");
  put(db, "b", "r2", "q2", KV_TS_NOW, "y");
  assert_int_equal(kv_flush(db, "T"), KV_OK);
  put(db, "b", "r3", "q1", KV_TS_NOW, "x"); /* in the memstore: a major compaction flushes */
  const uint8_t *q[1] = {(const uint8_t *)"q1"};
  uint32_t len[1] = {2};
  assert_int_equal(kv_family_set_dropped_qualifiers(db, fam(db, "b"), q, len, 1), KV_OK);
  assert_int_equal(kv_family_set_dropped_qualifiers(db, 9999, q, len, 1), KV_ERR_NOTFOUND);
  assert_int_equal(cells(db, "b", "q1"), 3); /* reads are not affected */
  assert_int_equal(kv_flush(db, "T"), KV_OK);
  assert_int_equal(kv_compact(db, "T", false), KV_OK);
  assert_int_equal(cells(db, "b", "q1"), 3); /* minor: everything kept */
  assert_int_equal(kv_compact(db, "T", true), KV_OK);
  assert_int_equal(cells(db, "b", "q1"), 0);
  assert_int_equal(cells(db, "b", "q2"), 1);
  assert_int_equal(cells(db, "a", "q"), 1);
  /* cleared: a later cell of that qualifier stays */
  assert_int_equal(kv_family_set_dropped_qualifiers(db, fam(db, "b"), NULL, NULL, 0), KV_OK);
  put(db, "b", "r4", "q1", KV_TS_NOW, "x");
  assert_int_equal(kv_compact(db, "T", true), KV_OK);
  assert_int_equal(cells(db, "b", "q1"), 1);
  kv_close(db);
  kv_env_free(env);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_options_new_family_reopen),
      cmocka_unit_test(test_bad_calls_change_nothing),
      cmocka_unit_test(test_reader_sees_it_after_refresh),
      cmocka_unit_test(test_record_bytes_and_snapshot),
      cmocka_unit_test(test_dropped_qualifiers),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
