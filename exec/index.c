/*
** exec/index.c: the index row codec (contract and layout in exec/index.h): binding an
** index's expression keys, building the index row key and cells of a data row, and
** decoding an index row back into the data row's PK, key and INCLUDE values.
**
** Expression keys are bound by parsing "SELECT <expr> FROM "<table>"" and binding it with
** the planner (planner/plan.h plan_bind): the first projected expression is the key, over
** the table's column slots. Not here: maintenance on writes (exec/index_maint.c), the
** backfill (exec/index_build.c), CHECK INDEX (exec/index_check.c).
*/
#include "exec/index.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalog/salt.h"
#include "catalog/valcodec.h"
#include "catalog/value.h"
#include "exec/eval.h"
#include "exec/func.h"
#include "exec/index_int.h"
#include "planner/index_expr.h"
#include "sql/parser.h"

#define CAST_BUF 64 /* cast output text per value (cat_value_cast's rule) */

int exec_index_kv_fail(exec_error *err, int rc, const char *what) {
  int code = rc == KV_ERR_TOOBIG   ? EXEC_TOOBIG
             : rc == KV_ERR_NOMEM  ? EXEC_NOMEM
             : rc == KV_ERR_IO     ? EXEC_IOERR
             : rc == KV_ERR_NOSPC  ? EXEC_FULL
             : rc == KV_ERR_CORRUPT ? EXEC_CORRUPT
             : rc == KV_ERR_READONLY ? EXEC_READONLY
                                    : EXEC_ERROR;
  return exec_error_set(err, code, "%s: %s (%s)", what, kv_status_name(rc), kv_errmsg());
}

/* Whether e calls a function whose value depends on the time of the statement. */
static bool volatile_expr(const plan_expr *e) {
  if (!e) return false;
  if (e->kind == PX_FUNC && !cat_func_deterministic(e->func, (int)e->n_args)) return true;
  if (e->kind == PX_PARAM || e->kind == PX_AGG) return true;
  for (uint32_t i = 0; i < e->n_args; i++)
    if (volatile_expr(e->args[i])) return true;
  return false;
}

/* Mark the columns e reads in need. */
static void mark_columns(const plan_expr *e, bool *need, int n) {
  if (!e) return;
  if (e->kind == PX_COLUMN && e->column >= 0 && e->column < n) need[e->column] = true;
  for (uint32_t i = 0; i < e->n_args; i++) mark_columns(e->args[i], need, n);
}

/* Bind the expression text of key k against t into ic->key_expr[k]. */
static int bind_key_expr(exec_index_codec *ic, const cat_catalog *cat, int k, exec_error *err) {
  const cat_table *t = ic->table;
  const char *text = ic->index->keys[k];
  if (!cat) {
    /* the reading side (an index scan) binds against the table alone, as the planner did */
    char m[EXEC_ERRMSG_MAX];
    int r = plan_index_key_bind(t, text, &ic->arena, &ic->key_expr[k], m, sizeof m);
    if (r) return exec_error_set(err, r, "index %s: %s", ic->index->name, m);
    return EXEC_OK;
  }
  size_t cap = strlen(text) + 2 * strlen(t->name) + 32;
  char *sql = plan_arena_alloc(&ic->arena, cap);
  if (!sql) return exec_error_set(err, EXEC_NOMEM, "out of memory binding an index key");
  size_t n = (size_t)snprintf(sql, cap, "SELECT %s FROM \"", text);
  for (const char *p = t->name; *p; p++) {
    if (*p == '"') sql[n++] = '"';
    sql[n++] = *p;
  }
  sql[n++] = '"';
  sql[n] = 0;
  sql_stmt *st = NULL;
  sql_error se;
  memset(&se, 0, sizeof se);
  if (sql_parse(sql, n, &st, NULL, &se) != SQL_OK || !st)
    return exec_error_set(err, EXEC_ERROR, "index %s: key expression %s does not parse: %s",
                          ic->index->name, text, se.message);
  plan_bound b;
  memset(&b, 0, sizeof b);
  char msg[EXEC_ERRMSG_MAX];
  msg[0] = 0;
  int off = -1;
  int rc = plan_bind(cat, st, sql, &ic->arena, &b, msg, sizeof msg, &off);
  sql_stmt_free(st);
  if (rc)
    return exec_error_set(err, rc == EXEC_NOMEM ? EXEC_NOMEM : EXEC_ERROR,
                          "index %s: key expression %s: %s", ic->index->name, text, msg);
  const plan_select *sel = b.select;
  if (!sel || sel->n_out < 1 || sel->n_aggs > 0 || sel->n_group > 0 || sel->table != t)
    return exec_error_set(err, EXEC_ERROR, "index %s: key expression %s is not a row value",
                          ic->index->name, text);
  plan_expr *e = sel->proj[0];
  if (volatile_expr(e))
    return exec_error_set(err, EXEC_ERROR,
                          "index %s: key expression %s is not deterministic", ic->index->name,
                          text);
  if (e->type.id == 0)
    return exec_error_set(err, EXEC_ERROR, "index %s: key expression %s has no type",
                          ic->index->name, text);
  ic->key_expr[k] = e;
  return EXEC_OK;
}

