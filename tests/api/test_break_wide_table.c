/*
** tests/api/test_break_wide_table.c: tables of more columns than the prepared row decode
** handles (exec_rowcodec_prepare keeps a 64-bit mask: 64 columns), and of exactly 63, 64
** and 65, with sparse NULLs across several families: projections of plain columns in any
** order (decoded straight into the output row where the plan allows it), with the key
** columns among them, WHERE terms on a late column, point lookups and scans, kept and
** rebound, must give each row's own values: checked against the values written (a model),
** in the memstore and after a flush. Seeded (tu_seed; the seed is printed).
** Not here: narrow tables (tests/api/test_break_key_tail.c).
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

#define MAXC 72
#define NR 60

/* The model: value of column c (1..nc-1; column 0 is the key K) in row r, or -1 for NULL. */
static int64_t cell(const int8_t *nul, int r, int c) {
  return nul[r * MAXC + c] ? -1 : (int64_t)r * 1000 + c;
}

static void one_width(int nc, uint64_t *rs, uint64_t seed) {
  kv_env *env = kv_env_mem_new(0);
  rowan_db *db = tu_open_mem(env);
  /* K, then C1..C(nc-1) spread over three families */
  size_t cap = 8192;
  char *ddl = malloc(cap);
  assert_non_null(ddl);
  size_t n = (size_t)snprintf(ddl, cap, "CREATE TABLE W (K INTEGER NOT NULL PRIMARY KEY");
  for (int c = 1; c < nc; c++)
    n += (size_t)snprintf(ddl + n, cap - n, ", %sC%d BIGINT", c % 3 == 0 ? "A." : c % 3 == 1 ? "B." : "", c);
  snprintf(ddl + n, cap - n, ")");
  exec_ok(db, ddl);
  int8_t *nul = calloc(NR * MAXC, 1);
  assert_non_null(nul);
  char *sql = malloc(cap);
  assert_non_null(sql);
  for (int r = 0; r < NR; r++) {
    n = (size_t)snprintf(sql, cap, "UPSERT INTO W VALUES (%d", r);
    for (int c = 1; c < nc; c++) {
      nul[r * MAXC + c] = tu_below(rs, 3) == 0;
      if (nul[r * MAXC + c]) n += (size_t)snprintf(sql + n, cap - n, ", NULL");
      else n += (size_t)snprintf(sql + n, cap - n, ", %lld", (long long)cell(nul, r, c));
    }
    snprintf(sql + n, cap - n, ")");
    exec_ok(db, sql);
    if (r == NR / 2) assert_int_equal(rowan_flush(db), ROWAN_OK);
  }
  for (int q = 0; q < 60; q++) {
    /* a projection of distinct columns in random order, the key maybe among them */
    int cols[8], m = 1 + (int)tu_below(rs, 8);
    for (int i = 0; i < m; i++) {
      int c;
      bool dup;
      do {
        c = tu_below(rs, 3) == 0 ? nc - 1 - (int)tu_below(rs, 4) : (int)tu_below(rs, (uint64_t)nc);
        if (c < 0) c = 0;
        dup = false;
        for (int j = 0; j < i; j++) dup |= cols[j] == c;
      } while (dup);
      cols[i] = c;
    }
    n = (size_t)snprintf(sql, cap, "SELECT ");
    for (int i = 0; i < m; i++) {
      if (cols[i]) n += (size_t)snprintf(sql + n, cap - n, "%sC%d", i ? ", " : "", cols[i]);
      else n += (size_t)snprintf(sql + n, cap - n, "%sK", i ? ", " : "");
    }
    int shape = (int)tu_below(rs, 3), key = (int)tu_below(rs, NR);
    int late = nc - 1;
    if (shape == 0) n += (size_t)snprintf(sql + n, cap - n, " FROM W WHERE K = ?");
    else if (shape == 1) n += (size_t)snprintf(sql + n, cap - n, " FROM W WHERE C%d IS NOT NULL", late);
    else n += (size_t)snprintf(sql + n, cap - n, " FROM W");
    rowan_stmt *st;
    if (rowan_prepare(db, sql, -1, &st, NULL) != ROWAN_OK) fail_msg("%s: %s", sql, rowan_errmsg(db));
    for (int run = 0; run < (shape == 0 ? 3 : 1); run++) {
      if (shape == 0) {
        rowan_reset(st);
        key = (int)tu_below(rs, NR + 2);
        rowan_bind_int64(st, 1, key);
      }
      int rc, rows = 0;
      while ((rc = rowan_step(st)) == ROWAN_ROW) {
        /* the row's key: from the K column if projected, else find a row matching all */
        int r = -1;
        for (int i = 0; i < m; i++)
          if (cols[i] == 0) r = (int)rowan_column_int64(st, i);
        if (shape == 0) r = key;
        bool ok = false;
        for (int cand = (r >= 0 ? r : 0); cand < (r >= 0 ? r + 1 : NR) && !ok; cand++) {
          bool all = true;
          for (int i = 0; i < m && all; i++) {
            int64_t want = cols[i] == 0 ? cand : cell(nul, cand, cols[i]);
            bool isnull = rowan_column_type(st, i) == ROWAN_NULL;
            all = want < 0 ? isnull : (!isnull && rowan_column_int64(st, i) == want);
          }
          ok = all;
        }
        if (!ok) {
          char got[300] = "";
          for (int i = 0; i < m; i++) {
            size_t gl = strlen(got);
            const char *t = rowan_column_text(st, i);
            snprintf(got + gl, sizeof got - gl, "%s%s", i ? "," : "", t ? t : "NULL");
          }
          fail_msg("seed %llu, %d columns: %s (key %d): row %d (%s) is no row written",
                   (unsigned long long)seed, nc, sql, key, rows, got);
        }
        rows++;
      }
      if (rc != ROWAN_DONE) fail_msg("%s: %s", sql, rowan_errmsg(db));
      if (shape == 2 && rows != NR) fail_msg("%s: %d rows of %d", sql, rows, NR);
    }
    rowan_finalize(st);
  }
  free(sql);
  free(ddl);
  free(nul);
  assert_int_equal(rowan_close(db), ROWAN_OK);
  kv_env_free(env);
}

static void wide_tables(void **state) {
  (void)state;
  uint64_t seed = tu_seed("wide_tables"), rs = seed;
  static const int widths[] = {8, 63, 64, 65, 66, 72};
  for (int i = 0; i < 6; i++) one_width(widths[i], &rs, seed);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(wide_tables),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
