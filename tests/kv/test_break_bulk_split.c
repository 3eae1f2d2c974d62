/*
** tests/kv/test_break_bulk_split.c: attacks on the bulk load's commit merge (kv/bulk/bulk_merge.c)
** where it splits a family's merge into two key ranges on two threads, and on a load that
** fails. Against a model store that commits the same operations one batch per operation in
** the order added (kv/bulk/bulk.h: a load reads exactly so), comparing every version of both
** families (one keeps 3 versions) after the load, after a major compaction and after
** reopen.
** Shapes: split_cells of 1, 2, 3 and 5 (the split point on the first or last cell, inside
** the one row all cells share, between versions of one column, on a tombstone), one giant
** row in many overlapping segments, two rows alternating, duplicate cells (same row,
** qualifier, timestamp) in several segments (the last added wins), tombstones of every kind
** on the split row, empty values and long keys equal up to their last byte.
** Failures: an I/O error or ENOSPC on the nth file append / sync / rename during the
** commit, and the worker's fault hook: the commit reports it, the store reads exactly as
** before (also after reopen) and takes a new load. A scan opened before the commit sees
** nothing of the load. Seeded (tu_seed); uses kv/kv.h, kv/bulk/bulk.h and kv/env/env_mem.h only.
** Not here: the block-wise merge on time-series shapes (tests/kv/test_bulk_merge.c).
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

#define NOW0 1700000000000ll

/* One operation of a load. */
typedef struct op {
  int fam;          /* 0 or 1 */
  int type;         /* KV_PUT or a tombstone type */
  uint8_t row[300]; /* row key */
  size_t row_len;   /* its length */
  char qual[4];     /* qualifier (NUL-terminated; "" for DELETE_FAMILY) */
  int64_t ts;       /* timestamp */
  uint8_t val[40];  /* value */
  size_t val_len;   /* its length */
} op;

/* A store and its family ids. */
typedef struct st {
  kv_env *env;     /* in-memory file system */
  kv_db *db;       /* the store */
  uint32_t fid[2]; /* families: a (VERSIONS 3, small blocks), b (VERSIONS 1) */
} st;

static void st_open(st *s, bool create) {
  kv_options o;
  kv_options_init(&o);
  o.env = s->env;
  o.create_if_missing = create;
  o.compaction_trigger = 100;
  o.block_cache_size = 64u << 10;
  assert_int_equal(kv_open("/db", &o, &s->db), KV_OK);
  if (create) {
    kv_family_options fo[2] = {{.name = "a", .max_versions = 3, .block_size = 256},
                               {.name = "b", .max_versions = 1, .block_size = 512}};
    assert_int_equal(kv_create_table(s->db, "t", fo, 2), KV_OK);
  }
  assert_int_equal(kv_family_id(s->db, "t", "a", &s->fid[0]), KV_OK);
  assert_int_equal(kv_family_id(s->db, "t", "b", &s->fid[1]), KV_OK);
}

static void st_new(st *s) {
  memset(s, 0, sizeof *s);
  s->env = kv_env_mem_new(NOW0);
  st_open(s, true);
}

static void st_free(st *s) {
  assert_int_equal(kv_close(s->db), KV_OK);
  kv_env_free(s->env);
}

static void st_reopen(st *s) {
  assert_int_equal(kv_close(s->db), KV_OK);
  st_open(s, false);
}

/* Every version of both families, as text. */
static void dump(st *s, sbuf *out) {
  out->len = 0;
  sb_add(out, "");
  kv_scan_options so;
  memset(&so, 0, sizeof so);
  so.family_ids = s->fid;
  so.n_families = 2;
  so.max_versions = 10;
  kv_scan *sc;
  kv_row r;
  assert_int_equal(kv_scan_open(s->db, &so, &sc), KV_OK);
  int rc;
  while ((rc = kv_scan_next(sc, &r)) == KV_OK) {
    for (uint32_t i = 0; i < r.key_len; i++) sb_add(out, "%02x", r.key[i]);
    sb_add(out, ":");
    for (uint32_t i = 0; i < r.n_cells; i++) {
      const kv_cell_view *c = &r.cells[i];
      sb_add(out, "%s%u/%.*s@%lld=", i ? "," : "", c->family_id == s->fid[0] ? 0u : 1u,
             (int)c->qual_len, (const char *)c->qual, (long long)c->ts);
      for (uint32_t k = 0; k < c->value_len; k++) sb_add(out, "%02x", c->value[k]);
    }
    sb_add(out, "\n");
  }
  assert_int_equal(rc, KV_ERR_NOTFOUND);
  kv_scan_close(sc);
}

