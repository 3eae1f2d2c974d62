/*
** tests/hbase/fault_util.c: the gateway kills and restarts and the region admin helper of
** the HBase fault tests (fault_util.h). The gateway is restarted by scripts/hbase-up.sh
** --gateway with ROWAN_HBASE_THRIFT_PORT and ROWAN_HBASE_ZK_PORT set from ROWAN_HBASE_THRIFT
** and ROWAN_ZK, so that a test against a second HBase (other ports, other folder) restarts
** that one's gateway and never rewrites its configuration with the default ports. The
** region admin runs as a child process fed through two pipes.
** Not here: the tests.
*/
#include "fault_util.h"

#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

const char *fu_gateway(void) {
  const char *e = getenv("ROWAN_HBASE_THRIFT");
  return e && *e ? e : "127.0.0.1:9090";
}

const char *fu_hbase_dir(void) {
  const char *e = getenv("ROWAN_HBASE_DIR");
  return e && *e ? e : "/tmp/rowan-hbase";
}

static long gateway_pid(void) {
  char path[600];
  snprintf(path, sizeof path, "%s/thrift2.pid", fu_hbase_dir());
  FILE *f = fopen(path, "r");
  if (!f) fail_msg("no %s: this test needs the gateway scripts/hbase-up.sh started", path);
  long pid = 0;
  int ok = fscanf(f, "%ld", &pid) == 1 && pid > 1;
  fclose(f);
  if (!ok) fail_msg("%s holds no pid", path);
  return pid;
}

/* The port after the last ':' of HOST:PORT. */
static const char *port_of(const char *hp) {
  const char *c = strrchr(hp, ':');
  return c ? c + 1 : hp;
}

void fu_gateway_kill(void) {
  long pid = gateway_pid();
  if (kill((pid_t)pid, SIGKILL) != 0) fail_msg("cannot kill the gateway (pid %ld)", pid);
  for (int i = 0; i < 50 && kill((pid_t)pid, 0) == 0; i++) usleep(100000);
  sleep(1); /* the port free again */
}

void fu_gateway_start(const char *source_dir, bool wait) {
  const char *zk = getenv("ROWAN_ZK");
  setenv("ROWAN_HBASE_THRIFT_PORT", port_of(fu_gateway()), 1);
  setenv("ROWAN_HBASE_ZK_PORT", port_of(zk && *zk ? zk : "127.0.0.1:2181"), 1);
  setenv("ROWAN_HBASE_DIR", fu_hbase_dir(), 1);
  char cmd[1400];
  snprintf(cmd, sizeof cmd, "sh '%s/scripts/hbase-up.sh' --gateway >/dev/null 2>&1%s", source_dir,
           wait ? "" : " &");
  if (system(cmd) != 0) fail_msg("cannot start the gateway: %s", cmd);
}

void fu_admin_start(fu_admin *a, const char *source_dir, const char *class_dir) {
  memset(a, 0, sizeof *a);
  int in[2], out[2];
  if (pipe(in) || pipe(out)) fail_msg("pipe: %s", strerror(errno));
  fflush(NULL);
  pid_t pid = fork();
  if (pid < 0) fail_msg("fork: %s", strerror(errno));
  if (pid == 0) {
    dup2(in[0], 0);
    dup2(out[1], 1);
    close(in[0]), close(in[1]), close(out[0]), close(out[1]);
    char script[1000];
    snprintf(script, sizeof script, "%s/tests/hbase/region-admin.sh", source_dir);
    execl("/bin/sh", "sh", script, class_dir, (char *)NULL);
    _exit(127);
  }
  close(in[0]);
  close(out[1]);
  a->pid = pid;
  a->to = fdopen(in[1], "w");
  a->from = fdopen(out[0], "r");
  if (!a->to || !a->from) fail_msg("fdopen: %s", strerror(errno));
}

/* The helper's "ready", once: its JVM starts while the test loads its rows. */
static void await_ready(fu_admin *a) {
  if (a->ready) return;
  if (!fgets(a->reply, sizeof a->reply, a->from) || strncmp(a->reply, "ready", 5))
    fail_msg("the region admin helper did not start (see %s/logs/region-admin.log)",
             fu_hbase_dir());
  a->ready = true;
}

const char *fu_admin_cmd(fu_admin *a, const char *fmt, ...) {
  char cmd[1000];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(cmd, sizeof cmd, fmt, ap);
  va_end(ap);
  await_ready(a);
  fprintf(a->to, "%s\n", cmd);
  fflush(a->to);
  if (!fgets(a->reply, sizeof a->reply, a->from)) fail_msg("%s: the region admin helper died", cmd);
  a->reply[strcspn(a->reply, "\n")] = 0;
  if (strncmp(a->reply, "ok ", 3) != 0) fail_msg("%s: %s", cmd, a->reply);
  return a->reply + 3;
}

void fu_admin_stop(fu_admin *a) {
  if (!a->pid) return;
  fprintf(a->to, "quit\n");
  fclose(a->to);
  fclose(a->from);
  int st = 0;
  waitpid(a->pid, &st, 0);
  a->pid = 0;
}
