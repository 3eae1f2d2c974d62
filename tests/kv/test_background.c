/*
** tests/kv/test_background.c: background flush and compaction (issue 8) through kv.h on the
** in-memory env:
** - flushes and compactions run while a writer commits and readers scan: every scan sees
**   exactly a prefix of the rows committed in order (no row lost or seen twice while a
**   frozen memstore turns into a store file or files are merged);
** - back-pressure: after each commit the active and frozen memstores together stay within
**   memstore_limit (plus the commit that crossed it); frozen memstores pile up behind a
**   flush held back (an env wrapper whose store-file opens wait at a gate the test opens:
**   no timing);
** - kv_close while frozen memstores wait for their flush: nothing is lost at reopen;
** - a background flush that fails (injected write or sync fault on a store file) puts the
**   store in its error state: a later write reports it, reads go on seeing every committed
**   row, and after a power cut and reopen every acknowledged commit is there.
** Not here: group commit (test_db.c), the model check with background work (test_model.c).
*/
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>

#include "kv/env/env.h"
#include "kv/env/env_mem.h"
#include "kv/kv.h"
#include "testutil.h"
#include "tu_kv.h"

static kv_db *open_db(kv_env *env, size_t flush_size, size_t limit, int trigger) {
  kv_options o;
  kv_options_init(&o);
  o.env = env;
  o.create_if_missing = true;
  o.sync_mode = KV_SYNC_FULL;
  o.memstore_flush_size = flush_size;
  o.memstore_limit = limit;
  o.compaction_trigger = trigger;
  return tu_kv_open_opts(&o);
}

static uint32_t fam_of(kv_db *db, bool create) {
  if (create) {
    kv_family_options f = {.name = "f", .block_size = 1024};
    assert_int_equal(kv_create_table(db, "t", &f, 1), KV_OK);
  }
  uint32_t id;
  assert_int_equal(kv_family_id(db, "t", "f", &id), KV_OK);
  return id;
}

static void key_of(uint64_t i, char *k) { snprintf(k, 24, "k%010llu", (unsigned long long)i); }

/* Commit rows [from, from+n) with a value naming the row; KV_OK or the commit's error. */
static int put_rows(kv_db *db, uint32_t fid, uint64_t from, uint64_t n) {
  kv_batch *b = kv_batch_new();
  for (uint64_t i = from; i < from + n; i++) {
    char k[24], v[64];
    key_of(i, k);
    int vl = snprintf(v, sizeof v, "value-of-%llu-xxxxxxxxxxxxxxxxxxxx", (unsigned long long)i);
    assert_int_equal(kv_batch_put(b, fid, k, strlen(k), "q", 1, 7, v, (size_t)vl), KV_OK);
  }
  int rc = kv_commit(db, b, NULL);
  kv_batch_free(b);
  return rc;
}

/* Scan everything; returns the row count, or -1 if the rows are not exactly 0..n-1. */
static int64_t scan_prefix(kv_db *db, uint32_t fid) {
  kv_scan_options so = {0};
  so.family_ids = &fid;
  so.n_families = 1;
  kv_scan *s;
  if (kv_scan_open(db, &so, &s) != KV_OK) return -1;
  kv_row r;
  int64_t n = 0;
  int rc;
  while ((rc = kv_scan_next(s, &r)) == KV_OK) {
    char k[24], v[64];
    key_of((uint64_t)n, k);
    int vl = snprintf(v, sizeof v, "value-of-%lld-xxxxxxxxxxxxxxxxxxxx", (long long)n);
    if (r.key_len != strlen(k) || memcmp(r.key, k, r.key_len) != 0 || r.n_cells != 1 ||
        r.cells[0].value_len != (uint32_t)vl || memcmp(r.cells[0].value, v, (size_t)vl) != 0) {
      n = -1;
      break;
    }
    n++;
  }
  if (rc != KV_OK && rc != KV_ERR_NOTFOUND) n = -1;
  kv_scan_close(s);
  return n;
}

typedef struct reader_arg {
  kv_db *db;
  uint32_t fid;
  atomic_bool *stop;
  atomic_uint_least64_t *committed; /* rows acknowledged so far */
  int bad;
  atomic_uint_least64_t scans; /* scans finished (read by the writer before it stops them) */
} reader_arg;

