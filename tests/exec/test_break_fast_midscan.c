/*
** tests/exec/test_break_fast_midscan.c: the fast range-scan paths of this session (kv row
** runs, kv/scan/scan_run.c; exec's PH_FAST loop and exec_step shortcut; rowan_column_values)
** against the paths they replace, with the connection doing other things while a SELECT
** is between two rows. One seeded scenario is played four times on fresh in-memory
** databases, each time with other kv switches (kv/sf/sf_rows.h): row runs on (all fast paths),
** row runs off, value vectors off, and the cell-by-cell path (fast rows off); the text of
** everything the scenario saw (every step's return code, every row's values read whole or
** by the getters, every write's code and rowan_changes) must be the same byte for byte.
**
** The table is sensor-like: a VARCHAR station (names of one length, or of varied lengths)
** and a TIMESTAMP DESC in the key, a readings family R of four columns (DOUBLEs, an
** INTEGER, a VARCHAR), a sparse family M, small random BLOCKSIZEs (256..1024: rows span
** blocks, many block boundaries; some values longer than a block), VERSIONS 1..3,
** sometimes a TTL with the clock moved during the scenario, a tiny block cache or the
** default one; rows with only some families and rows with every column NULL, several
** store files and memstore rows over them, an index.
** Kept statements (latest-N of a station forward, reverse, full scan, IN-list skip scan,
** bounded range, key-only, point, residual filter, index scan) with every LIMIT/OFFSET
** pattern are stepped a few rows, then the connection writes (UPSERT / DELETE ahead of and
** behind the cursor, in and out of a transaction), flushes, compacts (minor, major), moves
** the TTL clock, or resets and re-binds the statement, and the statement steps on.
** A run also checks that row runs really handed out rows (kv_scan_run_rows).
** Not here: EXPLAIN ANALYZE counters (test_break_fast_counts.c), rowan_column_values'
** argument errors (tests/api/test_break_values.c).
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
#define NST 4 /* stations */

enum { M_RUNS = 0, M_NORUNS, M_VIEWS, M_CELLS, NMODE };
static const char *MODE_NAME[NMODE] = {"runs", "no-runs", "views", "cells"};

enum { Q_LATEST, Q_REVERSE, Q_FULL, Q_IN, Q_RANGE, Q_KEYS, Q_POINT, Q_FILTER, Q_INDEX, NQ };
static const char *QSQL[NQ] = {
  "SELECT TS, A, B, C, W, X FROM S WHERE ST = ? ORDER BY TS DESC LIMIT ? OFFSET ?",
  "SELECT ST, TS, A, B, C, W, X FROM S WHERE ST = ? ORDER BY TS ASC LIMIT ? OFFSET ?",
  "SELECT * FROM S LIMIT ? OFFSET ?",
  "SELECT ST, TS, X, W, A FROM S WHERE ST IN (?, ?) LIMIT ?",
  "SELECT TS, C, W FROM S WHERE ST = ? AND TS <= ? AND TS > ? ORDER BY TS DESC",
  "SELECT ST, TS FROM S WHERE ST >= ? LIMIT ?",
  "SELECT X, A, W FROM S WHERE ST = ? AND TS = ?",
  "SELECT TS, A FROM S WHERE ST = ? AND A > ? LIMIT ?",
  "SELECT /*+ INDEX(S IC) */ ST, TS, C FROM S WHERE C BETWEEN ? AND ?",
};

typedef struct world {
  kv_env *env;          /* in-memory file system */
  rowan_db *db;         /* the database */
  uint64_t rs;          /* PRNG state */
  int64_t now;          /* the env's clock */
  int nt;               /* timestamps per station */
  bool varkeys;         /* station names of varied length */
  bool in_tx;           /* a transaction is open */
  rowan_stmt *q[NQ];    /* kept queries */
  rowan_stmt *up;       /* kept UPSERT */
  sbuf *out;            /* rendering */
} world;

static uint64_t rnd(world *w, uint64_t n) { return tu_below(&w->rs, n); }

