/*
** tests/api/test_api.c: the public C API (include/rowan.h) as an application uses it, on
** the in-memory file system: open/close and their errors (missing directory, locked,
** read-only), prepare with tails over multi-statement text, binds of every kind and their
** range and state checks, column getters and their SQLite-style conversions, misuse with
** NULL handles and wrong states (never a crash), errors with byte offsets, rowan_reset
** after a failed step (SQLite's return code and message), rowan_exec with
** callbacks, changes, transactions across close, EXPLAIN rows and statement metrics; the
** ":memory:" database; an hbase:// URI without HBase support.
** Not here: SQL semantics (the tests/sql .test files), differential checks (tests/exec/).
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "api/api_test.h"
#include "kv/env/env_mem.h"
#include "rowan.h"
#include "tu_api.h"

typedef struct fixture {
  kv_env *env;   /* in-memory file system */
  rowan_db *db;  /* connection on "/db" */
} fixture;

static rowan_db *open_db(kv_env *env, int read_only, int create) {
  rowan_options o;
  rowan_options_init(&o);
  o.kv_env = env;
  o.read_only = read_only;
  o.create_if_missing = create;
  rowan_db *db = NULL;
  int rc = rowan_open("/db", &o, &db);
  if (rc != ROWAN_OK) fprintf(stderr, "open: %s\n", db ? rowan_errmsg(db) : "?");
  assert_int_equal(rc, ROWAN_OK);
  return db;
}

static int setup(void **state) {
  fixture *f = calloc(1, sizeof *f);
  f->env = kv_env_mem_new(0);
  f->db = open_db(f->env, 0, 1);
  *state = f;
  return 0;
}

static int teardown(void **state) {
  fixture *f = *state;
  if (f->db) assert_int_equal(rowan_close(f->db), ROWAN_OK);
  kv_env_free(f->env);
  free(f);
  return 0;
}

static rowan_stmt *prep(rowan_db *db, const char *sql) {
  rowan_stmt *st = NULL;
  int rc = rowan_prepare(db, sql, -1, &st, NULL);
  if (rc != ROWAN_OK) fprintf(stderr, "%s\n  -> %s: %s\n", sql, rowan_errstr(rc), rowan_errmsg(db));
  assert_int_equal(rc, ROWAN_OK);
  assert_non_null(st);
  return st;
}

/* The single integer a query returns. */
static int64_t query_int(rowan_db *db, const char *sql) {
  rowan_stmt *st = prep(db, sql);
  assert_int_equal(rowan_step(st), ROWAN_ROW);
  int64_t v = rowan_column_int64(st, 0);
  assert_int_equal(rowan_step(st), ROWAN_DONE);
  rowan_finalize(st);
  return v;
}

/* ---- Lifecycle ---------------------------------------------------------------------------- */
static void test_open_close(void **state) {
  fixture *f = *state;
  rowan_options o;
  rowan_options_init(&o);
  assert_int_equal(o.create_if_missing, 1);
  assert_int_equal(o.sync_mode, ROWAN_SYNC_FULL);
  assert_int_equal(o.read_only, 0);
  /* A second open of the same directory is refused: the store's LOCK. */
  o.kv_env = f->env;
  rowan_db *db2 = NULL;
  assert_int_equal(rowan_open("/db", &o, &db2), ROWAN_LOCKED);
  assert_non_null(db2);
  assert_int_equal(rowan_errcode(db2), ROWAN_LOCKED);
  assert_non_null(strstr(rowan_errmsg(db2), "locked"));
  rowan_stmt *st = NULL;
  assert_int_equal(rowan_prepare(db2, "SELECT 1", -1, &st, NULL), ROWAN_MISUSE);
  assert_null(st);
  assert_int_equal(rowan_close(db2), ROWAN_OK);
  /* A missing directory without create. */
  o.create_if_missing = 0;
  assert_int_equal(rowan_open("/missing", &o, &db2), ROWAN_NOTFOUND);
  assert_non_null(db2);
  assert_non_null(strstr(rowan_errmsg(db2), "/missing"));
  assert_int_equal(rowan_close(db2), ROWAN_OK);
  /* Bad arguments. */
  assert_int_equal(rowan_open(NULL, &o, &db2), ROWAN_MISUSE);
  rowan_close(db2);
  assert_int_equal(rowan_open("/x", &o, NULL), ROWAN_MISUSE);
  o.sync_mode = 7;
  o.create_if_missing = 1;
  assert_int_equal(rowan_open("/y", &o, &db2), ROWAN_MISUSE);
  rowan_close(db2);
  assert_int_equal(rowan_close(NULL), ROWAN_OK);
  assert_string_equal(rowan_libversion(), ROWAN_VERSION);
  assert_string_equal(rowan_libversion(), "0.1.0");
}

