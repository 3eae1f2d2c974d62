/*
** tests/kv/test_scan_rows.c: the fast row path (kv/sf/sf_rows.h: a store file's row handed out
** whole, straight from its compact block) gives exactly the rows, cells, values and scan
** counters of the cell-by-cell path it short-cuts, on random data through kv.h on the
** in-memory env. Each query runs twice at the same snapshot and clock, with the fast path on
** and off (kv_scan_set_fast_rows), and the two renderings must be equal byte for byte.
**
** Data: three families (VERSIONS 1 with a TTL, VERSIONS 3, and a one-qualifier marker
** family like the catalog's key family) in tiny blocks, so rows span blocks; most rows are
** written the way commits write them (every column once at one timestamp), the rest get
** extra versions, rewrites at an equal timestamp, every tombstone kind and timestamps past
** the TTL; several store files and memstore cells over them, a pinned snapshot older than
** later writes, then one file per family after a major compaction with new memstore cells
** over it, then a clock moved forward so more cells expire. Keys of one length (the compact
** block's prefix + suffix form) in one world, of varying lengths in another.
** Queries: one to three families in any order, projections, several ranges and single-row
** ranges (skip scans, the existence family's deferred read), forward and reverse, limits,
** time ranges, max_versions, filters that read every value, overlays, snapshots, kv_get.
** With a block cache (packed blocks), without one (private blocks: fixed-width values
** gathered from their transposed bytes) and with a tiny one (blocks come and go).
** A row handed out whole stays readable after kv_close tore its scan down.
** Each scenario also checks that the fast path handed out a good share of the rows, so the
** comparison cannot pass by never taking it. Not tested here: the visibility rules
** themselves (tests/kv/test_model.c holds the reference model; it runs on the fast path).
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

#define NQ 6       /* qualifiers of the data families */
#define NFAM 3     /* families: r (TTL), v (VERSIONS 3), k (marker) */
#define NOW0 1700000000000ll
#define TTL_SEC 3600

static const char *QN[NQ] = {"a", "bb", "c", "dd", "e", "ff"};

typedef struct world {
  kv_env *env;         /* in-memory file system */
  kv_db *db;           /* store */
  uint32_t fid[NFAM];  /* family ids */
  uint64_t rng;        /* PRNG state */
  int nrows;           /* distinct row keys */
  bool varkeys;        /* row keys of varying length */
  bool nocache;        /* the store has no block cache */
  int64_t now;         /* the env's clock */
  uint64_t taken;      /* rows the fast path handed out, over the scenario */
  uint64_t rows;       /* rows handed out, over the scenario */
  uint64_t vec_rows;   /* family rows handed out as value vectors, over the scenario */
} world;

static uint64_t rnd(world *w, uint64_t n) { return tu_below(&w->rng, n); }

static int make_row(const world *w, int r, char *out) {
  if (!w->varkeys) return sprintf(out, "r%05d", r * 3);
  /* lengths 2..8: a shorter key may be a prefix of a longer one */
  return sprintf(out, "k%d%.*s", r % 97, r % 5, "xyzwv");
}

static void world_open(world *w, uint64_t seed, size_t cache, bool varkeys) {
  memset(w, 0, sizeof *w);
  w->rng = seed;
  w->now = NOW0;
  w->varkeys = varkeys;
  w->nocache = cache == KV_BLOCK_CACHE_OFF;
  w->env = kv_env_mem_new(w->now);
  w->db = tu_kv_open_mem(w->env, cache);
  kv_family_options fo[NFAM] = {
    {.name = "r", .max_versions = 1, .ttl_sec = TTL_SEC, .block_size = 300},
    {.name = "v", .max_versions = 3, .block_size = 400},
    {.name = "k", .max_versions = 1, .block_size = 200},
  };
  assert_int_equal(kv_create_table(w->db, "t", fo, NFAM), KV_OK);
  for (int f = 0; f < NFAM; f++)
    assert_int_equal(kv_family_id(w->db, "t", fo[f].name, &w->fid[f]), KV_OK);
  w->nrows = (int)tu_scaled(360, 80);
  if (varkeys && w->nrows > 97 * 5) w->nrows = 97 * 5;
}

