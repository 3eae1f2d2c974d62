/*
** tests/api/test_view.c: views through the C API: a view's rows and column names seen by
** SELECT as a table's, views kept across a reopen (the text as written, a view over a view,
** the order of views that read views), a statement prepared on a view that binds again when
** the view is dropped (an error naming it) or created, the errors' offsets into the
** statement, UPSERT and DELETE through a view across a reopen, a DROP TABLE ... CASCADE
** that stays done after a reopen, a read-only handle that sees views change at its
** rowan_refresh, and a view with columns of its own through a prepared statement.
** Not here: SQL results of every view kind (tests/sql/view*.test), the shell (tests/cli).
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

static void reopen(fixture *f) {
  assert_int_equal(rowan_close(f->db), ROWAN_OK);
  f->db = open_db(f->env);
}

static int setup(void **state) {
  fixture *f = calloc(1, sizeof *f);
  f->env = kv_env_mem_new(0);
  f->db = open_db(f->env);
  exec_ok(f->db, "CREATE TABLE T (TENANT VARCHAR NOT NULL, ID INTEGER NOT NULL, V VARCHAR "
                 "CONSTRAINT PK PRIMARY KEY (TENANT, ID));"
                 "UPSERT INTO T VALUES ('a', 1, 'x'), ('a', 2, 'y'), ('b', 1, 'z')");
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

/* The first column of every row of sql, joined by commas, into buf. */
static const char *column0(rowan_db *db, const char *sql, char *buf, size_t cap) {
  rowan_stmt *st = NULL;
  assert_int_equal(rowan_prepare(db, sql, -1, &st, NULL), ROWAN_OK);
  size_t n = 0;
  buf[0] = 0;
  int rc;
  while ((rc = rowan_step(st)) == ROWAN_ROW)
    n += (size_t)snprintf(buf + n, cap - n, "%s%s", n ? "," : "",
                          (const char *)rowan_column_text(st, 0));
  assert_int_equal(rc, ROWAN_DONE);
  rowan_finalize(st);
  return buf;
}

static void test_select_and_reopen(void **state) {
  fixture *f = *state;
  char buf[256];
  exec_ok(f->db, "create view va as select * from t where tenant = 'a'");
  exec_ok(f->db, "CREATE VIEW VB AS SELECT ID, V AS W FROM VA WHERE ID > 1");
  rowan_stmt *st = NULL;
  assert_int_equal(rowan_prepare(f->db, "SELECT * FROM VB", -1, &st, NULL), ROWAN_OK);
  assert_int_equal(rowan_column_count(st), 2);
  assert_string_equal(rowan_column_name(st, 1), "W");
  assert_int_equal(rowan_step(st), ROWAN_ROW);
  assert_int_equal(rowan_column_int64(st, 0), 2);
  assert_string_equal((const char *)rowan_column_text(st, 1), "y");
  assert_int_equal(rowan_step(st), ROWAN_DONE);
  rowan_finalize(st);
  reopen(f);
  assert_string_equal(column0(f->db, "SELECT ID FROM VA ORDER BY ID", buf, sizeof buf), "1,2");
  assert_string_equal(column0(f->db, "SELECT W FROM VB", buf, sizeof buf), "y");
  /* the text is kept as written, lower case and all */
  exec_ok(f->db, "CREATE TABLE S (K INTEGER PRIMARY KEY)");
  reopen(f);
  assert_string_equal(column0(f->db, "SELECT COUNT(*) FROM VA", buf, sizeof buf), "2");
}

static void test_prepared_statement_follows_drop_and_create(void **state) {
  fixture *f = *state;
  exec_ok(f->db, "CREATE VIEW VA AS SELECT * FROM T WHERE TENANT = 'a'");
  rowan_stmt *st = NULL;
  assert_int_equal(rowan_prepare(f->db, "SELECT COUNT(*) FROM VA", -1, &st, NULL), ROWAN_OK);
  assert_int_equal(rowan_step(st), ROWAN_ROW);
  assert_int_equal(rowan_column_int64(st, 0), 2);
  assert_int_equal(rowan_reset(st), ROWAN_OK);
  exec_ok(f->db, "DROP VIEW VA");
  assert_int_equal(rowan_step(st), ROWAN_ERROR);
  assert_non_null(strstr(rowan_errmsg(f->db), "unknown table \"VA\""));
  rowan_reset(st);
  exec_ok(f->db, "CREATE VIEW VA AS SELECT * FROM T WHERE TENANT = 'b'");
  assert_int_equal(rowan_step(st), ROWAN_ROW);
  assert_int_equal(rowan_column_int64(st, 0), 1);
  rowan_finalize(st);
}

static void test_errors_have_offsets(void **state) {
  fixture *f = *state;
  rowan_stmt *st = NULL;
  const char *sql = "CREATE VIEW V1 AS SELECT NOPE FROM T";
  assert_int_equal(rowan_prepare(f->db, sql, -1, &st, NULL), ROWAN_OK);
  assert_int_equal(rowan_step(st), ROWAN_ERROR);
  assert_int_equal(rowan_error_offset(f->db), (int)(strstr(sql, "NOPE") - sql));
  rowan_finalize(st);
  exec_ok(f->db, "CREATE VIEW VA AS SELECT * FROM T WHERE TENANT = 'a'");
  sql = "UPSERT INTO VA VALUES ('b', 5, 'q')";
  assert_int_equal(rowan_prepare(f->db, sql, -1, &st, NULL), ROWAN_CONSTRAINT);
  assert_null(st);
  assert_int_equal(rowan_error_offset(f->db), (int)(strstr(sql, "'b'") - sql));
  sql = "DROP TABLE T";
  assert_int_equal(rowan_exec(f->db, sql, NULL, NULL), ROWAN_ERROR);
  assert_non_null(strstr(rowan_errmsg(f->db), "cannot drop table T: view VA reads it"));
}

