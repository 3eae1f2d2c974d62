/*
** exec/rowcodec.h: one SQL row <-> its kv cells (DESIGN.md "Rows, cells and families").
**
** A row of table t is an array of cat_value slots, one per column in catalog order
** (t->columns). In the store it is:
**   - the row key: the PK columns' values encoded with catalog/keycodec.h (cat_key_encode);
**   - the marker cell in the hidden key family "_k": qualifier CAT_MARKER_QUALIFIER, empty
**     value, so a row whose non-key columns are all NULL still exists;
**   - one cell per non-NULL non-key column, in the column's family (cat_family.kv_id), with
**     qualifier cat_column_qualifier(column id) and value cat_vc_encode(value).
** A NULL non-key column has no cell: writing NULL adds a KV_DELETE_COLUMN tombstone.
**
** Writing (exec_row_put) checks every value against its column (cat_value_check, or
** cat_value_cast first when the value has another type id, so a literal 5 fits a DOUBLE
** column): a value that does not fit, NULL in a NOT NULL column, or a missing PK value is
** EXEC_CONSTRAINT with a message naming the column and the value. Reading
** (exec_row_decode) takes an assembled kv_row (any subset of the table's families, any
** versions) and fills the needed slots; it does not allocate per cell or per row.
**
** Not here: which families or qualifiers a scan should read (planner/), index rows
** (a later issue), transactions (the caller owns the kv_batch), DDL (exec/ddl.h).
** An exec_rowcodec is used by one thread at a time (it owns scratch buffers).
*/
#ifndef ROWAN_EXEC_ROWCODEC_H
#define ROWAN_EXEC_ROWCODEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "catalog/catalog.h"
#include "exec/engine.h"
#include "kv/kv.h"

struct plan_arena; /* planner/plan.h */

/* How the cell of one column id decodes (exec_rowcodec.by_id): the column, its family and
** a decode kind chosen once per table, so the per-cell work is a table lookup and, for the
** fixed-width types, a few loads (no cat_error, no generic constructor). */
typedef struct exec_rc_cell {
  int16_t col;              /* column index, -1 for an id not in use */
  uint8_t kind;             /* decode kind (RC_* in rowcodec.c) */
  uint8_t width;            /* fixed encoded width in bytes (0 for variable-length kinds) */
  uint32_t family_id;       /* kv id of the column's family */
} exec_rc_cell;

/* exec_rc_cell of a prepared need (exec_rowcodec_prepare), with the slot the value goes to. */
typedef struct exec_rc_pcell {
  int16_t col;              /* column index, -1 for an id not in use or not needed */
  int16_t slot;             /* slot of vals the column's value is written to */
  uint8_t kind;             /* decode kind (RC_* in rowcodec.c) */
  uint8_t width;            /* fixed encoded width in bytes (0 for variable-length kinds) */
  uint32_t family_id;       /* kv id of the column's family */
} exec_rc_pcell;

/* A needed key column of the fixed-width tail as a prepared decode reads it
** (exec_rowcodec_prepare): everything in one entry, so a row's key costs no chain of lookups
** through the table. */
typedef struct exec_rc_tkey {
  cat_type type;            /* the column's type */
  uint32_t off;             /* bytes from the key's end to the column's first byte */
  int16_t slot;             /* slot of vals its value goes to */
  uint8_t kind;             /* RC_INT, RC_DOUBLE or RC_FLOAT (rowcodec.c) */
  uint8_t width;            /* encoded bytes (1..8) */
  bool desc;                /* DESC: the bytes are inverted */
} exec_rc_tkey;

