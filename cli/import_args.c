/*
** cli/import_args.c: the shell's `.import` arguments into cli_import_options
** (cli_import_parse_args, cli/import.h): options anywhere, "--name value" or "--name=value",
** "--" ending them; the operands moved together (files, then the table). It does not check
** that files or the table exist (cli_import does).
*/
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/import.h"

/* ---- `.import` arguments ---------------------------------------------------------- */

/* The value of option `name` given as "--name=value" or "--name value". */
static const char *opt_value(int argc, char **argv, int *i, const char *arg, char *err,
                             size_t cap) {
  const char *eq = strchr(arg, '=');
  if (eq) return eq + 1;
  if (*i + 1 >= argc) {
    snprintf(err, cap, ".import: option %s needs a value", arg);
    return NULL;
  }
  return argv[++*i];
}

static int opt_is(const char *arg, const char *name) {
  size_t n = strlen(name);
  return strncmp(arg, name, n) == 0 && (arg[n] == 0 || arg[n] == '=');
}

int cli_import_parse_args(int argc, char **argv, cli_import_options *opts, int *first_file,
                          int *n_files, char *err, size_t cap) {
  cli_import_options_init(opts);
  char **ops = malloc(((size_t)argc + 1) * sizeof *ops);
  char **rest = malloc(((size_t)argc + 1) * sizeof *rest);
  int nops = 0, nrest = 0, rc = ROWAN_ERROR, dashdash = 0;
  if (!ops || !rest) {
    snprintf(err, cap, "out of memory");
    free(ops);
    free(rest);
    return ROWAN_NOMEM;
  }
  for (int i = 0; i < argc; i++) {
    const char *a = argv[i];
    if (dashdash || a[0] != '-' || a[1] != '-') {
      if (a[0] == '-' && a[1] != 0 && a[1] != '-' && !dashdash) {
        snprintf(err, cap, ".import: unknown option %s (options are spelled --name)", a);
        goto out;
      }
      ops[nops++] = argv[i];
      continue;
    }
    rest[nrest++] = argv[i];
    const char *v;
    if (strcmp(a, "--") == 0) dashdash = 1;
    else if (strcmp(a, "--csv") == 0) opts->format = CLI_IMPORT_CSV;
    else if (strcmp(a, "--tsv") == 0) opts->format = CLI_IMPORT_TSV;
    else if (strcmp(a, "--header") == 0) opts->header = 1;
    else if (strcmp(a, "--no-header") == 0) opts->header = 0;
    else if (strcmp(a, "--bulk") == 0) opts->bulk = 1, opts->no_bulk = 0;
    else if (strcmp(a, "--no-bulk") == 0) opts->no_bulk = 1, opts->bulk = 0;
    else if (strcmp(a, "--no-flush") == 0) opts->no_flush = 1;
    else if (opt_is(a, "--columns")) {
      if (!(v = opt_value(argc, argv, &i, a, err, cap))) goto out;
      opts->columns = v;
    } else if (opt_is(a, "--null")) {
      if (!(v = opt_value(argc, argv, &i, a, err, cap))) goto out;
      opts->null_text = v;
    } else if (opt_is(a, "--reject")) {
      if (!(v = opt_value(argc, argv, &i, a, err, cap))) goto out;
      opts->reject_path = v;
    } else if (opt_is(a, "--delimiter")) {
      if (!(v = opt_value(argc, argv, &i, a, err, cap))) goto out;
      if (strcmp(v, "\\t") == 0 || strcmp(v, "tab") == 0) opts->delimiter = '\t';
      else if (strlen(v) == 1 && v[0] != '\n' && v[0] != '\r')
        opts->delimiter = (unsigned char)v[0];
      else {
        snprintf(err, cap, ".import: --delimiter takes one character (or \\t), not '%s'", v);
        goto out;
      }
    } else if (opt_is(a, "--max-errors") || opt_is(a, "--batch")) {
      int batch = opt_is(a, "--batch");
      if (!(v = opt_value(argc, argv, &i, a, err, cap))) goto out;
      char *end = NULL;
      errno = 0;
      long long n = strtoll(v, &end, 10);
      if (errno || !end || *end || end == v || n < (batch ? 1 : 0) ||
          (batch && n > 1000000)) {
        snprintf(err, cap, ".import: %s takes a %s number, not '%s'", batch ? "--batch"
                 : "--max-errors", batch ? "positive" : "non-negative", v);
        goto out;
      }
      if (batch) opts->batch_rows = (int)n;
      else opts->max_errors = (int64_t)n;
    } else {
      snprintf(err, cap, ".import: unknown option %s", a);
      goto out;
    }
    if (i < argc && rest[nrest - 1] != argv[i]) rest[nrest++] = argv[i];
  }
  if (nops < 2) {
    snprintf(err, cap, "usage: .import [--csv|--tsv] [--header] [--columns a,b,c] "
             "[--null TEXT] [--delimiter C] [--reject FILE] [--max-errors N] [--batch N] "
             "[--bulk|--no-bulk] [--no-flush] FILE... TABLE (.help import)");
    goto out;
  }
  /* Options first, then the files, then the table, so the operands are contiguous. */
  for (int i = 0; i < nrest; i++) argv[i] = rest[i];
  for (int i = 0; i < nops; i++) argv[nrest + i] = ops[i];
  *first_file = nrest;
  *n_files = nops - 1;
  rc = ROWAN_OK;
out:
  free(ops);
  free(rest);
  return rc;
}
