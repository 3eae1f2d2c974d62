/*
** cli/import_pipe.h: the input half of `.import` (with or without --bulk) on its own
** thread. A reader thread opens each file in turn (import_src.c: plain, gzip or lz4), splits it into records
** (import_rec.c) and hands them over in batches through a small bounded queue, so that
** decompression and CSV splitting run on one core while the caller parses values and
** writes rows on the other. The caller gets, in order: a FILE_START item per file, its
** records, then FILE_END (or an ERROR item that ends the stream).
**
** Not here: mapping, loading and rejects (cli/import.c), which treat a piped record
** exactly like one from cli_rec's callback. Implementation: cli/import_pipe.c.
*/
#ifndef ROWAN_CLI_IMPORT_PIPE_H
#define ROWAN_CLI_IMPORT_PIPE_H

#include <stddef.h>
#include <stdint.h>

#include "cli/import_int.h"

typedef struct cli_pipe cli_pipe;

enum cli_pipe_kind {
  CLI_PIPE_FILE_START = 1, /* file `file` is opened next (nothing read from it yet) */
  CLI_PIPE_RECORD,         /* rec is the next record of the current file */
  CLI_PIPE_FILE_END,       /* the current file is read completely; size is its size */
  CLI_PIPE_ERROR           /* the stream ends: msg names the file and reason; code is -1
                              for an I/O or decompression error, -2 for out of memory */
};

typedef struct cli_pipe_item {
  int kind;                /* enum cli_pipe_kind */
  int file;                /* index into the files given to cli_pipe_start */
  cli_record rec;          /* CLI_PIPE_RECORD: the record (valid until the next call) */
  int64_t size;            /* CLI_PIPE_FILE_END: the file's size on disk */
  int code;                /* CLI_PIPE_ERROR: -1 I/O, -2 out of memory */
  const char *msg;         /* CLI_PIPE_ERROR: the message (valid until cli_pipe_stop) */
} cli_pipe_item;

/* Start the reader thread over files[0..n) (the array and strings must outlive the pipe),
** splitting CSV (tsv 0) or TSV with the delimiter and null text given (null_text may be
** NULL). Returns 0 and *out, or -1 when out of memory or no thread could be started
** (*out NULL: the caller reads the files itself). */
int cli_pipe_start(const char *const *files, int n, int tsv, unsigned char delim,
                   const char *null_text, cli_pipe **out);

/* The next item into *it: returns 1, or 0 when the stream has ended (after the last
** FILE_END or an ERROR item). */
int cli_pipe_next(cli_pipe *p, cli_pipe_item *it);
/* Input bytes the reader has consumed so far, over every file (any thread: for progress;
** ahead of the records handed out by at most the queued batches). */
int64_t cli_pipe_read_bytes(cli_pipe *p);

/* Stop the reader (at any point), wait for it and free everything. NULL is a no-op. */
void cli_pipe_stop(cli_pipe *p);

#endif /* ROWAN_CLI_IMPORT_PIPE_H */
