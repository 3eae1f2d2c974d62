/*
** fuzz/fuzz_wal.c: libFuzzer target for WAL replay. The input is written as the newest WAL
** segment into the in-memory env and replayed; every record handed out is decoded op by op
** with kv_wal_decode_op (replay expands a record-form record, kv/db/wal.h, to the batch form
** first, so the flags of the record form are fuzzed through replay). Replay may drop a torn
** tail or report KV_ERR_CORRUPT; it must never crash, hang or leak. The seed corpus holds
** real segments, in the batch form (older builds) and in the record form.
*/
#include <stddef.h>
#include <stdint.h>

#include "kv/util/coding.h"
#include "kv/env/env_mem.h"
#include "kv/db/wal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int on_record(void *ctx, uint64_t first_seq, int64_t commit_ts, const uint8_t *payload,
                     size_t len) {
  (void)ctx; (void)first_seq; (void)commit_ts;
  const uint8_t *p = payload, *limit = payload + len;
  uint64_t count;
  p = kv_get_varint(p, limit, &count);
  if (!p) return KV_OK;
  for (uint64_t i = 0; i < count; i++) {
    kv_wal_op op;
    if (kv_wal_decode_op(&p, limit, &op) != KV_OK) break;
  }
  return KV_OK;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  kv_env *env = kv_env_mem_new(1);
  char path[256];
  kv_wal_path(path, sizeof path, "/db", 7);
  kv_file *f;
  env->mkdir(env, "/db");
  if (env->open(env, path, KV_OPEN_WRITE | KV_OPEN_TRUNCATE, &f) == KV_OK) {
    env->append(f, data, size);
    env->sync(f);
    env->close(f);
    (void)kv_wal_replay(env, "/db", 7, 1, on_record, NULL);
    (void)kv_wal_replay(env, "/db", 7, 0, on_record, NULL);
  }
  kv_env_free(env);
  return 0;
}
