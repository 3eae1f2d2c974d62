/*
** tests/exec/test_break_fast_overlay.c: a SELECT started inside a transaction (so it reads
** the transaction's own writes, the overlay) and still between two rows when the
** transaction ends (COMMIT or ROLLBACK on the same connection), or when the transaction
** writes more rows. Read shapes: a range scan (forward, the fast paths), a reverse scan, an
** IN-list skip scan and an index scan that looks every data row up (kv_get per row with
** the overlay). After COMMIT, or more writes, the statement goes on to its end with rows
** whose values are right (each row's W spells its K); after ROLLBACK its next step fails
** with ROWAN_ABORT and, reset, it reads the committed rows only. It must never read the
** freed overlay (ASan: heap-use-after-free in the index case until 2636af4;
** scribble() reuses freed small blocks at once, which may show such a read without ASan).
** Found by test_break_fast_midscan.c (seed 1005432642).
** Not here: the fast paths' answers with writes mid-scan (test_break_fast_midscan.c).
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
#include "tu_api.h"

#define NROWS 200

enum { Q_RANGE, Q_REVERSE, Q_IN, Q_INDEX, NQ };
static const char *QUERY[NQ] = {
  "SELECT K, V, W FROM T WHERE K >= 0 LIMIT 100000",
  "SELECT K, V, W FROM T ORDER BY K DESC",
  "SELECT K, V, W FROM T WHERE K IN (1, 2, 3, 50, 51, 52, 120, 121, 199, 1005)",
  "SELECT /*+ INDEX(T IV) */ K, V, W FROM T WHERE V >= 0",
};

/* Reuse freed small blocks at once with a pattern, so a read of freed memory reads junk in
** a build without ASan too (the freed overlay's header is a small block). The blocks are
** kept until release(). */
#define NSCRIB 1024
static void *scrib[NSCRIB];
static void scribble(void) {
  for (int i = 0; i < NSCRIB; i++) {
    size_t n = 8 + (size_t)(i / 16) * 8;
    scrib[i] = malloc(n);
    assert_non_null(scrib[i]);
    memset(scrib[i], 0xA5, n);
  }
}
static void release(void) {
  for (int i = 0; i < NSCRIB; i++) free(scrib[i]);
}

/* Check the statement's current row: a committed row (K < NROWS) or, before the end of the
** transaction, one it wrote; W spells K. */
static void check_row(rowan_stmt *st, int q, int end, int r) {
  int64_t k = rowan_column_int64(st, 0);
  const char *w = rowan_column_text(st, 2);
  char want[32];
  snprintf(want, sizeof want, "w%lld", (long long)k);
  if (!w || strcmp(w, want) != 0)
    fail_msg("query %d, end %d, row %d: K %lld has W '%s'", q, end, r, (long long)k,
             w ? w : "(null)");
}

