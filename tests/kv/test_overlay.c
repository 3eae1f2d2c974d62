/*
** tests/kv/test_overlay.c: kv_scan_options.overlay, a transaction reading its own
** uncommitted writes, on the in-memory env.
**
** Fixed cases: a put of a new row, an overwrite of a committed cell (at a newer and at the
** same timestamp), an overwrite inside the batch, each tombstone kind over committed data,
** a put after a tombstone in the same batch, KV_TS_NOW, ops of a family not read, kv_get,
** and the batch changed after the scan opened; the batch's overlay index (test_index). Then a randomized differential test: two
** stores get the same committed history (memstore and store files); store A also gets later
** commits after a held snapshot S; scans of A at S with a random overlay batch must hand out
** exactly what store B hands out after committing that batch, for forward, reverse,
** multi-range, multi-version, projected scans and point reads.
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
#include "testutil.h"

#define T0 1700000000000ll /* the mem env's clock (ms) */

typedef struct st {
  kv_env *env;   /* in-memory file system */
  kv_db *db;     /* the store */
  uint32_t a, b; /* families of table t: a (VERSIONS 3), b (VERSIONS 1) */
  uint32_t o;    /* family of another table */
} st;

static void st_open(st *s) {
  s->env = kv_env_mem_new(T0);
  kv_options o;
  kv_options_init(&o);
  o.env = s->env;
  o.create_if_missing = true;
  assert_int_equal(kv_open("/db", &o, &s->db), KV_OK);
  kv_family_options fo[2] = {{.name = "a", .max_versions = 3}, {.name = "b"}};
  assert_int_equal(kv_create_table(s->db, "t", fo, 2), KV_OK);
  assert_int_equal(kv_family_id(s->db, "t", "a", &s->a), KV_OK);
  assert_int_equal(kv_family_id(s->db, "t", "b", &s->b), KV_OK);
  kv_family_options fx = {.name = "x"};
  assert_int_equal(kv_create_table(s->db, "other", &fx, 1), KV_OK);
  assert_int_equal(kv_family_id(s->db, "other", "x", &s->o), KV_OK);
}

static void st_close(st *s) {
  assert_int_equal(kv_close(s->db), KV_OK);
  kv_env_free(s->env);
}

static void bput(kv_batch *b, uint32_t fid, const char *row, const char *q, int64_t ts,
                 const char *v) {
  assert_int_equal(kv_batch_put(b, fid, row, strlen(row), q, strlen(q), ts, v, strlen(v)),
                   KV_OK);
}

static void bdel(kv_batch *b, uint32_t fid, int type, const char *row, const char *q,
                 int64_t ts) {
  assert_int_equal(kv_batch_delete(b, fid, type, row, strlen(row), q, q ? strlen(q) : 0, ts),
                   KV_OK);
}

static void commit(st *s, kv_batch *b) {
  assert_int_equal(kv_commit(s->db, b, NULL), KV_OK);
  kv_batch_clear(b);
}

/* A whole scan rendered as text: "row|fam:qual@ts=value,...;" per row. */
static char *render(st *s, const kv_scan_options *so) {
  kv_scan *sc;
  int rc = kv_scan_open(s->db, so, &sc);
  if (rc) fail_msg("kv_scan_open: %s", kv_errmsg());
  size_t cap = 1 << 12, len = 0;
  char *out = malloc(cap);
  out[0] = 0;
  kv_row r;
  while ((rc = kv_scan_next(sc, &r)) == KV_OK) {
    char line[4096];
    int n = snprintf(line, sizeof line, "%.*s|", (int)r.key_len, (const char *)r.key);
    for (uint32_t i = 0; i < r.n_cells; i++) {
      const kv_cell_view *c = &r.cells[i];
      n += snprintf(line + n, sizeof line - (size_t)n, "%s:%.*s@%lld=%.*s,",
                    c->family_id == s->a ? "a" : "b", (int)c->qual_len, (const char *)c->qual,
                    (long long)c->ts, (int)c->value_len, (const char *)c->value);
    }
    n += snprintf(line + n, sizeof line - (size_t)n, ";\n");
    while (len + (size_t)n + 1 > cap) out = realloc(out, cap *= 2);
    memcpy(out + len, line, (size_t)n + 1);
    len += (size_t)n;
  }
  assert_int_equal(rc, KV_ERR_NOTFOUND);
  kv_scan_close(sc);
  return out;
}

