/*
** planner/hint.h: the words of an optimizer hint (the comment that starts with a plus sign
** after SELECT, UPSERT or DELETE, as in Phoenix) that no part of the planner acts on, for
** EXPLAIN's HINT lines, so a misspelt or unsupported hint is reported, never silently
** dropped. The hints themselves are read where they act (INDEX and NO_INDEX:
** planner/index_choice.c; SKIP_SCAN, RANGE_SCAN and NO_SKIP_SCAN: planner/skip_prefix.h;
** NO_PUSHDOWN: exec/op_colagg.c; SERIAL: exec/op_parallel.c;
** NO_CHILD_PARENT_JOIN_OPTIMIZATION: planner/join_cp.c, for joins only); a new hint is added
** to the list in planner/hint.c with them.
*/
#ifndef ROWAN_PLANNER_HINT_H
#define ROWAN_PLANNER_HINT_H

#include "planner/plan.h"

/* The note for the words of hint text `hint` (NULL: none) that are not hints Rowan acts on:
** "FOO ignored: not a hint Rowan knows (...)", or for a Phoenix hint Rowan does not act on
** (SMALL, NO_CACHE, ...) "SMALL ignored: a Phoenix hint with no effect in Rowan";
** several joined by "; ". In arena A; NULL when every word is known (or out of memory).
** A word's parenthesized arguments (INDEX(T IX)) are skipped. */
const char *plan_hint_unknown(plan_arena *A, const char *hint);

/* True when hint text `hint` (NULL: none) holds the word `word` (case-insensitive, outside
** any word's parenthesized arguments). */
bool plan_hint_has(const char *hint, const char *word);

/* Hint text `hint` with every occurrence of the word `word` taken out (in arena A), or NULL
** when no other word is left (or hint is NULL, or out of memory). */
const char *plan_hint_without(plan_arena *A, const char *hint, const char *word);

/* EXPLAIN's HINT notes for the optimizer hint `hint` (NULL: none) of a join: that ORDERED
** applied (the FROM order kept, planner/join.c); that NO_CHILD_PARENT_JOIN_OPTIMIZATION
** applied; that USE_SORT_MERGE_JOIN applied (merged: a
** join of the tree is a sort-merge join) or was ignored; then the rest of the hint, on one
** line, ignored (no table of a join takes the other hints yet), rather than dropped unseen.
** Up to 4 notes into notes (strings static or in A); their count. */
int plan_join_hint_notes(plan_arena *A, const char *hint, bool merged, const char *notes[4]);

#endif /* ROWAN_PLANNER_HINT_H */
