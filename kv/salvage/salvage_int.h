/*
** kv/salvage/salvage_int.h: what kv/salvage/salvage.c (the salvage's plan: tables, files, WAL, the new
** store) and kv/salvage/salvage_sf.c (the readable cells of one store file) share. Internal to
** those two files.
*/
#ifndef ROWAN_KV_SALVAGE_INT_H
#define ROWAN_KV_SALVAGE_INT_H

#include "kv/salvage/salvage.h"
#include "kv/sf/sf.h"

/* Add a damage entry to rep (the message printf-style). KV_OK or KV_ERR_NOMEM. */
int kv_salvage_note(kv_salvage_report *rep, int kind, const char *path, uint64_t off,
                    uint64_t len, int64_t cells, int64_t rows, const char *fmt, ...)
    __attribute__((format(printf, 8, 9)));

/* What one store file gave. */
typedef struct kv_salvage_sf_result {
  uint64_t cells;    /* cells copied */
  uint64_t max_seq;  /* the largest sequence number among them, or the trailer's when it
                        checked (whichever is larger) */
  bool damaged;      /* some part of it did not check */
} kv_salvage_sf_result;

/* Copy every cell of the store file at `path` that can be read into the writer w, in
** order: the blocks its block index lists (or, without an index, the blocks found by their
** framing from offset 0), each whole when it checks (length, checksum, decoding, its index
** entry, cell order) and skipped when not, with a damage entry in rep naming the file and
** the bytes (and the cells and rows, when the index gives them). A file that cannot be
** opened at all is one KV_SALVAGE_SF_MISSING entry. Updates rep's file, block and cell
** counters. Returns KV_OK (damage is reported, not an error), or an error of the writer
** (sticky: KV_ERR_IO, KV_ERR_NOSPC) or KV_ERR_NOMEM. */
int kv_salvage_sf_copy(kv_env *env, const char *path, kv_sf_writer *w, kv_salvage_report *rep,
                       kv_salvage_sf_result *res);

#endif /* ROWAN_KV_SALVAGE_INT_H */