static void test_reopen_and_readonly(void **state) {
  fixture *f = *state;
  exec_ok(f->db, "CREATE TABLE t (k INTEGER NOT NULL PRIMARY KEY, v VARCHAR)");
  exec_ok(f->db, "UPSERT INTO t VALUES (1, 'a'), (2, 'b')");
  /* An open transaction is rolled back by close. */
  exec_ok(f->db, "BEGIN; UPSERT INTO t VALUES (3, 'c')");
  assert_int_equal(query_int(f->db, "SELECT COUNT(*) FROM t"), 3);
  assert_int_equal(rowan_close(f->db), ROWAN_OK);
  f->db = open_db(f->env, 1, 0);
  assert_int_equal(query_int(f->db, "SELECT COUNT(*) FROM t"), 2);
  assert_int_equal(rowan_exec(f->db, "UPSERT INTO t VALUES (4, 'd')", NULL, NULL), ROWAN_READONLY);
  assert_int_equal(rowan_errcode(f->db), ROWAN_READONLY);
  assert_int_equal(query_int(f->db, "SELECT COUNT(*) FROM t"), 2);
  assert_int_equal(rowan_close(f->db), ROWAN_OK);
  f->db = open_db(f->env, 0, 0);
  exec_ok(f->db, "UPSERT INTO t VALUES (4, 'd')");
  assert_int_equal(query_int(f->db, "SELECT COUNT(*) FROM t"), 3);
}

/* ---- Prepare, tails ------------------------------------------------------------------------ */
static void test_tail(void **state) {
  fixture *f = *state;
  const char *sql = "CREATE TABLE t (k INTEGER NOT NULL PRIMARY KEY, v INTEGER);\n"
                    "UPSERT INTO t VALUES (1, 10); -- a comment\n"
                    "UPSERT INTO t VALUES (2, 20);;\n"
                    "/* only a comment */ SELECT SUM(v) FROM t; -- trailing\n";
  const char *p = sql;
  int n = 0, ncols_last = -1;
  for (;;) {
    rowan_stmt *st = NULL;
    const char *tail = NULL;
    assert_int_equal(rowan_prepare(f->db, p, -1, &st, &tail), ROWAN_OK);
    assert_non_null(tail);
    assert_true(tail >= p && tail <= sql + strlen(sql));
    if (!st) {
      assert_true(strspn(tail, " \n") == strlen(tail) || *tail == 0);
      break;
    }
    n++;
    int rc;
    while ((rc = rowan_step(st)) == ROWAN_ROW) {
      ncols_last = rowan_column_count(st);
      assert_int_equal(rowan_column_int64(st, 0), 30);
    }
    assert_int_equal(rc, ROWAN_DONE);
    rowan_finalize(st);
    p = tail;
  }
  assert_int_equal(n, 4);
  assert_int_equal(ncols_last, 1);
  /* Only whitespace and comments: no statement, OK. */
  rowan_stmt *st = (rowan_stmt *)1;
  assert_int_equal(rowan_prepare(f->db, "  -- nothing\n /* here */ ", -1, &st, NULL), ROWAN_OK);
  assert_null(st);
  /* An explicit length stops the text early. */
  const char *two = "SELECT 1; SELECT 2";
  const char *tail = NULL;
  st = NULL;
  assert_int_equal(rowan_prepare(f->db, two + 10, 8, &st, &tail), ROWAN_OK);
  assert_non_null(st);
  assert_ptr_equal(tail, two + 18);
  assert_int_equal(rowan_step(st), ROWAN_ROW);
  assert_int_equal(rowan_column_int64(st, 0), 2);
  rowan_finalize(st);
}