/* A PX_COLUMN node for column c of t. */
static plan_expr *column_node(exec_index_codec *ic, int c) {
  plan_expr *e = plan_arena_alloc(&ic->arena, sizeof *e);
  if (!e) return NULL;
  memset(e, 0, sizeof *e);
  e->kind = PX_COLUMN;
  e->column = c;
  e->type = ic->table->columns[c].type;
  e->nullable = true;
  return e;
}

int exec_index_codec_init(exec_index_codec *ic, const cat_catalog *cat, const cat_table *t,
                          const cat_index *ix, exec_error *err) {
  memset(ic, 0, sizeof *ic);
  plan_arena_init(&ic->arena);
  exec_arena_init(&ic->eval_arena);
  ic->table = t;
  ic->index = ix;
  ic->n_keys = ix->n_keys;
  ic->n_pk = t->n_pk;
  ic->n_key_cols = ix->n_keys + t->n_pk;
  ic->key_family_id = ix->kv_key_family;
  ic->data_family_id = ix->kv_data_family;
  size_t nk = (size_t)ic->n_key_cols, nc = (size_t)t->n_columns + 1;
  ic->key_cols = calloc(nk, sizeof *ic->key_cols);
  ic->key_col = calloc((size_t)ix->n_keys + 1, sizeof *ic->key_col);
  ic->key_expr = calloc((size_t)ix->n_keys + 1, sizeof *ic->key_expr);
  ic->include_col = calloc((size_t)ix->n_include + 1, sizeof *ic->include_col);
  ic->need = calloc(nc, sizeof *ic->need);
  ic->covered = calloc(nc, sizeof *ic->covered);
  ic->key = malloc(CAT_KEY_MAX);
  ic->kvals = calloc(nk, sizeof *ic->kvals);
  ic->scratch = malloc(CAT_KEY_MAX + nk * CAST_BUF);
  if (!ic->key_cols || !ic->key_col || !ic->key_expr || !ic->include_col || !ic->need ||
      !ic->covered || !ic->key || !ic->kvals || !ic->scratch)
    return exec_error_set(err, EXEC_NOMEM, "out of memory building the codec of index %s",
                          ix->name);
  for (int k = 0; k < ix->n_keys; k++) {
    int c = cat_find_column(t, ix->keys[k]);
    ic->key_col[k] = c;
    if (c >= 0) {
      ic->key_expr[k] = column_node(ic, c);
      if (!ic->key_expr[k])
        return exec_error_set(err, EXEC_NOMEM, "out of memory building index %s", ix->name);
      ic->covered[c] = true;
    } else {
      int rc = bind_key_expr(ic, cat, k, err);
      if (rc) return rc;
    }
    mark_columns(ic->key_expr[k], ic->need, t->n_columns);
    if (ic->key_expr[k]->type.id == CAT_T_ARRAY) /* no order-preserving encoding */
      return exec_error_set(err, EXEC_ERROR, "index %s: key %s is an ARRAY, which cannot be an "
                            "index key (index an element instead: %s[1])", ix->name,
                            ix->keys[k], ix->keys[k]);
    ic->key_cols[k].type = ic->key_expr[k]->type;
    ic->key_cols[k].desc = ix->key_desc[k];
    ic->key_cols[k].nullable = true;
  }
  for (int j = 0; j < t->n_pk; j++) {
    ic->key_cols[ix->n_keys + j] = t->key_cols[j];
    ic->need[t->pk[j]] = true;
    ic->covered[t->pk[j]] = true;
  }
  /* an INCLUDE column that the index row's key already holds (a primary key column, or
     an indexed column) is read from the key: it gets no cell of its own */
  ic->n_include = 0;
  for (int i = 0; i < ix->n_include; i++) {
    int c = cat_find_column(t, ix->include[i]);
    if (c < 0)
      return exec_error_set(err, EXEC_CORRUPT, "index %s: INCLUDE column %s is not in %s",
                            ix->name, ix->include[i], t->name);
    if (ic->covered[c]) continue;
    ic->include_col[ic->n_include++] = c;
    ic->need[c] = true;
    ic->covered[c] = true;
  }
  return EXEC_OK;
}

