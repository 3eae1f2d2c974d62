/*
** tests/kv/test_scan_reuse.c: a scan opened on the shell of an earlier, differently shaped
** scan (kv/scan/scan.c keeps one closed scan per store, with its buffers and parked store-file
** iterators) hands out exactly what a scan on a fresh shell hands out. Random data in three
** families (several versions, every tombstone kind, TTL, rows in store files, in frozen and
** active memstores), random scan shapes (families, projections, ranges, skip scans, reverse,
** limits, filters, max_versions, snapshots, time ranges, kv_get) run in random order, each
** compared with the same scan run while another scan holds the spare shell (so it gets a new
** one). Also with a tiny block cache. And kv_scan_options.existence_family: point reads hand
** out the same rows with it as without. Seeded: the seed is printed; ROWAN_SEED reruns it.
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
#include "tu_kv.h"

#define T0 1700000000000ll
#define NROWS 600

typedef struct world {
  kv_env *env;        /* in-memory files */
  kv_db *db;          /* the store */
  uint32_t fam[3];    /* family ids: a (VERSIONS 3), b (TTL 100 s), c */
  uint64_t s;         /* PRNG state */
} world;

typedef struct shape {
  uint32_t fams[3];           /* families read */
  uint32_t nf;                /* how many */
  kv_qualifier_set qs[3];     /* projections */
  uint32_t nqs;               /* how many */
  const uint8_t *qp[3][3];    /* projected qualifiers per set */
  uint32_t ql[3][3];          /* their lengths */
  kv_range ranges[4];         /* ranges (sorted, disjoint) */
  uint32_t nr;                /* how many */
  char rb[8][16];             /* range bound bytes */
  bool reverse;               /* descending */
  uint64_t limit;             /* 0 = none */
  int max_versions;           /* 0 = 1 */
  bool filter;                /* keep rows whose key's last digit is even */
  int64_t ts_min, ts_max;     /* time range */
  bool get;                   /* a kv_get of rb[0] instead of a scan */
} shape;

typedef struct sbuf {
  char *p;                    /* text */
  size_t len, cap;            /* used / allocated */
} sbuf;

static void sb_put(sbuf *b, const void *p, size_t n) {
  if (b->len + n + 1 > b->cap) {
    b->cap = (b->len + n + 1) * 2;
    b->p = realloc(b->p, b->cap);
    assert_non_null(b->p);
  }
  memcpy(b->p + b->len, p, n);
  b->len += n;
  b->p[b->len] = 0;
}

static void key_of(int r, char *out) { snprintf(out, 16, "r%04d", r); }

static const char *const QUALS[3] = {"q0", "q1", "q2"};

static void world_open(world *w, uint64_t seed, size_t cache) {
  memset(w, 0, sizeof *w);
  w->s = seed;
  w->env = kv_env_mem_new(T0);
  w->db = tu_kv_open_mem(w->env, cache);
  kv_family_options fo[3] = {{.name = "a", .max_versions = 3, .block_size = 512},
                             {.name = "b", .ttl_sec = 100, .block_size = 1024},
                             {.name = "c", .block_size = 256}};
  assert_int_equal(kv_create_table(w->db, "t", fo, 3), KV_OK);
  for (int f = 0; f < 3; f++)
    assert_int_equal(kv_family_id(w->db, "t", fo[f].name, &w->fam[f]), KV_OK);
}

/* Several rounds of random puts and tombstones, flushed between rounds but the last (so
** there are several store files and cells in the memstore), the clock moving on. */
static void world_fill(world *w) {
  for (int round = 0; round < 5; round++) {
    kv_batch *b = kv_batch_new();
    for (int k = 0; k < 700; k++) {
      char key[16];
      key_of((int)tu_below(&w->s, NROWS), key);
      uint32_t f = w->fam[tu_below(&w->s, 3)];
      const char *q = QUALS[tu_below(&w->s, 3)];
      int64_t ts = T0 - 200000 + (int64_t)tu_below(&w->s, 400000);
      uint64_t t = tu_below(&w->s, 12);
      if (t < 9) {
        char v[24];
        int n = snprintf(v, sizeof v, "v%llu", (unsigned long long)tu_rand(&w->s) % 100000);
        assert_int_equal(kv_batch_put(b, f, key, strlen(key), q, 2,
                                      tu_below(&w->s, 4) ? ts : KV_TS_NOW, v, (size_t)n),
                         KV_OK);
      } else {
        int type = (int)(t - 8); /* 1 version, 2 column, 3 family */
        assert_int_equal(kv_batch_delete(b, f, type, key, strlen(key), type == 3 ? "" : q,
                                         type == 3 ? 0 : 2, ts),
                         KV_OK);
      }
    }
    assert_int_equal(kv_commit(w->db, b, NULL), KV_OK);
    kv_batch_free(b);
    kv_env_mem_set_time(w->env, T0 + 20000 * (round + 1));
    if (round < 4) assert_int_equal(kv_flush(w->db, NULL), KV_OK);
  }
}

