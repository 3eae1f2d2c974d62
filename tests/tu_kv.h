/*
** tests/tu_kv.h: opening a kv store on an in-memory env for the kv tests, with the options
** those tests share (created if missing, no automatic compaction while a test builds its
** files: compaction_trigger 100) and a block cache of the test's choice. Include after
** <cmocka.h>: a failed open fails the test. Not for engine code.
*/
#ifndef ROWAN_TESTS_TU_KV_H
#define ROWAN_TESTS_TU_KV_H

#include <stddef.h>
#include <stdio.h>
#include "kv/kv.h"

/* Open the store "/db" with the caller's options (env and the rest set by it); a failed
** open prints kv_errmsg() and fails the test. */
static inline kv_db *tu_kv_open_opts(const kv_options *o) {
  kv_db *db = NULL;
  int rc = kv_open("/db", o, &db);
  if (rc) fprintf(stderr, "kv_open: %s\n", kv_errmsg());
  assert_int_equal(rc, KV_OK);
  return db;
}

/* Open (creating) the store "/db" on env with a block cache of `cache` bytes
** (KV_BLOCK_CACHE_OFF: none); the test closes it with kv_close. */
static inline kv_db *tu_kv_open_mem(kv_env *env, size_t cache) {
  kv_options o;
  kv_options_init(&o);
  o.env = env;
  o.create_if_missing = true;
  o.compaction_trigger = 100;
  o.block_cache_size = cache;
  o.keep_log_on_close = true; /* a reopen replays what was committed: recovery is tested */
  return tu_kv_open_opts(&o);
}

#endif /* ROWAN_TESTS_TU_KV_H */
