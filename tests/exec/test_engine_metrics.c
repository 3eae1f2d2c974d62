/*
** tests/exec/test_engine_metrics.c: metrics that prove the plan is real, not only the
** answer: a skip scan examines only the rows inside its ranges; a pushed-down filter rejects
** rows before they are assembled (rows_assembled < rows_examined); a range scan's estimated
** rows are within 2x of the rows it examines; ORDER BY on the key (and its reverse) plans no
** sort, gives the right order and lets LIMIT stop the scan; top-n; streaming versus hash
** aggregation; family pruning; the sort memory limit; and each plan kind gives the same rows
** as the same query with its key predicates hidden from the planner (a forced full scan).
*/
#include "test_engine_util.h"
#include "testutil.h"


enum { NA = 40, NB = 250 }; /* 10,000 rows */

static int vals[NA][NB];

static tdb *big(uint64_t *rs) {
  tdb *t = tdb_open();
  q(t, "CREATE TABLE T (A INTEGER NOT NULL, B INTEGER NOT NULL, V INTEGER, W.NOTE VARCHAR "
       "CONSTRAINT PK PRIMARY KEY (A, B)) BLOCKSIZE=2048");
  char *sql = malloc(1 << 16);
  for (int a = 0; a < NA; a++) {
    size_t n = (size_t)sprintf(sql, "UPSERT INTO T VALUES ");
    for (int b = 0; b < NB; b++) {
      vals[a][b] = (int)tu_below(rs, 1000);
      n += (size_t)sprintf(sql + n, "%s(%d, %d, %d, 'n%d')", b ? ", " : "", a, b, vals[a][b],
                           b % 7);
    }
    q(t, sql);
  }
  free(sql);
  assert_int_equal(kv_flush(t->db, NULL), KV_OK);
  return t;
}

static uint64_t est_rows(tdb *t, const char *select) {
  char sql[512];
  snprintf(sql, sizeof sql, "EXPLAIN %s", select);
  const char *e = strstr(q(t, sql), "ESTIMATE: ");
  assert_non_null(e);
  char digits[32];
  size_t n = 0;
  for (e += 10; *e && *e != ' ' && n + 1 < sizeof digits; e++)
    if (*e != ',') digits[n++] = *e;
  digits[n] = 0;
  return strtoull(digits, NULL, 10);
}

static void skip_and_range_scans(void **state) {
  (void)state;
  uint64_t seed = tu_seed("skip_and_range_scans"), rs = seed;
  tdb *t = big(&rs);
  q(t, "SELECT A, B FROM T WHERE A IN (1, 5, 9) AND B BETWEEN 10 AND 14");
  assert_string_equal(t->kind, "SKIP SCAN");
  assert_int_equal(t->m.rows_examined, 15);
  assert_int_equal(t->m.rows_returned, 15);
  q(t, "SELECT COUNT(*) FROM T WHERE A IN (3, 30)");
  assert_string_equal(t->out, "500\n");
  assert_int_equal(t->m.rows_examined, 2 * NB);
  q(t, "SELECT V FROM T WHERE A = 7 AND B = 100");
  assert_string_equal(t->kind, "POINT LOOKUP");
  assert_int_equal(t->m.rows_examined, 1);
  char want[32];
  snprintf(want, sizeof want, "%d\n", vals[7][100]);
  assert_string_equal(t->out, want);
  /* range scans: examined rows are the rows in range; the estimate is within 2x */
  const char *ranges[] = {"SELECT B FROM T WHERE A BETWEEN 10 AND 19",
                          "SELECT B FROM T WHERE A >= 35", "SELECT B FROM T WHERE A < 4",
                          "SELECT B FROM T WHERE A = 12 AND B >= 50"};
  const uint64_t rows[] = {10 * NB, 5 * NB, 4 * NB, NB - 50};
  for (int i = 0; i < 4; i++) {
    q(t, ranges[i]);
    assert_string_equal(t->kind, "RANGE SCAN");
    assert_int_equal(t->m.rows_examined, rows[i]);
    uint64_t e = est_rows(t, ranges[i]);
    if (e * 2 < rows[i] || e > rows[i] * 2)
      fail_msg("%s: estimate %llu, examined %llu", ranges[i], (unsigned long long)e,
               (unsigned long long)rows[i]);
  }
  q(t, "SELECT B FROM T WHERE A = 5 AND A = 6");
  assert_string_equal(t->kind, "NOTHING");
  assert_int_equal(t->m.rows_examined, 0);
  assert_string_equal(t->out, "");
  tdb_close(t);
}

