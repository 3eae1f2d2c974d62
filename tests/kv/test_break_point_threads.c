/*
** tests/kv/test_break_point_threads.c: point reads from several threads at once while a
** writer commits, flushes and compacts, with no block cache (every read of a store file
** decodes its row alone: kv/sf/sf_point.h) and with a tiny one (blocks admitted, refused and
** evicted under the readers). Rows of even number are written once before the threads
** start and never again: every kv_get of one must give exactly its cells, whatever files
** the writer's flushes and compactions move it into; a stable row's key plus a zero byte,
** right before the writer's rows at key plus 0x01, must never be found. Readers also run skip scans
** of one-row ranges over stable rows, forward and reverse. Seeded (tu_seed; the seed is
** printed). Clean under ASan and TSan (-DROWAN_TSAN=ON).
** Not here: readers of rows being rewritten (test_break_readers.c).
*/
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "kv/env/env_mem.h"
#include "kv/kv.h"
#include "testutil.h"

#define NROWS 400   /* row numbers; the even ones are stable */
#define NQ 6        /* qualifiers of a stable row */
#define NREADERS 3

typedef struct shared {
  kv_db *db;              /* the store */
  uint32_t fid;           /* family f */
  atomic_bool stop;       /* the writer is done */
  uint64_t seed;          /* for messages */
  char fail[512];         /* the first failure (empty: none) */
  pthread_mutex_t mu;     /* guards fail */
} shared;

typedef struct reader {
  shared *sh;             /* the shared state */
  uint64_t rng;           /* this reader's PRNG */
  atomic_uint_fast64_t reads; /* reads done (the writer waits for some) */
} reader;

static size_t row_key(int r, char *out) {
  size_t n = (size_t)sprintf(out, "p%05d", r * 3);
  if (r % 5 == 2) n += (size_t)sprintf(out + n, "~%d", r % 11); /* keys of several lengths */
  return n;
}

/* The value of qualifier q of stable row r. */
static int stable_value(int r, int q, char *out) {
  return snprintf(out, 32, "stable %d/%d%.*s", r, q, (r * 7 + q) % 13, "*************");
}

static void failf(shared *sh, const char *fmt, ...) {
  pthread_mutex_lock(&sh->mu);
  if (!sh->fail[0]) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(sh->fail, sizeof sh->fail, fmt, ap);
    va_end(ap);
  }
  pthread_mutex_unlock(&sh->mu);
  atomic_store(&sh->stop, true);
}

/* Row r (stable, even) as the store gave it is right: its NQ cells with their values. */
static bool stable_ok(int r, const kv_row *row) {
  if (row->n_cells != NQ) return false;
  for (int q = 0; q < NQ; q++) {
    char qn[4] = {'q', (char)('0' + q), 0, 0}, v[32];
    int vl = stable_value(r, q, v);
    const kv_cell_view *c = &row->cells[q];
    if (c->qual_len != 2 || memcmp(c->qual, qn, 2) != 0 || c->value_len != (uint32_t)vl ||
        memcmp(c->value, v, (size_t)vl) != 0)
      return false;
  }
  return true;
}

static void *read_loop(void *arg) {
  reader *rd = arg;
  shared *sh = rd->sh;
  kv_scan_options so;
  memset(&so, 0, sizeof so);
  so.family_ids = &sh->fid;
  so.n_families = 1;
  while (!atomic_load(&sh->stop)) {
    int r = (int)tu_below(&rd->rng, NROWS) & ~1; /* a stable row */
    char key[32];
    size_t kl = row_key(r, key);
    int shape = (int)tu_below(&rd->rng, 4);
    if (shape < 2) {
      if (shape == 1) key[kl++] = 0; /* the key plus a byte: absent */
      kv_scan *s = NULL;
      kv_row row;
      int rc = kv_get(sh->db, &so, key, kl, &s, &row);
      if (shape == 0 && (rc != KV_OK || !stable_ok(r, &row)))
        failf(sh, "seed %llu: kv_get of stable row %d: %d (%u cells) %s",
              (unsigned long long)sh->seed, r, rc, rc == KV_OK ? row.n_cells : 0,
              rc == KV_OK ? "" : kv_errmsg());
      if (shape == 1 && rc != KV_ERR_NOTFOUND)
        failf(sh, "seed %llu: kv_get of an absent key after row %d: %d",
              (unsigned long long)sh->seed, r, rc);
      kv_scan_close(s);
    } else { /* a skip scan of four stable rows, forward or reverse */
      char keys[4][2][32];
      kv_range rg[4];
      int r0 = r > NROWS - 20 ? NROWS - 20 : r;
      for (int k = 0; k < 4; k++) {
        size_t n = row_key(r0 + 4 * k, keys[k][0]);
        memcpy(keys[k][1], keys[k][0], n);
        keys[k][1][n] = 0;
        rg[k] = (kv_range){(const uint8_t *)keys[k][0], n, true, (const uint8_t *)keys[k][1],
                           n + 1, false};
      }
      so.ranges = rg;
      so.n_ranges = 4;
      so.reverse = shape == 3;
      kv_scan *s = NULL;
      int rc = kv_scan_open(sh->db, &so, &s);
      kv_row row;
      int got = 0;
      while (rc == KV_OK && (rc = kv_scan_next(s, &row)) == KV_OK) {
        int want = r0 + 4 * (shape == 3 ? 3 - got : got);
        if (got >= 4 || !stable_ok(want, &row)) {
          failf(sh, "seed %llu: skip scan from row %d (%s): row %d wrong",
                (unsigned long long)sh->seed, r0, shape == 3 ? "reverse" : "forward", got);
          break;
        }
        got++;
      }
      kv_scan_close(s);
      if (rc != KV_ERR_NOTFOUND || got != 4)
        failf(sh, "seed %llu: skip scan from row %d (%s): %d rows, then %d %s",
              (unsigned long long)sh->seed, r0, shape == 3 ? "reverse" : "forward", got, rc,
              rc == KV_ERR_NOTFOUND ? "" : kv_errmsg());
      so.ranges = NULL;
      so.n_ranges = 0;
      so.reverse = false;
    }
    atomic_fetch_add(&rd->reads, 1);
  }
  return NULL;
}

