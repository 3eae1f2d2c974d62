/*
** tests/exec/test_colagg.c: the columnar aggregate pushdown (exec/colagg.h, kv/colscan/colscan.h)
** against the rows path (the same query with the /+ NO_PUSHDOWN +/ hint) on randomized
** tables: NULLs, updates (several versions), deletes (tombstones), NULLs' tombstones kept by
** the look-back window, TTL, several store files,
** memstore cells, small blocks so rows split across blocks, and random ungrouped COUNT / SUM
** / AVG / MIN / MAX queries with ANDs of simple comparisons. EXPLAIN ANALYZE must say which
** path ran and what went the row way. Seeded (tu_seed); every mismatch prints the SQL.
*/
#include "exec/parallel.h"
#include "test_engine_util.h"
#include "testutil.h"

#define NCOL 4

static const char *const cols[NCOL] = {"A", "B", "C", "D"};

/* A random value literal for column c, or NULL (in an UPSERT). */
static void lit(uint64_t *rs, int c, bool allow_null, char *buf, size_t cap) {
  if (allow_null && tu_below(rs, 6) == 0) { snprintf(buf, cap, "NULL"); return; }
  switch (c) {
    case 0: snprintf(buf, cap, "%.2f", ((double)tu_below(rs, 8001) - 4000.0) / 100.0); break;
    case 1: snprintf(buf, cap, "%d", (int)tu_below(rs, 2001) - 1000); break;
    case 2:
      if (tu_below(rs, 8) == 0) snprintf(buf, cap, "''"); /* empty is a value, not NULL */
      else snprintf(buf, cap, "'%c%c'", 'a' + (int)tu_below(rs, 6), 'a' + (int)tu_below(rs, 3));
      break;
    default: snprintf(buf, cap, "%lld", (long long)tu_below(rs, 1000000) * 1000003LL - 400000000000LL); break;
  }
}

static void upsert_rows(tdb *t, uint64_t *rs, int k0, int k1, int step) {
  char sql[4096];
  for (int k = k0; k < k1; k += step) {
    char v[NCOL][64];
    for (int c = 0; c < NCOL; c++) lit(rs, c, true, v[c], sizeof v[c]);
    snprintf(sql, sizeof sql, "UPSERT INTO T (K, A, B, C, D) VALUES (%d, %s, %s, %s, %s)", k,
             v[0], v[1], v[2], v[3]);
    assert_int_equal(tdb_run(t, sql), EXEC_DONE);
  }
}

static const char *const aggs[] = {"COUNT(*)", "COUNT(A)", "SUM(B)", "AVG(B)", "MIN(C)",
                                   "MAX(C)",   "MAX(A)",   "MIN(D)", "SUM(D)", "COUNT(C)"};
static const char *const float_aggs[] = {"SUM(A)", "AVG(A)"};

/* A random eligible query (WHERE: 1..3 simple comparisons). */
static void random_query(uint64_t *rs, bool floats, char *sql, size_t cap) {
  char sel[512] = "", where[512] = "";
  int na = 1 + (int)tu_below(rs, 3);
  for (int i = 0; i < na; i++) {
    const char *a = floats && i == 0 ? float_aggs[tu_below(rs, 2)]
                                     : aggs[tu_below(rs, sizeof aggs / sizeof aggs[0])];
    size_t l = strlen(sel);
    snprintf(sel + l, sizeof sel - l, "%s%s", i ? ", " : "", a);
  }
  static const char *const ops[] = {"=", "<>", "<", "<=", ">", ">="};
  int nw = 1 + (int)tu_below(rs, 3);
  for (int i = 0; i < nw; i++) {
    int c = (int)tu_below(rs, NCOL);
    char v[64];
    lit(rs, c, false, v, sizeof v);
    size_t l = strlen(where);
    if (tu_below(rs, 8) == 0)
      snprintf(where + l, sizeof where - l, "%s%s IS NOT NULL", i ? " AND " : "", cols[c]);
    else
      snprintf(where + l, sizeof where - l, "%s%s %s %s", i ? " AND " : "", cols[c],
               ops[tu_below(rs, 6)], v);
  }
  snprintf(sql, cap, "SELECT %s FROM T WHERE %s", sel, where);
}

