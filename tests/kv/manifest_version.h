/*
** tests/kv/manifest_version.h: a test helper (header-only, as tests/testutil.h) that turns a
** store's MANIFEST into one of an older format version, as a build before it wrote the
** store: the header record's version (docs/FORMAT.md "File header record") changes and its
** checksum with it; the edit records stay as they are. Returns the version found before.
** For cmocka programs of tests/kv only (it asserts).
*/
#ifndef ROWAN_TESTS_KV_MANIFEST_VERSION_H
#define ROWAN_TESTS_KV_MANIFEST_VERSION_H

#include <stdint.h>
#include <stdlib.h>
#include <xxhash.h>

#include "kv/env/env.h"

static inline uint8_t tu_manifest_set_version(kv_env *env, const char *path, uint8_t version) {
  uint8_t *buf;
  size_t len;
  assert_int_equal(kv_env_read_all(env, path, &buf, &len), KV_OK);
  assert_true(len > 28);
  assert_memory_equal(buf + 16, "ROWANMF1", 8);
  uint8_t was = buf[24];
  buf[24] = version;
  uint64_t h = XXH3_64bits(buf + 16, 12);
  for (int k = 0; k < 8; k++) buf[8 + k] = (uint8_t)(h >> (8 * k));
  kv_file *fl;
  assert_int_equal(env->open(env, path, KV_OPEN_WRITE | KV_OPEN_TRUNCATE, &fl), KV_OK);
  assert_int_equal(env->append(fl, buf, len), KV_OK);
  env->close(fl);
  free(buf);
  return was;
}

#endif /* ROWAN_TESTS_KV_MANIFEST_VERSION_H */
