/*
** kv/db/db_estimate.c: the planner's estimate of the rows and bytes a key range holds in one
** column family (kv/kv.h kv_estimate_range, kv_estimate_rows): the sum over the family's
** store files (kv/sf/sf_estimate.c: block index counts, and the rows of the blocks the range
** cuts counted from their keys while the caller's allowance of block reads lasts) and its
** memstores (kv/db/memstore.h kv_memstore_estimate: walked cell by cell, then extrapolated).
**
** The family's file and memstore lists are taken under the store's mutex, each file and
** memstore referenced, and the mutex let go before any block is read: an estimate never
** holds up a commit, and a compaction that drops a file meanwhile keeps it open until the
** estimate lets go of it.
** Not here: what the planner does with the figures (planner/select.c), the file walk
** (kv/sf/sf_estimate.c).
*/
#include <stdlib.h>
#include <string.h>

#include "kv/db/db_impl.h"
#include "kv/db/memstore.h"
#include "kv/sf/sf_int.h"
#include "kv/util/status.h"

/* Distinct rows of a memstore in [range] and their cell bytes: exact in a memstore of at
** most MEM_SMALL cells; in a larger one counted exactly over the range's first MEM_EXACT
** cells and estimated past them from the skip list's upper levels (kv_memstore_estimate),
** so a plan's estimate of a wide range over a large memstore costs microseconds, not a walk
** of every cell (a prepared DELETE plans again at each run: 1 ms a run with 50,000 cells). */
#define MEM_SMALL 4096
#define MEM_EXACT 128
static void mem_estimate(kv_memstore *m, const kv_range *r, uint64_t limit, uint64_t *rows,
                         uint64_t *bytes) {
  uint64_t c = 0, n = 0, b = 0;
  uint64_t exact = kv_memstore_cells(m) <= MEM_SMALL ? UINT64_MAX : MEM_EXACT;
  const kv_range all = {NULL, 0, true, NULL, 0, true};
  if (!r) r = &all;
  kv_memstore_estimate(m, r->start, r->start_len, r->start_inclusive, r->end, r->end_len,
                       r->end_inclusive, exact, &c, &n, &b);
  if (limit && n > limit) b = (uint64_t)((double)b * (double)limit / (double)n + 0.5);
  *rows += n;
  *bytes += b;
}

int kv_estimate_range(kv_db *db, uint32_t family_id, const kv_range *range,
                      const kv_estimate_opts *opts, uint64_t *rows, uint64_t *bytes) {
  if (!db || !rows || !bytes) return kv_error(KV_MISUSE, "kv_estimate_range: NULL argument");
  *rows = 0;
  *bytes = 0;
  pthread_mutex_lock(&db->mu);
  kv_fam *f = kv_db_family(db, family_id);
  if (!f) {
    pthread_mutex_unlock(&db->mu);
    return kv_error(KV_ERR_NOTFOUND, "unknown family id %u", family_id);
  }
  uint32_t nf = f->n_files, nm = f->n_imm + 1;
  kv_sfh **files = malloc((nf ? nf : 1) * sizeof *files);
  kv_memstore **mems = malloc(nm * sizeof *mems);
  if (!files || !mems) {
    pthread_mutex_unlock(&db->mu);
    free(files);
    free(mems);
    return kv_error(KV_ERR_NOMEM, "kv_estimate_range: out of memory");
  }
  for (uint32_t i = 0; i < nf; i++) {
    files[i] = f->files[i];
    kv_sfh_ref(files[i]); /* kept open while its blocks may be read */
  }
  mems[0] = f->mem;
  for (uint32_t k = 0; k < f->n_imm; k++) mems[k + 1] = f->imms[k];
  for (uint32_t i = 0; i < nm; i++) kv_memstore_ref(mems[i]);
  pthread_mutex_unlock(&db->mu);

  kv_sf_est q;
  memset(&q, 0, sizeof q);
  if (range) {
    q.start = range->start;
    q.start_len = (uint32_t)range->start_len;
    q.start_incl = range->start_inclusive;
    q.end = range->end;
    q.end_len = (uint32_t)range->end_len;
    q.end_incl = range->end_inclusive;
  }
  if (opts) {
    q.limit = opts->limit;
    q.reverse = opts->reverse;
    q.exact = opts->exact;
  }
  kv_est_seen *seen = opts ? opts->seen : NULL;
  for (uint32_t i = 0; i < nf; i++) {
    uint64_t r = 0, b = 0;
    q.counted = NULL;
    if (seen) { /* this file's blocks counted by earlier ranges */
      uint32_t s = 0;
      while (s < seen->n && seen->file[s] != files[i]->meta.number) s++;
      if (s == seen->n && s < KV_EST_SEEN_FILES) {
        seen->file[s] = files[i]->meta.number;
        seen->block[s] = -1;
        seen->n++;
      }
      if (s < seen->n) q.counted = &seen->block[s];
    }
    kv_sf_estimate(files[i]->reader, &q, &r, &b);
    *rows += r;
    *bytes += b;
    kv_sfh_unref(files[i]);
  }
  for (uint32_t i = 0; i < nm; i++) {
    mem_estimate(mems[i], range, q.limit, rows, bytes);
    kv_memstore_unref(mems[i]);
  }
  free(files);
  free(mems);
  return KV_OK;
}

int kv_estimate_rows(kv_db *db, uint32_t family_id, const kv_range *range, uint64_t *rows,
                     uint64_t *bytes) {
  if (!db || !rows || !bytes) return kv_error(KV_MISUSE, "kv_estimate_rows: NULL argument");
  return kv_estimate_range(db, family_id, range, NULL, rows, bytes);
}
