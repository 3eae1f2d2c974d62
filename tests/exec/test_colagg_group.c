/*
** tests/exec/test_colagg_group.c: the columnar aggregate pushdown (exec/colagg.h) over key
** ranges and with GROUP BY on key columns (issue 22), against the rows path (the same query
** with the /+ NO_PUSHDOWN +/ hint): randomized sensor tables (primary key (ST, TS DESC) and
** (ST, TS)) with NULLs, rows whose family columns are all NULL (they exist only in the key
** family), updates (several versions), deletes (tombstones), memstore rows, several store
** files and small blocks, so groups span blocks and chunks and key ranges begin and end
** inside blocks. Queries: range, point, skip scans (over ranges and over each leading
** prefix, the "daily average per station" shape), empty ranges, GROUP BY of key columns and
** TRUNC/FLOOR/CEIL/ROUND of the timestamp key (one or two terms on it), FLOAT sums and
** averages, HAVING, ORDER BY. The answers (rows and their order) must be the rows path's
** exactly, and EXPLAIN must show the pushdown with the scan's ranges. Each pushed query runs
** twice (the second run answers from the blocks' cached row views,
** kv/colscan/colscan_rows.c), and cached_row_views asks the same questions across changes of
** the table; span_edges groups a nullable TIMESTAMP key (NULL groups, ASC and DESC) around
** 1970, ROUND's ties and the ends of the TIMESTAMP range. Seeded (tu_seed); a mismatch prints
** the SQL.
*/
#include "test_engine_util.h"
#include "testutil.h"

#define NST 8       /* stations 'a' .. 'h' */
#define HOURS 480   /* 20 days of hourly readings */
#define T0 "TIMESTAMP '2016-07-01 00:00:00'"

/* A random reading's columns: T DOUBLE, P INTEGER, W VARCHAR (each NULL at times; all three
** NULL at times, when the row lives in the key family alone). */
static bool no_empty_rows; /* covered(): every row has a cell in F (F covers every row) */
static bool count_star;    /* covered(): COUNT(*) among the random aggregates (elsewhere it
                              reads the key family and is never pushed) */

static void reading(uint64_t *rs, char *buf, size_t cap) {
  if (!no_empty_rows && tu_below(rs, 12) == 0) {
    snprintf(buf, cap, "NULL, NULL, NULL");
    return;
  }
  char t[32], p[32], w[32];
  if (tu_below(rs, 7) == 0) snprintf(t, sizeof t, "NULL");
  else snprintf(t, sizeof t, "%.3f", ((double)tu_below(rs, 60001) - 20000.0) / 997.0);
  if (tu_below(rs, 7) == 0) snprintf(p, sizeof p, "NULL");
  else snprintf(p, sizeof p, "%d", (int)tu_below(rs, 2001) - 1000);
  if (tu_below(rs, 7) == 0 && (!no_empty_rows || strcmp(t, "NULL") || strcmp(p, "NULL")))
    snprintf(w, sizeof w, "NULL");
  else snprintf(w, sizeof w, "'%c%c'", 'N' + (int)tu_below(rs, 5), 'a' + (int)tu_below(rs, 3));
  snprintf(buf, cap, "%s, %s, %s", t, p, w);
}

static void upsert(tdb *t, uint64_t *rs, int st, int h) {
  char sql[320], v[128];
  reading(rs, v, sizeof v);
  snprintf(sql, sizeof sql, "UPSERT INTO S (ST, TS, T, P, W) VALUES ('%c', %s + %d / 24.0, %s)",
           'a' + st, T0, h, v);
  assert_int_equal(tdb_run(t, sql), EXEC_DONE);
}

