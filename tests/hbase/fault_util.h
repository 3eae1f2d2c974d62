/*
** tests/hbase/fault_util.h: what the HBase fault tests (tests/hbase/test_fault_*.c) share:
** killing and restarting the Thrift2 gateway that scripts/hbase-up.sh started, and driving
** tests/hbase/java/RegionAdmin.java (through tests/hbase/region-admin.sh) to split and move
** regions; a kv table of numbered rows; the SQL calls their checks share (a statement that
** must succeed, a one-number query, CHECK INDEX's counts). Everything comes from the environment the tests run in: ROWAN_HBASE_THRIFT
** (HOST:PORT of the gateway, default 127.0.0.1:9090), ROWAN_ZK (ZooKeeper, default
** 127.0.0.1:2181), ROWAN_HBASE_DIR (the HBase folder, default /tmp/rowan-hbase: its
** thrift2.pid). A missing gateway or helper fails the test (cmocka's fail_msg), never skips.
** Not here: the checks of the tests themselves.
*/
#ifndef ROWAN_TESTS_HBASE_FAULT_UTIL_H
#define ROWAN_TESTS_HBASE_FAULT_UTIL_H

#include <stdbool.h>
#include <stdio.h>
#include <stdint.h>
#include <sys/types.h>

#include "kv/backend.h"
#include "rowan.h"

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

/* Row key i as the tests write it: "r" and five digits (k holds 8 bytes). */
void fu_key_of(int i, char *k);
/* Create kv table `name` (one family "f", 1 version) split at the two 6-byte keys, write rows
** fu_key_of(0 .. nrows-1) (value "v") in one batch, and return the family's id. */
uint32_t fu_kv_table(kv_backend *be, const char *name, const char *split1, const char *split2,
                     int nrows);

/* Run sql, failing the test with the error when it fails. */
void fu_exec_ok(rowan_db *db, const char *sql);
/* The one integer a query gives (one row, one column); anything else fails the test. */
int64_t fu_one_int(rowan_db *db, const char *sql);
/* CHECK INDEX index ON table: returns MISSING + EXTRA + MISMATCHED; *unverified its UNVERIFIED
** line's count (0 when none), *data_rows and *index_rows (may be NULL) its DATA ROWS and
** INDEX ROWS (-1 when absent). */
int64_t fu_check_index(rowan_db *db, const char *index, const char *table, int64_t *unverified,
                       int64_t *data_rows, int64_t *index_rows);

#endif /* ROWAN_TESTS_HBASE_FAULT_UTIL_H */
