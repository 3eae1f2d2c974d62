/*
** tests/api/test_parallel_scan.c: the parallel scan (exec/parallel.h) through the public
** API, where SQL files cannot reach: every query's answer with 4 scan threads equals its
** serial answer (threads 1), row for row and in order, also when a prepared statement runs
** again with other parameters and settings, over a table of thousands of rows in
** several store files and the memstore (a few hundred chunks' worth of blocks, cut into at
** most 32 chunks); an error met in one chunk (a division by zero) is the serial error; a
** statement finalized after a few rows stops the chunks' threads (no hang, nothing leaked
** under ASan); a transaction's uncommitted writes are seen (its scans stay serial, EXPLAIN
** says why); and the setting refuses values out of range. A salted table (4 buckets) and its
** indexes (uncovered, salted with 3 buckets; covered) in a store whose regions split by size
** (rowan_options.region_split_size: the buckets and the index tables are cut into regions)
** answer every query as the same rows in a plain table do, serially and with 4 threads:
** bucket pieces, reverse scans, top-N, aggregates and index lookups in chunks. Run under
** ThreadSanitizer in CI
** (.ci/run): four threads share one kv_db's files, block cache and memstore while they scan.
** Not here: the SQL-level answers against SQLite and under the row-atomic backend
** (tests/sql/parallel_scan.test), EXPLAIN text (tests/sql/parallel_explain.test).
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

#include "api/api_test.h"
#include "kv/env/env_mem.h"
#include "rowan.h"
#include "testutil.h"
#include "tu_api.h"

/* A growing text buffer. */
typedef struct text {
  char *p;
  size_t n, cap;
} text;

static void put(text *t, const char *s) {
  size_t k = strlen(s);
  if (t->n + k + 1 > t->cap) {
    t->cap = (t->n + k + 1) * 2;
    t->p = realloc(t->p, t->cap);
    assert_non_null(t->p);
  }
  memcpy(t->p + t->n, s, k + 1);
  t->n += k;
}

/* Every row of sql as text (values separated by '|', rows by '\n'), or "ERROR: message";
** *rows gets the count. Caller frees. */
static char *answer(rowan_db *db, const char *sql, int *rows) {
  rowan_stmt *st;
  text t = {0};
  put(&t, "");
  *rows = 0;
  if (rowan_prepare(db, sql, -1, &st, NULL) != ROWAN_OK) fail_msg("%s: %s", sql, rowan_errmsg(db));
  int rc;
  while ((rc = rowan_step(st)) == ROWAN_ROW) {
    for (int i = 0; i < rowan_column_count(st); i++) {
      const char *v = rowan_column_text(st, i);
      put(&t, i ? "|" : "");
      put(&t, v ? v : "NULL");
    }
    put(&t, "\n");
    (*rows)++;
  }
  if (rc != ROWAN_DONE) {
    t.n = 0;
    put(&t, "ERROR: ");
    put(&t, rowan_errmsg(db));
  }
  rowan_finalize(st);
  return t.p;
}

/* True when EXPLAIN of sql contains want. */
static bool explain_has(rowan_db *db, const char *sql, const char *want) {
  char x[1024];
  snprintf(x, sizeof x, "EXPLAIN %s", sql);
  int n;
  char *a = answer(db, x, &n);
  bool has = strstr(a, want) != NULL;
  free(a);
  return has;
}

