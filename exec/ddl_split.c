/*
** exec/ddl_split.c: SPLIT ON (v1, v2, ...) of CREATE TABLE (Phoenix's split points) typed and
** encoded. Each point is a literal for the leading primary-key column, or a row value
** constructor (a, b) for the first columns of the key; it is converted to the column's
** type (catalog/value.h cat_value_cast), refused when its kind does not fit the column (a
** string for a number column, a number for a string column, NULL), and encoded with the
** row-key codec as the key prefix where a region starts. The points must come in strictly
** increasing key order (for a DESC column, decreasing values). Errors name the point by its
** position and give its byte offset. Not here: the other table options (exec/ddl.c), what
** the catalog and the store do with the points (catalog/cat_regions.c, kv/backend.h).
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalog/keycodec.h"
#include "catalog/value.h"
#include "exec/ddl_int.h"

/* Whether a literal of kind lit may stand for a value of type id (Phoenix refuses a split
** point whose type does not match the key column's). */
static bool lit_fits(int lit, int id) {
  switch (lit) {
    case SQL_LIT_TRUE:
    case SQL_LIT_FALSE: return id == CAT_T_BOOLEAN;
    case SQL_LIT_INTEGER:
    case SQL_LIT_DECIMAL:
    case SQL_LIT_DOUBLE: return cat_type_is_numeric(id);
    case SQL_LIT_STRING:
      return cat_type_is_string(id) || id == CAT_T_VARBINARY || id == CAT_T_DATE ||
             id == CAT_T_TIME || id == CAT_T_TIMESTAMP;
    case SQL_LIT_DATE:
    case SQL_LIT_TIMESTAMP: return id == CAT_T_DATE || id == CAT_T_TIMESTAMP;
    case SQL_LIT_TIME: return id == CAT_T_TIME;
    case SQL_LIT_BLOB: return id == CAT_T_VARBINARY;
    default: return false;
  }
}

/* The value of literal e (a sign before a number allowed) as type *t into *out (strings
** into buf[0..cap)): EXEC_OK, or EXEC_ERROR naming point k and column col. */
static int point_value(const sql_expr *e, const cat_type *t, const char *col, int k,
                       cat_value *out, uint8_t *buf, size_t cap, exec_error *err) {
  const sql_expr *lit = e;
  bool neg = false;
  if (lit->kind == SQL_E_UNARY && (lit->op == SQL_OP_NEG || lit->op == SQL_OP_POS) && lit->left) {
    neg = lit->op == SQL_OP_NEG;
    lit = lit->left;
    if (lit->kind != SQL_E_LITERAL || (lit->lit != SQL_LIT_INTEGER && lit->lit != SQL_LIT_DECIMAL &&
                                       lit->lit != SQL_LIT_DOUBLE))
      lit = NULL;
  }
  if (!lit || lit->kind != SQL_E_LITERAL || !lit->text)
    return exec_ddl_fail(err, EXEC_ERROR, e->off,
                         "SPLIT ON: split point %d must be a literal value of column %s", k, col);
  if (lit->lit == SQL_LIT_NULL)
    return exec_ddl_fail(err, EXEC_ERROR, e->off, "SPLIT ON: split point %d is NULL (column %s)",
                         k, col);
  char tn[48];
  if (!lit_fits(lit->lit, t->id))
    return exec_ddl_fail(err, EXEC_ERROR, e->off,
                         "SPLIT ON: split point %d (%s%s%s%s) is not a value of column %s, type %s",
                         k, lit->lit == SQL_LIT_STRING ? "'" : "", neg ? "-" : "", lit->text,
                         lit->lit == SQL_LIT_STRING ? "'" : "", col,
                         cat_type_format(t, tn, sizeof tn));
  cat_value src;
  char text[128];
  if (lit->lit == SQL_LIT_TRUE || lit->lit == SQL_LIT_FALSE) {
    src = cat_v_bool(lit->lit == SQL_LIT_TRUE);
  } else if (lit->lit == SQL_LIT_BLOB) {
    src = cat_v_str(CAT_T_VARBINARY, lit->text, lit->text_len);
  } else if (lit->lit == SQL_LIT_STRING || lit->lit == SQL_LIT_DATE ||
             lit->lit == SQL_LIT_TIME || lit->lit == SQL_LIT_TIMESTAMP) {
    src = cat_v_str(CAT_T_VARCHAR, lit->text, lit->text_len);
  } else { /* a number: its text with the sign, parsed as the column's type */
    if (snprintf(text, sizeof text, "%s%s", neg ? "-" : "", lit->text) >= (int)sizeof text)
      return exec_ddl_fail(err, EXEC_ERROR, e->off, "SPLIT ON: split point %d is too long", k);
    src = cat_v_str(CAT_T_VARCHAR, text, strlen(text));
  }
  cat_error ce = {0};
  if (cat_value_cast(&src, t, out, buf, cap, &ce) != CAT_OK ||
      cat_value_check(t, out, out, &ce) != CAT_OK)
    return exec_ddl_fail(err, EXEC_ERROR, e->off, "SPLIT ON: split point %d for column %s: %s", k,
                         col, ce.msg);
  return EXEC_OK;
}

