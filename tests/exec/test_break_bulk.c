/*
** tests/exec/test_break_bulk.c: adversarial checks of the pipelined bulk load (exec/bulk.h
** over kv/bulk/bulk.c): rows in orders that open and close segments (ascending and descending
** runs that turn after many rows, runs that overlap and repeat keys across segments, a key
** repeated exactly where the order turns), small sort memory so runs spill while segments
** are open, bad rows in the middle, a second load of only some columns over the first,
** UPSERTs and DELETEs at the same clock tick after a load, and flushed files next to the
** loaded ones. The oracle is a twin table given the same rows by UPSERT in the same order:
** both must hold the same rows, and the columnar aggregate pushdown over the loaded files
** must agree with the rows path. Also: an abandoned load, a load of only bad rows, and a
** load into an empty table with an index (repeated keys refused, CHECK INDEX clean, queries
** through the index equal the table's). Seeded (tu_seed); a mismatch prints the seed.
** Not here: the public API and the shell's --bulk (tests/api/test_bulk.c, tests/cli).
*/
#include "exec/bulk.h"
#include "test_engine_util.h"
#include "testutil.h"

#define NF 6

static const char *const fcols[NF] = {"K1", "K2", "A", "B", "C", "D"};
static const char *const schema =
    "(K1 INTEGER NOT NULL, K2 VARCHAR NOT NULL, F.A DOUBLE, F.B VARCHAR, G.C BIGINT, "
    "D DECIMAL(10,2), CONSTRAINT PK PRIMARY KEY (K1, K2 DESC)) BLOCKSIZE=1024";

typedef struct row {
  char f[NF][48]; /* field texts */
  bool null[NF];  /* SQL NULL */
  bool bad;       /* a value that does not parse */
} row;

static void make_row(uint64_t *rs, int key, row *r) {
  memset(r, 0, sizeof *r);
  snprintf(r->f[0], sizeof r->f[0], "%d", key / 2);
  snprintf(r->f[1], sizeof r->f[1], "%s", key % 2 ? "b" : "ab");
  snprintf(r->f[2], sizeof r->f[2], "%.2f", ((double)tu_below(rs, 2001) - 1000.0) / 4.0);
  snprintf(r->f[3], sizeof r->f[3], "v%d", (int)tu_below(rs, 50));
  snprintf(r->f[4], sizeof r->f[4], "%lld", (long long)tu_below(rs, 1000) * 1000000007LL);
  snprintf(r->f[5], sizeof r->f[5], "%d.%02d", (int)tu_below(rs, 1000) - 500, (int)tu_below(rs, 100));
  for (int i = 2; i < NF; i++) r->null[i] = tu_below(rs, 6) == 0;
  if (tu_below(rs, 40) == 0) { /* a bad value */
    int c = 2 + (int)tu_below(rs, 4);
    r->null[c] = false;
    snprintf(r->f[c], sizeof r->f[c], "%s", c == 3 ? "x" : "12abc");
    r->bad = c != 3;
  }
}

/* The key sequence of a pattern. */
static int keys_of(uint64_t *rs, int pattern, int n, int *k) {
  int m = 0;
  switch (pattern) {
    case 0: /* zigzag, disjoint runs of 150 */
      for (int s = 0; m < n; s++)
        for (int i = 0; i < 150 && m < n; i++) k[m++] = s * 150 + (s % 2 ? 149 - i : i);
      break;
    case 1: /* zigzag, overlapping runs: keys repeat across segments */
      for (int s = 0; m < n; s++) {
        int base = s * 70, len = 100 + (int)tu_below(rs, 100);
        for (int i = 0; i < len && m < n; i++) k[m++] = base + (s % 2 ? len - 1 - i : i);
      }
      break;
    case 2: /* ascending runs whose turn repeats the last key */
      for (int s = 0; m < n; s++)
        for (int i = 0; i < 120 && m < n; i++) k[m++] = s * 119 + i;
      break;
    case 3: /* descending, then a shuffled tail over the same keys */
      for (int i = 0; i < n / 2; i++) k[m++] = n / 2 - i;
      while (m < n) k[m++] = (int)tu_below(rs, (uint64_t)n / 2 + 1);
      break;
    default: /* random */
      while (m < n) k[m++] = (int)tu_below(rs, (uint64_t)n);
      break;
  }
  return m;
}

