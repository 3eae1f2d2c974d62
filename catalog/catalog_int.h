/*
** catalog/catalog_int.h: what catalog/catalog.c lends catalog/cat_salvage.c: the decoders
** of SYSTEM.CATALOG's table and index records (docs/FORMAT.md Part 3, "SYSTEM.CATALOG")
** and the matching frees. Internal to catalog/.
*/
#ifndef ROWAN_CAT_CATALOG_INT_H
#define ROWAN_CAT_CATALOG_INT_H

#include "catalog/catalog.h"

/* Decode a table record (with its derived fields); NULL when it does not decode or is
** inconsistent. Free with cat_table_free. */
cat_table *cat_table_record_parse(const uint8_t *p, size_t n);
/* Decode an index record into *x; *table_name gets the owning table's name (caller frees).
** false (x zeroed, *table_name NULL) when it does not decode. */
bool cat_index_record_parse(const uint8_t *p, size_t n, cat_index *x, char **table_name);
/* Free a table (its indexes too) / what an index owns. NULL is a no-op for the table. */
void cat_table_free(cat_table *t);
void cat_index_free(cat_index *x);

#endif /* ROWAN_CAT_CATALOG_INT_H */
