/*
** tests/kv/test_bulk.c: bulk load (kv/bulk/bulk.h) against a model: a second store that commits
** the same cells one batch per cell, in the order the load adds them. Both stores get the
** same writes before the load and after it (puts and tombstones of every type), and every
** read of every version must agree: after the load, after the later writes, after a
** reopen, after flush and major compaction. Input sorted (no sort needed), unsorted with
** colliding keys, and spilled to several sorted runs. Power cuts: a fault at the Nth
** append, sync, open, directory sync or rename of a load (spills and commit), then the
** "process" dies, unsynced bytes are dropped, the store reopens: it reads as before the
** load or, if the commit returned KV_OK, as after it, and no run file is left. Also: empty
** loads, errors, a snapshot taken before the load, the load's sequence number. The
** pipeline (segments sorted and encoded by the worker thread): tiny segments over sorted,
** reverse-sorted, run-shaped and random input (segments joined whole, or merged); a commit
** during the load (segments framed again with the load's real sequence number); a failure
** in the worker (reported, nothing left behind). The load's time when the clock steps back
** (never older than the last commit's, and no later commit older than the load's), and the
** caller's scratch file (read back, removed with the load and by kv_open).
** Uses kv/kv.h, kv/bulk/bulk.h and kv/env/env_mem.h only.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
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
#define N_ROWS 40          /* distinct row keys */
#define N_QUALS 4          /* distinct qualifiers */

/* One cell operation. */
typedef struct op {
  int fam;          /* 0 = t.a (VERSIONS 3), 1 = t.b, 2 = other.x */
  int type;         /* enum kv_cell_type */
  char row[16];     /* row key */
  char qual[8];     /* qualifier ("" for DELETE_FAMILY) */
  int64_t ts;       /* timestamp */
  char val[24];     /* value (puts) */
} op;

typedef struct st {
  kv_env *env;      /* in-memory env */
  kv_db *db;        /* the store */
  uint32_t fid[3];  /* family ids: t.a, t.b, other.x */
} st;

static void st_reopen(st *s) {
  kv_options o;
  kv_options_init(&o);
  o.env = s->env;
  o.create_if_missing = true;
  int rc = kv_open("/db", &o, &s->db);
  if (rc) fail_msg("kv_open: %s", kv_errmsg());
  assert_int_equal(kv_family_id(s->db, "t", "a", &s->fid[0]), KV_OK);
  assert_int_equal(kv_family_id(s->db, "t", "b", &s->fid[1]), KV_OK);
  assert_int_equal(kv_family_id(s->db, "other", "x", &s->fid[2]), KV_OK);
}

static void st_open(st *s) {
  s->env = kv_env_mem_new(T0);
  kv_options o;
  kv_options_init(&o);
  o.env = s->env;
  o.create_if_missing = true;
  assert_int_equal(kv_open("/db", &o, &s->db), KV_OK);
  kv_family_options fo[2] = {{.name = "a", .max_versions = 3}, {.name = "b", .block_size = 512}};
  assert_int_equal(kv_create_table(s->db, "t", fo, 2), KV_OK);
  kv_family_options fx = {.name = "x", .compression = KV_COMPRESSION_NONE};
  assert_int_equal(kv_create_table(s->db, "other", &fx, 1), KV_OK);
  assert_int_equal(kv_close(s->db), KV_OK);
  st_reopen(s);
}

static void st_close(st *s) {
  if (s->db) assert_int_equal(kv_close(s->db), KV_OK);
  s->db = NULL;
  kv_env_free(s->env);
}

/* ---- rendering every visible version --------------------------------------------------- */

static void render_fams(kv_db *db, const uint32_t *fids, uint32_t n, uint64_t snap, sbuf *out) {
  kv_scan_options so;
  memset(&so, 0, sizeof so);
  so.family_ids = fids;
  so.n_families = n;
  so.max_versions = 10;
  so.snapshot = snap;
  kv_scan *sc;
  int rc = kv_scan_open(db, &so, &sc);
  if (rc) fail_msg("kv_scan_open: %s", kv_errmsg());
  kv_row row;
  while ((rc = kv_scan_next(sc, &row)) == KV_OK) {
    sb_put(out, row.key, row.key_len);
    sb_put(out, "|", 1);
    for (uint32_t i = 0; i < row.n_cells; i++) {
      const kv_cell_view *c = &row.cells[i];
      sb_add(out, "%u:", c->family_id == fids[0] ? 0u : 1u);
      sb_put(out, c->qual, c->qual_len);
      sb_add(out, "@%lld=", (long long)c->ts);
      sb_put(out, c->value, c->value_len);
      sb_put(out, ",", 1);
    }
    sb_put(out, "\n", 1);
  }
  if (rc != KV_ERR_NOTFOUND) fail_msg("kv_scan_next: %s", kv_errmsg());
  kv_scan_close(sc);
}

