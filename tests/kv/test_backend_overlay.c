/*
** tests/kv/test_backend_overlay.c: the client-side overlay (kv/backend/backend_overlay.h) over the
** row-atomic test backend, checked against the local store's own overlay on the same store.
**
** Checked: seeded random committed states (puts, column and family tombstones, commit-time
** and explicit timestamps, some flushed to store files) and random uncommitted batches: every
** scan (families, a qualifier projection, zero to two key ranges with either bound open or
** closed, forward and reverse, limits, a filter expression) and every get gives the rows,
** cells, timestamps and values the local store gives reading the batch itself; a read the
** merge cannot do exactly is refused with the exact error (a DELETE_VERSION op, a time
** range, max_versions above 1), and a batch with nothing for the read passes through even
** then.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "kv/backend/backend_overlay.h"
#include "kv/backend/backend_rowatomic.h"
#include "kv/env/env_mem.h"
#include "kv/kv.h"
#include "testutil.h"

#define T0 1700000000000ll /* the mem env's clock (ms) */
#define NKEYS 30           /* rows r00..r29 */
#define OUT_CAP 65536

typedef struct st {
  kv_env *env;       /* in-memory file system */
  kv_db *db;         /* the store */
  kv_backend local;  /* the local backend (reads overlays itself) */
  kv_backend *rw;    /* the row-atomic backend */
  kv_backend *ov;    /* the client-side overlay over rw */
  uint32_t f[2];     /* families a (VERSIONS 1), b (VERSIONS 3) of table t */
  uint32_t v3;       /* family a of table w */
} st;

static void st_open(st *s) {
  s->env = kv_env_mem_new(T0);
  kv_options o;
  kv_options_init(&o);
  o.env = s->env;
  o.create_if_missing = true;
  assert_int_equal(kv_open("/db", &o, &s->db), KV_OK);
  kv_backend_local_init(&s->local, s->db);
  assert_int_equal(kv_backend_rowatomic_open(s->db, &s->rw), KV_OK);
  assert_int_equal(kv_backend_overlay_open(s->rw, &s->ov), KV_OK);
  assert_true(s->ov->caps.extensions & KV_BE_EXT_OVERLAY);
  kv_family_options fo[2] = {{.name = "a"}, {.name = "b", .max_versions = 3}};
  assert_int_equal(kv_be_create_table(s->ov, "t", fo, 2, NULL, NULL, 0), KV_OK);
  assert_int_equal(kv_be_family_id(s->ov, "t", "a", &s->f[0]), KV_OK);
  assert_int_equal(kv_be_family_id(s->ov, "t", "b", &s->f[1]), KV_OK);
  kv_family_options f3 = {.name = "a", .max_versions = 3};
  assert_int_equal(kv_be_create_table(s->ov, "w", &f3, 1, NULL, NULL, 0), KV_OK);
  assert_int_equal(kv_be_family_id(s->ov, "w", "a", &s->v3), KV_OK);
}

static void st_close(st *s) {
  kv_backend_overlay_close(s->ov);
  kv_backend_rowatomic_close(s->rw);
  assert_int_equal(kv_close(s->db), KV_OK);
  kv_env_free(s->env);
}

/* One random op on rows r00..r(nkeys-1): puts, column and family tombstones, at the commit
** time or an explicit time around it. */
static void random_op(st *s, kv_batch *b, uint64_t *rs, int nkeys, int n) {
  char k[8], q[4], v[16];
  snprintf(k, sizeof k, "r%02d", (int)tu_below(rs, (uint64_t)nkeys));
  snprintf(q, sizeof q, "q%d", (int)tu_below(rs, 3));
  snprintf(v, sizeof v, "v%d", n);
  uint32_t fam = s->f[tu_below(rs, 2)];
  int64_t ts = tu_below(rs, 2) ? KV_TS_NOW : T0 - 30 + (int64_t)tu_below(rs, 61);
  uint64_t kind = tu_below(rs, 10);
  if (kind < 6)
    assert_int_equal(kv_batch_put(b, fam, k, 3, q, 2, ts, v, strlen(v)), KV_OK);
  else if (kind < 9)
    assert_int_equal(kv_batch_delete(b, fam, KV_DELETE_COLUMN, k, 3, q, 2, ts), KV_OK);
  else
    assert_int_equal(kv_batch_delete(b, fam, KV_DELETE_FAMILY, k, 3, NULL, 0, ts), KV_OK);
}

