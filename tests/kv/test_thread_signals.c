/*
** tests/kv/test_thread_signals.c: the store's own threads block every signal
** (kv/util/thread.h), so a signal sent to the process reaches only the application's
** threads. A Ctrl-C that libedit re-raises with kill(0, SIGINT) once ran the shell's handler
** on the store's background thread, after the main thread had already taken readline's NULL
** for the end of input (tests/cli/test_shell_tty.c failed about once in a hundred runs).
** Checked on Linux through /proc/self/task/TID/status ("SigBlk"): a thread started by
** kv_thread_create (as the store's background thread and the bulk load's and the columnar
** scan's workers are) blocks SIGINT while the caller takes it.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <cmocka.h>

#include "kv/kv.h"
#include "kv/util/thread.h"

/* The threads of this process other than the caller whose blocked set lacks SIGINT;
** *others gets how many other threads there are. */
static int threads_taking_sigint(int *others) {
  long self = (long)syscall(SYS_gettid);
  DIR *d = opendir("/proc/self/task");
  assert_non_null(d);
  int bad = 0;
  *others = 0;
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    if (e->d_name[0] == '.' || atol(e->d_name) == self) continue;
    char path[320], line[256];
    snprintf(path, sizeof path, "/proc/self/task/%s/status", e->d_name);
    FILE *f = fopen(path, "r");
    if (!f) continue; /* the thread ended meanwhile */
    (*others)++;
    while (fgets(line, sizeof line, f)) {
      unsigned long long blk;
      if (sscanf(line, "SigBlk: %llx", &blk) == 1) {
        if (!(blk & (1ull << (SIGINT - 1)))) bad++;
        break;
      }
    }
    fclose(f);
  }
  closedir(d);
  return bad;
}

static void *idle(void *arg) {
  volatile int *stop = arg;
  while (!*stop) usleep(1000);
  return NULL;
}

/* kv_thread_create's thread blocks SIGINT; the caller's own mask is unchanged. */
static void test_thread_create_blocks(void **state) {
  (void)state;
  sigset_t intr, before, after;
  sigemptyset(&intr);
  sigaddset(&intr, SIGINT);
  pthread_sigmask(SIG_UNBLOCK, &intr, &before); /* the caller takes SIGINT */
  pthread_sigmask(SIG_SETMASK, NULL, &before);
  volatile int stop = 0;
  pthread_t th;
  assert_int_equal(kv_thread_create(&th, idle, (void *)&stop), 0);
  pthread_sigmask(SIG_SETMASK, NULL, &after);
  assert_int_equal(sigismember(&before, SIGINT), sigismember(&after, SIGINT));
  int others = 0;
  assert_int_equal(threads_taking_sigint(&others), 0);
  assert_true(others >= 1);
  stop = 1;
  pthread_join(th, NULL);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_thread_create_blocks),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
