/*
** tests/exec/test_break_fast_types.c: exec's decode of rows that come as value vectors
** (exec/rowcodec.c: dense runs of 8-byte DOUBLEs and in-place strings, the hidden key
** family's cells skipped, the fixed-width key tail) for every SQL type in one family, with
** edge values (DOUBLE -0.0, 1e308, denormals, the int64 extremes, FLOAT rounding, strings
** holding NUL bytes, empty strings next to NULLs, blobs of zero bytes, CHAR padding,
** negative DECIMALs, dates before 1970), against the same rows read through views and cell
** by cell (kv/sf/sf_rows.h switches). Rows are in one compacted file (value vectors and row
** runs), then partly rewritten into the memstore; columns are read by every getter and
** whole (rowan_column_values), in projections that take dense DOUBLE runs broken by other
** types, key columns between value columns, and the key alone. Seeded.
** Not here: key decoding against cells (tests/api/test_break_key_tail.c).
*/
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "kv/env/env_mem.h"
#include "kv/sf/sf_rows.h"
#include "rowan.h"
#include "testutil.h"
#include "tu_sbuf.h"

#define NCOLS 16 /* value columns */

static const char *PROJ[] = {
  "*",
  "D1, D2, D3, D4, D5",
  "D1, F, D2, I, D3, S, D4",
  "S, B, VB, CH, D5",
  "K2, D1, K1, DE, DT, TM, TS2, BO, TI, SI, BI",
  "K1, K2",
  "D5, D4, D3, D2, D1, K2",
  "VB, S, S2, D1",
};
#define NPROJ ((int)(sizeof PROJ / sizeof PROJ[0]))

static void set_mode(int m) {
  kv_scan_set_fast_rows(m != 3);
  kv_scan_set_value_vectors(m != 2 && m != 3);
  kv_scan_set_row_runs(m == 0 || m == 2);
}

static double edge_double(uint64_t *rs) {
  static const double e[] = {0.0, -0.0, 1e308, -1e308, 4.9e-324, -2.2250738585072014e-308,
                             1.0, -1.5, 123456789.125, 9007199254740993.0,
                             9.2233720368547758e18, -9.2233720368547758e18};
  if (tu_below(rs, 3) == 0) return e[tu_below(rs, sizeof e / sizeof e[0])];
  return (double)((int64_t)tu_below(rs, 2000001) - 1000000) / 64.0;
}

static void bind_row(rowan_stmt *u, uint64_t *rs, int k1, int k2) {
  char buf[64];
  rowan_bind_int64(u, 1, k1);
  rowan_bind_int64(u, 2, k2);
  for (int c = 0; c < NCOLS; c++) {
    int p = 3 + c;
    if (tu_below(rs, 6) == 0) {
      rowan_bind_null(u, p);
      continue;
    }
    switch (c) {
      case 0: case 1: case 2: case 3: case 4: rowan_bind_double(u, p, edge_double(rs)); break;
      case 5: rowan_bind_double(u, p, (double)(float)edge_double(rs) / 3.0); break; /* F */
      case 6: rowan_bind_int64(u, p, (int64_t)(tu_rand(rs) >> 33) - (1 << 30)); break; /* I */
      case 7: { /* S: with NUL bytes, sometimes empty */
        int n = (int)tu_below(rs, 20);
        for (int k = 0; k < n; k++) buf[k] = tu_below(rs, 5) == 0 ? 0 : (char)('a' + tu_below(rs, 26));
        rowan_bind_text(u, p, buf, n);
        break;
      }
      case 8: { /* VB */
        int n = (int)tu_below(rs, 12);
        for (int k = 0; k < n; k++) buf[k] = (char)tu_rand(rs);
        rowan_bind_blob(u, p, buf, n);
        break;
      }
      case 9: snprintf(buf, sizeof buf, "c%d", (int)tu_below(rs, 100)); rowan_bind_text(u, p, buf, -1); break;
      case 10: snprintf(buf, sizeof buf, "%s%lld.%02d", tu_below(rs, 2) ? "-" : "",
                        (long long)tu_below(rs, 1000000000), (int)tu_below(rs, 100));
        rowan_bind_text(u, p, buf, -1);
        break; /* DE */
      case 11: snprintf(buf, sizeof buf, "%04d-%02d-%02d", 1900 + (int)tu_below(rs, 200),
                        1 + (int)tu_below(rs, 12), 1 + (int)tu_below(rs, 28));
        rowan_bind_text(u, p, buf, -1);
        break; /* DT */
      case 12: snprintf(buf, sizeof buf, "%02d:%02d:%02d.%03d", (int)tu_below(rs, 24),
                        (int)tu_below(rs, 60), (int)tu_below(rs, 60), (int)tu_below(rs, 1000));
        rowan_bind_text(u, p, buf, -1);
        break; /* TM */
      case 13: rowan_bind_timestamp(u, p, (int64_t)tu_below(rs, 4000000000000ULL) - 1000000000000LL);
        break; /* TS2 */
      case 14: rowan_bind_text(u, p, tu_below(rs, 2) ? "TRUE" : "FALSE", -1); break; /* BO */
      default: { /* BI: the extremes too */
        static const int64_t e[] = {INT64_MIN, INT64_MAX, 0, -1, 1};
        rowan_bind_int64(u, p, tu_below(rs, 3) == 0 ? e[tu_below(rs, 5)] : (int64_t)tu_rand(rs));
        break;
      }
    }
  }
}

