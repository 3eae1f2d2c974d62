/*
** cli/output.c: result rows in the shell's output modes.
**
** What it does: steps a prepared statement and prints its rows as
**  - table / box: aligned columns (display widths: East Asian wide characters take two
**    columns) in ASCII or Unicode boxes,
**    names centred in the header, numbers right-aligned, text left-aligned; control bytes
**    in a value (a newline, a tab) are shown escaped (\n, \t, \xNN) so a row stays one line;
**  - csv: fields separated by ',' and rows by "\r\n", quoted only where sqlite3 quotes
**    (a control byte, space, '"', '\'', DEL, the separator, or an empty string);
**  - tsv: raw values separated by tabs; list: raw values separated by '|';
**  - json: an array of objects, one a line, numbers and booleans unquoted, NULL as null;
**  - line: "name = value" per column, names right-aligned, a blank line between rows.
** Headers follow sh->headers (on by default for table/box, off for csv/tsv/list; json and
** line always name the columns); NULL prints as sh->nullvalue. EXPLAIN rows print as plain
** lines in every mode. A statement with no rows prints nothing (as sqlite3).
**
** What it does not: run dot commands or report errors (shell.c reports a failed step).
** Table and box modes hold the result in memory to size the columns; the others stream.
*/
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cli/shell.h"

/* ORDER CLI_MODE */
static const char *const cli_mode_names[CLI_MODE_COUNT] = {
    "table", "box", "csv", "tsv", "json", "line", "list", "column", "markdown"};

const char *cli_mode_name(int mode) {
  return mode >= 0 && mode < CLI_MODE_COUNT ? cli_mode_names[mode] : "?";
}

int cli_mode_lookup(const char *name) {
  for (int i = 0; i < CLI_MODE_COUNT; i++)
    if (strcmp(name, cli_mode_names[i]) == 0) return i;
  if (strcmp(name, "tabs") == 0) return CLI_MODE_TSV; /* sqlite3's name */
  return -1;
}

/* Bytes that make sqlite3 quote a CSV field. */
static bool csv_needs_quote(unsigned char c, char sep) {
  return c < 0x20 || c == ' ' || c == '"' || c == '\'' || c == 0x7f || c == (unsigned char)sep;
}

void cli_csv_field(FILE *out, const char *s, char sep) {
  bool quote = (*s == 0);
  for (const char *p = s; *p && !quote; p++) quote = csv_needs_quote((unsigned char)*p, sep);
  if (!quote) {
    fputs(s, out);
    return;
  }
  fputc('"', out);
  for (const char *p = s; *p; p++) {
    if (*p == '"') fputc('"', out);
    fputc(*p, out);
  }
  fputc('"', out);
}

void cli_json_string(FILE *out, const char *s, size_t n) {
  fputc('"', out);
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)s[i];
    switch (c) {
      case '"': fputs("\\\"", out); break;
      case '\\': fputs("\\\\", out); break;
      case '\n': fputs("\\n", out); break;
      case '\r': fputs("\\r", out); break;
      case '\t': fputs("\\t", out); break;
      case '\b': fputs("\\b", out); break;
      case '\f': fputs("\\f", out); break;
      default:
        if (c < 0x20 || c == 0x7f) fprintf(out, "\\u%04x", c);
        else fputc(c, out);
    }
  }
  fputc('"', out);
}

/* Columns taken by code point c on a terminal (a short form of wcwidth's tables, without
** needing a UTF-8 locale). */
static int char_width(uint32_t c) {
  if ((c >= 0x300 && c <= 0x36F) || (c >= 0x200B && c <= 0x200F) || c == 0xFE0F) return 0;
  if ((c >= 0x1100 && c <= 0x115F) || (c >= 0x2E80 && c <= 0x303E) ||
      (c >= 0x3041 && c <= 0x33FF) || (c >= 0x3400 && c <= 0x4DBF) ||
      (c >= 0x4E00 && c <= 0x9FFF) || (c >= 0xA000 && c <= 0xA4CF) ||
      (c >= 0xAC00 && c <= 0xD7A3) || (c >= 0xF900 && c <= 0xFAFF) ||
      (c >= 0xFE30 && c <= 0xFE4F) || (c >= 0xFF00 && c <= 0xFF60) ||
      (c >= 0xFFE0 && c <= 0xFFE6) || (c >= 0x1F300 && c <= 0x1F64F) ||
      (c >= 0x1F900 && c <= 0x1F9FF) || (c >= 0x20000 && c <= 0x3FFFD))
    return 2;
  return 1;
}

