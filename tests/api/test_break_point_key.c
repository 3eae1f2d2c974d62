/*
** tests/api/test_break_point_key.c: attacks on the point key template of a prepared point
** lookup (planner/point_key.h): one statement kept and rebound run after run must give
** exactly the rows and return codes of a fresh prepare of the same text with the same
** bindings. Statements put parameters in every key position, twice, in parameter-only
** terms (`K = ? AND ? = 1`), in OR / IN lists and in casts; keys are BIGINT, INTEGER,
** DESC, composite, VARCHAR with 0x00-escaped bytes, CHAR (trailing blanks), DECIMAL,
** TIMESTAMP and DOUBLE; bindings are random integers (existing keys, extremes), integral
** and fractional doubles, numeric and other texts, NULL, timestamps and blobs. Between
** runs rows are written, deleted, flushed and compacted, transactions open and close
** (reads see their uncommitted writes), and DDL (CREATE / DROP INDEX) runs, so a kept plan
** is replaced. The same lookup as the source of a kept UPSERT ... SELECT copies what a
** fresh one copies. Seeded (tu_seed; the seed is printed).
** Not here: the template's byte equality with re-planning (tests/exec/test_point_key.c).
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "kv/env/env_mem.h"
#include "rowan.h"
#include "testutil.h"
#include "tu_api.h"

#define OUT_CAP 8192

/* One binding: what to call rowan_bind_* with. */
typedef struct bval {
  int kind;       /* 0 int64, 1 double, 2 text, 3 null, 4 timestamp, 5 blob */
  int64_t i;      /* kind 0, 4 */
  double d;       /* kind 1 */
  char s[24];     /* kind 2, 5 */
  int n;          /* bytes at s for kind 2, 5 */
} bval;

static int bind_one(rowan_stmt *st, int i, const bval *b) {
  switch (b->kind) {
  case 0: return rowan_bind_int64(st, i, b->i);
  case 1: return rowan_bind_double(st, i, b->d);
  case 2: return rowan_bind_text(st, i, b->s, b->n);
  case 3: return rowan_bind_null(st, i);
  case 4: return rowan_bind_timestamp(st, i, b->i);
  default: return rowan_bind_blob(st, i, b->s, b->n);
  }
}

static void describe(const bval *b, char *out, size_t cap) {
  switch (b->kind) {
  case 0: snprintf(out, cap, "int64 %lld", (long long)b->i); break;
  case 1: snprintf(out, cap, "double %.17g", b->d); break;
  case 2: snprintf(out, cap, "text[%d] '%.*s'", b->n, b->n, b->s); break;
  case 3: snprintf(out, cap, "NULL"); break;
  case 4: snprintf(out, cap, "timestamp %lld", (long long)b->i); break;
  default: snprintf(out, cap, "blob[%d]", b->n); break;
  }
}

static const char *const texts[] = {"", "a", "a\x01" "b", "ab", "b", "abc ", "abc", "3", "-7",
                                    "1.5", "x'", "\xff\xfe", "2016-03-01 00:00:00", " 4",
                                    "2.50", "2.505", "-0", "2.5e0", "1e400"};
#define N_TEXTS (int)(sizeof texts / sizeof texts[0])

/* A random binding; mostly values near the keys written (0..15, the texts above). */
static void rand_bval(uint64_t *rs, bval *b) {
  memset(b, 0, sizeof *b);
  switch (tu_below(rs, 12)) {
  case 0: case 1: case 2: case 3:
    b->kind = 0;
    b->i = (int64_t)tu_below(rs, 18) - 1;
    break;
  case 4: {
    static const int64_t ext[] = {INT64_MIN, INT64_MAX, 2147483647LL, 2147483648LL, -129, 127,
                                  128, 32767, 32768, 1456790400000LL};
    b->kind = 0;
    b->i = ext[tu_below(rs, sizeof ext / sizeof ext[0])];
    break;
  }
  case 5: {
    static const double ds[] = {0.0, -0.0, 1.0, 2.5, 3.0, 7.25, 1e300, -1e19, 9.22e18, 0.5};
    b->kind = 1;
    b->d = ds[tu_below(rs, sizeof ds / sizeof ds[0])];
    break;
  }
  case 6: case 7: case 8: {
    const char *t = texts[tu_below(rs, N_TEXTS)];
    b->kind = 2;
    b->n = (int)strlen(t);
    memcpy(b->s, t, (size_t)b->n);
    break;
  }
  case 9: b->kind = 3; break;
  case 10:
    b->kind = 4;
    b->i = 1456790400000LL + (int64_t)tu_below(rs, 4) * 3600000LL;
    break;
  default:
    b->kind = 5;
    b->n = (int)tu_below(rs, 4);
    for (int k = 0; k < b->n; k++) b->s[k] = (char)("a\0\xff" "b"[tu_below(rs, 4)]);
    break;
  }
}

