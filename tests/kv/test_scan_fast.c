/*
** tests/kv/test_scan_fast.c: the read-path fast paths of kv/scan/scan.c and kv/sf/sf_iter.c give
** the same rows as the general path, on random data through kv.h on the in-memory env:
**   - a qualifier projection (applied inside the store-file iterator, with value groups of
**     the other qualifiers left undecoded) equals the unprojected scan with the other
**     qualifiers' cells dropped afterwards (and rows left without cells dropped), forward
**     and reverse, over ranges, limits, snapshots and max_versions, and for kv_get;
**   - a family read from a single source (one store file, empty memstore: no merge) gives
**     the rows the multi-source merge gave before the major compaction;
**   - both with and without a block cache (a projected read must not leave a partly
**     decoded block in the cache for a later unprojected read).
** Data: small blocks (many per file), fixed and variable width values, every tombstone
** kind, repeated timestamps, several store files plus the memstore. What it does not
** test: visibility rules themselves (tests/kv/test_scan.c, test_model.c).
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "kv/env/env_mem.h"
#include "kv/kv.h"
#include "testutil.h"
#include "tu_kv.h"
#include "tu_sbuf.h"

#define NQUALS 8

static const char *qual_name(int q) {
  static const char *names[NQUALS] = {"A", "B", "CC", "D", "EEE", "F", "G", "H"};
  return names[q];
}

typedef struct world {
  kv_env *env;       /* in-memory file system */
  kv_db *db;         /* store */
  uint32_t fid;      /* family id */
  uint64_t rng;      /* PRNG state */
  int nrows;         /* distinct row keys */
} world;

static void make_row(int r, char *out) { sprintf(out, "row%05d", r * 7); }

static void world_open(world *w, uint64_t seed, size_t cache) {
  memset(w, 0, sizeof *w);
  w->rng = seed;
  w->env = kv_env_mem_new(1700000000000ll);
  w->db = tu_kv_open_mem(w->env, cache);
  kv_family_options fo = {.name = "f", .max_versions = 2, .block_size = 512};
  assert_int_equal(kv_create_table(w->db, "t", &fo, 1), KV_OK);
  assert_int_equal(kv_family_id(w->db, "t", "f", &w->fid), KV_OK);
  w->nrows = (int)tu_scaled(300, 40);
}

static void world_close(world *w) {
  assert_int_equal(kv_close(w->db), KV_OK);
  kv_env_free(w->env);
}

/* Random writes, flushed at random points into several store files; some stay in the
** memstore. */
static void world_fill(world *w) {
  uint64_t nops = tu_scaled(4000, 400);
  kv_batch *b = kv_batch_new();
  for (uint64_t i = 0; i < nops; i++) {
    char row[32];
    make_row((int)tu_below(&w->rng, (uint64_t)w->nrows), row);
    int q = (int)tu_below(&w->rng, NQUALS);
    const char *qn = qual_name(q);
    int64_t ts = 1000 + (int64_t)tu_below(&w->rng, 6);
    uint64_t kind = tu_below(&w->rng, 40);
    if (kind == 0) {
      assert_int_equal(kv_batch_delete(b, w->fid, KV_DELETE_FAMILY, row, strlen(row), "", 0,
                                       ts), KV_OK);
    } else if (kind == 1) {
      assert_int_equal(kv_batch_delete(b, w->fid, KV_DELETE_COLUMN, row, strlen(row), qn,
                                       strlen(qn), ts), KV_OK);
    } else if (kind == 2) {
      assert_int_equal(kv_batch_delete(b, w->fid, KV_DELETE_VERSION, row, strlen(row), qn,
                                       strlen(qn), ts), KV_OK);
    } else {
      uint8_t val[24];
      size_t vlen = q % 2 ? 8 : tu_below(&w->rng, sizeof val); /* odd: fixed width */
      for (size_t k = 0; k < vlen; k++) val[k] = (uint8_t)tu_rand(&w->rng);
      assert_int_equal(kv_batch_put(b, w->fid, row, strlen(row), qn, strlen(qn), ts, val,
                                    vlen), KV_OK);
    }
    if (tu_below(&w->rng, 8) == 0 || i + 1 == nops) {
      assert_int_equal(kv_commit(w->db, b, NULL), KV_OK);
      kv_batch_clear(b);
    }
    if (tu_below(&w->rng, nops / 5) == 0) assert_int_equal(kv_flush(w->db, NULL), KV_OK);
  }
  kv_batch_free(b);
}

