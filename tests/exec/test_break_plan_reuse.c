/*
** tests/exec/test_break_plan_reuse.c: adversarial checks of plan reuse (exec/engine_run.c,
** planner/plan_reuse.h) beyond test_plan_reuse.c: shapes whose key range kind changes with
** the values (row value constructors, OR of key terms that merge or not, IN with repeats,
** LIKE on a key column with a prefix or a leading wildcard, a DESC VARCHAR key column,
** BETWEEN whose bounds cross), parameters in the projection, values of other types (text
** into an INTEGER key, fractions, beyond the column's range, text that does not convert),
** LIMIT/OFFSET from parameters, many statements kept at once and stepped in turn, a run
** reset half way through its rows, an UPSERT SELECT with parameters, and CREATE/DROP INDEX
** and flushes/compactions between runs. Oracle: a fresh prepare of the same SQL with the
** same values (planned in full); codes must agree too. Seeded (tu_seed).
*/
#include "test_engine_util.h"
#include "testutil.h"

#define NQ 12
static const char *const QS[NQ] = {
    "SELECT A, B, C FROM T WHERE (A, B) > (?, ?) ORDER BY A, B DESC LIMIT 20",
    "SELECT A, B FROM T WHERE A = ? OR A = ? OR A BETWEEN ? AND ?",
    "SELECT A, B, C FROM T WHERE A IN (?, ?, ?) AND B = ?",
    "SELECT A, B FROM T WHERE A = ? AND B LIKE ?",
    "SELECT A, B, D FROM T WHERE A BETWEEN ? AND ? AND B < ? ORDER BY A DESC, B",
    "SELECT ?, A, C * ? FROM T WHERE A = ? ORDER BY B DESC",
    "SELECT COUNT(*), SUM(C), MAX(D) FROM T WHERE C > ? AND C <= ?",
    "SELECT A, B FROM T WHERE A >= ? ORDER BY A, B DESC LIMIT ? OFFSET ?",
    "SELECT B, COUNT(*) FROM T WHERE A < ? AND D <> ? GROUP BY B ORDER BY B",
    "SELECT A, B, D FROM T WHERE D = ? ORDER BY A, B DESC",
    "SELECT A, B FROM T WHERE B = ? AND A > ? ORDER BY A, B DESC",
    "SELECT DISTINCT D FROM T WHERE A <= ? AND C IS NOT NULL ORDER BY D",
};
/* kinds: i key integer, s B string, d double, n count, p pattern, w D string */
static const char *const KS[NQ] = {"is", "iiii", "iiis", "ip", "iis", "did", "dd",
                                   "inn", "iw", "w", "si", "i"};

#define NKEYS 30
static const char *const BS[5] = {"a", "ab", "b", "", "zz"};
static const char *const DS[3] = {"red", "green", "blue"};

static cat_value rparam(uint64_t *rs, char k, char *buf, size_t cap) {
  int r = (int)tu_below(rs, 16);
  if (r == 0) return cat_v_null(cat_type_of(0));
  switch (k) {
    case 'i':
      if (r == 1) return cat_v_double((double)tu_below(rs, NKEYS) - 0.5);
      if (r == 2) { /* text that converts */
        snprintf(buf, cap, "%d", (int)tu_below(rs, NKEYS));
        return cat_v_str(CAT_T_VARCHAR, buf, strlen(buf));
      }
      if (r == 3) return cat_v_int(CAT_T_BIGINT, tu_below(rs, 2) ? 5000000000LL : -5000000000LL);
      if (r == 4) return cat_v_double(tu_below(rs, 2) ? 1e30 : -1e30);
      return cat_v_int(CAT_T_INTEGER, (int64_t)tu_below(rs, NKEYS + 4) - 2);
    case 's': {
      const char *s = BS[tu_below(rs, 5)];
      return cat_v_str(CAT_T_VARCHAR, s, strlen(s));
    }
    case 'd':
      if (r == 1) return cat_v_int(CAT_T_INTEGER, (int64_t)tu_below(rs, 10));
      return cat_v_double((double)tu_below(rs, 40) / 4.0 - 2.0);
    case 'n':
      if (r == 1) return cat_v_int(CAT_T_INTEGER, -1);
      return cat_v_int(CAT_T_BIGINT, (int64_t)tu_below(rs, 8));
    case 'p': {
      static const char *const P[6] = {"a%", "%b", "a_", "", "%", "ab"};
      const char *s = P[tu_below(rs, 6)];
      return cat_v_str(CAT_T_VARCHAR, s, strlen(s));
    }
    default: {
      const char *s = DS[tu_below(rs, 3)];
      snprintf(buf, cap, "%s", s);
      return cat_v_str(CAT_T_VARCHAR, buf, strlen(buf));
    }
  }
}

