/*
** kv/env/env_util.c: small conveniences over any kv_env: reading a whole file and freeing an
** env made by a constructor. No file format is known here.
*/
#include <stdlib.h>

#include "kv/env/env.h"
#include "kv/util/status.h"

/* Read the whole file `path` into a malloc'ed buffer. On success *buf (freed by the caller;
** non-NULL even for an empty file) and *len are set; on failure they are NULL/0 and the
** env's status is returned (KV_ERR_NOTFOUND for a missing file, KV_ERR_NOMEM, KV_ERR_IO). */
int kv_env_read_all(kv_env *env, const char *path, uint8_t **buf, size_t *len) {
  *buf = NULL;
  *len = 0;
  kv_file *f;
  int rc = env->open(env, path, KV_OPEN_READ, &f);
  if (rc != KV_OK) return rc;
  uint64_t size;
  rc = env->size(f, &size);
  if (rc != KV_OK) { env->close(f); return rc; }
  if (size > SIZE_MAX - 1) { env->close(f); return kv_error(KV_ERR_TOOBIG, "%s: too large", path); }
  uint8_t *b = malloc((size_t)size + 1);
  if (!b) { env->close(f); return kv_error(KV_ERR_NOMEM, "read %s: out of memory", path); }
  size_t got = 0;
  rc = env->read(f, 0, b, (size_t)size, &got);
  env->close(f);
  if (rc != KV_OK) { free(b); return rc; }
  *buf = b;
  *len = got;
  return KV_OK;
}

/* Destroy an env made by a constructor; NULL and the static POSIX env are no-ops. */
void kv_env_free(kv_env *env) {
  if (env && env->destroy) env->destroy(env);
}
