/*
** tests/hbase/test_fault_batch.c SOURCE_DIR: the Thrift2 gateway killed while a large write
** is inside its calls (issue 18's fault tests), not between two of them. It kills the
** gateway that scripts/hbase-up.sh started (fault_util.h: ROWAN_HBASE_THRIFT, ROWAN_ZK,
** ROWAN_HBASE_DIR), so it runs alone (CTest RUN_SERIAL, label `hbase`).
** - the backend: a batch of 30,000 rows spread over 2 writer connections
**   (ROWAN_HBASE_WRITERS=2: each a putMultiple of 10,000 rows, then one of 5,000, the two
**   writers at once), 1,000 of them
**   overwriting rows an earlier acknowledged batch wrote, written by one thread while the
**   test watches through a second connection; once the batch's first row is visible the
**   gateway is killed (SIGKILL) and started again. Every writer waits for it and goes on
**   after its rows known written: afterwards every row is there once, with one version of
**   its cell (a family keeping 3: the retried puts landed on the same cells, no duplicate),
**   the acknowledged rows of the first batch that the second did not touch unchanged;
** - SQL through the C API, a statement that fails outright: with ROWAN_HBASE_TRIES=3 (about
**   0.6 s of waiting) an UPSERT ... SELECT moving every row of an indexed 1,000-row table
**   ((V, W, X) from (i, -i, i) to (i + 100000, -V, NULL): one mutateRow call per row, X
**   holding a value, on 4 writer connections) is cut by a gateway that stays dead while its
**   data rows are being written. The statement fails (ROWAN_IOERR) with an error naming the
**   gateway, saying it gave up and which writer's rows were not known written; once the
**   gateway is back, a fresh connection finds all 1,000 rows, each whole (its old or its
**   new values, never a mix: HBase's row atomicity), the index and the table agree through
**   queries, CHECK INDEX has no MISSING, EXTRA or MISMATCHED row before and no UNVERIFIED
**   one after the reads, and the failed session itself reads again.
** Not here: a gateway killed between a scan's calls (test_fault_gateway.c), a writer killed
** (test_fault_writer.c).
*/
#include <pthread.h>
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

static const char *source_dir = ".";

/* ---- The backend ------------------------------------------------------------------------ */
#define NBIG 30000
#define VLEN 120


/* Row i's value in batch `gen` (VLEN bytes). */
static void value_of(int i, int gen, char *v) {
  memset(v, 'a' + (i % 26), VLEN);
  snprintf(v, 24, "g%d:%05d:", gen, i);
  v[strlen(v)] = '.';
}

typedef struct writer_job {
  kv_backend *be;
  kv_batch *b;
  int rc;
  volatile int done;
  char msg[600];
} writer_job;

static void *write_thread(void *arg) {
  writer_job *j = arg;
  j->rc = kv_be_write(j->be, j->b, NULL);
  if (j->rc) snprintf(j->msg, sizeof j->msg, "%s", kv_errmsg());
  __atomic_store_n(&j->done, 1, __ATOMIC_SEQ_CST);
  return NULL;
}

static bool row_there(kv_backend *be, uint32_t fid, const char *k) {
  kv_scan_options o;
  memset(&o, 0, sizeof o);
  o.family_ids = &fid;
  o.n_families = 1;
  kv_backend_scan *sc = NULL;
  kv_row row;
  int rc = kv_be_get(be, &o, k, 6, &sc, &row);
  kv_be_scan_close(be, sc);
  return rc == KV_OK;
}

