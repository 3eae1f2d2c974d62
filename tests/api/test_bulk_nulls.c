/*
** tests/api/test_bulk_nulls.c: NULL fields of a bulk load (exec/bulk.c, kv_bulk_fresh). Into
** a family that held no cell at begin, a NULL of a row the load adds once writes no
** tombstone: the rows read exactly as the same rows loaded by UPSERT (NULLs, COUNT of a
** column, IS NULL), and the columnar aggregate reads every block the column way (EXPLAIN
** ANALYZE: no row-way block; a tombstone in a block would send it the row way). A key
** repeated in the load keeps its NULL's tombstone, which masks the earlier row's value,
** in any order of value and NULL rows. A table that has rows at begin keeps every
** tombstone (a NULL deletes the older value). A cell written into such a fresh family by
** another statement during the load makes the commit fail with nothing loaded; a row with
** no cell in that family (only its key) does not. rowan_bulk_status's answers (the empty
** table the shell's `.import` bulk-loads by default, a key repeated under an index). A
** load of more keys than it keeps exact hashes of (then a bit per hash, so its memory
** stays bounded) still masks every repeat.
*/
#include <setjmp.h>
#include <stdbool.h>
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
#include "tu_api.h"

static char dir[128];

static int setup(void **state) {
  (void)state;
  snprintf(dir, sizeof dir, "/tmp/rowan_test_bulk_nulls_%d", (int)getpid());
  char cmd[200];
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  return system(cmd) == 0 ? 0 : -1;
}

static int teardown(void **state) { return setup(state); }

static rowan_db *open_db(void) {
  rowan_db *db;
  rowan_options o;
  rowan_options_init(&o);
  assert_int_equal(rowan_open(dir, &o, &db), ROWAN_OK);
  return db;
}

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

/* Bulk rows "k,v,w" (NULL text = NULL field) into table t; the commit's result. */
static int bulk(rowan_db *db, const char *t, const char *const (*rows)[3], int n) {
  static const char *const cols[] = {"K", "V", "W"};
  rowan_bulk *b;
  if (rowan_bulk_begin(db, t, 3, cols, &b) != ROWAN_OK) fail_msg("begin: %s", rowan_errmsg(db));
  for (int i = 0; i < n; i++)
    if (rowan_bulk_add_text(b, rows[i], NULL) != ROWAN_OK) fail_msg("add: %s", rowan_errmsg(db));
  return rowan_bulk_commit(b);
}

static void upsert(rowan_db *db, const char *t, const char *const (*rows)[3], int n) {
  char sql[200];
  snprintf(sql, sizeof sql, "UPSERT INTO %s (K, V, W) VALUES (?, ?, ?)", t);
  rowan_stmt *st;
  assert_int_equal(rowan_prepare(db, sql, -1, &st, NULL), ROWAN_OK);
  exec_ok(db, "BEGIN");
  for (int i = 0; i < n; i++) {
    for (int c = 0; c < 3; c++)
      assert_int_equal(rows[i][c] ? rowan_bind_text(st, c + 1, rows[i][c], -1)
                                  : rowan_bind_null(st, c + 1),
                       ROWAN_OK);
    if (rowan_step(st) != ROWAN_DONE) fail_msg("UPSERT: %s", rowan_errmsg(db));
    rowan_reset(st);
  }
  exec_ok(db, "COMMIT");
  rowan_finalize(st);
}

static void same(rowan_db *db, const char *sql_t, const char *sql_ref) {
  char *a = query(db, sql_t), *r = query(db, sql_ref);
  if (strcmp(a, r) != 0) fail_msg("%s gives\n%s\nbut %s gives\n%s", sql_t, a, sql_ref, r);
  free(a);
  free(r);
}

#define DDL "(K INTEGER NOT NULL PRIMARY KEY, F.V INTEGER, F.W INTEGER) BLOCKSIZE=512"

