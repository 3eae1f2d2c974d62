/*
** tests/api/test_row_cover.c: the row cover (docs/FORMAT_SQL.md "Row cover") through the
** public API, where it meets what SQL files cannot show: a prepared statement planned while
** a family covered every row is planned again once a write breaks that (it must then find
** the new row), a statement stopped between rows goes on across that write without a
** "schema changed" error, a bulk load's rows (which skip the WAL) are never durable without
** the catalog change that makes scans read the key family for them (power cut right after
** the commit, sync off), and a failed catalog commit fails the write and changes nothing.
** Each answer is checked against a count the test knows from the rows it wrote.
** Not here: the EXPLAIN text and SQL-level cases (tests/sql/row_cover.test).
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

/* Rows of a prepared statement run once more from the start. */
static int rows_of(rowan_stmt *st) {
  rowan_reset(st);
  int n = 0, rc;
  while ((rc = rowan_step(st)) == ROWAN_ROW) n++;
  assert_int_equal(rc, ROWAN_DONE);
  return n;
}

/* Whether EXPLAIN of sql says the key family is left out. */
static bool skips_key_family(rowan_db *db, const char *sql) {
  char x[512];
  snprintf(x, sizeof x, "EXPLAIN %s", sql);
  rowan_stmt *st;
  assert_int_equal(rowan_prepare(db, x, -1, &st, NULL), ROWAN_OK);
  bool skip = false;
  while (rowan_step(st) == ROWAN_ROW)
    skip |= strstr((const char *)rowan_column_text(st, 0), "[_k not read") != NULL;
  rowan_finalize(st);
  return skip;
}

static void prepared_plans_again(void **state) {
  (void)state;
  kv_env *env = kv_env_mem_new(1700000000000LL);
  rowan_db *db = tu_open_mem(env);
  exec_ok(db, "CREATE TABLE T (K INTEGER NOT NULL PRIMARY KEY, A INTEGER, C INTEGER, M.B "
              "INTEGER)");
  /* row 3 has no A but has C: family 0 still covers; row 4 leaves M */
  exec_ok(db, "UPSERT INTO T VALUES (1, 1, 1, 1), (2, 2, 2, 2), (3, NULL, 3, 3)");
  exec_ok(db, "UPSERT INTO T VALUES (4, 4, 4, NULL)");
  const char *sel = "SELECT K, A FROM T";
  assert_true(skips_key_family(db, sel));
  rowan_stmt *st;
  assert_int_equal(rowan_prepare(db, sel, -1, &st, NULL), ROWAN_OK);
  assert_int_equal(rows_of(st), 4);
  assert_int_equal(rows_of(st), 4); /* the kept plan */
  /* a row with nothing in family 0: the kept plan (family 0 alone) would miss it */
  exec_ok(db, "UPSERT INTO T (K, B) VALUES (5, 5)");
  assert_int_equal(rows_of(st), 5);
  assert_false(skips_key_family(db, sel));
  rowan_finalize(st);
  assert_int_equal(rowan_close(db), ROWAN_OK);
  /* the catalog kept it: after a reopen the scan still reads the key family */
  db = tu_open_mem(env);
  assert_false(skips_key_family(db, sel));
  assert_int_equal(tu_one_int(db, "SELECT COUNT(*) FROM (SELECT K, A FROM T)"), 5);
  assert_int_equal(rowan_close(db), ROWAN_OK);
  kv_env_free(env);
}

static void statement_between_rows_goes_on(void **state) {
  (void)state;
  kv_env *env = kv_env_mem_new(1700000000000LL);
  rowan_db *db = tu_open_mem(env);
  exec_ok(db, "CREATE TABLE T (K INTEGER NOT NULL PRIMARY KEY, A INTEGER)");
  exec_ok(db, "UPSERT INTO T VALUES (1, 1), (2, 2), (3, 3)");
  rowan_stmt *st;
  assert_int_equal(rowan_prepare(db, "SELECT K, A FROM T", -1, &st, NULL), ROWAN_OK);
  assert_int_equal(rowan_step(st), ROWAN_ROW);
  assert_int_equal(rowan_column_int64(st, 0), 1);
  exec_ok(db, "UPSERT INTO T VALUES (4, NULL)"); /* family 0 stops covering */
  /* the open scan reads its snapshot: the rows before the write, no error */
  assert_int_equal(rowan_step(st), ROWAN_ROW);
  assert_int_equal(rowan_column_int64(st, 0), 2);
  assert_int_equal(rowan_step(st), ROWAN_ROW);
  assert_int_equal(rowan_column_int64(st, 0), 3);
  assert_int_equal(rowan_step(st), ROWAN_DONE);
  assert_int_equal(rows_of(st), 4); /* its next run sees the new row */
  rowan_finalize(st);
  assert_int_equal(rowan_close(db), ROWAN_OK);
  kv_env_free(env);
}

