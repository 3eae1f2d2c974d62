/*
** tests/kv/test_scan_skip.c: the skip scan by prefix (kv.h kv_skip_prefix, kv/scan/scan_skip.c)
** against a model: the same scan done the plain way. On random data (a few prefixes, one
** of them all 0xFF so it has no end, row keys of varying length, two families, puts and
** tombstones, rows in the memstore, in several store files and after compaction), every
** query opens a skip scan with random suffix ranges (inclusive or not, open at either
** end, empty ones) and a plain full scan at the same snapshot, and the rows of the plain
** scan whose suffix falls in a suffix range (checked here by byte comparison) must be
** exactly the skip scan's, cells included. Snapshots acquired mid-way are read again after
** more writes and a compaction. Also: a prefix written after kv_scan_open is not seen and
** one written before it is (the discovery is inside the scan, at its snapshot), a
** transaction's overlay brings its own new prefixes, kv_scan_prefixes counts and caps
** (inside ranges too), a reverse skip scan is refused, a skip scan inside outer ranges
** (kv_scan_options.ranges, random ones over whole keys) reads exactly the plain scan's rows
** of those ranges whose suffix matches, and the metrics count one prefix
** sought per prefix with cells (a prefix whose only cells are newer than the snapshot is
** sought, and reads nothing), and with an existence family the probe for the next prefix
** reads no block of the other families (test_existence_probe). Queries with a pushed filter
** and with rows_per_prefix (the first rows of each prefix) are checked the same way.
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

#define NPFX 6

/* Prefixes: a name and its 0x00 terminator, or 0xFF alone (a prefix with no end). */
static const char *const PFX[NPFX] = {"a", "bb", "c\xff", "dd", "e", "\xff"};

/* The prefix of a key: 1 when it starts with 0xFF, else up to its first 0x00 included. */
static uint32_t plen(void *ctx, const uint8_t *k, uint32_t n) {
  (void)ctx;
  if (n && k[0] == 0xFF) return 1;
  for (uint32_t i = 0; i < n; i++)
    if (k[i] == 0) return i + 1;
  return 0;
}

typedef struct world {
  kv_env *env;
  kv_db *db;
  uint32_t fid[2];
  uint64_t rng;
} world;

static uint64_t rnd(world *w, uint64_t n) { return tu_below(&w->rng, n); }

static uint32_t make_key(world *w, uint8_t *out) {
  int p = (int)rnd(w, NPFX);
  uint32_t n = 0;
  if (p == NPFX - 1) out[n++] = 0xFF;
  else {
    n = (uint32_t)strlen(PFX[p]);
    memcpy(out, PFX[p], n);
    out[n++] = 0;
  }
  uint32_t sl = 1 + (uint32_t)rnd(w, 2); /* suffixes of 1 or 2 bytes */
  for (uint32_t i = 0; i < sl; i++) out[n++] = (uint8_t)(rnd(w, 4) * 64 + rnd(w, 3));
  return n;
}

/* Random puts and (a sixth) family tombstones over random keys of both families. */
static void write_some(world *w, int n) {
  kv_batch *b = kv_batch_new();
  for (int i = 0; i < n; i++) {
    uint8_t key[16];
    uint32_t kl = make_key(w, key);
    uint32_t f = w->fid[rnd(w, 2)];
    int64_t ts = 1000 + (int64_t)rnd(w, 100);
    if (rnd(w, 6) == 0) {
      assert_int_equal(kv_batch_delete(b, f, KV_DELETE_FAMILY, key, kl, NULL, 0, ts), KV_OK);
    } else {
      uint8_t v[4] = {(uint8_t)rnd(w, 256), 1, 2, 3};
      assert_int_equal(kv_batch_put(b, f, key, kl, "q", 1, ts, v, 1 + rnd(w, 4)), KV_OK);
    }
  }
  assert_int_equal(kv_commit(w->db, b, NULL), KV_OK);
  kv_batch_free(b);
}

