/*
** tests/kv/test_compaction.c: minor and major compaction through kv.h on the in-memory env:
** minor keeps every cell (reads unchanged, tombstones kept), major drops tombstones, masked
** cells, versions beyond VERSIONS and expired cells (reads unchanged, fewer cells on disk),
** an acquired snapshot keeps seeing what it saw, automatic minor compaction at
** compaction_trigger files (size-tiered: a large old file left alone), input files
** deleted only after open scans release them, and store files unknown to the MANIFEST
** deleted at open.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "kv/env/env_mem.h"
#include "kv/kv.h"
#include "kv/sf/sf.h"
#include "testutil.h"

#define T0 1700000000000ll

typedef struct fx {
  kv_env *env;    /* in-memory file system */
  kv_db *db;      /* store */
  uint32_t a;     /* family a of table t: VERSIONS 2, TTL 100 s */
} fx;

static void fx_open(fx *f, int trigger) {
  kv_options o;
  kv_options_init(&o);
  o.env = f->env;
  o.create_if_missing = true;
  o.compaction_trigger = trigger;
  assert_int_equal(kv_open("/db", &o, &f->db), KV_OK);
}

static fx *fx_new(int trigger) {
  fx *f = calloc(1, sizeof *f);
  f->env = kv_env_mem_new(T0);
  fx_open(f, trigger);
  kv_family_options fo = {.name = "a", .max_versions = 2, .ttl_sec = 100};
  assert_int_equal(kv_create_table(f->db, "t", &fo, 1), KV_OK);
  assert_int_equal(kv_family_id(f->db, "t", "a", &f->a), KV_OK);
  return f;
}

static void fx_free(fx *f) {
  assert_int_equal(kv_close(f->db), KV_OK);
  kv_env_free(f->env);
  free(f);
}

static void op(fx *f, int type, const char *row, const char *qual, int64_t ts) {
  kv_batch *b = kv_batch_new();
  if (type == KV_PUT)
    assert_int_equal(kv_batch_put(b, f->a, row, strlen(row), qual, strlen(qual), ts, row,
                                  strlen(row)), KV_OK);
  else
    assert_int_equal(kv_batch_delete(b, f->a, type, row, strlen(row), qual, strlen(qual), ts),
                     KV_OK);
  assert_int_equal(kv_commit(f->db, b, NULL), KV_OK);
  kv_batch_free(b);
}

/* Text of a full scan with many versions, at `snap` (0 = latest). */
static void dump(fx *f, uint64_t snap, char *out, size_t cap) {
  kv_scan_options so = {0};
  so.family_ids = &f->a;
  so.n_families = 1;
  so.max_versions = 10;
  so.snapshot = snap;
  kv_scan *s;
  assert_int_equal(kv_scan_open(f->db, &so, &s), KV_OK);
  kv_row r;
  size_t len = 0;
  out[0] = 0;
  while (kv_scan_next(s, &r) == KV_OK) {
    len += (size_t)snprintf(out + len, cap - len, "%.*s:", (int)r.key_len, (const char *)r.key);
    for (uint32_t i = 0; i < r.n_cells; i++)
      len += (size_t)snprintf(out + len, cap - len, "%.*s@%lld ", (int)r.cells[i].qual_len,
                              (const char *)r.cells[i].qual, (long long)r.cells[i].ts);
    assert_true(len < cap);
  }
  kv_scan_close(s);
}

static kv_family_stats stats(fx *f) {
  kv_family_stats st;
  assert_int_equal(kv_family_get_stats(f->db, f->a, &st), KV_OK);
  return st;
}

/* A history with something for every drop rule, spread over three store files. */
static void history(fx *f) {
  op(f, KV_PUT, "r1", "q", T0 - 1);
  op(f, KV_PUT, "r1", "q", T0 - 2);
  op(f, KV_PUT, "r1", "q", T0 - 3);        /* beyond VERSIONS 2 */
  op(f, KV_PUT, "r2", "q", T0 - 500000);   /* expired (TTL 100 s) */
  op(f, KV_PUT, "r2", "x", T0 - 10);
  assert_int_equal(kv_flush(f->db, NULL), KV_OK);
  op(f, KV_PUT, "r3", "q", T0 - 10);
  op(f, KV_DELETE_COLUMN, "r3", "q", T0 - 10); /* masks the put */
  op(f, KV_PUT, "r4", "q", T0 - 10);
  op(f, KV_DELETE_FAMILY, "r4", "", T0 - 20);  /* masks nothing (older ts) */
  assert_int_equal(kv_flush(f->db, NULL), KV_OK);
  op(f, KV_DELETE_VERSION, "r1", "q", T0 - 1); /* uncovers T0-3 until a major compaction */
  op(f, KV_PUT, "r5", "q", T0 - 10);
  assert_int_equal(kv_flush(f->db, NULL), KV_OK);
}

