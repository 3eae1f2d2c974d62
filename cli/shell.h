/*
** cli/shell.h: the state of the `rowan` shell and the functions its files share.
**
** The shell is split by concern: main.c parses the command line and picks the input;
** shell.c reads input (terminal with libedit, files, stdin, arguments), splits it into
** statements and dot commands, runs statements and prints errors with a caret, the timer,
** the scan metrics and the teaching note; output.c formats result rows in each output
** mode; dot.c runs the dot commands; dot_schema.c answers .tables/.schema/.indexes from the
** catalog; dot_raw.c prints raw cells of the store (.raw get/scan); keymap*.c and plot*.c
** draw pictures (.keymap, .plot) with svg.c.
**
** The shell talks to the engine through include/rowan.h only, except for the catalog and
** store views in dot_schema.c and dot_raw.c (cli_schema.h), which read the store under the
** connection. Nothing here is used by librowan.
*/
#ifndef ROWAN_CLI_SHELL_H
#define ROWAN_CLI_SHELL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "rowan.h"

/* Output modes. ORDER CLI_MODE: cli_mode_names in output.c has one entry per mode. */
enum cli_mode {
  CLI_MODE_TABLE = 0, /* aligned columns in ASCII boxes */
  CLI_MODE_BOX = 1,   /* aligned columns in Unicode boxes */
  CLI_MODE_CSV = 2,   /* RFC 4180, quoted only where needed (as sqlite3 does) */
  CLI_MODE_TSV = 3,   /* tab-separated raw values */
  CLI_MODE_JSON = 4,  /* an array of objects, numbers unquoted */
  CLI_MODE_LINE = 5,  /* one "name = value" line per column, a blank line between rows */
  CLI_MODE_LIST = 6,  /* values separated by '|' (sqlite3's default) */
  CLI_MODE_COLUMN = 7,   /* aligned columns, names underlined with dashes, no borders */
  CLI_MODE_MARKDOWN = 8, /* a Markdown (GitHub) pipe table */
  CLI_MODE_COUNT
};

/* Called with each result row a statement returns, before it is printed (the row's
** rowan_column_* values are valid during the call). */
typedef void (*cli_row_hook)(void *ctx, rowan_stmt *stmt);

/* The shell's state, one per process. */
typedef struct cli_shell {
  rowan_db *db;          /* the open database */
  const char *dbdir;     /* its directory, as given */
  FILE *out;             /* where results go: stdout or the .output file */
  bool out_is_file;      /* out was opened by .output and must be closed */
  int mode;              /* enum cli_mode */
  int headers;           /* -1: the mode's default (on for table/box), 0 off, 1 on */
  char nullvalue[64];    /* text shown for SQL NULL */
  bool timer;            /* .timer on: wall time and rows after each statement */
  bool stats;            /* .stats on: scan metrics after each statement */
  bool hints;            /* .hints on: the teaching note after wasteful full scans */
  bool bail;             /* -bail: stop at the first error */
  bool echo;             /* -echo / .echo on: print each command before running it */
  bool interactive;      /* reading a terminal: prompts, no "near line" in errors */
  bool quit;             /* .quit seen, or -bail after an error: stop reading */
  int exit_code;         /* .exit CODE: the process's exit status; -1 (the default): 1 if
                            any command failed, else 0 */
  int n_errors;          /* statements and dot commands that failed */
  bool in_txn;           /* a BEGIN ran and no COMMIT or ROLLBACK since (warned at exit) */
  cli_row_hook row_hook; /* sees every row printed (.check counts problems), or NULL */
  void *row_hook_ctx;    /* its context */
  int read_depth;        /* nesting of .read (bounded) */
  bool changes;          /* .changes on: rows changed after each statement */
  int64_t total_changes; /* rows changed by the write statements of this session */
  int once;              /* .once: commands left before out goes back to stdout (0: none) */
  char *plot_path;       /* .plot FILE without a query: the next query's rows are drawn
                            into FILE instead of printed (malloc'ed), or NULL */
  const char *src_name;  /* name of the input being read ("stdin", a file), or NULL */
  int src_line;          /* line of that input where the current statement starts */
} cli_shell;

/* Initialise *sh with the defaults (table mode, default headers, empty null text, hints on,
** output to stdout) for database db opened from directory dbdir. */
void cli_shell_init(cli_shell *sh, rowan_db *db, const char *dbdir);

