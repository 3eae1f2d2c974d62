/*
** bench/bench_parallel.c: `rowan_bench --parallel`, issue 23's figures, Rowan alone: the
** sensor table twice on one data set (the archive or a scaled copy), once as it is and once
** salted (SALT_BUCKETS = 4: a leading hash byte, rows merged back in key order), each loaded
** through the bulk API from the same files (the rows come in key order, increasing within
** each station: the load Phoenix salts for) and compacted; then the filtered full scan
** (COUNT(*) WHERE TEMP > 30) and the daily average of one month, with the connection's scan
** threads at 1, 2 and 4 (rowan_set_scan_threads), every configuration once per round, the
** rounds repeated; each figure the median of the rounds with its min-max spread, and its
** speed-up over the same table with one thread. Every answer is checked equal to the
** unsalted table's with one thread before a figure is printed.
**
** What it does not: compare with other engines (bench_main.c does that), assert timings.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_run.h"
#include "rowan.h"

enum { N_KINDS = 2, N_THREADS = 3, N_QUERIES = 2, MAX_RUNS = 64 };
static const int thread_counts[N_THREADS] = {1, 2, 4};
static const char *const kind_names[N_KINDS] = {"unsalted", "SALT_BUCKETS=4"};
static const char *const query_names[N_QUERIES] = {"filtered full scan (TEMP > 30)",
                                                   "daily avg per station, 1 month"};

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static double median(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, cmp_double);
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int bench_parallel(const config *c, int copies) {
  int R = c->runs < 1 ? 1 : c->runs > MAX_RUNS ? MAX_RUNS : c->runs;
  bench_input in;
  if (bench_input_prepare(c->data_dir, c->work_dir, copies, &in) != 0) {
    fprintf(stderr, "bench: cannot prepare the input of %d copies\n", copies);
    return -1;
  }
  void *h[N_KINDS] = {NULL, NULL};
  double load_rate[N_KINDS];
  for (int k = 0; k < N_KINDS; k++) {
    char dir[1024];
    snprintf(dir, sizeof dir, "%s/parallel-%d-%s", c->work_dir, copies, k ? "salted" : "plain");
    bench_rmtree(dir);
    void *w = NULL;
    int unsupported = 0;
    int rc = k ? bench_rowan_create_salted(&w, dir, 4) : bench_rowan.create(&w, dir, 0, &unsupported);
    double t0 = bench_now_s();
    if (rc == 0) rc = bench_rowan_bulk_load(w, &in);
    double dt = bench_now_s() - t0;
    uint64_t bytes = 0;
    if (rc == 0) rc = bench_rowan.finish(w, dir, &bytes);
    else bench_rowan.close(w);
    if (rc != 0 || bench_rowan.open(&h[k], dir) != 0) {
      fprintf(stderr, "bench: --parallel: the %s table did not load or open\n", kind_names[k]);
      bench_input_free(&in);
      return -1;
    }
    load_rate[k] = (double)in.rows / dt;
    fprintf(stderr, "== %s: bulk load %.2f s (%.0f rows/s), %llu bytes after compaction\n",
            kind_names[k], dt, load_rate[k], (unsigned long long)bytes);
  }
  int64_t from = bench_ms_of(2016, 7, 1, 0), to = bench_ms_of(2016, 8, 1, 0);
  static double t[N_QUERIES][N_KINDS][N_THREADS][MAX_RUNS];
  int64_t want_count = -1;
  bench_digest want_daily = {0};
  for (int r = 0; r < R; r++) {
    for (int ti = 0; ti < N_THREADS; ti++) {
      for (int k = 0; k < N_KINDS; k++) {
        if (bench_rowan_set_threads(h[k], thread_counts[ti]) != 0) bench_die("rowan_set_scan_threads");
        int64_t n = 0;
        double t0 = bench_now_s();
        if (bench_rowan.count_temp_gt(h[k], 30.0, &n) != 0) bench_die("the filtered count failed");
        t[0][k][ti][r] = bench_now_s() - t0;
        bench_digest d = {0};
        t0 = bench_now_s();
        if (bench_rowan.daily_avg(h[k], from, to, &d) != 0) bench_die("the daily average failed");
        t[1][k][ti][r] = bench_now_s() - t0;
        if (want_count < 0) {
          want_count = n;
          want_daily = d;
        } else if (n != want_count || !bench_digest_equal(&d, &want_daily)) {
          fprintf(stderr, "bench: --parallel: %s with %d threads: %lld rows over 30 (want"
                  " %lld), %lld daily rows (want %lld)\n", kind_names[k], thread_counts[ti],
                  (long long)n, (long long)want_count, (long long)d.rows,
                  (long long)want_daily.rows);
          bench_die("answers differ between configurations");
        }
      }
    }
  }
  printf("\nparallel scans (issue 23), Rowan alone, %d copies (%lld rows), %d rounds, %d"
         " online processors; medians [min-max] in ms, speed-up over 1 thread\n", copies,
         (long long)in.rows, R, bench_rowan_processors());
  printf("%-34s %-16s %8s %24s %8s\n", "figure", "table", "threads", "ms", "speed-up");
  for (int q = 0; q < N_QUERIES; q++) {
    for (int k = 0; k < N_KINDS; k++) {
      double base = 0;
      for (int ti = 0; ti < N_THREADS; ti++) {
        double v[MAX_RUNS];
        for (int r = 0; r < R; r++) v[r] = t[q][k][ti][r] * 1e3;
        double med = median(v, R); /* sorted now: v[0] min, v[R-1] max */
        if (ti == 0) base = med;
        printf("%-34s %-16s %8d %12.2f [%.2f-%.2f] %8.2f\n", query_names[q], kind_names[k],
               thread_counts[ti], med, v[0], v[R - 1], base / med);
        if (c->csv_path) {
          FILE *f = fopen(c->csv_path, "a");
          if (f) {
            fprintf(f, "parallel%d,%lld,\"%s, %s, %d threads\",ms,Rowan,%.6f,%.6f,%.6f,%d,0\n",
                    copies, (long long)in.rows, query_names[q], kind_names[k], thread_counts[ti],
                    med, v[0], v[R - 1], R);
            fclose(f);
          }
        }
      }
    }
  }
  printf("%-34s %-16s %8s %24.0f\n", "bulk load (rows/s)", kind_names[0], "-", load_rate[0]);
  printf("%-34s %-16s %8s %24.0f  (%.2fx the unsalted load)\n", "bulk load (rows/s)",
         kind_names[1], "-", load_rate[1], load_rate[1] / load_rate[0]);
  printf("agreement: %lld rows with TEMP > 30 and %lld daily groups of 2016-07 in every"
         " configuration\n", (long long)want_count, (long long)want_daily.rows);
  for (int k = 0; k < N_KINDS; k++) bench_rowan.close(h[k]);
  bench_input_free(&in);
  return 0;
}
