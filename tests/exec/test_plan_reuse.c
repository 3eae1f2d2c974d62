/*
** tests/exec/test_plan_reuse.c: plan reuse of prepared statements (exec/engine_run.c,
** planner/plan_reuse.h). One prepared statement is kept and run again and again with new
** bindings; every answer must equal that of a fresh prepare of the same SQL with the same
** values (which plans in full). The data changes between runs: rows in store files and in
** the memstore, several versions of a row, deleted rows (tombstones), NULL columns, rows
** expired by TTL. Also: the same values reuse the plan as it is, new values re-plan, a DDL
** between runs (table dropped and made again, an index created or dropped after prepare)
** is seen by the next run, and EXPLAIN of a prepared statement shows the bound values of
** each run. exec_get_plan_stats tells which path each run took.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "test_engine_util.h"
#include "testutil.h"

#define N_QUERIES 9

/* Prepared statements with parameters, of the kinds the planner treats differently: point
** lookup, key prefix, key range with a pushed filter and LIMIT, IN list (skip scan) with
** LIMIT and OFFSET, aggregates, a filter with OR and IS NULL, LIKE, grouping. */
static const char *const QUERIES[N_QUERIES] = {
    "SELECT A, B, C, D FROM T WHERE A = ? AND B = ?",
    "SELECT A, B, C, D FROM T WHERE A = ? ORDER BY B DESC",
    "SELECT A, B, C FROM T WHERE A BETWEEN ? AND ? AND C > ? ORDER BY A, B DESC LIMIT ?",
    "SELECT A, B FROM T WHERE A IN (?, ?, ?) ORDER BY A DESC, B LIMIT ? OFFSET ?",
    "SELECT COUNT(*), SUM(C), MIN(D) FROM T WHERE A >= ? AND D LIKE ?",
    "SELECT A, C FROM T WHERE C IS NULL OR C > ? ORDER BY A, B DESC",
    "SELECT B, COUNT(*), MAX(C) FROM T WHERE A < ? GROUP BY B ORDER BY B",
    "SELECT A, B, D FROM T WHERE A > ? AND D = ? ORDER BY A DESC, B",
    "SELECT A, B, C FROM T WHERE D = ? ORDER BY A, B DESC"};
/* Parameter kinds per query: i integer key value, s B-like string, d double, n LIMIT /
** OFFSET count, p LIKE pattern, w D-like string. */
static const char *const KINDS[N_QUERIES] = {"is", "i", "iidn", "iiinn", "ip", "d", "i", "iw", "w"};

#define N_KEYS 24
static const char *const BS[4] = {"x", "yy", "z", ""};
static const char *const DS[3] = {"red", "green", "blue"};

static int n_params(int qi) { return (int)strlen(KINDS[qi]); }

/* A random value for a parameter of kind k; NULL one time in 12. */
static cat_value rand_param(uint64_t *rs, char k, char *buf) {
  if (tu_below(rs, 12) == 0 && k != 'n') return cat_v_null(cat_type_of(0));
  switch (k) {
    case 'i':
      if (tu_below(rs, 6) == 0) /* a fraction: coerced to the column's type at the bound */
        return cat_v_double((double)tu_below(rs, N_KEYS + 4) - 2.5);
      return cat_v_int(CAT_T_INTEGER, (int64_t)tu_below(rs, N_KEYS + 4) - 2);
    case 's': {
      const char *s = BS[tu_below(rs, 4)];
      return cat_v_str(CAT_T_VARCHAR, s, strlen(s));
    }
    case 'd': return cat_v_double((double)tu_below(rs, 40) / 4.0 - 2.0);
    case 'n': return cat_v_int(CAT_T_BIGINT, (int64_t)tu_below(rs, 6));
    case 'p': {
      static const char *const P[4] = {"r%", "%e%", "blue", "%"};
      const char *s = P[tu_below(rs, 4)];
      return cat_v_str(CAT_T_VARCHAR, s, strlen(s));
    }
    default: {
      const char *s = DS[tu_below(rs, 3)];
      snprintf(buf, 16, "%s", s);
      return cat_v_str(CAT_T_VARCHAR, buf, strlen(buf));
    }
  }
}

