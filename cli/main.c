/*
** cli/main.c: the `rowan` program: command-line options, opening the database, and the
** choice of input.
**
**   rowan [OPTIONS] DBDIR [SQL or .command ...]
**
** Options follow sqlite3's where they fit (-cmd, -bail, -echo, -csv, -json, -header,
** -noheader, -line, -box, -table, -tsv, -list, -column, -markdown, -nullvalue, -init,
** -version, -help; -f FILE runs a script, and may be repeated;
** -readonly opens without writes, beside another process writing the database, and without
** write permission, .refresh catches it up; -recover DAMAGED NEW salvages a damaged database
** into a new one, cli/recover.c). Each may also be written with two dashes, and, as in
** sqlite3, options may also follow DBDIR (an argument starting with '-' is an option).
** DBDIR ":memory:" is a database in memory, gone at exit. Then: the start-up file (-init
** FILE, else ~/.rowanrc) runs first, then the -cmd commands; then the arguments after DBDIR, each one SQL text (one or
** more statements) or one dot command; then the -f files. When neither arguments nor -f are
** given, stdin is read: interactively with libedit (prompts, history in ~/.rowan_history)
** when it is a terminal, else as a script. Exit status 1 when the database cannot be
** opened or any statement or command failed (with -bail, the shell stops at the first).
**
** What it does not: run statements (shell.c) or format output (output.c).
*/
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/shell.h"

#define MAX_CMDS 64

static void usage(FILE *out) {
  fprintf(out,
          "Usage: rowan [OPTIONS] DBDIR [SQL or .command ...]\n"
          "Open (or create) the Rowan database in directory DBDIR and run SQL on it.\n"
          "With nothing after DBDIR, reads stdin (interactively on a terminal).\n"
          "Options:\n"
          "  -bail            stop at the first error\n"
          "  -box             output mode box (Unicode borders)\n"
          "  -cachesize N     bytes of block cache (suffix K, M or G; default 64M)\n"
          "  -cmd COMMAND     run COMMAND (SQL or .command) before the rest (repeatable)\n"
          "  -column          output mode column (aligned, no borders)\n"
          "  -csv             output mode csv\n"
          "  -echo            print each command before running it\n"
          "  -f FILE          run the SQL and dot commands in FILE (repeatable, in order)\n"
          "  -header          show column names\n"
          "  -help            show this text\n"
          "  -indexmemory N   bytes of whole block indexes the open store files keep (K, M\n"
          "                   or G; default 64M; \"none\": no bound); files opened past it\n"
          "                   read their index a page at a time through the block cache\n"
          "  -init FILE       read FILE at start-up instead of ~/.rowanrc\n"
          "  -joinmemory N    bytes one join may hold (suffix K, M or G; default 256M); past\n"
          "                   it a hash join spills to temporary files in DBDIR\n"
          "  -json            output mode json\n"
          "  -line            output mode line\n"
          "  -list            output mode list (values separated by |)\n"
          "  -markdown        output mode markdown (a Markdown table)\n"
          "  -noheader        do not show column names\n"
          "  -nullvalue TEXT  show NULL as TEXT\n"
          "  -readonly        open read-only, beside a writer (.refresh catches up)\n"
          "  -recover DAMAGED NEW  copy every row still readable from the damaged database\n"
          "                   DAMAGED into the new database NEW, and report what was lost\n"
          "  -table           output mode table (ASCII borders; the default)\n"
          "  -tsv             output mode tsv\n"
          "  -version         show the version\n"
          "Enter \".help\" in the shell for the dot commands. See rowan(1).\n");
}

/* Option name without its leading dashes ("-csv" and "--csv" give "csv"), or NULL. */
static const char *opt_name(const char *a) {
  if (a[0] != '-' || a[1] == 0) return NULL;
  return a[1] == '-' ? a + 2 : a + 1;
}

/* A byte count "N", "NK", "NM" or "NG" (1024-based) into *out: false when s is not one or
** is 0 or past SIZE_MAX. */
static bool parse_bytes(const char *s, size_t *out) {
  char *end;
  errno = 0;
  unsigned long long v = strtoull(s, &end, 10);
  if (end == s || errno || *s == '-') return false;
  unsigned shift = 0;
  if (*end == 'K' || *end == 'k') shift = 10;
  else if (*end == 'M' || *end == 'm') shift = 20;
  else if (*end == 'G' || *end == 'g') shift = 30;
  if (shift) end++;
  if (*end || v == 0 || v > (SIZE_MAX >> shift)) return false;
  *out = (size_t)v << shift;
  return true;
}

/* The progress handler: one line on stderr, rewritten in place (a shorter line blanks what
** a longer one left), ended when done. */
static void show_progress(void *ctx, const char *what, uint64_t done, uint64_t total) {
  (void)ctx;
  static int last_len;
  char line[320];
  int n;
  if (total)
    n = snprintf(line, sizeof line, "%s: %llu of %llu rows (%d%%)", what,
                 (unsigned long long)done, (unsigned long long)total,
                 (int)((done > total ? total : done) * 100 / total));
  else
    n = snprintf(line, sizeof line, "%s: %llu rows", what, (unsigned long long)done);
  fprintf(stderr, "\r%s%*s", line, last_len > n ? last_len - n : 0, "");
  last_len = n;
  if (total && done >= total) {
    fputc('\n', stderr);
    last_len = 0;
  }
  fflush(stderr);
}

