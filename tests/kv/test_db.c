/*
** tests/kv/test_db.c: the store as a whole through kv.h on the in-memory env: open and
** create, tables and families, commit and read back, WAL replay at reopen (records in the
** record form and, as older builds wrote them, in the batch form), flush and reopen,
** the LOCK, read-only stores, group commit sharing syncs among 8 writer threads, a failed
** WAL write putting the store into its refusing state, dropping a table.
** Not here: scan semantics (test_scan.c), compaction (test_compaction.c), bad input
** (test_badinput.c).
*/
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>

#include <stdlib.h>
#include <xxhash.h>

#include "kv/util/coding.h"
#include "kv/db/db_impl.h" /* kv_batch_payload */
#include "kv/env/env_mem.h"
#include "kv/kv.h"
#include "testutil.h"

static kv_db *open_db(kv_env *env, int sync_mode, size_t flush_size) {
  kv_options o;
  kv_options_init(&o);
  o.env = env;
  o.create_if_missing = true;
  o.sync_mode = sync_mode;
  o.memstore_flush_size = flush_size;
  o.keep_log_on_close = true; /* a reopen replays the WAL: what these tests check */
  kv_db *db = NULL;
  int rc = kv_open("/db", &o, &db);
  if (rc) fprintf(stderr, "kv_open: %s\n", kv_errmsg());
  assert_int_equal(rc, KV_OK);
  return db;
}

static uint32_t make_table(kv_db *db, const char *name, uint32_t *second) {
  kv_family_options f[2] = {{.name = "a", .max_versions = 3}, {.name = "b"}};
  assert_int_equal(kv_create_table(db, name, f, 2), KV_OK);
  uint32_t id;
  assert_int_equal(kv_family_id(db, name, "a", &id), KV_OK);
  if (second) assert_int_equal(kv_family_id(db, name, "b", second), KV_OK);
  return id;
}

static void put(kv_db *db, uint32_t fid, const char *row, const char *qual, int64_t ts,
                const char *val) {
  kv_batch *b = kv_batch_new();
  assert_int_equal(kv_batch_put(b, fid, row, strlen(row), qual, strlen(qual), ts, val,
                                strlen(val)), KV_OK);
  assert_int_equal(kv_commit(db, b, NULL), KV_OK);
  kv_batch_free(b);
}

/* Value of (row, qual) in family fid, or NULL; copies into buf. */
static const char *get(kv_db *db, uint32_t fid, const char *row, const char *qual,
                       char *buf, size_t cap) {
  kv_scan_options so = {0};
  so.family_ids = &fid;
  so.n_families = 1;
  kv_scan *s;
  kv_row r;
  int rc = kv_get(db, &so, row, strlen(row), &s, &r);
  const char *res = NULL;
  if (rc == KV_OK) {
    for (uint32_t i = 0; i < r.n_cells; i++) {
      if (r.cells[i].qual_len == strlen(qual) && !memcmp(r.cells[i].qual, qual, strlen(qual))) {
        snprintf(buf, cap, "%.*s", (int)r.cells[i].value_len, (const char *)r.cells[i].value);
        res = buf;
      }
    }
  } else {
    assert_int_equal(rc, KV_ERR_NOTFOUND);
  }
  kv_scan_close(s);
  return res;
}

static void test_open_create_and_reopen(void **state) {
  kv_env *env = kv_env_mem_new(1000000);
  kv_options o;
  kv_options_init(&o);
  o.env = env;
  kv_db *db;
  assert_int_equal(kv_open("/db", &o, &db), KV_ERR_NOTFOUND);
  assert_null(db);
  assert_non_null(strstr(kv_errmsg(), "/db"));
  db = open_db(env, KV_SYNC_FULL, 0);
  uint32_t fb;
  uint32_t fa = make_table(db, "t", &fb);
  assert_int_not_equal(fa, fb);
  put(db, fa, "r1", "q", 5, "v1");
  put(db, fb, "r1", "q", 5, "w1");
  assert_int_equal(kv_table_count(db), 1);
  assert_string_equal(kv_table_name(db, 0), "t");
  assert_int_equal(kv_close(db), KV_OK);

  db = open_db(env, KV_SYNC_FULL, 0);
  uint32_t fa2;
  assert_int_equal(kv_family_id(db, "t", "a", &fa2), KV_OK);
  assert_int_equal(fa2, fa);
  kv_family_options info;
  assert_int_equal(kv_family_info(db, fa, &info), KV_OK);
  assert_string_equal(info.name, "a");
  assert_int_equal(info.max_versions, 3);
  /* no BLOCKSIZE given: the default is filled in and kept across the reopen */
  assert_int_equal(info.block_size, KV_DEFAULT_BLOCK_SIZE);
  assert_int_equal(info.block_size, 8192);
  char buf[64];
  assert_string_equal(get(db, fa, "r1", "q", buf, sizeof buf), "v1");
  assert_string_equal(get(db, fb, "r1", "q", buf, sizeof buf), "w1");
  assert_null(get(db, fa, "r2", "q", buf, sizeof buf));
  assert_true(kv_last_sequence(db) >= 2);
  assert_int_equal(kv_close(db), KV_OK);
  kv_env_free(env);
}