static void midscan_end(int q, int end) {
  kv_env *env = kv_env_mem_new(1700000000000LL);
  rowan_db *db = tu_open_mem(env);
  exec_ok(db, "CREATE TABLE T (K INTEGER NOT NULL PRIMARY KEY, V INTEGER, W VARCHAR) BLOCKSIZE = 512");
  exec_ok(db, "CREATE INDEX IV ON T (V)");
  exec_ok(db, "BEGIN");
  for (int k = 0; k < NROWS; k++) {
    char sql[128];
    snprintf(sql, sizeof sql, "UPSERT INTO T VALUES (%d, %d, 'w%d')", k, k % 17, k);
    exec_ok(db, sql);
  }
  exec_ok(db, "COMMIT");
  assert_int_equal(rowan_flush(db), ROWAN_OK);
  exec_ok(db, "BEGIN");
  for (int k = 1000; k < 1010; k++) {
    char sql[128];
    snprintf(sql, sizeof sql, "UPSERT INTO T VALUES (%d, %d, 'w%d')", k, k % 17, k);
    exec_ok(db, sql);
  }
  rowan_stmt *st = NULL;
  assert_int_equal(rowan_prepare(db, QUERY[q], -1, &st, NULL), ROWAN_OK);
  int r = 0, rc;
  while (r < 3 && (rc = rowan_step(st)) == ROWAN_ROW) check_row(st, q, end, r++);
  assert_int_equal(r, 3);
  if (end == 2) { /* the transaction writes on: more rows into the overlay */
    for (int k = 2000; k < 2300; k++) {
      char sql[128];
      snprintf(sql, sizeof sql, "UPSERT INTO T VALUES (%d, %d, 'w%d')", k, k % 17, k);
      exec_ok(db, sql);
    }
  } else {
    exec_ok(db, end == 0 ? "COMMIT" : "ROLLBACK");
  }
  scribble();
  if (end == 1) {
    /* the rows it gave came partly from writes that are now gone: the next step fails
       with ROWAN_ABORT (SQLite's SQLITE_ABORT_ROLLBACK), then refuses until a reset (which
       returns ROWAN_ABORT, as sqlite3_reset), and the reset statement reads the committed
       rows only */
    rc = rowan_step(st);
    if (rc != ROWAN_ABORT)
      fail_msg("query %d: the step after ROLLBACK gave %s (%s), not ROWAN_ABORT", q,
               rowan_errstr(rc), rowan_errmsg(db));
    assert_non_null(strstr(rowan_errmsg(db), "rolled back"));
    assert_int_equal(rowan_step(st), ROWAN_MISUSE);
    assert_int_equal(rowan_reset(st), ROWAN_ABORT);
    int n = 0;
    while ((rc = rowan_step(st)) == ROWAN_ROW) {
      check_row(st, q, end, n);
      if (rowan_column_int64(st, 0) >= NROWS)
        fail_msg("query %d: K %lld, a rolled-back row, after the reset", q,
                 (long long)rowan_column_int64(st, 0));
      n++;
    }
    assert_int_equal(rc, ROWAN_DONE);
    assert_int_equal(n, q == Q_IN ? 9 : NROWS);
  } else {
    while ((rc = rowan_step(st)) == ROWAN_ROW) check_row(st, q, end, r++);
    if (rc != ROWAN_DONE)
      fail_msg("query %d, end %d: step gave %d (%s)", q, end, rc, rowan_errmsg(db));
  }
  release();
  rowan_finalize(st);
  if (end == 2) exec_ok(db, "ROLLBACK");
  assert_int_equal(rowan_close(db), ROWAN_OK);
  kv_env_free(env);
}

static void range_commit(void **state) { (void)state; midscan_end(Q_RANGE, 0); }
static void range_rollback(void **state) { (void)state; midscan_end(Q_RANGE, 1); }
static void range_writes(void **state) { (void)state; midscan_end(Q_RANGE, 2); }
static void reverse_commit(void **state) { (void)state; midscan_end(Q_REVERSE, 0); }
static void reverse_rollback(void **state) { (void)state; midscan_end(Q_REVERSE, 1); }
static void in_commit(void **state) { (void)state; midscan_end(Q_IN, 0); }
static void in_rollback(void **state) { (void)state; midscan_end(Q_IN, 1); }
static void in_writes(void **state) { (void)state; midscan_end(Q_IN, 2); }
static void index_writes(void **state) { (void)state; midscan_end(Q_INDEX, 2); }
/* Was a bug (fixed in 2636af4): exec_scan_lookup passed the overlay the statement took at
** its first step to kv_get for every row after COMMIT / ROLLBACK had freed it. */
static void index_commit(void **state) { (void)state; midscan_end(Q_INDEX, 0); }
static void index_rollback(void **state) { (void)state; midscan_end(Q_INDEX, 1); }

