/*
** exec/index.h: global secondary indexes: the index row of a data row, its encoding and
** decoding (exec/index.c), index maintenance on writes (exec/index_maint.c), the backfill
** of CREATE INDEX and the rebuild of unfinished backfills (exec/index_build.c), and CHECK
** INDEX (exec/index_check.c). docs/INDEXES.md explains the same for users.
**
** An index ix of table t is the hidden kv table ix->kv_name with families "_k" and "0".
** One index row per data row:
**   - row key: the indexed values k1..kn, each encoded with catalog/keycodec.h as a
**     NULLABLE key column of its type (an indexed value may be NULL: NULL sorts first for
**     ASC, last for DESC, exactly as a nullable PK column), DESC when the index says so;
**     then the data row's own row key bytes, unchanged (t->key_cols), so the index key is
**     unique and its tail is the key to look the data row up with;
**   - the marker cell in "_k" (qualifier CAT_MARKER_QUALIFIER, empty value);
**   - one cell per non-NULL INCLUDE column in "0", with the SAME qualifier as the column's
**     cell in the data table (cat_column_qualifier(id)) and the same value encoding
**     (cat_vc_encode of the value checked against the column type). A NULL INCLUDE value
**     has no cell.
** A key is either a plain column of t (any column, PK columns included) or an expression
** (cat_index.keys[i] holds its SQL text); expressions are bound against t with the planner's
** binder and evaluated with exec/eval.h over the data row's slots; their result type is the
** key column's type. Expressions must be deterministic (NOW() in an index key is refused).
**
** Index states: BUILDING indexes are maintained by every write (so a backfill running
** alongside them is idempotent) but are never chosen by the planner; ACTIVE ones are used;
** DISABLED ones are neither maintained nor used.
**
** Not here: choosing an index or planning an index scan (planner/, I2), the write
** statements themselves (exec/write.c calls the maintenance functions below).
** An exec_index_codec is used by one thread at a time (it owns scratch buffers).
*/
#ifndef ROWAN_EXEC_INDEX_H
#define ROWAN_EXEC_INDEX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "catalog/catalog.h"
#include "exec/arena.h"
#include "exec/engine.h"
#include "kv/bulk/bulk.h"
#include "kv/kv.h"
#include "planner/expr.h"
#include "planner/plan.h"

/* The index row codec of one index over its table. Read the fields, do not change them. */
typedef struct exec_index_codec {
  const cat_table *table;     /* the data table (catalog-owned; no DDL on it while used) */
  const cat_index *index;     /* the index (catalog-owned) */
  int n_keys;                 /* indexed keys (index->n_keys) */
  int n_pk;                   /* the data table's PK columns (table->n_pk) */
  int n_key_cols;             /* n_keys + n_pk: columns of the index row key */
  cat_key_col *key_cols;      /* the index key schema: [0, n_keys) the indexed values
                                 (nullable, DESC per index), then table->key_cols */
  int *key_col;               /* per indexed key: table column index, -1 for an expression */
  plan_expr **key_expr;       /* per indexed key: bound expression over the table's column
                                 slots (a PX_COLUMN node for a plain column) */
  int n_include;              /* INCLUDE columns */
  int *include_col;           /* per INCLUDE column: its table column index */
  bool *need;                 /* per table column: read to build the index row (key
                                 columns, expression inputs, PK, INCLUDE) */
  bool *covered;              /* per table column: its value can be read back from an
                                 index row (PK, plain key columns, INCLUDE columns) */
  uint32_t key_family_id;     /* kv id of the index table's "_k" family */
  uint32_t data_family_id;    /* kv id of the index table's "0" family */
  uint8_t *key;               /* the last index row key built (CAT_KEY_MAX bytes) */
  size_t key_len;             /* its length */
  plan_arena arena;           /* bound expressions and their text */
  cat_value *kvals;           /* n_key_cols scratch values */
  uint8_t *scratch;           /* CAT_KEY_MAX + cast text scratch */
  exec_arena eval_arena;      /* expression results scratch (reset per row) */
} exec_index_codec;

