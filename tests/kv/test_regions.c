/*
** tests/kv/test_regions.c: tables split into regions (docs/KV_REGIONS.md;
** kv_create_table_split, kv_table_regions). Checked here, each against a model (a sorted
** array of the rows written, randomized with tu_seed):
** - every store file a flush, a minor and a major compaction writes lies within one region
**   (its first and last rows, from kv_family_blocks), and every row reads back as the model
**   says, with one region and with several;
** - a scan of one region's keys opens none of the other regions' files (the scan's
**   files_opened and blocks_read against the files of that region);
** - the boundaries survive a reopen and a MANIFEST rewrite (the SET_REGIONS edit), a bad
**   boundary list does not apply, split keys out of order or empty are refused by name;
** - a store from before regions (a format 3 MANIFEST) opens with one region per table and
**   its first writable open rewrites the MANIFEST in format 4;
** - a damaged store file in one region: the other regions read and write on, a read that
**   touches it fails with KV_ERR_CORRUPT naming the file and the region (table, number,
**   key range; a boundary's bytes outside ASCII written \xHH), a compaction fails the same
**   way without putting the store in its error state;
** - the local backend's split_points are the region boundaries;
** - splits by size (region_split_size): the table splits, rows read back unchanged, the
**   files end up within the new regions, a reopen keeps the boundaries;
** - a bulk load into a split table (in several segments, in random order, and over rows
**   already in the store) leaves files within regions and the rows the model says.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "kv/backend.h"
#include "kv/bulk/bulk.h"
#include "kv/db/manifest.h"
#include "kv/env/env_mem.h"
#include "kv/kv.h"
#include "manifest_version.h"
#include "testutil.h"

#define N_KEYS 600 /* row keys "r000".."r599" */

typedef struct model {
  uint32_t val[N_KEYS]; /* 0: no row; else the value id last written */
} model;

static void row_key(char *buf, uint32_t i) { snprintf(buf, 8, "r%03u", i); }

static kv_db *open_db(kv_env *env, bool create) {
  kv_options o;
  kv_options_init(&o);
  o.env = env;
  o.create_if_missing = create;
  o.compaction_trigger = 1000; /* compactions only when the test asks */
  kv_db *db = NULL;
  assert_int_equal(kv_open("/db", &o, &db), KV_OK);
  return db;
}

/* Split keys "r150", "r300", "r450" (or none). */
static const char *const SPLITS_TEXT[3] = {"r150", "r300", "r450"};
/* The same regions of rows, with a boundary of bytes outside ASCII (as a salted key's) */
static const char *const SPLITS_BIN[3] = {"r150", "r2\xff\x01", "r450"};
static const char *const *SPLITS = SPLITS_TEXT; /* the split keys of the test running */

static void create(kv_db *db, const char *name, uint32_t n_splits) {
  kv_family_options f = {.name = "0"};
  const uint8_t *keys[3];
  uint32_t lens[3];
  for (uint32_t i = 0; i < 3; i++) {
    keys[i] = (const uint8_t *)SPLITS[i];
    lens[i] = (uint32_t)strlen(SPLITS[i]);
  }
  assert_int_equal(kv_create_table_split(db, name, &f, 1, keys, lens, n_splits), KV_OK);
}

static uint32_t fam_of(kv_db *db, const char *table) {
  uint32_t id;
  assert_int_equal(kv_family_id(db, table, "0", &id), KV_OK);
  return id;
}

/* Write n random rows (value ids from *next) in one batch. */
static void write_some(kv_db *db, uint32_t fid, model *m, uint64_t *rng, int n, uint32_t *next) {
  kv_batch *b = kv_batch_new();
  for (int k = 0; k < n; k++) {
    uint32_t i = (uint32_t)tu_below(rng, N_KEYS);
    char key[8], val[16];
    row_key(key, i);
    uint32_t v = ++*next;
    snprintf(val, sizeof val, "v%u", v);
    assert_int_equal(kv_batch_put(b, fid, key, 4, "q", 1, KV_TS_NOW, val, strlen(val)), KV_OK);
    m->val[i] = v;
  }
  assert_int_equal(kv_commit(db, b, NULL), KV_OK);
  kv_batch_free(b);
}

