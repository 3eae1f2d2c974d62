/*
** tests/kv/test_scan_runs.c: row runs (kv/scan/scan_run.c: the rows after one taken whole come
** straight from the families' blocks) hand out exactly the rows, cells, value vectors and
** scan counters of the present path, on random data through kv.h on the in-memory env. Each
** query runs with runs on and off (kv_scan_set_row_runs) at the same snapshot and clock, and
** the two renderings (keys, cells with timestamps, vectors, every metric) must be equal byte
** for byte; a third run with the fast row path off (the cell path) must give the same rows.
**
** Data: a sensor-like table: a readings family "r" of six columns (five 8-byte values, two of
** them DOUBLEs of one decimal, whose groups are stored decimal-scaled, and a text one;
** VERSIONS 1, a TTL), the marker family "k" (one empty cell per row, like the
** catalog's key family) and a sparse family "m". Rows of one station are written the way
** commits write them (every column once, one timestamp); some rows have no reading at all
** (only the marker: NULLs), some miss columns, some are only in "m". Then: one file per
** family after a major compaction; memstore cells over it (another source in the run's
** way); several files with versions and tombstones; a clock moved past the TTL of part of
** the rows. Keys of one length (station + reversed time) or of varying length (station names
** of different lengths). Queries: one to three families in any order, projections (subsets,
** none, the marker family alone), one station's range (the "latest readings" query), random
** and several ranges, single-row ranges, limits, filters, value vectors on and off, kv_get.
** With a block cache, without one (private blocks) and with a tiny one (blocks evicted
** mid-scan). A scan closed in the middle of a run, and a store closed under a run's row,
** leave nothing dangling (ASan checks). Each scenario checks that runs handed out a good
** share of the rows, so the comparison cannot pass by never running them.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "kv/env/env_mem.h"
#include "kv/kv.h"
#include "kv/sf/sf_rows.h"
#include "testutil.h"
#include "tu_kv.h"
#include "tu_sbuf.h"

#define NQ 6       /* columns of the readings family */
#define NFAM 3     /* r (readings), k (marker), m (sparse) */
#define NSTA 5     /* stations */
#define NOW0 1700000000000ll
#define TTL_SEC 7200

static const char *QN[NQ] = {"a", "b", "c", "d", "e", "w"}; /* w: the text column */

typedef struct world {
  kv_env *env;         /* in-memory file system */
  kv_db *db;           /* store */
  uint32_t fid[NFAM];  /* family ids */
  uint64_t rng;        /* PRNG state */
  int per_sta;         /* readings per station */
  bool varkeys;        /* station names of varying length */
  bool tiny;           /* a tiny block cache: hit counts depend on the order of runs */
  int64_t now;         /* the env's clock */
  uint64_t rows;       /* rows handed out with runs on, over the scenario */
  uint64_t run_rows;   /* of them, by runs */
} world;

static uint64_t rnd(world *w, uint64_t n) { return tu_below(&w->rng, n); }

/* Row key of reading i of station st: the station's name, a 0x00, then the reading's time
** reversed (newest first, as ts DESC), 8 bytes big-endian. */
static uint32_t make_key(const world *w, int st, int i, uint8_t *out) {
  uint32_t n = 0;
  if (w->varkeys) {
    static const char *names[NSTA] = {"Aoti", "Changping", "Ding", "Dongsi", "Wanshouxigong"};
    n = (uint32_t)strlen(names[st]);
    memcpy(out, names[st], n);
  } else {
    n = (uint32_t)sprintf((char *)out, "ST%02d", st);
  }
  out[n++] = 0;
  uint64_t t = ~(uint64_t)(NOW0 / 1000 + (uint64_t)i * 3600);
  for (int k = 7; k >= 0; k--) out[n++] = (uint8_t)(t >> (8 * k));
  return n;
}