/* A bulk load whose rows lack family 0's column, committed with sync off, then the power
** goes: the load's store files are durable, so the row cover change must be too. */
static void bulk_rows_survive_power_cut(void **state) {
  (void)state;
  kv_env *env = kv_env_mem_new(1700000000000LL);
  rowan_db *db = tu_open_mem(env);
  exec_ok(db, "CREATE TABLE T (K INTEGER NOT NULL PRIMARY KEY, A INTEGER, M.B INTEGER)");
  exec_ok(db, "UPSERT INTO T VALUES (1, 1, 1)");
  rowan_bulk *bl;
  const char *cols[] = {"K", "A", "B"};
  assert_int_equal(rowan_bulk_begin(db, "T", 3, cols, &bl), ROWAN_OK);
  int n = (int)tu_scaled(2000, 200), nulls = 0;
  for (int i = 0; i < n; i++) {
    char k[16], a[16], b[16];
    snprintf(k, sizeof k, "%d", 100 + i);
    snprintf(a, sizeof a, "%d", i);
    snprintf(b, sizeof b, "%d", -i);
    bool null_a = i % 7 == 3;
    nulls += null_a;
    const char *f[] = {k, null_a ? NULL : a, b};
    const int len[] = {(int)strlen(k), null_a ? 0 : (int)strlen(a), (int)strlen(b)};
    assert_int_equal(rowan_bulk_add_text(bl, f, len), ROWAN_OK);
  }
  assert_int_equal(rowan_bulk_commit(bl), ROWAN_OK);
  kv_env_mem_set_crashed(env, true); /* the process dies right after the commit */
  rowan_close(db);
  kv_env_mem_power_cut(env);
  db = tu_open_mem(env);
  assert_false(skips_key_family(db, "SELECT K, A FROM T"));
  assert_int_equal(tu_one_int(db, "SELECT COUNT(*) FROM (SELECT K, A FROM T)"), n + 1);
  assert_int_equal(tu_one_int(db, "SELECT COUNT(*) FROM (SELECT K, A FROM T) WHERE A IS NULL"),
                   nulls);
  assert_true(skips_key_family(db, "SELECT K, B FROM T")); /* every row has B */
  assert_int_equal(rowan_close(db), ROWAN_OK);
  kv_env_free(env);
}

/* The catalog's commit fails (the WAL append): the UPSERT fails, nothing of it is written,
** the family still covers; once the store takes writes again the same UPSERT works. */
static void failed_catalog_commit_fails_the_write(void **state) {
  (void)state;
  kv_env *env = kv_env_mem_new(1700000000000LL);
  rowan_db *db = tu_open_mem_sync(env, ROWAN_SYNC_FULL); /* each commit appends at once */
  exec_ok(db, "CREATE TABLE T (K INTEGER NOT NULL PRIMARY KEY, A INTEGER)");
  exec_ok(db, "UPSERT INTO T VALUES (1, 1)");
  kv_env_mem_fail(env, KV_FAULT_APPEND, 1, NULL, KV_FAULT_EIO, 0);
  int rc = rowan_exec(db, "UPSERT INTO T VALUES (2, NULL)", NULL, NULL);
  assert_int_not_equal(rc, ROWAN_OK);
  assert_non_null(strstr(rowan_errmsg(db), "T"));
  kv_env_mem_clear_faults(env);
  rowan_close(db); /* a failed WAL append may leave the handle refusing writes */
  db = tu_open_mem(env);
  assert_int_equal(tu_one_int(db, "SELECT COUNT(*) FROM T"), 1);
  assert_true(skips_key_family(db, "SELECT K, A FROM T"));
  exec_ok(db, "UPSERT INTO T VALUES (2, NULL)");
  assert_int_equal(tu_one_int(db, "SELECT COUNT(*) FROM (SELECT K, A FROM T)"), 2);
  assert_false(skips_key_family(db, "SELECT K, A FROM T"));
  assert_int_equal(rowan_close(db), ROWAN_OK);
  kv_env_free(env);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(prepared_plans_again),
      cmocka_unit_test(statement_between_rows_goes_on),
      cmocka_unit_test(bulk_rows_survive_power_cut),
      cmocka_unit_test(failed_catalog_commit_fails_the_write),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