/* Close an .output file if one is open and go back to stdout. */
void cli_shell_reset_output(cli_shell *sh);

/* Run SQL text sql[0..len) (one or many statements) and print the results in the current
** mode. Statements are separated with rowan_prepare's tail pointer; after a statement that
** fails, the error is printed (with a caret under its position) and the rest of the text
** still runs unless sh->bail. Returns the number of statements that failed (also added to
** sh->n_errors). */
int cli_run_sql(cli_shell *sh, const char *sql, size_t len);

/* Run one line of input that starts with '.' (a dot command). Returns 0 on success, 1 on
** failure (the message is printed to stderr and sh->n_errors counts it). May set sh->quit. */
int cli_run_dot(cli_shell *sh, const char *line);

/* Read and run everything from in: dot commands (lines starting with '.' between
** statements) and SQL (a statement ends with ';' outside quotes and comments; text left at
** the end of input runs as it is). name is used in error messages ("near line N"). If
** interactive, lines come from libedit with prompts and history (in is ignored). Returns
** the number of failures. */
int cli_run_input(cli_shell *sh, FILE *in, const char *name, bool interactive);

/* Run one command-line argument: a dot command if it starts with '.', else SQL. Returns the
** number of failures. */
int cli_run_arg(cli_shell *sh, const char *arg);

/* The location prefix of an error message for line (and column, when col > 0) of the input
** being read: "FILE:LINE:COL: " (or "FILE:LINE: ") when reading a script (-f, .read, stdin
** that is not a terminal; FILE is "stdin" for standard input), "" for arguments, -cmd and
** the interactive prompt. Written to buf[0..cap), always NUL-terminated (cut to fit). */
void cli_error_where(const cli_shell *sh, int line, int col, char *buf, size_t cap);