typedef struct query {
  bool proj;              /* a projection is given */
  bool keep[NQUALS];      /* projected qualifiers */
  kv_range ranges[2];     /* key ranges */
  uint32_t n_ranges;      /* entries in ranges */
  char bounds[4][32];     /* bound bytes */
  bool reverse;           /* descending rows */
  uint64_t limit;         /* 0 = none */
  int max_versions;       /* 0 = 1 */
  uint64_t snapshot;      /* 0 = latest */
} query;

static void random_query(world *w, query *q, uint64_t snap) {
  memset(q, 0, sizeof *q);
  q->proj = true;
  for (int i = 0; i < NQUALS; i++) q->keep[i] = tu_below(&w->rng, 3) == 0;
  if (tu_below(&w->rng, 6) == 0) memset(q->keep, 0, sizeof q->keep);
  if (tu_below(&w->rng, 6) == 0) memset(q->keep, 1, sizeof q->keep);
  q->n_ranges = (uint32_t)tu_below(&w->rng, 3);
  int a = (int)tu_below(&w->rng, (uint64_t)w->nrows), c = (int)tu_below(&w->rng, (uint64_t)w->nrows);
  int d = (int)tu_below(&w->rng, (uint64_t)w->nrows), e = (int)tu_below(&w->rng, (uint64_t)w->nrows);
  int v[4] = {a, c, d, e};
  for (int i = 0; i < 4; i++) /* sort the four bounds */
    for (int j = i + 1; j < 4; j++)
      if (v[j] < v[i]) { int t = v[i]; v[i] = v[j]; v[j] = t; }
  for (uint32_t i = 0; i < q->n_ranges; i++) {
    make_row(v[2 * i], q->bounds[2 * i]);
    make_row(v[2 * i + 1], q->bounds[2 * i + 1]);
    kv_range *r = &q->ranges[i];
    r->start = (const uint8_t *)q->bounds[2 * i];
    r->start_len = strlen(q->bounds[2 * i]);
    r->start_inclusive = true;
    r->end = (const uint8_t *)q->bounds[2 * i + 1];
    r->end_len = strlen(q->bounds[2 * i + 1]);
    r->end_inclusive = i + 1 < q->n_ranges ? false : tu_below(&w->rng, 2) == 0;
  }
  q->reverse = tu_below(&w->rng, 3) == 0;
  q->limit = tu_below(&w->rng, 3) == 0 ? 1 + tu_below(&w->rng, 20) : 0;
  q->max_versions = (int)tu_below(&w->rng, 3);
  q->snapshot = tu_below(&w->rng, 3) == 0 ? snap : 0;
}

/* Render one row's cells, those of projected qualifiers only when `only` is set. */
static bool render_row(sbuf *out, const kv_row *r, const bool *only) {
  size_t mark = out->len;
  sb_add(out, "%.*s:", (int)r->key_len, (const char *)r->key);
  int shown = 0;
  for (uint32_t i = 0; i < r->n_cells; i++) {
    const kv_cell_view *c = &r->cells[i];
    if (only) {
      bool in = false;
      for (int q = 0; q < NQUALS; q++)
        if (only[q] && strlen(qual_name(q)) == c->qual_len &&
            memcmp(qual_name(q), c->qual, c->qual_len) == 0)
          in = true;
      if (!in) continue;
    }
    sb_add(out, "%s%.*s@%lld=", shown++ ? "," : "", (int)c->qual_len, (const char *)c->qual,
           (long long)c->ts);
    for (uint32_t k = 0; k < c->value_len; k++) sb_add(out, "%02x", c->value[k]);
  }
  if (shown == 0) { /* a row without cells is not handed out */
    out->len = mark;
    out->p[mark] = 0;
    return false;
  }
  sb_add(out, ";");
  return true;
}

