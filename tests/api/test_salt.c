/*
** tests/api/test_salt.c: salted tables (SALT_BUCKETS, catalog/salt.h; exec/salt_merge.c) against
** an unsalted copy. For SALT_BUCKETS 1, 3, 16 and 256, a salted table S and a plain table P of
** the same columns (key (A VARCHAR, B INTEGER DESC), a secondary index on D in each, S's salted
** itself with CREATE INDEX ... SALT_BUCKETS but for 1 bucket) get the same random UPSERTs and
** DELETEs (by key, by key range, by a non-key column, through the index), with flushes in
** between, and after each batch the same random queries must give the same rows in the same
** order: no ORDER BY (Rowan promises key order for a salted table too, docs/SQL.md), point
** lookups, IN lists, ranges, skip scans, the reverse of the key order, LIMIT and OFFSET,
** aggregates and GROUP BY, queries through the index (hinted), a join with a third table. The
** plain table is itself checked against SQLite by tests/exec/test_differential.c; this test
** checks that salting changes nothing a query can see. It also checks what EXPLAIN says of the
** salted scans (CLIENT n-CHUNK, CLIENT MERGE SORT; a point lookup in one bucket), that the rows
** really are spread over the buckets (.raw's view: the first byte of the stored keys), that the
** catalog keeps SALT_BUCKETS across a reopen, that rowan_recover copies a salted table and its
** salted index, and the bad-input errors. CTest runs it again
** through the row-atomic backend (rowatomic_api_test_salt).
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "api/api_test.h"
#include "kv/env/env_mem.h"
#include "rowan.h"
#include "testutil.h"
#include "tu_api.h"

/* A small deterministic generator (xorshift64*), so a failure repeats. */
static uint64_t rng_state;
static uint32_t rnd(uint32_t n) {
  rng_state ^= rng_state >> 12;
  rng_state ^= rng_state << 25;
  rng_state ^= rng_state >> 27;
  return (uint32_t)((rng_state * 2685821657736338717ull) >> 33) % n;
}

typedef struct sbuf {
  char *p;
  size_t len, cap;
} sbuf;

static void sb_add(sbuf *b, const char *s) {
  size_t n = strlen(s);
  if (b->len + n + 1 > b->cap) {
    b->cap = (b->len + n + 1) * 2;
    b->p = realloc(b->p, b->cap);
    assert_non_null(b->p);
  }
  memcpy(b->p + b->len, s, n + 1);
  b->len += n;
}

/* Every row of sql as text ("v|v|...\n" per row, NULL as "NULL"), or the error. */
static char *answer(rowan_db *db, const char *sql) {
  sbuf b = {0};
  sb_add(&b, "");
  rowan_stmt *st;
  if (rowan_prepare(db, sql, -1, &st, NULL) != ROWAN_OK) {
    sb_add(&b, "ERROR ");
    sb_add(&b, rowan_errmsg(db));
    return b.p;
  }
  int rc;
  while ((rc = rowan_step(st)) == ROWAN_ROW) {
    for (int i = 0; i < rowan_column_count(st); i++) {
      const char *t = rowan_column_type(st, i) == ROWAN_NULL
                          ? "NULL"
                          : (const char *)rowan_column_text(st, i);
      sb_add(&b, i ? "|" : "");
      sb_add(&b, t ? t : "NULL");
    }
    sb_add(&b, "\n");
  }
  if (rc != ROWAN_DONE) {
    sb_add(&b, "ERROR ");
    sb_add(&b, rowan_errmsg(db));
  }
  rowan_finalize(st);
  return b.p;
}

/* sql with every "@" replaced by table name t. */
static void fill(char *out, size_t cap, const char *sql, const char *t) {
  size_t o = 0;
  for (const char *p = sql; *p && o + 16 < cap; p++) {
    if (*p == '@') o += (size_t)snprintf(out + o, cap - o, "%s", t);
    else out[o++] = *p;
  }
  out[o] = 0;
}

/* Run sql (a template over "@") on S and on P: the same answer, in the same order. */
static void same(rowan_db *db, const char *sql, int *queries) {
  char a[2048], b[2048];
  fill(a, sizeof a, sql, "S");
  fill(b, sizeof b, sql, "P");
  char *x = answer(db, a), *y = answer(db, b);
  if (strcmp(x, y) != 0) fail_msg("%s\n-- salted:\n%s\n-- plain (%s):\n%s", a, x, b, y);
  assert_null(strstr(x, "ERROR"));
  free(x);
  free(y);
  (*queries)++;
}

