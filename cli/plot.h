/*
** cli/plot.h: the shell's line chart of a query result, `.plot FILE.svg [QUERY]`, shared
** by cli/plot.c (reading the rows into series, units from column names, the command) and
** cli/plot_svg.c (axes, ticks, lines, legend).
**
** A result plots when its first column is the x axis (TIMESTAMP, DATE, TIME or a number)
** and the others are numbers (one line each) or text (each distinct combination of the
** text columns' values is a line of its own: a long result such as DAY, STATION, TEMP_C
** draws one line per station). NULL y values break a line; rows with a NULL x are
** skipped. Each line's points are drawn in x order.
**
** Units come from the column names (plot_unit_of): a trailing "(unit)" or "[unit]" in a
** quoted name, or a known suffix after the last underscore (TEMP_C is degrees Celsius, PM25_UGM3
** micrograms per cubic metre); docs/SHELL.md lists the suffixes.
**
** Not here: SVG syntax (cli/svg.c).
*/
#ifndef ROWAN_CLI_PLOT_H
#define ROWAN_CLI_PLOT_H

#include <stdbool.h>
#include <stdint.h>

#include "cli/shell.h"

#define PLOT_MAX_SERIES 64 /* lines in one chart */

/* How the x axis reads its values. */
enum plot_xkind {
  PLOT_X_NUMBER = 0,    /* numbers as they are */
  PLOT_X_TIMESTAMP = 1, /* ms since the epoch (TIMESTAMP), calendar ticks */
  PLOT_X_DATE = 2,      /* ms since the epoch of midnight (DATE), calendar ticks */
  PLOT_X_TIME = 3       /* ms since midnight (TIME) */
};

/* One line. */
typedef struct plot_series {
  char name[160];       /* its legend: the text columns' values and/or the column's name */
  int col;              /* the result column of its y values */
  double *x, *y;        /* its points (y NaN: NULL, a gap) */
  bool *gap;            /* per point: y was NULL */
  int n, cap;           /* points / allocated */
} plot_series;

typedef struct plot_data {
  const char *query;    /* the query's text (the chart's subtitle), or NULL */
  char xname[128];      /* the x column's name */
  char xunit[32];       /* its unit, or "" */
  int xkind;            /* enum plot_xkind */
  char yname[400];      /* the y axis title: the numeric columns' names and their unit */
  plot_series s[PLOT_MAX_SERIES]; /* the lines */
  int n_series;
  uint64_t rows;        /* rows read */
  uint64_t skipped;     /* rows with a NULL x (not drawn) */
  uint64_t dropped;     /* rows of lines past PLOT_MAX_SERIES (not drawn) */
  double xmin, xmax, ymin, ymax; /* the data's extent (NaN when there is no point) */
} plot_data;

/* .plot FILE.svg [QUERY]: with QUERY, run it and draw its rows; without, the next query's
** rows are drawn instead of printed (sh->plot_path). 0, or 1 with a message printed. */
int cli_dot_plot(cli_shell *sh, int argc, char **argv);

/* Draw the rows of prepared statement st (stepped here to its end) into path, and print a
** one-line summary to sh->out. sql: the statement's text (a subtitle), may be NULL.
** *rows gets the rows read. Returns ROWAN_DONE, or a step's error (the message is the
** connection's), or ROWAN_ERROR with a message printed when the rows do not plot or the
** file cannot be written. */
int cli_plot_stmt(cli_shell *sh, rowan_stmt *st, const char *path, const char *sql,
                  uint64_t *rows);

/* The unit in a column name: "TEMP_C" -> "°C" (base "TEMP"), "\"RAIN (mm)\"" -> "mm";
** writes the unit (or "") and the name without it into unit and base. */
void plot_unit_of(const char *name, char *base, size_t base_cap, char *unit, size_t unit_cap);

/* Write the chart: 0, or -1 (errno). plot_svg.c. */
int cli_plot_svg(const plot_data *d, const char *path);

#endif /* ROWAN_CLI_PLOT_H */
