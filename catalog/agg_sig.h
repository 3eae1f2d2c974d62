/*
** catalog/agg_sig.h: what the binder and the accumulators both need to know about an
** aggregate function before it runs: its id (enum exec_agg_id) from its name, its result
** type and the argument types it accepts, its canonical name, and its kind (ordered-set,
** percentile, first/last/nth value). The accumulators are exec/agg.h's; docs/FUNCTIONS.md
** documents each aggregate for users. Not here: accumulating, grouping.
*/
#ifndef ROWAN_CAT_AGG_SIG_H
#define ROWAN_CAT_AGG_SIG_H

#include <stdbool.h>
#include <stddef.h>

#include "catalog/types.h"

/* ORDER EXEC_AGG: agg_names[] in catalog/agg_sig.c follows this order. */
enum exec_agg_id {
  EXEC_AGG_COUNT_STAR = 1,  /* COUNT(*) */
  EXEC_AGG_COUNT,           /* COUNT(x) */
  EXEC_AGG_SUM,
  EXEC_AGG_AVG,
  EXEC_AGG_MIN,
  EXEC_AGG_MAX,
  EXEC_AGG_STDDEV_POP,
  EXEC_AGG_STDDEV_SAMP,
  EXEC_AGG_PERCENTILE_CONT, /* ordered-set: takes the fraction and the order separately */
  EXEC_AGG_PERCENTILE_DISC,
  EXEC_AGG_FIRST_VALUE,     /* ordered-set of a value and its order key (exec_agg_step2) */
  EXEC_AGG_LAST_VALUE,
  EXEC_AGG_NTH_VALUE,       /* NTH_VALUE(x, n): n set by exec_agg_set_order's p */
  EXEC_AGG_COUNT_           /* number of ids + 1 (not an aggregate) */
};

/* Resolve an aggregate call. name: COUNT, SUM, AVG, MIN, MAX, STDDEV_POP, STDDEV_SAMP,
** PERCENTILE_CONT, PERCENTILE_DISC (any case; the percentiles are refused with DISTINCT); star: COUNT(*);
** distinct: f(DISTINCT x); arg_type: the argument's type (ignored for COUNT(*); id 0 =
** unknown, taken as DOUBLE for SUM/AVG and accepted by COUNT/MIN/MAX). EXEC_OK with *agg_id
** and *result_type; EXEC_ERROR naming the function for an unknown name, a '*' other than
** COUNT(*), SUM/AVG/STDDEV/PERCENTILE_CONT of a non-number, PERCENTILE_DISC of other than a
** number, DATE, TIME or TIMESTAMP (MIN/MAX accept every type). */
int cat_agg_lookup(const char *name, bool star, bool distinct, const cat_type *arg_type,
                    int *agg_id, cat_type *result_type, char *msg, size_t cap);

/* Upper-case name of an aggregate id ("COUNT"); "?" for a bad id. */
const char *cat_agg_name(int agg_id);

/* True if name (any case) is an ordered-set aggregate (PERCENTILE_CONT, PERCENTILE_DISC,
** FIRST_VALUE, LAST_VALUE), written f(...) WITHIN GROUP (ORDER BY x). */
bool cat_agg_is_ordered_set(const char *name);

/* True if name is an ordered-set aggregate of a value and an order key (FIRST_VALUE,
** LAST_VALUE: f(x) WITHIN GROUP (ORDER BY k); NTH_VALUE(x, n)), false for the percentiles
** (f(p) WITHIN GROUP (ORDER BY x), x the value). */
bool cat_agg_takes_value(const char *name);

/* The kind of an aggregate id: PERCENTILE_CONT or _DISC; FIRST_VALUE, LAST_VALUE or NTH_VALUE
** (a value and its order key). */
bool cat_agg_percentile(int agg_id);
bool cat_agg_first_last(int agg_id);

/* Whether PERCENTILE_DISC orders values of type id t (numbers, dates, times; 0 = unknown
** until run time). */
bool cat_agg_disc_type(int t);

#endif /* ROWAN_CAT_AGG_SIG_H */
