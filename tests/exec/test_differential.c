/*
** tests/exec/test_differential.c: differential tests of Rowan against SQLite (libsqlite3).
** Each round makes a random table (a composite key of 1-3 columns, ASC and DESC, of
** INTEGER, BIGINT, DOUBLE and VARCHAR; nullable INTEGER, DOUBLE and VARCHAR columns), writes
** the same random rows into both engines (some flushed to store files, some updated or
** deleted after), and runs random queries of the common subset: key and non-key predicates
** (=, <, <=, >, >=, <>, IN, BETWEEN, IS [NOT] NULL, LIKE 'prefix%', OR, SUBSTR(k, 1, n) and
** SUBSTR(k, 1) op 'x' and CAST(k AS BIGINT/DOUBLE) op c, which the key ranges see through), ORDER BY with
** LIMIT/OFFSET, DISTINCT, GROUP BY with COUNT/SUM/MIN/MAX/AVG, and the shapes the first row of
** each leading-key value answers (DISTINCT k0, COUNT(DISTINCT k0), GROUP BY k0 with the MAX or
** MIN of k1 the first row holds, or the other one). Answers must be equal, in
** order when the ORDER BY is total, else as multisets. Every query is also run with its key
** predicates hidden from the planner (key columns wrapped as k + 0 or k || ''), which
** must give a FULL SCAN and the same rows: each plan kind is checked against a full scan.
** The run prints how many queries got each plan kind (api_test_scan_kind) and fails if a
** kind got none.
** Indexes (issue 7): each table gets one or two secondary indexes on random columns (one or
** two keys, ASC or DESC, sometimes an INCLUDE column), created before the rows so every
** write maintains them. Every query also runs with each index forced (/+ INDEX(t IXn) +/)
** and the key-hidden run with /+ NO_INDEX NO_SKIP_SCAN +/ (a GROUP BY k0 with the MAX or MIN
** of k1 may skip to each prefix's first row with no predicate to hide: seed 714391258 found
** it), so each answer is checked through the table
** and through every index (covered or with lookups) against SQLite; the run prints how many
** unhinted queries the planner answered from an index and fails if none was. Some queries
** bound later key columns and not the leading one, and every query also runs with the skip
** scan by prefix forced (/+ SKIP_SCAN +/, ignored where it does not apply); the run fails if
** none ran as one, or none as one inside key ranges or over several key slots. A failure is minimized (clauses, then rows, are dropped while it still
** fails) and printed as an SQL script that reproduces it.
**
** Where SQLite's rules differ, it is set up to match or the case is kept out:
**  - LIKE: PRAGMA case_sensitive_like = ON (Rowan's LIKE is case-sensitive);
**  - type affinity: every value is written as a literal of its column's type (doubles always
**    with a fraction, strings quoted), so SQLite stores what Rowan stores; -0.0 and NaN are
**    not generated (SQLite has no negative zero in keys, no NaN);
**  - integer division and overflow: no arithmetic on column values except k + 0, which
**    cannot overflow with the small integers generated;
**  - UPSERT is INSERT OR REPLACE in SQLite, so every UPSERT gives every column;
**  - AVG of integers is DECIMAL in Rowan and REAL in SQLite: numbers are compared by their
**    nearest double, printed with 12 significant digits (sums of the generated doubles are
**    exact: they are multiples of 1/4);
**  - NULL order is spelled out (NULLS FIRST / LAST) in every ORDER BY;
**  - LIMIT only with an ORDER BY that ends with the whole key (a total order).
** ROWAN_TEST_SCALE scales the number of rounds (2,000 queries at scale 1); ROWAN_SEED
** reproduces a run. With ROWAN_BACKEND=hbase each round's database is a fresh namespace on a
** real HBase (tests/tu_hbase.h; the CTest test hbase_differential).
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <sqlite3.h>

#include "api/api_test.h"
#include "kv/env/env_mem.h"
#include "rowan.h"
#include "testutil.h"
#include "tu_hbase.h"

#define QUERIES_PER_ROUND 100
#define MAX_COLS 6
#define MAX_ROWS 120
#define MAX_CLAUSES 4
#define SQL_CAP 4096

enum ctype { T_INT = 0, T_BIGINT, T_DOUBLE, T_VARCHAR };
static const char *const TYPE_SQL[] = {"INTEGER", "BIGINT", "DOUBLE", "VARCHAR"};

typedef struct col {
  char name[8];  /* column name */
  int type;      /* enum ctype */
  bool key;      /* part of the primary key */
  bool desc;     /* DESC key column */
} col;

typedef struct schema {
  col c[MAX_COLS];  /* key columns first */
  int ncol;         /* columns */
  int nkey;         /* key columns */
} schema;

/* One row as SQL literals. */
typedef struct row {
  char lit[MAX_COLS][24];  /* literal text of each column ("NULL", "3", "-1.5", "'ab'") */
  bool live;               /* still present (not deleted) */
} row;

