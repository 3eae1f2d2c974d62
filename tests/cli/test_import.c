/*
** tests/cli/test_import.c: CSV/TSV import (cli/import.h) into an in-memory database.
**
** Good files (tests/cli/data/import_good.*: quotes, "" escapes, embedded LF and CRLF, CRLF
** line ends, blank lines, empty and NULL fields, spaces kept, UTF-8, no final newline) in
** CSV and TSV, plain and compressed (gzip and lz4 written by the test from the plain
** fixture, several members/frames); a fixture for every reject reason (wrong field count,
** bad number, bad date, bad or unterminated quote, NULL into NOT NULL) with the reject
** file's lines and the counts checked; --max-errors, --columns, --null, header mapping,
** small transactions with rejects inside them, missing and damaged files, and a seeded
** random round trip of CSV quoting; the flush at the end of
** an import (and --no-flush), an index kept in step by a re-import that changes indexed
** values, and a --max-errors stop in a later batch keeping the earlier batches; numbers
** bound as numbers give the values and rejects a text bind gives. The `.import` argument
** parser is test_import_args.c. An import into an empty
** table takes the bulk path here; test_import_rows.c runs every case with --no-bulk.
**
** Not here: the shell's `.import` command line (tests/cli shell tests) and the real
** archive (test_archive.c).
*/
#include <ctype.h>
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <csv.h>
#include <lz4frame.h>
#include <zlib.h>

#include "cli/import.h"
#include "kv/env/env_mem.h"
#include "rowan.h"
#include "testutil.h"
#include "import_test_util.h"

#ifndef AUTO_BULK
#define AUTO_BULK 2 /* res.bulk_path into an empty table (test_import_rows.c: 0) */
#endif
#define GOOD_TABLE                                                                    \
  "CREATE TABLE T (ID INTEGER NOT NULL, NAME VARCHAR, NOTE VARCHAR, TEMP DOUBLE, " \
  "DAY DATE CONSTRAINT PK PRIMARY KEY (ID))"

/* ---- helpers --------------------------------------------------------------------- */

static int setup(void **state) { return imp_setup(state, "/tmp/rowan-import-XXXXXX"); }
static int teardown(void **state) { return imp_teardown(state); }

/* Numbers are compared by value, not by the engine's text format ("1.0" or "1"): a value
** that is wholly a number is rewritten with %.15g. */
static int collect(void *ctx, int ncol, char **values, char **names) {
  (void)names;
  sbuf *b = ctx;
  for (int i = 0; i < ncol; i++) {
    const char *v = values[i] ? values[i] : "<null>";
    char num[64];
    char *end = NULL;
    if (values[i] && (isdigit((unsigned char)v[0]) || v[0] == '-')) {
      double d = strtod(v, &end);
      if (end && *end == 0) {
        snprintf(num, sizeof num, "%.15g", d);
        v = num;
      }
    }
    sb_add(b, v, strlen(v));
    sb_add(b, i + 1 < ncol ? "|" : "\n", 1);
  }
  return 0;
}

/* Rows of a query as "a|b\n..." (NULL as <null>); caller frees. */
static char *query(rowan_db *db, const char *sql) {
  sbuf b = {NULL, 0};
  sb_add(&b, "", 0);
  int rc = rowan_exec(db, sql, collect, &b);
  if (rc != ROWAN_OK) fprintf(stderr, "query failed: %s\n  %s\n", sql, rowan_errmsg(db));
  assert_int_equal(rc, ROWAN_OK);
  return b.p;
}

static int64_t count(rowan_db *db, const char *table) {
  char sql[256];
  snprintf(sql, sizeof sql, "SELECT COUNT(*) FROM %s", table);
  char *s = query(db, sql);
  int64_t n = strtoll(s, NULL, 10);
  free(s);
  return n;
}

static void expect_rows(rowan_db *db, const char *sql, const char *want) {
  char *got = query(db, sql);
  if (strcmp(got, want) != 0) fprintf(stderr, "query: %s\ngot:\n%s\nwant:\n%s\n", sql, got, want);
  assert_string_equal(got, want);
  free(got);
}

static const char *fixture_path(const char *name) {
  static char buf[4][512];
  static int k;
  const char *src = getenv("ROWAN_SOURCE_DIR");
  char *p = buf[k++ % 4];
  snprintf(p, 512, "%s/tests/cli/data/%s", src ? src : ".", name);
  return p;
}

static void write_file(const char *path, const void *p, size_t n) {
  FILE *fp = fopen(path, "wb");
  assert_non_null(fp);
  assert_int_equal(fwrite(p, 1, n, fp), n);
  assert_int_equal(fclose(fp), 0);
}

static char *read_file(const char *path, size_t *n) {
  FILE *fp = fopen(path, "rb");
  assert_non_null(fp);
  sbuf b = {NULL, 0};
  sb_add(&b, "", 0);
  char tmp[4096];
  size_t k;
  while ((k = fread(tmp, 1, sizeof tmp, fp)) > 0) sb_add(&b, tmp, k);
  fclose(fp);
  if (n) *n = b.n;
  return b.p;
}

static int import1(fixture *f, const char *file, const char *table,
                   const cli_import_options *o, cli_import_result *res, char *err,
                   size_t cap) {
  const char *files[1] = {file};
  return cli_import(f->db, files, 1, table, o, res, err, cap);
}

/* The reject file parsed as CSV (with libcsv, not the import's parser): rows of 4 fields. */
#define REJ_ROWS 160 /* reject rows kept (header included) */
typedef struct rejects {
  int n;                  /* rows, header included */
  char *cell[REJ_ROWS][4]; /* fields */
  int nf[REJ_ROWS];       /* fields per row */
} rejects;

static void rj_field(void *s, size_t len, void *ctx) {
  rejects *r = ctx;
  if (r->n >= REJ_ROWS || r->nf[r->n] >= 4) return;
  char *c = malloc(len + 1);
  assert_non_null(c);
  if (len) memcpy(c, s, len);
  c[len] = 0;
  r->cell[r->n][r->nf[r->n]++] = c;
}

