/*
** tests/api/test_alter.c: ALTER TABLE through the C API, with statements prepared before it.
** A statement prepared on the old schema binds again at its next run (as SQLite re-prepares):
** SELECT * gains an added column (NULL in the old rows) and loses a dropped one; a column
** dropped and added again with another type reads the new type's values, never the old
** cells; a statement naming a dropped column fails with an error naming it; one between rows
** when the ALTER commits either goes on with the rows due or fails saying the schema changed,
** and runs again after a reset. A prepared UPSERT keeps the indexes right across ADD and
** DROP (CHECK INDEX). ALTER is refused inside a transaction; the schema survives a reopen.
** Not here: the catalog's side (tests/catalog/test_alter.c), SQL results (tests/sql/alter.test).
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

typedef struct fixture {
  kv_env *env;  /* in-memory file system */
  rowan_db *db; /* connection on "/db" */
} fixture;

static rowan_db *open_db(kv_env *env) {
  rowan_options o;
  rowan_options_init(&o);
  o.kv_env = env;
  rowan_db *db = NULL;
  assert_int_equal(rowan_open("/db", &o, &db), ROWAN_OK);
  return db;
}

static int setup(void **state) {
  fixture *f = calloc(1, sizeof *f);
  f->env = kv_env_mem_new(0);
  f->db = open_db(f->env);
  exec_ok(f->db, "CREATE TABLE T (K INTEGER PRIMARY KEY, V VARCHAR, W INTEGER);"
                 "UPSERT INTO T VALUES (1, 'a', 10), (2, 'b', 20), (3, 'c', 30)");
  *state = f;
  return 0;
}

static int teardown(void **state) {
  fixture *f = *state;
  assert_int_equal(rowan_close(f->db), ROWAN_OK);
  kv_env_free(f->env);
  free(f);
  return 0;
}

static void test_select_star_follows_add_and_drop(void **state) {
  fixture *f = *state;
  rowan_stmt *st = NULL;
  assert_int_equal(rowan_prepare(f->db, "SELECT * FROM T WHERE K = 2", -1, &st, NULL), ROWAN_OK);
  assert_int_equal(rowan_column_count(st), 3);
  exec_ok(f->db, "ALTER TABLE T ADD X DOUBLE, M.Y VARCHAR");
  assert_int_equal(rowan_step(st), ROWAN_ROW);
  assert_int_equal(rowan_column_count(st), 5);
  assert_string_equal(rowan_column_name(st, 3), "X");
  assert_string_equal(rowan_column_decltype(st, 4), "VARCHAR");
  assert_int_equal(rowan_column_type(st, 3), ROWAN_NULL);
  assert_string_equal(rowan_column_text(st, 1), "b");
  assert_int_equal(rowan_step(st), ROWAN_DONE);
  exec_ok(f->db, "ALTER TABLE T DROP COLUMN V");
  assert_int_equal(rowan_reset(st), ROWAN_OK);
  assert_int_equal(rowan_step(st), ROWAN_ROW);
  assert_int_equal(rowan_column_count(st), 4);
  assert_string_equal(rowan_column_name(st, 1), "W");
  assert_int_equal(rowan_column_int64(st, 1), 20);
  assert_int_equal(rowan_step(st), ROWAN_DONE);
  rowan_finalize(st);
}

/* V dropped and added again as an INTEGER: the prepared query reads the new column. */
static void test_readded_column_never_reads_old_cells(void **state) {
  fixture *f = *state;
  rowan_stmt *st = NULL;
  assert_int_equal(rowan_prepare(f->db, "SELECT K, V FROM T ORDER BY K", -1, &st, NULL), ROWAN_OK);
  assert_int_equal(rowan_step(st), ROWAN_ROW);
  assert_string_equal(rowan_column_text(st, 1), "a");
  assert_int_equal(rowan_reset(st), ROWAN_OK);
  assert_int_equal(rowan_flush(f->db), ROWAN_OK); /* the old cells in a store file too */
  exec_ok(f->db, "ALTER TABLE T DROP COLUMN V; ALTER TABLE T ADD V INTEGER;"
                 "UPSERT INTO T (K, V) VALUES (2, 200)");
  int64_t want[3] = {-1, 200, -1}; /* -1: NULL */
  for (int i = 0; i < 3; i++) {
    assert_int_equal(rowan_step(st), ROWAN_ROW);
    assert_string_equal(rowan_column_decltype(st, 1), "INTEGER");
    if (want[i] < 0) assert_int_equal(rowan_column_type(st, 1), ROWAN_NULL);
    else assert_int_equal(rowan_column_int64(st, 1), want[i]);
  }
  assert_int_equal(rowan_step(st), ROWAN_DONE);
  rowan_finalize(st);
}