static void test_flush_and_reopen(void **state) {
  kv_env *env = kv_env_mem_new(1000000);
  kv_db *db = open_db(env, KV_SYNC_FULL, 0);
  uint32_t fb;
  uint32_t fa = make_table(db, "t", &fb);
  int n = (int)tu_scaled(2000, 200);
  kv_batch *b = kv_batch_new();
  for (int i = 0; i < n; i++) {
    char row[32], val[32];
    snprintf(row, sizeof row, "row%06d", i);
    snprintf(val, sizeof val, "val%d", i);
    kv_batch_clear(b);
    assert_int_equal(kv_batch_put(b, fa, row, strlen(row), "q", 1, 10, val, strlen(val)), KV_OK);
    assert_int_equal(kv_commit(db, b, NULL), KV_OK);
    if (i == n / 2) assert_int_equal(kv_flush(db, "t"), KV_OK);
  }
  kv_batch_free(b);
  kv_family_stats st;
  assert_int_equal(kv_family_get_stats(db, fa, &st), KV_OK);
  assert_int_equal(st.store_files, 1);
  assert_true(st.memstore_cells > 0);
  /* the open file's reader holds at least a 32-byte index entry a block */
  uint64_t one_file = st.reader_bytes;
  assert_true(one_file >= st.blocks * 32);
  assert_int_equal(kv_flush(db, NULL), KV_OK);
  assert_int_equal(kv_family_get_stats(db, fa, &st), KV_OK);
  assert_int_equal(st.store_files, 2);
  assert_true(st.reader_bytes > one_file); /* a second open file */
  uint64_t two_files = st.reader_bytes;
  assert_int_equal(st.memstore_cells, 0);
  assert_int_equal(st.cells, (uint64_t)n);
  uint64_t rows, bytes;
  assert_int_equal(kv_estimate_rows(db, fa, NULL, &rows, &bytes), KV_OK);
  assert_true(rows > 0 && rows <= (uint64_t)n * 2);
  assert_int_equal(kv_close(db), KV_OK);

  db = open_db(env, KV_SYNC_FULL, 0);
  assert_int_equal(kv_family_get_stats(db, fa, &st), KV_OK);
  assert_int_equal(st.reader_bytes, two_files); /* the same files opened again */
  kv_family_stats sb;
  assert_int_equal(kv_family_get_stats(db, fb, &sb), KV_OK);
  assert_int_equal(sb.store_files, 0);
  assert_int_equal(sb.reader_bytes, 0); /* no file, nothing held */
  char buf[64];
  for (int i = 0; i < n; i += n / 17 + 1) {
    char row[32], val[32];
    snprintf(row, sizeof row, "row%06d", i);
    snprintf(val, sizeof val, "val%d", i);
    assert_string_equal(get(db, fa, row, "q", buf, sizeof buf), val);
  }
  /* a full scan sees every row once, in order */
  kv_scan_options so = {0};
  so.family_ids = &fa;
  so.n_families = 1;
  kv_scan *s;
  assert_int_equal(kv_scan_open(db, &so, &s), KV_OK);
  kv_row r;
  int cnt = 0;
  while (kv_scan_next(s, &r) == KV_OK) {
    char row[32];
    snprintf(row, sizeof row, "row%06d", cnt);
    assert_int_equal(r.key_len, strlen(row));
    assert_memory_equal(r.key, row, r.key_len);
    cnt++;
  }
  assert_int_equal(cnt, n);
  kv_scan_close(s);
  assert_int_equal(kv_close(db), KV_OK);
  kv_env_free(env);
}

