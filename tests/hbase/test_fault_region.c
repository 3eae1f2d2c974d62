/*
** tests/hbase/test_fault_region.c SOURCE_DIR CLASS_DIR: scans of Rowan on HBase go on, each
** row once and in order, when the region they read is split or moved to the other region
** server in the middle of them (issue 18's fault tests). HBase's admin API is driven by
** tests/hbase/java/RegionAdmin.java (compiled into CLASS_DIR at the first run), which finds
** the HBase table of a Rowan table in the namespace's registry ROWAN_KV and waits until each
** split or move is done. Label `hbase`; the gateway, ZooKeeper and HBase folder come from
** ROWAN_HBASE_THRIFT, ROWAN_ZK and ROWAN_HBASE_DIR (tests/hbase/fault_util.h).
** - the backend alone (kv/backend.h): 3,500 rows over three regions; a forward scan split
**   under it (the region its gateway scanner is in) and then moved under it, a reverse scan
**   the same way on other regions; each gives every row once, in order;
** - SQL through the C API (include/rowan.h) on hbase://: a table SPLIT ON two keys with a
**   global index; a SELECT ... ORDER BY the key read 1,200 rows in, the region being read
**   split and the next one moved, then read to its end; an ORDER BY of the indexed column
**   answered through the index across a split of the index's table; COUNT(*), the sum, and
**   CHECK INDEX after all of it.
** Not here: the gateway's own death (test_fault_gateway.c), a writer killed in a batch
** (test_fault_writer.c).
*/
#include <setjmp.h>
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
#include "rowan.h"

#define NROWS 3500
static const char *source_dir = ".", *class_dir = ".";
static fu_admin admin;


/* The number of regions in a RegionAdmin "regions" answer ("N START,SERVER ..."). */
static int regions_of(const char *ns, const char *regex) {
  return atoi(fu_admin_cmd(&admin, "regions %s %s", ns, regex));
}

/* One step of a scan script: after `at` rows, run `cmd` (a RegionAdmin command). */
typedef struct step {
  int at;
  const char *cmd;
} step;

/* Scan table T whole (reverse when asked), running the steps on the way; every row once,
** in order. */
static void scan_with_steps(kv_backend *be, uint32_t fid, bool reverse, const char *ns,
                            const step *steps, int nsteps) {
  kv_scan_options o;
  memset(&o, 0, sizeof o);
  o.family_ids = &fid;
  o.n_families = 1;
  o.reverse = reverse;
  kv_backend_scan *sc = NULL;
  assert_int_equal(kv_be_scan_open(be, &o, NULL, &sc), KV_OK);
  kv_row row;
  int n = 0, rc, k = 0;
  char want[8];
  while ((rc = kv_be_scan_next(be, sc, &row)) == KV_OK) {
    fu_key_of(reverse ? NROWS - 1 - n : n, want);
    if (row.key_len != 6 || memcmp(row.key, want, 6))
      fail_msg("row %d: %.*s, want %s (reverse %d)", n, (int)row.key_len, row.key, want, reverse);
    if (row.n_cells != 1 || row.cells[0].value_len != 6 || memcmp(row.cells[0].value, want, 6))
      fail_msg("row %s: wrong cells", want);
    n++;
    while (k < nsteps && steps[k].at == n) {
      char cmd[200];
      snprintf(cmd, sizeof cmd, steps[k].cmd, ns);
      printf("# after %d rows: %s -> %s\n", n, cmd, fu_admin_cmd(&admin, "%s", cmd));
      k++;
    }
  }
  if (rc != KV_ERR_NOTFOUND) fail_msg("scan ended with %d after %d rows: %s", rc, n, kv_errmsg());
  assert_int_equal(n, NROWS);
  assert_int_equal(k, nsteps);
  kv_be_scan_close(be, sc);
}

