/*
** exec/op_join.h: the join operators that run a plan_join_node tree (planner/plan_join.h)
** under a SELECT's pipeline (exec/op_query.c): exec/op_join.c drives the tree and its leaves
** (each a single-table exec_query), exec/op_hashjoin.c the hash join, exec/op_nljoin.c the
** nested loop. A node's next row fills its slots of the joined row: the leaves' projected
** columns at their table's slots, NULLs over the other input's slots for an outer join's
** unmatched row.
**
** Memory: the rows a join holds (the hash join's build input, the nested loop's right
** input) are copied out of the scans and counted against ctx->mem_limit (the session's join
** memory, EXEC_JOIN_MEMORY_DEFAULT unless exec_set_join_memory changed it). Past it a hash
** join partitions both inputs to temporary files and joins them a partition at a time
** (exec/op_spill.c); a nested loop stops with EXEC_TOOBIG naming the limit.
**
** Not here: planning (planner/join.c), the steps above the join (exec/op_query.c).
*/
#ifndef ROWAN_EXEC_OP_JOIN_H
#define ROWAN_EXEC_OP_JOIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "exec/op.h"
#include "planner/plan_join.h"

/* What every node of one tree shares. */
typedef struct exec_join_ctx {
  kv_backend *be;            /* the store's backend: the leaves' scans go through it */
  kv_db *db;                 /* the local store under be, or NULL (exec_query.db) */
  const kv_batch *overlay;   /* the transaction's writes, or NULL */
  const cat_value *params;   /* bound parameters */
  int n_params;              /* their count */
  int64_t now_us;            /* NOW() of the statement */
  const cat_value *nulls;    /* the joined row of typed NULLs (sel->n_slots), for padding */
  size_t mem_limit;          /* bytes of rows each join may hold */
  bool timing;               /* EXPLAIN ANALYZE: time the leaves' steps */
} exec_join_ctx;

typedef struct exec_join exec_join;
struct exec_join {
  const plan_join_node *pn;  /* the plan node */
  exec_join_ctx *cx;         /* shared context */
  exec_join *left, *right;   /* inputs of a join node */
  exec_query *leaf;          /* a leaf: its table's query (malloc), or NULL */
  struct exec_setop *dleaf;  /* a derived table's leaf: its plan's run (exec/op_setop.h) */
  exec_arena kscratch;       /* key values of the current input row */
  exec_arena rscratch;       /* the residual's scratch, reset at each check */
  exec_eval_ctx ev;          /* evaluation over the joined row */
  char msg[EXEC_ERRMSG_MAX]; /* evaluation errors */
  /* rows held: the hash join's build input or the nested loop's right input */
  exec_mrow **held;          /* each: n_keys key values, then the input's slots */
  size_t n_held, cap_held;   /* count, allocated */
  size_t mem;                /* bytes they take (rows, pointers, chains) */
  uint32_t *head;            /* hash join: bucket heads (UINT32_MAX: empty), n_buckets */
  uint32_t *next;            /* hash join: the next row of the same bucket, per held row */
  size_t n_buckets;          /* a power of two */
  bool *matched;             /* the held rows something matched, when the join keeps the
                                held side's unmatched rows (outer joins) */
  bool built;                /* the held rows are read */
  bool held_null;            /* semi / anti join: a build row's key had a NULL */
  /* the streaming side */
  cat_value *keys;           /* the current probe row's key values (n_keys) */
  bool have_row;             /* a streaming row is current */
  bool row_matched;          /* it matched some held row */
  uint32_t pos;              /* the next held row to try (chain position or index) */
  uint64_t cur_hash;         /* hash join: the current probe row's key hash */
  uint32_t last_match;       /* hash join (not spilled): 1 + the held row the previous probe
                                row matched, 0 none; a probe row with its key (a run of one
                                key, as a key-ordered probe gives) takes its hash unhashed */
  bool in_sweep;             /* emitting the unmatched held rows of a LEFT JOIN */
  size_t sweep;              /* the next held row to look at */
  bool done;                 /* no more rows */
  /* a child/parent join's probe leaf, narrowed to the build input's keys (exec/op_cpjoin.c):
     the plan its query now runs, in its own arena */
  plan_query cp_q;           /* valid when has_cp_q */
  plan_arena cp_arena;       /* what cp_q and its terms take */
  bool has_cp_q;             /* cp_q must be freed */
  bool cp_exact;             /* (on the join) its probe was narrowed to exactly the held
                                keys: one join key, `column IN (the held values)`, so a semi
                                join's probe rows all match and need no lookup */
  /* sort-merge join (exec/op_mergejoin.c) */
  cat_value *la;             /* the right input's look-ahead row: key values, then slots
                                (its strings the right input's, until its next row) */
  cat_value *lsave;          /* the current left row's slots */
  bool l_eof, r_eof;         /* an input is exhausted */
  bool in_group;             /* pairing left rows with the held rows of one key */
  int adv;                   /* the input to read before going on */
  struct exec_spill *spill;  /* a hash join past the join memory: its partitions on disk
                                (exec/op_spill.c), or NULL */
};

