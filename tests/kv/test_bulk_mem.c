/*
** tests/kv/test_bulk_mem.c: the bulk load's memory bound (kv_bulk_options.run_bytes,
** docs/KV_BULK.md). Loads of several times a 1 MiB bound, in key order, in
** descending order, in ascending runs given out of order, with rows repeated across
** segments (the commit's split merge), and shuffled, on the in-memory env; each checks that
** kv_bulk_stats.peak_bytes stays within the bound plus its documented slack (an eighth),
** that ordered input pages its encoded segments out instead of spilling runs (and still
** gets its segments as its file), and that every row reads as a model says (the last value
** added for each key) after the commit and after reopen. Then loads that fail or are
** abandoned after paging out: an abort, the worker's fault hook, an I/O error appending to
** the page file, and an I/O error during the commit: none leaves a file behind or a row
** visible. Then the real heap of loads of 250,000 and 1,250,000 rows on disk (malloc wrapped
** at link time): it may grow by a few bytes a row, not by a hash kept per row key.
** Seeded (tu_seed); uses kv/kv.h, kv/bulk/bulk.h and kv/env/env_mem.h only.
** Not here: what a load reads like in general (tests/kv/test_bulk.c), the split merge's
** edge cases (tests/kv/test_break_bulk_split.c).
*/
#include <ftw.h>
#include <malloc.h>
#include <setjmp.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <sys/stat.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "kv/bulk/bulk.h"
#include "kv/env/env.h"
#include "kv/env/env_mem.h"
#include "kv/kv.h"
#include "testutil.h"

#define NOW0 1700000000000ll
#define BOUND (1u << 20)       /* the loads' memory bound */
#define SLACK (BOUND / 8)      /* its documented slack (docs/KV_BULK.md) */
#define NKEYS 24000u           /* distinct row keys of a load (about 6 MiB of cells) */
#define VLEN 200u              /* value bytes */
#define HEAP_BOUND (2u << 20) /* the heap tests' bound */
#define HEAP_PER_RUN (2.0 * 65536) /* a spilled run's reader at the merge: its block, raw and
                                      decoded (the family's BLOCKSIZE is 64 KiB here) */
#define HEAP_PER_ROW 4.0        /* bytes a row a load may hold beyond it (the final file's
                                   writer holds up to 1 MiB of bloom filter partitions, 1.25
                                   bytes a row below that, before it spills; about 0.3 of the
                                   segments' block entries; the noise of when the worker frees
                                   a segment; a hash kept per row would be 8) */

/* A store on the in-memory env, one table of one family. */
typedef struct st {
  kv_env *env;            /* in-memory file system */
  kv_db *db;              /* the store */
  uint32_t fid;           /* the family */
} st;

static void st_open(st *s, bool create) {
  kv_options o;
  kv_options_init(&o);
  o.env = s->env;
  o.create_if_missing = create;
  o.compaction_trigger = 100;
  assert_int_equal(kv_open("/db", &o, &s->db), KV_OK);
  if (create) {
    kv_family_options fo = {.name = "f", .max_versions = 1, .block_size = 4096};
    assert_int_equal(kv_create_table(s->db, "t", &fo, 1), KV_OK);
  }
  assert_int_equal(kv_family_id(s->db, "t", "f", &s->fid), KV_OK);
}

static void st_new(st *s) {
  memset(s, 0, sizeof *s);
  s->env = kv_env_mem_new(NOW0);
  st_open(s, true);
}

static void st_free(st *s) {
  assert_int_equal(kv_close(s->db), KV_OK);
  s->env->destroy(s->env);
}

static void key_of(uint32_t k, uint8_t out[12]) {
  memcpy(out, "row:", 4);
  for (int i = 0; i < 8; i++) out[4 + i] = (uint8_t)('a' + ((k >> (28 - 4 * i)) & 15));
}

/* The value of key k in version v (not compressible: a load's bytes stay its size). */
static void val_of(uint32_t k, uint32_t v, uint8_t out[VLEN]) {
  uint64_t x = ((uint64_t)k << 20) ^ v ^ 0x9E3779B97F4A7C15ull;
  for (uint32_t i = 0; i < VLEN; i++) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    out[i] = (uint8_t)(x >> 56);
  }
}

/* Count the files under dir (recursively) whose name ends with ext. */
typedef struct walk {
  kv_env *env;            /* the env */
  const char *dir;        /* the directory listed */
  const char *ext;        /* suffix counted */
  int n;                  /* files found */
} walk;

