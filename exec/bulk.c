/*
** exec/bulk.c: bulk load of text rows (exec/bulk.h). Per row: each field through
** cat_text_parse for its column's type, then exec_row_put into a per-row kv_batch (the
** same cells an UPSERT writes: marker, puts, KV_DELETE_COLUMN for NULLs, timestamp
** KV_TS_NOW), then the batch's cells into the kv bulk load (kv_bulk_add_batch), which
** resolves KV_TS_NOW to the load's timestamp. A row that fails never reaches the load.
** Not here: the sort, the store files and the MANIFEST (kv/bulk.c).
*/
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalog/value.h"
#include "exec/bulk.h"
#include "exec/engine_int.h"
#include "exec/rowcodec.h"
#include "kv/bulk.h"

struct exec_bulk {
  exec_session *s;        /* the session */
  const cat_table *t;     /* the table */
  exec_rowcodec rc;       /* its row codec */
  kv_bulk *kb;            /* the kv load */
  kv_batch *row;          /* the current row's cells */
  int n_cols;             /* fields per row */
  int *col;               /* column index of each field */
  cat_value *vals;        /* one slot per table column */
  bool *set;              /* columns given */
  int64_t rows;           /* rows added */
  bool broken;            /* a fatal error happened: only free is allowed */
  bool committed;         /* committed */
};

static int seterr(exec_error *err, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int seterr(exec_error *err, int code, const char *fmt, ...) {
  if (err) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    va_end(ap);
    err->code = code;
    err->offset = -1;
  }
  return code;
}

static int code_of_kv(int rc) {
  switch (rc) {
    case KV_OK: return EXEC_OK;
    case KV_ERR_IO: return EXEC_IOERR;
    case KV_ERR_NOSPC: return EXEC_FULL;
    case KV_ERR_CORRUPT: return EXEC_CORRUPT;
    case KV_ERR_NOTFOUND: return EXEC_NOTFOUND;
    case KV_ERR_TOOBIG: return EXEC_TOOBIG;
    case KV_ERR_NOMEM: return EXEC_NOMEM;
    case KV_ERR_READONLY: return EXEC_READONLY;
    case KV_MISUSE: return EXEC_MISUSE;
    default: return EXEC_ERROR;
  }
}

static int kv_fail(exec_error *err, int rc, const char *what) {
  return seterr(err, code_of_kv(rc), "bulk load: %s: %s", what, kv_errmsg());
}

/* Column by exact name, then by its upper-case form. */
static int find_col(const cat_table *t, const char *name) {
  size_t len = strlen(name);
  if (len >= 2 && name[0] == '"' && name[len - 1] == '"') { /* "Quoted": exact, "" = " */
    char ex[256];
    size_t k = 0;
    for (size_t j = 1; j + 1 < len && k + 1 < sizeof ex; j++) {
      ex[k++] = name[j];
      if (name[j] == '"' && name[j + 1] == '"') j++;
    }
    ex[k] = 0;
    return cat_find_column(t, ex);
  }
  int i = cat_find_column(t, name);
  if (i >= 0) return i;
  char up[256];
  size_t n = strlen(name);
  if (n >= sizeof up) return -1;
  for (size_t k = 0; k <= n; k++) up[k] = (char)toupper((unsigned char)name[k]);
  return cat_find_column(t, up);
}

static const cat_table *find_table(const cat_catalog *cat, const char *name) {
  const cat_table *t = cat_find_table(cat, name);
  if (t) return t;
  char up[512];
  size_t n = strlen(name);
  if (n >= sizeof up) return NULL;
  for (size_t k = 0; k <= n; k++) up[k] = (char)toupper((unsigned char)name[k]);
  return cat_find_table(cat, up);
}