static void rj_row(int c, void *ctx) {
  (void)c;
  rejects *r = ctx;
  if (r->n < REJ_ROWS) r->n++;
}

static void read_rejects(const char *path, rejects *r) {
  memset(r, 0, sizeof *r);
  size_t n;
  char *text = read_file(path, &n);
  struct csv_parser p;
  assert_int_equal(csv_init(&p, CSV_STRICT | CSV_STRICT_FINI), 0);
  assert_int_equal(csv_parse(&p, text, n, rj_field, rj_row, r), n);
  assert_int_equal(csv_fini(&p, rj_field, rj_row, r), 0);
  csv_free(&p);
  free(text);
  assert_true(r->n >= 1);
  assert_int_equal(r->nf[0], 4);
  assert_string_equal(r->cell[0][0], "file");
  assert_string_equal(r->cell[0][1], "line");
  assert_string_equal(r->cell[0][2], "reason");
  assert_string_equal(r->cell[0][3], "record");
}

static void free_rejects(rejects *r) {
  for (int i = 0; i < r->n && i < REJ_ROWS; i++)
    for (int j = 0; j < r->nf[i]; j++) free(r->cell[i][j]);
}

/* Row i (1-based, after the header) of the reject file: from `file`, at `line`, with a
** reason containing each of the (NULL-terminated) words, and this raw record. */
static void expect_reject(const rejects *r, int i, const char *file, int line,
                          const char *record, ...) {
  assert_true(i < r->n);
  assert_int_equal(r->nf[i], 4);
  assert_string_equal(r->cell[i][0], file);
  assert_int_equal(atoi(r->cell[i][1]), line);
  assert_string_equal(r->cell[i][3], record);
  va_list ap;
  va_start(ap, record);
  const char *w;
  while ((w = va_arg(ap, const char *)) != NULL) {
    if (!strstr(r->cell[i][2], w))
      fprintf(stderr, "reject %d reason \"%s\" lacks \"%s\"\n", i, r->cell[i][2], w);
    assert_non_null(strstr(r->cell[i][2], w));
  }
  va_end(ap);
}

/* ---- good files -------------------------------------------------------------------- */

#define GOOD_CSV_ROWS                                           \
  "1|plain|simple|1.5|2024-01-02\n"                             \
  "2|comma, inside|say \"hi\"|-3.25|2024-02-29\n"               \
  "3|two\nlines|crlf\r\ninside|0|2023-12-31\n"                  \
  "4||<null>|<null>|<null>\n"                                   \
  "5| spaced |  padded  |125|2000-01-01\n"                      \
  "6|\xc3\xbcn\xc3\xaf" "c\xc3\xb8" "d\xc3\xa9" "|quote at end \"|7|1999-12-31\n"

static void good_csv(void **state) {
  fixture *f = *state;
  exec_ok(f->db, GOOD_TABLE);
  cli_import_options o;
  cli_import_options_init(&o);
  o.header = 1;
  o.null_text = "NA";
  cli_import_result res;
  char err[512];
  assert_int_equal(import1(f, fixture_path("import_good.csv"), "T", &o, &res, err, sizeof err),
                   ROWAN_OK);
  assert_string_equal(err, "");
  assert_int_equal(res.rows_read, 6);
  assert_int_equal(res.rows_loaded, 6);
  assert_int_equal(res.rows_rejected, 0);
  assert_int_equal(res.files_done, 1);
  assert_int_equal(res.stopped, 0);
  expect_rows(f->db, "SELECT ID, NAME, NOTE, TEMP, DAY FROM T ORDER BY ID", GOOD_CSV_ROWS);
  /* The empty quoted field is the empty string, not NULL. */
  expect_rows(f->db, "SELECT COUNT(*) FROM T WHERE NAME = ''", "1\n");
  char sum[512];
  cli_import_summary(&res, &o, sum, sizeof sum);
  assert_non_null(strstr(sum, "6 rows loaded, 0 rejected from 1 file"));
}

static void good_tsv(void **state) {
  fixture *f = *state;
  exec_ok(f->db, GOOD_TABLE);
  cli_import_options o;
  cli_import_options_init(&o);
  o.format = CLI_IMPORT_TSV;
  o.header = 1;
  o.null_text = "NA";
  cli_import_result res;
  char err[512];
  assert_int_equal(import1(f, fixture_path("import_good.tsv"), "T", &o, &res, err, sizeof err),
                   ROWAN_OK);
  assert_int_equal(res.rows_loaded, 4);
  assert_int_equal(res.rows_rejected, 0);
  /* No quoting in TSV: quotes and commas are data; an empty field is NULL. */
  expect_rows(f->db, "SELECT ID, NAME, NOTE, TEMP, DAY FROM T ORDER BY ID",
              "1|plain|simple|1.5|2024-01-02\n"
              "2|\"not quoted\"|comma, inside|-3.25|2024-02-29\n"
              "3|<null>|<null>|<null>|<null>\n"
              "4| spaced |x|125|2000-01-01\n");
}