static void cat_row(char *out, size_t *len, const kv_row *r) {
  *len += (size_t)snprintf(out + *len, OUT_CAP - *len, "%.*s:", (int)r->key_len,
                           (const char *)r->key);
  for (uint32_t i = 0; i < r->n_cells; i++) {
    const kv_cell_view *c = &r->cells[i];
    *len += (size_t)snprintf(out + *len, OUT_CAP - *len, " %u/%.*s@%lld=%.*s", c->family_id,
                             (int)c->qual_len, (const char *)c->qual, (long long)c->ts,
                             (int)c->value_len, (const char *)c->value);
  }
  *len += (size_t)snprintf(out + *len, OUT_CAP - *len, "\n");
}

/* Every row of a scan through be, or "error N: message". */
static void scan_all(kv_backend *be, const kv_scan_options *o, const kv_backend_read *x,
                     char *out) {
  size_t len = 0;
  out[0] = 0;
  kv_backend_scan *sc = NULL;
  int rc = kv_be_scan_open(be, o, x, &sc);
  kv_row r;
  while (rc == KV_OK && (rc = kv_be_scan_next(be, sc, &r)) == KV_OK) cat_row(out, &len, &r);
  if (rc != KV_ERR_NOTFOUND) snprintf(out + len, OUT_CAP - len, "error %d: %s", rc, kv_errmsg());
  kv_be_scan_close(be, sc);
}

static void get_one(kv_backend *be, const kv_scan_options *o, const char *key, char *out) {
  size_t len = 0;
  out[0] = 0;
  kv_backend_scan *sc = NULL;
  kv_row r;
  int rc = kv_be_get(be, o, key, strlen(key), &sc, &r);
  if (rc == KV_OK) cat_row(out, &len, &r);
  else snprintf(out, OUT_CAP, "rc %d", rc);
  kv_be_scan_close(be, sc);
}

static const char *const BOUNDS[] = {"r03", "r07", "r12", "r12x", "r18", "r25", "r29"};

