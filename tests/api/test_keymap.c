/*
** tests/api/test_keymap.c: rowan_table_layout (and rowan_table_families, its families alone,
** which must agree with it figure for figure) and the block trace (rowan_stmt_trace,
** rowan_stmt_trace_get) on a table of two families with small blocks, two overlapping
** store files per family and rows still in the memstore. The layout lists every block the
** family counts, first keys ascending within a file and decoded into column values; a
** traced statement's loads per family equal rowan_stmt_metrics' blocks_read and EXPLAIN
** ANALYZE's "blocks=" for the same statement, its ranges the ranges sought, and every block
** it read is one the layout lists. Checked for a range scan, a full scan, point lookups, a
** skip scan by prefix, a reverse scan with a LIMIT and the columnar aggregate; then the
** range texts, an uncovered index's lookups, and the misuse cases. The layout's regions: one
** for a table not split; for SPLIT ON (a leading VARCHAR column; a DESC column and a row
** of two columns) and SALT_BUCKETS, the boundaries given, as bytes and as column values,
** each store file's blocks within one region, a salted table's keys printed with their
** bucket first; rowan_table_families lists the same regions. (Splits by size:
** tests/api/test_region_split.c.)
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "kv/env/env_mem.h"
#include "rowan.h"
#include "tu_api.h"

#define HOURS 400 /* rows per station */

static const char *const stations[] = {"Aa", "Bb", "Cc", "Dd", "Ee"};

/* Insert hours [h0, h1) of every station, TEMP = h % 40, LAT on the first hour. */
static void fill(rowan_db *db, int h0, int h1) {
  char sql[256];
  exec_ok(db, "BEGIN");
  for (int s = 0; s < 5; s++)
    for (int h = h0; h < h1; h++) {
      snprintf(sql, sizeof sql,
               "UPSERT INTO S (STATION, TS, TEMP%s) VALUES ('%s', TIMESTAMP '2020-01-01 00:00:00' "
               "+ %d / 24.0, %d%s)", h == 0 ? ", LAT" : "", stations[s], h, h % 40,
               h == 0 ? ", 39.9" : "");
      exec_ok(db, sql);
    }
  exec_ok(db, "COMMIT");
}

static int setup(void **state) {
  kv_env *env = kv_env_mem_new(1700000000000ll);
  rowan_db *db = tu_open_mem(env);
  exec_ok(db, "CREATE TABLE S (STATION VARCHAR NOT NULL, TS TIMESTAMP NOT NULL, R.TEMP DOUBLE,"
              " R.NOTE VARCHAR, M.LAT DOUBLE, CONSTRAINT PK PRIMARY KEY (STATION, TS DESC))"
              " BLOCKSIZE = 1024");
  fill(db, 0, HOURS);
  assert_int_equal(rowan_flush(db), ROWAN_OK);
  fill(db, HOURS / 2, HOURS);
  assert_int_equal(rowan_flush(db), ROWAN_OK);
  exec_ok(db, "UPSERT INTO S (STATION, TS, TEMP) VALUES ('Cc', TIMESTAMP '2021-01-01 00:00:00', 1)");
  void **st = malloc(2 * sizeof *st);
  st[0] = env;
  st[1] = db;
  *state = st;
  return 0;
}

static int teardown(void **state) {
  void **st = *state;
  assert_int_equal(rowan_close(st[1]), ROWAN_OK);
  kv_env_free(st[0]);
  free(st);
  return 0;
}

static rowan_db *db_of(void **state) { return ((void **)*state)[1]; }