/* Run st to the end; append its rows and final code to out as text. Returns what a
** rowan_reset of st then returns: ROWAN_OK, or the code of the step that failed. */
static int run_all(rowan_db *db, rowan_stmt *st, char *out, size_t cap) {
  size_t n = 0;
  out[0] = 0;
  int rc;
  while ((rc = rowan_step(st)) == ROWAN_ROW) {
    int nc = rowan_column_count(st);
    for (int c = 0; c < nc; c++) {
      const char *t = rowan_column_text(st, c);
      int len = rowan_column_bytes(st, c);
      n += (size_t)snprintf(out + n, cap - n, "%d:", rowan_column_type(st, c));
      if (n >= cap) return ROWAN_OK; /* between rows */
      if (t)
        for (int k = 0; k < len && n + 4 < cap; k++)
          n += (size_t)snprintf(out + n, cap - n, "%02x", (unsigned char)t[k]);
      else n += (size_t)snprintf(out + n, cap - n, "NULL");
      if (n >= cap) return ROWAN_OK; /* between rows */
      n += (size_t)snprintf(out + n, cap - n, c + 1 < nc ? "|" : "\n");
      if (n >= cap) return ROWAN_OK; /* between rows */
    }
  }
  snprintf(out + n, cap - n, "end %s %s", rowan_errstr(rc),
           rc == ROWAN_DONE ? "" : rowan_errmsg(db));
  return rc == ROWAN_DONE ? ROWAN_OK : rc;
}

/* The schema: several key shapes, rows at keys made from 0..15 and the texts above. */
static void make_schema(rowan_db *db) {
  exec_ok(db, "CREATE TABLE T1 (K BIGINT NOT NULL PRIMARY KEY, V VARCHAR)");
  exec_ok(db, "CREATE TABLE T2 (A VARCHAR NOT NULL, B INTEGER NOT NULL, C DECIMAL(6,2) NOT "
              "NULL, F.V DOUBLE, CONSTRAINT PK PRIMARY KEY (A, B DESC, C))");
  exec_ok(db, "CREATE TABLE T3 (S CHAR(4) NOT NULL, TS TIMESTAMP NOT NULL, X SMALLINT, "
              "CONSTRAINT PK PRIMARY KEY (S DESC, TS))");
  exec_ok(db, "CREATE TABLE T4 (D DOUBLE NOT NULL, T TINYINT NOT NULL, V INTEGER, "
              "CONSTRAINT PK PRIMARY KEY (D, T DESC))");
  exec_ok(db, "CREATE TABLE T5 (K INTEGER NOT NULL PRIMARY KEY DESC, V VARCHAR)");
  /* key prefixes whose encoded bytes are all 0x00 or all 0xFF (the prefix's end) */
  exec_ok(db, "CREATE TABLE T6 (A BIGINT NOT NULL, B INTEGER NOT NULL, V VARCHAR, "
              "CONSTRAINT PK PRIMARY KEY (A DESC, B))");
  exec_ok(db, "CREATE TABLE T7 (A BIGINT NOT NULL, B INTEGER NOT NULL, V VARCHAR, "
              "CONSTRAINT PK PRIMARY KEY (A, B DESC))");
}

static const int64_t extremes[] = {INT64_MIN, INT64_MIN + 1, -1, 0, 1, 127, 128,
                                   INT64_MAX - 1, INT64_MAX};
#define N_EXTREMES (int)(sizeof extremes / sizeof extremes[0])

