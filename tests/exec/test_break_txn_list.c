/*
** tests/exec/test_break_txn_list.c: the session's list of SELECTs reading the open
** transaction (exec_session.txn_readers, exec/txn.c), checked from the inside after every
** action of a random run of the exec API: statements of many kinds (range, index, sorted
** and aggregated SELECTs, EXPLAIN and EXPLAIN ANALYZE, an EXPLAIN ANALYZE SELECT that fails
** mid-run, CHECK INDEX, UPSERT SELECT, DELETE) stepped, reset, finalized and prepared anew
** across BEGIN / COMMIT / ROLLBACK statements. After each action: the list is well formed
** (prev / next agree, no cycle, no node twice, every node of this session, open and
** flagged rd_linked); a statement is on it exactly when its query is open, was opened while
** the current transaction was open, and is not a write; the list is empty outside a
** transaction; a ROLLBACK of a batch with operations marks exactly the listed statements
** x_lost, whose next exec_step is EXEC_ABORT. A statement finalized while listed must
** leave it (ASan would report the freed node otherwise). Seeded (tu_seed).
** Not here: the rows the statements give (tests/api/test_break_txn_random.c).
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

#include "exec/engine_int.h"
#include "kv/env/env_mem.h"
#include "kv/kv.h"
#include "testutil.h"

#define NST 12 /* statements alive at once */

static const char *const SQL[] = {
    "SELECT K, V, W FROM T WHERE K >= 3",
    "SELECT K, V, W FROM T ORDER BY K DESC",
    "SELECT /*+ INDEX(T IV) */ K, V, W FROM T WHERE V >= 1",
    "SELECT /*+ INDEX(T IVW) */ K, V, W FROM T WHERE V >= 2",
    "SELECT K, V, W FROM T ORDER BY W",
    "SELECT V, COUNT(*) FROM T GROUP BY V",
    "SELECT K FROM T WHERE K IN (1, 5, 9, 30)",
    "SELECT K, V FROM T WHERE K >= 0 LIMIT 4 OFFSET 1",
    "EXPLAIN SELECT K FROM T WHERE K > 4",
    "EXPLAIN ANALYZE SELECT K, V FROM T WHERE K < 20",
    "EXPLAIN ANALYZE SELECT K, 100 / (K - 7) FROM T",
    "CHECK INDEX IV ON T",
    "UPSERT INTO T SELECT K, V + 1, W FROM T WHERE K BETWEEN 2 AND 6",
    "DELETE FROM T WHERE K = 11",
    "UPSERT INTO T VALUES (11, 3, 'u11'), (40, 2, 'u40')",
    "EXPLAIN ANALYZE DELETE FROM T WHERE K = 40",
};
enum { NSQL = sizeof SQL / sizeof SQL[0] };

typedef struct tst {
  exec_stmt *st;     /* the statement */
  int q;             /* index in SQL */
  bool in_txn;       /* its query was opened while a transaction was open */
  uint64_t gen;      /* txn_no then */
  bool lost_due;     /* a ROLLBACK of written operations ended while it was listed */
} tst;

static kv_env *env;
static kv_db *db;
static exec_session *sess;
static exec_stmt *ctl[3]; /* BEGIN, COMMIT, ROLLBACK */
static tst T[NST];
static uint64_t seed, rng;
static int iter;
static uint64_t aborts, linked_seen;
static uint64_t txn_no; /* transactions ended so far (COMMIT or ROLLBACK that ran) */

static void fail_here(const char *what, int i) {
  fail_msg("seed %llu, iteration %d, statement %d (%s): %s", (unsigned long long)seed, iter, i,
           i >= 0 && T[i].st ? SQL[T[i].q] : "-", what);
}

/* A SELECT, or an EXPLAIN ANALYZE of one (its query stays open when it fails mid-run). */
static bool is_reader(int q) {
  return strncmp(SQL[q], "SELECT", 6) == 0 || strncmp(SQL[q], "EXPLAIN ANALYZE SELECT", 22) == 0;
}

