/*
** tests/cli/test_shell_copies.c: the shell's other views of a database, as a user types
** them: `rowan -readonly` opens a database that another `rowan` holds open for writing
** (and one that a writer opens while the reader is open), shows it as of its start, and
** `.refresh` shows what was committed since, new tables included; `.backup DIR` copies the
** database while it is open, the copy opens as a database of its own, and a second backup
** into the same place, a missing argument and a read-only shell fail with their messages.
** Drives the built binary.
** Not here: the API's contracts (tests/api/test_readonly.c), the store's (tests/kv).
*/
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <time.h>
#include <cmocka.h>

#include "test_shell_util.h"

typedef sh_fixture fixture;

static int setup(void **state) {
  const char *cmds[] = {"CREATE TABLE T (K INTEGER NOT NULL PRIMARY KEY, NAME VARCHAR)",
                        "UPSERT INTO T VALUES (1, 'one'), (2, 'two')", NULL};
  *state = sh_fixture_new(cmds);
  return *state ? 0 : -1;
}

static int teardown(void **state) {
  sh_fixture_free(*state);
  return 0;
}

/* A shell kept running on the database, fed through a pipe. */
typedef struct writer {
  pid_t pid;
  int in;              /* its standard input */
  char out_path[700];  /* its standard output */
} writer;

