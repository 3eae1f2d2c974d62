/*
** tests/kv/test_mem_release.c: the store gives the allocator's free pages back to the system
** (kv/util/mem.h). First kv_mem_release itself: megabytes freed between small live chunks,
** which glibc's malloc keeps, are no longer resident after it. Then each phase that
** releases: a bulk load past its memory bound (kv_bulk_options.run_bytes) releases while it
** pages out and when it is freed, and leaves the process's anonymous resident memory near
** where it began, with every row read back; a flush of a memstore of megabytes and a
** compaction of megabytes release, a flush of a small memstore does not.
** The phases are checked by the count of releases (kv_mem_releases), and the memory by the
** kernel's figure (RssAnon of /proc/self/status) with glibc's thresholds pinned (mallopt: a
** 32 MiB mmap threshold, so megabyte buffers come from the heap arenas as they do in a long
** process once glibc has raised it; a 1 MiB trim threshold, so an arena's top goes back on
** its own and what stays is the freed space between live chunks, which only a release
** returns). The resident checks mean what they say only with glibc's malloc as the
** allocator: under a sanitizer (its own allocator; AddressSanitizer keeps freed memory in
** a quarantine by design) they are left out, and the counts and reads are still checked.
** Not here: the load's own count of what it holds (tests/kv/test_bulk_mem.c).
*/
#include <ftw.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <cmocka.h>

#include "kv/bulk/bulk.h"
#include "kv/env/env.h"
#include "kv/kv.h"
#include "kv/util/mem.h"
#include "testutil.h"

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define RSS_MEANINGFUL 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || \
    __has_feature(memory_sanitizer)
#define RSS_MEANINGFUL 0
#endif
#endif
#ifndef RSS_MEANINGFUL
#if defined(__GLIBC__)
#define RSS_MEANINGFUL 1
#else
#define RSS_MEANINGFUL 0
#endif
#endif
#if RSS_MEANINGFUL
#include <malloc.h>
#endif

#define MIB (1024l * 1024l)
#define NOW0 1700000000000ll

/* Anonymous resident bytes of this process now. */
static long rss_anon(void) {
  FILE *f = fopen("/proc/self/status", "r");
  assert_non_null(f);
  char line[256];
  long kib = -1;
  while (fgets(line, sizeof line, f))
    if (!strncmp(line, "RssAnon:", 8)) kib = strtol(line + 8, NULL, 10);
  fclose(f);
  assert_true(kib >= 0);
  return kib * 1024;
}

/* Forty 1 MiB chunks, each followed by a small one still live, are written to and freed:
** the small ones keep the freed megabytes apart from the heap's top, so glibc keeps them
** resident. After kv_mem_release the process is back within 12 MiB of where it began. */
static void test_release_returns_free_pages(void **state) {
  (void)state;
  enum { N = 40 };
  long base = rss_anon();
  char *chunk[N], *pin[N];
  for (int i = 0; i < N; i++) {
    chunk[i] = malloc(MIB);
    pin[i] = malloc(64);
    assert_non_null(chunk[i]);
    assert_non_null(pin[i]);
    memset(chunk[i], i + 1, MIB);
    pin[i][0] = (char)i;
  }
  long held = rss_anon();
  for (int i = 0; i < N; i++) free(chunk[i]);
  uint64_t n0 = kv_mem_releases();
  kv_mem_release();
  long after = rss_anon();
  assert_int_equal(kv_mem_releases(), n0 + 1);
  print_message("resident: %ld MiB at start, %ld holding, %ld after the release\n",
                base / MIB, held / MIB, after / MIB);
#if RSS_MEANINGFUL
  assert_true(held >= base + (N - 4) * MIB); /* the chunks were resident */
  assert_true(after <= base + 12 * MIB);
#endif
  for (int i = 0; i < N; i++) assert_int_equal(pin[i][0], (char)i);
  for (int i = 0; i < N; i++) free(pin[i]);
}

static int rm_one(const char *path, const struct stat *sb, int flag, struct FTW *ftw) {
  (void)sb;
  (void)flag;
  (void)ftw;
  return remove(path);
}

