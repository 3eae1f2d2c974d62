/*
** tests/api/test_break_values.c: rowan_column_values (include/rowan.h) attacked at its edges
** and through its documented lifetime:
**  - the pointers a whole-row read hands out (strings and blobs that may point into a kv
**    block, the text made for DECIMAL / DATE / TIME) keep their bytes until the next step,
**    reset or finalize of that statement, whatever else the connection does meanwhile:
**    other statements scanning the table through a tiny block cache (evictions), UPSERTs of
**    the very row, flushes, minor and major compactions that remove the store file the
**    row came from, the single getters and a second whole-row read of the same row. Rows
**    come from the fast paths (row runs, value vectors, views) of a compacted table with
**    small blocks; seeded. ASan checks every byte read.
**  - windows: n = 0 with a NULL array with and without a current row, first at the column
**    count, first or n negative, first + n past the end (also with n near INT_MAX: nothing
**    written), a statement without result columns (UPSERT), after DONE, after reset, after
**    a failed step, after finalize of another statement.
** Not here: the values' agreement with the getters over random projections
** (test_column_values.c).
*/
#include <limits.h>
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
#include "tu_api.h"

#define NCOL 10
#define NSTA 3

static rowan_stmt *prep(rowan_db *db, const char *sql) {
  rowan_stmt *st = NULL;
  if (rowan_prepare(db, sql, -1, &st, NULL) != ROWAN_OK)
    fail_msg("prepare %s: %s", sql, rowan_errmsg(db));
  return st;
}

static rowan_db *open_db(kv_env *env, size_t cache) {
  rowan_options o;
  rowan_options_init(&o);
  o.kv_env = env;
  o.sync_mode = ROWAN_SYNC_OFF;
  o.block_cache_size = cache;
  rowan_db *db = NULL;
  assert_int_equal(rowan_open("/db", &o, &db), ROWAN_OK);
  return db;
}

/* Upsert row (s, t) with values drawn from rs (some NULL; long strings). */
static void put_row(rowan_stmt *up, uint64_t *rs, int s, int t) {
  char sname[24], w[80], de[48], dt[48], tm[48], ch[24];
  snprintf(sname, sizeof sname, "station%d", s);
  rowan_bind_text(up, 1, sname, -1);
  rowan_bind_timestamp(up, 2, 1600000000000LL + (int64_t)t * 3600000);
  int nw = (int)tu_below(rs, 70);
  for (int k = 0; k < nw; k++) w[k] = (char)('A' + tu_below(rs, 26));
  snprintf(de, sizeof de, "%lld.%03d", (long long)tu_below(rs, 2000000) - 1000000,
           (int)tu_below(rs, 1000));
  snprintf(dt, sizeof dt, "%04d-%02d-%02d", 1950 + (int)tu_below(rs, 80), 1 + (int)tu_below(rs, 12),
           1 + (int)tu_below(rs, 28));
  snprintf(tm, sizeof tm, "%02d:%02d:%02d", (int)tu_below(rs, 24), (int)tu_below(rs, 60),
           (int)tu_below(rs, 60));
  snprintf(ch, sizeof ch, "c%d", (int)tu_below(rs, 1000));
  uint8_t blob[40];
  int nb = (int)tu_below(rs, 40);
  for (int k = 0; k < nb; k++) blob[k] = (uint8_t)tu_rand(rs);
  for (int c = 3; c <= NCOL; c++) {
    if (tu_below(rs, 7) == 0) {
      rowan_bind_null(up, c);
      continue;
    }
    switch (c) {
      case 3: rowan_bind_double(up, c, (double)tu_below(rs, 100000) / 7.0); break;
      case 4: rowan_bind_text(up, c, w, nw); break;
      case 5: rowan_bind_blob(up, c, blob, nb); break;
      case 6: rowan_bind_text(up, c, de, -1); break;
      case 7: rowan_bind_text(up, c, dt, -1); break;
      case 8: rowan_bind_text(up, c, tm, -1); break;
      case 9: rowan_bind_text(up, c, ch, -1); break;
      default: rowan_bind_int64(up, c, (int64_t)tu_rand(rs)); break;
    }
  }
  int rc = rowan_step(up);
  assert_int_equal(rc, ROWAN_DONE);
  rowan_reset(up);
}

typedef struct kept {
  rowan_value v[NCOL];  /* what the whole-row read gave */
  char *copy[NCOL];     /* copies of the bytes at v[i].p */
} kept;

static void keep(kept *k, rowan_stmt *st) {
  assert_int_equal(rowan_column_values(st, 0, NCOL, k->v), ROWAN_OK);
  for (int i = 0; i < NCOL; i++) {
    k->copy[i] = NULL;
    if (k->v[i].p) {
      k->copy[i] = malloc((size_t)k->v[i].bytes + 1);
      assert_non_null(k->copy[i]);
      memcpy(k->copy[i], k->v[i].p, (size_t)k->v[i].bytes);
    }
  }
}

