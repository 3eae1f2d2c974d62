/*
** tests/exec/test_func_phoenix.c: the functions added from Apache Phoenix's list (issue 20):
** REPLACE, LPAD, RPAD, INSTR (results, NULLs, errors; REPLACE and INSTR also against SQLite
** on seeded random strings), REGEXP_SUBSTR and REGEXP_REPLACE (POSIX extended syntax, group
** references, empty matches, bad patterns and replacements), REGEXP_SPLIT's ARRAY result
** (ARRAY_AGG still refused), WEEK, QUARTER and EXTRACT(field FROM x), the aggregates STDDEV_POP, STDDEV_SAMP,
** PERCENTILE_CONT and PERCENTILE_DISC (against a brute-force reference on seeded random
** groups, in hash and streamed grouping, merge of partial accumulators, bind errors) and the
** memory bound shared by percentile values and DISTINCT sets.
*/
#include <math.h>
#include <sqlite3.h>

#include "exec/agg.h"
#include "test_engine_util.h"
#include "testutil.h"

static void strings(void **state) {
  (void)state;
  tdb *t = tdb_open();
  assert_string_equal(q(t, "SELECT REPLACE('abcabc', 'b', 'XY'), REPLACE('abc', 'b'), "
                           "REPLACE('aaa', 'aa', 'b'), REPLACE('abc', '', 'x')"),
                      "aXYcaXYc|ac|ba|abc\n");
  assert_string_equal(q(t, "SELECT REPLACE(NULL, 'a', 'b'), REPLACE('a', NULL), "
                           "REPLACE('a', 'a', NULL)"), "NULL|NULL|NULL\n");
  assert_string_equal(q(t, "SELECT INSTR('héllo', 'l'), INSTR('abc', 'z'), INSTR('abc', ''), "
                           "INSTR('', ''), INSTR(NULL, 'a'), INSTR('a', NULL)"),
                      "3|0|1|1|NULL|NULL\n");
  assert_string_equal(q(t, "SELECT LPAD('hi', 5, 'xy'), RPAD('hi', 6, 'ab'), LPAD('hello', 3), "
                           "RPAD('hello', 3), LPAD('7', 3, '0'), RPAD('é', 3, 'üv'), "
                           "LPAD('ab', 4)"),
                      "xyxhi|hiabab|hel|hel|007|éüv|  ab\n");
  assert_string_equal(q(t, "SELECT LPAD('', 0), LPAD(NULL, 3), LPAD('a', NULL), "
                           "RPAD('a', 3, NULL), LPAD('abc', 0, '')"), "|NULL|NULL|NULL|\n");
  assert_non_null(strstr(qerr(t, "SELECT LPAD('a', -1)", EXEC_ERROR),
                         "LPAD: length (argument 2) must not be negative, got -1"));
  assert_non_null(strstr(qerr(t, "SELECT RPAD('a', 3, '')", EXEC_ERROR),
                         "RPAD: the fill string (argument 3) must not be empty"));
  assert_non_null(strstr(qerr(t, "SELECT LPAD('a', 100000000)", EXEC_CONSTRAINT),
                         "LPAD: length (argument 2) 100000000 is over the limit"));
  assert_non_null(strstr(qerr(t, "SELECT LPAD(1, 3)", EXEC_ERROR), "LPAD does not accept"));
  assert_non_null(strstr(qerr(t, "SELECT INSTR('a')", EXEC_ERROR), "INSTR takes 2 arguments"));
  /* a parameter takes its hinted type */
  cat_value p[2] = {cat_v_str(CAT_T_VARCHAR, (const uint8_t *)"x", 1), cat_v_int(CAT_T_INTEGER, 3)};
  assert_int_equal(tdb_runp(t, "SELECT LPAD(?, ?, '-')", 2, p), EXEC_DONE);
  assert_string_equal(t->out, "--x\n");
  tdb_close(t);
}

