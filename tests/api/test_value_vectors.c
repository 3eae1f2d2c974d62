/*
** tests/api/test_value_vectors.c: rows handed from kv to exec as value vectors (kv.h
** kv_scan_options.value_vectors: a family's cells of a row taken whole from a store-file
** block, as values by projection position, decoded through exec/rowcodec.h's
** exec_vec_map) give exactly the answers of the two paths they short-cut: the same rows
** handed out as views (kv_scan_set_value_vectors off) and the cell-by-cell path (fast rows
** off). Through the public API on the in-memory env, seeded (tu_seed).
**
** Data: a table with a two-column key (one DESC) and three families (two named, one
** default), every value type the decoder has a kind for (DOUBLE, INTEGER, BIGINT, FLOAT,
** BOOLEAN, VARCHAR, DECIMAL, TIMESTAMP), in tiny blocks so rows span blocks; random upserts
** of all or some columns, NULLs (tombstones), deletes, rewrites at later times, flushes,
** minor and major compactions, memstore cells over files; one world with VERSIONS 3, one
** with a TTL and a moving clock, one with a tiny block cache (blocks evicted between and
** during queries). Queries: projections of any subset and order, point lookups, ranges,
** IN lists (skip scans), residual filters, ORDER BY the key both ways, LIMIT and OFFSET,
** aggregates; run from kept statements, re-bound, some reset mid-scan, and inside a
** transaction with its own uncommitted writes. EXPLAIN ANALYZE's counts must agree too.
** Each world also checks that the vector path handed out a good share of the rows, so the
** comparison cannot pass by never taking it.
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
#include "tu_api.h"
#include "tu_sbuf.h"

#define NOW0 1700000000000LL
#define NK 40 /* values of the first key column */
#define NS 6  /* values of the second */

static const char *const COLS[] = {"A.X", "A.Y", "A.Z", "A.W", "B.U", "B.V", "N", "B.D",
                                   "A.T", "A.F"};
static const char *const NAMES[] = {"X", "Y", "Z", "W", "U", "V", "N", "D", "T", "F"};
#define NCOL 10

typedef struct world {
  kv_env *env;      /* in-memory file system and clock */
  rowan_db *db;     /* the database */
  uint64_t rs;      /* PRNG state */
  int64_t now;      /* the env's clock */
  bool ttl;         /* the table has a TTL */
} world;

static uint64_t rnd(world *w, uint64_t n) { return tu_below(&w->rs, n); }

static rowan_db *open_db(kv_env *env, size_t cache) {
  rowan_options o;
  rowan_options_init(&o);
  o.kv_env = env;
  o.sync_mode = ROWAN_SYNC_OFF;
  o.block_cache_size = cache;
  o.max_lookback_seconds = -1; /* major compaction drops at once (no look-back window) */
  rowan_db *db = NULL;
  assert_int_equal(rowan_open("/db", &o, &db), ROWAN_OK);
  return db;
}

/* A random value of column c as SQL text (NULL sometimes). */
static void value_sql(world *w, int c, char *out, size_t cap) {
  if (rnd(w, 8) == 0) {
    snprintf(out, cap, "NULL");
    return;
  }
  long v = (long)rnd(w, 2000) - 1000;
  switch (c) {
    case 0: case 4: snprintf(out, cap, "%ld.%03ld", v, (long)rnd(w, 1000)); break;
    case 1: snprintf(out, cap, "%ld", v); break;
    case 2: case 5: snprintf(out, cap, "'s%ld%.*s'", v, (int)rnd(w, 12), "xxxxxxxxxxxx"); break;
    case 3: snprintf(out, cap, "%s", rnd(w, 2) ? "TRUE" : "FALSE"); break;
    case 6: snprintf(out, cap, "%ld.5", v); break;
    case 7: snprintf(out, cap, "%ld.%02ld", v, (long)rnd(w, 100)); break;
    case 8: snprintf(out, cap, "TIMESTAMP '2024-01-%02d 10:%02d:00'", 1 + (int)rnd(w, 28),
                     (int)rnd(w, 60)); break;
    default: snprintf(out, cap, "%ld.25", v); break;
  }
}