static void world_open(world *w, uint64_t seed) {
  memset(w, 0, sizeof *w);
  w->rng = seed;
  w->env = kv_env_mem_new(1700000000000ll);
  w->db = tu_kv_open_mem(w->env, (size_t)1 << 20);
  kv_family_options fo[2] = {{.name = "r", .max_versions = 1, .block_size = 256},
                             {.name = "m", .max_versions = 1, .block_size = 512}};
  assert_int_equal(kv_create_table(w->db, "t", fo, 2), KV_OK);
  assert_int_equal(kv_family_id(w->db, "t", "r", &w->fid[0]), KV_OK);
  assert_int_equal(kv_family_id(w->db, "t", "m", &w->fid[1]), KV_OK);
}

static void world_close(world *w) {
  assert_int_equal(kv_close(w->db), KV_OK);
  kv_env_free(w->env);
}

/* Random suffix ranges: up to 3, sorted, some open-ended, some empty ([x, x)). */
typedef struct sfx_set {
  kv_range r[3];
  uint8_t b[6][2];
  uint32_t n;
} sfx_set;

static int bcmp2(const uint8_t *a, size_t al, const uint8_t *b, size_t bl) {
  size_t n = al < bl ? al : bl;
  int c = n ? memcmp(a, b, n) : 0;
  return c ? c : al < bl ? -1 : al > bl;
}

static void random_sfx(world *w, sfx_set *x) {
  memset(x, 0, sizeof *x);
  x->n = (uint32_t)rnd(w, 4);
  size_t len[6];
  for (uint32_t i = 0; i < 2 * x->n; i++) {
    len[i] = 1 + rnd(w, 2);
    for (size_t k = 0; k < len[i]; k++) x->b[i][k] = (uint8_t)(rnd(w, 4) * 64 + rnd(w, 3));
  }
  for (uint32_t i = 0; i < 2 * x->n; i++) /* sort the bounds */
    for (uint32_t j = i + 1; j < 2 * x->n; j++)
      if (bcmp2(x->b[j], len[j], x->b[i], len[i]) < 0) {
        uint8_t t[2];
        memcpy(t, x->b[i], 2), memcpy(x->b[i], x->b[j], 2), memcpy(x->b[j], t, 2);
        size_t tl = len[i];
        len[i] = len[j], len[j] = tl;
      }
  for (uint32_t i = 0; i < x->n; i++) {
    kv_range *r = &x->r[i];
    r->start = x->b[2 * i];
    r->start_len = len[2 * i];
    r->start_inclusive = rnd(w, 2);
    r->end = x->b[2 * i + 1];
    r->end_len = len[2 * i + 1];
    r->end_inclusive = rnd(w, 2);
    if (rnd(w, 8) == 0) { /* an empty range */
      r->end = r->start, r->end_len = r->start_len;
      r->start_inclusive = true, r->end_inclusive = false;
    }
    /* the next range must start at or after this one's end */
    if (i + 1 < x->n && bcmp2(r->end, r->end_len, x->b[2 * i + 2], len[2 * i + 2]) == 0)
      r->end_inclusive = false;
  }
  if (x->n && rnd(w, 4) == 0) x->r[0].start = NULL, x->r[0].start_len = 0;
  if (x->n && rnd(w, 4) == 0) x->r[x->n - 1].end = NULL, x->r[x->n - 1].end_len = 0;
}

/* The model: does key k fall in a suffix range after its prefix? */
static bool model_match(const sfx_set *x, const uint8_t *k, uint32_t n) {
  uint32_t pl = plen(NULL, k, n);
  if (x->n == 0) return true;
  const uint8_t *s = k + pl;
  size_t sl = n - pl;
  for (uint32_t i = 0; i < x->n; i++) {
    const kv_range *r = &x->r[i];
    if (r->start) {
      int c = bcmp2(s, sl, r->start, r->start_len);
      if (c < 0 || (c == 0 && !r->start_inclusive)) continue;
    }
    if (r->end) {
      int c = bcmp2(s, sl, r->end, r->end_len);
      if (c > 0 || (c == 0 && !r->end_inclusive)) continue;
    }
    return true;
  }
  return false;
}