static const char *station(const world *w, int s) {
  static const char *var[NST] = {"a", "Changping", "Dongsi", "Wanshouxigong-extra-long"};
  static const char *one[NST] = {"ST00", "ST01", "ST02", "ST03"};
  return w->varkeys ? var[s] : one[s];
}

static int64_t ts_of(int t) { return NOW0 - 86400000LL + (int64_t)t * 60000; }

static void set_mode(int m) {
  kv_scan_set_fast_rows(m != M_CELLS);
  kv_scan_set_value_vectors(m != M_VIEWS && m != M_CELLS);
  kv_scan_set_row_runs(m == M_RUNS || m == M_VIEWS);
}

static int run_sql(world *w, const char *sql) {
  int rc = rowan_exec(w->db, sql, NULL, NULL);
  sb_add(w->out, "exec %s -> %d\n", sql, rc);
  if (rc != ROWAN_OK) sb_add(w->out, "  msg %s\n", rowan_errmsg(w->db));
  return rc;
}

/* Upsert row t of station s with random values (NULLs, rows of one family, all NULL). */
static void upsert_row(world *w, int s, int t) {
  rowan_stmt *u = w->up;
  rowan_bind_text(u, 1, station(w, s), -1);
  rowan_bind_timestamp(u, 2, ts_of(t));
  uint64_t kind = rnd(w, 20);
  for (int c = 3; c <= 7; c++) {
    bool null = kind == 0 || (kind == 1 && c <= 6) || (kind == 2 && c == 7) || rnd(w, 9) == 0;
    if (null) {
      rowan_bind_null(u, c);
      continue;
    }
    switch (c) {
      case 3: case 4: rowan_bind_double(u, c, (double)((int64_t)rnd(w, 20001) - 10000) / 8.0); break;
      case 5: rowan_bind_int64(u, c, (int64_t)rnd(w, 50)); break;
      case 6: {
        char txt[400]; /* sometimes longer than a block: rows span blocks */
        int n = rnd(w, 12) == 0 ? 100 + (int)rnd(w, 300) : (int)rnd(w, 30);
        for (int k = 0; k < n; k++) txt[k] = (char)('a' + rnd(w, 26));
        rowan_bind_text(u, c, txt, n);
        break;
      }
      default: rowan_bind_int64(u, c, (int64_t)tu_rand(&w->rs) >> (rnd(w, 60))); break;
    }
  }
  int rc = rowan_step(u);
  if (rc != ROWAN_DONE) sb_add(w->out, "upsert %d %d -> %d %s\n", s, t, rc, rowan_errmsg(w->db));
  rowan_reset(u);
}

/* Render the current row of st: whole (rowan_column_values) or by the getters. */
static void render_row(world *w, rowan_stmt *st) {
  int n = rowan_column_count(st);
  rowan_value v[16];
  assert_true(n <= 16);
  bool whole = rnd(w, 3) != 0;
  if (whole) assert_int_equal(rowan_column_values(st, 0, n, v), ROWAN_OK);
  sb_add(w->out, "  row");
  for (int i = 0; i < n; i++) {
    int type = whole ? v[i].type : rowan_column_type(st, i);
    if (type == ROWAN_NULL) {
      sb_add(w->out, " NULL");
      continue;
    }
    if (type == ROWAN_TEXT || type == ROWAN_BLOB) {
      const void *p = whole ? v[i].p : rowan_column_blob(st, i);
      int nb = whole ? v[i].bytes : rowan_column_bytes(st, i);
      sb_add(w->out, " '%.*s'", nb, (const char *)p);
    } else if (type == ROWAN_FLOAT) {
      sb_add(w->out, " %.17g", whole ? v[i].d : rowan_column_double(st, i));
    } else {
      sb_add(w->out, " %d:%lld", type, (long long)(whole ? v[i].i : rowan_column_int64(st, i)));
    }
  }
  sb_add(w->out, "\n");
}

