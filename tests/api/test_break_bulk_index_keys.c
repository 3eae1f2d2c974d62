/*
** tests/api/test_break_bulk_index_keys.c: index rows written by a bulk load (exec/bulk.c
** encodes the keys of simple indexes from the parsed values, not through the index codec)
** against the same rows written by prepared UPSERTs bound with the same texts. Random
** tables (a one- or two-column key, four nullable value columns of every simple type) get
** one or two random indexes (one to three columns, ASC or DESC, some with INCLUDE, on key
** and value columns); the texts include edge values (-0.0, extremes, DECIMAL scale, CHAR
** padding, fractional seconds, the empty string, bytes that need escaping) and texts a
** type refuses. Per row the bulk load and the UPSERT must accept or refuse alike; after
** the commit the tables must be equal, CHECK INDEX clean on both (it re-encodes every data
** row with the index codec), and lookups through each index equal on both.
** Not here: repeated keys and the load's pipeline (tests/api/test_bulk_index.c).
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "kv/env/env_mem.h"
#include "rowan.h"
#include "testutil.h"
#include "tu_api.h"

#define NCOL 6 /* K0, K1 (maybe unused), C0..C3 */
#define OUT_CAP (1u << 20)

typedef struct vtype {
  const char *name;         /* SQL type */
  const char *const *texts; /* field texts (some refused) */
  int n;                    /* entries */
} vtype;

static const char *const t_varchar[] = {"", "a", "a b", "ab", "it's", "\xc3\xa9t\xc3\xa9", "z",
                                        "a\x01", "A", "ab "};
static const char *const t_char[] = {"ab", "abc", "a", "abcd", "", "ab  ", "abcde"};
static const char *const t_int[] = {"-2147483648", "-7", "0", "-0", "3", "2147483647",
                                    "2147483648", "1.5", "x", " 4", "+5", "007"};
static const char *const t_bigint[] = {"-9223372036854775808", "-1", "0", "42",
                                       "9223372036854775807", "9223372036854775808", "1e3"};
static const char *const t_small[] = {"-32768", "0", "32767", "32768", "-1"};
static const char *const t_tiny[] = {"-128", "0", "127", "128", "1"};
static const char *const t_double[] = {"-0.0", "0", "0.0", "1e300", "-1e-300", "3.25", "7",
                                       "inf", "NaN", "1.0000000000000002", "abc", "-2.5"};
static const char *const t_float[] = {"-0.0", "0", "1.5", "3.4e38", "1e39", "-2.25", "0.1"};
static const char *const t_dec[] = {"1.5", "1.50", "1.505", "-0.00", "0", "9999.99", "10000",
                                    "-9999.99", "12", ".5", "1e2"};
static const char *const t_date[] = {"2024-02-29", "2023-02-29", "1970-01-01", "0001-01-01",
                                     "9999-12-31", "2016-03-01 00:00:00", "x"};
static const char *const t_time[] = {"00:00:00", "23:59:59", "12:30:00.5", "24:00:00", "7:08:09"};
static const char *const t_ts[] = {"1970-01-01 00:00:00", "2016-03-01 12:34:56.789",
                                   "2016-03-01 12:34:56.7", "2016-03-01", "1969-12-31 23:59:59.999",
                                   "9999-12-31 23:59:59.999", "2016-03-01T01:02:03", "bad"};
static const char *const t_bool[] = {"TRUE", "false", "1", "0", "t", "yes", "x"};

#define VT(name, arr) {name, arr, (int)(sizeof arr / sizeof arr[0])}
static const vtype vtypes[] = {
    VT("VARCHAR", t_varchar), VT("CHAR(4)", t_char),  VT("INTEGER", t_int),
    VT("BIGINT", t_bigint),   VT("SMALLINT", t_small), VT("TINYINT", t_tiny),
    VT("DOUBLE", t_double),   VT("FLOAT", t_float),   VT("DECIMAL(6,2)", t_dec),
    VT("DATE", t_date),       VT("TIME", t_time),     VT("TIMESTAMP", t_ts),
    VT("BOOLEAN", t_bool),
};
#define N_VT (int)(sizeof vtypes / sizeof vtypes[0])

static const char *const cname[NCOL] = {"K0", "K1", "C0", "C1", "C2", "C3"};

typedef struct schema {
  int nk;          /* key columns (1 or 2) */
  int type[NCOL];  /* vtypes index per column */
  char ddl[1024];  /* CREATE TABLE */
  char idx[2][256];/* CREATE INDEX statements */
  int nidx;        /* entries in idx */
  int icol[2][3];  /* columns of each index */
  int nicol[2];    /* their count */
} schema;

