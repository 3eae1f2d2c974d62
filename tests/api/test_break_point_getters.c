/*
** tests/api/test_break_point_getters.c: point lookups and IN-list skip scans by full key
** through kept, re-bound statements, on a table of tiny blocks (BLOCKSIZE 64: rows over
** several blocks) with no block cache or a tiny one (so point reads decode their rows alone,
** kv/sf/sf_point.h, or blocks are evicted between reads), against a model of the table; and
** the getters' contract of include/rowan.h on those rows: every rowan_column_* pointer stays
** valid and unchanged until the next step, reset or finalize, whatever other getters are
** called in between (on the same column, in any order, twice), and without a current row
** (before the first ROWAN_ROW, after DONE, after a reset mid-scan) every value reads as
** NULL; nor does another statement's read of the whole table in between (blocks evicted).
** The whole table sorted by a value column, and counted per value (rows and group keys
** the sort and the aggregate keep while the scan reads on). A point lookup of one family's column alone must still find rows that exist only
** by their other families or their key (the existence family decides). Range reads too (one station's hours, or the whole table in key order, forward and
** reverse, with a projection, LIMIT and OFFSET, sometimes reset after a few rows and run
** again with new values: the rows-taken-whole and value-vector paths). Writes between reads: upserts of some columns (NULL deletes a cell), deleted rows,
** flushes and compactions, so several store files and memstore cells are in play; a
** transaction's own uncommitted writes are read too. Seeded (tu_seed; the seed is printed).
** Not here: kv-level comparisons (tests/kv/test_break_point_skip.c, test_sf_point_reads.c).
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
#include "kv/sf/sf_point.h"
#include "rowan.h"
#include "testutil.h"
#include "tu_api.h"

#define NST 6    /* stations */
#define NH 60    /* hours per station */
#define NC 6     /* result columns: ST, H, V, S, BIN, I */

/* One row of the model. */
typedef struct mrow {
  bool live;          /* the row exists */
  bool has_v;         /* V is not NULL */
  double v;           /* V */
  char s[80];         /* S; "" with has_s false = NULL */
  bool has_s;         /* S is not NULL */
  uint8_t bin[24];    /* BIN */
  int bin_len;        /* its length; -1 = NULL */
  bool has_i;         /* I is not NULL */
  int64_t i;          /* I */
} mrow;

typedef struct world {
  kv_env *env;           /* in-memory file system */
  rowan_db *db;          /* the database */
  mrow m[NST][NH];       /* the model (committed) */
  uint64_t rng;          /* PRNG */
  uint64_t seed;         /* for messages */
  rowan_stmt *up;        /* UPSERT of every column */
  rowan_stmt *del;       /* DELETE of one row */
  rowan_stmt *pt;        /* point lookup */
  rowan_stmt *pt2;       /* point lookup of family X's BIN alone (the row may exist only
                            by other families: the existence family decides) */
  rowan_stmt *in;        /* IN list, ascending */
  rowan_stmt *in_desc;   /* IN list, descending */
  rowan_stmt *other;     /* a whole-table read run between a row's getters and their check */
  rowan_stmt *sorted;    /* the whole table sorted by S (rows buffered by the sort) */
  rowan_stmt *grouped;   /* rows counted per S (group keys kept by the aggregate) */
  rowan_stmt *rq[6][2][2]; /* per projection, form (one station's range, whole table) and
                              direction: range reads with LIMIT and OFFSET */
} world;

static uint64_t rnd(world *w, uint64_t n) { return tu_below(&w->rng, n); }

static const char *station(int s) {
  static const char *names[NST + 1] = {"A", "Bb", "Ccc", "Dongsi", "Eeeeeeeeeeeeeeeeeeeeee",
                                       "F", "Nowhere"};
  return names[s];
}

static void prep(world *w, const char *sql, rowan_stmt **st) {
  if (rowan_prepare(w->db, sql, -1, st, NULL) != ROWAN_OK)
    fail_msg("%s: %s", sql, rowan_errmsg(w->db));
}