/* The rows of one run of the kept statement st as text (as tdb_runp formats them); the
** statement is reset, not finalized. Returns the exec code of the last step. */
static int run_kept(exec_stmt *st, int np, const cat_value *params, char **out, exec_error *err) {
  size_t len = 0, cap = 0;
  free(*out);
  *out = NULL;
  tdb_cat(out, &len, &cap, "", 0);
  exec_reset(st);
  for (int i = 0; i < np; i++) assert_int_equal(exec_bind(st, i + 1, &params[i], err), EXEC_OK);
  int rc;
  while ((rc = exec_step(st, err)) == EXEC_ROW) {
    int n = exec_column_count(st); /* known after the first step (a DDL may change it) */
    for (int i = 0; i < n; i++) {
      char buf[512];
      const cat_value *v = exec_column_value(st, i);
      size_t k;
      if (!v->is_null && (v->type.id == CAT_T_DOUBLE || v->type.id == CAT_T_FLOAT))
        k = (size_t)snprintf(buf, sizeof buf, "%.17g", v->u.d);
      else
        k = cat_text_format(v, buf, sizeof buf);
      if (k >= sizeof buf) k = sizeof buf - 1;
      if (i) tdb_cat(out, &len, &cap, "|", 1);
      tdb_cat(out, &len, &cap, buf, k);
    }
    tdb_cat(out, &len, &cap, "\n", 1);
  }
  return rc;
}

/* The same statement freshly prepared (planned in full) with the same values. */
static char *fresh(tdb *t, const char *sql, int np, const cat_value *params, int *rc) {
  *rc = tdb_runp(t, sql, np, params);
  return *rc == EXEC_DONE ? strdup(t->out) : NULL;
}

static void prepare(tdb *t, const char *sql, exec_stmt **st) {
  int rc = exec_prepare(t->s, sql, strlen(sql), st, NULL, &t->err);
  if (rc != EXEC_OK) fail_msg("%s: %s", sql, t->err.msg);
}

/* Write a random row of T (every column given; NULL C or D sometimes). */
static void write_row(tdb *t, uint64_t *rs) {
  char sql[256], c[32], d[16];
  if (tu_below(rs, 5) == 0) snprintf(c, sizeof c, "NULL");
  else snprintf(c, sizeof c, "%.2f", (double)tu_below(rs, 40) / 4.0 - 2.0);
  if (tu_below(rs, 6) == 0) snprintf(d, sizeof d, "NULL");
  else snprintf(d, sizeof d, "'%s'", DS[tu_below(rs, 3)]);
  snprintf(sql, sizeof sql, "UPSERT INTO T VALUES (%d, '%s', %s, %s)", (int)tu_below(rs, N_KEYS),
           BS[tu_below(rs, 4)], c, d);
  q(t, sql);
}

/* Change the data between runs: new rows and new versions (memstore), deletes
** (tombstones), a NULL set, now and then a flush to a new store file. */
static void churn(tdb *t, uint64_t *rs) {
  int n = 1 + (int)tu_below(rs, 6);
  for (int i = 0; i < n; i++) write_row(t, rs);
  char sql[160];
  switch (tu_below(rs, 6)) {
    case 0:
      snprintf(sql, sizeof sql, "DELETE FROM T WHERE A = %d", (int)tu_below(rs, N_KEYS));
      q(t, sql);
      break;
    case 1:
      snprintf(sql, sizeof sql, "UPSERT INTO T (A, B, C) VALUES (%d, '%s', NULL)",
               (int)tu_below(rs, N_KEYS), BS[tu_below(rs, 4)]);
      q(t, sql);
      break;
    case 2: assert_int_equal(kv_flush(t->db, 0), KV_OK); break;
    default: break;
  }
}

