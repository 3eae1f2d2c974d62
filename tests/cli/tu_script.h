/*
** tests/cli/tu_script.h: a small runner of the example scripts (examples/sensor/schema.sql,
** load.sql) for the cli tests, header-only: SQL text goes to rowan_exec, each `.import`
** line to cli_import_parse_args + glob(3) + cli_import, as the shell does. Paths are
** relative to the working directory (the tests chdir to the source tree). Failures are
** cmocka assertions. Not here: the shell's other dot-commands.
*/
#ifndef ROWAN_TU_SCRIPT_H
#define ROWAN_TU_SCRIPT_H

#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/import.h"
#include "rowan.h"

/* Files an .import of several files may load at most (the scaled-down runs load fewer);
** the test sets it before running a script. */
static int n_files_wanted;

static void run_sql(rowan_db *db, const char *sql) {
  int rc = rowan_exec(db, sql, NULL, NULL);
  if (rc != ROWAN_OK) fprintf(stderr, "script SQL failed: %s\n", rowan_errmsg(db));
  assert_int_equal(rc, ROWAN_OK);
}

static void run_import(rowan_db *db, char *line) {
  char *argv[64];
  int argc = 0;
  for (char *t = strtok(line, " \t\r\n"); t && argc < 64; t = strtok(NULL, " \t\r\n"))
    argv[argc++] = t;
  assert_true(argc >= 2);
  assert_string_equal(argv[0], ".import");
  cli_import_options o;
  int first, nf;
  char err[600];
  assert_int_equal(cli_import_parse_args(argc - 1, argv + 1, &o, &first, &nf, err, sizeof err),
                   ROWAN_OK);
  glob_t g;
  memset(&g, 0, sizeof g);
  for (int i = 0; i < nf; i++)
    assert_int_equal(glob(argv[1 + first + i], i ? GLOB_APPEND : 0, NULL, &g), 0);
  int n = (int)g.gl_pathc;
  if (n > 1 && n > n_files_wanted) n = n_files_wanted; /* the scaled-down run */
  cli_import_result res;
  int rc = cli_import(db, (const char *const *)g.gl_pathv, n, argv[argc - 1], &o, &res, err,
                      sizeof err);
  if (rc != ROWAN_OK) fprintf(stderr, "import failed: %s\n", err);
  assert_int_equal(rc, ROWAN_OK);
  assert_int_equal(res.rows_rejected, 0);
  assert_int_equal(res.files_done, n);
  globfree(&g);
}

/* Run a script of SQL and .import lines (paths relative to the source tree). */
static void run_script(rowan_db *db, const char *path) {
  FILE *fp = fopen(path, "r");
  assert_non_null(fp);
  size_t cap = 1 << 16, n = 0;
  char *sql = malloc(cap);
  assert_non_null(sql);
  sql[0] = 0;
  char line[4096];
  while (fgets(line, sizeof line, fp)) {
    if (line[0] == '.') {
      if (sql[strspn(sql, " \t\r\n")]) run_sql(db, sql);
      n = 0;
      sql[0] = 0;
      run_import(db, line);
      continue;
    }
    size_t l = strlen(line);
    assert_true(n + l + 1 < cap);
    memcpy(sql + n, line, l + 1);
    n += l;
  }
  fclose(fp);
  if (sql[strspn(sql, " \t\r\n")]) run_sql(db, sql);
  free(sql);
}

#endif /* ROWAN_TU_SCRIPT_H */