static void writer_start(writer *w, const fixture *f) {
  int p[2];
  assert_int_equal(pipe(p), 0);
  snprintf(w->out_path, sizeof w->out_path, "%s/.writer_out", f->dir);
  fflush(NULL);
  w->pid = fork();
  assert_true(w->pid >= 0);
  if (w->pid == 0) {
    int out = open(w->out_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(p[0], 0);
    dup2(out, 1);
    dup2(out, 2);
    close(p[1]);
    setenv("HOME", f->dir, 1);
    execl(sh_binary(), sh_binary(), "-list", f->db, (char *)NULL);
    _exit(127);
  }
  close(p[0]);
  w->in = p[1];
}

/* Send text and wait until the writer printed `mark` (the text should end with .print MARK). */
static void writer_send(writer *w, const char *text, const char *mark) {
  assert_int_equal(write(w->in, text, strlen(text)), (ssize_t)strlen(text));
  for (int i = 0; i < 3000; i++) { /* up to 30 s */
    char *out = sh_read_file(w->out_path);
    bool seen = strstr(out, mark) != NULL;
    free(out);
    if (seen) return;
    struct timespec ts = {0, 10000000};
    nanosleep(&ts, NULL);
  }
  fail_msg("the writer shell did not print %s", mark);
}

static int writer_stop(writer *w) {
  close(w->in);
  int st = 0;
  waitpid(w->pid, &st, 0);
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void test_readonly_beside_writer(void **state) {
  fixture *f = *state;
  writer w;
  writer_start(&w, f);
  writer_send(&w, "UPSERT INTO T VALUES (3, 'three');\n.print wrote-3\n", "wrote-3");
  /* the writer holds the database: a second writer is refused, a reader is not */
  const char *count[] = {"SELECT COUNT(*) FROM T", NULL};
  const char *list[] = {"-list", NULL};
  sh_result r;
  sh_run_db(f, list, count, NULL, &r);
  assert_int_equal(r.status, 1);
  assert_non_null(strstr(r.err, "database is locked"));
  sh_result_free(&r);
  const char *ro[] = {"-readonly", "-list", NULL};
  char send[600];
  snprintf(send, sizeof send, "UPSERT INTO T VALUES (4, 'four');\n"
                              "CREATE TABLE U (K INTEGER NOT NULL PRIMARY KEY);\n"
                              "UPSERT INTO U VALUES (7);\n.print wrote-4\n");
  /* the reader: as of its start until .refresh; the writer writes in the middle (.shell
     waits for a marker file the test makes once the writer is done) */
  char flag[700], started[700], shell_cmd[1600];
  snprintf(flag, sizeof flag, "%s/.go", f->dir);
  snprintf(started, sizeof started, "%s/.started", f->dir);
  snprintf(shell_cmd, sizeof shell_cmd,
           ".shell \"touch %s; while [ ! -f %s ]; do sleep 0.02; done\"", started, flag);
  const char *cmds[] = {"SELECT COUNT(*) FROM T", shell_cmd, "SELECT COUNT(*) FROM T",
                        ".refresh", "SELECT COUNT(*) FROM T", "SELECT K FROM U", NULL};
  fflush(NULL);
  pid_t helper = fork();
  assert_true(helper >= 0);
  if (helper == 0) { /* once the reader has counted, the writer writes, then the flag */
    struct stat st;
    for (int i = 0; i < 3000 && stat(started, &st) != 0; i++) {
      struct timespec ts = {0, 10000000};
      nanosleep(&ts, NULL);
    }
    writer_send(&w, send, "wrote-4");
    sh_write_file(flag, "go");
    _exit(0);
  }
  sh_run_db(f, ro, cmds, NULL, &r);
  int hs = 0;
  waitpid(helper, &hs, 0);
  if (r.status != 0) sh_dump(&r);
  assert_int_equal(r.status, 0);
  assert_string_equal(r.out, "3\n3\n4\n7\n");
  sh_result_free(&r);
  /* a read-only shell cannot write nor make backups */
  char bak[700], backup[760];
  snprintf(bak, sizeof bak, "%s/bak_ro", f->dir);
  snprintf(backup, sizeof backup, ".backup %s", bak);
  const char *bad[] = {"UPSERT INTO T VALUES (9, 'nine')", backup, NULL};
  sh_run_db(f, ro, bad, NULL, &r);
  assert_int_equal(r.status, 1);
  assert_non_null(strstr(r.err, "read-only"));
  assert_non_null(strstr(r.err, ".backup:"));
  sh_result_free(&r);
  /* .refresh in the writer: nothing to do */
  writer_send(&w, ".refresh\n.print refreshed\n", "refreshed");
  assert_int_equal(writer_stop(&w), 0);
}

static void test_backup(void **state) {
  fixture *f = *state;
  char bak[700], backup[760];
  snprintf(bak, sizeof bak, "%s/bak", f->dir);
  snprintf(backup, sizeof backup, ".backup %s", bak);
  const char *cmds[] = {"UPSERT INTO T VALUES (5, 'five')", backup,
                        "UPSERT INTO T VALUES (6, 'six')", NULL};
  sh_result r;
  sh_run_db(f, NULL, cmds, NULL, &r);
  if (r.status != 0) sh_dump(&r);
  assert_int_equal(r.status, 0);
  assert_string_equal(r.err, "");
  sh_result_free(&r);
  /* the copy: what was committed before the backup, and a database of its own */
  const char *args[] = {"-list", bak, "SELECT K, NAME FROM T", "UPSERT INTO T VALUES (8, 'eight')",
                        "SELECT COUNT(*) FROM T", NULL};
  sh_run(f->dir, args, NULL, &r);
  if (r.status != 0) sh_dump(&r);
  assert_int_equal(r.status, 0);
  assert_string_equal(r.out, "1|one\n2|two\n5|five\n4\n");
  sh_result_free(&r);
  const char *src[] = {"-list", f->db, "SELECT COUNT(*) FROM T", NULL};
  sh_run(f->dir, src, NULL, &r);
  assert_string_equal(r.out, "4\n");
  sh_result_free(&r);
  /* again into the same place, with no argument, and sqlite3's ".backup main FILE" */
  char main_bak[800];
  snprintf(main_bak, sizeof main_bak, ".backup main %s/bak2", f->dir);
  const char *again[] = {backup, ".backup", main_bak, NULL};
  sh_run_db(f, NULL, again, NULL, &r);
  assert_int_equal(r.status, 1);
  assert_non_null(strstr(r.err, "not empty"));
  assert_non_null(strstr(r.err, "usage: .backup DIR"));
  sh_result_free(&r);
  char bak2[760];
  snprintf(bak2, sizeof bak2, "%s/bak2", f->dir);
  const char *second[] = {"-list", bak2, "SELECT COUNT(*) FROM T", NULL};
  sh_run(f->dir, second, NULL, &r);
  assert_int_equal(r.status, 0);
  assert_string_equal(r.out, "4\n");
  sh_result_free(&r);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_readonly_beside_writer, setup, teardown),
      cmocka_unit_test_setup_teardown(test_backup, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
