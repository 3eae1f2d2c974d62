/*
** tests/api/test_bulk.c: the public bulk load (rowan_bulk_* in include/rowan.h): rows land
** as UPSERTs would (columns given are set, others kept, NULL deletes, a later row of the
** same key wins), a bad row is refused with ROWAN_CONSTRAINT naming the column and value
** and the load goes on without it, commit is all or nothing (abort and a reopen show
** nothing of an uncommitted load), argument errors, tables with an index are refused, and
** a larger randomized load agrees with the same rows loaded by UPSERT (seeded). Every
** column type, loaded in key order, in reverse key order (a time series against a DESC
** key) and shuffled, gives the table the same rows by UPSERT give; so does a load into an
** empty table with an index (the index agrees with its table, and a query forced through
** it returns what the table returns). Typed rows (rowan_bulk_add_values) land as the same
** values bound to an UPSERT do.
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

#include "kv/env/env_mem.h"
#include "rowan.h"
#include "testutil.h"
#include "tu_api.h"

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

#define TYPES_COLS 14
static const char *const types_cols[TYPES_COLS] = {"K1", "K2", "B1", "T1", "S1", "I1", "F1",
                                                  "D1", "DEC1", "C1", "V1", "DT", "TM", "TSX"};
#define TYPES_DDL(name, extra)                                                              \
  "CREATE TABLE " name " (K1 VARCHAR NOT NULL, K2 BIGINT NOT NULL, A.B1 BOOLEAN, "        \
  "A.T1 TINYINT, A.S1 SMALLINT, A.I1 INTEGER, B.F1 FLOAT, B.D1 DOUBLE, B.DEC1 DECIMAL(10,2), " \
  "B.C1 CHAR(4), B.V1 VARCHAR(8), B.DT DATE, B.TM TIME, B.TSX TIMESTAMP " extra             \
  "CONSTRAINT PK PRIMARY KEY (K1, K2 DESC))"

static int line_cmp(const void *x, const void *y) {
  return strcmp(*(char *const *)x, *(char *const *)y);
}

/* Sort the lines of text in place. */
static void sort_lines(char *text) {
  size_t n = 0, len = strlen(text);
  for (size_t i = 0; i < len; i++) n += text[i] == '\n';
  char **v = calloc(n + 1, sizeof *v), *copy = strdup(text);
  size_t k = 0;
  for (char *p = copy; k < n; k++) {
    v[k] = p;
    p = strchr(p, '\n');
    *p++ = 0;
  }
  qsort(v, n, sizeof *v, line_cmp);
  char *o = text;
  for (size_t i = 0; i < n; i++) o += sprintf(o, "%s\n", v[i]);
  free(v);
  free(copy);
}

/* One row's fields as text for row i of station k (NULLs at random). */
typedef struct trow { char f[TYPES_COLS][40]; bool null[TYPES_COLS]; } trow;

static void gen_trow(uint64_t *rng, int k, int i, trow *r) {
  snprintf(r->f[0], 40, "st%d", k);
  snprintf(r->f[1], 40, "%d", i * 3 - 500);
  snprintf(r->f[2], 40, "%s", tu_below(rng, 2) ? "true" : "false");
  snprintf(r->f[3], 40, "%d", (int)tu_below(rng, 256) - 128);
  snprintf(r->f[4], 40, "%d", (int)tu_below(rng, 65536) - 32768);
  snprintf(r->f[5], 40, "%lld", (long long)tu_below(rng, 4000000000u) - 2000000000LL);
  snprintf(r->f[6], 40, "%d.%d", (int)tu_below(rng, 2000) - 1000, (int)tu_below(rng, 1000));
  snprintf(r->f[7], 40, "%d.%02d", (int)tu_below(rng, 200000) - 100000, (int)tu_below(rng, 100));
  snprintf(r->f[8], 40, "%d.%02d", (int)tu_below(rng, 2000000) - 1000000, (int)tu_below(rng, 100));
  snprintf(r->f[9], 40, "%c%c", 'a' + (int)tu_below(rng, 26), 'a' + (int)tu_below(rng, 26));
  snprintf(r->f[10], 40, "v%d", (int)tu_below(rng, 100000));
  snprintf(r->f[11], 40, "20%02d-%02d-%02d", (int)tu_below(rng, 30), 1 + (int)tu_below(rng, 12),
           1 + (int)tu_below(rng, 28));
  snprintf(r->f[12], 40, "%02d:%02d:%02d", (int)tu_below(rng, 24), (int)tu_below(rng, 60),
           (int)tu_below(rng, 60));
  snprintf(r->f[13], 40, "2021-%02d-%02d %02d:00:00", 1 + (int)tu_below(rng, 12),
           1 + (int)tu_below(rng, 28), (int)tu_below(rng, 24));
  for (int c = 0; c < TYPES_COLS; c++) r->null[c] = c >= 2 && tu_below(rng, 8) == 0;
}