/* Run q; with `project` the projection goes to kv, else every qualifier is read and the
** projection is applied to the rendered rows (the limit too). */
static void run(world *w, const query *q, bool project, sbuf *out) {
  out->len = 0;
  sb_add(out, "");
  const uint8_t *qp[NQUALS];
  uint32_t ql[NQUALS], nq = 0;
  for (int i = 0; i < NQUALS; i++)
    if (q->keep[i]) {
      qp[nq] = (const uint8_t *)qual_name(i);
      ql[nq++] = (uint32_t)strlen(qual_name(i));
    }
  kv_qualifier_set qs = {w->fid, qp, ql, nq};
  kv_scan_options so;
  memset(&so, 0, sizeof so);
  so.family_ids = &w->fid;
  so.n_families = 1;
  if (project && q->proj) {
    so.qualifiers = &qs;
    so.n_qualifier_sets = 1;
  }
  so.ranges = q->n_ranges ? q->ranges : NULL;
  so.n_ranges = q->n_ranges;
  so.reverse = q->reverse;
  so.limit = project ? q->limit : 0;
  so.max_versions = q->max_versions;
  so.snapshot = q->snapshot;
  kv_scan *s;
  assert_int_equal(kv_scan_open(w->db, &so, &s), KV_OK);
  kv_row r;
  int rc;
  uint64_t rows = 0;
  while ((rc = kv_scan_next(s, &r)) == KV_OK) {
    bool shown = render_row(out, &r, project || !q->proj ? NULL : q->keep);
    if (project) assert_true(shown); /* kv never hands out a row without cells */
    if (shown && ++rows == q->limit && !project) break;
  }
  if (project || !q->limit || rows < q->limit) assert_int_equal(rc, KV_ERR_NOTFOUND);
  kv_scan_close(s);
}

static void check_queries(world *w, uint64_t snap, const char *what, uint64_t seed) {
  uint64_t n = tu_scaled(300, 60);
  sbuf a = {0}, b = {0};
  for (uint64_t i = 0; i < n; i++) {
    query q;
    random_query(w, &q, snap);
    run(w, &q, true, &a);
    run(w, &q, false, &b);
    if (strcmp(a.p, b.p) != 0) {
      fprintf(stderr, "%s: query %llu differs (seed %llu)\nprojected: %s\nfiltered:  %s\n", what,
              (unsigned long long)i, (unsigned long long)seed, a.p, b.p);
      fail();
    }
  }
  free(a.p);
  free(b.p);
}

/* Every row by kv_get, projected and not; the unprojected one also against the row as a
** full scan (no seek: blocks decoded whole) hands it out. */
static void check_gets(world *w, uint64_t seed) {
  sbuf a = {0}, b = {0};
  char **full = calloc((size_t)w->nrows + 1, sizeof *full);
  kv_scan_options fo;
  memset(&fo, 0, sizeof fo);
  fo.family_ids = &w->fid;
  fo.n_families = 1;
  kv_scan *fs;
  kv_row fr;
  assert_int_equal(kv_scan_open(w->db, &fo, &fs), KV_OK);
  while (kv_scan_next(fs, &fr) == KV_OK) {
    char key[32] = {0};
    assert_true(fr.key_len > 3 && fr.key_len < sizeof key);
    memcpy(key, fr.key, fr.key_len); /* row keys are not NUL-terminated */
    int r = atoi(key + 3) / 7;
    assert_true(r >= 0 && r < w->nrows);
    a.len = 0;
    sb_add(&a, "");
    render_row(&a, &fr, NULL);
    full[r] = strdup(a.p);
  }
  kv_scan_close(fs);
  for (int r = -1; r <= w->nrows; r++) {
    char row[32];
    make_row(r < 0 ? 0 : r, row);
    if (r == w->nrows) strcat(row, "x"); /* absent */
    query q;
    memset(&q, 0, sizeof q);
    q.proj = true;
    for (int i = 0; i < NQUALS; i++) q.keep[i] = tu_below(&w->rng, 2) == 0;
    for (int pass = 0; pass < 2; pass++) {
      sbuf *out = pass ? &b : &a;
      out->len = 0;
      sb_add(out, "");
      const uint8_t *qp[NQUALS];
      uint32_t ql[NQUALS], nq = 0;
      for (int i = 0; i < NQUALS; i++)
        if (q.keep[i]) {
          qp[nq] = (const uint8_t *)qual_name(i);
          ql[nq++] = (uint32_t)strlen(qual_name(i));
        }
      kv_qualifier_set qs = {w->fid, qp, ql, nq};
      kv_scan_options so;
      memset(&so, 0, sizeof so);
      so.family_ids = &w->fid;
      so.n_families = 1;
      if (pass == 0) {
        so.qualifiers = &qs;
        so.n_qualifier_sets = 1;
      }
      kv_scan *s;
      kv_row kr;
      int rc = kv_get(w->db, &so, row, strlen(row), &s, &kr);
      assert_true(rc == KV_OK || rc == KV_ERR_NOTFOUND);
      if (rc == KV_OK) render_row(out, &kr, pass ? q.keep : NULL);
      kv_scan_close(s);
    }
    if (strcmp(a.p, b.p) != 0) {
      fprintf(stderr, "kv_get %s differs (seed %llu)\nprojected: %s\nfiltered:  %s\n", row,
              (unsigned long long)seed, a.p, b.p);
      fail();
    }
    /* the same kv_get without a projection, against the full scan's row */
    if (r >= 0 && r < w->nrows) {
      kv_scan_options so;
      memset(&so, 0, sizeof so);
      so.family_ids = &w->fid;
      so.n_families = 1;
      kv_scan *s;
      kv_row kr;
      b.len = 0;
      sb_add(&b, "");
      int rc = kv_get(w->db, &so, row, strlen(row), &s, &kr);
      assert_true(rc == KV_OK || rc == KV_ERR_NOTFOUND);
      if (rc == KV_OK) render_row(&b, &kr, NULL);
      kv_scan_close(s);
      const char *want = full[r] ? full[r] : "";
      if (strcmp(b.p, want) != 0) {
        fprintf(stderr, "kv_get %s differs from the full scan (seed %llu)\nget:  %s\nscan: %s\n",
                row, (unsigned long long)seed, b.p, want);
        fail();
      }
    }
  }
  for (int r = 0; r < w->nrows; r++) free(full[r]);
  free(full);
  free(a.p);
  free(b.p);
}

