/*
** bench/bench_main.c: rowan_bench, the side-by-side benchmark of Rowan, SQLite, RocksDB and
** DuckDB on the sensor archive (issues 8 and 22; how to run it and what each figure means:
** bench/README.md).
**
** For each data set (the archive as bundled, then scaled copies of it with renamed
** stations, then optionally a synthetic set of 100M rows or more for Rowan alone) it loads
** every engine `load_runs` times into a fresh directory (timed: parse and insert until the
** last commit returns), with a secondary index on TEMP (Rowan and SQLite; Rowan through
** its bulk-load API, and also through UPSERTs as a figure of its own), measures the size
** after compaction, checks that the engines agree on the archive's known counts, then runs
** `runs` read rounds, the engines interleaved (Rowan, SQLite, RocksDB, DuckDB, then again),
** checks that every query result agrees between engines, and prints each figure as the
** median of its repetitions with their min-max spread, Rowan's ratios, the cost per row
** and the targets of the issues (bench_report.c). Any disagreement aborts before a figure
** is printed.
**
** What it does not: assert timings (run by hand, never by CTest), or tune the engines
** beyond what bench_rowan.c, bench_sqlite.c, bench_rocks.c and bench_duck.c say.
*/
#include "bench_run.h"

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "bench_report.h"

/* ORDER BENCH_ENG: the columns of bench_report.c */
static const bench_engine *const engines[BENCH_N_ENG] = {&bench_rowan, &bench_sqlite,
                                                         &bench_rocks, &bench_duck};
static const char *const eng_names[BENCH_N_ENG] = {"Rowan", "SQLite", "RocksDB", "DuckDB"};
#define E_DUCK 3

static FILE *csv_out;                    /* --csv FILE */
static bench_table *done[12];            /* every data set's figures, for the scaling lines */
static int n_done;
static bench_digest archive_daily;       /* the archive's daily averages (Rowan) */

/* ---- small helpers ----------------------------------------------------------------- */

