/*
** tests/api/test_break_ddl_midscan.c: DDL on the connection while a SELECT is between two
** rows (a pending row, its kv scan open on blocks of tiny size with a tiny cache). For each
** read shape (full scan, reverse scan, IN-list skip scan, point lookup, index scan) and each
** DDL (DROP TABLE; DROP and CREATE again with other columns; CREATE INDEX; DROP INDEX; a
** CREATE TABLE of another table), the DDL succeeds and then:
**  - the pending row's values, read before the DDL, keep their bytes (include/rowan.h:
**    valid until the next step, reset or finalize of that statement);
**  - the next step either goes on with the rows due (the same as before the DDL) or fails
**    with a message saying the schema changed; never a crash, a wrong row or a row of the
**    new table; after a failure every value reads as NULL and steps fail until a reset;
**  - after a reset the statement runs against the schema as it is now: an unknown table
**    or column is an error, the recreated table's rows come back, and a table that only
**    gained or lost an index gives every row again.
** Not here: a statement prepared before a recreate and run after it (test_regress_schema_
** change.c), bulk loads during DDL (test_break_bulk_ddl.c).
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

#define NROWS 120

enum { Q_FULL, Q_REVERSE, Q_IN, Q_POINT, Q_INDEX, NQ };
enum { D_DROP, D_RECREATE, D_CREATE_INDEX, D_DROP_INDEX, D_OTHER_TABLE, ND };

static const char *QUERY[NQ] = {
  "SELECT K, V, S FROM T",
  "SELECT K, V, S FROM T ORDER BY K DESC",
  "SELECT K, V, S FROM T WHERE K IN (3, 4, 5, 60, 61, 100)",
  "SELECT K, V, S FROM T WHERE K = 77",
  "SELECT /*+ INDEX(T IV) */ K, V, S FROM T WHERE V >= 10.0",
};

static const char *DDL[ND][3] = {
  {"DROP TABLE T", NULL, NULL},
  {"DROP TABLE T", "CREATE TABLE T (K VARCHAR NOT NULL PRIMARY KEY, X.Q INTEGER)",
   "UPSERT INTO T VALUES ('zz', 7)"},
  {"CREATE INDEX IW ON T (S)", NULL, NULL},
  {"DROP INDEX IV ON T", NULL, NULL},
  {"CREATE TABLE OTHER (A INTEGER NOT NULL PRIMARY KEY)", NULL, NULL},
};

/* The keys query q returns, in order; their count. */
static int due(int q, int *keys) {
  int n = 0;
  static const int in[6] = {3, 4, 5, 60, 61, 100};
  for (int i = 0; i < NROWS; i++) {
    int k = q == Q_REVERSE ? NROWS - 1 - i : i;
    bool want = q == Q_FULL || q == Q_REVERSE || (q == Q_POINT && k == 77) ||
                (q == Q_INDEX && k >= 10);
    for (int j = 0; j < 6 && q == Q_IN; j++) want |= in[j] == k;
    if (want) keys[n++] = k;
  }
  return n;
}

static void text_of(int k, char *out, size_t cap) { snprintf(out, cap, "row %d of the table", k); }

static rowan_db *setup(kv_env *env) {
  rowan_options o;
  rowan_options_init(&o);
  o.kv_env = env;
  o.sync_mode = ROWAN_SYNC_OFF;
  o.block_cache_size = 4096;
  rowan_db *db = NULL;
  assert_int_equal(rowan_open("/db", &o, &db), ROWAN_OK);
  exec_ok(db, "CREATE TABLE T (K INTEGER NOT NULL PRIMARY KEY, A.V DOUBLE, A.S VARCHAR) "
              "BLOCKSIZE = 64");
  exec_ok(db, "CREATE INDEX IV ON T (V) INCLUDE (S)");
  rowan_stmt *up;
  assert_int_equal(rowan_prepare(db, "UPSERT INTO T VALUES (?, ?, ?)", -1, &up, NULL), ROWAN_OK);
  for (int k = 0; k < NROWS; k++) {
    char t[40];
    text_of(k, t, sizeof t);
    rowan_bind_int64(up, 1, k);
    rowan_bind_double(up, 2, k + 0.5);
    rowan_bind_text(up, 3, t, -1);
    assert_int_equal(rowan_step(up), ROWAN_DONE);
    rowan_reset(up);
    if (k == NROWS / 2) assert_int_equal(rowan_flush(db), ROWAN_OK);
  }
  rowan_finalize(up);
  return db;
}

