/*
** tests/exec/test_backend_filter.c: the SQL layer on a storage backend without callback
** filters (kv/backend.h, exec/scan.c pushed_filter). Two wrappers over the local store take
** the callback away: one evaluates the serializable filter expression the planner makes
** (planner/filter.h plan_filter_expr), the other no filter at all; the executor then keeps
** the whole filter as its residual and counts the limit itself. The wrappers refuse any
** scan that still carries a callback, so a call site that forgets the capabilities shows
** (the columnar aggregate, exec/op_colagg.c, reads the local store directly: docs/BACKEND.md
** lists such call sites).
**
** The same statements (filtered scans on cell and key columns, IN / NOT IN / IS NULL / OR /
** NOT / BETWEEN / LIKE, limits forward and reverse, an index scan, a join, an aggregate,
** DELETE and UPSERT SELECT with filters, a transaction reading its own writes) run on a
** fresh store per backend; every transcript must equal the local backend's, and a few
** answers are checked against a model of the rows computed here.
*/
#include "test_engine_util.h"

#include "kv/backend.h"

#define NROWS 60

/* The wrapper's state (one test at a time). */
static struct {
  kv_backend_ops ops;   /* the local ops with scan_open replaced */
  const kv_backend_ops *local; /* the local backend's ops */
  uint32_t filters;     /* caps.filters the wrapper declares */
  int callbacks;        /* scans refused because they carried a callback */
  int exprs;            /* scans opened with a filter expression */
  int scans;            /* scans opened */
  bool check;           /* check mode: the expression is not run in the scan; every row is
                           handed out and the rows it rejects are counted (expr_false) */
  const kv_filter_expr *fx; /* check mode: the open scan's expression */
  uint64_t expr_false;  /* check mode: rows the expression rejected */
} W;

static int w_scan_open(kv_backend *be, const kv_scan_options *o, const kv_backend_read *x,
                       kv_backend_scan **out) {
  if (o->filter) {
    W.callbacks++;
    return KV_ERR_INVALID;
  }
  if (x && x->filter_expr) {
    assert_true(W.filters & KV_BE_FILTER_EXPR);
    W.exprs++;
  }
  W.scans++;
  if (W.check) {
    W.fx = x ? x->filter_expr : NULL;
    return W.local->scan_open(be, o, NULL, out);
  }
  return W.local->scan_open(be, o, x, out);
}

static int w_scan_next(kv_backend *be, kv_backend_scan *s, kv_row *row) {
  int rc = W.local->scan_next(be, s, row);
  if (rc == KV_OK && W.fx && !kv_filter_expr_eval((void *)W.fx, row)) W.expr_false++;
  return rc;
}

/* A fresh store with the test table, on the backend with these filter capabilities
** (KV_BE_FILTER_CALLBACK: the local backend itself). */
static tdb *open_on(uint32_t filters) {
  tdb *t = tdb_open();
  memset(&W, 0, sizeof W);
  W.filters = filters;
  if (!(filters & KV_BE_FILTER_CALLBACK)) {
    kv_backend be;
    kv_backend_local_init(&be, t->db);
    W.local = be.ops;
    W.ops = *be.ops;
    W.ops.scan_open = w_scan_open;
    W.ops.scan_next = w_scan_next;
    be.ops = &W.ops;
    be.caps.name = "test";
    be.caps.filters = filters;
    assert_int_equal(exec_session_close(t->s), EXEC_OK);
    assert_int_equal(exec_session_open_backend(t->db, &be, &t->s, &t->err), EXEC_OK);
  }
  q(t, "CREATE TABLE t (k INTEGER NOT NULL PRIMARY KEY, s VARCHAR, v DOUBLE, n INTEGER, "
       "f.x VARCHAR, m TINYINT)");
  for (int k = 1; k <= NROWS; k++) {
    char sql[256], v[32], n[32], m[32];
    if (k % 5 == 0) snprintf(v, sizeof v, "NULL");
    else snprintf(v, sizeof v, "%g", k * 1.5);
    if (k % 6 == 0) snprintf(n, sizeof n, "NULL");
    else snprintf(n, sizeof n, "%d", k % 4);
    if (k % 7 == 0) snprintf(m, sizeof m, "NULL");
    else snprintf(m, sizeof m, "%d", k);
    snprintf(sql, sizeof sql, "UPSERT INTO t VALUES (%d, 'name%d', %s, %s, 'x%d', %s)", k, k % 7,
             v, n, k % 3, m);
    q(t, sql);
  }
  q(t, "CREATE INDEX ixn ON t (n) INCLUDE (v)");
  return t;
}

