/*
** tests/kv/test_backend_rowatomic.c: the row-atomic test backend (kv/backend/backend_rowatomic.h)
** over a local store on the in-memory env.
**
** Checked: its capabilities; row atomicity: a batch of five rows (each with cells in two
** families, its ops interleaved with the other rows') with a failure injected after k rows
** leaves rows 1..k whole and rows k+1..5 absent, for every k, with the exact error; the count
** goes on across writes and the hook is disarmed after its failure; the same row key in two tables is two rows; seeded random
** failures leave every row whole or absent, the applied rows of a failed batch a prefix of
** its rows, and the same seed fails at the same rows; timestamp snapshots: a later commit
** stamped before the snapshot is seen, one stamped after it is not (the local backend's
** sequence snapshot sees neither); refused scans (a callback filter, each local-only scan
** option) and a check-and-write across rows, with the exact errors, while the filter
** expression and a one-row check-and-write work; split keys kept as region boundaries and
** reported by split_points, bad ones refused.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "kv/backend/backend_rowatomic.h"
#include "kv/env/env_mem.h"
#include "kv/kv.h"
#include "testutil.h"

#define T0 1700000000000ll /* the mem env's clock (ms) */
#define NR 5               /* rows of the atomicity batch */

typedef struct st {
  kv_env *env;      /* in-memory file system */
  kv_db *db;        /* the store */
  kv_backend *be;   /* the row-atomic backend over it */
  kv_backend local; /* the local backend over it (for reading what was applied) */
  uint32_t a, b;    /* families a, b of table t */
  uint32_t ua;      /* family a of table u */
} st;

static void st_open(st *s) {
  s->env = kv_env_mem_new(T0);
  kv_options o;
  kv_options_init(&o);
  o.env = s->env;
  o.create_if_missing = true;
  assert_int_equal(kv_open("/db", &o, &s->db), KV_OK);
  assert_int_equal(kv_backend_rowatomic_open(s->db, &s->be), KV_OK);
  kv_backend_local_init(&s->local, s->db);
  kv_family_options fo[2] = {{.name = "a"}, {.name = "b"}};
  assert_int_equal(kv_be_create_table(s->be, "t", fo, 2, NULL, NULL, 0), KV_OK);
  assert_int_equal(kv_be_create_table(s->be, "u", fo, 1, NULL, NULL, 0), KV_OK);
  assert_int_equal(kv_be_family_id(s->be, "t", "a", &s->a), KV_OK);
  assert_int_equal(kv_be_family_id(s->be, "t", "b", &s->b), KV_OK);
  assert_int_equal(kv_be_family_id(s->be, "u", "a", &s->ua), KV_OK);
}

static void st_close(st *s) {
  kv_backend_rowatomic_close(s->be);
  assert_int_equal(kv_close(s->db), KV_OK);
  kv_env_free(s->env);
}

/* The cells of row key in families f[0..nf) read through the local backend at the latest
** state, as "qual=value;" in row order (empty when the row is absent). */
static void row_text(st *s, const uint32_t *f, uint32_t nf, const char *key, char *out,
                     size_t cap) {
  kv_scan_options o = {0};
  o.family_ids = f;
  o.n_families = nf;
  kv_backend_scan *sc = NULL;
  kv_row r;
  out[0] = 0;
  int rc = kv_be_get(&s->local, &o, key, strlen(key), &sc, &r);
  size_t len = 0;
  for (uint32_t i = 0; rc == KV_OK && i < r.n_cells; i++)
    len += (size_t)snprintf(out + len, cap - len, "%.*s=%.*s;", (int)r.cells[i].qual_len,
                            (const char *)r.cells[i].qual, (int)r.cells[i].value_len,
                            (const char *)r.cells[i].value);
  if (rc != KV_OK) assert_int_equal(rc, KV_ERR_NOTFOUND);
  kv_be_scan_close(&s->local, sc);
}

/* The atomicity batch: rows k0..k4, each x and y in family a and z in b, the ops of the
** rows interleaved (x of every row, then y of every row, then z). */
static kv_batch *five_rows(st *s, int round) {
  kv_batch *b = kv_batch_new();
  for (int q = 0; q < 3; q++)
    for (int i = 0; i < NR; i++) {
      char k[8], v[16];
      snprintf(k, sizeof k, "k%d", i);
      snprintf(v, sizeof v, "%d.%d", round, i);
      const char *qual = q == 0 ? "x" : q == 1 ? "y" : "z";
      assert_int_equal(kv_batch_put(b, q == 2 ? s->b : s->a, k, 2, qual, 1, KV_TS_NOW, v,
                                    strlen(v)),
                       KV_OK);
    }
  return b;
}