/* The current row of st is key k. */
static void check_current(rowan_stmt *st, int k, const char *when) {
  char t[40];
  text_of(k, t, sizeof t);
  const char *s = rowan_column_text(st, 2);
  if (rowan_column_int64(st, 0) != k || rowan_column_double(st, 1) != k + 0.5 || !s ||
      strcmp(s, t) != 0)
    fail_msg("%s: row (%lld, %g, %s), want key %d", when, (long long)rowan_column_int64(st, 0),
             rowan_column_double(st, 1), s ? s : "NULL", k);
}

static void one_case(int q, int d) {
  kv_env *env = kv_env_mem_new(1700000000000LL);
  rowan_db *db = setup(env);
  int keys[NROWS];
  int n = due(q, keys);
  rowan_stmt *st;
  assert_int_equal(rowan_prepare(db, QUERY[q], -1, &st, NULL), ROWAN_OK);
  int got = 0;
  for (; got < 2 && got < n; got++) { /* two rows, so the scan is under way */
    assert_int_equal(rowan_step(st), ROWAN_ROW);
    check_current(st, keys[got], "before the DDL");
  }
  const char *held = rowan_column_text(st, 2);
  char copy[64];
  snprintf(copy, sizeof copy, "%s", held ? held : "");
  for (int i = 0; i < 3 && DDL[d][i]; i++) exec_ok(db, DDL[d][i]);
  char when[160];
  snprintf(when, sizeof when, "%s, then %s", QUERY[q], DDL[d][0]);
  if (!held || strcmp(held, copy) != 0)
    fail_msg("%s: the pending row's text changed under the DDL", when);
  check_current(st, keys[got - 1], when);
  /* go on: the rows due, or an error saying the schema changed */
  int rc;
  while ((rc = rowan_step(st)) == ROWAN_ROW) {
    if (got >= n) fail_msg("%s: a row past the %d due", when, n);
    check_current(st, keys[got], when);
    got++;
  }
  if (rc == ROWAN_DONE) {
    if (got != n) fail_msg("%s: done after %d of %d rows", when, got, n);
  } else {
    if (!strstr(rowan_errmsg(db), "schema"))
      fail_msg("%s: step failed with '%s' (want the schema change named)", when,
               rowan_errmsg(db));
    if (rowan_column_type(st, 0) != ROWAN_NULL || rowan_column_text(st, 2) != NULL)
      fail_msg("%s: values after the failed step are not NULL", when);
    if (rowan_step(st) == ROWAN_ROW) fail_msg("%s: a row after the failed step", when);
  }
  /* again, against the schema as it is now (the reset reports a failed step's code) */
  assert_int_equal(rowan_reset(st), rc == ROWAN_DONE ? ROWAN_OK : rc);
  rc = rowan_step(st);
  if (d == D_DROP || d == D_RECREATE || (q == Q_INDEX && d == D_DROP_INDEX)) {
    /* no table T; or T without V; or the hinted index gone (a hint naming no index may be
       ignored: then the rows come from the table) */
    if (d == D_DROP_INDEX && rc == ROWAN_ROW) {
      for (got = 0; rc == ROWAN_ROW; got++, rc = rowan_step(st)) check_current(st, keys[got], when);
      assert_int_equal(got, n);
    } else if (rc != ROWAN_ERROR) {
      fail_msg("%s: the rerun gave %d (want ROWAN_ERROR)", when, rc);
    }
  } else {
    for (got = 0; rc == ROWAN_ROW; got++, rc = rowan_step(st)) {
      if (got >= n) fail_msg("%s: rerun: a row past the %d due", when, n);
      check_current(st, keys[got], when);
    }
    if (rc != ROWAN_DONE || got != n)
      fail_msg("%s: rerun gave %d rows then %d: %s", when, got, rc, rowan_errmsg(db));
  }
  rowan_finalize(st);
  assert_int_equal(rowan_close(db), ROWAN_OK);
  kv_env_free(env);
}

static void ddl_between_steps(void **state) {
  (void)state;
  for (int q = 0; q < NQ; q++)
    for (int d = 0; d < ND; d++) one_case(q, d);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(ddl_between_steps),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
