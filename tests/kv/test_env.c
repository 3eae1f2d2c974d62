/*
** tests/kv/test_env.c: the file-system seam. The POSIX env (in a mkdtemp folder under
** /tmp, removed afterwards) and the in-memory env must behave alike for open, append, read,
** size, truncate, rename, remove, mkdir, list and the LOCK; the in-memory env must really
** lose unsynced bytes and directory changes on a power cut, and each armed fault must fire
** once with its status code. Both map a file read-only (map, unmap): the mapping holds the
** file's bytes, outlives the closed and removed file, and an empty file is refused with an
** error naming it (a store file reader then preads).
*/
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kv/env/env.h"
#include "kv/env/env_mem.h"
#include "testutil.h"

/* ---- helpers ---- */

static void write_file(kv_env *env, const char *path, const char *text, int sync) {
  kv_file *f;
  assert_int_equal(env->open(env, path, KV_OPEN_WRITE | KV_OPEN_TRUNCATE, &f), KV_OK);
  assert_int_equal(env->append(f, text, strlen(text)), KV_OK);
  if (sync) assert_int_equal(env->sync(f), KV_OK);
  assert_int_equal(env->close(f), KV_OK);
}

/* Read the whole file as a string into out (cap bytes); returns the status. */
static int slurp(kv_env *env, const char *path, char *out, size_t cap) {
  uint8_t *b;
  size_t n;
  int rc = kv_env_read_all(env, path, &b, &n);
  if (rc != KV_OK) return rc;
  assert_true(n < cap);
  memcpy(out, b, n);
  out[n] = 0;
  free(b);
  return KV_OK;
}

typedef struct names { char v[16][64]; int n; } names;

static int collect(void *ctx, const char *name) {
  names *s = ctx;
  assert_true(s->n < 16);
  snprintf(s->v[s->n++], 64, "%s", name);
  return 0;
}

static int stop_at_first(void *ctx, const char *name) {
  (*(int *)ctx)++;
  return 1;
}

static int has_name(const names *s, const char *name) {
  for (int i = 0; i < s->n; i++)
    if (strcmp(s->v[i], name) == 0) return 1;
  return 0;
}

