/*
** tests/hbase/test_hbase_count.c: filtered counts on HBase read in parallel chunks cut at the
** table's heads (backend_hbase_stats.c probe_heads: the values of a leading text key column,
** found by one-row probes, cut a table of fewer regions than chunks wanted), against the
** local store (CTest label `hbase`; the gateway from ROWAN_HBASE_THRIFT, default
** 127.0.0.1:9090; fails, never skips, without a gateway). Each test uses its own namespace
** and drops it at the end.
** - a table of eight stations in two regions, scanned on 2 threads from 1 row on: the plan
**   has more chunks than regions, no chunk holds more than a third of the rows, EXPLAIN
**   shows those chunks and no columnar aggregate (the local store's plan has it), and counts
**   and sums under server filters (>, >=, <, negative values, NULLs, AND, OR, NOT, a key
**   range) equal the local store's and the count the test computes from its own rows;
** - where heads do not help, the regions alone cut: a BIGINT key (no text head), more than
**   64 distinct leading values (too many probes), and the answers still equal.
** Not here: the statistics' guideposts (test_hbase_stats.c), the bench (bench/hbase/).
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "kv/backend/hbase/backend_hbase.h"
#include "kv/backend/hbase/hb_client.h"
#include "rowan.h"
#include "tu_hbase_sql.h"

static char gateway[300] = "127.0.0.1:9090";


/* The chunks of the plan's first line "CLIENT N-CHUNK PARALLEL ..." (1 for a serial plan). */
static int chunks(rowan_db *db, const char *sql) {
  char q[600];
  snprintf(q, sizeof q, "EXPLAIN %s", sql);
  char *plan = answer(db, q);
  int n = 1;
  const char *p = strstr(plan, "-CHUNK PARALLEL");
  if (p) {
    while (p > plan && p[-1] >= '0' && p[-1] <= '9') p--;
    n = atoi(p);
  }
  free(plan);
  return n;
}

/* The largest of EXPLAIN ANALYZE's rows per chunk ("actual rows per chunk=[a, b, ...]"), or
** -1 when the plan does not list them. */
static long max_chunk_rows(rowan_db *db, const char *sql) {
  char q[600];
  snprintf(q, sizeof q, "EXPLAIN ANALYZE %s", sql);
  char *plan = answer(db, q);
  const char *p = strstr(plan, "rows per chunk=[");
  long best = -1;
  if (p) {
    p += strlen("rows per chunk=[");
    while (*p && *p != ']') {
      char *e = NULL;
      long v = strtol(p, &e, 10);
      if (e == p) {
        p++;
        continue;
      }
      if (v > best) best = v;
      p = e;
    }
  }
  free(plan);
  return best;
}

/* The HBase scanners a run of sql opens (one per chunk), counted on its second run: the
** first collects the statistics and probes the heads. */
static long scanners(rowan_db *db, const char *sql) {
  free(answer(db, sql));
  uint64_t before = hb_scan_opens();
  free(answer(db, sql));
  return (long)(hb_scan_opens() - before);
}

static int64_t one_int(rowan_db *db, const char *sql) {
  rowan_stmt *st = NULL;
  if (rowan_prepare(db, sql, -1, &st, NULL) != ROWAN_OK) fail_msg("%s: %s", sql, rowan_errmsg(db));
  assert_int_equal(rowan_step(st), ROWAN_ROW);
  int64_t v = rowan_column_int64(st, 0);
  rowan_finalize(st);
  return v;
}

static void open_both(const char *what, char *uri, size_t n, rowan_db **h, rowan_db **l) {
  snprintf(uri, n, "hbase://%s/thc_%s_%ld", gateway, what, (long)getpid());
  if (rowan_open(uri, NULL, h) != ROWAN_OK) fail_msg("rowan_open(%s): %s", uri, rowan_errmsg(*h));
  if (rowan_open(":memory:", NULL, l) != ROWAN_OK) fail_msg("local: %s", rowan_errmsg(*l));
  /* 2 threads, parallel from 1 row on (the planner's estimate decides nothing here) */
  assert_int_equal(rowan_set_scan_threads(*h, 2, 1), ROWAN_OK);
  assert_int_equal(rowan_set_scan_threads(*l, 2, 1), ROWAN_OK);
}

static void close_both(const char *uri, rowan_db *h, rowan_db *l) {
  rowan_close(h);
  rowan_close(l);
  assert_int_equal(kv_backend_hbase_drop_namespace(uri), KV_OK);
}

#define STATIONS 8
#define HOURS 300

/* TEMP of station s at hour t: NULL (returns 0) every 11th, else *v in -20.5 .. 59.5. */
static int temp_of(int s, int t, double *v) {
  int i = s * HOURS + t;
  if (i % 11 == 0) return 0;
  *v = (double)((i * 37) % 81) - 20.5;
  return 1;
}

