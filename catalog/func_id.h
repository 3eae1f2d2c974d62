/*
** catalog/func_id.h: the ids of Rowan's scalar functions and operators (enum exec_func_id),
** below the planner so that it can recognize a call (a rounding of a key column in
** planner/keyrange_func.c) without including the executor, and which names are aggregates
** (cat_func_is_aggregate, for the binder and the executor alike). Their signatures are
** catalog/func_sig.h's, their calls exec/func.h's. Not here: anything else.
*/
#ifndef ROWAN_CAT_FUNC_ID_H
#define ROWAN_CAT_FUNC_ID_H

#include <stdbool.h>

/* ORDER EXEC_FUNC: func_table[] in exec/func.c has one entry per id, in this order. Ids are
** not stored anywhere persistent, but keep them dense. */
enum exec_func_id {
  EXEC_F_ADD = 1,   /* a + b */
  EXEC_F_SUB,       /* a - b */
  EXEC_F_MUL,       /* a * b */
  EXEC_F_DIV,       /* a / b */
  EXEC_F_MOD,       /* a % b, MOD(a, b) */
  EXEC_F_NEG,       /* -a */
  EXEC_F_CONCAT,    /* a || b */
  EXEC_F_ABS,
  EXEC_F_SIGN,
  EXEC_F_ROUND,     /* ROUND(x[, digits]) ROUND(date|ts, unit[, multiplier]) */
  EXEC_F_FLOOR,
  EXEC_F_CEIL,      /* also CEILING */
  EXEC_F_TRUNC,     /* also TRUNCATE */
  EXEC_F_SQRT,
  EXEC_F_POWER,     /* also POW */
  EXEC_F_EXP,
  EXEC_F_LN,
  EXEC_F_LOG,       /* LOG(x) base 10, LOG(x, base) (Phoenix) */
  EXEC_F_UPPER,
  EXEC_F_LOWER,
  EXEC_F_LENGTH,    /* characters; also CHAR_LENGTH */
  EXEC_F_SUBSTR,    /* also SUBSTRING */
  EXEC_F_TRIM,
  EXEC_F_LTRIM,
  EXEC_F_RTRIM,
  EXEC_F_COALESCE,
  EXEC_F_NULLIF,
  EXEC_F_GREATEST,
  EXEC_F_LEAST,
  EXEC_F_TO_TIMESTAMP,
  EXEC_F_TO_DATE,
  EXEC_F_TO_CHAR,
  EXEC_F_TO_NUMBER,
  EXEC_F_MAKE_TIMESTAMP,
  EXEC_F_NOW,       /* also CURRENT_TIMESTAMP */
  EXEC_F_CURRENT_DATE,
  EXEC_F_YEAR,
  EXEC_F_MONTH,
  EXEC_F_DAYOFMONTH,
  EXEC_F_HOUR,
  EXEC_F_MINUTE,
  EXEC_F_SECOND,
  EXEC_F_DAYOFWEEK, /* ISO: Monday 1 .. Sunday 7 */
  EXEC_F_DAYOFYEAR,
  EXEC_F_CONCAT_N,  /* CONCAT(a, ...): NULL arguments skipped (PostgreSQL) */
  EXEC_F_REPLACE,   /* REPLACE(s, search[, replacement]) */
  EXEC_F_LPAD,      /* LPAD(s, len[, fill]) */
  EXEC_F_RPAD,      /* RPAD(s, len[, fill]) */
  EXEC_F_INSTR,     /* INSTR(s, search): 1-based position, 0 when absent */
  EXEC_F_REGEXP_SUBSTR,  /* REGEXP_SUBSTR(s, pattern[, offset]) (exec/func_regex.c) */
  EXEC_F_REGEXP_REPLACE, /* REGEXP_REPLACE(s, pattern[, replacement]) */
  EXEC_F_WEEK,      /* ISO week of the year 1..53 */
  EXEC_F_QUARTER,   /* 1..4 */
  EXEC_F_TO_TIME,   /* TO_TIME(s[, fmt[, zone]]) (exec/func_fmt.c) */
  EXEC_F_CONVERT_TZ,      /* CONVERT_TZ(t, from, to) (exec/func_tz.c) */
  EXEC_F_TIMEZONE_OFFSET, /* TIMEZONE_OFFSET(zone, t): minutes east of UTC */
  EXEC_F_ARRAY,           /* ARRAY[e1, ...]: the constructor (exec/func_array.c) */
  EXEC_F_ARRAY_ELEM,      /* a[i], ARRAY_ELEM(a, i): element i (1-based), NULL outside */
  EXEC_F_ARRAY_LENGTH,    /* ARRAY_LENGTH(a): number of elements */
  EXEC_F_REGEXP_SPLIT,    /* REGEXP_SPLIT(s, pattern): VARCHAR ARRAY (exec/func_regex.c) */
  EXEC_F_ARRAY_APPEND,    /* ARRAY_APPEND(a, e) */
  EXEC_F_ARRAY_PREPEND,   /* ARRAY_PREPEND(e, a) */
  EXEC_F_ARRAY_CAT,       /* ARRAY_CAT(a, b) */
  EXEC_F_ANY,             /* x op ANY(a), bound as ANY(x, a, op) with op an sql_op constant
                             (planner/bind.c); TRUE when x op e holds for some element e */
  EXEC_F_SCALAR_ONE,      /* internal, not callable by name: SCALAR_ONE(n, v, message) is v,
                             or the error message when n > 1 (n the rows a correlated scalar
                             subquery gave one outer row; planner/bind_correlated.c) */
  EXEC_F_IN_SET,          /* internal, not callable by name: IN_SET(x, ..., set) is x IN the
                             hash set of an IN (SELECT ...)'s rows (exec/in_set.h) */
  EXEC_F_COUNT_     /* number of ids + 1 (not a function) */
};

/* True if name (any case) is an aggregate function: COUNT, SUM, AVG, MIN, MAX, STDDEV_POP,
** STDDEV_SAMP, PERCENTILE_CONT, PERCENTILE_DISC, FIRST_VALUE, LAST_VALUE, NTH_VALUE
** (catalog/agg_sig.c). */
bool cat_func_is_aggregate(const char *name);

#endif /* ROWAN_CAT_FUNC_ID_H */