static void expect_scan(st *s, const kv_scan_options *so, const char *want) {
  char *got = render(s, so);
  if (strcmp(got, want) != 0) fail_msg("scan gave\n%s\nwanted\n%s", got, want);
  free(got);
}

/* Each kind of op over committed data, read through the overlay, and nothing committed. */
static void test_fixed(void **state) {
  (void)state;
  st s;
  st_open(&s);
  kv_batch *b = kv_batch_new();
  bput(b, s.a, "r1", "q", 10, "c1");
  bput(b, s.a, "r1", "q", 20, "c2");
  bput(b, s.b, "r1", "z", 10, "cz");
  bput(b, s.a, "r2", "q", 10, "d1");
  bput(b, s.a, "r2", "w", 10, "d2");
  bput(b, s.b, "r3", "z", 10, "e1");
  bput(b, s.a, "r4", "q", 10, "f1");
  bput(b, s.a, "r4", "q", 20, "f2");
  commit(&s, b);
  uint32_t fams[2] = {s.a, s.b};
  kv_scan_options so = {0};
  so.family_ids = fams;
  so.n_families = 2;
  so.max_versions = 3;
  const char *committed =
      "r1|a:q@20=c2,a:q@10=c1,b:z@10=cz,;\n"
      "r2|a:q@10=d1,a:w@10=d2,;\n"
      "r3|b:z@10=e1,;\n"
      "r4|a:q@20=f2,a:q@10=f1,;\n";
  expect_scan(&s, &so, committed);

  kv_batch *ov = kv_batch_new();
  bput(ov, s.a, "r0", "q", 5, "new");               /* a new row */
  bput(ov, s.a, "r1", "q", 30, "o1");               /* newer version */
  bput(ov, s.b, "r1", "z", 10, "oz");               /* same ts: replaces the committed one */
  bdel(ov, s.a, KV_DELETE_COLUMN, "r2", "q", 10);   /* column gone */
  bdel(ov, s.b, KV_DELETE_FAMILY, "r3", NULL, 10);  /* row gone (its only family) */
  bdel(ov, s.a, KV_DELETE_VERSION, "r4", "q", 20);  /* one version gone */
  bput(ov, s.a, "r5", "q", 7, "x1");
  bput(ov, s.a, "r5", "q", 7, "x2");                /* later op in the batch wins */
  bdel(ov, s.a, KV_DELETE_FAMILY, "r6", NULL, 50);
  bput(ov, s.a, "r6", "q", 40, "back");             /* put after its tombstone: visible */
  bput(ov, s.o, "r1", "q", 99, "elsewhere");        /* family not read: ignored */
  so.overlay = ov;
  const char *with =
      "r0|a:q@5=new,;\n"
      "r1|a:q@30=o1,a:q@20=c2,a:q@10=c1,b:z@10=oz,;\n"
      "r2|a:w@10=d2,;\n"
      "r4|a:q@10=f1,;\n"
      "r5|a:q@7=x2,;\n"
      "r6|a:q@40=back,;\n";
  expect_scan(&s, &so, with);
  /* Reverse gives the same rows backwards. */
  so.reverse = true;
  expect_scan(&s, &so,
              "r6|a:q@40=back,;\n"
              "r5|a:q@7=x2,;\n"
              "r4|a:q@10=f1,;\n"
              "r2|a:w@10=d2,;\n"
              "r1|a:q@30=o1,a:q@20=c2,a:q@10=c1,b:z@10=oz,;\n"
              "r0|a:q@5=new,;\n");
  so.reverse = false;
  /* Multi-range: [r0, r1] and [r3, r5). */
  kv_range rg[2] = {{(const uint8_t *)"r0", 2, true, (const uint8_t *)"r1", 2, true},
                    {(const uint8_t *)"r3", 2, true, (const uint8_t *)"r5", 2, false}};
  so.ranges = rg;
  so.n_ranges = 2;
  so.max_versions = 1;
  expect_scan(&s, &so, "r0|a:q@5=new,;\nr1|a:q@30=o1,b:z@10=oz,;\nr4|a:q@10=f1,;\n");
  so.ranges = NULL;
  so.n_ranges = 0;
  /* Point reads. */
  kv_scan *g;
  kv_row r;
  assert_int_equal(kv_get(s.db, &so, "r3", 2, &g, &r), KV_ERR_NOTFOUND);
  kv_scan_close(g);
  assert_int_equal(kv_get(s.db, &so, "r5", 2, &g, &r), KV_OK);
  assert_int_equal(r.n_cells, 1);
  assert_memory_equal(r.cells[0].value, "x2", 2);
  kv_scan_close(g);
  /* KV_TS_NOW takes the clock; the batch may change once the scan is open. */
  kv_batch_clear(ov);
  bput(ov, s.b, "r9", "z", KV_TS_NOW, "now");
  kv_scan *sc;
  assert_int_equal(kv_scan_open(s.db, &so, &sc), KV_OK);
  kv_batch_clear(ov);
  bput(ov, s.b, "r8", "z", 1, "late");
  int n = 0;
  while (kv_scan_next(sc, &r) == KV_OK) {
    if (r.key_len == 2 && memcmp(r.key, "r9", 2) == 0) {
      assert_int_equal(r.cells[0].ts, T0);
      n++;
    }
    assert_false(r.key_len == 2 && memcmp(r.key, "r8", 2) == 0);
  }
  kv_scan_close(sc);
  assert_int_equal(n, 1);
  /* Nothing was committed; an empty overlay is no overlay. */
  kv_batch_clear(ov);
  so.max_versions = 3;
  expect_scan(&s, &so, committed);
  so.overlay = NULL;
  expect_scan(&s, &so, committed);
  kv_batch_free(ov);
  kv_batch_free(b);
  st_close(&s);
}