/* Write or delete a random row in one of the tables (errors such as a text that is not
** a number are not the point here: the statements of both sides see the same data). */
static void random_write(rowan_db *db, uint64_t *rs) {
  char sql[256];
  int k = (int)tu_below(rs, 16), k2 = (int)tu_below(rs, 4);
  const char *t = texts[tu_below(rs, 8)]; /* the key-safe ones, no quote */
  bool del = tu_below(rs, 5) == 0;
  switch (tu_below(rs, 7)) {
  case 5:
  case 6: {
    const char *tb = tu_below(rs, 2) ? "T6" : "T7";
    long long a = (long long)extremes[tu_below(rs, N_EXTREMES)];
    if (del) snprintf(sql, sizeof sql, "DELETE FROM %s WHERE A = %lld AND B = %d", tb, a, k2);
    else snprintf(sql, sizeof sql, "UPSERT INTO %s VALUES (%lld, %d, 'x%d')", tb, a, k2, k);
    if (a == INT64_MIN) { /* no literal for it: -9223372036854775807 - 1 */
      if (del) snprintf(sql, sizeof sql, "DELETE FROM %s WHERE A = -9223372036854775807 - 1 AND "
                        "B = %d", tb, k2);
      else snprintf(sql, sizeof sql, "UPSERT INTO %s VALUES (-9223372036854775807 - 1, %d, "
                    "'x%d')", tb, k2, k);
    }
    break;
  }
  case 0:
    if (del) snprintf(sql, sizeof sql, "DELETE FROM T1 WHERE K = %d", k);
    else if (k2 == 3) snprintf(sql, sizeof sql, "UPSERT INTO T1 VALUES (%d, '%d')", k, k * 7);
    else snprintf(sql, sizeof sql, "UPSERT INTO T1 VALUES (%d, 'v%d')", k, k2);
    break;
  case 1: {
    rowan_stmt *st;
    assert_int_equal(rowan_prepare(db, del ? "DELETE FROM T2 WHERE A = ? AND B = ? AND C = ?"
                                           : "UPSERT INTO T2 VALUES (?, ?, ?, ?)",
                                   -1, &st, NULL),
                     ROWAN_OK);
    rowan_bind_text(st, 1, t, -1);
    rowan_bind_int64(st, 2, k);
    rowan_bind_double(st, 3, k2 == 3 ? 2.5 : k2);
    if (!del) rowan_bind_double(st, 4, k * 0.5);
    assert_int_equal(rowan_step(st), ROWAN_DONE);
    rowan_finalize(st);
    return;
  }
  case 2:
    if (del)
      snprintf(sql, sizeof sql, "DELETE FROM T3 WHERE S = '%s'", k2 == 0 ? "abc" : "a");
    else
      snprintf(sql, sizeof sql, "UPSERT INTO T3 VALUES ('%s', TIMESTAMP '2016-03-01 0%d:00:00', %d)",
               (k2 == 0 ? "abc" : k2 == 1 ? "a" : k2 == 2 ? "" : "3"), k % 4, k);
    break;
  case 3:
    if (del) snprintf(sql, sizeof sql, "DELETE FROM T4 WHERE T = %d", k);
    else snprintf(sql, sizeof sql, "UPSERT INTO T4 VALUES (%s, %d, %d)",
                  k2 == 0 ? "2.5" : k2 == 1 ? "-0.0" : k2 == 2 ? "3" : "0", k % 5 - 1, k);
    break;
  default:
    if (del) snprintf(sql, sizeof sql, "DELETE FROM T5 WHERE K = %d", k);
    else snprintf(sql, sizeof sql, "UPSERT INTO T5 VALUES (%d, 'w%d')", k - 2, k2);
    break;
  }
  exec_ok(db, sql);
}

