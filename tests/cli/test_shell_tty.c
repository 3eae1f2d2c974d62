/*
** tests/cli/test_shell_tty.c: the interactive shell on a pseudo-terminal (forkpty), as a
** user at a terminal sees it: the prompt, a statement's result, and Ctrl-C typed while a
** long statement runs: the statement stops with "Error: interrupted", the prompt comes
** back, the next statement runs, and .quit ends the session; Ctrl-C at the prompt drops the
** line being typed (and a statement begun on earlier lines) and gives a fresh prompt, and a
** second Ctrl-C within a second ends the shell with status 130; Ctrl-C during a large
** UPSERT ... SELECT or a CREATE INDEX leaves no row and no index; Tab: a tab character inside
** a string and after white space (a pasted SELECT<Tab>x reads as typed), completion of a
** keyword, a column name and a dot command after a word.
** Not here: scripted input (test_shell_interrupt.c).
*/
#include <errno.h>
#include <poll.h>
#include <pty.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <time.h>

#include "test_shell_util.h"

typedef sh_fixture fixture;

static int setup(void **state) {
  *state = sh_fixture_rows(600000);
  return *state ? 0 : -1;
}

static int teardown(void **state) {
  sh_fixture_free(*state);
  return 0;
}

/* Read from the terminal into buf (appending) until `want` appears or ms pass. */
static bool read_until(int fd, char *buf, size_t cap, const char *want, int ms) {
  size_t n = strlen(buf);
  for (int waited = 0; waited < ms && !strstr(buf, want); waited += 10) {
    struct pollfd p = {fd, POLLIN, 0};
    if (poll(&p, 1, 10) > 0) {
      ssize_t r = read(fd, buf + n, cap - n - 1);
      if (r <= 0) break;
      n += (size_t)r;
      buf[n] = 0;
    }
  }
  return strstr(buf, want) != NULL;
}

/* The shell on a new pseudo-terminal (HOME the fixture's directory), with -list when asked;
** *fd gets the terminal's master side. */
static pid_t spawn(fixture *f, bool list, int *fd) {
  pid_t pid = forkpty(fd, NULL, NULL, NULL);
  assert_true(pid >= 0);
  if (pid == 0) {
    setenv("HOME", f->dir, 1);
    if (list) execl(sh_binary(), sh_binary(), "-list", f->db, (char *)NULL);
    else execl(sh_binary(), sh_binary(), f->db, (char *)NULL);
    _exit(127);
  }
  return pid;
}

/* Wait (5 s at most) for the shell to end, draining the terminal; its wait status. */
static int finish(pid_t pid, int fd) {
  int st = 0;
  for (int i = 0; i < 500 && waitpid(pid, &st, WNOHANG) == 0; i++) {
    nanosleep(&(struct timespec){0, 10000000}, NULL);
    char drain[256];
    if (read(fd, drain, sizeof drain) < 0 && errno != EAGAIN && errno != EIO) break;
  }
  close(fd);
  return st;
}

static void say(int fd, const char *s) {
  ssize_t w = write(fd, s, strlen(s));
  assert_int_equal(w, (ssize_t)strlen(s));
}