static bool even_key(void *ctx, const kv_row *r) {
  (void)ctx;
  return r->key_len > 0 && (r->key[r->key_len - 1] - '0') % 2 == 0;
}

static void random_shape(world *w, shape *sh) {
  memset(sh, 0, sizeof *sh);
  uint32_t order[3] = {0, 1, 2};
  for (int i = 2; i > 0; i--) {
    uint32_t j = (uint32_t)tu_below(&w->s, (uint64_t)i + 1), t = order[i];
    order[i] = order[j];
    order[j] = t;
  }
  sh->nf = 1 + (uint32_t)tu_below(&w->s, 3);
  for (uint32_t i = 0; i < sh->nf; i++) sh->fams[i] = w->fam[order[i]];
  for (uint32_t i = 0; i < sh->nf; i++) {
    if (tu_below(&w->s, 2)) continue;
    kv_qualifier_set *qs = &sh->qs[sh->nqs];
    uint32_t n = (uint32_t)tu_below(&w->s, 3);
    for (uint32_t k = 0; k < n; k++) {
      sh->qp[sh->nqs][k] = (const uint8_t *)QUALS[(k + tu_below(&w->s, 3)) % 3];
      sh->ql[sh->nqs][k] = 2;
    }
    qs->family_id = sh->fams[i];
    qs->quals = sh->qp[sh->nqs];
    qs->qual_lens = sh->ql[sh->nqs];
    qs->n_quals = n;
    sh->nqs++;
  }
  sh->get = tu_below(&w->s, 4) == 0;
  int bounds[8];
  int nb = sh->get ? 1 : 2 * (int)tu_below(&w->s, 4);
  for (int i = 0; i < nb; i++) bounds[i] = (int)tu_below(&w->s, NROWS + 20);
  for (int i = 1; i < nb; i++) /* sort ascending */
    for (int j = i; j > 0 && bounds[j - 1] > bounds[j]; j--) {
      int t = bounds[j];
      bounds[j] = bounds[j - 1];
      bounds[j - 1] = t;
    }
  for (int i = 0; i < nb; i++) key_of(bounds[i], sh->rb[i]);
  for (int i = 0; i + 1 < nb; i += 2) {
    if (i > 0 && bounds[i] == bounds[i - 1]) continue; /* would overlap */
    kv_range *r = &sh->ranges[sh->nr++];
    r->start = (const uint8_t *)sh->rb[i];
    r->start_len = strlen(sh->rb[i]);
    r->start_inclusive = tu_below(&w->s, 2);
    r->end = (const uint8_t *)sh->rb[i + 1];
    r->end_len = strlen(sh->rb[i + 1]);
    r->end_inclusive = i + 2 >= nb || bounds[i + 2] != bounds[i + 1] ? tu_below(&w->s, 2) : 0;
  }
  sh->reverse = tu_below(&w->s, 3) == 0;
  sh->limit = tu_below(&w->s, 3) == 0 ? 1 + tu_below(&w->s, 30) : 0;
  sh->max_versions = (int)tu_below(&w->s, 4);
  sh->filter = tu_below(&w->s, 4) == 0;
  if (tu_below(&w->s, 5) == 0) {
    sh->ts_min = T0 - 100000;
    sh->ts_max = T0 + 50000;
  }
}

static void opts_of(const shape *sh, uint64_t snap, kv_scan_options *o) {
  memset(o, 0, sizeof *o);
  o->family_ids = sh->fams;
  o->n_families = sh->nf;
  o->qualifiers = sh->qs;
  o->n_qualifier_sets = sh->nqs;
  o->ranges = sh->ranges;
  o->n_ranges = sh->nr;
  o->reverse = sh->reverse;
  o->limit = sh->limit;
  o->max_versions = sh->max_versions;
  o->filter = sh->filter ? even_key : NULL;
  o->ts_min = sh->ts_min;
  o->ts_max = sh->ts_max;
  o->snapshot = snap;
}