/* Random ops over a small key space (rows r00..r19, qualifiers q0..q3, ts 1..6). */
static void random_ops(st *s, kv_batch *b, uint64_t *rng, int n) {
  for (int i = 0; i < n; i++) {
    char row[8], q[4], v[16];
    snprintf(row, sizeof row, "r%02d", (int)tu_below(rng, 20));
    snprintf(q, sizeof q, "q%d", (int)tu_below(rng, 4));
    snprintf(v, sizeof v, "v%llu", (unsigned long long)tu_below(rng, 100000));
    uint32_t fid = tu_below(rng, 2) ? s->a : s->b;
    int64_t ts = 1 + (int64_t)tu_below(rng, 6);
    int k = (int)tu_below(rng, 10);
    if (k < 6) bput(b, fid, row, q, ts, v);
    else if (k == 6) bdel(b, fid, KV_DELETE_VERSION, row, q, ts);
    else if (k == 7) bdel(b, fid, KV_DELETE_COLUMN, row, q, ts);
    else if (k == 8) bdel(b, fid, KV_DELETE_FAMILY, row, NULL, ts);
    else bput(b, s->o, row, q, ts, v); /* another table: ignored by the scans */
  }
}

/* Compare scan results of A (snapshot S, overlay) and B (overlay committed) over many scan
** shapes. */
static void compare_shapes(st *A, st *B, uint64_t snap, const kv_batch *ov, uint64_t *rng,
                           uint64_t seed) {
  uint32_t fams_ab[2] = {A->a, A->b}, fams_ba[2] = {A->b, A->a}, fam_a[1] = {A->a};
  const uint8_t *qs[2] = {(const uint8_t *)"q1", (const uint8_t *)"q2"};
  const uint32_t ql[2] = {2, 2};
  for (int shape = 0; shape < 12; shape++) {
    kv_scan_options so = {0};
    so.family_ids = shape % 3 == 0 ? fams_ab : shape % 3 == 1 ? fams_ba : fam_a;
    so.n_families = shape % 3 == 2 ? 1 : 2;
    so.reverse = shape & 1;
    so.max_versions = (shape / 2) % 2 ? 3 : 1;
    kv_qualifier_set qset = {A->a, qs, ql, 2};
    if (shape >= 8) {
      so.qualifiers = &qset;
      so.n_qualifier_sets = 1;
    }
    char s1[8], e1[8], s2[8], e2[8];
    int x = (int)tu_below(rng, 8), y = x + 1 + (int)tu_below(rng, 5);
    int z = y + (int)tu_below(rng, 3), w = z + 1 + (int)tu_below(rng, 6);
    snprintf(s1, sizeof s1, "r%02d", x);
    snprintf(e1, sizeof e1, "r%02d", y);
    snprintf(s2, sizeof s2, "r%02d", z);
    snprintf(e2, sizeof e2, "r%02d", w);
    kv_range rg[2] = {{(const uint8_t *)s1, 3, true, (const uint8_t *)e1, 3, false},
                      {(const uint8_t *)s2, 3, true, (const uint8_t *)e2, 3, true}};
    if (shape >= 4 && shape < 8) {
      so.ranges = rg;
      so.n_ranges = 2;
    }
    kv_scan_options sa = so, sb = so;
    sa.snapshot = snap;
    sa.overlay = ov;
    char *ra = render(A, &sa), *rb = render(B, &sb);
    if (strcmp(ra, rb) != 0)
      fail_msg("seed %llu shape %d: overlay scan\n%s\ncommitted scan\n%s",
               (unsigned long long)seed, shape, ra, rb);
    free(ra);
    free(rb);
  }
  /* Point reads of every row. */
  for (int r = 0; r < 20; r++) {
    char row[8];
    snprintf(row, sizeof row, "r%02d", r);
    kv_scan_options so = {0};
    so.family_ids = fams_ab;
    so.n_families = 2;
    so.max_versions = 3;
    kv_scan_options sa = so;
    sa.snapshot = snap;
    sa.overlay = ov;
    kv_scan *ga, *gb;
    kv_row xa, xb;
    int ca = kv_get(A->db, &sa, row, 3, &ga, &xa), cb = kv_get(B->db, &so, row, 3, &gb, &xb);
    assert_int_equal(ca, cb);
    if (ca == KV_OK) {
      assert_int_equal(xa.n_cells, xb.n_cells);
      for (uint32_t i = 0; i < xa.n_cells; i++) {
        assert_int_equal(xa.cells[i].ts, xb.cells[i].ts);
        assert_int_equal(xa.cells[i].value_len, xb.cells[i].value_len);
        assert_memory_equal(xa.cells[i].value, xb.cells[i].value, xa.cells[i].value_len);
      }
    }
    kv_scan_close(ga);
    kv_scan_close(gb);
  }
}