static void test_caps(void **state) {
  (void)state;
  st s;
  st_open(&s);
  const kv_backend_caps *c = &s.be->caps;
  assert_string_equal(c->name, "rowatomic");
  assert_int_equal(c->atomicity, KV_BE_ATOMIC_ROW);
  assert_int_equal(c->snapshot, KV_BE_SNAPSHOT_TIMESTAMP);
  assert_int_equal(c->filters, KV_BE_FILTER_EXPR);
  assert_int_equal(c->extensions, 0);
  assert_true(c->split_keys && c->split_points && c->check_and_write && c->reverse_scans);
  assert_ptr_equal(kv_backend_local_db(s.be), s.db);
  assert_true(kv_backend_is_rowatomic(s.be));
  assert_false(kv_backend_is_rowatomic(&s.local));
  st_close(&s);
}

static void test_row_atomicity(void **state) {
  (void)state;
  uint32_t ab[2];
  for (int k = 0; k <= NR; k++) {
    st s;
    st_open(&s);
    ab[0] = s.a;
    ab[1] = s.b;
    kv_batch *b = five_rows(&s, 1);
    kv_backend_rowatomic_fail_after(s.be, (uint64_t)k);
    int rc = kv_be_write(s.be, b, NULL);
    if (k < NR) {
      assert_int_equal(rc, KV_ERR_IO);
      char want[96];
      snprintf(want, sizeof want, "rowatomic: injected failure before row %d of %d of the batch",
               k + 1, NR);
      assert_string_equal(kv_errmsg(), want);
    } else {
      assert_int_equal(rc, KV_OK);
    }
    for (int i = 0; i < NR; i++) {
      char key[8], got[128], want[128] = "";
      snprintf(key, sizeof key, "k%d", i);
      if (i < k) snprintf(want, sizeof want, "x=1.%d;y=1.%d;z=1.%d;", i, i, i);
      row_text(&s, ab, 2, key, got, sizeof got);
      assert_string_equal(got, want);
    }
    assert_int_equal(kv_backend_rowatomic_rows(s.be), (uint64_t)k);
    assert_int_equal(kv_backend_rowatomic_failures(s.be), k < NR ? 1 : 0);
    /* the count goes on across writes: with k = NR the next write fails at its first row;
       after the failure the hook is disarmed and the batch applies whole */
    kv_batch_free(b);
    b = five_rows(&s, 2);
    if (k == NR) {
      assert_int_equal(kv_be_write(s.be, b, NULL), KV_ERR_IO);
      assert_string_equal(kv_errmsg(), "rowatomic: injected failure before row 1 of 5 of the batch");
    }
    assert_int_equal(kv_be_write(s.be, b, NULL), KV_OK);
    char got[128];
    row_text(&s, ab, 2, "k4", got, sizeof got);
    assert_string_equal(got, "x=2.4;y=2.4;z=2.4;");
    kv_batch_free(b);
    st_close(&s);
  }
}

static void test_rows_by_table(void **state) {
  (void)state;
  st s;
  st_open(&s);
  kv_batch *b = kv_batch_new();
  assert_int_equal(kv_batch_put(b, s.a, "k", 1, "x", 1, KV_TS_NOW, "t1", 2), KV_OK);
  assert_int_equal(kv_batch_put(b, s.ua, "k", 1, "x", 1, KV_TS_NOW, "u1", 2), KV_OK);
  assert_int_equal(kv_batch_put(b, s.b, "k", 1, "z", 1, KV_TS_NOW, "t2", 2), KV_OK);
  kv_backend_rowatomic_fail_after(s.be, 1);
  assert_int_equal(kv_be_write(s.be, b, NULL), KV_ERR_IO);
  assert_string_equal(kv_errmsg(), "rowatomic: injected failure before row 2 of 2 of the batch");
  uint32_t ab[2] = {s.a, s.b};
  char got[64];
  row_text(&s, ab, 2, "k", got, sizeof got);
  assert_string_equal(got, "x=t1;z=t2;"); /* t's row whole, both families */
  row_text(&s, &s.ua, 1, "k", got, sizeof got);
  assert_string_equal(got, "");           /* u's row not */
  kv_batch_free(b);
  st_close(&s);
}