static void test_batch_across_kill(void **state) {
  (void)state;
  char uri[400];
  snprintf(uri, sizeof uri, "hbase://%s/tfb_kv_%ld", fu_gateway(), (long)getpid());
  kv_backend *be = NULL, *watch = NULL;
  setenv("ROWAN_HBASE_WRITERS", "2", 1); /* read at open: two calls per writer */
  if (kv_backend_hbase_open(uri, &be)) fail_msg("cannot open %s: %s", uri, kv_errmsg());
  unsetenv("ROWAN_HBASE_WRITERS");
  kv_family_options fo[1] = {{"f", 3, 0, 0, 0}};
  const uint8_t *splits[2] = {(const uint8_t *)"r10000", (const uint8_t *)"r20000"};
  uint32_t lens[2] = {6, 6};
  assert_int_equal(kv_be_create_table(be, "T", fo, 1, splits, lens, 2), KV_OK);
  uint32_t fid = 0;
  assert_int_equal(kv_be_family_id(be, "T", "f", &fid), KV_OK);
  char k[8], v[VLEN + 1];
  /* acknowledged first: rows 29,000 .. 30,999 (generation 1) */
  kv_batch *b = kv_batch_new();
  for (int i = NBIG - 1000; i < NBIG + 1000; i++) {
    fu_key_of(i, k);
    value_of(i, 1, v);
    assert_int_equal(kv_batch_put(b, fid, k, 6, "v", 1, KV_TS_NOW, v, VLEN), KV_OK);
  }
  assert_int_equal(kv_be_write(be, b, NULL), KV_OK);
  kv_batch_free(b);
  /* the large batch: rows 0 .. 29,999 (generation 2) */
  b = kv_batch_new();
  for (int i = 0; i < NBIG; i++) {
    fu_key_of(i, k);
    value_of(i, 2, v);
    assert_int_equal(kv_batch_put(b, fid, k, 6, "v", 1, KV_TS_NOW, v, VLEN), KV_OK);
  }
  if (kv_backend_hbase_open(uri, &watch)) fail_msg("cannot open %s: %s", uri, kv_errmsg());
  uint32_t wfid = 0;
  assert_int_equal(kv_be_family_id(watch, "T", "f", &wfid), KV_OK);
  kv_hbase_write_counts c0, c1;
  kv_backend_hbase_write_counts(be, &c0);
  writer_job j = {be, b, 0, 0, ""};
  pthread_t th;
  assert_int_equal(pthread_create(&th, NULL, write_thread, &j), 0);
  int polls = 0;
  while (!row_there(watch, wfid, "r00000") && !__atomic_load_n(&j.done, __ATOMIC_SEQ_CST)) {
    usleep(2000);
    polls++;
  }
  bool in_flight = !__atomic_load_n(&j.done, __ATOMIC_SEQ_CST);
  fu_gateway_kill();
  fu_gateway_start(source_dir, false);
  kv_backend_hbase_close(watch);
  if (!in_flight) fail_msg("the batch was written before the gateway was killed (%d polls)", polls);
  printf("# gateway killed after %d polls, the batch in flight\n", polls);
  pthread_join(th, NULL);
  if (j.rc) fail_msg("the batch failed across the restart: %s", j.msg);
  kv_batch_free(b);
  /* on 2 connections at once, every row written once */
  kv_backend_hbase_write_counts(be, &c1);
  assert_int_equal(c1.spread_writes - c0.spread_writes, 1);
  assert_int_equal(c1.put_rows - c0.put_rows, NBIG);
  printf("# the writers waited %llu times for the gateway\n",
         (unsigned long long)(c1.lost_waits - c0.lost_waits));
  /* every row once, one version, the newest value */
  kv_scan_options o;
  memset(&o, 0, sizeof o);
  o.family_ids = &fid;
  o.n_families = 1;
  o.max_versions = 3;
  kv_backend_scan *sc = NULL;
  assert_int_equal(kv_be_scan_open(be, &o, NULL, &sc), KV_OK);
  kv_row row;
  int n = 0, rc;
  while ((rc = kv_be_scan_next(be, sc, &row)) == KV_OK) {
    fu_key_of(n, k);
    value_of(n, n < NBIG ? 2 : 1, v);
    if (row.key_len != 6 || memcmp(row.key, k, 6)) fail_msg("row %d: %.*s", n, (int)row.key_len, row.key);
    /* rows 29,000 .. 29,999: generation 1 below generation 2; others: one version */
    uint32_t want = n >= NBIG - 1000 && n < NBIG ? 2 : 1;
    if (row.n_cells != want)
      fail_msg("row %s has %u versions, want %u (a retried put is a new version?)", k,
               row.n_cells, want);
    if (row.cells[0].value_len != VLEN || memcmp(row.cells[0].value, v, VLEN))
      fail_msg("row %s: %.20s, want %.20s", k, (const char *)row.cells[0].value, v);
    n++;
  }
  assert_int_equal(rc, KV_ERR_NOTFOUND);
  assert_int_equal(n, NBIG + 1000);
  kv_be_scan_close(be, sc);
  kv_backend_hbase_close(be);
  assert_int_equal(kv_backend_hbase_drop_namespace(uri), KV_OK);
}

