/*
** tests/hbase/test_fault_gateway.c SOURCE_DIR: a scan of the HBase backend goes on, without a
** row lost or repeated, when the Thrift2 gateway is killed in the middle of it and started
** again (scripts/hbase-up.sh --gateway). It kills the gateway that scripts/hbase-up.sh
** started under $ROWAN_HBASE_DIR (default /tmp/rowan-hbase; its thrift2.pid) and starts it
** again on the ports of ROWAN_HBASE_THRIFT and ROWAN_ZK (tests/hbase/fault_util.h), so it
** runs alone (CTest RUN_SERIAL, label `hbase`) and fails when there is no such gateway.
** - 2,500 rows over three regions, a forward scan read 1,500 rows far (its second batch of
**   1,000 rows from the gateway), the gateway killed (SIGKILL) and restarted in the
**   background; the rest of the scan equals the rows written, in order, once each;
** - a reverse scan the same way;
** - a batch of 300 rows written while the gateway is restarting goes through: spread over
**   4 writer connections (ROWAN_HBASE_WRITERS=4), all four lost with the gateway, each
**   waits for it and connects again; each row sent once.
** Not here: a gateway killed inside a batch's calls (test_fault_writer.c), a region split or
** move during a scan (test_fault_region.c).
*/
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "fault_util.h"
#include "kv/backend.h"
#include "kv/backend/hbase/backend_hbase.h"
#include "kv/kv.h"

#define NROWS 2500
static const char *source_dir = ".";
static char uri[400];

static void kill_and_restart_gateway(void) {
  fu_gateway_kill();
  fu_gateway_start(source_dir, false);
}


/* Scan the whole table (reverse when asked), killing the gateway after `cut` rows; every row
** must come once, in order. */
static void scan_through_restart(kv_backend *be, uint32_t fid, bool reverse, int cut) {
  kv_scan_options o;
  memset(&o, 0, sizeof o);
  o.family_ids = &fid;
  o.n_families = 1;
  o.reverse = reverse;
  kv_backend_scan *sc = NULL;
  assert_int_equal(kv_be_scan_open(be, &o, NULL, &sc), KV_OK);
  kv_row row;
  int n = 0, rc;
  char want[8];
  while ((rc = kv_be_scan_next(be, sc, &row)) == KV_OK) {
    fu_key_of(reverse ? NROWS - 1 - n : n, want);
    if (row.key_len != 6 || memcmp(row.key, want, 6))
      fail_msg("row %d: %.*s, want %s (reverse %d)", n, (int)row.key_len, row.key, want, reverse);
    if (++n == cut) kill_and_restart_gateway();
  }
  if (rc != KV_ERR_NOTFOUND) fail_msg("scan ended with %d after %d rows: %s", rc, n, kv_errmsg());
  assert_int_equal(n, NROWS);
  kv_be_scan_close(be, sc);
}

static void test_scan_across_restart(void **state) {
  (void)state;
  kv_backend *be = NULL;
  setenv("ROWAN_HBASE_WRITERS", "4", 1); /* read at open */
  if (kv_backend_hbase_open(uri, &be)) fail_msg("cannot open %s: %s", uri, kv_errmsg());
  unsetenv("ROWAN_HBASE_WRITERS");
  uint32_t fid = fu_kv_table(be, "T", "r00800", "r01600", NROWS);
  scan_through_restart(be, fid, false, 1500);
  scan_through_restart(be, fid, true, 1200);
  /* a batch written while the gateway is down: the write waits for it, then goes through */
  kill_and_restart_gateway();
  kv_batch *b = kv_batch_new();
  char k[8];
  for (int i = 0; i < 300; i++) {
    fu_key_of(NROWS + i, k);
    assert_int_equal(kv_batch_put(b, fid, k, 6, "v", 1, KV_TS_NOW, k, 6), KV_OK);
  }
  kv_hbase_write_counts c0, c1;
  kv_backend_hbase_write_counts(be, &c0);
  if (kv_be_write(be, b, NULL)) fail_msg("write across the restart: %s", kv_errmsg());
  kv_backend_hbase_write_counts(be, &c1); /* its 4 writers' connections all lost: reopened */
  assert_int_equal(c1.spread_writes - c0.spread_writes, 1);
  assert_true(c1.lost_waits > c0.lost_waits); /* it waited for the gateway */
  assert_int_equal(c1.put_rows - c0.put_rows, 300);
  kv_batch_free(b);
  kv_scan_options o;
  memset(&o, 0, sizeof o);
  o.family_ids = &fid;
  o.n_families = 1;
  kv_backend_scan *sc = NULL;
  assert_int_equal(kv_be_scan_open(be, &o, NULL, &sc), KV_OK);
  kv_row row;
  int n = 0;
  while (kv_be_scan_next(be, sc, &row) == KV_OK) n++;
  kv_be_scan_close(be, sc);
  assert_int_equal(n, NROWS + 300);
  kv_backend_hbase_close(be);
  assert_int_equal(kv_backend_hbase_drop_namespace(uri), KV_OK);
}

int main(int argc, char **argv) {
  if (argc > 1) source_dir = argv[1];
  snprintf(uri, sizeof uri, "hbase://%s/tf_%ld", fu_gateway(), (long)getpid());
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_scan_across_restart)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