static void world_open(world *w, uint64_t seed, size_t cache, bool varkeys) {
  memset(w, 0, sizeof *w);
  w->rng = seed;
  w->now = NOW0;
  w->varkeys = varkeys;
  w->tiny = cache != KV_BLOCK_CACHE_OFF && cache < ((size_t)1 << 20);
  w->env = kv_env_mem_new(w->now);
  w->db = tu_kv_open_mem(w->env, cache);
  kv_family_options fo[NFAM] = {
    {.name = "r", .max_versions = 1, .ttl_sec = TTL_SEC, .block_size = 2048},
    {.name = "k", .max_versions = 1, .block_size = 1024},
    {.name = "m", .max_versions = 2, .block_size = 512},
  };
  assert_int_equal(kv_create_table(w->db, "t", fo, NFAM), KV_OK);
  for (int f = 0; f < NFAM; f++)
    assert_int_equal(kv_family_id(w->db, "t", fo[f].name, &w->fid[f]), KV_OK);
  w->per_sta = (int)tu_scaled(600, 150);
}

static void world_close(world *w) {
  assert_int_equal(kv_close(w->db), KV_OK);
  kv_env_free(w->env);
}

static void put(world *w, kv_batch *b, int fam, const uint8_t *key, uint32_t klen, int q,
                int64_t ts) {
  uint8_t val[16];
  size_t vlen = fam == 1 ? 0 : q == 5 ? rnd(w, 12) : 8;
  for (size_t k = 0; k < vlen; k++) val[k] = (uint8_t)tu_rand(&w->rng);
  if (fam == 0 && q < 2) /* DOUBLEs of one decimal: their groups are written decimal-scaled */
    tu_enc_double((double)((int64_t)rnd(w, 20000) - 5000) / 10, val);
  const char *qual = fam == 1 ? "_" : QN[q];
  assert_int_equal(kv_batch_put(b, w->fid[fam], key, klen, qual, strlen(qual), ts, val, vlen),
                   KV_OK);
}

/* Write reading rows [from, to) of every station as commits write them; `old` makes a
** tenth of them old enough to expire once the clock moves on. */
static void write_rows(world *w, int from, int to, bool old) {
  kv_batch *b = kv_batch_new();
  for (int st = 0; st < NSTA; st++)
    for (int i = from; i < to; i++) {
      uint8_t key[32];
      uint32_t klen = make_key(w, st, i, key);
      int64_t ts = w->now - (int64_t)rnd(w, 600000);
      if (old && rnd(w, 10) == 0) ts = w->now - (TTL_SEC - 1200) * 1000ll;
      uint64_t kind = rnd(w, 100);
      if (kind >= 4) /* else only the marker: a row of NULL readings */
        for (int q = 0; q < NQ; q++)
          if (kind >= 20 || rnd(w, 3)) put(w, b, 0, key, klen, q, ts);
      if (kind < 2 || rnd(w, 6) == 0) { /* the sparse family */
        put(w, b, 2, key, klen, 0, ts);
        if (rnd(w, 2)) put(w, b, 2, key, klen, 5, ts);
      }
      if (kind != 3) put(w, b, 1, key, klen, 0, ts);
      if (b && rnd(w, 40) == 0) {
        assert_int_equal(kv_commit(w->db, b, NULL), KV_OK);
        kv_batch_clear(b);
      }
    }
  assert_int_equal(kv_commit(w->db, b, NULL), KV_OK);
  kv_batch_free(b);
}

/* A few changes over random rows: new versions, rewrites, every tombstone kind. */
static void write_changes(world *w, int n) {
  kv_batch *b = kv_batch_new();
  for (int k = 0; k < n; k++) {
    uint8_t key[32];
    int st = (int)rnd(w, NSTA), i = (int)rnd(w, (uint64_t)w->per_sta);
    uint32_t klen = make_key(w, st, i, key);
    int fam = rnd(w, 4) == 0 ? 2 : 0, q = (int)rnd(w, NQ);
    int64_t ts = w->now - (int64_t)rnd(w, 1000);
    switch (rnd(w, 5)) {
      case 0:
        assert_int_equal(kv_batch_delete(b, w->fid[fam], KV_DELETE_COLUMN, key, klen, QN[q],
                                         1, ts), KV_OK);
        break;
      case 1:
        assert_int_equal(kv_batch_delete(b, w->fid[rnd(w, 3)], KV_DELETE_FAMILY, key, klen,
                                         "", 0, ts), KV_OK);
        break;
      default:
        put(w, b, fam, key, klen, q, ts);
        put(w, b, 1, key, klen, 0, ts);
    }
  }
  assert_int_equal(kv_commit(w->db, b, NULL), KV_OK);
  kv_batch_free(b);
}

