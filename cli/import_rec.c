/*
** cli/import_rec.c: the record parser of the import (cli/import_int.h): bytes in, records
** with line numbers, raw text and fields out.
**
** CSV goes through libcsv in strict mode, RFC 4180: fields may be quoted, "" inside quotes
** is one quote, quoted fields may hold delimiters and line ends, records end at LF or CRLF.
** Spaces are part of a field (libcsv's trimming is switched off). An empty unquoted field
** is NULL; "" is the empty string. The input is handed to libcsv one line at a time so that
** each record knows the line it starts on and its raw text (for the reject file).
**
** Bad input and how it is reported: a quote inside an unquoted field or text after a
** closing quote ends libcsv's parse of that record. A one-line record is reported with an
** error and parsing resumes on the next line; a record that already spans several lines
** is taken to be a stray opening quote on its first line (below). An unterminated quote
** swallows the rest of the file, so at the end of the input (or when a record passes
** CLI_REC_MAX_BYTES) the line where the open record started is reported as an error and
** the lines after it are parsed again, so the good records after a stray quote still load.
** Every line of the input ends up in exactly one reported record or is blank.
**
** TSV: one record per line (LF or CRLF), fields split on the delimiter, no quoting or
** escapes; an empty field is NULL. A CSV line with no quote and no CR but its line end,
** starting a record, is split the same way without libcsv (split_line): the fields libcsv
** would give, without copying them.
**
** It does not know columns or types; cli/import.c checks field counts and values.
*/
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cli/import_int.h"

#define CSV_OPTS (CSV_STRICT | CSV_STRICT_FINI | CSV_EMPTY_IS_NULL)
#define MAX_RECOVERY_DEPTH 32 /* nested unterminated-quote recoveries before giving up on
                                 re-parsing and reporting the remaining lines together */

static int no_space(unsigned char c) {
  (void)c;
  return 0;
}

static int reserve(char **p, size_t *cap, size_t need) {
  if (need <= *cap) return 0;
  size_t c = *cap ? *cap : 256;
  while (c < need) c *= 2;
  char *q = realloc(*p, c);
  if (!q) return -1;
  *p = q;
  *cap = c;
  return 0;
}

static int append(cli_rec *r, char **p, size_t *n, size_t *cap, const char *s, size_t len) {
  if (reserve(p, cap, *n + len + 1) != 0) {
    r->nomem = 1;
    return -1;
  }
  memcpy(*p + *n, s, len);
  *n += len;
  return 0;
}

static int more_fields(cli_rec *r) {
  if (r->nf < r->nf_cap) return 0;
  int c = r->nf_cap ? r->nf_cap * 2 : 32;
  size_t *o = realloc(r->foff, (size_t)c * sizeof *o);
  if (o) r->foff = o;
  size_t *l = realloc(r->flen, (size_t)c * sizeof *l);
  if (l) r->flen = l;
  cli_field *v = realloc(r->fv, (size_t)c * sizeof *v);
  if (v) r->fv = v;
  if (!o || !l || !v) {
    r->nomem = 1;
    return -1;
  }
  r->nf_cap = c;
  return 0;
}

static int csv_reset(cli_rec *r) {
  if (r->csv_ready) csv_free(&r->csv);
  r->csv_ready = 0;
  if (csv_init(&r->csv, CSV_OPTS) != 0) {
    r->nomem = 1;
    return -1;
  }
  r->csv_ready = 1;
  csv_set_delim(&r->csv, r->delim);
  csv_set_space_func(&r->csv, no_space);
  return 0;
}

/* Hand one record to the callback, then forget the open record. */
static void emit(cli_rec *r, int64_t line, const char *raw, size_t raw_n, const char *error) {
  while (raw_n > 0 && (raw[raw_n - 1] == '\n' || raw[raw_n - 1] == '\r')) raw_n--;
  cli_record rec;
  rec.line = line;
  rec.raw = raw ? raw : "";
  rec.raw_n = raw_n;
  rec.error = error;
  rec.nfields = error ? 0 : r->nf;
  rec.fields = r->fv;
  if (!error && !r->direct) {
    for (int i = 0; i < r->nf; i++) {
      int null = r->foff[i] == SIZE_MAX;
      r->fv[i].is_null = null;
      r->fv[i].p = null ? NULL : r->fbuf + r->foff[i];
      r->fv[i].n = null ? 0 : r->flen[i];
    }
  }
  if (!r->stop && !r->nomem) r->stop = r->fn(r->ctx, &rec);
  r->nf = 0;
  r->fbuf_n = 0;
}