static const char *const QUERIES[] = {
  "SELECT k FROM t WHERE v > 40 ORDER BY k",
  "SELECT k FROM t WHERE n = 2 AND v < 60",
  "SELECT k FROM t WHERE n IN (1, 3) OR v IS NULL",
  "SELECT k FROM t WHERE NOT (n = 1)",
  "SELECT k FROM t WHERE n NOT IN (0, 1)",
  "SELECT k FROM t WHERE n IS NULL",
  "SELECT k FROM t WHERE n IS NOT NULL AND v IS NULL",
  "SELECT k FROM t WHERE s LIKE 'name1%'",
  "SELECT k FROM t WHERE k > 10 AND v > 30 LIMIT 5",
  "SELECT k FROM t WHERE v > 10 ORDER BY k DESC LIMIT 4",
  "SELECT k, v FROM t WHERE v BETWEEN 10 AND 20",
  "SELECT COUNT(*), SUM(v) FROM t WHERE x = 'x1'",
  "SELECT k FROM t WHERE x <> 'x1' AND v >= 70",
  "SELECT k, v FROM t WHERE n = 3 AND v > 20",
  "SELECT a.k, b.k FROM t a JOIN t b ON a.k = b.n WHERE b.v > 80 ORDER BY b.k",
  "SELECT n, COUNT(*) FROM t WHERE v < 50 GROUP BY n ORDER BY n",
  "DELETE FROM t WHERE v < 10 AND n = 1",
  "SELECT COUNT(*) FROM t",
  "UPSERT INTO t (k, s, v) SELECT k + 100, s, v FROM t WHERE n = 2 AND v > 50",
  "SELECT k, v FROM t WHERE k > 100",
  "BEGIN",
  "UPSERT INTO t VALUES (200, 'tx', 999, 2, 'x0', 1)",
  "SELECT k FROM t WHERE v > 900",
  "SELECT k FROM t WHERE n = 2 AND v > 900",
  "COMMIT",
  "SELECT k FROM t WHERE v > 900 LIMIT 1",
};
#define NQ (sizeof QUERIES / sizeof QUERIES[0])

/* Every statement's rows (or changes), one block each, into a malloc'd transcript. */
static char *transcript(tdb *t) {
  char *all = NULL;
  size_t len = 0, cap = 0;
  tdb_cat(&all, &len, &cap, "", 0);
  for (size_t i = 0; i < NQ; i++) {
    const char *out = q(t, QUERIES[i]);
    tdb_cat(&all, &len, &cap, QUERIES[i], strlen(QUERIES[i]));
    tdb_cat(&all, &len, &cap, "\n", 1);
    tdb_cat(&all, &len, &cap, out, strlen(out));
  }
  return all;
}

/* The model: rows k in 1..NROWS where pass(k), as "k\n" lines. */
static void model(bool (*pass)(int k), char *buf, size_t cap) {
  size_t len = 0;
  buf[0] = 0;
  for (int k = 1; k <= NROWS; k++)
    if (pass(k)) len += (size_t)snprintf(buf + len, cap - len, "%d\n", k);
}
static bool has_v(int k) { return k % 5 != 0; }
static bool has_n(int k) { return k % 6 != 0; }
static bool m_v_gt_40(int k) { return has_v(k) && k * 1.5 > 40; }
static bool m_in_or_null(int k) { return (has_n(k) && (k % 4 == 1 || k % 4 == 3)) || !has_v(k); }
static bool m_n_null(int k) { return !has_n(k); }
static bool m_not_n1(int k) { return has_n(k) && k % 4 != 1; }

static void check_models(tdb *t) {
  static const struct {
    const char *sql;
    bool (*pass)(int k);
  } M[] = {
    {"SELECT k FROM t WHERE v > 40 ORDER BY k", m_v_gt_40},
    {"SELECT k FROM t WHERE n IN (1, 3) OR v IS NULL", m_in_or_null},
    {"SELECT k FROM t WHERE n IS NULL", m_n_null},
    {"SELECT k FROM t WHERE NOT (n = 1)", m_not_n1},
  };
  char want[1024];
  for (size_t i = 0; i < sizeof M / sizeof M[0]; i++) {
    model(M[i].pass, want, sizeof want);
    assert_string_equal(q(t, M[i].sql), want);
  }
  assert_string_equal(q(t, "SELECT k FROM t WHERE k > 10 AND v > 30 LIMIT 5"),
                      "21\n22\n23\n24\n26\n");
  assert_string_equal(q(t, "SELECT k FROM t WHERE v > 10 ORDER BY k DESC LIMIT 4"),
                      "59\n58\n57\n56\n");
}