/* Per-table lookup tables and scratch buffers, built once per statement (or cached per
** table) with exec_rowcodec_init. Read the fields, do not change them. */
typedef struct exec_rowcodec {
  const cat_table *table;   /* the table (owned by the catalog; must outlive the codec) */
  int n_columns;            /* table->n_columns */
  uint16_t max_id;          /* largest column id in use (table->next_column_id - 1) */
  int16_t *col_of_id;       /* [0..max_id]: column index of each column id, -1 if none */
  uint32_t key_family_id;   /* kv id of the hidden key family "_k" */
  uint8_t *key;             /* the row key of the last exec_row_put / exec_row_key call
                               (CAT_KEY_MAX bytes of storage) */
  size_t key_len;           /* its length */
  uint64_t cover_miss;      /* exec_row_put: covered families the row put no cell in */
  uint64_t cover_untouched; /* those of them the row wrote nothing in, not even a NULL */
  uint8_t *scratch;         /* decode scratch for unescaped key strings (CAT_KEY_MAX) */
  cat_value *pk_vals;       /* n_pk checked key values in PK order (encode scratch) */
  uint8_t *cast_buf;        /* n_pk * 64 bytes: text produced by casts of key values */
  cat_value *fitted;        /* n_columns: exec_row_put's checked values (scratch) */
  uint8_t *fit_buf;         /* n_columns * 64 bytes: text produced by their casts */
  exec_rc_cell *by_id;      /* [0..max_id]: how the cell of each column id decodes
                                 (exec_row_decode's per-cell table) */
  cat_value *nulls;         /* n_columns: NULL typed as each column (decode's fill value) */
  exec_rc_cell *by_pk;      /* n_pk: how each key column decodes (col, kind, width; a
                               nullable or variable-length one takes cat_key_decode) */
  uint32_t *tail_off;       /* n_pk: bytes from the key's end to the start of key column j
                               when j and every column after it are NOT NULL fixed-width
                               (decoded in place), else 0 */
  int fixed_from;           /* first key column of that fixed-width tail (n_pk: none) */
  uint32_t tail_bytes;      /* tail_off[fixed_from]: the tail's length (0: no tail) */
  /* exec_rowcodec_prepare: tables for one need array, so a row decodes without per-column
     need tests (used when exec_row_decode gets exactly prep_need) */
  const bool *prep_need;    /* the need array prepared for, or NULL */
  bool *prep_copy;          /* n_columns: its contents when prepared */
  int16_t *prep_slots;      /* n_columns: slot of each column in vals (the identity, or the
                               slot map given to prepare) */
  bool prep_mapped;         /* prep_slots is not the identity */
  exec_rc_pcell *by_id_need;/* [0..max_id]: by_id with the columns not needed set to -1 */
  int16_t *fill;            /* the needed non-key columns (n_fill of them) */
  int n_fill;               /* count */
  uint64_t fill_mask;       /* their slots' bits: a row whose cells filled all of them
                               needs no NULL filled in */
  int prep_last;            /* last needed key column (-1: none) */
  int prep_walk_last;       /* last needed key column before the fixed-width tail (-1) */
  exec_rc_tkey *prep_tail_keys; /* n_pk: the needed key columns of the tail, when no
                               column before the tail is needed (read from the key's end
                               only) */
  int n_prep_tail_keys;     /* their count */
  int n_dyn;                /* the table's dynamic columns (cat_table.n_dynamic) */
  exec_rc_cell *dyn;        /* n_dyn: how each decodes (kind RC_DYN: checked against its
                               declared type); found by qualifier, not by id */
  exec_rc_pcell *dyn_need;  /* n_dyn: dyn for the prepared need (col -1: not needed) */
} exec_rowcodec;

