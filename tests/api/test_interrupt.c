/*
** tests/api/test_interrupt.c: rowan_interrupt (include/rowan.h; SQLite's sqlite3_interrupt)
** as an embedding program uses it, on the in-memory file system:
**  - a query between rows: its next step fails with ROWAN_INTERRUPT and "interrupted", a
**    step after that is misuse until rowan_reset, and the reset statement runs whole;
**  - with nothing running the call has no effect: the next statement runs whole;
**  - another statement started while one is between rows is interrupted too;
**  - from another thread, while one step runs: a full scan whose filter passes no row (the
**    kv scan's own loop sees the flag), an aggregate the columnar pushdown answers, an
**    UPSERT ... SELECT (the rows it wrote before the interrupt stay: not atomic yet) and a
**    GROUP BY all stop with ROWAN_INTERRUPT, and the connection works afterwards.
** Not here: the shell's Ctrl-C (tests/cli/test_shell_interrupt.c).
*/
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "kv/env_mem.h"
#include "rowan.h"
#include "tu_api.h"

#define ROWS 200000

static rowan_db *filled(kv_env *env) {
  rowan_db *db = tu_open_mem(env);
  exec_ok(db, "CREATE TABLE t (k INTEGER NOT NULL PRIMARY KEY, v INTEGER, name VARCHAR)");
  const char *cols[] = {"K", "V", "NAME"};
  rowan_bulk *b = NULL;
  assert_int_equal(rowan_bulk_begin(db, "T", 3, cols, &b), ROWAN_OK);
  for (int i = 0; i < ROWS; i++) {
    char k[16], v[16], n[24];
    snprintf(k, sizeof k, "%d", i);
    snprintf(v, sizeof v, "%d", i % 1000);
    snprintf(n, sizeof n, "name %d", i);
    const char *f[] = {k, v, n};
    assert_int_equal(rowan_bulk_add_text(b, f, NULL), ROWAN_OK);
  }
  assert_int_equal(rowan_bulk_commit(b), ROWAN_OK);
  return db;
}

static int64_t count_rows(rowan_stmt *st) {
  int64_t n = 0;
  int rc;
  while ((rc = rowan_step(st)) == ROWAN_ROW) n++;
  assert_int_equal(rc, ROWAN_DONE);
  return n;
}

static void test_between_rows(void **state) {
  (void)state;
  kv_env *env = kv_env_mem_new(0);
  rowan_db *db = filled(env);
  rowan_stmt *st = NULL;
  assert_int_equal(rowan_prepare(db, "SELECT k FROM t WHERE k < 5000", -1, &st, NULL), ROWAN_OK);
  assert_int_equal(rowan_step(st), ROWAN_ROW);
  rowan_interrupt(db);
  assert_int_equal(rowan_step(st), ROWAN_INTERRUPT);
  assert_string_equal(rowan_errmsg(db), "interrupted");
  assert_string_equal(rowan_errstr(ROWAN_INTERRUPT), "ROWAN_INTERRUPT");
  assert_int_equal(rowan_step(st), ROWAN_MISUSE);
  assert_int_equal(rowan_reset(st), ROWAN_OK);
  assert_int_equal(count_rows(st), 5000); /* nothing was between rows: the flag cleared */
  /* nothing running: no effect */
  rowan_interrupt(db);
  assert_int_equal(rowan_reset(st), ROWAN_OK);
  assert_int_equal(count_rows(st), 5000);
  /* a statement begun while another is between rows is interrupted too */
  rowan_stmt *other = NULL;
  assert_int_equal(rowan_prepare(db, "SELECT COUNT(*) FROM t", -1, &other, NULL), ROWAN_OK);
  assert_int_equal(rowan_reset(st), ROWAN_OK);
  assert_int_equal(rowan_step(st), ROWAN_ROW);
  rowan_interrupt(db);
  assert_int_equal(rowan_step(other), ROWAN_INTERRUPT);
  assert_int_equal(rowan_step(st), ROWAN_INTERRUPT);
  assert_int_equal(rowan_reset(st), ROWAN_OK);
  assert_int_equal(rowan_reset(other), ROWAN_OK);
  assert_int_equal(rowan_step(other), ROWAN_ROW);
  assert_int_equal(rowan_column_int64(other, 0), ROWS);
  rowan_finalize(other);
  rowan_finalize(st);
  rowan_interrupt(NULL); /* no effect, no crash */
  assert_int_equal(rowan_close(db), ROWAN_OK);
  kv_env_free(env);
}