static void compressed(void **state) {
  fixture *f = *state;
  size_t n;
  char *text = read_file(fixture_path("import_good.csv"), &n);
  char gz[128], lz[128], plain[128];
  snprintf(gz, sizeof gz, "%s/good.csv.gz", f->dir);
  snprintf(lz, sizeof lz, "%s/good.csv.lz4", f->dir);
  snprintf(plain, sizeof plain, "%s/good.csv", f->dir);
  write_gzip(gz, text, n, 3);   /* three members, cut mid-record */
  write_lz4(lz, text, n, 2);    /* two frames, cut mid-record */
  write_file(plain, text, n);
  const char *names[3] = {gz, lz, plain};
  const char *tables[3] = {"TGZ", "TLZ", "TPLAIN"};
  for (int i = 0; i < 3; i++) {
    char sql[256];
    snprintf(sql, sizeof sql,
             "CREATE TABLE %s (ID INTEGER NOT NULL PRIMARY KEY, NAME VARCHAR, NOTE VARCHAR, "
             "TEMP DOUBLE, DAY DATE)", tables[i]);
    exec_ok(f->db, sql);
    cli_import_options o;
    cli_import_options_init(&o);
    o.header = 1;
    o.null_text = "NA";
    cli_import_result res;
    char err[512];
    assert_int_equal(import1(f, names[i], tables[i], &o, &res, err, sizeof err), ROWAN_OK);
    assert_int_equal(res.rows_loaded, 6);
    assert_int_equal(res.rows_rejected, 0);
    snprintf(sql, sizeof sql, "SELECT ID, NAME, NOTE, TEMP, DAY FROM %s ORDER BY ID", tables[i]);
    expect_rows(f->db, sql, GOOD_CSV_ROWS);
  }
  /* A truncated gzip or lz4 file is an I/O error naming the file, not a short import. */
  char cut[128];
  for (int i = 0; i < 2; i++) {
    size_t zn;
    char *z = read_file(names[i], &zn);
    snprintf(cut, sizeof cut, "%s/cut%d", f->dir, i);
    write_file(cut, z, zn - 6);
    free(z);
    cli_import_options o;
    cli_import_options_init(&o);
    o.header = 1;
    o.null_text = "NA";
    cli_import_result res;
    char err[512];
    exec_ok(f->db, "DELETE FROM TPLAIN");
    assert_int_equal(import1(f, cut, "TPLAIN", &o, &res, err, sizeof err), ROWAN_IOERR);
    assert_non_null(strstr(err, cut));
    assert_int_equal(res.files_done, 0);
  }
  free(text);
}

/* ---- rejects ----------------------------------------------------------------------- */

/* Import fixture `name` into a fresh T with a reject file; returns the result. */
static int import_bad(fixture *f, const char *name, int64_t max_errors, cli_import_result *res,
                      rejects *rj, char *err, size_t cap) {
  exec_ok(f->db, "DROP TABLE IF EXISTS T");
  exec_ok(f->db, GOOD_TABLE);
  char rejpath[128];
  snprintf(rejpath, sizeof rejpath, "%s/rejects.csv", f->dir);
  cli_import_options o;
  cli_import_options_init(&o);
  o.header = 1;
  o.null_text = "NA";
  o.reject_path = rejpath;
  o.max_errors = max_errors;
  int rc = import1(f, fixture_path(name), "T", &o, res, err, cap);
  read_rejects(rejpath, rj);
  assert_int_equal(rj->n - 1, res->rows_rejected);
  assert_int_equal(res->rows_loaded + res->rows_rejected, res->rows_read);
  return rc;
}

static void reject_field_count(void **state) {
  fixture *f = *state;
  cli_import_result res;
  rejects rj;
  char err[512];
  assert_int_equal(import_bad(f, "import_bad_fields.csv", 0, &res, &rj, err, sizeof err),
                   ROWAN_OK);
  const char *file = fixture_path("import_bad_fields.csv");
  assert_int_equal(res.rows_loaded, 3);
  assert_int_equal(res.rows_rejected, 2);
  expect_reject(&rj, 1, file, 3, "2,b,n,1", "field count", "expected 5", "found 4", NULL);
  expect_reject(&rj, 2, file, 5, "4,d,n,1,2024-01-04,extra", "expected 5", "found 6", NULL);
  expect_rows(f->db, "SELECT ID FROM T ORDER BY ID", "1\n3\n5\n");
  free_rejects(&rj);
}

static void reject_number(void **state) {
  fixture *f = *state;
  cli_import_result res;
  rejects rj;
  char err[512];
  assert_int_equal(import_bad(f, "import_bad_number.csv", 0, &res, &rj, err, sizeof err),
                   ROWAN_OK);
  const char *file = fixture_path("import_bad_number.csv");
  assert_int_equal(res.rows_loaded, 3);
  assert_int_equal(res.rows_rejected, 3);
  expect_reject(&rj, 1, file, 3, "2,b,n,12abc,2024-01-02", "TEMP", "12abc", NULL);
  expect_reject(&rj, 2, file, 5, "four,d,n,2,2024-01-04", "ID", "four", NULL);
  expect_reject(&rj, 3, file, 6, "5,e,n,1e400,2024-01-05", "TEMP", "1e400", NULL);
  expect_rows(f->db, "SELECT ID, TEMP FROM T ORDER BY ID", "1|1.5\n3|2\n6|3\n");
  free_rejects(&rj);
}

static void reject_date(void **state) {
  fixture *f = *state;
  cli_import_result res;
  rejects rj;
  char err[512];
  assert_int_equal(import_bad(f, "import_bad_date.csv", 0, &res, &rj, err, sizeof err),
                   ROWAN_OK);
  const char *file = fixture_path("import_bad_date.csv");
  assert_int_equal(res.rows_loaded, 2);
  assert_int_equal(res.rows_rejected, 3);
  expect_reject(&rj, 1, file, 3, "2,b,n,1,2023-02-29", "DAY", "2023-02-29", NULL);
  expect_reject(&rj, 2, file, 4, "3,c,n,1,2024-13-01", "DAY", "2024-13-01", NULL);
  expect_reject(&rj, 3, file, 5, "4,d,n,1,yesterday", "DAY", "yesterday", NULL);
  expect_rows(f->db, "SELECT ID, DAY FROM T ORDER BY ID", "1|2024-01-01\n5|2024-02-29\n");
  free_rejects(&rj);
}