/* Every row of the table equals the model's. */
static void check_model(kv_db *db, uint32_t fid, const model *m) {
  kv_scan_options so = {.family_ids = &fid, .n_families = 1};
  kv_scan *s;
  assert_int_equal(kv_scan_open(db, &so, &s), KV_OK);
  kv_row row;
  uint32_t want = 0, got = 0;
  while (want < N_KEYS && m->val[want] == 0) want++;
  while (kv_scan_next(s, &row) == KV_OK) {
    char key[8], val[16];
    assert_true(want < N_KEYS);
    row_key(key, want);
    snprintf(val, sizeof val, "v%u", m->val[want]);
    assert_int_equal(row.key_len, 4);
    assert_memory_equal(row.key, key, 4);
    assert_int_equal(row.n_cells, 1);
    assert_int_equal(row.cells[0].value_len, strlen(val));
    assert_memory_equal(row.cells[0].value, val, strlen(val));
    got++;
    for (want++; want < N_KEYS && m->val[want] == 0;) want++;
  }
  assert_int_equal(want, N_KEYS);
  kv_scan_close(s);
  (void)got;
}

/* The store files of a family: number, first and last row. */
typedef struct sfile {
  uint64_t number;
  uint32_t n_blocks;
  char first[8], last[8];
} sfile;
typedef struct sfiles {
  sfile f[256];
  uint32_t n;
} sfiles;

static int each_block(void *ctx, const kv_file_block *b) {
  sfiles *l = ctx;
  if (b->block != 0) return 0;
  assert_true(l->n < 256);
  sfile *x = &l->f[l->n++];
  x->number = b->file;
  x->n_blocks = b->n_blocks;
  assert_int_equal(b->first_row_len, 4);
  assert_int_equal(b->last_row_len, 4);
  memcpy(x->first, b->first_row, 4);
  x->first[4] = 0;
  memcpy(x->last, b->last_row, 4);
  x->last[4] = 0;
  return 0;
}

static void list_files(kv_db *db, uint32_t fid, sfiles *l) {
  l->n = 0;
  assert_int_equal(kv_family_blocks(db, fid, each_block, l), KV_OK);
}

/* Region of a row key under the first n_splits of SPLITS. */
static uint32_t region_of(const char *key, uint32_t n_splits) {
  uint32_t r = 0;
  while (r < n_splits && strcmp(key, SPLITS[r]) >= 0) r++;
  return r;
}

/* Every file lies within one region; returns how many files. */
static uint32_t check_within(kv_db *db, uint32_t fid, uint32_t n_splits) {
  sfiles l;
  list_files(db, fid, &l);
  for (uint32_t i = 0; i < l.n; i++)
    if (region_of(l.f[i].first, n_splits) != region_of(l.f[i].last, n_splits))
      fail_msg("file %llu spans [%s, %s]", (unsigned long long)l.f[i].number, l.f[i].first,
               l.f[i].last);
  return l.n;
}

/* ---- boundaries reported ---------------------------------------------------------------- */

typedef struct bounds {
  char key[8][8];
  uint32_t n;
} bounds;
static void each_bound(void *ctx, uint32_t i, const uint8_t *key, uint32_t len) {
  bounds *b = ctx;
  assert_int_equal(i, b->n);
  assert_true(len < 8 && b->n < 8);
  memcpy(b->key[b->n], key, len);
  b->key[b->n][len] = 0;
  b->n++;
}
static void check_bounds(kv_db *db, const char *table, uint32_t n_splits) {
  bounds b = {.n = 0};
  uint32_t n = 0;
  assert_int_equal(kv_table_regions(db, table, &n, each_bound, &b), KV_OK);
  assert_int_equal(n, n_splits + 1);
  assert_int_equal(b.n, n_splits);
  for (uint32_t i = 0; i < n_splits; i++) assert_string_equal(b.key[i], SPLITS[i]);
}

/* ---- the tests ------------------------------------------------------------------------- */