/* Load rows (columns cols[0..nc) of each) into B by bulk and into U by UPSERT, in order. */
static void load(tdb *t, const row *rows, int n, const int *cols, int nc, size_t run_bytes) {
  const char *names[NF];
  for (int i = 0; i < nc; i++) names[i] = fcols[cols[i]];
  exec_bulk *b = NULL;
  assert_int_equal(exec_bulk_begin(t->s, "B", nc, names, run_bytes, &b, &t->err), EXEC_OK);
  char sql[1024];
  for (int r = 0; r < n; r++) {
    const char *fv[NF];
    size_t lv[NF];
    for (int i = 0; i < nc; i++) {
      fv[i] = rows[r].null[cols[i]] ? NULL : rows[r].f[cols[i]];
      lv[i] = fv[i] ? strlen(fv[i]) : 0;
    }
    int rc = exec_bulk_add_text(b, fv, lv, &t->err);
    bool bad = false;
    for (int i = 0; i < nc; i++)
      bad |= rows[r].bad && !rows[r].null[cols[i]] && strcmp(rows[r].f[cols[i]], "12abc") == 0;
    if (bad) {
      assert_int_equal(rc, EXEC_CONSTRAINT);
      continue;
    }
    assert_int_equal(rc, EXEC_OK);
    int o = snprintf(sql, sizeof sql, "UPSERT INTO U (");
    for (int i = 0; i < nc; i++) o += snprintf(sql + o, sizeof sql - (size_t)o, "%s%s", i ? ", " : "", names[i]);
    o += snprintf(sql + o, sizeof sql - (size_t)o, ") VALUES (");
    for (int i = 0; i < nc; i++) {
      int c = cols[i];
      const char *v = fv[i];
      if (!v) o += snprintf(sql + o, sizeof sql - (size_t)o, "%sNULL", i ? ", " : "");
      else if (c == 1 || c == 3) o += snprintf(sql + o, sizeof sql - (size_t)o, "%s'%s'", i ? ", " : "", v);
      else o += snprintf(sql + o, sizeof sql - (size_t)o, "%s%s", i ? ", " : "", v);
    }
    snprintf(sql + o, sizeof sql - (size_t)o, ")");
    assert_int_equal(tdb_run(t, sql), EXEC_DONE);
  }
  assert_int_equal(exec_bulk_commit(b, &t->err), EXEC_OK);
  exec_bulk_free(b);
}

/* B and U hold the same rows; aggregates over B agree both ways. */
static void same(tdb *t, uint64_t seed) {
  char *want = strdup(q(t, "SELECT * FROM U ORDER BY K1, K2"));
  const char *got = q(t, "SELECT * FROM B ORDER BY K1, K2");
  if (strcmp(want, got) != 0) fprintf(stderr, "seed %llu: B and U differ\n", (unsigned long long)seed);
  assert_string_equal(want, got);
  free(want);
  static const char *const aq[] = {
      "COUNT(*), SUM(A), MIN(B), MAX(B) FROM B WHERE A > -50",
      "COUNT(B), MIN(A), MAX(A) FROM B WHERE B >= 'v2' AND B < 'v7'",
      "COUNT(*) FROM B WHERE A IS NOT NULL",
  };
  for (size_t i = 0; i < sizeof aq / sizeof aq[0]; i++) {
    char s1[256], s2[256];
    snprintf(s1, sizeof s1, "SELECT /*+ NO_PUSHDOWN */ %s", aq[i]);
    snprintf(s2, sizeof s2, "SELECT %s", aq[i]);
    want = strdup(q(t, s1));
    char *got2 = strdup(q(t, s2));
    if (strcmp(want, got2) != 0) fprintf(stderr, "seed %llu: %s\n", (unsigned long long)seed, s2);
    assert_string_equal(want, got2);
    free(want);
    char s3[256]; /* the same over U */
    snprintf(s3, sizeof s3, "SELECT %s", aq[i]);
    char *from = strstr(s3, "FROM B");
    assert_non_null(from);
    from[5] = 'U';
    assert_string_equal(q(t, s3), got2);
    free(got2);
  }
}

