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

void fu_key_of(int i, char *k) { snprintf(k, 8, "r%05d", (unsigned)i % 100000u); }

uint32_t fu_kv_table(kv_backend *be, const char *name, const char *split1, const char *split2,
                     int nrows) {
  kv_family_options fo[1] = {{"f", 1, 0, 0, 0}};
  const uint8_t *splits[2] = {(const uint8_t *)split1, (const uint8_t *)split2};
  uint32_t lens[2] = {6, 6};
  assert_int_equal(kv_be_create_table(be, name, fo, 1, splits, lens, 2), KV_OK);
  uint32_t fid = 0;
  assert_int_equal(kv_be_family_id(be, name, "f", &fid), KV_OK);
  kv_batch *b = kv_batch_new();
  char k[8];
  for (int i = 0; i < nrows; i++) {
    fu_key_of(i, k);
    assert_int_equal(kv_batch_put(b, fid, k, 6, "v", 1, KV_TS_NOW, k, 6), KV_OK);
  }
  assert_int_equal(kv_be_write(be, b, NULL), KV_OK);
  kv_batch_free(b);
  return fid;
}

void fu_exec_ok(rowan_db *db, const char *sql) {
  if (rowan_exec(db, sql, NULL, NULL) != ROWAN_OK) fail_msg("%s: %s", sql, rowan_errmsg(db));
}

int64_t fu_one_int(rowan_db *db, const char *sql) {
  rowan_stmt *st = NULL;
  if (rowan_prepare(db, sql, -1, &st, NULL) != ROWAN_OK) fail_msg("%s: %s", sql, rowan_errmsg(db));
  if (rowan_step(st) != ROWAN_ROW) fail_msg("%s: no row: %s", sql, rowan_errmsg(db));
  int64_t v = rowan_column_int64(st, 0);
  assert_int_equal(rowan_step(st), ROWAN_DONE);
  rowan_finalize(st);
  return v;
}

int64_t fu_check_index(rowan_db *db, const char *index, const char *table, int64_t *unverified,
                       int64_t *data_rows, int64_t *index_rows) {
  char sql[200];
  snprintf(sql, sizeof sql, "CHECK INDEX %s ON %s", index, table);
  rowan_stmt *st = NULL;
  if (rowan_prepare(db, sql, -1, &st, NULL) != ROWAN_OK) fail_msg("%s: %s", sql, rowan_errmsg(db));
  int64_t problems = 0, data = -1, idx = -1;
  *unverified = 0;
  int rc;
  while ((rc = rowan_step(st)) == ROWAN_ROW) {
    const char *item = rowan_column_text(st, 0);
    if (!strcmp(item, "DATA ROWS")) data = rowan_column_int64(st, 1);
    if (!strcmp(item, "INDEX ROWS")) idx = rowan_column_int64(st, 1);
    if (!strcmp(item, "MISSING") || !strcmp(item, "EXTRA") || !strcmp(item, "MISMATCHED"))
      problems += rowan_column_int64(st, 1);
    if (!strncmp(item, "UNVERIFIED ", 11)) *unverified = atoll(item + 11);
    if (rowan_column_type(st, 1) == ROWAN_NULL) printf("# %s\n", item);
  }
  if (rc != ROWAN_DONE) fail_msg("%s: %s", sql, rowan_errmsg(db));
  rowan_finalize(st);
  if (data_rows) *data_rows = data;
  if (index_rows) *index_rows = idx;
  return problems;
}
