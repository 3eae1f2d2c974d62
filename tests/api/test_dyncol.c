/*
** tests/api/test_dyncol.c: Phoenix's dynamic columns through the C API with prepared
** statements run many times (the plan kept across runs and rebuilt for new parameter values,
** planner/plan_reuse.h): parameters in a dynamic column's place in UPSERT and in a WHERE on
** one, each run's values checked against a model kept here; the result columns' names and
** declared types; an UPSERT prepared before the family of its dynamic column exists creates
** it at its first run and runs again without creating anything; a prepared query of a
** dynamic column next to queries of the table's own columns (the scan cache is the
** statement's, and a table copy with dynamic columns never shares it). Not here: SQL results
** and errors (tests/sql/dynamic_columns.test).
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
#include "tu_api.h"

#define N 40 /* rows */

typedef struct fixture {
  kv_env *env;  /* in-memory file system */
  rowan_db *db; /* connection on "/db" */
} fixture;

static int setup(void **state) {
  fixture *f = calloc(1, sizeof *f);
  f->env = kv_env_mem_new(0);
  f->db = tu_open_mem(f->env);
  exec_ok(f->db, "CREATE TABLE T (K INTEGER PRIMARY KEY, V VARCHAR, E.W INTEGER)");
  *state = f;
  return 0;
}

static int teardown(void **state) {
  fixture *f = *state;
  assert_int_equal(rowan_close(f->db), ROWAN_OK);
  kv_env_free(f->env);
  free(f);
  return 0;
}

static void step_done(rowan_db *db, rowan_stmt *st) {
  int rc = rowan_step(st);
  if (rc != ROWAN_DONE) fail_msg("step: %d %s", rc, rowan_errmsg(db));
  assert_int_equal(rowan_reset(st), ROWAN_OK);
}

static void test_prepared_params_against_model(void **state) {
  fixture *f = *state;
  int64_t n_of[N];     /* model: E.N of row k, or -1 for NULL */
  rowan_stmt *up = NULL, *q = NULL, *plain = NULL;
  assert_int_equal(rowan_prepare(f->db, "UPSERT INTO T (K, V, E.N BIGINT) VALUES (?, ?, ?)", -1,
                                 &up, NULL), ROWAN_OK);
  for (int k = 0; k < N; k++) {
    char v[16];
    snprintf(v, sizeof v, "v%d", k);
    assert_int_equal(rowan_bind_int64(up, 1, k), ROWAN_OK);
    assert_int_equal(rowan_bind_text(up, 2, v, -1), ROWAN_OK);
    if (k % 5 == 0) {
      assert_int_equal(rowan_bind_null(up, 3), ROWAN_OK);
      n_of[k] = -1;
    } else {
      assert_int_equal(rowan_bind_int64(up, 3, (int64_t)k * 7 % 13), ROWAN_OK);
      n_of[k] = (int64_t)k * 7 % 13;
    }
    step_done(f->db, up);
  }
  assert_int_equal(rowan_prepare(f->db, "SELECT K, N FROM T (E.N BIGINT) WHERE N >= ? ORDER BY K",
                                 -1, &q, NULL), ROWAN_OK);
  assert_int_equal(rowan_column_count(q), 2);
  assert_string_equal(rowan_column_name(q, 1), "N");
  assert_string_equal(rowan_column_decltype(q, 1), "BIGINT");
  assert_int_equal(rowan_prepare(f->db, "SELECT COUNT(*) FROM T WHERE V >= 'v2'", -1, &plain,
                                 NULL), ROWAN_OK);
  for (int64_t lo = 0; lo <= 13; lo += 3) {
    assert_int_equal(rowan_bind_int64(q, 1, lo), ROWAN_OK);
    int k = 0;
    for (;;) {
      int rc = rowan_step(q);
      if (rc == ROWAN_DONE) break;
      assert_int_equal(rc, ROWAN_ROW);
      while (k < N && (n_of[k] < 0 || n_of[k] < lo)) k++; /* the model's next match */
      assert_true(k < N);
      assert_int_equal(rowan_column_int64(q, 0), k);
      assert_int_equal(rowan_column_int64(q, 1), n_of[k]);
      k++;
    }
    while (k < N && (n_of[k] < 0 || n_of[k] < lo)) k++;
    assert_int_equal(k, N); /* no match left out */
    assert_int_equal(rowan_reset(q), ROWAN_OK);
    /* the table's own columns in between, through the same connection */
    assert_int_equal(rowan_step(plain), ROWAN_ROW);
    assert_true(rowan_column_int64(plain, 0) > 0);
    assert_int_equal(rowan_reset(plain), ROWAN_OK);
  }
  rowan_finalize(up);
  rowan_finalize(q);
  rowan_finalize(plain);
}

static void test_family_made_at_first_run(void **state) {
  fixture *f = *state;
  rowan_stmt *up = NULL, *q = NULL;
  assert_int_equal(rowan_prepare(f->db, "UPSERT INTO T (K, NEWF.D DOUBLE) VALUES (?, ?)", -1, &up,
                                 NULL), ROWAN_OK);
  /* before it runs, the family does not exist: a query of it is refused */
  assert_int_not_equal(rowan_prepare(f->db, "SELECT D FROM T (NEWF.D DOUBLE)", -1, &q, NULL),
                       ROWAN_OK);
  assert_non_null(strstr(rowan_errmsg(f->db), "family \"NEWF\" of dynamic column \"D\""));
  for (int k = 0; k < 3; k++) {
    assert_int_equal(rowan_bind_int64(up, 1, k), ROWAN_OK);
    assert_int_equal(rowan_bind_double(up, 2, k + 0.25), ROWAN_OK);
    step_done(f->db, up);
  }
  assert_int_equal(rowan_prepare(f->db, "SELECT K, D FROM T (NEWF.D DOUBLE) ORDER BY K", -1, &q,
                                 NULL), ROWAN_OK);
  for (int k = 0; k < 3; k++) {
    assert_int_equal(rowan_step(q), ROWAN_ROW);
    assert_int_equal(rowan_column_int64(q, 0), k);
    assert_true(rowan_column_double(q, 1) == k + 0.25);
  }
  assert_int_equal(rowan_step(q), ROWAN_DONE);
  rowan_finalize(q);
  rowan_finalize(up);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_prepared_params_against_model, setup, teardown),
      cmocka_unit_test_setup_teardown(test_family_made_at_first_run, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
