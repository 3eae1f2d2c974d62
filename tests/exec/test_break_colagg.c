/*
** tests/exec/test_break_colagg.c: adversarial checks of the columnar aggregate pushdown
** (exec/op_colagg.c, kv/colscan/) against the rows path (the same query with the
** NO_PUSHDOWN hint), over what test_colagg.c leaves out: every SQL type in the pushed
** family (TINYINT .. TIMESTAMP, edge values: type limits, NaN, +-Infinity, -0.0, empty and
** block-sized strings), a composite key with a DESC VARCHAR column, a second family,
** literals of another type than the column (fractions against integers, out-of-range
** constants), BETWEEN; and the situations around a query: disjoint flushed files, cell
** deletes (UPSERT of NULL), row deletes, minor and major compactions, VERSIONS=3, TTL, a
** transaction's uncommitted writes (also through a kept statement), a snapshot held by an
** open statement while writes, flushes and compactions happen, parameters in the filter
** rebound between runs, a second table and a table dropped and created again under the
** same name, rows wider than a block, memstore rows over compacted files, a 300-column
** family, dense blocks, background flushes and compactions. Every pushdown query runs twice
** (the second run may be answered from the column cache). Both paths must give the same
** rows, or fail with the same code. Seeded (tu_seed); a mismatch prints the seed and SQL.
** Not here: the pushdown's eligibility rules and EXPLAIN text (test_colagg.c), DECIMAL sums
** near the 38-digit limit (test_break_colagg_decimal.c).
*/
#include "test_engine_util.h"
#include "testutil.h"

enum { C_TI, C_SI, C_I, C_BI, C_FL, C_DB, C_DC, C_VC, C_CH, C_BO, C_DT, C_TS, C_X, C_Y, NCOL };

static const char *const cname[NCOL] = {"TI", "SI", "I",  "BI", "FL", "DB", "DC",
                                        "VC", "CH", "BO", "DT", "TS", "X",  "Y"};

static const char *const schema =
    "(K1 INTEGER NOT NULL, K2 VARCHAR NOT NULL, F.TI TINYINT, F.SI SMALLINT, F.I INTEGER, "
    "F.BI BIGINT, F.FL FLOAT, F.DB DOUBLE, F.DC DECIMAL(12,3), F.VC VARCHAR, F.CH CHAR(3), "
    "F.BO BOOLEAN, F.DT DATE, F.TS TIMESTAMP, G.X BIGINT, G.Y VARCHAR, "
    "CONSTRAINT PK PRIMARY KEY (K1, K2 DESC)) BLOCKSIZE=512";

static bool numeric(int c) { return c <= C_DC || c == C_X; }

/* A random string of n letters from a small alphabet (many repeats). */
static void word(uint64_t *rs, char *buf, size_t n) {
  for (size_t i = 0; i < n; i++) buf[i] = (char)('a' + tu_below(rs, 3));
  buf[n] = 0;
}

/* A literal for column c (edge values often), or NULL when allow_null. */
static void lit(uint64_t *rs, int c, bool allow_null, char *buf, size_t cap) {
  if (allow_null && tu_below(rs, 5) == 0) { snprintf(buf, cap, "NULL"); return; }
  int e = (int)tu_below(rs, 8); /* 0, 1: an edge value */
  char w[800];
  switch (c) {
    case C_TI:
      if (e < 2) snprintf(buf, cap, "%s", tu_below(rs, 2) ? "127" : "-128");
      else snprintf(buf, cap, "%d", (int)tu_below(rs, 21) - 10);
      break;
    case C_SI:
      if (e < 2) snprintf(buf, cap, "%s", tu_below(rs, 2) ? "32767" : "-32768");
      else snprintf(buf, cap, "%d", (int)tu_below(rs, 2001) - 1000);
      break;
    case C_I:
      if (e < 2) snprintf(buf, cap, "%s", tu_below(rs, 2) ? "2147483647" : "-2147483648");
      else snprintf(buf, cap, "%d", (int)tu_below(rs, 201) - 100);
      break;
    case C_BI:
    case C_X:
      if (e < 1 && c == C_BI)
        snprintf(buf, cap, "%s", tu_below(rs, 2) ? "9223372036854775807" : "-9223372036854775807");
      else snprintf(buf, cap, "%lld", (long long)tu_below(rs, 2001) * 1000000007LL - 1000000007000LL);
      break;
    case C_FL:
    case C_DB: {
      static const char *const edge[] = {"0.0", "-0.0", "CAST('NaN' AS DOUBLE)",
                                         "CAST('Infinity' AS DOUBLE)",
                                         "CAST('-Infinity' AS DOUBLE)", "1e300", "-1e300",
                                         "3.0e38", "-3.0e38", "1e-300"};
      int ne = c == C_FL ? 5 : 10;
      if (e < 2) snprintf(buf, cap, "%s", edge[tu_below(rs, (uint64_t)ne)]);
      else snprintf(buf, cap, "%.3f", ((double)tu_below(rs, 4001) - 2000.0) / 8.0);
      break;
    }
    case C_DC:
      if (e < 1) snprintf(buf, cap, "%s", tu_below(rs, 2) ? "999999999.999" : "-999999999.999");
      else snprintf(buf, cap, "%d.%03d", (int)tu_below(rs, 201) - 100, (int)tu_below(rs, 4) * 250);
      break;
    case C_VC:
    case C_Y:
      if (e == 0) {
        word(rs, w, 150 + (size_t)tu_below(rs, 600)); /* a block or more */
      } else if (e == 1) {
        w[0] = 0;
      } else {
        word(rs, w, 1 + (size_t)tu_below(rs, 3));
      }
      snprintf(buf, cap, "'%s'", w);
      break;
    case C_CH:
      word(rs, w, (size_t)tu_below(rs, 4));
      snprintf(buf, cap, "'%s'", w);
      break;
    case C_BO: snprintf(buf, cap, "%s", tu_below(rs, 2) ? "TRUE" : "FALSE"); break;
    case C_DT:
      if (e < 1) snprintf(buf, cap, "DATE '1969-12-31'");
      else snprintf(buf, cap, "DATE '2020-01-%02d'", 1 + (int)tu_below(rs, 28));
      break;
    default:
      if (e < 1) snprintf(buf, cap, "TIMESTAMP '1969-12-31 23:59:59.999'");
      else snprintf(buf, cap, "TIMESTAMP '2020-01-01 00:00:%02d.%03d'", (int)tu_below(rs, 60),
                    (int)tu_below(rs, 4) * 250);
      break;
  }
}