static void render(sbuf *out, const kv_row *r) {
  sb_put(out, r->key, r->key_len);
  for (uint32_t i = 0; i < r->n_cells; i++) {
    const kv_cell_view *c = &r->cells[i];
    char h[64];
    int n = snprintf(h, sizeof h, " %u:", c->family_id);
    sb_put(out, h, (size_t)n);
    sb_put(out, c->qual, c->qual_len);
    n = snprintf(h, sizeof h, "@%lld=", (long long)c->ts);
    sb_put(out, h, (size_t)n);
    sb_put(out, c->value, c->value_len);
  }
  sb_put(out, "\n", 1);
}

/* Run the shape; its rows and row metrics as text. */
static void run(world *w, const shape *sh, uint64_t snap, sbuf *out) {
  kv_scan_options o;
  opts_of(sh, snap, &o);
  out->len = 0;
  sb_put(out, "", 0);
  kv_scan *s = NULL;
  kv_row row;
  int rc;
  if (sh->get) {
    rc = kv_get(w->db, &o, sh->rb[0], strlen(sh->rb[0]), &s, &row);
    assert_true(rc == KV_OK || rc == KV_ERR_NOTFOUND);
    if (rc == KV_OK) render(out, &row);
  } else {
    assert_int_equal(kv_scan_open(w->db, &o, &s), KV_OK);
    while ((rc = kv_scan_next(s, &row)) == KV_OK) render(out, &row);
    assert_int_equal(rc, KV_ERR_NOTFOUND);
  }
  kv_scan_metrics m;
  kv_scan_get_metrics(s, &m);
  char h[160];
  int n = snprintf(h, sizeof h, "examined %llu returned %llu filtered %llu ranges %llu\n",
                   (unsigned long long)m.rows_examined, (unsigned long long)m.rows_returned,
                   (unsigned long long)m.rows_filtered, (unsigned long long)m.ranges_sought);
  sb_put(out, h, (size_t)n);
  /* (per-family cell and file counts depend on what the block cache holds: a point read
     seeks a file whose block is cached without asking its bloom filter) */
  kv_scan_close(s);
}

/* The same shape on a fresh shell: another scan holds the spare one meanwhile. */
static void run_fresh(world *w, const shape *sh, uint64_t snap, sbuf *out) {
  kv_scan_options o;
  memset(&o, 0, sizeof o);
  o.family_ids = &w->fam[0];
  o.n_families = 1;
  kv_scan *hold = NULL;
  assert_int_equal(kv_scan_open(w->db, &o, &hold), KV_OK);
  run(w, sh, snap, out);
  kv_scan_close(hold);
}

static void scenario(size_t cache, const char *name) {
  world w;
  uint64_t seed = tu_seed(name);
  world_open(&w, seed, cache);
  world_fill(&w);
  uint64_t snap = kv_last_sequence(w.db);
  world_fill(&w); /* more commits after the snapshot */
  sbuf a = {0}, b = {0};
  size_t n = tu_scaled(1500, 300), rows = 0;
  for (size_t i = 0; i < n; i++) {
    shape sh;
    random_shape(&w, &sh);
    uint64_t at = tu_below(&w.s, 3) == 0 ? snap : 0;
    run_fresh(&w, &sh, at, &a);
    run(&w, &sh, at, &b); /* on the shell `hold` left, shaped as scan 0 */
    if (strcmp(a.p, b.p) != 0)
      fail_msg("seed %llu, query %zu: a reused scan differs\n--- fresh\n%s--- reused\n%s",
               (unsigned long long)seed, i, a.p, b.p);
    for (size_t k = 0; k < a.len; k++) rows += a.p[k] == '\n';
  }
  fprintf(stderr, "[%s] %zu scans agree (%zu lines)\n", name, n, rows);
  free(a.p);
  free(b.p);
  assert_int_equal(kv_close(w.db), KV_OK);
  kv_env_free(w.env);
}

static void test_reuse_cached(void **state) {
  (void)state;
  scenario((size_t)8 << 20, "scan_reuse_cache");
}

static void test_reuse_tiny_cache(void **state) {
  (void)state;
  scenario((size_t)4 << 10, "scan_reuse_tiny_cache");
}

static void test_reuse_no_cache(void **state) {
  (void)state;
  scenario(0, "scan_reuse_no_cache");
}

