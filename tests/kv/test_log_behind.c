/*
** tests/kv/test_log_behind.c: the log-behind-MANIFEST check (kv_db_check_log_position,
** docs/KV_VIEWS.md). A copy of a store made file by file while it is written, the WAL copied
** first and the MANIFEST and store files later, holds store files whose transactions are only
** partly in the copied log: opening it must fail with KV_ERR_CORRUPT naming the MANIFEST,
** the WAL segment and the store files, never open with half of a transaction visible. The
** transactions here span two tables, and only one of them is flushed after the log was
** copied, which is exactly the state that showed half transactions before the check. The
** same copy with the log taken last opens whole. Also: a format 1 MANIFEST is read, and
** rewritten as format 2 by the first writable open; a read-only open leaves it as it is;
** the bytes of the format 2 header and of a LOG_POSITION record (docs/FORMAT.md).
*/
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* memmem */
#endif
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include <cmocka.h>

#include "kv/env/env_mem.h"
#include "kv/kv.h"
#include "kv/db/manifest.h"
#include "manifest_version.h"

typedef struct fams { uint32_t a, c; } fams;

static kv_db *open_at(kv_env *env, const char *path, bool create, bool read_only) {
  kv_options o;
  kv_options_init(&o);
  o.env = env;
  o.create_if_missing = create;
  o.read_only = read_only;
  o.compaction_trigger = 100;
  o.keep_log_on_close = true; /* what the copy holds is what matters, not a final flush */
  kv_db *db = NULL;
  int rc = kv_open(path, &o, &db);
  if (rc) fprintf(stderr, "open %s: %s\n", path, kv_errmsg());
  assert_int_equal(rc, KV_OK);
  return db;
}

/* Txn i: row k<i> in table t (family a) and in table s (family c), value v<i>. */
static void commit_txn(kv_db *db, const fams *f, int i) {
  char row[16], val[16];
  snprintf(row, sizeof row, "k%05d", i);
  snprintf(val, sizeof val, "v%05d", i);
  kv_batch *b = kv_batch_new();
  assert_int_equal(kv_batch_put(b, f->a, row, strlen(row), "q", 1, KV_TS_NOW, val, 6), KV_OK);
  assert_int_equal(kv_batch_put(b, f->c, row, strlen(row), "q", 1, KV_TS_NOW, val, 6), KV_OK);
  assert_int_equal(kv_commit(db, b, NULL), KV_OK);
  kv_batch_free(b);
}

/* Rows of family fid, as a bitmap of txn numbers; returns the count. */
static int rows_of(kv_db *db, uint32_t fid, bool *seen, int max) {
  kv_scan_options o;
  memset(&o, 0, sizeof o);
  o.family_ids = &fid;
  o.n_families = 1;
  kv_scan *s;
  assert_int_equal(kv_scan_open(db, &o, &s), KV_OK);
  kv_row r;
  int n = 0;
  while (kv_scan_next(s, &r) == KV_OK) {
    int i = atoi((const char *)r.key + 1);
    assert_true(i >= 0 && i < max);
    seen[i] = true;
    n++;
  }
  kv_scan_close(s);
  return n;
}

/* Every txn is in both tables or in neither; returns how many are there. */
static int check_whole(kv_db *db, int max) {
  fams f;
  assert_int_equal(kv_family_id(db, "t", "a", &f.a), KV_OK);
  assert_int_equal(kv_family_id(db, "s", "c", &f.c), KV_OK);
  bool *in_a = calloc((size_t)max, 1), *in_c = calloc((size_t)max, 1);
  int na = rows_of(db, f.a, in_a, max), nc = rows_of(db, f.c, in_c, max);
  for (int i = 0; i < max; i++) {
    if (in_a[i] != in_c[i]) fprintf(stderr, "txn %d: in t %d, in s %d\n", i, in_a[i], in_c[i]);
    assert_int_equal(in_a[i], in_c[i]);
  }
  assert_int_equal(na, nc);
  free(in_a);
  free(in_c);
  return na;
}

/* ---- copying files one by one --------------------------------------------------------- */

static void copy_file(kv_env *env, const char *from, const char *to) {
  uint8_t *buf;
  size_t len;
  assert_int_equal(kv_env_read_all(env, from, &buf, &len), KV_OK);
  kv_file *f;
  assert_int_equal(env->open(env, to, KV_OPEN_WRITE | KV_OPEN_TRUNCATE, &f), KV_OK);
  if (len) assert_int_equal(env->append(f, buf, len), KV_OK);
  assert_int_equal(env->sync(f), KV_OK);
  env->close(f);
  free(buf);
}