/* Random writes: upserts of every column or a subset, deletes. */
static void write_some(world *w, int n) {
  char sql[1024], val[64];
  for (int i = 0; i < n; i++) {
    int k = (int)rnd(w, NK), s = (int)rnd(w, NS);
    if (rnd(w, 12) == 0) {
      snprintf(sql, sizeof sql, "DELETE FROM T WHERE K = %d%s", k,
               rnd(w, 2) ? "" : (s & 1 ? " AND S = 's1'" : " AND S = 's0'"));
      exec_ok(w->db, sql);
      continue;
    }
    bool all = rnd(w, 3) != 0;
    size_t len = (size_t)snprintf(sql, sizeof sql, "UPSERT INTO T (K, S");
    bool use[NCOL];
    for (int c = 0; c < NCOL; c++) {
      use[c] = all || rnd(w, 3) == 0;
      if (use[c]) len += (size_t)snprintf(sql + len, sizeof sql - len, ", %s", NAMES[c]);
    }
    len += (size_t)snprintf(sql + len, sizeof sql - len, ") VALUES (%d, 's%d'", k, s);
    for (int c = 0; c < NCOL; c++) {
      if (!use[c]) continue;
      value_sql(w, c, val, sizeof val);
      len += (size_t)snprintf(sql + len, sizeof sql - len, ", %s", val);
    }
    snprintf(sql + len, sizeof sql - len, ")");
    exec_ok(w->db, sql);
  }
}

/* A random query (text into q) and its parameters (k0 <= k1). */
typedef struct query {
  char sql[512];    /* the statement */
  int nparam;       /* parameters it takes: 0, 1 (k0) or 2 (k0, k1) */
  bool explain;     /* EXPLAIN ANALYZE of it */
} query;

static void random_query(world *w, query *q) {
  char proj[256] = "";
  size_t pl = 0;
  int np = 1 + (int)rnd(w, NCOL + 2);
  for (int i = 0; i < np; i++) { /* any subset, in any order, repeats allowed */
    int c = (int)rnd(w, NCOL + 2);
    const char *name = c < NCOL ? NAMES[c] : c == NCOL ? "K" : "S";
    pl += (size_t)snprintf(proj + pl, sizeof proj - pl, "%s%s", i ? ", " : "", name);
  }
  const char *where;
  q->nparam = 0;
  switch (rnd(w, 7)) {
    case 0: where = "K = ? AND S = 's2'"; q->nparam = 1; break;
    case 1: where = "K = ?"; q->nparam = 1; break;
    case 2: where = "K >= ? AND K < ?"; q->nparam = 2; break;
    case 3: where = "K IN (3, 7, 8, 21, 33) AND S > 's1'"; break;
    case 4: where = "K > ? AND X > 0"; q->nparam = 1; break; /* a residual filter */
    case 5: where = "K < ? AND (Z IS NULL OR U < 100)"; q->nparam = 1; break;
    default: where = "K >= 0"; break;
  }
  const char *order = rnd(w, 2) ? " ORDER BY K DESC, S" : rnd(w, 2) ? " ORDER BY K, S DESC" : "";
  char tail[64] = "";
  int lim = rnd(w, 2) ? 1 + (int)rnd(w, 30) : 0, off = lim && rnd(w, 2) ? (int)rnd(w, 10) : -1;
  if (lim && off >= 0) snprintf(tail, sizeof tail, " LIMIT %d OFFSET %d", lim, off);
  else if (lim) snprintf(tail, sizeof tail, " LIMIT %d", lim);
  if (rnd(w, 10) == 0)
    snprintf(q->sql, sizeof q->sql, "SELECT COUNT(*), SUM(Y), MIN(Z), MAX(U) FROM T WHERE %s",
             where);
  else
    snprintf(q->sql, sizeof q->sql, "SELECT %s FROM T WHERE %s%s%s", proj, where, order, tail);
  q->explain = rnd(w, 6) == 0;
}

/* Bind the query's parameters for run r. */
static void bind_params(rowan_stmt *st, const query *q, int k0, int k1) {
  if (q->nparam >= 1) assert_int_equal(rowan_bind_int64(st, 1, k0), ROWAN_OK);
  if (q->nparam >= 2) assert_int_equal(rowan_bind_int64(st, 2, k1), ROWAN_OK);
}