/* ---- the layout --------------------------------------------------------------------------- */
static void test_layout(void **state) {
  rowan_db *db = db_of(state);
  rowan_layout *l = NULL;
  assert_int_equal(rowan_table_layout(db, "s", &l), ROWAN_OK); /* unquoted: upper-cased */
  assert_string_equal(l->table, "S");
  assert_string_equal(l->key, "STATION, TS DESC");
  assert_int_equal(l->n_families, 3);
  assert_string_equal(l->families[0].name, "_k");
  assert_string_equal(l->families[1].name, "R");
  assert_string_equal(l->families[2].name, "M");
  uint64_t blocks[3] = {0, 0, 0};
  for (int i = 0; i < l->n_blocks; i++) {
    const rowan_layout_block *b = &l->blocks[i];
    assert_true(b->family >= 0 && b->family < 3);
    blocks[b->family]++;
    assert_true(b->block < b->file_blocks);
    assert_true(b->offset + b->bytes <= b->file_bytes);
    assert_true(b->rows > 0 && b->cells >= b->rows && b->raw_bytes > 0);
    assert_true(strncmp(b->first_key_text, "['", 2) == 0);
    assert_non_null(strstr(b->first_key_text, ", '2020-"));
    if (i && l->blocks[i - 1].file == b->file) {
      const rowan_layout_block *a = &l->blocks[i - 1];
      int n = a->first_key_len < b->first_key_len ? a->first_key_len : b->first_key_len;
      int c = memcmp(a->first_key, b->first_key, (size_t)n);
      assert_true(c < 0 || (c == 0 && a->first_key_len < b->first_key_len));
      assert_int_equal(b->block, a->block + 1);
    } else {
      assert_int_equal(b->block, 0);
    }
  }
  for (int f = 0; f < 3; f++) {
    assert_int_equal(blocks[f], l->families[f].blocks);
    assert_int_equal(l->families[f].store_files, f == 2 ? 1 : 2); /* M: first hours only */
  }
  assert_true(l->families[1].blocks > 20); /* 1 KiB blocks */
  assert_true(l->families[1].memstore_cells > 0); /* the row written after the flushes */
  assert_int_equal(l->families[2].memstore_cells, 0);
  /* the first block of the first R file starts at the first station's newest hour */
  for (int i = 0; i < l->n_blocks; i++)
    if (l->blocks[i].family == 1) {
      assert_string_equal(l->blocks[i].first_key_text, "['Aa', '2020-01-17 15:00:00']");
      assert_string_equal(l->blocks[i].last_key_text, "['Ee', '2020-01-01 00:00:00']");
      break;
    }
  rowan_layout_free(l);
  rowan_layout_free(NULL);
  assert_int_equal(rowan_table_layout(db, "NOSUCH", &l), ROWAN_ERROR);
  assert_null(l);
  assert_non_null(strstr(rowan_errmsg(db), "NOSUCH"));
  assert_int_equal(rowan_table_layout(db, NULL, &l), ROWAN_MISUSE);
  assert_int_equal(rowan_table_layout(NULL, "S", &l), ROWAN_MISUSE);
}

/* rowan_table_families: the layout's families, figure for figure, without the blocks. */
static void test_families(void **state) {
  rowan_db *db = db_of(state);
  rowan_layout *l = NULL, *f = NULL;
  assert_int_equal(rowan_table_layout(db, "S", &l), ROWAN_OK);
  assert_int_equal(rowan_table_families(db, "s", &f), ROWAN_OK);
  assert_string_equal(f->table, "S");
  assert_string_equal(f->key, l->key);
  assert_int_equal(f->n_blocks, 0);
  assert_int_equal(f->n_families, l->n_families);
  for (int i = 0; i < l->n_families; i++) {
    const rowan_layout_family *a = &l->families[i], *b = &f->families[i];
    assert_string_equal(b->name, a->name);
    assert_int_equal(b->memstore_bytes, a->memstore_bytes);
    assert_int_equal(b->memstore_cells, a->memstore_cells);
    assert_int_equal(b->store_files, a->store_files);
    assert_int_equal(b->blocks, a->blocks);
    assert_int_equal(b->bytes, a->bytes);
    assert_int_equal(b->index_bytes, a->index_bytes);
    assert_int_equal(b->paged_files, a->paged_files);
  }
  assert_true(f->families[1].blocks > 20 && f->families[1].bytes > 0);
  rowan_layout_free(l);
  rowan_layout_free(f);
  assert_int_equal(rowan_table_families(db, "NOSUCH", &f), ROWAN_ERROR);
  assert_null(f);
  assert_non_null(strstr(rowan_errmsg(db), "NOSUCH"));
  assert_int_equal(rowan_table_families(db, NULL, &f), ROWAN_MISUSE);
  assert_int_equal(rowan_table_families(NULL, "S", &f), ROWAN_MISUSE);
}

/* ---- regions ----------------------------------------------------------------------------- */
static int key_cmp(const void *a, int an, const void *b, int bn) {
  int n = an < bn ? an : bn;
  int c = n ? memcmp(a, b, (size_t)n) : 0;
  return c ? c : (an > bn) - (an < bn);
}