/* The table: n rows, 1 KB blocks; three store files and rows in the memstore. */
static rowan_db *open_loaded(kv_env *env, int n) {
  rowan_db *db = tu_open_mem(env);
  exec_ok(db, "CREATE TABLE T (K INTEGER NOT NULL PRIMARY KEY, G INTEGER, V INTEGER, "
              "D DOUBLE, S VARCHAR) BLOCKSIZE=1024");
  uint64_t rng = 23;
  char sql[256];
  for (int part = 0; part < 4; part++) {
    exec_ok(db, "BEGIN");
    for (int k = part; k < n; k += 4) {
      uint64_t r = tu_rand(&rng);
      char v[32], d[32], s[32];
      snprintf(v, sizeof v, "%d", (int)((r >> 8) % 1000) - 300);
      snprintf(d, sizeof d, "%d.25", (int)((r >> 20) % 500) - 250);
      snprintf(s, sizeof s, "'s%02d'", (int)((r >> 32) % 40));
      snprintf(sql, sizeof sql, "UPSERT INTO T VALUES (%d, %d, %s, %s, %s)", k, (int)(r % 13),
               r % 7 == 0 ? "NULL" : v, r % 5 == 0 ? "NULL" : d, r % 3 == 0 ? "NULL" : s);
      exec_ok(db, sql);
    }
    exec_ok(db, "COMMIT");
    if (part < 3) assert_int_equal(rowan_flush(db), ROWAN_OK);
  }
  exec_ok(db, "DELETE FROM T WHERE K % 97 = 0");
  return db;
}

/* EXPLAIN ANALYZE of sql: the sum of its "actual rows per chunk=[...]", *chunks their count. */
static int64_t chunk_rows(rowan_db *db, const char *sql, int64_t *chunks) {
  char q[512];
  snprintf(q, sizeof q, "EXPLAIN ANALYZE %s", sql);
  int n;
  char *x = answer(db, q, &n);
  const char *at = strstr(x, "actual rows per chunk=[");
  if (!at) fail_msg("no rows per chunk:\n%s", x);
  int64_t sum = 0;
  *chunks = 0;
  for (const char *p = at + strlen("actual rows per chunk=["); *p && *p != ']'; (*chunks)++) {
    char *end;
    sum += strtoll(p, &end, 10);
    p = *end == ',' ? end + 2 : end;
  }
  free(x);
  return sum;
}

static const char *const queries[] = {
    "SELECT * FROM T",
    "SELECT K, V FROM T WHERE V > 500",
    "SELECT K, S FROM T WHERE K BETWEEN 1000 AND 3000 AND S LIKE 's1%'",
    "SELECT K FROM T WHERE K IN (5, 777, 1500, 3333) OR K > 3990",
    "SELECT * FROM T LIMIT 9",
    "SELECT K, V FROM T WHERE V < 0 LIMIT 5 OFFSET 100",
    "SELECT K, V FROM T WHERE V + G > 600 LIMIT 20",
    "SELECT K, V, D FROM T ORDER BY V DESC NULLS LAST, K LIMIT 25",
    "SELECT K, V, D FROM T ORDER BY D NULLS FIRST, K",
    "SELECT K, V FROM T WHERE K > 500 ORDER BY V, K LIMIT 10 OFFSET 1000",
    "SELECT DISTINCT G FROM T",
    "SELECT DISTINCT S FROM T ORDER BY S NULLS FIRST",
    "SELECT COUNT(*) FROM T",
    "SELECT COUNT(V), SUM(V), MIN(V), MAX(V), AVG(V) FROM T WHERE K > 10",
    "SELECT /*+ NO_PUSHDOWN */ COUNT(V), SUM(V), MIN(S), MAX(D) FROM T WHERE V > 0",
    "SELECT G, COUNT(*), SUM(V), MIN(S), MAX(D) FROM T GROUP BY G",
    "SELECT G, COUNT(*) FROM T WHERE V > 0 GROUP BY G HAVING COUNT(*) > 20 ORDER BY 2 DESC, G",
    "SELECT COUNT(DISTINCT V), SUM(D) FROM T",
    "SELECT G, SUM(D), AVG(D) FROM T GROUP BY G ORDER BY G",
    "SELECT K / 100, COUNT(*), MAX(V) FROM T GROUP BY K / 100",
    "SELECT K / 100, COUNT(*) FROM T GROUP BY K / 100 LIMIT 3",
    "SELECT S, COUNT(*) FROM T GROUP BY S ORDER BY S NULLS LAST LIMIT 3",
    "SELECT MIN(K), MAX(K) FROM T WHERE V IS NULL",
    "SELECT COUNT(*), SUM(V) FROM T WHERE V > 100000",
    "SELECT K, V / (K - 2500) FROM T WHERE K > 2000",
    "SELECT SUM(V / (K - 2500)) FROM T",
};

