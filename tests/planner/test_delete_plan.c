/*
** tests/planner/test_delete_plan.c: DELETE takes the plan a SELECT of its WHERE would get
** (planner/select.c plan_delete_scan_build), index scans included: EXPLAIN DELETE shows
** the index range scan and the costs; a randomized run checks that DELETEs through each
** index (covered and uncovered, chosen by cost or forced by a hint) and through the table
** (NO_INDEX) remove exactly the rows a model says match, leave every index in step (CHECK
** INDEX), inside and outside transactions, with several versions of a row, NULLs, rows
** deleted and written again, several store files and memstore cells in play. An
** IMMUTABLE_ROWS table keeps the table scan (a stale index row must not decide what is
** deleted).
*/
#include "../exec/test_engine_util.h"
#include "../testutil.h"

#define NK 48 /* keys 0..NK-1 */

static const char schema[] =
    "CREATE TABLE T (K INTEGER NOT NULL PRIMARY KEY, A.V INTEGER, A.W VARCHAR, B.X INTEGER)";

/* The model: one row per key. */
typedef struct mrow {
  bool present; /* the row exists */
  bool v_null;  /* V is NULL */
  int v;        /* V */
  int w;        /* W is 'w<w>', or NULL when w < 0 */
  bool x_null;  /* X is NULL */
  int x;        /* X */
} mrow;

static void setup_table(tdb *t) {
  q(t, schema);
  q(t, "CREATE INDEX IV ON T (V)");
  q(t, "CREATE INDEX IW ON T (W) INCLUDE (V)");
  q(t, "CREATE INDEX IX ON T (X DESC, V)");
}

static void check_indexes(tdb *t, uint64_t seed, const char *after) {
  static const char *const ix[] = {"IV", "IW", "IX"};
  for (int i = 0; i < 3; i++) {
    char sql[64];
    snprintf(sql, sizeof sql, "CHECK INDEX %s ON T", ix[i]);
    const char *o = q(t, sql);
    if (!strstr(o, "MISSING|0\n") || !strstr(o, "EXTRA|0\n") || !strstr(o, "MISMATCHED|0\n"))
      fail_msg("seed %llu: index %s out of step after %s:\n%s", (unsigned long long)seed,
               ix[i], after, o);
  }
}

/* The model's rows as "K|V|W|X\n" in key order, the way q() prints SELECT K, V, W, X. */
static void model_text(const mrow *m, char *buf, size_t cap) {
  size_t n = 0;
  buf[0] = 0;
  for (int k = 0; k < NK; k++) {
    if (!m[k].present) continue;
    char v[16], w[16], x[16];
    if (m[k].v_null) snprintf(v, sizeof v, "NULL");
    else snprintf(v, sizeof v, "%d", m[k].v);
    if (m[k].w < 0) snprintf(w, sizeof w, "NULL");
    else snprintf(w, sizeof w, "w%d", m[k].w);
    if (m[k].x_null) snprintf(x, sizeof x, "NULL");
    else snprintf(x, sizeof x, "%d", m[k].x);
    n += (size_t)snprintf(buf + n, cap - n, "%d|%s|%s|%s\n", k, v, w, x);
  }
}

/* One random WHERE over the indexed columns, its text in sql and its truth for row r. */
typedef struct pred {
  int kind;  /* which template */
  int a, b;  /* its constants */
} pred;

static bool pred_true(const pred *p, const mrow *r) {
  switch (p->kind) {
    case 0: return !r->v_null && r->v == p->a;
    case 1: return !r->v_null && r->v >= p->a && r->v <= p->b;
    case 2: return r->w == p->a;
    case 3: return r->w == p->a && !r->v_null && r->v > p->b;
    case 4: return !r->v_null && (r->v == p->a || r->v == p->b) && r->x_null;
    case 5: return !r->x_null && r->x > p->a;
    default: return !r->x_null && r->x == p->a && !r->v_null && r->v < p->b;
  }
}

static void pred_text(const pred *p, char *buf, size_t cap) {
  switch (p->kind) {
    case 0: snprintf(buf, cap, "V = %d", p->a); break;
    case 1: snprintf(buf, cap, "V BETWEEN %d AND %d", p->a, p->b); break;
    case 2: snprintf(buf, cap, "W = 'w%d'", p->a); break;
    case 3: snprintf(buf, cap, "W = 'w%d' AND V > %d", p->a, p->b); break;
    case 4: snprintf(buf, cap, "V IN (%d, %d) AND X IS NULL", p->a, p->b); break;
    case 5: snprintf(buf, cap, "X > %d", p->a); break;
    default: snprintf(buf, cap, "X = %d AND V < %d", p->a, p->b); break;
  }
}