static int count_files(kv_env *env, const char *dir, const char *ext);

static int walk_one(void *ctx, const char *name) {
  walk *w = ctx;
  char p[1024];
  snprintf(p, sizeof p, "%s/%s", w->dir, name);
  size_t nl = strlen(name), el = strlen(w->ext);
  if (nl >= el && !strcmp(name + nl - el, w->ext)) w->n++;
  w->n += count_files(w->env, p, w->ext); /* a file: listing it fails, 0 */
  return 0;
}

static int count_files(kv_env *env, const char *dir, const char *ext) {
  walk w = {env, dir, ext, 0};
  if (env->list(env, dir, walk_one, &w) != KV_OK) return 0;
  return w.n;
}

/* The orders a load's keys come in. */
enum { ASC, DESC, RUNS, REPEAT, SHUFFLE };

/* The keys of a load in pattern p: *n gets their number; (*vers)[i] the version added. */
static uint32_t *make_keys(int p, uint64_t *rs, size_t *n) {
  size_t cap = NKEYS * 2u;
  uint32_t *k = malloc(cap * sizeof *k);
  assert_non_null(k);
  size_t m = 0;
  if (p == ASC || p == DESC || p == SHUFFLE) {
    for (uint32_t i = 0; i < NKEYS; i++) k[m++] = p == DESC ? NKEYS - 1 - i : i;
    if (p == SHUFFLE)
      for (size_t i = m - 1; i > 0; i--) {
        size_t j = (size_t)tu_below(rs, i + 1);
        uint32_t t = k[i];
        k[i] = k[j];
        k[j] = t;
      }
  } else if (p == RUNS) { /* ascending runs of 3,000 keys, runs out of order */
    uint32_t order[8] = {5, 2, 7, 0, 3, 6, 1, 4};
    for (int r = 0; r < 8; r++)
      for (uint32_t i = 0; i < NKEYS / 8; i++) k[m++] = order[r] * (NKEYS / 8) + i;
  } else { /* REPEAT: every key ascending, then a third of them again (later ones win) */
    for (uint32_t i = 0; i < NKEYS; i++) k[m++] = i;
    for (uint32_t i = 0; i < NKEYS; i += 3) k[m++] = (i * 7u) % NKEYS;
  }
  *n = m;
  return k;
}

/* Every row of the family: the keys 0 .. NKEYS-1, each with the value of its last version. */
static void check_rows(st *s, const uint32_t *last) {
  kv_scan_options so = {0};
  so.family_ids = &s->fid;
  so.n_families = 1;
  kv_scan *sc;
  assert_int_equal(kv_scan_open(s->db, &so, &sc), KV_OK);
  kv_row row;
  uint32_t k = 0;
  uint8_t key[12], val[VLEN];
  int rc;
  while ((rc = kv_scan_next(sc, &row)) == KV_OK) {
    assert_true(k < NKEYS);
    key_of(k, key);
    assert_int_equal(row.key_len, 12);
    assert_memory_equal(row.key, key, 12);
    assert_int_equal(row.n_cells, 1);
    val_of(k, last[k], val);
    assert_int_equal(row.cells[0].value_len, VLEN);
    assert_memory_equal(row.cells[0].value, val, VLEN);
    k++;
  }
  assert_int_equal(rc, KV_ERR_NOTFOUND);
  assert_int_equal(k, NKEYS);
  kv_scan_close(sc);
}

/* Add the keys of pattern p to a new load b (version = position); *last gets each key's
** last version. Returns the first error of an add. */
static int add_all(kv_bulk *b, st *s, const uint32_t *k, size_t n, uint32_t *last) {
  uint8_t key[12], val[VLEN];
  for (size_t i = 0; i < n; i++) {
    key_of(k[i], key);
    val_of(k[i], (uint32_t)i, val);
    if (last) last[k[i]] = (uint32_t)i;
    int rc = kv_bulk_put(b, s->fid, key, 12, "v", 1, NOW0, val, VLEN);
    if (rc) return rc;
  }
  return KV_OK;
}

