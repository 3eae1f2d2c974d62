/*
** cli/import_int.h: the two halves of cli/import.c that live in their own files.
**
** import_src.c: an input source that reads a file as plain bytes whether it is stored plain,
** gzip-compressed (zlib's gzread, which also passes plain files through) or lz4-frame
** compressed (liblz4's frame API), chosen by the file's first bytes, and says how many
** bytes of the file (compressed) it has consumed so far, for progress.
**
** import_rec.c: a push parser that turns those bytes into records: CSV per RFC 4180 through
** libcsv in strict mode (quotes, "" escapes, embedded newlines, CRLF; a quote inside an
** unquoted field, text after a closing quote and an unterminated quote are errors), or TSV
** (one record per line, split on the delimiter, no quoting). Each record carries its first
** line number and its raw text, so a rejected record can be reported and written out as it
** was read. Blank lines between records are skipped.
**
** Neither knows about SQL or tables; cli/import.c maps fields to columns and loads them.
*/
#ifndef ROWAN_CLI_IMPORT_INT_H
#define ROWAN_CLI_IMPORT_INT_H

#include <stddef.h>
#include <stdint.h>

#include <csv.h>

/* ---- input source ---------------------------------------------------------------- */

typedef struct cli_src cli_src;

/* Open `path` for reading. On success *out is the source (free with cli_src_close) and 0
** is returned; on failure *out is NULL, -1 is returned and err[0..cap) names the file and
** the reason. */
int cli_src_open(const char *path, cli_src **out, char *err, size_t cap);
/* Read up to cap decompressed bytes into buf. Returns the count (> 0), 0 at the end of the
** input, or -1 on a read or decompression error (err names the file and the reason; a
** truncated compressed file is an error, not an early end). */
long cli_src_read(cli_src *s, void *buf, size_t cap, char *err, size_t ecap);
/* Bytes of the file consumed so far (compressed bytes for a compressed file). */
int64_t cli_src_offset(const cli_src *s);
/* Size of the file in bytes (on disk), or 0 if unknown. */
int64_t cli_src_size(const cli_src *s);
/* "plain", "gzip" or "lz4". */
const char *cli_src_kind(const cli_src *s);
/* Close and free; NULL is a no-op. */
void cli_src_close(cli_src *s);

/* ---- record parser --------------------------------------------------------------- */

#define CLI_REC_MAX_BYTES (1u << 20) /* a CSV record longer than this (1 MiB) is taken to
                                         be an unterminated quote */

typedef struct cli_field {
  const char *p;  /* field bytes (valid during the callback only); NULL when is_null */
  size_t n;       /* length in bytes */
  int is_null;    /* the field is SQL NULL (empty unquoted field, or the null text) */
} cli_field;

typedef struct cli_record {
  int64_t line;            /* 1-based line number where the record starts */
  int nfields;             /* number of fields */
  const cli_field *fields; /* fields[0..nfields) */
  const char *raw;         /* the record's text as read, without its final line end */
  size_t raw_n;            /* its length */
  const char *error;       /* NULL, or why the record could not be parsed (it must then be
                              rejected; fields are not meaningful) */
} cli_record;

/* Called once per record; a non-zero return stops the parser, and cli_rec_feed /
** cli_rec_finish return that value. */
typedef int (*cli_record_fn)(void *ctx, const cli_record *rec);

typedef struct cli_rec {
  int tsv;                  /* non-zero: TSV, else CSV */
  unsigned char delim;      /* field separator */
  const char *null_text;    /* a field equal to it is NULL, or NULL */
  size_t null_len;          /* strlen(null_text) */
  cli_record_fn fn;         /* record callback */
  void *ctx;                /* its context */
  int stop;                 /* the callback's non-zero return, once it stopped us */
  int nomem;                /* an allocation failed */
  int depth;                /* nesting of unterminated-quote recovery */
  int64_t lineno;           /* lines fully consumed so far */
  int64_t open_start;       /* line where the open record starts, 0 if none open */
  struct csv_parser csv;    /* libcsv state (CSV only) */
  int csv_ready;            /* csv has been initialized */
  char *part;               /* a line cut by the end of a chunk, waiting for the rest */
  size_t part_n, part_cap;  /* its length and capacity */
  char *raw;                /* raw text of the open record */
  size_t raw_n, raw_cap;    /* its length and capacity */
  char *fbuf;               /* field bytes of the open record, back to back */
  size_t fbuf_n, fbuf_cap;  /* their length and capacity */
  size_t *foff;             /* per field: offset in fbuf, or SIZE_MAX for NULL */
  size_t *flen;             /* per field: length */
  int nf, nf_cap;           /* fields so far and capacity of foff/flen/fv */
  cli_field *fv;            /* fields handed to the callback */
  int direct;               /* fv points into the line itself (TSV, and CSV lines split
                               without libcsv): emit leaves it as it is */
} cli_rec;

/* Set up *r. tsv: non-zero for TSV. delim: separator byte. null_text: may be NULL.
** Returns 0, or -1 when out of memory. */
int cli_rec_init(cli_rec *r, int tsv, unsigned char delim, const char *null_text,
                 cli_record_fn fn, void *ctx);
/* Feed the next n bytes of the input. Returns 0, the callback's non-zero return value once
** it asked to stop (later calls return it again at once), or -1 when out of memory. */
int cli_rec_feed(cli_rec *r, const char *buf, size_t n);
/* End of input: emits the last record (or rejects an unterminated quote). Same returns as
** cli_rec_feed. */
int cli_rec_finish(cli_rec *r);
/* Free what *r holds. */
void cli_rec_free(cli_rec *r);

#endif /* ROWAN_CLI_IMPORT_INT_H */
