/*
** tests/exec/test_break_fast_counts.c: range scans of a sensor-like table against a model
** kept in the test, and EXPLAIN ANALYZE's counters with kv row runs on and off.
** A seeded table (VARCHAR station names that are prefixes of one another, ASC or DESC, a
** TIMESTAMP DESC, three column families of which one is sparse, random BLOCKSIZEs 256..1024
** and VERSIONS 1..3) gets rounds of UPSERTs (whole rows, rows of NULLs, partial UPSERTs that
** write one family only, rows written twice in a round), DELETEs of key ranges and flushes
** (at most three store files a family, so no background compaction runs), the last round
** left in the memstore, sometimes a major compaction after the first round or the last
** (always for the first table, of VERSIONS 1: where row runs must run). Then random
** queries (latest N of a station, forward and reverse, bounded ranges, IN-list skip scans of
** 1..7 names (repeats, a name not there), a full scan, a residual filter, key-only and
** one-family projections, every LIMIT/OFFSET pattern) run in every kv mode (row runs on,
** off, value vectors off, the cell path; kv/sf/sf_rows.h) and through rowan_column_values; each answer
** must be the model's byte for byte. The EXPLAIN ANALYZE text of each query (times and
** block-cache hits masked) must be the same with runs on and off (docs/KV.md 'Row runs':
** every counter is the present path's), and so must rowan_stmt_metrics of the plain query
** (the fast exec loop's counters; the rows' counters in every mode). Runs must have handed
** out rows.
** Not here: writes between the steps of an open statement (test_break_fast_midscan.c).
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
#include "kv/sf/sf_rows.h"
#include "rowan.h"
#include "testutil.h"
#include "tu_sbuf.h"

#define NOW0 1700000000000LL
#define NST 5
#define NV 6 /* value columns: A B C W (R), X (M), Y (N) */

/* station names in key order (byte order; "a b" < "ab" as ' ' < 'b') */
static const char *STA[NST] = {"a", "a b", "ab", "abc", "b"};

typedef struct mrow {
  bool exists;      /* the row is there */
  bool null[NV];    /* per value column: NULL */
  double a, b, y;   /* A, B, Y */
  int64_t c, x;     /* C, X */
  char w[24];       /* W */
} mrow;

typedef struct world {
  kv_env *env;      /* in-memory file system */
  rowan_db *db;     /* the database */
  uint64_t rs;      /* PRNG state */
  int nt;           /* timestamps per station */
  bool stdesc;      /* ST is DESC in the key: stations in reverse byte order */
  mrow *m;          /* model: m[s * nt + t] */
} world;

static uint64_t rnd(world *w, uint64_t n) { return tu_below(&w->rs, n); }
static int64_t ts_of(int t) { return NOW0 - 86400000LL + (int64_t)t * 60000; }

static void exec_ok(world *w, const char *sql) {
  int rc = rowan_exec(w->db, sql, NULL, NULL);
  if (rc != ROWAN_OK) fail_msg("%s -> %d: %s", sql, rc, rowan_errmsg(w->db));
}

static void set_mode(int m) {
  kv_scan_set_fast_rows(m != 3);
  kv_scan_set_value_vectors(m != 2 && m != 3);
  kv_scan_set_row_runs(m == 0 || m == 2);
}

