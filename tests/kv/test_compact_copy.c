/*
** tests/kv/test_compact_copy.c: minor compaction that copies whole store-file blocks
** (kv/sf/sf_copy.h), through kv.h on the in-memory env. Every scenario builds the same store
** twice, once compacted with block copy on and once with it off (every cell merged), and
** checks that the two hold the same cells: every version through a full scan, a scan at a
** snapshot taken before the last writes, a time-range scan, a point read of every row key
** (the output's bloom filter must know every row), and the family's cell and row counts.
** The counters show which path ran: files whose key ranges follow one another are copied
** block for block; overlapping ranges merge where they overlap and copy elsewhere; rows
** wider than a block continue from a copied block into merged cells and back. Values of
** doubles with a decimal (decimal-scaled groups, format version 3) copy as they merge. A damaged
** block fails the compaction with KV_ERR_CORRUPT naming the file, and loses no file.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "kv/env/env_mem.h"
#include "kv/kv.h"
#include "kv/sf/sf.h"
#include "testutil.h"

#define T0 1700000000000ll
#define DUMP_CAP (4u << 20)

/* The family's BLOCKSIZE: 512 bytes (blocks lz4-compressed whole), or 8 KiB (blocks cut in
** sections: docs/FORMAT.md Part 2, compression byte 2). */
static uint32_t g_block_size = 512;
/* put_file's values of odd columns: doubles of one decimal in the order-preserving 8 bytes
** (stored as decimal-scaled value groups, format version 3), not text. */
static bool g_dec;
static uint32_t g_version; /* same_both_ways: the copying run's file format version */

/* The order-preserving 8 bytes of x (IEEE bits big-endian, sign bit flipped for positives,
** every bit inverted for negatives). */
static void enc_double(double x, uint8_t v[8]) {
  uint64_t b;
  memcpy(&b, &x, 8);
  b = (b >> 63) ? ~b : b ^ (1ull << 63);
  for (int i = 7; i >= 0; i--) { v[i] = (uint8_t)b; b >>= 8; }
}

typedef struct fx {
  kv_env *env;    /* in-memory file system */
  kv_db *db;      /* store */
  uint32_t a;     /* family a of table t: VERSIONS 3, 512-byte blocks */
  uint64_t snap;  /* a snapshot acquired part way (0: none) */
} fx;

static void fx_open(fx *f) {
  kv_options o;
  kv_options_init(&o);
  o.env = f->env;
  o.create_if_missing = true;
  o.compaction_trigger = 1000; /* compactions only when the test asks */
  assert_int_equal(kv_open("/db", &o, &f->db), KV_OK);
  assert_int_equal(kv_family_id(f->db, "t", "a", &f->a), KV_OK);
}

static fx *fx_new(void) {
  fx *f = calloc(1, sizeof *f);
  f->env = kv_env_mem_new(T0);
  kv_options o;
  kv_options_init(&o);
  o.env = f->env;
  o.create_if_missing = true;
  assert_int_equal(kv_open("/db", &o, &f->db), KV_OK);
  kv_family_options fo = {.name = "a", .max_versions = 3, .block_size = g_block_size};
  assert_int_equal(kv_create_table(f->db, "t", &fo, 1), KV_OK);
  assert_int_equal(kv_close(f->db), KV_OK);
  fx_open(f);
  return f;
}

static void fx_free(fx *f) {
  if (f->snap) kv_snapshot_release(f->db, f->snap);
  assert_int_equal(kv_close(f->db), KV_OK);
  kv_env_free(f->env);
  free(f);
}