/* Everything a read at `snap` (0 = latest) sees, as text (caller frees). */
static char *render(st *s, uint64_t snap) {
  sbuf b = {0};
  sb_put(&b, "T\n", 2);
  render_fams(s->db, s->fid, 2, snap, &b);
  sb_put(&b, "O\n", 2);
  render_fams(s->db, s->fid + 2, 1, snap, &b);
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

/* ---- generating and applying ops ------------------------------------------------------ */

static void gen_op(uint64_t *rng, op *o, bool puts_only) {
  memset(o, 0, sizeof *o);
  o->fam = (int)tu_below(rng, 3);
  snprintf(o->row, sizeof o->row, "r%03u", (unsigned)tu_below(rng, N_ROWS));
  snprintf(o->qual, sizeof o->qual, "q%u", (unsigned)tu_below(rng, N_QUALS));
  o->ts = 100 * (int64_t)(1 + tu_below(rng, 4));
  snprintf(o->val, sizeof o->val, "v%llu", (unsigned long long)tu_below(rng, 1000000));
  unsigned k = (unsigned)tu_below(rng, 100);
  o->type = puts_only || k < 78 ? KV_PUT
            : k < 88          ? KV_DELETE_COLUMN
            : k < 94          ? KV_DELETE_VERSION
                              : KV_DELETE_FAMILY;
  if (o->type == KV_DELETE_FAMILY) o->qual[0] = 0;
}

static void batch_op(st *s, kv_batch *b, const op *o) {
  int rc = o->type == KV_PUT
               ? kv_batch_put(b, s->fid[o->fam], o->row, strlen(o->row), o->qual,
                              strlen(o->qual), o->ts, o->val, strlen(o->val))
               : kv_batch_delete(b, s->fid[o->fam], o->type, o->row, strlen(o->row), o->qual,
                                 strlen(o->qual), o->ts);
  assert_int_equal(rc, KV_OK);
}

static int bulk_op(st *s, kv_bulk *bl, const op *o) {
  return o->type == KV_PUT
             ? kv_bulk_put(bl, s->fid[o->fam], o->row, strlen(o->row), o->qual,
                           strlen(o->qual), o->ts, o->val, strlen(o->val))
             : kv_bulk_delete(bl, s->fid[o->fam], o->type, o->row, strlen(o->row), o->qual,
                              strlen(o->qual), o->ts);
}

/* Commit ops one batch each (the model of a load), or all in one batch. */
static void commit_ops(st *s, const op *ops, size_t n, bool one_each) {
  kv_batch *b = kv_batch_new();
  for (size_t i = 0; i < n; i++) {
    batch_op(s, b, &ops[i]);
    if (one_each || i + 1 == n) {
      if (kv_commit(s->db, b, NULL)) fail_msg("kv_commit: %s", kv_errmsg());
      kv_batch_clear(b);
    }
  }
  kv_batch_free(b);
}

/* Consecutive ops of one (family, row, timestamp) from ops[i] as one kv_bulk_add_row;
** *used gets how many. */
static int bulk_row_ops(st *s, kv_bulk *bl, const op *ops, size_t n, size_t i, size_t *used) {
  kv_bulk_cell c[16];
  size_t k = 0;
  while (k < 16 && i + k < n && ops[i + k].fam == ops[i].fam && ops[i + k].ts == ops[i].ts &&
         strcmp(ops[i + k].row, ops[i].row) == 0) {
    const op *o = &ops[i + k];
    c[k].qual = o->qual;
    c[k].qual_len = strlen(o->qual);
    c[k].type = o->type;
    c[k].value = o->val;
    c[k].value_len = strlen(o->val);
    k++;
  }
  *used = k;
  return kv_bulk_add_row(bl, s->fid[ops[i].fam], ops[i].row, strlen(ops[i].row), ops[i].ts, c,
                         k);
}

static size_t g_seg_bytes;     /* segment_bytes of the loads below (0 = default) */
static kv_bulk_stats g_stats;  /* the last load's pipeline counters */

/* The load through kv_bulk_put/delete, or (by_row) kv_bulk_add_row where ops share a row. */
static int bulk_ops_as(st *s, const op *ops, size_t n, size_t run_bytes, uint64_t *seq,
                       bool by_row) {
  kv_bulk_options bo = {.run_bytes = run_bytes, .segment_bytes = g_seg_bytes};
  kv_bulk *bl;
  int rc = kv_bulk_begin(s->db, &bo, &bl);
  for (size_t i = 0, used = 1; rc == KV_OK && i < n; i += used)
    rc = by_row ? bulk_row_ops(s, bl, ops, n, i, &used) : bulk_op(s, bl, &ops[i]);
  if (rc == KV_OK) rc = kv_bulk_commit(bl, seq);
  kv_bulk_get_stats(bl, &g_stats);
  kv_bulk_free(bl);
  return rc;
}

static int bulk_ops(st *s, const op *ops, size_t n, size_t run_bytes, uint64_t *seq) {
  return bulk_ops_as(s, ops, n, run_bytes, seq, false);
}

/* Files under /db/data whose name ends with `suffix`. */
typedef struct lctx {
  kv_env *env;      /* the env */
  const char *dir;  /* directory being listed */
  const char *suffix; /* wanted ending */
  int depth;        /* levels left */
  int count;        /* matches */
} lctx;

static int list_cb(void *arg, const char *name) {
  lctx *c = arg;
  size_t n = strlen(name), k = strlen(c->suffix);
  if (n >= k && strcmp(name + n - k, c->suffix) == 0) c->count++;
  if (c->depth > 0) {
    char sub[512];
    snprintf(sub, sizeof sub, "%s/%s", c->dir, name);
    lctx d = {c->env, sub, c->suffix, c->depth - 1, 0};
    c->env->list(c->env, sub, list_cb, &d);
    c->count += d.count;
  }
  return 0;
}

static int count_files(kv_env *env, const char *suffix) {
  lctx c = {env, "/db/data", suffix, 2, 0};
  env->list(env, "/db/data", list_cb, &c);
  return c.count;
}

/* ---- tests ---------------------------------------------------------------------------- */

/* Runs of rows for the natural merge sort: each block walks a random stretch of rows up or
** down (a time series into a TS DESC key looks like this), a row's cells in qualifier
** order with one timestamp (kv_bulk_add_row takes them at once); some blocks repeat rows
** of earlier blocks, and tombstones are mixed in. */
static void gen_runs(uint64_t *rng, op *load, size_t n_load) {
  size_t k = 0;
  while (k < n_load) {
    int f = (int)tu_below(rng, 3), len = 1 + (int)tu_below(rng, 60);
    int start = (int)tu_below(rng, N_ROWS), dir = tu_below(rng, 2) ? 1 : -1;
    int64_t ts = 100 * (int64_t)(1 + tu_below(rng, 4));
    for (int r = 0; r < len && k < n_load; r++) {
      int row = ((start + dir * r) % N_ROWS + N_ROWS) % N_ROWS;
      for (int q = 0; q < N_QUALS && k < n_load; q++) {
        if (tu_below(rng, 3) == 0) continue;
        op *o = &load[k++];
        o->fam = f;
        snprintf(o->row, sizeof o->row, "r%03d", row);
        snprintf(o->qual, sizeof o->qual, "q%d", q);
        o->ts = ts;
        unsigned t = (unsigned)tu_below(rng, 10);
        o->type = t < 8 ? KV_PUT : t < 9 ? KV_DELETE_COLUMN : KV_DELETE_VERSION;
        snprintf(o->val, sizeof o->val, "w%llu", (unsigned long long)tu_below(rng, 99999));
      }
    }
  }
}

static bool g_reverse; /* sorted loads come row by row in descending row order */

/* The sorted load's rows in descending order, each row's cells kept in cell order. */
static void reverse_rows(op *load, size_t n) {
  op *tmp = calloc(n, sizeof *tmp);
  assert_non_null(tmp);
  size_t k = 0, end = n;
  while (end > 0) {
    size_t start = end - 1;
    while (start > 0 && load[start - 1].fam == load[end - 1].fam &&
           strcmp(load[start - 1].row, load[end - 1].row) == 0)
      start--;
    memcpy(tmp + k, load + start, (end - start) * sizeof *tmp);
    k += end - start;
    end = start;
  }
  memcpy(load, tmp, n * sizeof *tmp);
  free(tmp);
}

/* A randomized round trip: before-writes, a load, after-writes; model and bulk agree.
** sorted: distinct keys in cell order (g_reverse: rows descending); runs: gen_runs loaded
** by row; else random ops. */
static void roundtrip_as(const char *name, bool sorted, bool runs, size_t run_bytes,
                         size_t n_load) {
  uint64_t seed = tu_seed(name), rng = seed;
  st m, s;
  st_open(&m);
  st_open(&s);
  size_t n_pre = 300, n_post = 120;
  n_load = tu_scaled(n_load, 200);
  op *pre = calloc(n_pre, sizeof *pre), *post = calloc(n_post, sizeof *post);
  op *load = calloc(n_load, sizeof *load);
  for (size_t i = 0; i < n_pre; i++) gen_op(&rng, &pre[i], false);
  for (size_t i = 0; i < n_post; i++) gen_op(&rng, &post[i], false);
  if (sorted) { /* distinct keys in cell order, puts only */
    size_t k = 0;
    for (int f = 0; f < 3 && k < n_load; f++)
      for (int r = 0; r < 1000 && k < n_load; r++)
        for (int q = 0; q < N_QUALS && k < n_load; q++)
          for (int t = 3; t >= 1 && k < n_load; t--) {
            op *o = &load[k++];
            o->fam = f;
            o->type = KV_PUT;
            snprintf(o->row, sizeof o->row, "r%03d", r);
            snprintf(o->qual, sizeof o->qual, "q%d", q);
            o->ts = 100 * t;
            snprintf(o->val, sizeof o->val, "s%llu", (unsigned long long)tu_below(&rng, 999));
          }
    if (g_reverse) reverse_rows(load, n_load);
  } else if (runs) {
    gen_runs(&rng, load, n_load);
  } else {
    for (size_t i = 0; i < n_load; i++) gen_op(&rng, &load[i], false);
  }
  commit_ops(&m, pre, n_pre / 2, true);
  commit_ops(&s, pre, n_pre / 2, false);
  assert_int_equal(kv_flush(m.db, NULL), KV_OK); /* half the older data in store files */
  assert_int_equal(kv_flush(s.db, NULL), KV_OK);
  commit_ops(&m, pre + n_pre / 2, n_pre - n_pre / 2, true);
  commit_ops(&s, pre + n_pre / 2, n_pre - n_pre / 2, false);
  uint64_t snap;
  assert_int_equal(kv_snapshot_acquire(s.db, &snap), KV_OK);
  char *before = render(&s, 0);

  commit_ops(&m, load, n_load, true);
  uint64_t seq = 0, last = kv_last_sequence(s.db);
  int rc = bulk_ops_as(&s, load, n_load, run_bytes, &seq, runs || (sorted && g_reverse));
  if (rc) fail_msg("bulk load (seed %llu): %s", (unsigned long long)seed, kv_errmsg());
  assert_int_equal(seq, last + 1);
  assert_int_equal(kv_last_sequence(s.db), seq);
  assert_int_equal(count_files(s.env, ".run"), 0);
  char *want = render(&m, 0), *got = render(&s, 0);
  expect_same("after the load", seed, want, got);
  free(got);
  got = render(&s, snap); /* a snapshot from before the load does not see it */
  expect_same("snapshot before the load", seed, before, got);
  free(got);
  kv_snapshot_release(s.db, snap);
  free(want);

  commit_ops(&m, post, n_post, false);
  commit_ops(&s, post, n_post, false);
  want = render(&m, 0);
  got = render(&s, 0);
  expect_same("after later writes", seed, want, got);
  free(got);
  assert_int_equal(kv_close(s.db), KV_OK);
  st_reopen(&s);
  got = render(&s, 0);
  expect_same("after reopen", seed, want, got);
  free(got);
  assert_int_equal(kv_compact(s.db, NULL, true), KV_OK);
  assert_int_equal(kv_compact(m.db, NULL, true), KV_OK);
  free(want);
  want = render(&m, 0);
  got = render(&s, 0);
  expect_same("after major compaction", seed, want, got);
  free(got);
  free(want);
  free(before);
  free(pre);
  free(post);
  free(load);
  st_close(&m);
  st_close(&s);
}

static void roundtrip(const char *name, bool sorted, size_t run_bytes, size_t n_load) {
  roundtrip_as(name, sorted, false, run_bytes, n_load);
}

/* Ascending and descending runs, by row (kv_bulk_add_row), in memory and spilled. */
static void test_row_runs(void **state) {
  (void)state;
  for (int i = 0; i < 3; i++) roundtrip_as("bulk_row_runs", false, true, 0, 4000);
  roundtrip_as("bulk_row_runs_spilled", false, true, 4096, 3000);
}

static void test_unsorted_in_memory(void **state) {
  (void)state;
  for (int i = 0; i < 4; i++) roundtrip("bulk_unsorted", false, 0, 3000);
}

static void test_sorted(void **state) {
  (void)state;
  roundtrip("bulk_sorted", true, 0, 2000);
}

static void test_spilled_runs(void **state) {
  (void)state;
  for (int i = 0; i < 3; i++) roundtrip("bulk_runs", false, 4096, 4000);
  roundtrip("bulk_runs_sorted", true, 4096, 3000);
}

/* Spilling makes run files while the load is open; commit and free remove them. */
static void test_runs_on_disk(void **state) {
  (void)state;
  st s;
  st_open(&s);
  uint64_t rng = 7;
  kv_bulk_options bo = {.run_bytes = 4096};
  kv_bulk *bl;
  assert_int_equal(kv_bulk_begin(s.db, &bo, &bl), KV_OK);
  for (int i = 0; i < 2000; i++) {
    op o;
    gen_op(&rng, &o, true);
    assert_int_equal(bulk_op(&s, bl, &o), KV_OK);
  }
  assert_true(count_files(s.env, ".run") >= 3 * 3); /* several runs per family */
  kv_bulk_free(bl); /* abandoned: the runs go, nothing is visible */
  assert_int_equal(count_files(s.env, ".run"), 0);
  char *got = render(&s, 0);
  assert_string_equal(got, "T\nO\n");
  free(got);
  st_close(&s);
}

static void test_empty_and_errors(void **state) {
  (void)state;
  st s;
  st_open(&s);
  kv_bulk *bl;
  uint64_t seq = 0;
  assert_int_equal(kv_bulk_begin(NULL, NULL, &bl), KV_MISUSE);
  assert_int_equal(kv_bulk_begin(s.db, NULL, &bl), KV_OK);
  assert_int_equal(kv_bulk_timestamp(bl), T0);
  assert_int_equal(kv_bulk_commit(bl, &seq), KV_OK); /* empty: nothing written */
  assert_int_equal(seq, kv_last_sequence(s.db));
  assert_int_equal(kv_bulk_commit(bl, &seq), KV_MISUSE);
  assert_int_equal(kv_bulk_put(bl, s.fid[0], "r", 1, "q", 1, 5, "v", 1), KV_MISUSE);
  kv_bulk_free(bl);
  assert_int_equal(count_files(s.env, ".sf"), 0);

  assert_int_equal(kv_bulk_begin(s.db, NULL, &bl), KV_OK);
  assert_int_equal(kv_bulk_put(bl, 9999, "r", 1, "q", 1, 5, "v", 1), KV_ERR_NOTFOUND);
  assert_int_equal(kv_bulk_put(bl, s.fid[0], "", 0, "q", 1, 5, "v", 1), KV_ERR_INVALID);
  assert_int_equal(kv_bulk_put(bl, s.fid[0], "r", 1, "q", 1, -5, "v", 1), KV_ERR_INVALID);
  assert_int_equal(kv_bulk_delete(bl, s.fid[0], KV_DELETE_FAMILY, "r", 1, "q", 1, 5),
                   KV_ERR_INVALID);
  assert_int_equal(kv_bulk_delete(bl, s.fid[0], 9, "r", 1, "q", 1, 5), KV_ERR_INVALID);
  static uint8_t big[KV_MAX_ROW_KEY + 1];
  assert_int_equal(kv_bulk_put(bl, s.fid[0], big, sizeof big, "q", 1, 5, "v", 1),
                   KV_ERR_TOOBIG);
  assert_int_equal(kv_bulk_count(bl), 0);
  /* KV_TS_NOW is the load's clock; a batch's ops are added in order */
  kv_batch *b = kv_batch_new();
  assert_int_equal(kv_batch_put(b, s.fid[1], "r1", 2, "q", 1, KV_TS_NOW, "one", 3), KV_OK);
  assert_int_equal(kv_batch_put(b, s.fid[1], "r1", 2, "q", 1, KV_TS_NOW, "two", 3), KV_OK);
  assert_int_equal(kv_bulk_add_batch(bl, b), KV_OK);
  kv_batch_free(b);
  assert_int_equal(kv_bulk_count(bl), 2);
  /* nothing is visible before the commit */
  char *got = render(&s, 0);
  assert_string_equal(got, "T\nO\n");
  free(got);
  assert_int_equal(kv_bulk_commit(bl, &seq), KV_OK);
  kv_bulk_free(bl);
  got = render(&s, 0);
  char want[128];
  snprintf(want, sizeof want, "T\nr1|1:q@%lld=two,\nO\n", (long long)T0);
  assert_string_equal(got, want);
  free(got);

  /* a table dropped between the adds and the commit: nothing of the load is kept */
  assert_int_equal(kv_bulk_begin(s.db, NULL, &bl), KV_OK);
  assert_int_equal(kv_bulk_put(bl, s.fid[0], "z", 1, "q", 1, 5, "v", 1), KV_OK);
  assert_int_equal(kv_bulk_put(bl, s.fid[2], "z", 1, "q", 1, 5, "v", 1), KV_OK);
  assert_int_equal(kv_drop_table(s.db, "other"), KV_OK);
  uint64_t last = kv_last_sequence(s.db);
  assert_int_equal(kv_bulk_commit(bl, &seq), KV_ERR_NOTFOUND);
  kv_bulk_free(bl);
  assert_int_equal(kv_last_sequence(s.db), last);
  uint32_t one = s.fid[0];
  sbuf sb = {0};
  render_fams(s.db, &one, 1, 0, &sb);
  assert_true(sb.p == NULL || strstr(sb.p, "z|") == NULL);
  free(sb.p);
  st_close(&s);
}

/* A load masks older data; data written after it masks the load. */
static void test_order_against_commits(void **state) {
  (void)state;
  st s;
  st_open(&s);
  kv_batch *b = kv_batch_new();
  assert_int_equal(kv_batch_put(b, s.fid[1], "k", 1, "q", 1, 50, "old", 3), KV_OK);
  assert_int_equal(kv_batch_delete(b, s.fid[1], KV_DELETE_COLUMN, "k2", 2, "q", 1, 1000),
                   KV_OK);
  assert_int_equal(kv_commit(s.db, b, NULL), KV_OK);
  kv_batch_clear(b);
  kv_bulk *bl;
  assert_int_equal(kv_bulk_begin(s.db, NULL, &bl), KV_OK);
  /* same (row, qualifier, ts) as the committed put: the load is newer and replaces it */
  assert_int_equal(kv_bulk_put(bl, s.fid[1], "k", 1, "q", 1, 50, "new", 3), KV_OK);
  /* an older tombstone at a higher ts does not mask a put of the load */
  assert_int_equal(kv_bulk_put(bl, s.fid[1], "k2", 2, "q", 1, 10, "kept", 4), KV_OK);
  assert_int_equal(kv_bulk_put(bl, s.fid[1], "k3", 2, "q", 1, 10, "gone", 4), KV_OK);
  assert_int_equal(kv_bulk_commit(bl, NULL), KV_OK);
  kv_bulk_free(bl);
  assert_int_equal(kv_batch_delete(b, s.fid[1], KV_DELETE_FAMILY, "k3", 2, NULL, 0, 10),
                   KV_OK);
  assert_int_equal(kv_commit(s.db, b, NULL), KV_OK);
  kv_batch_free(b);
  char *got = render(&s, 0);
  assert_string_equal(got, "T\nk|1:q@50=new,\nk2|1:q@10=kept,\nO\n");
  free(got);
  st_close(&s);
}

/* The load's time is never older than the last commit's, and a commit after the load never
** takes an older one, when the clock steps back: by time as by sequence, a load comes after
** what was committed before it and before what is committed after it. */
static void test_clock_back(void **state) {
  (void)state;
  st s;
  st_open(&s);
  kv_batch *b = kv_batch_new();
  assert_int_equal(kv_batch_put(b, s.fid[1], "k", 1, "q", 1, KV_TS_NOW, "before", 6), KV_OK);
  assert_int_equal(kv_commit(s.db, b, NULL), KV_OK);
  kv_batch_clear(b);
  kv_env_mem_set_time(s.env, T0 - 5000); /* the clock steps back */
  kv_bulk *bl;
  assert_int_equal(kv_bulk_begin(s.db, NULL, &bl), KV_OK);
  assert_int_equal(kv_bulk_timestamp(bl), T0);
  assert_int_equal(kv_bulk_put(bl, s.fid[1], "k", 1, "q", 1, KV_TS_NOW, "load", 4), KV_OK);
  assert_int_equal(kv_bulk_delete(bl, s.fid[1], KV_DELETE_FAMILY, "k", 1, NULL, 0, KV_TS_NOW),
                   KV_OK); /* masks "before" (ts <= T0) and the load's own put */
  assert_int_equal(kv_bulk_put(bl, s.fid[1], "k2", 2, "q", 1, KV_TS_NOW, "load", 4), KV_OK);
  assert_int_equal(kv_bulk_commit(bl, NULL), KV_OK);
  kv_bulk_free(bl);
  kv_env_mem_set_time(s.env, T0 - 9000); /* further back */
  assert_int_equal(kv_batch_put(b, s.fid[1], "k2", 2, "q", 1, KV_TS_NOW, "after", 5), KV_OK);
  assert_int_equal(kv_commit(s.db, b, NULL), KV_OK);
  kv_batch_free(b);
  char *got = render(&s, 0);
  char want[128];
  snprintf(want, sizeof want, "T\nk2|1:q@%lld=after,\nO\n", (long long)T0);
  assert_string_equal(got, want);
  free(got);
  st_close(&s);
}

/* The caller's scratch file: records read back at the offsets appends gave; the file goes
** with the load, committed or freed, and with kv_open after a crash. */
static void test_scratch(void **state) {
  (void)state;
  st s;
  st_open(&s);
  for (int commit = 0; commit < 2; commit++) {
    kv_bulk *bl;
    assert_int_equal(kv_bulk_begin(s.db, NULL, &bl), KV_OK);
    uint64_t off[3];
    assert_int_equal(kv_bulk_scratch_append(bl, 9999, "x", 1, &off[0]), KV_ERR_NOTFOUND);
    assert_int_equal(count_files(s.env, ".run"), 0);
    assert_int_equal(kv_bulk_put(bl, s.fid[0], "r", 1, "q", 1, 5, "v", 1), KV_OK);
    assert_int_equal(kv_bulk_scratch_append(bl, s.fid[1], "alpha", 5, &off[0]), KV_OK);
    assert_int_equal(kv_bulk_scratch_append(bl, 9999, "", 0, &off[1]), KV_OK); /* made */
    assert_int_equal(kv_bulk_scratch_append(bl, 9999, "beta!", 5, &off[2]), KV_OK);
    assert_int_equal(off[0], 0);
    assert_int_equal(off[1], 5);
    assert_int_equal(off[2], 5);
    assert_int_equal(count_files(s.env, ".run"), 1);
    char buf[16] = {0};
    assert_int_equal(kv_bulk_scratch_read(bl, off[2], buf, 5), KV_OK);
    assert_string_equal(buf, "beta!");
    assert_int_equal(kv_bulk_scratch_read(bl, 2, buf, 3), KV_OK);
    assert_memory_equal(buf, "pha", 3);
    assert_int_equal(kv_bulk_scratch_read(bl, 8, buf, 3), KV_ERR_CORRUPT); /* past the end */
    kv_bulk_stats bs;
    kv_bulk_get_stats(bl, &bs);
    assert_int_equal(bs.scratch_bytes, 10);
    if (commit) {
      assert_int_equal(kv_bulk_commit(bl, NULL), KV_OK);
      assert_int_equal(kv_bulk_scratch_append(bl, s.fid[1], "x", 1, &off[0]), KV_MISUSE);
    }
    kv_bulk_free(bl);
    assert_int_equal(count_files(s.env, ".run"), 0);
  }
  /* a crash with a scratch file: kv_open removes it */
  kv_bulk *bl;
  assert_int_equal(kv_bulk_begin(s.db, NULL, &bl), KV_OK);
  uint64_t off;
  assert_int_equal(kv_bulk_scratch_append(bl, s.fid[2], "gamma", 5, &off), KV_OK);
  assert_int_equal(count_files(s.env, ".run"), 1);
  kv_env_mem_set_crashed(s.env, true);
  kv_bulk_free(bl); /* its removal fails: the env has "crashed" */
  kv_close(s.db);
  kv_env_mem_recover(s.env);
  assert_int_equal(count_files(s.env, ".run"), 1);
  st_reopen(&s);
  assert_int_equal(count_files(s.env, ".run"), 0);
  st_close(&s);
}

/* Power cuts at many points of a load. */
static void test_power_cuts(void **state) {
  (void)state;
  uint64_t seed = tu_seed("bulk_power_cuts");
  size_t n_load = 1500;
  op *pre = calloc(200, sizeof *pre), *load = calloc(n_load, sizeof *load);
  uint64_t rng = seed;
  for (int i = 0; i < 200; i++) gen_op(&rng, &pre[i], false);
  for (size_t i = 0; i < n_load; i++) gen_op(&rng, &load[i], false);
  /* the expected reads before and after the load */
  st s;
  st_open(&s);
  commit_ops(&s, pre, 200, false);
  char *before = render(&s, 0);
  assert_int_equal(bulk_ops(&s, load, n_load, 8192, NULL), KV_OK);
  char *after = render(&s, 0);
  st_close(&s);
  static const int kinds[] = {KV_FAULT_APPEND, KV_FAULT_SYNC, KV_FAULT_OPEN,
                              KV_FAULT_SYNC_DIR, KV_FAULT_RENAME};
  int n_fail = 0, n_ok = 0, max_nth = (int)tu_scaled(40, 12);
  for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
    for (int nth = 1; nth <= max_nth; nth++) {
      st_open(&s);
      commit_ops(&s, pre, 200, false);
      kv_env_mem_fail(s.env, kinds[k], (uint64_t)nth, NULL,
                      nth % 3 == 0 && kinds[k] == KV_FAULT_APPEND ? KV_FAULT_TORN
                                                                  : KV_FAULT_EIO,
                      17);
      int rc = bulk_ops(&s, load, n_load, 8192, NULL);
      kv_env_mem_set_crashed(s.env, true); /* the process dies here */
      kv_close(s.db);
      s.db = NULL;
      kv_env_mem_power_cut(s.env);
      kv_env_mem_clear_faults(s.env);
      st_reopen(&s);
      char *got = render(&s, 0);
      char what[96];
      snprintf(what, sizeof what, "fault kind %d at op %d (load %s)", kinds[k], nth,
               rc ? "failed" : "committed");
      if (rc == KV_OK || strcmp(got, before) != 0) expect_same(what, seed, after, got);
      assert_int_equal(count_files(s.env, ".run"), 0);
      free(got);
      if (rc) n_fail++;
      else n_ok++;
      st_close(&s);
      if (rc == KV_OK) break; /* the fault did not hit this load: later ones will not */
    }
  }
  fprintf(stderr, "[bulk_power_cuts] %d failed loads, %d committed\n", n_fail, n_ok);
  assert_true(n_fail > 0);
  free(before);
  free(after);
  free(pre);
  free(load);
}


