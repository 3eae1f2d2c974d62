/*
** planner/keyrange.h: key-range derivation, Rowan's WhereOptimizer. It turns a bound WHERE
** clause into the key ranges a scan of a table (or of an index) reads, and says which
** predicates the ranges answer fully and which remain to be filtered.
**
** Rules (DESIGN.md "planner/", issue 5): split WHERE into AND terms; for each key column in
** order, derive point sets and intervals from =, IN, <, <=, >, >=, BETWEEN, LIKE 'prefix%'
** (with ESCAPE), IS NULL, row value constructors over a key prefix, and OR of such terms;
** pinned columns (one value or an IN list) extend the key prefix, the first range ends it;
** later columns may still narrow a skip scan. DESC columns swap bounds. Literals are
** coerced at the bound (INTEGER k > 5.5 is k >= 6; k < -2.5 is k <= -3); an out-of-range
** literal gives an empty or unbounded side, never a wrapped value. Contradictions give
** NOTHING. The number of ranges is capped at PLAN_MAX_SKIP_RANGES; past it the derivation
** falls back to fewer key columns (ultimately one range over the common prefix) and keeps
** the dropped predicates in the residual.
**
** The result is an immutable value (Phoenix's ScanRanges; STYLE.md rule 7): the scan kind,
** the sorted, non-overlapping encoded ranges (ready for kv_scan_options.ranges), the key
** bounds in column values for EXPLAIN, the terms the ranges answered (never re-checked) and
** the residual. It reads no data and knows nothing of kv/ beyond the byte order of keys.
*/
#ifndef ROWAN_PLANNER_KEYRANGE_H
#define ROWAN_PLANNER_KEYRANGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "catalog/keycodec.h"
#include "planner/expr.h"

#define PLAN_MAX_SKIP_RANGES 50000 /* ranges of one skip scan (Phoenix caps its IN-list
                                      expansion the same way) */

/* ORDER PLAN_SCAN_KIND: plan_scan_kind_name() has one entry per kind. */
enum plan_scan_kind {
  PLAN_SCAN_NOTHING = 0, /* contradiction: reads nothing */
  PLAN_SCAN_POINT = 1,   /* every range is one full key: POINT LOOKUP ON n KEYS */
  PLAN_SCAN_RANGE = 2,   /* one range: RANGE SCAN */
  PLAN_SCAN_SKIP = 3,    /* several ranges: SKIP SCAN ON n RANGES */
  PLAN_SCAN_FULL = 4,    /* no bound on the leading key column: FULL SCAN */
  PLAN_SCAN_PREFIX_SKIP = 5 /* no bound on the leading key column, ranges over the later
                               ones read per leading prefix (planner/skip_prefix.h); never
                               made by plan_key_ranges */
};
const char *plan_scan_kind_name(int kind); /* "POINT LOOKUP", ... */

/* One encoded key range; a NULL start (end) is unbounded. */
typedef struct plan_key_range {
  uint8_t *start;    /* owned */
  size_t start_len;  /* bytes */
  bool start_incl;   /* start bound inclusive */
  uint8_t *end;      /* owned */
  size_t end_len;    /* bytes */
  bool end_incl;     /* end bound inclusive */
} plan_key_range;

/* The key schema the ranges are for: a table's PK, or an index's key. */
typedef struct plan_key_schema {
  const cat_key_col *cols; /* key columns in key order */
  const int *slots;        /* for each key column, the PX_COLUMN slot that refers to it */
  const char *const *names;/* for each key column, its name (EXPLAIN text) */
  int n;                   /* number of key columns */
} plan_key_schema;

typedef struct plan_scan_ranges {
  int kind;                 /* enum plan_scan_kind */
  plan_key_range *ranges;   /* sorted ascending, non-overlapping; owned */
  uint32_t n_ranges;        /* 0 for NOTHING and FULL */
  int prefix_cols;          /* leading key columns pinned to points */
  int bound_cols;           /* key columns the ranges constrain */
  char *explain;            /* key bounds in column values with [ ] ( ) marks, e.g.
                               "['Dongsi', *] .. ['Dongsi', '2016-01-01 00:00:00')"; owned;
                               NULL from plan_key_ranges_noexplain */
  const plan_expr **key_terms; /* WHERE terms the ranges answer fully; not owned */
  uint32_t n_key_terms;     /* count */
  const plan_expr **residual; /* WHERE terms left to filter (AND of them); not owned */
  uint32_t n_residual;      /* count */
} plan_scan_ranges;

/* Derive the ranges for `where` (NULL = no WHERE: FULL SCAN) over `schema`. params holds
** the bound parameter values (PX_PARAM n is params[n-1]); a parameter without a value
** counts as unknown (its term stays residual). On success *out is filled (free with
** plan_scan_ranges_free). Errors (EXEC_* codes of exec/engine.h with a message in
** msg[0..cap)): EXEC_NOMEM, EXEC_TOOBIG (a key over CAT_KEY_MAX). */
int plan_key_ranges(const plan_key_schema *schema, const plan_expr *where,
                    const cat_value *params, int n_params, plan_scan_ranges *out,
                    char *msg, size_t cap);
/* plan_key_ranges for a plan that is run and never explained (the re-plan of a prepared
** statement, planner/plan_reuse.h): the same ranges, kind, terms and residual, but no
** EXPLAIN text (out->explain stays NULL). */
int plan_key_ranges_noexplain(const plan_key_schema *schema, const plan_expr *where,
                              const cat_value *params, int n_params, plan_scan_ranges *out,
                              char *msg, size_t cap);
