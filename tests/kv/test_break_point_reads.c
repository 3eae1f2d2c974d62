/*
** tests/kv/test_break_point_reads.c: point reads (kv_get, and scans of one-row ranges: the
** block found once per file from the block cache or the bloom filter, kv_sf_iter_seek_row)
** against a range scan that holds the same single row but is not a point read ([key,
** key + 0x00)), run on the cell path. Many store files of one family overlap, rows live in
** some files and not others, are deleted (family and column tombstones) and written again,
** keys are absent, prefixes of present keys, or present keys plus a byte; families are
** read alone or together with a marker family as the existence family, with projections
** and older snapshots; between reads come writes, flushes, minor and major compactions and
** scans that push blocks out of a tiny cache, and the same keys are read again (a probe of
** the cache must not answer for a block that is gone or another file's). Cached, tiny and
** no block cache. Seeded (tu_seed; the seed is printed).
** Not here: the fast row path on scans (test_scan_rows.c, test_break_fast_rows.c).
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
#include "kv/sf/sf_rows.h"
#include "testutil.h"
#include "tu_kv.h"
#include "tu_sbuf.h"

#define NOW0 1700000000000ll
#define NQ 4

static const char *QN[NQ] = {"a", "b", "cc", "d"};

typedef struct world {
  kv_env *env;       /* in-memory file system */
  kv_db *db;         /* store */
  uint32_t fid[3];   /* a, b (VERSIONS 2), k (marker) */
  uint64_t rng;      /* PRNG */
  int nrows;         /* row numbers in use */
  int64_t ts;        /* next write timestamp */
} world;

static uint64_t rnd(world *w, uint64_t n) { return tu_below(&w->rng, n); }

static size_t row_key(int r, char *out) { return (size_t)sprintf(out, "row%04d", r * 7); }

static void world_open(world *w, uint64_t seed, size_t cache) {
  memset(w, 0, sizeof *w);
  w->rng = seed;
  w->ts = NOW0;
  w->env = kv_env_mem_new(NOW0);
  w->db = tu_kv_open_mem(w->env, cache);
  kv_family_options fo[3] = {{.name = "a", .max_versions = 1, .block_size = 256},
                             {.name = "b", .max_versions = 2, .block_size = 512},
                             {.name = "k", .max_versions = 1, .block_size = 256}};
  assert_int_equal(kv_create_table(w->db, "t", fo, 3), KV_OK);
  for (int f = 0; f < 3; f++)
    assert_int_equal(kv_family_id(w->db, "t", fo[f].name, &w->fid[f]), KV_OK);
  w->nrows = (int)tu_scaled(400, 150);
}

/* A batch of writes to a random slice of rows (so files cover different key ranges). */
static void write_slice(world *w) {
  kv_batch *b = kv_batch_new();
  assert_non_null(b);
  int lo = (int)rnd(w, (uint64_t)w->nrows), n = 1 + (int)rnd(w, 60);
  for (int i = 0; i < n; i++) {
    int r = (lo + (int)rnd(w, 80)) % w->nrows;
    char row[32];
    size_t rl = row_key(r, row);
    int64_t ts = w->ts++;
    uint64_t kind = rnd(w, 12);
    if (kind < 8) {
      for (int f = 0; f < 2; f++)
        for (int q = 0; q < NQ; q++)
          if (rnd(w, 3)) {
            char v[16];
            int vl = snprintf(v, sizeof v, "%d.%lld", r, (long long)(ts - NOW0));
            assert_int_equal(kv_batch_put(b, w->fid[f], row, rl, QN[q], strlen(QN[q]), ts, v,
                                          (size_t)vl), KV_OK);
          }
      assert_int_equal(kv_batch_put(b, w->fid[2], row, rl, "_", 1, ts, "", 0), KV_OK);
    } else if (kind < 10) {
      for (int f = 0; f < 3; f++)
        assert_int_equal(kv_batch_delete(b, w->fid[f], KV_DELETE_FAMILY, row, rl, "", 0, ts),
                         KV_OK);
    } else {
      int q = (int)rnd(w, NQ);
      assert_int_equal(kv_batch_delete(b, w->fid[rnd(w, 2)], KV_DELETE_COLUMN, row, rl, QN[q],
                                       strlen(QN[q]), ts), KV_OK);
    }
  }
  assert_int_equal(kv_commit(w->db, b, NULL), KV_OK);
  kv_batch_free(b);
}