/* The common behaviour both envs must show, under directory `root` (which exists). */
static void exercise(kv_env *env, const char *root) {
  char a[512], b[512], d[512], buf[256];
  snprintf(a, sizeof a, "%s/a.txt", root);
  snprintf(b, sizeof b, "%s/b.txt", root);
  snprintf(d, sizeof d, "%s/x/y/z", root);

  /* Missing files. */
  kv_file *f = (kv_file *)1;
  assert_int_equal(env->open(env, a, KV_OPEN_READ, &f), KV_ERR_NOTFOUND);
  assert_null(f);
  assert_non_null(strstr(kv_errmsg(), "a.txt"));
  assert_int_equal(env->exists(env, a), 0);
  assert_int_equal(env->remove(env, a), KV_ERR_NOTFOUND);

  /* Append, size, read at offsets, read past the end. */
  assert_int_equal(env->open(env, a, KV_OPEN_WRITE, &f), KV_OK);
  assert_int_equal(env->append(f, "hello ", 6), KV_OK);
  assert_int_equal(env->append(f, "world", 5), KV_OK);
  uint64_t size;
  assert_int_equal(env->size(f, &size), KV_OK);
  assert_int_equal(size, 11);
  size_t got;
  assert_int_equal(env->read(f, 6, buf, 100, &got), KV_OK);
  assert_int_equal(got, 5);
  assert_memory_equal(buf, "world", 5);
  assert_int_equal(env->read(f, 11, buf, 10, &got), KV_OK);
  assert_int_equal(got, 0);
  assert_int_equal(env->sync(f), KV_OK);
  /* Truncate cuts, later appends go to the new end. */
  assert_int_equal(env->truncate(f, 5), KV_OK);
  assert_int_equal(env->append(f, "!", 1), KV_OK);
  assert_int_equal(env->close(f), KV_OK);
  assert_int_equal(slurp(env, a, buf, sizeof buf), KV_OK);
  assert_string_equal(buf, "hello!");
  assert_int_equal(env->exists(env, a), 1);

  /* Reopen for writing appends; KV_OPEN_TRUNCATE starts empty. */
  assert_int_equal(env->open(env, a, KV_OPEN_WRITE, &f), KV_OK);
  assert_int_equal(env->append(f, "?", 1), KV_OK);
  assert_int_equal(env->close(f), KV_OK);
  assert_int_equal(slurp(env, a, buf, sizeof buf), KV_OK);
  assert_string_equal(buf, "hello!?");
  write_file(env, b, "bee", 1);
  assert_int_equal(slurp(env, b, buf, sizeof buf), KV_OK);
  assert_string_equal(buf, "bee");

  /* A read-only handle refuses appends. */
  assert_int_equal(env->open(env, a, KV_OPEN_READ, &f), KV_OK);
  assert_int_not_equal(env->append(f, "x", 1), KV_OK);
  assert_int_equal(env->close(f), KV_OK);

  /* Rename replaces the target; the source is gone. */
  assert_int_equal(env->rename(env, a, b), KV_OK);
  assert_int_equal(env->exists(env, a), 0);
  assert_int_equal(slurp(env, b, buf, sizeof buf), KV_OK);
  assert_string_equal(buf, "hello!?");
  assert_int_equal(env->rename(env, a, b), KV_ERR_NOTFOUND);

  /* mkdir -p, idempotent; listing shows files and folders, not "." or "..". */
  assert_int_equal(env->mkdir(env, d), KV_OK);
  assert_int_equal(env->mkdir(env, d), KV_OK);
  assert_int_equal(env->exists(env, d), 1);
  names s = {0};
  assert_int_equal(env->list(env, root, collect, &s), KV_OK);
  assert_int_equal(s.n, 2);
  assert_true(has_name(&s, "b.txt"));
  assert_true(has_name(&s, "x"));
  int calls = 0;
  assert_int_equal(env->list(env, root, stop_at_first, &calls), KV_OK); /* stops early */
  assert_int_equal(calls, 1);
  char missing[512];
  snprintf(missing, sizeof missing, "%s/nope", root);
  assert_int_equal(env->list(env, missing, collect, &s), KV_ERR_NOTFOUND);
  assert_int_equal(env->open(env, missing, KV_OPEN_READ, &f), KV_ERR_NOTFOUND);
  char nested[600];
  snprintf(nested, sizeof nested, "%s/f", missing);
  assert_int_equal(env->open(env, nested, KV_OPEN_WRITE, &f), KV_ERR_NOTFOUND);
  assert_int_equal(env->sync_dir(env, root), KV_OK);
  assert_int_equal(env->sync_dir(env, d), KV_OK);

  /* rmdir refuses a non-empty folder. */
  char xy[512];
  snprintf(xy, sizeof xy, "%s/x/y", root);
  assert_int_not_equal(env->rmdir(env, xy), KV_OK);
  assert_int_equal(env->rmdir(env, d), KV_OK);
  assert_int_equal(env->rmdir(env, xy), KV_OK);
  snprintf(xy, sizeof xy, "%s/x", root);
  assert_int_equal(env->rmdir(env, xy), KV_OK);
  assert_int_equal(env->exists(env, xy), 0);

  /* The LOCK: a second taker (same process) gets KV_ERR_LOCKED, "database is locked". */
  char lockp[512];
  snprintf(lockp, sizeof lockp, "%s/LOCK", root);
  kv_file *l1, *l2 = (kv_file *)1;
  assert_int_equal(env->lock(env, lockp, &l1), KV_OK);
  assert_int_equal(env->lock(env, lockp, &l2), KV_ERR_LOCKED);
  assert_null(l2);
  assert_non_null(strstr(kv_errmsg(), "database is locked"));
  assert_int_equal(env->unlock(env, l1), KV_OK);
  assert_int_equal(env->lock(env, lockp, &l2), KV_OK);
  assert_int_equal(env->unlock(env, l2), KV_OK);

  /* Clean up. */
  assert_int_equal(env->remove(env, b), KV_OK);
  assert_int_equal(env->remove(env, lockp), KV_OK);
  s.n = 0;
  assert_int_equal(env->list(env, root, collect, &s), KV_OK);
  assert_int_equal(s.n, 0);
  int64_t t = env->now_ms(env);
  assert_true(t > 1600000000000LL); /* after 2020: a wall clock in milliseconds */
}