static void same_answers(void **state) {
  (void)state;
  kv_env *env = kv_env_mem_new(1700000000000LL);
  int rows = (int)tu_scaled(4000, 2000);
  rowan_db *db = open_loaded(env, rows);
  int parallel = 0, n1, n4;
  for (size_t i = 0; i < sizeof queries / sizeof *queries; i++) {
    assert_int_equal(rowan_set_scan_threads(db, 1, 0), ROWAN_OK);
    char *serial = answer(db, queries[i], &n1);
    assert_int_equal(rowan_set_scan_threads(db, 4, 0), ROWAN_OK);
    char *par = answer(db, queries[i], &n4);
    if (strcmp(serial, par) != 0)
      fail_msg("%s: 4 threads answer otherwise (%d rows) than 1 thread (%d rows)\n%.400s\n--\n%.400s",
               queries[i], n4, n1, par, serial);
    parallel += explain_has(db, queries[i], "PARALLEL 4-WAY");
    free(serial);
    free(par);
  }
  /* the test is not vacuous: nearly every query ran in chunks (the columnar aggregate
     answers the few others with its own) */
  print_message("%d of %zu queries ran in chunks\n", parallel, sizeof queries / sizeof *queries);
  assert_true(parallel >= 20);
  /* EXPLAIN ANALYZE: the rows of each chunk add up to the rows the scan handed on */
  int64_t want = tu_one_int(db, "SELECT COUNT(*) FROM T WHERE K > 1000 AND V > 0");
  int64_t chunks = 0;
  assert_int_equal(chunk_rows(db, "SELECT /*+ NO_PUSHDOWN */ G, COUNT(*) FROM T "
                                  "WHERE K > 1000 AND V > 0 GROUP BY G", &chunks), want);
  assert_true(chunks > 1);
  /* the division by zero happened in one chunk and is the serial error: the divisor is zero
     on a row that exists, past the first rows of the scan, whatever ROWAN_TEST_SCALE made the
     table (a fixed K = 2500 was missing from the 2,000 rows of scale 0.25) */
  char q[160], sql[160];
  snprintf(q, sizeof q, "SELECT K FROM T WHERE K > %d AND V IS NOT NULL ORDER BY K LIMIT 1 OFFSET %d",
           rows / 2, rows / 8);
  int64_t pivot = tu_one_int(db, q);
  assert_true(pivot > rows / 2);
  snprintf(sql, sizeof sql, "SELECT K, V / (K - %lld) FROM T WHERE K > %d AND V IS NOT NULL",
           (long long)pivot, rows / 2);
  char *e = answer(db, sql, &n1);
  assert_non_null(strstr(e, "ERROR: "));
  free(e);
  rowan_close(db);
  kv_env_free(env);
}

/* The rows of a prepared statement run once more from the start, as text. */
static char *rerun(rowan_stmt *st) {
  text t = {0};
  put(&t, "");
  rowan_reset(st);
  int rc;
  while ((rc = rowan_step(st)) == ROWAN_ROW) {
    for (int i = 0; i < rowan_column_count(st); i++) {
      const char *v = rowan_column_text(st, i);
      put(&t, i ? "|" : "");
      put(&t, v ? v : "NULL");
    }
    put(&t, "\n");
  }
  assert_int_equal(rc, ROWAN_DONE);
  return t.p;
}

