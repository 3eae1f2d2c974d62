/*
** bench/bench_report.h: the figures of one data set (every repetition's value per engine)
** and how rowan_bench prints them: the median of the repetitions with their min-max
** spread, Rowan's ratio to each peer, the cost per row, and a machine-readable CSV line
** per figure and engine (--csv FILE, read by bench/plot.py).
**
** What it does not: measure anything (bench_main.c does) or decide what agrees.
*/
#ifndef ROWAN_BENCH_REPORT_H
#define ROWAN_BENCH_REPORT_H

#include <stdint.h>
#include <stdio.h>

#define BENCH_N_ENG 4      /* Rowan, SQLite, RocksDB, DuckDB: ORDER BENCH_ENG (bench_main.c) */
#define BENCH_MAX_RUNS 64  /* repetitions kept per figure and engine */

typedef struct bench_fig {
  char name[64];                   /* what is measured */
  const char *unit;                /* "rows/s", "us", "ms", "B/reading" */
  int higher_better;               /* 1: throughput-like, 0: latency/size-like */
  double per_rows;                 /* rows one value covers (cost per row); 0: none */
  double s[BENCH_N_ENG][BENCH_MAX_RUNS]; /* every repetition's value */
  int n[BENCH_N_ENG];              /* repetitions measured per engine */
  const char *na[BENCH_N_ENG];     /* why an engine has no value (printed instead), or NULL */
} bench_fig;

typedef struct bench_table {
  char ds[32];                     /* data set: archive, scaled3, ..., synth */
  int64_t rows;                    /* its rows */
  bench_fig fig[24];               /* the figures in print order */
  int n;                           /* entries used */
} bench_table;

/* Append a figure (every engine "-" until sampled). */
bench_fig *bench_fig_add(bench_table *t, const char *name, const char *unit, int higher,
                         double per_rows);
bench_fig *bench_fig_find(bench_table *t, const char *name);
/* Record one repetition's value of engine e (NAN values are ignored). */
void bench_fig_sample(bench_fig *f, int e, double v);
/* Median / min / max of engine e's repetitions; NAN when none. */
double bench_fig_median(const bench_fig *f, int e);
double bench_fig_min(const bench_fig *f, int e);
double bench_fig_max(const bench_fig *f, int e);
/* Nanoseconds per row of a value of f (NAN for sizes). */
double bench_fig_cost_ns(const bench_fig *f, double v);

double bench_median(double *v, int n);          /* sorts v */
double bench_percentile(double *v, int n, double p); /* 0..100, sorts v */
void bench_fmt(char *buf, size_t cap, double v, const char *na);

/* The table: medians [min-max] per engine, Rowan's ratios, then cost per row. */
void bench_table_print(const bench_table *t, const char *const names[BENCH_N_ENG]);
/* One CSV line per figure and engine with a value:
** dataset,rows,figure,unit,engine,median,min,max,runs,ns_per_row */
void bench_table_csv(FILE *out, const bench_table *t, const char *const names[BENCH_N_ENG]);

#endif /* ROWAN_BENCH_REPORT_H */
