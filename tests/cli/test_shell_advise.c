/*
** tests/cli/test_shell_advise.c: the shell's .advise TABLE FILE as a user types it: on the
** tour's table (examples/sensor/schema.sql, a few stations' hours imported from a CSV file)
** with the tour's query file (examples/sensor/advise.sql) it prints the advice, the tour's
** key first, and exits 0; a missing file, a wrong argument count, an unknown table, a file
** with a syntax error (named with its line and column), a file holding an UPSERT and a
** directory each fail with their message on stderr and exit status 1; a leading UTF-8
** byte-order mark is skipped. Drives the built binary.
** Not here: the model and the EXPLAIN figures (tests/api/test_advise.c).
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <cmocka.h>

#include "test_shell_util.h"

#ifndef ROWAN_SOURCE_DIR
#define ROWAN_SOURCE_DIR "."
#endif

static int setup(void **state) {
  char *dir = sh_tmp_make();
  char csv[600], imp[800], schema[700];
  snprintf(csv, sizeof csv, "%s/rows.csv", dir);
  FILE *f = fopen(csv, "w");
  if (!f) return -1;
  const char *st[4] = {"Aotizhongxin", "Dongsi", "Gucheng", "Wanliu"};
  for (int s = 0; s < 4; s++)
    for (int d = 1; d <= 3; d++)
      for (int h = 0; h < 24; h++)
        fprintf(f, "%s,2016-07-%02d %02d:00:00,%d.5\n", st[s], d, h, h + s);
  fclose(f);
  snprintf(schema, sizeof schema, ".read %s/examples/sensor/schema.sql", ROWAN_SOURCE_DIR);
  snprintf(imp, sizeof imp, ".import --csv --columns STATION,TS,TEMP %s SENSOR", csv);
  const char *cmds[] = {schema, imp, NULL};
  *state = sh_fixture_new(cmds);
  sh_tmp_remove(dir);
  return *state ? 0 : -1;
}

static int teardown(void **state) {
  sh_fixture_free(*state);
  return 0;
}

static void advise_tour_queries(void **state) {
  const sh_fixture *f = *state;
  char cmd[700];
  snprintf(cmd, sizeof cmd, ".advise SENSOR %s/examples/sensor/advise.sql", ROWAN_SOURCE_DIR);
  const char *cmds[] = {cmd, NULL};
  sh_result r;
  sh_run_db(f, NULL, cmds, NULL, &r);
  if (r.status != 0 || !strstr(r.out, "Row-key advice for SENSOR: 11 queries from") ||
      !strstr(r.out, "First choice: PRIMARY KEY (STATION, TS DESC), the current key") ||
      !strstr(r.out, "SENSOR holds 288 rows")) {
    sh_dump(&r);
    fail();
  }
  assert_string_equal(r.err, "");
  sh_result_free(&r);
}

/* Run .advise with args on f's database: it must fail with `want` in its stderr. */
static void expect_fail(const sh_fixture *f, const char *args, const char *want) {
  char cmd[900];
  snprintf(cmd, sizeof cmd, ".advise%s", args);
  const char *cmds[] = {cmd, NULL};
  sh_result r;
  sh_run_db(f, NULL, cmds, NULL, &r);
  if (r.status != 1 || !strstr(r.err, want)) {
    fprintf(stderr, "expected \"%s\" from %s\n", want, cmd);
    sh_dump(&r);
    fail();
  }
  sh_result_free(&r);
}

static void advise_bad_input(void **state) {
  const sh_fixture *f = *state;
  char path[700], args[800];
  snprintf(path, sizeof path, "%s/missing.sql", f->dir);
  snprintf(args, sizeof args, " SENSOR %s", path);
  expect_fail(f, args, ".advise: cannot open \"");
  expect_fail(f, " SENSOR", "usage: .advise TABLE FILE");
  snprintf(path, sizeof path, "%s/bad.sql", f->dir);
  sh_write_file(path, "SELECT * FROM SENSOR;\n\nSELECT TS FROM SENSOR WHERE TS >;\n");
  snprintf(args, sizeof args, " SENSOR %s", path);
  expect_fail(f, args, "bad.sql: syntax error near \";\" at line 3, column 33");
  snprintf(args, sizeof args, " NOPE %s", path);
  expect_fail(f, args, ".advise: no such table: NOPE");
  sh_write_file(path, "UPSERT INTO SENSOR (STATION, TS) VALUES ('x', TIMESTAMP "
                      "'2016-01-01 00:00:00');\n");
  snprintf(args, sizeof args, " SENSOR %s", path);
  expect_fail(f, args, "bad.sql: the statement at line 1, column 1 is not a SELECT");
  /* a directory says why it cannot be read */
  snprintf(args, sizeof args, " SENSOR %s", f->dir);
  expect_fail(f, args, "Is a directory");
}

/* A file an editor saved with a UTF-8 byte-order mark is read as .read reads it. */
static void advise_bom(void **state) {
  const sh_fixture *f = *state;
  char path[700], cmd[800];
  snprintf(path, sizeof path, "%s/bom.sql", f->dir);
  sh_write_file(path, "\xEF\xBB\xBFSELECT * FROM SENSOR WHERE STATION = 'Dongsi';\n");
  snprintf(cmd, sizeof cmd, ".advise SENSOR %s", path);
  const char *cmds[] = {cmd, NULL};
  sh_result r;
  sh_run_db(f, NULL, cmds, NULL, &r);
  if (r.status != 0 || !strstr(r.out, "Row-key advice for SENSOR: 1 query from")) {
    sh_dump(&r);
    fail();
  }
  sh_result_free(&r);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(advise_tour_queries),
      cmocka_unit_test(advise_bad_input),
      cmocka_unit_test(advise_bom),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