/* Flushes, a minor and a major compaction, with 4 regions and with 1: the files stay
** within regions, the rows read back as the model says, before and after a reopen. */
static void run_flush_compact(uint32_t n_splits) {
  uint64_t rng = tu_seed("regions_flush_compact");
  kv_env *env = kv_env_mem_new(1);
  kv_db *db = open_db(env, true);
  create(db, "t", n_splits);
  uint32_t fid = fam_of(db, "t"), next = 0;
  model m;
  memset(&m, 0, sizeof m);
  for (int round = 0; round < 5; round++) {
    write_some(db, fid, &m, &rng, 80 + (int)tu_below(&rng, 80), &next);
    assert_int_equal(kv_flush(db, "t"), KV_OK);
    check_within(db, fid, n_splits);
  }
  uint32_t before = check_within(db, fid, n_splits);
  if (n_splits) assert_true(before > 5); /* random rows of 5 flushes: files in several regions */
  else assert_int_equal(before, 5);
  check_model(db, fid, &m);
  assert_int_equal(kv_compact(db, "t", false), KV_OK);
  assert_int_equal(check_within(db, fid, n_splits), n_splits + 1); /* one file per region */
  check_model(db, fid, &m);
  write_some(db, fid, &m, &rng, 100, &next);
  assert_int_equal(kv_compact(db, "t", true), KV_OK);
  assert_int_equal(check_within(db, fid, n_splits), n_splits + 1);
  check_model(db, fid, &m);
  check_bounds(db, "t", n_splits);
  assert_int_equal(kv_close(db), KV_OK);
  db = open_db(env, false);
  check_bounds(db, "t", n_splits);
  check_model(db, fid, &m);
  write_some(db, fid, &m, &rng, 100, &next);
  assert_int_equal(kv_flush(db, "t"), KV_OK);
  check_within(db, fid, n_splits);
  check_model(db, fid, &m);
  kv_close(db);
  kv_env_free(env);
}

static void test_flush_compact_regions(void **state) {
  (void)state;
  run_flush_compact(3);
}
static void test_flush_compact_one_region(void **state) {
  (void)state;
  run_flush_compact(0);
}

/* The automatic compaction with its default trigger (4 files) on a table of 4 regions: a
** flush writes one file per region, so the family has 4 files after one flush; a merge
** writes one file per region again. Counting the family's files, the background thread
** merged the same 4 files forever and kv_flush never returned; counted per region (a merge
** once one region has 4 files), flushes return, each region keeps fewer than 4 files
** between merges, and the rows stay right. */
static void test_auto_compaction_per_region(void **state) {
  (void)state;
  uint64_t rng = tu_seed("regions_auto_compaction");
  kv_env *env = kv_env_mem_new(7);
  kv_options o;
  kv_options_init(&o); /* the default compaction trigger */
  o.env = env;
  o.create_if_missing = true;
  kv_db *db = NULL;
  assert_int_equal(kv_open("/db", &o, &db), KV_OK);
  SPLITS = SPLITS_TEXT;
  create(db, "t", 3);
  uint32_t fid = fam_of(db, "t"), next = 0;
  model m;
  memset(&m, 0, sizeof m);
  for (int round = 0; round < 12; round++) {
    write_some(db, fid, &m, &rng, 200, &next); /* rows in every region */
    assert_int_equal(kv_flush(db, "t"), KV_OK);
    check_model(db, fid, &m);
  }
  kv_family_stats st;
  assert_int_equal(kv_family_get_stats(db, fid, &st), KV_OK);
  /* 12 flushes of 4 files each: merged as they came, a region never holds 4 files */
  assert_true(st.store_files < 4 * 4);
  assert_true(st.store_files >= 4);
  assert_int_equal(kv_compact(db, "t", false), KV_OK);
  assert_int_equal(kv_compact(db, "t", true), KV_OK);
  assert_int_equal(kv_family_get_stats(db, fid, &st), KV_OK);
  assert_int_equal(st.store_files, 4); /* one per region */
  check_model(db, fid, &m);
  assert_int_equal(kv_close(db), KV_OK);
  kv_env_free(env);
}

