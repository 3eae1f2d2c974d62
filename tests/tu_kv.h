/*
** tests/tu_kv.h: opening a kv store on an in-memory env for the kv tests, with the options
** those tests share (created if missing, no automatic compaction while a test builds its
** files: compaction_trigger 100) and a block cache of the test's choice. Include after
** <cmocka.h>: a failed open fails the test. Not for engine code.
*/
#ifndef ROWAN_TESTS_TU_KV_H
#define ROWAN_TESTS_TU_KV_H

#include <stddef.h>
#include "kv/kv.h"

/* Open (creating) the store "/db" on env with a block cache of `cache` bytes
** (KV_BLOCK_CACHE_OFF: none); the test closes it with kv_close. */
static inline kv_db *tu_kv_open_mem(kv_env *env, size_t cache) {
  kv_options o;
  kv_options_init(&o);
  o.env = env;
  o.create_if_missing = true;
  o.compaction_trigger = 100;
  o.block_cache_size = cache;
  kv_db *db = NULL;
  assert_int_equal(kv_open("/db", &o, &db), KV_OK);
  return db;
}

#endif /* ROWAN_TESTS_TU_KV_H */