/* Run a write template on both tables. */
static void both(rowan_db *db, const char *sql) {
  char a[2048];
  fill(a, sizeof a, sql, "S");
  exec_ok(db, a);
  fill(a, sizeof a, sql, "P");
  exec_ok(db, a);
}

static const char *const groups[] = {"a", "b", "bb", "c", "d", "e\xc3\xa9", "zz"};
#define N_GROUPS 7

/* A random query over "@" (and Q, a plain table joined in). */
static void random_query(char *q, size_t cap) {
  const char *g = groups[rnd(N_GROUPS)], *h = groups[rnd(N_GROUPS)];
  int n = (int)rnd(40) - 5, m = (int)rnd(40) - 5, lim = 1 + (int)rnd(8);
  switch (rnd(19)) {
    case 0: snprintf(q, cap, "SELECT * FROM @"); break;
    case 1: snprintf(q, cap, "SELECT A, B, C FROM @ WHERE A = '%s' AND B = %d", g, n); break;
    case 2:
      snprintf(q, cap, "SELECT * FROM @ WHERE A IN ('%s', '%s') AND B IN (%d, %d, 7)", g, h, n, m);
      break;
    case 3: snprintf(q, cap, "SELECT * FROM @ WHERE A = '%s' AND B > %d", g, n); break;
    case 4: snprintf(q, cap, "SELECT A, B FROM @ WHERE A >= '%s' AND A < '%s'", g, h); break;
    case 5: snprintf(q, cap, "SELECT * FROM @ WHERE A IN ('%s', '%s') AND B <= %d", g, h, n); break;
    case 6: snprintf(q, cap, "SELECT * FROM @ ORDER BY A DESC, B ASC"); break;
    case 7:
      snprintf(q, cap, "SELECT A, B FROM @ WHERE A > '%s' ORDER BY A DESC, B LIMIT %d", g, lim);
      break;
    case 8: snprintf(q, cap, "SELECT * FROM @ LIMIT %d OFFSET %d", lim, (int)rnd(4)); break;
    case 9: snprintf(q, cap, "SELECT * FROM @ WHERE A >= '%s' LIMIT %d", g, lim); break;
    case 10: snprintf(q, cap, "SELECT COUNT(*), SUM(B), MIN(C), MAX(D) FROM @"); break;
    case 11: snprintf(q, cap, "SELECT A, COUNT(*), MAX(B), SUM(C) FROM @ GROUP BY A"); break;
    case 12: snprintf(q, cap, "SELECT * FROM @ WHERE C > %d.5 AND B < %d", n, m); break;
    case 13:
      snprintf(q, cap, "SELECT /*+ INDEX(@ IX_@) */ A, B, D FROM @ WHERE D = 'd%d'", (int)rnd(6));
      break;
    case 14:
      snprintf(q, cap, "SELECT /*+ INDEX(@ IX_@) */ * FROM @ WHERE D >= 'd%d' ORDER BY D, A, B",
               (int)rnd(6));
      break;
    case 15:
      snprintf(q, cap, "SELECT @.A, @.B, Q.NOTE FROM @ JOIN Q ON @.A = Q.A WHERE @.B > %d "
               "ORDER BY @.A, @.B DESC", n);
      break;
    case 16: snprintf(q, cap, "SELECT DISTINCT A FROM @ WHERE B BETWEEN %d AND %d", n, m); break;
    case 17: /* the salted table on the inner side: its rows looked up by the outer's A */
      snprintf(q, cap, "SELECT Q.A, Q.NOTE, @.B, @.D FROM Q JOIN @ ON @.A = Q.A AND @.B < %d "
               "ORDER BY Q.A, @.B DESC", m);
      break;
    default:
      snprintf(q, cap, "SELECT A, B FROM @ WHERE A = '%s' ORDER BY B LIMIT %d", g, lim);
      break;
  }
}