typedef struct names { char v[256][128]; int n; } names;
static int add_name(void *ctx, const char *name) {
  names *l = ctx;
  if (l->n < 256) snprintf(l->v[l->n++], sizeof l->v[0], "%s", name);
  return 0;
}

/* Copy the files of directory `from` whose names start with `prefix` (and, with `deep`,
** the folders below it, whole). */
static void copy_tree(kv_env *env, const char *from, const char *to, const char *prefix,
                      bool deep) {
  names *l = calloc(1, sizeof *l);
  assert_int_equal(env->list(env, from, add_name, l), KV_OK);
  assert_int_equal(env->mkdir(env, to), KV_OK);
  for (int i = 0; i < l->n; i++) {
    char a[512], b[512];
    snprintf(a, sizeof a, "%s/%s", from, l->v[i]);
    snprintf(b, sizeof b, "%s/%s", to, l->v[i]);
    names sub;
    sub.n = 0;
    bool dir = env->list(env, a, add_name, &sub) == KV_OK;
    if (dir && deep) copy_tree(env, a, b, "", true);
    else if (!dir && !strncmp(l->v[i], prefix, strlen(prefix))) copy_file(env, a, b);
  }
  free(l);
}

static void make_tables(kv_db *db, fams *f) {
  kv_family_options a = {.name = "a"}, c = {.name = "c"};
  assert_int_equal(kv_create_table(db, "t", &a, 1), KV_OK);
  assert_int_equal(kv_create_table(db, "s", &c, 1), KV_OK);
  assert_int_equal(kv_family_id(db, "t", "a", &f->a), KV_OK);
  assert_int_equal(kv_family_id(db, "s", "c", &f->c), KV_OK);
}

static void test_log_copied_first(void **state) {
  (void)state;
  kv_env *env = kv_env_mem_new(1);
  kv_db *db = open_at(env, "/db", true, false);
  fams f;
  make_tables(db, &f);
  for (int i = 0; i < 100; i++) commit_txn(db, &f, i);
  assert_int_equal(kv_flush(db, NULL), KV_OK);
  for (int i = 100; i < 150; i++) commit_txn(db, &f, i);
  /* the copy begins: the log first */
  copy_tree(env, "/db", "/copy", "wal-", false);
  /* the store goes on: txns 150..199 reach the log, and table t alone is flushed: its file
     holds t's half of them, s's half is only in the log the copy does not have */
  for (int i = 150; i < 200; i++) commit_txn(db, &f, i);
  assert_int_equal(kv_flush(db, "t"), KV_OK);
  /* then the MANIFEST and the store files */
  copy_file(env, "/db/MANIFEST", "/copy/MANIFEST");
  copy_tree(env, "/db/data", "/copy/data", "", true);
  kv_options o;
  kv_options_init(&o);
  o.env = env;
  for (int ro = 0; ro < 2; ro++) {
    o.read_only = ro;
    kv_db *c = NULL;
    assert_int_equal(kv_open("/copy", &o, &c), KV_ERR_CORRUPT);
    assert_null(c);
    const char *m = kv_errmsg();
    fprintf(stderr, "%s open: %s\n", ro ? "read-only" : "writable", m);
    assert_non_null(strstr(m, "the log ends before what the MANIFEST and the store files show"));
    assert_non_null(strstr(m, "/copy/MANIFEST"));
    assert_non_null(strstr(m, "/copy/wal-"));
    assert_non_null(strstr(m, "/copy/data/"));
    assert_non_null(strstr(m, ".sf"));
  }
  /* the same copy with the log taken last is whole: every txn up to the last */
  copy_tree(env, "/db", "/copy", "wal-", false);
  kv_db *c = open_at(env, "/copy", false, false);
  assert_int_equal(check_whole(c, 200), 200);
  kv_close(c);
  kv_close(db);
  kv_env_free(env);
}

/* Segments missing from the copy altogether: the same error, naming the segment missing. */
static void test_log_segment_missing(void **state) {
  (void)state;
  kv_env *env = kv_env_mem_new(1);
  kv_db *db = open_at(env, "/db", true, false);
  fams f;
  make_tables(db, &f);
  for (int i = 0; i < 50; i++) commit_txn(db, &f, i);
  copy_tree(env, "/db", "/copy", "wal-", false);
  assert_int_equal(kv_flush(db, NULL), KV_OK); /* a new segment ... */
  for (int i = 50; i < 80; i++) commit_txn(db, &f, i);
  assert_int_equal(kv_flush(db, "t"), KV_OK);  /* ... whose txns t's file holds */
  copy_file(env, "/db/MANIFEST", "/copy/MANIFEST");
  copy_tree(env, "/db/data", "/copy/data", "", true);
  kv_options o;
  kv_options_init(&o);
  o.env = env;
  kv_db *c = NULL;
  assert_int_equal(kv_open("/copy", &o, &c), KV_ERR_CORRUPT);
  assert_non_null(strstr(kv_errmsg(), "it is missing"));
  kv_close(db);
  kv_env_free(env);
}