/* A table with every station's hours (some left out), in store files; window: the
** look-back window (ms; a day keeps deletes through a major compaction), 0 none; hours: the
** hours per station. */
static tdb *make_hours(uint64_t *rs, bool desc, int64_t window, int hours) {
  tdb *t = tdb_open_window(window);
  char sql[512];
  snprintf(sql, sizeof sql,
           "CREATE TABLE S (ST VARCHAR NOT NULL, TS TIMESTAMP NOT NULL, F.T DOUBLE, "
           "F.P INTEGER, F.W VARCHAR, CONSTRAINT PK PRIMARY KEY (ST, TS%s)) BLOCKSIZE=1024",
           desc ? " DESC" : "");
  assert_int_equal(tdb_run(t, sql), EXEC_DONE);
  for (int st = 0; st < NST; st++)
    for (int h = 0; h < hours; h++)
      if (tu_below(rs, 9) != 0) upsert(t, rs, st, h);
  assert_int_equal(kv_flush(t->db, NULL), KV_OK);
  assert_int_equal(kv_compact(t->db, NULL, true), KV_OK);
  return t;
}

static tdb *make_window(uint64_t *rs, bool desc, int64_t window) {
  return make_hours(rs, desc, window, (int)tu_scaled(HOURS, 96));
}

static tdb *make(uint64_t *rs, bool desc) { return make_window(rs, desc, 0); }

static const char *const groups[] = {
    "ST", "TRUNC(TS, 'DAY')", "ST, TRUNC(TS, 'DAY')", "TRUNC(TS, 'DAY'), ST",
    "ST, FLOOR(TS, 'HOUR', 6)", "CEIL(TS, 'HOUR', 12), ST", "TS", "ST, TS",
    /* roundings whose spans (exec_fn_date_round_span) find a day's rows by their key bytes:
       half up, weeks, months, two terms on TS (their spans intersect) */
    "ST, ROUND(TS, 'HOUR', 5)", "ROUND(TS, 'WEEK'), ST", "ST, TRUNC(TS, 'MONTH')",
    "ST, TRUNC(TS, 'DAY'), FLOOR(TS, 'HOUR', 8)", "ST, CEIL(TS, 'MINUTE', 90), ROUND(TS, 'DAY')",
    NULL};
static const char *const aggs[] = {"COUNT(T)", "SUM(P)", "AVG(T)", "MIN(W)",  "MAX(T)",
                                   "SUM(T)",   "AVG(P)", "MAX(W)", "COUNT(P)", "MIN(P)",
                                   "COUNT(*)" /* last: covered() only */};

/* A random key range (or none): range, point and skip scans, empty ones. */
static void key_where(uint64_t *rs, char *buf, size_t cap) {
  int a = (int)tu_below(rs, NST), b = a + 1 + (int)tu_below(rs, 3);
  int h0 = (int)tu_below(rs, HOURS), h1 = h0 + (int)tu_below(rs, 200);
  switch (tu_below(rs, 10)) {
    case 0: buf[0] = 0; break;
    case 1: snprintf(buf, cap, "ST = '%c'", 'a' + a); break;
    case 2: snprintf(buf, cap, "ST >= '%c' AND ST < '%c'", 'a' + a, 'a' + b); break;
    case 3: snprintf(buf, cap, "ST IN ('%c', '%c', 'zz')", 'a' + a, 'a' + b); break;
    case 4: /* the daily average's shape: a skip scan over each station */
    case 5:
      snprintf(buf, cap, "TS >= %s + %d / 24.0 AND TS < %s + %d / 24.0", T0, h0, T0, h1);
      break;
    case 6:
      snprintf(buf, cap, "ST = '%c' AND TS > %s + %d / 24.0 AND TS <= %s + %d / 24.0", 'a' + a,
               T0, h0, T0, h1);
      break;
    case 7: snprintf(buf, cap, "ST = 'zz'"); break; /* empty */
    case 8:
      snprintf(buf, cap, "TS >= %s + %d / 24.0 AND TS < %s + %d / 24.0", T0, h0, T0, h0);
      break; /* empty */
    default:
      snprintf(buf, cap, "ST IN ('%c', '%c') AND TS >= %s + %d / 24.0", 'a' + a, 'a' + b, T0,
               h0);
      break;
  }
}

