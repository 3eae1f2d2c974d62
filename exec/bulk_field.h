/*
** exec/bulk_field.h: one field of a bulk-loaded row made into a checked value of its
** column's type: from text (exec_bulk_add_text) or from a typed value (exec_bulk_add_values).
** Internal to exec/bulk*.c. Not here: keys, cells, the load itself (exec/bulk.c).
*/
#ifndef ROWAN_EXEC_BULK_FIELD_H
#define ROWAN_EXEC_BULK_FIELD_H

#include <stddef.h>

#include "catalog/catalog.h"
#include "exec/engine.h"

/* Parse field text s[0..n) for column c into *v, checked against the column's type.
** EXEC_CONSTRAINT with the column named when it does not parse or fit. */
int exec_bulk_parse_field(const cat_column *c, const char *s, size_t n, cat_value *v,
                          exec_error *err);

/* Convert the non-NULL typed value *in to column c's type and check it (the conversion a
** bound parameter stored into that column gets: catalog/value.h's cast rules, then the
** column's limits) into *v. Text the cast makes (a number into a VARCHAR column) goes to
** buf[0..64), which must outlive *v. EXEC_CONSTRAINT naming the column and the value when
** it does not convert or fit. */
int exec_bulk_cast_field(const cat_column *c, const cat_value *in, cat_value *v, uint8_t *buf,
                         exec_error *err);

#endif
