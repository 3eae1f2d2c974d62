/*
** tests/api/test_progress.c: rowan_progress_handler: CREATE INDEX on a table with rows
** reports its backfill (the index named in the description, rows done rising to the total,
** a last call with done == total); a cleared handler is not called; a NULL db is misuse.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "kv/env/env_mem.h"
#include "rowan.h"

typedef struct seen {
  int calls;              /* handler calls */
  uint64_t last_done;     /* rows done at the last call */
  uint64_t last_total;    /* total at the last call */
  int went_back;          /* done decreased between calls */
  char what[128];         /* the last description */
} seen;

static void on_progress(void *ctx, const char *what, uint64_t done, uint64_t total) {
  seen *s = ctx;
  if (s->calls && done < s->last_done) s->went_back++;
  s->calls++;
  s->last_done = done;
  s->last_total = total;
  snprintf(s->what, sizeof s->what, "%s", what);
}

static void test_create_index_reports_progress(void **state) {
  (void)state;
  kv_env *env = kv_env_mem_new(0);
  rowan_options o;
  rowan_options_init(&o);
  o.kv_env = env;
  rowan_db *db = NULL;
  assert_int_equal(rowan_open("/db", &o, &db), ROWAN_OK);
  assert_int_equal(rowan_exec(db, "CREATE TABLE T (K INTEGER NOT NULL, V DOUBLE, "
                                  "CONSTRAINT PK PRIMARY KEY (K))", NULL, NULL), ROWAN_OK);
  rowan_stmt *ins;
  assert_int_equal(rowan_prepare(db, "UPSERT INTO T VALUES (?, ?)", -1, &ins, NULL), ROWAN_OK);
  assert_int_equal(rowan_exec(db, "BEGIN", NULL, NULL), ROWAN_OK);
  for (int i = 0; i < 12000; i++) {
    rowan_bind_int64(ins, 1, i);
    rowan_bind_double(ins, 2, i * 0.5);
    assert_int_equal(rowan_step(ins), ROWAN_DONE);
    rowan_reset(ins);
  }
  rowan_finalize(ins);
  assert_int_equal(rowan_exec(db, "COMMIT", NULL, NULL), ROWAN_OK);

  seen s = {0};
  assert_int_equal(rowan_progress_handler(db, on_progress, &s), ROWAN_OK);
  assert_int_equal(rowan_exec(db, "CREATE INDEX IDX_V ON T (V)", NULL, NULL), ROWAN_OK);
  assert_true(s.calls >= 2);
  assert_int_equal(s.went_back, 0);
  assert_int_equal(s.last_done, 12000);
  assert_int_equal(s.last_total, s.last_done);
  assert_non_null(strstr(s.what, "IDX_V"));

  seen none = {0};
  assert_int_equal(rowan_progress_handler(db, NULL, &none), ROWAN_OK);
  assert_int_equal(rowan_exec(db, "CREATE INDEX IDX_V2 ON T (V DESC)", NULL, NULL), ROWAN_OK);
  assert_int_equal(none.calls, 0);
  assert_int_equal(rowan_progress_handler(NULL, on_progress, &s), ROWAN_MISUSE);
  assert_int_equal(rowan_close(db), ROWAN_OK);
  kv_env_free(env);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_create_index_reports_progress),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