static void test_writes_through_a_view_and_cascade(void **state) {
  fixture *f = *state;
  char buf[256];
  exec_ok(f->db, "CREATE VIEW VA AS SELECT * FROM T WHERE TENANT = 'a'");
  reopen(f);
  exec_ok(f->db, "UPSERT INTO VA (ID, V) VALUES (7, 'n')");
  exec_ok(f->db, "DELETE FROM VA WHERE ID = 1");
  reopen(f);
  assert_string_equal(column0(f->db, "SELECT TENANT || ID FROM T", buf, sizeof buf), "a2,a7,b1");
  exec_ok(f->db, "CREATE VIEW VV AS SELECT * FROM VA WHERE V = 'n'");
  exec_ok(f->db, "DROP TABLE T CASCADE");
  reopen(f);
  assert_int_equal(rowan_exec(f->db, "SELECT * FROM VV", NULL, NULL), ROWAN_ERROR);
  assert_int_equal(rowan_exec(f->db, "SELECT * FROM VA", NULL, NULL), ROWAN_ERROR);
  /* the names are free again */
  exec_ok(f->db, "CREATE TABLE VA (K INTEGER PRIMARY KEY)");
  exec_ok(f->db, "CREATE TABLE T (K INTEGER PRIMARY KEY)");
}

/* A view with a column of its own through a prepared statement: run again with other
** parameter values (the plan kept or rebuilt), bound again after ALTER VIEW ADD (a new
** column at the end) and DROP COLUMN, and its values kept across a reopen. */
static void test_view_columns_prepared(void **state) {
  fixture *f = *state;
  char buf[256];
  exec_ok(f->db, "CREATE VIEW VA (NOTE VARCHAR, M.N INTEGER) AS SELECT * FROM T WHERE TENANT = 'a';"
                 "UPSERT INTO VA (ID, NOTE, N) VALUES (1, 'one', 10), (2, 'two', 20)");
  rowan_stmt *st = NULL;
  assert_int_equal(rowan_prepare(f->db, "SELECT NOTE || N FROM VA WHERE ID = ?", -1, &st, NULL),
                   ROWAN_OK);
  for (int id = 1; id <= 2; id++) {
    assert_int_equal(rowan_bind_int64(st, 1, id), ROWAN_OK);
    assert_int_equal(rowan_step(st), ROWAN_ROW);
    assert_string_equal((const char *)rowan_column_text(st, 0), id == 1 ? "one10" : "two20");
    assert_int_equal(rowan_step(st), ROWAN_DONE);
    assert_int_equal(rowan_reset(st), ROWAN_OK);
  }
  rowan_finalize(st);
  assert_int_equal(rowan_prepare(f->db, "SELECT * FROM VA WHERE ID = 1", -1, &st, NULL), ROWAN_OK);
  assert_int_equal(rowan_step(st), ROWAN_ROW);
  assert_int_equal(rowan_column_count(st), 5);
  assert_int_equal(rowan_reset(st), ROWAN_OK);
  exec_ok(f->db, "ALTER VIEW VA ADD EXTRA DOUBLE; ALTER VIEW VA DROP COLUMN NOTE");
  assert_int_equal(rowan_step(st), ROWAN_ROW);
  assert_int_equal(rowan_column_count(st), 5);
  assert_string_equal(rowan_column_name(st, 3), "N");
  assert_string_equal(rowan_column_name(st, 4), "EXTRA");
  rowan_finalize(st);
  reopen(f);
  assert_string_equal(column0(f->db, "SELECT N FROM VA", buf, sizeof buf), "10,20");
  assert_string_equal(column0(f->db, "SELECT COUNT(*) FROM T", buf, sizeof buf), "3");
}

/* A read-only handle beside the writer sees a view the writer creates, and loses one it
** drops, at its next rowan_refresh (the catalog is read again), not before. */
static void test_reader_sees_views_after_refresh(void **state) {
  fixture *f = *state;
  char buf[256];
  rowan_options o;
  rowan_options_init(&o);
  o.kv_env = f->env;
  o.read_only = 1;
  rowan_db *r = NULL;
  assert_int_equal(rowan_open("/db", &o, &r), ROWAN_OK);
  exec_ok(f->db, "CREATE VIEW VA AS SELECT * FROM T WHERE TENANT = 'a'");
  assert_int_equal(rowan_exec(r, "SELECT * FROM VA", NULL, NULL), ROWAN_ERROR);
  assert_int_equal(rowan_refresh(r), ROWAN_OK);
  assert_string_equal(column0(r, "SELECT ID FROM VA ORDER BY ID", buf, sizeof buf), "1,2");
  exec_ok(f->db, "DROP VIEW VA");
  assert_string_equal(column0(r, "SELECT COUNT(*) FROM VA", buf, sizeof buf), "2");
  assert_int_equal(rowan_refresh(r), ROWAN_OK);
  assert_int_equal(rowan_exec(r, "SELECT * FROM VA", NULL, NULL), ROWAN_ERROR);
  assert_int_equal(rowan_close(r), ROWAN_OK);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_select_and_reopen, setup, teardown),
      cmocka_unit_test_setup_teardown(test_prepared_statement_follows_drop_and_create, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_errors_have_offsets, setup, teardown),
      cmocka_unit_test_setup_teardown(test_writes_through_a_view_and_cascade, setup, teardown),
      cmocka_unit_test_setup_teardown(test_reader_sees_views_after_refresh, setup, teardown),
      cmocka_unit_test_setup_teardown(test_view_columns_prepared, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
