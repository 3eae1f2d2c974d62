/*
** tests/planner/test_explain_json.c: EXPLAIN (FORMAT JSON) holds what the text EXPLAIN holds.
** For each statement of a list covering every kind of line (each scan kind, index scans with
** their lookups, COST and HINT, filters of each kind, the aggregates, the columnar aggregate,
** DISTINCT, sorts, top-n, OFFSET and LIMIT, VALUES, UPSERT, UPSERT SELECT, DELETE), with
** and without ANALYZE, both forms are made and compared:
**  - the JSON is well-formed (tests/tu_json.h), {"statement", "analyze", "plan": [...]};
**  - the plan has one node per text line, in order, none of them the "?" of a line the
**    JSON side did not describe;
**  - each node's "step" and every string and number in it appear in its line (numbers as
**    written, with thousands separators, or for a "bytes" member as EXPLAIN's "1.2 KB");
**  - every number in the line appears in the node (so no figure is only in the text).
** Times ("time=...ms", "time_ms") differ from run to run and are left out; the text run of
** EXPLAIN ANALYZE is made twice first so the block cache is warm for both forms, and an
** EXPLAIN ANALYZE of a write runs in a transaction rolled back each time.
*/
#include "../exec/test_engine_util.h"
#include "../tu_json.h"

/* Run sql; every row's first column joined with '\n' into a malloc'ed string. */
static char *rows_of(tdb *t, const char *sql) {
  exec_stmt *st = NULL;
  if (exec_prepare(t->s, sql, strlen(sql), &st, NULL, &t->err) != EXEC_OK)
    fail_msg("%s: %s", sql, t->err.msg);
  char *out = NULL;
  size_t len = 0, cap = 0;
  tdb_cat(&out, &len, &cap, "", 0);
  int rc;
  while ((rc = exec_step(st, &t->err)) == EXEC_ROW) {
    const cat_value *v = exec_column_value(st, 0);
    tdb_cat(&out, &len, &cap, (const char *)v->u.s.p, v->u.s.len);
    tdb_cat(&out, &len, &cap, "\n", 1);
  }
  if (rc != EXEC_DONE) fail_msg("%s: %s", sql, t->err.msg);
  exec_finalize(st);
  return out;
}

/* Replace each "time=...ms" of s by "time=*". */
static void mask_times(char *p) {
  while ((p = strstr(p, "time=")) != NULL) {
    char *e = strstr(p, "ms");
    if (!e) break;
    p += 5;
    memmove(p + 1, e + 2, strlen(e + 2) + 1);
    *p = '*';
  }
}

static void grouped(const char *digits, char *out) {
  size_t n = strlen(digits), o = 0;
  for (size_t i = 0; i < n; i++) {
    out[o++] = digits[i];
    if ((n - i - 1) % 3 == 0 && i + 1 < n) out[o++] = ',';
  }
  out[o] = 0;
}

static void human(unsigned long long n, char *buf, size_t cap) {
  if (n < 1024) snprintf(buf, cap, "%llu B", n);
  else if (n < (1u << 20)) snprintf(buf, cap, "%.1f KB", (double)n / 1024);
  else if (n < (1u << 30)) snprintf(buf, cap, "%.1f MB", (double)n / (1 << 20));
  else snprintf(buf, cap, "%.1f GB", (double)n / (1 << 30));
}

#define MAXREP 256
typedef struct reps {
  char v[MAXREP][256]; /* texts a leaf may take */
  bool str[MAXREP];    /* the text is a string leaf (numbers may sit inside it) */
  int n;
} reps;

/* The ways leaf v (member `key`) may be written in the line; 0 for a leaf not checked. */
static int leaf_reps(const char *key, const tj *v, char out[3][256]) {
  if (!strcmp(key, "time_ms")) return 0;
  if (v->type == TJ_STR) {
    snprintf(out[0], 256, "%s", v->s);
    return 1;
  }
  if (v->type != TJ_NUM) return 0;
  snprintf(out[0], 256, "%s", v->s);
  if (strchr(v->s, '.')) return 1;
  grouped(v->s, out[1]);
  int n = 2;
  size_t kl = strlen(key);
  if (kl >= 5 && !strcmp(key + kl - 5, "bytes")) human(strtoull(v->s, NULL, 10), out[n++], 256);
  return n;
}

/* Check every leaf of v (member `key`) against line; collect their texts into r. */
static void check_leaves(const char *key, const tj *v, const char *line, reps *r,
                         const char *sql) {
  if (v->type == TJ_OBJ || v->type == TJ_ARR) {
    for (int i = 0; i < v->n; i++)
      check_leaves(v->type == TJ_OBJ ? v->keys[i] : key, v->kids[i], line, r, sql);
    return;
  }
  char out[3][256];
  int n = leaf_reps(key, v, out);
  bool found = n == 0;
  for (int i = 0; i < n; i++) {
    if (strstr(line, out[i])) found = true;
    if (r->n < MAXREP) {
      snprintf(r->v[r->n], 256, "%.255s", out[i]);
      r->str[r->n++] = v->type == TJ_STR;
    }
  }
  if (!found) fail_msg("%s\n  %s: \"%s\" is not in the line\n  %s", sql, key, out[0], line);
}