static void test_auto_flush_bounds_memory(void **state) {
  kv_env *env = kv_env_mem_new(1000000);
  kv_db *db = open_db(env, KV_SYNC_OFF, 64 * 1024);
  uint32_t fa = make_table(db, "t", NULL);
  char val[200];
  memset(val, 'x', sizeof val - 1);
  val[sizeof val - 1] = 0;
  int n = (int)tu_scaled(3000, 1000);
  for (int i = 0; i < n; i++) {
    char row[32];
    snprintf(row, sizeof row, "r%08d", i);
    put(db, fa, row, "q", 1, val);
  }
  /* Flushes run in the background (issue 8): commits only froze the full memstores. Every
  ** cell is in exactly one place at any moment; the frozen ones drain to store files. */
  kv_family_stats st;
  assert_int_equal(kv_family_get_stats(db, fa, &st), KV_OK);
  assert_int_equal(st.cells + st.memstore_cells, (uint64_t)n);
  for (int i = 0; i < 100000 && (st.store_files == 0 || st.memstore_bytes >= 64 * 1024); i++) {
    nanosleep(&(struct timespec){0, 100000}, NULL);
    assert_int_equal(kv_family_get_stats(db, fa, &st), KV_OK);
  }
  assert_true(st.store_files >= 1);
  assert_true(st.memstore_bytes < 64 * 1024 + 1024); /* only the active memstore is left */
  assert_int_equal(st.cells + st.memstore_cells, (uint64_t)n);
  assert_int_equal(kv_close(db), KV_OK);
  db = open_db(env, KV_SYNC_OFF, 64 * 1024);
  char buf[256];
  assert_string_equal(get(db, fa, "r00000000", "q", buf, sizeof buf), val);
  char last[32];
  snprintf(last, sizeof last, "r%08d", n - 1);
  assert_string_equal(get(db, fa, last, "q", buf, sizeof buf), val);
  assert_int_equal(kv_close(db), KV_OK);
  kv_env_free(env);
}

static void test_lock(void **state) {
  kv_env *env = kv_env_mem_new(1000000);
  kv_db *db = open_db(env, KV_SYNC_FULL, 0);
  kv_options o;
  kv_options_init(&o);
  o.env = env;
  kv_db *db2;
  assert_int_equal(kv_open("/db", &o, &db2), KV_ERR_LOCKED);
  assert_null(db2);
  assert_non_null(strstr(kv_errmsg(), "database is locked"));
  assert_int_equal(kv_close(db), KV_OK);
  assert_int_equal(kv_open("/db", &o, &db2), KV_OK);
  assert_int_equal(kv_close(db2), KV_OK);
  kv_env_free(env);
}

static void test_read_only(void **state) {
  kv_env *env = kv_env_mem_new(1000000);
  kv_db *db = open_db(env, KV_SYNC_FULL, 0);
  uint32_t fa = make_table(db, "t", NULL);
  put(db, fa, "r", "q", 1, "v");
  assert_int_equal(kv_close(db), KV_OK);
  kv_options o;
  kv_options_init(&o);
  o.env = env;
  o.read_only = true;
  assert_int_equal(kv_open("/db", &o, &db), KV_OK);
  char buf[16];
  assert_string_equal(get(db, fa, "r", "q", buf, sizeof buf), "v");
  kv_batch *b = kv_batch_new();
  assert_int_equal(kv_batch_put(b, fa, "r", 1, "q", 1, 2, "w", 1), KV_OK);
  assert_int_equal(kv_commit(db, b, NULL), KV_ERR_READONLY);
  assert_non_null(strstr(kv_errmsg(), "read-only"));
  kv_family_options f = {.name = "x"};
  assert_int_equal(kv_create_table(db, "u", &f, 1), KV_ERR_READONLY);
  assert_int_equal(kv_drop_table(db, "t"), KV_ERR_READONLY);
  assert_int_equal(kv_flush(db, NULL), KV_ERR_READONLY);
  assert_int_equal(kv_compact(db, NULL, true), KV_ERR_READONLY);
  kv_batch_free(b);
  assert_int_equal(kv_close(db), KV_OK);
  kv_env_free(env);
}

typedef struct writer_arg {
  kv_db *db;      /* store */
  uint32_t fid;   /* family */
  int id;         /* thread number */
  int n;          /* commits to do */
} writer_arg;