/* Rows [from, to) step `step`, `nq` columns each (c00.. with values naming row, column and
** tag), at timestamp ts; then a flush: one store file. */
static void put_file(fx *f, int from, int to, int step, int nq, int64_t ts, int tag) {
  kv_batch *b = kv_batch_new();
  for (int r = from; r < to; r += step)
    for (int q = 0; q < nq; q++) {
      char row[24], qual[24], val[64];
      snprintf(row, sizeof row, "r%05d", r);
      snprintf(qual, sizeof qual, "c%02d", q);
      int vl = snprintf(val, sizeof val, "v-%d-%d-%d-padding-padding", r, q, tag);
      if (g_dec && q % 2) {
        enc_double((double)(r * 7 + q * 3 + tag - 2000) / 10, (uint8_t *)val);
        vl = 8;
      }
      assert_int_equal(kv_batch_put(b, f->a, row, strlen(row), qual, strlen(qual), ts, val,
                                    (size_t)vl), KV_OK);
    }
  assert_int_equal(kv_commit(f->db, b, NULL), KV_OK);
  kv_batch_free(b);
  assert_int_equal(kv_flush(f->db, NULL), KV_OK);
}

/* Every cell a scan hands out, as text: all versions at `snap` (0 = latest), within
** [ts_min, ts_max) when ts_max is not 0. */
static char *dump(fx *f, uint64_t snap, int64_t ts_min, int64_t ts_max) {
  kv_scan_options so = {0};
  so.family_ids = &f->a;
  so.n_families = 1;
  so.max_versions = 10;
  so.snapshot = snap;
  so.ts_min = ts_min;
  so.ts_max = ts_max;
  kv_scan *s;
  assert_int_equal(kv_scan_open(f->db, &so, &s), KV_OK);
  char *out = malloc(DUMP_CAP);
  size_t len = 0;
  kv_row r;
  int rc;
  while ((rc = kv_scan_next(s, &r)) == KV_OK) {
    len += (size_t)snprintf(out + len, DUMP_CAP - len, "%.*s:", (int)r.key_len,
                            (const char *)r.key);
    for (uint32_t i = 0; i < r.n_cells; i++) {
      len += (size_t)snprintf(out + len, DUMP_CAP - len, "%.*s@%lld=",
                              (int)r.cells[i].qual_len, (const char *)r.cells[i].qual,
                              (long long)r.cells[i].ts);
      for (uint32_t j = 0; j < r.cells[i].value_len && len + 8 < DUMP_CAP; j++) /* hex */
        len += (size_t)snprintf(out + len, DUMP_CAP - len, "%02x", r.cells[i].value[j]);
      len += (size_t)snprintf(out + len, DUMP_CAP - len, " ");
    }
    assert_true(len < DUMP_CAP);
  }
  assert_int_equal(rc, KV_ERR_NOTFOUND);
  out[len] = 0;
  kv_scan_close(s);
  return out;
}

/* Cells of row key r read with kv_get (0 when the row is not found). */
static uint32_t get_cells(fx *f, int r) {
  char row[16];
  snprintf(row, sizeof row, "r%05d", r);
  kv_scan_options so = {0};
  so.family_ids = &f->a;
  so.n_families = 1;
  so.max_versions = 10;
  kv_scan *s = NULL;
  kv_row out;
  int rc = kv_get(f->db, &so, row, strlen(row), &s, &out);
  uint32_t n = rc == KV_OK ? out.n_cells : 0;
  assert_true(rc == KV_OK || rc == KV_ERR_NOTFOUND);
  kv_scan_close(s);
  return n;
}

static kv_family_stats stats(fx *f) {
  kv_family_stats st;
  assert_int_equal(kv_family_get_stats(f->db, f->a, &st), KV_OK);
  return st;
}

typedef struct sf_list {
  kv_env *env;
  const char *dir;          /* directory being listed */
  char path[16][128];       /* store files found */
  long number[16];          /* their file numbers */
  int n;
} sf_list;

static int collect(void *ctx, const char *name);

/* Every .sf file under dir, at any depth. */
static void find_sf(sf_list *l, const char *dir) {
  const char *saved = l->dir;
  l->dir = dir;
  assert_int_equal(l->env->list(l->env, dir, collect, l), KV_OK);
  l->dir = saved;
}

