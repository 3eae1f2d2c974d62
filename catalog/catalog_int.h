/*
** catalog/catalog_int.h: what catalog/catalog.c lends catalog/cat_salvage.c and
** catalog/cat_alter.c: the decoders of SYSTEM.CATALOG's table and index records
** (docs/FORMAT_SQL.md (Part 3), "SYSTEM.CATALOG"), the matching frees, a table's copy and the
** commit of a changed table row. Internal to catalog/.
*/
#ifndef ROWAN_CAT_CATALOG_INT_H
#define ROWAN_CAT_CATALOG_INT_H

#include "catalog/catalog.h"

/* Decode a table record (with its derived fields); NULL when it does not decode or is
** inconsistent. Free with cat_table_free. */
cat_table *cat_table_record_parse(const uint8_t *p, size_t n);
/* Decode an index record into *x; *table_name gets the owning table's name (caller frees).
** false (x zeroed, *table_name NULL) when it does not decode. */
bool cat_index_record_parse(const uint8_t *p, size_t n, cat_index *x, char **table_name);
/* Free a table (its indexes too) / what an index owns. NULL is a no-op for the table. */
void cat_table_free(cat_table *t);
void cat_index_free(cat_index *x);

/* A deep copy of t without its indexes (n_indexes 0); NULL when out of memory. */
cat_table *cat_table_copy(const cat_table *t);
/* Compute t's derived fields (PK order, key codec view) again after its columns changed;
** false when they are inconsistent (no PK) or out of memory. */
bool cat_table_derive(cat_table *t);
/* Fill err with CAT_ERR_KV for kv status kv_code ("what: kv message"); returns CAT_ERR_KV. */
int cat_kv_error(cat_error *err, int kv_code, const char *what);
/* Commit nt as the new record of the table of its name (one batch with its T row), then
** put it in that table's place: it takes the old table's indexes and gets its kv family
** ids; the old table is freed. Takes nt over: on an error before the commit nothing changed
** and nt is freed. CAT_ERR_NOTFOUND, CAT_ERR_NOMEM, CAT_ERR_KV. */
int cat_replace_table(cat_catalog *cat, cat_table *nt, cat_error *err);
/* As cat_replace_table, with the n rows keys[i] = vals[i] (SYSTEM.CATALOG keys and values,
** none deleted) in the same batch: a view's row whose columns took ids of nt (cat_view.c). */
int cat_replace_table_with(cat_catalog *cat, cat_table *nt, int n, const uint8_t *const *keys,
                           const size_t *klen, const uint8_t *const *vals, const size_t *vlen,
                           cat_error *err);

/* Make the store's options of t's families the catalog's (kv_alter_table) where they
** differ: after a crash between an ALTER's kv_alter_table and its commit. Nothing on a
** read-only store. CAT_OK or CAT_ERR_KV. */
int cat_sync_families(cat_catalog *cat, const cat_table *t, cat_error *err);

/* Tell the store which qualifiers of t's families no column has any more (the ids below
** next_column_id that no column of t holds: dropped columns), so that a major compaction
** removes their cells (kv_family_set_dropped_qualifiers; kept in memory by kv, so given at
** every open and after every DROP COLUMN). CAT_OK, CAT_ERR_NOMEM, CAT_ERR_KV. */
int cat_drop_dead_cells(cat_catalog *cat, const cat_table *t, cat_error *err);

/* Columns of a view's own (catalog/cat_view.c) live in the rows of the table the view reads
** and take their ids from it (catalog/cat_alter.c): a copy of t with next_column_id moved
** past n new ids (given to ids[0..n)) and with each family of families[0..n) (NULL: "0")
** t lacks added (VERSIONS 1, LZ4, the table's TTL; kv_alter_table creates it in the store
** first). *out is the copy, not committed (cat_replace_table_with does it); NULL on error.
** CAT_ERR_INVALID (every column id used, a bad or reserved family name, too many families),
** CAT_ERR_KV, CAT_ERR_NOMEM. */
int cat_table_take_ids(cat_catalog *cat, const cat_table *t, const char *const *families, int n,
                       uint16_t *ids, int *family_index, cat_table **out, cat_error *err);
/* Mark live[id] for each id below n that a column of a view over table `table` (through
** views, cat_view_table) holds: those cells are not dropped columns'. */
void cat_view_live_ids(const cat_catalog *cat, const char *table, bool *live, int n);

/* ---- Sequences (catalog/cat_sequence.c) ---------------------------------------------- */
/* The catalog's sequences, kept sorted by name (owned by catalog/cat_sequence.c). */
typedef struct cat_seq_set {
  int n;                 /* sequences */
  cat_sequence **a;      /* them, by name */
} cat_seq_set;
/* The catalog's sequence set and the kv id of SYSTEM.CATALOG's family "0". */
cat_seq_set *cat_seqs(cat_catalog *cat);
uint32_t cat_sys_family(const cat_catalog *cat);
/* Load one 'S' row's record (value v[0..n)) into the set at open. CAT_ERR_CORRUPT (it does
** not decode), CAT_ERR_NOMEM. */
int cat_seq_load(cat_catalog *cat, const uint8_t *v, size_t n, cat_error *err);
/* Free every sequence of the set (cat_close). */
void cat_seqs_free(cat_seq_set *set);
/* Decode a sequence record (catalog/cat_salvage.c too); NULL when it does not decode, its
** options do not hold together, or memory ran out. Free with cat_seq_free (NULL is a no-op). */
cat_sequence *cat_seq_record_parse(const uint8_t *v, size_t n);
void cat_seq_free(cat_sequence *s);

/* ---- Views (catalog/cat_view.c; catalog/cat_view.h) ---------------------------------- */
struct cat_view;
typedef struct cat_view_list {
  int n;               /* views */
  struct cat_view **a; /* them, each after the views it reads */
} cat_view_list;
/* The catalog's views (a field of the catalog). */
cat_view_list *cat_views_of(cat_catalog *cat);
const cat_view_list *cat_views_get(const cat_catalog *cat);
/* Decode a view record (SYSTEM.CATALOG row 'V') and append it to l; CAT_ERR_CORRUPT when it
** does not decode, CAT_ERR_NOMEM. */
int cat_view_load(cat_view_list *l, const uint8_t *p, size_t n, cat_error *err);
/* After the load: put every view after the views it reads (CAT_ERR_CORRUPT when a view
** reads a name that is neither a table nor a view of the catalog, or views read each
** other in a cycle). */
int cat_view_order(cat_catalog *cat, cat_error *err);
/* Free the views of l (l itself is not freed). */
void cat_view_list_free(cat_view_list *l);
/* Commit one batch of n SYSTEM.CATALOG rows: keys[i] (klen[i] bytes) gets vals[i] (vlen[i]
** bytes), or is deleted when vals[i] is NULL. CAT_OK, CAT_ERR_KV, CAT_ERR_NOMEM. */
int cat_commit_rows(cat_catalog *cat, int n, const uint8_t *const *keys, const size_t *klen,
                    const uint8_t *const *vals, const size_t *vlen, cat_error *err);

#endif /* ROWAN_CAT_CATALOG_INT_H */
