/*
** tests/kv/test_follow_fork.c: a read-only open beside a writer in another process, on a
** real directory. A child process commits the multi-row transactions of tests/tu_txn.h as
** fast as it can (some as bulk loads), with memstores and a WAL limit so small that it
** flushes, rolls and deletes log segments, compacts and deletes store files all the time,
** and publishes in shared memory how many of its commits have returned. The parent opens
** read-only again and again and refreshes each open a few times; every view must hold
** every transaction acknowledged before the open (or the refresh) began, each one whole in
** both families, and nothing after a missing one (tu_txn_check). Then the writer stops and
** a writable open finds exactly what was acknowledged.
** Not here: the exact interleavings (tests/kv/test_follow.c puts the writer's moves at
** chosen points of the reader's catch-up).
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "kv/kv.h"
#include "testutil.h"
#include "tu_txn.h"

typedef struct shared {
  atomic_int acked;  /* transactions whose commit returned */
  atomic_int stop;   /* the parent asks the writer to stop */
  atomic_int ready;  /* the table exists */
} shared;

static void child_fail(const char *what) {
  fprintf(stderr, "writer: %s: %s\n", what, kv_errmsg());
  _exit(3);
}

/* The writer process: txns 0, 1, ... until asked to stop or `max` are done. */
static void writer(const char *dir, shared *sh, int max, uint64_t seed) {
  kv_options o;
  kv_options_init(&o);
  o.create_if_missing = true;
  o.sync_mode = KV_SYNC_NORMAL; /* written at commit: what a reader can see */
  o.memstore_flush_size = 24 << 10;
  o.wal_limit = 64 << 10;
  o.compaction_trigger = 3;
  kv_db *db = NULL;
  if (kv_open(dir, &o, &db)) child_fail("open");
  kv_family_options f[2] = {{.name = "a"}, {.name = "b"}};
  uint32_t fa, fb;
  if (kv_create_table(db, "t", f, 2) || kv_family_id(db, "t", "a", &fa) ||
      kv_family_id(db, "t", "b", &fb))
    child_fail("table");
  atomic_store(&sh->ready, 1);
  kv_batch *b = kv_batch_new();
  char row[32], val[16];
  for (int i = 0; i < max && !atomic_load(&sh->stop); i++) {
    int rc;
    if (tu_below(&seed, 40) == 0) {
      rc = tu_txn_bulk(db, fa, fb, i);
    } else {
      kv_batch_clear(b);
      snprintf(val, sizeof val, "v%06d", i);
      rc = KV_OK;
      for (int j = 0; j < TU_TXN_ROWS && rc == KV_OK; j++) {
        snprintf(row, sizeof row, "k%06d-%d", i, j);
        rc = kv_batch_put(b, fa, row, strlen(row), "q", 1, KV_TS_NOW, val, 7);
        if (rc == KV_OK) rc = kv_batch_put(b, fb, row, strlen(row), "q", 1, KV_TS_NOW, val, 7);
      }
      if (rc == KV_OK) rc = kv_batch_put(b, fa, "zz", 2, "q", 1, KV_TS_NOW, val, 7);
      if (rc == KV_OK) rc = kv_batch_put(b, fb, "zz", 2, "q", 1, KV_TS_NOW, val, 7);
      if (rc == KV_OK) rc = kv_commit(db, b, NULL);
    }
    if (rc) child_fail("commit");
    atomic_store(&sh->acked, i + 1);
    if (i % 700 == 699 && kv_compact(db, NULL, true)) child_fail("compact");
  }
  kv_batch_free(b);
  if (kv_close(db)) child_fail("close");
  _exit(0);
}

static void sleep_us(long us) {
  struct timespec ts = {us / 1000000, (us % 1000000) * 1000};
  nanosleep(&ts, NULL);
}

static void test_reader_beside_writer_process(void **state) {
  (void)state;
  uint64_t seed = tu_seed("follow_fork");
  char dir[] = "/tmp/rowan_follow_XXXXXX";
  assert_non_null(mkdtemp(dir));
  shared *sh = mmap(NULL, sizeof *sh, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  assert_true(sh != MAP_FAILED);
  memset(sh, 0, sizeof *sh);
  int max = (int)tu_scaled(6000, 1500);
  fflush(NULL);
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) writer(dir, sh, max, seed);
  while (!atomic_load(&sh->ready)) sleep_us(1000);
  kv_options o;
  kv_options_init(&o);
  o.read_only = true;
  int rounds = (int)tu_scaled(24, 6), opens = 0, refreshes = 0, last_seen = 0;
  uint64_t retries = 0, stops = 0;
  for (int round = 0; round < rounds; round++) {
    int before = atomic_load(&sh->acked);
    kv_db *r = NULL;
    int rc = kv_open(dir, &o, &r);
    if (rc) fprintf(stderr, "reader open: %s\n", kv_errmsg());
    assert_int_equal(rc, KV_OK);
    opens++;
    int seen = tu_txn_check(r, "reader at open");
    if (seen < before) fprintf(stderr, "open saw %d txns, %d were acknowledged\n", seen, before);
    assert_true(seen >= before);
    for (int k = 0; k < 3; k++) {
      sleep_us((long)tu_below(&seed, 20000));
      before = atomic_load(&sh->acked);
      rc = kv_refresh(r);
      if (rc) fprintf(stderr, "refresh: %s\n", kv_errmsg());
      assert_int_equal(rc, KV_OK);
      refreshes++;
      int now = tu_txn_check(r, "reader after refresh");
      if (now < before || now < seen)
        fprintf(stderr, "refresh saw %d txns, %d acknowledged, %d before\n", now, before, seen);
      assert_true(now >= before && now >= seen);
      seen = now;
    }
    last_seen = seen;
    kv_wal_stats ws;
    assert_int_equal(kv_wal_get_stats(r, &ws), KV_OK);
    retries += ws.reader_retries;
    stops += ws.reader_stops;
    assert_int_equal(ws.dropped_bytes, 0); /* a reader drops nothing */
    assert_int_equal(kv_close(r), KV_OK);
    if (atomic_load(&sh->acked) >= max) break;
  }
  atomic_store(&sh->stop, 1);
  int status = 0;
  assert_int_equal(waitpid(pid, &status, 0), pid);
  assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  int acked = atomic_load(&sh->acked);
  fprintf(stderr, "follow_fork: %d opens, %d refreshes (%llu attempts again, %llu stops), the "
          "last view %d txns, %d written\n", opens, refreshes, (unsigned long long)retries,
          (unsigned long long)stops, last_seen, acked);
  kv_options_init(&o);
  kv_db *w = NULL;
  assert_int_equal(kv_open(dir, &o, &w), KV_OK);
  assert_int_equal(tu_txn_check(w, "writer after the writer"), acked);
  kv_close(w);
  munmap(sh, sizeof *sh);
  char cmd[512];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  assert_int_equal(system(cmd), 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_reader_beside_writer_process),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