/* The model: each op committed on its own, in order. */
static void model_apply(st *s, const op *ops, size_t n) {
  kv_batch *b = kv_batch_new();
  assert_non_null(b);
  for (size_t i = 0; i < n; i++) {
    const op *o = &ops[i];
    kv_batch_clear(b);
    if (o->type == KV_PUT)
      assert_int_equal(kv_batch_put(b, s->fid[o->fam], o->row, o->row_len, o->qual,
                                    strlen(o->qual), o->ts, o->val, o->val_len),
                       KV_OK);
    else
      assert_int_equal(kv_batch_delete(b, s->fid[o->fam], o->type, o->row, o->row_len,
                                       o->qual, strlen(o->qual), o->ts),
                       KV_OK);
    assert_int_equal(kv_commit(s->db, b, NULL), KV_OK);
  }
  kv_batch_free(b);
}

typedef struct fault_plan {
  int op;        /* kv_fault_op to arm, or -1 for the worker's hook, or -2 for none */
  uint64_t nth;  /* which one fails */
  int kind;      /* kv_fault_kind */
} fault_plan;

static uint64_t g_merged; /* families merged by the loads so far (kv_bulk_stats) */

static int worker_fault(void *arg, uint32_t family_id, uint64_t job) {
  (void)family_id;
  const fault_plan *f = arg;
  return job + 1 == f->nth ? KV_ERR_IO : KV_OK;
}

/* Load ops[0..n) into s with the given split and segment size; returns the commit's code
** (an add's error is returned as is, the load freed). */
static int bulk_apply(st *s, const op *ops, size_t n, uint64_t split, size_t seg,
                      const fault_plan *f) {
  kv_bulk_options bo = {.run_bytes = 1u << 20, .segment_bytes = seg, .split_cells = split};
  if (f && f->op == -1) {
    bo.fault = worker_fault;
    bo.fault_arg = (void *)f;
  }
  kv_bulk *b;
  assert_int_equal(kv_bulk_begin(s->db, &bo, &b), KV_OK);
  int rc = KV_OK;
  for (size_t i = 0; i < n && rc == KV_OK; i++) {
    const op *o = &ops[i];
    if (o->type == KV_PUT)
      rc = kv_bulk_put(b, s->fid[o->fam], o->row, o->row_len, o->qual, strlen(o->qual), o->ts,
                       o->val, o->val_len);
    else
      rc = kv_bulk_delete(b, s->fid[o->fam], o->type, o->row, o->row_len, o->qual,
                          strlen(o->qual), o->ts);
  }
  if (rc == KV_OK) {
    if (f && f->op >= 0) kv_env_mem_fail(s->env, f->op, f->nth, NULL, f->kind, 0);
    rc = kv_bulk_commit(b, NULL);
    kv_env_mem_clear_faults(s->env);
  }
  kv_bulk_stats bs;
  kv_bulk_get_stats(b, &bs);
  g_merged += bs.fams_merged;
  kv_bulk_free(b);
  return rc;
}

/* Row key number r of a shape: long keys sharing all but their last bytes. */
static void make_row(op *o, int r, bool longkeys) {
  if (longkeys) {
    o->row_len = 250 + (size_t)(r % 3);
    memset(o->row, 0xa5, o->row_len);
    o->row[o->row_len - 1] = (uint8_t)r;
    o->row[o->row_len - 2] = (uint8_t)(r >> 8);
  } else {
    o->row_len = (size_t)snprintf((char *)o->row, sizeof o->row, "r%04d", r);
  }
}