/* A filter constant for column c: usually of its type, sometimes of another (a fraction
** or an out-of-range number against an integer column, an integer against a float). */
static void klit(uint64_t *rs, int c, char *buf, size_t cap) {
  int r = (int)tu_below(rs, 10);
  if (r == 0 && (c <= C_BI || c == C_X)) {
    static const char *const odd[] = {"5.5", "-0.5", "300", "-40000", "3000000000",
                                      "1e30", "-1e30", "9223372036854775807"};
    snprintf(buf, cap, "%s", odd[tu_below(rs, 8)]);
    return;
  }
  if (r == 0 && (c == C_FL || c == C_DB || c == C_DC)) {
    snprintf(buf, cap, "%d", (int)tu_below(rs, 41) - 20);
    return;
  }
  if (c == C_VC || c == C_Y) { /* short constants only */
    char w[8];
    word(rs, w, (size_t)tu_below(rs, 4));
    snprintf(buf, cap, "'%s'", w);
    return;
  }
  lit(rs, c, false, buf, cap);
}

/* UPSERT rows with keys K1 in [k0, k1) step, K2 one of a few words; every column random. */
static void upsert_rows(tdb *t, uint64_t *rs, const char *table, int k0, int k1, int step) {
  size_t cap = 64 * 1024;
  char *sql = malloc(cap);
  for (int k = k0; k < k1; k += step) {
    int o = snprintf(sql, cap, "UPSERT INTO %s (K1, K2", table);
    for (int c = 0; c < NCOL; c++) o += snprintf(sql + o, cap - (size_t)o, ", %s", cname[c]);
    o += snprintf(sql + o, cap - (size_t)o, ") VALUES (%d, '%c'", k / 3, "xyz"[k % 3]);
    for (int c = 0; c < NCOL; c++) {
      char v[1024];
      lit(rs, c, true, v, sizeof v);
      o += snprintf(sql + o, cap - (size_t)o, ", %s", v);
    }
    snprintf(sql + o, cap - (size_t)o, ")");
    int rc = tdb_run(t, sql);
    if (rc != EXEC_DONE) fail_msg("%s\n  -> %d: %s", sql, rc, t->err.msg);
  }
  free(sql);
}

/* Set one column of random rows to NULL (a cell tombstone) or delete random rows. */
static void churn(tdb *t, uint64_t *rs, const char *table, int nkeys, int n) {
  char sql[256];
  for (int i = 0; i < n; i++) {
    int k = (int)tu_below(rs, (uint64_t)nkeys);
    if (tu_below(rs, 2))
      snprintf(sql, sizeof sql, "UPSERT INTO %s (K1, K2, %s) VALUES (%d, '%c', NULL)", table,
               cname[tu_below(rs, C_X)], k / 3, "xyz"[k % 3]);
    else
      snprintf(sql, sizeof sql, "DELETE FROM %s WHERE K1 = %d AND K2 = '%c'", table, k / 3,
               "xyz"[k % 3]);
    assert_int_equal(tdb_run(t, sql), EXEC_DONE);
  }
}

/* A random ungrouped aggregate query over table; most are pushdown-eligible (F columns
** only, ANDs of comparisons), a few are not (a G column, a key column, OR). */
static void random_query(uint64_t *rs, const char *table, char *sql, size_t cap) {
  char sel[512] = "", where[1024] = "";
  int na = 1 + (int)tu_below(rs, 3);
  for (int i = 0; i < na; i++) {
    size_t l = strlen(sel);
    int c = (int)tu_below(rs, C_X), f = (int)tu_below(rs, 6);
    static const char *const fn[] = {"COUNT", "SUM", "AVG", "MIN", "MAX", "COUNT"};
    if (f == 0 && tu_below(rs, 2)) snprintf(sel + l, sizeof sel - l, "%sCOUNT(*)", i ? ", " : "");
    else if ((f == 1 || f == 2) && !numeric(c))
      snprintf(sel + l, sizeof sel - l, "%sMAX(%s)", i ? ", " : "", cname[c]);
    else snprintf(sel + l, sizeof sel - l, "%s%s(%s)", i ? ", " : "", fn[f], cname[c]);
  }
  int nw = 1 + (int)tu_below(rs, 3);
  static const char *const ops[] = {"=", "<>", "<", "<=", ">", ">="};
  for (int i = 0; i < nw; i++) {
    size_t l = strlen(where);
    int r = (int)tu_below(rs, 40);
    int c = r == 0 ? C_X : (int)tu_below(rs, C_X);
    const char *and = i ? " AND " : "";
    char v[128], v2[128];
    klit(rs, c, v, sizeof v);
    if (r == 1) {
      snprintf(where + l, sizeof where - l, "%sK1 > %d", and, (int)tu_below(rs, 100));
    } else if (r == 2) {
      klit(rs, c, v2, sizeof v2);
      snprintf(where + l, sizeof where - l, "%s(%s < %s OR %s > %s)", and, cname[c], v,
               cname[c], v2);
    } else if (r < 6) {
      snprintf(where + l, sizeof where - l, "%s%s IS NOT NULL", and, cname[c]);
    } else if (r < 9 && c != C_BO) {
      klit(rs, c, v2, sizeof v2);
      snprintf(where + l, sizeof where - l, "%s%s BETWEEN %s AND %s", and, cname[c], v, v2);
    } else {
      snprintf(where + l, sizeof where - l, "%s%s %s %s", and, cname[c], ops[tu_below(rs, 6)], v);
    }
  }
  snprintf(sql, cap, "SELECT %s FROM %s WHERE %s", sel, table, where);
}

