/*
** cli/svg.h: a small writer of SVG 1.1 files for the shell's pictures (.keymap, .plot):
** the document's frame with a fixed width and height in pixels, rectangles, lines,
** polylines, circles and text, every attribute and text escaped so the file is well-formed
** XML whatever the data holds (control bytes and invalid UTF-8 in a value become U+FFFD).
** Numbers are written with at most two decimals. A write error is remembered and reported
** by cli_svg_close.
**
** Not here: what is drawn (cli/keymap*.c, cli/plot*.c), fonts (the viewer's sans-serif).
*/
#ifndef ROWAN_CLI_SVG_H
#define ROWAN_CLI_SVG_H

#include <stdbool.h>
#include <stdio.h>

typedef struct cli_svg {
  FILE *f;          /* the file being written */
  int width;        /* the picture's width in pixels */
  int height;       /* its height */
} cli_svg;

/* Create `path` (truncated) and write the header: an <svg> of width x height pixels with
** the style sheet css (may be NULL) and a <title>. 0, or -1 (errno says why; nothing
** open). */
int cli_svg_open(cli_svg *s, const char *path, int width, int height, const char *title,
                 const char *css);
/* Write the closing tag and close the file: 0, or -1 when any write failed. */
int cli_svg_close(cli_svg *s);

/* Text escaped for XML character data and attribute values (& < > " ' and bytes that are
** not valid XML characters). */
void cli_svg_escape(FILE *f, const char *s);

/* <rect x y width height class [extra attributes]>, then a <title> tooltip (may be NULL)
** and </rect>. cls may be NULL; attrs is written verbatim (the caller escapes, may be
** NULL). */
void cli_svg_rect(cli_svg *s, double x, double y, double w, double h, const char *cls,
                  const char *attrs, const char *tooltip);
/* <line>. */
void cli_svg_line(cli_svg *s, double x1, double y1, double x2, double y2, const char *cls);
/* <text x y class text-anchor>: anchor is "start", "middle" or "end"; the printf-formatted
** text is escaped. */
void cli_svg_text(cli_svg *s, double x, double y, const char *cls, const char *anchor,
                  const char *fmt, ...) __attribute__((format(printf, 6, 7)));
/* The same, rotated by -90 degrees about (x, y) (a vertical axis title). */
void cli_svg_vtext(cli_svg *s, double x, double y, const char *cls, const char *text);
/* <circle>. */
void cli_svg_circle(cli_svg *s, double cx, double cy, double r, const char *cls,
                    const char *style);
/* A polyline through n points (xs[i], ys[i]) with class cls and extra style (may be
** NULL). n < 2: nothing. */
void cli_svg_polyline(cli_svg *s, const double *xs, const double *ys, int n, const char *cls,
                      const char *style);

/* Format n with thousands separators ("420,768") into buf. */
const char *cli_svg_grouped(unsigned long long n, char *buf, size_t cap);
/* Format a byte count ("11.6 MB", "512 B") into buf, as EXPLAIN does. */
const char *cli_svg_bytes(unsigned long long n, char *buf, size_t cap);

#endif /* ROWAN_CLI_SVG_H */