/* A random string of the letters a, b and é (multi-byte), up to max characters. */
static void rnd_str(uint64_t *rs, char *out, int max) {
  static const char *const pieces[] = {"a", "b", "\xc3\xa9", "ab"};
  int n = (int)tu_below(rs, (uint64_t)max + 1), o = 0;
  for (int i = 0; i < n; i++) {
    const char *s = pieces[tu_below(rs, 4)];
    size_t k = strlen(s);
    memcpy(out + o, s, k);
    o += (int)k;
  }
  out[o] = 0;
}

static void sqlite_text(sqlite3 *db, const char *sql, char *out, size_t cap) {
  sqlite3_stmt *st;
  assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
  assert_int_equal(sqlite3_step(st), SQLITE_ROW);
  out[0] = 0;
  for (int i = 0; i < sqlite3_column_count(st); i++) {
    const char *v = (const char *)sqlite3_column_text(st, i);
    size_t l = strlen(out);
    snprintf(out + l, cap - l, "%s%s", i ? "|" : "", v ? v : "NULL");
  }
  size_t l = strlen(out);
  snprintf(out + l, cap - l, "\n");
  sqlite3_finalize(st);
}

static void against_sqlite(void **state) {
  (void)state;
  uint64_t seed = tu_seed("func_phoenix_against_sqlite"), rs = seed;
  tdb *t = tdb_open();
  sqlite3 *db;
  assert_int_equal(sqlite3_open(":memory:", &db), SQLITE_OK);
  int n = (int)tu_scaled(400, 50);
  for (int i = 0; i < n; i++) {
    char a[64], b[16], c[16], sql[256], want[256];
    rnd_str(&rs, a, 8);
    rnd_str(&rs, b, 2);
    rnd_str(&rs, c, 2);
    snprintf(sql, sizeof sql, "SELECT REPLACE('%s', '%s', '%s'), INSTR('%s', '%s')", a, b, c, a,
             b);
    sqlite_text(db, sql, want, sizeof want);
    const char *got = q(t, sql);
    if (strcmp(got, want) != 0)
      fail_msg("seed %llu: %s\n  rowan:  %s  sqlite: %s", (unsigned long long)seed, sql, got,
               want);
  }
  sqlite3_close(db);
  tdb_close(t);
}

