/*
** exec/keymap.h: what a picture of a table's key space needs from the engine (the shell's
** .keymap, through include/rowan.h's rowan_table_layout and rowan_stmt_trace_get): the
** table's store files and blocks per column family, from the block indexes
** (kv_family_blocks), with their first row keys decoded into column values; the table's
** regions (kv_family_regions: docs/KV_REGIONS.md), each with its start key decoded the same
** way; and a statement's block trace (kv_trace) turned into the same terms: each block read
** with its table and family names, each key range sought with its bounds as column values.
**
** Key text: a row key decodes to "['Dongsi', '2017-02-28 23:00:00']" (the
** literals of docs/EXPLAIN.md's bounds). A range bound is often not a whole row key: a
** prefix (['Dongsi']), the key just after one (cat_key_next), or the first key after every
** key starting with one (cat_key_prefix_end); bounds are printed as EXPLAIN prints them,
** one bracket per bound, ']' inclusive and ')' exclusive, '*' for an open bound:
** "['Dongsi', *] .. ['Dongsi', *]" is every key whose first column is 'Dongsi' ('*': a
** key column the bound leaves open, as in EXPLAIN). Bytes that do not
** decode are shown as X'..' hex after the columns that did. The key of a salted table (or
** index) starts with its salt byte, printed first as the bucket number, as EXPLAIN prints
** a salted range: "[2, 'Dongsi', '2017-02-28 23:00:00']"; a region start of a salted table
** is the salt byte alone: "[2, *, *]". A region start is printed as a range start.
**
** Not here: drawing (cli/keymap*.c), recording (kv/util/trace.c). Everything returned is
** malloc'ed and freed with the matching _free function.
*/
#ifndef ROWAN_EXEC_KEYMAP_H
#define ROWAN_EXEC_KEYMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "exec/engine.h"
#include "kv/kv.h"

/* One store-file block (kv_file_block) with its first key as text. */
typedef struct exec_km_block {
  uint32_t family;         /* index into exec_km_layout.families */
  uint64_t file;           /* store-file number */
  uint64_t file_bytes;     /* the file's size */
  uint32_t file_blocks;    /* blocks in the file */
  uint32_t block;          /* index in the file */
  uint64_t offset;         /* byte offset in the file */
  uint32_t bytes;          /* on-disk bytes */
  uint32_t raw_bytes;      /* uncompressed bytes */
  uint32_t cells, rows;    /* cells and rows in it */
  uint8_t *first;          /* its first row key (malloc) */
  uint32_t first_len;      /* its length */
  char *first_text;        /* decoded (malloc) */
  uint8_t *last;           /* the file's last row key (malloc; the same for each block) */
  uint32_t last_len;       /* its length */
  char *last_text;         /* decoded (malloc) */
} exec_km_block;

/* One column family of the table. */
typedef struct exec_km_family {
  char *name;              /* "_k", "0" or the declared name (malloc) */
  uint32_t kv_id;          /* kv family id */
  uint64_t memstore_bytes; /* bytes in its memstores (not yet in any block) */
  uint64_t memstore_cells; /* cells there */
  uint64_t store_files;    /* store files */
  uint64_t blocks;         /* blocks in them */
  uint64_t bytes;          /* their on-disk bytes */
  uint64_t reader_bytes;   /* memory their open readers hold (kv_family_stats.reader_bytes) */
  uint64_t paged_files;    /* files whose block index is paged (kv_family_stats.paged_files) */
} exec_km_family;

/* One region of the table: from its start key (inclusive) to the next region's. */
typedef struct exec_km_region {
  uint8_t *start;          /* its start key (malloc), NULL for the first region */
  uint32_t start_len;      /* its length, 0 for the first region */
  char *start_text;        /* as a range start: "['b', *]"; "[*]" for the first (malloc) */
} exec_km_region;

typedef struct exec_km_layout {
  char *table;             /* the table's name (malloc) */
  char *key;               /* its primary key: "STATION, TS DESC" (malloc) */
  uint32_t n_families;     /* families, the hidden key family "_k" first */
  exec_km_family *families;
  size_t n_blocks;         /* blocks of every family: family by family, files in the order
                              the store keeps them (oldest first), blocks in key order */
  exec_km_block *blocks;
  uint32_t n_regions;      /* the table's regions (1 when not split), in key order */
  exec_km_region *regions; /* taken in one look of their own (kv_family_regions) */
} exec_km_layout;

/* Build the layout of table `name` (exact, else upper-cased as an unquoted SQL name) at
** this moment; with `blocks` false the families and regions only (the families' totals
** from the store's statistics in one look each, no block index walked: n_blocks 0). EXEC_OK with *out set;
** EXEC_ERROR (no such table), EXEC_NOMEM, or the error of the store; err describes it. */
int exec_km_layout_get(exec_session *s, const char *name, bool blocks, exec_km_layout **out,
                       exec_error *err);
void exec_km_layout_free(exec_km_layout *l);

/* ---- A statement's block trace ---- */
/* Turn tracing of st's reads on (a new, empty trace; an existing one is cleared) or off
** (the trace is kept for reading until the next on or finalize). While on, every run of
** st starts its trace afresh at its first step (as the metrics), and its scans, index
** lookups and columnar aggregates record into it. EXEC_OK or EXEC_NOMEM. */
int exec_set_trace(exec_stmt *st, bool on, exec_error *err);
/* The trace of the statement this thread is stepping (exec_step sets it for the duration
** of the step), or NULL: scans opened during the step pass it to kv. */
kv_trace *exec_trace_current(void);
/* The trace of st, or NULL when it never traced. */
kv_trace *exec_get_trace(const exec_stmt *st);

/* One block read, named. */
typedef struct exec_km_read {
  char *table;             /* "SENSOR", or "SENSOR.IDX" for an index (malloc) */
  char *family;            /* its family (malloc) */
  uint64_t file;           /* store-file number */
  uint32_t block;          /* index in the file */
  uint32_t loads;          /* times loaded */
  uint32_t cache_hits;     /* of which from a cache */
} exec_km_read;

/* One key range sought, named. */
typedef struct exec_km_range {
  char *table;             /* as exec_km_read.table (malloc) */
  bool has_start, has_end; /* false: open ([first row, or to the last) */
  uint8_t *start, *end;    /* the bounds' bytes (malloc): start inclusive, end exclusive */
  uint32_t start_len, end_len; /* their lengths */
  char *text;              /* "['Dongsi', *] .. ['Dongsi', *]" (malloc) */
} exec_km_range;

typedef struct exec_km_trace {
  size_t n_reads;          /* blocks read, sorted by (file, block) */
  exec_km_read *reads;
  size_t n_ranges;         /* ranges kept (KV_TRACE_MAX_RANGES at most), in the order sought */
  exec_km_range *ranges;
  uint64_t ranges_total;   /* ranges sought in all */
  bool lost;               /* kv_trace_lost: something may be missing */
} exec_km_trace;

/* st's trace, named (empty when st never traced). EXEC_OK or EXEC_NOMEM. */
int exec_km_trace_get(exec_stmt *st, exec_km_trace **out, exec_error *err);
void exec_km_trace_free(exec_km_trace *t);

#endif /* ROWAN_EXEC_KEYMAP_H */
