/*
** tests/kv/test_backup.c: the online backup (kv_backup, kv/db/backup.c). A copy opens with
** every transaction acknowledged before the backup began and nothing half (the multi-row
** transactions of tests/tu_txn.h), while a writer thread goes on committing, bulk loading,
** flushing and compacting; store files are hard links where the env can link and copies
** where it cannot; the copy is a store of its own (writes to it leave the source alone);
** a backup into a directory that is not empty, of a read-only open, or that fails midway
** (nothing usable left behind, the store unharmed) is refused with its error.
*/
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "kv/env/env_mem.h"
#include "kv/kv.h"
#include "testutil.h"
#include "tu_txn.h"

static kv_db *open_store(kv_env *env, const char *path, bool create) {
  kv_options o;
  kv_options_init(&o);
  o.env = env;
  o.create_if_missing = create;
  o.memstore_flush_size = 16 << 10;
  o.wal_limit = 64 << 10;
  o.compaction_trigger = 3;
  kv_db *db = NULL;
  int rc = kv_open(path, &o, &db);
  if (rc) fprintf(stderr, "open %s: %s\n", path, kv_errmsg());
  assert_int_equal(rc, KV_OK);
  return db;
}

static void commit_range(kv_db *w, uint32_t fa, uint32_t fb, int from, int to) {
  kv_batch *b = kv_batch_new();
  for (int i = from; i < to; i++) assert_int_equal(tu_txn_commit(w, b, fa, fb, i), KV_OK);
  kv_batch_free(b);
}

static void test_backup_basics(void **state) {
  (void)state;
  for (int linkable = 1; linkable >= 0; linkable--) {
    kv_env *env = kv_env_mem_new(1);
    if (!linkable) env->link = NULL; /* a file system without hard links: copies */
    kv_db *db = open_store(env, "/db", true);
    uint32_t fa, fb;
    tu_txn_table(db, &fa, &fb);
    commit_range(db, fa, fb, 0, 200);
    assert_int_equal(kv_flush(db, NULL), KV_OK);
    commit_range(db, fa, fb, 200, 230); /* in the log only */
    kv_backup_stats st;
    assert_int_equal(kv_backup(db, "/bak", &st), KV_OK);
    fprintf(stderr, "backup: %llu linked, %llu copied (%llu bytes), %llu segments (%llu bytes)\n",
            (unsigned long long)st.files_linked, (unsigned long long)st.files_copied,
            (unsigned long long)st.bytes_copied, (unsigned long long)st.wal_segments,
            (unsigned long long)st.wal_bytes);
    assert_true(st.files_linked + st.files_copied > 0);
    assert_true(linkable ? st.files_copied == 0 : st.files_linked == 0);
    assert_true(st.wal_segments > 0 && st.wal_bytes > 0);
    assert_int_equal(st.last_seq, kv_last_sequence(db));
    /* not into a directory that holds anything */
    assert_int_equal(kv_backup(db, "/bak", NULL), KV_ERR_EXISTS);
    assert_non_null(strstr(kv_errmsg(), "not empty"));
    assert_int_equal(kv_backup(db, "", NULL), KV_ERR_INVALID);
    assert_int_equal(kv_backup(NULL, "/x", NULL), KV_MISUSE);
    /* the store goes on; the copy is a store of its own */
    commit_range(db, fa, fb, 230, 260);
    assert_int_equal(kv_compact(db, NULL, true), KV_OK); /* drops the files the copy links */
    kv_db *c = open_store(env, "/bak", false);
    assert_int_equal(tu_txn_check(c, "copy"), 230);
    uint32_t ca, cb;
    assert_int_equal(kv_family_id(c, "t", "a", &ca), KV_OK);
    assert_int_equal(kv_family_id(c, "t", "b", &cb), KV_OK);
    commit_range(c, ca, cb, 230, 240); /* writes to the copy */
    assert_int_equal(kv_compact(c, NULL, true), KV_OK);
    assert_int_equal(tu_txn_check(c, "copy written"), 240);
    assert_int_equal(kv_close(c), KV_OK);
    assert_int_equal(tu_txn_check(db, "source"), 260);
    /* an empty directory that exists is fine; a read-only open cannot make backups */
    assert_int_equal(env->mkdir(env, "/bak2"), KV_OK);
    assert_int_equal(kv_backup(db, "/bak2", NULL), KV_OK);
    kv_options o;
    kv_options_init(&o);
    o.env = env;
    o.read_only = true;
    kv_db *r = NULL;
    assert_int_equal(kv_open("/db", &o, &r), KV_OK);
    assert_int_equal(kv_backup(r, "/bak3", NULL), KV_ERR_READONLY);
    kv_close(r);
    assert_int_equal(kv_close(db), KV_OK);
    c = open_store(env, "/bak2", false);
    assert_int_equal(tu_txn_check(c, "second copy"), 260);
    kv_close(c);
    kv_env_free(env);
  }
}