/* A scan of keys of region 1 opens only region 1's files, and reads blocks of none other. */
static void test_scan_stays_in_region(void **state) {
  (void)state;
  uint64_t rng = tu_seed("regions_scan");
  kv_env *env = kv_env_mem_new(1);
  kv_db *db = open_db(env, true);
  create(db, "t", 3);
  uint32_t fid = fam_of(db, "t"), next = 0;
  model m;
  memset(&m, 0, sizeof m);
  for (int round = 0; round < 3; round++) {
    write_some(db, fid, &m, &rng, 200, &next);
    assert_int_equal(kv_flush(db, "t"), KV_OK);
  }
  sfiles l;
  list_files(db, fid, &l);
  uint32_t in_region = 0, region_blocks = 0;
  for (uint32_t i = 0; i < l.n; i++) {
    in_region += region_of(l.f[i].first, 3) == 1;
    region_blocks += region_of(l.f[i].first, 3) == 1 ? l.f[i].n_blocks : 0;
  }
  assert_true(in_region >= 1 && in_region < l.n);
  kv_range r = {.start = (const uint8_t *)"r160", .start_len = 4, .start_inclusive = true,
                .end = (const uint8_t *)"r290", .end_len = 4};
  kv_scan_options so = {.family_ids = &fid, .n_families = 1, .ranges = &r, .n_ranges = 1};
  kv_scan *s;
  assert_int_equal(kv_scan_open(db, &so, &s), KV_OK);
  kv_row row;
  uint32_t rows = 0, want = 0;
  while (kv_scan_next(s, &row) == KV_OK) rows++;
  for (uint32_t i = 160; i < 290; i++) want += m.val[i] != 0;
  assert_int_equal(rows, want);
  kv_scan_metrics sm;
  kv_scan_get_metrics(s, &sm);
  assert_int_equal(sm.families[0].files_opened, in_region);
  assert_true(sm.families[0].blocks_read >= 1); /* and none of another region's files */
  assert_true(sm.families[0].blocks_read <= region_blocks);
  kv_scan_close(s);
  kv_close(db);
  kv_env_free(env);
}

/* Bad split keys are refused by name, and nothing is created. */
static void test_bad_split_keys(void **state) {
  (void)state;
  kv_env *env = kv_env_mem_new(1);
  kv_db *db = open_db(env, true);
  kv_family_options f = {.name = "0"};
  const uint8_t *keys[2] = {(const uint8_t *)"b", (const uint8_t *)"a"};
  uint32_t lens[2] = {1, 1};
  assert_int_equal(kv_create_table_split(db, "t", &f, 1, keys, lens, 2), KV_ERR_INVALID);
  assert_non_null(strstr(kv_errmsg(), "split key 1 is not above split key 0"));
  lens[1] = 0;
  keys[1] = (const uint8_t *)"c";
  assert_int_equal(kv_create_table_split(db, "t", &f, 1, keys, lens, 2), KV_ERR_INVALID);
  assert_non_null(strstr(kv_errmsg(), "split key 1 is empty"));
  assert_int_equal(kv_table_count(db), 0);
  uint32_t n = 0;
  assert_int_equal(kv_table_regions(db, "t", &n, NULL, NULL), KV_ERR_NOTFOUND);
  kv_close(db);
  kv_env_free(env);
}