static void test_random_against_local(void **state) {
  (void)state;
  uint64_t seed = tu_seed("client-side overlay");
  char *want = malloc(OUT_CAP), *got = malloc(OUT_CAP);
  int merged_rows = 0;
  for (int round = 0; round < (int)tu_scaled(12, 4); round++) {
    uint64_t rs = seed + (uint64_t)round * 7919;
    st s;
    st_open(&s);
    int n = 0;
    for (int c = 0; c < 4; c++) { /* the committed state */
      kv_batch *b = kv_batch_new();
      for (int i = 0; i < 30; i++) random_op(&s, b, &rs, 25, n++);
      assert_int_equal(kv_be_write(&s.local, b, NULL), KV_OK);
      kv_batch_free(b);
      if (c == 1) assert_int_equal(kv_be_flush(&s.local, "t"), KV_OK);
    }
    kv_batch *ov = kv_batch_new(); /* the transaction: rows r00..r29 (some new) */
    int n_ov = (int)tu_below(&rs, 40);
    for (int i = 0; i < n_ov; i++) random_op(&s, ov, &rs, NKEYS, n++);
    for (int q = 0; q < 40; q++) {
      kv_scan_options o = {0};
      uint64_t fams = tu_below(&rs, 3);
      uint32_t ids[2] = {s.f[fams == 2 ? 1 : 0], s.f[1]};
      o.family_ids = ids;
      o.n_families = fams == 0 ? 2 : 1;
      static const uint8_t *const pq[] = {(const uint8_t *)"q0", (const uint8_t *)"q2"};
      static const uint32_t pl[] = {2, 2};
      kv_qualifier_set qs = {s.f[0], pq, pl, 2};
      if (tu_below(&rs, 3) == 0) {
        o.qualifiers = &qs;
        o.n_qualifier_sets = 1;
      }
      kv_range rg[2];
      uint32_t nr = (uint32_t)tu_below(&rs, 3);
      uint32_t at = 0;
      for (uint32_t i = 0; i < nr; i++) { /* ascending, not overlapping */
        uint32_t lo = at + (uint32_t)tu_below(&rs, 2), hi = lo + 1 + (uint32_t)tu_below(&rs, 2);
        if (hi >= 7) break;
        rg[i] = (kv_range){(const uint8_t *)BOUNDS[lo], (uint32_t)strlen(BOUNDS[lo]),
                           tu_below(&rs, 2) == 0, (const uint8_t *)BOUNDS[hi],
                           (uint32_t)strlen(BOUNDS[hi]), tu_below(&rs, 2) == 0};
        if (tu_below(&rs, 5) == 0 && i == 0) rg[i].start = NULL, rg[i].start_len = 0;
        at = hi + 1;
        o.n_ranges = i + 1;
      }
      o.ranges = o.n_ranges ? rg : NULL;
      o.reverse = tu_below(&rs, 2) == 0;
      o.limit = tu_below(&rs, 3) == 0 ? 1 + tu_below(&rs, 8) : 0;
      o.overlay = ov;
      kv_fx_node fx = {KV_FX_CMP, KV_FX_GE, 0, s.f[0], (const uint8_t *)"q0", 2,
                       (const uint8_t *)"v5", 2};
      kv_filter_expr e = {&fx, 1};
      kv_backend_read x = {&e, NULL, 0};
      const kv_backend_read *xp = tu_below(&rs, 4) == 0 ? &x : NULL;
      scan_all(&s.local, &o, xp, want);
      scan_all(s.ov, &o, xp, got);
      if (strcmp(want, got) != 0)
        fail_msg("seed %llu round %d scan %d: the local store gave\n%s\nthe client-side "
                 "overlay\n%s", (unsigned long long)seed, round, q, want, got);
    }
    kv_scan_options o = {0};
    o.family_ids = s.f;
    o.n_families = 2;
    o.overlay = ov;
    for (int k = 0; k < NKEYS; k++) {
      char key[8];
      snprintf(key, sizeof key, "r%02d", k);
      get_one(&s.local, &o, key, want);
      get_one(s.ov, &o, key, got);
      if (strcmp(want, got) != 0)
        fail_msg("seed %llu round %d get %s: the local store gave\n%s\nthe client-side "
                 "overlay\n%s", (unsigned long long)seed, round, key, want, got);
      merged_rows += want[0] == 'r';
    }
    kv_batch_free(ov);
    st_close(&s);
  }
  assert_true(merged_rows > 0);
  free(want);
  free(got);
}

static void test_refused(void **state) {
  (void)state;
  st s;
  st_open(&s);
  char *out = malloc(OUT_CAP);
  kv_batch *ov = kv_batch_new();
  kv_scan_options o = {0};
  o.family_ids = s.f;
  o.n_families = 1;
  o.overlay = ov;
  assert_int_equal(kv_batch_delete(ov, s.f[0], KV_DELETE_VERSION, "r01", 3, "q0", 2, T0), KV_OK);
  scan_all(s.ov, &o, NULL, out);
  assert_string_equal(out, "error 7: a read of a transaction's own writes with a DELETE_VERSION "
                           "op is not supported by backend rowatomic");
  kv_batch_clear(ov);
  assert_int_equal(kv_batch_put(ov, s.f[0], "r01", 3, "q0", 2, KV_TS_NOW, "x", 1), KV_OK);
  o.ts_max = T0 + 1;
  scan_all(s.ov, &o, NULL, out);
  assert_string_equal(out, "error 7: a read of a transaction's own writes with a time range is "
                           "not supported by backend rowatomic");
  o.ts_max = 0;
  o.max_versions = 2;
  scan_all(s.ov, &o, NULL, out);
  assert_string_equal(out, "error 7: a read of a transaction's own writes with max_versions "
                           "above 1 is not supported by backend rowatomic");
  o.family_ids = &s.v3; /* ops only in t: nothing to merge, passes through */
  scan_all(s.ov, &o, NULL, out);
  assert_string_equal(out, "");
  kv_batch_free(ov);
  free(out);
  st_close(&s);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_random_against_local),
      cmocka_unit_test(test_refused),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
