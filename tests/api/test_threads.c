/*
** tests/api/test_threads.c: the thread-safety rules of include/rowan.h, as an application
** relies on them:
**  - separate connections (each its own database) run in parallel threads without
**    interfering: every thread's rows and counts are exactly its own;
**  - one connection shared by several threads that serialize their calls with their own
**    mutex (the documented rule) gives every thread correct results and loses no write;
**  - a database directory is open in one connection at a time: a second rowan_open of the
**    same directory, from another thread of the same process, gets ROWAN_LOCKED.
** The suite also runs under ThreadSanitizer in CI (.ci/run). Not here: SQL semantics.
*/
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "kv/env/env_mem.h"
#include "rowan.h"
#include "testutil.h"

#define N_THREADS 4

static rowan_db *open_at(const char *path, kv_env *env) {
  rowan_options o;
  rowan_options_init(&o);
  o.kv_env = env;
  o.sync_mode = ROWAN_SYNC_NORMAL;
  rowan_db *db = NULL;
  int rc = rowan_open(path, &o, &db);
  if (rc != ROWAN_OK) fprintf(stderr, "open %s: %s\n", path, db ? rowan_errmsg(db) : "?");
  return rc == ROWAN_OK ? db : NULL;
}

/* Run sql; returns the rowan code (0 on success). */
static int run(rowan_db *db, const char *sql) {
  return rowan_exec(db, sql, NULL, NULL);
}

/* SELECT returning one integer (or -1 on error). */
static int64_t scalar(rowan_db *db, const char *sql) {
  rowan_stmt *st = NULL;
  if (rowan_prepare(db, sql, -1, &st, NULL) != ROWAN_OK || !st) return -1;
  int64_t v = rowan_step(st) == ROWAN_ROW ? rowan_column_int64(st, 0) : -1;
  rowan_finalize(st);
  return v;
}

/* ---- separate connections in parallel ---- */
typedef struct own_job {
  int id;          /* thread number */
  int rows;        /* rows to write */
  int failures;    /* checks that failed (reported by the main thread) */
} own_job;

static void *own_db_thread(void *arg) {
  own_job *j = arg;
  kv_env *env = kv_env_mem_new(0);
  rowan_db *db = open_at("/db", env);
  if (!db) { j->failures++; kv_env_free(env); return NULL; }
  if (run(db, "CREATE TABLE T (K INTEGER NOT NULL, V INTEGER, CONSTRAINT PK PRIMARY KEY (K))"))
    j->failures++;
  rowan_stmt *ins = NULL;
  if (rowan_prepare(db, "UPSERT INTO T VALUES (?, ?)", -1, &ins, NULL) != ROWAN_OK) j->failures++;
  for (int i = 0; ins && i < j->rows; i++) {
    rowan_bind_int64(ins, 1, i);
    rowan_bind_int64(ins, 2, (int64_t)i * 10 + j->id); /* the thread's own mark */
    if (rowan_step(ins) != ROWAN_DONE) j->failures++;
    rowan_reset(ins);
  }
  rowan_finalize(ins);
  if (scalar(db, "SELECT COUNT(*) FROM T") != j->rows) j->failures++;
  char sql[128];
  snprintf(sql, sizeof sql, "SELECT COUNT(*) FROM T WHERE V %% 10 <> %d", j->id);
  if (scalar(db, sql) != 0) j->failures++; /* nothing of another thread's */
  if (rowan_close(db) != ROWAN_OK) j->failures++;
  kv_env_free(env);
  return NULL;
}

static void test_separate_connections_in_parallel(void **state) {
  (void)state;
  pthread_t th[N_THREADS];
  own_job jobs[N_THREADS];
  for (int i = 0; i < N_THREADS; i++) {
    jobs[i] = (own_job){i, (int)tu_scaled(2000, 200), 0};
    assert_int_equal(pthread_create(&th[i], NULL, own_db_thread, &jobs[i]), 0);
  }
  for (int i = 0; i < N_THREADS; i++) {
    pthread_join(th[i], NULL);
    assert_int_equal(jobs[i].failures, 0);
  }
}