static void test_minor_keeps_everything(void **state) {
  fx *f = fx_new(100);
  history(f);
  char before[1024], after[1024];
  dump(f, 0, before, sizeof before);
  kv_family_stats s0 = stats(f);
  assert_int_equal(s0.store_files, 3);
  assert_int_equal(kv_compact(f->db, "t", false), KV_OK);
  kv_family_stats s1 = stats(f);
  assert_int_equal(s1.store_files, 1);
  assert_int_equal(s1.cells, s0.cells);
  dump(f, 0, after, sizeof after);
  assert_string_equal(after, before);
  fx_free(f);
}

static void test_major_drops(void **state) {
  fx *f = fx_new(100);
  history(f);
  char before[1024], after[1024];
  dump(f, 0, before, sizeof before);
  assert_string_equal(before, "r1:q@1699999999998 q@1699999999997 r2:x@1699999999990 "
                              "r4:q@1699999999990 r5:q@1699999999990 ");
  kv_family_stats s0 = stats(f);
  assert_int_equal(kv_compact(f->db, NULL, true), KV_OK);
  kv_family_stats s1 = stats(f);
  assert_int_equal(s1.store_files, 1);
  assert_int_equal(s1.cells, 5); /* exactly the visible puts */
  assert_true(s1.cells < s0.cells);
  dump(f, 0, after, sizeof after);
  assert_string_equal(after, before);
  /* after a reopen too */
  assert_int_equal(kv_close(f->db), KV_OK);
  fx_open(f, 100);
  dump(f, 0, after, sizeof after);
  assert_string_equal(after, before);
  fx_free(f);
}

static void test_major_includes_memstore(void **state) {
  fx *f = fx_new(100);
  op(f, KV_PUT, "r", "q", T0 - 5);
  assert_int_equal(kv_flush(f->db, NULL), KV_OK);
  op(f, KV_DELETE_COLUMN, "r", "q", T0); /* only in the memstore */
  assert_int_equal(kv_compact(f->db, "t", true), KV_OK);
  kv_family_stats st = stats(f);
  assert_int_equal(st.cells, 0);
  assert_int_equal(st.store_files, 0);
  assert_int_equal(st.memstore_cells, 0);
  char out[256];
  dump(f, 0, out, sizeof out);
  assert_string_equal(out, "");
  fx_free(f);
}

static void test_major_keeps_snapshot_view(void **state) {
  fx *f = fx_new(100);
  op(f, KV_PUT, "a", "q", T0 - 1);
  op(f, KV_PUT, "b", "q", T0 - 1);
  uint64_t snap;
  assert_int_equal(kv_snapshot_acquire(f->db, &snap), KV_OK);
  op(f, KV_DELETE_FAMILY, "a", "", T0);
  op(f, KV_PUT, "b", "q", T0 - 2);
  op(f, KV_PUT, "b", "q", T0 - 3); /* beyond VERSIONS now, but not at the snapshot */
  char snap_before[256], latest_before[256], out[256];
  dump(f, snap, snap_before, sizeof snap_before);
  dump(f, 0, latest_before, sizeof latest_before);
  assert_int_equal(kv_compact(f->db, NULL, true), KV_OK);
  dump(f, snap, out, sizeof out);
  assert_string_equal(out, snap_before);
  dump(f, 0, out, sizeof out);
  assert_string_equal(out, latest_before);
  kv_snapshot_release(f->db, snap);
  assert_int_equal(kv_compact(f->db, NULL, true), KV_OK);
  dump(f, 0, out, sizeof out);
  assert_string_equal(out, latest_before);
  assert_int_equal(stats(f).cells, 2); /* now dropped: b@T0-1, b@T0-2 remain */
  fx_free(f);
}

static void test_auto_minor_compaction(void **state) {
  fx *f = fx_new(3);
  for (int i = 0; i < 7; i++) {
    char row[16];
    snprintf(row, sizeof row, "r%d", i);
    op(f, KV_PUT, row, "q", T0);
    assert_int_equal(kv_flush(f->db, NULL), KV_OK);
    assert_true(stats(f).store_files < 3);
  }
  char out[512];
  dump(f, 0, out, sizeof out);
  assert_string_equal(out, "r0:q@1700000000000 r1:q@1700000000000 r2:q@1700000000000 "
                           "r3:q@1700000000000 r4:q@1700000000000 r5:q@1700000000000 "
                           "r6:q@1700000000000 ");
  fx_free(f);
}