static void pushed_filter(void **state) {
  (void)state;
  uint64_t seed = tu_seed("pushed_filter"), rs = seed;
  tdb *t = big(&rs);
  q(t, "SELECT COUNT(*) FROM T WHERE V > 900");
  long long want = 0;
  for (int a = 0; a < NA; a++)
    for (int b = 0; b < NB; b++) want += vals[a][b] > 900;
  char w[32];
  snprintf(w, sizeof w, "%lld\n", want);
  assert_string_equal(t->out, w);
  assert_int_equal(t->m.rows_examined, NA * NB);
  assert_int_equal(t->m.rows_assembled, (uint64_t)want);
  assert_true(t->m.rows_assembled < t->m.rows_examined);
  assert_true(strstr(explain(t, "EXPLAIN SELECT COUNT(*) FROM T WHERE V > 900"),
                     "SERVER FILTER BY") != NULL);
  /* a term the filter cannot take (an expression) is evaluated after decoding */
  q(t, "SELECT COUNT(*) FROM T WHERE V + 0 > 900");
  assert_string_equal(t->out, w);
  assert_int_equal(t->m.rows_assembled, NA * NB);
  /* the families read: only V's family; the VARCHAR family is never touched */
  q(t, "SELECT V FROM T WHERE V > 990");
  assert_int_equal(t->m.n_families, 1);
  assert_string_equal(t->m.families[0].family, "T.0");
  /* every row has V (the row cover: docs/FORMAT_SQL.md): V's family alone sees them all */
  q(t, "SELECT V FROM T WHERE A = 1");
  assert_int_equal(t->m.n_families, 1);
  assert_true(strstr(explain(t, "EXPLAIN SELECT V FROM T WHERE A = 1"),
                     "[_k not read: every row has a cell in 0]") != NULL);
  /* a row without V: from then on _k too, so that row shows */
  q(t, "UPSERT INTO T (A, B) VALUES (1, -1)");
  q(t, "SELECT V FROM T WHERE A = 1 AND B = -1");
  assert_string_equal(t->out, "NULL\n");
  assert_int_equal(t->m.n_families, 2);
  tdb_close(t);
}

static void order_and_limits(void **state) {
  (void)state;
  uint64_t seed = tu_seed("order_and_limits"), rs = seed;
  tdb *t = big(&rs);
  /* key order and its reverse: no sort; LIMIT stops the scan */
  const char *e = explain(t, "EXPLAIN SELECT A, B FROM T ORDER BY A DESC, B DESC LIMIT 3");
  assert_null(strstr(e, "SORTED"));
  assert_non_null(strstr(e, "(reverse)"));
  char want[128];
  snprintf(want, sizeof want, "%d|%d\n%d|%d\n%d|%d\n", NA - 1, NB - 1, NA - 1, NB - 2, NA - 1,
           NB - 3);
  assert_string_equal(q(t, "SELECT A, B FROM T ORDER BY A DESC, B DESC LIMIT 3"), want);
  assert_true(t->m.rows_examined <= 3);
  assert_string_equal(q(t, "SELECT B FROM T WHERE A = 3 ORDER BY B LIMIT 2 OFFSET 1"), "1\n2\n");
  assert_true(t->m.rows_examined <= 3);
  assert_string_equal(q(t, "SELECT B FROM T WHERE A = 3 ORDER BY B DESC LIMIT 2"),
                      "249\n248\n");
  /* top-n on a non-key column, checked against a brute-force answer */
  e = explain(t, "EXPLAIN SELECT A, B, V FROM T ORDER BY V DESC, A, B LIMIT 5");
  assert_non_null(strstr(e, "CLIENT TOP 5 ROWS SORTED BY [V DESC, A, B]"));
  q(t, "SELECT A, B, V FROM T ORDER BY V DESC, A, B LIMIT 5");
  char brute[256] = "";
  int last_v = 1 << 30, last_a = -1, last_b = -1;
  for (int k = 0; k < 5; k++) {
    int ba = -1, bb = -1, bv = -1;
    for (int a = 0; a < NA; a++)
      for (int b = 0; b < NB; b++) {
        int v = vals[a][b];
        bool after = v < last_v || (v == last_v && (a > last_a || (a == last_a && b > last_b)));
        if (!after) continue;
        if (v > bv) ba = a, bb = b, bv = v;
      }
    size_t l = strlen(brute);
    snprintf(brute + l, sizeof brute - l, "%d|%d|%d\n", ba, bb, bv);
    last_v = bv, last_a = ba, last_b = bb;
  }
  assert_string_equal(t->out, brute);
  /* a full sort gives the same order as top-n's first rows */
  q(t, "SELECT A, B, V FROM T ORDER BY V DESC, A, B");
  assert_int_equal(strncmp(t->out, brute, strlen(brute)), 0);
  /* the sort memory limit gives a clear error */
  exec_set_sort_memory(t->s, 64 * 1024);
  const char *m = qerr(t, "SELECT A, B, V, NOTE FROM T ORDER BY V", EXEC_TOOBIG);
  assert_non_null(strstr(m, "ORDER BY needs more than"));
  q(t, "SELECT A, B, V FROM T ORDER BY V LIMIT 10"); /* top-n stays within the limit */
  exec_set_sort_memory(t->s, 0);
  tdb_close(t);
}