static void reject_quote(void **state) {
  fixture *f = *state;
  cli_import_result res;
  rejects rj;
  char err[512];
  assert_int_equal(import_bad(f, "import_bad_quote.csv", 0, &res, &rj, err, sizeof err),
                   ROWAN_OK);
  const char *file = fixture_path("import_bad_quote.csv");
  assert_int_equal(res.rows_rejected, 4);
  assert_int_equal(res.rows_loaded, 3);
  expect_reject(&rj, 1, file, 3, "2,\"b\"x,n,1,2024-01-02", "quot", NULL);
  expect_reject(&rj, 2, file, 4, "3,c\"d,n,1,2024-01-03", "quot", NULL);
  /* A stray opening quote: the rows after it are parsed again and load. */
  expect_reject(&rj, 3, file, 5, "4,\"open,n,1,2024-01-04", "unterminated quote", NULL);
  expect_reject(&rj, 4, file, 9, "7,\"never closed,n,1,2024-01-07", "unterminated quote",
                NULL);
  expect_rows(f->db, "SELECT ID, NAME FROM T ORDER BY ID", "1|a\n5|e\n6|ok\nfine\n");
  free_rejects(&rj);
}

static void reject_not_null(void **state) {
  fixture *f = *state;
  cli_import_result res;
  rejects rj;
  char err[512];
  assert_int_equal(import_bad(f, "import_bad_notnull.csv", 0, &res, &rj, err, sizeof err),
                   ROWAN_OK);
  const char *file = fixture_path("import_bad_notnull.csv");
  assert_int_equal(res.rows_loaded, 2);
  assert_int_equal(res.rows_rejected, 2);
  expect_reject(&rj, 1, file, 3, ",b,n,1,2024-01-02", "ID", "NULL", NULL);
  expect_reject(&rj, 2, file, 4, "NA,c,n,1,2024-01-03", "ID", "NULL", NULL);
  expect_rows(f->db, "SELECT ID FROM T ORDER BY ID", "1\n4\n");
  assert_non_null(strstr(res.first_reject, "import_bad_notnull.csv:3:"));
  free_rejects(&rj);
}

static void max_errors(void **state) {
  fixture *f = *state;
  cli_import_result res;
  rejects rj;
  char err[512];
  /* import_bad_number.csv: good 1, bad 2 (line 3), good 3, bad four (line 5), ... */
  assert_int_equal(import_bad(f, "import_bad_number.csv", 2, &res, &rj, err, sizeof err),
                   ROWAN_CONSTRAINT);
  assert_int_equal(res.stopped, 1);
  assert_int_equal(res.rows_rejected, 2);
  assert_int_equal(res.rows_loaded, 2);
  assert_non_null(strstr(err, "2 rows committed"));
  assert_non_null(strstr(err, ":5"));
  expect_rows(f->db, "SELECT ID FROM T ORDER BY ID", "1\n3\n");
  free_rejects(&rj);
  /* A limit that is not reached changes nothing. */
  assert_int_equal(import_bad(f, "import_bad_number.csv", 4, &res, &rj, err, sizeof err),
                   ROWAN_OK);
  assert_int_equal(res.stopped, 0);
  assert_int_equal(res.rows_loaded, 3);
  free_rejects(&rj);
}

/* ---- mapping ----------------------------------------------------------------------- */

static void columns_option(void **state) {
  fixture *f = *state;
  exec_ok(f->db, "CREATE TABLE M (K VARCHAR NOT NULL PRIMARY KEY, F.A INTEGER, F.B DOUBLE)");
  char path[128];
  snprintf(path, sizeof path, "%s/cols.csv", f->dir);
  const char *text = "PM2.5,skip me,key\n1,x,k1\n2,y,k2\n,z,k3\n";
  write_file(path, text, strlen(text));
  cli_import_options o;
  cli_import_options_init(&o);
  o.header = 1;
  o.columns = "b, ,k"; /* a blank name skips its field; the header line is skipped */
  cli_import_result res;
  char err[512];
  assert_int_equal(import1(f, path, "M", &o, &res, err, sizeof err), ROWAN_OK);
  assert_int_equal(res.rows_loaded, 3);
  expect_rows(f->db, "SELECT K, A, B FROM M ORDER BY K",
              "k1|<null>|1\nk2|<null>|2\nk3|<null>|<null>\n");
  /* Family-qualified names, no header: every line is data. A quoted name keeps its case,
     so "k" is not the column K. */
  o.header = 0;
  o.columns = "F.A,,\"k\"";
  assert_int_equal(import1(f, path, "M", &o, &res, err, sizeof err), ROWAN_ERROR);
  assert_non_null(strstr(err, "--columns"));
  assert_int_equal(res.rows_read, 0);
  o.columns = "F.A,,k";
  assert_int_equal(import1(f, path, "M", &o, &res, err, sizeof err), ROWAN_OK);
  assert_int_equal(res.rows_read, 4);
  assert_int_equal(res.rows_rejected, 1);
  assert_int_equal(res.rows_loaded, 3);
  assert_non_null(strstr(res.first_reject, ":1: column F.A"));
  expect_rows(f->db, "SELECT K, A, B FROM M ORDER BY K",
              "k1|1|1\nk2|2|2\nk3|<null>|<null>\n");
  /* A list that maps nothing is an error before anything is read. */
  o.columns = ",";
  assert_int_equal(import1(f, path, "M", &o, &res, err, sizeof err), ROWAN_ERROR);
  assert_int_equal(res.rows_read, 0);
}

