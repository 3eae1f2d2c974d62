/*
** exec/ddl.c: CREATE/DROP TABLE and CREATE/DROP INDEX from the AST (contract and rules in
** exec/ddl.h).
**
** CREATE TABLE turns the sql_create_table tree into a cat_table_def: types resolved and
** checked, the primary key gathered (inline or CONSTRAINT), options parsed into table-wide
** and per-family settings, and every name checked here first so an error can carry the
** byte offset of the offending name; the catalog then re-validates and commits. Every
** string of the definition is borrowed from the tree; the only allocations are the arrays
** of the definition, freed before returning.
**
** CREATE INDEX records the index (BUILDING) and runs its backfill (exec/index_build.c),
** which sets it ACTIVE; DROP INDEX and DROP TABLE drop the index tables through the catalog.
** Not here: parsing, index maintenance (exec/index_maint.c), ALTER TABLE (exec/ddl_alter.c).
*/
#include "exec/ddl.h"
#include "catalog/cat_view.h"
#include "exec/ddl_int.h"
#include "exec/index.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_BLOCKSIZE (64u << 20) /* kv's BLOCKSIZE limit */

int exec_ddl_fail(exec_error *err, int code, int64_t off, const char *fmt, ...) {
  if (err) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    va_end(ap);
    err->code = code;
    err->offset = off < 0 || off > INT_MAX ? -1 : (int)off;
  }
  return code;
}

/* Map a catalog error onto an exec status, keeping its message. */
int exec_ddl_cat_fail(exec_error *err, const cat_error *ce, int64_t off) {
  int code = EXEC_ERROR;
  if (ce->code == CAT_ERR_NOMEM) code = EXEC_NOMEM;
  else if (ce->code == CAT_ERR_KV) {
    switch (ce->kv_code) {
      case KV_ERR_IO: code = EXEC_IOERR; break;
      case KV_ERR_NOSPC: code = EXEC_FULL; break;
      case KV_ERR_CORRUPT: code = EXEC_CORRUPT; break;
      case KV_ERR_LOCKED: code = EXEC_LOCKED; break;
      case KV_ERR_NOMEM: code = EXEC_NOMEM; break;
      case KV_ERR_READONLY: code = EXEC_READONLY; break;
      case KV_ERR_TOOBIG: code = EXEC_TOOBIG; break;
      default: code = EXEC_ERROR; break;
    }
  }
  return exec_ddl_fail(err, code, code == EXEC_ERROR ? off : -1, "%s", ce->msg);
}

/* ---- Types ------------------------------------------------------------------------------ */
/* Resolve a written type into *out. */
int exec_ddl_resolve_type(const sql_type *st, const char *col, cat_type *out, exec_error *err) {
  int id = cat_type_lookup(st->name);
  if (!id) {
    const char *hint = cat_type_hint(st->name); /* another dialect's name for one of ours */
    if (hint)
      return exec_ddl_fail(err, EXEC_ERROR, st->off, "column %s: unknown type %s (use %s)", col,
                           st->name, hint);
    return exec_ddl_fail(err, EXEC_ERROR, st->off, "column %s: unknown type %s", col, st->name);
  }
  cat_error ce = {0};
  if (cat_type_with_args(id, st->nargs, st->arg, st->array, out, &ce) != CAT_OK)
    return exec_ddl_fail(err, EXEC_ERROR, st->off, "column %s: %s", col, ce.msg);
  return EXEC_OK;
}

/* ---- Options ---------------------------------------------------------------------------- */
static bool name_is(const char *a, const char *b) {
  for (; *a && *b; a++, b++)
    if (toupper((unsigned char)*a) != toupper((unsigned char)*b)) return false;
  return *a == *b;
}