void exec_index_codec_free(exec_index_codec *ic) {
  if (!ic) return;
  free(ic->key_cols);
  free(ic->key_col);
  free(ic->key_expr);
  free(ic->include_col);
  free(ic->need);
  free(ic->covered);
  free(ic->key);
  free(ic->kvals);
  free(ic->scratch);
  plan_arena_free(&ic->arena);
  exec_arena_free(&ic->eval_arena);
  memset(ic, 0, sizeof *ic);
}

int exec_index_fit(const cat_type *t, const char *what, const cat_value *in, cat_value *out,
                   uint8_t *buf, exec_error *err) {
  if (in->is_null) {
    *out = cat_v_null(*t);
    return EXEC_OK;
  }
  cat_error ce = {0};
  cat_value tmp;
  const cat_value *src = in;
  if (in->type.id != t->id) {
    if (cat_value_cast(in, t, &tmp, buf, CAST_BUF, &ce) != CAT_OK)
      return exec_error_set(err, ce.code == CAT_ERR_TYPE ? EXEC_ERROR : EXEC_CONSTRAINT,
                            "%s: %s", what, ce.msg);
    src = &tmp;
  }
  if (cat_value_check(t, src, out, &ce) != CAT_OK)
    return exec_error_set(err, ce.code == CAT_ERR_TYPE ? EXEC_ERROR : EXEC_CONSTRAINT,
                          "%s: %s", what, ce.msg);
  return EXEC_OK;
}

int exec_index_row_key(exec_index_codec *ic, const cat_value *row, exec_error *err) {
  const cat_table *t = ic->table;
  uint8_t *cbuf = ic->scratch + CAT_KEY_MAX;
  char msg[EXEC_ERRMSG_MAX];
  exec_arena_reset(&ic->eval_arena);
  for (int k = 0; k < ic->n_keys; k++) {
    cat_value v;
    int c = ic->key_col[k];
    if (c >= 0) {
      v = row[c];
    } else {
      exec_eval_ctx ctx;
      memset(&ctx, 0, sizeof ctx);
      ctx.row = row;
      ctx.scratch = &ic->eval_arena;
      ctx.msg = msg;
      ctx.cap = sizeof msg;
      msg[0] = 0;
      int r = exec_eval(&ctx, ic->key_expr[k], &v);
      if (r)
        return exec_error_set(err, r == EXEC_NOMEM ? EXEC_NOMEM : EXEC_CONSTRAINT,
                              "index %s: key %s: %s", ic->index->name, ic->index->keys[k], msg);
    }
    int r = exec_index_fit(&ic->key_cols[k].type, ic->index->keys[k], &v, &ic->kvals[k],
                           cbuf + (size_t)k * CAST_BUF, err);
    if (r) {
      if (err) {
        char m[EXEC_ERRMSG_MAX];
        snprintf(m, sizeof m, "%s", err->msg);
        exec_error_set(err, r, "index %s key %s", ic->index->name, m);
      }
      return r;
    }
  }
  for (int j = 0; j < t->n_pk; j++) {
    const cat_column *col = &t->columns[t->pk[j]];
    const cat_value *v = &row[t->pk[j]];
    if (v->is_null && !col->nullable)
      return exec_error_set(err, EXEC_CONSTRAINT, "column %s: primary key value may not be NULL",
                            col->name);
    int r = exec_index_fit(&col->type, col->name, v, &ic->kvals[ic->n_keys + j],
                           cbuf + (size_t)(ic->n_keys + j) * CAST_BUF, err);
    if (r) return r;
  }
  cat_error ce = {0};
  size_t len = 0;
  if (cat_key_encode(ic->key_cols, ic->n_key_cols, ic->kvals, ic->key, CAT_KEY_MAX, &len, &ce) !=
      CAT_OK)
    return exec_error_set(err, ce.code == CAT_ERR_TOOBIG ? EXEC_TOOBIG : EXEC_CONSTRAINT,
                          "row key of index %s: %s", ic->index->name, ce.msg);
  if (ic->index->salt_buckets) { /* a salted index (catalog/salt.h): its bucket in front */
    if (len + 1 > CAT_KEY_MAX)
      return exec_error_set(err, EXEC_TOOBIG, "row key of index %s: %zu bytes over %u",
                            ic->index->name, len + 1, CAT_KEY_MAX);
    memmove(ic->key + 1, ic->key, len);
    ic->key[0] = cat_salt_byte(ic->key + 1, len, ic->index->salt_buckets);
    len++;
  }
  ic->key_len = len;
  return EXEC_OK;
}