typedef struct query {
  uint32_t fids[NFAM];         /* families read, in the order asked */
  uint32_t nf;                 /* entries in fids */
  kv_qualifier_set qs[NFAM];   /* projections */
  uint32_t nqs;                /* entries in qs */
  const uint8_t *qp[NFAM][NQ]; /* projected qualifiers */
  uint32_t ql[NFAM][NQ];       /* their lengths */
  kv_range ranges[3];          /* key ranges */
  uint32_t nr;                 /* entries in ranges */
  uint8_t bounds[6][32];       /* bound bytes */
  uint64_t limit;              /* 0 = none */
  bool filter;                 /* keep rows whose key's last byte is even */
  bool vectors;                /* kv_scan_options.value_vectors */
  bool get;                    /* kv_get of bounds[0] */
  bool point;                  /* a range of one row key (get included) */
} query;

static bool row_filter(void *ctx, const kv_row *row) {
  (void)ctx;
  return row->key[row->key_len - 1] % 2 == 0;
}

/* Byte order of row keys, a prefix first. */
static int keycmp(const uint8_t *a, uint32_t alen, const uint8_t *b, uint32_t blen) {
  int c = memcmp(a, b, alen < blen ? alen : blen);
  return c ? c : alen < blen ? -1 : alen > blen;
}

static void random_query(world *w, query *q) {
  memset(q, 0, sizeof *q);
  int order[NFAM] = {0, 1, 2};
  for (int i = NFAM - 1; i > 0; i--) {
    int j = (int)rnd(w, (uint64_t)i + 1), t = order[i];
    order[i] = order[j];
    order[j] = t;
  }
  uint64_t shape = rnd(w, 10);
  if (shape < 5) { /* the latest-readings query: readings and the marker */
    q->nf = 2;
    order[0] = 0;
    order[1] = 1;
  } else if (shape == 5) { /* the marker alone */
    q->nf = 1;
    order[0] = 1;
  } else {
    q->nf = 1 + (uint32_t)rnd(w, NFAM);
  }
  for (uint32_t i = 0; i < q->nf; i++) {
    int f = order[i];
    q->fids[i] = w->fid[f];
    if (f == 1 || rnd(w, 4) == 0) continue; /* no projection */
    kv_qualifier_set *s = &q->qs[q->nqs++];
    s->family_id = w->fid[f];
    s->quals = q->qp[i];
    s->qual_lens = q->ql[i];
    bool all = rnd(w, 2) == 0;
    for (int c = 0; c < NQ; c++)
      if (all || rnd(w, 2)) {
        q->qp[i][s->n_quals] = (const uint8_t *)QN[c];
        q->ql[i][s->n_quals++] = 1;
      }
  }
  int st = (int)rnd(w, NSTA);
  uint64_t rk = rnd(w, 8);
  q->get = rk == 0;
  if (rk <= 1) { /* one row key */
    uint32_t n = make_key(w, st, (int)rnd(w, (uint64_t)w->per_sta), q->bounds[0]);
    q->ranges[0] = (kv_range){q->bounds[0], n, true, q->bounds[0], n, true};
    q->nr = 1;
    q->point = true;
  } else if (rk <= 4) { /* one station: [name 0x00, name 0x01) */
    uint32_t n = make_key(w, st, 0, q->bounds[0]) - 8;
    memcpy(q->bounds[1], q->bounds[0], n);
    q->bounds[1][n - 1] = 1;
    q->ranges[0] = (kv_range){q->bounds[0], n, true, q->bounds[1], n, false};
    q->nr = 1;
  } else if (rk <= 6) { /* up to three ranges between readings of increasing keys */
    int v[6];
    for (int i = 0; i < 6; i++) v[i] = (int)rnd(w, (uint64_t)(NSTA * w->per_sta));
    for (int i = 0; i < 6; i++)
      for (int j = i + 1; j < 6; j++)
        if (v[j] < v[i]) { int t = v[i]; v[i] = v[j]; v[j] = t; }
    q->nr = 1 + (uint32_t)rnd(w, 3);
    for (uint32_t i = 0; i < q->nr; i++) {
      uint32_t a = make_key(w, v[2 * i] / w->per_sta, v[2 * i] % w->per_sta, q->bounds[2 * i]);
      uint32_t b = make_key(w, v[2 * i + 1] / w->per_sta, v[2 * i + 1] % w->per_sta,
                            q->bounds[2 * i + 1]);
      q->ranges[i] = (kv_range){q->bounds[2 * i], a, rnd(w, 4) != 0, q->bounds[2 * i + 1], b,
                                false};
    }
    /* ranges must not overlap: keys of one station sort by time reversed, so the bounds
       in key order are not the readings' order; drop what would */
    for (uint32_t i = 0; i < q->nr; i++) {
      kv_range *r = &q->ranges[i];
      if (keycmp(r->start, r->start_len, r->end, r->end_len) >= 0 ||
          (i > 0 && keycmp(r->start, r->start_len, q->ranges[i - 1].end,
                           q->ranges[i - 1].end_len) < 0)) {
        q->nr = i;
        break;
      }
    }
  } /* else: everything */
  q->limit = rnd(w, 3) == 0 ? 1 + rnd(w, 120) : 0;
  q->filter = rnd(w, 6) == 0;
  q->vectors = rnd(w, 3) != 0;
}