static void load_pattern(int p, const char *name) {
  uint64_t rs = tu_seed(name);
  st s;
  st_new(&s);
  size_t n;
  uint32_t *k = make_keys(p, &rs, &n);
  uint32_t *last = calloc(NKEYS, sizeof *last);
  assert_non_null(last);
  kv_bulk_options bo = {.run_bytes = BOUND, .split_cells = 2000};
  kv_bulk *b;
  assert_int_equal(kv_bulk_begin(s.db, &bo, &b), KV_OK);
  assert_int_equal(add_all(b, &s, k, n, last), KV_OK);
  assert_int_equal(kv_bulk_commit(b, NULL), KV_OK);
  kv_bulk_stats bs;
  kv_bulk_get_stats(b, &bs);
  kv_bulk_free(b);
  print_message("%s: %zu cells, peak %llu bytes, %llu segments paged (%llu bytes), %llu runs\n",
                name, n, (unsigned long long)bs.peak_bytes, (unsigned long long)bs.segs_paged,
                (unsigned long long)bs.bytes_paged, (unsigned long long)bs.runs);
  assert_true(bs.peak_bytes > 0);
  assert_true(bs.peak_bytes <= BOUND + SLACK);
  if (p == ASC || p == DESC || p == RUNS) { /* paged out, not spilled */
    assert_true(bs.segs_paged > 0);
    assert_int_equal(bs.runs, 0);
  }
  if (p == ASC || p == DESC) assert_int_equal(bs.fams_segments, 1); /* the fast path */
  if (p == REPEAT) { /* the split merge's halves went to files */
    assert_int_equal(bs.runs, 0);
    assert_true(bs.bytes_paged > 0);
  }
  assert_int_equal(count_files(s.env, "/db", ".run"), 0);
  check_rows(&s, last);
  assert_int_equal(kv_close(s.db), KV_OK);
  st_open(&s, false);
  check_rows(&s, last);
  st_free(&s);
  free(k);
  free(last);
}

static void test_ascending(void **state) {
  (void)state;
  load_pattern(ASC, "bulk_mem_ascending");
}
static void test_descending(void **state) {
  (void)state;
  load_pattern(DESC, "bulk_mem_descending");
}
static void test_runs(void **state) {
  (void)state;
  load_pattern(RUNS, "bulk_mem_runs");
}
static void test_repeat(void **state) {
  (void)state;
  load_pattern(REPEAT, "bulk_mem_repeat");
}
static void test_shuffle(void **state) {
  (void)state;
  load_pattern(SHUFFLE, "bulk_mem_shuffle");
}

/* ---- heap per row ------------------------------------------------------------------------
** The real heap of the process (every malloc, calloc, realloc and free of this program and
** rowan_static goes through the wrappers below: tests/kv/CMakeLists.txt links this test with
** --wrap), not the load's own count: a load of many more rows than its bound may hold a
** few bytes a row beyond the bound (docs/KV_BULK.md: the final file's bloom filter,
** 1.25 bytes a row, and an index entry a block), never the 8 bytes a row of a hash kept for
** each row key until the file is finished. The store is on disk (a temporary folder), so
** the files' bytes are not heap. */

void *__real_malloc(size_t n);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t n, size_t sz);
void *__wrap_realloc(void *p, size_t n);
void __wrap_free(void *p);
void *__real_calloc(size_t n, size_t sz);
void *__real_realloc(void *p, size_t n);
void __real_free(void *p);

static _Atomic long long g_heap, g_heap_peak; /* bytes allocated now / most since reset */

static void heap_note(long long d) {
  long long v = atomic_fetch_add(&g_heap, d) + d, p = atomic_load(&g_heap_peak);
  while (v > p && !atomic_compare_exchange_weak(&g_heap_peak, &p, v)) {
  }
}
void *__wrap_malloc(size_t n) {
  void *p = __real_malloc(n);
  if (p) heap_note((long long)malloc_usable_size(p));
  return p;
}
void *__wrap_calloc(size_t n, size_t sz) {
  void *p = __real_calloc(n, sz);
  if (p) heap_note((long long)malloc_usable_size(p));
  return p;
}
void *__wrap_realloc(void *p, size_t n) {
  long long old = p ? (long long)malloc_usable_size(p) : 0;
  void *q = __real_realloc(p, n);
  if (q) heap_note((long long)malloc_usable_size(q) - old);
  else if (p && n == 0) heap_note(-old);
  return q;
}
void __wrap_free(void *p) {
  if (p) heap_note(-(long long)malloc_usable_size(p));
  __real_free(p);
}

static int rm_one(const char *path, const struct stat *sb, int flag, struct FTW *ftw) {
  (void)sb;
  (void)flag;
  (void)ftw;
  return remove(path);
}