/* Seeded random failures over three batches of six rows: *pattern gets one letter per row
** and batch ('1' applied, '0' not). */
static void random_run(uint64_t seed, char *pattern) {
  st s;
  st_open(&s);
  uint32_t ab[2] = {s.a, s.b};
  kv_backend_rowatomic_fail_random(s.be, seed, 4);
  size_t n = 0;
  for (int batch = 0; batch < 3; batch++) {
    kv_batch *b = kv_batch_new();
    for (int i = 0; i < 6; i++) {
      char k[16];
      snprintf(k, sizeof k, "b%dr%d", batch, i);
      assert_int_equal(kv_batch_put(b, s.a, k, strlen(k), "x", 1, KV_TS_NOW, "1", 1), KV_OK);
      assert_int_equal(kv_batch_put(b, s.b, k, strlen(k), "z", 1, KV_TS_NOW, "2", 1), KV_OK);
    }
    int rc = kv_be_write(s.be, b, NULL);
    assert_true(rc == KV_OK || rc == KV_ERR_IO);
    bool gap = false;
    for (int i = 0; i < 6; i++) {
      char k[16], got[64];
      snprintf(k, sizeof k, "b%dr%d", batch, i);
      row_text(&s, ab, 2, k, got, sizeof got);
      assert_true(!strcmp(got, "x=1;z=2;") || !strcmp(got, "")); /* whole or absent */
      bool applied = got[0] != 0;
      if (applied) assert_false(gap); /* the applied rows are a prefix */
      gap |= !applied;
      pattern[n++] = applied ? '1' : '0';
    }
    assert_int_equal(rc == KV_OK, !gap);
    kv_batch_free(b);
  }
  pattern[n] = 0;
  st_close(&s);
}

static void test_random_failures(void **state) {
  (void)state;
  uint64_t seed = tu_seed("rowatomic random failures");
  int failed = 0, whole = 0;
  for (uint64_t i = 0; i < 20; i++) {
    char p1[32], p2[32];
    random_run(seed + i, p1);
    random_run(seed + i, p2);
    assert_string_equal(p1, p2); /* deterministic */
    for (int b = 0; b < 3; b++) {
      bool all = !strncmp(p1 + 6 * b, "111111", 6);
      whole += all;
      failed += !all;
    }
  }
  assert_true(failed > 0 && whole > 0);
}

/* Rows of family a that a scan at snapshot snap through be hands out, as "key;" each. */
static void scan_text(kv_backend *be, uint32_t fam, uint64_t snap, char *out, size_t cap) {
  kv_scan_options o = {0};
  o.family_ids = &fam;
  o.n_families = 1;
  o.snapshot = snap;
  kv_backend_scan *sc = NULL;
  assert_int_equal(kv_be_scan_open(be, &o, NULL, &sc), KV_OK);
  kv_row r;
  size_t len = 0;
  out[0] = 0;
  int rc;
  while ((rc = kv_be_scan_next(be, sc, &r)) == KV_OK)
    len += (size_t)snprintf(out + len, cap - len, "%.*s;", (int)r.key_len, (const char *)r.key);
  assert_int_equal(rc, KV_ERR_NOTFOUND);
  kv_be_scan_close(be, sc);
}

static void put1(st *s, const char *key, int64_t ts) {
  kv_batch *b = kv_batch_new();
  assert_int_equal(kv_batch_put(b, s->a, key, strlen(key), "x", 1, ts, "v", 1), KV_OK);
  assert_int_equal(kv_be_write(s->be, b, NULL), KV_OK);
  kv_batch_free(b);
}

