/*
** tests/kv/test_sf_point_reads.c: point reads whose blocks are not cached decode only the
** rows asked for (kv/sf/sf_point.h, the store file iterator's point_load), and must answer as
** the whole-block path does. Four stores get the same writes in lockstep: no block cache
** (every point read decodes its rows alone), a tiny one (most blocks refused), a large one
** keeping blocks narrow (KV_CACHE_FORM_NARROW: decimal-scaled groups as their planes,
** widened by every reader, hot ones promoted), a large one keeping them wide (blocks
** decoded whole and cached). Rows are wide enough to span blocks (the last row of
** one block, the first of the next), some blocks hold one row, families keep several
** versions or expire cells by TTL (the clock moves), rows are deleted by every kind of
** tombstone and written again, several store files overlap and the memstore holds cells
** too. Each read (kv_get of present, absent, prefix and extended keys, with projections and
** older snapshots) must give the same row in all three stores and the same as a range scan
** of that one row key on the large store (not a point read: whole blocks). The no-cache
** store must show the point path ran (kv_sf_point_decodes). Short range scans (one or two
** ranges, forward and reverse, limits) on the same stores: the no-cache store decodes
** blocks only up to each range's end (kv_sf_iter_seek_range) and must give the rows the
** large store gives from whole blocks. Seeded (tu_seed; the seed is printed).
** The no-cache store's env maps its store files (kv_env_mem_set_map: blocks are read from
** the mapping, without a copy), the others pread them: the answers must not differ, and
** the point reads that decoded rows alone must have read their blocks in place.
** Not here: the decoder on raw blocks (test_sf_point.c).
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
#include "kv/sf/sf_int.h"
#include "kv/sf/sf_point.h"
#include "testutil.h"
#include "tu_sbuf.h"

#define NOW0 1700000000000ll
#define NQ 14
#define NS 4 /* stores: no cache, tiny cache, large cache of narrow blocks, large cache */

typedef struct store {
  kv_env *env;       /* in-memory file system */
  kv_db *db;         /* the store */
  uint32_t fid[3];   /* w (wide rows, VERSIONS 1), v (VERSIONS 3), t (TTL 20 s) */
} store;

typedef struct world {
  store s[NS];       /* the stores, in lockstep */
  uint64_t rng;      /* PRNG */
  int nrows;         /* row numbers in use */
  int64_t now;       /* the stores' clock */
  uint64_t snap[NS]; /* a snapshot of each store, taken at the same point */
} world;

static uint64_t rnd(world *w, uint64_t n) { return tu_below(&w->rng, n); }

static size_t row_key(int r, char *out) { return (size_t)sprintf(out, "r%05d", r * 5); }

static void qname(int q, char *out) { sprintf(out, "q%02d", q); }

/* Open the stores; `big`: the w and v families get blocks of a few dozen rows (range reads
** then find several ranges' rows in one block). */
static void world_open(world *w, uint64_t seed, bool big) {
  memset(w, 0, sizeof *w);
  w->rng = seed;
  w->now = NOW0;
  w->nrows = (int)tu_scaled(300, 120);
  const size_t cache[NS] = {KV_BLOCK_CACHE_OFF, 6u << 10, 64u << 20, 64u << 20};
  const int form[NS] = {KV_CACHE_FORM_AUTO, KV_CACHE_FORM_AUTO, KV_CACHE_FORM_NARROW,
                        KV_CACHE_FORM_WIDE};
  for (int i = 0; i < NS; i++) {
    store *s = &w->s[i];
    s->env = kv_env_mem_new(NOW0);
    if (i == 0) kv_env_mem_set_map(s->env, true);
    kv_options o;
    kv_options_init(&o);
    o.env = s->env;
    o.create_if_missing = true;
    o.compaction_trigger = 100;
    o.block_cache_size = cache[i];
    o.block_cache_form = form[i];
    assert_int_equal(kv_open("/db", &o, &s->db), KV_OK);
    kv_family_options fo[3] = {{.name = "w", .max_versions = 1, .block_size = big ? 4000 : 200},
                               {.name = "v", .max_versions = 3, .block_size = big ? 9000 : 700},
                               {.name = "t", .max_versions = 1, .ttl_sec = 20,
                                .block_size = 64}};
    assert_int_equal(kv_create_table(s->db, "t", fo, 3), KV_OK);
    for (int f = 0; f < 3; f++)
      assert_int_equal(kv_family_id(s->db, "t", fo[f].name, &s->fid[f]), KV_OK);
  }
}

