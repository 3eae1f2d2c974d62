/*
** bench/bench_report.c: the figures of a data set and their printing (bench_report.h):
** medians with the min-max spread of the repetitions, Rowan's ratios to SQLite, RocksDB
** and DuckDB, the cost per row of each figure, and the --csv lines bench/plot.py reads.
**
** What it does not: time, compare results between engines, or judge targets.
*/
#include "bench_report.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

double bench_median(double *v, int n) {
  if (n <= 0) return NAN;
  for (int i = 0; i < n; i++) if (isnan(v[i])) return NAN;
  qsort(v, (size_t)n, sizeof *v, cmp_double);
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

double bench_percentile(double *v, int n, double p) {
  qsort(v, (size_t)n, sizeof *v, cmp_double);
  int i = (int)((double)(n - 1) * p / 100.0 + 0.5);
  return v[i];
}

bench_fig *bench_fig_add(bench_table *t, const char *name, const char *unit, int higher,
                         double per_rows) {
  bench_fig *f = &t->fig[t->n++];
  memset(f, 0, sizeof *f);
  snprintf(f->name, sizeof f->name, "%s", name);
  f->unit = unit;
  f->higher_better = higher;
  f->per_rows = per_rows;
  return f;
}

bench_fig *bench_fig_find(bench_table *t, const char *name) {
  for (int i = 0; i < t->n; i++) if (!strcmp(t->fig[i].name, name)) return &t->fig[i];
  return NULL;
}

void bench_fig_sample(bench_fig *f, int e, double v) {
  if (isnan(v) || f->n[e] >= BENCH_MAX_RUNS) return;
  f->s[e][f->n[e]++] = v;
}

double bench_fig_median(const bench_fig *f, int e) {
  double tmp[BENCH_MAX_RUNS];
  memcpy(tmp, f->s[e], sizeof(double) * (size_t)f->n[e]);
  return bench_median(tmp, f->n[e]);
}

double bench_fig_min(const bench_fig *f, int e) {
  double m = NAN;
  for (int i = 0; i < f->n[e]; i++) if (isnan(m) || f->s[e][i] < m) m = f->s[e][i];
  return m;
}

double bench_fig_max(const bench_fig *f, int e) {
  double m = NAN;
  for (int i = 0; i < f->n[e]; i++) if (isnan(m) || f->s[e][i] > m) m = f->s[e][i];
  return m;
}

double bench_fig_cost_ns(const bench_fig *f, double v) {
  if (!strcmp(f->unit, "rows/s")) return 1e9 / v;
  if (f->per_rows <= 0) return NAN;
  if (!strcmp(f->unit, "us")) return v * 1e3 / f->per_rows;
  if (!strcmp(f->unit, "ms")) return v * 1e6 / f->per_rows;
  return NAN;
}

void bench_fmt(char *buf, size_t cap, double v, const char *na) {
  if (isnan(v)) snprintf(buf, cap, "%s", na ? na : "-");
  else if (v >= 100000) snprintf(buf, cap, "%.0f", v);
  else if (v >= 100) snprintf(buf, cap, "%.1f", v);
  else snprintf(buf, cap, "%.2f", v);
}

/* "median [min-max]" with the values in millions when they are that large. */
static void fmt_spread(char *buf, size_t cap, const bench_fig *f, int e) {
  double m = bench_fig_median(f, e), lo = bench_fig_min(f, e), hi = bench_fig_max(f, e);
  if (isnan(m)) { snprintf(buf, cap, "%s", f->na[e] ? f->na[e] : "-"); return; }
  double k = m >= 1e6 ? 1e6 : 1;
  char a[32], b[32], c[32];
  bench_fmt(a, sizeof a, m / k, NULL);
  bench_fmt(b, sizeof b, lo / k, NULL);
  bench_fmt(c, sizeof c, hi / k, NULL);
  snprintf(buf, cap, "%s%s [%s-%s]", a, k > 1 ? "M" : "", b, c);
}

void bench_table_print(const bench_table *t, const char *const names[BENCH_N_ENG]) {
  printf("%-32s %-9s", "figure", "unit");
  for (int e = 0; e < BENCH_N_ENG; e++) printf(" %24s", names[e]);
  for (int e = 1; e < BENCH_N_ENG; e++) printf("  R/%-7.7s", names[e]);
  printf("\n");
  for (int i = 0; i < t->n; i++) {
    const bench_fig *f = &t->fig[i];
    printf("%-32s %-9s", f->name, f->unit);
    for (int e = 0; e < BENCH_N_ENG; e++) {
      char v[128];
      fmt_spread(v, sizeof v, f, e);
      printf(" %24s", v);
    }
    for (int e = 1; e < BENCH_N_ENG; e++) {
      char r[32];
      bench_fmt(r, sizeof r, bench_fig_median(f, 0) / bench_fig_median(f, e), "-");
      printf("  %9s", r);
    }
    printf("\n");
  }
  printf("\ncost per row, ns (median; rows: load and scan per table row, lookup per lookup,"
         " latest 100 / one day per returned row, daily average per row of the month)\n");
  printf("%-32s %12s", "figure", "rows");
  for (int e = 0; e < BENCH_N_ENG; e++) printf(" %12s", names[e]);
  printf("\n");
  for (int i = 0; i < t->n; i++) {
    const bench_fig *f = &t->fig[i];
    if (isnan(bench_fig_cost_ns(f, 1))) continue;
    char rows[32];
    if (!strcmp(f->unit, "rows/s")) snprintf(rows, sizeof rows, "table");
    else snprintf(rows, sizeof rows, "%.0f", f->per_rows);
    printf("%-32s %12s", f->name, rows);
    for (int e = 0; e < BENCH_N_ENG; e++) {
      char v[32];
      bench_fmt(v, sizeof v, bench_fig_cost_ns(f, bench_fig_median(f, e)), f->na[e]);
      printf(" %12s", v);
    }
    printf("\n");
  }
}

void bench_table_csv(FILE *out, const bench_table *t, const char *const names[BENCH_N_ENG]) {
  if (!out) return;
  for (int i = 0; i < t->n; i++) {
    const bench_fig *f = &t->fig[i];
    for (int e = 0; e < BENCH_N_ENG; e++) {
      double m = bench_fig_median(f, e);
      if (isnan(m)) continue;
      fprintf(out, "%s,%lld,\"%s\",%s,%s,%.9g,%.9g,%.9g,%d,%.9g\n", t->ds, (long long)t->rows,
              f->name, f->unit, names[e], m, bench_fig_min(f, e), bench_fig_max(f, e),
              f->n[e], bench_fig_cost_ns(f, m));
    }
  }
  fflush(out);
}