static void test_timestamp_snapshot(void **state) {
  (void)state;
  st s;
  st_open(&s);
  put1(&s, "p", T0 - 10);
  uint64_t snap, seq;
  assert_int_equal(kv_be_snapshot_acquire(s.be, &snap), KV_OK);
  assert_int_equal(snap, (uint64_t)T0); /* the commit clock: the env's time */
  assert_int_equal(kv_be_snapshot_acquire(&s.local, &seq), KV_OK);
  put1(&s, "q", T0 - 5); /* committed later, stamped before the snapshot */
  put1(&s, "r", T0 + 5); /* stamped after it */
  char got[64];
  scan_text(s.be, s.a, snap, got, sizeof got);
  assert_string_equal(got, "p;q;");
  scan_text(&s.local, s.a, seq, got, sizeof got); /* an exact snapshot: neither */
  assert_string_equal(got, "p;");
  scan_text(s.be, s.a, 0, got, sizeof got); /* no snapshot: the latest state */
  assert_string_equal(got, "p;q;r;");
  kv_scan_options o = {0};
  o.family_ids = &s.a;
  o.n_families = 1;
  o.snapshot = snap;
  kv_backend_scan *sc = NULL;
  kv_row r;
  assert_int_equal(kv_be_get(s.be, &o, "r", 1, &sc, &r), KV_ERR_NOTFOUND);
  kv_be_scan_close(s.be, sc);
  sc = NULL;
  assert_int_equal(kv_be_get(s.be, &o, "q", 1, &sc, &r), KV_OK);
  kv_be_scan_close(s.be, sc);
  kv_be_snapshot_release(s.be, snap);
  kv_be_snapshot_release(&s.local, seq);
  /* a later snapshot: a commit clock that moved on */
  kv_env_mem_set_time(s.env, T0 + 100);
  assert_int_equal(kv_be_snapshot_acquire(s.be, &snap), KV_OK);
  assert_int_equal(snap, (uint64_t)(T0 + 100));
  scan_text(s.be, s.a, snap, got, sizeof got);
  assert_string_equal(got, "p;q;r;");
  kv_be_snapshot_release(s.be, snap);
  st_close(&s);
}

static bool keep_all(void *ctx, const kv_row *row) {
  (void)ctx;
  (void)row;
  return true;
}

/* Open a scan of family a with o changed by set, expecting refusal with message want. */
static void refused(st *s, void (*set)(kv_scan_options *o), const char *want) {
  kv_scan_options o = {0};
  o.family_ids = &s->a;
  o.n_families = 1;
  set(&o);
  kv_backend_scan *sc = (kv_backend_scan *)&o; /* set to NULL by the refusal */
  assert_int_equal(kv_be_scan_open(s->be, &o, NULL, &sc), KV_ERR_INVALID);
  assert_null(sc);
  assert_string_equal(kv_errmsg(), want);
  kv_row r;
  assert_int_equal(kv_be_get(s->be, &o, "p", 1, &sc, &r), KV_ERR_INVALID);
  assert_string_equal(kv_errmsg(), want);
}

static kv_batch *g_batch;
static atomic_int g_flag;
static kv_skip_prefix g_skip;
static uint32_t one_byte(void *ctx, const uint8_t *key, uint32_t len) {
  (void)ctx;
  (void)key;
  return len ? 1 : 0;
}
static void set_filter(kv_scan_options *o) { o->filter = keep_all; }
static void set_overlay(kv_scan_options *o) { o->overlay = g_batch; }
static void set_skip(kv_scan_options *o) { o->skip_prefix = &g_skip; }
static void set_vectors(kv_scan_options *o) { o->value_vectors = true; }
static void set_existence(kv_scan_options *o) { o->existence_family = 1; }
static void set_trace(kv_scan_options *o) { o->trace = (struct kv_trace *)&g_flag; }
static void set_ts_per_row(kv_scan_options *o) { o->ts_per_row = true; }
static void set_interrupt(kv_scan_options *o) { o->interrupt = &g_flag; }