static void *writer_main(void *p) {
  writer_arg *a = p;
  kv_batch *b = kv_batch_new();
  for (int i = 0; i < a->n; i++) {
    char row[32];
    snprintf(row, sizeof row, "t%d-%06d", a->id, i);
    kv_batch_clear(b);
    kv_batch_put(b, a->fid, row, strlen(row), "q", 1, 1, "v", 1);
    if (kv_commit(a->db, b, NULL) != KV_OK) abort();
  }
  kv_batch_free(b);
  return NULL;
}

/* The mem env syncs in no time, so writers rarely overlap; a sync that takes a little
** while (as fdatasync does) lets the queue fill. Only the sync count is asserted. */
static int (*mem_sync)(kv_file *f);
static int slow_sync(kv_file *f) {
  struct timespec ts = {0, 300 * 1000};
  nanosleep(&ts, NULL);
  return mem_sync(f);
}

static void test_group_commit_shares_syncs(void **state) {
  kv_env *env = kv_env_mem_new(1000000);
  mem_sync = env->sync;
  env->sync = slow_sync;
  kv_db *db = open_db(env, KV_SYNC_FULL, 0);
  uint32_t fa = make_table(db, "t", NULL);
  enum { THREADS = 8 };
  int per = (int)tu_scaled(400, 100);
  kv_env_mem_stats before, after;
  kv_env_mem_get_stats(env, &before);
  uint64_t seq0 = kv_last_sequence(db);
  pthread_t th[THREADS];
  writer_arg args[THREADS];
  for (int i = 0; i < THREADS; i++) {
    args[i] = (writer_arg){db, fa, i, per};
    pthread_create(&th[i], NULL, writer_main, &args[i]);
  }
  for (int i = 0; i < THREADS; i++) pthread_join(th[i], NULL);
  kv_env_mem_get_stats(env, &after);
  uint64_t commits = (uint64_t)THREADS * (uint64_t)per;
  uint64_t syncs = after.syncs - before.syncs;
  fprintf(stderr, "group commit: %llu commits, %llu syncs\n", (unsigned long long)commits,
          (unsigned long long)syncs);
  assert_int_equal(kv_last_sequence(db) - seq0, commits);
  assert_true(syncs < commits);
  assert_true(syncs >= 1);
  /* every commit is there after a reopen */
  assert_int_equal(kv_close(db), KV_OK);
  db = open_db(env, KV_SYNC_FULL, 0);
  kv_scan_options so = {0};
  so.family_ids = &fa;
  so.n_families = 1;
  kv_scan *s;
  assert_int_equal(kv_scan_open(db, &so, &s), KV_OK);
  kv_row r;
  uint64_t cnt = 0;
  while (kv_scan_next(s, &r) == KV_OK) cnt++;
  assert_int_equal(cnt, commits);
  kv_scan_close(s);
  assert_int_equal(kv_close(db), KV_OK);
  kv_env_free(env);
}

static void test_wal_failure_refuses_writes(void **state) {
  kv_env *env = kv_env_mem_new(1000000);
  kv_db *db = open_db(env, KV_SYNC_FULL, 0);
  uint32_t fa = make_table(db, "t", NULL);
  put(db, fa, "a", "q", 1, "1");
  kv_env_mem_fail(env, KV_FAULT_SYNC, 1, "wal-", KV_FAULT_EIO, 0);
  kv_batch *b = kv_batch_new();
  kv_batch_put(b, fa, "b", 1, "q", 1, 1, "2", 1);
  uint64_t seq = kv_last_sequence(db);
  assert_int_equal(kv_commit(db, b, NULL), KV_ERR_IO);
  assert_int_equal(kv_last_sequence(db), seq); /* not applied */
  char buf[16];
  assert_null(get(db, fa, "b", "q", buf, sizeof buf));
  kv_batch_clear(b);
  kv_batch_put(b, fa, "c", 1, "q", 1, 1, "3", 1);
  assert_int_equal(kv_commit(db, b, NULL), KV_ERR_IO); /* sticky */
  assert_non_null(strstr(kv_errmsg(), "refuses writes"));
  assert_string_equal(get(db, fa, "a", "q", buf, sizeof buf), "1"); /* reads still work */
  kv_close(db);
  kv_env_mem_clear_faults(env);
  db = open_db(env, KV_SYNC_FULL, 0);
  assert_string_equal(get(db, fa, "a", "q", buf, sizeof buf), "1");
  assert_null(get(db, fa, "c", "q", buf, sizeof buf));
  assert_int_equal(kv_commit(db, b, NULL), KV_OK);
  assert_string_equal(get(db, fa, "c", "q", buf, sizeof buf), "3");
  kv_batch_free(b);
  assert_int_equal(kv_close(db), KV_OK);
  kv_env_free(env);
}