/* A UTF-8 byte-order mark at the start of a file (as spreadsheet programs write) is dropped,
** in plain, gzip and lz4 files, also when the compressed input hands it out a byte or two
** at a time; EF BB without BF, and files shorter than a mark, are read as they are. */
static void byte_order_mark(void **state) {
  fixture *f = *state;
  exec_ok(f->db, GOOD_TABLE);
  char path[160], err[512], sql[200];
  cli_import_result res;
  const char *with_header = "\xEF\xBB\xBFid,name\r\n1,a\r\n2,b\r\n";
  for (int kind = 0; kind < 3; kind++) {
    snprintf(path, sizeof path, "%s/bom%d.csv", f->dir, kind);
    size_t n = strlen(with_header);
    if (kind == 0) write_file(path, with_header, n);
    else if (kind == 1) write_gzip(path, with_header, n, (int)n); /* one byte per member */
    else write_lz4(path, with_header, n, (int)(n / 2));         /* two bytes per frame */
    cli_import_options o;
    cli_import_options_init(&o);
    o.header = 1;
    exec_ok(f->db, "DELETE FROM T");
    assert_int_equal(import1(f, path, "T", &o, &res, err, sizeof err), ROWAN_OK);
    assert_int_equal(res.rows_loaded, 2);
    expect_rows(f->db, "SELECT ID, NAME FROM T ORDER BY ID", "1|a\n2|b\n");
  }
  /* Without a header the mark is not part of the first field either. */
  cli_import_options o;
  cli_import_options_init(&o);
  o.columns = "id,name";
  snprintf(path, sizeof path, "%s/bom_data.csv", f->dir);
  write_file(path, "\xEF\xBB\xBF" "7,x\n", 7);
  exec_ok(f->db, "DELETE FROM T");
  assert_int_equal(import1(f, path, "T", &o, &res, err, sizeof err), ROWAN_OK);
  expect_rows(f->db, "SELECT ID, NAME FROM T", "7|x\n");
  /* Not a mark: EF BB 80 (U+FEC0) at the start of the file stays in the first field. */
  o.columns = "name,id";
  write_file(path, "\xEF\xBB\x80" "x,8\n", 7);
  assert_int_equal(import1(f, path, "T", &o, &res, err, sizeof err), ROWAN_OK);
  snprintf(sql, sizeof sql, "SELECT COUNT(*) FROM T WHERE ID = 8 AND NAME = '%s'",
           "\xEF\xBB\x80" "x");
  expect_rows(f->db, sql, "1\n");
  /* Shorter than a mark, and a file holding only the mark. */
  write_file(path, "9\n", 2);
  o.columns = "id";
  assert_int_equal(import1(f, path, "T", &o, &res, err, sizeof err), ROWAN_OK);
  assert_int_equal(res.rows_loaded, 1);
  write_file(path, "\xEF\xBB\xBF", 3);
  assert_int_equal(import1(f, path, "T", &o, &res, err, sizeof err), ROWAN_OK);
  assert_int_equal(res.rows_loaded, 0);
  assert_int_equal(count(f->db, "T"), 3);
}

static void header_mapping(void **state) {
  fixture *f = *state;
  exec_ok(f->db, GOOD_TABLE);
  char a[128], b[128], c[128];
  snprintf(a, sizeof a, "%s/a.csv", f->dir);
  snprintf(b, sizeof b, "%s/b.csv", f->dir);
  snprintf(c, sizeof c, "%s/c.csv", f->dir);
  /* Header names match case-insensitively and in any order; each file has its own. */
  const char *ta = "Temp,ID,name\n1.5,1,x\n";
  const char *tb = "id,DAY\n2,2024-05-06\n";
  const char *tc = "id,nosuch\n3,4\n";
  write_file(a, ta, strlen(ta));
  write_file(b, tb, strlen(tb));
  write_file(c, tc, strlen(tc));
  cli_import_options o;
  cli_import_options_init(&o);
  o.header = 1;
  cli_import_result res;
  char err[512];
  const char *files[3] = {a, b, c};
  assert_int_equal(cli_import(f->db, files, 2, "T", &o, &res, err, sizeof err), ROWAN_OK);
  assert_int_equal(res.files_done, 2);
  expect_rows(f->db, "SELECT ID, NAME, TEMP, DAY FROM T ORDER BY ID",
              "1|x|1.5|<null>\n2|<null>|<null>|2024-05-06\n");
  /* A header naming an unknown column stops the import there, naming the file. */
  assert_int_equal(cli_import(f->db, files, 3, "T", &o, &res, err, sizeof err), ROWAN_ERROR);
  assert_non_null(strstr(err, c));
  assert_non_null(strstr(err, "NOSUCH"));
  assert_int_equal(res.rows_loaded, 2);
  assert_int_equal(count(f->db, "T"), 2);
  /* No header, no list: the table's columns in order. */
  const char *td = "9,n9,note,2.5,2020-01-01\n";
  write_file(a, td, strlen(td));
  o.header = 0;
  assert_int_equal(import1(f, a, "T", &o, &res, err, sizeof err), ROWAN_OK);
  expect_rows(f->db, "SELECT ID, NAME, NOTE, TEMP, DAY FROM T WHERE ID = 9",
              "9|n9|note|2.5|2020-01-01\n");
  /* Unknown table, missing file: errors before anything is loaded. */
  assert_int_equal(import1(f, a, "NOPE", &o, &res, err, sizeof err), ROWAN_ERROR);
  assert_non_null(strstr(err, "NOPE"));
  char missing[160];
  snprintf(missing, sizeof missing, "%s/missing.csv", f->dir);
  files[0] = a;
  files[1] = missing;
  assert_int_equal(cli_import(f->db, files, 2, "T", &o, &res, err, sizeof err), ROWAN_IOERR);
  assert_non_null(strstr(err, "missing.csv"));
  assert_int_equal(res.rows_read, 0);
}

static void null_option(void **state) {
  fixture *f = *state;
  exec_ok(f->db, "CREATE TABLE N (K INTEGER NOT NULL PRIMARY KEY, S VARCHAR, D DOUBLE)");
  char path[128];
  snprintf(path, sizeof path, "%s/n.csv", f->dir);
  const char *text = "1,NA,NA\n2,\"NA\",\n3,,1\n4,\"\",2\n5,na,3\n";
  write_file(path, text, strlen(text));
  cli_import_options o;
  cli_import_options_init(&o);
  cli_import_result res;
  char err[512];
  /* Without --null, "NA" is text (and not a number: row 1 is rejected). */
  assert_int_equal(import1(f, path, "N", &o, &res, err, sizeof err), ROWAN_OK);
  assert_int_equal(res.rows_rejected, 1);
  expect_rows(f->db, "SELECT K, S, D FROM N ORDER BY K",
              "2|NA|<null>\n3|<null>|1\n4||2\n5|na|3\n");
  exec_ok(f->db, "DELETE FROM N");
  o.null_text = "NA";
  assert_int_equal(import1(f, path, "N", &o, &res, err, sizeof err), ROWAN_OK);
  assert_int_equal(res.rows_rejected, 0);
  expect_rows(f->db, "SELECT K, S, D FROM N ORDER BY K",
              "1|<null>|<null>\n2|<null>|<null>\n3|<null>|1\n4||2\n5|na|3\n");
}

