/*
** tests/api/test_columns_rows.c: the column getters of include/rowan.h over many rows of a
** prepared statement run again and again (the row array behind rowan_column_* read
** without a call per value, blobs of VARBINARY and strings handed out without a copy, plan
** reuse across rebinds), on the in-memory file system. Each row read through a kept
** statement must equal the same key read through a freshly prepared one: type, integer,
** double, text, blob bytes (embedded NUL bytes included) and byte count; an empty blob is
** not NULL, a NULL one is; after DONE every getter reads NULL.
** Not here: the conversions themselves (tests/api/test_api.c).
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "api/api_test.h"
#include "kv/env/env_mem.h"
#include "rowan.h"
#include "testutil.h"
#include "tu_api.h"

#define N_KEYS 40
#define N_COLS 6

static rowan_db *open_db(kv_env *env) {
  rowan_options o;
  rowan_options_init(&o);
  o.kv_env = env;
  o.create_if_missing = 1;
  o.sync_mode = ROWAN_SYNC_OFF;
  rowan_db *db = NULL;
  assert_int_equal(rowan_open("/db", &o, &db), ROWAN_OK);
  return db;
}

/* Everything the getters say of one row, as text (bytes in hex). */
static void describe(rowan_stmt *st, char *out, size_t cap) {
  size_t o = 0;
  for (int i = 0; i < N_COLS && o < cap; i++) {
    int type = rowan_column_type(st, i);
    long long iv = (long long)rowan_column_int64(st, i);
    double dv = rowan_column_double(st, i);
    const unsigned char *b = rowan_column_blob(st, i);
    int nb = rowan_column_bytes(st, i);
    o += (size_t)snprintf(out + o, cap - o, "[%d %lld %.17g %s %d ", type, iv, dv,
                          b ? "b" : "null", nb);
    for (int k = 0; b && k < nb && o + 3 < cap; k++) o += (size_t)snprintf(out + o, cap - o, "%02x", b[k]);
    const char *t = rowan_column_text(st, i);
    o += (size_t)snprintf(out + o, cap - o, " %s]", t ? t : "(null)");
  }
}

static void kept_rows_equal_fresh(void **state) {
  (void)state;
  uint64_t seed = tu_seed("kept_rows_equal_fresh"), rs = seed;
  kv_env *env = kv_env_mem_new(1500000000000LL);
  rowan_db *db = open_db(env);
  exec_ok(db, "CREATE TABLE T (K INTEGER NOT NULL, S VARCHAR NOT NULL, B VARBINARY, "
              "D DOUBLE, TS TIMESTAMP, C CHAR(3), CONSTRAINT PK PRIMARY KEY (K DESC, S))");
  rowan_stmt *up;
  assert_int_equal(rowan_prepare(db, "UPSERT INTO T VALUES (?, ?, ?, ?, ?, ?)", -1, &up, NULL),
                   ROWAN_OK);
  for (int k = 0; k < N_KEYS; k++)
    for (int j = 0; j < 3; j++) {
      char s[8], blob[6];
      snprintf(s, sizeof s, "s%d", j);
      int nb = (int)tu_below(&rs, 6);
      for (int x = 0; x < nb; x++) blob[x] = (char)tu_below(&rs, 3); /* NUL bytes too */
      rowan_bind_int64(up, 1, k);
      rowan_bind_text(up, 2, s, -1);
      if (tu_below(&rs, 5) == 0) rowan_bind_null(up, 3);
      else rowan_bind_blob(up, 3, blob, nb);
      if (tu_below(&rs, 5) == 0) rowan_bind_null(up, 4);
      else rowan_bind_double(up, 4, (double)tu_below(&rs, 1000) / 8.0 - 20.0);
      rowan_bind_timestamp(up, 5, 1400000000000LL + (int64_t)tu_below(&rs, 1000000) * 1000);
      rowan_bind_text(up, 6, j ? "ab" : "", -1);
      assert_int_equal(rowan_step(up), ROWAN_DONE);
      rowan_reset(up);
    }
  rowan_finalize(up);
  assert_int_equal(api_test_flush(db), ROWAN_OK);
  exec_ok(db, "UPSERT INTO T (K, S, D) VALUES (3, 's1', 2.5)"); /* a memstore version */
  const char *sql = "SELECT K, S, B, D, TS, C FROM T WHERE K = ? ORDER BY S";
  rowan_stmt *kept;
  assert_int_equal(rowan_prepare(db, sql, -1, &kept, NULL), ROWAN_OK);
  int rounds = (int)tu_scaled(300, 60);
  char a[4096], b[4096];
  for (int r = 0; r < rounds; r++) {
    int k = (int)tu_below(&rs, N_KEYS + 2);
    rowan_stmt *fresh;
    assert_int_equal(rowan_prepare(db, sql, -1, &fresh, NULL), ROWAN_OK);
    rowan_bind_int64(kept, 1, k);
    rowan_bind_int64(fresh, 1, k);
    int n = 0, rk, rf;
    for (;;) {
      rk = rowan_step(kept);
      rf = rowan_step(fresh);
      assert_int_equal(rk, rf);
      if (rk != ROWAN_ROW) break;
      describe(kept, a, sizeof a);
      describe(fresh, b, sizeof b);
      if (strcmp(a, b) != 0)
        fail_msg("seed %llu key %d row %d:\n kept  %s\n fresh %s", (unsigned long long)seed, k,
                 n, a, b);
      /* a blob of bytes is the same bytes as the text, without the copy */
      const void *bl = rowan_column_blob(kept, 2);
      if (bl) assert_memory_equal(bl, rowan_column_text(kept, 2), (size_t)rowan_column_bytes(kept, 2));
      n++;
    }
    assert_int_equal(rk, ROWAN_DONE);
    assert_int_equal(n, k < N_KEYS ? 3 : 0);
    /* after DONE every getter reads NULL */
    assert_int_equal(rowan_column_type(kept, 0), ROWAN_NULL);
    assert_null(rowan_column_blob(kept, 2));
    assert_int_equal(rowan_column_bytes(kept, 2), 0);
    rowan_finalize(fresh);
    rowan_reset(kept);
  }
  rowan_finalize(kept);
  assert_int_equal(rowan_close(db), ROWAN_OK);
  kv_env_free(env);
}

