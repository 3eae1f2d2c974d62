/*
** tests/hbase/test_hbase_write.c: the HBase backend's write path (backend_hbase_write.c) on a
** real HBase: rows with NULLs (tombstones) in the middle of large batches spread over several
** writer connections, how each row went (kv_backend_hbase_write_counts), what reads see, and
** bad input. Label `hbase`; the gateway from ROWAN_HBASE_THRIFT (default 127.0.0.1:9090).
** - kv: a table of three columns a, b, c over three regions; 3,000 new rows in one batch
**   (ROWAN_HBASE_WRITERS=4), some with c or b and c deleted (a NULL): those are split into a
**   put and a delete (asked about first, none mutateRow); 1,000 of them again setting b NULL
**   over a value (a mutateRow each) or over a NULL (split again); 500 rows deleted whole
**   (deleteMultiple); a row with two kinds of tombstones (mutateRow); every row read back
**   equal to a model after each batch;
** - SQL: the same statements (a 2,000-row transaction with NULLs in three columns, an UPSERT
**   SELECT setting a column NULL over existing rows, a single UPSERT of NULLs over a row, new
**   rows naming only some columns, a DELETE of a range) on HBase and on a local in-memory
**   database, with an index: the queries' answers equal, CHECK INDEX clean on HBase;
** - bad input: ROWAN_HBASE_WRITERS out of range or not a number refused at open; the client's
**   row deletes with a put, two delete kinds, no column, an empty row, a negative timestamp
**   refused naming the row; existsAll and deleteMultiple on a missing table fail.
** Not here: the gateway or the writer killed in the middle of a write (test_fault_*.c).
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "kv/backend.h"
#include "kv/backend/hbase/backend_hbase.h"
#include "kv/backend/hbase/hb_client.h"
#include "kv/kv.h"
#include "kv/util/status.h"
#include "rowan.h"
#include "tu_hbase_sql.h"

static char gateway[300] = "127.0.0.1:9090";

#define NROWS 3000
/* the model: each row's a, b, c values (-1: no cell), or gone[] */
static int ma[NROWS], mb[NROWS], mc[NROWS];
static bool gone[NROWS];

static void key_of(int i, char *k) { snprintf(k, 8, "r%05d", i); }

static void put(kv_batch *b, uint32_t fid, int i, const char *q, int v) {
  char k[8], val[16];
  key_of(i, k);
  int n = snprintf(val, sizeof val, "%d", v);
  assert_int_equal(kv_batch_put(b, fid, k, 6, q, 1, KV_TS_NOW, val, (size_t)n), KV_OK);
}

static void del(kv_batch *b, uint32_t fid, int i, int type, const char *q) {
  char k[8];
  key_of(i, k);
  assert_int_equal(kv_batch_delete(b, fid, type, k, 6, q, q ? 1 : 0, KV_TS_NOW), KV_OK);
}

/* Every row of the table equal to the model. */
static void check_model(kv_backend *be, uint32_t fid, const char *when) {
  kv_scan_options o;
  memset(&o, 0, sizeof o);
  o.family_ids = &fid;
  o.n_families = 1;
  kv_backend_scan *sc = NULL;
  assert_int_equal(kv_be_scan_open(be, &o, NULL, &sc), KV_OK);
  kv_row row;
  int next = 0, rc;
  while ((rc = kv_be_scan_next(be, sc, &row)) == KV_OK) {
    char kb[16]; /* the key is not 0-terminated: its digits alone */
    snprintf(kb, sizeof kb, "%.*s", row.key_len > 1 ? (int)row.key_len - 1 : 0, (const char *)row.key + 1);
    int i = atoi(kb);
    for (; next < i; next++)
      if (!gone[next]) fail_msg("%s: row %d missing", when, next);
    next = i + 1;
    if (gone[i]) fail_msg("%s: row %d should be gone", when, i);
    int got[3] = {-1, -1, -1};
    for (uint32_t c = 0; c < row.n_cells; c++) {
      char v[16];
      snprintf(v, sizeof v, "%.*s", (int)row.cells[c].value_len, (const char *)row.cells[c].value);
      got[row.cells[c].qual[0] - 'a'] = atoi(v);
    }
    if (got[0] != ma[i] || got[1] != mb[i] || got[2] != mc[i])
      fail_msg("%s: row %d is (%d, %d, %d), want (%d, %d, %d)", when, i, got[0], got[1], got[2],
               ma[i], mb[i], mc[i]);
  }
  if (rc != KV_ERR_NOTFOUND) fail_msg("%s: scan: %s", when, kv_errmsg());
  for (; next < NROWS; next++)
    if (!gone[next]) fail_msg("%s: row %d missing", when, next);
  kv_be_scan_close(be, sc);
}

