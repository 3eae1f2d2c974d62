/*
** kv/backend/backend_rowatomic.h: a storage backend over the local store that gives only what HBase
** gives (issue 23, stage 2), so that the SQL layer can be tested against those guarantees
** before any network code: each row of a batch is its own commit (KV_BE_ATOMIC_ROW),
** snapshots are timestamps (KV_BE_SNAPSHOT_TIMESTAMP: a read sees the cells written up to a
** time, as an HBase scan's time range), filters only in the serializable expression form
** (KV_BE_FILTER_EXPR: no C callback), none of the local-only scan extensions (overlay, skip
** by prefix, value vectors, existence family, trace, timestamp-per-row file skipping,
** interrupt flag: a scan that sets one is refused), check-and-write on one row only, and
** split keys kept as the table's region boundaries (reported by split_points; scans are not
** cut at them). A test hook injects failures between the rows of a batch: after N rows, or
** at random from a seed, deterministically.
**
** docs/BACKEND.md describes the wrapper, its capabilities and how the SQL test suite runs
** through it (ROWAN_BACKEND=rowatomic, exec/engine.c).
**
** Not here: the local backend it wraps (kv/backend/backend_local.c), the PHOENIX-5156 index protocol
** that makes secondary indexes safe under row atomicity (a later stage).
*/
#ifndef ROWAN_KV_BACKEND_ROWATOMIC_H
#define ROWAN_KV_BACKEND_ROWATOMIC_H

#include <stdint.h>

#include "kv/backend.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Open the row-atomic backend over db (not owned: close db after
** kv_backend_rowatomic_close). *out is a backend whose caps.name is "rowatomic" and whose
** local store (kv_backend_local_db) is db. KV_OK, or KV_MISUSE (NULL argument),
** KV_ERR_NOMEM (*out NULL then). */
int kv_backend_rowatomic_open(kv_db *db, kv_backend **out);
/* Free a backend of kv_backend_rowatomic_open: its pinned snapshots are released, its split
** keys forgotten. NULL is a no-op. */
void kv_backend_rowatomic_close(kv_backend *be);
/* True when be is a backend of kv_backend_rowatomic_open. */
bool kv_backend_is_rowatomic(const kv_backend *be);

/* Test hook: after n more rows have been committed through be (counted over every write and
** check-and-write from now on), the write that would commit the next row fails before it
** with KV_ERR_IO ("rowatomic: injected failure after N rows"): the rows of that batch
** before it stay applied, the rest are not. One failure, then disarmed. */
void kv_backend_rowatomic_fail_after(kv_backend *be, uint64_t n);
/* Test hook: every row commit from now on fails first with probability 1/one_in, drawn from
** a generator seeded with seed (the same seed and the same writes fail at the same rows);
** one_in 0 turns it off. The failure is that of kv_backend_rowatomic_fail_after. */
void kv_backend_rowatomic_fail_random(kv_backend *be, uint64_t seed, uint32_t one_in);
/* Rows committed through be since it was opened (one per row of each batch applied). */
uint64_t kv_backend_rowatomic_rows(const kv_backend *be);
/* Failures injected so far. */
uint64_t kv_backend_rowatomic_failures(const kv_backend *be);

#ifdef __cplusplus
}
#endif
#endif /* ROWAN_KV_BACKEND_ROWATOMIC_H */
