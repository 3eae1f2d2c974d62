/*
** kv/db/qualset.h: a sorted set of column qualifiers (byte strings), for the qualifiers a major
** compaction drops (kv_family_set_dropped_qualifiers in kv/kv.h). Built once, looked up by
** binary search (unsigned bytes, then length, as cells sort). Not thread-safe: the owner
** copies it under db->mu before a compaction reads it.
*/
#ifndef ROWAN_KV_QUALSET_H
#define ROWAN_KV_QUALSET_H

#include <stdbool.h>
#include <stdint.h>

typedef struct kv_qualset {
  uint8_t *bytes; /* the qualifiers, one after another, in sorted order */
  uint32_t *off;  /* n + 1 offsets into bytes: qualifier i is bytes[off[i], off[i + 1]) */
  uint32_t n;     /* qualifiers (duplicates removed) */
} kv_qualset;

/* Build *s from quals[i][0..lens[i]), i < n (zeroed first; n 0 gives the empty set).
** false when out of memory (*s empty). */
bool kv_qualset_build(kv_qualset *s, const uint8_t *const *quals, const uint32_t *lens,
                      uint32_t n);
/* A copy of src into *dst; false when out of memory (*dst empty). */
bool kv_qualset_copy(kv_qualset *dst, const kv_qualset *src);
/* Is q[0..len) in s? */
bool kv_qualset_has(const kv_qualset *s, const uint8_t *q, uint32_t len);
/* Free what s owns and empty it. */
void kv_qualset_free(kv_qualset *s);

#endif /* ROWAN_KV_QUALSET_H */
