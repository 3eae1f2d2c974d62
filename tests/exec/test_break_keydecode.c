/*
** tests/exec/test_break_keydecode.c: key columns read back from the row key (exec/rowcodec.c:
** NOT NULL fixed-width columns decoded in place, the cell encoding inverted for DESC; the
** others through cat_key_decode; only the key columns a query needs) must give the values
** written. Composite keys mix ASC and DESC fixed-width columns (TINYINT .. BIGINT, FLOAT,
** DOUBLE, DATE, TIME, TIMESTAMP) with VARCHAR and nullable columns before and after them;
** values include each type's limits, negatives, -0.0 (read back as 0.0), +-Infinity and
** dates before 1970. Each query reads one or a few key columns (all, one in the middle, the
** last) and is compared with the text of the written literal; the full scan's key order must
** follow ASC/DESC. Seeded (tu_seed).
*/
#include "test_engine_util.h"
#include "testutil.h"

#define NCOLS 10

typedef struct kcol {
  const char *name, *type; /* column name and SQL type */
  const char *const *lits; /* literals to write */
  const char *const *texts; /* their text as read back (doubles as tdb_runp prints them) */
  int n;                   /* how many */
  int rank[5];             /* their SQL order (equal ranks: equal values) */
} kcol;

static const char *const TI[] = {"-128", "127", "0", "-1", "5"};
static const char *const SI[] = {"-32768", "32767", "0", "-300", "300"};
static const char *const IN[] = {"-2147483648", "2147483647", "0", "-70000", "70000"};
static const char *const BI[] = {"-9223372036854775807", "9223372036854775807", "0", "-1", "4294967296"};
static const char *const FL[] = {"-1.5", "0.0", "2.25", "CAST('Infinity' AS FLOAT)", "-3.0e38"};
static const char *const FLT[] = {"-1.5", "0", "2.25", "inf", "-3.0000000054977558e+38"};
static const char *const DB[] = {"-1e300", "-0.0", "0.5", "CAST('-Infinity' AS DOUBLE)", "1e-300"};
static const char *const DBT[] = {"-1e+300", "0", "0.5", "-inf", "1e-300"};
static const char *const DT[] = {"DATE '1969-12-31'", "DATE '2020-02-29'", "DATE '1900-01-01'", "DATE '2038-01-20'", "DATE '1970-01-01'"};
static const char *const DTT[] = {"1969-12-31", "2020-02-29", "1900-01-01", "2038-01-20", "1970-01-01"};
static const char *const TS[] = {"TIMESTAMP '1969-12-31 23:59:59.999'", "TIMESTAMP '2020-01-01 00:00:00.000'", "TIMESTAMP '2001-09-09 01:46:40.500'", "TIMESTAMP '1950-06-15 12:00:00.001'", "TIMESTAMP '2100-01-01 00:00:00.000'"};
static const char *const TST[] = {"1969-12-31 23:59:59.999", "2020-01-01 00:00:00", "2001-09-09 01:46:40.500", "1950-06-15 12:00:00.001", "2100-01-01 00:00:00"};
static const char *const VC[] = {"''", "'a'", "'ab'", "'b'", "'a\x01'"};
static const char *const VCT[] = {"", "a", "ab", "b", "a\x01"};
static const char *const NI[] = {"NULL", "-5", "0", "7", "NULL"};
static const char *const NIT[] = {"NULL", "-5", "0", "7", "NULL"};

static const kcol COLS[NCOLS] = {
    {"A", "TINYINT NOT NULL", TI, TI, 5, {0, 4, 2, 1, 3}},
    {"B", "VARCHAR NOT NULL", VC, VCT, 5, {0, 1, 3, 4, 2}},
    {"C", "SMALLINT NOT NULL", SI, SI, 5, {0, 4, 2, 1, 3}},
    {"D", "INTEGER NULL", NI, NIT, 5, {0, 1, 2, 3, 0}},
    {"E", "FLOAT NOT NULL", FL, FLT, 5, {1, 2, 3, 4, 0}},
    {"F", "DOUBLE NOT NULL", DB, DBT, 5, {1, 2, 4, 0, 3}},
    {"G", "DATE NOT NULL", DT, DTT, 5, {1, 3, 0, 4, 2}},
    {"H", "TIMESTAMP NOT NULL", TS, TST, 5, {1, 3, 2, 0, 4}},
    {"I", "BIGINT NOT NULL", BI, BI, 5, {0, 4, 2, 1, 3}},
    {"J", "INTEGER NOT NULL", IN, IN, 5, {0, 4, 2, 1, 3}},
};