/* Step st n times, each a row; returns the last K. */
static int64_t step_rows(rowan_stmt *st, int n) {
  int64_t k = -1;
  for (int i = 0; i < n; i++) {
    int rc = rowan_step(st);
    if (rc != ROWAN_ROW) fail_msg("step %d gave %s", i, rowan_errstr(rc));
    k = rowan_column_int64(st, 0);
  }
  return k;
}

/* Step st to its end; returns the rows. */
static int drain(rowan_db *db, rowan_stmt *st) {
  int n = 0, rc;
  while ((rc = rowan_step(st)) == ROWAN_ROW) n++;
  if (rc != ROWAN_DONE) fail_msg("drain: %s (%s)", rowan_errstr(rc), rowan_errmsg(db));
  return n;
}

/* Which running SELECTs a ROLLBACK aborts: only those opened inside the transaction, and
** only when it wrote something; a statement finalized or run to its end before the ROLLBACK
** is not touched (the readers list stays whole), nor one opened in an earlier, committed
** transaction. */
static void rollback_rules(void **state) {
  (void)state;
  kv_env *env = kv_env_mem_new(1700000000000LL);
  rowan_db *db = tu_open_mem(env);
  exec_ok(db, "CREATE TABLE T (K INTEGER NOT NULL PRIMARY KEY, V INTEGER, W VARCHAR)");
  exec_ok(db, "UPSERT INTO T SELECT 1, 1, 'w1' FROM T"); /* empty: writes nothing */
  for (int k = 0; k < 50; k++) {
    char sql[96];
    snprintf(sql, sizeof sql, "UPSERT INTO T VALUES (%d, %d, 'w%d')", k, k, k);
    exec_ok(db, sql);
  }
  const char *q = "SELECT K, V, W FROM T WHERE K >= 0";
  rowan_stmt *outside, *a, *b, *gone, *done, *empty_txn;
  /* opened outside any transaction: a later BEGIN ... ROLLBACK leaves it alone */
  assert_int_equal(rowan_prepare(db, q, -1, &outside, NULL), ROWAN_OK);
  step_rows(outside, 5);
  /* a transaction with no writes: its ROLLBACK aborts nothing */
  exec_ok(db, "BEGIN");
  assert_int_equal(rowan_prepare(db, q, -1, &empty_txn, NULL), ROWAN_OK);
  step_rows(empty_txn, 5);
  exec_ok(db, "ROLLBACK");
  assert_int_equal(drain(db, empty_txn) + 5, 50);
  /* a committed transaction: its reader goes on through a later transaction's ROLLBACK */
  exec_ok(db, "BEGIN");
  exec_ok(db, "UPSERT INTO T VALUES (100, 100, 'w100')");
  rowan_stmt *committed;
  assert_int_equal(rowan_prepare(db, q, -1, &committed, NULL), ROWAN_OK);
  step_rows(committed, 5);
  exec_ok(db, "COMMIT");
  /* the transaction rolled back: four readers, two gone before the ROLLBACK */
  exec_ok(db, "BEGIN");
  exec_ok(db, "UPSERT INTO T VALUES (200, 200, 'w200')");
  assert_int_equal(rowan_prepare(db, q, -1, &a, NULL), ROWAN_OK);
  assert_int_equal(rowan_prepare(db, q, -1, &gone, NULL), ROWAN_OK);
  assert_int_equal(rowan_prepare(db, q, -1, &b, NULL), ROWAN_OK);
  assert_int_equal(rowan_prepare(db, q, -1, &done, NULL), ROWAN_OK);
  step_rows(a, 3);
  step_rows(gone, 3);
  step_rows(b, 3);
  assert_int_equal(drain(db, done), 52); /* 50, K 100 committed, K 200 its own */
  assert_int_equal(rowan_finalize(gone), ROWAN_OK); /* taken off the list mid-list */
  exec_ok(db, "ROLLBACK");
  assert_int_equal(rowan_step(a), ROWAN_ABORT);
  assert_int_equal(rowan_step(b), ROWAN_ABORT);
  assert_int_equal(drain(db, done), 51); /* finished before: runs again, as after a reset */
  assert_int_equal(drain(db, outside) + 5, 50);   /* its snapshot: K 100 came later */
  assert_int_equal(drain(db, committed) + 5, 51); /* 50 and its transaction's K 100 */
  /* reset (it returns the abort), the aborted ones read the committed rows */
  assert_int_equal(rowan_reset(a), ROWAN_ABORT);
  assert_int_equal(drain(db, a), 51);
  assert_int_equal(rowan_reset(b), ROWAN_ABORT);
  assert_int_equal(drain(db, b), 51);
  /* a statement reset inside the transaction is off the list: a new run after the
     ROLLBACK is not aborted by it */
  exec_ok(db, "BEGIN");
  exec_ok(db, "UPSERT INTO T VALUES (300, 300, 'w300')");
  step_rows(a, 2);
  assert_int_equal(rowan_reset(a), ROWAN_OK);
  exec_ok(db, "ROLLBACK");
  assert_int_equal(drain(db, a), 51);
  rowan_stmt *all[] = {outside, a, b, done, empty_txn, committed};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
    assert_int_equal(rowan_finalize(all[i]), ROWAN_OK);
  assert_int_equal(rowan_close(db), ROWAN_OK);
  kv_env_free(env);
}

