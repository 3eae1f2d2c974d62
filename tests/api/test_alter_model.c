/*
** tests/api/test_alter_model.c: ALTER TABLE ADD and DROP COLUMN interleaved at random with
** UPSERTs, DELETEs, flushes, major compactions and reopens, checked against a model (a map
** of rows, the live columns and their types). Columns come from a pool of names and are
** added again after a drop, each time with a random type (INTEGER or VARCHAR), so a read of
** an old cell under a new column would show (a wrong value, or a decode error). Every few
** steps the whole table is compared with the model; at the end an index on W (a column
** never dropped) is checked with CHECK INDEX. Seeded (tu_seed); the seed is printed.
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

#define NKEYS 40 /* keys 0..NKEYS-1 */
#define NPOOL 6  /* column names C0..C5 */

typedef struct model {
  bool exists[NKEYS];             /* row k is there */
  long long w[NKEYS];             /* W (never NULL once a row exists) */
  int type[NPOOL];                /* 0 not a column, 1 INTEGER, 2 VARCHAR */
  int order[NPOOL], n_order;      /* live columns in the table's order */
  char val[NKEYS][NPOOL][16];     /* value as text, "" = NULL */
} model;

static rowan_db *open_db(kv_env *env) {
  rowan_options o;
  rowan_options_init(&o);
  o.kv_env = env;
  rowan_db *db = NULL;
  assert_int_equal(rowan_open("/db", &o, &db), ROWAN_OK);
  return db;
}

