/*
** tests/api/test_break_txn_random.c: many statements on one connection, opened, stepped,
** reset, finalized and re-run in random interleavings across BEGIN / COMMIT / ROLLBACK,
** writes (UPSERT VALUES, DELETE by key and through an index, UPSERT SELECT, their EXPLAIN
** ANALYZE forms, and a statement that fails midway), BEGIN / COMMIT / ROLLBACK by rowan_exec
** or by kept statements (and out of turn: refused), flushes, compactions, rowan_close
** refused while statements are open, a WAL fault on COMMIT and reopens. A model holds the
** committed rows and the open transaction's rows. Every run of a statement must give the
** rows of the state it read at its first step: the committed rows outside a transaction,
** plus the transaction's writes made before that step inside one (what the table shapes
** do; docs/SQL.md says only that a SELECT in the transaction sees its writes). A SELECT
** opened in the transaction and still between rows must fail its next step with
** ROWAN_ABORT after a ROLLBACK of a transaction that wrote something or a failed COMMIT,
** then ROWAN_MISUSE until reset; after COMMIT it goes on; no other statement is touched.
** Shapes: range, reverse (with or without LIMIT), IN list (either order), uncovered and covered index scans, ORDER BY ... LIMIT /
** OFFSET, a sort, GROUP BY, COUNT / SUM, a point lookup, a range and a covered index scan
** with ? parameters bound anew after each reset (plans kept across resets, each run with
** its transaction's state), EXPLAIN [ANALYZE] SELECT, CHECK INDEX, and EXPLAIN ANALYZE
** UPSERT SELECT / DELETE kept in a slot, writing at each run (the output lines of these
** last four, left between rows across a ROLLBACK, may go on or abort: not documented).
** Every shape, the uncovered index too, gives the rows as of its first step. Seeded (tu_seed); a failure prints the last actions.
** Not here: the same over several connections (one connection per store).
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
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

#define NK 40       /* keys 0..NK-1 */
#define NSLOT 10    /* statements alive at once */
#define ROWLEN 48   /* one result row as text */
#define MAXROWS 64  /* rows of one result at most (NK + slack) */
#define NLOG 40     /* actions kept for a failure report */

/* A table state: which keys hold a row and its values. */
typedef struct model {
  bool has[NK];    /* row K exists */
  int v[NK];       /* V of row K */
  char w[NK][24];  /* W of row K */
} model;

enum shape {
  SH_RANGE, SH_REVERSE, SH_IN, SH_IX_UNCOVERED, SH_IX_COVERED, SH_LIMIT, SH_SORT, SH_GROUP,
  SH_COUNT, SH_EXPLAIN, SH_CHECK, SH_P_POINT, SH_P_RANGE, SH_P_IX, SH_W_EXPLAIN, NSHAPE
};

enum status { S_IDLE, S_RUNNING, S_DONE, S_FAILED };

typedef struct slot {
  rowan_stmt *st;              /* the statement */
  int shape;                   /* enum shape */
  int a, b, in[5];             /* the constants of its SQL */
  char sql[256];               /* its SQL */
  int status;                  /* enum status */
  char exp[MAXROWS][ROWLEN];   /* the rows of the current run */
  bool used[MAXROWS];          /* unordered shapes: rows already given */
  int n_exp;                   /* rows in exp */
  int pos;                     /* rows given so far */
  bool ordered;                /* rows must come in exp order */
  bool opaque;                 /* EXPLAIN / CHECK INDEX: lines, not compared one by one */
  int txn;                     /* transaction id it was opened in, 0 outside */
  bool must_abort;             /* its transaction's writes were dropped while it ran */
  bool may_abort;              /* opaque shapes across such a drop: either is accepted */
} slot;

typedef struct world {
  kv_env *env;          /* the in-memory file system */
  rowan_db *db;         /* the connection */
  uint64_t rng;         /* test PRNG */
  uint64_t seed;        /* for messages */
  model cm;             /* committed rows */
  model tm;             /* the transaction's view (valid while in_txn) */
  bool in_txn;          /* BEGIN without COMMIT / ROLLBACK yet */
  bool txn_wrote;       /* the transaction's batch holds operations */
  int txn_id;           /* id of the current / last transaction */
  int version;          /* W suffix counter */
  slot s[NSLOT];        /* the statements */
  rowan_stmt *ctl[3];   /* BEGIN, COMMIT, ROLLBACK prepared once, stepped again and again */
  char log[NLOG][200];  /* the last actions */
  int n_log;            /* actions logged in all */
  int iter;             /* current iteration */
  uint64_t aborts;      /* ROWAN_ABORTs seen (a floor checks the test reached them) */
  uint64_t rows;        /* rows compared */
} world;

