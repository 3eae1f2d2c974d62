/*
** cli/dot.c: the shell's dot commands.
**
** What it does: splits a dot-command line into arguments (whitespace separated; '...' and
** "..." quote an argument), and runs .help, .quit/.exit, .mode, .headers, .nullvalue,
** .timer, .stats, .hints, .bail, .echo, .print, .read, .output, .flush, .compact, .check,
** .import (argument parsing and the run are
** cli/import.h's; globs in FILE arguments are expanded here with glob(3)), and hands
** .tables/.schema/.indexes to dot_schema.c, .advise to dot_more.c, .raw to dot_raw.c, .keymap to keymap.c and
** .plot to plot.c.
**
** What it does not: print rows (output.c) or read input lines (shell.c).
*/
#include <glob.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/keymap.h"
#include "cli/plot.h"
#include "cli/shell.h"
#ifndef CLI_NO_IMPORT
#include "cli/import.h"
#endif

#define MAX_ARGS 64
#define MAX_READ_DEPTH 16

/* Split line into argv (at most MAX_ARGS); the strings are written into buf (a copy of
** line). Returns argc, or -1 for an unterminated quote. */
static int split_args(const char *line, char *buf, char **argv) {
  int argc = 0;
  const char *p = line;
  char *o = buf;
  for (;;) {
    while (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n') p++;
    if (!*p) break;
    if (argc == MAX_ARGS) break;
    argv[argc++] = o;
    if (*p == '\'' || *p == '"') {
      char q = *p++;
      while (*p && *p != q) *o++ = *p++;
      if (*p != q) return -1;
      p++;
    } else {
      while (*p && *p != ' ' && *p != '\t' && *p != '\r' && *p != '\n') *o++ = *p++;
    }
    *o++ = 0;
  }
  return argc;
}

/* Parse on|off|yes|no|1|0; returns 1, 0, or -1 if it is none of them. */
static int on_off(const char *s) {
  if (!strcmp(s, "on") || !strcmp(s, "yes") || !strcmp(s, "1") || !strcmp(s, "true")) return 1;
  if (!strcmp(s, "off") || !strcmp(s, "no") || !strcmp(s, "0") || !strcmp(s, "false")) return 0;
  return -1;
}

static int fail(cli_shell *sh, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(cli_shell *sh, const char *fmt, ...) {
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return cli_errorf(sh, "%s", msg);
}

/* One entry of .help. ORDER HELP: sorted by name (then usage), so .help lists the commands
** alphabetically; tests/cli/test_shell_rough.c checks the order and that docs/SHELL.md's
** table names the same commands. */
typedef struct help_entry {
  const char *name;   /* the command as typed, with its dot */
  const char *usage;  /* the arguments, or "" */
  const char *what;   /* what it does, in one line */
  const char *more;   /* details for ".help NAME" (lines end with '\n'), or NULL */
} help_entry;

static const help_entry help_table[] = {
    {".advise", "TABLE FILE", "Propose row keys for TABLE from the SELECTs in FILE",
     "Judges every order of TABLE's primary-key columns (time columns ASC and DESC) for\n"
     "the queries in FILE (SELECTs of TABLE with literal values): per key and query the\n"
     "plan kind and the estimated rows, bytes and seeks, the keys ranked by cost (rows read\n"
     "+ 16 per seek), EXPLAIN's estimate under the current key, then the single-column\n"
     "secondary indexes the planner would use for them. Nothing is rewritten.\n"},
    {".asof", "[TIMESTAMP|off]", "Read the database as it was at TIMESTAMP (UTC)",
     "Every SELECT then reads each table as of that time (as FROM t AS OF TIMESTAMP '...'):\n"
     "the newest version of each cell at or before it. Writes and DDL are refused until\n"
     ".asof off. A time older than the look-back window (a day by default) is an error.\n"
     "TIMESTAMP: YYYY-MM-DD [HH:MM[:SS[.fff]]]. Alone, .asof shows the time set.\n"},
    {".backup", "DIR", "Copy the database to DIR while it stays in use (online backup)",
     "DIR must be new or empty. The copy holds every commit made before the command, each\n"
     "whole; store files are hard links where the file system allows (rowan_backup).\n"
     "Open the copy as a database of its own: rowan DIR.\n"},
    {".bail", "on|off", "Stop at the first error (as -bail)", NULL},
    {".changes", "on|off", "Show the rows each statement changed, and the session's total",
     NULL},
    {".check", "INDEX TABLE", "Verify that an index and its table agree (CHECK INDEX)",
     "Prints CHECK INDEX's counts and first problems; fails when any index row is missing,\n"
     "extra or mismatched (drop the index and create it again to repair it).\n"},
    {".compact", "[--minor]", "Compact every table's store files (HBase's major_compact)",
     "One store file per family; tombstones, masked cells and versions past VERSIONS are\n"
     "dropped. --minor only merges the files.\n"},
    {".dump", "[TABLE]", "Print the schema and the rows as SQL that recreates them", NULL},
    {".echo", "on|off", "Print each command before running it (as -echo)", NULL},
    {".exit", "[CODE]", "Leave the shell with exit status CODE (the rest is not read)", NULL},
    {".flush", "", "Write every memstore to store files (HBase's flush)", NULL},
    {".headers", "on|off", "Show column names (default: on in table and box modes)", NULL},
    {".help", "[COMMAND]", "List the commands, or show one command in detail", NULL},
    {".hints", "on|off", "Explain full scans that read far more rows than they return", NULL},
    {".import", "[OPTIONS] FILE... TABLE", "Load CSV or TSV files into TABLE",
     "FILE may be a glob (expanded by the shell); gzip and lz4 files are read as such.\n"
     "Options: --csv --tsv --header --columns a,b,c --null TEXT --delimiter C\n"
     "         --reject FILE --max-errors N --batch N\n"
     "         --bulk (write store files directly: all rows or none; the default\n"
     "         into a table that holds nothing) --no-bulk (row by row, in --batch commits)\n"
     "         --no-flush (leave the rows in memstores and WAL until .flush or the close;\n"
     "                     default: flush at the end)\n"
     "Rejected records fail the command (exit status 1); the good ones still load.\n"},
    {".indexes", "[TABLE]", "List the indexes (of TABLE)", NULL},
    {".keymap", "TABLE [QUERY] FILE.svg", "Draw TABLE's key space and what QUERY reads of it",
     "Writes an SVG picture: per column family, its store files and their blocks laid out\n"
     "in row key order; with QUERY (quoted, run once, rows not printed), the key ranges it\n"
     "sought and the blocks it read (the figures of EXPLAIN ANALYZE). A text version is\n"
     "printed: '#' read from the file, '+' from the block cache, '.' skipped.\n"},
    {".mode", "[MODE]", "Set or show the output mode (.help mode lists them)",
     "MODE: table box csv tsv json line list column markdown (docs/SHELL.md)"},
    {".nullvalue", "TEXT", "Text shown for NULL (default: empty)", NULL},
    {".once", "FILE", "Send the next command's results to FILE, then back to the screen",
     NULL},
    {".output", "[FILE]", "Send results to FILE, or back to standard output", NULL},
    {".plot", "FILE.svg [QUERY]", "Draw a query's rows as a line chart (the next query's)",
     "The first column is the x axis (TIMESTAMP, DATE, TIME or a number); each numeric\n"
     "column is a line, and text columns split the rows into one line per value. Without\n"
     "QUERY the next query is drawn instead of printed. Units come from the column names:\n"
     "TEMP_C (degrees C), RAIN_MM, \"PM25 (ug/m3)\" (docs/SHELL.md lists the suffixes).\n"},
    {".print", "TEXT...", "Print the arguments, separated by spaces", NULL},
    {".quit", "", "Leave the shell (as .exit)", NULL},
    {".raw", "get TABLE KEY", "Show the stored cells of one row",
     "KEY is hex (0x80000003) or, for a SQL table, the key values separated by commas.\n"},
    {".raw", "scan TABLE [OPTIONS]", "Show the stored cells of rows in key order",
     "Options: --family F --limit N (default 20) --versions N --start KEY\n"},
    {".read", "FILE", "Run the SQL and dot commands in FILE", NULL},
    {".refresh", "", "Show what the database's writer committed since (-readonly)",
     "A -readonly shell sees the database as of its start, beside another rowan or program\n"
     "writing it; .refresh shows what that writer has committed since, each commit whole,\n"
     "and its new tables (rowan_refresh). In a shell that writes, it does nothing.\n"},
    {".schema", "[TABLE]", "Show the CREATE statements of tables and indexes", NULL},
    {".shell", "COMMAND...", "Run COMMAND in the system's shell (as .system)", NULL},
    {".show", "", "Show the current settings", NULL},
    {".stats", "on|off", "Show scan metrics after each statement", NULL},
    {".system", "COMMAND...", "Run COMMAND in the system's shell (as .shell)", NULL},
    {".tables", "[PATTERN]", "List the tables (PATTERN as in LIKE)", NULL},
    {".threads", "[N|default] [MIN_ROWS]", "Scan large tables in chunks on N threads",
     "N 1 scans serially; default (or 0) uses one thread per processor. MIN_ROWS: the\n"
     "estimated rows a scan needs before it is cut (default 100000). Alone, .threads shows\n"
     "the threads scans run on. EXPLAIN shows CLIENT n-CHUNK PARALLEL m-WAY.\n"},
    {".timer", "on|off", "Show wall time and rows after each statement", NULL},
};

#define N_HELP ((int)(sizeof help_table / sizeof help_table[0]))

/* .help [COMMAND]: one line per command, or the details of the commands named. */
static int dot_help(cli_shell *sh, int argc, char **argv) {
  if (argc > 2) return fail(sh, "usage: .help [COMMAND]");
  if (argc == 1) {
    for (int i = 0; i < N_HELP; i++) {
      char left[64];
      snprintf(left, sizeof left, "%s%s%s", help_table[i].name,
               help_table[i].usage[0] ? " " : "", help_table[i].usage);
      fprintf(sh->out, "%-32s %s\n", left, help_table[i].what);
    }
    return 0;
  }
  const char *want = argv[1][0] == '.' ? argv[1] + 1 : argv[1];
  int found = 0;
  for (int i = 0; i < N_HELP; i++) {
    if (strcmp(help_table[i].name + 1, want) != 0) continue;
    fprintf(sh->out, "%s%s%s\n  %s\n", help_table[i].name, help_table[i].usage[0] ? " " : "",
            help_table[i].usage, help_table[i].what);
    if (help_table[i].more) {
      const char *p = help_table[i].more;
      while (*p) {
        const char *e = strchr(p, '\n');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        fprintf(sh->out, "  %.*s\n", (int)n, p);
        p += n + (e ? 1 : 0);
      }
    }
    found++;
  }
  if (!found)
    return fail(sh, "no command \".%s\": enter \".help\" for the list", want);
  return 0;
}

static int set_flag(cli_shell *sh, int argc, char **argv, bool *flag) {
  int v = argc == 2 ? on_off(argv[1]) : -1;
  if (v < 0) return fail(sh, "usage: %s on|off", argv[0]);
  *flag = v != 0;
  return 0;
}

static int dot_read(cli_shell *sh, int argc, char **argv) {
  if (argc != 2) return fail(sh, "usage: %s FILE", argv[0]);
  if (sh->read_depth >= MAX_READ_DEPTH) return fail(sh, "%s: nested too deeply", argv[1]);
  FILE *f = fopen(argv[1], "r");
  if (!f) return fail(sh, "cannot open \"%s\"", argv[1]);
  sh->read_depth++;
  int fails = cli_run_input(sh, f, argv[1], false);
  sh->read_depth--;
  fclose(f);
  (void)fails; /* already counted in sh->n_errors by the statements and commands */
  return 0;
}

static int dot_output(cli_shell *sh, int argc, char **argv) {
  if (argc > 2) return fail(sh, "usage: %s [FILE]", argv[0]);
  fflush(sh->out);
  cli_shell_reset_output(sh);
  if (argc == 1 || !strcmp(argv[1], "stdout") || !strcmp(argv[1], "-")) return 0;
  FILE *f = fopen(argv[1], "w");
  if (!f) return fail(sh, "cannot write \"%s\"", argv[1]);
  sh->out = f;
  sh->out_is_file = true;
  return 0;
}

/* .check's row hook: adds the N of the MISSING, EXTRA and MISMATCHED rows of CHECK INDEX's
** result to *(long long *)ctx. */
static void count_problems(void *ctx, rowan_stmt *st) {
  const char *item = rowan_column_text(st, 0);
  if (!item || rowan_column_type(st, 1) == ROWAN_NULL) return;
  if (!strcmp(item, "MISSING") || !strcmp(item, "EXTRA") || !strcmp(item, "MISMATCHED"))
    *(long long *)ctx += (long long)rowan_column_int64(st, 1);
}

/* .flush and .compact [--minor]: the store's maintenance, as HBase's shell offers it, so a
** tour can measure reads against store files rather than memstores. */
static int dot_maintain(cli_shell *sh, int argc, char **argv) {
  bool compact = !strcmp(argv[0], ".compact"), major = true;
  if (compact && argc == 2 && !strcmp(argv[1], "--minor")) major = false;
  else if (argc != 1) return fail(sh, "usage: %s", compact ? ".compact [--minor]" : ".flush");
  if (!sh->db) return fail(sh, "%s: no database open", argv[0]);
  int rc = compact ? rowan_compact(sh->db, major) : rowan_flush(sh->db);
  if (rc != ROWAN_OK) return fail(sh, "%s: %s", argv[0], rowan_errmsg(sh->db));
  return 0;
}

static int dot_mode(cli_shell *sh, int argc, char **argv) {
  if (argc == 1) {
    fprintf(sh->out, "current output mode: %s\n", cli_mode_name(sh->mode));
    return 0;
  }
  int m = argc == 2 ? cli_mode_lookup(argv[1]) : -1;
  if (m < 0)
    return fail(sh, "unknown mode \"%s\": use table, box, csv, tsv, json, line, list, column "
                "or markdown",
                argc == 2 ? argv[1] : "");
  sh->mode = m;
  return 0;
}

#ifndef CLI_NO_IMPORT
static int dot_import(cli_shell *sh, int argc, char **argv) {
  cli_import_options opts;
  cli_import_options_init(&opts);
  int first = 0, nfiles = 0;
  char err[512];
  if (cli_import_parse_args(argc - 1, argv + 1, &opts, &first, &nfiles, err, sizeof err) !=
      ROWAN_OK)
    return fail(sh, "%s", err);
  const char *table = argv[argc - 1];
  /* the import runs its own transactions (BEGIN ... COMMIT every batch) */
  if (sh->in_txn)
    return fail(sh, ".import cannot run inside a transaction: COMMIT or ROLLBACK first");
  /* Expand globs; a pattern that matches nothing is passed on as written, so the import
  ** reports the file it cannot open. */
  glob_t g;
  memset(&g, 0, sizeof g);
  int flags = GLOB_NOCHECK;
  for (int i = 0; i < nfiles; i++) {
    int r = glob(argv[1 + first + i], flags, NULL, &g);
    if (r != 0 && r != GLOB_NOMATCH) {
      globfree(&g);
      return fail(sh, "cannot expand \"%s\"", argv[1 + first + i]);
    }
    flags |= GLOB_APPEND;
  }
  if (isatty(STDERR_FILENO)) opts.progress = stderr;
  cli_import_result res;
  memset(&res, 0, sizeof res);
  int rc = cli_import(sh->db, (const char *const *)g.gl_pathv, (int)g.gl_pathc, table, &opts,
                      &res, err, sizeof err);
  /* A failure before any record was read (no such file or table, a bad header) gets its
     error alone: an all-zero summary would only hide it. */
  if (rc == ROWAN_OK || res.rows_read > 0 || res.files_done > 0) {
    char summary[512];
    cli_import_summary(&res, &opts, summary, sizeof summary);
    fprintf(sh->out, "%s\n", summary);
  }
  globfree(&g);
  if (rc != ROWAN_OK) return fail(sh, "%s", err);
  /* Rejected records make the command fail (the exit status says so), though the good
  ** records stay loaded. */
  if (res.rows_rejected > 0)
    return fail(sh, ".import: %lld of %lld records rejected%s%s; first: %s",
                (long long)res.rows_rejected, (long long)res.rows_read,
                opts.reject_path ? " into " : "", opts.reject_path ? opts.reject_path : "",
                res.first_reject);
  return 0;
}
#endif

int cli_run_dot(cli_shell *sh, const char *line) {
  if (cli_stop_for_interrupt(sh)) return 1;
  size_t n = strlen(line);
  char *buf = malloc(n + 1);
  char *argv[MAX_ARGS];
  if (!buf) {
    fprintf(stderr, "Error: out of memory\n");
    sh->n_errors++;
    return 1;
  }
  int argc = split_args(line, buf, argv);
  int rc = 0;
  if (sh->echo) fprintf(sh->out, "%s\n", line);
  fflush(sh->out);
  if (argc < 0) {
    rc = fail(sh, "unterminated quote in: %s", line);
  } else if (argc == 0) {
    rc = 0;
  } else {
    const char *c = argv[0];
    if (!strcmp(c, ".quit") || !strcmp(c, ".exit") || !strcmp(c, ".q")) {
      /* .exit CODE (sqlite3's form): the process's exit status */
      char *end = NULL;
      long code = argc == 2 && !strcmp(c, ".exit") ? strtol(argv[1], &end, 10) : 0;
      if (argc > 2 || (argc == 2 && strcmp(c, ".exit") != 0))
        rc = fail(sh, "usage: %s%s", c, strcmp(c, ".exit") ? "" : " [CODE]");
      else if (argc == 2 && (!*argv[1] || *end || code < 0 || code > 255))
        rc = fail(sh, "usage: .exit [CODE] (CODE: 0 to 255, not \"%s\")", argv[1]);
      else {
        if (argc == 2) sh->exit_code = (int)code;
        sh->quit = true;
      }
    } else if (!strcmp(c, ".help")) {
      rc = dot_help(sh, argc, argv);
    } else if (!strcmp(c, ".mode")) {
      rc = dot_mode(sh, argc, argv);
    } else if (!strcmp(c, ".headers") || !strcmp(c, ".header")) {
      bool v = false;
      rc = set_flag(sh, argc, argv, &v);
      if (!rc) sh->headers = v ? 1 : 0;
    } else if (!strcmp(c, ".nullvalue")) {
      if (argc != 2) rc = fail(sh, "usage: %s TEXT", c);
      else snprintf(sh->nullvalue, sizeof sh->nullvalue, "%s", argv[1]);
    } else if (!strcmp(c, ".asof")) {
      rc = cli_dot_asof(sh, argc, argv);
    } else if (!strcmp(c, ".timer")) {
      rc = set_flag(sh, argc, argv, &sh->timer);
    } else if (!strcmp(c, ".changes")) {
      rc = set_flag(sh, argc, argv, &sh->changes);
    } else if (!strcmp(c, ".once")) {
      rc = cli_dot_once(sh, argc, argv);
    } else if (!strcmp(c, ".threads")) {
      rc = cli_dot_threads(sh, argc, argv);
    } else if (!strcmp(c, ".show")) {
      rc = cli_dot_show(sh, argc, argv);
    } else if (!strcmp(c, ".shell") || !strcmp(c, ".system")) {
      rc = cli_dot_system(sh, argc, argv);
    } else if (!strcmp(c, ".stats")) {
      rc = set_flag(sh, argc, argv, &sh->stats);
    } else if (!strcmp(c, ".hints")) {
      rc = set_flag(sh, argc, argv, &sh->hints);
    } else if (!strcmp(c, ".echo")) {
      rc = set_flag(sh, argc, argv, &sh->echo);
    } else if (!strcmp(c, ".print")) {
      for (int i = 1; i < argc; i++) fprintf(sh->out, "%s%s", i > 1 ? " " : "", argv[i]);
      fputc('\n', sh->out);
    } else if (!strcmp(c, ".bail")) {
      rc = set_flag(sh, argc, argv, &sh->bail);
    } else if (!strcmp(c, ".read")) {
      rc = dot_read(sh, argc, argv);
    } else if (!strcmp(c, ".output")) {
      rc = dot_output(sh, argc, argv);
    } else if (!strcmp(c, ".tables")) {
      rc = cli_dot_tables(sh, argc, argv);
    } else if (!strcmp(c, ".dump")) {
      rc = cli_dot_dump(sh, argc, argv);
    } else if (!strcmp(c, ".schema")) {
      rc = cli_dot_schema(sh, argc, argv);
    } else if (!strcmp(c, ".indexes") || !strcmp(c, ".indices")) {
      rc = cli_dot_indexes(sh, argc, argv);
    } else if (!strcmp(c, ".check")) {
      if (argc != 3) {
        rc = fail(sh, "usage: .check INDEX TABLE");
      } else {
        /* The statement does the work (and counts its own error, as any SQL line does);
        ** problems it finds make the command fail too. */
        char sql[600];
        snprintf(sql, sizeof sql, "CHECK INDEX %s ON %s", argv[1], argv[2]);
        long long problems = 0;
        sh->row_hook = count_problems;
        sh->row_hook_ctx = &problems;
        int failed = cli_run_sql(sh, sql, strlen(sql));
        sh->row_hook = NULL;
        sh->row_hook_ctx = NULL;
        if (!failed && problems > 0)
          rc = fail(sh, ".check: %lld problem%s between index %s and table %s (MISSING, EXTRA "
                    "or MISMATCHED rows): drop the index and create it again", problems,
                    problems == 1 ? "" : "s", argv[1], argv[2]);
      }
    } else if (!strcmp(c, ".flush") || !strcmp(c, ".compact")) {
      rc = dot_maintain(sh, argc, argv);
    } else if (!strcmp(c, ".backup") || !strcmp(c, ".refresh")) {
      rc = cli_dot_copies(sh, argc, argv);
    } else if (!strcmp(c, ".raw")) {
      rc = cli_dot_raw(sh, argc, argv);
    } else if (!strcmp(c, ".advise")) {
      rc = cli_dot_advise(sh, argc, argv);
    } else if (!strcmp(c, ".keymap")) {
      rc = cli_dot_keymap(sh, argc, argv);
    } else if (!strcmp(c, ".plot")) {
      rc = cli_dot_plot(sh, argc, argv);
    } else if (!strcmp(c, ".import")) {
#ifndef CLI_NO_IMPORT
      rc = dot_import(sh, argc, argv);
#else
      rc = fail(sh, "%s: this shell was built without the importer", c);
#endif
    } else {
      rc = fail(sh, "unknown command \"%s\": enter \".help\" for the list", c);
    }
  }
  free(buf);
  fflush(sh->out);
  cli_once_step(sh);
  if (rc) {
    sh->n_errors++;
    if (sh->bail) sh->quit = true;
  }
  return rc;
}