static void *reader(void *p) {
  reader_arg *a = p;
  while (!atomic_load(a->stop)) {
    uint64_t before = atomic_load(a->committed);
    int64_t n = scan_prefix(a->db, a->fid);
    if (n < 0 || (uint64_t)n < before) a->bad++;
    atomic_fetch_add(&a->scans, 1);
  }
  return NULL;
}

static void test_flush_while_scans_and_writes(void **state) {
  (void)state;
  kv_env *env = kv_env_mem_new(1000);
  kv_db *db = open_db(env, 16 << 10, 0, 3);
  uint32_t fid = fam_of(db, true);
  atomic_bool stop = false;
  atomic_uint_least64_t committed = 0;
  pthread_t th[2];
  reader_arg ra[2];
  for (int i = 0; i < 2; i++) {
    ra[i].db = db;
    ra[i].fid = fid;
    ra[i].stop = &stop;
    ra[i].committed = &committed;
    ra[i].bad = 0;
    atomic_init(&ra[i].scans, 0);
    pthread_create(&th[i], NULL, reader, &ra[i]);
  }
  uint64_t n = tu_scaled(12000, 3000), step = 50;
  for (uint64_t i = 0; i < n; i += step) {
    assert_int_equal(put_rows(db, fid, i, step), KV_OK);
    atomic_store(&committed, i + step);
  }
  /* On a loaded machine a reader may not have finished one scan by the time the writes
     end: let each finish one (it overlaps the writes or the flushes they triggered) before
     stopping them, so every reader's scans were checked at least once. */
  for (int i = 0; i < 2; i++)
    while (atomic_load(&ra[i].scans) == 0) sched_yield();
  atomic_store(&stop, true);
  for (int i = 0; i < 2; i++) pthread_join(th[i], NULL);
  for (int i = 0; i < 2; i++) {
    assert_int_equal(ra[i].bad, 0);
    assert_true(atomic_load(&ra[i].scans) > 0);
  }
  assert_int_equal(kv_flush(db, NULL), KV_OK);
  kv_family_stats st;
  assert_int_equal(kv_family_get_stats(db, fid, &st), KV_OK);
  assert_int_equal(st.memstore_cells, 0);
  /* compacted in the background: dozens of flushes, and the size-tiered selection leaves
     fewer than 2 * compaction_trigger files (3 to 5 when the files' sizes fall faster than
     its ratio, which depends on how the flushes met the writes: the test failed now and
     then on a loaded machine when it asked for fewer than 3) */
  assert_true(st.store_files >= 1 && st.store_files < 6);
  assert_int_equal(st.cells, n);
  assert_int_equal(scan_prefix(db, fid), (int64_t)n);
  assert_int_equal(kv_close(db), KV_OK);
  db = open_db(env, 16 << 10, 0, 3);
  assert_int_equal(scan_prefix(db, fam_of(db, false)), (int64_t)n);
  assert_int_equal(kv_close(db), KV_OK);
  kv_env_free(env);
}

/* ---- an env whose store-file writes wait at a gate ------------------------------------ */

/* The in-memory env behind a gate: opening a store file for writing (a flush's or a
** compaction's output, "*.sf") waits while the gate is shut, so a test holds the background
** thread's flushes back and decides when they go on, without sleeping. Every other call is
** the inner env's. As a guard against a hang (a commit that waited for a held flush), a
** shut gate opens by itself after GATE_GUARD_S seconds and says so (timed_out). */
#define GATE_GUARD_S 120

typedef struct gate_env {
  kv_env base;        /* the methods; first member, so the env pointer is the gate's */
  kv_env *inner;      /* the in-memory env every call goes to */
  pthread_mutex_t mu; /* guards shut, timed_out */
  pthread_cond_t cv;  /* broadcast when the gate opens */
  bool shut;          /* store-file opens for writing wait while set */
  bool timed_out;     /* the guard opened the gate, not the test */
} gate_env;

static kv_env *inner_of(kv_env *env) { return ((gate_env *)env)->inner; }

