/*
** planner/plan.h: the plan value of one statement, shared by the binder (planner/bind*.c),
** the SELECT planner (planner/select*.c), EXPLAIN (planner/explain*.c) and the executor
** (exec/). EXPLAIN prints exactly this struct and the executor runs exactly it (STYLE.md
** rule 8).
**
** A statement goes through two steps:
**  - binding (at prepare): names and types resolved against the catalog, expressions made
**    into plan_expr trees (planner/expr.h), aggregates collected, `*` expanded. The result
**    is a plan_bound, kept for the statement's life; it does not depend on parameter values.
**  - planning (at the first step after the parameters are bound): key ranges (planner/
**    keyrange.h), the pushed-down filter (planner/filter.h), families read, sort / top-n /
**    limit decisions and estimates. The result is a plan_query, rebuilt after each reset.
**
** Memory: every tree and string of a plan lives in a plan_arena (a bump allocator freed as
** a whole). Not here: evaluation (exec/eval.c), operators (exec/op*.c), kv access.
*/
#ifndef ROWAN_PLANNER_PLAN_H
#define ROWAN_PLANNER_PLAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "catalog/catalog.h"
#include "planner/expr.h"
#include "planner/keyrange.h"
#include "sql/ast.h"

/* ---- Arena ----------------------------------------------------------------------------- */
typedef struct plan_arena_chunk plan_arena_chunk;
typedef struct plan_arena {
  plan_arena_chunk *head; /* newest chunk; chunks are linked to older ones */
  size_t used;            /* bytes used in head */
  size_t cap;             /* bytes available in head */
  size_t total;           /* bytes allocated in all chunks (for limits and tests) */
  struct plan_arena_defer *defer; /* what to free with the arena (plan_arena_defer) */
} plan_arena;

/* Initialize an empty arena (no allocation yet). */
void plan_arena_init(plan_arena *a);
/* n zeroed bytes aligned for any type, or NULL on OOM. Freed only with the arena. */
void *plan_arena_alloc(plan_arena *a, size_t n);
/* A NUL-terminated copy of p[0..n), or NULL on OOM. */
char *plan_arena_strndup(plan_arena *a, const char *p, size_t n);
/* Free every chunk; the arena is empty again and reusable. */
void plan_arena_free(plan_arena *a);
/* Does a view whose query is q merge into the query using it: `SELECT * FROM x [WHERE c]`
** with x a table or a view of that form, down to a table (planner/bind_view.c)? Such a view
** may have columns of its own: they are stored in the rows of the table under it. */
bool plan_view_merges(const cat_catalog *cat, const sql_select *q);

/* Call fn(p) when a is freed or reset, newest first (a view's parsed query, which a bound
** statement in a points into, planner/bind_view.c). EXEC_OK, or EXEC_NOMEM after calling
** fn(p) at once. */
int plan_arena_defer(plan_arena *a, void (*fn)(void *), void *p);

/* ---- Bound statements -------------------------------------------------------------------- */
/* One aggregate call: its function (exec/func.h aggregate id), argument and DISTINCT. */
typedef struct plan_agg {
  int func;            /* aggregate id (exec/func.h) */
  bool star;           /* COUNT(*) */
  bool distinct;       /* COUNT(DISTINCT x) and the like */
  plan_expr *arg;      /* argument over the input row; NULL for COUNT(*) */
  plan_expr *arg2;     /* FIRST_VALUE/LAST_VALUE: the WITHIN GROUP (ORDER BY k) key; or NULL */
  cat_type type;       /* result type */
  char *text;          /* SQL text for EXPLAIN and column names ("COUNT(*)") */
  double frac;         /* PERCENTILE_CONT/DISC: the fraction p, 0..1 */
  bool desc;           /* PERCENTILE_CONT/DISC, FIRST/LAST_VALUE: WITHIN GROUP (ORDER BY x DESC) */
} plan_agg;

/* One ORDER BY term over the projected row. */
typedef struct plan_order {
  int slot;            /* slot in the projected row (visible or hidden column) */
  bool desc;           /* DESC */
  bool nulls_first;    /* NULLs before values (default: ASC first, DESC last) */
} plan_order;

struct plan_select;