size_t cli_text_width(const char *s, size_t n) {
  const unsigned char *p = (const unsigned char *)s, *end = p + n;
  size_t w = 0;
  while (p < end) {
    unsigned char b = *p;
    int len = b < 0x80 ? 1 : (b >> 5) == 6 ? 2 : (b >> 4) == 14 ? 3 : (b >> 3) == 30 ? 4 : 0;
    if (len == 0 || p + len > end) { w++; p++; continue; } /* a stray byte: one column */
    uint32_t c = len == 1 ? b : (uint32_t)(b & (0x7F >> len));
    bool ok = true;
    for (int i = 1; i < len; i++) {
      if ((p[i] & 0xC0) != 0x80) { ok = false; break; }
      c = (c << 6) | (p[i] & 0x3F);
    }
    if (!ok) { w++; p++; continue; }
    w += (size_t)char_width(c);
    p += len;
  }
  return w;
}

static size_t text_width(const char *s) { return cli_text_width(s, strlen(s)); }

static void put_n(FILE *out, const char *s, size_t n) {
  for (size_t i = 0; i < n; i++) fputs(s, out);
}

bool cli_mode_default_headers(int mode) {
  return mode == CLI_MODE_TABLE || mode == CLI_MODE_BOX || mode == CLI_MODE_COLUMN ||
         mode == CLI_MODE_MARKDOWN;
}

static bool headers_on(const cli_shell *sh) {
  if (sh->headers >= 0) return sh->headers != 0;
  return cli_mode_default_headers(sh->mode);
}

/* A grid mode: the rows are held to size the columns. */
static bool grid_mode(int mode) {
  return mode == CLI_MODE_TABLE || mode == CLI_MODE_BOX || mode == CLI_MODE_COLUMN ||
         mode == CLI_MODE_MARKDOWN;
}

static bool is_number_col(rowan_stmt *st, int i) {
  int t = rowan_column_type(st, i);
  if (t == ROWAN_INTEGER || t == ROWAN_FLOAT) return true;
  const char *d = rowan_column_decltype(st, i);
  return t == ROWAN_TEXT && d && strncmp(d, "DECIMAL", 7) == 0;
}

/* ---- table and box: buffered ------------------------------------------------------------- */

enum { GRID_HEAD = 1, GRID_ROWS = 2, GRID_TAIL = 4, GRID_ALL = 7 };
/* Rows a grid mode holds to size its columns; the rows after them are printed as they
** come, at those widths (a longer value then widens its own line only), so a large result
** costs bounded memory, not all of it (sqlite3 holds every row). */
#define GRID_HOLD 10000

typedef struct grid {
  int ncol;        /* columns */
  size_t nrow;     /* rows held */
  size_t cap;      /* rows allocated */
  char **cells;    /* nrow * ncol strdup'ed texts */
  bool *right;     /* nrow * ncol: right-align (numbers) */
  size_t *width;   /* ncol: widest text, header included when shown */
} grid;

/* A copy of `s` fit for one grid line: each control byte (newline, tab, ...) becomes a
** visible escape (\n, \r, \t, else \xNN), so a value holding a newline cannot break the
** table's rows apart. NULL when out of memory. */
static char *grid_text(const char *s) {
  size_t n = 0;
  for (const unsigned char *p = (const unsigned char *)s; *p; p++)
    n += (*p < 0x20 || *p == 0x7f) ? 4 : 1;
  char *out = malloc(n + 1), *o = out;
  if (!out) return NULL;
  for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
    if (*p >= 0x20 && *p != 0x7f) { *o++ = (char)*p; continue; }
    const char *esc = *p == '\n' ? "\\n" : *p == '\r' ? "\\r" : *p == '\t' ? "\\t" : NULL;
    if (esc) { memcpy(o, esc, 2); o += 2; continue; }
    static const char hex[] = "0123456789abcdef";
    *o++ = '\\'; *o++ = 'x'; *o++ = hex[*p >> 4]; *o++ = hex[*p & 15];
  }
  *o = '\0';
  return out;
}

static void grid_free(grid *g) {
  for (size_t i = 0; i < g->nrow * (size_t)g->ncol; i++) free(g->cells[i]);
  free(g->cells);
  free(g->right);
  free(g->width);
}