static void world_open(world *w, const char *name, size_t cache) {
  memset(w, 0, sizeof *w);
  w->seed = w->rng = tu_seed(name);
  w->env = kv_env_mem_new(1700000000000LL);
  rowan_options o;
  rowan_options_init(&o);
  o.kv_env = w->env;
  o.sync_mode = ROWAN_SYNC_OFF;
  o.block_cache_size = cache;
  assert_int_equal(rowan_open("/db", &o, &w->db), ROWAN_OK);
  exec_ok(w->db, "CREATE TABLE T (ST VARCHAR NOT NULL, H INTEGER NOT NULL, M.V DOUBLE, "
                 "M.S VARCHAR, X.BIN VARBINARY, X.I BIGINT, "
                 "CONSTRAINT PK PRIMARY KEY (ST, H DESC)) BLOCKSIZE = 64, M.VERSIONS = 2");
  prep(w, "UPSERT INTO T (ST, H, V, S, BIN, I) VALUES (?, ?, ?, ?, ?, ?)", &w->up);
  prep(w, "DELETE FROM T WHERE ST = ? AND H = ?", &w->del);
  prep(w, "SELECT ST, H, V, S, BIN, I FROM T WHERE ST = ? AND H = ?", &w->pt);
  prep(w, "SELECT H, BIN FROM T WHERE ST = ? AND H = ?", &w->pt2);
  prep(w, "SELECT ST, H, S, BIN FROM T", &w->other);
  prep(w, "SELECT ST, H, V, S, BIN, I FROM T ORDER BY S NULLS FIRST, ST, H", &w->sorted);
  prep(w, "SELECT S, COUNT(*) FROM T GROUP BY S", &w->grouped);
  prep(w, "SELECT ST, H, V, S, BIN, I FROM T WHERE ST = ? AND H IN (?, ?, ?, ?) ORDER BY H",
       &w->in);
  prep(w, "SELECT ST, H, V, S, BIN, I FROM T WHERE ST = ? AND H IN (?, ?, ?, ?) "
          "ORDER BY H DESC", &w->in_desc);
}

static void world_close(world *w) {
  for (int p = 0; p < 6; p++)
    for (int f = 0; f < 2; f++)
      for (int d = 0; d < 2; d++) rowan_finalize(w->rq[p][f][d]);
  rowan_finalize(w->up);
  rowan_finalize(w->del);
  rowan_finalize(w->pt);
  rowan_finalize(w->pt2);
  rowan_finalize(w->other);
  rowan_finalize(w->sorted);
  rowan_finalize(w->grouped);
  rowan_finalize(w->in);
  rowan_finalize(w->in_desc);
  assert_int_equal(rowan_close(w->db), ROWAN_OK);
  kv_env_free(w->env);
}

static void step_done(world *w, rowan_stmt *st) {
  int rc = rowan_step(st);
  if (rc != ROWAN_DONE) fail_msg("seed %llu: write -> %d: %s", (unsigned long long)w->seed, rc,
                                 rowan_errmsg(w->db));
  assert_int_equal(rowan_reset(st), ROWAN_OK);
}

