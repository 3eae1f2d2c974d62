/*
** tests/api/test_bulk_index.c: bulk loads into tables with indexes of every key shape the
** load builds itself (exec/bulk.c: plain columns of simple types, ascending or DESC,
** composite, with INCLUDE columns) and of the ones it leaves to the general index codec (a
** DECIMAL key, an INCLUDE of a key column). The same rows, shuffled, go into one table by
** the bulk load and into another by UPSERT, with NULLs, negative zero, extremes and long
** strings in the indexed columns: both tables and every index must hold the same rows,
** CHECK INDEX must find each index clean, and a query forced through each index must give
** what the table gives. A second load is large enough (at scale 1) for the index family's
** commit merge to run as two key ranges on two threads. A third comes in key order under a
** 1 MiB bound: the index rows are spilled as runs, the table's stay encoded segments. A
** fourth gives every row the same indexed values (the index keys tie on their leading
** bytes), in memory and spilled.
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

static size_t g_bulk_memory; /* rowan_options.bulk_memory of the stores (0 = default) */
static bool g_tied;          /* make_row: D, V and C the same in every row that has them */

static rowan_db *open_db(const char *sub) {
  char path[256];
  snprintf(path, sizeof path, "%s/%s", dir, sub);
  rowan_db *db;
  rowan_options o;
  rowan_options_init(&o);
  o.bulk_memory = g_bulk_memory;
  assert_int_equal(rowan_open(path, &o, &db), ROWAN_OK);
  return db;
}

static int setup(void **state) {
  (void)state;
  snprintf(dir, sizeof dir, "/tmp/rowan_test_bulk_index_%d", (int)getpid());
  char cmd[320];
  snprintf(cmd, sizeof cmd, "rm -rf %s && mkdir -p %s", dir, dir);
  return system(cmd) == 0 ? 0 : -1;
}

static int teardown(void **state) {
  (void)state;
  char cmd[320];
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  return system(cmd) == 0 ? 0 : -1;
}

/* Every row of the query as "a|b|c\n" text, lines sorted (caller frees). */
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