/* ---- Binds --------------------------------------------------------------------------------- */
static void test_binds(void **state) {
  fixture *f = *state;
  exec_ok(f->db, "CREATE TABLE b (k BIGINT NOT NULL PRIMARY KEY, d DOUBLE, s VARCHAR, y VARBINARY, "
                 "ts TIMESTAMP, i INTEGER)");
  rowan_stmt *ins = prep(f->db, "UPSERT INTO b VALUES (?, ?, ?, ?, ?, ?)");
  assert_int_equal(rowan_bind_parameter_count(ins), 6);
  const uint8_t blob[5] = {0, 1, 0xff, 0x80, 0};
  int64_t big = INT64_MIN + 1;
  assert_int_equal(rowan_bind_int64(ins, 1, big), ROWAN_OK);
  assert_int_equal(rowan_bind_double(ins, 2, -2.5e-3), ROWAN_OK);
  assert_int_equal(rowan_bind_text(ins, 3, "héllo, world", 6), ROWAN_OK); /* "héllo" */
  assert_int_equal(rowan_bind_blob(ins, 4, blob, 5), ROWAN_OK);
  assert_int_equal(rowan_bind_timestamp(ins, 5, 1456833600123LL), ROWAN_OK);
  assert_int_equal(rowan_bind_null(ins, 6), ROWAN_OK);
  /* Out of range and wrong state. */
  assert_int_equal(rowan_bind_int64(ins, 0, 1), ROWAN_RANGE);
  assert_int_equal(rowan_errcode(f->db), ROWAN_RANGE);
  assert_int_equal(rowan_bind_int64(ins, 7, 1), ROWAN_RANGE);
  assert_int_equal(rowan_bind_text(ins, -1, "x", -1), ROWAN_RANGE);
  assert_int_equal(rowan_step(ins), ROWAN_DONE);
  assert_int_equal(rowan_changes(f->db), 1);
  assert_int_equal(rowan_bind_int64(ins, 1, 5), ROWAN_MISUSE);
  /* Reset keeps bindings: a second run with a new key and a text by strlen. */
  assert_int_equal(rowan_reset(ins), ROWAN_OK);
  assert_int_equal(rowan_bind_int64(ins, 1, 7), ROWAN_OK);
  assert_int_equal(rowan_bind_text(ins, 3, "seven", -1), ROWAN_OK);
  assert_int_equal(rowan_bind_int64(ins, 6, 77), ROWAN_OK);
  assert_int_equal(rowan_step(ins), ROWAN_DONE);
  /* clear_bindings makes every parameter NULL: a NULL key is refused. */
  assert_int_equal(rowan_reset(ins), ROWAN_OK);
  assert_int_equal(rowan_clear_bindings(ins), ROWAN_OK);
  assert_int_equal(rowan_step(ins), ROWAN_CONSTRAINT);
  assert_int_equal(rowan_step(ins), ROWAN_MISUSE);
  assert_int_equal(rowan_reset(ins), ROWAN_CONSTRAINT); /* the failed step's code */
  rowan_finalize(ins);

  rowan_stmt *q = prep(f->db, "SELECT k, d, s, y, ts, i FROM b WHERE k = ?1 OR k = ?1 + 0");
  assert_int_equal(rowan_bind_parameter_count(q), 1);
  assert_int_equal(rowan_bind_int64(q, 1, big), ROWAN_OK);
  assert_int_equal(rowan_step(q), ROWAN_ROW);
  assert_int_equal(rowan_column_count(q), 6);
  assert_int_equal(rowan_column_type(q, 0), ROWAN_INTEGER);
  assert_true(rowan_column_int64(q, 0) == big);
  assert_int_equal(rowan_column_type(q, 1), ROWAN_FLOAT);
  assert_true(rowan_column_double(q, 1) == -2.5e-3);
  assert_int_equal(rowan_column_type(q, 2), ROWAN_TEXT);
  assert_string_equal(rowan_column_text(q, 2), "h\xc3\xa9llo");
  assert_int_equal(rowan_column_bytes(q, 2), 6);
  assert_int_equal(rowan_column_type(q, 3), ROWAN_BLOB);
  assert_int_equal(rowan_column_bytes(q, 3), 5);
  assert_memory_equal(rowan_column_blob(q, 3), blob, 5);
  assert_int_equal(rowan_column_type(q, 4), ROWAN_TIMESTAMP);
  assert_true(rowan_column_timestamp(q, 4) == 1456833600123LL);
  assert_string_equal(rowan_column_text(q, 4), "2016-03-01 12:00:00.123");
  assert_int_equal(rowan_column_type(q, 5), ROWAN_NULL);
  assert_null(rowan_column_text(q, 5));
  assert_int_equal(rowan_column_int64(q, 5), 0);
  assert_int_equal(rowan_step(q), ROWAN_DONE);
  /* The same statement with another binding: a point lookup on the new key. */
  assert_int_equal(rowan_reset(q), ROWAN_OK);
  assert_int_equal(rowan_bind_int64(q, 1, 7), ROWAN_OK);
  assert_int_equal(rowan_step(q), ROWAN_ROW);
  assert_string_equal(rowan_column_text(q, 2), "seven");
  assert_int_equal(rowan_column_int64(q, 5), 77);
  assert_int_equal(rowan_step(q), ROWAN_DONE);
  /* A text bound where a number is compared is converted. */
  assert_int_equal(rowan_reset(q), ROWAN_OK);
  assert_int_equal(rowan_bind_text(q, 1, "7", -1), ROWAN_OK);
  assert_int_equal(rowan_step(q), ROWAN_ROW);
  assert_int_equal(rowan_column_int64(q, 0), 7);
  rowan_finalize(q);
  /* Out-of-range timestamps are refused at bind. */
  q = prep(f->db, "SELECT ? FROM b");
  assert_int_equal(rowan_bind_timestamp(q, 1, INT64_MAX / 2), ROWAN_CONSTRAINT);
  rowan_finalize(q);
}

