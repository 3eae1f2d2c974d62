/*
** tests/exec/test_write.c: write statements and transactions: UPSERT SELECT (same and other
** table; 25,000 rows, with the session's write memory at its 64 KiB minimum so the statement
** moves into a bulk load, and at the default, one WAL batch), DELETE planned with key ranges
** (point, range, non-key filter, LIMIT), rows whose non-key columns are all NULL still exist
** and are deleted, BEGIN ... COMMIT as one batch that sees its own writes, ROLLBACK, errors
** inside a transaction, atomicity of a failing statement (a large UPSERT SELECT that fails
** late leaves nothing), and a session's reused batch buffer carrying nothing from one
** transaction or statement to the next.
*/
#include "test_engine_util.h"
#include "testutil.h"

static void fill(tdb *t, int n) {
  q(t, "CREATE TABLE T (K INTEGER NOT NULL PRIMARY KEY, G VARCHAR, V DOUBLE)");
  char sql[256];
  for (int i = 0; i < n; i++) {
    snprintf(sql, sizeof sql, "UPSERT INTO T VALUES (%d, '%c', %d.5)", i, 'a' + i % 3, i);
    q(t, sql);
  }
}

static void delete_plans(void **state) {
  (void)state;
  tdb *t = tdb_open();
  fill(t, 20);
  q(t, "DELETE FROM T WHERE K = 3");
  assert_int_equal(exec_changes(t->s), 1);
  assert_string_equal(t->kind, "POINT LOOKUP");
  q(t, "DELETE FROM T WHERE K >= 10 AND K < 15");
  assert_int_equal(exec_changes(t->s), 5);
  assert_string_equal(t->kind, "RANGE SCAN");
  assert_int_equal(t->m.rows_examined, 5);
  q(t, "DELETE FROM T WHERE G = 'a'"); /* 0 6 9 15 18 (3 and 12 gone) */
  assert_int_equal(exec_changes(t->s), 5);
  assert_string_equal(t->kind, "FULL SCAN");
  assert_string_equal(q(t, "SELECT K FROM T"), "1\n2\n4\n5\n7\n8\n16\n17\n19\n");
  q(t, "DELETE FROM T WHERE K > 0 LIMIT 2");
  assert_int_equal(exec_changes(t->s), 2);
  assert_string_equal(q(t, "SELECT COUNT(*) FROM T"), "7\n");
  q(t, "DELETE FROM T WHERE K = 1000");
  assert_int_equal(exec_changes(t->s), 0);
  tdb_close(t);
}

static void all_null_rows(void **state) {
  (void)state;
  tdb *t = tdb_open();
  q(t, "CREATE TABLE T (K INTEGER NOT NULL PRIMARY KEY, A.X INTEGER, B.Y INTEGER)");
  q(t, "UPSERT INTO T (K) VALUES (1)");
  q(t, "UPSERT INTO T VALUES (2, 5, NULL)");
  q(t, "UPSERT INTO T VALUES (3, NULL, 7)");
  assert_string_equal(q(t, "SELECT K, X, Y FROM T"), "1|NULL|NULL\n2|5|NULL\n3|NULL|7\n");
  assert_string_equal(q(t, "SELECT COUNT(*) FROM T"), "3\n");
  assert_string_equal(q(t, "SELECT K FROM T WHERE X IS NULL"), "1\n3\n");
  assert_string_equal(q(t, "SELECT X FROM T"), "NULL\n5\nNULL\n");
  assert_string_equal(q(t, "SELECT K FROM T WHERE X > 1"), "2\n");
  q(t, "DELETE FROM T WHERE K = 1");
  assert_int_equal(exec_changes(t->s), 1);
  assert_string_equal(q(t, "SELECT K FROM T"), "2\n3\n");
  /* a deleted row comes back with only what the new UPSERT sets */
  q(t, "UPSERT INTO T (K, Y) VALUES (2, 1)");
  q(t, "DELETE FROM T WHERE K = 2");
  q(t, "UPSERT INTO T (K) VALUES (2)");
  assert_string_equal(q(t, "SELECT K, X, Y FROM T WHERE K = 2"), "2|NULL|NULL\n");
  tdb_close(t);
}

