/*
** tests/exec/test_rowatomic_ddl.c: DDL and writes through the row-atomic test backend
** (kv/backend/backend_rowatomic.h) with a failure injected between the rows of each of their batches.
**
** Checked: CREATE TABLE, CREATE INDEX and DROP TABLE cut after every row of their catalog
** batches (and of CREATE INDEX's backfill) leave a store that opens again, with the table or
** index either there and whole (CHECK INDEX clean, the rows all readable) or absent and
** creatable again; a multi-row UPSERT cut after k rows leaves exactly its first k rows (each
** row its own commit, as on HBase), and the statement reports the failure; ROWAN_BACKEND
** choosing the session's backend (an unknown name refused, naming it).
*/
#include "test_rowatomic_util.h"

#define T0_ENV 1500000000000LL /* the mem env's clock (ms) */

static void test_create_table_cut(void **state) {
  (void)state;
  for (uint64_t k = 0; k < 4; k++) {
    kv_backend *rw;
    tdb *t = open_rw(&rw);
    kv_backend_rowatomic_fail_after(rw, k);
    int rc = tdb_run(t, "CREATE TABLE t (k INTEGER NOT NULL PRIMARY KEY, v VARCHAR)");
    rw = reopen(t, rw);
    if (rc != EXEC_DONE) { /* cut: no table; it can be created now */
      assert_int_equal(tdb_run(t, "SELECT * FROM t"), EXEC_ERROR);
      q(t, "CREATE TABLE t (k INTEGER NOT NULL PRIMARY KEY, v VARCHAR)");
    }
    q(t, "UPSERT INTO t VALUES (1, 'a'), (2, 'b')");
    assert_string_equal(q(t, "SELECT k, v FROM t ORDER BY k"), "1|a\n2|b\n");
    finish(t, rw);
  }
}

static void test_create_index_cut(void **state) {
  (void)state;
  int built = 0, cut = 0;
  for (uint64_t k = 0; k < 40; k += 3) {
    kv_backend *rw;
    tdb *t = open_rw(&rw);
    q(t, "CREATE TABLE t (k INTEGER NOT NULL PRIMARY KEY, v VARCHAR)");
    q(t, "UPSERT INTO t SELECT x, 'v' || CAST(x % 7 AS VARCHAR) FROM "
         "(SELECT 1 AS x UNION ALL SELECT 2 UNION ALL SELECT 3 UNION ALL SELECT 4 "
         "UNION ALL SELECT 5 UNION ALL SELECT 6 UNION ALL SELECT 7 UNION ALL SELECT 8) s");
    kv_backend_rowatomic_fail_after(rw, k);
    int rc = tdb_run(t, "CREATE INDEX iv ON t (v)");
    rw = reopen(t, rw);
    if (rc == EXEC_DONE) built++;
    else cut++;
    if (tdb_run(t, "CHECK INDEX iv ON t") == EXEC_DONE) { /* there: whole */
      const char *out = q(t, "CHECK INDEX iv ON t");
      if (!strstr(out, "MISSING|0") || !strstr(out, "EXTRA|0"))
        fail_msg("cut after %llu rows: CHECK INDEX\n%s", (unsigned long long)k, out);
    } else {
      q(t, "CREATE INDEX iv ON t (v)");
    }
    assert_string_equal(q(t, "SELECT k FROM t WHERE v = 'v3' ORDER BY k"), "3\n");
    assert_string_equal(q(t, "SELECT COUNT(*) FROM t"), "8\n");
    finish(t, rw);
  }
  assert_true(built > 0 && cut > 0);
}