/* A store whose MANIFEST is format 1 (written before LOG_POSITION): read as it is; a
** read-only open leaves it alone, the first writable open rewrites it in format 4. */
static void test_format1_manifest(void **state) {
  (void)state;
  kv_env *env = kv_env_mem_new(1);
  kv_db *db = open_at(env, "/db", true, false);
  fams f;
  make_tables(db, &f);
  for (int i = 0; i < 30; i++) commit_txn(db, &f, i);
  assert_int_equal(kv_close(db), KV_OK); /* nothing flushed: no LOG_POSITION edit yet */
  /* turn the header record's version into 1 (and its checksum with it) */
  assert_int_equal(tu_manifest_set_version(env, "/db/MANIFEST", 1), 4);
  uint8_t *buf;
  size_t len;
  db = open_at(env, "/db", false, true); /* read-only: read, not rewritten */
  assert_int_equal(check_whole(db, 30), 30);
  kv_close(db);
  assert_int_equal(kv_env_read_all(env, "/db/MANIFEST", &buf, &len), KV_OK);
  assert_int_equal(buf[24], 1);
  free(buf);
  db = open_at(env, "/db", false, false);
  assert_int_equal(check_whole(db, 30), 30);
  for (int i = 30; i < 40; i++) commit_txn(db, &f, i);
  assert_int_equal(kv_flush(db, NULL), KV_OK);
  kv_close(db);
  assert_int_equal(kv_env_read_all(env, "/db/MANIFEST", &buf, &len), KV_OK);
  assert_int_equal(buf[24], 4);
  free(buf);
  db = open_at(env, "/db", false, false);
  assert_int_equal(check_whole(db, 40), 40);
  kv_close(db);
  kv_env_free(env);
}

/* docs/FORMAT.md's worked examples: the version 4 header record, and a LOG_POSITION group
** (segment 7, offset 3600, sequence number 401). */
static void test_log_position_bytes(void **state) {
  (void)state;
  kv_env *env = kv_env_mem_new(1);
  assert_int_equal(env->mkdir(env, "/m"), KV_OK);
  kv_manifest *m;
  kv_version v;
  assert_int_equal(kv_manifest_open(env, "/m", true, &m, &v), KV_OK);
  kv_edit e;
  memset(&e, 0, sizeof e);
  e.kind = KV_EDIT_LOG_POSITION;
  e.log_segment = 7;
  e.log_offset = 3600;
  e.log_seq = 401;
  assert_int_equal(kv_manifest_apply(m, &v, &e, 1), KV_OK);
  assert_int_equal(v.log_segment, 7);
  assert_int_equal(v.log_offset, 3600);
  assert_int_equal(v.log_seq, 401);
  e.log_offset = 100; /* an earlier position leaves it as it is */
  assert_int_equal(kv_manifest_apply(m, &v, &e, 1), KV_OK);
  assert_int_equal(v.log_offset, 3600);
  kv_manifest_close(m);
  uint8_t *buf;
  size_t len;
  assert_int_equal(kv_env_read_all(env, "/m/MANIFEST", &buf, &len), KV_OK);
  static const uint8_t header[28] = {0x0c, 0x00, 0x00, 0x00, 0x5f, 0xf5, 0xf4, 0x26, 0xc8, 0x49,
                                     0x34, 0xc8, 0x15, 0x5b, 0xbc, 0xe7, 'R', 'O', 'W', 'A',
                                     'N', 'M', 'F', '1', 0x04, 0x00, 0x00, 0x00};
  static const uint8_t rec[23] = {0x07, 0x00, 0x00, 0x00, 0x4c, 0xc1, 0x28, 0x16,
                                  0x81, 0x21, 0x1c, 0x2d, 0x9b, 0xf6, 0x35, 0x3c,
                                  0x01, 0x08, 0x07, 0x90, 0x1c, 0x91, 0x03};
  assert_memory_equal(buf, header, sizeof header);
  assert_non_null(memmem(buf, len, rec, sizeof rec));
  free(buf);
  /* replayed: the later position stays */
  assert_int_equal(kv_manifest_open(env, "/m", false, &m, &v), KV_OK);
  assert_int_equal(v.log_segment, 7);
  assert_int_equal(v.log_offset, 3600);
  kv_manifest_close(m);
  kv_version_free(&v);
  kv_env_free(env);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_log_copied_first),
      cmocka_unit_test(test_log_segment_missing),
      cmocka_unit_test(test_format1_manifest),
      cmocka_unit_test(test_log_position_bytes),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