static int g_open(kv_env *env, const char *path, int flags, kv_file **out) {
  gate_env *g = (gate_env *)env;
  if ((flags & KV_OPEN_WRITE) && strstr(path, ".sf") != NULL) {
    pthread_mutex_lock(&g->mu);
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += GATE_GUARD_S;
    while (g->shut)
      if (pthread_cond_timedwait(&g->cv, &g->mu, &until) != 0 && g->shut) {
        g->shut = false;
        g->timed_out = true;
      }
    pthread_mutex_unlock(&g->mu);
  }
  return g->inner->open(g->inner, path, flags, out);
}
static int g_rename(kv_env *env, const char *from, const char *to) {
  return inner_of(env)->rename(inner_of(env), from, to);
}
static int g_remove(kv_env *env, const char *path) {
  return inner_of(env)->remove(inner_of(env), path);
}
static int g_mkdir(kv_env *env, const char *path) {
  return inner_of(env)->mkdir(inner_of(env), path);
}
static int g_rmdir(kv_env *env, const char *path) {
  return inner_of(env)->rmdir(inner_of(env), path);
}
static int g_sync_dir(kv_env *env, const char *path) {
  return inner_of(env)->sync_dir(inner_of(env), path);
}
static int g_exists(kv_env *env, const char *path) {
  return inner_of(env)->exists(inner_of(env), path);
}
static int g_list(kv_env *env, const char *path, kv_env_list_fn fn, void *ctx) {
  return inner_of(env)->list(inner_of(env), path, fn, ctx);
}
static int g_lock(kv_env *env, const char *path, kv_file **lock_out) {
  return inner_of(env)->lock(inner_of(env), path, lock_out);
}
static int g_unlock(kv_env *env, kv_file *lock) {
  return inner_of(env)->unlock(inner_of(env), lock);
}
static int64_t g_now_ms(kv_env *env) { return inner_of(env)->now_ms(inner_of(env)); }

/* Set g up over `inner` (kept by the caller, freed after g_fini), the gate shut. The
** methods on files (read, append, ...) are the inner env's: its files are handed out. */
static void gate_init(gate_env *g, kv_env *inner) {
  memset(g, 0, sizeof *g);
  g->base = *inner;
  g->base.open = g_open;
  g->base.rename = g_rename;
  g->base.remove = g_remove;
  g->base.mkdir = g_mkdir;
  g->base.rmdir = g_rmdir;
  g->base.sync_dir = g_sync_dir;
  g->base.exists = g_exists;
  g->base.list = g_list;
  g->base.lock = g_lock;
  g->base.unlock = g_unlock;
  g->base.now_ms = g_now_ms;
  g->base.destroy = NULL; /* the test frees the inner env itself */
  g->inner = inner;
  pthread_mutex_init(&g->mu, NULL);
  pthread_cond_init(&g->cv, NULL);
  g->shut = true;
}

static void gate_open(gate_env *g) {
  pthread_mutex_lock(&g->mu);
  g->shut = false;
  pthread_cond_broadcast(&g->cv);
  pthread_mutex_unlock(&g->mu);
}

/* Whether the guard, not the test, opened the gate. */
static bool gate_timed_out(gate_env *g) {
  pthread_mutex_lock(&g->mu);
  bool t = g->timed_out;
  pthread_mutex_unlock(&g->mu);
  return t;
}

static void gate_fini(gate_env *g) {
  pthread_cond_destroy(&g->cv);
  pthread_mutex_destroy(&g->mu);
}

