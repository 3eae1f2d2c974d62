/*
** tests/api/test_break_key_tail.c: rows decoded from their row key (exec_rowcodec_prepare:
** unneeded columns dropped, key columns of the key's NOT NULL fixed-width tail read from
** the key's end, projections decoded straight into the output row) against the same rows
** stored in cells. Random tables with a primary key of one to four columns of every key
** type (VARCHAR, CHAR, the integers, FLOAT, DOUBLE, DECIMAL, DATE, TIME, TIMESTAMP,
** BOOLEAN), ASC or DESC, some nullable, get random rows; a reference table with a BIGINT
** key holds the same values as plain columns. Random projections (every column, key
** columns only, the tail only, one column, repeated, reordered) with WHERE terms on key
** and value columns, and reads through an index on a value column, must return the same
** rows (as sorted lists) from both, with the data in the memstore, in store files and after
** a major compaction. Seeded (tu_seed; the seed is printed).
** Not here: the codecs' byte formats (tests/catalog/test_keycodec.c).
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "kv/env/env_mem.h"
#include "rowan.h"
#include "testutil.h"
#include "tu_api.h"

#define MAXC 8        /* columns of a table: up to 4 key columns, 2 value columns */
#define NROWS_MAX 160
#define LIT 48        /* bytes of one literal */

/* A key type and the literals its values are drawn from. */
typedef struct ktype {
  const char *name;          /* SQL type */
  const char *const *lits;   /* literals */
  int n;                     /* entries in lits */
} ktype;

static const char *const l_varchar[] = {"''", "'a'", "'a b'", "'ab'", "'it''s'", "'\xc3\xa9t\xc3\xa9'",
                                        "'zz'", "'a\x01'"};
static const char *const l_char[] = {"'ab'", "'abc'", "'a'", "'b c'", "'zzz'"};
static const char *const l_bigint[] = {"-9223372036854775807", "-1", "0", "1", "2147483648",
                                       "9223372036854775807", "42"};
static const char *const l_int[] = {"-2147483648", "-7", "0", "3", "65536", "2147483647"};
static const char *const l_small[] = {"-32768", "-1", "0", "255", "256", "32767"};
static const char *const l_tiny[] = {"-128", "-1", "0", "1", "127"};
static const char *const l_double[] = {"-1.5e300", "-2.5", "0.0", "1e-300", "3.25", "7.0",
                                       "1.0e15"};
static const char *const l_float[] = {"-2.25", "0.0", "1.5", "1024.0", "-0.5"};
static const char *const l_dec[] = {"-99999.999", "-0.001", "0", "0.5", "12.25", "99999.999"};
static const char *const l_ts[] = {"TIMESTAMP '1970-01-01 00:00:00'",
                                   "TIMESTAMP '2016-03-01 12:34:56.789'",
                                   "TIMESTAMP '0001-01-01 00:00:00'",
                                   "TIMESTAMP '9999-12-31 23:59:59.999'",
                                   "TIMESTAMP '1969-12-31 23:59:59.999'"};
static const char *const l_date[] = {"DATE '2024-02-29'", "DATE '1970-01-01'",
                                     "DATE '1900-03-01'", "DATE '2100-12-31'"};
static const char *const l_time[] = {"TIME '00:00:00'", "TIME '12:00:00'", "TIME '23:59:59'",
                                     "TIME '07:08:09'"};
static const char *const l_bool[] = {"TRUE", "FALSE"};

#define KT(name, arr) {name, arr, (int)(sizeof arr / sizeof arr[0])}
static const ktype ktypes[] = {
    KT("VARCHAR", l_varchar), KT("CHAR(3)", l_char),   KT("BIGINT", l_bigint),
    KT("INTEGER", l_int),     KT("SMALLINT", l_small), KT("TINYINT", l_tiny),
    KT("DOUBLE", l_double),   KT("FLOAT", l_float),    KT("DECIMAL(8,3)", l_dec),
    KT("TIMESTAMP", l_ts),    KT("DATE", l_date),      KT("TIME", l_time),
    KT("BOOLEAN", l_bool),
};
#define N_KTYPES (int)(sizeof ktypes / sizeof ktypes[0])

