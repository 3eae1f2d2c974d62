/*
** kv/util/iter.h: the internal cell iterator that memstores, store files and merges implement
** (LevelDB's Iterator, in C). A scan stacks them: per-source iterators, a merging iterator
** per family, row assembly on top. Iterators never allocate per cell: cell() points into
** the source's memory and stays valid until the iterator moves.
*/
#ifndef ROWAN_KV_ITER_H
#define ROWAN_KV_ITER_H

#include <stdbool.h>
#include "kv/util/cell.h"

typedef struct kv_iter kv_iter;

typedef struct kv_iter_ops {
  bool (*valid)(kv_iter *it);                              /* positioned on a cell? */
  void (*seek_first)(kv_iter *it);                         /* first cell */
  void (*seek_last)(kv_iter *it);                          /* last cell */
  void (*seek)(kv_iter *it, const kv_cell *target);        /* first cell >= target */
  void (*seek_for_prev)(kv_iter *it, const kv_cell *target); /* last cell <= target */
  void (*next)(kv_iter *it);                               /* REQUIRES: valid */
  void (*prev)(kv_iter *it);                               /* REQUIRES: valid */
  const kv_cell *(*cell)(kv_iter *it);                     /* REQUIRES: valid */
  int (*status)(kv_iter *it);  /* KV_OK, or the error (corruption, I/O) that ended it */
  void (*destroy)(kv_iter *it);
} kv_iter_ops;

struct kv_iter {
  const kv_iter_ops *ops; /* the implementation; the rest of the struct is its own */
};

/* Build a target cell that sorts before every cell of `row` (seek to a row's start), or
** after every cell of `row` (seek_for_prev to a row's end). */
static inline kv_cell kv_cell_row_first(const uint8_t *row, uint32_t len) {
  kv_cell c = {row, len, (const uint8_t *)"", 0, INT64_MAX, UINT64_MAX, 255, NULL, 0};
  return c;
}

#endif /* ROWAN_KV_ITER_H */