static void run_pattern(int pattern, size_t run_bytes, const char *name) {
  uint64_t seed = tu_seed(name), rs = seed;
  tdb *t = tdb_open();
  char sql[512];
  snprintf(sql, sizeof sql, "CREATE TABLE B %s", schema);
  q(t, sql);
  snprintf(sql, sizeof sql, "CREATE TABLE U %s", schema);
  q(t, sql);
  int n = (int)tu_scaled(3000, 600);
  int *k = malloc((size_t)n * sizeof *k);
  row *rows = malloc((size_t)n * sizeof *rows);
  n = keys_of(&rs, pattern, n, k);
  for (int i = 0; i < n; i++) make_row(&rs, k[i], &rows[i]);
  static const int all[NF] = {0, 1, 2, 3, 4, 5}, some[4] = {1, 0, 3, 5};
  load(t, rows, n, all, NF, run_bytes);
  same(t, seed);
  /* writes at the same clock tick after the load, then a second load of some columns */
  for (int i = 0; i < 60; i++) {
    int key = (int)tu_below(&rs, (uint64_t)n);
    const char *tab[2] = {"B", "U"};
    for (int j = 0; j < 2; j++) {
      if (i % 3 == 0) snprintf(sql, sizeof sql, "DELETE FROM %s WHERE K1 = %d AND K2 = '%s'", tab[j], key / 2, key % 2 ? "b" : "ab");
      else snprintf(sql, sizeof sql, "UPSERT INTO %s (K1, K2, A) VALUES (%d, '%s', %d)", tab[j], key / 2, key % 2 ? "b" : "ab", i);
      assert_int_equal(tdb_run(t, sql), EXEC_DONE);
    }
  }
  same(t, seed);
  assert_int_equal(kv_flush(t->db, NULL), KV_OK);
  for (int i = 0; i < n; i++) make_row(&rs, k[(i * 7) % n], &rows[i]);
  load(t, rows, n / 2, some, 4, run_bytes);
  same(t, seed);
  assert_int_equal(kv_compact(t->db, NULL, false), KV_OK);
  same(t, seed);
  assert_int_equal(kv_compact(t->db, NULL, true), KV_OK);
  same(t, seed);
  free(rows);
  free(k);
  tdb_close(t);
}

static void zigzag_disjoint(void **state) { (void)state; run_pattern(0, 0, "zigzag_disjoint"); }
static void zigzag_overlap(void **state) { (void)state; run_pattern(1, 0, "zigzag_overlap"); }
static void turn_repeats_key(void **state) { (void)state; run_pattern(2, 0, "turn_repeats_key"); }
static void desc_then_shuffled(void **state) { (void)state; run_pattern(3, 0, "desc_then_shuffled"); }
static void zigzag_spills(void **state) { (void)state; run_pattern(1, 8192, "zigzag_spills"); }
static void random_spills(void **state) { (void)state; run_pattern(4, 4096, "random_spills"); }

/* An abandoned load leaves nothing; a load whose every row is bad commits nothing. */
static void abort_and_all_bad(void **state) {
  (void)state;
  tdb *t = tdb_open();
  char sql[512];
  snprintf(sql, sizeof sql, "CREATE TABLE B %s", schema);
  q(t, sql);
  const char *names[3] = {"K1", "K2", "A"};
  exec_bulk *b = NULL;
  assert_int_equal(exec_bulk_begin(t->s, "B", 3, names, 4096, &b, &t->err), EXEC_OK);
  char f0[32];
  for (int i = 0; i < 2000; i++) {
    snprintf(f0, sizeof f0, "%d", i % 2 ? 5000 - i : i);
    const char *fv[3] = {f0, "k", "1.5"};
    size_t lv[3] = {strlen(f0), 1, 3};
    assert_int_equal(exec_bulk_add_text(b, fv, lv, &t->err), EXEC_OK);
  }
  exec_bulk_free(b);
  assert_string_equal(q(t, "SELECT COUNT(*) FROM B"), "0\n");
  assert_int_equal(exec_bulk_begin(t->s, "B", 3, names, 0, &b, &t->err), EXEC_OK);
  for (int i = 0; i < 300; i++) {
    snprintf(f0, sizeof f0, "%d", i);
    const char *fv[3] = {f0, "k", "nope"};
    size_t lv[3] = {strlen(f0), 1, 4};
    assert_int_equal(exec_bulk_add_text(b, fv, lv, &t->err), EXEC_CONSTRAINT);
  }
  assert_int_equal(exec_bulk_commit(b, &t->err), EXEC_OK);
  exec_bulk_free(b);
  assert_string_equal(q(t, "SELECT COUNT(*) FROM B"), "0\n");
  q(t, "UPSERT INTO B (K1, K2, A) VALUES (1, 'k', 2.5)");
  assert_string_equal(q(t, "SELECT K1, A FROM B"), "1|2.5\n");
  tdb_close(t);
}