/* The region of l holding row key [k, k+n): the last whose start key is at or below it. */
static int region_of(const rowan_layout *l, const void *k, int n) {
  int r = 0;
  for (int i = 1; i < l->n_regions; i++)
    if (key_cmp(l->regions[i].start_key, l->regions[i].start_key_len, k, n) <= 0) r = i;
  return r;
}

/* Table `name`'s regions are texts[0..n) ("[*]" first); every store file's blocks (first
** and last keys) lie in one region, and rowan_table_families gives the same regions.
** Returns the layout (the caller frees it). */
static rowan_layout *check_regions(rowan_db *db, const char *name, const char *const *texts,
                                   int n) {
  rowan_layout *l = NULL, *f = NULL;
  assert_int_equal(rowan_table_layout(db, name, &l), ROWAN_OK);
  assert_int_equal(l->n_regions, n);
  assert_null(l->regions[0].start_key);
  assert_int_equal(l->regions[0].start_key_len, 0);
  for (int i = 0; i < n; i++) {
    assert_string_equal(l->regions[i].start_key_text, texts[i]);
    if (i > 0) {
      assert_non_null(l->regions[i].start_key);
      assert_true(l->regions[i].start_key_len > 0);
    }
    if (i > 1) /* ascending */
      assert_true(key_cmp(l->regions[i - 1].start_key, l->regions[i - 1].start_key_len,
                          l->regions[i].start_key, l->regions[i].start_key_len) < 0);
  }
  for (int i = 0; i < l->n_blocks; i++) {
    const rowan_layout_block *b = &l->blocks[i];
    assert_int_equal(region_of(l, b->first_key, b->first_key_len),
                     region_of(l, b->last_key, b->last_key_len));
  }
  assert_int_equal(rowan_table_families(db, name, &f), ROWAN_OK);
  assert_int_equal(f->n_regions, n);
  for (int i = 0; i < n; i++) {
    assert_string_equal(f->regions[i].start_key_text, texts[i]);
    assert_int_equal(f->regions[i].start_key_len, l->regions[i].start_key_len);
    if (i) assert_memory_equal(f->regions[i].start_key, l->regions[i].start_key,
                               (size_t)l->regions[i].start_key_len);
  }
  rowan_layout_free(f);
  return l;
}