/* Run sql both ways; they must agree (rows, or error code). Returns 1 when the pushdown
** answered (EXPLAIN ANALYZE shows its actual counts), else 0. */
static int check(tdb *t, const char *sql, uint64_t seed) {
  char hinted[2200], ex[2200];
  snprintf(hinted, sizeof hinted, "SELECT /*+ NO_PUSHDOWN */ %s", sql + 7);
  int rc1 = tdb_run(t, hinted);
  char *want = strdup(rc1 == EXEC_DONE ? t->out : t->err.msg);
  int rc2 = tdb_run(t, sql);
  const char *got = rc2 == EXEC_DONE ? t->out : t->err.msg;
  if (rc1 != rc2 || (rc1 == EXEC_DONE && strcmp(want, got) != 0)) {
    fprintf(stderr, "seed %llu: %s\n  rows path (%d): %s\n  pushdown  (%d): %s\n",
            (unsigned long long)seed, sql, rc1, want, rc2, got);
    fail_msg("the pushdown and the rows path disagree");
  }
  /* again: a one-column query may now be answered from the column cache */
  int rc3 = tdb_run(t, sql);
  const char *again = rc3 == EXEC_DONE ? t->out : t->err.msg;
  if (rc3 != rc1 || (rc1 == EXEC_DONE && strcmp(want, again) != 0)) {
    fprintf(stderr, "seed %llu: %s\n  rows path (%d): %s\n  pushdown, second run (%d): %s\n",
            (unsigned long long)seed, sql, rc1, want, rc3, again);
    fail_msg("the pushdown's second run and the rows path disagree");
  }
  free(want);
  if (rc1 != EXEC_DONE) return 0;
  snprintf(ex, sizeof ex, "EXPLAIN ANALYZE %s", sql);
  return strstr(explain(t, ex), "(actual blocks=") != NULL;
}

static int compare(tdb *t, uint64_t *rs, const char *table, int n, uint64_t seed) {
  int pushed = 0;
  char sql[2000];
  for (int i = 0; i < n; i++) {
    random_query(rs, table, sql, sizeof sql);
    pushed += check(t, sql, seed);
  }
  return pushed;
}

static tdb *make(const char *name, const char *opts) {
  tdb *t = tdb_open();
  char sql[1024];
  snprintf(sql, sizeof sql, "CREATE TABLE %s %s%s", name, schema, opts);
  assert_int_equal(tdb_run(t, sql), EXEC_DONE);
  return t;
}

/* Every type, edge values, long strings, DESC key column: one compacted file, then several
** disjoint flushed files, then cell and row deletes with a minor compaction, then major. */
static void types_and_files(void **state) {
  (void)state;
  uint64_t seed = tu_seed("types_and_files"), rs = seed;
  tdb *t = make("T", "");
  int n = (int)tu_scaled(1500, 300), nq = (int)tu_scaled(120, 40);
  upsert_rows(t, &rs, "T", 0, n, 1);
  assert_int_equal(kv_compact(t->db, NULL, true), KV_OK);
  assert_true(compare(t, &rs, "T", nq, seed) > nq / 2);
  upsert_rows(t, &rs, "T", n, 2 * n, 1);
  assert_int_equal(kv_flush(t->db, NULL), KV_OK);
  upsert_rows(t, &rs, "T", 2 * n, 2 * n + 40, 1);
  assert_int_equal(kv_flush(t->db, NULL), KV_OK);
  assert_true(compare(t, &rs, "T", nq, seed) > nq / 2);
  churn(t, &rs, "T", 2 * n, n / 4);
  assert_int_equal(kv_flush(t->db, NULL), KV_OK);
  compare(t, &rs, "T", nq / 2, seed); /* overlapping files: refused, still the same */
  assert_int_equal(kv_compact(t->db, NULL, false), KV_OK);
  assert_true(compare(t, &rs, "T", nq, seed) > 0);
  assert_int_equal(kv_compact(t->db, NULL, true), KV_OK);
  assert_true(compare(t, &rs, "T", nq, seed) > nq / 2);
  tdb_close(t);
}

/* VERSIONS=3 kept through compactions; TTL expiring some cells of a compacted file. */
static void versions_and_ttl(void **state) {
  (void)state;
  uint64_t seed = tu_seed("versions_and_ttl"), rs = seed;
  int n = (int)tu_scaled(900, 200), nq = (int)tu_scaled(80, 30);
  tdb *t = make("T", ", VERSIONS=3");
  upsert_rows(t, &rs, "T", 0, n, 1);
  upsert_rows(t, &rs, "T", 0, n, 4);
  churn(t, &rs, "T", n, n / 10);
  assert_int_equal(kv_compact(t->db, NULL, true), KV_OK);
  compare(t, &rs, "T", nq, seed);
  tdb_close(t);

  t = make("T", ", TTL=100");
  upsert_rows(t, &rs, "T", 0, n, 1);
  kv_env_mem_set_time(t->env, 1500000000000LL + 60000);
  upsert_rows(t, &rs, "T", 0, n, 3);
  assert_int_equal(kv_compact(t->db, NULL, true), KV_OK);
  kv_env_mem_set_time(t->env, 1500000000000LL + 130000); /* the first cells expired */
  compare(t, &rs, "T", nq, seed);
  tdb_close(t);
}

