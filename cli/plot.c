/*
** cli/plot.c: `.plot FILE.svg [QUERY]` (cli/plot.h): the command, the rows read into lines
** (the first column x, numeric columns y, text columns splitting the lines), units from
** column names, and the shell's hook for a `.plot` waiting for the next query
** (cli_plot_stmt, called by cli/shell.c instead of printing the rows). The chart itself is
** cli/plot_svg.c's.
**
** Not here: the drawing (cli/plot_svg.c).
*/
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cli/plot.h"
#include "cli/svg.h"

/* ---- units ------------------------------------------------------------------------------- */
/* Name suffixes (after the last '_') and the unit they stand for. ORDER: longest first
** where one is a suffix of another is not needed: the whole suffix is compared. */
static const struct {
  const char *suffix;
  const char *unit;
} units[] = {
    {"C", "\xC2\xB0" "C"}, {"DEGC", "\xC2\xB0" "C"}, {"F", "\xC2\xB0" "F"}, {"K", "K"},
    {"DEG", "\xC2\xB0"}, {"PCT", "%"}, {"PERCENT", "%"}, {"MM", "mm"}, {"CM", "cm"},
    {"M", "m"}, {"KM", "km"}, {"HPA", "hPa"}, {"KPA", "kPa"}, {"PA", "Pa"}, {"MPS", "m/s"},
    {"KMH", "km/h"}, {"UGM3", "\xC2\xB5g/m\xC2\xB3"}, {"MGM3", "mg/m\xC2\xB3"},
    {"PPM", "ppm"}, {"PPB", "ppb"}, {"S", "s"}, {"SEC", "s"}, {"MS", "ms"}, {"US", "\xC2\xB5s"},
    {"MIN", "min"}, {"H", "h"}, {"HOURS", "h"}, {"DAYS", "days"}, {"B", "B"},
    {"BYTES", "B"}, {"KB", "KB"}, {"MB", "MB"}, {"GB", "GB"}, {"W", "W"}, {"KW", "kW"},
    {"KWH", "kWh"}, {"V", "V"}, {"A", "A"}, {"HZ", "Hz"}, {"KG", "kg"}, {"G", "g"},
    {"L", "L"}, {"USD", "USD"}, {"EUR", "EUR"},
};

void plot_unit_of(const char *name, char *base, size_t base_cap, char *unit, size_t unit_cap) {
  snprintf(base, base_cap, "%s", name);
  unit[0] = 0;
  size_t n = strlen(base);
  while (n > 0 && base[n - 1] == ' ') base[--n] = 0;
  if (n > 2 && (base[n - 1] == ')' || base[n - 1] == ']')) { /* "RAIN (mm)", "T [C]" */
    char open = base[n - 1] == ')' ? '(' : '[';
    char *o = strrchr(base, open);
    if (o && o > base) {
      snprintf(unit, unit_cap, "%.*s", (int)(base + n - 1 - o - 1), o + 1);
      *o = 0;
      n = strlen(base);
      while (n > 0 && base[n - 1] == ' ') base[--n] = 0;
      return;
    }
  }
  char *us = strrchr(base, '_');
  if (!us || us == base || !us[1]) return;
  for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
    if (!strcasecmp(us + 1, units[i].suffix)) {
      snprintf(unit, unit_cap, "%s", units[i].unit);
      *us = 0;
      return;
    }
}

/* ---- rows into lines --------------------------------------------------------------------- */
enum { ROLE_SKIP = 0, ROLE_Y = 1, ROLE_KEY = 2 };

static bool decl_is(const char *decl, const char *prefix) {
  return decl && !strncasecmp(decl, prefix, strlen(prefix));
}