static void render(sbuf *out, const kv_row *r, const kv_scan *s) {
  for (uint32_t i = 0; i < r->key_len; i++) sb_add(out, "%02x", r->key[i]);
  sb_add(out, ":");
  for (uint32_t i = 0; i < r->n_cells; i++) {
    const kv_cell_view *c = &r->cells[i];
    sb_add(out, "%s%u/%.*s@%lld=", i ? "," : "", c->family_id, (int)c->qual_len,
           (const char *)c->qual, (long long)c->ts);
    for (uint32_t k = 0; k < c->value_len; k++) sb_add(out, "%02x", c->value[k]);
  }
  uint32_t nv;
  const kv_value_vector *vv = kv_scan_row_vectors(s, &nv);
  for (uint32_t i = 0; i < nv; i++) {
    sb_add(out, " v%u:", vv[i].family_id);
    for (uint32_t k = 0; k < 64; k++) {
      if (!(vv[i].present >> k & 1)) continue;
      sb_add(out, "%u=", k);
      for (uint32_t b = 0; b < vv[i].value_lens[k]; b++) sb_add(out, "%02x", vv[i].values[k][b]);
      sb_add(out, ",");
    }
  }
  sb_add(out, ";\n");
}

/* The rows in the form the cell path gives them: views whatever the form, without
** timestamps (value vectors carry none), one "family/qualifier=value" per cell. */
static void render_plain(sbuf *out, const kv_row *r, const kv_scan *s, const query *q) {
  for (uint32_t i = 0; i < r->key_len; i++) sb_add(out, "%02x", r->key[i]);
  sb_add(out, ":");
  uint32_t nv;
  const kv_value_vector *vv = kv_scan_row_vectors(s, &nv);
  for (uint32_t f = 0; f < q->nf; f++) {
    for (uint32_t i = 0; i < r->n_cells; i++) {
      const kv_cell_view *c = &r->cells[i];
      if (c->family_id != q->fids[f]) continue;
      sb_add(out, "%u/%.*s=", c->family_id, (int)c->qual_len, (const char *)c->qual);
      for (uint32_t k = 0; k < c->value_len; k++) sb_add(out, "%02x", c->value[k]);
      sb_add(out, ",");
    }
    for (uint32_t i = 0; i < nv; i++) {
      if (vv[i].family_id != q->fids[f]) continue;
      const kv_qualifier_set *qs = NULL;
      for (uint32_t j = 0; j < q->nqs; j++)
        if (q->qs[j].family_id == q->fids[f]) qs = &q->qs[j];
      assert_non_null(qs);
      for (uint32_t k = 0; k < 64; k++) { /* projection order is qualifier order here */
        if (!(vv[i].present >> k & 1)) continue;
        sb_add(out, "%u/%.*s=", vv[i].family_id, (int)qs->qual_lens[k],
               (const char *)qs->quals[k]);
        for (uint32_t b = 0; b < vv[i].value_lens[k]; b++)
          sb_add(out, "%02x", vv[i].values[k][b]);
        sb_add(out, ",");
      }
    }
  }
  sb_add(out, ";\n");
}