/* map() of a file holding `text`: its bytes, kept after close and remove; an empty file
** refused. */
static void exercise_map(kv_env *env, const char *dir) {
  char path[128], empty[128];
  snprintf(path, sizeof path, "%s/mapped", dir);
  snprintf(empty, sizeof empty, "%s/empty", dir);
  const char *text = "store files never change once written";
  write_file(env, path, text, 1);
  write_file(env, empty, "", 1);
  kv_file *f;
  const uint8_t *p = NULL;
  assert_int_equal(env->open(env, path, KV_OPEN_READ, &f), KV_OK);
  assert_int_equal(env->map(f, strlen(text), &p), KV_OK);
  assert_int_equal(env->close(f), KV_OK);
  assert_int_equal(env->remove(env, path), KV_OK);
  assert_memory_equal(p, text, strlen(text));
  env->unmap(p, strlen(text));
  assert_int_equal(env->open(env, empty, KV_OPEN_READ, &f), KV_OK);
  assert_int_not_equal(env->map(f, 0, &p), KV_OK);
  assert_null(p);
  assert_non_null(strstr(kv_errmsg(), "empty"));
  assert_int_equal(env->close(f), KV_OK);
  assert_int_equal(env->remove(env, empty), KV_OK);
}

/* ---- POSIX ---- */

static void test_posix_map(void **state) {
  char dir[] = "/tmp/rowan_map_XXXXXX";
  assert_non_null(mkdtemp(dir));
  exercise_map(kv_env_posix(), dir);
  assert_int_equal(kv_env_posix()->rmdir(kv_env_posix(), dir), KV_OK);
}

static void test_mem_map(void **state) {
  kv_env *env = kv_env_mem_new(0);
  assert_null(env->map); /* offered only when a test asks */
  kv_env_mem_set_map(env, true);
  assert_int_equal(env->mkdir(env, "/db"), KV_OK);
  exercise_map(env, "/db");
  kv_env_mem_set_map(env, false);
  assert_null(env->map);
  kv_env_free(env);
}

static void test_posix_behaves(void **state) {
  char dir[] = "/tmp/rowan_env_XXXXXX";
  assert_non_null(mkdtemp(dir));
  exercise(kv_env_posix(), dir);
  assert_int_equal(kv_env_posix()->rmdir(kv_env_posix(), dir), KV_OK);
}

static void test_posix_lock_across_processes(void **state) {
  char dir[] = "/tmp/rowan_lock_XXXXXX";
  assert_non_null(mkdtemp(dir));
  char lockp[64];
  snprintf(lockp, sizeof lockp, "%s/LOCK", dir);
  kv_env *env = kv_env_posix();
  kv_file *l;
  assert_int_equal(env->lock(env, lockp, &l), KV_OK);
  /* Another process is refused while we hold it... */
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    kv_file *l2;
    int rc = env->lock(env, lockp, &l2);
    _exit(rc == KV_ERR_LOCKED && strstr(kv_errmsg(), "database is locked") ? 0 : 1);
  }
  int status;
  assert_int_equal(waitpid(pid, &status, 0), pid);
  assert_true(WIFEXITED(status));
  assert_int_equal(WEXITSTATUS(status), 0);
  /* ... and gets it once we let go. */
  assert_int_equal(env->unlock(env, l), KV_OK);
  pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    kv_file *l2;
    _exit(env->lock(env, lockp, &l2) == KV_OK ? 0 : 1);
  }
  assert_int_equal(waitpid(pid, &status, 0), pid);
  assert_true(WIFEXITED(status));
  assert_int_equal(WEXITSTATUS(status), 0);
  assert_int_equal(env->remove(env, lockp), KV_OK);
  assert_int_equal(env->rmdir(env, dir), KV_OK);
}

