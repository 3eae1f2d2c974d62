/*
** cli/plot_svg.c: the SVG line chart of `.plot` (cli/plot.h): 960 x 540 pixels; a title
** (the y columns against the x column) and the query under it; the plot area with grid
** lines at "nice" ticks (numbers: steps of 1, 2, 2.5 or 5 times a power of ten; times:
** calendar steps from a second to a century, labels as precise as the step needs: years,
** months, days, or hours and minutes) and tick labels; axis titles with units; one
** polyline per line, broken at NULLs, with a dot per point when a line has 60 points or
** fewer; the legend on the right.
**
** Each line's <polyline>s carry data-series (its legend text) and data-points (its points
** in the chart), so a program can check the picture against the query's rows.
**
** Not here: reading the rows (cli/plot.c), SVG syntax (cli/svg.c).
*/
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/plot.h"
#include "cli/svg.h"

#define PW 960
#define PH 540
#define L 80.0     /* plot area: left */
#define R 760.0    /* right (the legend is past it) */
#define T 70.0     /* top */
#define B 470.0    /* bottom */
#define MAXT 64    /* ticks at most */

static const char *const CSS =
    "text{font-family:sans-serif;font-size:12px;fill:#222}"
    ".t{font-size:16px;font-weight:bold}.q{font-family:monospace;font-size:11px;fill:#555}"
    ".a{font-size:13px}.grid{stroke:#e3e3e3;stroke-width:1}"
    ".axis{stroke:#444;stroke-width:1}.ln{fill:none;stroke-width:1.6;stroke-linejoin:round}";

static const char *const palette[12] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728",
                                        "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
                                        "#bcbd22", "#17becf", "#393b79", "#637939"};

/* ---- ticks --------------------------------------------------------------------------------- */
typedef struct ticks {
  double v[MAXT];   /* tick values */
  char text[MAXT][32]; /* their labels */
  int n;            /* count */
  double lo, hi;    /* the axis' extent */
} ticks;

/* Nice ticks for numbers over [lo, hi] (widened to whole steps when `widen`). */
static void num_ticks(double lo, double hi, bool widen, ticks *t) {
  if (!(hi > lo)) {
    double d = fabs(lo) > 0 ? fabs(lo) * 0.1 : 1;
    lo -= d;
    hi += d;
  }
  double raw = (hi - lo) / 6, mag = pow(10, floor(log10(raw))), step = mag;
  static const double mult[] = {1, 2, 2.5, 5, 10};
  for (int i = 0; i < 5; i++)
    if (mult[i] * mag >= raw) {
      step = mult[i] * mag;
      break;
    }
  if (widen) {
    lo = floor(lo / step) * step;
    hi = ceil(hi / step) * step;
  }
  t->lo = lo;
  t->hi = hi;
  t->n = 0;
  int prec = step >= 1 ? 0 : (int)ceil(-log10(step) - 1e-9) + (fmod(step / mag, 1) ? 1 : 0);
  for (double v = ceil(lo / step - 1e-9) * step; v <= hi + step * 1e-9 && t->n < MAXT; v += step) {
    double r = fabs(v) < step * 1e-9 ? 0 : v;
    t->v[t->n] = r;
    snprintf(t->text[t->n], sizeof t->text[0], "%.*f", prec, r);
    t->n++;
  }
}