static void aggregation_kinds(void **state) {
  (void)state;
  uint64_t seed = tu_seed("aggregation_kinds"), rs = seed;
  tdb *t = big(&rs);
  const char *e = explain(t, "EXPLAIN SELECT A, COUNT(*), SUM(V) FROM T GROUP BY A");
  assert_non_null(strstr(e, "SERVER AGGREGATE INTO ORDERED DISTINCT ROWS BY [A]"));
  e = explain(t, "EXPLAIN SELECT A + 0, COUNT(*), SUM(V) FROM T GROUP BY A + 0");
  assert_non_null(strstr(e, "CLIENT HASH AGGREGATE INTO DISTINCT ROWS BY [A + 0]"));
  char *stream = strdup(q(t, "SELECT A, COUNT(*), SUM(V), MIN(V), MAX(B) FROM T GROUP BY A"));
  q(t, "SELECT A + 0 AS A, COUNT(*), SUM(V), MIN(V), MAX(B) FROM T GROUP BY A + 0 ORDER BY A");
  assert_string_equal(t->out, stream);
  char line[128];
  long long s = 0;
  int mn = 1 << 30;
  for (int b = 0; b < NB; b++) s += vals[0][b], mn = vals[0][b] < mn ? vals[0][b] : mn;
  snprintf(line, sizeof line, "0|%d|%lld|%d|%d\n", NB, s, mn, NB - 1);
  assert_int_equal(strncmp(stream, line, strlen(line)), 0);
  free(stream);
  /* ORDER BY the streamed group key (or its reverse) needs no sort */
  e = explain(t, "EXPLAIN SELECT A, COUNT(*) FROM T GROUP BY A ORDER BY A DESC LIMIT 2");
  assert_null(strstr(e, "SORTED"));
  assert_non_null(strstr(e, "(reverse)"));
  snprintf(line, sizeof line, "%d|%d\n%d|%d\n", NA - 1, NB, NA - 2, NB);
  assert_string_equal(q(t, "SELECT A, COUNT(*) FROM T GROUP BY A ORDER BY A DESC LIMIT 2"), line);
  /* groups of a streaming aggregate leave as they finish: LIMIT stops the scan */
  snprintf(line, sizeof line, "0|%d\n1|%d\n", NB, NB);
  assert_string_equal(q(t, "SELECT A, COUNT(*) FROM T GROUP BY A LIMIT 2"), line);
  assert_true(t->m.rows_examined <= 2 * NB + 1);
  e = explain(t, "EXPLAIN SELECT A, COUNT(*) FROM T GROUP BY A ORDER BY COUNT(*), A");
  assert_non_null(strstr(e, "CLIENT SORTED BY"));
  /* a streaming aggregate over a range, and HAVING */
  q(t, "SELECT A, COUNT(*) FROM T WHERE A BETWEEN 5 AND 7 AND B < 10 GROUP BY A HAVING A <> 6");
  assert_string_equal(t->out, "5|10\n7|10\n");
  tdb_close(t);
}

/* Each plan kind returns the same rows as the query with its key predicates hidden. */
static void hidden_keys(void **state) {
  (void)state;
  uint64_t seed = tu_seed("hidden_keys"), rs = seed;
  tdb *t = big(&rs);
  const char *pairs[][2] = {
      {"A = 3 AND B = 17", "A + 0 = 3 AND B + 0 = 17"},
      {"A IN (2, 4) AND B IN (1, 2, 3)", "A + 0 IN (2, 4) AND B + 0 IN (1, 2, 3)"},
      {"A BETWEEN 5 AND 6 AND V > 500", "A + 0 BETWEEN 5 AND 6 AND V > 500"},
      {"A IN (1, 8) AND B > 240", "A + 0 IN (1, 8) AND B + 0 > 240"},
      {"A > 38 OR A < 1", "A + 0 > 38 OR A + 0 < 1"},
      {"A = 1 AND A = 2", "A + 0 = 1 AND A + 0 = 2"},
  };
  for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++) {
    char sql[256];
    snprintf(sql, sizeof sql, "SELECT A, B, V FROM T WHERE %s", pairs[i][0]);
    char *keyed = strdup(q(t, sql));
    char kind[32];
    snprintf(kind, sizeof kind, "%s", t->kind);
    snprintf(sql, sizeof sql, "SELECT A, B, V FROM T WHERE %s", pairs[i][1]);
    q(t, sql);
    assert_string_equal(t->kind, "FULL SCAN");
    if (strcmp(keyed, t->out) != 0) fail_msg("%s (%s) differs from its full scan", pairs[i][0], kind);
    free(keyed);
  }
  tdb_close(t);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(skip_and_range_scans), cmocka_unit_test(pushed_filter),
      cmocka_unit_test(order_and_limits),     cmocka_unit_test(aggregation_kinds),
      cmocka_unit_test(hidden_keys),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