static double clock_s(clockid_t id) {
  struct timespec t;
  clock_gettime(id, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}
double bench_now_s(void) { return clock_s(CLOCK_MONOTONIC); }
double bench_cpu_s(void) { return clock_s(CLOCK_PROCESS_CPUTIME_ID); }
double bench_thread_cpu_s(void) { return clock_s(CLOCK_THREAD_CPUTIME_ID); }

size_t bench_cache_bytes = (size_t)64 << 20;
unsigned bench_block_size = 0; /* --blocksize: Rowan readings family BLOCKSIZE, 0 = the family default (8 KiB, KV_DEFAULT_BLOCK_SIZE) */

static uint64_t rng_state;
void bench_rng_seed(uint64_t seed) { rng_state = seed * 2 + 1; }
uint64_t bench_rng_next(void) { /* xorshift64* */
  rng_state ^= rng_state >> 12;
  rng_state ^= rng_state << 25;
  rng_state ^= rng_state >> 27;
  return rng_state * UINT64_C(2685821657736338717);
}

void bench_die(const char *msg) {
  fprintf(stderr, "bench: ABORT: %s\n", msg);
  bench_duck_stop();
  exit(2);
}

static void check(int rc, const bench_engine *e, const char *what) {
  if (rc != 0) {
    fprintf(stderr, "bench: %s: %s failed\n", e->name, what);
    bench_die("a query failed");
  }
}

/* Seconds of one call: the engine's own measure when it gave one (DuckDB), else t0..now. */
static double took(double t0) {
  double dt = bench_now_s() - t0;
  return bench_self_seconds >= 0 ? bench_self_seconds : dt;
}

/* ---- targets ----------------------------------------------------------------------- */

static double med(bench_table *t, const char *name, int e) {
  bench_fig *f = bench_fig_find(t, name);
  return f ? bench_fig_median(f, e) : NAN;
}

/* One target line: value vs bound; ge: must be >= bound. */
static void target(const char *what, double value, int ge, double bound) {
  const char *st = isnan(value) ? "n/a" : ((ge ? value >= bound : value <= bound) ? "met" : "MISSED");
  char v[32];
  bench_fmt(v, sizeof v, value, "n/a");
  printf("  %-52s %12s  (target %s %g)  %s\n", what, v, ge ? ">=" : "<=", bound, st);
}

static void print_targets(bench_table *t) {
  double bulk = med(t, "bulk load, Rowan API/DuckDB CSV", 0);
  double load0 = med(t, "load, prepared writes", 0), load1 = med(t, "load, prepared writes", 1);
  printf("targets (issue 8; Rowan, medians of the same run):\n");
  target("bulk load (Rowan bulk API), rows/s", bulk, 1, 1e6);
  target("bulk load (Rowan bulk API) vs SQLite's load", bulk / load1, 1, 3);
  target("point lookup p50 vs SQLite (exclusive locking)",
         med(t, "point lookup p50", 0) / med(t, "point lookup p50", 1), 0, 0.85);
  target("point lookup p50 vs RocksDB",
         med(t, "point lookup p50", 0) / med(t, "point lookup p50", 2), 0, 0.85);
  target("latest 100 rows p50 vs RocksDB",
         med(t, "latest 100 p50", 0) / med(t, "latest 100 p50", 2), 0, 0.6);
  target("filtered full scan vs SQLite",
         med(t, "filtered full scan", 0) / med(t, "filtered full scan", 1), 1, 3);
  target("size on disk vs SQLite", med(t, "size on disk", 0) / med(t, "size on disk", 1), 0, 0.3);
  target("load with index on TEMP vs without (bulk API)",
         med(t, "bulk load, index on TEMP", 0) / bulk, 1, 0.6);
  printf("  (Rowan's UPSERT path: load with index vs without %.2f; SQLite: %.2f)\n",
         med(t, "UPSERT load, index on TEMP", 0) / load0,
         med(t, "bulk load, index on TEMP", 1) / load1);
  printf("  (Rowan's prepared-write load, not the bulk path: %.2fx SQLite's, %.2fx RocksDB's)\n",
         load0 / load1, load0 / med(t, "load, prepared writes", 2));
}

/* Issue 22: Rowan's cost per row of each read figure on every data set against the
** archive's (target: within 1.5x at 30x). */
static void print_scaling(void) {
  if (n_done < 2) return;
  static const char *const reads[] = {"point lookup p50", "latest 100 p50", "one day (24 rows) p50",
                                      "filtered full scan", "daily avg per station, 1 month"};
  printf("\nscaling (issue 22): Rowan's cost per row on each set / on the archive"
         " (target at 30x: <= 1.5)\n%-32s", "figure");
  for (int d = 1; d < n_done; d++) printf(" %14s", done[d]->ds);
  printf("\n");
  for (size_t i = 0; i < sizeof reads / sizeof *reads; i++) {
    bench_fig *f0 = bench_fig_find(done[0], reads[i]);
    printf("%-32s", reads[i]);
    for (int d = 1; d < n_done; d++) {
      bench_fig *f = bench_fig_find(done[d], reads[i]);
      char v[32];
      bench_fmt(v, sizeof v, f && f0 ? bench_fig_cost_ns(f, bench_fig_median(f, 0)) /
                                      bench_fig_cost_ns(f0, bench_fig_median(f0, 0)) : NAN, "-");
      printf(" %14s", v);
    }
    printf("\n");
  }
}

/* ---- loads ------------------------------------------------------------------------- */

void bench_db_dir(char *buf, size_t cap, const config *c, const char *ds, const char *eng,
                  const char *what, int run) {
  snprintf(buf, cap, "%s/%s/%s-%s-%d", c->work_dir, ds, eng, what, run);
}

/* The process's resident memory now, split as the kernel counts it (/proc/self/status, KiB):
** anonymous (heap: what the engine holds) and file-backed (mapped store files, the binary:
** pages the kernel may drop at will). 0 where the file cannot be read. */
static void rss_now(long *anon_kib, long *file_kib) {
  *anon_kib = *file_kib = 0;
  FILE *f = fopen("/proc/self/status", "r");
  if (!f) return;
  char line[256];
  while (fgets(line, sizeof line, f)) {
    if (!strncmp(line, "RssAnon:", 8)) *anon_kib = strtol(line + 8, NULL, 10);
    else if (!strncmp(line, "RssFile:", 8)) *file_kib = strtol(line + 8, NULL, 10);
  }
  fclose(f);
}

/* KiB the allocator has handed out and not had back (glibc's mallinfo2), or -1: the rest
** of the anonymous memory is the allocator's free lists and arenas. */
static long heap_in_use_kib(void) {
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33))
  struct mallinfo2 mi = mallinfo2();
  return (long)((mi.uordblks + mi.hblkhd) / 1024);
#else
  return -1;
#endif
}

/* A thread sampling, while a bulk load runs, the most anonymous resident memory (every 20
** ms) and allocated memory (every 200 ms: mallinfo2 locks each arena and walks its free
** lists, which the load's own allocations would wait for), in KiB: the peaks a load
** reaches, which getrusage's maximum mixes with mapped files and keeps for the whole
** process only. */
typedef struct mem_sampler {
  pthread_t th;
  atomic_int stop;
  long anon_max, heap_max;
} mem_sampler;

static void *sample_mem(void *arg) {
  mem_sampler *s = arg;
  for (unsigned tick = 0; !atomic_load(&s->stop); tick++) {
    long a, f;
    rss_now(&a, &f);
    if (a > s->anon_max) s->anon_max = a;
    if (tick % 10 == 0) {
      long h = heap_in_use_kib();
      if (h > s->heap_max) s->heap_max = h;
    }
    usleep(20000);
  }
  return NULL;
}

static void make_parent(const char *dir) {
  char parent[4096];
  snprintf(parent, sizeof parent, "%s", dir);
  char *slash = strrchr(parent, '/');
  if (slash) { *slash = 0; mkdir(parent, 0755); }
}

