/*
** tests/api/test_atomic_stmt.c: a write statement outside BEGIN ... COMMIT is atomic whatever
** its size (include/rowan.h, "Atomic statements"; exec/write.c), on the in-memory file
** system with bulk_memory at its 1 MiB minimum, so a statement of a few thousand rows moves
** its batch into a kv bulk load (past 64 KiB) and that load pages out and spills to
** temporary files (past 1 MiB):
**  - small statements stay on the WAL path (no store file, no temporary file);
**  - large UPSERT ... SELECT (keys in order, in reverse, each written seven times far apart)
**    and DELETE (a key range, an index range) give what a model of the table says, and both
**    indexes agree with the table (CHECK INDEX), after a reopen too;
**  - interrupted (rowan_interrupt from the file system's hook when the statement creates its
**    first temporary file, and from another thread at random moments), failing (a value
**    that does not convert, an I/O error and a full disk in a temporary file, in the final
**    store file, in the MANIFEST record), each leaves the table exactly as before (checksum
**    of every row), the indexes agreeing, no temporary file and no store file of the
**    statement left;
**  - inside BEGIN ... COMMIT an interrupted statement is rolled back alone;
**  - a SELECT running across a large statement sees none of it; later ones see all of it;
**  - time order: a large statement after the clock stepped back still wins over the
**    write before it, and a write after it wins over it.
** Seeded (tu_seed). Not here: kills of the process (test_atomic_kill.c), transactions
** (test_break_txn_lifecycle.c).
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
#include "testutil.h"
#include "tu_api.h"
#include "atomic_test_util.h"

#define CLOCK0 1700000000000LL

/* ---- A file system that watches the store's files ---------------------------------------- */
/* Every call goes to the in-memory env; opens for writing are counted by kind, the paths of
** store files opened are kept, and the nth temporary file opened may call rowan_interrupt. */
typedef struct watch_env {
  kv_env base;            /* the methods; first member */
  kv_env *inner;          /* the in-memory env */
  atomic_int runs;        /* temporary files (.run) opened for writing */
  atomic_int sfs;         /* store files (.sf) opened for writing */
  char sf_paths[64][256]; /* the first 64 of those */
  atomic_int interrupt_at; /* the .run open that interrupts (1 = first), 0 = none */
  rowan_db *db;           /* the connection to interrupt */
} watch_env;

static kv_env *inner_of(kv_env *env) { return ((watch_env *)env)->inner; }

static int w_open(kv_env *env, const char *path, int flags, kv_file **out) {
  watch_env *w = (watch_env *)env;
  if (flags & KV_OPEN_WRITE) {
    if (strstr(path, ".run")) {
      int n = atomic_fetch_add(&w->runs, 1) + 1;
      if (n == atomic_load(&w->interrupt_at)) rowan_interrupt(w->db);
    } else if (strstr(path, ".sf")) {
      int n = atomic_fetch_add(&w->sfs, 1);
      if (n < 64) snprintf(w->sf_paths[n], sizeof w->sf_paths[n], "%s", path);
    }
  }
  return w->inner->open(w->inner, path, flags, out);
}
static int w_rename(kv_env *env, const char *a, const char *b) {
  return inner_of(env)->rename(inner_of(env), a, b);
}
static int w_remove(kv_env *env, const char *p) { return inner_of(env)->remove(inner_of(env), p); }
static int w_mkdir(kv_env *env, const char *p) { return inner_of(env)->mkdir(inner_of(env), p); }
static int w_rmdir(kv_env *env, const char *p) { return inner_of(env)->rmdir(inner_of(env), p); }
static int w_sync_dir(kv_env *env, const char *p) {
  return inner_of(env)->sync_dir(inner_of(env), p);
}
static int w_exists(kv_env *env, const char *p) { return inner_of(env)->exists(inner_of(env), p); }
static int w_list(kv_env *env, const char *p, kv_env_list_fn fn, void *ctx) {
  return inner_of(env)->list(inner_of(env), p, fn, ctx);
}
static int w_lock(kv_env *env, const char *p, kv_file **l) {
  return inner_of(env)->lock(inner_of(env), p, l);
}
static int w_unlock(kv_env *env, kv_file *l) { return inner_of(env)->unlock(inner_of(env), l); }
static int64_t w_now(kv_env *env) { return inner_of(env)->now_ms(inner_of(env)); }

