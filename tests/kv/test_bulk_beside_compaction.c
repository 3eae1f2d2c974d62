/*
** tests/kv/test_bulk_beside_compaction.c: a bulk load's commit while an automatic compaction
** is merging (kv/db/compact.c, kv/bulk/bulk_write.c, docs/KV_BULK.md "Beside a compaction").
** The compaction is held in its merging phase (tests/tu_merge_hold.h) until the load's
** commit has returned (or 30 s have passed: then the commit waited for the compaction, as
** it did before, and the test fails instead of hanging). Then: every row of the compacted
** files and of the load reads back, the load's newer value of a row the compaction's
** inputs hold wins, the family lists the compaction's output and the load's file (the
** load's not dropped when the output replaced the inputs), and so again after a reopen
** and after a later major compaction; two loads are committed one after the other while
** the same merge is held.
** Uses kv/kv.h, kv/bulk/bulk.h and kv/env/env_mem.h only.
*/
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "kv/bulk/bulk.h"
#include "kv/env/env_mem.h"
#include "kv/kv.h"
#include "testutil.h"
#include "tu_merge_hold.h"

#define T0 1700000000000LL

static kv_db *open_db(kv_env *env) {
  kv_options o;
  kv_options_init(&o);
  o.env = env;
  o.create_if_missing = true;
  o.compaction_trigger = 2;
  kv_db *db = NULL;
  assert_int_equal(kv_open("/db", &o, &db), KV_OK);
  return db;
}

static void put_rows(kv_db *db, uint32_t fid, const char *prefix, int from, int to) {
  kv_batch *b = kv_batch_new();
  for (int i = from; i < to; i++) {
    char k[16], v[24];
    snprintf(k, sizeof k, "%s%03d", prefix, i);
    snprintf(v, sizeof v, "old-%s", k);
    assert_int_equal(kv_batch_put(b, fid, k, strlen(k), "q", 1, T0, v, strlen(v)), KV_OK);
  }
  assert_int_equal(kv_commit(db, b, NULL), KV_OK);
  kv_batch_free(b);
}

/* One bulk load of rows prefix[from, to) with value "new-<key>"; KV_OK expected. */
static void bulk_rows(kv_db *db, uint32_t fid, const char *prefix, int from, int to) {
  kv_bulk *b = NULL;
  assert_int_equal(kv_bulk_begin(db, NULL, &b), KV_OK);
  for (int i = from; i < to; i++) {
    char k[16], v[24];
    snprintf(k, sizeof k, "%s%03d", prefix, i);
    snprintf(v, sizeof v, "new-%s", k);
    assert_int_equal(kv_bulk_put(b, fid, k, strlen(k), "q", 1, T0 + 1, v, strlen(v)), KV_OK);
  }
  assert_int_equal(kv_bulk_commit(b, NULL), KV_OK);
  kv_bulk_free(b);
}

/* Every row of the family: r000-r199 with "old-" values but r050-r069 "new-" (the load),
** then b000-b029 "new-" (the load), and, when second, c000-c009 "new-" too. */
static void check_rows(kv_db *db, uint32_t fid, bool second) {
  kv_scan_options so = {0};
  so.family_ids = &fid;
  so.n_families = 1;
  kv_scan *s = NULL;
  assert_int_equal(kv_scan_open(db, &so, &s), KV_OK);
  kv_row r;
  int n = 0, rc;
  while ((rc = kv_scan_next(s, &r)) == KV_OK) {
    char k[16], v[32];
    snprintf(k, sizeof k, "%.*s", (int)r.key_len, (const char *)r.key);
    assert_int_equal(r.n_cells, 1);
    snprintf(v, sizeof v, "%.*s", (int)r.cells[0].value_len, (const char *)r.cells[0].value);
    int i = atoi(k + 1);
    bool fresh = k[0] != 'r' || (i >= 50 && i < 70);
    char expect[32];
    snprintf(expect, sizeof expect, "%s-%s", fresh ? "new" : "old", k);
    assert_string_equal(v, expect);
    n++;
  }
  assert_int_equal(rc, KV_ERR_NOTFOUND);
  kv_scan_close(s);
  assert_int_equal(n, 200 + 30 + (second ? 10 : 0));
}

static kv_family_stats stats(kv_db *db, uint32_t fid) {
  kv_family_stats st;
  assert_int_equal(kv_family_get_stats(db, fid, &st), KV_OK);
  return st;
}

/* Wait (up to 30 s) until the family has done `n` compactions. */
static void wait_compactions(kv_db *db, uint32_t fid, uint64_t n) {
  for (int i = 0; i < 3000 && stats(db, fid).compactions < n; i++) usleep(10000);
  assert_true(stats(db, fid).compactions >= n);
}

/* kv_flush in a thread of its own: it returns once the automatic compaction it starts is
** done, so the test goes on beside it. */
static void *flush_thread(void *arg) {
  return (void *)(intptr_t)kv_flush((kv_db *)arg, NULL);
}

static void test_commit_beside_merge(void **state) {
  (void)state;
  kv_env *env = kv_env_mem_new(T0);
  kv_db *db = open_db(env);
  kv_family_options fo = {.name = "f"};
  assert_int_equal(kv_create_table(db, "t", &fo, 1), KV_OK);
  uint32_t fid;
  assert_int_equal(kv_family_id(db, "t", "f", &fid), KV_OK);
  hold_start();
  put_rows(db, fid, "r", 0, 100);
  assert_int_equal(kv_flush(db, NULL), KV_OK);
  put_rows(db, fid, "r", 100, 200);
  pthread_t ft; /* a second file: the automatic compaction */
  assert_int_equal(pthread_create(&ft, NULL, flush_thread, db), 0);
  wait_merging();
  /* beside the held merge: a load over rows its inputs hold and new ones, then another */
  bulk_rows(db, fid, "r", 50, 70);
  bulk_rows(db, fid, "b", 0, 30);
  assert_true(hold_release()); /* both commits returned while the merge was held */
  void *frc = NULL;
  assert_int_equal(pthread_join(ft, &frc), 0);
  assert_int_equal((int)(intptr_t)frc, KV_OK);
  wait_compactions(db, fid, 1);
  hold_end();
  /* the merge's output where its two inputs were, and the loads' two files after it (the
     automatic compaction may merge those next: wait for what it does, then count) */
  check_rows(db, fid, false);
  kv_family_stats st = stats(db, fid);
  assert_true(st.store_files >= 1 && st.store_files <= 3);
  assert_int_equal(st.cells, 200 + 20 + 30); /* minor compactions keep every cell */
  assert_int_equal(kv_close(db), KV_OK);
  db = open_db(env);
  check_rows(db, fid, false);
  bulk_rows(db, fid, "c", 0, 10);
  check_rows(db, fid, true);
  assert_int_equal(kv_compact(db, "t", true), KV_OK);
  check_rows(db, fid, true);
  assert_int_equal(stats(db, fid).store_files, 1);
  assert_int_equal(kv_close(db), KV_OK);
  db = open_db(env);
  check_rows(db, fid, true);
  assert_int_equal(kv_close(db), KV_OK);
  kv_env_free(env);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_commit_beside_merge),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