/* Render every mode plain and without counters (run): for a tiny cache, where whether a
** row's block is still cached decides its form (value vector or views), not its values. */
static bool plain_form;

/* Run q: mode 0 = runs on, 1 = runs off, 2 = the cell path (fast rows off), rendered plain.
** Returns the rows handed out by runs. */
static uint64_t run(world *w, const query *q, int mode, sbuf *out) {
  out->len = 0;
  sb_add(out, "");
  kv_scan_set_row_runs(mode == 0);
  kv_scan_set_fast_rows(mode != 2);
  kv_scan_options so;
  memset(&so, 0, sizeof so);
  so.family_ids = q->fids;
  so.n_families = q->nf;
  so.qualifiers = q->nqs ? q->qs : NULL;
  so.n_qualifier_sets = q->nqs;
  so.ranges = q->nr ? q->ranges : NULL;
  so.n_ranges = q->nr;
  so.limit = q->limit;
  so.value_vectors = q->vectors;
  if (q->filter) so.filter = row_filter;
  uint64_t r0 = kv_scan_run_rows();
  kv_scan *s;
  kv_row r;
  if (q->get) {
    int rc = kv_get(w->db, &so, q->bounds[0], q->ranges[0].start_len, &s, &r);
    assert_true(rc == KV_OK || rc == KV_ERR_NOTFOUND);
    if (rc == KV_OK) {
      if (mode == 2 || plain_form) render_plain(out, &r, s, q);
      else render(out, &r, s);
    }
  } else {
    assert_int_equal(kv_scan_open(w->db, &so, &s), KV_OK);
    int rc;
    while ((rc = kv_scan_next(s, &r)) == KV_OK) {
      if (mode == 2 || plain_form) render_plain(out, &r, s, q);
      else render(out, &r, s);
    }
    assert_int_equal(rc, KV_ERR_NOTFOUND);
  }
  /* every counter (the cell path reads ahead: its counts differ; a single-row range asks
     a file's bloom filter only when its block is not cached, and what a tiny cache holds
     depends on the runs before) */
  if (mode != 2 && !plain_form && !(w->tiny && q->point)) {
    kv_scan_metrics m;
    kv_scan_get_metrics(s, &m);
    sb_add(out, "examined %llu filtered %llu returned %llu ranges %llu cells %llu\n",
           (unsigned long long)m.rows_examined, (unsigned long long)m.rows_filtered,
           (unsigned long long)m.rows_returned, (unsigned long long)m.ranges_sought,
           (unsigned long long)m.cells_examined);
    for (uint32_t i = 0; i < m.n_families; i++) {
      const kv_family_metrics *fm = &m.families[i];
      sb_add(out, "family %u: cells %llu blocks %llu files %llu", fm->family_id,
             (unsigned long long)fm->cells_examined, (unsigned long long)fm->blocks_read,
             (unsigned long long)fm->files_opened);
      if (!w->tiny) /* hits depend on what the run before left in a tiny cache */
        sb_add(out, " hits %llu bytes %llu", (unsigned long long)fm->blocks_cache_hit,
               (unsigned long long)fm->bytes_read);
      sb_add(out, "\n");
    }
  }
  kv_scan_close(s);
  kv_scan_set_row_runs(true);
  kv_scan_set_fast_rows(true);
  return kv_scan_run_rows() - r0;
}