/* A random write over "@". */
static void random_write(char *q, size_t cap) {
  const char *g = groups[rnd(N_GROUPS)], *h = groups[rnd(N_GROUPS)];
  int n = (int)rnd(40) - 5;
  switch (rnd(10)) {
    case 0: snprintf(q, cap, "DELETE FROM @ WHERE A = '%s' AND B = %d", g, n); break;
    case 1: snprintf(q, cap, "DELETE FROM @ WHERE A = '%s' AND B > %d", g, n + 20); break;
    case 2: snprintf(q, cap, "DELETE FROM @ WHERE D = 'd%d' AND B < %d", (int)rnd(6), n); break;
    case 3: snprintf(q, cap, "UPSERT INTO @ (A, B, D) VALUES ('%s', %d, NULL)", g, n); break;
    default: {
      size_t o = (size_t)snprintf(q, cap, "UPSERT INTO @ VALUES ");
      int rows = 1 + (int)rnd(6);
      for (int r = 0; r < rows && o < cap; r++)
        o += (size_t)snprintf(q + o, cap - o, "%s('%s', %d, %d.25, 'd%d')", r ? ", " : "",
                              r % 2 ? g : h, (int)rnd(40) - 5, (int)rnd(100) - 50, (int)rnd(6));
      break;
    }
  }
}

static void differential(int buckets) {
  kv_env *env = kv_env_mem_new(1700000000000LL);
  rowan_db *db = tu_open_mem(env);
  rng_state = 0x9E3779B97F4A7C15ull ^ (uint64_t)buckets;
  char sql[2048];
  snprintf(sql, sizeof sql, "CREATE TABLE S (A VARCHAR NOT NULL, B INTEGER NOT NULL, C DOUBLE, "
           "D VARCHAR, CONSTRAINT PK PRIMARY KEY (A, B DESC)) SALT_BUCKETS = %d", buckets);
  exec_ok(db, sql);
  exec_ok(db, "CREATE TABLE P (A VARCHAR NOT NULL, B INTEGER NOT NULL, C DOUBLE, D VARCHAR, "
              "CONSTRAINT PK PRIMARY KEY (A, B DESC))");
  /* the salted table's index is salted too (CREATE INDEX ... SALT_BUCKETS), except with 1
     bucket: both kinds of index of a salted table are read against the plain one's */
  if (buckets > 1) {
    snprintf(sql, sizeof sql, "CREATE INDEX IX_S ON S (D) SALT_BUCKETS = %d", buckets % 5 + 2);
    exec_ok(db, sql);
  } else {
    exec_ok(db, "CREATE INDEX IX_S ON S (D)");
  }
  exec_ok(db, "CREATE INDEX IX_P ON P (D)");
  exec_ok(db, "CREATE TABLE Q (A VARCHAR PRIMARY KEY, NOTE VARCHAR)");
  exec_ok(db, "UPSERT INTO Q VALUES ('a', 'first'), ('c', 'third'), ('zz', 'last')");
  int queries = 0;
  for (int round = 0; round < 12; round++) {
    for (int w = 0; w < 8; w++) {
      random_write(sql, sizeof sql);
      both(db, sql);
    }
    if (round % 4 == 3) assert_int_equal(api_test_flush(db), ROWAN_OK);
    for (int k = 0; k < 30; k++) {
      random_query(sql, sizeof sql);
      same(db, sql, &queries);
    }
  }
  /* the answers of the rows as they are, again after a reopen (the catalog keeps the
     buckets) and in a transaction that reads its own writes */
  same(db, "SELECT * FROM @", &queries);
  assert_int_equal(rowan_close(db), ROWAN_OK);
  db = tu_open_mem(env);
  same(db, "SELECT * FROM @", &queries);
  exec_ok(db, "BEGIN");
  both(db, "UPSERT INTO @ VALUES ('b', 100, 1.5, 'd9'), ('zz', -100, 2.5, 'd9')");
  both(db, "DELETE FROM @ WHERE A = 'a' AND B < 10");
  same(db, "SELECT * FROM @", &queries);
  same(db, "SELECT /*+ INDEX(@ IX_@) */ A, B FROM @ WHERE D = 'd9'", &queries);
  exec_ok(db, "COMMIT");
  same(db, "SELECT * FROM @ ORDER BY A DESC, B", &queries);
  char *chk = answer(db, "CHECK INDEX IX_S ON S");
  assert_non_null(strstr(chk, "MISSING|0"));
  assert_non_null(strstr(chk, "EXTRA|0"));
  assert_non_null(strstr(chk, "MISMATCHED|0"));
  free(chk);
  print_message("SALT_BUCKETS %d: %d queries the same on the salted and the plain table\n",
                buckets, queries);
  assert_int_equal(rowan_close(db), ROWAN_OK);
  kv_env_free(env);
}

static void salted_1(void **state) { (void)state; differential(1); }
static void salted_3(void **state) { (void)state; differential(3); }
static void salted_16(void **state) { (void)state; differential(16); }
static void salted_256(void **state) { (void)state; differential(256); }

