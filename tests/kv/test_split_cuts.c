/*
** tests/kv/test_split_cuts.c: kv_block_cut_points (the local backend's split points, which
** cut a parallel scan into chunks) against the rule written over the list of every block
** (kv_block_keys): cut before the first block whose middle reaches the end of the next run
** of about equal bytes, keys ascending and above the first block's. A compacted family's
** files do not overlap and are cut by binary searches of their block indexes: the cuts must
** be the list's, key for key, for one file, several files side by side (flushed in key
** order), any number of chunks, rows of many cells (several blocks sharing a first row) and
** paged block indexes (a store on disk: scripts/test.sh's second pass pages every file);
** files that overlap take the list itself. Not here: the chunks' scans (tests/kv/
** test_backend.c, tests/api/test_parallel_scan.c).
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "kv/db/db_impl.h"
#include "kv/kv.h"
#include "testutil.h"

typedef struct cuts {
  uint8_t key[128][32]; /* keys given */
  uint32_t len[128];
  int n;
} cuts;

static void on_cut(void *ctx, const uint8_t *key, uint32_t len) {
  cuts *c = ctx;
  assert_true(c->n < 128 && len <= 32);
  memcpy(c->key[c->n], key, len);
  c->len[c->n++] = len;
}

/* The rule over the sorted list of every block (what the local backend did before). */
static void list_cuts(kv_db *db, uint32_t fid, uint32_t max_chunks, cuts *out) {
  kv_block_key *b = NULL;
  size_t n = 0;
  assert_int_equal(kv_block_keys(db, fid, &b, &n), KV_OK);
  out->n = 0;
  uint64_t total = 0, acc = 0;
  for (size_t i = 0; i < n; i++) total += b[i].bytes;
  uint32_t given = 0;
  const kv_block_key *last = n ? &b[0] : NULL;
  for (size_t i = 1; i < n && given + 1 < max_chunks; i++) {
    acc += b[i - 1].bytes;
    if ((acc + b[i].bytes / 2) * max_chunks < total * (given + 1)) continue;
    uint32_t m = b[i].len < last->len ? b[i].len : last->len;
    int c = memcmp(b[i].row, last->row, m);
    if (c < 0 || (c == 0 && b[i].len <= last->len)) continue;
    on_cut(out, b[i].row, b[i].len);
    last = &b[i];
    given++;
  }
  kv_block_keys_free(b, n);
}

static void same_cuts(kv_db *db, uint32_t fid, bool want_listed) {
  static const uint32_t chunks[] = {1, 2, 3, 4, 7, 8, 16, 33, 100};
  for (size_t i = 0; i < sizeof chunks / sizeof *chunks; i++) {
    cuts want, got;
    list_cuts(db, fid, chunks[i], &want);
    got.n = 0;
    bool listed = !want_listed;
    assert_int_equal(kv_block_cut_points(db, fid, chunks[i], on_cut, &got, &listed), KV_OK);
    assert_true(chunks[i] < 2 || listed == want_listed); /* the path taken */
    if (want.n != got.n) fprintf(stderr, "%u chunks: %d cuts, the list's %d\n", chunks[i], got.n, want.n);
    assert_int_equal(got.n, want.n);
    assert_true(chunks[i] < 2 || got.n > 0);
    for (int k = 0; k < got.n; k++) {
      assert_int_equal(got.len[k], want.len[k]);
      assert_memory_equal(got.key[k], want.key[k], got.len[k]);
    }
  }
}

/* Rows [r0, r1): key "k%06d", `cells` cells of 40 bytes each. */
static void put_rows(kv_db *db, uint32_t fid, int r0, int r1, int cells) {
  kv_batch *b = kv_batch_new();
  for (int r = r0; r < r1; r++) {
    char k[16], q[16], v[40];
    snprintf(k, sizeof k, "k%06d", r);
    memset(v, 'a' + r % 26, sizeof v);
    for (int c = 0; c < cells; c++) {
      snprintf(q, sizeof q, "q%d", c);
      assert_int_equal(kv_batch_put(b, fid, k, strlen(k), q, strlen(q), 1000, v, sizeof v), KV_OK);
    }
  }
  assert_int_equal(kv_commit(db, b, NULL), KV_OK);
  kv_batch_free(b);
}

static void test_cuts(void **state) {
  (void)state;
  char dir[] = "/tmp/rowan_test_split_cuts_XXXXXX"; /* mkdtemp's template */
  assert_non_null(mkdtemp(dir));
  char path[128];
  snprintf(path, sizeof path, "%s/db", dir);
  kv_options o;
  kv_options_init(&o);
  o.create_if_missing = true;
  o.sync_mode = KV_SYNC_OFF;
  kv_db *db = NULL;
  assert_int_equal(kv_open(path, &o, &db), KV_OK);
  kv_family_options fo = {.name = "f", .block_size = 512};
  uint32_t fid = 0;
  assert_int_equal(kv_create_table(db, "t", &fo, 1), KV_OK);
  assert_int_equal(kv_family_id(db, "t", "f", &fid), KV_OK);
  cuts none = {.n = 0};
  assert_int_equal(kv_block_cut_points(db, fid, 4, on_cut, &none, NULL), KV_OK);
  assert_int_equal(none.n, 0); /* no store file */
  assert_int_equal(kv_block_cut_points(db, 9999, 4, on_cut, &none, NULL), KV_ERR_NOTFOUND);
  /* one file, then files side by side (each flush a later key range), with rows of one
     cell and rows of 40 (several blocks each: cuts inside a row are skipped) */
  put_rows(db, fid, 0, 3000, 1);
  assert_int_equal(kv_flush(db, NULL), KV_OK);
  same_cuts(db, fid, false);
  put_rows(db, fid, 3000, 3200, 40);
  assert_int_equal(kv_flush(db, NULL), KV_OK);
  put_rows(db, fid, 3200, 5000, 2);
  assert_int_equal(kv_flush(db, NULL), KV_OK);
  same_cuts(db, fid, false);
  assert_int_equal(kv_compact(db, NULL, true), KV_OK);
  same_cuts(db, fid, false);
  /* files that overlap: the list */
  put_rows(db, fid, 100, 4000, 1);
  assert_int_equal(kv_flush(db, NULL), KV_OK);
  same_cuts(db, fid, true);
  assert_int_equal(kv_close(db), KV_OK);
  char cmd[160];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  assert_int_equal(system(cmd), 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_cuts),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