/* A new store on disk under $TMPDIR (or /tmp), one table "t" of one family of 64 KiB
** blocks, no automatic compaction, memstores flushed only when asked (64 MiB), commits not
** synced. */
typedef struct disk_st {
  char dir[256];
  kv_db *db;
  uint32_t fid;
} disk_st;

static void disk_open(disk_st *s) {
  const char *tmp = getenv("TMPDIR");
  /* the six trailing characters are mkdtemp's template, replaced by a unique name */
  snprintf(s->dir, sizeof s->dir, "%s/rowan_mem_release_XXXXXX", tmp && *tmp ? tmp : "/tmp");
  assert_non_null(mkdtemp(s->dir));
  char path[300];
  snprintf(path, sizeof path, "%s/db", s->dir);
  kv_options o;
  kv_options_init(&o);
  o.env = kv_env_posix();
  o.create_if_missing = true;
  o.compaction_trigger = 100;
  o.memstore_flush_size = 64 * MIB;
  o.sync_mode = KV_SYNC_OFF;
  assert_int_equal(kv_open(path, &o, &s->db), KV_OK);
  kv_family_options fo = {.name = "f", .max_versions = 1, .block_size = 65536};
  assert_int_equal(kv_create_table(s->db, "t", &fo, 1), KV_OK);
  assert_int_equal(kv_family_id(s->db, "t", "f", &s->fid), KV_OK);
}

static void disk_close(disk_st *s) {
  assert_int_equal(kv_close(s->db), KV_OK);
  assert_int_equal(nftw(s->dir, rm_one, 16, FTW_DEPTH | FTW_PHYS), 0);
}

static void key_of(uint32_t k, uint8_t out[12]) {
  memcpy(out, "row-", 4);
  for (int i = 0; i < 8; i++) out[4 + i] = (uint8_t)((uint64_t)k >> (56 - 8 * i) & 0xff);
}

/* Row k's value: k, then random bytes from *rs (lz4 cannot shrink them: the load's encoded
** segments stay as big as its cells). */
static void fill_value(uint64_t *rs, uint32_t k, uint8_t *v, size_t len) {
  memcpy(v, &k, 4);
  for (size_t j = 4; j < len; j += 8) {
    uint64_t r = tu_rand(rs);
    memcpy(v + j, &r, len - j < 8 ? len - j : 8);
  }
}

enum { VLEN = 240 };

/* Every row k of [0, n) reads back once, in order, with the value *rs draws for it. */
static void check_rows(disk_st *s, uint32_t n, uint64_t rs) {
  kv_scan_options so = {0};
  so.family_ids = &s->fid;
  so.n_families = 1;
  kv_scan *sc;
  kv_row row;
  uint8_t key[12], val[VLEN];
  assert_int_equal(kv_scan_open(s->db, &so, &sc), KV_OK);
  uint32_t got = 0;
  while (kv_scan_next(sc, &row) == KV_OK) {
    key_of(got, key);
    assert_int_equal(row.key_len, 12);
    assert_memory_equal(row.key, key, 12);
    assert_int_equal(row.n_cells, 1);
    assert_int_equal(row.cells[0].value_len, VLEN);
    fill_value(&rs, got, val, VLEN);
    assert_memory_equal(row.cells[0].value, val, VLEN);
    got++;
  }
  assert_int_equal(got, n);
  kv_scan_close(sc);
}

