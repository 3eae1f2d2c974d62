/*
** cli/dot_dump.c: the rows half of the shell's .dump (sqlite3's .dump, in Rowan's SQL):
** every row of a table read with one SELECT through the public API and written as an
** UPSERT statement whose literals give back the same value: integers and BOOLEAN as
** numbers and TRUE/FALSE, DOUBLE and FLOAT with 17 significant digits (NaN and the
** infinities as CASTs of their text), DECIMAL as its exact text, CHAR and VARCHAR quoted
** with '' for ', DATE, TIME and TIMESTAMP as typed literals, VARBINARY as X'hex', NULL.
** Not here: the CREATE statements and the order of the dump (cli/dot_schema.c
** cli_dot_dump), the values' own formats (the API's getters).
*/
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalog/types.h"
#include "cli/shell.h"

static void put_quoted(FILE *out, const char *s, size_t n) {
  fputc('\'', out);
  for (size_t i = 0; i < n; i++) {
    if (s[i] == '\'') fputc('\'', out);
    fputc(s[i], out);
  }
  fputc('\'', out);
}

/* Column i of the current row as a literal of type id. */
static void put_literal(FILE *out, rowan_stmt *st, int i, int id) {
  if (rowan_column_type(st, i) == ROWAN_NULL) {
    fputs("NULL", out);
    return;
  }
  const char *t = NULL;
  switch (id) {
    case CAT_T_BOOLEAN: fputs(rowan_column_int64(st, i) ? "TRUE" : "FALSE", out); return;
    case CAT_T_TINYINT: case CAT_T_SMALLINT: case CAT_T_INTEGER: case CAT_T_BIGINT:
      fprintf(out, "%lld", (long long)rowan_column_int64(st, i));
      return;
    case CAT_T_FLOAT: case CAT_T_DOUBLE: {
      double d = rowan_column_double(st, i);
      if (isfinite(d)) {
        char b[40];
        snprintf(b, sizeof b, "%.17g", d);
        /* a literal with neither '.' nor an exponent reads as an integer: keep it a double */
        fputs(b, out);
        if (!strpbrk(b, ".eE")) fputs("e0", out);
      } else {
        t = rowan_column_text(st, i);
        fprintf(out, "CAST('%s' AS DOUBLE)", t ? t : "NaN");
      }
      return;
    }
    case CAT_T_DECIMAL: t = rowan_column_text(st, i); fputs(t ? t : "NULL", out); return;
    case CAT_T_DATE: fputs("DATE ", out); break;
    case CAT_T_TIME: fputs("TIME ", out); break;
    case CAT_T_TIMESTAMP: fputs("TIMESTAMP ", out); break;
    case CAT_T_VARBINARY: {
      const unsigned char *p = rowan_column_blob(st, i);
      int n = rowan_column_bytes(st, i);
      fputs("X'", out);
      for (int k = 0; k < n; k++) fprintf(out, "%02X", p[k]);
      fputc('\'', out);
      return;
    }
    default: break; /* CHAR, VARCHAR and the typed literals' text */
  }
  const char *s = rowan_column_blob(st, i);
  put_quoted(out, s ? s : "", (size_t)rowan_column_bytes(st, i));
}

int cli_dump_rows(cli_shell *sh, const char *table, const char *cols, const char *where,
                  const int *types, int ncols) {
  size_t n = strlen(table) + strlen(cols) + (where ? strlen(where) : 0) + 40;
  char *sql = malloc(n);
  if (!sql) return cli_errorf(sh, ".dump: out of memory");
  snprintf(sql, n, "SELECT %s FROM %s%s%s", cols, table, where ? " WHERE " : "",
           where ? where : "");
  rowan_stmt *st = NULL;
  int rc = rowan_prepare(sh->db, sql, -1, &st, NULL);
  free(sql);
  if (rc != ROWAN_OK || !st || rowan_column_count(st) != ncols) {
    rowan_finalize(st);
    return cli_errorf(sh, ".dump: cannot read %s: %s", table, rowan_errmsg(sh->db));
  }
  while ((rc = rowan_step(st)) == ROWAN_ROW) {
    fprintf(sh->out, "UPSERT INTO %s (%s) VALUES (", table, cols);
    for (int i = 0; i < ncols; i++) {
      if (i) fputs(", ", sh->out);
      put_literal(sh->out, st, i, types[i]);
    }
    fputs(");\n", sh->out);
  }
  if (rc != ROWAN_DONE) {
    int e = cli_errorf(sh, ".dump: reading %s failed: %s", table, rowan_errmsg(sh->db));
    rowan_finalize(st);
    return e;
  }
  rowan_finalize(st);
  return 0;
}
