/*
** tests/kv/test_bulk_merge.c: the commit's block-wise merge of overlapping segments
** (kv/bulk/bulk_merge.c) against a model store that commits the same cells one batch per cell,
** in the order the load adds them. Small segments and small blocks, so a load has many of
** both, over input shaped like the cases the merge tells apart: time-series files loaded
** one after another whose descending runs cross file boundaries (segments that overlap
** only at their ends: most blocks copied whole, a few decoded), the same in reverse file
** order, two files interleaved row by row (unordered buffers merged row by row), files
** repeated with new values and NULL tombstones (rows in several segments: resolved), one
** giant row whose cells span many blocks, random cells with every tombstone type, big
** unordered buffers (the radix sort of kv/bulk/bulk_sort.c), and an unordered family spilled as
** runs past a small bound beside an ordered one that stays encoded segments, row keys
** that are prefixes of one another spilled and merged as runs, and index-shaped keys that
** tie on long shared prefixes (in one buffer and spilled). The
** stores hold older cells in store files and the memstore, one family keeps 3 versions and
** one has a TTL. Every version visible must agree after the load, after reopen and after
** major compaction; power cuts during such a load leave the store as before or as after.
** Most loads here split their merges in two key ranges (split_cells 400), some do not.
** Uses kv/kv.h, kv/bulk/bulk.h and kv/env/env_mem.h only.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "kv/bulk/bulk.h"
#include "kv/env/env.h"
#include "kv/env/env_mem.h"
#include "kv/kv.h"
#include "testutil.h"
#include "tu_sbuf.h"

#define T0 1700000000000LL /* the env clock */
#define N_FAMS 3           /* t.a (VERSIONS 3), t.b, t.c (TTL 60 s) */

/* One cell operation. */
typedef struct op {
  int fam;          /* index into st.fid */
  int type;         /* enum kv_cell_type */
  char row[96];     /* row key */
  char qual[16];    /* qualifier ("" for DELETE_FAMILY) */
  int64_t ts;       /* timestamp */
  char val[24];     /* value (puts) */
} op;

typedef struct st {
  kv_env *env;      /* in-memory env */
  kv_db *db;        /* the store */
  uint32_t fid[N_FAMS]; /* family ids */
} st;

static void st_reopen(st *s) {
  kv_options o;
  kv_options_init(&o);
  o.env = s->env;
  o.create_if_missing = true;
  if (kv_open("/db", &o, &s->db)) fail_msg("kv_open: %s", kv_errmsg());
  static const char *const names[N_FAMS] = {"a", "b", "c"};
  for (int i = 0; i < N_FAMS; i++)
    assert_int_equal(kv_family_id(s->db, "t", names[i], &s->fid[i]), KV_OK);
}

static void st_open(st *s) {
  s->env = kv_env_mem_new(T0);
  kv_options o;
  kv_options_init(&o);
  o.env = s->env;
  o.create_if_missing = true;
  assert_int_equal(kv_open("/db", &o, &s->db), KV_OK);
  kv_family_options fo[N_FAMS] = {{.name = "a", .max_versions = 3, .block_size = 256},
                                  {.name = "b", .block_size = 512},
                                  {.name = "c", .ttl_sec = 60, .block_size = 300}};
  assert_int_equal(kv_create_table(s->db, "t", fo, N_FAMS), KV_OK);
  assert_int_equal(kv_close(s->db), KV_OK);
  st_reopen(s);
}

static void st_close(st *s) {
  if (s->db) assert_int_equal(kv_close(s->db), KV_OK);
  s->db = NULL;
  kv_env_free(s->env);
}

/* ---- rendering every visible version --------------------------------------------------- */