static void random_schema(uint64_t *rs, schema *s) {
  memset(s, 0, sizeof *s);
  s->nk = 1 + (int)tu_below(rs, 2);
  for (int c = 0; c < NCOL; c++) s->type[c] = (int)tu_below(rs, N_VT);
  char cols[600] = "";
  for (int c = 0; c < NCOL; c++) {
    if (c == 1 && s->nk == 1) continue;
    size_t n = strlen(cols);
    snprintf(cols + n, sizeof cols - n, "%s%s %s%s", n ? ", " : "",
             c >= 2 && c == 3 ? "F.C1" : cname[c], vtypes[s->type[c]].name,
             c < 2 ? " NOT NULL" : "");
  }
  snprintf(s->ddl, sizeof s->ddl, "CREATE TABLE T (%s, CONSTRAINT PK PRIMARY KEY (K0%s%s))",
           cols, tu_below(rs, 3) == 0 ? " DESC" : "", s->nk == 2 ? ", K1" : "");
  s->nidx = 1 + (int)tu_below(rs, 2);
  for (int i = 0; i < s->nidx; i++) {
    int m = 1 + (int)tu_below(rs, 3);
    char on[200] = "";
    for (int j = 0; j < m; j++) {
      int c;
      do c = 2 + (int)tu_below(rs, 4);
      while (j > 0 && (c == s->icol[i][0] || (j > 1 && c == s->icol[i][1])));
      if (tu_below(rs, 5) == 0) c = 0; /* a key column indexed */
      bool dup = false;
      for (int q = 0; q < j; q++) dup |= s->icol[i][q] == c;
      if (dup) continue;
      s->icol[i][s->nicol[i]++] = c;
      size_t n = strlen(on);
      snprintf(on + n, sizeof on - n, "%s%s%s", n ? ", " : "", cname[c],
               tu_below(rs, 3) == 0 ? " DESC" : "");
    }
    snprintf(s->idx[i], sizeof s->idx[i], "CREATE INDEX I%d ON T (%s)%s", i, on,
             tu_below(rs, 2) ? " INCLUDE (C3)" : "");
  }
}

/* One row of texts (NULL = SQL NULL). */
typedef struct trow {
  const char *f[NCOL]; /* field texts */
} trow;

/* A text of many distinct values of type t (for key columns), into buf. */
static const char *wide_text(uint64_t *rs, int t, char *buf, size_t cap) {
  int x = (int)tu_below(rs, 100000);
  const char *name = vtypes[t].name;
  if (!strcmp(name, "VARCHAR")) snprintf(buf, cap, "k%d", x);
  else if (!strcmp(name, "CHAR(4)")) snprintf(buf, cap, "%d", x % 10000);
  else if (!strcmp(name, "TINYINT")) snprintf(buf, cap, "%d", x % 256 - 128);
  else if (!strcmp(name, "SMALLINT")) snprintf(buf, cap, "%d", x % 65536 - 32768);
  else if (!strcmp(name, "INTEGER") || !strcmp(name, "BIGINT")) snprintf(buf, cap, "%d", x - 50000);
  else if (!strcmp(name, "DOUBLE") || !strcmp(name, "FLOAT")) snprintf(buf, cap, "%d.25", x - 50000);
  else if (!strcmp(name, "DECIMAL(6,2)")) snprintf(buf, cap, "%d.%02d", x % 19999 - 9999, x % 100);
  else if (!strcmp(name, "DATE")) snprintf(buf, cap, "%04d-%02d-%02d", 1900 + x % 200, 1 + x % 12, 1 + x % 28);
  else if (!strcmp(name, "TIME")) snprintf(buf, cap, "%02d:%02d:%02d", x % 24, x % 60, (x / 60) % 60);
  else if (!strcmp(name, "TIMESTAMP"))
    snprintf(buf, cap, "2020-01-%02d %02d:%02d:%02d.%03d", 1 + x % 28, x % 24, x % 60, (x / 7) % 60, x % 1000);
  else return vtypes[t].texts[tu_below(rs, (uint64_t)vtypes[t].n)];
  return buf;
}

static void random_row(uint64_t *rs, const schema *s, trow *r, char (*buf)[48]) {
  for (int c = 0; c < NCOL; c++) {
    const vtype *v = &vtypes[s->type[c]];
    if (c >= 2 && tu_below(rs, 6) == 0) r->f[c] = NULL;
    else if (tu_below(rs, 3) == 0) r->f[c] = v->texts[tu_below(rs, (uint64_t)v->n)];
    else r->f[c] = wide_text(rs, s->type[c], buf[c], 48); /* many distinct values */
  }
}