static void regex(void **state) {
  (void)state;
  tdb *t = tdb_open();
  assert_string_equal(q(t, "SELECT REGEXP_SUBSTR('na1-ab22-3', '[0-9]+'), "
                           "REGEXP_SUBSTR('na1-ab22-3', '[0-9]+', 4), "
                           "REGEXP_SUBSTR('na1-ab22-3', '[0-9]+', -1), "
                           "REGEXP_SUBSTR('abc', 'z'), REGEXP_SUBSTR('abc', 'b', 9), "
                           "REGEXP_SUBSTR('abc', '^b', 2)"),
                      "1|22|3|NULL|NULL|NULL\n");
  assert_string_equal(q(t, "SELECT REGEXP_SUBSTR('héllo wörld', 'w[^ ]+'), "
                           "REGEXP_SUBSTR('xaay', 'a*', 2)"), "wörld|aa\n");
  assert_string_equal(q(t, "SELECT REGEXP_REPLACE('abc', 'x*', '-'), "
                           "REGEXP_REPLACE('abc', 'b*', '-'), "
                           "REGEXP_REPLACE('John Smith', '([A-Za-z]+) ([A-Za-z]+)', '$2, $1'), "
                           "REGEXP_REPLACE('a.b.c', '[.]'), REGEXP_REPLACE('a1b22', '[0-9]+', "
                           "'<$0>'), REGEXP_REPLACE('cost', 'cost', '\\$5'), "
                           "REGEXP_REPLACE('aaa', '^a', 'b')"),
                      "-a-b-c-|-a--c-|Smith, John|abc|a<1>b<22>|$5|baa\n");
  assert_string_equal(q(t, "SELECT REGEXP_SUBSTR(NULL, 'a'), REGEXP_SUBSTR('a', NULL), "
                           "REGEXP_SUBSTR('a', 'a', NULL), REGEXP_REPLACE(NULL, 'a'), "
                           "REGEXP_REPLACE('a', 'a', NULL)"), "NULL|NULL|NULL|NULL|NULL\n");
  const char *m = qerr(t, "SELECT REGEXP_SUBSTR('abc', '(')", EXEC_ERROR);
  assert_non_null(strstr(m, "REGEXP_SUBSTR: bad regular expression '(' (argument 2)"));
  m = qerr(t, "SELECT REGEXP_REPLACE('abc', 'a[', 'x')", EXEC_ERROR);
  assert_non_null(strstr(m, "REGEXP_REPLACE: bad regular expression 'a[' (argument 2)"));
  m = qerr(t, "SELECT REGEXP_REPLACE('abc', 'b', '$2')", EXEC_ERROR);
  assert_non_null(strstr(m, "refers to group $2 but the pattern has 0 groups"));
  m = qerr(t, "SELECT REGEXP_REPLACE('abc', 'b', 'x$')", EXEC_ERROR);
  assert_non_null(strstr(m, "'$' in the replacement (argument 3)"));
  m = qerr(t, "SELECT REGEXP_REPLACE('abc', 'b', 'x\\')", EXEC_ERROR);
  assert_non_null(strstr(m, "ends in a backslash"));
  /* Java syntax POSIX would read differently is refused, not silently misread */
  m = qerr(t, "SELECT REGEXP_SUBSTR('x12', '\\d+')", EXEC_ERROR);
  assert_non_null(strstr(m, "REGEXP_SUBSTR: '\\d' in the pattern (argument 2) is Java"));
  m = qerr(t, "SELECT REGEXP_REPLACE('x12', '[\\w]', 'y')", EXEC_ERROR);
  assert_non_null(strstr(m, "'\\ inside [ ]' in the pattern"));
  m = qerr(t, "SELECT REGEXP_SUBSTR('aaa', 'a+?')", EXEC_ERROR);
  assert_non_null(strstr(m, "'+?'"));
  m = qerr(t, "SELECT REGEXP_SUBSTR('aaa', '(?i)A')", EXEC_ERROR);
  assert_non_null(strstr(m, "'(?'"));
  assert_string_equal(q(t, "SELECT REGEXP_SUBSTR('a?b', 'a[?]b'), REGEXP_SUBSTR('a]b', '[]a]+'), "
                           "REGEXP_SUBSTR('x1 2', '[[:digit:]][[:space:]]'), "
                           "REGEXP_SUBSTR('ab cd', '\\w+\\s'), REGEXP_SUBSTR('abcd', 'a|ab')"),
                      "a?b|a]|1 |ab |ab\n");
  /* REGEXP_SPLIT gives a VARCHAR ARRAY (tests/sql/array.test has the cases) */
  assert_string_equal(q(t, "SELECT REGEXP_SPLIT('a,b', ','), ARRAY_LENGTH(REGEXP_SPLIT('a,b', ','))"),
                      "['a', 'b']|2\n");
  m = qerr(t, "SELECT ARRAY_AGG(1)", EXEC_ERROR);
  assert_non_null(strstr(m, "ARRAY_AGG (it returns an ARRAY) is not supported"));
  /* a pattern over a table: compiled per row, same answers */
  q(t, "CREATE TABLE R (K INTEGER PRIMARY KEY, S VARCHAR)");
  q(t, "UPSERT INTO R VALUES (1, 'id-17'), (2, 'none'), (3, NULL), (4, 'x-2-y-33')");
  assert_string_equal(q(t, "SELECT K, REGEXP_SUBSTR(S, '[0-9]+') FROM R WHERE "
                           "REGEXP_REPLACE(S, '[^0-9]') <> '' ORDER BY K"), "1|17\n4|2\n");
  tdb_close(t);
}

