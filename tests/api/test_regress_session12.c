/*
** tests/api/test_regress_session12.c: ways to break the row cover (docs/FORMAT_SQL.md "Row
** cover") that need the API: the in-memory env's clock (a TTL set by ALTER TABLE after
** writes that kept a family's cover because the row already had a cell there), a read-only
** handle that catches up with a writer breaking the cover, statements large enough to move
** into a bulk load, and a power cut after a family's memstore flushed alone (sync off).
** Each answer is checked against the rows the test knows are alive or against the key
** family's own count (SELECT K reads only the key family).
** Not here: the SQL-level cases (tests/sql/regress_session12.test).
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

#define NOW0 1700000000000LL

/* A row written whole at t0 and updated in family G only at t0 + 50 s keeps family 0's cover
** (its cell of A is there). A TTL of 100 s set afterwards expires A's cell at t0 + 100 s
** while the row lives on (its marker is 50 s younger): a scan of family 0 alone would miss
** it. */
static void ttl_set_after_kept_cover(void **state) {
  (void)state;
  kv_env *env = kv_env_mem_new(NOW0);
  rowan_db *db = tu_open_mem(env);
  exec_ok(db, "CREATE TABLE T (K INTEGER NOT NULL PRIMARY KEY, A INTEGER, G.X INTEGER)");
  exec_ok(db, "UPSERT INTO T VALUES (1, 1, 1), (2, 2, 2)");
  kv_env_mem_set_time(env, NOW0 + 50000);
  exec_ok(db, "UPSERT INTO T (K, X) VALUES (1, 10)");
  exec_ok(db, "ALTER TABLE T SET TTL = 100");
  kv_env_mem_set_time(env, NOW0 + 120000);
  /* row 1 lives (marker and X at t0 + 50 s), its A has expired; row 2 is gone */
  assert_int_equal(tu_one_int(db, "SELECT COUNT(*) FROM T"), 1);
  assert_int_equal(tu_one_int(db, "SELECT COUNT(*) FROM (SELECT K, A FROM T)"), 1);
  assert_int_equal(tu_one_int(db, "SELECT COUNT(*) FROM (SELECT /*+ NO_PUSHDOWN */ K, A FROM T)"), 1);
  assert_int_equal(tu_one_int(db, "SELECT COUNT(*) FROM T GROUP BY A"), 1);
  assert_int_equal(rowan_close(db), ROWAN_OK);
  db = tu_open_mem(env); /* the table record says so too */
  assert_int_equal(tu_one_int(db, "SELECT COUNT(*) FROM (SELECT K, A FROM T)"), 1);
  assert_int_equal(rowan_close(db), ROWAN_OK);
  kv_env_free(env);
}

/* "/db" of env opened with sync mode `sync`, bulk_memory and memstore_size (0: defaults);
** the options used in *o (for a reader beside it). */
static rowan_db *open_with(kv_env *env, int sync, size_t bulk_memory, size_t memstore,
                           rowan_options *o) {
  rowan_options_init(o);
  o->kv_env = env;
  o->sync_mode = sync;
  o->bulk_memory = bulk_memory;
  o->memstore_size = memstore;
  rowan_db *db = NULL;
  assert_int_equal(rowan_open("/db", o, &db), ROWAN_OK);
  return db;
}

/* Rows of `SELECT K, A FROM T` (a scan of family 0, without _k while it covers) must be
** those of `SELECT K FROM T` (the key family alone). */
static void same_rows(rowan_db *db) {
  int64_t all = tu_one_int(db, "SELECT COUNT(*) FROM (SELECT K FROM T)");
  assert_int_equal(tu_one_int(db, "SELECT COUNT(*) FROM (SELECT K, A FROM T)"), all);
  assert_int_equal(tu_one_int(db, "SELECT COUNT(*) FROM (SELECT K, X FROM T)"), all);
  assert_int_equal(tu_one_int(db, "SELECT SUM(N) FROM (SELECT A, COUNT(*) AS N FROM T GROUP BY A)"),
                   all);
}