/* Run n random queries both ways and compare; returns how many ran the columnar way. */
static int compare(tdb *t, uint64_t *rs, int n, bool floats, uint64_t seed) {
  int pushed = 0;
  for (int i = 0; i < n; i++) {
    char sql[1200], hinted[1300], ex[1400];
    random_query(rs, floats && tu_below(rs, 3) == 0, sql, sizeof sql);
    snprintf(hinted, sizeof hinted, "SELECT /*+ NO_PUSHDOWN */ %s", sql + 7);
    char *want = strdup(q(t, hinted));
    const char *got = q(t, sql);
    if (strcmp(want, got) != 0)
      fprintf(stderr, "seed %llu: %s\n  rows path: %s  pushdown:  %s", (unsigned long long)seed,
              sql, want, got);
    assert_string_equal(want, got);
    free(want);
    snprintf(ex, sizeof ex, "EXPLAIN ANALYZE %s", sql);
    const char *e = explain(t, ex);
    assert_non_null(strstr(e, "SERVER COLUMNAR AGGREGATE"));
    if (strstr(e, "(actual blocks=")) pushed++;
    snprintf(ex, sizeof ex, "EXPLAIN %s", hinted);
    assert_null(strstr(explain(t, ex), "COLUMNAR"));
  }
  return pushed;
}

/* blocks=N cache hits=H in the FAMILIES line of an EXPLAIN ANALYZE: H. */
static long cache_hits(const char *e) {
  const char *h = strstr(e, "cache hits=");
  assert_non_null(h);
  return atol(h + strlen("cache hits="));
}

static tdb *make_window(const char *opts, int64_t max_lookback_ms) {
  tdb *t = tdb_open_window(max_lookback_ms);
  char sql[512];
  snprintf(sql, sizeof sql,
           "CREATE TABLE T (K INTEGER PRIMARY KEY, F.A DOUBLE, F.B INTEGER, F.C VARCHAR, "
           "F.D BIGINT) BLOCKSIZE=1024%s",
           opts);
  assert_int_equal(tdb_run(t, sql), EXEC_DONE);
  return t;
}

static tdb *make(const char *opts) { return make_window(opts, 0); }

/* One compacted file: every block evaluated on its columns, no row-way block. */
static void compacted(void **state) {
  (void)state;
  uint64_t seed = tu_seed("compacted"), rs = seed;
  tdb *t = make("");
  int n = (int)tu_scaled(3000, 400);
  upsert_rows(t, &rs, 0, n, 1);
  assert_int_equal(kv_compact(t->db, NULL, true), KV_OK);
  int pushed = compare(t, &rs, (int)tu_scaled(60, 20), true, seed);
  assert_int_equal(pushed, (int)tu_scaled(60, 20)); /* nothing refused */
  const char *e = explain(t, "EXPLAIN ANALYZE SELECT COUNT(*) FROM T WHERE A > 0");
  assert_non_null(strstr(e, "CLIENT 2-CHUNK PARALLEL 2-WAY FULL SCAN OVER T"));
  assert_non_null(strstr(e, "row-way blocks=0 row-way ranges=0"));
  assert_non_null(strstr(e, "threads=2"));
  /* a DOUBLE sum is exactly rounded, the same in any order: it runs in chunks too (the
     random queries above compared its bits with the rows path's); a DECIMAL sum runs in one
     chunk in key order (tests/exec/test_break_colagg_decimal.c) */
  e = explain(t, "EXPLAIN SELECT SUM(A) FROM T WHERE B > 0");
  assert_non_null(strstr(e, "CLIENT 2-CHUNK PARALLEL 2-WAY FULL SCAN OVER T"));
  tdb_close(t);
}

