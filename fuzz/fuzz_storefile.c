/*
** fuzz/fuzz_storefile.c: libFuzzer target for the store-file reader. The input is written
** as a store file into the in-memory env, opened with kv_sf_open and read forward, backward
** and by seeks. Opening or reading may fail with KV_ERR_CORRUPT; it must never crash, hang
** or leak. Most random inputs stop at the trailer or a checksum; the seed corpus holds real
** files so mutations reach the index, bloom and block paths.
*/
#include <stddef.h>
#include <stdint.h>

#include "kv/env_mem.h"
#include "kv/sf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  kv_env *env = kv_env_mem_new(1);
  kv_file *f;
  if (env->open(env, "/f.sf", KV_OPEN_WRITE | KV_OPEN_TRUNCATE, &f) == KV_OK) {
    env->append(f, data, size);
    env->sync(f);
    env->close(f);
    kv_sf_reader *r;
    if (kv_sf_open(env, "/f.sf", &r) == KV_OK) {
      kv_sf_io io = {0};
      kv_iter *it = kv_sf_iter_new(r, &io);
      if (it) {
        int n = 0;
        for (it->ops->seek_first(it); it->ops->valid(it) && n < 100000; it->ops->next(it)) n++;
        n = 0;
        for (it->ops->seek_last(it); it->ops->valid(it) && n < 100000; it->ops->prev(it)) n++;
        kv_cell t = kv_cell_row_first(data, size > 8 ? 8 : (uint32_t)size);
        it->ops->seek(it, &t);
        if (it->ops->valid(it)) it->ops->next(it);
        it->ops->seek_for_prev(it, &t);
        if (it->ops->valid(it)) it->ops->prev(it);
        (void)it->ops->status(it);
        it->ops->destroy(it);
      }
      (void)kv_sf_may_contain_row(r, data, size > 8 ? 8 : (uint32_t)size);
      uint64_t rows, bytes;
      kv_sf_estimate(r, NULL, 0, NULL, 0, &rows, &bytes);
      kv_sf_close(r);
    }
  }
  kv_env_free(env);
  return 0;
}