/* ---- Getters and conversions ----------------------------------------------------------------- */
static void test_getters(void **state) {
  fixture *f = *state;
  exec_ok(f->db, "CREATE TABLE g (k INTEGER NOT NULL PRIMARY KEY, de DECIMAL(5,2), bo BOOLEAN, "
                 "dt DATE, d DOUBLE, s VARCHAR(20))");
  exec_ok(f->db, "UPSERT INTO g VALUES (1, -12.75, TRUE, DATE '1970-01-02', 2.7, '12.5abc')");
  rowan_stmt *st = prep(f->db, "SELECT k, de, bo, dt, d, s, k * 2 AS twice FROM g");
  assert_int_equal(rowan_column_count(st), 7);
  assert_string_equal(rowan_column_name(st, 0), "K");
  assert_string_equal(rowan_column_name(st, 6), "TWICE");
  assert_string_equal(rowan_column_decltype(st, 1), "DECIMAL(5,2)");
  assert_string_equal(rowan_column_decltype(st, 5), "VARCHAR(20)");
  assert_string_equal(rowan_column_decltype(st, 0), "INTEGER");
  assert_null(rowan_column_name(st, 7));
  assert_null(rowan_column_name(st, -1));
  assert_null(rowan_column_decltype(st, 9));
  /* Before the first step there is no row. */
  assert_int_equal(rowan_column_type(st, 0), ROWAN_NULL);
  assert_null(rowan_column_text(st, 0));
  assert_int_equal(rowan_step(st), ROWAN_ROW);
  assert_string_equal(rowan_column_text(st, 0), "1");
  assert_int_equal(rowan_column_type(st, 1), ROWAN_TEXT);
  assert_string_equal(rowan_column_text(st, 1), "-12.75");
  assert_int_equal(rowan_column_int64(st, 1), -12);
  assert_true(rowan_column_double(st, 1) == -12.75);
  assert_int_equal(rowan_column_type(st, 2), ROWAN_INTEGER);
  assert_int_equal(rowan_column_int64(st, 2), 1);
  assert_string_equal(rowan_column_text(st, 2), "TRUE");
  assert_string_equal(rowan_column_text(st, 3), "1970-01-02");
  assert_true(rowan_column_timestamp(st, 3) == 86400000LL);
  assert_int_equal(rowan_column_int64(st, 4), 2);
  assert_string_equal(rowan_column_text(st, 4), "2.7");
  assert_int_equal(rowan_column_bytes(st, 4), 3);
  assert_int_equal(rowan_column_int64(st, 5), 12);
  assert_true(rowan_column_double(st, 5) == 12.5);
  assert_int_equal(rowan_column_timestamp(st, 5), 0);
  assert_int_equal(rowan_column_int64(st, 6), 2);
  /* Index out of range reads as NULL. */
  assert_int_equal(rowan_column_type(st, 7), ROWAN_NULL);
  assert_int_equal(rowan_column_int64(st, -1), 0);
  assert_null(rowan_column_blob(st, 99));
  /* The text pointer is stable until the next step. */
  const char *t1 = rowan_column_text(st, 1), *t2 = rowan_column_text(st, 1);
  assert_ptr_equal(t1, t2);
  assert_int_equal(rowan_step(st), ROWAN_DONE);
  assert_null(rowan_column_text(st, 1));
  /* A step after DONE runs the statement again. */
  assert_int_equal(rowan_step(st), ROWAN_ROW);
  assert_string_equal(rowan_column_text(st, 5), "12.5abc");
  rowan_finalize(st);
  /* Text of many rows reuses the buffers (values stay right row after row). */
  exec_ok(f->db, "UPSERT INTO g (k, s) VALUES (2, 'short'), (3, 'a much longer string'), (4, 'x')");
  st = prep(f->db, "SELECT s FROM g WHERE k >= 2");
  const char *want[] = {"short", "a much longer string", "x"};
  for (int i = 0; i < 3; i++) {
    assert_int_equal(rowan_step(st), ROWAN_ROW);
    assert_string_equal(rowan_column_text(st, 0), want[i]);
    assert_int_equal(rowan_column_bytes(st, 0), (int)strlen(want[i]));
  }
  assert_int_equal(rowan_step(st), ROWAN_DONE);
  rowan_finalize(st);
}

/* ---- Misuse ---------------------------------------------------------------------------------- */
static void test_misuse(void **state) {
  fixture *f = *state;
  assert_int_equal(rowan_prepare(NULL, "SELECT 1", -1, NULL, NULL), ROWAN_MISUSE);
  assert_int_equal(rowan_prepare(f->db, NULL, -1, NULL, NULL), ROWAN_MISUSE);
  assert_int_equal(rowan_errcode(f->db), ROWAN_MISUSE);
  assert_int_equal(rowan_step(NULL), ROWAN_MISUSE);
  assert_int_equal(rowan_reset(NULL), ROWAN_MISUSE);
  assert_int_equal(rowan_clear_bindings(NULL), ROWAN_MISUSE);
  assert_int_equal(rowan_finalize(NULL), ROWAN_OK);
  assert_int_equal(rowan_bind_int64(NULL, 1, 1), ROWAN_MISUSE);
  assert_int_equal(rowan_bind_double(NULL, 1, 1), ROWAN_MISUSE);
  assert_int_equal(rowan_bind_text(NULL, 1, "x", 1), ROWAN_MISUSE);
  assert_int_equal(rowan_bind_blob(NULL, 1, "x", 1), ROWAN_MISUSE);
  assert_int_equal(rowan_bind_null(NULL, 1), ROWAN_MISUSE);
  assert_int_equal(rowan_bind_timestamp(NULL, 1, 0), ROWAN_MISUSE);
  assert_int_equal(rowan_bind_parameter_count(NULL), 0);
  assert_int_equal(rowan_column_count(NULL), 0);
  assert_null(rowan_column_name(NULL, 0));
  assert_null(rowan_column_decltype(NULL, 0));
  assert_int_equal(rowan_column_type(NULL, 0), ROWAN_NULL);
  assert_int_equal(rowan_column_int64(NULL, 0), 0);
  assert_true(rowan_column_double(NULL, 0) == 0.0);
  assert_null(rowan_column_text(NULL, 0));
  assert_null(rowan_column_blob(NULL, 0));
  assert_int_equal(rowan_column_bytes(NULL, 0), 0);
  assert_int_equal(rowan_column_timestamp(NULL, 0), 0);
  assert_int_equal(rowan_exec(NULL, "SELECT 1", NULL, NULL), ROWAN_MISUSE);
  assert_int_equal(rowan_exec(f->db, NULL, NULL, NULL), ROWAN_MISUSE);
  assert_int_equal(rowan_errcode(NULL), ROWAN_MISUSE);
  assert_non_null(rowan_errmsg(NULL));
  assert_int_equal(rowan_error_offset(NULL), -1);
  assert_int_equal(rowan_changes(NULL), 0);
  rowan_metrics m;
  assert_int_equal(rowan_stmt_metrics(NULL, &m), ROWAN_MISUSE);
  assert_string_equal(rowan_errstr(ROWAN_SYNTAX), "ROWAN_SYNTAX");
  assert_string_equal(rowan_errstr(ROWAN_NOTFOUND), "ROWAN_NOTFOUND");
  assert_string_equal(rowan_errstr(ROWAN_ABORT), "ROWAN_ABORT");
  assert_string_equal(rowan_errstr(ROWAN_INTERRUPT), "ROWAN_INTERRUPT");
  assert_string_equal(rowan_errstr(ROWAN_INTERRUPT + 1), "ROWAN_UNKNOWN");
  assert_string_equal(rowan_errstr(ROWAN_DONE), "ROWAN_DONE");
  assert_string_equal(rowan_errstr(12345), "ROWAN_UNKNOWN");
  assert_int_equal(api_test_flush(NULL), ROWAN_MISUSE);
  assert_null(api_test_kv(NULL));
  /* Close with an open statement is refused and the connection stays usable. */
  rowan_stmt *st = prep(f->db, "SELECT 1");
  assert_int_equal(rowan_close(f->db), ROWAN_MISUSE);
  assert_non_null(strstr(rowan_errmsg(f->db), "not finalized"));
  assert_int_equal(rowan_step(st), ROWAN_ROW);
  rowan_finalize(st);
  /* A blob pointer of NULL with a length. */
  exec_ok(f->db, "CREATE TABLE m (k INTEGER NOT NULL PRIMARY KEY, y VARBINARY)");
  st = prep(f->db, "UPSERT INTO m VALUES (1, ?)");
  assert_int_equal(rowan_bind_blob(st, 1, NULL, 3), ROWAN_MISUSE);
  assert_int_equal(rowan_bind_blob(st, 1, NULL, 0), ROWAN_OK);
  assert_int_equal(rowan_step(st), ROWAN_DONE);
  rowan_finalize(st);
  assert_int_equal(query_int(f->db, "SELECT COUNT(*) FROM m WHERE y IS NULL"), 1);
}