/* ---- SQL: a statement that fails outright ------------------------------------------------ */
#define NSQL 1000



typedef struct stmt_job {
  rowan_db *db;
  const char *sql;
  int rc;
  volatile int done;
  char msg[800];
} stmt_job;

static void *stmt_thread(void *arg) {
  stmt_job *j = arg;
  j->rc = rowan_exec(j->db, j->sql, NULL, NULL);
  snprintf(j->msg, sizeof j->msg, "%s", rowan_errmsg(j->db));
  __atomic_store_n(&j->done, 1, __ATOMIC_SEQ_CST);
  return NULL;
}


/* Every row of a query (K, V, W, X), checked whole (old: V = i, W = -i, X = i for key k<i>;
** new: V = i + 100000, W = -V, X NULL), as one "K V" line each; *moved counts the new ones. */
static char *rows_of(rowan_db *db, const char *sql, int *count, int *moved) {
  rowan_stmt *st = NULL;
  if (rowan_prepare(db, sql, -1, &st, NULL) != ROWAN_OK) fail_msg("%s: %s", sql, rowan_errmsg(db));
  size_t cap = (size_t)NSQL * 24 + 64, len = 0;
  char *out = malloc(cap);
  assert_non_null(out);
  *count = *moved = 0;
  int rc;
  while ((rc = rowan_step(st)) == ROWAN_ROW) {
    const char *k = rowan_column_text(st, 0);
    long long v = rowan_column_int64(st, 1), w = rowan_column_int64(st, 2), i = atoll(k + 1);
    bool x_null = rowan_column_type(st, 3) == ROWAN_NULL;
    long long x = x_null ? -1 : rowan_column_int64(st, 3);
    if (w != -v || !((v == i && x == i) || (v == i + 100000 && x_null)))
      fail_msg("%s: row %s is not whole: V %lld, W %lld, X %lld", sql, k, v, w, x);
    *moved += v != i;
    if (len + 32 < cap) len += (size_t)snprintf(out + len, cap - len, "%s %lld\n", k, v);
    (*count)++;
  }
  if (rc != ROWAN_DONE) fail_msg("%s: %s", sql, rowan_errmsg(db));
  rowan_finalize(st);
  return out;
}