/* A load into an empty table with an index, keys in zigzag and random order, some keys
** repeated (refused: EXEC_CONSTRAINT) and bad values: the index agrees with the table
** (CHECK INDEX), and queries through the index give what the table gives. */
static void indexed_table(void **state) {
  (void)state;
  uint64_t seed = tu_seed("indexed_table"), rs = seed;
  tdb *t = tdb_open();
  char sql[512];
  snprintf(sql, sizeof sql, "CREATE TABLE B %s", schema);
  q(t, sql);
  q(t, "CREATE INDEX BX ON B (B) INCLUDE (A)");
  int n = (int)tu_scaled(3000, 600);
  int *k = malloc((size_t)n * sizeof *k);
  n = keys_of(&rs, 1 + (int)tu_below(&rs, 4), n, k);
  bool *seen = calloc((size_t)n * 4 + 400, 1);
  const char *names[NF];
  for (int i = 0; i < NF; i++) names[i] = fcols[i];
  exec_bulk *b = NULL;
  assert_int_equal(exec_bulk_begin(t->s, "B", NF, names, 8192, &b, &t->err), EXEC_OK);
  int loaded = 0;
  for (int r = 0; r < n; r++) {
    row w;
    make_row(&rs, k[r], &w);
    const char *fv[NF];
    size_t lv[NF];
    for (int i = 0; i < NF; i++) {
      fv[i] = w.null[i] ? NULL : w.f[i];
      lv[i] = fv[i] ? strlen(fv[i]) : 0;
    }
    int rc = exec_bulk_add_text(b, fv, lv, &t->err);
    if (w.bad) {
      assert_int_equal(rc, EXEC_CONSTRAINT);
    } else if (seen[k[r]]) {
      assert_int_equal(rc, EXEC_CONSTRAINT); /* a repeated key under an index */
    } else {
      if (rc != EXEC_OK) fail_msg("seed %llu row %d: %d %s", (unsigned long long)seed, r, rc, t->err.msg);
      seen[k[r]] = true;
      loaded++;
    }
  }
  assert_int_equal(exec_bulk_commit(b, &t->err), EXEC_OK);
  exec_bulk_free(b);
  char want[64];
  snprintf(want, sizeof want, "%d\n", loaded);
  assert_string_equal(q(t, "SELECT COUNT(*) FROM B"), want);
  const char *chk = q(t, "CHECK INDEX BX ON B");
  assert_non_null(strstr(chk, "MISSING|0\n"));
  assert_non_null(strstr(chk, "EXTRA|0\n"));
  assert_non_null(strstr(chk, "MISMATCHED|0\n"));
  static const char *const qs[] = {
      "SELECT %s COUNT(*), MIN(A), MAX(A) FROM B WHERE B >= 'v2' AND B < 'v4'",
      "SELECT %s K1, K2, A FROM B WHERE B = 'v7' ORDER BY K1, K2",
  };
  for (size_t i = 0; i < 2; i++) {
    char s1[256], s2[256];
    snprintf(s1, sizeof s1, qs[i], "/*+ INDEX(B BX) */");
    snprintf(s2, sizeof s2, qs[i], "/*+ NO_INDEX */");
    char *a = strdup(q(t, s1));
    if (strcmp(a, q(t, s2)) != 0) fprintf(stderr, "seed %llu: %s\n", (unsigned long long)seed, s1);
    assert_string_equal(a, q(t, s2));
    free(a);
  }
  free(seen);
  free(k);
  tdb_close(t);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(zigzag_disjoint),   cmocka_unit_test(zigzag_overlap),
      cmocka_unit_test(turn_repeats_key),  cmocka_unit_test(desc_then_shuffled),
      cmocka_unit_test(zigzag_spills),     cmocka_unit_test(random_spills),
      cmocka_unit_test(abort_and_all_bad), cmocka_unit_test(indexed_table),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