/* One random write to model m (the committed one, or a transaction's copy). */
static void random_write(world *w, mrow (*m)[NH]) {
  int s = (int)rnd(w, NST), h = (int)rnd(w, NH);
  mrow *r = &m[s][h];
  if (rnd(w, 8) == 0) {
    rowan_bind_text(w->del, 1, station(s), -1);
    rowan_bind_int64(w->del, 2, h);
    step_done(w, w->del);
    memset(r, 0, sizeof *r);
    r->bin_len = -1;
    return;
  }
  if (!r->live) { /* every column NULL until set */
    memset(r, 0, sizeof *r);
    r->bin_len = -1;
  }
  r->live = true;
  rowan_bind_text(w->up, 1, station(s), -1);
  rowan_bind_int64(w->up, 2, h);
  bool all_null = rnd(w, 8) == 0; /* a row of its key alone */
  r->has_v = !all_null && rnd(w, 4) != 0;
  r->v = (double)(int64_t)rnd(w, 100000) / 8.0 - 3000.0;
  if (r->has_v) rowan_bind_double(w->up, 3, r->v);
  else rowan_bind_null(w->up, 3);
  r->has_s = !all_null && rnd(w, 4) != 0;
  int sl = (int)rnd(w, (uint64_t)sizeof r->s - 1);
  for (int k = 0; k < sl; k++) r->s[k] = (char)('a' + rnd(w, 26));
  r->s[sl] = 0;
  if (r->has_s) rowan_bind_text(w->up, 4, r->s, -1);
  else rowan_bind_null(w->up, 4);
  r->bin_len = all_null || rnd(w, 4) == 0 ? -1 : (int)rnd(w, sizeof r->bin + 1);
  for (int k = 0; k < r->bin_len; k++) r->bin[k] = (uint8_t)rnd(w, 256);
  if (r->bin_len >= 0) rowan_bind_blob(w->up, 5, r->bin, r->bin_len);
  else rowan_bind_null(w->up, 5);
  r->has_i = !all_null && rnd(w, 4) != 0;
  r->i = (int64_t)rnd(w, UINT64_MAX) >> (rnd(w, 63));
  if (r->has_i) rowan_bind_int64(w->up, 6, r->i);
  else rowan_bind_null(w->up, 6);
  step_done(w, w->up);
}

/* Without a current row every value reads as NULL. */
static void check_no_row(world *w, rowan_stmt *st, const char *when) {
  for (int c = -1; c <= NC; c++) {
    if (rowan_column_type(st, c) != ROWAN_NULL || rowan_column_text(st, c) != NULL ||
        rowan_column_blob(st, c) != NULL || rowan_column_bytes(st, c) != 0 ||
        rowan_column_int64(st, c) != 0 || rowan_column_double(st, c) != 0.0 ||
        rowan_column_timestamp(st, c) != 0)
      fail_msg("seed %llu: column %d %s is not NULL", (unsigned long long)w->seed, c, when);
  }
}

static const int ALL[NC] = {0, 1, 2, 3, 4, 5}; /* result position -> column (ST .. I) */

