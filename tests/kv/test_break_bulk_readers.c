/*
** tests/kv/test_break_bulk_readers.c: readers on other threads while bulk loads commit
** (kv/bulk/bulk_merge.c: overlapping segments merged block-wise, large merges split in two key
** ranges on two threads) and background compactions replace the files. Every load rewrites
** every row of two families with its generation number; a reader must see each load whole
** or not at all: one full scan (fast row path on) holds one generation in every cell of
** every row, never older than the generation published before it opened, and every row;
** a kv_get sees the same generation in both families. Also run under ThreadSanitizer.
** Seeded (tu_seed; the seed is printed).
** Not here: the merge's answers on one thread (tests/kv/test_bulk_merge.c, test_break_bulk_split.c).
*/
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "kv/bulk/bulk.h"
#include "kv/env/env_mem.h"
#include "kv/kv.h"
#include "testutil.h"

#define NREADERS 2

typedef struct shared {
  kv_db *db;                 /* the store */
  uint32_t fid[2];           /* families a, b */
  int nrows;                 /* rows */
  _Atomic uint64_t gen;      /* last generation committed (published after the commit) */
  _Atomic bool stop;         /* readers stop */
  _Atomic int failures;      /* reader failures */
  char why[256];             /* the first failure (written once) */
  _Atomic bool why_set;      /* why holds a message */
  uint64_t seed;             /* for reader PRNGs */
} shared;

static size_t row_key(int r, char *out) { return (size_t)sprintf(out, "row%06d", r); }

static void put_gen(uint8_t *v, uint64_t g) {
  for (int i = 0; i < 8; i++) v[i] = (uint8_t)(g >> (8 * i));
}

static uint64_t get_gen(const uint8_t *v) {
  uint64_t g = 0;
  for (int i = 0; i < 8; i++) g |= (uint64_t)v[i] << (8 * i);
  return g;
}

static void fail_reader(shared *s, const char *fmt, ...) {
  bool expected = false;
  if (atomic_compare_exchange_strong(&s->why_set, &expected, true)) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(s->why, sizeof s->why, fmt, ap);
    va_end(ap);
  }
  atomic_fetch_add(&s->failures, 1);
}

static void *reader(void *arg) {
  shared *s = arg;
  uint64_t rs = s->seed ^ (uint64_t)(uintptr_t)&rs;
  while (!atomic_load(&s->stop) && atomic_load(&s->failures) == 0) {
    uint64_t g0 = atomic_load(&s->gen);
    kv_scan_options so;
    memset(&so, 0, sizeof so);
    so.family_ids = s->fid;
    so.n_families = 2;
    if (tu_below(&rs, 3) == 0) { /* a point read */
      char k[16];
      int r = (int)tu_below(&rs, (uint64_t)s->nrows);
      size_t kl = row_key(r, k);
      kv_scan *sc;
      kv_row row;
      int rc = kv_get(s->db, &so, k, kl, &sc, &row);
      if (rc != KV_OK) fail_reader(s, "kv_get of row %d: %s", r, kv_status_name(rc));
      else if (row.n_cells != 2 || row.cells[0].value_len != 8 || row.cells[1].value_len != 8)
        fail_reader(s, "kv_get of row %d: %u cells", r, row.n_cells);
      else {
        uint64_t a = get_gen(row.cells[0].value), b = get_gen(row.cells[1].value);
        if (a != b || a < g0)
          fail_reader(s, "kv_get of row %d: generations %llu and %llu, published %llu", r,
                      (unsigned long long)a, (unsigned long long)b, (unsigned long long)g0);
      }
      if (sc) kv_scan_close(sc);
      continue;
    }
    so.reverse = tu_below(&rs, 4) == 0;
    kv_scan *sc;
    if (kv_scan_open(s->db, &so, &sc) != KV_OK) {
      fail_reader(s, "kv_scan_open: %s", kv_errmsg());
      break;
    }
    kv_row row;
    int rc, n = 0;
    uint64_t g = UINT64_MAX;
    while ((rc = kv_scan_next(sc, &row)) == KV_OK) {
      if (row.n_cells != 2) {
        fail_reader(s, "row %d of a scan has %u cells", n, row.n_cells);
        break;
      }
      for (int c = 0; c < 2; c++) {
        uint64_t x = get_gen(row.cells[c].value);
        if (g == UINT64_MAX) g = x;
        if (x != g || x < g0) {
          fail_reader(s, "scan row %d: generation %llu among %llu (published %llu before)", n,
                      (unsigned long long)x, (unsigned long long)g, (unsigned long long)g0);
          break;
        }
      }
      n++;
    }
    if (rc != KV_ERR_NOTFOUND && atomic_load(&s->failures) == 0)
      fail_reader(s, "scan: %s", kv_status_name(rc));
    else if (n != s->nrows && atomic_load(&s->failures) == 0)
      fail_reader(s, "a scan saw %d rows of %d (generation %llu)", n, s->nrows,
                  (unsigned long long)g);
    kv_scan_close(sc);
  }
  return NULL;
}

