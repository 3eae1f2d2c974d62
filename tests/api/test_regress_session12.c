/*
** tests/api/test_regress_session12.c: ways to break the row cover (docs/FORMAT_SQL.md "Row
** cover") that need the API: the in-memory env's clock (a TTL set by ALTER TABLE after
** writes that kept a family's cover because the row already had a cell there). Each answer
** is checked against the same query made to read the key family (a count of the rows the
** test knows are alive).
** Not here: the SQL-level cases (tests/sql/regress_session12.test).
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "kv/env_mem.h"
#include "rowan.h"
#include "testutil.h"
#include "tu_api.h"

#define NOW0 1700000000000LL

static int64_t one_int(rowan_db *db, const char *sql) {
  rowan_stmt *st;
  if (rowan_prepare(db, sql, -1, &st, NULL) != ROWAN_OK) fail_msg("%s: %s", sql, rowan_errmsg(db));
  int64_t v = -1;
  if (rowan_step(st) == ROWAN_ROW) v = rowan_column_int64(st, 0);
  rowan_finalize(st);
  return v;
}

/* A row written whole at t0 and updated in family G only at t0 + 50 s keeps family 0's cover
** (its cell of A is there). A TTL of 100 s set afterwards expires A's cell at t0 + 100 s
** while the row lives on (its marker is 50 s younger): a scan of family 0 alone would miss
** it. */
static void ttl_set_after_kept_cover(void **state) {
  (void)state;
  kv_env *env = kv_env_mem_new(NOW0);
  rowan_db *db = tu_open_mem(env);
  exec_ok(db, "CREATE TABLE T (K INTEGER NOT NULL PRIMARY KEY, A INTEGER, G.X INTEGER)");
  exec_ok(db, "UPSERT INTO T VALUES (1, 1, 1), (2, 2, 2)");
  kv_env_mem_set_time(env, NOW0 + 50000);
  exec_ok(db, "UPSERT INTO T (K, X) VALUES (1, 10)");
  exec_ok(db, "ALTER TABLE T SET TTL = 100");
  kv_env_mem_set_time(env, NOW0 + 120000);
  /* row 1 lives (marker and X at t0 + 50 s), its A has expired; row 2 is gone */
  assert_int_equal(one_int(db, "SELECT COUNT(*) FROM T"), 1);
  assert_int_equal(one_int(db, "SELECT COUNT(*) FROM (SELECT K, A FROM T)"), 1);
  assert_int_equal(one_int(db, "SELECT COUNT(*) FROM (SELECT /*+ NO_PUSHDOWN */ K, A FROM T)"), 1);
  assert_int_equal(one_int(db, "SELECT COUNT(*) FROM T GROUP BY A"), 1);
  assert_int_equal(rowan_close(db), ROWAN_OK);
  db = tu_open_mem(env); /* the table record says so too */
  assert_int_equal(one_int(db, "SELECT COUNT(*) FROM (SELECT K, A FROM T)"), 1);
  assert_int_equal(rowan_close(db), ROWAN_OK);
  kv_env_free(env);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(ttl_set_after_kept_cover),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