static void bulk_rows(rowan_db *db, const char *table, const trow *rows, const int *order,
                      int n) {
  rowan_bulk *b;
  if (rowan_bulk_begin(db, table, TYPES_COLS, types_cols, &b) != ROWAN_OK)
    fail_msg("rowan_bulk_begin %s: %s", table, rowan_errmsg(db));
  for (int i = 0; i < n; i++) {
    const trow *r = &rows[order[i]];
    const char *f[TYPES_COLS];
    for (int c = 0; c < TYPES_COLS; c++) f[c] = r->null[c] ? NULL : r->f[c];
    if (rowan_bulk_add_text(b, f, NULL) != ROWAN_OK)
      fail_msg("rowan_bulk_add_text %s: %s", table, rowan_errmsg(db));
  }
  if (rowan_bulk_commit(b) != ROWAN_OK) fail_msg("rowan_bulk_commit %s: %s", table, rowan_errmsg(db));
}

static void upsert_rows(rowan_db *db, const char *table, const trow *rows, int n) {
  char sql[256];
  snprintf(sql, sizeof sql, "UPSERT INTO %s (K1, K2, B1, T1, S1, I1, F1, D1, DEC1, C1, V1, DT, "
           "TM, TSX) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", table);
  rowan_stmt *st;
  assert_int_equal(rowan_prepare(db, sql, -1, &st, NULL), ROWAN_OK);
  exec_ok(db, "BEGIN");
  for (int i = 0; i < n; i++) {
    for (int c = 0; c < TYPES_COLS; c++)
      assert_int_equal(rows[i].null[c] ? rowan_bind_null(st, c + 1)
                                       : rowan_bind_text(st, c + 1, rows[i].f[c], -1),
                       ROWAN_OK);
    if (rowan_step(st) != ROWAN_DONE) fail_msg("UPSERT row %d: %s", i, rowan_errmsg(db));
    rowan_reset(st);
  }
  exec_ok(db, "COMMIT");
  rowan_finalize(st);
}