/* Border pieces: left, fill, join, right for the top, the separator and the bottom line. */
typedef struct border {
  const char *h;                /* horizontal fill */
  const char *v;                /* vertical bar */
  const char *tl, *tj, *tr;     /* top: left, join, right */
  const char *ml, *mj, *mr;     /* middle: left, join, right */
  const char *bl, *bj, *br;     /* bottom: left, join, right */
} border;

static const border ascii_border = {"-", "|", "+", "+", "+", "+", "+", "+", "+", "+", "+"};
static const border box_border = {"\u2500", "\u2502", "\u250c", "\u252c", "\u2510",
                                  "\u251c", "\u253c", "\u2524", "\u2514", "\u2534", "\u2518"};

static void grid_rule(FILE *out, const grid *g, const border *b, const char *l, const char *j,
                      const char *r) {
  fputs(l, out);
  for (int c = 0; c < g->ncol; c++) {
    put_n(out, b->h, g->width[c] + 2);
    fputs(c + 1 < g->ncol ? j : r, out);
  }
  fputc('\n', out);
}

static void grid_cell(FILE *out, const char *s, size_t width, int align) {
  size_t w = text_width(s), pad = width > w ? width - w : 0;
  size_t left = align > 0 ? pad : align == 0 ? pad / 2 : 0;
  put_n(out, " ", left + 1);
  fputs(s, out);
  put_n(out, " ", pad - left + 1);
}

/* .mode column (sqlite3's): the columns two spaces apart, the names underlined with dashes,
** no borders; the last column is not padded. */
static void column_print(cli_shell *sh, rowan_stmt *st, const grid *g, bool hdr, int parts) {
  FILE *out = sh->out;
  for (int pass = hdr && (parts & GRID_HEAD) ? 0 : 2; pass < 2; pass++) {
    for (int c = 0; c < g->ncol; c++) {
      const char *name = rowan_column_name(st, c);
      const char *s = name ? name : "";
      size_t w = pass == 0 ? text_width(s) : g->width[c];
      if (c) fputs("  ", out);
      if (pass == 0) fputs(s, out);
      else put_n(out, "-", w);
      if (c + 1 < g->ncol && g->width[c] > w) put_n(out, " ", g->width[c] - w);
    }
    fputc('\n', out);
  }
  for (size_t r = 0; (parts & GRID_ROWS) && r < g->nrow; r++) {
    for (int c = 0; c < g->ncol; c++) {
      size_t k = r * (size_t)g->ncol + (size_t)c;
      size_t w = text_width(g->cells[k]), pad = g->width[c] > w ? g->width[c] - w : 0;
      if (c) fputs("  ", out);
      if (g->right[k]) put_n(out, " ", pad);
      fputs(g->cells[k], out);
      if (!g->right[k] && c + 1 < g->ncol) put_n(out, " ", pad);
    }
    fputc('\n', out);
  }
}

/* Print the parts (GRID_HEAD: top rule and names; GRID_ROWS: the rows held; GRID_TAIL:
** the bottom rule) of g, in the mode's style, at g's widths. */
static void grid_print(cli_shell *sh, rowan_stmt *st, const grid *g, bool hdr, int parts) {
  if (sh->mode == CLI_MODE_COLUMN) {
    column_print(sh, st, g, hdr, parts);
    return;
  }
  bool md = sh->mode == CLI_MODE_MARKDOWN; /* ASCII bars, the rule under the names only */
  const border *b = sh->mode == CLI_MODE_BOX ? &box_border : &ascii_border;
  if (md) {
    static const border md_border = {"-", "|", "|", "|", "|", "|", "|", "|", "|", "|", "|"};
    b = &md_border;
  }
  FILE *out = sh->out;
  if (!md && (parts & GRID_HEAD)) grid_rule(out, g, b, b->tl, b->tj, b->tr);
  if (hdr && (parts & GRID_HEAD)) {
    fputs(b->v, out);
    for (int c = 0; c < g->ncol; c++) {
      const char *name = rowan_column_name(st, c);
      grid_cell(out, name ? name : "", g->width[c], 0);
      fputs(b->v, out);
    }
    fputc('\n', out);
    grid_rule(out, g, b, b->ml, b->mj, b->mr);
  }
  for (size_t r = 0; (parts & GRID_ROWS) && r < g->nrow; r++) {
    fputs(b->v, out);
    for (int c = 0; c < g->ncol; c++) {
      size_t k = r * (size_t)g->ncol + (size_t)c;
      grid_cell(out, g->cells[k], g->width[c], g->right[k] ? 1 : -1);
      fputs(b->v, out);
    }
    fputc('\n', out);
  }
  if (!md && (parts & GRID_TAIL)) grid_rule(out, g, b, b->bl, b->bj, b->br);
}

