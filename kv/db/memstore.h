/*
** kv/db/memstore.h: the in-memory sorted buffer of one column family's recent writes (HBase's
** MemStore, LevelDB's MemTable): a skip list of cells in kv_cell_cmp order, allocated from
** an arena (no per-cell malloc), one writer at a time with concurrent lock-free readers.
** A memstore holds cells of every sequence number; readers skip those above their snapshot.
** When full it is frozen and flushed to a store file.
*/
#ifndef ROWAN_KV_MEMSTORE_H
#define ROWAN_KV_MEMSTORE_H

#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>
#include "kv/util/iter.h"

typedef struct kv_memstore kv_memstore;

/* A new empty memstore with one reference; NULL when out of memory. */
kv_memstore *kv_memstore_new(void);
/* Reference counting: scans hold a reference while they iterate. The last unref frees the
** memstore and every cell in it (NULL is a no-op). */
void kv_memstore_ref(kv_memstore *m);
void kv_memstore_unref(kv_memstore *m);
/* Insert a copy of the cell (row, qualifier and, for puts, value bytes are copied into the
** arena). KV_OK or KV_ERR_NOMEM. The cell becomes visible to concurrent readers at once;
** readers that must not see it yet filter by sequence number.
** REQUIRES: the caller serializes writers. */
int kv_memstore_add(kv_memstore *m, const kv_cell *c);
/* Bytes of nodes and cell data in the arena (the flush threshold compares against this;
** the arena's unused tail and the empty list are not counted). */
size_t kv_memstore_bytes(const kv_memstore *m);
uint64_t kv_memstore_cells(const kv_memstore *m);
uint64_t kv_memstore_max_seq(const kv_memstore *m);
/* Estimate of the cells of m whose row is in [start, end] (start NULL: from the first
** cell; start_incl false: row `start` itself left out; end NULL: to the last cell;
** end_incl false: row `end` left out): *cells, *rows (distinct rows), *bytes (row, qualifier
** and value bytes plus 16 a cell). The first `exact` cells of the range are walked one by
** one and counted exactly (a range of at most that many cells gets exact figures); the rest
** is counted on the higher levels of the skip list, where one step stands for about
** BRANCHING^level cells, its rows and bytes scaled from the exact part: so the walk stays
** near exact + 128 steps per level whatever the range holds (a planner's estimate, not a
** count; those of a large range are typically within 10-20% of the truth). Every version and
** tombstone counts as a cell, whatever its sequence number. Safe beside a writer. */
void kv_memstore_estimate(kv_memstore *m, const uint8_t *start, size_t start_len,
                          bool start_incl, const uint8_t *end, size_t end_len, bool end_incl,
                          uint64_t exact, uint64_t *cells, uint64_t *rows, uint64_t *bytes);
/* An iterator over all cells (the caller filters by sequence number). Holds a reference
** until destroyed; NULL when out of memory. Supports every kv_iter_ops method; prev() and
** seek_for_prev() cost O(log n) (no back pointers). status() is always KV_OK. */
kv_iter *kv_memstore_iter_new(kv_memstore *m);

#endif /* ROWAN_KV_MEMSTORE_H */