/* One batch of writes to a slice of rows, the same in every store. */
static void write_slice(world *w) {
  kv_batch *b[NS];
  for (int i = 0; i < NS; i++) assert_non_null(b[i] = kv_batch_new());
  int lo = (int)rnd(w, (uint64_t)w->nrows), n = 1 + (int)rnd(w, 40);
  for (int k = 0; k < n; k++) {
    int r = (lo + (int)rnd(w, 60)) % w->nrows, f = (int)rnd(w, 3);
    char row[32], q[8], v[48];
    size_t rl = row_key(r, row);
    int64_t ts = w->now - (int64_t)rnd(w, 3) * 1000; /* some writes under older versions */
    uint64_t kind = rnd(w, 14);
    for (int i = 0; i < NS; i++) {
      uint32_t fid = w->s[i].fid[f];
      uint64_t st = w->rng; /* the same choices for every store */
      if (kind < 10) {
        for (int c = 0; c < NQ; c++) {
          if (tu_below(&st, 3) == 0) continue;
          qname(c, q);
          int vl = c % 3 == 0 ? 8 : snprintf(v, sizeof v, "%d.%d.%lld", r, c,
                                             (long long)(ts - NOW0));
          if (c % 3 == 0) memcpy(v, &ts, 8); /* fixed width */
          if (c % 6 == 3) /* a DOUBLE of two decimals: its group decimal-scaled */
            tu_enc_double((double)((r * 7 + c - 500) * 10 + (ts - NOW0) / 1000 % 10) / 100,
                          (uint8_t *)v);
          if (c == 4) vl = 0;                 /* an empty value */
          assert_int_equal(kv_batch_put(b[i], fid, row, rl, q, 3, ts, v, (size_t)vl), KV_OK);
        }
      } else if (kind < 11) {
        assert_int_equal(kv_batch_delete(b[i], fid, KV_DELETE_FAMILY, row, rl, "", 0, ts), KV_OK);
      } else if (kind < 13) {
        qname((int)tu_below(&st, NQ), q);
        assert_int_equal(kv_batch_delete(b[i], fid, KV_DELETE_COLUMN, row, rl, q, 3, ts), KV_OK);
      } else {
        qname((int)tu_below(&st, NQ), q);
        assert_int_equal(kv_batch_delete(b[i], fid, KV_DELETE_VERSION, row, rl, q, 3, ts),
                         KV_OK);
      }
      if (i == NS - 1) w->rng = st;
    }
  }
  for (int i = 0; i < NS; i++) {
    assert_int_equal(kv_commit(w->s[i].db, b[i], NULL), KV_OK);
    kv_batch_free(b[i]);
  }
}

static void render(sbuf *out, const kv_row *r) {
  for (uint32_t i = 0; i < r->key_len; i++) sb_add(out, "%02x", r->key[i]);
  sb_add(out, ":");
  for (uint32_t i = 0; i < r->n_cells; i++) {
    const kv_cell_view *c = &r->cells[i];
    sb_add(out, "%u/%.*s@%lld=", c->family_id, (int)c->qual_len, (const char *)c->qual,
           (long long)c->ts);
    for (uint32_t j = 0; j < c->value_len; j++) sb_add(out, "%02x", c->value[j]);
    sb_add(out, ",");
  }
}

typedef struct pq {
  int fam[3];             /* families read (indexes into store.fid) */
  uint32_t nf;            /* count */
  int proj;               /* projection of the first family: -1 none, else a mask seed */
  int max_versions;       /* 0..3 */
  bool old;               /* read at the world's snapshot */
  char key[40];           /* the row key read */
  size_t key_len;         /* its length */
} pq;

static void random_pq(world *w, pq *q) {
  memset(q, 0, sizeof *q);
  q->nf = 1 + (uint32_t)rnd(w, 3);
  int first = (int)rnd(w, 3);
  for (uint32_t i = 0; i < q->nf; i++) q->fam[i] = (first + (int)i) % 3;
  q->proj = rnd(w, 3) == 0 ? (int)rnd(w, 1 << 14) : -1;
  q->max_versions = (int)rnd(w, 4);
  q->old = rnd(w, 4) == 0;
  int r = (int)rnd(w, (uint64_t)w->nrows + 10);
  q->key_len = row_key(r, q->key);
  switch (rnd(w, 6)) {
  case 0: q->key[q->key_len++] = 0; break;             /* a present key plus a byte */
  case 1: q->key_len -= 1 + rnd(w, 2); break;          /* a prefix */
  case 2: q->key[q->key_len - 1]++; break;             /* between two rows */
  default: break;
  }
}