/* A transaction's own writes are seen; before any write the pushdown may answer. */
static void transaction_overlay(void **state) {
  (void)state;
  uint64_t seed = tu_seed("transaction_overlay"), rs = seed;
  int n = (int)tu_scaled(900, 200), nq = (int)tu_scaled(30, 10);
  tdb *t = make("T", "");
  assert_int_equal(tdb_run(t, "CREATE TABLE U (K INTEGER PRIMARY KEY, V INTEGER)"), EXEC_DONE);
  upsert_rows(t, &rs, "T", 0, n, 1);
  assert_int_equal(kv_compact(t->db, NULL, true), KV_OK);
  q(t, "BEGIN");
  assert_true(compare(t, &rs, "T", nq, seed) > 0);
  upsert_rows(t, &rs, "T", 0, n, 5);
  compare(t, &rs, "T", nq, seed);
  churn(t, &rs, "T", n, 40);
  compare(t, &rs, "T", nq, seed);
  /* a statement that fails is rolled back alone; the transaction goes on */
  assert_int_not_equal(tdb_run(t, "UPSERT INTO T (K1, K2, TI) VALUES (1, 'x', 1000)"), EXEC_DONE);
  compare(t, &rs, "T", nq, seed);
  q(t, "ROLLBACK");
  assert_true(compare(t, &rs, "T", nq, seed) > 0);
  /* writes to another table only */
  q(t, "BEGIN");
  q(t, "UPSERT INTO U VALUES (1, 1)");
  compare(t, &rs, "T", nq, seed);
  q(t, "COMMIT");
  /* the committed writes of a transaction, flushed */
  q(t, "BEGIN");
  upsert_rows(t, &rs, "T", n, n + 100, 1);
  q(t, "COMMIT");
  assert_int_equal(kv_flush(t->db, NULL), KV_OK);
  assert_true(compare(t, &rs, "T", nq, seed) > 0);
  tdb_close(t);
}

/* An open statement holds its snapshot while rows change, flushes and compactions run:
** the pushdown's answers follow the latest data, and the open statement finishes with its
** own rows. */
static void open_statement(void **state) {
  (void)state;
  uint64_t seed = tu_seed("open_statement"), rs = seed;
  int n = (int)tu_scaled(900, 200), nq = (int)tu_scaled(40, 15);
  tdb *t = make("T", "");
  upsert_rows(t, &rs, "T", 0, n, 1);
  assert_int_equal(kv_compact(t->db, NULL, true), KV_OK);
  const char *cnt = "SELECT /*+ NO_PUSHDOWN */ COUNT(*) FROM T";
  long before = atol(q(t, cnt));
  exec_stmt *st = NULL;
  const char *scan = "SELECT K1, K2 FROM T";
  assert_int_equal(exec_prepare(t->s, scan, strlen(scan), &st, NULL, &t->err), EXEC_OK);
  long seen = 0;
  for (int i = 0; i < 10; i++, seen++) assert_int_equal(exec_step(st, &t->err), EXEC_ROW);
  upsert_rows(t, &rs, "T", 0, n, 3); /* new versions, kept for the open snapshot */
  churn(t, &rs, "T", n, n / 5);
  assert_int_equal(kv_flush(t->db, NULL), KV_OK);
  assert_int_equal(kv_compact(t->db, NULL, true), KV_OK);
  compare(t, &rs, "T", nq, seed);
  upsert_rows(t, &rs, "T", n, n + 30, 1);
  assert_int_equal(kv_flush(t->db, NULL), KV_OK);
  compare(t, &rs, "T", nq, seed);
  int rc;
  while ((rc = exec_step(st, &t->err)) == EXEC_ROW) seen++;
  assert_int_equal(rc, EXEC_DONE);
  assert_int_equal(seen, before); /* the statement saw its snapshot */
  exec_finalize(st);
  assert_int_equal(kv_compact(t->db, NULL, true), KV_OK);
  assert_true(compare(t, &rs, "T", nq, seed) > 0);
  tdb_close(t);
}