/* Index `index` of table `table` in catalog cat: EXEC_OK with *t and *ix, or EXEC_ERROR
** "table T does not exist" / "index I does not exist on table T" (CHECK INDEX, the repair). */
int exec_index_find(const cat_catalog *cat, const char *table, const char *index,
                    const cat_table **t, const cat_index **ix, exec_error *err);

/* Build the codec of index ix of table t (both from catalog cat) into *ic (caller-owned
** struct; free with exec_index_codec_free, also after a failure). Binds the expression keys
** (cat may be NULL: expression keys are then bound against t alone, planner/index_expr.h): EXEC_ERROR when one does not bind against t (message names the index and expression) or
** is not deterministic; EXEC_NOMEM. */
int exec_index_codec_init(exec_index_codec *ic, const cat_catalog *cat, const cat_table *t,
                          const cat_index *ix, exec_error *err);
/* Free the codec's memory. A zeroed struct is fine; the struct may be re-initialized. */
void exec_index_codec_free(exec_index_codec *ic);

/* The index row key of the data row `row` (t->n_columns slots in catalog order; the slots
** with ic->need true must be filled; values may be of another type id than their column's
** as long as they convert, like exec_row_put accepts). Written to ic->key / ic->key_len.
** Errors: EXEC_CONSTRAINT (a value that does not convert to its column type; an expression
** that fails to evaluate), EXEC_TOOBIG (key over CAT_KEY_MAX), EXEC_NOMEM. */
int exec_index_row_key(exec_index_codec *ic, const cat_value *row, exec_error *err);

/* Add the index row of data row `row` to b: exec_index_row_key, then the marker put in
** "_k" and, per INCLUDE column, a put of its value in "0" or a KV_DELETE_COLUMN when it is
** NULL (so re-putting an existing index row is idempotent). Same errors, plus EXEC_TOOBIG /
** EXEC_NOMEM from the batch. On success ic->key holds the index row key. */
int exec_index_put(exec_index_codec *ic, const cat_value *row, int64_t ts, kv_batch *b,
                   exec_error *err);

/* Add the deletion of the index row with key key[0..len) to b (a KV_DELETE_FAMILY in both
** families). EXEC_TOOBIG, EXEC_NOMEM. */
int exec_index_delete_key(exec_index_codec *ic, const uint8_t *key, size_t len, int64_t ts,
                          kv_batch *b, exec_error *err);

/* Decode index row key [p, limit): kvals[0..n_key_cols) get the indexed values then the
** data row's PK values (strings point into the key or into scratch[0..cap), limit - p
** bytes suffice); *pk_off (if not NULL) gets the offset in the key where the data row key
** starts (the data row key is p + *pk_off .. limit). EXEC_CORRUPT if it does not decode
** (naming the index), EXEC_TOOBIG (scratch too small). */
int exec_index_decode_key(const exec_index_codec *ic, const uint8_t *p, const uint8_t *limit,
                          cat_value *kvals, uint8_t *scratch, size_t cap, size_t *pk_off,
                          exec_error *err);

/* Fill the data-row slots `slots` (t->n_columns, catalog order) from an index row read
** with both families: every column with ic->covered true (PK columns and plain key
** columns from the key, INCLUDE columns from their cells, NULL when absent). Other slots
** are left untouched. Strings point into the row or ic->scratch (valid until the next
** kv_scan_next or codec call), or are copied into `copy` when it is not NULL.
** EXEC_CORRUPT, EXEC_NOMEM. */
int exec_index_decode_row(exec_index_codec *ic, const kv_row *row, cat_value *slots,
                          plan_arena *copy, exec_error *err);

/* The data families an index row is built from: the table's key family first, then every
** family holding a non-PK column with need[c] true (at most cap). *n gets the count. */
void exec_index_data_families(const cat_table *t, const bool *need, uint32_t *fams, uint32_t cap,
                              uint32_t *n);