typedef struct world {
  uint64_t rng;                /* PRNG state */
  schema s;                    /* the table */
  row rows[MAX_ROWS];          /* rows written, in order */
  int nrows;                   /* rows used */
  kv_env *env;                 /* Rowan's in-memory file system */
  char uri[400];               /* ROWAN_BACKEND=hbase: the round's HBase namespace, else "" */
  rowan_db *rdb;               /* Rowan */
  sqlite3 *sdb;                /* SQLite */
  int kind_count[5];           /* queries per plan kind */
  int queries;                 /* queries compared */
  int nonempty;                /* of which returned at least one row */
  int nidx;                    /* secondary indexes on t (Rowan only) */
  char idx_sql[2][160];        /* their CREATE INDEX statements */
  int index_plans;             /* unhinted queries the planner answered from an index */
  int skip_plans;              /* queries run as a skip scan by prefix (hint SKIP_SCAN) */
  int bounded_skips;           /* of them, inside key ranges or with a prefix of several key
                                  columns (a skip scan over several slots) */
  int prefix_plans;            /* unhinted queries that read the first row of each prefix */
} world;

static const char *const KINDS[5] = {"NOTHING", "POINT LOOKUP", "RANGE SCAN", "SKIP SCAN", "FULL SCAN"};
static const char *const STRS[] = {"''", "'a'", "'ab'", "'abc'", "'b'", "'ba'", "'B'", "'a%'", "'zz'"};
static const char *const DBLS[] = {"-2.5", "-1.0", "-0.5", "0.0", "0.25", "1.5", "3.0", "100.75"};

static int below(world *w, int n) { return (int)tu_below(&w->rng, (uint64_t)n); }

/* A random literal of a type. */
static void rand_lit(world *w, int type, char *buf, size_t cap) {
  switch (type) {
    case T_INT: snprintf(buf, cap, "%d", below(w, 11) - 5); break;
    case T_BIGINT: snprintf(buf, cap, "%lld", (long long)(below(w, 7) - 3) * 1000000000000LL); break;
    case T_DOUBLE: snprintf(buf, cap, "%s", DBLS[below(w, 8)]); break;
    default: snprintf(buf, cap, "%s", STRS[below(w, 7)]); break;
  }
}

/* A literal for comparing with a column: sometimes a fraction against an integer column. */
static void cmp_lit(world *w, int type, char *buf, size_t cap) {
  if (type == T_INT && below(w, 4) == 0) {
    snprintf(buf, cap, "%d.5", below(w, 9) - 5);
    return;
  }
  if (type == T_VARCHAR && below(w, 6) == 0) {
    snprintf(buf, cap, "'%c'", "abcAz"[below(w, 5)]);
    return;
  }
  rand_lit(w, type, buf, cap);
}

/* ---- Engines ------------------------------------------------------------------------------- */
static int r_exec(world *w, const char *sql) {
  int rc = rowan_exec(w->rdb, sql, NULL, NULL);
  if (rc != ROWAN_OK) fprintf(stderr, "rowan: %s\n  -> %s\n", sql, rowan_errmsg(w->rdb));
  return rc;
}

static int s_exec(world *w, const char *sql) {
  char *msg = NULL;
  int rc = sqlite3_exec(w->sdb, sql, NULL, NULL, &msg);
  if (rc != SQLITE_OK) fprintf(stderr, "sqlite: %s\n  -> %s\n", sql, msg ? msg : "");
  sqlite3_free(msg);
  return rc;
}

/* Results: values as canonical strings, one array of nrow * ncol. */
typedef struct result {
  char **v;     /* values */
  int n;        /* values stored */
  int cap;      /* capacity */
  int ncol;     /* columns */
  bool failed;  /* the statement failed */
  char err[256];/* its message */
} result;

static void res_add(result *r, const char *s) {
  if (r->n == r->cap) {
    r->cap = r->cap ? r->cap * 2 : 64;
    r->v = realloc(r->v, (size_t)r->cap * sizeof *r->v);
  }
  r->v[r->n++] = strdup(s);
}

static void res_free(result *r) {
  for (int i = 0; i < r->n; i++) free(r->v[i]);
  free(r->v);
  memset(r, 0, sizeof *r);
}

static void num_text(double d, char *buf, size_t cap) {
  if (d == 0) d = 0; /* -0.0 prints as 0 */
  snprintf(buf, cap, "%.12g", d);
}

/* numeric[i]: output column i is a number (compared as a double). */
static void run_rowan(world *w, const char *sql, const bool *numeric, result *r, const char **kind) {
  rowan_stmt *st = NULL;
  memset(r, 0, sizeof *r);
  if (kind) *kind = NULL;
  int rc = rowan_prepare(w->rdb, sql, -1, &st, NULL);
  if (rc != ROWAN_OK || !st) {
    r->failed = true;
    snprintf(r->err, sizeof r->err, "%s", rowan_errmsg(w->rdb));
    return;
  }
  r->ncol = rowan_column_count(st);
  char buf[64];
  while ((rc = rowan_step(st)) == ROWAN_ROW) {
    if (kind && !*kind) *kind = api_test_scan_kind(st);
    for (int i = 0; i < r->ncol; i++) {
      if (rowan_column_type(st, i) == ROWAN_NULL) {
        res_add(r, "NULL");
      } else if (numeric[i]) {
        num_text(rowan_column_double(st, i), buf, sizeof buf);
        res_add(r, buf);
      } else {
        res_add(r, rowan_column_text(st, i));
      }
    }
  }
  if (kind && !*kind) *kind = api_test_scan_kind(st);
  if (rc != ROWAN_DONE) {
    r->failed = true;
    snprintf(r->err, sizeof r->err, "%s", rowan_errmsg(w->rdb));
  }
  rowan_finalize(st);
}

