/*
** tests/api/test_readonly.c: the other views of a database's files through the public API:
** read-only handles beside a writer (rowan_options.read_only, rowan_refresh) and online
** backups (rowan_backup). What an application relies on:
**  - a read-only handle opens while another handle (or process) writes the database, and
**    without write permission on its directory; it shows what was committed before its
**    open, each transaction whole, until rowan_refresh shows the rest, new and dropped
**    tables included; a prepared statement sees the refreshed rows at its next run;
**  - rowan_refresh refuses while a statement is between rows or a transaction is open;
**  - rowan_backup's copy opens with every transaction committed before it began, whole,
**    while another thread goes on writing through the same handle;
**  - a reader process beside a writer process that creates tables as it goes (fork);
**  - a join past the join memory spills on a writable handle, and is refused (it would
**    write in the directory) on a read-only one.
** Transactions are batches of BATCH rows (BEGIN ... COMMIT) with column B = the batch.
*/
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "kv/env/env_mem.h"
#include "rowan.h"
#include "testutil.h"
#include "tu_api.h"

#define BATCH 10
#define MAX_BATCHES 20000

static rowan_db *open_as(const char *path, kv_env *env, int read_only, size_t memstore) {
  rowan_options o;
  rowan_options_init(&o);
  o.kv_env = env;
  o.read_only = read_only;
  o.sync_mode = ROWAN_SYNC_NORMAL; /* written at COMMIT: what a reader can see */
  o.memstore_size = memstore;
  rowan_db *db = NULL;
  int rc = rowan_open(path, &o, &db);
  if (rc != ROWAN_OK) fail_msg("open %s: %s", path, db ? rowan_errmsg(db) : rowan_errstr(rc));
  return db;
}

/* One transaction: rows (b * BATCH + j, b, 'v<b>') for j < BATCH. Returns rowan_exec's. */
static int write_batch(rowan_db *db, int b) {
  char sql[BATCH * 64 + 64];
  int n = snprintf(sql, sizeof sql, "BEGIN;");
  for (int j = 0; j < BATCH; j++)
    n += snprintf(sql + n, sizeof sql - (size_t)n, "UPSERT INTO T VALUES (%d, %d, 'v%d');",
                  b * BATCH + j, b, b);
  snprintf(sql + n, sizeof sql - (size_t)n, "COMMIT;");
  int rc = rowan_exec(db, sql, NULL, NULL);
  if (rc != ROWAN_OK) rowan_exec(db, "ROLLBACK", NULL, NULL);
  return rc;
}

typedef struct counts {
  int rows[MAX_BATCHES]; /* rows seen per batch */
  int max;               /* the largest batch seen, -1 when none */
  bool bad;              /* a value did not belong to its batch */
} counts;

static int count_cb(void *ctx, int ncol, char **v, char **names) {
  (void)ncol;
  (void)names;
  counts *c = ctx;
  int b = atoi(v[0]), n = atoi(v[1]);
  char want[32];
  snprintf(want, sizeof want, "v%d", b);
  if (b < 0 || b >= MAX_BATCHES || strcmp(v[2], want) || strcmp(v[3], want)) c->bad = true;
  else c->rows[b] = n;
  if (b > c->max) c->max = b;
  return 0;
}

/* The number of batches db shows of T: batches 0..M-1, each whole, nothing else. */
static int batches(rowan_db *db, const char *where) {
  static counts c;
  memset(&c, 0, sizeof c);
  c.max = -1;
  int rc = rowan_exec(db, "SELECT B, COUNT(*), MIN(V), MAX(V) FROM T GROUP BY B", count_cb, &c);
  if (rc != ROWAN_OK) fail_msg("%s: %s", where, rowan_errmsg(db));
  for (int b = 0; b <= c.max; b++)
    if (c.rows[b] != BATCH) fail_msg("%s: batch %d has %d rows (up to %d)", where, b, c.rows[b], c.max);
  if (c.bad) fail_msg("%s: a row holds another batch's value", where);
  return c.max + 1;
}

static int64_t one_int(rowan_db *db, const char *sql) {
  rowan_stmt *st = NULL;
  if (rowan_prepare(db, sql, -1, &st, NULL) != ROWAN_OK) fail_msg("%s: %s", sql, rowan_errmsg(db));
  assert_int_equal(rowan_step(st), ROWAN_ROW);
  int64_t v = rowan_column_int64(st, 0);
  rowan_finalize(st);
  return v;
}