static void test_back_pressure(void **state) {
  (void)state;
  /* The first flush waits at the gate until a commit has seen frozen memstores beside the
     active one (they pile up behind it); then flushes go on and back-pressure keeps the
     total within the limit whatever the background thread's pace. (Without the gate the
     pile-up was up to the scheduler: ROWAN_TEST_SCALE=0.25 saw at most 32 KiB in 2 of
     300 runs.) */
  kv_env *env = kv_env_mem_new(1000);
  gate_env g;
  gate_init(&g, env);
  size_t limit = 128 << 10, flush = 32 << 10;
  kv_db *db = open_db(&g.base, flush, limit, 100);
  uint32_t fid = fam_of(db, true);
  uint64_t n = tu_scaled(20000, 5000), step = 100;
  size_t most = 0;
  bool held = true; /* the gate is shut */
  for (uint64_t i = 0; i < n; i += step) {
    assert_int_equal(put_rows(db, fid, i, step), KV_OK);
    kv_family_stats st;
    assert_int_equal(kv_family_get_stats(db, fid, &st), KV_OK);
    if (st.memstore_bytes > most) most = st.memstore_bytes;
    /* The commit returns only once active + frozen are within the limit. */
    assert_true(st.memstore_bytes <= limit);
    assert_int_equal(st.cells + st.memstore_cells, i + step);
    if (held && st.memstore_bytes > flush) {
      assert_int_equal(st.cells, 0); /* nothing flushed yet: the flush waits at the gate */
      gate_open(&g);
      held = false;
    }
  }
  assert_false(held);
  assert_true(most > flush); /* frozen memstores did pile up behind the flush */
  assert_false(gate_timed_out(&g));
  assert_int_equal(scan_prefix(db, fid), (int64_t)n);
  assert_int_equal(kv_close(db), KV_OK);
  gate_fini(&g);
  kv_env_free(env);
}

static void test_close_during_background_work(void **state) {
  (void)state;
  uint64_t seed = tu_seed("close_during_background_work");
  kv_env *env = kv_env_mem_new(1000);
  uint64_t total = 0;
  for (int round = 0; round < 6; round++) {
    kv_db *db = open_db(env, 8 << 10, 0, 2);
    uint32_t fid = fam_of(db, round == 0);
    uint64_t n = 500 + tu_below(&seed, 3000);
    for (uint64_t i = 0; i < n; i += 100) assert_int_equal(put_rows(db, fid, total + i, 100), KV_OK);
    total += (n + 99) / 100 * 100;
    assert_int_equal(kv_close(db), KV_OK); /* frozen memstores may still wait: the WAL has them */
  }
  kv_db *db = open_db(env, 8 << 10, 0, 2);
  assert_int_equal(scan_prefix(db, fam_of(db, false)), (int64_t)total);
  assert_int_equal(kv_close(db), KV_OK);
  kv_env_free(env);
}

static void background_fault(int op, int kind) {
  kv_env *env = kv_env_mem_new(1000);
  kv_db *db = open_db(env, 8 << 10, 0, 100);
  uint32_t fid = fam_of(db, true);
  kv_env_mem_fail(env, op, 2, ".sf", kind, 0); /* the second store file's write or sync */
  uint64_t acked = 0;
  int rc = KV_OK;
  for (int i = 0; i < 100000 && rc == KV_OK; i++) {
    rc = put_rows(db, fid, acked, 50);
    if (rc == KV_OK) acked += 50;
  }
  assert_int_not_equal(rc, KV_OK); /* a later write reported the background failure */
  assert_non_null(strstr(kv_errmsg(), "refuses writes"));
  assert_int_equal(put_rows(db, fid, acked, 1), rc);
  assert_int_equal(kv_flush(db, NULL), rc);
  assert_int_equal(scan_prefix(db, fid), (int64_t)acked); /* reads still work */
  /* Power cut, reopen: every acknowledged commit is there. */
  kv_env_mem_clear_faults(env);
  kv_env_mem_set_crashed(env, true);
  (void)kv_close(db);
  kv_env_mem_power_cut(env);
  db = open_db(env, 8 << 10, 0, 100);
  assert_int_equal(scan_prefix(db, fam_of(db, false)), (int64_t)acked);
  assert_int_equal(put_rows(db, fid, acked, 10), KV_OK);
  assert_int_equal(kv_close(db), KV_OK);
  kv_env_free(env);
}

static void test_background_flush_write_fault(void **state) {
  (void)state;
  background_fault(KV_FAULT_APPEND, KV_FAULT_EIO);
}

static void test_background_flush_sync_fault(void **state) {
  (void)state;
  background_fault(KV_FAULT_SYNC, KV_FAULT_ENOSPC);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_flush_while_scans_and_writes),
    cmocka_unit_test(test_back_pressure),
    cmocka_unit_test(test_close_during_background_work),
    cmocka_unit_test(test_background_flush_write_fault),
    cmocka_unit_test(test_background_flush_sync_fault),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
