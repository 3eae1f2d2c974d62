/*
** catalog/salt.h: salted row keys (Phoenix's SALT_BUCKETS). A salted table's row key is one
** salt byte followed by the row key the key codec makes (catalog/keycodec.h); the byte is
** the bucket of the rest of the key, so keys written in increasing order spread over the
** buckets (and over the regions a backend cuts at the bucket boundaries) instead of all
** landing at the end of the table.
**
** The bucket is FNV-1a (32-bit: offset basis 2166136261, prime 16777619, over every byte of
** the unsalted key) modulo the bucket count: docs/FORMAT_SQL.md (Part 3) "Salted row keys".
** Phoenix takes a Java hash of the same bytes (SaltingUtil); the bytes differ, the idea is
** the same. Changing the hash would make every salted store unreadable: never change it.
**
** Not here: which tables are salted (cat_table.salt_buckets), scanning the buckets and
** merging them (exec/salt_merge.c), EXPLAIN (planner/explain.c).
*/
#ifndef ROWAN_CAT_SALT_H
#define ROWAN_CAT_SALT_H

#include <stddef.h>
#include <stdint.h>

#include "catalog/catalog.h"

/* The salt byte of unsalted key key[0..len) in a table of `buckets` buckets (1..256): a value
** in 0..buckets-1. */
uint8_t cat_salt_byte(const uint8_t *key, size_t len, int buckets);

/* The bytes a salted table's row keys start with before the key codec's: 1 for a salted
** table, 0 otherwise. */
static inline size_t cat_salt_len(const cat_table *t) { return t && t->salt_buckets ? 1 : 0; }

/* Write the stored key of unsalted key key[0..len) of table t into out (len + 1 bytes):
** the salt byte then the key; for a table that is not salted, the key alone. key and out
** may not overlap. Returns the stored key's length. */
size_t cat_salt_key(const cat_table *t, const uint8_t *key, size_t len, uint8_t *out);

/* The stored key of a table's unsalted key p[0..len) whose byte p[-1] the caller may
** overwrite (a copy, or a byte it puts back): for a salted table p[-1] becomes the salt byte
** and p - 1 is returned (len + 1 bytes); otherwise p. */
static inline const uint8_t *cat_salt_before(const cat_table *t, uint8_t *p, size_t len) {
  if (!cat_salt_len(t)) return p;
  p[-1] = cat_salt_byte(p, len, t->salt_buckets);
  return p - 1;
}

/* Bucket b's part of key range r (unsalted; NULL: the whole table) of a table of `buckets`
** buckets, into *out: each bound with the byte b in front; an open start becomes [b]
** inclusive, an open end [b+1] exclusive (open after bucket 255). The bounds are written at
** *bytes, which advances (r's bound lengths + 2 bytes at most). */
void cat_salt_range(uint8_t b, const kv_range *r, kv_range *out, uint8_t **bytes);
/* The bucket of a point range (every key column given: r->start is the whole key). */
static inline uint8_t cat_salt_point_bucket(const kv_range *r, int buckets) {
  return cat_salt_byte(r->start, r->start_len, buckets);
}

#endif /* ROWAN_CAT_SALT_H */
