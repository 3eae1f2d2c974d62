/*
** cli/svg.c: the SVG writer of cli/svg.h. Each element is written as it is drawn (nothing
** is held in memory), numbers with %.2f trimmed, text through cli_svg_escape, which keeps
** the file well-formed XML 1.0: the five markup characters become entities, and every byte
** that does not start a valid UTF-8 sequence of an allowed character (C0 controls but tab,
** newline and return; overlong forms; surrogates; U+FFFE and U+FFFF) becomes U+FFFD.
**
** Not here: layout and drawing decisions (cli/keymap*.c, cli/plot*.c).
*/
#include <stdarg.h>
#include <stdint.h>
#include <string.h>

#include "cli/svg.h"

/* A number with at most two decimals, no trailing zeros. */
static void num(FILE *f, double v) {
  char b[64];
  if (v != v) v = 0; /* NaN: never written as such */
  snprintf(b, sizeof b, "%.2f", v);
  char *d = strchr(b, '.');
  if (d) {
    char *e = b + strlen(b) - 1;
    while (e > d && *e == '0') *e-- = 0;
    if (e == d) *e = 0;
  }
  if (!strcmp(b, "-0")) strcpy(b, "0");
  fputs(b, f);
}

/* Length of the valid UTF-8 sequence of an allowed XML character at p (0: invalid). */
static int utf8_ok(const unsigned char *p) {
  unsigned c = p[0];
  if (c < 0x80) return (c >= 0x20 || c == '\t' || c == '\n' || c == '\r') ? 1 : 0;
  int n;
  uint32_t cp;
  if (c >= 0xC2 && c <= 0xDF) {
    n = 2;
    cp = c & 0x1F;
  } else if (c >= 0xE0 && c <= 0xEF) {
    n = 3;
    cp = c & 0x0F;
  } else if (c >= 0xF0 && c <= 0xF4) {
    n = 4;
    cp = c & 0x07;
  } else {
    return 0;
  }
  for (int i = 1; i < n; i++) {
    if ((p[i] & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (p[i] & 0x3F);
  }
  if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10FFFF))) return 0;
  if ((cp >= 0xD800 && cp <= 0xDFFF) || cp == 0xFFFE || cp == 0xFFFF) return 0;
  return n;
}

void cli_svg_escape(FILE *f, const char *s) {
  const unsigned char *p = (const unsigned char *)s;
  while (*p) {
    switch (*p) {
      case '&': fputs("&amp;", f); p++; continue;
      case '<': fputs("&lt;", f); p++; continue;
      case '>': fputs("&gt;", f); p++; continue;
      case '"': fputs("&quot;", f); p++; continue;
      case '\'': fputs("&apos;", f); p++; continue;
      default: break;
    }
    int n = utf8_ok(p);
    if (n == 0) {
      fputs("\xEF\xBF\xBD", f); /* U+FFFD */
      p++;
      continue;
    }
    fwrite(p, 1, (size_t)n, f);
    p += n;
  }
}

int cli_svg_open(cli_svg *s, const char *path, int width, int height, const char *title,
                 const char *css) {
  memset(s, 0, sizeof *s);
  s->f = fopen(path, "w");
  if (!s->f) return -1;
  s->width = width;
  s->height = height;
  fprintf(s->f,
          "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
          "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"%d\" "
          "height=\"%d\" viewBox=\"0 0 %d %d\">\n<title>",
          width, height, width, height);
  cli_svg_escape(s->f, title ? title : "");
  fputs("</title>\n", s->f);
  if (css) {
    fputs("<style>\n", s->f);
    cli_svg_escape(s->f, css); /* no markup in a style sheet: escaping keeps it inert */
    fputs("\n</style>\n", s->f);
  }
  fprintf(s->f, "<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%d\" fill=\"#ffffff\"/>\n", width,
          height);
  return 0;
}

int cli_svg_close(cli_svg *s) {
  if (!s->f) return -1;
  fputs("</svg>\n", s->f);
  int bad = ferror(s->f);
  if (fclose(s->f) != 0) bad = 1;
  s->f = NULL;
  return bad ? -1 : 0;
}

