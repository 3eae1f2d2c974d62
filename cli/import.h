/*
** cli/import.h: bulk import of CSV and TSV files into a table (the shell's `.import`).
**
** What it does: reads one or more files (plain, gzip or lz4-frame compressed, detected by
** their magic bytes), splits them into records (CSV per RFC 4180 through libcsv: quotes,
** "" escapes, embedded newlines, CRLF; or TSV: one record a line, fields split on the
** delimiter, no quoting), maps the fields to table columns (by a header line matched
** case-insensitively, or by an explicit column list, or by the table's column order), and
** loads every record through the public API (include/rowan.h) with one prepared
** `UPSERT INTO t (cols) VALUES (?, ...)`, values bound as text so the catalog's typed parsers
** convert them, in transactions of a few thousand rows; or, with --bulk and by default into
** a table that holds nothing, through a bulk load (rowan_bulk_*) with the same result. A
** record that cannot be loaded (wrong field count, bad number, bad date, unterminated
** quote, NULL into NOT NULL, ...) is written to the reject file with its file, line number
** and reason; the good rows load.
** Nothing is silently dropped: every record read is either loaded or rejected and counted.
**
** What it does not: expand globs (the shell does, with glob(3), and passes the list); create
** the table (it must exist); print the summary (cli_import_summary formats it; the caller
** prints it).
*/
#ifndef ROWAN_CLI_IMPORT_H
#define ROWAN_CLI_IMPORT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "rowan.h"

/* Input formats. */
#define CLI_IMPORT_CSV 0 /* RFC 4180 CSV (default) */
#define CLI_IMPORT_TSV 1 /* tab-separated, no quoting: one record per line */

/* Options of one import. Zero-initialize and call cli_import_options_init(). */
typedef struct cli_import_options {
  int format;              /* CLI_IMPORT_CSV or CLI_IMPORT_TSV */
  int header;              /* non-zero: the first record of each file is a header line; it
                              names the columns unless `columns` is given (then skipped) */
  const char *columns;     /* comma-separated column names mapping the fields in order
                              ("a,b,c"; an empty name skips that field), or NULL */
  const char *null_text;   /* a field equal to this text is SQL NULL (e.g. "NA"), quoted
                              or not; an empty unquoted field is NULL too; "" in CSV is the
                              empty string */
  int delimiter;           /* field separator byte; 0 = ',' for CSV, '\t' for TSV */
  const char *reject_path; /* file to append rejected records to (created or truncated at
                              the start), or NULL for none (rejects are still counted and
                              the first ones reported in the summary) */
  int64_t max_errors;      /* stop after this many rejected records (0 = no limit) */
  FILE *progress;          /* where to print progress (rows, rows/s, % of bytes) about
                              twice a second, or NULL for silence; the caller passes stderr
                              only when it is a terminal */
  int batch_rows;          /* rows per transaction; 0 = default (CLI_IMPORT_BATCH_ROWS) */
  int bulk;                /* non-zero (--bulk): load through rowan_bulk_* (sorted store
                              files, one atomic commit at the end; docs/IMPORT.md) */
  int no_bulk;             /* non-zero (--no-bulk): every row through the UPSERT. By default
                              (neither bulk nor no_bulk) a table that holds nothing at all
                              (rowan_bulk_status ROWAN_BULK_WAS_EMPTY) is loaded through the
                              bulk path, with the same result as row by row (docs/IMPORT.md) */
  int no_flush;            /* non-zero (--no-flush): without --bulk, leave the loaded rows in
                              the memstores and the WAL; by default an import that loaded
                              rows ends with rowan_flush, so the store holds them in store
                              files and the WAL segments are deleted */
} cli_import_options;

#define CLI_IMPORT_BATCH_ROWS 5000 /* default rows per transaction */
#define CLI_IMPORT_MOSTLY_AFTER 1000 /* without --max-errors: stop once this many records
                                        were read and more than 90% of them rejected */

/* What an import did. All counts are records (a CSV record may span several lines). */
typedef struct cli_import_result {
  int64_t rows_read;       /* data records read (header lines not counted) */
  int64_t rows_loaded;     /* records upserted and committed */
  int64_t rows_rejected;   /* records rejected (each written to the reject file if any) */
  int64_t bytes_read;      /* input bytes consumed (compressed bytes for compressed files) */
  int files_done;          /* files read to the end */
  int stopped;             /* non-zero: stopped early by max_errors */
  double seconds;          /* wall time of the import */
  int bulk_path;           /* 0: row by row; 1: --bulk; 2: the bulk path, taken because the
                              table was empty */
  int64_t bulk_rows;       /* of rows_loaded, those the bulk load committed */
  char row_after[128];     /* bulk_path 2, when it went on row by row: "row by row after N
                              rows: why", else "" */
  char first_reject[256];  /* "file:line: reason" of the first rejected record, or "" */
} cli_import_result;

/* Fill *opts with the defaults: CSV, no header, no column list, no null text, default
** delimiter, no reject file, no error limit, silent, default batch size. */
void cli_import_options_init(cli_import_options *opts);

/* Parse `.import` arguments: [--csv|--tsv] [--header|--no-header] [--columns a,b,c]
** [--null TEXT] [--delimiter C] [--reject FILE] [--max-errors N] [--batch N] FILE... TABLE
** (an option's value may also be given as --name=value; --delimiter takes one byte, or \t
** or "tab"). argv[0] is the first argument after ".import". Options may appear anywhere;
** "--" ends them.
** On success fills *opts (its strings point into argv, which must outlive the import),
** sets *first_file to the index of the first FILE argument and *n_files to the count (the
** FILE arguments are argv[*first_file ...] in order with options removed; the table is
** argv[argc - 1]) and returns ROWAN_OK. The FILE arguments are moved in place so they are
** contiguous (argv is permuted). Returns ROWAN_ERROR with a message in err[0..cap) for an
** unknown option, a missing option value, a bad number or delimiter, or fewer than two
** operands. */
int cli_import_parse_args(int argc, char **argv, cli_import_options *opts, int *first_file,
                          int *n_files, char *err, size_t cap);

/* Import files[0..n_files) into `table` of db.
** db: an open database with no transaction open (the import opens and commits its own).
** table: the table name as written in SQL (unquoted names fold to upper case; a name
**        with lower-case letters or other characters may be passed in double quotes).
** opts: may be NULL (defaults). res: filled in on every return (may not be NULL).
** Returns ROWAN_OK when every file was read to its end (some records may have been
** rejected: see res->rows_rejected); ROWAN_CONSTRAINT when it stopped because
** opts->max_errors records were rejected (err says what was committed); ROWAN_ERROR for an
** unknown table or column, a header that names no column, a bad option; ROWAN_IOERR when
** a file cannot be opened or read or the reject file cannot be written (err names the
** file); or the engine's code when a commit fails. On any error, rows committed before it
** stay committed and res->rows_loaded counts them (a bulk load's rows are committed only
** at its end, or when it hands over to the row path: a fatal error loads none of them);
** err[0..cap) holds a message (always NUL-terminated; "" on ROWAN_OK). */
int cli_import(rowan_db *db, const char *const *files, int n_files, const char *table,
               const cli_import_options *opts, cli_import_result *res, char *err,
               size_t cap);

/* Format a one-line summary of *res into buf[0..cap) ("420768 rows loaded, 0 rejected from
** 12 files in 9.1 s (46,000 rows/s)", plus where rejects went). Returns buf. */
char *cli_import_summary(const cli_import_result *res, const cli_import_options *opts,
                         char *buf, size_t cap);

#endif /* ROWAN_CLI_IMPORT_H */