/* The scan threads setting (exec_set_parallel: rowan_set_scan_threads, .threads) sets the
** pushdown's chunks too, up to its limit of 4; unset, 2 on any machine; the SERIAL hint and
** one thread make it serial. The answer is the same every time. */
static void threads_setting(void **state) {
  (void)state;
  uint64_t seed = tu_seed("threads_setting"), rs = seed;
  tdb *t = make("");
  upsert_rows(t, &rs, 0, (int)tu_scaled(3000, 600), 1);
  assert_int_equal(kv_compact(t->db, NULL, true), KV_OK);
  const char *sql = "SELECT COUNT(*), SUM(B), MIN(C), MAX(A) FROM T WHERE B > -300";
  char *want = strdup(q(t, "SELECT /*+ NO_PUSHDOWN SERIAL */ COUNT(*), SUM(B), MIN(C), MAX(A) "
                           "FROM T WHERE B > -300"));
  static const struct { int threads; const char *prefix, *actual; } cases[] = {
      {-1, "CLIENT 2-CHUNK PARALLEL 2-WAY FULL SCAN", "threads=2"},
      {1, "CLIENT 1-CHUNK SERIAL FULL SCAN", "threads=1"},
      {3, "CLIENT 3-CHUNK PARALLEL 3-WAY FULL SCAN", "threads=3"},
      {4, "CLIENT 4-CHUNK PARALLEL 4-WAY FULL SCAN", "threads=4"},
      {9, "CLIENT 4-CHUNK PARALLEL 4-WAY FULL SCAN", "threads=4"},
      {2, "CLIENT 2-CHUNK PARALLEL 2-WAY FULL SCAN", "threads=2"}};
  exec_error err;
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    if (cases[i].threads >= 0)
      assert_int_equal(exec_set_parallel(t->s, cases[i].threads, -1, &err), EXEC_OK);
    assert_string_equal(q(t, sql), want);
    char ex[256];
    snprintf(ex, sizeof ex, "EXPLAIN ANALYZE %s", sql);
    const char *e = explain(t, ex);
    if (!strstr(e, cases[i].prefix)) fprintf(stderr, "threads %d:\n%s\n", cases[i].threads, e);
    assert_non_null(strstr(e, cases[i].prefix));
    assert_non_null(strstr(e, cases[i].actual));
    assert_non_null(strstr(e, "row-way blocks=0"));
  }
  /* the SERIAL hint: one chunk whatever the setting */
  const char *e = explain(t, "EXPLAIN ANALYZE SELECT /*+ SERIAL */ COUNT(*) FROM T WHERE B > -300");
  assert_non_null(strstr(e, "CLIENT 1-CHUNK SERIAL FULL SCAN"));
  assert_non_null(strstr(e, "threads=1"));
  free(want);
  /* one thread with rows the row way must read (memstore cells): still the pushdown (only
     a DECIMAL sum, which adds in key order, declines then) */
  upsert_rows(t, &rs, 0, 40, 7);
  want = strdup(q(t, "SELECT /*+ NO_PUSHDOWN SERIAL */ COUNT(*), SUM(B), MIN(C), MAX(A) "
                     "FROM T WHERE B > -300"));
  assert_int_equal(exec_set_parallel(t->s, 1, -1, &err), EXEC_OK);
  assert_string_equal(q(t, sql), want);
  char ex[256];
  snprintf(ex, sizeof ex, "EXPLAIN ANALYZE %s", sql);
  e = explain(t, ex);
  assert_null(strstr(e, "not used"));
  assert_non_null(strstr(e, "threads=1"));
  const char *rr = strstr(e, "row-way ranges=");
  assert_non_null(rr);
  assert_true(atoi(rr + strlen("row-way ranges=")) > 0);
  assert_non_null(strstr(e, "blocks in key order, one chunk"));
  free(want);
  tdb_close(t);
}

/* The look-back window (a day, the SQL layer's default) keeps the column deletes that an
** UPSERT of NULL writes through a major compaction. Each is its (row, column)'s only cell:
** the blocks are still answered on their columns (no row-way block), from the column cache
** the second time, as the rows path answers. A DELETE of rows then hands their blocks back. */
static void window_keeps_null_tombstones(void **state) {
  (void)state;
  uint64_t seed = tu_seed("window_keeps_null_tombstones"), rs = seed;
  tdb *t = make_window("", 86400000);
  int n = (int)tu_scaled(3000, 400);
  upsert_rows(t, &rs, 0, n, 1);
  assert_int_equal(kv_compact(t->db, NULL, true), KV_OK);
  int pushed = compare(t, &rs, (int)tu_scaled(60, 20), true, seed);
  assert_int_equal(pushed, (int)tu_scaled(60, 20));
  static const char *const qs[] = {"SELECT COUNT(*) FROM T WHERE A > 0",
                                   "SELECT COUNT(*), SUM(B), COUNT(B) FROM T WHERE B < 100",
                                   "SELECT COUNT(*), MIN(A), SUM(D) FROM T WHERE A > 0 AND D > 0"};
  for (size_t i = 0; i < sizeof qs / sizeof qs[0]; i++) {
    char hinted[256], ex[300];
    snprintf(hinted, sizeof hinted, "SELECT /*+ NO_PUSHDOWN */ %s", qs[i] + 7);
    char *want = strdup(q(t, hinted));
    snprintf(ex, sizeof ex, "EXPLAIN ANALYZE %s", qs[i]);
    for (int round = 0; round < 2; round++) {
      const char *e = explain(t, ex);
      assert_non_null(strstr(e, "row-way blocks=0 row-way ranges=0"));
      if (round == 1 && i < 2) assert_true(cache_hits(e) > 0); /* one column: cached */
      assert_string_equal(want, q(t, qs[i]));
    }
    free(want);
  }
  char sql[64];
  for (int k = 5; k < n; k += 13) {
    snprintf(sql, sizeof sql, "DELETE FROM T WHERE K = %d", k);
    assert_int_equal(tdb_run(t, sql), EXEC_DONE);
  }
  assert_int_equal(kv_compact(t->db, NULL, true), KV_OK);
  pushed = compare(t, &rs, (int)tu_scaled(30, 10), true, seed);
  assert_true(pushed > 0); /* a DOUBLE sum with row-way rows runs the rows path */
  const char *e = explain(t, "EXPLAIN ANALYZE SELECT COUNT(*) FROM T WHERE B > -500");
  const char *rb = strstr(e, "row-way blocks=");
  assert_non_null(rb);
  assert_true(atoi(rb + strlen("row-way blocks=")) > 0);
  tdb_close(t);
}

