/*
** tests/kv/test_break_scan_reuse.c: a scan that takes over a closed scan's shell (kv/scan/scan.c
** db->scan_spare, kv/sf/sf_reuse.h) must read exactly what a scan built from nothing reads.
** Each round draws two random sets of scan options (families, qualifier projection, key
** ranges, time range, max versions, direction, limit, filter, an older pinned snapshot, an
** overlay batch, or a kv_get of one row) and compares the rows of options X read right after
** a scan of options Y was closed (the reused shell) with the rows of X read while another
** scan holds the spare (a fresh shell). The data: two families, VERSIONS=3, explicit
** timestamps, tombstones of every kind, rows in several store files and in the memstore.
** Seeded (tu_seed).
** Not here: concurrent readers (test_break_readers.c).
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

#define NK 300

typedef struct opts {
  kv_scan_options o;            /* the options */
  uint32_t fams[2];             /* family ids */
  kv_qualifier_set qs[2];       /* projection */
  const uint8_t *qp[2][2];      /* qualifier pointers */
  uint32_t ql[2][2];            /* their lengths */
  kv_range rg[3];               /* ranges */
  char rk[6][16];               /* range keys */
  int get_key;                  /* >= 0: kv_get of this row instead of a scan */
  int parity;                   /* filter: keep rows whose key number has this parity */
} opts;

static void key_of(int k, char *b) { snprintf(b, 16, "k%04d", k); }

static bool parity_filter(void *ctx, const kv_row *r) {
  const int *p = ctx;
  char b[8] = {0};
  memcpy(b, r->key + 1, r->key_len > 5 ? 4 : r->key_len - 1);
  return atoi(b) % 2 == *p;
}

static const uint8_t QA[1] = {'a'}, QB[1] = {'b'};

static void draw(uint64_t *rs, opts *x, const uint32_t *fid, uint64_t snap, const kv_batch *ov) {
  memset(x, 0, sizeof *x);
  x->get_key = tu_below(rs, 4) == 0 ? (int)tu_below(rs, NK) : -1;
  int f = (int)tu_below(rs, 3);
  x->o.family_ids = x->fams;
  if (f < 2) { x->fams[0] = fid[f]; x->o.n_families = 1; }
  else { x->fams[0] = fid[0]; x->fams[1] = fid[1]; x->o.n_families = 2; }
  if (tu_below(rs, 2)) { /* project one qualifier of the first family */
    x->qp[0][0] = tu_below(rs, 2) ? QA : QB;
    x->ql[0][0] = 1;
    x->qs[0].family_id = x->fams[0];
    x->qs[0].quals = x->qp[0];
    x->qs[0].qual_lens = x->ql[0];
    x->qs[0].n_quals = 1;
    x->o.qualifiers = x->qs;
    x->o.n_qualifier_sets = 1;
  }
  int nr = (int)tu_below(rs, 4);
  int at = 0;
  for (int i = 0; i < nr && at < NK; i++) {
    int lo = at + (int)tu_below(rs, 60), hi = lo + (int)tu_below(rs, 60);
    at = hi + 1;
    key_of(lo, x->rk[2 * i]);
    key_of(hi, x->rk[2 * i + 1]);
    kv_range *r = &x->rg[i];
    r->start = (const uint8_t *)x->rk[2 * i];
    r->start_len = 5;
    r->start_inclusive = tu_below(rs, 2);
    r->end = (const uint8_t *)x->rk[2 * i + 1];
    r->end_len = 5;
    r->end_inclusive = tu_below(rs, 2);
    x->o.n_ranges++;
  }
  if (x->o.n_ranges) x->o.ranges = x->rg;
  if (tu_below(rs, 4) == 0) {
    x->o.ts_min = 1000 + (int64_t)tu_below(rs, 20);
    x->o.ts_max = tu_below(rs, 2) ? x->o.ts_min + 1 + (int64_t)tu_below(rs, 20) : 0;
  }
  x->o.max_versions = (int)tu_below(rs, 4);
  x->o.reverse = tu_below(rs, 2);
  x->o.limit = tu_below(rs, 3) == 0 ? 1 + tu_below(rs, 30) : 0;
  if (tu_below(rs, 3) == 0) {
    x->parity = (int)tu_below(rs, 2);
    x->o.filter = parity_filter;
    x->o.filter_ctx = &x->parity;
  }
  if (tu_below(rs, 4) == 0) x->o.snapshot = snap;
  if (tu_below(rs, 4) == 0) x->o.overlay = ov;
}