static void test_statement_fails_outright(void **state) {
  (void)state;
  char uri[400];
  snprintf(uri, sizeof uri, "hbase://%s/tfb_sql_%ld", fu_gateway(), (long)getpid());
  rowan_db *db = NULL, *watch = NULL;
  setenv("ROWAN_HBASE_TRIES", "3", 1); /* read at open: this connection gives up soon */
  int orc = rowan_open(uri, NULL, &db);
  unsetenv("ROWAN_HBASE_TRIES");
  if (orc != ROWAN_OK) fail_msg("rowan_open(%s): %s", uri, rowan_errmsg(db));
  fu_exec_ok(db, "CREATE TABLE T (K VARCHAR PRIMARY KEY, V INTEGER, W INTEGER, X INTEGER) "
              "SPLIT ON ('k00500')");
  fu_exec_ok(db, "CREATE INDEX IX ON T (V) INCLUDE (W, X)");
  fu_exec_ok(db, "BEGIN");
  rowan_stmt *st = NULL;
  assert_int_equal(rowan_prepare(db, "UPSERT INTO T VALUES (?, ?, ?, ?)", -1, &st, NULL), ROWAN_OK);
  for (int i = 0; i < NSQL; i++) {
    char k[16];
    snprintf(k, sizeof k, "k%05d", i);
    rowan_bind_text(st, 1, k, -1);
    rowan_bind_int64(st, 2, i);
    rowan_bind_int64(st, 3, -i);
    rowan_bind_int64(st, 4, i);
    if (rowan_step(st) != ROWAN_DONE) fail_msg("upsert %d: %s", i, rowan_errmsg(db));
    rowan_reset(st);
  }
  rowan_finalize(st);
  fu_exec_ok(db, "COMMIT");
  if (rowan_open(uri, NULL, &watch) != ROWAN_OK) fail_msg("rowan_open: %s", rowan_errmsg(watch));

  /* every row moves (its index entry too) and loses X: a tombstone with the puts, so each
  ** data row is one mutateRow call; cut while they are written: the first row's new value
  ** is visible, the statement has not returned */
  stmt_job j = {db, "UPSERT INTO T SELECT K, V + 100000, -(V + 100000), NULL FROM T", 0, 0, ""};
  pthread_t th;
  assert_int_equal(pthread_create(&th, NULL, stmt_thread, &j), 0);
  int polls = 0;
  while (!__atomic_load_n(&j.done, __ATOMIC_SEQ_CST) &&
         fu_one_int(watch, "SELECT V FROM T WHERE K = 'k00000'") == 0) {
    usleep(2000);
    polls++;
  }
  bool in_flight = !__atomic_load_n(&j.done, __ATOMIC_SEQ_CST);
  fu_gateway_kill();
  pthread_join(th, NULL);
  rowan_close(watch);
  if (!in_flight) {
    fu_gateway_start(source_dir, true);
    fail_msg("the statement ended (%s) before the gateway was killed (%d polls)", j.msg, polls);
  }
  printf("# the statement, cut in its data rows after %d polls: %s\n", polls, j.msg);
  if (j.rc == ROWAN_OK) {
    fu_gateway_start(source_dir, true);
    fail_msg("the statement succeeded without its gateway");
  }
  assert_int_equal(j.rc, ROWAN_IOERR);
  const char *gw = fu_gateway();
  if (!strstr(j.msg, "given up") || !strstr(j.msg, gw))
    fail_msg("the error does not say that the write to %s was given up: %s", gw, j.msg);
  if (!strstr(j.msg, "of 4: its rows") || !strstr(j.msg, "not known written"))
    fail_msg("the error does not name the writer and its rows: %s", j.msg);
  fu_gateway_start(source_dir, true);

  /* a fresh connection: every row whole, index and table agree, then CHECK INDEX clean */
  rowan_db *db2 = NULL;
  if (rowan_open(uri, NULL, &db2) != ROWAN_OK) fail_msg("rowan_open: %s", rowan_errmsg(db2));
  int64_t unverified = 0;
  assert_int_equal(fu_check_index(db2, "IX", "T", &unverified, NULL, NULL), 0);
  printf("# CHECK INDEX before any read: %lld UNVERIFIED\n", (long long)unverified);
  int nt = 0, ni = 0, mt = 0, mi = 0;
  char *t = rows_of(db2, "SELECT /*+ NO_INDEX */ K, V, W, X FROM T ORDER BY K", &nt, &mt);
  char *i = rows_of(db2, "SELECT /*+ INDEX(T IX) */ K, V, W, X FROM T WHERE V >= 0 ORDER BY K",
                    &ni, &mi);
  printf("# %d rows, %d of them with the statement's values\n", nt, mt);
  assert_int_equal(nt, NSQL);
  assert_int_equal(ni, NSQL);
  assert_int_equal(mi, mt);
  assert_string_equal(i, t);
  free(i), free(t);
  assert_true(mt > 0);
  assert_int_equal(fu_check_index(db2, "IX", "T", &unverified, NULL, NULL), 0);
  assert_int_equal(unverified, 0);
  assert_int_equal(fu_one_int(db2, "SELECT /*+ INDEX(T IX) */ COUNT(*) FROM T WHERE V >= 100000"),
                   mt);
  assert_int_equal(rowan_close(db2), ROWAN_OK);
  /* the session whose statement failed reads again once the gateway is back */
  assert_int_equal(fu_one_int(db, "SELECT COUNT(*) FROM T"), NSQL);
  assert_int_equal(rowan_close(db), ROWAN_OK);
  assert_int_equal(kv_backend_hbase_drop_namespace(uri), KV_OK);
}

int main(int argc, char **argv) {
  if (argc > 1) source_dir = argv[1];
  setvbuf(stdout, NULL, _IONBF, 0);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_batch_across_kill),
      cmocka_unit_test(test_statement_fails_outright),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
