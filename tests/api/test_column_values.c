/*
** tests/api/test_column_values.c: rowan_column_values (include/rowan.h), the whole-row read,
** against the single getters it stands for, on the in-memory file system:
**  - known values of every SQL type (DECIMAL, DATE before 1970, TIME, TIMESTAMP before 1970
**    with its floor, BOOLEAN, empty and NUL-holding strings and blobs, NULL) and what each
**    field must hold;
**  - randomized and seeded: a table of all fourteen types with random values and NULLs,
**    queried with random projections (columns reordered and repeated, expressions) and
**    random column windows [first, first + n), each value compared field by field with
**    rowan_column_type / _int64 / _double / _timestamp / _blob / _bytes, the getters called
**    before or after it, through LIMIT/OFFSET and statements reset and re-bound mid-scan;
**  - the errors: NULL statement or array, windows out of range (nothing written), no
**    current row (before the first step, after DONE, after a failed step: NULLs written),
**    n = 0, and the connection's error state.
**  - rows that reach exec as value vectors (kv.h): a readings-like table (VARCHAR and DESC
**    TIMESTAMP key, timestamps before 1970 with microseconds, DOUBLEs, strings and blobs in
**    two families, a DECIMAL in a third), compacted so rows come from store-file blocks,
**    then updated so some rows merge memstore cells; seeded random projections (distinct
**    columns in any order as a direct projection, or any columns repeated), key ranges,
**    LIMIT/OFFSET, re-binds and resets mid-scan; each row read whole before or after a
**    getter, compared with the getters, and read whole again.
** Not here: the getters' own conversions (tests/api/test_api.c).
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

static rowan_stmt *prep(rowan_db *db, const char *sql) {
  rowan_stmt *st = NULL;
  int rc = rowan_prepare(db, sql, -1, &st, NULL);
  if (rc != ROWAN_OK) fail_msg("prepare %s: %s", sql, rowan_errmsg(db));
  return st;
}

/* Whether column i's value is a string (CHAR, VARCHAR, VARBINARY), whose numbers the
** values leave to the getters: the declared type says so for table columns; expressions
** are told by the caller (is_str). */
static int check_one(rowan_stmt *st, int i, const rowan_value *v, int is_str, uint64_t seed) {
  int type = rowan_column_type(st, i);
  if (v->type != type) fail_msg("seed %llu column %d: type %d, getter %d",
                                (unsigned long long)seed, i, v->type, type);
  if (type == ROWAN_NULL) {
    assert_true(v->i == 0 && v->d == 0.0 && v->p == NULL && v->bytes == 0);
    return 0;
  }
  if (type == ROWAN_TEXT || type == ROWAN_BLOB) {
    int nb = rowan_column_bytes(st, i);
    const void *b = rowan_column_blob(st, i);
    if (v->bytes != nb) fail_msg("seed %llu column %d: %d bytes, getter %d",
                                 (unsigned long long)seed, i, v->bytes, nb);
    assert_non_null(v->p);
    if (nb && memcmp(v->p, b, (size_t)nb) != 0)
      fail_msg("seed %llu column %d: bytes differ from rowan_column_blob",
               (unsigned long long)seed, i);
    const char *t = rowan_column_text(st, i); /* the terminated copy spells the same bytes */
    assert_non_null(t);
    assert_int_equal(strlen(t) <= (size_t)nb, 1);
    if (!memchr(v->p, 0, (size_t)nb)) {
      assert_int_equal(strlen(t), (size_t)nb);
      assert_memory_equal(t, v->p, (size_t)nb);
    }
  } else {
    assert_null(v->p);
    assert_int_equal(v->bytes, 0);
  }
  if (is_str) {
    assert_true(v->i == 0 && v->d == 0.0);
    return 0;
  }
  int64_t gi = rowan_column_int64(st, i), gt = rowan_column_timestamp(st, i);
  double gd = rowan_column_double(st, i);
  if (v->i != gi || v->i != gt || memcmp(&v->d, &gd, sizeof gd) != 0)
    fail_msg("seed %llu column %d: i %lld d %.17g, getters %lld / %lld / %.17g",
             (unsigned long long)seed, i, (long long)v->i, v->d, (long long)gi, (long long)gt, gd);
  return 0;
}