static world W;

static void note(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(W.log[W.n_log % NLOG], sizeof W.log[0], fmt, ap);
  va_end(ap);
  W.n_log++;
}

static void die(const char *fmt, ...) {
  char msg[600];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  int first = W.n_log > NLOG ? W.n_log - NLOG : 0;
  for (int i = first; i < W.n_log; i++) fprintf(stderr, "  [%d] %s\n", i, W.log[i % NLOG]);
  fail_msg("seed %llu, iteration %d: %s (db: %s)", (unsigned long long)W.seed, W.iter, msg,
           W.db ? rowan_errmsg(W.db) : "-");
}

static int below(int n) { return (int)tu_below(&W.rng, (uint64_t)n); }

static model *cur(void) { return W.in_txn ? &W.tm : &W.cm; }

/* ---- Statements and their expected rows ------------------------------------------------ */

static void make_sql(slot *sl) {
  sl->a = below(NK);
  sl->b = sl->a + below(NK);
  for (int i = 0; i < 5; i++) sl->in[i] = below(NK + 4); /* repeats, and keys past the end */
  int a = sl->a, b = sl->b;
  switch (sl->shape) {
    case SH_RANGE:
      snprintf(sl->sql, sizeof sl->sql, "SELECT K, V, W FROM T WHERE K BETWEEN %d AND %d", a, b);
      break;
    case SH_REVERSE: /* b % 3 == 0: with a LIMIT of b % 7 + 1 rows */
      snprintf(sl->sql, sizeof sl->sql, "SELECT K, V, W FROM T WHERE K >= %d ORDER BY K DESC%s",
               a, b % 3 ? "" : " LIMIT ");
      if (b % 3 == 0)
        snprintf(sl->sql + strlen(sl->sql), sizeof sl->sql - strlen(sl->sql), "%d", b % 7 + 1);
      break;
    case SH_IN: /* b % 2 == 0: in reverse key order */
      snprintf(sl->sql, sizeof sl->sql,
               "SELECT K, V, W FROM T WHERE K IN (%d, %d, %d, %d, %d)%s", sl->in[0], sl->in[1],
               sl->in[2], sl->in[3], sl->in[4], b % 2 ? "" : " ORDER BY K DESC");
      break;
    case SH_IX_UNCOVERED:
      snprintf(sl->sql, sizeof sl->sql,
               "SELECT /*+ INDEX(T IV) */ K, V, W FROM T WHERE V BETWEEN %d AND %d", a % 12,
               a % 12 + b % 8);
      break;
    case SH_IX_COVERED:
      snprintf(sl->sql, sizeof sl->sql, "SELECT /*+ INDEX(T IVW) */ K, V, W FROM T WHERE V >= %d",
               a % 12);
      break;
    case SH_LIMIT:
      snprintf(sl->sql, sizeof sl->sql,
               "SELECT K, V, W FROM T WHERE K >= %d ORDER BY K LIMIT %d OFFSET %d", a % 10,
               1 + b % 15, a % 4);
      break;
    case SH_SORT:
      snprintf(sl->sql, sizeof sl->sql, "SELECT K, V, W FROM T WHERE K <= %d ORDER BY W DESC, K",
               b);
      break;
    case SH_GROUP:
      snprintf(sl->sql, sizeof sl->sql, "SELECT V, COUNT(*) FROM T WHERE K >= %d GROUP BY V", a);
      break;
    case SH_COUNT:
      snprintf(sl->sql, sizeof sl->sql, "SELECT COUNT(*), SUM(V) FROM T WHERE K < %d", a);
      break;
    case SH_EXPLAIN:
      snprintf(sl->sql, sizeof sl->sql, "EXPLAIN %sSELECT K, V, W FROM T WHERE K BETWEEN %d AND %d",
               b % 2 ? "ANALYZE " : "", a, b);
      break;
    case SH_W_EXPLAIN: /* a write kept in a slot: each run writes (into the transaction) */
      if (b % 2)
        snprintf(sl->sql, sizeof sl->sql,
                 "EXPLAIN ANALYZE UPSERT INTO T SELECT K, V + 1, W FROM T WHERE K BETWEEN %d AND %d",
                 a, a + b % 4);
      else
        snprintf(sl->sql, sizeof sl->sql, "EXPLAIN ANALYZE DELETE FROM T WHERE K BETWEEN %d AND %d",
                 a, a + b % 3);
      break;
    case SH_CHECK:
      snprintf(sl->sql, sizeof sl->sql, "CHECK INDEX %s ON T", a % 2 ? "IV" : "IVW");
      break;
    case SH_P_POINT: snprintf(sl->sql, sizeof sl->sql, "SELECT K, V, W FROM T WHERE K = ?"); break;
    case SH_P_RANGE:
      snprintf(sl->sql, sizeof sl->sql, "SELECT K, V, W FROM T WHERE K BETWEEN ? AND ?");
      break;
    default:
      snprintf(sl->sql, sizeof sl->sql, "SELECT /*+ INDEX(T IVW) */ K, V, W FROM T WHERE V = ?");
      break;
  }
}

