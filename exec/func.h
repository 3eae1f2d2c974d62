/*
** exec/func.h: Rowan's scalar functions, the arithmetic operators as functions, and LIKE /
** ILIKE matching, all over cat_value (catalog/types.h). docs/FUNCTIONS.md documents each
** function for users (arguments, result type, NULL rule, errors, example).
**
** Two steps, as the binder and the evaluator need them:
**  - cat_func_lookup (catalog/func_sig.h, at bind time): a name (any case) with its argument types gives a
**    function id and the result type, or an error naming the function ("function SUBSTR
**    takes 2 or 3 arguments, got 1", "function UPPER does not accept INTEGER (argument 1)").
**  - exec_func_call (per row): the id, the argument values and the result type from lookup
**    give the value. Results are computed from the actual argument types (a parameter may
**    be bound to any type) and then converted to the result type given. String results are
**    written into the caller's arena (exec/arena.h); numbers need no memory.
**
** NULL rule: unless a function's entry says otherwise (COALESCE, NULLIF, GREATEST/LEAST
** and CONCAT skip NULLs as PostgreSQL does, NOW), a NULL argument gives NULL. `||` follows SQL (NULL
** in, NULL out), not Phoenix (which treats NULL as '').
**
** Arithmetic: integer op integer is BIGINT, an overflow is an error (never wraps); any
** DECIMAL operand (with integers) gives an exact DECIMAL (catalog/decimal.h); any FLOAT or
** DOUBLE operand gives DOUBLE; integer division truncates toward zero and % takes the sign
** of the dividend (Java, Phoenix); division or % by zero is an error for every type. DATE
** or TIMESTAMP +/- a number adds days (Phoenix): DATE +/- an integer is a DATE, with a
** fraction a TIMESTAMP; TIMESTAMP +/- n is a TIMESTAMP; DATE - DATE is BIGINT days;
** TIMESTAMP - TIMESTAMP (or DATE) is DECIMAL days.
**
** Errors from exec_func_call: EXEC_CONSTRAINT for a value out of range or an overflow
** (message names the function and the value: "BIGINT overflow in 9223372036854775807 + 1",
** "SQRT of negative value -4"), EXEC_ERROR for a bad argument value (unknown unit 'WEEKS',
** bad format text, text that does not match its format), EXEC_NOMEM when the arena is full.
**
** LIKE: % matches any run of characters, _ exactly one UTF-8 character, the escape
** character makes the next pattern character literal. ILIKE folds case for ASCII, Latin-1,
** Greek and Cyrillic letters (the basic ranges; no other Unicode case mapping).
**
** Not here: aggregates (exec/agg.h), CAST (the caller calls cat_value_cast; exec_func_cast
** wraps it with this header's error conventions), CASE / IN / comparisons (exec/eval.c).
*/
#ifndef ROWAN_EXEC_FUNC_H
#define ROWAN_EXEC_FUNC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "catalog/func_sig.h"
#include "catalog/types.h"
#include "exec/arena.h"

/* The function ids (enum exec_func_id, catalog/func_id.h) and the signatures (lookup, result
** types, parameter hints, names: catalog/func_sig.h) live below the planner. */


/* What a call needs besides its arguments. */
typedef struct exec_func_ctx {
  exec_arena *arena;  /* string results are allocated here (valid until its reset) */
  int64_t now_us;     /* the statement's time for NOW()/CURRENT_DATE: microseconds since the
                         epoch, taken once per statement by the caller */
  char *msg;          /* error message buffer (may be NULL when cap is 0) */
  size_t cap;         /* its size */
} exec_func_ctx;

/* Call func_id on args[0..n_args) into *out. rt: the result type cat_func_lookup gave
** (the value is converted to it; DECIMAL results with precision 0 keep their scale), or NULL
** for the natural type of the actual arguments. String results live in ctx->arena; string
** arguments may be returned as is (out points into them). Returns EXEC_OK, or
** EXEC_CONSTRAINT / EXEC_ERROR / EXEC_NOMEM as the header says, with ctx->msg set; *out is
** then undefined. */
int exec_func_call(int func_id, const cat_value *args, int n_args, const cat_type *rt,
                   cat_value *out, exec_func_ctx *ctx);

