/*
** kv/util/status.h: setting the thread's kv error message. Internal to kv/.
*/
#ifndef ROWAN_KV_STATUS_H
#define ROWAN_KV_STATUS_H

#include "kv/kv.h"

/* Record `code` with a printf-style message as this thread's last kv error; returns code. */
int kv_error(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Clear this thread's error message. */
void kv_error_clear(void);

#endif /* ROWAN_KV_STATUS_H */