static void check_kept(kept *k, uint64_t seed, int row, int act) {
  for (int i = 0; i < NCOL; i++) {
    if (!k->v[i].p) continue;
    if (memcmp(k->copy[i], k->v[i].p, (size_t)k->v[i].bytes) != 0)
      fail_msg("seed %llu row %d: column %d's bytes changed after action %d before the next step",
               (unsigned long long)seed, row, i, act);
    free(k->copy[i]);
  }
}

static void lifetime(void **state) {
  (void)state;
  uint64_t seed = tu_seed("break_values_lifetime"), rs = seed;
  int nt = (int)tu_scaled(300, 80);
  for (int round = 0; round < 4; round++) {
    kv_env *env = kv_env_mem_new(1700000000000LL);
    size_t cache = round == 0 ? 1 : round == 1 ? 8192 : round == 2 ? 65536 : 0;
    rowan_db *db = open_db(env, cache);
    exec_ok(db, "CREATE TABLE R (S VARCHAR NOT NULL, TS TIMESTAMP NOT NULL, R.A DOUBLE,"
                " R.W VARCHAR, R.B VARBINARY, M.DE DECIMAL(10,3), M.DT DATE, M.TM TIME,"
                " M.CH CHAR(6), M.X BIGINT, CONSTRAINT PK PRIMARY KEY (S, TS DESC))"
                " R.BLOCKSIZE = 256, M.BLOCKSIZE = 512");
    rowan_stmt *up = prep(db, "UPSERT INTO R VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
    exec_ok(db, "BEGIN");
    for (int s = 0; s < NSTA; s++)
      for (int t = 0; t < nt; t++) put_row(up, &rs, s, t);
    exec_ok(db, "COMMIT");
    assert_int_equal(rowan_compact(db, 1), ROWAN_OK);
    rowan_stmt *q = prep(db, "SELECT * FROM R WHERE S = ? ORDER BY TS DESC LIMIT 1000");
    rowan_stmt *other = prep(db, "SELECT * FROM R");
    rowan_bind_text(q, 1, "station1", -1);
    int row = 0, rc;
    while ((rc = rowan_step(q)) == ROWAN_ROW) {
      kept k;
      keep(&k, q);
      int act = (int)tu_below(&rs, 8);
      switch (act) {
        case 0: { /* another statement reads the whole table: the tiny cache evicts */
          rowan_value ov[NCOL];
          while (rowan_step(other) == ROWAN_ROW)
            assert_int_equal(rowan_column_values(other, 0, NCOL, ov), ROWAN_OK);
          rowan_reset(other);
          break;
        }
        case 1: /* the very row and its neighbours written again */
          for (int t = nt - 1 - row - 2; t <= nt - 1 - row + 2; t++)
            if (t >= 0 && t < nt) put_row(up, &rs, 1, t);
          break;
        case 2: assert_int_equal(rowan_flush(db), ROWAN_OK); break;
        case 3: /* a major compaction drops the file the row came from */
          put_row(up, &rs, 1, (int)tu_below(&rs, (uint64_t)nt));
          assert_int_equal(rowan_compact(db, 1), ROWAN_OK);
          break;
        case 4: assert_int_equal(rowan_compact(db, 0), ROWAN_OK); break;
        case 5: { /* the single getters and a second whole read of the row */
          for (int i = 0; i < NCOL; i++) {
            (void)rowan_column_text(q, i);
            (void)rowan_column_blob(q, i);
            (void)rowan_column_double(q, i);
          }
          rowan_value v2[NCOL];
          assert_int_equal(rowan_column_values(q, 0, NCOL, v2), ROWAN_OK);
          for (int i = 0; i < NCOL; i++) {
            assert_int_equal(v2[i].type, k.v[i].type);
            assert_int_equal(v2[i].bytes, k.v[i].bytes);
            if (v2[i].p) assert_memory_equal(v2[i].p, k.copy[i], (size_t)v2[i].bytes);
          }
          break;
        }
        case 6: { /* a transaction writes and rolls back */
          exec_ok(db, "BEGIN");
          put_row(up, &rs, 1, nt - 1 - row);
          exec_ok(db, "ROLLBACK");
          break;
        }
        default: break;
      }
      check_kept(&k, seed, row, act);
      row++;
    }
    assert_int_equal(rc, ROWAN_DONE);
    assert_true(row >= nt);
    rowan_finalize(q);
    rowan_finalize(other);
    rowan_finalize(up);
    assert_int_equal(rowan_close(db), ROWAN_OK);
    kv_env_free(env);
  }
}

/* A value array of sentinels: nothing written shows as the sentinel left. */
static void sentinel(rowan_value *v, int n) {
  for (int i = 0; i < n; i++) v[i] = (rowan_value){-7, -7, -7, -7.0, (const void *)v};
}
static void assert_untouched(const rowan_value *v, int n) {
  for (int i = 0; i < n; i++) {
    assert_int_equal(v[i].type, -7);
    assert_ptr_equal(v[i].p, (const void *)v);
  }
}

/* rowan_column_values(st, 0, 0, NULL) on a statement without a current row (it called
** memset(NULL, 0, 0), which UBSan aborts on, until 2636af4). */
static void zero_null(rowan_stmt *st) {
  int rc = rowan_column_values(st, 0, 0, NULL);
  assert_true(rc == ROWAN_OK || rc == ROWAN_MISUSE);
}

static void windows(void **state) {
  (void)state;
  kv_env *env = kv_env_mem_new(1700000000000LL);
  rowan_db *db = tu_open_mem(env);
  exec_ok(db, "CREATE TABLE T (K INTEGER NOT NULL PRIMARY KEY, V DOUBLE, S VARCHAR)");
  exec_ok(db, "UPSERT INTO T VALUES (1, 1.5, 'x')");
  exec_ok(db, "UPSERT INTO T VALUES (2, NULL, '')");
  rowan_stmt *q = prep(db, "SELECT K, V, S FROM T");
  rowan_value v[8];
  /* no current row yet: n = 0 with a NULL array is not an error to crash on */
  int rc;
  zero_null(q);
  sentinel(v, 8);
  assert_int_equal(rowan_column_values(q, 0, 3, v), ROWAN_MISUSE);
  for (int i = 0; i < 3; i++) assert_int_equal(v[i].type, ROWAN_NULL);
  assert_int_equal(v[3].type, -7);
  assert_int_equal(rowan_step(q), ROWAN_ROW);
  assert_int_equal(rowan_column_values(q, 0, 0, NULL), ROWAN_OK);
  assert_int_equal(rowan_column_values(q, 3, 0, NULL), ROWAN_OK); /* empty window at the end */
  assert_int_equal(rowan_column_values(q, 3, 0, v), ROWAN_OK);
  static const int bad[][2] = {{4, 0}, {-1, 1}, {0, -1}, {0, 4}, {3, 1}, {1, INT_MAX},
                               {INT_MAX, 1}, {INT_MAX, INT_MAX}, {INT_MIN, 2}, {2, INT_MIN},
                               {-1, 0}};
  for (size_t b = 0; b < sizeof bad / sizeof bad[0]; b++) {
    sentinel(v, 8);
    rc = rowan_column_values(q, bad[b][0], bad[b][1], v);
    if (rc != ROWAN_RANGE) fail_msg("window (%d, %d): %d", bad[b][0], bad[b][1], rc);
    assert_untouched(v, 8);
    assert_non_null(rowan_errmsg(db));
  }
  assert_int_equal(rowan_column_values(q, 0, 1, NULL), ROWAN_MISUSE);
  assert_int_equal(rowan_column_values(NULL, 0, 1, v), ROWAN_MISUSE);
  assert_int_equal(rowan_column_values(q, 1, 2, v), ROWAN_OK);
  assert_int_equal(v[0].type, ROWAN_FLOAT);
  assert_true(v[0].d == 1.5 && v[0].i == 1);
  assert_int_equal(v[1].type, ROWAN_TEXT);
  assert_int_equal(v[1].bytes, 1);
  assert_memory_equal(v[1].p, "x", 1);
  assert_int_equal(rowan_step(q), ROWAN_ROW);
  assert_int_equal(rowan_column_values(q, 1, 2, v), ROWAN_OK);
  assert_int_equal(v[0].type, ROWAN_NULL);
  assert_int_equal(v[1].type, ROWAN_TEXT);
  assert_int_equal(v[1].bytes, 0);
  assert_non_null(v[1].p);
  assert_int_equal(rowan_step(q), ROWAN_DONE);
  zero_null(q);
  sentinel(v, 8);
  assert_int_equal(rowan_column_values(q, 0, 3, v), ROWAN_MISUSE);
  for (int i = 0; i < 3; i++) assert_int_equal(v[i].type, ROWAN_NULL);
  assert_int_equal(rowan_reset(q), ROWAN_OK);
  assert_int_equal(rowan_column_values(q, 0, 3, v), ROWAN_MISUSE);
  /* a statement without result columns */
  rowan_stmt *u = prep(db, "UPSERT INTO T VALUES (3, 3.0, 'z')");
  zero_null(u);
  sentinel(v, 8);
  assert_int_equal(rowan_column_values(u, 0, 1, v), ROWAN_RANGE);
  assert_untouched(v, 8);
  assert_int_equal(rowan_step(u), ROWAN_DONE);
  zero_null(u);
  rowan_finalize(u);
  /* a failed step: NULLs, then MISUSE until a reset */
  rowan_stmt *e = prep(db, "SELECT K, 1 / (K - 2) FROM T");
  assert_int_equal(rowan_step(e), ROWAN_ROW);
  assert_int_equal(rowan_column_values(e, 0, 2, v), ROWAN_OK);
  rc = rowan_step(e);
  if (rc != ROWAN_ROW) {
    sentinel(v, 8);
    assert_int_equal(rowan_column_values(e, 0, 2, v), ROWAN_MISUSE);
    assert_int_equal(v[0].type, ROWAN_NULL);
    assert_int_equal(v[1].type, ROWAN_NULL);
    zero_null(e);
  }
  rowan_finalize(e);
  rowan_finalize(q);
  assert_int_equal(rowan_close(db), ROWAN_OK);
  kv_env_free(env);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(windows),
    cmocka_unit_test(lifetime),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
