/*
** kv/db/manifest_int.h: the MANIFEST's record framing and table codec, shared by kv/db/manifest.c
** (the log: replay, appends, rewrites, the reading of a store another process writes) and
** kv/db/manifest_salvage.c (the salvage reading of a damaged log, TABLEINFO files). Byte
** formats in docs/FORMAT.md "MANIFEST". Not a public header.
*/
#ifndef ROWAN_KV_MANIFEST_INT_H
#define ROWAN_KV_MANIFEST_INT_H

#include <stddef.h>
#include <stdint.h>

#include "kv/db/manifest.h"

#define KV_MF_REC_HEADER 16u          /* bytes of a record's frame before its payload */
#define KV_MF_MAGIC "ROWANMF1"        /* the header record's first 8 bytes */
#define KV_MF_VERSION 4u              /* the format version written */
#define KV_MF_VERSION_MIN 1u          /* the oldest format version read */
#define KV_MF_MAX_RECORD (64u << 20)  /* a payload longer than this is damage */

/* A growing output buffer. */
typedef struct kv_mf_wbuf {
  uint8_t *p;            /* bytes */
  size_t len, cap;       /* used, allocated */
  int oom;               /* an allocation failed */
} kv_mf_wbuf;

/* An input window; decoders never read past limit. */
typedef struct kv_mf_rbuf {
  const uint8_t *p, *limit; /* unread bytes */
  const char *bad;          /* what was wrong, or NULL */
} kv_mf_rbuf;

/* KV_ERR_NOMEM with the MANIFEST's message. */
int kv_mf_nomem(void);
/* Append n bytes / a table (id, name, families with their files) to b. */
void kv_mf_put_raw(kv_mf_wbuf *b, const void *src, size_t n);
void kv_mf_put_table(kv_mf_wbuf *b, const kv_table_meta *t);
/* Frame a payload as one record (length, length check, checksum, payload) into out. */
void kv_mf_frame(kv_mf_wbuf *out, const uint8_t *payload, size_t len);
/* Decoders: on damage they set r->bad and return 0 (get_table: the caller frees *t with
** kv_mf_table_free, on error too). */
uint64_t kv_mf_get_var(kv_mf_rbuf *r);
uint32_t kv_mf_get_u32v(kv_mf_rbuf *r);
void kv_mf_get_file(kv_mf_rbuf *r, kv_file_meta *f);
void kv_mf_get_table(kv_mf_rbuf *r, kv_table_meta *t);
/* Region boundaries (kv/db/manifest_region.c): check n keys in the SET_REGIONS encoding at
** p[0, len) (NULL, or what is wrong); decode a SET_REGIONS edit's fields after its kind
** byte into e (e->bounds points into r); append one; apply one to table t (NULL: unknown). */
const char *kv_mf_check_bounds(const uint8_t *p, size_t len, uint32_t n);
void kv_mf_get_regions(kv_mf_rbuf *r, kv_edit *e);
void kv_mf_put_regions(kv_mf_wbuf *b, uint32_t table_id, const uint8_t *bounds, uint32_t len,
                       uint32_t n);
int kv_mf_set_regions(kv_table_meta *t, const kv_edit *e);
/* Free what a table owns (its families' file lists, its families) and zero the counts. */
void kv_mf_table_free(kv_table_meta *t);
/* Are the n bytes at p all zero? */
int kv_mf_is_zero(const uint8_t *p, size_t n);

#endif /* ROWAN_KV_MANIFEST_INT_H */
