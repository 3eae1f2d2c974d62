/*
** catalog/cat_regions.h: a table's regions as the catalog records them: SALT_BUCKETS (every
** row key starts with a salt byte, catalog/salt.h) or the SPLIT ON points (encoded key
** prefixes of the leading primary-key columns), the fields a version 3 table record adds
** (docs/FORMAT_SQL.md (Part 3) "SYSTEM.CATALOG"), and the split keys the store gets at
** CREATE TABLE. Internal to catalog/. Not here: the SQL syntax (exec/ddl_split.c), scanning
** salted tables (exec/salt_merge.c).
*/
#ifndef ROWAN_CAT_REGIONS_H
#define ROWAN_CAT_REGIONS_H

#include "catalog/cat_record.h"
#include "catalog/catalog.h"
#include "catalog/types.h"

/* Append t's version 3 fields to b: varint SALT_BUCKETS (0 = not salted), varint split
** count, per split point {varint length, bytes}. */
void cat_regions_record(const cat_table *t, buf *b);
/* Read those fields from r into t (r->bad set when they do not decode: buckets above 256,
** more than CAT_SPLIT_MAX points, an empty, too long or out-of-order point, both or neither
** of the two given). */
void cat_regions_parse(rd *r, cat_table *t);
/* Copy def's SALT_BUCKETS and split points into t, checked (CAT_ERR_INVALID: buckets outside
** 1..256, both given, too many points, an empty one, one not above the one before it;
** CAT_ERR_NOMEM). */
int cat_regions_from_def(cat_table *t, const cat_table_def *def, cat_error *err);
/* Free what t's split points own (the arrays and each key). */
void cat_regions_free(cat_table *t);

/* The split keys handed to kv_be_create_table for t: its SPLIT ON points, or for a salted
** table of n > 1 buckets the first key of each bucket after the first (the one-byte keys 01
** .. n-1), so a backend that keeps regions gives each bucket its own. */
typedef struct cat_region_keys {
  uint8_t **keys;    /* the keys (pointing into t or into bytes) */
  uint32_t *lens;    /* their lengths */
  uint32_t n;        /* count, 0 when none */
  uint8_t *bytes;    /* the bucket bytes of a salted table, owned */
} cat_region_keys;
/* Fill *out (zeroed first); false when out of memory. Free with cat_region_keys_free. */
bool cat_region_keys_of(const cat_table *t, cat_region_keys *out);
void cat_region_keys_free(cat_region_keys *k);

#endif /* ROWAN_CAT_REGIONS_H */