/* A reader opened while family 0 covered every row; the writer then adds rows with nothing
** there (a row, a bulk load, a statement moved into a bulk load). After rowan_refresh the
** reader's kept and new statements find them. */
static void reader_refresh_after_cover_loss(void **state) {
  (void)state;
  kv_env *env = kv_env_mem_new(NOW0);
  rowan_options o; /* the reader reads what the log holds; past 64 KiB a statement spills */
  rowan_db *db = open_with(env, ROWAN_SYNC_NORMAL, 1u << 20, 0, &o);
  exec_ok(db, "CREATE TABLE T (K INTEGER NOT NULL PRIMARY KEY, A INTEGER, G.X VARCHAR)");
  exec_ok(db, "UPSERT INTO T VALUES (1, 1, 'x'), (2, 2, 'y')");
  rowan_options ro = o;
  ro.read_only = 1;
  rowan_db *r = NULL;
  if (rowan_open("/db", &ro, &r) != ROWAN_OK) fail_msg("reader: %s", rowan_errmsg(r));
  rowan_stmt *kept;
  if (rowan_prepare(r, "SELECT COUNT(*) FROM (SELECT K, A FROM T)", -1, &kept, NULL) != ROWAN_OK)
    fail_msg("%s", rowan_errmsg(r));
  assert_int_equal(rowan_step(kept), ROWAN_ROW);
  assert_int_equal(rowan_column_int64(kept, 0), 2);
  rowan_reset(kept);
  exec_ok(db, "UPSERT INTO T (K, X) VALUES (3, 'z')");
  assert_int_equal(rowan_refresh(r), ROWAN_OK);
  assert_int_equal(rowan_step(kept), ROWAN_ROW);
  assert_int_equal(rowan_column_int64(kept, 0), 3);
  rowan_reset(kept);
  same_rows(r);
  /* a bulk load whose rows lack A, then a statement large enough to spill */
  rowan_bulk *bl;
  const char *cols[] = {"K", "X"};
  assert_int_equal(rowan_bulk_begin(db, "T", 2, cols, &bl), ROWAN_OK);
  const char *row[] = {"4", "bulk"};
  const int lens[] = {1, 4};
  assert_int_equal(rowan_bulk_add_text(bl, row, lens), ROWAN_OK);
  assert_int_equal(rowan_bulk_commit(bl), ROWAN_OK);
  exec_ok(db, "UPSERT INTO T (K, X) SELECT K + 1000, X FROM T");
  assert_int_equal(rowan_refresh(r), ROWAN_OK);
  assert_int_equal(rowan_step(kept), ROWAN_ROW);
  assert_int_equal(rowan_column_int64(kept, 0), 8);
  same_rows(r);
  rowan_finalize(kept);
  assert_int_equal(rowan_close(r), ROWAN_OK);
  same_rows(db);
  assert_int_equal(rowan_close(db), ROWAN_OK);
  kv_env_free(env);
}

/* One UPSERT SELECT large enough to move into a bulk load (bulk_memory 1 MiB: past 64 KiB)
** that updates existing rows in family G only (their cells of A stay: the cover may stay),
** writes each key twice, and then adds keys that have nothing in family 0. */
static void spilled_statement_keeps_no_false_cover(void **state) {
  (void)state;
  kv_env *env = kv_env_mem_new(NOW0);
  rowan_options o;
  rowan_db *db = open_with(env, ROWAN_SYNC_OFF, 1u << 20, 0, &o);
  exec_ok(db, "CREATE TABLE S (K INTEGER NOT NULL PRIMARY KEY, X VARCHAR)");
  exec_ok(db, "CREATE TABLE T (K INTEGER NOT NULL PRIMARY KEY, A INTEGER, G.X VARCHAR)");
  char sql[256];
  for (int i = 0; i < 4000; i += 4) {
    snprintf(sql, sizeof sql, "UPSERT INTO S VALUES (%d, '%0100d'), (%d, 'b'), (%d, 'c'), (%d, 'd')",
             i, i, i + 1, i + 2, i + 3);
    exec_ok(db, sql);
  }
  assert_int_equal(tu_one_int(db, "SELECT COUNT(*) FROM S"), 4000);
  exec_ok(db, "UPSERT INTO T (K, A, X) SELECT K, 1, 'a' FROM S WHERE K < 2000");
  /* existing keys first (in family G only), then the same keys again, then new ones */
  exec_ok(db, "UPSERT INTO T (K, X) SELECT MOD(K, 2000), X FROM S");
  assert_int_equal(tu_one_int(db, "SELECT COUNT(*) FROM T"), 2000);
  same_rows(db);
  exec_ok(db, "UPSERT INTO T (K, X) SELECT K + 2000, X FROM S WHERE K >= 1000");
  assert_int_equal(tu_one_int(db, "SELECT COUNT(*) FROM T"), 5000);
  same_rows(db);
  assert_int_equal(rowan_close(db), ROWAN_OK);
  db = tu_open_mem(env);
  same_rows(db);
  assert_int_equal(rowan_close(db), ROWAN_OK);
  kv_env_free(env);
}

