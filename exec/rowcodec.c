/*
** exec/rowcodec.c: one SQL row <-> its kv cells (contract in exec/rowcodec.h).
**
** Writing checks each value against its column (cast first when the type id differs), then
** adds the marker cell, one put or KV_DELETE_COLUMN per set non-key column, all at the row
** key built by catalog/keycodec.c. Reading walks the row's cells once: the qualifier gives
** the column id (1 or 2 bytes, cat_column_qualifier), a per-table array maps the id to the
** column, and the first cell of a qualifier is its newest version (kv hands cells out
** qualifier ascending, timestamp descending). No allocation happens per row or per cell
** except the optional copy into the caller's arena.
**
** Not here: choosing families or qualifiers to read, index rows, transactions.
*/
#include "exec/rowcodec.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalog/valcodec.h"
#include "catalog/value.h"
#include "planner/plan.h"

#define CAST_BUF 64 /* bytes of cast output text per value (cat_value_cast's rule) */

int exec_error_set(exec_error *err, int code, const char *fmt, ...) {
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

/* Map a failed kv batch call onto an exec status. */
static int kv_fail(exec_error *err, int rc, const char *what) {
  int code = rc == KV_ERR_TOOBIG ? EXEC_TOOBIG : rc == KV_ERR_NOMEM ? EXEC_NOMEM : EXEC_ERROR;
  return exec_error_set(err, code, "%s: %s (%s)", what, kv_status_name(rc), kv_errmsg());
}

int exec_rowcodec_init(exec_rowcodec *rc, const cat_table *t, exec_error *err) {
  memset(rc, 0, sizeof *rc);
  rc->table = t;
  rc->n_columns = t->n_columns;
  uint16_t max_id = 0;
  for (int i = 0; i < t->n_columns; i++)
    if (t->columns[i].pk_pos < 0 && t->columns[i].id > max_id) max_id = t->columns[i].id;
  rc->max_id = max_id;
  rc->key_family_id = t->families[0].kv_id;
  size_t n_pk = t->n_pk > 0 ? (size_t)t->n_pk : 1;
  rc->col_of_id = malloc(((size_t)max_id + 1) * sizeof *rc->col_of_id);
  rc->key = malloc(CAT_KEY_MAX);
  rc->scratch = malloc(CAT_KEY_MAX);
  rc->pk_vals = calloc(n_pk, sizeof *rc->pk_vals);
  rc->cast_buf = malloc(n_pk * CAST_BUF);
  if (!rc->col_of_id || !rc->key || !rc->scratch || !rc->pk_vals || !rc->cast_buf) {
    exec_rowcodec_free(rc);
    return exec_error_set(err, EXEC_NOMEM, "out of memory building the row codec of %s", t->name);
  }
  for (size_t i = 0; i <= max_id; i++) rc->col_of_id[i] = -1;
  for (int i = 0; i < t->n_columns; i++)
    if (t->columns[i].pk_pos < 0 && t->columns[i].id > 0)
      rc->col_of_id[t->columns[i].id] = (int16_t)i;
  return EXEC_OK;
}

void exec_rowcodec_free(exec_rowcodec *rc) {
  if (!rc) return;
  free(rc->col_of_id);
  free(rc->key);
  free(rc->scratch);
  free(rc->pk_vals);
  free(rc->cast_buf);
  memset(rc, 0, sizeof *rc);
}

/* Check (and convert) a non-NULL value for column c into *out; cast text goes to buf
** (CAST_BUF bytes). Errors name the column. */
static int fit(const cat_column *c, const cat_value *in, cat_value *out, uint8_t *buf,
               exec_error *err) {
  cat_error ce = {0};
  cat_value tmp;
  const cat_value *src = in;
  if (in->type.id != c->type.id) {
    if (cat_value_cast(in, &c->type, &tmp, buf, CAST_BUF, &ce) != CAT_OK)
      return exec_error_set(err, ce.code == CAT_ERR_TYPE ? EXEC_ERROR : EXEC_CONSTRAINT,
                            "column %s: %s", c->name, ce.msg);
    src = &tmp;
  }
  if (cat_value_check(&c->type, src, out, &ce) != CAT_OK)
    return exec_error_set(err, ce.code == CAT_ERR_TYPE ? EXEC_ERROR : EXEC_CONSTRAINT,
                          "column %s: %s", c->name, ce.msg);
  return EXEC_OK;
}

int exec_row_key(exec_rowcodec *rc, const cat_value *vals, uint8_t *buf, size_t cap,
                 size_t *len, exec_error *err) {
  const cat_table *t = rc->table;
  for (int j = 0; j < t->n_pk; j++) {
    const cat_column *c = &t->columns[t->pk[j]];
    const cat_value *v = &vals[t->pk[j]];
    if (v->is_null) {
      if (!c->nullable)
        return exec_error_set(err, EXEC_CONSTRAINT, "column %s: primary key value may not be NULL",
                              c->name);
      rc->pk_vals[j] = cat_v_null(c->type);
      continue;
    }
    int r = fit(c, v, &rc->pk_vals[j], rc->cast_buf + (size_t)j * CAST_BUF, err);
    if (r != EXEC_OK) return r;
  }
  cat_error ce = {0};
  size_t klen = 0;
  if (cat_key_encode(t->key_cols, t->n_pk, rc->pk_vals, rc->key, CAT_KEY_MAX, &klen, &ce) !=
      CAT_OK)
    return exec_error_set(err, ce.code == CAT_ERR_TOOBIG ? EXEC_TOOBIG : EXEC_CONSTRAINT,
                          "row key of %s: %s", t->name, ce.msg);
  rc->key_len = klen;
  if (buf) {
    if (cap < klen)
      return exec_error_set(err, EXEC_TOOBIG, "row key of %s: %zu bytes do not fit in %zu", t->name,
                            klen, cap);
    memcpy(buf, rc->key, klen);
  }
  if (len) *len = klen;
  return EXEC_OK;
}

int exec_row_put(exec_rowcodec *rc, const cat_value *vals, const bool *set, int64_t ts,
                 kv_batch *b, exec_error *err) {
  const cat_table *t = rc->table;
  int r = exec_row_key(rc, vals, NULL, 0, NULL, err);
  if (r != EXEC_OK) return r;
  /* Check every set value before adding anything, so a bad value leaves b unchanged. */
  for (int i = 0; i < t->n_columns; i++) {
    const cat_column *c = &t->columns[i];
    if (c->pk_pos >= 0 || (set && !set[i])) continue;
    if (vals[i].is_null) {
      if (!c->nullable)
        return exec_error_set(err, EXEC_CONSTRAINT, "column %s may not be NULL", c->name);
      continue;
    }
    uint8_t cbuf[CAST_BUF];
    cat_value cv;
    r = fit(c, &vals[i], &cv, cbuf, err);
    if (r != EXEC_OK) return r;
  }
  int kr = kv_batch_put(b, rc->key_family_id, rc->key, rc->key_len, CAT_MARKER_QUALIFIER, 1,
                        ts, "", 0);
  if (kr != KV_OK) return kv_fail(err, kr, "row marker");
  for (int i = 0; i < t->n_columns; i++) {
    const cat_column *c = &t->columns[i];
    if (c->pk_pos >= 0 || (set && !set[i])) continue;
    uint8_t q[2];
    size_t qlen = cat_column_qualifier(c->id, q);
    uint32_t fam = t->families[c->family].kv_id;
    if (vals[i].is_null) {
      kr = kv_batch_delete(b, fam, KV_DELETE_COLUMN, rc->key, rc->key_len, q, qlen, ts);
      if (kr != KV_OK) return kv_fail(err, kr, c->name);
      continue;
    }
    uint8_t cbuf[CAST_BUF], enc[CAT_FIXED_ENC_MAX];
    cat_value cv;
    r = fit(c, &vals[i], &cv, cbuf, err);
    if (r != EXEC_OK) return r;
    const uint8_t *val;
    size_t vlen;
    if (cat_type_is_string(cv.type.id) || cv.type.id == CAT_T_VARBINARY) {
      /* The cell value of a string is its bytes (CHAR: trimmed by cat_value_check). */
      val = cv.u.s.p;
      vlen = cv.type.id == CAT_T_CHAR ? cat_char_trim(cv.u.s.p, cv.u.s.len) : cv.u.s.len;
    } else {
      cat_error ce = {0};
      if (cat_vc_encode(&cv, enc, sizeof enc, &vlen, &ce) != CAT_OK)
        return exec_error_set(err, EXEC_ERROR, "column %s: %s", c->name, ce.msg);
      val = enc;
    }
    if (vlen > KV_MAX_VALUE)
      return exec_error_set(err, EXEC_TOOBIG,
                            "column %s: value of %zu bytes over the cell maximum %u", c->name,
                            vlen, KV_MAX_VALUE);
    kr = kv_batch_put(b, fam, rc->key, rc->key_len, q, qlen, ts, val ? (const void *)val : "",
                      vlen);
    if (kr != KV_OK) return kv_fail(err, kr, c->name);
  }
  return EXEC_OK;
}

int exec_row_delete(exec_rowcodec *rc, const uint8_t *key, size_t key_len, int64_t ts,
                    kv_batch *b, exec_error *err) {
  const cat_table *t = rc->table;
  if (key_len == 0)
    return exec_error_set(err, EXEC_ERROR, "delete from %s: empty row key", t->name);
  for (int f = 0; f < t->n_families; f++) {
    int kr = kv_batch_delete(b, t->families[f].kv_id, KV_DELETE_FAMILY, key, key_len, NULL, 0,
                             ts);
    if (kr != KV_OK) return kv_fail(err, kr, "row delete");
  }
  return EXEC_OK;
}

/* Copy a string value's bytes into arena a. */
static int own(struct plan_arena *a, cat_value *v, exec_error *err) {
  if (v->is_null || !(cat_type_is_string(v->type.id) || v->type.id == CAT_T_VARBINARY))
    return EXEC_OK;
  uint8_t *p = plan_arena_alloc(a, v->u.s.len ? v->u.s.len : 1);
  if (!p) return exec_error_set(err, EXEC_NOMEM, "out of memory copying a row value");
  if (v->u.s.len) memcpy(p, v->u.s.p, v->u.s.len);
  v->u.s.p = p;
  return EXEC_OK;
}

int exec_row_decode(exec_rowcodec *rc, const kv_row *row, const bool *need, cat_value *vals,
                    struct plan_arena *copy, exec_error *err) {
  const cat_table *t = rc->table;
  bool any_key = false;
  for (int j = 0; j < t->n_pk && !any_key; j++) any_key = !need || need[t->pk[j]];
  if (any_key) {
    cat_error ce = {0};
    if (cat_key_decode(t->key_cols, t->n_pk, row->key, row->key + row->key_len, rc->pk_vals,
                       rc->scratch, CAT_KEY_MAX, NULL, &ce) != CAT_OK)
      return exec_error_set(err, EXEC_CORRUPT, "row key of %s does not decode: %s", t->name,
                            ce.msg);
    for (int j = 0; j < t->n_pk; j++) {
      int i = t->pk[j];
      if (need && !need[i]) continue;
      vals[i] = rc->pk_vals[j];
      vals[i].type = t->columns[i].type;
      if (copy) {
        int r = own(copy, &vals[i], err);
        if (r != EXEC_OK) return r;
      }
    }
  }
  for (int i = 0; i < t->n_columns; i++)
    if (t->columns[i].pk_pos < 0 && (!need || need[i])) vals[i] = cat_v_null(t->columns[i].type);
  for (uint32_t k = 0; k < row->n_cells; k++) {
    const kv_cell_view *cell = &row->cells[k];
    if (cell->family_id == rc->key_family_id) continue;
    const uint8_t *q = cell->qual;
    uint32_t id;
    if (cell->qual_len == 1 && q[0] < 0x80) id = q[0];
    else if (cell->qual_len == 2 && (q[0] & 0x80)) id = ((uint32_t)(q[0] & 0x7F) << 8) | q[1];
    else continue;
    if (id > rc->max_id || rc->col_of_id[id] < 0) continue;
    int i = rc->col_of_id[id];
    const cat_column *c = &t->columns[i];
    if (t->families[c->family].kv_id != cell->family_id) continue;
    if ((need && !need[i]) || !vals[i].is_null) continue; /* older version of a filled one */
    cat_error ce = {0};
    if (cat_vc_decode(&c->type, cell->value, cell->value_len, &vals[i], &ce) != CAT_OK)
      return exec_error_set(err, EXEC_CORRUPT, "cell of %s.%s does not decode: %s", t->name,
                            c->name, ce.msg);
    vals[i].type = c->type;
    if (copy) {
      int r = own(copy, &vals[i], err);
      if (r != EXEC_OK) return r;
    }
  }
  return EXEC_OK;
}