/* Upsert (s, t): whole (kind 0), one family (R: 1, M: 2, N: 3) or the key alone (4). */
static void upsert(world *w, rowan_stmt *const *up, int s, int t) {
  int kind = rnd(w, 10) < 6 ? 0 : 1 + (int)rnd(w, 4);
  rowan_stmt *u = up[kind];
  mrow *r = &w->m[s * w->nt + t];
  if (!r->exists) {
    memset(r, 0, sizeof *r);
    for (int c = 0; c < NV; c++) r->null[c] = true;
  }
  r->exists = true;
  rowan_bind_text(u, 1, STA[s], -1);
  rowan_bind_timestamp(u, 2, ts_of(t));
  int p = 3;
  for (int c = 0; c < NV; c++) {
    bool in = kind == 0 || (kind == 1 && c < 4) || (kind == 2 && c == 4) || (kind == 3 && c == 5);
    if (!in) continue;
    if (rnd(w, 6) == 0) {
      r->null[c] = true;
      rowan_bind_null(u, p++);
      continue;
    }
    r->null[c] = false;
    switch (c) {
      case 0: r->a = (double)((int64_t)rnd(w, 40001) - 20000) / 16.0; rowan_bind_double(u, p++, r->a); break;
      case 1: r->b = (double)rnd(w, 1000) * 1e-3; rowan_bind_double(u, p++, r->b); break;
      case 2: r->c = (int64_t)rnd(w, 100) - 50; rowan_bind_int64(u, p++, r->c); break;
      case 3: {
        int n = (int)rnd(w, sizeof r->w);
        for (int k = 0; k < n; k++) r->w[k] = (char)('a' + rnd(w, 26));
        r->w[n] = 0;
        rowan_bind_text(u, p++, r->w, n);
        break;
      }
      case 4: r->x = (int64_t)(tu_rand(&w->rs) >> rnd(w, 64)); rowan_bind_int64(u, p++, r->x); break;
      default: /* 0 gives -0.0, which is stored and read back as 0.0 (docs/FORMAT.md) */
        r->y = -(double)rnd(w, 1u << 20) / 3.0;
        rowan_bind_double(u, p++, r->y);
        if (r->y == 0) r->y = 0.0;
        break;
    }
  }
  int rc = rowan_step(u);
  if (rc != ROWAN_DONE) fail_msg("upsert: %d %s", rc, rowan_errmsg(w->db));
  rowan_reset(u);
}

/* Render a value of column c (0: ST, 1: TS, 2..7: A B C W X Y) of model row (s, t). */
static void model_val(const world *w, int s, int t, int c, sbuf *o) {
  const mrow *r = &w->m[s * w->nt + t];
  if (c == 0) { sb_add(o, " '%s'", STA[s]); return; }
  if (c == 1) { sb_add(o, " %d:%lld", ROWAN_TIMESTAMP, (long long)ts_of(t)); return; }
  if (r->null[c - 2]) { sb_add(o, " NULL"); return; }
  switch (c) {
    case 2: sb_add(o, " %.17g", r->a); break;
    case 3: sb_add(o, " %.17g", r->b); break;
    case 4: sb_add(o, " %d:%lld", ROWAN_INTEGER, (long long)r->c); break;
    case 5: sb_add(o, " '%s'", r->w); break;
    case 6: sb_add(o, " %d:%lld", ROWAN_INTEGER, (long long)r->x); break;
    default: sb_add(o, " %.17g", r->y); break;
  }
}

typedef struct query {
  char sql[512];    /* the SELECT */
  int proj[8];      /* its columns (model_val numbering) */
  int nproj;        /* how many */
  int sta[NST];     /* stations read, in order */
  int nsta;         /* how many */
  bool rev;         /* TS ascending */
  int tlo, thi;     /* t in [tlo, thi] */
  bool bounded;     /* TS bounds bound as parameters 1 and 2 */
  bool filt;        /* A > fv */
  double fv;        /* the filter's value */
  long lim, off;    /* LIMIT (-1: none) and OFFSET */
} query;