/* Fill err (when not NULL) with code, offset -1 and the printf-style message (truncated to
** EXEC_ERRMSG_MAX); returns code. The error setter shared by the row codec, the bulk load
** (exec/bulk.c) and the index files (exec/index*.c). */
int exec_error_set(exec_error *err, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Build the codec of table t into *rc (the struct is caller-owned; its buffers are freed
** with exec_rowcodec_free). Returns EXEC_OK or EXEC_NOMEM (then *rc needs no freeing).
** t must stay valid (no DDL on it) while the codec is used. */
int exec_rowcodec_init(exec_rowcodec *rc, const cat_table *t, exec_error *err);
/* Free the codec's buffers; the struct may be re-initialized. A zeroed struct is fine. */
void exec_rowcodec_free(exec_rowcodec *rc);

/* Check and encode the PK values of vals (n_columns slots in catalog order; only the PK
** slots are read) into rc->key / rc->key_len, and also into buf[0..cap) when buf is not
** NULL (*len gets the length). Errors: EXEC_CONSTRAINT (NULL in a NOT NULL key column, a
** value that does not fit or convert: "column K: value 300 out of range for TINYINT"),
** EXEC_TOOBIG (key over CAT_KEY_MAX or cap too small). */
int exec_row_key(exec_rowcodec *rc, const cat_value *vals, uint8_t *buf, size_t cap,
                 size_t *len, exec_error *err);

/* Check the values exec_row_put would write (set NULL = every non-key column) against their
** columns, writing nothing: the same errors as exec_row_put for non-key values. A writer
** that maintains indexes calls it first, so a bad value is named by its column, not by the
** index key it is also part of. */
int exec_row_check(exec_rowcodec *rc, const cat_value *vals, const bool *set,
                   exec_error *err);

/* Add the cells of one row to batch b (UPSERT): the marker cell, then for each non-key
** column i with set[i] true (set NULL = every column): a put of its encoded value, or a
** KV_DELETE_COLUMN when vals[i] is NULL. Non-key columns not set are left as they are in
** the store. ts is the cells' timestamp (KV_TS_NOW normally). On success rc->key holds
** the row key. On error the batch may hold some of the row's cells: the caller discards
** the batch or truncates the statement's part of it. Errors: EXEC_CONSTRAINT (as
** exec_row_key, and for non-key values: NULL into NOT NULL "column V may not be NULL",
** out of range, too long), EXEC_TOOBIG (value or batch over kv's limits), EXEC_NOMEM.
** On success rc->cover_miss holds the covered families of the table (cat_row_cover_of) in
** which the row got no put of one of the table's own columns, rc->cover_untouched those of
** them it wrote nothing in: the caller must have the catalog forget them (cat_row_cover_lose)
** before the batch commits, unless the row already has a cell there that this write leaves
** alone (exec/write.c reads it for the untouched ones). */
int exec_row_put(exec_rowcodec *rc, const cat_value *vals, const bool *set, int64_t ts,
                 kv_batch *b, exec_error *err);

/* Add the deletion of the row with key key[0..key_len) to b: a KV_DELETE_FAMILY in every
** family of the table (the key family included). Errors: EXEC_TOOBIG, EXEC_NOMEM,
** EXEC_ERROR (empty key). */
int exec_row_delete(exec_rowcodec *rc, const uint8_t *key, size_t key_len, int64_t ts,
                    kv_batch *b, exec_error *err);

/* Prepare rc for decoding many rows with the same need array (a scan): exec_row_decode
** calls that pass exactly this pointer then skip the per-column need tests. need must not
** change until the next prepare (or until decoding with it stops); NULL forgets the last
** one. slots (may be NULL: the identity): for each needed column, the slot of vals its value
** is written to (distinct slots below 64), so a decode can fill a projected row directly;
** the values are the same as without it, only their places differ. Cheap when need and
** slots equal the last prepared ones. Never fails (the tables are allocated by
** exec_rowcodec_init). Tables of more than 64 columns are not prepared (the generic path
** serves them; slots must then be NULL). */
void exec_rowcodec_prepare(exec_rowcodec *rc, const bool *need, const int16_t *slots);

/* Fill vals[i] for every column i with need[i] true (need NULL = every column) from row:
** key columns from the row key, non-key columns from the newest cell of their qualifier in
** their family, NULL (typed as the column) when there is none. Slots not needed are left
** untouched. Strings and bytes point into the row's cells, or for unescaped/inverted key
** strings into rc's scratch: valid until the next kv_scan_next on the row's scan or the
** next exec_row_decode on rc, whichever comes first. If copy is not NULL every string is
** instead copied into that arena and outlives both. Cells of unknown qualifiers or other
** families are ignored. Errors: EXEC_CORRUPT (a key or cell that does not decode, naming
** the table and column), EXEC_NOMEM (copy arena). A dynamic column's cell (Phoenix; the
** table a statement's copy with cat_table.n_dynamic) is decoded as its declared type says;
** bytes that are not a value of that type (a width that does not fit, a BOOLEAN byte over
** 1, a DECIMAL that does not decode, text that is not UTF-8) are EXEC_ERROR naming the
** column, its declared type and the cell's length, never read past. */
int exec_row_decode(exec_rowcodec *rc, const kv_row *row, const bool *need, cat_value *vals,
                    struct plan_arena *copy, exec_error *err);

/* Where the values of a kv row's value vectors (kv.h kv_scan_options.value_vectors) go: the
** qualifier projection a scan gave kv, as columns. Set n_sets to 0 for none. */
typedef struct exec_vec_col {
  cat_type type;            /* the column's type */
  int16_t slot;             /* slot of vals its value goes to, -1 when not needed */
  uint8_t kind;             /* decode kind (RC_* in rowcodec.c) */
  uint8_t width;            /* fixed encoded width (0 for variable-length kinds) */
} exec_vec_col;

typedef struct exec_vec_map {
  uint32_t n_sets;                          /* families with a projection */
  uint32_t fid[KV_SCAN_MAX_FAMILIES];       /* per set: the family's kv id */
  uint8_t start[KV_SCAN_MAX_FAMILIES];      /* per set: its first entry in col */
  uint8_t n[KV_SCAN_MAX_FAMILIES];          /* per set: its entries (the projection's size) */
  int16_t col[64];                          /* per projected qualifier: its column index */
  const bool *prep;                         /* the prepared need pc is for (NULL: none) */
  exec_vec_col pc[64];                      /* per projected qualifier, for that need */
  uint64_t dense[KV_SCAN_MAX_FAMILIES];     /* per set, for that need: the bits of its
                                               columns' slots when every position is needed
                                               and has a slot of its own, else 0 */
} exec_vec_map;

/* Fill map->pc for the need rc is prepared for (exec_rowcodec_prepare), once map's sets and
** columns are set, so that decoding a vector's value takes one table entry. No-op (map->prep
** NULL) when rc is not prepared. */
void exec_vec_map_prepare(const exec_rowcodec *rc, exec_vec_map *map);

/* exec_row_decode of a row whose cells are its views plus vecs[0..n_vecs) (kv.h
** kv_scan_row_vectors): value k of a vector comes from column map->col[start + k] of the
** map's set whose fid is the vector's family (a vector of a family the map does not list,
** or a position past its projection, is EXEC_CORRUPT). The values are the same as
** exec_row_decode gives for the same cells as views. map may be NULL when n_vecs is 0. */
int exec_row_decode_vec(exec_rowcodec *rc, const kv_row *row, const kv_value_vector *vecs,
                        uint32_t n_vecs, const bool *need, cat_value *vals,
                        struct plan_arena *copy, const exec_vec_map *map, exec_error *err);

#endif /* ROWAN_EXEC_ROWCODEC_H */