static void test_ctrl_c_at_the_terminal(void **state) {
  fixture *f = *state;
  int fd = -1;
  pid_t pid = spawn(f, false, &fd);
  static char buf[1 << 16];
  buf[0] = 0;
  assert_true(read_until(fd, buf, sizeof buf, "rowan> ", 10000));
  bool interrupted = false;
  for (int attempt = 0; attempt < 5 && !interrupted; attempt++) {
    buf[0] = 0;
    say(fd, "SELECT COUNT(*) FROM T WHERE NAME LIKE '%zz%' AND LENGTH(NAME) > 0 "
            "GROUP BY V ORDER BY 1;\n");
    assert_true(read_until(fd, buf, sizeof buf, "ORDER BY 1;", 5000)); /* the echo */
    struct timespec ts = {0, 5000000};
    nanosleep(&ts, NULL);
    say(fd, "\x03");
    assert_true(read_until(fd, buf, sizeof buf, "rowan> ", 10000));
    interrupted = strstr(buf, "Error: interrupted") != NULL; /* else it finished first */
  }
  if (!interrupted) fprintf(stderr, "terminal said:\n%s\n", buf);
  assert_true(interrupted);
  buf[0] = 0;
  say(fd, "SELECT 40 + 2;\n");
  assert_true(read_until(fd, buf, sizeof buf, "42", 5000));
  assert_true(read_until(fd, buf, sizeof buf, "rowan> ", 5000));
  say(fd, ".quit\n");
  int st = finish(pid, fd);
  assert_true(WIFEXITED(st));
  assert_int_equal(WEXITSTATUS(st), 1); /* a statement failed (interrupted) in the session */
}

static void test_ctrl_c_at_the_prompt(void **state) {
  fixture *f = *state;
  int fd = -1;
  pid_t pid = spawn(f, false, &fd);
  static char buf[1 << 16];
  buf[0] = 0;
  assert_true(read_until(fd, buf, sizeof buf, "rowan> ", 10000));
  /* a statement begun on one line, more typed on the next, then Ctrl-C: all dropped */
  say(fd, "SELECT 7\n");
  assert_true(read_until(fd, buf, sizeof buf, "...> ", 5000));
  say(fd, "+ 1");
  struct timespec ts = {0, 50000000};
  nanosleep(&ts, NULL);
  buf[0] = 0;
  say(fd, "\x03");
  assert_true(read_until(fd, buf, sizeof buf, "rowan> ", 5000));
  nanosleep(&(struct timespec){1, 200000000}, NULL); /* past the double-Ctrl-C window */
  buf[0] = 0;
  say(fd, "SELECT 40 + 2;\n");
  assert_true(read_until(fd, buf, sizeof buf, "rowan> ", 5000));
  assert_non_null(strstr(buf, "42"));
  assert_null(strstr(buf, "8")); /* SELECT 7 + 1 never ran */
  /* twice within a second: the shell ends, status 130 */
  say(fd, "\x03");
  nanosleep(&(struct timespec){0, 100000000}, NULL);
  say(fd, "\x03");
  int st = finish(pid, fd);
  assert_true(WIFEXITED(st));
  assert_int_equal(WEXITSTATUS(st), 130);
}

/* Type sql, then Ctrl-C a little later, until it is interrupted (5 tries; `undo` runs after
** a try the statement won); true when it was. buf gets what the terminal said. A Ctrl-C
** typed less than a second before (wait) would make the next one end the shell: wait. */
static bool interrupt_typed(int fd, char *buf, size_t cap, const char *sql, const char *undo,
                            bool wait) {
  for (int attempt = 0; attempt < 5; attempt++) {
    if (wait || attempt) /* past the double-Ctrl-C window */
      nanosleep(&(struct timespec){1, 200000000}, NULL);
    buf[0] = 0;
    say(fd, sql);
    say(fd, "\n");
    assert_true(read_until(fd, buf, cap, sql, 5000)); /* the echo */
    nanosleep(&(struct timespec){0, 20000000}, NULL);
    say(fd, "\x03");
    assert_true(read_until(fd, buf, cap, "rowan> ", 20000));
    if (strstr(buf, "Error: interrupted")) return true;
    buf[0] = 0;
    say(fd, undo); /* it finished first: take it back and try again */
    assert_true(read_until(fd, buf, cap, "rowan> ", 20000));
  }
  return false;
}