void plan_scan_ranges_free(plan_scan_ranges *r);

/* ---- Internal to planner/keyrange*.c ----------------------------------------------------
** keyrange.c turns WHERE terms into boxes (per-column interval lists over ASC-encoded
** positions); keyrange_expand.c expands boxes into sorted, merged key ranges. Nothing
** outside these two files defines PLAN_KEYRANGE_INTERNAL. */
#ifdef PLAN_KEYRANGE_INTERNAL
#include <stddef.h>

typedef struct plan_kr_chunk {
  struct plan_kr_chunk *next; /* older chunk */
  size_t used, cap;   /* bytes used / available in data */
  max_align_t data[]; /* payload */
} plan_kr_chunk;

typedef struct plan_kr_arena {
  plan_kr_chunk *head; /* newest chunk */
} plan_kr_arena;

/* ---- Positions, intervals, sets, boxes ----------------------------------------------- */
enum { PLAN_KR_NEG_INF, PLAN_KR_BEFORE, PLAN_KR_AFTER, PLAN_KR_POS_INF };

typedef struct plan_kr_pos {
  uint8_t kind;       /* PLAN_KR_NEG_INF .. PLAN_KR_POS_INF */
  bool full;          /* b is a whole value's encoding (not a LIKE prefix) */
  const uint8_t *b;   /* bytes (arena) */
  uint32_t len;       /* byte count */
  const char *text;   /* the value as a literal, for EXPLAIN */
} plan_kr_pos;

typedef struct plan_kr_iv {
  plan_kr_pos lo, hi; /* [lo, hi) */
} plan_kr_iv;

typedef struct plan_kr_set {
  bool all;   /* unconstrained */
  plan_kr_iv *v;     /* sorted, disjoint intervals (arena) */
  uint32_t n; /* count; 0 with !all = empty */
} plan_kr_set;

typedef struct plan_kr_box {
  plan_kr_set *cols;  /* one set per key column (arena) */
  uint64_t *ct; /* per key column: bit j set if top-level term j constrains it in this box
                   (while one term is being built: 1 = constrained) */
} plan_kr_box;

typedef struct plan_kr_boxes {
  plan_kr_box *v;         /* boxes (arena) */
  uint32_t n;      /* count */
} plan_kr_boxes;

typedef struct plan_kr_ctx {
  const plan_key_schema *s; /* key schema */
  const cat_value *params;  /* bound parameters */
  int n_params;             /* count */
  plan_kr_arena ar;                 /* everything temporary */
  cat_key_col *asc;         /* per key column: its ASC codec view (arena) */
  uint8_t *buf;             /* CAT_KEY_MAX encoding scratch */
  bool no_explain;          /* make no EXPLAIN text (plan_key_ranges_noexplain) */
  int rc;                   /* first error (EXEC_*) */
  char *msg;                /* caller's message buffer */
  size_t cap;               /* its size */
} plan_kr_ctx;

typedef struct plan_kr_tinfo {
  bool exact;       /* the boxes answer the term fully */
  uint64_t cols;    /* key columns the term constrains */
} plan_kr_tinfo;

/* Arena allocation (max_align_t aligned); NULL when out of memory. Freed all at once. */
void *plan_kr_alloc(plan_kr_arena *a, size_t n);
void plan_kr_arena_free(plan_kr_arena *a);
/* Record the first error (EXEC_* code and message) in c; returns -1. */
int plan_kr_fail(plan_kr_ctx *c, int rc, const char *m);
/* Order of two positions: <0, 0, >0. */
int plan_kr_pos_cmp(const plan_kr_pos *a, const plan_kr_pos *b);
/* True if v holds exactly one whole value; if every interval of s does. */
bool plan_kr_iv_is_point(const plan_kr_iv *v);
bool plan_kr_set_all_points(const plan_kr_set *s);
/* An empty set with room for n intervals (arena); NULL on no memory (c->rc set). */
plan_kr_set *plan_kr_set_new(plan_kr_ctx *c, uint32_t n);
/* A box with every column unconstrained; 0 or -1 (no memory). */
int plan_kr_box_init(plan_kr_ctx *c, plan_kr_box *b);
/* Room for n boxes in r (r->n = 0); 0 or -1. */
int plan_kr_boxes_alloc(plan_kr_ctx *c, plan_kr_boxes *r, uint32_t n);
/* r = a AND b (cross product, empty boxes dropped): 0, 1 if it would pass the box cap (r
** untouched), -1 on error. */
int plan_kr_boxes_and(plan_kr_ctx *c, const plan_kr_boxes *a, const plan_kr_boxes *b,
                      plan_kr_boxes *r);
/* Boxes for one WHERE term: 1 extracted (*out, *ti), 0 not extractable, -1 error. */
int plan_kr_term_boxes(plan_kr_ctx *c, const plan_expr *e, plan_kr_boxes *out,
                       plan_kr_tinfo *ti);
/* n bytes of p copied into the arena; NULL on no memory. */
const uint8_t *plan_kr_copy_bytes(plan_kr_ctx *c, const uint8_t *p, size_t n);
/* Derive the ranges of the AND of terms[0..nt) into out (keyrange_expand.c); errors in c. */
void plan_kr_derive(plan_kr_ctx *c, const plan_expr *const *terms, uint32_t nt,
                    plan_scan_ranges *out);
#endif /* PLAN_KEYRANGE_INTERNAL */

#endif /* ROWAN_PLANNER_KEYRANGE_H */