/* Bind query qi's parameters at random. */
static void bind_query(world *w, int qi) {
  rowan_stmt *st = w->q[qi];
  int s = (int)rnd(w, NST);
  int64_t lim = rnd(w, 4) == 0 ? 1000000 : (int64_t)rnd(w, 3 * w->nt / 2);
  if (rnd(w, 6) == 0) lim = (int64_t)rnd(w, 3);
  int64_t off = rnd(w, 2) ? 0 : (int64_t)rnd(w, w->nt + 5);
  int t0 = (int)rnd(w, (uint64_t)w->nt + 20) - 10;
  switch (qi) {
    case Q_LATEST: case Q_REVERSE:
      rowan_bind_text(st, 1, station(w, s), -1);
      rowan_bind_int64(st, 2, lim);
      rowan_bind_int64(st, 3, off);
      break;
    case Q_FULL:
      rowan_bind_int64(st, 1, lim);
      rowan_bind_int64(st, 2, off);
      break;
    case Q_IN:
      rowan_bind_text(st, 1, station(w, s), -1);
      rowan_bind_text(st, 2, station(w, (int)rnd(w, NST)), -1);
      rowan_bind_int64(st, 3, lim);
      break;
    case Q_RANGE:
      rowan_bind_text(st, 1, station(w, s), -1);
      rowan_bind_timestamp(st, 2, ts_of(t0 + (int)rnd(w, 200)));
      rowan_bind_timestamp(st, 3, ts_of(t0));
      break;
    case Q_KEYS:
      rowan_bind_text(st, 1, station(w, s), -1);
      rowan_bind_int64(st, 2, lim);
      break;
    case Q_POINT:
      rowan_bind_text(st, 1, station(w, s), -1);
      rowan_bind_timestamp(st, 2, ts_of(t0));
      break;
    case Q_FILTER:
      rowan_bind_text(st, 1, station(w, s), -1);
      rowan_bind_double(st, 2, (double)((int64_t)rnd(w, 2000) - 1000));
      rowan_bind_int64(st, 3, lim);
      break;
    default: {
      int64_t c0 = (int64_t)rnd(w, 50);
      rowan_bind_int64(st, 1, c0);
      rowan_bind_int64(st, 2, c0 + (int64_t)rnd(w, 10));
      break;
    }
  }
}

/* Something the connection does while a statement is between rows. */
static void midscan_action(world *w) {
  int a = (int)rnd(w, 12);
  int s = (int)rnd(w, NST), t = (int)rnd(w, (uint64_t)w->nt);
  sb_add(w->out, " action %d\n", a);
  switch (a) {
    case 0: case 1: { /* rows ahead of and behind the cursor, some new */
      int n = 1 + (int)rnd(w, 40);
      for (int k = 0; k < n; k++) upsert_row(w, s, (t + k * (int)(1 + rnd(w, 3))) % (w->nt + 20));
      break;
    }
    case 2: {
      rowan_stmt *d = NULL;
      int rc = rowan_prepare(w->db, "DELETE FROM S WHERE ST = ? AND TS < ? AND TS >= ?", -1, &d,
                             NULL);
      assert_int_equal(rc, ROWAN_OK);
      rowan_bind_text(d, 1, station(w, s), -1);
      rowan_bind_timestamp(d, 2, ts_of(t));
      rowan_bind_timestamp(d, 3, ts_of(t - (int)rnd(w, 60)));
      rc = rowan_step(d);
      sb_add(w->out, " delete -> %d changes %lld\n", rc,
             rc == ROWAN_DONE ? (long long)rowan_changes(w->db) : -1LL);
      rowan_finalize(d);
      break;
    }
    case 3: sb_add(w->out, " flush %d\n", rowan_flush(w->db)); break;
    case 4: sb_add(w->out, " compact %d\n", rowan_compact(w->db, (int)rnd(w, 2))); break;
    case 5:
      w->now += (int64_t)rnd(w, 3600) * 1000;
      kv_env_mem_set_time(w->env, w->now);
      break;
    case 6:
      if (w->in_tx) {
        run_sql(w, rnd(w, 2) ? "COMMIT" : "ROLLBACK");
        w->in_tx = false;
      } else {
        w->in_tx = run_sql(w, "BEGIN") == ROWAN_OK;
      }
      break;
    case 7: { /* DELETE of one row the statement may be on */
      rowan_stmt *d = NULL;
      assert_int_equal(rowan_prepare(w->db, "DELETE FROM S WHERE ST = ? AND TS = ?", -1, &d, NULL),
                       ROWAN_OK);
      rowan_bind_text(d, 1, station(w, s), -1);
      rowan_bind_timestamp(d, 2, ts_of(t));
      sb_add(w->out, " delete1 -> %d\n", rowan_step(d));
      rowan_finalize(d);
      break;
    }
    default: break; /* nothing: the statement just steps on */
  }
}

