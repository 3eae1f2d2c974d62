/*
** bench/bench_main.c: rowan_bench, the side-by-side benchmark of Rowan, SQLite and RocksDB
** on the sensor archive (issue 8; how to run it and what each figure means: bench/README.md).
**
** For each data set (the archive as bundled, then a scaled copy: the archive repeated with
** renamed stations) it loads every engine `runs` times into a fresh directory (timed: parse
** and insert until the last commit returns), then with a secondary index on TEMP (Rowan and
** SQLite; Rowan through its bulk-load API, and also through UPSERTs as a figure of its own),
** measures the size after compaction, checks that the engines agree (row count,
** TEMP > 30, TEMP NULL against the archive's known figures, and the digest of every query
** result against the other engines), then times the reads `runs` times, and prints each
** figure for the three engines with Rowan's ratios and the targets of the issue. Any
** disagreement aborts before a figure is printed.
**
** What it does not: assert timings (run by hand, never by CTest), or tune the engines
** beyond what bench_rowan.c, bench_sqlite.c and bench_rocks.c say in their headers.
*/
#include "bench.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <sqlite3.h>

#include "rowan.h"

#define N_ENG 3
static const bench_engine *const engines[N_ENG] = {&bench_rowan, &bench_sqlite, &bench_rocks};

/* The archive's known answers (data/beijing/, see data/README.md). */
#define ARCHIVE_ROWS 420768
#define ARCHIVE_TEMP_GT_30 25587
#define ARCHIVE_TEMP_NULL 398

typedef struct config {
  const char *data_dir;            /* data/beijing */
  const char *work_dir;            /* where inputs and databases go */
  int runs;                        /* repetitions of every measurement (median taken) */
  int scaled_copies;               /* archive copies in the scaled data set; 0 = skip it */
  int batch_rows;                  /* rows per commit in every load */
  int lookups;                     /* point lookups per run */
  int ranges;                      /* range queries (latest 100, one day) per run */
  uint64_t seed;                   /* PRNG seed of the query keys */
  const char *profile;             /* NULL, or one Rowan operation to run alone (perf) */
} config;

