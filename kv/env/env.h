/*
** kv/env/env.h: the file-system seam. Every file access of kv/ goes through a kv_env, a small
** vtable (LevelDB's Env, SQLite's VFS), so tests can run on an in-memory file system and
** inject faults: a failed write, sync or rename, ENOSPC, a torn write, and a power cut that
** drops everything not yet synced. The clock used for commit timestamps and TTL is part of
** the env too, so tests can move time.
**
** Two implementations: kv_env_posix() (the real disk, kv/env/env_posix.c) and kv_env_mem_new()
** (in memory, with the fault injection of kv/env/env_mem.h). The env does not know any file
** format. Paths are plain strings joined with '/'.
**
** Contract of every method: returns KV_OK or an error status (KV_ERR_IO, KV_ERR_NOSPC,
** KV_ERR_NOTFOUND for a missing file or directory) and sets the thread's kv_errmsg() to a
** message naming the path and the system error. On failure, outputs are left NULL/0.
*/
#ifndef ROWAN_KV_ENV_H
#define ROWAN_KV_ENV_H

#include <stddef.h>
#include <stdint.h>
#include "kv/kv.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct kv_file kv_file; /* an open file; the env's own type */

/* Open flags. */
enum {
  KV_OPEN_READ = 0,       /* read only; the file must exist */
  KV_OPEN_WRITE = 1,      /* read and append; create if missing */
  KV_OPEN_TRUNCATE = 2    /* with KV_OPEN_WRITE: start empty */
};

/* Called once per directory entry by list(); return non-zero to stop early. */
typedef int (*kv_env_list_fn)(void *ctx, const char *name);

struct kv_env {
  /* Open `path`. With KV_OPEN_WRITE the file is created if missing, appends go to its end.
  ** The new file's directory entry is durable only after sync_dir() of its directory. */
  int (*open)(kv_env *env, const char *path, int flags, kv_file **out);
  /* Read up to n bytes at offset off (pread); *got < n only at end of file. */
  int (*read)(kv_file *f, uint64_t off, void *buf, size_t n, size_t *got);
  /* Append n bytes at the end of the file. The data is durable only after sync(). On a
  ** failure a prefix of the data may have been written (a torn write). */
  int (*append)(kv_file *f, const void *buf, size_t n);
  /* Make all appended data durable (fdatasync). */
  int (*sync)(kv_file *f);
  /* Current size in bytes (appended data included, synced or not). */
  int (*size)(kv_file *f, uint64_t *size_out);
  /* Cut the file to `size` bytes (durable after sync()). */
  int (*truncate)(kv_file *f, uint64_t size);
  /* Close; does not sync. Always releases the handle, even when it returns an error. */
  int (*close)(kv_file *f);
  /* Atomically replace `to` with `from` (rename(2)); durable after sync_dir(). */
  int (*rename)(kv_env *env, const char *from, const char *to);
  /* Delete a file; durable after sync_dir(). KV_ERR_NOTFOUND if missing. */
  int (*remove)(kv_env *env, const char *path);
  /* Create a directory (and missing parents); KV_OK if it exists already. */
  int (*mkdir)(kv_env *env, const char *path);
  /* Remove an empty directory. */
  int (*rmdir)(kv_env *env, const char *path);
  /* Make the directory's entries (creations, renames, removals) durable (fsync of the
  ** directory). */
  int (*sync_dir)(kv_env *env, const char *path);
  /* Does the path exist (file or directory)? 1 yes, 0 no. */
  int (*exists)(kv_env *env, const char *path);
  /* Call fn for each entry of directory `path` (not "." or ".."), in no set order. */
  int (*list)(kv_env *env, const char *path, kv_env_list_fn fn, void *ctx);
  /* Take an exclusive lock on `path` (created if missing): KV_ERR_LOCKED if another holder
  ** (another process, or another open store in this process) has it. */
  int (*lock)(kv_env *env, const char *path, kv_file **lock_out);
  int (*unlock)(kv_env *env, kv_file *lock);
  /* Wall clock: milliseconds since the Unix epoch. */
  int64_t (*now_ms)(kv_env *env);
  /* Free the env itself (NULL for the static POSIX env). */
  void (*destroy)(kv_env *env);
  /* Optional (NULL: the env offers no mapping; readers pread). Map the first `len` bytes of
  ** a file opened KV_OPEN_READ read-only into memory (mmap(2)), for reads without a copy:
  ** *p stays valid until unmap(), even after the file is closed or removed. The file must
  ** not shrink while it is mapped (store files never change once written). */
  int (*map)(kv_file *f, uint64_t len, const uint8_t **p);
  /* Release a mapping made by map(). */
  void (*unmap)(const uint8_t *p, uint64_t len);
  /* Optional (NULL: no hard links; callers copy instead). Give the existing file `from` the
  ** second name `to` (link(2)); durable after sync_dir() of to's directory. Fails when `to`
  ** exists, or (KV_ERR_IO) when the file system cannot link across the two paths. */
  int (*link)(kv_env *env, const char *from, const char *to);
  /* Optional (NULL: nothing to do). The bytes [p, p+len) of a mapping made by map() are not
  ** needed soon: their whole pages leave the process's resident set (madvise(2)
  ** MADV_DONTNEED; the file's pages stay in the page cache and a later read faults them
  ** back, unchanged). A paged block index's open checks its section in the mapping with it
  ** (kv/sf/sf_read.c), so the check does not leave the section resident. */
  void (*unneed)(const uint8_t *p, uint64_t len);
};

/* The POSIX env (a process-wide singleton; do not destroy). */
kv_env *kv_env_posix(void);

/* Convenience: read a whole small file into a malloc'ed buffer (*buf freed by the caller). */
int kv_env_read_all(kv_env *env, const char *path, uint8_t **buf, size_t *len);

/* Destroy an env made by one of the constructors (kv_env_mem_new, ...). */
void kv_env_free(kv_env *env);

#ifdef __cplusplus
}
#endif
#endif /* ROWAN_KV_ENV_H */