/* Unique keys into an empty table: the NULLs read as NULL, and no block goes the row way. */
static void test_fresh_unique(void **state) {
  (void)state;
  rowan_db *db = open_db();
  exec_ok(db, "CREATE TABLE P " DDL);
  exec_ok(db, "CREATE TABLE PR " DDL);
  uint64_t seed = tu_seed("bulk_nulls_unique"), rng = seed;
  int n = (int)tu_scaled(20000, 5000);
  char (*txt)[2][16] = calloc((size_t)n, sizeof *txt);
  const char *(*rows)[3] = calloc((size_t)n, sizeof *rows);
  char (*keys)[16] = calloc((size_t)n, sizeof *keys);
  for (int i = 0; i < n; i++) {
    int k = (i * 7919) % n; /* every key once, in no order */
    snprintf(keys[i], 16, "%d", k);
    snprintf(txt[i][0], 16, "%d", (int)tu_below(&rng, 100));
    snprintf(txt[i][1], 16, "%d", (int)tu_below(&rng, 1000));
    rows[i][0] = keys[i];
    rows[i][1] = tu_below(&rng, 10) == 0 ? NULL : txt[i][0];
    rows[i][2] = tu_below(&rng, 4) == 0 ? NULL : txt[i][1];
  }
  assert_int_equal(bulk(db, "P", rows, n), ROWAN_OK);
  upsert(db, "PR", rows, n);
  same(db, "SELECT * FROM P", "SELECT * FROM PR");
  same(db, "SELECT COUNT(V), COUNT(W), COUNT(*) FROM P WHERE V IS NULL OR W > 500",
       "SELECT COUNT(V), COUNT(W), COUNT(*) FROM PR WHERE V IS NULL OR W > 500");
  same(db, "SELECT COUNT(*), SUM(W) FROM P WHERE V > 50", "SELECT COUNT(*), SUM(W) FROM PR WHERE V > 50");
  char *ex = query(db, "EXPLAIN ANALYZE SELECT COUNT(*) FROM P WHERE V > 50");
  if (!strstr(ex, "row-way blocks=0")) fail_msg("seed %llu: %s", (unsigned long long)seed, ex);
  free(ex);
  assert_int_equal(rowan_close(db), ROWAN_OK);
  free(txt);
  free(rows);
  free(keys);
}

/* Repeated keys: the later row wins column by column, a NULL masking an earlier value, in
** every order; the same rows again into a table that has rows keep every tombstone. */
static void test_repeats_and_old_rows(void **state) {
  (void)state;
  rowan_db *db = open_db();
  static const char *const rows[][3] = {
      {"1", "10", "11"}, {"2", NULL, "21"}, {"3", "30", NULL}, {"4", NULL, NULL},
      {"1", NULL, "12"}, {"2", "20", NULL}, {"3", NULL, NULL}, {"4", "40", NULL},
      {"5", "50", "51"}, {"6", NULL, "61"}, {"5", NULL, NULL}, {"6", "60", NULL},
      {"7", NULL, NULL}, {"8", "80", "81"}, {"7", NULL, "71"}, {"1", "13", NULL},
  };
  int n = (int)(sizeof rows / sizeof rows[0]);
  exec_ok(db, "CREATE TABLE R " DDL);
  exec_ok(db, "CREATE TABLE RR " DDL);
  assert_int_equal(bulk(db, "R", rows, n), ROWAN_OK);
  upsert(db, "RR", rows, n);
  same(db, "SELECT * FROM R", "SELECT * FROM RR");
  /* a table with rows: the NULLs of the load delete the values loaded before */
  static const char *const again[][3] = {{"1", NULL, NULL}, {"5", "55", NULL}, {"8", NULL, "88"}};
  assert_int_equal(bulk(db, "R", again, 3), ROWAN_OK);
  upsert(db, "RR", again, 3);
  same(db, "SELECT * FROM R", "SELECT * FROM RR");
  char *got = query(db, "SELECT V, W FROM R WHERE K = 1");
  assert_string_equal(got, "NULL|NULL\n");
  free(got);
  assert_int_equal(rowan_close(db), ROWAN_OK);
}