static watch_env *watch_new(void) {
  watch_env *w = calloc(1, sizeof *w);
  w->inner = kv_env_mem_new(CLOCK0);
  w->base = *w->inner;
  w->base.open = w_open;
  w->base.rename = w_rename;
  w->base.remove = w_remove;
  w->base.mkdir = w_mkdir;
  w->base.rmdir = w_rmdir;
  w->base.sync_dir = w_sync_dir;
  w->base.exists = w_exists;
  w->base.list = w_list;
  w->base.lock = w_lock;
  w->base.unlock = w_unlock;
  w->base.now_ms = w_now;
  w->base.destroy = NULL;
  return w;
}

static void watch_free(watch_env *w) {
  kv_env_free(w->inner);
  free(w);
}

static void watch_reset(watch_env *w) {
  atomic_store(&w->runs, 0);
  atomic_store(&w->sfs, 0);
  atomic_store(&w->interrupt_at, 0);
}

static rowan_db *open_db(watch_env *w) {
  rowan_options o;
  rowan_options_init(&o);
  o.kv_env = &w->base;
  o.sync_mode = ROWAN_SYNC_NORMAL;
  o.bulk_memory = 1 << 20; /* the minimum: the statements below spill */
  rowan_db *db = NULL;
  int rc = rowan_open("/db", &o, &db);
  if (rc != ROWAN_OK) fail_msg("open: %s", db ? rowan_errmsg(db) : rowan_errstr(rc));
  w->db = db;
  return db;
}

/* Count the files under dir (recursively) whose names end with suffix. */
typedef struct count_ctx {
  kv_env *env;
  const char *dir;
  const char *suffix;
  int n;
} count_ctx;

static int count_one(void *arg, const char *name);

static int count_files(kv_env *env, const char *dir, const char *suffix) {
  count_ctx c = {env, dir, suffix, 0};
  env->list(env, dir, count_one, &c);
  return c.n;
}

static int count_one(void *arg, const char *name) {
  count_ctx *c = arg;
  char p[512];
  snprintf(p, sizeof p, "%s/%s", c->dir, name);
  size_t n = strlen(name), s = strlen(c->suffix);
  if (n >= s && strcmp(name + n - s, c->suffix) == 0) c->n++;
  else if (!strchr(name, '.')) c->n += count_files(c->env, p, c->suffix); /* a folder */
  return 0;
}

/* T is the model's, and so are its indexes' rows (as index scans read them); with `check`,
** CHECK INDEX finds nothing wrong too. */
static void expect_model_check(rowan_db *db, const at_model *m, const char *what, bool check) {
  int64_t want_rows, got_rows;
  int rc;
  uint64_t want = at_model_sum(m, &want_rows), got = at_db_sum(db, &got_rows, &rc);
  if (rc != ROWAN_OK) fail_msg("%s: reading T: %s", what, rowan_errmsg(db));
  if (got != want)
    fail_msg("%s: T has %lld rows (checksum %llx), the model %lld (%llx)", what,
             (long long)got_rows, (unsigned long long)got, (long long)want_rows,
             (unsigned long long)want);
  got = at_db_index_sum(db, &rc);
  if (rc != ROWAN_OK) fail_msg("%s: reading the indexes: %s", what, rowan_errmsg(db));
  if (got != at_model_index_sum(m)) fail_msg("%s: the index rows are not the model's", what);
  int bad = check ? at_index_problems(db) : 0;
  if (bad) fail_msg("%s: CHECK INDEX finds %d problems (%s)", what, bad, rowan_errmsg(db));
}

static void expect_model(rowan_db *db, const at_model *m, const char *what) {
  expect_model_check(db, m, what, false);
}

