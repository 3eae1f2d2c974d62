/*
** tests/api/test_break_bulk_faults.c: a bulk load through the public API (rowan_bulk_*)
** into an empty table with an index, whose commit meets an I/O error or a full disk on
** the nth file creation, append, sync, rename or directory sync (the in-memory env's
** faults): the commit either succeeds with every row and index row, or fails and leaves
** the table and its index empty; the same holds after the store is closed and opened
** again, CHECK INDEX is clean either way, and a second load of the same rows then goes in
** whole (the merge split at the default size: test_break_bulk_big.c). A crash at
** such a fault followed by a power cut leaves the load whole or gone after reopen.
** Not here: the kv-level merge under faults (tests/kv/test_break_bulk_split.c).
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

static rowan_db *open_mem(kv_env *env) {
  rowan_options o;
  rowan_options_init(&o);
  o.kv_env = env;
  o.sync_mode = ROWAN_SYNC_FULL;
  rowan_db *db = NULL;
  int rc = rowan_open("/db", &o, &db);
  if (rc != ROWAN_OK) fail_msg("open: %s", db ? rowan_errmsg(db) : rowan_errstr(rc));
  return db;
}

static int check_cb(void *ctx, int ncol, char **values, char **names) {
  (void)names;
  int *bad = ctx;
  if (ncol >= 2 && values[0] &&
      (!strcmp(values[0], "MISSING") || !strcmp(values[0], "EXTRA") ||
       !strcmp(values[0], "MISMATCHED")) &&
      values[1] && strcmp(values[1], "0") != 0)
    (*bad)++;
  return 0;
}

/* The table holds exactly `rows` rows (0 or n) and its index agrees. */
static void expect_state(rowan_db *db, int64_t rows, const char *what) {
  int bad = 0;
  assert_int_equal(rowan_exec(db, "CHECK INDEX IV ON T", check_cb, &bad), ROWAN_OK);
  if (bad) fail_msg("%s: CHECK INDEX finds problems", what);
  int64_t n = tu_one_int(db, "SELECT COUNT(*) FROM T");
  int64_t ni = tu_one_int(db, "SELECT /*+ INDEX(T IV) */ COUNT(*) FROM T WHERE V >= 0");
  if (n != rows || ni != rows)
    fail_msg("%s: %lld rows, %lld through the index, want %lld", what, (long long)n,
             (long long)ni, (long long)rows);
}

static int load(rowan_db *db, kv_env *env, int n, uint64_t *rs, int fop, uint64_t nth,
                int kind) {
  static const char *const cols[] = {"K", "V", "W"};
  rowan_bulk *b;
  int rc = rowan_bulk_begin(db, "T", 3, cols, &b);
  if (rc != ROWAN_OK) fail_msg("begin: %s", rowan_errmsg(db));
  /* shuffled keys: the data and the index family both come unordered */
  int *perm = malloc((size_t)n * sizeof *perm);
  assert_non_null(perm);
  for (int i = 0; i < n; i++) perm[i] = i;
  for (int i = n - 1; i > 0; i--) {
    int j = (int)tu_below(rs, (uint64_t)i + 1), t = perm[i];
    perm[i] = perm[j];
    perm[j] = t;
  }
  for (int i = 0; i < n; i++) {
    char k[16], v[16];
    snprintf(k, sizeof k, "%d", perm[i]);
    snprintf(v, sizeof v, "%d", (perm[i] * 7919) % 100003);
    const char *f[3] = {k, v, i % 5 ? "some text" : NULL};
    assert_int_equal(rowan_bulk_add_text(b, f, NULL), ROWAN_OK);
  }
  free(perm);
  /* a torn write lands some bytes (1..200) of the append, then fails */
  if (fop >= 0)
    kv_env_mem_fail(env, fop, nth, NULL, kind, kind == KV_FAULT_TORN ? 1 + tu_below(rs, 200) : 0);
  rc = rowan_bulk_commit(b);
  kv_env_mem_clear_faults(env);
  return rc;
}

