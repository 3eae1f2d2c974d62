/*
** tests/kv/test_bulk_mem.c: the bulk load's memory bound (kv_bulk_options.run_bytes,
** docs/KV.md "Bulk load"). Loads of several times a 1 MiB bound, in key order, in
** descending order, in ascending runs given out of order, with rows repeated across
** segments (the commit's split merge), and shuffled, on the in-memory env; each checks that
** kv_bulk_stats.peak_bytes stays within the bound plus its documented slack (an eighth),
** that ordered input pages its encoded segments out instead of spilling runs (and still
** gets its segments as its file), and that every row reads as a model says (the last value
** added for each key) after the commit and after reopen. Then loads that fail or are
** abandoned after paging out: an abort, the worker's fault hook, an I/O error appending to
** the page file, and an I/O error during the commit: none leaves a file behind or a row
** visible. Seeded (tu_seed); uses kv/kv.h, kv/bulk.h and kv/env_mem.h only.
** Not here: what a load reads like in general (tests/kv/test_bulk.c), the split merge's
** edge cases (tests/kv/test_break_bulk_split.c).
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "kv/bulk.h"
#include "kv/env.h"
#include "kv/env_mem.h"
#include "kv/kv.h"
#include "testutil.h"

#define NOW0 1700000000000ll
#define BOUND (1u << 20)       /* the loads' memory bound */
#define SLACK (BOUND / 8)      /* its documented slack (docs/KV.md "Bulk load") */
#define NKEYS 24000u           /* distinct row keys of a load (about 6 MiB of cells) */
#define VLEN 200u              /* value bytes */

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
      cmocka_unit_test(test_commit_io),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
