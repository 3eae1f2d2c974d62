/*
** catalog/catalog.h: the persistent schema: tables, columns, column families, indexes,
** sequences.
**
** The catalog lives in the store itself, in the kv table SYSTEM.CATALOG (family "0"): one
** row per table, one per index and one per sequence, each DDL written in one atomic kv batch
** (docs/FORMAT_SQL.md (Part 3) "SYSTEM.CATALOG"). The catalog row is the source of truth:
** CREATE makes the kv table first (under an internal name "$t<gen>.<name>" or
** "$i<gen>.<table>.<index>") and then commits the catalog batch; DROP commits the catalog
** deletion first and then drops the kv table; ALTER changes the kv families first
** (kv_alter_table) and then commits the table's row again; cat_open drops every kv table
** with an internal name that no catalog row names (the orphan of a crash between the two
** steps) and gives the kv families the catalog's options where they differ.
** kv tables whose names do not start with '$' are never touched. Everything is loaded at
** open and kept in memory; lookups do not read the store.
**
** Every table has the hidden key family "_k" (CAT_KEY_FAMILY) holding one empty marker cell
** (qualifier 0x00) per row, so a row whose non-key columns are all NULL still exists. User
** family names may not start with '_'. Unqualified non-key columns go to family "0". Each
** non-key column has a short id (1..32767, never reused within a table) that is its cell
** qualifier (cat_column_qualifier). PK columns are NOT NULL unless declared NULL.
**
** Names arrive already case-folded by the parser and are compared exactly. Not here: SQL
** text, planning, index maintenance (exec/). Not thread-safe: the caller serializes DDL.
*/
#ifndef ROWAN_CAT_CATALOG_H
#define ROWAN_CAT_CATALOG_H

#include "catalog/keycodec.h"
#include "catalog/types.h"
#include "kv/backend.h"
#include "kv/kv.h"

#define CAT_SYSTEM_TABLE "SYSTEM.CATALOG"
#define CAT_KEY_FAMILY "_k"
#define CAT_DEFAULT_FAMILY "0"
#define CAT_MARKER_QUALIFIER "\x00" /* one byte: the key family's marker cell */
#define CAT_MAX_COLUMNS 1024
#define CAT_MAX_COLUMN_ID 32768 /* column ids are 1..32767 (one- or two-byte qualifiers) */
#define CAT_DYN_QUAL_ESCAPE 0x00 /* first byte of a dynamic column's qualifier */
#define CAT_DYN_NAME_MAX 255     /* bytes of a dynamic column's name */
#define CAT_DYN_QUAL_MAX (1 + CAT_DYN_NAME_MAX)
#define CAT_SALT_MAX 256        /* SALT_BUCKETS is 1..256, Phoenix's limit */
#define CAT_SPLIT_MAX 1024      /* split points of one table (SPLIT ON) */

/* Index states. ORDER CAT_INDEX_STATE: stored in SYSTEM.CATALOG, never renumber. */
enum cat_index_state { CAT_INDEX_BUILDING = 0, CAT_INDEX_ACTIVE = 1, CAT_INDEX_DISABLED = 2 };

typedef struct cat_family {
  char *name;          /* "_k" (always families[0]), "0" or a user name */
  int max_versions;    /* VERSIONS (>= 1) */
  int64_t ttl_sec;     /* TTL in seconds, 0 = forever (the table's TTL) */
  int compression;     /* enum kv_compression */
  uint32_t block_size; /* BLOCKSIZE in bytes, 0 = kv's default */
  uint32_t kv_id;      /* the kv family id (valid while the catalog is open) */
} cat_family;

typedef struct cat_column {
  char *name;        /* column name */
  cat_type type;     /* type with length/precision/scale */
  bool nullable;     /* NULL allowed */
  bool desc;         /* PK columns: DESC sort order */
  int pk_pos;        /* position in the PK (0-based), -1 for non-key columns */
  int family;        /* index into cat_table.families; 0 (the key family) for PK columns */
  uint16_t id;       /* non-key columns: the cell qualifier id (1..32767); 0 for PK columns */
  bool row_timestamp;/* PK column declared ROW_TIMESTAMP: its value is every cell's timestamp */
  const uint8_t *dyn_qual; /* a dynamic column (cat_table.n_dynamic): its qualifier
                              (cat_dynamic_qualifier), else NULL */
  uint32_t dyn_qual_len;   /* its length (2..CAT_DYN_QUAL_MAX) */
  bool view_column;  /* a column of a view's own in a statement's copy of the table
                        (planner/bind_view.c): not one of the table's own */
} cat_column;