/* Read q from store i as text: kv_get (point), or a one-key range scan (whole blocks).
** *points gets the blocks it decoded in part (kv_sf_point_decodes). */
static void read_q(world *w, int i, const pq *q, bool point, sbuf *out, uint64_t *points) {
  uint64_t p0 = kv_sf_point_decodes();
  store *s = &w->s[i];
  out->len = 0;
  sb_add(out, "");
  uint32_t fids[3];
  for (uint32_t k = 0; k < q->nf; k++) fids[k] = s->fid[q->fam[k]];
  kv_scan_options so;
  memset(&so, 0, sizeof so);
  so.family_ids = fids;
  so.n_families = q->nf;
  so.max_versions = q->max_versions;
  so.snapshot = q->old ? w->snap[i] : 0;
  const uint8_t *qp[NQ];
  uint32_t ql[NQ];
  char qb[NQ][4];
  kv_qualifier_set qs = {fids[0], qp, ql, 0};
  if (q->proj >= 0) {
    for (int c = 0; c < NQ; c++)
      if (q->proj >> c & 1) {
        qname(c, qb[c]);
        qp[qs.n_quals] = (const uint8_t *)qb[c];
        ql[qs.n_quals++] = 3;
      }
    so.qualifiers = &qs;
    so.n_qualifier_sets = 1;
  }
  kv_scan *sc;
  kv_row r;
  if (point) {
    int rc = kv_get(s->db, &so, q->key, q->key_len, &sc, &r);
    assert_true(rc == KV_OK || rc == KV_ERR_NOTFOUND);
    if (rc == KV_OK) render(out, &r);
  } else {
    char end[48];
    memcpy(end, q->key, q->key_len);
    end[q->key_len] = 0;
    kv_range rg = {(const uint8_t *)q->key, q->key_len, true, (const uint8_t *)end,
                   q->key_len + 1, false};
    so.ranges = &rg;
    so.n_ranges = 1;
    assert_int_equal(kv_scan_open(s->db, &so, &sc), KV_OK);
    int rc;
    while ((rc = kv_scan_next(sc, &r)) == KV_OK) render(out, &r);
    assert_int_equal(rc, KV_ERR_NOTFOUND);
  }
  kv_scan_close(sc);
  *points = kv_sf_point_decodes() - p0;
}

static void each_store(world *w, int op) {
  for (int i = 0; i < NS; i++) {
    kv_db *db = w->s[i].db;
    if (op == 0) assert_int_equal(kv_flush(db, NULL), KV_OK);
    if (op == 1) assert_int_equal(kv_compact(db, "t", false), KV_OK);
    if (op == 2) {
      kv_snapshot_release(db, w->snap[i]);
      assert_int_equal(kv_snapshot_acquire(db, &w->snap[i]), KV_OK);
    }
    if (op == 3) kv_env_mem_set_time(w->s[i].env, w->now);
  }
}

