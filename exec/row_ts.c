/*
** exec/row_ts.c: cell timestamps of ROW_TIMESTAMP tables (exec/row_ts.h). The value is
** taken from the encoded row key (after a salted table's salt byte), so it is the value as
** stored (after the column's type was applied), whatever the statement wrote it as. Writes
** nothing itself.
*/
#include <time.h>

#include "catalog/row_ts.h"
#include "catalog/salt.h"
#include "exec/row_ts.h"
#include "kv/kv.h"

int exec_row_ts_of_key(const cat_table *t, const uint8_t *key, size_t len, int64_t *ts,
                       exec_error *err) {
  *ts = KV_TS_NOW;
  if (t->row_ts < 0) return EXEC_OK;
  const cat_column *c = &t->columns[t->row_ts];
  const uint8_t *p = key + cat_salt_len(t), *limit = key + len; /* after a salt byte */
  if (p > limit) p = NULL;
  for (int k = 0; k < c->pk_pos && p; k++) p = cat_key_skip_col(&t->key_cols[k], p, limit);
  cat_value v;
  uint8_t scratch[8];
  const uint8_t *end;
  cat_error ce = {0};
  if (!p || cat_key_decode(&t->key_cols[c->pk_pos], 1, p, limit, &v, scratch, sizeof scratch,
                           &end, &ce) != CAT_OK)
    return exec_error_set(err, EXEC_CORRUPT, "table %s: a row key does not decode", t->name);
  if (cat_row_ts_of(&v, c->name, ts, &ce) != CAT_OK)
    return exec_error_set(err, EXEC_CONSTRAINT, "%s", ce.msg);
  return EXEC_OK;
}

int64_t exec_row_ts_now_ms(void) {
  struct timespec now;
  clock_gettime(CLOCK_REALTIME, &now);
  return (int64_t)now.tv_sec * 1000 + now.tv_nsec / 1000000;
}
