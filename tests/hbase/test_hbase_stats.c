/*
** tests/hbase/test_hbase_stats.c: the HBase backend's statistics and its pool of scan
** connections (kv/backend/hbase/backend_hbase_stats.c, docs/HBASE.md "The planner's
** statistics", "Parallel scans on several connections") against a real HBase
** (ROWAN_HBASE_THRIFT=host:port, default 127.0.0.1:9090; CTest label `hbase`; fails, never
** skips, without a gateway). Each test works in its own namespace and drops it.
** - family_stats and estimate: a family of 6,000 rows counts 6,000 rows and the bytes
**   written; a range counts its rows within a guidepost's width; a family of 100 rows counts
**   a range's rows exactly, inclusive and exclusive bounds; a write makes them count it;
** - split_points of a table of one region: ascending row keys cutting it into chunks of
**   about equal rows;
** - four threads scanning the four chunks at once, on the pool's connections: every row
**   once, each chunk in key order;
** - kv_be_scan_prefixes through the backend: the prefixes of a range, a cap and *more;
** - a collection cut at its cap (ROWAN_HBASE_STATS_ROWS=1000, 4,000 rows under 8 text heads
**   of 500 rows each): a range past the part read is counted as the same range under the
**   heads read (a head's 100 rows: about 100; a whole head: about 500), not as the unread part;
** - ROWAN_HBASE_CONNECTIONS out of range refused with a message naming it.
** Not here: the planner's use of the figures (tests/sql on HBase: the hbase_slt_* tests).
*/
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "kv/backend.h"
#include "kv/backend/hbase/backend_hbase.h"
#include "kv/kv.h"

static char gateway[300] = "127.0.0.1:9090";

static void uri_of(char *buf, size_t n, const char *what) {
  static int k;
  snprintf(buf, n, "hbase://%s/ts_%s_%ld_%d", gateway, what, (long)getpid(), ++k);
}

static kv_backend *open_or_fail(const char *uri) {
  kv_backend *be = NULL;
  int rc = kv_backend_hbase_open(uri, &be);
  if (rc) fail_msg("cannot open %s (scripts/hbase-up.sh): %s", uri, kv_errmsg());
  return be;
}

static void key_of(int i, char *k) { snprintf(k, 8, "r%05d", i); }

/* Rows [from, to) into family fid: qualifier "v", a value of (i % 7) + 1 bytes; returns the
** bytes the statistics count for them (row, qualifier and value bytes + 16 a cell). */
static uint64_t write_rows(kv_backend *be, uint32_t fid, int from, int to) {
  uint64_t bytes = 0;
  kv_batch *b = kv_batch_new();
  for (int i = from; i < to; i++) {
    char k[8];
    key_of(i, k);
    uint32_t vl = (uint32_t)(i % 7) + 1;
    assert_int_equal(kv_batch_put(b, fid, k, 6, "v", 1, KV_TS_NOW, "abcdefg", vl), KV_OK);
    bytes += 6 + 1 + vl + 16;
    if (kv_batch_count(b) == 1000 || i + 1 == to) {
      assert_int_equal(kv_be_write(be, b, NULL), KV_OK);
      kv_batch_free(b);
      b = kv_batch_new();
    }
  }
  kv_batch_free(b);
  return bytes;
}

static uint64_t est(kv_backend *be, uint32_t fid, int lo, bool lo_inc, int hi, bool hi_inc) {
  char a[8], z[8];
  key_of(lo, a);
  key_of(hi, z);
  kv_range r = {(const uint8_t *)a, 6, lo_inc, (const uint8_t *)z, 6, hi_inc};
  uint64_t rows = 0, bytes = 0;
  assert_int_equal(kv_be_estimate(be, fid, &r, NULL, &rows, &bytes), KV_OK);
  return rows;
}

typedef struct cuts {
  int n;
  char k[8][16];
} cuts;

static void add_cut(void *ctx, const uint8_t *key, uint32_t len) {
  cuts *c = ctx;
  assert_true(c->n < 8 && len == 6);
  memcpy(c->k[c->n], key, len);
  c->k[c->n++][len] = 0;
}

typedef struct chunk {
  kv_backend *be;
  uint32_t fid;
  const char *lo, *hi; /* NULL: open */
  int rows, bad;
} chunk;

static void *scan_chunk(void *arg) {
  chunk *c = arg;
  kv_range r = {(const uint8_t *)c->lo, c->lo ? 6 : 0, true, (const uint8_t *)c->hi, c->hi ? 6 : 0, false};
  kv_scan_options o;
  memset(&o, 0, sizeof o);
  o.family_ids = &c->fid;
  o.n_families = 1;
  o.ranges = &r;
  o.n_ranges = 1;
  kv_backend_scan *s = NULL;
  if (kv_be_scan_open(c->be, &o, NULL, &s) != KV_OK) {
    c->bad++;
    return NULL;
  }
  kv_row row;
  char prev[8] = "";
  int rc;
  while ((rc = kv_be_scan_next(c->be, s, &row)) == KV_OK) {
    if (row.key_len != 6 || memcmp(row.key, prev, 6) <= 0) c->bad++;
    if (c->lo && memcmp(row.key, c->lo, 6) < 0) c->bad++;
    if (c->hi && memcmp(row.key, c->hi, 6) >= 0) c->bad++;
    memcpy(prev, row.key, 6);
    c->rows++;
  }
  if (rc != KV_ERR_NOTFOUND) c->bad++;
  kv_be_scan_close(c->be, s);
  return NULL;
}