/* The current row of st is model row (s, h), its result columns being columns proj[0..np)
** (0 ST, 1 H, 2 V, 3 S, 4 BIN, 5 I): check every column, and that the pointers the getters
** gave stay unchanged while other getters run. */
static void check_row(world *w, rowan_stmt *st, int s, int h, const mrow *r, const int *proj,
                      int np) {
  const char *txt[NC];
  const void *blob[NC];
  char *copy[NC], *bcopy[NC];
  int len[NC];
  int order[NC] = {0, 1, 2, 3, 4, 5};
  for (int k = np - 1; k > 0; k--) { /* take the text pointers in a random order */
    int j = (int)rnd(w, (uint64_t)k + 1), t = order[k];
    order[k] = order[j];
    order[j] = t;
  }
  for (int k = 0; k < np; k++) {
    int c = order[k];
    txt[c] = rowan_column_text(st, c);
    copy[c] = txt[c] ? strdup(txt[c]) : NULL;
  }
  for (int k = 0; k < np; k++) {
    blob[k] = rowan_column_blob(st, k);
    len[k] = rowan_column_bytes(st, k);
    bcopy[k] = malloc((size_t)len[k] + 1);
    assert_non_null(bcopy[k]);
    if (len[k]) memcpy(bcopy[k], blob[k], (size_t)len[k]);
  }
  const char *who = station(s);
  for (int pass = 0; pass < 2; pass++) { /* twice, in between the other getters */
    for (int k = 0; k < np; k++) {
      int c = proj[k];
      bool ok = true;
      switch (c) {
      case 0: ok = txt[k] && strcmp(txt[k], who) == 0; break;
      case 1: ok = rowan_column_int64(st, k) == h; break;
      case 2:
        ok = (rowan_column_type(st, k) != ROWAN_NULL) == r->has_v &&
             (!r->has_v || rowan_column_double(st, k) == r->v);
        break;
      case 3: ok = (txt[k] != NULL) == r->has_s && (!r->has_s || strcmp(txt[k], r->s) == 0); break;
      case 4:
        ok = (rowan_column_type(st, k) == ROWAN_NULL) == (r->bin_len < 0) &&
             (r->bin_len < 0 ||
              (rowan_column_bytes(st, k) == r->bin_len &&
               (!r->bin_len || memcmp(rowan_column_blob(st, k), r->bin, (size_t)r->bin_len) == 0)));
        break;
      default:
        ok = (rowan_column_type(st, k) != ROWAN_NULL) == r->has_i &&
             (!r->has_i || rowan_column_int64(st, k) == r->i);
        break;
      }
      if (!ok)
        fail_msg("seed %llu: row (%s, %d), result column %d (column %d): got '%s'",
                 (unsigned long long)w->seed, who, h, k, c, txt[k] ? txt[k] : "NULL");
    }
    for (int k = np - 1; k >= 0; k--) { /* every conversion of every column */
      (void)rowan_column_double(st, k);
      (void)rowan_column_timestamp(st, k);
      (void)rowan_column_text(st, k);
      (void)rowan_column_blob(st, k);
      (void)rowan_column_int64(st, k);
    }
  }
  if (rnd(w, 4) == 0) { /* another statement reads the whole table through the tiny cache:
                            st's pointers stay valid (only st's own step may end them) */
    rowan_stmt *o = w->other;
    int rc;
    while ((rc = rowan_step(o)) == ROWAN_ROW) (void)rowan_column_text(o, 2);
    if (rc != ROWAN_DONE)
      fail_msg("seed %llu: the whole-table read: %d %s", (unsigned long long)w->seed, rc,
               rowan_errmsg(w->db));
    assert_int_equal(rowan_reset(o), ROWAN_OK);
  }
  for (int k = 0; k < np; k++) { /* the first pointers still hold what they held */
    if ((txt[k] == NULL) != (copy[k] == NULL) || (txt[k] && strcmp(txt[k], copy[k]) != 0))
      fail_msg("seed %llu: (%s, %d) column %d: the text pointer changed under later getters",
               (unsigned long long)w->seed, who, h, k);
    if (len[k] && memcmp(blob[k], bcopy[k], (size_t)len[k]) != 0)
      fail_msg("seed %llu: (%s, %d) column %d: the blob pointer changed under later getters",
               (unsigned long long)w->seed, who, h, k);
    free(copy[k]);
    free(bcopy[k]);
  }
}

static void point_read(world *w, mrow (*m)[NH]) {
  int s = (int)rnd(w, NST + 1), h = (int)rnd(w, NH + 2) - 1;
  static const int PT2[2] = {1, 4};
  bool narrow = rnd(w, 3) == 0;
  rowan_stmt *st = narrow ? w->pt2 : w->pt;
  assert_int_equal(rowan_bind_text(st, 1, station(s), -1), ROWAN_OK);
  assert_int_equal(rowan_bind_int64(st, 2, h), ROWAN_OK);
  check_no_row(w, st, "before the first step");
  int rc = rowan_step(st);
  bool live = s < NST && h >= 0 && h < NH && m[s][h].live;
  if (!live) {
    if (rc != ROWAN_DONE)
      fail_msg("seed %llu: (%s, %d): %d for a missing row", (unsigned long long)w->seed,
               station(s), h, rc);
  } else {
    if (rc != ROWAN_ROW)
      fail_msg("seed %llu: (%s, %d) not found: %d %s", (unsigned long long)w->seed, station(s),
               h, rc, rowan_errmsg(w->db));
    if (narrow) check_row(w, st, s, h, &m[s][h], PT2, 2);
    else check_row(w, st, s, h, &m[s][h], ALL, NC);
    if (rnd(w, 4) == 0) { /* a reset with the row pending */
      assert_int_equal(rowan_reset(st), ROWAN_OK);
      check_no_row(w, st, "after a reset");
      return;
    }
    assert_int_equal(rowan_step(st), ROWAN_DONE);
  }
  check_no_row(w, st, "after DONE");
  assert_int_equal(rowan_reset(st), ROWAN_OK);
}