/* The EXPLAIN lines of sql joined, for strstr. */
static char *explain(rowan_db *db, const char *sql) {
  char x[1024];
  snprintf(x, sizeof x, "EXPLAIN %s", sql);
  return answer(db, x);
}

static void explain_and_spread(void **state) {
  (void)state;
  kv_env *env = kv_env_mem_new(1700000000000LL);
  rowan_db *db = tu_open_mem(env);
  exec_ok(db, "CREATE TABLE T (K INTEGER PRIMARY KEY, V VARCHAR) SALT_BUCKETS = 4");
  /* increasing keys: spread over every bucket, not piled at the end */
  for (int k = 0; k < 400; k += 8) {
    char q[512];
    snprintf(q, sizeof q, "UPSERT INTO T VALUES (%d, 'v'), (%d, 'v'), (%d, 'v'), (%d, 'v'), "
             "(%d, 'v'), (%d, 'v'), (%d, 'v'), (%d, 'v')", k, k + 1, k + 2, k + 3, k + 4, k + 5,
             k + 6, k + 7);
    exec_ok(db, q);
  }
  /* the stored keys' first byte: each bucket holds about a quarter (FNV-1a spreads them) */
  kv_db *kv = api_test_kv(db);
  uint32_t fid = 0;
  for (int i = 0; i < kv_table_count(kv) && !fid; i++) {
    const char *name = kv_table_name(kv, i);
    if (name[0] == '$' && strstr(name, ".T") && strlen(strstr(name, ".T")) == 2)
      assert_int_equal(kv_family_id(kv, name, "_k", &fid), KV_OK);
  }
  assert_true(fid != 0);
  kv_scan_options so;
  memset(&so, 0, sizeof so);
  so.family_ids = &fid;
  so.n_families = 1;
  kv_scan *sc;
  assert_int_equal(kv_scan_open(kv, &so, &sc), KV_OK);
  int per[4] = {0}, rows = 0;
  kv_row row;
  while (kv_scan_next(sc, &row) == KV_OK) {
    assert_true(row.key_len == 5 && row.key[0] < 4); /* salt byte + INTEGER */
    per[row.key[0]]++;
    rows++;
  }
  kv_scan_close(sc);
  assert_int_equal(rows, 400);
  for (int b = 0; b < 4; b++) assert_true(per[b] > 50 && per[b] < 150);
  char *x = explain(db, "SELECT * FROM T");
  assert_non_null(strstr(x, "CLIENT 4-CHUNK PARALLEL 4-WAY FULL SCAN OVER T"));
  assert_non_null(strstr(x, "CLIENT MERGE SORT"));
  free(x);
  x = explain(db, "SELECT * FROM T WHERE K > 10 AND K < 20");
  assert_non_null(strstr(x, "CLIENT 4-CHUNK PARALLEL 4-WAY RANGE SCAN OVER T [0, 10) .. [3, 20)"));
  free(x);
  /* a salted index: its buckets merged in index key order, the lookups back into T */
  exec_ok(db, "CREATE INDEX IV ON T (V, K) SALT_BUCKETS = 3");
  x = explain(db, "SELECT /*+ INDEX(T IV) */ K FROM T WHERE V = 'v' AND K < 3");
  assert_non_null(
      strstr(x, "CLIENT 3-CHUNK PARALLEL 3-WAY RANGE SCAN OVER T.IV [0, 'v', NULL) .. [2, 'v', 3)"));
  assert_non_null(strstr(x, "CLIENT MERGE SORT (the 3 salt buckets merged in key order)"));
  free(x);
  x = answer(db, "SELECT /*+ INDEX(T IV) */ K FROM T WHERE V = 'v' AND K < 3");
  assert_string_equal(x, "0\n1\n2\n");
  free(x);
  x = answer(db, "CHECK INDEX IV ON T");
  assert_non_null(strstr(x, "INDEX ROWS|400"));
  assert_non_null(strstr(x, "MISSING|0"));
  free(x);
  x = explain(db, "SELECT * FROM T WHERE K = 7");
  assert_non_null(strstr(x, "CLIENT 1-CHUNK PARALLEL 1-WAY POINT LOOKUP ON 1 KEY OVER T [7]"));
  assert_null(strstr(x, "MERGE SORT"));
  free(x);
  /* EXPLAIN ANALYZE: a point lookup reads one row of one bucket; the full scan every row */
  x = answer(db, "EXPLAIN ANALYZE SELECT * FROM T WHERE K = 7");
  assert_non_null(strstr(x, "examined=1 "));
  free(x);
  x = answer(db, "EXPLAIN ANALYZE SELECT COUNT(*) FROM T");
  assert_non_null(strstr(x, "examined=400 "));
  free(x);
  /* key order without ORDER BY, both ways, across the buckets */
  rowan_stmt *st;
  assert_int_equal(rowan_prepare(db, "SELECT K FROM T", -1, &st, NULL), ROWAN_OK);
  int want = 0, rc;
  while ((rc = rowan_step(st)) == ROWAN_ROW) assert_int_equal(rowan_column_int64(st, 0), want++);
  assert_int_equal(rc, ROWAN_DONE);
  assert_int_equal(want, 400);
  rowan_finalize(st);
  assert_int_equal(rowan_prepare(db, "SELECT K FROM T ORDER BY K DESC LIMIT 5", -1, &st, NULL),
                   ROWAN_OK);
  want = 399;
  while ((rc = rowan_step(st)) == ROWAN_ROW) assert_int_equal(rowan_column_int64(st, 0), want--);
  assert_int_equal(want, 394);
  rowan_finalize(st);
  assert_int_equal(rowan_close(db), ROWAN_OK);
  kv_env_free(env);
}