static int collect(void *ctx, const char *name) {
  sf_list *l = ctx;
  char p[128];
  snprintf(p, sizeof p, "%s/%s", l->dir, name);
  size_t len = strlen(name);
  if (kv_env_mem_file_size(l->env, p) < 0) {
    char *sub = strdup(p);
    find_sf(l, sub);
    free(sub);
  } else if (len > 3 && !strcmp(name + len - 3, ".sf") && l->n < 16) {
    snprintf(l->path[l->n], sizeof l->path[0], "%s", p);
    l->number[l->n++] = strtol(name, NULL, 10);
  }
  return 0;
}

typedef void (*build_fn)(fx *f);

/* What a compacted store reads, kept to compare the two ways of compacting. */
typedef struct seen {
  char *all, *at_snap, *ranged; /* dumps: latest, at the snapshot, a time range */
  uint32_t cells[1200];         /* kv_get per row key 0..1199 */
  kv_family_stats st;           /* after the compaction */
  kv_sf_props props;            /* the compacted file's trailer */
} seen;

/* Build with `build`, check the reads are unchanged by a minor compaction (block copy as
** `copy` says), and fill *out with what the compacted store reads. */
static void build_compact(build_fn build, bool copy, seen *out) {
  fx *f = fx_new();
  build(f);
  char *before = dump(f, 0, 0, 0);
  char *before_snap = f->snap ? dump(f, f->snap, 0, 0) : NULL;
  kv_compact_set_block_copy(copy);
  assert_int_equal(kv_compact(f->db, "t", false), KV_OK);
  kv_compact_set_block_copy(true);
  out->st = stats(f);
  assert_int_equal(out->st.store_files, 1);
  out->all = dump(f, 0, 0, 0);
  assert_string_equal(out->all, before);
  out->at_snap = f->snap ? dump(f, f->snap, 0, 0) : NULL;
  if (f->snap) assert_string_equal(out->at_snap, before_snap);
  out->ranged = dump(f, 0, T0 - 2000, T0 - 1000);
  for (int r = 0; r < 1200; r++) out->cells[r] = get_cells(f, r);
  /* the file itself: its trailer, and a bloom filter that knows every row key it holds */
  sf_list l = {.env = f->env};
  find_sf(&l, "/db");
  assert_int_equal(l.n, 1);
  kv_sf_reader *rd;
  assert_int_equal(kv_sf_open(f->env, l.path[0], &rd), KV_OK);
  out->props = *kv_sf_get_props(rd);
  for (int r = 0; r < 1200; r++) {
    char row[16];
    snprintf(row, sizeof row, "r%05d", r);
    if (out->cells[r]) assert_true(kv_sf_may_contain_row(rd, (const uint8_t *)row, 6));
  }
  kv_sf_close(rd);
  /* and after a reopen: the file's index, bloom filter and trailer as written */
  if (f->snap) kv_snapshot_release(f->db, f->snap);
  f->snap = 0;
  assert_int_equal(kv_close(f->db), KV_OK);
  fx_open(f);
  char *reopened = dump(f, 0, 0, 0);
  assert_string_equal(reopened, before);
  kv_family_stats st = stats(f);
  assert_int_equal(st.cells, out->st.cells);
  assert_int_equal(st.rows, out->st.rows);
  free(reopened);
  free(before);
  free(before_snap);
  fx_free(f);
}

static void seen_free(seen *s) {
  free(s->all);
  free(s->at_snap);
  free(s->ranged);
}

/* Both ways read the same; returns the copying run's stats. */
static kv_family_stats same_both_ways(build_fn build) {
  seen *on = calloc(1, sizeof *on), *off = calloc(1, sizeof *off);
  build_compact(build, true, on);
  build_compact(build, false, off);
  assert_string_equal(on->all, off->all);
  if (on->at_snap) assert_string_equal(on->at_snap, off->at_snap);
  assert_string_equal(on->ranged, off->ranged);
  assert_memory_equal(on->cells, off->cells, sizeof on->cells);
  assert_int_equal(on->st.cells, off->st.cells);
  assert_int_equal(on->st.rows, off->st.rows); /* distinct row keys, counted once */
  assert_int_equal(on->props.cells, off->props.cells);
  assert_int_equal(on->props.rows, off->props.rows);
  assert_int_equal(on->props.min_ts, off->props.min_ts);
  assert_int_equal(on->props.max_ts, off->props.max_ts);
  assert_int_equal(on->props.min_seq, off->props.min_seq);
  assert_int_equal(on->props.max_seq, off->props.max_seq);
  assert_int_equal(on->props.format_version, off->props.format_version);
  g_version = on->props.format_version;
  assert_int_equal(off->st.blocks_copied, 0);
  assert_true(off->st.blocks_merged > 0);
  kv_family_stats st = on->st;
  seen_free(on);
  seen_free(off);
  free(on);
  free(off);
  return st;
}

