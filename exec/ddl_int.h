/*
** exec/ddl_int.h: what exec/ddl.c (CREATE TABLE, DROP TABLE, CREATE and DROP INDEX) shares
** with exec/ddl_alter.c (ALTER TABLE): errors with offsets, the resolution of a written
** type and the parsing of table and family options. Internal to exec/.
*/
#ifndef ROWAN_EXEC_DDL_INT_H
#define ROWAN_EXEC_DDL_INT_H

#include "exec/ddl.h"

/* Fill err with code, offset off (-1 = none) and a printf-style message; returns code. */
int exec_ddl_fail(exec_error *err, int code, int64_t off, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Map a catalog error onto an exec status, keeping its message (offset off for EXEC_ERROR). */
int exec_ddl_cat_fail(exec_error *err, const cat_error *ce, int64_t off);
/* Resolve a written type of column col into *out (errors name the column and the type). */
int exec_ddl_resolve_type(const sql_type *st, const char *col, cat_type *out, exec_error *err);

/* Per-family settings gathered from the options (-1 / unset = inherit). */
typedef struct fam_opts {
  const char *name;  /* family name (borrowed from the tree) */
  int versions;      /* VERSIONS, 0 = table default */
  int compression;   /* enum kv_compression, -1 = table default */
  int64_t block;     /* BLOCKSIZE, -1 = table default */
} fam_opts;

typedef struct table_opts {
  int versions;        /* table-wide VERSIONS, 0 = 1 */
  int64_t ttl;         /* TTL seconds */
  int compression;     /* table-wide, -1 = kv default (LZ4) */
  int64_t block;       /* table-wide BLOCKSIZE, -1 = kv default */
  bool immutable;      /* IMMUTABLE_ROWS */
  bool immutable_given;/* IMMUTABLE_ROWS was given */
  fam_opts *fams;      /* families named by columns or options */
  int n_fams;          /* count */
  int salt_buckets;    /* SALT_BUCKETS 1..256 (catalog/salt.h), 0 = not given */
  int64_t salt_off;    /* byte offset of the SALT_BUCKETS option */
} table_opts;

/* The entry of family name in o (added if absent; o->fams has room for every name). */
fam_opts *exec_ddl_fam_of(table_opts *o, const char *name);
/* Parse every option of list into o (VERSIONS, TTL, COMPRESSION, BLOCKSIZE, IMMUTABLE_ROWS;
** errors name the option and give its offset: unknown, given twice, bad value). */
int exec_ddl_parse_options(const sql_option_list *list, table_opts *o, exec_error *err);

/* The ROW_TIMESTAMP column of CREATE TABLE ct (exec/ddl_row_ts.c): *out gets its name, or
** NULL when none is marked; EXEC_ERROR (with the column's offset) when the mark breaks a
** rule. cols: the resolved columns of ct; pk: the n_pk PRIMARY KEY names. */
int exec_ddl_row_ts(const sql_create_table *ct, const cat_column_def *cols, const char *const *pk,
                    int n_pk, const char **out, exec_error *err);

/* SPLIT ON of CREATE TABLE (exec/ddl_split.c): the split points as encoded key prefixes of
** the leading PRIMARY KEY columns, strictly increasing. */
typedef struct exec_ddl_splits {
  uint8_t **keys;  /* each malloc'ed */
  uint32_t *lens;  /* their lengths */
  uint32_t n;      /* count */
} exec_ddl_splits;
/* Type and encode ct->split (none: *out empty) against the PRIMARY KEY pk[0..n_pk) (with
** pk_desc) of the resolved columns cols. EXEC_ERROR at the offending value: an empty list,
** NULL, a value that is not a literal or not of the column's kind, one out of the column's
** range, a row of more values than key columns, a point equal to or below the one before it
** in key order. Free *out with exec_ddl_split_free (on error it is empty). */
int exec_ddl_split_points(const sql_create_table *ct, const cat_column_def *cols,
                          const char *const *pk, const bool *pk_desc, int n_pk,
                          exec_ddl_splits *out, exec_error *err);
void exec_ddl_split_free(exec_ddl_splits *s);

/* ALTER TABLE (exec/ddl_alter.c; rules in exec/ddl.h). */
int exec_ddl_alter(cat_catalog *cat, const sql_alter_table *a, exec_error *err);

/* CREATE SEQUENCE / DROP SEQUENCE (exec/ddl_sequence.c; rules in exec/ddl.h). */
int exec_ddl_sequence(cat_catalog *cat, const sql_stmt *stmt, exec_error *err);
/* Views (exec/ddl_view.c; rules in its header): CREATE VIEW and DROP VIEW (stmt of those
** kinds; sql the statement's text, whose bytes from stmt->off the catalog keeps), and the
** check DROP TABLE d makes first (a view named, views reading the table: refused, or
** dropped with CASCADE). */
int exec_ddl_view(cat_catalog *cat, const sql_stmt *stmt, const char *sql, exec_error *err);
int exec_ddl_view_before_drop_table(cat_catalog *cat, const sql_drop *d, uint32_t off,
                                    exec_error *err);
/* ALTER TABLE t / ALTER VIEW t DROP COLUMN column (name: t's): EXEC_OK, or EXEC_ERROR at off
** naming the first view over t (directly or through views) whose query names the column. */
int exec_ddl_view_check_drop_column(const cat_catalog *cat, const char *name,
                                    const char *column, uint32_t off, exec_error *err);
/* Columns of a view's own (exec/ddl_view_cols.c; rules in its header): CREATE VIEW v (cols)
** AS ... once its query bound (text: the statement as written; deps: the names it reads),
** and ALTER VIEW v ADD / DROP COLUMN (a->view set). */
int exec_ddl_view_create_columns(cat_catalog *cat, const sql_create_view *v, const char *text,
                                 const char *const *deps, int n_deps, exec_error *err);
int exec_ddl_alter_view(cat_catalog *cat, const sql_alter_table *a, exec_error *err);

#endif /* ROWAN_EXEC_DDL_INT_H */