/* An integer option value (a literal or a negated literal). */
static bool opt_int(const sql_expr *v, int64_t *out) {
  bool neg = false;
  if (v->kind == SQL_E_UNARY && (v->op == SQL_OP_NEG || v->op == SQL_OP_POS) && v->left) {
    neg = v->op == SQL_OP_NEG;
    v = v->left;
  }
  if (v->kind != SQL_E_LITERAL || v->lit != SQL_LIT_INTEGER || !v->text) return false;
  char *end;
  errno = 0;
  long long x = strtoll(v->text, &end, 10);
  if (*end || errno) return false;
  *out = neg ? -x : x;
  return true;
}

/* A word option value: a string literal or a bare name. */
static const char *opt_word(const sql_expr *v) {
  if (v->kind == SQL_E_LITERAL && v->lit == SQL_LIT_STRING) return v->text;
  if (v->kind == SQL_E_COLUMN && v->nname == 1) return v->name[0];
  return NULL;
}

/* A boolean option value: TRUE/FALSE, 'true'/'false', 1/0. */
static bool opt_bool(const sql_expr *v, bool *out) {
  int64_t i;
  const char *w;
  if (v->kind == SQL_E_LITERAL && (v->lit == SQL_LIT_TRUE || v->lit == SQL_LIT_FALSE)) {
    *out = v->lit == SQL_LIT_TRUE;
    return true;
  }
  if (opt_int(v, &i) && (i == 0 || i == 1)) {
    *out = i == 1;
    return true;
  }
  if ((w = opt_word(v)) && (name_is(w, "TRUE") || name_is(w, "FALSE"))) {
    *out = name_is(w, "TRUE");
    return true;
  }
  return false;
}

/* The entry of family name in o (added if absent; o->fams has room for every name). */
fam_opts *exec_ddl_fam_of(table_opts *o, const char *name) {
  for (int i = 0; i < o->n_fams; i++)
    if (strcmp(o->fams[i].name, name) == 0) return &o->fams[i];
  fam_opts *f = &o->fams[o->n_fams++];
  f->name = name;
  f->versions = 0;
  f->compression = -1;
  f->block = -1;
  return f;
}

