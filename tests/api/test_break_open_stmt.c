/*
** tests/api/test_break_open_stmt.c: a SELECT stepped row by row while other statements on
** the same connection write into the rows ahead of it and behind it, delete them, and the
** store flushes and compacts (major compactions drop what the SELECT's snapshot still
** reads unless the snapshot holds it). The SELECT must return exactly the table as it was
** when it started, and the current row's values (rowan_column_text) must keep their bytes
** until the next step. Scans of the whole table, of a key range, reverse by ORDER BY ...
** DESC on the key, and through an index; a small block cache. The same with bulk loads
** committed between the steps. Seeded (tu_seed).
** Not here: the kv scan under the same changes (tests/kv/test_break_fast_rows.c).
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

#define NK 400
#define OUT_CAP (1u << 20)

static rowan_db *open_mem(kv_env *env) {
  rowan_options o;
  rowan_options_init(&o);
  o.kv_env = env;
  o.sync_mode = ROWAN_SYNC_OFF;
  o.block_cache_size = 32u << 10;
  o.memstore_size = 16u << 10;
  rowan_db *db = NULL;
  assert_int_equal(rowan_open("/db", &o, &db), ROWAN_OK);
  return db;
}

static void row_text(rowan_stmt *st, char *buf, size_t cap) {
  size_t n = 0;
  buf[0] = 0;
  for (int c = 0; c < rowan_column_count(st) && n + 2 < cap; c++) {
    const char *t = rowan_column_text(st, c);
    n += (size_t)snprintf(buf + n, cap - n, "%s%s", c ? "|" : "", t ? t : "NULL");
  }
}

static void dump(rowan_db *db, const char *sql, char *out, size_t cap) {
  rowan_stmt *st;
  assert_int_equal(rowan_prepare(db, sql, -1, &st, NULL), ROWAN_OK);
  size_t n = 0;
  out[0] = 0;
  while (rowan_step(st) == ROWAN_ROW && n + 300 < cap) {
    char buf[256];
    row_text(st, buf, sizeof buf);
    n += (size_t)snprintf(out + n, cap - n, "%s\n", buf);
  }
  rowan_finalize(st);
}

static void disturb(rowan_db *db, uint64_t *rs) {
  char sql[200];
  int k = (int)tu_below(rs, NK);
  switch (tu_below(rs, 10)) {
  case 0: case 1: case 2: case 3:
    snprintf(sql, sizeof sql, "UPSERT INTO T VALUES (%d, 'changed %d', %d)", k,
             (int)tu_below(rs, 1000), (int)tu_below(rs, 5));
    exec_ok(db, sql);
    break;
  case 4:
    snprintf(sql, sizeof sql, "DELETE FROM T WHERE K >= %d AND K < %d", k, k + 2);
    exec_ok(db, sql);
    break;
  case 5: assert_int_equal(rowan_flush(db), ROWAN_OK); break;
  case 6: assert_int_equal(rowan_compact(db, (int)tu_below(rs, 2)), ROWAN_OK); break;
  case 7: {
    char *tmp = malloc(OUT_CAP);
    assert_non_null(tmp);
    dump(db, "SELECT * FROM T WHERE G > 2", tmp, OUT_CAP); /* another scan through the cache */
    free(tmp);
    break;
  }
  default: break;
  }
}

static void select_while_writing(void **state) {
  (void)state;
  uint64_t seed = tu_seed("select_while_writing"), rs = seed;
  kv_env *env = kv_env_mem_new(0);
  rowan_db *db = open_mem(env);
  exec_ok(db, "CREATE TABLE T (K INTEGER NOT NULL PRIMARY KEY, V VARCHAR, F.G INTEGER) "
              "BLOCKSIZE = 512");
  exec_ok(db, "CREATE INDEX TG ON T (G) INCLUDE (V)");
  for (int k = 0; k < NK; k++) {
    char sql[160];
    snprintf(sql, sizeof sql, "UPSERT INTO T VALUES (%d, 'value of %d %.*s', %d)", k, k,
             k % 40, "........................................", k % 5);
    exec_ok(db, sql);
    if (k == NK / 2) assert_int_equal(rowan_flush(db), ROWAN_OK);
  }
  static const char *const qs[] = {
      "SELECT * FROM T",
      "SELECT K, V FROM T WHERE K >= 100 AND K < 300",
      "SELECT K, G FROM T ORDER BY K DESC",
      "SELECT /*+ INDEX(T TG) */ G, V, K FROM T WHERE G = 3",
      "SELECT V FROM T WHERE G > 1",
  };
  char *before = malloc(OUT_CAP), *got = malloc(OUT_CAP);
  assert_non_null(before);
  assert_non_null(got);
  int rounds = (int)tu_scaled(150, 40);
  for (int r = 0; r < rounds; r++) {
    int q = (int)tu_below(&rs, 5);
    dump(db, qs[q], before, OUT_CAP);
    rowan_stmt *st;
    assert_int_equal(rowan_prepare(db, qs[q], -1, &st, NULL), ROWAN_OK);
    size_t n = 0;
    got[0] = 0;
    int rc, row = 0;
    while ((rc = rowan_step(st)) == ROWAN_ROW) {
      char held[256], again[256];
      row_text(st, held, sizeof held);
      if (tu_below(&rs, 3) == 0) disturb(db, &rs);
      row_text(st, again, sizeof again);
      if (strcmp(held, again) != 0)
        fail_msg("seed %llu round %d: %s row %d changed before the next step: '%s' then '%s'",
                 (unsigned long long)seed, r, qs[q], row, held, again);
      n += (size_t)snprintf(got + n, OUT_CAP - n, "%s\n", held);
      row++;
    }
    rowan_finalize(st);
    if (rc != ROWAN_DONE) fail_msg("seed %llu round %d: %s: %s", (unsigned long long)seed, r,
                                   qs[q], rowan_errmsg(db));
    if (strcmp(before, got) != 0) {
      size_t d = 0;
      while (before[d] && before[d] == got[d]) d++;
      while (d > 0 && before[d - 1] != '\n') d--;
      fail_msg("seed %llu round %d: %s, stepped while the table changed, differs from the "
               "table at its start:\nat start: %.200s\nstepped:  %.200s",
               (unsigned long long)seed, r, qs[q], before + d, got + d);
    }
  }
  free(before);
  free(got);
  assert_int_equal(rowan_close(db), ROWAN_OK);
  kv_env_free(env);
}