/* Many rebinds of kept statements against fresh prepares, with the data changing; with
** with_index, T has an index on D (a plan that chose it is made again in full each run). */
static void rebinds(const char *name, bool with_index) {
  uint64_t seed = tu_seed(name), rs = seed;
  tdb *t = tdb_open();
  q(t, "CREATE TABLE T (A INTEGER NOT NULL, B VARCHAR NOT NULL, C DOUBLE, D VARCHAR, "
       "CONSTRAINT PK PRIMARY KEY (A, B DESC))");
  if (with_index) q(t, "CREATE INDEX IX ON T (D) INCLUDE (C)");
  for (int i = 0; i < 150; i++) write_row(t, &rs);
  assert_int_equal(kv_flush(t->db, 0), KV_OK);
  for (int i = 0; i < 60; i++) write_row(t, &rs);
  exec_stmt *st[N_QUERIES];
  for (int i = 0; i < N_QUERIES; i++) prepare(t, QUERIES[i], &st[i]);
  cat_value last[N_QUERIES][8];
  char bufs[N_QUERIES][8][16];
  bool have_last[N_QUERIES] = {0};
  int rounds = (int)tu_scaled(2000, 200);
  char *kept = NULL;
  for (int r = 0; r < rounds; r++) {
    int qi = (int)tu_below(&rs, N_QUERIES), np = n_params(qi);
    cat_value p[8];
    if (have_last[qi] && tu_below(&rs, 3) == 0) {
      memcpy(p, last[qi], sizeof p); /* the same values again: the plan is reused */
    } else {
      for (int i = 0; i < np; i++) p[i] = rand_param(&rs, KINDS[qi][i], bufs[qi][i]);
      memcpy(last[qi], p, sizeof p);
      have_last[qi] = true;
    }
    int krc = run_kept(st[qi], np, p, &kept, &t->err);
    char kmsg[EXEC_ERRMSG_MAX];
    snprintf(kmsg, sizeof kmsg, "%s", t->err.msg);
    int frc;
    char *want = fresh(t, QUERIES[qi], np, p, &frc);
    if (krc != frc || (want && strcmp(kept, want) != 0))
      fail_msg("seed %llu round %d: %s\n kept (rc %d %s):\n%s\n fresh (rc %d %s):\n%s",
               (unsigned long long)seed, r, QUERIES[qi], krc, kmsg, kept, frc, t->err.msg,
               want ? want : "");
    free(want);
    if (tu_below(&rs, 2) == 0) churn(t, &rs);
  }
  if (with_index) {
    /* whether a kept statement's first plan chose the index depends on its first values
    ** and the data (D has three values, so the index is seldom cheaper; a kept plan that
    ** chose the table is re-planned without estimates after that): a statement prepared
    ** now, first run with a D value held by a single row, chooses it on every seed, and a
    ** plan that chose the index is planned in full again for new values */
    q(t, "UPSERT INTO T VALUES (1000, 'v', 1.5, 'violet')");
    exec_stmt *vs;
    prepare(t, QUERIES[8], &vs);
    for (int k = 0; k < 2; k++) {
      cat_value p = k ? cat_v_str(CAT_T_VARCHAR, "red", 3) : cat_v_str(CAT_T_VARCHAR, "violet", 6);
      int krc = run_kept(vs, 1, &p, &kept, &t->err), frc;
      char *want = fresh(t, QUERIES[8], 1, &p, &frc);
      assert_int_equal(krc, frc);
      assert_non_null(want);
      assert_string_equal(kept, want);
      if (!k) assert_string_equal(kept, "1000|v|1.5\n");
      free(want);
    }
    exec_plan_stats vst;
    exec_get_plan_stats(vs, &vst);
    assert_int_equal(vst.full, 2);
    exec_finalize(vs);
  }
  exec_plan_stats sum = {0, 0, 0, 0};
  for (int i = 0; i < N_QUERIES; i++) {
    exec_plan_stats s;
    exec_get_plan_stats(st[i], &s);
    sum.full += s.full;
    sum.rebuilt += s.rebuilt;
    sum.reused += s.reused;
    sum.patched += s.patched;
    /* no index and no DDL: each statement planned in full once, at its first run */
    if (!with_index) assert_true(s.full <= 1);
    exec_finalize(st[i]);
  }
  fprintf(stderr, "[%s] %d runs: %llu planned in full, %llu re-planned, %llu reused, %llu "
          "patched\n", name, rounds, (unsigned long long)sum.full,
          (unsigned long long)sum.rebuilt, (unsigned long long)sum.reused,
          (unsigned long long)sum.patched);
  assert_true(sum.rebuilt > 0);
  assert_true(sum.reused > 0);
  assert_true(sum.patched > 0); /* QUERIES[0] is a point lookup */
  free(kept);
  tdb_close(t);
}