static void test_query_on_dropped_column_fails(void **state) {
  fixture *f = *state;
  rowan_stmt *st = NULL;
  assert_int_equal(rowan_prepare(f->db, "SELECT W FROM T", -1, &st, NULL), ROWAN_OK);
  exec_ok(f->db, "ALTER TABLE T DROP COLUMN W");
  assert_int_equal(rowan_step(st), ROWAN_ERROR);
  assert_non_null(strstr(rowan_errmsg(f->db), "W"));
  rowan_finalize(st);
}

/* Between rows when the ALTER commits: the rows due, or "the schema changed"; then a reset
** runs it on the new schema. */
static void test_alter_between_rows(void **state) {
  fixture *f = *state;
  rowan_stmt *st = NULL;
  assert_int_equal(rowan_prepare(f->db, "SELECT K, W FROM T", -1, &st, NULL), ROWAN_OK);
  assert_int_equal(rowan_step(st), ROWAN_ROW);
  assert_int_equal(rowan_column_int64(st, 0), 1);
  exec_ok(f->db, "ALTER TABLE T ADD Z INTEGER");
  int rc, got = 1;
  while ((rc = rowan_step(st)) == ROWAN_ROW) {
    got++;
    assert_int_equal(rowan_column_int64(st, 0), got);
    assert_int_equal(rowan_column_int64(st, 1), got * 10);
  }
  if (rc == ROWAN_DONE) assert_int_equal(got, 3);
  else assert_non_null(strstr(rowan_errmsg(f->db), "schema changed"));
  assert_int_equal(rowan_reset(st), rc == ROWAN_DONE ? ROWAN_OK : rc); /* the failed step's */
  for (got = 0; rowan_step(st) == ROWAN_ROW; got++) {}
  assert_int_equal(got, 3);
  rowan_finalize(st);
}

static void check_index(rowan_db *db, const char *sql) {
  rowan_stmt *st = NULL;
  assert_int_equal(rowan_prepare(db, sql, -1, &st, NULL), ROWAN_OK);
  int rows = 0;
  while (rowan_step(st) == ROWAN_ROW) {
    const char *what = (const char *)rowan_column_text(st, 0);
    if (!strcmp(what, "MISSING") || !strcmp(what, "EXTRA") || !strcmp(what, "MISMATCHED"))
      assert_int_equal(rowan_column_int64(st, 1), 0);
    if (!strcmp(what, "DATA ROWS")) assert_int_equal(rowan_column_int64(st, 1), 4);
    rows++;
  }
  assert_true(rows >= 5);
  rowan_finalize(st);
}

/* A prepared UPSERT keeps the index on W (INCLUDE V) right across ADD and DROP. */
static void test_prepared_upsert_keeps_indexes(void **state) {
  fixture *f = *state;
  exec_ok(f->db, "CREATE INDEX IW ON T (W) INCLUDE (V)");
  rowan_stmt *up = NULL;
  assert_int_equal(rowan_prepare(f->db, "UPSERT INTO T (K, V, W) VALUES (?, ?, ?)", -1, &up, NULL),
                   ROWAN_OK);
  const int64_t keys[] = {1, 4, 2};
  for (int i = 0; i < 3; i++) {
    if (i == 1) exec_ok(f->db, "ALTER TABLE T ADD X INTEGER");
    if (i == 2) exec_ok(f->db, "ALTER TABLE T DROP COLUMN X");
    assert_int_equal(rowan_bind_int64(up, 1, keys[i]), ROWAN_OK);
    assert_int_equal(rowan_bind_text(up, 2, "z", -1), ROWAN_OK);
    assert_int_equal(rowan_bind_int64(up, 3, 100 + i), ROWAN_OK);
    assert_int_equal(rowan_step(up), ROWAN_DONE);
    assert_int_equal(rowan_reset(up), ROWAN_OK);
  }
  rowan_finalize(up);
  check_index(f->db, "CHECK INDEX IW ON T");
  rowan_stmt *st = NULL;
  assert_int_equal(rowan_prepare(f->db, "SELECT /*+ INDEX(T IW) */ K FROM T WHERE W >= 100 ORDER BY W",
                                 -1, &st, NULL), ROWAN_OK);
  for (int i = 0; i < 3; i++) {
    assert_int_equal(rowan_step(st), ROWAN_ROW);
    assert_int_equal(rowan_column_int64(st, 0), keys[i]);
  }
  assert_int_equal(rowan_step(st), ROWAN_DONE);
  rowan_finalize(st);
}