static int line_cmp(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

static char *query_sorted(rowan_db *db, const char *sql) {
  acc a = {calloc(1, 1), 0, 1};
  if (rowan_exec(db, sql, collect, &a) != ROWAN_OK) fail_msg("%s: %s", sql, rowan_errmsg(db));
  size_t n = 0;
  for (size_t i = 0; i < a.len; i++) n += a.p[i] == '\n';
  char **lines = calloc(n + 1, sizeof *lines);
  size_t k = 0;
  for (char *p = a.p; *p;) {
    char *e = strchr(p, '\n');
    *e = 0;
    lines[k++] = p;
    p = e + 1;
  }
  qsort(lines, k, sizeof *lines, line_cmp);
  char *out = malloc(a.len + 1);
  size_t pos = 0;
  for (size_t i = 0; i < k; i++) pos += (size_t)sprintf(out + pos, "%s\n", lines[i]);
  out[pos] = 0;
  free(lines);
  free(a.p);
  return out;
}

#define NCOL 10
static const char *const cols[NCOL] = {"S", "K", "D", "F", "I", "V", "C", "TS", "B", "M"};
static const char *const ddl =
    "CREATE TABLE %s (S VARCHAR NOT NULL, K BIGINT NOT NULL, D DOUBLE, F FLOAT, I INTEGER, "
    "V VARCHAR(12), C CHAR(4), TS TIMESTAMP, B BOOLEAN, M DECIMAL(10,2) "
    "CONSTRAINT PK PRIMARY KEY (S, K DESC))";
static const char *const indexes[][2] = {
    {"D", "(D)"},                       /* DOUBLE */
    {"VI", "(V DESC, I) INCLUDE (F, TS)"}, /* VARCHAR DESC then INTEGER, INCLUDE */
    {"CT", "(C, TS)"},                  /* CHAR, TIMESTAMP */
    {"BF", "(B, F DESC)"},              /* BOOLEAN, FLOAT DESC */
    {"M", "(M) INCLUDE (K)"},           /* DECIMAL key, INCLUDE of a key column */
};
#define NIX (sizeof indexes / sizeof indexes[0])

typedef struct trow {
  char f[NCOL][40];       /* field texts */
  bool null[NCOL];        /* NULL fields */
} trow;

static void make_row(uint64_t *rng, int i, trow *r) {
  memset(r, 0, sizeof *r);
  snprintf(r->f[0], 40, "s%d", (int)tu_below(rng, 7));
  snprintf(r->f[1], 40, "%d", i * 3 - 5000);
  static const char *const dv[] = {"-0.0", "0", "1e300", "-1e300", "2.5", "-2.5", "0.1"};
  if (tu_below(rng, 4) == 0) snprintf(r->f[2], 40, "%s", dv[tu_below(rng, 7)]);
  else snprintf(r->f[2], 40, "%d.%d", (int)tu_below(rng, 200) - 100, (int)tu_below(rng, 10));
  snprintf(r->f[3], 40, "%d.25", (int)tu_below(rng, 50) - 25);
  snprintf(r->f[4], 40, "%d", tu_below(rng, 3) ? (int)tu_below(rng, 100) - 50
                               : (tu_below(rng, 2) ? 2147483647 : -2147483647 - 1));
  static const char *const sv[] = {"", "a", "ab", "abc\xc3\xa9", "zzzzzzzzzzzz", "b b"};
  snprintf(r->f[5], 40, "%s", sv[tu_below(rng, 6)]);
  snprintf(r->f[6], 40, "%s", sv[tu_below(rng, 4)]);
  snprintf(r->f[7], 40, "20%02d-0%d-1%d %02d:00:00", (int)tu_below(rng, 30),
           1 + (int)tu_below(rng, 9), (int)tu_below(rng, 10), (int)tu_below(rng, 24));
  snprintf(r->f[8], 40, "%s", tu_below(rng, 2) ? "true" : "false");
  snprintf(r->f[9], 40, "%d.%02d", (int)tu_below(rng, 2000) - 1000, (int)tu_below(rng, 100));
  for (int c = 2; c < NCOL; c++) r->null[c] = tu_below(rng, 9) == 0;
  if (g_tied) { /* every index row of D, VI and CT leads with the same bytes */
    snprintf(r->f[2], 40, "7.5");
    snprintf(r->f[5], 40, "zzzzzzzzzzzz");
    snprintf(r->f[6], 40, "ab");
  }
}

static void upsert_rows(rowan_db *db, const trow *rows, const int *ord, int n) {
  rowan_stmt *st;
  const char *sql = "UPSERT INTO REF (S, K, D, F, I, V, C, TS, B, M) VALUES "
                    "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?)";
  assert_int_equal(rowan_prepare(db, sql, -1, &st, NULL), ROWAN_OK);
  exec_ok(db, "BEGIN");
  for (int j = 0; j < n; j++) {
    const trow *r = &rows[ord[j]];
    for (int c = 0; c < NCOL; c++) {
      int rc = r->null[c] ? rowan_bind_null(st, c + 1) : rowan_bind_text(st, c + 1, r->f[c], -1);
      assert_int_equal(rc, ROWAN_OK);
    }
    if (rowan_step(st) != ROWAN_DONE) fail_msg("UPSERT: %s", rowan_errmsg(db));
    rowan_reset(st);
  }
  exec_ok(db, "COMMIT");
  rowan_finalize(st);
}

static void bulk_rows(rowan_db *db, const trow *rows, const int *ord, int n) {
  rowan_bulk *b;
  if (rowan_bulk_begin(db, "T", NCOL, cols, &b) != ROWAN_OK)
    fail_msg("rowan_bulk_begin: %s", rowan_errmsg(db));
  for (int j = 0; j < n; j++) {
    const trow *r = &rows[ord[j]];
    const char *f[NCOL];
    for (int c = 0; c < NCOL; c++) f[c] = r->null[c] ? NULL : r->f[c];
    if (rowan_bulk_add_text(b, f, NULL) != ROWAN_OK)
      fail_msg("rowan_bulk_add_text: %s", rowan_errmsg(db));
  }
  if (rowan_bulk_commit(b) != ROWAN_OK) fail_msg("rowan_bulk_commit: %s", rowan_errmsg(db));
}

static const trow *sort_rows; /* the rows ord_cmp compares */

/* Primary key order: S ascending, then K descending (K is i * 3 - 5000). */
static int ord_cmp(const void *a, const void *b) {
  int x = *(const int *)a, y = *(const int *)b;
  int c = strcmp(sort_rows[x].f[0], sort_rows[y].f[0]);
  return c ? c : (x < y) - (x > y);
}

/* n rows into T (bulk) and REF (UPSERT), both with every index: compare. The rows come
** shuffled, or (in_order) in primary key order, as a time series is loaded: the table's
** rows then arrive ordered and the index rows in no order. */
static void load_and_compare_as(const char *name, int n, bool in_order) {
  uint64_t seed = tu_seed(name), rng = seed;
  char sub[64];
  snprintf(sub, sizeof sub, "%s", name);
  rowan_db *db = open_db(sub);
  char sql[600];
  static const char *const tabs[] = {"T", "REF"};
  for (int t = 0; t < 2; t++) {
    snprintf(sql, sizeof sql, ddl, tabs[t]);
    exec_ok(db, sql);
    for (size_t i = 0; i < NIX; i++) {
      snprintf(sql, sizeof sql, "CREATE INDEX %s_%s ON %s %s", tabs[t], indexes[i][0], tabs[t],
               indexes[i][1]);
      exec_ok(db, sql);
    }
  }
  trow *rows = calloc((size_t)n, sizeof *rows);
  int *ord = calloc((size_t)n, sizeof *ord);
  assert_true(rows && ord);
  for (int i = 0; i < n; i++) {
    make_row(&rng, i, &rows[i]);
    ord[i] = i;
  }
  for (int i = n - 1; i > 0; i--) {
    int j = (int)tu_below(&rng, (uint64_t)i + 1), x = ord[i];
    ord[i] = ord[j];
    ord[j] = x;
  }
  if (in_order) {
    sort_rows = rows;
    qsort(ord, (size_t)n, sizeof *ord, ord_cmp);
  }
  bulk_rows(db, rows, ord, n);
  upsert_rows(db, rows, ord, n);
  char *a = query_sorted(db, "SELECT * FROM T"), *r = query_sorted(db, "SELECT * FROM REF");
  if (strcmp(a, r) != 0) fail_msg("seed %llu: the bulk-loaded table differs", (unsigned long long)seed);
  free(a);
  free(r);
  for (size_t i = 0; i < NIX; i++) {
    snprintf(sql, sizeof sql, "CHECK INDEX T_%s ON T", indexes[i][0]);
    char *chk = query_sorted(db, sql);
    if (!strstr(chk, "MISSING|0") || !strstr(chk, "EXTRA|0") || !strstr(chk, "MISMATCHED|0"))
      fail_msg("seed %llu: CHECK INDEX T_%s: %s", (unsigned long long)seed, indexes[i][0], chk);
    free(chk);
  }
  /* every index row, read through the index, in both tables */
  static const char *const q[] = {
      "SELECT /*+ INDEX(%s %s_D) */ S, K, D FROM %s WHERE D > -1e301",
      "SELECT /*+ INDEX(%s %s_VI) */ S, K, V, I, F, TS FROM %s WHERE V >= ''",
      "SELECT /*+ INDEX(%s %s_CT) */ S, K, C, TS FROM %s WHERE C >= ''",
      "SELECT /*+ INDEX(%s %s_BF) */ S, K, B, F FROM %s WHERE B = TRUE OR B = FALSE",
      "SELECT /*+ INDEX(%s %s_M) */ S, K, M FROM %s WHERE M > -100000",
      "SELECT /*+ INDEX(%s %s_D) */ COUNT(*) FROM %s WHERE D = 0",
  };
  for (size_t i = 0; i < sizeof q / sizeof q[0]; i++) {
    snprintf(sql, sizeof sql, q[i], "T", "T", "T");
    a = query_sorted(db, sql);
    snprintf(sql, sizeof sql, q[i], "REF", "REF", "REF");
    r = query_sorted(db, sql);
    if (strcmp(a, r) != 0)
      fail_msg("seed %llu: %s: the bulk-loaded index gives other rows", (unsigned long long)seed, sql);
    assert_true(strlen(a) > 1);
    free(a);
    free(r);
  }
  if (g_tied) { /* the D index, read whole, answers as a scan of the table */
    a = query_sorted(db, "SELECT /*+ INDEX(T T_D) */ S, K, D FROM T WHERE D > -1e301");
    r = query_sorted(db, "SELECT /*+ NO_INDEX */ S, K, D FROM T WHERE D > -1e301");
    if (strcmp(a, r) != 0)
      fail_msg("seed %llu: the tied index answers other than a scan", (unsigned long long)seed);
    free(a);
    free(r);
  }
  assert_int_equal(rowan_close(db), ROWAN_OK);
  free(rows);
  free(ord);
}

static void load_and_compare(const char *name, int n) { load_and_compare_as(name, n, false); }

static void test_index_shapes(void **state) {
  (void)state;
  load_and_compare("bulk_index_shapes", (int)tu_scaled(6000, 1500));
}

/* 70,000 rows at scale 1: the index families' commit merges run as two key ranges. */
static void test_index_large(void **state) {
  (void)state;
  load_and_compare("bulk_index_large", (int)tu_scaled(70000, 17500));
}

/* Rows in key order under the smallest bulk_memory (1 MiB): the index rows pass the bound
** many times and are spilled as runs while the table's ordered rows stay encoded segments
** (kv/bulk/bulk.c keeps them so); both must read as the UPSERTs. */
static void test_index_ordered_spilled(void **state) {
  (void)state;
  g_bulk_memory = (size_t)1 << 20;
  load_and_compare_as("bulk_index_ordered", (int)tu_scaled(20000, 8000), true);
  g_bulk_memory = 0;
}

/* Index rows that all tie on their leading column (one D, one V, one C in every row that
** has them, shuffled): the load sorts them by the rest of their keys, the data row keys, in
** memory (bytes past the first 16 and, for VI, past 32) and, under a 1 MiB bound, as spilled
** runs merged at commit. Both must read as the UPSERTs, and the D index as a table scan. */
static void test_index_all_tied(void **state) {
  (void)state;
  g_tied = true;
  load_and_compare("bulk_index_tied", (int)tu_scaled(20000, 5000));
  g_bulk_memory = (size_t)1 << 20;
  load_and_compare("bulk_index_tied_spilled", (int)tu_scaled(20000, 5000));
  g_bulk_memory = 0;
  g_tied = false;
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_index_shapes),
      cmocka_unit_test(test_index_large),
      cmocka_unit_test(test_index_ordered_spilled),
      cmocka_unit_test(test_index_all_tied),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
