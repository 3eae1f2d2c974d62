/*
** tests/kv/test_bulk_beside_merge_cases.c: a bulk load's commit beside a compaction held in
** its merging phase (kv/db/compact.c set_merging, kv/bulk/bulk_write.c install,
** docs/KV_BULK.md "Beside a compaction"): two loads committed while the automatic compaction
** of four files is held (one over rows its inputs hold), the commits returning before it
** is released (else the hook gives up after 30 s and the test fails instead of hanging); a
** table split into regions (the load's file cut at the boundary; the compaction's output
** one file per region), a major compaction asked for by kv_compact (a tombstone it drops and
** a row the load writes again over it), DDL beside the held merge, kv_close while the merge
** is held, and a crash (power cut) while it is held. Each checks every row against a model
** (the newest value of each key), and that a reopen lists the same store files, in the same
** order among files of one region, as the running store did. Belongs under TSan too.
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
#define MAXROWS 1024
#define MAXFILES 64

/* ---- the model: each key's newest value ("" = deleted) ---------------------------------- */

typedef struct model {
  char key[MAXROWS][16];
  char val[MAXROWS][24];
  int n;
} model;

static model M;

static void model_set(const char *k, const char *v) {
  for (int i = 0; i < M.n; i++)
    if (strcmp(M.key[i], k) == 0) {
      snprintf(M.val[i], sizeof M.val[i], "%s", v);
      return;
    }
  assert_true(M.n < MAXROWS);
  snprintf(M.key[M.n], sizeof M.key[M.n], "%s", k);
  snprintf(M.val[M.n], sizeof M.val[M.n], "%s", v);
  M.n++;
}

static int cmp_key(const void *a, const void *b) { return strcmp(a, b); }

/* Every live row of the family, in key order, as the model has it. */
static void check_rows(kv_db *db, uint32_t fid) {
  char want[MAXROWS][16 + 24 + 1];
  int n_want = 0;
  for (int i = 0; i < M.n; i++)
    if (M.val[i][0]) snprintf(want[n_want++], sizeof want[0], "%s=%s", M.key[i], M.val[i]);
  qsort(want, (size_t)n_want, sizeof want[0], cmp_key);
  kv_scan_options so = {0};
  so.family_ids = &fid;
  so.n_families = 1;
  kv_scan *s = NULL;
  assert_int_equal(kv_scan_open(db, &so, &s), KV_OK);
  kv_row r;
  int n = 0, rc;
  while ((rc = kv_scan_next(s, &r)) == KV_OK) {
    assert_int_equal(r.n_cells, 1);
    char got[16 + 24 + 1];
    snprintf(got, sizeof got, "%.*s=%.*s", (int)r.key_len, (const char *)r.key,
             (int)r.cells[0].value_len, (const char *)r.cells[0].value);
    assert_true(n < n_want);
    assert_string_equal(got, want[n]);
    n++;
  }
  assert_int_equal(rc, KV_ERR_NOTFOUND);
  kv_scan_close(s);
  assert_int_equal(n, n_want);
}

/* ---- writes ----------------------------------------------------------------------------- */

static void put_rows(kv_db *db, uint32_t fid, const char *prefix, int from, int to) {
  kv_batch *b = kv_batch_new();
  for (int i = from; i < to; i++) {
    char k[16], v[24];
    snprintf(k, sizeof k, "%s%03d", prefix, i);
    snprintf(v, sizeof v, "old-%s", k);
    assert_int_equal(kv_batch_put(b, fid, k, strlen(k), "q", 1, T0, v, strlen(v)), KV_OK);
    model_set(k, v);
  }
  assert_int_equal(kv_commit(db, b, NULL), KV_OK);
  kv_batch_free(b);
}

static void delete_row(kv_db *db, uint32_t fid, const char *k) {
  kv_batch *b = kv_batch_new();
  assert_int_equal(kv_batch_delete(b, fid, KV_DELETE_FAMILY, k, strlen(k), NULL, 0, T0),
                   KV_OK);
  assert_int_equal(kv_commit(db, b, NULL), KV_OK);
  kv_batch_free(b);
  model_set(k, "");
}