/* One table of a FROM with joins (planner/bind_from.c), or a derived table (a subquery in
** FROM or a WITH name, planner/bind_subquery.c), which is also planned this way when it is
** the only FROM item. The joined row holds every table's columns, table after table in
** FROM order: column c of from[i] is slot from[i].base + c. */
typedef struct plan_from {
  const cat_table *table;  /* the table; for a derived table a stand-in made by the binder
                              (its result columns, no key, no family, no kv table) */
  const struct plan_select *sub; /* a derived table: its bound query; NULL for a table */
  bool setop_wrap;         /* sub is the set operation of a compound SELECT this query only
                              orders and limits (EXPLAIN prints no SUBQUERY line for it) */
  const char *name;        /* the name it is known by in the query: its alias, else its name */
  int base;                /* slot of its first column in the joined row */
  int join;                /* how it joins the tables before it: enum sql_join_kind; 0 for
                              the first table */
  plan_expr *on;           /* ON condition, USING made into equalities, over the joined row;
                              or NULL */
  uint32_t off;            /* byte offset of the table name (of the join's first word after
                              the first table) */
} plan_from;

/* A bound SELECT (also the query of UPSERT SELECT). */
typedef struct plan_select {
  const cat_table *table;  /* FROM table, NULL for SELECT without FROM and for joins */
  int n_from;              /* tables of a FROM with joins (2 or more), 1 for a lone derived
                              table; 0 otherwise */
  plan_from *from;         /* them, in FROM order, or NULL */
  int n_slots;             /* joins: columns of the joined row (sum of the tables') */
  const char **col_names;  /* column names by slot (EXPLAIN): the table's, or for joins
                              "NAME.COLUMN" per slot of the joined row; NULL without a table */
  plan_expr *where;        /* bound WHERE or NULL */
  int n_group;             /* GROUP BY expressions */
  plan_expr **group;       /* over the input row */
  int n_aggs;              /* aggregate calls found in the select list, HAVING, ORDER BY */
  plan_agg *aggs;          /* the calls */
  bool aggregate;          /* GROUP BY present or any aggregate used */
  plan_expr *having;       /* over the aggregate row (group slots, then PX_AGG); or NULL */
  const char **agg_names;  /* names of the aggregate row's slots (EXPLAIN) */
  int n_out;               /* visible result columns */
  int n_proj;              /* n_out plus hidden ORDER BY columns */
  plan_expr **proj;        /* projected expressions (over the input or aggregate row) */
  char **names;            /* result column names (n_proj) */
  bool distinct;           /* SELECT DISTINCT */
  int n_order;             /* ORDER BY terms */
  plan_order *order;       /* over the projected row */
  plan_expr **order_src;   /* ORDER BY expressions before projection (key-order check) */
  plan_expr *limit;        /* LIMIT expression (constant or parameter) or NULL */
  plan_expr *offset;       /* OFFSET expression or NULL */
  char *hint;              /* optimizer hint text or NULL */
  /* A set operation (planner/bind_subquery.c): setop is an enum sql_setop, set_left and
  ** set_right its operands (set_right a simple SELECT, set_left maybe another set
  ** operation); only n_out, n_proj (= n_out), names and proj (column nodes giving each
  ** result column's unified type) are set besides. Such a plan_select is only ever the sub
  ** of a plan_from. */
  int setop;               /* 0 for a SELECT */
  const struct plan_select *set_left, *set_right;
} plan_select;

/* A bound UPSERT. */
typedef struct plan_upsert {
  const cat_table *table;  /* target table */
  int n_cols;              /* target columns */
  int *cols;               /* their column indexes */
  int n_rows;              /* VALUES rows (0 for UPSERT SELECT) */
  plan_expr ***rows;       /* rows[r][c]: expression for target column c */
  plan_select *select;     /* UPSERT SELECT source, or NULL */
  const char **new_families; /* families its dynamic columns name that the table lacks:
                              created before it writes (exec/engine.c), then it is bound
                              again; table's copy has them with kv_id UINT32_MAX */
  int n_new_families;      /* their count */
} plan_upsert;

/* A bound DELETE. */
typedef struct plan_delete {
  const cat_table *table;  /* target table */
  const char **col_names;  /* column names by slot */
  plan_expr *where;        /* bound WHERE or NULL */
  plan_expr *limit;        /* LIMIT or NULL */
  char *hint;              /* optimizer hint text or NULL (as a SELECT's) */
} plan_delete;

/* An uncorrelated subquery in an expression (planner/bind_subquery.c): a scalar subquery or
** EXISTS. It is run once per execution, before the statement is planned (exec/engine_run.c),
** and its value is a parameter numbered after the statement's own (the PX_PARAM nodes that
** read it have func = its number, 1-based), so the planner uses it as it uses a bound
** parameter (a key range from k = (SELECT ...)). */
typedef struct plan_subquery {
  int kind;                /* SQL_E_SUBQUERY (one value; NULL without a row; an error with
                              two) or SQL_E_EXISTS (TRUE when it has a row) */
  plan_select *sel;        /* its query */
  int param;               /* the parameter number its value takes */
  uint32_t off;            /* byte offset of its '(' or EXISTS */
  bool key_list;           /* a WHERE term `k IN (SELECT ...)` on a primary-key column of
                              the one table read, run once so that its values are the key
                              range (plan_bind_opt, PLAN_BIND_NO_KEY_LISTS) */
} plan_subquery;