/* Run query qi: bind, step some rows, maybe act, step on (maybe reset and rebind). */
static void run_query(world *w, int qi) {
  rowan_stmt *st = w->q[qi];
  bind_query(w, qi);
  sb_add(w->out, "q%d\n", qi);
  int first = (int)rnd(w, 30), nact = (int)rnd(w, 5);
  for (int r = 0, steps = 0; steps < 5000; steps++) {
    if (r == first && nact > 0) {
      nact--;
      if (rnd(w, 5) == 0) { /* reset and re-bind mid-scan */
        sb_add(w->out, " reset %d\n", rowan_reset(st));
        bind_query(w, qi);
      } else {
        midscan_action(w);
      }
      first += 1 + (int)rnd(w, 40);
    }
    int rc = rowan_step(st);
    if (rc == ROWAN_ROW) {
      render_row(w, st);
      r++;
      continue;
    }
    sb_add(w->out, " end %d\n", rc);
    if (rc != ROWAN_DONE) sb_add(w->out, " msg %s\n", rowan_errmsg(w->db));
    break;
  }
  rowan_reset(st);
}

static void scenario(uint64_t seed, int mode, sbuf *out) {
  set_mode(mode);
  world w;
  memset(&w, 0, sizeof w);
  w.rs = seed;
  w.out = out;
  w.now = NOW0;
  w.env = kv_env_mem_new(w.now);
  w.varkeys = rnd(&w, 2);
  w.nt = (int)tu_scaled(240, 80);
  rowan_options o;
  rowan_options_init(&o);
  o.kv_env = w.env;
  o.sync_mode = ROWAN_SYNC_OFF;
  static const size_t caches[4] = {0, 4096, 16384, 1u << 20};
  o.block_cache_size = caches[rnd(&w, 4)];
  if (o.block_cache_size == 0) o.block_cache_size = 1; /* as small as it goes */
  assert_int_equal(rowan_open("/db", &o, &w.db), ROWAN_OK);
  char ddl[512];
  int bs_r = 256 + 64 * (int)rnd(&w, 13), bs_m = 256 + 64 * (int)rnd(&w, 13);
  int ver = 1 + (int)rnd(&w, 3);
  bool ttl = rnd(&w, 3) == 0;
  snprintf(ddl, sizeof ddl,
           "CREATE TABLE S (ST VARCHAR NOT NULL, TS TIMESTAMP NOT NULL, R.A DOUBLE, R.B DOUBLE,"
           " R.C INTEGER, R.W VARCHAR, M.X BIGINT, CONSTRAINT PK PRIMARY KEY (ST, TS DESC))"
           " R.BLOCKSIZE = %d, M.BLOCKSIZE = %d, R.VERSIONS = %d%s",
           bs_r, bs_m, ver, ttl ? ", TTL = 7200" : "");
  run_sql(&w, ddl);
  if (rnd(&w, 2)) run_sql(&w, "CREATE INDEX IC ON S (C)");
  assert_int_equal(rowan_prepare(w.db, "UPSERT INTO S VALUES (?, ?, ?, ?, ?, ?, ?)", -1, &w.up,
                                 NULL), ROWAN_OK);
  /* rounds of writes: files, versions, deletes, memstore rows over files */
  int rounds = 2 + (int)rnd(&w, 3);
  for (int r = 0; r < rounds; r++) {
    run_sql(&w, "BEGIN");
    for (int s = 0; s < NST; s++)
      for (int t = 0; t < w.nt; t++)
        if (r == 0 ? rnd(&w, 10) != 0 : rnd(&w, 5) == 0) upsert_row(&w, s, t);
    run_sql(&w, "COMMIT");
    if (r > 0 && rnd(&w, 2)) {
      char sql[160];
      snprintf(sql, sizeof sql, "DELETE FROM S WHERE C = %d", (int)rnd(&w, 50));
      run_sql(&w, sql);
    }
    if (r + 1 < rounds || rnd(&w, 2)) sb_add(w.out, "flush %d\n", rowan_flush(w.db));
    if (r == 0 && rnd(&w, 2)) sb_add(w.out, "compact %d\n", rowan_compact(w.db, 1));
    if (ttl && rnd(&w, 2)) {
      w.now += 1800 * 1000;
      kv_env_mem_set_time(w.env, w.now);
    }
  }
  for (int i = 0; i < NQ; i++) {
    int rc = rowan_prepare(w.db, QSQL[i], -1, &w.q[i], NULL);
    sb_add(w.out, "prepare %d -> %d\n", i, rc);
  }
  int nops = (int)tu_scaled(250, 60);
  for (int k = 0; k < nops; k++) {
    int qi = (int)rnd(&w, NQ + 3);
    if (qi >= NQ) qi = Q_LATEST; /* the query of the target, more often */
    if (w.q[qi]) run_query(&w, qi);
  }
  if (w.in_tx) run_sql(&w, "ROLLBACK");
  for (int i = 0; i < NQ; i++) rowan_finalize(w.q[i]);
  rowan_finalize(w.up);
  assert_int_equal(rowan_close(w.db), ROWAN_OK);
  kv_env_free(w.env);
  set_mode(M_RUNS);
}