static void prepared_runs(void **state) {
  (void)state;
  kv_env *env = kv_env_mem_new(1700000000000LL);
  rowan_db *db = open_loaded(env, 2000);
  static const char *const sqls[] = {
      "SELECT G, COUNT(*), MAX(V) FROM T WHERE K > ? GROUP BY G ORDER BY G",
      "SELECT K, V FROM T WHERE K > ? AND V > 100",
      "SELECT K, D FROM T WHERE K > ? ORDER BY D NULLS LAST, K LIMIT 30",
  };
  for (size_t q = 0; q < sizeof sqls / sizeof *sqls; q++) {
    rowan_stmt *st;
    assert_int_equal(rowan_prepare(db, sqls[q], -1, &st, NULL), ROWAN_OK);
    char *want[2] = {NULL, NULL};
    for (int run = 0; run < 6; run++) { /* threads 1, 4, 1, 4 ... over two parameters */
      assert_int_equal(rowan_set_scan_threads(db, run % 2 ? 4 : 1, 0), ROWAN_OK);
      rowan_reset(st);
      assert_int_equal(rowan_bind_int64(st, 1, run % 3 ? 10 : 700), ROWAN_OK);
      char *got = rerun(st);
      int slot = run % 3 ? 0 : 1;
      if (!want[slot]) want[slot] = got;
      else {
        assert_string_equal(got, want[slot]);
        free(got);
      }
    }
    free(want[0]);
    free(want[1]);
    rowan_finalize(st);
  }
  rowan_close(db);
  kv_env_free(env);
}

static void stops_early(void **state) {
  (void)state;
  kv_env *env = kv_env_mem_new(1700000000000LL);
  rowan_db *db = open_loaded(env, (int)tu_scaled(4000, 2000));
  assert_int_equal(rowan_set_scan_threads(db, 4, 0), ROWAN_OK);
  for (int stop = 0; stop < 40; stop += 7) { /* every chunk's queue may be full then */
    rowan_stmt *st;
    assert_int_equal(rowan_prepare(db, "SELECT K, S FROM T", -1, &st, NULL), ROWAN_OK);
    int64_t last = -1;
    for (int i = 0; i < stop; i++) {
      assert_int_equal(rowan_step(st), ROWAN_ROW);
      int64_t k = rowan_column_int64(st, 0);
      assert_true(k > last); /* key order */
      last = k;
    }
    rowan_finalize(st);
  }
  rowan_close(db);
  kv_env_free(env);
}

static void transaction_writes(void **state) {
  (void)state;
  kv_env *env = kv_env_mem_new(1700000000000LL);
  rowan_db *db = open_loaded(env, 2000);
  assert_int_equal(rowan_set_scan_threads(db, 4, 0), ROWAN_OK);
  int64_t before = tu_one_int(db, "SELECT COUNT(*) FROM T WHERE V > 0");
  exec_ok(db, "BEGIN");
  exec_ok(db, "UPSERT INTO T VALUES (100001, 1, 5, 1.0, 'x'), (100002, 1, 6, 1.0, 'y')");
  exec_ok(db, "DELETE FROM T WHERE K = 1 OR K = 2 OR K = 3");
  int64_t gone = 0;
  for (int k = 1; k <= 3; k++) { /* what the transaction deleted with V > 0, read serially */
    char sql[96];
    snprintf(sql, sizeof sql, "SELECT COUNT(*) FROM T WHERE K = %d AND V > 0", k);
    gone += tu_one_int(db, sql);
  }
  assert_int_equal(gone, 0); /* deleted: the transaction sees it */
  int64_t inside = tu_one_int(db, "SELECT /*+ NO_PUSHDOWN */ COUNT(*) FROM T WHERE V > 0");
  assert_true(explain_has(db, "SELECT * FROM T", "CLIENT 1-CHUNK SERIAL"));
  assert_true(explain_has(db, "SELECT * FROM T", "uncommitted writes"));
  exec_ok(db, "ROLLBACK");
  exec_ok(db, "BEGIN");
  exec_ok(db, "UPSERT INTO T VALUES (100001, 1, 5, 1.0, 'x'), (100002, 1, 6, 1.0, 'y')");
  exec_ok(db, "DELETE FROM T WHERE K = 1 OR K = 2 OR K = 3");
  exec_ok(db, "COMMIT");
  int64_t after = tu_one_int(db, "SELECT /*+ NO_PUSHDOWN */ COUNT(*) FROM T WHERE V > 0");
  assert_true(explain_has(db, "SELECT * FROM T", "PARALLEL 4-WAY"));
  assert_int_equal(inside, after); /* the same rows, read in a transaction or not */
  assert_true(after >= before - 3 + 2 && after <= before + 2);
  rowan_close(db);
  kv_env_free(env);
}