/* A backup that fails midway leaves no store behind and the source unharmed. */
static void test_backup_failure(void **state) {
  (void)state;
  kv_env *env = kv_env_mem_new(1);
  env->link = NULL;
  kv_db *db = open_store(env, "/db", true);
  uint32_t fa, fb;
  tu_txn_table(db, &fa, &fb);
  commit_range(db, fa, fb, 0, 120);
  assert_int_equal(kv_flush(db, NULL), KV_OK);
  kv_env_mem_fail(env, KV_FAULT_APPEND, 2, "/bak/", KV_FAULT_ENOSPC, 0);
  assert_int_equal(kv_backup(db, "/bak", NULL), KV_ERR_NOSPC);
  assert_non_null(strstr(kv_errmsg(), "/bak"));
  kv_env_mem_clear_faults(env);
  assert_int_equal(env->exists(env, "/bak/MANIFEST"), 0);
  commit_range(db, fa, fb, 120, 130);
  assert_int_equal(tu_txn_check(db, "source after the failure"), 130);
  assert_int_equal(kv_backup(db, "/bak", NULL), KV_OK); /* and again, into the same place */
  kv_close(db);
  db = open_store(env, "/bak", false);
  assert_int_equal(tu_txn_check(db, "copy"), 130);
  kv_close(db);
  kv_env_free(env);
}

/* ---- backups under a writer thread ------------------------------------------------------ */

typedef struct wstate {
  kv_db *db;
  uint32_t fa, fb;
  atomic_int acked;  /* txns whose commit returned */
  atomic_int stop;
  int max;
  uint64_t seed;
} wstate;

static void *writer(void *arg) {
  wstate *w = arg;
  kv_batch *b = kv_batch_new();
  for (int i = 0; i < w->max && !atomic_load(&w->stop); i++) {
    int rc = tu_below(&w->seed, 30) == 0 ? tu_txn_bulk(w->db, w->fa, w->fb, i)
                                          : (tu_txn_batch(b, w->fa, w->fb, i),
                                             kv_commit(w->db, b, NULL));
    if (rc) {
      fprintf(stderr, "writer: %s\n", kv_errmsg());
      break;
    }
    atomic_store(&w->acked, i + 1);
    if (i % 300 == 299 && kv_compact(w->db, NULL, i % 600 == 599) != KV_OK) break;
  }
  kv_batch_free(b);
  return NULL;
}

static void test_backup_under_writer(void **state) {
  (void)state;
  for (int linkable = 1; linkable >= 0; linkable--) {
    kv_env *env = kv_env_mem_new(1);
    if (!linkable) env->link = NULL;
    wstate w;
    memset(&w, 0, sizeof w);
    w.db = open_store(env, "/db", true);
    w.max = (int)tu_scaled(4000, 800);
    w.seed = tu_seed("backup_under_writer");
    tu_txn_table(w.db, &w.fa, &w.fb);
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, writer, &w), 0);
    int n = (int)tu_scaled(12, 4), last = 0;
    for (int k = 0; k < n; k++) {
      char dir[32];
      snprintf(dir, sizeof dir, "/bak%d", k);
      while (atomic_load(&w.acked) < (k + 1) * w.max / (n + 1)) {
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
      }
      int before = atomic_load(&w.acked);
      kv_backup_stats st;
      int rc = kv_backup(w.db, dir, &st);
      if (rc) fprintf(stderr, "backup: %s\n", kv_errmsg());
      assert_int_equal(rc, KV_OK);
      int after = atomic_load(&w.acked);
      kv_db *c = open_store(env, dir, false);
      int m = tu_txn_check(c, dir);
      if (m < before || m > after + 1)
        fprintf(stderr, "%s holds %d txns: %d acknowledged before, %d after\n", dir, m, before,
                after);
      assert_true(m >= before && m <= after + 1); /* + the commit returning then */
      assert_true(m >= last);
      last = m;
      assert_int_equal(kv_close(c), KV_OK);
    }
    atomic_store(&w.stop, 1);
    pthread_join(t, NULL);
    fprintf(stderr, "backup_under_writer: %d backups, the last with %d txns of %d\n", n, last,
            atomic_load(&w.acked));
    assert_int_equal(tu_txn_check(w.db, "source"), atomic_load(&w.acked));
    assert_int_equal(kv_close(w.db), KV_OK);
    kv_env_free(env);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_backup_basics),
      cmocka_unit_test(test_backup_failure),
      cmocka_unit_test(test_backup_under_writer),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
