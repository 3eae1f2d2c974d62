/*
** cli/dot_more.c: the sqlite3 shell commands people reach for after the first ones:
** .changes (rows changed after each statement), .once (the next command's output to a
** file), .show (the settings), .shell / .system (run a command of the operating system),
** .backup DIR (an online copy, as sqlite3's .backup FILE makes one), .refresh (a
** -readonly shell catches up with the database's writer) and .advise TABLE FILE (the
** row-key advice for the queries in FILE, rowan_advise; Rowan's own).
** They behave as sqlite3's do, with Rowan's names for Rowan's settings (.show lists
** .stats and .hints too).
** Not here: the dispatch and .help text (cli/dot.c), output modes (cli/output.c).
*/
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "cli/shell.h"

int cli_dot_once(cli_shell *sh, int argc, char **argv) {
  if (argc != 2) return cli_errorf(sh, "usage: .once FILE");
  fflush(sh->out);
  cli_shell_reset_output(sh);
  FILE *f = fopen(argv[1], "w");
  if (!f) return cli_errorf(sh, "cannot write \"%s\"", argv[1]);
  sh->out = f;
  sh->out_is_file = true;
  sh->once = 2; /* this command, then the next one, then back to standard output */
  return 0;
}

void cli_once_step(cli_shell *sh) {
  if (sh->once == 0) return;
  if (--sh->once == 0) {
    fflush(sh->out);
    cli_shell_reset_output(sh);
  }
}

void cli_changes_note(cli_shell *sh, int64_t changed, bool wrote) {
  if (wrote) sh->total_changes += changed;
  if (sh->changes)
    fprintf(sh->out, "changes: %lld   total_changes: %lld\n", (long long)(wrote ? changed : 0),
            (long long)sh->total_changes);
}

static const char *on_off(bool v) { return v ? "on" : "off"; }

int cli_dot_show(cli_shell *sh, int argc, char **argv) {
  (void)argv;
  if (argc != 1) return cli_errorf(sh, "usage: .show");
  FILE *o = sh->out;
  bool hdr = sh->headers < 0 ? cli_mode_default_headers(sh->mode) : sh->headers == 1;
  fprintf(o, "%12s: %s\n", "bail", on_off(sh->bail));
  fprintf(o, "%12s: %s\n", "changes", on_off(sh->changes));
  fprintf(o, "%12s: %s\n", "echo", on_off(sh->echo));
  fprintf(o, "%12s: %s%s\n", "headers", on_off(hdr), sh->headers < 0 ? " (the mode's)" : "");
  fprintf(o, "%12s: %s\n", "hints", on_off(sh->hints));
  fprintf(o, "%12s: %s\n", "mode", cli_mode_name(sh->mode));
  fprintf(o, "%12s: \"%s\"\n", "nullvalue", sh->nullvalue);
  fprintf(o, "%12s: %s\n", "output", sh->out_is_file ? "a file (.output or .once)" : "stdout");
  fprintf(o, "%12s: %s\n", "stats", on_off(sh->stats));
  fprintf(o, "%12s: %s\n", "timer", on_off(sh->timer));
  fprintf(o, "%12s: %s\n", "database", sh->dbdir ? sh->dbdir : "");
  if (rowan_as_of(sh->db)) fprintf(o, "%12s: set (.asof shows it)\n", "asof");
  return 0;
}

int cli_dot_system(cli_shell *sh, int argc, char **argv) {
  if (argc < 2) return cli_errorf(sh, "usage: %s COMMAND [ARGUMENT...]", argv[0]);
  size_t n = 1;
  for (int i = 1; i < argc; i++) n += strlen(argv[i]) + 1;
  char *cmd = malloc(n);
  if (!cmd) return cli_errorf(sh, "%s: out of memory", argv[0]);
  size_t o = 0;
  for (int i = 1; i < argc; i++) {
    size_t l = strlen(argv[i]);
    if (i > 1) cmd[o++] = ' ';
    memcpy(cmd + o, argv[i], l);
    o += l;
  }
  cmd[o] = 0;
  fflush(sh->out);
  fflush(stdout);
  int st = system(cmd);
  free(cmd);
  if (st == -1) return cli_errorf(sh, "%s: cannot run the command", argv[0]);
  if (WIFEXITED(st) && WEXITSTATUS(st) != 0)
    return cli_errorf(sh, "%s: the command exited with status %d", argv[0], WEXITSTATUS(st));
  if (WIFSIGNALED(st))
    return cli_errorf(sh, "%s: the command was killed by signal %d", argv[0], WTERMSIG(st));
  return 0;
}

int cli_dot_copies(cli_shell *sh, int argc, char **argv) {
  const char *cmd = argv[0];
  bool backup = !strcmp(cmd, ".backup");
  /* sqlite3 writes ".backup ?DB? FILE": its DB "main" is the only database here */
  if (backup && argc == 3 && !strcmp(argv[1], "main")) {
    argv++;
    argc--;
  }
  if (backup ? argc != 2 : argc != 1)
    return cli_errorf(sh, "usage: %s", backup ? ".backup DIR" : ".refresh");
  if (!sh->db) return cli_errorf(sh, "%s: no database open", cmd);
  char msg[1024] = "";
  int rc = backup ? rowan_backup(sh->db, argv[1], msg, sizeof msg) : rowan_refresh(sh->db);
  if (rc != ROWAN_OK) return cli_errorf(sh, "%s: %s", cmd, backup ? msg : rowan_errmsg(sh->db));
  return 0;
}

int cli_dot_advise(cli_shell *sh, int argc, char **argv) {
  if (argc != 3) return cli_errorf(sh, "usage: .advise TABLE FILE");
  if (!sh->db) return cli_errorf(sh, ".advise: no database open");
  FILE *f = fopen(argv[2], "rb");
  if (!f) return cli_errorf(sh, ".advise: cannot open \"%s\": %s", argv[2], strerror(errno));
  size_t cap = 65536, n = 0;
  char *text = malloc(cap);
  for (;;) {
    if (!text) break;
    n += fread(text + n, 1, cap - n, f);
    if (n < cap) break;
    char *t = cap < (size_t)1 << 30 ? realloc(text, cap * 2) : NULL;
    if (!t) {
      free(text);
      text = NULL;
      break;
    }
    text = t;
    cap *= 2;
  }
  bool bad = ferror(f);
  int why = errno;
  fclose(f);
  if (!text) return cli_errorf(sh, ".advise: \"%s\" is too big to read", argv[2]);
  if (bad) {
    free(text);
    return cli_errorf(sh, ".advise: cannot read \"%s\": %s", argv[2], strerror(why));
  }
  /* A UTF-8 byte-order mark is not part of the queries (as for .read and -f). */
  size_t skip = n >= 3 && (unsigned char)text[0] == 0xEF && (unsigned char)text[1] == 0xBB &&
                        (unsigned char)text[2] == 0xBF
                    ? 3
                    : 0;
  char *report = NULL;
  int rc = rowan_advise(sh->db, argv[1], text + skip, (int)(n - skip), argv[2], &report);
  free(text);
  if (rc != ROWAN_OK) return cli_errorf(sh, ".advise: %s", rowan_errmsg(sh->db));
  fputs(report, sh->out);
  rowan_advise_free(report);
  return 0;
}