/* A prepared pushdown query with parameters in the filter, rebound many times (values of
** other types, NULL, the same value again), against a fresh query with the literal. */
static void parameters(void **state) {
  (void)state;
  uint64_t seed = tu_seed("parameters"), rs = seed;
  int n = (int)tu_scaled(900, 200), runs = (int)tu_scaled(60, 20);
  tdb *t = make("T", "");
  upsert_rows(t, &rs, "T", 0, n, 1);
  assert_int_equal(kv_compact(t->db, NULL, true), KV_OK);
  const char *psql = "SELECT COUNT(*), SUM(I), MIN(DB), MAX(VC) FROM T WHERE I > ? AND DB <= ?";
  exec_stmt *st = NULL;
  assert_int_equal(exec_prepare(t->s, psql, strlen(psql), &st, NULL, &t->err), EXEC_OK);
  for (int r = 0; r < runs; r++) {
    cat_value p[2];
    char l1[64], l2[64], txt[64];
    int k = (int)tu_below(&rs, 6);
    int64_t iv = (int64_t)tu_below(&rs, 201) - 100;
    double dv = ((double)tu_below(&rs, 4001) - 2000.0) / 8.0;
    p[0] = cat_v_int(CAT_T_INTEGER, iv);
    snprintf(l1, sizeof l1, "%lld", (long long)iv);
    p[1] = cat_v_double(dv);
    snprintf(l2, sizeof l2, "%.17g", dv);
    if (k == 1) { /* a fraction for the INTEGER column */
      p[0] = cat_v_double((double)iv + 0.5);
      snprintf(l1, sizeof l1, "%.1f", (double)iv + 0.5);
    } else if (k == 2) { /* text that converts */
      snprintf(txt, sizeof txt, "%lld", (long long)iv);
      p[0] = cat_v_str(CAT_T_VARCHAR, txt, strlen(txt));
    } else if (k == 3) { /* NULL: no row passes */
      p[1] = cat_v_null(cat_type_of(CAT_T_DOUBLE));
      snprintf(l2, sizeof l2, "NULL");
    } else if (k == 4) { /* an integer for the DOUBLE column, beyond INTEGER's range */
      p[0] = cat_v_int(CAT_T_BIGINT, 3000000000LL);
      snprintf(l1, sizeof l1, "3000000000");
    }
    exec_reset(st);
    for (int i = 0; i < 2; i++) assert_int_equal(exec_bind(st, i + 1, &p[i], &t->err), 0);
    char got[1024] = "";
    int rc;
    while ((rc = exec_step(st, &t->err)) == EXEC_ROW) {
      size_t o = 0;
      for (int i = 0; i < 4; i++) {
        const cat_value *v = exec_column_value(st, i);
        char b[256];
        if (!v->is_null && (v->type.id == CAT_T_DOUBLE || v->type.id == CAT_T_FLOAT))
          snprintf(b, sizeof b, "%.17g", v->u.d);
        else
          cat_text_format(v, b, sizeof b);
        o += (size_t)snprintf(got + o, sizeof got - o, "%s%s", i ? "|" : "", b);
      }
    }
    if (rc != EXEC_DONE) fail_msg("run %d (kind %d): %d %s", r, k, rc, t->err.msg);
    char lsql[512];
    snprintf(lsql, sizeof lsql,
             "SELECT /*+ NO_PUSHDOWN */ COUNT(*), SUM(I), MIN(DB), MAX(VC) FROM T WHERE I > %s "
             "AND DB <= %s",
             l1, l2);
    exec_stmt *fs = NULL;
    assert_int_equal(exec_prepare(t->s, lsql, strlen(lsql), &fs, NULL, &t->err), EXEC_OK);
    char want[1024] = "";
    while ((rc = exec_step(fs, &t->err)) == EXEC_ROW) {
      size_t o = 0;
      for (int i = 0; i < 4; i++) {
        const cat_value *v = exec_column_value(fs, i);
        char b[256];
        if (!v->is_null && (v->type.id == CAT_T_DOUBLE || v->type.id == CAT_T_FLOAT))
          snprintf(b, sizeof b, "%.17g", v->u.d);
        else
          cat_text_format(v, b, sizeof b);
        o += (size_t)snprintf(want + o, sizeof want - o, "%s%s", i ? "|" : "", b);
      }
    }
    assert_int_equal(rc, EXEC_DONE);
    exec_finalize(fs);
    if (strcmp(want, got) != 0)
      fprintf(stderr, "seed %llu run %d: %s\n  literal: %s\n  prepared: %s\n",
              (unsigned long long)seed, r, lsql, want, got);
    assert_string_equal(want, got);
    if (r % 10 == 9) { /* the data changes between runs */
      upsert_rows(t, &rs, "T", 0, n, 13);
      if (r % 20 == 19) assert_int_equal(kv_compact(t->db, NULL, true), KV_OK);
    }
  }
  exec_finalize(st);
  tdb_close(t);
}

/* Two tables of one shape, and a table dropped and created again under its name: no answer
** comes from the other table's or the old table's blocks (column cache). */
static void tables_and_recreate(void **state) {
  (void)state;
  uint64_t seed = tu_seed("tables_and_recreate"), rs = seed;
  int n = (int)tu_scaled(900, 200), nq = (int)tu_scaled(40, 15);
  tdb *t = make("T", "");
  char sql[1024];
  snprintf(sql, sizeof sql, "CREATE TABLE U %s", schema);
  q(t, sql);
  upsert_rows(t, &rs, "T", 0, n, 1);
  upsert_rows(t, &rs, "U", 0, n / 2, 1);
  assert_int_equal(kv_compact(t->db, NULL, true), KV_OK);
  for (int round = 0; round < 3; round++) {
    /* the same queries twice: the second run may be answered from cached columns */
    uint64_t save = rs;
    assert_true(compare(t, &rs, "T", nq, seed) > 0);
    rs = save;
    assert_true(compare(t, &rs, "T", nq, seed) > 0);
    rs = save;
    compare(t, &rs, "U", nq, seed);
    q(t, "DROP TABLE T");
    snprintf(sql, sizeof sql, "CREATE TABLE T %s", schema);
    q(t, sql);
    upsert_rows(t, &rs, "T", 0, n - 100 * round, 1);
    assert_int_equal(kv_compact(t->db, NULL, true), KV_OK);
  }
  tdb_close(t);
}