static void rebinds_match_fresh(void **state) {
  (void)state;
  rebinds("rebinds_match_fresh", false);
}

static void rebinds_match_fresh_with_index(void **state) {
  (void)state;
  rebinds("rebinds_match_fresh_with_index", true);
}

/* TTL: rows expire between runs of a kept statement whose plan is reused as it is. */
static void ttl_expiry_between_runs(void **state) {
  (void)state;
  tdb *t = tdb_open();
  q(t, "CREATE TABLE E (K INTEGER PRIMARY KEY, V VARCHAR) TTL = 10");
  q(t, "UPSERT INTO E VALUES (1, 'old'), (2, 'old')");
  assert_int_equal(kv_flush(t->db, 0), KV_OK);
  kv_env_mem_set_time(t->env, 1500000000000LL + 6000);
  q(t, "UPSERT INTO E VALUES (3, 'new'), (2, 'newer')");
  exec_stmt *st;
  prepare(t, "SELECT K, V FROM E WHERE K >= ? ORDER BY K", &st);
  cat_value p = cat_v_int(CAT_T_INTEGER, 1);
  char *out = NULL;
  assert_int_equal(run_kept(st, 1, &p, &out, &t->err), EXEC_DONE);
  assert_string_equal(out, "1|old\n2|newer\n3|new\n");
  kv_env_mem_set_time(t->env, 1500000000000LL + 12000); /* the first rows are past TTL */
  assert_int_equal(run_kept(st, 1, &p, &out, &t->err), EXEC_DONE);
  assert_string_equal(out, "2|newer\n3|new\n");
  exec_plan_stats s;
  exec_get_plan_stats(st, &s);
  assert_int_equal(s.full, 1);
  assert_int_equal(s.reused, 1);
  free(out);
  exec_finalize(st);
  tdb_close(t);
}

/* A DDL between two runs is seen by the next run: the table dropped (error), made again
** with other columns (the new columns), and the plan made again in full. */
static void ddl_between_runs(void **state) {
  (void)state;
  tdb *t = tdb_open();
  q(t, "CREATE TABLE T (A INTEGER PRIMARY KEY, B VARCHAR, C DOUBLE)");
  q(t, "UPSERT INTO T VALUES (1, 'one', 1.5), (2, 'two', NULL)");
  exec_stmt *st;
  prepare(t, "SELECT * FROM T WHERE A = ?", &st);
  cat_value p = cat_v_int(CAT_T_INTEGER, 2);
  char *out = NULL;
  assert_int_equal(run_kept(st, 1, &p, &out, &t->err), EXEC_DONE);
  assert_string_equal(out, "2|two|NULL\n");
  assert_int_equal(exec_column_count(st), 3);
  assert_int_equal(run_kept(st, 1, &p, &out, &t->err), EXEC_DONE); /* reused */
  q(t, "DROP TABLE T");
  assert_int_equal(run_kept(st, 1, &p, &out, &t->err), EXEC_ERROR);
  assert_non_null(strstr(t->err.msg, "T"));
  q(t, "CREATE TABLE T (A INTEGER PRIMARY KEY, Z VARCHAR)");
  q(t, "UPSERT INTO T VALUES (2, 'zed'), (3, 'three')");
  assert_int_equal(run_kept(st, 1, &p, &out, &t->err), EXEC_DONE);
  assert_string_equal(out, "2|zed\n");
  assert_int_equal(exec_column_count(st), 2);
  assert_string_equal(exec_column_name(st, 1), "Z");
  p = cat_v_int(CAT_T_INTEGER, 3);
  assert_int_equal(run_kept(st, 1, &p, &out, &t->err), EXEC_DONE);
  assert_string_equal(out, "3|three\n");
  exec_plan_stats s;
  exec_get_plan_stats(st, &s);
  assert_int_equal(s.full, 2);    /* the first run, and the first after CREATE TABLE */
  assert_int_equal(s.reused, 1);  /* the second run */
  assert_int_equal(s.patched, 1); /* A = 3: the point key written into the kept plan */
  assert_int_equal(s.rebuilt, 0);
  free(out);
  exec_finalize(st);
  tdb_close(t);
}