/* Every version of every family a read sees (caller frees). */
static char *render(st *s) {
  sbuf b = {0};
  sb_put(&b, "", 0);
  kv_scan_options so;
  memset(&so, 0, sizeof so);
  so.family_ids = s->fid;
  so.n_families = N_FAMS;
  so.max_versions = 10;
  kv_scan *sc;
  if (kv_scan_open(s->db, &so, &sc)) fail_msg("kv_scan_open: %s", kv_errmsg());
  kv_row row;
  int rc;
  while ((rc = kv_scan_next(sc, &row)) == KV_OK) {
    sb_put(&b, row.key, row.key_len);
    sb_put(&b, "|", 1);
    for (uint32_t i = 0; i < row.n_cells; i++) {
      const kv_cell_view *c = &row.cells[i];
      char tmp[64];
      int fi = 0;
      while (fi < N_FAMS - 1 && s->fid[fi] != c->family_id) fi++;
      snprintf(tmp, sizeof tmp, "%d:", fi);
      sb_put(&b, tmp, strlen(tmp));
      sb_put(&b, c->qual, c->qual_len);
      snprintf(tmp, sizeof tmp, "@%lld=", (long long)c->ts);
      sb_put(&b, tmp, strlen(tmp));
      sb_put(&b, c->value, c->value_len);
      sb_put(&b, ",", 1);
    }
    sb_put(&b, "\n", 1);
  }
  if (rc != KV_ERR_NOTFOUND) fail_msg("kv_scan_next: %s", kv_errmsg());
  kv_scan_close(sc);
  return b.p;
}

static void expect_same(const char *what, uint64_t seed, const char *want, const char *got) {
  if (strcmp(want, got) == 0) return;
  size_t i = 0;
  while (want[i] && want[i] == got[i]) i++;
  size_t from = i > 80 ? i - 80 : 0;
  fail_msg("%s (seed %llu): reads differ at byte %zu\nwant ...%.160s\ngot  ...%.160s", what,
           (unsigned long long)seed, i, want + from, got + from);
}

/* ---- applying ops ---------------------------------------------------------------------- */

static void commit_ops(st *s, const op *ops, size_t n, bool one_each) {
  kv_batch *b = kv_batch_new();
  for (size_t i = 0; i < n; i++) {
    const op *o = &ops[i];
    int rc = o->type == KV_PUT
                 ? kv_batch_put(b, s->fid[o->fam], o->row, strlen(o->row), o->qual,
                                strlen(o->qual), o->ts, o->val, strlen(o->val))
                 : kv_batch_delete(b, s->fid[o->fam], o->type, o->row, strlen(o->row),
                                   o->qual, strlen(o->qual), o->ts);
    assert_int_equal(rc, KV_OK);
    if (one_each || i + 1 == n) {
      if (kv_commit(s->db, b, NULL)) fail_msg("kv_commit: %s", kv_errmsg());
      kv_batch_clear(b);
    }
  }
  kv_batch_free(b);
}

static size_t g_seg_bytes = 1500; /* segment_bytes of the loads */
static uint64_t g_split = 400;     /* split_cells of the loads (most merges split in two) */
static kv_bulk_stats g_stats;      /* the last load's counters */
static size_t g_run_bytes;         /* run_bytes of the loads (0 = the default) */

/* The load: consecutive ops of one (family, row, timestamp) as one kv_bulk_add_row. */
static int bulk_ops(st *s, const op *ops, size_t n, size_t run_bytes) {
  kv_bulk_options bo = {.run_bytes = run_bytes, .segment_bytes = g_seg_bytes,
                       .split_cells = g_split};
  kv_bulk *bl;
  int rc = kv_bulk_begin(s->db, &bo, &bl);
  for (size_t i = 0; rc == KV_OK && i < n;) {
    kv_bulk_cell c[32];
    size_t k = 0;
    while (k < 32 && i + k < n && ops[i + k].fam == ops[i].fam && ops[i + k].ts == ops[i].ts &&
           strcmp(ops[i + k].row, ops[i].row) == 0) {
      const op *o = &ops[i + k];
      c[k] = (kv_bulk_cell){o->qual, strlen(o->qual), o->type, o->val, strlen(o->val)};
      k++;
    }
    rc = kv_bulk_add_row(bl, s->fid[ops[i].fam], ops[i].row, strlen(ops[i].row), ops[i].ts, c,
                         k);
    i += k;
  }
  if (rc == KV_OK) rc = kv_bulk_commit(bl, NULL);
  kv_bulk_get_stats(bl, &g_stats);
  kv_bulk_free(bl);
  return rc;
}

