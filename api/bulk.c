/*
** api/bulk.c: the bulk-load entry points of include/rowan.h (rowan_bulk_*), a thin layer
** over exec/bulk.h that keeps the connection's error code and message. Not here: parsing,
** sorting and writing (exec/bulk.c, kv/bulk/bulk.c).
*/
#include <stdlib.h>
#include <string.h>

#include "api/api_int.h"
#include "exec/bulk.h"

struct rowan_bulk {
  rowan_db *db;       /* the connection */
  exec_bulk *eb;      /* the engine's load */
  int ncols;          /* fields per row */
  size_t *lens;       /* scratch: field lengths of the current row */
  cat_value *vals;    /* scratch: the current row's typed values (rowan_bulk_add_values) */
};

static int fail(rowan_db *db, const exec_error *err) {
  return api_error(db, api_code_of_exec(err->code), -1, "%s", err->msg);
}

int rowan_bulk_begin(rowan_db *db, const char *table, int ncols, const char *const *columns,
                     rowan_bulk **bulk) {
  if (bulk) *bulk = NULL;
  if (!db || !db->sess) return ROWAN_MISUSE;
  if (!bulk || !table || !columns || ncols < 1)
    return api_error(db, ROWAN_MISUSE, -1, "rowan_bulk_begin: NULL argument or no column");
  if (db->remote)
    return api_error(db, ROWAN_MISUSE, -1,
                     "a bulk load writes local store files: not available on a database on "
                     "HBase (load row by row: the shell's .import without --bulk)");
  rowan_bulk *b = calloc(1, sizeof *b);
  size_t *lens = calloc((size_t)ncols, sizeof *lens);
  cat_value *vals = calloc((size_t)ncols, sizeof *vals);
  if (!b || !lens || !vals) {
    free(b);
    free(lens);
    free(vals);
    return api_error(db, ROWAN_NOMEM, -1, "out of memory");
  }
  exec_error err = {0};
  if (exec_bulk_begin(db->sess, table, ncols, columns, db->bulk_memory, &b->eb, &err) !=
      EXEC_OK) {
    free(b);
    free(lens);
    free(vals);
    return fail(db, &err);
  }
  b->db = db;
  b->ncols = ncols;
  b->lens = lens;
  b->vals = vals;
  db->n_bulks++; /* rowan_close refuses while a load is open (its engine load uses the session) */
  *bulk = b;
  api_clear_error(db);
  return ROWAN_OK;
}

int rowan_bulk_add_text(rowan_bulk *bulk, const char *const *fields, const int *lengths) {
  if (!bulk) return ROWAN_MISUSE;
  if (!fields) return api_error(bulk->db, ROWAN_MISUSE, -1, "rowan_bulk_add_text: NULL fields");
  for (int i = 0; i < bulk->ncols; i++)
    bulk->lens[i] = !fields[i] ? 0
                    : lengths && lengths[i] >= 0 ? (size_t)lengths[i]
                                                 : strlen(fields[i]);
  exec_error err; /* filled by exec_error_set on failure; not zeroed per row (it is large) */
  err.code = EXEC_OK;
  err.offset = -1;
  err.msg[0] = 0;
  if (exec_bulk_add_text(bulk->eb, fields, bulk->lens, &err) != EXEC_OK)
    return fail(bulk->db, &err);
  return ROWAN_OK; /* the connection's error is left as it was: this is the hot path */
}

int rowan_bulk_add_values(rowan_bulk *bulk, const rowan_value *values) {
  if (!bulk) return ROWAN_MISUSE;
  if (!values)
    return api_error(bulk->db, ROWAN_MISUSE, -1, "rowan_bulk_add_values: NULL values");
  for (int i = 0; i < bulk->ncols; i++) {
    const rowan_value *in = &values[i];
    cat_value *v = &bulk->vals[i];
    switch (in->type) {
      case ROWAN_NULL: *v = cat_v_null(cat_type_of(CAT_T_VARCHAR)); break;
      case ROWAN_INTEGER: *v = cat_v_int(CAT_T_BIGINT, in->i); break;
      case ROWAN_FLOAT: *v = cat_v_double(in->d); break;
      case ROWAN_TEXT:
      case ROWAN_BLOB:
        if (in->bytes < 0 || (!in->p && in->bytes > 0))
          return api_error(bulk->db, ROWAN_MISUSE, -1, "rowan_bulk_add_values: value %d: "
                           "bytes %d with %s pointer", i, in->bytes, in->p ? "a" : "a NULL");
        *v = cat_v_str(in->type == ROWAN_TEXT ? CAT_T_VARCHAR : CAT_T_VARBINARY,
                       in->p ? in->p : "", (size_t)in->bytes);
        break;
      case ROWAN_TIMESTAMP:
        if (in->i < CAT_TS_MIN / 1000 || in->i > CAT_TS_MAX / 1000)
          return api_error(bulk->db, ROWAN_CONSTRAINT, -1, "value %d: timestamp %lld ms out "
                           "of range for TIMESTAMP (years 0001..9999)", i, (long long)in->i);
        *v = cat_v_int(CAT_T_TIMESTAMP, in->i * 1000);
        break;
      default:
        return api_error(bulk->db, ROWAN_MISUSE, -1, "rowan_bulk_add_values: value %d: "
                         "unknown type %d", i, in->type);
    }
  }
  exec_error err; /* as rowan_bulk_add_text: not zeroed per row */
  err.code = EXEC_OK;
  err.offset = -1;
  err.msg[0] = 0;
  if (exec_bulk_add_values(bulk->eb, bulk->vals, &err) != EXEC_OK) return fail(bulk->db, &err);
  return ROWAN_OK;
}

int rowan_bulk_commit(rowan_bulk *bulk) {
  if (!bulk) return ROWAN_MISUSE;
  rowan_db *db = bulk->db;
  exec_error err = {0};
  int rc = exec_bulk_commit(bulk->eb, &err) == EXEC_OK ? ROWAN_OK : fail(db, &err);
  if (rc == ROWAN_OK) api_clear_error(db);
  rowan_bulk_abort(bulk);
  return rc;
}

int rowan_bulk_status(const rowan_bulk *bulk, int what) {
  if (!bulk) return -1;
  switch (what) {
    case ROWAN_BULK_WAS_EMPTY: return exec_bulk_was_empty(bulk->eb) ? 1 : 0;
    case ROWAN_BULK_REPEAT: return exec_bulk_last_repeat(bulk->eb) ? 1 : 0;
    default: return -1;
  }
}

void rowan_bulk_abort(rowan_bulk *bulk) {
  if (!bulk) return;
  bulk->db->n_bulks--;
  exec_bulk_free(bulk->eb);
  free(bulk->lens);
  free(bulk->vals);
  free(bulk);
}