static int count_sf(kv_env *env, uint32_t fid) {
  (void)fid;
  int n = 0;
  char p[128];
  for (int num = 0; num < 200; num++) {
    snprintf(p, sizeof p, "/db/data/1/%u/%d.sf", fid, num);
    if (env->exists(env, p)) n++;
  }
  return n;
}

/* The number of the one store file of the family, -1 when it has not exactly one. */
static int only_sf(kv_env *env, uint32_t fid) {
  int found = -1;
  char p[128];
  for (int num = 0; num < 200; num++) {
    snprintf(p, sizeof p, "/db/data/1/%u/%d.sf", fid, num);
    if (env->exists(env, p)) {
      if (found >= 0) return -1;
      found = num;
    }
  }
  return found;
}

/* The automatic minor compaction is size-tiered: a large old file is not rewritten while
** the small flushes after it add up to less than it; the small ones are merged among
** themselves, the file count stays bounded, and every row stays readable. */
static void test_auto_minor_size_tiered(void **state) {
  fx *f = fx_new(3);
  char row[16];
  for (int i = 0; i < 2000; i++) { /* one large file */
    snprintf(row, sizeof row, "big%05d", i);
    op(f, KV_PUT, row, "q", T0);
  }
  assert_int_equal(kv_flush(f->db, NULL), KV_OK);
  int big = only_sf(f->env, f->a);
  assert_true(big >= 0);
  char p[128];
  snprintf(p, sizeof p, "/db/data/1/%u/%d.sf", f->a, big);
  for (int i = 0; i < 12; i++) { /* twelve one-row flushes */
    snprintf(row, sizeof row, "s%02d", i);
    op(f, KV_PUT, row, "q", T0);
    assert_int_equal(kv_flush(f->db, NULL), KV_OK);
    kv_family_stats st = stats(f);
    assert_true(st.store_files >= 1 && st.store_files < 6); /* below 2 x trigger */
    assert_true(f->env->exists(f->env, p)); /* the large file was never an input */
  }
  assert_true(stats(f).store_files >= 2);
  assert_int_equal(stats(f).cells, 2012);
  /* kv_compact's minor merges every file, the large one too */
  assert_int_equal(kv_compact(f->db, "t", false), KV_OK);
  assert_int_equal(stats(f).store_files, 1);
  assert_false(f->env->exists(f->env, p));
  assert_int_equal(stats(f).cells, 2012);
  kv_scan_options so = {0};
  so.family_ids = &f->a;
  so.n_families = 1;
  kv_scan *s;
  assert_int_equal(kv_scan_open(f->db, &so, &s), KV_OK);
  kv_row r;
  int n = 0;
  while (kv_scan_next(s, &r) == KV_OK) n++;
  kv_scan_close(s);
  assert_int_equal(n, 2012);
  fx_free(f);
}

static void test_inputs_deleted_after_scans(void **state) {
  fx *f = fx_new(100);
  op(f, KV_PUT, "r1", "q", T0);
  assert_int_equal(kv_flush(f->db, NULL), KV_OK);
  op(f, KV_PUT, "r2", "q", T0);
  assert_int_equal(kv_flush(f->db, NULL), KV_OK);
  assert_int_equal(count_sf(f->env, f->a), 2);
  kv_scan_options so = {0};
  so.family_ids = &f->a;
  so.n_families = 1;
  kv_scan *s;
  assert_int_equal(kv_scan_open(f->db, &so, &s), KV_OK);
  assert_int_equal(kv_compact(f->db, "t", false), KV_OK);
  assert_int_equal(count_sf(f->env, f->a), 3); /* inputs still read by the scan */
  kv_row r;
  assert_int_equal(kv_scan_next(s, &r), KV_OK);
  assert_int_equal(kv_scan_next(s, &r), KV_OK);
  assert_int_equal(kv_scan_next(s, &r), KV_ERR_NOTFOUND);
  kv_scan_close(s);
  assert_int_equal(count_sf(f->env, f->a), 1);
  fx_free(f);
}

