/*
** exec/parallel_int.h: the run of a parallel scan shared by its files (exec/parallel.h has
** the contract): a chunk (its scan, decoder, scratch, error, and what it hands on: queued row
** batches, sorted rows or groups) and the run (the chunks, the pool, the queues' lock). A
** chunk's thread touches only its chunk and, under the run's lock, its queue; the reader
** (the stepping thread) takes the queues whole.
** exec/op_parallel.c runs the chunks and reads the rows way in chunk order;
** exec/op_parallel_merge.c merges: a salted scan's rows by their unsalted keys, sorted rows,
** partial aggregates.
** Not here: the plan (planner/parallel.h), the decision (exec/op_parallel_attach.c).
*/
#ifndef ROWAN_EXEC_PARALLEL_INT_H
#define ROWAN_EXEC_PARALLEL_INT_H

#include <pthread.h>
#include <stdatomic.h>

#include "exec/chunk_pool.h"
#include "exec/engine_int.h"
#include "exec/parallel.h"

#define PAR_QUEUE_ROWS 1024u /* rows one chunk's queue holds ahead of the reader */
#define PAR_BATCH_ROWS 64u   /* rows a chunk's thread hands over at once (one par_batch) */

/* Rows way: rows a chunk hands over at once, in two allocations (the values, their bytes). */
typedef struct par_batch {
  uint32_t n;                /* rows */
  uint8_t *bytes;            /* the string bytes of the values, and (keyed) the row keys */
  size_t used, cap;          /* bytes used, allocated */
  uint32_t koff[PAR_BATCH_ROWS]; /* keyed: each row's unsalted key, at bytes + koff[i] */
  uint32_t klen[PAR_BATCH_ROWS]; /* its length */
  cat_value v[];             /* n rows of the run's width */
} par_batch;

enum { PAR_WAY_ROWS = 0, PAR_WAY_SORTED, PAR_WAY_AGG };

typedef struct par_chunk {
  struct exec_par *P;        /* the run */
  plan_scan ps;              /* the query's scan cut to this chunk */
  exec_scan_state scan;      /* its scan */
  bool scan_open;            /* opened */
  cat_value *in;             /* the decoded row (the table's columns, or out's slots) */
  cat_value *out;            /* the projected row (sorted and aggregate ways) */
  exec_arena scratch;        /* per-row scratch */
  exec_eval_ctx ev;          /* evaluation over in */
  char evmsg[EXEC_ERRMSG_MAX]; /* its errors */
  exec_mrow **q;             /* sorted way: the rows */
  size_t qn, qcap;           /* count, allocated */
  par_batch **bq;            /* rows way: the queue of batches (under P->mu) */
  size_t bqn, bqcap, qrows;  /* batches, allocated, rows in them */
  exec_rowset groups;        /* aggregate way: this chunk's groups */
  exec_mrow **order;         /* them in the order they were met */
  uint8_t **fkey;            /* salted: per group of order, the unsalted key of its first row
                                (malloc each), NULL when not salted */
  uint32_t *fkey_len;        /* their lengths */
  size_t cap_fkey;           /* both allocated for this many */
  size_t n_order, cap_order; /* count, allocated */
  bool done;                 /* finished (under P->mu for the rows way) */
  int rc;                    /* EXEC_OK or its error */
  exec_error err;            /* the error */
  uint64_t rows;             /* rows handed on (after the filter) */
  uint64_t scanned, filtered_in, projected, sort_in; /* step counters */
  uint64_t ix_in, ix_out;    /* uncovered index: rows into and out of the index filter */
  /* the reader's side of a keyed rows way (exec/op_parallel_merge.c) */
  par_batch **rloc;          /* batches taken from the queue */
  size_t rln, rlpos, rlcap;  /* their count, the next, allocated */
  par_batch *rheld;          /* the batch of the current row */
  uint32_t rpos;             /* the current row's index in it */
} par_chunk;

typedef struct exec_par {
  exec_query *x;             /* the pipeline */
  const plan_par *p;         /* the plan */
  int way;                   /* PAR_WAY_* */
  bool salted;               /* a salted scan (p->salt_lo): chunks keep unsalted keys */
  par_chunk *c;              /* the chunks */
  uint32_t n;                /* their count */
  int width;                 /* values of a decoded row */
  exec_chunk_pool pool;      /* the threads */
  bool started;              /* pool started */
  bool unbounded;            /* queues not bounded (fewer threads started than a keyed merge
                                needs, or none): under mu */
  pthread_mutex_t mu;        /* the rows way's queues */
  pthread_cond_t cv;         /* a queue changed */
  atomic_bool stop;          /* the reader stopped: threads end */
  atomic_size_t mem;         /* sorted way: bytes of rows all chunks hold (the sort's limit
                                is the serial sort's: for them all) */
  uint32_t cur;              /* rows way: the chunk being read */
  par_batch **loc;           /* rows way: batches taken from it */
  size_t ln, lpos, lcap;     /* their count, the next, allocated */
  par_batch *held;           /* the batch the reader's values point into */
  uint32_t hpos;             /* its next row */
  exec_kmerge km;            /* keyed rows way: the merge of the chunks */
  bool km_ok;                /* km set up */
  int km_rc;                 /* a pull's error (the chunk's, copied into km_err) */
  exec_error km_err;
} exec_par;

void par_batch_free(par_batch *b);
/* Under P->mu, with c's queue not empty: swap c's queue of batches with the reader's array
** (*loc of *lcap; its batches all handed out), so the reader holds the queued batches (*ln of
** them, *lpos 0) and c an empty queue to fill; wakes c's thread. */
void par_take_queue(exec_par *P, par_chunk *c, par_batch ***loc, size_t *lcap, size_t *ln,
                    size_t *lpos);
/* The unsalted key of the row the chunk's scan handed out last: *len bytes. */
const uint8_t *par_row_key(const par_chunk *c, uint32_t *len);

/* exec/op_parallel_merge.c */
/* Keyed rows way: the next row of the chunks merged by unsalted key (descending for a reverse
** scan) into row. EXEC_ROW, EXEC_DONE or a chunk's error. */
int par_keyed_next(exec_par *P, cat_value *row, exec_error *err);
/* Keyed rows way: the reader's batches freed (exec_par_close). */
void par_keyed_free(exec_par *P);
/* Sorted way: the chunks' sorted rows merged into x's buffer. EXEC_OK or an error. */
int par_merge_sorted(exec_query *x, exec_error *err);
/* Aggregate way: the chunks' groups combined, in the order the serial scan meets them, and
** handed to exec_query_take_groups. EXEC_OK or an error. */
int par_merge_groups(exec_query *x, exec_error *err);

#endif /* ROWAN_EXEC_PARALLEL_INT_H */