static void test_drop_table_cut(void **state) {
  (void)state;
  for (uint64_t k = 0; k < 4; k++) {
    kv_backend *rw;
    tdb *t = open_rw(&rw);
    q(t, "CREATE TABLE t (k INTEGER NOT NULL PRIMARY KEY, v VARCHAR)");
    q(t, "CREATE INDEX iv ON t (v)");
    q(t, "CREATE INDEX iw ON t (v, k)");
    q(t, "UPSERT INTO t VALUES (1, 'a')");
    kv_backend_rowatomic_fail_after(rw, k);
    int rc = tdb_run(t, "DROP TABLE t");
    rw = reopen(t, rw);
    if (rc == EXEC_DONE || tdb_run(t, "SELECT k, v FROM t") != EXEC_DONE) {
      q(t, "CREATE TABLE t (k INTEGER NOT NULL PRIMARY KEY, v VARCHAR)");
      assert_string_equal(q(t, "SELECT COUNT(*) FROM t"), "0\n");
    } else { /* still there: its rows readable through what indexes it kept */
      assert_string_equal(q(t, "SELECT k, v FROM t"), "1|a\n");
      assert_string_equal(q(t, "SELECT k FROM t WHERE v = 'a'"), "1\n");
    }
    finish(t, rw);
  }
}

static void test_upsert_cut(void **state) {
  (void)state;
  for (uint64_t k = 0; k <= 5; k++) {
    kv_backend *rw;
    tdb *t = open_rw(&rw);
    q(t, "CREATE TABLE t (k INTEGER NOT NULL PRIMARY KEY, v VARCHAR)");
    kv_backend_rowatomic_fail_after(rw, k);
    int rc = tdb_run(t, "UPSERT INTO t VALUES (1, 'a'), (2, 'b'), (3, 'c'), (4, 'd'), (5, 'e')");
    assert_int_equal(rc == EXEC_DONE, k == 5);
    if (k < 5) assert_non_null(strstr(t->err.msg, "injected failure"));
    static const char *const want[] = {"", "1\n", "1\n2\n", "1\n2\n3\n", "1\n2\n3\n4\n",
                                       "1\n2\n3\n4\n5\n"};
    assert_string_equal(q(t, "SELECT k FROM t ORDER BY k"), want[k]);
    finish(t, rw);
  }
}

/* ROWAN_BACKEND picks the session's backend; a name it does not know fails the open. */
static void test_backend_variable(void **state) {
  (void)state;
  const char *was = getenv("ROWAN_BACKEND");
  char *keep = was ? strdup(was) : NULL;
  kv_env *env = kv_env_mem_new(T0_ENV);
  kv_options o;
  kv_options_init(&o);
  o.env = env;
  o.create_if_missing = true;
  kv_db *db;
  assert_int_equal(kv_open("/db", &o, &db), KV_OK);
  exec_session *s = NULL;
  exec_error err = {0};
  setenv("ROWAN_BACKEND", "hbase", 1);
  assert_int_equal(exec_session_open(db, &s, &err), EXEC_MISUSE);
  assert_null(s);
  assert_string_equal(err.msg, "ROWAN_BACKEND names an unknown storage backend \"hbase\" "
                               "(local, rowatomic; a database on HBase is opened by its "
                               "hbase:// URI)");
  setenv("ROWAN_BACKEND", "rowatomic", 1);
  assert_int_equal(exec_session_open(db, &s, &err), EXEC_OK);
  assert_string_equal(s->be.caps.name, "rowatomic");
  assert_int_equal(s->be.caps.atomicity, KV_BE_ATOMIC_ROW);
  /* the client-side overlay stacked on it: the only extension */
  assert_int_equal(s->be.caps.extensions, KV_BE_EXT_OVERLAY);
  assert_int_equal(exec_session_close(s), EXEC_OK);
  setenv("ROWAN_BACKEND", "local", 1);
  assert_int_equal(exec_session_open(db, &s, &err), EXEC_OK);
  assert_string_equal(s->be.caps.name, "local");
  assert_int_equal(exec_session_close(s), EXEC_OK);
  if (keep) setenv("ROWAN_BACKEND", keep, 1);
  else unsetenv("ROWAN_BACKEND");
  free(keep);
  kv_close(db);
  kv_env_free(env);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_create_table_cut),
      cmocka_unit_test(test_create_index_cut),
      cmocka_unit_test(test_drop_table_cut),
      cmocka_unit_test(test_upsert_cut),
      cmocka_unit_test(test_backend_variable),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