/* Sync off: a row without a cell in family 0 commits after the catalog's record that says 0
** no longer covers, both in the log's unsynced tail; then enough rows of family G alone
** follow for G's memstore to flush by itself (a store file and a MANIFEST record, synced)
** while the catalog's memstore does not. The power goes. Whatever survives, a row the store
** shows must be found by a scan of family 0. */
static void power_cut_after_table_flush(void **state) {
  (void)state;
  kv_env *env = kv_env_mem_new(NOW0);
  rowan_options o;
  rowan_db *db = open_with(env, ROWAN_SYNC_OFF, 0, 64u << 10, &o);
  exec_ok(db, "CREATE TABLE T (K INTEGER NOT NULL PRIMARY KEY, A INTEGER, G.X VARCHAR)");
  exec_ok(db, "UPSERT INTO T VALUES (1, 1, 'x')");
  assert_int_equal(rowan_flush(db), ROWAN_OK);
  exec_ok(db, "UPSERT INTO T (K, X) VALUES (2, 'no A')"); /* family 0 stops covering */
  char sql[256];
  for (int i = 0; i < 400; i++) { /* existing row 1 updated in G: no catalog change */
    snprintf(sql, sizeof sql, "UPSERT INTO T (K, X) VALUES (1, '%0200d')", i);
    exec_ok(db, sql);
  }
  kv_env_mem_set_crashed(env, true);
  rowan_close(db);
  kv_env_mem_power_cut(env);
  db = NULL;
  if (rowan_open("/db", &o, &db) == ROWAN_OK) {
    same_rows(db);
    assert_int_equal(rowan_close(db), ROWAN_OK);
  } else { /* a store refused whole (its log ends before its files) shows nothing wrong */
    rowan_close(db);
  }
  kv_env_free(env);
}

/* The catalog's commit that would uncover family 0 fails (its WAL append): inside a
** transaction only the statement fails and the transaction commits without its row; in a bulk
** load only that row is refused and the load commits the others; family 0 still covers and
** every row committed is found through it. */
static void failed_cover_commit_in_txn_and_bulk(void **state) {
  (void)state;
  kv_env *env = kv_env_mem_new(NOW0);
  rowan_options o;
  rowan_db *db = open_with(env, ROWAN_SYNC_FULL, 0, 0, &o); /* each commit appends at once */
  exec_ok(db, "CREATE TABLE T (K INTEGER NOT NULL PRIMARY KEY, A INTEGER, G.X VARCHAR)");
  exec_ok(db, "BEGIN");
  exec_ok(db, "UPSERT INTO T VALUES (1, 1, 'a')");
  kv_env_mem_fail(env, KV_FAULT_APPEND, 1, NULL, KV_FAULT_EIO, 0);
  assert_int_not_equal(rowan_exec(db, "UPSERT INTO T (K, X) VALUES (2, 'no A')", NULL, NULL),
                       ROWAN_OK);
  kv_env_mem_clear_faults(env);
  int rc = rowan_exec(db, "COMMIT", NULL, NULL);
  rowan_close(db); /* a failed WAL append may leave the handle refusing writes */
  db = open_with(env, ROWAN_SYNC_FULL, 0, 0, &o);
  assert_int_equal(tu_one_int(db, "SELECT COUNT(*) FROM T"), rc == ROWAN_OK ? 1 : 0);
  assert_int_equal(tu_one_int(db, "SELECT COUNT(*) FROM T WHERE K = 2"), 0);
  same_rows(db);
  /* a bulk load: the second row has no A */
  rowan_bulk *bl;
  const char *cols[] = {"K", "A", "X"};
  assert_int_equal(rowan_bulk_begin(db, "T", 3, cols, &bl), ROWAN_OK);
  const char *r1[] = {"10", "10", "x"}, *r2[] = {"11", NULL, "y"}, *r3[] = {"12", "12", "z"};
  const int l1[] = {2, 2, 1}, l2[] = {2, 0, 1};
  assert_int_equal(rowan_bulk_add_text(bl, r1, l1), ROWAN_OK);
  kv_env_mem_fail(env, KV_FAULT_APPEND, 1, NULL, KV_FAULT_EIO, 0);
  assert_int_not_equal(rowan_bulk_add_text(bl, r2, l2), ROWAN_OK);
  kv_env_mem_clear_faults(env);
  /* the store may refuse writes after the failed append: then the load fails whole */
  if (rowan_bulk_add_text(bl, r3, l1) != ROWAN_OK) rowan_bulk_abort(bl);
  else if (rowan_bulk_commit(bl) == ROWAN_OK) /* frees the load whatever the result */
    assert_int_equal(tu_one_int(db, "SELECT COUNT(*) FROM T WHERE K >= 10"), 2);
  rowan_close(db);
  db = open_with(env, ROWAN_SYNC_FULL, 0, 0, &o);
  assert_int_equal(tu_one_int(db, "SELECT COUNT(*) FROM T WHERE K = 11"), 0);
  same_rows(db);
  assert_int_equal(rowan_close(db), ROWAN_OK);
  kv_env_free(env);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(ttl_set_after_kept_cover),
      cmocka_unit_test(reader_refresh_after_cover_loss),
      cmocka_unit_test(spilled_statement_keeps_no_false_cover),
      cmocka_unit_test(power_cut_after_table_flush),
      cmocka_unit_test(failed_cover_commit_in_txn_and_bulk),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