/* Random ops over `nrows` rows (1 = one giant row), few qualifiers and timestamps so that
** versions, duplicates and tombstones meet. */
static void random_ops(uint64_t *rs, op *ops, size_t n, int nrows, bool longkeys,
                       bool alternate) {
  static const char *const qn[] = {"a", "b", "c", "dd", "e"};
  for (size_t i = 0; i < n; i++) {
    op *o = &ops[i];
    memset(o, 0, sizeof *o);
    int r = alternate ? (int)(i % (size_t)nrows) : (int)tu_below(rs, (uint64_t)nrows);
    make_row(o, r, longkeys);
    o->fam = (int)tu_below(rs, 2);
    uint64_t k = tu_below(rs, 20);
    o->type = k < 15 ? KV_PUT : k < 17 ? KV_DELETE_COLUMN : k < 19 ? KV_DELETE_VERSION
                                                                   : KV_DELETE_FAMILY;
    if (o->type != KV_DELETE_FAMILY) strcpy(o->qual, qn[tu_below(rs, 5)]);
    o->ts = NOW0 - (int64_t)tu_below(rs, 6);
    if (o->type == KV_PUT) {
      o->val_len = tu_below(rs, 5) == 0 ? 0 : 1 + tu_below(rs, sizeof o->val - 1);
      for (size_t j = 0; j < o->val_len; j++) o->val[j] = (uint8_t)tu_rand(rs);
    }
  }
}

static void expect_same(st *model, st *s, const char *what, uint64_t seed, int shape) {
  sbuf a = {0}, b = {0};
  dump(model, &a);
  dump(s, &b);
  if (strcmp(a.p, b.p) != 0) {
    fprintf(stderr, "seed %llu shape %d: %s differs from the model\nmodel:\n%s\nload:\n%s\n",
            (unsigned long long)seed, shape, what, a.p, b.p);
    fail();
  }
  free(a.p);
  free(b.p);
}

/* Older cells in both stores first (files and memstore), so the load also masks them. */
static void base_data(st *m, st *s, uint64_t *rs, int nrows, bool longkeys) {
  op base[60];
  random_ops(rs, base, 60, nrows, longkeys, false);
  for (int i = 0; i < 60; i++) base[i].ts -= 10; /* older than the load's cells */
  model_apply(m, base, 30);
  model_apply(s, base, 30);
  assert_int_equal(kv_flush(m->db, NULL), KV_OK);
  assert_int_equal(kv_flush(s->db, NULL), KV_OK);
  model_apply(m, base + 30, 30);
  model_apply(s, base + 30, 30);
}

static void split_extremes(void **state) {
  (void)state;
  uint64_t seed = tu_seed("split_extremes"), rs = seed;
  static const uint64_t splits[] = {1, 2, 3, 5, 40};
  static const size_t segs[] = {200, 700, 4000};
  size_t nmax = 1200;
  op *ops = malloc(nmax * sizeof *ops);
  assert_non_null(ops);
  int reps = (int)tu_scaled(24, 10);
  for (int shape = 0; shape < reps; shape++) {
    int nrows = shape % 4 == 0 ? 1 : shape % 4 == 1 ? 2 : 3 + (int)tu_below(&rs, 40);
    bool longkeys = tu_below(&rs, 2) != 0, alternate = shape % 4 == 1;
    size_t n = 100 + tu_below(&rs, nmax - 100);
    random_ops(&rs, ops, n, nrows, longkeys, alternate);
    st m, s;
    st_new(&m);
    st_new(&s);
    if (tu_below(&rs, 2)) base_data(&m, &s, &rs, nrows, longkeys);
    model_apply(&m, ops, n);
    uint64_t split = splits[tu_below(&rs, sizeof splits / sizeof splits[0])];
    size_t seg = segs[tu_below(&rs, sizeof segs / sizeof segs[0])];
    int rc = bulk_apply(&s, ops, n, split, seg, NULL);
    if (rc != KV_OK)
      fail_msg("seed %llu shape %d: commit %s", (unsigned long long)seed, shape,
               kv_status_name(rc));
    char what[96];
    snprintf(what, sizeof what, "load (rows %d, ops %zu, split %llu, segment %zu)", nrows, n,
             (unsigned long long)split, seg);
    expect_same(&m, &s, what, seed, shape);
    st_reopen(&s);
    expect_same(&m, &s, "after reopen", seed, shape);
    assert_int_equal(kv_compact(s.db, "t", true), KV_OK);
    assert_int_equal(kv_compact(m.db, "t", true), KV_OK);
    expect_same(&m, &s, "after major compaction", seed, shape);
    st_free(&m);
    st_free(&s);
  }
  fprintf(stderr, "[split_extremes] %llu family merges\n", (unsigned long long)g_merged);
  assert_true(g_merged >= (uint64_t)reps); /* the loads went through the merge */
  free(ops);
}

