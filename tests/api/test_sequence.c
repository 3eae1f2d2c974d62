/*
** tests/api/test_sequence.c: sequences through the C API: their state persists across a
** clean close and reopen on a real directory in every sync mode (the rest of a claimed
** CACHE block is skipped), the error offsets of bad CREATE SEQUENCE options and of a
** sequence past its MAXVALUE, prepared statements (a value per execution, parameters beside
** NEXT VALUE FOR, a DROP SEQUENCE under a prepared statement and the name made again), and
** a read-only connection that may not draw values, and rowan_recover making the sequences
** again.
** Not here: the SQL rules (tests/sql/sequence.test), kills (test_sequence_kill.c).
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "rowan.h"
#include "testutil.h"

static rowan_db *open_dir(const char *dir, bool create, int sync_mode, bool read_only) {
  rowan_options o;
  rowan_options_init(&o);
  o.create_if_missing = create;
  o.sync_mode = sync_mode;
  o.read_only = read_only;
  rowan_db *db = NULL;
  int rc = rowan_open(dir, &o, &db);
  if (rc != ROWAN_OK) fail_msg("open %s: %s", dir, db ? rowan_errmsg(db) : rowan_errstr(rc));
  return db;
}

static void exec_ok(rowan_db *db, const char *sql) {
  if (rowan_exec(db, sql, NULL, NULL) != ROWAN_OK) fail_msg("%s: %s", sql, rowan_errmsg(db));
}

/* The one BIGINT a one-row query gives. */
static int64_t one_value(rowan_db *db, const char *sql) {
  rowan_stmt *s = NULL;
  if (rowan_prepare(db, sql, -1, &s, NULL) != ROWAN_OK) fail_msg("%s: %s", sql, rowan_errmsg(db));
  if (rowan_step(s) != ROWAN_ROW) fail_msg("%s: %s", sql, rowan_errmsg(db));
  int64_t v = rowan_column_int64(s, 0);
  assert_int_equal(rowan_step(s), ROWAN_DONE);
  assert_int_equal(rowan_finalize(s), ROWAN_OK);
  return v;
}

static void make_dir(char *tmp, char *dir, size_t cap) {
  assert_non_null(mkdtemp(tmp));
  snprintf(dir, cap, "%s/db", tmp);
}

static void remove_dir(const char *tmp) {
  char cmd[160];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp);
  assert_int_equal(system(cmd), 0);
}

/* CACHE 3: 1, 2 drawn, close, reopen: 4 (3 was claimed with them and is skipped); then the
** same again, once per sync mode. A sequence never drawn from starts at its START. */
static void test_persist_across_reopen(void **state) {
  (void)state;
  const int modes[3] = {ROWAN_SYNC_FULL, ROWAN_SYNC_NORMAL, ROWAN_SYNC_OFF};
  for (int m = 0; m < 3; m++) {
    char tmp[] = "/tmp/rowan_sequence_XXXXXX", dir[96];
    make_dir(tmp, dir, sizeof dir);
    rowan_db *db = open_dir(dir, true, modes[m], false);
    exec_ok(db, "CREATE SEQUENCE S CACHE 3");
    exec_ok(db, "CREATE SEQUENCE UNUSED START WITH -7 INCREMENT BY -2");
    assert_int_equal(one_value(db, "SELECT NEXT VALUE FOR S"), 1);
    assert_int_equal(one_value(db, "SELECT NEXT VALUE FOR S"), 2);
    assert_int_equal(rowan_close(db), ROWAN_OK);
    db = open_dir(dir, false, modes[m], false);
    assert_int_equal(one_value(db, "SELECT NEXT VALUE FOR S"), 4);
    assert_int_equal(one_value(db, "SELECT NEXT VALUE FOR S"), 5);
    assert_int_equal(one_value(db, "SELECT NEXT VALUE FOR S"), 6);
    assert_int_equal(rowan_close(db), ROWAN_OK); /* the block 4..6 is used up: none skipped */
    db = open_dir(dir, false, modes[m], false);
    assert_int_equal(one_value(db, "SELECT NEXT VALUE FOR S"), 7);
    assert_int_equal(one_value(db, "SELECT NEXT VALUE FOR UNUSED"), -7);
    assert_int_equal(one_value(db, "SELECT NEXT VALUE FOR UNUSED"), -9);
    exec_ok(db, "DROP SEQUENCE S");
    assert_int_equal(rowan_close(db), ROWAN_OK);
    db = open_dir(dir, false, modes[m], false);
    assert_int_equal(rowan_exec(db, "SELECT NEXT VALUE FOR S", NULL, NULL), ROWAN_ERROR);
    assert_non_null(strstr(rowan_errmsg(db), "sequence S does not exist"));
    assert_int_equal(rowan_close(db), ROWAN_OK);
    remove_dir(tmp);
  }
}

