/*
** bench/bench_run.h: what bench_main.c (the comparison) and bench_profile.c (--profile and
** the machine line) share inside rowan_bench: the run's settings, clocks, the query-key
** generator, database directories and the timed loads.
**
** What it does not: declare anything an engine needs (bench.h does).
*/
#ifndef ROWAN_BENCH_RUN_H
#define ROWAN_BENCH_RUN_H

#include <stdint.h>

#include "bench.h"

/* The archive's known answers (data/beijing/, see data/README.md). */
#define ARCHIVE_ROWS 420768
#define ARCHIVE_TEMP_GT_30 25587
#define ARCHIVE_TEMP_NULL 398

typedef struct config {
  const char *data_dir;            /* data/beijing */
  const char *work_dir;            /* where inputs and databases go */
  int runs;                        /* repetitions of every read round (median taken) */
  int load_runs;                   /* repetitions of every load (default: runs) */
  int load_once_above;             /* sets of more copies than this load once (0: no limit) */
  int fast_loads_above;            /* sets of more copies skip the slowest loads (-1: none) */
  int scaled[8];                   /* copies of each scaled data set, in order */
  int n_scaled;                    /* entries in scaled */
  int64_t synth_rows;              /* rows of the synthetic set (Rowan only); 0 = none */
  int batch_rows;                  /* rows per commit in every load */
  int lookups;                     /* point lookups per run */
  int ranges;                      /* range queries (latest 100, one day) per run */
  uint64_t seed;                   /* PRNG seed of the query keys */
  const char *profile;             /* NULL, or one Rowan operation to run alone (perf) */
  const char *csv_path;            /* --csv FILE: machine-readable figures, or NULL */
  int parallel;                    /* --parallel COPIES: issue 23's figures on that set
                                      (bench_parallel.c), nothing else; 0 = not asked */
} config;

/* --parallel (bench_parallel.c). 0, or -1 with a message on stderr. */
int bench_parallel(const config *c, int copies);

double bench_now_s(void);          /* monotonic wall clock */
double bench_cpu_s(void);          /* CPU of the process, every thread */
double bench_thread_cpu_s(void);   /* CPU of the calling thread */
void bench_die(const char *msg);   /* print and exit(2) */
void bench_rng_seed(uint64_t seed);
uint64_t bench_rng_next(void);     /* xorshift64* */

/* WORK/ds/eng-what-run */
void bench_db_dir(char *buf, size_t cap, const config *c, const char *ds, const char *eng,
                  const char *what, int run);
/* Load in into a fresh database of engine e (bulk: Rowan's bulk-load API); rows/s, or NAN
** with *na set when the engine lacks the variant (index); aborts on other failures. With
** bytes, finishes the database (flush, compaction) and stores its size; without, closes
** it (the index load is checked complete first). */
double bench_load_once(const config *c, const bench_engine *e, const bench_input *in,
                       const char *dir, int with_index, int bulk, uint64_t *bytes,
                       const char **na);
/* Rowan's bulk-load API into a fresh database; rows/s. Checks the known counts, aborts if
** wrong. keep: leave the database (flushed and compacted, its size in *bytes) for reads. */
double bench_bulk_once(const config *c, const bench_input *in, const char *dir, int keep,
                       uint64_t *bytes);

void bench_run_profile(const config *c);
/* --profile reads: c->runs read rounds of the comparison on Rowan alone (handle h). */
void bench_profile_reads(const config *c, void *h, const bench_input *in);
void bench_print_machine(const config *c);

#endif /* ROWAN_BENCH_RUN_H */