typedef struct cat_index {
  char *name;          /* index name, unique within the table */
  char *kv_name;       /* the hidden kv table holding the index rows */
  uint64_t generation; /* generation number in kv_name */
  int state;           /* enum cat_index_state */
  int n_keys;          /* indexed keys */
  char **keys;         /* column names or expression text, as given */
  bool *key_desc;      /* per key: DESC */
  int n_include;       /* INCLUDE columns */
  char **include;      /* their names */
  uint32_t kv_key_family, kv_data_family; /* kv ids of the index table's "_k" and "0" */
  int salt_buckets;    /* CREATE INDEX ... SALT_BUCKETS = n: every index row key starts with
                          a salt byte (catalog/salt.h), as a salted table's; 0: not salted */
} cat_index;

typedef struct cat_table {
  char *name;              /* table name (e.g. "SENSORS" or "S.SENSORS") */
  char *kv_name;           /* the kv table: "$t<gen>.<name>" */
  uint64_t generation;     /* generation number in kv_name */
  bool immutable_rows;     /* IMMUTABLE_ROWS */
  int64_t ttl_sec;         /* TTL of every family and the marker; 0 = forever */
  uint16_t next_column_id; /* next unused column id */
  int n_columns;           /* columns in declaration order */
  cat_column *columns;     /* the columns */
  int n_pk;                /* PK columns */
  int *pk;                 /* column index of each PK column, in PK order */
  cat_key_col *key_cols;   /* the row-key codec's view of the PK, in PK order */
  int n_families;          /* families, [0] = the hidden key family */
  cat_family *families;    /* the families */
  int n_indexes;           /* indexes */
  cat_index *indexes;      /* the indexes */
  int row_ts;              /* column index of the ROW_TIMESTAMP key column, or -1 */
  int n_dynamic;           /* 0 for the catalog's tables; a statement's copy with Phoenix's
                              dynamic columns (planner/bind_dyncol.c) has them as its last
                              n_dynamic columns (id 0, dyn_qual set) */
  uint64_t *row_cover;     /* bit f (f >= 1): every row of the table has a cell of one of
                              its own columns in family f (docs/FORMAT_SQL.md "Row cover"),
                              so a scan of f sees every row without the key family. Owned
                              by the catalog and shared by statements' copies of the table;
                              bits are only ever cleared (cat_row_cover_lose). NULL: none */
  int salt_buckets;        /* SALT_BUCKETS (Phoenix): 1..CAT_SALT_MAX, every row key starts
                              with a salt byte (catalog/salt.h); 0: not salted */
  uint32_t n_splits;       /* SPLIT ON: split points given at CREATE TABLE, 0 if none */
  uint8_t **split_keys;    /* each an encoded key prefix of the leading PK column(s), strictly
                              increasing; owned by the catalog (copies share them) */
  uint32_t *split_lens;    /* their lengths */
} cat_table;

/* ---- Definitions handed to DDL (strings borrowed for the call) ------------------------ */
typedef struct cat_column_def {
  const char *name;   /* column name */
  const char *family; /* family name or NULL (default "0"); must be NULL for PK columns */
  cat_type type;      /* type */
  int null_mode;      /* 0 = default (PK NOT NULL, others nullable), 1 = NULL, 2 = NOT NULL */
} cat_column_def;

typedef struct cat_family_def {
  const char *name;    /* family name (must be used by a column, or is created empty) */
  int max_versions;    /* VERSIONS, 0 = 1 */
  int compression;     /* enum kv_compression */
  uint32_t block_size; /* BLOCKSIZE, 0 = default */
} cat_family_def;

