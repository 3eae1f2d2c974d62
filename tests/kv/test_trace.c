/*
** tests/kv/test_trace.c: the block listing (kv_family_blocks) and the block trace (kv_trace)
** through kv.h on the in-memory env. The listing gives every block of every store file of a
** family, as many as kv_family_get_stats counts, first keys ascending within a file. A trace
** handed to scans records what their metrics count: per family, the loads summed over the
** blocks equal blocks_read and the cache hits blocks_cache_hit, the ranges equal
** ranges_sought; every block recorded is one the listing names. Checked for full, range,
** multi-range, reverse and skip-by-prefix scans, point reads (kv_get), two families, a warm
** block cache, and the columnar scan (kv_colagg_run) with one and two threads; then the
** range cap (KV_TRACE_MAX_RANGES), kv_trace_clear and kv_trace_merge.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "kv/colscan/colscan.h"
#include "kv/env/env_mem.h"
#include "kv/kv.h"
#include "tu_kv.h"

#define ROWS 3000

typedef struct fx {
  kv_env *env;   /* in-memory file system */
  kv_db *db;     /* store, block cache of 1 MiB */
  uint32_t a, b; /* families of table t: a (small blocks, every row), b (every 100th row) */
} fx;

static void key_of(int i, char *buf) { snprintf(buf, 16, "k%05d", i); }

/* Write rows [from, to) of family a (and b for every 100th), one batch. */
static void write_rows(fx *f, int from, int to, int version) {
  kv_batch *bt = kv_batch_new();
  char k[16], v[64];
  for (int i = from; i < to; i++) {
    key_of(i, k);
    snprintf(v, sizeof v, "value %d of row %d, padded to make blocks fill", version, i);
    assert_int_equal(kv_batch_put(bt, f->a, k, strlen(k), "q", 1, KV_TS_NOW, v, strlen(v)),
                     KV_OK);
    if (i % 100 == 0)
      assert_int_equal(kv_batch_put(bt, f->b, k, strlen(k), "m", 1, KV_TS_NOW, "meta", 4),
                       KV_OK);
  }
  assert_int_equal(kv_commit(f->db, bt, NULL), KV_OK);
  kv_batch_free(bt);
}

static int setup(void **state) {
  fx *f = calloc(1, sizeof *f);
  f->env = kv_env_mem_new(1700000000000ll);
  f->db = tu_kv_open_mem(f->env, 1u << 20);
  kv_family_options fo[2] = {{.name = "a", .block_size = 1024}, {.name = "b"}};
  assert_int_equal(kv_create_table(f->db, "t", fo, 2), KV_OK);
  assert_int_equal(kv_family_id(f->db, "t", "a", &f->a), KV_OK);
  assert_int_equal(kv_family_id(f->db, "t", "b", &f->b), KV_OK);
  /* two store files per family whose key ranges overlap, and a row in the memstore */
  write_rows(f, 0, ROWS, 1);
  assert_int_equal(kv_flush(f->db, NULL), KV_OK);
  write_rows(f, ROWS / 2, ROWS + 200, 2);
  assert_int_equal(kv_flush(f->db, NULL), KV_OK);
  write_rows(f, 10, 11, 3);
  *state = f;
  return 0;
}

static int teardown(void **state) {
  fx *f = *state;
  assert_int_equal(kv_close(f->db), KV_OK);
  kv_env_free(f->env);
  free(f);
  return 0;
}

/* ---- kv_family_blocks ------------------------------------------------------------------- */
#define MAXB 4096
typedef struct listing {
  size_t n;                 /* blocks listed */
  uint64_t file[MAXB];      /* per block: its file */
  uint32_t block[MAXB];     /* its index */
  uint64_t bytes;           /* on-disk bytes summed */
  uint64_t files;           /* distinct files */
  char prev[64];            /* the previous block's first key (same file) */
  uint64_t prev_file;       /* its file */
} listing;

static int collect(void *ctx, const kv_file_block *b) {
  listing *l = ctx;
  assert_true(l->n < MAXB);
  char k[64];
  assert_true(b->first_row_len < sizeof k);
  memcpy(k, b->first_row, b->first_row_len);
  k[b->first_row_len] = 0;
  if (l->n && l->prev_file == b->file) {
    assert_int_equal(b->block, l->block[l->n - 1] + 1);
    assert_true(strcmp(l->prev, k) < 0); /* first keys ascend within a file */
  } else {
    assert_int_equal(b->block, 0);
    l->files++;
  }
  assert_true(b->block < b->n_blocks);
  assert_true(b->offset + b->bytes <= b->file_bytes);
  assert_true(b->cells >= b->rows && b->rows > 0);
  assert_true(b->last_row_len > 0 && memcmp(b->last_row, b->first_row,
                                            b->last_row_len < b->first_row_len
                                                ? b->last_row_len : b->first_row_len) >= 0);
  strcpy(l->prev, k);
  l->prev_file = b->file;
  l->file[l->n] = b->file;
  l->block[l->n] = b->block;
  l->bytes += b->bytes;
  l->n++;
  return 0;
}

