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

/* The journal's lookup and record (exec/index_journal.c), for exec/index_maint.c.
** find: the index row keys of data key key[0..len)'s latest record, into keys[i] (each
** CAT_KEY_MAX bytes) and lens[i], one per maintained index in the maintenance's order;
** *found false when the statement has not written the key. add: record that the row with
** data key key[0..len) now has the index rows whose keys ic[0..n).key hold. Errors:
** EXEC_IOERR / EXEC_CORRUPT (reading a spilled record back), EXEC_NOMEM, EXEC_TOOBIG. */
int exec_index_journal_find(exec_index_journal *j, const uint8_t *key, size_t len,
                            uint8_t *const *keys, size_t *lens, bool *found, exec_error *err);
int exec_index_journal_add(exec_index_journal *j, const uint8_t *key, size_t len,
                           const exec_index_codec *ic, exec_error *err);

#endif /* ROWAN_EXEC_INDEX_INT_H */