static void random_query(uint64_t *rs, char *sql, size_t cap) {
  char sel[512] = "", where[512] = "", kw[256];
  const char *g = groups[tu_below(rs, sizeof groups / sizeof groups[0])];
  if (g) snprintf(sel, sizeof sel, "%s, ", g);
  int na = 1 + (int)tu_below(rs, 3);
  for (int i = 0; i < na; i++) {
    size_t l = strlen(sel);
    snprintf(sel + l, sizeof sel - l, "%s%s", i ? ", " : "",
             aggs[tu_below(rs, sizeof aggs / sizeof aggs[0] - (count_star ? 0 : 1))]);
  }
  key_where(rs, kw, sizeof kw);
  /* a filter on the family's columns most of the time: without one GROUP BY reads the key
     family too (rows whose columns are all NULL make groups) and is not pushed */
  static const char *const vfs[] = {"P > 0", "T IS NOT NULL", "W IS NOT NULL", "T > -5.5",
                                    "P IS NOT NULL AND T < 10"};
  const char *vf = tu_below(rs, 4) ? vfs[tu_below(rs, sizeof vfs / sizeof vfs[0])] : NULL;
  if (kw[0] && vf) snprintf(where, sizeof where, " WHERE %s AND %s", kw, vf);
  else if (kw[0] || vf) snprintf(where, sizeof where, " WHERE %s", kw[0] ? kw : vf);
  const char *tail = "";
  if (g && tu_below(rs, 6) == 0) tail = " HAVING COUNT(T) > 2";
  else if (g && tu_below(rs, 6) == 0) tail = " ORDER BY 2 DESC LIMIT 5";
  snprintf(sql, cap, "SELECT %s FROM S%s%s%s", sel, where, g ? " GROUP BY " : "", g ? g : "");
  size_t l = strlen(sql);
  snprintf(sql + l, cap - l, "%s", tail);
}

static int row_way; /* queries pushed with blocks or rows read the row way */

/* Run n random queries both ways and compare; returns how many ran the columnar way. */
static int compare(tdb *t, uint64_t *rs, int n, uint64_t seed) {
  int pushed = 0;
  for (int i = 0; i < n; i++) {
    char sql[1200], hinted[1300], ex[1400];
    random_query(rs, sql, sizeof sql);
    snprintf(hinted, sizeof hinted, "SELECT /*+ NO_PUSHDOWN */ %s", sql + 7);
    char *want = strdup(q(t, hinted));
    for (int k = 0; k < 2; k++) { /* the second run reads the blocks' cached row views */
      const char *got = q(t, sql);
      if (strcmp(want, got) != 0)
        fprintf(stderr, "seed %llu (run %d): %s\n  rows path:\n%s  pushdown:\n%s",
                (unsigned long long)seed, k + 1, sql, want, got);
      assert_string_equal(want, got);
    }
    free(want);
    snprintf(ex, sizeof ex, "EXPLAIN ANALYZE %s", sql);
    const char *e = explain(t, ex);
    if (strstr(e, "(actual blocks=")) pushed++;
    else if (getenv("CG_DEBUG")) fprintf(stderr, "not pushed: %s\n%s", sql, e);
    if (strstr(e, "(actual blocks=") && !strstr(e, "row-way ranges=0 ")) row_way++;
    snprintf(ex, sizeof ex, "EXPLAIN %s", hinted);
    assert_null(strstr(explain(t, ex), "COLUMNAR"));
  }
  return pushed;
}

/* One compacted file per family: the answers, and most queries pushed. */
static void compacted(void **state) {
  (void)state;
  for (int d = 0; d < 2; d++) {
    uint64_t seed = tu_seed(d ? "compacted_desc" : "compacted_asc"), rs = seed;
    tdb *t = make(&rs, d == 1);
    int n = (int)tu_scaled(150, 40);
    int pushed = compare(t, &rs, n, seed);
    fprintf(stderr, "[compacted %s] %d of %d queries pushed\n", d ? "desc" : "asc", pushed, n);
    /* GROUP BY without a family filter (the key family is read) and plans that read
       nothing are not pushed: about a third of the queries (at ROWAN_TEST_SCALE 0.25, 40
       queries, half of them at times), so the bound is a third */
    assert_true(pushed * 3 > n);
    tdb_close(t);
  }
}