/* Every type, distinct keys: rows loaded in key order, in reverse key order (each station's
** rows by ascending K2 against K2 DESC, as a time series comes) and shuffled give exactly
** the rows the same UPSERTs give. */
static void test_types_and_orders(void **state) {
  (void)state;
  uint64_t seed = tu_seed("api_bulk_orders"), rng = seed;
  int per = (int)tu_scaled(3000, 300), n = 4 * per;
  trow *rows = calloc((size_t)n, sizeof *rows);
  int *ord = calloc((size_t)n, sizeof *ord);
  for (int k = 0; k < 4; k++)
    for (int i = 0; i < per; i++) gen_trow(&rng, k, i, &rows[k * per + i]);
  rowan_db *db = open_db();
  exec_ok(db, TYPES_DDL("REF", ""));
  upsert_rows(db, "REF", rows, n);
  char *want = query(db, "SELECT * FROM REF");
  static const char *const names[3] = {"ASC", "DESC_RUNS", "SHUFFLED"};
  for (int mode = 0; mode < 3; mode++) {
    for (int k = 0, j = 0; k < 4; k++) /* key order: K2 descending within each station */
      for (int i = 0; i < per; i++) ord[j++] = mode == 0 ? k * per + (per - 1 - i) : k * per + i;
    if (mode == 2)
      for (int i = n - 1; i > 0; i--) {
        int j = (int)tu_below(&rng, (uint64_t)i + 1), t = ord[i];
        ord[i] = ord[j];
        ord[j] = t;
      }
    char ddl[600];
    snprintf(ddl, sizeof ddl, TYPES_DDL("%s", ""), names[mode]);
    exec_ok(db, ddl);
    bulk_rows(db, names[mode], rows, ord, n);
    char sql[64];
    snprintf(sql, sizeof sql, "SELECT * FROM %s", names[mode]);
    char *got = query(db, sql);
    if (strcmp(want, got) != 0)
      fail_msg("seed %llu: %s load differs from UPSERT", (unsigned long long)seed, names[mode]);
    free(got);
  }
  assert_true(strlen(want) > (size_t)n * 20);
  free(want);
  /* with an index (INCLUDE a column): same rows, and the index agrees with its table */
  exec_ok(db, TYPES_DDL("IXT", ""));
  exec_ok(db, "CREATE INDEX IXT_D ON IXT (D1) INCLUDE (V1)");
  for (int j = 0; j < n; j++) ord[j] = j; /* time-series order */
  bulk_rows(db, "IXT", rows, ord, n);
  char *a = query(db, "SELECT * FROM IXT"), *r = query(db, "SELECT * FROM REF");
  if (strcmp(a, r) != 0) fail_msg("seed %llu: indexed table differs", (unsigned long long)seed);
  free(a);
  free(r);
  char *chk = query(db, "CHECK INDEX IXT_D ON IXT");
  if (!strstr(chk, "MISSING|0") || !strstr(chk, "EXTRA|0") || !strstr(chk, "MISMATCHED|0"))
    fail_msg("seed %llu: CHECK INDEX: %s", (unsigned long long)seed, chk);
  free(chk);
  a = query(db, "SELECT /*+ INDEX(IXT IXT_D) */ K1, K2, D1, V1 FROM IXT WHERE D1 > 0.5");
  r = query(db, "SELECT /*+ NO_INDEX */ K1, K2, D1, V1 FROM IXT WHERE D1 > 0.5");
  sort_lines(a);
  sort_lines(r); /* index order against key order: the same rows as sets */
  if (strcmp(a, r) != 0) fail_msg("seed %llu: the index returns other rows", (unsigned long long)seed);
  assert_true(strlen(a) > 100);
  free(a);
  free(r);
  assert_int_equal(rowan_close(db), ROWAN_OK);
  free(rows);
  free(ord);
}