static void render(sbuf *out, const kv_row *r, uint32_t skip_fid) {
  for (uint32_t i = 0; i < r->key_len; i++) sb_add(out, "%02x", r->key[i]);
  sb_add(out, ":");
  for (uint32_t i = 0; i < r->n_cells; i++) {
    const kv_cell_view *c = &r->cells[i];
    if (c->family_id == skip_fid) continue;
    sb_add(out, "%u/%.*s@%lld=%.*s,", c->family_id, (int)c->qual_len, (const char *)c->qual,
           (long long)c->ts, (int)c->value_len, (const char *)c->value);
  }
}

typedef struct pq {
  uint32_t fids[3];       /* families read */
  uint32_t nf;            /* count */
  uint32_t existence;     /* kv_scan_options.existence_family */
  kv_qualifier_set qs;    /* projection of fids[0] */
  const uint8_t *qp[NQ];  /* qualifiers */
  uint32_t ql[NQ];        /* lengths */
  bool proj;              /* qs used */
  int max_versions;       /* 0..2 */
  uint64_t snapshot;      /* 0 = latest */
  char key[40];           /* the row key read */
  size_t key_len;         /* its length */
} pq;

static void random_pq(world *w, pq *q, uint64_t snap) {
  memset(q, 0, sizeof *q);
  int order[3] = {0, 1, 2};
  for (int i = 2; i > 0; i--) {
    int j = (int)rnd(w, (uint64_t)i + 1), t = order[i];
    order[i] = order[j];
    order[j] = t;
  }
  q->nf = 1 + (uint32_t)rnd(w, 3);
  for (uint32_t i = 0; i < q->nf; i++) {
    q->fids[i] = w->fid[order[i]];
    if (order[i] == 2 && q->nf > 1 && rnd(w, 2)) q->existence = i + 1;
  }
  if (order[0] != 2 && rnd(w, 3) == 0) {
    q->proj = true;
    q->qs.family_id = q->fids[0];
    for (int i = 0; i < NQ; i++)
      if (rnd(w, 2)) {
        q->qp[q->qs.n_quals] = (const uint8_t *)QN[i];
        q->ql[q->qs.n_quals++] = (uint32_t)strlen(QN[i]);
      }
    q->qs.quals = q->qp;
    q->qs.qual_lens = q->ql;
    if (!q->qs.n_quals) q->proj = false;
  }
  q->max_versions = (int)rnd(w, 3);
  q->snapshot = rnd(w, 4) == 0 ? snap : 0;
  int r = (int)rnd(w, (uint64_t)w->nrows + 20);
  q->key_len = row_key(r, q->key);
  switch (rnd(w, 6)) {
  case 0: q->key[q->key_len++] = 0; break;                 /* a present key plus a byte */
  case 1: q->key_len -= 1 + rnd(w, 3); break;              /* a prefix */
  case 2: q->key[q->key_len - 1] = (char)(q->key[q->key_len - 1] + 1); break; /* between */
  default: break;
  }
}

static void fill(const pq *q, kv_scan_options *so) {
  memset(so, 0, sizeof *so);
  so->family_ids = q->fids;
  so->n_families = q->nf;
  so->qualifiers = q->proj ? &q->qs : NULL;
  so->n_qualifier_sets = q->proj ? 1 : 0;
  so->max_versions = q->max_versions;
  so->snapshot = q->snapshot;
}

/* The point read (kv_get, or a scan of [key, key]) as text; the existence family's cells
** are left out (a point read may skip them). */
static void point_read(world *w, const pq *q, bool use_get, sbuf *out) {
  out->len = 0;
  sb_add(out, "");
  kv_scan_options so;
  fill(q, &so);
  so.existence_family = q->existence;
  uint32_t skip = q->existence ? q->fids[q->existence - 1] : UINT32_MAX;
  kv_scan *s;
  kv_row r;
  if (use_get) {
    int rc = kv_get(w->db, &so, q->key, q->key_len, &s, &r);
    assert_true(rc == KV_OK || rc == KV_ERR_NOTFOUND);
    if (rc == KV_OK) render(out, &r, skip);
    kv_scan_close(s);
    return;
  }
  kv_range rg = {(const uint8_t *)q->key, q->key_len, true, (const uint8_t *)q->key, q->key_len,
                 true};
  so.ranges = &rg;
  so.n_ranges = 1;
  assert_int_equal(kv_scan_open(w->db, &so, &s), KV_OK);
  int rc;
  while ((rc = kv_scan_next(s, &r)) == KV_OK) render(out, &r, skip);
  assert_int_equal(rc, KV_ERR_NOTFOUND);
  kv_scan_close(s);
}