/* Rows wider than a block (three long strings and two numbers in F), so nearly every row
** spans blocks and chunks, with cell deletes and new versions in some of them (row-way
** blocks next to clean ones, a row's fragments split between the two). */
static void rows_span_blocks(void **state) {
  (void)state;
  uint64_t seed = tu_seed("rows_span_blocks"), rs = seed;
  tdb *t = tdb_open();
  q(t, "CREATE TABLE W (K INTEGER NOT NULL PRIMARY KEY, F.S1 VARCHAR, F.N1 INTEGER, "
       "F.S2 VARCHAR, F.N2 DOUBLE, F.S3 VARCHAR) BLOCKSIZE=256");
  int n = (int)tu_scaled(600, 150), nq = (int)tu_scaled(60, 25);
  char sql[4096], s[3][800];
  for (int pass = 0; pass < 3; pass++) {
    for (int k = 0; k < n; k += pass ? 3 + pass : 1) {
      for (int j = 0; j < 3; j++) {
        word(&rs, s[j], tu_below(&rs, 4) ? 50 + (size_t)tu_below(&rs, 400) : (size_t)tu_below(&rs, 3));
      }
      snprintf(sql, sizeof sql, "UPSERT INTO W VALUES (%d, '%s', %s, '%s', %d.5, %s)", k, s[0],
               tu_below(&rs, 5) ? "7" : "NULL", s[1], (int)tu_below(&rs, 100) - 50,
               tu_below(&rs, 4) ? "'q'" : "NULL");
      assert_int_equal(tdb_run(t, sql), EXEC_DONE);
      if (pass && tu_below(&rs, 4) == 0) {
        snprintf(sql, sizeof sql, "UPSERT INTO W (K, S%d) VALUES (%d, NULL)", 1 + (int)tu_below(&rs, 3), k);
        assert_int_equal(tdb_run(t, sql), EXEC_DONE);
      }
    }
    static const char *const qs[] = {
        "SELECT COUNT(*), COUNT(S1), MAX(S2) FROM W WHERE N1 = 7",
        "SELECT COUNT(*), SUM(N2), MIN(S3) FROM W WHERE S1 > 'b' AND N2 < 10",
        "SELECT COUNT(S3), MIN(S1), MAX(N2) FROM W WHERE S2 IS NOT NULL",
        "SELECT COUNT(*), SUM(N1), AVG(N1) FROM W WHERE S3 = 'q' AND S1 >= ''",
        "SELECT COUNT(*), MAX(S1) FROM W WHERE S1 < 'b'",
        "SELECT COUNT(*), MIN(N2), MAX(N2) FROM W WHERE N2 <> 0.5",
    };
    /* the pass's writes still in the memstore (after the first pass: rows of files and
       memstore cells at once), then flushed and compacted */
    int pushed = 0;
    for (int i = 0; i < nq / 2; i++) pushed += check(t, qs[i % 6], seed);
    assert_int_equal(kv_flush(t->db, NULL), KV_OK);
    assert_int_equal(kv_compact(t->db, NULL, pass == 0), KV_OK);
    for (int i = 0; i < nq; i++) pushed += check(t, qs[i % 6], seed);
    assert_true(pushed > 0);
  }
  tdb_close(t);
}

/* Memstore cells over compacted files: new rows, new versions, cell deletes and row deletes
** not yet flushed (each such row read the row way), up to and past the number of memstore
** rows the pushdown takes. */
static void memstore_rows(void **state) {
  (void)state;
  uint64_t seed = tu_seed("memstore_rows"), rs = seed;
  tdb *t = make("T", "");
  int n = (int)tu_scaled(1500, 300), nq = (int)tu_scaled(40, 15);
  upsert_rows(t, &rs, "T", 0, n, 1);
  assert_int_equal(kv_compact(t->db, NULL, true), KV_OK);
  /* a one-column query whose blocks the column cache keeps, asked again once memstore
     cells overlap some of them */
  const char *one = "SELECT COUNT(*), SUM(I), MIN(I) FROM T WHERE I > -50";
  assert_int_equal(check(t, one, seed), 1);
  const char *e = explain(t, "EXPLAIN ANALYZE SELECT COUNT(*), SUM(I), MIN(I) FROM T WHERE I > -50");
  const char *h = strstr(e, "cache hits=");
  assert_non_null(h);
  assert_true(atol(h + strlen("cache hits=")) > 0);
  for (int round = 0; round < 4; round++) {
    upsert_rows(t, &rs, "T", round * 5, n + 30, 9 + round); /* versions and new rows */
    check(t, one, seed);
    churn(t, &rs, "T", n + 30, 25);
    compare(t, &rs, "T", nq, seed);
    if (round == 1) assert_int_equal(kv_flush(t->db, NULL), KV_OK);
  }
  /* more memstore rows than the pushdown takes one by one: the rows path answers */
  int big = (int)tu_scaled(5000, 5000);
  char sql[256];
  q(t, "BEGIN");
  for (int k = 0; k < big; k++) {
    snprintf(sql, sizeof sql, "UPSERT INTO T (K1, K2, I, DB) VALUES (%d, 'm', %d, %d.25)", 100000 + k, k % 100, k % 7);
    assert_int_equal(tdb_run(t, sql), EXEC_DONE);
  }
  q(t, "COMMIT");
  compare(t, &rs, "T", nq, seed);
  tdb_close(t);
}

/* A table of 300 INTEGER columns in one family: qualifiers of two bytes (column ids from
** 128 on) and blocks whose qualifier dictionaries pass 128 and 255 entries. */
static void wide_table(void **state) {
  (void)state;
  uint64_t seed = tu_seed("wide_table"), rs = seed;
  tdb *t = tdb_open();
  enum { NC = 300 };
  size_t cap = 64 * 1024;
  char *sql = malloc(cap);
  int o = snprintf(sql, cap, "CREATE TABLE WT (K INTEGER NOT NULL PRIMARY KEY");
  for (int c = 0; c < NC; c++) o += snprintf(sql + o, cap - (size_t)o, ", F.C%d INTEGER", c);
  snprintf(sql + o, cap - (size_t)o, ") BLOCKSIZE=2048");
  q(t, sql);
  int n = (int)tu_scaled(400, 120), nq = (int)tu_scaled(40, 15);
  for (int pass = 0; pass < 2; pass++) {
    for (int k = 0; k < n; k += 1 + pass) {
      char names[4096] = "", vals[4096] = "";
      size_t ln = 0, lv = 0;
      int m = 1 + (int)tu_below(&rs, k % 5 == 0 ? 200 : 30);
      bool used[NC] = {false};
      for (int i = 0; i < m; i++) {
        int c = (int)tu_below(&rs, NC);
        if (used[c]) continue;
        used[c] = true;
        ln += (size_t)snprintf(names + ln, sizeof names - ln, ", C%d", c);
        if (tu_below(&rs, 8) == 0) lv += (size_t)snprintf(vals + lv, sizeof vals - lv, ", NULL");
        else lv += (size_t)snprintf(vals + lv, sizeof vals - lv, ", %d", (int)tu_below(&rs, 101) - 50);
      }
      snprintf(sql, cap, "UPSERT INTO WT (K%s) VALUES (%d%s)", names, k, vals);
      assert_int_equal(tdb_run(t, sql), EXEC_DONE);
    }
    assert_int_equal(kv_compact(t->db, NULL, pass == 0), KV_OK);
    int pushed = 0;
    for (int i = 0; i < nq; i++) {
      int a = (int)tu_below(&rs, NC), b = (int)tu_below(&rs, NC), c = (int)tu_below(&rs, NC);
      snprintf(sql, cap, "SELECT COUNT(*), SUM(C%d), MIN(C%d), COUNT(C%d) FROM WT WHERE C%d > %d%s",
               a, b, c, a, (int)tu_below(&rs, 60) - 30, tu_below(&rs, 2) ? "" : " AND C0 IS NOT NULL");
      pushed += check(t, sql, seed);
    }
    assert_true(pushed > 0);
  }
  free(sql);
  tdb_close(t);
}