/* The line of (key text, column) in d, made when new; NULL past PLOT_MAX_SERIES. */
static plot_series *series_for(plot_data *d, const char *key, int col, const char *colname,
                               int n_y) {
  char name[160];
  if (key[0] && n_y > 1) snprintf(name, sizeof name, "%s %s", key, colname);
  else if (key[0]) snprintf(name, sizeof name, "%s", key);
  else snprintf(name, sizeof name, "%s", colname);
  for (int i = 0; i < d->n_series; i++)
    if (d->s[i].col == col && !strcmp(d->s[i].name, name)) return &d->s[i];
  if (d->n_series == PLOT_MAX_SERIES) return NULL;
  plot_series *s = &d->s[d->n_series++];
  memset(s, 0, sizeof *s);
  snprintf(s->name, sizeof s->name, "%s", name);
  s->col = col;
  return s;
}

static int add_point(plot_series *s, double x, double y, bool gap) {
  if (s->n == s->cap) {
    int nc = s->cap ? s->cap * 2 : 64;
    double *nx = realloc(s->x, (size_t)nc * sizeof *nx);
    if (nx) s->x = nx;
    double *ny = realloc(s->y, (size_t)nc * sizeof *ny);
    if (ny) s->y = ny;
    bool *ng = realloc(s->gap, (size_t)nc * sizeof *ng);
    if (ng) s->gap = ng;
    if (!nx || !ny || !ng) return -1;
    s->cap = nc;
  }
  s->x[s->n] = x;
  s->y[s->n] = y;
  s->gap[s->n] = gap;
  s->n++;
  return 0;
}

typedef struct xpt {
  double x, y;  /* the point */
  bool gap;     /* y was NULL */
  int i;        /* its row order (a stable sort) */
} xpt;

static int xpt_cmp(const void *a, const void *b) {
  const xpt *p = a, *q = b;
  if (p->x != q->x) return p->x < q->x ? -1 : 1;
  return (p->i > q->i) - (p->i < q->i);
}

/* Sort each line's points by x, keeping the row order of equal x. */
static int sort_series(plot_data *d) {
  for (int k = 0; k < d->n_series; k++) {
    plot_series *s = &d->s[k];
    xpt *t = malloc((size_t)(s->n ? s->n : 1) * sizeof *t);
    if (!t) return -1;
    for (int i = 0; i < s->n; i++) t[i] = (xpt){s->x[i], s->y[i], s->gap[i], i};
    qsort(t, (size_t)s->n, sizeof *t, xpt_cmp);
    for (int i = 0; i < s->n; i++) {
      s->x[i] = t[i].x;
      s->y[i] = t[i].y;
      s->gap[i] = t[i].gap;
    }
    free(t);
  }
  return 0;
}

static void data_free(plot_data *d) {
  for (int i = 0; i < d->n_series; i++) {
    free(d->s[i].x);
    free(d->s[i].y);
    free(d->s[i].gap);
  }
}