/* ---- Known values ------------------------------------------------------------------------ */
static void known_values(void **state) {
  (void)state;
  kv_env *env = kv_env_mem_new(1500000000000LL);
  rowan_db *db = tu_open_mem(env);
  exec_ok(db, "CREATE TABLE t (k INTEGER NOT NULL PRIMARY KEY, de DECIMAL(7,3), dt DATE,"
              " tm TIME, ts TIMESTAMP, bo BOOLEAN, d DOUBLE, f FLOAT, s VARCHAR(10), c CHAR(4),"
              " vb VARBINARY, ti TINYINT)");
  exec_ok(db, "UPSERT INTO t VALUES (1, -12.755, DATE '1969-12-31', TIME '13:14:15.678',"
              " TIMESTAMP '1969-12-31 23:59:59.9995', TRUE, -2.5e20, 1.5, '', 'ab', NULL, -7)");
  rowan_stmt *ins = prep(db, "UPSERT INTO t (k, vb, s) VALUES (2, ?, ?)");
  assert_int_equal(rowan_bind_blob(ins, 1, "a\0b", 3), ROWAN_OK);
  assert_int_equal(rowan_bind_text(ins, 2, "x\0y", 3), ROWAN_OK);
  assert_int_equal(rowan_step(ins), ROWAN_DONE);
  rowan_finalize(ins);
  rowan_stmt *st = prep(db, "SELECT k, de, dt, tm, ts, bo, d, f, s, c, vb, ti FROM t ORDER BY k");
  rowan_value v[12];
  assert_int_equal(rowan_step(st), ROWAN_ROW);
  assert_int_equal(rowan_column_values(st, 0, 12, v), ROWAN_OK);
  assert_int_equal(v[0].type, ROWAN_INTEGER);
  assert_int_equal(v[0].i, 1);
  assert_true(v[0].d == 1.0);
  assert_int_equal(v[1].type, ROWAN_TEXT); /* DECIMAL: exact text, truncated integer */
  assert_int_equal(v[1].bytes, 7);
  assert_memory_equal(v[1].p, "-12.755", 7);
  assert_int_equal(v[1].i, -12);
  assert_true(v[1].d == -12.755);
  assert_int_equal(v[2].type, ROWAN_TEXT); /* DATE: text, ms since the epoch */
  assert_memory_equal(v[2].p, "1969-12-31", 10);
  assert_int_equal(v[2].i, -86400000LL);
  assert_int_equal(v[3].type, ROWAN_TEXT); /* TIME: ms since midnight */
  assert_int_equal(v[3].i, (13 * 3600 + 14 * 60 + 15) * 1000LL + 678);
  assert_int_equal(v[4].type, ROWAN_TIMESTAMP); /* floor, not toward zero */
  assert_null(v[4].p);
  assert_int_equal(v[4].i, -1);
  assert_int_equal(v[4].i, rowan_column_timestamp(st, 4));
  assert_int_equal(v[5].type, ROWAN_INTEGER);
  assert_int_equal(v[5].i, 1);
  assert_int_equal(v[6].type, ROWAN_FLOAT); /* clamped to the int64 range */
  assert_true(v[6].d == -2.5e20);
  assert_true(v[6].i == INT64_MIN);
  assert_true(v[7].d == 1.5 && v[7].i == 1);
  assert_int_equal(v[8].type, ROWAN_TEXT); /* an empty string is not NULL */
  assert_non_null(v[8].p);
  assert_int_equal(v[8].bytes, 0);
  assert_int_equal(v[9].bytes, 2);
  assert_memory_equal(v[9].p, "ab", 2);
  assert_int_equal(v[10].type, ROWAN_NULL);
  assert_null(v[10].p);
  assert_int_equal(v[11].i, -7);
  for (int i = 0; i < 12; i++) check_one(st, i, &v[i], i >= 8 && i <= 10, 0);
  assert_int_equal(rowan_step(st), ROWAN_ROW);
  assert_int_equal(rowan_column_values(st, 8, 3, v), ROWAN_OK);
  assert_int_equal(v[0].type, ROWAN_TEXT);
  assert_int_equal(v[0].bytes, 3);
  assert_memory_equal(v[0].p, "x\0y", 3);
  assert_int_equal(v[1].type, ROWAN_NULL);
  assert_int_equal(v[2].type, ROWAN_BLOB);
  assert_int_equal(v[2].bytes, 3);
  assert_memory_equal(v[2].p, "a\0b", 3);
  assert_true(v[2].i == 0 && v[2].d == 0.0);
  rowan_finalize(st);
  assert_int_equal(rowan_close(db), ROWAN_OK);
  kv_env_free(env);
}