/* Parameter shapes: new values a, b bound before a run that starts after a reset or a
** prepare (the plan is kept across resets: rowan.h, rowan_reset). */
static void bind_slot(slot *sl) {
  if (sl->shape < SH_P_POINT || sl->shape > SH_P_IX) return;
  sl->a = below(NK + 2);
  sl->b = sl->a + below(10);
  int rc = rowan_bind_int64(sl->st, 1, sl->shape == SH_P_IX ? sl->a % 14 : sl->a);
  if (rc == ROWAN_OK && sl->shape == SH_P_RANGE) rc = rowan_bind_int64(sl->st, 2, sl->b);
  if (rc != ROWAN_OK) die("bind %s: %s", sl->sql, rowan_errstr(rc));
}

static void prepare_slot(slot *sl) {
  sl->shape = below(NSHAPE);
  make_sql(sl);
  int rc = rowan_prepare(W.db, sl->sql, -1, &sl->st, NULL);
  if (rc != ROWAN_OK || !sl->st) die("prepare %s: %s", sl->sql, rowan_errstr(rc));
  sl->status = S_IDLE;
}

static void add_exp(slot *sl, const char *fmt, ...) {
  if (sl->n_exp >= MAXROWS) die("too many expected rows");
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(sl->exp[sl->n_exp++], ROWLEN, fmt, ap);
  va_end(ap);
}

static void add_kvw(slot *sl, const model *m, int k) {
  add_exp(sl, "%d|%d|%s", k, m->v[k], m->w[k]);
}

