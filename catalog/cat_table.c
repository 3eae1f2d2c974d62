/*
** catalog/cat_table.c: lookups inside one table's description (a column, a family, an index
** by name) and the cell qualifier of a declared column (docs/FORMAT_SQL.md). They read only
** the cat_table value. Not here: the catalog's tables and their records (catalog/catalog.c),
** dynamic columns' qualifiers (catalog/cat_dyncol.c).
*/
#include <string.h>

#include "catalog/catalog.h"

int cat_find_column(const cat_table *t, const char *name) {
  for (int i = 0; i < t->n_columns; i++)
    if (strcmp(t->columns[i].name, name) == 0) return i;
  return -1;
}

int cat_find_family(const cat_table *t, const char *name) {
  for (int i = 0; i < t->n_families; i++)
    if (strcmp(t->families[i].name, name) == 0) return i;
  return -1;
}

const cat_index *cat_find_index(const cat_table *t, const char *name) {
  for (int i = 0; i < t->n_indexes; i++)
    if (strcmp(t->indexes[i].name, name) == 0) return &t->indexes[i];
  return NULL;
}

size_t cat_column_qualifier(uint16_t id, uint8_t *q) {
  if (id < 128) { q[0] = (uint8_t)id; return 1; }
  q[0] = (uint8_t)(0x80 | (id >> 8));
  q[1] = (uint8_t)id;
  return 2;
}