/* ---- input shapes ---------------------------------------------------------------------- */

typedef struct gen {
  op *ops;          /* generated ops */
  size_t n, cap;    /* used / allocated */
  uint64_t rng;     /* PRNG state */
} gen;

static op *new_op(gen *g) {
  if (g->n == g->cap) {
    g->cap = g->cap ? g->cap * 2 : 1024;
    g->ops = realloc(g->ops, g->cap * sizeof *g->ops);
    assert_non_null(g->ops);
  }
  op *o = &g->ops[g->n++];
  memset(o, 0, sizeof *o);
  return o;
}

/* One row of a sensor file: station st, hour h (the key sorts newest first, as TS DESC),
** 5 readings in family fam, a NULL reading as a DELETE_COLUMN; ts: the load's time, or an
** older one in the TTL family now and then (expired). */
static void sensor_row(gen *g, int fam, const char *stn, int h, int64_t ts, int gen_no) {
  for (int q = 0; q < 5; q++) {
    op *o = new_op(g);
    o->fam = fam;
    snprintf(o->row, sizeof o->row, "%s|%06d", stn, 999999 - h);
    snprintf(o->qual, sizeof o->qual, "q%d", q);
    o->ts = ts;
    bool null = tu_below(&g->rng, 8) == 0;
    o->type = null ? KV_DELETE_COLUMN : KV_PUT;
    snprintf(o->val, sizeof o->val, "g%dv%llu", gen_no,
             (unsigned long long)tu_below(&g->rng, 100000));
  }
}

/* Files of `stations` stations x `copies` copies loaded one after another, each file's hours
** ascending (so its keys descend); copy k's stations are named st_k and sort between st and
** the next station. A descending run goes on across a file boundary into a lower key range,
** so the segment that holds it overlaps every segment between. */
static void gen_files(gen *g, int stations, int copies, int hours, bool reverse_files,
                      int gen_no) {
  int n = stations * copies;
  for (int k = 0; k < n; k++) {
    int f = reverse_files ? n - 1 - k : k;
    char stn[16];
    /* f is small and non-negative; the bounds tell the compiler the name fits */
    unsigned si = (unsigned)(f % stations) % 100u, ci = (unsigned)(f / stations) % 1000u;
    if (ci == 0) snprintf(stn, sizeof stn, "st%02u", si);
    else snprintf(stn, sizeof stn, "st%02u_%u", si, ci);
    int fam = (f % 3 == 2) ? 2 : f % 2;
    for (int h = 0; h < hours; h++) {
      int64_t ts = fam == 2 && h % 7 == 3 ? T0 - 120000 : T0 - 1000 + (gen_no % 3);
      sensor_row(g, fam, stn, h, ts, gen_no);
    }
  }
}

/* Two stations' files interleaved row by row (the buffers are unordered). */
static void gen_interleaved(gen *g, int hours) {
  for (int h = 0; h < hours; h++) {
    sensor_row(g, 0, "ia", h, T0 - 1000, 0);
    sensor_row(g, 0, "ib", hours - 1 - h, T0 - 1000, 0);
  }
}

/* One row with n cells (it spans many blocks), then a second pass over part of it with new
** values and tombstones, and rows around it. */
static void gen_giant_row(gen *g, int n) {
  for (int pass = 0; pass < 2; pass++) {
    for (int h = 0; h < 20; h++) sensor_row(g, 0, "ga", h, T0 - 1000 + pass, pass);
    for (int q = pass ? n / 3 : 0; q < (pass ? n / 2 : n); q++) {
      op *o = new_op(g);
      o->fam = 0;
      snprintf(o->row, sizeof o->row, "gb|giant");
      snprintf(o->qual, sizeof o->qual, "x%05d", q);
      o->ts = T0 - 1000 + pass;
      o->type = pass && q % 5 == 0 ? KV_DELETE_COLUMN : KV_PUT;
      snprintf(o->val, sizeof o->val, "p%dq%d", pass, q);
    }
    for (int h = 0; h < 20; h++) sensor_row(g, 0, "gc", h, T0 - 1000 + pass, pass);
  }
}