static void test_regions(void **state) {
  rowan_db *db = db_of(state);
  /* not split: one region, from the first row */
  static const char *const one[] = {"[*]"};
  rowan_layout_free(check_regions(db, "S", one, 1));
  /* SPLIT ON the leading column: a region per point, each point a key prefix */
  exec_ok(db, "CREATE TABLE P (K VARCHAR NOT NULL, V INTEGER NOT NULL, X DOUBLE "
              "CONSTRAINT PK PRIMARY KEY (K, V)) SPLIT ON ('c', 'f')");
  exec_ok(db, "CREATE TABLE Q (K INTEGER NOT NULL, V INTEGER NOT NULL, X DOUBLE "
              "CONSTRAINT PK PRIMARY KEY (K DESC, V)) SPLIT ON ((50, 3), 20)");
  exec_ok(db, "CREATE TABLE T (K VARCHAR NOT NULL, V INTEGER NOT NULL, X DOUBLE "
              "CONSTRAINT PK PRIMARY KEY (K, V)) SALT_BUCKETS = 4");
  char sql[128];
  exec_ok(db, "BEGIN");
  for (int i = 0; i < 80; i++) {
    snprintf(sql, sizeof sql, "UPSERT INTO P VALUES ('%c', %d, 1.0)", 'a' + i % 8, i);
    exec_ok(db, sql);
    snprintf(sql, sizeof sql, "UPSERT INTO T VALUES ('%c', %d, 1.0)", 'a' + i % 8, i);
    exec_ok(db, sql);
    snprintf(sql, sizeof sql, "UPSERT INTO Q VALUES (%d, %d, 1.0)", i, i % 5);
    exec_ok(db, sql);
  }
  exec_ok(db, "COMMIT");
  assert_int_equal(rowan_flush(db), ROWAN_OK);
  static const char *const p[] = {"[*]", "['c', *]", "['f', *]"};
  rowan_layout *l = check_regions(db, "p", p, 3);
  int seen[3] = {0, 0, 0};
  for (int i = 0; i < l->n_blocks; i++) { /* 'a', 'b' | 'c' .. 'e' | 'f' .. 'h' */
    const rowan_layout_block *b = &l->blocks[i];
    int r = region_of(l, b->first_key, b->first_key_len);
    seen[r]++;
    char k = b->first_key_text[2];
    assert_int_equal(r, k < 'c' ? 0 : k < 'f' ? 1 : 2);
    if (r) /* the row key starts with the point's bytes */
      assert_memory_equal(b->first_key, l->regions[r].start_key,
                          (size_t)l->regions[r].start_key_len);
  }
  assert_true(seen[0] > 0 && seen[1] > 0 && seen[2] > 0);
  rowan_layout_free(l);
  /* a DESC leading column (points in decreasing values) and a point of two columns */
  static const char *const q[] = {"[*]", "[50, 3]", "[20, *]"};
  rowan_layout_free(check_regions(db, "Q", q, 3));
  /* salted: a region per bucket, its start the salt byte; keys print their bucket first */
  static const char *const t[] = {"[*]", "[1, *, *]", "[2, *, *]", "[3, *, *]"};
  l = check_regions(db, "T", t, 4);
  for (int i = 1; i < 4; i++) {
    assert_int_equal(l->regions[i].start_key_len, 1);
    assert_int_equal(((const unsigned char *)l->regions[i].start_key)[0], i);
  }
  assert_true(l->n_blocks > 0);
  for (int i = 0; i < l->n_blocks; i++) {
    const rowan_layout_block *b = &l->blocks[i];
    char want[8];
    snprintf(want, sizeof want, "[%d, '", region_of(l, b->first_key, b->first_key_len));
    if (strncmp(b->first_key_text, want, strlen(want)) != 0)
      fail_msg("block %d of T: %s, want it to start %s", i, b->first_key_text, want);
  }
  rowan_layout_free(l);
  /* a salted table's ranges print their bucket first too, as EXPLAIN does */
  rowan_stmt *st = NULL;
  assert_int_equal(rowan_prepare(db, "SELECT X FROM T WHERE K = 'd'", -1, &st, NULL), ROWAN_OK);
  assert_int_equal(rowan_stmt_trace(st, 1), ROWAN_OK);
  while (rowan_step(st) == ROWAN_ROW) {
  }
  rowan_trace *tr = NULL;
  assert_int_equal(rowan_stmt_trace_get(st, &tr), ROWAN_OK);
  assert_int_equal(tr->n_ranges, 4);
  assert_string_equal(tr->ranges[0].text, "[0, 'd', *] .. [0, 'd', *]");
  assert_string_equal(tr->ranges[3].text, "[3, 'd', *] .. [3, 'd', *]");
  rowan_trace_free(tr);
  rowan_finalize(st);
  exec_ok(db, "DROP TABLE P");
  exec_ok(db, "DROP TABLE Q");
  exec_ok(db, "DROP TABLE T");
}

/* ---- traced statements ------------------------------------------------------------------ */
/* "blocks=N" of family fam on the FAMILIES line of EXPLAIN ANALYZE sql; -1 if absent. */
static long explain_blocks(rowan_db *db, const char *sql, const char *fam) {
  char ea[1024];
  snprintf(ea, sizeof ea, "EXPLAIN ANALYZE %s", sql);
  rowan_stmt *st = NULL;
  assert_int_equal(rowan_prepare(db, ea, -1, &st, NULL), ROWAN_OK);
  long n = -1;
  char pat[64];
  snprintf(pat, sizeof pat, "%s (blocks=", fam);
  while (rowan_step(st) == ROWAN_ROW) {
    const char *line = (const char *)rowan_column_text(st, 0);
    const char *fl = strstr(line, "FAMILIES: ");
    const char *p = fl ? strstr(fl, pat) : NULL;
    if (p && (p == fl + 10 || p[-1] == ' ')) n = strtol(p + strlen(pat), NULL, 10);
  }
  rowan_finalize(st);
  return n;
}

