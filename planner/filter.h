/*
** planner/filter.h: the pushed-down typed filter. WHERE terms the key ranges do not answer
** (planner/keyrange.h) are compiled into a plan_filter: a small typed expression tree over
** column references and constants, the constants already encoded the way the row stores
** them (cell values with catalog/valcodec.h, key columns with catalog/keycodec.h). kv/ runs
** it through its filter callback (kv_filter_fn) on each assembled kv_row, so rows are
** rejected on their encoded bytes, before the executor decodes anything.
**
** What it evaluates (SQL three-valued logic; a row passes only if the result is TRUE):
**   column op constant (=, <>, <, <=, >, >=, either side), column [NOT] IN (constants),
**   column [NOT] BETWEEN constant AND constant, column IS [NOT] NULL, column [NOT] LIKE
**   constant pattern [ESCAPE constant] on CHAR/VARCHAR (case-sensitive; ILIKE is not
**   pushed), and AND / OR / NOT of those; constants may be parameters bound at build time.
** Column values:
**   - a non-key column is the newest (first) cell of its family id and qualifier in the row;
**     no cell means NULL;
**   - a key column is located in the row key by skipping the columns before it
**     (cat_key_skip_col); a NULL indicator means NULL; DESC columns compare inverted.
** Comparisons are on encoded bytes of the column's own type (both encodings are
** order-preserving, so numbers compare as numbers). A constant that has no exact encoding in
** the column's type is folded at build time (INTEGER col > 5.5 is col >= 6; col = 5.5 is
** FALSE for every non-NULL col; a constant beyond the type's range makes the comparison
** TRUE or FALSE for every non-NULL value). A row whose bytes do not decode fails the filter
** (the executor's own decode reports the corruption).
**
** What is not pushed (returned in not_pushed, for the executor to evaluate): expressions
** over columns (a + 1 > 5), comparisons between two columns, functions, ILIKE, a DECIMAL
** column compared with a FLOAT/DOUBLE constant, a BIGINT-like column compared with a
** floating constant of magnitude >= 2^53, parameters without a value, row value
** constructors, and any AND/OR/NOT containing one of these (an AND term is split, so
** its pushable conjuncts are still pushed when the WHERE is given as separate terms).
**
** Bound folding (plan_fold_compare) is shared with key-range derivation.
** Not here: evaluation of decoded rows (exec/), choice of families (planner/plan.c).
*/
#ifndef ROWAN_PLANNER_FILTER_H
#define ROWAN_PLANNER_FILTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "catalog/catalog.h"
#include "catalog/keycodec.h"
#include "catalog/types.h"
#include "kv/backend.h"
#include "kv/kv.h"
#include "planner/expr.h"

typedef struct plan_filter plan_filter;

/* Where one PX_COLUMN slot lives in the kv row. */
typedef struct plan_filter_col {
  cat_type type;      /* the column's type */
  int key_pos;        /* >= 0: position in the row key; -1: a cell */
  uint32_t family_id; /* cell columns: the kv family id */
  uint8_t qual[4];    /* cell columns: the qualifier bytes */
  uint32_t qual_len;  /* cell columns: qualifier length (1..4) */
} plan_filter_col;

/* The layout of the rows a scan hands out: a table's, or an index table's. */
typedef struct plan_filter_schema {
  const cat_key_col *key_cols; /* the row-key columns in key order */
  int n_key;                   /* number of key columns */
  const plan_filter_col *cols; /* per PX_COLUMN slot */
  int n_cols;                  /* number of slots */
  int key_skip;                /* bytes before the first key column: 1 for a salted table's
                                  salt byte (catalog/salt.h), else 0 */
} plan_filter_schema;

/* Build the filter for the AND of terms[0..n) over table t (PX_COLUMN slot = the table's
** column index; key columns located by pk_pos, others by family kv_id and
** cat_column_qualifier; a term on a dynamic column, cat_column.dyn_qual, is not pushed).
** params holds the bound parameter values (PX_PARAM n is params[n-1]); a parameter beyond
** n_params is unknown (its term is not pushed).
** Outputs:
**   *out: the filter (free with plan_filter_free), or NULL when no term was pushed.
**   *not_pushed / *n_not_pushed: the terms that were not pushed, in their given order, in
**     an array the caller frees with free() (NULL when none); the terms themselves stay
**     owned by the caller. Each term is either pushed whole or not at all.
** Returns EXEC_OK, or EXEC_NOMEM with a message in msg[0..cap) (outputs then NULL / 0). */
int plan_filter_build(const cat_table *t, const plan_expr *const *terms, uint32_t n,
                      const cat_value *params, int n_params, plan_filter **out,
                      const plan_expr ***not_pushed, uint32_t *n_not_pushed, char *msg,
                      size_t cap);

/* The same over an explicit layout (for index tables). The schema's arrays are copied. */
int plan_filter_build_schema(const plan_filter_schema *schema, const plan_expr *const *terms,
                             uint32_t n, const cat_value *params, int n_params,
                             plan_filter **out, const plan_expr ***not_pushed,
                             uint32_t *n_not_pushed, char *msg, size_t cap);

/* kv_filter_fn-compatible: filter is a plan_filter *. True if the row passes (the AND of the
** pushed terms is TRUE on it). Thread-compatible: evaluation does not modify the filter
** (no allocation, no shared scratch), so one filter may serve several scans. */
bool plan_filter_eval(void *filter, const kv_row *row);