static void on_field(void *s, size_t len, void *ctx) {
  cli_rec *r = ctx;
  if (r->nomem || r->stop) return;
  if (r->open_start == 0) r->open_start = r->lineno + 1;
  if (more_fields(r) != 0) return;
  if (!s || (r->null_text && len == r->null_len && memcmp(s, r->null_text, len) == 0)) {
    r->foff[r->nf] = SIZE_MAX;
    r->flen[r->nf] = 0;
  } else {
    r->foff[r->nf] = r->fbuf_n;
    r->flen[r->nf] = len;
    if (append(r, &r->fbuf, &r->fbuf_n, &r->fbuf_cap, s, len) != 0) return;
  }
  r->nf++;
}

static void on_row(int c, void *ctx) {
  (void)c;
  cli_rec *r = ctx;
  if (r->nomem || r->stop) return;
  int64_t line = r->open_start ? r->open_start : r->lineno + 1;
  emit(r, line, r->raw, r->raw_n, NULL);
  r->raw_n = 0;
  r->open_start = 0;
}

static void process_line(cli_rec *r, const char *line, size_t n);

/* The open record cannot end well (unterminated quote, or too long): report its first
** line as bad and parse the lines after it again. */
static void recover(cli_rec *r, const char *reason) {
  char *raw = r->raw;
  size_t n = r->raw_n;
  int64_t start = r->open_start ? r->open_start : r->lineno;
  r->raw = NULL;
  r->raw_n = r->raw_cap = 0;
  r->open_start = 0;
  r->nf = 0;
  r->fbuf_n = 0;
  if (csv_reset(r) != 0) {
    free(raw);
    return;
  }
  const char *nl = raw ? memchr(raw, '\n', n) : NULL;
  size_t first = nl ? (size_t)(nl - raw) + 1 : n;
  emit(r, start, raw, first, reason);
  if (first < n && r->depth >= MAX_RECOVERY_DEPTH) {
    emit(r, start + 1, raw + first, n - first,
         "not parsed: follows too many unterminated quotes");
  } else if (first < n) {
    int64_t saved = r->lineno;
    r->lineno = start;
    r->depth++;
    size_t pos = first;
    while (pos < n && !r->stop && !r->nomem) {
      const char *e = memchr(raw + pos, '\n', n - pos);
      size_t len = e ? (size_t)(e - (raw + pos)) + 1 : n - pos;
      process_line(r, raw + pos, len);
      pos += len;
    }
    r->depth--;
    r->lineno = saved;
  }
  free(raw);
}

/* One line (len bytes, its line end cut off) split on the delimiter into one record: an
** empty field or one equal to the null text is NULL. */
static void split_line(cli_rec *r, const char *line, size_t len) {
  int64_t lineno = r->lineno + 1;
  r->nf = 0;
  size_t start = 0;
  for (size_t i = 0; i <= len; i++) {
    if (i < len && (unsigned char)line[i] != r->delim) continue;
    if (more_fields(r) != 0) return;
    size_t fl = i - start;
    int null = fl == 0 ||
               (r->null_text && fl == r->null_len && memcmp(line + start, r->null_text, fl) == 0);
    r->fv[r->nf].is_null = null;
    r->fv[r->nf].p = null ? NULL : line + start;
    r->fv[r->nf].n = null ? 0 : fl;
    r->nf++;
    start = i + 1;
  }
  r->direct = 1;
  emit(r, lineno, line, len, NULL);
  r->direct = 0;
}

static void tsv_line(cli_rec *r, const char *line, size_t n) {
  size_t len = n;
  while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r')) len--;
  if (len > 0) split_line(r, line, len);
}

static int is_blank(const char *line, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (line[i] != '\n' && line[i] != '\r') return 0;
  return 1;
}

/* Lines in the open record's raw text. */
static int raw_lines(const cli_rec *r) {
  const char *nl = r->raw_n ? memchr(r->raw, '\n', r->raw_n) : NULL;
  return nl && (size_t)(nl - r->raw) + 1 < r->raw_n ? 2 : 1;
}