/* A COMMIT whose WAL write fails drops the transaction's batch as a ROLLBACK does: the
** SELECT still reading it is aborted the same way, and the rows it saw are not in the
** store. */
static void failed_commit(void **state) {
  (void)state;
  kv_env *env = kv_env_mem_new(1700000000000LL);
  rowan_db *db = tu_open_mem_sync(env, ROWAN_SYNC_NORMAL); /* each commit writes its WAL
                                                              record at once */
  exec_ok(db, "CREATE TABLE T (K INTEGER NOT NULL PRIMARY KEY, V INTEGER, W VARCHAR)");
  for (int k = 0; k < 20; k++) {
    char sql[96];
    snprintf(sql, sizeof sql, "UPSERT INTO T VALUES (%d, %d, 'w%d')", k, k, k);
    exec_ok(db, sql);
  }
  exec_ok(db, "BEGIN");
  exec_ok(db, "UPSERT INTO T VALUES (500, 500, 'w500')");
  rowan_stmt *st;
  assert_int_equal(rowan_prepare(db, "SELECT K, V, W FROM T ORDER BY K DESC", -1, &st, NULL),
                   ROWAN_OK);
  assert_int_equal(step_rows(st, 2), 19); /* K 500 first: its own write */
  kv_env_mem_fail(env, KV_FAULT_APPEND, 1, "wal-", KV_FAULT_EIO, 0);
  int rc = rowan_exec(db, "COMMIT", NULL, NULL);
  assert_int_not_equal(rc, ROWAN_OK);
  kv_env_mem_clear_faults(env);
  rc = rowan_step(st);
  if (rc != ROWAN_ABORT)
    fail_msg("the step after a failed COMMIT gave %s (%s)", rowan_errstr(rc), rowan_errmsg(db));
  assert_int_equal(rowan_reset(st), ROWAN_ABORT);
  rc = rowan_step(st);
  if (rc == ROWAN_ROW) assert_true(rowan_column_int64(st, 0) < 500);
  assert_int_equal(rowan_finalize(st), ROWAN_OK);
  rowan_close(db);
  kv_env_free(env);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(range_commit),   cmocka_unit_test(range_rollback),
    cmocka_unit_test(range_writes),   cmocka_unit_test(reverse_commit),
    cmocka_unit_test(reverse_rollback), cmocka_unit_test(in_commit),
    cmocka_unit_test(in_rollback),    cmocka_unit_test(in_writes),
    cmocka_unit_test(index_writes),
    cmocka_unit_test(index_commit),   cmocka_unit_test(index_rollback),
    cmocka_unit_test(rollback_rules), cmocka_unit_test(failed_commit),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
