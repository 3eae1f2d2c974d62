/*
** tests/api/test_atomic_kill.c: a large write statement outside BEGIN ... COMMIT killed with
** SIGKILL at a random moment leaves the table exactly as before it or exactly as after it,
** on a real directory. A child process opens the store (bulk_memory at its 1 MiB minimum, so
** the statement moves its writes into a bulk load and spills to temporary files), writes one
** small row through the WAL and says so on a pipe, runs one large statement (an UPSERT ...
** SELECT of every row of S, one writing each row seven times, a DELETE through an index, a
** DELETE of a key range, an UPSERT of descending keys: tests/api/atomic_test_util.h), says
** so, and closes. The parent kills it at a random time after the first message (the first
** round is not killed: it measures how long the statement takes), reopens the store and
** checks: the small row is there; T's checksum is the model's before the statement or after
** it (after, if the child said it finished); both indexes agree with T (CHECK INDEX); no
** temporary file is left. Seeded (tu_seed); a few seconds.
** Not here: interrupts and injected faults (test_atomic_stmt.c), acknowledged commits in a
** kill loop (test_regress_kill9.c).
*/
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "rowan.h"
#include "testutil.h"
#include "atomic_test_util.h"

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static rowan_db *open_dir(const char *dir, bool create) {
  rowan_options o;
  rowan_options_init(&o);
  o.create_if_missing = create;
  o.sync_mode = ROWAN_SYNC_NORMAL; /* a process crash loses no commit that returned */
  o.bulk_memory = 1 << 20;
  rowan_db *db = NULL;
  int rc = rowan_open(dir, &o, &db);
  if (rc != ROWAN_OK) fail_msg("open %s: %s", dir, db ? rowan_errmsg(db) : rowan_errstr(rc));
  return db;
}

static void child_die(rowan_db *db, const char *what) {
  fprintf(stderr, "child: %s: %s\n", what, rowan_errmsg(db));
  _exit(3);
}

/* The child: the small row, "A", the statement, "B", close. */
static void child_run(const char *dir, int fd, const char *small, const char *sql) {
  rowan_options o;
  rowan_options_init(&o);
  o.create_if_missing = 0;
  o.sync_mode = ROWAN_SYNC_NORMAL;
  o.bulk_memory = 1 << 20;
  rowan_db *db = NULL;
  if (rowan_open(dir, &o, &db) != ROWAN_OK) child_die(db, "open");
  if (rowan_exec(db, small, NULL, NULL) != ROWAN_OK) child_die(db, small);
  if (write(fd, "A\n", 2) != 2) _exit(4);
  if (rowan_exec(db, sql, NULL, NULL) != ROWAN_OK) child_die(db, sql);
  if (write(fd, "B\n", 2) != 2) _exit(4);
  rowan_close(db);
  _exit(0);
}

/* Count the files under dir (recursively) whose names end with ".run". */
static int count_runs(const char *dir) {
  char cmd[512];
  snprintf(cmd, sizeof cmd, "find '%s' -name '*.run' | wc -l", dir);
  FILE *p = popen(cmd, "r");
  assert_non_null(p);
  int n = -1;
  if (fscanf(p, "%d", &n) != 1) n = -1;
  pclose(p);
  return n;
}

static void test_kill_large_statements(void **state) {
  (void)state;
  uint64_t seed = tu_seed("atomic_kill");
  int64_t n = (int64_t)tu_scaled(8000, 4000);
  char tmp[] = "/tmp/rowan_atomic_kill_XXXXXX";
  assert_non_null(mkdtemp(tmp));
  char dir[96];
  snprintf(dir, sizeof dir, "%s/db", tmp);
  rowan_db *db = open_dir(dir, true);
  at_setup(db, n);
  at_model *m = at_model_new(2 * n);
  char sql[256], small[256];
  at_sql(0, 1, n, sql, sizeof sql);
  if (rowan_exec(db, sql, NULL, NULL) != ROWAN_OK) fail_msg("%s: %s", sql, rowan_errmsg(db));
  at_apply(m, 0, 1, n);
  assert_int_equal(rowan_close(db), ROWAN_OK);
  int rounds = (int)tu_scaled(10, 5);
  double took = 0; /* ms the statement took in the first round */
  int before = 0, after = 0;
  for (int round = 0; round < rounds; round++) {
    int kind = round == 0 ? 0 : (int)tu_below(&seed, AT_KINDS);
    int64_t r = (int64_t)tu_below(&seed, 1000);
    at_sql(kind, r, n, sql, sizeof sql);
    int64_t sk = (int64_t)tu_below(&seed, (uint64_t)(2 * n));
    char sw[64];
    at_sw(sk, sw, sizeof sw);
    snprintf(small, sizeof small, "UPSERT INTO T (K, V, W, X) VALUES (%lld, %d, '%s', %d)",
             (long long)sk, -1 - round, sw, round);
    at_model *pre = at_model_copy(m);
    pre->exists[sk] = true;
    pre->v[sk] = -1 - round;
    pre->wk[sk] = sk;
    pre->has_x[sk] = true;
    pre->x[sk] = round;
    at_model *post = at_model_copy(pre);
    at_apply(post, kind, r, n);
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
      close(fds[0]);
      child_run(dir, fds[1], small, sql);
    }
    close(fds[1]);
    FILE *in = fdopen(fds[0], "r");
    assert_non_null(in);
    char line[16];
    bool a = false, b = false;
    if (fgets(line, sizeof line, in) && line[0] == 'A') a = true;
    if (!a) fail_msg("round %d: the child stopped before its small write", round);
    double t0 = now_ms();
    bool killed = false;
    if (round == 0) {
      b = fgets(line, sizeof line, in) && line[0] == 'B';
      took = now_ms() - t0;
    } else {
      long us = (long)((double)tu_below(&seed, 1000) * took * 1.2); /* 0 .. 1.2 x took */
      struct timespec ts = {us / 1000000, (us % 1000000) * 1000};
      nanosleep(&ts, NULL);
      kill(pid, SIGKILL);
      killed = true;
      while (fgets(line, sizeof line, in))
        if (line[0] == 'B') b = true;
    }
    fclose(in);
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    if (!killed || !WIFSIGNALED(status)) {
      if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        fail_msg("round %d: the child failed (status %d)", round, status);
      b = true;
    }
    db = open_dir(dir, false);
    int64_t rows;
    int rc;
    uint64_t got = at_db_sum(db, &rows, &rc);
    assert_int_equal(rc, ROWAN_OK);
    uint64_t want_pre = at_model_sum(pre, NULL), want_post = at_model_sum(post, NULL);
    bool is_post = got == want_post, is_pre = got == want_pre;
    if (!is_post && !(is_pre && !b))
      fail_msg("round %d (%s, seed %llu): T has %lld rows, neither before nor after%s", round,
               sql, (unsigned long long)seed, (long long)rows,
               b ? " (the child had finished)" : "");
    int bad = at_index_problems(db);
    if (bad) fail_msg("round %d (%s): CHECK INDEX finds %d problems", round, sql, bad);
    assert_int_equal(rowan_close(db), ROWAN_OK);
    assert_int_equal(count_runs(dir), 0);
    if (is_post) after++;
    else before++;
    at_model_free(m);
    at_model_free(is_post ? pre : post);
    m = is_post ? post : pre;
  }
  fprintf(stderr, "[atomic_kill] %d rounds: %d found before the statement, %d after; the "
                  "statement took %.0f ms\n", rounds, before, after, took);
  at_model_free(m);
  char cmd[160];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp);
  assert_int_equal(system(cmd), 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_kill_large_statements),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