/* The filter as text, one pushed term after another joined by " AND ", each comparison
** followed by its column type, e.g. "TEMP > 30.0 (DOUBLE) AND CITY LIKE 'B%' (VARCHAR)".
** col_names is indexed by slot (NULL prints $slot). Writes at most cap bytes
** (NUL-terminated when cap > 0); returns the full length, as snprintf. */
size_t plan_filter_explain(const plan_filter *f, const char *const *col_names, char *buf,
                           size_t cap);

/* Number of terms pushed into f (0 for NULL). */
uint32_t plan_filter_term_count(const plan_filter *f);

/* Free f; NULL is a no-op. */
void plan_filter_free(plan_filter *f);

/* ---- Bound folding (shared with planner/keyrange.c) ----------------------------------- */
/* Outcomes of plan_fold_compare. */
enum plan_fold {
  PLAN_FOLD_CMP = 0,   /* col op' x with x of the column's type (exact) */
  PLAN_FOLD_TRUE = 1,  /* TRUE for every non-NULL column value */
  PLAN_FOLD_FALSE = 2, /* FALSE for every non-NULL column value */
  PLAN_FOLD_NONE = 3,  /* cannot fold (incomparable types, unknown precision): keep the
                          comparison for the executor */
  PLAN_FOLD_NULL = 4   /* the constant is NULL: the comparison is never TRUE */
};

/* Fold "col op c" (op: SQL_OP_EQ, NE, LT, LE, GT, GE; column on the left) for a column of
** type *t into an equivalent comparison on a value of exactly that type. On PLAN_FOLD_CMP,
** *op_out is the (possibly changed) operator and *x the value, checked against t's limits
** (cat_value_check); strings in *x point into c's bytes or into buf[0..cap) (cap >= 64).
** Rules: INTEGER col > 5.5 -> col >= 6; col < -2.5 -> col <= -3; col = 5.5 -> FALSE;
** col <> 5.5 -> TRUE; a constant above the type's maximum: col < c TRUE, col > c FALSE (and
** the mirror below the minimum); col = 'longer than n' on a VARCHAR(n)/CHAR(n)/VARBINARY(n)
** column -> FALSE (<> TRUE); FLOAT columns fold to the neighbouring float; NaN is above
** every number. CHAR constants lose trailing spaces. For CHAR, VARCHAR and VARBINARY
** columns *x has length 0 (no limit), and for a CHAR column it is a VARCHAR value (the same
** encoding, keeping a VARCHAR constant's trailing spaces as comparison does): encode it
** with the column's codec viewed as VARCHAR. Never fails otherwise. */
int plan_fold_compare(const cat_type *t, int op, const cat_value *c, int *op_out,
                      cat_value *x, uint8_t *buf, size_t cap);

/* v as an SQL literal for EXPLAIN text: numbers as cat_text_format writes them, strings,
** dates and times in single quotes (a quote doubled, bytes below 0x20 as \xNN), VARBINARY
** as X'hex', TRUE/FALSE, NULL. Writes at most cap bytes (NUL-terminated when cap > 0);
** returns the full length, as snprintf. */
size_t plan_value_literal(const cat_value *v, char *buf, size_t cap);

/* ---- Simple filters (the columnar aggregate pushdown, exec/op_colagg.c) --------------- */
/* One term of a simple filter: a cell column compared with an encoded constant. */
typedef struct plan_filter_leaf {
  int col;            /* column slot (a cell column: key_pos < 0) */
  int op;             /* SQL_OP_EQ, NE, LT, LE, GT, GE; 0: TRUE for every non-NULL value
                         (IS NOT NULL, or a comparison folded to TRUE) */
  const uint8_t *k;   /* the constant's encoded bytes (into f; NULL when op is 0) */
  uint32_t klen;      /* their length */
} plan_filter_leaf;

/* If f is an AND of terms each of which is "cell column op constant" or "cell column IS NOT
** NULL" (comparisons folded to TRUE count as IS NOT NULL; constant TRUE terms are dropped),
** write its terms to out[0..cap) and return their number (>= 1). Returns -1 when f has any
** other term (a key column, IN, LIKE, OR, NOT, IS NULL, a comparison folded to FALSE or
** NULL), when it has no term, or when more than cap terms. The leaves point into f. Rows
** pass f exactly when every leaf's column has a value and the value's encoding compares
** with k as op asks (cat_vc_compare: unsigned bytes, a proper prefix first). */
int plan_filter_leaves(const plan_filter *f, plan_filter_leaf *out, int cap);

/* ---- The serializable form (kv/backend.h kv_filter_expr) ------------------------------ */
/* Write to out[0..cap) the pushed terms of f that a storage backend's filter expression can
** say, ANDed (one KV_FX_AND root): comparisons, IN lists without NULL, IS [NOT] NULL, and
** AND / OR / NOT of those, on cell columns. Not said: a term with a key column, LIKE, an IN
** list holding NULL, a constant term, or one past cap. Qualifiers and constants point into
** f (valid while f is). *n_nodes gets the node count; returns the terms written (0: none,
** *n_nodes 0). A row the expression rejects is one f rejects; a row it passes may still
** fail f's other terms: the caller keeps f as the residual (exec/scan.c evaluates it on
** every row a backend without callback filters hands out). */
uint32_t plan_filter_expr(const plan_filter *f, kv_fx_node *out, uint32_t cap,
                          uint32_t *n_nodes);

#endif /* ROWAN_PLANNER_FILTER_H */