/* The reference: the range [key, key + 0x00) on the cell path, no existence family. */
static void reference(world *w, const pq *q, sbuf *out) {
  out->len = 0;
  sb_add(out, "");
  kv_scan_set_fast_rows(false);
  kv_scan_options so;
  fill(q, &so);
  uint32_t skip = q->existence ? q->fids[q->existence - 1] : UINT32_MAX;
  char end[48];
  memcpy(end, q->key, q->key_len);
  end[q->key_len] = 0;
  kv_range rg = {(const uint8_t *)q->key, q->key_len, true, (const uint8_t *)end,
                 q->key_len + 1, false};
  so.ranges = &rg;
  so.n_ranges = 1;
  kv_scan *s;
  kv_row r;
  assert_int_equal(kv_scan_open(w->db, &so, &s), KV_OK);
  int rc;
  while ((rc = kv_scan_next(s, &r)) == KV_OK) {
    /* a row whose only cells are the existence family's is still a row */
    render(out, &r, skip);
  }
  assert_int_equal(rc, KV_ERR_NOTFOUND);
  kv_scan_close(s);
  kv_scan_set_fast_rows(true);
}

static void thrash(world *w) {
  kv_scan_options so;
  memset(&so, 0, sizeof so);
  so.family_ids = w->fid;
  so.n_families = 3;
  kv_scan *s;
  kv_row r;
  assert_int_equal(kv_scan_open(w->db, &so, &s), KV_OK);
  while (kv_scan_next(s, &r) == KV_OK) {
  }
  kv_scan_close(s);
}

static void scenario(size_t cache, const char *name) {
  uint64_t seed = tu_seed(name);
  world w;
  world_open(&w, seed, cache);
  for (int i = 0; i < 40; i++) {
    write_slice(&w);
    if (rnd(&w, 3) == 0) assert_int_equal(kv_flush(w.db, NULL), KV_OK);
  }
  uint64_t snap;
  assert_int_equal(kv_snapshot_acquire(w.db, &snap), KV_OK);
  sbuf a = {0}, b = {0}, c = {0};
  int n = (int)tu_scaled(3000, 800), found = 0;
  for (int i = 0; i < n; i++) {
    pq q;
    random_pq(&w, &q, snap);
    reference(&w, &q, &c);
    for (int k = 0; k < 2; k++) { /* twice: the second read finds the blocks cached */
      point_read(&w, &q, true, &a);
      point_read(&w, &q, false, &b);
      if (strcmp(a.p, c.p) != 0 || strcmp(b.p, c.p) != 0) {
        fprintf(stderr, "%s: seed %llu read %d (%s): key '%.*s'%s, %u families (first %u), "
                "existence %u, projection %d, max_versions %d, snapshot %llu\n"
                "kv_get:      %s\none-row scan: %s\nreference:   %s\n", name,
                (unsigned long long)seed, i, k ? "again" : "first", (int)q.key_len, q.key,
                q.key[q.key_len - 1] == 0 ? "+00" : "", q.nf, q.fids[0], q.existence, q.proj,
                q.max_versions, (unsigned long long)q.snapshot, a.p, b.p, c.p);
        fail();
      }
    }
    found += c.len > 0 && strchr(c.p, ',') != NULL;
    switch (rnd(&w, 30)) {
    case 0: case 1: case 2: write_slice(&w); break;
    case 3: assert_int_equal(kv_flush(w.db, NULL), KV_OK); break;
    case 4: assert_int_equal(kv_compact(w.db, "t", rnd(&w, 2) != 0), KV_OK); break;
    case 5: thrash(&w); break;
    case 6:
      kv_snapshot_release(w.db, snap);
      assert_int_equal(kv_snapshot_acquire(w.db, &snap), KV_OK);
      break;
    default: break;
    }
  }
  kv_snapshot_release(w.db, snap);
  fprintf(stderr, "[%s] %d of %d reads found cells\n", name, found, n);
  assert_true(found * 5 >= n && found * 5 <= 4 * n); /* both hits and misses */
  free(a.p);
  free(b.p);
  free(c.p);
  assert_int_equal(kv_close(w.db), KV_OK);
  kv_env_free(w.env);
}

static void test_point_reads_cached(void **state) {
  (void)state;
  scenario(4u << 20, "point_reads_cached");
}

static void test_point_reads_tiny_cache(void **state) {
  (void)state;
  scenario(8u << 10, "point_reads_tiny_cache");
}

static void test_point_reads_no_cache(void **state) {
  (void)state;
  scenario(KV_BLOCK_CACHE_OFF, "point_reads_no_cache");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_point_reads_cached),
      cmocka_unit_test(test_point_reads_tiny_cache),
      cmocka_unit_test(test_point_reads_no_cache),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