/* One random table: its columns (key columns first) and rows as literals. */
typedef struct tdef {
  int nk;                    /* key columns */
  int nc;                    /* all columns (nk + 2 value columns) */
  int type[MAXC];            /* ktypes index of each key column */
  bool desc[MAXC];           /* key column is DESC */
  bool nullable[MAXC];       /* key column declared NULL */
  int nrows;                 /* rows */
  char lit[NROWS_MAX][MAXC][LIT]; /* each row's literals ("NULL" allowed) */
} tdef;

static const char *colname(int c, int nk) {
  static const char *const kn[] = {"K0", "K1", "K2", "K3"};
  return c < nk ? kn[c] : c == nk ? "V0" : "V1";
}

static void make_tables(rowan_db *db, const tdef *t) {
  char sql[1024], cols[768] = "", pk[128] = "";
  for (int c = 0; c < t->nk; c++) {
    size_t n = strlen(cols);
    snprintf(cols + n, sizeof cols - n, "%s %s %s, ", colname(c, t->nk), ktypes[t->type[c]].name,
             t->nullable[c] ? "NULL" : "NOT NULL");
    n = strlen(pk);
    snprintf(pk + n, sizeof pk - n, "%s%s%s", c ? ", " : "", colname(c, t->nk),
             t->desc[c] ? " DESC" : "");
  }
  snprintf(sql, sizeof sql, "CREATE TABLE T (%sV0 VARCHAR, F.V1 BIGINT, CONSTRAINT PK "
                            "PRIMARY KEY (%s))", cols, pk);
  exec_ok(db, sql);
  /* the reference: the same columns as plain cells */
  char rcols[768] = "";
  for (int c = 0; c < t->nk; c++) {
    size_t n = strlen(rcols);
    snprintf(rcols + n, sizeof rcols - n, "%s %s, ", colname(c, t->nk), ktypes[t->type[c]].name);
  }
  snprintf(sql, sizeof sql, "CREATE TABLE R (ID BIGINT NOT NULL PRIMARY KEY, %sV0 VARCHAR, "
                            "F.V1 BIGINT)", rcols);
  exec_ok(db, sql);
  exec_ok(db, "CREATE INDEX TV ON T (V0) INCLUDE (V1)");
}

static void random_table(uint64_t *rs, tdef *t) {
  memset(t, 0, sizeof *t);
  t->nk = 1 + (int)tu_below(rs, 4);
  t->nc = t->nk + 2;
  for (int c = 0; c < t->nk; c++) {
    t->type[c] = (int)tu_below(rs, N_KTYPES);
    t->desc[c] = tu_below(rs, 3) == 0;
    t->nullable[c] = tu_below(rs, 6) == 0;
  }
  /* distinct key tuples */
  int want = 40 + (int)tu_below(rs, NROWS_MAX - 40);
  for (int tries = 0; t->nrows < want && tries < want * 20; tries++) {
    char (*row)[LIT] = t->lit[t->nrows];
    for (int c = 0; c < t->nk; c++) {
      const ktype *k = &ktypes[t->type[c]];
      if (t->nullable[c] && tu_below(rs, 5) == 0) snprintf(row[c], LIT, "NULL");
      else snprintf(row[c], LIT, "%s", k->lits[tu_below(rs, (uint64_t)k->n)]);
    }
    bool dup = false;
    for (int r = 0; r < t->nrows && !dup; r++) {
      bool same = true;
      for (int c = 0; c < t->nk && same; c++) same = strcmp(t->lit[r][c], row[c]) == 0;
      dup = same;
    }
    if (dup) continue;
    if (tu_below(rs, 6) == 0) snprintf(row[t->nk], LIT, "NULL");
    else snprintf(row[t->nk], LIT, "'v%d'", (int)tu_below(rs, 6));
    if (tu_below(rs, 6) == 0) snprintf(row[t->nk + 1], LIT, "NULL");
    else snprintf(row[t->nk + 1], LIT, "%d", (int)tu_below(rs, 1000) - 500);
    t->nrows++;
  }
}