/* ---- Errors -------------------------------------------------------------------------------- */
static void fill_junk(rowan_value *v, int n) { memset(v, 0xA5, (size_t)n * sizeof *v); }

static void all_null(const rowan_value *v, int n) {
  for (int i = 0; i < n; i++)
    assert_true(v[i].type == ROWAN_NULL && v[i].i == 0 && v[i].d == 0.0 && !v[i].p &&
                v[i].bytes == 0);
}

static void untouched(const rowan_value *v, int n) {
  rowan_value junk;
  fill_junk(&junk, 1);
  for (int i = 0; i < n; i++) assert_memory_equal(&v[i], &junk, sizeof junk);
}

static void errors(void **state) {
  (void)state;
  kv_env *env = kv_env_mem_new(1500000000000LL);
  rowan_db *db = tu_open_mem(env);
  exec_ok(db, "CREATE TABLE t (k INTEGER NOT NULL PRIMARY KEY, v DOUBLE, s VARCHAR)");
  exec_ok(db, "UPSERT INTO t VALUES (1, 4.0, 'a'), (2, -4.0, 'b')");
  rowan_value v[4];
  assert_int_equal(rowan_column_values(NULL, 0, 1, v), ROWAN_MISUSE);
  assert_int_equal(rowan_column_values(NULL, 0, 0, NULL), ROWAN_MISUSE);
  rowan_stmt *st = prep(db, "SELECT k, v, s FROM t");
  /* before the first step: NULLs, ROWAN_MISUSE with a message */
  fill_junk(v, 4);
  assert_int_equal(rowan_column_values(st, 0, 3, v), ROWAN_MISUSE);
  all_null(v, 3);
  untouched(v + 3, 1);
  assert_int_equal(rowan_errcode(db), ROWAN_MISUSE);
  assert_non_null(strstr(rowan_errmsg(db), "without a current row"));
  assert_int_equal(rowan_step(st), ROWAN_ROW);
  /* success leaves the connection's error as it was, like the getters */
  assert_int_equal(rowan_column_values(st, 0, 3, v), ROWAN_OK);
  assert_int_equal(rowan_errcode(db), ROWAN_OK); /* the step cleared the misuse */
  /* windows out of range: nothing written */
  int bad[][2] = {{-1, 1}, {0, -1}, {0, 4}, {3, 1}, {2, 2}, {4, 0}, {INT32_MAX, 1}, {1, INT32_MAX}};
  for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
    fill_junk(v, 4);
    assert_int_equal(rowan_column_values(st, bad[k][0], bad[k][1], v), ROWAN_RANGE);
    untouched(v, 4);
    assert_int_equal(rowan_errcode(db), ROWAN_RANGE);
    assert_non_null(strstr(rowan_errmsg(db), "out of range"));
  }
  /* NULL array: only with n = 0 */
  assert_int_equal(rowan_column_values(st, 0, 1, NULL), ROWAN_MISUSE);
  assert_int_equal(rowan_column_values(st, 0, 0, NULL), ROWAN_OK);
  assert_int_equal(rowan_column_values(st, 3, 0, v), ROWAN_OK);
  /* the row is still readable after the errors */
  assert_int_equal(rowan_column_values(st, 1, 2, v), ROWAN_OK);
  assert_true(v[0].type == ROWAN_FLOAT && v[0].d == 4.0);
  assert_int_equal(rowan_step(st), ROWAN_ROW);
  assert_int_equal(rowan_step(st), ROWAN_DONE);
  fill_junk(v, 4);
  assert_int_equal(rowan_column_values(st, 0, 3, v), ROWAN_MISUSE);
  all_null(v, 3);
  /* after reset */
  assert_int_equal(rowan_reset(st), ROWAN_OK);
  fill_junk(v, 4);
  assert_int_equal(rowan_column_values(st, 1, 2, v), ROWAN_MISUSE);
  all_null(v, 2);
  rowan_finalize(st);
  /* after a failed step (SQRT of -4 on the second row) */
  st = prep(db, "SELECT k, SQRT(v) FROM t ORDER BY k");
  assert_int_equal(rowan_step(st), ROWAN_ROW);
  assert_int_equal(rowan_column_values(st, 0, 2, v), ROWAN_OK);
  assert_true(v[1].d == 2.0);
  assert_int_not_equal(rowan_step(st), ROWAN_ROW);
  fill_junk(v, 4);
  assert_int_equal(rowan_column_values(st, 0, 2, v), ROWAN_MISUSE);
  all_null(v, 2);
  rowan_finalize(st);
  /* a statement without result columns */
  st = prep(db, "UPSERT INTO t VALUES (3, 1, 'c')");
  assert_int_equal(rowan_step(st), ROWAN_DONE);
  assert_int_equal(rowan_column_values(st, 0, 0, v), ROWAN_MISUSE);
  assert_int_equal(rowan_column_values(st, 0, 1, v), ROWAN_RANGE);
  rowan_finalize(st);
  assert_int_equal(rowan_close(db), ROWAN_OK);
  kv_env_free(env);
}

