/*
** tests/kv/test_cache_form.c: the form the block cache keeps blocks in (kv_options.
** block_cache_form, kv/sf/sf_cblock.h's narrow form, docs/KV_READS.md "Narrow blocks in the
** cache"). A sensor-like table (eight DOUBLE readings of one or two decimals, a text column,
** some readings missing) is flushed to one store file and read back through caches that
** keep its blocks wide, narrow, and by the automatic rule: every point read and the full
** scan must give the same cells; the narrow cache must charge well under the wide one for
** the same blocks; the automatic rule keeps them wide while the open files' raw bytes are
** within three fifths of the cache and narrow past that; a block widened four times in a
** row is promoted (its entry replaced by the wide copy, one more insert) and still answers
** the same; an unknown form is refused at kv_open. The cache's data count itself
** (kv_cache_note_data, the limit) is checked directly. Not here: the forms' byte layout
** (tests/kv/test_sf_dec.c), mixed reads over many files (tests/kv/test_sf_point_reads.c).
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "kv/env/env_mem.h"
#include "kv/kv.h"
#include "kv/util/cache.h"
#include "testutil.h"

#define NROWS 4000
#define NCOLS 9 /* q0..q7 readings, q8 text */

/* FNV-1a over n bytes, continuing h. */
static uint64_t fnv(uint64_t h, const uint8_t *p, size_t n) {
  for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * 1099511628211ull;
  return h;
}

static void key_of(int i, char *k) { snprintf(k, 16, "s%02d-%06d", i % 7, i); }

static kv_db *open_db(kv_env *env, size_t cache, int form) {
  kv_options o;
  kv_options_init(&o);
  o.env = env;
  o.create_if_missing = true;
  o.block_cache_size = cache;
  o.block_cache_form = form;
  kv_db *db = NULL;
  assert_int_equal(kv_open("/db", &o, &db), KV_OK);
  return db;
}

/* The table, written once and flushed (then read by every open). */
static void load(kv_env *env) {
  kv_db *db = open_db(env, 64u << 20, KV_CACHE_FORM_AUTO);
  kv_family_options f = {.name = "r", .block_size = 8192};
  assert_int_equal(kv_create_table(db, "t", &f, 1), KV_OK);
  uint32_t fid;
  assert_int_equal(kv_family_id(db, "t", "r", &fid), KV_OK);
  kv_batch *b = kv_batch_new();
  uint64_t st = 42;
  for (int i = 0; i < NROWS; i++) {
    char k[16], q[4];
    key_of(i, k);
    for (int c = 0; c < NCOLS; c++) {
      if (tu_below(&st, 40) == 0) continue; /* a missing reading */
      snprintf(q, sizeof q, "q%d", c);
      uint8_t v[16];
      size_t vl = 8;
      if (c < 8) {
        int64_t m = (int64_t)tu_below(&st, 4000) - 1000;
        tu_enc_double((double)m / (c % 2 ? 10 : 100), v);
      } else {
        vl = (size_t)snprintf((char *)v, sizeof v, "N%dW", i % 5);
      }
      assert_int_equal(kv_batch_put(b, fid, k, strlen(k), q, 2, 1000 + i, v, vl), KV_OK);
    }
  }
  assert_int_equal(kv_commit(db, b, NULL), KV_OK);
  kv_batch_free(b);
  assert_int_equal(kv_flush(db, NULL), KV_OK);
  assert_int_equal(kv_close(db), KV_OK);
}

/* Every cell of the row (its qualifiers and values, hashed) and whether it was found. */
static uint64_t get_row(kv_db *db, uint32_t fid, int i) {
  char k[16];
  key_of(i, k);
  kv_scan_options o;
  memset(&o, 0, sizeof o);
  o.family_ids = &fid;
  o.n_families = 1;
  kv_scan *s = NULL;
  kv_row row;
  int rc = kv_get(db, &o, k, strlen(k), &s, &row);
  assert_int_equal(rc, KV_OK);
  uint64_t h = 1469598103934665603ull;
  for (uint32_t c = 0; c < row.n_cells; c++) {
    const kv_cell_view *cv = &row.cells[c];
    h = fnv(h, cv->qual, cv->qual_len);
    h = fnv(h, cv->value, cv->value_len);
  }
  kv_scan_close(s);
  return h;
}

/* The whole table by a scan, hashed. */
static uint64_t scan_all(kv_db *db, uint32_t fid) {
  kv_scan_options o;
  memset(&o, 0, sizeof o);
  o.family_ids = &fid;
  o.n_families = 1;
  kv_scan *s = NULL;
  assert_int_equal(kv_scan_open(db, &o, &s), KV_OK);
  uint64_t h = 1469598103934665603ull;
  kv_row row;
  int rows = 0, rc;
  while ((rc = kv_scan_next(s, &row)) == KV_OK) {
    rows++;
    h = fnv(h, row.key, row.key_len);
    for (uint32_t c = 0; c < row.n_cells; c++) {
      h = fnv(h, row.cells[c].qual, row.cells[c].qual_len);
      h = fnv(h, row.cells[c].value, row.cells[c].value_len);
    }
  }
  assert_int_equal(rc, KV_ERR_NOTFOUND);
  assert_int_equal(rows, NROWS);
  kv_scan_close(s);
  return h;
}

typedef struct reading {
  uint64_t scan, rows[NROWS];
  size_t usage;     /* block cache bytes after the scan */
  uint64_t inserts; /* blocks inserted by it */
} reading;