void cli_svg_rect(cli_svg *s, double x, double y, double w, double h, const char *cls,
                  const char *attrs, const char *tooltip) {
  FILE *f = s->f;
  fputs("<rect x=\"", f);
  num(f, x);
  fputs("\" y=\"", f);
  num(f, y);
  fputs("\" width=\"", f);
  num(f, w < 0 ? 0 : w);
  fputs("\" height=\"", f);
  num(f, h < 0 ? 0 : h);
  fputc('"', f);
  if (cls) fprintf(f, " class=\"%s\"", cls);
  if (attrs) fprintf(f, " %s", attrs);
  if (!tooltip) {
    fputs("/>\n", f);
    return;
  }
  fputs("><title>", f);
  cli_svg_escape(f, tooltip);
  fputs("</title></rect>\n", f);
}

void cli_svg_line(cli_svg *s, double x1, double y1, double x2, double y2, const char *cls) {
  FILE *f = s->f;
  fputs("<line x1=\"", f);
  num(f, x1);
  fputs("\" y1=\"", f);
  num(f, y1);
  fputs("\" x2=\"", f);
  num(f, x2);
  fputs("\" y2=\"", f);
  num(f, y2);
  fprintf(f, "\" class=\"%s\"/>\n", cls ? cls : "");
}

void cli_svg_text(cli_svg *s, double x, double y, const char *cls, const char *anchor,
                  const char *fmt, ...) {
  char buf[2048];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  FILE *f = s->f;
  fputs("<text x=\"", f);
  num(f, x);
  fputs("\" y=\"", f);
  num(f, y);
  fprintf(f, "\" class=\"%s\" text-anchor=\"%s\">", cls ? cls : "", anchor ? anchor : "start");
  cli_svg_escape(f, buf);
  fputs("</text>\n", f);
}

void cli_svg_vtext(cli_svg *s, double x, double y, const char *cls, const char *text) {
  FILE *f = s->f;
  fputs("<text x=\"", f);
  num(f, x);
  fputs("\" y=\"", f);
  num(f, y);
  fputs("\" transform=\"rotate(-90 ", f);
  num(f, x);
  fputc(' ', f);
  num(f, y);
  fprintf(f, ")\" class=\"%s\" text-anchor=\"middle\">", cls ? cls : "");
  cli_svg_escape(f, text);
  fputs("</text>\n", f);
}

void cli_svg_circle(cli_svg *s, double cx, double cy, double r, const char *cls,
                    const char *style) {
  FILE *f = s->f;
  fputs("<circle cx=\"", f);
  num(f, cx);
  fputs("\" cy=\"", f);
  num(f, cy);
  fputs("\" r=\"", f);
  num(f, r);
  fputc('"', f);
  if (cls) fprintf(f, " class=\"%s\"", cls);
  if (style) fprintf(f, " style=\"%s\"", style);
  fputs("/>\n", f);
}

void cli_svg_polyline(cli_svg *s, const double *xs, const double *ys, int n, const char *cls,
                      const char *style) {
  if (n < 2) return;
  FILE *f = s->f;
  fputs("<polyline points=\"", f);
  for (int i = 0; i < n; i++) {
    if (i) fputc(' ', f);
    num(f, xs[i]);
    fputc(',', f);
    num(f, ys[i]);
  }
  fputc('"', f);
  if (cls) fprintf(f, " class=\"%s\"", cls);
  if (style) fprintf(f, " style=\"%s\"", style);
  fputs("/>\n", f);
}

const char *cli_svg_grouped(unsigned long long n, char *buf, size_t cap) {
  char t[32];
  snprintf(t, sizeof t, "%llu", n);
  size_t len = strlen(t), o = 0;
  for (size_t i = 0; i < len && o + 2 < cap; i++) {
    buf[o++] = t[i];
    size_t left = len - i - 1;
    if (left && left % 3 == 0) buf[o++] = ',';
  }
  buf[o] = 0;
  return buf;
}

const char *cli_svg_bytes(unsigned long long n, char *buf, size_t cap) {
  if (n < 1024) snprintf(buf, cap, "%llu B", n);
  else if (n < (1ull << 20)) snprintf(buf, cap, "%.1f KB", (double)n / 1024);
  else if (n < (1ull << 30)) snprintf(buf, cap, "%.1f MB", (double)n / (1 << 20));
  else snprintf(buf, cap, "%.1f GB", (double)n / (1 << 30));
  return buf;
}