/* Days since 1970-01-01 of a civil date, and back (Howard Hinnant's algorithms). */
static int64_t days_from_civil(int64_t y, int m, int d) {
  y -= m <= 2;
  int64_t era = (y >= 0 ? y : y - 399) / 400;
  int64_t yoe = y - era * 400;
  int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

static void civil_from_days(int64_t z, int64_t *y, int *m, int *d) {
  z += 719468;
  int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  int64_t doe = z - era * 146097;
  int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  int64_t mp = (5 * doy + 2) / 153;
  *d = (int)(doy - (153 * mp + 2) / 5 + 1);
  *m = (int)(mp < 10 ? mp + 3 : mp - 9);
  *y = yoe + era * 400 + (*m <= 2);
}

#define MS_DAY 86400000.0

/* Format time value v (ms) for a step of `step` ms (months: step < 0, -n months). */
static void time_label(double v, double step, int xkind, double span, char *out, size_t cap) {
  int64_t ms = (int64_t)floor(v), days = (int64_t)floor(v / MS_DAY);
  int64_t y;
  int mo, d;
  civil_from_days(days, &y, &mo, &d);
  int64_t in_day = ms - days * (int64_t)MS_DAY;
  int hh = (int)(in_day / 3600000), mi = (int)(in_day / 60000 % 60), ss = (int)(in_day / 1000 % 60);
  if (xkind == PLOT_X_TIME) {
    if (step < 60000) snprintf(out, cap, "%02d:%02d:%02d", hh, mi, ss);
    else snprintf(out, cap, "%02d:%02d", hh, mi);
  } else if (step <= -12) {
    snprintf(out, cap, "%lld", (long long)y);
  } else if (step < 0) {
    snprintf(out, cap, "%04lld-%02d", (long long)y, mo);
  } else if (step >= MS_DAY) {
    snprintf(out, cap, "%04lld-%02d-%02d", (long long)y, mo, d);
  } else if (span > MS_DAY) {
    snprintf(out, cap, "%02d-%02d %02d:%02d", mo, d, hh, mi);
  } else if (step < 60000) {
    snprintf(out, cap, "%02d:%02d:%02d", hh, mi, ss);
  } else {
    snprintf(out, cap, "%02d:%02d", hh, mi);
  }
}

/* Calendar ticks over [lo, hi] (ms): the smallest step giving 8 ticks or fewer. */
static void time_ticks(double lo, double hi, int xkind, ticks *t) {
  static const double steps[] = {1e3, 2e3, 5e3, 1e4, 15e3, 3e4, 6e4, 12e4, 3e5, 6e5, 9e5, 18e5,
                                 36e5, 72e5, 108e5, 216e5, 432e5, MS_DAY, 2 * MS_DAY,
                                 7 * MS_DAY, 14 * MS_DAY};
  static const int months[] = {1, 2, 3, 6, 12, 24, 60, 120, 240, 600, 1200};
  if (!(hi > lo)) {
    lo -= 36e5;
    hi += 36e5;
  }
  t->lo = lo;
  t->hi = hi;
  t->n = 0;
  double span = hi - lo;
  for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++) {
    double st = steps[i];
    if (span / st > 8) continue;
    /* weeks start on Mondays (1970-01-05 is day 4) */
    double origin = st >= 7 * MS_DAY ? 4 * MS_DAY : 0;
    for (double v = ceil((lo - origin) / st) * st + origin; v <= hi && t->n < MAXT; v += st) {
      t->v[t->n] = v;
      time_label(v, st, xkind, span, t->text[t->n], sizeof t->text[0]);
      t->n++;
    }
    return;
  }
  int64_t y;
  int mo, d;
  civil_from_days((int64_t)floor(lo / MS_DAY), &y, &mo, &d);
  for (size_t i = 0; i < sizeof months / sizeof months[0]; i++) {
    int st = months[i];
    if (span / (st * 30.4 * MS_DAY) > 8 && i + 1 < sizeof months / sizeof months[0]) continue;
    int64_t mi = y * 12 + (mo - 1); /* months since year 0 */
    mi = (mi + st - 1) / st * st;
    for (;; mi += st) {
      double v = days_from_civil(mi / 12, (int)(mi % 12) + 1, 1) * MS_DAY;
      if (v < lo) continue;
      if (v > hi || t->n >= MAXT) break;
      t->v[t->n] = v;
      time_label(v, -st, xkind, span, t->text[t->n], sizeof t->text[0]);
      t->n++;
    }
    return;
  }
}

/* ---- the chart ------------------------------------------------------------------------------ */
static double px(const ticks *xt, double v) { return L + (v - xt->lo) / (xt->hi - xt->lo) * (R - L); }
static double py(const ticks *yt, double v) { return B - (v - yt->lo) / (yt->hi - yt->lo) * (B - T); }

