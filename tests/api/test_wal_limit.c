/*
** tests/api/test_wal_limit.c: rowan_options.wal_limit reaches the store. A SQL table gets
** one UPSERT per commit, and with a memstore_size no family fills (not even the busiest,
** let alone the table's hidden key family) every family pins the write-ahead log. With
** wal_limit at 64 KiB the
** wal-*.log files on the in-memory env stay within 64 KiB + 16 KiB after every commit and
** every row is there after a power cut and reopen; with the default limit (128 MiB) the same
** inserts leave far more log behind. Not here: the bound's mechanics (tests/kv/
** test_wal_bound.c).
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "kv/env/env.h"
#include "kv/env/env_mem.h"
#include "rowan.h"
#include "testutil.h"
#include "tu_api.h"

#define LIMIT ((size_t)64 << 10)

static rowan_db *open_db(kv_env *env, size_t wal_limit) {
  rowan_options o;
  rowan_options_init(&o);
  o.kv_env = env;
  o.sync_mode = ROWAN_SYNC_FULL;
  o.memstore_size = 4u << 20; /* no memstore fills: only the bound flushes */
  o.wal_limit = wal_limit;
  rowan_db *db = NULL;
  assert_int_equal(rowan_open("/db", &o, &db), ROWAN_OK);
  return db;
}

typedef struct wal_bytes {
  kv_env *env;
  uint64_t bytes;
} wal_bytes;

static int add_wal(void *ctx, const char *name) {
  wal_bytes *w = ctx;
  if (strncmp(name, "wal-", 4) != 0) return 0;
  char p[64];
  snprintf(p, sizeof p, "/db/%s", name);
  int64_t sz = kv_env_mem_file_size(w->env, p);
  if (sz > 0) w->bytes += (uint64_t)sz;
  return 0;
}

/* Bytes in the wal-*.log files of /db. */
static uint64_t wal_on_disk(kv_env *env) {
  wal_bytes w = {env, 0};
  assert_int_equal(env->list(env, "/db", add_wal, &w), KV_OK);
  return w.bytes;
}

/* n single-row commits; returns the most log bytes seen after one. */
static uint64_t insert_rows(rowan_db *db, kv_env *env, int n) {
  rowan_stmt *st;
  assert_int_equal(rowan_prepare(db, "UPSERT INTO T (ID, A, B) VALUES (?, ?, ?)", -1, &st, NULL),
                   ROWAN_OK);
  uint64_t most = 0;
  for (int i = 0; i < n; i++) {
    char a[80];
    snprintf(a, sizeof a, "row-%d-aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", i);
    assert_int_equal(rowan_bind_int64(st, 1, i), ROWAN_OK);
    assert_int_equal(rowan_bind_text(st, 2, a, -1), ROWAN_OK);
    assert_int_equal(rowan_bind_int64(st, 3, i * 7), ROWAN_OK);
    assert_int_equal(rowan_step(st), ROWAN_DONE);
    assert_int_equal(rowan_reset(st), ROWAN_OK);
    uint64_t w = wal_on_disk(env);
    if (w > most) most = w;
  }
  assert_int_equal(rowan_finalize(st), ROWAN_OK);
  return most;
}

static int64_t count_rows(rowan_db *db) {
  rowan_stmt *st;
  assert_int_equal(rowan_prepare(db, "SELECT COUNT(*), SUM(B) FROM T", -1, &st, NULL), ROWAN_OK);
  assert_int_equal(rowan_step(st), ROWAN_ROW);
  int64_t n = rowan_column_int64(st, 0);
  int64_t sum = rowan_column_int64(st, 1);
  assert_int_equal(rowan_finalize(st), ROWAN_OK);
  assert_int_equal(sum, 7 * (n - 1) * n / 2); /* the rows 0..n-1, each whole */
  return n;
}

static const char *SCHEMA = "CREATE TABLE T (ID BIGINT NOT NULL PRIMARY KEY, A VARCHAR, B BIGINT)";

static void test_limit_applies(void **state) {
  (void)state;
  int n = (int)tu_scaled(3000, 1500);
  kv_env *env = kv_env_mem_new(1000);
  rowan_db *db = open_db(env, LIMIT);
  exec_ok(db, SCHEMA);
  uint64_t most = insert_rows(db, env, n);
  assert_true(most <= LIMIT + LIMIT / 4);
  assert_true(most > LIMIT / 2); /* the inserts did reach the bound */
  kv_env_mem_set_crashed(env, true);
  rowan_close(db);
  kv_env_mem_power_cut(env);
  db = open_db(env, LIMIT);
  assert_int_equal(count_rows(db), n);
  assert_int_equal(rowan_close(db), ROWAN_OK);
  kv_env_free(env);
}

static void test_default_keeps_more(void **state) {
  (void)state;
  int n = (int)tu_scaled(3000, 1500);
  kv_env *env = kv_env_mem_new(1000);
  rowan_db *db = open_db(env, 0);
  exec_ok(db, SCHEMA);
  uint64_t most = insert_rows(db, env, n);
  assert_true(most > 2 * (LIMIT + LIMIT / 4));
  assert_int_equal(count_rows(db), n);
  assert_int_equal(rowan_close(db), ROWAN_OK);
  kv_env_free(env);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_limit_applies),
      cmocka_unit_test(test_default_keeps_more),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