/* Nothing the failed statement made is left: no temporary file, none of its store files. */
static void expect_no_leftovers(watch_env *w, const char *what) {
  int runs = count_files(&w->base, "/db", ".run");
  if (runs) fail_msg("%s: %d temporary files left", what, runs);
  int n = atomic_load(&w->sfs);
  for (int i = 0; i < n && i < 64; i++)
    if (w->inner->exists(w->inner, w->sf_paths[i]))
      fail_msg("%s: store file %s of the failed statement is left", what, w->sf_paths[i]);
}

static int64_t g_n;   /* rows of S */
static int g_stride;  /* 2, or 3 under ROWAN_TEST_SCALE < 1 (sanitizers): of the runs below
                         (a fault, an interrupt) for each kind, every g_stride-th is made */

/* Flush, so no background flush or compaction writes a store file while the next statement
** runs (expect_no_leftovers takes every store file opened then as its): kv_flush returns
** when no compaction is due either, and a statement that fails commits nothing. */
static void quiesce(rowan_db *db) { assert_int_equal(api_test_flush(db), ROWAN_OK); }

/* A store with S of g_n rows and T filled by statement kinds 0 and 1; m is T's model. */
static rowan_db *fixture(watch_env *w, at_model **m) {
  rowan_db *db = open_db(w);
  at_setup(db, g_n);
  *m = at_model_new(2 * g_n);
  char sql[256];
  for (int kind = 0; kind < 2; kind++) {
    at_sql(kind, kind * 3 + 1, g_n, sql, sizeof sql);
    exec_ok(db, sql);
    at_apply(*m, kind, kind * 3 + 1, g_n);
  }
  expect_model(db, *m, "fixture");
  return db;
}

static void test_small_fast_path(void **state) {
  (void)state;
  watch_env *w = watch_new();
  rowan_db *db = open_db(w);
  at_setup(db, 2000);
  assert_int_equal(api_test_flush(db), ROWAN_OK);
  watch_reset(w);
  exec_ok(db, "UPSERT INTO T (K, V, W) SELECT K, V, W FROM S WHERE K < 200");
  assert_int_equal(rowan_changes(db), 200);
  exec_ok(db, "DELETE FROM T WHERE K < 100");
  assert_int_equal(rowan_changes(db), 100);
  /* one WAL record each: no store file written, no temporary file */
  assert_int_equal(atomic_load(&w->runs), 0);
  assert_int_equal(atomic_load(&w->sfs), 0);
  assert_int_equal(at_index_problems(db), 0);
  assert_int_equal(rowan_close(db), ROWAN_OK);
  watch_free(w);
}

static void test_large_statements(void **state) {
  (void)state;
  watch_env *w = watch_new();
  at_model *m;
  rowan_db *db = fixture(w, &m);
  char sql[256];
  for (int kind = 0; kind < AT_KINDS; kind++) {
    int64_t r = 11 + kind * 97;
    at_sql(kind, r, g_n, sql, sizeof sql);
    watch_reset(w);
    exec_ok(db, sql);
    at_apply(m, kind, r, g_n);
    expect_model(db, m, sql); /* CHECK INDEX too after the reopen below */
    if (kind == 0 || kind == 1 || kind == 4) { /* UPSERTs of every row of S: installed */
      assert_int_equal(rowan_changes(db), g_n);
      assert_true(atomic_load(&w->sfs) > 0);
    }
    assert_int_equal(count_files(&w->base, "/db", ".run"), 0);
  }
  assert_int_equal(rowan_close(db), ROWAN_OK);
  db = open_db(w);
  expect_model_check(db, m, "after a reopen", true);
  assert_int_equal(rowan_close(db), ROWAN_OK);
  at_model_free(m);
  watch_free(w);
}

/* The interrupter: from `go` on, rowan_interrupt every few microseconds until `stop`. */
typedef struct intr {
  rowan_db *db;
  long delay_us;
  atomic_int stop;
} intr;