/* Run sql traced; compare the trace with the metrics, EXPLAIN ANALYZE and the layout.
** Returns the trace (the caller frees it). */
static rowan_trace *traced(rowan_db *db, const char *sql) {
  rowan_stmt *st = NULL;
  assert_int_equal(rowan_prepare(db, sql, -1, &st, NULL), ROWAN_OK);
  assert_int_equal(rowan_stmt_trace(st, 1), ROWAN_OK);
  int rc;
  while ((rc = rowan_step(st)) == ROWAN_ROW) {
  }
  assert_int_equal(rc, ROWAN_DONE);
  rowan_metrics m;
  assert_int_equal(rowan_stmt_metrics(st, &m), ROWAN_OK);
  rowan_trace *t = NULL;
  assert_int_equal(rowan_stmt_trace_get(st, &t), ROWAN_OK);
  assert_false(t->incomplete);
  rowan_layout *l = NULL;
  assert_int_equal(rowan_table_layout(db, "S", &l), ROWAN_OK);
  for (int f = 0; f < m.n_families; f++) {
    const char *fam = strchr(m.families[f].family, '.') + 1;
    uint64_t loads = 0, hits = 0;
    for (int i = 0; i < t->n_blocks; i++) {
      const rowan_block_read *b = &t->blocks[i];
      if (strcmp(b->table, "S") || strcmp(b->family, fam)) continue;
      loads += b->loads;
      hits += b->cache_hits;
      bool listed = false;
      for (int k = 0; k < l->n_blocks && !listed; k++)
        listed = l->blocks[k].file == b->file && l->blocks[k].block == b->block &&
                 !strcmp(l->families[l->blocks[k].family].name, fam);
      assert_true(listed);
    }
    if (loads != m.families[f].blocks_read)
      fail_msg("%s: %s: trace %llu loads, metrics %llu", sql, fam, (unsigned long long)loads,
               (unsigned long long)m.families[f].blocks_read);
    assert_int_equal(hits, m.families[f].blocks_cache_hit);
    assert_int_equal((long)loads, explain_blocks(db, sql, fam));
  }
  assert_int_equal(t->ranges_total, m.ranges_sought);
  assert_int_equal((uint64_t)t->n_ranges, m.ranges_sought < 4096 ? m.ranges_sought : 4096);
  rowan_layout_free(l);
  rowan_finalize(st);
  return t;
}

static uint64_t total_loads(const rowan_trace *t) {
  uint64_t n = 0;
  for (int i = 0; i < t->n_blocks; i++) n += t->blocks[i].loads;
  return n;
}

static void test_trace(void **state) {
  rowan_db *db = db_of(state);
  /* a range scan of one station reads few blocks; the same question without the key all */
  rowan_trace *a = traced(db, "SELECT COUNT(*) FROM S WHERE STATION = 'Bb' AND TEMP > 30");
  rowan_trace *b = traced(db, "SELECT COUNT(*) FROM S WHERE STATION LIKE '%b' AND TEMP > 30");
  assert_true(total_loads(a) > 0);
  assert_true(total_loads(a) * 3 < total_loads(b));
  assert_int_equal(a->n_ranges, 1);
  assert_string_equal(a->ranges[0].text, "['Bb', *] .. ['Bb', *]"); /* as EXPLAIN prints */
  assert_string_equal(a->ranges[0].table, "S");
  assert_non_null(a->ranges[0].start);
  assert_string_equal(b->ranges[0].text, "[*] .. [*]");
  assert_null(b->ranges[0].start);
  assert_null(b->ranges[0].end);
  rowan_trace_free(a);
  rowan_trace_free(b);
  /* point lookups: one range per key, each its key and the next */
  a = traced(db, "SELECT TEMP FROM S WHERE STATION IN ('Aa', 'Dd') AND "
                 "TS = TIMESTAMP '2020-01-02 00:00:00'");
  assert_int_equal(a->n_ranges, 2);
  assert_string_equal(a->ranges[0].text, "['Aa', '2020-01-02 00:00:00'] .. "
                                         "['Aa', '2020-01-02 00:00:00']");
  rowan_trace_free(a);
  /* a bounded range, reverse, LIMIT; a skip scan by prefix; a full scan */
  rowan_trace_free(traced(db, "SELECT TS, TEMP FROM S WHERE STATION = 'Cc' AND "
                              "TS < TIMESTAMP '2020-01-05 00:00:00' ORDER BY TS LIMIT 10"));
  a = traced(db, "SELECT /*+ SKIP_SCAN */ STATION, TEMP FROM S WHERE "
                 "TS = TIMESTAMP '2020-01-03 00:00:00'");
  assert_int_equal(a->ranges_total, 5);
  rowan_trace_free(a);
  rowan_trace_free(traced(db, "SELECT STATION, AVG(TEMP) FROM S GROUP BY STATION"));
  /* the columnar aggregate needs one file per family */
  assert_int_equal(rowan_compact(db, 1), ROWAN_OK);
  a = traced(db, "SELECT COUNT(*), MAX(TEMP) FROM S WHERE TEMP > 30");
  rowan_layout *l = NULL;
  assert_int_equal(rowan_table_layout(db, "S", &l), ROWAN_OK);
  assert_int_equal((uint64_t)a->n_blocks, l->families[1].blocks); /* every R block, once */
  rowan_layout_free(l);
  rowan_trace_free(a);
}

