/*
** tests/kv/test_wal_bound.c: the bound on the WAL's total size (kv_options.wal_limit L,
** kv/db/db_wal.c) through kv.h on the in-memory env, with the pattern that needs it: one table
** whose "busy" family gets a steady stream of small commits and whose "rare" family (as a
** table's key family) gets a cell only now and then, so its memstore never fills.
** - after every commit the live WAL segments hold at most L + L/4 bytes, the stats agree
**   with the wal-*.log files on disk, old segments are deleted, and the rare family was
**   flushed (the same writes without the bound leave over twice as much: the pin is real);
** - a reopen replays at most L + L/4 bytes and every committed row is there, also after a
**   power cut at a random point and after a failed bound-triggered flush (no commit hangs;
**   every acknowledged commit survives);
** - a scan and an acquired snapshot opened before the rare family's bound flush read the
**   same rows after it (and after its WAL segments are gone);
** - a dropped table's pin goes away without a flush (the background trim job);
** - kv_open deletes segments nothing needs (reopening without writes does not pile them up,
**   with or without unflushed data);
** - several writers and a reader with memstore back-pressure and the bound both active:
**   no deadlock, no row lost (run under TSan by .ci/run);
** - kv_close flushes by default (the reopen replays nothing), not with keep_log_on_close.
** Not here: the WAL record format (test_wal.c), back-pressure alone (test_background.c).
*/
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "kv/env/env.h"
#include "kv/env/env_mem.h"
#include "kv/kv.h"
#include "testutil.h"
#include "tu_kv.h"

#define LIMIT ((size_t)128 << 10) /* wal_limit of these tests: 128 KiB, rolls at 32 KiB */
#define BOUND (LIMIT + LIMIT / 4) /* what a returned commit leaves at most */
#define RARE_EVERY 500            /* the rare family gets a cell every this many commits */

static bool keep_log = true; /* kv_options.keep_log_on_close for open_db: the tests below
                                check what a reopen replays (test_close_flushes: the default) */

static kv_db *open_db(kv_env *env, size_t wal_limit, size_t flush_size, size_t mem_limit) {
  kv_options o;
  kv_options_init(&o);
  o.env = env;
  o.create_if_missing = true;
  o.sync_mode = KV_SYNC_FULL;
  o.memstore_flush_size = flush_size;
  o.memstore_limit = mem_limit;
  o.wal_limit = wal_limit;
  o.keep_log_on_close = keep_log;
  return tu_kv_open_opts(&o);
}

typedef struct fams {
  uint32_t busy, rare;
} fams;

static fams fams_of(kv_db *db, bool create) {
  if (create) {
    kv_family_options f[2] = {{.name = "busy", .block_size = 4096},
                              {.name = "rare", .block_size = 4096}};
    assert_int_equal(kv_create_table(db, "t", f, 2), KV_OK);
  }
  fams r;
  assert_int_equal(kv_family_id(db, "t", "busy", &r.busy), KV_OK);
  assert_int_equal(kv_family_id(db, "t", "rare", &r.rare), KV_OK);
  return r;
}

static void key_of(uint64_t i, char *k) { snprintf(k, 24, "k%010llu", (unsigned long long)i); }

/* Row i's value: "value-i-" padded with zeros to 72 bytes, so each commit adds a known,
** sizeable amount of WAL and the bound is reached in a few hundred commits. */
static int value_of(uint64_t i, char *v) {
  return snprintf(v, 96, "value-%llu-%0*d", (unsigned long long)i,
                  64 - snprintf(NULL, 0, "%llu", (unsigned long long)i), 0);
}

/* Commit number i: busy row i, and rare row i when i is a multiple of RARE_EVERY. */
static int commit_one(kv_db *db, fams f, uint64_t i) {
  kv_batch *b = kv_batch_new();
  char k[24], v[96];
  key_of(i, k);
  int vl = value_of(i, v);
  assert_int_equal(kv_batch_put(b, f.busy, k, strlen(k), "q", 1, 7, v, (size_t)vl), KV_OK);
  if (i % RARE_EVERY == 0)
    assert_int_equal(kv_batch_put(b, f.rare, k, strlen(k), "r", 1, 7, v, (size_t)vl), KV_OK);
  int rc = kv_commit(db, b, NULL);
  kv_batch_free(b);
  return rc;
}