/* A load of n rows (8-byte values, one cell each), ascending or shuffled, into a new store
** on disk: the heap's peak during begin .. commit above the heap before it. */
static long long heap_of_load(uint32_t n, bool shuffle, uint64_t *rs, uint64_t *runs) {
  char dir[] = "/tmp/rowan_bulk_mem_XXXXXX", path[64];
  assert_non_null(mkdtemp(dir));
  snprintf(path, sizeof path, "%s/db", dir);
  uint32_t *k = malloc((size_t)n * sizeof *k);
  assert_non_null(k);
  for (uint32_t i = 0; i < n; i++) k[i] = i;
  for (uint32_t i = n - 1; shuffle && i > 0; i--) {
    uint32_t j = (uint32_t)tu_below(rs, (uint64_t)i + 1), t = k[i];
    k[i] = k[j];
    k[j] = t;
  }
  kv_options o;
  kv_options_init(&o);
  o.env = kv_env_posix();
  o.create_if_missing = true;
  o.compaction_trigger = 100;
  kv_db *db;
  assert_int_equal(kv_open(path, &o, &db), KV_OK);
  kv_family_options fo = {.name = "f", .max_versions = 1, .block_size = 65536};
  assert_int_equal(kv_create_table(db, "t", &fo, 1), KV_OK);
  uint32_t fid;
  assert_int_equal(kv_family_id(db, "t", "f", &fid), KV_OK);
  long long before = atomic_load(&g_heap);
  atomic_store(&g_heap_peak, before);
  kv_bulk *b;
  assert_int_equal(kv_bulk_begin(db, &(kv_bulk_options){.run_bytes = HEAP_BOUND}, &b), KV_OK);
  uint8_t key[12], val[8];
  for (uint32_t i = 0; i < n; i++) {
    key_of(k[i], key);
    memcpy(val, &k[i], 4);
    memcpy(val + 4, &i, 4);
    assert_int_equal(kv_bulk_put(b, fid, key, 12, "v", 1, NOW0, val, 8), KV_OK);
  }
  assert_int_equal(kv_bulk_commit(b, NULL), KV_OK);
  kv_bulk_stats bs;
  kv_bulk_get_stats(b, &bs);
  *runs = bs.runs;
  kv_bulk_free(b);
  long long peak = atomic_load(&g_heap_peak) - before;
  /* every row is there, with its value */
  kv_scan_options so = {0};
  so.family_ids = &fid;
  so.n_families = 1;
  kv_scan *sc;
  kv_row row;
  assert_int_equal(kv_scan_open(db, &so, &sc), KV_OK);
  uint32_t got = 0;
  while (kv_scan_next(sc, &row) == KV_OK) {
    key_of(got, key);
    assert_int_equal(row.key_len, 12);
    assert_memory_equal(row.key, key, 12);
    assert_int_equal(row.n_cells, 1);
    assert_memory_equal(row.cells[0].value, &got, 4);
    got++;
  }
  assert_int_equal(got, n);
  kv_scan_close(sc);
  assert_int_equal(kv_close(db), KV_OK);
  free(k);
  assert_int_equal(nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS), 0);
  return peak;
}

/* The heap a load takes grows by less than HEAP_PER_ROW bytes a row from n to 5n rows, and
** HEAP_PER_RUN a run it spilled (its reader's block at the commit's merge). */
static void heap_growth(bool shuffle, const char *name) {
  uint64_t rs = tu_seed(name), runs_small, runs_big;
  uint32_t n = 250000;
  long long small = heap_of_load(n, shuffle, &rs, &runs_small);
  long long big = heap_of_load(5 * n, shuffle, &rs, &runs_big);
  double per_row = ((double)(big - small) - (double)(runs_big - runs_small) * HEAP_PER_RUN) /
                   (4.0 * n);
  print_message("%s: heap peak %lld bytes at %u rows (%llu runs), %lld at %u (%llu runs): "
                "%.2f bytes a row beyond the runs' allowance\n", name, small, n,
                (unsigned long long)runs_small, big, 5 * n, (unsigned long long)runs_big,
                per_row);
  if (!shuffle) assert_int_equal(runs_big, 0); /* ordered input: paged out, never spilled */
  assert_true(small < (shuffle ? 5 : 4) * (long long)HEAP_BOUND / 2 +
                          (long long)(runs_small * HEAP_PER_RUN));
  assert_true(per_row < HEAP_PER_ROW);
}