static void dates(void **state) {
  (void)state;
  tdb *t = tdb_open();
  /* ISO weeks: 2021-01-01 (a Friday) is in week 53 of 2020; 2021-01-04 starts week 1 */
  assert_string_equal(q(t, "SELECT WEEK(DATE '2021-01-01'), WEEK(DATE '2020-12-31'), "
                           "WEEK(DATE '2021-01-04'), WEEK(DATE '2019-12-30'), "
                           "WEEK(TIMESTAMP '2026-06-15 10:00:00'), WEEK(NULL)"),
                      "53|53|1|1|25|NULL\n");
  assert_string_equal(q(t, "SELECT QUARTER(DATE '2021-01-01'), QUARTER(DATE '2021-03-31'), "
                           "QUARTER(DATE '2021-04-01'), QUARTER(TIMESTAMP '2021-12-31 23:59:59')"),
                      "1|1|2|4\n");
  assert_string_equal(q(t, "SELECT EXTRACT(YEAR FROM TIMESTAMP '2021-08-03 10:20:30'), "
                           "EXTRACT(month FROM DATE '2021-08-03'), EXTRACT(DAY FROM "
                           "DATE '2021-08-03'), EXTRACT(HOUR FROM TIMESTAMP '2021-08-03 10:20:30'), "
                           "EXTRACT(MINUTE FROM TIMESTAMP '2021-08-03 10:20:30'), EXTRACT(SECOND "
                           "FROM TIME '10:20:30'), EXTRACT(QUARTER FROM DATE '2021-08-03'), "
                           "EXTRACT(WEEK FROM DATE '2021-08-03'), EXTRACT(ISODOW FROM DATE "
                           "'2021-08-08'), EXTRACT(DOY FROM DATE '2021-02-01')"),
                      "2021|8|3|10|20|30|3|31|7|32\n");
  assert_string_equal(q(t, "SELECT EXTRACT(YEAR FROM NULL)"), "NULL\n");
  const char *m = qerr(t, "SELECT EXTRACT(EPOCH FROM DATE '2021-01-01')", EXEC_SYNTAX);
  assert_non_null(strstr(m, "EXTRACT: unknown field \"EPOCH\""));
  m = qerr(t, "SELECT SUBSTR('abc' FROM 2)", EXEC_SYNTAX);
  assert_non_null(strstr(m, "syntax error"));
  m = qerr(t, "SELECT EXTRACT(YEAR FROM 'x')", EXEC_ERROR);
  assert_non_null(strstr(m, "YEAR does not accept"));
  m = qerr(t, "SELECT WEEK(1)", EXEC_ERROR);
  assert_non_null(strstr(m, "WEEK does not accept"));
  /* a column named WITHIN still works (WITHIN is a non-reserved keyword) */
  q(t, "CREATE TABLE W (WITHIN INTEGER PRIMARY KEY)");
  q(t, "UPSERT INTO W VALUES (4)");
  assert_string_equal(q(t, "SELECT WITHIN FROM W"), "4\n");
  tdb_close(t);
}