/* Append the current row of st to out. */
static void row_text(exec_stmt *st, char **out, size_t *len, size_t *cap) {
  int n = exec_column_count(st);
  for (int i = 0; i < n; i++) {
    char buf[256];
    const cat_value *v = exec_column_value(st, i);
    size_t k;
    if (!v->is_null && (v->type.id == CAT_T_DOUBLE || v->type.id == CAT_T_FLOAT)) {
      k = (size_t)snprintf(buf, sizeof buf, "%.15g", v->u.d); /* as tdb_runp */
      if (strtod(buf, NULL) != v->u.d) k = (size_t)snprintf(buf, sizeof buf, "%.17g", v->u.d);
    } else
      k = cat_text_format(v, buf, sizeof buf);
    if (k >= sizeof buf) k = sizeof buf - 1;
    if (i) tdb_cat(out, len, cap, "|", 1);
    tdb_cat(out, len, cap, buf, k);
  }
  tdb_cat(out, len, cap, "\n", 1);
}

/* Bind and run kept statement st to the end; returns the last code, rows in *out. */
static int run_kept(exec_stmt *st, int np, const cat_value *p, char **out, exec_error *err) {
  size_t len = 0, cap = 0;
  free(*out);
  *out = NULL;
  tdb_cat(out, &len, &cap, "", 0);
  exec_reset(st);
  for (int i = 0; i < np; i++) {
    int rc = exec_bind(st, i + 1, &p[i], err);
    if (rc) return rc;
  }
  int rc;
  while ((rc = exec_step(st, err)) == EXEC_ROW) row_text(st, out, &len, &cap);
  return rc;
}

static void write_rows(tdb *t, uint64_t *rs, int n) {
  char sql[256];
  for (int i = 0; i < n; i++) {
    int a = (int)tu_below(rs, NKEYS);
    const char *b = BS[tu_below(rs, 5)];
    if (tu_below(rs, 6) == 0) {
      snprintf(sql, sizeof sql, "DELETE FROM T WHERE A = %d AND B = '%s'", a, b);
    } else {
      char c[32];
      if (tu_below(rs, 5) == 0) snprintf(c, sizeof c, "NULL");
      else snprintf(c, sizeof c, "%.2f", (double)tu_below(rs, 40) / 4.0 - 2.0);
      snprintf(sql, sizeof sql, "UPSERT INTO T VALUES (%d, '%s', %s, '%s')", a, b, c,
               DS[tu_below(rs, 3)]);
    }
    assert_int_equal(tdb_run(t, sql), EXEC_DONE);
  }
}