static void render(rowan_stmt *st, sbuf *o) {
  int n = rowan_column_count(st);
  rowan_value v[24];
  assert_true(n <= 24);
  assert_int_equal(rowan_column_values(st, 0, n, v), ROWAN_OK);
  for (int i = 0; i < n; i++) {
    int t = rowan_column_type(st, i);
    if (t != v[i].type) fail_msg("column %d: values type %d, getter %d", i, v[i].type, t);
    double d = rowan_column_double(st, i);
    int64_t x = rowan_column_int64(st, i);
    const void *b = rowan_column_blob(st, i);
    int nb = rowan_column_bytes(st, i);
    const char *txt = rowan_column_text(st, i);
    sb_add(o, " %d|%lld|%a|%s|%d:", t, (long long)x, d, signbit(d) ? "-" : "+", nb);
    for (int k = 0; k < nb; k++) sb_add(o, "%02x", ((const uint8_t *)b)[k]);
    sb_add(o, "|%s", txt ? txt : "(null)");
    /* the whole read agrees with the getters (strings' numbers are left to them) */
    if (t == ROWAN_FLOAT && (memcmp(&v[i].d, &d, sizeof d) != 0 || v[i].i != x))
      fail_msg("column %d: values %a/%lld, getters %a/%lld", i, v[i].d, (long long)v[i].i, d,
               (long long)x);
    if ((t == ROWAN_INTEGER || t == ROWAN_TIMESTAMP) &&
        (v[i].i != x || v[i].i != rowan_column_timestamp(st, i) || v[i].d != d))
      fail_msg("column %d: values %lld/%a, getters %lld/%a", i, (long long)v[i].i, v[i].d,
               (long long)x, d);
    if ((t == ROWAN_TEXT || t == ROWAN_BLOB) &&
        (v[i].bytes != nb || (nb && memcmp(v[i].p, b, (size_t)nb) != 0)))
      fail_msg("column %d: values bytes differ from the getters'", i);
  }
  sb_add(o, "\n");
}

