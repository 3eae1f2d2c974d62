/*
** tests/kv/test_follow.c: read-only opens beside a writer and kv_refresh (kv/db/db_follow.c),
** in one process on the in-memory env, where the writer's moves can be put at exact points
** of the reader's catch-up (kv_follow_test_hook). Checked against the multi-row
** transactions of tests/tu_txn.h: a reader takes no LOCK and writes nothing; it sees every
** commit made before its open and none half; it keeps reading the files it opened after
** the writer's compaction deletes them; a refresh sees the rest; a record cut short at the
** end of the log is neither shown, nor truncated, nor reported; a store file or segment
** deleted between the reader's MANIFEST read and its open makes it read the MANIFEST again;
** a table created (written to or not), a table dropped or a bulk load committed after that
** read is not shown half, nor anything committed after it, until the next refresh. Two processes: tests/kv/test_follow_fork.c.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "kv/db/db_impl.h"
#include "kv/env/env_mem.h"
#include "kv/kv.h"
#include "tu_txn.h"

static kv_db *open_writer(kv_env *env) {
  kv_options o;
  kv_options_init(&o);
  o.env = env;
  o.create_if_missing = true;
  o.memstore_flush_size = 16 << 10;
  o.compaction_trigger = 100;
  kv_db *db = NULL;
  int rc = kv_open("/db", &o, &db);
  if (rc) fprintf(stderr, "writer open: %s\n", kv_errmsg());
  assert_int_equal(rc, KV_OK);
  return db;
}

static kv_db *open_reader(kv_env *env) {
  kv_options o;
  kv_options_init(&o);
  o.env = env;
  o.read_only = true;
  kv_db *db = NULL;
  int rc = kv_open("/db", &o, &db);
  if (rc) fprintf(stderr, "reader open: %s\n", kv_errmsg());
  assert_int_equal(rc, KV_OK);
  return db;
}

static void commit_range(kv_db *w, uint32_t fa, uint32_t fb, int from, int to) {
  kv_batch *b = kv_batch_new();
  for (int i = from; i < to; i++) assert_int_equal(tu_txn_commit(w, b, fa, fb, i), KV_OK);
  kv_batch_free(b);
}

static void test_reader_beside_writer(void **state) {
  (void)state;
  kv_env *env = kv_env_mem_new(1);
  kv_db *w = open_writer(env);
  uint32_t fa, fb;
  tu_txn_table(w, &fa, &fb);
  commit_range(w, fa, fb, 0, 60);
  assert_int_equal(kv_flush(w, NULL), KV_OK);
  commit_range(w, fa, fb, 60, 80); /* some in store files, some only in the log */
  kv_db *r = open_reader(env);     /* the writer holds the LOCK: no matter */
  assert_int_equal(tu_txn_check(r, "reader at open"), 80);
  /* a second writer is still refused */
  kv_options o;
  kv_options_init(&o);
  o.env = env;
  kv_db *w2 = NULL;
  assert_int_equal(kv_open("/db", &o, &w2), KV_ERR_LOCKED);
  /* the reader refuses writes */
  kv_batch *b = kv_batch_new();
  tu_txn_batch(b, fa, fb, 999);
  assert_int_equal(kv_commit(r, b, NULL), KV_ERR_READONLY);
  assert_int_equal(kv_flush(r, NULL), KV_ERR_READONLY);
  kv_batch_free(b);
  /* the writer moves on: more commits, a flush and a major compaction that deletes every
     store file the reader opened */
  commit_range(w, fa, fb, 80, 150);
  assert_int_equal(kv_compact(w, NULL, true), KV_OK);
  commit_range(w, fa, fb, 150, 170);
  assert_int_equal(tu_txn_check(w, "writer"), 170);
  assert_int_equal(tu_txn_check(r, "reader after the compaction"), 80); /* as of its open */
  assert_int_equal(kv_refresh(r), KV_OK);
  assert_int_equal(tu_txn_check(r, "reader after refresh"), 170);
  /* again, with the writer flushing between refreshes (memstores rebuilt from the old) */
  for (int round = 0; round < 5; round++) {
    commit_range(w, fa, fb, 170 + round * 30, 185 + round * 30);
    if (round % 2) assert_int_equal(kv_flush(w, NULL), KV_OK);
    commit_range(w, fa, fb, 185 + round * 30, 200 + round * 30);
    assert_int_equal(kv_refresh(r), KV_OK);
    assert_int_equal(tu_txn_check(r, "reader, round"), 200 + round * 30);
  }
  /* a refresh with nothing new changes nothing */
  assert_int_equal(kv_refresh(r), KV_OK);
  assert_int_equal(tu_txn_check(r, "reader, nothing new"), 320);
  assert_int_equal(kv_close(r), KV_OK);
  assert_int_equal(kv_close(w), KV_OK);
  /* the writer's store is intact after the reader */
  w = open_writer(env);
  assert_int_equal(tu_txn_check(w, "writer reopened"), 320);
  assert_int_equal(kv_close(w), KV_OK);
  kv_env_free(env);
}