static void list_family(fx *f, uint32_t fid, listing *l) {
  memset(l, 0, sizeof *l);
  assert_int_equal(kv_family_blocks(f->db, fid, collect, l), KV_OK);
  kv_family_stats st;
  assert_int_equal(kv_family_get_stats(f->db, fid, &st), KV_OK);
  assert_int_equal(l->n, st.blocks);
  assert_int_equal(l->files, st.store_files);
  assert_true(l->bytes < st.store_file_bytes);
}

static int stop_at_3(void *ctx, const kv_file_block *b) {
  (void)b;
  return ++*(int *)ctx == 3 ? 42 : 0;
}

static void test_listing(void **state) {
  fx *f = *state;
  listing *l = malloc(sizeof *l);
  list_family(f, f->a, l);
  assert_int_equal(l->files, 2);
  assert_true(l->n > 100); /* 1 KiB blocks */
  list_family(f, f->b, l);
  assert_int_equal(l->files, 2);
  int calls = 0;
  assert_int_equal(kv_family_blocks(f->db, f->a, stop_at_3, &calls), 42);
  assert_int_equal(calls, 3);
  assert_int_equal(kv_family_blocks(f->db, 9999, stop_at_3, &calls), KV_ERR_NOTFOUND);
  assert_int_equal(kv_family_blocks(NULL, f->a, stop_at_3, &calls), KV_MISUSE);
  free(l);
}

/* ---- traced scans ------------------------------------------------------------------------ */
/* Check trace t against metrics m: per family loads and hits, ranges, and that every block
** recorded is listed. */
static void check(fx *f, kv_trace *t, const kv_scan_metrics *m) {
  size_t n = 0;
  const kv_trace_block *tb = kv_trace_blocks(t, &n);
  listing *l = malloc(sizeof *l);
  for (uint32_t k = 0; k < m->n_families; k++) {
    const kv_family_metrics *fm = &m->families[k];
    uint64_t loads = 0, hits = 0;
    list_family(f, fm->family_id, l);
    for (size_t i = 0; i < n; i++) {
      if (tb[i].family_id != fm->family_id) continue;
      loads += tb[i].loads;
      hits += tb[i].cache_hits;
      assert_true(tb[i].cache_hits <= tb[i].loads);
      bool listed = false;
      for (size_t j = 0; j < l->n && !listed; j++)
        listed = l->file[j] == tb[i].file && l->block[j] == tb[i].block;
      assert_true(listed);
      if (i) assert_true(tb[i - 1].file < tb[i].file ||
                         (tb[i - 1].file == tb[i].file && tb[i - 1].block < tb[i].block));
    }
    assert_int_equal(loads, fm->blocks_read);
    assert_int_equal(hits, fm->blocks_cache_hit);
  }
  size_t nr = 0;
  uint64_t total = 0;
  kv_trace_ranges(t, &nr, &total);
  assert_int_equal(total, m->ranges_sought);
  assert_int_equal(nr, total < KV_TRACE_MAX_RANGES ? total : KV_TRACE_MAX_RANGES);
  assert_false(kv_trace_lost(t));
  free(l);
}

/* Run scan so to its end with a fresh trace; check it; returns the rows. */
static uint64_t traced(fx *f, kv_scan_options *so, kv_trace *t) {
  kv_trace_clear(t);
  so->trace = t;
  kv_scan *s = NULL;
  assert_int_equal(kv_scan_open(f->db, so, &s), KV_OK);
  kv_row r;
  uint64_t rows = 0;
  int rc;
  while ((rc = kv_scan_next(s, &r)) == KV_OK) rows++;
  assert_int_equal(rc, KV_ERR_NOTFOUND);
  kv_scan_metrics m;
  kv_scan_get_metrics(s, &m);
  kv_scan_close(s);
  check(f, t, &m);
  return rows;
}