/* Append the rows of a scan (or kv_get) of x to text *out. */
static int read_all(kv_db *db, const opts *x, char **out, size_t *len, size_t *cap) {
  kv_scan *s = NULL;
  kv_row r;
  int rc;
  char line[256];
  *len = 0;
  if (*cap == 0) { *cap = 4096; *out = malloc(*cap); }
  (*out)[0] = 0;
  if (x->get_key >= 0) {
    char k[16];
    key_of(x->get_key, k);
    rc = kv_get(db, &x->o, k, 5, &s, &r);
    if (rc != KV_OK && rc != KV_ERR_NOTFOUND) return rc;
    if (rc == KV_OK) rc = KV_OK;
  } else {
    rc = kv_scan_open(db, &x->o, &s);
    if (rc) return rc;
    rc = kv_scan_next(s, &r);
  }
  while (rc == KV_OK) {
    for (uint32_t i = 0; i < r.n_cells; i++) {
      const kv_cell_view *c = &r.cells[i];
      int n = snprintf(line, sizeof line, "%.*s %u %.*s %lld %.*s\n", (int)r.key_len, r.key,
                       c->family_id, (int)c->qual_len, c->qual, (long long)c->ts,
                       (int)c->value_len, c->value);
      while (*len + (size_t)n + 1 > *cap) { *cap *= 2; *out = realloc(*out, *cap); }
      memcpy(*out + *len, line, (size_t)n + 1);
      *len += (size_t)n;
    }
    if (x->get_key >= 0) break;
    rc = kv_scan_next(s, &r);
  }
  if (rc == KV_ERR_NOTFOUND) rc = KV_OK;
  kv_scan_close(s);
  return rc;
}

static void write_data(kv_db *db, const uint32_t *fid, uint64_t *rs, int n) {
  kv_batch *b = kv_batch_new();
  for (int i = 0; i < n; i++) {
    char k[16], v[32];
    key_of((int)tu_below(rs, NK), k);
    uint32_t f = fid[tu_below(rs, 2)];
    int64_t ts = 1000 + (int64_t)tu_below(rs, 40);
    const char *q = tu_below(rs, 2) ? "a" : "b";
    int r = (int)tu_below(rs, 12);
    if (r == 0) assert_int_equal(kv_batch_delete(b, f, KV_DELETE_FAMILY, k, 5, NULL, 0, ts), KV_OK);
    else if (r == 1) assert_int_equal(kv_batch_delete(b, f, KV_DELETE_COLUMN, k, 5, q, 1, ts), KV_OK);
    else if (r == 2) assert_int_equal(kv_batch_delete(b, f, KV_DELETE_VERSION, k, 5, q, 1, ts), KV_OK);
    else {
      int vl = snprintf(v, sizeof v, "v%llu", (unsigned long long)tu_below(rs, 100000));
      assert_int_equal(kv_batch_put(b, f, k, 5, q, 1, ts, v, (size_t)vl), KV_OK);
    }
    if (kv_batch_count(b) >= 50) {
      assert_int_equal(kv_commit(db, b, NULL), KV_OK);
      kv_batch_clear(b);
    }
  }
  assert_int_equal(kv_commit(db, b, NULL), KV_OK);
  kv_batch_free(b);
}