/* A later commit is never older than an earlier one: when the wall clock steps back, a
** KV_TS_NOW write still replaces the one before it (regression: it used to lose to it). */
static void test_clock_step_back_keeps_order(void **state) {
  kv_env *env = kv_env_mem_new(1000000);
  kv_db *db = open_db(env, KV_SYNC_FULL, 0);
  uint32_t fa = make_table(db, "t", NULL);
  put(db, fa, "r", "q", KV_TS_NOW, "old");
  kv_env_mem_set_time(env, 400000); /* NTP stepped the clock back */
  put(db, fa, "r", "q", KV_TS_NOW, "new");
  char buf[16];
  assert_non_null(get(db, fa, "r", "q", buf, sizeof buf));
  assert_string_equal(buf, "new");
  assert_int_equal(kv_flush(db, NULL), KV_OK);
  assert_non_null(get(db, fa, "r", "q", buf, sizeof buf));
  assert_string_equal(buf, "new");
  assert_int_equal(kv_close(db), KV_OK);
  kv_env_free(env);
}

static void test_drop_table(void **state) {
  kv_env *env = kv_env_mem_new(1000000);
  kv_db *db = open_db(env, KV_SYNC_FULL, 0);
  uint32_t fa = make_table(db, "t", NULL);
  put(db, fa, "a", "q", 1, "1");
  assert_int_equal(kv_flush(db, NULL), KV_OK);
  put(db, fa, "b", "q", 1, "2");
  assert_int_equal(kv_drop_table(db, "t"), KV_OK);
  uint32_t id;
  assert_int_equal(kv_family_id(db, "t", "a", &id), KV_ERR_NOTFOUND);
  kv_batch *b = kv_batch_new();
  kv_batch_put(b, fa, "c", 1, "q", 1, 1, "3", 1);
  assert_int_equal(kv_commit(db, b, NULL), KV_ERR_NOTFOUND);
  kv_batch_free(b);
  assert_int_equal(kv_table_count(db), 0);
  /* a new table of the same name gets new family ids and none of the old data */
  uint32_t fa2 = make_table(db, "t", NULL);
  assert_true(fa2 > fa);
  char buf[16];
  assert_null(get(db, fa2, "a", "q", buf, sizeof buf));
  assert_int_equal(kv_close(db), KV_OK);
  db = open_db(env, KV_SYNC_FULL, 0);
  assert_int_equal(kv_table_count(db), 1);
  assert_null(get(db, fa2, "b", "q", buf, sizeof buf));
  assert_int_equal(kv_close(db), KV_OK);
  kv_env_free(env);
}

static int count_wal(void *ctx, const char *name) {
  if (strncmp(name, "wal-", 4) == 0) (*(int *)ctx)++;
  return 0;
}

typedef struct wal_names { char v[8][64]; int n; } wal_names;

static int note_wal(void *ctx, const char *name) {
  wal_names *w = ctx;
  if (strncmp(name, "wal-", 4) == 0 && w->n < 8) snprintf(w->v[w->n++], 64, "/db/%s", name);
  return 0;
}