static void run(const char *name, size_t cache) {
  static shared sh;
  memset(&sh, 0, sizeof sh);
  pthread_mutex_init(&sh.mu, NULL);
  sh.seed = tu_seed(name);
  uint64_t rng = sh.seed;
  kv_env *env = kv_env_mem_new(1700000000000LL);
  kv_options o;
  kv_options_init(&o);
  o.env = env;
  o.create_if_missing = true;
  o.sync_mode = KV_SYNC_OFF;
  o.compaction_trigger = 4;
  o.block_cache_size = cache;
  assert_int_equal(kv_open("/db", &o, &sh.db), KV_OK);
  kv_family_options f;
  memset(&f, 0, sizeof f);
  f.name = "f";
  f.block_size = 256;
  f.max_versions = 1;
  assert_int_equal(kv_create_table(sh.db, "t", &f, 1), KV_OK);
  assert_int_equal(kv_family_id(sh.db, "t", "f", &sh.fid), KV_OK);
  kv_batch *b = kv_batch_new();
  assert_non_null(b);
  for (int r = 0; r < NROWS; r += 2) { /* the stable rows */
    char key[32], qn[4] = {'q', 0, 0, 0}, v[32];
    size_t kl = row_key(r, key);
    for (int q = 0; q < NQ; q++) {
      qn[1] = (char)('0' + q);
      int vl = stable_value(r, q, v);
      assert_int_equal(kv_batch_put(b, sh.fid, key, kl, qn, 2, 1000, v, (size_t)vl), KV_OK);
    }
  }
  assert_int_equal(kv_commit(sh.db, b, NULL), KV_OK);
  assert_int_equal(kv_flush(sh.db, "t"), KV_OK);
  reader rd[NREADERS];
  pthread_t th[NREADERS];
  for (int i = 0; i < NREADERS; i++) {
    rd[i].sh = &sh;
    rd[i].rng = sh.seed * 31 + (uint64_t)i + 1;
    atomic_init(&rd[i].reads, 0);
    assert_int_equal(pthread_create(&th[i], NULL, read_loop, &rd[i]), 0);
  }
  /* the writer: odd rows (and cells just after stable rows' keys), flushes, compactions */
  int rounds = (int)tu_scaled(150, 40);
  for (int k = 0; k < rounds && !atomic_load(&sh.stop); k++) {
    kv_batch_clear(b);
    for (int i = 0; i < 30; i++) {
      int r = (int)tu_below(&rng, NROWS) | 1;
      char key[32], v[24];
      size_t kl = row_key(r, key);
      int vl = snprintf(v, sizeof v, "odd %d round %d", r, k);
      if (tu_below(&rng, 6) == 0)
        assert_int_equal(kv_batch_delete(b, sh.fid, KV_DELETE_FAMILY, key, kl, "", 0,
                                         1000 + k), KV_OK);
      else
        assert_int_equal(kv_batch_put(b, sh.fid, key, kl, "q0", 2, 1000 + k, v, (size_t)vl),
                         KV_OK);
      if (tu_below(&rng, 4) == 0) { /* a row right after a stable row's key + 0x00 */
        int s = (int)tu_below(&rng, NROWS) & ~1;
        kl = row_key(s, key);
        key[kl++] = 1;
        assert_int_equal(kv_batch_put(b, sh.fid, key, kl, "q9", 2, 1000 + k, v, (size_t)vl),
                         KV_OK);
      }
    }
    assert_int_equal(kv_commit(sh.db, b, NULL), KV_OK);
    if (k % 5 == 4) assert_int_equal(kv_flush(sh.db, "t"), KV_OK);
    if (k % 23 == 22) assert_int_equal(kv_compact(sh.db, "t", k % 46 == 45), KV_OK);
  }
  /* let every reader finish some reads, then stop them */
  for (int i = 0; i < NREADERS; i++)
    while (atomic_load(&rd[i].reads) < 20 && !atomic_load(&sh.stop)) sched_yield();
  atomic_store(&sh.stop, true);
  for (int i = 0; i < NREADERS; i++) pthread_join(th[i], NULL);
  kv_batch_free(b);
  if (sh.fail[0]) fail_msg("%s", sh.fail);
  assert_int_equal(kv_close(sh.db), KV_OK);
  kv_env_free(env);
  pthread_mutex_destroy(&sh.mu);
}

static void no_cache(void **state) {
  (void)state;
  run("no_cache", KV_BLOCK_CACHE_OFF);
}

static void tiny_cache(void **state) {
  (void)state;
  run("tiny_cache", 2048);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(no_cache),
    cmocka_unit_test(tiny_cache),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