static bool numch(char c) { return (c >= '0' && c <= '9') || c == ',' || c == '.'; }

/* Whether number token tok appears in text t as a whole number (or anywhere in a string). */
static bool number_in(const char *t, const char *tok, bool anywhere) {
  size_t n = strlen(tok);
  for (const char *p = strstr(t, tok); p; p = strstr(p + 1, tok)) {
    if (anywhere) return true;
    bool before = p > t && numch(p[-1]) && p[-1] != '.' && p[-1] != ',';
    bool after = numch(p[n]) && !((p[n] == '.' || p[n] == ',') && !(p[n + 1] >= '0' && p[n + 1] <= '9'));
    if (!before && !after) return true;
  }
  return false;
}

/* Every number of line must be in one of r's texts. */
static void check_numbers(const char *line, const reps *r, const char *sql) {
  const char *p = line;
  while (*p) {
    if (!(*p >= '0' && *p <= '9')) {
      p++;
      continue;
    }
    const char *s = p;
    while (*p && (numch(*p) && (*p != ',' && *p != '.' ? true : (p[1] >= '0' && p[1] <= '9'))))
      p++;
    char tok[64];
    snprintf(tok, sizeof tok, "%.*s", (int)(p - s), s);
    bool ok = false;
    for (int i = 0; i < r->n && !ok; i++) ok = number_in(r->v[i], tok, r->str[i]);
    if (!ok) fail_msg("%s\n  the number %s of the line is not in its JSON node\n  %s", sql, tok, line);
  }
}

/* Compare EXPLAIN [ANALYZE] sql in both forms. */
static void compare(tdb *t, const char *sql, bool analyze) {
  char tx[2048], js[2048];
  snprintf(tx, sizeof tx, "EXPLAIN %s%s", analyze ? "ANALYZE " : "", sql);
  snprintf(js, sizeof js, "EXPLAIN %s%s", analyze ? "(ANALYZE, FORMAT JSON) " : "(FORMAT JSON) ", sql);
  /* a write under ANALYZE runs: each run in a transaction rolled back, so both see the
     same rows */
  bool write = analyze && (!strncmp(sql, "UPSERT", 6) || !strncmp(sql, "DELETE", 6));
  if (write) q(t, "BEGIN");
  if (analyze) free(rows_of(t, tx)); /* the block cache warm for both runs */
  if (write) q(t, "ROLLBACK");
  if (write) q(t, "BEGIN");
  char *text = rows_of(t, tx);
  if (write) q(t, "ROLLBACK");
  if (write) q(t, "BEGIN");
  char *doc = rows_of(t, js);
  if (write) q(t, "ROLLBACK");
  mask_times(text);
  char err[200];
  tj *root = tj_parse(doc, strlen(doc), err, sizeof err);
  if (!root) fail_msg("%s: the JSON is not well-formed: %s\n%s", js, err, doc);
  const tj *plan = tj_get(root, "plan"), *an = tj_get(root, "analyze"), *stm = tj_get(root, "statement");
  assert_non_null(plan);
  assert_int_equal(plan->type, TJ_ARR);
  assert_true(an && an->type == TJ_BOOL && an->b == analyze);
  assert_true(stm && stm->type == TJ_STR);
  int nl = 0;
  for (char *line = text, *e; *line; line = e + 1, nl++) {
    e = strchr(line, '\n');
    *e = 0;
    if (nl >= plan->n) fail_msg("%s: the JSON has %d nodes, the text more lines", js, plan->n);
    const tj *node = plan->kids[nl];
    const tj *step = tj_get(node, "step");
    assert_true(step && step->type == TJ_STR);
    if (!strcmp(step->s, "?") || !strstr(line, step->s))
      fail_msg("%s\n  node %d step \"%s\" does not name the line\n  %s", js, nl, step->s, line);
    reps *r = calloc(1, sizeof *r);
    check_leaves("step", node, line, r, js);
    check_numbers(line, r, js);
    free(r);
  }
  if (nl != plan->n) fail_msg("%s: %d text lines, %d JSON nodes", js, nl, plan->n);
  tj_free(root);
  free(text);
  free(doc);
}