/* Every row has a cell in F (docs/FORMAT_SQL.md "Row cover"): GROUP BY without a filter on
** F reads F alone and is pushed too, COUNT(*) and rows whose aggregated columns are NULL
** counting in their groups; the answers stay the rows path's. */
static void covered(void **state) {
  (void)state;
  uint64_t seed = tu_seed("covered"), rs = seed;
  no_empty_rows = true;
  tdb *t = make(&rs, true);
  no_empty_rows = false;
  assert_non_null(strstr(explain(t, "EXPLAIN SELECT ST, COUNT(*), AVG(T) FROM S GROUP BY ST"),
                         "SERVER COLUMNAR AGGREGATE"));
  int n = (int)tu_scaled(150, 40);
  count_star = true;
  int pushed = compare(t, &rs, n, seed);
  count_star = false;
  fprintf(stderr, "[covered] %d of %d queries pushed\n", pushed, n);
  assert_true(pushed * 2 > n);
  tdb_close(t);
}

/* Updates (two versions of a cell), deletes (tombstones), memstore rows, two store files:
** blocks and rows go the row way, and the answers stay the rows path's. */
static void versions_tombstones_memstore(void **state) {
  (void)state;
  uint64_t seed = tu_seed("versions_tombstones_memstore"), rs = seed;
  tdb *t = make_window(&rs, true, 86400000);
  int hours = (int)tu_scaled(HOURS, 96);
  row_way = 0;
  char sql[256];
  for (int i = 0; i < hours / 4; i++) upsert(t, &rs, (int)tu_below(&rs, NST), (int)tu_below(&rs, hours));
  for (int i = 0; i < hours / 8; i++) {
    snprintf(sql, sizeof sql, "DELETE FROM S WHERE ST = '%c' AND TS = %s + %d / 24.0",
             'a' + (int)tu_below(&rs, NST), T0, (int)tu_below(&rs, hours));
    assert_int_equal(tdb_run(t, sql), EXEC_DONE);
  }
  assert_int_equal(kv_flush(t->db, NULL), KV_OK); /* a second file: overlapping, refused */
  compare(t, &rs, (int)tu_scaled(40, 15), seed);
  assert_int_equal(kv_compact(t->db, NULL, true), KV_OK);
  compare(t, &rs, (int)tu_scaled(40, 15), seed); /* the deletes' tombstones are kept */
  for (int i = 0; i < 30; i++) upsert(t, &rs, (int)tu_below(&rs, NST), (int)tu_below(&rs, hours));
  int pushed = compare(t, &rs, (int)tu_scaled(60, 20), seed); /* memstore rows */
  fprintf(stderr, "[versions] %d queries pushed with rows read the row way\n", row_way);
  assert_true(row_way > 0);
  assert_true(pushed > 0);
  tdb_close(t);
}

/* The column cache hits of family F in an EXPLAIN ANALYZE text (0: none shown). */
static long cache_hits(const char *e) {
  const char *p = strstr(e, "FAMILIES: F (blocks=");
  if (!p || !(p = strstr(p, "cache hits="))) return 0;
  return atol(p + strlen("cache hits="));
}