/* A correlated subquery run once per outer row (planner/bind_apply.c, exec/engine_apply.c),
** for the forms that are not decorrelated into joins (planner/bind_correlated.c): its query
** reads the outer row's values it names as parameters param .. param + n_outer - 1, set
** before each run; the PX_APPLY node of the outer expression holds the outer values (its
** args) and reads the result, which is kept while those values stay the same. */
typedef struct plan_apply {
  int kind;                /* SQL_E_SUBQUERY (one value), SQL_E_EXISTS (TRUE when it has a
                              row), SQL_E_IN (the rows as a hash set for IN_SET) */
  plan_select *sel;        /* its query */
  int param;               /* the first parameter number of its outer values (at the bind's
                              end, after the statement's own, its subqueries', its sequences'
                              and the apply environment's, plan_bound.apply_env) */
  int n_outer;             /* its outer values */
  plan_expr **nodes;       /* the PX_PARAM node reading each of them in sel */
  const char *outer_text;  /* the outer values as written ("T.G, T.H"), for EXPLAIN */
  struct plan_expr *node;  /* the PX_APPLY node that reads it */
  uint32_t off;            /* byte offset of its '(' or EXISTS */
} plan_apply;

/* A sequence a statement names (planner/bind_sequence.c): NEXT VALUE FOR or CURRENT VALUE
** FOR one sequence, however often the statement writes it (Phoenix's rule: every NEXT VALUE
** FOR s of one row gives the same value). Its value is a parameter numbered after the
** statement's own and its subqueries' (the PX_PARAM nodes that read it have func -1 - its
** index and value the text "NEXT VALUE FOR S" for EXPLAIN), which the executor sets before
** each row's projection (exec/sequence.c): the NEXT ones first, then the CURRENT ones. */
typedef struct plan_seqref {
  const char *name;        /* the sequence */
  bool next;               /* NEXT VALUE FOR (else CURRENT VALUE FOR) */
  int param;               /* the parameter number its value takes */
  uint32_t off;            /* byte offset of its first reference */
  plan_expr **nodes;       /* the PX_PARAM nodes reading it (numbered at the bind's end) */
  int n_nodes;             /* their count */
} plan_seqref;

typedef struct plan_bound {
  int kind;                /* enum sql_stmt_kind */
  bool explain;            /* EXPLAIN */
  bool analyze;            /* EXPLAIN ANALYZE */
  bool json;               /* EXPLAIN (FORMAT JSON): one row, the plan as a JSON document */
  plan_select *select;     /* SELECT */
  plan_upsert *upsert;     /* UPSERT */
  plan_delete *del;        /* DELETE */
  int n_params;            /* highest parameter number */
  cat_type *param_types;   /* inferred type of each parameter (id 0: unknown) */
  int n_subs;              /* subqueries run once, in the order to run them (an inner one
                              before the one that holds it) */
  plan_subquery *subs;     /* them */
  int n_tables;            /* table references bound (each FROM item naming a table) */
  int64_t as_of_ms;        /* AS OF: read as of this cell timestamp (ms, UTC); 0 = now */
  int n_seqs;              /* sequence references (NEXT / CURRENT VALUE FOR), parameters
                              n_params + n_subs + 1 ... */
  plan_seqref *seqs;       /* them */
  int n_applies;           /* correlated subqueries run per outer row (plan_apply) */
  plan_apply *applies;     /* them */
  bool key_lists;          /* some subquery is a key_list (binding again with
                              PLAN_BIND_NO_KEY_LISTS makes it a semi join) */
  int apply_env;           /* with applies: the parameter that carries the run's apply
                              environment (exec/engine_apply.c), numbered after the
                              sequences'; their outer values follow it */
} plan_bound;

/* Bind statement `st` (parsed from sql) against cat into *out, allocating in arena.
** Returns EXEC_OK or EXEC_ERROR (unknown table/column/function, type mismatch, misuse of an
** aggregate) with msg[0..cap) naming the name and "at line L, column C", and *err_off the
** byte offset (or -1); EXEC_NOMEM. DDL and transaction statements are not bound here. */
/* plan_bind with options: PLAN_BIND_NO_KEY_LISTS binds every `k IN (SELECT ...)` WHERE term
** as a semi join (the executor's fallback when a key list's values pass the join memory: a
** semi join spills). */
enum { PLAN_BIND_NO_KEY_LISTS = 1 };
int plan_bind_opt(const cat_catalog *cat, const sql_stmt *st, const char *sql,
                  plan_arena *arena, plan_bound *out, char *msg, size_t cap, int *err_off,
                  unsigned flags);
