/*
** exec/row_ts.h: the cell timestamp of a row of a table with a ROW_TIMESTAMP column
** (Phoenix's rule: the column's value is the timestamp of every cell of the row, tombstones
** included), read from the row key, and the server time an UPSERT gives the column when it
** names none. Used by UPSERT and DELETE (exec/write.c) and the bulk load (exec/bulk.c).
** docs/SQL.md "ROW_TIMESTAMP".
*/
#ifndef ROWAN_EXEC_ROW_TS_H
#define ROWAN_EXEC_ROW_TS_H

#include <stddef.h>
#include <stdint.h>

#include "exec/rowcodec.h"

/* The timestamp the cells of the row with key key[0..len) of t are written at: KV_TS_NOW
** (the commit time) when t has no ROW_TIMESTAMP column, else the column's value decoded from
** the key, in milliseconds (catalog/row_ts.h). EXEC_OK; EXEC_CONSTRAINT when the value is
** before 1970 ("ROW_TIMESTAMP column TS: ... cannot be negative"); EXEC_CORRUPT when the
** key does not decode. */
int exec_row_ts_of_key(const cat_table *t, const uint8_t *key, size_t len, int64_t *ts,
                       exec_error *err);

/* The wall clock in milliseconds since the Unix epoch (UTC): the value an UPSERT gives a
** ROW_TIMESTAMP column it does not name (Phoenix uses the server's time). */
int64_t exec_row_ts_now_ms(void);

#endif /* ROWAN_EXEC_ROW_TS_H */