/* A WAL written before the record form (each op with its own family id, row key and
** timestamp) replays at open: the committed rows are read back. */
static void test_batch_form_wal_replays_at_open(void **state) {
  kv_env *env = kv_env_mem_new(1000000);
  kv_db *db = open_db(env, KV_SYNC_FULL, 0);
  uint32_t fb;
  uint32_t fa = make_table(db, "t", &fb);
  kv_batch *b = kv_batch_new();
  for (int i = 0; i < 3; i++) {
    char row[16], v[16];
    snprintf(row, sizeof row, "row%d", i);
    for (int q = 0; q < 2; q++) {
      snprintf(v, sizeof v, "a%d%d", i, q);
      assert_int_equal(kv_batch_put(b, fa, row, strlen(row), q ? "y" : "x", 1, 7, v, 3), KV_OK);
    }
    snprintf(v, sizeof v, "b%d", i);
    assert_int_equal(kv_batch_put(b, fb, row, strlen(row), "z", 1, 7, v, 2), KV_OK);
  }
  uint64_t last;
  assert_int_equal(kv_commit(db, b, &last), KV_OK);
  assert_int_equal(kv_close(db), KV_OK);
  /* The one segment holding a record: replace it by the batch-form record. */
  wal_names w = {0};
  assert_int_equal(env->list(env, "/db", note_wal, &w), KV_OK);
  int found = 0;
  size_t len;
  const uint8_t *payload = kv_batch_payload(b, &len);
  for (int i = 0; i < w.n; i++) {
    uint8_t *old;
    size_t olen;
    assert_int_equal(kv_env_read_all(env, w.v[i], &old, &olen), KV_OK);
    if (olen) {
      found++;
      assert_true(olen < 32 + len); /* the store wrote the shorter record form */
      uint8_t *rec = malloc(32 + len);
      kv_put_u32le(rec, (uint32_t)len);
      kv_put_u32le(rec + 4, (uint32_t)XXH3_64bits(rec, 4));
      kv_put_u64le(rec + 16, last - kv_batch_count(b) + 1);
      kv_put_u64le(rec + 24, 1);
      memcpy(rec + 32, payload, len);
      kv_put_u64le(rec + 8, XXH3_64bits(rec + 16, 16 + len));
      kv_file *f;
      assert_int_equal(env->open(env, w.v[i], KV_OPEN_WRITE | KV_OPEN_TRUNCATE, &f), KV_OK);
      assert_int_equal(env->append(f, rec, 32 + len), KV_OK);
      assert_int_equal(env->sync(f), KV_OK);
      env->close(f);
      free(rec);
    }
    free(old);
  }
  assert_int_equal(found, 1);
  kv_batch_free(b);
  db = open_db(env, KV_SYNC_FULL, 0);
  char buf[64], want[16];
  for (int i = 0; i < 3; i++) {
    char row[16];
    snprintf(row, sizeof row, "row%d", i);
    snprintf(want, sizeof want, "a%d0", i);
    assert_string_equal(get(db, fa, row, "x", buf, sizeof buf), want);
    snprintf(want, sizeof want, "a%d1", i);
    assert_string_equal(get(db, fa, row, "y", buf, sizeof buf), want);
    snprintf(want, sizeof want, "b%d", i);
    assert_string_equal(get(db, fb, row, "z", buf, sizeof buf), want);
  }
  assert_int_equal(kv_last_sequence(db), last);
  assert_int_equal(kv_close(db), KV_OK);
  kv_env_free(env);
}

/* Flushes delete the WAL segments no family needs; a family with unflushed data keeps its
** segments alive. */
static void test_wal_segments_deleted(void **state) {
  kv_env *env = kv_env_mem_new(1000000);
  kv_db *db = open_db(env, KV_SYNC_FULL, 0);
  uint32_t fb;
  uint32_t fa = make_table(db, "t", &fb);
  put(db, fb, "keep", "q", 1, "b"); /* family b stays unflushed in the first segment */
  put(db, fa, "r", "q", 1, "v");
  kv_family_options fo = {.name = "c"};
  assert_int_equal(kv_create_table(db, "u", &fo, 1), KV_OK);
  uint32_t fc;
  assert_int_equal(kv_family_id(db, "u", "c", &fc), KV_OK);
  for (int i = 0; i < 4; i++) {
    put(db, fc, "r", "q", i, "v");
    assert_int_equal(kv_flush(db, "u"), KV_OK);
  }
  int n = 0;
  assert_int_equal(env->list(env, "/db", count_wal, &n), KV_OK);
  assert_true(n >= 5); /* t's memstores pin the first segment and everything after */
  assert_int_equal(kv_flush(db, NULL), KV_OK);
  n = 0;
  assert_int_equal(env->list(env, "/db", count_wal, &n), KV_OK);
  assert_int_equal(n, 1); /* only the current segment is left */
  assert_int_equal(kv_close(db), KV_OK);
  db = open_db(env, KV_SYNC_FULL, 0);
  char buf[16];
  assert_string_equal(get(db, fb, "keep", "q", buf, sizeof buf), "b");
  assert_string_equal(get(db, fc, "r", "q", buf, sizeof buf), "v");
  assert_int_equal(kv_close(db), KV_OK);
  kv_env_free(env);
}