static void test_posix_enospc(void **state) {
  /* /dev/full fails every write with ENOSPC: the seam must say KV_ERR_NOSPC. */
  kv_env *env = kv_env_posix();
  kv_file *f;
  assert_int_equal(env->open(env, "/dev/full", KV_OPEN_WRITE, &f), KV_OK);
  assert_int_equal(env->append(f, "x", 1), KV_ERR_NOSPC);
  assert_non_null(strstr(kv_errmsg(), "/dev/full"));
  assert_non_null(strstr(kv_errmsg(), "No space"));
  env->close(f);
}

/* ---- in memory ---- */

static void test_mem_behaves(void **state) {
  kv_env *env = kv_env_mem_new(0);
  assert_int_equal(env->mkdir(env, "/db"), KV_OK);
  exercise(env, "/db");
  kv_env_free(env);
  /* Relative paths work too. */
  env = kv_env_mem_new(0);
  assert_int_equal(env->mkdir(env, "db"), KV_OK);
  exercise(env, "db");
  kv_env_free(env);
}

static void test_mem_power_cut_drops_unsynced_bytes(void **state) {
  kv_env *env = kv_env_mem_new(1000);
  char buf[64];
  assert_int_equal(env->mkdir(env, "/d"), KV_OK);
  kv_file *f;
  assert_int_equal(env->open(env, "/d/f", KV_OPEN_WRITE, &f), KV_OK);
  assert_int_equal(env->sync_dir(env, "/d"), KV_OK);
  assert_int_equal(env->append(f, "synced", 6), KV_OK);
  assert_int_equal(env->sync(f), KV_OK);
  assert_int_equal(env->append(f, "+lost", 5), KV_OK);
  assert_int_equal(slurp(env, "/d/f", buf, sizeof buf), KV_OK);
  assert_string_equal(buf, "synced+lost"); /* visible before the cut */
  kv_env_mem_power_cut(env);
  assert_int_equal(slurp(env, "/d/f", buf, sizeof buf), KV_OK);
  assert_string_equal(buf, "synced");
  env->close(f);

  /* A truncate into synced bytes that was never synced is undone too. */
  assert_int_equal(env->open(env, "/d/f", KV_OPEN_WRITE, &f), KV_OK);
  assert_int_equal(env->truncate(f, 2), KV_OK);
  assert_int_equal(env->append(f, "XY", 2), KV_OK);
  assert_int_equal(slurp(env, "/d/f", buf, sizeof buf), KV_OK);
  assert_string_equal(buf, "syXY");
  kv_env_mem_power_cut(env);
  assert_int_equal(slurp(env, "/d/f", buf, sizeof buf), KV_OK);
  assert_string_equal(buf, "synced");
  /* ... and kept once synced. */
  assert_int_equal(env->truncate(f, 2), KV_OK);
  assert_int_equal(env->append(f, "XY", 2), KV_OK);
  assert_int_equal(env->sync(f), KV_OK);
  kv_env_mem_power_cut(env);
  assert_int_equal(slurp(env, "/d/f", buf, sizeof buf), KV_OK);
  assert_string_equal(buf, "syXY");
  env->close(f);
  kv_env_free(env);
}

