/*
** tests/api/test_as_of.c: reading the past through the C API (include/rowan.h "Read the
** past", Phoenix's CurrentSCN) on the in-memory env, whose clock commits stamp and the
** look-back window is measured against: rowan_set_as_of reads each table as it was (old
** values, deleted rows back, rows written later absent), across flushes and a major
** compaction inside the window; writes and DDL are refused while it is set; the
** statement's AS OF clause wins over it; a prepared statement follows the setting from run
** to run; a time older than the window, or any past time without a window, is refused with
** the time and the horizon named; bad arguments are misuse. And a prepared point lookup of
** a ROW_TIMESTAMP table rebound run after run reads the time range of its values.
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
#include "testutil.h"
#include "tu_api.h"

#define T0 1700000000000LL /* 2023-11-14 22:13:20 UTC */

static rowan_db *open_window(kv_env *env, int64_t lookback_s) {
  rowan_options o;
  rowan_options_init(&o);
  o.kv_env = env;
  o.sync_mode = ROWAN_SYNC_OFF;
  o.max_lookback_seconds = lookback_s;
  rowan_db *db = NULL;
  assert_int_equal(rowan_open("/db", &o, &db), ROWAN_OK);
  return db;
}

/* "k=v;..." of SELECT K, V FROM T ORDER BY K (sql may replace the statement). */
static void rows(rowan_db *db, const char *sql, char *out, size_t cap) {
  rowan_stmt *st = NULL;
  assert_int_equal(rowan_prepare(db, sql ? sql : "SELECT K, V FROM T ORDER BY K", -1, &st, NULL),
                   ROWAN_OK);
  size_t n = 0;
  out[0] = 0;
  int rc;
  while ((rc = rowan_step(st)) == ROWAN_ROW)
    n += (size_t)snprintf(out + n, cap - n, "%lld=%s;", (long long)rowan_column_int64(st, 0),
                          (const char *)rowan_column_text(st, 1));
  assert_int_equal(rc, ROWAN_DONE);
  rowan_finalize(st);
}

/* History: T0 (1,a) (2,b); T0+1000 (1,a2), delete 2, (3,c); T0+2000 now. */
static void history(kv_env *env, rowan_db *db) {
  exec_ok(db, "CREATE TABLE T (K INTEGER PRIMARY KEY, V VARCHAR)");
  exec_ok(db, "CREATE INDEX TV ON T (V)");
  exec_ok(db, "UPSERT INTO T VALUES (1, 'a'), (2, 'b')");
  assert_int_equal(api_test_flush(db), ROWAN_OK);
  kv_env_mem_set_time(env, T0 + 1000);
  exec_ok(db, "UPSERT INTO T VALUES (1, 'a2'), (3, 'c')");
  exec_ok(db, "DELETE FROM T WHERE K = 2");
  kv_env_mem_set_time(env, T0 + 2000);
}