/* Cached row views (kv/colscan/colscan_rows.c): a keyed question asked again is answered from the
** column cache, and stays the rows path's answer when the table changes under the cached
** blocks. The table has a nullable key column G (NULL groups; NULL sorts last in G's DESC
** order), a second family M, small blocks (groups run across blocks and chunks), and the
** questions group by key columns over key ranges and skip scans, integer sums on parallel
** chunks and a DOUBLE average in one chunk. Each question is asked in every state: compacted
** (asked twice: the second must hit the cache), with memstore upserts and deletes over
** cached blocks, after a flush (two files: refused), after a compaction (new files). */
static void cached_row_views(void **state) {
  (void)state;
  uint64_t seed = tu_seed("cached_row_views"), rs = seed;
  tdb *t = tdb_open();
  assert_int_equal(tdb_run(t, "CREATE TABLE C (ST VARCHAR NOT NULL, G INTEGER NULL, TS TIMESTAMP "
                              "NOT NULL, F.T DOUBLE, F.P INTEGER, M.X DOUBLE, CONSTRAINT PK "
                              "PRIMARY KEY (ST, G DESC, TS)) BLOCKSIZE=1024"),
                   EXEC_DONE);
  int hours = 200; /* at every ROWAN_TEST_SCALE: with fewer rows some plans read the table whole */
  char sql[512], hinted[600], ex[600];
  for (int st = 0; st < 4; st++)
    for (int g = -1; g < 3; g++) /* g -1: NULL */
      for (int h = 0; h < hours; h++) {
        if (tu_below(&rs, 6) == 0) continue;
        char gv[16], tv[32];
        snprintf(gv, sizeof gv, g < 0 ? "NULL" : "%d", g);
        if (tu_below(&rs, 8) == 0) snprintf(tv, sizeof tv, "NULL");
        else snprintf(tv, sizeof tv, "%.2f", (double)tu_below(&rs, 10000) / 7.0 - 300.0);
        snprintf(sql, sizeof sql, "UPSERT INTO C VALUES ('%c', %s, %s + %d / 24.0, %s, %d, %d)",
                 'a' + st, gv, T0, h, tv, (int)tu_below(&rs, 2001) - 1000, h);
        assert_int_equal(tdb_run(t, sql), EXEC_DONE);
      }
  assert_int_equal(kv_flush(t->db, NULL), KV_OK);
  assert_int_equal(kv_compact(t->db, NULL, true), KV_OK);
  static const char *const qs[] = {
      "SELECT ST, G, COUNT(P), SUM(P) FROM C WHERE P > -900 GROUP BY ST, G",
      "SELECT G, COUNT(T), MIN(P) FROM C WHERE ST IN ('a', 'c') AND P < 800 GROUP BY G",
      "SELECT ST, AVG(T), COUNT(T) FROM C WHERE ST >= 'b' AND T IS NOT NULL GROUP BY ST",
      "SELECT ST, G, TRUNC(TS, 'DAY') AS D, SUM(P) FROM C WHERE TS >= " T0 " + 2 AND TS < "
      T0 " + 5 AND P IS NOT NULL GROUP BY ST, G, D",
      "SELECT ST, G, MAX(T) FROM C WHERE ST = 'b' AND G IS NULL AND T > 0 GROUP BY ST, G",
      "SELECT ST, SUM(P), COUNT(P) FROM C WHERE ST < 'd' AND P <> 0 GROUP BY ST",
      "SELECT G, AVG(T) FROM C WHERE ST IN ('a', 'b', 'd') AND TS < " T0 " + 3 AND T < 100 "
      "GROUP BY G",
  };
  size_t nq = sizeof qs / sizeof qs[0];
  for (int stage = 0; stage < 4; stage++) {
    if (stage == 1) { /* memstore rows over cached blocks: upserts (new values) and deletes */
      for (int i = 0; i < 40; i++) {
        int st = (int)tu_below(&rs, 4), g = (int)tu_below(&rs, 4) - 1;
        int h = (int)tu_below(&rs, hours);
        char gv[16];
        snprintf(gv, sizeof gv, g < 0 ? "NULL" : "%d", g);
        if (i % 3 == 0)
          snprintf(sql, sizeof sql, "DELETE FROM C WHERE ST = '%c' AND G %s %s AND TS = %s + "
                   "%d / 24.0", 'a' + st, g < 0 ? "IS" : "=", gv, T0, h);
        else
          snprintf(sql, sizeof sql, "UPSERT INTO C (ST, G, TS, T, P) VALUES ('%c', %s, %s + "
                   "%d / 24.0, %d.5, %d)", 'a' + st, gv, T0, h, i, i * 7 - 100);
        assert_int_equal(tdb_run(t, sql), EXEC_DONE);
      }
    } else if (stage == 2) {
      assert_int_equal(kv_flush(t->db, NULL), KV_OK); /* a second file */
    } else if (stage == 3) {
      assert_int_equal(kv_compact(t->db, NULL, true), KV_OK);
    }
    long hits = 0;
    for (size_t i = 0; i < nq; i++) {
      snprintf(hinted, sizeof hinted, "SELECT /*+ NO_PUSHDOWN */ %s", qs[i] + 7);
      char *want = strdup(q(t, hinted));
      for (int k = 0; k < 3; k++) {
        const char *got = q(t, qs[i]);
        if (strcmp(want, got) != 0)
          fprintf(stderr, "seed %llu stage %d run %d: %s\n  rows path:\n%s  pushdown:\n%s",
                  (unsigned long long)seed, stage, k + 1, qs[i], want, got);
        assert_string_equal(want, got);
      }
      free(want);
      snprintf(ex, sizeof ex, "EXPLAIN ANALYZE %s", qs[i]);
      const char *e = explain(t, ex);
      if (stage != 2) assert_non_null(strstr(e, "SERVER COLUMNAR AGGREGATE"));
      hits += cache_hits(e);
      if (stage == 0) { /* asked before: every block from the cache, none the row way */
        assert_non_null(strstr(e, "row-way blocks=0 row-way ranges=0 row-way rows=0"));
        const char *b = strstr(e, "FAMILIES: F (blocks=");
        assert_non_null(b);
        assert_int_equal(atol(b + strlen("FAMILIES: F (blocks=")), cache_hits(e));
      }
    }
    if (stage != 2) assert_true(hits > 0); /* the views were used */
  }
  tdb_close(t);
}

