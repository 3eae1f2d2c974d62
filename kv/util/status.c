/*
** kv/util/status.c: status code names and the per-thread error message of kv/ (kv_errmsg()).
** The message lives in thread-local storage so concurrent callers never see each other's
** errors.
*/
#include <stdarg.h>
#include <stdio.h>
#include "kv/util/status.h"

static _Thread_local char errmsg[512];

/* ORDER KV_STATUS */
static const char *const status_names[KV_STATUS_COUNT] = {
  "KV_OK", "KV_ERR_IO", "KV_ERR_NOSPC", "KV_ERR_CORRUPT", "KV_ERR_LOCKED",
  "KV_ERR_NOTFOUND", "KV_ERR_EXISTS", "KV_ERR_INVALID", "KV_ERR_TOOBIG", "KV_ERR_NOMEM",
  "KV_MISUSE", "KV_ERR_READONLY", "KV_ERR_INTERRUPTED",
};

const char *kv_status_name(int status) {
  if (status < 0 || status >= KV_STATUS_COUNT) return "KV_UNKNOWN";
  return status_names[status];
}

const char *kv_errmsg(void) { return errmsg; }

int kv_error(int code, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(errmsg, sizeof errmsg, fmt, ap);
  va_end(ap);
  return code;
}

void kv_error_clear(void) { errmsg[0] = 0; }
