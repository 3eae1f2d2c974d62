/*
** tests/api/test_interrupt.c: rowan_interrupt (include/rowan.h; SQLite's sqlite3_interrupt)
** as an embedding program uses it, on the in-memory file system:
**  - a query between rows: its next step fails with ROWAN_INTERRUPT and "interrupted", a
**    step after that is misuse until rowan_reset, and the reset statement runs whole;
**  - with nothing running the call has no effect: the next statement runs whole;
**  - another statement started while one is between rows is interrupted too;
**  - from another thread, while one step runs: a full scan whose filter passes no row (the
**    kv scan's own loop sees the flag), an aggregate the columnar pushdown answers, an
**    UPSERT ... SELECT (atomic: none of its rows stays) and a GROUP BY all stop with
**    ROWAN_INTERRUPT, and the connection works afterwards;
**  - CREATE INDEX's backfill, from the progress handler and from another thread: it stops
**    with ROWAN_INTERRUPT and leaves no index (the name is free, DROP INDEX finds none, the
**    store's table folders are those of before, also after a reopen), and the same CREATE
**    INDEX then builds it whole.
** Not here: the shell's Ctrl-C (tests/cli/test_shell_interrupt.c), large statements
** interrupted at chosen points (test_atomic_stmt.c).
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

#include "api/api_test.h"
#include "kv/env/env_mem.h"
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
  assert_int_equal(rowan_reset(st), ROWAN_INTERRUPT); /* the failed step's, as sqlite3_reset */
  assert_string_equal(rowan_errmsg(db), "interrupted");
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
  assert_int_equal(rowan_reset(st), ROWAN_INTERRUPT);
  assert_int_equal(rowan_reset(other), ROWAN_INTERRUPT);
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
  atomic_long calls;
} intr;

static void *interrupter(void *arg) {
  intr *t = arg;
  while (!atomic_load(&t->go)) {
    struct timespec ts = {0, 100000};
    nanosleep(&ts, NULL);
  }
  while (!atomic_load(&t->stop)) {
    rowan_interrupt(t->db);
    atomic_fetch_add(&t->calls, 1);
    struct timespec ts = {0, 20000};
    nanosleep(&ts, NULL);
  }
  return NULL;
}

/* Run sql's first step with the interrupter going; its result code. On a loaded machine the
** interrupter's thread may not run at all before the statement ends: such a run (no call
** made before the last step returned) proves nothing and is repeated, up to 20 times, after
** `undo` (NULL: nothing) takes back what the finished statement wrote. */
static int step_under_interrupts_undo(rowan_db *db, const char *sql, const char *undo) {
  int rc = ROWAN_ERROR;
  for (int attempt = 0; attempt < 20; attempt++) {
    rowan_stmt *st = NULL;
    assert_int_equal(rowan_prepare(db, sql, -1, &st, NULL), ROWAN_OK);
    intr t = {.db = db};
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, interrupter, &t), 0);
    atomic_store(&t.go, 1);
    do {
      rc = rowan_step(st);
    } while (rc == ROWAN_ROW);
    long calls = atomic_load(&t.calls);
    atomic_store(&t.stop, 1);
    pthread_join(th, NULL);
    if (rc != ROWAN_INTERRUPT) fprintf(stderr, "%s: %s (%d)\n", sql, rowan_errmsg(db), rc);
    rowan_finalize(st);
    if (rc == ROWAN_INTERRUPT || calls > 0) return rc;
    fprintf(stderr, "  (the interrupter had not run yet: again)\n");
    if (undo) assert_int_equal(rowan_exec(db, undo, NULL, NULL), ROWAN_OK);
  }
  return rc;
}