/* Updates and deletes after the compaction, merged by a minor compaction: blocks with
** tombstones and two versions go the row way; then memstore cells refuse it whole. */
static void versions_and_tombstones(void **state) {
  (void)state;
  uint64_t seed = tu_seed("versions_and_tombstones"), rs = seed;
  tdb *t = make("");
  int n = (int)tu_scaled(3000, 400);
  upsert_rows(t, &rs, 0, n, 1);
  assert_int_equal(kv_compact(t->db, NULL, true), KV_OK);
  upsert_rows(t, &rs, 0, n, 7); /* new versions of every 7th row */
  char sql[128];
  for (int k = 3; k < n; k += 11) {
    snprintf(sql, sizeof sql, "DELETE FROM T WHERE K = %d", k);
    assert_int_equal(tdb_run(t, sql), EXEC_DONE);
  }
  assert_int_equal(tdb_run(t, "UPSERT INTO T (K, A) VALUES (5, NULL)"), EXEC_DONE);
  assert_int_equal(kv_flush(t->db, NULL), KV_OK);
  assert_int_equal(kv_compact(t->db, NULL, false), KV_OK); /* one file, tombstones kept */
  int pushed = compare(t, &rs, (int)tu_scaled(60, 20), true, seed);
  assert_true(pushed > 0);
  const char *e = explain(t, "EXPLAIN ANALYZE SELECT COUNT(*), SUM(B) FROM T WHERE B > -500");
  const char *rb = strstr(e, "row-way blocks=");
  assert_non_null(rb);
  assert_true(atoi(rb + strlen("row-way blocks=")) > 0);
  /* memstore cells: their rows (and the blocks holding them) go the row way */
  upsert_rows(t, &rs, n, n + 50, 1);
  upsert_rows(t, &rs, 0, n, 97);
  assert_int_equal(tdb_run(t, "DELETE FROM T WHERE K = 2"), EXEC_DONE);
  pushed = compare(t, &rs, (int)tu_scaled(30, 10), true, seed);
  assert_true(pushed > 0);
  e = explain(t, "EXPLAIN ANALYZE SELECT COUNT(*) FROM T WHERE B > -500");
  rb = strstr(e, "row-way ranges=");
  assert_non_null(rb);
  assert_true(atoi(rb + strlen("row-way ranges=")) > 0);
  tdb_close(t);
}