/* rowan_bulk_add_values: typed values land as the same values bound to an UPSERT do (an
** integer into DOUBLE and DECIMAL columns, a timestamp into a DATE column, text literals
** into BOOLEAN and TIME ones), NULLs delete; a value that does not fit its column is refused
** naming the column and the load goes on; argument errors are ROWAN_MISUSE. */
static void test_typed_values(void **state) {
  (void)state;
  uint64_t seed = tu_seed("api_bulk_values"), rng = seed;
  int n = (int)tu_scaled(2000, 200);
  rowan_db *db = open_db();
  exec_ok(db, TYPES_DDL("TV", ""));
  exec_ok(db, TYPES_DDL("TU", ""));
  rowan_stmt *st;
  assert_int_equal(rowan_prepare(db, "UPSERT INTO TU (K1, K2, B1, T1, S1, I1, F1, D1, DEC1, C1, "
                                 "V1, DT, TM, TSX) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, "
                                 "?, ?)", -1, &st, NULL), ROWAN_OK);
  rowan_bulk *b;
  assert_int_equal(rowan_bulk_begin(db, "TV", TYPES_COLS, types_cols, &b), ROWAN_OK);
  char txt[4][32];
  for (int i = 0; i < n; i++) {
    rowan_value v[TYPES_COLS];
    memset(v, 0, sizeof v);
    snprintf(txt[0], 32, "st%d", i % 3);
    v[0] = (rowan_value){ROWAN_TEXT, (int)strlen(txt[0]), 0, 0, txt[0]};
    v[1] = (rowan_value){ROWAN_INTEGER, 0, i * 7 - 900, 0, NULL};
    snprintf(txt[1], 32, "%s", tu_below(&rng, 2) ? "TRUE" : "false");
    v[2] = (rowan_value){ROWAN_TEXT, (int)strlen(txt[1]), 0, 0, txt[1]};
    v[3] = (rowan_value){ROWAN_INTEGER, 0, (int64_t)tu_below(&rng, 256) - 128, 0, NULL};
    v[4] = (rowan_value){ROWAN_INTEGER, 0, (int64_t)tu_below(&rng, 65536) - 32768, 0, NULL};
    v[5] = (rowan_value){ROWAN_INTEGER, 0, (int64_t)tu_below(&rng, 1u << 31), 0, NULL};
    v[6] = (rowan_value){ROWAN_FLOAT, 0, 0, (double)tu_below(&rng, 100000) / 64.0, NULL};
    v[7] = tu_below(&rng, 2) ? (rowan_value){ROWAN_INTEGER, 0, (int64_t)tu_below(&rng, 1000), 0, NULL}
                             : (rowan_value){ROWAN_FLOAT, 0, 0, (double)i / 3.0, NULL};
    v[8] = (rowan_value){ROWAN_FLOAT, 0, 0, (double)tu_below(&rng, 100000) / 8.0, NULL};
    v[9] = (rowan_value){ROWAN_TEXT, 2, 0, 0, "ab"};
    snprintf(txt[2], 32, "v%d", (int)tu_below(&rng, 10000));
    v[10] = (rowan_value){ROWAN_TEXT, (int)strlen(txt[2]), 0, 0, txt[2]};
    int64_t ms = 1609459200000LL + (int64_t)tu_below(&rng, 1000000000) * 37;
    v[11] = (rowan_value){ROWAN_TIMESTAMP, 0, ms, 0, NULL};
    snprintf(txt[3], 32, "%02d:%02d:07.25", (int)tu_below(&rng, 24), (int)tu_below(&rng, 60));
    v[12] = (rowan_value){ROWAN_TEXT, (int)strlen(txt[3]), 0, 0, txt[3]};
    v[13] = (rowan_value){ROWAN_TIMESTAMP, 0, ms + 1234, 0, NULL};
    for (int c = 2; c < TYPES_COLS; c++)
      if (tu_below(&rng, 9) == 0) v[c] = (rowan_value){ROWAN_NULL, 0, 0, 0, NULL};
    if (rowan_bulk_add_values(b, v) != ROWAN_OK)
      fail_msg("seed %llu: row %d: %s", (unsigned long long)seed, i, rowan_errmsg(db));
    for (int c = 0; c < TYPES_COLS; c++) {
      int rc = v[c].type == ROWAN_NULL ? rowan_bind_null(st, c + 1)
               : v[c].type == ROWAN_INTEGER ? rowan_bind_int64(st, c + 1, v[c].i)
               : v[c].type == ROWAN_FLOAT ? rowan_bind_double(st, c + 1, v[c].d)
               : v[c].type == ROWAN_TIMESTAMP ? rowan_bind_timestamp(st, c + 1, v[c].i)
                                              : rowan_bind_text(st, c + 1, v[c].p, v[c].bytes);
      assert_int_equal(rc, ROWAN_OK);
    }
    if (rowan_step(st) != ROWAN_DONE) fail_msg("UPSERT row %d: %s", i, rowan_errmsg(db));
    rowan_reset(st);
  }
  /* a value out of its column's range: refused, named, the load goes on */
  rowan_value bad[TYPES_COLS];
  memset(bad, 0, sizeof bad);
  for (int c = 0; c < TYPES_COLS; c++) bad[c].type = ROWAN_NULL;
  bad[0] = (rowan_value){ROWAN_TEXT, 3, 0, 0, "bad"};
  bad[1] = (rowan_value){ROWAN_INTEGER, 0, 1, 0, NULL};
  bad[3] = (rowan_value){ROWAN_INTEGER, 0, 300, 0, NULL};
  assert_int_equal(rowan_bulk_add_values(b, bad), ROWAN_CONSTRAINT);
  assert_non_null(strstr(rowan_errmsg(db), "T1"));
  assert_non_null(strstr(rowan_errmsg(db), "300"));
  bad[3] = (rowan_value){ROWAN_NULL, 0, 0, 0, NULL};
  bad[0] = (rowan_value){ROWAN_NULL, 0, 0, 0, NULL}; /* a NULL key column */
  assert_int_equal(rowan_bulk_add_values(b, bad), ROWAN_CONSTRAINT);
  assert_non_null(strstr(rowan_errmsg(db), "K1"));
  bad[0] = (rowan_value){99, 0, 0, 0, NULL};
  assert_int_equal(rowan_bulk_add_values(b, bad), ROWAN_MISUSE);
  bad[0] = (rowan_value){ROWAN_TEXT, -1, 0, 0, "x"};
  assert_int_equal(rowan_bulk_add_values(b, bad), ROWAN_MISUSE);
  assert_int_equal(rowan_bulk_add_values(b, NULL), ROWAN_MISUSE);
  assert_int_equal(rowan_bulk_add_values(NULL, bad), ROWAN_MISUSE);
  assert_int_equal(rowan_bulk_commit(b), ROWAN_OK);
  assert_int_equal((int)rowan_changes(db), n);
  rowan_finalize(st);
  char *a = query(db, "SELECT * FROM TV"), *u = query(db, "SELECT * FROM TU");
  if (strcmp(a, u) != 0) fail_msg("seed %llu: typed load differs from UPSERT", (unsigned long long)seed);
  assert_true(strlen(a) > (size_t)n * 40);
  free(a);
  free(u);
  assert_int_equal(rowan_close(db), ROWAN_OK);
}

