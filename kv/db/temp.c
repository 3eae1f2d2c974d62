/*
** kv/db/temp.c: the temporary files of kv/db/temp.h, through the store's env (so an in-memory
** store's temporary files are in memory too). The file number keeps names unique within
** the process, the process id between processes sharing a store folder.
**
** Not here: what is written in them (their callers), the deletion at open (kv/db/db_open.c
** deletes every file of a family folder the MANIFEST does not name).
*/
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kv/db/db_impl.h"
#include "kv/util/status.h"
#include "kv/env/env.h"
#include "kv/db/temp.h"

struct kv_temp {
  kv_env *env;    /* the store's env */
  kv_file *f;     /* the open file */
  char *path;     /* its path (malloc) */
  uint64_t size;  /* bytes appended */
  int err;        /* sticky error after a failed append, or KV_OK */
};

/* Create path (in folder dir, made if missing) through env. */
static int temp_create(kv_env *env, const char *dir, const char *path, kv_temp **out) {
  kv_temp *t = calloc(1, sizeof *t);
  if (!t || !(t->path = strdup(path))) {
    free(t);
    return kv_error(KV_ERR_NOMEM, "temporary file: out of memory");
  }
  t->env = env;
  int rc = t->env->mkdir(t->env, dir);
  if (!rc) rc = t->env->open(t->env, path, KV_OPEN_WRITE | KV_OPEN_TRUNCATE, &t->f);
  if (rc) {
    free(t->path);
    free(t);
    return rc;
  }
  *out = t;
  return KV_OK;
}

int kv_temp_open(kv_db *db, uint32_t family_id, kv_temp **out) {
  *out = NULL;
  if (db->opts.read_only) /* a read-only open writes nothing in the store's folder */
    return kv_error(KV_ERR_READONLY, "the store '%s' was opened read-only: no temporary "
                    "file can be written in it", db->path);
  char dir[1024], path[1200];
  pthread_mutex_lock(&db->mu);
  kv_fam *f = kv_db_family(db, family_id);
  if (f) kv_db_family_dir(db, f, dir, sizeof dir);
  pthread_mutex_unlock(&db->mu);
  if (!f) return kv_error(KV_ERR_NOTFOUND, "temporary file: unknown family id %u", family_id);
  snprintf(path, sizeof path, "%s/spill-%llu-%ld.tmp", dir,
           (unsigned long long)kv_db_new_file_number(db), (long)getpid());
  return temp_create(db->env, dir, path, out);
}

int kv_temp_open_dir(kv_env *env, const char *dir, kv_temp **out) {
  static _Atomic unsigned long long n_files; /* unique within the process */
  *out = NULL;
  char path[1200];
  int n = snprintf(path, sizeof path, "%s/rowan-spill-%ld-%llu.tmp", dir, (long)getpid(),
                   ++n_files);
  if (n < 0 || (size_t)n >= sizeof path)
    return kv_error(KV_ERR_INVALID, "temporary file: folder name too long: %s", dir);
  return temp_create(env, dir, path, out);
}

int kv_temp_append(kv_temp *t, const void *p, size_t n, uint64_t *off) {
  if (t->err) return t->err;
  if (off) *off = t->size;
  if (n == 0) return KV_OK;
  int rc = t->env->append(t->f, p, n);
  if (rc) return t->err = rc;
  t->size += n;
  return KV_OK;
}

int kv_temp_read(kv_temp *t, uint64_t off, void *p, size_t n) {
  if (n == 0) return KV_OK;
  if (off > t->size || n > t->size - off)
    return kv_error(KV_ERR_CORRUPT, "temporary file %s: read of %zu bytes at %llu past its end",
                    t->path, n, (unsigned long long)off);
  size_t got = 0;
  int rc = t->env->read(t->f, off, p, n, &got);
  if (rc) return rc;
  if (got != n)
    return kv_error(KV_ERR_CORRUPT, "temporary file %s is short at %llu", t->path,
                    (unsigned long long)off);
  return KV_OK;
}

uint64_t kv_temp_size(const kv_temp *t) { return t->size; }

void kv_temp_close(kv_temp *t) {
  if (!t) return;
  t->env->close(t->f);
  t->env->remove(t->env, t->path);
  free(t->path);
  free(t);
}
