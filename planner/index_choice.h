/*
** planner/index_choice.h: the index-choice step of SELECT planning (planner/index_choice.c)
** and the key-order helpers it shares with planner/select.c. Internal to planner/: the
** executor and EXPLAIN read the result in plan_scan (planner/plan.h), not these functions.
**
** Not here: key-range derivation (planner/keyrange.h), the pushed filter (planner/filter.h),
** index row encoding (exec/index.h).
*/
#ifndef ROWAN_PLANNER_INDEX_CHOICE_H
#define ROWAN_PLANNER_INDEX_CHOICE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kv/kv.h"
#include "planner/plan.h"

/* The cost rule's units (index_choice.c; the row-key advisor applies it too): one row read
** sequentially is 1. */
#define PLAN_COST_LOOKUP 8.0 /* one point lookup back into the table */
#define PLAN_COST_SORT 0.5   /* sorting one row */

/* ORDER BY of s served by a scan over a key whose columns are slots[0..n) (input-row slots)
** with codec view kc[0..n), the first `pinned` of them fixed to one value by the ranges:
** 0 no (a sort is needed), 1 in forward key order, 2 in reverse key order. An aggregate
** query qualifies only when it streams (stream_agg). */
int plan_key_order_of(const plan_select *s, const int *slots, const cat_key_col *kc, int n,
                      int pinned, bool stream_agg);

/* Leading key columns (of the key slots[0..n)) that ranges r pin to one single value: every
** pinned column when r has one range, else those pinned by a "column = constant" key term
** (an IN list pins a column to several values: the rows of each come one after another, so
** the columns after it are not in order across them). */
int plan_pinned_one(const plan_scan_ranges *r, const int *slots, int n);

/* GROUP BY of s is exactly the first n_group columns of the key slots[0..n) (any order): rows
** arrive grouped. */
bool plan_group_on_prefix(const plan_select *s, const int *slots, int n);

/* Rows with equal GROUP BY values of s arrive one after another in the order of the key
** slots[0..n), though the GROUP BY is not a key prefix: every term is a key column or the
** date rounding ROUND/FLOOR/CEIL/TRUNC(column, constant unit[, constant multiplier]) of a
** DATE or TIMESTAMP key column (never decreasing in the column, NULL for NULL), and every
** key column before the last one a term reads is itself a term. E.g. GROUP BY STATION,
** TRUNC(TS, 'DAY') over the key (STATION, TS [DESC]). Streams the aggregate, not the order. */
bool plan_group_contiguous(const plan_select *s, const int *slots, int n);

/* The AND of terms[0..n) (arena nodes; terms themselves shared), NULL for n == 0 or OOM. */
plan_expr *plan_and_terms(plan_arena *A, const plan_expr *const *terms, uint32_t n);

/* Set cols[c] for every column slot c that e references (e may be NULL). */
void plan_mark_cols(const plan_expr *e, bool *cols);

/* Plans this thread makes from now on read as of ms (AS OF; 0 = now): then no secondary
** index is considered and the scan's note says so. An index's rows are written at commit
** time, so they need not reflect the past: not a ROW_TIMESTAMP table's rows written with
** older timestamps, nor rows from before the index was built. Set by exec/as_of.c around
** each statement step. */
void plan_index_set_as_of(int64_t ms);
/* The read time set by plan_index_set_as_of on this thread (0 = now): the columnar
** aggregate pushdown, which reads the present only, is not planned under one
** (planner/colagg.c). */
int64_t plan_as_of(void);

/* Consider the ACTIVE indexes of s->table for plan q, whose table scan q->scan is built
** (with its stream_agg and *dir from the table's key): hints in s->hint (INDEX(t idx ...)
** forces one of the named indexes, NO_INDEX forbids all), candidates costed, and when an
** index wins q->scan is replaced by the index scan (the table scan freed) and
** q->stream_agg / *dir follow it. used: columns needed after the scan (projection, GROUP
** BY, aggregate arguments). Fills q->scan.access / n_access / hint_note. EXEC_OK, or
** EXEC_NOMEM / EXEC_TOOBIG with msg; on error q->scan stays a valid table scan. */
int plan_index_choose(kv_backend *be, const plan_select *s, const bool *used,
                      const cat_value *params, int n_params, plan_arena *A, plan_query *q,
                      int *dir, char *msg, size_t cap);

#endif /* ROWAN_PLANNER_INDEX_CHOICE_H */