static void load_rows(rowan_db *db, const tdef *t, int from, int to) {
  char sql[1024];
  for (int r = from; r < to; r++) {
    char vals[700] = "";
    for (int c = 0; c < t->nc; c++) {
      size_t n = strlen(vals);
      snprintf(vals + n, sizeof vals - n, "%s%s", c ? ", " : "", t->lit[r][c]);
    }
    snprintf(sql, sizeof sql, "UPSERT INTO T VALUES (%s)", vals);
    exec_ok(db, sql);
    snprintf(sql, sizeof sql, "UPSERT INTO R VALUES (%d, %s)", r, vals);
    exec_ok(db, sql);
  }
}

/* Result rows of sql, one text line each (hex of each value's text, type), sorted. */
typedef struct rows {
  char **line;   /* lines */
  int n;         /* count */
  int rc;        /* final code */
  char msg[200]; /* message when not DONE */
} rows;

static int cmp_line(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

static void query(rowan_db *db, const char *sql, rows *out) {
  memset(out, 0, sizeof *out);
  rowan_stmt *st;
  int rc = rowan_prepare(db, sql, -1, &st, NULL);
  if (rc != ROWAN_OK) {
    out->rc = rc;
    snprintf(out->msg, sizeof out->msg, "%s", rowan_errmsg(db));
    return;
  }
  int cap = 0;
  while ((rc = rowan_step(st)) == ROWAN_ROW) {
    char buf[1024];
    size_t n = 0;
    buf[0] = 0;
    for (int c = 0; c < rowan_column_count(st); c++) {
      const unsigned char *t = (const unsigned char *)rowan_column_text(st, c);
      int len = rowan_column_bytes(st, c);
      n += (size_t)snprintf(buf + n, sizeof buf - n, "%s", c ? "|" : "");
      if (!t) n += (size_t)snprintf(buf + n, sizeof buf - n, "NULL");
      for (int k = 0; t && k < len && n + 3 < sizeof buf; k++)
        n += (size_t)snprintf(buf + n, sizeof buf - n, "%02x", t[k]);
      if (n >= sizeof buf) n = sizeof buf - 1;
    }
    if (out->n == cap) {
      cap = cap ? cap * 2 : 64;
      out->line = realloc(out->line, (size_t)cap * sizeof *out->line);
      assert_non_null(out->line);
    }
    out->line[out->n] = strdup(buf);
    assert_non_null(out->line[out->n]);
    out->n++;
  }
  out->rc = rc;
  if (rc != ROWAN_DONE) snprintf(out->msg, sizeof out->msg, "%s", rowan_errmsg(db));
  rowan_finalize(st);
  if (out->n) qsort(out->line, (size_t)out->n, sizeof *out->line, cmp_line);
}

static void rows_free(rows *r) {
  for (int i = 0; i < r->n; i++) free(r->line[i]);
  free(r->line);
}

/* A random projection and WHERE over t: into proj / where. */
static void random_query(uint64_t *rs, const tdef *t, char *proj, size_t pcap, char *where,
                         size_t wcap) {
  proj[0] = where[0] = 0;
  int kind = (int)tu_below(rs, 6);
  if (kind == 0) {
    /* every column in table order (spelled out: R has an ID) */
    for (int c = 0; c < t->nc; c++) {
      size_t n = strlen(proj);
      snprintf(proj + n, pcap - n, "%s%s", c ? ", " : "", colname(c, t->nk));
    }
  } else if (kind == 1) { /* the key's last columns (the fixed tail) */
    int from = (int)tu_below(rs, (uint64_t)t->nk);
    for (int c = from; c < t->nk; c++) {
      size_t n = strlen(proj);
      snprintf(proj + n, pcap - n, "%s%s", c > from ? ", " : "", colname(c, t->nk));
    }
  } else {
    int m = 1 + (int)tu_below(rs, (uint64_t)t->nc);
    for (int i = 0; i < m; i++) {
      size_t n = strlen(proj);
      snprintf(proj + n, pcap - n, "%s%s", i ? ", " : "",
               colname((int)tu_below(rs, (uint64_t)t->nc), t->nk));
    }
  }
  /* WHERE: equality on a leading key prefix from a row, a range on a key column, a value
     column test, or nothing */
  int r = (int)tu_below(rs, (uint64_t)t->nrows);
  switch (tu_below(rs, 5)) {
  case 0: {
    int m = 1 + (int)tu_below(rs, (uint64_t)t->nk);
    for (int c = 0; c < m; c++) {
      size_t n = strlen(where);
      const char *l = t->lit[r][c];
      if (strcmp(l, "NULL") == 0)
        snprintf(where + n, wcap - n, "%s%s IS NULL", c ? " AND " : " WHERE ", colname(c, t->nk));
      else
        snprintf(where + n, wcap - n, "%s%s = %s", c ? " AND " : " WHERE ", colname(c, t->nk), l);
    }
    break;
  }
  case 1: {
    int c = (int)tu_below(rs, (uint64_t)t->nk);
    const char *l = t->lit[r][c];
    if (strcmp(l, "NULL") != 0)
      snprintf(where, wcap, " WHERE %s %s %s", colname(c, t->nk),
               tu_below(rs, 2) ? ">=" : "<", l);
    break;
  }
  case 2: snprintf(where, wcap, " WHERE V1 > %d", (int)tu_below(rs, 600) - 300); break;
  case 3: snprintf(where, wcap, " WHERE V0 = 'v%d'", (int)tu_below(rs, 6)); break;
  default: break;
  }
}

static void compare(rowan_db *db, const tdef *t, uint64_t *rs, uint64_t seed, const char *when,
                    int nq) {
  char proj[512], where[1024], qa[1700], qb[1700];
  for (int i = 0; i < nq; i++) {
    random_query(rs, t, proj, sizeof proj, where, sizeof where);
    const char *hint = tu_below(rs, 4) == 0 ? "/*+ NO_INDEX */ " : "";
    snprintf(qa, sizeof qa, "SELECT %s%s FROM T%s", hint, proj, where);
    snprintf(qb, sizeof qb, "SELECT %s FROM R%s", proj, where);
    rows a, b;
    query(db, qa, &a);
    query(db, qb, &b);
    bool same = a.rc == b.rc && a.n == b.n;
    for (int k = 0; same && k < a.n; k++) same = strcmp(a.line[k], b.line[k]) == 0;
    if (!same) {
      fprintf(stderr, "seed %llu (%s): %s\n  gives %d rows (%s %s), the reference %s gives %d "
              "(%s %s)\n", (unsigned long long)seed, when, qa, a.n, rowan_errstr(a.rc), a.msg,
              qb, b.n, rowan_errstr(b.rc), b.msg);
      for (int k = 0; k < a.n || k < b.n; k++)
        if (k >= a.n || k >= b.n || strcmp(a.line[k], b.line[k]) != 0) {
          fprintf(stderr, "  first difference at %d: %s vs %s\n", k, k < a.n ? a.line[k] : "-",
                  k < b.n ? b.line[k] : "-");
          break;
        }
      fail();
    }
    rows_free(&a);
    rows_free(&b);
  }
}

static void key_tail_equals_cells(void **state) {
  (void)state;
  uint64_t seed = tu_seed("key_tail_equals_cells"), rs = seed;
  int ntables = (int)tu_scaled(24, 8);
  tdef *t = malloc(sizeof *t);
  assert_non_null(t);
  for (int k = 0; k < ntables; k++) {
    kv_env *env = kv_env_mem_new(0);
    rowan_db *db = tu_open_mem(env);
    random_table(&rs, t);
    make_tables(db, t);
    int half = t->nrows / 2;
    load_rows(db, t, 0, half);
    assert_int_equal(rowan_flush(db), ROWAN_OK);
    load_rows(db, t, half, t->nrows);
    compare(db, t, &rs, seed, "store file and memstore", 30);
    assert_int_equal(rowan_compact(db, 1), ROWAN_OK);
    compare(db, t, &rs, seed, "after a major compaction", 30);
    assert_int_equal(rowan_close(db), ROWAN_OK);
    kv_env_free(env);
  }
  free(t);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(key_tail_equals_cells),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