/* One bulk load of rows p1[f1, t1) and p2[f2, t2) (p2 NULL: none) with value "new-<key>"
** (timestamp T0 + 1). */
static void bulk_two(kv_db *db, uint32_t fid, const char *p1, int f1, int t1, const char *p2,
                     int f2, int t2) {
  kv_bulk *b = NULL;
  assert_int_equal(kv_bulk_begin(db, NULL, &b), KV_OK);
  for (int part = 0; part < 2; part++) {
    const char *prefix = part ? p2 : p1;
    for (int i = part ? f2 : f1; prefix && i < (part ? t2 : t1); i++) {
      char k[16], v[24];
      snprintf(k, sizeof k, "%s%03d", prefix, i);
      snprintf(v, sizeof v, "new-%s", k);
      assert_int_equal(kv_bulk_put(b, fid, k, strlen(k), "q", 1, T0 + 1, v, strlen(v)),
                       KV_OK);
      model_set(k, v);
    }
  }
  assert_int_equal(kv_bulk_commit(b, NULL), KV_OK);
  kv_bulk_free(b);
}

static void bulk_rows(kv_db *db, uint32_t fid, const char *prefix, int from, int to) {
  bulk_two(db, fid, prefix, from, to, NULL, 0, 0);
}

/* ---- the family's store files in list order ------------------------------------------- */

typedef struct flist {
  uint64_t num[MAXFILES];
  char first[MAXFILES]; /* the first row's first byte: the region in these tests */
  uint32_t n;
} flist;

static int each_block(void *ctx, const kv_file_block *b) {
  flist *l = ctx;
  if (l->n && l->num[l->n - 1] == b->file) return 0;
  if (l->n == MAXFILES) return 1;
  l->num[l->n] = b->file;
  l->first[l->n] = b->first_row_len ? (char)b->first_row[0] : 0;
  l->n++;
  return 0;
}

static flist files_of(kv_db *db, uint32_t fid) {
  flist l;
  memset(&l, 0, sizeof l);
  assert_int_equal(kv_family_blocks(db, fid, each_block, &l), KV_OK);
  return l;
}

/* The same files, and the same order among the files whose first rows sort on the same
** side of `split` (0: one region: the whole order). */
static void same_files(const flist *a, const flist *b, char split) {
  assert_int_equal(a->n, b->n);
  for (int side = 0; side < 2; side++) {
    uint64_t x[MAXFILES], y[MAXFILES];
    uint32_t nx = 0, ny = 0;
    for (uint32_t i = 0; i < a->n; i++)
      if (!split || (a->first[i] >= split) == side) x[nx++] = a->num[i];
    for (uint32_t i = 0; i < b->n; i++)
      if (!split || (b->first[i] >= split) == side) y[ny++] = b->num[i];
    assert_int_equal(nx, ny);
    for (uint32_t i = 0; i < nx; i++) assert_int_equal(x[i], y[i]);
    if (!split) break;
  }
}

/* ---- stores ----------------------------------------------------------------------------- */

static kv_db *open_db(kv_env *env, size_t flush_size) {
  kv_options o;
  kv_options_init(&o);
  o.env = env;
  o.create_if_missing = true;
  o.compaction_trigger = 4; /* four files start it; its output and two loads' do not */
  o.memstore_flush_size = flush_size;
  kv_db *db = NULL;
  assert_int_equal(kv_open("/db", &o, &db), KV_OK);
  return db;
}

static uint32_t make_table(kv_db *db, const char *name, const char *split) {
  kv_family_options fo = {.name = "f"};
  if (split) {
    const uint8_t *keys[1] = {(const uint8_t *)split};
    uint32_t lens[1] = {(uint32_t)strlen(split)};
    assert_int_equal(kv_create_table_split(db, name, &fo, 1, keys, lens, 1), KV_OK);
  } else {
    assert_int_equal(kv_create_table(db, name, &fo, 1), KV_OK);
  }
  uint32_t fid;
  assert_int_equal(kv_family_id(db, name, "f", &fid), KV_OK);
  return fid;
}

static void *flush_thread(void *arg) {
  return (void *)(intptr_t)kv_flush((kv_db *)arg, NULL);
}

static void *major_thread(void *arg) {
  return (void *)(intptr_t)kv_compact((kv_db *)arg, "t", true);
}

static void *close_thread(void *arg) { return (void *)(intptr_t)kv_close((kv_db *)arg); }

static void *ddl_thread(void *arg) {
  kv_family_options fo = {.name = "g"};
  return (void *)(intptr_t)kv_create_table((kv_db *)arg, "t2", &fo, 1);
}

static int join(pthread_t t) {
  void *rc = NULL;
  assert_int_equal(pthread_join(t, &rc), 0);
  return (int)(intptr_t)rc;
}