static void set_as_of_reads_the_past(void **state) {
  (void)state;
  kv_env *env = kv_env_mem_new(T0);
  rowan_db *db = open_window(env, 0); /* the default window: one day */
  history(env, db);
  char out[256];
  rows(db, NULL, out, sizeof out);
  assert_string_equal(out, "1=a2;3=c;");
  rowan_stmt *kept = NULL; /* prepared once, run under each setting */
  assert_int_equal(rowan_prepare(db, "SELECT K, V FROM T WHERE V = 'b'", -1, &kept, NULL),
                   ROWAN_OK);
  assert_int_equal(rowan_set_as_of(db, T0 + 500), ROWAN_OK);
  assert_int_equal(rowan_as_of(db), T0 + 500);
  rows(db, NULL, out, sizeof out);
  assert_string_equal(out, "1=a;2=b;");
  /* the filter on V would use index TV in the present; as of the past it does not, and
     finds the deleted row */
  assert_int_equal(rowan_step(kept), ROWAN_ROW);
  assert_int_equal(rowan_column_int64(kept, 0), 2);
  assert_int_equal(rowan_step(kept), ROWAN_DONE);
  rowan_reset(kept);
  /* writes and DDL are refused */
  assert_int_equal(rowan_exec(db, "UPSERT INTO T VALUES (9, 'z')", NULL, NULL), ROWAN_ERROR);
  assert_non_null(strstr(rowan_errmsg(db), "writes and DDL are refused"));
  assert_int_equal(rowan_exec(db, "CREATE TABLE U (K INTEGER PRIMARY KEY)", NULL, NULL),
                   ROWAN_ERROR);
  assert_int_equal(rowan_exec(db, "CHECK INDEX TV ON T", NULL, NULL), ROWAN_OK); /* the present */
  /* a statement's AS OF wins: T0 + 1000 is the second commit (at or before: seen) */
  rows(db, "SELECT K, V FROM T AS OF TIMESTAMP '2023-11-14 22:13:21' ORDER BY K", out,
       sizeof out);
  assert_string_equal(out, "1=a2;3=c;");
  /* exactly at the first commit; and before it, nothing */
  assert_int_equal(rowan_set_as_of(db, T0), ROWAN_OK);
  rows(db, NULL, out, sizeof out);
  assert_string_equal(out, "1=a;2=b;");
  assert_int_equal(rowan_set_as_of(db, T0 - 1), ROWAN_OK);
  rows(db, NULL, out, sizeof out);
  assert_string_equal(out, "");
  /* a major compaction inside the window changes no read of the past */
  assert_int_equal(rowan_set_as_of(db, 0), ROWAN_OK);
  int crc = api_test_compact(db);
  if (crc) fprintf(stderr, "compact: %s\n", rowan_errmsg(db));
  assert_int_equal(crc, ROWAN_OK);
  assert_int_equal(rowan_set_as_of(db, T0 + 500), ROWAN_OK);
  rows(db, NULL, out, sizeof out);
  assert_string_equal(out, "1=a;2=b;");
  assert_int_equal(rowan_step(kept), ROWAN_ROW);
  rowan_reset(kept);
  /* back to the present: the kept statement uses the index again and the row is gone */
  assert_int_equal(rowan_set_as_of(db, 0), ROWAN_OK);
  assert_int_equal(rowan_step(kept), ROWAN_DONE);
  rowan_finalize(kept);
  exec_ok(db, "UPSERT INTO T VALUES (9, 'z')");
  /* two days later the time is outside the window: refused, naming both times */
  kv_env_mem_set_time(env, T0 + 2 * 86400000LL);
  assert_int_equal(rowan_set_as_of(db, T0 + 500), ROWAN_OK);
  rowan_stmt *st = NULL;
  assert_int_equal(rowan_prepare(db, "SELECT K FROM T", -1, &st, NULL), ROWAN_OK);
  assert_int_equal(rowan_step(st), ROWAN_ERROR);
  assert_string_equal(rowan_errmsg(db),
                      "AS OF 2023-11-14 22:13:20.500 UTC is older than the look-back window "
                      "allows: reads as of 2023-11-15 22:13:20.000 UTC or later are exact "
                      "(max_lookback_seconds; docs/SQL.md \"Reading the past\")");
  rowan_finalize(st);
  /* bad arguments */
  assert_int_equal(rowan_set_as_of(db, -5), ROWAN_MISUSE);
  assert_int_equal(rowan_set_as_of(NULL, 5), ROWAN_MISUSE);
  assert_int_equal(rowan_as_of(NULL), 0);
  assert_int_equal(rowan_close(db), ROWAN_OK);
  kv_env_free(env);
}

static void no_window_refuses_the_past(void **state) {
  (void)state;
  kv_env *env = kv_env_mem_new(T0);
  rowan_db *db = open_window(env, -1); /* none: major compaction drops at once */
  history(env, db);
  assert_int_equal(rowan_set_as_of(db, T0 + 500), ROWAN_OK);
  rowan_stmt *st = NULL;
  assert_int_equal(rowan_prepare(db, "SELECT K FROM T", -1, &st, NULL), ROWAN_OK);
  assert_int_equal(rowan_step(st), ROWAN_ERROR);
  assert_non_null(strstr(rowan_errmsg(db), "older than the look-back window"));
  rowan_finalize(st);
  assert_int_equal(rowan_close(db), ROWAN_OK);
  kv_env_free(env);
}

