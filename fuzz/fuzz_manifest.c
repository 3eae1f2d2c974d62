/*
** fuzz/fuzz_manifest.c: libFuzzer target for MANIFEST replay. The input is written as the
** store's MANIFEST into the in-memory env and opened (replayed into a version); damage must
** give KV_ERR_CORRUPT (or a dropped torn tail), never a crash, hang or leak.
*/
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "kv/env/env_mem.h"
#include "kv/db/manifest.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  kv_env *env = kv_env_mem_new(1);
  kv_file *f;
  env->mkdir(env, "/db");
  if (env->open(env, "/db/MANIFEST", KV_OPEN_WRITE | KV_OPEN_TRUNCATE, &f) == KV_OK) {
    env->append(f, data, size);
    env->sync(f);
    env->close(f);
    kv_manifest *m = NULL;
    kv_version v;
    memset(&v, 0, sizeof v);
    if (kv_manifest_open(env, "/db", false, &m, &v) == KV_OK) {
      kv_manifest_close(m);
      kv_version_free(&v);
    }
  }
  kv_env_free(env);
  return 0;
}