static void test_kv_paths(void **state) {
  (void)state;
  char uri[400];
  snprintf(uri, sizeof uri, "hbase://%s/thw_kv_%ld", gateway, (long)getpid());
  setenv("ROWAN_HBASE_WRITERS", "4", 1);
  kv_backend *be = NULL;
  if (kv_backend_hbase_open(uri, &be)) fail_msg("cannot open %s: %s", uri, kv_errmsg());
  unsetenv("ROWAN_HBASE_WRITERS");
  kv_family_options fo[1] = {{"f", 1, 0, 0, 0}};
  const uint8_t *splits[2] = {(const uint8_t *)"r01000", (const uint8_t *)"r02000"};
  uint32_t lens[2] = {6, 6};
  assert_int_equal(kv_be_create_table(be, "W", fo, 1, splits, lens, 2), KV_OK);
  uint32_t fid = 0;
  assert_int_equal(kv_be_family_id(be, "W", "f", &fid), KV_OK);

  /* 1. new rows; every 7th without c, every 11th without b and c (tombstones: NULLs) */
  kv_hbase_write_counts c0, c1;
  kv_backend_hbase_write_counts(be, &c0);
  kv_batch *b = kv_batch_new();
  int nulls = 0;
  for (int i = 0; i < NROWS; i++) {
    ma[i] = i, mb[i] = 10 * i, mc[i] = 100 * i;
    put(b, fid, i, "a", ma[i]);
    if (i % 11 == 0) {
      del(b, fid, i, KV_DELETE_COLUMN, "b");
      mb[i] = -1;
    } else {
      put(b, fid, i, "b", mb[i]);
    }
    if (i % 7 == 0 || i % 11 == 0) {
      del(b, fid, i, KV_DELETE_COLUMN, "c");
      mc[i] = -1;
      nulls++;
    } else {
      put(b, fid, i, "c", mc[i]);
    }
  }
  assert_int_equal(kv_be_write(be, b, NULL), KV_OK);
  kv_batch_free(b);
  kv_backend_hbase_write_counts(be, &c1);
  assert_int_equal(c1.split_rows - c0.split_rows, nulls);
  assert_int_equal(c1.asked_rows - c0.asked_rows, nulls);
  assert_int_equal(c1.put_rows - c0.put_rows, NROWS - nulls);
  assert_int_equal(c1.mutate_rows - c0.mutate_rows, 0);
  assert_int_equal(c1.spread_writes - c0.spread_writes, 1);
  check_model(be, fid, "new rows");

  /* 2. rows 0..999: a new a, b set NULL: over a value a mutateRow, over a NULL a split */
  b = kv_batch_new();
  int over_value = 0;
  for (int i = 0; i < 1000; i++) {
    put(b, fid, i, "a", ++ma[i]);
    del(b, fid, i, KV_DELETE_COLUMN, "b");
    over_value += mb[i] >= 0;
    mb[i] = -1;
  }
  assert_int_equal(kv_be_write(be, b, NULL), KV_OK);
  kv_batch_free(b);
  kv_backend_hbase_write_counts(be, &c0);
  assert_int_equal(c0.mutate_rows - c1.mutate_rows, over_value);
  assert_int_equal(c0.split_rows - c1.split_rows, 1000 - over_value);
  check_model(be, fid, "b set NULL");

  /* 3. rows 2000..2499 deleted whole (tombstones only: deleteMultiple); row 2999 with two
  ** kinds of tombstones (a column and the family: one mutateRow); row 2998 a put after a
  ** tombstone of the same cell (kv: the later op wins; a mutateRow) */
  b = kv_batch_new();
  for (int i = 2000; i < 2500; i++) {
    del(b, fid, i, KV_DELETE_FAMILY, NULL);
    gone[i] = true;
  }
  del(b, fid, 2999, KV_DELETE_COLUMN, "a");
  del(b, fid, 2999, KV_DELETE_FAMILY, NULL);
  gone[2999] = true;
  del(b, fid, 2998, KV_DELETE_COLUMN, "c");
  put(b, fid, 2998, "c", mc[2998] = 7);
  assert_int_equal(kv_be_write(be, b, NULL), KV_OK);
  kv_batch_free(b);
  kv_backend_hbase_write_counts(be, &c1);
  assert_int_equal(c1.delete_rows - c0.delete_rows, 500);
  assert_int_equal(c1.mutate_rows - c0.mutate_rows, 2);
  check_model(be, fid, "rows deleted");

  /* 4. a second open (a new process's view) reads the same */
  kv_backend *be2 = NULL;
  if (kv_backend_hbase_open(uri, &be2)) fail_msg("cannot open %s: %s", uri, kv_errmsg());
  uint32_t fid2 = 0;
  assert_int_equal(kv_be_family_id(be2, "W", "f", &fid2), KV_OK);
  check_model(be2, fid2, "second open");
  kv_backend_hbase_close(be2);
  kv_backend_hbase_close(be);
  assert_int_equal(kv_backend_hbase_drop_namespace(uri), KV_OK);
}

