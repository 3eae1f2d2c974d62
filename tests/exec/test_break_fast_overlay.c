/*
** tests/exec/test_break_fast_overlay.c: a SELECT started inside a transaction (so it reads
** the transaction's own writes, the overlay) and still between two rows when the
** transaction ends (COMMIT or ROLLBACK on the same connection), or when the transaction
** writes more rows. Read shapes: a range scan (forward, the fast paths), a reverse scan, an
** IN-list skip scan and an index scan that looks every data row up (kv_get per row with
** the overlay). After the transaction ends the statement must either go on with committed
** rows whose values are right (each row's W spells its K) or fail with an error; it must
** never read the freed overlay (ASan: heap-use-after-free in the index case until 2636af4;
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

#include "kv/env_mem.h"
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
  while ((rc = rowan_step(st)) == ROWAN_ROW) check_row(st, q, end, r++);
  if (rc != ROWAN_DONE && rc != ROWAN_ERROR && rc != ROWAN_MISUSE)
    fail_msg("query %d, end %d: step gave %d (%s)", q, end, rc, rowan_errmsg(db));
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

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(range_commit),   cmocka_unit_test(range_rollback),
    cmocka_unit_test(range_writes),   cmocka_unit_test(reverse_commit),
    cmocka_unit_test(reverse_rollback), cmocka_unit_test(in_commit),
    cmocka_unit_test(in_rollback),    cmocka_unit_test(in_writes),
    cmocka_unit_test(index_writes),
    cmocka_unit_test(index_commit),   cmocka_unit_test(index_rollback),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