/* The rows a run started now must give (from the state it reads: m). */
static void expect_rows(slot *sl, const model *m) {
  sl->n_exp = 0;
  sl->pos = 0;
  sl->ordered = true;
  sl->opaque = false;
  memset(sl->used, 0, sizeof sl->used);
  int a = sl->a, b = sl->b;
  switch (sl->shape) {
    case SH_RANGE:
      for (int k = a; k <= b && k < NK; k++)
        if (m->has[k]) add_kvw(sl, m, k);
      break;
    case SH_REVERSE: {
      int lim = b % 3 ? NK : b % 7 + 1;
      for (int k = NK - 1; k >= a && sl->n_exp < lim; k--)
        if (m->has[k]) add_kvw(sl, m, k);
      break;
    }
    case SH_IN:
      sl->ordered = b % 2 == 0;
      for (int j = 0; j < NK; j++) {
        int k = sl->ordered ? NK - 1 - j : j;
        bool in = false;
        for (int i = 0; i < 5; i++) in |= sl->in[i] == k;
        if (in && m->has[k]) add_kvw(sl, m, k);
      }
      break;
    case SH_IX_UNCOVERED: {
      sl->ordered = false;
      int lo = a % 12, hi = a % 12 + b % 8;
      for (int k = 0; k < NK; k++)
        if (m->has[k] && m->v[k] >= lo && m->v[k] <= hi) add_kvw(sl, m, k);
      break;
    }
    case SH_IX_COVERED:
      sl->ordered = false;
      for (int k = 0; k < NK; k++)
        if (m->has[k] && m->v[k] >= a % 12) add_kvw(sl, m, k);
      break;
    case SH_LIMIT: {
      int skip = a % 4, lim = 1 + b % 15;
      for (int k = a % 10; k < NK && lim > 0; k++) {
        if (!m->has[k]) continue;
        if (skip > 0) {
          skip--;
          continue;
        }
        add_kvw(sl, m, k);
        lim--;
      }
      break;
    }
    case SH_SORT: {
      int ks[NK], n = 0;
      for (int k = 0; k <= b && k < NK; k++)
        if (m->has[k]) ks[n++] = k;
      for (int i = 1; i < n; i++) /* insertion sort by W descending (W is unique) */
        for (int j = i; j > 0 && strcmp(m->w[ks[j - 1]], m->w[ks[j]]) < 0; j--) {
          int t = ks[j];
          ks[j] = ks[j - 1];
          ks[j - 1] = t;
        }
      for (int i = 0; i < n; i++) add_kvw(sl, m, ks[i]);
      break;
    }
    case SH_GROUP: {
      sl->ordered = false;
      int vs[NK], cnt[NK], n = 0;
      for (int k = a; k < NK; k++) {
        if (!m->has[k]) continue;
        int i = 0;
        while (i < n && vs[i] != m->v[k]) i++;
        if (i == n) {
          vs[n] = m->v[k];
          cnt[n++] = 0;
        }
        cnt[i]++;
      }
      for (int i = 0; i < n; i++) add_exp(sl, "%d|%d", vs[i], cnt[i]);
      break;
    }
    case SH_COUNT: {
      int c = 0;
      long sum = 0;
      for (int k = 0; k < a; k++)
        if (m->has[k]) {
          c++;
          sum += m->v[k];
        }
      if (c) add_exp(sl, "%d|%ld", c, sum);
      else add_exp(sl, "0|NULL");
      break;
    }
    case SH_EXPLAIN: sl->opaque = true; break;
    case SH_W_EXPLAIN: sl->opaque = true; break; /* its write: run_write_slot */
    case SH_P_POINT:
      if (a < NK && m->has[a]) add_kvw(sl, m, a);
      break;
    case SH_P_RANGE:
      for (int k = a; k <= b && k < NK; k++)
        if (m->has[k]) add_kvw(sl, m, k);
      break;
    case SH_P_IX:
      sl->ordered = false;
      for (int k = 0; k < NK; k++)
        if (m->has[k] && m->v[k] == a % 14) add_kvw(sl, m, k);
      break;
    default: {
      int c = 0;
      for (int k = 0; k < NK; k++) c += m->has[k];
      add_exp(sl, "DATA ROWS|%d", c);
      add_exp(sl, "INDEX ROWS|%d", c);
      add_exp(sl, "MISSING|0");
      add_exp(sl, "EXTRA|0");
      add_exp(sl, "MISMATCHED|0");
      sl->opaque = true; /* compared in order, but it may abort across a ROLLBACK */
      break;
    }
  }
}

static void row_text(rowan_stmt *st, char *buf, size_t cap) {
  size_t n = 0;
  buf[0] = 0;
  for (int c = 0; c < rowan_column_count(st) && n + 2 < cap; c++) {
    const char *t = (const char *)rowan_column_text(st, c);
    int r = snprintf(buf + n, cap - n, "%s%s", c ? "|" : "", t ? t : "NULL");
    if (r < 0 || (size_t)r >= cap - n) break; /* longer than any row of this test */
    n += (size_t)r;
  }
}

static void wrote(int rows);

/* A kept EXPLAIN ANALYZE UPSERT / DELETE starts a run: the model takes its write. */
static void run_write_slot(slot *sl) {
  model *m = cur();
  int n = 0, a = sl->a, b = sl->b;
  if (b % 2) {
    for (int k = a; k <= a + b % 4 && k < NK; k++)
      if (m->has[k]) {
        m->v[k]++;
        n++;
      }
  } else {
    for (int k = a; k <= a + b % 3 && k < NK; k++) {
      n += m->has[k];
      m->has[k] = false;
    }
  }
  wrote(n);
}

