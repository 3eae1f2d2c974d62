/*
** tests/cli/test_import_args.c: the `.import` argument parser (cli_import_parse_args):
** formats, --header, --columns, --null, --reject, --max-errors, --delimiter (a character or
** an escape such as \t), --no-flush, several files before the table, and the refusals (a
** negative --max-errors, an unknown option, a missing file or table, an option without its
** value) with messages naming the option.
** Not here: what an import does with the options (test_import.c, test_import_rows.c).
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "cli/import.h"
#include "rowan.h"

static void parse_args(void **state) {
  (void)state;
  char a0[] = "--tsv", a1[] = "a.tsv", a2[] = "--header", a3[] = "--columns", a4[] = "x,y",
       a5[] = "b.tsv", a6[] = "--null=NA", a7[] = "--reject", a8[] = "r.csv",
       a9[] = "--max-errors", a10[] = "7", a11[] = "--delimiter", a12[] = ";", a13[] = "TBL";
  char *argv[] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13};
  int argc = 14, first = -1, nf = -1;
  cli_import_options o;
  char err[256];
  assert_int_equal(cli_import_parse_args(argc, argv, &o, &first, &nf, err, sizeof err),
                   ROWAN_OK);
  assert_int_equal(o.format, CLI_IMPORT_TSV);
  assert_int_equal(o.header, 1);
  assert_string_equal(o.columns, "x,y");
  assert_string_equal(o.null_text, "NA");
  assert_string_equal(o.reject_path, "r.csv");
  assert_int_equal(o.max_errors, 7);
  assert_int_equal(o.delimiter, ';');
  assert_int_equal(nf, 2);
  assert_string_equal(argv[first], "a.tsv");
  assert_string_equal(argv[first + 1], "b.tsv");
  assert_string_equal(argv[argc - 1], "TBL");

  char b0[] = "--max-errors", b1[] = "-3", b2[] = "f", b3[] = "T";
  char *bad1[] = {b0, b1, b2, b3};
  assert_int_equal(cli_import_parse_args(4, bad1, &o, &first, &nf, err, sizeof err),
                   ROWAN_ERROR);
  assert_non_null(strstr(err, "--max-errors"));
  char c0[] = "--bogus", c1[] = "f", c2[] = "T";
  char *bad2[] = {c0, c1, c2};
  assert_int_equal(cli_import_parse_args(3, bad2, &o, &first, &nf, err, sizeof err),
                   ROWAN_ERROR);
  assert_non_null(strstr(err, "--bogus"));
  char d0[] = "--csv", d1[] = "onlytable";
  char *bad3[] = {d0, d1};
  assert_int_equal(cli_import_parse_args(2, bad3, &o, &first, &nf, err, sizeof err),
                   ROWAN_ERROR);
  char e0[] = "f", e1[] = "T", e2[] = "--columns";
  char *bad4[] = {e0, e1, e2};
  assert_int_equal(cli_import_parse_args(3, bad4, &o, &first, &nf, err, sizeof err),
                   ROWAN_ERROR);
  assert_non_null(strstr(err, "needs a value"));
  char g0[] = "--delimiter", g1[] = "\\t", g2[] = "f", g3[] = "T";
  char *ok2[] = {g0, g1, g2, g3};
  assert_int_equal(cli_import_parse_args(4, ok2, &o, &first, &nf, err, sizeof err), ROWAN_OK);
  assert_int_equal(o.delimiter, '\t');
  assert_int_equal(nf, 1);
  assert_string_equal(ok2[first], "f");
  assert_int_equal(o.no_flush, 0);
  char h0[] = "--no-flush", h1[] = "f", h2[] = "T";
  char *ok3[] = {h0, h1, h2};
  assert_int_equal(cli_import_parse_args(3, ok3, &o, &first, &nf, err, sizeof err), ROWAN_OK);
  assert_int_equal(o.no_flush, 1);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(parse_args),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