/* ---- Index row status on row-atomic backends (exec/index_phase.c, index_repair.c) ------ */
/* The value of an index row's marker cell ("_k", CAT_MARKER_QUALIFIER) says whether the row
** may be trusted (Phoenix's empty-column status, PHOENIX-5156): empty = VERIFIED (every
** index row written by the local store, the backfill and every store older than this
** status), the one byte EXEC_INDEX_UNVERIFIED = written before its data row's commit and not
** confirmed since. Any other value is read as unverified (repaired, never trusted).
** docs/FORMAT_SQL.md gives the bytes, docs/INDEXES.md the protocol. */
#define EXEC_INDEX_UNVERIFIED 0x02

/* Is index row r (read with the index's "_k" family) unverified? False when it has no
** marker cell. */
bool exec_index_row_unverified(const exec_index_codec *ic, const kv_row *r);

/* Commit batch b on a backend whose writes are atomic per row only (KV_BE_ATOMIC_ROW), in
** Phoenix's three phases: (1) every index row b puts is written with an UNVERIFIED marker
** and every index row b deletes gets an UNVERIFIED marker; (2) the data rows (every op of b
** on a family that is no index's: the commit point); (3) the rows put are written again
** with an empty marker (VERIFIED) and the rows deleted are deleted. Each index row's ops keep their order. The indexes are
** the catalog's (every index of every table of cat). A batch without index ops is written as
** it is. A failure in (1) or (2) is returned (kv status; the message in kv_errmsg()): rows
** of (1), and of (2) before the failure, stay written, their index rows unverified, which
** reads repair. A failure in (3) is not (the statement is committed; Phoenix ignores it
** too): *post_failed (when not NULL) says it happened. KV_ERR_NOMEM. */
int exec_index_commit_phased(const cat_catalog *cat, kv_backend *be, const kv_batch *b,
                             bool *post_failed);

/* Read repair of unverified index rows (Phoenix's GlobalIndexChecker, done on the client):
** the index row is derived again from its data row (read latest, through the backend); when
** the data row exists and its index key is this row's, the index row is rewritten from it,
** VERIFIED, and read back; otherwise the stale row is deleted. The write is made only while
** the marker still says UNVERIFIED (check-and-write where the backend has it); when another
** writer changed it first, the row is read back and judged again (a few times at most). */
typedef struct exec_index_repair exec_index_repair;
/* A repairer for the index of codec ic (borrowed: it must outlive the repairer) through be.
** overlay (may be NULL, borrowed): a transaction's batch, read through when the repaired row
** is read back. EXEC_NOMEM, errors of the row codec. */
int exec_index_repair_open(exec_index_codec *ic, kv_backend *be, const kv_batch *overlay,
                           exec_index_repair **out, exec_error *err);
void exec_index_repair_free(exec_index_repair *rp); /* NULL is a no-op */
/* Repair the unverified index row with key key[0..len). EXEC_ROW: it is the index row of its
** data row, now VERIFIED; *out is it as read back (valid until the next call or free).
** EXEC_DONE: it was stale and is deleted, or is gone, or stayed unverified at every attempt
** (skip it). Errors: EXEC_CORRUPT (a key or data row
** that does not decode), store errors (EXEC_READONLY on a read-only store: nothing can be
** repaired there), EXEC_NOMEM. With dry_run, nothing is written and *out is not set: the
** answer says what a repair would do. */
int exec_index_repair_row(exec_index_repair *rp, const uint8_t *key, size_t len, bool dry_run,
                          kv_row *out, exec_error *err);
/* Rows verified and stale rows deleted so far. */
void exec_index_repair_counts(const exec_index_repair *rp, uint64_t *verified,
                              uint64_t *deleted);
/* Repair every unverified row of index `index` of `table` (a full scan of the index):
** what the reads would do, at once. *verified / *deleted (may be NULL) count. Errors:
** EXEC_ERROR (unknown table or index), as exec_index_repair_row. */
int exec_index_repair_all(const cat_catalog *cat, kv_backend *be, const char *table,
                          const char *index, uint64_t *verified, uint64_t *deleted,
                          exec_error *err);

/* ---- Maintenance (exec/index_maint.c) -------------------------------------------------- */
/* The maintenance state of one write statement on table t: a codec per maintained index
** (BUILDING and ACTIVE; DISABLED ones are skipped) and the data row reader for old values. */
typedef struct exec_index_maint exec_index_maint;