/* A scan opened before a refresh keeps its view; one opened after sees the new one. */
static void test_open_scan_keeps_view(void **state) {
  (void)state;
  kv_env *env = kv_env_mem_new(1);
  kv_db *w = open_writer(env);
  uint32_t fa, fb;
  tu_txn_table(w, &fa, &fb);
  commit_range(w, fa, fb, 0, 40);
  kv_db *r = open_reader(env);
  kv_scan_options o;
  memset(&o, 0, sizeof o);
  o.family_ids = &fa;
  o.n_families = 1;
  kv_scan *s;
  assert_int_equal(kv_scan_open(r, &o, &s), KV_OK);
  commit_range(w, fa, fb, 40, 90);
  assert_int_equal(kv_compact(w, NULL, true), KV_OK);
  assert_int_equal(kv_refresh(r), KV_OK);
  kv_row row;
  int n = 0;
  while (kv_scan_next(s, &row) == KV_OK) n++;
  assert_int_equal(n, 40 * TU_TXN_ROWS + 1);
  kv_scan_close(s);
  assert_int_equal(tu_txn_check(r, "after refresh"), 90);
  /* a held snapshot refuses the refresh */
  uint64_t snap;
  assert_int_equal(kv_snapshot_acquire(r, &snap), KV_OK);
  assert_int_equal(kv_refresh(r), KV_MISUSE);
  assert_non_null(strstr(kv_errmsg(), "snapshot"));
  kv_snapshot_release(r, snap);
  assert_int_equal(kv_refresh(r), KV_OK);
  /* on the writer, a refresh has nothing to do */
  assert_int_equal(kv_refresh(w), KV_OK);
  assert_int_equal(kv_refresh(NULL), KV_MISUSE);
  kv_close(r);
  kv_close(w);
  kv_env_free(env);
}

/* The end of the newest segment cut short (a commit being written, or a crash in one): not
** shown, not truncated, not reported as dropped. */
static void test_torn_tail_left_alone(void **state) {
  (void)state;
  kv_env *env = kv_env_mem_new(1);
  kv_options o;
  kv_options_init(&o);
  o.env = env;
  o.create_if_missing = true;
  o.keep_log_on_close = true;
  kv_db *w = NULL;
  assert_int_equal(kv_open("/db", &o, &w), KV_OK);
  uint32_t fa, fb;
  tu_txn_table(w, &fa, &fb);
  commit_range(w, fa, fb, 0, 10);
  kv_wal_stats ws;
  assert_int_equal(kv_wal_get_stats(w, &ws), KV_OK);
  char seg[512];
  /* the current segment is the newest: the one holding the commits */
  uint64_t cur = 0;
  for (uint64_t n = 1; n < 64; n++) {
    kv_wal_segment_path(w, n, seg, sizeof seg);
    if (env->exists(env, seg)) cur = n;
  }
  assert_true(cur > 0);
  kv_wal_segment_path(w, cur, seg, sizeof seg);
  /* txn 10's record cut in the middle, as a writer in the middle of its write(2) (or a crash
     there) leaves it */
  int64_t s0 = kv_env_mem_file_size(env, seg);
  kv_batch *b = kv_batch_new();
  assert_int_equal(tu_txn_commit(w, b, fa, fb, 10), KV_OK);
  int64_t s1 = kv_env_mem_file_size(env, seg);
  assert_true(s1 > s0);
  assert_int_equal(kv_close(w), KV_OK);
  kv_file *f;
  assert_int_equal(env->open(env, seg, KV_OPEN_WRITE, &f), KV_OK);
  assert_int_equal(env->truncate(f, (uint64_t)(s0 + (s1 - s0) / 2)), KV_OK);
  env->close(f);
  int64_t size = kv_env_mem_file_size(env, seg);
  kv_db *r = open_reader(env);
  assert_int_equal(tu_txn_check(r, "reader"), 10);
  assert_int_equal(kv_wal_get_stats(r, &ws), KV_OK);
  assert_int_equal(ws.dropped_bytes, 0);
  assert_int_equal(kv_refresh(r), KV_OK);
  assert_int_equal(tu_txn_check(r, "reader refreshed"), 10);
  assert_int_equal(kv_env_mem_file_size(env, seg), size); /* never truncated */
  kv_close(r);
  kv_batch_free(b);
  /* the writer's reopen drops it, as ever */
  assert_int_equal(kv_open("/db", &o, &w), KV_OK);
  assert_int_equal(kv_wal_get_stats(w, &ws), KV_OK);
  assert_true(ws.dropped_bytes > 0);
  assert_int_equal(tu_txn_check(w, "writer reopened"), 10);
  kv_close(w);
  kv_env_free(env);
}