/* UPSERT a random new version of key k (all columns, some NULL) into t and the model. */
static void write_row(tdb *t, mrow *m, int k, uint64_t *rng) {
  mrow r = {true, tu_below(rng, 6) == 0, (int)tu_below(rng, 10), (int)tu_below(rng, 7) - 1,
            tu_below(rng, 4) == 0, (int)tu_below(rng, 8)};
  char sql[160], v[16], w[16], x[16];
  if (r.v_null) snprintf(v, sizeof v, "NULL");
  else snprintf(v, sizeof v, "%d", r.v);
  if (r.w < 0) snprintf(w, sizeof w, "NULL");
  else snprintf(w, sizeof w, "'w%d'", r.w);
  if (r.x_null) snprintf(x, sizeof x, "NULL");
  else snprintf(x, sizeof x, "%d", r.x);
  snprintf(sql, sizeof sql, "UPSERT INTO T VALUES (%d, %s, %s, %s)", k, v, w, x);
  q(t, sql);
  m[k] = r;
}

static void randomized(void **state) {
  (void)state;
  uint64_t seed = tu_seed("delete_plan");
  uint64_t rng = seed;
  tdb *t = tdb_open();
  setup_table(t);
  mrow m[NK];
  memset(m, 0, sizeof m);
  for (int k = 0; k < NK; k++) write_row(t, m, k, &rng);
  static const char *const hints[] = {"", "/*+ INDEX(T IV) */ ", "/*+ INDEX(T IW) */ ",
                                      "/*+ INDEX(T IX) */ ", "/*+ NO_INDEX */ "};
  int rounds = (int)tu_scaled(400, 60);
  int via_index = 0;
  bool in_txn = false;
  char *want = malloc(NK * 64 + 1);
  for (int round = 0; round < rounds; round++) {
    int op = (int)tu_below(&rng, 10);
    if (op < 4) { /* new versions of a few rows (a deleted row comes back) */
      for (int i = (int)tu_below(&rng, 4); i >= 0; i--)
        write_row(t, m, (int)tu_below(&rng, NK), &rng);
    } else if (op == 4 && !in_txn) {
      assert_int_equal(kv_flush(t->db, NULL), KV_OK);
      if (tu_below(&rng, 4) == 0) assert_int_equal(kv_compact(t->db, NULL, false), KV_OK);
    } else if (op == 5) { /* open or close a transaction */
      q(t, in_txn ? "COMMIT" : "BEGIN");
      in_txn = !in_txn;
    } else {
      pred p = {(int)tu_below(&rng, 7), (int)tu_below(&rng, 10), (int)tu_below(&rng, 10)};
      if (p.kind == 2 || p.kind == 3) p.a = (int)tu_below(&rng, 6);
      if (p.kind == 5 || p.kind == 6) p.a = (int)tu_below(&rng, 8);
      if (p.kind == 1 && p.b < p.a) p.b = p.a + (int)tu_below(&rng, 3);
      char where[96], sql[256];
      pred_text(&p, where, sizeof where);
      const char *h = hints[tu_below(&rng, 5)];
      snprintf(sql, sizeof sql, "EXPLAIN DELETE %sFROM T WHERE %s", h, where);
      if (strstr(q(t, sql), "RANGE SCAN OVER T.I") || strstr(t->out, "FULL SCAN OVER T.I"))
        via_index++;
      snprintf(sql, sizeof sql, "DELETE %sFROM T WHERE %s", h, where);
      q(t, sql);
      for (int k = 0; k < NK; k++)
        if (m[k].present && pred_true(&p, &m[k])) m[k].present = false;
      model_text(m, want, NK * 64 + 1);
      const char *got = q(t, "SELECT K, V, W, X FROM T ORDER BY K");
      if (strcmp(got, want) != 0)
        fail_msg("seed %llu round %d: %s%s\n--- want\n%s--- got\n%s", (unsigned long long)seed,
                 round, sql, in_txn ? " (in a transaction)" : "", want, got);
      if (!in_txn && tu_below(&rng, 3) == 0) check_indexes(t, seed, sql);
    }
  }
  if (in_txn) q(t, "COMMIT");
  check_indexes(t, seed, "the last round");
  model_text(m, want, NK * 64 + 1);
  assert_string_equal(q(t, "SELECT K, V, W, X FROM T ORDER BY K"), want);
  /* the hints and the costs sent a good share of the DELETEs through an index */
  if (via_index < rounds / 20)
    fail_msg("seed %llu: only %d of the DELETEs used an index", (unsigned long long)seed,
             via_index);
  free(want);
  tdb_close(t);
}