static void setting(void **state) {
  (void)state;
  kv_env *env = kv_env_mem_new(1700000000000LL);
  rowan_db *db = tu_open_mem(env);
  long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  assert_int_equal(rowan_scan_threads(db), cpus < 1 ? 1 : cpus > 64 ? 64 : cpus);
  assert_int_equal(rowan_set_scan_threads(db, 3, -1), ROWAN_OK);
  assert_int_equal(rowan_scan_threads(db), 3);
  assert_int_equal(rowan_set_scan_threads(db, 65, -1), ROWAN_MISUSE);
  assert_non_null(strstr(rowan_errmsg(db), "65"));
  assert_int_equal(rowan_set_scan_threads(db, -1, -1), ROWAN_MISUSE);
  assert_int_equal(rowan_scan_threads(db), 3); /* unchanged by the refused calls */
  assert_int_equal(rowan_set_scan_threads(NULL, 1, 0), ROWAN_MISUSE);
  assert_int_equal(rowan_scan_threads(NULL), 0);
  /* a small table with the default minimum stays as EXPLAIN always showed it */
  exec_ok(db, "CREATE TABLE S (K INTEGER NOT NULL PRIMARY KEY, V INTEGER)");
  exec_ok(db, "UPSERT INTO S VALUES (1, 1), (2, 2)");
  assert_false(explain_has(db, "SELECT * FROM S", "CHUNK"));
  rowan_close(db);
  kv_env_free(env);
}


/* ---- A salted table and its indexes, in regions split by size ------------------------------ */
/* sql with every "@" replaced by name, into buf. */
static const char *with_table(char *buf, size_t cap, const char *sql, const char *name) {
  size_t o = 0;
  for (const char *p = sql; *p && o + 16 < cap; p++) {
    if (*p == '@') o += (size_t)snprintf(buf + o, cap - o, "%s", name);
    else buf[o++] = *p;
  }
  buf[o] = 0;
  return buf;
}

/* The regions of the kv table whose name ends with suffix (the index's), 0 when none does. */
static uint32_t regions_of(rowan_db *db, const char *suffix) {
  kv_db *kv = api_test_kv(db);
  for (int i = 0; i < kv_table_count(kv); i++) {
    const char *name = kv_table_name(kv, i);

    size_t n = strlen(name), k = strlen(suffix);
    if (n < k || strcmp(name + n - k, suffix) != 0) continue;
    uint32_t r = 0;
    assert_int_equal(kv_table_regions(kv, name, &r, NULL, NULL), KV_OK);
    return r;
  }
  return 0;
}

/* The n of "CLIENT n-CHUNK" on EXPLAIN's first line of sql (0: none). */
static int chunks_of(rowan_db *db, const char *sql) {
  char x[512];
  snprintf(x, sizeof x, "EXPLAIN %s", sql);
  int n, chunks = 0;
  char *a = answer(db, x, &n);
  if (sscanf(a, "CLIENT %d-CHUNK", &chunks) != 1) chunks = 0;
  free(a);
  return chunks;
}