typedef struct cat_table_def {
  const char *name;                /* table name */
  const cat_column_def *columns;   /* columns in order */
  int n_columns;                   /* count */
  const char *const *pk;           /* PK column names in PK order */
  const bool *pk_desc;             /* per PK column: DESC (NULL = all ASC) */
  int n_pk;                        /* >= 1 */
  const cat_family_def *families;  /* options of named families (optional) */
  int n_families;                  /* count */
  int64_t ttl_sec;                 /* TTL, 0 = forever */
  int default_versions;            /* VERSIONS for families without their own, 0 = 1 */
  bool immutable_rows;             /* IMMUTABLE_ROWS */
  const uint16_t *column_ids;      /* per column: the id a non-key column keeps
                                      (cat_table_def_from); NULL, or 0 for a column: the
                                      next unused id */
  uint16_t next_column_id;         /* the next column id at least (0 = after the columns') */
  const char *row_timestamp;       /* the ROW_TIMESTAMP column (a PK column of type BIGINT,
                                      DATE or TIMESTAMP), or NULL */
  bool no_row_cover;               /* the table's families cover no row from the start
                                      (a recovery copies rows whatever cells they have);
                                      false: every family with a column covers every row
                                      until a write says otherwise */
  int salt_buckets;                /* SALT_BUCKETS 1..CAT_SALT_MAX, 0 = not salted */
  const uint8_t *const *split_keys;/* SPLIT ON: encoded split points (leading PK columns),
                                      strictly increasing, each >= 1 byte; not together
                                      with salt_buckets */
  const uint32_t *split_lens;      /* their lengths */
  uint32_t n_splits;               /* count (0: none) */
} cat_table_def;

typedef struct cat_index_def {
  const char *name;            /* index name */
  const char *const *keys;     /* column names or expression text */
  const bool *key_desc;        /* per key DESC (NULL = all ASC) */
  int n_keys;                  /* >= 1 */
  const char *const *include;  /* INCLUDE column names */
  int n_include;               /* count */
  int salt_buckets;            /* SALT_BUCKETS 1..CAT_SALT_MAX, 0 = not salted */
} cat_index_def;

typedef struct cat_catalog cat_catalog;

/* Open the catalog of store db: create SYSTEM.CATALOG if absent, load every table and
** index, drop orphaned internal kv tables, resolve kv family ids. db stays owned by the
** caller and must outlive the catalog. *out is the handle (free with cat_close) or NULL on
** error. Errors: CAT_ERR_KV, CAT_ERR_CORRUPT (a catalog row that does not decode),
** CAT_ERR_NOMEM. */
int cat_open(kv_db *db, cat_catalog **out, cat_error *err);
/* cat_open over any storage backend (kv/backend.h): *be is copied; what it points to (its
** ops and state) must outlive the catalog. cat_open is this over the local backend of db. */
int cat_open_backend(const kv_backend *be, cat_catalog **out, cat_error *err);
/* The backend the catalog reads and writes through (the catalog's copy; valid until
** cat_close): exec/ reaches the store through it. */
kv_backend *cat_backend(cat_catalog *cat);
/* A table the store holds under `name` that another program made and Rowan cannot read
** (kv_be_foreign_table; on HBase a table Apache Phoenix created): msg (cap bytes) says what it
** is, or is empty when there is none (also when the store cannot be asked). Asked only
** when the catalog does not know the name. Returns the kv status of the question. */
int cat_foreign_table(const cat_catalog *cat, const char *name, char *msg, size_t cap);
/* Free the in-memory catalog (does not close db). NULL is a no-op. */
void cat_close(cat_catalog *cat);

/* CREATE TABLE. Validates (CAT_ERR_INVALID: no PK, unknown or duplicate PK column, PK column
** with a family, family name starting with '_', bad type parameters, too many columns;
** CAT_ERR_EXISTS: the name is taken or a duplicate column), creates the kv table, commits
** the catalog row. On success *out (if not NULL) points at the table (owned by cat, valid
** until it is dropped or cat closed). A crash at any point leaves the table fully there or
** fully absent after the next cat_open. */
int cat_create_table(cat_catalog *cat, const cat_table_def *def, const cat_table **out,
                     cat_error *err);
/* Row cover (docs/FORMAT_SQL.md "Row cover"): a write about to commit a row that puts no cell
** of the table's own columns in the covered families `families` (bits of t's row_cover)
** calls this first. It commits table t's record with those bits cleared (one batch of its
** own, outside any transaction, in the WAL before the row; a bulk load's install syncs the
** WAL first, kv/bulk/bulk_write.c) and then clears them
** in memory, where every copy of t sees it, and moves cat_row_cover_epoch on. t may be a
** statement's copy (the table of its name is changed). CAT_OK (also when the bits are clear
** already), CAT_ERR_NOTFOUND, CAT_ERR_KV (nothing changed: the write must not go on). */
int cat_row_cover_lose(cat_catalog *cat, const cat_table *t, uint64_t families,
                       cat_error *err);
