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