static void make_query(world *w, query *q) {
  static const int projs[5][8] = {{1, 2, 3, 4, 5, 6, 7}, {0, 1}, {1, 6}, {7, 0, 5, 1}, {2, 4}};
  static const int nps[5] = {7, 2, 2, 4, 2};
  static const char *pcols[5] = {"TS, A, B, C, W, X, Y", "ST, TS", "TS, X", "Y, ST, W, TS", "A, C"};
  memset(q, 0, sizeof *q);
  int pi = (int)rnd(w, 5);
  memcpy(q->proj, projs[pi], sizeof q->proj);
  q->nproj = nps[pi];
  q->lim = rnd(w, 3) ? (long)rnd(w, (uint64_t)w->nt + 10) : -1;
  q->off = rnd(w, 3) ? 0 : (long)rnd(w, (uint64_t)w->nt);
  q->tlo = 0;
  q->thi = w->nt - 1;
  int shape = (int)rnd(w, 5);
  int s = (int)rnd(w, NST);
  char where[160] = "", tail[64] = "";
  if (shape == 0 || shape == 1) { /* one station, forward (latest) or reverse */
    q->sta[q->nsta++] = s;
    q->rev = shape == 1;
    snprintf(where, sizeof where, "WHERE ST = '%s' ", STA[s]);
  } else if (shape == 2) { /* a bounded range */
    q->sta[q->nsta++] = s;
    q->tlo = (int)rnd(w, (uint64_t)w->nt);
    q->thi = q->tlo + (int)rnd(w, 80);
    q->bounded = true;
    snprintf(where, sizeof where, "WHERE ST = '%s' AND TS >= ? AND TS <= ? ", STA[s]);
  } else if (shape == 3) { /* IN list of 1..6 names (repeats, one not there): key order */
    bool in[NST] = {false};
    size_t l = (size_t)snprintf(where, sizeof where, "WHERE ST IN (");
    for (int k = 1 + (int)rnd(w, 6); k > 0; k--) {
      int s2 = (int)rnd(w, NST + 1);
      if (s2 < NST) in[s2] = true;
      l += (size_t)snprintf(where + l, sizeof where - l, "'%s', ", s2 < NST ? STA[s2] : "aa");
    }
    in[s] = true;
    snprintf(where + l, sizeof where - l, "'%s') ", STA[s]);
    for (int k = 0; k < NST; k++) {
      int s2 = w->stdesc ? NST - 1 - k : k;
      if (in[s2]) q->sta[q->nsta++] = s2;
    }
  } else { /* full */
    for (int k = 0; k < NST; k++) q->sta[q->nsta++] = w->stdesc ? NST - 1 - k : k;
  }
  if (rnd(w, 5) == 0) {
    q->filt = true;
    q->fv = (double)((int64_t)rnd(w, 2000) - 1000);
    size_t l = strlen(where);
    snprintf(where + l, sizeof where - l, "%sA > %g ", l ? "AND " : "WHERE ", q->fv);
  }
  if (q->rev) snprintf(tail, sizeof tail, "ORDER BY TS ");
  else if (rnd(w, 2) && q->nsta == 1) snprintf(tail, sizeof tail, "ORDER BY TS DESC ");
  char lim[64] = "";
  if (q->lim >= 0) snprintf(lim, sizeof lim, "LIMIT %ld ", q->lim);
  if (q->off) snprintf(lim + strlen(lim), sizeof lim - strlen(lim), "%sOFFSET %ld",
                       q->lim >= 0 ? "" : "LIMIT 100000 ", q->off);
  snprintf(q->sql, sizeof q->sql, "SELECT %s FROM S %s%s%s", pcols[pi], where, tail, lim);
}

static void model_answer(const world *w, const query *q, sbuf *o) {
  long skip = q->off, left = q->lim;
  for (int k = 0; k < q->nsta; k++)
    for (int i = 0; i < w->nt; i++) {
      int t = q->rev ? i : w->nt - 1 - i; /* TS DESC is the key order */
      if (t < q->tlo || t > q->thi) continue;
      const mrow *r = &w->m[q->sta[k] * w->nt + t];
      if (!r->exists) continue;
      if (q->filt && (r->null[0] || !(r->a > q->fv))) continue;
      if (skip > 0) { skip--; continue; }
      if (left == 0) return;
      if (left > 0) left--;
      sb_add(o, "  row");
      for (int c = 0; c < q->nproj; c++) model_val(w, q->sta[k], t, q->proj[c], o);
      sb_add(o, "\n");
    }
}