static void test_differential(void **state) {
  (void)state;
  uint64_t seed = tu_seed("overlay_differential"), rng = seed;
  int rounds = (int)tu_scaled(150, 20);
  for (int round = 0; round < rounds; round++) {
    st A, B;
    st_open(&A);
    st_open(&B);
    assert_int_equal(A.a, B.a); /* same ids: the stores were built the same way */
    kv_batch *b = kv_batch_new();
    int batches = 1 + (int)tu_below(&rng, 4);
    for (int i = 0; i < batches; i++) {
      uint64_t r2 = rng;
      random_ops(&A, b, &rng, 1 + (int)tu_below(&rng, 40));
      commit(&A, b);
      random_ops(&B, b, &r2, 1 + (int)tu_below(&r2, 40));
      commit(&B, b);
      if (tu_below(&rng, 2)) {
        assert_int_equal(kv_flush(A.db, "t"), KV_OK);
        assert_int_equal(kv_flush(B.db, "t"), KV_OK);
      }
    }
    /* A's later commits must stay invisible to a scan at S, flushed or not. */
    uint64_t snap;
    assert_int_equal(kv_snapshot_acquire(A.db, &snap), KV_OK);
    random_ops(&A, b, &rng, (int)tu_below(&rng, 30));
    commit(&A, b);
    if (tu_below(&rng, 2)) assert_int_equal(kv_flush(A.db, "t"), KV_OK);
    kv_batch *ov = kv_batch_new();
    random_ops(&A, ov, &rng, 1 + (int)tu_below(&rng, 40));
    assert_int_equal(kv_commit(B.db, ov, NULL), KV_OK);
    compare_shapes(&A, &B, snap, ov, &rng, seed);
    kv_snapshot_release(A.db, snap);
    kv_batch_free(ov);
    kv_batch_free(b);
    st_close(&A);
    st_close(&B);
  }
}