/* ROUND/FLOOR/CEIL/TRUNC(x, unit[, multiplier]) of a DATE or TIMESTAMP x with the unit and
** multiplier known once (constants or bound parameters), resolved by
** exec_fn_date_round_prepare and applied per row by exec_fn_date_round with the result
** exec_func_call(func_id, ...) would give (exec/func_date.c). */
typedef struct exec_date_round {
  int id;           /* EXEC_F_ROUND, _FLOOR, _CEIL or _TRUNC */
  int unit;         /* the unit (enum cat_dt_unit, catalog/datetime.h) */
  int64_t len;      /* its length in microseconds, 0 for MONTH and YEAR */
  int64_t mult;     /* the multiplier, 1..1000000 */
  cat_type rt;      /* the call's result type (that of x) */
} exec_date_round;

/* Whether the call func_id(x, a[1], .. a[n-1]) with x of type arg_type and result type rt can
** go through exec_fn_date_round; if so *r is set. False (nothing set) for another function,
** another type, a NULL, unknown or bad unit or multiplier (exec_func_call then gives the
** NULL or the error row by row). a[0] is not read. */
bool exec_fn_date_round_prepare(int func_id, int arg_type, const cat_value *a, int n,
                                const cat_type *rt, exec_date_round *r);
/* The prepared rounding of v (of the arg_type given to prepare): EXEC_OK, or
** EXEC_CONSTRAINT when the result is out of range (ctx->msg as exec_func_call's). */
int exec_fn_date_round(const exec_date_round *r, const cat_value *v, cat_value *out,
                       exec_func_ctx *ctx);

/* The values that round as g does: for a TIMESTAMP rounding r and a result g of it (in
** microseconds), true with [*lo, *hi] (inclusive, inside the TIMESTAMP range) the span of
** inputs whose rounding is g; both ends are checked by rounding them, and rounding is monotone,
** so every input between gives g. False for a DATE rounding or a g this rounding does not give.
** Lets a caller holding values in key order tell that a row is of the last row's group from its
** encoded key bytes alone (exec/op_colagg_group.c). */
bool exec_fn_date_round_span(const exec_date_round *r, int64_t g, int64_t *lo, int64_t *hi);

/* CAST(in AS to) with this header's conventions: cat_value_cast, the text of a number cast
** to a string written into ctx->arena. EXEC_CONSTRAINT (value out of range or too long for
** `to`), EXEC_ERROR (text that is not a literal of `to`, types not convertible),
** EXEC_NOMEM. */
int exec_func_cast(const cat_value *in, const cat_type *to, cat_value *out,
                   exec_func_ctx *ctx);

/* ---- LIKE (exec/like.c) ------------------------------------------------------------------ */
/* Escape argument meaning "no escape character". */
#define EXEC_LIKE_NO_ESCAPE (-1)

/* Get the escape code point from the ESCAPE operand's text (must be exactly one UTF-8
** character): EXEC_OK with *escape set, or EXEC_ERROR "ESCAPE must be a single character". */
int exec_like_escape(const uint8_t *p, size_t len, int32_t *escape, char *msg, size_t cap);

/* Match text s[0..slen) against pattern pat[0..plen) (LIKE rules above; escape a code point
** or EXEC_LIKE_NO_ESCAPE; icase for ILIKE). *match gets the result. EXEC_OK, or EXEC_ERROR
** for a pattern ending in the escape character. Invalid UTF-8 bytes count as one character
** each. Allocates nothing; time is O(slen * plen) at worst. */
int exec_like(const uint8_t *s, size_t slen, const uint8_t *pat, size_t plen, int32_t escape,
              bool icase, bool *match, char *msg, size_t cap);

/* Shapes of a LIKE pattern (for key ranges). */
enum exec_like_kind {
  EXEC_LIKE_EXACT = 1,  /* no wildcard: LIKE is equality with the unescaped text */
  EXEC_LIKE_PREFIX,     /* exactly 'prefix%' (one trailing %, no other wildcard) */
  EXEC_LIKE_OTHER       /* anything else; the prefix still bounds the matches */
};

/* The literal prefix of a LIKE pattern (the unescaped characters before the first
** unescaped % or _) into buf (cap bytes, cap >= plen always suffices), its length in
** *prefix_len, and the pattern's shape in *kind. EXEC_OK, EXEC_ERROR for a pattern ending
** in the escape character, EXEC_TOOBIG if buf is too small. For ILIKE the caller must not
** use the prefix as a byte range (case folding). */
int exec_like_prefix(const uint8_t *pat, size_t plen, int32_t escape, uint8_t *buf, size_t cap,
                     size_t *prefix_len, int *kind, char *msg, size_t cap_msg);

/* Case folding used by ILIKE, UPPER and LOWER: the lower / upper case code point of c in the
** ranges named above, else c. */
int32_t exec_fold_lower(int32_t c);
int32_t exec_fold_upper(int32_t c);


#endif /* ROWAN_EXEC_FUNC_H */
