/*
** tests/exec/test_break_fast_wide.c: the fast range-scan paths (row runs, value vectors,
** exec's dense runs, rowan_column_values) on a family of 140 columns: more qualifiers than
** a value vector's 64-bit present mask, column ids from 128 on written as two-byte
** qualifiers, DOUBLEs with a VARCHAR every 16th column, sparse NULLs; a second family of 63
** columns (just under the mask). Rows are compacted into one file a family (small and
** default blocks), some rewritten into the memstore; projections of every column, of the
** columns around id 128, of the last ones, reordered, with the key. Every answer is
** checked against the values written (a model), in each kv mode (kv/sf/sf_rows.h). Seeded.
** Not here: the row decode's 64-column mask on narrow scans (tests/api/test_break_wide_table.c).
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
#include "kv/sf/sf_rows.h"
#include "rowan.h"
#include "testutil.h"

#define NA 140 /* columns of family A: C1..C140 */
#define NB 63  /* columns of family B: D1..D63 */
#define NC (NA + NB)

static bool is_text(int c) { return c < NA && c % 16 == 15; }

static void set_mode(int m) {
  kv_scan_set_fast_rows(m != 3);
  kv_scan_set_value_vectors(m != 2 && m != 3);
  kv_scan_set_row_runs(m == 0 || m == 2);
}

static const char *col_name(int c, char *buf, size_t cap) {
  if (c < NA) snprintf(buf, cap, "C%d", c + 1);
  else snprintf(buf, cap, "D%d", c - NA + 1);
  return buf;
}

/* The value written at row k, column c, version g (0 NULL): a pure function. */
static int64_t val(uint64_t seed, int k, int c, int g) {
  uint64_t st = seed ^ ((uint64_t)k * 1000003u) ^ ((uint64_t)c << 40) ^ ((uint64_t)g << 56);
  uint64_t r = tu_rand(&st);
  if (r % 5 == 0) return 0;
  return (int64_t)(r >> 40) + 1;
}