/* The MANIFEST: SET_REGIONS replays, survives a rewrite (snapshot), and a bad list does not
** apply; a table without one is one region. */
static void test_manifest_regions(void **state) {
  (void)state;
  kv_env *env = kv_env_mem_new(1);
  assert_int_equal(env->mkdir(env, "/m"), KV_OK);
  kv_manifest *m;
  kv_version v;
  assert_int_equal(kv_manifest_open(env, "/m", true, &m, &v), KV_OK);
  kv_family_meta fa = {.id = 1, .name = "0", .max_versions = 1};
  kv_family_meta fb = {.id = 2, .name = "0", .max_versions = 1};
  kv_table_meta ta = {.id = 1, .name = "A", .families = &fa, .n_families = 1};
  kv_table_meta tb = {.id = 2, .name = "B", .families = &fb, .n_families = 1};
  static const uint8_t enc[] = {2, 'b', 'b', 1, 'c'}; /* "bb", "c" */
  kv_edit e[3] = {{.kind = KV_EDIT_CREATE_TABLE, .table = &ta},
                  {.kind = KV_EDIT_CREATE_TABLE, .table = &tb},
                  {.kind = KV_EDIT_SET_REGIONS, .table_id = 1, .bounds = enc,
                   .bounds_len = sizeof enc, .n_bounds = 2}};
  assert_int_equal(kv_manifest_apply(m, &v, e, 3), KV_OK);
  /* out of order, a key cut short, an unknown table: refused, nothing changes */
  static const uint8_t bad1[] = {1, 'c', 2, 'b', 'b'};
  static const uint8_t bad2[] = {2, 'b', 'b', 3, 'c'};
  kv_edit b = {.kind = KV_EDIT_SET_REGIONS, .table_id = 1, .bounds = bad1,
               .bounds_len = sizeof bad1, .n_bounds = 2};
  assert_int_equal(kv_manifest_apply(m, &v, &b, 1), KV_ERR_INVALID);
  b.bounds = bad2;
  assert_int_equal(kv_manifest_apply(m, &v, &b, 1), KV_ERR_INVALID);
  b.bounds = enc;
  b.table_id = 9;
  assert_int_equal(kv_manifest_apply(m, &v, &b, 1), KV_ERR_NOTFOUND);
  /* docs/FORMAT.md's worked example: table 2 gets one boundary, "m" */
  static const uint8_t one[] = {1, 'm'};
  kv_edit s1 = {.kind = KV_EDIT_SET_REGIONS, .table_id = 2, .bounds = one,
                .bounds_len = sizeof one, .n_bounds = 1};
  assert_int_equal(kv_manifest_apply(m, &v, &s1, 1), KV_OK);
  kv_manifest_close(m);
  kv_version_free(&v);
  uint8_t *buf;
  size_t len;
  assert_int_equal(kv_env_read_all(env, "/m/MANIFEST", &buf, &len), KV_OK);
  static const uint8_t rec[] = {0x07, 0x00, 0x00, 0x00, 0x01, 0x0a, 0x02, 0x01, 0x02, 0x01, 0x6d};
  assert_memory_equal(buf + len - 7, rec + 4, 7); /* the payload, the file's last bytes */
  assert_memory_equal(buf + len - 23, rec, 4);    /* its length */
  assert_int_equal(buf[24], 4);                   /* the header's format version */
  free(buf);
  for (int pass = 0; pass < 2; pass++) { /* replayed; then after a rewrite */
    assert_int_equal(kv_manifest_open(env, "/m", false, &m, &v), KV_OK);
    assert_int_equal(v.n_tables, 2);
    assert_int_equal(v.tables[0].n_bounds, 2);
    assert_int_equal(v.tables[0].bounds_len, sizeof enc);
    assert_memory_equal(v.tables[0].bounds, enc, sizeof enc);
    assert_int_equal(v.tables[1].n_bounds, 1);
    assert_memory_equal(v.tables[1].bounds, one, sizeof one);
    if (pass == 0) {
      kv_manifest_set_rewrite_limit(m, 1);
      kv_edit c = {.kind = KV_EDIT_SET_COUNTERS, .next_file_number = 50};
      for (int i = 0; i < 3; i++) assert_int_equal(kv_manifest_apply(m, &v, &c, 1), KV_OK);
    }
    kv_manifest_close(m);
    kv_version_free(&v);
  }
  kv_env_free(env);
}

/* A store from before regions (a format 3 MANIFEST, no boundaries): one region per table;
** the first writable open rewrites it in format 4. */
static void test_unsplit_is_one_region(void **state) {
  (void)state;
  kv_env *env = kv_env_mem_new(1);
  kv_db *db = open_db(env, true);
  kv_family_options f = {.name = "0"};
  assert_int_equal(kv_create_table(db, "old", &f, 1), KV_OK);
  assert_int_equal(kv_close(db), KV_OK);
  /* make its MANIFEST a format 3 one, as a build before regions wrote it */
  assert_int_equal(tu_manifest_set_version(env, "/db/MANIFEST", 3), 4);
  uint8_t *buf;
  size_t len;
  db = open_db(env, false);
  check_bounds(db, "old", 0);
  kv_close(db);
  assert_int_equal(kv_env_read_all(env, "/db/MANIFEST", &buf, &len), KV_OK);
  assert_int_equal(buf[24], 4); /* rewritten in format 4 by the writable open */
  free(buf);
  db = open_db(env, false);
  check_bounds(db, "old", 0);
  kv_close(db);
  kv_env_free(env);
}