/* Read st's rows into d. ROWAN_DONE, a step's error, or ROWAN_ERROR with err set. */
static int read_rows(rowan_stmt *st, plot_data *d, char *err, size_t cap) {
  int nc = rowan_column_count(st);
  if (nc < 2) {
    snprintf(err, cap, "a chart needs two columns or more: x first, then the values");
    return ROWAN_ERROR;
  }
  if (nc > 256) nc = 256;
  int role[256];
  int n_y = 0;
  char ybase[256] = "", yunit[64] = "", xdecl[48] = "";
  const char *xd = NULL;
  bool units_differ = false;
  rowan_value v[256];
  int rc;
  char key[160];
  bool first = true;
  while ((rc = rowan_step(st)) == ROWAN_ROW) {
    d->rows++;
    if (rowan_column_values(st, 0, nc, v) != ROWAN_OK) continue;
    if (first) {
      first = false;
      /* declared types are read after the first step: a step may re-bind the statement */
      snprintf(d->xname, sizeof d->xname, "%s", rowan_column_name(st, 0));
      const char *x0 = rowan_column_decltype(st, 0);
      if (x0) xd = strncpy(xdecl, x0, sizeof xdecl - 1);
      for (int c = 1; c < nc; c++) {
        const char *decl = rowan_column_decltype(st, c);
        if (decl_is(decl, "VARCHAR") || decl_is(decl, "CHAR") || decl_is(decl, "DATE") ||
            decl_is(decl, "TIME") || decl_is(decl, "VARBINARY")) role[c] = ROLE_KEY;
        else if (decl) role[c] = ROLE_Y;
        else role[c] = ROLE_SKIP; /* decided by the value below */
      }
      if (v[0].type == ROWAN_TIMESTAMP || decl_is(xd, "TIMESTAMP")) d->xkind = PLOT_X_TIMESTAMP;
      else if (decl_is(xd, "DATE")) d->xkind = PLOT_X_DATE;
      else if (decl_is(xd, "TIME")) d->xkind = PLOT_X_TIME;
      else if (decl_is(xd, "DECIMAL") || v[0].type == ROWAN_INTEGER || v[0].type == ROWAN_FLOAT ||
               (v[0].type == ROWAN_NULL && xd && !decl_is(xd, "VARCHAR") && !decl_is(xd, "CHAR")))
        d->xkind = PLOT_X_NUMBER;
      else {
        snprintf(err, cap, "the first column, %s, is %s: the x axis must be a TIMESTAMP, DATE, "
                 "TIME or a number (put it first)", d->xname, xd ? xd : "text");
        return ROWAN_ERROR;
      }
      for (int c = 1; c < nc; c++) {
        if (role[c] == ROLE_SKIP)
          role[c] = v[c].type == ROWAN_TEXT || v[c].type == ROWAN_BLOB ? ROLE_KEY : ROLE_Y;
        if (role[c] != ROLE_Y) continue;
        n_y++;
        char base[160], unit[64];
        plot_unit_of(rowan_column_name(st, c), base, sizeof base, unit, sizeof unit);
        size_t bl = strlen(ybase);
        snprintf(ybase + bl, sizeof ybase - bl, "%s%s", bl ? ", " : "", base);
        if (n_y == 1) snprintf(yunit, sizeof yunit, "%s", unit);
        else if (strcmp(yunit, unit)) units_differ = true;
      }
      if (n_y == 0) {
        snprintf(err, cap, "no column after the first is a number: nothing to draw");
        return ROWAN_ERROR;
      }
    }
    if (v[0].type == ROWAN_NULL) {
      d->skipped++;
      continue;
    }
    double x;
    if (d->xkind == PLOT_X_TIMESTAMP || d->xkind == PLOT_X_DATE)
      x = (double)rowan_column_timestamp(st, 0);
    else if (d->xkind == PLOT_X_TIME) x = (double)rowan_column_int64(st, 0);
    else x = v[0].type == ROWAN_INTEGER ? (double)v[0].i : v[0].d;
    key[0] = 0;
    for (int c = 1; c < nc; c++) {
      if (role[c] != ROLE_KEY) continue;
      const char *t = rowan_column_text(st, c);
      size_t kl = strlen(key);
      snprintf(key + kl, sizeof key - kl, "%s%s", kl ? " " : "", t ? t : "NULL");
    }
    for (int c = 1; c < nc; c++) {
      if (role[c] != ROLE_Y) continue;
      plot_series *s = series_for(d, key, c, rowan_column_name(st, c), n_y);
      if (!s) {
        d->dropped++;
        continue;
      }
      bool gap = v[c].type == ROWAN_NULL;
      /* d is the value of a FLOAT, DOUBLE or DECIMAL (rowan_column_values) */
      double y = gap ? 0 : v[c].type == ROWAN_INTEGER ? (double)v[c].i : v[c].d;
      if (!gap && !isfinite(y)) gap = true; /* NaN and infinities: a gap */
      if (add_point(s, x, y, gap)) {
        snprintf(err, cap, "out of memory");
        return ROWAN_ERROR;
      }
    }
  }
  if (rc != ROWAN_DONE) return rc;
  if (first) {
    snprintf(err, cap, "the query returned no row: nothing to draw");
    return ROWAN_ERROR;
  }
  if (units_differ) snprintf(d->yname, sizeof d->yname, "%s", ybase);
  else if (yunit[0]) snprintf(d->yname, sizeof d->yname, "%s (%s)", ybase, yunit);
  else snprintf(d->yname, sizeof d->yname, "%s", ybase);
  if (d->xkind == PLOT_X_NUMBER) {
    char base[128];
    plot_unit_of(d->xname, base, sizeof base, d->xunit, sizeof d->xunit);
  }
  d->xmin = d->ymin = INFINITY;
  d->xmax = d->ymax = -INFINITY;
  for (int k = 0; k < d->n_series; k++)
    for (int i = 0; i < d->s[k].n; i++) {
      const plot_series *s = &d->s[k];
      if (s->x[i] < d->xmin) d->xmin = s->x[i];
      if (s->x[i] > d->xmax) d->xmax = s->x[i];
      if (s->gap[i]) continue;
      if (s->y[i] < d->ymin) d->ymin = s->y[i];
      if (s->y[i] > d->ymax) d->ymax = s->y[i];
    }
  if (sort_series(d)) {
    snprintf(err, cap, "out of memory");
    return ROWAN_ERROR;
  }
  return ROWAN_DONE;
}