/* Each bad CREATE SEQUENCE fails with ROWAN_ERROR at the offset of the option at fault. */
static void test_error_offsets(void **state) {
  (void)state;
  rowan_db *db = open_dir(":memory:", true, ROWAN_SYNC_FULL, false);
  struct {
    const char *sql;   /* the statement */
    const char *word;  /* where its error points: the first occurrence of this text */
    const char *msg;   /* part of the message */
  } cases[] = {
      {"CREATE SEQUENCE Q INCREMENT BY 0", "INCREMENT", "INCREMENT BY must not be 0"},
      {"CREATE SEQUENCE Q START 1 MINVALUE 5 MAXVALUE 1", "MINVALUE", "greater than MAXVALUE"},
      {"CREATE SEQUENCE Q CACHE 4 MAXVALUE 9 START WITH 10", "START", "outside"},
      {"CREATE SEQUENCE Q CYCLE CACHE 0", "CACHE", "CACHE must be at least 1"},
      {"CREATE SEQUENCE Q MAXVALUE 3 MAXVALUE 4", "MAXVALUE 4", "given twice"},
      {"CREATE SEQUENCE Q START WITH 1 STEP 3", "STEP", "unknown sequence option"},
      {"CREATE SEQUENCE Q MINVALUE -9223372036854775809", "MINVALUE", "outside the BIGINT"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    int rc = rowan_exec(db, cases[i].sql, NULL, NULL);
    if (rc != ROWAN_ERROR) fail_msg("%s: %s", cases[i].sql, rowan_errstr(rc));
    if (!strstr(rowan_errmsg(db), cases[i].msg))
      fail_msg("%s: message %s", cases[i].sql, rowan_errmsg(db));
    int want = (int)(strstr(cases[i].sql, cases[i].word) - cases[i].sql);
    if (rowan_error_offset(db) != want)
      fail_msg("%s: offset %d, want %d", cases[i].sql, rowan_error_offset(db), want);
  }
  /* None of them made the sequence. */
  assert_int_equal(rowan_exec(db, "SELECT NEXT VALUE FOR Q", NULL, NULL), ROWAN_ERROR);
  /* Past MAXVALUE: the error points at the NEXT VALUE FOR. */
  exec_ok(db, "CREATE SEQUENCE M MAXVALUE 1 START WITH 1");
  assert_int_equal(one_value(db, "SELECT NEXT VALUE FOR M"), 1);
  const char *sql = "SELECT 5, next value for M";
  assert_int_equal(rowan_exec(db, sql, NULL, NULL), ROWAN_ERROR);
  assert_non_null(strstr(rowan_errmsg(db), "Reached MAXVALUE of sequence M"));
  assert_int_equal(rowan_error_offset(db), (int)(strstr(sql, "next") - sql));
  assert_int_equal(rowan_close(db), ROWAN_OK);
}

/* A prepared statement draws a value per execution; parameters and NEXT VALUE FOR mix; a
** DROP SEQUENCE under it makes it fail, and the name made again serves it from its START. */
static void test_prepared(void **state) {
  (void)state;
  rowan_db *db = open_dir(":memory:", true, ROWAN_SYNC_FULL, false);
  exec_ok(db, "CREATE SEQUENCE S START WITH 100 INCREMENT BY 10");
  exec_ok(db, "CREATE TABLE T (ID BIGINT PRIMARY KEY, V VARCHAR, W BIGINT)");
  rowan_stmt *up = NULL;
  assert_int_equal(rowan_prepare(db, "UPSERT INTO T VALUES (NEXT VALUE FOR S, ?, ? + "
                                 "CURRENT VALUE FOR S)", -1, &up, NULL), ROWAN_OK);
  assert_int_equal(rowan_bind_parameter_count(up), 2);
  for (int i = 0; i < 3; i++) {
    char v[8];
    snprintf(v, sizeof v, "v%d", i);
    assert_int_equal(rowan_bind_text(up, 1, v, -1), ROWAN_OK);
    assert_int_equal(rowan_bind_int64(up, 2, i), ROWAN_OK);
    assert_int_equal(rowan_step(up), ROWAN_DONE);
    assert_int_equal(rowan_reset(up), ROWAN_OK);
  }
  rowan_stmt *q = NULL;
  assert_int_equal(rowan_prepare(db, "SELECT ID, V, W FROM T", -1, &q, NULL), ROWAN_OK);
  for (int i = 0; i < 3; i++) {
    assert_int_equal(rowan_step(q), ROWAN_ROW);
    assert_int_equal(rowan_column_int64(q, 0), 100 + 10 * i);
    char v[8];
    snprintf(v, sizeof v, "v%d", i);
    assert_string_equal(rowan_column_text(q, 1), v);
    assert_int_equal(rowan_column_int64(q, 2), 100 + 10 * i + i);
  }
  assert_int_equal(rowan_step(q), ROWAN_DONE);
  assert_int_equal(rowan_finalize(q), ROWAN_OK);
  exec_ok(db, "DROP SEQUENCE S");
  assert_int_equal(rowan_bind_text(up, 1, "x", -1), ROWAN_OK);
  assert_int_equal(rowan_bind_int64(up, 2, 0), ROWAN_OK);
  assert_int_equal(rowan_step(up), ROWAN_ERROR);
  assert_non_null(strstr(rowan_errmsg(db), "sequence S does not exist"));
  assert_int_equal(rowan_reset(up), ROWAN_ERROR); /* the failed step's code */
  exec_ok(db, "CREATE SEQUENCE S START WITH 7");
  assert_int_equal(rowan_step(up), ROWAN_DONE);
  assert_int_equal(one_value(db, "SELECT W FROM T WHERE ID = 7"), 7);
  assert_int_equal(rowan_finalize(up), ROWAN_OK);
  assert_int_equal(rowan_close(db), ROWAN_OK);
}

/* A read-only connection sees the sequences but may not draw: claiming a block is a write. */
static void test_read_only(void **state) {
  (void)state;
  char tmp[] = "/tmp/rowan_sequence_ro_XXXXXX", dir[96];
  make_dir(tmp, dir, sizeof dir);
  rowan_db *db = open_dir(dir, true, ROWAN_SYNC_FULL, false);
  exec_ok(db, "CREATE SEQUENCE S");
  assert_int_equal(one_value(db, "SELECT NEXT VALUE FOR S"), 1);
  rowan_db *ro = open_dir(dir, false, ROWAN_SYNC_FULL, true);
  assert_int_equal(rowan_exec(ro, "SELECT NEXT VALUE FOR S", NULL, NULL), ROWAN_READONLY);
  assert_int_equal(rowan_close(ro), ROWAN_OK);
  assert_int_equal(one_value(db, "SELECT NEXT VALUE FOR S"), 2);
  assert_int_equal(rowan_close(db), ROWAN_OK);
  remove_dir(tmp);
}

/* rowan_recover makes each sequence again, going on after the values the store handed out
** (CACHE 4: 1 and 2 taken, 1..4 claimed: the copy starts at 5), and calls the catalog whole. */
static void test_recover_keeps_sequences(void **state) {
  (void)state;
  char tmp[] = "/tmp/rowan_sequence_rec_XXXXXX", dir[96], dst[96];
  make_dir(tmp, dir, sizeof dir);
  snprintf(dst, sizeof dst, "%s/copy", tmp);
  rowan_db *db = open_dir(dir, true, ROWAN_SYNC_FULL, false);
  exec_ok(db, "CREATE SEQUENCE S CACHE 4");
  exec_ok(db, "CREATE SEQUENCE D START WITH -1 INCREMENT BY -1 MINVALUE -3 MAXVALUE -1 CYCLE");
  exec_ok(db, "CREATE TABLE T (K BIGINT PRIMARY KEY)");
  exec_ok(db, "UPSERT INTO T VALUES (NEXT VALUE FOR S), (NEXT VALUE FOR S)");
  assert_int_equal(rowan_close(db), ROWAN_OK);
  rowan_recover_options ro;
  memset(&ro, 0, sizeof ro);
  rowan_recover_report *rep = NULL;
  int rc = rowan_recover(dir, dst, &ro, &rep);
  if (rc != ROWAN_OK) fail_msg("rowan_recover: %s", rep ? rep->errmsg : rowan_errstr(rc));
  assert_int_equal(rep->catalog, ROWAN_CATALOG_WHOLE);
  rowan_recover_report_free(rep);
  db = open_dir(dst, false, ROWAN_SYNC_FULL, false);
  assert_int_equal(one_value(db, "SELECT COUNT(*) FROM T"), 2);
  assert_int_equal(one_value(db, "SELECT NEXT VALUE FOR S"), 5);
  assert_int_equal(one_value(db, "SELECT NEXT VALUE FOR D"), -1);
  assert_int_equal(rowan_close(db), ROWAN_OK);
  remove_dir(tmp);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_persist_across_reopen),
      cmocka_unit_test(test_error_offsets),
      cmocka_unit_test(test_prepared),
      cmocka_unit_test(test_read_only),
      cmocka_unit_test(test_recover_keeps_sequences),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