/* Parse every option of list into o. seen[] (2 * n slots) detects duplicates. */
int exec_ddl_parse_options(const sql_option_list *list, table_opts *o, exec_error *err) {
  if (!list) return EXEC_OK;
  for (int i = 0; i < list->n; i++) {
    const sql_option *op = &list->a[i];
    const char *fam = op->family;
    char full[600];
    snprintf(full, sizeof full, "%s%s%s", fam ? fam : "", fam ? "." : "", op->name);
    for (int j = 0; j < i; j++) {
      const sql_option *pj = &list->a[j];
      bool same_fam = (!fam && !pj->family) || (fam && pj->family && !strcmp(fam, pj->family));
      if (same_fam && name_is(pj->name, op->name))
        return exec_ddl_fail(err, EXEC_ERROR, op->off, "option %s given twice", full);
    }
    if (fam && fam[0] == '_')
      return exec_ddl_fail(err, EXEC_ERROR, op->off,
                           "option %s: family name '%s' is reserved (names starting with '_')", full, fam);
    fam_opts *fo = fam ? exec_ddl_fam_of(o, fam) : NULL;
    int64_t n;
    const char *w;
    if (name_is(op->name, "VERSIONS")) {
      if (!opt_int(op->value, &n) || n < 1 || n > INT_MAX)
        return exec_ddl_fail(err, EXEC_ERROR, op->off, "option %s must be an integer >= 1", full);
      if (fo) fo->versions = (int)n;
      else o->versions = (int)n;
    } else if (name_is(op->name, "TTL")) {
      if (fo)
        return exec_ddl_fail(err, EXEC_ERROR, op->off,
                             "option %s: TTL is a table option (it applies to every family and the "
                             "row marker)", full);
      if ((w = opt_word(op->value)) && name_is(w, "FOREVER")) n = 0;
      else if (!opt_int(op->value, &n) || n < 0)
        return exec_ddl_fail(err, EXEC_ERROR, op->off,
                             "option %s must be a number of seconds >= 0 or FOREVER", full);
      o->ttl = n;
    } else if (name_is(op->name, "COMPRESSION")) {
      w = opt_word(op->value);
      int c = !w ? -1 : name_is(w, "LZ4") ? KV_COMPRESSION_LZ4
                      : name_is(w, "NONE") ? KV_COMPRESSION_NONE : -1;
      if (c < 0)
        return exec_ddl_fail(err, EXEC_ERROR, op->off, "option %s must be 'LZ4' or 'NONE'", full);
      if (fo) fo->compression = c;
      else o->compression = c;
    } else if (name_is(op->name, "BLOCKSIZE")) {
      if (!opt_int(op->value, &n) || n < 1 || n > (int64_t)MAX_BLOCKSIZE)
        return exec_ddl_fail(err, EXEC_ERROR, op->off, "option %s must be a byte count in 1..%u", full,
                             MAX_BLOCKSIZE);
      if (fo) fo->block = n;
      else o->block = n;
    } else if (name_is(op->name, "IMMUTABLE_ROWS")) {
      bool b;
      if (fo)
        return exec_ddl_fail(err, EXEC_ERROR, op->off, "option %s: IMMUTABLE_ROWS is a table option",
                             full);
      if (!opt_bool(op->value, &b))
        return exec_ddl_fail(err, EXEC_ERROR, op->off, "option %s must be TRUE or FALSE", full);
      o->immutable = b;
      o->immutable_given = true;
    } else if (name_is(op->name, "SALT_BUCKETS")) {
      if (fo)
        return exec_ddl_fail(err, EXEC_ERROR, op->off, "option %s: SALT_BUCKETS is a table option",
                             full);
      if (!opt_int(op->value, &n) || n < 1 || n > CAT_SALT_MAX)
        return exec_ddl_fail(err, EXEC_ERROR, op->off,
                             "option %s must be an integer in 1..%d (the number of salt buckets)",
                             full, CAT_SALT_MAX);
      o->salt_buckets = (int)n;
      o->salt_off = op->off;
    } else {
      return exec_ddl_fail(err, EXEC_ERROR, op->off,
                           "unknown table option %s (known: VERSIONS, TTL, COMPRESSION, BLOCKSIZE, "
                           "IMMUTABLE_ROWS, SALT_BUCKETS)", full);
    }
  }
  return EXEC_OK;
}

