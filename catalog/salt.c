/*
** catalog/salt.c: the salt byte of a salted table's row keys (contract in catalog/salt.h;
** bytes in docs/FORMAT_SQL.md (Part 3) "Salted row keys"). Pure functions of the key's
** bytes; nothing here reads or writes the store.
*/
#include "catalog/salt.h"

#include <string.h>

uint8_t cat_salt_byte(const uint8_t *key, size_t len, int buckets) {
  uint32_t h = 2166136261u; /* FNV-1a, 32-bit */
  for (size_t i = 0; i < len; i++) {
    h ^= key[i];
    h *= 16777619u;
  }
  return buckets > 1 ? (uint8_t)(h % (uint32_t)buckets) : 0;
}

size_t cat_salt_key(const cat_table *t, const uint8_t *key, size_t len, uint8_t *out) {
  if (!cat_salt_len(t)) {
    memmove(out, key, len);
    return len;
  }
  out[0] = cat_salt_byte(key, len, t->salt_buckets);
  memcpy(out + 1, key, len);
  return len + 1;
}

/* Bound p[0..len) of bucket b at *bytes (advancing it): b then the bytes. */
static const uint8_t *bound(uint8_t b, const uint8_t *p, size_t len, uint8_t **bytes) {
  uint8_t *d = *bytes;
  d[0] = b;
  if (len) memcpy(d + 1, p, len);
  *bytes += len + 1;
  return d;
}

void cat_salt_range(uint8_t b, const kv_range *r, kv_range *out, uint8_t **bytes) {
  memset(out, 0, sizeof *out);
  if (r && r->start) {
    out->start = bound(b, r->start, r->start_len, bytes);
    out->start_len = r->start_len + 1;
    out->start_inclusive = r->start_inclusive;
  } else {
    out->start = bound(b, NULL, 0, bytes);
    out->start_len = 1;
    out->start_inclusive = true;
  }
  if (r && r->end) {
    out->end = bound(b, r->end, r->end_len, bytes);
    out->end_len = r->end_len + 1;
    out->end_inclusive = r->end_inclusive;
  } else if (b < 255) {
    out->end = bound((uint8_t)(b + 1), NULL, 0, bytes);
    out->end_len = 1;
    out->end_inclusive = false;
  }
}