/* Dense blocks (every row holds every referenced column: no NULL in most of the table)
** next to sparse stretches, with predicates on two or three columns of different widths
** and aggregates on others; then cell deletes and row deletes that make some blocks go
** the row way. */
static void dense_blocks(void **state) {
  (void)state;
  uint64_t seed = tu_seed("dense_blocks"), rs = seed;
  tdb *t = tdb_open();
  q(t, "CREATE TABLE D (K INTEGER NOT NULL PRIMARY KEY, F.A INTEGER, F.B DOUBLE, F.C BIGINT, "
       "F.S VARCHAR, F.T SMALLINT, F.U BOOLEAN) BLOCKSIZE=1024");
  int n = (int)tu_scaled(3000, 600), nq = (int)tu_scaled(60, 20);
  char sql[512];
  for (int k = 0; k < n; k++) {
    bool sparse = (k / 200) % 4 == 3; /* every fourth stretch of 200 rows has NULLs */
    char s[8], a[16], tv[16];
    snprintf(s, sizeof s, "%c%c", 'a' + (int)tu_below(&rs, 5), 'a' + (int)tu_below(&rs, 5));
    if (sparse && tu_below(&rs, 3) == 0) snprintf(a, sizeof a, "NULL");
    else snprintf(a, sizeof a, "%d", (int)tu_below(&rs, 50));
    if (sparse && tu_below(&rs, 3) == 0) snprintf(tv, sizeof tv, "NULL");
    else snprintf(tv, sizeof tv, "%d", (int)tu_below(&rs, 600) - 300);
    snprintf(sql, sizeof sql, "UPSERT INTO D VALUES (%d, %s, %d.25, %lld, '%s', %s, %s)", k, a,
             (int)tu_below(&rs, 200) - 100, (long long)tu_below(&rs, 1000000) * 7919 - 3000000000LL,
             s, tv, tu_below(&rs, 2) ? "TRUE" : "FALSE");
    assert_int_equal(tdb_run(t, sql), EXEC_DONE);
    if (k % 7 == 0) { /* a second version of A (the major compaction keeps the newest) */
      snprintf(sql, sizeof sql, "UPSERT INTO D (K, A) VALUES (%d, %d)", k, (int)tu_below(&rs, 50));
      assert_int_equal(tdb_run(t, sql), EXEC_DONE);
    }
  }
  for (int k = 600; k < 800; k += 3) { /* a real sparse stretch */
    snprintf(sql, sizeof sql, "UPSERT INTO D (K, B, S) VALUES (%d, NULL, NULL)", k);
    assert_int_equal(tdb_run(t, sql), EXEC_DONE);
  }
  assert_int_equal(kv_compact(t->db, NULL, true), KV_OK);
  static const char *const cols[6] = {"A", "B", "C", "S", "T", "U"};
  static const char *const ops[6] = {"=", "<>", "<", "<=", ">", ">="};
  for (int round = 0; round < 2; round++) {
    int pushed = 0;
    for (int i = 0; i < nq; i++) {
      char where[256] = "";
      size_t l = 0;
      int np = 2 + (int)tu_below(&rs, 2);
      for (int j = 0; j < np; j++) {
        int c = (int)tu_below(&rs, 6);
        char v[32];
        switch (c) {
          case 0: snprintf(v, sizeof v, "%d", (int)tu_below(&rs, 50)); break;
          case 1: snprintf(v, sizeof v, "%d.5", (int)tu_below(&rs, 200) - 100); break;
          case 2: snprintf(v, sizeof v, "%lld", (long long)tu_below(&rs, 1000000) * 7919 - 3000000000LL); break;
          case 3: snprintf(v, sizeof v, "'%c'", 'a' + (int)tu_below(&rs, 5)); break;
          case 4: snprintf(v, sizeof v, "%d", (int)tu_below(&rs, 600) - 300); break;
          default: snprintf(v, sizeof v, "%s", tu_below(&rs, 2) ? "TRUE" : "FALSE"); break;
        }
        l += (size_t)snprintf(where + l, sizeof where - l, "%s%s %s %s", j ? " AND " : "", cols[c],
                              ops[tu_below(&rs, 6)], v);
      }
      snprintf(sql, sizeof sql, "SELECT COUNT(*), SUM(%s), MIN(%s), MAX(%s), COUNT(%s) FROM D WHERE %s",
               tu_below(&rs, 2) ? "T" : "C", cols[tu_below(&rs, 6)], cols[tu_below(&rs, 6)],
               cols[tu_below(&rs, 6)], where);
      pushed += check(t, sql, seed);
    }
    assert_true(pushed > nq / 2);
    /* row-way blocks among the dense ones */
    for (int k = 5; k < n; k += 97) {
      snprintf(sql, sizeof sql, k % 2 ? "DELETE FROM D WHERE K = %d" : "UPSERT INTO D (K, T) VALUES (%d, NULL)", k);
      assert_int_equal(tdb_run(t, sql), EXEC_DONE);
    }
    assert_int_equal(kv_flush(t->db, NULL), KV_OK);
    assert_int_equal(kv_compact(t->db, NULL, false), KV_OK);
  }
  tdb_close(t);
}