/* ---- Randomized against the getters ------------------------------------------------------ */
#define N_TCOLS 15 /* K, B, TI, SI, I, BI, F, D, DE, C, VC, VB, DT, TM, TS */
/* projection items: SQL text and whether the value is a string */
typedef struct item {
  const char *sql; /* expression */
  int is_str;      /* CHAR / VARCHAR / VARBINARY result */
} item;
static const item items[] = {
    {"K", 0},  {"B", 0},  {"TI", 0}, {"SI", 0}, {"I", 0},  {"BI", 0}, {"F", 0},  {"D", 0},
    {"DE", 0}, {"C", 1},  {"VC", 1}, {"VB", 1}, {"DT", 0}, {"TM", 0}, {"TS", 0},
    {"K * 2", 0}, {"D + 1.5", 0}, {"DE * 2", 0}, {"VC || '!'", 1}, {"CAST(BI AS VARCHAR(30))", 1},
    {"DT + 1", 0}, {"TS - 1", 0}, {"COALESCE(I, SI, TI)", 0}, {"UPPER(C)", 1}, {"NOT B", 0},
    {"CAST(I AS DOUBLE)", 0}, {"LENGTH(VC)", 0}};
#define N_ITEMS ((int)(sizeof items / sizeof items[0]))

static void rand_text(uint64_t *rs, char *buf, int max, int *len) {
  static const char alpha[] = "0123456789.-eE abcXYZ";
  int n = (int)tu_below(rs, (uint64_t)max + 1);
  for (int i = 0; i < n; i++) buf[i] = alpha[tu_below(rs, sizeof alpha - 1)];
  buf[n] = 0;
  *len = n;
}