static void test_reader_beside_writer(void **state) {
  (void)state;
  kv_env *env = kv_env_mem_new(1);
  rowan_db *w = open_as("/db", env, 0, 64 << 10);
  exec_ok(w, "CREATE TABLE T (K INTEGER PRIMARY KEY, B INTEGER, V VARCHAR)");
  for (int b = 0; b < 20; b++) assert_int_equal(write_batch(w, b), ROWAN_OK);
  rowan_db *r = open_as("/db", env, 1, 0); /* the writer holds the LOCK: no matter */
  assert_int_equal(batches(r, "reader"), 20);
  assert_int_equal(rowan_exec(r, "UPSERT INTO T VALUES (1, 1, 'x')", NULL, NULL), ROWAN_READONLY);
  rowan_stmt *count = NULL;
  assert_int_equal(rowan_prepare(r, "SELECT COUNT(*) FROM T", -1, &count, NULL), ROWAN_OK);
  /* the writer goes on, flushes and compacts (deleting the files the reader opened) */
  for (int b = 20; b < 40; b++) assert_int_equal(write_batch(w, b), ROWAN_OK);
  assert_int_equal(rowan_flush(w), ROWAN_OK);
  assert_int_equal(rowan_compact(w, 1), ROWAN_OK);
  for (int b = 40; b < 45; b++) assert_int_equal(write_batch(w, b), ROWAN_OK);
  assert_int_equal(batches(r, "reader before refresh"), 20);
  assert_int_equal(rowan_step(count), ROWAN_ROW);
  assert_int_equal(rowan_column_int64(count, 0), 20 * BATCH);
  /* between rows: refused */
  assert_int_equal(rowan_refresh(r), ROWAN_MISUSE);
  assert_non_null(strstr(rowan_errmsg(r), "between rows"));
  assert_int_equal(rowan_reset(count), ROWAN_OK);
  assert_int_equal(rowan_refresh(r), ROWAN_OK);
  assert_int_equal(batches(r, "reader after refresh"), 45);
  assert_int_equal(rowan_step(count), ROWAN_ROW); /* the prepared statement: new rows */
  assert_int_equal(rowan_column_int64(count, 0), 45 * BATCH);
  assert_int_equal(rowan_reset(count), ROWAN_OK);
  /* the writer's DDL: a new table, then dropped */
  exec_ok(w, "CREATE TABLE U (K INTEGER PRIMARY KEY, V VARCHAR); UPSERT INTO U VALUES (1, 'u')");
  rowan_stmt *st = NULL;
  assert_int_equal(rowan_prepare(r, "SELECT V FROM U", -1, &st, NULL), ROWAN_ERROR);
  assert_int_equal(rowan_refresh(r), ROWAN_OK);
  assert_int_equal(one_int(r, "SELECT COUNT(*) FROM U"), 1);
  /* a transaction open: refused */
  exec_ok(r, "BEGIN");
  assert_int_equal(rowan_refresh(r), ROWAN_MISUSE);
  assert_non_null(strstr(rowan_errmsg(r), "transaction"));
  exec_ok(r, "ROLLBACK");
  exec_ok(w, "DROP TABLE U");
  for (int b = 45; b < 50; b++) assert_int_equal(write_batch(w, b), ROWAN_OK);
  assert_int_equal(rowan_refresh(r), ROWAN_OK);
  assert_int_equal(rowan_prepare(r, "SELECT V FROM U", -1, &st, NULL), ROWAN_ERROR);
  assert_int_equal(batches(r, "reader after the drop"), 50);
  assert_int_equal(rowan_step(count), ROWAN_ROW);
  assert_int_equal(rowan_column_int64(count, 0), 50 * BATCH);
  rowan_finalize(count);
  /* on the writer, and on nothing */
  assert_int_equal(rowan_refresh(w), ROWAN_OK);
  assert_int_equal(rowan_refresh(NULL), ROWAN_MISUSE);
  assert_int_equal(rowan_close(r), ROWAN_OK);
  assert_int_equal(rowan_close(w), ROWAN_OK);
  kv_env_free(env);
}

