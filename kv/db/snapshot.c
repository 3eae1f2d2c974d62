/*
** kv/db/snapshot.c: read snapshots (kv_last_sequence, kv_snapshot_acquire / release, and the
** oldest one held, kv_db_oldest_snapshot, which compaction keeps rows for). A snapshot is a
** sequence number: a scan at it sees the commits numbered up to it. Acquiring one pins it in
** db->snaps under db->mu so a compaction does not drop versions that snapshot still reads.
**
** Not here: reading at a snapshot (kv/scan/scan.c, kv/db/db_vis.c), compaction's use of the oldest
** one (kv/db/compact.c).
*/
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "kv/db/db_impl.h"
#include "kv/util/status.h"

uint64_t kv_last_sequence(kv_db *db) {
  if (!db) return 0;
  return atomic_load_explicit(&db->last_seq, memory_order_acquire);
}

int kv_snapshot_acquire(kv_db *db, uint64_t *seq_out) {
  if (!db || !seq_out) return kv_error(KV_MISUSE, "kv_snapshot_acquire: NULL argument");
  pthread_mutex_lock(&db->mu);
  if (db->n_snaps == db->cap_snaps) {
    uint32_t nc = db->cap_snaps ? db->cap_snaps * 2 : 8;
    uint64_t *ns = realloc(db->snaps, nc * sizeof *ns);
    if (!ns) {
      pthread_mutex_unlock(&db->mu);
      return kv_error(KV_ERR_NOMEM, "kv_snapshot_acquire: out of memory");
    }
    db->snaps = ns;
    db->cap_snaps = nc;
  }
  uint64_t seq = atomic_load_explicit(&db->last_seq, memory_order_acquire);
  db->snaps[db->n_snaps++] = seq;
  pthread_mutex_unlock(&db->mu);
  *seq_out = seq;
  return KV_OK;
}

void kv_snapshot_release(kv_db *db, uint64_t seq) {
  if (!db) return;
  pthread_mutex_lock(&db->mu);
  for (uint32_t i = 0; i < db->n_snaps; i++) {
    if (db->snaps[i] == seq) {
      db->snaps[i] = db->snaps[--db->n_snaps];
      break;
    }
  }
  pthread_mutex_unlock(&db->mu);
}

uint64_t kv_db_oldest_snapshot(kv_db *db) {
  uint64_t m = atomic_load_explicit(&db->last_seq, memory_order_acquire);
  for (uint32_t i = 0; i < db->n_snaps; i++)
    if (db->snaps[i] < m) m = db->snaps[i];
  return m;
}
