/*
** tests/cli/test_import_bulk.c: `.import --bulk` (cli_import with opts.bulk) against the
** plain UPSERT import on the same files, in an in-memory database.
**
** - Seeded random CSV files (plain, gzip with two members, lz4 with two frames) for a table
**   with a (VARCHAR, TIMESTAMP DESC) key and two families, rows in ascending, descending
**   and random key order, keys repeated across and within files, NULLs ('NA' and empty),
**   and bad records of every kind (bad number, out of range, too long, NULL key, wrong
**   field count): the bulk import and the UPSERT import give the same table, the same
**   counts and byte-identical reject files.
** - --max-errors under --bulk: the good rows before the stop are loaded, none after.
** - Without --max-errors, a file whose first 1,000 records are nearly all rejected stops
**   there with the first three reasons (both paths); --max-errors or a file only half bad
**   is read to the end.
** - --header over several files is still one load (a damaged last file loads nothing).
** - A stream of many reader batches (cli/import_pipe.c), whole and stopped midway.
** - An index: a bulk load into the empty table writes the index rows too (CHECK INDEX
**   finds nothing missing, extra or mismatched; an index scan counts what a table scan
**   counts); a key repeated in such a load is a reject; a bulk load into the table once it
**   has rows is refused with the index's name.
** - The default path (auto_*): an import into an empty table takes the bulk path and gives
**   what --no-bulk gives (rows, index rows, counts, reject files), going on row by row after
**   a key repeated under an index or a file mapping other columns; a table that holds
**   anything (even only a deleted row) is loaded row by row, UPSERT over its rows.
** Not here: kv/bulk/bulk.c's own model test (tests/kv/test_bulk.c), the public API
** (tests/api/test_bulk.c), the real archive (test_archive.c).
*/
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
#include <lz4frame.h>
#include <zlib.h>

#include "cli/import.h"
#include "kv/env/env_mem.h"
#include "rowan.h"
#include "testutil.h"
#include "import_test_util.h"

#define COLS "S,T,X,Y,W,F,I"

static int setup(void **state) { return imp_setup(state, "/tmp/rowan-bulkimp-XXXXXX"); }
static int teardown(void **state) { return imp_teardown(state); }