/* The plans: the scan's ranges with the chunks, the columnar line, ANALYZE's figures. */
static void plans(void **state) {
  (void)state;
  uint64_t seed = tu_seed("plans"), rs = seed;
  /* all 20 days at every ROWAN_TEST_SCALE: with fewer rows per station the planner reads
     the table whole instead of skipping by prefix, and the plan text differs */
  tdb *t = make_hours(&rs, true, 0, HOURS);
  const char *e = explain(t, "EXPLAIN SELECT ST, TRUNC(TS, 'DAY') AS D, AVG(T) FROM S WHERE "
                             "TS >= " T0 " AND TS < " T0 " + 7 AND T IS NOT NULL GROUP BY ST, D");
  /* AVG of a DOUBLE: exactly rounded, so the groups' partial sums merge into the serial
     answer and the scan runs in chunks */
  assert_non_null(strstr(e, "CLIENT 2-CHUNK PARALLEL 2-WAY SKIP SCAN ON EACH [ST] PREFIX (8 found) OVER S"));
  assert_non_null(strstr(e, "FAMILIES: F\n"));
  assert_non_null(strstr(e, "SERVER AGGREGATE INTO ORDERED DISTINCT ROWS BY [ST, TRUNC(TS, 'DAY')] [AVG(T)]"));
  assert_non_null(strstr(e, "SERVER COLUMNAR AGGREGATE: filter and aggregates evaluated per "
                            "block on the value streams, blocks split into contiguous chunks"));
  e = explain(t, "EXPLAIN SELECT ST, COUNT(T), SUM(P) FROM S WHERE ST >= 'b' AND ST < 'e' "
                 "AND P > 0 GROUP BY ST");
  assert_non_null(strstr(e, "CLIENT 2-CHUNK PARALLEL 2-WAY RANGE SCAN OVER S ['b'] .. ['e')"));
  assert_non_null(strstr(e, "blocks split into contiguous chunks"));
  e = explain(t, "EXPLAIN SELECT TRUNC(TS, 'DAY'), MAX(T) FROM S WHERE ST IN ('a', 'c') "
                 "AND T > 0 GROUP BY TRUNC(TS, 'DAY')");
  assert_non_null(strstr(e, "CLIENT 2-CHUNK PARALLEL 2-WAY SKIP SCAN ON 2 RANGES OVER S"));
  assert_non_null(strstr(e, "CLIENT HASH AGGREGATE INTO DISTINCT ROWS BY [TRUNC(TS, 'DAY')]"));
  assert_non_null(strstr(e, "SERVER COLUMNAR AGGREGATE"));
  e = explain(t, "EXPLAIN SELECT SUM(P) FROM S WHERE ST = 'c' AND P > 0");
  assert_non_null(strstr(e, "CLIENT 2-CHUNK PARALLEL 2-WAY RANGE SCAN OVER S ['c', *] .. ['c', *]"));
  /* ran, with its figures; nothing went the row way in a compacted table */
  e = explain(t, "EXPLAIN ANALYZE SELECT ST, TRUNC(TS, 'DAY') AS D, AVG(T) FROM S WHERE "
                 "TS >= " T0 " + 2 AND TS < " T0 " + 9 AND T IS NOT NULL GROUP BY ST, D");
  assert_non_null(strstr(e, "row-way blocks=0 row-way ranges=0 row-way rows=0 threads=2)"));
  /* not pushed: GROUP BY a non-key column or an expression of the key, GROUP BY reading
     the key family (no filter on the family: the daily average's own shape), a rounding
     whose unit is a column, LIMIT over a streaming GROUP BY */
  static const char *const no[] = {
      "SELECT W, COUNT(T) FROM S WHERE T > 0 GROUP BY W",
      "SELECT LENGTH(ST), COUNT(T) FROM S WHERE T > 0 GROUP BY LENGTH(ST)",
      "SELECT ST, COUNT(*) FROM S GROUP BY ST",
      "SELECT ST, TRUNC(TS, 'DAY') AS D, AVG(T) FROM S WHERE TS >= " T0 " GROUP BY ST, D",
      "SELECT ST, TRUNC(TS, W), COUNT(T) FROM S WHERE T > 0 GROUP BY ST, TRUNC(TS, W)",
      "SELECT ST, COUNT(T) FROM S WHERE T > 0 GROUP BY ST LIMIT 2", /* streams, stops early */
      "SELECT /*+ NO_PUSHDOWN */ ST, COUNT(T) FROM S WHERE ST = 'a' GROUP BY ST",
  };
  for (size_t i = 0; i < sizeof no / sizeof no[0]; i++) {
    char ex[256];
    snprintf(ex, sizeof ex, "EXPLAIN %s", no[i]);
    assert_null(strstr(explain(t, ex), "COLUMNAR"));
  }
  tdb_close(t);
}