/* One line, with its '\n' unless it is the last line of the input. */
static void process_line(cli_rec *r, const char *line, size_t n) {
  if (r->tsv) {
    tsv_line(r, line, n);
    r->lineno++;
    return;
  }
  if (r->open_start == 0 && is_blank(line, n)) {
    /* Between records libcsv skips blank lines; feed it anyway in case a bare CR left
       it inside a field. */
    csv_parse(&r->csv, line, n, on_field, on_row, r);
    r->lineno++;
    return;
  }
  if (r->open_start == 0 && r->csv.pstate == 0 /* libcsv's ROW_NOT_BEGUN */) {
    size_t len = n;
    while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r')) len--;
    if (!memchr(line, '"', len) && !memchr(line, '\r', len)) { /* as libcsv splits it */
      split_line(r, line, len);
      r->lineno++;
      return;
    }
  }
  if (r->open_start == 0) r->open_start = r->lineno + 1;
  if (append(r, &r->raw, &r->raw_n, &r->raw_cap, line, n) != 0) return;
  size_t used = csv_parse(&r->csv, line, n, on_field, on_row, r);
  r->lineno++;
  if (r->nomem || r->stop) return;
  if (used < n && csv_error(&r->csv) == CSV_EPARSE && raw_lines(r) > 1) {
    /* A record that ran over several lines and then broke: most likely a stray quote on
       its first line swallowed the lines after it. */
    recover(r, "unterminated quote: the quoted field opened on this line does not close "
               "cleanly");
  } else if (used < n) {
    int64_t start = r->open_start ? r->open_start : r->lineno;
    emit(r, start, r->raw, r->raw_n,
         csv_error(&r->csv) == CSV_EPARSE
             ? "bad quoting: a quote inside an unquoted field or text after a closing quote"
             : "out of memory parsing the record");
    r->raw_n = 0;
    r->open_start = 0;
    csv_reset(r);
  } else if (r->raw_n > CLI_REC_MAX_BYTES) {
    recover(r, "unterminated quote (the record grew past 1 MiB)");
  }
}

int cli_rec_init(cli_rec *r, int tsv, unsigned char delim, const char *null_text,
                 cli_record_fn fn, void *ctx) {
  memset(r, 0, sizeof *r);
  r->tsv = tsv;
  r->delim = delim;
  r->null_text = null_text;
  r->null_len = null_text ? strlen(null_text) : 0;
  r->fn = fn;
  r->ctx = ctx;
  if (!tsv && csv_reset(r) != 0) return -1;
  return 0;
}

static int status(const cli_rec *r) {
  if (r->stop) return r->stop;
  return r->nomem ? -1 : 0;
}

int cli_rec_feed(cli_rec *r, const char *buf, size_t n) {
  while (n > 0 && !r->stop && !r->nomem) {
    const char *nl = memchr(buf, '\n', n);
    if (!nl) {
      append(r, &r->part, &r->part_n, &r->part_cap, buf, n);
      break;
    }
    size_t len = (size_t)(nl - buf) + 1;
    if (r->part_n > 0) {
      if (append(r, &r->part, &r->part_n, &r->part_cap, buf, len) != 0) break;
      process_line(r, r->part, r->part_n);
      r->part_n = 0;
    } else {
      process_line(r, buf, len);
    }
    buf += len;
    n -= len;
  }
  return status(r);
}

int cli_rec_finish(cli_rec *r) {
  if (r->stop || r->nomem) return status(r);
  if (r->part_n > 0) {
    /* The last line has no line end: give it one copy so process_line sees a whole line. */
    size_t n = r->part_n;
    r->part_n = 0;
    process_line(r, r->part, n);
  }
  if (r->tsv) return status(r);
  while (!r->stop && !r->nomem) {
    if (csv_fini(&r->csv, on_field, on_row, r) == 0) break;
    recover(r, "unterminated quote (the file ends inside a quoted field)");
  }
  return status(r);
}

void cli_rec_free(cli_rec *r) {
  if (r->csv_ready) csv_free(&r->csv);
  free(r->part);
  free(r->raw);
  free(r->fbuf);
  free(r->foff);
  free(r->flen);
  free(r->fv);
  memset(r, 0, sizeof *r);
}