/* ---- small helpers ----------------------------------------------------------------- */

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* CPU seconds of the process so far, every thread (for the progress lines: on a busy
** machine the CPU a load costs says more than its wall time). */
static double cpu_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* CPU seconds of the calling thread so far (a pipelined load's other threads apart). */
static double thread_cpu_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

size_t bench_cache_bytes = (size_t)64 << 20;
unsigned bench_block_size = 0; /* --blocksize: Rowan readings family BLOCKSIZE, 0 = the family default (64 KiB) */

static uint64_t rng_state;
static uint64_t rng_next(void) { /* xorshift64* */
  rng_state ^= rng_state >> 12;
  rng_state ^= rng_state << 25;
  rng_state ^= rng_state >> 27;
  return rng_state * UINT64_C(2685821657736338717);
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double median(double *v, int n) {
  if (n <= 0) return NAN;
  for (int i = 0; i < n; i++) if (isnan(v[i])) return NAN;
  qsort(v, (size_t)n, sizeof *v, cmp_double);
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* p-th percentile (0..100) of v[0..n) (sorts v). */
static double percentile(double *v, int n, double p) {
  qsort(v, (size_t)n, sizeof *v, cmp_double);
  int i = (int)((double)(n - 1) * p / 100.0 + 0.5);
  return v[i];
}

static void die(const char *msg) {
  fprintf(stderr, "bench: ABORT: %s\n", msg);
  exit(2);
}

/* ---- figures ----------------------------------------------------------------------- */

typedef struct figure {
  char name[64];                   /* what is measured */
  const char *unit;                /* "rows/s", "us", "B/reading", ... */
  int higher_better;               /* 1: throughput-like, 0: latency/size-like */
  double v[N_ENG];                 /* per engine; NAN = not measured */
  const char *na[N_ENG];           /* why a value is NAN (printed instead), or NULL */
} figure;

#define MAX_FIG 24
typedef struct results {
  figure fig[MAX_FIG];             /* the figures in print order */
  int n;                           /* entries used */
  char extra[2048];                /* agreement facts printed under the table */
} results;

static figure *add_fig(results *R, const char *name, const char *unit, int higher) {
  figure *f = &R->fig[R->n++];
  memset(f, 0, sizeof *f);
  snprintf(f->name, sizeof f->name, "%s", name);
  f->unit = unit;
  f->higher_better = higher;
  for (int e = 0; e < N_ENG; e++) f->v[e] = NAN;
  return f;
}

static figure *find_fig(results *R, const char *name) {
  for (int i = 0; i < R->n; i++) if (!strcmp(R->fig[i].name, name)) return &R->fig[i];
  return NULL;
}

static void fmt_val(char *buf, size_t cap, double v, const char *na) {
  if (isnan(v)) snprintf(buf, cap, "%s", na ? na : "-");
  else if (v >= 100000) snprintf(buf, cap, "%.0f", v);
  else if (v >= 100) snprintf(buf, cap, "%.1f", v);
  else snprintf(buf, cap, "%.2f", v);
}

static void print_figures(const results *R) {
  printf("%-34s %-10s %14s %14s %14s %10s %10s\n", "figure", "unit", "Rowan", "SQLite",
         "RocksDB", "R/SQLite", "R/RocksDB");
  for (int i = 0; i < R->n; i++) {
    const figure *f = &R->fig[i];
    char v[N_ENG][64], r1[32], r2[32];
    for (int e = 0; e < N_ENG; e++) fmt_val(v[e], sizeof v[e], f->v[e], f->na[e]);
    fmt_val(r1, sizeof r1, f->v[0] / f->v[1], "-");
    fmt_val(r2, sizeof r2, f->v[0] / f->v[2], "-");
    printf("%-34s %-10s %14s %14s %14s %10s %10s\n", f->name, f->unit, v[0], v[1], v[2], r1, r2);
  }
}

/* One target line: value vs bound; ge: must be >= bound. */
static void target(const char *what, double value, int ge, double bound) {
  const char *st = isnan(value) ? "n/a" : ((ge ? value >= bound : value <= bound) ? "met" : "MISSED");
  char v[32];
  fmt_val(v, sizeof v, value, "n/a");
  printf("  %-52s %12s  (target %s %g)  %s\n", what, v, ge ? ">=" : "<=", bound, st);
}

static void print_targets(results *R) {
  figure *load = find_fig(R, "load, prepared writes"), *pl = find_fig(R, "point lookup p50");
  figure *r100 = find_fig(R, "latest 100 p50"), *scan = find_fig(R, "filtered full scan");
  figure *size = find_fig(R, "size on disk"), *idx = find_fig(R, "bulk load, index on TEMP");
  printf("targets (Rowan, same run):\n");
  figure *bulk = find_fig(R, "bulk load, Rowan bulk API");
  target("bulk load (Rowan bulk API), rows/s", bulk->v[0], 1, 1e6);
  target("bulk load (Rowan bulk API) vs SQLite's load", bulk->v[0] / load->v[1], 1, 3);
  target("point lookup p50 vs SQLite (exclusive locking)", pl->v[0] / pl->v[1], 0, 0.85);
  target("point lookup p50 vs RocksDB", pl->v[0] / pl->v[2], 0, 0.85);
  target("latest 100 rows p50 vs RocksDB", r100->v[0] / r100->v[2], 0, 0.6);
  target("filtered full scan vs SQLite", scan->v[0] / scan->v[1], 1, 3);
  target("size on disk vs SQLite", size->v[0] / size->v[1], 0, 0.3);
  target("load with index on TEMP vs without (bulk API)", idx->v[0] / bulk->v[0], 1, 0.6);
  figure *idx_up = find_fig(R, "UPSERT load, index on TEMP");
  printf("  (Rowan's UPSERT path: load with index vs without %.2f; SQLite: %.2f)\n",
         idx_up->v[0] / load->v[0], idx->v[1] / load->v[1]);
  printf("  (Rowan's prepared-write load, not the bulk path: %.2fx SQLite's, %.2fx RocksDB's)\n",
         load->v[0] / load->v[1], load->v[0] / load->v[2]);
}

/* ---- loads ------------------------------------------------------------------------- */

static void db_dir(char *buf, size_t cap, const config *c, const char *ds, const char *eng,
                   const char *what, int run) {
  snprintf(buf, cap, "%s/%s/%s-%s-%d", c->work_dir, ds, eng, what, run);
}

/* Load in into a fresh database of engine e (bulk: Rowan's bulk-load API instead of its
** load); returns rows/s, or NAN when the engine does not support the variant (index) with
** *na set; aborts on any other failure. If bytes is not NULL, finishes the database
** (flush, compaction) and stores its size. */
static double load_once(const config *c, const bench_engine *e, const bench_input *in,
                        const char *dir, int with_index, int bulk, uint64_t *bytes,
                        const char **na) {
  void *h = NULL;
  int unsupported = 0;
  if (bench_rmtree(dir) != 0) die("cannot clear a database directory");
  char parent[4096];
  snprintf(parent, sizeof parent, "%s", dir);
  char *slash = strrchr(parent, '/');
  if (slash) { *slash = 0; mkdir(parent, 0755); }
  if (e->create(&h, dir, with_index, &unsupported) != 0) {
    e->close(h);
    if (unsupported) { *na = e == &bench_rocks ? "no indexes" : "n/a (indexes not available)"; return NAN; }
    die("create failed");
  }
  double t0 = now_s(), c0 = cpu_s(), m0 = thread_cpu_s();
  if (bulk ? bench_rowan_bulk_load(h, in) : e->load(h, in, c->batch_rows)) die("load failed");
  double dt = now_s() - t0, dc = cpu_s() - c0, dm = thread_cpu_s() - m0;
  if (bytes) {
    double f0 = now_s();
    if (e->finish(h, dir, bytes) != 0) die("finish (flush, compaction, checkpoint) failed");
    fprintf(stderr, "  %-8s %s: load %.2f s, compaction/checkpoint %.2f s, %llu bytes\n",
            e->name, with_index ? "+index" : "      ", dt, now_s() - f0, (unsigned long long)*bytes);
  } else {
    fprintf(stderr, "  %-8s %s: load %.2f s (%.2f s of CPU, %.2f s on the loading thread)\n",
            e->name, with_index ? (bulk ? "+index, bulk API" : "+index") : "      ", dt, dc,
            dm);
    if (with_index) { /* the index must be complete, or the figure means nothing */
      int64_t n = -1;
      int64_t want = (int64_t)ARCHIVE_TEMP_GT_30 * (in->rows / ARCHIVE_ROWS);
      if (e->count_temp_gt_index(h, 30.0, &n) != 0 || n != want) {
        fprintf(stderr, "bench: %s: COUNT(*) WHERE TEMP > 30 through the index gave %lld,"
                " expected %lld: the index load is not reported\n", e->name, (long long)n,
                (long long)want);
        e->close(h);
        *na = "n/a (index incomplete)";
        return NAN;
      }
    }
    e->close(h);
  }
  return (double)in->rows / dt;
}

/* Rowan's bulk-load API into a fresh database; rows/s. Checks the loaded rows (count,
** TEMP > 30, TEMP NULL) before the figure counts, and aborts if they are wrong. */
static double bulk_once(const config *c, const bench_input *in, const char *dir) {
  void *h = NULL;
  int unsupported = 0;
  (void)c;
  if (bench_rmtree(dir) != 0) die("cannot clear a database directory");
  if (bench_rowan.create(&h, dir, 0, &unsupported) != 0) die("create failed");
  struct rusage ru0, ru1; /* peak RSS before (the input, read in memory) and after */
  getrusage(RUSAGE_SELF, &ru0);
  double t0 = now_s(), c0 = cpu_s(), m0 = thread_cpu_s();
  if (bench_rowan_bulk_load(h, in) != 0) die("Rowan bulk load failed");
  double dt = now_s() - t0, dc = cpu_s() - c0, dm = thread_cpu_s() - m0;
  getrusage(RUSAGE_SELF, &ru1);
  int64_t copies = in->rows / ARCHIVE_ROWS, all = -1, gt = -1, nul = -1;
  if (bench_rowan.count_all(h, &all) || bench_rowan.count_temp_gt(h, 30.0, &gt) ||
      bench_rowan.count_temp_null(h, &nul) || all != in->rows ||
      gt != ARCHIVE_TEMP_GT_30 * copies || nul != ARCHIVE_TEMP_NULL * copies) {
    fprintf(stderr, "bench: Rowan bulk: %lld rows, %lld with TEMP > 30, %lld NULL\n",
            (long long)all, (long long)gt, (long long)nul);
    die("the bulk-loaded table disagrees with the archive's known counts");
  }
  bench_rowan.close(h);
  bench_rmtree(dir);
  fprintf(stderr, "  %-8s  bulk: load %.2f s (%.2f s of CPU, %.2f s on the loading thread), "
          "%.0f rows/s, peak RSS %ld MiB before the load, %ld MiB after\n", "Rowan", dt, dc, dm,
          (double)in->rows / dt, ru0.ru_maxrss / 1024, ru1.ru_maxrss / 1024);
  return (double)in->rows / dt;
}

/* ---- reads ------------------------------------------------------------------------- */

typedef struct read_stats {
  double lookup_p50, lookup_p99;   /* us */
  double latest_p50, latest_p99;   /* us */
  double day_p50;                  /* us */
  double scan_rows_s;              /* rows/s of COUNT(*) WHERE TEMP > 30 */
  double daily_ms;                 /* ms of the daily average of a month */
  bench_digest dig[4];             /* lookup, latest, day, daily results (first run) */
} read_stats;

static void check(int rc, const bench_engine *e, const char *what) {
  if (rc != 0) {
    fprintf(stderr, "bench: %s: %s failed\n", e->name, what);
    die("a query failed");
  }
}

/* Run every read `runs` times on an open database; medians into *out. */
static void run_reads(const config *c, const bench_engine *e, void *h, const bench_input *in,
                      read_stats *out) {
  int R = c->runs;
  double *lp50 = calloc((size_t)R, sizeof(double)), *lp99 = calloc((size_t)R, sizeof(double));
  double *ap50 = calloc((size_t)R, sizeof(double)), *ap99 = calloc((size_t)R, sizeof(double));
  double *dp50 = calloc((size_t)R, sizeof(double)), *scan = calloc((size_t)R, sizeof(double));
  double *daily = calloc((size_t)R, sizeof(double));
  int nmax = c->lookups > c->ranges ? c->lookups : c->ranges;
  double *lat = calloc((size_t)nmax, sizeof(double));
  int64_t hours = (in->ts_max - in->ts_min) / 3600000 + 1, days = hours / 24;
  int64_t month_from = bench_ms_of(2016, 7, 1, 0), month_to = bench_ms_of(2016, 8, 1, 0);
  memset(out->dig, 0, sizeof out->dig);
  for (int r = 0; r < R; r++) {
    bench_digest d[4];
    memset(d, 0, sizeof d);
    rng_state = c->seed * 2 + 1; /* the same keys for every engine and run */
    for (int i = 0; i < c->lookups; i++) {
      const char *st = in->stations[rng_next() % (uint64_t)in->n_stations];
      int64_t ts = in->ts_min + (int64_t)(rng_next() % (uint64_t)hours) * 3600000;
      double t0 = now_s();
      check(e->lookup(h, st, ts, &d[0]), e, "point lookup");
      lat[i] = (now_s() - t0) * 1e6;
    }
    lp50[r] = percentile(lat, c->lookups, 50);
    lp99[r] = percentile(lat, c->lookups, 99);
    for (int i = 0; i < c->ranges; i++) {
      const char *st = in->stations[rng_next() % (uint64_t)in->n_stations];
      double t0 = now_s();
      check(e->latest(h, st, 100, &d[1]), e, "latest 100");
      lat[i] = (now_s() - t0) * 1e6;
    }
    ap50[r] = percentile(lat, c->ranges, 50);
    ap99[r] = percentile(lat, c->ranges, 99);
    for (int i = 0; i < c->ranges; i++) {
      const char *st = in->stations[rng_next() % (uint64_t)in->n_stations];
      int64_t from = in->ts_min + (int64_t)(rng_next() % (uint64_t)days) * 86400000;
      double t0 = now_s();
      check(e->range(h, st, from, from + 86400000, &d[2]), e, "one day");
      lat[i] = (now_s() - t0) * 1e6;
    }
    dp50[r] = percentile(lat, c->ranges, 50);
    int64_t n = 0;
    double t0 = now_s();
    check(e->count_temp_gt(h, 30.0, &n), e, "COUNT(*) WHERE TEMP > 30");
    scan[r] = (double)in->rows / (now_s() - t0);
    t0 = now_s();
    check(e->daily_avg(h, month_from, month_to, &d[3]), e, "daily average");
    daily[r] = (now_s() - t0) * 1e3;
    if (r == 0) memcpy(out->dig, d, sizeof d);
  }
  out->lookup_p50 = median(lp50, R);
  out->lookup_p99 = median(lp99, R);
  out->latest_p50 = median(ap50, R);
  out->latest_p99 = median(ap99, R);
  out->day_p50 = median(dp50, R);
  out->scan_rows_s = median(scan, R);
  out->daily_ms = median(daily, R);
  free(lp50); free(lp99); free(ap50); free(ap99); free(dp50); free(scan); free(daily); free(lat);
}

/* ---- one data set ------------------------------------------------------------------ */

static void run_dataset(const config *c, const char *ds, int copies) {
  bench_input in;
  char work[4096];
  snprintf(work, sizeof work, "%s/input-%s", c->work_dir, ds);
  fprintf(stderr, "== %s: preparing input (%d cop%s of the archive)\n", ds, copies,
          copies == 1 ? "y" : "ies");
  if (bench_input_prepare(c->data_dir, work, copies, &in) != 0) die("cannot prepare the input");
  if (in.rows != (int64_t)ARCHIVE_ROWS * copies) {
    fprintf(stderr, "bench: %lld rows in the input, expected %lld\n", (long long)in.rows,
            (long long)ARCHIVE_ROWS * copies);
    die("the input is not the bundled archive");
  }
  int R = c->runs;
  double *load = calloc((size_t)R * N_ENG, sizeof(double));
  double *load_idx = calloc((size_t)R * N_ENG, sizeof(double));
  double *load_idx_up = calloc((size_t)R, sizeof(double));
  const char *na_idx_up = NULL;
  double *size = calloc((size_t)R * N_ENG, sizeof(double));
  double *load_bulk = calloc((size_t)R, sizeof(double));
  const char *na_idx[N_ENG] = {NULL, NULL, NULL};
  char dir[4096];
  for (int r = 0; r < R; r++) {
    fprintf(stderr, "== %s: load run %d/%d\n", ds, r + 1, R);
    for (int e = 0; e < N_ENG; e++) {
      uint64_t bytes = 0;
      const char *na = NULL;
      db_dir(dir, sizeof dir, c, ds, engines[e]->name, "plain", r);
      load[r * N_ENG + e] = load_once(c, engines[e], &in, dir, 0, 0, &bytes, &na);
      size[r * N_ENG + e] = (double)bytes / ((double)in.rows * BENCH_READINGS);
      if (r != R - 1) bench_rmtree(dir); /* the last run's databases serve the reads */
      db_dir(dir, sizeof dir, c, ds, engines[e]->name, "index", r);
      /* Rowan: the index figure through the bulk API (the UPSERT path apart, below) */
      load_idx[r * N_ENG + e] = load_once(c, engines[e], &in, dir, 1,
                                          engines[e] == &bench_rowan, NULL, &na);
      if (na) na_idx[e] = na;
      bench_rmtree(dir);
      if (engines[e] == &bench_rowan) {
        na = NULL;
        db_dir(dir, sizeof dir, c, ds, "Rowan", "index-upsert", r);
        load_idx_up[r] = load_once(c, engines[e], &in, dir, 1, 0, NULL, &na);
        if (na) na_idx_up = na;
        bench_rmtree(dir);
      }
    }
    db_dir(dir, sizeof dir, c, ds, "Rowan", "bulk", r);
    load_bulk[r] = bulk_once(c, &in, dir);
  }
  /* agreement on the archive's known figures, then on every query result */
  read_stats rs[N_ENG];
  for (int e = 0; e < N_ENG; e++) {
    void *h = NULL;
    db_dir(dir, sizeof dir, c, ds, engines[e]->name, "plain", R - 1);
    fprintf(stderr, "== %s: reads, %s\n", ds, engines[e]->name);
    if (engines[e]->open(&h, dir) != 0) die("cannot reopen a database");
    int64_t all = -1, gt = -1, nul = -1;
    check(engines[e]->count_all(h, &all), engines[e], "COUNT(*)");
    check(engines[e]->count_temp_gt(h, 30.0, &gt), engines[e], "COUNT(*) WHERE TEMP > 30");
    check(engines[e]->count_temp_null(h, &nul), engines[e], "COUNT(*) WHERE TEMP IS NULL");
    if (all != (int64_t)ARCHIVE_ROWS * copies || gt != (int64_t)ARCHIVE_TEMP_GT_30 * copies ||
        nul != (int64_t)ARCHIVE_TEMP_NULL * copies) {
      fprintf(stderr, "bench: %s: %lld rows, %lld with TEMP > 30, %lld with TEMP NULL;"
              " expected %lld, %lld, %lld\n", engines[e]->name, (long long)all, (long long)gt,
              (long long)nul, (long long)ARCHIVE_ROWS * copies,
              (long long)ARCHIVE_TEMP_GT_30 * copies, (long long)ARCHIVE_TEMP_NULL * copies);
      die("an engine disagrees with the archive's known counts");
    }
    run_reads(c, engines[e], h, &in, &rs[e]);
    engines[e]->close(h);
  }
  static const char *const dname[4] = {"point lookups", "latest 100", "one day", "daily average"};
  int64_t expect_rows[4] = {c->lookups, (int64_t)c->ranges * 100, (int64_t)c->ranges * 24,
                            (int64_t)31 * in.n_stations};
  for (int q = 0; q < 4; q++) {
    for (int e = 0; e < N_ENG; e++) {
      if (!bench_digest_equal(&rs[e].dig[q], &rs[0].dig[q]) ||
          rs[e].dig[q].rows != expect_rows[q]) {
        fprintf(stderr, "bench: %s: %s returned %lld rows (sum %.17g); Rowan %lld (sum %.17g);"
                " expected %lld rows\n", engines[e]->name, dname[q],
                (long long)rs[e].dig[q].rows, rs[e].dig[q].sum, (long long)rs[0].dig[q].rows,
                rs[0].dig[q].sum, (long long)expect_rows[q]);
        die("the engines disagree on a query result");
      }
    }
  }
  /* every check passed: the figures */
  results *Rs = calloc(1, sizeof *Rs);
  figure *f;
  double tmp[64];
  f = add_fig(Rs, "load, prepared writes", "rows/s", 1);
  for (int e = 0; e < N_ENG; e++) { for (int r = 0; r < R; r++) tmp[r] = load[r * N_ENG + e]; f->v[e] = median(tmp, R); }
  f = add_fig(Rs, "bulk load, Rowan bulk API", "rows/s", 1);
  for (int r = 0; r < R; r++) tmp[r] = load_bulk[r];
  f->v[0] = median(tmp, R);
  f->na[1] = f->na[2] = "-";
  f = add_fig(Rs, "bulk load, index on TEMP", "rows/s", 1);
  for (int e = 0; e < N_ENG; e++) {
    for (int r = 0; r < R; r++) tmp[r] = load_idx[r * N_ENG + e];
    f->v[e] = median(tmp, R);
    f->na[e] = na_idx[e];
  }
  f = add_fig(Rs, "UPSERT load, index on TEMP", "rows/s", 1);
  for (int r = 0; r < R; r++) tmp[r] = load_idx_up[r];
  f->v[0] = median(tmp, R);
  f->na[0] = na_idx_up;
  f->na[1] = f->na[2] = "-";
  f = add_fig(Rs, "point lookup p50", "us", 0);
  for (int e = 0; e < N_ENG; e++) f->v[e] = rs[e].lookup_p50;
  f = add_fig(Rs, "point lookup p99", "us", 0);
  for (int e = 0; e < N_ENG; e++) f->v[e] = rs[e].lookup_p99;
  f = add_fig(Rs, "latest 100 p50", "us", 0);
  for (int e = 0; e < N_ENG; e++) f->v[e] = rs[e].latest_p50;
  f = add_fig(Rs, "latest 100 p99", "us", 0);
  for (int e = 0; e < N_ENG; e++) f->v[e] = rs[e].latest_p99;
  f = add_fig(Rs, "one day (24 rows) p50", "us", 0);
  for (int e = 0; e < N_ENG; e++) f->v[e] = rs[e].day_p50;
  f = add_fig(Rs, "filtered full scan", "rows/s", 1);
  for (int e = 0; e < N_ENG; e++) f->v[e] = rs[e].scan_rows_s;
  f = add_fig(Rs, "daily avg per station, 1 month", "ms", 0);
  for (int e = 0; e < N_ENG; e++) f->v[e] = rs[e].daily_ms;
  f = add_fig(Rs, "size on disk", "B/reading", 0);
  for (int e = 0; e < N_ENG; e++) { for (int r = 0; r < R; r++) tmp[r] = size[r * N_ENG + e]; f->v[e] = median(tmp, R); }

  printf("\n### %s: %lld rows, %d stations (medians of %d runs)\n\n", ds, (long long)in.rows,
         in.n_stations, R);
  print_figures(Rs);
  printf("\nagreement: %lld rows, %lld with TEMP > 30, %lld with TEMP NULL in every engine;"
         " %d point lookups, %d latest-100 and %d one-day queries and the daily averages of"
         " 2016-07 (%lld groups) returned the same rows and values in every engine\n",
         (long long)in.rows, (long long)ARCHIVE_TEMP_GT_30 * copies,
         (long long)ARCHIVE_TEMP_NULL * copies, c->lookups, c->ranges, c->ranges,
         (long long)expect_rows[3]);
  print_targets(Rs);
  fflush(stdout);
  for (int e = 0; e < N_ENG; e++) {
    db_dir(dir, sizeof dir, c, ds, engines[e]->name, "plain", R - 1);
    bench_rmtree(dir);
  }
  free(Rs); free(load); free(load_idx); free(load_idx_up); free(size); free(load_bulk);
  bench_input_free(&in);
}

/* ---- profiling ------------------------------------------------------------------- */

/* --profile OP: Rowan alone, on the archive, one operation (load, bulk, lookup, latest,
** day, scan, daily) repeated, nothing compared or printed but the time: for perf record. The
** database of a query profile stays in WORK/profile/ for the next one (delete it after a
** change to the engine). */
static void run_profile(const config *c) {
  bench_input in;
  char work[4096], dir[4096];
  /* --scaled N (N > 1) profiles the scaled set of N copies, as run_dataset builds it */
  int copies = c->scaled_copies > 1 ? c->scaled_copies : 1;
  snprintf(work, sizeof work, "%s/input-%s", c->work_dir, copies > 1 ? "scaled" : "archive");
  if (bench_input_prepare(c->data_dir, work, copies, &in) != 0) die("cannot prepare the input");
  db_dir(dir, sizeof dir, c, copies > 1 ? "profile-scaled" : "profile", "Rowan", "plain", 0);
  const char *na = NULL;
  uint64_t bytes = 0;
  double t0 = now_s();
  struct stat sb;
  /* a query profile reuses the database a previous one loaded, so the profile is the query */
  if (!strcmp(c->profile, "bulk-index")) {
    const char *na_i = NULL;
    db_dir(dir, sizeof dir, c, copies > 1 ? "profile-scaled" : "profile", "Rowan", "bulk-index", 0);
    for (int i = 0; i < c->lookups; i++) load_once(c, &bench_rowan, &in, dir, 1, 1, NULL, &na_i);
    bench_rmtree(dir);
    bench_input_free(&in);
    return;
  }
  if (!strcmp(c->profile, "bulk")) {
    db_dir(dir, sizeof dir, c, copies > 1 ? "profile-scaled" : "profile", "Rowan", "bulk", 0);
    for (int i = 0; i < c->lookups; i++) bulk_once(c, &in, dir);
    bench_input_free(&in);
    return;
  }
  if (!strcmp(c->profile, "load") || stat(dir, &sb) != 0)
    load_once(c, &bench_rowan, &in, dir, 0, 0, strcmp(c->profile, "load") ? &bytes : NULL, &na);
  if (!strcmp(c->profile, "load")) { bench_rmtree(dir); bench_input_free(&in); return; }
  void *h = NULL;
  if (bench_rowan.open(&h, dir) != 0) die("cannot reopen");
  bench_digest d = {0, 0};
  int64_t n = 0, hours = (in.ts_max - in.ts_min) / 3600000 + 1;
  rng_state = c->seed * 2 + 1;
  t0 = now_s();
  for (int i = 0; i < c->lookups; i++) {
    const char *st = in.stations[rng_next() % (uint64_t)in.n_stations];
    int64_t ts = in.ts_min + (int64_t)(rng_next() % (uint64_t)hours) * 3600000;
    int rc = 0;
    if (!strcmp(c->profile, "lookup")) rc = bench_rowan.lookup(h, st, ts, &d);
    else if (!strcmp(c->profile, "latest")) rc = bench_rowan.latest(h, st, 100, &d);
    else if (!strcmp(c->profile, "day")) rc = bench_rowan.range(h, st, ts - ts % 86400000, ts - ts % 86400000 + 86400000, &d);
    else if (!strcmp(c->profile, "scan")) rc = bench_rowan.count_temp_gt(h, 30.0, &n);
    else if (!strcmp(c->profile, "daily")) rc = bench_rowan.daily_avg(h, bench_ms_of(2016, 7, 1, 0), bench_ms_of(2016, 8, 1, 0), &d);
    else die("unknown --profile operation");
    if (rc != 0) die("query failed");
  }
  fprintf(stderr, "profile %s: %d calls in %.3f s (%lld rows)\n", c->profile, c->lookups,
          now_s() - t0, (long long)d.rows);
  bench_rowan_print_cache(h, stderr);
  bench_rowan.close(h);
  bench_input_free(&in);
}

/* ---- machine ----------------------------------------------------------------------- */

static void print_machine(const config *c) {
  char model[256] = "?", line[512];
  long long mem_kb = 0;
  FILE *f = fopen("/proc/cpuinfo", "r");
  while (f && fgets(line, sizeof line, f)) {
    if (!strncmp(line, "model name", 10)) {
      char *p = strchr(line, ':');
      if (p) { snprintf(model, sizeof model, "%s", p + 2); model[strcspn(model, "\n")] = 0; }
      break;
    }
  }
  if (f) fclose(f);
  f = fopen("/proc/meminfo", "r");
  while (f && fgets(line, sizeof line, f))
    if (sscanf(line, "MemTotal: %lld kB", &mem_kb) == 1) break;
  if (f) fclose(f);
  time_t now = time(NULL);
  char date[64];
  strftime(date, sizeof date, "%Y-%m-%d %H:%M:%S %Z", localtime(&now));
  printf("rowan_bench %s: %s\n", rowan_libversion(), date);
  printf("machine: %ld CPUs (nproc), %s, %.1f GiB memory\n", sysconf(_SC_NPROCESSORS_ONLN),
         model, (double)mem_kb / (1024.0 * 1024.0));
  printf("engines: Rowan %s (sync=normal), SQLite %s (WAL, synchronous=NORMAL, reads with"
         " exclusive locking), RocksDB (WAL, no sync, lz4)\n", rowan_libversion(),
         sqlite3_libversion());
  printf("settings: %zu MiB block/page cache per engine, runs %d, %d rows per commit, %d lookups and %d range queries per run,"
         " seed %llu, databases in %s\n", bench_cache_bytes >> 20, c->runs, c->batch_rows, c->lookups, c->ranges,
         (unsigned long long)c->seed, c->work_dir);
}

static void usage(void) {
  fprintf(stderr, "usage: rowan_bench [--data DIR] [--work DIR] [--runs N] [--scaled N]"
                  " [--batch N] [--lookups N] [--ranges N] [--seed N] [--cache MiB] [--blocksize B]\n"
                  "       rowan_bench --profile load|bulk|bulk-index|lookup|latest|day|scan|daily"
                  " [--lookups N]\n"
                  "  --scaled N: copies of the archive in the scaled data set (3; 0 skips it)\n"
                  "  --cache MiB: block cache (Rowan, RocksDB) and page cache (SQLite) of each engine (64)\n"
                  "  --blocksize B: BLOCKSIZE of Rowan's readings family in bytes (0: Rowan's default, 64 KiB)\n"
                  "  --profile OP: run Rowan's OP alone, --lookups N times, for a profiler\n");
  exit(1);
}

int main(int argc, char **argv) {
  config c = {"data/beijing", "/tmp/rowan-bench", 5, 3, 5000, 20000, 2000, 42, NULL};
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (i + 1 >= argc) usage();
    const char *v = argv[++i];
    if (!strcmp(a, "--data")) c.data_dir = v;
    else if (!strcmp(a, "--work")) c.work_dir = v;
    else if (!strcmp(a, "--runs")) c.runs = atoi(v);
    else if (!strcmp(a, "--scaled")) c.scaled_copies = atoi(v);
    else if (!strcmp(a, "--batch")) c.batch_rows = atoi(v);
    else if (!strcmp(a, "--lookups")) c.lookups = atoi(v);
    else if (!strcmp(a, "--ranges")) c.ranges = atoi(v);
    else if (!strcmp(a, "--seed")) c.seed = strtoull(v, NULL, 10);
    else if (!strcmp(a, "--profile")) c.profile = v;
    else if (!strcmp(a, "--cache")) bench_cache_bytes = (size_t)atoi(v) << 20;
    else if (!strcmp(a, "--blocksize")) bench_block_size = (unsigned)atoi(v);
    else usage();
  }
  if (c.runs < 1 || c.runs > 64 || c.batch_rows < 1 || c.lookups < 1 || c.ranges < 1 ||
      c.scaled_copies < 0)
    usage();
  mkdir(c.work_dir, 0755);
  if (c.profile) { run_profile(&c); return 0; }
  print_machine(&c);
  fflush(stdout);
  run_dataset(&c, "archive", 1);
  if (c.scaled_copies > 1) run_dataset(&c, "scaled", c.scaled_copies);
  return 0;
}