static void render(rowan_stmt *st, bool whole, sbuf *o) {
  int n = rowan_column_count(st);
  rowan_value v[8];
  assert_true(n <= 8);
  if (whole) assert_int_equal(rowan_column_values(st, 0, n, v), ROWAN_OK);
  sb_add(o, "  row");
  for (int i = 0; i < n; i++) {
    int type = whole ? v[i].type : rowan_column_type(st, i);
    if (type == ROWAN_NULL) sb_add(o, " NULL");
    else if (type == ROWAN_TEXT) sb_add(o, " '%.*s'", whole ? v[i].bytes : rowan_column_bytes(st, i),
                                        whole ? (const char *)v[i].p : rowan_column_text(st, i));
    else if (type == ROWAN_FLOAT) sb_add(o, " %.17g", whole ? v[i].d : rowan_column_double(st, i));
    else sb_add(o, " %d:%lld", type, (long long)(whole ? v[i].i : rowan_column_int64(st, i)));
  }
  sb_add(o, "\n");
}

/* Mask what differs from run to run whatever the path: times and block-cache hits. */
static void strip_volatile(char *t) {
  static const char *const from[] = {"time=", "cache hits="};
  for (int i = 0; i < 2; i++) {
    char *p;
    while ((p = strstr(t, from[i])) != NULL) {
      char *e = p + strlen(from[i]);
      if (i == 0) while (*e && *e != ' ' && *e != ')' && *e != '|') e++;
      else while (*e && *e != ')' && *e != ',') e++;
      memmove(p, e, strlen(e) + 1);
    }
  }
}

/* Run sql, rendering its rows into o; its rowan_stmt_metrics into *mt when not NULL. */
static void run_sql_rows(world *w, const char *sql, const query *q, bool whole, sbuf *o,
                         rowan_metrics *mt) {
  rowan_stmt *st = NULL;
  int rc = rowan_prepare(w->db, sql, -1, &st, NULL);
  if (rc != ROWAN_OK) fail_msg("%s: %s", sql, rowan_errmsg(w->db));
  if (q && q->bounded) {
    rowan_bind_timestamp(st, 1, ts_of(q->tlo));
    rowan_bind_timestamp(st, 2, ts_of(q->thi));
  }
  while ((rc = rowan_step(st)) == ROWAN_ROW) {
    if (q) render(st, whole, o);
    else sb_add(o, "%s\n", rowan_column_text(st, 0));
  }
  if (rc != ROWAN_DONE) fail_msg("%s: %d %s", sql, rc, rowan_errmsg(w->db));
  if (mt) assert_int_equal(rowan_stmt_metrics(st, mt), ROWAN_OK);
  rowan_finalize(st);
}

/* The metrics that must not depend on the kv mode (rows), and with runs on and off also the
** blocks read and cells examined (not the cache's hits and the bytes read, which depend on
** what the previous run left in the cache); 0 when equal. */
static int metrics_differ(const rowan_metrics *a, const rowan_metrics *b, bool blocks) {
  if (a->rows_examined != b->rows_examined || a->rows_filtered != b->rows_filtered ||
      a->rows_returned != b->rows_returned || a->ranges_sought != b->ranges_sought ||
      a->n_families != b->n_families)
    return 1;
  for (int f = 0; blocks && f < a->n_families && f < 16; f++)
    if (strcmp(a->families[f].family, b->families[f].family) != 0 ||
        a->families[f].blocks_read != b->families[f].blocks_read ||
        a->families[f].cells_examined != b->families[f].cells_examined)
      return 2;
  return 0;
}