static void run(const bool *desc, uint64_t seed, uint64_t *rs) {
  tdb *t = tdb_open();
  char sql[2048];
  int o = snprintf(sql, sizeof sql, "CREATE TABLE T (");
  for (int c = 0; c < NCOLS; c++)
    o += snprintf(sql + o, sizeof sql - (size_t)o, "%s %s, ", COLS[c].name, COLS[c].type);
  o += snprintf(sql + o, sizeof sql - (size_t)o, "V INTEGER, CONSTRAINT PK PRIMARY KEY (");
  for (int c = 0; c < NCOLS; c++)
    o += snprintf(sql + o, sizeof sql - (size_t)o, "%s%s%s", c ? ", " : "", COLS[c].name, desc[c] ? " DESC" : "");
  snprintf(sql + o, sizeof sql - (size_t)o, ")) BLOCKSIZE=512");
  q(t, sql);
  int n = (int)tu_scaled(300, 80);
  int (*pick)[NCOLS] = calloc((size_t)n, sizeof *pick);
  for (int r = 0; r < n; r++) {
    o = snprintf(sql, sizeof sql, "UPSERT INTO T VALUES (");
    for (int c = 0; c < NCOLS; c++) {
      pick[r][c] = (int)tu_below(rs, (uint64_t)COLS[c].n);
      o += snprintf(sql + o, sizeof sql - (size_t)o, "%s, ", COLS[c].lits[pick[r][c]]);
    }
    snprintf(sql + o, sizeof sql - (size_t)o, "%d)", r);
    assert_int_equal(tdb_run(t, sql), EXEC_DONE);
  }
  if (tu_below(rs, 2)) assert_int_equal(kv_compact(t->db, NULL, true), KV_OK);
  /* each row: all key columns, then a few single ones (only the needed key columns) */
  for (int r = 0; r < n; r++) {
    /* a later row with the same key replaced this one: skip it */
    snprintf(sql, sizeof sql, "SELECT COUNT(*) FROM T WHERE V = %d", r);
    if (strcmp(q(t, sql), "1\n") != 0) continue;
    for (int shape = 0; shape < 4; shape++) {
      int cs[NCOLS], nc = 0;
      if (shape == 0) for (int c = 0; c < NCOLS; c++) cs[nc++] = c;
      else cs[nc++] = shape == 1 ? NCOLS - 1 : (int)tu_below(rs, NCOLS);
      if (shape == 3) cs[nc++] = (int)tu_below(rs, NCOLS);
      o = snprintf(sql, sizeof sql, "SELECT ");
      char want[1024] = "";
      size_t wl = 0;
      for (int i = 0; i < nc; i++) {
        o += snprintf(sql + o, sizeof sql - (size_t)o, "%s%s", i ? ", " : "", COLS[cs[i]].name);
        wl += (size_t)snprintf(want + wl, sizeof want - wl, "%s%s", i ? "|" : "",
                               COLS[cs[i]].texts[pick[r][cs[i]]]);
      }
      snprintf(sql + o, sizeof sql - (size_t)o, " FROM T WHERE V = %d", r);
      snprintf(want + wl, sizeof want - wl, "\n");
      const char *got = q(t, sql);
      if (strcmp(got, want) != 0) fprintf(stderr, "seed %llu: %s\n", (unsigned long long)seed, sql);
      assert_string_equal(got, want);
    }
  }
  /* the full scan's order is the key order: each column ASC or DESC in turn */
  char *order = strdup(q(t, "SELECT V FROM T"));
  int prev = -1, rows = 0;
  for (char *p = order; *p; rows++) {
    int v = atoi(p);
    p = strchr(p, '\n') + 1;
    if (prev >= 0) {
      int c = 0, cmp = 0;
      for (; c < NCOLS && !cmp; c++) {
        int a = COLS[c].rank[pick[prev][c]], b = COLS[c].rank[pick[v][c]];
        cmp = (a > b) - (a < b);
        if (desc[c]) cmp = -cmp;
      }
      if (cmp >= 0) fprintf(stderr, "seed %llu: rows V=%d, V=%d out of key order\n", (unsigned long long)seed, prev, v);
      assert_true(cmp < 0);
    }
    prev = v;
  }
  assert_true(rows > 0);
  free(order);
  free(pick);
  tdb_close(t);
}

static void key_decode(void **state) {
  (void)state;
  uint64_t seed = tu_seed("key_decode"), rs = seed;
  for (int round = 0; round < 6; round++) {
    bool desc[NCOLS];
    for (int c = 0; c < NCOLS; c++) desc[c] = round == 0 ? false : round == 1 ? true : tu_below(&rs, 2);
    run(desc, seed, &rs);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(key_decode),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