static void types_vs_cells(void **state) {
  (void)state;
  uint64_t seed = tu_seed("break_fast_types"), rs = seed;
  kv_env *env = kv_env_mem_new(1700000000000LL);
  rowan_options o;
  rowan_options_init(&o);
  o.kv_env = env;
  o.sync_mode = ROWAN_SYNC_OFF;
  o.max_lookback_seconds = -1; /* major compaction drops at once (no look-back window) */
  rowan_db *db = NULL;
  assert_int_equal(rowan_open("/db", &o, &db), ROWAN_OK);
  int rc = rowan_exec(db,
      "CREATE TABLE T (K1 INTEGER NOT NULL, K2 BIGINT NOT NULL, D1 DOUBLE, D2 DOUBLE, D3 DOUBLE,"
      " D4 DOUBLE, D5 DOUBLE, F FLOAT, I INTEGER, S VARCHAR, VB VARBINARY, CH CHAR(5),"
      " DE DECIMAL(12,2), DT DATE, TM TIME, TS2 TIMESTAMP, BO BOOLEAN, BI BIGINT,"
      " G.S2 VARCHAR, G.TI TINYINT, G.SI SMALLINT, G.B DOUBLE,"
      " CONSTRAINT PK PRIMARY KEY (K1, K2 DESC)) BLOCKSIZE = 1024", NULL, NULL);
  if (rc != ROWAN_OK) fail_msg("create: %s", rowan_errmsg(db));
  rowan_stmt *u = NULL, *ug = NULL;
  assert_int_equal(rowan_prepare(db, "UPSERT INTO T (K1, K2, D1, D2, D3, D4, D5, F, I, S, VB, CH,"
                                     " DE, DT, TM, TS2, BO, BI) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?,"
                                     " ?, ?, ?, ?, ?, ?, ?, ?, ?)", -1, &u, NULL), ROWAN_OK);
  assert_int_equal(rowan_prepare(db, "UPSERT INTO T (K1, K2, S2, TI, SI, B) VALUES (?, ?, ?, ?, ?, ?)",
                                 -1, &ug, NULL), ROWAN_OK);
  int n1 = 6, n2 = (int)tu_scaled(200, 50);
  for (int pass = 0; pass < 2; pass++) {
    assert_int_equal(rowan_exec(db, "BEGIN", NULL, NULL), ROWAN_OK);
    for (int a = 0; a < n1; a++)
      for (int b = 0; b < n2; b++) {
        if (pass == 1 && tu_below(&rs, 5)) continue;
        int k1 = a * 1000 - 2500, k2 = (int)((int64_t)b * 7919 - 100000);
        bind_row(u, &rs, k1, k2);
        rc = rowan_step(u);
        if (rc != ROWAN_DONE) fail_msg("upsert: %d %s", rc, rowan_errmsg(db));
        rowan_reset(u);
        if (tu_below(&rs, 3) == 0) {
          char s2[8];
          snprintf(s2, sizeof s2, "g%d", (int)tu_below(&rs, 1000));
          rowan_bind_int64(ug, 1, k1);
          rowan_bind_int64(ug, 2, k2);
          if (tu_below(&rs, 4)) rowan_bind_text(ug, 3, s2, -1);
          else rowan_bind_null(ug, 3);
          rowan_bind_int64(ug, 4, (int64_t)tu_below(&rs, 256) - 128);
          rowan_bind_int64(ug, 5, (int64_t)tu_below(&rs, 65536) - 32768);
          rowan_bind_double(ug, 6, edge_double(&rs));
          assert_int_equal(rowan_step(ug), ROWAN_DONE);
          rowan_reset(ug);
        }
      }
    assert_int_equal(rowan_exec(db, "COMMIT", NULL, NULL), ROWAN_OK);
    if (pass == 0) assert_int_equal(rowan_compact(db, 1), ROWAN_OK);
  }
  rowan_finalize(u);
  rowan_finalize(ug);
  uint64_t vec0 = kv_scan_vector_rows(), run0 = kv_scan_run_rows();
  int nq = (int)tu_scaled(40, 16);
  for (int q = 0; q < nq; q++) {
    char sql[256];
    int pi = q < NPROJ ? q : (int)tu_below(&rs, NPROJ);
    int a = (int)tu_below(&rs, (uint64_t)n1 + 1);
    long lim = (long)tu_below(&rs, (uint64_t)n2 + 20), off = (long)tu_below(&rs, 5);
    if (tu_below(&rs, 2))
      snprintf(sql, sizeof sql, "SELECT %s FROM T WHERE K1 = %d LIMIT %ld OFFSET %ld", PROJ[pi],
               a * 1000 - 2500, lim, off);
    else
      snprintf(sql, sizeof sql, "SELECT %s FROM T LIMIT %ld", PROJ[pi], lim * 4);
    sbuf out[4];
    memset(out, 0, sizeof out);
    for (int m = 0; m < 4; m++) {
      set_mode(m);
      rowan_stmt *st = NULL;
      if (rowan_prepare(db, sql, -1, &st, NULL) != ROWAN_OK) fail_msg("%s: %s", sql, rowan_errmsg(db));
      while ((rc = rowan_step(st)) == ROWAN_ROW) render(st, &out[m]);
      assert_int_equal(rc, ROWAN_DONE);
      rowan_finalize(st);
    }
    set_mode(0);
    for (int m = 0; m < 3; m++)
      if (out[m].len != out[3].len || (out[3].len && memcmp(out[m].p, out[3].p, out[3].len)))
        fail_msg("seed %llu: %s: mode %d differs from the cell path\n--- %d\n%.1500s\n--- cells\n%.1500s",
                 (unsigned long long)seed, sql, m, m, out[m].p ? out[m].p : "",
                 out[3].p ? out[3].p : "");
    for (int m = 0; m < 4; m++) free(out[m].p);
  }
  /* the paths under test ran: rows came as value vectors and by row runs */
  if (kv_scan_vector_rows() - vec0 < 10 || kv_scan_run_rows() - run0 < 10)
    fail_msg("seed %llu: %llu vector rows, %llu run rows", (unsigned long long)seed,
             (unsigned long long)(kv_scan_vector_rows() - vec0),
             (unsigned long long)(kv_scan_run_rows() - run0));
  assert_int_equal(rowan_close(db), ROWAN_OK);
  kv_env_free(env);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(types_vs_cells),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