static void *interrupter(void *arg) {
  intr *t = arg;
  struct timespec d = {t->delay_us / 1000000, (t->delay_us % 1000000) * 1000};
  nanosleep(&d, NULL);
  while (!atomic_load(&t->stop)) {
    rowan_interrupt(t->db);
    struct timespec ts = {0, 20000};
    nanosleep(&ts, NULL);
  }
  return NULL;
}

static void test_interrupted(void **state) {
  (void)state;
  uint64_t seed = tu_seed("atomic_stmt_interrupted");
  watch_env *w = watch_new();
  at_model *m;
  rowan_db *db = fixture(w, &m);
  char sql[256];
  at_sql(4, 0, g_n, sql, sizeof sql); /* T gets twice as many rows: DELETEs spill too */
  exec_ok(db, sql);
  at_apply(m, 4, 0, g_n);
  for (int kind = 0; kind < AT_KINDS; kind++) {
    at_sql(kind, 5 + kind, g_n, sql, sizeof sql);
    /* at the statement's first and second temporary file: it has spilled into its load
       (the smaller DELETEs of kinds 2 and 3 stay under the load's bound until their commit,
       where a temporary file comes too late to interrupt them: the thread below does) */
    for (int at = 1; at <= 4 - g_stride && kind != 2 && kind != 3; at++) {
      quiesce(db);
      watch_reset(w);
      atomic_store(&w->interrupt_at, at);
      int rc = rowan_exec(db, sql, NULL, NULL);
      if (rc != ROWAN_INTERRUPT)
        fail_msg("%s (interrupt at temporary file %d): %s %s", sql, at, rowan_errstr(rc),
                 rowan_errmsg(db));
      assert_string_equal(rowan_errmsg(db), "interrupted");
      assert_true(atomic_load(&w->runs) >= at);
      expect_no_leftovers(w, sql);
      expect_model(db, m, sql);
    }
    /* from another thread at a random moment: interrupted, or done if it was quicker */
    for (int i = 0; i < (kind == 2 || kind == 3 ? 2 : 3 - g_stride); i++) {
      quiesce(db);
      watch_reset(w);
      intr t = {db, (long)tu_below(&seed, 60000), 0};
      pthread_t th;
      assert_int_equal(pthread_create(&th, NULL, interrupter, &t), 0);
      int rc = rowan_exec(db, sql, NULL, NULL);
      atomic_store(&t.stop, 1);
      pthread_join(th, NULL);
      if (rc == ROWAN_OK) {
        at_apply(m, kind, 5 + kind, g_n);
      } else {
        if (rc != ROWAN_INTERRUPT) fail_msg("%s: %s", sql, rowan_errmsg(db));
        expect_no_leftovers(w, sql);
      }
      expect_model(db, m, sql);
    }
  }
  /* inside BEGIN ... COMMIT the interrupted statement is rolled back alone */
  char w7[64];
  at_sw(7, w7, sizeof w7);
  snprintf(sql, sizeof sql, "BEGIN; UPSERT INTO T (K, V, W) VALUES (7, -7, '%s')", w7);
  exec_ok(db, sql);
  at_sql(0, 77, g_n, sql, sizeof sql);
  intr t = {db, 0, 0};
  pthread_t th;
  assert_int_equal(pthread_create(&th, NULL, interrupter, &t), 0);
  int rc = rowan_exec(db, sql, NULL, NULL);
  atomic_store(&t.stop, 1);
  pthread_join(th, NULL);
  assert_true(rc == ROWAN_INTERRUPT || rc == ROWAN_OK);
  exec_ok(db, "COMMIT");
  if (!m->exists[7]) m->has_x[7] = false; /* a new row 7 (an earlier DELETE took it): no X */
  m->exists[7] = true;
  m->v[7] = -7;
  m->wk[7] = 7;
  if (rc == ROWAN_OK) at_apply(m, 0, 77, g_n);
  expect_model(db, m, "a transaction with an interrupted statement");
  assert_int_equal(rowan_close(db), ROWAN_OK);
  db = open_db(w);
  expect_model_check(db, m, "reopened after the interrupts", true);
  assert_int_equal(rowan_close(db), ROWAN_OK);
  at_model_free(m);
  watch_free(w);
}