/* One line: polylines between gaps, dots when few points. */
static void draw_series(cli_svg *s, const plot_series *se, int k, const ticks *xt,
                        const ticks *yt) {
  char style[128];
  const char *dash = k >= 12 ? ";stroke-dasharray:5,3" : "";
  snprintf(style, sizeof style, "stroke:%s%s", palette[k % 12], dash);
  double *xs = malloc((size_t)(se->n ? se->n : 1) * sizeof *xs);
  double *ys = malloc((size_t)(se->n ? se->n : 1) * sizeof *ys);
  if (!xs || !ys) {
    free(xs);
    free(ys);
    return;
  }
  int points = 0;
  for (int i = 0; i < se->n; i++) points += !se->gap[i];
  fprintf(s->f, "<g data-series=\"");
  cli_svg_escape(s->f, se->name);
  fprintf(s->f, "\" data-points=\"%d\">\n", points);
  int n = 0;
  for (int i = 0; i <= se->n; i++) {
    if (i == se->n || se->gap[i]) {
      if (n == 1) cli_svg_circle(s, xs[0], ys[0], 1.5, NULL, style); /* a lone point */
      cli_svg_polyline(s, xs, ys, n, "ln", style);
      n = 0;
      continue;
    }
    xs[n] = px(xt, se->x[i]);
    ys[n] = py(yt, se->y[i]);
    n++;
  }
  if (points <= 60) {
    char fill[64];
    snprintf(fill, sizeof fill, "fill:%s", palette[k % 12]);
    for (int i = 0; i < se->n; i++)
      if (!se->gap[i]) cli_svg_circle(s, px(xt, se->x[i]), py(yt, se->y[i]), 2.4, NULL, fill);
  }
  fputs("</g>\n", s->f);
  free(xs);
  free(ys);
}

int cli_plot_svg(const plot_data *d, const char *path) {
  ticks xt, yt;
  if (d->xkind == PLOT_X_NUMBER) num_ticks(d->xmin, d->xmax, false, &xt);
  else time_ticks(d->xmin, d->xmax, d->xkind, &xt);
  num_ticks(d->ymin, d->ymax, true, &yt);
  cli_svg s;
  char title[600];
  snprintf(title, sizeof title, "%s by %s", d->yname, d->xname);
  if (cli_svg_open(&s, path, PW, PH, title, CSS)) return -1;
  cli_svg_text(&s, L, 26, "t", "start", "%s", title);
  if (d->query) {
    size_t n = strlen(d->query);
    cli_svg_text(&s, L, 44, "q", "start", "%.*s%s", (int)(n > 130 ? 127 : n), d->query,
                 n > 130 ? "..." : "");
  }
  for (int i = 0; i < yt.n; i++) { /* horizontal grid and y labels */
    double y = py(&yt, yt.v[i]);
    cli_svg_line(&s, L, y, R, y, "grid");
    cli_svg_text(&s, L - 6, y + 4, NULL, "end", "%s", yt.text[i]);
  }
  double last_end = -1e9;
  for (int i = 0; i < xt.n; i++) { /* vertical grid and x labels, none overlapping */
    double x = px(&xt, xt.v[i]);
    if (x < L - 0.5 || x > R + 0.5) continue;
    cli_svg_line(&s, x, T, x, B, "grid");
    double w = 6.6 * (double)strlen(xt.text[i]);
    if (x - w / 2 < last_end) continue;
    cli_svg_line(&s, x, B, x, B + 5, "axis");
    cli_svg_text(&s, x, B + 18, NULL, "middle", "%s", xt.text[i]);
    last_end = x + w / 2 + 8;
  }
  cli_svg_line(&s, L, B, R, B, "axis");
  cli_svg_line(&s, L, T, L, B, "axis");
  char xt_title[192];
  if (d->xunit[0]) snprintf(xt_title, sizeof xt_title, "%s (%s)", d->xname, d->xunit);
  else snprintf(xt_title, sizeof xt_title, "%s", d->xname);
  cli_svg_text(&s, (L + R) / 2, B + 44, "a", "middle", "%s", xt_title);
  cli_svg_vtext(&s, 22, (T + B) / 2, "a", d->yname);
  for (int k = 0; k < d->n_series; k++) draw_series(&s, &d->s[k], k, &xt, &yt);
  /* the legend */
  int fit = (int)((PH - T - 20) / 18);
  for (int k = 0; k < d->n_series; k++) {
    double y = T + 8 + 18.0 * k;
    if (k == fit - 1 && d->n_series > fit) {
      cli_svg_text(&s, R + 20, y + 4, NULL, "start", "... and %d more", d->n_series - k);
      break;
    }
    char style[96];
    snprintf(style, sizeof style, "stroke:%s%s", palette[k % 12],
             k >= 12 ? ";stroke-dasharray:5,3" : "");
    double lx[2] = {R + 20, R + 44}, ly[2] = {y, y};
    cli_svg_polyline(&s, lx, ly, 2, "ln", style);
    char name[64];
    size_t nl = strlen(d->s[k].name);
    snprintf(name, sizeof name, "%.*s%s", (int)(nl > 22 ? 21 : nl), d->s[k].name,
             nl > 22 ? "..." : "");
    cli_svg_text(&s, R + 50, y + 4, NULL, "start", "%s", name);
  }
  return cli_svg_close(&s);
}