static void run_sqlite(world *w, const char *sql, const bool *numeric, result *r) {
  sqlite3_stmt *st = NULL;
  memset(r, 0, sizeof *r);
  if (sqlite3_prepare_v2(w->sdb, sql, -1, &st, NULL) != SQLITE_OK) {
    r->failed = true;
    snprintf(r->err, sizeof r->err, "%s", sqlite3_errmsg(w->sdb));
    return;
  }
  r->ncol = sqlite3_column_count(st);
  char buf[64];
  int rc;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    for (int i = 0; i < r->ncol; i++) {
      if (sqlite3_column_type(st, i) == SQLITE_NULL) {
        res_add(r, "NULL");
      } else if (numeric[i]) {
        num_text(sqlite3_column_double(st, i), buf, sizeof buf);
        res_add(r, buf);
      } else {
        res_add(r, (const char *)sqlite3_column_text(st, i));
      }
    }
  }
  if (rc != SQLITE_DONE) {
    r->failed = true;
    snprintf(r->err, sizeof r->err, "%s", sqlite3_errmsg(w->sdb));
  }
  sqlite3_finalize(st);
}

static int g_ncol;
static int cmp_rows(const void *a, const void *b) {
  char *const *x = a, *const *y = b;
  for (int i = 0; i < g_ncol; i++) {
    int c = strcmp(x[i], y[i]);
    if (c) return c;
  }
  return 0;
}

/* Equal results (ordered: row order matters). */
static bool same(result *a, result *b, bool ordered) {
  if (a->failed || b->failed) return false;
  if (a->ncol != b->ncol || a->n != b->n) return false;
  if (!ordered && a->ncol > 0 && a->n > 0) {
    g_ncol = a->ncol;
    qsort(a->v, (size_t)(a->n / a->ncol), (size_t)a->ncol * sizeof(char *), cmp_rows);
    qsort(b->v, (size_t)(b->n / b->ncol), (size_t)b->ncol * sizeof(char *), cmp_rows);
  }
  for (int i = 0; i < a->n; i++)
    if (strcmp(a->v[i], b->v[i]) != 0) return false;
  return true;
}

static void print_result(const char *who, const result *r) {
  if (r->failed) {
    fprintf(stderr, "  %s: error: %s\n", who, r->err);
    return;
  }
  fprintf(stderr, "  %s: %d rows\n", who, r->ncol ? r->n / r->ncol : 0);
  for (int i = 0; i < r->n && i < 40 * (r->ncol ? r->ncol : 1); i += r->ncol ? r->ncol : 1) {
    fprintf(stderr, "    ");
    for (int j = 0; j < r->ncol; j++) fprintf(stderr, "%s%s", j ? " | " : "", r->v[i + j]);
    fprintf(stderr, "\n");
  }
}

/* ---- Tables and rows ------------------------------------------------------------------------- */
static void create_sql(const schema *s, char *buf, size_t cap) {
  size_t o = (size_t)snprintf(buf, cap, "CREATE TABLE t (");
  for (int i = 0; i < s->ncol; i++)
    o += (size_t)snprintf(buf + o, cap - o, "%s %s%s, ", s->c[i].name, TYPE_SQL[s->c[i].type],
                          s->c[i].key ? " NOT NULL" : "");
  o += (size_t)snprintf(buf + o, cap - o, "CONSTRAINT pk PRIMARY KEY (");
  for (int i = 0; i < s->nkey; i++)
    o += (size_t)snprintf(buf + o, cap - o, "%s%s%s", i ? ", " : "", s->c[i].name,
                          s->c[i].desc ? " DESC" : "");
  snprintf(buf + o, cap - o, "))");
}

static void row_values(const schema *s, const row *r, char *buf, size_t cap) {
  size_t o = 0;
  for (int i = 0; i < s->ncol; i++) o += (size_t)snprintf(buf + o, cap - o, "%s%s", i ? ", " : "", r->lit[i]);
}

static void write_row(world *w, const row *r, bool upsert_rowan_only) {
  char vals[512], sql[1024];
  row_values(&w->s, r, vals, sizeof vals);
  snprintf(sql, sizeof sql, "UPSERT INTO t VALUES (%s)", vals);
  assert_int_equal(r_exec(w, sql), ROWAN_OK);
  if (!upsert_rowan_only) {
    snprintf(sql, sizeof sql, "INSERT OR REPLACE INTO t VALUES (%s)", vals);
    assert_int_equal(s_exec(w, sql), SQLITE_OK);
  }
}

static void key_where(const schema *s, const row *r, char *buf, size_t cap) {
  size_t o = 0;
  for (int i = 0; i < s->nkey; i++)
    o += (size_t)snprintf(buf + o, cap - o, "%s%s = %s", i ? " AND " : "", s->c[i].name, r->lit[i]);
}

