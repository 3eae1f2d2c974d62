/*
** tests/hbase/tu_hbase_sql.h: the SQL-level helpers of the tests that run the same statements on
** HBase and on the local store: a statement on both (failing the test on either's error), a
** query's rows as text (one line a row, columns joined by '|', NULL as NULL; no rows fails the
** test, since a comparison of nothing proves nothing) and the comparison of two answers naming
** the first byte that differs. Include after cmocka.h and rowan.h. Not here: opening the
** databases, the HBase URI (tests/tu_hbase.h).
*/
#ifndef ROWAN_TESTS_TU_HBASE_SQL_H
#define ROWAN_TESTS_TU_HBASE_SQL_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void exec_both(rowan_db *h, rowan_db *l, const char *sql) {
  rowan_db *dbs[2] = {h, l};
  for (int i = 0; i < 2; i++)
    if (rowan_exec(dbs[i], sql, NULL, NULL) != ROWAN_OK)
      fail_msg("%s on %s: %s", sql, i ? "the local store" : "HBase", rowan_errmsg(dbs[i]));
}

/* The rows of a query as text, one line each (the caller frees). */
static char *answer(rowan_db *db, const char *sql) {
  rowan_stmt *st = NULL;
  if (rowan_prepare(db, sql, -1, &st, NULL) != ROWAN_OK) fail_msg("%s: %s", sql, rowan_errmsg(db));
  size_t cap = 1 << 16, len = 0;
  char *out = malloc(cap);
  assert_non_null(out);
  out[0] = 0;
  int rc, rows = 0;
  while ((rc = rowan_step(st)) == ROWAN_ROW) {
    for (int c = 0; c < rowan_column_count(st); c++) {
      const char *t = rowan_column_type(st, c) == ROWAN_NULL ? "NULL" : rowan_column_text(st, c);
      if (len + strlen(t) + 4 > cap) assert_non_null(out = realloc(out, cap *= 2));
      len += (size_t)snprintf(out + len, cap - len, "%s%s", c ? "|" : "", t);
    }
    if (len + 4 > cap) assert_non_null(out = realloc(out, cap *= 2));
    out[len++] = '\n';
    out[len] = 0;
    rows++;
  }
  if (rc != ROWAN_DONE) fail_msg("%s: %s", sql, rowan_errmsg(db));
  rowan_finalize(st);
  if (!rows) fail_msg("%s: no rows (the comparison would prove nothing)", sql);
  return out;
}

static void same_answer(rowan_db *h, rowan_db *l, const char *sql) {
  char *a = answer(h, sql), *b = answer(l, sql);
  if (strcmp(a, b)) {
    size_t i = 0;
    while (a[i] && a[i] == b[i]) i++;
    fail_msg("%s: HBase and the local store differ at byte %zu: \"%.60s\" vs \"%.60s\"", sql, i,
             a + i, b + i);
  }
  free(a);
  free(b);
}

#endif