static uint32_t prefix4(void *ctx, const uint8_t *key, uint32_t len) {
  (void)ctx;
  (void)key;
  return len < 4 ? len : 4;
}

typedef struct pfx {
  int n;
  char p[128][8];
} pfx;

static void add_pfx(void *ctx, const uint8_t *p, uint32_t len) {
  pfx *x = ctx;
  if (x->n < 128 && len < 8) {
    memcpy(x->p[x->n], p, len);
    x->p[x->n++][len] = 0;
  }
}

static void test_stats_and_pool(void **state) {
  (void)state;
  char uri[400];
  uri_of(uri, sizeof uri, "st");
  kv_backend *be = open_or_fail(uri);
  kv_family_options fo[2] = {{"_k", 1, 0, 0, 0}, {"0", 1, 0, 0, 0}};
  assert_int_equal(kv_be_create_table(be, "$t1.BIG", fo, 2, NULL, NULL, 0), KV_OK);
  assert_int_equal(kv_be_create_table(be, "$t2.SMALL", fo, 2, NULL, NULL, 0), KV_OK);
  uint32_t fid = 0, sid = 0;
  assert_int_equal(kv_be_family_id(be, "$t1.BIG", "0", &fid), KV_OK);
  assert_int_equal(kv_be_family_id(be, "$t2.SMALL", "0", &sid), KV_OK);
  uint64_t bytes = write_rows(be, fid, 0, 6000);
  write_rows(be, sid, 0, 100);
  /* totals */
  kv_family_stats fs;
  assert_int_equal(kv_be_family_stats(be, fid, &fs), KV_OK);
  assert_int_equal(fs.rows, 6000);
  assert_int_equal(fs.store_file_bytes, bytes);
  uint64_t rows = 0, b = 0;
  assert_int_equal(kv_be_estimate(be, fid, NULL, NULL, &rows, &b), KV_OK);
  assert_int_equal(rows, 6000);
  assert_int_equal(b, bytes);
  /* a range of 1,000 rows, past the exact guideposts (4,096): within a guidepost's width */
  rows = est(be, fid, 1000, true, 1999, true);
  if (rows < 998 || rows > 1002) fail_msg("range of 1000 rows estimated %llu", (unsigned long long)rows);
  assert_int_equal(est(be, fid, 7000, true, 8000, true), 0);
  /* a small family counts exactly */
  assert_int_equal(est(be, sid, 10, true, 19, true), 10);
  assert_int_equal(est(be, sid, 10, false, 19, false), 8);
  assert_int_equal(est(be, sid, 10, true, 10, true), 1);
  /* a write through the backend is counted at the next estimate */
  write_rows(be, fid, 6000, 6010);
  assert_int_equal(kv_be_family_stats(be, fid, &fs), KV_OK);
  assert_int_equal(fs.rows, 6010);
  write_rows(be, sid, 100, 103);
  assert_int_equal(est(be, sid, 95, true, 200, true), 8);
  /* one region: cut at guideposts into about equal chunks */
  cuts c = {0};
  assert_int_equal(kv_be_split_points(be, fid, 4, add_cut, &c), KV_OK);
  assert_int_equal(c.n, 3);
  for (int i = 0; i < c.n; i++) {
    int at = atoi(c.k[i] + 1);
    int want = (i + 1) * 6010 / 4;
    if (at < want - 60 || at > want + 60) fail_msg("cut %d at %s, want near r%05d", i, c.k[i], want);
    if (i) assert_true(strcmp(c.k[i - 1], c.k[i]) < 0);
  }
  /* four chunks read at once, on the pool's connections */
  chunk ch[4];
  pthread_t th[4];
  for (int i = 0; i < 4; i++) {
    ch[i] = (chunk){be, fid, i ? c.k[i - 1] : NULL, i < 3 ? c.k[i] : NULL, 0, 0};
    assert_int_equal(pthread_create(&th[i], NULL, scan_chunk, &ch[i]), 0);
  }
  int total = 0;
  for (int i = 0; i < 4; i++) {
    pthread_join(th[i], NULL);
    assert_int_equal(ch[i].bad, 0);
    total += ch[i].rows;
  }
  assert_int_equal(total, 6010);
  /* prefixes through the backend (one small scan each) */
  pfx p = {0};
  uint32_t n = 0;
  bool more = true;
  char a[8], z[8];
  key_of(1000, a);
  key_of(1999, z);
  kv_range r = {(const uint8_t *)a, 6, true, (const uint8_t *)z, 6, true};
  assert_int_equal(kv_be_scan_prefixes(be, fid, prefix4, NULL, &r, 1, 100, add_pfx, &p, &n, &more),
                   KV_OK);
  assert_int_equal(n, 10);
  assert_false(more);
  assert_string_equal(p.p[0], "r010");
  assert_string_equal(p.p[9], "r019");
  memset(&p, 0, sizeof p);
  assert_int_equal(kv_be_scan_prefixes(be, fid, prefix4, NULL, NULL, 0, 5, add_pfx, &p, &n, &more),
                   KV_OK);
  assert_int_equal(n, 5);
  assert_true(more);
  assert_string_equal(p.p[4], "r004");
  kv_backend_hbase_close(be);
  assert_int_equal(kv_backend_hbase_drop_namespace(uri), KV_OK);
}