/* easy: VERSIONS 1 and a major compaction at the end (one file a family: the bench's case,
** where row runs must run). */
static void one_table(uint64_t seed, bool easy) {
  world w;
  memset(&w, 0, sizeof w);
  w.rs = seed;
  w.nt = (int)tu_scaled(300, 80);
  w.m = calloc((size_t)NST * (size_t)w.nt, sizeof *w.m);
  assert_non_null(w.m);
  w.env = kv_env_mem_new(NOW0);
  rowan_options o;
  rowan_options_init(&o);
  o.kv_env = w.env;
  o.sync_mode = ROWAN_SYNC_OFF;
  o.max_lookback_seconds = -1; /* major compaction drops at once (no look-back window) */
  o.block_cache_size = rnd(&w, 2) ? 1 : 0;
  assert_int_equal(rowan_open("/db", &o, &w.db), ROWAN_OK);
  char ddl[512];
  w.stdesc = rnd(&w, 2);
  snprintf(ddl, sizeof ddl,
           "CREATE TABLE S (ST VARCHAR NOT NULL, TS TIMESTAMP NOT NULL, R.A DOUBLE, R.B DOUBLE,"
           " R.C INTEGER, R.W VARCHAR, M.X BIGINT, N.Y DOUBLE,"
           " CONSTRAINT PK PRIMARY KEY (ST%s, TS DESC)) R.BLOCKSIZE = %d, M.BLOCKSIZE = %d,"
           " N.BLOCKSIZE = %d, VERSIONS = %d", w.stdesc ? " DESC" : "",
           256 + 64 * (int)rnd(&w, 13), 256 + 64 * (int)rnd(&w, 13), 256 + 64 * (int)rnd(&w, 13),
           easy ? 1 : 1 + (int)rnd(&w, 3));
  exec_ok(&w, ddl);
  rowan_stmt *up[5];
  static const char *ups[5] = {
    "UPSERT INTO S VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
    "UPSERT INTO S (ST, TS, A, B, C, W) VALUES (?, ?, ?, ?, ?, ?)",
    "UPSERT INTO S (ST, TS, X) VALUES (?, ?, ?)",
    "UPSERT INTO S (ST, TS, Y) VALUES (?, ?, ?)",
    "UPSERT INTO S (ST, TS) VALUES (?, ?)",
  };
  for (int k = 0; k < 5; k++) assert_int_equal(rowan_prepare(w.db, ups[k], -1, &up[k], NULL), ROWAN_OK);
  rowan_stmt *del = NULL;
  assert_int_equal(rowan_prepare(w.db, "DELETE FROM S WHERE ST = ? AND TS >= ? AND TS <= ?", -1,
                                 &del, NULL), ROWAN_OK);
  int rounds = 2 + (int)rnd(&w, 3); /* flushed: at most 3, the last in the memstore */
  for (int r = 0; r < rounds; r++) {
    exec_ok(&w, "BEGIN");
    for (int s = 0; s < NST; s++)
      for (int t = 0; t < w.nt; t++)
        if (r == 0 ? rnd(&w, 8) != 0 : rnd(&w, 6) == 0) upsert(&w, up, s, t);
    exec_ok(&w, "COMMIT");
    for (int d = (int)rnd(&w, 4); d > 0; d--) {
      int s = (int)rnd(&w, NST), t0 = (int)rnd(&w, (uint64_t)w.nt), t1 = t0 + (int)rnd(&w, 30);
      rowan_bind_text(del, 1, STA[s], -1);
      rowan_bind_timestamp(del, 2, ts_of(t0));
      rowan_bind_timestamp(del, 3, ts_of(t1));
      assert_int_equal(rowan_step(del), ROWAN_DONE);
      rowan_reset(del);
      for (int t = t0; t <= t1 && t < w.nt; t++) w.m[s * w.nt + t].exists = false;
    }
    if (rnd(&w, 2)) { /* some rows again in the same round: versions of one timestamp */
      exec_ok(&w, "BEGIN");
      for (int k = (int)rnd(&w, 40); k > 0; k--)
        upsert(&w, up, (int)rnd(&w, NST), (int)rnd(&w, (uint64_t)w.nt));
      exec_ok(&w, "COMMIT");
    }
    kv_env_mem_set_time(w.env, NOW0 + (r + 1) * 1000); /* the next round's versions are newer */
    if (r + 1 < rounds) assert_int_equal(rowan_flush(w.db), ROWAN_OK);
    if (r == 0 && rnd(&w, 3) == 0) assert_int_equal(rowan_compact(w.db, 1), ROWAN_OK);
  }
  if (easy || rnd(&w, 2)) /* one file a family; with VERSIONS > 1 it keeps old versions */
    assert_int_equal(rowan_compact(w.db, 1), ROWAN_OK);
  for (int k = 0; k < 5; k++) rowan_finalize(up[k]);
  rowan_finalize(del);
  int nq = (int)tu_scaled(60, 20);
  for (int k = 0; k < nq; k++) {
    query q;
    make_query(&w, &q);
    sbuf want = {0}, got = {0};
    model_answer(&w, &q, &want);
    rowan_metrics mt[4];
    for (int m = 0; m < 4; m++) {
      set_mode(m);
      got.len = 0;
      if (got.p) got.p[0] = 0;
      run_sql_rows(&w, q.sql, &q, (k + m) % 3 != 0, &got, &mt[m]);
      int d = m == 0 ? 0 : metrics_differ(&mt[0], &mt[m], m == 1);
      if (d)
        for (int f = 0; f < mt[0].n_families && f < 16; f++)
          fprintf(stderr, "  %s: cells %llu/%llu blocks %llu/%llu hits %llu/%llu bytes %llu/%llu\n",
                  mt[0].families[f].family, (unsigned long long)mt[0].families[f].cells_examined,
                  (unsigned long long)mt[m].families[f].cells_examined,
                  (unsigned long long)mt[0].families[f].blocks_read,
                  (unsigned long long)mt[m].families[f].blocks_read,
                  (unsigned long long)mt[0].families[f].blocks_cache_hit,
                  (unsigned long long)mt[m].families[f].blocks_cache_hit,
                  (unsigned long long)mt[0].families[f].bytes_read,
                  (unsigned long long)mt[m].families[f].bytes_read);
      if (d)
        fail_msg("seed %llu: %s: rowan_stmt_metrics differ between mode 0 and %d (%s): rows "
                 "examined %llu/%llu filtered %llu/%llu returned %llu/%llu",
                 (unsigned long long)seed, q.sql, m, d == 1 ? "rows" : "family blocks/cells",
                 (unsigned long long)mt[0].rows_examined, (unsigned long long)mt[m].rows_examined,
                 (unsigned long long)mt[0].rows_filtered, (unsigned long long)mt[m].rows_filtered,
                 (unsigned long long)mt[0].rows_returned, (unsigned long long)mt[m].rows_returned);
      if (got.len != want.len || (want.len && memcmp(got.p, want.p, want.len) != 0))
        fail_msg("seed %llu, mode %d: %s\n--- model\n%.2000s\n--- got\n%.2000s",
                 (unsigned long long)seed, m, q.sql, want.p ? want.p : "", got.p ? got.p : "");
    }
    /* EXPLAIN ANALYZE with runs on and off */
    char ex[600];
    snprintf(ex, sizeof ex, "EXPLAIN ANALYZE %s", q.sql);
    sbuf e[2] = {{0}, {0}};
    for (int m = 0; m < 2; m++) {
      set_mode(m);
      run_sql_rows(&w, ex, NULL, false, &e[m], NULL);
      if (e[m].p) strip_volatile(e[m].p);
    }
    if (strcmp(e[0].p ? e[0].p : "", e[1].p ? e[1].p : "") != 0)
      fail_msg("seed %llu: EXPLAIN ANALYZE differs with runs on / off: %s\n--- on\n%s--- off\n%s",
               (unsigned long long)seed, ex, e[0].p, e[1].p);
    free(e[0].p);
    free(e[1].p);
    free(want.p);
    free(got.p);
  }
  set_mode(0);
  assert_int_equal(rowan_close(w.db), ROWAN_OK);
  kv_env_free(w.env);
  free(w.m);
}

static void model_and_counts(void **state) {
  (void)state;
  uint64_t seed0 = tu_seed("break_fast_counts");
  uint64_t runs0 = kv_scan_run_rows();
  int n = (int)tu_scaled(8, 2);
  for (int k = 0; k < n; k++) one_table(seed0 + (uint64_t)k * 104729, k == 0);
  if (kv_scan_run_rows() - runs0 < 10) /* the run path ran (a floor that data cannot miss) */
    fail_msg("seed %llu: row runs handed out only %llu rows", (unsigned long long)seed0,
             (unsigned long long)(kv_scan_run_rows() - runs0));
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(model_and_counts),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