static void in_read(world *w, mrow (*m)[NH]) {
  bool desc = rnd(w, 2);
  rowan_stmt *st = desc ? w->in_desc : w->in;
  int s = (int)rnd(w, NST + 1), base = (int)rnd(w, NH), hs[4];
  assert_int_equal(rowan_bind_text(st, 1, station(s), -1), ROWAN_OK);
  for (int k = 0; k < 4; k++) { /* near each other: several in one block */
    hs[k] = base + (int)rnd(w, 6) - 1;
    assert_int_equal(rowan_bind_int64(st, 2 + k, hs[k]), ROWAN_OK);
  }
  int stop = rnd(w, 3) == 0 ? (int)rnd(w, 3) : 99; /* reset after this many rows */
  int got = 0;
  for (int i = 0; i < NH + 2; i++) {
    int h = desc ? NH - i : i - 1;
    bool asked = false;
    for (int k = 0; k < 4; k++) asked |= hs[k] == h;
    if (!asked || s >= NST || h < 0 || h >= NH || !m[s][h].live) continue;
    if (got == stop) break;
    int rc = rowan_step(st);
    if (rc != ROWAN_ROW)
      fail_msg("seed %llu: IN (%s, %d%s) missing: %d %s", (unsigned long long)w->seed,
               station(s), h, desc ? " DESC" : "", rc, rowan_errmsg(w->db));
    if (rowan_column_int64(st, 1) != h)
      fail_msg("seed %llu: IN (%s): row %d where %d was due (%s)", (unsigned long long)w->seed,
               station(s), (int)rowan_column_int64(st, 1), h, desc ? "DESC" : "ASC");
    check_row(w, st, s, h, &m[s][h], ALL, NC);
    got++;
  }
  if (got != stop) {
    int rc = rowan_step(st);
    if (rc != ROWAN_DONE)
      fail_msg("seed %llu: IN (%s): a row too many (%lld): %d", (unsigned long long)w->seed,
               station(s), (long long)rowan_column_int64(st, 1), rc);
    check_no_row(w, st, "after DONE");
  }
  assert_int_equal(rowan_reset(st), ROWAN_OK);
  check_no_row(w, st, "after a reset");
}

/* Projections the range reads use (columns 0 ST .. 5 I), -1 ends one. */
static const int PROJ[6][NC + 1] = {
  {2, -1}, {3, 4, -1}, {5, 2, 0, -1}, {1, -1}, {4, 5, 3, 2, -1}, {0, 1, 2, 3, 4, 5, -1},
};
static const char *CNAME[NC] = {"ST", "H", "V", "S", "BIN", "I"};