/* ---- Errors with offsets ------------------------------------------------------------------------ */
static void test_errors(void **state) {
  fixture *f = *state;
  rowan_stmt *st = (rowan_stmt *)1;
  const char *bad = "SELECT *\n  FORM t";
  assert_int_equal(rowan_prepare(f->db, bad, -1, &st, NULL), ROWAN_SYNTAX);
  assert_null(st);
  assert_int_equal(rowan_errcode(f->db), ROWAN_SYNTAX);
  assert_int_equal(rowan_error_offset(f->db), 11); /* "FORM" */
  assert_non_null(strstr(rowan_errmsg(f->db), "line 2, column 3"));
  assert_non_null(strstr(rowan_errmsg(f->db), "FORM"));
  /* A successful call clears the error. */
  assert_int_equal(query_int(f->db, "SELECT 5"), 5);
  assert_int_equal(rowan_errcode(f->db), ROWAN_OK);
  assert_int_equal(rowan_error_offset(f->db), -1);
  /* Unknown table and column: named, with their offsets. */
  assert_int_equal(rowan_prepare(f->db, "SELECT x FROM nosuch", -1, &st, NULL), ROWAN_ERROR);
  assert_non_null(strstr(rowan_errmsg(f->db), "NOSUCH"));
  assert_int_equal(rowan_error_offset(f->db), 14);
  exec_ok(f->db, "CREATE TABLE e (k INTEGER NOT NULL PRIMARY KEY, v VARCHAR(3))");
  assert_int_equal(rowan_prepare(f->db, "SELECT k, nocol FROM e", -1, &st, NULL), ROWAN_ERROR);
  assert_non_null(strstr(rowan_errmsg(f->db), "NOCOL"));
  assert_int_equal(rowan_error_offset(f->db), 10);
  /* rowan_exec: the offset is relative to the whole text; earlier statements took effect. */
  const char *script = "UPSERT INTO e VALUES (1, 'a'); SELECT k FROM e WHERE zz = 1; UPSERT INTO e VALUES (2, 'b')";
  assert_int_equal(rowan_exec(f->db, script, NULL, NULL), ROWAN_ERROR);
  assert_int_equal(rowan_error_offset(f->db), (int)(strstr(script, "zz") - script));
  assert_int_equal(query_int(f->db, "SELECT COUNT(*) FROM e"), 1);
  /* A constraint error at step names the column type and value. */
  assert_int_equal(rowan_exec(f->db, "UPSERT INTO e VALUES (3, 'abcd')", NULL, NULL), ROWAN_CONSTRAINT);
  assert_non_null(strstr(rowan_errmsg(f->db), "VARCHAR(3)"));
  /* Step after an error without reset is misuse; reset recovers. */
  st = prep(f->db, "SELECT 10 / k FROM e WHERE k = ?");
  assert_int_equal(rowan_bind_int64(st, 1, 1), ROWAN_OK);
  assert_int_equal(rowan_step(st), ROWAN_ROW);
  assert_int_equal(rowan_column_int64(st, 0), 10);
  rowan_finalize(st);
  exec_ok(f->db, "UPSERT INTO e VALUES (0, 'z')");
  st = prep(f->db, "SELECT 10 / k FROM e WHERE k = 0");
  int rc = rowan_step(st);
  assert_true(rc != ROWAN_ROW && rc != ROWAN_DONE && rc != ROWAN_OK);
  assert_int_equal(rowan_errcode(f->db), rc);
  assert_int_equal(rowan_step(st), ROWAN_MISUSE);
  assert_int_equal(rowan_reset(st), rc); /* the failed step's code (test_reset_after_error) */
  rc = rowan_step(st);
  assert_true(rc != ROWAN_MISUSE && rc != ROWAN_ROW);
  rowan_finalize(st);
}