static const char *const stmts[] = {
    "SELECT * FROM T1 WHERE K = ?",
    "SELECT V, K FROM T1 WHERE ? = K",
    "SELECT * FROM T1 WHERE K = ? AND ? = 1",
    "SELECT * FROM T1 WHERE K = ?1 AND ?1 IS NOT NULL",
    "SELECT * FROM T1 WHERE K = ? AND K = ?",
    "SELECT * FROM T1 WHERE K = ? OR K = ?",
    "SELECT * FROM T1 WHERE K IN (?, ?)",
    "SELECT ?2, V FROM T1 WHERE K = ?1",
    "SELECT * FROM T1 WHERE K = CAST(? AS INTEGER)",
    "SELECT COUNT(*), MAX(V) FROM T1 WHERE K = ?",
    "SELECT * FROM T1 WHERE K = ? AND ? BETWEEN 2 AND 9",
    "SELECT * FROM T1 WHERE K = ? AND (? IS NULL OR 1 = 0)",
    "SELECT * FROM T1 WHERE K = ?2 AND ?1 = ?2",
    "SELECT V FROM T1 WHERE K = ?3",
    "SELECT ?1, A FROM T2 WHERE A = ?3 AND B = ?2 AND C = ?2",
    "SELECT * FROM T1 WHERE K = ? LIMIT 1 OFFSET 0",
    "SELECT * FROM T1 WHERE K = ? AND NOW() > TIMESTAMP '2000-01-01 00:00:00'",
    "SELECT * FROM T2 WHERE A = ? AND B = ? AND C = ?",
    "SELECT * FROM T2 WHERE C = ? AND B = ? AND A = ?",
    "SELECT * FROM T2 WHERE A = 'ab' AND B = ? AND C = ?",
    "SELECT * FROM T2 WHERE A = ?1 AND B = ?2 AND C = ?2",
    "SELECT V FROM T2 WHERE B = ? AND A = ? AND C = 2.50",
    "SELECT * FROM T3 WHERE S = ? AND TS = ?",
    "SELECT X, TS FROM T3 WHERE TS = ? AND S = ?",
    "SELECT * FROM T4 WHERE D = ? AND T = ?",
    "SELECT * FROM T4 WHERE T = ?1 AND D = ?1",
    "SELECT * FROM T5 WHERE K = ?",
    "SELECT * FROM T5 WHERE K = ? AND ? > 0",
    /* a point for equal values, a range (or nothing) for others: the plan changes shape */
    "SELECT * FROM T1 WHERE K >= ? AND K <= ?",
    "SELECT V FROM T1 WHERE K BETWEEN ? AND ?",
    "SELECT * FROM T2 WHERE A = ? AND B >= ? AND B <= ? AND C = ?",
    "SELECT K, V FROM T5 WHERE K IN (?, ?, ?)",
    "SELECT * FROM T4 WHERE (D, T) = (?, ?)",
    /* key prefixes (a range scan of the rows under one prefix) */
    "SELECT * FROM T6 WHERE A = ?",
    "SELECT B, V FROM T6 WHERE A = ? ORDER BY B DESC LIMIT 2",
    "SELECT * FROM T7 WHERE A = ?",
    "SELECT V FROM T7 WHERE A = ? LIMIT 1",
    "SELECT * FROM T2 WHERE A = ?",
    "SELECT C FROM T2 WHERE A = ? AND B = ?",
    "SELECT * FROM T3 WHERE S = ?",
    "SELECT T, V FROM T4 WHERE D = ?",
    /* EXPLAIN of the same shapes: the key text of each run's own values */
    "EXPLAIN SELECT * FROM T1 WHERE K = ?",
    "EXPLAIN SELECT B, V FROM T6 WHERE A = ? ORDER BY B DESC LIMIT 2",
    "EXPLAIN SELECT * FROM T2 WHERE A = ? AND B = ? AND C = ?",
    /* runtime errors in some runs and not others: each run's own message */
    "SELECT 10 / (K - ?), V FROM T1 WHERE K = ?",
    "SELECT CAST(V AS INTEGER), K FROM T1 WHERE K = ?",
    "SELECT K FROM T1 WHERE K = ? AND 1 / (K - 3) > 0",
};
#define N_STMTS (int)(sizeof stmts / sizeof stmts[0])