/* An uncovered index: its blocks and the lookups into the table are both recorded. */
static void test_index(void **state) {
  rowan_db *db = db_of(state);
  exec_ok(db, "CREATE INDEX IT ON S (TEMP)");
  assert_int_equal(rowan_flush(db), ROWAN_OK); /* the index rows into blocks */
  rowan_stmt *st = NULL;
  assert_int_equal(rowan_prepare(db, "SELECT /*+ INDEX(S IT) */ STATION, TS, NOTE FROM S "
                                     "WHERE TEMP = 7", -1, &st, NULL), ROWAN_OK);
  assert_int_equal(rowan_stmt_trace(st, 1), ROWAN_OK);
  int rows = 0;
  while (rowan_step(st) == ROWAN_ROW) rows++;
  assert_true(rows > 0);
  rowan_trace *t = NULL;
  assert_int_equal(rowan_stmt_trace_get(st, &t), ROWAN_OK);
  bool index = false, table = false;
  for (int i = 0; i < t->n_blocks; i++) {
    index |= !strcmp(t->blocks[i].table, "S.IT");
    table |= !strcmp(t->blocks[i].table, "S") && !strcmp(t->blocks[i].family, "R");
  }
  assert_true(index && table);
  assert_string_equal(t->ranges[0].table, "S.IT");
  assert_string_equal(t->ranges[0].text, "[7.0, *, *] .. [7.0, *, *]");
  assert_true(t->ranges_total == (uint64_t)rows + 1); /* the index range, a lookup per row */
  rowan_trace_free(t);
  /* off: the next run records nothing new, the last trace stays readable */
  assert_int_equal(rowan_stmt_trace(st, 0), ROWAN_OK);
  assert_int_equal(rowan_reset(st), ROWAN_OK);
  while (rowan_step(st) == ROWAN_ROW) {
  }
  assert_int_equal(rowan_stmt_trace_get(st, &t), ROWAN_OK);
  assert_true(t->n_blocks > 0);
  rowan_trace_free(t);
  rowan_finalize(st);
  exec_ok(db, "DROP INDEX IT ON S");
}

static void test_misuse(void **state) {
  rowan_db *db = db_of(state);
  rowan_stmt *st = NULL;
  assert_int_equal(rowan_prepare(db, "SELECT COUNT(*) FROM S", -1, &st, NULL), ROWAN_OK);
  rowan_trace *t = NULL;
  assert_int_equal(rowan_stmt_trace_get(st, &t), ROWAN_OK); /* never traced: empty */
  assert_int_equal(t->n_blocks + t->n_ranges, 0);
  assert_int_equal(t->ranges_total, 0);
  rowan_trace_free(t);
  rowan_trace_free(NULL);
  assert_int_equal(rowan_stmt_trace(NULL, 1), ROWAN_MISUSE);
  assert_int_equal(rowan_stmt_trace_get(NULL, &t), ROWAN_MISUSE);
  assert_null(t);
  assert_int_equal(rowan_stmt_trace_get(st, NULL), ROWAN_MISUSE);
  rowan_finalize(st);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_layout),
      cmocka_unit_test(test_families),
      cmocka_unit_test(test_regions),
      cmocka_unit_test(test_trace),
      cmocka_unit_test(test_index),
      cmocka_unit_test(test_misuse),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
