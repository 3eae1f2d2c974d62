/*
** catalog/func_name.c: which function names are aggregates (catalog/func_id.h), a fact the
** binder (planner/bind_func.c, planner/bind_correlated.c) and the executor's function table
** (exec/func.c) both need, so it lives below both. Not here: the aggregates themselves
** (exec/agg.c), scalar functions (exec/func.c).
*/
#include <stddef.h>
#include <strings.h>

#include "catalog/func_id.h"

bool cat_func_is_aggregate(const char *name) {
  static const char *const aggs[] = {"COUNT", "SUM", "AVG", "MIN", "MAX", "STDDEV_POP",
                                     "STDDEV_SAMP", "PERCENTILE_CONT", "PERCENTILE_DISC",
                                     "FIRST_VALUE", "LAST_VALUE", "NTH_VALUE"};
  for (size_t i = 0; i < sizeof aggs / sizeof aggs[0]; i++)
    if (strcasecmp(aggs[i], name) == 0) return true;
  return false;
}