/* The same with bulk loads (rows ahead of the SELECT and behind it, new and replaced)
** committed between its steps: a load is newer than the SELECT's snapshot. */
static void select_while_loading(void **state) {
  (void)state;
  uint64_t seed = tu_seed("select_while_loading"), rs = seed;
  kv_env *env = kv_env_mem_new(0);
  rowan_db *db = open_mem(env);
  exec_ok(db, "CREATE TABLE U (K INTEGER NOT NULL PRIMARY KEY, V VARCHAR, F.G INTEGER) "
              "BLOCKSIZE = 512");
  for (int k = 0; k < NK; k += 2) {
    char sql[128];
    snprintf(sql, sizeof sql, "UPSERT INTO U VALUES (%d, 'v%d', %d)", k, k, k % 7);
    exec_ok(db, sql);
  }
  assert_int_equal(rowan_flush(db), ROWAN_OK);
  static const char *const qs[] = {"SELECT * FROM U", "SELECT K, G FROM U ORDER BY K DESC",
                                   "SELECT V FROM U WHERE K >= 50 AND K < 250"};
  char *before = malloc(OUT_CAP), *got = malloc(OUT_CAP);
  assert_non_null(before);
  assert_non_null(got);
  int rounds = (int)tu_scaled(30, 10);
  for (int r = 0; r < rounds; r++) {
    int q = (int)tu_below(&rs, 3);
    dump(db, qs[q], before, OUT_CAP);
    rowan_stmt *st;
    assert_int_equal(rowan_prepare(db, qs[q], -1, &st, NULL), ROWAN_OK);
    size_t n = 0;
    got[0] = 0;
    int rc;
    while ((rc = rowan_step(st)) == ROWAN_ROW) {
      char held[256], again[256];
      row_text(st, held, sizeof held);
      if (tu_below(&rs, 20) == 0) {
        static const char *const cols[] = {"K", "V", "G"};
        rowan_bulk *b;
        assert_int_equal(rowan_bulk_begin(db, "U", 3, cols, &b), ROWAN_OK);
        int m = 1 + (int)tu_below(&rs, 60);
        for (int i = 0; i < m; i++) {
          char ks[16], vs[32], gs[16];
          snprintf(ks, sizeof ks, "%d", (int)tu_below(&rs, NK + 20));
          snprintf(vs, sizeof vs, "loaded %d", r);
          snprintf(gs, sizeof gs, "%d", i);
          const char *f[3] = {ks, tu_below(&rs, 4) ? vs : NULL, gs};
          assert_int_equal(rowan_bulk_add_text(b, f, NULL), ROWAN_OK);
        }
        assert_int_equal(rowan_bulk_commit(b), ROWAN_OK);
      } else if (tu_below(&rs, 30) == 0) {
        assert_int_equal(rowan_compact(db, (int)tu_below(&rs, 2)), ROWAN_OK);
      }
      row_text(st, again, sizeof again);
      if (strcmp(held, again) != 0)
        fail_msg("seed %llu round %d: %s: the row changed before the next step: '%s' then '%s'",
                 (unsigned long long)seed, r, qs[q], held, again);
      n += (size_t)snprintf(got + n, OUT_CAP - n, "%s\n", held);
    }
    rowan_finalize(st);
    if (rc != ROWAN_DONE) fail_msg("%s: %s", qs[q], rowan_errmsg(db));
    if (strcmp(before, got) != 0)
      fail_msg("seed %llu round %d: %s, stepped while loads committed, differs from the table "
               "at its start", (unsigned long long)seed, r, qs[q]);
  }
  free(before);
  free(got);
  assert_int_equal(rowan_close(db), ROWAN_OK);
  kv_env_free(env);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(select_while_writing),
      cmocka_unit_test(select_while_loading),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