/* ---- the pipeline ----------------------------------------------------------------------- */

/* Tiny segments: many buffers sorted and encoded by the worker. Sorted and reverse-sorted
** input is joined whole (no family merged); other input is merged where segments overlap,
** also with spilled runs; every read agrees with the model either way. */
static void test_segments(void **state) {
  (void)state;
  g_seg_bytes = 300;
  roundtrip("bulk_seg_sorted", true, 0, 2000);
  assert_true(g_stats.segments > 4);
  assert_true(g_stats.fams_segments >= 1);
  assert_int_equal(g_stats.fams_merged, 0);
  assert_int_equal(g_stats.segs_reframed, 0);
  g_reverse = true;
  roundtrip("bulk_seg_reverse", true, 0, 2000);
  g_reverse = false;
  assert_true(g_stats.segments > 4);
  assert_true(g_stats.fams_segments >= 1);
  assert_int_equal(g_stats.fams_merged, 0);
  uint32_t merged = 0;
  for (int i = 0; i < 3; i++) {
    roundtrip_as("bulk_seg_runs", false, true, 0, 4000);
    merged += g_stats.fams_merged;
  }
  assert_true(merged > 0); /* runs that revisit rows overlap: those families are merged */
  for (int i = 0; i < 2; i++) { /* unordered: closed at growing sizes, sorted, merged */
    roundtrip("bulk_seg_random", false, 0, 3000);
    assert_true(g_stats.segments > 3);
    assert_true(g_stats.fams_merged > 0);
  }
  roundtrip_as("bulk_seg_runs_spilled", false, true, 4096, 3000);
  roundtrip("bulk_seg_sorted_spilled", true, 4096, 3000);
  /* Encoded segments give their raw memory back: a sorted load whose raw cells pass
  ** run_bytes, while its encoded segments do not, spills nothing (no family merged). */
  g_seg_bytes = 8192;
  size_t n = tu_scaled(24000, 200);
  roundtrip("bulk_seg_budget", true, n * 22, 24000);
  assert_int_equal(g_stats.fams_merged, 0);
  assert_true(g_stats.segments > 8);
  g_seg_bytes = 0;
}