/* The backend alone. Regions at first: [-, r00700) [r00700, r02100) [r02100, +). The
** backend reads 1,000 rows per call of the gateway; the gateway's scanner is then in the
** region that holds the next row, which is the one each step splits or moves. */
static void test_backend_scan_split_move(void **state) {
  (void)state;
  char uri[400], ns[64];
  snprintf(ns, sizeof ns, "tfr_kv_%ld", (long)getpid());
  snprintf(uri, sizeof uri, "hbase://%s/%s", fu_gateway(), ns);
  kv_backend *be = NULL;
  if (kv_backend_hbase_open(uri, &be)) fail_msg("cannot open %s: %s", uri, kv_errmsg());
  uint32_t fid = fu_kv_table(be, "T", "r00700", "r02100", NROWS);
  assert_int_equal(regions_of(ns, "T"), 3);
  /* forward: after 1,200 rows (two calls: rows up to r01999) the gateway's scanner is in
  ** [r00700, r02100): split it behind and ahead of that point; after 2,500 (three calls)
  ** it is in [r02100, +): move that region */
  const step fwd[] = {{1200, "split %s T r01500"}, {2500, "move %s T r03000"}};
  scan_with_steps(be, fid, false, ns, fwd, 2);
  assert_int_equal(regions_of(ns, "T"), 4);
  /* reverse: after 10 rows (one call: rows down to r02500) the scanner is in [r02100, +):
  ** split it at r02800; after 2,300 (down to r00500) it is in [-, r00700): move it (a
  ** daughter of a split is not split again here: HBase first compacts away its references) */
  const step rev[] = {{10, "split %s T r02800"}, {2300, "move %s T r00400"}};
  scan_with_steps(be, fid, true, ns, rev, 2);
  assert_int_equal(regions_of(ns, "T"), 5);
  kv_backend_hbase_close(be);
  assert_int_equal(kv_backend_hbase_drop_namespace(uri), KV_OK);
}




#define NSQL 3000
/* V of row i: a permutation of 0..NSQL-1, so that the index's order is not the table's. */
static int v_of(int i) { return (int)((i * 7L) % NSQL); }