int exec_index_cell_value(const cat_value *cv, uint8_t *enc, size_t cap, const uint8_t **val,
                          size_t *vlen, exec_error *err) {
  if (cat_type_has_bytes(cv->type.id)) {
    *val = cv->u.s.p;
    *vlen = cv->type.id == CAT_T_CHAR ? cat_char_trim(cv->u.s.p, cv->u.s.len) : cv->u.s.len;
    if (!*val) *val = (const uint8_t *)"";
    return EXEC_OK;
  }
  cat_error ce = {0};
  if (cat_vc_encode(cv, enc, cap, vlen, &ce) != CAT_OK)
    return exec_error_set(err, EXEC_ERROR, "%s", ce.msg);
  *val = enc;
  return EXEC_OK;
}

int exec_index_put(exec_index_codec *ic, const cat_value *row, int64_t ts, kv_batch *b,
                   exec_error *err) {
  int r = exec_index_row_key(ic, row, err);
  if (r) return r;
  const cat_table *t = ic->table;
  /* Check the INCLUDE values before adding anything. */
  for (int i = 0; i < ic->n_include; i++) {
    const cat_column *c = &t->columns[ic->include_col[i]];
    uint8_t cbuf[CAST_BUF];
    cat_value cv;
    r = exec_index_fit(&c->type, c->name, &row[ic->include_col[i]], &cv, cbuf, err);
    if (r) return r;
  }
  int kr = kv_batch_put(b, ic->key_family_id, ic->key, ic->key_len, CAT_MARKER_QUALIFIER, 1, ts,
                        "", 0);
  if (kr != KV_OK) return exec_index_kv_fail(err, kr, "index marker");
  for (int i = 0; i < ic->n_include; i++) {
    const cat_column *c = &t->columns[ic->include_col[i]];
    uint8_t q[2];
    size_t qlen = cat_column_qualifier(c->id, q);
    uint8_t cbuf[CAST_BUF], enc[CAT_FIXED_ENC_MAX];
    cat_value cv;
    r = exec_index_fit(&c->type, c->name, &row[ic->include_col[i]], &cv, cbuf, err);
    if (r) return r;
    if (cv.is_null) {
      kr = kv_batch_delete(b, ic->data_family_id, KV_DELETE_COLUMN, ic->key, ic->key_len, q,
                           qlen, ts);
    } else {
      const uint8_t *val;
      size_t vlen;
      r = exec_index_cell_value(&cv, enc, sizeof enc, &val, &vlen, err);
      if (r) return r;
      kr = kv_batch_put(b, ic->data_family_id, ic->key, ic->key_len, q, qlen, ts, val, vlen);
    }
    if (kr != KV_OK) return exec_index_kv_fail(err, kr, c->name);
  }
  return EXEC_OK;
}

int exec_index_delete_key(exec_index_codec *ic, const uint8_t *key, size_t len, int64_t ts,
                          kv_batch *b, exec_error *err) {
  int kr = kv_batch_delete(b, ic->key_family_id, KV_DELETE_FAMILY, key, len, NULL, 0, ts);
  if (kr == KV_OK && ic->n_include > 0)
    kr = kv_batch_delete(b, ic->data_family_id, KV_DELETE_FAMILY, key, len, NULL, 0, ts);
  if (kr != KV_OK) return exec_index_kv_fail(err, kr, "index row delete");
  return EXEC_OK;
}

int exec_index_decode_key(const exec_index_codec *ic, const uint8_t *p, const uint8_t *limit,
                          cat_value *kvals, uint8_t *scratch, size_t cap, size_t *pk_off,
                          exec_error *err) {
  cat_error ce = {0};
  const uint8_t *kp = p + (ic->index->salt_buckets ? 1 : 0); /* after a salt byte */
  if (kp > limit)
    return exec_error_set(err, EXEC_CORRUPT, "row key of index %s does not decode: empty",
                          ic->index->name);
  if (cat_key_decode(ic->key_cols, ic->n_key_cols, kp, limit, kvals, scratch, cap, NULL, &ce) !=
      CAT_OK)
    return exec_error_set(err, ce.code == CAT_ERR_TOOBIG ? EXEC_TOOBIG : EXEC_CORRUPT,
                          "row key of index %s does not decode: %s", ic->index->name, ce.msg);
  if (pk_off) {
    const uint8_t *q = kp;
    for (int k = 0; k < ic->n_keys && q; k++) q = cat_key_skip_col(&ic->key_cols[k], q, limit);
    if (!q)
      return exec_error_set(err, EXEC_CORRUPT, "row key of index %s does not decode",
                            ic->index->name);
    *pk_off = (size_t)(q - p);
  }
  return EXEC_OK;
}