/* Random cells of every type over few rows (many collide). */
static void gen_random(gen *g, size_t n) {
  for (size_t i = 0; i < n; i++) {
    op *o = new_op(g);
    o->fam = (int)tu_below(&g->rng, N_FAMS);
    snprintf(o->row, sizeof o->row, "r%03u", (unsigned)tu_below(&g->rng, 60));
    snprintf(o->qual, sizeof o->qual, "q%u", (unsigned)tu_below(&g->rng, 4));
    o->ts = T0 - 100 * (int64_t)(1 + tu_below(&g->rng, 4));
    snprintf(o->val, sizeof o->val, "v%llu", (unsigned long long)tu_below(&g->rng, 1000000));
    unsigned k = (unsigned)tu_below(&g->rng, 100);
    o->type = k < 78 ? KV_PUT : k < 88 ? KV_DELETE_COLUMN : k < 94 ? KV_DELETE_VERSION
                                                                     : KV_DELETE_FAMILY;
    if (o->type == KV_DELETE_FAMILY) o->qual[0] = 0;
  }
}

/* Older cells of the stores: some rows of the sensor files and random ones. */
static void gen_pre(gen *g) {
  gen_files(g, 3, 2, 12, false, 7);
  gen_random(g, 200);
}

/* ---- the round trip -------------------------------------------------------------------- */

/* Load g's ops into a store holding older cells (in store files and the memstore) and
** compare with the model at every stage. */
static void roundtrip(const char *name, uint64_t seed, const gen *load) {
  st m, s;
  st_open(&m);
  st_open(&s);
  gen pre = {.rng = seed ^ 0x5eed};
  gen_pre(&pre);
  size_t half = pre.n / 2;
  commit_ops(&m, pre.ops, half, true);
  commit_ops(&s, pre.ops, half, false);
  assert_int_equal(kv_flush(m.db, NULL), KV_OK);
  assert_int_equal(kv_flush(s.db, NULL), KV_OK);
  commit_ops(&m, pre.ops + half, pre.n - half, true);
  commit_ops(&s, pre.ops + half, pre.n - half, false);

  commit_ops(&m, load->ops, load->n, true);
  if (bulk_ops(&s, load->ops, load->n, g_run_bytes))
    fail_msg("%s: bulk load (seed %llu): %s", name, (unsigned long long)seed, kv_errmsg());
  char *want = render(&m), *got = render(&s);
  expect_same(name, seed, want, got);
  free(got);
  assert_int_equal(kv_close(s.db), KV_OK);
  st_reopen(&s);
  got = render(&s);
  expect_same("after reopen", seed, want, got);
  free(got);
  free(want);
  assert_int_equal(kv_compact(s.db, NULL, true), KV_OK);
  assert_int_equal(kv_compact(m.db, NULL, true), KV_OK);
  want = render(&m);
  got = render(&s);
  expect_same("after major compaction", seed, want, got);
  free(got);
  free(want);
  free(pre.ops);
  st_close(&m);
  st_close(&s);
}

/* Files one after another: segments overlap at their ends; most blocks are copied whole,
** the blocks where a run crosses into another file's range are decoded. */
static void test_files(void **state) {
  (void)state;
  uint64_t seed = tu_seed("bulk_merge_files");
  gen g = {.rng = seed};
  gen_files(&g, 6, 3, (int)tu_scaled(60, 20), false, 1);
  roundtrip("files in order", seed, &g);
  assert_true(g_stats.fams_merged > 0);
  assert_true(g_stats.blocks_copied > 0);
  assert_true(g_stats.blocks_decoded > 0);
  assert_true(g_stats.blocks_copied > g_stats.blocks_decoded);
  free(g.ops);
  g = (gen){.rng = seed + 1};
  gen_files(&g, 6, 3, (int)tu_scaled(60, 20), true, 1);
  roundtrip("files in reverse order", seed + 1, &g);
  free(g.ops);
}

