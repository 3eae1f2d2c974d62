/*
** planner/advise.h: the row-key advisor's model (the shell's .advise, include/rowan.h
** rowan_advise). Given a table and the SELECTs it serves, it proposes other orders of the
** table's primary-key columns and says, per order and per query, what a scan would read.
**
** How a candidate key is judged (docs/SHELL.md ".advise" has the model for users):
**  - the plan: each query is planned by the planner's own code (plan_query_build, so the
**    key ranges of planner/keyrange.c, the ORDER BY / LIMIT / GROUP BY decisions of
**    planner/select.c) against a hypothetical copy of the table whose PRIMARY KEY has the
**    candidate's order and directions, with no store behind it; the skip scan by prefix and
**    the first row of each prefix (planner/skip_prefix.h), which count prefixes in the
**    store, are decided here by the same cost rule over the sample;
**  - the rows: the table's row keys (all of them, or every k-th past PLAN_ADV_SAMPLE_MAX),
**    read once from the hidden key family, decoded and encoded again in the candidate's
**    order and sorted: the rows a plan reads are the sampled keys inside its key ranges
**    (per leading prefix for a skip scan by prefix), scaled to the table's row count;
**    a pushed LIMIT stops the scan early, after LIMIT / (share of the ranges' rows the
**    query's key terms pass), the share taken from the candidate whose ranges hold the fewest
**    rows;
**  - the bytes: rows times the average bytes per row of each family the plan reads (the
**    families' sizes from kv_family_get_stats);
**  - the cost: rows read plus PLAN_SKIP_SEEK_COST per seek (one per key range; for a skip
**    scan by prefix, one per prefix and per range in it), the unit of the skip scan's
**    cost rule. Candidates are ranked by total cost, then bytes, then rows read by reverse
**    scans, the current key first among equals, then the order of enumeration.
**  - secondary indexes: one candidate per non-key column that some query's WHERE bounds
**    (a key range over that column alone), each added alone to the first choice's key: its
**    key is the column then that primary key, its entries the sample encoded so; each query
**    is planned over it as over a table with that key (no skip scan by prefix), and the
**    planner's index-choice rule (planner/index_choice.c: rows + 8 per lookup + 0.5 per
**    row sorted, lookups unless only the key family is read) says whether the query would
**    use it. With it, a query reads its index rows plus one row per lookup, with a seek
**    per range and per lookup; the index rows each write adds are not counted.
** Nothing is written: no store, no catalog row.
**
** Not here: parsing the query file and the report's text (exec/advise.c), the EXPLAIN figures
** of the current key (the real plan, exec/advise.c).
*/
#ifndef ROWAN_PLANNER_ADVISE_H
#define ROWAN_PLANNER_ADVISE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kv/kv.h"
#include "planner/plan.h"

#define PLAN_ADV_SAMPLE_MAX (1u << 20) /* row keys sampled at most */
#define PLAN_ADV_MAX_CANDIDATES 48     /* key orders judged at most */
#define PLAN_ADV_MAX_INDEXES 8         /* candidate indexes judged at most */

/* One query's figures under one candidate key. */
typedef struct plan_adv_est {
  int kind;          /* enum plan_scan_kind of the scan (PLAN_SCAN_PREFIX_SKIP included) */
  bool prefix_first; /* the first row of each prefix only (SKIP TO NEXT PREFIX) */
  bool reverse;      /* the scan runs in reverse key order */
  bool sort;         /* a sort follows the scan */
  bool limit_pushed; /* LIMIT goes into the scan */
  uint64_t kv_limit; /* rows the scan hands out at most when limit_pushed */
  double row_bytes;  /* bytes per table row of the families the scan reads */
  double row_share;  /* share of the table's rows the scan sees (1 unless it reads only
                        families that some rows have no cell in) */
  bool key_only;     /* the scan reads no family but the key family: over an index's key,
                        the index covers the query */
  bool index;        /* index figures: the query is served by the index (plan_adv_index) */
  uint64_t lookups;  /* index figures: point lookups back into the table */
  uint32_t n_ranges; /* key ranges of the scan (suffix ranges for a skip scan by prefix) */
  uint64_t range_rows; /* rows inside the key ranges, before any LIMIT (model) */
  uint64_t rows;     /* estimated rows read */
  uint64_t bytes;    /* estimated bytes read */
  uint64_t seeks;    /* seeks: key ranges, or prefixes x (1 + ranges) */
  double cost;       /* rows + PLAN_SKIP_SEEK_COST x seeks */
} plan_adv_est;

/* One candidate row key. */
typedef struct plan_adv_cand {
  int n;             /* key columns (the table's n_pk) */
  int *cols;         /* table column index per key position (malloc) */
  bool *desc;        /* per key position: DESC (malloc) */
  bool current;      /* the table's own key */
  int seq;           /* its place in the enumeration (the last tie-break) */
  plan_adv_est *est; /* per query (malloc) */
  uint64_t rows, bytes, seeks; /* totals over the queries */
  double cost;       /* total cost */
  uint64_t reverse_rows; /* rows read by reverse scans (a tie-break) */
} plan_adv_cand;

/* One candidate secondary index: a single column, added to the first choice's key. */
typedef struct plan_adv_index {
  int column;        /* the indexed column (index into the table's columns) */
  plan_adv_est *est; /* per query, the path the planner's rule takes with the index: the
                        index (est[i].index set) or the table scan (malloc) */
  int n_served;      /* queries served by the index */
  uint64_t rows, bytes, seeks; /* totals with the index */
  double cost;       /* total cost with the index */
} plan_adv_index;

typedef struct plan_advice {
  uint64_t table_rows;  /* the table's rows (key family statistics) */
  uint64_t table_bytes; /* bytes of all its families */
  uint64_t sampled;     /* row keys in the sample */
  uint64_t stride;      /* every stride-th row key was kept (1: all) */
  int n_queries;        /* queries judged */
  int n_cands;          /* candidates */
  plan_adv_cand *cands; /* ranked, best first (malloc) */
  int n_ix;             /* candidate indexes */
  plan_adv_index *ix;   /* over cands[0]'s key, lowest total cost first (malloc) */
} plan_advice;

/* Judge the candidate keys of table t (the table's own key among them) for the bound
** SELECTs qs[0..nq), each over t and without parameters. The keys are every order of t's
** PK columns (each DATE, TIME or TIMESTAMP column ASC and DESC, others in their declared
** direction) for up to 4 key columns, else the current key and each other key column moved
** to the front; then the single-column indexes over the first choice's key (above). *out
** is filled (free with plan_advice_free, also after an error).
** interrupt (or NULL): the caller's flag; once non-zero, the reads of the store stop with
** EXEC_INTERRUPT. EXEC_OK; EXEC_NOMEM, EXEC_TOOBIG, EXEC_INTERRUPT, or an error of the store
** (EXEC_IOERR, EXEC_CORRUPT) while sampling, with msg. */
int plan_advise(kv_db *db, const cat_table *t, const plan_select *const *qs, int nq,
                const atomic_int *interrupt, plan_advice *out, char *msg, size_t cap);
void plan_advice_free(plan_advice *a);

/* The key of candidate c over t as text: "STATION, TS DESC" into buf. */
void plan_adv_key_text(const cat_table *t, const plan_adv_cand *c, char *buf, size_t cap);

#endif /* ROWAN_PLANNER_ADVISE_H */