static void test_refused(void **state) {
  (void)state;
  st s;
  st_open(&s);
  put1(&s, "p", KV_TS_NOW);
  put1(&s, "q", KV_TS_NOW);
  g_batch = kv_batch_new();
  g_skip = (kv_skip_prefix){one_byte, NULL, NULL, 0, 0};
  refused(&s, set_filter, "a callback filter is not supported by backend rowatomic");
  refused(&s, set_overlay, "scan option overlay is not supported by backend rowatomic");
  refused(&s, set_skip, "scan option skip_prefix is not supported by backend rowatomic");
  refused(&s, set_vectors, "scan option value_vectors is not supported by backend rowatomic");
  refused(&s, set_existence,
          "scan option existence_family is not supported by backend rowatomic");
  refused(&s, set_trace, "scan option trace is not supported by backend rowatomic");
  refused(&s, set_ts_per_row, "scan option ts_per_row is not supported by backend rowatomic");
  refused(&s, set_interrupt, "scan option interrupt is not supported by backend rowatomic");
  /* the filter expression is taken: a:x = 'v' on row p only after q changes */
  kv_batch *b = kv_batch_new();
  assert_int_equal(kv_batch_put(b, s.a, "q", 1, "x", 1, KV_TS_NOW, "w", 1), KV_OK);
  assert_int_equal(kv_be_write(s.be, b, NULL), KV_OK);
  kv_fx_node fx = {KV_FX_CMP, KV_FX_EQ, 0, s.a, (const uint8_t *)"x", 1, (const uint8_t *)"v", 1};
  kv_filter_expr e = {&fx, 1};
  kv_backend_read x = {&e, NULL, 0};
  kv_scan_options o = {0};
  o.family_ids = &s.a;
  o.n_families = 1;
  kv_backend_scan *sc = NULL;
  assert_int_equal(kv_be_scan_open(s.be, &o, &x, &sc), KV_OK);
  kv_row r;
  assert_int_equal(kv_be_scan_next(s.be, sc, &r), KV_OK);
  assert_memory_equal(r.key, "p", 1);
  assert_int_equal(kv_be_scan_next(s.be, sc, &r), KV_ERR_NOTFOUND);
  kv_be_scan_close(s.be, sc);
  /* check-and-write: one row applies; a batch with another row is refused, nothing applied */
  kv_backend_check chk = {s.a, (const uint8_t *)"p", 1, (const uint8_t *)"x", 1,
                          (const uint8_t *)"v", 1};
  kv_batch_clear(b);
  assert_int_equal(kv_batch_put(b, s.b, "p", 1, "z", 1, KV_TS_NOW, "c", 1), KV_OK);
  bool applied = false;
  assert_int_equal(kv_be_check_and_write(s.be, &chk, b, &applied, NULL), KV_OK);
  assert_true(applied);
  assert_int_equal(kv_batch_put(b, s.b, "q", 1, "z", 1, KV_TS_NOW, "c", 1), KV_OK);
  assert_int_equal(kv_be_check_and_write(s.be, &chk, b, &applied, NULL), KV_ERR_INVALID);
  assert_false(applied);
  assert_string_equal(kv_errmsg(), "check_and_write of rows other than the checked one is not "
                                   "supported by backend rowatomic");
  char got[64];
  row_text(&s, &s.b, 1, "q", got, sizeof got);
  assert_string_equal(got, "");
  kv_batch_free(b);
  kv_batch_free(g_batch);
  st_close(&s);
}

static void on_split(void *ctx, const uint8_t *key, uint32_t len) {
  char *out = ctx;
  size_t n = strlen(out);
  snprintf(out + n, 64 - n, "%.*s;", (int)len, (const char *)key);
}

static void test_split_keys(void **state) {
  (void)state;
  st s;
  st_open(&s);
  static const uint8_t *const keys[] = {(const uint8_t *)"g", (const uint8_t *)"p",
                                        (const uint8_t *)"t"};
  static const uint32_t lens[] = {1, 1, 1};
  kv_family_options fo = {.name = "f"};
  assert_int_equal(kv_be_create_table(s.be, "r", &fo, 1, keys, lens, 3), KV_OK);
  uint32_t f;
  assert_int_equal(kv_be_family_id(s.be, "r", "f", &f), KV_OK);
  char got[64] = "";
  assert_int_equal(kv_be_split_points(s.be, f, 8, on_split, got), KV_OK);
  assert_string_equal(got, "g;p;t;"); /* the region boundaries */
  got[0] = 0;
  assert_int_equal(kv_be_split_points(s.be, f, 2, on_split, got), KV_OK);
  assert_string_equal(got, "p;"); /* at most max_chunks - 1, spread */
  got[0] = 0;
  assert_int_equal(kv_be_split_points(s.be, s.a, 8, on_split, got), KV_OK);
  assert_string_equal(got, ""); /* t has one region */
  static const uint8_t *const bad[] = {(const uint8_t *)"p", (const uint8_t *)"g"};
  assert_int_equal(kv_be_create_table(s.be, "r2", &fo, 1, bad, lens, 2), KV_ERR_INVALID);
  assert_string_equal(kv_errmsg(), "split key 1 is not above split key 0");
  assert_int_equal(kv_be_drop_table(s.be, "r"), KV_OK);
  assert_int_equal(kv_be_create_table(s.be, "r", &fo, 1, NULL, NULL, 0), KV_OK);
  assert_int_equal(kv_be_family_id(s.be, "r", "f", &f), KV_OK);
  got[0] = 0;
  assert_int_equal(kv_be_split_points(s.be, f, 8, on_split, got), KV_OK);
  assert_string_equal(got, ""); /* the dropped table's keys are gone */
  st_close(&s);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_caps),
      cmocka_unit_test(test_row_atomicity),
      cmocka_unit_test(test_rows_by_table),
      cmocka_unit_test(test_random_failures),
      cmocka_unit_test(test_timestamp_snapshot),
      cmocka_unit_test(test_refused),
      cmocka_unit_test(test_split_keys),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