static void prep(int i) {
  exec_error err;
  T[i].q = (int)tu_below(&rng, NSQL);
  T[i].in_txn = T[i].lost_due = false;
  if (exec_prepare(sess, SQL[T[i].q], strlen(SQL[T[i].q]), &T[i].st, NULL, &err) != EXEC_OK)
    fail_msg("prepare %s: %s", SQL[T[i].q], err.msg);
}

/* The invariants of the list (see the header). */
static void check(void) {
  int n = 0;
  exec_stmt *prev = NULL;
  for (exec_stmt *p = sess->txn_readers; p; p = p->rd_next) {
    if (++n > NST) fail_here("the list is longer than the statements (a cycle?)", -1);
    if (p->rd_prev != prev) fail_here("rd_prev does not match", -1);
    if (!p->rd_linked || p->s != sess || !p->x_open) fail_here("a node not linked or open", -1);
    int owner = -1;
    for (int i = 0; i < NST; i++)
      if (T[i].st == p) owner = i;
    if (owner < 0) fail_here("a node that is no live statement", -1);
    prev = p;
  }
  if (!sess->txn && n) fail_here("readers listed outside a transaction", -1);
  for (int i = 0; i < NST; i++) {
    exec_stmt *st = T[i].st;
    bool on = false;
    for (exec_stmt *p = sess->txn_readers; p; p = p->rd_next) on |= p == st;
    if (on != st->rd_linked) fail_here("rd_linked disagrees with the list", i);
    bool want = st->x_open && T[i].in_txn && sess->txn && T[i].gen == txn_no &&
                is_reader(T[i].q);
    if (on != want)
      fail_here(on ? "listed but should not be" : "open in the transaction, not listed", i);
    linked_seen += on;
  }
}

/* exec_step with the bookkeeping of when its query opened. */
static int step(int i) {
  tst *t = &T[i];
  if (t->st->state == ST_FAILED) { /* refused until a reset, aborted or not */
    exec_error e;
    if (exec_step(t->st, &e) != EXEC_MISUSE) fail_here("a failed statement stepped", i);
    t->lost_due = false;
    return EXEC_MISUSE;
  }
  bool was_open = t->st->x_open;
  bool txn = sess->txn != NULL;
  uint64_t gen = txn_no;
  exec_error err;
  int rc = exec_step(t->st, &err);
  if (!was_open && t->st->x_open) {
    t->in_txn = txn;
    t->gen = gen;
    t->lost_due = false;
  }
  if (rc == EXEC_ABORT) {
    if (!t->lost_due) fail_here("EXEC_ABORT not due", i);
    aborts++;
    t->lost_due = false;
  } else if (t->lost_due) {
    fail_here("no EXEC_ABORT after the ROLLBACK of its transaction's writes", i);
  }
  if (rc != EXEC_ROW && rc != EXEC_DONE && rc != EXEC_ABORT && rc != EXEC_MISUSE &&
      rc != EXEC_CONSTRAINT && rc != EXEC_ERROR)
    fail_here("unexpected code", i);
  return rc;
}

/* Run control statement c (0 BEGIN, 1 COMMIT, 2 ROLLBACK); a refused one is reset. */
static void control(int c) {
  bool txn = sess->txn != NULL;
  bool wrote = txn && kv_batch_count(sess->txn) > 0;
  bool listed[NST];
  for (int i = 0; i < NST; i++) listed[i] = T[i].st->rd_linked;
  exec_error err;
  exec_reset(ctl[c]);
  int rc = exec_step(ctl[c], &err);
  bool ok = c == 0 ? !txn : txn;
  if (ok && rc != EXEC_DONE) fail_msg("control %d: %d %s", c, rc, err.msg);
  if (!ok && rc == EXEC_DONE) fail_msg("control %d out of turn succeeded", c);
  if (ok && c == 2 && wrote)
    for (int i = 0; i < NST; i++) {
      if (listed[i] && !T[i].st->x_lost) fail_here("listed at ROLLBACK, not marked x_lost", i);
      if (listed[i]) T[i].lost_due = true;
    }
  if (ok && c != 0) { /* the transaction ended: its batch is freed, no reader may hold it */
    txn_no++;
    for (int i = 0; i < NST; i++) {
      const exec_query *x = &T[i].st->x;
      if (listed[i] && x->overlay && x->overlay != x->own_overlay)
        fail_here("still reads the ended transaction's batch", i);
    }
  }
}