/* An empty VARBINARY or VARCHAR value has a non-NULL blob of 0 bytes; NULL has none. */
static void empty_and_null_blobs(void **state) {
  (void)state;
  kv_env *env = kv_env_mem_new(1500000000000LL);
  rowan_db *db = open_db(env);
  exec_ok(db, "CREATE TABLE E (K INTEGER PRIMARY KEY, B VARBINARY, V VARCHAR)");
  rowan_stmt *st;
  assert_int_equal(rowan_prepare(db, "UPSERT INTO E VALUES (?, ?, ?)", -1, &st, NULL), ROWAN_OK);
  for (int k = 1; k <= 3; k++) {
    rowan_bind_int64(st, 1, k);
    if (k == 2) {
      rowan_bind_null(st, 2);
      rowan_bind_null(st, 3);
    } else {
      rowan_bind_blob(st, 2, "\x00\xff\x00", k == 1 ? 0 : 3);
      rowan_bind_text(st, 3, k == 1 ? "" : "a", -1);
    }
    assert_int_equal(rowan_step(st), ROWAN_DONE);
    rowan_reset(st);
  }
  rowan_finalize(st);
  assert_int_equal(rowan_prepare(db, "SELECT B, V FROM E ORDER BY K", -1, &st, NULL), ROWAN_OK);
  assert_int_equal(rowan_step(st), ROWAN_ROW);
  assert_non_null(rowan_column_blob(st, 0));
  assert_int_equal(rowan_column_bytes(st, 0), 0);
  assert_non_null(rowan_column_blob(st, 1));
  assert_int_equal(rowan_column_bytes(st, 1), 0);
  assert_string_equal(rowan_column_text(st, 1), "");
  assert_int_equal(rowan_step(st), ROWAN_ROW);
  assert_null(rowan_column_blob(st, 0));
  assert_null(rowan_column_blob(st, 1));
  assert_int_equal(rowan_column_type(st, 0), ROWAN_NULL);
  assert_int_equal(rowan_step(st), ROWAN_ROW);
  assert_int_equal(rowan_column_bytes(st, 0), 3);
  assert_memory_equal(rowan_column_blob(st, 0), "\x00\xff\x00", 3);
  assert_int_equal(rowan_column_type(st, 0), ROWAN_BLOB);
  assert_int_equal(rowan_step(st), ROWAN_DONE);
  rowan_finalize(st);
  assert_int_equal(rowan_close(db), ROWAN_OK);
  kv_env_free(env);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(kept_rows_equal_fresh),
      cmocka_unit_test(empty_and_null_blobs),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