/* ---- SQL on HBase against the local store ---------------------------------------------- */

static void test_sql_nulls(void **state) {
  (void)state;
  char uri[400];
  snprintf(uri, sizeof uri, "hbase://%s/thw_sql_%ld", gateway, (long)getpid());
  rowan_db *h = NULL, *l = NULL;
  if (rowan_open(uri, NULL, &h) != ROWAN_OK) fail_msg("rowan_open(%s): %s", uri, rowan_errmsg(h));
  if (rowan_open(":memory:", NULL, &l) != ROWAN_OK) fail_msg("local: %s", rowan_errmsg(l));
  exec_both(h, l, "CREATE TABLE T (K INTEGER PRIMARY KEY, A INTEGER, B VARCHAR, C DOUBLE) "
                  "SPLIT ON (700, 1400)");
  exec_both(h, l, "CREATE INDEX IX ON T (A) INCLUDE (B)");
  /* a 2,000-row transaction: NULLs in A (every 13th), B (every 7th), C (every 5th) */
  exec_both(h, l, "BEGIN");
  char sql[300];
  for (int i = 0; i < 2000; i++) {
    char a[16] = "NULL", bb[16] = "NULL", c[24] = "NULL";
    if (i % 13) snprintf(a, sizeof a, "%d", i % 500);
    if (i % 7) snprintf(bb, sizeof bb, "'b%d'", i);
    if (i % 5) snprintf(c, sizeof c, "%d.5", i);
    snprintf(sql, sizeof sql, "UPSERT INTO T VALUES (%d, %s, %s, %s)", i, a, bb, c);
    exec_both(h, l, sql);
  }
  exec_both(h, l, "COMMIT");
  /* NULL over existing rows, some with a value there, some already NULL */
  exec_both(h, l, "UPSERT INTO T (K, B) SELECT K, NULL FROM T WHERE MOD(K, 3) = 0");
  exec_both(h, l, "UPSERT INTO T VALUES (5, NULL, NULL, NULL)");
  exec_both(h, l, "UPSERT INTO T (K, C) VALUES (2500, NULL), (2501, 1.25), (3, NULL)");
  exec_both(h, l, "UPSERT INTO T (K, A) VALUES (2502, 9)");
  exec_both(h, l, "DELETE FROM T WHERE K BETWEEN 1500 AND 1700");
  const char *queries[] = {
      "SELECT * FROM T ORDER BY K",
      "SELECT COUNT(*), COUNT(A), COUNT(B), COUNT(C), SUM(A), SUM(C) FROM T",
      "SELECT K, C FROM T WHERE B IS NULL ORDER BY K",
      "SELECT /*+ INDEX(T IX) */ K, A, B FROM T WHERE A BETWEEN 100 AND 200 ORDER BY K",
      "SELECT /*+ INDEX(T IX) */ A, COUNT(*), COUNT(B) FROM T GROUP BY A ORDER BY A",
      "SELECT /*+ NO_INDEX */ K, A, B FROM T WHERE A IS NULL ORDER BY K",
  };
  for (size_t q = 0; q < sizeof queries / sizeof *queries; q++) same_answer(h, l, queries[q]);
  char *chk = answer(h, "CHECK INDEX IX ON T");
  if (!strstr(chk, "\nMISSING|0\n") || !strstr(chk, "\nEXTRA|0\n") ||
      !strstr(chk, "\nMISMATCHED|0\n"))
    fail_msg("CHECK INDEX on HBase: %s", chk);
  free(chk);
  rowan_close(h);
  rowan_close(l);
  assert_int_equal(kv_backend_hbase_drop_namespace(uri), KV_OK);
}

