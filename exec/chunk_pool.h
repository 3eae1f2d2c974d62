/*
** exec/chunk_pool.h: the two pieces of a parallel scan that know nothing of SQL. A chunk pool
** runs the chunks 0..n-1 of a scan on m threads of its own, each thread taking the lowest
** chunk not yet taken (so chunk i starts before chunk i + 1: a consumer that reads the
** chunks in key order never waits on a chunk no thread has started). A k-way merge hands
** out the items of k sorted streams in one sorted order, ties to the lower stream (for
** chunks in key order: the serial scan's order among equal sort keys): Phoenix's
** MergeSortResultIterator, used for ORDER BY over chunks (exec/op_parallel.c) and for a
** salted table's buckets merged back into key order.
** Not here: what a chunk does (exec/op_parallel.c).
*/
#ifndef ROWAN_EXEC_CHUNK_POOL_H
#define ROWAN_EXEC_CHUNK_POOL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define EXEC_CHUNK_POOL_MAX 64 /* threads of one pool at most */

/* Run chunk `chunk` (ctx as given to exec_chunk_pool_start). Runs on a pool thread; its
** result is the callee's to record (the pool ignores it). */
typedef void (*exec_chunk_fn)(void *ctx, uint32_t chunk);

typedef struct exec_chunk_pool {
  pthread_t th[EXEC_CHUNK_POOL_MAX]; /* the threads started */
  int n_threads;             /* their count */
  atomic_uint next;          /* the next chunk to take */
  uint32_t n_chunks;         /* chunks */
  exec_chunk_fn fn;          /* what runs a chunk */
  void *ctx;                 /* its context */
} exec_chunk_pool;

/* Start min(threads, n_chunks) threads (at least 1, at most EXEC_CHUNK_POOL_MAX; signals
** blocked, kv/util/thread.h) that run fn(ctx, i) for every chunk i once. 0, or the
** errno of a thread that could not start (the chunks then still all run: the threads
** started take them; none started: they run here, before the return). */
int exec_chunk_pool_start(exec_chunk_pool *p, int threads, uint32_t n_chunks,
                          exec_chunk_fn fn, void *ctx);
/* Wait for every thread of p (every chunk has run). Idempotent. */
void exec_chunk_pool_join(exec_chunk_pool *p);

/* ---- The k-way merge ----------------------------------------------------------------- */
/* The next item of stream i into *item: 1, 0 at its end, or a negative error (returned by
** exec_kmerge_next as it is). The item must stay valid until the stream is pulled again. */
typedef int (*exec_kmerge_pull)(void *ctx, uint32_t stream, const void **item);
/* <0, 0, >0 as item a sorts before, with, after item b. */
typedef int (*exec_kmerge_cmp)(void *ctx, const void *a, const void *b);

typedef struct exec_kmerge {
  uint32_t k;                /* streams */
  uint32_t n;                /* streams in the heap (not at their end) */
  uint32_t *heap;            /* stream numbers, a binary min-heap on their heads */
  const void **head;         /* per stream: its current item */
  bool started;              /* the heads were pulled */
  uint32_t last;             /* the stream of the item handed out last (pulled again next) */
  exec_kmerge_pull pull;     /* the streams */
  exec_kmerge_cmp cmp;       /* their order */
  void *ctx;                 /* both callbacks' context */
} exec_kmerge;

/* Set m up over k streams (k >= 1). 0, or -1 when out of memory. */
int exec_kmerge_init(exec_kmerge *m, uint32_t k, exec_kmerge_pull pull, exec_kmerge_cmp cmp,
                     void *ctx);
/* The next item in merged order: 1 with *item and *stream (the stream it came from), 0 when
** every stream is at its end, or a pull's negative error. */
int exec_kmerge_next(exec_kmerge *m, const void **item, uint32_t *stream);
void exec_kmerge_free(exec_kmerge *m);

#endif /* ROWAN_EXEC_CHUNK_POOL_H */