/* One rowan_step of slot i, checked against the model. Returns the code. */
static int step_slot(int i) {
  slot *sl = &W.s[i];
  if (sl->status == S_IDLE || sl->status == S_DONE) {
    if (sl->status == S_IDLE) bind_slot(sl);
    expect_rows(sl, cur());
    sl->txn = W.in_txn ? W.txn_id : 0;
    sl->must_abort = sl->may_abort = false;
    sl->status = S_RUNNING;
    note("slot %d starts (txn %d, %d rows): %s", i, sl->txn, sl->n_exp, sl->sql);
    if (sl->shape == SH_W_EXPLAIN) run_write_slot(sl);
  }
  int rc = rowan_step(sl->st);
  if (sl->status == S_FAILED) {
    if (rc != ROWAN_MISUSE) die("slot %d failed before: step gave %s", i, rowan_errstr(rc));
    return rc;
  }
  if (rc == ROWAN_ABORT) {
    if (!sl->must_abort && !sl->may_abort) die("slot %d (%s): ROWAN_ABORT not due", i, sl->sql);
    if (!strstr(rowan_errmsg(W.db), "rolled back")) die("slot %d: abort message", i);
    W.aborts++;
    sl->status = S_FAILED;
    note("slot %d aborted", i);
    return rc;
  }
  if (sl->must_abort) die("slot %d (%s): gave %s, not ROWAN_ABORT", i, sl->sql, rowan_errstr(rc));
  if (rc == ROWAN_DONE) {
    if (!(sl->opaque && sl->n_exp == 0) && sl->pos != sl->n_exp)
      die("slot %d (%s): DONE after %d rows, want %d", i, sl->sql, sl->pos, sl->n_exp);
    if (sl->opaque && sl->n_exp == 0 && sl->pos == 0) die("slot %d: no EXPLAIN lines", i);
    sl->status = S_DONE;
    return rc;
  }
  if (rc != ROWAN_ROW) die("slot %d (%s): step gave %s", i, sl->sql, rowan_errstr(rc));
  if (sl->pos >= MAXROWS * 2) die("slot %d: too many rows", i);
  char got[ROWLEN * 2];
  row_text(sl->st, got, sizeof got);
  if (!(sl->opaque && sl->n_exp == 0)) {
    if (sl->pos >= sl->n_exp) die("slot %d (%s): extra row %s", i, sl->sql, got);
    if (sl->ordered) {
      if (strcmp(got, sl->exp[sl->pos]) != 0)
        die("slot %d (%s): row %d is %s, want %s", i, sl->sql, sl->pos, got, sl->exp[sl->pos]);
    } else {
      int j = 0;
      while (j < sl->n_exp && (sl->used[j] || strcmp(got, sl->exp[j]) != 0)) j++;
      if (j == sl->n_exp) die("slot %d (%s): row %s not expected", i, sl->sql, got);
      sl->used[j] = true;
    }
    W.rows++;
  }
  sl->pos++;
  return rc;
}

/* ---- Actions ----------------------------------------------------------------------------- */

/* The transaction ends: lost = its writes are dropped (ROLLBACK, failed COMMIT). */
static void end_txn(bool lost) {
  for (int i = 0; i < NSLOT; i++) {
    slot *sl = &W.s[i];
    if (sl->status != S_RUNNING || sl->txn != W.txn_id) continue;
    if (lost && W.txn_wrote) {
      if (sl->opaque) sl->may_abort = true;
      else sl->must_abort = true;
    }
  }
  W.in_txn = false;
}

/* A write of the transaction (or outside one) changed rows while readers of it ran. */
static void wrote(int rows) {
  if (rows <= 0) return;
  if (!W.in_txn) {
    return;
  }
  W.txn_wrote = true;
}

static void run_sql(const char *sql, int want) {
  int rc = rowan_exec(W.db, sql, NULL, NULL);
  note("%s -> %s", sql, rowan_errstr(rc));
  if (rc != want) die("%s gave %s, want %s", sql, rowan_errstr(rc), rowan_errstr(want));
}