static const char *const salted_queries[] = {
    "SELECT * FROM @",
    "SELECT K, V FROM @ WHERE V > 50 ORDER BY K DESC",
    "SELECT * FROM @ ORDER BY K DESC LIMIT 30",
    "SELECT K, S FROM @ WHERE K BETWEEN 1000 AND 5000 LIMIT 70",
    "SELECT K, V FROM @ WHERE K > 100 ORDER BY V, K LIMIT 40",
    "SELECT /*+ NO_INDEX */ K, V FROM @ WHERE K > 100 ORDER BY V, K LIMIT 40",
    "SELECT K, G FROM @ WHERE K < 3000 ORDER BY G DESC, V",
    "SELECT G, COUNT(*), SUM(V), MIN(S), MAX(V) FROM @ GROUP BY G ORDER BY G",
    "SELECT K / 1000, COUNT(*), MAX(V) FROM @ GROUP BY K / 1000",
    "SELECT K, COUNT(*) FROM @ WHERE V > 90 GROUP BY K",
    "SELECT COUNT(*), SUM(V), MIN(K), MAX(K) FROM @ WHERE G <> 3",
    "SELECT DISTINCT G FROM @",
    "SELECT /*+ INDEX(@ @_V) */ K, V, S FROM @ WHERE V > 80",
    "SELECT /*+ INDEX(@ @_V) */ K, V FROM @ WHERE V BETWEEN 10 AND 20 ORDER BY V DESC",
    "SELECT /*+ INDEX(@ @_V) */ V, COUNT(*), MAX(K) FROM @ WHERE V < 30 GROUP BY V",
    "SELECT /*+ INDEX(@ @_G) */ G, S FROM @ WHERE G > 3",
    "SELECT /*+ INDEX(@ @_G) */ G, S FROM @ WHERE G > 3 ORDER BY G DESC LIMIT 50",
    "SELECT /*+ INDEX(@ @_G) */ G, COUNT(S) FROM @ WHERE G > 3 GROUP BY G",
};

