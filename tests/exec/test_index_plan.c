/*
** tests/exec/test_index_plan.c: index scans give the table's answers, and the planner's
** choice follows the estimated cost (issue 7; planner/index_choice.c, exec/scan.c).
**  - results: a random table with three indexes (uncovered on A, DESC INCLUDE on B, composite
**    on C, A), random rows with NULLs, updates, deletes and a flush in the middle; random
**    queries run with /+ NO_INDEX +/ (the table) and with each index forced, and unhinted;
**    every answer must equal the table's (as multisets, or in order for a total ORDER BY).
**    EXPLAIN must show that the forced index was used. Also inside a transaction, where the
**    index scan and its lookups read the transaction's own uncommitted writes.
**  - cost: WHERE V < x on an uncovered index: a small x plans a RANGE SCAN OVER the index, a
**    large x the table's FULL SCAN; the crossover is where the index rows plus 8 lookups each
**    pass the table's rows (from memstore counts, then again from block indexes after a
**    flush of a larger table).
** ROWAN_TEST_SCALE scales the number of queries; ROWAN_SEED reproduces a run.
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

typedef struct db {
  kv_env *env;    /* in-memory env */
  rowan_db *r;    /* the database */
} db;

static void db_open(db *d) {
  d->env = kv_env_mem_new(0);
  rowan_options o;
  rowan_options_init(&o);
  o.kv_env = d->env;
  o.sync_mode = ROWAN_SYNC_OFF;
  assert_int_equal(rowan_open("/ix", &o, &d->r), ROWAN_OK);
}

static void db_close(db *d) {
  assert_int_equal(rowan_close(d->r), ROWAN_OK);
  kv_env_free(d->env);
}

static void exec_ok(db *d, const char *sql) {
  int rc = rowan_exec(d->r, sql, NULL, NULL);
  if (rc != ROWAN_OK) fprintf(stderr, "%s\n  -> %s\n", sql, rowan_errmsg(d->r));
  assert_int_equal(rc, ROWAN_OK);
}