/* Run kept statement st (one parameter, bound to v) and return its one row as text. */
static const char *run_kept1(tdb *t, exec_stmt *st, int64_t v, char *buf, size_t cap) {
  cat_value p = cat_v_int(CAT_T_INTEGER, v);
  exec_reset(st);
  assert_int_equal(exec_bind(st, 1, &p, &t->err), EXEC_OK);
  assert_int_equal(exec_step(st, &t->err), EXEC_ROW);
  size_t o = 0;
  for (int i = 0; i < exec_column_count(st); i++) {
    char b[128];
    cat_text_format(exec_column_value(st, i), b, sizeof b);
    o += (size_t)snprintf(buf + o, cap - o, "%s%s", i ? "|" : "", b);
  }
  assert_int_equal(exec_step(st, &t->err), EXEC_DONE);
  return buf;
}

/* A kept aggregate statement (plan reused with the same value) inside and outside a
** transaction: its own uncommitted writes are seen, a rollback drops them. */
static void kept_statement_in_transaction(void **state) {
  (void)state;
  uint64_t seed = tu_seed("kept_statement_in_transaction"), rs = seed;
  int n = (int)tu_scaled(600, 200);
  tdb *t = make("T", "");
  upsert_rows(t, &rs, "T", 0, n, 1);
  assert_int_equal(kv_compact(t->db, NULL, true), KV_OK);
  const char *sql = "SELECT COUNT(*), SUM(I), MAX(SI) FROM T WHERE I > ?";
  const char *ref = "SELECT /*+ NO_PUSHDOWN */ COUNT(*), SUM(I), MAX(SI) FROM T WHERE I > 0";
  exec_stmt *st = NULL;
  assert_int_equal(exec_prepare(t->s, sql, strlen(sql), &st, NULL, &t->err), EXEC_OK);
  char got[256], want[256];
  for (int round = 0; round < 6; round++) {
    bool commit = round % 2 == 0;
    snprintf(want, sizeof want, "%s", q(t, ref));
    want[strcspn(want, "\n")] = 0;
    assert_string_equal(run_kept1(t, st, 0, got, sizeof got), want);
    q(t, "BEGIN");
    char w[256];
    snprintf(w, sizeof w, "UPSERT INTO T (K1, K2, I, SI) VALUES (%d, 'q', %d, 32000)", 5000 + round, 1000 + round);
    q(t, w);
    snprintf(w, sizeof w, "DELETE FROM T WHERE K1 = %d", (int)tu_below(&rs, (uint64_t)n / 3));
    q(t, w);
    snprintf(want, sizeof want, "%s", q(t, ref));
    want[strcspn(want, "\n")] = 0;
    if (strcmp(run_kept1(t, st, 0, got, sizeof got), want) != 0)
      fprintf(stderr, "seed %llu round %d: in the transaction\n", (unsigned long long)seed, round);
    assert_string_equal(got, want);
    q(t, commit ? "COMMIT" : "ROLLBACK");
    snprintf(want, sizeof want, "%s", q(t, ref));
    want[strcspn(want, "\n")] = 0;
    assert_string_equal(run_kept1(t, st, 0, got, sizeof got), want);
    if (round == 3) assert_int_equal(kv_flush(t->db, NULL), KV_OK);
  }
  exec_finalize(st);
  tdb_close(t);
}

/* Small memstores flushed and compacted by the background thread while queries run: the
** pushdown meets frozen memstores, files appearing and files merged between its start and
** its row-way reads. */
static void background_flushes(void **state) {
  (void)state;
  uint64_t seed = tu_seed("background_flushes"), rs = seed;
  tdb *t = calloc(1, sizeof *t);
  t->env = kv_env_mem_new(1500000000000LL);
  kv_options o;
  kv_options_init(&o);
  o.env = t->env;
  o.create_if_missing = true;
  o.sync_mode = KV_SYNC_OFF;
  o.memstore_flush_size = 24 << 10;
  o.compaction_trigger = 2;
  assert_int_equal(kv_open("/db", &o, &t->db), KV_OK);
  assert_int_equal(exec_session_open(t->db, &t->s, &t->err), EXEC_OK);
  char sql[1024];
  snprintf(sql, sizeof sql, "CREATE TABLE T %s", schema);
  q(t, sql);
  int n = (int)tu_scaled(1200, 300), nq = (int)tu_scaled(8, 3);
  int pushed = 0;
  for (int k = 0; k < n; k += 50) {
    upsert_rows(t, &rs, "T", k, k + 50, 1);
    if (k % 200 == 0) churn(t, &rs, "T", k + 50, 10);
    pushed += compare(t, &rs, "T", nq, seed);
  }
  assert_int_equal(kv_compact(t->db, NULL, true), KV_OK);
  pushed += compare(t, &rs, "T", nq * 4, seed);
  assert_true(pushed > 0);
  tdb_close(t);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(types_and_files),
      cmocka_unit_test(versions_and_ttl),
      cmocka_unit_test(transaction_overlay),
      cmocka_unit_test(open_statement),
      cmocka_unit_test(parameters),
      cmocka_unit_test(tables_and_recreate),
      cmocka_unit_test(rows_span_blocks),
      cmocka_unit_test(memstore_rows),
      cmocka_unit_test(wide_table),
      cmocka_unit_test(dense_blocks),
      cmocka_unit_test(kept_statement_in_transaction),
      cmocka_unit_test(background_flushes),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
