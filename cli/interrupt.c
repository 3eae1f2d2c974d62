/*
** cli/interrupt.c: Ctrl-C in the shell, as in sqlite3. SIGINT interrupts the statement
** running (rowan_interrupt, which only stores to an atomic flag, so it is safe in a signal
** handler); a script or command-line input stops at the next statement or command (exit
** status 1: a command was interrupted); a second Ctrl-C within a second of the first ends
** the process at once with status 130 (128 + SIGINT), which loses nothing committed (the
** write-ahead log holds it). In an interactive session the count is cleared after each
** statement, so single Ctrl-Cs only interrupt; at the prompt, libedit's readline returns
** NULL after the handler ran, and cli_run_input drops the line instead of ending.
** Not here: what rowan_step does when interrupted (api/, exec/, kv/ check the flag).
*/
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/shell.h"

static rowan_db *volatile g_db;          /* the connection the handler interrupts */
static volatile sig_atomic_t g_seen;     /* Ctrl-Cs since the last clear */
static volatile sig_atomic_t g_last_ms;  /* monotonic ms (low bits) of the last one */

static long now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts); /* async-signal-safe (POSIX.1-2008) */
  return (long)(ts.tv_sec * 1000 + ts.tv_nsec / 1000000);
}

static void on_sigint(int sig) {
  (void)sig;
  long t = now_ms() & 0x3fffffff;
  if (g_seen > 0 && t - (long)g_last_ms >= 0 && t - (long)g_last_ms < 1000) {
    static const char msg[] = "\nrowan: interrupted twice: exiting\n";
    ssize_t w = write(STDERR_FILENO, msg, sizeof msg - 1);
    (void)w;
    _exit(130);
  }
  g_last_ms = (sig_atomic_t)t;
  g_seen++;
  if (g_db) rowan_interrupt(g_db);
}

void cli_interrupt_install(rowan_db *db) {
  g_db = db;
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_sigint;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART; /* reads of the input go on after the handler */
  sigaction(SIGINT, &sa, NULL);
}

bool cli_interrupt_seen(void) { return g_seen > 0; }

void cli_interrupt_clear(void) { g_seen = 0; }

bool cli_stop_for_interrupt(cli_shell *sh) {
  if (!g_seen || sh->interactive) return false;
  if (!sh->quit) {
    fprintf(stderr, "rowan: stopped by Ctrl-C\n");
    sh->n_errors++;
    sh->quit = true;
  }
  return true;
}