static void render_row(sbuf *b, const kv_row *row) {
  for (uint32_t i = 0; i < row->key_len; i++) sb_add(b, "%02x", row->key[i]);
  for (uint32_t i = 0; i < row->n_cells; i++) {
    const kv_cell_view *c = &row->cells[i];
    sb_add(b, " %u:%lld:", c->family_id, (long long)c->ts);
    for (uint32_t k = 0; k < c->value_len; k++) sb_add(b, "%02x", c->value[k]);
  }
  sb_add(b, "\n");
}

/* The filter some queries push: rows whose key ends in an even byte. */
static bool even_last(void *ctx, const kv_row *row) {
  (void)ctx;
  return row->key_len && (row->key[row->key_len - 1] & 1) == 0;
}

/* One query: skip scan and plain scan at snapshot `snap` (0: latest) through overlay ov;
** returns the rows the skip scan handed out. Some queries push a filter, some hand out at
** most rows_per_prefix rows of each prefix (the model counts the rows it keeps per prefix,
** after the filter). */
/* Random outer ranges (kv_scan_options.ranges with a skip scan): none, or one or two over
** whole random keys (so a range may start or end inside a prefix), sorted, inclusive or
** not, some open-ended. */
typedef struct outer_set {
  kv_range r[2];
  uint8_t b[4][16];
  uint32_t n;
} outer_set;

static void random_outer(world *w, outer_set *x) {
  memset(x, 0, sizeof *x);
  x->n = rnd(w, 2) ? 0 : 1 + (uint32_t)rnd(w, 2);
  uint32_t len[4];
  for (uint32_t i = 0; i < 2 * x->n; i++) len[i] = make_key(w, x->b[i]);
  for (uint32_t i = 0; i < 2 * x->n; i++) /* sort the bounds */
    for (uint32_t j = i + 1; j < 2 * x->n; j++)
      if (bcmp2(x->b[j], len[j], x->b[i], len[i]) < 0) {
        uint8_t t[16];
        memcpy(t, x->b[i], 16), memcpy(x->b[i], x->b[j], 16), memcpy(x->b[j], t, 16);
        uint32_t tl = len[i];
        len[i] = len[j], len[j] = tl;
      }
  for (uint32_t i = 0; i < x->n; i++) {
    kv_range *r = &x->r[i];
    r->start = x->b[2 * i];
    r->start_len = len[2 * i];
    r->start_inclusive = rnd(w, 2);
    r->end = x->b[2 * i + 1];
    r->end_len = len[2 * i + 1];
    r->end_inclusive = rnd(w, 2);
    if (i + 1 < x->n && bcmp2(r->end, r->end_len, x->b[2 * i + 2], len[2 * i + 2]) == 0)
      r->end_inclusive = false;
  }
  if (x->n && rnd(w, 4) == 0) x->r[0].start = NULL, x->r[0].start_len = 0;
  if (x->n && rnd(w, 4) == 0) x->r[x->n - 1].end = NULL, x->r[x->n - 1].end_len = 0;
}