static void test_refused_in_transaction_and_kept_across_reopen(void **state) {
  fixture *f = *state;
  exec_ok(f->db, "BEGIN");
  rowan_stmt *st = NULL;
  assert_int_equal(rowan_prepare(f->db, "ALTER TABLE T ADD Q INTEGER", -1, &st, NULL), ROWAN_OK);
  assert_int_equal(rowan_step(st), ROWAN_ERROR);
  assert_non_null(strstr(rowan_errmsg(f->db), "transaction"));
  rowan_finalize(st);
  exec_ok(f->db, "ROLLBACK");
  exec_ok(f->db, "ALTER TABLE T ADD Q INTEGER; ALTER TABLE T SET TTL = 86400");
  /* the same ALTER again: an error naming the column, and nothing changes */
  assert_int_equal(rowan_prepare(f->db, "ALTER TABLE T ADD Q INTEGER", -1, &st, NULL), ROWAN_OK);
  assert_int_equal(rowan_step(st), ROWAN_ERROR);
  assert_non_null(strstr(rowan_errmsg(f->db), "already has a column Q"));
  assert_int_equal(rowan_error_offset(f->db), 18);
  rowan_finalize(st);
  assert_int_equal(rowan_close(f->db), ROWAN_OK);
  f->db = open_db(f->env);
  exec_ok(f->db, "UPSERT INTO T (K, Q) VALUES (1, 5)");
  assert_int_equal(rowan_prepare(f->db, "SELECT Q FROM T WHERE K = 1", -1, &st, NULL), ROWAN_OK);
  assert_int_equal(rowan_step(st), ROWAN_ROW);
  assert_int_equal(rowan_column_int64(st, 0), 5);
  rowan_finalize(st);
}

/* Every row of "SELECT K, W, V, X FROM T ORDER BY K" of the database at path as text. */
static void rows_of(kv_env *env, const char *path, char *out, size_t cap) {
  rowan_options o;
  rowan_options_init(&o);
  o.kv_env = env;
  rowan_db *db = NULL;
  assert_int_equal(rowan_open(path, &o, &db), ROWAN_OK);
  rowan_stmt *st = NULL;
  assert_int_equal(rowan_prepare(db, "SELECT K, W, V, X FROM T ORDER BY K", -1, &st, NULL),
                   ROWAN_OK);
  size_t n = 0;
  out[0] = 0;
  while (rowan_step(st) == ROWAN_ROW)
    for (int i = 0; i < 4; i++) {
      const char *t = (const char *)rowan_column_text(st, i);
      n += (size_t)snprintf(out + n, cap - n, "%s%c", t ? t : "NULL", i == 3 ? ';' : ',');
    }
  rowan_finalize(st);
  assert_int_equal(rowan_close(db), ROWAN_OK);
}

/* rowan_recover of an altered table (ids with a gap, a family added, options changed) gives
** the same rows, with the MANIFEST whole and without it (then the TABLEINFO files, written
** again by each ALTER, name the families). */
static void test_recover_after_alter(void **state) {
  fixture *f = *state;
  exec_ok(f->db, "ALTER TABLE T DROP COLUMN V; ALTER TABLE T ADD V INTEGER, M.X VARCHAR;"
                 "ALTER TABLE T SET M.VERSIONS = 2; UPSERT INTO T (K, V, X) VALUES (2, 7, 'x')");
  assert_int_equal(rowan_flush(f->db), ROWAN_OK);
  exec_ok(f->db, "UPSERT INTO T (K, V) VALUES (3, 9)");
  assert_int_equal(rowan_close(f->db), ROWAN_OK);
  char want[256], got[256];
  rows_of(f->env, "/db", want, sizeof want);
  assert_string_equal(want, "1,10,NULL,NULL;2,20,7,x;3,30,9,NULL;");
  for (int round = 0; round < 2; round++) {
    const char *dst = round ? "/new2" : "/new";
    if (round) assert_int_equal(f->env->remove(f->env, "/db/MANIFEST"), KV_OK);
    rowan_recover_options ro = {.kv_env = f->env};
    rowan_recover_report *rep = NULL;
    int rc = rowan_recover("/db", dst, &ro, &rep);
    if (rc != ROWAN_OK) fail_msg("rowan_recover: %s", rep ? rep->errmsg : "?");
    rowan_recover_report_free(rep);
    rows_of(f->env, dst, got, sizeof got);
    assert_string_equal(got, want);
  }
  f->db = open_db(f->env); /* for the teardown (the MANIFEST is gone: a new, empty store) */
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_select_star_follows_add_and_drop, setup, teardown),
      cmocka_unit_test_setup_teardown(test_readded_column_never_reads_old_cells, setup, teardown),
      cmocka_unit_test_setup_teardown(test_query_on_dropped_column_fails, setup, teardown),
      cmocka_unit_test_setup_teardown(test_alter_between_rows, setup, teardown),
      cmocka_unit_test_setup_teardown(test_prepared_upsert_keeps_indexes, setup, teardown),
      cmocka_unit_test_setup_teardown(test_refused_in_transaction_and_kept_across_reopen, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_recover_after_alter, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