/* The local backend: split keys become regions, split_points reports their boundaries. */
typedef struct got_points {
  char key[8][8];
  uint32_t n;
} got_points;
static void each_point(void *ctx, const uint8_t *key, uint32_t len) {
  got_points *g = ctx;
  assert_true(g->n < 8 && len < 8);
  memcpy(g->key[g->n], key, len);
  g->key[g->n++][len] = 0;
}
static void test_backend_split_points(void **state) {
  (void)state;
  kv_env *env = kv_env_mem_new(1);
  kv_db *db = open_db(env, true);
  kv_backend be;
  kv_backend_local_init(&be, db);
  assert_true(be.caps.split_keys);
  kv_family_options f = {.name = "0"};
  const uint8_t *keys[3] = {(const uint8_t *)SPLITS[0], (const uint8_t *)SPLITS[1],
                            (const uint8_t *)SPLITS[2]};
  uint32_t lens[3] = {4, 4, 4};
  assert_int_equal(kv_be_create_table(&be, "t", &f, 1, keys, lens, 3), KV_OK);
  uint32_t fid = fam_of(db, "t");
  got_points g = {.n = 0};
  assert_int_equal(kv_be_split_points(&be, fid, 16, each_point, &g), KV_OK);
  assert_int_equal(g.n, 3);
  for (uint32_t i = 0; i < 3; i++) assert_string_equal(g.key[i], SPLITS[i]);
  g.n = 0; /* 2 chunks: one boundary, the first */
  assert_int_equal(kv_be_split_points(&be, fid, 2, each_point, &g), KV_OK);
  assert_int_equal(g.n, 1);
  assert_string_equal(g.key[0], SPLITS[0]);
  kv_close(db);
  kv_env_free(env);
}

/* Flip a byte in the middle of the only store file of region 1: reads of the other regions
** go on, a read of region 1 fails naming the file and the region, a compaction fails the
** same way and the store stays writable. */
typedef struct scan_out {
  int rc;
  uint32_t rows;
} scan_out;
static scan_out scan_range(kv_db *db, uint32_t fid, const char *lo, const char *hi) {
  kv_range r = {.start = (const uint8_t *)lo, .start_len = lo ? 4 : 0, .start_inclusive = true,
                .end = (const uint8_t *)hi, .end_len = hi ? 4 : 0};
  kv_scan_options so = {.family_ids = &fid, .n_families = 1, .ranges = &r, .n_ranges = 1};
  kv_scan *s;
  scan_out o = {kv_scan_open(db, &so, &s), 0};
  if (o.rc) return o;
  kv_row row;
  while ((o.rc = kv_scan_next(s, &row)) == KV_OK) o.rows++;
  if (o.rc == KV_ERR_NOTFOUND) o.rc = KV_OK;
  kv_scan_close(s);
  return o;
}

static void damaged_region(const char *region_name) {
  uint64_t rng = tu_seed("regions_damage");
  kv_env *env = kv_env_mem_new(1);
  kv_options o;
  kv_options_init(&o);
  o.env = env;
  o.create_if_missing = true;
  o.compaction_trigger = 1000;
  o.block_cache_size = KV_BLOCK_CACHE_OFF; /* every read goes to the file */
  kv_db *db = NULL;
  assert_int_equal(kv_open("/db", &o, &db), KV_OK);
  create(db, "t", 3);
  uint32_t fid = fam_of(db, "t"), next = 0;
  model m;
  memset(&m, 0, sizeof m);
  write_some(db, fid, &m, &rng, 400, &next);
  assert_int_equal(kv_flush(db, "t"), KV_OK);
  sfiles l;
  list_files(db, fid, &l);
  assert_int_equal(l.n, 4);
  uint64_t victim = 0;
  for (uint32_t i = 0; i < l.n; i++)
    if (region_of(l.f[i].first, 3) == 1) victim = l.f[i].number;
  assert_true(victim != 0);
  char path[128];
  snprintf(path, sizeof path, "/db/data/1/%u/%llu.sf", fid, (unsigned long long)victim);
  int64_t size = kv_env_mem_file_size(env, path);
  assert_true(size > 200);
  uint8_t byte;
  assert_int_equal(kv_env_mem_get_byte(env, path, 40, &byte), KV_OK); /* in the first block */
  assert_int_equal(kv_env_mem_set_byte(env, path, 40, (uint8_t)(byte ^ 0x5a)), KV_OK);

  uint32_t want0 = 0, want23 = 0;
  for (uint32_t i = 0; i < 150; i++) want0 += m.val[i] != 0;
  for (uint32_t i = 300; i < N_KEYS; i++) want23 += m.val[i] != 0;
  scan_out a = scan_range(db, fid, NULL, "r150");
  assert_int_equal(a.rc, KV_OK);
  assert_int_equal(a.rows, want0);
  scan_out b = scan_range(db, fid, "r300", NULL);
  assert_int_equal(b.rc, KV_OK);
  assert_int_equal(b.rows, want23);
  scan_out c = scan_range(db, fid, "r150", "r300");
  assert_int_equal(c.rc, KV_ERR_CORRUPT);
  const char *msg = kv_errmsg();
  assert_non_null(strstr(msg, path));
  assert_non_null(strstr(msg, region_name));

  /* a compaction meets it: KV_ERR_CORRUPT naming the region; the store stays writable */
  assert_int_equal(kv_compact(db, "t", false), KV_ERR_CORRUPT);
  assert_non_null(strstr(kv_errmsg(), region_name));
  write_some(db, fid, &m, &rng, 50, &next);
  assert_int_equal(kv_flush(db, "t"), KV_OK);
  a = scan_range(db, fid, NULL, "r150");
  assert_int_equal(a.rc, KV_OK);
  want0 = 0;
  for (uint32_t i = 0; i < 150; i++) want0 += m.val[i] != 0;
  assert_int_equal(a.rows, want0);
  kv_close(db);
  kv_env_free(env);
}