/* The interrupter: once `go` is set, calls rowan_interrupt until `stop`. */
typedef struct intr {
  rowan_db *db;
  atomic_int go, stop;
  long calls;
} intr;

static void *interrupter(void *arg) {
  intr *t = arg;
  while (!atomic_load(&t->go)) {
    struct timespec ts = {0, 100000};
    nanosleep(&ts, NULL);
  }
  while (!atomic_load(&t->stop)) {
    rowan_interrupt(t->db);
    t->calls++;
    struct timespec ts = {0, 20000};
    nanosleep(&ts, NULL);
  }
  return NULL;
}

/* Run sql's first step with the interrupter going; its result code. */
static int step_under_interrupts(rowan_db *db, const char *sql) {
  rowan_stmt *st = NULL;
  assert_int_equal(rowan_prepare(db, sql, -1, &st, NULL), ROWAN_OK);
  intr t = {db, 0, 0, 0};
  pthread_t th;
  assert_int_equal(pthread_create(&th, NULL, interrupter, &t), 0);
  atomic_store(&t.go, 1);
  int rc;
  do {
    rc = rowan_step(st);
  } while (rc == ROWAN_ROW);
  atomic_store(&t.stop, 1);
  pthread_join(th, NULL);
  if (rc != ROWAN_INTERRUPT) fprintf(stderr, "%s: %s (%d)\n", sql, rowan_errmsg(db), rc);
  rowan_finalize(st);
  return rc;
}

static void test_from_another_thread(void **state) {
  (void)state;
  kv_env *env = kv_env_mem_new(0);
  rowan_db *db = filled(env);
  /* a full scan whose filter passes nothing: the kv scan's loop sees the flag */
  assert_int_equal(step_under_interrupts(db, "SELECT /*+ NO_PUSHDOWN */ name FROM t "
                                             "WHERE v = -1 AND name <> 'x'"), ROWAN_INTERRUPT);
  /* the columnar aggregate pushdown */
  assert_int_equal(step_under_interrupts(db, "SELECT SUM(v) FROM t WHERE v >= 0"),
                   ROWAN_INTERRUPT);
  /* a GROUP BY over every row */
  assert_int_equal(step_under_interrupts(db, "SELECT v, COUNT(*) FROM t GROUP BY v"),
                   ROWAN_INTERRUPT);
  /* a write: the rows written before the interrupt stay (not atomic yet), no more */
  exec_ok(db, "CREATE TABLE c (k INTEGER NOT NULL PRIMARY KEY, v INTEGER)");
  assert_int_equal(step_under_interrupts(db, "UPSERT INTO c SELECT k, v FROM t"),
                   ROWAN_INTERRUPT);
  rowan_stmt *st = NULL;
  assert_int_equal(rowan_prepare(db, "SELECT COUNT(*) FROM c", -1, &st, NULL), ROWAN_OK);
  assert_int_equal(rowan_step(st), ROWAN_ROW);
  int64_t copied = rowan_column_int64(st, 0);
  assert_true(copied < ROWS);
  rowan_finalize(st);
  /* and the connection works: a whole query after the interrupts */
  assert_int_equal(rowan_prepare(db, "SELECT COUNT(*) FROM t WHERE v = 7", -1, &st, NULL),
                   ROWAN_OK);
  assert_int_equal(rowan_step(st), ROWAN_ROW);
  assert_int_equal(rowan_column_int64(st, 0), ROWS / 1000);
  rowan_finalize(st);
  assert_int_equal(rowan_close(db), ROWAN_OK);
  kv_env_free(env);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_between_rows),
      cmocka_unit_test(test_from_another_thread),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