/* Run st to the end (or `stop` rows, then reset), rendering every value with its type. */
static void render(rowan_db *db, rowan_stmt *st, int stop, sbuf *out) {
  int rc, n = 0, ncol = rowan_column_count(st);
  while ((rc = rowan_step(st)) == ROWAN_ROW) {
    if (stop >= 0 && n++ == stop) {
      rowan_reset(st);
      sb_add(out, "[reset]\n");
      return;
    }
    for (int i = 0; i < ncol; i++) {
      int t = rowan_column_type(st, i);
      const char *s = rowan_column_text(st, i);
      sb_add(out, "%d:%s|", t, s ? s : "(null)");
      if (t == ROWAN_FLOAT) sb_add(out, "%.17g|", rowan_column_double(st, i));
      if (t == ROWAN_INTEGER) sb_add(out, "%lld|", (long long)rowan_column_int64(st, i));
    }
    sb_add(out, "\n");
  }
  if (rc != ROWAN_DONE) fail_msg("step: %s", rowan_errmsg(db));
  rowan_reset(st);
}

/* Drop from EXPLAIN ANALYZE text its times: they differ from run to run whatever the path. */
static void strip_times(char *t) {
  char *p;
  while ((p = strstr(t, "time=")) != NULL) {
    char *e = p + 5;
    while (*e && *e != ' ' && *e != ')' && *e != '|') e++; /* "0.1ms" */
    memmove(p, e, strlen(e) + 1);
  }
}

/* In two EXPLAIN ANALYZE texts a and b (times stripped), take out of each family's
** "(blocks=N cache hits=H bytes=X)" what the block cache decides, pairing the groups in
** order: "cache hits=H bytes=X" always (the cache warms up from one mode to the next), and
** N too, as "blocks=?", where the two groups' hits or bytes differ. The cache changes the
** count of block loads as well: a point read whose block misses and is not admitted
** decodes the row alone and loads the block again when the scan moves past that row
** (kv/sf/sf_iter.c point_load, step_fwd), where a hit loads it once (ROWAN_SEED=1065973694879
** at scale 1: blocks=3 with 0 hits for the first mode, blocks=2 with 2 hits for the next,
** in either order). Where the cache served both runs alike, N must agree. */
static void mask_cache(char *a, char *b) {
  static const char grp[] = "(blocks=", hits[] = " cache hits=";
  char *pa = a, *pb = b;
  while ((pa = strstr(pa, grp)) != NULL && (pb = strstr(pb, grp)) != NULL) {
    char *na = pa + sizeof grp - 1, *nb = pb + sizeof grp - 1;
    char *ha = strstr(na, hits), *hb = strstr(nb, hits);
    char *ea = ha ? strchr(ha, ')') : NULL, *eb = hb ? strchr(hb, ')') : NULL;
    if (!ea || !eb) return; /* not the group's form: the texts are compared as they are */
    bool same = ea - ha == eb - hb && memcmp(ha, hb, (size_t)(ea - ha)) == 0;
    memmove(ha, ea, strlen(ea) + 1);
    memmove(hb, eb, strlen(eb) + 1);
    if (!same) { /* "blocks=N" -> "blocks=?" in both */
      memmove(na + 1, ha, strlen(ha) + 1);
      *na = '?';
      memmove(nb + 1, hb, strlen(hb) + 1);
      *nb = '?';
    }
    pa = na;
    pb = nb;
  }
}

enum { MODE_VECTORS = 0, MODE_VIEWS = 1, MODE_CELLS = 2, NMODES = 3 };

static void set_mode(int m) {
  kv_scan_set_value_vectors(m == MODE_VECTORS);
  kv_scan_set_fast_rows(m != MODE_CELLS);
}

