/*
** cli/dot_asof.c: `.asof [TIMESTAMP|off]`, the shell's read time (Phoenix's CurrentSCN
** connection property, through rowan_set_as_of): with a time, every SELECT reads the
** database as it was then (UTC, the clock of cell timestamps) and writes are refused; `off`
** reads the present again; alone, it prints the time set. docs/SHELL.md ".asof". The time
** is read here (YYYY-MM-DD [HH:MM[:SS[.fff]]], UTC); whether it is inside the look-back
** window is checked by each SELECT. The raw cell views (.raw) ignore it: they show every
** version the store keeps.
*/
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "cli/shell.h"

/* Days from 1970-01-01 to y-m-d (proleptic Gregorian; Howard Hinnant's algorithm). */
static int64_t days_from_civil(int64_t y, int m, int d) {
  y -= m <= 2;
  int64_t era = (y >= 0 ? y : y - 399) / 400;
  int64_t yoe = y - era * 400;
  int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

/* "YYYY-MM-DD[ HH:MM[:SS[.fff]]]" (or a T between) as ms since the epoch; false if not. */
static bool parse_time(const char *s, int64_t *ms) {
  int y, mo, d, h = 0, mi = 0, sec = 0, n = 0;
  if (sscanf(s, "%4d-%2d-%2d%n", &y, &mo, &d, &n) != 3) return false;
  const char *p = s + n;
  if (*p == ' ' || *p == 'T') {
    int k = 0;
    if (sscanf(p + 1, "%2d:%2d%n", &h, &mi, &k) != 2) return false;
    p += 1 + k;
    if (*p == ':') {
      if (sscanf(p + 1, "%2d%n", &sec, &k) != 1) return false;
      p += 1 + k;
    }
  }
  int frac = 0, digits = 0;
  if (*p == '.')
    for (p++; *p >= '0' && *p <= '9'; p++, digits++)
      if (digits < 3) frac = frac * 10 + (*p - '0');
  for (; digits > 0 && digits < 3; digits++) frac *= 10;
  if (*p || y < 1970 || mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || sec > 59)
    return false;
  *ms = ((days_from_civil(y, mo, d) * 24 + h) * 60 + mi) * 60000LL + sec * 1000LL + frac;
  return true;
}

/* ms as "YYYY-MM-DD HH:MM:SS.fff". */
static void print_time(FILE *o, int64_t ms) {
  int64_t days = ms / 86400000, rest = ms % 86400000;
  int64_t z = days + 719468, era = z / 146097, doe = z - era * 146097;
  int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100), mp = (5 * doy + 2) / 153;
  int64_t d = doy - (153 * mp + 2) / 5 + 1, m = mp < 10 ? mp + 3 : mp - 9;
  int64_t y = yoe + era * 400 + (m <= 2);
  fprintf(o, "%04" PRId64 "-%02" PRId64 "-%02" PRId64 " %02" PRId64 ":%02" PRId64 ":%02" PRId64
          ".%03" PRId64, y, m, d, rest / 3600000, rest / 60000 % 60, rest / 1000 % 60,
          rest % 1000);
}

int cli_dot_asof(cli_shell *sh, int argc, char **argv) {
  if (argc == 1) {
    int64_t t = rowan_as_of(sh->db);
    if (!t) fprintf(sh->out, "off (the present)\n");
    else {
      print_time(sh->out, t);
      fprintf(sh->out, " UTC\n");
    }
    return 0;
  }
  char buf[64] = "";
  for (int i = 1; i < argc && strlen(buf) + strlen(argv[i]) + 2 < sizeof buf; i++) {
    if (i > 1) strcat(buf, " ");
    strcat(buf, argv[i]);
  }
  int64_t ms = 0;
  if (strcmp(buf, "off") != 0 && !parse_time(buf, &ms))
    return cli_errorf(sh, "usage: .asof [YYYY-MM-DD [HH:MM[:SS[.fff]]] | off] (UTC, from 1970): "
                      "not \"%s\"", buf);
  if (ms == 0 && strcmp(buf, "off") != 0)
    return cli_errorf(sh, ".asof: %s is the start of 1970, before any cell", buf);
  if (rowan_set_as_of(sh->db, ms) != ROWAN_OK)
    return cli_errorf(sh, ".asof: %s", rowan_errmsg(sh->db));
  return 0;
}