static void test_point_reads_agree(void **state) {
  (void)state;
  uint64_t seed = tu_seed("sf_point_reads");
  world w;
  world_open(&w, seed, false);
  for (int i = 0; i < 60; i++) {
    write_slice(&w);
    if (rnd(&w, 4) == 0) each_store(&w, 0);
  }
  for (int i = 0; i < NS; i++) assert_int_equal(kv_snapshot_acquire(w.s[i].db, &w.snap[i]), KV_OK);
  sbuf a[NS] = {{0}}, ref = {0};
  int n = (int)tu_scaled(2500, 600), found = 0, fewer = 0;
  uint64_t mapped0 = kv_sf_mapped_reads();
  for (int k = 0; k < n; k++) {
    pq q;
    random_pq(&w, &q);
    uint64_t dec[NS], dref;
    read_q(&w, NS - 1, &q, false, &ref, &dref);
    assert_true(dref == 0); /* a range scan decodes whole blocks */
    for (int i = 0; i < NS; i++) read_q(&w, i, &q, true, &a[i], &dec[i]);
    for (int i = 0; i < NS; i++)
      if (strcmp(a[i].p, ref.p) != 0) {
        fprintf(stderr, "seed %llu read %d: key '%.*s' (%zu bytes), %u families from %d, "
                "projection %d, max_versions %d, %s snapshot\nstore %d kv_get: %s\n"
                "reference:    %s\n", (unsigned long long)seed, k, (int)q.key_len, q.key,
                q.key_len, q.nf, q.fam[0], q.proj, q.max_versions, q.old ? "old" : "latest",
                i, a[i].p, ref.p);
        fail();
      }
    found += strchr(ref.p, ',') != NULL;
    fewer += dec[0] > 0;
    switch (rnd(&w, 40)) {
    case 0: case 1: case 2: write_slice(&w); break;
    case 3: each_store(&w, 0); break;
    case 4: each_store(&w, 1); break;
    case 5: each_store(&w, 2); break;
    case 6: case 7: w.now += 1000 + (int64_t)rnd(&w, 4000); each_store(&w, 3); break;
    default: break;
    }
  }
  fprintf(stderr, "[sf_point_reads] %d of %d reads found cells; %d point reads without a cache "
          "decoded rows alone\n", found, n, fewer);
  assert_true(found * 5 >= n && found * 10 <= 9 * n); /* both rows and misses */
  assert_true(fewer * 4 >= found);                    /* the point path ran */
  /* only the no-cache store maps its files: each of its point reads that decoded rows alone
     read that block in place */
  assert_true(kv_sf_mapped_reads() - mapped0 >= (uint64_t)fewer);
  for (int i = 0; i < NS; i++) {
    free(a[i].p);
    kv_snapshot_release(w.s[i].db, w.snap[i]);
    assert_int_equal(kv_close(w.s[i].db), KV_OK);
    kv_env_free(w.s[i].env);
  }
  free(ref.p);
}

/* A key near row r for a range bound: the row's key, one byte more, one less, a prefix. */
static size_t bound_key(world *w, int r, char *out) {
  size_t n = row_key(r, out);
  switch (rnd(w, 6)) {
  case 0: out[n++] = 0; break;
  case 1: n -= 1 + rnd(w, 2); break;
  case 2: out[n - 1]++; break;
  default: break;
  }
  return n;
}

/* Scan q's families (q's projection, versions, snapshot) over nr ranges from store i as text,
** optionally in reverse or with a limit; *points gets the partial decodes it made. */
static void scan_q(world *w, int i, const pq *q, const kv_range *rg, uint32_t nr, bool rev,
                   uint64_t limit, sbuf *out, uint64_t *points) {
  uint64_t p0 = kv_sf_point_decodes();
  store *s = &w->s[i];
  out->len = 0;
  sb_add(out, "");
  uint32_t fids[3];
  for (uint32_t k = 0; k < q->nf; k++) fids[k] = s->fid[q->fam[k]];
  kv_scan_options so;
  memset(&so, 0, sizeof so);
  so.family_ids = fids;
  so.n_families = q->nf;
  so.max_versions = q->max_versions;
  so.snapshot = q->old ? w->snap[i] : 0;
  so.ranges = rg;
  so.n_ranges = nr;
  so.reverse = rev;
  so.limit = limit;
  const uint8_t *qp[NQ];
  uint32_t ql[NQ];
  char qb[NQ][4];
  kv_qualifier_set qs = {fids[0], qp, ql, 0};
  if (q->proj >= 0) {
    for (int c = 0; c < NQ; c++)
      if (q->proj >> c & 1) {
        qname(c, qb[c]);
        qp[qs.n_quals] = (const uint8_t *)qb[c];
        ql[qs.n_quals++] = 3;
      }
    so.qualifiers = &qs;
    so.n_qualifier_sets = 1;
  }
  kv_scan *sc;
  kv_row r;
  assert_int_equal(kv_scan_open(s->db, &so, &sc), KV_OK);
  int rc;
  while ((rc = kv_scan_next(sc, &r)) == KV_OK) render(out, &r);
  assert_int_equal(rc, KV_ERR_NOTFOUND);
  kv_scan_close(sc);
  *points = kv_sf_point_decodes() - p0;
}