static void test_mem_power_cut_undoes_directory_changes(void **state) {
  kv_env *env = kv_env_mem_new(1000);
  char buf[64];
  assert_int_equal(env->mkdir(env, "/d"), KV_OK);
  /* A created, synced file whose directory entry was never synced disappears. */
  write_file(env, "/d/new", "data", 1);
  kv_env_mem_power_cut(env);
  assert_int_equal(env->exists(env, "/d/new"), 0);

  /* An unsynced rename is undone: the old name comes back with its content, the new
  ** name holds what it held before. */
  write_file(env, "/d/MANIFEST", "old", 1);
  write_file(env, "/d/MANIFEST.tmp", "new", 1);
  assert_int_equal(env->sync_dir(env, "/d"), KV_OK);
  assert_int_equal(env->rename(env, "/d/MANIFEST.tmp", "/d/MANIFEST"), KV_OK);
  assert_int_equal(slurp(env, "/d/MANIFEST", buf, sizeof buf), KV_OK);
  assert_string_equal(buf, "new");
  kv_env_mem_power_cut(env);
  assert_int_equal(slurp(env, "/d/MANIFEST", buf, sizeof buf), KV_OK);
  assert_string_equal(buf, "old");
  assert_int_equal(env->exists(env, "/d/MANIFEST.tmp"), 1);

  /* Synced, the rename survives. */
  assert_int_equal(env->rename(env, "/d/MANIFEST.tmp", "/d/MANIFEST"), KV_OK);
  assert_int_equal(env->sync_dir(env, "/d"), KV_OK);
  kv_env_mem_power_cut(env);
  assert_int_equal(slurp(env, "/d/MANIFEST", buf, sizeof buf), KV_OK);
  assert_string_equal(buf, "new");
  assert_int_equal(env->exists(env, "/d/MANIFEST.tmp"), 0);

  /* An unsynced remove is undone; a synced one is not. */
  assert_int_equal(env->remove(env, "/d/MANIFEST"), KV_OK);
  kv_env_mem_power_cut(env);
  assert_int_equal(env->exists(env, "/d/MANIFEST"), 1);
  assert_int_equal(env->remove(env, "/d/MANIFEST"), KV_OK);
  assert_int_equal(env->sync_dir(env, "/d"), KV_OK);
  kv_env_mem_power_cut(env);
  assert_int_equal(env->exists(env, "/d/MANIFEST"), 0);

  /* Syncing another directory does not make this one's entries durable. */
  assert_int_equal(env->mkdir(env, "/e"), KV_OK);
  write_file(env, "/d/g", "g", 1);
  assert_int_equal(env->sync_dir(env, "/e"), KV_OK);
  kv_env_mem_power_cut(env);
  assert_int_equal(env->exists(env, "/d/g"), 0);
  kv_env_free(env);
}

/* Arm `op`/`kind`, run `fn` until it fails, and check it failed exactly on the nth try. */
typedef int (*op_fn)(kv_env *env, kv_file *f, int i);

static int do_append(kv_env *env, kv_file *f, int i) { return env->append(f, "abcd", 4); }
static int do_sync(kv_env *env, kv_file *f, int i) { return env->sync(f); }
static int do_sync_dir(kv_env *env, kv_file *f, int i) { return env->sync_dir(env, "/d"); }
static int do_rename(kv_env *env, kv_file *f, int i) {
  char a[32], b[32];
  snprintf(a, sizeof a, "/d/r%d", i);
  snprintf(b, sizeof b, "/d/s%d", i);
  return env->rename(env, a, b);
}
static int do_open(kv_env *env, kv_file *f, int i) {
  char a[32];
  kv_file *g;
  snprintf(a, sizeof a, "/d/o%d", i);
  int rc = env->open(env, a, KV_OPEN_WRITE, &g);
  if (rc == KV_OK) env->close(g);
  return rc;
}
static int do_remove(kv_env *env, kv_file *f, int i) {
  char a[32];
  snprintf(a, sizeof a, "/d/o%d", i);
  return env->remove(env, a);
}

