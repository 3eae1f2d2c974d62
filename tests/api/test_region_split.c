/*
** tests/api/test_region_split.c: rowan_options.region_split_size, the automatic split of a
** table's regions by size (HBase's hbase.hregion.max.filesize; docs/KV_REGIONS.md) through the
** public API. With 0 (the default) a table stays one region however much it holds; with a
** small size, loads and flushes split it into several regions, the rows (checked against
** their known count and sum, and a keyed range) read the same before and after a reopen, and
** the regions persist; a parallel scan (ORDER BY ... LIMIT: top N per chunk) cuts its chunks
** at them at least (the chunk count in EXPLAIN) and answers right; after the reopen (no
** more splits) rowan_table_layout lists the regions, their start keys ascending values of K.
** Not here: the split itself at the kv level (tests/kv/test_regions.c).
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "api/api_test.h"
#include "kv/env/env_mem.h"
#include "rowan.h"
#include "tu_api.h"

enum { ROWS = 20000, BATCH = 1000 };

static rowan_db *open_with(kv_env *env, uint64_t split_size) {
  rowan_options o;
  rowan_options_init(&o);
  o.kv_env = env;
  o.sync_mode = ROWAN_SYNC_OFF;
  o.region_split_size = split_size;
  rowan_db *db = NULL;
  assert_int_equal(rowan_open("/db", &o, &db), ROWAN_OK);
  return db;
}

/* The most regions any kv table of the store has (the user table's; the catalog's is one). */
static uint32_t max_regions(rowan_db *db) {
  kv_db *kv = api_test_kv(db);
  uint32_t most = 0;
  for (int i = 0; i < kv_table_count(kv); i++) {
    uint32_t n = 0;
    assert_int_equal(kv_table_regions(kv, kv_table_name(kv, i), &n, NULL, NULL), KV_OK);
    if (n > most) most = n;
  }
  return most;
}

/* ROWS rows K = 0..ROWS-1, V = K % 97, a padding column so the files grow, flushed in batches. */
static void load(rowan_db *db) {
  exec_ok(db, "CREATE TABLE T (K INTEGER NOT NULL PRIMARY KEY, V INTEGER, PAD VARCHAR)");
  char sql[128];
  for (int b = 0; b < ROWS / BATCH; b++) {
    exec_ok(db, "BEGIN");
    for (int k = b * BATCH; k < (b + 1) * BATCH; k++) {
      snprintf(sql, sizeof sql,
               "UPSERT INTO T VALUES (%d, %d, 'padding padding padding padding %d')", k, k % 97, k);
      exec_ok(db, sql);
    }
    exec_ok(db, "COMMIT");
    assert_int_equal(rowan_flush(db), ROWAN_OK);
  }
}

static void check_rows(rowan_db *db) {
  int64_t sum = 0;
  for (int k = 0; k < ROWS; k++) sum += k % 97;
  assert_int_equal(tu_one_int(db, "SELECT COUNT(*) FROM T"), ROWS);
  assert_int_equal(tu_one_int(db, "SELECT SUM(V) FROM T"), sum);
  assert_int_equal(tu_one_int(db, "SELECT COUNT(*) FROM T WHERE K >= 5000 AND K < 15000"), 10000);
  assert_int_equal(tu_one_int(db, "SELECT V FROM T WHERE K = 12345"), 12345 % 97);
}

static void test_default_never_splits(void **state) {
  (void)state;
  kv_env *env = kv_env_mem_new(11);
  rowan_db *db = open_with(env, 0);
  load(db);
  assert_int_equal(max_regions(db), 1);
  check_rows(db);
  assert_int_equal(rowan_close(db), ROWAN_OK);
  kv_env_free(env);
}

/* rowan_table_layout of T: n regions, "[*]" then "[k]" with k ascending in 1..ROWS-1 (not
** checked: that each file lies in one region, since a file crosses a new boundary until the
** compaction the split asks for has run). */
static void check_layout(rowan_db *db, uint32_t n) {
  rowan_layout *l = NULL;
  assert_int_equal(rowan_table_layout(db, "T", &l), ROWAN_OK);
  assert_int_equal(l->n_regions, n);
  assert_string_equal(l->regions[0].start_key_text, "[*]");
  long prev = 0;
  for (int i = 1; i < l->n_regions; i++) {
    long k = -1;
    char close = 0;
    if (sscanf(l->regions[i].start_key_text, "[%ld%c", &k, &close) != 2 || close != ']' ||
        k <= prev || k >= ROWS)
      fail_msg("region %d starts at %s (the one before at %ld)", i,
               l->regions[i].start_key_text, prev);
    prev = k;
  }
  rowan_layout_free(l);
}

static void test_small_size_splits(void **state) {
  (void)state;
  kv_env *env = kv_env_mem_new(12);
  rowan_db *db = open_with(env, 64 << 10);
  load(db);
  assert_int_equal(rowan_compact(db, 1), ROWAN_OK);
  uint32_t n = max_regions(db);
  assert_true(n >= 3); /* ~1 MB of rows past 64 KiB regions */
  check_rows(db);
  /* a parallel scan is cut at the regions at least */
  assert_int_equal(rowan_set_scan_threads(db, 4, 0), ROWAN_OK);
  rowan_stmt *st;
  assert_int_equal(rowan_prepare(db, "EXPLAIN SELECT K, V FROM T WHERE V > 3 ORDER BY V, K LIMIT 5", -1, &st, NULL),
                   ROWAN_OK);
  assert_int_equal(rowan_step(st), ROWAN_ROW);
  const char *plan = (const char *)rowan_column_text(st, 0);
  int chunks = 0;
  assert_non_null(plan);
  if (sscanf(plan, "CLIENT %d-CHUNK PARALLEL", &chunks) != 1 || (uint32_t)chunks < n)
    fail_msg("%u regions, plan:\n%s", n, plan);
  rowan_finalize(st);
  check_rows(db); /* and the chunked answers are right */
  assert_int_equal(tu_one_int(db, "SELECT K FROM T WHERE V > 3 ORDER BY V, K LIMIT 1"), 4);
  assert_int_equal(rowan_close(db), ROWAN_OK);
  /* reopened (without the setting): the regions stay, the rows read the same */
  db = open_with(env, 0);
  assert_int_equal(max_regions(db), n);
  check_layout(db, n);
  check_rows(db);
  assert_int_equal(rowan_close(db), ROWAN_OK);
  kv_env_free(env);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_default_never_splits),
      cmocka_unit_test(test_small_size_splits),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