static void world_close(world *w) {
  assert_int_equal(kv_close(w->db), KV_OK);
  kv_env_free(w->env);
}

static void put_value(world *w, kv_batch *b, uint32_t fid, const char *row, int q, int64_t ts) {
  uint8_t val[24];
  size_t vlen = q == 4 ? 0 : q % 2 ? 8 : rnd(w, sizeof val); /* e: always empty */
  for (size_t k = 0; k < vlen; k++) val[k] = (uint8_t)tu_rand(&w->rng);
  assert_int_equal(kv_batch_put(b, fid, row, strlen(row), QN[q], strlen(QN[q]), ts, val, vlen),
                   KV_OK);
}

/* A timestamp: mostly within the last ten minutes, sometimes past the TTL. */
static int64_t some_ts(world *w) {
  if (rnd(w, 10) == 0) return w->now - TTL_SEC * 1000ll - (int64_t)rnd(w, 7200000);
  return w->now - (int64_t)rnd(w, 600000);
}

/* Random writes into the memstore, flushed at random points into several store files. Rows
** of the first quarter get most of the tombstones, versions and rewrites, so the blocks of
** the rest are mostly simple. */
static void world_fill(world *w, uint64_t nops) {
  kv_batch *b = kv_batch_new();
  for (uint64_t i = 0; i < nops; i++) {
    char row[32];
    uint64_t kind = rnd(w, 100);
    int r = kind < 70 || rnd(w, 4) == 0 ? (int)rnd(w, (uint64_t)w->nrows)
                                        : (int)rnd(w, (uint64_t)(w->nrows / 4 + 1));
    make_row(w, r, row);
    int f = (int)rnd(w, 2), q = (int)rnd(w, NQ);
    int64_t ts = some_ts(w);
    if (kind < 70) { /* a row as a commit writes it: each column once, one timestamp */
      for (int fam = 0; fam < 2; fam++)
        for (int c = 0; c < NQ; c++)
          if (rnd(w, 6)) put_value(w, b, w->fid[fam], row, c, ts);
      assert_int_equal(kv_batch_put(b, w->fid[2], row, strlen(row), "_", 1, ts, "", 0), KV_OK);
    } else if (kind < 80) { /* another version of one column */
      put_value(w, b, w->fid[f], row, q, ts);
    } else if (kind < 84) {
      assert_int_equal(kv_batch_delete(b, w->fid[rnd(w, 3)], KV_DELETE_FAMILY, row,
                                       strlen(row), "", 0, ts), KV_OK);
    } else if (kind < 88) {
      assert_int_equal(kv_batch_delete(b, w->fid[f], KV_DELETE_COLUMN, row, strlen(row), QN[q],
                                       strlen(QN[q]), ts), KV_OK);
    } else if (kind < 92) {
      assert_int_equal(kv_batch_delete(b, w->fid[f], KV_DELETE_VERSION, row, strlen(row),
                                       QN[q], strlen(QN[q]), w->now - (int64_t)rnd(w, 4)),
                       KV_OK);
    } else { /* rewrites at a few shared timestamps: equal-timestamp versions */
      put_value(w, b, w->fid[f], row, q, w->now - (int64_t)rnd(w, 4));
    }
    if (rnd(w, 6) == 0 || i + 1 == nops) {
      assert_int_equal(kv_commit(w->db, b, NULL), KV_OK);
      kv_batch_clear(b);
    }
    if (rnd(w, nops / 4 + 1) == 0) assert_int_equal(kv_flush(w->db, NULL), KV_OK);
  }
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
  char bounds[6][32];          /* bound bytes */
  bool reverse;                /* descending rows */
  uint64_t limit;              /* 0 = none */
  int max_versions;            /* 0 = 1 */
  int64_t ts_min, ts_max;      /* time range, both 0 = all */
  uint64_t snapshot;           /* 0 = latest */
  int filter;                  /* 0 none, 1 value parity, 2 at least 3 cells */
  uint32_t existence;          /* kv_scan_options.existence_family */
  kv_batch *overlay;           /* uncommitted writes, or NULL */
  bool get;                    /* kv_get of bounds[0] instead of a scan */
} query;

