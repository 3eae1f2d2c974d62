/*
** cli/dot_threads.c: `.threads [N|default] [MIN_ROWS]`, the shell's scan threads (through
** rowan_set_scan_threads): with N, large table scans run in chunks on N threads (1: serial;
** default or 0: one per processor); MIN_ROWS sets the estimated rows a scan needs to be cut
** (default 100000). Alone, it prints the threads and the setting. docs/SHELL.md ".threads".
*/
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/shell.h"

/* A whole number in s: true with *out, false for anything else. */
static bool whole(const char *s, long long *out) {
  char *end;
  errno = 0;
  long long v = strtoll(s, &end, 10);
  if (!*s || *end || errno || v < 0) return false;
  *out = v;
  return true;
}

int cli_dot_threads(cli_shell *sh, int argc, char **argv) {
  if (argc == 1) {
    fprintf(sh->out, "%d\n", rowan_scan_threads(sh->db));
    return 0;
  }
  long long n = 0, min_rows = -1;
  if (argc > 3 || (strcmp(argv[1], "default") != 0 && !whole(argv[1], &n)) ||
      (argc == 3 && !whole(argv[2], &min_rows)))
    return cli_errorf(sh, "usage: .threads [N|default] [MIN_ROWS] (N 0..64, MIN_ROWS a whole "
                      "number): not \"%s%s%s\"", argv[1], argc == 3 ? " " : "",
                      argc == 3 ? argv[2] : "");
  if (n > 1000000) n = 1000000; /* refused below, with the value named */
  if (rowan_set_scan_threads(sh->db, (int)n, min_rows) != ROWAN_OK)
    return cli_errorf(sh, ".threads: %s", rowan_errmsg(sh->db));
  return 0;
}