static void small_batches(void **state) {
  fixture *f = *state;
  exec_ok(f->db, "CREATE TABLE B (K INTEGER NOT NULL PRIMARY KEY, V DOUBLE)");
  char path[128];
  snprintf(path, sizeof path, "%s/b.csv", f->dir);
  sbuf b = {NULL, 0};
  sb_add(&b, "", 0);
  int64_t good = 0, bad = 0;
  for (int i = 1; i <= 100; i++) {
    char line[64];
    if (i % 7 == 0) {
      snprintf(line, sizeof line, "%d,bad%d\n", i, i);
      bad++;
    } else {
      snprintf(line, sizeof line, "%d,%d.5\n", i, i);
      good++;
    }
    sb_add(&b, line, strlen(line));
  }
  write_file(path, b.p, b.n);
  free(b.p);
  cli_import_options o;
  cli_import_options_init(&o);
  o.batch_rows = 3; /* rejects fall inside open transactions */
  cli_import_result res;
  char err[512];
  assert_int_equal(import1(f, path, "B", &o, &res, err, sizeof err), ROWAN_OK);
  assert_int_equal(res.rows_loaded, good);
  assert_int_equal(res.rows_rejected, bad);
  assert_int_equal(count(f->db, "B"), good);
  expect_rows(f->db, "SELECT COUNT(*) FROM B WHERE MOD(K, 7) = 0", "0\n");
}

static void write_rows(const char *path, int from, int to, double base, int bad_line) {
  sbuf b = {NULL, 0};
  sb_add(&b, "", 0);
  for (int i = from; i <= to; i++) {
    char line[64];
    if (i - from + 1 == bad_line) snprintf(line, sizeof line, "%d,oops,z\n", i);
    else snprintf(line, sizeof line, "%d,%.1f,s%d\n", i, base + i, i);
    sb_add(&b, line, strlen(line));
  }
  write_file(path, b.p, b.n);
  free(b.p);
}

static void flush_index_batches(void **state) {
  fixture *f = *state;
  exec_ok(f->db, "CREATE TABLE X (K INTEGER NOT NULL PRIMARY KEY, V DOUBLE, S VARCHAR)");
  exec_ok(f->db, "CREATE INDEX XV ON X (V)");
  char p1[128], p2[128], p3[128];
  snprintf(p1, sizeof p1, "%s/x1.csv", f->dir);
  snprintf(p2, sizeof p2, "%s/x2.csv", f->dir);
  snprintf(p3, sizeof p3, "%s/y.csv", f->dir);
  write_rows(p1, 1, 40, 0.5, 0);
  write_rows(p2, 1, 40, 100, 25); /* line 25 is bad */
  write_rows(p3, 1, 10, 0, 0);
  cli_import_options o;
  cli_import_options_init(&o);
  o.batch_rows = 10;
  cli_import_result res;
  char err[512];
  assert_int_equal(import1(f, p1, "X", &o, &res, err, sizeof err), ROWAN_OK);
  assert_int_equal(res.rows_loaded, 40);
  assert_int_equal(res.bulk_path, AUTO_BULK); /* the table was empty */
  assert_true(scan_blocks(f->db, "X") > 0); /* flushed: the rows are in store files */
  const char *clean = "DATA ROWS|40\nINDEX ROWS|40\nMISSING|0\nEXTRA|0\nMISMATCHED|0\n";
  expect_rows(f->db, "CHECK INDEX XV ON X", clean);
  /* the same keys with new V values, a bad record in the third batch: UPSERTs move the
     index rows; the two batches before the stop stay, with the rows read before the bad
     one in its own batch */
  o.no_flush = 1;
  o.max_errors = 1;
  assert_int_equal(import1(f, p2, "X", &o, &res, err, sizeof err), ROWAN_CONSTRAINT);
  assert_int_equal(res.bulk_path, 0); /* the table has rows: row by row */
  assert_int_equal(res.rows_loaded, 24);
  assert_int_equal(res.stopped, 1);
  assert_non_null(strstr(res.first_reject, "x2.csv:25: "));
  assert_non_null(strstr(err, "24 rows committed"));
  expect_rows(f->db, "SELECT COUNT(*), MIN(K), MAX(K) FROM X WHERE V >= 100", "24|1|24\n");
  expect_rows(f->db, "SELECT V, S FROM X WHERE K = 30", "30.5|s30\n");
  expect_rows(f->db, "CHECK INDEX XV ON X", clean);
  /* --no-flush (and --no-bulk: an empty table would take the bulk path, which writes store
     files): a new table's rows are still in the memstore */
  exec_ok(f->db, "CREATE TABLE Y (K INTEGER NOT NULL PRIMARY KEY, V DOUBLE, S VARCHAR)");
  o.max_errors = 0;
  o.no_bulk = 1;
  assert_int_equal(import1(f, p3, "Y", &o, &res, err, sizeof err), ROWAN_OK);
  assert_int_equal(res.rows_loaded, 10);
  assert_int_equal(scan_blocks(f->db, "Y"), 0);
  assert_int_equal(count(f->db, "Y"), 10);
}

