/*
** tests/api/test_regress_drop_sync_off.c: a process crash after DROP TABLE / DROP INDEX in
** sync mode off must leave a store that opens. The bug: the catalog's deletion was a WAL
** commit still in the process's buffer while kv_drop_table had already written its MANIFEST
** edit; after a kill the catalog named a kv table that no longer existed and every open
** failed with "catalog: family of table: no table '$t1.X'" (all data out of reach). The
** catalog now makes its deletion durable before it drops the kv table.
** A child process does the DDL (with enough writes between that the WAL buffer reaches the
** file) and ends with _exit, without closing: what a crash leaves. The parent reopens.
** Not here: kill -9 of a writer in sync modes full and normal (test_regress_kill9.c).
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "rowan.h"

static void child_exec(rowan_db *db, const char *sql) {
  int rc = rowan_exec(db, sql, NULL, NULL);
  if (rc != ROWAN_OK) {
    fprintf(stderr, "child: %s: %s\n", sql, rowan_errmsg(db));
    _exit(3);
  }
}

/* Rows enough to push the WAL buffer (holding the CREATE's catalog rows) out to the file. */
static void child_fill(rowan_db *db) {
  static char sql[1 << 17];
  for (int b = 0; b < 24; b++) {
    int n = snprintf(sql, sizeof sql, "UPSERT INTO Y VALUES ");
    for (int i = 0; i < 1000; i++)
      n += snprintf(sql + n, sizeof sql - (size_t)n, "%s(%d, 'padding padding padding %d')",
                    i ? "," : "", b * 1000 + i, i);
    child_exec(db, sql);
  }
}

/* Run `ddl` in a child on a fresh store in sync mode off, then end the child without
** closing; reopen in the parent and return the handle. */
static rowan_db *crash_after(const char *dir, const char *ddl) {
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  assert_int_equal(system(cmd), 0);
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    rowan_options o;
    rowan_options_init(&o);
    o.sync_mode = ROWAN_SYNC_OFF;
    rowan_db *db = NULL;
    if (rowan_open(dir, &o, &db) != ROWAN_OK) _exit(2);
    child_exec(db, "CREATE TABLE X (K INTEGER PRIMARY KEY, V VARCHAR)");
    child_exec(db, "CREATE TABLE Y (K INTEGER PRIMARY KEY, V VARCHAR)");
    child_exec(db, "CREATE INDEX YV ON Y (V)");
    child_fill(db);
    child_exec(db, ddl);
    _exit(0); /* a crash: the WAL buffer is lost */
  }
  int status = 0;
  assert_int_equal(waitpid(pid, &status, 0), pid);
  assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  rowan_options o;
  rowan_options_init(&o);
  o.create_if_missing = 0;
  rowan_db *db = NULL;
  int rc = rowan_open(dir, &o, &db);
  if (rc != ROWAN_OK) fprintf(stderr, "reopen after %s: %s\n", ddl, db ? rowan_errmsg(db) : "?");
  assert_int_equal(rc, ROWAN_OK);
  return db;
}

static int step_code(rowan_db *db, const char *sql) {
  rowan_stmt *st = NULL;
  int rc = rowan_prepare(db, sql, -1, &st, NULL);
  if (rc != ROWAN_OK) return rc;
  while ((rc = rowan_step(st)) == ROWAN_ROW) {}
  rowan_finalize(st);
  return rc == ROWAN_DONE ? ROWAN_OK : rc;
}

static void test_drop_table_then_crash(void **state) {
  (void)state;
  char dir[] = "/tmp/rowan_dropoff_XXXXXX";
  assert_non_null(mkdtemp(dir));
  char db_dir[64];
  snprintf(db_dir, sizeof db_dir, "%s/db", dir);
  rowan_db *db = crash_after(db_dir, "DROP TABLE X");
  /* The DROP returned, so it holds: X is gone; Y is readable. */
  assert_int_equal(step_code(db, "SELECT COUNT(*) FROM X"), ROWAN_ERROR);
  assert_non_null(strstr(rowan_errmsg(db), "unknown table"));
  assert_int_equal(step_code(db, "SELECT COUNT(*) FROM Y"), ROWAN_OK);
  /* The name can be used again. */
  assert_int_equal(rowan_exec(db, "CREATE TABLE X (K VARCHAR PRIMARY KEY)", NULL, NULL),
                   ROWAN_OK);
  assert_int_equal(rowan_close(db), ROWAN_OK);
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  assert_int_equal(system(cmd), 0);
}

static void test_drop_index_then_crash(void **state) {
  (void)state;
  char dir[] = "/tmp/rowan_dropoff_XXXXXX";
  assert_non_null(mkdtemp(dir));
  char db_dir[64];
  snprintf(db_dir, sizeof db_dir, "%s/db", dir);
  rowan_db *db = crash_after(db_dir, "DROP INDEX YV ON Y");
  assert_int_equal(step_code(db, "DROP INDEX YV ON Y"), ROWAN_ERROR);
  assert_non_null(strstr(rowan_errmsg(db), "does not exist"));
  assert_int_equal(step_code(db, "SELECT COUNT(*) FROM Y WHERE V >= ''"), ROWAN_OK);
  assert_int_equal(rowan_close(db), ROWAN_OK);
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  assert_int_equal(system(cmd), 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_drop_table_then_crash),
      cmocka_unit_test(test_drop_index_then_crash),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