/* ---- Bad input -------------------------------------------------------------------------- */
static void test_bad_input(void **state) {
  (void)state;
  char uri[400];
  snprintf(uri, sizeof uri, "hbase://%s/thw_bad_%ld", gateway, (long)getpid());
  const char *bad[] = {"0", "17", "x", "4x", "-1"};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    setenv("ROWAN_HBASE_WRITERS", bad[i], 1);
    kv_backend *be = NULL;
    assert_int_equal(kv_backend_hbase_open(uri, &be), KV_ERR_INVALID);
    assert_null(be);
    if (!strstr(kv_errmsg(), "ROWAN_HBASE_WRITERS must be a number in 1..16") ||
        !strstr(kv_errmsg(), bad[i]))
      fail_msg("ROWAN_HBASE_WRITERS=%s: %s", bad[i], kv_errmsg());
  }
  unsetenv("ROWAN_HBASE_WRITERS");

  char host[sizeof gateway];
  snprintf(host, sizeof host, "%s", gateway);
  char *colon = strrchr(host, ':');
  assert_non_null(colon);
  *colon = 0;
  hb_client *c = NULL;
  assert_int_equal(hb_open(host, atoi(colon + 1), 0, &c), KV_OK);
  hb_bytes f = {(const uint8_t *)"f", 1}, q = {(const uint8_t *)"q", 1};
  hb_mutation dc = {HB_MUT_DELETE_COLUMN, f, q, {NULL, 0}, 5};
  hb_mutation df = {HB_MUT_DELETE_FAMILY, f, {NULL, 0}, {NULL, 0}, 5};
  hb_mutation pu = {HB_MUT_PUT, f, q, {(const uint8_t *)"v", 1}, 5};
  hb_mutation neg = {HB_MUT_DELETE_COLUMN, f, q, {NULL, 0}, -3};
  hb_mutation mixed[2] = {dc, df}, with_put[2] = {dc, pu};
  hb_bytes row = {(const uint8_t *)"r1", 2}, empty = {(const uint8_t *)"", 0};
  struct {
    hb_row_delete d[2];
    const char *says;
  } cases[] = {
      {{{row, &dc, 1}, {row, with_put, 2}}, "row delete 1: mutation 1 is a put"},
      {{{row, &dc, 1}, {row, mixed, 2}}, "row delete 1: mutation 1 is a put or another delete kind"},
      {{{row, &dc, 1}, {row, &dc, 0}}, "row delete 1 has no column"},
      {{{empty, &dc, 1}, {row, &dc, 1}}, "row delete 0: mutation of an empty row key"},
      {{{row, &dc, 1}, {row, &neg, 1}}, "row delete 1: mutation 0 has a negative timestamp -3"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    bool ex[2];
    assert_int_equal(hb_delete_rows(c, "default", "no_such_table", cases[i].d, 2), KV_ERR_INVALID);
    if (!strstr(kv_errmsg(), cases[i].says)) fail_msg("case %zu: %s", i, kv_errmsg());
    assert_int_equal(hb_cells_exist(c, "default", "no_such_table", cases[i].d, 2, ex),
                     KV_ERR_INVALID);
    if (!strstr(kv_errmsg(), cases[i].says)) fail_msg("case %zu (exists): %s", i, kv_errmsg());
  }
  /* well-formed calls on a missing table: an error naming it, the connection still usable */
  hb_row_delete ok = {row, &dc, 1};
  bool ex = true;
  assert_int_not_equal(hb_cells_exist(c, "default", "thw_no_such_table", &ok, 1, &ex), KV_OK);
  if (!strstr(kv_errmsg(), "thw_no_such_table")) fail_msg("existsAll: %s", kv_errmsg());
  assert_int_not_equal(hb_delete_rows(c, "default", "thw_no_such_table", &ok, 1), KV_OK);
  if (!strstr(kv_errmsg(), "thw_no_such_table")) fail_msg("deleteMultiple: %s", kv_errmsg());
  bool exists = true;
  assert_int_equal(hb_table_exists(c, "default", "thw_no_such_table", &exists), KV_OK);
  assert_false(exists);
  hb_close(c);
}

int main(void) {
  const char *e = getenv("ROWAN_HBASE_THRIFT");
  if (e && *e) snprintf(gateway, sizeof gateway, "%s", e);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_kv_paths),
      cmocka_unit_test(test_sql_nulls),
      cmocka_unit_test(test_bad_input),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