static uint64_t check_query(world *w, uint64_t snap, const kv_batch *ov) {
  sfx_set x;
  random_sfx(w, &x);
  outer_set ox; /* the plain scan reads the outer ranges too: the model is its rows */
  random_outer(w, &ox);
  uint32_t fams[2];
  int nf = 1 + (int)rnd(w, 2);
  int first = (int)rnd(w, 2);
  for (int i = 0; i < nf; i++) fams[i] = w->fid[(first + i) % 2];
  kv_scan_options o;
  memset(&o, 0, sizeof o);
  o.family_ids = fams;
  o.n_families = (uint32_t)nf;
  o.snapshot = snap;
  o.overlay = ov;
  if (rnd(w, 3) == 0) o.filter = even_last;
  o.ranges = ox.n ? ox.r : NULL;
  o.n_ranges = ox.n;
  kv_scan *plain;
  assert_int_equal(kv_scan_open(w->db, &o, &plain), KV_OK);
  uint32_t per = rnd(w, 3) == 0 ? 1 + (uint32_t)rnd(w, 3) : 0;
  kv_skip_prefix sp = {plen, NULL, x.r, x.n, per};
  o.skip_prefix = &sp;
  o.limit = rnd(w, 5) == 0 ? 1 + rnd(w, 20) : 0;
  kv_scan *sk;
  assert_int_equal(kv_scan_open(w->db, &o, &sk), KV_OK);
  sbuf want = {0}, got = {0};
  kv_row row;
  uint64_t n = 0;
  int rc;
  uint8_t last_pfx[64];
  uint32_t last_pl = UINT32_MAX, in_pfx = 0;
  while ((!o.limit || n < o.limit) && (rc = kv_scan_next(plain, &row)) == KV_OK) {
    if (!model_match(&x, row.key, row.key_len)) continue;
    uint32_t pl = plen(NULL, row.key, row.key_len);
    assert_true(pl <= sizeof last_pfx);
    if (pl != last_pl || memcmp(last_pfx, row.key, pl) != 0) { /* a new prefix */
      last_pl = pl;
      memcpy(last_pfx, row.key, pl);
      in_pfx = 0;
    }
    if (per && in_pfx >= per) continue;
    in_pfx++;
    render_row(&want, &row);
    n++;
  }
  uint64_t m = 0;
  while ((rc = kv_scan_next(sk, &row)) == KV_OK) {
    assert_true(model_match(&x, row.key, row.key_len));
    render_row(&got, &row);
    m++;
  }
  assert_int_equal(rc, KV_ERR_NOTFOUND);
  assert_string_equal(want.p ? want.p : "", got.p ? got.p : "");
  assert_int_equal(n, m);
  kv_scan_metrics mt;
  kv_scan_get_metrics(sk, &mt);
  assert_true(mt.prefixes_sought <= NPFX + 2);
  if (m) assert_true(mt.prefixes_sought >= 1);
  if (rnd(w, 2)) { /* either one is the spare the next kv_scan_open reuses */
    kv_scan_close(sk);
    kv_scan_close(plain);
  } else {
    kv_scan_close(plain);
    kv_scan_close(sk);
  }
  free(want.p);
  free(got.p);
  return m;
}

static void test_model(void **state) {
  (void)state;
  uint64_t seed = tu_seed("kv_test_scan_skip");
  world w;
  world_open(&w, seed);
  int rounds = (int)tu_scaled(40, 10);
  uint64_t rows = 0, snap = 0;
  for (int r = 0; r < rounds; r++) {
    write_some(&w, 20 + (int)rnd(&w, 60));
    int what = (int)rnd(&w, 10);
    if (what == 0) assert_int_equal(kv_flush(w.db, "t"), KV_OK);
    else if (what == 1) assert_int_equal(kv_compact(w.db, "t", rnd(&w, 2)), KV_OK);
    if (r == rounds / 3) assert_int_equal(kv_snapshot_acquire(w.db, &snap), KV_OK);
    for (int q = 0; q < 8; q++) {
      rows += check_query(&w, 0, NULL);
      if (snap) rows += check_query(&w, snap, NULL);
    }
    if (r % 7 == 3) { /* a transaction's own writes, new prefixes among them */
      kv_batch *b = kv_batch_new();
      const char *nk[2] = {"zz\0\x40", "a\0\x41"};
      for (int i = 0; i < 2; i++)
        assert_int_equal(kv_batch_put(b, w.fid[0], nk[i], 4, "q", 1, 5000, "v", 1), KV_OK);
      for (int q = 0; q < 4; q++) rows += check_query(&w, 0, b);
      kv_batch_free(b);
    }
  }
  kv_snapshot_release(w.db, snap);
  assert_true(rows > 100); /* the comparison saw rows */
  world_close(&w);
}

static void put1(world *w, const char *key, size_t kl) {
  kv_batch *b = kv_batch_new();
  assert_int_equal(kv_batch_put(b, w->fid[0], key, kl, "q", 1, 2000, "v", 1), KV_OK);
  assert_int_equal(kv_commit(w->db, b, NULL), KV_OK);
  kv_batch_free(b);
}

static int count_rows(kv_scan *s, bool *saw_new) {
  kv_row row;
  int n = 0, rc;
  while ((rc = kv_scan_next(s, &row)) == KV_OK) {
    n++;
    if (row.key_len >= 2 && row.key[0] == 'n') *saw_new = true;
  }
  assert_int_equal(rc, KV_ERR_NOTFOUND);
  return n;
}

