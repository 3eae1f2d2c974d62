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
** - a scan of 250 ranges in one scanner (a MultiRowRangeFilter) with a value filter, forward
**   and reverse, the gateway killed 50 rows in (inside the first batch): the scanner opened
**   again after the last row read, its filters still on the region servers;
** - a skip scan by prefix (25 prefixes of 4 bytes, 10 rows of each) with the gateway killed
**   after 120 rows: its probes and scanners open again, every row once, in order;
** - a batch of 300 rows written while the gateway is restarting goes through: spread over
**   4 writer connections (ROWAN_HBASE_WRITERS=4), all four lost with the gateway, each
**   waits for it and connects again; each row sent once;
** - a scanner the gateway no longer has ("Invalid scanner Id": its lease expired; the test
**   hook ROWAN_HBASE_EXPIRE_SCANNER_AFTER_ROWS closes it on the gateway after 1,100 rows):
**   the scan opens a new one after its last row, every row once, in order.
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
#include "kv/backend/hbase/hb_client.h"
#include "kv/kv.h"

#define NROWS 2500
static const char *source_dir = ".";
static char uri[400];

/* Wait (up to 60 s) until the gateway restarted in the background answers: a scan's first
** scanner is not opened again after a failure, only the scanners it already had. */
static void wait_for_gateway(void) {
  char host[300];
  snprintf(host, sizeof host, "%s", fu_gateway());
  char *colon = strrchr(host, ':');
  assert_non_null(colon);
  *colon = 0;
  for (int i = 0; i < 600; i++) {
    hb_client *c = NULL;
    if (hb_open(host, atoi(colon + 1), 1000, &c) == KV_OK) {
      bool e = false;
      int rc = hb_table_exists(c, NULL, "no_such_table", &e);
      hb_close(c);
      if (rc == KV_OK) return;
    }
    usleep(100000);
  }
  fail_msg("the gateway %s did not come back in 60 s", fu_gateway());
}

static void kill_and_restart_gateway(void) {
  wait_for_gateway(); /* a restart in the background done: its pid written */
  fu_gateway_kill();
  fu_gateway_start(source_dir, false);
}


/* Scan the whole table (reverse when asked), killing the gateway after `cut` rows; every row
** must come once, in order. `multi`: instead, the first five rows of every ten (250 ranges,
** one scanner under a MultiRowRangeFilter) whose value is below r02000 (a server filter). */
static void scan_through_restart(kv_backend *be, uint32_t fid, bool reverse, int cut, bool multi) {
  kv_scan_options o;
  memset(&o, 0, sizeof o);
  o.family_ids = &fid;
  o.n_families = 1;
  o.reverse = reverse;
  static char bounds[NROWS / 10][2][8];
  static kv_range r[NROWS / 10];
  kv_fx_node lt = {KV_FX_CMP, KV_FX_LT, 0, fid, (const uint8_t *)"v", 1, (const uint8_t *)"r02000", 6};
  kv_filter_expr fx = {&lt, 1};
  kv_backend_read x = {&fx, NULL, 0};
  if (multi) {
    for (int i = 0; i < NROWS / 10; i++) {
      fu_key_of(i * 10, bounds[i][0]);
      fu_key_of(i * 10 + 4, bounds[i][1]);
      r[i] = (kv_range){(const uint8_t *)bounds[i][0], 6, true, (const uint8_t *)bounds[i][1], 6, true};
    }
    o.ranges = r;
    o.n_ranges = NROWS / 10;
  }
  kv_backend_scan *sc = NULL;
  wait_for_gateway();
  uint64_t opens = hb_scan_opens();
  assert_int_equal(kv_be_scan_open(be, &o, multi ? &x : NULL, &sc), KV_OK);
  kv_row row;
  int n = 0, rc, total = multi ? 1000 : NROWS;
  char want[8];
  while ((rc = kv_be_scan_next(be, sc, &row)) == KV_OK) {
    int i = reverse ? total - 1 - n : n;
    fu_key_of(multi ? i / 5 * 10 + i % 5 : i, want);
    if (row.key_len != 6 || memcmp(row.key, want, 6))
      fail_msg("row %d: %.*s, want %s (reverse %d multi %d)", n, (int)row.key_len, row.key, want,
               reverse, multi);
    if (++n == cut) kill_and_restart_gateway();
  }
  if (rc != KV_ERR_NOTFOUND) fail_msg("scan ended with %d after %d rows: %s", rc, n, kv_errmsg());
  assert_int_equal(n, total);
  kv_scan_metrics m;
  kv_be_scan_metrics(be, sc, &m);
  if (multi) {
    assert_int_equal(m.rows_filtered, 0); /* the filter stayed on the region servers */
    opens = hb_scan_opens() - opens;      /* one scanner, opened again after the kill */
    if (opens < 2 || opens > 12) fail_msg("%llu scanners (reverse %d)", (unsigned long long)opens, reverse);
  }
  kv_be_scan_close(be, sc);
}