/* Key of row i of head h: the head's text (h + 1 letters), its 0 terminator, i big-endian. */
static uint32_t head_key(int h, int i, uint8_t *k) {
  uint32_t n = 0;
  for (int j = 0; j <= h; j++) k[n++] = (uint8_t)('a' + h);
  k[n++] = 0;
  for (int s = 24; s >= 0; s -= 8) k[n++] = (uint8_t)(i >> s);
  return n;
}

static uint64_t est_head(kv_backend *be, uint32_t fid, int h, int lo, int hi) {
  uint8_t a[16], z[16];
  uint32_t al = head_key(h, lo, a), zl = head_key(h, hi, z);
  kv_range r = {a, al, true, z, zl, true};
  uint64_t rows = 0, bytes = 0;
  assert_int_equal(kv_be_estimate(be, fid, &r, NULL, &rows, &bytes), KV_OK);
  return rows;
}

static void test_partial_collection(void **state) {
  (void)state;
  char uri[400];
  uri_of(uri, sizeof uri, "part");
  setenv("ROWAN_HBASE_STATS_ROWS", "1000", 1);
  kv_backend *be = open_or_fail(uri);
  kv_family_options fo[1] = {{"0", 1, 0, 0, 0}};
  assert_int_equal(kv_be_create_table(be, "$t1.HEADS", fo, 1, NULL, NULL, 0), KV_OK);
  uint32_t fid = 0;
  assert_int_equal(kv_be_family_id(be, "$t1.HEADS", "0", &fid), KV_OK);
  kv_batch *b = kv_batch_new();
  for (int h = 0; h < 8; h++)
    for (int i = 0; i < 500; i++) {
      uint8_t k[16];
      uint32_t kl = head_key(h, i, k);
      assert_int_equal(kv_batch_put(b, fid, k, kl, "v", 1, KV_TS_NOW, "x", 1), KV_OK);
    }
  assert_int_equal(kv_be_write(be, b, NULL), KV_OK);
  kv_batch_free(b);
  /* inside the part read (heads 0 and 1): exact */
  assert_int_equal(est_head(be, fid, 0, 100, 199), 100);
  /* past it: the same range under the heads read */
  for (int h = 3; h < 8; h += 2) {
    uint64_t r = est_head(be, fid, h, 100, 199);
    if (r < 90 || r > 110) fail_msg("head %d's 100 rows estimated %llu", h, (unsigned long long)r);
    r = est_head(be, fid, h, 0, 499);
    if (r < 450 || r > 550) fail_msg("head %d's 500 rows estimated %llu", h, (unsigned long long)r);
  }
  unsetenv("ROWAN_HBASE_STATS_ROWS");
  kv_backend_hbase_close(be);
  assert_int_equal(kv_backend_hbase_drop_namespace(uri), KV_OK);
}

static void test_bad_pool_size(void **state) {
  (void)state;
  char uri[400];
  uri_of(uri, sizeof uri, "pool");
  kv_backend *be = NULL;
  const char *bad[3] = {"0", "17", "four"};
  for (int i = 0; i < 3; i++) {
    setenv("ROWAN_HBASE_CONNECTIONS", bad[i], 1);
    assert_int_equal(kv_backend_hbase_open(uri, &be), KV_ERR_INVALID);
    assert_non_null(strstr(kv_errmsg(), "ROWAN_HBASE_CONNECTIONS"));
    assert_non_null(strstr(kv_errmsg(), bad[i]));
  }
  setenv("ROWAN_HBASE_CONNECTIONS", "1", 1);
  be = open_or_fail(uri);
  kv_backend_hbase_close(be);
  unsetenv("ROWAN_HBASE_CONNECTIONS");
  assert_int_equal(kv_backend_hbase_drop_namespace(uri), KV_OK);
}

int main(void) {
  const char *e = getenv("ROWAN_HBASE_THRIFT");
  if (e && *e) snprintf(gateway, sizeof gateway, "%s", e);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_stats_and_pool),
      cmocka_unit_test(test_partial_collection),
      cmocka_unit_test(test_bad_pool_size),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