/* Each bad input and the words its error must carry. */
static void bad(rowan_db *db, const char *sql, const char *words) {
  int rc = rowan_exec(db, sql, NULL, NULL);
  if (rc == ROWAN_OK) fail_msg("%s: succeeded", sql);
  if (!strstr(rowan_errmsg(db), words))
    fail_msg("%s: \"%s\" lacks \"%s\"", sql, rowan_errmsg(db), words);
  assert_true(rowan_error_offset(db) >= 0);
}

static void bad_input(void **state) {
  (void)state;
  kv_env *env = kv_env_mem_new(1700000000000LL);
  rowan_db *db = tu_open_mem(env);
  const char *t = "CREATE TABLE X (K INTEGER PRIMARY KEY)";
  char q[256];
  const char *salts[] = {"0", "257", "-1", "'x'", "2.5"};
  for (int i = 0; i < 5; i++) {
    snprintf(q, sizeof q, "%s SALT_BUCKETS = %s", t, salts[i]);
    bad(db, q, "option SALT_BUCKETS must be an integer in 1..256");
  }
  snprintf(q, sizeof q, "%s SALT_BUCKETS = 2, SALT_BUCKETS = 3", t);
  bad(db, q, "option SALT_BUCKETS given twice");
  snprintf(q, sizeof q, "%s SALT_BUCKETS = 2 SPLIT ON (5)", t);
  bad(db, q, "SPLIT ON cannot be used with SALT_BUCKETS");
  snprintf(q, sizeof q, "%s SPLIT ON ('a')", t);
  bad(db, q, "split point 1 ('a') is not a value of column K, type INTEGER");
  snprintf(q, sizeof q, "%s SPLIT ON (5, 3)", t);
  bad(db, q, "split point 2 is out of order");
  snprintf(q, sizeof q, "%s SPLIT ON (5, 7, 7)", t);
  bad(db, q, "split point 3 repeats split point 2");
  snprintf(q, sizeof q, "%s SPLIT ON (1, NULL)", t);
  bad(db, q, "split point 2 is NULL");
  snprintf(q, sizeof q, "%s SPLIT ON ()", t);
  bad(db, q, "the list of split points is empty");
  snprintf(q, sizeof q, "%s SPLIT ON (3000000000)", t);
  bad(db, q, "split point 1 for column K");
  bad(db, "CREATE TABLE X (K VARCHAR PRIMARY KEY) SPLIT ON (12)",
      "split point 1 (12) is not a value of column K, type VARCHAR");
  exec_ok(db, "CREATE TABLE Y (K INTEGER PRIMARY KEY, V INTEGER) SALT_BUCKETS = 3");
  bad(db, "ALTER TABLE Y SET SALT_BUCKETS = 4", "cannot change");
  bad(db, "CREATE INDEX I ON Y (V) SALT_BUCKETS = 0",
      "option SALT_BUCKETS must be an integer in 1..256");
  bad(db, "CREATE INDEX I ON Y (V) SALT_BUCKETS = 2, SALT_BUCKETS = 2", "given twice");
  bad(db, "CREATE INDEX I ON Y (V) VERSIONS = 2", "unknown index option VERSIONS");
  /* nothing was created by the failed statements */
  assert_int_equal(tu_one_int(db, "SELECT COUNT(*) FROM Y"), 0);
  assert_int_equal(rowan_exec(db, "SELECT * FROM X", NULL, NULL) == ROWAN_OK, 0);
  assert_int_equal(rowan_close(db), ROWAN_OK);
  kv_env_free(env);
}