static void test_scans(void **state) {
  fx *f = *state;
  kv_trace *t = kv_trace_new();
  uint32_t both[2] = {f->a, f->b};
  kv_scan_options so;
  memset(&so, 0, sizeof so);
  so.family_ids = both;
  so.n_families = 2;
  assert_int_equal(traced(f, &so, t), ROWS + 200); /* full scan */
  size_t n = 0;
  kv_trace_blocks(t, &n);
  assert_true(n > 100);
  size_t nr = 0;
  const kv_trace_range *r = kv_trace_ranges(t, &nr, NULL);
  assert_int_equal(nr, 1);
  assert_false(r[0].has_start);
  assert_false(r[0].has_end);
  assert_int_equal(r[0].family_id, f->a);
  /* one range, then three, forward and reverse: bounds as given */
  kv_range rg[3] = {{(const uint8_t *)"k00100", 6, true, (const uint8_t *)"k00200", 6, false},
                    {(const uint8_t *)"k01000", 6, true, (const uint8_t *)"k01010", 6, true},
                    {(const uint8_t *)"k02500", 6, false, NULL, 0, false}};
  so.ranges = rg;
  so.n_ranges = 1;
  assert_int_equal(traced(f, &so, t), 100);
  r = kv_trace_ranges(t, &nr, NULL);
  assert_int_equal(nr, 1);
  assert_true(r[0].has_start && r[0].has_end);
  assert_memory_equal(r[0].start, "k00100", 6);
  assert_memory_equal(r[0].end, "k00200", 6);
  so.n_ranges = 3;
  uint64_t fwd = traced(f, &so, t);
  so.reverse = true;
  assert_int_equal(traced(f, &so, t), fwd);
  r = kv_trace_ranges(t, &nr, NULL);
  assert_int_equal(nr, 3);
  assert_false(r[0].has_end); /* reverse: the last range first */
  so.reverse = false;
  /* one family, a warm cache: the second run's loads are hits */
  so.family_ids = &f->a;
  so.n_families = 1;
  so.n_ranges = 1;
  traced(f, &so, t);
  traced(f, &so, t);
  const kv_trace_block *tb = kv_trace_blocks(t, &n);
  uint64_t hits = 0;
  for (size_t i = 0; i < n; i++) hits += tb[i].cache_hits;
  assert_true(hits > 0);
  kv_trace_free(t);
}

static uint32_t prefix2(void *ctx, const uint8_t *key, uint32_t len) {
  (void)ctx;
  return len >= 3 ? 3 : 0; /* "k01": 1,000 keys a prefix, k01000 .. k01999 */
}

static void test_skip_and_get(void **state) {
  fx *f = *state;
  kv_trace *t = kv_trace_new();
  kv_scan_options so;
  memset(&so, 0, sizeof so);
  so.family_ids = &f->a;
  so.n_families = 1;
  kv_range sfx = {(const uint8_t *)"05", 2, true, (const uint8_t *)"07", 2, false};
  kv_skip_prefix sp = {prefix2, NULL, &sfx, 1, 0};
  so.skip_prefix = &sp;
  assert_int_equal(traced(f, &so, t), 4 * 20); /* k0P050 .. k0P069 of prefixes k00 .. k03 */
  size_t nr = 0;
  uint64_t total = 0;
  kv_trace_ranges(t, &nr, &total);
  assert_int_equal(total, 4); /* one range per prefix */
  so.skip_prefix = NULL;
  /* point reads: each one range of one key */
  kv_trace_clear(t);
  so.trace = t;
  uint64_t loads = 0;
  for (int i = 0; i < 50; i++) {
    char k[16];
    key_of(i * 37, k);
    kv_scan *s = NULL;
    kv_row row;
    assert_int_equal(kv_get(f->db, &so, k, strlen(k), &s, &row), KV_OK);
    kv_scan_metrics m;
    kv_scan_get_metrics(s, &m);
    loads += m.families[0].blocks_read;
    kv_scan_close(s);
  }
  size_t n = 0;
  const kv_trace_block *tb = kv_trace_blocks(t, &n);
  uint64_t sum = 0;
  for (size_t i = 0; i < n; i++) sum += tb[i].loads;
  assert_int_equal(sum, loads);
  kv_trace_ranges(t, &nr, &total);
  assert_int_equal(total, 50);
  kv_trace_free(t);
}