static void salted_in_regions(void **state) {
  (void)state;
  kv_env *env = kv_env_mem_new(1700000000000LL);
  rowan_options o;
  rowan_options_init(&o);
  o.kv_env = env;
  o.sync_mode = ROWAN_SYNC_OFF;
  o.region_split_size = 8 << 10; /* small: the buckets and the index tables split */
  rowan_db *db = NULL;
  assert_int_equal(rowan_open("/db", &o, &db), ROWAN_OK);
  const char *cols = "(K INTEGER NOT NULL PRIMARY KEY, G INTEGER, V INTEGER, S VARCHAR)";
  char sql[512];
  snprintf(sql, sizeof sql, "CREATE TABLE TS %s SALT_BUCKETS = 4", cols);
  exec_ok(db, sql);
  snprintf(sql, sizeof sql, "CREATE TABLE TP %s", cols);
  exec_ok(db, sql);
  exec_ok(db, "CREATE INDEX TS_V ON TS (V) SALT_BUCKETS = 3");
  exec_ok(db, "CREATE INDEX TS_G ON TS (G) INCLUDE (S)");
  exec_ok(db, "CREATE INDEX TP_V ON TP (V)");
  exec_ok(db, "CREATE INDEX TP_G ON TP (G) INCLUDE (S)");
  int rows = (int)tu_scaled(8000, 6000); /* (enough rows for regions at every scale) */
  uint64_t rng = 41;
  for (int part = 0; part < 4; part++) {
    exec_ok(db, "BEGIN");
    for (int k = part; k < rows; k += 4) {
      uint64_t r = tu_rand(&rng);
      for (int t = 0; t < 2; t++) {
        snprintf(sql, sizeof sql, "UPSERT INTO %s VALUES (%d, %d, %d, %s)", t ? "TP" : "TS", k,
                 (int)(r % 11), (int)((r >> 8) % 100),
                 r % 6 == 0 ? "NULL" : "'padding padding padding padding'");
        exec_ok(db, sql);
      }
    }
    exec_ok(db, "COMMIT");
    assert_int_equal(rowan_flush(db), ROWAN_OK);
  }
  assert_int_equal(rowan_compact(db, 1), ROWAN_OK);
  exec_ok(db, "DELETE FROM TS WHERE K % 89 = 0");
  exec_ok(db, "DELETE FROM TP WHERE K % 89 = 0");
  /* regions inside the buckets and in the index tables: the setup is what it says */
  assert_true(regions_of(db, ".TS") > 4);
  assert_true(regions_of(db, ".TS_G") > 1);
  assert_true(regions_of(db, ".TS_V") > 3);
  int n1, n;
  char q[512];
  for (size_t i = 0; i < sizeof salted_queries / sizeof *salted_queries; i++) {
    assert_int_equal(rowan_set_scan_threads(db, 1, 0), ROWAN_OK);
    char *want = answer(db, with_table(q, sizeof q, salted_queries[i], "TP"), &n1);
    assert_true(n1 > 0);
    for (int th = 1; th <= 4; th += 3) {
      assert_int_equal(rowan_set_scan_threads(db, th, 0), ROWAN_OK);
      for (int t = 0; t < 2; t++) {
        char *got = answer(db, with_table(q, sizeof q, salted_queries[i], t ? "TP" : "TS"), &n);
        if (strcmp(want, got) != 0)
          fail_msg("%s with %d threads: %d rows, the plain table serially %d rows\n%.300s\n"
                   "--\n%.300s", q, th, n, n1, got, want);
        free(got);
      }
    }
    free(want);
  }
  /* with 4 threads the chunks are what the plan says: buckets cut again at the regions inside
     them for a top-N, whole buckets merged by key for the rows way, the index at its regions */
  assert_true(
      chunks_of(db, "SELECT /*+ NO_INDEX */ K, V FROM TS WHERE K > 100 ORDER BY V, K LIMIT 40") > 4);
  assert_int_equal(chunks_of(db, "SELECT * FROM TS"), 4);
  assert_true(explain_has(db, "SELECT * FROM TS", "CLIENT MERGE SORT (the 4 chunks"));
  const char *be = getenv("ROWAN_BACKEND");
  if (be && strcmp(be, "rowatomic") == 0) { /* its index scans repair rows: serial */
    assert_true(explain_has(db, "SELECT /*+ INDEX(TS TS_G) */ G, S FROM TS WHERE G > 3",
                            "SERIAL: an index scan on a row-atomic backend"));
  } else {
    assert_true(chunks_of(db, "SELECT /*+ INDEX(TS TS_G) */ G, S FROM TS WHERE G > 3") > 1);
    assert_true(chunks_of(db, "SELECT /*+ INDEX(TS TS_V) */ K, V, S FROM TS WHERE V > 80") > 1);
  }
  assert_true(chunks_of(db, "SELECT * FROM TS ORDER BY K DESC LIMIT 30") > 1);
  /* EXPLAIN ANALYZE: the rows of each bucket's chunk add up to the rows the scan handed on */
  int64_t chunks = 0, want = tu_one_int(db, "SELECT COUNT(*) FROM TS WHERE V > 50");
  assert_int_equal(chunk_rows(db, "SELECT /*+ NO_PUSHDOWN NO_INDEX */ G, COUNT(*) FROM TS "
                                  "WHERE V > 50 GROUP BY G", &chunks), want);
  assert_true(chunks > 4);
  assert_int_equal(chunk_rows(db, "SELECT /*+ NO_INDEX */ K, V FROM TS WHERE V > 50", &chunks),
                   want);
  assert_int_equal(chunks, 4);
  /* a merge by key finalized after a few rows stops its chunks (no hang, nothing leaked) */
  for (int stop = 1; stop < 30; stop += 9) {
    rowan_stmt *st;
    assert_int_equal(rowan_prepare(db, "SELECT K, S FROM TS", -1, &st, NULL), ROWAN_OK);
    int64_t last = -1;
    for (int i = 0; i < stop; i++) {
      assert_int_equal(rowan_step(st), ROWAN_ROW);
      assert_true(rowan_column_int64(st, 0) > last); /* key order */
      last = rowan_column_int64(st, 0);
    }
    rowan_finalize(st);
  }
  /* an error in one bucket's chunk is the statement's: a division by zero at K = 2002 */
  char *e = answer(db, "SELECT K, V / (K - 2002) FROM TS", &n);
  assert_non_null(strstr(e, "ERROR: "));
  free(e);
  e = answer(db, "SELECT SUM(V / (K - 2002)) FROM TS", &n);
  assert_non_null(strstr(e, "ERROR: "));
  free(e);
  rowan_close(db);
  kv_env_free(env);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(setting),
      cmocka_unit_test(same_answers),
      cmocka_unit_test(stops_early),
      cmocka_unit_test(prepared_runs),
      cmocka_unit_test(transaction_writes),
      cmocka_unit_test(salted_in_regions),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
