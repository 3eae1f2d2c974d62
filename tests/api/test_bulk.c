/*
** tests/api/test_bulk.c: the public bulk load (rowan_bulk_* in include/rowan.h): rows land
** as UPSERTs would (columns given are set, others kept, NULL deletes, a later row of the
** same key wins), a bad row is refused with ROWAN_CONSTRAINT naming the column and value
** and the load goes on without it, commit is all or nothing (abort and a reopen show
** nothing of an uncommitted load), argument errors, tables with an index are refused, and
** a larger randomized load agrees with the same rows loaded by UPSERT (seeded).
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "rowan.h"
#include "testutil.h"

static char dir[256];

static rowan_db *open_db(void) {
  rowan_db *db;
  rowan_options o;
  rowan_options_init(&o);
  assert_int_equal(rowan_open(dir, &o, &db), ROWAN_OK);
  return db;
}

static int setup(void **state) {
  (void)state;
  snprintf(dir, sizeof dir, "/tmp/rowan_test_bulk_%d", (int)getpid());
  char cmd[300];
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  if (system(cmd) != 0) return -1;
  return 0;
}

static void exec_ok(rowan_db *db, const char *sql) {
  if (rowan_exec(db, sql, NULL, NULL) != ROWAN_OK) fail_msg("%s: %s", sql, rowan_errmsg(db));
}

/* Every row of the query as "a|b|c\n" text (caller frees). */
typedef struct acc { char *p; size_t len, cap; } acc;
static int collect(void *ctx, int n, char **v, char **names) {
  (void)names;
  acc *a = ctx;
  for (int i = 0; i < n; i++) {
    const char *s = v[i] ? v[i] : "NULL";
    size_t k = strlen(s) + 2;
    if (a->len + k + 1 > a->cap) {
      a->cap = (a->len + k + 1) * 2;
      a->p = realloc(a->p, a->cap);
    }
    a->len += (size_t)sprintf(a->p + a->len, "%s%s", s, i + 1 < n ? "|" : "\n");
  }
  return 0;
}
static char *query(rowan_db *db, const char *sql) {
  acc a = {calloc(1, 1), 0, 1};
  if (rowan_exec(db, sql, collect, &a) != ROWAN_OK) fail_msg("%s: %s", sql, rowan_errmsg(db));
  return a.p;
}