/* A fault of the in-memory env on the nth `op` of a file whose path holds `path`. */
typedef struct fault {
  int op;
  uint64_t nth;
  const char *path;
  int kind;
  int code; /* the statement's result */
} fault;

static void test_failures(void **state) {
  (void)state;
  watch_env *w = watch_new();
  at_model *m;
  rowan_db *db = fixture(w, &m);
  char sql[256];
  /* a value that does not convert, late in the statement: after several spills */
  snprintf(sql, sizeof sql,
           "UPSERT INTO T (K, V, W) SELECT K, CASE WHEN K < %lld THEN V ELSE V / (K - K) END, "
           "W FROM S",
           (long long)(g_n * 9 / 10));
  quiesce(db);
  watch_reset(w);
  assert_int_equal(rowan_exec(db, sql, NULL, NULL), ROWAN_CONSTRAINT);
  assert_true(atomic_load(&w->runs) > 0);
  expect_no_leftovers(w, "a constraint failure");
  expect_model(db, m, "a constraint failure");
  const fault faults[] = {
      {KV_FAULT_APPEND, 1, ".run", KV_FAULT_EIO, ROWAN_IOERR},     /* spilling */
      {KV_FAULT_APPEND, 3, ".run", KV_FAULT_ENOSPC, ROWAN_FULL},   /* spilling, later */
      {KV_FAULT_OPEN, 2, ".run", KV_FAULT_EIO, ROWAN_IOERR},       /* a temporary file */
      {KV_FAULT_APPEND, 1, ".sf", KV_FAULT_ENOSPC, ROWAN_FULL},    /* the final files */
      {KV_FAULT_SYNC, 2, ".sf", KV_FAULT_EIO, ROWAN_IOERR},        /* syncing them */
  };
  for (int kind = 0; kind < AT_KINDS; kind++) {
    at_sql(kind, 21 + kind, g_n, sql, sizeof sql);
    for (size_t f = 0; f < sizeof faults / sizeof *faults; f++) {
      if ((f + (size_t)kind) % (size_t)g_stride) continue; /* each fault on some kinds */
      quiesce(db);
      watch_reset(w);
      kv_env_mem_fail(w->inner, faults[f].op, faults[f].nth, faults[f].path, faults[f].kind, 0);
      int rc = rowan_exec(db, sql, NULL, NULL);
      kv_env_mem_clear_faults(w->inner);
      if (rc == ROWAN_OK) { /* the fault did not meet the statement (a small DELETE) */
        at_apply(m, kind, 21 + kind, g_n);
      } else if (rc != faults[f].code) {
        fail_msg("%s, fault %zu: %s %s", sql, f, rowan_errstr(rc), rowan_errmsg(db));
      } else {
        expect_no_leftovers(w, sql);
      }
      expect_model(db, m, sql);
    }
  }
  /* the MANIFEST record itself: the store stops taking writes; reopened, as before */
  at_sql(0, 99, g_n, sql, sizeof sql);
  quiesce(db);
  kv_env_mem_fail(w->inner, KV_FAULT_APPEND, 1, "MANIFEST", KV_FAULT_EIO, 0);
  assert_int_equal(rowan_exec(db, sql, NULL, NULL), ROWAN_IOERR);
  kv_env_mem_clear_faults(w->inner);
  rowan_close(db);
  db = open_db(w);
  expect_model_check(db, m, "reopened after a failed MANIFEST record", true);
  assert_int_equal(count_files(&w->base, "/db", ".run"), 0);
  exec_ok(db, sql);
  at_apply(m, 0, 99, g_n);
  expect_model(db, m, "the statement again");
  assert_int_equal(rowan_close(db), ROWAN_OK);
  at_model_free(m);
  watch_free(w);
}