/* EXPLAIN DELETE shows the index the SELECT of the same WHERE would use, with its COST line;
** EXPLAIN ANALYZE DELETE counts the lookups of an uncovered index; the table scan stays for
** a WHERE no index serves and under NO_INDEX. */
static void explain_delete(void **state) {
  (void)state;
  tdb *t = tdb_open();
  setup_table(t);
  char sql[128];
  for (int k = 0; k < 200; k++) {
    snprintf(sql, sizeof sql, "UPSERT INTO T VALUES (%d, %d, 'w%d', %d)", k, k % 50, k % 40,
             k % 7);
    q(t, sql);
  }
  assert_int_equal(kv_flush(t->db, NULL), KV_OK);
  const char *sel = explain(t, "EXPLAIN SELECT K FROM T WHERE V = 7");
  assert_non_null(strstr(sel, "RANGE SCAN OVER T.IV [7, *] .. [7, *]\n"));
  const char *e = explain(t, "EXPLAIN DELETE FROM T WHERE V = 7");
  assert_non_null(strstr(e, "DELETE ROWS FROM T\nRANGE SCAN OVER T.IV [7, *] .. [7, *]\n"));
  assert_non_null(strstr(e, "    COST: T (full scan) "));
  assert_non_null(strstr(e, "[chosen]"));
  e = explain(t, "EXPLAIN DELETE FROM T WHERE W = 'w3' AND V > 2");
  assert_non_null(strstr(e, "RANGE SCAN OVER T.IW ['w3', *] .. ['w3', *]\n"));
  e = explain(t, "EXPLAIN DELETE /*+ NO_INDEX */ FROM T WHERE V = 7");
  assert_non_null(strstr(e, "DELETE ROWS FROM T\nFULL SCAN OVER T\n"));
  e = explain(t, "EXPLAIN DELETE FROM T WHERE K = 7");
  assert_non_null(strstr(e, "DELETE ROWS FROM T\nPOINT LOOKUP ON 1 KEY OVER T [7]\n"));
  /* uncovered: V's index, W read from the looked-up row */
  e = explain(t, "EXPLAIN ANALYZE DELETE /*+ INDEX(T IV) */ FROM T WHERE V = 7 AND W <> 'w7'");
  assert_non_null(strstr(e, "DELETE ROWS FROM T  (actual rows in=3 out=3)\n"
                            "RANGE SCAN OVER T.IV [7, *] .. [7, *]  (actual rows examined=4 "));
  assert_non_null(strstr(e, "(actual lookups=4 found=4)\n"));
  assert_non_null(strstr(e, "    CLIENT FILTER BY W <> 'w7' (after the lookup)  (actual rows in=4 "
                            "out=3)\n"));
  assert_string_equal(q(t, "SELECT K FROM T WHERE V = 7 ORDER BY K"), "7\n");
  assert_string_equal(q(t, "SELECT COUNT(*) FROM T"), "197\n");
  /* a LIMIT counts the rows deleted, whatever the plan */
  q(t, "DELETE FROM T WHERE V = 8 LIMIT 2");
  assert_string_equal(q(t, "SELECT COUNT(*) FROM T WHERE V = 8"), "2\n");
  check_indexes(t, 0, "the EXPLAIN ANALYZE DELETE");
  tdb_close(t);
}

/* IMMUTABLE_ROWS: an updated row leaves its old index row behind (docs/INDEXES.md); a
** DELETE by the old value must not remove the row, which no longer has it. */
static void immutable_rows_table_scan(void **state) {
  (void)state;
  tdb *t = tdb_open();
  q(t, "CREATE TABLE I (K INTEGER NOT NULL PRIMARY KEY, V INTEGER) IMMUTABLE_ROWS = true");
  q(t, "CREATE INDEX IIV ON I (V)");
  q(t, "UPSERT INTO I VALUES (1, 10), (2, 20)");
  q(t, "UPSERT INTO I VALUES (1, 11)"); /* the index keeps a stale (10, 1) */
  const char *e = explain(t, "EXPLAIN DELETE FROM I WHERE V = 10");
  assert_non_null(strstr(e, "DELETE ROWS FROM I\nFULL SCAN OVER I\n"));
  q(t, "DELETE FROM I WHERE V = 10");
  assert_string_equal(q(t, "SELECT K, V FROM I ORDER BY K"), "1|11\n2|20\n");
  tdb_close(t);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(explain_delete),
                                     cmocka_unit_test(immutable_rows_table_scan),
                                     cmocka_unit_test(randomized)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