static void check_fault(int op, int kind, op_fn fn, uint64_t nth, int expect) {
  kv_env *env = kv_env_mem_new(1000);
  assert_int_equal(env->mkdir(env, "/d"), KV_OK);
  kv_file *f;
  assert_int_equal(env->open(env, "/d/f", KV_OPEN_WRITE, &f), KV_OK);
  for (int i = 0; i < 8; i++) {
    char a[32];
    snprintf(a, sizeof a, "/d/o%d", i);
    write_file(env, a, "o", 0);
    snprintf(a, sizeof a, "/d/r%d", i);
    write_file(env, a, "r", 0);
  }
  kv_env_mem_fail(env, op, nth, NULL, kind, 0);
  kv_env_mem_stats before, after;
  int64_t size_before = -1;
  for (uint64_t i = 0; i < nth + 2; i++) {
    if (i + 1 == nth) {
      kv_env_mem_get_stats(env, &before);
      size_before = kv_env_mem_file_size(env, "/d/f");
    }
    int rc = fn(env, f, (int)i);
    if (i + 1 == nth) {
      assert_int_equal(rc, expect);
      assert_non_null(strstr(kv_errmsg(), "/d"));
      kv_env_mem_get_stats(env, &after);
      /* Nothing happened. */
      assert_int_equal(kv_env_mem_file_size(env, "/d/f"), size_before);
      assert_int_equal(after.appends + after.syncs + after.renames + after.opens +
                       after.removes + after.sync_dirs,
                       before.appends + before.syncs + before.renames + before.opens +
                       before.removes + before.sync_dirs);
    } else {
      assert_int_equal(rc, KV_OK); /* fires once, on the nth only */
    }
  }
  env->close(f);
  kv_env_free(env);
}

static void test_mem_faults_fire_once(void **state) {
  check_fault(KV_FAULT_APPEND, KV_FAULT_EIO, do_append, 1, KV_ERR_IO);
  check_fault(KV_FAULT_APPEND, KV_FAULT_ENOSPC, do_append, 3, KV_ERR_NOSPC);
  check_fault(KV_FAULT_SYNC, KV_FAULT_EIO, do_sync, 2, KV_ERR_IO);
  check_fault(KV_FAULT_SYNC_DIR, KV_FAULT_EIO, do_sync_dir, 1, KV_ERR_IO);
  check_fault(KV_FAULT_RENAME, KV_FAULT_EIO, do_rename, 2, KV_ERR_IO);
  check_fault(KV_FAULT_OPEN, KV_FAULT_ENOSPC, do_open, 1, KV_ERR_NOSPC);
  check_fault(KV_FAULT_REMOVE, KV_FAULT_EIO, do_remove, 4, KV_ERR_IO);
}

static void test_mem_fault_path_filter_and_clear(void **state) {
  kv_env *env = kv_env_mem_new(1000);
  assert_int_equal(env->mkdir(env, "/d"), KV_OK);
  kv_file *wal, *other;
  assert_int_equal(env->open(env, "/d/wal-1.log", KV_OPEN_WRITE, &wal), KV_OK);
  assert_int_equal(env->open(env, "/d/000001.sf", KV_OPEN_WRITE, &other), KV_OK);
  kv_env_mem_fail(env, KV_FAULT_APPEND, 1, "wal-", KV_FAULT_EIO, 0);
  assert_int_equal(env->append(other, "x", 1), KV_OK); /* not matching: untouched */
  assert_int_equal(env->append(wal, "x", 1), KV_ERR_IO);
  assert_int_equal(env->append(wal, "x", 1), KV_OK);
  kv_env_mem_fail(env, KV_FAULT_SYNC, 1, NULL, KV_FAULT_EIO, 0);
  kv_env_mem_clear_faults(env);
  assert_int_equal(env->sync(wal), KV_OK);
  env->close(wal);
  env->close(other);
  kv_env_free(env);
}