/* Close, reopen: the same rows, the same files in the same order (per region). */
static kv_db *reopen_same(kv_db *db, kv_env *env, uint32_t fid, char split) {
  check_rows(db, fid);
  assert_int_equal(kv_flush(db, NULL), KV_OK); /* and whatever compaction it starts */
  flist before = files_of(db, fid);
  assert_int_equal(kv_close(db), KV_OK);
  db = open_db(env, 0);
  flist after = files_of(db, fid);
  same_files(&before, &after, split);
  check_rows(db, fid);
  return db;
}

/* ---- the cases ------------------------------------------------------------------------- */

/* Two loads committed while the automatic compaction of four files is held, one over rows
** its inputs hold: both return before the merge goes on; then the output stands where its
** inputs were and the loads' two files after it (three files: below the trigger), every
** cell kept, and so after a reopen and a later major compaction (one file). */
static void test_two_loads(void **state) {
  (void)state;
  memset(&M, 0, sizeof M);
  kv_env *env = kv_env_mem_new(T0);
  kv_db *db = open_db(env, 0);
  uint32_t fid = make_table(db, "t", NULL);
  hold_start();
  for (int k = 0; k < 3; k++) {
    put_rows(db, fid, "r", 50 * k, 50 * k + 50);
    assert_int_equal(kv_flush(db, NULL), KV_OK);
  }
  put_rows(db, fid, "r", 150, 200);
  pthread_t ft; /* the fourth file: the automatic compaction, held */
  assert_int_equal(pthread_create(&ft, NULL, flush_thread, db), 0);
  wait_merging();
  bulk_rows(db, fid, "r", 50, 70);
  bulk_rows(db, fid, "b", 0, 30);
  assert_true(hold_release()); /* both commits returned while the merge was held */
  assert_int_equal(join(ft), KV_OK);
  hold_end();
  check_rows(db, fid);
  kv_family_stats st;
  assert_int_equal(kv_family_get_stats(db, fid, &st), KV_OK);
  assert_int_equal(st.store_files, 3);
  assert_int_equal(st.cells, 200 + 20 + 30); /* a minor compaction keeps every cell */
  db = reopen_same(db, env, fid, 0);
  bulk_rows(db, fid, "c", 0, 10);
  assert_int_equal(kv_compact(db, "t", true), KV_OK);
  check_rows(db, fid);
  assert_int_equal(kv_family_get_stats(db, fid, &st), KV_OK);
  assert_int_equal(st.store_files, 1);
  db = reopen_same(db, env, fid, 0);
  assert_int_equal(kv_close(db), KV_OK);
  kv_env_free(env);
}

/* A table split at "m": the flushes and the compaction write one file per region, the load
** spans both (cut into two files) while the automatic compaction of both regions merges. */
static void test_regions(void **state) {
  (void)state;
  memset(&M, 0, sizeof M);
  kv_env *env = kv_env_mem_new(T0);
  kv_db *db = open_db(env, 0);
  uint32_t fid = make_table(db, "t", "m");
  hold_start();
  for (int k = 0; k < 3; k++) { /* three files in each region, the fourth flushed below */
    put_rows(db, fid, "a", 50 * k, 50 * k + 50);
    put_rows(db, fid, "z", 40 * k, 40 * k + 40);
    assert_int_equal(kv_flush(db, NULL), KV_OK);
  }
  put_rows(db, fid, "a", 150, 200);
  put_rows(db, fid, "z", 120, 150);
  pthread_t ft;
  assert_int_equal(pthread_create(&ft, NULL, flush_thread, db), 0);
  wait_merging();
  /* both regions: cut in two files (one load: a second would make four files in a
     region, and the next compaction would hide the order compared below) */
  bulk_two(db, fid, "a", 50, 70, "z", 90, 120);
  assert_true(hold_release());
  assert_int_equal(join(ft), KV_OK);
  hold_end();
  db = reopen_same(db, env, fid, 'm');
  assert_int_equal(kv_compact(db, "t", true), KV_OK);
  db = reopen_same(db, env, fid, 'm');
  assert_int_equal(kv_close(db), KV_OK);
  kv_env_free(env);
}

/* kv_compact(major): its merge held while a load writes again a row whose tombstone the
** major compaction drops, and new rows; the deleted row not loaded stays deleted. */
static void test_major(void **state) {
  (void)state;
  memset(&M, 0, sizeof M);
  kv_env *env = kv_env_mem_new(T0);
  kv_db *db = open_db(env, 0);
  uint32_t fid = make_table(db, "t", NULL);
  put_rows(db, fid, "r", 0, 100);
  assert_int_equal(kv_flush(db, NULL), KV_OK);
  put_rows(db, fid, "r", 100, 200);
  delete_row(db, fid, "r010");
  delete_row(db, fid, "r011");
  hold_start();
  pthread_t ct;
  assert_int_equal(pthread_create(&ct, NULL, major_thread, db), 0);
  wait_merging();
  bulk_rows(db, fid, "r", 5, 11); /* r010 again, r011 not */
  bulk_rows(db, fid, "s", 0, 20);
  assert_true(hold_release());
  assert_int_equal(join(ct), KV_OK);
  hold_end();
  check_rows(db, fid);
  db = reopen_same(db, env, fid, 0);
  assert_int_equal(kv_close(db), KV_OK);
  kv_env_free(env);
}