/* ---- CREATE TABLE ---------------------------------------------------------------------- */
static int create_table(cat_catalog *cat, const sql_create_table *ct, exec_error *err) {
  if (cat_find_table(cat, ct->name)) {
    if (ct->if_not_exists) return EXEC_OK;
    return exec_ddl_fail(err, EXEC_ERROR, ct->name_off, "table %s already exists", ct->name);
  }
  /* a table of that name that Apache Phoenix created on the same HBase does not stop it:
     Rowan's tables live in its own namespace (docs/HBASE.md "A table Phoenix created") */
  int n = ct->ncol;
  if (n < 1) return exec_ddl_fail(err, EXEC_ERROR, ct->name_off, "table %s has no columns", ct->name);
  if (n > CAT_MAX_COLUMNS)
    return exec_ddl_fail(err, EXEC_ERROR, ct->name_off, "table %s: %d columns (at most %d)", ct->name,
                         n, CAT_MAX_COLUMNS);
  int n_opts = ct->opts ? ct->opts->n : 0;
  cat_column_def *cols = calloc((size_t)n, sizeof *cols);
  const char **pk = calloc((size_t)n, sizeof *pk);
  bool *pk_desc = calloc((size_t)n, sizeof *pk_desc);
  table_opts o = {0, 0, -1, -1, false, false, NULL, 0, 0, -1};
  exec_ddl_splits splits = {0};
  o.fams = calloc((size_t)(n + n_opts + 1), sizeof *o.fams);
  cat_family_def *fdefs = calloc((size_t)(n + n_opts + 1), sizeof *fdefs);
  int rc = EXEC_OK, n_pk = 0;
  if (!cols || !pk || !pk_desc || !o.fams || !fdefs) {
    rc = exec_ddl_fail(err, EXEC_NOMEM, -1, "out of memory creating table %s", ct->name);
    goto done;
  }
  /* Columns: names unique, types resolved, families checked, inline PRIMARY KEY. */
  int inline_pk = -1;
  for (int i = 0; i < n; i++) {
    const sql_coldef *cd = &ct->cols[i];
    for (int j = 0; j < i; j++)
      if (strcmp(ct->cols[j].name, cd->name) == 0) {
        rc = exec_ddl_fail(err, EXEC_ERROR, cd->off, "table %s: duplicate column %s", ct->name,
                           cd->name);
        goto done;
      }
    if (cd->family && cd->family[0] == '_') {
      rc = exec_ddl_fail(err, EXEC_ERROR, cd->off,
                         "column %s.%s: family name '%s' is reserved (names starting with '_')",
                         cd->family, cd->name, cd->family);
      goto done;
    }
    rc = exec_ddl_resolve_type(cd->type, cd->name, &cols[i].type, err);
    if (rc != EXEC_OK) goto done;
    cols[i].name = cd->name;
    cols[i].family = cd->family;
    cols[i].null_mode = cd->nullability;
    if (cd->pk) {
      if (inline_pk >= 0) {
        rc = exec_ddl_fail(err, EXEC_ERROR, cd->off,
                           "table %s: columns %s and %s are both declared PRIMARY KEY (use CONSTRAINT "
                           "name PRIMARY KEY (a, b) for a composite key)", ct->name,
                           ct->cols[inline_pk].name, cd->name);
        goto done;
      }
      inline_pk = i;
    }
  }
  /* Primary key. */
  if (inline_pk >= 0 && ct->pk) {
    rc = exec_ddl_fail(err, EXEC_ERROR, ct->cols[inline_pk].off,
                       "table %s: PRIMARY KEY given both on column %s and as a constraint", ct->name,
                       ct->cols[inline_pk].name);
    goto done;
  }
  if (inline_pk >= 0) {
    pk[0] = ct->cols[inline_pk].name;
    pk_desc[0] = ct->cols[inline_pk].pk_desc;
    n_pk = 1;
  } else if (ct->pk && ct->pk->n > 0) {
    for (int k = 0; k < ct->pk->n; k++) {
      const sql_colname *cn = &ct->pk->a[k];
      if (cn->family) {
        rc = exec_ddl_fail(err, EXEC_ERROR, cn->off,
                           "table %s: PRIMARY KEY column %s cannot name a family (%s)", ct->name,
                           cn->name, cn->family);
        goto done;
      }
      int found = -1;
      for (int i = 0; i < n && found < 0; i++)
        if (strcmp(ct->cols[i].name, cn->name) == 0) found = i;
      if (found < 0) {
        rc = exec_ddl_fail(err, EXEC_ERROR, cn->off, "table %s: PRIMARY KEY names unknown column %s",
                           ct->name, cn->name);
        goto done;
      }
      for (int j = 0; j < k; j++)
        if (strcmp(pk[j], cn->name) == 0) {
          rc = exec_ddl_fail(err, EXEC_ERROR, cn->off, "table %s: column %s twice in the PRIMARY KEY",
                             ct->name, cn->name);
          goto done;
        }
      pk[k] = cn->name;
      pk_desc[k] = cn->desc;
    }
    n_pk = ct->pk->n;
  } else {
    rc = exec_ddl_fail(err, EXEC_ERROR, ct->name_off, "table %s has no PRIMARY KEY", ct->name);
    goto done;
  }
  for (int k = 0; k < n_pk; k++)
    for (int i = 0; i < n; i++)
      if (strcmp(ct->cols[i].name, pk[k]) == 0 && ct->cols[i].family) {
        rc = exec_ddl_fail(err, EXEC_ERROR, ct->cols[i].off,
                           "table %s: PRIMARY KEY column %s cannot be in a family (%s)", ct->name,
                           pk[k], ct->cols[i].family);
        goto done;
      } else if (strcmp(ct->cols[i].name, pk[k]) == 0 && cols[i].type.id == CAT_T_ARRAY) {
        /* A design choice (docs/TYPES.md): the array encoding is not order-preserving, so an
           array cannot be a row-key column (Phoenix allows one as the last key column). */
        rc = exec_ddl_fail(err, EXEC_ERROR, ct->cols[i].type->off,
                           "table %s: PRIMARY KEY column %s cannot be an ARRAY", ct->name, pk[k]);
        goto done;
      }
  /* Families of the non-key columns, then the options. */
  for (int i = 0; i < n; i++) {
    bool is_pk = false;
    for (int k = 0; k < n_pk && !is_pk; k++) is_pk = strcmp(pk[k], cols[i].name) == 0;
    if (!is_pk) exec_ddl_fam_of(&o, cols[i].family ? cols[i].family : CAT_DEFAULT_FAMILY);
  }
  rc = exec_ddl_parse_options(ct->opts, &o, err);
  const char *row_ts = NULL;
  if (rc == EXEC_OK) rc = exec_ddl_row_ts(ct, cols, pk, n_pk, &row_ts, err);
  if (rc == EXEC_OK && ct->split && o.salt_buckets)
    rc = exec_ddl_fail(err, EXEC_ERROR, ct->split->off,
                       "table %s: SPLIT ON cannot be used with SALT_BUCKETS (a salted table is "
                       "split at its salt buckets)", ct->name);
  if (rc == EXEC_OK) rc = exec_ddl_split_points(ct, cols, pk, pk_desc, n_pk, &splits, err);
  if (rc != EXEC_OK) goto done;
  for (int f = 0; f < o.n_fams; f++) {
    fdefs[f].name = o.fams[f].name;
    fdefs[f].max_versions = o.fams[f].versions;
    int c = o.fams[f].compression >= 0 ? o.fams[f].compression : o.compression;
    fdefs[f].compression = c >= 0 ? c : KV_COMPRESSION_LZ4;
    int64_t b = o.fams[f].block >= 0 ? o.fams[f].block : o.block;
    fdefs[f].block_size = b > 0 ? (uint32_t)b : 0;
  }
  cat_table_def def = {0};
  def.name = ct->name;
  def.columns = cols;
  def.n_columns = n;
  def.pk = pk;
  def.pk_desc = pk_desc;
  def.n_pk = n_pk;
  def.families = fdefs;
  def.n_families = o.n_fams;
  def.ttl_sec = o.ttl;
  def.default_versions = o.versions;
  def.immutable_rows = o.immutable;
  def.row_timestamp = row_ts;
  def.salt_buckets = o.salt_buckets;
  def.split_keys = (const uint8_t *const *)splits.keys;
  def.split_lens = splits.lens;
  def.n_splits = splits.n;
  cat_error ce = {0};
  if (cat_create_table(cat, &def, NULL, &ce) != CAT_OK) {
    if (ce.code == CAT_ERR_EXISTS && ct->if_not_exists && cat_find_table(cat, ct->name))
      rc = EXEC_OK;
    else
      rc = exec_ddl_cat_fail(err, &ce, ct->name_off);
  }
done:
  exec_ddl_split_free(&splits);
  free(cols);
  free(pk);
  free(pk_desc);
  free(o.fams);
  free(fdefs);
  return rc;
}