static void sb_printf(sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void sb_printf(sbuf *b, const char *fmt, ...) {
  char tmp[512];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
  va_end(ap);
  assert_true(n >= 0 && (size_t)n < sizeof tmp);
  sb_add(b, tmp, (size_t)n);
}

static int collect(void *ctx, int ncol, char **values, char **names) {
  (void)names;
  sbuf *b = ctx;
  for (int i = 0; i < ncol; i++) {
    const char *v = values[i] ? values[i] : "<null>";
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

static char *read_all(const char *path, size_t *n) {
  FILE *fp = fopen(path, "rb");
  assert_non_null(fp);
  sbuf b = {NULL, 0};
  sb_add(&b, "", 0);
  char buf[8192];
  size_t k;
  while ((k = fread(buf, 1, sizeof buf, fp)) > 0) sb_add(&b, buf, k);
  fclose(fp);
  if (n) *n = b.n;
  return b.p;
}

static void write_plain(const char *path, const char *p, size_t n) {
  FILE *fp = fopen(path, "wb");
  assert_non_null(fp);
  assert_int_equal(fwrite(p, 1, n, fp), n);
  assert_int_equal(fclose(fp), 0);
}



static void create_table(rowan_db *db, const char *name) {
  char sql[512];
  snprintf(sql, sizeof sql,
           "CREATE TABLE %s (S VARCHAR NOT NULL, T TIMESTAMP NOT NULL, R.X DOUBLE, "
           "R.Y BIGINT, R.W VARCHAR(3), M.F FLOAT, I SMALLINT "
           "CONSTRAINT PK PRIMARY KEY (S, T DESC))", name);
  exec_ok(db, sql);
}

/* One record of the random files. bad: the kind of fault to put in (0 = none). */
static void gen_record(sbuf *b, uint64_t *rng, int station, int hour, int bad) {
  static const char *const wd[] = {"N", "NE", "NNW", "SW", "E", ""};
  if (bad == 5) { /* NULL key */
    sb_printf(b, "NA,2020-01-01 00:00:00,1,2,N,1,1\n");
    return;
  }
  if (bad == 6) { /* wrong field count */
    sb_printf(b, "st%d,2020-01-01 00:00:00,1,2\n", station);
    return;
  }
  sb_printf(b, "st%d,2020-%02d-%02d %02d:00:00,", station, 1 + hour / (24 * 28),
            1 + hour / 24 % 28, hour % 24);
  /* X DOUBLE */
  if (bad == 1) sb_printf(b, "1.2.3,");
  else if (tu_below(rng, 10) == 0) sb_printf(b, "NA,");
  else sb_printf(b, "%d.%d,", (int)tu_below(rng, 400) - 100, (int)tu_below(rng, 10));
  /* Y BIGINT */
  if (bad == 2) sb_printf(b, "99999999999999999999,");
  else if (tu_below(rng, 10) == 0) sb_printf(b, ",");
  else sb_printf(b, "%lld,", (long long)tu_rand(rng) % 1000000000000ll);
  /* W VARCHAR(3) */
  if (bad == 3) sb_printf(b, "NNWW,");
  else sb_printf(b, "%s,", wd[tu_below(rng, 6)]);
  /* F FLOAT */
  if (tu_below(rng, 8) == 0) sb_printf(b, "NA,");
  else sb_printf(b, "%de-%d,", (int)tu_below(rng, 100000), (int)tu_below(rng, 4));
  /* I SMALLINT */
  if (bad == 4) sb_printf(b, "40000\n");
  else sb_printf(b, "%d\n", (int)tu_below(rng, 60000) - 30000);
}

/* Write n_files random files into f->dir; names into paths[] (caller frees). unique: no
** key twice and no bad record but one repeated key at the end of the last file. */
static void gen_files(fixture *f, uint64_t *rng, int n_files, int rows, bool unique,
                      char **paths) {
  for (int i = 0; i < n_files; i++) {
    sbuf b = {NULL, 0};
    sb_add(&b, "", 0);
    int order = i % 3; /* 0 ascending keys, 1 descending keys (time ascending), 2 random */
    int station = i; /* unique: one station per file */
    for (int r = 0; r < rows; r++) {
      int hour = order == 0 ? rows - 1 - r : order == 1 ? r : (int)tu_below(rng, rows);
      if (unique && order == 2) hour = (int)(((uint64_t)r * 7919u) % (uint64_t)rows);
      int bad = !unique && tu_below(rng, 40) == 0 ? 1 + (int)tu_below(rng, 6) : 0;
      gen_record(&b, rng, unique ? station : (int)tu_below(rng, 3), hour, bad);
    }
    if (unique && i == n_files - 1) gen_record(&b, rng, 0, 0, 0); /* repeats st0's hour 0 */
    char name[160];
    snprintf(name, sizeof name, "%s/in%d.csv%s", f->dir, i,
             i % 4 == 1 ? ".gz" : i % 4 == 2 ? ".lz4" : "");
    if (i % 4 == 1) write_gzip(name, b.p, b.n, 2);
    else if (i % 4 == 2) write_lz4(name, b.p, b.n, 2);
    else write_plain(name, b.p, b.n);
    paths[i] = strdup(name);
    assert_non_null(paths[i]);
    free(b.p);
  }
}

static int run_import(fixture *f, char **paths, int n, const char *table, bool bulk,
                      const char *reject, int64_t max_errors, cli_import_result *res,
                      char *err, size_t cap) {
  cli_import_options o;
  cli_import_options_init(&o);
  o.columns = COLS;
  o.null_text = "NA";
  o.bulk = bulk;
  o.no_bulk = !bulk; /* the row path to compare with, not the automatic bulk path */
  o.reject_path = reject;
  o.max_errors = max_errors;
  return cli_import(f->db, (const char *const *)paths, n, table, &o, res, err, cap);
}

/* ---- tests ------------------------------------------------------------------------- */

static void bulk_equals_upsert(void **state) {
  fixture *f = *state;
  uint64_t seed = tu_seed("import_bulk_equal"), rng = seed;
  int rows = (int)tu_scaled(2000, 200);
  char *paths[6];
  gen_files(f, &rng, 6, rows, false, paths);
  create_table(f->db, "A");
  create_table(f->db, "B");
  char rja[200], rjb[200], err[512];
  snprintf(rja, sizeof rja, "%s/rej_a.csv", f->dir);
  snprintf(rjb, sizeof rjb, "%s/rej_b.csv", f->dir);
  cli_import_result ra, rb;
  int rc = run_import(f, paths, 6, "A", true, rja, 0, &ra, err, sizeof err);
  if (rc != ROWAN_OK) fprintf(stderr, "seed %llu: %s\n", (unsigned long long)seed, err);
  assert_int_equal(rc, ROWAN_OK);
  rc = run_import(f, paths, 6, "B", false, rjb, 0, &rb, err, sizeof err);
  assert_int_equal(rc, ROWAN_OK);
  if (ra.rows_loaded != rb.rows_loaded || ra.rows_rejected != rb.rows_rejected)
    fprintf(stderr, "seed %llu: loaded %lld/%lld rejected %lld/%lld\n",
            (unsigned long long)seed, (long long)ra.rows_loaded, (long long)rb.rows_loaded,
            (long long)ra.rows_rejected, (long long)rb.rows_rejected);
  assert_int_equal(ra.rows_loaded, rb.rows_loaded);
  assert_int_equal(ra.rows_rejected, rb.rows_rejected);
  assert_int_equal(ra.rows_loaded + ra.rows_rejected, 6 * rows);
  assert_true(ra.rows_rejected > 0);
  char *ta = query(f->db, "SELECT S, T, X, Y, W, F, I FROM A");
  char *tb = query(f->db, "SELECT S, T, X, Y, W, F, I FROM B");
  if (strcmp(ta, tb) != 0) fprintf(stderr, "seed %llu: tables differ\n", (unsigned long long)seed);
  assert_string_equal(ta, tb);
  assert_true(strlen(ta) > 0);
  free(ta);
  free(tb);
  /* COUNT(*) reads only the marker family: the same rows exist. */
  ta = query(f->db, "SELECT COUNT(*) FROM A");
  tb = query(f->db, "SELECT COUNT(*) FROM B");
  assert_string_equal(ta, tb);
  free(ta);
  free(tb);
  size_t na, nb;
  char *ja = read_all(rja, &na), *jb = read_all(rjb, &nb);
  if (na != nb || memcmp(ja, jb, na) != 0)
    fprintf(stderr, "seed %llu: reject files differ:\n%s\n----\n%s\n",
            (unsigned long long)seed, ja, jb);
  assert_int_equal(na, nb);
  assert_memory_equal(ja, jb, na);
  free(ja);
  free(jb);
  for (int i = 0; i < 6; i++) free(paths[i]);
}

static void bulk_max_errors(void **state) {
  fixture *f = *state;
  create_table(f->db, "A");
  char path[160], err[512];
  snprintf(path, sizeof path, "%s/bad.csv", f->dir);
  const char *text = "a,2020-01-01 00:00:00,1,1,N,1,1\n"
                     "a,2020-01-01 01:00:00,x,1,N,1,1\n"      /* line 2: bad X */
                     "a,2020-01-01 02:00:00,2,1,N,1,1\n"
                     "a,2020-01-01 03:00:00,3,1,NNWW,1,1\n"   /* line 4: W too long */
                     "a,2020-01-01 04:00:00,4,1,N,1,1\n";
  write_plain(path, text, strlen(text));
  char *paths[1] = {path};
  cli_import_result res;
  assert_int_equal(run_import(f, paths, 1, "A", true, NULL, 2, &res, err, sizeof err),
                   ROWAN_CONSTRAINT);
  assert_int_equal(res.stopped, 1);
  assert_int_equal(res.rows_rejected, 2);
  assert_int_equal(res.rows_loaded, 2);
  assert_non_null(strstr(err, "2 rows committed"));
  assert_non_null(strstr(res.first_reject, "column X"));
  char *got = query(f->db, "SELECT X FROM A ORDER BY X");
  assert_string_equal(got, "1.0\n2.0\n");
  free(got);
}

/* Nearly every record rejected: the import stops after the first 1,000 and names the first
** three reasons, on the bulk path and row by row; with --max-errors it reads on; a file
** with every other record bad is read to the end. */
static void mostly_rejected_stops(void **state) {
  fixture *f = *state;
  char bad[160], half[160], err[1024];
  snprintf(bad, sizeof bad, "%s/all_bad.csv", f->dir);
  snprintf(half, sizeof half, "%s/half_bad.csv", f->dir);
  sbuf b = {NULL, 0}, h = {NULL, 0};
  for (int i = 0; i < 1500; i++) {
    sb_printf(&b, "a,2020-01-01 00:00:%02d.%03d,x%d,1,N,1,1\n", i / 1000, i % 1000, i);
    sb_printf(&h, "a,2020-01-01 00:00:%02d.%03d,%s%d,1,N,1,1\n", i / 1000, i % 1000,
              i % 2 ? "x" : "", i);
  }
  write_plain(bad, b.p, b.n);
  write_plain(half, h.p, h.n);
  free(b.p);
  free(h.p);
  char *pb[1] = {bad}, *ph[1] = {half};
  for (int bulk = 0; bulk < 2; bulk++) {
    const char *t = bulk ? "B" : "A";
    create_table(f->db, t);
    cli_import_result res;
    assert_int_equal(run_import(f, pb, 1, t, bulk, NULL, 0, &res, err, sizeof err),
                     ROWAN_CONSTRAINT);
    assert_int_equal(res.stopped, 1);
    assert_int_equal(res.rows_rejected, 1000);
    assert_non_null(strstr(err, "stopped: 1000 of the first 1000 records were rejected"));
    assert_non_null(strstr(err, "all_bad.csv:1: column X"));
    assert_non_null(strstr(err, "all_bad.csv:3: column X"));
    assert_null(strstr(err, "all_bad.csv:4:"));
    /* --max-errors: the user's limit, read on */
    assert_int_equal(run_import(f, pb, 1, t, bulk, NULL, 5000, &res, err, sizeof err),
                     ROWAN_OK);
    assert_int_equal(res.stopped, 0);
    assert_int_equal(res.rows_rejected, 1500);
    /* half bad: read to the end, the good half loaded */
    assert_int_equal(run_import(f, ph, 1, t, bulk, NULL, 0, &res, err, sizeof err), ROWAN_OK);
    assert_int_equal(res.stopped, 0);
    assert_int_equal(res.rows_rejected, 750);
    assert_int_equal(res.rows_loaded, 750);
  }
}

/* With --header (no --columns) the files are still one load: a damaged last file leaves
** nothing of the earlier ones; a file whose header maps other columns is refused. */
static void bulk_header_one_load(void **state) {
  fixture *f = *state;
  create_table(f->db, "A");
  const char *t1 = "S,T,X\na,2020-01-01 00:00:00,1\na,2020-01-01 01:00:00,2\n";
  const char *t2 = "s,t,x\nb,2020-01-01 00:00:00,3\n";
  const char *t3 = "S,X,T\nc,4,2020-01-01 00:00:00\n";
  char p1[160], p2[160], p3[160], cut[160], err[512];
  snprintf(p1, sizeof p1, "%s/h1.csv", f->dir);
  snprintf(p2, sizeof p2, "%s/h2.csv.gz", f->dir);
  snprintf(p3, sizeof p3, "%s/h3.csv", f->dir);
  snprintf(cut, sizeof cut, "%s/cut.csv.gz", f->dir);
  write_plain(p1, t1, strlen(t1));
  write_gzip(p2, t2, strlen(t2), 1);
  write_plain(p3, t3, strlen(t3));
  size_t zn;
  char *z = read_all(p2, &zn);
  write_plain(cut, z, zn - 6);
  free(z);
  cli_import_options o;
  cli_import_options_init(&o);
  o.header = 1;
  o.bulk = 1;
  cli_import_result res;
  const char *bad[2] = {p1, cut};
  assert_int_equal(cli_import(f->db, bad, 2, "A", &o, &res, err, sizeof err), ROWAN_IOERR);
  assert_int_equal(res.rows_loaded, 0);
  char *got = query(f->db, "SELECT COUNT(*) FROM A");
  assert_string_equal(got, "0\n");
  free(got);
  const char *mixed[2] = {p1, p3};
  assert_int_not_equal(cli_import(f->db, mixed, 2, "A", &o, &res, err, sizeof err), ROWAN_OK);
  assert_non_null(strstr(err, "same columns"));
  got = query(f->db, "SELECT COUNT(*) FROM A");
  assert_string_equal(got, "0\n");
  free(got);
  const char *good[2] = {p1, p2};
  assert_int_equal(cli_import(f->db, good, 2, "A", &o, &res, err, sizeof err), ROWAN_OK);
  assert_int_equal(res.rows_loaded, 3);
  got = query(f->db, "SELECT S, X FROM A");
  assert_string_equal(got, "a|2.0\na|1.0\nb|3.0\n"); /* T DESC */
  free(got);
}

/* A stream of many reader batches: every record arrives once and in order; a stop at
** --max-errors in the middle (the reader waiting on a full queue) loads the rows before it. */
static void bulk_many_batches(void **state) {
  fixture *f = *state;
  int rows = (int)tu_scaled(40000, 12000);
  sbuf b = {NULL, 0};
  sb_add(&b, "", 0);
  long long sum = 0, good = 0;
  for (int i = 0; i < rows; i++) {
    bool bad = i % 997 == 996;
    sb_printf(&b, "p,%04d-%02d-%02d %02d:00:00,%s,%d,N,1,1\n", 2000 + i / 8064,
              1 + i / 672 % 12, 1 + i / 24 % 28, i % 24, bad ? "x" : "1.5", i);
    if (!bad) sum += i, good++;
  }
  char path[160], err[512];
  snprintf(path, sizeof path, "%s/many.csv.gz", f->dir);
  write_gzip(path, b.p, b.n, 3);
  free(b.p);
  char *paths[1] = {path};
  create_table(f->db, "A");
  cli_import_result res;
  assert_int_equal(run_import(f, paths, 1, "A", true, NULL, 3, &res, err, sizeof err),
                   ROWAN_CONSTRAINT);
  assert_int_equal(res.rows_loaded, 2988); /* rejects at records 996, 1993, 2990 */
  char *got = query(f->db, "SELECT COUNT(*), MIN(Y), MAX(Y) FROM A");
  assert_string_equal(got, "2988|0|2989\n");
  free(got);
  create_table(f->db, "B");
  assert_int_equal(run_import(f, paths, 1, "B", true, NULL, 0, &res, err, sizeof err),
                   ROWAN_OK);
  assert_int_equal(res.rows_loaded, good);
  assert_int_equal(res.rows_rejected, rows - good);
  char want[128];
  snprintf(want, sizeof want, "%lld|%lld\n", good, sum);
  got = query(f->db, "SELECT COUNT(*), SUM(Y) FROM B");
  assert_string_equal(got, want);
  free(got);
}

static void bulk_with_index(void **state) {
  fixture *f = *state;
  uint64_t seed = tu_seed("import_bulk_index"), rng = seed;
  int rows = (int)tu_scaled(1500, 150);
  char *paths[4];
  gen_files(f, &rng, 4, rows, true, paths);
  create_table(f->db, "A");
  exec_ok(f->db, "CREATE INDEX IX ON A (X) INCLUDE (Y)");
  exec_ok(f->db, "CREATE INDEX IW ON A (W DESC, F)");
  char err[512];
  cli_import_result res;
  int rc = run_import(f, paths, 4, "A", true, NULL, 0, &res, err, sizeof err);
  if (rc != ROWAN_OK) fprintf(stderr, "seed %llu: %s\n", (unsigned long long)seed, err);
  assert_int_equal(rc, ROWAN_OK);
  assert_int_equal(res.rows_loaded, 4 * rows);
  assert_int_equal(res.rows_rejected, 1); /* the repeated key */
  assert_non_null(strstr(res.first_reject, "repeats"));
  char expect[256];
  snprintf(expect, sizeof expect,
           "DATA ROWS|%d\nINDEX ROWS|%d\nMISSING|0\nEXTRA|0\nMISMATCHED|0\n", 4 * rows,
           4 * rows);
  for (int k = 0; k < 2; k++) {
    char *got = query(f->db, k ? "CHECK INDEX IW ON A" : "CHECK INDEX IX ON A");
    if (strcmp(got, expect) != 0) fprintf(stderr, "seed %llu\n", (unsigned long long)seed);
    assert_string_equal(got, expect);
    free(got);
  }
  char *a = query(f->db, "SELECT /*+ INDEX(A IX) */ COUNT(*), SUM(Y) FROM A WHERE X > 50");
  char *b = query(f->db, "SELECT /*+ NO_INDEX */ COUNT(*), SUM(Y) FROM A WHERE X > 50");
  assert_string_equal(a, b);
  free(a);
  free(b);
  /* The table has rows now: a second bulk load is refused with an index's name. */
  rc = run_import(f, paths, 1, "A", true, NULL, 0, &res, err, sizeof err);
  assert_int_not_equal(rc, ROWAN_OK);
  assert_non_null(strstr(err, "IX"));
  for (int i = 0; i < 4; i++) free(paths[i]);
}

/* ---- the default path: bulk into an empty table, the same result as row by row ------- */

static int run_auto(fixture *f, char **paths, int n, const char *table, bool no_bulk,
                    const char *reject, cli_import_result *res, char *err, size_t cap) {
  cli_import_options o;
  cli_import_options_init(&o);
  o.columns = COLS;
  o.null_text = "NA";
  o.no_bulk = no_bulk;
  o.reject_path = reject;
  return cli_import(f->db, (const char *const *)paths, n, table, &o, res, err, cap);
}

/* Every row, and with indexes every index row as an index scan reads it, of A and of B. */
static void same_tables(rowan_db *db, bool index, uint64_t seed) {
  static const char *const q[] = {
      "SELECT S, T, X, Y, W, F, I FROM %s",
      "SELECT COUNT(*) FROM %s",
      "SELECT /*+ INDEX(%s IX) */ X, Y, S, T FROM %s WHERE X > -1000",
      "SELECT /*+ INDEX(%s IW) */ W, I, S, T FROM %s WHERE W >= ''",
      "CHECK INDEX IX ON %s",
      "CHECK INDEX IW ON %s"};
  for (int k = 0; k < (index ? 6 : 2); k++) {
    char sa[160], sb[160];
    snprintf(sa, sizeof sa, q[k], "A", "A");
    snprintf(sb, sizeof sb, q[k], "B", "B");
    char *ta = query(db, sa), *tb = query(db, sb);
    if (strcmp(ta, tb) != 0) fprintf(stderr, "seed %llu: %s differs\n",
                                     (unsigned long long)seed, sa);
    assert_string_equal(ta, tb);
    assert_true(strlen(ta) > 0);
    if (k >= 4) assert_non_null(strstr(ta, "MISSING|0\nEXTRA|0\nMISMATCHED|0\n"));
    free(ta);
    free(tb);
  }
}

/* The default import into empty A and --no-bulk into empty B, from the same random files
** (keys repeated within and across files, NULLs, bad records of every kind): the same rows,
** index rows, counts and byte-identical reject files. Without an index the whole import is
** one bulk load; with one, the first repeated key ends the bulk load (its rows committed)
** and the rest goes row by row, so the last row of a key still wins. */
static void auto_equals_rows_case(fixture *f, bool index, const char *name) {
  uint64_t seed = tu_seed(name), rng = seed;
  int rows = (int)tu_scaled(2000, 200);
  char *paths[5];
  gen_files(f, &rng, 5, rows, false, paths);
  create_table(f->db, "A");
  create_table(f->db, "B");
  if (index) {
    exec_ok(f->db, "CREATE INDEX IX ON A (X) INCLUDE (Y)");
    /* keyed on W (VARCHAR(3)) and I (SMALLINT): a value over the limit is named by its
       column both ways (row by row, the row is checked before its index keys) */
    exec_ok(f->db, "CREATE INDEX IW ON A (W DESC, I)");
    exec_ok(f->db, "CREATE INDEX IX ON B (X) INCLUDE (Y)");
    exec_ok(f->db, "CREATE INDEX IW ON B (W DESC, I)");
  }
  char rja[200], rjb[200], err[512];
  snprintf(rja, sizeof rja, "%s/rej_a.csv", f->dir);
  snprintf(rjb, sizeof rjb, "%s/rej_b.csv", f->dir);
  cli_import_result ra, rb;
  assert_int_equal(run_auto(f, paths, 5, "A", false, rja, &ra, err, sizeof err), ROWAN_OK);
  assert_int_equal(run_auto(f, paths, 5, "B", true, rjb, &rb, err, sizeof err), ROWAN_OK);
  assert_int_equal(ra.bulk_path, 2);
  assert_int_equal(rb.bulk_path, 0);
  assert_true(ra.bulk_rows > 0);
  if (index) {
    assert_non_null(strstr(ra.row_after, "a key repeats"));
    assert_true(ra.bulk_rows < ra.rows_loaded);
  } else {
    assert_string_equal(ra.row_after, "");
    assert_int_equal(ra.bulk_rows, ra.rows_loaded);
  }
  assert_int_equal(ra.rows_loaded, rb.rows_loaded);
  assert_int_equal(ra.rows_rejected, rb.rows_rejected);
  assert_true(ra.rows_rejected > 0);
  assert_string_equal(ra.first_reject, rb.first_reject);
  same_tables(f->db, index, seed);
  size_t na, nb;
  char *ja = read_all(rja, &na), *jb = read_all(rjb, &nb);
  if (na != nb || memcmp(ja, jb, na) != 0)
    fprintf(stderr, "seed %llu: reject files differ:\n%s\n----\n%s\n",
            (unsigned long long)seed, ja, jb);
  assert_int_equal(na, nb);
  assert_memory_equal(ja, jb, na);
  free(ja);
  free(jb);
  char sum[512];
  cli_import_summary(&ra, NULL, sum, sizeof sum);
  assert_non_null(strstr(sum, "(bulk path: the table was empty"));
  cli_import_summary(&rb, NULL, sum, sizeof sum);
  assert_null(strstr(sum, "bulk path"));
  for (int i = 0; i < 5; i++) free(paths[i]);
}

static void auto_equals_rows(void **state) {
  auto_equals_rows_case(*state, false, "import_auto_equal");
}

static void auto_equals_rows_index(void **state) {
  auto_equals_rows_case(*state, true, "import_auto_index");
}

/* Files whose headers map other columns: the default path loads the first in bulk, then
** goes row by row; the same rows as --no-bulk. */
static void auto_header_mappings(void **state) {
  fixture *f = *state;
  create_table(f->db, "A");
  create_table(f->db, "B");
  const char *t1 = "S,T,X\na,2020-01-01 00:00:00,1\na,2020-01-01 01:00:00,2\n";
  const char *t2 = "S,X,T,W\na,4,2020-01-01 00:00:00,NA\nb,5,2020-01-01 00:00:00,E\n";
  char p1[160], p2[160], err[512];
  snprintf(p1, sizeof p1, "%s/h1.csv", f->dir);
  snprintf(p2, sizeof p2, "%s/h2.csv", f->dir);
  write_plain(p1, t1, strlen(t1));
  write_plain(p2, t2, strlen(t2));
  cli_import_options o;
  cli_import_options_init(&o);
  o.header = 1;
  o.null_text = "NA";
  const char *files[2] = {p1, p2};
  cli_import_result ra, rb;
  assert_int_equal(cli_import(f->db, files, 2, "A", &o, &ra, err, sizeof err), ROWAN_OK);
  o.no_bulk = 1;
  assert_int_equal(cli_import(f->db, files, 2, "B", &o, &rb, err, sizeof err), ROWAN_OK);
  assert_int_equal(ra.bulk_path, 2);
  assert_int_equal(ra.bulk_rows, 2);
  assert_non_null(strstr(ra.row_after, "row by row after 2 rows: a file maps other columns"));
  assert_int_equal(ra.rows_loaded, 4);
  char *a = query(f->db, "SELECT S, T, X, W FROM A"), *b = query(f->db, "SELECT S, T, X, W FROM B");
  assert_string_equal(a, b);
  assert_string_equal(a, "a|2020-01-01 01:00:00|2.0|<null>\na|2020-01-01 00:00:00|4.0|<null>\n"
                         "b|2020-01-01 00:00:00|5.0|E\n");
  free(a);
  free(b);
}

/* A table that holds anything, even only deleted rows, is loaded row by row: UPSERT over
** the rows there (columns not in the file kept). --bulk and --no-bulk are parsed. */
static void auto_not_empty(void **state) {
  fixture *f = *state;
  create_table(f->db, "A");
  create_table(f->db, "B");
  exec_ok(f->db, "UPSERT INTO A (S, T, X, Y) VALUES ('a', TIMESTAMP '2020-01-01 00:00:00', 9, 7)");
  exec_ok(f->db, "UPSERT INTO B (S, T, X, Y) VALUES ('z', TIMESTAMP '2020-01-01 00:00:00', 9, 7)");
  exec_ok(f->db, "DELETE FROM B");
  const char *t = "a,2020-01-01 00:00:00,1\na,2020-01-01 00:00:00,3\nb,2020-01-01 00:00:00,2\n";
  char p[160], err[512];
  snprintf(p, sizeof p, "%s/n.csv", f->dir);
  write_plain(p, t, strlen(t));
  cli_import_options o;
  cli_import_options_init(&o);
  o.columns = "S,T,X";
  const char *files[1] = {p};
  cli_import_result res;
  assert_int_equal(cli_import(f->db, files, 1, "A", &o, &res, err, sizeof err), ROWAN_OK);
  assert_int_equal(res.bulk_path, 0);
  assert_int_equal(res.rows_loaded, 3);
  char *got = query(f->db, "SELECT S, X, Y FROM A");
  assert_string_equal(got, "a|3.0|7\nb|2.0|<null>\n"); /* the last row wins; Y kept */
  free(got);
  assert_int_equal(cli_import(f->db, files, 1, "B", &o, &res, err, sizeof err), ROWAN_OK);
  assert_int_equal(res.bulk_path, 0); /* only a deleted row, but not empty */
  got = query(f->db, "SELECT S, X, Y FROM B");
  assert_string_equal(got, "a|3.0|<null>\nb|2.0|<null>\n");
  free(got);
  char *argv[] = {"--no-bulk", "f.csv", "T"};
  int first, n;
  assert_int_equal(cli_import_parse_args(3, argv, &o, &first, &n, err, sizeof err), ROWAN_OK);
  assert_int_equal(o.no_bulk, 1);
  assert_int_equal(o.bulk, 0);
  char *argv2[] = {"--no-bulk", "--bulk", "f.csv", "T"};
  assert_int_equal(cli_import_parse_args(4, argv2, &o, &first, &n, err, sizeof err), ROWAN_OK);
  assert_int_equal(o.no_bulk, 0); /* the last of the two wins */
  assert_int_equal(o.bulk, 1);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(bulk_equals_upsert, setup, teardown),
      cmocka_unit_test_setup_teardown(bulk_max_errors, setup, teardown),
      cmocka_unit_test_setup_teardown(mostly_rejected_stops, setup, teardown),
      cmocka_unit_test_setup_teardown(bulk_header_one_load, setup, teardown),
      cmocka_unit_test_setup_teardown(bulk_many_batches, setup, teardown),
      cmocka_unit_test_setup_teardown(bulk_with_index, setup, teardown),
      cmocka_unit_test_setup_teardown(auto_equals_rows, setup, teardown),
      cmocka_unit_test_setup_teardown(auto_equals_rows_index, setup, teardown),
      cmocka_unit_test_setup_teardown(auto_header_mappings, setup, teardown),
      cmocka_unit_test_setup_teardown(auto_not_empty, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
