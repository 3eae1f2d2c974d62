/*
** tests/cli/test_shell_util.h: header-only helpers for the shell tests: run the built
** `rowan` binary (path from the ROWAN_SHELL_PATH compile definition, or the ROWAN_SHELL
** environment variable) with arguments and a stdin text, capture its stdout, stderr and exit
** status; make and remove temporary directories under /tmp; write small files.
**
** Not a test itself (only test_*.c files are test programs).
*/
#ifndef ROWAN_TEST_SHELL_UTIL_H
#define ROWAN_TEST_SHELL_UTIL_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef ROWAN_SHELL_PATH
#define ROWAN_SHELL_PATH "rowan"
#endif

/* What one run of the shell produced. */
typedef struct sh_result {
  char *out;   /* stdout, NUL-terminated, malloc'd */
  char *err;   /* stderr, NUL-terminated, malloc'd */
  int status;  /* exit status, or -1 if it did not exit normally */
} sh_result;

static inline void sh_result_free(sh_result *r) {
  free(r->out);
  free(r->err);
  r->out = r->err = NULL;
}

static inline char *sh_read_file(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return strdup("");
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *p = malloc((size_t)n + 1);
  size_t got = p ? fread(p, 1, (size_t)n, f) : 0;
  if (p) p[got] = 0;
  fclose(f);
  return p;
}

static inline void sh_write_file(const char *path, const char *text) {
  FILE *f = fopen(path, "wb");
  if (!f) { perror(path); abort(); }
  fputs(text, f);
  fclose(f);
}

static inline const char *sh_binary(void) {
  const char *e = getenv("ROWAN_SHELL");
  return e && *e ? e : ROWAN_SHELL_PATH;
}