/* ---- DROP TABLE, CREATE INDEX, DROP INDEX ----------------------------------------------- */
static int drop_table(cat_catalog *cat, const sql_drop *d, uint32_t off, exec_error *err) {
  int vrc = exec_ddl_view_before_drop_table(cat, d, off, err); /* exec/ddl_view.c */
  if (vrc) return vrc;
  if (!cat_find_table(cat, d->name)) {
    if (d->if_exists) return EXEC_OK;
    return exec_ddl_fail(err, EXEC_ERROR, off, "table %s does not exist", d->name);
  }
  cat_error ce = {0};
  if (cat_drop_table(cat, d->name, &ce) != CAT_OK) return exec_ddl_cat_fail(err, &ce, off);
  return EXEC_OK;
}

/* Find column `name` (in family `family` when not NULL) of t; -1 if absent. */
static int find_col(const cat_table *t, const char *family, const char *name) {
  int c = cat_find_column(t, name);
  if (c < 0 || !family) return c;
  const cat_column *col = &t->columns[c];
  if (col->pk_pos >= 0 || strcmp(t->families[col->family].name, family) != 0) return -1;
  return c;
}

static int create_index(cat_catalog *cat, const sql_create_index *ci, uint32_t off,
                        exec_progress_fn progress, void *arg, exec_error *err) {
  const cat_table *t = cat_find_table(cat, ci->table);
  if (!t && cat_find_view(cat, ci->table))
    return exec_ddl_fail(err, EXEC_ERROR, off, "CREATE INDEX on view %s is not supported: index "
                         "the table it reads (a view's own columns cannot be indexed)", ci->table);
  if (!t) return exec_ddl_fail(err, EXEC_ERROR, off, "table %s does not exist", ci->table);
  if (cat_find_index(t, ci->name)) {
    if (ci->if_not_exists) return EXEC_OK;
    return exec_ddl_fail(err, EXEC_ERROR, off, "index %s already exists on table %s", ci->name,
                         t->name);
  }
  int salt = 0; /* SALT_BUCKETS, the one index option (Phoenix's) */
  for (int i = 0; ci->opts && i < ci->opts->n; i++) {
    const sql_option *op = &ci->opts->a[i];
    int64_t n;
    if (op->family || !name_is(op->name, "SALT_BUCKETS"))
      return exec_ddl_fail(err, EXEC_ERROR, op->off, "unknown index option %s%s%s (known: "
                           "SALT_BUCKETS)", op->family ? op->family : "", op->family ? "." : "",
                           op->name);
    if (salt)
      return exec_ddl_fail(err, EXEC_ERROR, op->off, "option SALT_BUCKETS given twice");
    if (!opt_int(op->value, &n) || n < 1 || n > CAT_SALT_MAX)
      return exec_ddl_fail(err, EXEC_ERROR, op->off,
                           "option SALT_BUCKETS must be an integer in 1..%d (the number of salt "
                           "buckets)", CAT_SALT_MAX);
    salt = (int)n;
  }
  int nk = ci->keys ? ci->keys->n : 0, ni = ci->include ? ci->include->n : 0;
  if (nk < 1) return exec_ddl_fail(err, EXEC_ERROR, off, "index %s has no keys", ci->name);
  const char **keys = calloc((size_t)nk, sizeof *keys);
  char **owned = calloc((size_t)nk, sizeof *owned);
  bool *desc = calloc((size_t)nk, sizeof *desc);
  const char **inc = calloc((size_t)(ni ? ni : 1), sizeof *inc);
  int rc = EXEC_OK;
  if (!keys || !owned || !desc || !inc) {
    rc = exec_ddl_fail(err, EXEC_NOMEM, -1, "out of memory creating index %s", ci->name);
    goto done;
  }
  for (int k = 0; k < nk; k++) {
    const sql_expr *e = ci->keys->a[k].expr;
    desc[k] = ci->keys->a[k].desc;
    if (e->kind == SQL_E_COLUMN && e->nname <= 2) {
      const char *fam = e->nname == 2 ? e->name[0] : NULL;
      const char *nm = e->name[e->nname - 1];
      if (find_col(t, fam, nm) < 0) {
        rc = exec_ddl_fail(err, EXEC_ERROR, e->off, "index %s: table %s has no column %s%s%s (an "
                           "index is on declared columns, never on a dynamic column: ALTER "
                           "TABLE ... ADD it first)", ci->name, t->name, fam ? fam : "",
                           fam ? "." : "", nm);
        goto done;
      }
      keys[k] = nm;
    } else {
      owned[k] = sql_print_expr(e, 0);
      if (!owned[k]) {
        rc = exec_ddl_fail(err, EXEC_NOMEM, -1, "out of memory creating index %s", ci->name);
        goto done;
      }
      keys[k] = owned[k];
    }
  }
  for (int i = 0; i < ni; i++) {
    const sql_colname *cn = &ci->include->a[i];
    int c = find_col(t, cn->family, cn->name);
    if (c < 0) {
      rc = exec_ddl_fail(err, EXEC_ERROR, cn->off, "index %s: INCLUDE names unknown column %s%s%s "
                         "(an index holds declared columns, never a dynamic column)", ci->name,
                         cn->family ? cn->family : "", cn->family ? "." : "", cn->name);
      goto done;
    }
    inc[i] = cn->name;
  }
  cat_index_def def = {ci->name, keys, desc, nk, inc, ni, salt};
  cat_error ce = {0};
  if (cat_create_index(cat, t->name, &def, &ce) != CAT_OK) {
    rc = exec_ddl_cat_fail(err, &ce, off);
    goto done;
  }
  {
    const char *tname = ci->table; /* t may be re-made by the catalog change */
    rc = exec_index_backfill(cat, cat_backend(cat), tname, ci->name, progress, arg, err);
    if (rc != EXEC_OK) { /* no half-built index is left behind */
      cat_error ce2 = {0};
      cat_drop_index(cat, tname, ci->name, &ce2);
    }
  }
done:
  if (owned)
    for (int k = 0; k < nk; k++) free(owned[k]);
  free(owned);
  free(keys);
  free(desc);
  free(inc);
  return rc;
}