static void kept_statements(void **state) {
  (void)state;
  uint64_t seed = tu_seed("kept_statements"), rs = seed;
  tdb *t = tdb_open();
  q(t, "CREATE TABLE T (A INTEGER NOT NULL, B VARCHAR NOT NULL, C DOUBLE, D VARCHAR, "
       "CONSTRAINT PK PRIMARY KEY (A, B DESC)) BLOCKSIZE=512");
  write_rows(t, &rs, 300);
  exec_stmt *st[NQ];
  for (int i = 0; i < NQ; i++)
    assert_int_equal(exec_prepare(t->s, QS[i], strlen(QS[i]), &st[i], NULL, &t->err), EXEC_OK);
  char *got = NULL;
  int rounds = (int)tu_scaled(1500, 300);
  bool indexed = false;
  for (int r = 0; r < rounds; r++) {
    int qi = (int)tu_below(&rs, NQ);
    int np = (int)strlen(KS[qi]);
    cat_value p[8];
    char bufs[8][32];
    for (int i = 0; i < np; i++) p[i] = rparam(&rs, KS[qi][i], bufs[i], sizeof bufs[i]);
    /* sometimes the same values twice in a row (the plan as it is) */
    int reps = tu_below(&rs, 4) == 0 ? 2 : 1;
    for (int rep = 0; rep < reps; rep++) {
      exec_error e1;
      int rc1 = run_kept(st[qi], np, p, &got, &e1);
      int rc2 = tdb_runp(t, QS[qi], np, p);
      bool bad = rc1 != rc2 || (rc1 == EXEC_DONE && strcmp(got, t->out) != 0);
      if (bad) {
        fprintf(stderr, "seed %llu round %d: %s\n  kept (%d): %s%s\n  fresh (%d): %s%s\n",
                (unsigned long long)seed, r, QS[qi], rc1, got, rc1 == EXEC_DONE ? "" : e1.msg,
                rc2, rc2 == EXEC_DONE ? t->out : "", rc2 == EXEC_DONE ? "" : t->err.msg);
        for (int i = 0; i < np; i++) {
          char b[128];
          cat_text_format(&p[i], b, sizeof b);
          fprintf(stderr, "  param %d: type %d null %d '%s'\n", i + 1, p[i].type.id,
                  p[i].is_null, b);
        }
        fail_msg("kept and fresh statements disagree");
      }
    }
    /* a statement stepped part way and left there (reset by its next run) */
    if (tu_below(&rs, 5) == 0) {
      int oj = (int)tu_below(&rs, NQ);
      int onp = (int)strlen(KS[oj]);
      cat_value op[8];
      char ob[8][32];
      for (int i = 0; i < onp; i++) op[i] = rparam(&rs, KS[oj][i], ob[i], sizeof ob[i]);
      exec_reset(st[oj]);
      bool ok = true;
      for (int i = 0; i < onp && ok; i++) ok = exec_bind(st[oj], i + 1, &op[i], &t->err) == 0;
      if (ok) (void)exec_step(st[oj], &t->err);
    }
    switch (tu_below(&rs, 40)) {
      case 0: write_rows(t, &rs, 20); break;
      case 1: assert_int_equal(kv_flush(t->db, NULL), KV_OK); break;
      case 2: assert_int_equal(kv_compact(t->db, NULL, tu_below(&rs, 2)), KV_OK); break;
      case 3:
        if (indexed) q(t, "DROP INDEX IDX ON T");
        else q(t, "CREATE INDEX IDX ON T (D) INCLUDE (C)");
        indexed = !indexed;
        break;
      default: break;
    }
  }
  for (int i = 0; i < NQ; i++) exec_finalize(st[i]);
  free(got);
  tdb_close(t);
}

/* UPSERT SELECT with parameters, kept and run again: the target gets what fresh runs give. */
static void upsert_select(void **state) {
  (void)state;
  uint64_t seed = tu_seed("upsert_select"), rs = seed;
  tdb *t = tdb_open();
  q(t, "CREATE TABLE T (A INTEGER NOT NULL, B VARCHAR NOT NULL, C DOUBLE, D VARCHAR, "
       "CONSTRAINT PK PRIMARY KEY (A, B DESC))");
  q(t, "CREATE TABLE K1 (A INTEGER NOT NULL, B VARCHAR NOT NULL, C DOUBLE, "
       "CONSTRAINT PK PRIMARY KEY (A, B))");
  q(t, "CREATE TABLE K2 (A INTEGER NOT NULL, B VARCHAR NOT NULL, C DOUBLE, "
       "CONSTRAINT PK PRIMARY KEY (A, B))");
  write_rows(t, &rs, 200);
  const char *s1 = "UPSERT INTO K1 SELECT A, B, C * ? FROM T WHERE A BETWEEN ? AND ? AND C > ?";
  const char *s2 = "UPSERT INTO K2 SELECT A, B, C * ? FROM T WHERE A BETWEEN ? AND ? AND C > ?";
  exec_stmt *st = NULL;
  assert_int_equal(exec_prepare(t->s, s1, strlen(s1), &st, NULL, &t->err), EXEC_OK);
  char *got = NULL;
  int rounds = (int)tu_scaled(120, 40);
  for (int r = 0; r < rounds; r++) {
    cat_value p[4];
    char b[4][32];
    p[0] = rparam(&rs, 'd', b[0], sizeof b[0]);
    p[1] = rparam(&rs, 'i', b[1], sizeof b[1]);
    p[2] = rparam(&rs, 'i', b[2], sizeof b[2]);
    p[3] = rparam(&rs, 'd', b[3], sizeof b[3]);
    exec_error e1;
    int rc1 = run_kept(st, 4, p, &got, &e1);
    int rc2 = tdb_runp(t, s2, 4, p);
    if (rc1 != rc2) fprintf(stderr, "seed %llu round %d: %d (%s) vs %d (%s)\n",
                            (unsigned long long)seed, r, rc1, e1.msg, rc2, t->err.msg);
    assert_int_equal(rc1, rc2);
    char *k1 = strdup(q(t, "SELECT * FROM K1 ORDER BY A, B"));
    const char *k2 = q(t, "SELECT * FROM K2 ORDER BY A, B");
    if (strcmp(k1, k2) != 0) fprintf(stderr, "seed %llu round %d\n", (unsigned long long)seed, r);
    assert_string_equal(k1, k2);
    free(k1);
    if (r % 10 == 9) write_rows(t, &rs, 30);
  }
  exec_finalize(st);
  free(got);
  tdb_close(t);
}