/* The same rows loaded sorted, reverse-sorted, row-shuffled and in one buffer read the
** same. */
static void test_orders_agree(void **state) {
  (void)state;
  uint64_t seed = tu_seed("bulk_orders"), rng = seed;
  size_t n_rows = tu_scaled(3000, 300);
  op *rows = calloc(n_rows * 2, sizeof *rows);
  assert_non_null(rows);
  for (size_t r = 0; r < n_rows; r++) /* two cells a row, in cell order; distinct rows */
    for (int q = 0; q < 2; q++) {
      op *o = &rows[r * 2 + (size_t)q];
      o->fam = 1;
      o->type = KV_PUT;
      snprintf(o->row, sizeof o->row, "k%06d", (int)r);
      snprintf(o->qual, sizeof o->qual, "q%d", q);
      o->ts = 100;
      snprintf(o->val, sizeof o->val, "v%llu", (unsigned long long)tu_below(&rng, 1u << 30));
    }
  char *first = NULL;
  size_t segs[2] = {0, 200};
  for (int order = 0; order < 3; order++) {
    for (int sb = 0; sb < 2; sb++) {
      op *load = calloc(n_rows * 2, sizeof *load);
      size_t *perm = calloc(n_rows, sizeof *perm);
      for (size_t r = 0; r < n_rows; r++) perm[r] = order == 1 ? n_rows - 1 - r : r;
      if (order == 2)
        for (size_t r = n_rows - 1; r > 0; r--) {
          size_t j = (size_t)tu_below(&rng, r + 1), t = perm[r];
          perm[r] = perm[j];
          perm[j] = t;
        }
      for (size_t r = 0; r < n_rows; r++) memcpy(&load[r * 2], &rows[perm[r] * 2], 2 * sizeof *load);
      st s;
      st_open(&s);
      g_seg_bytes = segs[sb];
      uint64_t seq;
      if (bulk_ops_as(&s, load, n_rows * 2, 0, &seq, true))
        fail_msg("load (seed %llu): %s", (unsigned long long)seed, kv_errmsg());
      g_seg_bytes = 0;
      if (order < 2) assert_int_equal(g_stats.fams_merged, 0);
      char *got = render(&s, 0);
      if (!first) first = got;
      else {
        expect_same("a load in another order", seed, first, got);
        free(got);
      }
      st_close(&s);
      free(perm);
      free(load);
    }
  }
  free(first);
  free(rows);
}