/* With an index, a key repeating an earlier row of the load is refused, whatever the order:
** keys in disjoint runs (no lookup needed) with a repeat inside an earlier run's range, a
** repeat right after its row, repeats after many short runs, and shuffled keys. Every other
** row loads, and the index agrees with its table. */
static void test_index_repeated_keys(void **state) {
  (void)state;
  uint64_t seed = tu_seed("api_bulk_repeats"), rng = seed;
  rowan_db *db = open_db();
  const char *cols[] = {"S", "K", "V"};
  for (int mode = 0; mode < 4; mode++) {
    char sql[200];
    snprintf(sql, sizeof sql, "CREATE TABLE R%d (S VARCHAR NOT NULL, K INTEGER NOT NULL, "
             "V DOUBLE CONSTRAINT PK PRIMARY KEY (S, K DESC))", mode);
    exec_ok(db, sql);
    snprintf(sql, sizeof sql, "CREATE INDEX R%d_V ON R%d (V)", mode, mode);
    exec_ok(db, sql);
    snprintf(sql, sizeof sql, "R%d", mode);
    rowan_bulk *b;
    assert_int_equal(rowan_bulk_begin(db, sql, 3, cols, &b), ROWAN_OK);
    int n = mode == 2 ? 300 : 200, loaded = 0, refused = 0;
    for (int i = 0; i <= n; i++) {
      int st, k;
      if (mode == 0) { st = i / 50; k = i % 50; }           /* 4 runs, K ascending: DESC key */
      else if (mode == 1) { st = 0; k = i - (i > 100); }    /* row 101 repeats row 100 */
      else if (mode == 2) { st = i / 3; k = i % 3; }        /* 100 short runs */
      else { st = (int)tu_below(&rng, 5); k = (int)tu_below(&rng, 60); } /* shuffled */
      if (i == n && mode != 3) { st = mode == 1 ? 0 : 1; k = mode == 2 ? 1 : 7; } /* repeats */
      char s[16], kk[16], v[32];
      snprintf(s, sizeof s, "s%d", st);
      snprintf(kk, sizeof kk, "%d", k);
      snprintf(v, sizeof v, "%d.5", (int)tu_below(&rng, 1000));
      const char *f[] = {s, kk, v};
      int rc = rowan_bulk_add_text(b, f, NULL);
      if (rc == ROWAN_OK) loaded++;
      else {
        assert_int_equal(rc, ROWAN_CONSTRAINT);
        assert_non_null(strstr(rowan_errmsg(db), "repeats"));
        refused++;
      }
    }
    assert_int_equal(rowan_bulk_commit(b), ROWAN_OK);
    if (mode == 1) assert_int_equal(refused, 2);
    else if (mode != 3) assert_int_equal(refused, 1);
    else assert_true(refused > 0);
    snprintf(sql, sizeof sql, "SELECT COUNT(*) FROM R%d", mode);
    char *got = query(db, sql), want[32];
    snprintf(want, sizeof want, "%d\n", loaded);
    if (strcmp(got, want) != 0)
      fail_msg("seed %llu, mode %d: %s rows, %d loaded", (unsigned long long)seed, mode, got, loaded);
    free(got);
    snprintf(sql, sizeof sql, "CHECK INDEX R%d_V ON R%d", mode, mode);
    char *chk = query(db, sql);
    if (!strstr(chk, "MISSING|0") || !strstr(chk, "EXTRA|0") || !strstr(chk, "MISMATCHED|0"))
      fail_msg("seed %llu, mode %d: CHECK INDEX: %s", (unsigned long long)seed, mode, chk);
    free(chk);
  }
  assert_int_equal(rowan_close(db), ROWAN_OK);
}