/* Widen g's columns to the names (when shown) and the rows held. */
static void grid_widths(grid *g, rowan_stmt *st, bool hdr) {
  for (int c = 0; c < g->ncol; c++) {
    const char *name = rowan_column_name(st, c);
    if (hdr && name && text_width(name) > g->width[c]) g->width[c] = text_width(name);
    for (size_t r = 0; r < g->nrow; r++) {
      size_t w = text_width(g->cells[r * (size_t)g->ncol + (size_t)c]);
      if (w > g->width[c]) g->width[c] = w;
    }
  }
}

/* Free the rows held (the widths stay). */
static void grid_drop_rows(grid *g) {
  for (size_t k = 0; k < g->nrow * (size_t)g->ncol; k++) free(g->cells[k]);
  g->nrow = 0;
}

static int print_grid(cli_shell *sh, rowan_stmt *st, uint64_t *rows) {
  grid g = {rowan_column_count(st), 0, 0, NULL, NULL, NULL};
  bool hdr = headers_on(sh);
  int rc;
  g.width = calloc((size_t)g.ncol, sizeof *g.width);
  if (!g.width) return ROWAN_NOMEM;
  bool streaming = false;   /* past GRID_HOLD rows: widths fixed, rows printed as they come */
  uint64_t streamed = 0;    /* rows printed before the last batch held */
  while ((rc = rowan_step(st)) == ROWAN_ROW) {
    if (sh->row_hook) sh->row_hook(sh->row_hook_ctx, st);
    if (!streaming && g.nrow == GRID_HOLD) { /* size the columns on the rows held */
      grid_widths(&g, st, hdr);
      grid_print(sh, st, &g, hdr, GRID_HEAD | GRID_ROWS);
      streaming = true;
    }
    if (streaming && g.nrow > 0) { /* the rows held or the last row are out: drop them */
      streamed += g.nrow;
      grid_drop_rows(&g);
    }
    if (g.nrow == g.cap) {
      size_t cap = g.cap ? g.cap * 2 : 16;
      char **cells = realloc(g.cells, cap * (size_t)g.ncol * sizeof *cells);
      if (cells) g.cells = cells;
      bool *right = cells ? realloc(g.right, cap * (size_t)g.ncol * sizeof *right) : NULL;
      if (right) g.right = right;
      if (!cells || !right) { rc = ROWAN_NOMEM; break; }
      g.cap = cap;
    }
    bool ok = true;
    for (int c = 0; c < g.ncol; c++) {
      const char *t = rowan_column_text(st, c);
      size_t k = g.nrow * (size_t)g.ncol + (size_t)c;
      g.cells[k] = grid_text(t ? t : sh->nullvalue);
      g.right[k] = t && is_number_col(st, c);
      if (!g.cells[k]) ok = false; /* grid_free copes with NULL cells */
    }
    g.nrow++;
    if (!ok) { rc = ROWAN_NOMEM; break; }
    if (streaming) grid_print(sh, st, &g, hdr, GRID_ROWS);
  }
  if (rc == ROWAN_DONE && streaming) {
    grid_print(sh, st, &g, hdr, GRID_TAIL);
  } else if (rc == ROWAN_DONE && g.nrow > 0) {
    grid_widths(&g, st, hdr);
    grid_print(sh, st, &g, hdr, GRID_ALL);
  }
  *rows = streamed + g.nrow;
  grid_free(&g);
  return rc;
}

/* ---- streaming modes --------------------------------------------------------------------- */