static void test_semantics(void **state) {
  (void)state;
  rowan_db *db = open_db();
  exec_ok(db, "CREATE TABLE T (ID VARCHAR NOT NULL, TS TIMESTAMP NOT NULL, R.TEMP DOUBLE, "
              "R.N INTEGER, M.NOTE VARCHAR(5) CONSTRAINT PK PRIMARY KEY (ID, TS DESC))");
  exec_ok(db, "UPSERT INTO T VALUES ('a', '2020-01-01 00:00:00', 1.5, 7, 'keep')");
  const char *cols[] = {"id", "TS", "temp", "n"};
  rowan_bulk *b;
  assert_int_equal(rowan_bulk_begin(db, "t", 4, cols, &b), ROWAN_OK);
  const char *r1[] = {"a", "2020-01-01 00:00:00", "2.25", NULL}; /* NULL deletes N */
  const char *r2[] = {"b", "2020-01-02 10:00:00", "-3", "12"};
  const char *r3[] = {"b", "2020-01-02 10:00:00", "4.5", "13"};  /* replaces r2 */
  const char *bad1[] = {"c", "2020-01-02 10:00:00", "abc", "1"};
  const char *bad2[] = {"c", "2020-02-30 10:00:00", "1", "1"};
  const char *bad3[] = {NULL, "2020-01-02 10:00:00", "1", "1"};
  const char *bad4[] = {"c", "2020-01-02 10:00:00", "1", "99999999999"};
  assert_int_equal(rowan_bulk_add_text(b, r1, NULL), ROWAN_OK);
  assert_int_equal(rowan_bulk_add_text(b, r2, NULL), ROWAN_OK);
  assert_int_equal(rowan_bulk_add_text(b, bad1, NULL), ROWAN_CONSTRAINT);
  assert_non_null(strstr(rowan_errmsg(db), "TEMP"));
  assert_non_null(strstr(rowan_errmsg(db), "abc"));
  assert_int_equal(rowan_bulk_add_text(b, bad2, NULL), ROWAN_CONSTRAINT);
  assert_non_null(strstr(rowan_errmsg(db), "2020-02-30"));
  assert_int_equal(rowan_bulk_add_text(b, bad3, NULL), ROWAN_CONSTRAINT);
  assert_non_null(strstr(rowan_errmsg(db), "ID"));
  assert_int_equal(rowan_bulk_add_text(b, bad4, NULL), ROWAN_CONSTRAINT);
  assert_non_null(strstr(rowan_errmsg(db), "99999999999"));
  int lens[] = {1, 19, 3, -1};
  assert_int_equal(rowan_bulk_add_text(b, r3, lens), ROWAN_OK); /* "4.5" */
  char *before = query(db, "SELECT COUNT(*) FROM T");
  assert_string_equal(before, "1\n"); /* nothing visible before commit */
  free(before);
  assert_int_equal(rowan_bulk_commit(b), ROWAN_OK);
  assert_int_equal(rowan_changes(db), 3);
  char *got = query(db, "SELECT ID, TS, TEMP, N, NOTE FROM T");
  assert_string_equal(got, "a|2020-01-01 00:00:00|2.25|NULL|keep\n"
                           "b|2020-01-02 10:00:00|4.5|13|NULL\n");
  free(got);
  /* an UPSERT after the load is newer */
  exec_ok(db, "UPSERT INTO T (ID, TS, N) VALUES ('b', '2020-01-02 10:00:00', 99)");
  got = query(db, "SELECT N FROM T WHERE ID = 'b'");
  assert_string_equal(got, "99\n");
  free(got);
  assert_int_equal(rowan_close(db), ROWAN_OK);
  db = open_db();
  got = query(db, "SELECT ID, TEMP, N, NOTE FROM T");
  assert_string_equal(got, "a|2.25|NULL|keep\nb|4.5|99|NULL\n");
  free(got);
  exec_ok(db, "DROP TABLE T");
  assert_int_equal(rowan_close(db), ROWAN_OK);
}

static void test_atomic_and_errors(void **state) {
  (void)state;
  rowan_db *db = open_db();
  exec_ok(db, "CREATE TABLE U (K INTEGER NOT NULL PRIMARY KEY, V VARCHAR)");
  rowan_bulk *b;
  const char *c1[] = {"K", "V"}, *cdup[] = {"K", "K"}, *cnok[] = {"V"}, *cbad[] = {"K", "W"};
  assert_int_equal(rowan_bulk_begin(db, "NOPE", 2, c1, &b), ROWAN_ERROR);
  assert_null(b);
  assert_int_equal(rowan_bulk_begin(db, "U", 2, cdup, &b), ROWAN_ERROR);
  assert_int_equal(rowan_bulk_begin(db, "U", 1, cnok, &b), ROWAN_ERROR);
  assert_non_null(strstr(rowan_errmsg(db), "K"));
  assert_int_equal(rowan_bulk_begin(db, "U", 2, cbad, &b), ROWAN_ERROR);
  assert_non_null(strstr(rowan_errmsg(db), "W"));
  assert_int_equal(rowan_bulk_begin(db, "U", 2, NULL, &b), ROWAN_MISUSE);
  exec_ok(db, "BEGIN");
  assert_int_equal(rowan_bulk_begin(db, "U", 2, c1, &b), ROWAN_MISUSE);
  exec_ok(db, "COMMIT");
  /* abort: nothing */
  assert_int_equal(rowan_bulk_begin(db, "U", 2, c1, &b), ROWAN_OK);
  for (int i = 0; i < 100; i++) {
    char k[16];
    snprintf(k, sizeof k, "%d", i);
    const char *f[] = {k, "x"};
    assert_int_equal(rowan_bulk_add_text(b, f, NULL), ROWAN_OK);
  }
  rowan_bulk_abort(b);
  char *got = query(db, "SELECT COUNT(*) FROM U");
  assert_string_equal(got, "0\n");
  free(got);
  /* uncommitted at close: nothing after reopen */
  assert_int_equal(rowan_bulk_begin(db, "U", 2, c1, &b), ROWAN_OK);
  const char *f[] = {"1", "y"};
  assert_int_equal(rowan_bulk_add_text(b, f, NULL), ROWAN_OK);
  rowan_bulk_abort(b);
  assert_int_equal(rowan_close(db), ROWAN_OK);
  db = open_db();
  got = query(db, "SELECT COUNT(*) FROM U");
  assert_string_equal(got, "0\n");
  free(got);
  /* an index: taken while the table is empty, refused with its name once it is not */
  exec_ok(db, "CREATE INDEX UV ON U (V)");
  assert_int_equal(rowan_bulk_begin(db, "U", 2, c1, &b), ROWAN_OK);
  rowan_bulk_abort(b);
  exec_ok(db, "UPSERT INTO U VALUES (1, 'a')");
  assert_int_equal(rowan_bulk_begin(db, "U", 2, c1, &b), ROWAN_ERROR);
  assert_non_null(strstr(rowan_errmsg(db), "UV"));
  exec_ok(db, "DROP TABLE U");
  assert_int_equal(rowan_close(db), ROWAN_OK);
}