/* SQL through the C API: a keyed scan and an index scan across splits and a move. */
static void test_sql_scan_split_move(void **state) {
  (void)state;
  char uri[400], ns[64];
  snprintf(ns, sizeof ns, "tfr_sql_%ld", (long)getpid());
  snprintf(uri, sizeof uri, "hbase://%s/%s", fu_gateway(), ns);
  rowan_db *db = NULL;
  if (rowan_open(uri, NULL, &db) != ROWAN_OK) fail_msg("rowan_open(%s): %s", uri, rowan_errmsg(db));
  fu_exec_ok(db, "CREATE TABLE T (K VARCHAR PRIMARY KEY, V INTEGER, W VARCHAR) "
              "SPLIT ON ('k00700', 'k02100')");
  fu_exec_ok(db, "CREATE INDEX IX ON T (V) INCLUDE (W)");
  fu_exec_ok(db, "BEGIN");
  rowan_stmt *st = NULL;
  assert_int_equal(rowan_prepare(db, "UPSERT INTO T VALUES (?, ?, ?)", -1, &st, NULL), ROWAN_OK);
  int64_t sum = 0;
  for (int i = 0; i < NSQL; i++) {
    char k[16], w[16];
    snprintf(k, sizeof k, "k%05d", i);
    snprintf(w, sizeof w, "w%d", v_of(i));
    rowan_bind_text(st, 1, k, -1);
    rowan_bind_int64(st, 2, v_of(i));
    rowan_bind_text(st, 3, w, -1);
    if (rowan_step(st) != ROWAN_DONE) fail_msg("upsert %d: %s", i, rowan_errmsg(db));
    rowan_reset(st);
    sum += v_of(i);
  }
  rowan_finalize(st);
  fu_exec_ok(db, "COMMIT");
  const char *tre = "\\$t[0-9]+\\.T", *ire = "\\$i[0-9]+\\.T\\.IX";
  int tregions = regions_of(ns, tre), iregions = regions_of(ns, ire);
  assert_int_equal(tregions, 3);

  /* the table in key order: split the region being read, move the next one */
  assert_int_equal(rowan_prepare(db, "SELECT K, V, W FROM T ORDER BY K", -1, &st, NULL), ROWAN_OK);
  int n = 0, rc;
  while ((rc = rowan_step(st)) == ROWAN_ROW) {
    char k[16], w[16];
    snprintf(k, sizeof k, "k%05d", n);
    snprintf(w, sizeof w, "w%d", v_of(n));
    if (strcmp(rowan_column_text(st, 0), k) || rowan_column_int64(st, 1) != v_of(n) ||
        strcmp(rowan_column_text(st, 2), w))
      fail_msg("row %d: %s %lld %s, want %s", n, rowan_column_text(st, 0),
               (long long)rowan_column_int64(st, 1), rowan_column_text(st, 2), k);
    if (++n == 1200) {
      printf("# split: %s\n", fu_admin_cmd(&admin, "split %s %s k01500", ns, tre));
      printf("# move: %s\n", fu_admin_cmd(&admin, "move %s %s k02500", ns, tre));
    }
  }
  if (rc != ROWAN_DONE) fail_msg("SELECT ended after %d rows: %s", n, rowan_errmsg(db));
  rowan_finalize(st);
  assert_int_equal(n, NSQL);
  assert_int_equal(regions_of(ns, tre), 4);

  /* through the index, in V order: split the index's table under the scan */
  const char *q = "SELECT /*+ INDEX(T IX) */ V, W, K FROM T WHERE V >= 0 ORDER BY V";
  assert_int_equal(rowan_prepare(db, q, -1, &st, NULL), ROWAN_OK);
  n = 0;
  while ((rc = rowan_step(st)) == ROWAN_ROW) {
    char w[16];
    snprintf(w, sizeof w, "w%d", n);
    if (rowan_column_int64(st, 0) != n || strcmp(rowan_column_text(st, 1), w))
      fail_msg("index row %d: %lld %s", n, (long long)rowan_column_int64(st, 0),
               rowan_column_text(st, 1));
    if (++n == 1100) {
      /* the index's keys start with V: the indicator byte 01 (a nullable column), then the
      ** INTEGER's 4 bytes with the sign bit flipped; split at V 2000, move that half */
      const char *at = "\\x01\\x80\\x00\\x07\\xD0";
      printf("# index split: %s\n", fu_admin_cmd(&admin, "split %s %s %s", ns, ire, at));
      printf("# index move: %s\n", fu_admin_cmd(&admin, "move %s %s %s", ns, ire, at));
    }
  }
  if (rc != ROWAN_DONE) fail_msg("index SELECT ended after %d rows: %s", n, rowan_errmsg(db));
  rowan_finalize(st);
  assert_int_equal(n, NSQL);
  assert_int_equal(regions_of(ns, ire), iregions + 1);

  assert_int_equal(fu_one_int(db, "SELECT COUNT(*) FROM T"), NSQL);
  assert_int_equal(fu_one_int(db, "SELECT SUM(V) FROM T"), sum);
  assert_int_equal(fu_one_int(db, "SELECT /*+ INDEX(T IX) */ COUNT(*) FROM T WHERE V >= 0"), NSQL);
  int64_t unverified = 0, data = 0, idx = 0;
  assert_int_equal(fu_check_index(db, "IX", "T", &unverified, &data, &idx), 0);
  assert_int_equal(unverified, 0);
  assert_int_equal(data, idx);
  assert_int_equal(rowan_close(db), ROWAN_OK);
  assert_int_equal(kv_backend_hbase_drop_namespace(uri), KV_OK);
}

static int setup(void **state) {
  (void)state;
  fu_admin_start(&admin, source_dir, class_dir);
  return 0;
}

static int teardown(void **state) {
  (void)state;
  fu_admin_stop(&admin);
  return 0;
}

int main(int argc, char **argv) {
  if (argc > 2) source_dir = argv[1], class_dir = argv[2];
  setvbuf(stdout, NULL, _IONBF, 0);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_backend_scan_split_move),
      cmocka_unit_test(test_sql_scan_split_move),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