/* Run BEGIN (0), COMMIT (1) or ROLLBACK (2) by rowan_exec or by its kept statement (a step
** after ROWAN_DONE runs it again; sometimes reset first). */
static void control(int which, int want) {
  static const char *const text[3] = {"BEGIN", "COMMIT", "ROLLBACK"};
  if (below(2)) {
    run_sql(text[which], want);
    return;
  }
  rowan_stmt *st = W.ctl[which];
  if (below(3) == 0 && rowan_reset(st) != ROWAN_OK) die("reset %s", text[which]);
  int rc = rowan_step(st);
  if (rc == ROWAN_DONE) rc = ROWAN_OK;
  note("%s (kept statement) -> %s", text[which], rowan_errstr(rc));
  if (rc != want) die("%s gave %s, want %s", text[which], rowan_errstr(rc), rowan_errstr(want));
  /* failed: reset before the next step; it returns the failure, a later reset ROWAN_OK */
  if (rc != ROWAN_OK && rowan_reset(st) != rc) die("reset %s after %s", text[which],
                                                   rowan_errstr(rc));
}

static void do_write(void) {
  model *m = cur();
  char sql[256];
  int kind = below(10) - 4; /* half of the writes are UPSERT VALUES, so the table stays full */
  if (kind < 0) kind = 0;
  int a = below(NK), b = a + below(kind == 1 ? 3 : 8);
  bool explain = below(4) == 0;
  const char *ex = explain ? "EXPLAIN ANALYZE " : "";
  int n = 0;
  switch (kind) {
    case 0: { /* UPSERT VALUES, 1-3 rows */
      int rows = 1 + below(3);
      size_t len = (size_t)snprintf(sql, sizeof sql, "UPSERT INTO T VALUES ");
      for (int r = 0; r < rows; r++) {
        int k = below(NK), v = below(12);
        char w[24];
        snprintf(w, sizeof w, "w%u_%u", (unsigned)k, (unsigned)(++W.version % 100000));
        len += (size_t)snprintf(sql + len, sizeof sql - len, "%s(%d, %d, '%s')", r ? ", " : "",
                                k, v, w);
        m->has[k] = true;
        m->v[k] = v;
        snprintf(m->w[k], sizeof m->w[k], "%s", w);
      }
      run_sql(sql, ROWAN_OK);
      n = rows;
      break;
    }
    case 1: /* DELETE by key range */
      snprintf(sql, sizeof sql, "%sDELETE FROM T WHERE K BETWEEN %d AND %d", ex, a, b);
      for (int k = a; k <= b && k < NK; k++) {
        n += m->has[k];
        m->has[k] = false;
      }
      run_sql(sql, ROWAN_OK);
      break;
    case 2: { /* DELETE through the index on V (the planner's choice, or forced) */
      int v = below(12);
      snprintf(sql, sizeof sql, "%sDELETE %sFROM T WHERE V = %d", ex,
               below(2) ? "/*+ INDEX(T IV) */ " : "", v);
      for (int k = 0; k < NK; k++)
        if (m->has[k] && m->v[k] == v) {
          m->has[k] = false;
          n++;
        }
      run_sql(sql, ROWAN_OK);
      break;
    }
    case 3: /* UPSERT SELECT over a key range, or through the index on the column it sets */
      if (below(2)) {
        snprintf(sql, sizeof sql,
                 "%sUPSERT INTO T SELECT K, V + 1, W FROM T WHERE K BETWEEN %d AND %d", ex, a, b);
        for (int k = a; k <= b && k < NK; k++)
          if (m->has[k]) {
            m->v[k]++;
            n++;
          }
      } else {
        int v = below(12);
        snprintf(sql, sizeof sql,
                 "%sUPSERT INTO T SELECT /*+ INDEX(T IV) */ K, V + 1, W FROM T WHERE V = %d", ex,
                 v);
        for (int k = 0; k < NK; k++)
          if (m->has[k] && m->v[k] == v) {
            m->v[k]++;
            n++;
          }
      }
      run_sql(sql, ROWAN_OK);
      break;
    case 4: { /* fails at the first row with K >= c, after writing the rows before it */
      int c = a + below(b - a + 1);
      bool fails = false;
      for (int k = c; k <= b && k < NK; k++) fails |= m->has[k];
      snprintf(sql, sizeof sql,
               "UPSERT INTO T SELECT K, V, CASE WHEN K >= %d THEN W || 'zzzzzzzzzzzz' ELSE W END "
               "FROM T WHERE K BETWEEN %d AND %d",
               c, a, b);
      if (!fails)
        for (int k = a; k < c && k < NK; k++) n += m->has[k]; /* rewritten, same values */
      run_sql(sql, fails ? ROWAN_CONSTRAINT : ROWAN_OK);
      break;
    }
    default: { /* a row too long for W: fails before writing */
      snprintf(sql, sizeof sql, "UPSERT INTO T VALUES (%d, 1, 'wwwwwwwwwwwwwwwwwwww')", a % NK);
      run_sql(sql, ROWAN_CONSTRAINT);
      break;
    }
  }
  wrote(n);
}