static int cmp_d(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* Reference answers over v[0..n) (sorted here). */
static void reference(double *v, int n, double p, double *pop, double *samp, double *cont,
                      double *disc) {
  double mean = 0, ss = 0;
  for (int i = 0; i < n; i++) mean += v[i];
  mean /= n;
  for (int i = 0; i < n; i++) ss += (v[i] - mean) * (v[i] - mean);
  *pop = sqrt(ss / n);
  *samp = n > 1 ? sqrt(ss / (n - 1)) : NAN;
  qsort(v, (size_t)n, sizeof *v, cmp_d);
  double rn = p * (n - 1);
  int lo = (int)floor(rn), hi = (int)ceil(rn);
  *cont = v[lo] + (rn - lo) * (v[hi] - v[lo]);
  int k = (int)ceil(p * n);
  *disc = v[k <= 1 ? 0 : k - 1];
}

static void near(double got, double want, const char *what, int g) {
  double tol = 1e-9 * (fabs(want) > 1 ? fabs(want) : 1);
  if (!(fabs(got - want) <= tol)) fail_msg("group %d %s: got %.17g, want %.17g", g, what, got, want);
}

static void aggregates(void **state) {
  (void)state;
  uint64_t seed = tu_seed("func_phoenix_aggregates"), rs = seed;
  tdb *t = tdb_open();
  q(t, "CREATE TABLE A (G INTEGER NOT NULL, K INTEGER NOT NULL, V INTEGER, D DOUBLE "
       "CONSTRAINT PK PRIMARY KEY (G, K))");
  enum { NG = 12 };
  static double vals[NG][200];
  int cnt[NG] = {0};
  char *sql = malloc(1 << 16);
  for (int g = 0; g < NG; g++) {
    int n = 1 + (int)tu_below(&rs, 150);
    size_t o = (size_t)sprintf(sql, "UPSERT INTO A VALUES ");
    for (int k = 0; k < n; k++) {
      bool null = tu_below(&rs, 10) == 0;
      int v = (int)tu_below(&rs, 1000) - 300;
      if (null) {
        o += (size_t)sprintf(sql + o, "%s(%d, %d, NULL, NULL)", k ? ", " : "", g, k);
      } else {
        o += (size_t)sprintf(sql + o, "%s(%d, %d, %d, %.1f)", k ? ", " : "", g, k, v, v + 0.5);
        vals[g][cnt[g]++] = v;
      }
    }
    q(t, sql);
  }
  free(sql);
  char ptext[16];
  snprintf(ptext, sizeof ptext, "0.%02d", 5 + (int)tu_below(&rs, 90));
  double p = strtod(ptext, NULL), q1 = 1 - p; /* what Rowan reads from the same text */
  char qtext[16];
  snprintf(qtext, sizeof qtext, "%.2f", q1);
  q1 = strtod(qtext, NULL);
  char query[512];
  for (int form = 0; form < 2; form++) { /* streamed GROUP BY G, hashed GROUP BY G + 0 */
    snprintf(query, sizeof query,
             "SELECT G%s, STDDEV_POP(V), STDDEV_SAMP(V), PERCENTILE_CONT(%s) WITHIN GROUP "
             "(ORDER BY V), PERCENTILE_DISC(%s) WITHIN GROUP (ORDER BY V), "
             "PERCENTILE_CONT(%s) WITHIN GROUP (ORDER BY D DESC), COUNT(V) FROM A GROUP BY G%s "
             "ORDER BY 1", form ? " + 0" : "", ptext, ptext, qtext, form ? " + 0" : "");
    const char *out = q(t, query);
    for (int g = 0; g < NG; g++) {
      const char *line = out;
      for (int i = 0; i < g; i++) line = strchr(line, '\n') + 1;
      int gg;
      char f[5][64];
      long long c;
      assert_int_equal(sscanf(line, "%d|%63[^|]|%63[^|]|%63[^|]|%63[^|]|%63[^|]|%lld", &gg, f[0],
                              f[1], f[2], f[3], f[4], &c), 7);
      assert_int_equal(gg, g);
      assert_int_equal(c, cnt[g]);
      if (cnt[g] == 0) {
        for (int i = 0; i < 5; i++) assert_string_equal(f[i], "NULL");
        continue;
      }
      double v[200], pop, samp, cont, disc;
      memcpy(v, vals[g], sizeof(double) * (size_t)cnt[g]);
      reference(v, cnt[g], p, &pop, &samp, &cont, &disc);
      near(strtod(f[0], NULL), pop, "STDDEV_POP", g);
      if (cnt[g] == 1) assert_string_equal(f[1], "NULL");
      else near(strtod(f[1], NULL), samp, "STDDEV_SAMP", g);
      near(strtod(f[2], NULL), cont, "PERCENTILE_CONT", g);
      near(strtod(f[3], NULL), disc, "PERCENTILE_DISC", g);
      /* DESC at 1 - p over D = V + 0.5 is the ascending p-th value of D */
      double rn = q1 * (cnt[g] - 1), w;
      int hi = cnt[g] - 1 - (int)floor(rn), lo = cnt[g] - 1 - (int)ceil(rn);
      w = v[hi] + (rn - floor(rn)) * (v[lo] - v[hi]);
      near(strtod(f[4], NULL), w + 0.5, "PERCENTILE_CONT DESC", g);
    }
  }
  /* over no rows, NULL; DISC keeps the argument type */
  assert_string_equal(q(t, "SELECT STDDEV_POP(V), PERCENTILE_CONT(0.5) WITHIN GROUP (ORDER BY V), "
                           "PERCENTILE_DISC(0) WITHIN GROUP (ORDER BY V) FROM A WHERE G < 0"),
                      "NULL|NULL|NULL\n");
  q(t, "CREATE TABLE S (K INTEGER PRIMARY KEY, V INTEGER, D DATE)");
  q(t, "UPSERT INTO S VALUES (1, 1, DATE '2020-01-01'), (2, 2, DATE '2020-01-02'), "
       "(3, 3, NULL), (4, 4, DATE '2020-01-04')");
  assert_string_equal(q(t, "SELECT PERCENTILE_DISC(0.5) WITHIN GROUP (ORDER BY V), "
                           "PERCENTILE_DISC(0) WITHIN GROUP (ORDER BY V), "
                           "PERCENTILE_DISC(1) WITHIN GROUP (ORDER BY V DESC), "
                           "PERCENTILE_DISC(0.5) WITHIN GROUP (ORDER BY D), "
                           "PERCENTILE_CONT(0.5) WITHIN GROUP (ORDER BY V), "
                           "STDDEV_SAMP(DISTINCT V / 2) FROM S"), /* of 0, 1, 2 */
                      "2|1|1|2020-01-02|2.5|1\n");
  const char *e = explain(t, "EXPLAIN SELECT PERCENTILE_CONT(0.9) WITHIN GROUP (ORDER BY V DESC) "
                             "FROM S");
  assert_non_null(strstr(e, "PERCENTILE_CONT(0.9) WITHIN GROUP (ORDER BY V DESC)"));
  /* bind errors name the function and the argument */
  const char *m = qerr(t, "SELECT PERCENTILE_CONT(1.5) WITHIN GROUP (ORDER BY V) FROM S", EXEC_ERROR);
  assert_non_null(strstr(m, "PERCENTILE_CONT: the percentile (argument 1) must be between 0 and 1, got 1.5"));
  m = qerr(t, "SELECT PERCENTILE_DISC(-0.1) WITHIN GROUP (ORDER BY V) FROM S", EXEC_ERROR);
  assert_non_null(strstr(m, "PERCENTILE_DISC: the percentile (argument 1) must be between 0 and 1, got -0.1"));
  m = qerr(t, "SELECT PERCENTILE_CONT(K) WITHIN GROUP (ORDER BY V) FROM S", EXEC_ERROR);
  assert_non_null(strstr(m, "must be a constant number"));
  m = qerr(t, "SELECT PERCENTILE_CONT(0.5) FROM S", EXEC_ERROR);
  assert_non_null(strstr(m, "PERCENTILE_CONT needs WITHIN GROUP"));
  m = qerr(t, "SELECT PERCENTILE_CONT(0.5, 0.6) WITHIN GROUP (ORDER BY V) FROM S", EXEC_ERROR);
  assert_non_null(strstr(m, "takes one argument (the percentile), got 2"));
  m = qerr(t, "SELECT PERCENTILE_CONT(0.5) WITHIN GROUP (ORDER BY D) FROM S", EXEC_ERROR);
  assert_non_null(strstr(m, "PERCENTILE_CONT does not accept DATE"));
  m = qerr(t, "SELECT PERCENTILE_DISC(DISTINCT 0.5) WITHIN GROUP (ORDER BY V) FROM S",
           EXEC_SYNTAX);
  assert_non_null(strstr(m, "DISTINCT is not allowed with WITHIN GROUP"));
  m = qerr(t, "SELECT COUNT(V) WITHIN GROUP (ORDER BY V) FROM S", EXEC_ERROR);
  assert_non_null(strstr(m, "COUNT does not take WITHIN GROUP"));
  m = qerr(t, "SELECT STDDEV_POP(D) FROM S", EXEC_ERROR);
  assert_non_null(strstr(m, "STDDEV_POP does not accept DATE"));
  m = qerr(t, "SELECT K FROM S WHERE STDDEV_POP(V) > 1", EXEC_ERROR);
  assert_non_null(strstr(m, "not allowed in WHERE"));
  tdb_close(t);
}

static void memory_bound(void **state) {
  (void)state;
  tdb *t = tdb_open();
  q(t, "CREATE TABLE M (K INTEGER PRIMARY KEY, V INTEGER)");
  char *sql = malloc(1 << 20);
  size_t o = (size_t)sprintf(sql, "UPSERT INTO M VALUES ");
  for (int k = 0; k < 20000; k++) o += (size_t)sprintf(sql + o, "%s(%d, %d)", k ? ", " : "", k, k);
  q(t, sql);
  free(sql);
  exec_set_sort_memory(t->s, 64 * 1024);
  const char *m = qerr(t, "SELECT PERCENTILE_CONT(0.5) WITHIN GROUP (ORDER BY V) FROM M",
                       EXEC_TOOBIG);
  assert_non_null(strstr(m, "PERCENTILE_CONT needs more than"));
  m = qerr(t, "SELECT COUNT(DISTINCT V) FROM M", EXEC_TOOBIG);
  assert_non_null(strstr(m, "COUNT(DISTINCT) needs more than"));
  assert_string_equal(q(t, "SELECT STDDEV_POP(V) > 0, COUNT(V) FROM M"), "TRUE|20000\n");
  exec_set_sort_memory(t->s, 0);
  assert_string_equal(q(t, "SELECT PERCENTILE_DISC(0.5) WITHIN GROUP (ORDER BY V), "
                           "COUNT(DISTINCT V) FROM M"), "9999|20000\n");
  tdb_close(t);
}

/* exec_agg_merge of partial accumulators gives the one-pass answer. */
static void merge(void **state) {
  (void)state;
  uint64_t seed = tu_seed("func_phoenix_merge"), rs = seed;
  static const int ids[] = {EXEC_AGG_STDDEV_POP, EXEC_AGG_STDDEV_SAMP, EXEC_AGG_PERCENTILE_CONT,
                            EXEC_AGG_PERCENTILE_DISC};
  char msg[256];
  for (int r = 0; r < 50; r++) {
    for (size_t k = 0; k < sizeof ids / sizeof ids[0]; k++) {
      cat_type at = cat_type_of(CAT_T_BIGINT), rt;
      int id;
      assert_int_equal(cat_agg_lookup(cat_agg_name(ids[k]), false, false, &at, &id, &rt, msg,
                                       sizeof msg), EXEC_OK);
      assert_int_equal(id, ids[k]);
      exec_agg all, part[3];
      exec_agg_init(&all, id, false, &at, &rt);
      exec_agg_set_order(&all, 0.3, r % 2);
      for (int i = 0; i < 3; i++) {
        exec_agg_init(&part[i], id, false, &at, &rt);
        exec_agg_set_order(&part[i], 0.3, r % 2);
      }
      int n = 1 + (int)tu_below(&rs, 40);
      for (int i = 0; i < n; i++) {
        cat_value v = cat_v_int(CAT_T_BIGINT, (int64_t)tu_below(&rs, 100000) - 50000);
        assert_int_equal(exec_agg_step(&all, &v, msg, sizeof msg), EXEC_OK);
        assert_int_equal(exec_agg_step(&part[tu_below(&rs, 3)], &v, msg, sizeof msg), EXEC_OK);
      }
      assert_int_equal(exec_agg_merge(&part[0], &part[1], msg, sizeof msg), EXEC_OK);
      assert_int_equal(exec_agg_merge(&part[0], &part[2], msg, sizeof msg), EXEC_OK);
      cat_value a, b;
      assert_int_equal(exec_agg_final(&all, &a, NULL, msg, sizeof msg), EXEC_OK);
      assert_int_equal(exec_agg_final(&part[0], &b, NULL, msg, sizeof msg), EXEC_OK);
      assert_int_equal(a.is_null, b.is_null);
      if (!a.is_null) {
        double x = a.type.id == CAT_T_DOUBLE ? a.u.d : (double)a.u.i;
        double y = b.type.id == CAT_T_DOUBLE ? b.u.d : (double)b.u.i;
        near(y, x, cat_agg_name(id), r);
      }
      exec_agg_free(&all);
      for (int i = 0; i < 3; i++) exec_agg_free(&part[i]);
    }
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(strings),      cmocka_unit_test(against_sqlite),
      cmocka_unit_test(regex),        cmocka_unit_test(dates),
      cmocka_unit_test(aggregates),   cmocka_unit_test(memory_bound),
      cmocka_unit_test(merge),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