/* A read-only handle needs no write permission on the database (a real directory). As root
** permissions do not bite: then only the open beside a writer is checked. */
static void test_without_write_permission(void **state) {
  (void)state;
  char dir[] = "/tmp/rowan_ro_XXXXXX", cmd[600];
  assert_non_null(mkdtemp(dir));
  char db[300];
  snprintf(db, sizeof db, "%s/db", dir);
  rowan_db *w = open_as(db, NULL, 0, 64 << 10);
  exec_ok(w, "CREATE TABLE T (K INTEGER PRIMARY KEY, B INTEGER, V VARCHAR)");
  for (int b = 0; b < 30; b++) assert_int_equal(write_batch(w, b), ROWAN_OK);
  assert_int_equal(rowan_flush(w), ROWAN_OK);
  for (int b = 30; b < 35; b++) assert_int_equal(write_batch(w, b), ROWAN_OK);
  /* a copy of it, every file and folder made read-only */
  snprintf(cmd, sizeof cmd, "cp -r '%s' '%s/copy' && rm -f '%s/copy/LOCK' && chmod -R a-w '%s/copy'",
           db, dir, dir, dir);
  assert_int_equal(system(cmd), 0);
  bool root = geteuid() == 0;
  char copy[300];
  snprintf(copy, sizeof copy, "%s/copy", dir);
  rowan_db *r = open_as(copy, NULL, 1, 0);
  assert_int_equal(batches(r, "read-only copy"), 35);
  assert_int_equal(rowan_refresh(r), ROWAN_OK);
  assert_int_equal(rowan_close(r), ROWAN_OK);
  if (!root) { /* the permissions do bite: a writable open fails */
    rowan_options o;
    rowan_options_init(&o);
    o.create_if_missing = 0;
    rowan_db *x = NULL;
    assert_int_not_equal(rowan_open(copy, &o, &x), ROWAN_OK);
    rowan_close(x);
  } else {
    fprintf(stderr, "running as root: the permission part is not checked (chmod does not bite)\n");
  }
  struct stat st;
  snprintf(cmd, sizeof cmd, "%s/LOCK", copy);
  assert_int_not_equal(stat(cmd, &st), 0); /* nothing written: not even a LOCK file */
  /* the live directory, its writer open, read-only too for everyone else */
  snprintf(cmd, sizeof cmd, "chmod a-w '%s'", db);
  assert_int_equal(system(cmd), 0);
  r = open_as(db, NULL, 1, 0);
  assert_int_equal(batches(r, "beside the writer"), 35);
  snprintf(cmd, sizeof cmd, "chmod u+w '%s'", db);
  assert_int_equal(system(cmd), 0);
  for (int b = 35; b < 40; b++) assert_int_equal(write_batch(w, b), ROWAN_OK);
  assert_int_equal(rowan_refresh(r), ROWAN_OK);
  assert_int_equal(batches(r, "refreshed"), 40);
  assert_int_equal(rowan_close(r), ROWAN_OK);
  assert_int_equal(rowan_close(w), ROWAN_OK);
  snprintf(cmd, sizeof cmd, "chmod -R u+w '%s' && rm -rf '%s'", dir, dir);
  assert_int_equal(system(cmd), 0);
}

/* ---- rowan_backup -------------------------------------------------------------------------- */

typedef struct wctx {
  rowan_db *db;
  atomic_int acked;   /* batches whose COMMIT returned */
  atomic_int stop;
  int max;
} wctx;

static void *writer_thread(void *arg) {
  wctx *c = arg;
  for (int b = 0; b < c->max && !atomic_load(&c->stop); b++) {
    if (write_batch(c->db, b) != ROWAN_OK) {
      fprintf(stderr, "writer: %s\n", rowan_errmsg(c->db));
      break;
    }
    atomic_store(&c->acked, b + 1);
    if (b % 200 == 199) rowan_compact(c->db, b % 400 == 399);
  }
  return NULL;
}