/* Rows of family fid at `snapshot` (0 = latest), which must be key_of(i * every) with
** value_of(i * every) for i = 0, 1, ...: returns their count, or -1 on any mismatch. */
static int64_t count_rows(kv_db *db, uint32_t fid, uint64_t every, uint64_t snapshot) {
  kv_scan_options so = {0};
  so.family_ids = &fid;
  so.n_families = 1;
  so.snapshot = snapshot;
  kv_scan *s;
  if (kv_scan_open(db, &so, &s) != KV_OK) return -1;
  kv_row r;
  int64_t n = 0;
  int rc;
  while ((rc = kv_scan_next(s, &r)) == KV_OK) {
    char k[24], v[96];
    key_of((uint64_t)n * every, k);
    int vl = value_of((uint64_t)n * every, v);
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

/* Every commit 0..n-1 is there: n busy rows, and the rare rows among them. */
static void check_all(kv_db *db, fams f, uint64_t n) {
  assert_int_equal(count_rows(db, f.busy, 1, 0), (int64_t)n);
  assert_int_equal(count_rows(db, f.rare, RARE_EVERY, 0),
                   (int64_t)((n + RARE_EVERY - 1) / RARE_EVERY));
}

/* The wal-*.log files in /db: count, bytes, and the lowest number. */
typedef struct wal_files {
  kv_env *env;
  uint64_t n, bytes, lowest;
} wal_files;

static int wal_file(void *ctx, const char *name) {
  wal_files *w = ctx;
  if (strncmp(name, "wal-", 4) != 0) return 0;
  char p[64];
  snprintf(p, sizeof p, "/db/%s", name);
  int64_t sz = kv_env_mem_file_size(w->env, p);
  if (sz < 0) return 0; /* deleted since the listing (a background flush released it) */
  uint64_t num = strtoull(name + 4, NULL, 10);
  if (w->n == 0 || num < w->lowest) w->lowest = num;
  w->n++;
  w->bytes += (uint64_t)sz;
  return 0;
}

static wal_files list_wal(kv_env *env) {
  wal_files w = {env, 0, 0, 0};
  assert_int_equal(env->list(env, "/db", wal_file, &w), KV_OK);
  return w;
}

static kv_wal_stats wal_stats(kv_db *db) {
  kv_wal_stats ws;
  assert_int_equal(kv_wal_get_stats(db, &ws), KV_OK);
  return ws;
}

/* The stats and the files on disk at one moment: the background thread may release a
** segment (and delete its file) between the two reads, so they are read again (for up to two
** seconds) until the stats are the same before and after the listing and agree with it. */
static void stats_and_files(kv_db *db, kv_env *env, kv_wal_stats *ws, wal_files *w) {
  for (int i = 0; i < 2000; i++) {
    *ws = wal_stats(db);
    *w = list_wal(env);
    kv_wal_stats again = wal_stats(db);
    if (again.segments == ws->segments && again.bytes == ws->bytes && w->n == ws->segments &&
        w->bytes == ws->bytes)
      return;
    usleep(1000);
  }
}

static kv_family_stats fam_stats(kv_db *db, uint32_t fid) {
  kv_family_stats st;
  assert_int_equal(kv_family_get_stats(db, fid, &st), KV_OK);
  return st;
}

/* n commits; after each, the live WAL is within the bound. Returns the most bytes seen. */
static uint64_t write_checked(kv_db *db, fams f, uint64_t from, uint64_t n) {
  uint64_t most = 0;
  for (uint64_t i = from; i < from + n; i++) {
    assert_int_equal(commit_one(db, f, i), KV_OK);
    kv_wal_stats ws = wal_stats(db);
    if (ws.bytes > most) most = ws.bytes;
    if (ws.bytes > BOUND)
      fail_msg("after commit %llu the WAL holds %llu bytes, over %zu",
               (unsigned long long)i, (unsigned long long)ws.bytes, BOUND);
  }
  return most;
}

static uint64_t commits(void) { return tu_scaled(8000, 4000); } /* ~1 MiB of WAL: 8 x L */

static void test_bound_holds(void **state) {
  (void)state;
  kv_env *env = kv_env_mem_new(1000);
  /* A busy memstore of 64 KiB fills every ~300 commits; the rare one never does. */
  kv_db *db = open_db(env, LIMIT, 64 << 10, 0);
  fams f = fams_of(db, true);
  uint64_t first = list_wal(env).lowest, n = commits();
  uint64_t most = write_checked(db, f, 0, n);
  kv_wal_stats ws;
  wal_files w;
  stats_and_files(db, env, &ws, &w);
  assert_int_equal(ws.limit, LIMIT);
  assert_true(ws.bound_freezes >= 1);
  assert_true(most > LIMIT / 2); /* the writes did fill the WAL towards the bound */
  /* The stats are the files on disk; the first segment is gone. */
  assert_int_equal(w.n, ws.segments);
  assert_int_equal(w.bytes, ws.bytes);
  assert_true(w.lowest > first);
  /* The rare family was flushed: its first cell is in a store file, not pinning the WAL. */
  kv_family_stats rare = fam_stats(db, f.rare);
  assert_true(rare.store_files >= 1);
  assert_true(rare.memstore_cells < (n + RARE_EVERY - 1) / RARE_EVERY);
  check_all(db, f, n);
  assert_int_equal(kv_close(db), KV_OK);
  kv_env_free(env);
}

/* The same writes with the bound out of the way: the rare family pins every segment, the
** WAL grows far past the bound and reopen replays it all (what the bound is for). */
static void test_without_bound_rare_pins(void **state) {
  (void)state;
  kv_env *env = kv_env_mem_new(1000);
  kv_db *db = open_db(env, (size_t)1 << 30, 64 << 10, 0);
  fams f = fams_of(db, true);
  uint64_t n = commits();
  for (uint64_t i = 0; i < n; i++) assert_int_equal(commit_one(db, f, i), KV_OK);
  kv_wal_stats ws = wal_stats(db);
  assert_true(ws.bytes > 2 * BOUND);
  assert_int_equal(ws.bound_freezes, 0);
  assert_int_equal(fam_stats(db, f.rare).store_files, 0);
  assert_int_equal(kv_close(db), KV_OK);
  db = open_db(env, (size_t)1 << 30, 64 << 10, 0);
  assert_true(wal_stats(db).replayed_bytes > 2 * BOUND);
  check_all(db, fams_of(db, false), n);
  assert_int_equal(kv_close(db), KV_OK);
  kv_env_free(env);
}

static void test_reopen_replays_within_bound(void **state) {
  (void)state;
  kv_env *env = kv_env_mem_new(1000);
  kv_db *db = open_db(env, LIMIT, 64 << 10, 0);
  fams f = fams_of(db, true);
  uint64_t n = commits();
  write_checked(db, f, 0, n);
  assert_int_equal(kv_close(db), KV_OK);
  /* what the reopen replays is the log files the close left: read them then, not before the
     close (the background thread may still flush and release segments until it stops; when
     it has flushed every family there is nothing left to replay, which is allowed) */
  wal_files left = list_wal(env);
  assert_true(left.bytes <= BOUND);
  db = open_db(env, LIMIT, 64 << 10, 0);
  kv_wal_stats ws = wal_stats(db);
  assert_true(ws.replayed_bytes <= left.bytes);
  assert_true(ws.replayed_bytes <= BOUND);
  check_all(db, fams_of(db, false), n);
  /* Writing on after the reopen keeps the bound. */
  write_checked(db, f, n, n / 2);
  check_all(db, f, n + n / 2);
  assert_int_equal(kv_close(db), KV_OK);
  kv_env_free(env);
}

/* A power cut after a random number of acknowledged commits, three times over one store. */
static void test_power_cut(void **state) {
  (void)state;
  uint64_t rs = tu_seed("test_wal_bound power_cut");
  kv_env *env = kv_env_mem_new(1000);
  kv_db *db = open_db(env, LIMIT, 64 << 10, 0);
  fams f = fams_of(db, true);
  uint64_t done = 0;
  for (int round = 0; round < 3; round++) {
    uint64_t m = 1 + tu_below(&rs, commits());
    write_checked(db, f, done, m);
    done += m;
    kv_env_mem_set_crashed(env, true); /* the process dies here, flushes or not */
    kv_close(db);
    kv_env_mem_power_cut(env);
    db = open_db(env, LIMIT, 64 << 10, 0);
    kv_wal_stats ws = wal_stats(db);
    assert_true(ws.replayed_bytes <= BOUND);
    check_all(db, f, done);
  }
  assert_int_equal(kv_close(db), KV_OK);
  kv_env_free(env);
}

/* The first flush the bound asks for fails (its store file's sync): the store enters its
** error state, no commit hangs waiting for that flush, later commits are refused, and after
** a power cut every acknowledged commit is there. */
static void test_failed_bound_flush(void **state) {
  (void)state;
  kv_env *env = kv_env_mem_new(1000);
  /* The busy family never fills its memstore either (4 MiB): the only flushes are the
  ** bound's, of both families. */
  kv_db *db = open_db(env, LIMIT, 4 << 20, 0);
  fams f = fams_of(db, true);
  kv_env_mem_fail(env, KV_FAULT_SYNC, 1, ".sf", KV_FAULT_EIO, 0); /* the first flush */
  uint64_t acked = 0;
  int rc = KV_OK;
  for (uint64_t i = 0; i < commits() && rc == KV_OK; i++) {
    rc = commit_one(db, f, i);
    if (rc == KV_OK) acked = i + 1;
  }
  assert_int_equal(rc, KV_ERR_IO); /* refused once the failed flush set the error state */
  assert_true(acked > 0);
  assert_true(wal_stats(db).bound_freezes >= 1);
  kv_env_mem_clear_faults(env);
  kv_env_mem_set_crashed(env, true);
  kv_close(db);
  kv_env_mem_power_cut(env);
  db = open_db(env, LIMIT, 4 << 20, 0);
  check_all(db, f, acked);
  write_checked(db, f, acked, 1000); /* writable again, and bounded */
  check_all(db, f, acked + 1000);
  assert_int_equal(kv_close(db), KV_OK);
  kv_env_free(env);
}

/* A scan and a snapshot taken before the rare family's bound flush read the same after it,
** with the WAL segments that held those rows deleted. */
static void test_snapshot_and_scan(void **state) {
  (void)state;
  kv_env *env = kv_env_mem_new(1000);
  kv_db *db = open_db(env, LIMIT, 64 << 10, 0);
  fams f = fams_of(db, true);
  uint64_t n0 = 3 * RARE_EVERY + 1; /* rare rows 0, 500, 1000, 1500 */
  for (uint64_t i = 0; i < n0; i++) assert_int_equal(commit_one(db, f, i), KV_OK);
  kv_family_stats rare0 = fam_stats(db, f.rare);
  assert_true(rare0.memstore_cells >= 1); /* row 1500 at least is in the memstore */
  uint64_t snap;
  assert_int_equal(kv_snapshot_acquire(db, &snap), KV_OK);
  uint64_t first = list_wal(env).lowest;
  kv_scan_options so = {0};
  so.family_ids = &f.rare;
  so.n_families = 1;
  kv_scan *s;
  assert_int_equal(kv_scan_open(db, &so, &s), KV_OK);
  kv_row r;
  assert_int_equal(kv_scan_next(s, &r), KV_OK); /* row 0 read before */
  write_checked(db, f, n0, commits());
  /* flushed since: its store files hold more cells (a count a background compaction of
     those files keeps, unlike the number of files) */
  assert_true(fam_stats(db, f.rare).cells > rare0.cells);
  assert_true(list_wal(env).lowest > first); /* the segments with those rows are gone */
  uint64_t seen = 1;
  int rc;
  while ((rc = kv_scan_next(s, &r)) == KV_OK) {
    char k[24];
    key_of(seen * RARE_EVERY, k);
    assert_int_equal(r.key_len, strlen(k));
    assert_memory_equal(r.key, k, r.key_len);
    seen++;
  }
  assert_int_equal(rc, KV_ERR_NOTFOUND);
  assert_int_equal(seen, 4); /* the scan's own snapshot: no row committed after it opened */
  kv_scan_close(s);
  assert_int_equal(count_rows(db, f.rare, RARE_EVERY, snap), 4);
  assert_int_equal(count_rows(db, f.busy, 1, snap), (int64_t)n0);
  kv_snapshot_release(db, snap);
  check_all(db, f, n0 + commits());
  assert_int_equal(kv_close(db), KV_OK);
  kv_env_free(env);
}

/* A table with one row in the oldest segment is dropped: nothing pins that segment any
** more, and with no flush due the background trim job records it and deletes it. */
static void test_drop_table_unpins(void **state) {
  (void)state;
  kv_env *env = kv_env_mem_new(1000);
  kv_db *db = open_db(env, LIMIT, 4 << 20, 0); /* no memstore fills */
  fams f = fams_of(db, true);
  kv_family_options other = {.name = "x"};
  assert_int_equal(kv_create_table(db, "old", &other, 1), KV_OK);
  uint32_t xid;
  assert_int_equal(kv_family_id(db, "old", "x", &xid), KV_OK);
  kv_batch *b = kv_batch_new();
  assert_int_equal(kv_batch_put(b, xid, "a", 1, "q", 1, 7, "v", 1), KV_OK);
  assert_int_equal(kv_commit(db, b, NULL), KV_OK);
  kv_batch_free(b);
  assert_int_equal(commit_one(db, f, 0), KV_OK);
  uint64_t first = list_wal(env).lowest;
  /* A new segment; t's memstores flushed: only "old" pins `first` now. */
  assert_int_equal(kv_flush(db, "t"), KV_OK);
  assert_int_equal(list_wal(env).lowest, first);
  assert_int_equal(kv_drop_table(db, "old"), KV_OK);
  uint64_t n = commits();
  write_checked(db, f, 1, n - 1); /* would wait for ever if nothing recorded the unpin */
  assert_true(list_wal(env).lowest > first);
  check_all(db, f, n);
  assert_int_equal(kv_close(db), KV_OK);
  db = open_db(env, LIMIT, 4 << 20, 0);
  assert_true(wal_stats(db).replayed_bytes <= BOUND);
  check_all(db, f, n);
  assert_int_equal(kv_close(db), KV_OK);
  kv_env_free(env);
}

/* Reopening without writes does not leave one more segment per open. */
static void test_reopen_deletes_unneeded(void **state) {
  (void)state;
  kv_env *env = kv_env_mem_new(1000);
  kv_db *db = open_db(env, LIMIT, 64 << 10, 0);
  fams f = fams_of(db, true);
  for (uint64_t i = 0; i < 100; i++) assert_int_equal(commit_one(db, f, i), KV_OK);
  assert_int_equal(kv_flush(db, NULL), KV_OK);
  assert_int_equal(kv_close(db), KV_OK);
  for (int k = 0; k < 5; k++) {
    db = open_db(env, LIMIT, 64 << 10, 0);
    assert_int_equal(wal_stats(db).segments, 1);
    assert_int_equal(list_wal(env).n, 1);
    assert_int_equal(kv_close(db), KV_OK);
  }
  /* Unflushed commits pin their segment: it stays, beside the current one, but the empty
  ** segments of the opens in between do not. */
  db = open_db(env, LIMIT, 64 << 10, 0);
  for (uint64_t i = 100; i < 200; i++) assert_int_equal(commit_one(db, f, i), KV_OK);
  assert_int_equal(kv_close(db), KV_OK);
  for (int k = 0; k < 5; k++) {
    db = open_db(env, LIMIT, 64 << 10, 0);
    assert_int_equal(wal_stats(db).segments, 2);
    assert_int_equal(list_wal(env).n, 2);
    assert_true(wal_stats(db).replayed_records == 100);
    assert_int_equal(kv_close(db), KV_OK);
  }
  db = open_db(env, LIMIT, 64 << 10, 0);
  check_all(db, f, 200);
  assert_int_equal(kv_close(db), KV_OK);
  kv_env_free(env);
}

/* ---- several writers, a reader, back-pressure and the bound together ------------------ */

#define WRITERS 3

typedef struct warg {
  kv_db *db;
  fams f;
  uint64_t base, n; /* this writer commits rows base + i*WRITERS... as commit numbers */
  int over;         /* commits after which the WAL was over the bound plus the groups */
  int failed;
} warg;

static void *writer(void *p) {
  warg *a = p;
  for (uint64_t i = 0; i < a->n; i++) {
    if (commit_one(a->db, a->f, a->base + i * WRITERS) != KV_OK) a->failed++;
    kv_wal_stats ws;
    kv_wal_get_stats(a->db, &ws);
    /* Other writers' groups may be in the WAL but not yet checked: one batch each. */
    if (ws.bytes > BOUND + WRITERS * 512) a->over++;
  }
  return NULL;
}

typedef struct rarg {
  kv_db *db;
  uint32_t fid;
  atomic_bool *stop;
  int bad;
  uint64_t scans;
} rarg;

/* Rows only appear: each scan sees at least as many busy rows as the one before. */
static void *reader(void *p) {
  rarg *a = p;
  int64_t last = 0;
  while (!atomic_load(a->stop)) {
    kv_scan_options so = {0};
    so.family_ids = &a->fid;
    so.n_families = 1;
    kv_scan *s;
    if (kv_scan_open(a->db, &so, &s) != KV_OK) {
      a->bad++;
      break;
    }
    kv_row r;
    int64_t n = 0;
    int rc;
    while ((rc = kv_scan_next(s, &r)) == KV_OK) n++;
    kv_scan_close(s);
    if (rc != KV_ERR_NOTFOUND || n < last) a->bad++;
    last = n;
    a->scans++;
  }
  return NULL;
}

static void test_threads(void **state) {
  (void)state;
  kv_env *env = kv_env_mem_new(1000);
  /* memstore_limit of 96 KiB: commits wait for flushes under back-pressure too. */
  kv_db *db = open_db(env, LIMIT, 32 << 10, 96 << 10);
  fams f = fams_of(db, true);
  uint64_t per = tu_scaled(3000, 1000);
  atomic_bool stop = false;
  rarg ra = {db, f.busy, &stop, 0, 0};
  pthread_t rt, wt[WRITERS];
  warg wa[WRITERS];
  pthread_create(&rt, NULL, reader, &ra);
  for (int i = 0; i < WRITERS; i++) {
    wa[i] = (warg){db, f, (uint64_t)i, per, 0, 0};
    pthread_create(&wt[i], NULL, writer, &wa[i]);
  }
  for (int i = 0; i < WRITERS; i++) pthread_join(wt[i], NULL);
  atomic_store(&stop, true);
  pthread_join(rt, NULL);
  for (int i = 0; i < WRITERS; i++) {
    assert_int_equal(wa[i].failed, 0);
    assert_int_equal(wa[i].over, 0);
  }
  assert_int_equal(ra.bad, 0);
  uint64_t n = per * WRITERS;
  check_all(db, f, n);
  assert_int_equal(kv_close(db), KV_OK);
  db = open_db(env, LIMIT, 32 << 10, 96 << 10);
  assert_true(wal_stats(db).replayed_bytes <= BOUND + WRITERS * 512);
  check_all(db, f, n);
  assert_int_equal(kv_close(db), KV_OK);
  kv_env_free(env);
}

/* By default kv_close flushes the memstores: the reopen replays no record, every committed
** row is there, and the WAL segments left on disk hold no unflushed op (at most the current
** segment's already flushed records). A read-only open and close writes nothing. With
** keep_log_on_close the same writes are replayed (what every other test here relies on). */
static void test_close_flushes(void **state) {
  (void)state;
  kv_env *env = kv_env_mem_new(1001);
  keep_log = false;
  kv_db *db = open_db(env, LIMIT, 64 << 10, 0);
  fams f = fams_of(db, true);
  uint64_t n = commits() / 4;
  write_checked(db, f, 0, n);
  assert_true(wal_stats(db).bytes > 0);
  assert_true(fam_stats(db, f.busy).memstore_bytes > 0);
  assert_int_equal(kv_close(db), KV_OK);
  db = open_db(env, LIMIT, 64 << 10, 0);
  assert_int_equal(wal_stats(db).replayed_records, 0);
  assert_int_equal(fam_stats(db, f.busy).memstore_bytes, 0);
  assert_int_equal(fam_stats(db, f.rare).memstore_bytes, 0);
  check_all(db, fams_of(db, false), n);
  assert_int_equal(kv_close(db), KV_OK);
  /* read-only: opens, reads, closes without a write (the LOCK aside) */
  kv_options o;
  kv_options_init(&o);
  o.env = env;
  o.read_only = true;
  db = tu_kv_open_opts(&o);
  check_all(db, fams_of(db, false), n);
  assert_int_equal(kv_close(db), KV_OK);
  /* keep_log_on_close: the next open replays what the memstores held */
  keep_log = true;
  db = open_db(env, LIMIT, 64 << 10, 0);
  f = fams_of(db, false);
  write_checked(db, f, n, 10);
  assert_int_equal(kv_close(db), KV_OK);
  db = open_db(env, LIMIT, 64 << 10, 0);
  assert_true(wal_stats(db).replayed_records > 0);
  check_all(db, f, n + 10);
  assert_int_equal(kv_close(db), KV_OK);
  kv_env_free(env);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_bound_holds),
      cmocka_unit_test(test_without_bound_rare_pins),
      cmocka_unit_test(test_reopen_replays_within_bound),
      cmocka_unit_test(test_power_cut),
      cmocka_unit_test(test_failed_bound_flush),
      cmocka_unit_test(test_snapshot_and_scan),
      cmocka_unit_test(test_drop_table_unpins),
      cmocka_unit_test(test_reopen_deletes_unneeded),
      cmocka_unit_test(test_threads),
      cmocka_unit_test(test_close_flushes),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