static void loads_under_readers(void **state) {
  (void)state;
  uint64_t seed = tu_seed("loads_under_readers"), rs = seed;
  kv_env *env = kv_env_mem_new(1700000000000LL);
  kv_options o;
  kv_options_init(&o);
  o.env = env;
  o.create_if_missing = true;
  o.compaction_trigger = 2; /* background compactions replace the loaded files */
  o.block_cache_size = 256u << 10;
  shared *s = calloc(1, sizeof *s);
  assert_non_null(s);
  s->seed = seed;
  assert_int_equal(kv_open("/db", &o, &s->db), KV_OK);
  kv_family_options fo[2] = {{.name = "a", .block_size = 1024}, {.name = "b", .block_size = 512}};
  assert_int_equal(kv_create_table(s->db, "t", fo, 2), KV_OK);
  for (int f = 0; f < 2; f++)
    assert_int_equal(kv_family_id(s->db, "t", fo[f].name, &s->fid[f]), KV_OK);
  s->nrows = (int)tu_scaled(3000, 800);
  /* generation 0 through ordinary commits */
  kv_batch *b = kv_batch_new();
  assert_non_null(b);
  uint8_t v[8];
  put_gen(v, 0);
  for (int r = 0; r < s->nrows; r++) {
    char k[16];
    size_t kl = row_key(r, k);
    for (int f = 0; f < 2; f++)
      assert_int_equal(kv_batch_put(b, s->fid[f], k, kl, "q", 1, KV_TS_NOW, v, 8), KV_OK);
    if (kv_batch_count(b) >= 400) {
      assert_int_equal(kv_commit(s->db, b, NULL), KV_OK);
      kv_batch_clear(b);
    }
  }
  assert_int_equal(kv_commit(s->db, b, NULL), KV_OK);
  kv_batch_free(b);
  assert_int_equal(kv_flush(s->db, NULL), KV_OK);
  pthread_t th[NREADERS];
  for (int i = 0; i < NREADERS; i++) assert_int_equal(pthread_create(&th[i], NULL, reader, s), 0);
  int *perm = malloc((size_t)s->nrows * sizeof *perm);
  assert_non_null(perm);
  int loads = (int)tu_scaled(40, 12);
  for (uint64_t g = 1; g <= (uint64_t)loads && atomic_load(&s->failures) == 0; g++) {
    /* rows in runs of random direction and length: overlapping segments */
    for (int i = 0; i < s->nrows; i++) perm[i] = i;
    for (int i = s->nrows - 1; i > 0; i--)
      if (tu_below(&rs, 8) == 0) {
        int j = (int)tu_below(&rs, (uint64_t)i + 1), t = perm[i];
        perm[i] = perm[j];
        perm[j] = t;
      }
    kv_bulk_options bo = {.run_bytes = 1u << 20, .segment_bytes = 2048 + tu_below(&rs, 8192),
                          .split_cells = 1 + tu_below(&rs, 2000)};
    kv_bulk *kb;
    assert_int_equal(kv_bulk_begin(s->db, &bo, &kb), KV_OK);
    put_gen(v, g);
    for (int i = 0; i < s->nrows; i++) {
      char k[16];
      size_t kl = row_key(perm[i], k);
      for (int f = 0; f < 2; f++)
        assert_int_equal(kv_bulk_put(kb, s->fid[f], k, kl, "q", 1, KV_TS_NOW, v, 8), KV_OK);
      if (tu_below(&rs, 50) == 0) /* a repeat of the same cell: the later one wins */
        assert_int_equal(kv_bulk_put(kb, s->fid[tu_below(&rs, 2)], k, kl, "q", 1, KV_TS_NOW,
                                     v, 8), KV_OK);
    }
    assert_int_equal(kv_bulk_commit(kb, NULL), KV_OK);
    kv_bulk_free(kb);
    atomic_store(&s->gen, g);
  }
  atomic_store(&s->stop, true);
  for (int i = 0; i < NREADERS; i++) pthread_join(th[i], NULL);
  if (atomic_load(&s->failures)) fail_msg("seed %llu: %s", (unsigned long long)seed, s->why);
  free(perm);
  assert_int_equal(kv_close(s->db), KV_OK);
  kv_env_free(env);
  free(s);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(loads_under_readers),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