int plan_bind(const cat_catalog *cat, const sql_stmt *st, const char *sql, plan_arena *arena,
              plan_bound *out, char *msg, size_t cap, int *err_off);

/* Format " at line L, column C" of byte offset off of sql into buf. */
void plan_position(const char *sql, size_t off, char *buf, size_t cap);

/* ---- Plans ------------------------------------------------------------------------------ */
#define PLAN_MAX_FAMILIES 16

/* One access path the planner costed for a query: the table itself or one of its indexes
** (planner/index_choice.c has the cost formula; EXPLAIN lists every one it considered). */
typedef struct plan_access {
  const cat_index *index;  /* the index, or NULL for the table itself */
  int kind;                /* enum plan_scan_kind of its key ranges */
  bool covered;            /* every column the query needs is in it (always for the table) */
  bool ordered;            /* it delivers rows in ORDER BY order: no sort */
  uint64_t rows;           /* estimated rows read from it */
  uint64_t lookups;        /* estimated point lookups back into the table (uncovered) */
  double cost;             /* estimated cost */
  bool chosen;             /* the plan uses this path */
} plan_access;

/* The leading key columns that make a skip scan's prefix (planner/skip_prefix.h). */
typedef struct plan_skip_key {
  const cat_key_col *cols; /* the table's key columns */
  int n;                   /* how many lead the key: the prefix */
} plan_skip_key;

/* The scan step of a plan. */
typedef struct plan_scan {
  const cat_table *table;           /* scanned table */
  plan_scan_ranges ranges;          /* key ranges (owned; freed with the plan) */
  bool have_ranges;                 /* ranges was filled by plan_key_ranges */
  bool reverse;                     /* descending key order */
  uint64_t kv_limit;                /* rows the kv scan hands out at most; 0 = no limit */
  int n_families;                   /* families read */
  int families[PLAN_MAX_FAMILIES];  /* indexes into table->families */
  uint32_t family_ids[PLAN_MAX_FAMILIES]; /* their kv ids */
  bool key_family;                  /* the hidden key family "_k" is among them */
  const char *key_family_why;       /* why "_k" is read (EXPLAIN) */
  int cover_family;                 /* > 0: "_k" is not read because every row has a cell of
                                       the table's own columns in this family (its row
                                       cover); read then holds every such column of it */
  bool *need;                       /* per table column: decoded for the query */
  bool *read;                       /* per table column: its cells are read (need, plus
                                       columns of the pushed filter): the qualifier
                                       projection of each family */
  void *filter;                     /* pushed-down filter (planner/filter.h) or NULL */
  char *filter_text;                /* its text for EXPLAIN, or NULL */
  plan_expr *residual;              /* AND of terms evaluated after decoding, or NULL */
  plan_expr *pushed;                /* AND of terms in the pushed filter, or NULL */
  uint64_t est_rows, est_bytes;     /* estimate of rows and bytes read */
  uint32_t est_family;              /* kv id of the family est_rows was counted in */
  uint64_t total_rows, total_bytes; /* the table's totals */
  /* Index scans (planner/index_choice.c). With index set, ranges, filter, families and the
  ** estimates are over the index's kv table (family_ids are its "_k" and "0"; families[]
  ** then holds 0 and 1 for them); `residual` is evaluated after the lookup. */
  const cat_index *index;           /* the index scanned instead of the table, or NULL */
  cat_key_col *ix_key_cols;         /* its key schema: indexed values, then the PK (arena) */
  int ix_n_keys;                    /* indexed values before the PK columns */
  bool lookup;                      /* uncovered: each index row looks its data row up */
  plan_expr *ix_filter;             /* terms over index columns the pushed filter does
                                       not answer, evaluated before the lookup, or NULL */
  int n_lookup_families;            /* families the lookup reads ("_k" first) */
  uint32_t lookup_family_ids[PLAN_MAX_FAMILIES]; /* their kv ids */
  int lookup_families[PLAN_MAX_FAMILIES];        /* indexes into table->families */
  bool *lookup_need;                /* per table column: decoded from the looked-up row */
  uint64_t est_lookups;             /* estimated lookups */
  int n_access;                     /* access paths costed (0: no index was considered) */
  plan_access *access;              /* them, the chosen one marked (arena) */
  const char *hint_note;            /* what the optimizer hint did, or why it was ignored */
  bool no_columnar;                 /* the storage backend cannot run the columnar aggregate
                                       (no KV_BE_EXT_COLUMNAR or no local store under it:
                                       HBase): planner/colagg.h refuses, so EXPLAIN shows the
                                       row-way plan (its chunks) that runs */
  const char *hint_unknown;         /* the hint's words nothing acts on, and why
                                       (planner/hint.h), or NULL */
  /* Skip scan by prefix (ranges.kind PLAN_SCAN_PREFIX_SKIP, planner/skip_prefix.h): ranges
  ** are over key columns skip_key.n + 1 .. n, appended by kv to each prefix (the first
  ** skip_key.n key columns) it finds, inside skip_outer's ranges when it has any. */
  plan_skip_key skip_key;           /* the prefix's key columns (kv's prefix_len context) */
  plan_scan_ranges skip_outer;      /* the ranges over the prefix columns that bound the
                                       prefixes (kind NOTHING and no ranges: none); owned */
  uint32_t skip_prefixes;           /* prefixes found at plan time */
  bool skip_more;                   /* more than skip_probed (a hint forced it) */
  uint32_t skip_probed;             /* prefixes counted at most at plan time */
  const uint8_t **skip_pfx;         /* the prefixes found (arena), for the estimates */
  uint32_t *skip_pfx_len;           /* their lengths */
  const char *skip_explain;         /* the key bounds, "*" for the leading column (arena) */
  bool prefix_first;                /* the skip scan hands out only the first row of each
                                       prefix that the pushed filter passes (kv's
                                       rows_per_prefix 1): the query needs no other
                                       (planner/skip_prefix.h plan_prefix_first) */
  int64_t ts_min, ts_max;           /* the kv time range [ts_min, ts_max) in ms that terms on
                                       the ROW_TIMESTAMP column give (planner/time_range.h);
                                       both 0: none; ts_max 0 alone: no upper bound */
  uint16_t salt_lo, salt_hi;        /* a salted scan's chunk (exec/op_parallel.c): only the
                                       buckets [salt_lo, salt_hi) are read; both 0: every
                                       bucket (the planner leaves them 0) */
} plan_scan;