static void wide(uint64_t seed, int blocksize) {
  kv_env *env = kv_env_mem_new(1700000000000LL);
  rowan_options o;
  rowan_options_init(&o);
  o.kv_env = env;
  o.sync_mode = ROWAN_SYNC_OFF;
  rowan_db *db = NULL;
  assert_int_equal(rowan_open("/db", &o, &db), ROWAN_OK);
  size_t cap = 16384;
  char *sql = malloc(cap), name[16];
  assert_non_null(sql);
  size_t n = (size_t)snprintf(sql, cap, "CREATE TABLE W (K INTEGER NOT NULL PRIMARY KEY");
  for (int c = 0; c < NC; c++)
    n += (size_t)snprintf(sql + n, cap - n, ", %s%s %s", c < NA ? "A." : "B.",
                          col_name(c, name, sizeof name), is_text(c) ? "VARCHAR" : "DOUBLE");
  snprintf(sql + n, cap - n, ") A.BLOCKSIZE = %d, B.BLOCKSIZE = %d", blocksize, blocksize);
  int rc = rowan_exec(db, sql, NULL, NULL);
  if (rc != ROWAN_OK) fail_msg("create: %s", rowan_errmsg(db));
  n = (size_t)snprintf(sql, cap, "UPSERT INTO W VALUES (?");
  for (int c = 0; c < NC; c++) n += (size_t)snprintf(sql + n, cap - n, ", ?");
  snprintf(sql + n, cap - n, ")");
  rowan_stmt *up = NULL;
  assert_int_equal(rowan_prepare(db, sql, -1, &up, NULL), ROWAN_OK);
  int nk = (int)tu_scaled(160, 50);
  int *gen = calloc((size_t)nk, sizeof *gen);
  assert_non_null(gen);
  uint64_t rs = seed;
  for (int pass = 0; pass < 2; pass++) {
    assert_int_equal(rowan_exec(db, "BEGIN", NULL, NULL), ROWAN_OK);
    for (int k = 0; k < nk; k++) {
      if (pass && tu_below(&rs, 4)) continue;
      gen[k] = pass;
      rowan_bind_int64(up, 1, k);
      for (int c = 0; c < NC; c++) {
        int64_t v = val(seed, k, c, pass);
        if (!v) {
          rowan_bind_null(up, c + 2);
        } else if (is_text(c)) {
          char t[32];
          snprintf(t, sizeof t, "t%lld", (long long)v);
          rowan_bind_text(up, c + 2, t, -1);
        } else {
          rowan_bind_double(up, c + 2, (double)v / 4.0);
        }
      }
      rc = rowan_step(up);
      if (rc != ROWAN_DONE) fail_msg("upsert: %s", rowan_errmsg(db));
      rowan_reset(up);
    }
    assert_int_equal(rowan_exec(db, "COMMIT", NULL, NULL), ROWAN_OK);
    if (pass == 0) assert_int_equal(rowan_compact(db, 1), ROWAN_OK);
  }
  rowan_finalize(up);
  /* projections: every column; around id 128; the last ones reordered with the key; B */
  int proj[6][NC + 1], np[6];
  np[0] = NC;
  for (int c = 0; c < NC; c++) proj[0][c] = c;
  np[1] = 0;
  for (int c = 120; c < 136; c++) proj[1][np[1]++] = c;
  np[2] = 0;
  for (int c = NA - 1; c >= NA - 12; c--) proj[2][np[2]++] = c;
  proj[2][np[2]++] = -1; /* K */
  proj[2][np[2]++] = 0;
  np[3] = 0;
  for (int c = NA; c < NC; c++) proj[3][np[3]++] = c;
  np[4] = 0;
  for (int c = 0; c < NC; c += 7) proj[4][np[4]++] = c;
  np[5] = 3;
  proj[5][0] = 127;
  proj[5][1] = -1;
  proj[5][2] = 128;
  int nq = (int)tu_scaled(24, 12);
  for (int q = 0; q < nq; q++) {
    int p = q % 6, m = (q / 6) % 4;
    set_mode(m);
    n = (size_t)snprintf(sql, cap, "SELECT ");
    for (int i = 0; i < np[p]; i++)
      n += (size_t)snprintf(sql + n, cap - n, "%s%s", i ? ", " : "",
                            proj[p][i] < 0 ? "K" : col_name(proj[p][i], name, sizeof name));
    int k0 = (int)tu_below(&rs, (uint64_t)nk);
    int lim = 1 + (int)tu_below(&rs, (uint64_t)nk);
    snprintf(sql + n, cap - n, " FROM W WHERE K >= %d LIMIT %d", k0, lim);
    rowan_stmt *st = NULL;
    if (rowan_prepare(db, sql, -1, &st, NULL) != ROWAN_OK) fail_msg("%s: %s", sql, rowan_errmsg(db));
    rowan_value *v = calloc((size_t)np[p], sizeof *v);
    assert_non_null(v);
    int k = k0;
    while ((rc = rowan_step(st)) == ROWAN_ROW) {
      bool whole = (k + q) % 2 == 0;
      if (whole) assert_int_equal(rowan_column_values(st, 0, np[p], v), ROWAN_OK);
      for (int i = 0; i < np[p]; i++) {
        int c = proj[p][i];
        int type = whole ? v[i].type : rowan_column_type(st, i);
        if (c < 0) {
          int64_t got = whole ? v[i].i : rowan_column_int64(st, i);
          if (got != k) fail_msg("seed %llu, %s: K %lld, want %d (mode %d)", (unsigned long long)seed,
                                 sql, (long long)got, k, m);
          continue;
        }
        int64_t want = val(seed, k, c, gen[k]);
        if (!want) {
          if (type != ROWAN_NULL)
            fail_msg("seed %llu mode %d, %s: row %d column %s: %d, want NULL", (unsigned long long)seed,
                     m, sql, k, col_name(c, name, sizeof name), type);
          continue;
        }
        if (is_text(c)) {
          char t[32];
          int tl = snprintf(t, sizeof t, "t%lld", (long long)want);
          int nb = whole ? v[i].bytes : rowan_column_bytes(st, i);
          const void *b = whole ? v[i].p : rowan_column_blob(st, i);
          if (type != ROWAN_TEXT || nb != tl || memcmp(b, t, (size_t)tl) != 0)
            fail_msg("seed %llu mode %d, %s: row %d column %s: text wrong", (unsigned long long)seed, m,
                     sql, k, col_name(c, name, sizeof name));
        } else {
          double d = whole ? v[i].d : rowan_column_double(st, i);
          if (type != ROWAN_FLOAT || d != (double)want / 4.0)
            fail_msg("seed %llu mode %d, %s: row %d column %s: %d %.17g, want %.17g",
                     (unsigned long long)seed, m, sql, k, col_name(c, name, sizeof name), type, d,
                     (double)want / 4.0);
        }
      }
      k++;
    }
    assert_int_equal(rc, ROWAN_DONE);
    assert_int_equal(k - k0, lim < nk - k0 ? lim : nk - k0);
    free(v);
    rowan_finalize(st);
  }
  set_mode(0);
  free(gen);
  free(sql);
  assert_int_equal(rowan_close(db), ROWAN_OK);
  kv_env_free(env);
}

static void wide_small_blocks(void **state) {
  (void)state;
  wide(tu_seed("break_fast_wide_small"), 512);
}

static void wide_default_blocks(void **state) {
  (void)state;
  wide(tu_seed("break_fast_wide"), 65536);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(wide_small_blocks),
    cmocka_unit_test(wide_default_blocks),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