static void test_readers(void **state) {
  (void)state;
  watch_env *w = watch_new();
  at_model *m;
  rowan_db *db = fixture(w, &m);
  int64_t rows0;
  uint64_t sum0 = at_model_sum(m, &rows0);
  /* a SELECT between rows across a large UPSERT and a large DELETE */
  rowan_stmt *st = NULL;
  assert_int_equal(rowan_prepare(db, "SELECT K, V, W, X FROM T", -1, &st, NULL), ROWAN_OK);
  assert_int_equal(rowan_step(st), ROWAN_ROW);
  uint64_t h = 1469598103934665603ull;
  int64_t n = 0;
  char sql[256];
  for (int step = 0;; step++) {
    bool has_x = rowan_column_type(st, 3) != ROWAN_NULL;
    h = at_row_hash(h, rowan_column_int64(st, 0), rowan_column_int64(st, 1),
                    (const char *)rowan_column_text(st, 2), has_x,
                    has_x ? rowan_column_int64(st, 3) : 0);
    n++;
    if (step == 10 || step == 5000) {
      int kind = step == 10 ? 0 : 3;
      at_sql(kind, 40 + step, g_n, sql, sizeof sql);
      exec_ok(db, sql);
      at_apply(m, kind, 40 + step, g_n);
    }
    int rc = rowan_step(st);
    if (rc == ROWAN_DONE) break;
    assert_int_equal(rc, ROWAN_ROW);
  }
  assert_int_equal(rowan_finalize(st), ROWAN_OK);
  assert_int_equal(n, rows0);
  assert_true(h == sum0); /* the table as of the SELECT's start: none of either statement */
  expect_model_check(db, m, "read after both statements", true);
  assert_int_equal(rowan_close(db), ROWAN_OK);
  at_model_free(m);
  watch_free(w);
}

static void test_time_order(void **state) {
  (void)state;
  watch_env *w = watch_new();
  at_model *m;
  rowan_db *db = fixture(w, &m);
  char sql[256];
  /* a small write, then the clock steps back a minute, then a large UPSERT of that row:
     the large statement is the later write and wins */
  exec_ok(db, "UPSERT INTO T (K, V, W) VALUES (3, -1, 'small')");
  kv_env_mem_set_time(w->inner, CLOCK0 - 60000);
  at_sql(0, 7, g_n, sql, sizeof sql);
  watch_reset(w);
  exec_ok(db, sql);
  assert_true(atomic_load(&w->sfs) > 0); /* it was installed as store files */
  at_apply(m, 0, 7, g_n);
  expect_model(db, m, "a large UPSERT after the clock stepped back");
  /* a write after it, at the same (stepped back) clock, wins over it */
  char w4[64];
  at_sw(4, w4, sizeof w4);
  snprintf(sql, sizeof sql, "UPSERT INTO T (K, V, W) VALUES (4, -2, '%s')", w4);
  exec_ok(db, sql);
  m->v[4] = -2;
  m->wk[4] = 4;
  expect_model(db, m, "a small write after the large one");
  /* and a large DELETE after a small write removes it */
  char w0[64];
  at_sw(0, w0, sizeof w0);
  snprintf(sql, sizeof sql, "UPSERT INTO T (K, V, W) VALUES (5, 1, '%s')", w0);
  exec_ok(db, sql);
  at_sql(3, 0, g_n, sql, sizeof sql);
  exec_ok(db, sql);
  m->exists[5] = true;
  m->v[5] = 1;
  m->wk[5] = 0; /* 'w00000-0-...' < 'w00500': the statement deletes it */
  at_apply(m, 3, 0, g_n);
  assert_false(m->exists[5]);
  expect_model_check(db, m, "a large DELETE after a small write", true);
  assert_int_equal(rowan_close(db), ROWAN_OK);
  at_model_free(m);
  watch_free(w);
}

int main(void) {
  g_n = (int64_t)tu_scaled(9000, 8000); /* fewer: the DELETEs would not spill */
  g_stride = tu_scaled(4, 1) >= 4 ? 2 : 3;
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_small_fast_path), cmocka_unit_test(test_large_statements),
      cmocka_unit_test(test_interrupted),     cmocka_unit_test(test_failures),
      cmocka_unit_test(test_readers),         cmocka_unit_test(test_time_order),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