static void test_mem_torn_append_lands_prefix(void **state) {
  kv_env *env = kv_env_mem_new(1000);
  assert_int_equal(env->mkdir(env, "/d"), KV_OK);
  kv_file *f;
  assert_int_equal(env->open(env, "/d/f", KV_OPEN_WRITE, &f), KV_OK);
  assert_int_equal(env->append(f, "head:", 5), KV_OK);
  kv_env_mem_fail(env, KV_FAULT_APPEND, 1, NULL, KV_FAULT_TORN, 3);
  assert_int_equal(env->append(f, "0123456789", 10), KV_ERR_IO);
  assert_non_null(strstr(kv_errmsg(), "torn"));
  char buf[64];
  assert_int_equal(slurp(env, "/d/f", buf, sizeof buf), KV_OK);
  assert_string_equal(buf, "head:012");
  /* A torn size larger than the write lands the whole write, still failing. */
  kv_env_mem_fail(env, KV_FAULT_APPEND, 1, NULL, KV_FAULT_TORN, 100);
  assert_int_equal(env->append(f, "ab", 2), KV_ERR_IO);
  assert_int_equal(kv_env_mem_file_size(env, "/d/f"), 10);
  env->close(f);
  /* A write torn after 0 bytes into a file with no data yet lands nothing and still fails
     (the file's buffer is not allocated yet: nothing may be copied into it). */
  kv_file *g;
  assert_int_equal(env->open(env, "/d/g", KV_OPEN_WRITE, &g), KV_OK);
  kv_env_mem_fail(env, KV_FAULT_APPEND, 1, NULL, KV_FAULT_TORN, 0);
  assert_int_equal(env->append(g, "xyz", 3), KV_ERR_IO);
  assert_int_equal(kv_env_mem_file_size(env, "/d/g"), 0);
  env->close(g);
  kv_env_free(env);
}

static void test_mem_crashed_mode(void **state) {
  kv_env *env = kv_env_mem_new(1000);
  assert_int_equal(env->mkdir(env, "/d"), KV_OK);
  kv_file *f, *g, *l;
  assert_int_equal(env->open(env, "/d/f", KV_OPEN_WRITE, &f), KV_OK);
  assert_int_equal(env->sync_dir(env, "/d"), KV_OK);
  assert_int_equal(env->lock(env, "/d/LOCK", &l), KV_OK);
  assert_int_equal(env->append(f, "kept", 4), KV_OK);
  kv_env_mem_set_crashed(env, true);
  assert_int_equal(env->append(f, "x", 1), KV_ERR_IO);
  assert_non_null(strstr(kv_errmsg(), "crashed"));
  assert_int_equal(env->sync(f), KV_ERR_IO);
  assert_int_equal(env->open(env, "/d/g", KV_OPEN_WRITE, &g), KV_ERR_IO);
  assert_int_equal(env->rename(env, "/d/f", "/d/h"), KV_ERR_IO);
  /* Handles can still be released. */
  assert_int_equal(env->close(f), KV_OK);
  assert_int_equal(env->unlock(env, l), KV_OK);
  /* A process crash without power loss keeps written bytes. */
  kv_env_mem_recover(env);
  assert_int_equal(kv_env_mem_file_size(env, "/d/f"), 4);
  /* A power cut then drops them. */
  kv_env_mem_power_cut(env);
  assert_int_equal(kv_env_mem_file_size(env, "/d/f"), 0);
  assert_int_equal(env->lock(env, "/d/LOCK", &l), KV_OK);
  assert_int_equal(env->unlock(env, l), KV_OK);
  kv_env_free(env);
}