/* Short range scans (kv_sf_iter_seek_range): a store without a block cache decodes an
** uncached block only from the range's first row up to the first row at or above its end;
** the same scans on the store whose cache takes every block (whole blocks) must give the
** same rows, cell for cell. Ranges end inside a block, at its end, past it (blocks of one
** row in the t family, rows spanning blocks), hold no row, or come two at a time (the second
** one often in the block of the first: the w and v families' blocks hold dozens of rows);
** deletes, versions, TTL, older snapshots, projections,
** limits and reverse scans as in the point reads. */
static void test_range_reads_agree(void **state) {
  (void)state;
  uint64_t seed = tu_seed("sf_range_reads");
  world w;
  world_open(&w, seed, true);
  for (int i = 0; i < 60; i++) {
    write_slice(&w);
    if (rnd(&w, 4) == 0) each_store(&w, 0);
  }
  for (int i = 0; i < NS; i++) assert_int_equal(kv_snapshot_acquire(w.s[i].db, &w.snap[i]), KV_OK);
  sbuf a[NS] = {{0}};
  int n = (int)tu_scaled(2000, 500), found = 0, fewer = 0;
  for (int k = 0; k < n; k++) {
    pq q;
    random_pq(&w, &q);
    char kb[4][40];
    kv_range rg[2];
    uint32_t nr = 1 + (uint32_t)(rnd(&w, 3) == 0);
    int r0 = (int)rnd(&w, (uint64_t)w.nrows + 5);
    for (uint32_t j = 0; j < nr; j++) {
      int r1 = r0 + (rnd(&w, 4) == 0 ? (int)rnd(&w, 80) : (int)rnd(&w, 8));
      /* a second range starts at a row key two rows or more past the first one's end
         (sorted, no overlap); only the last range may have no end */
      size_t l0 = j ? row_key(r0, kb[2 * j]) : bound_key(&w, r0, kb[2 * j]);
      size_t l1 = bound_key(&w, r1, kb[2 * j + 1]);
      bool open_end = j + 1 == nr && rnd(&w, 20) == 0;
      rg[j] = (kv_range){(const uint8_t *)kb[2 * j], l0, rnd(&w, 4) != 0,
                         open_end ? NULL : (const uint8_t *)kb[2 * j + 1], open_end ? 0 : l1,
                         rnd(&w, 4) == 0};
      r0 = r1 + 2 + (int)rnd(&w, 10);
    }
    bool rev = rnd(&w, 8) == 0;
    uint64_t limit = rnd(&w, 6) == 0 ? 1 + rnd(&w, 5) : 0, dec[NS];
    for (int i = 0; i < NS; i++) scan_q(&w, i, &q, rg, nr, rev, limit, &a[i], &dec[i]);
    assert_true(dec[NS - 1] == 0); /* the large cache takes every block: whole */
    for (int i = 0; i < NS - 1; i++)
      if (strcmp(a[i].p, a[NS - 1].p) != 0) {
        fprintf(stderr, "seed %llu scan %d: %u ranges from '%.*s', %u families from %d, "
                "projection %d, max_versions %d, %s snapshot, %s, limit %llu\nstore %d: %s\n"
                "reference: %s\n", (unsigned long long)seed, k, nr, (int)rg[0].start_len,
                kb[0], q.nf, q.fam[0], q.proj, q.max_versions, q.old ? "old" : "latest",
                rev ? "reverse" : "forward", (unsigned long long)limit, i, a[i].p,
                a[NS - 1].p);
        fail();
      }
    found += strchr(a[NS - 1].p, ',') != NULL;
    fewer += !rev && dec[0] > 0;
    switch (rnd(&w, 40)) {
    case 0: case 1: case 2: write_slice(&w); break;
    case 3: each_store(&w, 0); break;
    case 4: each_store(&w, 1); break;
    case 5: each_store(&w, 2); break;
    case 6: case 7: w.now += 1000 + (int64_t)rnd(&w, 4000); each_store(&w, 3); break;
    default: break;
    }
  }
  fprintf(stderr, "[sf_range_reads] %d of %d scans found cells; %d forward scans without a "
          "cache decoded blocks in part\n", found, n, fewer);
  assert_true(found * 2 >= n && found < n); /* both rows and empty ranges */
  assert_true(fewer * 3 >= found);          /* the range path ran */
  for (int i = 0; i < NS; i++) {
    free(a[i].p);
    kv_snapshot_release(w.s[i].db, w.snap[i]);
    assert_int_equal(kv_close(w.s[i].db), KV_OK);
    kv_env_free(w.s[i].env);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_point_reads_agree),
      cmocka_unit_test(test_range_reads_agree),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