/* Each statement kept and rebound, against a fresh prepare per run. */
static void kept_statement_equals_fresh_prepare(void **state) {
  (void)state;
  uint64_t seed = tu_seed("kept_statement_equals_fresh_prepare"), rs = seed;
  kv_env *env = kv_env_mem_new(0);
  rowan_db *db = tu_open_mem(env);
  make_schema(db);
  for (int w = 0; w < 300; w++) random_write(db, &rs);
  rowan_stmt *kept[N_STMTS];
  for (int s = 0; s < N_STMTS; s++) {
    int rc = rowan_prepare(db, stmts[s], -1, &kept[s], NULL);
    if (rc != ROWAN_OK) fail_msg("prepare %s: %s", stmts[s], rowan_errmsg(db));
  }
  exec_ok(db, "CREATE TABLE C1 (K BIGINT NOT NULL PRIMARY KEY, V VARCHAR)");
  exec_ok(db, "CREATE TABLE C2 (K BIGINT NOT NULL PRIMARY KEY, V VARCHAR)");
  rowan_stmt *copy;
  assert_int_equal(rowan_prepare(db, "UPSERT INTO C1 SELECT K, V FROM T1 WHERE K = ?", -1, &copy,
                                 NULL),
                   ROWAN_OK);
  int failed[N_STMTS] = {0}, copy_failed = 0; /* what a reset of each returns (run_all) */
  bool in_txn = false;
  char *a = malloc(OUT_CAP), *b = malloc(OUT_CAP);
  assert_non_null(a);
  assert_non_null(b);
  int rounds = (int)tu_scaled(20000, 3000);
  for (int r = 0; r < rounds; r++) {
    int s = (int)tu_below(&rs, N_STMTS);
    int np = rowan_bind_parameter_count(kept[s]);
    bval v[4];
    for (int i = 0; i < np && i < 4; i++) {
      if (i > 0 && tu_below(&rs, 3) == 0) { /* often the value of the parameter before */
        v[i] = v[i - 1];
        continue;
      }
      rand_bval(&rs, &v[i]);
      /* lean on values of the key's own type so rebinds mostly find rows */
      if (tu_below(&rs, 2) == 0 && v[i].kind != 0) {
        v[i].kind = 0;
        v[i].i = tu_below(&rs, 3) == 0 ? extremes[tu_below(&rs, N_EXTREMES)]
                                       : (int64_t)tu_below(&rs, 16);
      }
    }
    rowan_stmt *fresh;
    assert_int_equal(rowan_prepare(db, stmts[s], -1, &fresh, NULL), ROWAN_OK);
    if (tu_below(&rs, 4) == 0) { /* a run left after its first row, then rebound */
      assert_int_equal(rowan_reset(kept[s]), failed[s]);
      for (int i = 0; i < np && i < 4; i++) {
        bval pv;
        rand_bval(&rs, &pv);
        if (tu_below(&rs, 2)) { pv.kind = 0; pv.i = (int64_t)tu_below(&rs, 16); }
        bind_one(kept[s], i + 1, &pv);
      }
      int rc = rowan_step(kept[s]);
      failed[s] = rc == ROWAN_ROW || rc == ROWAN_DONE ? ROWAN_OK : rc;
    }
    assert_int_equal(rowan_reset(kept[s]), failed[s]);
    for (int i = 0; i < np && i < 4; i++) {
      int rk = bind_one(kept[s], i + 1, &v[i]), rf = bind_one(fresh, i + 1, &v[i]);
      assert_int_equal(rk, rf);
    }
    failed[s] = run_all(db, kept[s], a, OUT_CAP);
    run_all(db, fresh, b, OUT_CAP);
    /* the same plan reads the same rows: the row counters agree (blocks and cells may not:
       the cache differs from run to run) */
    rowan_metrics mk, mf;
    assert_int_equal(rowan_stmt_metrics(kept[s], &mk), ROWAN_OK);
    assert_int_equal(rowan_stmt_metrics(fresh, &mf), ROWAN_OK);
    if (strstr(a, "end ROWAN_DONE") &&
        (mk.rows_examined != mf.rows_examined || mk.rows_filtered != mf.rows_filtered ||
         mk.rows_returned != mf.rows_returned || mk.ranges_sought != mf.ranges_sought))
      fail_msg("seed %llu round %d: %s: metrics of the kept run (examined %llu, filtered %llu, "
               "returned %llu, ranges %llu) differ from a fresh one's (%llu, %llu, %llu, %llu)",
               (unsigned long long)seed, r, stmts[s], (unsigned long long)mk.rows_examined,
               (unsigned long long)mk.rows_filtered, (unsigned long long)mk.rows_returned,
               (unsigned long long)mk.ranges_sought, (unsigned long long)mf.rows_examined,
               (unsigned long long)mf.rows_filtered, (unsigned long long)mf.rows_returned,
               (unsigned long long)mf.ranges_sought);
    rowan_finalize(fresh);
    if (strcmp(a, b) != 0) {
      char d[4][64];
      for (int i = 0; i < 4; i++) d[i][0] = 0;
      for (int i = 0; i < np && i < 4; i++) describe(&v[i], d[i], sizeof d[i]);
      fail_msg("seed %llu round %d: %s with (%s; %s; %s):\nkept:\n%s\nfresh:\n%s",
               (unsigned long long)seed, r, stmts[s], d[0], d[1], d[2], a, b);
    }
    /* the copies: the same SELECT as the source of UPSERT ... SELECT, kept and fresh */
    if (s == 0 && np == 1) {
      rowan_stmt *uf;
      assert_int_equal(rowan_prepare(db, "UPSERT INTO C2 SELECT K, V FROM T1 WHERE K = ?", -1,
                                     &uf, NULL),
                       ROWAN_OK);
      assert_int_equal(rowan_reset(copy), copy_failed);
      assert_int_equal(bind_one(copy, 1, &v[0]), bind_one(uf, 1, &v[0]));
      copy_failed = run_all(db, copy, a, OUT_CAP);
      run_all(db, uf, b, OUT_CAP);
      rowan_finalize(uf);
      assert_string_equal(a, b);
    }
    int act = (int)tu_below(&rs, 200);
    if (act < 25) random_write(db, &rs);
    else if (act < 30) assert_int_equal(rowan_flush(db), ROWAN_OK);
    else if (act == 30 && !in_txn) exec_ok(db, "CREATE INDEX IF NOT EXISTS I1 ON T1 (V)");
    else if (act == 31 && !in_txn) exec_ok(db, "DROP INDEX IF EXISTS I1 ON T1");
    else if (act < 34 && !in_txn) assert_int_equal(rowan_compact(db, act & 1), ROWAN_OK);
    else if (act < 37) {
      exec_ok(db, !in_txn ? "BEGIN" : act == 34 ? "ROLLBACK" : "COMMIT");
      in_txn = !in_txn;
    }
  }
  if (in_txn) exec_ok(db, "COMMIT");
  /* the kept UPSERT SELECT wrote what the fresh ones did */
  rowan_stmt *c1, *c2;
  assert_int_equal(rowan_prepare(db, "SELECT * FROM C1", -1, &c1, NULL), ROWAN_OK);
  assert_int_equal(rowan_prepare(db, "SELECT * FROM C2", -1, &c2, NULL), ROWAN_OK);
  run_all(db, c1, a, OUT_CAP);
  run_all(db, c2, b, OUT_CAP);
  assert_string_equal(a, b);
  assert_true(strlen(a) > 20); /* some rows were copied */
  rowan_finalize(c1);
  rowan_finalize(c2);
  rowan_finalize(copy);
  free(a);
  free(b);
  for (int s = 0; s < N_STMTS; s++) rowan_finalize(kept[s]);
  assert_int_equal(rowan_close(db), ROWAN_OK);
  kv_env_free(env);
}