/* A prefix written between open and the first next is not seen; one written before open
** is; the prefixes sought are one per prefix. */
static void test_snapshot_prefixes(void **state) {
  (void)state;
  world w;
  world_open(&w, 7);
  put1(&w, "a\0\x01", 3);
  put1(&w, "a\0\x02", 3);
  put1(&w, "c\0\x01", 3);
  put1(&w, "e\0\x05", 3);
  kv_range sr = {(const uint8_t *)"\x01", 1, true, (const uint8_t *)"\x01", 1, true};
  kv_skip_prefix sp = {plen, NULL, &sr, 1, 0};
  kv_scan_options o;
  memset(&o, 0, sizeof o);
  o.family_ids = &w.fid[0];
  o.n_families = 1;
  o.skip_prefix = &sp;
  put1(&w, "b\0\x01", 3); /* before open: seen */
  kv_scan *s;
  assert_int_equal(kv_scan_open(w.db, &o, &s), KV_OK);
  put1(&w, "n\0\x01", 3); /* after open: not seen, though it is a new prefix */
  bool saw = false;
  assert_int_equal(count_rows(s, &saw), 3); /* a, b, c with suffix 01 */
  assert_false(saw);
  kv_scan_metrics m;
  kv_scan_get_metrics(s, &m);
  /* a b c e, and n: its cells are in the memstore, above the scan's snapshot, so the probe
     finds the prefix but its range hands nothing out */
  assert_int_equal(m.prefixes_sought, 5);
  assert_int_equal(m.ranges_sought, 5);
  kv_scan_close(s);
  assert_int_equal(kv_scan_open(w.db, &o, &s), KV_OK);
  saw = false;
  assert_int_equal(count_rows(s, &saw), 4);
  assert_true(saw);
  kv_scan_close(s);
  /* the same through store files */
  assert_int_equal(kv_flush(w.db, "t"), KV_OK);
  assert_int_equal(kv_scan_open(w.db, &o, &s), KV_OK);
  assert_int_equal(count_rows(s, &saw), 4);
  kv_scan_close(s);
  /* kv_scan_prefixes: the count, and the cap */
  uint32_t n;
  bool more;
  assert_int_equal(kv_scan_prefixes(w.db, w.fid[0], plen, NULL, NULL, 0, 64, NULL, NULL, &n, &more), KV_OK);
  assert_int_equal(n, 5);
  assert_false(more);
  assert_int_equal(kv_scan_prefixes(w.db, w.fid[0], plen, NULL, NULL, 0, 3, NULL, NULL, &n, &more), KV_OK);
  assert_int_equal(n, 3);
  assert_true(more);
  assert_int_equal(kv_scan_prefixes(w.db, w.fid[1], plen, NULL, NULL, 0, 3, NULL, NULL, &n, &more), KV_OK);
  assert_int_equal(n, 0); /* an empty family */
  assert_false(more);
  /* prefixes counted inside ranges only */
  kv_range bd = {(const uint8_t *)"b", 1, true, (const uint8_t *)"d", 1, false};
  assert_int_equal(kv_scan_prefixes(w.db, w.fid[0], plen, NULL, &bd, 1, 64, NULL, NULL, &n,
                                    &more), KV_OK);
  assert_true(n >= 1 && n <= 2); /* "bb" and "c\xff" of the five */
  assert_false(more);
  /* refused: reverse, a key with no prefix */
  o.reverse = true;
  assert_int_equal(kv_scan_open(w.db, &o, &s), KV_ERR_INVALID);
  o.reverse = false;
  put1(&w, "zz", 2); /* no 0x00: plen gives 0 */
  assert_int_equal(kv_scan_open(w.db, &o, &s), KV_OK);
  kv_row row;
  int rc;
  while ((rc = kv_scan_next(s, &row)) == KV_OK) {}
  assert_int_equal(rc, KV_ERR_INVALID);
  kv_scan_close(s);
  world_close(&w);
}