static void test_unknown_files_deleted_at_open(void **state) {
  fx *f = fx_new(100);
  op(f, KV_PUT, "r1", "q", T0);
  assert_int_equal(kv_flush(f->db, NULL), KV_OK);
  assert_int_equal(kv_close(f->db), KV_OK);
  /* a file a crashed flush left behind, never named in the MANIFEST */
  char p[128];
  snprintf(p, sizeof p, "/db/data/1/%u/999.sf", f->a);
  kv_file *file;
  assert_int_equal(f->env->open(f->env, p, KV_OPEN_WRITE, &file), KV_OK);
  assert_int_equal(f->env->append(file, "junk", 4), KV_OK);
  f->env->close(file);
  assert_true(f->env->exists(f->env, p));
  fx_open(f, 100);
  assert_false(f->env->exists(f->env, p));
  char out[256];
  dump(f, 0, out, sizeof out);
  assert_string_equal(out, "r1:q@1700000000000 ");
  fx_free(f);
}

/* The sequence numbers of the one store file of family `fid`: max over its cells. */
static uint64_t file_max_seq(kv_env *env, uint32_t fid) {
  char p[128];
  for (int num = 0; num < 200; num++) {
    snprintf(p, sizeof p, "/db/data/1/%u/%d.sf", fid, num);
    if (!env->exists(env, p)) continue;
    kv_sf_reader *r;
    assert_int_equal(kv_sf_open(env, p, &r), KV_OK);
    uint64_t m = kv_sf_get_props(r)->max_seq;
    kv_sf_close(r);
    return m;
  }
  fail_msg("no store file");
  return 0;
}

/* A major compaction stores the sequence numbers of what it keeps as 0 (they order nothing
** any more; the store file is much smaller for it), and later writes still behave: a later
** tombstone masks a compacted put, a later put at the same timestamp replaces it, a
** snapshot held across the compaction keeps its rows' numbers. */
static void test_major_zeroes_sequence_numbers(void **state) {
  fx *f = fx_new(100);
  op(f, KV_PUT, "r1", "q", T0 - 5);
  op(f, KV_PUT, "r2", "q", T0 - 5);
  op(f, KV_PUT, "r3", "q", T0 - 5);
  assert_int_equal(kv_compact(f->db, NULL, true), KV_OK);
  assert_int_equal(file_max_seq(f->env, f->a), 0);
  op(f, KV_DELETE_COLUMN, "r1", "q", T0 - 5);  /* masks the compacted put */
  kv_batch *b = kv_batch_new();               /* replaces r2's version at the same ts */
  assert_int_equal(kv_batch_put(b, f->a, "r2", 2, "q", 1, T0 - 5, "new", 3), KV_OK);
  assert_int_equal(kv_commit(f->db, b, NULL), KV_OK);
  kv_batch_free(b);
  char out[256];
  dump(f, 0, out, sizeof out);
  assert_string_equal(out, "r2:q@1699999999995 r3:q@1699999999995 ");
  for (int flushed = 0; flushed < 2; flushed++) {
    kv_scan_options so = {0};
    so.family_ids = &f->a;
    so.n_families = 1;
    kv_scan *s;
    kv_row r;
    assert_int_equal(kv_get(f->db, &so, "r2", 2, &s, &r), KV_OK);
    assert_int_equal(r.n_cells, 1);
    assert_memory_equal(r.cells[0].value, "new", 3);
    kv_scan_close(s);
    assert_int_equal(kv_flush(f->db, NULL), KV_OK);
  }
  /* a snapshot held across a major compaction: rows written after it keep their numbers */
  uint64_t snap;
  assert_int_equal(kv_snapshot_acquire(f->db, &snap), KV_OK);
  op(f, KV_PUT, "r4", "q", T0 - 5);
  char snap_before[256];
  dump(f, snap, snap_before, sizeof snap_before);
  assert_int_equal(kv_compact(f->db, NULL, true), KV_OK);
  assert_true(file_max_seq(f->env, f->a) > snap);
  dump(f, snap, out, sizeof out);
  assert_string_equal(out, snap_before);
  kv_snapshot_release(f->db, snap);
  assert_int_equal(kv_compact(f->db, NULL, true), KV_OK);
  assert_int_equal(file_max_seq(f->env, f->a), 0);
  dump(f, 0, out, sizeof out);
  assert_string_equal(out, "r2:q@1699999999995 r3:q@1699999999995 r4:q@1699999999995 ");
  fx_free(f);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_minor_keeps_everything),
    cmocka_unit_test(test_major_drops),
    cmocka_unit_test(test_major_includes_memstore),
    cmocka_unit_test(test_major_keeps_snapshot_view),
    cmocka_unit_test(test_auto_minor_compaction),
    cmocka_unit_test(test_auto_minor_size_tiered),
    cmocka_unit_test(test_inputs_deleted_after_scans),
    cmocka_unit_test(test_unknown_files_deleted_at_open),
    cmocka_unit_test(test_major_zeroes_sequence_numbers),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