/* Long text keys rebound into a kept lookup: lengths around the template's buffer (its
** doubling) and around CAT_KEY_MAX (32767 bytes: refused as a key, so the plan is made
** again), composite keys with the long column first or last, bytes that need escaping
** (0x00 doubles the encoded length), against a fresh prepare. */
static void long_keys_rebound(void **state) {
  (void)state;
  uint64_t seed = tu_seed("long_keys_rebound"), rs = seed;
  kv_env *env = kv_env_mem_new(0);
  rowan_db *db = tu_open_mem(env);
  exec_ok(db, "CREATE TABLE L (S VARCHAR NOT NULL, N INTEGER NOT NULL, V INTEGER, "
              "CONSTRAINT PK PRIMARY KEY (S DESC, N))");
  exec_ok(db, "CREATE TABLE M (N INTEGER NOT NULL, S VARBINARY NOT NULL, V INTEGER, "
              "CONSTRAINT PK PRIMARY KEY (N, S))");
  static const size_t lens[] = {0, 1, 7, 63, 64, 65, 200, 1000, 4000, 16000, 16383, 16384,
                                32000, 32765, 32766, 32767, 32768, 40000};
  size_t nl = sizeof lens / sizeof lens[0];
  char *buf = malloc(40001);
  assert_non_null(buf);
  /* rows at some of the lengths, written with the same texts */
  rowan_stmt *ul, *um;
  assert_int_equal(rowan_prepare(db, "UPSERT INTO L VALUES (?, ?, ?)", -1, &ul, NULL), ROWAN_OK);
  assert_int_equal(rowan_prepare(db, "UPSERT INTO M VALUES (?, ?, ?)", -1, &um, NULL), ROWAN_OK);
  for (size_t i = 0; i < nl; i += 2) {
    size_t n = lens[i];
    for (size_t k = 0; k < n; k++) buf[k] = (char)('a' + k % 26);
    for (int t = 0; t < 2; t++) {
      rowan_stmt *u = t ? um : ul;
      rowan_reset(u);
      rowan_bind_int64(u, t ? 1 : 2, (int64_t)i);
      if (t) rowan_bind_blob(u, 2, n ? buf : "", (int)n);
      else rowan_bind_text(u, 1, buf, (int)n);
      rowan_bind_int64(u, 3, (int64_t)n);
      rowan_step(u); /* a key too long is refused: the lookups then find nothing */
    }
  }
  rowan_finalize(ul);
  rowan_finalize(um);
  static const char *const q[] = {"SELECT V FROM L WHERE S = ? AND N = ?",
                                  "SELECT V, N FROM M WHERE N = ? AND S = ?",
                                  "SELECT N, V FROM L WHERE S = ?", /* a long DESC prefix */
                                  "SELECT V FROM M WHERE N = ? ORDER BY S DESC LIMIT 3"};
  rowan_stmt *kept[4];
  for (int t = 0; t < 4; t++) assert_int_equal(rowan_prepare(db, q[t], -1, &kept[t], NULL), ROWAN_OK);
  char *a = malloc(OUT_CAP), *b = malloc(OUT_CAP);
  assert_non_null(a);
  assert_non_null(b);
  int rounds = (int)tu_scaled(300, 100);
  for (int r = 0; r < rounds; r++) {
    int t = (int)tu_below(&rs, 4);
    size_t li = tu_below(&rs, nl), n = lens[li];
    int64_t num = tu_below(&rs, 4) ? (int64_t)li : (int64_t)tu_below(&rs, nl);
    for (size_t k = 0; k < n; k++) buf[k] = (char)('a' + k % 26);
    if (n && tu_below(&rs, 4) == 0 && t == 1) buf[tu_below(&rs, n)] = 0; /* escaped byte */
    if (n && tu_below(&rs, 4) == 0 && t == 0) buf[n - 1] = (char)0x7f;
    rowan_stmt *fresh;
    assert_int_equal(rowan_prepare(db, q[t], -1, &fresh, NULL), ROWAN_OK);
    rowan_reset(kept[t]);
    for (int side = 0; side < 2; side++) {
      rowan_stmt *st = side ? fresh : kept[t];
      if (t == 2) {
        assert_int_equal(rowan_bind_text(st, 1, buf, (int)n), ROWAN_OK);
      } else if (t == 3) {
        assert_int_equal(rowan_bind_int64(st, 1, num), ROWAN_OK);
      } else if (t == 0) {
        assert_int_equal(rowan_bind_text(st, 1, buf, (int)n), ROWAN_OK);
        assert_int_equal(rowan_bind_int64(st, 2, num), ROWAN_OK);
      } else {
        assert_int_equal(rowan_bind_int64(st, 1, num), ROWAN_OK);
        assert_int_equal(rowan_bind_blob(st, 2, n ? buf : "", (int)n), ROWAN_OK);
      }
    }
    run_all(db, kept[t], a, OUT_CAP);
    run_all(db, fresh, b, OUT_CAP);
    rowan_finalize(fresh);
    if (strcmp(a, b) != 0)
      fail_msg("seed %llu round %d: %s with a key of %zu bytes, N %lld:\nkept: %s\nfresh: %s",
               (unsigned long long)seed, r, q[t], n, (long long)num, a, b);
  }
  for (int t = 0; t < 4; t++) rowan_finalize(kept[t]);
  free(a);
  free(b);
  free(buf);
  assert_int_equal(rowan_close(db), ROWAN_OK);
  kv_env_free(env);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(kept_statement_equals_fresh_prepare),
      cmocka_unit_test(long_keys_rebound),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