/* Rows of nprefix prefixes "pNN\0" + one suffix byte 0..59: every row has a marker in family
** m (fid[1]), and all but every fifth row (and every row of every fourth prefix) a value in
** family r (fid[0]), as the SQL layer writes its hidden key family. */
static void write_marked(world *w, int nprefix) {
  kv_batch *b = kv_batch_new();
  for (int p = 0; p < nprefix; p++)
    for (int k = 0; k < 60; k++) {
      uint8_t key[5] = {'p', (uint8_t)('0' + p / 10 % 10), (uint8_t)('0' + p % 10), 0,
                        (uint8_t)k};
      assert_int_equal(kv_batch_put(b, w->fid[1], key, 5, "m", 1, 1000, "", 0), KV_OK);
      if (k % 5 && p % 4 != 3) {
        uint8_t v[8] = {(uint8_t)p, (uint8_t)k, 1, 2, 3, 4, 5, 6};
        assert_int_equal(kv_batch_put(b, w->fid[0], key, 5, "q", 1, 1000, v, 8), KV_OK);
      }
    }
  assert_int_equal(kv_commit(w->db, b, NULL), KV_OK);
  kv_batch_free(b);
}

/* Rows and family metrics of scan o. */
static uint64_t drain(world *w, const kv_scan_options *o, sbuf *out, kv_scan_metrics *m) {
  kv_scan *s;
  assert_int_equal(kv_scan_open(w->db, o, &s), KV_OK);
  kv_row row;
  uint64_t n = 0;
  int rc;
  while ((rc = kv_scan_next(s, &row)) == KV_OK) {
    render_row(out, &row);
    n++;
  }
  assert_int_equal(rc, KV_ERR_NOTFOUND);
  kv_scan_get_metrics(s, m);
  kv_scan_close(s);
  return n;
}

/* With an existence family, the next prefix is sought in it alone: a skip scan whose ranges
** lie far from each prefix's first row reads exactly the blocks of the wide family that
** the same ranges read as a plain ranged scan (no block just to name a prefix), and hands
** out the same rows, those with a marker alone included. */
static void test_existence_probe(void **state) {
  (void)state;
  world w;
  world_open(&w, 7);
  enum { NP = 12 };
  write_marked(&w, NP);
  assert_int_equal(kv_compact(w.db, "t", true), KV_OK);
  uint8_t lo = 40, hi = 45;
  kv_range sr = {&lo, 1, true, &hi, 1, false};
  uint8_t bounds[NP][2][5];
  kv_range rr[NP];
  for (int p = 0; p < NP; p++) {
    for (int e = 0; e < 2; e++) {
      snprintf((char *)bounds[p][e], 5, "p%02d", p);
      bounds[p][e][3] = 0;
      bounds[p][e][4] = e ? hi : lo;
    }
    rr[p] = (kv_range){bounds[p][0], 5, true, bounds[p][1], 5, false};
  }
  uint32_t fams[2] = {w.fid[0], w.fid[1]};
  kv_scan_options o;
  memset(&o, 0, sizeof o);
  o.family_ids = fams;
  o.n_families = 2;
  o.existence_family = 2;
  o.ranges = rr;
  o.n_ranges = NP;
  sbuf want = {0}, got = {0};
  kv_scan_metrics mw, mg;
  uint64_t n = drain(&w, &o, &want, &mw);
  assert_int_equal(n, NP * (hi - lo));
  o.ranges = NULL;
  o.n_ranges = 0;
  kv_skip_prefix sp = {plen, NULL, &sr, 1, 0};
  o.skip_prefix = &sp;
  assert_int_equal(drain(&w, &o, &got, &mg), n);
  assert_string_equal(want.p, got.p);
  assert_int_equal(mg.prefixes_sought, NP);
  assert_int_equal(mg.families[0].family_id, w.fid[0]);
  assert_true(mw.families[0].blocks_read > 0);
  assert_int_equal(mg.families[0].blocks_read, mw.families[0].blocks_read);
  /* without the existence family every family is probed: the same rows */
  o.existence_family = 0;
  sbuf all = {0};
  assert_int_equal(drain(&w, &o, &all, &mg), n);
  assert_string_equal(want.p, all.p);
  free(want.p);
  free(got.p);
  free(all.p);
  world_close(&w);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_model),
      cmocka_unit_test(test_snapshot_prefixes),
      cmocka_unit_test(test_existence_probe),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
