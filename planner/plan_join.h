/*
** planner/plan_join.h: the join tree of a SELECT over several tables (issue 16, first slice),
** built by planner/join.c, printed by planner/explain_join.c and run by exec/op_join.c
** (exec/op_hashjoin.c, exec/op_nljoin.c).
**
** The tree is left-deep in FROM order: node k joins the tree of tables 0..k-1 (left) with
** table k (right). Every node fills a contiguous part of the joined row (planner/plan.h
** plan_from: table i's columns are slots from[i].base ...): the left input slots [lo, mid),
** the right input [mid, hi). A leaf is a whole single-table plan (plan_query) of its table,
** with the WHERE and ON terms that concern that table alone pushed into it, so its key
** ranges, skip scans, pushed filters and index choice are the single-table planner's; it
** projects the columns the rest of the query needs (leaf_cols). A leaf may also be a derived
** table (plan_from.sub: a subquery in FROM, a WITH name, a set operation): its plan is its
** query's whole plan, which gives every result column, and the terms over it alone are its
** leaf_filter. A FROM of one derived table is a tree of that one leaf.
**
** Algorithms: a hash join when the join has equality terms between the two inputs (the side
** estimated smaller is built, the other probes; other terms are a residual checked after a
** key match), or a sort-merge join of two tables read in key order (planner/join_merge.c),
** else a nested loop over the right input's rows held in memory. LEFT joins pad
** the right input's slots with NULLs for a left row nothing matched, RIGHT joins the left
** input's for a right row nothing matched, FULL joins both. Both hold at most the
** session's join memory (exec_set_join_memory); past it a hash join partitions its inputs
** to disk (exec/op_spill.c), a nested loop fails.
**
** The actual figures of a run (EXPLAIN ANALYZE) are written by the executor into `act` and
** `leaf_act`, which the planner allocates with the plan (zeroed at each run's open).
**
** Not here: binding the FROM (planner/bind_from.c), the operators (exec/op_*join.c).
*/
#ifndef ROWAN_PLANNER_PLAN_JOIN_H
#define ROWAN_PLANNER_PLAN_JOIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "planner/plan_select.h"

/* ORDER PLAN_JOIN_ALGO: explain_join.c names them in this order. */
enum plan_join_algo { PLAN_JOIN_HASH = 1, PLAN_JOIN_NESTED_LOOP, PLAN_JOIN_MERGE };

/* What one join node did in a run (EXPLAIN ANALYZE). */
typedef struct plan_join_actual {
  uint64_t rows_left;     /* rows read from the left input */
  uint64_t rows_right;    /* rows read from the right input */
  uint64_t rows_out;      /* joined rows passed on */
  uint64_t build_rows;    /* rows held (the hash table's, or the nested loop's inner rows) */
  uint64_t peak_bytes;    /* memory those rows took at most */
  uint64_t spill_bytes;   /* bytes written to temporary files (a hash join past the join
                             memory, partitioned to disk) */
  int spill_parts;        /* partitions it was cut into (0: it did not spill) */
  uint64_t spill_batches; /* batches of build rows held: one per non-empty partition, more
                             for a partition whose build rows pass the join memory */
  int cp_state;           /* child/parent join (below): enum plan_cp_state */
  uint64_t cp_keys;       /* the key prefixes the probe input read (PLAN_CP_APPLIED), or
                             the distinct values that were too many (PLAN_CP_TOO_MANY) */
} plan_join_actual;

/* What became of a child/parent join in a run. */
enum plan_cp_state {
  PLAN_CP_NONE = 0,   /* not planned, or the build input held no row */
  PLAN_CP_APPLIED,    /* the probe leaf read only the build side's key prefixes */
  PLAN_CP_TOO_MANY,   /* more distinct key values than PLAN_MAX_SKIP_RANGES: read whole */
  PLAN_CP_SPILLED     /* the build input spilled to disk: the probe was read whole */
};