static int drop_index(cat_catalog *cat, const sql_drop *d, uint32_t off, exec_error *err) {
  const cat_table *t = d->table ? cat_find_table(cat, d->table) : NULL;
  if (!t) {
    if (d->if_exists) return EXEC_OK;
    return exec_ddl_fail(err, EXEC_ERROR, off, "table %s does not exist", d->table ? d->table : "?");
  }
  if (!cat_find_index(t, d->name)) {
    if (d->if_exists) return EXEC_OK;
    return exec_ddl_fail(err, EXEC_ERROR, off, "index %s does not exist on table %s", d->name, t->name);
  }
  cat_error ce = {0};
  if (cat_drop_index(cat, t->name, d->name, &ce) != CAT_OK) return exec_ddl_cat_fail(err, &ce, off);
  return EXEC_OK;
}

int exec_ddl_run(cat_catalog *cat, kv_db *db, const sql_stmt *stmt, const char *sql,
                 exec_error *err) {
  return exec_ddl_run_progress(cat, db, stmt, sql, NULL, NULL, err);
}

int exec_ddl_run_progress(cat_catalog *cat, kv_db *db, const sql_stmt *stmt, const char *sql,
                          exec_progress_fn progress, void *arg, exec_error *err) {
  if (err) {
    err->code = EXEC_OK;
    err->offset = -1;
    err->msg[0] = 0;
  }
  if (!cat || !db || !stmt) return exec_ddl_fail(err, EXEC_MISUSE, -1, "exec_ddl_run: NULL argument");
  switch (stmt->kind) {
    case SQL_STMT_CREATE_TABLE: return create_table(cat, stmt->u.create_table, err);
    case SQL_STMT_DROP_TABLE: return drop_table(cat, stmt->u.drop, stmt->off, err);
    case SQL_STMT_CREATE_INDEX: return create_index(cat, stmt->u.create_index, stmt->off,
                                                      progress, arg, err);
    case SQL_STMT_DROP_INDEX: return drop_index(cat, stmt->u.drop, stmt->off, err);
    case SQL_STMT_ALTER_TABLE: return exec_ddl_alter(cat, stmt->u.alter, err);
    case SQL_STMT_CREATE_SEQUENCE:
    case SQL_STMT_DROP_SEQUENCE: return exec_ddl_sequence(cat, stmt, err);
    case SQL_STMT_CREATE_VIEW:
    case SQL_STMT_DROP_VIEW: return exec_ddl_view(cat, stmt, sql, err);
    default: return exec_ddl_fail(err, EXEC_MISUSE, stmt->off, "not a DDL statement");
  }
}