static int step_under_interrupts(rowan_db *db, const char *sql) {
  return step_under_interrupts_undo(db, sql, NULL);
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
  /* a write: atomic, so none of its rows stays */
  exec_ok(db, "CREATE TABLE c (k INTEGER NOT NULL PRIMARY KEY, v INTEGER)");
  assert_int_equal(step_under_interrupts_undo(db, "UPSERT INTO c SELECT k, v FROM t",
                                              "DELETE FROM c"),
                   ROWAN_INTERRUPT);
  rowan_stmt *st = NULL;
  assert_int_equal(rowan_prepare(db, "SELECT COUNT(*) FROM c", -1, &st, NULL), ROWAN_OK);
  assert_int_equal(rowan_step(st), ROWAN_ROW);
  assert_int_equal(rowan_column_int64(st, 0), 0);
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

/* The progress handler: interrupts the connection once the backfill has done some rows. */
typedef struct prog {
  rowan_db *db;
  int calls;
  uint64_t last_done;
} prog;

static void on_progress(void *ctx, const char *what, uint64_t done, uint64_t total) {
  prog *p = ctx;
  (void)what;
  (void)total;
  p->calls++;
  p->last_done = done;
  if (done > 0) rowan_interrupt(p->db);
}

/* The names of the entries of dir, sorted, one per line, into buf. */
static int add_name(void *ctx, const char *name) {
  char *buf = ctx;
  size_t n = strlen(buf);
  snprintf(buf + n, 4096 - n, "%s\n", name);
  return 0;
}

static void list_dir(kv_env *env, const char *dir, char buf[4096]) {
  buf[0] = 0;
  env->list(env, dir, add_name, buf);
  /* sort the lines (a handful) */
  char *lines[64];
  int n = 0;
  for (char *p = strtok(buf, "\n"); p && n < 64; p = strtok(NULL, "\n")) lines[n++] = p;
  for (int i = 1; i < n; i++)
    for (int j = i; j > 0 && strcmp(lines[j - 1], lines[j]) > 0; j--) {
      char *x = lines[j];
      lines[j] = lines[j - 1];
      lines[j - 1] = x;
    }
  char out[4096] = "";
  for (int i = 0; i < n; i++) {
    size_t l = strlen(out);
    snprintf(out + l, sizeof out - l, "%s\n", lines[i]);
  }
  memcpy(buf, out, sizeof out);
}

/* No index IV on T: DROP INDEX finds none. */
static void expect_no_index(rowan_db *db, const char *name) {
  char sql[64];
  snprintf(sql, sizeof sql, "DROP INDEX %s ON t", name);
  assert_int_equal(rowan_exec(db, sql, NULL, NULL), ROWAN_ERROR);
  assert_non_null(strstr(rowan_errmsg(db), "does not exist"));
}

static int check_cb(void *ctx, int n, char **vals, char **names) {
  (void)names;
  int *bad = ctx;
  if (n >= 2 && vals[0] && vals[1] && strcmp(vals[1], "0") != 0 &&
      (!strcmp(vals[0], "MISSING") || !strcmp(vals[0], "EXTRA") ||
       !strcmp(vals[0], "MISMATCHED")))
    (*bad)++;
  return 0;
}

static void test_create_index(void **state) {
  (void)state;
  kv_env *env = kv_env_mem_new(0);
  rowan_db *db = filled(env);
  char before[4096], after[4096];
  assert_int_equal(api_test_flush(db), ROWAN_OK); /* every table's folder made */
  list_dir(env, "/db/data", before);
  /* from the progress handler, once some rows are done */
  prog p = {db, 0, 0};
  assert_int_equal(rowan_progress_handler(db, on_progress, &p), ROWAN_OK);
  assert_int_equal(rowan_exec(db, "CREATE INDEX iv ON t (v) INCLUDE (name)", NULL, NULL),
                   ROWAN_INTERRUPT);
  assert_string_equal(rowan_errmsg(db), "interrupted");
  assert_true(p.calls >= 2 && p.last_done > 0 && p.last_done < ROWS);
  assert_int_equal(rowan_progress_handler(db, NULL, NULL), ROWAN_OK);
  expect_no_index(db, "iv");
  assert_int_equal(api_test_flush(db), ROWAN_OK);
  list_dir(env, "/db/data", after);
  assert_string_equal(after, before); /* the index's table and its files are gone */
  /* from another thread */
  assert_int_equal(step_under_interrupts(db, "CREATE INDEX iv ON t (name)"), ROWAN_INTERRUPT);
  expect_no_index(db, "iv");
  assert_int_equal(api_test_flush(db), ROWAN_OK);
  list_dir(env, "/db/data", after);
  assert_string_equal(after, before);
  /* still none after a reopen (no BUILDING index left to rebuild) */
  assert_int_equal(rowan_close(db), ROWAN_OK);
  db = tu_open_mem(env);
  expect_no_index(db, "iv");
  /* and the same statement builds it whole */
  exec_ok(db, "CREATE INDEX iv ON t (v) INCLUDE (name)");
  int bad = 0;
  assert_int_equal(rowan_exec(db, "CHECK INDEX iv ON t", check_cb, &bad), ROWAN_OK);
  assert_int_equal(bad, 0);
  assert_int_equal(rowan_close(db), ROWAN_OK);
  kv_env_free(env);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_between_rows),
      cmocka_unit_test(test_from_another_thread),
      cmocka_unit_test(test_create_index),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
