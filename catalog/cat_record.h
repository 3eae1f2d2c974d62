/*
** catalog/cat_record.h: the byte helpers of SYSTEM.CATALOG's records (docs/FORMAT_SQL.md
** (Part 3) section 4): a growing output buffer with LEB128 varints and length-prefixed
** strings, and the matching bounds-checked reader whose `bad` flag a decoder tests once at
** its end. Internal to catalog/. Not here: the records' layouts (catalog/catalog.c).
*/
#ifndef ROWAN_CAT_RECORD_H
#define ROWAN_CAT_RECORD_H

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kv/util/coding.h"

typedef struct buf {
  uint8_t *p;  /* bytes */
  size_t len;  /* used */
  size_t cap;  /* allocated */
  bool oom;    /* an allocation failed */
} buf;

static inline void need(buf *b, size_t n) {
  if (b->oom || b->len + n <= b->cap) return;
  size_t c = b->cap ? b->cap * 2 : 256;
  while (c < b->len + n) c *= 2;
  uint8_t *q = realloc(b->p, c);
  if (!q) { b->oom = true; return; }
  b->p = q;
  b->cap = c;
}
static inline void put_u8(buf *b, uint8_t v) {
  need(b, 1);
  if (!b->oom) b->p[b->len++] = v;
}
static inline void put_var(buf *b, uint64_t v) {
  need(b, 10);
  if (!b->oom) b->len = (size_t)(kv_put_varint(b->p + b->len, v) - b->p);
}
static inline void put_str(buf *b, const char *s) {
  size_t n = strlen(s);
  put_var(b, n);
  need(b, n);
  if (!b->oom) { memcpy(b->p + b->len, s, n); b->len += n; }
}
/* A name as an escaped, terminated key part. */
static inline void put_keyname(buf *b, const char *s) {
  for (; *s; s++) put_u8(b, (uint8_t)*s); /* names contain no 0x00 byte */
  put_u8(b, 0x00);
  put_u8(b, 0x01);
}

typedef struct rd {
  const uint8_t *p;      /* next byte */
  const uint8_t *limit;  /* end */
  bool bad;              /* a read ran past limit or met bad data */
} rd;

static inline uint64_t get_var(rd *r) {
  uint64_t v = 0;
  const uint8_t *q = r->bad ? NULL : kv_get_varint(r->p, r->limit, &v);
  if (!q) { r->bad = true; return 0; }
  r->p = q;
  return v;
}
static inline uint8_t get_u8(rd *r) {
  if (r->bad || r->p >= r->limit) { r->bad = true; return 0; }
  return *r->p++;
}
static inline char *get_str(rd *r) {
  uint64_t n = get_var(r);
  if (r->bad || n > (uint64_t)(r->limit - r->p) || n > 65535) { r->bad = true; return NULL; }
  char *s = malloc((size_t)n + 1);
  if (!s) { r->bad = true; return NULL; }
  memcpy(s, r->p, (size_t)n);
  s[n] = 0;
  if (memchr(s, 0, (size_t)n)) { free(s); r->bad = true; return NULL; }
  r->p += n;
  return s;
}

#endif /* ROWAN_CAT_RECORD_H */