/* With an index, keys in many long disjoint runs (200 stations loaded one after another in
** shuffled order, each with its keys in order): exec/bulk.c keeps the runs' ranges in order
** and checks each run's start with a binary search, so no key goes into the set of seen keys;
** repeats of an earlier run's first, middle and last keys are still refused, every other row
** loads, and the index agrees with its table. */
static void test_index_many_runs(void **state) {
  (void)state;
  uint64_t seed = tu_seed("api_bulk_many_runs"), rng = seed;
  rowan_db *db = open_db();
  exec_ok(db, "CREATE TABLE MR (S VARCHAR NOT NULL, K INTEGER NOT NULL, V DOUBLE "
              "CONSTRAINT PK PRIMARY KEY (S, K DESC))");
  exec_ok(db, "CREATE INDEX MR_V ON MR (V)");
  const char *cols[] = {"S", "K", "V"};
  enum { STATIONS = 200, KEYS = 300 };
  int perm[STATIONS];
  for (int i = 0; i < STATIONS; i++) perm[i] = i;
  for (int i = STATIONS - 1; i > 0; i--) {
    int j = (int)tu_below(&rng, (uint64_t)i + 1), x = perm[i];
    perm[i] = perm[j];
    perm[j] = x;
  }
  rowan_bulk *b;
  assert_int_equal(rowan_bulk_begin(db, "MR", 3, cols, &b), ROWAN_OK);
  int loaded = 0, refused = 0;
  for (int r = 0; r < STATIONS; r++) {
    for (int k = 0; k < KEYS; k++) {
      int st = perm[r], kk = k;
      /* three repeats, once most runs are in: an earlier run's first, middle, last key */
      if (r == 150 && k == 10) { st = perm[3]; kk = 0; }
      if (r == 160 && k == 20) { st = perm[40]; kk = KEYS / 2; }
      if (r == 170 && k == 30) { st = perm[149]; kk = KEYS - 1; }
      char s[16], ks[16], v[32];
      snprintf(s, sizeof s, "s%d", st);
      snprintf(ks, sizeof ks, "%d", kk);
      snprintf(v, sizeof v, "%d.5", (int)tu_below(&rng, 100));
      const char *f[] = {s, ks, v};
      int rc = rowan_bulk_add_text(b, f, NULL);
      if (rc == ROWAN_OK) {
        loaded++;
      } else {
        assert_int_equal(rc, ROWAN_CONSTRAINT);
        assert_non_null(strstr(rowan_errmsg(db), "repeats"));
        refused++;
      }
    }
  }
  assert_int_equal(refused, 3);
  assert_int_equal(rowan_bulk_commit(b), ROWAN_OK);
  char *got = query(db, "SELECT COUNT(*) FROM MR"), want[32];
  snprintf(want, sizeof want, "%d\n", loaded);
  if (strcmp(got, want) != 0)
    fail_msg("seed %llu: %s rows, %d loaded", (unsigned long long)seed, got, loaded);
  free(got);
  char *chk = query(db, "CHECK INDEX MR_V ON MR");
  if (!strstr(chk, "MISSING|0") || !strstr(chk, "EXTRA|0") || !strstr(chk, "MISMATCHED|0"))
    fail_msg("seed %llu: CHECK INDEX: %s", (unsigned long long)seed, chk);
  free(chk);
  assert_int_equal(rowan_close(db), ROWAN_OK);
}