/* Data row keys written into a batch that is not yet committed (a transaction's batch or a
** statement's own batch): only for those rows must the old-value read look through the
** batch (kv_get with overlay, which copies the batch), the others are read from the store.
** Hashes of keys; a false positive only costs a slower read. */
typedef struct exec_index_touched exec_index_touched;

/* Start maintenance for a write to t. *out is NULL when t has no maintained index (then
** nothing else is needed). Errors as exec_index_codec_init. Free with exec_index_maint_free. */
int exec_index_maint_open(const cat_catalog *cat, kv_backend *be, const cat_table *t,
                          exec_index_maint **out, exec_error *err);
void exec_index_maint_free(exec_index_maint *m);
/* The table m maintains (to reuse m for the next statement on the same table while the
** schema has not changed). */
const cat_table *exec_index_maint_table(const exec_index_maint *m);

/* UPSERT of one row into t, in two steps around the row's own exec_row_put, so that a row
** whose index row cannot be built leaves b unchanged:
**   prepare (before exec_row_put): reads the old row (unless t is IMMUTABLE_ROWS; through b
**   as overlay when `touched` says the key was written into b; touched NULL = never: the
**   statement's own batch, exec/write.c, uses the journal below instead), and
**   builds and checks every old and new index row key; the new row is the old values
**   overlaid with vals[i] for set[i] (set NULL = every column; for IMMUTABLE_ROWS tables
**   columns not set count as NULL). vals must stay unchanged until apply.
**   apply (after exec_row_put succeeded): adds to b the deletion of each old index row whose
**   key changed and the put of each new one, and adds key to touched (when not NULL) and to
**   the journal (exec_index_maint_set_journal, when set).
** With a journal set, prepare takes the old index row keys of a key the journal knows from
** it, not from the old row read (the columns not set still come from the old row read).
** key is the data row key (exec_row_key). Errors (prepare): EXEC_CONSTRAINT (a value or
** expression that does not fit the index key), EXEC_IOERR, EXEC_CORRUPT, EXEC_TOOBIG,
** EXEC_NOMEM; (apply): EXEC_TOOBIG, EXEC_NOMEM from the batch. After a prepare, call apply
** or exec_index_maint_cancel before the next prepare or delete. */
int exec_index_maint_upsert_prepare(exec_index_maint *m, const uint8_t *key, size_t key_len,
                                    const cat_value *vals, const bool *set, const kv_batch *b,
                                    exec_index_touched *touched, exec_error *err);
int exec_index_maint_upsert_apply(exec_index_maint *m, kv_batch *b, exec_index_touched *touched,
                                  exec_error *err);
/* Drop a prepared upsert (releases the old row's read). */
void exec_index_maint_cancel(exec_index_maint *m);

/* DELETE of the data row with key key[0..key_len): reads the row (as above) and deletes
** its index rows. A missing row deletes nothing. Same errors. */
int exec_index_maint_delete(exec_index_maint *m, const uint8_t *key, size_t key_len,
                            kv_batch *b, exec_index_touched *touched, exec_error *err);

/* Touched-key sets: new (NULL on OOM), clear (after the batch was committed or dropped),
** free (NULL is a no-op). */
exec_index_touched *exec_index_touched_new(void);
void exec_index_touched_clear(exec_index_touched *tk);
void exec_index_touched_free(exec_index_touched *tk);

/* ---- Journal of one statement's index rows (exec/index_journal.c) ---------------------- */
/* A write statement outside a transaction does not read its own earlier writes back (they
** are not committed, and past its memory bound they are in a kv bulk load, exec/write.c):
** an UPSERT that may write a row twice records instead, per data row key, the index row
** keys it wrote last, and a second write of the row deletes those (instead of the index rows
** of the row as committed). Records past the statement's batch go to the bulk load's
** scratch file (kv_bulk_scratch_append); memory holds a 16-byte slot per distinct key (at
** most three quarters of the slots used) and the records not yet spilled. */
typedef struct exec_index_journal exec_index_journal;