static void upsert_select(void **state) {
  (void)state;
  tdb *t = tdb_open();
  fill(t, 10);
  q(t, "CREATE TABLE U (G VARCHAR NOT NULL PRIMARY KEY, N BIGINT, S DOUBLE)");
  q(t, "UPSERT INTO U SELECT G, COUNT(*), SUM(V) FROM T GROUP BY G");
  assert_int_equal(exec_changes(t->s), 3);
  assert_string_equal(q(t, "SELECT * FROM U"), "a|4|20\nb|3|13.5\nc|3|16.5\n");
  /* into the same table: the scan reads a snapshot, so new rows are not read again */
  q(t, "UPSERT INTO T (K, V) SELECT K + 100, V * 2 FROM T WHERE K < 5");
  assert_int_equal(exec_changes(t->s), 5);
  assert_string_equal(q(t, "SELECT COUNT(*), MAX(K) FROM T"), "15|104\n");
  assert_string_equal(q(t, "SELECT G, V FROM T WHERE K = 104"), "NULL|9\n");
  tdb_close(t);
}

static void big_upsert_select(void **state) {
  (void)state;
  tdb *t = tdb_open();
  q(t, "CREATE TABLE T (K INTEGER NOT NULL PRIMARY KEY, V INTEGER)");
  q(t, "CREATE TABLE C (K INTEGER NOT NULL PRIMARY KEY, V INTEGER)");
  /* 25,000 rows in 25 statements of 1,000 rows */
  char *sql = malloc(64 * 1024);
  for (int s = 0; s < 25; s++) {
    size_t n = (size_t)sprintf(sql, "UPSERT INTO T VALUES ");
    for (int i = 0; i < 1000; i++)
      n += (size_t)sprintf(sql + n, "%s(%d, %d)", i ? ", " : "", s * 1000 + i, i);
    q(t, sql);
  }
  free(sql);
  for (int pass = 0; pass < 2; pass++) {
    exec_set_write_memory(t->s, pass == 0 ? 1 : 0); /* 64 KiB: spills; then the default */
    q(t, "UPSERT INTO C SELECT K, V FROM T");
    assert_int_equal(exec_changes(t->s), 25000);
    assert_string_equal(q(t, "SELECT COUNT(*), SUM(V) FROM C"), "25000|12487500\n");
    /* a failure late in the statement: nothing of it is written */
    const char *m = qerr(t, "UPSERT INTO C (K, V) SELECT K, CASE WHEN K < 21000 THEN V + 1 "
                            "ELSE V / (K - K) END FROM T",
                         EXEC_CONSTRAINT);
    assert_null(strstr(m, "committed"));
    assert_string_equal(q(t, "SELECT COUNT(*), SUM(V) FROM C"), "25000|12487500\n");
    qerr(t, "DELETE FROM C WHERE K / (K - 24000) >= 0", EXEC_CONSTRAINT);
    assert_string_equal(q(t, "SELECT COUNT(*) FROM C"), "25000\n");
    q(t, "DELETE FROM C");
    assert_int_equal(exec_changes(t->s), 25000);
    assert_string_equal(q(t, "SELECT COUNT(*) FROM C"), "0\n");
  }
  tdb_close(t);
}

static void statement_atomic(void **state) {
  (void)state;
  tdb *t = tdb_open();
  fill(t, 3);
  /* the second row is bad: nothing of the statement is written */
  qerr(t, "UPSERT INTO T VALUES (10, 'x', 1.0), (NULL, 'y', 2.0)", EXEC_CONSTRAINT);
  assert_string_equal(q(t, "SELECT COUNT(*) FROM T"), "3\n");
  qerr(t, "UPSERT INTO T (K, V) SELECT K + 10, V / (K - 1) FROM T", EXEC_CONSTRAINT);
  assert_string_equal(q(t, "SELECT COUNT(*) FROM T"), "3\n");
  tdb_close(t);
}