int exec_bulk_begin(exec_session *s, const char *table, int n_cols, const char *const *cols,
                    size_t run_bytes, exec_bulk **out, exec_error *err) {
  if (out) *out = NULL;
  if (!s || !table || !out || n_cols < 1 || !cols)
    return seterr(err, EXEC_MISUSE, "bulk load: NULL argument or no column");
  if (s->txn) return seterr(err, EXEC_MISUSE, "bulk load: not inside a transaction");
  const cat_table *t = find_table(s->cat, table);
  if (!t) return seterr(err, EXEC_ERROR, "bulk load: no table %s", table);
  if (t->n_indexes > 0)
    return seterr(err, EXEC_ERROR,
                  "bulk load: table %s has index %s; bulk load does not maintain indexes "
                  "yet: drop the index, load, then CREATE INDEX",
                  t->name, t->indexes[0].name);
  exec_bulk *b = calloc(1, sizeof *b);
  if (!b) return seterr(err, EXEC_NOMEM, "bulk load: out of memory");
  b->s = s;
  b->t = t;
  b->n_cols = n_cols;
  b->col = calloc((size_t)n_cols, sizeof *b->col);
  b->vals = calloc((size_t)t->n_columns, sizeof *b->vals);
  b->set = calloc((size_t)t->n_columns, sizeof *b->set);
  b->row = kv_batch_new();
  int rc = EXEC_OK;
  if (!b->col || !b->vals || !b->set || !b->row)
    rc = seterr(err, EXEC_NOMEM, "bulk load: out of memory");
  for (int i = 0; rc == EXEC_OK && i < n_cols; i++) {
    int c = cols[i] ? find_col(t, cols[i]) : -1;
    if (c < 0)
      rc = seterr(err, EXEC_ERROR, "bulk load: table %s has no column %s", t->name,
                  cols[i] ? cols[i] : "(NULL)");
    else if (b->set[c])
      rc = seterr(err, EXEC_ERROR, "bulk load: column %s given twice", t->columns[c].name);
    else {
      b->col[i] = c;
      b->set[c] = true;
    }
  }
  for (int k = 0; rc == EXEC_OK && k < t->n_pk; k++)
    if (!b->set[t->pk[k]])
      rc = seterr(err, EXEC_ERROR, "bulk load: primary key column %s is not among the columns",
                  t->columns[t->pk[k]].name);
  if (rc == EXEC_OK) {
    rc = exec_rowcodec_init(&b->rc, t, err);
  }
  if (rc == EXEC_OK) {
    for (int i = 0; i < t->n_columns; i++) b->vals[i] = cat_v_null(t->columns[i].type);
    kv_bulk_options bo = {run_bytes};
    int krc = kv_bulk_begin(s->db, &bo, &b->kb);
    if (krc) rc = kv_fail(err, krc, "begin");
  }
  if (rc) {
    exec_bulk_free(b);
    return rc;
  }
  *out = b;
  return EXEC_OK;
}

int exec_bulk_add_text(exec_bulk *b, const char *const *fields, const size_t *lens,
                       exec_error *err) {
  if (!b || !fields || !lens) return seterr(err, EXEC_MISUSE, "bulk load: NULL argument");
  if (b->broken || b->committed)
    return seterr(err, EXEC_MISUSE, "bulk load: the load is %s",
                  b->committed ? "committed" : "broken by an earlier error");
  const cat_table *t = b->t;
  for (int i = 0; i < b->n_cols; i++) {
    int c = b->col[i];
    const cat_column *col = &t->columns[c];
    if (!fields[i]) {
      b->vals[c] = cat_v_null(col->type);
      if (!col->nullable || col->pk_pos >= 0)
        return seterr(err, EXEC_CONSTRAINT, "column %s may not be NULL", col->name);
      continue;
    }
    cat_error ce = {0};
    if (cat_text_parse(&col->type, fields[i], lens[i], &b->vals[c], &ce) != CAT_OK)
      return seterr(err, EXEC_CONSTRAINT, "column %s: %s", col->name, ce.msg);
  }
  kv_batch_clear(b->row);
  int rc = exec_row_put(&b->rc, b->vals, b->set, KV_TS_NOW, b->row, err);
  if (rc) {
    if (rc != EXEC_CONSTRAINT && rc != EXEC_TOOBIG) b->broken = true;
    return rc;
  }
  int krc = kv_bulk_add_batch(b->kb, b->row);
  if (krc) {
    b->broken = true;
    return kv_fail(err, krc, "adding a row");
  }
  b->rows++;
  return EXEC_OK;
}

int64_t exec_bulk_rows(const exec_bulk *b) { return b ? b->rows : 0; }

int exec_bulk_commit(exec_bulk *b, exec_error *err) {
  if (!b) return seterr(err, EXEC_MISUSE, "bulk load: NULL load");
  if (b->committed) return seterr(err, EXEC_MISUSE, "bulk load: committed already");
  if (b->broken) return seterr(err, EXEC_MISUSE, "bulk load: broken by an earlier error");
  b->committed = true;
  int krc = kv_bulk_commit(b->kb, NULL);
  if (krc) return kv_fail(err, krc, "commit");
  b->s->changes = b->rows;
  return EXEC_OK;
}

void exec_bulk_free(exec_bulk *b) {
  if (!b) return;
  kv_bulk_free(b->kb);
  kv_batch_free(b->row);
  exec_rowcodec_free(&b->rc);
  free(b->col);
  free(b->vals);
  free(b->set);
  free(b);
}