/* Files repeated with new values and NULLs: rows in several segments are resolved (the
** later file wins column by column, a NULL masks the earlier value). */
static void test_repeated_rows(void **state) {
  (void)state;
  uint64_t seed = tu_seed("bulk_merge_repeat");
  gen g = {.rng = seed};
  int hours = (int)tu_scaled(40, 16);
  gen_files(&g, 4, 2, hours, false, 1);
  gen_files(&g, 2, 1, hours / 2, true, 2); /* part of it again, reversed */
  gen_files(&g, 4, 2, hours / 3, false, 3);
  roundtrip("repeated rows", seed, &g);
  assert_true(g_stats.fams_merged > 0);
  free(g.ops);
}

/* Unordered buffers (two files interleaved), the giant row, random cells. */
static void test_interleaved_giant_random(void **state) {
  (void)state;
  uint64_t seed = tu_seed("bulk_merge_mixed");
  gen g = {.rng = seed};
  gen_interleaved(&g, (int)tu_scaled(300, 60));
  roundtrip("interleaved", seed, &g);
  assert_true(g_stats.fams_merged > 0);
  free(g.ops);
  g = (gen){.rng = seed + 1};
  gen_giant_row(&g, (int)tu_scaled(2000, 600));
  roundtrip("giant row", seed + 1, &g);
  free(g.ops);
  g = (gen){.rng = seed + 2};
  gen_files(&g, 3, 2, 30, false, 1);
  gen_random(&g, tu_scaled(3000, 600));
  gen_files(&g, 3, 2, 20, true, 4);
  roundtrip("files and random cells", seed + 2, &g);
  free(g.ops);
}

/* Segment sizes from tiny to large over the same input all read the same as the model. */
static void test_segment_sizes(void **state) {
  (void)state;
  uint64_t seed = tu_seed("bulk_merge_sizes");
  static const size_t sizes[] = {200, 700, 4000, 30000};
  for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
    gen g = {.rng = seed + k};
    gen_files(&g, 4, 3, (int)tu_scaled(30, 12), k % 2 == 1, 1);
    gen_files(&g, 2, 1, 10, false, 2);
    g_seg_bytes = sizes[k];
    g_split = k % 2 ? 400 : UINT64_MAX; /* merged in two key ranges, or in one */
    roundtrip("segment size", seed + k, &g);
    free(g.ops);
  }
  g_seg_bytes = 1500;
  g_split = 400;
}

/* Big unordered buffers (one 8 MiB segment size: thousands of groups in no order, sorted
** by the radix sort): random cells of every type over few rows, and shuffled rows whose
** keys share their first 16 bytes or more, some repeated with new values. */
static void test_unordered_big(void **state) {
  (void)state;
  uint64_t seed = tu_seed("bulk_merge_unordered");
  g_seg_bytes = 0;
  gen g = {.rng = seed};
  gen_random(&g, tu_scaled(8000, 3000));
  roundtrip("random cells, one buffer", seed, &g);
  free(g.ops);
  g = (gen){.rng = seed + 1};
  int n = (int)tu_scaled(6000, 2000);
  for (int i = 0; i < n; i++) {
    unsigned r = (unsigned)tu_below(&g.rng, (uint64_t)n);
    char stn[24];
    snprintf(stn, sizeof stn, "long-station-%u", r % 3); /* 16+ shared bytes */
    sensor_row(&g, (int)(r % 2), stn, (int)(r / 3), T0 - 1000 + (int64_t)(i % 3), i % 5);
  }
  roundtrip("shuffled long keys", seed + 1, &g);
  free(g.ops);
  g_seg_bytes = 1500;
}