/* Ctrl-C during a large UPSERT ... SELECT and during CREATE INDEX: nothing of either is
** left (the statement is atomic; the index is dropped again). */
static void test_ctrl_c_leaves_nothing(void **state) {
  fixture *f = *state;
  int fd = -1;
  pid_t pid = spawn(f, true, &fd);
  static char buf[1 << 16];
  buf[0] = 0;
  assert_true(read_until(fd, buf, sizeof buf, "rowan> ", 10000));
  buf[0] = 0;
  say(fd, "CREATE TABLE C (K INTEGER NOT NULL PRIMARY KEY, V INTEGER);\n");
  assert_true(read_until(fd, buf, sizeof buf, "rowan> ", 5000));
  assert_true(interrupt_typed(fd, buf, sizeof buf, "UPSERT INTO C SELECT K, V FROM T;",
                              "DELETE FROM C;\n", false));
  buf[0] = 0;
  say(fd, "SELECT COUNT(*) + 7000000 FROM C;\n");
  assert_true(read_until(fd, buf, sizeof buf, "rowan> ", 10000));
  assert_non_null(strstr(buf, "\n7000000")); /* no row of the interrupted statement */
  assert_true(interrupt_typed(fd, buf, sizeof buf, "CREATE INDEX IXNAME ON T (NAME);",
                              "DROP INDEX IXNAME ON T;\n", true));
  buf[0] = 0;
  say(fd, ".indexes T\n");
  assert_true(read_until(fd, buf, sizeof buf, "rowan> ", 5000));
  assert_null(strstr(buf, "IXNAME")); /* no index left */
  buf[0] = 0;
  say(fd, "DROP INDEX IXNAME ON T;\n");
  assert_true(read_until(fd, buf, sizeof buf, "rowan> ", 5000));
  assert_non_null(strstr(buf, "does not exist"));
  say(fd, ".quit\n");
  int st = finish(pid, fd);
  assert_true(WIFEXITED(st));
  assert_int_equal(WEXITSTATUS(st), 1); /* statements failed (interrupted) in the session */
}

static void test_tab(void **state) {
  fixture *f = *state;
  int fd = -1;
  pid_t pid = spawn(f, true, &fd);
  static char buf[1 << 16];
  buf[0] = 0;
  assert_true(read_until(fd, buf, sizeof buf, "rowan> ", 10000));
  /* pasted with tabs: kept in the string (3 characters), white space elsewhere */
  buf[0] = 0;
  say(fd, "SELECT\tLENGTH('a\tb')\tFROM\tT WHERE K = 1;\n");
  assert_true(read_until(fd, buf, sizeof buf, "rowan> ", 5000));
  assert_non_null(strstr(buf, "\n3\r\n"));
  /* completion: keyword, column, keyword, table */
  buf[0] = 0;
  say(fd, "SEL\tNA\tFRO\tT WHERE K = 2;\n");
  assert_true(read_until(fd, buf, sizeof buf, "rowan> ", 5000));
  assert_non_null(strstr(buf, "name 2"));
  /* a dot command */
  buf[0] = 0;
  say(fd, ".tab\t\n");
  assert_true(read_until(fd, buf, sizeof buf, "rowan> ", 5000));
  assert_non_null(strstr(buf, "\nT\r\n"));
  /* CREATE INDEX's progress: one line rewritten in place, ended at 100% */
  buf[0] = 0;
  say(fd, "CREATE INDEX TV ON T (V);\n");
  assert_true(read_until(fd, buf, sizeof buf, "rowan> ", 60000));
  const char *pct = strstr(buf, "(100%)");
  assert_non_null(pct);
  assert_non_null(strstr(buf, "\rbuilding index TV on T: "));
  assert_true(pct[6] == ' ' || pct[6] == '\r' || pct[6] == '\n');
  say(fd, ".quit\n");
  int st = finish(pid, fd);
  assert_true(WIFEXITED(st));
  assert_int_equal(WEXITSTATUS(st), 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_ctrl_c_at_the_terminal),
      cmocka_unit_test(test_ctrl_c_at_the_prompt),
      cmocka_unit_test(test_ctrl_c_leaves_nothing),
      cmocka_unit_test(test_tab),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