/* A range read with LIMIT and OFFSET, forward or reverse, of one station's hours or of the
** whole table in key order, with a projection; sometimes reset after a few rows and run
** again with other values; compared row by row with the model. */
static void range_read(world *w, mrow (*m)[NH]) {
  int p = (int)rnd(w, 6), form = (int)rnd(w, 2), desc = (int)rnd(w, 2), np = 0;
  rowan_stmt **stp = &w->rq[p][form][desc];
  if (!*stp) {
    char sql[400];
    int n = snprintf(sql, sizeof sql, "SELECT ");
    for (; PROJ[p][np] >= 0; np++)
      n += snprintf(sql + n, sizeof sql - (size_t)n, "%s%s", np ? ", " : "", CNAME[PROJ[p][np]]);
    if (form == 0)
      snprintf(sql + n, sizeof sql - (size_t)n,
               " FROM T WHERE ST = ? AND H BETWEEN ? AND ? ORDER BY H %s LIMIT ? OFFSET ?",
               desc ? "DESC" : "ASC");
    else
      snprintf(sql + n, sizeof sql - (size_t)n, " FROM T ORDER BY ST %s, H %s LIMIT ? OFFSET ?",
               desc ? "DESC" : "ASC", desc ? "ASC" : "DESC");
    prep(w, sql, stp);
  }
  np = 0;
  while (PROJ[p][np] >= 0) np++;
  rowan_stmt *st = *stp;
  for (int run_no = 0; run_no < 2; run_no++) {
    int s = (int)rnd(w, NST + 1), lo = (int)rnd(w, NH + 4) - 2, hi = lo + (int)rnd(w, 30);
    int limit = (int)rnd(w, 40), offset = (int)rnd(w, 4) == 0 ? (int)rnd(w, 30) : 0;
    int a = 1;
    if (form == 0) {
      assert_int_equal(rowan_bind_text(st, a++, station(s), -1), ROWAN_OK);
      assert_int_equal(rowan_bind_int64(st, a++, lo), ROWAN_OK);
      assert_int_equal(rowan_bind_int64(st, a++, hi), ROWAN_OK);
    }
    assert_int_equal(rowan_bind_int64(st, a++, limit), ROWAN_OK);
    assert_int_equal(rowan_bind_int64(st, a++, offset), ROWAN_OK);
    /* the rows due, in order */
    static int due_s[NST * NH], due_h[NST * NH];
    int n = 0;
    for (int i = 0; i < NST; i++) {
      int si = form == 0 ? s : desc ? NST - 1 - i : i;
      if (form == 0 && i > 0) break;
      if (si >= NST) continue;
      for (int j = 0; j < NH; j++) {
        /* forward: H DESC in the key (ORDER BY H DESC, or ST ASC, H DESC) */
        bool key_order = form == 0 ? desc : !desc;
        int hj = key_order ? NH - 1 - j : j;
        if (form == 0 && (hj < lo || hj > hi)) continue;
        if (!m[si][hj].live) continue;
        due_s[n] = si;
        due_h[n++] = hj;
      }
    }
    int first = offset < n ? offset : n, last = first + limit < n ? first + limit : n;
    int stop = rnd(w, 4) == 0 ? first + (int)rnd(w, 3) : last; /* reset early */
    if (stop > last) stop = last;
    for (int i = first; i < stop; i++) {
      int rc = rowan_step(st);
      if (rc != ROWAN_ROW)
        fail_msg("seed %llu: range read %d/%d/%d (station %d, %d..%d, limit %d offset %d): row "
                 "%d of %d missing: %d %s", (unsigned long long)w->seed, p, form, desc, s, lo,
                 hi, limit, offset, i, last, rc, rowan_errmsg(w->db));
      check_row(w, st, due_s[i], due_h[i], &m[due_s[i]][due_h[i]], PROJ[p], np);
    }
    if (stop == last) {
      int rc = rowan_step(st);
      if (rc != ROWAN_DONE)
        fail_msg("seed %llu: range read %d/%d/%d (station %d, %d..%d, limit %d offset %d): "
                 "a row past the %d due: %d", (unsigned long long)w->seed, p, form, desc, s,
                 lo, hi, limit, offset, last - first, rc);
      check_no_row(w, st, "after DONE");
    }
    assert_int_equal(rowan_reset(st), ROWAN_OK);
  }
}

/* Model rows (s, h) in the order of ORDER BY S NULLS FIRST, ST, H. */
static mrow (*sort_m)[NH];
static int by_s(const void *a, const void *b) {
  int x = *(const int *)a, y = *(const int *)b;
  const mrow *p = &sort_m[x / NH][x % NH], *q = &sort_m[y / NH][y % NH];
  if (p->has_s != q->has_s) return p->has_s ? 1 : -1;
  int c = p->has_s ? strcmp(p->s, q->s) : 0;
  return c ? c : x - y; /* then ST, then H: the index order */
}