static void test_mem_damage_helpers_stats_clock(void **state) {
  kv_env *env = kv_env_mem_new(123456);
  assert_int_equal(env->now_ms(env), 123456);
  kv_env_mem_set_time(env, 999);
  assert_int_equal(env->now_ms(env), 999);
  assert_int_equal(env->mkdir(env, "/d"), KV_OK);
  write_file(env, "/d/f", "abcdef", 0);
  assert_int_equal(env->sync_dir(env, "/d"), KV_OK);
  assert_int_equal(kv_env_mem_set_byte(env, "/d/f", 5, 'Z'), KV_OK);
  uint8_t v;
  assert_int_equal(kv_env_mem_get_byte(env, "/d/f", 5, &v), KV_OK);
  assert_int_equal(v, 'Z');
  assert_int_equal(kv_env_mem_set_byte(env, "/d/f", 6, 'Z'), KV_ERR_INVALID);
  assert_int_equal(kv_env_mem_set_byte(env, "/d/nope", 0, 'Z'), KV_ERR_NOTFOUND);
  /* Damage counts as synced: it survives a power cut. */
  kv_env_mem_power_cut(env);
  char buf[16];
  assert_int_equal(slurp(env, "/d/f", buf, sizeof buf), KV_OK);
  assert_string_equal(buf, "abcdeZ");
  assert_int_equal(kv_env_mem_shrink(env, "/d/f", 2), KV_OK);
  assert_int_equal(slurp(env, "/d/f", buf, sizeof buf), KV_OK);
  assert_string_equal(buf, "ab");
  assert_int_equal(kv_env_mem_file_size(env, "/d/nope"), -1);

  kv_env_mem_stats s0, s1;
  kv_env_mem_get_stats(env, &s0);
  kv_file *f;
  assert_int_equal(env->open(env, "/d/f", KV_OPEN_WRITE, &f), KV_OK);
  assert_int_equal(env->append(f, "123", 3), KV_OK);
  assert_int_equal(env->sync(f), KV_OK);
  size_t got;
  assert_int_equal(env->read(f, 0, buf, 5, &got), KV_OK);
  env->close(f);
  kv_env_mem_get_stats(env, &s1);
  assert_int_equal(s1.opens - s0.opens, 1);
  assert_int_equal(s1.appends - s0.appends, 1);
  assert_int_equal(s1.bytes_appended - s0.bytes_appended, 3);
  assert_int_equal(s1.syncs - s0.syncs, 1);
  assert_int_equal(s1.reads - s0.reads, 1);
  assert_int_equal(s1.bytes_read - s0.bytes_read, 5);
  kv_env_free(env);
}

typedef struct appender { kv_env *env; kv_file *f; int n; } appender;

static void *append_thread(void *arg) {
  appender *a = arg;
  for (int i = 0; i < a->n; i++) a->env->append(a->f, "0123456789abcdef", 16);
  return NULL;
}

static void test_mem_threads(void **state) {
  kv_env *env = kv_env_mem_new(0);
  assert_int_equal(env->mkdir(env, "/d"), KV_OK);
  kv_file *f;
  assert_int_equal(env->open(env, "/d/f", KV_OPEN_WRITE, &f), KV_OK);
  int n = (int)tu_scaled(2000, 100);
  pthread_t t[4];
  appender a = {env, f, n};
  for (int i = 0; i < 4; i++) assert_int_equal(pthread_create(&t[i], NULL, append_thread, &a), 0);
  for (int i = 0; i < 4; i++) pthread_join(t[i], NULL);
  assert_int_equal(kv_env_mem_file_size(env, "/d/f"), 4 * 16 * n);
  /* Appends are whole: every 16-byte slot holds the full pattern. */
  uint8_t *buf;
  size_t len;
  assert_int_equal(kv_env_read_all(env, "/d/f", &buf, &len), KV_OK);
  for (size_t i = 0; i < len; i += 16) assert_memory_equal(buf + i, "0123456789abcdef", 16);
  free(buf);
  env->close(f);
  kv_env_free(env);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_posix_behaves),
    cmocka_unit_test(test_posix_lock_across_processes),
    cmocka_unit_test(test_posix_enospc),
    cmocka_unit_test(test_posix_map),
    cmocka_unit_test(test_mem_map),
    cmocka_unit_test(test_mem_behaves),
    cmocka_unit_test(test_mem_power_cut_drops_unsynced_bytes),
    cmocka_unit_test(test_mem_power_cut_undoes_directory_changes),
    cmocka_unit_test(test_mem_faults_fire_once),
    cmocka_unit_test(test_mem_fault_path_filter_and_clear),
    cmocka_unit_test(test_mem_torn_append_lands_prefix),
    cmocka_unit_test(test_mem_crashed_mode),
    cmocka_unit_test(test_mem_damage_helpers_stats_clock),
    cmocka_unit_test(test_mem_threads),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
