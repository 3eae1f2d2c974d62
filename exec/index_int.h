/*
** exec/index_int.h: helpers shared by the index files (exec/index.c, index_maint.c,
** index_build.c, index_check.c). Not used outside exec/index*.c.
*/
#ifndef ROWAN_EXEC_INDEX_INT_H
#define ROWAN_EXEC_INDEX_INT_H

#include "exec/index.h"
#include "exec/rowcodec.h" /* exec_error_set */

/* Map a failed kv call (status rc) onto an exec status with kv's message, prefixed by what. */
int exec_index_kv_fail(exec_error *err, int rc, const char *what);
/* Convert (if its type id differs) and check value in for type t into *out; cast text goes
** to buf (64 bytes). NULL stays NULL. EXEC_CONSTRAINT / EXEC_ERROR naming `what`. */
int exec_index_fit(const cat_type *t, const char *what, const cat_value *in, cat_value *out,
                   uint8_t *buf, exec_error *err);
/* The cell bytes of checked non-NULL value cv (strings: their bytes, CHAR trimmed; others
** cat_vc_encode into enc[0..cap)): *val, *vlen. EXEC_ERROR if it does not encode. */
int exec_index_cell_value(const cat_value *cv, uint8_t *enc, size_t cap, const uint8_t **val,
                          size_t *vlen, exec_error *err);

#endif /* ROWAN_EXEC_INDEX_INT_H */