/* A rounding unit given as a parameter is prepared at open; a bad one is the rows path's
** error, not a wrong answer. */
static void rounding_parameter(void **state) {
  (void)state;
  uint64_t seed = tu_seed("rounding_parameter"), rs = seed;
  tdb *t = make(&rs, false);
  const char *sql = "SELECT ST, TRUNC(TS, ?) AS D, AVG(T), COUNT(P) FROM S WHERE ST < 'd' "
                    "AND P > 0 GROUP BY ST, D";
  cat_value u = cat_v_str(CAT_T_VARCHAR, "DAY", 3);
  assert_int_equal(tdb_runp(t, sql, 1, &u), EXEC_DONE);
  char *got = strdup(t->out);
  assert_int_equal(tdb_run(t, "SELECT /*+ NO_PUSHDOWN */ ST, TRUNC(TS, 'DAY') AS D, AVG(T), "
                              "COUNT(P) FROM S WHERE ST < 'd' AND P > 0 GROUP BY ST, D"),
                   EXEC_DONE);
  assert_string_equal(got, t->out);
  free(got);
  cat_value bad = cat_v_str(CAT_T_VARCHAR, "FORTNIGHT", 9);
  assert_int_not_equal(tdb_runp(t, sql, 1, &bad), EXEC_DONE);
  assert_non_null(strstr(t->err.msg, "unknown unit"));
  tdb_close(t);
}