/* Run the shell with args (NULL-terminated, without argv[0]) and stdin_text (NULL: empty
** stdin). Captures output through files in dir. Returns the exit status (also in r). */
static inline int sh_run(const char *dir, const char *const *args, const char *stdin_text,
                         sh_result *r) {
  char in_path[512], out_path[512], err_path[512];
  snprintf(in_path, sizeof in_path, "%s/.stdin", dir);
  snprintf(out_path, sizeof out_path, "%s/.stdout", dir);
  snprintf(err_path, sizeof err_path, "%s/.stderr", dir);
  sh_write_file(in_path, stdin_text ? stdin_text : "");
  const char *argv[64];
  int n = 0;
  argv[n++] = sh_binary();
  for (int i = 0; args[i] && n < 63; i++) argv[n++] = args[i];
  argv[n] = NULL;
  fflush(stdout);
  fflush(stderr);
  pid_t pid = fork();
  if (pid == 0) {
    int in = open(in_path, O_RDONLY);
    int out = open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int err = open(err_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (in < 0 || out < 0 || err < 0) _exit(126);
    dup2(in, 0);
    dup2(out, 1);
    dup2(err, 2);
    setenv("HOME", dir, 1); /* ~/.rowanrc and the history are the test directory's */
    execv(argv[0], (char *const *)argv);
    _exit(127);
  }
  int st = 0;
  waitpid(pid, &st, 0);
  r->status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  r->out = sh_read_file(out_path);
  r->err = sh_read_file(err_path);
  return r->status;
}

static inline int sh_rm_one(const char *path, const struct stat *sb, int flag, struct FTW *ftw) {
  (void)sb; (void)flag; (void)ftw;
  return remove(path);
}

/* A fresh directory under /tmp (malloc'd path); sh_tmp_remove deletes it and frees it. */
static inline char *sh_tmp_make(void) {
  char *p = strdup("/tmp/rowan-shell-test-XXXXXX");
  if (!p || !mkdtemp(p)) { perror("mkdtemp"); abort(); }
  return p;
}

static inline void sh_tmp_remove(char *dir) {
  nftw(dir, sh_rm_one, 16, FTW_DEPTH | FTW_PHYS);
  free(dir);
}

/* Print a run's output when an expectation fails, to make the failure readable. */
static inline void sh_dump(const sh_result *r) {
  fprintf(stderr, "--- status %d\n--- stdout:\n%s--- stderr:\n%s---\n", r->status, r->out,
          r->err);
}

/* A shell test's database: a temporary directory and the database directory inside it. */
typedef struct sh_fixture {
  char *dir;     /* temporary directory (sh_tmp_make) */
  char db[600];  /* the database directory inside it */
  int n_rows;    /* rows a test's setup loaded, for the test's own checks */
} sh_fixture;

/* Run the shell: opts (NULL-terminated, may be NULL), then f's database, then cmds
** (NULL-terminated, may be NULL), with stdin_text in. Returns the exit status (also in r). */
static inline int sh_run_db(const sh_fixture *f, const char *const *opts,
                            const char *const *cmds, const char *stdin_text, sh_result *r) {
  const char *all[64];
  int k = 0;
  for (int i = 0; opts && opts[i] && k < 31; i++) all[k++] = opts[i];
  all[k++] = f->db;
  for (int i = 0; cmds && cmds[i] && k < 63; i++) all[k++] = cmds[i];
  all[k] = NULL;
  return sh_run(f->dir, all, stdin_text, r);
}

#ifdef cmocka_unit_test /* for the tests that include cmocka.h first */
/* Run cmds on f's database and require a clean run (exit 0, nothing on stderr); the output
** is printed when it was not. The caller frees the result. */
static inline sh_result sh_run_ok(const sh_fixture *f, const char *const *cmds) {
  sh_result r;
  sh_run_db(f, NULL, cmds, NULL, &r);
  if (r.status != 0 || r.err[0]) sh_dump(&r);
  assert_int_equal(r.status, 0);
  assert_string_equal(r.err, "");
  return r;
}
#endif

/* A new fixture whose database the shell created by running cmds (NULL-terminated SQL
** statements) on it. NULL when that run failed (its output is printed). Free with
** sh_fixture_free. */
static inline sh_fixture *sh_fixture_new(const char *const *cmds) {
  sh_fixture *f = calloc(1, sizeof *f);
  if (!f) return NULL;
  f->dir = sh_tmp_make();
  snprintf(f->db, sizeof f->db, "%s/db", f->dir);
  sh_result r;
  if (sh_run_db(f, NULL, cmds, NULL, &r) != 0) {
    sh_dump(&r);
    sh_result_free(&r);
    sh_tmp_remove(f->dir);
    free(f);
    return NULL;
  }
  sh_result_free(&r);
  return f;
}

/* Remove f's directory and free f (NULL: no-op). */
static inline void sh_fixture_free(sh_fixture *f) {
  if (!f) return;
  sh_tmp_remove(f->dir);
  free(f);
}

/* A fixture with table T (K INTEGER primary key, V = K % 1000, NAME = 'name K') of `rows`
** rows, bulk-imported from a CSV file: big enough that a scan takes a while (the Ctrl-C
** tests interrupt one). NULL on failure. */
static inline sh_fixture *sh_fixture_rows(int rows) {
  char *dir = sh_tmp_make();
  char csv[600], imp[700];
  snprintf(csv, sizeof csv, "%s/rows.csv", dir);
  FILE *f = fopen(csv, "w");
  if (!f) {
    sh_tmp_remove(dir);
    return NULL;
  }
  fputs("K,V,NAME\n", f);
  for (int i = 0; i < rows; i++) fprintf(f, "%d,%d,name %d\n", i, i % 1000, i);
  fclose(f);
  snprintf(imp, sizeof imp, ".import --csv --header %s T", csv);
  const char *cmds[] = {"CREATE TABLE T (K INTEGER NOT NULL PRIMARY KEY, V INTEGER, "
                        "NAME VARCHAR)", imp, NULL};
  sh_fixture *fx = sh_fixture_new(cmds);
  sh_tmp_remove(dir);
  return fx;
}

#endif /* ROWAN_TEST_SHELL_UTIL_H */
