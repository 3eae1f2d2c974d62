/*
** kv/util/thread.h: starting the threads the store runs for itself (the background flush
** and compaction, the bulk load's workers, the columnar scan's workers) with every signal
** blocked, as a library's own threads should be: a signal sent to the process (the
** terminal's Ctrl-C, or libedit re-raising it with kill(0, SIGINT)) then reaches only the
** application's threads, whose handlers run where the application waits for them. A
** handler run on a store thread instead left the shell's main thread seeing readline
** return NULL before its handler had noted the Ctrl-C, and the shell ended as at end of
** input (tests/cli/test_shell_tty.c, about one run in a hundred).
** Not here: what the threads do, joining them (their owners).
*/
#ifndef ROWAN_KV_UTIL_THREAD_H
#define ROWAN_KV_UTIL_THREAD_H

#include <pthread.h>
#include <signal.h>

/* pthread_create(th, NULL, fn, arg) with every signal blocked in the new thread (the
** caller's mask is restored before returning). Returns pthread_create's result. */
static inline int kv_thread_create(pthread_t *th, void *(*fn)(void *), void *arg) {
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  int rc = pthread_create(th, NULL, fn, arg);
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  return rc;
}

#endif /* ROWAN_KV_UTIL_THREAD_H */