/* ---- the writer moves between the reader's MANIFEST read and its opens ---------------- */

typedef struct mover {
  kv_db *w;           /* the writer */
  uint32_t fa, fb;    /* its families */
  int next;           /* next txn to commit */
  int what;           /* which move */
  int fired;          /* moves made */
} mover;

enum { MOVE_COMPACT, MOVE_NEW_FAMILY, MOVE_NEW_TABLE, MOVE_BULK, MOVE_DROP };

static void move(void *ctx, int attempt) {
  mover *m = ctx;
  if (attempt != 0 || m->fired++) return; /* once, in the first attempt */
  kv_batch *b = kv_batch_new();
  switch (m->what) {
    case MOVE_COMPACT: /* deletes the files and segments the read MANIFEST names */
      commit_range(m->w, m->fa, m->fb, m->next, m->next + 30);
      m->next += 30;
      assert_int_equal(kv_compact(m->w, NULL, true), KV_OK);
      commit_range(m->w, m->fa, m->fb, m->next, m->next + 5);
      m->next += 5;
      break;
    case MOVE_NEW_FAMILY: { /* a table created, written to, then txns of t */
      kv_family_options f = {.name = "x"};
      assert_int_equal(kv_create_table(m->w, "u", &f, 1), KV_OK);
      uint32_t fx;
      assert_int_equal(kv_family_id(m->w, "u", "x", &fx), KV_OK);
      kv_batch_clear(b);
      assert_int_equal(kv_batch_put(b, fx, "r", 1, "q", 1, KV_TS_NOW, "x", 1), KV_OK);
      assert_int_equal(kv_commit(m->w, b, NULL), KV_OK);
      commit_range(m->w, m->fa, m->fb, m->next, m->next + 3);
      m->next += 3;
      break;
    }
    case MOVE_NEW_TABLE: { /* a table created, then txns of t only (as SQL's CREATE TABLE
                              writes its catalog row after the kv table) */
      kv_family_options f = {.name = "x"};
      assert_int_equal(kv_create_table(m->w, "u", &f, 1), KV_OK);
      commit_range(m->w, m->fa, m->fb, m->next, m->next + 3);
      m->next += 3;
      break;
    }
    case MOVE_BULK: /* a bulk load (no WAL record), then txns through the log */
      assert_int_equal(tu_txn_bulk(m->w, m->fa, m->fb, m->next), KV_OK);
      m->next++;
      commit_range(m->w, m->fa, m->fb, m->next, m->next + 3);
      m->next += 3;
      break;
    case MOVE_DROP:
      assert_int_equal(kv_drop_table(m->w, "t"), KV_OK);
      break;
  }
  kv_batch_free(b);
}