/* A session keeps its last batch's buffer for the next transaction or statement (exec/txn.c):
** what an earlier one held never reaches a later one, whether it was committed, rolled back,
** failed as a statement, or read as a transaction's overlay. */
static void batch_reuse(void **state) {
  (void)state;
  tdb *t = tdb_open();
  fill(t, 3);
  char sql[128];
  q(t, "BEGIN");
  for (int i = 100; i < 400; i++) { /* a buffer of many KiB, kept after the ROLLBACK */
    snprintf(sql, sizeof sql, "UPSERT INTO T VALUES (%d, 'r', 1.0)", i);
    q(t, sql);
  }
  assert_string_equal(q(t, "SELECT COUNT(*) FROM T"), "303\n"); /* the overlay read */
  q(t, "ROLLBACK");
  q(t, "BEGIN");
  q(t, "UPSERT INTO T VALUES (10, 'n', 2.0)");
  assert_string_equal(q(t, "SELECT COUNT(*) FROM T"), "4\n");
  q(t, "COMMIT");
  assert_string_equal(q(t, "SELECT K FROM T"), "0\n1\n2\n10\n");
  /* a statement of its own that fails gives back a batch holding its first row */
  qerr(t, "UPSERT INTO T VALUES (20, 'a', 1.0), (NULL, 'b', 2.0)", EXEC_CONSTRAINT);
  q(t, "UPSERT INTO T VALUES (21, 'c', 3.0)");
  assert_string_equal(q(t, "SELECT K FROM T WHERE K >= 10"), "10\n21\n");
  q(t, "BEGIN");
  q(t, "DELETE FROM T WHERE K = 21");
  assert_string_equal(q(t, "SELECT K FROM T WHERE K >= 10"), "10\n");
  q(t, "COMMIT");
  q(t, "BEGIN");
  assert_string_equal(q(t, "SELECT K FROM T WHERE K >= 10"), "10\n");
  q(t, "UPSERT INTO T VALUES (22, 'd', 4.0)");
  assert_string_equal(q(t, "SELECT K FROM T WHERE K >= 10"), "10\n22\n");
  q(t, "ROLLBACK");
  assert_string_equal(q(t, "SELECT K FROM T WHERE K >= 10"), "10\n");
  tdb_close(t);
}

static void transactions(void **state) {
  (void)state;
  tdb *t = tdb_open();
  fill(t, 3);
  q(t, "BEGIN");
  assert_true(exec_in_transaction(t->s));
  q(t, "UPSERT INTO T VALUES (7, 'z', 70.0)");
  q(t, "DELETE FROM T WHERE K = 0");
  /* the transaction sees its own writes */
  assert_string_equal(q(t, "SELECT K FROM T"), "1\n2\n7\n");
  assert_string_equal(q(t, "SELECT V FROM T WHERE K = 7"), "70\n");
  q(t, "UPSERT INTO T (K, V) SELECT K + 10, V FROM T WHERE K = 7");
  assert_string_equal(q(t, "SELECT COUNT(*) FROM T"), "4\n");
  qerr(t, "BEGIN", EXEC_ERROR);
  qerr(t, "CREATE TABLE X (K INTEGER PRIMARY KEY)", EXEC_ERROR);
  q(t, "COMMIT");
  assert_false(exec_in_transaction(t->s));
  assert_string_equal(q(t, "SELECT K FROM T"), "1\n2\n7\n17\n");
  /* rollback drops everything */
  q(t, "BEGIN");
  q(t, "DELETE FROM T");
  assert_string_equal(q(t, "SELECT COUNT(*) FROM T"), "0\n");
  q(t, "ROLLBACK");
  assert_string_equal(q(t, "SELECT COUNT(*) FROM T"), "4\n");
  qerr(t, "COMMIT", EXEC_ERROR);
  qerr(t, "ROLLBACK", EXEC_ERROR);
  /* a statement failing midway takes back only its own rows; the transaction goes on */
  q(t, "BEGIN");
  q(t, "UPSERT INTO T VALUES (50, 'q', 1.0)");
  qerr(t, "UPSERT INTO T VALUES (51, 'q', 1.0), (NULL, 'q', 2.0)", EXEC_CONSTRAINT);
  assert_true(exec_in_transaction(t->s));
  assert_string_equal(q(t, "SELECT K FROM T WHERE K >= 50"), "50\n"); /* 51 is gone */
  /* deletes K = 1 (1 / -49 is evaluated, K = 1 holds), then fails at K = 50 */
  qerr(t, "DELETE FROM T WHERE K = 1 OR 1 / (K - 50) > 0", EXEC_CONSTRAINT);
  assert_string_equal(q(t, "SELECT K FROM T WHERE K = 1 OR K >= 50"), "1\n50\n");
  q(t, "UPSERT INTO T VALUES (52, 'q', 3.0)");
  q(t, "COMMIT");
  assert_false(exec_in_transaction(t->s));
  assert_string_equal(q(t, "SELECT K FROM T WHERE K >= 50"), "50\n52\n");
  q(t, "DELETE FROM T WHERE K >= 50");
  /* closing the session with an open transaction drops it */
  q(t, "BEGIN");
  q(t, "UPSERT INTO T VALUES (60, 'q', 1.0)");
  assert_int_equal(exec_session_close(t->s), EXEC_OK);
  assert_int_equal(exec_session_open(t->db, &t->s, &t->err), EXEC_OK);
  assert_string_equal(q(t, "SELECT COUNT(*) FROM T WHERE K = 60"), "0\n");
  tdb_close(t);
}