/* Several store files with disjoint key ranges; then overlapping ones (refused: the rows
** path answers, in the plan's chunks). */
static void several_files(void **state) {
  (void)state;
  uint64_t seed = tu_seed("several_files"), rs = seed;
  tdb *t = make("");
  int n = (int)tu_scaled(1500, 300);
  upsert_rows(t, &rs, 0, n, 1);
  assert_int_equal(kv_flush(t->db, NULL), KV_OK);
  upsert_rows(t, &rs, n, 2 * n, 1);
  assert_int_equal(kv_flush(t->db, NULL), KV_OK);
  int pushed = compare(t, &rs, (int)tu_scaled(40, 15), false, seed);
  assert_int_equal(pushed, (int)tu_scaled(40, 15));
  upsert_rows(t, &rs, 0, 2 * n, 13); /* a third file over the same keys */
  assert_int_equal(kv_flush(t->db, NULL), KV_OK);
  compare(t, &rs, (int)tu_scaled(20, 8), false, seed);
  const char *e = explain(t, "EXPLAIN ANALYZE SELECT COUNT(*) FROM T WHERE B > 0");
  assert_non_null(strstr(e, "not used: store files overlap"));
  /* declined at run time, the rows path runs in the plan's chunks (two threads here, any
     size), and EXPLAIN ANALYZE says so; plain EXPLAIN shows the pushdown planned */
  exec_error err;
  assert_int_equal(exec_set_parallel(t->s, 2, 0, &err), EXEC_OK);
  static const char *const qs[] = {
      "SELECT COUNT(*), SUM(B), MIN(C) FROM T WHERE B > 0",
      "SELECT COUNT(*), AVG(B), MAX(D) FROM T WHERE K < 400 AND B > -100",
      "SELECT MAX(A), COUNT(C) FROM T WHERE K >= 100 AND K < 900 AND A > 0"};
  for (size_t i = 0; i < sizeof qs / sizeof *qs; i++) {
    char sql[512];
    snprintf(sql, sizeof sql, "SELECT /*+ SERIAL NO_PUSHDOWN */ %s", qs[i] + 7);
    char *want = strdup(q(t, sql));
    assert_string_equal(q(t, qs[i]), want);
    free(want);
    snprintf(sql, sizeof sql, "EXPLAIN ANALYZE %s", qs[i]);
    e = explain(t, sql);
    assert_non_null(strstr(e, "not used: store files overlap"));
    assert_non_null(strstr(e, "-CHUNK PARALLEL 2-WAY "));
    assert_non_null(strstr(e, "    CHUNKS: "));
    assert_non_null(strstr(e, " on 2 threads (actual rows per chunk=["));
    snprintf(sql, sizeof sql, "EXPLAIN %s", qs[i]);
    e = explain(t, sql);
    assert_non_null(strstr(e, "CLIENT 2-CHUNK PARALLEL 2-WAY "));
    assert_null(strstr(e, "CHUNKS: "));
  }
  /* one thread: serial, and EXPLAIN ANALYZE says that */
  assert_int_equal(exec_set_parallel(t->s, 1, 0, &err), EXEC_OK);
  e = explain(t, "EXPLAIN ANALYZE SELECT COUNT(*) FROM T WHERE B > 0");
  assert_non_null(strstr(e, "not used: store files overlap"));
  assert_non_null(strstr(e, "CLIENT 1-CHUNK SERIAL "));
  assert_null(strstr(e, "CHUNKS: "));
  tdb_close(t);
}

/* VERSIONS=3 keeps versions through a major compaction; TTL hides old cells. */
static void versions_kept_and_ttl(void **state) {
  (void)state;
  uint64_t seed = tu_seed("versions_kept_and_ttl"), rs = seed;
  tdb *t = make(", VERSIONS=3");
  int n = (int)tu_scaled(1500, 300);
  upsert_rows(t, &rs, 0, n, 1);
  upsert_rows(t, &rs, 0, n, 5);
  assert_int_equal(kv_compact(t->db, NULL, true), KV_OK);
  compare(t, &rs, (int)tu_scaled(30, 10), true, seed);
  tdb_close(t);

  t = make(", TTL=100");
  upsert_rows(t, &rs, 0, n, 1);
  kv_env_mem_set_time(t->env, 1500000000000LL + 60000);
  upsert_rows(t, &rs, 0, n, 3); /* newer cells of every 3rd row */
  assert_int_equal(kv_compact(t->db, NULL, false), KV_OK);
  assert_int_equal(kv_flush(t->db, NULL), KV_OK);
  assert_int_equal(kv_compact(t->db, NULL, false), KV_OK);
  kv_env_mem_set_time(t->env, 1500000000000LL + 120000); /* the first cells expired */
  compare(t, &rs, (int)tu_scaled(30, 10), false, seed);
  kv_env_mem_set_time(t->env, 1500000000000LL + 200000); /* every cell expired */
  compare(t, &rs, (int)tu_scaled(10, 5), false, seed);
  tdb_close(t);
}