static void test_backup(void **state) {
  (void)state;
  kv_env *env = kv_env_mem_new(1);
  rowan_db *w = open_as("/db", env, 0, 32 << 10);
  exec_ok(w, "CREATE TABLE T (K INTEGER PRIMARY KEY, B INTEGER, V VARCHAR)");
  for (int b = 0; b < 30; b++) assert_int_equal(write_batch(w, b), ROWAN_OK);
  char msg[512];
  assert_int_equal(rowan_backup(w, "/bak", msg, sizeof msg), ROWAN_OK);
  assert_string_equal(msg, "");
  assert_int_equal(rowan_backup(w, "/bak", msg, sizeof msg), ROWAN_ERROR);
  assert_non_null(strstr(msg, "not empty"));
  assert_int_equal(rowan_backup(w, NULL, msg, sizeof msg), ROWAN_MISUSE);
  assert_int_equal(rowan_backup(NULL, "/x", NULL, 0), ROWAN_MISUSE);
  rowan_db *r = open_as("/db", env, 1, 0);
  assert_int_equal(rowan_backup(r, "/bak2", msg, sizeof msg), ROWAN_READONLY);
  rowan_close(r);
  rowan_db *c = open_as("/bak", env, 0, 0);
  assert_int_equal(batches(c, "copy"), 30);
  exec_ok(c, "UPSERT INTO T VALUES (100000, 99999, 'x')"); /* a database of its own */
  rowan_close(c);
  assert_int_equal(one_int(w, "SELECT COUNT(*) FROM T WHERE K = 100000"), 0);
  /* backups while another thread writes through the same handle */
  wctx wc = {w, 0, 0, (int)tu_scaled(3000, 600)};
  pthread_t t;
  assert_int_equal(pthread_create(&t, NULL, writer_thread, &wc), 0);
  int n = (int)tu_scaled(8, 3), last = 0;
  for (int k = 0; k < n; k++) {
    while (atomic_load(&wc.acked) < (k + 1) * wc.max / (n + 1)) {
      struct timespec ts = {0, 2000000};
      nanosleep(&ts, NULL);
    }
    char dir[32];
    snprintf(dir, sizeof dir, "/bak_%d", k);
    int before = atomic_load(&wc.acked);
    int rc = rowan_backup(w, dir, msg, sizeof msg);
    if (rc != ROWAN_OK) fail_msg("backup %s: %s", dir, msg);
    int after = atomic_load(&wc.acked);
    c = open_as(dir, env, 1, 0);
    int m = batches(c, dir);
    if (m < before || m > after + 1) fail_msg("%s: %d batches, %d before, %d after", dir, m, before, after);
    assert_true(m >= last);
    last = m;
    rowan_close(c);
  }
  atomic_store(&wc.stop, 1);
  pthread_join(t, NULL);
  assert_int_equal(batches(w, "source"), atomic_load(&wc.acked));
  assert_int_equal(rowan_close(w), ROWAN_OK);
  kv_env_free(env);
}

/* ---- a reader process beside a writer process ---------------------------------------------- */

typedef struct shared {
  atomic_int acked;   /* batches committed */
  atomic_int tables;  /* tables X0, X1, ... created (each with one row) */
  atomic_int stop;
  atomic_int ready;
} shared;

static void child(const char *db, shared *sh, int max) {
  rowan_options o;
  rowan_options_init(&o);
  o.sync_mode = ROWAN_SYNC_NORMAL;
  o.memstore_size = 48 << 10;
  o.wal_limit = 128 << 10;
  rowan_db *w = NULL;
  if (rowan_open(db, &o, &w) != ROWAN_OK ||
      rowan_exec(w, "CREATE TABLE T (K INTEGER PRIMARY KEY, B INTEGER, V VARCHAR)", NULL, NULL))
    _exit(3);
  atomic_store(&sh->ready, 1);
  for (int b = 0; b < max && !atomic_load(&sh->stop); b++) {
    if (write_batch(w, b) != ROWAN_OK) {
      fprintf(stderr, "child: %s\n", rowan_errmsg(w));
      _exit(4);
    }
    atomic_store(&sh->acked, b + 1);
    if (b % 60 == 59) {
      char sql[128];
      int x = atomic_load(&sh->tables);
      snprintf(sql, sizeof sql, "CREATE TABLE X%d (K INTEGER PRIMARY KEY); UPSERT INTO X%d VALUES (%d)",
               x, x, x);
      if (rowan_exec(w, sql, NULL, NULL) != ROWAN_OK) _exit(5);
      atomic_store(&sh->tables, x + 1);
    }
    if (b % 250 == 249 && rowan_compact(w, 1) != ROWAN_OK) _exit(6);
  }
  _exit(rowan_close(w) == ROWAN_OK ? 0 : 7);
}