/* A journal of n_keys index row keys per record (exec_index_maint's maintained indexes);
** family_id: a family of the written table (its scratch file goes in that family's folder).
** NULL when out of memory. */
exec_index_journal *exec_index_journal_new(int n_keys, uint32_t family_id);
void exec_index_journal_free(exec_index_journal *j);
/* Move the records kept in memory to kb's scratch file (always the same kb for a journal).
** EXEC_OK for NULL j. Errors: EXEC_IOERR, EXEC_FULL, EXEC_NOMEM, EXEC_MISUSE. */
int exec_index_journal_spill(exec_index_journal *j, kv_bulk *kb, exec_error *err);
/* Use journal j (NULL: none) for the UPSERTs of m from now on: prepare takes the old index
** rows of a key j knows from j (the old row is still read from the store for the columns
** not set), apply records the new ones. j is not owned by m. The number of maintained
** indexes of m (exec_index_maint_count) must be j's n_keys. */
void exec_index_maint_set_journal(exec_index_maint *m, exec_index_journal *j);
/* Indexes m maintains; 0 for NULL. */
int exec_index_maint_count(const exec_index_maint *m);
/* Is m's table IMMUTABLE_ROWS (no old row read on UPSERT, so no journal either)? */
bool exec_index_maint_immutable(const exec_index_maint *m);

/* ---- Backfill (exec/index_build.c) ----------------------------------------------------- */
#define EXEC_INDEX_BACKFILL_ROWS 4000 /* data rows per atomic backfill batch */

/* Backfill index `index` of table `table` (state BUILDING): scan the table at one snapshot
** and write its index rows in atomic batches of EXEC_INDEX_BACKFILL_ROWS rows, then set the
** index ACTIVE in the catalog. A crash leaves it BUILDING; exec_index_resume rebuilds it.
** progress may be NULL. Errors: EXEC_IOERR / EXEC_FULL / EXEC_CORRUPT / EXEC_NOMEM /
** EXEC_READONLY from the store, EXEC_CONSTRAINT (a row whose index key cannot be built, e.g.
** over the key size limit), EXEC_NOTFOUND. On error the index stays BUILDING. */
int exec_index_backfill(cat_catalog *cat, kv_backend *be, const char *table, const char *index,
                        exec_progress_fn progress, void *arg, exec_error *err);

/* At session open: for every BUILDING index of every table, delete all its index rows and
** backfill again (then ACTIVE); an index whose rows cannot be built (EXEC_CONSTRAINT,
** EXEC_TOOBIG, EXEC_ERROR) is dropped. On a read-only store the first write fails with
** EXEC_READONLY (the caller ignores it; the index stays BUILDING, unused). Other errors as
** exec_index_backfill. */
int exec_index_resume(cat_catalog *cat, kv_backend *be, exec_progress_fn progress, void *arg,
                      exec_error *err);

/* ---- CHECK INDEX (exec/index_check.c) -------------------------------------------------- */
#define EXEC_INDEX_CHECK_DETAILS 10 /* mismatch lines reported at most */

typedef struct exec_index_check_result {
  uint64_t data_rows;   /* rows of the table */
  uint64_t index_rows;  /* rows of the index */
  uint64_t missing;     /* data rows without their index row */
  uint64_t extra;       /* index rows without a data row whose index key they are */
  uint64_t mismatched;  /* index rows with the right key but other INCLUDE values */
  uint64_t unverified;  /* index rows marked unverified (not counted as EXTRA or MISMATCHED:
                           a read repairs them) */
  uint64_t unverified_stale; /* of those, rows a read would delete (no data row of theirs) */
  int n_details;        /* lines in details */
  char details[EXEC_INDEX_CHECK_DETAILS][256]; /* "MISSING ...", "EXTRA ...", "MISMATCH ..." */
} exec_index_check_result;

/* Verify index `index` of `table` against the table at one snapshot (plus the uncommitted
** batch overlay when not NULL): every data row has its index row with equal INCLUDE values
** and every index row is the index row of an existing data row. Fills *out. Errors:
** EXEC_ERROR (unknown table or index), store errors. */
int exec_index_check(const cat_catalog *cat, kv_backend *be, const char *table, const char *index,
                     const kv_batch *overlay, exec_index_check_result *out, exec_error *err);

#endif /* ROWAN_EXEC_INDEX_H */
