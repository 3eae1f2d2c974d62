/*
** tests/hbase/fault_util.h: what the HBase fault tests (tests/hbase/test_fault_*.c) share:
** killing and restarting the Thrift2 gateway that scripts/hbase-up.sh started, and driving
** tests/hbase/java/RegionAdmin.java (through tests/hbase/region-admin.sh) to split and move
** regions. Everything comes from the environment the tests run in: ROWAN_HBASE_THRIFT
** (HOST:PORT of the gateway, default 127.0.0.1:9090), ROWAN_ZK (ZooKeeper, default
** 127.0.0.1:2181), ROWAN_HBASE_DIR (the HBase folder, default /tmp/rowan-hbase: its
** thrift2.pid). A missing gateway or helper fails the test (cmocka's fail_msg), never skips.
** Not here: the checks of the tests themselves.
*/
#ifndef ROWAN_TESTS_HBASE_FAULT_UTIL_H
#define ROWAN_TESTS_HBASE_FAULT_UTIL_H

#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>

/* HOST:PORT of the gateway (ROWAN_HBASE_THRIFT or the default). */
const char *fu_gateway(void);
/* The HBase folder (ROWAN_HBASE_DIR or the default). */
const char *fu_hbase_dir(void);
/* Kill the gateway with SIGKILL and wait until it is gone and its port free. */
void fu_gateway_kill(void);
/* Start the gateway again (scripts/hbase-up.sh --gateway under source_dir, with the ports
** of the environment above), in the background or, with wait, until it listens. */
void fu_gateway_start(const char *source_dir, bool wait);

/* A running RegionAdmin (tests/hbase/java/RegionAdmin.java). */
typedef struct fu_admin {
  pid_t pid;
  FILE *to, *from;
  bool ready; /* its "ready" line read */
  char reply[4096];
} fu_admin;

/* Compile (into class_dir, once) and start the helper; returns at once (the first command
** waits until it is connected, so its JVM starts while the test does other work). */
void fu_admin_start(fu_admin *a, const char *source_dir, const char *class_dir);
/* Send one command (printf-style) and return its answer without "ok "; an "error" answer,
** or a helper that did not start, fails the test with the helper's message. */
const char *fu_admin_cmd(fu_admin *a, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Quit the helper and wait for it. */
void fu_admin_stop(fu_admin *a);

#endif /* ROWAN_TESTS_HBASE_FAULT_UTIL_H */