/* memstore_limit: with a large per-family threshold, the total over families stays bounded
** because the largest memstore is flushed when the total passes the limit. */
static void test_memstore_limit(void **state) {
  kv_env *env = kv_env_mem_new(1000000);
  kv_options o;
  kv_options_init(&o);
  o.env = env;
  o.create_if_missing = true;
  o.sync_mode = KV_SYNC_OFF;
  o.memstore_limit = 128 * 1024;
  kv_db *db;
  assert_int_equal(kv_open("/db", &o, &db), KV_OK);
  uint32_t fb;
  uint32_t fa = make_table(db, "t", &fb);
  char val[100];
  memset(val, 'v', sizeof val - 1);
  val[sizeof val - 1] = 0;
  int n = (int)tu_scaled(4000, 2000);
  for (int i = 0; i < n; i++) {
    char row[32];
    snprintf(row, sizeof row, "r%08d", i);
    put(db, i % 3 ? fa : fb, row, "q", 1, val);
    kv_family_stats sa, sb;
    assert_int_equal(kv_family_get_stats(db, fa, &sa), KV_OK);
    assert_int_equal(kv_family_get_stats(db, fb, &sb), KV_OK);
    assert_true(sa.memstore_bytes + sb.memstore_bytes <= o.memstore_limit);
  }
  kv_family_stats sa, sb;
  assert_int_equal(kv_family_get_stats(db, fa, &sa), KV_OK);
  assert_int_equal(kv_family_get_stats(db, fb, &sb), KV_OK);
  assert_true(sa.store_files + sb.store_files >= 2);
  assert_int_equal(sa.cells + sa.memstore_cells + sb.cells + sb.memstore_cells, (uint64_t)n);
  assert_int_equal(kv_close(db), KV_OK);
  kv_env_free(env);
}

/* kv_estimate_rows: the block index and the memstore give a figure near the truth. */
static void test_estimate_rows(void **state) {
  kv_env *env = kv_env_mem_new(1000000);
  kv_db *db = open_db(env, KV_SYNC_OFF, 0);
  kv_family_options fo = {.name = "a", .block_size = 1024};
  assert_int_equal(kv_create_table(db, "t", &fo, 1), KV_OK);
  uint32_t fa;
  assert_int_equal(kv_family_id(db, "t", "a", &fa), KV_OK);
  kv_batch *b = kv_batch_new();
  for (int i = 0; i < 10000; i++) {
    char row[32];
    snprintf(row, sizeof row, "r%06d", i);
    kv_batch_put(b, fa, row, strlen(row), "q", 1, 1, "some value", 10);
    if (i == 7999) {
      assert_int_equal(kv_commit(db, b, NULL), KV_OK);
      kv_batch_clear(b);
      assert_int_equal(kv_flush(db, NULL), KV_OK);
    }
  }
  assert_int_equal(kv_commit(db, b, NULL), KV_OK); /* 2000 rows stay in the memstore */
  kv_batch_free(b);
  uint64_t rows, bytes;
  assert_int_equal(kv_estimate_rows(db, fa, NULL, &rows, &bytes), KV_OK);
  assert_true(rows >= 9000 && rows <= 11000);
  assert_true(bytes > 0);
  kv_range r = {(const uint8_t *)"r002000", 7, true, (const uint8_t *)"r004000", 7, false};
  assert_int_equal(kv_estimate_rows(db, fa, &r, &rows, &bytes), KV_OK);
  assert_true(rows >= 1500 && rows <= 2500);
  kv_range m = {(const uint8_t *)"r009000", 7, true, NULL, 0, false};
  assert_int_equal(kv_estimate_rows(db, fa, &m, &rows, &bytes), KV_OK);
  assert_true(rows >= 1000 && rows <= 1100); /* memstore rows are counted exactly */
  assert_int_equal(kv_close(db), KV_OK);
  kv_env_free(env);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_open_create_and_reopen),
    cmocka_unit_test(test_flush_and_reopen),
    cmocka_unit_test(test_batch_form_wal_replays_at_open),
    cmocka_unit_test(test_auto_flush_bounds_memory),
    cmocka_unit_test(test_lock),
    cmocka_unit_test(test_read_only),
    cmocka_unit_test(test_group_commit_shares_syncs),
    cmocka_unit_test(test_wal_failure_refuses_writes),
    cmocka_unit_test(test_drop_table),
    cmocka_unit_test(test_clock_step_back_keeps_order),
    cmocka_unit_test(test_wal_segments_deleted),
    cmocka_unit_test(test_memstore_limit),
    cmocka_unit_test(test_estimate_rows),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