/* How many times cat_row_cover_lose has cleared bits since the open: a plan made under one
** value that read fewer families than a row cover allows no more is made again. */
uint64_t cat_row_cover_epoch(const cat_catalog *cat);
/* The covered families of t (its row_cover bits, 0 when none). */
static inline uint64_t cat_row_cover_of(const cat_table *t) {
  return t && t->row_cover ? *t->row_cover : 0;
}
/* Whether column c of a table (or of a statement's copy of it) is one of the table's own
** columns outside the key: neither a dynamic column nor a view's. Only their cells count for
** the row cover. */
static inline bool cat_column_counts_for_cover(const cat_column *c) {
  return c->pk_pos < 0 && !c->dyn_qual && !c->view_column;
}

/* DROP TABLE (and its indexes). CAT_ERR_NOTFOUND if absent. */
int cat_drop_table(cat_catalog *cat, const char *name, cat_error *err);
/* CREATE INDEX on table `table`, in state BUILDING (exec/ backfills, then sets ACTIVE). The
** index's kv table has families "_k" and "0". CAT_ERR_NOTFOUND (table), CAT_ERR_EXISTS. */
int cat_create_index(cat_catalog *cat, const char *table, const cat_index_def *def,
                     cat_error *err);
/* DROP INDEX. CAT_ERR_NOTFOUND. */
int cat_drop_index(cat_catalog *cat, const char *table, const char *index, cat_error *err);
/* Set an index's state (persisted). CAT_ERR_NOTFOUND, CAT_ERR_INVALID (bad state). */
int cat_set_index_state(cat_catalog *cat, const char *table, const char *index, int state,
                        cat_error *err);

/* ---- ALTER TABLE (catalog/cat_alter.c) ------------------------------------------------ */
typedef struct cat_family_set {
  const char *name;    /* a family of the table */
  int max_versions;    /* new VERSIONS, 0 = unchanged */
  int compression;     /* new enum kv_compression, -1 = unchanged */
  uint32_t block_size; /* new BLOCKSIZE, 0 = unchanged */
} cat_family_set;

typedef struct cat_alter_def {
  const char *const *drop;        /* columns to drop, in order */
  int n_drop;                     /* count */
  const cat_column_def *add;      /* non-key columns to add, in order (after the drops) */
  int n_add;                      /* count */
  const cat_family_set *families; /* family options to change */
  int n_families;                 /* count */
  int64_t ttl_sec;                /* new TTL (0 = forever), -1 = unchanged */
  int immutable_rows;             /* new IMMUTABLE_ROWS 0 / 1, -1 = unchanged */
} cat_alter_def;

/* ALTER TABLE `name` (Phoenix's ALTER TABLE ADD / DROP COLUMN / SET): drop columns, add
** columns, change options, all in one catalog commit (one batch with the table's row).
** Nothing is rewritten: a dropped column leaves the table's record, its id is never given
** again (so a column added later under the same name has a new qualifier and never reads
** the old cells, which stay in the store files); an added column reads NULL in every
** existing row. An added column's family is created (kv_alter_table, before the commit)
** when the table has none of that name, with VERSIONS 1, LZ4, the default BLOCKSIZE and
** the table's TTL. New options go to kv_alter_table first, then the commit; cat_open makes
** the store's family options those of the catalog again, so a crash between the two leaves
** the catalog's. The caller checks what needs the planner (indexes on a dropped column).
** Errors (nothing changed): CAT_ERR_NOTFOUND (table, dropped column, family of an option),
** CAT_ERR_EXISTS (an added column's name is taken, or added twice), CAT_ERR_INVALID (a
** key column dropped, an added column NOT NULL or without a name, a family starting with
** '_', too many columns or families, every column id used, bad type), CAT_ERR_KV,
** CAT_ERR_NOMEM. The table's cat_table pointer changes: look it up again. */
int cat_alter_table(cat_catalog *cat, const char *name, const cat_alter_def *def,
                    cat_error *err);