/* A cell written into the fresh family during the load: the commit fails, nothing of the
** load is there; a row with only its key during another load does not stop it. */
static void test_written_during_load(void **state) {
  (void)state;
  rowan_db *db = open_db();
  exec_ok(db, "CREATE TABLE C " DDL);
  static const char *const rows[][3] = {{"1", NULL, "11"}, {"2", "20", NULL}};
  static const char *const cols[] = {"K", "V", "W"};
  rowan_bulk *b;
  assert_int_equal(rowan_bulk_begin(db, "C", 3, cols, &b), ROWAN_OK);
  for (int i = 0; i < 2; i++) assert_int_equal(rowan_bulk_add_text(b, rows[i], NULL), ROWAN_OK);
  exec_ok(db, "UPSERT INTO C (K, V) VALUES (1, 5)");
  assert_int_not_equal(rowan_bulk_commit(b), ROWAN_OK);
  assert_non_null(strstr(rowan_errmsg(db), "nothing was loaded"));
  char *got = query(db, "SELECT * FROM C");
  assert_string_equal(got, "1|5|NULL\n");
  free(got);
  exec_ok(db, "CREATE TABLE D " DDL);
  assert_int_equal(rowan_bulk_begin(db, "D", 3, cols, &b), ROWAN_OK);
  for (int i = 0; i < 2; i++) assert_int_equal(rowan_bulk_add_text(b, rows[i], NULL), ROWAN_OK);
  exec_ok(db, "UPSERT INTO D (K) VALUES (9)"); /* its key only: family F stays empty */
  assert_int_equal(rowan_bulk_commit(b), ROWAN_OK);
  got = query(db, "SELECT * FROM D");
  assert_string_equal(got, "1|NULL|11\n2|20|NULL\n9|NULL|NULL\n");
  free(got);
  assert_int_equal(rowan_close(db), ROWAN_OK);
}

/* rowan_bulk_status: ROWAN_BULK_WAS_EMPTY is 1 for a table with no cell in any family (its
** index's too), 0 once a row was written, also after the row is deleted (its tombstones
** stay); ROWAN_BULK_REPEAT is 1 right after a key
** repeated under an index is refused, 0 after a good row; NULL and an unknown question -1. */
static void test_status(void **state) {
  (void)state;
  rowan_db *db = open_db();
  exec_ok(db, "CREATE TABLE E (K INTEGER NOT NULL PRIMARY KEY, V DOUBLE, W.X VARCHAR)");
  exec_ok(db, "CREATE TABLE D (K INTEGER NOT NULL PRIMARY KEY, V DOUBLE)");
  exec_ok(db, "UPSERT INTO D VALUES (1, 2)");
  exec_ok(db, "DELETE FROM D");
  exec_ok(db, "CREATE TABLE I (K INTEGER NOT NULL PRIMARY KEY, V DOUBLE)");
  exec_ok(db, "CREATE INDEX IV ON I (V)");
  const char *cols[2] = {"K", "V"};
  rowan_bulk *b = NULL;
  assert_int_equal(rowan_bulk_status(NULL, ROWAN_BULK_WAS_EMPTY), -1);
  assert_int_equal(rowan_bulk_begin(db, "E", 2, cols, &b), ROWAN_OK);
  assert_int_equal(rowan_bulk_status(b, ROWAN_BULK_WAS_EMPTY), 1);
  assert_int_equal(rowan_bulk_status(b, 99), -1);
  rowan_bulk_abort(b);
  exec_ok(db, "UPSERT INTO E (K, X) VALUES (1, 'a')"); /* a cell in family W only */
  assert_int_equal(rowan_bulk_begin(db, "E", 2, cols, &b), ROWAN_OK);
  assert_int_equal(rowan_bulk_status(b, ROWAN_BULK_WAS_EMPTY), 0);
  rowan_bulk_abort(b);
  assert_int_equal(rowan_bulk_begin(db, "D", 2, cols, &b), ROWAN_OK);
  assert_int_equal(rowan_bulk_status(b, ROWAN_BULK_WAS_EMPTY), 0); /* deleted, not empty */
  rowan_bulk_abort(b);
  assert_int_equal(rowan_bulk_begin(db, "I", 2, cols, &b), ROWAN_OK);
  assert_int_equal(rowan_bulk_status(b, ROWAN_BULK_WAS_EMPTY), 1);
  const char *r1[2] = {"1", "5"}, *r2[2] = {"2", "x"};
  assert_int_equal(rowan_bulk_add_text(b, r1, NULL), ROWAN_OK);
  assert_int_equal(rowan_bulk_status(b, ROWAN_BULK_REPEAT), 0);
  assert_int_equal(rowan_bulk_add_text(b, r1, NULL), ROWAN_CONSTRAINT);
  assert_int_equal(rowan_bulk_status(b, ROWAN_BULK_REPEAT), 1);
  assert_int_equal(rowan_bulk_add_text(b, r2, NULL), ROWAN_CONSTRAINT); /* a bad value */
  assert_int_equal(rowan_bulk_status(b, ROWAN_BULK_REPEAT), 0);
  assert_int_equal(rowan_bulk_commit(b), ROWAN_OK);
  char *got = query(db, "SELECT K, V FROM I");
  assert_string_equal(got, "1|5.0\n");
  free(got);
  rowan_close(db);
}