static void test_backends_agree(void **state) {
  (void)state;
  tdb *t = open_on(KV_BE_FILTER_CALLBACK);
  check_models(t);
  char *local = transcript(t);
  tdb_close(t);

  t = open_on(KV_BE_FILTER_EXPR);
  check_models(t);
  char *expr = transcript(t);
  assert_int_equal(W.callbacks, 0);
  assert_true(W.exprs >= 10); /* the cell-column filters went down as expressions */
  tdb_close(t);
  assert_string_equal(expr, local);

  t = open_on(0);
  check_models(t);
  char *none = transcript(t);
  assert_int_equal(W.callbacks, 0);
  assert_int_equal(W.exprs, 0);
  assert_true(W.scans > 20);
  tdb_close(t);
  assert_string_equal(none, local);
  free(local);
  free(expr);
  free(none);
}

/* The residual's rejections count as the backend's would in EXPLAIN ANALYZE's metrics. */
static void test_residual_metrics(void **state) {
  (void)state;
  tdb *a = open_on(KV_BE_FILTER_CALLBACK);
  q(a, "SELECT k FROM t WHERE s LIKE 'name1%'");
  exec_metrics ma = a->m;
  tdb_close(a);
  tdb *b = open_on(0);
  q(b, "SELECT k FROM t WHERE s LIKE 'name1%'");
  exec_metrics mb = b->m;
  tdb_close(b);
  assert_int_equal(ma.rows_returned, mb.rows_returned);
  assert_int_equal(ma.rows_filtered, mb.rows_filtered);
  assert_true(ma.rows_filtered > 0);
}

/* The expression says exactly what the filter says when it can say all of it: in check mode
** the rows it rejects are as many as the executor's residual rejects (the results
** themselves are checked by test_backends_agree). */
static void test_expr_exact(void **state) {
  (void)state;
  static const char *const SQL[] = {
    "SELECT k FROM t WHERE v > 42",
    "SELECT k FROM t WHERE v BETWEEN 10.5 AND 21",
    "SELECT k FROM t WHERE v < 4.5 OR v >= 88.5",
    "SELECT k FROM t WHERE m < 1000 AND m <= 20",
    "SELECT k FROM t WHERE NOT (m > 1000) AND m <> 3",
    "SELECT k FROM t WHERE m > 5.5 AND m < 9",
    "SELECT k FROM t WHERE v IS NULL",
    "SELECT k FROM t WHERE x = 'x1'",
    "SELECT k FROM t WHERE NOT (v > 30) OR x = 'x2'",
    "SELECT k FROM t WHERE v IN (3, 4.5, 6)",
    "SELECT k FROM t WHERE v NOT IN (3, 4.5, 6)",
    "SELECT k FROM t WHERE v <> 3 AND s >= 'name4'",
    "SELECT k FROM t WHERE v >= 45 AND v <= 46.5",
    "SELECT k FROM t WHERE v <= 4.5 OR v > 87",
  };
  tdb *t = open_on(KV_BE_FILTER_EXPR);
  W.check = true;
  for (size_t i = 0; i < sizeof SQL / sizeof SQL[0]; i++) {
    W.expr_false = 0;
    int exprs = W.exprs;
    const char *out = q(t, SQL[i]);
    uint64_t rows = 0;
    for (const char *p = out; *p; p++) rows += *p == '\n';
    if (W.exprs != exprs + 1) fail_msg("%s: no expression", SQL[i]);
    if (W.expr_false == 0 || W.expr_false != t->m.rows_filtered ||
        rows + W.expr_false > t->m.rows_examined)
      fail_msg("%s: %llu rows of %llu, the expression rejected %llu, the residual %llu", SQL[i],
               (unsigned long long)rows, (unsigned long long)t->m.rows_examined,
               (unsigned long long)W.expr_false,
               (unsigned long long)t->m.rows_filtered);
  }
  tdb_close(t);
}

/* A session over a backend whose store is another one is refused. */
static void test_open_mismatch(void **state) {
  (void)state;
  tdb *a = tdb_open(), *b = tdb_open();
  kv_backend be;
  kv_backend_local_init(&be, b->db);
  exec_session *s = NULL;
  exec_error e;
  assert_int_equal(exec_session_open_backend(a->db, &be, &s, &e), EXEC_MISUSE);
  assert_null(s);
  assert_string_equal(e.msg, "exec_session_open_backend: db is not the store under the backend");
  tdb_close(a);
  tdb_close(b);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_backends_agree),
    cmocka_unit_test(test_residual_metrics),
    cmocka_unit_test(test_expr_exact),
    cmocka_unit_test(test_open_mismatch),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