double bench_load_once(const config *c, const bench_engine *e, const bench_input *in,
                       const char *dir, int with_index, int bulk, uint64_t *bytes,
                       const char **na) {
  void *h = NULL;
  int unsupported = 0;
  if (bench_rmtree(dir) != 0) bench_die("cannot clear a database directory");
  make_parent(dir);
  if (e->create(&h, dir, with_index, &unsupported) != 0) {
    e->close(h);
    if (unsupported) { *na = e == &bench_rocks ? "no indexes" : "n/a (indexes not available)"; return NAN; }
    bench_die("create failed");
  }
  bench_self_seconds = -1;
  double t0 = bench_now_s(), c0 = bench_cpu_s(), m0 = bench_thread_cpu_s();
  if (bulk ? bench_rowan_bulk_load(h, in) : e->load(h, in, c->batch_rows)) {
    if (e != &bench_duck) bench_die("load failed");
    e->close(h); /* a peer run through another process: its failure is reported, not fatal */
    *na = "failed";
    return NAN;
  }
  double dt = took(t0), dc = bench_cpu_s() - c0, dm = bench_thread_cpu_s() - m0;
  if (bytes) {
    double f0 = bench_now_s();
    if (e->finish(h, dir, bytes) != 0) bench_die("finish (flush, compaction, checkpoint) failed");
    fprintf(stderr, "  %-8s %s: load %.2f s, compaction/checkpoint %.2f s, %llu bytes\n",
            e->name, with_index ? "+index" : "      ", dt, bench_now_s() - f0,
            (unsigned long long)*bytes);
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

double bench_bulk_once(const config *c, const bench_input *in, const char *dir, int keep,
                       uint64_t *bytes) {
  void *h = NULL;
  int unsupported = 0;
  (void)c;
  if (bench_rmtree(dir) != 0) bench_die("cannot clear a database directory");
  make_parent(dir);
  if (bench_rowan.create(&h, dir, 0, &unsupported) != 0) bench_die("create failed");
  struct rusage ru0, ru1; /* peak RSS before (the input, read in memory) and after */
  getrusage(RUSAGE_SELF, &ru0);
  double t0 = bench_now_s(), c0 = bench_cpu_s(), m0 = bench_thread_cpu_s();
  mem_sampler ms = {.anon_max = 0, .heap_max = 0};
  atomic_init(&ms.stop, 0);
  bool sampling = pthread_create(&ms.th, NULL, sample_mem, &ms) == 0;
  if (bench_rowan_bulk_load(h, in) != 0) bench_die("Rowan bulk load failed");
  atomic_store(&ms.stop, 1);
  if (sampling) pthread_join(ms.th, NULL);
  double dt = bench_now_s() - t0, dc = bench_cpu_s() - c0, dm = bench_thread_cpu_s() - m0;
  getrusage(RUSAGE_SELF, &ru1);
  long anon_kib, file_kib;
  rss_now(&anon_kib, &file_kib);
  long heap_kib = heap_in_use_kib();
  uint64_t reader_bytes = bench_rowan_reader_bytes(h);
  int64_t copies = in->rows / ARCHIVE_ROWS, all = -1, gt = -1, nul = -1;
  if (bench_rowan.count_all(h, &all) || bench_rowan.count_temp_gt(h, 30.0, &gt) ||
      bench_rowan.count_temp_null(h, &nul) || all != in->rows ||
      gt != ARCHIVE_TEMP_GT_30 * copies || nul != ARCHIVE_TEMP_NULL * copies) {
    fprintf(stderr, "bench: Rowan bulk: %lld rows, %lld with TEMP > 30, %lld NULL\n",
            (long long)all, (long long)gt, (long long)nul);
    bench_die("the bulk-loaded table disagrees with the archive's known counts");
  }
  fprintf(stderr, "  %-8s  bulk: load %.2f s (%.2f s of CPU, %.2f s on the loading thread), "
          "%.0f rows/s, peak RSS %ld MiB before the load, %ld MiB after\n"
          "            memory during the load at most %ld MiB anonymous, %ld MiB allocated"
          " (sampled every 20 and 200 ms); after it %ld MiB anonymous + %ld MiB file-backed,"
          " %ld MiB allocated, of which the open store files' indexes and filters %.1f MiB (%.2f bytes a"
          " row)\n", "Rowan", dt, dc, dm, (double)in->rows / dt, ru0.ru_maxrss / 1024,
          ru1.ru_maxrss / 1024, ms.anon_max / 1024, ms.heap_max / 1024, anon_kib / 1024,
          file_kib / 1024, heap_kib / 1024, (double)reader_bytes / 1048576.0,
          (double)reader_bytes / (double)in->rows);
  if (keep) {
    double f0 = bench_now_s();
    if (bench_rowan.finish(h, dir, bytes) != 0) bench_die("finish failed");
    fprintf(stderr, "  Rowan     bulk: compaction %.2f s, %llu bytes\n", bench_now_s() - f0,
            (unsigned long long)*bytes);
  } else {
    bench_rowan.close(h);
    bench_rmtree(dir);
  }
  return (double)in->rows / dt;
}

/* ---- reads ------------------------------------------------------------------------- */

typedef struct round_out {
  double lp50, lp99, ap50, ap99, dp50; /* us; NAN where the engine lacks the read */
  double ltail[4];                 /* lookup p90, p95, p98, p99.9 (us; --profile reads) */
  uint8_t *lclass;                 /* --profile reads: per lookup, its read class (below), or
                                      NULL */
  double *llat;                    /* with lclass: the lookups' times (us) kept here */
  double scan_rows_s;              /* rows/s of COUNT(*) WHERE TEMP > 30 */
  double daily_ms;                 /* ms of the daily average of a month */
  bench_digest dig[4];             /* lookup, latest, day, daily results */
} round_out;

/* Round `round` of every read on an open database: the same keys for every engine, other
** keys in each round (a cache that kept a round's blocks would otherwise answer the next
** round from memory, which a reader of new random keys never sees). o->lclass and o->llat
** must be set by the caller (NULL: no read classes; only Rowan has them). */
static void read_round(const config *c, const bench_engine *e, void *h, const bench_input *in,
                       int round, double *lat, round_out *o) {
  int64_t hours = (in->ts_max - in->ts_min) / 3600000 + 1, days = hours / 24;
  int64_t month_from = bench_ms_of(2016, 7, 1, 0), month_to = bench_ms_of(2016, 8, 1, 0);
  uint8_t *lclass = o->lclass;
  double *llat = o->llat;
  memset(o, 0, sizeof *o);
  o->lclass = lclass;
  o->llat = llat;
  o->lp50 = o->lp99 = o->ap50 = o->ap99 = o->dp50 = NAN;
  bench_rng_seed(c->seed + (uint64_t)round * 0x9E3779B97F4A7C15ull);
  if (e->lookup) {
    for (int i = 0; i < c->lookups; i++) {
      const char *st = in->stations[bench_rng_next() % (uint64_t)in->n_stations];
      int64_t ts = in->ts_min + (int64_t)(bench_rng_next() % (uint64_t)hours) * 3600000;
      uint64_t ins0 = o->lclass ? bench_rowan_cache_inserts(h) : 0;
      double t0 = bench_now_s();
      check(e->lookup(h, st, ts, &o->dig[0]), e, "point lookup");
      lat[i] = (bench_now_s() - t0) * 1e6;
      if (o->lclass) { /* blocks read (0-3, 3 for more) times 4 plus cache hits among them,
                          plus 16 when the lookup inserted a block into the cache */
        uint64_t b, hit;
        bench_rowan_last_read(h, &b, &hit);
        if (b > 3) b = 3;
        if (hit > b) hit = b;
        o->lclass[i] = (uint8_t)(b * 4 + hit + (bench_rowan_cache_inserts(h) != ins0 ? 16 : 0));
      }
    }
    if (o->lclass) memcpy(o->llat, lat, (size_t)c->lookups * sizeof *lat);
    o->lp50 = bench_percentile(lat, c->lookups, 50);
    o->lp99 = bench_percentile(lat, c->lookups, 99);
    static const double tail[4] = {90, 95, 98, 99.9};
    for (int i = 0; i < 4; i++) o->ltail[i] = bench_percentile(lat, c->lookups, tail[i]);
  }
  if (e->latest) {
    for (int i = 0; i < c->ranges; i++) {
      const char *st = in->stations[bench_rng_next() % (uint64_t)in->n_stations];
      double t0 = bench_now_s();
      check(e->latest(h, st, 100, &o->dig[1]), e, "latest 100");
      lat[i] = (bench_now_s() - t0) * 1e6;
    }
    o->ap50 = bench_percentile(lat, c->ranges, 50);
    o->ap99 = bench_percentile(lat, c->ranges, 99);
  }
  if (e->range) {
    for (int i = 0; i < c->ranges; i++) {
      const char *st = in->stations[bench_rng_next() % (uint64_t)in->n_stations];
      int64_t from = in->ts_min + (int64_t)(bench_rng_next() % (uint64_t)days) * 86400000;
      double t0 = bench_now_s();
      check(e->range(h, st, from, from + 86400000, &o->dig[2]), e, "one day");
      lat[i] = (bench_now_s() - t0) * 1e6;
    }
    o->dp50 = bench_percentile(lat, c->ranges, 50);
  }
  int64_t n = 0;
  bench_self_seconds = -1;
  double t0 = bench_now_s();
  check(e->count_temp_gt(h, 30.0, &n), e, "COUNT(*) WHERE TEMP > 30");
  o->scan_rows_s = (double)in->rows / took(t0);
  if (n != (int64_t)ARCHIVE_TEMP_GT_30 * in->copies) {
    fprintf(stderr, "bench: %s: the timed scan counted %lld\n", e->name, (long long)n);
    bench_die("an engine disagrees with the archive's known counts");
  }
  bench_self_seconds = -1;
  t0 = bench_now_s();
  check(e->daily_avg(h, month_from, month_to, &o->dig[3]), e, "daily average");
  o->daily_ms = took(t0) * 1e3;
}

/* --profile reads (bench_profile.c): the comparison's read rounds on Rowan alone, each
** round's percentiles printed, so a change to the block cache or the read path can be tried
** on the bench's own mix of reads without loading the peers. */
/* The lookups of a round by read class (blocks read, cache hits among them): how many, their
** median time, and how many of the slowest 1% (at or above the p99) are of that class. */
static void print_lookup_classes(const double *lat, const uint8_t *cls, int n, double p99) {
  fprintf(stderr, "  lookups by store-file blocks read (cache hits): count, p50 us, in the slowest 1%%\n");
  double *t = malloc((size_t)n * sizeof *t);
  if (!t) return;
  for (int k = 0; k < 32; k++) {
    int m = 0, slow = 0;
    for (int i = 0; i < n; i++)
      if (cls[i] == k) {
        t[m++] = lat[i];
        if (lat[i] >= p99) slow++;
      }
    if (m)
      fprintf(stderr, "    %d%s block(s) (%d hit%s): %d, %.2f us, %d\n", k % 16 / 4,
              k % 16 / 4 == 3 ? "+" : "", k % 4, k >= 16 ? ", one inserted" : "", m,
              bench_percentile(t, m, 50), slow);
  }
  free(t);
}

void bench_profile_reads(const config *c, void *h, const bench_input *in) {
  int nmax = c->lookups > c->ranges ? c->lookups : c->ranges;
  double *lat = calloc((size_t)nmax, sizeof(double));
  uint8_t *cls = calloc((size_t)c->lookups + 1, 1);
  double *lk = calloc((size_t)c->lookups + 1, sizeof(double));
  if (!lat || !cls || !lk) bench_die("out of memory");
  bench_rowan_diag(h, true);
  for (int r = 0; r < c->runs; r++) {
    round_out o;
    memset(&o, 0, sizeof o);
    o.lclass = cls;
    o.llat = lk;
    read_round(c, &bench_rowan, h, in, r, lat, &o);
    fprintf(stderr, "round %d: lookup p50 %.2f p99 %.2f us, latest 100 p50 %.2f p99 %.2f us,"
            " one day p50 %.2f us, scan %.1fM rows/s, daily %.2f ms\n", r + 1, o.lp50, o.lp99,
            o.ap50, o.ap99, o.dp50, o.scan_rows_s / 1e6, o.daily_ms);
    fprintf(stderr, "  lookup p90 %.2f p95 %.2f p98 %.2f p99.9 %.2f us\n", o.ltail[0],
            o.ltail[1], o.ltail[2], o.ltail[3]);
    print_lookup_classes(lk, cls, c->lookups, o.lp99);
    bench_rowan_print_cache(h, stderr);
  }
  bench_rowan_diag(h, false);
  free(lat);
  free(cls);
  free(lk);
}

/* ---- one data set ------------------------------------------------------------------ */

/* Known counts of an open database, or abort. */
static void check_counts(const bench_engine *e, void *h, const bench_input *in) {
  int64_t all = -1, gt = -1, nul = -1, k = in->copies;
  check(e->count_all(h, &all), e, "COUNT(*)");
  check(e->count_temp_gt(h, 30.0, &gt), e, "COUNT(*) WHERE TEMP > 30");
  check(e->count_temp_null(h, &nul), e, "COUNT(*) WHERE TEMP IS NULL");
  if (all != in->rows || gt != ARCHIVE_TEMP_GT_30 * k || nul != ARCHIVE_TEMP_NULL * k) {
    fprintf(stderr, "bench: %s: %lld rows, %lld with TEMP > 30, %lld with TEMP NULL;"
            " expected %lld, %lld, %lld\n", e->name, (long long)all, (long long)gt,
            (long long)nul, (long long)in->rows, (long long)(ARCHIVE_TEMP_GT_30 * k),
            (long long)(ARCHIVE_TEMP_NULL * k));
    bench_die("an engine disagrees with the archive's known counts");
  }
}

/* Run one data set. on[e]: engines that take part; synth: the synthetic set (Rowan's bulk
** load only, once, its database kept for the reads). */
static void run_dataset(const config *c, const char *ds, const bench_input *in,
                        const int on_in[BENCH_N_ENG], int synth) {
  int on[BENCH_N_ENG], *run_on = on;
  memcpy(on, on_in, sizeof on);
  int LR = synth ? 1 : c->load_runs, R = c->runs;
  if (c->load_once_above > 0 && in->copies > c->load_once_above) LR = 1;
  /* --fast-loads-above: no UPSERT-path loads of Rowan and no index load of SQLite (the
  ** slowest loads); Rowan's database for the reads comes from its bulk load */
  int fast = !synth && c->fast_loads_above >= 0 && in->copies > c->fast_loads_above;
  bench_table *t = calloc(1, sizeof *t);
  snprintf(t->ds, sizeof t->ds, "%s", ds);
  t->rows = in->rows;
  double month_rows = 31.0 * 24 * in->n_stations;
  bench_fig *f_load = bench_fig_add(t, "load, prepared writes", "rows/s", 1, 0);
  bench_fig *f_bulk = bench_fig_add(t, "bulk load, Rowan API/DuckDB CSV", "rows/s", 1, 0);
  bench_fig *f_idx = bench_fig_add(t, "bulk load, index on TEMP", "rows/s", 1, 0);
  bench_fig *f_idxup = bench_fig_add(t, "UPSERT load, index on TEMP", "rows/s", 1, 0);
  bench_fig *f_lp50 = bench_fig_add(t, "point lookup p50", "us", 0, 1);
  bench_fig *f_lp99 = bench_fig_add(t, "point lookup p99", "us", 0, 1);
  bench_fig *f_ap50 = bench_fig_add(t, "latest 100 p50", "us", 0, 100);
  bench_fig *f_ap99 = bench_fig_add(t, "latest 100 p99", "us", 0, 100);
  bench_fig *f_dp50 = bench_fig_add(t, "one day (24 rows) p50", "us", 0, 24);
  bench_fig *f_scan = bench_fig_add(t, "filtered full scan", "rows/s", 1, 0);
  bench_fig *f_daily = bench_fig_add(t, "daily avg per station, 1 month", "ms", 0, month_rows);
  bench_fig *f_size = bench_fig_add(t, "size on disk", "B/reading", 0, 0);
  for (int e = 0; e < BENCH_N_ENG; e++)
    if (!on[e]) for (int i = 0; i < t->n; i++) t->fig[i].na[e] = "not run";
  f_idx->na[E_DUCK] = f_load->na[E_DUCK] = "-";
  f_bulk->na[1] = f_bulk->na[2] = "-";
  f_idxup->na[1] = f_idxup->na[2] = f_idxup->na[E_DUCK] = "-";
  if (synth) f_load->na[0] = f_idx->na[0] = f_idxup->na[0] = "not run";
  if (fast) f_load->na[0] = f_idx->na[1] = f_idxup->na[0] = "skipped";
  char dir[4096];
  for (int r = 0; r < LR; r++) {
    fprintf(stderr, "== %s: load run %d/%d\n", ds, r + 1, LR);
    if (synth) {
      uint64_t bytes = 0;
      bench_db_dir(dir, sizeof dir, c, ds, "Rowan", "plain", 0);
      bench_fig_sample(f_bulk, 0, bench_bulk_once(c, in, dir, 1, &bytes));
      bench_fig_sample(f_size, 0, (double)bytes / ((double)in->rows * BENCH_READINGS));
      break;
    }
    for (int e = 0; e < BENCH_N_ENG; e++) {
      if (!on[e]) continue;
      uint64_t bytes = 0;
      const char *na = NULL;
      bench_db_dir(dir, sizeof dir, c, ds, engines[e]->name, "plain", 0);
      if (fast && e == 0) {
        bench_fig_sample(f_bulk, 0, bench_bulk_once(c, in, dir, 1, &bytes));
        bench_fig_sample(f_size, 0, (double)bytes / ((double)in->rows * BENCH_READINGS));
        if (r != LR - 1) bench_rmtree(dir);
        bench_db_dir(dir, sizeof dir, c, ds, "Rowan", "index", r);
        bench_fig_sample(f_idx, 0, bench_load_once(c, engines[e], in, dir, 1, 1, NULL, &na));
        if (na) f_idx->na[0] = na;
        bench_rmtree(dir);
        continue;
      }
      double v = bench_load_once(c, engines[e], in, dir, 0, 0, &bytes, &na);
      if (na) { /* DuckDB failed (its message is on stderr): left out of this set */
        run_on[e] = 0;
        for (int i = 0; i < t->n; i++) t->fig[i].na[e] = na;
        bench_rmtree(dir);
        continue;
      }
      bench_fig_sample(e == E_DUCK ? f_bulk : f_load, e, v);
      bench_fig_sample(f_size, e, (double)bytes / ((double)in->rows * BENCH_READINGS));
      if (r != LR - 1) bench_rmtree(dir); /* the last run's databases serve the reads */
      if (e == E_DUCK || (fast && e == 1)) continue;
      bench_db_dir(dir, sizeof dir, c, ds, engines[e]->name, "index", r);
      /* Rowan: the index figure through the bulk API (the UPSERT path apart, below) */
      na = NULL;
      bench_fig_sample(f_idx, e, bench_load_once(c, engines[e], in, dir, 1, e == 0, NULL, &na));
      if (na) f_idx->na[e] = na;
      bench_rmtree(dir);
      if (e == 0) {
        na = NULL;
        bench_db_dir(dir, sizeof dir, c, ds, "Rowan", "index-upsert", r);
        bench_fig_sample(f_idxup, 0, bench_load_once(c, engines[e], in, dir, 1, 0, NULL, &na));
        if (na) f_idxup->na[0] = na;
        bench_rmtree(dir);
      }
    }
    if (fast) continue;
    bench_db_dir(dir, sizeof dir, c, ds, "Rowan", "bulk", r);
    bench_fig_sample(f_bulk, 0, bench_bulk_once(c, in, dir, 0, NULL));
  }
  /* the known counts in every engine, then the read rounds, engines interleaved */
  void *h[BENCH_N_ENG] = {NULL};
  for (int e = 0; e < BENCH_N_ENG; e++) {
    if (!on[e]) continue;
    bench_db_dir(dir, sizeof dir, c, ds, engines[e]->name, "plain", 0);
    if (engines[e]->open(&h[e], dir) != 0) bench_die("cannot reopen a database");
    check_counts(engines[e], h[e], in);
  }
  int nmax = c->lookups > c->ranges ? c->lookups : c->ranges;
  double *lat = calloc((size_t)nmax, sizeof(double));
  round_out first[BENCH_N_ENG];
  for (int r = 0; r < R; r++) {
    fprintf(stderr, "== %s: read round %d/%d\n", ds, r + 1, R);
    for (int e = 0; e < BENCH_N_ENG; e++) {
      if (!on[e]) continue;
      round_out o = {0}; /* no read classes: lclass NULL */
      read_round(c, engines[e], h[e], in, r, lat, &o);
      if (r == 0) first[e] = o;
      bench_fig_sample(f_lp50, e, o.lp50);
      bench_fig_sample(f_lp99, e, o.lp99);
      bench_fig_sample(f_ap50, e, o.ap50);
      bench_fig_sample(f_ap99, e, o.ap99);
      bench_fig_sample(f_dp50, e, o.dp50);
      bench_fig_sample(f_scan, e, o.scan_rows_s);
      bench_fig_sample(f_daily, e, o.daily_ms);
    }
  }
  free(lat);
  for (int e = 0; e < BENCH_N_ENG; e++) if (on[e]) engines[e]->close(h[e]);
  /* every query result against Rowan's and the expected row counts */
  static const char *const dname[4] = {"point lookups", "latest 100", "one day", "daily average"};
  int64_t expect_rows[4] = {c->lookups, (int64_t)c->ranges * 100, (int64_t)c->ranges * 24,
                            (int64_t)31 * in->n_stations};
  for (int q = 0; q < 4; q++) {
    for (int e = 0; e < BENCH_N_ENG; e++) {
      if (!on[e] || (q == 0 && !engines[e]->lookup) || (q == 1 && !engines[e]->latest) ||
          (q == 2 && !engines[e]->range))
        continue;
      const bench_digest *d = &first[e].dig[q], *d0 = &first[0].dig[q];
      if (!bench_digest_equal(d, d0) || d->rows != expect_rows[q]) {
        fprintf(stderr, "bench: %s: %s returned %lld rows (sum %.17g); Rowan %lld (sum %.17g);"
                " expected %lld rows\n", engines[e]->name, dname[q], (long long)d->rows,
                d->sum, (long long)d0->rows, d0->sum, (long long)expect_rows[q]);
        bench_die("the engines disagree on a query result");
      }
    }
  }
  /* the synthetic set has no peer: its daily averages are its groups' copies of the
  ** archive's (only shift 0 covers 2016-07), so their sum is groups x the archive's */
  if (!strcmp(ds, "archive")) archive_daily = first[0].dig[3];
  if (synth) {
    bench_digest want = {archive_daily.rows * in->synth_groups,
                         archive_daily.sum * in->synth_groups};
    if (!bench_digest_equal(&first[0].dig[3], &want))
      bench_die("the synthetic set's daily averages are not its copies of the archive's");
  }
  printf("\n### %s: %lld rows, %d stations (loads: median of %d, reads: median of %d"
         " interleaved rounds; [min-max] of the repetitions)\n\n", ds, (long long)in->rows,
         in->n_stations, LR, R);
  bench_table_print(t, eng_names);
  printf("\nagreement: %lld rows, %lld with TEMP > 30, %lld with TEMP NULL in every engine"
         " (and in every timed scan); %d point lookups, %d latest-100 and %d one-day queries"
         " and the daily averages of 2016-07 (%lld groups) returned the same rows and values"
         " in every engine that ran them%s\n", (long long)in->rows,
         (long long)ARCHIVE_TEMP_GT_30 * in->copies, (long long)ARCHIVE_TEMP_NULL * in->copies,
         c->lookups, c->ranges, c->ranges, (long long)expect_rows[3],
         synth ? " (Rowan alone: the expected row counts, and the daily averages equal to"
                 " the archive's times the station groups)" : "");
  if (!synth) print_targets(t);
  bench_table_csv(csv_out, t, eng_names);
  fflush(stdout);
  for (int e = 0; e < BENCH_N_ENG; e++) {
    bench_db_dir(dir, sizeof dir, c, ds, engines[e]->name, "plain", 0);
    bench_rmtree(dir);
  }
  if (n_done < (int)(sizeof done / sizeof *done)) done[n_done++] = t;
  else free(t);
}

static void run_copies(const config *c, int copies) {
  bench_input in;
  char work[4096], ds[32];
  if (copies == 1) snprintf(ds, sizeof ds, "archive");
  else snprintf(ds, sizeof ds, "scaled%d", copies);
  snprintf(work, sizeof work, "%s/input-%s", c->work_dir, ds);
  fprintf(stderr, "== %s: preparing input (%d cop%s of the archive)\n", ds, copies,
          copies == 1 ? "y" : "ies");
  if (bench_input_prepare(c->data_dir, work, copies, &in) != 0) bench_die("cannot prepare the input");
  if (in.rows != (int64_t)ARCHIVE_ROWS * copies) {
    fprintf(stderr, "bench: %lld rows in the input, expected %lld\n", (long long)in.rows,
            (long long)ARCHIVE_ROWS * copies);
    bench_die("the input is not the bundled archive");
  }
  int on[BENCH_N_ENG] = {1, 1, 1, bench_duck_python != NULL};
  run_dataset(c, ds, &in, on, 0);
  bench_input_free(&in);
}

static void run_synth(const config *c) {
  bench_input in;
  char work[4096];
  snprintf(work, sizeof work, "%s/input-archive", c->work_dir);
  if (bench_input_synth(c->data_dir, work, c->synth_rows, &in) != 0)
    bench_die("cannot prepare the synthetic set");
  fprintf(stderr, "== synth: %lld rows generated on the fly (%d station groups x %d 4-year"
          " shifts of the archive), Rowan alone\n", (long long)in.rows, in.synth_groups,
          in.synth_shifts);
  int on[BENCH_N_ENG] = {1, 0, 0, 0};
  run_dataset(c, "synth", &in, on, 1);
  bench_input_free(&in);
}

/* ---- main -------------------------------------------------------------------------- */

static void usage(void) {
  fprintf(stderr, "usage: rowan_bench [--data DIR] [--work DIR] [--runs N] [--load-runs N] [--load-once-above COPIES]"
                  " [--fast-loads-above COPIES]"
                  " [--scaled N[,N...]] [--synth ROWS] [--batch N] [--lookups N] [--ranges N]"
                  " [--seed N] [--cache MiB] [--blocksize B] [--csv FILE]"
                  " [--duck PYTHON] [--duck-threads N] [--duck-memory SIZE]\n"
                  "       rowan_bench --profile load|bulk|bulk-index|synth|lookup|latest|day|scan"
                  "|daily [--lookups N]\n"
                  "       rowan_bench --parallel COPIES [--runs N] [--csv FILE]\n"
                  "  --scaled N,...: copies of the archive in each scaled set (3; 0 skips them)\n"
                  "  --load-runs N: repetitions of every load (--runs); --load-once-above K: one load"
                  " on sets of more than K copies\n"
                  "  --fast-loads-above K: on sets of more than K copies, no UPSERT loads of Rowan"
                  " (its reads on its bulk load) and no index load of SQLite\n"
                  "  --synth ROWS: a synthetic set of at least ROWS rows for Rowan alone (0)\n"
                  "  --cache MiB: block cache (Rowan, RocksDB) and page cache (SQLite) of each engine (64)\n"
                  "  --blocksize B: BLOCKSIZE of Rowan's readings family in bytes (0: Rowan's default, 8 KiB)\n"
                  "  --csv FILE: append every figure as CSV (bench/plot.py reads it)\n"
                  "  --duck PYTHON: run DuckDB through bench/duck_peer.py with this interpreter\n"
                  "  --profile OP: run Rowan's OP alone, --lookups N times, for a profiler\n"
                  "  --parallel COPIES: issue 23's figures on that set (1 = the archive), Rowan"
                  " alone: scans with 1, 2 and 4 threads, salted and not\n");
  exit(1);
}

int main(int argc, char **argv) {
  config c;
  memset(&c, 0, sizeof c);
  c.data_dir = "data/beijing";
  c.work_dir = "/tmp/rowan-bench";
  c.runs = 5;
  c.load_runs = -1;
  c.fast_loads_above = -1;
  c.scaled[0] = 3;
  c.n_scaled = 1;
  c.batch_rows = 5000;
  c.lookups = 20000;
  c.ranges = 2000;
  c.seed = 42;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (i + 1 >= argc) usage();
    const char *v = argv[++i];
    if (!strcmp(a, "--data")) c.data_dir = v;
    else if (!strcmp(a, "--work")) c.work_dir = v;
    else if (!strcmp(a, "--runs")) c.runs = atoi(v);
    else if (!strcmp(a, "--load-runs")) c.load_runs = atoi(v);
    else if (!strcmp(a, "--load-once-above")) c.load_once_above = atoi(v);
    else if (!strcmp(a, "--fast-loads-above")) c.fast_loads_above = atoi(v);
    else if (!strcmp(a, "--scaled")) {
      c.n_scaled = 0;
      for (const char *p = v; *p && c.n_scaled < 8; p = strchr(p, ',') ? strchr(p, ',') + 1 : "") {
        int n = atoi(p);
        if (n > 1) c.scaled[c.n_scaled++] = n;
        else if (n < 0) usage();
      }
    }
    else if (!strcmp(a, "--synth")) c.synth_rows = strtoll(v, NULL, 10);
    else if (!strcmp(a, "--batch")) c.batch_rows = atoi(v);
    else if (!strcmp(a, "--lookups")) c.lookups = atoi(v);
    else if (!strcmp(a, "--ranges")) c.ranges = atoi(v);
    else if (!strcmp(a, "--seed")) c.seed = strtoull(v, NULL, 10);
    else if (!strcmp(a, "--profile")) c.profile = v;
    else if (!strcmp(a, "--parallel")) c.parallel = atoi(v);
    else if (!strcmp(a, "--csv")) c.csv_path = v;
    else if (!strcmp(a, "--duck")) bench_duck_python = *v ? v : NULL;
    else if (!strcmp(a, "--duck-threads")) bench_duck_threads = atoi(v);
    else if (!strcmp(a, "--duck-memory")) bench_duck_memory = v;
    else if (!strcmp(a, "--cache")) bench_cache_bytes = (size_t)atoi(v) << 20;
    else if (!strcmp(a, "--blocksize")) bench_block_size = (unsigned)atoi(v);
    else usage();
  }
  if (c.load_runs < 0) c.load_runs = c.runs;
  if (c.runs < 1 || c.runs > BENCH_MAX_RUNS || c.load_runs < 1 ||
      c.load_runs > BENCH_MAX_RUNS || c.batch_rows < 1 || c.lookups < 1 || c.ranges < 1 ||
      c.synth_rows < 0)
    usage();
  mkdir(c.work_dir, 0755);
  if (c.profile) { bench_run_profile(&c); return 0; }
  if (c.parallel > 0) {
    bench_print_machine(&c);
    return bench_parallel(&c, c.parallel) == 0 ? 0 : 1;
  }
  if (c.csv_path && !(csv_out = fopen(c.csv_path, "a"))) {
    fprintf(stderr, "bench: cannot open %s\n", c.csv_path);
    return 1;
  }
  bench_print_machine(&c);
  fflush(stdout);
  run_copies(&c, 1);
  for (int i = 0; i < c.n_scaled; i++) run_copies(&c, c.scaled[i]);
  if (c.synth_rows > 0) run_synth(&c);
  print_scaling();
  bench_duck_stop();
  if (csv_out) fclose(csv_out);
  for (int d = 0; d < n_done; d++) free(done[d]);
  return 0;
}
