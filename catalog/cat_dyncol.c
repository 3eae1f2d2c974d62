/*
** catalog/cat_dyncol.c: the cell qualifier of Phoenix's dynamic columns (a column a statement
** declares with its type, `UPSERT INTO t (f.c TYPE) ...` or `FROM t (f.c TYPE)`, that the
** catalog does not record): the escape byte 00 then the column's name
** (docs/FORMAT_SQL.md (Part 3) "Dynamic columns"), and the qualifier of any non-key column,
** declared or dynamic.
**
** Not here: the statement's copy of a table with its dynamic columns (planner/bind_dyncol.c),
** reading and writing the cells (exec/rowcodec.c).
*/
#include <string.h>

#include "catalog/catalog.h"

size_t cat_dynamic_qualifier(const char *name, uint8_t *q) {
  size_t n = strlen(name);
  if (n == 0 || n > CAT_DYN_NAME_MAX) return 0;
  q[0] = CAT_DYN_QUAL_ESCAPE;
  memcpy(q + 1, name, n);
  return n + 1;
}

const uint8_t *cat_col_qual(const cat_column *c, uint8_t *buf, size_t *len) {
  if (c->dyn_qual) {
    *len = c->dyn_qual_len;
    return c->dyn_qual;
  }
  *len = cat_column_qualifier(c->id, buf);
  return buf;
}