/* ---- Reset after a failed step (SQLite's sqlite3_reset, v2 interface) ------------------------- */
/* rowan_reset returns the code of the statement's last step when that step failed (and makes
** it the connection's error again: rowan_errmsg names the failure even when other calls came
** in between), ROWAN_OK otherwise; either way the statement can run again. A second reset
** returns ROWAN_OK (SQLite 3.40: the same). */
static void test_reset_after_error(void **state) {
  fixture *f = *state;
  exec_ok(f->db, "CREATE TABLE r (k INTEGER NOT NULL PRIMARY KEY, v VARCHAR(3))");
  rowan_stmt *ins = prep(f->db, "UPSERT INTO r VALUES (?, ?)");
  assert_int_equal(rowan_reset(ins), ROWAN_OK); /* never stepped */
  /* An UPSERT whose value does not fit its column. */
  assert_int_equal(rowan_bind_int64(ins, 1, 1), ROWAN_OK);
  assert_int_equal(rowan_bind_text(ins, 2, "abcd", -1), ROWAN_OK);
  assert_int_equal(rowan_step(ins), ROWAN_CONSTRAINT);
  assert_non_null(strstr(rowan_errmsg(f->db), "VARCHAR(3)"));
  assert_int_equal(query_int(f->db, "SELECT COUNT(*) FROM r"), 0); /* clears the error */
  assert_int_equal(rowan_errcode(f->db), ROWAN_OK);
  assert_int_equal(rowan_reset(ins), ROWAN_CONSTRAINT);
  assert_int_equal(rowan_errcode(f->db), ROWAN_CONSTRAINT);
  assert_non_null(strstr(rowan_errmsg(f->db), "VARCHAR(3)"));
  assert_non_null(strstr(rowan_errmsg(f->db), "abcd"));
  /* The second reset has no failed step to report; the connection's error is left as is. */
  assert_int_equal(rowan_reset(ins), ROWAN_OK);
  assert_int_equal(rowan_errcode(f->db), ROWAN_CONSTRAINT);
  assert_non_null(strstr(rowan_errmsg(f->db), "VARCHAR(3)"));
  /* Bindings were kept: the same value fails again; a fitting one runs. */
  assert_int_equal(rowan_step(ins), ROWAN_CONSTRAINT);
  assert_int_equal(rowan_reset(ins), ROWAN_CONSTRAINT);
  assert_int_equal(rowan_bind_text(ins, 2, "abc", -1), ROWAN_OK);
  assert_int_equal(rowan_step(ins), ROWAN_DONE);
  assert_int_equal(rowan_changes(f->db), 1);
  assert_int_equal(rowan_reset(ins), ROWAN_OK); /* after a successful run */
  for (int k = 2; k <= 3; k++) {
    assert_int_equal(rowan_bind_int64(ins, 1, k), ROWAN_OK);
    assert_int_equal(rowan_step(ins), ROWAN_DONE);
    assert_int_equal(rowan_reset(ins), ROWAN_OK);
  }
  /* A failed bind is not a failed step: reset returns ROWAN_OK. */
  assert_int_equal(rowan_bind_int64(ins, 9, 1), ROWAN_RANGE);
  assert_int_equal(rowan_reset(ins), ROWAN_OK);
  rowan_finalize(ins);
  assert_int_equal(query_int(f->db, "SELECT COUNT(*) FROM r"), 3);

  /* A SELECT that fails after a row (division by zero at k = 2); a step after the failure is
     refused as misuse, and reset still reports the failure, not the misuse. */
  rowan_stmt *q = prep(f->db, "SELECT 10 / (k - ?) FROM r");
  assert_int_equal(rowan_bind_int64(q, 1, 2), ROWAN_OK);
  assert_int_equal(rowan_step(q), ROWAN_ROW);
  assert_int_equal(rowan_column_int64(q, 0), -10);
  assert_int_equal(rowan_reset(q), ROWAN_OK); /* between rows */
  assert_int_equal(rowan_step(q), ROWAN_ROW);
  assert_int_equal(rowan_step(q), ROWAN_CONSTRAINT);
  assert_non_null(strstr(rowan_errmsg(f->db), "division by zero"));
  assert_int_equal(rowan_column_type(q, 0), ROWAN_NULL); /* no current row */
  assert_int_equal(rowan_step(q), ROWAN_MISUSE);
  assert_int_equal(rowan_reset(q), ROWAN_CONSTRAINT);
  assert_non_null(strstr(rowan_errmsg(f->db), "division by zero"));
  /* Run again with another binding: every row. */
  assert_int_equal(rowan_bind_int64(q, 1, 5), ROWAN_OK);
  int64_t sum = 0;
  int rc, n = 0;
  while ((rc = rowan_step(q)) == ROWAN_ROW) {
    sum += rowan_column_int64(q, 0);
    n++;
  }
  assert_int_equal(rc, ROWAN_DONE);
  assert_int_equal(n, 3);
  assert_int_equal(sum, -2 - 3 - 5); /* 10/-4, 10/-3, 10/-2 truncated toward zero */
  assert_int_equal(rowan_reset(q), ROWAN_OK); /* after ROWAN_DONE */
  assert_int_equal(rowan_errcode(f->db), ROWAN_OK);
  rowan_finalize(q);

  /* rowan_exec reports its statement's failure once, and the connection works on. */
  assert_int_equal(rowan_exec(f->db, "SELECT 1 / (k - 1) FROM r", NULL, NULL), ROWAN_CONSTRAINT);
  assert_non_null(strstr(rowan_errmsg(f->db), "division by zero"));
  assert_int_equal(query_int(f->db, "SELECT SUM(k) FROM r"), 6);
}