/* Every query's text before a major compaction, compared with after it. */
static void check_single_source(world *w, uint64_t seed) {
  uint64_t n = tu_scaled(200, 40);
  query *qs = calloc(n, sizeof *qs);
  char **before = calloc(n, sizeof *before);
  sbuf a = {0};
  for (uint64_t i = 0; i < n; i++) {
    random_query(w, &qs[i], 0);
    qs[i].proj = tu_below(&w->rng, 2) == 0;
    qs[i].snapshot = 0;
    qs[i].max_versions = 0; /* compaction keeps VERSIONS: read the latest version */
    run(w, &qs[i], true, &a);
    before[i] = strdup(a.p);
  }
  assert_int_equal(kv_flush(w->db, NULL), KV_OK);
  assert_int_equal(kv_compact(w->db, "t", true), KV_OK);
  kv_family_stats st;
  assert_int_equal(kv_family_get_stats(w->db, w->fid, &st), KV_OK);
  assert_int_equal(st.store_files, 1);
  assert_int_equal(st.memstore_cells, 0);
  for (uint64_t i = 0; i < n; i++) {
    run(w, &qs[i], true, &a);
    if (strcmp(a.p, before[i]) != 0) {
      fprintf(stderr, "query %llu: single source differs from the merge (seed %llu)\n"
              "merged: %s\nsingle: %s\n", (unsigned long long)i, (unsigned long long)seed,
              before[i], a.p);
      fail();
    }
    free(before[i]);
  }
  free(before);
  free(qs);
  free(a.p);
}

static void scenario(size_t cache, const char *name) {
  uint64_t seed = tu_seed(name);
  world w;
  world_open(&w, seed, cache);
  world_fill(&w);
  uint64_t snap = 0;
  assert_int_equal(kv_snapshot_acquire(w.db, &snap), KV_OK);
  /* more writes after the snapshot, so snapshot reads differ from latest ones */
  world_fill(&w);
  check_queries(&w, snap, name, seed);
  check_gets(&w, seed);
  kv_snapshot_release(w.db, snap);
  check_single_source(&w, seed);
  check_queries(&w, 0, name, seed); /* the projection over one file */
  check_gets(&w, seed);
  world_close(&w);
}

static void test_projection_with_cache(void **state) {
  (void)state;
  scenario((size_t)1 << 20, "projection_with_cache");
}

static void test_projection_without_cache(void **state) {
  (void)state;
  scenario(KV_BLOCK_CACHE_OFF, "projection_without_cache");
}

/* A tiny cache: blocks come and go between the projected and the full reads. */
static void test_projection_tiny_cache(void **state) {
  (void)state;
  scenario(16384, "projection_tiny_cache");
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_projection_with_cache),
    cmocka_unit_test(test_projection_without_cache),
    cmocka_unit_test(test_projection_tiny_cache),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