static void insert_rows(rowan_db *db, uint64_t *rs, int n_rows) {
  rowan_stmt *up = prep(db, "UPSERT INTO tv VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
  exec_ok(db, "BEGIN");
  for (int r = 0; r < n_rows; r++) {
    assert_int_equal(rowan_bind_int64(up, 1, r), ROWAN_OK);
    for (int c = 1; c < N_TCOLS; c++) {
      int p = c + 1;
      if (tu_below(rs, 5) == 0) {
        rowan_bind_null(up, p);
        continue;
      }
      char buf[64];
      int len;
      int64_t x = (int64_t)tu_rand(rs);
      switch (c) {
        case 1: rowan_bind_text(up, p, (x & 1) ? "TRUE" : "FALSE", -1); break;
        case 2: rowan_bind_int64(up, p, (int64_t)(int8_t)x); break;
        case 3: rowan_bind_int64(up, p, (int64_t)(int16_t)x); break;
        case 4: rowan_bind_int64(up, p, (int64_t)(int32_t)x); break;
        case 5: rowan_bind_int64(up, p, tu_below(rs, 4) ? x % 100000 : x); break;
        case 6: rowan_bind_double(up, p, (double)(float)((double)(x % 2000001) / 64.0)); break;
        case 7: rowan_bind_double(up, p, tu_below(rs, 8) ? (double)(x % 200000001) / 1024.0
                                                         : (double)x * 1e7); break;
        case 8:
          snprintf(buf, sizeof buf, "%lld.%03d", (long long)(x % 100000000),
                   (int)tu_below(rs, 1000));
          rowan_bind_text(up, p, buf, -1);
          break;
        case 9: rand_text(rs, buf, 5, &len); rowan_bind_text(up, p, buf, len); break;
        case 10: rand_text(rs, buf, 20, &len); rowan_bind_text(up, p, buf, len); break;
        case 11: {
          unsigned char b[16];
          int nb = (int)tu_below(rs, 17);
          for (int k = 0; k < nb; k++) b[k] = (unsigned char)tu_rand(rs);
          rowan_bind_blob(up, p, b, nb);
          break;
        }
        case 12:
          snprintf(buf, sizeof buf, "%04d-%02d-%02d", 1900 + (int)tu_below(rs, 200),
                   1 + (int)tu_below(rs, 12), 1 + (int)tu_below(rs, 28));
          rowan_bind_text(up, p, buf, -1);
          break;
        case 13:
          snprintf(buf, sizeof buf, "%02d:%02d:%02d.%03d", (int)tu_below(rs, 24),
                   (int)tu_below(rs, 60), (int)tu_below(rs, 60), (int)tu_below(rs, 1000));
          rowan_bind_text(up, p, buf, -1);
          break;
        default:
          rowan_bind_timestamp(up, p, (x % 4000000000000LL));
          break;
      }
    }
    int rc = rowan_step(up);
    if (rc != ROWAN_DONE) fail_msg("upsert row %d: %s", r, rowan_errmsg(db));
    rowan_reset(up);
  }
  exec_ok(db, "COMMIT");
  rowan_finalize(up);
}

/* Read every row of st with both the values and the getters, windows chosen at random;
** stop after max_rows rows (-1: all). Returns the rows read. */
static int compare_rows(rowan_stmt *st, const int *proj, int n_proj, uint64_t *rs, uint64_t seed,
                        int max_rows) {
  rowan_value v[64];
  int rows = 0, rc;
  while ((max_rows < 0 || rows < max_rows) && (rc = rowan_step(st)) == ROWAN_ROW) {
    int first = (int)tu_below(rs, (uint64_t)n_proj + 1);
    int n = (int)tu_below(rs, (uint64_t)(n_proj - first) + 1);
    if (tu_below(rs, 2)) { first = 0; n = n_proj; }
    int getters_first = (int)tu_below(rs, 2);
    if (getters_first) /* the getters' copies made first must not change the values */
      for (int k = 0; k < n; k++) (void)rowan_column_text(st, first + k);
    assert_int_equal(rowan_column_values(st, first, n, v), ROWAN_OK);
    for (int k = 0; k < n; k++)
      check_one(st, first + k, &v[k], items[proj[first + k]].is_str, seed);
    rows++;
  }
  return rows;
}

static void random_projections(void **state) {
  (void)state;
  uint64_t seed = tu_seed("column_values_random"), rs = seed;
  kv_env *env = kv_env_mem_new(1500000000000LL);
  rowan_db *db = tu_open_mem(env);
  exec_ok(db, "CREATE TABLE tv (K INTEGER NOT NULL PRIMARY KEY, B BOOLEAN, TI TINYINT,"
              " SI SMALLINT, I INTEGER, BI BIGINT, F FLOAT, D DOUBLE, DE DECIMAL(12,3),"
              " C CHAR(5), VC VARCHAR(20), VB VARBINARY, DT DATE, TM TIME, TS TIMESTAMP)");
  int n_rows = (int)tu_scaled(300, 60);
  insert_rows(db, &rs, n_rows);
  if (tu_below(&rs, 2)) assert_int_equal(rowan_flush(db), ROWAN_OK); /* store files too */
  int n_queries = (int)tu_scaled(120, 30), total = 0;
  for (int q = 0; q < n_queries; q++) {
    int proj[32], n_proj = 1 + (int)tu_below(&rs, 24);
    char sql[2048];
    size_t o = (size_t)snprintf(sql, sizeof sql, "SELECT ");
    for (int k = 0; k < n_proj; k++) {
      proj[k] = (int)tu_below(&rs, (uint64_t)N_ITEMS);
      o += (size_t)snprintf(sql + o, sizeof sql - o, "%s%s", k ? ", " : "", items[proj[k]].sql);
    }
    int lo = (int)tu_below(&rs, (uint64_t)n_rows);
    o += (size_t)snprintf(sql + o, sizeof sql - o, " FROM tv WHERE K >= ?");
    switch (tu_below(&rs, 4)) {
      case 0: snprintf(sql + o, sizeof sql - o, " ORDER BY K DESC LIMIT 17 OFFSET 3"); break;
      case 1: snprintf(sql + o, sizeof sql - o, " AND D IS NOT NULL"); break;
      case 2: snprintf(sql + o, sizeof sql - o, " ORDER BY VC, K LIMIT 40"); break;
      default: break;
    }
    rowan_stmt *st = prep(db, sql);
    assert_int_equal(rowan_column_count(st), n_proj);
    for (int run = 0; run < 3; run++) { /* re-bound, sometimes reset mid-scan */
      assert_int_equal(rowan_bind_int64(st, 1, run ? (int64_t)tu_below(&rs, (uint64_t)n_rows) : lo),
                       ROWAN_OK);
      int stop = tu_below(&rs, 2) ? (int)tu_below(&rs, 20) : -1;
      total += compare_rows(st, proj, n_proj, &rs, seed, stop);
      rowan_reset(st);
    }
    rowan_finalize(st);
  }
  if (total < n_queries * 10)
    fail_msg("seed %llu: only %d rows compared", (unsigned long long)seed, total);
  assert_int_equal(rowan_close(db), ROWAN_OK);
  kv_env_free(env);
}


/* ---- Rows from value vectors ------------------------------------------------------------- */
/* columns of table r: SQL, and whether the value is a string */
static const item rcols[] = {{"S", 1},  {"TS", 0}, {"A", 0}, {"B", 0},  {"C", 0},  {"D", 0},
                             {"W", 1},  {"X", 0},  {"Y", 0}, {"CH", 1}, {"VB", 1}, {"DE", 0}};
#define N_RCOLS ((int)(sizeof rcols / sizeof rcols[0]))

static void vector_rows(void **state) {
  (void)state;
  uint64_t seed = tu_seed("column_values_vectors"), rs = seed;
  kv_env *env = kv_env_mem_new(1500000000000LL);
  rowan_db *db = tu_open_mem(env);
  exec_ok(db, "CREATE TABLE r (S VARCHAR NOT NULL, TS TIMESTAMP NOT NULL, R.A DOUBLE,"
              " R.B DOUBLE, R.C DOUBLE, R.D DOUBLE, R.W VARCHAR(3), M.X DOUBLE, M.Y DOUBLE,"
              " M.CH CHAR(4), M.VB VARBINARY, Z.DE DECIMAL(8,2),"
              " CONSTRAINT PK PRIMARY KEY (S, TS DESC))");
  int n_st = 4, n_ts = (int)tu_scaled(300, 80);
  rowan_stmt *up = prep(db, "UPSERT INTO r VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
  for (int pass = 0; pass < 2; pass++) {
    exec_ok(db, "BEGIN");
    for (int st = 0; st < n_st; st++)
      for (int t = 0; t < n_ts; t++) {
        if (pass == 1 && tu_below(&rs, 8)) continue; /* the second pass updates a few rows */
        char sname[8];
        snprintf(sname, sizeof sname, "st%d", st);
        rowan_bind_text(up, 1, sname, -1);
        if (st == 0) { /* before 1970, with microseconds: ms by floor, not toward zero */
          char ts[40];
          snprintf(ts, sizeof ts, "1969-12-%02d %02d:%02d:00.%06d", 1 + t / 24 % 31, t % 24,
                   t / 744 % 60, (int)tu_below(&rs, 1000000));
          rowan_bind_text(up, 2, ts, -1);
        } else {
          rowan_bind_timestamp(up, 2, 1400000000000LL + (int64_t)t * 3600000 -
                                          (int64_t)tu_below(&rs, 2));
        }
        for (int c = 3; c <= 12; c++) {
          if (tu_below(&rs, 10) == 0) { rowan_bind_null(up, c); continue; }
          char buf[32];
          int64_t x = (int64_t)tu_rand(&rs);
          switch (c) {
            case 7: rowan_bind_text(up, c, "NNE" + tu_below(&rs, 4), -1); break;
            case 10: rowan_bind_text(up, c, "ab" + tu_below(&rs, 3), -1); break;
            case 11: rowan_bind_blob(up, c, "\0x\0yz", (int)tu_below(&rs, 6)); break;
            case 12:
              snprintf(buf, sizeof buf, "%lld.%02d", (long long)(x % 100000),
                       (int)tu_below(&rs, 100));
              rowan_bind_text(up, c, buf, -1);
              break;
            default:
              rowan_bind_double(up, c, tu_below(&rs, 50) ? (double)(x % 2000000) / 16.0
                                                         : (double)x * 1e9);
          }
        }
        if (rowan_step(up) != ROWAN_DONE) fail_msg("upsert: %s", rowan_errmsg(db));
        rowan_reset(up);
      }
    exec_ok(db, "COMMIT");
    if (pass == 0) assert_int_equal(rowan_compact(db, 1), ROWAN_OK); /* store files */
  }
  rowan_finalize(up);
  int n_queries = (int)tu_scaled(150, 40), rows = 0;
  for (int q = 0; q < n_queries; q++) {
    int proj[16], n_proj;
    if (tu_below(&rs, 4)) { /* distinct columns (not S or DE), any order: a direct projection */
      int pool[N_RCOLS], n_pool = 0;
      for (int c = 1; c < N_RCOLS - 1; c++) pool[n_pool++] = c;
      n_proj = 1 + (int)tu_below(&rs, (uint64_t)n_pool);
      for (int k = 0; k < n_proj; k++) {
        int j = k + (int)tu_below(&rs, (uint64_t)(n_pool - k));
        int tmp = pool[k];
        pool[k] = pool[j];
        pool[j] = tmp;
        proj[k] = pool[k];
      }
    } else { /* any columns, repeated or not: rows decoded as before */
      n_proj = 1 + (int)tu_below(&rs, 14);
      for (int k = 0; k < n_proj; k++) proj[k] = (int)tu_below(&rs, (uint64_t)N_RCOLS);
    }
    char sql[1024];
    size_t o = (size_t)snprintf(sql, sizeof sql, "SELECT ");
    for (int k = 0; k < n_proj; k++)
      o += (size_t)snprintf(sql + o, sizeof sql - o, "%s%s", k ? ", " : "", rcols[proj[k]].sql);
    static const char *const tails[4] = {
        " FROM r WHERE S = ? ORDER BY TS DESC LIMIT 30", " FROM r WHERE S = ? LIMIT 25 OFFSET 7",
        " FROM r WHERE S >= ?", " FROM r WHERE S = ? AND TS < TIMESTAMP '2014-06-01 00:00:00'"};
    snprintf(sql + o, sizeof sql - o, "%s", tails[tu_below(&rs, 4)]);
    rowan_stmt *st = prep(db, sql);
    for (int run = 0; run < 3; run++) {
      char sname[8];
      snprintf(sname, sizeof sname, "st%d", (int)tu_below(&rs, (uint64_t)n_st));
      assert_int_equal(rowan_bind_text(st, 1, sname, -1), ROWAN_OK);
      int stop = tu_below(&rs, 3) == 0 ? (int)tu_below(&rs, 40) : -1, got = 0, rc;
      rowan_value v[16];
      while ((stop < 0 || got < stop) && (rc = rowan_step(st)) == ROWAN_ROW) {
        got++;
        rows++;
        int first = 0, n = n_proj;
        if (tu_below(&rs, 3) == 0) {
          first = (int)tu_below(&rs, (uint64_t)n_proj + 1);
          n = (int)tu_below(&rs, (uint64_t)(n_proj - first) + 1);
        }
        if (tu_below(&rs, 4) == 0) (void)rowan_column_type(st, 0); /* decoded first */
        assert_int_equal(rowan_column_values(st, first, n, v), ROWAN_OK);
        for (int k = 0; k < n; k++)
          check_one(st, first + k, &v[k], rcols[proj[first + k]].is_str, seed);
        /* read again: the same values */
        rowan_value w[16];
        assert_int_equal(rowan_column_values(st, first, n, w), ROWAN_OK);
        for (int k = 0; k < n; k++)
          if (w[k].type != v[k].type || w[k].i != v[k].i || w[k].bytes != v[k].bytes ||
              memcmp(&w[k].d, &v[k].d, sizeof w[k].d) ||
              (w[k].bytes && memcmp(w[k].p, v[k].p, (size_t)w[k].bytes)))
            fail_msg("seed %llu column %d: a second read differs", (unsigned long long)seed,
                     first + k);
      }
      rowan_reset(st);
    }
    rowan_finalize(st);
  }
  if (rows < n_queries * 10)
    fail_msg("seed %llu: only %d rows read", (unsigned long long)seed, rows);
  assert_int_equal(rowan_close(db), ROWAN_OK);
  kv_env_free(env);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(known_values),
      cmocka_unit_test(errors),
      cmocka_unit_test(random_projections),
      cmocka_unit_test(vector_rows),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