/* An index created after prepare is used by the next run; dropped, the table scan comes
** back; a plan that chose an index is made again in full for new values; the answers
** equal fresh prepares all along. */
static void index_after_prepare(void **state) {
  (void)state;
  uint64_t seed = tu_seed("index_after_prepare"), rs = seed;
  tdb *t = tdb_open();
  q(t, "CREATE TABLE T (A INTEGER NOT NULL, B VARCHAR NOT NULL, C DOUBLE, D VARCHAR, "
       "CONSTRAINT PK PRIMARY KEY (A, B DESC))");
  for (int i = 0; i < 200; i++) write_row(t, &rs);
  assert_int_equal(kv_flush(t->db, 0), KV_OK);
  const char *sql = "SELECT A, B, D FROM T WHERE D = ? ORDER BY A, B DESC";
  exec_stmt *st;
  prepare(t, sql, &st);
  char *out = NULL;
  int frc;
  for (int phase = 0; phase < 3; phase++) {
    if (phase == 1) q(t, "CREATE INDEX IX ON T (D)");
    if (phase == 2) q(t, "DROP INDEX IX ON T");
    for (int i = 0; i < 4; i++) {
      const char *d = DS[i % 3];
      cat_value p = cat_v_str(CAT_T_VARCHAR, d, strlen(d));
      assert_int_equal(run_kept(st, 1, &p, &out, &t->err), EXEC_DONE);
      const char *kind = exec_scan_kind(st);
      char *want = fresh(t, sql, 1, &p, &frc);
      assert_int_equal(frc, EXEC_DONE);
      if (strcmp(out, want) != 0)
        fail_msg("seed %llu phase %d: kept\n%s\nfresh\n%s", (unsigned long long)seed, phase, out,
                 want);
      free(want);
      /* the index answers D = ? with a range scan; the table alone needs a full scan */
      assert_string_equal(kind, phase == 1 ? "RANGE SCAN" : "FULL SCAN");
      write_row(t, &rs);
    }
  }
  exec_plan_stats s;
  exec_get_plan_stats(st, &s);
  /* phase 0: 1 full + 3 rebuilt; phase 1: an index plan, 4 full; phase 2: 1 full + 3 */
  assert_int_equal(s.full, 6);
  assert_int_equal(s.rebuilt, 6);
  assert_int_equal(s.reused, 0);
  free(out);
  exec_finalize(st);
  tdb_close(t);
}