/* A commit during the load takes the sequence number the worker guessed: the segments are
** framed again with the load's own, and reads agree with the model. */
static void test_segment_reframe(void **state) {
  (void)state;
  st m, s;
  st_open(&m);
  st_open(&s);
  size_t n = tu_scaled(1200, 200);
  op *load = calloc(n, sizeof *load);
  for (size_t k = 0; k < n; k++) {
    op *o = &load[k];
    o->fam = 0;
    o->type = KV_PUT;
    snprintf(o->row, sizeof o->row, "r%05d", (int)(k / 2));
    snprintf(o->qual, sizeof o->qual, "q%zu", k % 2);
    o->ts = 100;
    snprintf(o->val, sizeof o->val, "v%zu", k);
  }
  op other = {.fam = 0, .type = KV_PUT, .row = "r00003", .qual = "q0", .ts = 100, .val = "mid"};
  kv_bulk_options bo = {.segment_bytes = 300};
  kv_bulk *bl;
  assert_int_equal(kv_bulk_begin(s.db, &bo, &bl), KV_OK);
  for (size_t k = 0; k < n / 2; k++) assert_int_equal(bulk_op(&s, bl, &load[k]), KV_OK);
  assert_int_equal(kv_bulk_wait(bl), KV_OK); /* these segments guessed the next seq */
  commit_ops(&s, &other, 1, true); /* during the load: older than the load */
  for (size_t k = n / 2; k < n; k++) assert_int_equal(bulk_op(&s, bl, &load[k]), KV_OK);
  uint64_t seq;
  assert_int_equal(kv_bulk_commit(bl, &seq), KV_OK);
  kv_bulk_stats bs;
  kv_bulk_get_stats(bl, &bs);
  kv_bulk_free(bl);
  assert_int_equal(bs.fams_segments, 1);
  assert_true(bs.segs_reframed > 0);
  assert_int_equal(seq, kv_last_sequence(s.db));
  commit_ops(&m, &other, 1, true);
  commit_ops(&m, load, n, true);
  char *want = render(&m, 0), *got = render(&s, 0);
  expect_same("after a load framed again", 0, want, got);
  free(got);
  assert_int_equal(kv_close(s.db), KV_OK);
  st_reopen(&s);
  got = render(&s, 0);
  expect_same("reopened", 0, want, got);
  free(got);
  free(want);
  free(load);
  st_close(&m);
  st_close(&s);
}

