/*
** tests/kv/test_scan_proj_decode.c: a projected scan decodes an uncached sectioned block in
** part (kv/sf/sf_iter.c proj_load, kv/sf/sf_cblock.c kv_sf_cblock_decode_part): only the cells and
** the value groups of the projected qualifiers and of the tombstones are inflated. The rows
** handed out must be exactly those of an unprojected scan (a whole decode) with the other
** qualifiers left out: a table of six columns of fixed and variable width, missing cells,
** tombstones of every kind, a row that spans several blocks; projections of one, several and
** every column; no block cache, a cache with room (blocks decoded whole and cached) and a
** small cache that some blocks hit (a mix of cached and part-decoded blocks); forward and
** reverse, with and without value vectors. The scans' bytes_inflated show that a one-column
** projection inflates less, and a whole scan after projected ones still sees every column
** (a part-decoded block never reaches the cache).
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
#include "testutil.h"

#define NROWS 4000
#define WIDE 1500     /* the row with many qualifiers: it spans blocks */
#define WIDE_ROW 2000

static const char *const QS[] = {"a", "b", "c", "d", "e", "f"};
#define NQS 6

static kv_db *open_db(kv_env *env, size_t cache, bool create) {
  kv_options o;
  kv_options_init(&o);
  o.env = env;
  o.create_if_missing = create;
  o.block_cache_size = cache;
  kv_db *db = NULL;
  assert_int_equal(kv_open("/db", &o, &db), KV_OK);
  return db;
}

static void key_of(int i, char *k) { snprintf(k, 16, "row%06d", i); }

static void commit(kv_db *db, kv_batch *b) {
  assert_int_equal(kv_commit(db, b, NULL), KV_OK);
  kv_batch_clear(b);
}

/* The table: six columns (a, b, c: 8 bytes; e: 4 bytes; d, f: text), a cell missing here
** and there, a wide row, tombstones of every kind; one store file. */
static uint32_t load(kv_db *db) {
  kv_family_options f = {.name = "f", .block_size = 16384};
  assert_int_equal(kv_create_table(db, "t", &f, 1), KV_OK);
  uint32_t fid;
  assert_int_equal(kv_family_id(db, "t", "f", &fid), KV_OK);
  kv_batch *b = kv_batch_new();
  for (int i = 0; i < NROWS; i++) {
    char k[16], v[32];
    key_of(i, k);
    for (int q = 0; q < NQS; q++) {
      if ((i * 7 + q * 3) % 11 == 0) continue; /* a missing cell (NULL) */
      size_t len = q == 3 || q == 5 ? (size_t)(1 + (i * (q + 1)) % 17) : q == 4 ? 4 : 8;
      snprintf(v, sizeof v, "%c%08d%08d%08d", 'A' + q, i * 31 + q, i, q);
      assert_int_equal(kv_batch_put(b, fid, k, strlen(k), QS[q], 1, 1000 + i % 3, v, len),
                       KV_OK);
    }
    if (i == WIDE_ROW)
      for (int w = 0; w < WIDE; w++) {
        char q[8];
        snprintf(q, sizeof q, "x%04d", w);
        snprintf(v, sizeof v, "wide%06d", w);
        assert_int_equal(kv_batch_put(b, fid, k, strlen(k), q, strlen(q), 1000, v, 10), KV_OK);
      }
    if (kv_batch_count(b) > 5000) commit(db, b);
  }
  commit(db, b);
  for (int i = 0; i < NROWS; i += 13) { /* tombstones, in the same store file */
    char k[16];
    key_of(i, k);
    if (i % 3 == 0)
      assert_int_equal(kv_batch_delete(b, fid, KV_DELETE_FAMILY, k, strlen(k), NULL, 0, 1001),
                       KV_OK);
    else if (i % 3 == 1)
      assert_int_equal(kv_batch_delete(b, fid, KV_DELETE_COLUMN, k, strlen(k), "b", 1, 5000),
                       KV_OK);
    else
      assert_int_equal(kv_batch_delete(b, fid, KV_DELETE_VERSION, k, strlen(k), "d", 1,
                                       1000 + i % 3), KV_OK);
  }
  commit(db, b);
  kv_batch_free(b);
  assert_int_equal(kv_flush(db, NULL), KV_OK);
  return fid;
}

typedef struct out {
  uint8_t *p;
  size_t len, cap;
} out;

static void put(out *o, const void *p, size_t n) {
  if (o->len + n + 4 > o->cap) {
    o->cap = (o->len + n + 4) * 2;
    o->p = realloc(o->p, o->cap);
    assert_non_null(o->p);
  }
  uint32_t l = (uint32_t)n;
  memcpy(o->p + o->len, &l, 4);
  if (n) memcpy(o->p + o->len + 4, p, n);
  o->len += 4 + n;
}

/* Whether qualifier [q, q+n) is in proj[0..np) (np 0: every qualifier). */
static bool in_proj(const char *const *proj, int np, const uint8_t *q, uint32_t n) {
  if (np == 0) return true;
  for (int i = 0; i < np; i++)
    if (strlen(proj[i]) == n && memcmp(proj[i], q, n) == 0) return true;
  return false;
}