/* A load that fails in its commit leaves the store as it was and takes a new load. */
static void failed_commit_changes_nothing(void **state) {
  (void)state;
  uint64_t seed = tu_seed("failed_commit_changes_nothing"), rs = seed;
  size_t n = 900;
  op *ops = malloc(n * sizeof *ops);
  assert_non_null(ops);
  static const int fops[] = {KV_FAULT_APPEND, KV_FAULT_SYNC, KV_FAULT_RENAME, KV_FAULT_OPEN,
                             KV_FAULT_SYNC_DIR, -1};
  int reps = (int)tu_scaled(30, 12);
  int failed = 0;
  for (int t = 0; t < reps; t++) {
    fault_plan f = {.op = fops[tu_below(&rs, sizeof fops / sizeof fops[0])],
                    .nth = 1,
                    .kind = tu_below(&rs, 2) ? KV_FAULT_EIO : KV_FAULT_ENOSPC};
    if (f.op == KV_FAULT_APPEND || f.op == -1) f.nth = 1 + tu_below(&rs, 6);
    int nrows = 1 + (int)tu_below(&rs, 30);
    random_ops(&rs, ops, n, nrows, tu_below(&rs, 2) != 0, false);
    st m, s;
    st_new(&m);
    st_new(&s);
    base_data(&m, &s, &rs, nrows, false);
    /* a scan opened before the load must see none of it, even when it commits */
    kv_scan_options so;
    memset(&so, 0, sizeof so);
    so.family_ids = s.fid;
    so.n_families = 2;
    so.max_versions = 10;
    kv_scan *early;
    assert_int_equal(kv_scan_open(s.db, &so, &early), KV_OK);
    int rc = bulk_apply(&s, ops, n, 1 + tu_below(&rs, 50), 300, &f);
    sbuf a = {0}, b = {0};
    dump(&m, &a); /* the model without the load: what the early scan must read */
    b.len = 0;
    sb_add(&b, "");
    kv_row r;
    int src;
    while ((src = kv_scan_next(early, &r)) == KV_OK) {
      for (uint32_t i = 0; i < r.key_len; i++) sb_add(&b, "%02x", r.key[i]);
      sb_add(&b, ":");
      for (uint32_t i = 0; i < r.n_cells; i++) {
        const kv_cell_view *c = &r.cells[i];
        sb_add(&b, "%s%u/%.*s@%lld=", i ? "," : "", c->family_id == s.fid[0] ? 0u : 1u,
               (int)c->qual_len, (const char *)c->qual, (long long)c->ts);
        for (uint32_t k = 0; k < c->value_len; k++) sb_add(&b, "%02x", c->value[k]);
      }
      sb_add(&b, "\n");
    }
    assert_int_equal(src, KV_ERR_NOTFOUND);
    kv_scan_close(early);
    if (strcmp(a.p, b.p) != 0)
      fail_msg("seed %llu try %d: a scan opened before the load saw some of it", 
               (unsigned long long)seed, t);
    free(a.p);
    free(b.p);
    if (rc == KV_OK) { /* the fault did not hit this commit: it must then be complete */
      model_apply(&m, ops, n);
      expect_same(&m, &s, "a load the fault missed", seed, t);
    } else {
      failed++;
      expect_same(&m, &s, "the store after a failed load", seed, t);
    }
    /* reopen (a failed MANIFEST write leaves the store in its error state) */
    int crc = kv_close(s.db); /* may report the error state of a failed MANIFEST write */
    assert_true(crc == KV_OK || rc != KV_OK);
    st_open(&s, false);
    expect_same(&m, &s, "after reopen", seed, t);
    /* and a new load goes in whole */
    rc = bulk_apply(&s, ops, n / 2, 7, 300, NULL);
    assert_int_equal(rc, KV_OK);
    model_apply(&m, ops, n / 2);
    expect_same(&m, &s, "a load after the failed one", seed, t);
    st_free(&m);
    st_free(&s);
  }
  fprintf(stderr, "[failed_commit_changes_nothing] %d of %d commits failed\n", failed, reps);
  assert_true(failed * 3 >= reps); /* many faults hit the commit */
  free(ops);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(split_extremes),
      cmocka_unit_test(failed_commit_changes_nothing),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