/* A row as text for the existence family check: the cells of the other families, or, when
** it has none, the existence family's cells (marked). */
static void render_exist(sbuf *out, const kv_row *r, uint32_t efid) {
  bool other = false;
  for (uint32_t i = 0; i < r->n_cells; i++) other |= r->cells[i].family_id != efid;
  sb_put(out, r->key, r->key_len);
  sb_put(out, other ? ":" : ":only-existence", other ? 1 : 15);
  for (uint32_t i = 0; i < r->n_cells; i++) {
    const kv_cell_view *c = &r->cells[i];
    if (other && c->family_id == efid) continue;
    char h[64];
    int n = snprintf(h, sizeof h, " %u:", c->family_id);
    sb_put(out, h, (size_t)n);
    sb_put(out, c->qual, c->qual_len);
    n = snprintf(h, sizeof h, "@%lld=", (long long)c->ts);
    sb_put(out, h, (size_t)n);
    sb_put(out, c->value, c->value_len);
  }
  sb_put(out, "\n", 1);
}

/* Point reads (kv_get and one-row ranges, also inside skip scans) with an existence family
** hand out the same rows as without it, with the same cells of the other families. */
static void test_existence_family(void **state) {
  (void)state;
  world w;
  uint64_t seed = tu_seed("scan_existence_family");
  world_open(&w, seed, (size_t)8 << 20);
  world_fill(&w);
  sbuf a = {0}, b = {0};
  size_t n = tu_scaled(3000, 500), found = 0;
  uint64_t ecells[2] = {0, 0}; /* cells of the existence family examined without / with */
  for (size_t i = 0; i < n; i++) {
    shape sh;
    random_shape(&w, &sh);
    sh.reverse = false;
    sh.limit = 0;
    if (!sh.get) { /* one-row ranges */
      sh.nr = 1 + (uint32_t)tu_below(&w.s, 3);
      for (uint32_t k = 0; k < sh.nr; k++) {
        key_of((int)(k * (NROWS / 3) + tu_below(&w.s, NROWS / 3)), sh.rb[k]);
        sh.ranges[k] = (kv_range){(const uint8_t *)sh.rb[k], strlen(sh.rb[k]), true,
                                  (const uint8_t *)sh.rb[k], strlen(sh.rb[k]), true};
      }
    }
    uint32_t e = (uint32_t)tu_below(&w.s, sh.nf);
    for (int pass = 0; pass < 2; pass++) {
      sbuf *out = pass ? &b : &a;
      kv_scan_options o;
      opts_of(&sh, 0, &o);
      o.existence_family = pass ? e + 1 : 0;
      out->len = 0;
      sb_put(out, "", 0);
      kv_scan *sc = NULL;
      kv_row row;
      int rc;
      if (sh.get) {
        rc = kv_get(w.db, &o, sh.rb[0], strlen(sh.rb[0]), &sc, &row);
        assert_true(rc == KV_OK || rc == KV_ERR_NOTFOUND);
        if (rc == KV_OK) render_exist(out, &row, sh.fams[e]);
      } else {
        assert_int_equal(kv_scan_open(w.db, &o, &sc), KV_OK);
        while ((rc = kv_scan_next(sc, &row)) == KV_OK) render_exist(out, &row, sh.fams[e]);
        assert_int_equal(rc, KV_ERR_NOTFOUND);
      }
      kv_scan_metrics m;
      kv_scan_get_metrics(sc, &m);
      ecells[pass] += m.families[e].cells_examined;
      kv_scan_close(sc);
    }
    if (strcmp(a.p, b.p) != 0)
      fail_msg("seed %llu, query %zu: existence family %u changes the rows\n--- without\n"
               "%s--- with\n%s", (unsigned long long)seed, i, e, a.p, b.p);
    for (size_t k = 0; k < a.len; k++) found += a.p[k] == '\n';
  }
  fprintf(stderr, "[scan_existence_family] %zu point reads agree (%zu rows)\n", n, found);
  assert_true(found > 0);
  fprintf(stderr, "[scan_existence_family] existence family cells examined: %llu without, "
          "%llu with\n", (unsigned long long)ecells[0], (unsigned long long)ecells[1]);
  assert_true(ecells[1] < ecells[0]); /* rows found elsewhere skip it */
  kv_scan_options o;
  memset(&o, 0, sizeof o);
  o.family_ids = w.fam;
  o.n_families = 2;
  o.existence_family = 3;
  kv_scan *sc = NULL;
  assert_int_equal(kv_scan_open(w.db, &o, &sc), KV_ERR_INVALID);
  assert_null(sc);
  free(a.p);
  free(b.p);
  assert_int_equal(kv_close(w.db), KV_OK);
  kv_env_free(w.env);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_reuse_cached),
    cmocka_unit_test(test_reuse_tiny_cache),
    cmocka_unit_test(test_reuse_no_cache),
    cmocka_unit_test(test_existence_family),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