/* Three files whose key ranges follow one another. */
static void build_disjoint(fx *f) {
  put_file(f, 0, 300, 1, 6, T0 - 1500, 1);
  put_file(f, 300, 600, 1, 6, T0 - 500, 2);
  assert_int_equal(kv_snapshot_acquire(f->db, &f->snap), KV_OK);
  put_file(f, 600, 900, 1, 6, T0 - 1200, 3);
}

static void test_disjoint_files_copied_whole(void **state) {
  (void)state;
  kv_family_stats st = same_both_ways(build_disjoint);
  assert_true(st.blocks_copied > 20);
  assert_int_equal(st.blocks_merged, 0); /* nothing overlapped: every block copied */
  assert_int_equal(st.blocks, st.blocks_copied);
  assert_int_equal(st.rows, 900);
  assert_int_equal(st.cells, 900 * 6);
  assert_int_equal(st.compactions, 1);
}

/* Overlaps: new versions of rows of the first file, a file interleaving with another row
** by row, and a file whose range sits inside another's. */
static void build_overlapping(fx *f) {
  put_file(f, 0, 600, 1, 5, T0 - 1500, 1);
  put_file(f, 300, 350, 1, 5, T0 - 1400, 2);  /* newer versions of rows 300..349 */
  assert_int_equal(kv_snapshot_acquire(f->db, &f->snap), KV_OK);
  put_file(f, 700, 1100, 2, 4, T0 - 1300, 3); /* even rows */
  put_file(f, 701, 1101, 2, 4, T0 - 900, 4);  /* odd rows: interleaves row by row */
  put_file(f, 1150, 1200, 1, 7, T0 - 100, 5);
}

static void test_overlapping_files_merge_where_they_overlap(void **state) {
  (void)state;
  kv_family_stats st = same_both_ways(build_overlapping);
  assert_true(st.blocks_copied > 10); /* rows 0..299 and 350..599 of the first file */
  assert_true(st.blocks_merged > 10); /* 300..349, 700..1100 */
  assert_int_equal(st.rows, 600 + 400 + 50);
}

/* Rows wider than a block (each continues in the next block), in disjoint files, and one
** row key shared by two files in the middle of the first one's range. */
static void build_wide(fx *f) {
  put_file(f, 0, 40, 1, 30, T0 - 1500, 1);
  put_file(f, 40, 80, 1, 30, T0 - 1400, 2);
  put_file(f, 20, 21, 1, 3, T0 - 1100, 3);     /* row 20 again: newer versions */
  assert_int_equal(kv_snapshot_acquire(f->db, &f->snap), KV_OK);
  put_file(f, 80, 120, 1, 30, T0 - 1200, 4);
}

static void test_wide_rows_continue_across_copied_blocks(void **state) {
  (void)state;
  kv_family_stats st = same_both_ways(build_wide);
  assert_true(st.blocks_copied > 50);
  assert_true(st.blocks_merged > 0);
  assert_int_equal(st.rows, 120);
}

/* The same three scenarios with blocks large enough to be stored in sections: a block
** copied after the first of a run has only its section 0 (rows and cells) decompressed. */
static void test_sectioned_blocks(void **state) {
  (void)state;
  g_block_size = 8192;
  kv_family_stats st = same_both_ways(build_disjoint);
  assert_true(st.blocks_copied > 3);
  assert_int_equal(st.blocks_merged, 0);
  st = same_both_ways(build_overlapping);
  assert_true(st.blocks_copied > 3);
  assert_true(st.blocks_merged > 0);
  st = same_both_ways(build_wide);
  assert_true(st.blocks_copied > 3);
  g_block_size = 512;
}