/* The start-up file, as sqlite3 reads ~/.sqliterc: -init FILE, else ~/.rowanrc when it
** exists; its commands run before -cmd and the rest, with the settings they make kept. A
** named -init FILE that cannot be read is an error; a missing ~/.rowanrc is not. */
static void run_init(cli_shell *sh, const char *init_file, bool interactive) {
  char path[4096];
  const char *home = getenv("HOME");
  if (init_file) snprintf(path, sizeof path, "%s", init_file);
  else if (home && *home) snprintf(path, sizeof path, "%s/.rowanrc", home);
  else return;
  FILE *f = fopen(path, "r");
  if (!f) {
    if (init_file) {
      fprintf(stderr, "rowan: cannot read the -init file %s\n", init_file);
      sh->n_errors++;
      if (sh->bail) sh->quit = true;
    }
    return;
  }
  if (interactive) fprintf(stderr, "-- Loading resources from %s\n", path);
  cli_run_input(sh, f, path, false);
  fclose(f);
}

int main(int argc, char **argv) {
  const char *cmds[MAX_CMDS];
  int n_cmds = 0, mode = -1, headers = -1;
  bool bail = false, read_only = false;
  size_t join_memory = 0; /* -joinmemory: rowan_options.join_memory */
  size_t cache_size = 0;  /* -cachesize: rowan_options.block_cache_size */
  size_t index_memory = 0; /* -indexmemory: rowan_options.index_memory */
  const char *scripts[MAX_CMDS];
  int n_scripts = 0;
  bool echo = false;
  const char *nullvalue = NULL, *dbdir = NULL, *init_file = NULL;
  char **args = argv + 1; /* the commands after DBDIR, gathered in place in argv */
  int n_args = 0;
  for (int i = 1; i < argc; i++) {
    const char *o = opt_name(argv[i]);
    if (!o) { /* the first operand is DBDIR, the others are commands */
      if (!dbdir) dbdir = argv[i];
      else args[n_args++] = argv[i];
      continue;
    }
    bool has = i + 1 < argc;
    if (!strcmp(o, "help") || !strcmp(o, "h")) { usage(stdout); return 0; }
    if (!strcmp(o, "version")) { printf("rowan %s\n", rowan_libversion()); return 0; }
    if (!strcmp(o, "recover")) { /* rowan --recover DAMAGED NEW: nothing else */
      if (argc != 4 || i != 1 || opt_name(argv[2]) || opt_name(argv[3])) {
        fprintf(stderr, "rowan: usage: rowan --recover DAMAGED NEW\n");
        return 1;
      }
      return cli_recover(argv[2], argv[3], stdout);
    }
    if (!strcmp(o, "bail")) bail = true;
    else if (!strcmp(o, "readonly")) read_only = true;
    else if (!strcmp(o, "header") || !strcmp(o, "headers")) headers = 1;
    else if (!strcmp(o, "noheader")) headers = 0;
    else if (!strcmp(o, "cmd") && has) {
      if (n_cmds == MAX_CMDS) { fprintf(stderr, "rowan: too many -cmd options\n"); return 1; }
      cmds[n_cmds++] = argv[++i];
    } else if (!strcmp(o, "echo")) echo = true;
    else if (!strcmp(o, "f") && has) {
      if (n_scripts == MAX_CMDS) { fprintf(stderr, "rowan: too many -f options\n"); return 1; }
      scripts[n_scripts++] = argv[++i];
    }
    else if (!strcmp(o, "nullvalue") && has) nullvalue = argv[++i];
    else if (!strcmp(o, "joinmemory") && has) {
      if (!parse_bytes(argv[++i], &join_memory)) {
        fprintf(stderr, "rowan: -joinmemory wants a byte count such as 65536, 64K or 64M, "
                "not \"%s\"\n", argv[i]);
        return 1;
      }
    }
    else if (!strcmp(o, "cachesize") && has) {
      if (!parse_bytes(argv[++i], &cache_size)) {
        fprintf(stderr, "rowan: -cachesize wants a byte count such as 65536, 64K or 64M, "
                "not \"%s\"\n", argv[i]);
        return 1;
      }
    }
    else if (!strcmp(o, "indexmemory") && has) {
      if (!strcmp(argv[++i], "none")) index_memory = SIZE_MAX;
      else if (!parse_bytes(argv[i], &index_memory)) {
        fprintf(stderr, "rowan: -indexmemory wants a byte count such as 65536, 64K or 64M, or "
                "\"none\", not \"%s\"\n", argv[i]);
        return 1;
      }
    }
    else if (!strcmp(o, "init") && has) init_file = argv[++i];
    else if (cli_mode_lookup(o) >= 0) mode = cli_mode_lookup(o);
    else {
      fprintf(stderr, "rowan: unknown option or missing value: %s\n", argv[i]);
      usage(stderr);
      return 1;
    }
  }
  if (!dbdir) {
    fprintf(stderr, "rowan: missing DBDIR\n");
    usage(stderr);
    return 1;
  }
  rowan_options opts;
  rowan_options_init(&opts);
  opts.read_only = read_only;
  opts.join_memory = join_memory;
  opts.block_cache_size = cache_size;
  opts.index_memory = index_memory;
  if (read_only) opts.create_if_missing = 0;
  /* A new database is one new directory, in a directory that exists (sqlite3 does not create
  ** missing folders either): a typo in the path should not quietly make an empty database. */
  struct stat st_db, st_parent;
  bool memory = strcmp(dbdir, ":memory:") == 0 || /* rowan_open's in-memory database, */
                strncmp(dbdir, "hbase://", 8) == 0; /* or a database on HBase (no directory) */
  if (!memory && stat(dbdir, &st_db) != 0) {
    char parent[4096];
    snprintf(parent, sizeof parent, "%s", dbdir);
    size_t pl = strlen(parent);
    while (pl > 1 && parent[pl - 1] == '/') parent[--pl] = 0; /* "db/" names "db" */
    char *slash = strrchr(parent, '/');
    if (slash) {
      if (slash == parent) slash[1] = 0; else *slash = 0;
      if (stat(parent, &st_parent) != 0 || !S_ISDIR(st_parent.st_mode)) {
        fprintf(stderr, "rowan: cannot create %s: the directory %s does not exist\n", dbdir,
                parent);
        return 1;
      }
    }
  }
  rowan_db *db = NULL;
  int rc = rowan_open(dbdir, &opts, &db);
  if (rc != ROWAN_OK) {
    /* The API's message already names the directory ("cannot open database ..."). */
    if (db) fprintf(stderr, "rowan: %s\n", rowan_errmsg(db));
    else fprintf(stderr, "rowan: cannot open %s: %s\n", dbdir, rowan_errstr(rc));
    rowan_close(db);
    return 1;
  }
  /* a torn record dropped from the end of the log is said, not passed over in silence */
  rowan_recovery rec;
  if (rowan_recovery_info(db, &rec) == ROWAN_OK && rec.dropped_bytes > 0)
    fprintf(stderr,
            "rowan: warning: %llu bytes dropped from the end of the log segment %s (a record "
            "cut short by a crash or damaged: its commit was not applied)\n",
            (unsigned long long)rec.dropped_bytes, rec.dropped_segment);
  cli_shell sh;
  cli_shell_init(&sh, db, dbdir);
  cli_interrupt_install(db);
  /* Progress of long operations (CREATE INDEX's backfill) on a terminal, silent otherwise. */
  if (isatty(STDERR_FILENO)) rowan_progress_handler(db, show_progress, NULL);
  sh.bail = bail;
  sh.echo = echo;
  if (mode >= 0) sh.mode = mode;
  sh.headers = headers;
  if (nullvalue) snprintf(sh.nullvalue, sizeof sh.nullvalue, "%s", nullvalue);
  run_init(&sh, init_file, n_args == 0 && n_scripts == 0 && isatty(STDIN_FILENO));
  for (int c = 0; c < n_cmds && !sh.quit; c++) cli_run_arg(&sh, cmds[c]);
  bool any_input = n_args > 0 || n_scripts > 0;
  for (int a = 0; a < n_args && !sh.quit; a++) cli_run_arg(&sh, args[a]);
  for (int s = 0; s < n_scripts && !sh.quit; s++) {
    FILE *f = fopen(scripts[s], "r");
    if (!f) {
      fprintf(stderr, "Error: cannot open \"%s\"\n", scripts[s]);
      sh.n_errors++;
      if (sh.bail) sh.quit = true;
    } else {
      cli_run_input(&sh, f, scripts[s], false);
      fclose(f);
    }
  }
  if (!any_input && !sh.quit) {
    bool tty = isatty(STDIN_FILENO);
    if (tty)
      printf("rowan %s: enter \".help\" for the commands, \".quit\" to leave.\n",
             rowan_libversion());
    cli_run_input(&sh, stdin, "stdin", tty);
  }
  fflush(sh.out);
  cli_shell_reset_output(&sh);
  if (sh.plot_path)
    fprintf(stderr, "Warning: .plot %s: no query came after it; nothing was drawn\n",
            sh.plot_path);
  free(sh.plot_path);
  if (sh.in_txn)
    fprintf(stderr, "Warning: a transaction (BEGIN) was still open at exit: its writes were "
                    "rolled back; end it with COMMIT\n");
  if (rowan_close(db) != ROWAN_OK) {
    fprintf(stderr, "rowan: close: %s\n", rowan_errmsg(db));
    return 1;
  }
  if (sh.exit_code >= 0) return sh.exit_code; /* .exit CODE */
  return sh.n_errors > 0 ? 1 : 0;
}
