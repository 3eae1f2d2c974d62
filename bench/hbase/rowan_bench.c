/*
** bench/hbase/rowan_bench.c: Rowan's side of the reads of the Rowan-vs-Phoenix figures on one
** HBase (bench/hbase/run.sh builds and runs it; by hand, not in CI), over the public C API
** (include/rowan.h) on an hbase:// URI:
**
**   rowan_bench URI LOOKUPS RANGES SEED
**
** point lookups, latest 100, one station-day, the filtered count, the daily average of July
** 2016 and the join with STATIONS: the same SQL text as bench/hbase/PhoenixBench.java, the
** same keys from the same seed and generator, every column of every row read. Each figure
** is one line on stdout: FIGURE,VALUE,UNIT,CHECK (VALUE a median within this run; CHECK
** "rows:rounded sum of the numeric columns", which the Phoenix side must give alike).
** It does not load the tables (run.sh does that with the shell's .import) nor compare.
*/
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <math.h>

#include "rowan.h"

static const char *const STATIONS[12] = {"Aotizhongxin", "Changping", "Dingling", "Dongsi",
                                         "Guanyuan", "Gucheng", "Huairou", "Nongzhanguan",
                                         "Shunyi", "Tiantan", "Wanliu", "Wanshouxigong"};
#define FIRST_HOUR_MS 1362096000000LL /* 2013-03-01 00:00 */
#define HOURS 35064

static uint64_t rng;

/* The same generator as PhoenixBench.java: 64-bit LCG, the high 31 bits. */
static int next_int(int n) {
  rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
  return (int)((rng >> 33) % (uint64_t)n);
}

static double now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static int cmp_d(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double median(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, cmp_d);
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static void die(rowan_db *db, const char *what) {
  fprintf(stderr, "rowan_bench: %s: %s\n", what, rowan_errmsg(db));
  exit(1);
}

static rowan_stmt *prep(rowan_db *db, const char *sql) {
  rowan_stmt *st = NULL;
  if (rowan_prepare(db, sql, -1, &st, NULL) != ROWAN_OK || !st) die(db, sql);
  return st;
}

/* Run st to the end reading every column; returns its rows, adds the numeric columns. */
static long drain(rowan_db *db, rowan_stmt *st, double *sum) {
  long n = 0;
  int rc, nc = rowan_column_count(st);
  while ((rc = rowan_step(st)) == ROWAN_ROW) {
    n++;
    for (int i = 0; i < nc; i++) {
      int t = rowan_column_type(st, i);
      if (t == ROWAN_INTEGER) *sum += (double)rowan_column_int64(st, i);
      else if (t == ROWAN_FLOAT) *sum += rowan_column_double(st, i);
      else if (t == ROWAN_TEXT) (void)rowan_column_text(st, i);
    }
  }
  if (rc != ROWAN_DONE) die(db, "step");
  rowan_reset(st);
  return n;
}

static void out(const char *fig, double v, const char *unit, long rows, double sum) {
  printf("%s,%.1f,%s,%ld:%.0f\n", fig, v, unit, rows, round(sum));
  fflush(stdout);
}

/* A whole query run reps times (two timestamp parameters when hi > 0): ms, median. */
static void whole(rowan_db *db, const char *fig, const char *sql, int reps, int64_t lo,
                  int64_t hi) {
  rowan_stmt *st = prep(db, sql);
  double t[16];
  long rows = 0;
  double sum = 0;
  for (int i = 0; i < reps; i++) {
    if (hi > 0) {
      rowan_bind_timestamp(st, 1, lo);
      rowan_bind_timestamp(st, 2, hi);
    }
    sum = 0;
    double t0 = now_us();
    rows = drain(db, st, &sum);
    t[i] = (now_us() - t0) / 1e3;
  }
  rowan_finalize(st);
  out(fig, median(t, reps), "ms", rows, sum);
}

int main(int argc, char **argv) {
  if (argc != 5) {
    fprintf(stderr, "usage: rowan_bench URI LOOKUPS RANGES SEED\n");
    return 2;
  }
  int lookups = atoi(argv[2]), ranges = atoi(argv[3]);
  rng = strtoull(argv[4], NULL, 10);
  rowan_db *db = NULL;
  if (rowan_open(argv[1], NULL, &db) != ROWAN_OK) die(db, argv[1]);
  int nmax = lookups > ranges ? lookups : ranges;
  double *t = malloc((size_t)(nmax > 0 ? nmax : 1) * sizeof *t);
  double sum = 0;
  long rows = 0;
  rowan_stmt *st = prep(db, "SELECT * FROM SENSOR WHERE STATION = ? AND TS = ?");
  for (int i = 0; i < lookups; i++) {
    rowan_bind_text(st, 1, STATIONS[next_int(12)], -1);
    rowan_bind_timestamp(st, 2, FIRST_HOUR_MS + 3600000LL * next_int(HOURS));
    double t0 = now_us();
    rows += drain(db, st, &sum);
    t[i] = now_us() - t0;
  }
  rowan_finalize(st);
  out("lookup_p50", median(t, lookups), "us", rows, sum);
  rows = 0, sum = 0;
  st = prep(db, "SELECT * FROM SENSOR WHERE STATION = ? ORDER BY TS DESC LIMIT 100");
  for (int i = 0; i < ranges; i++) {
    rowan_bind_text(st, 1, STATIONS[next_int(12)], -1);
    double t0 = now_us();
    rows += drain(db, st, &sum);
    t[i] = now_us() - t0;
  }
  rowan_finalize(st);
  out("latest100_p50", median(t, ranges), "us", rows, sum);
  rows = 0, sum = 0;
  st = prep(db, "SELECT * FROM SENSOR WHERE STATION = ? AND TS >= ? AND TS < ?");
  for (int i = 0; i < ranges; i++) {
    rowan_bind_text(st, 1, STATIONS[next_int(12)], -1);
    int64_t day = FIRST_HOUR_MS + 86400000LL * next_int(HOURS / 24);
    rowan_bind_timestamp(st, 2, day);
    rowan_bind_timestamp(st, 3, day + 86400000LL);
    double t0 = now_us();
    rows += drain(db, st, &sum);
    t[i] = now_us() - t0;
  }
  rowan_finalize(st);
  out("day_p50", median(t, ranges), "us", rows, sum);
  whole(db, "filtered_count", "SELECT COUNT(*) FROM SENSOR WHERE TEMP > 30", 3, 0, 0);
  whole(db, "daily_avg_month",
        "SELECT STATION, TRUNC(TS, 'DAY'), AVG(TEMP) FROM SENSOR"
        " WHERE TS >= ? AND TS < ? GROUP BY STATION, TRUNC(TS, 'DAY')",
        1, 1467331200000LL, 1470009600000LL); /* July 2016 */
  whole(db, "join_month",
        "SELECT S.STATION, COUNT(*), AVG(R.PM25) FROM SENSOR R JOIN STATIONS S"
        " ON R.STATION = S.STATION WHERE S.TYPE = '城区' AND R.TS >= ? AND R.TS < ?"
        " GROUP BY S.STATION ORDER BY S.STATION",
        5, 1451606400000LL, 1454284800000LL); /* January 2016 */
  free(t);
  rowan_close(db);
  return 0;
}