/* A bulk load of about 96 MiB of cells in key order under a 32 MiB bound: it pages out
** (the bound is reached) and releases while it does, again when it is freed (the counts:
** the check that cannot miss a lost call), and the process then holds within 6 MiB of what
** it held before the load (the new file's index is about 1,500 blocks of 64 KiB; 0 MiB
** measured, 1-11 MiB with the releases made no-ops). Every row then reads back with its
** value. */
static void test_bulk_load_gives_back(void **state) {
  (void)state;
  const uint32_t n = 400000;
  uint64_t rs = tu_seed("mem_release_bulk"), rs0 = rs;
  disk_st s;
  disk_open(&s);
  long before = rss_anon();
  uint64_t n0 = kv_mem_releases();
  kv_bulk *b;
  assert_int_equal(kv_bulk_begin(s.db, &(kv_bulk_options){.run_bytes = 32 * MIB}, &b), KV_OK);
  uint8_t key[12], val[VLEN];
  for (uint32_t i = 0; i < n; i++) {
    key_of(i, key);
    fill_value(&rs, i, val, VLEN);
    assert_int_equal(kv_bulk_put(b, s.fid, key, 12, "v", 1, NOW0, val, VLEN), KV_OK);
  }
  assert_int_equal(kv_bulk_commit(b, NULL), KV_OK);
  kv_bulk_stats bs;
  kv_bulk_get_stats(b, &bs);
  uint64_t n_load = kv_mem_releases();
  long at_commit = rss_anon();
  kv_bulk_free(b);
  long after = rss_anon();
  print_message("resident: %ld MiB before the load, %ld at its commit, %ld after it is freed;"
                " %llu segments paged out, %llu releases during the load\n", before / MIB,
                at_commit / MIB, after / MIB, (unsigned long long)bs.segs_paged,
                (unsigned long long)(n_load - n0));
  assert_true(bs.segs_paged > 0); /* the bound was reached */
  assert_true(n_load > n0);       /* released while paging out */
  assert_true(kv_mem_releases() > n_load); /* and when freed */
#if RSS_MEANINGFUL
  assert_true(after <= before + 6 * MIB);
#endif
  check_rows(&s, n, rs0);
  disk_close(&s);
}

/* Put rows [from, to) through the memstore. */
static void put_rows(disk_st *s, uint32_t from, uint32_t to, uint64_t *rs) {
  kv_batch *b = kv_batch_new();
  assert_non_null(b);
  uint8_t key[12], val[VLEN];
  for (uint32_t i = from; i < to; i++) {
    key_of(i, key);
    fill_value(rs, i, val, VLEN);
    kv_batch_clear(b);
    assert_int_equal(kv_batch_put(b, s->fid, key, 12, "v", 1, NOW0, val, VLEN), KV_OK);
    assert_int_equal(kv_commit(s->db, b, NULL), KV_OK);
  }
  kv_batch_free(b);
}

/* A flush of a memstore of megabytes releases and one of a few rows does not; a major
** compaction of megabytes of files releases; the rows read back after each. */
static void test_flush_and_compaction_release(void **state) {
  (void)state;
  const uint32_t big = 40000; /* about 10 MiB of cells */
  uint64_t rs = tu_seed("mem_release_flush"), rs0 = rs;
  disk_st s;
  disk_open(&s);
  put_rows(&s, 0, big, &rs);
  uint64_t n0 = kv_mem_releases();
  assert_int_equal(kv_flush(s.db, "t"), KV_OK);
  uint64_t n1 = kv_mem_releases();
  assert_true(n1 > n0); /* a memstore of megabytes */
  put_rows(&s, big, big + 10, &rs);
  assert_int_equal(kv_flush(s.db, "t"), KV_OK);
  assert_int_equal(kv_mem_releases(), n1); /* ten rows: nothing to give back */
  check_rows(&s, big + 10, rs0);
  kv_family_stats st;
  assert_int_equal(kv_family_get_stats(s.db, s.fid, &st), KV_OK);
  assert_int_equal(st.store_files, 2);
  assert_int_equal(kv_compact(s.db, "t", true), KV_OK);
  assert_true(kv_mem_releases() > n1); /* the inputs were megabytes */
  assert_int_equal(kv_family_get_stats(s.db, s.fid, &st), KV_OK);
  assert_int_equal(st.store_files, 1);
  check_rows(&s, big + 10, rs0);
  disk_close(&s);
}

int main(void) {
#if RSS_MEANINGFUL
  /* pinned, not left to glibc's adjustment (see the header) */
  mallopt(M_MMAP_THRESHOLD, 32 * 1024 * 1024);
  mallopt(M_TRIM_THRESHOLD, 1024 * 1024);
#endif
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_release_returns_free_pages),
      cmocka_unit_test(test_bulk_load_gives_back),
      cmocka_unit_test(test_flush_and_compaction_release),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