/* Open fresh engines and create the table (no rows). */
static void open_engines(world *w) {
  char sql[SQL_CAP];
  w->env = kv_env_mem_new(0);
  rowan_options o;
  rowan_options_init(&o);
  o.kv_env = w->env;
  o.sync_mode = ROWAN_SYNC_OFF;
  char err[300];
  if (tu_hbase_uri("diff", w->uri, sizeof w->uri, err, sizeof err)) fail_msg("%s", err);
  if (w->uri[0]) o.kv_env = NULL; /* on HBase (tests/tu_hbase.h) */
  assert_int_equal(rowan_open(w->uri[0] ? w->uri : "/diff", &o, &w->rdb), ROWAN_OK);
  assert_int_equal(sqlite3_open(":memory:", &w->sdb), SQLITE_OK);
  assert_int_equal(s_exec(w, "PRAGMA case_sensitive_like = ON"), SQLITE_OK);
  create_sql(&w->s, sql, sizeof sql);
  assert_int_equal(r_exec(w, sql), ROWAN_OK);
  assert_int_equal(s_exec(w, sql), SQLITE_OK);
  for (int i = 0; i < w->nidx; i++) assert_int_equal(r_exec(w, w->idx_sql[i]), ROWAN_OK);
}

static void close_engines(world *w) {
  assert_int_equal(rowan_close(w->rdb), ROWAN_OK);
  sqlite3_close(w->sdb);
  kv_env_free(w->env);
  tu_hbase_drop(w->uri);
  w->rdb = NULL;
  w->sdb = NULL;
  w->env = NULL;
}

/* Write the live rows (keep[i] false leaves row i out), flushing halfway. */
static void load_rows(world *w, const bool *keep) {
  int n = 0;
  for (int i = 0; i < w->nrows; i++) {
    if (!w->rows[i].live || (keep && !keep[i])) continue;
    write_row(w, &w->rows[i], false);
    if (++n == w->nrows / 2) assert_int_equal(api_test_flush(w->rdb), ROWAN_OK);
  }
}

static void make_world(world *w) {
  schema *s = &w->s;
  memset(s, 0, sizeof *s);
  s->nkey = 1 + below(w, 3);
  s->ncol = s->nkey + 2 + below(w, 2);
  for (int i = 0; i < s->ncol; i++) {
    col *c = &s->c[i];
    c->key = i < s->nkey;
    snprintf(c->name, sizeof c->name, c->key ? "K%d" : "C%d", c->key ? i : i - s->nkey);
    c->type = c->key ? below(w, 4) : (i - s->nkey) % 3 == 0 ? T_INT : (i - s->nkey) % 3 == 1 ? T_DOUBLE : T_VARCHAR;
    c->desc = c->key && below(w, 2);
  }
  /* indexes: keys on random columns (non-key ones preferred), maybe an INCLUDE column */
  w->nidx = 1 + below(w, 2);
  for (int x = 0; x < w->nidx; x++) {
    int a = below(w, 3) ? s->nkey + below(w, s->ncol - s->nkey) : below(w, s->ncol);
    int b = below(w, 3) == 0 ? below(w, s->ncol) : -1;
    if (b == a) b = -1;
    int inc = s->nkey + below(w, s->ncol - s->nkey);
    size_t o = (size_t)snprintf(w->idx_sql[x], sizeof w->idx_sql[x], "CREATE INDEX ix%d ON t (%s%s",
                                x, s->c[a].name, below(w, 3) == 0 ? " DESC" : "");
    if (b >= 0)
      o += (size_t)snprintf(w->idx_sql[x] + o, sizeof w->idx_sql[x] - o, ", %s%s", s->c[b].name,
                            below(w, 2) ? " DESC" : "");
    if (inc != a && inc != b && below(w, 2))
      snprintf(w->idx_sql[x] + o, sizeof w->idx_sql[x] - o, ") INCLUDE (%s)", s->c[inc].name);
    else
      snprintf(w->idx_sql[x] + o, sizeof w->idx_sql[x] - o, ")");
  }
  w->nrows = 30 + below(w, MAX_ROWS - 30);
  for (int r = 0; r < w->nrows; r++) {
    row *x = &w->rows[r];
    x->live = true;
    for (int i = 0; i < s->ncol; i++) {
      if (!s->c[i].key && below(w, 5) == 0)
        snprintf(x->lit[i], sizeof x->lit[i], "NULL");
      else
        rand_lit(w, s->c[i].type, x->lit[i], sizeof x->lit[i]);
    }
  }
  /* Rows with the same key: the later one wins in both engines; mark earlier ones dead so
  ** minimization reloads the same data. */
  for (int r = 0; r < w->nrows; r++)
    for (int q = r + 1; q < w->nrows; q++) {
      bool eq = true;
      for (int i = 0; i < s->nkey && eq; i++) eq = strcmp(w->rows[r].lit[i], w->rows[q].lit[i]) == 0;
      if (eq) {
        w->rows[r].live = false;
        break;
      }
    }
}

