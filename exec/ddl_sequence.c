/*
** exec/ddl_sequence.c: CREATE SEQUENCE and DROP SEQUENCE from the AST (sql_create_sequence,
** sql_drop) to the catalog (cat_create_sequence, cat_drop_sequence; rules in exec/ddl.h
** "Sequences").
**
** The options follow Phoenix: START [WITH] n, INCREMENT [BY] n, MINVALUE n, MAXVALUE n,
** CYCLE, CACHE n, each at most once, in any order, n an integer literal (BIGINT range, a
** sign allowed). Defaults: INCREMENT 1, MINVALUE and MAXVALUE the BIGINT range, CACHE 100;
** START 1 when none of START, MINVALUE and MAXVALUE is given, else MINVALUE for an
** ascending sequence and MAXVALUE for a descending one (Phoenix's rule). Every error names
** the option and carries its offset; the catalog checks that the options hold together
** (INCREMENT 0, MINVALUE > MAXVALUE, START outside them) and its message gets the offset of
** the option it is about.
** Not here: parsing, the record, handing out values (catalog/cat_sequence.c).
*/
#include "exec/ddl_int.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SEQ_DEFAULT_CACHE 100 /* Phoenix's phoenix.sequence.cacheSize default */

/* ORDER SEQ_OPT: the option words, in the order of the value slots below. */
static const char *const opt_names[] = {"START", "INCREMENT", "MINVALUE", "MAXVALUE", "CYCLE",
                                        "CACHE"};
enum { O_START, O_INCREMENT, O_MIN, O_MAX, O_CYCLE, O_CACHE, O_COUNT };

/* The integer an option's value expression holds (a literal, maybe negated) into *v. */
static int option_value(const sql_option *o, int64_t *v, exec_error *err) {
  const sql_expr *e = o->value;
  bool neg = e && e->kind == SQL_E_UNARY && e->op == SQL_OP_NEG;
  if (neg) e = e->left;
  if (!e || e->kind != SQL_E_LITERAL || e->lit != SQL_LIT_INTEGER)
    return exec_ddl_fail(err, EXEC_ERROR, o->off, "sequence option %s needs an integer value",
                         o->name);
  uint64_t u = 0, lim = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
  for (size_t i = 0; i < e->text_len; i++) {
    uint64_t d = (uint64_t)(e->text[i] - '0');
    if (u > (lim - d) / 10)
      return exec_ddl_fail(err, EXEC_ERROR, o->off,
                           "sequence option %s: %s%s is outside the BIGINT range", o->name,
                           neg ? "-" : "", e->text);
    u = u * 10 + d;
  }
  *v = neg ? (int64_t)(0 - u) : (int64_t)u;
  return EXEC_OK;
}

static int create_sequence(cat_catalog *cat, const sql_create_sequence *c, exec_error *err) {
  int64_t val[O_COUNT] = {0};
  int64_t off[O_COUNT]; /* offset of each option given, -1 when absent */
  for (int k = 0; k < O_COUNT; k++) off[k] = -1;
  for (int i = 0; c->opts && i < c->opts->n; i++) {
    const sql_option *o = &c->opts->a[i];
    int k = 0;
    while (k < O_COUNT && strcmp(o->name, opt_names[k]) != 0) k++;
    if (k == O_COUNT)
      return exec_ddl_fail(err, EXEC_ERROR, o->off, "unknown sequence option %s (START, "
                           "INCREMENT, MINVALUE, MAXVALUE, CYCLE, CACHE)", o->name);
    if (off[k] >= 0)
      return exec_ddl_fail(err, EXEC_ERROR, o->off, "sequence option %s given twice", o->name);
    off[k] = o->off;
    if (k == O_CYCLE) {
      if (o->value)
        return exec_ddl_fail(err, EXEC_ERROR, o->off, "sequence option CYCLE takes no value");
      continue;
    }
    int rc = option_value(o, &val[k], err);
    if (rc) return rc;
  }
  if (cat_find_sequence(cat, c->name)) {
    if (c->if_not_exists) return EXEC_OK;
    return exec_ddl_fail(err, EXEC_ERROR, c->name_off, "sequence %s already exists", c->name);
  }
  cat_sequence_def d;
  d.name = c->name;
  d.increment = off[O_INCREMENT] >= 0 ? val[O_INCREMENT] : 1;
  d.min_value = off[O_MIN] >= 0 ? val[O_MIN] : INT64_MIN;
  d.max_value = off[O_MAX] >= 0 ? val[O_MAX] : INT64_MAX;
  d.cycle = off[O_CYCLE] >= 0;
  d.cache = off[O_CACHE] >= 0 ? val[O_CACHE] : SEQ_DEFAULT_CACHE;
  if (off[O_START] >= 0) d.start = val[O_START];
  else if (off[O_MIN] < 0 && off[O_MAX] < 0) d.start = 1;
  else d.start = d.increment > 0 ? d.min_value : d.max_value;
  /* the option a failed check is about, for the error's position */
  int64_t at = c->name_off;
  if (d.increment == 0) at = off[O_INCREMENT];
  else if (d.min_value > d.max_value) at = off[O_MIN] >= 0 ? off[O_MIN] : off[O_MAX];
  else if (d.start < d.min_value || d.start > d.max_value)
    at = off[O_START] >= 0 ? off[O_START] : at;
  else if (d.cache < 1) at = off[O_CACHE];
  cat_error ce = {0};
  if (cat_create_sequence(cat, &d, &ce) != CAT_OK) return exec_ddl_cat_fail(err, &ce, at);
  return EXEC_OK;
}

static int drop_sequence(cat_catalog *cat, const sql_drop *d, uint32_t off, exec_error *err) {
  if (!cat_find_sequence(cat, d->name)) {
    if (d->if_exists) return EXEC_OK;
    return exec_ddl_fail(err, EXEC_ERROR, off, "sequence %s does not exist", d->name);
  }
  cat_error ce = {0};
  if (cat_drop_sequence(cat, d->name, &ce) != CAT_OK) return exec_ddl_cat_fail(err, &ce, off);
  return EXEC_OK;
}

int exec_ddl_sequence(cat_catalog *cat, const sql_stmt *stmt, exec_error *err) {
  if (stmt->kind == SQL_STMT_CREATE_SEQUENCE)
    return create_sequence(cat, stmt->u.create_sequence, err);
  return drop_sequence(cat, stmt->u.drop, stmt->off, err);
}