static void test_heap_ascending(void **state) {
  (void)state;
  heap_growth(false, "bulk_mem_heap_asc");
}
static void test_heap_shuffled(void **state) {
  (void)state;
  heap_growth(true, "bulk_mem_heap_shuffled");
}

/* ---- failures ------------------------------------------------------------------------- */

static int g_fail_job; /* the job the fault hook fails */
static int fault_at(void *arg, uint32_t fam, uint64_t job) {
  (void)arg;
  (void)fam;
  return job == (uint64_t)g_fail_job ? KV_ERR_IO : KV_OK;
}

/* A load in key order that fails (how), then is freed: no file of it is left, no row of it
** is visible (also after reopen), and the store takes a new load. */
enum { ABORT, FAULT, PAGE_IO, COMMIT_IO };

static void fail_case(int how) {
  st s;
  st_new(&s);
  size_t n;
  uint64_t rs = 1;
  uint32_t *k = make_keys(ASC, &rs, &n);
  int sf0 = count_files(s.env, "/db", ".sf");
  kv_bulk_options bo = {.run_bytes = BOUND};
  if (how == FAULT) {
    g_fail_job = 60; /* past the first page-outs */
    bo.fault = fault_at;
  }
  if (how == PAGE_IO) kv_env_mem_fail(s.env, KV_FAULT_APPEND, 3, ".run", KV_FAULT_EIO, 0);
  kv_bulk *b;
  assert_int_equal(kv_bulk_begin(s.db, &bo, &b), KV_OK);
  int rc = add_all(b, &s, k, n, NULL);
  kv_bulk_stats bs;
  kv_bulk_get_stats(b, &bs);
  if (how == ABORT) {
    assert_int_equal(rc, KV_OK);
    assert_true(bs.segs_paged > 0);
    assert_true(count_files(s.env, "/db", ".run") > 0); /* what the free must remove */
  } else if (how == COMMIT_IO) {
    assert_int_equal(rc, KV_OK);
    assert_true(bs.segs_paged > 0);
    kv_env_mem_fail(s.env, KV_FAULT_APPEND, 5, ".sf", KV_FAULT_EIO, 0);
    assert_int_equal(kv_bulk_commit(b, NULL), KV_ERR_IO);
  } else {
    if (rc == KV_OK) rc = kv_bulk_commit(b, NULL);
    assert_int_equal(rc, KV_ERR_IO);
  }
  kv_bulk_free(b);
  kv_env_mem_clear_faults(s.env);
  assert_int_equal(count_files(s.env, "/db", ".run"), 0);
  assert_int_equal(count_files(s.env, "/db", ".sf"), sf0);
  for (int round = 0; round < 2; round++) {
    kv_scan_options so = {0};
    so.family_ids = &s.fid;
    so.n_families = 1;
    kv_scan *sc;
    kv_row row;
    assert_int_equal(kv_scan_open(s.db, &so, &sc), KV_OK);
    assert_int_equal(kv_scan_next(sc, &row), KV_ERR_NOTFOUND);
    kv_scan_close(sc);
    assert_int_equal(kv_close(s.db), KV_OK);
    st_open(&s, false);
  }
  /* the store takes a new load of the same rows */
  uint32_t *last = calloc(NKEYS, sizeof *last);
  assert_non_null(last);
  assert_int_equal(kv_bulk_begin(s.db, &(kv_bulk_options){.run_bytes = BOUND}, &b), KV_OK);
  assert_int_equal(add_all(b, &s, k, n, last), KV_OK);
  assert_int_equal(kv_bulk_commit(b, NULL), KV_OK);
  kv_bulk_free(b);
  check_rows(&s, last);
  st_free(&s);
  free(k);
  free(last);
}

static void test_abort(void **state) {
  (void)state;
  fail_case(ABORT);
}
static void test_worker_fault(void **state) {
  (void)state;
  fail_case(FAULT);
}
static void test_page_io(void **state) {
  (void)state;
  fail_case(PAGE_IO);
}
static void test_commit_io(void **state) {
  (void)state;
  fail_case(COMMIT_IO);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_ascending),    cmocka_unit_test(test_descending),
      cmocka_unit_test(test_runs),         cmocka_unit_test(test_repeat),
      cmocka_unit_test(test_shuffle),      cmocka_unit_test(test_abort),
      cmocka_unit_test(test_worker_fault), cmocka_unit_test(test_page_io),
      cmocka_unit_test(test_commit_io),    cmocka_unit_test(test_heap_ascending),
      cmocka_unit_test(test_heap_shuffled),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