typedef struct fault_ctx {
  uint64_t at;      /* job that fails */
  atomic_int calls; /* jobs seen (the worker and the adding thread both call) */
} fault_ctx;

static int fail_job(void *arg, uint32_t family_id, uint64_t job) {
  fault_ctx *c = arg;
  (void)family_id;
  atomic_fetch_add(&c->calls, 1);
  return job == c->at ? KV_ERR_IO : KV_OK;
}

/* A job that fails in the worker (or at commit) fails the load with its error: the add that
** closes a later segment or the commit returns it, nothing of the load is visible and no
** file of it is left; the store takes the next load. */
static void test_worker_failure(void **state) {
  (void)state;
  uint64_t at[] = {0, 1, 5, 1000000};
  for (size_t t = 0; t < sizeof at / sizeof at[0]; t++) {
    st s;
    st_open(&s);
    op pre = {.fam = 1, .type = KV_PUT, .row = "a", .qual = "q", .ts = 5, .val = "pre"};
    commit_ops(&s, &pre, 1, true);
    char *before = render(&s, 0);
    int sf_before = count_files(s.env, ".sf");
    fault_ctx fc = {.at = at[t]};
    atomic_init(&fc.calls, 0);
    kv_bulk_options bo = {.segment_bytes = 256, .fault = fail_job, .fault_arg = &fc};
    kv_bulk *bl;
    assert_int_equal(kv_bulk_begin(s.db, &bo, &bl), KV_OK);
    int rc = KV_OK;
    for (int k = 0; k < 600 && rc == KV_OK; k++) {
      char row[16];
      snprintf(row, sizeof row, "r%05d", k);
      rc = kv_bulk_put(bl, s.fid[k % 2], row, strlen(row), "q", 1, 7, "value", 5);
    }
    if (rc == KV_OK) rc = kv_bulk_commit(bl, NULL);
    kv_bulk_free(bl);
    assert_true(atomic_load(&fc.calls) > 0);
    if (at[t] < 1000000) {
      assert_int_equal(rc, KV_ERR_IO);
      assert_non_null(strstr(kv_errmsg(), "injected failure"));
      char *got = render(&s, 0);
      assert_string_equal(got, before);
      free(got);
      assert_int_equal(count_files(s.env, ".sf"), sf_before);
      assert_int_equal(count_files(s.env, ".run"), 0);
    } else {
      assert_int_equal(rc, KV_OK);
    }
    op next = {.fam = 1, .type = KV_PUT, .row = "z", .qual = "q", .ts = 5, .val = "next"};
    assert_int_equal(bulk_ops(&s, &next, 1, 0, NULL), KV_OK);
    char *got = render(&s, 0);
    assert_non_null(strstr(got, "z|1:q@5=next,"));
    free(got);
    free(before);
    st_close(&s);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_unsorted_in_memory),
      cmocka_unit_test(test_sorted),
      cmocka_unit_test(test_row_runs),
      cmocka_unit_test(test_spilled_runs),
      cmocka_unit_test(test_runs_on_disk),
      cmocka_unit_test(test_empty_and_errors),
      cmocka_unit_test(test_order_against_commits),
      cmocka_unit_test(test_clock_back),
      cmocka_unit_test(test_scratch),
      cmocka_unit_test(test_power_cuts),
      cmocka_unit_test(test_segments),
      cmocka_unit_test(test_orders_agree),
      cmocka_unit_test(test_segment_reframe),
      cmocka_unit_test(test_worker_failure),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