static void test_writer_moves_during_catch_up(void **state) {
  (void)state;
  for (int what = MOVE_COMPACT; what <= MOVE_DROP; what++) {
    kv_env *env = kv_env_mem_new(1);
    mover m = {open_writer(env), 0, 0, 0, what, 0};
    tu_txn_table(m.w, &m.fa, &m.fb);
    commit_range(m.w, m.fa, m.fb, 0, 40);
    assert_int_equal(kv_flush(m.w, NULL), KV_OK);
    commit_range(m.w, m.fa, m.fb, 40, 50);
    m.next = 50;
    /* at open, and again at a refresh */
    for (int at_open = 1; at_open >= 0; at_open--) {
      kv_db *r = NULL;
      m.fired = 0;
      if (!at_open) {
        r = open_reader(env);
        commit_range(m.w, m.fa, m.fb, m.next, m.next + 5);
        m.next += 5;
      }
      int before = m.next;
      kv_follow_test_hook(move, &m);
      if (at_open) r = open_reader(env);
      else assert_int_equal(kv_refresh(r), KV_OK);
      kv_follow_test_hook(NULL, NULL);
      assert_int_equal(m.fired, 1);
      int seen = tu_txn_check(r, "after the move");
      uint32_t fx;
      switch (what) {
        case MOVE_COMPACT: /* read again: everything */
          assert_int_equal(seen, m.next);
          break;
        case MOVE_NEW_TABLE: /* not the txns after the table without the table */
        case MOVE_NEW_FAMILY: /* up to the new family's commit, and nothing after it */
          assert_int_equal(seen, before);
          assert_int_equal(kv_family_id(r, "u", "x", &fx), KV_ERR_NOTFOUND);
          assert_int_equal(kv_refresh(r), KV_OK);
          assert_int_equal(tu_txn_check(r, "next refresh"), m.next);
          assert_int_equal(kv_family_id(r, "u", "x", &fx), KV_OK);
          break;
        case MOVE_BULK: /* not the txns after the load without the load */
          assert_int_equal(seen, before);
          assert_int_equal(kv_refresh(r), KV_OK);
          assert_int_equal(tu_txn_check(r, "next refresh"), m.next);
          break;
        case MOVE_DROP: /* the table was dropped after the read: it is there, or gone */
          assert_int_equal(kv_refresh(r), KV_OK);
          assert_int_equal(kv_family_id(r, "t", "a", &fx), KV_ERR_NOTFOUND);
          break;
      }
      kv_close(r);
      if (what == MOVE_NEW_FAMILY || what == MOVE_NEW_TABLE)
        assert_int_equal(kv_drop_table(m.w, "u"), KV_OK);
      if (what == MOVE_DROP) {
        tu_txn_table(m.w, &m.fa, &m.fb);
        m.next = 0;
        commit_range(m.w, m.fa, m.fb, 0, 20);
        m.next = 20;
      }
    }
    kv_close(m.w);
    kv_env_free(env);
  }
}

/* A read-only open of a store with no writer and of a directory that is not a store. */
static void test_open_errors(void **state) {
  (void)state;
  kv_env *env = kv_env_mem_new(1);
  kv_options o;
  kv_options_init(&o);
  o.env = env;
  o.read_only = true;
  kv_db *r = NULL;
  assert_int_equal(kv_open("/db", &o, &r), KV_ERR_NOTFOUND);
  assert_int_equal(env->mkdir(env, "/db"), KV_OK);
  assert_int_equal(kv_open("/db", &o, &r), KV_ERR_NOTFOUND);
  assert_non_null(strstr(kv_errmsg(), "MANIFEST"));
  assert_null(r);
  kv_db *w = open_writer(env);
  uint32_t fa, fb;
  tu_txn_table(w, &fa, &fb);
  commit_range(w, fa, fb, 0, 7);
  assert_int_equal(kv_close(w), KV_OK);
  r = open_reader(env);
  assert_int_equal(tu_txn_check(r, "closed store"), 7);
  kv_close(r);
  kv_env_free(env);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_reader_beside_writer),
      cmocka_unit_test(test_open_scan_keeps_view),
      cmocka_unit_test(test_torn_tail_left_alone),
      cmocka_unit_test(test_writer_moves_during_catch_up),
      cmocka_unit_test(test_open_errors),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