static void finalize_all(void) {
  for (int i = 0; i < NSLOT; i++) {
    if (W.s[i].st && rowan_finalize(W.s[i].st) != ROWAN_OK) die("finalize %d", i);
    W.s[i].st = NULL;
  }
  for (int i = 0; i < 3; i++) {
    if (rowan_finalize(W.ctl[i]) != ROWAN_OK) die("finalize control %d", i);
    W.ctl[i] = NULL;
  }
}

static void open_db(void) {
  rowan_options o;
  rowan_options_init(&o);
  o.kv_env = W.env;
  o.sync_mode = ROWAN_SYNC_NORMAL; /* each commit writes its WAL record at once */
  o.block_cache_size = 64u << 10;
  o.memstore_size = 8u << 10;
  W.db = NULL;
  int rc = rowan_open("/db", &o, &W.db);
  if (rc != ROWAN_OK) die("open: %s", rowan_errstr(rc));
  static const char *const text[3] = {"BEGIN", "COMMIT", "ROLLBACK"};
  for (int i = 0; i < 3; i++)
    if (rowan_prepare(W.db, text[i], -1, &W.ctl[i], NULL) != ROWAN_OK) die("prepare %s", text[i]);
}

/* Finalize everything, close (the open transaction is rolled back), reopen, prepare anew. */
static void reopen(bool after_fault) {
  finalize_all();
  int rc = rowan_close(W.db);
  W.db = NULL;
  if (rc != ROWAN_OK && !(after_fault && rc == ROWAN_IOERR)) die("close: %s", rowan_errstr(rc));
  if (W.in_txn) end_txn(true);
  note("reopen");
  open_db();
  for (int i = 0; i < NSLOT; i++) prepare_slot(&W.s[i]);
}

/* COMMIT whose WAL write fails: readers of the transaction abort, the others go on to the
** end with their rows; then the store refuses writes until reopened. */
static void fault_commit(void) {
  kv_env_mem_fail(W.env, KV_FAULT_APPEND, 1, "wal-", KV_FAULT_EIO, 0);
  int rc = rowan_exec(W.db, "COMMIT", NULL, NULL);
  kv_env_mem_clear_faults(W.env);
  note("COMMIT with a WAL fault -> %s", rowan_errstr(rc));
  if (rc != ROWAN_IOERR) die("COMMIT with a WAL fault gave %s", rowan_errstr(rc));
  end_txn(true);
  for (int i = 0; i < NSLOT; i++) {
    int n = 0;
    while (W.s[i].status == S_RUNNING && n++ < MAXROWS * 2) step_slot(i);
  }
  reopen(true);
}