/* The batch's overlay index (kv/db/batch.c): a scan open while the batch grows sees the batch
** as it was at open, a new scan sees the new ops; kv_batch_rollback_to and kv_batch_clear
** past indexed ops leave no trace of them in later scans; a copy of a prefix reads only that
** prefix; a scan outlives the batch it read (freed while the scan is open: ASan). */
static void test_index(void **state) {
  (void)state;
  st s;
  st_open(&s);
  kv_batch *b = kv_batch_new();
  bput(b, s.a, "r1", "q", 10, "c1");
  bput(b, s.a, "r5", "q", 10, "c5");
  commit(&s, b);
  uint32_t fams[1] = {s.a};
  kv_scan_options so = {0};
  so.family_ids = fams;
  so.n_families = 1;
  kv_batch *tx = kv_batch_new();
  bput(tx, s.a, "r2", "q", 10, "t2");
  so.overlay = tx;
  expect_scan(&s, &so, "r1|a:q@10=c1,;\nr2|a:q@10=t2,;\nr5|a:q@10=c5,;\n");
  kv_scan *sc;
  assert_int_equal(kv_scan_open(s.db, &so, &sc), KV_OK);
  kv_row r;
  assert_int_equal(kv_scan_next(sc, &r), KV_OK); /* r1 */
  bput(tx, s.a, "r3", "q", 10, "t3");            /* after the open: unseen by sc */
  bput(tx, s.a, "r5", "q", 10, "t5");
  bdel(tx, s.a, KV_DELETE_FAMILY, "r2", NULL, 10);
  kv_batch_mark m = kv_batch_get_mark(tx);
  expect_scan(&s, &so, "r1|a:q@10=c1,;\nr3|a:q@10=t3,;\nr5|a:q@10=t5,;\n");
  bput(tx, s.a, "r4", "q", 10, "t4");
  expect_scan(&s, &so, "r1|a:q@10=c1,;\nr3|a:q@10=t3,;\nr4|a:q@10=t4,;\nr5|a:q@10=t5,;\n");
  kv_batch *prefix = kv_batch_copy(tx, m);
  assert_non_null(prefix);
  kv_batch_rollback_to(tx, m); /* r4 gone again */
  expect_scan(&s, &so, "r1|a:q@10=c1,;\nr3|a:q@10=t3,;\nr5|a:q@10=t5,;\n");
  kv_scan_options sp = so;
  sp.overlay = prefix;
  bput(tx, s.a, "r6", "q", 10, "t6"); /* in tx only, not in the copy */
  expect_scan(&s, &sp, "r1|a:q@10=c1,;\nr3|a:q@10=t3,;\nr5|a:q@10=t5,;\n");
  kv_batch_free(tx); /* sc keeps what it read */
  const char *want[] = {"r2", "r5"};
  for (int i = 0; i < 2; i++) {
    assert_int_equal(kv_scan_next(sc, &r), KV_OK);
    assert_int_equal(r.key_len, 2);
    assert_memory_equal(r.key, want[i], 2);
    assert_int_equal(r.n_cells, 1);
    assert_memory_equal(r.cells[0].value, i == 0 ? "t2" : "c5", 2);
  }
  assert_int_equal(kv_scan_next(sc, &r), KV_ERR_NOTFOUND);
  kv_scan_close(sc);
  kv_batch_clear(prefix); /* no ops: nothing of the overlay left */
  expect_scan(&s, &sp, "r1|a:q@10=c1,;\nr5|a:q@10=c5,;\n");
  bput(prefix, s.a, "r7", "q", 10, "p7");
  expect_scan(&s, &sp, "r1|a:q@10=c1,;\nr5|a:q@10=c5,;\nr7|a:q@10=p7,;\n");
  kv_batch_free(prefix);
  kv_batch_free(b);
  st_close(&s);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_fixed),
      cmocka_unit_test(test_differential),
      cmocka_unit_test(test_index),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