/* The whole table sorted by a value column (the sort keeps every row's values while the
** scan goes on through blocks evicted from the tiny cache), and counted per S (the
** aggregate keeps its group keys): against the model. */
static void sorted_read(world *w, mrow (*m)[NH]) {
  static int idx[NST * NH];
  int n = 0;
  for (int s = 0; s < NST; s++)
    for (int h = 0; h < NH; h++)
      if (m[s][h].live) idx[n++] = s * NH + h;
  sort_m = m;
  qsort(idx, (size_t)n, sizeof *idx, by_s);
  rowan_stmt *st = w->sorted;
  for (int i = 0; i < n; i++) {
    int rc = rowan_step(st);
    if (rc != ROWAN_ROW)
      fail_msg("seed %llu: sorted read: row %d of %d missing: %d %s", (unsigned long long)w->seed,
               i, n, rc, rowan_errmsg(w->db));
    int s = idx[i] / NH, h = idx[i] % NH;
    check_row(w, st, s, h, &m[s][h], ALL, NC);
  }
  if (rowan_step(st) != ROWAN_DONE)
    fail_msg("seed %llu: sorted read: a row past the %d due", (unsigned long long)w->seed, n);
  assert_int_equal(rowan_reset(st), ROWAN_OK);
  /* counts per S: each group's key and count; the groups in any order */
  st = w->grouped;
  int groups = 0, rows = 0, rc;
  while ((rc = rowan_step(st)) == ROWAN_ROW) {
    const char *key = rowan_column_text(st, 0);
    int64_t cnt = rowan_column_int64(st, 1), want = 0;
    for (int i = 0; i < n; i++) {
      const mrow *r = &m[idx[i] / NH][idx[i] % NH];
      want += key ? r->has_s && strcmp(r->s, key) == 0 : !r->has_s;
    }
    if (cnt != want || want == 0)
      fail_msg("seed %llu: GROUP BY S: group '%s' counted %lld, model %lld",
               (unsigned long long)w->seed, key ? key : "NULL", (long long)cnt, (long long)want);
    groups++;
    rows += (int)cnt;
  }
  if (rc != ROWAN_DONE || rows != n)
    fail_msg("seed %llu: GROUP BY S: %d groups of %d rows (model %d rows), then %d",
             (unsigned long long)w->seed, groups, rows, n, rc);
  assert_int_equal(rowan_reset(st), ROWAN_OK);
}

static void run(const char *name, size_t cache) {
  world w;
  world_open(&w, name, cache);
  uint64_t p0 = kv_sf_point_decodes();
  int rounds = (int)tu_scaled(80, 20);
  static mrow tx[NST][NH];
  for (int round = 0; round < rounds; round++) {
    for (int k = (int)rnd(&w, 60); k >= 0; k--) random_write(&w, w.m);
    switch (rnd(&w, 6)) {
    case 0: assert_int_equal(rowan_flush(w.db), ROWAN_OK); break;
    case 1: assert_int_equal(rowan_compact(w.db, 0), ROWAN_OK); break;
    case 2: assert_int_equal(rowan_compact(w.db, 1), ROWAN_OK); break;
    default: break;
    }
    bool in_tx = rnd(&w, 4) == 0;
    mrow(*m)[NH] = w.m;
    if (in_tx) { /* reads see the transaction's own writes */
      memcpy(tx, w.m, sizeof tx);
      m = tx;
      exec_ok(w.db, "BEGIN");
      for (int k = (int)rnd(&w, 10); k >= 0; k--) random_write(&w, m);
    }
    for (int i = 0; i < 60; i++) {
      uint64_t x = rnd(&w, 6);
      if (x < 3) point_read(&w, m);
      else if (x < 5) in_read(&w, m);
      else if (i % 20 == 0) sorted_read(&w, m);
      else range_read(&w, m);
    }
    if (in_tx) {
      if (rnd(&w, 2)) {
        exec_ok(w.db, "COMMIT");
        memcpy(w.m, tx, sizeof tx);
      } else {
        exec_ok(w.db, "ROLLBACK");
      }
    }
  }
  if (cache == 1) /* rows decoded alone from blocks the cache does not hold */
    assert_true(kv_sf_point_decodes() > p0);
  world_close(&w);
}

static void no_cache(void **state) {
  (void)state;
  run("no_cache", 1); /* KV_BLOCK_CACHE_OFF */
}

static void tiny_cache(void **state) {
  (void)state;
  run("tiny_cache", 4096);
}

static void default_cache(void **state) {
  (void)state;
  run("default_cache", 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(no_cache),
    cmocka_unit_test(tiny_cache),
    cmocka_unit_test(default_cache),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