/* ---- rowan_exec callbacks and changes ------------------------------------------------------------- */
typedef struct collect {
  int rows;        /* callback calls */
  int stop_after;  /* return non-zero at this call (0 = never) */
  char seen[256];  /* "name=value;" of every value */
} collect;

static int collect_cb(void *ctx, int ncol, char **values, char **names) {
  collect *c = ctx;
  c->rows++;
  for (int i = 0; i < ncol; i++) {
    size_t n = strlen(c->seen);
    snprintf(c->seen + n, sizeof c->seen - n, "%s=%s;", names[i], values[i] ? values[i] : "NULL");
  }
  return c->stop_after && c->rows >= c->stop_after;
}

static void test_exec_callback(void **state) {
  fixture *f = *state;
  exec_ok(f->db, "CREATE TABLE c (k INTEGER NOT NULL PRIMARY KEY, v VARCHAR)");
  assert_int_equal(rowan_exec(f->db, "UPSERT INTO c VALUES (1, 'x'), (2, NULL), (3, 'z')", NULL, NULL), ROWAN_OK);
  assert_int_equal(rowan_changes(f->db), 3);
  collect c = {0};
  assert_int_equal(rowan_exec(f->db, "SELECT k, v FROM c; SELECT COUNT(*) AS n FROM c", collect_cb, &c), ROWAN_OK);
  assert_int_equal(c.rows, 4);
  assert_string_equal(c.seen, "K=1;V=x;K=2;V=NULL;K=3;V=z;N=3;");
  collect s = {0, 2, ""};
  assert_int_equal(rowan_exec(f->db, "SELECT k FROM c; UPSERT INTO c VALUES (9, 'no')", collect_cb, &s), ROWAN_ERROR);
  assert_int_equal(s.rows, 2);
  assert_int_equal(query_int(f->db, "SELECT COUNT(*) FROM c WHERE k = 9"), 0);
  assert_int_equal(rowan_exec(f->db, "DELETE FROM c WHERE k >= 2", NULL, NULL), ROWAN_OK);
  assert_int_equal(rowan_changes(f->db), 2);
  /* Empty text and comments only. */
  assert_int_equal(rowan_exec(f->db, "", NULL, NULL), ROWAN_OK);
  assert_int_equal(rowan_exec(f->db, " -- nothing ", NULL, NULL), ROWAN_OK);
}