static void one_action(void) {
  int r = below(100);
  if (r < 45) {
    int i = below(NSLOT), n = 1 + below(4);
    for (int j = 0; j < n; j++) step_slot(i);
  } else if (r < 52) {
    int i = below(NSLOT);
    /* as sqlite3_reset: the code of a failed last step (ROWAN_ABORT is a slot's only one) */
    int want = W.s[i].status == S_FAILED ? ROWAN_ABORT : ROWAN_OK, got = rowan_reset(W.s[i].st);
    if (got != want)
      die("slot %d reset gave %s, want %s", i, rowan_errstr(got), rowan_errstr(want));
    W.s[i].status = S_IDLE;
    note("slot %d reset", i);
  } else if (r < 56) {
    int i = below(NSLOT);
    if (rowan_finalize(W.s[i].st) != ROWAN_OK) die("finalize");
    prepare_slot(&W.s[i]);
    note("slot %d finalized, now %s", i, W.s[i].sql);
  } else if (r < 70) {
    do_write();
  } else if (r < 80) {
    if (below(8) == 0) { /* out of turn: refused, nothing changes */
      if (W.in_txn) control(0, ROWAN_ERROR);
      else control(1 + below(2), ROWAN_ERROR);
    } else if (!W.in_txn) {
      control(0, ROWAN_OK);
      W.tm = W.cm;
      W.in_txn = true;
      W.txn_wrote = false;
      W.txn_id++;
    } else if (below(2)) {
      control(1, ROWAN_OK);
      W.cm = W.tm;
      end_txn(false);
    } else {
      control(2, ROWAN_OK);
      end_txn(true);
    }
  } else if (r < 84) {
    int k = below(3);
    int rc = k == 0 ? rowan_flush(W.db) : rowan_compact(W.db, k == 2);
    note("%s -> %s", k == 0 ? "flush" : k == 1 ? "compact" : "major compact", rowan_errstr(rc));
    if (rc != ROWAN_OK) die("flush/compact gave %s", rowan_errstr(rc));
  } else if (r < 86) {
    if (rowan_close(W.db) != ROWAN_MISUSE) die("rowan_close with open statements");
    note("close refused");
  } else if (r < 87) {
    if (W.in_txn && W.txn_wrote) {
      fault_commit();
    } else if (W.in_txn) { /* nothing to write: the COMMIT writes no WAL record, aborts nothing */
      kv_env_mem_fail(W.env, KV_FAULT_APPEND, 1, "wal-", KV_FAULT_EIO, 0);
      int rc = rowan_exec(W.db, "COMMIT", NULL, NULL);
      kv_env_mem_clear_faults(W.env);
      note("COMMIT of nothing with a WAL fault armed -> %s", rowan_errstr(rc));
      if (rc != ROWAN_OK) die("COMMIT of a transaction that wrote nothing: %s", rowan_errstr(rc));
      W.cm = W.tm;
      end_txn(false);
    }
  } else if (r < 88) {
    reopen(false);
  } else {
    int i = below(NSLOT), n = 0;
    if (W.s[i].status == S_FAILED) {
      step_slot(i);
      return;
    }
    if (W.s[i].status != S_RUNNING) step_slot(i);
    while (W.s[i].status == S_RUNNING && n++ < MAXROWS * 2) step_slot(i);
  }
}

static void txn_random(void **state) {
  (void)state;
  memset(&W, 0, sizeof W);
  W.seed = tu_seed("txn_random");
  W.rng = W.seed;
  W.env = kv_env_mem_new(1700000000000LL);
  open_db();
  exec_ok(W.db, "CREATE TABLE T (K INTEGER NOT NULL PRIMARY KEY, V INTEGER, W VARCHAR(12)) "
                "BLOCKSIZE = 512");
  exec_ok(W.db, "CREATE INDEX IV ON T (V)");
  exec_ok(W.db, "CREATE INDEX IVW ON T (V) INCLUDE (W)");
  for (int k = 0; k < NK; k += 2) {
    char sql[96];
    W.cm.has[k] = true;
    W.cm.v[k] = k % 12;
    snprintf(W.cm.w[k], sizeof W.cm.w[k], "c%d", k);
    snprintf(sql, sizeof sql, "UPSERT INTO T VALUES (%d, %d, 'c%d')", k, k % 12, k);
    exec_ok(W.db, sql);
  }
  for (int i = 0; i < NSLOT; i++) prepare_slot(&W.s[i]);
  int iters = (int)tu_scaled(16000, 1000);
  for (W.iter = 0; W.iter < iters; W.iter++) one_action();
  /* the end: every statement steps to its end or its abort, then the close */
  if (W.in_txn) {
    run_sql("ROLLBACK", ROWAN_OK);
    end_txn(true);
  }
  for (int i = 0; i < NSLOT; i++) {
    int n = 0;
    while (W.s[i].status == S_RUNNING && n++ < MAXROWS * 2) step_slot(i);
  }
  fprintf(stderr, "[txn_random] %d actions, %llu rows compared, %llu aborts\n", iters,
          (unsigned long long)W.rows, (unsigned long long)W.aborts);
  if (W.aborts == 0 || W.rows < (uint64_t)iters / 2) die("too few aborts or rows: a weak run");
  finalize_all();
  assert_int_equal(rowan_close(W.db), ROWAN_OK);
  kv_env_free(W.env);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(txn_random)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
