/*
** tests/api/test_break_bulk_ddl.c: a bulk load (rowan_bulk_*) while the table changes under
** it on the same connection: an index created after rowan_bulk_begin (on an empty table, on
** one with rows), rows written by UPSERT into the loaded (empty, indexed) table before the
** commit, the table dropped and created again, the index dropped. Whatever the commit
** answers, the store must stay consistent: every index agrees with its table (CHECK INDEX
** clean), queries through the index give the rows a full scan gives, a refused commit
** leaves the table as it was, and an accepted one holds every loaded row.
** Not here: bulk loads on a quiet store (tests/api/test_bulk*.c, tests/exec/test_break_bulk.c).
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

/* The first column of the first row of sql as a number (-1 when none). */
static int check_cb(void *ctx, int ncol, char **values, char **names) {
  (void)names;
  int *bad = ctx;
  if (ncol >= 2 && values[0] &&
      (!strcmp(values[0], "MISSING") || !strcmp(values[0], "EXTRA") ||
       !strcmp(values[0], "MISMATCHED")) &&
      values[1] && strcmp(values[1], "0") != 0)
    (*bad)++;
  return 0;
}

/* CHECK INDEX clean, and rows through the index equal the table's. */
static void index_agrees(rowan_db *db, const char *what) {
  int bad = 0;
  int rc = rowan_exec(db, "CHECK INDEX IV ON T", check_cb, &bad);
  if (rc != ROWAN_OK) return; /* no index (dropped): nothing to agree with */
  if (bad) fail_msg("%s: CHECK INDEX IV ON T finds problems", what);
  for (int v = 0; v < 5; v++) {
    char a[160], b[160];
    snprintf(a, sizeof a, "SELECT /*+ INDEX(T IV) */ COUNT(*) FROM T WHERE V = 'v%d'", v);
    snprintf(b, sizeof b, "SELECT /*+ NO_INDEX */ COUNT(*) FROM T WHERE V = 'v%d'", v);
    int64_t x = tu_one_int(db, a), y = tu_one_int(db, b);
    if (x != y) fail_msg("%s: V = 'v%d': %lld rows through the index, %lld in the table",
                         what, v, (long long)x, (long long)y);
  }
}

/* Begin a load of n rows (K, V) starting at key k0; returns the begin code, *bulk set. */
static int load_rows(rowan_db *db, rowan_bulk **bulk, int k0, int n) {
  static const char *const cols[] = {"K", "V"};
  int rc = rowan_bulk_begin(db, "T", 2, cols, bulk);
  if (rc != ROWAN_OK) return rc;
  for (int i = 0; i < n; i++) {
    char k[24], v[8];
    snprintf(k, sizeof k, "%d", k0 + i);
    snprintf(v, sizeof v, "v%d", (k0 + i) % 5);
    const char *f[2] = {k, v};
    int arc = rowan_bulk_add_text(*bulk, f, NULL);
    if (arc != ROWAN_OK) fail_msg("bulk add %d: %s", i, rowan_errmsg(db));
  }
  return ROWAN_OK;
}

enum { MID_INDEX_EMPTY, MID_INDEX_ROWS, MID_UPSERT, MID_UPSERT_SAME, MID_DROP_INDEX,
       MID_RECREATE, MID_DROP, MID_DELETE_ALL, N_MID };
static const char *const mid_name[N_MID] = {
    "CREATE INDEX after begin (empty table)", "CREATE INDEX after begin (table with rows)",
    "UPSERT into the empty indexed table", "UPSERT of a loaded key", "DROP INDEX",
    "DROP TABLE and CREATE TABLE", "DROP TABLE", "DELETE of every row"};