static bool row_filter(void *ctx, const kv_row *row) {
  int mode = *(const int *)ctx;
  if (mode == 2) return row->n_cells >= 3;
  unsigned sum = 0; /* reads every value: the views must be valid inside the filter */
  for (uint32_t i = 0; i < row->n_cells; i++)
    for (uint32_t k = 0; k < row->cells[i].value_len; k++) sum += row->cells[i].value[k];
  return (sum + row->key[row->key_len - 1]) % 2 == 0;
}

static void random_query(world *w, query *q, uint64_t snap) {
  memset(q, 0, sizeof *q);
  q->nf = 1 + (uint32_t)rnd(w, NFAM);
  int order[NFAM] = {0, 1, 2};
  for (int i = NFAM - 1; i > 0; i--) {
    int j = (int)rnd(w, (uint64_t)i + 1), t = order[i];
    order[i] = order[j];
    order[j] = t;
  }
  for (uint32_t i = 0; i < q->nf; i++) {
    int f = order[i];
    q->fids[i] = w->fid[f];
    if (f == 2) {
      if (rnd(w, 2)) q->existence = i + 1;
      continue;
    }
    if (rnd(w, 3) == 0) continue; /* no projection */
    kv_qualifier_set *s = &q->qs[q->nqs++];
    s->family_id = w->fid[f];
    s->quals = q->qp[i];
    s->qual_lens = q->ql[i];
    for (int c = 0; c < NQ; c++)
      if (rnd(w, 2)) {
        q->qp[i][s->n_quals] = (const uint8_t *)QN[c];
        q->ql[i][s->n_quals++] = (uint32_t)strlen(QN[c]);
      }
  }
  q->get = rnd(w, 6) == 0;
  q->nr = q->get ? 1 : (uint32_t)rnd(w, 4);
  int v[6];
  for (int i = 0; i < 6; i++) v[i] = (int)rnd(w, (uint64_t)w->nrows);
  for (int i = 0; i < 6; i++) /* sorted bounds */
    for (int j = i + 1; j < 6; j++)
      if (v[j] < v[i]) { int t = v[i]; v[i] = v[j]; v[j] = t; }
  char keys[6][32];
  size_t lens[6];
  for (int i = 0; i < 6; i++) lens[i] = (size_t)make_row(w, v[i], keys[i]);
  /* keys sorted as bytes (varying-length keys do not sort like their numbers) */
  for (int i = 0; i < 6; i++)
    for (int j = i + 1; j < 6; j++)
      if (strcmp(keys[j], keys[i]) < 0) {
        char t[32];
        strcpy(t, keys[i]);
        strcpy(keys[i], keys[j]);
        strcpy(keys[j], t);
        size_t l = lens[i];
        lens[i] = lens[j];
        lens[j] = l;
      }
  for (uint32_t i = 0; i < q->nr; i++) {
    kv_range *r = &q->ranges[i];
    bool point = q->get || rnd(w, 3) == 0;
    strcpy(q->bounds[2 * i], keys[2 * i]);
    strcpy(q->bounds[2 * i + 1], point ? keys[2 * i] : keys[2 * i + 1]);
    r->start = (const uint8_t *)q->bounds[2 * i];
    r->start_len = strlen(q->bounds[2 * i]);
    r->end = (const uint8_t *)q->bounds[2 * i + 1];
    r->end_len = strlen(q->bounds[2 * i + 1]);
    r->start_inclusive = point || rnd(w, 4) != 0;
    r->end_inclusive = point || (i + 1 == q->nr && rnd(w, 2) == 0);
    if (!point && rnd(w, 8) == 0 && i == 0) { r->start = NULL; r->start_len = 0; }
    if (!point && rnd(w, 8) == 0 && i + 1 == q->nr) { r->end = NULL; r->end_len = 0; }
  }
  /* adjacent point ranges of one key would overlap: keep the first */
  for (uint32_t i = 1; i < q->nr; i++)
    if (q->ranges[i].start && q->ranges[i - 1].end &&
        strcmp(q->bounds[2 * i], q->bounds[2 * i - 1]) <= 0) {
      q->nr = i;
      break;
    }
  q->reverse = rnd(w, 3) == 0;
  q->limit = rnd(w, 3) == 0 ? 1 + rnd(w, 30) : 0;
  q->max_versions = (int)rnd(w, 4);
  if (rnd(w, 5) == 0) {
    q->ts_min = w->now - (int64_t)rnd(w, 900000);
    q->ts_max = rnd(w, 2) ? 0 : q->ts_min + (int64_t)rnd(w, 600000);
  }
  q->snapshot = rnd(w, 3) == 0 ? snap : 0;
  q->filter = (int)rnd(w, 5) < 2 ? (int)rnd(w, 3) : 0;
  if (rnd(w, 6) == 0) {
    q->overlay = kv_batch_new();
    int n = 1 + (int)rnd(w, 6);
    for (int i = 0; i < n; i++) {
      char row[32];
      make_row(w, rnd(w, 2) && q->nr ? v[0] : (int)rnd(w, (uint64_t)w->nrows), row);
      int f = (int)rnd(w, 2), c = (int)rnd(w, NQ);
      if (rnd(w, 4) == 0)
        assert_int_equal(kv_batch_delete(q->overlay, w->fid[f], KV_DELETE_COLUMN, row,
                                         strlen(row), QN[c], strlen(QN[c]), KV_TS_NOW), KV_OK);
      else
        put_value(w, q->overlay, w->fid[f], row, c, KV_TS_NOW);
    }
  }
}