static void faults_in_commit(void **state) {
  (void)state;
  uint64_t seed = tu_seed("faults_in_commit"), rs = seed;
  static const int fops[] = {KV_FAULT_OPEN, KV_FAULT_APPEND, KV_FAULT_SYNC, KV_FAULT_RENAME,
                             KV_FAULT_SYNC_DIR};
  static const char *const fname[] = {"open", "append", "sync", "rename", "sync_dir"};
  int n = (int)tu_scaled(30000, 8000), failed = 0, tries = 0;
  for (int f = 0; f < 5; f++)
    for (uint64_t nth = 1; nth <= 4; nth += 3) {
      kv_env *env = kv_env_mem_new(1700000000000LL);
      rowan_db *db = open_mem(env);
      exec_ok(db, "CREATE TABLE T (K INTEGER NOT NULL PRIMARY KEY, V INTEGER, W VARCHAR)");
      exec_ok(db, "CREATE INDEX IV ON T (V) INCLUDE (W)");
      int kind = tu_below(&rs, 2) ? 0 /* EIO */ : 1 /* ENOSPC */;
      int rc = load(db, env, n, &rs, fops[f], nth, kind);
      char what[160];
      snprintf(what, sizeof what, "seed %llu: fault on %s #%llu: commit %s (%s)",
               (unsigned long long)seed, fname[f], (unsigned long long)nth, rowan_errstr(rc),
               rc == ROWAN_OK ? "" : rowan_errmsg(db));
      fprintf(stderr, "  %s\n", what);
      tries++;
      failed += rc != ROWAN_OK;
      int64_t want = rc == ROWAN_OK ? n : 0;
      expect_state(db, want, what);
      rowan_close(db); /* may report the error state of a failed MANIFEST write */
      db = open_mem(env);
      expect_state(db, want, what);
      if (rc != ROWAN_OK) { /* the same load again, without a fault */
        assert_int_equal(load(db, env, n, &rs, -1, 0, 0), ROWAN_OK);
        expect_state(db, n, what);
      }
      assert_int_equal(rowan_close(db), ROWAN_OK);
      kv_env_free(env);
    }
  assert_true(failed * 2 >= tries); /* most faults hit the commit */
}

/* The process dies at a fault in the commit (every later file operation fails), then the
** power goes (unsynced bytes lost): after reopen the load is all there (always when the
** commit returned ROWAN_OK) or not at all, and the index agrees with the table. */
static void crash_in_commit(void **state) {
  (void)state;
  uint64_t seed = tu_seed("crash_in_commit"), rs = seed;
  static const int fops[] = {KV_FAULT_APPEND, KV_FAULT_SYNC, KV_FAULT_RENAME, KV_FAULT_SYNC_DIR};
  int n = (int)tu_scaled(12000, 4000), whole = 0, none = 0;
  for (int f = 0; f < 4; f++)
    for (uint64_t nth = 1; nth <= 9; nth += 4) {
      kv_env *env = kv_env_mem_new(1700000000000LL);
      rowan_db *db = open_mem(env);
      exec_ok(db, "CREATE TABLE T (K INTEGER NOT NULL PRIMARY KEY, V INTEGER, W VARCHAR)");
      exec_ok(db, "CREATE INDEX IV ON T (V) INCLUDE (W)");
      int kind = f == 0 && tu_below(&rs, 2) ? KV_FAULT_TORN : KV_FAULT_EIO;
      int rc = load(db, env, n, &rs, fops[f], nth, kind);
      kv_env_mem_set_crashed(env, true); /* the process dies here */
      rowan_close(db);
      kv_env_mem_power_cut(env);
      db = open_mem(env);
      char what[160];
      snprintf(what, sizeof what, "seed %llu: crash at %d #%llu, commit %s",
               (unsigned long long)seed, fops[f], (unsigned long long)nth, rowan_errstr(rc));
      int64_t rows = tu_one_int(db, "SELECT COUNT(*) FROM T");
      if (rc == ROWAN_OK && rows != n) fail_msg("%s: %lld rows after a committed load", what,
                                                (long long)rows);
      if (rows != 0 && rows != n) fail_msg("%s: %lld rows: part of the load", what,
                                           (long long)rows);
      expect_state(db, rows, what);
      whole += rows == n;
      none += rows == 0;
      assert_int_equal(rowan_close(db), ROWAN_OK);
      kv_env_free(env);
    }
  fprintf(stderr, "[crash_in_commit] %d loads whole, %d gone\n", whole, none);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(faults_in_commit),
      cmocka_unit_test(crash_in_commit),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
