/*
** tests/cli/test_import_rows.c: every case of test_import.c with --no-bulk, so the row-by-row
** path (prepared UPSERTs in transactions) keeps its coverage now that an import into an
** empty table takes the bulk path by default. Nothing of its own: the cases are
** test_import.c's, with each cli_import call made through import_rows (opts.no_bulk set).
*/
#include <stdio.h>

#include "cli/import.h"

static int import_rows(rowan_db *db, const char *const *files, int n, const char *table,
                       const cli_import_options *opts, cli_import_result *res, char *err,
                       size_t cap) {
  cli_import_options o;
  if (opts) o = *opts;
  else cli_import_options_init(&o);
  o.no_bulk = 1;
  return cli_import(db, files, n, table, &o, res, err, cap);
}

#define cli_import import_rows /* cli/import.h is not read again: its guard */
#define AUTO_BULK 0            /* the import into an empty table goes row by row */
#include "test_import.c"