/* Copy a string value's bytes into arena a. */
static int own(plan_arena *a, cat_value *v, exec_error *err) {
  if (v->is_null || !cat_type_has_bytes(v->type.id))
    return EXEC_OK;
  uint8_t *p = plan_arena_alloc(a, v->u.s.len ? v->u.s.len : 1);
  if (!p) return exec_error_set(err, EXEC_NOMEM, "out of memory copying an index value");
  if (v->u.s.len) memcpy(p, v->u.s.p, v->u.s.len);
  v->u.s.p = p;
  return EXEC_OK;
}

int exec_index_decode_row(exec_index_codec *ic, const kv_row *row, cat_value *slots,
                          plan_arena *copy, exec_error *err) {
  const cat_table *t = ic->table;
  int r = exec_index_decode_key(ic, row->key, row->key + row->key_len, ic->kvals, ic->scratch,
                                CAT_KEY_MAX, NULL, err);
  if (r) return r;
  for (int k = 0; k < ic->n_keys; k++) {
    int c = ic->key_col[k];
    if (c < 0) continue;
    slots[c] = ic->kvals[k];
    slots[c].type = t->columns[c].type;
  }
  for (int j = 0; j < t->n_pk; j++) {
    slots[t->pk[j]] = ic->kvals[ic->n_keys + j];
    slots[t->pk[j]].type = t->columns[t->pk[j]].type;
  }
  for (int i = 0; i < ic->n_include; i++) {
    const cat_column *c = &t->columns[ic->include_col[i]];
    uint8_t q[2];
    size_t qlen = cat_column_qualifier(c->id, q);
    cat_value *v = &slots[ic->include_col[i]];
    *v = cat_v_null(c->type);
    for (uint32_t k = 0; k < row->n_cells; k++) {
      const kv_cell_view *cell = &row->cells[k];
      if (cell->family_id != ic->data_family_id || cell->qual_len != qlen ||
          memcmp(cell->qual, q, qlen) != 0)
        continue;
      cat_error ce = {0};
      if (cat_vc_decode(&c->type, cell->value, cell->value_len, v, &ce) != CAT_OK)
        return exec_error_set(err, EXEC_CORRUPT, "cell of index %s column %s does not decode: %s",
                              ic->index->name, c->name, ce.msg);
      v->type = c->type;
      break; /* newest version first */
    }
  }
  if (copy)
    for (int c = 0; c < t->n_columns; c++)
      if (ic->covered[c]) {
        r = own(copy, &slots[c], err);
        if (r) return r;
      }
  return EXEC_OK;
}

void exec_index_data_families(const cat_table *t, const bool *need, uint32_t *fams, uint32_t cap,
                              uint32_t *n) {
  *n = 0;
  if (!cap) return;
  fams[(*n)++] = t->families[0].kv_id;
  for (int f = 1; f < t->n_families && *n < cap; f++) {
    bool used = false;
    for (int c = 0; c < t->n_columns && !used; c++)
      used = need[c] && t->columns[c].pk_pos < 0 && t->columns[c].family == f;
    if (used) fams[(*n)++] = t->families[f].kv_id;
  }
}

bool exec_index_row_unverified(const exec_index_codec *ic, const kv_row *r) {
  for (uint32_t i = 0; i < r->n_cells; i++) {
    const kv_cell_view *c = &r->cells[i];
    if (c->family_id == ic->key_family_id && c->qual_len == 1 &&
        c->qual[0] == (uint8_t)CAT_MARKER_QUALIFIER[0])
      return c->value_len != 0;
  }
  return false;
}

int exec_index_find(const cat_catalog *cat, const char *table, const char *index,
                    const cat_table **t, const cat_index **ix, exec_error *err) {
  *t = cat_find_table(cat, table);
  *ix = NULL;
  if (!*t) return exec_error_set(err, EXEC_ERROR, "table %s does not exist", table);
  *ix = cat_find_index(*t, index);
  if (!*ix)
    return exec_error_set(err, EXEC_ERROR, "index %s does not exist on table %s", index,
                          (*t)->name);
  return EXEC_OK;
}
