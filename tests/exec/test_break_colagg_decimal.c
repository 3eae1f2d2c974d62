/*
** tests/exec/test_break_colagg_decimal.c: a DECIMAL SUM must not depend on how the columnar
** aggregate pushdown splits the rows into chunks (exec/op_colagg.c, exec/agg.c): with
** DECIMAL(38,0) values near the 38-digit limit, partial sums of a chunk can pass the limit
** while the sum in key order does not, and the other way round. The pushdown and the rows
** path (NO_PUSHDOWN hint) must give the same value or the same error.
** Not here: the other types (test_break_colagg.c).
*/
#include "test_engine_util.h"
#include "testutil.h"

#define BIG "90000000000000000000000000000000000000" /* 9e37: two of them pass 38 digits */

/* Rows 0..n-1 with B = K and A NULL except at the keys given. */
static tdb *table(int n, const int *keys, const char *const *vals, int nv) {
  tdb *t = tdb_open();
  q(t, "CREATE TABLE T (K INTEGER NOT NULL PRIMARY KEY, F.A DECIMAL(38,0), F.B INTEGER) "
       "BLOCKSIZE=256");
  char sql[256];
  for (int k = 0; k < n; k++) {
    const char *a = "NULL";
    for (int i = 0; i < nv; i++)
      if (keys[i] == k) a = vals[i];
    snprintf(sql, sizeof sql, "UPSERT INTO T VALUES (%d, %s, %d)", k, a, k);
    assert_int_equal(tdb_run(t, sql), EXEC_DONE);
  }
  assert_int_equal(kv_compact(t->db, NULL, true), KV_OK);
  return t;
}

static void same(tdb *t, const char *sel) {
  char a[256], b[256];
  snprintf(a, sizeof a, "SELECT /*+ NO_PUSHDOWN */ %s", sel);
  snprintf(b, sizeof b, "SELECT %s", sel);
  int rc1 = tdb_run(t, a);
  char *want = strdup(rc1 == EXEC_DONE ? t->out : t->err.msg);
  int rc2 = tdb_run(t, b);
  const char *got = rc2 == EXEC_DONE ? t->out : t->err.msg;
  if (rc1 != rc2 || strcmp(want, got) != 0)
    fprintf(stderr, "%s\n  rows path (%d): %s\n  pushdown  (%d): %s\n", b, rc1, want, rc2, got);
  assert_int_equal(rc1, rc2);
  if (rc1 == EXEC_DONE) assert_string_equal(want, got);
  free(want);
}

/* The sum in key order passes the limit on the way (9e37 + 9e37), chunk by chunk it does not. */
static void key_order_overflows(void **state) {
  (void)state;
  int n = 2000;
  static const int keys[3] = {0, 1500, 1501};
  static const char *const vals[3] = {BIG, BIG, "-" BIG};
  tdb *t = table(n, keys, vals, 3);
  same(t, "SUM(A), COUNT(A) FROM T WHERE B >= 0");
  same(t, "AVG(A), COUNT(*) FROM T WHERE B >= 0");
  tdb_close(t);
}

/* In key order the sum stays within the limit (-9e37, then 0, then 9e37); one chunk's part
** of it (9e37 + 9e37) does not. */
static void chunk_overflows(void **state) {
  (void)state;
  int n = 2000;
  static const int keys[3] = {0, 1500, 1501};
  static const char *const vals[3] = {"-" BIG, BIG, BIG};
  tdb *t = table(n, keys, vals, 3);
  same(t, "SUM(A), COUNT(A) FROM T WHERE B >= 0");
  same(t, "AVG(A), COUNT(*) FROM T WHERE B >= 0");
  tdb_close(t);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(key_order_overflows),
      cmocka_unit_test(chunk_overflows),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