/* Many shuffled keys with an index: the set of keys seen (exec/bulk.c) grows several times
** while it holds them (it starts with room for 32,768), every repeat is still refused and the
** index agrees with its table. Regression: growing the set freed the load's key history
** while it was being moved into the set (a use after free, then a double free at the end). */
static void test_index_seen_set_grows(void **state) {
  (void)state;
  rowan_db *db = open_db();
  exec_ok(db, "CREATE TABLE G (K INTEGER NOT NULL PRIMARY KEY, V INTEGER)");
  exec_ok(db, "CREATE INDEX G_V ON G (V)");
  const char *cols[] = {"K", "V"};
  rowan_bulk *b;
  assert_int_equal(rowan_bulk_begin(db, "G", 2, cols, &b), ROWAN_OK);
  const int n = 100000; /* keys (i * 7919) mod n: a permutation, shuffled from the start */
  int refused = 0;
  for (int i = 0; i < n + 3; i++) {
    long k = i < n ? ((long)i * 7919) % n : (long)(i - n) * 1000; /* then three repeats */
    char kk[24], v[24];
    snprintf(kk, sizeof kk, "%ld", k);
    snprintf(v, sizeof v, "%ld", k % 97);
    const char *f[] = {kk, v};
    int rc = rowan_bulk_add_text(b, f, NULL);
    if (rc != ROWAN_OK) {
      assert_int_equal(rc, ROWAN_CONSTRAINT);
      assert_true(i >= n);
      refused++;
    }
  }
  assert_int_equal(refused, 3);
  assert_int_equal(rowan_bulk_commit(b), ROWAN_OK);
  char *got = query(db, "SELECT COUNT(*), SUM(K) FROM G");
  char want[64];
  snprintf(want, sizeof want, "%d|%lld\n", n, (long long)n * (n - 1) / 2);
  assert_string_equal(got, want);
  free(got);
  char *chk = query(db, "CHECK INDEX G_V ON G");
  assert_non_null(strstr(chk, "MISSING|0"));
  assert_non_null(strstr(chk, "EXTRA|0"));
  free(chk);
  assert_int_equal(rowan_close(db), ROWAN_OK);
}