/* The partitioned hash join (exec/op_spill.c), used by exec/op_hashjoin.c once the build
** input's held rows pass the join memory. */
typedef struct exec_spill exec_spill;
/* Start spilling join j: its temporary files in the folder of the key family of a table
** it joins, the rows held so far written to their partitions and freed. */
int exec_spill_begin(exec_join *j, exec_error *err);
/* Write a row of the build (build true) or probe input to its partition by key hash `hash`
** (0 for a NULL key): its nk key values, then its ns slots. */
int exec_spill_add(exec_join *j, bool build, uint64_t hash, const cat_value *keys, int nk,
                   const cat_value *slots, int ns, exec_error *err);
/* Every row of that input is written: the partitions' buffers go to the file. */
int exec_spill_end_input(exec_join *j, bool build, exec_error *err);
/* Free the held rows, then hold the next batch of build rows (the rest of the current
** partition's, or the next non-empty partition's first) and call index(j, err) on them; the
** probe rows are read from the partition's start again. EXEC_ROW (a batch is loaded),
** EXEC_DONE (none left), or an error. */
int exec_spill_next_part(exec_join *j, int (*index)(exec_join *, exec_error *),
                         exec_error *err);
/* The current partition's next probe row: its slots into row, its key values into j->keys
** (valid until the next call). EXEC_ROW, EXEC_DONE at the partition's end, or an error. */
int exec_spill_next_probe(exec_join *j, cat_value *row, exec_error *err);
/* After the current probe row's pass over the held batch (matched: it matched a held row):
** true when it must come out padded now (the join keeps the probe side, it is the
** partition's last batch, and no batch matched it). */
bool exec_spill_pad_probe(exec_join *j, bool matched);
/* A spilled semi join's current probe row matched: true the first time in its partition
** (across batches), when the row passes; false after (exec/op_spill.c). */
bool exec_spill_first_match(exec_join *j);
/* Close the files and free (NULL is fine). */
void exec_spill_free(exec_spill *sp);

/* Open the tree of plan node pn into *out (malloc; close with exec_join_close, also after an
** error). The leaves' scans open at their first row. EXEC_OK, EXEC_NOMEM. */
int exec_join_open(exec_join **out, const plan_join_node *pn, exec_join_ctx *cx,
                   exec_error *err);
/* The next joined row into row (the node's slots): EXEC_ROW, EXEC_DONE or an error. */
int exec_join_next(exec_join *j, cat_value *row, exec_error *err);
/* Close the tree and free it (NULL is fine); the figures stay in the plan's act/leaf_act. */
void exec_join_close(exec_join *j);
/* Stop reading the transaction's writes (exec_query_drop_overlay of each leaf). */
void exec_join_drop_overlay(exec_join *j);

/* The algorithms (exec/op_hashjoin.c, exec/op_nljoin.c): the next row of join node j. */
int exec_hashjoin_next(exec_join *j, cat_value *row, exec_error *err);
int exec_nljoin_next(exec_join *j, cat_value *row, exec_error *err);
int exec_mergejoin_next(exec_join *j, cat_value *row, exec_error *err);

/* Child/parent join (exec/op_cpjoin.c): once hash join j holds its build input, reopen
** probe leaf `probe` on its table's plan narrowed to the held rows' distinct key values
** (plan_join_node cp_*), or leave it as planned when they are more than a skip scan takes;
** j->pn->act says which. EXEC_OK or an error (err set). */
int exec_cpjoin_narrow(exec_join *j, exec_join *probe, exec_error *err);

/* Shared by the algorithms (exec/op_join.c). */
/* True when join pn keeps every row of its left input (left true) or right input (false):
** a LEFT JOIN its left, a RIGHT JOIN its right, a FULL JOIN both. */
bool exec_join_keeps(const plan_join_node *pn, bool left);
/* Hold a copy of row[from, to) after the n_keys values keys (NULL when 0) in j->held,
** counting its memory; EXEC_TOOBIG past cx->mem_limit with a message naming `what`. */
int exec_join_hold(exec_join *j, const cat_value *keys, int n_keys, const cat_value *row,
                   int from, int to, const char *what, exec_error *err);
/* Hold a copy of v[0..n) (key values, then slots) in j->held, counted as exec_join_hold. */
int exec_join_hold_vals(exec_join *j, const cat_value *v, int n, const char *what,
                        exec_error *err);
/* Copy held row h's slots (after its n_keys keys) back into row[from, ...). */
void exec_join_restore(const exec_join *j, const exec_mrow *h, int n_keys, cat_value *row,
                       int from);
/* Pad row[from, to) with the typed NULLs of the context. */
void exec_join_pad(const exec_join *j, cat_value *row, int from, int to);
/* Put held row i (after its nk keys) into row at slot `from` and check the residual: 1 when
** the pair passes (row_matched and the row's matched flag set), 0 when not, -error. */
int exec_join_pair(exec_join *j, uint32_t i, int nk, cat_value *row, int from,
                   exec_error *err);
/* The next held row no row matched (from j->sweep on): put into row at `from`, with
** [pad_from, pad_to) NULL; false when there is none left. */
bool exec_join_sweep(exec_join *j, int nk, cat_value *row, int from, int pad_from,
                     int pad_to);
/* Check the residual over row: 1 true, 0 not, or -error. */
int exec_join_check(exec_join *j, const cat_value *row, exec_error *err);
/* An evaluation error of j into err; returns rc. */
int exec_join_eval_err(exec_join *j, int rc, exec_error *err);

#endif /* ROWAN_EXEC_OP_JOIN_H */