/* EXPLAIN of a prepared statement plans each run in full and shows that run's values. */
static void explain_shows_each_binding(void **state) {
  (void)state;
  tdb *t = tdb_open();
  q(t, "CREATE TABLE T (A INTEGER PRIMARY KEY, B VARCHAR)");
  q(t, "UPSERT INTO T VALUES (1, 'one'), (2, 'two')");
  exec_stmt *st;
  prepare(t, "EXPLAIN SELECT B FROM T WHERE A = ?", &st);
  char *out = NULL;
  cat_value p = cat_v_int(CAT_T_INTEGER, 1);
  assert_int_equal(run_kept(st, 1, &p, &out, &t->err), EXEC_DONE);
  assert_non_null(strstr(out, "POINT LOOKUP"));
  assert_non_null(strstr(out, "[1]"));
  p = cat_v_int(CAT_T_INTEGER, 2);
  assert_int_equal(run_kept(st, 1, &p, &out, &t->err), EXEC_DONE);
  assert_non_null(strstr(out, "[2]"));
  assert_null(strstr(out, "[1]"));
  p = cat_v_null(cat_type_of(0));
  assert_int_equal(run_kept(st, 1, &p, &out, &t->err), EXEC_DONE);
  assert_null(strstr(out, "POINT LOOKUP"));
  exec_plan_stats s;
  exec_get_plan_stats(st, &s);
  assert_int_equal(s.full, 3);
  assert_int_equal(s.rebuilt + s.reused, 0);
  free(out);
  exec_finalize(st);
  tdb_close(t);
}

/* Strings bound for a kept plan are copied: rebinding (and freeing the caller's buffer)
** with the same bytes reuses the plan and still finds the row; NULL and back. */
static void string_params_outlive_binds(void **state) {
  (void)state;
  tdb *t = tdb_open();
  q(t, "CREATE TABLE S (K VARCHAR PRIMARY KEY, V INTEGER)");
  q(t, "UPSERT INTO S VALUES ('ab', 1), ('abc', 2), ('b', 3)");
  exec_stmt *st;
  prepare(t, "SELECT K, V FROM S WHERE K >= ? AND K < ? ORDER BY K LIMIT ?", &st);
  char *out = NULL;
  for (int i = 0; i < 3; i++) {
    char *lo = strdup("ab"), *hi = strdup("b");
    cat_value p[3] = {cat_v_str(CAT_T_VARCHAR, lo, 2), cat_v_str(CAT_T_VARCHAR, hi, 1),
                      cat_v_int(CAT_T_BIGINT, 5)};
    exec_reset(st);
    for (int k = 0; k < 3; k++) assert_int_equal(exec_bind(st, k + 1, &p[k], &t->err), EXEC_OK);
    memset(lo, 'z', 2); /* the statement holds its own copies */
    memset(hi, 'z', 1);
    free(lo);
    free(hi);
    p[0] = cat_v_str(CAT_T_VARCHAR, "ab", 2);
    p[1] = cat_v_str(CAT_T_VARCHAR, "b", 1);
    assert_int_equal(run_kept(st, 3, p, &out, &t->err), EXEC_DONE);
    assert_string_equal(out, "ab|1\nabc|2\n");
  }
  cat_value n[3] = {cat_v_null(cat_type_of(0)), cat_v_str(CAT_T_VARCHAR, "b", 1),
                    cat_v_int(CAT_T_BIGINT, 1)};
  assert_int_equal(run_kept(st, 3, n, &out, &t->err), EXEC_DONE);
  assert_string_equal(out, "");
  n[0] = cat_v_str(CAT_T_VARCHAR, "", 0);
  assert_int_equal(run_kept(st, 3, n, &out, &t->err), EXEC_DONE);
  assert_string_equal(out, "ab|1\n");
  exec_plan_stats s;
  exec_get_plan_stats(st, &s);
  assert_int_equal(s.full, 1);
  assert_int_equal(s.reused, 2);
  assert_int_equal(s.rebuilt, 2);
  free(out);
  exec_finalize(st);
  tdb_close(t);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(rebinds_match_fresh),
      cmocka_unit_test(rebinds_match_fresh_with_index),
      cmocka_unit_test(ttl_expiry_between_runs),
      cmocka_unit_test(ddl_between_runs),
      cmocka_unit_test(index_after_prepare),
      cmocka_unit_test(explain_shows_each_binding),
      cmocka_unit_test(string_params_outlive_binds),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
