/*
** tests/kv/test_break_colscan_dict.c: the columnar aggregate scan (kv/colscan/colscan.h,
** kv_colagg_run) on a block whose qualifier dictionary names one qualifier twice (a damaged
** block with a valid checksum: the dictionary's second entry overwritten with the first's
** bytes). Two dictionary entries then map to one wanted column: the general path counted
** the cells of both into that column's rank while its value group held the cells of one,
** and read past the end of the group's value pointers (heap-buffer-overflow in do_block,
** kv/colscan/colscan_block.c, seen by test_colscan's damaged_blocks with ROWAN_SEED=500841677545
** under ASan; SIGSEGV here in a normal build). The scan must report KV_ERR_CORRUPT naming
** the block's offset, never read out of bounds; a plain scan of the same block
** (the whole-block decoder) must not crash either. Deterministic (no seed).
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "kv/colscan/colscan.h"
#include "kv/db/db_impl.h"
#include "kv/env/env_mem.h"
#include "kv/kv.h"
#include "kv/sf/sf_int.h"

static const uint8_t QA[] = {'a'}, QB[] = {'b'}, QC[] = {'c'};
static const uint8_t *const quals[3] = {QA, QB, QC};
static const uint32_t qlens[3] = {1, 1, 1};
static const int32_t widths[3] = {8, 8, -1};

static int consume(void *ctx, uint32_t n, const kv_colvals *vals) {
  uint64_t *rows = ctx;
  *rows += n;
  for (uint32_t r = 0; r < n; r++) /* touch what was handed out (ASan sees a bad pointer) */
    if (vals[0].p[r] && vals[0].len[r]) *rows += vals[0].p[r][0] == 0xff;
  return 0;
}

static void dictionary_names_a_qualifier_twice(void **state) {
  (void)state;
  kv_env *env = kv_env_mem_new(1700000000000LL);
  kv_options o;
  kv_options_init(&o);
  o.env = env;
  o.create_if_missing = true;
  o.sync_mode = KV_SYNC_OFF;
  o.compaction_trigger = 100;
  kv_db *db;
  assert_int_equal(kv_open("/db", &o, &db), KV_OK);
  kv_family_options f;
  memset(&f, 0, sizeof f);
  f.name = "f";
  f.block_size = 4096;
  f.max_versions = 1;
  f.compression = KV_COMPRESSION_NONE;
  assert_int_equal(kv_create_table(db, "t", &f, 1), KV_OK);
  uint32_t fid;
  assert_int_equal(kv_family_id(db, "t", "f", &fid), KV_OK);
  /* 60 rows with a and c, every third also with b: b's group is smaller than a's */
  kv_batch *b = kv_batch_new();
  assert_non_null(b);
  for (int r = 0; r < 60; r++) {
    uint8_t key[6] = {'r', 'o', 'w', (uint8_t)('0' + r / 10), (uint8_t)('0' + r % 10), 0};
    uint8_t v[8] = {0x80, 0, 0, 0, 0, 0, 0, (uint8_t)r};
    char text[16];
    int tl = snprintf(text, sizeof text, "t%d", r);
    assert_int_equal(kv_batch_put(b, fid, key, 5, QA, 1, 1000, v, 8), KV_OK);
    if (r % 3 == 0) assert_int_equal(kv_batch_put(b, fid, key, 5, QB, 1, 1000, v, 8), KV_OK);
    assert_int_equal(kv_batch_put(b, fid, key, 5, QC, 1, 1000, text, (size_t)tl), KV_OK);
  }
  assert_int_equal(kv_commit(db, b, NULL), KV_OK);
  kv_batch_free(b);
  assert_int_equal(kv_compact(db, NULL, true), KV_OK);
  kv_fam *fam = db->fams[fid];
  assert_int_equal(fam->n_files, 1);
  const char *path = fam->files[0]->path;
  const kv_sf_index_entry *e = &fam->files[0]->reader->index[0];
  assert_true(fam->files[0]->reader->nblocks == 1); /* every row in the damaged block */
  uint32_t stored = e->size - KV_SF_BLOCK_OVERHEAD;
  uint8_t *raw = malloc(stored);
  assert_non_null(raw);
  uint8_t first;
  assert_int_equal(kv_env_mem_get_byte(env, path, e->off, &first), KV_OK);
  assert_int_equal(first, KV_SF_STORED_RAW);
  for (uint32_t i = 0; i < stored; i++)
    assert_int_equal(kv_env_mem_get_byte(env, path, e->off + KV_SF_BLOCK_HEADER + i, &raw[i]),
                     KV_OK);
  /* the dictionary: three one-byte entries a, b, c (length-prefixed); b becomes a */
  const uint8_t dict[6] = {1, 'a', 1, 'b', 1, 'c'};
  uint32_t at = 0;
  while (at + 6 <= stored && memcmp(raw + at, dict, 6) != 0) at++;
  assert_true(at + 6 <= stored);
  raw[at + 3] = 'a';
  kv_sfbuf out = {0};
  assert_int_equal(kv_sf_frame_block(raw, stored, KV_COMPRESSION_NONE, &out), KV_OK);
  assert_int_equal(out.len, e->size);
  for (uint32_t i = 0; i < e->size; i++)
    assert_int_equal(kv_env_mem_set_byte(env, path, e->off + i, out.p[i]), KV_OK);
  kv_sfbuf_free(&out);
  free(raw);
  /* two predicates (a and c present): the general path */
  kv_colpred preds[2];
  memset(preds, 0, sizeof preds);
  preds[0].q = 0;
  preds[0].op = KV_COL_PRESENT;
  preds[1].q = 2;
  preds[1].op = KV_COL_PRESENT;
  uint32_t args[1] = {0};
  uint64_t rows[2] = {0, 0};
  void *ctx[2] = {&rows[0], &rows[1]};
  for (int threads = 1; threads <= 2; threads++) {
    kv_colagg_spec sp;
    memset(&sp, 0, sizeof sp);
    sp.family_id = fid;
    sp.quals = quals;
    sp.qual_lens = qlens;
    sp.n_quals = 3;
    sp.widths = widths;
    sp.preds = preds;
    sp.n_preds = 2;
    sp.args = args;
    sp.n_args = 1;
    sp.consume = consume;
    sp.ctx = ctx;
    sp.threads = threads;
    kv_colagg_result res;
    int rc = kv_colagg_run(db, &sp, &res);
    if (rc != KV_ERR_CORRUPT || !strstr(kv_errmsg(), "block at offset"))
      fail_msg("threads %d: kv_colagg_run on a dictionary naming 'a' twice: %d '%s' "
               "(want KV_ERR_CORRUPT naming the block's offset)",
               threads, rc, rc ? kv_errmsg() : "");
    kv_colagg_result_free(&res);
  }
  /* the plain scan of the same block (the whole-block decoder, which does not check the
     dictionary's order) reads it without a crash, or reports it */
  kv_scan_options so;
  memset(&so, 0, sizeof so);
  so.family_ids = &fid;
  so.n_families = 1;
  kv_scan *s;
  assert_int_equal(kv_scan_open(db, &so, &s), KV_OK);
  kv_row row;
  int rc;
  while ((rc = kv_scan_next(s, &row)) == KV_OK) {}
  kv_scan_close(s);
  assert_true(rc == KV_ERR_NOTFOUND || rc == KV_ERR_CORRUPT);
  kv_close(db);
  kv_env_free(env);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(dictionary_names_a_qualifier_twice),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