static void reused_equals_fresh(void **state) {
  (void)state;
  uint64_t seed = tu_seed("reused_equals_fresh"), rs = seed;
  kv_env *env = kv_env_mem_new(1700000000000LL);
  kv_options ko;
  kv_options_init(&ko);
  ko.env = env;
  ko.create_if_missing = true;
  ko.sync_mode = KV_SYNC_OFF;
  ko.block_cache_size = 128 << 10;
  kv_db *db = NULL;
  assert_int_equal(kv_open("/db", &ko, &db), KV_OK);
  kv_family_options fo[2] = {{.name = "f", .max_versions = 3, .block_size = 512},
                             {.name = "g", .max_versions = 3, .block_size = 512}};
  assert_int_equal(kv_create_table(db, "t", fo, 2), KV_OK);
  uint32_t fid[2];
  assert_int_equal(kv_family_id(db, "t", "f", &fid[0]), KV_OK);
  assert_int_equal(kv_family_id(db, "t", "g", &fid[1]), KV_OK);
  write_data(db, fid, &rs, 1500);
  assert_int_equal(kv_flush(db, NULL), KV_OK);
  uint64_t snap;
  assert_int_equal(kv_snapshot_acquire(db, &snap), KV_OK);
  write_data(db, fid, &rs, 1500);
  assert_int_equal(kv_flush(db, NULL), KV_OK);
  write_data(db, fid, &rs, 800); /* memstore */
  kv_batch *ov = kv_batch_new();
  for (int i = 0; i < 30; i++) {
    char k[16];
    key_of((int)tu_below(&rs, NK), k);
    if (i % 5 == 0) assert_int_equal(kv_batch_delete(ov, fid[0], KV_DELETE_FAMILY, k, 5, NULL, 0, KV_TS_NOW), KV_OK);
    else assert_int_equal(kv_batch_put(ov, fid[i % 2], k, 5, "a", 1, KV_TS_NOW, "ov", 2), KV_OK);
  }
  char *fresh = NULL, *reused = NULL;
  size_t fl = 0, fc = 0, rl = 0, rc2 = 0;
  int rounds = (int)tu_scaled(1500, 300);
  for (int r = 0; r < rounds; r++) {
    opts x, y;
    draw(&rs, &x, fid, snap, ov);
    draw(&rs, &y, fid, snap, ov);
    /* fresh: another scan holds the spare while x is read */
    kv_scan *hold = NULL;
    assert_int_equal(kv_scan_open(db, &y.o, &hold), KV_OK);
    assert_int_equal(read_all(db, &x, &fresh, &fl, &fc), KV_OK);
    kv_scan_close(hold);
    /* reused: y's shell is the spare when x opens (read y part way first) */
    kv_scan *s = NULL;
    assert_int_equal(kv_scan_open(db, &y.o, &s), KV_OK);
    kv_row row;
    for (int i = 0; i < (int)tu_below(&rs, 5); i++)
      if (kv_scan_next(s, &row) != KV_OK) break;
    kv_scan_close(s);
    assert_int_equal(read_all(db, &x, &reused, &rl, &rc2), KV_OK);
    if (fl != rl || strcmp(fresh, reused) != 0)
      fprintf(stderr, "seed %llu round %d: reused scan differs (get %d, fams %u, ranges %u, rev %d, "
              "limit %llu, filter %d, snap %d, overlay %d, ts %lld..%lld, versions %d)\n",
              (unsigned long long)seed, r, x.get_key, x.o.n_families, x.o.n_ranges, x.o.reverse,
              (unsigned long long)x.o.limit, x.o.filter != NULL, x.o.snapshot != 0,
              x.o.overlay != NULL, (long long)x.o.ts_min, (long long)x.o.ts_max, x.o.max_versions);
    assert_string_equal(fresh, reused);
    if (r % 300 == 299) {
      write_data(db, fid, &rs, 200);
      if (r % 600 == 599) assert_int_equal(kv_compact(db, NULL, false), KV_OK);
    }
  }
  free(fresh);
  free(reused);
  kv_batch_free(ov);
  kv_snapshot_release(db, snap);
  assert_int_equal(kv_close(db), KV_OK);
  kv_env_free(env);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(reused_equals_fresh),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
