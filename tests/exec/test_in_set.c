/*
** tests/exec/test_in_set.c: the hash set of IN (SELECT ...) inside an expression
** (exec/in_set.h) against a model: random sets of one to three columns (small domains, so
** rows repeat; about one value in five NULL; some sets empty; INTEGER rows probed with
** INTEGER, DOUBLE and DECIMAL values, and VARCHAR rows with CHAR ones) give, for every probe,
** the answer of SQL's row IN computed by a pass over every row (TRUE when some row equals
** x in every column, else NULL when one could, else FALSE). Seeded (ROWAN_SEED reproduces a
** run). Also: the value that carries a set, and one that does not.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "catalog/status.h"
#include "catalog/value.h"
#include "exec/in_set.h"
#include "testutil.h"

static const char *const STRS[] = {"a", "b", "ab", "c"};

/* A value of column kind str (VARCHAR rows) or a number (INTEGER rows); probe: the other
** types a query may compare with them (DOUBLE, DECIMAL, CHAR). */
static cat_value value(uint64_t *rng, bool str, bool probe) {
  if (tu_below(rng, 5) == 0) return cat_v_null(cat_type_of(str ? CAT_T_VARCHAR : CAT_T_INTEGER));
  int k = (int)tu_below(rng, 4);
  if (str) {
    cat_value v = cat_v_str(probe && tu_below(rng, 2) ? CAT_T_CHAR : CAT_T_VARCHAR, STRS[k],
                            strlen(STRS[k]));
    return v;
  }
  if (probe && tu_below(rng, 3) == 0) return cat_v_double((double)k);
  return cat_v_int(CAT_T_INTEGER, k);
}

/* The model: x IN rows by a pass over all of them. */
static int model(const cat_value *rows, uint32_t n, int ncol, const cat_value *x) {
  int tv = 0;
  for (uint32_t r = 0; r < n; r++) {
    int res = 1;
    for (int i = 0; i < ncol && res; i++) {
      const cat_value *y = &rows[r * (uint32_t)ncol + (uint32_t)i];
      if (x[i].is_null || y->is_null) {
        res = -1;
        continue;
      }
      int cmp;
      cat_error ce;
      assert_int_equal(cat_value_compare(&x[i], y, &cmp, &ce), CAT_OK);
      if (cmp) res = 0;
    }
    if (res == 1) return 1;
    if (res) tv = -1;
  }
  return tv;
}

static void test_in_set_model(void **state) {
  (void)state;
  uint64_t rng = tu_seed("test_in_set");
  int counts[3] = {0, 0, 0}; /* answers FALSE, TRUE, NULL */
  for (int round = 0; round < (int)tu_scaled(300, 50); round++) {
    plan_arena A;
    plan_arena_init(&A);
    int ncol = 1 + (int)tu_below(&rng, 3);
    bool str[3];
    for (int i = 0; i < ncol; i++) str[i] = tu_below(&rng, 2);
    uint32_t n = tu_below(&rng, 8) == 0 ? 0 : 1 + (uint32_t)tu_below(&rng, 60);
    cat_value *rows = plan_arena_alloc(&A, ((size_t)n * (size_t)ncol + 1) * sizeof *rows);
    assert_non_null(rows);
    for (uint32_t k = 0; k < n * (uint32_t)ncol; k++)
      rows[k] = value(&rng, str[k % (uint32_t)ncol], false);
    const exec_in_set *s = NULL;
    assert_int_equal(exec_in_set_build(&A, rows, n, ncol, &s), EXEC_OK);
    cat_value carrier;
    assert_int_equal(exec_in_set_value(&A, s, &carrier), EXEC_OK);
    assert_ptr_equal(exec_in_set_of(&carrier), s);
    for (int p = 0; p < 40; p++) {
      cat_value x[3];
      for (int i = 0; i < ncol; i++) x[i] = value(&rng, str[i], true);
      int tv = 7;
      char msg[128];
      assert_int_equal(exec_in_set_probe(s, x, &tv, msg, sizeof msg), EXEC_OK);
      int want = model(rows, n, ncol, x);
      if (tv != want)
        fail_msg("round %d probe %d: %d columns, %u rows: got %d, the model %d", round, p,
                 ncol, n, tv, want);
      counts[tv < 0 ? 2 : tv]++;
    }
    plan_arena_free(&A);
  }
  /* not vacuous: every answer came up */
  assert_true(counts[0] > 0 && counts[1] > 0 && counts[2] > 0);
}

static void test_in_set_value(void **state) {
  (void)state;
  cat_value v = cat_v_str(CAT_T_VARBINARY, "abc", 3);
  assert_null(exec_in_set_of(&v));
  cat_value n = cat_v_null(cat_type_of(CAT_T_VARBINARY));
  assert_null(exec_in_set_of(&n));
  cat_value i = cat_v_int(CAT_T_BIGINT, 8);
  assert_null(exec_in_set_of(&i));
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_in_set_model),
                                     cmocka_unit_test(test_in_set_value)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
