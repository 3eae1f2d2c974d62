/*
** kv/env/env_mem.h: an in-memory kv_env for tests, with fault injection.
**
** Files and directories live in memory. Each file remembers which of its bytes were synced,
** and each directory which of its entries were synced (sync_dir), so kv_env_mem_power_cut()
** can simulate a power cut: every file falls back to its last synced content, and every
** directory to its last synced entries (a created-but-unsynced file disappears; an unsynced
** rename is undone). Directories themselves are durable as soon as mkdir returns (only
** their entries need sync_dir). Paths are normalized ("a//b/./c/" is "a/b/c"); a relative
** path's root is ".". Faults can be armed to fail the Nth matching operation from now.
** All of it is thread-safe (one mutex per env).
*/
#ifndef ROWAN_KV_ENV_MEM_H
#define ROWAN_KV_ENV_MEM_H

#include <stdbool.h>
#include <stdint.h>
#include "kv/env/env.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A new, empty in-memory env with its clock starting at `now_ms` (0 = the real clock).
** Free with kv_env_free(). */
kv_env *kv_env_mem_new(int64_t now_ms);

/* Operations a fault can be armed on. */
enum kv_fault_op {
  KV_FAULT_APPEND = 0,
  KV_FAULT_SYNC = 1,
  KV_FAULT_RENAME = 2,
  KV_FAULT_OPEN = 3,    /* open for writing (creation) */
  KV_FAULT_REMOVE = 4,
  KV_FAULT_SYNC_DIR = 5
};

/* What an armed fault does. */
enum kv_fault_kind {
  KV_FAULT_EIO = 0,     /* the operation fails with KV_ERR_IO; nothing happens */
  KV_FAULT_ENOSPC = 1,  /* the operation fails with KV_ERR_NOSPC; nothing happens */
  KV_FAULT_TORN = 2     /* append only: the first `torn_bytes` bytes land, then KV_ERR_IO */
};

/* Arm a fault: the `nth` (1 = next) operation of kind `op` whose path contains
** `path_substr` (NULL = any path) fails as `kind`. One fault per op kind at a time;
** arming again replaces it. Faults fire once. */
void kv_env_mem_fail(kv_env *env, int op, uint64_t nth, const char *path_substr, int kind,
                     size_t torn_bytes);
/* Disarm all faults. */
void kv_env_mem_clear_faults(kv_env *env);

/* Simulate a power cut: drop every unsynced byte and directory change. Open kv_file handles
** stay usable but see the reverted state (their writers should be closed without use; kv
** tests close the store first with kv_env_mem_crash_close semantics: see below). */
void kv_env_mem_power_cut(kv_env *env);

/* From now on, every operation fails with KV_ERR_IO ("crashed") until
** kv_env_mem_power_cut() or kv_env_mem_recover() is called. Lets a test stop a store at an
** exact point, as if the process died, then close its handles safely. */
void kv_env_mem_set_crashed(kv_env *env, bool crashed);
/* Leave crashed mode keeping every byte written so far, synced or not: a process crash
** without a power cut (what KV_SYNC_NORMAL survives). */
void kv_env_mem_recover(kv_env *env);

/* Counters since creation (for group commit and I/O tests). */
typedef struct kv_env_mem_stats {
  uint64_t appends, syncs, sync_dirs, renames, removes, opens, bytes_appended, reads,
      bytes_read;
} kv_env_mem_stats;
void kv_env_mem_get_stats(kv_env *env, kv_env_mem_stats *out);

/* Offer map()/unmap() (kv/env/env.h) from now on, or stop offering them. A mapping is a private
** copy of the file's bytes at map time, exactly `len` long (so a sanitizer catches a read
** past it); the env's read counters do not count reads through it. Off in a new env. */
void kv_env_mem_set_map(kv_env *env, bool on);

/* Move the env's clock (for TTL tests). */
void kv_env_mem_set_time(kv_env *env, int64_t now_ms);

/* Test helpers that damage stored bytes in place, ignoring sync state (the damage is
** treated as synced): overwrite one byte, or cut a file's length. */
int kv_env_mem_set_byte(kv_env *env, const char *path, uint64_t off, uint8_t value);
int kv_env_mem_get_byte(kv_env *env, const char *path, uint64_t off, uint8_t *value);
int kv_env_mem_shrink(kv_env *env, const char *path, uint64_t new_size);
/* Size of a file (all bytes, synced or not), or -1 if missing. */
int64_t kv_env_mem_file_size(kv_env *env, const char *path);

#ifdef __cplusplus
}
#endif
#endif /* ROWAN_KV_ENV_MEM_H */