/* Print where two renderings first differ. */
static void report_diff(uint64_t seed, int m, const sbuf *a, const sbuf *b) {
  size_t i = 0;
  while (i < a->len && i < b->len && a->p[i] == b->p[i]) i++;
  size_t ls = i;
  while (ls > 0 && a->p[ls - 1] != '\n') ls--;
  size_t from = ls > 400 ? ls - 400 : 0;
  fprintf(stderr, "seed %llu: %s differs from %s at byte %zu\n--- context\n%.*s\n--- %s\n%.300s\n"
          "--- %s\n%.300s\n", (unsigned long long)seed, MODE_NAME[m], MODE_NAME[M_CELLS], i,
          (int)(ls - from), a->p + from, MODE_NAME[m], b->p ? b->p + ls : "", MODE_NAME[M_CELLS],
          a->p ? a->p + ls : "");
}

static void midscan_differential(void **state) {
  (void)state;
  uint64_t seed0 = tu_seed("break_fast_midscan");
  int nseeds = (int)tu_scaled(12, 3);
  uint64_t runs0 = kv_scan_run_rows();
  for (int k = 0; k < nseeds; k++) {
    uint64_t seed = seed0 + (uint64_t)k * 7919;
    sbuf out[NMODE];
    memset(out, 0, sizeof out);
    for (int m = 0; m < NMODE; m++) scenario(seed, m, &out[m]);
    const char *dump = getenv("ROWAN_BREAK_DUMP"); /* a file to look at what a scenario saw */
    if (dump && k == 0) {
      FILE *f = fopen(dump, "w");
      if (f) {
        fwrite(out[M_RUNS].p, 1, out[M_RUNS].len, f);
        fclose(f);
      }
    }
    for (int m = 0; m < NMODE - 1; m++)
      if (out[m].len != out[M_CELLS].len || memcmp(out[m].p, out[M_CELLS].p, out[m].len) != 0) {
        report_diff(seed, m, &out[M_CELLS], &out[m]);
        fail_msg("seed %llu (ROWAN_SEED=%llu, scenario %d): mode %s differs from the cell path",
                 (unsigned long long)seed, (unsigned long long)seed0, k, MODE_NAME[m]);
      }
    for (int m = 0; m < NMODE; m++) free(out[m].p);
  }
  uint64_t runs = kv_scan_run_rows() - runs0;
  if (runs < 10) fail_msg("seed %llu: row runs handed out only %llu rows", (unsigned long long)seed0,
                           (unsigned long long)runs);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(midscan_differential),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