static void render_row(sbuf *out, const kv_row *r) {
  for (uint32_t i = 0; i < r->key_len; i++) sb_add(out, "%02x", r->key[i]);
  sb_add(out, ":");
  for (uint32_t i = 0; i < r->n_cells; i++) {
    const kv_cell_view *c = &r->cells[i];
    sb_add(out, "%s%u/%.*s@%lld=", i ? "," : "", c->family_id, (int)c->qual_len,
           (const char *)c->qual, (long long)c->ts);
    for (uint32_t k = 0; k < c->value_len; k++) sb_add(out, "%02x", c->value[k]);
  }
  sb_add(out, ";\n");
}

/* render_row without timestamps (value vectors carry none), the cells of a family given as
** a value vector (kv_scan_row_vectors) rendered as its views would be: the projection's
** qualifiers are listed in byte order (random_query), so position order is cell order. */
static void render_canon(sbuf *out, const kv_row *r, const kv_scan *s, const query *q) {
  uint32_t nv;
  const kv_value_vector *vv = kv_scan_row_vectors(s, &nv);
  for (uint32_t i = 0; i < r->key_len; i++) sb_add(out, "%02x", r->key[i]);
  sb_add(out, ":");
  for (uint32_t f = 0; f < q->nf; f++) {
    const kv_value_vector *v = NULL;
    for (uint32_t i = 0; i < nv; i++)
      if (vv[i].family_id == q->fids[f]) v = &vv[i];
    if (!v) {
      for (uint32_t i = 0; i < r->n_cells; i++) {
        const kv_cell_view *c = &r->cells[i];
        if (c->family_id != q->fids[f]) continue;
        sb_add(out, "%u/%.*s=", c->family_id, (int)c->qual_len, (const char *)c->qual);
        for (uint32_t k = 0; k < c->value_len; k++) sb_add(out, "%02x", c->value[k]);
        sb_add(out, ",");
      }
      continue;
    }
    const kv_qualifier_set *qs = NULL;
    for (uint32_t i = 0; i < q->nqs; i++)
      if (q->qs[i].family_id == v->family_id) qs = &q->qs[i];
    assert_non_null(qs); /* vectors only for projected families */
    for (uint32_t k = 0; k < 64; k++) {
      if (!(v->present >> k & 1)) continue;
      assert_true(k < qs->n_quals);
      sb_add(out, "%u/%.*s=", v->family_id, (int)qs->qual_lens[k], (const char *)qs->quals[k]);
      for (uint32_t b = 0; b < v->value_lens[k]; b++) sb_add(out, "%02x", v->values[k][b]);
      sb_add(out, ",");
    }
  }
  sb_add(out, ";\n");
}