/* After loading: delete a few rows and update a few, in both engines (tombstones over store
** files and the memstore). */
static void churn(world *w) {
  char where[512], sql[1024];
  for (int k = 0; k < 3; k++) {
    int r = below(w, w->nrows);
    if (!w->rows[r].live) continue;
    key_where(&w->s, &w->rows[r], where, sizeof where);
    snprintf(sql, sizeof sql, "DELETE FROM t WHERE %s", where);
    assert_int_equal(r_exec(w, sql), ROWAN_OK);
    assert_int_equal(s_exec(w, sql), SQLITE_OK);
    w->rows[r].live = false;
  }
  for (int k = 0; k < 3; k++) {
    int r = below(w, w->nrows);
    if (!w->rows[r].live) continue;
    for (int i = w->s.nkey; i < w->s.ncol; i++) rand_lit(w, w->s.c[i].type, w->rows[r].lit[i], 24);
    write_row(w, &w->rows[r], false);
  }
}

/* ---- Queries ----------------------------------------------------------------------------------- */
typedef struct query {
  char clause[MAX_CLAUSES][2][256]; /* WHERE clauses (AND-ed): [0] plain, [1] key hidden */
  bool on;                          /* unused marker for clarity */
  int nclause;                      /* clauses */
  bool use[MAX_CLAUSES];            /* clause kept (minimization drops them) */
  char select[512];                 /* select list */
  char tail[512];                   /* GROUP BY / ORDER BY / LIMIT text */
  bool numeric[MAX_COLS + 4];       /* per output column */
  bool ordered;                     /* compare in order */
  int target;                       /* plan kind aimed at */
} query;

/* Column reference, hidden from the planner when hide is set and the column is a key. */
static void colref(const col *c, bool hide, char *buf, size_t cap) {
  if (hide && c->key)
    snprintf(buf, cap, c->type == T_VARCHAR ? "(%s || '')" : "(%s + 0)", c->name);
  else
    snprintf(buf, cap, "%s", c->name);
}

/* An atom on column c into both clause texts. */
static void atom(world *w, const col *c, int form, char out[2][256]) {
  char l1[24], l2[24], l3[24];
  cmp_lit(w, c->type, l1, sizeof l1);
  rand_lit(w, c->type, l2, sizeof l2);
  rand_lit(w, c->type, l3, sizeof l3);
  static const char *const OPS[] = {"=", "<", "<=", ">", ">=", "<>"};
  int fop = below(w, 5), flen = 1 + below(w, 3), fdbl = below(w, 2); /* form 7's choices */
  for (int h = 0; h < 2; h++) {
    char ref[32];
    colref(c, h == 1, ref, sizeof ref);
    switch (form) {
      case 0: snprintf(out[h], 256, "%s = %s", ref, l2); break;
      case 1: snprintf(out[h], 256, "%s %s %s", ref, OPS[1 + (l1[0] + l2[0]) % 5], l1); break;
      case 2: snprintf(out[h], 256, "%s IN (%s, %s, %s)", ref, l1, l2, l3); break;
      case 3: snprintf(out[h], 256, "%s BETWEEN %s AND %s", ref, l2, l3); break;
      case 4: snprintf(out[h], 256, "%s IS %sNULL", ref, l1[0] % 2 ? "NOT " : ""); break;
      case 5:
        if (c->type == T_VARCHAR)
          snprintf(out[h], 256, "%s LIKE '%c%%'", ref, "abB"[(unsigned char)l1[1] % 3]);
        else
          snprintf(out[h], 256, "%s <> %s", ref, l1);
        break;
      case 7: /* a function of the column the planner sees through (issue 17) */
        if (c->type == T_VARCHAR && fdbl) /* SQLite's SUBSTR of '' is '', Rowan's NULL */
          snprintf(out[h], 256, "(SUBSTR(%s, 1) %s %s AND %s <> '')", ref, OPS[fop], l2, ref);
        else if (c->type == T_VARCHAR)
          snprintf(out[h], 256, "(SUBSTR(%s, 1, %d) %s %s AND %s <> '')", ref, flen, OPS[fop],
                   l2, ref);
        else
          snprintf(out[h], 256, "CAST(%s AS %s) %s %s", ref,
                   c->type == T_DOUBLE || (fdbl && c->type == T_INT) ? "DOUBLE" : "BIGINT",
                   OPS[fop], l1);
        break;
      default: snprintf(out[h], 256, "(%s < %s OR %s > %s)", ref, l2, ref, l3); break;
    }
  }
}