/* All result rows of sql as one string per row ("v1|v2|..."), newline separated, sorted
** when sort is true. Returns a malloc'd string. */
static int cmp_str(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

static char *rows_of(db *d, const char *sql, bool sort) {
  rowan_stmt *st = NULL;
  int rc = rowan_prepare(d->r, sql, -1, &st, NULL);
  if (rc != ROWAN_OK) fprintf(stderr, "%s\n  -> %s\n", sql, rowan_errmsg(d->r));
  assert_int_equal(rc, ROWAN_OK);
  char **rows = NULL;
  size_t n = 0, cap = 0, total = 1;
  while ((rc = rowan_step(st)) == ROWAN_ROW) {
    char line[1024];
    size_t l = 0;
    line[0] = 0;
    for (int i = 0; i < rowan_column_count(st); i++) {
      const char *t = rowan_column_type(st, i) == ROWAN_NULL ? "NULL" : rowan_column_text(st, i);
      l += (size_t)snprintf(line + l, sizeof line - l, "%s%s", i ? "|" : "", t);
      if (l >= sizeof line) l = sizeof line - 1;
    }
    if (n == cap) {
      cap = cap ? cap * 2 : 64;
      rows = realloc(rows, cap * sizeof *rows);
      assert_non_null(rows);
    }
    rows[n++] = strdup(line);
    total += l + 1;
  }
  if (rc != ROWAN_DONE) fprintf(stderr, "%s\n  -> %s\n", sql, rowan_errmsg(d->r));
  assert_int_equal(rc, ROWAN_DONE);
  rowan_finalize(st);
  if (sort && n > 1) qsort(rows, n, sizeof *rows, cmp_str);
  char *out = malloc(total);
  assert_non_null(out);
  size_t o = 0;
  for (size_t i = 0; i < n; i++) {
    size_t l = strlen(rows[i]);
    memcpy(out + o, rows[i], l);
    out[o + l] = '\n';
    o += l + 1;
    free(rows[i]);
  }
  out[o] = 0;
  free(rows);
  return out;
}

/* The EXPLAIN text of sql (malloc'd). */
static char *explain(db *d, const char *sql) {
  char buf[2048];
  snprintf(buf, sizeof buf, "EXPLAIN %s", sql);
  return rows_of(d, buf, false);
}

/* ---- Results with and without indexes ------------------------------------------------------ */
static const char *const INDEXES[3] = {"IA", "IB", "IC"};

static void rand_value(uint64_t *rng, int col, char *buf, size_t cap) {
  if (tu_below(rng, 6) == 0) {
    snprintf(buf, cap, "NULL");
    return;
  }
  switch (col) {
    case 0: snprintf(buf, cap, "%d", (int)tu_below(rng, 40) - 10); break;
    case 1: snprintf(buf, cap, "%.2f", ((double)tu_below(rng, 200) - 100) / 4); break;
    default: {
      static const char *const S[] = {"''", "'a'", "'ab'", "'abc'", "'b'", "'ba'", "'c'"};
      snprintf(buf, cap, "%s", S[tu_below(rng, 7)]);
    }
  }
}

/* A random WHERE clause over A, B, C (and sometimes K). */
static void rand_where(uint64_t *rng, char *buf, size_t cap) {
  static const char *const OPS[] = {"=", "<", "<=", ">", ">="};
  char v[32];
  size_t l = 0;
  int n = 1 + (int)tu_below(rng, 2);
  for (int i = 0; i < n; i++) {
    int col = (int)tu_below(rng, 4);
    const char *name = col == 0 ? "a" : col == 1 ? "b" : col == 2 ? "c" : "k";
    int form = (int)tu_below(rng, 8);
    rand_value(rng, col == 3 ? 0 : col, v, sizeof v);
    if (strcmp(v, "NULL") == 0) form = 6;
    l += (size_t)snprintf(buf + l, cap - l, "%s", i ? " AND " : "");
    if (form < 5) {
      l += (size_t)snprintf(buf + l, cap - l, "%s %s %s", name, OPS[form], v);
    } else if (form == 5) {
      char w[32];
      rand_value(rng, col == 3 ? 0 : col, w, sizeof w);
      if (strcmp(w, "NULL") == 0) snprintf(w, sizeof w, "%s", v);
      l += (size_t)snprintf(buf + l, cap - l, "%s IN (%s, %s)", name, v, w);
    } else {
      l += (size_t)snprintf(buf + l, cap - l, "%s IS %sNULL", name, tu_below(rng, 2) ? "NOT " : "");
    }
  }
}

static void fill_table(db *d, uint64_t *rng, int nrows) {
  exec_ok(d, "CREATE TABLE t (k INTEGER NOT NULL, a INTEGER, b DOUBLE, c VARCHAR, "
             "f.d INTEGER, CONSTRAINT pk PRIMARY KEY (k))");
  exec_ok(d, "CREATE INDEX ia ON t (a)");
  exec_ok(d, "CREATE INDEX ib ON t (b DESC) INCLUDE (c)");
  exec_ok(d, "CREATE INDEX ic ON t (c, a)");
  char sql[512], va[32], vb[32], vc[32];
  for (int i = 0; i < nrows; i++) {
    rand_value(rng, 0, va, sizeof va);
    rand_value(rng, 1, vb, sizeof vb);
    rand_value(rng, 2, vc, sizeof vc);
    snprintf(sql, sizeof sql, "UPSERT INTO t VALUES (%d, %s, %s, %s, %d)", i, va, vb, vc, i % 7);
    exec_ok(d, sql);
    if (i == nrows / 2) assert_int_equal(api_test_flush(d->r), ROWAN_OK);
  }
  /* updates (indexed values change, go NULL, or only the INCLUDE column) and deletes */
  for (int i = 0; i < nrows / 4; i++) {
    int k = (int)tu_below(rng, (uint64_t)nrows);
    int what = (int)tu_below(rng, 4);
    if (what == 0) {
      snprintf(sql, sizeof sql, "DELETE FROM t WHERE k = %d", k);
    } else {
      rand_value(rng, what - 1, va, sizeof va);
      snprintf(sql, sizeof sql, "UPSERT INTO t (k, %s) VALUES (%d, %s)",
               what == 1 ? "a" : what == 2 ? "b" : "c", k, va);
    }
    exec_ok(d, sql);
  }
}

/* Run the query of `tail` (text after the select list) every way; all answers must match. */
static void check_query(db *d, uint64_t seed, const char *cols, const char *tail, bool ordered) {
  char sql[1024];
  snprintf(sql, sizeof sql, "SELECT /*+ NO_INDEX */ %s FROM t %s", cols, tail);
  char *want = rows_of(d, sql, !ordered);
  snprintf(sql, sizeof sql, "SELECT %s FROM t %s", cols, tail);
  char *got = rows_of(d, sql, !ordered);
  if (strcmp(want, got) != 0)
    fprintf(stderr, "seed %llu: %s\nwant:\n%sgot:\n%s", (unsigned long long)seed, sql, want, got);
  assert_string_equal(want, got);
  free(got);
  for (int i = 0; i < 3; i++) {
    snprintf(sql, sizeof sql, "SELECT /*+ INDEX(t %s) */ %s FROM t %s", INDEXES[i], cols, tail);
    got = rows_of(d, sql, !ordered);
    if (strcmp(want, got) != 0)
      fprintf(stderr, "seed %llu: %s\nwant:\n%sgot:\n%s", (unsigned long long)seed, sql, want,
              got);
    assert_string_equal(want, got);
    free(got);
    char *ex = explain(d, sql);
    char over[32];
    snprintf(over, sizeof over, "OVER T.%s", INDEXES[i]);
    if (!strstr(ex, over)) fprintf(stderr, "seed %llu: %s\n%s", (unsigned long long)seed, sql, ex);
    assert_non_null(strstr(ex, over));
    free(ex);
  }
  free(want);
}

static void run_queries(db *d, uint64_t seed, uint64_t *rng, int n) {
  static const char *const COLS[] = {"k, a, b, c, d", "k, b, c", "c, a, k", "a", "COUNT(*)",
                                     "a, COUNT(*), SUM(d)"};
  static const char *const ORDERS[] = {"ORDER BY a NULLS FIRST, k", "ORDER BY b DESC NULLS LAST, k",
                                       "ORDER BY c NULLS FIRST, a NULLS FIRST, k",
                                       "ORDER BY k DESC"};
  for (int q = 0; q < n; q++) {
    char where[256], tail[512];
    rand_where(rng, where, sizeof where);
    int shape = (int)tu_below(rng, 6);
    bool ordered = false;
    if (shape >= 4) {
      snprintf(tail, sizeof tail, "WHERE %s GROUP BY a", where);
      check_query(d, seed, COLS[5], tail, false);
      continue;
    }
    if (shape == 3) {
      const char *o = ORDERS[tu_below(rng, 4)];
      if (tu_below(rng, 2))
        snprintf(tail, sizeof tail, "WHERE %s %s LIMIT %d", where, o, 1 + (int)tu_below(rng, 5));
      else
        snprintf(tail, sizeof tail, "WHERE %s %s", where, o);
      ordered = true;
      check_query(d, seed, COLS[0], tail, ordered);
      continue;
    }
    if (shape == 2 && tu_below(rng, 2)) {
      /* ORDER BY in an index's order with a LIMIT and no WHERE */
      snprintf(tail, sizeof tail, "%s LIMIT 4", ORDERS[tu_below(rng, 3)]);
      check_query(d, seed, COLS[0], tail, true);
      continue;
    }
    snprintf(tail, sizeof tail, "WHERE %s", where);
    check_query(d, seed, COLS[tu_below(rng, 5)], tail, false);
  }
}

static void test_index_results_equal(void **state) {
  (void)state;
  uint64_t seed = tu_seed("test_index_results_equal");
  uint64_t rng = seed;
  db d;
  db_open(&d);
  fill_table(&d, &rng, 300);
  run_queries(&d, seed, &rng, (int)tu_scaled(150, 20));
  /* inside a transaction: the index scan and its lookups see uncommitted writes */
  exec_ok(&d, "BEGIN");
  exec_ok(&d, "UPSERT INTO t VALUES (1000, 7, 1.25, 'zz', 1), (1001, 7, NULL, NULL, 2)");
  exec_ok(&d, "UPSERT INTO t (k, a) VALUES (1000, 8)");
  exec_ok(&d, "DELETE FROM t WHERE k = 1001");
  char *r = rows_of(&d, "SELECT /*+ INDEX(t ia) */ k, a, c FROM t WHERE a = 8 AND k >= 1000", true);
  assert_string_equal(r, "1000|8|zz\n");
  free(r);
  r = rows_of(&d, "SELECT /*+ INDEX(t ic) */ k FROM t WHERE c = 'zz'", true);
  assert_string_equal(r, "1000\n");
  free(r);
  r = rows_of(&d, "SELECT /*+ INDEX(t ia) */ k FROM t WHERE a = 7 AND k >= 1000", true);
  assert_string_equal(r, "");
  free(r);
  run_queries(&d, seed, &rng, (int)tu_scaled(30, 5));
  exec_ok(&d, "ROLLBACK");
  r = rows_of(&d, "SELECT /*+ INDEX(t ia) */ k FROM t WHERE k >= 1000 AND a IS NOT NULL", true);
  assert_string_equal(r, "");
  free(r);
  db_close(&d);
}

/* ---- The choice follows the cost ------------------------------------------------------------ */
/* 1 if the plan of sql scans index IV, 0 if it is the table's full scan (else fail). */
static int uses_index(db *d, const char *sql) {
  char *ex = explain(d, sql);
  int r = strstr(ex, "OVER T.IV") ? 1 : strstr(ex, "FULL SCAN OVER T\n") ? 0 : -1;
  if (r < 0) fprintf(stderr, "%s\n%s", sql, ex);
  free(ex);
  assert_true(r >= 0);
  return r;
}

static void load_seq(db *d, int n, bool flush) {
  exec_ok(d, "CREATE TABLE t (k INTEGER NOT NULL, v INTEGER, w VARCHAR, "
             "CONSTRAINT pk PRIMARY KEY (k))");
  exec_ok(d, "CREATE INDEX iv ON t (v)");
  exec_ok(d, "BEGIN");
  char sql[128];
  for (int i = 0; i < n; i++) {
    snprintf(sql, sizeof sql, "UPSERT INTO t VALUES (%d, %d, 'row %d')", i, (i * 7919) % n, i);
    exec_ok(d, sql);
  }
  exec_ok(d, "COMMIT");
  if (flush) assert_int_equal(api_test_flush(d->r), ROWAN_OK);
}

/* Over x = 1..n (as a fraction of the rows), the plan is the index for every x below some
** crossover and the table for every x above it: exactly one flip, and both kinds occur. */
static void check_flip(db *d, int n, int step, int *flip_at) {
  int prev = 1, flips = 0;
  *flip_at = -1;
  for (int x = step; x <= n; x += step) {
    char sql[128];
    snprintf(sql, sizeof sql, "SELECT k, w FROM t WHERE v < %d", x);
    int u = uses_index(d, sql);
    if (x == step) assert_int_equal(u, 1);
    if (u != prev) {
      flips++;
      *flip_at = x;
    }
    prev = u;
  }
  assert_int_equal(prev, 0);
  assert_int_equal(flips, 1);
}

static void test_cost_choice_flips(void **state) {
  (void)state;
  db d;
  db_open(&d);
  /* memstore: exact counts. index cost x + 8x against n: the index wins while 9x < n */
  int n = 900, at;
  load_seq(&d, n, false);
  check_flip(&d, n, 10, &at);
  assert_true(at > n / 9 - 10 && at <= n / 9 + 10);
  /* the same rows read by the covered path (k and v only) never look up: index wins more */
  char *ex = explain(&d, "SELECT k FROM t WHERE v < 400");
  assert_non_null(strstr(ex, "OVER T.IV"));
  assert_non_null(strstr(ex, "covered) 400 rows = 400.0 [chosen]"));
  free(ex);
  /* the answers are the same either way */
  char *a = rows_of(&d, "SELECT /*+ NO_INDEX */ k, w FROM t WHERE v < 50", true);
  char *b = rows_of(&d, "SELECT k, w FROM t WHERE v < 50", true);
  assert_string_equal(a, b);
  free(a);
  free(b);
  db_close(&d);
  /* store files: estimates from block indexes of a larger flushed table */
  db_open(&d);
  n = 40000;
  load_seq(&d, n, true);
  check_flip(&d, n, 2000, &at);
  fprintf(stderr, "flushed %d rows: the plan flips to the table at v < %d\n", n, at);
  db_close(&d);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_index_results_equal),
      cmocka_unit_test(test_cost_choice_flips),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