/* ---- one connection, calls serialized by the application ---- */
typedef struct shared_job {
  rowan_db *db;            /* the shared connection */
  pthread_mutex_t *mu;     /* the application's lock around every call */
  int id;                  /* thread number: keys id*1000000 + i */
  int rows;                /* rows to write */
  int failures;            /* checks that failed */
} shared_job;

static void *shared_db_thread(void *arg) {
  shared_job *j = arg;
  for (int i = 0; i < j->rows; i++) {
    char sql[160];
    snprintf(sql, sizeof sql, "UPSERT INTO T VALUES (%d, %d)", j->id * 1000000 + i, j->id);
    pthread_mutex_lock(j->mu);
    if (run(j->db, sql) != ROWAN_OK) j->failures++;
    if (i % 97 == 0) {
      snprintf(sql, sizeof sql, "SELECT COUNT(*) FROM T WHERE K >= %d AND K < %d",
               j->id * 1000000, j->id * 1000000 + 1000000);
      if (scalar(j->db, sql) != i + 1) j->failures++; /* its own rows so far, all visible */
    }
    pthread_mutex_unlock(j->mu);
  }
  return NULL;
}

static void test_shared_connection_serialized(void **state) {
  (void)state;
  kv_env *env = kv_env_mem_new(0);
  rowan_db *db = open_at("/db", env);
  assert_non_null(db);
  assert_int_equal(run(db, "CREATE TABLE T (K INTEGER NOT NULL, V INTEGER, "
                           "CONSTRAINT PK PRIMARY KEY (K))"), ROWAN_OK);
  pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
  pthread_t th[N_THREADS];
  shared_job jobs[N_THREADS];
  int rows = (int)tu_scaled(1000, 100);
  for (int i = 0; i < N_THREADS; i++) {
    jobs[i] = (shared_job){db, &mu, i + 1, rows, 0};
    assert_int_equal(pthread_create(&th[i], NULL, shared_db_thread, &jobs[i]), 0);
  }
  for (int i = 0; i < N_THREADS; i++) {
    pthread_join(th[i], NULL);
    assert_int_equal(jobs[i].failures, 0);
  }
  assert_int_equal(scalar(db, "SELECT COUNT(*) FROM T"), (int64_t)N_THREADS * rows);
  for (int i = 1; i <= N_THREADS; i++) {
    char sql[96];
    snprintf(sql, sizeof sql, "SELECT COUNT(*) FROM T WHERE V = %d", i);
    assert_int_equal(scalar(db, sql), rows);
  }
  assert_int_equal(rowan_close(db), ROWAN_OK);
  kv_env_free(env);
}

/* ---- one directory, one connection at a time ---- */
typedef struct lock_job {
  const char *path;  /* the database directory */
  int rc;            /* rowan_open's result in the thread */
  char msg[256];     /* its message */
} lock_job;

static void *second_open_thread(void *arg) {
  lock_job *j = arg;
  rowan_db *db = NULL;
  j->rc = rowan_open(j->path, NULL, &db);
  snprintf(j->msg, sizeof j->msg, "%s", db ? rowan_errmsg(db) : "");
  if (db) rowan_close(db);
  return NULL;
}

static void test_second_open_from_another_thread_is_locked(void **state) {
  (void)state;
  char dir[] = "/tmp/rowan-threads-XXXXXX";
  assert_non_null(mkdtemp(dir));
  char path[sizeof dir + 8];
  snprintf(path, sizeof path, "%s/db", dir);
  rowan_db *db = open_at(path, NULL);
  assert_non_null(db);
  lock_job j = {path, -1, ""};
  pthread_t th;
  assert_int_equal(pthread_create(&th, NULL, second_open_thread, &j), 0);
  pthread_join(th, NULL);
  assert_int_equal(j.rc, ROWAN_LOCKED);
  assert_non_null(strstr(j.msg, "locked"));
  assert_int_equal(rowan_close(db), ROWAN_OK);
  /* once closed, another thread may open it */
  assert_int_equal(pthread_create(&th, NULL, second_open_thread, &j), 0);
  pthread_join(th, NULL);
  assert_int_equal(j.rc, ROWAN_OK);
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  assert_int_equal(system(cmd), 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_separate_connections_in_parallel),
      cmocka_unit_test(test_shared_connection_serialized),
      cmocka_unit_test(test_second_open_from_another_thread_is_locked),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