/* The column cache: a second run of a one-column query reads no block, and gives the same
** answer; new store files (a flush and a compaction) are not answered from old entries. */
static void column_cache(void **state) {
  (void)state;
  uint64_t seed = tu_seed("column_cache"), rs = seed;
  tdb *t = make("");
  int n = (int)tu_scaled(3000, 400);
  upsert_rows(t, &rs, 0, n, 1);
  assert_int_equal(kv_compact(t->db, NULL, true), KV_OK);
  static const char *const qs[] = {
      "SELECT COUNT(*), MIN(A), MAX(A), COUNT(A) FROM T WHERE A > 0",
      "SELECT SUM(A), COUNT(*) FROM T WHERE A >= -10.5 AND A < 20",
      "SELECT COUNT(*), SUM(B), MIN(B) FROM T WHERE B <> 7",
      "SELECT MAX(D) FROM T WHERE D > 0",
  };
  for (int round = 0; round < 2; round++) {
    for (size_t i = 0; i < sizeof qs / sizeof qs[0]; i++) {
      char hinted[256], ex[300];
      snprintf(hinted, sizeof hinted, "SELECT /*+ NO_PUSHDOWN */ %s", qs[i] + 7);
      char *want = strdup(q(t, hinted));
      snprintf(ex, sizeof ex, "EXPLAIN ANALYZE %s", qs[i]);
      (void)explain(t, ex);                 /* fills the cache (or hits it) */
      const char *e = explain(t, ex);
      assert_non_null(strstr(e, "(actual blocks="));
      assert_true(cache_hits(e) > 0);
      const char *b = strstr(e, "(blocks=");
      assert_non_null(b);
      assert_int_equal(atol(b + strlen("(blocks=")), cache_hits(e)); /* every block */
      if (strcmp(want, q(t, qs[i])) != 0)
        fprintf(stderr, "seed %llu: %s\n", (unsigned long long)seed, qs[i]);
      assert_string_equal(want, q(t, qs[i]));
      free(want);
    }
    /* change the data: new versions and deletes, one file again (new file number) */
    upsert_rows(t, &rs, 0, n, 3);
    char sql[64];
    for (int k = 1; k < n; k += 17) {
      snprintf(sql, sizeof sql, "DELETE FROM T WHERE K = %d", k);
      assert_int_equal(tdb_run(t, sql), EXEC_DONE);
    }
    assert_int_equal(kv_compact(t->db, NULL, true), KV_OK);
  }
  tdb_close(t);
}

/* What is left out runs the rows path and says nothing of the pushdown. */
static void not_eligible(void **state) {
  (void)state;
  uint64_t seed = tu_seed("not_eligible"), rs = seed;
  tdb *t = make("");
  upsert_rows(t, &rs, 0, 300, 1);
  assert_int_equal(kv_compact(t->db, NULL, true), KV_OK);
  static const char *const sqls[] = {
      "SELECT COUNT(*) FROM T",                          /* no filter */
      "SELECT K + 1, COUNT(*) FROM T WHERE A > 0 GROUP BY K + 1", /* an expression of the key */
      "SELECT COUNT(*) FROM T WHERE K > 5 AND A > 0 AND A + 1 > 0", /* a residual term */
      "SELECT COUNT(*) FROM T WHERE A > 0 OR B > 0",      /* OR */
      "SELECT COUNT(*) FROM T WHERE A + 1 > 0",           /* an expression */
      "SELECT COUNT(*) FROM T WHERE A IS NULL",           /* not null-rejecting */
      "SELECT B, COUNT(*) FROM T WHERE A > 0 GROUP BY B", /* GROUP BY */
      "SELECT COUNT(DISTINCT B) FROM T WHERE A > 0",      /* DISTINCT */
      "SELECT SUM(B + 1) FROM T WHERE A > 0",             /* an expression argument */
      "SELECT /*+ NO_PUSHDOWN */ COUNT(*) FROM T WHERE A > 0",
  };
  for (size_t i = 0; i < sizeof sqls / sizeof sqls[0]; i++) {
    char ex[256];
    snprintf(ex, sizeof ex, "EXPLAIN %s", sqls[i]);
    assert_null(strstr(explain(t, ex), "COLUMNAR"));
  }
  tdb_close(t);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(compacted),
      cmocka_unit_test(versions_and_tombstones),
      cmocka_unit_test(window_keeps_null_tombstones),
      cmocka_unit_test(several_files),
      cmocka_unit_test(threads_setting),
      cmocka_unit_test(versions_kept_and_ttl),
      cmocka_unit_test(column_cache),
      cmocka_unit_test(not_eligible),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