static void dump(rowan_db *db, const char *sql, char *out, size_t cap) {
  out[0] = 0;
  size_t n = 0;
  rowan_stmt *st;
  if (rowan_prepare(db, sql, -1, &st, NULL) != ROWAN_OK) {
    snprintf(out, cap, "prepare error %s", rowan_errmsg(db));
    return;
  }
  int rc;
  while ((rc = rowan_step(st)) == ROWAN_ROW && n + 200 < cap)
    for (int c = 0; c < rowan_column_count(st); c++) {
      const char *t = rowan_column_text(st, c);
      n += (size_t)snprintf(out + n, cap - n, "%s%s", t ? t : "NULL",
                            c + 1 < rowan_column_count(st) ? "|" : "\n");
    }
  snprintf(out + n, cap - n, "end %s", rowan_errstr(rc));
  rowan_finalize(st);
}

static int check_cb(void *ctx, int ncol, char **values, char **names) {
  (void)names;
  int *bad = ctx;
  if (ncol >= 2 && values[0] &&
      (!strcmp(values[0], "MISSING") || !strcmp(values[0], "EXTRA") ||
       !strcmp(values[0], "MISMATCHED")) &&
      values[1] && strcmp(values[1], "0") != 0)
    (*bad)++;
  return 0;
}