static void print_json_value(cli_shell *sh, rowan_stmt *st, int c) {
  const char *t = rowan_column_text(st, c);
  int type = rowan_column_type(st, c);
  const char *d = rowan_column_decltype(st, c);
  if (!t) { fputs("null", sh->out); return; }
  if (d && strcmp(d, "BOOLEAN") == 0) {
    fputs(rowan_column_int64(st, c) ? "true" : "false", sh->out);
    return;
  }
  if (is_number_col(st, c)) {
    /* JSON has no NaN or infinities: those stay strings. */
    bool finite = strcmp(t, "NaN") != 0 && strstr(t, "Infinity") == NULL;
    if (finite) { fputs(t, sh->out); return; }
  }
  (void)type;
  cli_json_string(sh->out, t, (size_t)rowan_column_bytes(st, c));
}

static void print_stream_row(cli_shell *sh, rowan_stmt *st, int ncol, uint64_t n,
                             size_t name_w) {
  FILE *out = sh->out;
  switch (sh->mode) {
    case CLI_MODE_CSV:
      for (int c = 0; c < ncol; c++) {
        const char *t = rowan_column_text(st, c);
        if (c) fputc(',', out);
        if (t) cli_csv_field(out, t, ',');
        else fputs(sh->nullvalue, out);
      }
      fputs("\r\n", out);
      break;
    case CLI_MODE_JSON:
      fputs(n == 0 ? "[{" : ",\n{", out);
      for (int c = 0; c < ncol; c++) {
        const char *name = rowan_column_name(st, c);
        if (c) fputc(',', out);
        cli_json_string(out, name ? name : "", name ? strlen(name) : 0);
        fputc(':', out);
        print_json_value(sh, st, c);
      }
      fputc('}', out);
      break;
    case CLI_MODE_LINE:
      if (n > 0) fputc('\n', out);
      for (int c = 0; c < ncol; c++) {
        const char *name = rowan_column_name(st, c);
        const char *t = rowan_column_text(st, c);
        size_t w = text_width(name ? name : "");
        put_n(out, " ", name_w > w ? name_w - w : 0);
        fprintf(out, "%s = %s\n", name ? name : "", t ? t : sh->nullvalue);
      }
      break;
    default: { /* tsv, list */
      char sep = sh->mode == CLI_MODE_TSV ? '\t' : '|';
      for (int c = 0; c < ncol; c++) {
        const char *t = rowan_column_text(st, c);
        if (c) fputc(sep, out);
        fputs(t ? t : sh->nullvalue, out);
      }
      fputc('\n', out);
    }
  }
}

static void print_stream_header(cli_shell *sh, rowan_stmt *st, int ncol) {
  FILE *out = sh->out;
  for (int c = 0; c < ncol; c++) {
    const char *name = rowan_column_name(st, c);
    if (!name) name = "";
    if (sh->mode == CLI_MODE_CSV) {
      if (c) fputc(',', out);
      cli_csv_field(out, name, ',');
    } else {
      if (c) fputc(sh->mode == CLI_MODE_TSV ? '\t' : '|', out);
      fputs(name, out);
    }
  }
  fputs(sh->mode == CLI_MODE_CSV ? "\r\n" : "\n", out);
}

int cli_print_rows(cli_shell *sh, rowan_stmt *st, bool explain, uint64_t *rows) {
  int ncol = rowan_column_count(st);
  int rc;
  uint64_t n = 0;
  *rows = 0;
  if (explain) {
    while ((rc = rowan_step(st)) == ROWAN_ROW) {
    if (sh->row_hook) sh->row_hook(sh->row_hook_ctx, st);
      const char *t = rowan_column_text(st, 0);
      fprintf(sh->out, "%s\n", t ? t : sh->nullvalue);
      n++;
    }
    *rows = n;
    return rc;
  }
  if (grid_mode(sh->mode)) return print_grid(sh, st, rows);
  size_t name_w = 0;
  for (int c = 0; c < ncol; c++) {
    const char *name = rowan_column_name(st, c);
    size_t w = text_width(name ? name : "");
    if (w > name_w) name_w = w;
  }
  bool hdr = headers_on(sh) && sh->mode != CLI_MODE_JSON && sh->mode != CLI_MODE_LINE;
  while ((rc = rowan_step(st)) == ROWAN_ROW) {
    if (sh->row_hook) sh->row_hook(sh->row_hook_ctx, st);
    if (n == 0 && hdr) print_stream_header(sh, st, ncol);
    print_stream_row(sh, st, ncol, n, name_w);
    n++;
  }
  if (sh->mode == CLI_MODE_JSON && n > 0) fputs("]\n", sh->out);
  *rows = n;
  return rc;
}
