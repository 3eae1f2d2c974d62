/*
** tests/api/test_sequence_kill.c: a sequence never hands out a value twice, across SIGKILL
** and reopen, on a real directory. A child process opens the store (each round in another
** sync mode: FULL, NORMAL and OFF, where a block claim must be flushed to a store file to
** survive), and draws values in a loop: SELECT NEXT VALUE FOR A, NEXT VALUE FOR D (an
** ascending sequence with CACHE 7, a descending one with INCREMENT BY -3 and CACHE 5), and
** now and then the same from every row of a ten-row table; it writes each row's values on a
** pipe after rowan_step returned them. The parent kills it with SIGKILL after a random number
** of values, reads what the pipe still holds (acknowledged too), and checks every value it
** saw: each value of A is greater than every value of A seen before (in this round and the
** earlier ones), each value of D smaller than every D before; within one process the values
** follow each other with no gap (block after block), and the first value of a process
** starts a block (the rest of the killed process's block is skipped, never given again).
** Then the next round reopens the store. Seeded (tu_seed); a few seconds.
** Not here: the SQL behaviour of sequences (tests/sql/sequence.test), persistence across a
** clean close (tests/api/test_sequence.c), power cuts (the claim's commit is a WAL commit
** like any other: tests/kv/test_powercut.c covers that).
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

static rowan_db *open_dir(const char *dir, bool create, int sync_mode) {
  rowan_options o;
  rowan_options_init(&o);
  o.create_if_missing = create;
  o.sync_mode = sync_mode;
  rowan_db *db = NULL;
  int rc = rowan_open(dir, &o, &db);
  if (rc != ROWAN_OK) fail_msg("open %s: %s", dir, db ? rowan_errmsg(db) : rowan_errstr(rc));
  return db;
}

static void child_die(rowan_db *db, const char *what) {
  fprintf(stderr, "child: %s: %s\n", what, db ? rowan_errmsg(db) : "");
  _exit(3);
}

/* The child: draw values for ever, one line "a d" per row on fd after its step returned. */
static void child_run(const char *dir, int fd, int sync_mode, uint64_t seed) {
  rowan_options o;
  rowan_options_init(&o);
  o.sync_mode = sync_mode;
  rowan_db *db = NULL;
  if (rowan_open(dir, &o, &db) != ROWAN_OK) child_die(db, "open");
  const char *sql[2] = {"SELECT NEXT VALUE FOR A, NEXT VALUE FOR D",
                        "SELECT NEXT VALUE FOR A, NEXT VALUE FOR D FROM TEN"};
  rowan_stmt *st[2];
  for (int i = 0; i < 2; i++)
    if (rowan_prepare(db, sql[i], -1, &st[i], NULL) != ROWAN_OK) child_die(db, sql[i]);
  for (;;) {
    rowan_stmt *s = st[tu_below(&seed, 4) == 0];
    int rc;
    while ((rc = rowan_step(s)) == ROWAN_ROW) {
      char line[64];
      int n = snprintf(line, sizeof line, "%lld %lld\n", (long long)rowan_column_int64(s, 0),
                       (long long)rowan_column_int64(s, 1));
      if (write(fd, line, (size_t)n) != n) _exit(4);
    }
    if (rc != ROWAN_DONE) child_die(db, "step");
    rowan_reset(s);
  }
}

static void test_kill_while_drawing(void **state) {
  (void)state;
  uint64_t seed = tu_seed("sequence_kill");
  char tmp[] = "/tmp/rowan_sequence_kill_XXXXXX";
  assert_non_null(mkdtemp(tmp));
  char dir[96];
  snprintf(dir, sizeof dir, "%s/db", tmp);
  rowan_db *db = open_dir(dir, true, ROWAN_SYNC_FULL);
  const char *setup[] = {
      "CREATE SEQUENCE A CACHE 7",
      "CREATE SEQUENCE D START WITH 1000000 INCREMENT BY -3 CACHE 5",
      "CREATE TABLE TEN (K INTEGER PRIMARY KEY)",
      "UPSERT INTO TEN VALUES (1), (2), (3), (4), (5), (6), (7), (8), (9), (10)"};
  for (size_t i = 0; i < sizeof setup / sizeof *setup; i++)
    if (rowan_exec(db, setup[i], NULL, NULL) != ROWAN_OK)
      fail_msg("%s: %s", setup[i], rowan_errmsg(db));
  assert_int_equal(rowan_close(db), ROWAN_OK);
  const int modes[3] = {ROWAN_SYNC_FULL, ROWAN_SYNC_NORMAL, ROWAN_SYNC_OFF};
  int rounds = (int)tu_scaled(12, 6);
  int64_t max_a = 0, min_d = 1000003; /* below / above every value either can give */
  long seen = 0, skipped_a = 0;
  for (int round = 0; round < rounds; round++) {
    int mode = modes[round % 3];
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
      close(fds[0]);
      child_run(dir, fds[1], mode, seed + (uint64_t)round);
    }
    close(fds[1]);
    FILE *in = fdopen(fds[0], "r");
    assert_non_null(in);
    long want = 1 + (long)tu_below(&seed, 400), got = 0;
    char line[64];
    bool killed = false;
    while (fgets(line, sizeof line, in)) {
      long long a, d;
      if (sscanf(line, "%lld %lld", &a, &d) != 2) fail_msg("round %d: bad line %s", round, line);
      if (a <= max_a)
        fail_msg("round %d (sync mode %d, seed %llu): A gave %lld after %lld", round, mode,
                 (unsigned long long)seed, a, (long long)max_a);
      if (d >= min_d)
        fail_msg("round %d (sync mode %d, seed %llu): D gave %lld after %lld", round, mode,
                 (unsigned long long)seed, d, (long long)min_d);
      if (got == 0) { /* a new process: a new block of 7 (5), the values of the last skipped */
        if (a % 7 != 1 || (1000000 - d) % 15 != 0 || (round == 0 && (a != 1 || d != 1000000)))
          fail_msg("round %d: the first values %lld, %lld do not start a block", round, a, d);
        skipped_a += a - max_a - 1;
      } else if (a != max_a + 1 || d != min_d - 3) { /* one process: no gap at all */
        fail_msg("round %d: %lld, %lld after %lld, %lld", round, a, d, (long long)max_a,
                 (long long)min_d);
      }
      max_a = a;
      min_d = d;
      got++;
      seen++;
      if (got == want && !killed) {
        kill(pid, SIGKILL);
        killed = true; /* the lines already in the pipe were acknowledged: read them too */
      }
    }
    fclose(in);
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    if (!WIFSIGNALED(status)) fail_msg("round %d: the child ended (status %d)", round, status);
  }
  /* A store reopened after the last kill hands out a value beyond everything seen. */
  db = open_dir(dir, false, ROWAN_SYNC_FULL);
  rowan_stmt *s = NULL;
  assert_int_equal(rowan_prepare(db, "SELECT NEXT VALUE FOR A, NEXT VALUE FOR D", -1, &s, NULL),
                   ROWAN_OK);
  assert_int_equal(rowan_step(s), ROWAN_ROW);
  assert_true(rowan_column_int64(s, 0) > max_a);
  assert_true(rowan_column_int64(s, 1) < min_d);
  assert_int_equal(rowan_finalize(s), ROWAN_OK);
  assert_int_equal(rowan_close(db), ROWAN_OK);
  fprintf(stderr, "[sequence_kill] %d rounds, %ld values seen, %ld values of A skipped by "
                  "the kills\n", rounds, seen, skipped_a);
  char cmd[160];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp);
  assert_int_equal(system(cmd), 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_kill_while_drawing),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
