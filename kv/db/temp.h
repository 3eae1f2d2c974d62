/*
** kv/db/temp.h: temporary files for the layers above kv that must put more on disk than their
** memory bound allows (a join's spilled partitions, exec/op_spill.c): one file in a family's
** store-file folder, written by appends and read back at offsets, removed when closed. Its
** name (`spill-<file number>-<process id>.tmp`) is never named in the MANIFEST, so a writable
** kv_open deletes any left behind by a crash (docs/FORMAT.md "Store directory layout").
** Nothing is synced: the data lives only as long as the handle.
**
** Not here: the bulk load's own temporary files (kv/bulk/bulk.h), anything durable.
*/
#ifndef ROWAN_KV_TEMP_H
#define ROWAN_KV_TEMP_H

#include <stddef.h>
#include <stdint.h>

#include "kv/env/env.h"
#include "kv/kv.h"

typedef struct kv_temp kv_temp;

/* Create an empty temporary file in the folder of family `family_id` of db into *out.
** KV_OK; KV_ERR_READONLY (a read-only open writes nothing in the store's folder),
** KV_ERR_NOTFOUND (no such family), KV_ERR_IO (the env's error), KV_ERR_NOMEM. */
int kv_temp_open(kv_db *db, uint32_t family_id, kv_temp **out);
/* Create an empty temporary file `rowan-spill-<pid>-<n>.tmp` in folder dir of env (made if
** missing) into *out: for a database with no local store to hold it (a remote backend,
** whose spills go to the system's temporary folder). A crash leaves the file behind (no
** store's open deletes it). KV_OK; KV_ERR_INVALID (a folder name too long), KV_ERR_IO (the
** env's error), KV_ERR_NOMEM. */
int kv_temp_open_dir(kv_env *env, const char *dir, kv_temp **out);
/* Append n bytes; *off (may be NULL) receives their offset. KV_OK or KV_ERR_IO / the env's
** error (the file is then unusable: later calls return the same error). */
int kv_temp_append(kv_temp *t, const void *p, size_t n, uint64_t *off);
/* Read n bytes at offset off into p; KV_ERR_CORRUPT when [off, off+n) is past what was
** appended or the file is short. */
int kv_temp_read(kv_temp *t, uint64_t off, void *p, size_t n);
/* Bytes appended so far. */
uint64_t kv_temp_size(const kv_temp *t);
/* Close the file and remove it (NULL is a no-op). */
void kv_temp_close(kv_temp *t);

#endif /* ROWAN_KV_TEMP_H */