/* Create the families families[0..n) that table `name` does not have (as ALTER TABLE ADD
** creates an added column's family: VERSIONS 1, LZ4, the default BLOCKSIZE, the table's
** TTL), in one catalog commit; families it has are left as they are. Phoenix creates the
** family of a dynamic column an UPSERT writes this way. Errors as cat_alter_table
** (CAT_ERR_INVALID: a name starting with '_', too many families). The table's cat_table
** pointer changes. */
int cat_add_families(cat_catalog *cat, const char *name, const char *const *families, int n,
                     cat_error *err);

/* Lookups (NULL / -1 when absent). Pointers are owned by cat and stay valid until the next
** DDL on that table or cat_close. */
const cat_table *cat_find_table(const cat_catalog *cat, const char *name);
/* The table named `name` as written, else with its name upper-cased (an API caller's or a
** shell argument's unquoted name, as SQL folds it); NULL if neither exists. */
const cat_table *cat_find_table_folded(const cat_catalog *cat, const char *name);
int cat_table_count(const cat_catalog *cat);
const cat_table *cat_table_at(const cat_catalog *cat, int i); /* in creation order */
int cat_find_column(const cat_table *t, const char *name);
int cat_find_family(const cat_table *t, const char *name);
const cat_index *cat_find_index(const cat_table *t, const char *name);

/* ---- Salvage (catalog/cat_salvage.c; api/recover.c) --------------------------------------
** The catalog of a store that may have lost rows (a salvaged store, kv/salvage/salvage.h), read
** without changing anything: no SYSTEM.CATALOG is created, no orphan dropped, no kv family
** id resolved (the tables are descriptions, for creating them again elsewhere). Each row
** that decodes is kept; each that does not, and each index row whose table row is lost, is
** one problem message. */
typedef struct cat_salvage {
  bool found;          /* the store has a SYSTEM.CATALOG table */
  cat_table **tables;  /* the tables whose row decoded, in key order, each with the indexes
                          whose row decoded (kv_id fields 0) */
  int n_tables;        /* count */
  char **problems;     /* messages ("SYSTEM.CATALOG row T'X': does not decode") */
  int n_problems;      /* count */
  char **lost_indexes; /* kv names of the index records whose table row is lost */
  int n_lost_indexes;  /* count */
  struct cat_sequence **sequences; /* the sequences whose row decoded, in key order */
  int n_sequences;     /* count */
} cat_salvage;
/* Read the catalog of db into *out (zeroed first; free with cat_salvage_free, on error too).
** CAT_OK whatever rows were lost (out->found false when there is no SYSTEM.CATALOG); errors:
** CAT_ERR_KV (the scan failed: a kv error other than damage), CAT_ERR_NOMEM. */
int cat_salvage_read(kv_db *db, cat_salvage *out, cat_error *err);
void cat_salvage_free(cat_salvage *s);
/* Fill *def with the definition of table t (columns in order with their families, types and
** nullability, the PRIMARY KEY with ASC/DESC, every user family's VERSIONS, COMPRESSION and
** BLOCKSIZE, TTL, IMMUTABLE_ROWS), so cat_create_table makes the same table in another
** store (the same column ids and next column id, so copied cells keep their columns, also
** after ALTER TABLE DROP COLUMN left gaps). Strings point into t,
** which must outlive *def; the arrays are malloc'ed: free them with cat_table_def_free.
** CAT_OK or CAT_ERR_NOMEM (def zeroed). */
int cat_table_def_from(const cat_table *t, cat_table_def *def, cat_error *err);
void cat_table_def_free(cat_table_def *def);

/* ---- Sequences (catalog/cat_sequence.c; Phoenix's CREATE SEQUENCE) ---------------------
** A sequence is one 'S' row of SYSTEM.CATALOG (docs/FORMAT_SQL.md (Part 3) "SYSTEM.CATALOG")
** holding its options and its persisted state: the first value no connection has been
** given a claim on. cat_sequence_next hands values out of a block of CACHE values that it
** first claims by committing the row with the state moved past the block, so a value is
** handed out only after that commit: a crash loses the rest of the block (never handed
** out, skipped) and never repeats a value. */
typedef struct cat_sequence_def {
  const char *name;   /* sequence name */
  int64_t start;      /* START WITH */
  int64_t increment;  /* INCREMENT BY, not 0 */
  int64_t min_value;  /* MINVALUE */
  int64_t max_value;  /* MAXVALUE, >= min_value */
  bool cycle;         /* CYCLE */
  int64_t cache;      /* CACHE, >= 1 */
} cat_sequence_def;