/* The rows of a rendering without its counter lines and in the plain form: for the
** comparison with the cell path, the rendering of mode 0 is redone in mode 2's form. */
static void check_queries(world *w, uint64_t n, const char *what, uint64_t seed) {
  sbuf a = {0}, b = {0}, c = {0}, d = {0};
  for (uint64_t i = 0; i < n; i++) {
    query q;
    random_query(w, &q);
    sbuf warm = {0};
    run(w, &q, 1, &warm); /* the cache as both runs below find it */
    free(warm.p);
    uint64_t got = run(w, &q, 0, &a);
    uint64_t none = run(w, &q, 1, &b);
    assert_int_equal(none, 0);
    if (strcmp(a.p, b.p) != 0 && w->tiny) { /* the form may differ with the cache's state:
                                               the values may not */
      plain_form = true;
      run(w, &q, 0, &a);
      run(w, &q, 1, &b);
      plain_form = false;
    }
    if (strcmp(a.p, b.p) != 0) {
      fprintf(stderr, "%s: query %llu differs (seed %llu)\nruns:\n%s\npresent path:\n%s\n",
              what, (unsigned long long)i, (unsigned long long)seed, a.p, b.p);
      fail();
    }
    /* the rows against the cell path's (no counters: it reads ahead) */
    query qp = q;
    run(w, &qp, 2, &c);
    kv_scan_set_row_runs(true);
    {
      d.len = 0;
      sb_add(&d, "");
      kv_scan_options so;
      memset(&so, 0, sizeof so);
      so.family_ids = q.fids;
      so.n_families = q.nf;
      so.qualifiers = q.nqs ? q.qs : NULL;
      so.n_qualifier_sets = q.nqs;
      so.ranges = q.nr ? q.ranges : NULL;
      so.n_ranges = q.nr;
      so.limit = q.limit;
      so.value_vectors = q.vectors;
      if (q.filter) so.filter = row_filter;
      kv_scan *s;
      kv_row r;
      if (q.get) {
        int rc = kv_get(w->db, &so, q.bounds[0], q.ranges[0].start_len, &s, &r);
        if (rc == KV_OK) render_plain(&d, &r, s, &q);
      } else {
        assert_int_equal(kv_scan_open(w->db, &so, &s), KV_OK);
        while (kv_scan_next(s, &r) == KV_OK) render_plain(&d, &r, s, &q);
      }
      kv_scan_close(s);
    }
    if (strcmp(c.p, d.p) != 0) {
      fprintf(stderr, "%s: query %llu differs from the cell path (seed %llu)\n"
              "runs:\n%s\ncell path:\n%s\n", what, (unsigned long long)i,
              (unsigned long long)seed, d.p, c.p);
      fail();
    }
    w->run_rows += got;
    for (size_t k = 0; k < a.len; k++) w->rows += a.p[k] == ';';
  }
  free(a.p);
  free(b.p);
  free(c.p);
  free(d.p);
}