/* Random rows (with repeated keys and NULLs) by bulk load and by UPSERT give the same table. */
static void test_random_vs_upsert(void **state) {
  (void)state;
  uint64_t seed = tu_seed("api_bulk_random"), rng = seed;
  rowan_db *db = open_db();
  exec_ok(db, "CREATE TABLE A (S VARCHAR NOT NULL, T TIMESTAMP NOT NULL, X DOUBLE, Y BIGINT "
              "CONSTRAINT PK PRIMARY KEY (S, T DESC))");
  exec_ok(db, "CREATE TABLE B (S VARCHAR NOT NULL, T TIMESTAMP NOT NULL, X DOUBLE, Y BIGINT "
              "CONSTRAINT PK PRIMARY KEY (S, T DESC))");
  const char *cols[] = {"S", "T", "X", "Y"};
  rowan_bulk *b;
  assert_int_equal(rowan_bulk_begin(db, "A", 4, cols, &b), ROWAN_OK);
  rowan_stmt *st;
  assert_int_equal(rowan_prepare(db, "UPSERT INTO B VALUES (?, ?, ?, ?)", -1, &st, NULL),
                   ROWAN_OK);
  exec_ok(db, "BEGIN");
  int n = (int)tu_scaled(20000, 2000);
  for (int i = 0; i < n; i++) {
    char s[16], t[64], x[32], y[32];
    snprintf(s, sizeof s, "s%02d", (int)tu_below(&rng, 20));
    snprintf(t, sizeof t, "2021-%02d-%02d %02d:%02d:00", 1 + (int)tu_below(&rng, 12),
             1 + (int)tu_below(&rng, 28), (int)tu_below(&rng, 24), (int)tu_below(&rng, 60));
    snprintf(x, sizeof x, "%d.%d", (int)tu_below(&rng, 2000) - 1000, (int)tu_below(&rng, 100));
    snprintf(y, sizeof y, "%lld", (long long)tu_below(&rng, 1000000));
    const char *f[] = {s, t, tu_below(&rng, 10) ? x : NULL, tu_below(&rng, 10) ? y : NULL};
    assert_int_equal(rowan_bulk_add_text(b, f, NULL), ROWAN_OK);
    for (int k = 0; k < 4; k++)
      assert_int_equal(f[k] ? rowan_bind_text(st, k + 1, f[k], -1) : rowan_bind_null(st, k + 1),
                       ROWAN_OK);
    assert_int_equal(rowan_step(st), ROWAN_DONE);
    rowan_reset(st);
  }
  exec_ok(db, "COMMIT");
  rowan_finalize(st);
  assert_int_equal(rowan_bulk_commit(b), ROWAN_OK);
  char *a = query(db, "SELECT * FROM A"), *bb = query(db, "SELECT * FROM B");
  if (strcmp(a, bb) != 0) fail_msg("seed %llu: bulk and UPSERT tables differ", (unsigned long long)seed);
  assert_true(strlen(a) > 1000);
  free(a);
  free(bb);
  assert_int_equal(rowan_close(db), ROWAN_OK);
}

static int teardown(void **state) {
  (void)state;
  char cmd[300];
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  return system(cmd) == 0 ? 0 : -1;
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_semantics),
      cmocka_unit_test(test_atomic_and_errors),
      cmocka_unit_test(test_random_vs_upsert),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
