/*
** tests/exec/test_direct_projection.c: rows decoded straight into the projected row
** (exec/op_query.c exec_query.direct, exec_rowcodec_prepare with a slot map) must equal the
** rows the project step makes. Each query projects distinct plain columns in a random order
** (key columns among them, hidden ORDER BY columns too) from a table with a DESC key, NULLs
** in several families, several versions, deletes, rows in store files and the memstore; the
** oracle is the same query with every column wrapped in COALESCE(c, c), which the direct
** path does not take. Key ranges, reverse scans, LIMIT/OFFSET, pushed filters; a kept
** statement run again with other values. Seeded (tu_seed).
*/
#include "test_engine_util.h"
#include "testutil.h"

static const char *const COLS[] = {"A", "B", "C", "D", "E", "F"};
#define NC 6

static void write_rows(tdb *t, uint64_t *rs, int n) {
  for (int i = 0; i < n; i++) {
    char sql[256], c[32], d[32], e[32], f[32];
    int a = (int)tu_below(rs, 20), b = (int)tu_below(rs, 5);
    snprintf(c, sizeof c, tu_below(rs, 4) ? "%.2f" : "NULL", (double)tu_below(rs, 400) / 8.0);
    snprintf(d, sizeof d, tu_below(rs, 4) ? "'d%d'" : "NULL", (int)tu_below(rs, 9));
    snprintf(e, sizeof e, tu_below(rs, 3) ? "%d" : "NULL", (int)tu_below(rs, 1000) - 500);
    snprintf(f, sizeof f, tu_below(rs, 5) ? "TIMESTAMP '2020-01-0%d 00:00:00'" : "NULL",
             1 + (int)tu_below(rs, 9));
    snprintf(sql, sizeof sql, "UPSERT INTO T VALUES (%d, 'b%d', %s, %s, %s, %s)", a, b, c, d,
             e, f);
    q(t, sql);
  }
}

static void direct_equals_projected(void **state) {
  (void)state;
  uint64_t seed = tu_seed("direct_equals_projected"), rs = seed;
  tdb *t = tdb_open();
  q(t, "CREATE TABLE T (A INTEGER NOT NULL, B VARCHAR NOT NULL, X.C DOUBLE, X.D VARCHAR, "
       "Y.E BIGINT, F TIMESTAMP, CONSTRAINT PK PRIMARY KEY (A, B DESC)) VERSIONS = 2");
  write_rows(t, &rs, 150);
  assert_int_equal(kv_flush(t->db, 0), KV_OK);
  write_rows(t, &rs, 80);
  q(t, "DELETE FROM T WHERE A = 7");
  int rounds = (int)tu_scaled(400, 60);
  for (int r = 0; r < rounds; r++) {
    int order[NC];
    for (int i = 0; i < NC; i++) order[i] = i;
    for (int i = NC - 1; i > 0; i--) {
      int j = (int)tu_below(&rs, (uint64_t)i + 1), x = order[i];
      order[i] = order[j];
      order[j] = x;
    }
    int n = 1 + (int)tu_below(&rs, NC);
    char plain[128] = "", wrapped[256] = "";
    for (int i = 0; i < n; i++) {
      char p[32], w[48];
      snprintf(p, sizeof p, "%s%s", i ? ", " : "", COLS[order[i]]);
      snprintf(w, sizeof w, "%sCOALESCE(%s, %s)", i ? ", " : "", COLS[order[i]], COLS[order[i]]);
      strcat(plain, p);
      strcat(wrapped, w);
    }
    char where[96] = "";
    switch (tu_below(&rs, 5)) {
      case 0: snprintf(where, sizeof where, " WHERE A = %d", (int)tu_below(&rs, 20)); break;
      case 1:
        snprintf(where, sizeof where, " WHERE A BETWEEN %d AND %d", (int)tu_below(&rs, 10),
                 10 + (int)tu_below(&rs, 10));
        break;
      case 2: snprintf(where, sizeof where, " WHERE E > %d", (int)tu_below(&rs, 600) - 300); break;
      case 3:
        snprintf(where, sizeof where, " WHERE A = %d AND B = 'b%d'", (int)tu_below(&rs, 20),
                 (int)tu_below(&rs, 5));
        break;
      default: break;
    }
    const char *tail = "";
    switch (tu_below(&rs, 4)) {
      case 0: tail = " ORDER BY A DESC, B LIMIT 7 OFFSET 2"; break; /* reverse scan, hidden cols */
      case 1: tail = " ORDER BY A, B DESC LIMIT 5"; break;
      case 2: tail = " LIMIT 3"; break;
      default: break;
    }
    char s1[512], s2[512];
    snprintf(s1, sizeof s1, "SELECT %s FROM T%s%s", plain, where, tail);
    snprintf(s2, sizeof s2, "SELECT %s FROM T%s%s", wrapped, where, tail);
    assert_int_equal(tdb_run(t, s1), EXEC_DONE);
    char *got = strdup(t->out);
    assert_int_equal(tdb_run(t, s2), EXEC_DONE);
    if (strcmp(got, t->out) != 0)
      fail_msg("seed %llu round %d: %s\n%s\n-- projected:\n%s", (unsigned long long)seed, r, s1,
               got, t->out);
    free(got);
    if (tu_below(&rs, 8) == 0) write_rows(t, &rs, 5);
    if (tu_below(&rs, 40) == 0) assert_int_equal(kv_flush(t->db, 0), KV_OK);
  }
  tdb_close(t);
}

/* A kept statement whose plan decodes directly, run with other values and after a DDL that
** changes the column order: each run equals a fresh prepare of the wrapped query. */
static void kept_statement_and_ddl(void **state) {
  (void)state;
  tdb *t = tdb_open();
  q(t, "CREATE TABLE K (A INTEGER NOT NULL PRIMARY KEY, B VARCHAR, C DOUBLE)");
  q(t, "UPSERT INTO K VALUES (1, 'one', 1.5), (2, NULL, 2.5), (3, 'three', NULL)");
  exec_stmt *st;
  const char *sql = "SELECT C, A, B FROM K WHERE A >= ? ORDER BY A";
  assert_int_equal(exec_prepare(t->s, sql, strlen(sql), &st, NULL, &t->err), EXEC_OK);
  const char *want[] = {"1.5|1|one\n2.5|2|NULL\nNULL|3|three\n", "NULL|3|three\n"};
  for (int i = 0; i < 4; i++) {
    if (i == 2) {
      q(t, "DROP TABLE K");
      q(t, "CREATE TABLE K (B VARCHAR, C DOUBLE, A INTEGER NOT NULL PRIMARY KEY)");
      q(t, "UPSERT INTO K (A, B, C) VALUES (1, 'one', 1.5), (2, NULL, 2.5), (3, 'three', NULL)");
    }
    cat_value p = cat_v_int(CAT_T_INTEGER, i % 2 ? 3 : 1);
    exec_reset(st);
    assert_int_equal(exec_bind(st, 1, &p, &t->err), EXEC_OK);
    char out[256] = "";
    int rc;
    while ((rc = exec_step(st, &t->err)) == EXEC_ROW) {
      for (int c = 0; c < 3; c++) {
        char b[64];
        cat_text_format(exec_column_value(st, c), b, sizeof b);
        strcat(out, b);
        strcat(out, c < 2 ? "|" : "\n");
      }
    }
    assert_int_equal(rc, EXEC_DONE);
    assert_string_equal(out, want[i % 2]);
  }
  exec_finalize(st);
  tdb_close(t);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(direct_equals_projected),
      cmocka_unit_test(kept_statement_and_ddl),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