static void one_table(uint64_t *rs, uint64_t seed, int t) {
  schema s;
  random_schema(rs, &s);
  kv_env *ea = kv_env_mem_new(0), *eb = kv_env_mem_new(0);
  rowan_db *a = tu_open_mem(ea), *b = tu_open_mem(eb);
  exec_ok(a, s.ddl);
  exec_ok(b, s.ddl);
  for (int i = 0; i < s.nidx && i < 2; i++) { /* i < 2: GCC -O3 cannot see nidx <= 2 */
    int ra = rowan_exec(a, s.idx[i], NULL, NULL), rb = rowan_exec(b, s.idx[i], NULL, NULL);
    assert_int_equal(ra, rb);
    if (ra != ROWAN_OK) s.idx[i][0] = 0; /* e.g. an index on a type that cannot be indexed */
  }
  const char *cols[NCOL];
  int nc = 0;
  for (int c = 0; c < NCOL; c++)
    if (c != 1 || s.nk == 2) cols[nc++] = cname[c];
  char up[256] = "UPSERT INTO T (";
  for (int c = 0; c < nc; c++) {
    size_t n = strlen(up);
    snprintf(up + n, sizeof up - n, "%s%s", c ? ", " : "", cols[c]);
  }
  strcat(up, ") VALUES (?, ?, ?, ?, ?");
  strcat(up, nc == 6 ? ", ?)" : ")");
  rowan_stmt *ins;
  assert_int_equal(rowan_prepare(b, up, -1, &ins, NULL), ROWAN_OK);
  rowan_bulk *bulk;
  int brc = rowan_bulk_begin(a, "T", nc, cols, &bulk);
  if (brc != ROWAN_OK) fail_msg("seed %llu table %d: bulk begin: %s", (unsigned long long)seed, t,
                                rowan_errmsg(a));
  int nrows = 30 + (int)tu_below(rs, 300), accepted = 0;
  /* distinct keys: the index load refuses a repeated key (tested elsewhere) */
  rowan_stmt *has;
  char hq[300];
  snprintf(hq, sizeof hq, "SELECT COUNT(*) FROM T WHERE K0 = CAST(? AS %s)%s%s%s",
           vtypes[s.type[0]].name, s.nk == 2 ? " AND K1 = CAST(? AS " : "",
           s.nk == 2 ? vtypes[s.type[1]].name : "", s.nk == 2 ? ")" : "");
  if (rowan_prepare(b, hq, -1, &has, NULL) != ROWAN_OK) fail_msg("%s: %s", hq, rowan_errmsg(b));
  for (int r = 0; r < nrows; r++) {
    trow row;
    char buf[NCOL][48];
    random_row(rs, &s, &row, buf);
    const char *f[NCOL];
    int k = 0;
    for (int c = 0; c < NCOL; c++)
      if (c != 1 || s.nk == 2) f[k++] = row.f[c];
    /* a key value already loaded (maybe from another text: "0" and "-0.0") is skipped */
    rowan_reset(has);
    for (int c = 0; c < s.nk; c++) rowan_bind_text(has, c + 1, f[c], -1);
    if (rowan_step(has) == ROWAN_ROW && rowan_column_int64(has, 0) > 0) continue;
    rowan_reset(ins);
    for (int c = 0; c < nc; c++) {
      if (f[c]) assert_int_equal(rowan_bind_text(ins, c + 1, f[c], -1), ROWAN_OK);
      else assert_int_equal(rowan_bind_null(ins, c + 1), ROWAN_OK);
    }
    int urc = rowan_step(ins);
    int arc = rowan_bulk_add_text(bulk, f, NULL);
    char amsg[256];
    snprintf(amsg, sizeof amsg, "%s", rowan_errmsg(a));
    bool uok = urc == ROWAN_DONE, aok = arc == ROWAN_OK;
    if (uok != aok) {
      char desc[400] = "";
      for (int c = 0; c < nc; c++) {
        size_t n = strlen(desc);
        snprintf(desc + n, sizeof desc - n, "%s%s='%s'", c ? ", " : "", cols[c],
                 f[c] ? f[c] : "NULL");
      }
      fail_msg("seed %llu table %d (%s): row (%s): UPSERT %s (%s), bulk %s (%s)",
               (unsigned long long)seed, t, s.ddl, desc, rowan_errstr(urc), rowan_errmsg(b),
               rowan_errstr(arc), amsg);
    }
    /* a key that UPSERT took (even one that converts alike from another text) counts */
    if (uok) accepted++;
  }
  rowan_finalize(ins);
  rowan_finalize(has);
  int crc = rowan_bulk_commit(bulk);
  if (crc != ROWAN_OK) {
    fail_msg("seed %llu table %d: commit %s: %s", (unsigned long long)seed, t,
             rowan_errstr(crc), rowan_errmsg(a));
  }
  char *oa = malloc(OUT_CAP), *ob = malloc(OUT_CAP);
  assert_non_null(oa);
  assert_non_null(ob);
  dump(a, "SELECT * FROM T", oa, OUT_CAP);
  dump(b, "SELECT * FROM T", ob, OUT_CAP);
  if (strcmp(oa, ob) != 0)
    fail_msg("seed %llu table %d (%s): bulk table\n%s\nUPSERT table\n%s",
             (unsigned long long)seed, t, s.ddl, oa, ob);
  for (int i = 0; i < s.nidx; i++) {
    if (!s.idx[i][0]) continue;
    char sql[320]; /* room for the longest column list (cl) and names */
    snprintf(sql, sizeof sql, "CHECK INDEX I%d ON T", i);
    int bad = 0;
    assert_int_equal(rowan_exec(a, sql, check_cb, &bad), ROWAN_OK);
    if (bad) {
      dump(a, sql, oa, OUT_CAP);
      fail_msg("seed %llu table %d (%s; %s): after the bulk load %s:\n%s",
               (unsigned long long)seed, t, s.ddl, s.idx[i], sql, oa);
    }
    assert_int_equal(rowan_exec(b, sql, check_cb, &bad), ROWAN_OK);
    assert_int_equal(bad, 0);
    /* reads through the index: every row of the index, in index order */
    char cl[100] = "";
    for (int j = 0; j < s.nicol[i]; j++) {
      size_t n = strlen(cl);
      snprintf(cl + n, sizeof cl - n, "%s%s", j ? ", " : "", cname[s.icol[i][j]]);
    }
    snprintf(sql, sizeof sql, "SELECT /*+ INDEX(T I%d) */ %s FROM T WHERE %s IS NOT NULL", i,
             cl, cname[s.icol[i][0]]);
    dump(a, sql, oa, OUT_CAP);
    dump(b, sql, ob, OUT_CAP);
    if (strcmp(oa, ob) != 0)
      fail_msg("seed %llu table %d (%s; %s): %s\nbulk:\n%s\nUPSERT:\n%s",
               (unsigned long long)seed, t, s.ddl, s.idx[i], sql, oa, ob);
  }
  free(oa);
  free(ob);
  fprintf(stderr, "  table %d: %d rows\n", t, accepted);
  assert_int_equal(rowan_close(a), ROWAN_OK);
  assert_int_equal(rowan_close(b), ROWAN_OK);
  kv_env_free(ea);
  kv_env_free(eb);
}

static void bulk_index_rows_equal_upsert(void **state) {
  (void)state;
  uint64_t seed = tu_seed("bulk_index_rows_equal_upsert"), rs = seed;
  int n = (int)tu_scaled(60, 20);
  for (int t = 0; t < n; t++) one_table(&rs, seed, t);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(bulk_index_rows_equal_upsert),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