/* Run query q (kept statement st, rebound) in every mode and compare the renderings. The
** statement is re-prepared per mode when the mode changes what kv_scan_open decides (the
** switches are read at each open, so the kept one serves). */
static void check_query(world *w, rowan_stmt *st, const query *q, int qi) {
  int k0 = (int)rnd(w, NK + 4) - 2, k1 = k0 + (int)rnd(w, NK / 2);
  int stop = rnd(w, 5) == 0 ? (int)rnd(w, 20) : -1;
  sbuf got[NMODES], ex[NMODES];
  memset(got, 0, sizeof got);
  memset(ex, 0, sizeof ex);
  for (int m = 0; m < NMODES; m++) {
    set_mode(m);
    bind_params(st, q, k0, k1);
    render(w->db, st, stop, &got[m]);
    if (q->explain && m != MODE_CELLS) { /* the counts, as the views path gives them (the
                                             cell path may read a block more or less) */
      char sql[600];
      snprintf(sql, sizeof sql, "EXPLAIN ANALYZE %s", q->sql);
      rowan_stmt *es;
      assert_int_equal(rowan_prepare(w->db, sql, -1, &es, NULL), ROWAN_OK);
      bind_params(es, q, k0, k1);
      render(w->db, es, -1, &ex[m]);
      rowan_finalize(es);
      strip_times(ex[m].p);
    }
  }
  set_mode(MODE_VECTORS);
  for (int m = 1; m < NMODES; m++) {
    bool rows_differ = strcmp(got[0].p ? got[0].p : "", got[m].p ? got[m].p : "") != 0;
    bool ex_differ = false;
    char *ma = NULL, *mb = NULL; /* the EXPLAIN texts with the cache's part masked */
    if (m == MODE_VIEWS && q->explain) {
      ma = strdup(ex[0].p);
      mb = strdup(ex[m].p);
      assert_non_null(ma);
      assert_non_null(mb);
      mask_cache(ma, mb);
      ex_differ = strcmp(ma, mb) != 0;
    }
    free(ma);
    free(mb);
    if (rows_differ || ex_differ) {
      fprintf(stderr, "query %d: %s (k0 %d, k1 %d, stop %d)\n--- vectors:\n%s%s--- %s:\n%s%s",
              qi, q->sql, k0, k1, stop, got[0].p ? got[0].p : "", ex[0].p ? ex[0].p : "",
              m == MODE_VIEWS ? "views" : "cells", got[m].p ? got[m].p : "",
              ex[m].p ? ex[m].p : "");
      fail_msg("value vectors disagree with the %s path", m == MODE_VIEWS ? "views" : "cell");
    }
  }
  for (int m = 0; m < NMODES; m++) {
    free(got[m].p);
    free(ex[m].p);
  }
}