/* Odd columns' values decimal-scaled: copied blocks read back as merged ones do, and a file
** made of copied blocks of version 3 files is version 3 (as the merged one is); text
** values alone make version 2 files. */
static void test_decimal_groups(void **state) {
  (void)state;
  kv_family_stats st = same_both_ways(build_disjoint);
  assert_int_equal(g_version, 2);
  g_dec = true;
  st = same_both_ways(build_disjoint);
  assert_int_equal(g_version, 3);
  assert_int_equal(st.blocks, st.blocks_copied);
  st = same_both_ways(build_overlapping);
  assert_int_equal(g_version, 3);
  assert_true(st.blocks_copied > 10 && st.blocks_merged > 10);
  g_block_size = 8192;
  st = same_both_ways(build_wide);
  assert_int_equal(g_version, 3);
  assert_true(st.blocks_copied > 3);
  g_block_size = 512;
  g_dec = false;
}

/* ---- a damaged block ------------------------------------------------------------------ */

static void test_damaged_block_fails_and_keeps_files(void **state) {
  (void)state;
  fx *f = fx_new();
  put_file(f, 0, 300, 1, 6, T0 - 1500, 1);
  put_file(f, 300, 600, 1, 6, T0 - 500, 2);
  put_file(f, 600, 900, 1, 6, T0 - 1200, 3);
  sf_list l = {.env = f->env};
  find_sf(&l, "/db");
  assert_int_equal(l.n, 3);
  int mid = 0; /* the second file written: its blocks are copied after the first's */
  for (int i = 0; i < 3; i++) {
    int below = 0;
    for (int j = 0; j < 3; j++) below += l.number[j] < l.number[i];
    if (below == 1) mid = i;
  }
  int64_t size = kv_env_mem_file_size(f->env, l.path[mid]);
  uint8_t v;
  uint64_t off = (uint64_t)size / 3; /* inside a data block (the index and bloom come last) */
  assert_int_equal(kv_env_mem_get_byte(f->env, l.path[mid], off, &v), KV_OK);
  assert_int_equal(kv_env_mem_set_byte(f->env, l.path[mid], off, (uint8_t)(v ^ 0x5a)), KV_OK);
  assert_int_equal(kv_compact(f->db, "t", false), KV_ERR_CORRUPT);
  assert_non_null(strstr(kv_errmsg(), strrchr(l.path[mid], '/') + 1));
  /* the store stays writable (docs/KV_REGIONS.md: a damaged input fails the family's
     compactions, not the store), and kv_compact reports the damage again */
  kv_batch *b = kv_batch_new();
  assert_int_equal(kv_batch_put(b, f->a, "x", 1, "q", 1, T0, "v", 1), KV_OK);
  assert_int_equal(kv_commit(f->db, b, NULL), KV_OK);
  kv_batch_free(b);
  assert_int_equal(kv_compact(f->db, "t", false), KV_ERR_CORRUPT);
  assert_non_null(strstr(kv_errmsg(), strrchr(l.path[mid], '/') + 1));
  kv_close(f->db); /* it flushes "x": a fourth file */
  fx_open(f);
  kv_family_stats st = stats(f);
  assert_int_equal(st.store_files, 4); /* no input replaced or removed; "x"'s flush */
  assert_int_equal(get_cells(f, 10), 6); /* the undamaged files read as before */
  assert_int_equal(get_cells(f, 899), 6);
  fx_free(f);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_disjoint_files_copied_whole),
    cmocka_unit_test(test_overlapping_files_merge_where_they_overlap),
    cmocka_unit_test(test_wide_rows_continue_across_copied_blocks),
    cmocka_unit_test(test_sectioned_blocks),
    cmocka_unit_test(test_decimal_groups),
    cmocka_unit_test(test_damaged_block_fails_and_keeps_files),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