/* The row counters into out; the cells examined per family into cells[]. */
static void render_metrics(sbuf *out, const kv_scan *s, uint64_t *cells) {
  kv_scan_metrics m;
  kv_scan_get_metrics(s, &m);
  sb_add(out, "examined %llu filtered %llu returned %llu ranges %llu\n",
         (unsigned long long)m.rows_examined, (unsigned long long)m.rows_filtered,
         (unsigned long long)m.rows_returned, (unsigned long long)m.ranges_sought);
  for (uint32_t i = 0; i < m.n_families; i++) cells[i] = m.families[i].cells_examined;
}

/* Run q with the fast path on or off into out (cells[]: cells examined per family);
** returns the rows the fast path took. */
static uint64_t run_as(world *w, const query *q, bool fast, int vec, sbuf *out,
                       uint64_t *cells);

static uint64_t run(world *w, const query *q, bool fast, sbuf *out, uint64_t *cells) {
  return run_as(w, q, fast, 0, out, cells);
}

/* run, with vec: 0 = rows as views, rendered with timestamps; 1 = value vectors asked for
** but switched off (kv_scan_set_value_vectors), 2 = asked for and on, both rendered with
** render_canon. */
static uint64_t run_as(world *w, const query *q, bool fast, int vec, sbuf *out,
                       uint64_t *cells) {
  out->len = 0;
  sb_add(out, "");
  kv_scan_set_fast_rows(fast);
  kv_scan_set_value_vectors(vec == 2);
  kv_scan_options so;
  memset(&so, 0, sizeof so);
  so.family_ids = q->fids;
  so.n_families = q->nf;
  so.qualifiers = q->nqs ? q->qs : NULL;
  so.n_qualifier_sets = q->nqs;
  so.ranges = q->nr ? q->ranges : NULL;
  so.n_ranges = q->nr;
  so.reverse = q->reverse;
  so.limit = q->limit;
  so.max_versions = q->max_versions;
  so.ts_min = q->ts_min;
  so.ts_max = q->ts_max;
  so.snapshot = q->snapshot;
  so.existence_family = q->existence;
  so.overlay = q->overlay;
  so.value_vectors = vec != 0;
  if (q->filter) {
    so.filter = row_filter;
    so.filter_ctx = (void *)&q->filter;
  }
  kv_scan *s;
  kv_row r;
  uint64_t taken;
  if (q->get) {
    int rc = kv_get(w->db, &so, q->bounds[0], strlen(q->bounds[0]), &s, &r);
    assert_true(rc == KV_OK || rc == KV_ERR_NOTFOUND);
    if (rc == KV_OK) {
      if (vec) render_canon(out, &r, s, q);
      else render_row(out, &r);
    }
  } else {
    assert_int_equal(kv_scan_open(w->db, &so, &s), KV_OK);
    int rc;
    while ((rc = kv_scan_next(s, &r)) == KV_OK) {
      if (vec) render_canon(out, &r, s, q);
      else render_row(out, &r);
    }
    assert_int_equal(rc, KV_ERR_NOTFOUND);
  }
  render_metrics(out, s, cells);
  taken = kv_scan_rows_taken(s);
  kv_scan_close(s);
  kv_scan_set_fast_rows(true);
  kv_scan_set_value_vectors(true);
  return taken;
}

static void describe(const query *q) {
  fprintf(stderr, "  %s families", q->get ? "kv_get" : q->reverse ? "reverse scan" : "scan");
  for (uint32_t i = 0; i < q->nf; i++) fprintf(stderr, " %u", q->fids[i]);
  fprintf(stderr, ", %u projections, %u ranges:", q->nqs, q->nr);
  for (uint32_t i = 0; i < q->nr; i++)
    fprintf(stderr, " %c%s, %s%c", q->ranges[i].start_inclusive ? '[' : '(',
            q->ranges[i].start ? q->bounds[2 * i] : "-inf",
            q->ranges[i].end ? q->bounds[2 * i + 1] : "+inf",
            q->ranges[i].end_inclusive ? ']' : ')');
  fprintf(stderr, "\n  limit %llu max_versions %d time [%lld, %lld) snapshot %llu filter %d "
          "existence %u overlay %s\n", (unsigned long long)q->limit, q->max_versions,
          (long long)q->ts_min, (long long)q->ts_max, (unsigned long long)q->snapshot,
          q->filter, q->existence, q->overlay ? "yes" : "no");
}