/* Random upserts and deletes against a model array, with and without transactions. */
static void random_model(void **state) {
  (void)state;
  uint64_t seed = tu_seed("random_model");
  uint64_t rs = seed;
  tdb *t = tdb_open();
  q(t, "CREATE TABLE M (K INTEGER NOT NULL PRIMARY KEY, V INTEGER)");
  enum { N = 64 };
  int model[N];
  for (int i = 0; i < N; i++) model[i] = -1;
  int ops = (int)tu_scaled(400, 50);
  char sql[128];
  bool in_txn = false;
  int saved[N];
  for (int op = 0; op < ops; op++) {
    int k = (int)tu_below(&rs, N), r = (int)tu_below(&rs, 10);
    if (r < 5) {
      int v = (int)tu_below(&rs, 1000);
      snprintf(sql, sizeof sql, "UPSERT INTO M VALUES (%d, %d)", k, v);
      q(t, sql);
      model[k] = v;
    } else if (r < 7) {
      int k2 = k + (int)tu_below(&rs, 8);
      snprintf(sql, sizeof sql, "DELETE FROM M WHERE K >= %d AND K <= %d", k, k2);
      q(t, sql);
      for (int i = k; i <= k2 && i < N; i++) model[i] = -1;
    } else if (r == 7 && !in_txn) {
      q(t, "BEGIN");
      memcpy(saved, model, sizeof model);
      in_txn = true;
    } else if (r == 8 && in_txn) {
      bool commit = tu_below(&rs, 2) != 0;
      q(t, commit ? "COMMIT" : "ROLLBACK");
      if (!commit) memcpy(model, saved, sizeof model);
      in_txn = false;
    } else {
      snprintf(sql, sizeof sql, "SELECT COUNT(*), SUM(V) FROM M WHERE K >= %d", k);
      q(t, sql);
      long long cnt = 0, sum = 0;
      for (int i = k; i < N; i++)
        if (model[i] >= 0) cnt++, sum += model[i];
      char want[64];
      if (cnt) snprintf(want, sizeof want, "%lld|%lld\n", cnt, sum);
      else snprintf(want, sizeof want, "0|NULL\n");
      if (strcmp(t->out, want) != 0)
        fail_msg("seed %llu op %d: %s gave %s want %s", (unsigned long long)seed, op, sql,
                 t->out, want);
    }
  }
  tdb_close(t);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(delete_plans),     cmocka_unit_test(all_null_rows),
      cmocka_unit_test(upsert_select),    cmocka_unit_test(big_upsert_select),
      cmocka_unit_test(statement_atomic), cmocka_unit_test(transactions),
      cmocka_unit_test(batch_reuse),
      cmocka_unit_test(random_model),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