/* Numbers the import binds as numbers (fast-parsed) or as text must give what a text bind
** of the same field gives through SQL: the same stored values, the same rejects with the
** same reasons. Table N is loaded by the import, table M by a prepared UPSERT with
** rowan_bind_text, from the same fields. */
static void typed_binds_match_text(void **state) {
  fixture *f = *state;
  static const char *const texts[] = {
      "0", "-0", "+7", "007", "1.5", "-2.25e3", "1e22", "1e23", "0.1", ".5", "5.",
      "123456789012345678", "1234567890123456789", "9223372036854775807", "32768", "-129",
      "2147483648", "1.7976931348623157e308", "4.9e-324", "1e400", " 5", "5 ", "0x10",
      "1,5", "nan", "-", "", "3.0"};
  int n = (int)(sizeof texts / sizeof texts[0]);
  const char *cols = "K INTEGER NOT NULL PRIMARY KEY, D DOUBLE, I INTEGER, B BIGINT, S SMALLINT";
  char sql[256];
  snprintf(sql, sizeof sql, "CREATE TABLE N (%s)", cols);
  exec_ok(f->db, sql);
  snprintf(sql, sizeof sql, "CREATE TABLE M (%s)", cols);
  exec_ok(f->db, sql);
  char path[128];
  snprintf(path, sizeof path, "%s/n.csv", f->dir);
  sbuf b = {NULL, 0};
  sb_add(&b, "", 0);
  for (int i = 0; i < 4 * n; i++) { /* row i: text i / 4 in column 2 + i % 4, the others NULL */
    char line[256];
    const char *t = texts[i / 4];
    int c = i % 4;
    snprintf(line, sizeof line, "%d,%s%s%s,%s%s%s,%s%s%s,%s%s%s\n", i,
             c == 0 ? "\"" : "", c == 0 ? t : "", c == 0 ? "\"" : "",
             c == 1 ? "\"" : "", c == 1 ? t : "", c == 1 ? "\"" : "",
             c == 2 ? "\"" : "", c == 2 ? t : "", c == 2 ? "\"" : "",
             c == 3 ? "\"" : "", c == 3 ? t : "", c == 3 ? "\"" : "");
    sb_add(&b, line, strlen(line));
  }
  write_file(path, b.p, b.n);
  free(b.p);
  cli_import_options o;
  cli_import_options_init(&o);
  char rej[160];
  snprintf(rej, sizeof rej, "%s/n.rej", f->dir);
  o.reject_path = rej;
  cli_import_result res;
  char err[512];
  import1(f, path, "N", &o, &res, err, sizeof err);
  rejects r;
  read_rejects(rej, &r);
  rowan_stmt *st = NULL;
  assert_int_equal(rowan_prepare(f->db, "UPSERT INTO M VALUES (?, ?, ?, ?, ?)", -1, &st, NULL),
                   ROWAN_OK);
  int64_t loaded = 0, k = 1; /* k: next reject row (row 0 is the header) */
  exec_ok(f->db, "BEGIN");
  for (int i = 0; i < 4 * n; i++) {
    rowan_bind_int64(st, 1, i);
    for (int c = 2; c <= 5; c++) {
      if (c == 2 + i % 4) rowan_bind_text(st, c, texts[i / 4], -1);
      else rowan_bind_null(st, c);
    }
    int rc = rowan_step(st);
    if (rc == ROWAN_DONE) {
      loaded++;
    } else {
      /* the import rejected this record too, naming the column the way the engine does */
      assert_true(k < r.n);
      assert_int_equal(strtol(r.cell[k][1], NULL, 10), i + 1);
      const char *m = rowan_errmsg(f->db);
      const char *tail = strstr(m, ": "); /* "parameter 3: ..." or "column I: ..." */
      assert_non_null(tail);
      assert_non_null(strstr(r.cell[k][2], tail));
      k++;
    }
    rowan_reset(st);
  }
  exec_ok(f->db, "COMMIT");
  rowan_finalize(st);
  assert_int_equal(k, r.n);
  free_rejects(&r);
  assert_int_equal(res.rows_loaded, loaded);
  assert_true(loaded > 40 && res.rows_rejected > 20); /* both kinds are exercised */
  char *a = query(f->db, "SELECT K, D, I, B, S FROM N ORDER BY K");
  char *m = query(f->db, "SELECT K, D, I, B, S FROM M ORDER BY K");
  assert_string_equal(a, m);
  free(a);
  free(m);
  expect_rows(f->db, "SELECT D FROM N WHERE K = 16", "1.5\n"); /* text "1.5", column D */
}

/* ---- random round trip ------------------------------------------------------------- */