static void check_queries(world *w, uint64_t snap, uint64_t n, const char *what,
                          uint64_t seed) {
  sbuf a = {0}, b = {0}, c = {0}, d = {0};
  for (uint64_t i = 0; i < n; i++) {
    query q;
    random_query(w, &q, snap);
    uint64_t ca[NFAM], cb[NFAM];
    uint64_t taken = run(w, &q, true, &a, ca);
    uint64_t none = run(w, &q, false, &b, cb);
    assert_int_equal(none, 0);
    /* The cells examined agree too, but for the cell path's look-ahead: after a row's last
       cell it moves on to the next cell kept (counting those stepped over, maybe reading
       the next block), where a row taken whole waits for the next kv_scan_next. A scan
       that ends on its limit, or a kv_get, never asks for it. And a single-row range
       seeks the files whose block is in the cache without asking their bloom filter, so
       with a cache the count depends on what the run before left there. */
    bool point = q.get;
    for (uint32_t r = 0; r < q.nr; r++)
      point |= q.ranges[r].start && q.ranges[r].end &&
               strcmp(q.bounds[2 * r], q.bounds[2 * r + 1]) == 0;
    bool stopped = q.get || q.limit, exact = !stopped && (w->nocache || !point);
    for (uint32_t f = 0; f < q.nf && (exact || !point); f++)
      if (exact ? ca[f] != cb[f] : ca[f] > cb[f]) {
        sb_add(&a, "family %u: %llu cells examined\n", q.fids[f], (unsigned long long)ca[f]);
        sb_add(&b, "family %u: %llu cells examined\n", q.fids[f], (unsigned long long)cb[f]);
      }
    if (strcmp(a.p, b.p) != 0) {
      fprintf(stderr, "%s: query %llu differs (seed %llu)\n", what, (unsigned long long)i,
              (unsigned long long)seed);
      describe(&q);
      fprintf(stderr, "fast path:\n%s\ncell path:\n%s\n", a.p, b.p);
      fail();
    }
    /* value vectors against the views of the same fast path: rows, values, counters and
       cells examined where the count is exact above (not for a read that stops early, a
       limit or a get, with a cache: how far into a block it decoded depends on what the
       run before left cached; seed 4241133723993 with the tiny cache, a LIMIT 2 over two
       ranges: 54 against 56) */
    uint64_t v0 = kv_scan_vector_rows();
    run_as(w, &q, true, 2, &c, ca);
    w->vec_rows += kv_scan_vector_rows() - v0;
    run_as(w, &q, true, 1, &d, cb);
    for (uint32_t f = 0; f < q.nf && exact; f++)
      if (ca[f] != cb[f]) {
        sb_add(&c, "family %u: %llu cells examined\n", q.fids[f], (unsigned long long)ca[f]);
        sb_add(&d, "family %u: %llu cells examined\n", q.fids[f], (unsigned long long)cb[f]);
      }
    if (strcmp(c.p, d.p) != 0) {
      fprintf(stderr, "%s: query %llu differs with value vectors (seed %llu)\n", what,
              (unsigned long long)i, (unsigned long long)seed);
      describe(&q);
      fprintf(stderr, "value vectors:\n%s\nviews:\n%s\n", c.p, d.p);
      fail();
    }
    w->taken += taken;
    for (size_t k = 0; k < a.len; k++) w->rows += a.p[k] == ';';
    kv_batch_free(q.overlay);
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
  uint64_t nops = tu_scaled(1500, 300), nq = tu_scaled(150, 40);
  world_fill(&w, nops);
  uint64_t snap = 0;
  assert_int_equal(kv_snapshot_acquire(w.db, &snap), KV_OK);
  w.now += 1000; /* later writes get later timestamps than the snapshot's */
  kv_env_mem_set_time(w.env, w.now);
  world_fill(&w, nops / 2);
  check_queries(&w, snap, nq, name, seed);
  kv_snapshot_release(w.db, snap);
  /* one store file per family, then memstore cells over it */
  assert_int_equal(kv_flush(w.db, NULL), KV_OK);
  assert_int_equal(kv_compact(w.db, "t", true), KV_OK);
  check_queries(&w, 0, nq, name, seed);
  assert_int_equal(kv_snapshot_acquire(w.db, &snap), KV_OK);
  w.now += 1000;
  kv_env_mem_set_time(w.env, w.now);
  world_fill(&w, nops / 10);
  check_queries(&w, snap, nq, name, seed);
  /* the clock moves on: cells of the TTL family expire in blocks read whole before */
  w.now += 1800 * 1000ll;
  kv_env_mem_set_time(w.env, w.now);
  check_queries(&w, snap, nq, name, seed);
  kv_snapshot_release(w.db, snap);
  fprintf(stderr, "[%s] %llu of %llu family rows handed out whole\n", name,
          (unsigned long long)w.taken, (unsigned long long)w.rows);
  /* a good share of the rows must have come the fast way (rows hold up to three family
     rows, so taken may pass rows) */
  assert_true(w.taken * 4 >= w.rows);
  fprintf(stderr, "[%s] %llu family rows as value vectors\n", name,
          (unsigned long long)w.vec_rows);
  /* the vector path ran too: 10% to 15% of the family rows over many seeds (only table
     scans without a filter ask for vectors), 4% is the floor that still proves it */
  assert_true(w.vec_rows * 25 >= w.rows);
  world_close(&w);
}

static void test_rows_cached(void **state) {
  (void)state;
  scenario((size_t)4 << 20, false, "rows_cached");
}

static void test_rows_no_cache(void **state) {
  (void)state;
  scenario(KV_BLOCK_CACHE_OFF, false, "rows_no_cache");
}

static void test_rows_tiny_cache(void **state) {
  (void)state;
  scenario(16384, false, "rows_tiny_cache");
}

static void test_rows_varying_keys(void **state) {
  (void)state;
  scenario((size_t)4 << 20, true, "rows_varying_keys");
}

static void test_rows_varying_keys_no_cache(void **state) {
  (void)state;
  scenario(KV_BLOCK_CACHE_OFF, true, "rows_varying_keys_no_cache");
}

/* A row handed out whole stays readable when kv_close tears its scan down before the next
** kv_scan_next (kv.h: its pointers are valid until then): the store's blocks are gone, the
** row's bytes are not (an ASan build checks every byte read). */
static void test_row_after_close(void **state) {
  (void)state;
  uint64_t seed = tu_seed("row_after_close");
  world w;
  world_open(&w, seed, (size_t)4 << 20, false);
  world_fill(&w, tu_scaled(600, 200));
  assert_int_equal(kv_flush(w.db, NULL), KV_OK);
  assert_int_equal(kv_compact(w.db, "t", true), KV_OK);
  kv_scan_options so;
  memset(&so, 0, sizeof so);
  so.family_ids = w.fid;
  so.n_families = 2;
  kv_scan *s;
  assert_int_equal(kv_scan_open(w.db, &so, &s), KV_OK);
  kv_row r;
  sbuf before = {0}, after = {0};
  int rc;
  while ((rc = kv_scan_next(s, &r)) == KV_OK && kv_scan_rows_taken(s) == 0) {}
  assert_int_equal(rc, KV_OK); /* a row came (partly) whole */
  sb_add(&before, "");
  render_row(&before, &r);
  assert_int_equal(kv_close(w.db), KV_OK);
  sb_add(&after, "");
  render_row(&after, &r);
  assert_string_equal(before.p, after.p);
  assert_int_equal(kv_scan_next(s, &r), KV_MISUSE);
  kv_scan_close(s);
  kv_env_free(w.env);
  free(before.p);
  free(after.p);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_rows_cached),
    cmocka_unit_test(test_rows_no_cache),
    cmocka_unit_test(test_rows_tiny_cache),
    cmocka_unit_test(test_rows_varying_keys),
    cmocka_unit_test(test_rows_varying_keys_no_cache),
    cmocka_unit_test(test_row_after_close),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