typedef struct cat_sequence {
  cat_sequence_def def; /* its options (def.name is name) */
  char *name;           /* owned */
  int64_t next;         /* persisted: the first value not claimed (meaningless when done) */
  bool done;            /* persisted: every value of the range is claimed (no CYCLE: NEXT
                           VALUE FOR fails; CYCLE: the next block starts over) */
  int64_t block_next;   /* in memory: the next value of the claimed block */
  int64_t block_left;   /* in memory: values left in the claimed block */
  bool has_current;     /* in memory: NEXT VALUE FOR gave a value through this catalog */
  int64_t current;      /* in memory: the last value it gave (CURRENT VALUE FOR) */
} cat_sequence;

/* CREATE SEQUENCE: validate def (CAT_ERR_INVALID: INCREMENT 0, MINVALUE > MAXVALUE, START
** outside [MINVALUE, MAXVALUE], CACHE < 1, a bad name) and commit its row. CAT_ERR_EXISTS
** (the name is taken), CAT_ERR_KV, CAT_ERR_NOMEM. */
int cat_create_sequence(cat_catalog *cat, const cat_sequence_def *def, cat_error *err);
/* DROP SEQUENCE: commit the row's deletion. CAT_ERR_NOTFOUND, CAT_ERR_KV. */
int cat_drop_sequence(cat_catalog *cat, const char *name, cat_error *err);
/* The sequence named `name` (owned by cat, valid until the next sequence DDL or cat_close),
** or NULL. */
const cat_sequence *cat_find_sequence(const cat_catalog *cat, const char *name);
int cat_sequence_count(const cat_catalog *cat);
const cat_sequence *cat_sequence_at(const cat_catalog *cat, int i); /* in name order */
/* NEXT VALUE FOR `name` into *out. When the claimed block is used up, claims the next one
** (min(CACHE, values left) values) by committing the row first; with `flush` the catalog is
** then also flushed to a store file (for a store whose commits are not synced: the claim
** must be on disk before a value of it is handed out). Errors: CAT_ERR_NOTFOUND,
** CAT_ERR_RANGE (the range is used up and there is no CYCLE: "Reached MAXVALUE of sequence
** S" / MINVALUE for a descending one), CAT_ERR_KV (nothing handed out), CAT_ERR_NOMEM. */
int cat_sequence_next(cat_catalog *cat, const char *name, bool flush, int64_t *out,
                      cat_error *err);
/* CURRENT VALUE FOR `name` into *out: the last value NEXT VALUE FOR gave through this
** catalog. CAT_ERR_NOTFOUND, CAT_ERR_INVALID (no NEXT VALUE FOR yet). */
int cat_sequence_current(const cat_catalog *cat, const char *name, int64_t *out,
                         cat_error *err);
/* The value a sequence made again from its options would start with so that no value this
** store has handed out is given again (.schema's START WITH): the first unclaimed value; for
** a used-up range the value CYCLE starts over at, or the last value without CYCLE. */
int64_t cat_sequence_restart(const cat_sequence *s);

/* The cell qualifier of column id `id` into q (at least 2 bytes): 1 byte for ids < 128,
** else 2 bytes (0x80 | id >> 8, id & 0xFF). Returns its length. */
size_t cat_column_qualifier(uint16_t id, uint8_t *q);

/* The qualifier of a dynamic column (Phoenix's `UPSERT INTO t (f.c TYPE)`, `FROM t (f.c
** TYPE)`) named `name` (1..CAT_DYN_NAME_MAX bytes, folded as SQL folds it) into q (at least
** CAT_DYN_QUAL_MAX bytes): the escape byte 00 then the name's bytes (docs/FORMAT_SQL.md
** (Part 3) "Dynamic columns"). No declared column's qualifier starts with 00, so the two
** never meet. Returns its length, or 0 when the name is empty or too long. */
size_t cat_dynamic_qualifier(const char *name, uint8_t *q);

/* The qualifier of non-key column c: its dynamic qualifier (c->dyn_qual) or
** cat_column_qualifier(c->id) written into buf (2 bytes). *len gets its length; the result
** points at buf or at c's qualifier. */
const uint8_t *cat_col_qual(const cat_column *c, uint8_t *buf, size_t *len);

#endif /* ROWAN_CAT_CATALOG_H */