void exec_ddl_split_free(exec_ddl_splits *s) {
  for (uint32_t i = 0; i < s->n; i++) free(s->keys ? s->keys[i] : NULL);
  free(s->keys);
  free(s->lens);
  memset(s, 0, sizeof *s);
}

int exec_ddl_split_points(const sql_create_table *ct, const cat_column_def *cols,
                          const char *const *pk, const bool *pk_desc, int n_pk,
                          exec_ddl_splits *out, exec_error *err) {
  memset(out, 0, sizeof *out);
  const sql_split *sp = ct->split;
  if (!sp) return EXEC_OK;
  int n = sp->values ? sp->values->n : 0;
  if (n == 0)
    return exec_ddl_fail(err, EXEC_ERROR, sp->off,
                         "SPLIT ON: the list of split points is empty (give at least one value)");
  if (n > CAT_SPLIT_MAX)
    return exec_ddl_fail(err, EXEC_ERROR, sp->off, "SPLIT ON: %d split points (at most %d)", n,
                         CAT_SPLIT_MAX);
  cat_key_col kc[CAT_MAX_COLUMNS];
  const char *names[CAT_MAX_COLUMNS];
  for (int k = 0; k < n_pk; k++) {
    for (int i = 0; i < ct->ncol; i++)
      if (strcmp(cols[i].name, pk[k]) == 0) {
        kc[k].type = cols[i].type;
        kc[k].nullable = cols[i].null_mode == 1;
        names[k] = cols[i].name;
      }
    kc[k].desc = pk_desc ? pk_desc[k] : false;
  }
  out->keys = calloc((size_t)n, sizeof *out->keys);
  out->lens = calloc((size_t)n, sizeof *out->lens);
  uint8_t *key = malloc(CAT_KEY_MAX);
  uint8_t *buf = malloc((size_t)n_pk * 256);
  cat_value *vals = calloc((size_t)n_pk, sizeof *vals);
  int rc = EXEC_OK;
  if (!out->keys || !out->lens || !key || !buf || !vals) {
    rc = exec_ddl_fail(err, EXEC_NOMEM, -1, "out of memory");
    goto done;
  }
  for (int i = 0; i < n && !rc; i++) {
    const sql_expr *e = sp->values->a[i];
    int nv = 1;
    const sql_expr *const *items = (const sql_expr *const *)&sp->values->a[i];
    if (e->kind == SQL_E_ROW && e->list) {
      nv = e->list->n;
      items = (const sql_expr *const *)e->list->a;
      if (nv > n_pk) {
        rc = exec_ddl_fail(err, EXEC_ERROR, e->off,
                           "SPLIT ON: split point %d has %d values, the PRIMARY KEY %d columns",
                           i + 1, nv, n_pk);
        break;
      }
    }
    for (int k = 0; k < nv && !rc; k++)
      rc = point_value(items[k], &kc[k].type, names[k], i + 1, &vals[k], buf + (size_t)k * 256, 256,
                       err);
    if (rc) break;
    size_t len = 0;
    cat_error ce = {0};
    if (cat_key_encode(kc, nv, vals, key, CAT_KEY_MAX, &len, &ce) != CAT_OK) {
      rc = exec_ddl_fail(err, EXEC_ERROR, e->off, "SPLIT ON: split point %d: %s", i + 1, ce.msg);
      break;
    }
    if (!(out->keys[i] = malloc(len))) {
      rc = exec_ddl_fail(err, EXEC_NOMEM, -1, "out of memory");
      break;
    }
    memcpy(out->keys[i], key, len);
    out->lens[i] = (uint32_t)len;
    out->n = (uint32_t)i + 1;
    if (i == 0) continue;
    const uint8_t *a = out->keys[i - 1];
    size_t al = out->lens[i - 1];
    int c = memcmp(a, key, al < len ? al : len);
    if (!c) c = (al > len) - (al < len);
    if (c == 0)
      rc = exec_ddl_fail(err, EXEC_ERROR, e->off,
                         "SPLIT ON: split point %d repeats split point %d", i + 1, i);
    else if (c > 0)
      rc = exec_ddl_fail(err, EXEC_ERROR, e->off,
                         "SPLIT ON: split point %d is out of order: it must come after split "
                         "point %d in key order (ascending values%s)", i + 1, i,
                         kc[0].desc ? "; descending for the DESC column" : "");
  }
done:
  free(key);
  free(buf);
  free(vals);
  if (rc) exec_ddl_split_free(out);
  return rc;
}