/* Index-shaped keys in no order: a shared prefix of 0 to 80 bytes (so keys tie past the
** radix sort's first 16 bytes, past its 64 bytes ordered by bytes, and are prefixes of one
** another around each 16-byte boundary), then one of few leading values, a station and an
** hour; some rows repeat with new values and NULLs. In one big buffer (sorted at commit)
** and in buffers of over a thousand rows spilled as runs under a small bound (each sorted
** by the radix sort), both read as the model. */
static void test_unordered_long_ties(void **state) {
  (void)state;
  uint64_t seed = tu_seed("bulk_merge_long_ties");
  static const int plen[] = {0, 14, 15, 16, 17, 31, 32, 33, 47, 63, 64, 65, 80};
  for (int pass = 0; pass < 2; pass++) {
    gen g = {.rng = seed + (uint64_t)pass};
    int n = (int)tu_scaled(6000, 2000);
    for (int i = 0; i < n; i++) {
      int len = plen[tu_below(&g.rng, sizeof plen / sizeof plen[0])];
      unsigned h = (unsigned)tu_below(&g.rng, (uint64_t)n / 4);
      char pfx[96];
      memset(pfx, 'p', (size_t)len);
      int fam = (int)tu_below(&g.rng, 2);
      int64_t ts = T0 - 1000 + (int64_t)(i % 2);
      int vals = 1 + (int)tu_below(&g.rng, 3);
      for (int q = 0; q < vals; q++) {
        op *o = new_op(&g);
        o->fam = fam;
        memcpy(o->row, pfx, (size_t)len); /* then 13 bytes at most: fits 96 */
        char tail[16];
        snprintf(tail, sizeof tail, "%c|st%u|%06u", "ab"[h % 2], h % 3u, h % 1000000u);
        memcpy(o->row + len, tail, strlen(tail) + 1);
        snprintf(o->qual, sizeof o->qual, "q%d", q);
        o->ts = ts;
        o->type = tu_below(&g.rng, 8) ? KV_PUT : KV_DELETE_COLUMN;
        snprintf(o->val, sizeof o->val, "v%d", i);
      }
    }
    g_seg_bytes = pass ? SIZE_MAX : 0; /* spilled: no segments, one buffer up to the bound */
    g_run_bytes = pass ? 128 * 1024 : 0;
    roundtrip(pass ? "long ties spilled" : "long ties in one buffer", seed + (uint64_t)pass, &g);
    if (pass) assert_true(g_stats.runs >= 2);
    free(g.ops);
  }
  g_seg_bytes = 1500;
  g_run_bytes = 0;
}

/* Past the bound, an unordered family (an index's rows) is spilled as runs while an
** ordered one (the table's rows, added alongside) stays encoded segments, paged out: its
** file is still its segments one after another, and both read as the model. Rows of the
** unordered family repeat with new values and NULLs (resolved across runs). */
static void test_spill_keeps_ordered(void **state) {
  (void)state;
  uint64_t seed = tu_seed("bulk_merge_spill_ordered");
  gen g = {.rng = seed};
  int n = (int)tu_scaled(4000, 2500);
  for (int h = 0; h < n; h++) {
    sensor_row(&g, 0, "oa", h, T0 - 1000, 0); /* keys descend: segments chained whole */
    unsigned r = (unsigned)tu_below(&g.rng, (uint64_t)n);
    sensor_row(&g, 1, r % 2 ? "ub" : "ua", (int)r, T0 - 1000, h % 4);
  }
  g_seg_bytes = 16384;
  g_run_bytes = 256 * 1024;
  roundtrip("ordered and unordered families spilled", seed, &g);
  assert_true(g_stats.runs >= 2);           /* the unordered family, spilled more than once */
  assert_true(g_stats.segs_paged > 0);      /* the ordered one, paged out instead */
  assert_int_equal(g_stats.fams_segments, 1); /* and written as its segments */
  assert_int_equal(g_stats.fams_merged, 1);
  free(g.ops);
  g_seg_bytes = 1500;
  g_run_bytes = 0;
}