static const char *const stmts[] = {
    "SELECT * FROM SENSOR",
    "SELECT TS, PM25 FROM SENSOR WHERE STATION = 'Dongsi' AND PM25 > 100",
    "SELECT TS FROM SENSOR WHERE STATION = 'Dongsi' AND TS BETWEEN 3 AND 5",
    "SELECT PM25 FROM SENSOR WHERE STATION IN ('Dongsi', 'Guanyuan') AND TS = 7",
    "SELECT PM25 FROM SENSOR WHERE STATION IN ('Dongsi', 'Guanyuan') AND TS < 3",
    "SELECT PM25 FROM SENSOR WHERE STATION = 'Dongsi' AND STATION = 'Guanyuan'",
    "SELECT STATION, COUNT(*), MAX(PM25) FROM SENSOR GROUP BY STATION",
    "SELECT CITY, AVG(TEMP) FROM SENSOR GROUP BY CITY HAVING COUNT(*) > 2",
    "SELECT STATION, TS, PM25 FROM SENSOR ORDER BY PM25 DESC LIMIT 10",
    "SELECT STATION, TS FROM SENSOR WHERE STATION = 'Dongsi' ORDER BY TS LIMIT 24",
    "SELECT DISTINCT CITY FROM SENSOR ORDER BY CITY LIMIT 2 OFFSET 1",
    "SELECT STATION, TS FROM SENSOR WHERE PM25 + 1 > 100 LIMIT 5",
    "SELECT COUNT(*), SUM(PM25) FROM SENSOR WHERE PM25 > 50",
    "SELECT /*+ SKIP_SCAN */ STATION, PM25 FROM SENSOR WHERE TS = 7",
    "SELECT STATION, TS, PM25 FROM SENSOR WHERE CITY = 'Beijing'",
    "SELECT /*+ NO_INDEX */ STATION, TS FROM SENSOR WHERE CITY = 'Beijing'",
    "SELECT /*+ INDEX(SENSOR IDX_CITY) */ CITY, STATION FROM SENSOR WHERE CITY > 'A' "
    "AND STATION <> 'x' ORDER BY CITY",
    "SELECT 1 + 1 AS TWO",
    "UPSERT INTO SENSOR (STATION, TS, PM25) VALUES ('Zz', 1, 2), ('Zz', 2, 3)",
    "UPSERT INTO SENSOR (STATION, TS, PM25) SELECT STATION, TS + 100, PM25 FROM SENSOR "
    "WHERE STATION = 'Dongsi' AND TS < 3",
    "DELETE FROM SENSOR WHERE STATION = 'Nowhere'",
};

static void json_vs_text(void **state) {
  (void)state;
  tdb *t = tdb_open();
  q(t, "CREATE TABLE SENSOR (STATION VARCHAR NOT NULL, TS INTEGER NOT NULL, READINGS.PM25 "
       "INTEGER, READINGS.TEMP DOUBLE, META.CITY VARCHAR CONSTRAINT PK PRIMARY KEY (STATION, "
       "TS DESC))");
  const char *st[] = {"Aotizhongxin", "Dongsi", "Guanyuan"};
  char sql[256];
  for (int i = 0; i < 3; i++)
    for (int h = 0; h < 24; h++) {
      snprintf(sql, sizeof sql, "UPSERT INTO SENSOR VALUES ('%s', %d, %d, %d.5, %s)", st[i], h,
               (i * 37 + h * 11) % 200, h - 5, h % 2 ? "'Beijing'" : "NULL");
      q(t, sql);
    }
  q(t, "CREATE INDEX IDX_CITY ON SENSOR (CITY)");
  assert_int_equal(kv_flush(t->db, NULL), KV_OK);
  for (size_t i = 0; i < sizeof stmts / sizeof stmts[0]; i++) {
    compare(t, stmts[i], false);
    compare(t, stmts[i], true);
  }
  /* the forms of the option list */
  char *a = rows_of(t, "EXPLAIN ANALYZE (FORMAT JSON) SELECT COUNT(*) FROM SENSOR");
  char *b = rows_of(t, "EXPLAIN (FORMAT JSON, ANALYZE) SELECT COUNT(*) FROM SENSOR");
  assert_non_null(strstr(a, "\"analyze\": true"));
  assert_non_null(strstr(b, "\"analyze\": true"));
  free(a);
  free(b);
  a = rows_of(t, "EXPLAIN (FORMAT TEXT) SELECT COUNT(*) FROM SENSOR");
  assert_non_null(strstr(a, "FULL SCAN OVER SENSOR"));
  free(a);
  assert_non_null(strstr(qerr(t, "EXPLAIN (FORMAT XML) SELECT 1", EXEC_SYNTAX), "TEXT or JSON"));
  assert_non_null(strstr(qerr(t, "EXPLAIN (COSTS) SELECT 1", EXEC_SYNTAX), "unknown EXPLAIN option COSTS"));
  qerr(t, "EXPLAIN () SELECT 1", EXEC_SYNTAX);
  tdb_close(t);
}

/* A string with quotes, backslashes and control characters stays well-formed JSON. */
static void escapes(void **state) {
  (void)state;
  tdb *t = tdb_open();
  q(t, "CREATE TABLE \"we\"\"ird\" (K VARCHAR NOT NULL PRIMARY KEY, V VARCHAR)");
  char *doc = rows_of(t, "EXPLAIN (FORMAT JSON) SELECT V FROM \"we\"\"ird\" WHERE K = 'a\\\"b' "
                         "AND V = 'tab\there'");
  char err[200];
  tj *root = tj_parse(doc, strlen(doc), err, sizeof err);
  if (!root) fail_msg("not well-formed: %s\n%s", err, doc);
  const tj *plan = tj_get(root, "plan");
  assert_string_equal(tj_get(plan->kids[0], "over")->s, "we\"ird");
  assert_non_null(strstr(tj_get(plan->kids[0], "bounds")->s, "a\\\"b"));
  tj_free(root);
  free(doc);
  tdb_close(t);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(json_vs_text), cmocka_unit_test(escapes)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