/* Random records of awkward text (delimiters, quotes, CR, LF, spaces, UTF-8), written with
** RFC 4180 quoting, CRLF or LF line ends and a custom delimiter half the time, must come
** back byte for byte. */
static void random_roundtrip(void **state) {
  fixture *f = *state;
  uint64_t seed = tu_seed("random_roundtrip");
  uint64_t rs = seed;
  exec_ok(f->db, "CREATE TABLE R (K INTEGER NOT NULL PRIMARY KEY, A VARCHAR, B VARCHAR)");
  const char *alphabet[] = {"a", "Z", " ", ",", ";", "\"", "\r\n", "\n", "\xc3\xa9", "x y",
                            "0", "\t"};
  int nrows = (int)tu_scaled(400, 50);
  char **want_a = calloc((size_t)nrows, sizeof *want_a);
  char **want_b = calloc((size_t)nrows, sizeof *want_b);
  assert_non_null(want_a);
  assert_non_null(want_b);
  char delim = tu_below(&rs, 2) ? ',' : ';';
  sbuf file = {NULL, 0};
  sb_add(&file, "", 0);
  for (int i = 0; i < nrows; i++) {
    char *vals[2];
    for (int c = 0; c < 2; c++) {
      sbuf v = {NULL, 0};
      sb_add(&v, "", 0);
      int len = 1 + (int)tu_below(&rs, 8);
      for (int k = 0; k < len; k++) {
        const char *piece = alphabet[tu_below(&rs, sizeof alphabet / sizeof *alphabet)];
        sb_add(&v, piece, strlen(piece));
      }
      vals[c] = v.p;
    }
    want_a[i] = vals[0];
    want_b[i] = vals[1];
    char key[32];
    snprintf(key, sizeof key, "%d", i);
    sb_add(&file, key, strlen(key));
    for (int c = 0; c < 2; c++) {
      sb_add(&file, &delim, 1);
      int plain = strpbrk(vals[c], "\"\r\n") == NULL && strchr(vals[c], delim) == NULL;
      if (plain && tu_below(&rs, 2)) {
        sb_add(&file, vals[c], strlen(vals[c])); /* no quotes needed: write none */
        continue;
      }
      sb_add(&file, "\"", 1);
      for (const char *p = vals[c]; *p; p++) {
        sb_add(&file, p, 1);
        if (*p == '"') sb_add(&file, "\"", 1);
      }
      sb_add(&file, "\"", 1);
    }
    if (tu_below(&rs, 2)) sb_add(&file, "\r\n", 2);
    else sb_add(&file, "\n", 1);
  }
  char path[128];
  snprintf(path, sizeof path, "%s/random.csv", f->dir);
  write_file(path, file.p, file.n);
  free(file.p);
  cli_import_options o;
  cli_import_options_init(&o);
  o.delimiter = delim;
  o.batch_rows = 1 + (int)tu_below(&rs, 50);
  cli_import_result res;
  char err[512];
  int rc = import1(f, path, "R", &o, &res, err, sizeof err);
  if (rc != ROWAN_OK || res.rows_loaded != nrows)
    fprintf(stderr, "seed %llu: rc %d, %lld loaded, first reject %s\n",
            (unsigned long long)seed, rc, (long long)res.rows_loaded, res.first_reject);
  assert_int_equal(rc, ROWAN_OK);
  assert_int_equal(res.rows_loaded, nrows);
  rowan_stmt *st = NULL;
  assert_int_equal(rowan_prepare(f->db, "SELECT K, A, B FROM R ORDER BY K", -1, &st, NULL),
                   ROWAN_OK);
  int i = 0;
  while (rowan_step(st) == ROWAN_ROW) {
    assert_int_equal(rowan_column_int64(st, 0), i);
    const char *a = rowan_column_text(st, 1), *b = rowan_column_text(st, 2);
    if (strcmp(a, want_a[i]) != 0 || strcmp(b, want_b[i]) != 0)
      fprintf(stderr, "seed %llu: row %d differs\n", (unsigned long long)seed, i);
    assert_string_equal(a, want_a[i]);
    assert_string_equal(b, want_b[i]);
    i++;
  }
  assert_int_equal(i, nrows);
  rowan_finalize(st);
  for (i = 0; i < nrows; i++) free(want_a[i]), free(want_b[i]);
  free(want_a);
  free(want_b);
}

/* Random bytes heavy in quotes, delimiters and line ends: whatever the parse, every record
** read is loaded or rejected, every reject is in the reject file, and the import ends OK. */
static void random_garbage(void **state) {
  fixture *f = *state;
  uint64_t seed = tu_seed("random_garbage");
  uint64_t rs = seed;
  exec_ok(f->db, "CREATE TABLE G (K VARCHAR NOT NULL PRIMARY KEY, V VARCHAR)");
  const char *alphabet[] = {"a", "b", ",", "\"", "\"\"", "\n", "\r\n", "\r", " ", "1"};
  char path[128], rejpath[128];
  snprintf(path, sizeof path, "%s/garbage.csv", f->dir);
  snprintf(rejpath, sizeof rejpath, "%s/garbage-rejects.csv", f->dir);
  int rounds = (int)tu_scaled(40, 10);
  for (int r = 0; r < rounds; r++) {
    sbuf b = {NULL, 0};
    sb_add(&b, "", 0);
    int n = 1 + (int)tu_below(&rs, 300);
    for (int k = 0; k < n; k++) {
      const char *piece = alphabet[tu_below(&rs, sizeof alphabet / sizeof *alphabet)];
      sb_add(&b, piece, strlen(piece));
    }
    write_file(path, b.p, b.n);
    free(b.p);
    cli_import_options o;
    cli_import_options_init(&o);
    o.reject_path = rejpath;
    o.batch_rows = 1 + (int)tu_below(&rs, 4);
    cli_import_result res;
    char err[512];
    int rc = import1(f, path, "G", &o, &res, err, sizeof err);
    if (rc != ROWAN_OK || res.rows_loaded + res.rows_rejected != res.rows_read)
      fprintf(stderr, "seed %llu round %d: rc %d (%s), read %lld loaded %lld rejected %lld\n",
              (unsigned long long)seed, r, rc, err, (long long)res.rows_read,
              (long long)res.rows_loaded, (long long)res.rows_rejected);
    assert_int_equal(rc, ROWAN_OK);
    assert_int_equal(res.rows_loaded + res.rows_rejected, res.rows_read);
    rejects rj;
    read_rejects(rejpath, &rj);
    if (res.rows_rejected < 63) assert_int_equal(rj.n - 1, res.rows_rejected);
    free_rejects(&rj);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(good_csv, setup, teardown),
      cmocka_unit_test_setup_teardown(good_tsv, setup, teardown),
      cmocka_unit_test_setup_teardown(compressed, setup, teardown),
      cmocka_unit_test_setup_teardown(reject_field_count, setup, teardown),
      cmocka_unit_test_setup_teardown(reject_number, setup, teardown),
      cmocka_unit_test_setup_teardown(reject_date, setup, teardown),
      cmocka_unit_test_setup_teardown(reject_quote, setup, teardown),
      cmocka_unit_test_setup_teardown(reject_not_null, setup, teardown),
      cmocka_unit_test_setup_teardown(max_errors, setup, teardown),
      cmocka_unit_test_setup_teardown(columns_option, setup, teardown),
      cmocka_unit_test_setup_teardown(header_mapping, setup, teardown),
      cmocka_unit_test_setup_teardown(byte_order_mark, setup, teardown),
      cmocka_unit_test_setup_teardown(null_option, setup, teardown),
      cmocka_unit_test_setup_teardown(small_batches, setup, teardown),
      cmocka_unit_test_setup_teardown(flush_index_batches, setup, teardown),
      cmocka_unit_test_setup_teardown(typed_binds_match_text, setup, teardown),
      cmocka_unit_test_setup_teardown(random_roundtrip, setup, teardown),
      cmocka_unit_test_setup_teardown(random_garbage, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