/* Row keys of 1 to 23 bytes from two letters, so many are prefixes of others, on both sides
** of the 16 bytes the merge's heap compares as numbers before the whole cells; loaded past a
** small bound in no order: spilled as runs, merged cell by cell at each spill and at commit. */
static void test_spilled_prefix_keys(void **state) {
  (void)state;
  uint64_t seed = tu_seed("bulk_merge_prefix_keys");
  gen g = {.rng = seed};
  size_t n = tu_scaled(6000, 2000);
  for (size_t i = 0; i < n; i++) {
    op *o = new_op(&g);
    o->fam = (int)tu_below(&g.rng, 2);
    int len = 1 + (int)tu_below(&g.rng, 23);
    for (int k = 0; k < len; k++) o->row[k] = tu_below(&g.rng, 4) ? 'k' : 'l';
    o->row[len] = 0;
    snprintf(o->qual, sizeof o->qual, "q%u", (unsigned)tu_below(&g.rng, 3));
    o->ts = T0 - 100 * (int64_t)(1 + tu_below(&g.rng, 3));
    o->type = tu_below(&g.rng, 10) ? KV_PUT : KV_DELETE_COLUMN;
    snprintf(o->val, sizeof o->val, "v%llu", (unsigned long long)i);
  }
  g_run_bytes = 16 * 1024;
  roundtrip("prefix keys spilled", seed, &g);
  assert_true(g_stats.runs >= 2);
  free(g.ops);
  g_run_bytes = 0;
}

/* Power cuts and I/O errors at many points of a load merged block-wise: the store reads
** as before the load or, when the commit returned KV_OK, as after it. */
static void test_power_cuts(void **state) {
  (void)state;
  uint64_t seed = tu_seed("bulk_merge_cuts");
  gen pre = {.rng = seed}, load = {.rng = seed + 1};
  gen_random(&pre, 150);
  gen_files(&load, 4, 3, 25, false, 1);
  st s;
  st_open(&s);
  commit_ops(&s, pre.ops, pre.n, false);
  char *before = render(&s);
  assert_int_equal(bulk_ops(&s, load.ops, load.n, 0), KV_OK);
  assert_true(g_stats.blocks_copied > 0);
  char *after = render(&s);
  st_close(&s);
  static const int kinds[] = {KV_FAULT_APPEND, KV_FAULT_SYNC, KV_FAULT_OPEN,
                              KV_FAULT_SYNC_DIR, KV_FAULT_RENAME};
  int n_fail = 0, max_nth = (int)tu_scaled(30, 10);
  for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
    for (int nth = 1; nth <= max_nth; nth++) {
      st_open(&s);
      commit_ops(&s, pre.ops, pre.n, false);
      kv_env_mem_fail(s.env, kinds[k], (uint64_t)nth, NULL,
                      nth % 3 == 0 && kinds[k] == KV_FAULT_APPEND ? KV_FAULT_TORN
                                                                  : KV_FAULT_EIO,
                      17);
      int rc = bulk_ops(&s, load.ops, load.n, 0);
      kv_env_mem_set_crashed(s.env, true);
      kv_close(s.db);
      s.db = NULL;
      kv_env_mem_power_cut(s.env);
      kv_env_mem_clear_faults(s.env);
      st_reopen(&s);
      char *got = render(&s);
      char what[96];
      snprintf(what, sizeof what, "fault kind %d at op %d (load %s)", kinds[k], nth,
               rc ? "failed" : "committed");
      if (rc == KV_OK || strcmp(got, before) != 0) expect_same(what, seed, after, got);
      free(got);
      st_close(&s);
      if (rc) n_fail++;
      else break; /* the fault did not hit this load: later ones will not */
    }
  }
  assert_true(n_fail > 0);
  free(before);
  free(after);
  free(pre.ops);
  free(load.ops);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_files),
      cmocka_unit_test(test_repeated_rows),
      cmocka_unit_test(test_interleaved_giant_random),
      cmocka_unit_test(test_segment_sizes),
      cmocka_unit_test(test_unordered_long_ties),
      cmocka_unit_test(test_unordered_big),
      cmocka_unit_test(test_spill_keeps_ordered),
      cmocka_unit_test(test_spilled_prefix_keys),
      cmocka_unit_test(test_power_cuts),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