/* ---- EXPLAIN and metrics ---------------------------------------------------------------------- */
static void test_explain_and_metrics(void **state) {
  fixture *f = *state;
  exec_ok(f->db, "CREATE TABLE s (id INTEGER NOT NULL, ts BIGINT NOT NULL, temp DOUBLE, "
                 "CONSTRAINT pk PRIMARY KEY (id, ts DESC))");
  rowan_stmt *ins = prep(f->db, "UPSERT INTO s VALUES (?, ?, ?)");
  for (int id = 0; id < 20; id++)
    for (int ts = 0; ts < 50; ts++) {
      assert_int_equal(rowan_bind_int64(ins, 1, id), ROWAN_OK);
      assert_int_equal(rowan_bind_int64(ins, 2, ts), ROWAN_OK);
      assert_int_equal(rowan_bind_double(ins, 3, (double)(id * 100 + ts) / 4.0), ROWAN_OK);
      assert_int_equal(rowan_step(ins), ROWAN_DONE);
      assert_int_equal(rowan_reset(ins), ROWAN_OK);
    }
  rowan_finalize(ins);
  assert_int_equal(api_test_flush(f->db), ROWAN_OK);
  assert_non_null(api_test_kv(f->db));

  rowan_stmt *ex = prep(f->db, "EXPLAIN SELECT temp FROM s WHERE id = 3 AND ts >= 10");
  assert_int_equal(rowan_column_count(ex), 1);
  assert_string_equal(rowan_column_name(ex, 0), "PLAN");
  int lines = 0, range = 0;
  while (rowan_step(ex) == ROWAN_ROW) {
    lines++;
    assert_int_equal(rowan_column_type(ex, 0), ROWAN_TEXT);
    if (strstr(rowan_column_text(ex, 0), "RANGE SCAN")) range++;
  }
  assert_true(lines >= 1);
  assert_int_equal(range, 1);
  rowan_finalize(ex);

  /* A range scan examines only its rows; a full scan with a filter examines all. */
  rowan_stmt *q = prep(f->db, "SELECT temp FROM s WHERE id = 3 AND ts >= 10");
  int n = 0;
  while (rowan_step(q) == ROWAN_ROW) n++;
  assert_int_equal(n, 40);
  rowan_metrics m;
  assert_int_equal(rowan_stmt_metrics(q, &m), ROWAN_OK);
  assert_true(m.rows_examined >= 40 && m.rows_examined <= 41);
  assert_int_equal(m.rows_returned, 40);
  assert_true(m.n_families >= 1);
  assert_non_null(strstr(m.families[0].family, "S."));
  assert_true(m.families[0].cells_examined >= 40);
  assert_true(m.families[0].blocks_read >= 1);
  rowan_finalize(q);
  q = prep(f->db, "SELECT id FROM s WHERE temp < 10");
  n = 0;
  while (rowan_step(q) == ROWAN_ROW) n++;
  assert_int_equal(n, 40); /* id 0, ts 0..39 */
  assert_int_equal(rowan_stmt_metrics(q, &m), ROWAN_OK);
  assert_int_equal(m.rows_examined, 1000);
  assert_int_equal(m.rows_returned, 40);
  assert_int_equal(m.rows_filtered, 960);
  /* Metrics start over at reset. */
  assert_int_equal(rowan_reset(q), ROWAN_OK);
  assert_int_equal(rowan_stmt_metrics(q, &m), ROWAN_OK);
  assert_int_equal(m.rows_examined, 0);
  rowan_finalize(q);
}

/* ":memory:" (SQLite's): a new database in memory per handle, independent of any other,
** gone at close; read-only makes no sense for it and is misuse. */
static void test_memory_database(void **state) {
  (void)state;
  rowan_db *a = NULL, *b = NULL;
  assert_int_equal(rowan_open(":memory:", NULL, &a), ROWAN_OK);
  assert_int_equal(rowan_exec(a, "CREATE TABLE m (k INTEGER NOT NULL PRIMARY KEY, v VARCHAR)",
                              NULL, NULL), ROWAN_OK);
  assert_int_equal(rowan_exec(a, "UPSERT INTO m VALUES (1, 'x'), (2, 'y')", NULL, NULL),
                   ROWAN_OK);
  assert_int_equal(rowan_flush(a), ROWAN_OK); /* store files too live in memory */
  assert_int_equal(query_int(a, "SELECT SUM(k) FROM m"), 3);
  assert_int_equal(rowan_open(":memory:", NULL, &b), ROWAN_OK);
  rowan_stmt *st = NULL;
  assert_int_equal(rowan_prepare(b, "SELECT COUNT(*) FROM m", -1, &st, NULL), ROWAN_ERROR);
  assert_null(st);
  assert_int_equal(rowan_close(b), ROWAN_OK);
  assert_int_equal(query_int(a, "SELECT COUNT(*) FROM m"), 2);
  assert_int_equal(rowan_close(a), ROWAN_OK);
  rowan_options o;
  rowan_options_init(&o);
  o.read_only = 1;
  rowan_db *ro = NULL;
  assert_int_equal(rowan_open(":memory:", &o, &ro), ROWAN_MISUSE);
  assert_non_null(strstr(rowan_errmsg(ro), ":memory:"));
  rowan_close(ro);
}

/* An hbase:// URI in a library built without HBase: a clear refusal, never a directory. */
static void test_hbase_uri_without_hbase(void **state) {
  (void)state;
#ifndef ROWAN_HBASE
  rowan_db *db = NULL;
  assert_int_equal(rowan_open("hbase://127.0.0.1:9090/x", NULL, &db), ROWAN_MISUSE);
  assert_non_null(db);
  assert_non_null(strstr(rowan_errmsg(db), "built without HBase support"));
  assert_non_null(strstr(rowan_errmsg(db), "hbase://127.0.0.1:9090/x"));
  assert_int_equal(rowan_exec(db, "SELECT 1", NULL, NULL), ROWAN_MISUSE);
  rowan_close(db);
#endif
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_hbase_uri_without_hbase),
      cmocka_unit_test_setup_teardown(test_open_close, setup, teardown),
      cmocka_unit_test_setup_teardown(test_reopen_and_readonly, setup, teardown),
      cmocka_unit_test_setup_teardown(test_tail, setup, teardown),
      cmocka_unit_test_setup_teardown(test_binds, setup, teardown),
      cmocka_unit_test_setup_teardown(test_getters, setup, teardown),
      cmocka_unit_test_setup_teardown(test_misuse, setup, teardown),
      cmocka_unit_test_setup_teardown(test_errors, setup, teardown),
      cmocka_unit_test_setup_teardown(test_reset_after_error, setup, teardown),
      cmocka_unit_test_setup_teardown(test_exec_callback, setup, teardown),
      cmocka_unit_test_setup_teardown(test_explain_and_metrics, setup, teardown),
      cmocka_unit_test(test_memory_database),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