/* The table under a kept statement is dropped and made again with other columns, other
** types and another key between runs: each run answers as a fresh prepare does. */
static void ddl_changes_shape(void **state) {
  (void)state;
  uint64_t seed = tu_seed("ddl_changes_shape"), rs = seed;
  (void)rs;
  tdb *t = tdb_open();
  static const char *const shapes[][2] = {
      {"CREATE TABLE S (K INTEGER NOT NULL PRIMARY KEY, A VARCHAR)",
       "UPSERT INTO S VALUES (1, 'one'), (2, 'two'), (3, NULL)"},
      {"CREATE TABLE S (K INTEGER NOT NULL PRIMARY KEY, A DOUBLE, B VARCHAR, C BIGINT)",
       "UPSERT INTO S VALUES (1, 1.5, 'x', 10), (5, NULL, 'y', 20), (9, 2.5, NULL, NULL)"},
      {"CREATE TABLE S (K INTEGER NOT NULL, A INTEGER NOT NULL, CONSTRAINT PK PRIMARY KEY (K, A DESC))",
       "UPSERT INTO S VALUES (1, 1), (1, 2), (4, 7)"},
      {"CREATE TABLE S (K VARCHAR NOT NULL PRIMARY KEY, A INTEGER)",
       "UPSERT INTO S VALUES ('1', 1), ('2', 2), ('10', 10)"},
      {"CREATE TABLE S (K INTEGER NOT NULL PRIMARY KEY)", "UPSERT INTO S VALUES (1), (2), (3)"},
  };
  const char *sqls[3] = {"SELECT * FROM S WHERE K > ? ORDER BY K", "SELECT COUNT(*), MAX(K) FROM S WHERE K >= ?",
                         "SELECT K, K FROM S WHERE K = ?"};
  exec_stmt *st[3];
  q(t, shapes[0][0]);
  q(t, shapes[0][1]);
  for (int i = 0; i < 3; i++)
    assert_int_equal(exec_prepare(t->s, sqls[i], strlen(sqls[i]), &st[i], NULL, &t->err), EXEC_OK);
  char *got = NULL;
  for (int round = 0; round < 12; round++) {
    int sh = round % 5;
    if (round) {
      q(t, "DROP TABLE S");
      q(t, shapes[sh][0]);
      q(t, shapes[sh][1]);
      if (round % 3 == 0) assert_int_equal(kv_flush(t->db, NULL), KV_OK);
    }
    for (int i = 0; i < 3; i++) {
      for (int v = 0; v < 2; v++) {
        cat_value p = cat_v_int(CAT_T_INTEGER, v ? 1 : 2);
        exec_error e1;
        int rc1 = run_kept(st[i], 1, &p, &got, &e1);
        int rc2 = tdb_runp(t, sqls[i], 1, &p);
        if (rc1 != rc2 || (rc1 == EXEC_DONE && strcmp(got, t->out) != 0))
          fprintf(stderr, "seed %llu round %d: %s\n  kept (%d): %s%s\n  fresh (%d): %s%s\n",
                  (unsigned long long)seed, round, sqls[i], rc1, got, e1.msg, rc2, t->out,
                  t->err.msg);
        assert_int_equal(rc1, rc2);
        if (rc1 == EXEC_DONE) assert_string_equal(got, t->out);
      }
    }
  }
  for (int i = 0; i < 3; i++) exec_finalize(st[i]);
  free(got);
  tdb_close(t);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(kept_statements),
      cmocka_unit_test(upsert_select),
      cmocka_unit_test(ddl_changes_shape),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