static void gen_where(world *w, query *q) {
  const schema *s = &w->s;
  q->nclause = 0;
  q->target = below(w, 6);
  switch (q->target) {
    case 0: /* contradiction on the leading key column */
      atom(w, &s->c[0], 0, q->clause[q->nclause++]);
      atom(w, &s->c[0], 0, q->clause[q->nclause++]);
      break;
    case 1: /* every key column pinned */
      for (int i = 0; i < s->nkey; i++)
        atom(w, &s->c[i], below(w, 3) == 0 ? 2 : below(w, 5) == 0 ? 7 : 0, q->clause[q->nclause++]);
      break;
    case 2: /* a prefix pinned, then a range */
      for (int i = 0; i < s->nkey - 1 && below(w, 2); i++) atom(w, &s->c[i], 0, q->clause[q->nclause++]);
      {
        int at = q->nclause++;
        atom(w, &s->c[at], below(w, 4) == 0 ? 7 : below(w, 2) ? 1 : 3, q->clause[at]);
      }
      break;
    case 3: /* IN or OR on the leading column, maybe more after */
      atom(w, &s->c[0], below(w, 2) ? 2 : 6, q->clause[q->nclause++]);
      if (s->nkey > 1 && below(w, 2)) atom(w, &s->c[1], below(w, 3), q->clause[q->nclause++]);
      break;
    case 4: /* nothing on the leading key column */
      break;
    default: /* nothing on the leading key column, later ones bounded: a skip scan by prefix */
      for (int i = 1; i < s->nkey && (i == 1 || below(w, 2)); i++)
        atom(w, &s->c[i], below(w, 4) == 0 ? 2 : below(w, 4), q->clause[q->nclause++]);
      break;
  }
  /* Extra predicates anywhere (non-key most often). */
  while (q->nclause < MAX_CLAUSES && below(w, 3) == 0) {
    int ci = s->nkey + below(w, s->ncol - s->nkey);
    if (below(w, 4) == 0) ci = below(w, s->ncol);
    atom(w, &s->c[ci], below(w, 8), q->clause[q->nclause++]);
  }
  for (int i = 0; i < q->nclause; i++) q->use[i] = true;
}

static void gen_shape(world *w, query *q) {
  const schema *s = &w->s;
  memset(q->numeric, 0, sizeof q->numeric);
  q->ordered = false;
  q->tail[0] = 0;
  int shape = below(w, 5);
  if (shape <= 1) { /* plain rows */
    size_t o = 0;
    for (int i = 0; i < s->ncol; i++) {
      o += (size_t)snprintf(q->select + o, sizeof q->select - o, "%s%s", i ? ", " : "", s->c[i].name);
      q->numeric[i] = s->c[i].type != T_VARCHAR;
    }
    if (shape == 1) { /* ORDER BY the key (maybe reversed, maybe after a non-key column) */
      bool rev = below(w, 2);
      size_t t = 0;
      t += (size_t)snprintf(q->tail, sizeof q->tail, " ORDER BY ");
      if (below(w, 3) == 0) {
        const col *c = &s->c[s->nkey + below(w, s->ncol - s->nkey)];
        t += (size_t)snprintf(q->tail + t, sizeof q->tail - t, "%s %s NULLS %s, ", c->name,
                              below(w, 2) ? "DESC" : "ASC", below(w, 2) ? "LAST" : "FIRST");
      }
      for (int i = 0; i < s->nkey; i++) {
        bool d = s->c[i].desc != rev;
        t += (size_t)snprintf(q->tail + t, sizeof q->tail - t, "%s%s %s", i ? ", " : "",
                              s->c[i].name, d ? "DESC" : "ASC");
      }
      if (below(w, 2)) {
        t += (size_t)snprintf(q->tail + t, sizeof q->tail - t, " LIMIT %d", 1 + below(w, 10));
        if (below(w, 2)) snprintf(q->tail + t, sizeof q->tail - t, " OFFSET %d", below(w, 5));
      }
      q->ordered = true;
    }
  } else if (shape == 2) { /* aggregates, maybe grouped */
    const col *g = &s->c[below(w, s->ncol)];
    const col *a = &s->c[below(w, s->ncol)];
    bool grouped = below(w, 3) != 0;
    bool num = a->type != T_VARCHAR;
    if (num)
      snprintf(q->select, sizeof q->select, "%s%sCOUNT(*), COUNT(%s), SUM(%s), MIN(%s), MAX(%s), AVG(%s)",
               grouped ? g->name : "", grouped ? ", " : "", a->name, a->name, a->name, a->name, a->name);
    else
      snprintf(q->select, sizeof q->select, "%s%sCOUNT(*), COUNT(%s), MIN(%s), MAX(%s), COUNT(DISTINCT %s)",
               grouped ? g->name : "", grouped ? ", " : "", a->name, a->name, a->name, a->name);
    int base = grouped ? 1 : 0;
    if (grouped) q->numeric[0] = g->type != T_VARCHAR;
    for (int i = 0; i < 6; i++) q->numeric[base + i] = num || i < 2 || i == 4;
    if (grouped) {
      snprintf(q->tail, sizeof q->tail, " GROUP BY %s", g->name);
      if (below(w, 3) == 0) {
        size_t t = strlen(q->tail);
        snprintf(q->tail + t, sizeof q->tail - t, " HAVING COUNT(*) > %d", below(w, 3));
      }
    }
  } else if (shape == 4) { /* what the first row of each leading-key value answers
                              (planner/skip_prefix.h plan_prefix_first), and near misses */
    const col *k0 = &s->c[0], *k1 = &s->c[s->nkey > 1 ? 1 : 0];
    int v = below(w, 4);
    bool first = below(w, 4) != 0; /* the aggregate the first row holds, else the other */
    const char *ext = (k1->desc == first) ? "MAX" : "MIN";
    if (v == 0) {
      snprintf(q->select, sizeof q->select, "DISTINCT %s", k0->name);
      q->numeric[0] = k0->type != T_VARCHAR;
    } else if (v == 1) {
      snprintf(q->select, sizeof q->select, "COUNT(DISTINCT %s), MIN(%s), MAX(%s)", k0->name,
               k0->name, k0->name);
      q->numeric[0] = true;
      q->numeric[1] = q->numeric[2] = k0->type != T_VARCHAR;
    } else {
      snprintf(q->select, sizeof q->select, "%s, %s(%s)", k0->name, ext, k1->name);
      snprintf(q->tail, sizeof q->tail, " GROUP BY %s%s", k0->name,
               v == 3 ? " HAVING COUNT(*) > 0" : "");
      q->numeric[0] = k0->type != T_VARCHAR;
      q->numeric[1] = k1->type != T_VARCHAR;
    }
  } else { /* DISTINCT of one or two columns */
    const col *a = &s->c[below(w, s->ncol)], *b = &s->c[below(w, s->ncol)];
    snprintf(q->select, sizeof q->select, "DISTINCT %s, %s", a->name, b->name);
    q->numeric[0] = a->type != T_VARCHAR;
    q->numeric[1] = b->type != T_VARCHAR;
  }
}