/* More keys than a load keeps exact hashes of (bulk_memory 1 MiB: 32,768 hashes, then a bit
** per hash; exec/bulk.c key_check): every repeated key still keeps its NULL's tombstone,
** which masks the earlier value, whether it comes in a new ascending run, descending, or
** after the keys were folded into the bits; a key loaded once reads its NULLs as NULL. */
static void test_repeats_past_exact_keys(void **state) {
  (void)state;
  rowan_options o;
  rowan_options_init(&o);
  o.bulk_memory = 1u << 20;
  rowan_db *db;
  assert_int_equal(rowan_open(dir, &o, &db), ROWAN_OK);
  exec_ok(db, "CREATE TABLE M " DDL);
  int n = 60000, m = 0;
  const char *(*rows)[3] = calloc((size_t)n + 2000, sizeof *rows);
  char (*txt)[3][16] = calloc((size_t)n + 2000, sizeof *txt);
  long long *v = calloc((size_t)n, sizeof *v); /* each key's V at the end, -1 for NULL */
  for (int k = 0; k < n; k++) { /* ascending, V = k, W NULL for every fifth key */
    snprintf(txt[m][0], 16, "%d", k);
    snprintf(txt[m][1], 16, "%d", k);
    snprintf(txt[m][2], 16, "%d", k + 1);
    rows[m][0] = txt[m][0];
    rows[m][1] = txt[m][1];
    rows[m][2] = k % 5 ? txt[m][2] : NULL;
    v[k] = k;
    m++;
  }
  for (int k = n - 7; k >= 0; k -= 61) { /* descending repeats: V NULL */
    snprintf(txt[m][0], 16, "%d", k);
    rows[m][0] = txt[m][0];
    rows[m][1] = rows[m][2] = NULL;
    v[k] = -1;
    m++;
  }
  for (int k = 3; k < n; k += 97) { /* ascending repeats, V NULL, W a value */
    snprintf(txt[m][0], 16, "%d", k);
    snprintf(txt[m][2], 16, "%d", 7);
    rows[m][0] = txt[m][0];
    rows[m][1] = NULL;
    rows[m][2] = txt[m][2];
    v[k] = -1;
    m++;
  }
  assert_true(m <= n + 2000);
  assert_int_equal(bulk(db, "M", rows, m), ROWAN_OK);
  long long count = 0, sum = 0;
  for (int k = 0; k < n; k++)
    if (v[k] >= 0) count++, sum += v[k];
  char want[128];
  snprintf(want, sizeof want, "%d|%lld|%lld\n", n, count, sum);
  char *got = query(db, "SELECT COUNT(*), COUNT(V), SUM(V) FROM M");
  assert_string_equal(got, want);
  free(got);
  got = query(db, "SELECT K, V, W FROM M WHERE K = 3 OR K = 5 OR K = 10");
  assert_string_equal(got, "3|NULL|7\n5|5|NULL\n10|10|NULL\n");
  free(got);
  assert_int_equal(rowan_close(db), ROWAN_OK);
  free(rows);
  free(txt);
  free(v);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_fresh_unique, setup, teardown),
      cmocka_unit_test_setup_teardown(test_repeats_and_old_rows, setup, teardown),
      cmocka_unit_test_setup_teardown(test_written_during_load, setup, teardown),
      cmocka_unit_test_setup_teardown(test_status, setup, teardown),
      cmocka_unit_test_setup_teardown(test_repeats_past_exact_keys, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