typedef struct plan_join_node plan_join_node;
struct plan_join_node {
  bool leaf;                  /* a table (else a join of two inputs) */
  /* leaf */
  int from;                   /* index of the table in sel->from */
  const plan_select *leaf_sel; /* the single-table SELECT the leaf runs (pushed WHERE), or a
                                 derived table's query */
  const char *leaf_name;      /* the table's name, or a derived table's (messages) */
  plan_query leaf_q;          /* its plan */
  int *leaf_cols;             /* leaf_sel->proj[i] is the table's column leaf_cols[i] */
  plan_actuals *leaf_act;     /* the leaf's figures of the last run */
  bool derived;               /* a derived table (leaf_q is its query's plan) */
  plan_expr *leaf_filter;     /* a derived table: the terms over it alone, checked over the
                                 joined row as each of its rows arrives (its own query is
                                 planned as written); NULL otherwise */
  /* join */
  int algo;                   /* enum plan_join_algo */
  int kind;                   /* SQL_JOIN_INNER, _LEFT, _RIGHT, _FULL or _CROSS (COMMA and
                                 CROSS with terms run as INNER) */
  plan_join_node *left;       /* the tables before this one */
  plan_join_node *right;      /* this table (a leaf) */
  int lo, mid, hi;            /* slots: the left input fills [lo, mid), the right [mid, hi) */
  bool build_left;            /* hash join: the left input is built (else the right) */
  bool merge_sorted;          /* sort-merge join: an input is sorted first (the hint forced
                                 it); else both arrive in key order */
  int n_keys;                 /* equality terms used as the hash key */
  plan_expr **lkeys;          /* their left sides, over the joined row (left slots only) */
  plan_expr **rkeys;          /* their right sides (right slots only) */
  plan_expr *residual;        /* the other terms of this join, checked on each matched pair
                                 (a nested loop's whole condition); NULL: none */
  uint64_t est_rows;          /* estimated rows out (a leaf: its scan's estimate) */
  plan_join_actual *act;      /* figures of the last run */
  /* child/parent join (Phoenix's skip-scan join; planner/join_cp.c): a hash join whose probe
     input is a leaf whose table's leading row-key columns are join keys. Once the build
     input is held, the probe leaf is planned again with `column IN (the held rows' distinct
     values)` for each of those columns, so it reads only those key prefixes. */
  int cp_n;                   /* leading key columns restricted so (0: not a child/parent
                                 join) */
  int *cp_col;                /* per such column: its column index in the probe table */
  int *cp_key;                /* per such column: the join key (index into lkeys/rkeys) */
};

/* Plan the join query s (s->n_from >= 2) into q: each table's terms pushed into its leaf
** plan, the remaining terms on the lowest join that may check them or, past a LEFT join's
** padding, in q->join_filter; hash or nested loop per join; the build side from the leaves'
** estimates (full false: no estimates, as plan_query_rebuild). q->join is set, has_scan is
** false. EXEC_OK, EXEC_ERROR (a leaf's LIMIT), EXEC_NOMEM, EXEC_TOOBIG with msg. */
int plan_join_build(kv_backend *be, const plan_select *s, const cat_value *params, int n_params,
                    plan_arena *A, plan_query *q, char *msg, size_t cap, bool full);
/* Decide whether hash join j (algo, build side and keys set) is a child/parent join and
** fill j->cp_* (planner/join_cp.c): its probe input is a leaf, the join is inner or semi (the
** caller never asks for an anti join) or the probe is a LEFT JOIN's right input, hint `hint`
** does not say NO_CHILD_PARENT_JOIN_OPTIMIZATION, and the probe table's first row-key column
** (and any after it) is a join key compared with an expression of the same type. EXEC_OK or EXEC_NOMEM. */
int plan_join_child_parent(plan_join_node *j, const char *hint, plan_arena *A);

/* Make hash join j of two leaves a sort-merge join (planner/join_merge.c) when its keys are
** plain columns of one type on each side and both leaves, planned again with ORDER BY their
** key columns, need no sort, or when hint `hint` says USE_SORT_MERGE_JOIN; the leaves then
** have the ordered plans. Otherwise j is left as it was. EXEC_OK, EXEC_NOMEM, or a leaf's
** planning error (msg). */
int plan_join_merge(kv_backend *be, plan_join_node *j, const char *hint, const cat_value *params,
                    int n_params, plan_arena *A, char *msg, size_t cap, bool full);

/* Free what the leaves' plans own (their key ranges and filters). */
void plan_join_free(plan_join_node *n);

/* The EXPLAIN lines of join tree n (its leaves' own lines indented under it), with the
** figures of the last run when a is not NULL; appended to *lines (arena strings, *n_lines
** counts). EXEC_OK or EXEC_NOMEM. */
int plan_join_explain(const plan_join_node *n, const plan_select *s, bool analyzed,
                      plan_arena *A, char ***lines, int *n_lines);

/* The EXPLAIN lines of the subqueries of statement b: those its plan q (or NULL) runs once
** before it (q->subs), a `SUBQUERY n (run once: ...)` line and its plan under it each; then
** the correlated subqueries run per outer row (b->applies), a `CORRELATED SUBQUERY n` line
** each, with runs and reuses when a (the actuals, or NULL) has them (planner/
** explain_join.c). EXEC_OK or EXEC_NOMEM. */
int plan_subqueries_explain(const plan_bound *b, const plan_query *q, const plan_actuals *a,
                            plan_arena *A, char ***lines, int *n_lines);

/* The EXPLAIN lines of one single-table plan q (a leaf) without the statement's own lines
** (no TOTAL), with its figures a or NULL (planner/explain.c). EXEC_OK or EXEC_NOMEM. */
int plan_explain_query(const plan_query *q, const plan_actuals *a, plan_arena *A,
                       char ***lines, int *n);

#endif /* ROWAN_PLANNER_PLAN_JOIN_H */