/* Scan everything with projection proj[0..np) (np 0: none), serializing the rows into *o,
** keeping only the cells of keep[0..nk) (nk 0: all); the scan's bytes_inflated and hits. */
static void scan(kv_db *db, uint32_t fid, const char *const *proj, int np,
                 const char *const *keep, int nk, bool reverse, bool vectors, out *o,
                 uint64_t *inflated, uint64_t *hits) {
  const uint8_t *qp[NQS];
  uint32_t ql[NQS];
  for (int i = 0; i < np; i++) {
    qp[i] = (const uint8_t *)proj[i];
    ql[i] = (uint32_t)strlen(proj[i]);
  }
  kv_qualifier_set qs = {fid, qp, ql, (uint32_t)np};
  kv_scan_options so;
  memset(&so, 0, sizeof so);
  so.family_ids = &fid;
  so.n_families = 1;
  if (np) {
    so.qualifiers = &qs;
    so.n_qualifier_sets = 1;
  }
  so.reverse = reverse;
  so.value_vectors = vectors;
  kv_scan *s = NULL;
  assert_int_equal(kv_scan_open(db, &so, &s), KV_OK);
  kv_row row;
  int rc;
  o->len = 0;
  while ((rc = kv_scan_next(s, &row)) == KV_OK) {
    bool any = false;
    for (uint32_t c = 0; c < row.n_cells; c++)
      any |= in_proj(keep, nk, row.cells[c].qual, row.cells[c].qual_len);
    if (!any) continue; /* a row none of whose kept cells is visible */
    put(o, row.key, row.key_len);
    for (uint32_t c = 0; c < row.n_cells; c++) {
      const kv_cell_view *v = &row.cells[c];
      if (!in_proj(keep, nk, v->qual, v->qual_len)) continue;
      put(o, v->qual, v->qual_len);
      put(o, &v->ts, sizeof v->ts);
      put(o, v->value, v->value_len);
    }
  }
  assert_int_equal(rc, KV_ERR_NOTFOUND);
  kv_scan_metrics m;
  kv_scan_get_metrics(s, &m);
  *inflated = m.families[0].bytes_inflated;
  *hits = m.families[0].blocks_cache_hit;
  kv_scan_close(s);
}

static const char *const P1[] = {"e"};
static const char *const P2[] = {"d", "a"};
static const char *const P3[] = {"b", "f", "c"};
static const char *const P6[] = {"a", "b", "c", "d", "e", "f"};
static const char *const PX[] = {"x0007", "b"};

/* Every projection against the unprojected scan filtered, on db; the one-column scan's
** and the unprojected scan's bytes inflated into *one, *whole (forward, no vectors). */
static void compare_all(kv_db *db, uint32_t fid, uint64_t *one, uint64_t *whole) {
  struct { const char *const *p; int n; } ps[] = {{P1, 1}, {P2, 2}, {P3, 3}, {P6, 6}, {PX, 2}};
  out ref = {0}, got = {0};
  uint64_t inf, hits;
  for (int rev = 0; rev < 2; rev++)
    for (size_t k = 0; k < sizeof ps / sizeof *ps; k++)
      for (int vec = 0; vec < 2; vec++) {
        scan(db, fid, NULL, 0, ps[k].p, ps[k].n, rev, false, &ref, &inf, &hits);
        if (!rev && !vec && k == 0) *whole = inf;
        scan(db, fid, ps[k].p, ps[k].n, ps[k].p, ps[k].n, rev, vec, &got, &inf, &hits);
        if (!rev && !vec && k == 0) *one = inf;
        assert_true(ref.len > 0);
        assert_int_equal(got.len, ref.len);
        assert_memory_equal(got.p, ref.p, ref.len);
      }
  free(ref.p);
  free(got.p);
}

static void test_proj_decode(void **state) {
  (void)state;
  kv_env *env = kv_env_mem_new(1700000000000LL);
  kv_db *db = open_db(env, KV_BLOCK_CACHE_OFF, true);
  uint32_t fid = load(db);
  uint64_t one, whole;
  compare_all(db, fid, &one, &whole); /* no cache: every projected block decoded in part */
  fprintf(stderr, "[proj_decode] inflated: one column %llu, whole %llu\n",
          (unsigned long long)one, (unsigned long long)whole);
  assert_true(whole > 0);
  assert_true(one * 2 < whole); /* one column of six: far less inflated */
  assert_int_equal(kv_close(db), KV_OK);

  db = open_db(env, 64 << 20, false); /* room: blocks decoded whole and cached */
  compare_all(db, fid, &one, &whole);
  assert_int_equal(kv_close(db), KV_OK);

  db = open_db(env, 256 << 10, false); /* a small cache: hot blocks cached, others in part */
  out ref = {0}, got = {0};
  uint64_t inf, hits;
  for (int r = 0; r < 3; r++) /* rows asked for again and again: their blocks admitted */
    for (int i = 100; i < NROWS; i += 900) {
      char k[16];
      key_of(i, k);
      kv_scan_options so;
      memset(&so, 0, sizeof so);
      so.family_ids = &fid;
      so.n_families = 1;
      kv_scan *s = NULL;
      kv_row row;
      assert_int_equal(kv_get(db, &so, k, strlen(k), &s, &row), KV_OK);
      kv_scan_close(s);
    }
  scan(db, fid, P1, 1, P1, 1, false, false, &got, &inf, &hits);
  assert_true(hits > 0); /* a mix of cached blocks and blocks decoded in part */
  assert_true(inf > 0 && inf < whole);
  compare_all(db, fid, &one, &whole);
  /* a whole scan after the projected ones: every column there (nothing partial cached) */
  scan(db, fid, NULL, 0, NULL, 0, false, false, &got, &inf, &hits);
  assert_int_equal(kv_close(db), KV_OK);
  db = open_db(env, KV_BLOCK_CACHE_OFF, false);
  scan(db, fid, NULL, 0, NULL, 0, false, false, &ref, &inf, &hits);
  assert_int_equal(got.len, ref.len);
  assert_memory_equal(got.p, ref.p, ref.len);
  free(ref.p);
  free(got.p);
  assert_int_equal(kv_close(db), KV_OK);
  kv_env_free(env);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_proj_decode),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