/* The SQL of q; hide: key columns hidden; hint: optimizer hint text or NULL. */
static void query_sql(const query *q, int hide, const char *hint, char *buf, size_t cap) {
  size_t o = (size_t)snprintf(buf, cap, "SELECT %s%s%s%s FROM t", hint ? "/*+ " : "",
                              hint ? hint : "", hint ? " */ " : "", q->select);
  int n = 0;
  for (int i = 0; i < q->nclause; i++) {
    if (!q->use[i]) continue;
    o += (size_t)snprintf(buf + o, cap - o, "%s%s", n++ ? " AND " : " WHERE ", q->clause[i][hide]);
  }
  snprintf(buf + o, cap - o, "%s", q->tail);
}

static int kind_index(const char *k) {
  for (int i = 0; i < 5; i++)
    if (k && strcmp(k, KINDS[i]) == 0) return i;
  return -1;
}

/* Run q both ways in Rowan and in SQLite. Returns true when all three agree. */
static bool check(world *w, const query *q, const char **kind_out, bool verbose) {
  char sql[SQL_CAP], hidden[SQL_CAP];
  query_sql(q, 0, NULL, sql, sizeof sql);
  query_sql(q, 1, "NO_INDEX NO_SKIP_SCAN", hidden, sizeof hidden);
  result r = {0}, s = {0}, h = {0};
  const char *kind = NULL, *hkind = NULL;
  run_rowan(w, sql, q->numeric, &r, &kind);
  run_sqlite(w, sql, q->numeric, &s);
  run_rowan(w, hidden, q->numeric, &h, &hkind);
  bool ok_rs = same(&r, &s, q->ordered);
  bool ok_rh = same(&h, &s, q->ordered);
  /* through each index, forced */
  bool ok_ix = true;
  for (int i = 0; i < w->nidx; i++) {
    char hint[32], forced[SQL_CAP];
    snprintf(hint, sizeof hint, "INDEX(t ix%d)", i);
    query_sql(q, 0, hint, forced, sizeof forced);
    result x = {0};
    run_rowan(w, forced, q->numeric, &x, NULL);
    bool ok = same(&x, &s, q->ordered);
    if (verbose || !ok) {
      fprintf(stderr, "  forced: %s; %s\n", forced, ok ? "agrees" : "DIFFERS");
      if (verbose) print_result("rowan, index forced", &x);
    }
    ok_ix &= ok;
    res_free(&x);
  }
  /* the skip scan by prefix forced (planner/skip_prefix.h; ignored where it does not
     apply: a bound leading key column, nothing bounded after it, reverse order) */
  bool ok_sk = true;
  {
    char forced[SQL_CAP];
    query_sql(q, 0, "SKIP_SCAN", forced, sizeof forced);
    result x = {0};
    const char *xk = NULL;
    run_rowan(w, forced, q->numeric, &x, &xk);
    ok_sk = same(&x, &s, q->ordered);
    if (xk && strcmp(xk, "SKIP SCAN BY PREFIX") == 0 && !verbose) {
      w->skip_plans++;
      char ex[SQL_CAP + 16];
      snprintf(ex, sizeof ex, "EXPLAIN %s", forced);
      rowan_stmt *st = NULL;
      if (rowan_prepare(w->rdb, ex, -1, &st, NULL) == ROWAN_OK && st) {
        if (rowan_step(st) == ROWAN_ROW) {
          const char *line = rowan_column_text(st, 0);
          if (strstr(line, " PREFIX IN ") || strstr(line, "EACH [K0, ")) w->bounded_skips++;
        }
        rowan_finalize(st);
      }
    }
    if (verbose || !ok_sk) {
      fprintf(stderr, "  forced: %s; %s (%s)\n", forced, ok_sk ? "agrees" : "DIFFERS",
              xk ? xk : "-");
      if (verbose) print_result("rowan, skip scan forced", &x);
    }
    res_free(&x);
  }
  if (!verbose) {
    /* did the planner choose an index, or the first row of each prefix, by itself? */
    char ex[SQL_CAP + 16];
    snprintf(ex, sizeof ex, "EXPLAIN %s", sql);
    rowan_stmt *st = NULL;
    if (rowan_prepare(w->rdb, ex, -1, &st, NULL) == ROWAN_OK && st) {
      if (rowan_step(st) == ROWAN_ROW) {
        const char *line = rowan_column_text(st, 0);
        if (w->nidx && strstr(line, "OVER T.IX")) w->index_plans++;
        if (strstr(line, "SKIP TO NEXT PREFIX")) w->prefix_plans++;
      }
      rowan_finalize(st);
    }
  }
  bool full = !hkind || strcmp(hkind, "FULL SCAN") == 0 || strcmp(hkind, "NOTHING") == 0;
  if (verbose) {
    fprintf(stderr, "  query:  %s;\n  hidden: %s;\n  plan: %s, hidden: %s\n", sql, hidden,
            kind ? kind : "-", hkind ? hkind : "-");
    print_result("rowan", &r);
    print_result("rowan, key hidden", &h);
    print_result("sqlite", &s);
  }
  if (kind_out) *kind_out = kind;
  if (r.n > 0 && !r.failed) w->nonempty++;
  res_free(&r);
  res_free(&s);
  res_free(&h);
  return ok_rs && ok_rh && full && ok_ix && ok_sk;
}