/* DDL started after a load committed beside the held merge waits for the merge (it pauses
** the thread) and then runs; nothing is lost, and the new table is there after a reopen. */
static void test_ddl(void **state) {
  (void)state;
  memset(&M, 0, sizeof M);
  kv_env *env = kv_env_mem_new(T0);
  kv_db *db = open_db(env, 0);
  uint32_t fid = make_table(db, "t", NULL);
  hold_start();
  for (int k = 0; k < 3; k++) {
    put_rows(db, fid, "r", 50 * k, 50 * k + 50);
    assert_int_equal(kv_flush(db, NULL), KV_OK);
  }
  put_rows(db, fid, "r", 150, 200);
  pthread_t ft, dt;
  assert_int_equal(pthread_create(&ft, NULL, flush_thread, db), 0);
  wait_merging();
  bulk_rows(db, fid, "r", 150, 180);
  assert_int_equal(pthread_create(&dt, NULL, ddl_thread, db), 0);
  assert_true(hold_release());
  assert_int_equal(join(dt), KV_OK);
  assert_int_equal(join(ft), KV_OK);
  hold_end();
  bulk_rows(db, fid, "r", 190, 210);
  db = reopen_same(db, env, fid, 0);
  uint32_t gid;
  assert_int_equal(kv_family_id(db, "t2", "g", &gid), KV_OK);
  assert_int_equal(kv_close(db), KV_OK);
  kv_env_free(env);
}

/* Flushes started by the commits themselves (a small memstore_flush_size) start the
** compaction, so no thread waits for it; four batches of rows, one file each. */
static kv_db *held_by_commits(kv_env *env, uint32_t *fid) {
  kv_db *db = open_db(env, 1024);
  *fid = make_table(db, "t", NULL);
  hold_start();
  for (int k = 0; k < 4; k++) put_rows(db, *fid, "r", 50 * k, 50 * k + 50);
  wait_merging();
  return db;
}

/* kv_close while the merge is held and a load was committed beside it: it waits for the
** merge, which then lists its output before the load's file; all there after a reopen. */
static void test_close(void **state) {
  (void)state;
  memset(&M, 0, sizeof M);
  kv_env *env = kv_env_mem_new(T0);
  uint32_t fid;
  kv_db *db = held_by_commits(env, &fid);
  bulk_rows(db, fid, "r", 20, 40);
  bulk_rows(db, fid, "c", 0, 10);
  pthread_t ct;
  assert_int_equal(pthread_create(&ct, NULL, close_thread, db), 0);
  assert_true(hold_release());
  assert_int_equal(join(ct), KV_OK);
  hold_end();
  db = open_db(env, 0);
  check_rows(db, fid);
  db = reopen_same(db, env, fid, 0);
  assert_int_equal(kv_close(db), KV_OK);
  kv_env_free(env);
}

/* A power cut while the merge is held, after a load committed beside it: the reopened
** store has every row (the load's record names its file; the merge's output, named
** nowhere, is deleted). */
static void test_power_cut(void **state) {
  (void)state;
  memset(&M, 0, sizeof M);
  kv_env *env = kv_env_mem_new(T0);
  uint32_t fid;
  kv_db *db = held_by_commits(env, &fid);
  bulk_rows(db, fid, "r", 20, 40);
  bulk_rows(db, fid, "c", 0, 10);
  kv_env_mem_set_crashed(env, true);
  assert_true(hold_release());
  (void)kv_close(db); /* fails: the store crashed under it */
  hold_end();
  kv_env_mem_power_cut(env);
  db = open_db(env, 0);
  check_rows(db, fid);
  db = reopen_same(db, env, fid, 0);
  assert_int_equal(kv_close(db), KV_OK);
  kv_env_free(env);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_two_loads), cmocka_unit_test(test_regions),
      cmocka_unit_test(test_major),
      cmocka_unit_test(test_ddl),     cmocka_unit_test(test_close),
      cmocka_unit_test(test_power_cut),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