/* The one row of an EXPLAIN statement (the JSON document), into out. */
static void explain_json(rowan_db *db, const char *sql, char *out, size_t cap) {
  rowan_stmt *st = NULL;
  assert_int_equal(rowan_prepare(db, sql, -1, &st, NULL), ROWAN_OK);
  assert_int_equal(rowan_step(st), ROWAN_ROW);
  snprintf(out, cap, "%s", (const char *)rowan_column_text(st, 0));
  assert_int_equal(rowan_step(st), ROWAN_DONE);
  rowan_finalize(st);
}

/* A prepared point lookup of a ROW_TIMESTAMP table, rebound: each run's time range is its
** own values' (a kept plan patched with the new key but the old range would skip the store
** file holding the row). Rows of three times in three store files. */
static void row_timestamp_rebind(void **state) {
  (void)state;
  kv_env *env = kv_env_mem_new(T0);
  rowan_db *db = open_window(env, 0);
  exec_ok(db, "CREATE TABLE EV (K INTEGER NOT NULL, TS TIMESTAMP NOT NULL, V VARCHAR "
              "CONSTRAINT PK PRIMARY KEY (K, TS ROW_TIMESTAMP))");
  static const char *const v[] = {"a", "b", "c"};
  for (int i = 0; i < 3; i++) {
    char sql[160];
    snprintf(sql, sizeof sql, "UPSERT INTO EV VALUES (1, TIMESTAMP '2024-01-0%d 00:00:00', '%s')",
             i + 1, v[i]);
    exec_ok(db, sql);
    assert_int_equal(api_test_flush(db), ROWAN_OK);
  }
  rowan_stmt *st = NULL;
  assert_int_equal(rowan_prepare(db, "SELECT V FROM EV WHERE K = ? AND TS = ?", -1, &st, NULL),
                   ROWAN_OK);
  for (int round = 0; round < 2; round++)
    for (int i = 0; i < 3; i++) {
      int d = round ? 2 - i : i; /* up, then down */
      assert_int_equal(rowan_bind_int64(st, 1, 1), ROWAN_OK);
      assert_int_equal(rowan_bind_timestamp(st, 2, 1704067200000LL + d * 86400000LL), ROWAN_OK);
      assert_int_equal(rowan_step(st), ROWAN_ROW);
      assert_string_equal((const char *)rowan_column_text(st, 0), v[d]);
      assert_int_equal(rowan_step(st), ROWAN_DONE);
      rowan_reset(st);
    }
  rowan_finalize(st);
  /* EXPLAIN (FORMAT JSON): the time range's node, with the files it pruned (two of the three
     files of the one family read: every row has V, so the key family is not read) */
  char doc[4096];
  explain_json(db, "EXPLAIN (ANALYZE, FORMAT JSON) SELECT V FROM EV WHERE TS >= TIMESTAMP "
                   "'2024-01-02 00:00:00' AND TS < TIMESTAMP '2024-01-03 00:00:00'", doc, sizeof doc);
  assert_non_null(strstr(doc, "{\"step\": \"TIME RANGE\", \"from\": \"2024-01-02 00:00:00.000\", "
                              "\"to\": \"2024-01-03 00:00:00.000\", \"column\": \"TS\", "
                              "\"actual\": {\"pruned\": 2, \"read\": 1}}"));
  /* under AS OF: the time first in the document, the index note as a HINT node */
  exec_ok(db, "CREATE INDEX EVV ON EV (V)");
  assert_int_equal(rowan_set_as_of(db, 1704153600000LL), ROWAN_OK);
  explain_json(db, "EXPLAIN (FORMAT JSON) SELECT K FROM EV WHERE V = 'b'", doc, sizeof doc);
  assert_int_equal(strncmp(doc, "{\"as_of\": \"2024-01-02 00:00:00.000 UTC\", \"statement\"", 51),
                   0);
  assert_non_null(strstr(doc, "{\"step\": \"HINT\", \"note\": \"AS OF: secondary indexes are not "
                              "used (their rows need not reflect the past)\"}"));
  assert_int_equal(rowan_close(db), ROWAN_OK);
  kv_env_free(env);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(set_as_of_reads_the_past),
      cmocka_unit_test(no_window_refuses_the_past),
      cmocka_unit_test(row_timestamp_rebind),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