/* One world: create, then rounds of writes, maintenance and queries. */
static void scenario(const char *name, const char *options, size_t cache, bool ttl) {
  world w;
  memset(&w, 0, sizeof w);
  uint64_t seed = tu_seed(name);
  w.rs = seed;
  w.now = NOW0;
  w.ttl = ttl;
  w.env = kv_env_mem_new(w.now);
  w.db = open_db(w.env, cache);
  char ddl[512];
  snprintf(ddl, sizeof ddl,
           "CREATE TABLE T (K INTEGER NOT NULL, S VARCHAR NOT NULL, %s DOUBLE, %s INTEGER, "
           "%s VARCHAR, %s BOOLEAN, %s DOUBLE, %s VARCHAR, %s DOUBLE, %s DECIMAL(10,2), "
           "%s TIMESTAMP, %s FLOAT CONSTRAINT PK PRIMARY KEY (K, S DESC)) %s",
           COLS[0], COLS[1], COLS[2], COLS[3], COLS[4], COLS[5], COLS[6], COLS[7], COLS[8],
           COLS[9], options);
  exec_ok(w.db, ddl);
  uint64_t vec0 = kv_scan_vector_rows();
  int rounds = (int)tu_scaled(24, 8), nq = 12;
  query qs[12];
  rowan_stmt *st[12];
  for (int i = 0; i < nq; i++) {
    random_query(&w, &qs[i]);
    if (rowan_prepare(w.db, qs[i].sql, -1, &st[i], NULL) != ROWAN_OK)
      fail_msg("prepare %s: %s", qs[i].sql, rowan_errmsg(w.db));
  }
  for (int r = 0; r < rounds; r++) {
    write_some(&w, 20 + (int)rnd(&w, 60));
    switch (rnd(&w, 5)) { /* leave some writes in the memstore over the files */
      case 0: assert_int_equal(rowan_flush(w.db), ROWAN_OK); break;
      case 1: assert_int_equal(rowan_compact(w.db, 0), ROWAN_OK); break;
      case 2: assert_int_equal(rowan_compact(w.db, 1), ROWAN_OK); break;
      default: break;
    }
    if (rnd(&w, 3) == 0) write_some(&w, 5);
    if (ttl) { /* the clock moves: some cells expire between queries */
      w.now += (int64_t)rnd(&w, 40) * 1000;
      kv_env_mem_set_time(w.env, w.now);
    }
    bool txn = rnd(&w, 4) == 0;
    if (txn) { /* the transaction's own writes overlay what the queries read */
      exec_ok(w.db, "BEGIN");
      write_some(&w, 1 + (int)rnd(&w, 8));
    }
    for (int i = 0; i < nq; i++) check_query(&w, st[i], &qs[i], i);
    if (txn) exec_ok(w.db, rnd(&w, 2) ? "COMMIT" : "ROLLBACK");
    if (rnd(&w, 3) == 0) { /* new shapes now and then */
      int i = (int)rnd(&w, nq);
      rowan_finalize(st[i]);
      random_query(&w, &qs[i]);
      if (rowan_prepare(w.db, qs[i].sql, -1, &st[i], NULL) != ROWAN_OK)
        fail_msg("prepare %s: %s", qs[i].sql, rowan_errmsg(w.db));
    }
  }
  /* after a major compaction every row is in one file: the vector path must dominate */
  assert_int_equal(rowan_compact(w.db, 1), ROWAN_OK);
  for (int i = 0; i < nq; i++) check_query(&w, st[i], &qs[i], i);
  uint64_t vec = kv_scan_vector_rows() - vec0;
  /* then a read of every column of every row: most of its (row, family) pairs must come as
     value vectors (not all: a row continuing into the next one of these small blocks comes
     as views); the count before depends on how much the clock let expire */
  rowan_stmt *all;
  char sql[300];
  snprintf(sql, sizeof sql, "SELECT K, S, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s FROM T",
           COLS[0], COLS[1], COLS[2], COLS[3], COLS[4], COLS[5], COLS[6], COLS[7], COLS[8],
           COLS[9]);
  assert_int_equal(rowan_prepare(w.db, sql, -1, &all, NULL), ROWAN_OK);
  uint64_t before = kv_scan_vector_rows(), live = 0;
  int rc;
  while ((rc = rowan_step(all)) == ROWAN_ROW) live++;
  assert_int_equal(rc, ROWAN_DONE);
  rowan_finalize(all);
  uint64_t whole = kv_scan_vector_rows() - before;
  fprintf(stderr, "[%s] %llu rows as value vectors; then %llu of %llu live rows\n", name,
          (unsigned long long)vec, (unsigned long long)whole, (unsigned long long)live);
  if (whole < live) /* (row, family) pairs: with values in two or three families a row */
    fail_msg("only %llu of %llu live rows came as value vectors", (unsigned long long)whole,
             (unsigned long long)live);
  for (int i = 0; i < nq; i++) rowan_finalize(st[i]);
  assert_int_equal(rowan_close(w.db), ROWAN_OK);
  kv_env_free(w.env);
}

static void test_vectors_versions(void **state) {
  (void)state;
  scenario("vectors_versions", "VERSIONS = 3, BLOCKSIZE = 512", 4u << 20, false);
}

static void test_vectors_ttl(void **state) {
  (void)state;
  scenario("vectors_ttl", "TTL = 100, BLOCKSIZE = 512", 4u << 20, true);
}

static void test_vectors_tiny_cache(void **state) {
  (void)state;
  scenario("vectors_tiny_cache", "BLOCKSIZE = 256", 48u << 10, false);
}

static void test_vectors_no_cache(void **state) {
  (void)state; /* blocks read privately: fixed-width values gathered from transposed bytes */
  scenario("vectors_no_cache", "BLOCKSIZE = 1024", 4096, false);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_vectors_versions),
      cmocka_unit_test(test_vectors_ttl),
      cmocka_unit_test(test_vectors_tiny_cache),
      cmocka_unit_test(test_vectors_no_cache),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