struct plan_join_node; /* planner/plan_join.h */

/* What follows the scan in a SELECT plan. */
struct plan_actuals;

typedef struct plan_query {
  const plan_select *sel;  /* the bound query */
  bool has_scan;           /* false for SELECT without FROM (one empty row) */
  plan_scan scan;          /* the scan */
  bool stream_agg;         /* GROUP BY on a key prefix: aggregate as rows stream */
  bool sort;               /* a sort is needed */
  bool topn;               /* sort with a top-n heap of limit + offset rows */
  int64_t limit;           /* LIMIT value, -1 for none */
  int64_t offset;          /* OFFSET value, 0 for none */
  bool limit_pushed;       /* limit + offset went to the kv scan */
  bool direct;             /* the scan's rows can decode straight into the projected row: a
                              table scan, no residual filter, aggregate, sort or DISTINCT, a
                              projection of distinct plain columns covering every column the
                              scan decodes (exec/op_query.c skips its project step) */
  int16_t *slots;          /* direct: per table column, its place in the projection (-1:
                              none); arena */
  struct plan_join_node *join; /* a SELECT over several tables: the join tree whose rows
                              (sel->n_slots slots) feed the steps after the scan (has_scan
                              false); NULL otherwise (planner/plan_join.h) */
  plan_expr *join_filter;  /* joins: the WHERE terms checked after the whole tree, or NULL */
  const char *join_order;  /* joins put in another order than FROM's (planner/join.c): the
                              order and the FROM order, for EXPLAIN; NULL otherwise */
  int n_subs;              /* a statement's plan: the subqueries run once before it
                              (exec/engine_sub.c), for EXPLAIN; 0 otherwise */
  const struct plan_query *subs; /* their plans (the run's memory) */
  const struct plan_actuals *sub_acts; /* their figures */
  struct plan_setop *setop; /* sel is a set operation: its plan (planner/plan_setop.h), and
                              nothing else of this struct is used; NULL otherwise */
  const struct plan_par *par; /* the scan cut into chunks (planner/parallel.h), set by the
                              executor for a large table scan (exec/parallel.h); NULL: one
                              serial scan, as EXPLAIN always showed it */
  int colagg_threads;      /* chunks the columnar aggregate evaluates at once: the session's
                              scan threads once set, 1..KV_COLAGG_MAX_THREADS, set by the
                              executor with par (exec_par_attach); 0: PLAN_COLAGG_THREADS */
} plan_query;

#endif /* ROWAN_PLANNER_PLAN_H */