static void exec_fmt(rowan_db *db, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void exec_fmt(rowan_db *db, const char *fmt, ...) {
  char sql[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(sql, sizeof sql, fmt, ap);
  va_end(ap);
  exec_ok(db, sql);
}

/* The whole table against the model. */
static void compare(rowan_db *db, const model *m, uint64_t seed, int step) {
  char sql[256];
  int n = snprintf(sql, sizeof sql, "SELECT K, W");
  for (int i = 0; i < m->n_order; i++) n += snprintf(sql + n, sizeof sql - (size_t)n, ", C%d", m->order[i]);
  snprintf(sql + n, sizeof sql - (size_t)n, " FROM T ORDER BY K");
  rowan_stmt *st = NULL;
  if (rowan_prepare(db, sql, -1, &st, NULL) != ROWAN_OK)
    fail_msg("seed %llu step %d: %s: %s", (unsigned long long)seed, step, sql, rowan_errmsg(db));
  int k = 0, rc;
  while ((rc = rowan_step(st)) == ROWAN_ROW) {
    while (k < NKEYS && !m->exists[k]) k++;
    long long key = rowan_column_int64(st, 0);
    if (k >= NKEYS || key != k)
      fail_msg("seed %llu step %d: row %lld, the model's next is %d", (unsigned long long)seed,
               step, key, k);
    assert_int_equal(rowan_column_int64(st, 1), m->w[k]);
    for (int i = 0; i < m->n_order; i++) {
      const char *got = (const char *)rowan_column_text(st, 2 + i);
      const char *want = m->val[k][m->order[i]];
      if (strcmp(got ? got : "", want) != 0 || (!got) != (want[0] == 0))
        fail_msg("seed %llu step %d: row %d column C%d: %s, want %s", (unsigned long long)seed,
                 step, k, m->order[i], got ? got : "NULL", want[0] ? want : "NULL");
    }
    k++;
  }
  if (rc != ROWAN_DONE)
    fail_msg("seed %llu step %d: %s", (unsigned long long)seed, step, rowan_errmsg(db));
  while (k < NKEYS && !m->exists[k]) k++;
  if (k < NKEYS) fail_msg("seed %llu step %d: row %d missing", (unsigned long long)seed, step, k);
  rowan_finalize(st);
}

static void upsert(rowan_db *db, model *m, uint64_t *rng) {
  int k = (int)tu_below(rng, NKEYS);
  char cols[128] = "K, W", vals[256];
  long long w = (long long)tu_below(rng, 1000);
  snprintf(vals, sizeof vals, "%d, %lld", k, w);
  bool was = m->exists[k];
  m->exists[k] = true;
  m->w[k] = w;
  for (int i = 0; i < m->n_order; i++) {
    int c = m->order[i];
    if (was && tu_below(rng, 3) == 0) continue; /* kept as it was (a new row writes all) */
    char *v = m->val[k][c];
    if (tu_below(rng, 4) == 0) v[0] = 0; /* NULL */
    else if (m->type[c] == 1) snprintf(v, 16, "%d", (int)tu_below(rng, 100000) - 50000);
    else snprintf(v, 16, "s%d", (int)tu_below(rng, 1000));
    size_t cl = strlen(cols), vl = strlen(vals);
    snprintf(cols + cl, sizeof cols - cl, ", C%d", c);
    if (!v[0]) snprintf(vals + vl, sizeof vals - vl, ", NULL");
    else if (m->type[c] == 1) snprintf(vals + vl, sizeof vals - vl, ", %s", v);
    else snprintf(vals + vl, sizeof vals - vl, ", '%s'", v);
  }
  exec_fmt(db, "UPSERT INTO T (%s) VALUES (%s)", cols, vals);
}

static void run(uint64_t seed) {
  uint64_t rng = seed;
  kv_env *env = kv_env_mem_new(0);
  rowan_db *db = open_db(env);
  exec_ok(db, "CREATE TABLE T (K INTEGER PRIMARY KEY, W INTEGER); CREATE INDEX IW ON T (W)");
  model *m = calloc(1, sizeof *m);
  int steps = (int)tu_scaled(400, 60);
  for (int step = 0; step < steps; step++) {
    uint64_t r = tu_below(&rng, 100);
    if (r < 50) {
      upsert(db, m, &rng);
    } else if (r < 58) {
      int k = (int)tu_below(&rng, NKEYS);
      exec_fmt(db, "DELETE FROM T WHERE K = %d", k);
      m->exists[k] = false;
    } else if (r < 72) { /* ADD a column not there, in the default family or in F<c> */
      int c = (int)tu_below(&rng, NPOOL);
      if (m->type[c]) continue;
      m->type[c] = 1 + (int)tu_below(&rng, 2);
      exec_fmt(db, "ALTER TABLE T ADD %sC%d %s", c % 2 ? "F1." : "", c,
               m->type[c] == 1 ? "INTEGER" : "VARCHAR");
      m->order[m->n_order++] = c;
      for (int k = 0; k < NKEYS; k++) m->val[k][c][0] = 0;
    } else if (r < 84) { /* DROP a live column */
      if (!m->n_order) continue;
      int i = (int)tu_below(&rng, (uint64_t)m->n_order), c = m->order[i];
      exec_fmt(db, "ALTER TABLE T DROP COLUMN C%d", c);
      m->type[c] = 0;
      memmove(&m->order[i], &m->order[i + 1], (size_t)(m->n_order - i - 1) * sizeof m->order[0]);
      m->n_order--;
    } else if (r < 90) {
      assert_int_equal(rowan_flush(db), ROWAN_OK);
    } else if (r < 95) {
      assert_int_equal(rowan_compact(db, 1), ROWAN_OK); /* major: dropped cells go */
    } else {
      assert_int_equal(rowan_close(db), ROWAN_OK);
      db = open_db(env);
    }
    if (step % 10 == 9) compare(db, m, seed, step);
  }
  compare(db, m, seed, steps);
  rowan_stmt *st = NULL;
  assert_int_equal(rowan_prepare(db, "CHECK INDEX IW ON T", -1, &st, NULL), ROWAN_OK);
  while (rowan_step(st) == ROWAN_ROW) {
    const char *what = (const char *)rowan_column_text(st, 0);
    if (!strcmp(what, "MISSING") || !strcmp(what, "EXTRA") || !strcmp(what, "MISMATCHED"))
      assert_int_equal(rowan_column_int64(st, 1), 0);
  }
  rowan_finalize(st);
  assert_int_equal(rowan_close(db), ROWAN_OK);
  kv_env_free(env);
  free(m);
}

static void test_random_alter_against_model(void **state) {
  (void)state;
  uint64_t seed = tu_seed("alter_model");
  for (int i = 0; i < (int)tu_scaled(4, 1); i++) run(seed + (uint64_t)i);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_random_alter_against_model)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