static void test_reader_process(void **state) {
  (void)state;
  char dir[] = "/tmp/rowan_ro_fork_XXXXXX", db[300], cmd[400];
  assert_non_null(mkdtemp(dir));
  snprintf(db, sizeof db, "%s/db", dir);
  shared *sh = mmap(NULL, sizeof *sh, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  assert_true(sh != MAP_FAILED);
  memset(sh, 0, sizeof *sh);
  int max = (int)tu_scaled(2000, 500);
  fflush(NULL);
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) child(db, sh, max);
  while (!atomic_load(&sh->ready)) usleep(1000);
  int rounds = (int)tu_scaled(10, 4);
  for (int k = 0; k < rounds && atomic_load(&sh->acked) < max; k++) {
    int before = atomic_load(&sh->acked), tables = atomic_load(&sh->tables);
    rowan_db *r = open_as(db, NULL, 1, 0);
    for (int j = 0; j < 3; j++) {
      int m = batches(r, "reader process");
      if (m < before) fail_msg("%d batches shown, %d committed before", m, before);
      for (int x = 0; x < tables; x++) { /* every table created before is there */
        char sql[64];
        snprintf(sql, sizeof sql, "SELECT K FROM X%d", x);
        assert_int_equal(one_int(r, sql), x);
      }
      usleep(5000);
      before = atomic_load(&sh->acked);
      tables = atomic_load(&sh->tables);
      if (rowan_refresh(r) != ROWAN_OK) fail_msg("refresh: %s", rowan_errmsg(r));
    }
    assert_int_equal(rowan_close(r), ROWAN_OK);
  }
  atomic_store(&sh->stop, 1);
  int status = 0;
  assert_int_equal(waitpid(pid, &status, 0), pid);
  assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  rowan_db *r = open_as(db, NULL, 1, 0);
  assert_int_equal(batches(r, "after the writer"), atomic_load(&sh->acked));
  rowan_close(r);
  munmap(sh, sizeof *sh);
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  assert_int_equal(system(cmd), 0);
}

/* A join past the join memory: the writer spills it to disk; a read-only handle, which
** writes nothing in the directory, refuses it with a message saying so. */
static void test_reader_join_memory(void **state) {
  (void)state;
  kv_env *env = kv_env_mem_new(0);
  rowan_db *w = open_as("/jm", env, 0, 0);
  exec_ok(w, "CREATE TABLE T (K INTEGER PRIMARY KEY, B INTEGER, V VARCHAR)");
  for (int b = 0; b < 20; b++) assert_int_equal(write_batch(w, b), ROWAN_OK);
  assert_int_equal(rowan_close(w), ROWAN_OK);
  const char *sql = "SELECT COUNT(*) FROM T a JOIN T b ON a.B = b.B";
  for (int ro = 0; ro < 2; ro++) {
    rowan_options o;
    rowan_options_init(&o);
    o.kv_env = env;
    o.read_only = ro;
    o.join_memory = 4096;
    rowan_db *db = NULL;
    assert_int_equal(rowan_open("/jm", &o, &db), ROWAN_OK);
    rowan_stmt *st = NULL;
    assert_int_equal(rowan_prepare(db, sql, -1, &st, NULL), ROWAN_OK);
    int rc = rowan_step(st);
    if (!ro) {
      assert_int_equal(rc, ROWAN_ROW);
      assert_int_equal(rowan_column_int64(st, 0), 2000); /* 20 batches of 10 rows: 10 x 10 */
    } else {
      assert_int_equal(rc, ROWAN_TOOBIG);
      assert_non_null(strstr(rowan_errmsg(db), "a read-only handle cannot spill it to disk"));
      /* which input passed which bound, as the other join memory errors say */
      assert_non_null(strstr(rowan_errmsg(db), "the hash join's build input (T) needs more "
                                               "than 4 KiB of memory (the join memory limit)"));
    }
    rowan_finalize(st);
    assert_int_equal(rowan_close(db), ROWAN_OK);
  }
  kv_env_free(env);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_reader_beside_writer),
      cmocka_unit_test(test_without_write_permission),
      cmocka_unit_test(test_backup),
      cmocka_unit_test(test_reader_join_memory),
      cmocka_unit_test(test_reader_process),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