/* Print "Error: " + the location prefix (cli_error_where, for the line of the current
** command) + the printf-formatted message + a newline to stderr. Returns 1 (a failure), so
** a command can `return cli_errorf(sh, ...)`; counting it in sh->n_errors is the caller's
** (cli_run_dot does it for dot commands). */
int cli_errorf(const cli_shell *sh, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* True when sql[0..len) ends with ';' outside string literals, quoted identifiers and
** comments (a complete statement, as sqlite3_complete decides). */
bool cli_sql_complete(const char *sql, size_t len);

/* Skip whitespace and comments from sql[0..len); returns the offset of the first token, or
** len if there is none. */
size_t cli_sql_skip_space(const char *sql, size_t len);

/* The offset just past the first top-level ';' of sql[0..len) (outside quotes and
** comments), or len if there is none. */
size_t cli_sql_statement_end(const char *sql, size_t len);

/* ---- output.c -------------------------------------------------------------------------- */

/* The mode's name ("table"), and the mode of a name (-1 if unknown). */
const char *cli_mode_name(int mode);
int cli_mode_lookup(const char *name);
/* Whether the mode shows column names by default (table, box, column, markdown). */
bool cli_mode_default_headers(int mode);

/* Print every row of a prepared statement in sh's mode. explain: print the single column
** of each row as a plain line whatever the mode (EXPLAIN). Steps stmt until ROWAN_DONE or an
** error; *rows gets the number of rows printed. Returns ROWAN_DONE or the step's error. */
int cli_print_rows(cli_shell *sh, rowan_stmt *stmt, bool explain, uint64_t *rows);

/* Display width of UTF-8 text s[0..n): East Asian wide characters count two columns,
** combining marks none, other characters one (bad bytes one each). */
size_t cli_text_width(const char *s, size_t n);

/* Print text as a JSON string (quotes and escapes included) to out. */
void cli_json_string(FILE *out, const char *s, size_t n);

/* Print one CSV field to out: as is, or quoted ("" for ") when it holds a control byte,
** a space, a quote, an apostrophe, DEL, the separator or is empty (sqlite3's rule). */
void cli_csv_field(FILE *out, const char *s, char sep);

/* ---- dot_schema.c ------------------------------------------------------------------------ */

/* .tables [PATTERN], .schema [TABLE], .indexes [TABLE]: print from the catalog. Return 0 on
** success, 1 on failure (message printed). argv[0] is the command name. */
int cli_dot_tables(cli_shell *sh, int argc, char **argv);
int cli_dot_schema(cli_shell *sh, int argc, char **argv);
int cli_dot_indexes(cli_shell *sh, int argc, char **argv);
/* .dump [TABLE]: for each table (sorted by name, or the one named) its CREATE TABLE, its
** rows as UPSERT statements, then its CREATE INDEX statements; then each view's CREATE VIEW
** and, for a view with columns of its own, the values of those columns as UPSERTs through
** the view: run in an empty database they give the same schema and rows (sqlite3's .dump).
** 0 or 1 (message printed). */
int cli_dot_dump(cli_shell *sh, int argc, char **argv);
/* The rows of table (an identifier as SQL spells it; a view too) that match where (SQL
** text, or NULL for every row) as UPSERT statements on sh->out: cols is the column list as
** SQL spells it, types their catalog type ids (CAT_T_*). 0 or 1. */
int cli_dump_rows(cli_shell *sh, const char *table, const char *cols, const char *where,
                  const int *types, int ncols);

/* The teaching note for a statement whose scan examined far more rows than it returned:
** sql[0..len) is the statement, m its metrics. Runs EXPLAIN of the statement to learn the
** scan kind and table; prints the note to stderr when it was a FULL SCAN over a table.
** Does nothing when hints are off or the thresholds are not met. */
void cli_teaching_note(cli_shell *sh, const char *sql, size_t len, const rowan_metrics *m);

/* ---- dot_more.c ---------------------------------------------------------------------------- */

/* .once FILE, .show, .shell/.system COMMAND...: 0 or 1 (message printed). */
int cli_dot_once(cli_shell *sh, int argc, char **argv);
int cli_dot_show(cli_shell *sh, int argc, char **argv);
int cli_dot_system(cli_shell *sh, int argc, char **argv);
/* .backup DIR (rowan_backup) and .refresh (rowan_refresh): 0 or 1 (message printed). */
int cli_dot_copies(cli_shell *sh, int argc, char **argv);
/* .advise TABLE FILE: the row-key advice (rowan_advise) for the SELECTs in FILE, printed;
** 0 or 1 (message printed). */
int cli_dot_advise(cli_shell *sh, int argc, char **argv);
/* After each SQL statement and dot command: a .once output goes back to stdout once the
** command after .once is done. */
void cli_once_step(cli_shell *sh);
/* After each statement that ran: with .changes on, print the rows it changed (wrote: a write
** statement; its `changed` rows add to the session's total). */
void cli_changes_note(cli_shell *sh, int64_t changed, bool wrote);

/* ---- complete.c ---------------------------------------------------------------------------- */

/* The interactive Tab key: completion of keywords, dot commands, table and column names
** after a word; a tab character in a string or after white space. Done: frees the names. */
void cli_complete_install(cli_shell *sh);
void cli_complete_done(void);

/* ---- interrupt.c --------------------------------------------------------------------------- */

/* Ctrl-C: install the SIGINT handler that interrupts db's running statement (and ends the
** process on a second Ctrl-C within a second); whether one was seen since the last clear;
** clear the count. */
void cli_interrupt_install(rowan_db *db);
bool cli_interrupt_seen(void);
void cli_interrupt_clear(void);
/* Non-interactive input stops at a Ctrl-C (sqlite3's rule): true when sh should stop now
** (sh->quit set, an error counted, a line on stderr). */
bool cli_stop_for_interrupt(cli_shell *sh);

/* ---- dot_asof.c: .asof [TIMESTAMP|off], the connection's read time (rowan_set_as_of) ---- */
int cli_dot_asof(cli_shell *sh, int argc, char **argv);
/* `.threads [N|default] [MIN_ROWS]`: the scan threads (cli/dot_threads.c). */
int cli_dot_threads(cli_shell *sh, int argc, char **argv);

/* ---- dot_raw.c ----------------------------------------------------------------------------- */

/* .raw get TABLE KEY | .raw scan TABLE [options]: raw cells of the store. Returns 0/1. */
int cli_dot_raw(cli_shell *sh, int argc, char **argv);

/* `rowan --recover DAMAGED NEW` (cli/recover.c): salvage DAMAGED into the new database NEW
** (rowan_recover) and print the report to out. Returns the exit status: 0 when NEW was
** written (damage found or not), 1 when the recovery failed (the reason on stderr). */
int cli_recover(const char *damaged, const char *dst, FILE *out);

#endif /* ROWAN_CLI_SHELL_H */