static void read_all(kv_env *env, size_t cache, int form, reading *out) {
  kv_db *db = open_db(env, cache, form);
  uint32_t fid;
  assert_int_equal(kv_family_id(db, "t", "r", &fid), KV_OK);
  out->scan = scan_all(db, fid);
  kv_block_cache_stats cs;
  assert_int_equal(kv_block_cache_get_stats(db, &cs), KV_OK);
  out->usage = cs.usage;
  out->inserts = cs.inserts;
  for (int i = 0; i < NROWS; i++) out->rows[i] = get_row(db, fid, i);
  assert_int_equal(kv_close(db), KV_OK);
}

static void test_forms_agree(void **state) {
  (void)state;
  kv_env *env = kv_env_mem_new(1700000000000LL);
  load(env);
  static reading wide, narrow, auto_big, auto_small;
  read_all(env, 64u << 20, KV_CACHE_FORM_WIDE, &wide);
  read_all(env, 64u << 20, KV_CACHE_FORM_NARROW, &narrow);
  read_all(env, 64u << 20, KV_CACHE_FORM_AUTO, &auto_big);
  /* a cache under the file's raw bytes / (3/5): the automatic rule keeps blocks narrow */
  read_all(env, 256u << 10, KV_CACHE_FORM_AUTO, &auto_small);
  assert_true(wide.inserts > 20);
  assert_int_equal(narrow.inserts, wide.inserts);
  fprintf(stderr, "[cache_form] %llu blocks: wide %zu bytes, narrow %zu (auto, 64 MiB: %zu)\n",
          (unsigned long long)wide.inserts, wide.usage, narrow.usage, auto_big.usage);
  assert_true(narrow.usage * 10 < wide.usage * 7);
  assert_int_equal(auto_big.usage, wide.usage);
  assert_true(auto_small.usage * wide.inserts < wide.usage * auto_small.inserts * 7 / 10);
  const reading *r[3] = {&narrow, &auto_big, &auto_small};
  for (int k = 0; k < 3; k++) {
    assert_true(r[k]->scan == wide.scan);
    for (int i = 0; i < NROWS; i++)
      if (r[k]->rows[i] != wide.rows[i]) fail_msg("reading %d: row %d differs", k, i);
  }
  kv_env_free(env);
}

/* The fourth widening in a row of one block replaces its entry with the wide copy. */
static void test_hot_block_promoted(void **state) {
  (void)state;
  kv_env *env = kv_env_mem_new(1700000000000LL);
  load(env);
  kv_db *db = open_db(env, 64u << 20, KV_CACHE_FORM_NARROW);
  uint32_t fid;
  assert_int_equal(kv_family_id(db, "t", "r", &fid), KV_OK);
  kv_block_cache_stats cs;
  uint64_t want = get_row(db, fid, 77), ins0 = 0;
  assert_int_equal(kv_block_cache_get_stats(db, &cs), KV_OK);
  ins0 = cs.inserts; /* the block, narrow: widened once */
  size_t use0 = cs.usage;
  for (int k = 2; k <= 12; k++) {
    assert_true(get_row(db, fid, 77) == want);
    assert_int_equal(kv_block_cache_get_stats(db, &cs), KV_OK);
    if (cs.inserts != ins0 + (k >= 4)) fail_msg("after %d reads: %llu inserts, want %llu", k,
                                                (unsigned long long)cs.inserts,
                                                (unsigned long long)(ins0 + (k >= 4)));
  }
  assert_true(cs.usage > use0); /* the wide copy is larger */
  assert_int_equal(kv_close(db), KV_OK);
  kv_env_free(env);
}

static void test_bad_form(void **state) {
  (void)state;
  kv_env *env = kv_env_mem_new(1700000000000LL);
  kv_options o;
  kv_options_init(&o);
  o.env = env;
  o.create_if_missing = true;
  o.block_cache_form = 3;
  kv_db *db = NULL;
  assert_int_equal(kv_open("/db", &o, &db), KV_ERR_INVALID);
  assert_null(db);
  assert_non_null(strstr(kv_errmsg(), "block_cache_form"));
  kv_env_free(env);
}

static void test_data_count(void **state) {
  (void)state;
  kv_cache *c = kv_cache_new(10000);
  assert_non_null(c);
  assert_false(kv_cache_data_over(c));
  kv_cache_note_data(c, 6000); /* the default limit: three fifths of the capacity */
  assert_false(kv_cache_data_over(c));
  kv_cache_note_data(c, 1);
  assert_true(kv_cache_data_over(c));
  kv_cache_note_data(c, -6001);
  assert_false(kv_cache_data_over(c));
  kv_cache_set_data_limit(c, 0);
  assert_false(kv_cache_data_over(c)); /* no data at all: nothing to choose */
  kv_cache_note_data(c, 1);
  assert_true(kv_cache_data_over(c));
  kv_cache_set_data_limit(c, SIZE_MAX);
  kv_cache_note_data(c, INT64_MAX / 2);
  assert_false(kv_cache_data_over(c));
  kv_cache_note_data(NULL, 5); /* no cache: a no-op */
  kv_cache_free(c);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_forms_agree),
      cmocka_unit_test(test_hot_block_promoted),
      cmocka_unit_test(test_bad_form),
      cmocka_unit_test(test_data_count),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
