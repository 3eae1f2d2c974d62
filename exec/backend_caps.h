/*
** exec/backend_caps.h: what the executor does when its storage backend lacks a capability
** of kv_backend_caps (kv/backend.h, docs/BACKEND.md): the capability-less path with the
** same answers where there is one, else a clear refusal naming the backend.
**
** - snapshots (exact by sequence, or by timestamp): a read that must see one cut of the
**   store pins one only when the backend's snapshots are exact (exec_backend_snapshot).
** - skip scan by prefix (KV_BE_EXT_SKIP_PREFIX): without it the scan reads the prefixes' key
**   ranges whole and the executor keeps the rows whose key after its prefix lies in one of
**   the suffix ranges, and at most rows_per_prefix rows of each prefix (exec_skip_emul).
**
** Not here: the filter residual (exec/scan.c pushed_filter); the other extensions (only
** speed or diagnostics: exec/scan.c leaves them unset); a transaction's own writes over a
** backend that cannot read them (the session stacks kv/backend/backend_overlay.h on it, exec/engine.c).
*/
#ifndef ROWAN_EXEC_BACKEND_CAPS_H
#define ROWAN_EXEC_BACKEND_CAPS_H

#include <stdbool.h>
#include <stdint.h>

#include "exec/engine.h"
#include "kv/backend.h"

/* Pin a read point for a read that must see one exact cut of the store (an index scan's
** lookups, an index backfill, CHECK INDEX): kv_be_snapshot_acquire when be's snapshots are
** exact (KV_BE_SNAPSHOT_SEQUENCE); else *snap = 0 and the reads see the latest state. A
** timestamp snapshot is not a cut: it hides cells stamped after it (a ROW_TIMESTAMP row in
** the future) and shows later commits stamped before it, so the latest state is the nearer
** answer (docs/BACKEND.md says what a concurrent writer can then do). KV_OK or kv's error;
** release with kv_be_snapshot_release only when *snap is not 0. */
int exec_backend_snapshot(kv_backend *be, uint64_t *snap);

/* A skip scan by prefix done by the executor over a plain scan of the prefixes' ranges. */
typedef struct exec_skip_emul {
  bool on;                   /* the scan is emulated */
  kv_prefix_len_fn prefix_len; void *ctx; /* the prefix of a key (kv_skip_prefix's) */
  const kv_range *suffixes;  /* ranges after the prefix (0: every key of each prefix) */
  uint32_t n_suffixes;       /* their count */
  uint32_t rows_per_prefix;  /* rows kept per prefix at most; 0 = all */
  uint8_t *last;             /* the last kept row's prefix (malloc, KV_MAX_ROW_KEY) */
  uint32_t last_len;         /* its length (0: none yet) */
  uint32_t kept;             /* rows kept of that prefix */
} exec_skip_emul;

/* Start emulating sp: EXEC_OK or EXEC_NOMEM. */
int exec_skip_emul_init(exec_skip_emul *e, const kv_skip_prefix *sp, exec_error *err);
/* Whether the row key[0..len) (one the scan's filter passed, in ascending key order) is one
** the skip scan would hand out; counts it when so. *rc: EXEC_OK, or EXEC_ERROR for a key
** without a prefix (as kv's KV_ERR_INVALID). */
bool exec_skip_emul_keep(exec_skip_emul *e, const uint8_t *key, uint32_t len, int *rc,
                         exec_error *err);
void exec_skip_emul_free(exec_skip_emul *e);

#endif /* ROWAN_EXEC_BACKEND_CAPS_H */