int cli_plot_stmt(cli_shell *sh, rowan_stmt *st, const char *path, const char *sql,
                  uint64_t *rows) {
  plot_data *d = calloc(1, sizeof *d);
  if (!d) {
    cli_errorf(sh, ".plot: out of memory");
    return ROWAN_ERROR;
  }
  d->query = sql;
  char err[512] = "";
  int rc = read_rows(st, d, err, sizeof err);
  *rows = d->rows;
  if (rc == ROWAN_ERROR && err[0]) {
    cli_errorf(sh, ".plot: %s", err);
  } else if (rc == ROWAN_DONE && !isfinite(d->ymin)) {
    cli_errorf(sh, ".plot: every value is NULL: nothing to draw");
    rc = ROWAN_ERROR;
  } else if (rc == ROWAN_DONE && cli_plot_svg(d, path)) {
    cli_errorf(sh, ".plot: cannot write \"%s\"", path);
    rc = ROWAN_ERROR;
  } else if (rc == ROWAN_DONE) {
    uint64_t pts = 0;
    for (int i = 0; i < d->n_series; i++) pts += (uint64_t)d->s[i].n;
    char g1[32], g2[32];
    fprintf(sh->out, "wrote %s: %d line%s, %s points from %s rows", path, d->n_series,
            d->n_series == 1 ? "" : "s", cli_svg_grouped(pts, g1, sizeof g1),
            cli_svg_grouped(d->rows, g2, sizeof g2));
    if (d->skipped) fprintf(sh->out, " (%llu with a NULL %s left out)",
                            (unsigned long long)d->skipped, d->xname);
    fputc('\n', sh->out);
    if (d->dropped)
      fprintf(stderr, "Warning: .plot: more than %d lines; %llu values of the others not drawn\n",
              PLOT_MAX_SERIES, (unsigned long long)d->dropped);
  }
  data_free(d);
  free(d);
  return rc;
}

int cli_dot_plot(cli_shell *sh, int argc, char **argv) {
  if (argc != 2 && argc != 3)
    return cli_errorf(sh, "usage: .plot FILE.svg [QUERY] (without QUERY: the next query's rows)");
  if (!sh->db) return cli_errorf(sh, ".plot: no database open");
  if (argc == 2) { /* the next query */
    free(sh->plot_path);
    sh->plot_path = strdup(argv[1]);
    return sh->plot_path ? 0 : cli_errorf(sh, ".plot: out of memory");
  }
  rowan_stmt *st = NULL;
  const char *tail = NULL;
  if (rowan_prepare(sh->db, argv[2], -1, &st, &tail) != ROWAN_OK)
    return cli_errorf(sh, ".plot: %s", rowan_errmsg(sh->db));
  if (!st) return cli_errorf(sh, ".plot: the query is empty");
  uint64_t rows = 0;
  int rc = cli_plot_stmt(sh, st, argv[1], argv[2], &rows);
  if (rc != ROWAN_DONE && rc != ROWAN_ERROR) cli_errorf(sh, ".plot: %s", rowan_errmsg(sh->db));
  rowan_finalize(st);
  return rc == ROWAN_DONE ? 0 : 1;
}
