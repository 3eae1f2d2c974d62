/*
** tests/kv/test_cache_table.c: the block cache's hash table (kv/util/cache.c: open addressing,
** linear probing, backward-shift deletion, doubling) under a long random run of inserts
** that replace and evict, lookups, releases and whole-file erases, on keys that collide
** in the table's low bits (consecutive block numbers of a few files, byte offsets with
** one low half). After every step each key is looked up: a hit must give the value last
** inserted under that key and never one of an erased file; and the charges of every key
** found must add up to the cache's usage (an entry the table lost, counted but not
** reachable, would show as a difference), so must the inserts, evictions and erases add
** up to what is found. Seeded (tu_seed; the seed is printed).
** Not here: admission (test_cache_admit.c), the store's use of the cache (test_cache.c).
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "kv/util/cache.h"
#include "testutil.h"

#define NFILES 4
#define NOFF 300

typedef struct val {
  uint64_t file, off;  /* the key it was inserted under */
  uint64_t version;    /* which insert of that key */
} val;

static uint64_t last_version[NFILES][NOFF]; /* 0 = never inserted since the last erase */
static uint64_t freed;                      /* values the cache freed */
static uint64_t replaced;                   /* inserts that replaced an entry in the cache */

static void del(void *p) {
  free(p);
  freed++;
}

static uint64_t key_off(int k, int style) {
  return style == 0 ? (uint64_t)k : ((uint64_t)k << 16) | 0x1234; /* block index; offset */
}

/* Every key against the model; the hits' charges add up to the usage. */
static void check_all(kv_cache *c, int style, uint64_t seed, int step) {
  size_t sum = 0, found = 0;
  for (int f = 0; f < NFILES; f++)
    for (int k = 0; k < NOFF; k++) {
      kv_cache_entry *e = kv_cache_probe(c, (uint64_t)f + 1, key_off(k, style));
      if (!e) continue;
      const val *v = kv_cache_value(e);
      if (v->file != (uint64_t)f + 1 || v->off != key_off(k, style) ||
          v->version != last_version[f][k])
        fail_msg("seed %llu step %d: key (%d, %d) gave a stale or foreign value",
                 (unsigned long long)seed, step, f, k);
      sum += (size_t)(v->version % 97) + 1;
      found++;
      kv_cache_release(c, e);
    }
  kv_cache_counters ct;
  kv_cache_get_counters(c, &ct);
  if (ct.usage != sum)
    fail_msg("seed %llu step %d: usage %zu, entries found charge %zu", (unsigned long long)seed,
             step, ct.usage, sum);
  if (ct.inserts - ct.evictions - ct.erased - replaced != found)
    fail_msg("seed %llu step %d: %zu entries found, the counters leave %llu", (unsigned long long)seed,
             step, found, (unsigned long long)(ct.inserts - ct.evictions - ct.erased - replaced));
}

static void run(uint64_t seed, int style) {
  uint64_t st = seed;
  memset(last_version, 0, sizeof last_version);
  freed = 0;
  kv_cache *c = kv_cache_new(20000); /* one shard: ~400 entries of ~50 bytes */
  assert_non_null(c);
  kv_cache_entry *held[8] = {0};
  uint64_t version = 0;
  replaced = 0;
  int steps = (int)tu_scaled(6000, 5000); /* fewer leave evictions to chance */
  for (int step = 0; step < steps; step++) {
    int f = (int)tu_below(&st, NFILES), k = (int)tu_below(&st, NOFF);
    uint64_t r = tu_below(&st, 100);
    if (r < 60) {
      val *v = malloc(sizeof *v);
      assert_non_null(v);
      v->file = (uint64_t)f + 1;
      v->off = key_off(k, style);
      v->version = ++version;
      kv_cache_entry *probe = kv_cache_probe(c, v->file, v->off);
      if (probe) {
        replaced++;
        kv_cache_release(c, probe);
      }
      kv_cache_entry *e =
          kv_cache_insert(c, v->file, v->off, v, (size_t)(v->version % 97) + 1, del);
      assert_non_null(e);
      last_version[f][k] = v->version;
      int h = (int)tu_below(&st, 8); /* keep some entries in use for a while */
      kv_cache_release(c, held[h]);
      held[h] = e;
    } else if (r < 99 || tu_below(&st, 4)) {
      kv_cache_entry *e = kv_cache_lookup(c, (uint64_t)f + 1, key_off(k, style));
      kv_cache_release(c, e);
    } else {
      kv_cache_erase_file(c, (uint64_t)f + 1);
      memset(last_version[f], 0, sizeof last_version[f]);
    }
    if (step % 7 == 0 || r >= 99) check_all(c, style, seed, step);
  }
  check_all(c, style, seed, steps);
  for (int h = 0; h < 8; h++) kv_cache_release(c, held[h]);
  kv_cache_counters ct;
  kv_cache_get_counters(c, &ct);
  fprintf(stderr, "[cache_table] style %d: %llu inserts, %llu evictions, %llu erased, %llu "
          "replaced\n", style, (unsigned long long)ct.inserts,
          (unsigned long long)ct.evictions, (unsigned long long)ct.erased,
          (unsigned long long)replaced);
  assert_true(ct.evictions > 0 && ct.erased > 0 && replaced > 0);
  kv_cache_free(c);
  assert_int_equal(freed, version); /* every value freed once, none leaked */
}

static void test_cache_table_random(void **state) {
  (void)state;
  uint64_t seed = tu_seed("cache_table");
  run(seed, 0);
  run(seed ^ 0x5555, 1);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_cache_table_random),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