static void txn_list(void **state) {
  (void)state;
  seed = tu_seed("txn_list");
  rng = seed;
  env = kv_env_mem_new(1700000000000LL);
  kv_options o;
  kv_options_init(&o);
  o.env = env;
  o.create_if_missing = true;
  o.sync_mode = KV_SYNC_OFF;
  assert_int_equal(kv_open("/db", &o, &db), KV_OK);
  exec_error err;
  assert_int_equal(exec_session_open(db, &sess, &err), EXEC_OK);
  static const char *const setup[] = {
      "CREATE TABLE T (K INTEGER NOT NULL PRIMARY KEY, V INTEGER, W VARCHAR)",
      "CREATE INDEX IV ON T (V)",
      "CREATE INDEX IVW ON T (V) INCLUDE (W)",
      "UPSERT INTO T VALUES (1, 1, 'a'), (2, 2, 'b'), (3, 3, 'c'), (5, 1, 'e'), (7, 2, 'g'), "
      "(9, 3, 'i'), (11, 1, 'k'), (13, 2, 'm'), (20, 3, 't'), (30, 1, 'z')",
  };
  for (int i = 0; i < 4; i++) {
    exec_stmt *st;
    assert_int_equal(exec_prepare(sess, setup[i], strlen(setup[i]), &st, NULL, &err), EXEC_OK);
    assert_int_equal(exec_step(st, &err), EXEC_DONE);
    exec_finalize(st);
  }
  static const char *const c[3] = {"BEGIN", "COMMIT", "ROLLBACK"};
  for (int i = 0; i < 3; i++)
    assert_int_equal(exec_prepare(sess, c[i], strlen(c[i]), &ctl[i], NULL, &err), EXEC_OK);
  for (int i = 0; i < NST; i++) prep(i);
  int iters = (int)tu_scaled(20000, 2000);
  for (iter = 0; iter < iters; iter++) {
    int r = (int)tu_below(&rng, 100), i = (int)tu_below(&rng, NST);
    if (r < 50) {
      int n = 1 + (int)tu_below(&rng, 3);
      for (int j = 0; j < n; j++) {
        int rc = step(i);
        if (rc == EXEC_DONE && T[i].st->state == ST_DONE) exec_reset(T[i].st); /* as rowan_step */
        if (rc != EXEC_ROW && rc != EXEC_DONE) {
          if (tu_below(&rng, 2)) exec_reset(T[i].st); /* else left failed, maybe listed */
          break;
        }
      }
    } else if (r < 62) {
      exec_reset(T[i].st);
      T[i].lost_due = false;
    } else if (r < 72) {
      exec_finalize(T[i].st); /* listed or not */
      T[i].st = NULL;
      prep(i);
    } else {
      int k = (int)tu_below(&rng, 8);
      control(k < 3 ? 0 : k < 5 ? 1 : k < 7 ? 2 : (int)tu_below(&rng, 3));
    }
    check();
  }
  fprintf(stderr, "[txn_list] %d actions, %llu listed statements seen, %llu aborts\n", iters,
          (unsigned long long)linked_seen, (unsigned long long)aborts);
  if (!aborts || !linked_seen) fail_msg("seed %llu: a weak run", (unsigned long long)seed);
  for (int i = 0; i < NST; i++) exec_finalize(T[i].st);
  for (int i = 0; i < 3; i++) exec_finalize(ctl[i]);
  assert_int_equal(exec_session_close(sess), EXEC_OK);
  kv_close(db);
  kv_env_free(env);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(txn_list)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