static uint32_t prefix4(void *ctx, const uint8_t *key, uint32_t len) {
  (void)ctx;
  return len >= 4 ? 4 : 0;
}

/* Rows "rPPP10".."rPPP19" of every prefix rPPP, the gateway killed after `cut` of them. */
static void skip_scan_through_restart(kv_backend *be, uint32_t fid, int cut) {
  kv_range suf = {(const uint8_t *)"10", 2, true, (const uint8_t *)"19", 2, true};
  kv_skip_prefix sp = {prefix4, NULL, &suf, 1, 0};
  kv_scan_options o;
  memset(&o, 0, sizeof o);
  o.family_ids = &fid;
  o.n_families = 1;
  o.skip_prefix = &sp;
  kv_backend_scan *sc = NULL;
  assert_int_equal(kv_be_scan_open(be, &o, NULL, &sc), KV_OK);
  kv_row row;
  int n = 0, rc;
  char want[8];
  while ((rc = kv_be_scan_next(be, sc, &row)) == KV_OK) {
    fu_key_of((n / 10) * 100 + 10 + n % 10, want);
    if (row.key_len != 6 || memcmp(row.key, want, 6))
      fail_msg("skip scan row %d: %.*s, want %s", n, (int)row.key_len, row.key, want);
    if (++n == cut) kill_and_restart_gateway();
  }
  if (rc != KV_ERR_NOTFOUND) fail_msg("skip scan ended with %d after %d rows: %s", rc, n, kv_errmsg());
  assert_int_equal(n, NROWS / 100 * 10);
  kv_scan_metrics m;
  kv_be_scan_metrics(be, sc, &m);
  assert_int_equal(m.prefixes_sought, NROWS / 100);
  kv_be_scan_close(be, sc);
}

static void test_scan_across_restart(void **state) {
  (void)state;
  kv_backend *be = NULL;
  setenv("ROWAN_HBASE_WRITERS", "4", 1); /* read at open */
  if (kv_backend_hbase_open(uri, &be)) fail_msg("cannot open %s: %s", uri, kv_errmsg());
  unsetenv("ROWAN_HBASE_WRITERS");
  uint32_t fid = fu_kv_table(be, "T", "r00800", "r01600", NROWS);
  scan_through_restart(be, fid, false, 1500, false);
  scan_through_restart(be, fid, true, 1200, false);
  scan_through_restart(be, fid, false, 50, true); /* in the first batch of rows */
  scan_through_restart(be, fid, true, 50, true);
  skip_scan_through_restart(be, fid, 120);
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

static void test_scanner_expired(void **state) {
  (void)state;
  setenv("ROWAN_HBASE_EXPIRE_SCANNER_AFTER_ROWS", "1100", 1);
  char u[420];
  snprintf(u, sizeof u, "%sx", uri);
  kv_backend *be = NULL;
  if (kv_backend_hbase_open(u, &be)) fail_msg("cannot open %s: %s", u, kv_errmsg());
  uint32_t fid = fu_kv_table(be, "T", "r00800", "r01600", NROWS);
  uint64_t opens = hb_scan_opens();
  scan_through_restart(be, fid, false, -1, false); /* no kill: the hook drops the scanner */
  assert_int_equal(hb_scan_opens() - opens, 2);    /* the scan's, and one after the lost one */
  unsetenv("ROWAN_HBASE_EXPIRE_SCANNER_AFTER_ROWS");
  kv_backend_hbase_close(be);
  assert_int_equal(kv_backend_hbase_drop_namespace(u), KV_OK);
}

int main(int argc, char **argv) {
  if (argc > 1) source_dir = argv[1];
  snprintf(uri, sizeof uri, "hbase://%s/tf_%ld", fu_gateway(), (long)getpid());
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_scan_across_restart),
                                     cmocka_unit_test(test_scanner_expired)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