static void test_damaged_region(void **state) {
  (void)state;
  SPLITS = SPLITS_TEXT;
  damaged_region("table t region 1 of 4 [r150, r300)");
}

/* The boundary's bytes outside printable ASCII are written \xHH in the message. */
static void test_damaged_region_binary_key(void **state) {
  (void)state;
  SPLITS = SPLITS_BIN;
  damaged_region("table t region 1 of 4 [r150, r2\\xff\\x01)");
  SPLITS = SPLITS_TEXT;
}

/* Splits by size: with region_split_size small, random writes over several flushes split
** the table; the boundaries ascend, every row reads back as the model says, files that
** spanned a new boundary are cut by the compaction the split asks for (and kv_compact),
** and a reopen keeps the boundaries. */
typedef struct all_bounds {
  char key[64][8];
  uint32_t n;
} all_bounds;
static void each_any_bound(void *ctx, uint32_t i, const uint8_t *key, uint32_t len) {
  all_bounds *b = ctx;
  assert_int_equal(i, b->n);
  assert_true(len == 4 && b->n < 64);
  memcpy(b->key[b->n], key, len);
  b->key[b->n++][len] = 0;
}

/* Every file of fid lies within one region of b. */
static void check_within_bounds(kv_db *db, uint32_t fid, const all_bounds *b) {
  sfiles l;
  list_files(db, fid, &l);
  for (uint32_t i = 0; i < l.n; i++) {
    uint32_t lo = 0, hi = 0;
    while (lo < b->n && strcmp(l.f[i].first, b->key[lo]) >= 0) lo++;
    while (hi < b->n && strcmp(l.f[i].last, b->key[hi]) >= 0) hi++;
    if (lo != hi) fail_msg("file %llu spans [%s, %s]", (unsigned long long)l.f[i].number,
                           l.f[i].first, l.f[i].last);
  }
}