static void scenario(size_t cache, bool varkeys, const char *name) {
  uint64_t seed = tu_seed(name);
  world w;
  world_open(&w, seed, cache, varkeys);
  uint64_t nq = tu_scaled(120, 40);
  write_rows(&w, 0, w.per_sta, true);
  assert_int_equal(kv_flush(w.db, NULL), KV_OK);
  assert_int_equal(kv_compact(w.db, "t", true), KV_OK);
  check_queries(&w, nq, name, seed); /* one file per family */
  uint64_t share_rows = w.rows, share_runs = w.run_rows;
  write_changes(&w, w.per_sta / 20 + 1);
  check_queries(&w, nq / 2, name, seed); /* memstore cells over the file */
  assert_int_equal(kv_flush(w.db, NULL), KV_OK);
  write_changes(&w, w.per_sta / 10 + 1);
  assert_int_equal(kv_flush(w.db, NULL), KV_OK);
  check_queries(&w, nq / 2, name, seed); /* several files, versions, tombstones */
  assert_int_equal(kv_compact(w.db, "t", true), KV_OK);
  w.now += 1800 * 1000ll; /* the old tenth of the readings expires */
  kv_env_mem_set_time(w.env, w.now);
  check_queries(&w, nq / 2, name, seed);
  fprintf(stderr, "[%s] %llu of %llu rows by runs (%llu of %llu on one file per family)\n",
          name, (unsigned long long)w.run_rows, (unsigned long long)w.rows,
          (unsigned long long)share_runs, (unsigned long long)share_rows);
  /* a good share of the rows of the compacted data must have come by runs (a run starts
     after a row taken whole and ends at a block's end: many rows a block here) */
  assert_true(share_runs * 3 >= share_rows);
  assert_true(w.run_rows * 4 >= w.rows);
  world_close(&w);
}

static void test_runs_cached(void **state) {
  (void)state;
  scenario((size_t)8 << 20, false, "runs_cached");
}

static void test_runs_no_cache(void **state) {
  (void)state;
  scenario(KV_BLOCK_CACHE_OFF, false, "runs_no_cache");
}

static void test_runs_tiny_cache(void **state) {
  (void)state;
  scenario(8192, false, "runs_tiny_cache");
}

static void test_runs_varying_keys(void **state) {
  (void)state;
  scenario((size_t)8 << 20, true, "runs_varying_keys");
}

/* A scan closed in the middle of a run, and a run's row read after kv_close tore its scan
** down (kv.h: valid until the next kv_scan_next): nothing leaks or dangles (ASan). */
static void test_run_closed(void **state) {
  (void)state;
  uint64_t seed = tu_seed("run_closed");
  world w;
  world_open(&w, seed, (size_t)8 << 20, false);
  write_rows(&w, 0, w.per_sta, false);
  assert_int_equal(kv_flush(w.db, NULL), KV_OK);
  assert_int_equal(kv_compact(w.db, "t", true), KV_OK);
  const uint8_t *qp[NQ];
  uint32_t ql[NQ];
  for (int c = 0; c < NQ; c++) {
    qp[c] = (const uint8_t *)QN[c];
    ql[c] = 1;
  }
  kv_qualifier_set qs = {w.fid[0], qp, ql, NQ};
  kv_scan_options so;
  memset(&so, 0, sizeof so);
  so.family_ids = w.fid;
  so.n_families = 2;
  so.qualifiers = &qs;
  so.n_qualifier_sets = 1;
  so.value_vectors = true;
  for (int round = 0; round < 2; round++) {
    kv_scan *s;
    kv_row r;
    assert_int_equal(kv_scan_open(w.db, &so, &s), KV_OK);
    /* past the first rows (which the present path may take while a run's setup waits on
       rows whose families disagree) into a run */
    uint64_t r0 = kv_scan_run_rows(), stop = 40 + rnd(&w, 20);
    for (uint64_t i = 0; i < stop; i++) assert_int_equal(kv_scan_next(s, &r), KV_OK);
    if (round == 0) { /* closed mid-run */
      kv_scan_close(s);
      assert_true(kv_scan_run_rows() > r0);
      continue;
    }
    sbuf before = {0}, after = {0};
    sb_add(&before, "");
    render(&before, &r, s);
    assert_int_equal(kv_close(w.db), KV_OK);
    sb_add(&after, "");
    render(&after, &r, s);
    assert_string_equal(before.p, after.p);
    assert_int_equal(kv_scan_next(s, &r), KV_MISUSE);
    kv_scan_close(s);
    assert_true(kv_scan_run_rows() > r0);
    free(before.p);
    free(after.p);
  }
  kv_env_free(w.env);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_runs_cached),
    cmocka_unit_test(test_runs_no_cache),
    cmocka_unit_test(test_runs_tiny_cache),
    cmocka_unit_test(test_runs_varying_keys),
    cmocka_unit_test(test_run_closed),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