/* Reload the engines with a subset of rows. */
static void reload(world *w, const bool *keep) {
  close_engines(w);
  open_engines(w);
  load_rows(w, keep);
}

static void minimize_and_report(world *w, query *q) {
  bool keep[MAX_ROWS];
  for (int i = 0; i < w->nrows; i++) keep[i] = w->rows[i].live;
  reload(w, keep);
  if (check(w, q, NULL, false)) {
    fprintf(stderr, "(the failure needs the original history of writes; not minimized)\n");
  } else {
    for (int i = 0; i < q->nclause; i++) {
      q->use[i] = false;
      if (check(w, q, NULL, false)) q->use[i] = true;
    }
    for (int i = 0; i < w->nrows; i++) {
      if (!keep[i]) continue;
      keep[i] = false;
      reload(w, keep);
      if (check(w, q, NULL, false)) keep[i] = true;
    }
    reload(w, keep);
  }
  char sql[SQL_CAP], vals[512];
  fprintf(stderr, "---- reproduction script (flush after half the rows) ----\n");
  create_sql(&w->s, sql, sizeof sql);
  fprintf(stderr, "%s;\n", sql);
  for (int i = 0; i < w->nidx; i++) fprintf(stderr, "%s;\n", w->idx_sql[i]);
  for (int i = 0; i < w->nrows; i++) {
    if (!keep[i]) continue;
    row_values(&w->s, &w->rows[i], vals, sizeof vals);
    fprintf(stderr, "UPSERT INTO t VALUES (%s);\n", vals);
  }
  check(w, q, NULL, true);
  fprintf(stderr, "---------------------------------------------------------\n");
}

static void test_differential(void **state) {
  (void)state;
  world *w = calloc(1, sizeof *w);
  w->rng = tu_seed("test_differential");
  uint64_t seed = w->rng;
  int rounds = (int)tu_scaled(20, 5);
  int failures = 0;
  for (int round = 0; round < rounds && failures == 0; round++) {
    make_world(w);
    open_engines(w);
    load_rows(w, NULL);
    churn(w);
    for (int k = 0; k < QUERIES_PER_ROUND; k++) {
      query q;
      memset(&q, 0, sizeof q);
      gen_where(w, &q);
      gen_shape(w, &q);
      const char *kind = NULL;
      if (!check(w, &q, &kind, false)) {
        fprintf(stderr, "MISMATCH (seed %llu, round %d, query %d)\n", (unsigned long long)seed, round, k);
        check(w, &q, NULL, true);
        minimize_and_report(w, &q);
        failures++;
        break;
      }
      int ki = kind_index(kind);
      if (ki >= 0) w->kind_count[ki]++;
      w->queries++;
    }
    close_engines(w);
  }
  fprintf(stderr, "[test_differential] %d queries compared:", w->queries);
  for (int i = 0; i < 5; i++) fprintf(stderr, " %s %d%s", KINDS[i], w->kind_count[i], i < 4 ? "," : "\n");
  fprintf(stderr, "[test_differential] %d queries returned rows\n", w->nonempty);
  fprintf(stderr, "[test_differential] %d unhinted queries were answered from an index\n",
          w->index_plans);
  assert_int_equal(failures, 0);
  /* Not vacuous: most queries return something (aggregates always do). */
  assert_true(w->nonempty * 3 >= w->queries);
  for (int i = 0; i < 5; i++) {
    if (w->kind_count[i] == 0) fprintf(stderr, "no query got plan kind %s\n", KINDS[i]);
    assert_true(w->kind_count[i] > 0);
  }
  assert_true(w->index_plans > 0);
  fprintf(stderr, "[test_differential] %d queries ran as a skip scan by prefix (forced)\n",
          w->skip_plans);
  assert_true(w->skip_plans > 0);
  fprintf(stderr, "[test_differential] %d of them inside key ranges or on a prefix of several "
          "key columns\n", w->bounded_skips);
  assert_true(w->bounded_skips > 0);
  fprintf(stderr, "[test_differential] %d queries read the first row of each prefix\n",
          w->prefix_plans);
  assert_true(w->prefix_plans > 0);
  free(w);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_differential)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