static void test_split_by_size(void **state) {
  (void)state;
  uint64_t rng = tu_seed("regions_split_by_size");
  kv_env *env = kv_env_mem_new(1);
  kv_options o;
  kv_options_init(&o);
  o.env = env;
  o.create_if_missing = true;
  o.compaction_trigger = 1000;
  o.region_split_size = 2500;
  kv_db *db = NULL;
  assert_int_equal(kv_open("/db", &o, &db), KV_OK);
  kv_family_options f = {.name = "0", .block_size = 1024, .compression = KV_COMPRESSION_NONE};
  assert_int_equal(kv_create_table(db, "t", &f, 1), KV_OK);
  uint32_t fid = fam_of(db, "t"), next = 0;
  model m;
  memset(&m, 0, sizeof m);
  for (int round = 0; round < 6; round++) {
    write_some(db, fid, &m, &rng, 300, &next);
    assert_int_equal(kv_flush(db, "t"), KV_OK); /* waits for the compactions a split asks */
    check_model(db, fid, &m);
  }
  /* splits go on in the background: stop them (a reopen without the setting) to check */
  assert_int_equal(kv_close(db), KV_OK);
  o.region_split_size = 0;
  assert_int_equal(kv_open("/db", &o, &db), KV_OK);
  all_bounds b = {.n = 0};
  uint32_t n = 0;
  assert_int_equal(kv_table_regions(db, "t", &n, each_any_bound, &b), KV_OK);
  assert_int_equal(n, b.n + 1);
  assert_true(n >= 3); /* 1,800 cells of 10-12 bytes on disk: past 2 x 2,500 bytes */
  for (uint32_t i = 1; i < b.n; i++) assert_true(strcmp(b.key[i - 1], b.key[i]) < 0);
  check_model(db, fid, &m);
  assert_int_equal(kv_compact(db, "t", false), KV_OK); /* cuts what spans a new boundary */
  check_within_bounds(db, fid, &b);
  check_model(db, fid, &m);
  assert_int_equal(kv_close(db), KV_OK);
  assert_int_equal(kv_open("/db", &o, &db), KV_OK); /* the boundaries are the MANIFEST's */
  all_bounds b2 = {.n = 0};
  assert_int_equal(kv_table_regions(db, "t", &n, each_any_bound, &b2), KV_OK);
  assert_int_equal(b2.n, b.n);
  for (uint32_t i = 0; i < b2.n; i++) assert_string_equal(b2.key[i], b.key[i]);
  check_within_bounds(db, fid, &b2);
  check_model(db, fid, &m);
  kv_close(db);
  kv_env_free(env);
}

static void bulk_round(kv_db *db, uint32_t fid, model *m, uint64_t *rng, uint32_t *next,
                       size_t segment_bytes) {
  kv_bulk_options bo = {.segment_bytes = segment_bytes};
  kv_bulk *b;
  assert_int_equal(kv_bulk_begin(db, &bo, &b), KV_OK);
  for (int k = 0; k < 700; k++) {
    uint32_t i = (uint32_t)tu_below(rng, N_KEYS);
    char key[8], val[16];
    row_key(key, i);
    uint32_t v = ++*next;
    snprintf(val, sizeof val, "v%u", v);
    assert_int_equal(kv_bulk_put(b, fid, key, 4, "q", 1, KV_TS_NOW, val, strlen(val)), KV_OK);
    m->val[i] = v;
  }
  assert_int_equal(kv_bulk_commit(b, NULL), KV_OK);
  kv_bulk_free(b);
}

static void test_bulk_load_regions(void **state) {
  (void)state;
  uint64_t rng = tu_seed("regions_bulk");
  kv_env *env = kv_env_mem_new(1);
  kv_db *db = open_db(env, true);
  create(db, "t", 3);
  uint32_t fid = fam_of(db, "t"), next = 0;
  model m;
  memset(&m, 0, sizeof m);
  bulk_round(db, fid, &m, &rng, &next, 0); /* one buffer */
  assert_int_equal(check_within(db, fid, 3), 4);
  check_model(db, fid, &m);
  write_some(db, fid, &m, &rng, 100, &next);
  assert_int_equal(kv_flush(db, "t"), KV_OK);
  bulk_round(db, fid, &m, &rng, &next, 4096); /* several segments merged at commit */
  check_within(db, fid, 3);
  check_model(db, fid, &m);
  assert_int_equal(kv_close(db), KV_OK);
  db = open_db(env, false);
  check_within(db, fid, 3);
  check_model(db, fid, &m);
  kv_close(db);
  kv_env_free(env);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_flush_compact_regions),
      cmocka_unit_test(test_flush_compact_one_region),
      cmocka_unit_test(test_auto_compaction_per_region),
      cmocka_unit_test(test_scan_stays_in_region),
      cmocka_unit_test(test_bad_split_keys),
      cmocka_unit_test(test_manifest_regions),
      cmocka_unit_test(test_unsplit_is_one_region),
      cmocka_unit_test(test_backend_split_points),
      cmocka_unit_test(test_damaged_region),
      cmocka_unit_test(test_damaged_region_binary_key),
      cmocka_unit_test(test_split_by_size),
      cmocka_unit_test(test_bulk_load_regions),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