/* Spans at their edges (exec_fn_date_round_span, exec_cg_in_span): a nullable TIMESTAMP key
** (an indicator byte before the value; NULL sorts first in ASC, last in DESC, and its group
** has no span), ASC and DESC, readings before 1970, on ROUND's ties (whole half hours and a
** microsecond either side) and in the first and last days of the TIMESTAMP range, in small
** blocks so groups run across batches. Station 'b' has no year-1 readings and none before
** 1970: in ASC order its NULL group is followed at once by readings of 1970-01-01 (the value
** 0 a NULL's span would be taken around). Every query is pushed and answers as the rows path
** does. */
static void span_edges(void **state) {
  (void)state;
  uint64_t seed = tu_seed("span_edges");
  static const char *const gs[] = {
      "ST, TRUNC(TS, 'DAY')",          "ST, ROUND(TS, 'HOUR')",
      "ST, ROUND(TS, 'MINUTE', 30)",   "ST, CEIL(TS, 'HOUR', 2)",
      "ST, FLOOR(TS, 'DAY'), ROUND(TS, 'HOUR', 3)", "ROUND(TS, 'DAY'), ST",
      "ST, TRUNC(TS, 'MONTH')",        "ST, ROUND(TS, 'DAY'), CEIL(TS, 'MINUTE', 45)",
  };
  for (int d = 0; d < 2; d++) {
    uint64_t rs = seed + (uint64_t)d;
    tdb *t = tdb_open();
    char sql[512];
    snprintf(sql, sizeof sql,
             "CREATE TABLE E (ST VARCHAR NOT NULL, TS TIMESTAMP NULL, F.P INTEGER, "
             "CONSTRAINT PK PRIMARY KEY (ST, TS%s)) BLOCKSIZE=512", d ? " DESC" : "");
    assert_int_equal(tdb_run(t, sql), EXEC_DONE);
    for (int st = 0; st < 3; st++) {
      snprintf(sql, sizeof sql, "UPSERT INTO E VALUES ('%c', NULL, %d)", 'a' + st,
               (int)tu_below(&rs, 100));
      assert_int_equal(tdb_run(t, sql), EXEC_DONE);
      static const char *const base[] = {"TIMESTAMP '0001-01-01 00:00:00'",
                                         "TIMESTAMP '1969-12-30 00:00:00'",
                                         "TIMESTAMP '9999-12-30 00:00:00'"};
      for (int b = st == 1 ? 1 : 0; b < 3; b++) {
        /* 34 hours from the base (from 1969-12-31 10:00 for 1969, 1970-01-01 00:00 for 'b') */
        int m0 = b != 1 ? 0 : st == 1 ? 2880 : 2040, m1 = b != 1 ? 2040 : 4080;
        for (int m = m0; m < m1; m += 1 + (int)tu_below(&rs, 25)) {
          /* on a half hour (a tie), or a microsecond before or after it, or anywhere */
          int k = (int)tu_below(&rs, 4);
          int mm = k < 3 ? m - m % 30 : m;
          if (k == 1 && mm == m0) k = 0; /* not before year 1, nor 'b' before 1970 */
          const char *us = k == 1 ? " - 1 / 86400000000.0" : k == 2 ? " + 1 / 86400000000.0" : "";
          snprintf(sql, sizeof sql, "UPSERT INTO E VALUES ('%c', %s + %d / 1440.0%s, %d)",
                   'a' + st, base[b], mm, us, (int)tu_below(&rs, 100));
          assert_int_equal(tdb_run(t, sql), EXEC_DONE);
        }
      }
    }
    assert_int_equal(kv_flush(t->db, NULL), KV_OK);
    assert_int_equal(kv_compact(t->db, NULL, true), KV_OK);
    for (size_t i = 0; i < sizeof gs / sizeof gs[0]; i++) {
      char q1[400], hinted[420], ex[420];
      snprintf(q1, sizeof q1, "SELECT %s, COUNT(P), SUM(P), MIN(P) FROM E WHERE P >= 0 GROUP BY %s",
               gs[i], gs[i]);
      snprintf(hinted, sizeof hinted, "SELECT /*+ NO_PUSHDOWN */ %s", q1 + 7);
      char *want = strdup(q(t, hinted));
      const char *got = q(t, q1);
      if (strcmp(want, got) != 0)
        fprintf(stderr, "seed %llu %s: %s\n  rows path:\n%s  pushdown:\n%s",
                (unsigned long long)seed, d ? "desc" : "asc", q1, want, got);
      assert_string_equal(want, got);
      assert_non_null(strstr(want, "\n")); /* some groups */
      free(want);
      snprintf(ex, sizeof ex, "EXPLAIN ANALYZE %s", q1);
      assert_non_null(strstr(explain(t, ex), "(actual blocks="));
    }
    tdb_close(t);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(compacted),
      cmocka_unit_test(covered),
      cmocka_unit_test(versions_tombstones_memstore),
      cmocka_unit_test(cached_row_views),
      cmocka_unit_test(plans),
      cmocka_unit_test(rounding_parameter),
      cmocka_unit_test(span_edges),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