static void test_count_heads(void **state) {
  (void)state;
  static const char *const names[STATIONS] = {"Alpha", "Bravo", "Charlie", "Delta",
                                             "Echo",  "Foxtrot", "Golf", "Hotel"};
  char uri[400], sql[300];
  rowan_db *h = NULL, *l = NULL;
  open_both("heads", uri, sizeof uri, &h, &l);
  exec_both(h, l, "CREATE TABLE M (STATION VARCHAR NOT NULL, TS BIGINT NOT NULL, TEMP DOUBLE, "
                  "PM DOUBLE, CONSTRAINT PK PRIMARY KEY (STATION, TS)) SPLIT ON ('Delta')");
  exec_both(h, l, "BEGIN");
  int over30 = 0;
  for (int s = 0; s < STATIONS; s++) {
    for (int t = 0; t < HOURS; t++) {
      double v = 0;
      char temp[32] = "NULL", pm[32] = "NULL";
      if (temp_of(s, t, &v)) snprintf(temp, sizeof temp, "%.1f", v);
      over30 += temp_of(s, t, &v) && v > 30;
      if (t % 5) snprintf(pm, sizeof pm, "%d", (s * 13 + t * 7) % 120);
      snprintf(sql, sizeof sql, "UPSERT INTO M VALUES ('%s', %d, %s, %s)", names[s], t, temp, pm);
      exec_both(h, l, sql);
    }
  }
  exec_both(h, l, "COMMIT");
  const char *count = "SELECT COUNT(*) FROM M WHERE TEMP > 30";
  /* more chunks than the two regions (one scanner each), none holding more than a third of
     the rows; EXPLAIN names the chunks */
  long sc = scanners(h, count);
  if (sc < 4) fail_msg("%s on HBase: %ld scanners (two regions, eight heads)", count, sc);
  int n = chunks(h, "SELECT COUNT(*) FROM M WHERE TEMP > 30 OR PM IS NULL");
  if (n != sc) fail_msg("the OR count: %d chunks, the count %ld scanners", n, sc);
  /* the count itself: the local store plans the columnar aggregate; HBase cannot run it, and
     its EXPLAIN shows the chunks that run, not the columnar aggregate */
  n = chunks(h, count);
  if (n != sc) fail_msg("%s: EXPLAIN says %d chunks, the count ran %ld scanners", count, n, sc);
  snprintf(sql, sizeof sql, "EXPLAIN %s", count);
  char *hp = answer(h, sql), *lp = answer(l, sql);
  if (strstr(hp, "COLUMNAR") || !strstr(lp, "SERVER COLUMNAR AGGREGATE"))
    fail_msg("EXPLAIN %s\non HBase:\n%s\nlocal:\n%s", count, hp, lp);
  free(hp);
  free(lp);
  long most = max_chunk_rows(h, "SELECT COUNT(*) FROM M");
  if (most < 0 || most > STATIONS * HOURS / 3)
    fail_msg("the largest chunk holds %ld of %d rows", most, STATIONS * HOURS);
  assert_true(over30 > 0);
  assert_int_equal(one_int(h, count), over30);
  const char *queries[] = {
      "SELECT COUNT(*) FROM M WHERE TEMP > 30",
      "SELECT COUNT(*) FROM M WHERE TEMP >= 30",
      "SELECT COUNT(*) FROM M WHERE TEMP < -5.5",
      "SELECT COUNT(*), SUM(TEMP) FROM M WHERE TEMP > -10 AND PM < 50",
      "SELECT COUNT(*) FROM M WHERE TEMP > 30 OR PM IS NULL",
      "SELECT COUNT(*) FROM M WHERE NOT (TEMP > 30)",
      "SELECT COUNT(*) FROM M WHERE STATION >= 'Charlie' AND STATION < 'Golf' AND TEMP < 0",
      "SELECT COUNT(*), COUNT(TEMP), MIN(TEMP), MAX(TEMP) FROM M",
      "SELECT STATION, COUNT(*) FROM M WHERE TEMP > 30 GROUP BY STATION ORDER BY STATION",
  };
  for (size_t q = 0; q < sizeof queries / sizeof *queries; q++) same_answer(h, l, queries[q]);
  close_both(uri, h, l);
}

static void test_count_regions_only(void **state) {
  (void)state;
  char uri[400], sql[300];
  rowan_db *h = NULL, *l = NULL;
  open_both("regions", uri, sizeof uri, &h, &l);
  /* a BIGINT key: no text head, so the three regions alone */
  exec_both(h, l, "CREATE TABLE B (K BIGINT PRIMARY KEY, V DOUBLE) SPLIT ON (100, 200)");
  /* 70 distinct leading values: more heads than probed, so the two regions alone */
  exec_both(h, l, "CREATE TABLE W (NAME VARCHAR NOT NULL, N INTEGER NOT NULL, V DOUBLE, "
                  "CONSTRAINT PK PRIMARY KEY (NAME, N)) SPLIT ON ('n35')");
  exec_both(h, l, "BEGIN");
  for (int i = 0; i < 300; i++) {
    snprintf(sql, sizeof sql, "UPSERT INTO B VALUES (%d, %d.25)", i, (i * 17) % 50);
    exec_both(h, l, sql);
  }
  for (int i = 0; i < 70; i++)
    for (int k = 0; k < 3; k++) {
      snprintf(sql, sizeof sql, "UPSERT INTO W VALUES ('n%02d', %d, %d.5)", i, k, (i + k) % 9);
      exec_both(h, l, sql);
    }
  exec_both(h, l, "COMMIT");
  long n = scanners(h, "SELECT COUNT(*) FROM B WHERE V > 30");
  if (n != 3) fail_msg("BIGINT key in three regions: %ld scanners", n);
  n = scanners(h, "SELECT COUNT(*) FROM W WHERE V > 4");
  if (n != 2) fail_msg("70 heads in two regions: %ld scanners", n);
  same_answer(h, l, "SELECT COUNT(*), SUM(V) FROM B WHERE V > 30");
  same_answer(h, l, "SELECT COUNT(*), SUM(V) FROM W WHERE V > 4");
  same_answer(h, l, "SELECT COUNT(*) FROM W WHERE NAME > 'n50' AND V <= 2");
  close_both(uri, h, l);
}

int main(void) {
  const char *g = getenv("ROWAN_HBASE_THRIFT");
  if (g && *g) snprintf(gateway, sizeof gateway, "%s", g);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_count_heads),
      cmocka_unit_test(test_count_regions_only),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
