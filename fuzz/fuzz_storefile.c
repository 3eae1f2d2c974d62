/*
** fuzz/fuzz_storefile.c: libFuzzer target for the store-file reader. The input is written
** as a store file into the in-memory env, opened with kv_sf_open and read forward, backward
** and by seeks, then copied block by block into a second file as a minor compaction copies
** (kv/sf/sf_copy.h: each block's rows and cells read again without its values). Opening,
** reading or copying may fail with KV_ERR_CORRUPT; it must never crash, hang or leak. Most
** random inputs stop at the trailer or a checksum; the seed corpus holds real files so
** mutations reach the index, bloom and block paths (parted_filter.sf: 600 rows at 64 bloom
** bits a key, a partitioned filter of format version 4).
*/
#include <stddef.h>
#include <stdint.h>

#include "kv/env/env_mem.h"
#include "kv/sf/sf.h"
#include "kv/sf/sf_copy.h"

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
      kv_iter *ci = kv_sf_iter_new_opts(r, NULL, false);
      kv_sf_writer *w;
      if (ci && kv_sf_writer_open(env, "/g.sf", NULL, &w) == KV_OK) {
        kv_sf_copier cp = {0};
        uint64_t copied = 0;
        ci->ops->seek_first(ci);
        if (kv_sf_copy_blocks(&cp, w, ci, NULL, 0, &copied) == KV_OK) kv_sf_writer_finish(w, NULL);
        else kv_sf_writer_abort(w);
        kv_sf_copier_free(&cp);
      }
      if (ci) ci->ops->destroy(ci);
      (void)kv_sf_may_contain_row(r, data, size > 8 ? 8 : (uint32_t)size);
      uint64_t rows, bytes;
      uint32_t allow = 2;
      kv_sf_est q = {data, size > 8 ? 8 : (uint32_t)size, true, NULL, 0, true, 0, false, &allow};
      kv_sf_estimate(r, &q, &rows, &bytes);
      kv_sf_close(r);
    }
  }
  kv_env_free(env);
  return 0;
}