/* SPLIT ON: the table behaves as any other; the points are kept across a reopen (a second
** CREATE with other points of the same name is refused as existing). */
static void split_on(void **state) {
  (void)state;
  kv_env *env = kv_env_mem_new(1700000000000LL);
  rowan_db *db = tu_open_mem(env);
  exec_ok(db, "CREATE TABLE R (G VARCHAR, N INTEGER, V INTEGER, CONSTRAINT PK PRIMARY KEY "
              "(G, N DESC)) SPLIT ON ('b', ('c', 10), ('c', 2), 'x')");
  exec_ok(db, "UPSERT INTO R VALUES ('a', 1, 1), ('c', 5, 2), ('c', 20, 3), ('y', 0, 4)");
  assert_int_equal(rowan_close(db), ROWAN_OK);
  db = tu_open_mem(env);
  char *x = answer(db, "SELECT G, N FROM R");
  assert_string_equal(x, "a|1\nc|20\nc|5\ny|0\n");
  free(x);
  bad(db, "CREATE TABLE R2 (G VARCHAR, N INTEGER, CONSTRAINT PK PRIMARY KEY (G, N DESC)) "
          "SPLIT ON (('c', 2), ('c', 10))", "split point 2 is out of order");
  assert_int_equal(rowan_close(db), ROWAN_OK);
  kv_env_free(env);
}

/* rowan_recover of a salted table with a salted index: every row copied, the table and the
** index salted as before, the index built again and checked. */
static void recover_salted(void **state) {
  (void)state;
  kv_env *env = kv_env_mem_new(1700000000000LL);
  rowan_db *db = tu_open_mem(env);
  exec_ok(db, "CREATE TABLE T (K INTEGER PRIMARY KEY, V VARCHAR) SALT_BUCKETS = 5");
  exec_ok(db, "CREATE INDEX IV ON T (V) SALT_BUCKETS = 2");
  exec_ok(db, "UPSERT INTO T VALUES (1, 'a'), (2, 'b'), (3, 'a'), (40, 'c'), (-7, 'b')");
  assert_int_equal(api_test_flush(db), ROWAN_OK);
  char *before = answer(db, "SELECT * FROM T");
  assert_int_equal(rowan_close(db), ROWAN_OK);
  rowan_recover_options ro = {.kv_env = env};
  rowan_recover_report *rep = NULL;
  assert_int_equal(rowan_recover("/db", "/new", &ro, &rep), ROWAN_OK);
  rowan_recover_report_free(rep);
  rowan_options o;
  rowan_options_init(&o);
  o.kv_env = env;
  assert_int_equal(rowan_open("/new", &o, &db), ROWAN_OK);
  char *after = answer(db, "SELECT * FROM T");
  assert_string_equal(before, after);
  assert_string_equal(before, "-7|b\n1|a\n2|b\n3|a\n40|c\n");
  char *x = explain(db, "SELECT * FROM T");
  assert_non_null(strstr(x, "CLIENT 5-CHUNK PARALLEL 5-WAY FULL SCAN OVER T"));
  free(x);
  x = explain(db, "SELECT /*+ INDEX(T IV) */ K FROM T WHERE V = 'a'");
  assert_non_null(strstr(x, "CLIENT 2-CHUNK PARALLEL 2-WAY RANGE SCAN OVER T.IV"));
  free(x);
  x = answer(db, "SELECT /*+ INDEX(T IV) */ K FROM T WHERE V = 'a'");
  assert_string_equal(x, "1\n3\n");
  free(x);
  free(before);
  free(after);
  assert_int_equal(rowan_close(db), ROWAN_OK);
  kv_env_free(env);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(salted_1),      cmocka_unit_test(salted_3),
      cmocka_unit_test(salted_16),     cmocka_unit_test(salted_256),
      cmocka_unit_test(explain_and_spread), cmocka_unit_test(bad_input),
      cmocka_unit_test(split_on),      cmocka_unit_test(recover_salted),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