static void one_case(int mid, int n) {
  kv_env *env = kv_env_mem_new(0);
  rowan_db *db = tu_open_mem(env);
  exec_ok(db, "CREATE TABLE T (K INTEGER NOT NULL PRIMARY KEY, V VARCHAR)");
  bool indexed_at_begin = mid == MID_UPSERT || mid == MID_UPSERT_SAME || mid == MID_DROP_INDEX;
  if (indexed_at_begin) exec_ok(db, "CREATE INDEX IV ON T (V)");
  if (mid == MID_INDEX_ROWS || mid == MID_DELETE_ALL)
    exec_ok(db, "UPSERT INTO T VALUES (-1, 'v1'), (-2, 'v2'), (100000, 'v3')");
  int64_t before = tu_one_int(db, "SELECT COUNT(*) FROM T");
  rowan_bulk *bulk = NULL;
  int brc = load_rows(db, &bulk, 0, n / 2);
  assert_int_equal(brc, ROWAN_OK);
  int drc = ROWAN_OK;
  switch (mid) {
  case MID_INDEX_EMPTY:
  case MID_INDEX_ROWS: drc = rowan_exec(db, "CREATE INDEX IV ON T (V)", NULL, NULL); break;
  case MID_UPSERT: drc = rowan_exec(db, "UPSERT INTO T VALUES (-5, 'v0')", NULL, NULL); break;
  case MID_UPSERT_SAME: drc = rowan_exec(db, "UPSERT INTO T VALUES (3, 'v4')", NULL, NULL); break;
  case MID_DROP_INDEX: drc = rowan_exec(db, "DROP INDEX IV ON T", NULL, NULL); break;
  case MID_RECREATE:
    drc = rowan_exec(db, "DROP TABLE T", NULL, NULL);
    if (drc == ROWAN_OK)
      drc = rowan_exec(db, "CREATE TABLE T (K INTEGER NOT NULL PRIMARY KEY, V VARCHAR)", NULL,
                       NULL);
    if (drc == ROWAN_OK) drc = rowan_exec(db, "CREATE INDEX IV ON T (V)", NULL, NULL);
    break;
  case MID_DROP: drc = rowan_exec(db, "DROP TABLE T", NULL, NULL); break;
  default: drc = rowan_exec(db, "DELETE FROM T", NULL, NULL); break;
  }
  bool gone = mid == MID_DROP && drc == ROWAN_OK;
  int64_t mid_count = gone ? 0 : tu_one_int(db, "SELECT COUNT(*) FROM T");
  /* the rest of the load after the change */
  for (int i = n / 2; i < n; i++) {
    char k[24], v[8];
    snprintf(k, sizeof k, "%d", i);
    snprintf(v, sizeof v, "v%d", i % 5);
    const char *f[2] = {k, v};
    rowan_bulk_add_text(bulk, f, NULL);
  }
  int crc = rowan_bulk_commit(bulk);
  char what[200];
  snprintf(what, sizeof what, "%s (rows %d; change %s, commit %s: %s)", mid_name[mid], n,
           rowan_errstr(drc), rowan_errstr(crc), crc == ROWAN_OK ? "" : rowan_errmsg(db));
  fprintf(stderr, "  %s\n", what);
  if (gone) { /* the table is gone: the commit must not bring it (or its rows) back */
    rowan_stmt *st;
    if (crc == ROWAN_OK) fail_msg("%s: the load of a dropped table committed", what);
    assert_int_not_equal(rowan_prepare(db, "SELECT * FROM T", -1, &st, NULL), ROWAN_OK);
    assert_int_equal(rowan_close(db), ROWAN_OK);
    kv_env_free(env);
    return;
  }
  index_agrees(db, what);
  int64_t after = tu_one_int(db, "SELECT COUNT(*) FROM T");
  if (crc == ROWAN_OK) {
    /* every loaded key is there with its loaded value */
    int64_t loaded = tu_one_int(db, "SELECT COUNT(*) FROM T WHERE K >= 0 AND K < 100000");
    if (loaded != n) fail_msg("%s: %lld of %d loaded rows found", what, (long long)loaded, n);
  } else if (after != mid_count) {
    fail_msg("%s: a refused commit changed the table: %lld rows before it, %lld after "
             "(%lld at begin)", what, (long long)mid_count, (long long)after, (long long)before);
  }
  /* and after a reopen */
  assert_int_equal(rowan_close(db), ROWAN_OK);
  db = tu_open_mem(env);
  index_agrees(db, what);
  assert_int_equal(tu_one_int(db, "SELECT COUNT(*) FROM T"), after);
  assert_int_equal(rowan_close(db), ROWAN_OK);
  kv_env_free(env);
}

static void run_case(void **state) {
  int mid = *(const int *)*state;
  one_case(mid, 40);
  one_case(mid, (int)tu_scaled(6000, 3000));
}

int main(void) {
  static const int ids[N_MID] = {MID_INDEX_EMPTY, MID_INDEX_ROWS, MID_UPSERT, MID_UPSERT_SAME,
                                 MID_DROP_INDEX, MID_RECREATE, MID_DROP, MID_DELETE_ALL};
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_prestate(run_case, (void *)&ids[MID_INDEX_EMPTY]),
      cmocka_unit_test_prestate(run_case, (void *)&ids[MID_INDEX_ROWS]),
      cmocka_unit_test_prestate(run_case, (void *)&ids[MID_UPSERT]),
      cmocka_unit_test_prestate(run_case, (void *)&ids[MID_UPSERT_SAME]),
      cmocka_unit_test_prestate(run_case, (void *)&ids[MID_DROP_INDEX]),
      cmocka_unit_test_prestate(run_case, (void *)&ids[MID_RECREATE]),
      cmocka_unit_test_prestate(run_case, (void *)&ids[MID_DROP]),
      cmocka_unit_test_prestate(run_case, (void *)&ids[MID_DELETE_ALL]),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
