/*
** bench/bench_profile.c: two parts of rowan_bench apart from the comparison: --profile OP
** (Rowan alone, one operation repeated, for perf record) and the machine and settings
** lines printed above the tables.
**
** What it does not: compare engines or print figures (bench_main.c, bench_report.c).
*/
#include "bench_run.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <sqlite3.h>

#include "rowan.h"

/* ---- profiling ------------------------------------------------------------------- */

/* --profile OP: Rowan alone, on the archive, one operation (load, bulk, lookup, latest,
** day, scan, daily; reads: the comparison's read rounds, --runs of them; synth: the bulk
** load of the --synth ROWS set) repeated, nothing
** compared or printed but the time: for perf record. The database of a query profile stays
** in WORK/profile/ for the next one (delete it after a change to the engine). */
void bench_run_profile(const config *c) {
  bench_input in;
  char work[4096], dir[4096];
  /* --scaled N (N > 1) profiles the scaled set of N copies, as run_dataset builds it */
  int copies = c->n_scaled && c->scaled[0] > 1 ? c->scaled[0] : 1;
  if (copies > 1) snprintf(work, sizeof work, "%s/input-scaled%d", c->work_dir, copies);
  else snprintf(work, sizeof work, "%s/input-archive", c->work_dir);
  if (bench_input_prepare(c->data_dir, work, copies, &in) != 0) bench_die("cannot prepare the input");
  bench_db_dir(dir, sizeof dir, c, copies > 1 ? "profile-scaled" : "profile", "Rowan", "plain", 0);
  const char *na = NULL;
  uint64_t bytes = 0;
  double t0 = bench_now_s();
  struct stat sb;
  /* a query profile reuses the database a previous one loaded, so the profile is the query */
  if (!strcmp(c->profile, "bulk-index")) {
    const char *na_i = NULL;
    bench_db_dir(dir, sizeof dir, c, copies > 1 ? "profile-scaled" : "profile", "Rowan", "bulk-index", 0);
    for (int i = 0; i < c->lookups; i++) bench_load_once(c, &bench_rowan, &in, dir, 1, 1, NULL, &na_i);
    bench_rmtree(dir);
    bench_input_free(&in);
    return;
  }
  if (!strcmp(c->profile, "synth")) { /* the --synth set's bulk load alone, no peers */
    bench_input_free(&in);
    snprintf(work, sizeof work, "%s/input-archive", c->work_dir);
    if (bench_input_synth(c->data_dir, work, c->synth_rows > 0 ? c->synth_rows : 1, &in) != 0)
      bench_die("cannot prepare the synthetic set");
    bench_db_dir(dir, sizeof dir, c, "profile-synth", "Rowan", "bulk", 0);
    for (int i = 0; i < c->lookups; i++) bench_bulk_once(c, &in, dir, 0, NULL);
    bench_input_free(&in);
    return;
  }
  if (!strcmp(c->profile, "bulk")) {
    bench_db_dir(dir, sizeof dir, c, copies > 1 ? "profile-scaled" : "profile", "Rowan", "bulk", 0);
    for (int i = 0; i < c->lookups; i++) bench_bulk_once(c, &in, dir, 0, NULL);
    bench_input_free(&in);
    return;
  }
  /* --fast-loads-above K on a set of more than K copies: the query profiles read the bulk
     load, finished as the comparison's is (its reads are on that store there) */
  bool bulk = c->fast_loads_above >= 0 && copies > c->fast_loads_above &&
              strcmp(c->profile, "load") != 0;
  if (bulk) {
    bench_db_dir(dir, sizeof dir, c, "profile-scaled", "Rowan", "bulk-kept", 0);
    if (stat(dir, &sb) != 0) bench_bulk_once(c, &in, dir, 1, &bytes);
  } else if (!strcmp(c->profile, "load") || stat(dir, &sb) != 0) {
    bench_load_once(c, &bench_rowan, &in, dir, 0, 0, strcmp(c->profile, "load") ? &bytes : NULL, &na);
  }
  if (!strcmp(c->profile, "load")) { bench_rmtree(dir); bench_input_free(&in); return; }
  void *h = NULL;
  if (bench_rowan.open(&h, dir) != 0) bench_die("cannot reopen");
  if (!strcmp(c->profile, "reads")) {
    bench_profile_reads(c, h, &in);
    bench_rowan.close(h);
    bench_input_free(&in);
    return;
  }
  bench_digest d = {0, 0};
  int64_t n = 0, hours = (in.ts_max - in.ts_min) / 3600000 + 1;
  bench_rng_seed(c->seed);
  t0 = bench_now_s();
  for (int i = 0; i < c->lookups; i++) {
    const char *st = in.stations[bench_rng_next() % (uint64_t)in.n_stations];
    int64_t ts = in.ts_min + (int64_t)(bench_rng_next() % (uint64_t)hours) * 3600000;
    int rc = 0;
    if (!strcmp(c->profile, "lookup")) rc = bench_rowan.lookup(h, st, ts, &d);
    else if (!strcmp(c->profile, "latest")) rc = bench_rowan.latest(h, st, 100, &d);
    else if (!strcmp(c->profile, "day")) rc = bench_rowan.range(h, st, ts - ts % 86400000, ts - ts % 86400000 + 86400000, &d);
    else if (!strcmp(c->profile, "scan")) rc = bench_rowan.count_temp_gt(h, 30.0, &n);
    else if (!strcmp(c->profile, "daily")) rc = bench_rowan.daily_avg(h, bench_ms_of(2016, 7, 1, 0), bench_ms_of(2016, 8, 1, 0), &d);
    else bench_die("unknown --profile operation");
    if (rc != 0) bench_die("query failed");
  }
  fprintf(stderr, "profile %s: %d calls in %.3f s (%lld rows)\n", c->profile, c->lookups,
          bench_now_s() - t0, (long long)d.rows);
  bench_rowan_print_cache(h, stderr);
  bench_rowan.close(h);
  bench_input_free(&in);
}

/* ---- machine ----------------------------------------------------------------------- */

void bench_print_machine(const config *c) {
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
  printf("settings: %zu MiB block/page cache per engine, read rounds %d, loads %d, %d rows per"
         " commit, %d lookups and %d range queries per run, seed %llu, databases in %s\n",
         bench_cache_bytes >> 20, c->runs, c->load_runs, c->batch_rows, c->lookups, c->ranges,
         (unsigned long long)c->seed, c->work_dir);
  if (bench_duck_python)
    printf("DuckDB: through %s (%s), threads=%d, memory_limit=%s\n", bench_duck_script,
           bench_duck_python, bench_duck_threads, bench_duck_memory);
  else
    printf("DuckDB: not run (no --duck PYTHON)\n");
}