/* rowan_options.bulk_memory: below 1 MiB rowan_open refuses it with a message naming it;
** at 1 MiB a load of many times that (shuffled keys, an index) is complete and consistent,
** also after reopen. */
static void test_bulk_memory_option(void **state) {
  (void)state;
  rowan_db *db;
  rowan_options o;
  rowan_options_init(&o);
  o.bulk_memory = 1000;
  assert_int_equal(rowan_open(dir, &o, &db), ROWAN_MISUSE);
  assert_non_null(strstr(rowan_errmsg(db), "bulk_memory of 1000 bytes"));
  rowan_close(db);
  o.bulk_memory = (size_t)1 << 20;
  assert_int_equal(rowan_open(dir, &o, &db), ROWAN_OK);
  exec_ok(db, "CREATE TABLE M (K INTEGER NOT NULL PRIMARY KEY, V INTEGER, S VARCHAR)");
  exec_ok(db, "CREATE INDEX M_V ON M (V)");
  const char *cols[] = {"K", "V", "S"};
  rowan_bulk *b;
  assert_int_equal(rowan_bulk_begin(db, "M", 3, cols, &b), ROWAN_OK);
  const int n = 60000; /* about 8 MiB of cells: 8 times the bound */
  char pad[101];
  memset(pad, 'x', 100);
  pad[100] = 0;
  /* every key once: 0 .. n/2-1 ascending but the multiples of 5, n-1 .. n/2 descending,
  ** then those multiples of 5 shuffled */
  for (int i = 0; i < n + n / 10; i++) {
    long k = i < n / 2 ? i : i < n ? n - 1 - (i - n / 2) : (((long)(i - n) * 7919) % (n / 10)) * 5;
    if (i < n / 2 && k % 5 == 0) continue;
    char kk[24], v[24];
    snprintf(kk, sizeof kk, "%ld", k);
    snprintf(v, sizeof v, "%ld", k % 97);
    const char *f[] = {kk, v, pad};
    assert_int_equal(rowan_bulk_add_text(b, f, NULL), ROWAN_OK);
  }
  assert_int_equal(rowan_bulk_commit(b), ROWAN_OK);
  for (int round = 0; round < 2; round++) {
    char *got = query(db, "SELECT COUNT(*), SUM(K), COUNT(S) FROM M");
    char want[64];
    snprintf(want, sizeof want, "%d|%lld|%d\n", n, (long long)n * (n - 1) / 2, n);
    assert_string_equal(got, want);
    free(got);
    char *chk = query(db, "CHECK INDEX M_V ON M");
    assert_non_null(strstr(chk, "MISSING|0"));
    assert_non_null(strstr(chk, "EXTRA|0"));
    free(chk);
    assert_int_equal(rowan_close(db), ROWAN_OK);
    assert_int_equal(rowan_open(dir, &o, &db), ROWAN_OK);
  }
  assert_int_equal(rowan_close(db), ROWAN_OK);
}

static int teardown(void **state) {
  (void)state;
  char cmd[300];
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  return system(cmd) == 0 ? 0 : -1;
}

/* rowan_close refuses while a bulk load is open (its engine load lives on the connection's
** session: closing under it was a use after free at the load's commit), and works once the
** load is committed or aborted; the committed rows are there after a reopen. */
static void test_close_with_open_load(void **state) {
  (void)state;
  kv_env *env = kv_env_mem_new(1700000000000LL);
  rowan_db *db = tu_open_mem(env);
  exec_ok(db, "CREATE TABLE T (K INTEGER NOT NULL PRIMARY KEY, V INTEGER)");
  const char *cols[] = {"K", "V"};
  for (int round = 0; round < 2; round++) { /* 0: commit, 1: abort */
    rowan_bulk *b = NULL;
    assert_int_equal(rowan_bulk_begin(db, "T", 2, cols, &b), ROWAN_OK);
    const char *row[] = {round ? "2" : "1", "10"};
    assert_int_equal(rowan_bulk_add_text(b, row, NULL), ROWAN_OK);
    assert_int_equal(rowan_close(db), ROWAN_MISUSE);
    assert_non_null(strstr(rowan_errmsg(db), "bulk load"));
    if (round == 0) assert_int_equal(rowan_bulk_commit(b), ROWAN_OK);
    else rowan_bulk_abort(b);
  }
  assert_int_equal(rowan_close(db), ROWAN_OK);
  db = tu_open_mem(env);
  char *got = query(db, "SELECT K, V FROM T");
  assert_string_equal(got, "1|10\n");
  free(got);
  assert_int_equal(rowan_close(db), ROWAN_OK);
  kv_env_free(env);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_semantics),
      cmocka_unit_test(test_atomic_and_errors),
      cmocka_unit_test(test_random_vs_upsert),
      cmocka_unit_test(test_index_seen_set_grows),
      cmocka_unit_test(test_types_and_orders),
      cmocka_unit_test(test_typed_values),
      cmocka_unit_test(test_index_repeated_keys),
      cmocka_unit_test(test_index_many_runs),
      cmocka_unit_test(test_close_with_open_load),
      cmocka_unit_test(test_bulk_memory_option),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
