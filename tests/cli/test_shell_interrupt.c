/*
** tests/cli/test_shell_interrupt.c: Ctrl-C (SIGINT) sent to the `rowan` shell while it runs
** a list of statements given on the command line: the statement running is interrupted
** ("Error: interrupted") or the next one does not start, the shell says it stopped, the
** statements after it do not run, and the exit status is 1; the database opens and answers
** afterwards. Drives the built binary.
** Not here: rowan_interrupt's rules (tests/api/test_interrupt.c); the interactive prompt
** (a pseudo-terminal test is still to be written).
*/
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <time.h>

#include "test_shell_util.h"

typedef sh_fixture fixture;

static int setup(void **state) {
  *state = sh_fixture_rows(100000);
  return *state ? 0 : -1;
}

static int teardown(void **state) {
  sh_fixture_free(*state);
  return 0;
}

static long file_size(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 ? (long)st.st_size : -1;
}

static void test_ctrl_c_stops_the_list(void **state) {
  fixture *f = *state;
  enum { N = 400 };
  const char *argv[N + 6];
  int n = 0;
  argv[n++] = sh_binary();
  argv[n++] = "-list";
  argv[n++] = f->db;
  for (int i = 0; i < N; i++) argv[n++] = "SELECT COUNT(*) FROM T WHERE NAME LIKE '%zz%'";
  argv[n++] = "SELECT 42";
  argv[n] = NULL;
  char out[700], err[700];
  snprintf(out, sizeof out, "%s/.int_out", f->dir);
  snprintf(err, sizeof err, "%s/.int_err", f->dir);
  pid_t pid = fork();
  if (pid == 0) {
    int o = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int e = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (o < 0 || e < 0) _exit(126);
    dup2(o, 1);
    dup2(e, 2);
    execv(argv[0], (char *const *)argv);
    _exit(127);
  }
  /* wait until the first statement has printed (the handler is installed by then) */
  for (int i = 0; i < 20000 && file_size(out) <= 0; i++) {
    struct timespec ts = {0, 1000000};
    nanosleep(&ts, NULL);
  }
  assert_true(file_size(out) > 0);
  assert_int_equal(kill(pid, SIGINT), 0);
  int st = 0;
  waitpid(pid, &st, 0);
  assert_true(WIFEXITED(st));
  assert_int_equal(WEXITSTATUS(st), 1);
  char *o = sh_read_file(out), *e = sh_read_file(err);
  assert_non_null(o);
  assert_non_null(e);
  assert_null(strstr(o, "42"));                  /* the last statement did not run */
  size_t lines = 0;
  for (const char *p = o; *p; p++) lines += *p == '\n';
  assert_true(lines >= 1 && lines < N);          /* it stopped part way */
  assert_non_null(strstr(e, "rowan: stopped by Ctrl-C"));
  free(o);
  free(e);
  /* the database is fine afterwards */
  const char *q[] = {"SELECT COUNT(*) FROM T WHERE V = 7", NULL};
  const char *list[] = {"-list", NULL};
  sh_result r;
  assert_int_equal(sh_run_db(f, list, q, NULL, &r), 0);
  assert_string_equal(r.out, "100\n");
  sh_result_free(&r);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_ctrl_c_stops_the_list),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