/* ---- the columnar scan ------------------------------------------------------------------- */
static void test_colagg(void **state) {
  fx *f = *state;
  assert_int_equal(kv_compact(f->db, "t", true), KV_OK); /* one file: the scan applies */
  const uint8_t *quals[1] = {(const uint8_t *)"q"};
  uint32_t qlens[1] = {1};
  int32_t widths[1] = {-1};
  kv_colpred pred = {0, KV_COL_PRESENT, NULL, 0};
  for (int threads = 1; threads <= 2; threads++) {
    kv_trace *t = kv_trace_new();
    kv_colagg_spec sp;
    memset(&sp, 0, sizeof sp);
    sp.family_id = f->a;
    sp.quals = quals;
    sp.qual_lens = qlens;
    sp.n_quals = 1;
    sp.widths = widths;
    sp.preds = &pred;
    sp.n_preds = 1;
    sp.threads = threads;
    sp.trace = t;
    kv_colagg_result res;
    assert_int_equal(kv_colagg_run(f->db, &sp, &res), KV_OK);
    assert_true(res.applicable);
    assert_int_equal(res.n_fallback, 0);
    size_t n = 0;
    const kv_trace_block *tb = kv_trace_blocks(t, &n);
    uint64_t loads = 0, hits = 0;
    for (size_t i = 0; i < n; i++) {
      loads += tb[i].loads;
      hits += tb[i].cache_hits;
    }
    assert_int_equal(loads, res.blocks);
    assert_int_equal(hits, res.blocks_cache_hit);
    kv_family_stats st;
    assert_int_equal(kv_family_get_stats(f->db, f->a, &st), KV_OK);
    assert_int_equal(n, st.blocks); /* every block, once */
    size_t nr = 0;
    const kv_trace_range *r = kv_trace_ranges(t, &nr, NULL);
    assert_int_equal(nr, 1);
    assert_false(r[0].has_start || r[0].has_end);
    kv_colagg_result_free(&res);
    kv_trace_free(t);
  }
}

/* ---- cap, clear, merge ------------------------------------------------------------------- */
static void test_cap_merge(void **state) {
  fx *f = *state;
  int nr = KV_TRACE_MAX_RANGES + 100;
  kv_range *rg = calloc((size_t)nr, sizeof *rg);
  char *keys = malloc((size_t)nr * 2 * 16);
  for (int i = 0; i < nr; i++) { /* disjoint one-key ranges, ascending */
    char *s = keys + (size_t)i * 32, *e = s + 16;
    snprintf(s, 16, "k%07d", i * 2);
    snprintf(e, 16, "k%07d", i * 2 + 1);
    rg[i] = (kv_range){(const uint8_t *)s, strlen(s), true, (const uint8_t *)e, strlen(e), false};
  }
  kv_trace *t = kv_trace_new(), *u = kv_trace_new();
  kv_scan_options so;
  memset(&so, 0, sizeof so);
  so.family_ids = &f->b;
  so.n_families = 1;
  so.ranges = rg;
  so.n_ranges = (uint32_t)nr;
  traced(f, &so, t); /* check() asserts the cap */
  size_t n = 0;
  uint64_t total = 0;
  kv_trace_ranges(t, &n, &total);
  assert_int_equal(n, KV_TRACE_MAX_RANGES);
  assert_int_equal(total, (uint64_t)nr);
  /* merge into an empty trace: the same counts; twice: doubled loads */
  kv_trace_merge(u, t);
  kv_trace_merge(u, t);
  size_t nt = 0, nu = 0;
  const kv_trace_block *bt = kv_trace_blocks(t, &nt);
  uint64_t lt = 0, lu = 0;
  for (size_t i = 0; i < nt; i++) lt += bt[i].loads;
  const kv_trace_block *bu = kv_trace_blocks(u, &nu);
  for (size_t i = 0; i < nu; i++) lu += bu[i].loads;
  assert_int_equal(nu, nt);
  assert_int_equal(lu, 2 * lt);
  kv_trace_ranges(u, &n, &total);
  assert_int_equal(n, KV_TRACE_MAX_RANGES);
  assert_int_equal(total, 2 * (uint64_t)nr);
  kv_trace_clear(u);
  assert_null(kv_trace_blocks(u, &nu));
  assert_int_equal(nu, 0);
  kv_trace_ranges(u, &n, &total);
  assert_int_equal(n + total, 0);
  kv_trace_free(t);
  kv_trace_free(u);
  kv_trace_free(NULL);
  free(rg);
  free(keys);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_listing, setup, teardown),
      cmocka_unit_test_setup_teardown(test_scans, setup, teardown),
      cmocka_unit_test_setup_teardown(test_skip_and_get, setup, teardown),
      cmocka_unit_test_setup_teardown(test_colagg, setup, teardown),
      cmocka_unit_test_setup_teardown(test_cap_merge, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
